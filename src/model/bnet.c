/* bnet.c — forward and backward of the Bellamy network over distinct scale-outs and property values.
 *
 * See bnet.h for the structure. The layers are tiny (≤ 40 wide): at these sizes a BLAS call costs
 * more than the arithmetic, so the pass is written out by hand. Two versions of the kernels:
 *   - plain C loops for any dimensions, which the compiler vectorises where it can;
 *   - for the paper's dimensions (f 3→16→8, auto-encoder 40→8→4→8→40, z …→8→1), a GCC-compatible
 *     compiler and an AVX-512 CPU, kernels written with 8-double vector types, one register each,
 *     so that every product of a pass is a vector multiply-add whatever the vectoriser decides.
 *     (The AVX2 copy runs the plain loops: GCC lowers arrays of 8-wide vectors badly there.)
 * Where a pass's time goes, per row and property with per-row masks: the decoder's 8 → 40 layer and
 * its two gradients (960 multiply-adds), 40 tanh, 16 random draws for the masks, the rest small.
 * SELU and tanh use an own exp (below) that vectorises. The dropout masks are drawn up front in the
 * documented order, by an inlined copy of the generator (bl_rng_uniform's stream, checked by tests).
 * Row-by-row references in tests/test_model.c check this file: finite differences of the whole
 * joint loss, the loss and draw count of every dropout mode, predictions and activations vs libm.
 * Not here: optimisers, schedules, data loading.
 */
#include "model/bnet.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"

#if defined(__GNUC__)
#define BL_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define BL_ALWAYS_INLINE inline
#endif

/* AVX-512 (x86-64-v4) and AVX2 (x86-64-v3) copies of the hot entry points beside the baseline one,
 * chosen per call from the CPU's features (pass_dispatch, bl_bnet_predict_scaled). Not
 * target_clones: the copies differ in more than the instruction set (the pass's vector kernels only
 * on AVX-512; vector math 8 wide there and in halves of 4 below it, where GCC would turn an 8-wide
 * comparison into scalar code). Not under sanitizers.
 * This file lets GCC contract a·b + c into one FMA (the build's ISO C mode turns contraction off):
 * half the instructions of the multiply-adds and polynomials that make up nearly all of a pass. The
 * copies therefore differ in the last bits (the baseline one has no FMA), but each is deterministic,
 * and a machine always runs the same one. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("fp-contract=fast")
#endif
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__)
#define BL_MULTIVERSION 1
#define BL_TARGET_V4 __attribute__((target("arch=x86-64-v4")))
#define BL_TARGET_V3 __attribute__((target("arch=x86-64-v3")))
#else
#define BL_MULTIVERSION 0
#endif

#define LAMBDA BL_SELU_LAMBDA
#define LALPHA (BL_SELU_LAMBDA * BL_SELU_ALPHA)

/* ---- SELU, tanh and their exp ---------------------------------------------------------------- *
 * eˣ − 1 for x ≤ 0 (all SELU and tanh need): x = k·ln2 + r with |r| ≤ ln2/2 (Cody–Waite split of
 * ln2, k by the round-to-nearest constant 1.5·2⁵²), expm1(r) = r + r²·q(r) with q of degree 9
 * (Chebyshev interpolation of (expm1(r) − r)/r² on [−ln2/2, ln2/2], truncation < 4e-17 relative to
 * expm1), and eˣ − 1 = 2ᵏ·expm1(r) + (2ᵏ − 1). 2ᵏ is assembled from the rounding constant's low bits.
 * For x < −40, eˣ − 1 is −1 to double precision, so x is clamped there; NaN stays NaN. Within 2 ulp
 * of libm's expm1 (tests/test_model.c sweeps it). */
#define EXPM1_CONSTS                                                                              \
    const double inv_ln2 = 1.44269504088896338700e+00, ln2_hi = 6.93147180369123816490e-01,      \
                 ln2_lo = 1.90821492927058770002e-10, round_c = 0x1.8p52;                        \
    const double q0 = 0x1.0000000000001p-1, q1 = 0x1.5555555555556p-3, q2 = 0x1.5555555553d68p-5, \
                 q3 = 0x1.11111111109b5p-7, q4 = 0x1.6c16c17889ef1p-10, q5 = 0x1.a01a01a7c2efep-13, \
                 q6 = 0x1.a019b9149a41cp-16, q7 = 0x1.71de0db2f6b19p-19, q8 = 0x1.28917c89a43a7p-22, \
                 q9 = 0x1.af389ecfc4b9cp-26
/* The polynomial of expm1(r) (shared by the scalar and vector versions). */
#define EXPM1_POLY(p, r)                                                                          \
    p = q9 * r + q8;                                                                              \
    p = p * r + q7;                                                                               \
    p = p * r + q6;                                                                               \
    p = p * r + q5;                                                                               \
    p = p * r + q4;                                                                               \
    p = p * r + q3;                                                                               \
    p = p * r + q2;                                                                               \
    p = p * r + q1;                                                                               \
    p = p * r + q0;                                                                               \
    p = p * r * r + r

static BL_ALWAYS_INLINE double expm1_neg(double x) {
    EXPM1_CONSTS;
    x = x < -40.0 ? -40.0 : x;
    double t = x * inv_ln2 + round_c;
    double kd = t - round_c;
    double r = (x - kd * ln2_hi) - kd * ln2_lo;
    double p;
    EXPM1_POLY(p, r);
    uint64_t bits;
    memcpy(&bits, &t, sizeof bits);
    bits = (bits << 52) + ((uint64_t)1023 << 52);       /* 2^k, k = low bits of t */
    double two_k;
    memcpy(&two_k, &bits, sizeof two_k);
    return two_k * p + (two_k - 1.0);
}

/* tanh through the same expm1: t = e^(−2|x|) − 1 ∈ [−1, 0], tanh|x| = −t / (t + 2); ≤ 3 ulp. (A
 * division-free reciprocal by Newton's method measured slower: the divider runs beside the FMAs.) */
static BL_ALWAYS_INLINE double tanh_fast(double x) {
    double t = expm1_neg(-2.0 * fabs(x));
    return copysign((0.0 - t) / (t + 2.0), x);
}

/* Branch-free so loops over units vectorise; NaN stays NaN. */
static BL_ALWAYS_INLINE double selu(double x) {
    double neg = LALPHA * expm1_neg(x > 0.0 ? 0.0 : x);
    return x > 0.0 ? LAMBDA * x : neg;
}
/* d selu / dx from the input x and output y (left derivative at 0, as PyTorch). */
static BL_ALWAYS_INLINE double selu_d(double x, double y) { return x > 0.0 ? LAMBDA : y + LALPHA; }

/* The same functions on vectors of 8 and 4 doubles (GCC/Clang vector extensions: one AVX-512
 * register, two AVX2 or four SSE2 ones, whatever the clone). Loads and stores go through memcpy,
 * which compiles to one unaligned vector move. Vector arguments are passed by pointer: every helper
 * is inlined, but GCC notes a by-value vector parameter's ABI even so. */
#if defined(__GNUC__)
#define BL_VEC 1
#if !defined(__clang__)
/* Helpers return vectors wider than the baseline ABI's registers; they are all inlined, so no call
 * ever returns one, and GCC's warning that such a call's ABI would differ is moot. */
#pragma GCC diagnostic ignored "-Wpsabi"
#endif
typedef double v8d __attribute__((vector_size(64)));
typedef uint64_t v8u __attribute__((vector_size(64)));
typedef double v4d __attribute__((vector_size(32)));
typedef uint64_t v4u __attribute__((vector_size(32)));

static BL_ALWAYS_INLINE v8d ld8(const double *p) { v8d v; memcpy(&v, p, sizeof v); return v; }
static BL_ALWAYS_INLINE v4d ld4(const double *p) { v4d v; memcpy(&v, p, sizeof v); return v; }
#define ST8(p, val) do { const v8d st_ = (val); memcpy((p), &st_, sizeof st_); } while (0)
#define ST4(p, val) do { const v4d st_ = (val); memcpy((p), &st_, sizeof st_); } while (0)
/* m ? a : b per lane, m all ones or all zeros (a comparison's result) */
#define VSEL(VD, VU, m, a, b) ((VD)(((VU)(a) & (m)) | ((VU)(b) & ~(m))))

#define BL_VMATH(VD, VU, S)                                                                       \
    static BL_ALWAYS_INLINE VD splat_##S(double x) { return (VD){0} + x; }                       \
    static BL_ALWAYS_INLINE VD expm1_neg_##S(const VD *px) {                                      \
        EXPM1_CONSTS;                                                                             \
        const VD x = VSEL(VD, VU, (VU)(*px < -40.0), splat_##S(-40.0), *px);                      \
        VD t = x * inv_ln2 + round_c;                                                             \
        VD kd = t - round_c;                                                                      \
        VD r = (x - kd * ln2_hi) - kd * ln2_lo;                                                   \
        VD p;                                                                                     \
        EXPM1_POLY(p, r);                                                                         \
        VD two_k = (VD)(((VU)t << 52) + ((uint64_t)1023 << 52));                                  \
        return two_k * p + (two_k - 1.0);                                                         \
    }                                                                                             \
    static BL_ALWAYS_INLINE VD tanh_##S(const VD *px) {                                           \
        const uint64_t sign = (uint64_t)1 << 63;                                                  \
        const VD m2ax = (VD)((VU)*px & ~sign) * -2.0;                                             \
        const VD t = expm1_neg_##S(&m2ax);                                                        \
        const VD y = (0.0 - t) / (t + 2.0);                                                       \
        return (VD)((VU)y | ((VU)*px & sign));                                                    \
    }                                                                                             \
    static BL_ALWAYS_INLINE VD selu_##S(const VD *px) {                                           \
        const VU pos = (VU)(*px > 0.0);                                                           \
        const VD xn = VSEL(VD, VU, pos, splat_##S(0.0), *px);                                     \
        const VD e = expm1_neg_##S(&xn);                                                          \
        return VSEL(VD, VU, pos, *px * LAMBDA, e * LALPHA);                                       \
    }                                                                                             \
    static BL_ALWAYS_INLINE VD selu_d_##S(const VD *x, const VD *y) {                             \
        return VSEL(VD, VU, (VU)(*x > 0.0), splat_##S(LAMBDA), *y + LALPHA);                      \
    }
BL_VMATH(v8d, v8u, 8)
BL_VMATH(v4d, v4u, 4)

/* The 8-wide functions for a copy of width W: 8 (AVX-512) as they are, 4 in two halves of v4d. GCC
 * lowers 8-wide arithmetic to two AVX2 instructions, but an 8-wide comparison to scalar code. */
#define BL_VMATH_W(F)                                                                             \
    static BL_ALWAYS_INLINE v8d F##_w(const v8d *x, const int W) {                                \
        if (W == 8) return F##_8(x);                                                              \
        v4d lo, hi;                                                                               \
        memcpy(&lo, x, sizeof lo);                                                                \
        memcpy(&hi, (const char *)x + sizeof lo, sizeof hi);                                      \
        const v4d rl = F##_4(&lo), rh = F##_4(&hi);                                               \
        v8d r;                                                                                    \
        memcpy(&r, &rl, sizeof rl);                                                               \
        memcpy((char *)&r + sizeof rl, &rh, sizeof rh);                                           \
        return r;                                                                                 \
    }
BL_VMATH_W(tanh)
BL_VMATH_W(selu)

