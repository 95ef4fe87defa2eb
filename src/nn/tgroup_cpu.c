/* tgroup_cpu.c — the CPU implementation of the trial-group ops (tgroup_ops.h): the GEMMs through
 * OpenBLAS, one slot after another, the element-wise ops in plain loops, in double precision.
 *
 * It is the reference the CUDA ops are compared against and the path that proves the pass order of
 * tgroup.c against bl_bnet_pass, so it favours obvious code over speed. The element-wise ops' sums run
 * in index order (rows ascending), as the CUDA kernels' per-slot reductions do where they are serial.
 * Not here: the order of the pass (tgroup.c), anything device-specific.
 */
#include "nn/tgroup_ops.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "nn/act.h"
#include "nn/gemm.h"

#define LAMBDA BL_SELU_LAMBDA
#define LALPHA (BL_SELU_LAMBDA * BL_SELU_ALPHA)

static double selu(double x) { return x > 0.0 ? LAMBDA * x : LALPHA * expm1(x); }
/* SELU's derivative from its output y: y > 0 exactly when the input was > 0, and for x ≤ 0
 * d/dx λα(eˣ − 1) = λα·eˣ = y + λα (the kernels' selu_d(x, y) gives the same value). */
static double selu_dy(double y) { return y > 0.0 ? LAMBDA : y + LALPHA; }

typedef struct cpu_ctx {
    int failed; /* an allocation failed */
} cpu_ctx;

static bl_status cpu_open(void **ctx, bl_error *err) {
    cpu_ctx *c = calloc(1, sizeof *c);
    if (!c) return bl_seterr(err, BL_ENOMEM, "out of memory");
    *ctx = c;
    return BL_OK;
}
static void cpu_close(void *ctx) { free(ctx); }
static void *cpu_alloc(void *ctx, size_t bytes) {
    void *p = calloc(1, bytes ? bytes : 1);
    if (!p) ((cpu_ctx *)ctx)->failed = 1;
    return p;
}
static void cpu_free(void *ctx, void *p) { (void)ctx; free(p); }
static void cpu_put(void *ctx, void *dst, const void *src, size_t bytes) {
    (void)ctx;
    if (bytes) memmove(dst, src, bytes);
}
static bl_status cpu_finish(void *ctx, bl_error *err) {
    cpu_ctx *c = ctx;
    if (c->failed) {
        c->failed = 0;
        return bl_seterr(err, BL_ENOMEM, "out of memory");
    }
    return BL_OK;
}

static void cpu_gemm(void *ctx, int ta, int tb, int M, int N, int K, double alpha, const double *A, long lda,
                     long sA, const double *B, long ldb, long sB, double beta, double *C, long ldc, long sC,
                     int batch) {
    (void)ctx;
    for (int s = 0; s < batch; s++)
        bl_gemm_blas(ta, tb, M, N, K, alpha, A + (size_t)s * (size_t)sA, (int)lda, B + (size_t)s * (size_t)sB,
                     (int)ldb, beta, C + (size_t)s * (size_t)sC, (int)ldc);
}

static void cpu_gather(void *ctx, const bl_tg_state *s, const bl_tg_view *v, int use_order, long i0, int B) {
    (void)ctx;
    const bl_tg_net *n = &s->net;
    const long R = s->w.R;
    for (int sl = 0; sl < s->n; sl++) {
        const uint32_t *ord = use_order ? s->order + (size_t)s->slot_trial[sl] * (size_t)s->n_order : NULL;
        double *xs = s->w.xs + (size_t)sl * R * n->FI, *tgt = s->w.tgt + (size_t)sl * R;
        double *X = s->w.X + (size_t)sl * R * n->NP * n->V;
        for (int b = 0; b < B; b++) {
            const size_t row = ord ? ord[i0 + b] : (size_t)(i0 + b);
            memcpy(xs + (size_t)b * n->FI, v->sx_feat + (size_t)v->sx[row] * n->FI, (size_t)n->FI * sizeof(double));
            tgt[b] = v->target[row];
            for (int p = 0; p < n->NP; p++)
                memcpy(X + ((size_t)p * B + b) * n->V, v->vecs + (size_t)v->vec[row * n->NP + p] * n->V,
                       (size_t)n->V * sizeof(double));
        }
    }
}

