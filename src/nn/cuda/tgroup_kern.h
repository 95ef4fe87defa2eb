/* tgroup_kern.h — the bodies of the CUDA trial-group kernels, written in the C subset that both nvcc
 * and a C11 compiler accept, so that the very code the GPU runs can also be run on the host.
 *
 * tgroup_cuda.cu wraps each body in a __global__ kernel (grid-stride loop over the element index, or one
 * block per slot with __syncthreads between phases). tests/test_tgroup.c includes this file a second
 * time with BL_KDEV = static and runs the bodies in plain loops (phases one after another, the block
 * tree reductions step by step), with the cuBLAS argument mapping below fed to a column-major CPU BLAS:
 * that emulation checks every index, stride, mask lookup and the row-/column-major swap on machines
 * without a GPU. Only the CUDA runtime itself (launches, streams, copies) and cuBLAS go unchecked there.
 *
 * Each body follows the same-named function of src/nn/tgroup_cpu.c expression by expression.
 * Element-wise bodies take the element index i < the matching *_n() (host functions: launch sizes);
 * block bodies take the slot sl, the thread tid and the block size nt. No CUDA headers here.
 * Not here: launches, memory, the pass order.
 */
#ifndef BL_NN_CUDA_TGROUP_KERN_H
#define BL_NN_CUDA_TGROUP_KERN_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "nn/tgroup_ops.h"
#ifdef __cplusplus
extern "C" {
#endif
#include "nn/act.h" /* SELU constants */
#ifdef __cplusplus
}
#endif

#ifndef BL_KDEV
#define BL_KDEV static inline
#endif

#define BL_KERN_TPB 256 /* threads per block of the block kernels (a power of two) */

/* ---- the cuBLAS call for a row-major GEMM ------------------------------------------------------ */

/* Row-major C = op(A)·op(B) is column-major Cᵀ = op(B)ᵀ·op(A)ᵀ, and a row-major matrix read
 * column-major is its transpose: so the column-major call takes B first, then A, with the same
 * transpose flags, m = N, n = M. */
typedef struct bl_cm_gemm {
    int ta, tb;                 /* transpose flags of the column-major call's first and second operand */
    int m, n, k;
    const double *A, *B;        /* the column-major call's operands */
    long lda, ldb, sA, sB;
} bl_cm_gemm;

static inline bl_cm_gemm bl_kern_colmajor(int ta, int tb, int M, int N, int K, const double *A, long lda, long sA,
                                    const double *B, long ldb, long sB) {
    bl_cm_gemm g;
    g.ta = tb;
    g.tb = ta;
    g.m = N;
    g.n = M;
    g.k = K;
    g.A = B;
    g.lda = ldb;
    g.sA = sB;
    g.B = A;
    g.ldb = lda;
    g.sB = sA;
    return g;
}

/* ---- helpers ----------------------------------------------------------------------------------- */

BL_KDEV double kb_selu(double x) {
    return x > 0.0 ? BL_SELU_LAMBDA * x : (BL_SELU_LAMBDA * BL_SELU_ALPHA) * expm1(x);
}
BL_KDEV double kb_selu_dy(double y) { return y > 0.0 ? BL_SELU_LAMBDA : y + BL_SELU_LAMBDA * BL_SELU_ALPHA; }

/* Keep flag of AE row q = p·B + b, unit k, encoder (which 0) or decoder (1) mask. */
BL_KDEV int kb_keep(const bl_tg_state *s, int sl, int B, int q, int k, int which, long i0) {
    const int NP = s->net.NP, H = s->net.H;
    const int p = q / B, b = q % B;
    const size_t pos = (size_t)s->slot_trial[sl] * (size_t)s->n_order + (size_t)(i0 + b);
    return s->mask[(pos * (size_t)NP + (size_t)p) * 2 * (size_t)H + (size_t)which * (size_t)H + (size_t)k];
}

/* ---- element-wise bodies ----------------------------------------------------------------------- */

