/* kern/predict.c — predictions of one network and the median of an ensemble's, and the activations as
 * the kernels evaluate them (bpass.h, kernels.h), compiled once per copy (isa.h).
 *
 * A prediction is f (scale-out features → f_out units, context-free) and then z (f's units plus the
 * context term → runtime). Every entry computes f exactly as f_forward does and z exactly alike, so a
 * prediction from stored f outputs equals, bit for bit, one from the features.
 * The vector copies run the paper's dimensions (f 3 → 16 → 8, z's hidden layer 8) with one native
 * vector holding a unit's value for VL samples; other dimensions run the plain loops.
 * The float32 copies (BL_F32) read the same double inputs, round the weights they use to float (per
 * call: a few hundred values per network, so a network never holds a stale float copy) and compute in
 * float; their outputs are doubles again.
 * Not here: features and scaling (encode/), members' context terms (model/).
 */
#define BL_KERN_WIDE 1 /* samples across the lanes: the float32 AVX-512 copy takes 16 (isa.h) */
#include "nn/kern/vmath.h"

#include <math.h>
#include <string.h>

#include "nn/kernels.h"

/* ---- plain loops, any dimensions ---- */

/* f of one sample: F [f_out] from x [f_in]; sums in index order, then the bias. */
static BL_INLINE void f_one(const bl_bnet *net, const double *x, real *F) {
    const bl_bnet_dims *d = &net->d;
    const double *W = net->P.param;
    real s0[BL_BNET_DIM_MAX];
    for (int o = 0; o < d->f_hidden; o++) {
        const double *w = W + net->f0w + (size_t)o * (size_t)d->f_in;
        real acc = 0.0;
        for (int k = 0; k < d->f_in; k++) acc += (real)w[k] * (real)x[k];
        s0[o] = k_selu(acc + (real)W[net->f0b + (size_t)o]);
    }
    for (int o = 0; o < d->f_out; o++) {
        const double *w = W + net->f2w + (size_t)o * (size_t)d->f_hidden;
        real acc = 0.0;
        for (int k = 0; k < d->f_hidden; k++) acc += (real)w[k] * s0[k];
        F[o] = k_selu(acc + (real)W[net->f2b + (size_t)o]);
    }
}

/* z's output layer input (before its SELU) of one sample from F [f_out] and the context term. */
static BL_INLINE real z_pre_one(const bl_bnet *net, const double *ctx, const real *F) {
    const bl_bnet_dims *d = &net->d;
    const double *W = net->P.param;
    real pre = (real)W[net->z2b];
    for (int o = 0; o < d->z_hidden; o++) {
        const double *w = W + net->z0w + (size_t)o * (size_t)net->z_in;
        real acc = 0.0;
        for (int k = 0; k < d->f_out; k++) acc += (real)w[k] * F[k];
        pre += (real)W[net->z2w + (size_t)o] * k_selu(acc + (real)ctx[o]);
    }
    return pre;
}

/* The median of r[0..K) (already NaN-checked by the caller): sorted by a compare-exchange network. */
static BL_INLINE real median_sel(real *r, int K) {
    for (int i = 1; i < K; i++)
        for (int j = i; j > 0; j--) {
            const real lo = r[j - 1] > r[j] ? r[j] : r[j - 1];
            r[j] = r[j - 1] > r[j] ? r[j - 1] : r[j];
            r[j - 1] = lo;
        }
    return K % 2 ? k_selu(r[K / 2]) : (real)0.5 * (k_selu(r[K / 2 - 1]) + k_selu(r[K / 2]));
}

static void f_forward_plain(const bl_bnet *net, const double *feat, size_t n, double *F) {
    const size_t FI = (size_t)net->d.f_in, FO = (size_t)net->d.f_out;
    real Fi[BL_BNET_DIM_MAX];
    for (size_t i = 0; i < n; i++) {
        f_one(net, feat + i * FI, Fi);
        for (size_t o = 0; o < FO; o++) F[i * FO + o] = Fi[o];
    }
}

static void predict_plain(const bl_bnet *net, const double *ctx, const double *feat, size_t n, double *out) {
    real F[BL_BNET_DIM_MAX];
    for (size_t i = 0; i < n; i++) {
        f_one(net, feat + i * (size_t)net->d.f_in, F);
        out[i] = k_selu(z_pre_one(net, ctx, F));
    }
}

