/* kern/adam.c — Adam's update over one range (kernels.h), compiled once per copy (isa.h). The same
 * operations in the same order in every copy: IEEE division and square root are correctly rounded in
 * vector registers too, and this file is compiled without contraction into FMA, so every copy gives
 * bit-identical results to the plain loop — they only update VL parameters per instruction. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("fp-contract=off")
#elif defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

#include "nn/kern/isa.h"

#include <math.h>

#include "nn/kernels.h"

static BL_INLINE void adam_scalar(size_t i, size_t n, double b1, double b2, double wd, double eps, double step_size,
                                  double bc2_sqrt, double *restrict p, const double *restrict g, double *restrict m,
                                  double *restrict v) {
    for (; i < n; i++) {
        const double gi = g[i] + wd * p[i];
        m[i] += (1.0 - b1) * (gi - m[i]);
        v[i] = b2 * v[i] + (1.0 - b2) * gi * gi;
        /* PyTorch's order: denom = √v/√bc2 + ε; θ += −step_size·(m/denom) */
        p[i] -= step_size * (m[i] / (sqrt(v[i]) / bc2_sqrt + eps));
    }
}

void KFN(bl_kern_adam)(size_t n, const bl_adam_hyper *h, double *p, const double *g, double *m, double *v);
void KFN(bl_kern_adam)(size_t n, const bl_adam_hyper *h, double *p, const double *g, double *m, double *v) {
    const double b1 = h->beta1, b2 = h->beta2, wd = h->weight_decay, eps = h->eps;
    const double step_size = h->lr / h->bc1, bc2_sqrt = sqrt(h->bc2);
    size_t i = 0;
#if BL_ISA > 0
    const vd c1 = vd_set1(1.0 - b1), vb2 = vd_set1(b2), c2 = vd_set1(1.0 - b2), vwd = vd_set1(wd),
             veps = vd_set1(eps), vss = vd_set1(step_size), vbc = vd_set1(bc2_sqrt);
    for (; i + VL <= n; i += VL) {
        const vd pi = vd_ld(p + i), mi = vd_ld(m + i);
        const vd gi = vd_ld(g + i) + vwd * pi;
        const vd mn = mi + c1 * (gi - mi);
        const vd vn = vb2 * vd_ld(v + i) + (c2 * gi) * gi;
#if BL_ISA == 2
        const vd den = _mm512_sqrt_pd(vn) / vbc + veps;
#else
        const vd den = _mm256_sqrt_pd(vn) / vbc + veps;
#endif
        vd_st(m + i, mn);
        vd_st(v + i, vn);
        vd_st(p + i, pi - vss * (mn / den));
    }
#endif
    adam_scalar(i, n, b1, b2, wd, eps, step_size, bc2_sqrt, p, g, m, v);
}
