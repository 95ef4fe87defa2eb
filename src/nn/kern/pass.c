/* kern/pass.c — one training or evaluation pass of the Bellamy network (bpass.h), compiled once per
 * copy (isa.h). Two versions of the arithmetic:
 *   - plain C loops for any dimensions: the whole generic copy, and other dimensions in every copy;
 *   - in the vector copies, kernels for the paper's dimensions (f 3→16→8, auto-encoder 40→8→4→8→40,
 *     z …→8→1) on native vectors, so that every product is a vector multiply-add whatever the
 *     vectoriser decides; the 8 hidden units of a slot are one v8, the 40 outputs 40/VL vectors.
 * Both compute the same sums of the same terms; the vector kernels order some sums differently
 * (per lane, then across), so copies agree with the reference to rounding (tests/test_kernels.c).
 * Where the time goes with per-row masks: the decoder's 8 → 40 layer and its two gradients (960
 * multiply-adds per row and property), 40 tanh, 16 random draws for the masks; the rest is small.
 * The pass is a forward and a backward function per sub-network (llm.c's pairs): f_forward / f_backward,
 * encoder_forward / encoder_backward (g, with z's property terms), z_forward / z_backward, the loss
 * (smoothl1_forward_backward), the AlphaDropout masks (dropout_masks), and the decoder h forward and
 * backward in one function (nothing of it is kept between the two); pass_impl calls them in order. A
 * pair covers a sub-network's linear layers and activations together, because its slots (distinct
 * scale-outs, values) are shared by all of them and the vector kernels fuse a product with its SELU.
 * Not here: the workspace's allocation (bwork.c), argument checks (bpass.c), optimisers.
 */
#include "nn/kern/vmath.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/rng.h"
#include "nn/bwork.h"
#include "nn/kernels.h"
#if BL_F32 && BL_ISA == 2
#include "nn/kern/dec16.h"
#include "nn/kern/enc16.h"
#endif

#define O_A1  BL_O_A1(H, C, Z)
#define O_S1  BL_O_S1(H, C, Z)
#define O_D1  BL_O_D1(H, C, Z)
#define O_P   BL_O_P(H, C, Z)
#define O_DP  BL_O_DP(H, C, Z)
#define O_ACC BL_O_ACC(H, C, Z)
#define O_A2  BL_O_A2(H, C, Z)
#define O_C   BL_O_C(H, C, Z)
#define O_DCD BL_O_DCD(H, C, Z)
#define O_A2C BL_O_A2C(H, C, Z)
#define O_CC  BL_O_CC(H, C, Z)
#define O_X   BL_O_X(H, C, Z)

/* The workspace's real-valued arrays in this copy's precision (bwork.h). */
#define SX_REC(w)      ((real *)(w)->sx_rec)
#define VAL_REC(w, p)  ((real *)(w)->val_rec[p])
#define VAL_MASK(w, p) ((real *)(w)->val_mask[p])
#define VAL_W(w, p)    ((real *)(w)->val_w[p])
#define ROWS(w)        ((real *)(w)->row)
#define DEC_CODE(w)    ((const real **)(w)->dec_code)
#define DEC_X(w)       ((const real **)(w)->dec_x)
#define DEC_MASK(w)    ((const real **)(w)->dec_mask)
#define DEC_DCD(w)     ((real **)(w)->dec_dcd)
#define DEC_W(w)       ((real *)(w)->dec_w)

/* ---- small products of the plain loops ---- */

/* Same as y = W·x from the transposed weights WT [in×ldt]: y[o] = Σ_i WT[i][o] x[i], summed in index
 * order but vectorisable along o. */
static BL_INLINE void mvt(const real *restrict WT, int ldt, int out, int in, const real *restrict x,
                         real *restrict y) {
    real acc[BL_BNET_DIM_MAX]; /* in registers when out is a constant: y may be read elsewhere */
    for (int o = 0; o < out; o++) acc[o] = 0.0;
    for (int i = 0; i < in; i++) {
        const real *w = WT + (size_t)i * ldt;
        const real xi = x[i];
        for (int o = 0; o < out; o++) acc[o] += w[o] * xi;
    }
    for (int o = 0; o < out; o++) y[o] = acc[o];
}
/* x[i] += Σ_o W[o][i] dy[o] */
static BL_INLINE void mtv_add(const real *restrict W, int ld, int out, int in, const real *restrict dy,
                             real *restrict dx) {
    for (int o = 0; o < out; o++) {
        const real *w = W + (size_t)o * ld;
        const real g = dy[o];
        for (int i = 0; i < in; i++) dx[i] += w[i] * g;
    }
}
/* G[o][i] += s · dy[o] · x[i] */
static BL_INLINE void outer_add(real *restrict G, int ld, int out, int in, const real *restrict dy,
                               const real *restrict x, real s) {
    for (int o = 0; o < out; o++) {
        const real g = dy[o] * s;
        real *row = G + (size_t)o * ld;
        for (int i = 0; i < in; i++) row[i] += g * x[i];
    }
}

/* ---- the decoder of NS slots, forward and (grad) backward together, so nothing of it is stored ----
 *   code [C] → b1 = H0·code [H] → t1 = selu → e1 = t1·mk + ad (AlphaDropout) → r = tanh(H3·e1) [V]
 * A slot brings its code, its vector x, its decoder mask (mk[H], ad[H]) and its loss weight w; the
 * slots' loss Σ w·(r − x)² is added per position into e2[V] (summed once at the end of the pass: a
 * running sum would chain every addition). With grad_h the h gradients are added into GH0 [H×C]
 * and GH3 [V×H]; with grad_in d loss / d code goes to dcd[s] [C]. */
#define DEC_NS 4
static BL_INLINE void dec_block(const real *restrict H0T, const real *restrict H0, const real *restrict H3T,
                                const real *restrict H3, real *restrict GH0, real *restrict GH3,
                                const real *const *code, const real *const *x, const real *const *m,
                                const real *w, real *const *dcd, double *restrict e2, int grad_h, int grad_in,
                                const int NS, const int H, const int C, const int V) {
    real b1[DEC_NS][BL_BNET_DIM_MAX], t1[DEC_NS][BL_BNET_DIM_MAX], e1[DEC_NS][BL_BNET_DIM_MAX];
    real r[DEC_NS][BL_BNET_DIM_MAX], dr[DEC_NS][BL_BNET_DIM_MAX], de1[DEC_NS][BL_BNET_DIM_MAX];
    for (int s = 0; s < NS; s++) {
        for (int h = 0; h < H; h++) b1[s][h] = 0.0;
        for (int c = 0; c < C; c++) {
            const real cv = code[s][c];
            for (int h = 0; h < H; h++) b1[s][h] += cv * H0T[c * H + h];
        }
        for (int h = 0; h < H; h++) t1[s][h] = k_selu(b1[s][h]);
        for (int h = 0; h < H; h++) e1[s][h] = t1[s][h] * m[s][h] + m[s][H + h];
        for (int o = 0; o < V; o++) r[s][o] = 0.0;
        for (int h = 0; h < H; h++) {
            const real ev = e1[s][h];
            for (int o = 0; o < V; o++) r[s][o] += ev * H3T[h * V + o];
        }
        for (int o = 0; o < V; o++) r[s][o] = k_tanh(r[s][o]);
        const real ws = w[s], ws2 = (real)2.0 * ws;
        const real *xs = x[s];
        for (int o = 0; o < V; o++) {
            const real y = r[s][o], dy = y - xs[o];
            e2[o] += (double)(ws * (dy * dy));
            dr[s][o] = ws2 * dy * ((real)1.0 - y * y); /* d loss / d (H3·e1) */
        }
    }
    if (!grad_h && !grad_in) return;
    for (int s = 0; s < NS; s++)
        for (int h = 0; h < H; h++) de1[s][h] = 0.0;
    for (int o = 0; o < V; o++) { /* de1 = H3ᵀ dr, GH3 += dr e1ᵀ */
        const real *w3 = H3 + o * H;
        for (int s = 0; s < NS; s++) {
            const real d = dr[s][o];
            for (int h = 0; h < H; h++) de1[s][h] += d * w3[h];
        }
        if (grad_h) {
            real *g = GH3 + o * H;
            for (int s = 0; s < NS; s++) {
                const real d = dr[s][o];
                for (int h = 0; h < H; h++) g[h] += d * e1[s][h];
            }
        }
    }
    for (int s = 0; s < NS; s++) {
        for (int h = 0; h < H; h++) de1[s][h] *= m[s][h] * k_selu_d(b1[s][h], t1[s][h]); /* d b1 */
        if (grad_h)
            for (int h = 0; h < H; h++) {
                const real g = de1[s][h];
                for (int c = 0; c < C; c++) GH0[h * C + c] += g * code[s][c];
            }
        if (grad_in) {
            real *dc = dcd[s];
            for (int c = 0; c < C; c++) dc[c] = 0.0;
            for (int h = 0; h < H; h++) {
                const real g = de1[s][h];
                for (int c = 0; c < C; c++) dc[c] += g * H0[h * C + c];
            }
        }
    }
}

#if BL_ISA > 0
/* ---- the paper's dimensions on native vectors (H = 8, C = 4, V = 40, Z = 8) ---- */
#define NO40 (40 / VL)  /* vectors of the decoder's 40 outputs */

#if BL_F32
/* The float32 copies write out the decoder's sums that begin with two products: left to contraction,
 * GCC fuses one of the two and rounds the other, and which one it picks depends on the optimisation
 * level; written out, every build computes the same bits, and dec16.c (the float32 AVX-512 decoder)
 * computes them too; so do the encoder's per-slot layers (enc16.c). The forms are the ones GCC 12 -O3
 * chose, so float32 models did not change. */
