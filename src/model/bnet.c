/* bnet.c — forward and backward of the Bellamy network over distinct scale-outs and property values.
 *
 * See bnet.h for the structure. All loops are plain C over tiny dimensions (≤ 40): at these sizes a
 * BLAS call costs more than the arithmetic, so the pass is written out by hand and the compiler
 * vectorises the inner loops. The portable engine (src/nn) is the reference this file is checked
 * against in tests/test_model.c (finite differences of the whole joint loss).
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

/* An AVX2 copy of the hot entry points beside the baseline one, chosen at load time. Results are
 * identical: the build uses ISO C (c11), so GCC does not contract a·b + c into FMA. Not under
 * sanitizers, whose instrumentation does not mix with ifunc resolvers. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__)
#define BL_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define BL_CLONES
#endif

#define LAMBDA BL_SELU_LAMBDA
#define LALPHA (BL_SELU_LAMBDA * BL_SELU_ALPHA)

/* eˣ − 1 for x ≤ 0, inlined so the compiler can vectorise SELU loops (libm's expm1 is an opaque
 * call and dominated the profile). x = k·ln2 + r with |r| ≤ ln2/2 (Cody–Waite split of ln2), then
 * expm1(r) by its Taylor series to r¹³ (truncation < 1e-17 relative) and
 * eˣ − 1 = 2ᵏ·expm1(r) + (2ᵏ − 1). Within 2 ulp of libm's expm1; for x < −40 the result is −1 to
 * double precision, so x is clamped there. 2ᵏ is assembled from the rounding constant's low bits. */
static BL_ALWAYS_INLINE double expm1_neg(double x) {
    const double inv_ln2 = 1.44269504088896338700e+00, ln2_hi = 6.93147180369123816490e-01,
                 ln2_lo = 1.90821492927058770002e-10, round = 0x1.8p52;
    x = x < -40.0 ? -40.0 : x;
    double t = x * inv_ln2 + round;
    double kd = t - round;
    double r = (x - kd * ln2_hi) - kd * ln2_lo;
    double p = 1.0 / 6227020800.0;                      /* 1/13! */
    p = p * r + 1.0 / 479001600.0;
    p = p * r + 1.0 / 39916800.0;
    p = p * r + 1.0 / 3628800.0;
    p = p * r + 1.0 / 362880.0;
    p = p * r + 1.0 / 40320.0;
    p = p * r + 1.0 / 5040.0;
    p = p * r + 1.0 / 720.0;
    p = p * r + 1.0 / 120.0;
    p = p * r + 1.0 / 24.0;
    p = p * r + 1.0 / 6.0;
    p = p * r + 0.5;
    p = p * r * r + r;                                  /* expm1(r) */
    uint64_t bits;
    memcpy(&bits, &t, sizeof bits);
    bits = (bits << 52) + ((uint64_t)1023 << 52);       /* 2^k, k = low bits of t */
    double two_k;
    memcpy(&two_k, &bits, sizeof two_k);
    return two_k * p + (two_k - 1.0);
}

/* tanh through the same expm1: t = e^(−2|x|) − 1, tanh|x| = −t / (t + 2); vectorisable, ≤ 3 ulp. */
static BL_ALWAYS_INLINE double tanh_fast(double x) {
    double ax = x < 0.0 ? -x : x;
    double t = expm1_neg(-2.0 * ax);
    double y = -t / (t + 2.0);
    return x < 0.0 ? -y : y;
}

/* Branch-free so loops over units vectorise. */
static BL_ALWAYS_INLINE double selu(double x) {
    double neg = LALPHA * expm1_neg(x < 0.0 ? x : 0.0);
    return x > 0.0 ? LAMBDA * x : neg;
}
/* d selu / dx from the input x and output y (left derivative at 0, as PyTorch). */
static BL_ALWAYS_INLINE double selu_d(double x, double y) { return x > 0.0 ? LAMBDA : y + LALPHA; }

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

