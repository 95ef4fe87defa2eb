/* vmath.h — SELU, tanh and the exponential they share, as the kernels evaluate them: a scalar form
 * (the reference, and the plain loops of every copy) and, in the vector copies, the same formula on
 * native vectors. Both run the same operations, so a copy differs from the reference only where FMA
 * contraction rounds a multiply-add once instead of twice.
 *
 * eˣ − 1 for x ≤ 0 (all SELU and tanh need): x = k·ln2 + r with |r| ≤ ln2/2 (Cody–Waite split of
 * ln2, k by the round-to-nearest constant 1.5·2⁵²), expm1(r) = r + r²·q(r) with q of degree 9
 * (Chebyshev interpolation of (expm1(r) − r)/r² on [−ln2/2, ln2/2], truncation < 4e-17 relative to
 * expm1), and eˣ − 1 = 2ᵏ·expm1(r) + (2ᵏ − 1), 2ᵏ assembled from the rounding constant's low bits.
 * For x < −40, eˣ − 1 is −1 to double precision, so x is clamped there; NaN stays NaN. Within 2 ulp
 * of libm's expm1; tanh|x| = −t / (t + 2) with t = e^(−2|x|) − 1, within 3 ulp (tests/test_kernels.c).
 */
#ifndef BL_NN_KERN_VMATH_H
#define BL_NN_KERN_VMATH_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "nn/act.h"
#include "nn/kern/isa.h"

#define LAMBDA ((real)BL_SELU_LAMBDA)
#define LALPHA ((real)(BL_SELU_LAMBDA * BL_SELU_ALPHA))

/* The float32 copies (BL_F32) run the same steps in float: a Cody–Waite split of ln2 whose high part
 * has 15 significant bits (k·ln2_hi exact for |k| ≤ 58), the rounding constant 1.5·2²³, 2ᵏ from 23-bit
 * mantissas, and the polynomial's first six terms rounded to float: q₆r⁶ < 4.3e-8 on |r| ≤ ln2/2, so the
 * terms dropped move eʳ − 1 by less than 0.2 float ulp (SELU and tanh within 2 float ulp of libm's,
 * as with all ten). */
#if BL_F32
#define EXPM1_SPLIT                                                                               \
    const real inv_ln2 = 1.44269504088896338700f, ln2_hi = 0x1.62e4p-1f, ln2_lo = 0x1.7f7d1cf7p-20f, \
               round_c = 0x1.8p23f
#else
#define EXPM1_SPLIT                                                                               \
    const real inv_ln2 = 1.44269504088896338700e+00, ln2_hi = 6.93147180369123816490e-01,        \
               ln2_lo = 1.90821492927058770002e-10, round_c = 0x1.8p52
#endif
#define EXPM1_CONSTS                                                                              \
    EXPM1_SPLIT;                                                                                  \
    const real q0 = 0x1.0000000000001p-1, q1 = 0x1.5555555555556p-3, q2 = 0x1.5555555553d68p-5, \
                 q3 = 0x1.11111111109b5p-7, q4 = 0x1.6c16c17889ef1p-10, q5 = 0x1.a01a01a7c2efep-13, \
                 q6 = 0x1.a019b9149a41cp-16, q7 = 0x1.71de0db2f6b19p-19, q8 = 0x1.28917c89a43a7p-22, \
                 q9 = 0x1.af389ecfc4b9cp-26
#if BL_F32 /* float drops q6..q9 (above) */
#define EXPM1_POLY(p, r)                                                                          \
    (void)q6, (void)q7, (void)q8, (void)q9;                                                       \
    p = q5 * r + q4;                                                                              \
    p = p * r + q3;                                                                               \
    p = p * r + q2;                                                                               \
    p = p * r + q1;                                                                               \
    p = p * r + q0;                                                                               \
    p = p * r * r + r
#else
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
#endif

/* ---- scalar ---- */

static BL_INLINE real k_expm1_neg(real x) {
    EXPM1_CONSTS;
    x = x < (real)-40.0 ? (real)-40.0 : x;
    real t = x * inv_ln2 + round_c;
    real kd = t - round_c;
    real r = (x - kd * ln2_hi) - kd * ln2_lo;
    real p;
    EXPM1_POLY(p, r);
    rbits bits;
    memcpy(&bits, &t, sizeof bits);
    bits = (rbits)(bits << R_EXP_BITS) + ((rbits)R_EXP_BIAS << R_EXP_BITS); /* 2^k, k = low bits of t */
    real two_k;
    memcpy(&two_k, &bits, sizeof two_k);
    return two_k * p + (two_k - (real)1.0);
}

static BL_INLINE real k_tanh(real x) {
    real t = k_expm1_neg((real)-2.0 * R_FABS(x));
    return R_COPYSIGN(((real)0.0 - t) / (t + (real)2.0), x);
}