static BL_INLINE vd vd_fmadd(vd a, vd b, vd c) { return _mm256_fmadd_ps(a, b, c); }
static BL_INLINE vd vd_bc(real x) { return _mm256_set1_ps(x); } /* keeps a zero's sign */
/* The decoder's other multiply-adds written out too, so that no build (-O0 forms none) computes them
 * otherwise; in float64 the same expressions left to contraction, as before. */
static BL_INLINE vd vd_fmas_x(vd a, real s, vd c) { return vd_fmadd(a, vd_bc(s), c); }
static BL_INLINE v8 v8_fmas_x(v8 a, real s, v8 c) { c.q[0] = vd_fmadd(a.q[0], vd_bc(s), c.q[0]); return c; }
static BL_INLINE v8 v8_fma_x(v8 a, v8 b, v8 c) { c.q[0] = vd_fmadd(a.q[0], b.q[0], c.q[0]); return c; }
static BL_INLINE v4 v4_fmas_x(v4 a, real s, v4 c) { return _mm_fmadd_ps(a, _mm_set1_ps(s), c); }
static BL_INLINE vd vd_one_minus_sq(vd y) { return _mm256_fnmadd_ps(y, y, vd_bc(1.0f)); }
#else
static BL_INLINE vd vd_fmas_x(vd a, real s, vd c) { return a * s + c; }
static BL_INLINE v8 v8_fmas_x(v8 a, real s, v8 c) { return v8_fmas(a, s, c); }
static BL_INLINE v8 v8_fma_x(v8 a, v8 b, v8 c) { return v8_fma(a, b, c); }
static BL_INLINE v4 v4_fmas_x(v4 a, real s, v4 c) { return a * s + c; }
static BL_INLINE vd vd_one_minus_sq(vd y) { return 1.0 - y * y; }
#endif
#define DCH 32           /* decoder slots per chunk: its arrays stay in the first-level cache */

/* The decoder of ns ≤ DCH slots as dec_block, in phases over the whole chunk so that every product is
 * a register-blocked loop (the weights and the gradient's tiles stay in registers) and the SELU and
 * tanh vectors run many at a time:
 *   A  b1 = H0·code, t1 = selu(b1), e1 = t1·mk + ad           per slot, 8 units
 *   B  r = H3·e1                                               [ns × 40]
 *   C  y = tanh(r), loss, r ← d loss / d (H3·e1)               elementwise
 *   D  de1 = H3ᵀ·dr                                            [ns × 8]
 *   E  GH3 += drᵀ·e1                                           [40 × 8], tiles of 8 rows over the slots
 *   F  db1 = de1·mk·selu'(b1); GH0 += db1·codeᵀ (gh0t, transposed); dcd = H0ᵀ·db1
 * gh0t [4] accumulates H0's gradient transposed (unit h in lane h), e2 [NO40] the loss per position. */
static BL_INLINE void vdec_chunk(const real *restrict H0T, const real *restrict H0, const real *restrict H3T,
                                 const real *restrict H3, real *restrict GH3, v8 *restrict gh0t,
                                 const real *const *code, const real *const *x, const real *const *m,
                                 const real *w, real *const *dcd, vd *restrict e2, int grad_h, int grad_in,
                                 const int ns) {
    _Alignas(64) real B1[DCH][8], T1[DCH][8], E1[DCH][8], R[DCH][40], DE1[DCH][8];
    /* A */
    const v8 h0t0 = v8_ld(H0T), h0t1 = v8_ld(H0T + 8), h0t2 = v8_ld(H0T + 16), h0t3 = v8_ld(H0T + 24);
    for (int s = 0; s < ns; s++) {
        const real *cs = code[s];
#if BL_F32
        const v8 b01 = {{vd_fmadd(h0t0.q[0], vd_bc(cs[0]), h0t1.q[0] * cs[1])}};
        v8_st(B1[s], v8_fmas_x(h0t3, cs[3], v8_fmas_x(h0t2, cs[2], b01)));
#else
        v8_st(B1[s], v8_fmas(h0t3, cs[3], v8_fmas(h0t2, cs[2], v8_fmas(h0t1, cs[1], v8_muls(h0t0, cs[0])))));
#endif
    }
    for (int s0 = 0; s0 < ns; s0 += 8) { /* SELU of 8 slots' units at a time */
        const int k = ns - s0 < 8 ? ns - s0 : 8;
        vd t[8 * NV];
        for (int q = 0; q < k * NV; q++) t[q] = vd_ld(&B1[s0][0] + VL * q);
        v_selu(t, t, k * NV);
        for (int q = 0; q < k * NV; q++) vd_st(&T1[s0][0] + VL * q, t[q]);
    }
    for (int s = 0; s < ns; s++) v8_st(E1[s], v8_fma_x(v8_ld(T1[s]), v8_ld(m[s]), v8_ld(m[s] + 8)));
    /* B: two slots at a time, 40/VL output vectors each, the 8 inputs broadcast */
    for (int s = 0; s < ns; s += 2) {
        const int two = s + 1 < ns;
        for (int j0 = 0; j0 < NO40; j0 += NO40 / (VL == 8 ? 1 : 2)) {
            enum { NJ = NO40 / (VL == 8 ? 1 : 2) }; /* 5 vectors: registers for two slots' sums */
            vd a[NJ], b[NJ];
#if BL_F32 /* the first slot fuses the first product, the second slot the second (see vd_fmadd) */
            for (int j = 0; j < NJ; j++) {
                const vd h = vd_ld(H3T + VL * (j0 + j)), g = vd_ld(H3T + 40 + VL * (j0 + j));
                a[j] = vd_fmadd(h, vd_bc(E1[s][0]), g * E1[s][1]);
                b[j] = vd_fmadd(g, vd_bc(E1[s + two][1]), h * E1[s + two][0]);
            }
            for (int k = 2; k < 8; k++)
#else
            for (int j = 0; j < NJ; j++) {
                const vd h = vd_ld(H3T + VL * (j0 + j));
                a[j] = h * E1[s][0];
                b[j] = h * E1[s + two][0];
            }
            for (int k = 1; k < 8; k++)
#endif
                for (int j = 0; j < NJ; j++) {
                    const vd h = vd_ld(H3T + 40 * k + VL * (j0 + j));
                    a[j] = vd_fmas_x(h, E1[s][k], a[j]);
                    b[j] = vd_fmas_x(h, E1[s + two][k], b[j]);
                }
            for (int j = 0; j < NJ; j++) {
                vd_st(R[s] + VL * (j0 + j), a[j]);
                if (two) vd_st(R[s + 1] + VL * (j0 + j), b[j]);
            }
        }
    }
    /* C: one slot's 40 outputs (NO40 vectors) through one interleaved tanh */
    for (int s = 0; s < ns; s++) {
        vd y[NO40];
        for (int j = 0; j < NO40; j++) y[j] = vd_ld(R[s] + VL * j);
        v_tanh(y, y, NO40);
        const real ws = w[s], ws2 = (real)2.0 * ws;
        for (int j = 0; j < NO40; j++) {
            const vd dy = y[j] - vd_ld(x[s] + VL * j);
            e2[j] = vd_fmas_x(dy * dy, ws, e2[j]);
            vd_st(R[s] + VL * j, ws2 * dy * vd_one_minus_sq(y[j])); /* d loss / d (H3·e1) */
        }
    }
    if (!grad_h && !grad_in) return;
    /* D: de1 = H3ᵀ dr, DS slots at a time, H3's row o broadcast against their dr (eight chains where a
     * unit's eight values fill one register, enough to hide the FMA's latency) */
    enum { DS = BL_F32 ? 8 : 4 };
    for (int s = 0; s < ns; s += DS) {
        const int k = ns - s < DS ? ns - s : DS;
        v8 acc[DS];
        for (int q = 0; q < DS; q++) acc[q] = v8_set1(0.0);
        for (int o = 0; o < 40; o++) {
            const v8 h = v8_ld(H3 + 8 * o);
            for (int q = 0; q < DS; q++) acc[q] = v8_fmas_x(h, R[s + (q < k ? q : 0)][o], acc[q]);
        }
        for (int q = 0; q < k; q++) v8_st(DE1[s + q], acc[q]);
    }
    /* E: GH3 += drᵀ e1, tiles of TR rows of GH3 kept in registers over the chunk's slots */
    if (grad_h) {
        enum { TR = VL == 8 ? 8 : 4 };
        for (int o0 = 0; o0 < 40; o0 += TR) {
            v8 g[TR];
            for (int r = 0; r < TR; r++) g[r] = v8_ld(GH3 + 8 * (o0 + r));
            for (int s = 0; s < ns; s++) {
                const v8 e = v8_ld(E1[s]);
                for (int r = 0; r < TR; r++) g[r] = v8_fmas_x(e, R[s][o0 + r], g[r]);
            }
            for (int r = 0; r < TR; r++) v8_st(GH3 + 8 * (o0 + r), g[r]);
        }
    }
    /* F */
#if BL_F32 /* dcd two slots a vector (lanes 4j + c: code unit c of slot j), each value by the same
            * multiply-adds as one slot's (H0 row by row, the first of two products fused) */
    _Alignas(32) real DB1[DCH][8];
#endif
    for (int s = 0; s < ns; s++) {
        const v8 db1 = v8_mul(v8_mul(v8_ld(DE1[s]), v8_ld(m[s])), v8_selu_d(v8_ld(B1[s]), v8_ld(T1[s])));
        const real *cs = code[s];
        if (grad_h)
            for (int c = 0; c < 4; c++) gh0t[c] = v8_fmas_x(db1, cs[c], gh0t[c]);
#if BL_F32
        v8_st(DB1[s], db1);
#else
        if (grad_in) { /* dcd = H0ᵀ db1, H0 [8×4] row by row */
            _Alignas(64) real d[8];
            v8_st(d, db1);
            v4 dc = v4_ld(H0) * d[0];
            for (int h = 1; h < 8; h++) dc = v4_ld(H0 + 4 * h) * d[h] + dc;
            v4_st(dcd[s], dc);
        }
#endif
    }
#if BL_F32
    if (!grad_in) return;
    vd h0r[8]; /* H0's row h twice */
    for (int h = 0; h < 8; h++) h0r[h] = _mm256_broadcast_ps((const __m128 *)(const void *)(H0 + 4 * h));
    for (int s = 0; s < ns; s += 2) {
        const int two = s + 1 < ns;
        const vd d0 = vd_ld(DB1[s]), d1 = vd_ld(DB1[s + two]);
        const vd lo = _mm256_permute2f128_ps(d0, d1, 0x20), hi = _mm256_permute2f128_ps(d0, d1, 0x31);
        vd dc = vd_fmadd(h0r[0], _mm256_permute_ps(lo, 0x00), h0r[1] * _mm256_permute_ps(lo, 0x55));
        dc = vd_fmadd(h0r[2], _mm256_permute_ps(lo, 0xAA), dc);
        dc = vd_fmadd(h0r[3], _mm256_permute_ps(lo, 0xFF), dc);
        dc = vd_fmadd(h0r[4], _mm256_permute_ps(hi, 0x00), dc);
        dc = vd_fmadd(h0r[5], _mm256_permute_ps(hi, 0x55), dc);
        dc = vd_fmadd(h0r[6], _mm256_permute_ps(hi, 0xAA), dc);
        dc = vd_fmadd(h0r[7], _mm256_permute_ps(hi, 0xFF), dc);
        v4_st(dcd[s], _mm256_castps256_ps128(dc));
        if (two) v4_st(dcd[s + 1], _mm256_extractf128_ps(dc, 1));
    }
#endif
}
#endif

