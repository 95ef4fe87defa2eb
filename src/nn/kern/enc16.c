/* kern/enc16.c — the encoder on 16-float vectors in the float32 AVX-512 copy: its first layer, once per
 * distinct value (a1 = G0·x two values a vector, bl_kern_enc16a1; G0's gradient kept in registers over the
 * values, bl_kern_enc16g0), and its per-slot layers after it,
 * four slots to a 16-float vector; the other copies compile nothing here (the
 * float32 avx2 copy puts two slots in an 8-float vector, pass.c's encoder_forward); here
 *   d1 = s1·mk + ad        two slots a vector
 *   a2 = G3·d1             four slots a vector: lane 4q + c is slot q's unit c, each product's d1 value
 *                          fetched by one two-source permute
 *   c = selu(a2)           the same vectors, sixteen slots a step
 *   P = scale·Z0[:, b]·c   two slots a vector
 * with every value's operations those of the avx2 copy's 8-float form, in its order, each multiply-add
 * the FMA that form writes out (where a sum starts with two products, the first fused: fma(g₀, d₀,
 * g₁·d₁)), so the float32 avx2 and avx512 copies still train the same model bit for bit
 * (tests/test_kernels.c). A short group repeats its last slot and stores only the slots it has. */
#define BL_KERN_WIDE 1 /* vd: 16 floats in the float32 AVX-512 copy (isa.h) */
#include "nn/kern/vmath.h"

#if BL_F32 && BL_ISA == 2
#include "nn/bwork.h"
#include "nn/kern/enc16.h"

#define OD1 BL_O_D1(8, 4, 8)
#define OP  BL_O_P(8, 4, 8)
#define ODP BL_O_DP(8, 4, 8)
#define OA2 BL_O_A2(8, 4, 8)
#define OC  BL_O_C(8, 4, 8)
#define OS1 BL_O_S1(8, 4, 8)
#define OX  BL_O_X(8, 4, 8)
#define OA1 BL_O_A1(8, 4, 8)
#define OACC BL_O_ACC(8, 4, 8)

typedef float vy __attribute__((vector_size(32)));

static BL_INLINE vy vy_ld(const float *p) { vy v; memcpy(&v, p, sizeof v); return v; }
static BL_INLINE void vy_st(float *p, vy v) { memcpy(p, &v, sizeof v); }
static BL_INLINE vd vd_pair(const float *lo, const float *hi) { /* 8 floats from each */
    return _mm512_insertf32x8(_mm512_castps256_ps512(vy_ld(lo)), vy_ld(hi), 1);
}
static BL_INLINE vd vd_perm(vd v, const vi idx) { return _mm512_permutexvar_ps((__m512i)idx, v); }
static BL_INLINE vd vd_perm2(vd a, const vi idx, vd b) { return _mm512_permutex2var_ps(a, (__m512i)idx, b); }
static BL_INLINE vd fmz(vd a, vd b, vd c) { return _mm512_fmadd_ps(a, b, c); }
static BL_INLINE void st8(float *p, vd v, int hi) {
    const vy h = hi ? _mm512_extractf32x8_ps(v, 1) : _mm512_castps512_ps256(v);
    memcpy(p, &h, sizeof h);
}
static BL_INLINE void st4(float *p, vd v, int q) {
    __m128 h;
    switch (q) { /* the lane index must be a constant */
    case 0: h = _mm512_extractf32x4_ps(v, 0); break;
    case 1: h = _mm512_extractf32x4_ps(v, 1); break;
    case 2: h = _mm512_extractf32x4_ps(v, 2); break;
    default: h = _mm512_extractf32x4_ps(v, 3); break;
    }
    memcpy(p, &h, sizeof h);
}

#define GS 16 /* slots a step: four vectors through the SELU together */

/* Z0's block column c twice (wz2), and the permutes that put code c of slots 2j, 2j + 1 of a group of
 * four in the lanes 8h + l (cidx). */
