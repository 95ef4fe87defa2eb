/* tgroup_ops.h — the primitive operations a trial group (tgroup.h) is built from, as one table with
 * two implementations: a CPU reference (tgroup_cpu.c, plain loops) and CUDA (src/nn/cuda/, cuBLAS
 * strided-batched GEMMs and fused element-wise kernels on one stream).
 *
 * Why a table of small ops rather than two whole training passes: the pass (which GEMM, which
 * shapes, strides and transposes, in which order) is written once, in tgroup.c, and is checked on the
 * CPU against the per-trial path (bl_bnet_pass); a device implementation only has to get each op right,
 * and each op is a few lines that can be read side by side with its CPU twin.
 *
 * Memory: every pointer below lives in the ops' memory (device memory for CUDA, plain heap for the
 * CPU) unless it says "host". Trials are stored in SLOTS: slot s holds the trial slot_trial[s]; the
 * slots in use are 0..n-1 (alive trials, compacted in trial order). Per-slot blocks follow each other
 * at fixed strides, so one strided-batched GEMM covers every slot.
 *
 * Rows of a pass: B rows of a view, b < B. The auto-encoder runs once per (property p, row b): its
 * NP·B "AE rows" are stacked property-major, q = p·B + b. Buffers are sized for R rows per slot
 * (R ≥ every B), so per-slot strides do not change with B.
 *
 * Ops never check arguments (tgroup.c does) and never return errors directly: the first failure is kept
 * in the context and reported by finish(). All ops are stream-ordered: they may run after returning.
 * Not here: the order of the pass, random draws, bookkeeping (tgroup.c).
 */
#ifndef BL_NN_TGROUP_OPS_H
#define BL_NN_TGROUP_OPS_H

#include <stddef.h>
#include <stdint.h>

#include "bellamy/bellamy.h"
#include "nn/bnet.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Dimensions (those of bl_bnet_dims) and element offsets of each parameter block in a slot (bl_bnet's,
 * from the same list: BL_BNET_BLOCKS). */
typedef struct bl_tg_net {
    int  FI, FH, FO;        /* f: in, hidden, out */
    int  V, H, C;           /* auto-encoder: vector, hidden, code */
    int  Z, ZI;             /* z: hidden, input (FO + C·NE + C) */
    int  NE, NO, NP;        /* essential, optional, all properties */
    long P;                 /* stride between slots' parameter blocks (≥ n_params, padded) */
    long n_params;          /* parameters of one network */
    BL_BNET_BLOCKS(BL_BNET_LONG_FIELD, 0, 0) /* f0w, f0b, …, z2b */
} bl_tg_net;

/* A view's tables (see bl_bview), uploaded once. */
typedef struct bl_tg_view {
    long            n_rows;
    const double   *sx_feat;  /* [n_sx][FI] scaled scale-out features */
    const double   *vecs;     /* [n_vecs][V] every property's vectors, back to back */
    const uint32_t *sx;       /* [n_rows] row into sx_feat */
    const uint32_t *vec;      /* [n_rows][NP] row into vecs */
    const double   *target;   /* [n_rows] */
} bl_tg_view;

/* Work buffers, per slot: "[R][k]" means a block of R·k doubles per slot, "[R·NP][k]" R·NP·k. */
typedef struct bl_tg_work {
    long    R;
    double *xs;       /* [R][FI]     scale-out features of the rows */
    double *tgt;      /* [R]         targets of the rows */
    double *s0;       /* [R][FH]     f's hidden layer (pre-activation, then SELU); backward: d */
    double *zin;      /* [R][ZI]     z's input: f(x) | essential codes | mean optional code */
    double *dzin;     /* [R][ZI]     d loss / d zin (first FO columns become d of f's output pre-act.) */
    double *ds0;      /* [R][FH]     d loss / d f hidden (then of its pre-activation) */
    double *h;        /* [R][Z]      z's hidden layer (GEMM output, then SELU) */
    double *du;       /* [R][Z]      d loss / d z hidden pre-activation */
    double *dpre;     /* [R]         d loss / d z output pre-activation */
    double *rowl;     /* [R]         SmoothL1 of each row */
    double *X;        /* [R·NP][V]   the property vectors of the AE rows */
    double *s1;       /* [R·NP][H]   encoder hidden (pre-activation, then SELU) */
    double *d1;       /* [R·NP][H]   after AlphaDropout */
    double *c;        /* [R·NP][C]   codes (pre-activation, then SELU); backward: d pre-activation */
    double *ck;       /* [R·NP][C]   mode 2: the code without encoder dropout; backward: its d */
    double *dc;       /* [R·NP][C]   d loss / d code (decoder's share, then the whole d pre-act.) */
    double *t1;       /* [R·NP][H]   decoder hidden (pre-activation, then SELU) */
    double *e1;       /* [R·NP][H]   after AlphaDropout */
    double *r;        /* [R·NP][V]   reconstruction pre-activation, then d loss / d it */
    double *de1;      /* [R·NP][H]   d loss / d e1, then d of the decoder hidden pre-activation */
    double *dd1;      /* [R·NP][H]   d loss / d d1, then d of the encoder hidden pre-activation */
    double *dk1;      /* [R·NP][H]   mode 2: the clean path's share of d s1 */
    double *rec;      /* [2]         Σ (r − x)² over essential / optional AE rows */
} bl_tg_work;