static int view_frozen(const bl_params *P, size_t off) {
    for (int i = 0; i < P->n_views; i++)
        if (P->views[i].offset == off) return P->views[i].frozen;
    return 0;
}

#define THIS_COPY (1 + 2 * BL_ISA + (BL_F32 ? 1 : 0)) /* which copy wrote a workspace's records */

/* Bit i: view i is frozen (all 0 where there are more views than bits). */
static uint32_t frozen_views(const bl_params *P) {
    uint32_t f = 0;
    for (int i = 0; i < P->n_views && P->n_views <= 32; i++) f |= (uint32_t)(P->views[i].frozen != 0) << i;
    return f;
}

/* The views of the blocks from first to last (offsets into P, in layout order) as bits. */
static uint32_t block_views(const bl_params *P, size_t first, size_t last) {
    uint32_t b = 0;
    for (int i = 0; i < P->n_views && P->n_views <= 32; i++)
        if (P->views[i].offset >= first && P->views[i].offset <= last) b |= 1u << i;
    return b;
}

/* What a pass may read back from the one before on w (bpass.h, reuse): the views frozen in both, if
 * that pass ran net on the same rows of v without dropout or reconstruction, in the same slot mode;
 * 0 otherwise. The caller vouches that no frozen parameter changed in between. */
static uint32_t reusable_views(const bl_bnet *net, const bl_bview *v, const size_t *rows, size_t B,
                               const bl_bpass *pass, const bl_bwork *w, uint32_t frozen) {
    if (!pass->reuse || !w->last.plain || w->last.copy != THIS_COPY || w->last.net != net || w->last.view != v || w->last.B != B ||
        w->last.per_row != pass->per_row_dropout || w->last.n_views != net->P.n_views ||
        memcmp(w->last.rows, rows, B * sizeof *rows) != 0)
        return 0;
    return frozen & w->last.frozen;
}

/* What every layer of one pass shares: the network and its transposed weights, the batch, the
 * workspace with the batch's distinct scale-outs (n_sx), and the switches. The dimensions travel as
 * constant arguments, so that the paper's are folded in (BL_LAYER); the slots per property n_val[NP]
 * travel beside it, as pass_impl's own array. */
typedef struct pass_ctx {
    const bl_bnet  *net;
    const bl_bview *v;
    const size_t   *rows;          /* [B] rows of v */
    size_t          B;
    bl_bwork       *w;
    const real   *W, *WT;        /* parameters; the same transposed per block (see mvt) */
    real         *G;             /* gradients, added into */
    size_t          n_sx;
    int             NE, NO, NP, ZI;
    size_t          ST, MS;        /* a slot record's stride; a slot's mask stride */
    int             decode, hybrid, grad_f, grad_g, grad_h, grad_z;
    int             keep_f, keep_g; /* f's outputs, g's codes: read from the pass before (bpass.h, reuse) */
} pass_ctx;

#if BL_F32 && BL_ISA > 0
/* The 8 × 8 block at src (row stride ls) transposed into dst (row stride ld): moves, no arithmetic. */
static BL_INLINE void transpose8(const float *src, int ls, float *dst, int ld) {
    __m256 a[8], b[8];
    for (int i = 0; i < 8; i++) a[i] = _mm256_loadu_ps(src + (size_t)i * ls);
    for (int i = 0; i < 8; i += 2) {
        b[i] = _mm256_unpacklo_ps(a[i], a[i + 1]);
        b[i + 1] = _mm256_unpackhi_ps(a[i], a[i + 1]);
    }
    for (int i = 0; i < 8; i += 4) {
        a[i] = _mm256_shuffle_ps(b[i], b[i + 2], 0x44);
        a[i + 1] = _mm256_shuffle_ps(b[i], b[i + 2], 0xEE);
        a[i + 2] = _mm256_shuffle_ps(b[i + 1], b[i + 3], 0x44);
        a[i + 3] = _mm256_shuffle_ps(b[i + 1], b[i + 3], 0xEE);
    }
    for (int i = 0; i < 4; i++) {
        _mm256_storeu_ps(dst + (size_t)i * ld, _mm256_permute2f128_ps(a[i], a[i + 4], 0x20));
        _mm256_storeu_ps(dst + (size_t)(i + 4) * ld, _mm256_permute2f128_ps(a[i], a[i + 4], 0x31));
    }
}
#endif

/* WT = every block of W transposed, at the same offsets; the float32 copies also round W into Wf
 * (the parameters stay double: Adam updates them there). Views whose bit is set in keep still hold
 * what the pass before wrote for the same parameters, and are left as they are. */
static BL_LAYER void transpose_weights(const bl_bnet *net, const double *W, real *WT, real *Wf, uint32_t keep) {
#if BL_F32
    if (!keep)
        for (size_t i = 0; i < net->P.n; i++) Wf[i] = (real)W[i];
#else
    (void)Wf;
#endif
    for (int i = 0; i < net->P.n_views; i++) {
        const bl_param_view *pv = &net->P.views[i];
        if (i < 32 && (keep >> i & 1)) continue;
#if BL_F32
        if (keep)
            for (size_t k = pv->offset; k < pv->offset + (size_t)pv->rows * (size_t)pv->cols; k++) Wf[k] = (real)W[k];
#endif
#if BL_F32
        const real *src = Wf + pv->offset; /* converted above */
#else
        const real *src = W + pv->offset;
#endif
        real *dst = WT + pv->offset;
        if (pv->rows == 1 || pv->cols == 1) { /* a vector: its own transpose */
            memcpy(dst, src, (size_t)pv->rows * (size_t)pv->cols * sizeof(real));
            continue;
        }
        const int R = pv->rows, K = pv->cols;
        int r8 = 0, c8 = 0; /* the part done in 8 × 8 blocks */
#if BL_F32 && BL_ISA > 0
        r8 = R & ~7;
        c8 = K & ~7;
        for (int r0 = 0; r0 < r8; r0 += 8)
            for (int c0 = 0; c0 < c8; c0 += 8) transpose8(src + (size_t)r0 * K + c0, K, dst + (size_t)c0 * R + r0, R);
#endif
        for (int c = 0; c < K; c++) /* the rest: written in order, read with a stride */
            for (int r = c < c8 ? r8 : 0; r < R; r++) dst[(size_t)c * R + r] = src[(size_t)r * K + c];
    }
}

/* The batch's slots: its distinct scale-outs (sx_list, n_sx returned) and, per property, one slot per
 * distinct value or (per_row) per row, with its first slot and its rows' weight (n_val[NP]). */