static BL_INLINE void z_setup(const float *WTz, vd wz2[4], vi cidx[2][4]) {
    for (int c = 0; c < 4; c++) wz2[c] = _mm512_broadcast_f32x8(vy_ld(WTz + 8 * c));
    for (int l = 0; l < 16; l++)
        for (int j = 0; j < 2; j++)
            for (int c = 0; c < 4; c++) cidx[j][c][l] = 4 * (2 * j + l / 8) + c;
}

/* P = scale·Z0[:, b]·c and dP = 0 for the slots 4·q4 … 4·q4 + 3 (< ns) whose codes are the lanes of c4. */
static BL_INLINE void z_terms(const vd wz2[4], vd vscale, vi cidx[2][4], vd c4, float *const *rec, int q4, int ns) {
    for (int j = 0; j < 2; j++) {
        vd p = fmz(wz2[0], vd_perm(c4, cidx[j][0]), wz2[1] * vd_perm(c4, cidx[j][1]));
        for (int cc = 2; cc < 4; cc++) p = fmz(wz2[cc], vd_perm(c4, cidx[j][cc]), p);
        p = p * vscale;
        for (int t = 0; t < 2; t++) {
            const int s = 4 * q4 + 2 * j + t;
            if (s >= ns) continue;
            st8(rec[s] + OP, p, t);
            memset(rec[s] + ODP, 0, 8 * sizeof(float));
        }
    }
}

void bl_kern_enc16_avx512_f32(const float *G3T, const float *WTz, float scale, float *base, size_t ST,
                              const float *mask, size_t MS, const uint32_t *first, size_t n) {
    vd g3q[8], wz2[4]; /* G3's column k four times (4 units × 4 slots); Z0's column c twice */
    for (int k = 0; k < 8; k++) g3q[k] = _mm512_broadcast_f32x4(_mm_loadu_ps(G3T + 4 * k));
    const vd vscale = _mm512_set1_ps(scale);
    vi didx[8], cidx[2][4]; /* lane 4q + u ← d1 of slot q, unit k; lane 8h + l ← code c of slot 2j + h */
    z_setup(WTz, wz2, cidx);
    for (int l = 0; l < 16; l++)
        for (int k = 0; k < 8; k++) didx[k][l] = 8 * (l / 4) + k;
    for (size_t i0 = 0; i0 < n; i0 += GS) {
        const int ns = n - i0 < GS ? (int)(n - i0) : GS;
        float *rec[GS];
        vd a[GS / 4];
        for (int s = 0; s < GS; s++) rec[s] = base + (i0 + (size_t)(s < ns ? s : ns - 1)) * ST;
        for (int q4 = 0; q4 < GS / 4; q4++) {
            vd d[2];
            for (int h = 0; h < 2; h++) { /* slots 4·q4 + 2h and + 1 */
                const int s0 = 4 * q4 + 2 * h, s1 = s0 + 1;
                const size_t j0 = i0 + (size_t)(s0 < ns ? s0 : ns - 1), j1 = i0 + (size_t)(s1 < ns ? s1 : ns - 1);
                const float *m0 = mask + j0 * MS, *m1 = mask + j1 * MS;
                d[h] = fmz(vd_pair(base + (size_t)first[j0] * ST + OS1, base + (size_t)first[j1] * ST + OS1),
                           vd_pair(m0, m1), vd_pair(m0 + 8, m1 + 8));
            }
            for (int h = 0; h < 2; h++)
                for (int t = 0; t < 2; t++)
                    if (4 * q4 + 2 * h + t < ns) st8(rec[4 * q4 + 2 * h + t] + OD1, d[h], t);
            vd acc = fmz(g3q[0], vd_perm2(d[0], didx[0], d[1]), g3q[1] * vd_perm2(d[0], didx[1], d[1]));
            for (int k = 2; k < 8; k++) acc = fmz(g3q[k], vd_perm2(d[0], didx[k], d[1]), acc);
            a[q4] = acc;
        }
        vd c[GS / 4];
        v_selu(c, a, GS / 4);
        for (int q4 = 0; q4 < GS / 4 && 4 * q4 < ns; q4++) {
            for (int q = 0; q < 4; q++)
                if (4 * q4 + q < ns) {
                    st4(rec[4 * q4 + q] + OA2, a[q4], q);
                    st4(rec[4 * q4 + q] + OC, c[q4], q);
                }
            z_terms(wz2, vscale, cidx, c[q4], rec, q4, ns);
        }
    }
}