static inline size_t kb_gather_n(const bl_tg_state *s, int B) {
    return (size_t)s->n * (size_t)B * ((size_t)s->net.NP * (size_t)s->net.V + (size_t)s->net.FI + 1);
}
/* Elements [0, n·NP·B·V): the AE rows' vectors; then n·B·(FI + 1): features and target of each row. */
BL_KDEV void kb_gather(const bl_tg_state *s, const bl_tg_view *v, int use_order, long i0, int B, size_t i) {
    const int NP = s->net.NP, V = s->net.V, FI = s->net.FI;
    const size_t R = (size_t)s->w.R, tx = (size_t)s->n * (size_t)NP * (size_t)B * (size_t)V;
    if (i < tx) {
        const int k = (int)(i % (size_t)V);
        const int q = (int)((i / (size_t)V) % ((size_t)NP * (size_t)B));
        const int sl = (int)(i / ((size_t)V * (size_t)NP * (size_t)B));
        const int p = q / B, b = q % B;
        const size_t row = use_order ? s->order[(size_t)s->slot_trial[sl] * (size_t)s->n_order + (size_t)(i0 + b)]
                                     : (size_t)(i0 + b);
        s->w.X[(size_t)sl * R * (size_t)NP * (size_t)V + (size_t)q * (size_t)V + (size_t)k] =
            v->vecs[(size_t)v->vec[row * (size_t)NP + (size_t)p] * (size_t)V + (size_t)k];
    } else {
        const size_t j = i - tx;
        const int f = (int)(j % (size_t)(FI + 1));
        const int b = (int)((j / (size_t)(FI + 1)) % (size_t)B);
        const int sl = (int)(j / ((size_t)(FI + 1) * (size_t)B));
        const size_t row = use_order ? s->order[(size_t)s->slot_trial[sl] * (size_t)s->n_order + (size_t)(i0 + b)]
                                     : (size_t)(i0 + b);
        if (f < FI)
            s->w.xs[((size_t)sl * R + (size_t)b) * (size_t)FI + (size_t)f] =
                v->sx_feat[(size_t)v->sx[row] * (size_t)FI + (size_t)f];
        else
            s->w.tgt[(size_t)sl * R + (size_t)b] = v->target[row];
    }
}

static inline size_t kb_bias_selu_n(const bl_tg_state *s, int rows, int cols) {
    return (size_t)s->n * (size_t)rows * (size_t)cols;
}
BL_KDEV void kb_bias_selu(const bl_tg_state *s, int rows, int cols, double *Y, long ldy, long sY, long bias, size_t i) {
    const int j = (int)(i % (size_t)cols);
    const int r = (int)((i / (size_t)cols) % (size_t)rows);
    const int sl = (int)(i / ((size_t)cols * (size_t)rows));
    double *e = Y + (size_t)sl * (size_t)sY + (size_t)r * (size_t)ldy + (size_t)j;
    *e = kb_selu(bias >= 0 ? *e + s->W[(size_t)sl * (size_t)s->net.P + (size_t)bias + (size_t)j] : *e);
}

/* AE-row bodies: elements n·NP·B·k, k = H or C. */
static inline size_t kb_ae_n(const bl_tg_state *s, int B, int k) {
    return (size_t)s->n * (size_t)s->net.NP * (size_t)B * (size_t)k;
}

BL_KDEV void kb_selu_dropout(const bl_tg_state *s, int B, double *a, double *d, int which, long i0, int training,
                             size_t i) {
    const int H = s->net.H, S = s->net.NP * B;
    const size_t stride = (size_t)s->w.R * (size_t)s->net.NP * (size_t)H;
    const int k = (int)(i % (size_t)H);
    const int q = (int)((i / (size_t)H) % (size_t)S);
    const int sl = (int)(i / ((size_t)H * (size_t)S));
    const double *hp = s->hyp + (size_t)sl * BL_TG_HYP;
    const int drop = training && hp[BL_TG_DROP] != 0.0;
    const size_t e = (size_t)sl * stride + (size_t)q * (size_t)H + (size_t)k;
    const double y = kb_selu(a[e]);
    a[e] = y;
    d[e] = drop ? (kb_keep(s, sl, B, q, k, which, i0) ? y : BL_SELU_ALPHA_PRIME) * hp[BL_TG_DA] + hp[BL_TG_DB] : y;
}