/* Per distinct scale-out: a0[FH] s0[FH] a2[FO] F[FO] A[Z] dA[Z] dF[FO] */
/* Per distinct value:   a1[H] s1[H] d1[H] a2[C] c[C] b1[H] t1[H] e1[H] r[V] P[Z] dP[Z] dc[C] (+ masks) */
struct bl_bwork {
    size_t max_batch, n_props;
    int32_t *sx_slot;              /* [n_sx] → slot or -1 */
    uint32_t *sx_list;             /* [min(n_sx, B)] */
    double *sx_rec;                /* [slots][sx_stride] */
    size_t sx_stride, sx_cap;
    int32_t **val_slot;            /* [p] → [n_vals[p]] */
    uint32_t **val_list;           /* [p] → [cap_p] */
    double **val_rec;              /* [p] → [cap_p][val_stride] */
    uint8_t **val_mask;            /* [p] → [cap_p][2H] */
    uint32_t **val_first;          /* [p] → [cap_p] slot of the first row with the same value */
    double **val_w;                /* [p] → [cap_p] rows using the value in this batch */
    size_t *val_cap;
    size_t val_stride;
    double *row;                   /* [B][row_stride]: u[Z] h[Z] pre out dout */
    double *WT;                    /* [P.n] every weight block transposed, refreshed each pass */
    uint32_t *row_slot;            /* [B][n_props] value slot of each row of the batch */
    size_t row_stride;
    void *block;                   /* everything above lives in one allocation */
};

void bl_bwork_free(bl_bwork *w) {
    if (!w) return;
    free(w->block);
    free(w);
}

/* Carves n bytes (8-aligned) from *cur. */
static void *carve(unsigned char **cur, size_t n) {
    void *p = *cur;
    *cur += (n + 7) & ~(size_t)7;
    return p;
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
    const size_t H = (size_t)d->ae_hidden, C = (size_t)d->code, V = (size_t)d->vec_len, Z = (size_t)d->z_hidden;
    bl_bwork *w = calloc(1, sizeof *w);
    if (!w) return bl_seterr(err, BL_ENOMEM, "out of memory for a training workspace");
    w->max_batch = max_batch;
    w->n_props = np;
    w->sx_stride = 2 * (size_t)d->f_hidden + 3 * (size_t)d->f_out + 2 * Z;
    w->sx_cap = v->n_sx < max_batch ? v->n_sx : max_batch;
    w->val_stride = 7 * H + 5 * C + V + 2 * Z; /* + d a1 accumulator [H], clean code [2C] */
    w->row_stride = 2 * Z + 3;

    /* size everything, then allocate once */
    size_t total = 0, s;
#define ADD(bytes)                                                                         \
    do {                                                                                   \
        size_t b_ = (bytes);                                                               \
        if (b_ > SIZE_MAX / 2 || bl_add_size(total, (b_ + 7) & ~(size_t)7, &total)) goto ovf; \
    } while (0)
    ADD(v->n_sx * sizeof(int32_t));
    ADD(w->sx_cap * sizeof(uint32_t));
    if (bl_mul_size(w->sx_cap, w->sx_stride * sizeof(double), &s)) goto ovf;
    ADD(s);
    ADD(np * (sizeof(int32_t *) + 2 * sizeof(uint32_t *) + sizeof(double *) * 2 + sizeof(uint8_t *) + sizeof(size_t)));
    for (size_t p = 0; p < np; p++) {
        size_t cap = max_batch; /* per-row dropout gives every row its own slot */
        ADD(v->n_vals[p] * sizeof(int32_t));
        ADD(cap * sizeof(uint32_t));
        if (bl_mul_size(cap, w->val_stride * sizeof(double), &s)) goto ovf;
        ADD(s);
        ADD(cap * 2 * H);
        ADD(cap * sizeof(double));
        ADD(cap * sizeof(uint32_t));
    }
    if (bl_mul_size(max_batch, w->row_stride * sizeof(double), &s)) goto ovf;
    ADD(s);
    ADD(net->P.n * sizeof(double));
    if (bl_mul_size(max_batch, (np ? np : 1) * sizeof(uint32_t), &s)) goto ovf;
    ADD(s);
#undef ADD
    w->block = calloc(1, total);
    if (!w->block) {
        free(w);
        return bl_seterr(err, BL_ENOMEM, "out of memory for a training workspace (%zu bytes)", total);
    }
    unsigned char *cur = w->block;
    w->sx_slot = carve(&cur, v->n_sx * sizeof(int32_t));
    w->sx_list = carve(&cur, w->sx_cap * sizeof(uint32_t));
    w->sx_rec = carve(&cur, w->sx_cap * w->sx_stride * sizeof(double));
    w->val_slot = carve(&cur, np * sizeof(int32_t *));
    w->val_list = carve(&cur, np * sizeof(uint32_t *));
    w->val_rec = carve(&cur, np * sizeof(double *));
    w->val_w = carve(&cur, np * sizeof(double *));
    w->val_mask = carve(&cur, np * sizeof(uint8_t *));
    w->val_cap = carve(&cur, np * sizeof(size_t));
    w->val_first = carve(&cur, np * sizeof(uint32_t *));
    for (size_t p = 0; p < np; p++) {
        size_t cap = max_batch;
        w->val_cap[p] = cap;
        w->val_slot[p] = carve(&cur, v->n_vals[p] * sizeof(int32_t));
        w->val_list[p] = carve(&cur, cap * sizeof(uint32_t));
        w->val_rec[p] = carve(&cur, cap * w->val_stride * sizeof(double));
        w->val_mask[p] = carve(&cur, cap * 2 * H);
        w->val_w[p] = carve(&cur, cap * sizeof(double));
        w->val_first[p] = carve(&cur, cap * sizeof(uint32_t));
        for (size_t i = 0; i < v->n_vals[p]; i++) w->val_slot[p][i] = -1;
    }
    w->row = carve(&cur, max_batch * w->row_stride * sizeof(double));
    w->WT = carve(&cur, net->P.n * sizeof(double));
    w->row_slot = carve(&cur, max_batch * (np ? np : 1) * sizeof(uint32_t));
    for (size_t i = 0; i < v->n_sx; i++) w->sx_slot[i] = -1;
    *out = w;
    return BL_OK;
ovf:
    free(w);
    return bl_seterr(err, BL_ERANGE, "training workspace size overflows");
}

