/* bnet.h — the Bellamy network (f, g, h, z) and one training/evaluation pass over a batch of rows.
 *
 *   f  scale-out net   [1/x, ln x, x] (min-max scaled) → 16 → 8, SELU after both layers
 *   g  encoder         40 → 8 → 4, no biases, SELU, AlphaDropout(p) between, SELU
 *   h  decoder         4 → 8 → 40, no biases, SELU, AlphaDropout(p) between, tanh
 *   z  runtime net     [f(x) (8), codes of the m essential properties (4m), mean code of the
 *                      optional ones (4)] → 8 → 1, SELU after both layers
 *
 * Loss of a batch of B rows = SmoothL1(pred, target)                     (mean over B)
 *                           + MSE(h(g(v)), v) over essential vectors     (mean over B·m·40)
 *                           + MSE(h(g(v)), v) over optional vectors      (mean over B·k·40, k > 0)
 *
 * Why it is fast: within a data set a property takes few distinct values (all rows of a context
 * share them) and the scale-out takes few distinct values too. A pass therefore runs f once per
 * DISTINCT scale-out of the batch and g/h once per DISTINCT (property, value) pair, and z's first
 * layer is split by input block: its pre-activation for a row is
 *     u = [Wf·f(x) + b]  +  Σ_essential W_j·c_j  +  W_o·mean(optional codes)
 * where every bracketed term is computed once per distinct scale-out or value and then summed per
 * row. Gradients flow back the same way, accumulated over the rows that share a value. The result is
 * the exact gradient of the loss above. The one departure from a row-by-row network: in training, an
 * AlphaDropout mask belongs to a distinct vector within the batch rather than to each row (see
 * bench/README.md for the measured effect).
 *
 * Parameters live in one bl_params block, with PyTorch state-dict style names
 * (f.0.weight, f.0.bias, f.2.weight, f.2.bias, g.0.weight, g.3.weight, h.0.weight, h.3.weight,
 *  z.0.weight, z.0.bias, z.2.weight, z.2.bias), weights [out×in] row-major.
 * Not here: data sets, training loops (train.c), files (modelio.c).
 */
#ifndef BL_MODEL_BNET_H
#define BL_MODEL_BNET_H

#include <stddef.h>
#include <stdint.h>

#include "bellamy/bellamy.h"
#include "nn/nn.h"

#define BL_BNET_DIM_MAX   256  /* largest layer width (vec_len ≤ 64 comes from the encoders) */
#define BL_BNET_PROPS_MAX 256  /* most essential (and most optional) properties */

/* Dimensions; bl_bnet_dims_default fills the paper's values for n_ess/n_opt properties. */
typedef struct bl_bnet_dims {
    int f_in, f_hidden, f_out;     /* 3, 16, 8 */
    int vec_len, ae_hidden, code;  /* 40, 8, 4 */
    int z_hidden;                  /* 8 */
    int n_ess, n_opt;              /* essential / optional properties (n_ess ≥ 0, n_opt ≥ 0) */
} bl_bnet_dims;

void bl_bnet_dims_default(bl_bnet_dims *d, int n_ess, int n_opt);

typedef struct bl_bnet {
    bl_bnet_dims d;
    int z_in;                      /* f_out + code·n_ess + code */
    bl_params P;
    /* element offsets into P of each block */
    size_t f0w, f0b, f2w, f2b, g0w, g3w, h0w, h3w, z0w, z0b, z2w, z2b;
} bl_bnet;

/* Creates the parameter block; weights Kaiming-normal (SELU gain 3/4, fan-in; tanh gain 5/3 for the
 * decoder's output layer), zero biases, drawn from rng in the order above. rng may be NULL: zeros. */
bl_status bl_bnet_init(bl_bnet *net, const bl_bnet_dims *d, bl_rng *rng, bl_error *err);
void bl_bnet_free(bl_bnet *net);
/* dst = src (same dims; parameters only, or parameters and Adam state). */
void bl_bnet_copy_params(bl_bnet *dst, const bl_bnet *src, int with_adam);

/* What a pass reads: rows that point into tables of distinct scale-outs and property vectors.
 * Properties are ordered essential first (n_ess), then optional (n_opt). */