/* F: per member [n][f_out], or NULL to compute f from feat. */
static void median_plain(const bl_bnet *const *nets, int K, const double *ctx, const double *feat,
                         const double *const *F, size_t n, double *out) {
    const size_t Z = (size_t)nets[0]->d.z_hidden;
    for (size_t i = 0; i < n; i++) {
        real r[BL_BNET_MEMBERS_MAX], Fi[BL_BNET_DIM_MAX];
        int nan = 0;
        for (int k = 0; k < K; k++) {
            const size_t FO = (size_t)nets[k]->d.f_out;
            const real *f = Fi;
            if (!F) f_one(nets[k], feat + i * (size_t)nets[k]->d.f_in, Fi);
#if BL_F32
            else for (size_t o = 0; o < FO; o++) Fi[o] = (real)F[k][i * FO + o];
#else
            else f = F[k] + i * FO;
#endif
            r[k] = z_pre_one(nets[k], ctx + (size_t)k * Z, f);
            nan |= r[k] != r[k];
        }
        out[i] = nan ? NAN : median_sel(r, K);
    }
}

#if BL_ISA == 0
static void act_plain(int fn, const double *x, size_t n, double *y) {
    for (size_t i = 0; i < n; i++) y[i] = fn == 0 ? k_selu((real)x[i]) : k_tanh((real)x[i]);
}
#endif

#if BL_ISA > 0
/* ---- the paper's dimensions on native vectors: blocks of VL samples ---- */

static BL_INLINE int fast_dims(const bl_bnet_dims *d) {
    return d->f_in == 3 && d->f_hidden == 16 && d->f_out == 8 && d->z_hidden == 8;
}

/* The weights a prediction reads, in this copy's precision: pointers into the parameters (float64),
 * or a float copy made per call (float32; z's first block compacted to stride 8). */
typedef struct pw {
    const real *f0w, *f0b, *f2w, *f2b, *z0w, *z2w;
    real z2b;
    int ZI;                        /* row stride of z0w */
#if BL_F32
    real s_f0w[48], s_f0b[16], s_f2w[128], s_f2b[8], s_z0w[64], s_z2w[8];
#endif
} pw;

static BL_INLINE void pw_make(const bl_bnet *net, pw *q) {
    const double *W = net->P.param;
#if BL_F32
    for (int i = 0; i < 48; i++) q->s_f0w[i] = (real)W[net->f0w + (size_t)i];
    for (int i = 0; i < 16; i++) q->s_f0b[i] = (real)W[net->f0b + (size_t)i];
    for (int i = 0; i < 128; i++) q->s_f2w[i] = (real)W[net->f2w + (size_t)i];
    for (int i = 0; i < 8; i++) q->s_f2b[i] = (real)W[net->f2b + (size_t)i];
    for (int o = 0; o < 8; o++)
        for (int k = 0; k < 8; k++) q->s_z0w[8 * o + k] = (real)W[net->z0w + (size_t)o * (size_t)net->z_in + (size_t)k];
    for (int i = 0; i < 8; i++) q->s_z2w[i] = (real)W[net->z2w + (size_t)i];
    q->f0w = q->s_f0w; q->f0b = q->s_f0b; q->f2w = q->s_f2w; q->f2b = q->s_f2b;
    q->z0w = q->s_z0w; q->z2w = q->s_z2w;
    q->ZI = 8;
#else
    q->f0w = W + net->f0w; q->f0b = W + net->f0b; q->f2w = W + net->f2w; q->f2b = W + net->f2b;
    q->z0w = W + net->z0w; q->z2w = W + net->z2w;
    q->ZI = net->z_in;
#endif
    q->z2b = (real)W[net->z2b];
}

/* f of one block: F[8] from the features' three vectors. */
static BL_INLINE void vf_block(const pw *q, vd x0, vd x1, vd x2, vd *F) {
    const real *restrict w0 = q->f0w, *restrict b0 = q->f0b, *restrict w2 = q->f2w;
    const real *restrict b2 = q->f2b;
    vd s0[16];
    for (int o = 0; o < 16; o++) s0[o] = x0 * w0[3 * o] + x1 * w0[3 * o + 1] + x2 * w0[3 * o + 2] + b0[o];
    v_selu(s0, s0, 8); /* two halves: 16 at once spill more than they overlap */
    v_selu(s0 + 8, s0 + 8, 8);
    for (int o = 0; o < 8; o++) {
        const real *wr = w2 + 16 * o;
        vd a = s0[0] * wr[0] + b2[o], a2 = s0[1] * wr[1]; /* two chains halve the latency */
        for (int k = 2; k < 16; k += 2) {
            a = s0[k] * wr[k] + a;
            a2 = s0[k + 1] * wr[k + 1] + a2;
        }
        F[o] = a + a2;
    }
    v_selu(F, F, 8);
}