static inline size_t kb_codes_n(const bl_tg_state *s, int B) { return (size_t)s->n * (size_t)B * (size_t)s->net.C; }
BL_KDEV void kb_codes(const bl_tg_state *s, int B, size_t i) {
    const int C = s->net.C, NE = s->net.NE, NP = s->net.NP, FO = s->net.FO;
    const double inv_no = s->net.NO > 0 ? 1.0 / s->net.NO : 0.0;
    const int k = (int)(i % (size_t)C);
    const int b = (int)((i / (size_t)C) % (size_t)B);
    const int sl = (int)(i / ((size_t)C * (size_t)B));
    double *c = s->w.c + (size_t)sl * (size_t)s->w.R * (size_t)NP * (size_t)C;
    double *z = s->w.zin + ((size_t)sl * (size_t)s->w.R + (size_t)b) * (size_t)s->net.ZI;
    for (int p = 0; p < NE; p++) {
        double *e = c + ((size_t)p * (size_t)B + (size_t)b) * (size_t)C + (size_t)k;
        *e = kb_selu(*e);
        z[FO + C * p + k] = *e;
    }
    double m = 0.0;
    for (int p = NE; p < NP; p++) {
        double *e = c + ((size_t)p * (size_t)B + (size_t)b) * (size_t)C + (size_t)k;
        *e = kb_selu(*e);
        m += *e;
    }
    z[FO + C * NE + k] = m * inv_no;
}

BL_KDEV void kb_dropout_selu_back(const bl_tg_state *s, int B, double *dx, const double *y, int which, long i0,
                                  const double *extra, size_t i) {
    const int H = s->net.H, S = s->net.NP * B;
    const size_t stride = (size_t)s->w.R * (size_t)s->net.NP * (size_t)H;
    const int k = (int)(i % (size_t)H);
    const int q = (int)((i / (size_t)H) % (size_t)S);
    const int sl = (int)(i / ((size_t)H * (size_t)S));
    const double *hp = s->hyp + (size_t)sl * BL_TG_HYP;
    const size_t e = (size_t)sl * stride + (size_t)q * (size_t)H + (size_t)k;
    const double g = hp[BL_TG_DROP] != 0.0 ? (kb_keep(s, sl, B, q, k, which, i0) ? hp[BL_TG_DA] * dx[e] : 0.0) : dx[e];
    const double sd = kb_selu_dy(y[e]);
    dx[e] = extra ? g * sd + extra[e] * sd : g * sd;
}

BL_KDEV void kb_code_back(const bl_tg_state *s, int B, int clean, size_t i) {
    const int C = s->net.C, S = s->net.NP * B, NE = s->net.NE, FO = s->net.FO, ZI = s->net.ZI;
    const double inv_no = s->net.NO > 0 ? 1.0 / s->net.NO : 0.0;
    const size_t stride = (size_t)s->w.R * (size_t)s->net.NP * (size_t)C;
    const int k = (int)(i % (size_t)C);
    const int q = (int)((i / (size_t)C) % (size_t)S);
    const int sl = (int)(i / ((size_t)C * (size_t)S));
    const int p = q / B, b = q % B;
    const size_t e = (size_t)sl * stride + (size_t)q * (size_t)C + (size_t)k;
    const double *dzin = s->w.dzin + ((size_t)sl * (size_t)s->w.R + (size_t)b) * (size_t)ZI;
    const double dz = p < NE ? dzin[FO + C * p + k] : dzin[FO + C * NE + k] * inv_no;
    if (clean) {
        s->w.ck[e] = s->w.dc[e] * kb_selu_dy(s->w.ck[e]);
        s->w.dc[e] = dz * kb_selu_dy(s->w.c[e]);
    } else {
        s->w.dc[e] = (dz + s->w.dc[e]) * kb_selu_dy(s->w.c[e]);
    }
}

