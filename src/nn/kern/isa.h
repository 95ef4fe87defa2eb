/* isa.h — what a kernel file is compiled for. Every file of kern/ is compiled once per copy, with
 * BL_ISA set by meson (src/nn/meson.build) together with the matching compiler flags:
 *   BL_ISA 0  generic  portable C, no contraction into FMA: the reference every copy is checked against
 *   BL_ISA 1  avx2     -march=x86-64-v3, FMA contraction, 4-double vectors
 *   BL_ISA 2  avx512   -march=x86-64-v4, FMA contraction, 8-double vectors
 * and each once more with BL_F32 = 1: the float32 copies (`real` is float; the same source).
 * KFN(name) gives a function its copy's suffix (name_generic, name_avx2, name_avx512; name_generic_f32, …).
 * In the vector copies: vd is one native vector of VL reals, v8 holds 8 reals (one hidden layer of the
 * paper's network) in NV = 8 / VL native vectors, v4 is a 4-real vector (a code). The float32 copies
 * use 8-float vectors on AVX2 and AVX-512 alike: a hidden layer of 8 units is one 256-bit vector, so
 * both run the float64 copies' kernels with twice the lanes per byte (AVX-512 adds its 32 registers
 * and EVEX forms). Files that define BL_KERN_WIDE get 16-float vectors in the float32 AVX-512 copy:
 * predict.c (samples across the lanes), dec16.c (the decoder, two to four slots per vector) and enc16.c (the
 * encoder's per-slot layers, two and four slots per vector).
 */
#ifndef BL_NN_KERN_ISA_H
#define BL_NN_KERN_ISA_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#ifndef BL_ISA
#error "kern/ files are compiled per copy with -DBL_ISA=0|1|2 (src/nn/meson.build)"
#endif

#ifndef BL_F32
#define BL_F32 0
#endif

#if BL_F32
#define KSUF(name, isa) name##_##isa##_f32
typedef float real;
typedef uint32_t rbits;            /* a real's bits */
#define R_EXP_BITS 23              /* mantissa bits: where the exponent starts */
#define R_EXP_BIAS 127
#define R_FABS fabsf
#define R_COPYSIGN copysignf
#else
#define KSUF(name, isa) name##_##isa
typedef double real;
typedef uint64_t rbits;
#define R_EXP_BITS 52
#define R_EXP_BIAS 1023
#define R_FABS fabs
#define R_COPYSIGN copysign
#endif

#if BL_ISA == 0
#define KFN(name) KSUF(name, generic)
#elif BL_ISA == 1
#define KFN(name) KSUF(name, avx2)
#elif BL_ISA == 2
#define KFN(name) KSUF(name, avx512)
#else
#error "BL_ISA must be 0, 1 or 2"
#endif

#if defined(__GNUC__)
#define BL_INLINE inline __attribute__((always_inline))
#else
#define BL_INLINE inline
#endif

/* A training pass runs with subnormal floats flushed to zero (MXCSR FTZ and DAZ), in every copy, and
 * gives the caller's thread its mode back. Weights that weight decay drives to zero pass through the
 * subnormal range, where each Intel multiply-add on them takes a microcode assist: the float32 pagerank
 * pre-training ran 2.5x slower on a Xeon for it (bench/README.md, "Subnormals"). */
#if defined(__SSE__)
#include <xmmintrin.h>
typedef unsigned int bl_fpflush;
static inline bl_fpflush bl_fpflush_enter(void) {
    const unsigned int m = _mm_getcsr();
    _mm_setcsr(m | 0x8040u); /* FTZ (bit 15), DAZ (bit 6) */
    return m;
}
static inline void bl_fpflush_leave(bl_fpflush m) { _mm_setcsr(m); }
#else
typedef int bl_fpflush; /* no such mode to set here: subnormals are computed as IEEE says */
static inline bl_fpflush bl_fpflush_enter(void) { return 0; }
static inline void bl_fpflush_leave(bl_fpflush m) { (void)m; }
#endif

/* A layer of the training pass (pass.c): a function of its own, whose register allocation is its own;
 * GCC still specialises it for the paper's constant dimensions (its .constprop clones). Pre-training
 * measured 2-9 % faster (by copy) than with every layer inlined into one function. */
#if defined(__GNUC__)
#define BL_LAYER __attribute__((noinline))
#else
#define BL_LAYER
#endif

#if BL_ISA > 0
#if !defined(__GNUC__)
#error "the vector copies need GCC or Clang vector extensions"
#endif
#if !defined(__clang__)
/* Vector helpers are always inlined, so no call passes a vector in a register of another width;
 * GCC's note that such a call's ABI would differ is moot. */
#pragma GCC diagnostic ignored "-Wpsabi"
#endif
#include <immintrin.h>

#if BL_F32 && BL_ISA == 2 && defined(BL_KERN_WIDE) /* 16 floats: files that vectorise across samples */
#define VL 16
typedef float vd __attribute__((vector_size(64)));
typedef int32_t vi __attribute__((vector_size(64)));
typedef float v4 __attribute__((vector_size(16)));
#elif BL_F32 /* 8 floats in one 256-bit vector on both instruction sets (see the top) */
#define VL 8
typedef float vd __attribute__((vector_size(32)));
typedef int32_t vi __attribute__((vector_size(32)));
typedef float v4 __attribute__((vector_size(16)));
#elif BL_ISA == 2
#define VL 8
typedef double vd __attribute__((vector_size(64)));
typedef int64_t vi __attribute__((vector_size(64)));
typedef double v4 __attribute__((vector_size(32)));
#else
#define VL 4
typedef double vd __attribute__((vector_size(32)));
typedef int64_t vi __attribute__((vector_size(32)));
typedef double v4 __attribute__((vector_size(32)));
#endif
#if VL <= 8
#define NV (8 / VL)
typedef struct v8 { vd q[NV]; } v8;
#endif

