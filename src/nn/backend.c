/* backend.c — the two CPU backend tables (OpenBLAS + direct small kernel, and portable reference)
 * and the element-wise kernels they share. Semantics of each entry are documented in backend.h.
 * Not here: argument validation (layers.c, adam.c) or any allocation. */
#include "nn/backend.h"

#include <math.h>

/* No contraction of a·b + c into FMA anywhere in this file, whatever the build's C mode (GNU C
 * contracts by default, and AVX-512 brings FMA with it): Adam's copies below must round exactly as
 * the plain loop does. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("fp-contract=off")
#elif defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

static void act_forward(bl_act act, size_t n, const double *x, double *y) {
    switch (act) {
    case BL_ACT_SELU:
        for (size_t i = 0; i < n; i++) {
            const double v = x[i];
            /* expm1 keeps full relative precision for small negative inputs. */
            y[i] = v > 0.0 ? BL_SELU_LAMBDA * v : (BL_SELU_LAMBDA * BL_SELU_ALPHA) * expm1(v);
        }
        break;
    case BL_ACT_TANH:
        for (size_t i = 0; i < n; i++) y[i] = tanh(x[i]);
        break;
    case BL_ACT_IDENTITY:
    default:
        if (y != x)
            for (size_t i = 0; i < n; i++) y[i] = x[i];
        break;
    }
}

static void act_backward(bl_act act, size_t n, const double *x, const double *y,
                         const double *dy, double *dx) {
    switch (act) {
    case BL_ACT_SELU:
        for (size_t i = 0; i < n; i++) {
            const double v = x[i];
            const double d = v > 0.0 ? BL_SELU_LAMBDA : (BL_SELU_LAMBDA * BL_SELU_ALPHA) * exp(v);
            dx[i] += d * dy[i];
        }
        break;
    case BL_ACT_TANH:
        for (size_t i = 0; i < n; i++) dx[i] += (1.0 - y[i] * y[i]) * dy[i];
        break;
    case BL_ACT_IDENTITY:
    default:
        for (size_t i = 0; i < n; i++) dx[i] += dy[i];
        break;
    }
}

static void bias_add(int rows, int cols, const double *b, double *Y, int ldy) {
    for (int r = 0; r < rows; r++) {
        double *y = Y + (size_t)r * ldy;
        for (int j = 0; j < cols; j++) y[j] += b[j];
    }
}

static void bias_grad(int rows, int cols, const double *dY, int lddy, double *db) {
    for (int r = 0; r < rows; r++) {
        const double *d = dY + (size_t)r * lddy;
        for (int j = 0; j < cols; j++) db[j] += d[j];
    }
}

static void axpy(size_t n, double a, const double *x, double *y) {
    for (size_t i = 0; i < n; i++) y[i] += a * x[i];
}

static void scale(size_t n, double a, double *x) {
    for (size_t i = 0; i < n; i++) x[i] *= a;
}

static void fill(size_t n, double v, double *x) {
    for (size_t i = 0; i < n; i++) x[i] = v;
}

static void dropout_forward(size_t n, double a, double b, const uint8_t *mask, const double *x, double *y) {
    const double dropped = a * BL_SELU_ALPHA_PRIME + b;
    for (size_t i = 0; i < n; i++) y[i] = mask[i] ? a * x[i] + b : dropped;
}

static void dropout_backward(size_t n, double a, const uint8_t *mask, const double *dy, double *dx) {
    for (size_t i = 0; i < n; i++)
        if (mask[i]) dx[i] += a * dy[i];
}

static double loss(bl_loss_kind kind, size_t n, const double *pred, const double *target, double *dpred) {
    if (n == 0) return 0.0;
    const double inv = 1.0 / (double)n;
    double sum = 0.0;
    for (size_t i = 0; i < n; i++) {
        const double d = pred[i] - target[i];
        const double ad = fabs(d);
        double l, g;
        switch (kind) {
        case BL_LOSS_MSE:
            l = d * d;
            g = 2.0 * d;
            break;
        case BL_LOSS_L1:
            l = ad;
            g = d > 0.0 ? 1.0 : (d < 0.0 ? -1.0 : 0.0); /* sign(0) = 0, as PyTorch */
            break;
        case BL_LOSS_SMOOTHL1:
        default:
            if (ad < 1.0) {
                l = 0.5 * d * d;
                g = d;
            } else {
                l = ad - 0.5;
                g = d > 0.0 ? 1.0 : -1.0;
            }
            break;
        }
        sum += l;
        if (dpred) dpred[i] = g * inv;
    }
    return sum * inv;
}

/* Adam's update. The same operations in the same order in every copy: IEEE division and square root
 * are correctly rounded in vector registers too, and this file is compiled without contraction into
 * FMA, so the AVX2 and AVX-512 copies give bit-identical results to the plain loop (tested) — they
 * only do 4 or 8 parameters per instruction (the scalar divisions and square roots were a sixth of a
 * pre-training epoch). */