static inline size_t kb_params_n(const bl_tg_state *s) { return (size_t)s->n * (size_t)s->net.P; }
BL_KDEV void kb_adam(const bl_tg_state *s, double beta1, double beta2, double eps, long ib, size_t i) {
    const size_t P = (size_t)s->net.P;
    if (i % P >= (size_t)s->net.n_params) return; /* padding between slots */
    const double bc1 = s->bc[2 * ib], bc2 = s->bc[2 * ib + 1];
    const double *hp = s->hyp + (i / P) * BL_TG_HYP;
    const double bc2_sqrt = sqrt(bc2);
    const double wd = hp[BL_TG_WD], step_size = hp[BL_TG_LR] / bc1;
    const double gi = s->G[i] + wd * s->W[i];
    const double m = s->M[i] + (1.0 - beta1) * (gi - s->M[i]);
    const double v = beta2 * s->Vm[i] + (1.0 - beta2) * gi * gi;
    s->M[i] = m;
    s->Vm[i] = v;
    s->W[i] -= step_size * (m / (sqrt(v) / bc2_sqrt + eps));
    s->G[i] = 0.0;
}

BL_KDEV void kb_keep_best(const bl_tg_state *s, size_t i) {
    if (s->keep[i / (size_t)s->net.P]) s->best[i] = s->W[i];
}
BL_KDEV void kb_average(const bl_tg_state *s, size_t i) {
    if (i % (size_t)s->net.P >= (size_t)s->net.n_params) return; /* padding between slots */
    const double beta = s->avgk[0];
    s->ema[i] = beta * s->ema[i] + (1.0 - beta) * s->W[i];
    s->avg[i] = s->ema[i] * s->avgk[1];
}

/* ---- block bodies: one block of nt threads per slot -------------------------------------------- */

/* recon, phase 1: thread tid's partial sums of (r − x)² (essential, optional); r becomes d loss / d r. */
BL_KDEV void kb_recon_part(const bl_tg_state *s, int B, int sl, int tid, int nt, double *part) {
    const int V = s->net.V, NE = s->net.NE;
    const double rs_e = NE > 0 ? 1.0 / ((double)B * NE * V) : 0.0;
    const double rs_o = s->net.NO > 0 ? 1.0 / ((double)B * s->net.NO * V) : 0.0;
    const size_t stride = (size_t)s->w.R * (size_t)s->net.NP * (size_t)V;
    double *r = s->w.r + (size_t)sl * stride;
    const double *X = s->w.X + (size_t)sl * stride;
    part[0] = 0.0;
    part[1] = 0.0;
    for (size_t i = (size_t)tid; i < (size_t)s->net.NP * (size_t)B * (size_t)V; i += (size_t)nt) {
        const int opt = (int)(i / (size_t)V) / B >= NE;
        const double rs = opt ? rs_o : rs_e;
        const double y = tanh(r[i]), e = y - X[i];
        part[opt] += e * e;
        r[i] = rs * 2.0 * e * (1.0 - y * y);
    }
}
/* recon, phase 2 (after the tree over the block's partials): the slot's two sums. */
BL_KDEV void kb_recon_store(const bl_tg_state *s, int sl, double sum_e, double sum_o) {
    s->w.rec[2 * sl] = sum_e;
    s->w.rec[2 * sl + 1] = sum_o;
}