/* expm1_neg, selu and tanh of n vectors at once (n a constant ≤ VN_MAX), every step over all n
 * before the next: each is a chain of some 25 dependent operations, and interleaving independent
 * chains in the instruction stream keeps the FMA units busy where the out-of-order window alone
 * does not (measured: the decoder's forward 15–20 %, predictions 25 % faster than one vector after
 * the other). a and e may be the same. */
#define VN_MAX 16
static BL_ALWAYS_INLINE void expm1_neg_8n(v8d *e, const v8d *a, const int n) {
    EXPM1_CONSTS;
    v8d x[VN_MAX], t[VN_MAX], r[VN_MAX], p[VN_MAX];
    for (int i = 0; i < n; i++) x[i] = VSEL(v8d, v8u, (v8u)(a[i] < -40.0), splat_8(-40.0), a[i]);
    for (int i = 0; i < n; i++) t[i] = x[i] * inv_ln2 + round_c;
    for (int i = 0; i < n; i++) {
        const v8d kd = t[i] - round_c;
        r[i] = (x[i] - kd * ln2_hi) - kd * ln2_lo;
    }
    for (int i = 0; i < n; i++) p[i] = q9 * r[i] + q8;
    for (int i = 0; i < n; i++) p[i] = p[i] * r[i] + q7;
    for (int i = 0; i < n; i++) p[i] = p[i] * r[i] + q6;
    for (int i = 0; i < n; i++) p[i] = p[i] * r[i] + q5;
    for (int i = 0; i < n; i++) p[i] = p[i] * r[i] + q4;
    for (int i = 0; i < n; i++) p[i] = p[i] * r[i] + q3;
    for (int i = 0; i < n; i++) p[i] = p[i] * r[i] + q2;
    for (int i = 0; i < n; i++) p[i] = p[i] * r[i] + q1;
    for (int i = 0; i < n; i++) p[i] = p[i] * r[i] + q0;
    for (int i = 0; i < n; i++) p[i] = p[i] * r[i] * r[i] + r[i];
    for (int i = 0; i < n; i++) {
        const v8d two_k = (v8d)(((v8u)t[i] << 52) + ((uint64_t)1023 << 52));
        e[i] = two_k * p[i] + (two_k - 1.0);
    }
}
static BL_ALWAYS_INLINE void tanh_8n(v8d *y, const v8d *x, const int n, const int W) {
    if (W != 8) {
        for (int i = 0; i < n; i++) y[i] = tanh_w(&x[i], W);
        return;
    }
    const uint64_t sign = (uint64_t)1 << 63;
    v8d t[VN_MAX];
    for (int i = 0; i < n; i++) t[i] = (v8d)((v8u)x[i] & ~sign) * -2.0;
    expm1_neg_8n(t, t, n);                                          /* e^(−2|x|) − 1 */
    for (int i = 0; i < n; i++) {
        const v8d q = (0.0 - t[i]) / (t[i] + 2.0);
        y[i] = (v8d)((v8u)q | ((v8u)x[i] & sign));
    }
}
static BL_ALWAYS_INLINE void selu_8n(v8d *y, const v8d *x, const int n, const int W) {
    if (W != 8) {
        for (int i = 0; i < n; i++) y[i] = selu_w(&x[i], W);
        return;
    }
    v8u pos[VN_MAX];
    v8d e[VN_MAX];
    for (int i = 0; i < n; i++) {
        pos[i] = (v8u)(x[i] > 0.0);
        e[i] = VSEL(v8d, v8u, pos[i], splat_8(0.0), x[i]);
    }
    expm1_neg_8n(e, e, n);
    for (int i = 0; i < n; i++) y[i] = VSEL(v8d, v8u, pos[i], x[i] * LAMBDA, e[i] * LALPHA);
}
static BL_ALWAYS_INLINE v8d selu_d_w(const v8d *x, const v8d *y, const int W) {
    if (W == 8) return selu_d_8(x, y);
    v4d xl, xh, yl, yh;
    memcpy(&xl, x, sizeof xl);
    memcpy(&xh, (const char *)x + sizeof xl, sizeof xh);
    memcpy(&yl, y, sizeof yl);
    memcpy(&yh, (const char *)y + sizeof yl, sizeof yh);
    const v4d rl = selu_d_4(&xl, &yl), rh = selu_d_4(&xh, &yh);
    v8d r;
    memcpy(&r, &rl, sizeof rl);
    memcpy((char *)&r + sizeof rl, &rh, sizeof rh);
    return r;
}
#else
#define BL_VEC 0
#endif

/* y[o] = Σ_i W[o][i] x[i]   W: [out×in] with row stride ld */
static BL_ALWAYS_INLINE void mv(const double *W, int ld, int out, int in, const double *x, double *y) {
    for (int o = 0; o < out; o++) {
        const double *w = W + (size_t)o * ld;
        double s = 0.0;
        for (int i = 0; i < in; i++) s += w[i] * x[i];
        y[o] = s;
    }
}
/* Same as mv from the transposed weights WT [in×ldt]: y[o] = Σ_i WT[i][o] x[i], summed in the same
 * order (so bit-identical to mv) but vectorisable along o. */
static BL_ALWAYS_INLINE void mvt(const double *WT, int ldt, int out, int in, const double *x, double *y) {
    for (int o = 0; o < out; o++) y[o] = 0.0;
    for (int i = 0; i < in; i++) {
        const double *w = WT + (size_t)i * ldt;
        const double xi = x[i];
        for (int o = 0; o < out; o++) y[o] += w[o] * xi;
    }
}

/* x[i] += Σ_o W[o][i] dy[o] */
static BL_ALWAYS_INLINE void mtv_add(const double *W, int ld, int out, int in, const double *dy, double *dx) {
    for (int o = 0; o < out; o++) {
        const double *w = W + (size_t)o * ld;
        const double g = dy[o];
        for (int i = 0; i < in; i++) dx[i] += w[i] * g;
    }
}
/* G[o][i] += s · dy[o] · x[i] */
static BL_ALWAYS_INLINE void outer_add(double *G, int ld, int out, int in, const double *dy, const double *x, double s) {
    for (int o = 0; o < out; o++) {
        const double g = dy[o] * s;
        double *row = G + (size_t)o * ld;
        for (int i = 0; i < in; i++) row[i] += g * x[i];
    }
}


void bl_bnet_dims_default(bl_bnet_dims *d, int n_ess, int n_opt) {
    d->f_in = 3; d->f_hidden = 16; d->f_out = 8;
    d->vec_len = 40; d->ae_hidden = 8; d->code = 4;
    d->z_hidden = 8;
    d->n_ess = n_ess; d->n_opt = n_opt;
}

static bl_status dims_check(const bl_bnet_dims *d, bl_error *err) {
    if (!d) return bl_seterr(err, BL_EINVAL, "network dimensions: NULL");
    const int v[] = {d->f_in, d->f_hidden, d->f_out, d->vec_len, d->ae_hidden, d->code, d->z_hidden};
    const char *nm[] = {"f_in", "f_hidden", "f_out", "vec_len", "ae_hidden", "code", "z_hidden"};
    for (int i = 0; i < 7; i++)
        if (v[i] <= 0 || v[i] > BL_BNET_DIM_MAX)
            return bl_seterr(err, BL_EINVAL, "network dimension %s = %d (must be 1..%d)", nm[i], v[i],
                             BL_BNET_DIM_MAX);
    if (d->n_ess < 0 || d->n_opt < 0 || d->n_ess > BL_BNET_PROPS_MAX || d->n_opt > BL_BNET_PROPS_MAX)
        return bl_seterr(err, BL_EINVAL, "property counts %d essential, %d optional (must be 0..%d)",
                         d->n_ess, d->n_opt, BL_BNET_PROPS_MAX);
    return BL_OK;
}

bl_status bl_bnet_init(bl_bnet *net, const bl_bnet_dims *d, bl_rng *rng, bl_error *err) {
    if (!net) return bl_seterr(err, BL_EINVAL, "bl_bnet_init: NULL network");
    memset(net, 0, sizeof *net);
    bl_status st = dims_check(d, err);
    if (st) return st;
    net->d = *d;
    net->z_in = d->f_out + d->code * d->n_ess + d->code;
    if ((st = bl_params_init(&net->P, err))) return st;
    struct { const char *name; int rows, cols; size_t *off; } v[] = {
        {"f.0.weight", d->f_hidden, d->f_in, &net->f0w},   {"f.0.bias", 1, d->f_hidden, &net->f0b},
        {"f.2.weight", d->f_out, d->f_hidden, &net->f2w},  {"f.2.bias", 1, d->f_out, &net->f2b},
        {"g.0.weight", d->ae_hidden, d->vec_len, &net->g0w}, {"g.3.weight", d->code, d->ae_hidden, &net->g3w},
        {"h.0.weight", d->ae_hidden, d->code, &net->h0w},  {"h.3.weight", d->vec_len, d->ae_hidden, &net->h3w},
        {"z.0.weight", d->z_hidden, net->z_in, &net->z0w}, {"z.0.bias", 1, d->z_hidden, &net->z0b},
        {"z.2.weight", 1, d->z_hidden, &net->z2w},         {"z.2.bias", 1, 1, &net->z2b},
    };
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        if ((st = bl_params_add(&net->P, v[i].name, v[i].rows, v[i].cols, v[i].off, NULL, err))) goto fail;
    if (rng) {
        const double selu_gain = bl_act_gain(BL_ACT_SELU), tanh_gain = bl_act_gain(BL_ACT_TANH);
        for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
            if (v[i].rows == 1 && strstr(v[i].name, ".bias")) continue; /* biases stay zero */
            double gain = strcmp(v[i].name, "h.3.weight") == 0 ? tanh_gain : selu_gain;
            if ((st = bl_init_kaiming_normal(net->P.param + *v[i].off, v[i].rows, v[i].cols, gain, rng, err)))
                goto fail;
        }
    }
    return BL_OK;
fail:
    bl_params_free(&net->P);
    return st;
}

void bl_bnet_free(bl_bnet *net) {
    if (!net) return;
    bl_params_free(&net->P);
}

void bl_bnet_copy_params(bl_bnet *dst, const bl_bnet *src, int with_adam) {
    size_t n = src->P.n;
    memcpy(dst->P.param, src->P.param, n * sizeof(double));
    if (with_adam) {
        memcpy(dst->P.m, src->P.m, n * sizeof(double));
        memcpy(dst->P.v, src->P.v, n * sizeof(double));
        for (int i = 0; i < src->P.n_views; i++) dst->P.views[i].step = src->P.views[i].step;
    }
}


/* ---- workspace ------------------------------------------------------------------------------- */

/* Per distinct scale-out: a0[FH] s0[FH] a2[FO] F[FO] A[Z] dA[Z] dF[FO]
 * Per value slot (a distinct value, or with per-row masks a row's copy of it), offsets below:
 *   a1[H] s1[H]   the encoder's first layer: filled in a value's first slot only, read by the others
 *   d1[H]         s1 after this slot's AlphaDropout mask
 *   P[Z] dP[Z]    z's term of this code (scaled) and its gradient
 *   acc[H]        d loss / d a1 summed over the slots of the value (first slot)
 *   a2[C] c[C]    the code's pre-activation and the code
 *   dcd[C]        d loss / d code through the decoder (decoder slots)
 *   a2c[C] cc[C]  hybrid masks: the code without encoder dropout, which the decoder reads (first slot)
 * The decoder keeps nothing per slot: its forward and backward run together (dec_block).
 * Records, their strides and all arrays of the workspace are multiples of 64 bytes (REC_ALIGN), so
 * that for the paper's dimensions every 8-wide field is one aligned vector: a vector store that
 * straddles two cache lines cannot forward to the loads that read it back. */