/* Branch-free so loops over units vectorise; NaN stays NaN. */
static BL_INLINE real k_selu(real x) {
    real neg = LALPHA * k_expm1_neg(x > (real)0.0 ? (real)0.0 : x);
    return x > (real)0.0 ? LAMBDA * x : neg;
}
/* d selu / dx from the input x and output y (left derivative at 0, as PyTorch). */
static BL_INLINE real k_selu_d(real x, real y) { return x > (real)0.0 ? LAMBDA : y + LALPHA; }

/* ---- native vectors: m of them at once ----
 * Every step runs over all m vectors before the next: each is a chain of some 25 dependent
 * operations, and interleaving independent chains keeps the FMA units busy where the out-of-order
 * window alone does not. e may equal a. */
#if BL_ISA > 0
#define VM_MAX 20

static BL_INLINE void v_expm1_neg(vd *e, const vd *a, const int m) {
    EXPM1_CONSTS;
    vd x[VM_MAX], t[VM_MAX], r[VM_MAX], p[VM_MAX];
    const vd lo = vd_set1(-40.0);
    for (int i = 0; i < m; i++) x[i] = vd_gt_sel(lo, a[i], lo, a[i]);
    for (int i = 0; i < m; i++) t[i] = x[i] * inv_ln2 + round_c;
    for (int i = 0; i < m; i++) {
        const vd kd = t[i] - round_c;
        r[i] = (x[i] - kd * ln2_hi) - kd * ln2_lo;
    }
#if BL_F32
    (void)q6, (void)q7, (void)q8, (void)q9;
    for (int i = 0; i < m; i++) p[i] = q5 * r[i] + q4;
#else
    for (int i = 0; i < m; i++) p[i] = q9 * r[i] + q8;
    for (int i = 0; i < m; i++) p[i] = p[i] * r[i] + q7;
    for (int i = 0; i < m; i++) p[i] = p[i] * r[i] + q6;
    for (int i = 0; i < m; i++) p[i] = p[i] * r[i] + q5;
    for (int i = 0; i < m; i++) p[i] = p[i] * r[i] + q4;
#endif
    for (int i = 0; i < m; i++) p[i] = p[i] * r[i] + q3;
    for (int i = 0; i < m; i++) p[i] = p[i] * r[i] + q2;
    for (int i = 0; i < m; i++) p[i] = p[i] * r[i] + q1;
    for (int i = 0; i < m; i++) p[i] = p[i] * r[i] + q0;
    for (int i = 0; i < m; i++) p[i] = p[i] * r[i] * r[i] + r[i];
    for (int i = 0; i < m; i++) {
        const vd two_k = (vd)(((vi)t[i] << R_EXP_BITS) + ((rbits)R_EXP_BIAS << R_EXP_BITS));
        e[i] = two_k * p[i] + (two_k - 1.0);
    }
}

static BL_INLINE void v_tanh(vd *y, const vd *x, const int m) {
#if BL_F32
    const int32_t sign = INT32_MIN;
#else
    const int64_t sign = INT64_MIN;
#endif
    vd t[VM_MAX];
    for (int i = 0; i < m; i++) t[i] = (vd)((vi)x[i] & ~sign) * (real)-2.0;
    v_expm1_neg(t, t, m); /* e^(−2|x|) − 1 */
    for (int i = 0; i < m; i++) {
        const vd q = (0.0 - t[i]) / (t[i] + 2.0);
        y[i] = (vd)((vi)q | ((vi)x[i] & sign));
    }
}

static BL_INLINE void v_selu(vd *y, const vd *x, const int m) {
    const vd zero = vd_set1(0.0);
    vd e[VM_MAX];
    for (int i = 0; i < m; i++) e[i] = vd_gt_sel(x[i], zero, zero, x[i]);
    v_expm1_neg(e, e, m);
    for (int i = 0; i < m; i++) y[i] = vd_gt_sel(x[i], zero, x[i] * LAMBDA, e[i] * LALPHA);
}

static BL_INLINE vd v_selu_d(vd x, vd y) { return vd_gt_sel(x, vd_set1(0.0), vd_set1(LAMBDA), y + LALPHA); }
#if VL <= 8
static BL_INLINE v8 v8_selu_d(v8 x, v8 y) {
    for (int i = 0; i < NV; i++) x.q[i] = v_selu_d(x.q[i], y.q[i]);
    return x;
}
static BL_INLINE v4 v4_selu_d(v4 x, v4 y) {
    return v4_gt_sel(x, (v4){0}, (v4){0} + LAMBDA, y + LALPHA);
}
/* SELU of n v8 (n·NV native vectors; n·NV ≤ VM_MAX). */
static BL_INLINE void v8_selu_n(v8 *y, const v8 *x, const int n) { v_selu(y->q, x->q, n * NV); }
static BL_INLINE v8 v8_selu(v8 x) {
    v8_selu_n(&x, &x, 1);
    return x;
}
#endif
#endif /* BL_ISA > 0 */

#endif /* BL_NN_KERN_VMATH_H */