/* ---- the pass -------------------------------------------------------------------------------- */

/* Encoder then (optionally) decoder of one vector x; rec is a value record (layout above). */
static BL_ALWAYS_INLINE void ae_forward(const bl_bnet *net, const double *WT, const double *x, double *rec,
                                         const double *first_layer, double *clean, uint8_t *mask, int decode,
                                         int training, double p, double da, double db, bl_rng *rng, const int H,
                                         const int C, const int V) {
    double *a1 = rec, *s1 = a1 + H, *d1 = s1 + H, *a2 = d1 + H, *c = a2 + C;
    double *b1 = c + C, *t1 = b1 + H, *e1 = t1 + H, *r = e1 + H;
    if (first_layer) { /* the same value's a1 and s1, computed for an earlier row of the batch */
        memcpy(a1, first_layer, 2 * (size_t)H * sizeof(double));
    } else {
        mvt(WT + net->g0w, H, H, V, x, a1);
        for (int i = 0; i < H; i++) s1[i] = selu(a1[i]);
    }
    if (training && p > 0.0) {
        for (int i = 0; i < H; i++) {
            mask[i] = bl_rng_uniform(rng) >= p;
            d1[i] = (mask[i] ? s1[i] : BL_SELU_ALPHA_PRIME) * da + db;
        }
    } else {
        memcpy(d1, s1, (size_t)H * sizeof(double));
        memset(mask, 1, (size_t)H);
    }
    mvt(WT + net->g3w, C, C, H, d1, a2);
    for (int i = 0; i < C; i++) c[i] = selu(a2[i]);
    if (!decode) return;
    const double *code = c;
    if (clean) { /* the decoder reads the value's code without encoder dropout: clean = [a2c, cc] */
        mvt(WT + net->g3w, C, C, H, s1, clean);
        for (int i = 0; i < C; i++) clean[C + i] = selu(clean[i]);
        code = clean + C;
    }
    mvt(WT + net->h0w, H, H, C, code, b1);
    for (int i = 0; i < H; i++) t1[i] = selu(b1[i]);
    uint8_t *m2 = mask + H;
    if (training && p > 0.0) {
        for (int i = 0; i < H; i++) {
            m2[i] = bl_rng_uniform(rng) >= p;
            e1[i] = (m2[i] ? t1[i] : BL_SELU_ALPHA_PRIME) * da + db;
        }
    } else {
        memcpy(e1, t1, (size_t)H * sizeof(double));
        memset(m2, 1, (size_t)H);
    }
    mvt(WT + net->h3w, V, V, H, e1, r);
    for (int i = 0; i < V; i++) r[i] = tanh_fast(r[i]);
}

/* Backward of the auto-encoder for one vector: drec = d loss / d r (weighted), dc = d loss / d code
 * from z. Adds into the g and h gradients (those not frozen). */