static void cpu_bias_selu(void *ctx, const bl_tg_state *s, int rows, int cols, double *Y, long ldy, long sY,
                          long bias) {
    (void)ctx;
    for (int sl = 0; sl < s->n; sl++) {
        const double *bv = bias >= 0 ? s->W + (size_t)sl * s->net.P + bias : NULL;
        double *y = Y + (size_t)sl * sY;
        for (int r = 0; r < rows; r++)
            for (int j = 0; j < cols; j++) {
                double *e = y + (size_t)r * ldy + j;
                *e = selu(bv ? *e + bv[j] : *e);
            }
    }
}

/* Keep flag of AE row q = p·B + b, unit k. */
static int keep_of(const bl_tg_state *s, int sl, int B, int q, int k, int which, long i0) {
    const bl_tg_net *n = &s->net;
    const int p = q / B, b = q % B;
    const size_t pos = (size_t)s->slot_trial[sl] * (size_t)s->n_order + (size_t)(i0 + b);
    return s->mask[(pos * n->NP + p) * 2 * n->H + (size_t)which * n->H + k];
}

static void cpu_selu_dropout(void *ctx, const bl_tg_state *s, int B, double *a, double *d, int which, long i0,
                             int training) {
    (void)ctx;
    const bl_tg_net *n = &s->net;
    const int H = n->H, S = n->NP * B;
    const size_t stride = (size_t)s->w.R * n->NP * H;
    for (int sl = 0; sl < s->n; sl++) {
        const double *hp = s->hyp + (size_t)sl * BL_TG_HYP;
        const int drop = training && hp[BL_TG_DROP] != 0.0;
        const double da = hp[BL_TG_DA], db = hp[BL_TG_DB];
        double *as = a + sl * stride, *ds = d + sl * stride;
        for (int q = 0; q < S; q++)
            for (int k = 0; k < H; k++) {
                const size_t i = (size_t)q * H + k;
                const double y = selu(as[i]);
                as[i] = y;
                ds[i] = drop ? (keep_of(s, sl, B, q, k, which, i0) ? y : BL_SELU_ALPHA_PRIME) * da + db : y;
            }
    }
}

static void cpu_codes(void *ctx, const bl_tg_state *s, int B) {
    (void)ctx;
    const bl_tg_net *n = &s->net;
    const int C = n->C;
    const double inv_no = n->NO > 0 ? 1.0 / n->NO : 0.0;
    for (int sl = 0; sl < s->n; sl++) {
        double *c = s->w.c + (size_t)sl * s->w.R * n->NP * C;
        double *zin = s->w.zin + (size_t)sl * s->w.R * n->ZI;
        for (size_t i = 0; i < (size_t)n->NP * B * C; i++) c[i] = selu(c[i]);
        for (int b = 0; b < B; b++) {
            double *z = zin + (size_t)b * n->ZI;
            for (int p = 0; p < n->NE; p++)
                for (int k = 0; k < C; k++) z[n->FO + C * p + k] = c[((size_t)p * B + b) * C + k];
            for (int k = 0; k < C; k++) {
                double m = 0.0;
                for (int p = n->NE; p < n->NP; p++) m += c[((size_t)p * B + b) * C + k];
                z[n->FO + C * n->NE + k] = m * inv_no;
            }
        }
    }
}

static void cpu_recon(void *ctx, const bl_tg_state *s, int B) {
    (void)ctx;
    const bl_tg_net *n = &s->net;
    const int V = n->V;
    const double rs_e = n->NE > 0 ? 1.0 / ((double)B * n->NE * V) : 0.0;
    const double rs_o = n->NO > 0 ? 1.0 / ((double)B * n->NO * V) : 0.0;
    for (int sl = 0; sl < s->n; sl++) {
        double *r = s->w.r + (size_t)sl * s->w.R * n->NP * V;
        const double *X = s->w.X + (size_t)sl * s->w.R * n->NP * V;
        double sum[2] = {0.0, 0.0};
        for (int q = 0; q < n->NP * B; q++) {
            const int opt = q / B >= n->NE;
            const double rs = opt ? rs_o : rs_e;
            for (int k = 0; k < V; k++) {
                const size_t i = (size_t)q * V + k;
                const double y = tanh(r[i]), e = y - X[i];
                sum[opt] += e * e;
                r[i] = rs * 2.0 * e * (1.0 - y * y);
            }
        }
        s->w.rec[2 * sl] = sum[0];
        s->w.rec[2 * sl + 1] = sum[1];
    }
}