/* Everything an op may touch. Slots 0..n-1 are in use. */
typedef struct bl_tg_state {
    bl_tg_net       net;
    bl_tg_work      w;
    int             n;           /* slots in use */
    double         *W, *G, *M, *Vm, *best;   /* [slots][P] parameters, gradients, Adam m, v, best */
    double         *hyp;         /* [slots][BL_TG_HYP] per-slot hyper-parameters */
    const int32_t  *slot_trial;  /* [slots] trial held by each slot */
    const int32_t  *keep;        /* [slots] 1: copy W into best (keep_best) */
    const uint32_t *order;       /* [trials][n_order] this epoch's row order of each trial */
    const uint8_t  *mask;        /* [trials][n_order][NP][2H] this epoch's AlphaDropout keep masks:
                                    encoder's H then decoder's H, per row position and property */
    long            n_order;     /* rows of the training view */
    const double   *bc;          /* [nb][2] Adam's bias corrections 1 − β1ᵗ, 1 − β2ᵗ of this epoch's steps */
    double         *loss;        /* [slots][loss_ld] loss of each batch; column nb: validation */
    long            loss_ld;
    double         *ema, *avg;   /* [slots][P] the parameters' running average (NULL: none) and its value */
    const double   *avgk;        /* [2] this epoch's β and 1 / (1 − βᵗ) */
} bl_tg_state;

/* hyp[s·BL_TG_HYP + i]: learning rate, weight decay, AlphaDropout a and b, dropout on (0/1). */
enum { BL_TG_LR = 0, BL_TG_WD = 1, BL_TG_DA = 2, BL_TG_DB = 3, BL_TG_DROP = 4, BL_TG_HYP = 5 };