/* z's output-layer input of one block from F[8]. */
static BL_INLINE vd vz_block(const pw *q, const double *ctx, const vd *F) {
    const int ZI = q->ZI;
    const real *restrict wz = q->z0w, *restrict z2 = q->z2w;
    vd h[8];
    for (int o = 0; o < 8; o++) {
        const real *wr = wz + (size_t)o * ZI;
        vd a = F[0] * wr[0] + (real)ctx[o], a2 = F[1] * wr[1];
        for (int k = 2; k < 8; k += 2) {
            a = F[k] * wr[k] + a;
            a2 = F[k + 1] * wr[k + 1] + a2;
        }
        h[o] = a + a2;
    }
    v_selu(h, h, 8);
    vd pre = vd_set1(q->z2b);
    for (int o = 0; o < 8; o++) pre = h[o] * z2[o] + pre;
    return pre;
}

/* Lane b of a vector from p[b·stride], built in registers (scalar stores read back as a vector would
 * stall store forwarding). */
#if VL == 16
#define VGATHER(p, st) ((vd){(p)[0], (p)[(st)], (p)[2 * (st)], (p)[3 * (st)], (p)[4 * (st)], (p)[5 * (st)], \
                             (p)[6 * (st)], (p)[7 * (st)], (p)[8 * (st)], (p)[9 * (st)], (p)[10 * (st)],      \
                             (p)[11 * (st)], (p)[12 * (st)], (p)[13 * (st)], (p)[14 * (st)], (p)[15 * (st)]})
#elif VL == 8
#define VGATHER(p, st) ((vd){(p)[0], (p)[(st)], (p)[2 * (st)], (p)[3 * (st)], (p)[4 * (st)], (p)[5 * (st)], \
                             (p)[6 * (st)], (p)[7 * (st)]})
#else
#define VGATHER(p, st) ((vd){(p)[0], (p)[(st)], (p)[2 * (st)], (p)[3 * (st)]})
#endif

/* Samples i0.. of a block as row pointers: a short last block repeats its last sample. */
static BL_INLINE const double *block_base(const double *x, size_t i0, size_t nb, size_t stride, double *pad) {
    if (nb == VL) return x + i0 * stride;
    for (size_t b = 0; b < VL; b++) memcpy(pad + b * stride, x + (i0 + (b < nb ? b : nb - 1)) * stride, stride * sizeof(double));
    return pad;
}

/* The features of block i0 of n samples. */
static BL_INLINE void feat_block(const double *feat, size_t i0, size_t nb, vd *x0, vd *x1, vd *x2) {
    double pad[3 * VL];
    const double *f = block_base(feat, i0, nb, 3, pad);
    *x0 = VGATHER(f, 3);
    *x1 = VGATHER(f + 1, 3);
    *x2 = VGATHER(f + 2, 3);
}

/* F of block i0 (nb samples) from member storage [n][8]. */
static BL_INLINE void fload_block(const double *Fk, size_t i0, size_t nb, vd *F) {
    double pad[8 * VL];
    const double *f = block_base(Fk, i0, nb, 8, pad);
    for (int o = 0; o < 8; o++) F[o] = VGATHER(f + o, 8);
}

static BL_INLINE void out_block(double *out, size_t i0, size_t nb, vd r) {
#if !BL_F32
    if (nb == VL) {
        vd_st(out + i0, r);
        return;
    }
#endif
    real t[VL];
    vd_st(t, r);
    for (size_t b = 0; b < nb; b++) out[i0 + b] = t[b];
}

static void f_forward_vec(const bl_bnet *net, const double *feat, size_t n, double *F) {
    if (!fast_dims(&net->d)) {
        f_forward_plain(net, feat, n, F);
        return;
    }
    pw q;
    pw_make(net, &q);
    for (size_t i0 = 0; i0 < n; i0 += VL) {
        const size_t nb = n - i0 < VL ? n - i0 : VL;
        vd x0, x1, x2, f[8];
        feat_block(feat, i0, nb, &x0, &x1, &x2);
        vf_block(&q, x0, x1, x2, f);
        real t[8][VL];
        for (int o = 0; o < 8; o++) vd_st(t[o], f[o]);
        for (size_t b = 0; b < nb; b++)
            for (int o = 0; o < 8; o++) F[(i0 + b) * 8 + (size_t)o] = t[o][b];
    }
}

static void predict_vec(const bl_bnet *net, const double *ctx, const double *feat, size_t n, double *out) {
    if (!fast_dims(&net->d)) {
        predict_plain(net, ctx, feat, n, out);
        return;
    }
    pw q;
    pw_make(net, &q);
    for (size_t i0 = 0; i0 < n; i0 += VL) {
        const size_t nb = n - i0 < VL ? n - i0 : VL;
        vd x0, x1, x2, f[8];
        feat_block(feat, i0, nb, &x0, &x1, &x2);
        vf_block(&q, x0, x1, x2, f);
        vd pre = vz_block(&q, ctx, f);
        v_selu(&pre, &pre, 1);
        out_block(out, i0, nb, pre);
    }
}