typedef struct bl_bview {
    size_t          n_rows;
    const uint32_t *sx;            /* [n_rows] index into sx_feat */
    const uint32_t *val;           /* [n_rows][n_ess + n_opt] index into vecs[p] */
    const double   *target;        /* [n_rows] training target (may be NULL for prediction) */
    size_t          n_sx;
    const double   *sx_feat;       /* [n_sx][f_in] scaled scale-out features */
    const size_t   *n_vals;        /* [n_props] distinct values per property */
    const double  *const *vecs;    /* [n_props] → [n_vals[p]][vec_len] */
} bl_bview;

/* Scratch space of a pass, sized for a view and a batch size. */
typedef struct bl_bwork bl_bwork;

bl_status bl_bwork_new(const bl_bnet *net, const bl_bview *v, size_t max_batch, bl_bwork **out,
                       bl_error *err);
void bl_bwork_free(bl_bwork *w);

typedef struct bl_bloss {
    double runtime;                /* SmoothL1 part */
    double recon;                  /* reconstruction parts (essential + optional) */
    double total;                  /* runtime + recon */
    double abs_err;                /* Σ|pred − target| over the batch (in target units) */
} bl_bloss;

typedef struct bl_bpass {
    int    training;               /* 1: AlphaDropout active (needs rng) */
    double dropout;                /* p */
    int    want_grad;              /* 1: add gradients into net->P.grad */
    int    recon;                  /* 1: include the reconstruction loss (pre-training) */
    int    skip_frozen_ae;         /* 1: g and h frozen and no recon: codes are still computed,
                                      but no gradient flows into g/h (saves the decoder) */
    int    per_row_dropout;        /* 0: the auto-encoder once per distinct value (one dropout mask
                                      per value); 1: per row, each with its own masks (a row-by-row
                                      network, slower); 2: the encoder per row with its own mask, the
                                      decoder once per distinct value on the code without encoder
                                      dropout (reconstruction weighted by the value's rows) */
    bl_rng *rng;
} bl_bpass;

/* One pass over rows[0..B) of v: forward, loss, and (want_grad) backward adding into P.grad.
 * pred (optional) receives the B predictions in target units. The caller zeroes gradients. */
bl_status bl_bnet_pass(bl_bnet *net, const bl_bview *v, const size_t *rows, size_t B,
                       const bl_bpass *pass, bl_bwork *w, double *pred, bl_bloss *loss, bl_error *err);

/* Codes of one property vector in evaluation mode (no dropout): code [d.code]. */
void bl_bnet_encode(const bl_bnet *net, const double *vec, double *code);

/* Prediction for a fixed context: ctx[z_hidden] = b + Σ W_j c_j + W_o·mean(optional codes) is the
 * constant part of z's first pre-activation (see bl_bnet_context_term); then each scale-out only runs
 * f and the rest of z. feat: [n][f_in] scaled features, out: [n]. */
void bl_bnet_context_term(const bl_bnet *net, const double *ess_codes, const double *opt_codes,
                          int n_opt_present, double *ctx);
void bl_bnet_predict_scaled(const bl_bnet *net, const double *ctx, const double *feat, size_t n,
                            double *out);
/* The median of K ≤ BL_BNET_MEMBERS_MAX networks' predictions (same dimensions; member k's context
 * term at ctx + k·z_hidden), per sample: for even K the mean of the two middle values. Equal to
 * predicting with each network and sorting each sample's K values (bit for bit, NaN aside: the
 * members are sorted by their output layer's input, which orders the outputs alike because SELU is
 * increasing; only an approximation error that broke that order by an ulp could tell them apart). */
#define BL_BNET_MEMBERS_MAX 16
void bl_bnet_predict_median(const bl_bnet *const *nets, int K, const double *ctx, const double *feat, size_t n,
                            double *out);
/* Tests only: one copy of it, the paper's dimensions for 0–2 (0 baseline, 1 x86-64-v3, 2 x86-64-v4;
 * the vector kernels), 3 the plain loops (any dimensions); 0 when this build or processor lacks it. */
int bl_bnet_predict_median_copy(int copy, const bl_bnet *const *nets, int K, const double *ctx, const double *feat,
                                size_t n, double *out);

/* Tests only: the activations as the pass computes them: fn 0 SELU, 1 tanh in the vector form this
 * CPU's copy of the pass runs (paper's dimensions), 2 SELU, 3 tanh in the scalar form of the plain
 * loops; y[i] = f(x[i]) for i < n. */
void bl_bnet_act_eval(int fn, const double *x, size_t n, double *y);

#endif /* BL_MODEL_BNET_H */