#define O_A1  0
#define O_S1  (H)
#define O_D1  (2 * H)
#define O_P   (3 * H)
#define O_DP  (3 * H + Z)
#define O_ACC (3 * H + 2 * Z)
#define O_A2  (4 * H + 2 * Z)
#define O_C   (4 * H + 2 * Z + C)
#define O_DCD (4 * H + 2 * Z + 2 * C)
#define O_A2C (4 * H + 2 * Z + 3 * C)
#define O_CC  (4 * H + 2 * Z + 4 * C)
#define REC_ALIGN 64
#define ROUND8(n) (((size_t)(n) + 7) & ~(size_t)7) /* doubles, to a multiple of REC_ALIGN bytes */
#define SLOT_STRIDE(H, C, Z) ROUND8(4 * (size_t)(H) + 5 * (size_t)(C) + 2 * (size_t)(Z))

struct bl_bwork {
    size_t max_batch, n_props;
    int32_t *sx_slot;              /* [n_sx] → slot or -1 */
    uint32_t *sx_list;             /* [min(n_sx, B)] */
    double *sx_rec;                /* [slots][sx_stride] */
    size_t sx_stride, sx_cap;
    int32_t **val_slot;            /* [p] → [n_vals[p]] */
    uint32_t **val_list;           /* [p] → [cap_p] */
    double **val_rec;              /* [p] → [cap_p][val_stride] */
    double **val_mask;             /* [p] → [cap_p][4H]: AlphaDropout of the encoder's hidden layer as
                                      a multiply-add y = t·mk + ad (mk[H], ad[H]), then the decoder's */
    uint32_t **val_first;          /* [p] → [cap_p] slot of the first row with the same value */
    double **val_w;                /* [p] → [cap_p] rows using the value in this batch */
    size_t *val_cap;
    size_t val_stride;
    double *row;                   /* [B][row_stride]: u[Z] h[Z] pre out dout */
    double *WT;                    /* [P.n] every weight block transposed, refreshed each pass */
    uint32_t *row_slot;            /* [B][n_props] value slot of each row of the batch */
    size_t row_stride;
    /* the decoder slots of a batch, over all properties: [B·n_props] each */
    const double **dec_code, **dec_x;
    const double **dec_mask;
    double **dec_dcd;
    double *dec_w;                 /* loss weight: rows of the slot / (B · properties of its kind · V) */
    void *block;                   /* everything above lives in one allocation */
};

void bl_bwork_free(bl_bwork *w) {
    if (!w) return;
    free(w->block);
    free(w);
}

/* The workspace's layout, walked once to size the block and once more to hand out its arrays: the
 * same calls in the same order both times, so the block always holds what is carved from it (sizing
 * and carving used to be written out separately and disagreed as soon as a pointer table's rounding
 * differed: an overflow past the block with most property counts). */
typedef struct carver {
    unsigned char *base;           /* NULL while sizing */
    size_t off;
    int ovf;
} carver;

/* n items of size bytes, REC_ALIGN-aligned; NULL while sizing or after an overflow. */
static void *carve(carver *c, size_t n, size_t size) {
    size_t b;
    if (c->ovf || bl_mul_size(n, size, &b) || b > SIZE_MAX / 2 ||
        bl_add_size(c->off, (b + REC_ALIGN - 1) & ~(size_t)(REC_ALIGN - 1), &b)) {
        c->ovf = 1;
        return NULL;
    }
    void *p = c->base ? c->base + c->off : NULL;
    c->off = b;
    return p;
}

static void bwork_layout(bl_bwork *w, carver *c, const bl_bview *v, size_t n_sx, size_t n_params, size_t H,
                         size_t n_dec) {
    const size_t np = w->n_props, B = w->max_batch;
    w->sx_slot = carve(c, n_sx, sizeof(int32_t));
    w->sx_list = carve(c, w->sx_cap, sizeof(uint32_t));
    w->sx_rec = carve(c, w->sx_cap, w->sx_stride * sizeof(double));
    w->val_slot = carve(c, np, sizeof(int32_t *));
    w->val_list = carve(c, np, sizeof(uint32_t *));
    w->val_rec = carve(c, np, sizeof(double *));
    w->val_w = carve(c, np, sizeof(double *));
    w->val_mask = carve(c, np, sizeof(double *));
    w->val_cap = carve(c, np, sizeof(size_t));
    w->val_first = carve(c, np, sizeof(uint32_t *));
    for (size_t p = 0; p < np; p++) { /* per-row dropout gives every row its own slot: B slots */
        int32_t *slot = carve(c, v->n_vals[p], sizeof(int32_t));
        uint32_t *list = carve(c, B, sizeof(uint32_t));
        double *rec = carve(c, B, w->val_stride * sizeof(double));
        double *mask = carve(c, B, 4 * H * sizeof(double));
        double *wt = carve(c, B, sizeof(double));
        uint32_t *first = carve(c, B, sizeof(uint32_t));
        if (!c->base || c->ovf) continue;
        w->val_cap[p] = B;
        w->val_slot[p] = slot;
        w->val_list[p] = list;
        w->val_rec[p] = rec;
        w->val_mask[p] = mask;
        w->val_w[p] = wt;
        w->val_first[p] = first;
    }
    w->row = carve(c, B, w->row_stride * sizeof(double));
    w->WT = carve(c, n_params, sizeof(double));
    w->row_slot = carve(c, B, (np ? np : 1) * sizeof(uint32_t));
    w->dec_code = carve(c, n_dec, sizeof(void *));
    w->dec_x = carve(c, n_dec, sizeof(void *));
    w->dec_mask = carve(c, n_dec, sizeof(void *));
    w->dec_dcd = carve(c, n_dec, sizeof(void *));
    w->dec_w = carve(c, n_dec, sizeof(double));
}

bl_status bl_bwork_new(const bl_bnet *net, const bl_bview *v, size_t max_batch, bl_bwork **out,
                       bl_error *err) {
    if (!net || !v || !out) return bl_seterr(err, BL_EINVAL, "bl_bwork_new: NULL argument");
    *out = NULL;
    if (max_batch == 0) return bl_seterr(err, BL_EINVAL, "batch size must be positive");
    const bl_bnet_dims *d = &net->d;
    size_t np = (size_t)d->n_ess + (size_t)d->n_opt;
    if (v->n_sx == 0 || !v->sx_feat) return bl_seterr(err, BL_EINVAL, "view has no scale-out table");
    if (np && (!v->n_vals || !v->vecs)) return bl_seterr(err, BL_EINVAL, "view has no property tables");
    const size_t H = (size_t)d->ae_hidden, Z = (size_t)d->z_hidden;
    bl_bwork *w = calloc(1, sizeof *w);
    if (!w) return bl_seterr(err, BL_ENOMEM, "out of memory for a training workspace");
    w->max_batch = max_batch;
    w->n_props = np;
    w->sx_stride = ROUND8(2 * (size_t)d->f_hidden + 3 * (size_t)d->f_out + 2 * Z);
    w->sx_cap = v->n_sx < max_batch ? v->n_sx : max_batch;
    w->val_stride = SLOT_STRIDE(d->ae_hidden, d->code, d->z_hidden);
    w->row_stride = ROUND8(2 * Z + 3);
    size_t n_dec; /* decoder slots: at most one per row and property */
    carver c = {NULL, 0, 0};
    if (bl_mul_size(max_batch, np ? np : 1, &n_dec)) c.ovf = 1;
    else bwork_layout(w, &c, v, v->n_sx, net->P.n, H, n_dec);
    if (c.ovf || c.off > SIZE_MAX - REC_ALIGN) {
        free(w);
        return bl_seterr(err, BL_ERANGE, "training workspace size overflows");
    }
    w->block = calloc(1, c.off + REC_ALIGN);
    if (!w->block) {
        free(w);
        return bl_seterr(err, BL_ENOMEM, "out of memory for a training workspace (%zu bytes)", c.off);
    }
    const size_t total = c.off;
    c.base = (unsigned char *)w->block + (REC_ALIGN - (uintptr_t)w->block % REC_ALIGN) % REC_ALIGN;
    c.off = 0;
    bwork_layout(w, &c, v, v->n_sx, net->P.n, H, n_dec);
    if (c.ovf || c.off != total) { /* cannot happen: the same walk */
        bl_bwork_free(w);
        return bl_seterr(err, BL_EINTERNAL, "training workspace layout changed between sizing and carving");
    }
    for (size_t p = 0; p < np; p++)
        for (size_t i = 0; i < v->n_vals[p]; i++) w->val_slot[p][i] = -1;
    for (size_t i = 0; i < v->n_sx; i++) w->sx_slot[i] = -1;
    *out = w;
    return BL_OK;
}

/* ---- the pass -------------------------------------------------------------------------------- */

/* xoshiro256** (Blackman & Vigna 2018), the generator of nn/rng.c, stepped on a local copy of the
 * state so that the mask loop keeps it in registers instead of calling bl_rng_uniform 16 times per
 * row and property. bl_rng_uniform(rng) >= p is (u >> 11)·2⁻⁵³ >= p for the next output u, that is
 * (u >> 11) >= ⌈p·2⁵³⌉ (both sides exact), an integer comparison. tests/test_model.c checks the
 * masks and the generator's final state against a reference that draws with bl_rng_uniform. */
