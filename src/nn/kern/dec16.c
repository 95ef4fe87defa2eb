/* kern/dec16.c — the decoder of the paper's dimensions (code 4 → 8 → 40) in the float32 AVX-512 copy, on
 * 16-float vectors; the other copies compile nothing here. It computes what pass.c's vdec_chunk computes
 * with 8-float vectors — the same operations on every value, in the same order — so the float32 avx2 and
 * avx512 copies still train the same model bit for bit (tests/test_kernels.c); only the lanes are
 * arranged so that one instruction does twice the work where the processor executes 512 bits at once:
 *   A  b1 = H0·code, e1 = selu(b1)·mk + ad      per slot; the SELU two slots per vector
 *   B  r = H3·e1                                 two slots per step: outputs 0–15, 16–31 of each and
 *                                                outputs 32–39 of both in one vector
 *   C  y = tanh(r), loss, dr                     the same three-and-a-half vectors a pair
 *   D  de1 = H3ᵀ·dr                              lanes 2h, 2h+1: unit h of a pair's two slots
 *   E  GH3 += drᵀ·e1                             kept transposed (unit h's 40 outputs in a row) so a
 *                                                slot's dr is read as it lies
 *   F  db1 as vdec_chunk, 8 floats a slot; dcd = H0ᵀ·db1 four slots a vector
 * A chunk of an odd number of slots pairs its last slot with itself and keeps one of the two results.
 * Measured: the per-row pagerank-shaped epoch 1.25x faster than the 8-float kernel on a Zen 5 core
 * (bench/README.md, "Float32 copies"). */
#define BL_KERN_WIDE 1 /* vd: 16 floats in the float32 AVX-512 copy (isa.h) */
#include "nn/kern/vmath.h"

#if BL_F32 && BL_ISA == 2
#include "nn/kern/dec16.h"

typedef float vy __attribute__((vector_size(32))); /* 8 floats: one slot's hidden layer */
typedef int32_t vyi __attribute__((vector_size(32)));

static BL_INLINE vy vy_ld(const float *p) { vy v; memcpy(&v, p, sizeof v); return v; }
static BL_INLINE void vy_st(float *p, vy v) { memcpy(p, &v, sizeof v); }
static BL_INLINE vd vd_pair(const float *lo, const float *hi) { /* 8 floats from each */
    return _mm512_insertf32x8(_mm512_castps256_ps512(vy_ld(lo)), vy_ld(hi), 1);
}
static BL_INLINE vd vd_dup8(const float *p) { return _mm512_broadcast_f32x8(vy_ld(p)); }
static BL_INLINE vy vd_lo(vd v) { return _mm512_castps512_ps256(v); }
static BL_INLINE vy vd_hi(vd v) { return _mm512_extractf32x8_ps(v, 1); }
static BL_INLINE vd vd_bcast2(const float *p) { /* the two floats at p, alternating across the lanes */
    double d;
    memcpy(&d, p, sizeof d);
    return _mm512_castpd_ps(_mm512_set1_pd(d));
}
static BL_INLINE vd vd_perm(vd v, const vi idx) { return _mm512_permutexvar_ps((__m512i)idx, v); }
static BL_INLINE vd vd_perm2(vd a, const vi idx, vd b) { return _mm512_permutex2var_ps(a, (__m512i)idx, b); }
/* Every multiply-add written out as the FMA that vdec_chunk runs (its float32 form writes them out too,
 * pass.c's vd_fmadd): left to contraction, a sum that starts with two products (p0 + p1, then + p2 …)
 * gets one of them fused and the other rounded, which one depending on how GCC compiled the loop, and -O0
 * fuses nothing. vdec_chunk's forms are those GCC 12 -O3 chose before they were written out: phase A and
 * the first slot of B fuse the first product, fma(h₀, e₀, h₁·e₁), the second slot of B the second,
 * fma(h₁, e₁, h₀·e₀), the dcd chain the first; tests/test_kernels.c holds the two files to the bit. */