static BL_ALWAYS_INLINE void ae_backward(bl_bnet *net, const double *x, const double *rec, const uint8_t *mask,
                                          int decode, double rec_scale, double *dc, int training, double p,
                                          double da, int grad_g, int grad_h, double *da1_acc, const double *clean,
                                          const int H, const int C, const int V) {
    const double *W = net->P.param;
    double *G = net->P.grad;
    const double *a1 = rec, *s1 = a1 + H, *d1 = s1 + H, *a2 = d1 + H, *c = a2 + C;
    const double *b1 = c + C, *t1 = b1 + H, *e1 = t1 + H, *r = e1 + H;
    const int drop = training && p > 0.0;
    double dcode[BL_BNET_DIM_MAX], tmp[BL_BNET_DIM_MAX], tmp2[BL_BNET_DIM_MAX], dr[BL_BNET_DIM_MAX];
    double dclean[BL_BNET_DIM_MAX];
    memcpy(dcode, dc, (size_t)C * sizeof(double));
    memset(dclean, 0, (size_t)C * sizeof(double));
    const double *code = clean ? clean + C : c;      /* what the decoder read */
    double *dcode_dec = clean ? dclean : dcode;      /* where its gradient goes */
    if (decode && rec_scale != 0.0) {
        /* r = tanh(b2): d b2 = dr (1 − r²), dr = rec_scale · 2 (r − x) */
        for (int i = 0; i < V; i++) dr[i] = rec_scale * 2.0 * (r[i] - x[i]) * (1.0 - r[i] * r[i]);
        if (grad_h) outer_add(G + net->h3w, H, V, H, dr, e1, 1.0);
        memset(tmp, 0, (size_t)H * sizeof(double));
        mtv_add(W + net->h3w, H, V, H, dr, tmp);                 /* d e1 */
        const uint8_t *m2 = mask + H;
        for (int i = 0; i < H; i++) {
            double de = drop ? (m2[i] ? da * tmp[i] : 0.0) : tmp[i];
            tmp2[i] = de * selu_d(b1[i], t1[i]);                  /* d b1 */
        }
        if (grad_h) outer_add(G + net->h0w, C, H, C, tmp2, code, 1.0);
        mtv_add(W + net->h0w, C, H, C, tmp2, dcode_dec);          /* d code += H0ᵀ d b1 */
    }
    if (!grad_g) return;
    for (int i = 0; i < C; i++) dcode[i] *= selu_d(a2[i], c[i]);  /* d a2 */
    outer_add(G + net->g3w, H, C, H, dcode, d1, 1.0);
    memset(tmp, 0, (size_t)H * sizeof(double));
    mtv_add(W + net->g3w, H, C, H, dcode, tmp);                   /* d d1 */
    for (int i = 0; i < H; i++) {
        double ds = drop ? (mask[i] ? da * tmp[i] : 0.0) : tmp[i];
        da1_acc[i] += ds * selu_d(a1[i], s1[i]);                  /* d a1, summed over rows of the value */
    }
    if (clean && decode && rec_scale != 0.0) {                    /* the clean path: cc = selu(G3·s1) */
        for (int i = 0; i < C; i++) dclean[i] *= selu_d(clean[i], clean[C + i]);
        outer_add(G + net->g3w, H, C, H, dclean, s1, 1.0);
        memset(tmp, 0, (size_t)H * sizeof(double));
        mtv_add(W + net->g3w, H, C, H, dclean, tmp);
        for (int i = 0; i < H; i++) da1_acc[i] += tmp[i] * selu_d(a1[i], s1[i]);
    }
}

static int view_frozen(const bl_params *P, size_t off) {
    for (int i = 0; i < P->n_views; i++)
        if (P->views[i].offset == off) return P->views[i].frozen;
    return 0;
}