static BL_ALWAYS_INLINE uint64_t rotl64(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
static BL_ALWAYS_INLINE uint64_t xoshiro_next(uint64_t *s) {
    const uint64_t result = rotl64(s[1] * 5, 7) * 9;
    const uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl64(s[3], 45);
    return result;
}

/* ---- kernels for any dimensions ---------------------------------------------------------------- */

/* The decoder of NS slots, forward and (grad) backward together, so nothing of it is stored:
 *   code [C] → b1 = H0·code [H] → t1 = selu → e1 = t1·mk + ad (AlphaDropout) → r = tanh(H3·e1) [V]
 * A slot brings its code, its vector x, its decoder mask (mk[H], ad[H]) and its loss weight w; the
 * slots' loss Σ w·(r − x)² is added per position into e2[V] (summed once at the end of the pass: a
 * running sum would chain every addition). With grad_h the h gradients are added into GH0 [H×C]
 * and GH3 [V×H]; with grad_in d loss / d code goes to dcd[s] [C]. */
#define DEC_NS 4
static BL_ALWAYS_INLINE void dec_block(const double *restrict H0T, const double *restrict H0,
                                       const double *restrict H3T, const double *restrict H3,
                                       double *restrict GH0, double *restrict GH3, const double *const *code,
                                       const double *const *x, const double *const *m, const double *w,
                                       double *const *dcd, double *restrict e2, int grad_h, int grad_in,
                                       const int NS, const int H, const int C, const int V) {
    double b1[DEC_NS][BL_BNET_DIM_MAX], t1[DEC_NS][BL_BNET_DIM_MAX], e1[DEC_NS][BL_BNET_DIM_MAX];
    double r[DEC_NS][BL_BNET_DIM_MAX], dr[DEC_NS][BL_BNET_DIM_MAX], de1[DEC_NS][BL_BNET_DIM_MAX];
    for (int s = 0; s < NS; s++) {
        for (int h = 0; h < H; h++) b1[s][h] = 0.0;
        for (int c = 0; c < C; c++) {
            const double cv = code[s][c];
            for (int h = 0; h < H; h++) b1[s][h] += cv * H0T[c * H + h];
        }
        for (int h = 0; h < H; h++) t1[s][h] = selu(b1[s][h]);
        for (int h = 0; h < H; h++) e1[s][h] = t1[s][h] * m[s][h] + m[s][H + h];
        for (int o = 0; o < V; o++) r[s][o] = 0.0;
        for (int h = 0; h < H; h++) {
            const double ev = e1[s][h];
            for (int o = 0; o < V; o++) r[s][o] += ev * H3T[h * V + o];
        }
        for (int o = 0; o < V; o++) r[s][o] = tanh_fast(r[s][o]);
        const double ws = w[s], ws2 = 2.0 * ws;
        const double *xs = x[s];
        for (int o = 0; o < V; o++) {
            const double y = r[s][o], dy = y - xs[o];
            e2[o] += ws * (dy * dy);
            dr[s][o] = ws2 * dy * (1.0 - y * y);   /* d loss / d (H3·e1) */
        }
    }
    if (!grad_h && !grad_in) return;
    for (int s = 0; s < NS; s++)
        for (int h = 0; h < H; h++) de1[s][h] = 0.0;
    for (int o = 0; o < V; o++) { /* de1 = H3ᵀ dr, GH3 += dr e1ᵀ */
        const double *w3 = H3 + o * H;
        for (int s = 0; s < NS; s++) {
            const double d = dr[s][o];
            for (int h = 0; h < H; h++) de1[s][h] += d * w3[h];
        }
        if (grad_h) {
            double *g = GH3 + o * H;
            for (int s = 0; s < NS; s++) {
                const double d = dr[s][o];
                for (int h = 0; h < H; h++) g[h] += d * e1[s][h];
            }
        }
    }
    for (int s = 0; s < NS; s++) {
        for (int h = 0; h < H; h++) de1[s][h] *= m[s][h] * selu_d(b1[s][h], t1[s][h]); /* d b1 */
        if (grad_h)
            for (int h = 0; h < H; h++) {
                const double g = de1[s][h];
                for (int c = 0; c < C; c++) GH0[h * C + c] += g * code[s][c];
            }
        if (grad_in) {
            double *dc = dcd[s];
            for (int c = 0; c < C; c++) dc[c] = 0.0;
            for (int h = 0; h < H; h++) {
                const double g = de1[s][h];
                for (int c = 0; c < C; c++) dc[c] += g * H0[h * C + c];
            }
        }
    }
}

/* ---- kernels for the paper's dimensions (H = 8, C = 4, V = 40, Z = 8) --------------------------- */
#if BL_VEC
/* The decoder of NS slots as dec_block, with the 8 hidden units of a slot in one v8d and the 40
 * outputs in five. gh0t [C] accumulates H0's gradient transposed (unit h in lane h), e2 [5] the
 * loss per position. */
static BL_ALWAYS_INLINE void dec8_block(const double *restrict H0T, const double *restrict H0,
                                        const double *restrict H3T, const double *restrict H3,
                                        double *restrict GH3, v8d *restrict gh0t, const double *const *code,
                                        const double *const *x, const double *const *m, const double *w,
                                        double *const *dcd, v8d *restrict e2, int grad_h, int grad_in,
                                        const int NS, const int VW) {
    v8d b1[DEC_NS], t1[DEC_NS], e1[DEC_NS], mk[DEC_NS], de1[DEC_NS], dra[DEC_NS][5];
    const v8d h0t0 = ld8(H0T), h0t1 = ld8(H0T + 8), h0t2 = ld8(H0T + 16), h0t3 = ld8(H0T + 24);
    for (int s = 0; s < NS; s++) {
        const double *cs = code[s];
        b1[s] = h0t0 * cs[0] + h0t1 * cs[1] + h0t2 * cs[2] + h0t3 * cs[3];
    }
    selu_8n(t1, b1, NS, VW);
    for (int s = 0; s < NS; s++) {
        mk[s] = ld8(m[s]);
        e1[s] = t1[s] * mk[s] + ld8(m[s] + 8);
    }
    /* the 40 outputs of two slots at a time: ten vectors through one interleaved tanh */
    for (int s0 = 0; s0 < NS; s0 += 2) {
        const int ns = NS - s0 < 2 ? NS - s0 : 2;
        v8d rr[10], yy[10];
        for (int q = 0; q < ns; q++) {
            const v8d e = e1[s0 + q];
            v8d *r = rr + 5 * q;
            for (int j = 0; j < 5; j++) r[j] = ld8(H3T + 8 * j) * e[0];
            for (int h = 1; h < 8; h++)
                for (int j = 0; j < 5; j++) r[j] += ld8(H3T + h * 40 + 8 * j) * e[h];
        }
        tanh_8n(yy, rr, 5 * ns, VW);
        for (int q = 0; q < ns; q++) {
            const int s = s0 + q;
            const double ws = w[s], ws2 = 2.0 * ws;
            for (int j = 0; j < 5; j++) {
                const v8d y = yy[5 * q + j], dy = y - ld8(x[s] + 8 * j);
                e2[j] += ws * (dy * dy);
                dra[s][j] = ws2 * dy * (1.0 - y * y);   /* d loss / d (H3·e1) */
            }
        }
    }
    if (!grad_h && !grad_in) return;
    for (int s = 0; s < NS; s++) de1[s] = splat_8(0.0);
    for (int o = 0; o < 40; o++) { /* de1 = H3ᵀ dr, GH3 += dr e1ᵀ, sharing row o */
        const v8d w3 = ld8(H3 + 8 * o);
        if (grad_h) {
            v8d g = ld8(GH3 + 8 * o);
            for (int s = 0; s < NS; s++) {
                const double d = dra[s][o >> 3][o & 7];
                de1[s] += w3 * d;
                g += e1[s] * d;
            }
            ST8(GH3 + 8 * o, g);
        } else {
            for (int s = 0; s < NS; s++) de1[s] += w3 * dra[s][o >> 3][o & 7];
        }
    }
    for (int s = 0; s < NS; s++) {
        const v8d db1 = de1[s] * mk[s] * selu_d_w(&b1[s], &t1[s], VW); /* d b1 */
        const double *cs = code[s];
        if (grad_h) {
            gh0t[0] += db1 * cs[0];
            gh0t[1] += db1 * cs[1];
            gh0t[2] += db1 * cs[2];
            gh0t[3] += db1 * cs[3];
        }
        if (grad_in) { /* dcd = H0ᵀ db1, H0 [8×4] row by row */
            v4d dc = ld4(H0) * db1[0];
            for (int h = 1; h < 8; h++) dc += ld4(H0 + 4 * h) * db1[h];
            ST4(dcd[s], dc);
        }
    }
}
#endif

static int view_frozen(const bl_params *P, size_t off) {
    for (int i = 0; i < P->n_views; i++)
        if (P->views[i].offset == off) return P->views[i].frozen;
    return 0;
}

/* FAST: the paper's dimensions with vector kernels (only when BL_VEC), VW their math's width. */
static BL_ALWAYS_INLINE bl_status pass_impl(bl_bnet *net, const bl_bview *v, const size_t *rows, size_t B,
                                            const bl_bpass *pass, bl_bwork *w, double *pred, bl_bloss *loss,
                                            bl_error *err, const int FI, const int FH, const int FO,
                                            const int H, const int C, const int V, const int Z, const int FAST,
                                            const int VW) {
    const bl_bnet_dims *d = &net->d;
    const int ZI = net->z_in, NE = d->n_ess, NO = d->n_opt;
    const int NP = NE + NO;
    const double *W = net->P.param;
    double *G = net->P.grad;
    const int drop = pass->training && pass->dropout > 0.0;
    double da = 1.0, db = 0.0;
    if (drop) {
        bl_status st = bl_alpha_dropout_coef(pass->dropout, &da, &db, err);
        if (st) return st;
    }
    const int recon = pass->recon;
    const int grad = pass->want_grad;
    const int grad_f = grad && !view_frozen(&net->P, net->f0w);
    const int grad_g = grad && !view_frozen(&net->P, net->g0w);
    const int grad_h = grad && recon && !view_frozen(&net->P, net->h0w);
    const int grad_z = grad && !view_frozen(&net->P, net->z0w);
    const int decode = recon;
    const int hybrid = pass->per_row_dropout == 2;
    const size_t ST = w->val_stride, MS = 4 * (size_t)H;

    /* 0. transposed weights for the forward products (see mvt) */
    double *WT = w->WT;
    for (int i = 0; i < net->P.n_views; i++) {
        const bl_param_view *pv = &net->P.views[i];
        const double *src = W + pv->offset;
        double *dst = WT + pv->offset;
        for (int r = 0; r < pv->rows; r++)
            for (int c = 0; c < pv->cols; c++) dst[(size_t)c * pv->rows + r] = src[(size_t)r * pv->cols + c];
    }

    /* 1. collect distinct scale-outs and values of the batch */
    size_t n_sx = 0;
    for (size_t b = 0; b < B; b++) {
        uint32_t s = v->sx[rows[b]];
        if (w->sx_slot[s] < 0) { w->sx_slot[s] = (int32_t)n_sx; w->sx_list[n_sx++] = s; }
    }
    size_t n_val[2 * BL_BNET_PROPS_MAX];
    for (int p = 0; p < NP; p++) {
        size_t n = 0;
        int32_t *slot = w->val_slot[p];
        double *cnt = w->val_w[p];
        for (size_t b = 0; b < B; b++) {
            uint32_t x = v->val[rows[b] * (size_t)NP + (size_t)p];
            if (pass->per_row_dropout) { /* every row its own copy (and dropout mask) of the value */
                if (slot[x] < 0) slot[x] = (int32_t)n;
                w->val_first[p][n] = (uint32_t)slot[x];
                w->val_list[p][n] = x;
                cnt[n] = 1.0;
                if (hybrid) { /* one reconstruction per value, weighted by its rows */
                    cnt[n] = 0.0;
                    cnt[slot[x]] += 1.0;
                }
                w->row_slot[b * (size_t)NP + (size_t)p] = (uint32_t)n++;
                continue;
            }
            if (slot[x] < 0) {
                slot[x] = (int32_t)n;
                w->val_first[p][n] = (uint32_t)n;
                w->val_list[p][n] = x;
                cnt[n] = 0.0;
                n++;
            }
            cnt[slot[x]] += 1.0;
            w->row_slot[b * (size_t)NP + (size_t)p] = (uint32_t)slot[x];
        }
        n_val[p] = n;
    }

    /* 2. the AlphaDropout masks as multiply-adds y = t·mk + ad: kept (a, b), dropped (0, α'·a + b),
     * no dropout (1, 0), which is exact. The draws happen here in the order the slots are visited:
     * per property, per slot, the encoder's H units, then (decoder slots only) the decoder's H
     * units. This order is part of the pass's contract (a row-by-row network draws the same stream,
     * and so must any other implementation of it). */
    if (drop) {
        uint64_t s[4], kd, kb, koff; /* the kept and dropped values as bits: a branch-free select */
        memcpy(s, pass->rng->s, sizeof s);
        const double ad_off = BL_SELU_ALPHA_PRIME * da + db;
        memcpy(&kd, &da, sizeof kd);
        memcpy(&kb, &db, sizeof kb);
        memcpy(&koff, &ad_off, sizeof koff);
        const uint64_t thresh = (uint64_t)ceil(pass->dropout * 0x1.0p53);
        for (int p = 0; p < NP; p++)
            for (size_t i = 0; i < n_val[p]; i++) {
                double *mk = w->val_mask[p] + i * MS;
                const int dec = decode && (!hybrid || w->val_first[p][i] == i);
                for (int part = 0; part < 1 + dec; part++, mk += 2 * H)
                    for (int k = 0; k < H; k++) {
                        const uint64_t keep = 0 - (uint64_t)((xoshiro_next(s) >> 11) >= thresh);
                        const uint64_t m = kd & keep, a = (kb & keep) | (koff & ~keep);
                        memcpy(mk + k, &m, sizeof m);                    /* da or +0.0 */
                        memcpy(mk + H + k, &a, sizeof a);                /* db or α'·da + db */
                    }
            }
        memcpy(pass->rng->s, s, sizeof s);
    } else {
        for (int p = 0; p < NP; p++)
            for (size_t i = 0; i < n_val[p]; i++) {
                double *mk = w->val_mask[p] + i * MS;
                for (int k = 0; k < H; k++) mk[k] = mk[2 * H + k] = 1.0;
                for (int k = 0; k < H; k++) mk[H + k] = mk[3 * H + k] = 0.0;
            }
    }

    /* 3. f and z's scale-out term per distinct scale-out: A = Wz[:, 0:FO]·F + bz */
    for (size_t i = 0; i < n_sx; i++) {
        double *r = w->sx_rec + i * w->sx_stride;
        double *a0 = r, *s0 = a0 + FH, *a2 = s0 + FH, *F = a2 + FO, *A = F + FO;
        const double *x = v->sx_feat + (size_t)w->sx_list[i] * (size_t)FI;
        mvt(WT + net->f0w, FH, FH, FI, x, a0);
        for (int k = 0; k < FH; k++) a0[k] += W[net->f0b + (size_t)k];
        for (int k = 0; k < FH; k++) s0[k] = selu(a0[k]);
        mvt(WT + net->f2w, FO, FO, FH, s0, a2);
        for (int k = 0; k < FO; k++) a2[k] += W[net->f2b + (size_t)k];
        for (int k = 0; k < FO; k++) F[k] = selu(a2[k]);
        mvt(WT + net->z0w, Z, Z, FO, F, A);
        for (int k = 0; k < Z; k++) A[k] += W[net->z0b + (size_t)k];
        memset(A + Z, 0, (size_t)(Z + FO) * sizeof(double)); /* dA, dF */
    }

    /* 4. the encoder and z's property terms per slot; the decoder slots are listed for step 5 */
    const double *restrict G0T = WT + net->g0w, *restrict G3T = WT + net->g3w;
    size_t n_dec = 0;
    for (int p = 0; p < NP; p++) {
        const int opt = p >= NE;
        const int col = opt ? FO + C * NE : FO + C * p;
        const double scale = opt ? 1.0 / NO : 1.0;
        const double rs = 1.0 / ((double)B * (opt ? NO : NE) * V);
        const double *restrict WTz = WT + net->z0w + (size_t)col * Z;
        double *base = w->val_rec[p];
        for (size_t i = 0; i < n_val[p]; i++) { /* the first layer once per distinct value */
            if (w->val_first[p][i] != i) continue;
            double *rec = base + i * ST;
            mvt(G0T, H, H, V, v->vecs[p] + (size_t)w->val_list[p][i] * (size_t)V, rec + O_A1);
            for (int k = 0; k < H; k++) rec[O_S1 + k] = selu(rec[O_A1 + k]);   /* s1 = selu(G0·x) */
            memset(rec + O_ACC, 0, (size_t)H * sizeof(double));
        }
#if BL_VEC
        if (FAST) { /* d1 and a2 per slot, then the SELU of the codes two slots to a vector */
            const size_t n = n_val[p];
            for (size_t i = 0; i < n; i++) {
                double *rec = base + i * ST;
                const double *mk = w->val_mask[p] + i * MS, *s1 = base + (size_t)w->val_first[p][i] * ST + O_S1;
                const v8d d1 = ld8(s1) * ld8(mk) + ld8(mk + 8);
                ST8(rec + O_D1, d1);
                v4d a2 = ld4(G3T) * d1[0];
                for (int k = 1; k < 8; k++) a2 += ld4(G3T + 4 * k) * d1[k];
                ST4(rec + O_A2, a2);
            }
            for (size_t i0 = 0; i0 < n; i0 += 16) {
                double buf[16][4] = {{0}};
                v8d a[8];
                for (size_t i = i0; i < n && i < i0 + 16; i++) memcpy(buf[i - i0], base + i * ST + O_A2, 4 * sizeof(double));
                for (int q = 0; q < 8; q++) a[q] = ld8(buf[2 * q]);
                selu_8n(a, a, 8, VW);
                for (int q = 0; q < 8; q++) ST8(buf[2 * q], a[q]);
                for (size_t i = i0; i < n && i < i0 + 16; i++) memcpy(base + i * ST + O_C, buf[i - i0], 4 * sizeof(double));
            }
        }
#endif
        for (size_t i = 0; i < n_val[p]; i++) {
            double *rec = base + i * ST;
            const double *mk = w->val_mask[p] + i * MS;
            const double *x = v->vecs[p] + (size_t)w->val_list[p][i] * (size_t)V;
            const uint32_t first = w->val_first[p][i];
            const double *s1 = base + (size_t)first * ST + O_S1;
#if BL_VEC
            if (FAST) {
                const double *c = rec + O_C;
                const v8d P = (ld8(WTz) * c[0] + ld8(WTz + 8) * c[1] + ld8(WTz + 16) * c[2] +
                               ld8(WTz + 24) * c[3]) * scale;
                ST8(rec + O_P, P);
                ST8(rec + O_DP, splat_8(0.0));
            } else
#endif
            {
                double *d1 = rec + O_D1, *a2 = rec + O_A2, *c = rec + O_C, *P = rec + O_P;
                for (int k = 0; k < H; k++) d1[k] = s1[k] * mk[k] + mk[H + k];
                mvt(G3T, C, C, H, d1, a2);
                for (int k = 0; k < C; k++) c[k] = selu(a2[k]);
                mvt(WTz, Z, Z, C, c, P);
                for (int k = 0; k < Z; k++) P[k] *= scale;
                memset(rec + O_DP, 0, (size_t)Z * sizeof(double));
            }
            if (!decode || (hybrid && first != i)) continue;
            const double *code = rec + O_C;
            if (hybrid) { /* the decoder reads the value's code without encoder dropout */
                mvt(G3T, C, C, H, s1, rec + O_A2C);
                for (int k = 0; k < C; k++) rec[O_CC + k] = selu(rec[O_A2C + k]);
                code = rec + O_CC;
            }
            w->dec_code[n_dec] = code;
            w->dec_x[n_dec] = x;
            w->dec_mask[n_dec] = mk + 2 * H;
            w->dec_dcd[n_dec] = rec + O_DCD;
            w->dec_w[n_dec] = rs * w->val_w[p][i];
            n_dec++;
        }
    }

    /* 5. the decoder over every decoder slot of the batch, forward and backward */
    double recon_loss = 0.0;
    if (decode) {
        const double *H0T = WT + net->h0w, *H0 = W + net->h0w, *H3T = WT + net->h3w, *H3 = W + net->h3w;
        double *GH0 = G + net->h0w, *GH3 = G + net->h3w;
        size_t i = 0;
#if BL_VEC
        if (FAST) {
            v8d e2[5], gh0t[4];
            for (int k = 0; k < 5; k++) e2[k] = splat_8(0.0);
            for (int k = 0; k < 4; k++) gh0t[k] = splat_8(0.0);
            for (; i + DEC_NS <= n_dec; i += DEC_NS)
                dec8_block(H0T, H0, H3T, H3, GH3, gh0t, w->dec_code + i, w->dec_x + i, w->dec_mask + i,
                           w->dec_w + i, w->dec_dcd + i, e2, grad_h, grad_g, DEC_NS, VW);
            for (; i < n_dec; i++)
                dec8_block(H0T, H0, H3T, H3, GH3, gh0t, w->dec_code + i, w->dec_x + i, w->dec_mask + i,
                           w->dec_w + i, w->dec_dcd + i, e2, grad_h, grad_g, 1, VW);
            const v8d e = e2[0] + e2[1] + e2[2] + e2[3] + e2[4];
            for (int k = 0; k < 8; k++) recon_loss += e[k];
            if (grad_h)
                for (int h = 0; h < 8; h++)
                    for (int c = 0; c < 4; c++) GH0[h * 4 + c] += gh0t[c][h];
        } else
#endif
        {
            double e2[BL_BNET_DIM_MAX];
            for (int k = 0; k < V; k++) e2[k] = 0.0;
            for (; i + DEC_NS <= n_dec; i += DEC_NS)
                dec_block(H0T, H0, H3T, H3, GH0, GH3, w->dec_code + i, w->dec_x + i, w->dec_mask + i,
                          w->dec_w + i, w->dec_dcd + i, e2, grad_h, grad_g, DEC_NS, H, C, V);
            for (; i < n_dec; i++)
                dec_block(H0T, H0, H3T, H3, GH0, GH3, w->dec_code + i, w->dec_x + i, w->dec_mask + i,
                          w->dec_w + i, w->dec_dcd + i, e2, grad_h, grad_g, 1, H, C, V);
            for (int k = 0; k < V; k++) recon_loss += e2[k];
        }
    }

    /* 6. per row: u = A + Σ P, h = selu(u), out = selu(z2·h + b2) */
    double rt_loss = 0.0, abs_err = 0.0;
    const double *z2 = W + net->z2w;
    const double inv_b = 1.0 / (double)B;
    for (size_t b = 0; b < B; b++) {
        size_t row = rows[b];
        double *rr = w->row + b * w->row_stride, *u = rr, *h = u + Z;
        const double *A = w->sx_rec + (size_t)w->sx_slot[v->sx[row]] * w->sx_stride + 2 * FH + 2 * FO;
        const uint32_t *rs = w->row_slot + b * (size_t)NP;
        double pre = W[net->z2b];
#if BL_VEC
        if (FAST) {
            v8d uv = ld8(A);
            for (int p = 0; p < NP; p++) uv += ld8(w->val_rec[p] + (size_t)rs[p] * ST + O_P);
            const v8d hv = selu_w(&uv, VW), zh = hv * ld8(z2);
            ST8(u, uv);
            ST8(h, hv);
            pre += ((zh[0] + zh[1]) + (zh[2] + zh[3])) + ((zh[4] + zh[5]) + (zh[6] + zh[7]));
        } else
#endif
        {
            memcpy(u, A, (size_t)Z * sizeof(double));
            for (int p = 0; p < NP; p++) {
                const double *P = w->val_rec[p] + (size_t)rs[p] * ST + O_P;
                for (int k = 0; k < Z; k++) u[k] += P[k];
            }
            for (int k = 0; k < Z; k++) h[k] = selu(u[k]);
            for (int k = 0; k < Z; k++) pre += z2[k] * h[k];
        }
        double out = selu(pre);
        rr[2 * Z] = pre;
        rr[2 * Z + 1] = out;
        if (pred) pred[b] = out;
        if (v->target) {
            double e = out - v->target[row], ae = fabs(e);
            abs_err += ae;
            rt_loss += ae < 1.0 ? 0.5 * e * e : ae - 0.5;
            rr[2 * Z + 2] = (ae < 1.0 ? e : (e > 0 ? 1.0 : -1.0)) * inv_b; /* d loss / d out */
        }
    }
    rt_loss *= inv_b;
    loss->runtime = rt_loss;
    loss->recon = decode ? recon_loss : 0.0;
    loss->total = loss->runtime + loss->recon;
    loss->abs_err = abs_err;

    if (grad) {
        /* 7. backward through z per row, accumulating into the distinct terms */
        double *gz2 = G + net->z2w;
        double du[BL_BNET_DIM_MAX];
#if BL_VEC
        v8d gz2v = splat_8(0.0);
#endif
        for (size_t b = 0; b < B; b++) {
            size_t row = rows[b];
            double *rr = w->row + b * w->row_stride, *u = rr, *h = u + Z;
            double dpre = rr[2 * Z + 2] * selu_d(rr[2 * Z], rr[2 * Z + 1]);
            double *dA = w->sx_rec + (size_t)w->sx_slot[v->sx[row]] * w->sx_stride + 2 * FH + 2 * FO + Z;
            const uint32_t *rs = w->row_slot + b * (size_t)NP;
            if (grad_z) G[net->z2b] += dpre;
#if BL_VEC
            if (FAST) {
                const v8d uv = ld8(u), hv = ld8(h);
                if (grad_z) gz2v += hv * dpre;
                const v8d duv = ld8(z2) * dpre * selu_d_w(&uv, &hv, VW);
                ST8(dA, ld8(dA) + duv);
                for (int p = 0; p < NP; p++) {
                    double *dP = w->val_rec[p] + (size_t)rs[p] * ST + O_DP;
                    ST8(dP, ld8(dP) + duv);
                }
                continue;
            }
#endif
            if (grad_z)
                for (int k = 0; k < Z; k++) gz2[k] += dpre * h[k];
            for (int k = 0; k < Z; k++) du[k] = dpre * z2[k] * selu_d(u[k], h[k]);
            for (int k = 0; k < Z; k++) dA[k] += du[k];
            for (int p = 0; p < NP; p++) {
                double *dP = w->val_rec[p] + (size_t)rs[p] * ST + O_DP;
                for (int k = 0; k < Z; k++) dP[k] += du[k];
            }
        }
#if BL_VEC
        if (FAST && grad_z) ST8(gz2, ld8(gz2) + gz2v);
#endif
        /* 8. scale-out terms: z0 bias and f-block, then f */
        for (size_t i = 0; i < n_sx; i++) {
            double *r = w->sx_rec + i * w->sx_stride;
            double *a0 = r, *s0 = a0 + FH, *a2 = s0 + FH, *F = a2 + FO, *dA = F + FO + Z, *dF = dA + Z;
            if (grad_z) {
                for (int k = 0; k < Z; k++) G[net->z0b + (size_t)k] += dA[k];
                outer_add(G + net->z0w, ZI, Z, FO, dA, F, 1.0);
            }
            if (!grad_f) continue;
            mtv_add(W + net->z0w, ZI, Z, FO, dA, dF);
            double da2[BL_BNET_DIM_MAX], ds0[BL_BNET_DIM_MAX];
            for (int k = 0; k < FO; k++) da2[k] = dF[k] * selu_d(a2[k], F[k]);
            for (int k = 0; k < FO; k++) G[net->f2b + (size_t)k] += da2[k];
            outer_add(G + net->f2w, FH, FO, FH, da2, s0, 1.0);
            memset(ds0, 0, (size_t)FH * sizeof(double));
            mtv_add(W + net->f2w, FH, FO, FH, da2, ds0);
            for (int k = 0; k < FH; k++) ds0[k] *= selu_d(a0[k], s0[k]);
            for (int k = 0; k < FH; k++) G[net->f0b + (size_t)k] += ds0[k];
            outer_add(G + net->f0w, FI, FH, FI, ds0, v->sx_feat + (size_t)w->sx_list[i] * (size_t)FI, 1.0);
        }
        /* 9. property terms: z0 blocks, then the encoder (the decoder's part came from step 5) */
        const double *restrict G3 = W + net->g3w;
        double gg3[BL_BNET_DIM_MAX]; /* G3's gradient [C×H] summed over all slots, when it fits */
        const int acc_g3 = grad_g && C * H <= BL_BNET_DIM_MAX;
        if (acc_g3) memset(gg3, 0, (size_t)(C * H) * sizeof(double));
        double *g3 = acc_g3 ? gg3 : G + net->g3w;
        for (int p = 0; p < NP; p++) {
            const int opt = p >= NE;
            const int col = opt ? FO + C * NE : FO + C * p;
            const double scale = opt ? 1.0 / NO : 1.0;
            double *base = w->val_rec[p];
#if BL_VEC
            if (FAST) {
                const double *restrict Wz = W + net->z0w + col;
                v8d gzt[4], gg[4]; /* z0's block transposed (code unit c → 8 lanes of z), G3's rows */
                for (int k = 0; k < 4; k++) gzt[k] = gg[k] = splat_8(0.0);
                v4d wz[8];
                for (int k = 0; k < 8; k++) wz[k] = ld4(Wz + (size_t)k * ZI);
                const v8d g3r0 = ld8(G3), g3r1 = ld8(G3 + 8), g3r2 = ld8(G3 + 16), g3r3 = ld8(G3 + 24);
                for (size_t i = 0; i < n_val[p]; i++) {
                    double *rec = base + i * ST;
                    const double c0 = rec[O_C], c1 = rec[O_C + 1], c2 = rec[O_C + 2], c3 = rec[O_C + 3];
                    const v8d dP = ld8(rec + O_DP);
                    if (grad_z) {
                        const v8d sdP = dP * scale;
                        gzt[0] += sdP * c0;
                        gzt[1] += sdP * c1;
                        gzt[2] += sdP * c2;
                        gzt[3] += sdP * c3;
                    }
                    if (!grad_g) continue;
                    const uint32_t first = w->val_first[p][i];
                    double *frec = base + (size_t)first * ST;
                    const int dec = decode && (!hybrid || first == i);
                    v4d dc = wz[0] * rec[O_DP];
                    for (int k = 1; k < 8; k++) dc += wz[k] * rec[O_DP + k];   /* d code from z */
                    dc *= scale;
                    if (dec && !hybrid) dc += ld4(rec + O_DCD);               /* and from the decoder */
                    const v4d a2 = ld4(rec + O_A2), cv = ld4(rec + O_C);
                    const v4d dcode = dc * selu_d_4(&a2, &cv); /* d a2 */
                    const v8d d1 = ld8(rec + O_D1);
                    gg[0] += d1 * dcode[0];
                    gg[1] += d1 * dcode[1];
                    gg[2] += d1 * dcode[2];
                    gg[3] += d1 * dcode[3];
                    const v8d dd1 = g3r0 * dcode[0] + g3r1 * dcode[1] + g3r2 * dcode[2] + g3r3 * dcode[3];
                    const v8d a1 = ld8(frec + O_A1), s1 = ld8(frec + O_S1), sd = selu_d_w(&a1, &s1, VW);
                    v8d acc = ld8(frec + O_ACC) + dd1 * ld8(w->val_mask[p] + i * MS) * sd; /* d a1 */
                    if (dec && hybrid) { /* the clean path: cc = selu(G3·s1) read by the decoder */
                        const v4d a2c = ld4(rec + O_A2C), cc = ld4(rec + O_CC);
                        const v4d dcl = ld4(rec + O_DCD) * selu_d_4(&a2c, &cc);
                        gg[0] += s1 * dcl[0];
                        gg[1] += s1 * dcl[1];
                        gg[2] += s1 * dcl[2];
                        gg[3] += s1 * dcl[3];
                        acc += (g3r0 * dcl[0] + g3r1 * dcl[1] + g3r2 * dcl[2] + g3r3 * dcl[3]) * sd;
                    }
                    ST8(frec + O_ACC, acc);
                }
                if (grad_z)
                    for (int k = 0; k < 8; k++)
                        for (int c = 0; c < 4; c++) G[net->z0w + (size_t)k * ZI + (size_t)(col + c)] += gzt[c][k];
                if (grad_g)
                    for (int c = 0; c < 4; c++) ST8(gg3 + 8 * c, ld8(gg3 + 8 * c) + gg[c]);
            } else
#endif
            for (size_t i = 0; i < n_val[p]; i++) {
                double *rec = base + i * ST;
                const double *c = rec + O_C, *dP = rec + O_DP;
                if (grad_z) outer_add(G + net->z0w + col, ZI, Z, C, dP, c, scale);
                if (!grad_g) continue;
                const uint32_t first = w->val_first[p][i];
                double *frec = base + (size_t)first * ST;
                const double *a1 = frec + O_A1, *s1 = frec + O_S1, *a2 = rec + O_A2, *d1 = rec + O_D1;
                double *acc = frec + O_ACC;
                const double *mk = w->val_mask[p] + i * MS;
                const int dec = decode && (!hybrid || first == i);
                double dcode[BL_BNET_DIM_MAX], tmp[BL_BNET_DIM_MAX];
                for (int k = 0; k < C; k++) dcode[k] = 0.0;
                mtv_add(W + net->z0w + col, ZI, Z, C, dP, dcode);          /* d code from z */
                for (int k = 0; k < C; k++) {
                    dcode[k] *= scale;
                    if (dec && !hybrid) dcode[k] += rec[O_DCD + k];       /* and from the decoder */
                }
                for (int k = 0; k < C; k++) dcode[k] *= selu_d(a2[k], c[k]); /* d a2 */
                outer_add(g3, H, C, H, dcode, d1, 1.0);
                for (int k = 0; k < H; k++) tmp[k] = 0.0;
                mtv_add(G3, H, C, H, dcode, tmp);                         /* d d1 */
                for (int k = 0; k < H; k++)                               /* d a1, summed over the value's slots */
                    acc[k] += tmp[k] * mk[k] * selu_d(a1[k], s1[k]);
                if (dec && hybrid) { /* the clean path: cc = selu(G3·s1) read by the decoder */
                    const double *a2c = rec + O_A2C, *cc = rec + O_CC;
                    for (int k = 0; k < C; k++) dcode[k] = rec[O_DCD + k] * selu_d(a2c[k], cc[k]);
                    outer_add(g3, H, C, H, dcode, s1, 1.0);
                    for (int k = 0; k < H; k++) tmp[k] = 0.0;
                    mtv_add(G3, H, C, H, dcode, tmp);
                    for (int k = 0; k < H; k++) acc[k] += tmp[k] * selu_d(a1[k], s1[k]);
                }
            }
            /* the encoder's first layer: one outer product per distinct value */
            if (grad_g)
                for (size_t i = 0; i < n_val[p]; i++) {
                    if (w->val_first[p][i] != i) continue;
                    outer_add(G + net->g0w, V, H, V, base + i * ST + O_ACC,
                              v->vecs[p] + (size_t)w->val_list[p][i] * (size_t)V, 1.0);
                }
        }
        if (acc_g3)
            for (int k = 0; k < C * H; k++) G[net->g3w + (size_t)k] += gg3[k];
    }

    /* 10. reset the slot maps for the next batch */
    for (size_t i = 0; i < n_sx; i++) w->sx_slot[w->sx_list[i]] = -1;
    for (int p = 0; p < NP; p++)
        for (size_t i = 0; i < n_val[p]; i++) w->val_slot[p][w->val_list[p][i]] = -1;
    return BL_OK;
}

static bl_status pass_dispatch(bl_bnet *net, const bl_bview *v, const size_t *rows, size_t B,
                               const bl_bpass *pass, bl_bwork *w, double *pred, bl_bloss *loss, bl_error *err);

bl_status bl_bnet_pass(bl_bnet *net, const bl_bview *v, const size_t *rows, size_t B, const bl_bpass *pass,
                       bl_bwork *w, double *pred, bl_bloss *loss, bl_error *err) {
    if (!net || !v || !rows || !pass || !w || !loss) return bl_seterr(err, BL_EINVAL, "bl_bnet_pass: NULL argument");
    if (B == 0 || B > w->max_batch) return bl_seterr(err, BL_EINVAL, "batch of %zu rows (workspace holds %zu)", B, w->max_batch);
    if (pass->training && pass->dropout > 0.0 && !pass->rng)
        return bl_seterr(err, BL_EINVAL, "training with dropout needs a random generator");
    if (pass->dropout < 0.0 || pass->dropout >= 1.0)
        return bl_seterr(err, BL_EINVAL, "dropout %g outside [0, 1)", pass->dropout);
    if (pass->want_grad && !v->target) return bl_seterr(err, BL_EINVAL, "gradients need targets");
    return pass_dispatch(net, v, rows, B, pass, w, pred, loss, err);
}

/* The paper's dimensions: f 3 → 16 → 8, auto-encoder 40 → 8 → 4 → 8 → 40, z … → 8 → 1. */
static int paper_dims(const bl_bnet_dims *d) {
    return d->f_in == 3 && d->f_hidden == 16 && d->f_out == 8 && d->ae_hidden == 8 && d->code == 4 &&
           d->vec_len == 40 && d->z_hidden == 8;
}

/* One copy of the pass per instruction set: the paper's dimensions with constant sizes and the
 * vector kernels, any other dimensions with sizes from the network and plain loops. */
#define PASS_COPY(NAME, ATTR, WIDTH)                                                              \
    static ATTR bl_status NAME(bl_bnet *net, const bl_bview *v, const size_t *rows, size_t B,      \
                               const bl_bpass *pass, bl_bwork *w, double *pred, bl_bloss *loss,   \
                               bl_error *err) {                                                   \
        const bl_bnet_dims *d = &net->d;                                                          \
        if (paper_dims(d))                                                                        \
            return pass_impl(net, v, rows, B, pass, w, pred, loss, err, 3, 16, 8, 8, 4, 40, 8,           \
                             WIDTH == 8, WIDTH);                                                  \
        return pass_impl(net, v, rows, B, pass, w, pred, loss, err, d->f_in, d->f_hidden, d->f_out,   \
                         d->ae_hidden, d->code, d->vec_len, d->z_hidden, 0, WIDTH);               \
    }
PASS_COPY(pass_base, , 4)
#if BL_MULTIVERSION
PASS_COPY(pass_v3, BL_TARGET_V3, 4)
PASS_COPY(pass_v4, BL_TARGET_V4, 8)
#endif

static bl_status pass_dispatch(bl_bnet *net, const bl_bview *v, const size_t *rows, size_t B,
                               const bl_bpass *pass, bl_bwork *w, double *pred, bl_bloss *loss, bl_error *err) {
#if BL_MULTIVERSION
    if (__builtin_cpu_supports("x86-64-v4")) return pass_v4(net, v, rows, B, pass, w, pred, loss, err);
    if (__builtin_cpu_supports("x86-64-v3")) return pass_v3(net, v, rows, B, pass, w, pred, loss, err);
#endif
    return pass_base(net, v, rows, B, pass, w, pred, loss, err);
}

void bl_bnet_encode(const bl_bnet *net, const double *vec, double *code) {
    const bl_bnet_dims *d = &net->d;
    double a1[BL_BNET_DIM_MAX], a2[BL_BNET_DIM_MAX];
    mv(net->P.param + net->g0w, d->vec_len, d->ae_hidden, d->vec_len, vec, a1);
    for (int i = 0; i < d->ae_hidden; i++) a1[i] = selu(a1[i]);
    mv(net->P.param + net->g3w, d->ae_hidden, d->code, d->ae_hidden, a1, a2);
    for (int i = 0; i < d->code; i++) code[i] = selu(a2[i]);
}

void bl_bnet_context_term(const bl_bnet *net, const double *ess_codes, const double *opt_codes,
                          int n_opt_present, double *ctx) {
    const bl_bnet_dims *d = &net->d;
    const int Z = d->z_hidden, C = d->code, ZI = net->z_in, FO = d->f_out;
    const double *W = net->P.param;
    for (int k = 0; k < Z; k++) ctx[k] = W[net->z0b + (size_t)k];
    double tmp[BL_BNET_DIM_MAX];
    for (int j = 0; j < d->n_ess; j++) {
        mv(W + net->z0w + FO + C * j, ZI, Z, C, ess_codes + (size_t)j * C, tmp);
        for (int k = 0; k < Z; k++) ctx[k] += tmp[k];
    }
    if (n_opt_present > 0) {
        double mean[BL_BNET_DIM_MAX];
        memset(mean, 0, sizeof mean);
        for (int q = 0; q < n_opt_present; q++)
            for (int k = 0; k < C; k++) mean[k] += opt_codes[(size_t)q * C + k];
        for (int k = 0; k < C; k++) mean[k] /= n_opt_present;
        mv(W + net->z0w + FO + C * d->n_ess, ZI, Z, C, mean, tmp);
        for (int k = 0; k < Z; k++) ctx[k] += tmp[k];
    }
}

/* Samples go through in blocks of PB, the block index innermost, so every product vectorises across
 * samples while each sample's sums keep the order of mv (results do not depend on the blocking). */
#define PB 8
static BL_ALWAYS_INLINE void predict_impl(const bl_bnet *net, const double *ctx, const double *feat, size_t n,
                                          double *out, const int FI, const int FH, const int FO, const int Z) {
    const int ZI = net->z_in;
    const double *W = net->P.param;
    double x[BL_BNET_DIM_MAX][PB], s0[BL_BNET_DIM_MAX][PB], F[BL_BNET_DIM_MAX][PB], pre[PB], acc[PB];
    for (size_t i0 = 0; i0 < n; i0 += PB) {
        const size_t nb = n - i0 < PB ? n - i0 : PB;
        for (int k = 0; k < FI; k++) /* a short last block repeats its last sample */
            for (size_t b = 0; b < PB; b++) x[k][b] = feat[(i0 + (b < nb ? b : nb - 1)) * (size_t)FI + (size_t)k];
        for (int o = 0; o < FH; o++) {
            const double *w = W + net->f0w + (size_t)o * FI;
            for (int b = 0; b < PB; b++) acc[b] = 0.0;
            for (int k = 0; k < FI; k++)
                for (int b = 0; b < PB; b++) acc[b] += w[k] * x[k][b];
            const double bias = W[net->f0b + (size_t)o];
            for (int b = 0; b < PB; b++) s0[o][b] = selu(acc[b] + bias);
        }
        for (int o = 0; o < FO; o++) {
            const double *w = W + net->f2w + (size_t)o * FH;
            for (int b = 0; b < PB; b++) acc[b] = 0.0;
            for (int k = 0; k < FH; k++)
                for (int b = 0; b < PB; b++) acc[b] += w[k] * s0[k][b];
            const double bias = W[net->f2b + (size_t)o];
            for (int b = 0; b < PB; b++) F[o][b] = selu(acc[b] + bias);
        }
        for (int b = 0; b < PB; b++) pre[b] = W[net->z2b];
        for (int o = 0; o < Z; o++) {
            const double *w = W + net->z0w + (size_t)o * ZI;
            for (int b = 0; b < PB; b++) acc[b] = 0.0;
            for (int k = 0; k < FO; k++)
                for (int b = 0; b < PB; b++) acc[b] += w[k] * F[k][b];
            const double z2 = W[net->z2w + (size_t)o], c = ctx[o];
            for (int b = 0; b < PB; b++) acc[b] = selu(acc[b] + c);
            for (int b = 0; b < PB; b++) pre[b] += z2 * acc[b];
        }
        for (int b = 0; b < PB; b++) pre[b] = selu(pre[b]);
        for (size_t b = 0; b < nb; b++) out[i0 + b] = pre[b];
    }
}

#if BL_VEC
/* The paper's dimensions (f 3 → 16 → 8, z's hidden layer 8): one v8d holds a unit's value for 8
 * samples, and each layer is a sequence of vector multiply-adds with broadcast weights. One block of
 * 8 samples (features in x0, x1, x2) through one network. */
static BL_ALWAYS_INLINE v8d predict8_block_pre(const bl_bnet *net, const double *ctx, const v8d x0, const v8d x1,
                                               const v8d x2, const int VW) {
    const int ZI = net->z_in;
    const double *restrict W = net->P.param;
    const double *restrict w0 = W + net->f0w, *restrict b0 = W + net->f0b, *restrict w2 = W + net->f2w;
    const double *restrict b2 = W + net->f2b, *restrict wz = W + net->z0w, *restrict z2 = W + net->z2w;
    v8d s0[16], F[8], h[8];
    for (int o = 0; o < 16; o++) s0[o] = x0 * w0[3 * o] + x1 * w0[3 * o + 1] + x2 * w0[3 * o + 2] + b0[o];
    selu_8n(s0, s0, 8, VW); /* two halves: 16 at once spill more than they overlap */
    selu_8n(s0 + 8, s0 + 8, 8, VW);
    for (int o = 0; o < 8; o++) {
        const double *wr = w2 + 16 * o;
        v8d a = s0[0] * wr[0] + b2[o], a2 = s0[1] * wr[1]; /* two chains halve the latency */
        for (int k = 2; k < 16; k += 2) {
            a += s0[k] * wr[k];
            a2 += s0[k + 1] * wr[k + 1];
        }
        F[o] = a + a2;
    }
    selu_8n(F, F, 8, VW);
    for (int o = 0; o < 8; o++) {
        const double *wr = wz + (size_t)o * ZI;
        v8d a = F[0] * wr[0] + ctx[o], a2 = F[1] * wr[1];
        for (int k = 2; k < 8; k += 2) {
            a += F[k] * wr[k];
            a2 += F[k + 1] * wr[k + 1];
        }
        h[o] = a + a2;
    }
    selu_8n(h, h, 8, VW);
    v8d pre = splat_8(W[net->z2b]);
    for (int o = 0; o < 8; o++) pre += h[o] * z2[o];
    return pre;
}
static BL_ALWAYS_INLINE v8d predict8_block(const bl_bnet *net, const double *ctx, const v8d x0, const v8d x1,
                                           const v8d x2, const int VW) {
    const v8d pre = predict8_block_pre(net, ctx, x0, x1, x2, VW);
    return selu_w(&pre, VW);
}

/* The features of block i0 of n samples; a short last block repeats its last sample. */
static BL_ALWAYS_INLINE void feat8(const double *feat, size_t i0, size_t nb, v8d *x0, v8d *x1, v8d *x2) {
    for (size_t b = 0; b < 8; b++) {
        const double *f = feat + 3 * (i0 + (b < nb ? b : nb - 1));
        (*x0)[b] = f[0];
        (*x1)[b] = f[1];
        (*x2)[b] = f[2];
    }
}

static BL_ALWAYS_INLINE void predict8(const bl_bnet *net, const double *ctx, const double *feat, size_t n,
                                      double *out, const int VW) {
    for (size_t i0 = 0; i0 < n; i0 += 8) {
        const size_t nb = n - i0 < 8 ? n - i0 : 8;
        v8d x0, x1, x2;
        feat8(feat, i0, nb, &x0, &x1, &x2);
        const v8d pre = predict8_block(net, ctx, x0, x1, x2, VW);
        if (nb == 8) ST8(out + i0, pre);
        else
            for (size_t b = 0; b < nb; b++) out[i0 + b] = pre[b];
    }
}

/* Sorts K vectors lane by lane (a network of compare-exchanges: lane b of r[0..K) ends ascending).
 * On a 4-wide copy in two halves: GCC turns an 8-wide comparison into scalar code there. */
#define SORT_LANES(VD, VU, r, K)                                                                      for (int i_ = 1; i_ < (K); i_++)                                                                      for (int j_ = i_; j_ > 0; j_--) {                                                                     const VU gt_ = (VU)((r)[j_ - 1] > (r)[j_]);                                                       const VD lo_ = VSEL(VD, VU, gt_, (r)[j_], (r)[j_ - 1]);                                           (r)[j_] = VSEL(VD, VU, gt_, (r)[j_ - 1], (r)[j_]);                                                (r)[j_ - 1] = lo_;                                                                            }
/* r: the members' outputs before their last SELU. SELU is increasing, so sorting the inputs orders
 * the outputs alike, and only the middle one or two need the activation. */
/* nan: lanes where some member is NaN, whose median is NaN (comparisons do not order NaNs, so a sort
 * could bury it and a finite median would hide the broken member). */
static BL_ALWAYS_INLINE v8d median8(v8d *r, const int K, const v8u nan, const int VW) {
    const v8d qnan = splat_8(NAN);
    if (VW == 8) {
        SORT_LANES(v8d, v8u, r, K);
        v8d med;
        if (K % 2) {
            med = selu_w(&r[K / 2], VW);
        } else {
            v8d mid[2] = {r[K / 2 - 1], r[K / 2]};
            selu_8n(mid, mid, 2, VW);
            med = 0.5 * (mid[0] + mid[1]);
        }
        return VSEL(v8d, v8u, nan, qnan, med);
    }
    v4d lo[BL_BNET_MEMBERS_MAX], hi[BL_BNET_MEMBERS_MAX];
    for (int k = 0; k < K; k++) {
        memcpy(&lo[k], &r[k], sizeof lo[k]);
        memcpy(&hi[k], (const char *)&r[k] + sizeof lo[k], sizeof hi[k]);
    }
    SORT_LANES(v4d, v4u, lo, K);
    SORT_LANES(v4d, v4u, hi, K);
    v8d m[2];
    for (int q = 0; q < 2 - K % 2; q++) {
        memcpy(&m[q], &lo[K / 2 - q], sizeof lo[0]);
        memcpy((char *)&m[q] + sizeof lo[0], &hi[K / 2 - q], sizeof hi[0]);
        m[q] = selu_w(&m[q], VW);
    }
    const v8d med = K % 2 ? m[0] : 0.5 * (m[1] + m[0]);
    v8d out;
    for (int b = 0; b < 8; b++) out[b] = nan[b] ? qnan[b] : med[b];
    return out;
}

/* The members' median, block by block: every member's 8 outputs stay in registers until the block's
 * median is taken (no per-member passes over memory, no branches on the values). */
static BL_ALWAYS_INLINE void predict8_median(const bl_bnet *const *nets, int K, const double *ctx,
                                             const double *feat, size_t n, double *out, const int VW) {
    for (size_t i0 = 0; i0 < n; i0 += 8) {
        const size_t nb = n - i0 < 8 ? n - i0 : 8;
        v8d x0, x1, x2, r[BL_BNET_MEMBERS_MAX];
        feat8(feat, i0, nb, &x0, &x1, &x2);
        v8u nan = {0};
        for (int k = 0; k < K; k++) {
            r[k] = predict8_block_pre(nets[k], ctx + 8 * (size_t)k, x0, x1, x2, VW);
            nan |= (v8u)(r[k] != r[k]);
        }
        const v8d med = median8(r, K, nan, VW);
        if (nb == 8) ST8(out + i0, med);
        else
            for (size_t b = 0; b < nb; b++) out[i0 + b] = med[b];
    }
}
#endif

#if BL_VEC
#define PREDICT_FAST(W)                                                                           \
    if (d->f_in == 3 && d->f_hidden == 16 && d->f_out == 8 && d->z_hidden == 8) {                 \
        predict8(net, ctx, feat, n, out, W);                                                      \
        return;                                                                                   \
    }
#else
#define PREDICT_FAST(W)
#endif
#define PREDICT_COPY(NAME, ATTR, WIDTH)                                                           \
    static ATTR void NAME(const bl_bnet *net, const double *ctx, const double *feat, size_t n,     \
                          double *out) {                                                          \
        const bl_bnet_dims *d = &net->d;                                                          \
        PREDICT_FAST(WIDTH)                                                                       \
        predict_impl(net, ctx, feat, n, out, d->f_in, d->f_hidden, d->f_out, d->z_hidden);        \
    }
PREDICT_COPY(predict_base, , 4)
#if BL_MULTIVERSION
PREDICT_COPY(predict_v3, BL_TARGET_V3, 4)
PREDICT_COPY(predict_v4, BL_TARGET_V4, 8)
#endif

/* The members' median for other dimensions or without vector kernels: each member's outputs for a
 * block of 64 samples, then the same compare-exchange network per sample. */
static void predict_median_plain(const bl_bnet *const *nets, int K, const double *ctx, const double *feat,
                                 size_t n, double *out) {
    const int Z = nets[0]->d.z_hidden, FI = nets[0]->d.f_in;
    double all[BL_BNET_MEMBERS_MAX][64];
    for (size_t i0 = 0; i0 < n; i0 += 64) {
        const size_t nb = n - i0 < 64 ? n - i0 : 64;
        for (int k = 0; k < K; k++)
            bl_bnet_predict_scaled(nets[k], ctx + (size_t)k * (size_t)Z, feat + i0 * (size_t)FI, nb, all[k]);
        for (size_t b = 0; b < nb; b++) {
            double r[BL_BNET_MEMBERS_MAX];
            for (int k = 0; k < K; k++) r[k] = all[k][b];
            for (int i = 1; i < K; i++)
                for (int j = i; j > 0; j--) {
                    const double lo = r[j - 1] > r[j] ? r[j] : r[j - 1];
                    r[j] = r[j - 1] > r[j] ? r[j - 1] : r[j];
                    r[j - 1] = lo;
                }
            int nan = 0;
            for (int k = 0; k < K; k++) nan |= r[k] != r[k];
            out[i0 + b] = nan ? NAN : K % 2 ? r[K / 2] : 0.5 * (r[K / 2 - 1] + r[K / 2]);
        }
    }
}

#if BL_VEC
#define MEDIAN_COPY(NAME, ATTR, WIDTH)                                                            \
    static ATTR void NAME(const bl_bnet *const *nets, int K, const double *ctx, const double *feat, \
                          size_t n, double *out) {                                                \
        predict8_median(nets, K, ctx, feat, n, out, WIDTH);                                       \
    }
MEDIAN_COPY(median_base, , 4)
#if BL_MULTIVERSION
MEDIAN_COPY(median_v3, BL_TARGET_V3, 4)
MEDIAN_COPY(median_v4, BL_TARGET_V4, 8)
#endif
#endif

int bl_bnet_predict_median_copy(int copy, const bl_bnet *const *nets, int K, const double *ctx, const double *feat,
                                size_t n, double *out) {
#if BL_VEC
    if (copy == 0) {
        median_base(nets, K, ctx, feat, n, out);
        return 1;
    }
#if BL_MULTIVERSION
    if (copy == 1 && __builtin_cpu_supports("x86-64-v3")) {
        median_v3(nets, K, ctx, feat, n, out);
        return 1;
    }
    if (copy == 2 && __builtin_cpu_supports("x86-64-v4")) {
        median_v4(nets, K, ctx, feat, n, out);
        return 1;
    }
#endif
#endif
    if (copy == 3) {
        predict_median_plain(nets, K, ctx, feat, n, out);
        return 1;
    }
    return 0;
}

void bl_bnet_predict_median(const bl_bnet *const *nets, int K, const double *ctx, const double *feat, size_t n,
                            double *out) {
    if (n == 0 || K < 1) return;
    if (K == 1) {
        bl_bnet_predict_scaled(nets[0], ctx, feat, n, out);
        return;
    }
#if BL_VEC
    int paper = 1;
    for (int k = 0; k < K; k++) {
        const bl_bnet_dims *d = &nets[k]->d;
        paper &= d->f_in == 3 && d->f_hidden == 16 && d->f_out == 8 && d->z_hidden == 8;
    }
    if (paper) {
#if BL_MULTIVERSION
        if (__builtin_cpu_supports("x86-64-v4")) {
            median_v4(nets, K, ctx, feat, n, out);
            return;
        }
        if (__builtin_cpu_supports("x86-64-v3")) {
            median_v3(nets, K, ctx, feat, n, out);
            return;
        }
#endif
        median_base(nets, K, ctx, feat, n, out);
        return;
    }
#endif
    predict_median_plain(nets, K, ctx, feat, n, out);
}

/* bl_bnet_act_eval for one copy: 8 values at a time, a short last block padded with zeros. */
static BL_ALWAYS_INLINE void act_eval_impl(int fn, const double *x, size_t n, double *y, const int VW) {
    for (size_t i0 = 0; i0 < n; i0 += 8) {
        const size_t nb = n - i0 < 8 ? n - i0 : 8;
        double in[8] = {0}, res[8];
        memcpy(in, x + i0, nb * sizeof(double));
#if BL_VEC
        if (fn < 2) {
            const v8d v = ld8(in);
            ST8(res, fn == 0 ? selu_w(&v, VW) : tanh_w(&v, VW));
        } else
#endif
            for (int k = 0; k < 8; k++) res[k] = fn == 0 || fn == 2 ? selu(in[k]) : tanh_fast(in[k]);
        memcpy(y + i0, res, nb * sizeof(double));
    }
}
#define ACT_COPY(NAME, ATTR, WIDTH)                                                               \
    static ATTR void NAME(int fn, const double *x, size_t n, double *y) { act_eval_impl(fn, x, n, y, WIDTH); }
ACT_COPY(act_base, , 4)
#if BL_MULTIVERSION
ACT_COPY(act_v3, BL_TARGET_V3, 4)
ACT_COPY(act_v4, BL_TARGET_V4, 8)
#endif

void bl_bnet_act_eval(int fn, const double *x, size_t n, double *y) {
#if BL_MULTIVERSION
    if (__builtin_cpu_supports("x86-64-v4")) {
        act_v4(fn, x, n, y);
        return;
    }
    if (__builtin_cpu_supports("x86-64-v3")) {
        act_v3(fn, x, n, y);
        return;
    }
#endif
    act_base(fn, x, n, y);
}

void bl_bnet_predict_scaled(const bl_bnet *net, const double *ctx, const double *feat, size_t n, double *out) {
    if (n == 0) return;
#if BL_MULTIVERSION
    if (__builtin_cpu_supports("x86-64-v4")) {
        predict_v4(net, ctx, feat, n, out);
        return;
    }
    if (__builtin_cpu_supports("x86-64-v3")) {
        predict_v3(net, ctx, feat, n, out);
        return;
    }
#endif
    predict_base(net, ctx, feat, n, out);
}