static BL_INLINE vd fmz(vd a, vd b, vd c) { return _mm512_fmadd_ps(a, b, c); }
static BL_INLINE vy fmy(vy a, vy b, vy c) { return _mm256_fmadd_ps(a, b, c); }
/* Broadcasts that keep a zero's sign (isa.h's vd_set1 adds to +0, which turns −0 into +0). */
static BL_INLINE vd bz(float a) { return _mm512_set1_ps(a); }
static BL_INLINE vy by(float a) { return _mm256_set1_ps(a); }
static BL_INLINE vy vy_selu_d(vy x, vy y) { /* as v_selu_d, 8 lanes */
    return _mm256_blendv_ps(y + LALPHA, (vy){0} + LAMBDA, _mm256_cmp_ps(x, (vy){0}, _CMP_GT_OQ));
}

#define DCH 32 /* slots per chunk, as vdec_chunk's */
#define PB 2   /* slot pairs a step in B (ten accumulators), and 4 in D */

static BL_INLINE void chunk(const float *restrict H0T, const float *restrict H0, const float *restrict H3T,
                            const float (*restrict H3D)[16], float (*restrict GT)[40], vy *restrict gh0t,
                            const float *const *code, const float *const *x, const float *const *m,
                            const float *w, float *const *dcd, vy *restrict e2, int grad_h, int grad_in,
                            const int ns) {
    _Alignas(64) float B1[DCH][8], T1[DCH][8], E1[DCH][8], R[DCH][40], DE1[DCH][8];
    _Alignas(64) float DRP[DCH / 2][40][2]; /* dr of a pair's two slots, output by output */
    const int np = (ns + 1) / 2;
#define T_OF(p) (2 * (p) + 1 < ns ? 2 * (p) + 1 : 2 * (p)) /* the pair's second slot (itself at an odd end) */

    /* A */
    const vy h0t0 = vy_ld(H0T), h0t1 = vy_ld(H0T + 8), h0t2 = vy_ld(H0T + 16), h0t3 = vy_ld(H0T + 24);
    for (int s = 0; s < ns; s++) {
        const float *cs = code[s];
        vy b = fmy(h0t0, by(cs[0]), h0t1 * cs[1]);
        b = fmy(h0t2, by(cs[2]), b);
        b = fmy(h0t3, by(cs[3]), b);
        vy_st(B1[s], b);
    }
    if (ns & 1) memset(B1[ns], 0, sizeof B1[ns]);
    for (int q0 = 0; q0 < np; q0 += 8) {
        const int k = np - q0 < 8 ? np - q0 : 8;
        vd t[8];
        for (int q = 0; q < k; q++) t[q] = vd_ld(B1[2 * (q0 + q)]);
        v_selu(t, t, k);
        for (int q = 0; q < k; q++) vd_st(T1[2 * (q0 + q)], t[q]);
    }
    for (int s = 0; s < ns; s++) vy_st(E1[s], fmy(vy_ld(T1[s]), vy_ld(m[s]), vy_ld(m[s] + 8)));

    /* B: per pair (s, t) outputs 0–15 and 16–31 of each slot, and 32–39 of s and of t in one vector */
    const vi lane_hi = {0, 0, 0, 0, 0, 0, 0, 0, 8, 8, 8, 8, 8, 8, 8, 8};
    for (int p0 = 0; p0 < np; p0 += PB) {
        vd a0[PB], a1[PB], b0[PB], b1[PB], mm[PB], ep[PB];
        int sv[PB], tv[PB];
        for (int q = 0; q < PB; q++) {
            const int p = p0 + q < np ? p0 + q : np - 1;
            sv[q] = 2 * p;
            tv[q] = T_OF(p);
            ep[q] = vd_pair(E1[sv[q]], E1[tv[q]]);
        }
        {
            const vd h0 = vd_ld(H3T), h1 = vd_ld(H3T + 16), hm = vd_dup8(H3T + 32);
            const vd g0 = vd_ld(H3T + 40), g1 = vd_ld(H3T + 56), gm = vd_dup8(H3T + 72);
            for (int q = 0; q < PB; q++) {
                const float es = E1[sv[q]][0], et = E1[tv[q]][0], fs = E1[sv[q]][1], ft = E1[tv[q]][1];
                a0[q] = fmz(h0, bz(es), g0 * fs);
                a1[q] = fmz(h1, bz(es), g1 * fs);
                b0[q] = fmz(g0, bz(ft), h0 * et);
                b1[q] = fmz(g1, bz(ft), h1 * et);
                const vd e0 = vd_perm(ep[q], lane_hi), e1 = vd_perm(ep[q], lane_hi + 1);
                mm[q] = _mm512_mask_blend_ps(0xFF00, fmz(hm, e0, gm * e1), fmz(gm, e1, hm * e0));
            }
        }
        for (int k = 2; k < 8; k++) {
            const vd h0 = vd_ld(H3T + 40 * k), h1 = vd_ld(H3T + 40 * k + 16), hm = vd_dup8(H3T + 40 * k + 32);
            const vi idx = lane_hi + k;
            for (int q = 0; q < PB; q++) {
                const float es = E1[sv[q]][k], et = E1[tv[q]][k];
                a0[q] = fmz(h0, bz(es), a0[q]);
                a1[q] = fmz(h1, bz(es), a1[q]);
                b0[q] = fmz(h0, bz(et), b0[q]);
                b1[q] = fmz(h1, bz(et), b1[q]);
                mm[q] = fmz(hm, vd_perm(ep[q], idx), mm[q]);
            }
        }
        for (int q = 0; q < PB && p0 + q < np; q++) {
            const int s = sv[q], t = tv[q];
            vd_st(R[s], a0[q]);
            vd_st(R[s] + 16, a1[q]);
            vy_st(R[s] + 32, vd_lo(mm[q]));
            if (t != s) {
                vd_st(R[t], b0[q]);
                vd_st(R[t] + 16, b1[q]);
                vy_st(R[t] + 32, vd_hi(mm[q]));
            }
        }
    }

    /* C: a pair's outputs in five vectors (s 0–15, s 16–31, t 0–15, t 16–31, s and t 32–39); the loss
     * added per output in slot order, as vdec_chunk adds it */
    const vi il_lo = {0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23};
    const vi il_hi = il_lo + 8;
    const vi il_m = {0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15};
    for (int p = 0; p < np; p++) {
        const int s = 2 * p, t = T_OF(p);
        vd y[5], xv[5], wv[5], w2[5], dy[5], dr[5];
        y[0] = vd_ld(R[s]);
        y[1] = vd_ld(R[s] + 16);
        y[2] = vd_ld(R[t]);
        y[3] = vd_ld(R[t] + 16);
        y[4] = vd_pair(R[s] + 32, R[t] + 32);
        v_tanh(y, y, 5);
        xv[0] = vd_ld(x[s]);
        xv[1] = vd_ld(x[s] + 16);
        xv[2] = vd_ld(x[t]);
        xv[3] = vd_ld(x[t] + 16);
        xv[4] = vd_pair(x[s] + 32, x[t] + 32);
        const float ws = w[s], wt = w[t], ws2 = 2.0f * ws, wt2 = 2.0f * wt;
        wv[0] = wv[1] = bz(ws);
        wv[2] = wv[3] = bz(wt);
        wv[4] = _mm512_mask_blend_ps(0xFF00, bz(ws), bz(wt));
        w2[0] = w2[1] = bz(ws2);
        w2[2] = w2[3] = bz(wt2);
        w2[4] = _mm512_mask_blend_ps(0xFF00, bz(ws2), bz(wt2));
        for (int j = 0; j < 5; j++) dy[j] = y[j] - xv[j];
        for (int j = 0; j < 5; j++) dr[j] = w2[j] * dy[j] * _mm512_fnmadd_ps(y[j], y[j], bz(1.0f));
        /* e2[o/8] += w·dy² for slot s, then for t */
        vd q01 = fmz(wv[0], dy[0] * dy[0], vd_pair((const float *)&e2[0], (const float *)&e2[1]));
        vd q23 = fmz(wv[1], dy[1] * dy[1], vd_pair((const float *)&e2[2], (const float *)&e2[3]));
        const vd sq4 = dy[4] * dy[4];
        vy q4 = fmy(vd_lo(wv[4]), vd_lo(sq4), e2[4]);
        if (t != s) {
            q01 = fmz(wv[2], dy[2] * dy[2], q01);
            q23 = fmz(wv[3], dy[3] * dy[3], q23);
            q4 = fmy(vd_hi(wv[4]), vd_hi(sq4), q4);
        }
        e2[0] = vd_lo(q01);
        e2[1] = vd_hi(q01);
        e2[2] = vd_lo(q23);
        e2[3] = vd_hi(q23);
        e2[4] = q4;
        vd_st(R[s], dr[0]);
        vd_st(R[s] + 16, dr[1]);
        vy_st(R[s] + 32, vd_lo(dr[4]));
        if (t != s) {
            vd_st(R[t], dr[2]);
            vd_st(R[t] + 16, dr[3]);
            vy_st(R[t] + 32, vd_hi(dr[4]));
        }
        vd_st(&DRP[p][0][0], vd_perm2(dr[0], il_lo, dr[2]));
        vd_st(&DRP[p][8][0], vd_perm2(dr[0], il_hi, dr[2]));
        vd_st(&DRP[p][16][0], vd_perm2(dr[1], il_lo, dr[3]));
        vd_st(&DRP[p][24][0], vd_perm2(dr[1], il_hi, dr[3]));
        vd_st(&DRP[p][32][0], vd_perm(dr[4], il_m));
    }
    if (!grad_h && !grad_in) return;

    /* D: de1 = H3ᵀ dr, four pairs at a time; lane 2h + j is unit h of the pair's slot j */
    const vi de_il = {0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15};
    for (int p0 = 0; p0 < np; p0 += 2 * PB) {
        vd acc[2 * PB];
        for (int q = 0; q < 2 * PB; q++) acc[q] = vd_set1(0.0f);
        for (int o = 0; o < 40; o++) {
            const vd h = vd_ld(H3D[o]);
            for (int q = 0; q < 2 * PB; q++) {
                const int p = p0 + q < np ? p0 + q : np - 1;
                acc[q] = fmz(h, vd_bcast2(DRP[p][o]), acc[q]);
            }
        }
        for (int q = 0; q < 2 * PB && p0 + q < np; q++) {
            const int p = p0 + q;
            const vd d = vd_perm(acc[q], de_il);
            if (T_OF(p) != 2 * p) vd_st(DE1[2 * p], d);
            else vy_st(DE1[2 * p], vd_lo(d));
        }
    }

    /* E: GT [8][40] += e1 drᵀ, GH3 transposed: unit h's outputs 0–15, 16–31, 32–39 in registers */
    if (grad_h) {
        vd g0[8], g1[8];
        vy g4[8];
        for (int h = 0; h < 8; h++) {
            g0[h] = vd_ld(GT[h]);
            g1[h] = vd_ld(GT[h] + 16);
            g4[h] = vy_ld(GT[h] + 32);
        }
        for (int s = 0; s < ns; s++) {
            const vd r0 = vd_ld(R[s]), r1 = vd_ld(R[s] + 16);
            const vy r4 = vy_ld(R[s] + 32);
            for (int h = 0; h < 8; h++) {
                const vd e = bz(E1[s][h]);
                g0[h] = fmz(r0, e, g0[h]);
                g1[h] = fmz(r1, e, g1[h]);
                g4[h] = fmy(r4, vd_lo(e), g4[h]);
            }
        }
        for (int h = 0; h < 8; h++) {
            vd_st(GT[h], g0[h]);
            vd_st(GT[h] + 16, g1[h]);
            vy_st(GT[h] + 32, g4[h]);
        }
    }

    /* F: db1 per slot; dcd = H0ᵀ db1 four slots a vector (lanes 4j + c: code unit c of slot j), each
     * value by the same multiply-adds as vdec_chunk's (H0 row by row, the first of two products fused) */
    _Alignas(64) float DB1[DCH][8];
    for (int s = 0; s < ns; s++) {
        const vy db1 = vy_ld(DE1[s]) * vy_ld(m[s]) * vy_selu_d(vy_ld(B1[s]), vy_ld(T1[s]));
        vy_st(DB1[s], db1);
        const float *cs = code[s];
        if (grad_h)
            for (int c = 0; c < 4; c++) gh0t[c] = fmy(db1, by(cs[c]), gh0t[c]);
    }
    if (!grad_in) return;
    vd h0r[8]; /* H0's row h four times */
    for (int h = 0; h < 8; h++) h0r[h] = _mm512_broadcast_f32x4(v4_ld(H0 + 4 * h));
    const vi lane4 = {0, 0, 0, 0, 8, 8, 8, 8, 16, 16, 16, 16, 24, 24, 24, 24};
    for (int s0 = 0; s0 < ns; s0 += 4) {
        const int k = ns - s0 < 4 ? ns - s0 : 4;
        const int s2 = k > 2 ? s0 + 2 : s0; /* a short group reads its first slots again */
        const vd d01 = vd_pair(DB1[s0], DB1[k > 1 ? s0 + 1 : s0]);
        const vd d23 = vd_pair(DB1[s2], DB1[k > 3 ? s0 + 3 : s2]);
        vd dc = fmz(h0r[0], vd_perm2(d01, lane4, d23), h0r[1] * vd_perm2(d01, lane4 + 1, d23));
        for (int h = 2; h < 8; h++) dc = fmz(h0r[h], vd_perm2(d01, lane4 + h, d23), dc);
        v4_st(dcd[s0], _mm512_castps512_ps128(dc));
        if (k > 1) v4_st(dcd[s0 + 1], _mm512_extractf32x4_ps(dc, 1));
        if (k > 2) v4_st(dcd[s0 + 2], _mm512_extractf32x4_ps(dc, 2));
        if (k > 3) v4_st(dcd[s0 + 3], _mm512_extractf32x4_ps(dc, 3));
    }
#undef T_OF
}