/* Loads and stores through memcpy: one unaligned vector move, no aliasing assumptions. */
static BL_INLINE vd vd_ld(const real *p) { vd v; memcpy(&v, p, sizeof v); return v; }
static BL_INLINE void vd_st(real *p, vd v) { memcpy(p, &v, sizeof v); }
static BL_INLINE vd vd_set1(real x) { return (vd){0} + x; }
static BL_INLINE v4 v4_ld(const real *p) { v4 v; memcpy(&v, p, sizeof v); return v; }
static BL_INLINE void v4_st(real *p, v4 v) { memcpy(p, &v, sizeof v); }

/* Per-lane selects on comparisons, through the instruction set's own compare-and-blend (GCC's generic
 * vector comparisons cost a mask conversion more on AVX-512). */
static BL_INLINE vd vd_gt_sel(vd x, vd y, vd a, vd b) { /* x > y ? a : b (false for NaN) */
#if BL_F32 && VL == 16
    return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, y, _CMP_GT_OQ), b, a);
#elif BL_F32
    return _mm256_blendv_ps(b, a, _mm256_cmp_ps(x, y, _CMP_GT_OQ));
#elif BL_ISA == 2
    return _mm512_mask_blend_pd(_mm512_cmp_pd_mask(x, y, _CMP_GT_OQ), b, a);
#else
    return _mm256_blendv_pd(b, a, _mm256_cmp_pd(x, y, _CMP_GT_OQ));
#endif
}
static BL_INLINE v4 v4_gt_sel(v4 x, v4 y, v4 a, v4 b) {
#if BL_F32
    return _mm_blendv_ps(b, a, _mm_cmp_ps(x, y, _CMP_GT_OQ));
#else
    return _mm256_blendv_pd(b, a, _mm256_cmp_pd(x, y, _CMP_GT_OQ));
#endif
}
/* Lanes where x is NaN (all ones), for a median that must not hide a NaN member. */
static BL_INLINE vd vd_nan_or(vd acc, vd x) {
#if BL_F32 && VL == 16
    return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), acc, vd_set1(NAN));
#elif BL_F32
    return _mm256_blendv_ps(acc, vd_set1(NAN), _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
#elif BL_ISA == 2
    return _mm512_mask_blend_pd(_mm512_cmp_pd_mask(x, x, _CMP_UNORD_Q), acc, vd_set1(NAN));
#else
    return _mm256_blendv_pd(acc, vd_set1(NAN), _mm256_cmp_pd(x, x, _CMP_UNORD_Q));
#endif
}
static BL_INLINE vd vd_min(vd a, vd b) { /* a < b ? a : b, as a compare-exchange needs */
#if BL_F32 && VL == 16
    return _mm512_min_ps(a, b);
#elif BL_F32
    return _mm256_min_ps(a, b);
#elif BL_ISA == 2
    return _mm512_min_pd(a, b);
#else
    return _mm256_min_pd(a, b);
#endif
}
static BL_INLINE vd vd_max(vd a, vd b) {
#if BL_F32 && VL == 16
    return _mm512_max_ps(a, b);
#elif BL_F32
    return _mm256_max_ps(a, b);
#elif BL_ISA == 2
    return _mm512_max_pd(a, b);
#else
    return _mm256_max_pd(a, b);
#endif
}

#if VL <= 8
/* v8 arithmetic, one native vector at a time. */
static BL_INLINE v8 v8_ld(const real *p) { v8 r; for (int i = 0; i < NV; i++) r.q[i] = vd_ld(p + VL * i); return r; }
static BL_INLINE void v8_st(real *p, v8 a) { for (int i = 0; i < NV; i++) vd_st(p + VL * i, a.q[i]); }
static BL_INLINE v8 v8_set1(real x) { v8 r; for (int i = 0; i < NV; i++) r.q[i] = vd_set1(x); return r; }
static BL_INLINE v8 v8_add(v8 a, v8 b) { for (int i = 0; i < NV; i++) a.q[i] += b.q[i]; return a; }
static BL_INLINE v8 v8_sub(v8 a, v8 b) { for (int i = 0; i < NV; i++) a.q[i] -= b.q[i]; return a; }
static BL_INLINE v8 v8_mul(v8 a, v8 b) { for (int i = 0; i < NV; i++) a.q[i] *= b.q[i]; return a; }
static BL_INLINE v8 v8_muls(v8 a, real s) { for (int i = 0; i < NV; i++) a.q[i] *= s; return a; }
static BL_INLINE v8 v8_fma(v8 a, v8 b, v8 c) { for (int i = 0; i < NV; i++) c.q[i] = a.q[i] * b.q[i] + c.q[i]; return c; }
static BL_INLINE v8 v8_fmas(v8 a, real s, v8 c) { for (int i = 0; i < NV; i++) c.q[i] = a.q[i] * s + c.q[i]; return c; }
/* lane k of a v8 */
static BL_INLINE real v8_lane(const v8 *a, int k) { return a->q[k / VL][k % VL]; }
#endif /* VL <= 8 */
#endif /* BL_ISA > 0 */

#endif /* BL_NN_KERN_ISA_H */