typedef struct bl_tg_ops {
    const char *name;        /* "cpu", "cuda" */
    int         device;      /* 1: pointers are device memory */

    /* Context: opens the device, one stream and one BLAS handle. */
    bl_status (*open)(void **ctx, bl_error *err);
    void (*close)(void *ctx);
    /* Ops memory, zero-filled; NULL on failure (reported by finish too). */
    void *(*alloc)(void *ctx, size_t bytes);
    void (*dfree)(void *ctx, void *p);
    /* Host memory fit for fast transfers (page-locked for CUDA); NULL on failure. */
    void *(*host_alloc)(void *ctx, size_t bytes);
    void (*host_free)(void *ctx, void *p);
    /* Stream-ordered copies: host → ops, ops → host (valid after finish), within ops memory. */
    void (*put)(void *ctx, void *dst, const void *src, size_t bytes);
    void (*get)(void *ctx, void *dst, const void *src, size_t bytes);
    void (*copy)(void *ctx, void *dst, const void *src, size_t bytes);
    /* Waits for everything queued; returns the first error since the last finish. */
    bl_status (*finish)(void *ctx, bl_error *err);

    /* Row-major C = α·op(A)·op(B) + β·C for `batch` slots (op: transpose when t != 0); op(A) is M×K,
     * op(B) K×N; lda/ldb/ldc are row strides, sA/sB/sC the strides between slots. β = 0 writes C
     * without reading it. */
    void (*gemm)(void *ctx, int ta, int tb, int M, int N, int K, double alpha, const double *A, long lda,
                 long sA, const double *B, long ldb, long sB, double beta, double *C, long ldc, long sC,
                 int batch);

    /* Rows i0..i0+B of the view (in each slot's trial order when use_order, else in view order):
     * xs, tgt, and the AE rows' vectors X[p·B + b]. */
    void (*gather)(void *ctx, const bl_tg_state *s, const bl_tg_view *v, int use_order, long i0, int B);
    /* Y[r][j] = selu(Y[r][j] + W[bias + j]) for r < rows, j < cols (bias < 0: no bias); Y has row
     * stride ldy and slot stride sY. */
    void (*bias_selu)(void *ctx, const bl_tg_state *s, int rows, int cols, double *Y, long ldy, long sY,
                      long bias);
    /* AE rows q < NP·B, k < H: a = selu(a); d = dropout on and training ? (keep ? a : α')·da + db : a,
     * keep = mask[trial][i0 + b][p][which·H + k]. a, d: [R·NP][H] buffers. */
    void (*selu_dropout)(void *ctx, const bl_tg_state *s, int B, double *a, double *d, int which, long i0,
                         int training);
    /* c = selu(c) for the NP·B AE rows, then zin[b][FO + C·p + k] = c[p·B + b][k] (essential p) and
     * zin[b][FO + C·NE + k] = (Σ optional c[p·B + b][k]) · (1/NO) (0 when NO = 0). */
    void (*codes)(void *ctx, const bl_tg_state *s, int B);
    /* r = tanh(r); rec[0|1] = Σ (r − x)² over essential | optional AE rows; then
     * r = 2·(r − x)·(1 − r²) / (B·NE·V) (essential) or / (B·NO·V) (optional). */
    void (*recon)(void *ctx, const bl_tg_state *s, int B);
    /* z's head for rows b < B: h = selu(h + z0b); pre = z2b + Σ z2·h; out = selu(pre); SmoothL1
     * against tgt; loss[slot][col] = Σ SmoothL1 / B + rec[0]/(B·NE·V) + rec[1]/(B·NO·V). With
     * want_grad also dpre, du, and the gradients of z0b, z2w, z2b (added). */
    void (*head)(void *ctx, const bl_tg_state *s, int B, int want_grad, long col);
    /* dY[r][j] *= selu'(Y[r][j]) (from SELU's output), G[bias + j] += Σ_r dY[r][j], r < B, j < cols. */
    void (*selu_back_bias)(void *ctx, const bl_tg_state *s, int B, int cols, double *dY, long ld, long sD,
                           const double *Y, long ldy, long sY, long bias);
    /* AE rows: dx = (dropout on ? (keep ? da·dx : 0) : dx)·selu'(y) [+ extra·selu'(y)], the mask as in
     * selu_dropout (which). extra may be NULL. */
    void (*dropout_selu_back)(void *ctx, const bl_tg_state *s, int B, double *dx, const double *y, int which,
                              long i0, const double *extra);
    /* AE rows: the code's gradient from z, dz = dzin[b][FO + C·p + k] (essential) or
     * dzin[b][FO + C·NE + k]·(1/NO) (optional). clean = 0: dc = (dz + dc)·selu'(c);
     * clean = 1 (mode 2, the decoder read ck): ck = dc·selu'(ck), then dc = dz·selu'(c). */
    void (*code_back)(void *ctx, const bl_tg_state *s, int B, int clean);
    /* Adam (PyTorch semantics, coupled weight decay) over every slot's n_params parameters with the
     * slot's lr and wd and the bias corrections bc[2·ib], bc[2·ib + 1] of batch ib; then G = 0. (Read
     * from memory rather than passed, so that an epoch's ops are the same every epoch: see capture.) */
    void (*adam)(void *ctx, const bl_tg_state *s, double beta1, double beta2, double eps, long ib);
    /* best[slot] = W[slot] where keep[slot]. */
    void (*keep_best)(void *ctx, const bl_tg_state *s);

    /* Graphs, optional (NULL on the CPU). The contract, in the caller's order:
     *   capture_begin: 1 when capture really started: the ops queued from now until capture_end are
     *     recorded, not run. 0 when it did not (or a failure is pending): nothing is being recorded, no
     *     error is pending because of it, and the caller runs the ops directly, once, and does NOT call
     *     capture_end. (Queuing the ops after a failed start would run them for real; recording them
     *     again after capture_end's failure would then run the epoch twice.)
     *   capture_end (only after capture_begin returned 1): 1 when the record became one replayable
     *     graph (replacing any earlier one); nothing of it ran, so the caller calls replay. 0 when the
     *     capture failed: nothing was recorded or run, no error is pending because of it, and the
     *     caller queues the ops again directly.
     *   replay: queues the recorded graph.
     *   capture_why: why the last capture_begin or capture_end answered 0 ("" otherwise); valid until
     *     the next call on ctx. For diagnostics only. */
    int (*capture_begin)(void *ctx);
    int (*capture_end)(void *ctx);
    void (*replay)(void *ctx);
    const char *(*capture_why)(void *ctx);
    /* ema = β·ema + (1 − β)·W, avg = ema / (1 − βᵗ) over every slot's n_params parameters, β and
     * 1 / (1 − βᵗ) read from avgk (pretrain.c's average_params, element by element). */
    void (*average)(void *ctx, const bl_tg_state *s);
} bl_tg_ops;

/* The CPU reference table (tgroup_cpu.c). */
const bl_tg_ops *bl_tg_ops_cpu(void);
/* The CUDA table, from the CUDA module (src/nn/cuda/load.c, which loads it on first use); NULL when the
 * module cannot be loaded (bl_cuda_available says why). It may be non-NULL on a machine without a GPU. */
const bl_tg_ops *bl_tg_ops_cuda(void);

#ifdef __cplusplus
}
#endif

#endif /* BL_NN_TGROUP_OPS_H */