static void cpu_head(void *ctx, const bl_tg_state *s, int B, int want_grad, long col) {
    (void)ctx;
    const bl_tg_net *n = &s->net;
    const int Z = n->Z;
    const double inv_b = 1.0 / (double)B;
    for (int sl = 0; sl < s->n; sl++) {
        const double *W = s->W + (size_t)sl * n->P;
        double *G = s->G + (size_t)sl * n->P;
        const size_t so = (size_t)sl * s->w.R;
        double *h = s->w.h + so * Z, *du = s->w.du + so * Z, *dpre = s->w.dpre + so, *rowl = s->w.rowl + so;
        const double *tgt = s->w.tgt + so;
        for (int b = 0; b < B; b++) {
            double *hb = h + (size_t)b * Z;
            double pre = W[n->z2b];
            for (int k = 0; k < Z; k++) {
                hb[k] = selu(hb[k] + W[n->z0b + k]);
                pre += W[n->z2w + k] * hb[k];
            }
            const double out = selu(pre), e = out - tgt[b], ae = fabs(e);
            rowl[b] = ae < 1.0 ? 0.5 * e * e : ae - 0.5;
            if (!want_grad) continue;
            const double dout = (ae < 1.0 ? e : (e > 0 ? 1.0 : -1.0)) * inv_b;
            dpre[b] = dout * selu_dy(out);
            for (int k = 0; k < Z; k++) du[(size_t)b * Z + k] = dpre[b] * W[n->z2w + k] * selu_dy(hb[k]);
        }
        double rt = 0.0;
        for (int b = 0; b < B; b++) rt += rowl[b];
        rt *= inv_b;
        const double re = n->NE > 0 ? s->w.rec[2 * sl] / ((double)B * n->NE * n->V) : 0.0;
        const double ro = n->NO > 0 ? s->w.rec[2 * sl + 1] / ((double)B * n->NO * n->V) : 0.0;
        s->loss[(size_t)sl * s->loss_ld + col] = rt + (re + ro);
        if (!want_grad) continue;
        for (int k = 0; k < Z; k++) {
            double a = 0.0, g = 0.0;
            for (int b = 0; b < B; b++) {
                a += du[(size_t)b * Z + k];
                g += dpre[b] * h[(size_t)b * Z + k];
            }
            G[n->z0b + k] += a;
            G[n->z2w + k] += g;
        }
        double g2 = 0.0;
        for (int b = 0; b < B; b++) g2 += dpre[b];
        G[n->z2b] += g2;
    }
}

static void cpu_selu_back_bias(void *ctx, const bl_tg_state *s, int B, int cols, double *dY, long ld, long sD,
                               const double *Y, long ldy, long sY, long bias) {
    (void)ctx;
    for (int sl = 0; sl < s->n; sl++) {
        double *d = dY + (size_t)sl * sD;
        const double *y = Y + (size_t)sl * sY;
        double *G = s->G + (size_t)sl * s->net.P + bias;
        for (int b = 0; b < B; b++)
            for (int j = 0; j < cols; j++) d[(size_t)b * ld + j] *= selu_dy(y[(size_t)b * ldy + j]);
        for (int j = 0; j < cols; j++) {
            double a = 0.0;
            for (int b = 0; b < B; b++) a += d[(size_t)b * ld + j];
            G[j] += a;
        }
    }
}

static void cpu_dropout_selu_back(void *ctx, const bl_tg_state *s, int B, double *dx, const double *y, int which,
                                  long i0, const double *extra) {
    (void)ctx;
    const bl_tg_net *n = &s->net;
    const int H = n->H, S = n->NP * B;
    const size_t stride = (size_t)s->w.R * n->NP * H;
    for (int sl = 0; sl < s->n; sl++) {
        const double *hp = s->hyp + (size_t)sl * BL_TG_HYP;
        const int drop = hp[BL_TG_DROP] != 0.0;
        const double da = hp[BL_TG_DA];
        double *d = dx + sl * stride;
        const double *ys = y + sl * stride, *ex = extra ? extra + sl * stride : NULL;
        for (int q = 0; q < S; q++)
            for (int k = 0; k < H; k++) {
                const size_t i = (size_t)q * H + k;
                const double g = drop ? (keep_of(s, sl, B, q, k, which, i0) ? da * d[i] : 0.0) : d[i];
                const double sd = selu_dy(ys[i]);
                d[i] = ex ? g * sd + ex[i] * sd : g * sd;
            }
    }
}