double bl_kern_dec16_avx512_f32(const float *H0T, const float *H0, const float *H3T, const float *H3, float *GH0,
                                float *GH3, const float *const *code, const float *const *x, const float *const *m,
                                const float *w, float *const *dcd, size_t n, int grad_h, int grad_in) {
    _Alignas(64) float H3D[40][16]; /* H3's row o with every unit twice (lanes 2h, 2h + 1), for D */
    _Alignas(64) float GT[8][40];   /* GH3 transposed over the whole pass, for E */
    for (int o = 0; o < 40; o++)
        for (int h = 0; h < 8; h++) H3D[o][2 * h] = H3D[o][2 * h + 1] = H3[8 * o + h];
    if (grad_h)
        for (int o = 0; o < 40; o++)
            for (int h = 0; h < 8; h++) GT[h][o] = GH3[8 * o + h];
    vy gh0t[4] = {{0}};
    double recon = 0.0;
    for (size_t i = 0; i < n; i += DCH) {
        const int ns = n - i < DCH ? (int)(n - i) : DCH;
        vy e2[5] = {{0}};
        chunk(H0T, H0, H3T, (const float (*)[16])H3D, GT, gh0t, code + i, x + i, m + i, w + i, dcd + i, e2,
              grad_h, grad_in, ns);
        vy e = e2[0]; /* float sums per chunk, double across chunks, as pass.c */
        for (int k = 1; k < 5; k++) e += e2[k];
        for (int k = 0; k < 8; k++) recon += (double)e[k];
    }
    if (grad_h) {
        for (int o = 0; o < 40; o++)
            for (int h = 0; h < 8; h++) GH3[8 * o + h] = GT[h][o];
        for (int h = 0; h < 8; h++)
            for (int c = 0; c < 4; c++) GH0[h * 4 + c] += gh0t[c][h];
    }
    return recon;
}
#else
typedef int bl_kern_dec16_unused; /* this copy has no 16-float decoder */
#endif