/* head, phase 1: rows tid, tid + nt, … */
BL_KDEV void kb_head_rows(const bl_tg_state *s, int B, int want_grad, int sl, int tid, int nt) {
    const int Z = s->net.Z;
    const double inv_b = 1.0 / (double)B;
    const double *W = s->W + (size_t)sl * (size_t)s->net.P;
    const size_t so = (size_t)sl * (size_t)s->w.R;
    double *h = s->w.h + so * (size_t)Z, *du = s->w.du + so * (size_t)Z, *dpre = s->w.dpre + so, *rowl = s->w.rowl + so;
    const double *tgt = s->w.tgt + so;
    for (int b = tid; b < B; b += nt) {
        double *hb = h + (size_t)b * (size_t)Z;
        double pre = W[s->net.z2b];
        for (int k = 0; k < Z; k++) {
            hb[k] = kb_selu(hb[k] + W[s->net.z0b + k]);
            pre += W[s->net.z2w + k] * hb[k];
        }
        const double out = kb_selu(pre), e = out - tgt[b], ae = fabs(e);
        rowl[b] = ae < 1.0 ? 0.5 * e * e : ae - 0.5;
        if (!want_grad) continue;
        const double dout = (ae < 1.0 ? e : (e > 0 ? 1.0 : -1.0)) * inv_b;
        dpre[b] = dout * kb_selu_dy(out);
        for (int k = 0; k < Z; k++)
            du[(size_t)b * (size_t)Z + (size_t)k] = dpre[b] * W[s->net.z2w + k] * kb_selu_dy(hb[k]);
    }
}
/* head, phase 2: column j = tid, tid + nt, … < Z + 2 sums over rows in row order (j < Z: z0 bias and z2
 * weight j; Z: the loss; Z + 1: z2 bias). */
BL_KDEV void kb_head_sums(const bl_tg_state *s, int B, int want_grad, long col, int sl, int tid, int nt) {
    const int Z = s->net.Z;
    const double inv_b = 1.0 / (double)B;
    double *G = s->G + (size_t)sl * (size_t)s->net.P;
    const size_t so = (size_t)sl * (size_t)s->w.R;
    const double *h = s->w.h + so * (size_t)Z, *du = s->w.du + so * (size_t)Z, *dpre = s->w.dpre + so;
    const double *rowl = s->w.rowl + so;
    for (int j = tid; j < Z + 2; j += nt) {
        if (j == Z) {
            double rt = 0.0;
            for (int b = 0; b < B; b++) rt += rowl[b];
            rt *= inv_b;
            const double re = s->net.NE > 0 ? s->w.rec[2 * sl] / ((double)B * s->net.NE * s->net.V) : 0.0;
            const double ro = s->net.NO > 0 ? s->w.rec[2 * sl + 1] / ((double)B * s->net.NO * s->net.V) : 0.0;
            s->loss[(size_t)sl * (size_t)s->loss_ld + (size_t)col] = rt + (re + ro);
        } else if (!want_grad) {
            continue;
        } else if (j == Z + 1) {
            double g2 = 0.0;
            for (int b = 0; b < B; b++) g2 += dpre[b];
            G[s->net.z2b] += g2;
        } else {
            double a = 0.0, g = 0.0;
            for (int b = 0; b < B; b++) {
                a += du[(size_t)b * (size_t)Z + (size_t)j];
                g += dpre[b] * h[(size_t)b * (size_t)Z + (size_t)j];
            }
            G[s->net.z0b + j] += a;
            G[s->net.z2w + j] += g;
        }
    }
}

/* selu_back_bias, phase 1: dY *= selu'(Y) element-wise. */
BL_KDEV void kb_sbb_elem(int B, int cols, double *dY, long ld, long sD, const double *Y, long ldy, long sY, int sl,
                         int tid, int nt) {
    double *d = dY + (size_t)sl * (size_t)sD;
    const double *y = Y + (size_t)sl * (size_t)sY;
    for (int i = tid; i < B * cols; i += nt) {
        const int b = i / cols, j = i % cols;
        d[(size_t)b * (size_t)ld + (size_t)j] *= kb_selu_dy(y[(size_t)b * (size_t)ldy + (size_t)j]);
    }
}
/* selu_back_bias, phase 2: the bias gradient, each column's sum in row order. */
BL_KDEV void kb_sbb_sums(const bl_tg_state *s, int B, int cols, const double *dY, long ld, long sD, long bias, int sl,
                         int tid, int nt) {
    const double *d = dY + (size_t)sl * (size_t)sD;
    double *G = s->G + (size_t)sl * (size_t)s->net.P + (size_t)bias;
    for (int j = tid; j < cols; j += nt) {
        double a = 0.0;
        for (int b = 0; b < B; b++) a += d[(size_t)b * (size_t)ld + (size_t)j];
        G[j] += a;
    }
}

#endif /* BL_NN_CUDA_TGROUP_KERN_H */