static BL_LAYER size_t batch_slots(const bl_bview *v, const size_t *rows, size_t B, int NP, int per_row, int hybrid,
                                   bl_bwork *w, size_t *n_val) {
    size_t n_sx = 0;
    for (size_t b = 0; b < B; b++) {
        uint32_t s = v->sx[rows[b]];
        if (w->sx_slot[s] < 0) {
            w->sx_slot[s] = (int32_t)n_sx;
            w->sx_list[n_sx++] = s;
        }
    }
    for (int p = 0; p < NP; p++) {
        size_t n = 0;
        int32_t *slot = w->val_slot[p];
        real *cnt = VAL_W(w, p);
        for (size_t b = 0; b < B; b++) {
            uint32_t x = v->val[rows[b] * (size_t)NP + (size_t)p];
            if (per_row) { /* every row its own copy (and dropout mask) of the value */
                if (slot[x] < 0) slot[x] = (int32_t)n;
                w->val_first[p][n] = (uint32_t)slot[x];
                w->val_list[p][n] = x;
                cnt[n] = 1.0;
                if (hybrid) { /* one reconstruction per value, weighted by its rows */
                    cnt[n] = 0.0;
                    cnt[slot[x]] += (real)1.0;
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
            cnt[slot[x]] += (real)1.0;
            w->row_slot[b * (size_t)NP + (size_t)p] = (uint32_t)slot[x];
        }
        n_val[p] = n;
    }
    return n_sx;
}

/* AlphaDropout, forward: the masks of every slot as multiply-adds y = t·mk + ad: kept (a, b), dropped
 * (0, α'·a + b), no dropout (1, 0), which is exact. The draws happen here in the order the slots are
 * visited: per property, per slot, the encoder's H units, then (decoder slots only) the decoder's H
 * units (bpass.h: part of the pass's contract). The backward pass multiplies by mk. */
#if BL_ISA > 0
/* Eight units' masks from eight 16-bit lanes u (bl_rng_keep16's lanes, in order): mk[0..8) = da or +0,
 * mk[8..16) = db or α'·da + db, as the scalar select below. Lanes and thresh fit a signed int32. */
static BL_INLINE void masks8(real *mk, __m128i u, uint32_t thresh, rbits kd, rbits kb, rbits koff) {
#if BL_F32
    const __m256i t = _mm256_set1_epi32((int)thresh - 1);
    const __m256i keep = _mm256_cmpgt_epi32(_mm256_cvtepu16_epi32(u), t);
    const __m256i m = _mm256_and_si256(keep, _mm256_set1_epi32((int)kd));
    const __m256i a = _mm256_blendv_epi8(_mm256_set1_epi32((int)koff), _mm256_set1_epi32((int)kb), keep);
    memcpy(mk, &m, sizeof m);
    memcpy(mk + 8, &a, sizeof a);
#else
    const __m256i t = _mm256_set1_epi64x((long long)thresh - 1);
    const __m256i lo = _mm256_cmpgt_epi64(_mm256_cvtepu16_epi64(u), t);
    const __m256i hi = _mm256_cmpgt_epi64(_mm256_cvtepu16_epi64(_mm_srli_si128(u, 8)), t);
    const __m256i vkd = _mm256_set1_epi64x((long long)kd), vkb = _mm256_set1_epi64x((long long)kb),
                  voff = _mm256_set1_epi64x((long long)koff);
    const __m256i m0 = _mm256_and_si256(lo, vkd), m1 = _mm256_and_si256(hi, vkd);
    const __m256i a0 = _mm256_blendv_epi8(voff, vkb, lo), a1 = _mm256_blendv_epi8(voff, vkb, hi);
    memcpy(mk, &m0, sizeof m0);
    memcpy(mk + 4, &m1, sizeof m1);
    memcpy(mk + 8, &a0, sizeof a0);
    memcpy(mk + 12, &a1, sizeof a1);
#endif
}
#endif

static BL_LAYER void dropout_masks(const pass_ctx *cx, const size_t *n_val, const bl_bpass *pass, int drop,
                                    double da, double db, const int H) {
    bl_bwork *w = cx->w;
    const int NP = cx->NP, decode = cx->decode, hybrid = cx->hybrid;
    const size_t MS = cx->MS;
    if (drop) {
        uint64_t s[4];
        rbits kd, kb, koff; /* the kept and dropped values as bits: a branch-free select */
        memcpy(s, pass->rng->s, sizeof s);
        const real rda = (real)da, rdb = (real)db, ad_off = (real)(BL_SELU_ALPHA_PRIME * da + db);
        memcpy(&kd, &rda, sizeof kd);
        memcpy(&kb, &rdb, sizeof kb);
        memcpy(&koff, &ad_off, sizeof koff);
        const uint32_t thresh = bl_rng_threshold16(pass->dropout);
        for (int p = 0; p < NP; p++)
            for (size_t i = 0; i < n_val[p]; i++) {
                real *mk = VAL_MASK(w, p) + i * MS;
                const int dec = decode && (!hybrid || w->val_first[p][i] == i);
                for (int part = 0; part < 1 + dec; part++, mk += 2 * H) {
#if BL_ISA > 0
                    if (H == 8) { /* the paper's width: two draws' eight lanes widened in one vector */
                        const uint64_t d0 = bl_xoshiro_next(s), d1 = bl_xoshiro_next(s);
                        masks8(mk, _mm_set_epi64x((long long)d1, (long long)d0), thresh, kd, kb, koff);
                        continue;
                    }
#endif
                    uint8_t kept[BL_BNET_DIM_MAX];
                    bl_rng_keep16(s, thresh, H, kept);
                    for (int k = 0; k < H; k++) {
                        const rbits keep = 0 - (rbits)kept[k];
                        const rbits m = kd & keep, a = (kb & keep) | (koff & ~keep);
                        memcpy(mk + k, &m, sizeof m);     /* da or +0.0 */
                        memcpy(mk + H + k, &a, sizeof a); /* db or α'·da + db */
                    }
                }
            }
        memcpy(pass->rng->s, s, sizeof s);
    } else {
        for (int p = 0; p < NP; p++)
            for (size_t i = 0; i < n_val[p]; i++) {
                real *mk = VAL_MASK(w, p) + i * MS;
                for (int k = 0; k < H; k++) mk[k] = mk[2 * H + k] = 1.0;
                for (int k = 0; k < H; k++) mk[H + k] = mk[3 * H + k] = 0.0;
            }
    }
}

/* f forward, and z's scale-out term, per distinct scale-out x [FI]:
 *   a0 = F0·x + b [FH], s0 = selu(a0), a2 = F2·s0 + b [FO], F = selu(a2), A = Z0[:, 0:FO]·F + b [Z];
 * kept in the slot's record with room for dA [Z] and dF [FO] (zeroed). */
static BL_LAYER void f_forward(const pass_ctx *cx, const int FI, const int FH, const int FO, const int Z) {
    const bl_bnet *net = cx->net;
    const bl_bview *v = cx->v;
    bl_bwork *w = cx->w;
    const real *W = cx->W, *WT = cx->WT;
    const size_t n_sx = cx->n_sx;
    for (size_t i = 0; i < n_sx; i++) {
        real *r = SX_REC(w) + i * w->sx_stride;
        real *a0 = r, *s0 = a0 + FH, *a2 = s0 + FH, *F = a2 + FO, *A = F + FO;
        const double *xd = v->sx_feat + (size_t)w->sx_list[i] * (size_t)FI;
        if (!cx->keep_f) {
#if BL_F32
            real x[BL_BNET_DIM_MAX];
            for (int k = 0; k < FI; k++) x[k] = (real)xd[k];
#else
            const real *x = xd;
#endif
            mvt(WT + net->f0w, FH, FH, FI, x, a0);
            for (int k = 0; k < FH; k++) a0[k] += W[net->f0b + (size_t)k];
            for (int k = 0; k < FH; k++) s0[k] = k_selu(a0[k]);
            mvt(WT + net->f2w, FO, FO, FH, s0, a2);
            for (int k = 0; k < FO; k++) a2[k] += W[net->f2b + (size_t)k];
            for (int k = 0; k < FO; k++) F[k] = k_selu(a2[k]);
        }
        mvt(WT + net->z0w, Z, Z, FO, F, A);
        for (int k = 0; k < Z; k++) A[k] += W[net->z0b + (size_t)k];
        memset(A + Z, 0, (size_t)(Z + FO) * sizeof(real)); /* dA, dF */
    }
}

#if BL_ISA > 0 && !(BL_F32 && BL_ISA == 2) /* that copy runs enc16.c's two values a vector */
/* The encoder's first layer a1 = G0·x [8 × 40], s1 = selu(a1), for n ≤ 4 distinct values together: each
 * value in two chains (even and odd inputs), so eight independent chains share G0's loads where one
 * value's two would wait on the FMA latency. A value's operations are the same whatever its neighbours
 * (a short group repeats its last value). */
static BL_INLINE void first_layer_x4(const real *restrict G0T, const real *const *xs, real *const *recs, int n) {
    const real *x[4];
    for (int j = 0; j < 4; j++) x[j] = xs[j < n ? j : n - 1];
    v8 a[4], b[4];
    const v8 g0 = v8_ld(G0T), g1 = v8_ld(G0T + 8);
    for (int j = 0; j < 4; j++) a[j] = v8_muls(g0, x[j][0]), b[j] = v8_muls(g1, x[j][1]);
    for (int k = 2; k < 40; k += 2) {
        const v8 ga = v8_ld(G0T + 8 * k), gb = v8_ld(G0T + 8 * k + 8);
        for (int j = 0; j < 4; j++) {
            a[j] = v8_fmas_x(ga, x[j][k], a[j]);
            b[j] = v8_fmas_x(gb, x[j][k + 1], b[j]);
        }
    }
    v8 s[4];
    for (int j = 0; j < 4; j++) a[j] = v8_add(a[j], b[j]);
    v8_selu_n(s, a, 4);
    for (int j = 0; j < n; j++) {
        v8_st(recs[j] + BL_O_A1(8, 4, 8), a[j]);
        v8_st(recs[j] + BL_O_S1(8, 4, 8), s[j]);
        v8_st(recs[j] + BL_O_ACC(8, 4, 8), v8_set1(0.0));
    }
}
#endif

/* g forward, and z's property terms, per slot of every property: the first layer once per distinct
 * value, a1 = G0·x, s1 = selu(a1) [H]; then per slot d1 = s1·mk + ad, a2 = G3·d1, c = selu(a2) [C],
 * P = Z0[:, block]·c (× 1/NO for the optional block) [Z]; in mode 2 (hybrid) also the clean code
 * cc = selu(G3·s1) for the decoder. Lists the decoder's slots (their code, vector, mask, loss weight,
 * d code) and returns how many. */
static BL_LAYER size_t encoder_forward(const pass_ctx *cx, const size_t *n_val, const int FO, const int H,
                                       const int C, const int V, const int Z, const int FAST) {
    const bl_bnet *net = cx->net;
    const bl_bview *v = cx->v;
    bl_bwork *w = cx->w;
    const real *WT = cx->WT;
    const size_t B = cx->B, ST = cx->ST, MS = cx->MS;
    const int NE = cx->NE, NO = cx->NO, NP = cx->NP, decode = cx->decode, hybrid = cx->hybrid;
    const real *restrict G0T = WT + net->g0w, *restrict G3T = WT + net->g3w;
    size_t n_dec = 0;
#if BL_F32 && BL_ISA == 2 /* the first layer two values a 16-float vector, eight a group (enc16.c) */
    _Alignas(64) float g0td[40 * 16];
    if (FAST && !cx->keep_g) bl_kern_enc16dup_avx512_f32(G0T, g0td);
#define FL_GROUP 8
#define FIRST_LAYER(xs, recs, n) bl_kern_enc16a1_avx512_f32(g0td, xs, recs, n)
#else
#define FL_GROUP 4
#define FIRST_LAYER(xs, recs, n) first_layer_x4(G0T, xs, recs, n)
#endif
    for (int p = 0; p < NP; p++) {
        const int opt = p >= NE;
        const int col = opt ? FO + C * NE : FO + C * p;
        const real scale = opt ? 1.0 / NO : 1.0;
        const real rs = (real)(1.0 / ((double)B * (opt ? NO : NE) * V));
        const real *restrict WTz = WT + net->z0w + (size_t)col * Z;
        real *base = VAL_REC(w, p);
#if BL_ISA > 0
        const real *grp_x[FL_GROUP];
        real *grp_rec[FL_GROUP];
        int ng = 0;
#endif
        for (size_t i = 0; i < n_val[p] && !cx->keep_g; i++) { /* the first layer once per distinct value */
            if (w->val_first[p][i] != i) continue;
            real *rec = base + i * ST;
            const double *xvd = v->vecs[p] + (size_t)w->val_list[p][i] * (size_t)V;
#if BL_F32 /* the value's vector in float, kept in its first slot for the decoder and G0's gradient */
            real *xv = rec + O_X;
            for (int k = 0; k < V; k++) xv[k] = (real)xvd[k];
#else
            const real *xv = xvd;
#endif
#if BL_ISA > 0
            if (FAST) { /* queued: the first layer of up to four values at a time */
                grp_x[ng] = xv;
                grp_rec[ng++] = rec;
                if (ng == FL_GROUP) FIRST_LAYER(grp_x, grp_rec, ng), ng = 0;
                continue;
            }
#endif
            mvt(G0T, H, H, V, xv, rec + O_A1);
            for (int k = 0; k < H; k++) rec[O_S1 + k] = k_selu(rec[O_A1 + k]); /* s1 = selu(G0·x) */
            memset(rec + O_ACC, 0, (size_t)H * sizeof(real));
        }
#if BL_ISA > 0
        if (FAST && ng > 0) FIRST_LAYER(grp_x, grp_rec, ng);
#if BL_F32 && BL_ISA == 2
        if (FAST && cx->keep_g) bl_kern_enc16p_avx512_f32(WTz, scale, base, ST, n_val[p]);
        else if (FAST) /* 16-float vectors, the same bits as the loops below (enc16.c) */
            bl_kern_enc16_avx512_f32(G3T, WTz, scale, base, ST, VAL_MASK(w, p), MS, w->val_first[p], n_val[p]);
#else
#if BL_F32 /* d1 = s1·mk + ad, a2 = G3·d1 two slots a vector (lanes 4j + c: code unit c of slot j), c =
            * selu(a2) sixteen slots at a time; each value by the FMAs enc16.c runs, in the same order
            * (a2's sum begins fma(g₀, d₀, g₁·d₁)), so the avx2 and avx512 copies agree bit for bit */
        if (FAST && !cx->keep_g) {
            const size_t n = n_val[p];
            vd g3r[8]; /* G3ᵀ's row k (the four codes' weights on d1[k]) twice */
            for (int k = 0; k < 8; k++) g3r[k] = _mm256_broadcast_ps((const __m128 *)(const void *)(G3T + 4 * k));
            for (size_t i0 = 0; i0 < n; i0 += 16) {
                const int m = n - i0 < 16 ? (int)(n - i0) : 16;
                real *ra[8], *rb[8];
                vd a[8];
                for (int q = 0; q < 8; q++) {
                    if (2 * q >= m) {
                        a[q] = vd_set1(0.0);
                        continue;
                    }
                    const size_t i = i0 + 2 * q, j = 2 * q + 1 < m ? i + 1 : i;
                    ra[q] = base + i * ST, rb[q] = base + j * ST;
                    const real *mi = VAL_MASK(w, p) + i * MS, *mj = VAL_MASK(w, p) + j * MS;
                    const real *si = base + (size_t)w->val_first[p][i] * ST + O_S1,
                               *sj = base + (size_t)w->val_first[p][j] * ST + O_S1;
                    const vd di = vd_fmadd(vd_ld(si), vd_ld(mi), vd_ld(mi + 8));
                    const vd dj = vd_fmadd(vd_ld(sj), vd_ld(mj), vd_ld(mj + 8));
                    vd_st(rb[q] + O_D1, dj);
                    vd_st(ra[q] + O_D1, di);
                    const vd lo = _mm256_permute2f128_ps(di, dj, 0x20), hi = _mm256_permute2f128_ps(di, dj, 0x31);
                    vd a2 = vd_fmadd(g3r[0], _mm256_permute_ps(lo, 0x00), g3r[1] * _mm256_permute_ps(lo, 0x55));
                    a2 = vd_fmadd(g3r[2], _mm256_permute_ps(lo, 0xAA), a2);
                    a2 = vd_fmadd(g3r[3], _mm256_permute_ps(lo, 0xFF), a2);
                    a2 = vd_fmadd(g3r[4], _mm256_permute_ps(hi, 0x00), a2);
                    a2 = vd_fmadd(g3r[5], _mm256_permute_ps(hi, 0x55), a2);
                    a2 = vd_fmadd(g3r[6], _mm256_permute_ps(hi, 0xAA), a2);
                    a2 = vd_fmadd(g3r[7], _mm256_permute_ps(hi, 0xFF), a2);
                    v4_st(rb[q] + O_A2, _mm256_extractf128_ps(a2, 1));
                    v4_st(ra[q] + O_A2, _mm256_castps256_ps128(a2));
                    a[q] = a2;
                }
                v_selu(a, a, 8);
                for (int q = 0; 2 * q < m; q++) {
                    v4_st(rb[q] + O_C, _mm256_extractf128_ps(a[q], 1));
                    v4_st(ra[q] + O_C, _mm256_castps256_ps128(a[q]));
                }
            }
        }
#else
        if (FAST && !cx->keep_g) { /* d1 and a2 per slot, then the SELU of the codes 16 slots at a time */
            const size_t n = n_val[p];
            for (size_t i = 0; i < n; i++) {
                real *rec = base + i * ST;
                const real *mk = VAL_MASK(w, p) + i * MS, *s1 = base + (size_t)w->val_first[p][i] * ST + O_S1;
                const v8 d1 = v8_fma_x(v8_ld(s1), v8_ld(mk), v8_ld(mk + 8));
                v8_st(rec + O_D1, d1);
                const real *dd = rec + O_D1;
                v4 a2 = v4_ld(G3T) * dd[0];
                for (int k = 1; k < 8; k++) a2 = v4_ld(G3T + 4 * k) * dd[k] + a2;
                v4_st(rec + O_A2, a2);
            }
            for (size_t i0 = 0; i0 < n; i0 += 16) {
                _Alignas(64) real buf[16][4] = {{0}};
                vd a[64 / VL];
                for (size_t i = i0; i < n && i < i0 + 16; i++)
                    memcpy(buf[i - i0], base + i * ST + O_A2, 4 * sizeof(real));
                for (int q = 0; q < 64 / VL; q++) a[q] = vd_ld(&buf[0][0] + VL * q);
                v_selu(a, a, 64 / VL);
                for (int q = 0; q < 64 / VL; q++) vd_st(&buf[0][0] + VL * q, a[q]);
                for (size_t i = i0; i < n && i < i0 + 16; i++)
                    memcpy(base + i * ST + O_C, buf[i - i0], 4 * sizeof(real));
            }
        }
#endif
#endif
#endif
        for (size_t i = 0; i < n_val[p]; i++) {
            real *rec = base + i * ST;
            const real *mk = VAL_MASK(w, p) + i * MS;
            const uint32_t first = w->val_first[p][i];
#if BL_F32
            const real *x = base + (size_t)first * ST + O_X;
#else
            const real *x = v->vecs[p] + (size_t)w->val_list[p][i] * (size_t)V;
#endif
            const real *s1 = base + (size_t)first * ST + O_S1;
#if BL_F32 && BL_ISA == 2
            if (FAST) { /* P and dP written by bl_kern_enc16_avx512_f32 */
            } else
#elif BL_ISA > 0
            if (FAST) {
                const real *c = rec + O_C;
#if BL_F32 /* written out: the first of the two products fused */
                const v8 P = v8_muls(v8_fmas_x(v8_ld(WTz + 24), c[3],
                                               v8_fmas_x(v8_ld(WTz + 16), c[2],
                                                         v8_fmas_x(v8_ld(WTz), c[0], v8_muls(v8_ld(WTz + 8), c[1])))),
                                     scale);
#else
                const v8 P = v8_muls(v8_fmas(v8_ld(WTz + 24), c[3],
                                             v8_fmas(v8_ld(WTz + 16), c[2],
                                                     v8_fmas(v8_ld(WTz + 8), c[1], v8_muls(v8_ld(WTz), c[0])))),
                                     scale);
#endif
                v8_st(rec + O_P, P);
                v8_st(rec + O_DP, v8_set1(0.0));
            } else
#endif
            {
                real *d1 = rec + O_D1, *a2 = rec + O_A2, *c = rec + O_C, *P = rec + O_P;
                if (!cx->keep_g) {
                    for (int k = 0; k < H; k++) d1[k] = s1[k] * mk[k] + mk[H + k];
                    mvt(G3T, C, C, H, d1, a2);
                    for (int k = 0; k < C; k++) c[k] = k_selu(a2[k]);
                }
                mvt(WTz, Z, Z, C, c, P);
                for (int k = 0; k < Z; k++) P[k] *= scale;
                memset(rec + O_DP, 0, (size_t)Z * sizeof(real));
            }
            if (!decode || (hybrid && first != i)) continue;
            const real *code = rec + O_C;
            if (hybrid) { /* the decoder reads the value's code without encoder dropout */
                mvt(G3T, C, C, H, s1, rec + O_A2C);
                for (int k = 0; k < C; k++) rec[O_CC + k] = k_selu(rec[O_A2C + k]);
                code = rec + O_CC;
            }
            DEC_CODE(w)[n_dec] = code;
            DEC_X(w)[n_dec] = x;
            DEC_MASK(w)[n_dec] = mk + 2 * H;
            DEC_DCD(w)[n_dec] = rec + O_DCD;
            DEC_W(w)[n_dec] = rs * VAL_W(w, p)[i];
            n_dec++;
        }
    }
#undef FL_GROUP
#undef FIRST_LAYER
    return n_dec;
}

/* h forward and backward together, over the n_dec decoder slots listed by encoder_forward (dec_block,
 * vdec_chunk: nothing of the decoder is stored between its two directions); returns the
 * reconstruction loss Σ w·(r − x)². With grad_h the decoder's gradients, with grad_g d loss / d code.
 * Inlined rather than a BL_LAYER: GCC does not clone it for the paper's dimensions, and dec_block's
 * plain loops (the generic copy's hottest) need them as constants. */
static BL_INLINE double decoder_forward_backward(const pass_ctx *cx, size_t n_dec, const int H, const int C,
                                                 const int V, const int FAST) {
    const bl_bnet *net = cx->net;
    bl_bwork *w = cx->w;
    const real *W = cx->W, *WT = cx->WT;
    real *G = cx->G;
    const int grad_g = cx->grad_g, grad_h = cx->grad_h;
    double recon_loss = 0.0;
    const real *H0T = WT + net->h0w, *H0 = W + net->h0w, *H3T = WT + net->h3w, *H3 = W + net->h3w;
    real *GH0 = G + net->h0w, *GH3 = G + net->h3w;
    size_t i = 0;
#if BL_F32 && BL_ISA == 2
    if (FAST) /* 16-float vectors, the same bits as the avx2 copy's vdec_chunk (dec16.c) */
        return bl_kern_dec16_avx512_f32(H0T, H0, H3T, H3, GH0, GH3, DEC_CODE(w), DEC_X(w), DEC_MASK(w), DEC_W(w),
                                        DEC_DCD(w), n_dec, grad_h, grad_g);
#endif
#if BL_ISA > 0
    if (FAST) {
        vd e2[NO40];
        v8 gh0t[4];
        for (int k = 0; k < NO40; k++) e2[k] = vd_set1(0.0);
        for (int k = 0; k < 4; k++) gh0t[k] = v8_set1(0.0);
        for (; i < n_dec; i += DCH) {
            const int ns = n_dec - i < DCH ? (int)(n_dec - i) : DCH;
            vdec_chunk(H0T, H0, H3T, H3, GH3, gh0t, DEC_CODE(w) + i, DEC_X(w) + i, DEC_MASK(w) + i,
                       DEC_W(w) + i, DEC_DCD(w) + i, e2, grad_h, grad_g, ns);
#if BL_F32 /* float sums per chunk, double across chunks */
            vd e = e2[0];
            for (int k = 1; k < NO40; k++) e += e2[k];
            for (int k = 0; k < VL; k++) recon_loss += (double)e[k];
            for (int k = 0; k < NO40; k++) e2[k] = vd_set1(0.0);
#endif
        }
#if !BL_F32
        vd e = e2[0];
        for (int k = 1; k < NO40; k++) e += e2[k];
        for (int k = 0; k < VL; k++) recon_loss += e[k];
#endif
        if (grad_h)
            for (int h = 0; h < 8; h++)
                for (int c = 0; c < 4; c++) GH0[h * 4 + c] += v8_lane(&gh0t[c], h);
    } else
#endif
    {
        double e2[BL_BNET_DIM_MAX];
        for (int k = 0; k < V; k++) e2[k] = 0.0;
        for (; i + DEC_NS <= n_dec; i += DEC_NS)
            dec_block(H0T, H0, H3T, H3, GH0, GH3, DEC_CODE(w) + i, DEC_X(w) + i, DEC_MASK(w) + i,
                      DEC_W(w) + i, DEC_DCD(w) + i, e2, grad_h, grad_g, DEC_NS, H, C, V);
        for (; i < n_dec; i++)
            dec_block(H0T, H0, H3T, H3, GH0, GH3, DEC_CODE(w) + i, DEC_X(w) + i, DEC_MASK(w) + i,
                      DEC_W(w) + i, DEC_DCD(w) + i, e2, grad_h, grad_g, 1, H, C, V);
        for (int k = 0; k < V; k++) recon_loss += e2[k];
    }
    return recon_loss;
}

/* z forward per row b: u = A + Σ_p P_p [Z], h = selu(u), pre = z2·h + b2, out = selu(pre); the row's
 * record keeps u, h, pre, out (then d loss / d out); pred[b] = out when pred is not NULL. */
static BL_LAYER void z_forward(const pass_ctx *cx, double *pred, const int FH, const int FO, const int H,
                                const int C, const int Z, const int FAST) {
    const bl_bnet *net = cx->net;
    const bl_bview *v = cx->v;
    const size_t *rows = cx->rows, B = cx->B, ST = cx->ST;
    bl_bwork *w = cx->w;
    const real *W = cx->W;
    const int NP = cx->NP;
    const real *z2 = W + net->z2w;
    for (size_t b = 0; b < B; b++) {
        size_t row = rows[b];
        real *rr = ROWS(w) + b * w->row_stride, *u = rr, *h = u + Z;
        const real *A = SX_REC(w) + (size_t)w->sx_slot[v->sx[row]] * w->sx_stride + 2 * FH + 2 * FO;
        const uint32_t *rsl = w->row_slot + b * (size_t)NP;
        real pre = W[net->z2b];
#if BL_ISA > 0
        if (FAST) {
            v8 uv = v8_ld(A);
            for (int p = 0; p < NP; p++) uv = v8_add(uv, v8_ld(VAL_REC(w, p) + (size_t)rsl[p] * ST + O_P));
            const v8 hv = v8_selu(uv);
            v8_st(u, uv);
            v8_st(h, hv);
            vd zh = hv.q[0] * vd_ld(z2);
            for (int q = 1; q < NV; q++) zh = hv.q[q] * vd_ld(z2 + VL * q) + zh;
            real zs[VL];
            vd_st(zs, zh);
#if VL == 8 /* pairwise, in a fixed order */
            pre += ((zs[0] + zs[1]) + (zs[2] + zs[3])) + ((zs[4] + zs[5]) + (zs[6] + zs[7]));
#else
            pre += (zs[0] + zs[1]) + (zs[2] + zs[3]);
#endif
        } else
#endif
        {
            memcpy(u, A, (size_t)Z * sizeof(real));
            for (int p = 0; p < NP; p++) {
                const real *P = VAL_REC(w, p) + (size_t)rsl[p] * ST + O_P;
                for (int k = 0; k < Z; k++) u[k] += P[k];
            }
            for (int k = 0; k < Z; k++) h[k] = k_selu(u[k]);
            for (int k = 0; k < Z; k++) pre += z2[k] * h[k];
        }
        real out = k_selu(pre);
        rr[2 * Z] = pre;
        rr[2 * Z + 1] = out;
        if (pred) pred[b] = (double)out;
    }
}

/* SmoothL1 over the batch, forward and backward: loss = mean over rows of (|e| < 1 ? e²/2 : |e| − 1/2),
 * e = out − target (the view has targets); each row's record gets d loss / d out. Returns the loss;
 * *abs_err = Σ|e|. */
static BL_LAYER double smoothl1_forward_backward(const pass_ctx *cx, double *abs_err_out, const int Z) {
    const bl_bview *v = cx->v;
    const size_t *rows = cx->rows, B = cx->B;
    bl_bwork *w = cx->w;
    double rt_loss = 0.0, abs_err = 0.0; /* in double in either precision: losses decide the search */
    const double inv_b = 1.0 / (double)B;
    for (size_t b = 0; b < B; b++) {
        size_t row = rows[b];
        real *rr = ROWS(w) + b * w->row_stride;
        double e = (double)rr[2 * Z + 1] - v->target[row], ae = fabs(e);
        abs_err += ae;
        rt_loss += ae < 1.0 ? 0.5 * e * e : ae - 0.5;
        rr[2 * Z + 2] = (real)((ae < 1.0 ? e : (e > 0 ? 1.0 : -1.0)) * inv_b); /* d loss / d out */
    }
    rt_loss *= inv_b;
    *abs_err_out = abs_err;
    return rt_loss;
}

/* z backward per row: dpre = d out · selu'(pre); z2's and b2's gradients; du = dpre·z2·selu'(u) added
 * into the row's scale-out term (dA) and property terms (dP), which f_backward and encoder_backward
 * take from there. */
static BL_LAYER void z_backward(const pass_ctx *cx, const int FH, const int FO, const int H, const int C,
                                 const int Z, const int FAST) {
    const bl_bnet *net = cx->net;
    const bl_bview *v = cx->v;
    const size_t *rows = cx->rows, B = cx->B, ST = cx->ST;
    bl_bwork *w = cx->w;
    const real *W = cx->W;
    real *G = cx->G;
    const int NP = cx->NP, grad_z = cx->grad_z;
    const real *z2 = W + net->z2w;
    real *gz2 = G + net->z2w;
    real du[BL_BNET_DIM_MAX];
#if BL_ISA > 0
    v8 gz2v = v8_set1(0.0);
#endif
    for (size_t b = 0; b < B; b++) {
        size_t row = rows[b];
        real *rr = ROWS(w) + b * w->row_stride, *u = rr, *h = u + Z;
        real dpre = rr[2 * Z + 2] * k_selu_d(rr[2 * Z], rr[2 * Z + 1]);
        real *dA = SX_REC(w) + (size_t)w->sx_slot[v->sx[row]] * w->sx_stride + 2 * FH + 2 * FO + Z;
        const uint32_t *rsl = w->row_slot + b * (size_t)NP;
        if (grad_z) G[net->z2b] += dpre;
#if BL_ISA > 0
        if (FAST) {
            const v8 uv = v8_ld(u), hv = v8_ld(h);
            if (grad_z) gz2v = v8_fmas(hv, dpre, gz2v);
            const v8 duv = v8_mul(v8_muls(v8_ld(z2), dpre), v8_selu_d(uv, hv));
            v8_st(dA, v8_add(v8_ld(dA), duv));
            for (int p = 0; p < NP; p++) {
                real *dP = VAL_REC(w, p) + (size_t)rsl[p] * ST + O_DP;
                v8_st(dP, v8_add(v8_ld(dP), duv));
            }
            continue;
        }
#endif
        if (grad_z)
            for (int k = 0; k < Z; k++) gz2[k] += dpre * h[k];
        for (int k = 0; k < Z; k++) du[k] = dpre * z2[k] * k_selu_d(u[k], h[k]);
        for (int k = 0; k < Z; k++) dA[k] += du[k];
        for (int p = 0; p < NP; p++) {
            real *dP = VAL_REC(w, p) + (size_t)rsl[p] * ST + O_DP;
            for (int k = 0; k < Z; k++) dP[k] += du[k];
        }
    }
#if BL_ISA > 0
    if (FAST && grad_z) v8_st(gz2, v8_add(v8_ld(gz2), gz2v));
#endif
}

/* f backward, and z's scale-out block, per distinct scale-out from its dA: z0's bias and block
 * gradients, then (unless f is frozen) dF = Z0[:, 0:FO]ᵀ·dA through both layers of f. */
static BL_LAYER void f_backward(const pass_ctx *cx, const int FI, const int FH, const int FO, const int Z) {
    const bl_bnet *net = cx->net;
    const bl_bview *v = cx->v;
    bl_bwork *w = cx->w;
    const real *W = cx->W;
    real *G = cx->G;
    const size_t n_sx = cx->n_sx;
    const int ZI = cx->ZI, grad_f = cx->grad_f, grad_z = cx->grad_z;
    for (size_t i = 0; i < n_sx; i++) {
        real *r = SX_REC(w) + i * w->sx_stride;
        real *a0 = r, *s0 = a0 + FH, *a2 = s0 + FH, *F = a2 + FO, *dA = F + FO + Z, *dF = dA + Z;
        if (grad_z) {
            for (int k = 0; k < Z; k++) G[net->z0b + (size_t)k] += dA[k];
            outer_add(G + net->z0w, ZI, Z, FO, dA, F, 1.0);
        }
        if (!grad_f) continue;
        mtv_add(W + net->z0w, ZI, Z, FO, dA, dF);
        real da2[BL_BNET_DIM_MAX], ds0[BL_BNET_DIM_MAX];
        for (int k = 0; k < FO; k++) da2[k] = dF[k] * k_selu_d(a2[k], F[k]);
        for (int k = 0; k < FO; k++) G[net->f2b + (size_t)k] += da2[k];
        outer_add(G + net->f2w, FH, FO, FH, da2, s0, 1.0);
        memset(ds0, 0, (size_t)FH * sizeof(real));
        mtv_add(W + net->f2w, FH, FO, FH, da2, ds0);
        for (int k = 0; k < FH; k++) ds0[k] *= k_selu_d(a0[k], s0[k]);
        for (int k = 0; k < FH; k++) G[net->f0b + (size_t)k] += ds0[k];
        const double *xd = v->sx_feat + (size_t)w->sx_list[i] * (size_t)FI;
#if BL_F32
        real x[BL_BNET_DIM_MAX];
        for (int k = 0; k < FI; k++) x[k] = (real)xd[k];
#else
        const real *x = xd;
#endif
        outer_add(G + net->f0w, FI, FH, FI, ds0, x, 1.0);
    }
}

/* g backward, and z's property blocks, per slot from its dP: z0's block gradients, d code from z (and
 * from the decoder), through the code's SELU, G3 and the dropout mask into the first layer's d a1,
 * summed per value; then G0's gradient once per distinct value. */
static BL_LAYER void encoder_backward(const pass_ctx *cx, const size_t *n_val, const int FO, const int H,
                                      const int C, const int V, const int Z, const int FAST) {
    const bl_bnet *net = cx->net;
    const bl_bview *v = cx->v;
    (void)v; /* the float32 copies read the values' vectors from their slots */
    bl_bwork *w = cx->w;
    const real *W = cx->W;
    real *G = cx->G;
    const size_t ST = cx->ST, MS = cx->MS;
    const int NE = cx->NE, NO = cx->NO, NP = cx->NP, ZI = cx->ZI;
    const int decode = cx->decode, hybrid = cx->hybrid, grad_g = cx->grad_g, grad_z = cx->grad_z;
    const real *restrict G3 = W + net->g3w;
    real gg3[BL_BNET_DIM_MAX]; /* G3's gradient [C×H] summed over all slots, when it fits */
    const int acc_g3 = grad_g && C * H <= BL_BNET_DIM_MAX;
    if (acc_g3) memset(gg3, 0, (size_t)(C * H) * sizeof(real));
    real *g3 = acc_g3 ? gg3 : G + net->g3w;
    for (int p = 0; p < NP; p++) {
        const int opt = p >= NE;
        const int col = opt ? FO + C * NE : FO + C * p;
        const real scale = opt ? 1.0 / NO : 1.0;
        real *base = VAL_REC(w, p);
#if BL_ISA > 0
        if (FAST) {
            const real *restrict Wz = W + net->z0w + col;
            v8 gzt[4], gg[4]; /* z0's block transposed (code unit c → 8 lanes of z), G3's rows */
            for (int k = 0; k < 4; k++) gzt[k] = gg[k] = v8_set1(0.0);
            v4 wz[8];
            for (int k = 0; k < 8; k++) wz[k] = v4_ld(Wz + (size_t)k * ZI);
            const v8 g3r0 = v8_ld(G3), g3r1 = v8_ld(G3 + 8), g3r2 = v8_ld(G3 + 16), g3r3 = v8_ld(G3 + 24);
            for (size_t i = 0; i < n_val[p]; i++) {
                real *rec = base + i * ST;
                const real *cc4 = rec + O_C;
                const v8 dP = v8_ld(rec + O_DP);
                if (grad_z) {
                    const v8 sdP = v8_muls(dP, scale);
                    for (int c = 0; c < 4; c++) gzt[c] = v8_fmas(sdP, cc4[c], gzt[c]);
                }
                if (!grad_g) continue;
                const uint32_t first = w->val_first[p][i];
                real *frec = base + (size_t)first * ST;
                const int dec = decode && (!hybrid || first == i);
                v4 dc = wz[0] * rec[O_DP];
                for (int k = 1; k < 8; k++) dc = wz[k] * rec[O_DP + k] + dc; /* d code from z */
                dc *= scale;
                if (dec && !hybrid) dc += v4_ld(rec + O_DCD); /* and from the decoder */
                const v4 dcode = dc * v4_selu_d(v4_ld(rec + O_A2), v4_ld(rec + O_C)); /* d a2 */
                const v8 d1 = v8_ld(rec + O_D1);
                for (int c = 0; c < 4; c++) gg[c] = v8_fmas(d1, dcode[c], gg[c]);
                const v8 dd1 = v8_fmas(g3r3, dcode[3],
                                       v8_fmas(g3r2, dcode[2], v8_fmas(g3r1, dcode[1], v8_muls(g3r0, dcode[0]))));
                const v8 s1 = v8_ld(frec + O_S1), sd = v8_selu_d(v8_ld(frec + O_A1), s1);
                v8 acc = v8_fma(v8_mul(dd1, v8_ld(VAL_MASK(w, p) + i * MS)), sd, v8_ld(frec + O_ACC)); /* d a1 */
                if (dec && hybrid) { /* the clean path: cc = selu(G3·s1) read by the decoder */
                    const v4 dcl = v4_ld(rec + O_DCD) * v4_selu_d(v4_ld(rec + O_A2C), v4_ld(rec + O_CC));
                    for (int c = 0; c < 4; c++) gg[c] = v8_fmas(s1, dcl[c], gg[c]);
                    const v8 t = v8_fmas(g3r3, dcl[3],
                                         v8_fmas(g3r2, dcl[2], v8_fmas(g3r1, dcl[1], v8_muls(g3r0, dcl[0]))));
                    acc = v8_fma(t, sd, acc);
                }
                v8_st(frec + O_ACC, acc);
            }
            if (grad_z)
                for (int k = 0; k < 8; k++)
                    for (int c = 0; c < 4; c++)
                        G[net->z0w + (size_t)k * ZI + (size_t)(col + c)] += v8_lane(&gzt[c], k);
            if (grad_g)
                for (int c = 0; c < 4; c++) v8_st(gg3 + 8 * c, v8_add(v8_ld(gg3 + 8 * c), gg[c]));
        } else
#endif
            for (size_t i = 0; i < n_val[p]; i++) {
                real *rec = base + i * ST;
                const real *c = rec + O_C, *dP = rec + O_DP;
                if (grad_z) outer_add(G + net->z0w + col, ZI, Z, C, dP, c, scale);
                if (!grad_g) continue;
                const uint32_t first = w->val_first[p][i];
                real *frec = base + (size_t)first * ST;
                const real *a1 = frec + O_A1, *s1 = frec + O_S1, *a2 = rec + O_A2, *d1 = rec + O_D1;
                real *acc = frec + O_ACC;
                const real *mk = VAL_MASK(w, p) + i * MS;
                const int dec = decode && (!hybrid || first == i);
                real dcode[BL_BNET_DIM_MAX], tmp[BL_BNET_DIM_MAX];
                for (int k = 0; k < C; k++) dcode[k] = 0.0;
                mtv_add(W + net->z0w + col, ZI, Z, C, dP, dcode); /* d code from z */
                for (int k = 0; k < C; k++) {
                    dcode[k] *= scale;
                    if (dec && !hybrid) dcode[k] += rec[O_DCD + k]; /* and from the decoder */
                }
                for (int k = 0; k < C; k++) dcode[k] *= k_selu_d(a2[k], c[k]); /* d a2 */
                outer_add(g3, H, C, H, dcode, d1, 1.0);
                for (int k = 0; k < H; k++) tmp[k] = 0.0;
                mtv_add(G3, H, C, H, dcode, tmp);                 /* d d1 */
                for (int k = 0; k < H; k++)                       /* d a1, summed over the value's slots */
                    acc[k] += tmp[k] * mk[k] * k_selu_d(a1[k], s1[k]);
                if (dec && hybrid) { /* the clean path: cc = selu(G3·s1) read by the decoder */
                    const real *a2c = rec + O_A2C, *cc = rec + O_CC;
                    for (int k = 0; k < C; k++) dcode[k] = rec[O_DCD + k] * k_selu_d(a2c[k], cc[k]);
                    outer_add(g3, H, C, H, dcode, s1, 1.0);
                    for (int k = 0; k < H; k++) tmp[k] = 0.0;
                    mtv_add(G3, H, C, H, dcode, tmp);
                    for (int k = 0; k < H; k++) acc[k] += tmp[k] * k_selu_d(a1[k], s1[k]);
                }
            }
        /* the encoder's first layer: one outer product per distinct value */
#if BL_F32 && BL_ISA == 2
        if (grad_g && FAST) { /* G0's gradient in registers over the values (enc16.c), the same bits */
            bl_kern_enc16g0_avx512_f32(G + net->g0w, base, ST, w->val_first[p], n_val[p]);
            continue;
        }
#endif
        if (grad_g)
            for (size_t i = 0; i < n_val[p]; i++) {
                if (w->val_first[p][i] != i) continue;
#if BL_F32
                const real *x = base + i * ST + O_X;
#else
                const real *x = v->vecs[p] + (size_t)w->val_list[p][i] * (size_t)V;
#endif
                outer_add(G + net->g0w, V, H, V, base + i * ST + O_ACC, x, 1.0);
            }
    }
    if (acc_g3)
        for (int k = 0; k < C * H; k++) G[net->g3w + (size_t)k] += gg3[k];
}

/* Empties the slot maps for the next batch. */
static BL_LAYER void reset_slots(const pass_ctx *cx, const size_t *n_val) {
    bl_bwork *w = cx->w;
    const size_t n_sx = cx->n_sx;
    const int NP = cx->NP;
    for (size_t i = 0; i < n_sx; i++) w->sx_slot[w->sx_list[i]] = -1;
    for (int p = 0; p < NP; p++)
        for (size_t i = 0; i < n_val[p]; i++) w->val_slot[p][w->val_list[p][i]] = -1;
}

/* FAST: the paper's dimensions with the vector kernels (vector copies only). The layers in order:
 * slots and masks, f, g, h (forward and backward), z, the loss, then backward z, f, g. */
static BL_INLINE bl_status pass_impl(bl_bnet *net, const bl_bview *v, const size_t *rows, size_t B,
                                     const bl_bpass *pass, bl_bwork *w, double *pred, bl_bloss *loss, bl_error *err,
                                     const int FI, const int FH, const int FO, const int H, const int C, const int V,
                                     const int Z, const int FAST) {
    const bl_bnet_dims *d = &net->d;
    const int drop = pass->training && pass->dropout > 0.0;
    double da = 1.0, db = 0.0;
    if (drop) {
        bl_status st = bl_alpha_dropout_coef(pass->dropout, &da, &db, err);
        if (st) return st;
    }
    const int grad = pass->want_grad;
    pass_ctx c = {
#if BL_F32
        .W = (const real *)w->Wf, .G = (real *)w->Gf,
#else
        .W = net->P.param, .G = net->P.grad,
#endif
        .net = net, .v = v, .rows = rows, .B = B, .w = w, .WT = (const real *)w->WT,
        .NE = d->n_ess, .NO = d->n_opt, .NP = d->n_ess + d->n_opt, .ZI = net->z_in,
        .ST = w->val_stride, .MS = 4 * (size_t)H,
        .decode = pass->recon, .hybrid = pass->per_row_dropout == 2,
        .grad_f = grad && !view_frozen(&net->P, net->f0w),
        .grad_g = grad && !view_frozen(&net->P, net->g0w),
        .grad_h = grad && pass->recon && !view_frozen(&net->P, net->h0w),
        .grad_z = grad && !view_frozen(&net->P, net->z0w),
    };
    size_t n_val[2 * BL_BNET_PROPS_MAX];
    const int plain = !drop && !pass->recon; /* only such a pass can be read back (fine-tuning's) */
    const uint32_t frozen = plain ? frozen_views(&net->P) : 0;
    const uint32_t keep = plain ? reusable_views(net, v, rows, B, pass, w, frozen) : 0;
    if (keep) {
        const uint32_t fv = block_views(&net->P, net->f0w, net->f2b), gv = block_views(&net->P, net->g0w, net->g3w);
        c.keep_f = fv && (keep & fv) == fv;
        c.keep_g = gv && (keep & gv) == gv;
    }
    w->last.plain = 0; /* until this pass has run through */

    transpose_weights(net, net->P.param, (real *)w->WT, (real *)w->Wf, keep);
#if BL_F32
    if (grad) memset(w->Gf, 0, net->P.n * sizeof(real));
#endif
    c.n_sx = batch_slots(v, rows, B, c.NP, pass->per_row_dropout, c.hybrid, w, n_val);
    dropout_masks(&c, n_val, pass, drop, da, db, H);
    f_forward(&c, FI, FH, FO, Z);
    const size_t n_dec = encoder_forward(&c, n_val, FO, H, C, V, Z, FAST);
    const double recon_loss = c.decode ? decoder_forward_backward(&c, n_dec, H, C, V, FAST) : 0.0;
    z_forward(&c, pred, FH, FO, H, C, Z, FAST);
    double abs_err = 0.0;
    loss->runtime = v->target ? smoothl1_forward_backward(&c, &abs_err, Z) : 0.0;
    loss->recon = recon_loss;
    loss->total = loss->runtime + loss->recon;
    loss->abs_err = abs_err;
    if (grad) {
        z_backward(&c, FH, FO, H, C, Z, FAST);
        f_backward(&c, FI, FH, FO, Z);
        encoder_backward(&c, n_val, FO, H, C, V, Z, FAST);
#if BL_F32 /* the float gradients into the double ones */
        const real *gf = (const real *)w->Gf;
        for (size_t i = 0; i < net->P.n; i++) net->P.grad[i] += (double)gf[i];
#endif
    }
    reset_slots(&c, n_val);
    if (plain) { /* what the next pass may read back */
        w->last.net = net;
        w->last.copy = THIS_COPY;
        w->last.view = v;
        w->last.B = B;
        memcpy(w->last.rows, rows, B * sizeof *rows);
        w->last.per_row = pass->per_row_dropout;
        w->last.n_views = net->P.n_views;
        w->last.frozen = frozen;
        w->last.plain = 1;
    }
    return BL_OK;
}

/* The paper's dimensions with constant sizes (and, in the vector copies, the vector kernels); any
 * other dimensions with sizes from the network and the plain loops. */
bl_status KFN(bl_kern_pass)(bl_bnet *net, const bl_bview *v, const size_t *rows, size_t B, const bl_bpass *pass,
                            bl_bwork *w, double *pred, bl_bloss *loss, bl_error *err);
bl_status KFN(bl_kern_pass)(bl_bnet *net, const bl_bview *v, const size_t *rows, size_t B, const bl_bpass *pass,
                            bl_bwork *w, double *pred, bl_bloss *loss, bl_error *err) {
    const bl_bnet_dims *d = &net->d;
    const bl_fpflush fl = bl_fpflush_enter();
    bl_status st;
    if (bl_bnet_paper_dims(d))
        st = pass_impl(net, v, rows, B, pass, w, pred, loss, err, 3, 16, 8, 8, 4, 40, 8, BL_ISA > 0);
    else
        st = pass_impl(net, v, rows, B, pass, w, pred, loss, err, d->f_in, d->f_hidden, d->f_out, d->ae_hidden,
                       d->code, d->vec_len, d->z_hidden, 0);
    bl_fpflush_leave(fl);
    return st;
}