static void cpu_code_back(void *ctx, const bl_tg_state *s, int B, int clean) {
    (void)ctx;
    const bl_tg_net *n = &s->net;
    const int C = n->C;
    const double inv_no = n->NO > 0 ? 1.0 / n->NO : 0.0;
    const size_t stride = (size_t)s->w.R * n->NP * C;
    for (int sl = 0; sl < s->n; sl++) {
        double *dc = s->w.dc + sl * stride, *ck = s->w.ck + sl * stride;
        const double *c = s->w.c + sl * stride;
        const double *dzin = s->w.dzin + (size_t)sl * s->w.R * n->ZI;
        for (int q = 0; q < n->NP * B; q++) {
            const int p = q / B, b = q % B;
            for (int k = 0; k < C; k++) {
                const size_t i = (size_t)q * C + k;
                const double dz = p < n->NE ? dzin[(size_t)b * n->ZI + n->FO + C * p + k]
                                            : dzin[(size_t)b * n->ZI + n->FO + C * n->NE + k] * inv_no;
                if (clean) {
                    ck[i] = dc[i] * selu_dy(ck[i]);
                    dc[i] = dz * selu_dy(c[i]);
                } else {
                    dc[i] = (dz + dc[i]) * selu_dy(c[i]);
                }
            }
        }
    }
}

static void cpu_adam(void *ctx, const bl_tg_state *s, double beta1, double beta2, double eps, long ib) {
    (void)ctx;
    const double bc1 = s->bc[2 * ib], bc2 = s->bc[2 * ib + 1];
    /* the same arithmetic, in the same order, as the kernel table's adam (nn/kernels.h) */
    const double bc2_sqrt = sqrt(bc2);
    for (int sl = 0; sl < s->n; sl++) {
        const double *hp = s->hyp + (size_t)sl * BL_TG_HYP;
        const double wd = hp[BL_TG_WD], step_size = hp[BL_TG_LR] / bc1;
        const size_t o = (size_t)sl * s->net.P;
        double *p = s->W + o, *g = s->G + o, *m = s->M + o, *v = s->Vm + o;
        for (long i = 0; i < s->net.n_params; i++) {
            const double gi = g[i] + wd * p[i];
            m[i] += (1.0 - beta1) * (gi - m[i]);
            v[i] = beta2 * v[i] + (1.0 - beta2) * gi * gi;
            p[i] -= step_size * (m[i] / (sqrt(v[i]) / bc2_sqrt + eps));
            g[i] = 0.0;
        }
    }
}

static void cpu_keep_best(void *ctx, const bl_tg_state *s) {
    (void)ctx;
    for (int sl = 0; sl < s->n; sl++)
        if (s->keep[sl])
            memcpy(s->best + (size_t)sl * s->net.P, s->W + (size_t)sl * s->net.P,
                   (size_t)s->net.n_params * sizeof(double));
}

static void cpu_average(void *ctx, const bl_tg_state *s) {
    (void)ctx;
    const double beta = s->avgk[0], inv = s->avgk[1];
    for (int sl = 0; sl < s->n; sl++) {
        const size_t off = (size_t)sl * (size_t)s->net.P;
        for (size_t i = off; i < off + (size_t)s->net.n_params; i++) {
            s->ema[i] = beta * s->ema[i] + (1.0 - beta) * s->W[i];
            s->avg[i] = s->ema[i] * inv;
        }
    }
}

static const bl_tg_ops cpu_ops = {
    .name = "cpu", .device = 0,
    .open = cpu_open, .close = cpu_close, .alloc = cpu_alloc, .dfree = cpu_free,
    .host_alloc = cpu_alloc, .host_free = cpu_free,
    .put = cpu_put, .get = cpu_put, .copy = cpu_put, .finish = cpu_finish,
    .gemm = cpu_gemm, .gather = cpu_gather, .bias_selu = cpu_bias_selu, .selu_dropout = cpu_selu_dropout,
    .codes = cpu_codes, .recon = cpu_recon, .head = cpu_head, .selu_back_bias = cpu_selu_back_bias,
    .dropout_selu_back = cpu_dropout_selu_back, .code_back = cpu_code_back, .adam = cpu_adam,
    .keep_best = cpu_keep_best, .capture_begin = NULL, .capture_end = NULL, .replay = NULL,
    .capture_why = NULL, .average = cpu_average,
};

const bl_tg_ops *bl_tg_ops_cpu(void) { return &cpu_ops; }