void bl_kern_enc16p_avx512_f32(const float *WTz, float scale, float *base, size_t ST, size_t n) {
    vd wz2[4];
    vi cidx[2][4];
    z_setup(WTz, wz2, cidx);
    const vd vscale = _mm512_set1_ps(scale);
    for (size_t i0 = 0; i0 < n; i0 += GS) {
        const int ns = n - i0 < GS ? (int)(n - i0) : GS;
        float *rec[GS];
        for (int s = 0; s < GS; s++) rec[s] = base + (i0 + (size_t)(s < ns ? s : ns - 1)) * ST;
        for (int q4 = 0; q4 < GS / 4 && 4 * q4 < ns; q4++) { /* the codes as the full kernel holds them */
            vd c = _mm512_castps128_ps512(_mm_loadu_ps(rec[4 * q4] + OC));
            c = _mm512_insertf32x4(c, _mm_loadu_ps(rec[4 * q4 + 1] + OC), 1);
            c = _mm512_insertf32x4(c, _mm_loadu_ps(rec[4 * q4 + 2] + OC), 2);
            c = _mm512_insertf32x4(c, _mm_loadu_ps(rec[4 * q4 + 3] + OC), 3);
            z_terms(wz2, vscale, cidx, c, rec, q4, ns);
        }
    }
}
void bl_kern_enc16dup_avx512_f32(const float *G0T, float *g0td) {
    vi dup;
    for (int l = 0; l < 16; l++) dup[l] = l / 2;
    for (int k = 0; k < 40; k++) vd_st(g0td + 16 * k, vd_perm(_mm512_castps256_ps512(vy_ld(G0T + 8 * k)), dup));
}

/* Where input k of a pair of values lies in its interleaved copy (xpair): the 64-bit {x₀[k], x₁[k]}
 * that the 512-bit unpacks of inputs 0–15 and 16–31 (lo then hi, 32 floats each) and the 256-bit ones
 * of inputs 32–39 (16 floats) put at this float offset. */
static BL_INLINE int xp_off(int k) {
    const int blk = k < 32 ? k / 16 : 2, kk = k < 32 ? k % 16 : k - 32, r = kk % 4;
    return 32 * blk + (r < 2 ? 0 : (blk < 2 ? 16 : 8)) + 4 * (kk / 4) + 2 * (r % 2);
}
static BL_INLINE void xpair(float *xp, const float *x0, const float *x1) {
    for (int blk = 0; blk < 2; blk++) {
        const vd a = vd_ld(x0 + 16 * blk), b = vd_ld(x1 + 16 * blk);
        vd_st(xp + 32 * blk, _mm512_unpacklo_ps(a, b));
        vd_st(xp + 32 * blk + 16, _mm512_unpackhi_ps(a, b));
    }
    const vy a = vy_ld(x0 + 32), b = vy_ld(x1 + 32);
    vy_st(xp + 64, _mm256_unpacklo_ps(a, b));
    vy_st(xp + 72, _mm256_unpackhi_ps(a, b));
}
static BL_INLINE vd bcast2(const float *p) { /* the two floats at p, alternating across the lanes */
    double d;
    memcpy(&d, p, sizeof d);
    return _mm512_castpd_ps(_mm512_set1_pd(d));
}