static inline void adam_scalar(size_t i, size_t n, double b1, double b2, double wd, double eps,
                               double step_size, double bc2_sqrt, double *restrict p,
                               const double *restrict g, double *restrict m, double *restrict v) {
    for (; i < n; i++) {
        const double gi = g[i] + wd * p[i];
        m[i] += (1.0 - b1) * (gi - m[i]);
        v[i] = b2 * v[i] + (1.0 - b2) * gi * gi;
        /* same operation order as PyTorch: denom = √v/√bc2 + ε; θ += −step_size·(m/denom) */
        p[i] -= step_size * (m[i] / (sqrt(v[i]) / bc2_sqrt + eps));
    }
}

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__)
#include <immintrin.h>
#define BL_ADAM_MULTIVERSION 1
/* ADAM_VEC(name, target, vector type, width, intrinsic prefix) */
#define ADAM_VEC(NAME, TARGET, VT, W, PFX)                                                        \
    __attribute__((target(TARGET))) static void NAME(size_t n, const bl_adam_hyper *h, double *p,  \
                                                     const double *g, double *m, double *v) {     \
        const double b1 = h->beta1, b2 = h->beta2, wd = h->weight_decay, eps = h->eps;           \
        const double step_size = h->lr / h->bc1, bc2_sqrt = sqrt(h->bc2);                        \
        const VT c1 = PFX##_set1_pd(1.0 - b1), vb2 = PFX##_set1_pd(b2), c2 = PFX##_set1_pd(1.0 - b2), \
                 vwd = PFX##_set1_pd(wd), veps = PFX##_set1_pd(eps), vss = PFX##_set1_pd(step_size), \
                 vbc = PFX##_set1_pd(bc2_sqrt);                                                   \
        size_t i = 0;                                                                             \
        for (; i + W <= n; i += W) {                                                              \
            const VT pi = PFX##_loadu_pd(p + i), mi = PFX##_loadu_pd(m + i);                      \
            const VT gi = PFX##_add_pd(PFX##_loadu_pd(g + i), PFX##_mul_pd(vwd, pi));             \
            const VT mn = PFX##_add_pd(mi, PFX##_mul_pd(c1, PFX##_sub_pd(gi, mi)));               \
            const VT vn = PFX##_add_pd(PFX##_mul_pd(vb2, PFX##_loadu_pd(v + i)),                  \
                                       PFX##_mul_pd(PFX##_mul_pd(c2, gi), gi));                   \
            const VT den = PFX##_add_pd(PFX##_div_pd(PFX##_sqrt_pd(vn), vbc), veps);              \
            PFX##_storeu_pd(m + i, mn);                                                           \
            PFX##_storeu_pd(v + i, vn);                                                           \
            PFX##_storeu_pd(p + i, PFX##_sub_pd(pi, PFX##_mul_pd(vss, PFX##_div_pd(mn, den))));   \
        }                                                                                         \
        adam_scalar(i, n, b1, b2, wd, eps, step_size, bc2_sqrt, p, g, m, v);                      \
    }
ADAM_VEC(adam_v4, "avx512f", __m512d, 8, _mm512)
ADAM_VEC(adam_v3, "avx2", __m256d, 4, _mm256)
#else
#define BL_ADAM_MULTIVERSION 0
#endif

static void adam_plain(size_t n, const bl_adam_hyper *h, double *p, const double *g, double *m, double *v) {
    adam_scalar(0, n, h->beta1, h->beta2, h->weight_decay, h->eps, h->lr / h->bc1, sqrt(h->bc2), p, g, m, v);
}

int bl_backend_adam_copy(int which, size_t n, const bl_adam_hyper *h, double *p, const double *g, double *m,
                         double *v) {
#if BL_ADAM_MULTIVERSION
    if (which == 2 && __builtin_cpu_supports("avx512f")) {
        adam_v4(n, h, p, g, m, v);
        return 1;
    }
    if (which == 1 && __builtin_cpu_supports("avx2")) {
        adam_v3(n, h, p, g, m, v);
        return 1;
    }
#endif
    if (which == 0) {
        adam_plain(n, h, p, g, m, v);
        return 1;
    }
    return 0;
}

static void adam(size_t n, const bl_adam_hyper *h, double *p, const double *g, double *m, double *v) {
#if BL_ADAM_MULTIVERSION
    if (__builtin_cpu_supports("avx512f")) {
        adam_v4(n, h, p, g, m, v);
        return;
    }
    if (__builtin_cpu_supports("avx2")) {
        adam_v3(n, h, p, g, m, v);
        return;
    }
#endif
    adam_plain(n, h, p, g, m, v);
}

static const bl_backend cpu_backend = {
    .name = "cpu", .device = 0, .gemm = bl_gemm_cpu,
    .act_forward = act_forward, .act_backward = act_backward,
    .bias_add = bias_add, .bias_grad = bias_grad,
    .axpy = axpy, .scale = scale, .fill = fill,
    .dropout_forward = dropout_forward, .dropout_backward = dropout_backward,
    .loss = loss, .adam = adam,
};

static const bl_backend ref_backend = {
    .name = "ref", .device = 0, .gemm = bl_gemm_ref,
    .act_forward = act_forward, .act_backward = act_backward,
    .bias_add = bias_add, .bias_grad = bias_grad,
    .axpy = axpy, .scale = scale, .fill = fill,
    .dropout_forward = dropout_forward, .dropout_backward = dropout_backward,
    .loss = loss, .adam = adam_plain,
};

const bl_backend *bl_backend_cpu(void) { return &cpu_backend; }
const bl_backend *bl_backend_ref(void) { return &ref_backend; }