static BL_ALWAYS_INLINE bl_status pass_impl(bl_bnet *net, const bl_bview *v, const size_t *rows, size_t B,
                                            const bl_bpass *pass, bl_bwork *w, double *pred, bl_bloss *loss,
                                            bl_error *err, const int FI, const int FH, const int FO,
                                            const int H, const int C, const int V, const int Z) {
    const bl_bnet_dims *d = &net->d;
    const int ZI = net->z_in, NE = d->n_ess, NO = d->n_opt;
    const int NP = NE + NO;
    const double *W = net->P.param;
    double *G = net->P.grad;
    double da = 1.0, db = 0.0;
    if (pass->training && pass->dropout > 0.0) {
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
                if (pass->per_row_dropout == 2) { /* one reconstruction per value, weighted by its rows */
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

    /* 2. f and z's scale-out term per distinct scale-out: A = Wz[:, 0:FO]·F + bz */
    for (size_t i = 0; i < n_sx; i++) {
        double *r = w->sx_rec + i * w->sx_stride;
        double *a0 = r, *s0 = a0 + FH, *a2 = s0 + FH, *F = a2 + FO, *A = F + FO;
        const double *x = v->sx_feat + (size_t)w->sx_list[i] * (size_t)FI;
        mvt(WT + net->f0w, FH, FH, FI, x, a0);
        for (int k = 0; k < FH; k++) {
            a0[k] += W[net->f0b + (size_t)k];
            s0[k] = selu(a0[k]);
        }
        mvt(WT + net->f2w, FO, FO, FH, s0, a2);
        for (int k = 0; k < FO; k++) { a2[k] += W[net->f2b + (size_t)k]; F[k] = selu(a2[k]); }
        mvt(WT + net->z0w, Z, Z, FO, F, A);
        for (int k = 0; k < Z; k++) A[k] += W[net->z0b + (size_t)k];
        memset(A + Z, 0, (size_t)(Z + FO) * sizeof(double)); /* dA, dF */
    }

    /* 3. auto-encoder and z's property terms per distinct value */
    double rec_loss_e = 0.0, rec_loss_o = 0.0;
    for (int p = 0; p < NP; p++) {
        const int opt = p >= NE;
        const int col = opt ? FO + C * NE : FO + C * p;
        const double scale = opt ? 1.0 / NO : 1.0;
        for (size_t i = 0; i < n_val[p]; i++) {
            double *rec = w->val_rec[p] + i * w->val_stride;
            uint8_t *mask = w->val_mask[p] + i * 2 * (size_t)H;
            const double *x = v->vecs[p] + (size_t)w->val_list[p][i] * (size_t)V;
            const uint32_t first = w->val_first[p][i];
            const double *shared = first != i ? w->val_rec[p] + (size_t)first * w->val_stride : NULL;
            const int hybrid = pass->per_row_dropout == 2;
            double *clean = hybrid ? rec + 7 * H + 3 * C + V + 2 * Z : NULL;
            const int dec = decode && (!hybrid || first == i);
            ae_forward(net, WT, x, rec, shared, clean, mask, dec, pass->training, pass->dropout, da, db, pass->rng,
                       H, C, V);
            memset(rec + 6 * H + 3 * C + V + 2 * Z, 0, (size_t)H * sizeof(double)); /* d a1 accumulator */
            const double *c = rec + 3 * H + C;
            const double *r = rec + 3 * H + 2 * C + 3 * H;
            double *P = rec + 6 * H + 2 * C + V;      /* after r: P[Z] dP[Z] dc[C] */
            mvt(WT + net->z0w + (size_t)col * Z, Z, Z, C, c, P);
            for (int k = 0; k < Z; k++) P[k] *= scale;
            memset(P + Z, 0, (size_t)(Z + C) * sizeof(double));
            if (dec) {
                double e2 = 0.0;
                for (int k = 0; k < V; k++) { double t = r[k] - x[k]; e2 += t * t; }
                if (opt) rec_loss_o += w->val_w[p][i] * e2;
                else rec_loss_e += w->val_w[p][i] * e2;
            }
        }
    }

    /* 4. per row: u = A + Σ P, h = selu(u), out = selu(z2·h + b2) */
    double rt_loss = 0.0, abs_err = 0.0;
    const double *z2 = W + net->z2w;
    const double inv_b = 1.0 / (double)B;
    for (size_t b = 0; b < B; b++) {
        size_t row = rows[b];
        double *rr = w->row + b * w->row_stride, *u = rr, *h = u + Z;
        const double *A = w->sx_rec + (size_t)w->sx_slot[v->sx[row]] * w->sx_stride + 2 * FH + 2 * FO;
        memcpy(u, A, (size_t)Z * sizeof(double));
        for (int p = 0; p < NP; p++) {
            const double *P = w->val_rec[p] + (size_t)w->row_slot[b * (size_t)NP + (size_t)p] * w->val_stride + 6 * H + 2 * C + V;
            for (int k = 0; k < Z; k++) u[k] += P[k];
        }
        double pre = W[net->z2b];
        for (int k = 0; k < Z; k++) { h[k] = selu(u[k]); pre += z2[k] * h[k]; }
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
    const double rec_e = NE > 0 ? rec_loss_e / ((double)B * NE * V) : 0.0;
    const double rec_o = NO > 0 ? rec_loss_o / ((double)B * NO * V) : 0.0;
    loss->runtime = rt_loss;
    loss->recon = decode ? rec_e + rec_o : 0.0;
    loss->total = loss->runtime + loss->recon;
    loss->abs_err = abs_err;

    if (grad) {
        /* 5. backward through z per row, accumulating into the distinct terms */
        double *gz2 = G + net->z2w;
        double du[BL_BNET_DIM_MAX];
        for (size_t b = 0; b < B; b++) {
            size_t row = rows[b];
            double *rr = w->row + b * w->row_stride, *u = rr, *h = u + Z;
            double dpre = rr[2 * Z + 2] * selu_d(rr[2 * Z], rr[2 * Z + 1]);
            if (grad_z) G[net->z2b] += dpre;
            for (int k = 0; k < Z; k++) {
                if (grad_z) gz2[k] += dpre * h[k];
                du[k] = dpre * z2[k] * selu_d(u[k], h[k]);
            }
            double *dA = w->sx_rec + (size_t)w->sx_slot[v->sx[row]] * w->sx_stride + 2 * FH + 2 * FO + Z;
            for (int k = 0; k < Z; k++) dA[k] += du[k];
            for (int p = 0; p < NP; p++) {
                double *dP = w->val_rec[p] + (size_t)w->row_slot[b * (size_t)NP + (size_t)p] * w->val_stride + 6 * H + 2 * C + V + Z;
                for (int k = 0; k < Z; k++) dP[k] += du[k];
            }
        }
        /* 6. scale-out terms: z0 bias and f-block, then f */
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
        /* 7. property terms: z0 blocks, then the auto-encoder */
        for (int p = 0; p < NP; p++) {
            const int opt = p >= NE;
            const int col = opt ? FO + C * NE : FO + C * p;
            const double scale = opt ? 1.0 / NO : 1.0;
            const double rs = opt ? 1.0 / ((double)B * NO * V) : 1.0 / ((double)B * NE * V);
            for (size_t i = 0; i < n_val[p]; i++) {
                double *rec = w->val_rec[p] + i * w->val_stride;
                const double *c = rec + 3 * H + C;
                double *dP = rec + 6 * H + 2 * C + V + Z, *dc = dP + Z;
                if (grad_z) outer_add(G + net->z0w + col, ZI, Z, C, dP, c, scale);
                if (!grad_g && !grad_h) continue;
                mtv_add(W + net->z0w + col, ZI, Z, C, dP, dc);
                for (int k = 0; k < C; k++) dc[k] *= scale;
                const double *x = v->vecs[p] + (size_t)w->val_list[p][i] * (size_t)V;
                double *acc = w->val_rec[p] + (size_t)w->val_first[p][i] * w->val_stride + 6 * H + 3 * C + V + 2 * Z;
                const int hybrid = pass->per_row_dropout == 2;
                const int dec = decode && (!hybrid || w->val_first[p][i] == i);
                ae_backward(net, x, rec, w->val_mask[p] + i * 2 * (size_t)H, dec,
                            dec ? rs * w->val_w[p][i] : 0.0, dc, pass->training, pass->dropout, da,
                            grad_g, grad_h, acc, hybrid ? rec + 7 * H + 3 * C + V + 2 * Z : NULL, H, C, V);
            }
            /* the encoder's first layer: one outer product per distinct value */
            if (grad_g)
                for (size_t i = 0; i < n_val[p]; i++) {
                    if (w->val_first[p][i] != i) continue;
                    const double *acc = w->val_rec[p] + i * w->val_stride + 6 * H + 3 * C + V + 2 * Z;
                    outer_add(G + net->g0w, V, H, V, acc, v->vecs[p] + (size_t)w->val_list[p][i] * (size_t)V, 1.0);
                }
        }
    }

    /* 8. reset the slot maps for the next batch */
    for (size_t i = 0; i < n_sx; i++) w->sx_slot[w->sx_list[i]] = -1;
    for (int p = 0; p < NP; p++)
        for (size_t i = 0; i < n_val[p]; i++) w->val_slot[p][w->val_list[p][i]] = -1;
    return BL_OK;
}

/* The cloned functions are static: an exported ifunc would escape -fvisibility=hidden. */
static BL_CLONES bl_status pass_dispatch(bl_bnet *net, const bl_bview *v, const size_t *rows, size_t B,
                                         const bl_bpass *pass, bl_bwork *w, double *pred, bl_bloss *loss,
                                         bl_error *err);

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

static BL_CLONES bl_status pass_dispatch(bl_bnet *net, const bl_bview *v, const size_t *rows, size_t B,
                                         const bl_bpass *pass, bl_bwork *w, double *pred, bl_bloss *loss,
                                         bl_error *err) {
    const bl_bnet_dims *d = &net->d;
    /* The paper's dimensions get a copy of the pass with constant sizes, which the compiler unrolls
     * and vectorises; any other dimensions run the same code with sizes from the network. */
    if (d->f_in == 3 && d->f_hidden == 16 && d->f_out == 8 && d->ae_hidden == 8 && d->code == 4 &&
        d->vec_len == 40 && d->z_hidden == 8)
        return pass_impl(net, v, rows, B, pass, w, pred, loss, err, 3, 16, 8, 8, 4, 40, 8);
    return pass_impl(net, v, rows, B, pass, w, pred, loss, err, d->f_in, d->f_hidden, d->f_out, d->ae_hidden,
                     d->code, d->vec_len, d->z_hidden);
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
    double x[BL_BNET_DIM_MAX][PB], s0[BL_BNET_DIM_MAX][PB], F[BL_BNET_DIM_MAX][PB], pre[PB];
    for (size_t i0 = 0; i0 < n; i0 += PB) {
        const size_t nb = n - i0 < PB ? n - i0 : PB;
        for (int k = 0; k < FI; k++)
            for (size_t b = 0; b < PB; b++) x[k][b] = b < nb ? feat[(i0 + b) * (size_t)FI + (size_t)k] : 0.0;
        for (int o = 0; o < FH; o++) {
            const double *w = W + net->f0w + (size_t)o * FI;
            double acc[PB] = {0};
            for (int k = 0; k < FI; k++)
                for (int b = 0; b < PB; b++) acc[b] += w[k] * x[k][b];
            const double bias = W[net->f0b + (size_t)o];
            for (int b = 0; b < PB; b++) s0[o][b] = selu(acc[b] + bias);
        }
        for (int o = 0; o < FO; o++) {
            const double *w = W + net->f2w + (size_t)o * FH;
            double acc[PB] = {0};
            for (int k = 0; k < FH; k++)
                for (int b = 0; b < PB; b++) acc[b] += w[k] * s0[k][b];
            const double bias = W[net->f2b + (size_t)o];
            for (int b = 0; b < PB; b++) F[o][b] = selu(acc[b] + bias);
        }
        for (int b = 0; b < PB; b++) pre[b] = W[net->z2b];
        for (int o = 0; o < Z; o++) {
            const double *w = W + net->z0w + (size_t)o * ZI;
            double acc[PB] = {0};
            for (int k = 0; k < FO; k++)
                for (int b = 0; b < PB; b++) acc[b] += w[k] * F[k][b];
            const double z2 = W[net->z2w + (size_t)o], c = ctx[o];
            for (int b = 0; b < PB; b++) pre[b] += z2 * selu(acc[b] + c);
        }
        for (size_t b = 0; b < nb; b++) out[i0 + b] = selu(pre[b]);
    }
}

static BL_CLONES void predict_dispatch(const bl_bnet *net, const double *ctx, const double *feat, size_t n,
                                        double *out) {
    const bl_bnet_dims *d = &net->d;
    if (d->f_in == 3 && d->f_hidden == 16 && d->f_out == 8 && d->z_hidden == 8)
        predict_impl(net, ctx, feat, n, out, 3, 16, 8, 8);
    else
        predict_impl(net, ctx, feat, n, out, d->f_in, d->f_hidden, d->f_out, d->z_hidden);
}

void bl_bnet_predict_scaled(const bl_bnet *net, const double *ctx, const double *feat, size_t n, double *out) {
    predict_dispatch(net, ctx, feat, n, out);
}