/* NQ pairs of values (n ≤ 2·NQ of them; a short group repeats its last value). */
static BL_INLINE void first_layer_pairs(const float *restrict g0td, const float *const *xs, float *const *recs,
                                        const int n, const int NQ) {
    _Alignas(64) float xp[4][80];
    for (int q = 0; q < NQ; q++) {
        const int j0 = 2 * q < n ? 2 * q : n - 1, j1 = 2 * q + 1 < n ? 2 * q + 1 : n - 1;
        xpair(xp[q], xs[j0], xs[j1]);
    }
    vd a[4], b[4], s[4];
    const vd g0 = vd_ld(g0td), g1 = vd_ld(g0td + 16);
    for (int q = 0; q < NQ; q++) a[q] = g0 * bcast2(xp[q] + xp_off(0)), b[q] = g1 * bcast2(xp[q] + xp_off(1));
#pragma GCC unroll 19
    for (int k = 2; k < 40; k += 2) {
        const vd ga = vd_ld(g0td + 16 * k), gb = vd_ld(g0td + 16 * k + 16);
        for (int q = 0; q < NQ; q++) {
            a[q] = fmz(ga, bcast2(xp[q] + xp_off(k)), a[q]);
            b[q] = fmz(gb, bcast2(xp[q] + xp_off(k + 1)), b[q]);
        }
    }
    for (int q = 0; q < NQ; q++) a[q] = a[q] + b[q];
    v_selu(s, a, NQ);
    vi odd; /* lanes 0–7 ← the even lanes (the pair's first value), 8–15 ← the odd ones */
    for (int l = 0; l < 16; l++) odd[l] = l < 8 ? 2 * l : 2 * (l - 8) + 1;
    for (int q = 0; q < NQ; q++) {
        const vd av = vd_perm(a[q], odd), sv = vd_perm(s[q], odd);
        for (int t = 0; t < 2; t++) {
            if (2 * q + t >= n) break;
            float *rec = recs[2 * q + t];
            st8(rec + OA1, av, t);
            st8(rec + OS1, sv, t);
            memset(rec + OACC, 0, 8 * sizeof(float));
        }
    }
}

void bl_kern_enc16a1_avx512_f32(const float *g0td, const float *const *xs, float *const *recs, int n) {
    if (n > 4) first_layer_pairs(g0td, xs, recs, n, 4);
    else if (n > 2) first_layer_pairs(g0td, xs, recs, n, 2);
    else first_layer_pairs(g0td, xs, recs, n, 1);
}

void bl_kern_enc16g0_avx512_f32(float *G0, const float *base, size_t ST, const uint32_t *first, size_t n) {
    vd ga[8], gb[8], gt[4]; /* row h's inputs 0–15 and 16–31; rows 2j and 2j + 1's inputs 32–39 */
    vi tidx[4];             /* lanes 0–7 ← unit 2j, lanes 8–15 ← unit 2j + 1 */
    for (int h = 0; h < 8; h++) ga[h] = vd_ld(G0 + 40 * h), gb[h] = vd_ld(G0 + 40 * h + 16);
    for (int j = 0; j < 4; j++) {
        gt[j] = vd_pair(G0 + 80 * j + 32, G0 + 80 * j + 72);
        for (int l = 0; l < 16; l++) tidx[j][l] = 2 * j + l / 8;
    }
    for (size_t i = 0; i < n; i++) {
        if (first[i] != i) continue;
        const float *x = base + i * ST + OX, *acc = base + i * ST + OACC;
        const vd x0 = vd_ld(x), x1 = vd_ld(x + 16), x2 = _mm512_broadcast_f32x8(vy_ld(x + 32));
        for (int h = 0; h < 8; h++) {
            const vd a = _mm512_set1_ps(acc[h]); /* keeps a zero's sign, as outer_add's product does */
            ga[h] = fmz(a, x0, ga[h]);
            gb[h] = fmz(a, x1, gb[h]);
        }
        const vd ac = _mm512_castps256_ps512(vy_ld(acc));
        for (int j = 0; j < 4; j++) gt[j] = fmz(vd_perm(ac, tidx[j]), x2, gt[j]);
    }
    for (int h = 0; h < 8; h++) vd_st(G0 + 40 * h, ga[h]), vd_st(G0 + 40 * h + 16, gb[h]);
    for (int j = 0; j < 4; j++) st8(G0 + 80 * j + 32, gt[j], 0), st8(G0 + 80 * j + 72, gt[j], 1);
}
#else
typedef int bl_kern_enc16_unused; /* this copy has no 16-float encoder */
#endif