/* The median of r[0..K) per lane: a compare-exchange network (min/max ordered as the plain loops'
 * compare-exchange), then SELU of the middle one or two only (SELU is increasing); NaN lanes stay NaN. */
static BL_INLINE vd vmedian(vd *r, int K, vd nan) {
    for (int i = 1; i < K; i++)
        for (int j = i; j > 0; j--) {
            const vd a = r[j - 1], b = r[j];
            r[j - 1] = vd_min(b, a);
            r[j] = vd_max(a, b);
        }
    vd med;
    if (K % 2) {
        med = r[K / 2];
        v_selu(&med, &med, 1);
    } else {
        vd mid[2] = {r[K / 2 - 1], r[K / 2]};
        v_selu(mid, mid, 2);
        med = (real)0.5 * (mid[0] + mid[1]);
    }
    return vd_nan_or(med, nan);
}

/* F NULL: from the features; else from each member's stored f outputs. */
static void median_vec(const bl_bnet *const *nets, int K, const double *ctx, const double *feat,
                       const double *const *F, size_t n, double *out) {
    for (int k = 0; k < K; k++)
        if (!fast_dims(&nets[k]->d)) {
            median_plain(nets, K, ctx, feat, F, n, out);
            return;
        }
    pw q[BL_BNET_MEMBERS_MAX];
    for (int k = 0; k < K; k++) pw_make(nets[k], &q[k]);
    for (size_t i0 = 0; i0 < n; i0 += VL) {
        const size_t nb = n - i0 < VL ? n - i0 : VL;
        vd x0 = {0}, x1 = {0}, x2 = {0}, r[BL_BNET_MEMBERS_MAX], nan = vd_set1(0.0);
        if (!F) feat_block(feat, i0, nb, &x0, &x1, &x2);
        for (int k = 0; k < K; k++) {
            vd f[8];
            if (F) fload_block(F[k], i0, nb, f);
            else vf_block(&q[k], x0, x1, x2, f);
            r[k] = vz_block(&q[k], ctx + 8 * (size_t)k, f);
            nan = vd_nan_or(nan, r[k]);
        }
        out_block(out, i0, nb, vmedian(r, K, nan));
    }
}

static void act_vec(int fn, const double *x, size_t n, double *y) {
    for (size_t i0 = 0; i0 < n; i0 += VL) {
        const size_t nb = n - i0 < VL ? n - i0 : VL;
#if BL_F32
        real in[VL] = {0};
        for (size_t b = 0; b < nb; b++) in[b] = (real)x[i0 + b];
        vd v = vd_ld(in);
#else
        double in[VL] = {0};
        if (nb < VL) memcpy(in, x + i0, nb * sizeof(double));
        vd v = nb == VL ? vd_ld(x + i0) : vd_ld(in);
#endif
        if (fn == 0) v_selu(&v, &v, 1);
        else v_tanh(&v, &v, 1);
        out_block(y, i0, nb, v);
    }
}
#define F_FORWARD f_forward_vec
#define PREDICT predict_vec
#define MEDIAN median_vec
#define ACT act_vec
#else
#define F_FORWARD f_forward_plain
#define PREDICT predict_plain
#define MEDIAN median_plain
#define ACT act_plain
#endif

void KFN(bl_kern_f_forward)(const bl_bnet *net, const double *feat, size_t n, double *F);
void KFN(bl_kern_f_forward)(const bl_bnet *net, const double *feat, size_t n, double *F) { F_FORWARD(net, feat, n, F); }

void KFN(bl_kern_predict)(const bl_bnet *net, const double *ctx, const double *feat, size_t n, double *out);
void KFN(bl_kern_predict)(const bl_bnet *net, const double *ctx, const double *feat, size_t n, double *out) {
    PREDICT(net, ctx, feat, n, out);
}

void KFN(bl_kern_predict_median)(const bl_bnet *const *nets, int K, const double *ctx, const double *feat, size_t n,
                                 double *out);
void KFN(bl_kern_predict_median)(const bl_bnet *const *nets, int K, const double *ctx, const double *feat, size_t n,
                                 double *out) {
    MEDIAN(nets, K, ctx, feat, NULL, n, out);
}

void KFN(bl_kern_predict_median_f)(const bl_bnet *const *nets, int K, const double *ctx, const double *const *F,
                                   size_t n, double *out);
void KFN(bl_kern_predict_median_f)(const bl_bnet *const *nets, int K, const double *ctx, const double *const *F,
                                   size_t n, double *out) {
    MEDIAN(nets, K, ctx, NULL, F, n, out);
}

void KFN(bl_kern_act)(int fn, const double *x, size_t n, double *y);
void KFN(bl_kern_act)(int fn, const double *x, size_t n, double *y) { ACT(fn, x, n, y); }
