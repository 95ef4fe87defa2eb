/* bpass.h — what the kernels run on the Bellamy network (bnet.h): the rows a pass reads, its
 * workspace, and the entry points of the kernel table (kernels.h) — one training/evaluation pass over
 * a batch, predictions, the ensemble median, a property's code and a context's term.
 *
 * Loss of a batch of B rows = SmoothL1(pred, target)                     (mean over B)
 *                           + MSE(h(g(v)), v) over essential vectors     (mean over B·m·40)
 *                           + MSE(h(g(v)), v) over optional vectors      (mean over B·k·40, k > 0)
 *
 * A pass runs f once per DISTINCT scale-out of the batch and the encoder's first layer once per
 * distinct (property, value) pair; z's first layer is split by input block, so its pre-activation for
 * a row is u = [Wf·f(x) + b] + Σ_essential W_j·c_j + W_o·mean(optional codes), each bracketed term
 * computed once per distinct scale-out or value slot and summed per row. Gradients flow back the same
 * way. The result is the exact gradient of the loss above. The dropout masks belong to a slot: per
 * distinct value, per row, or per row in the encoder and per value in the decoder (bl_bpass).
 * Not here: the network's dimensions, layout and initialisation (bnet.h).
 */
#ifndef BL_NN_BPASS_H
#define BL_NN_BPASS_H

#include <stddef.h>
#include <stdint.h>

#include "bellamy/bellamy.h"
#include "common/rng.h"
#include "nn/bnet.h"

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

/* Scratch space of a pass, sized for a network, a view and a batch size (bwork.c). */
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
    int    per_row_dropout;        /* 0: the auto-encoder once per distinct value (one dropout mask
                                      per value); 1: per row, each with its own masks (a row-by-row
                                      network, slower); 2: the encoder per row with its own mask, the
                                      decoder once per distinct value on the code without encoder
                                      dropout (reconstruction weighted by the value's rows) */
    bl_rng *rng;
    int    reuse;                  /* 1: the caller vouches that no frozen parameter, and nothing of the
                                      view, changed since the pass before on this workspace (the same
                                      objects, not new ones at the same addresses); if that pass ran the
                                      same network on the same rows of the same view with the same
                                      kernel copy, neither pass with dropout or
                                      reconstruction, the layers frozen in both (f, g) are read back
                                      from it, not computed again: the same bits, less work
                                      (fine-tuning's epochs). Otherwise everything is computed. */
} bl_bpass;

/* One pass over rows[0..B) of v: forward, loss, and (want_grad) backward adding into P.grad.
 * pred (optional) receives the B predictions in target units. The caller zeroes gradients.
 * The dropout masks are drawn from pass->rng in a documented order: per property, per slot (value or
 * row, in the order of first appearance in rows), the encoder's hidden units, then (slots the decoder
 * reads) the decoder's; each run of H units is one bl_rng_keep16 (four units a draw, p in steps of
 * 2⁻¹⁶: common/rng.h). Any implementation draws the same. */
bl_status bl_bnet_pass(bl_bnet *net, const bl_bview *v, const size_t *rows, size_t B, const bl_bpass *pass,
                       bl_bwork *w, double *pred, bl_bloss *loss, bl_error *err);

/* Prediction for a fixed context: ctx[z_hidden] is the constant part of z's first pre-activation
 * (bl_bnet_context_term below); each scale-out runs f and the rest of z.
 * feat: [n][f_in] scaled features, out: [n]. */
void bl_bnet_predict_scaled(const bl_bnet *net, const double *ctx, const double *feat, size_t n, double *out);
/* The median of K ≤ BL_BNET_MEMBERS_MAX networks' predictions (same dimensions; member k's context
 * term at ctx + k·z_hidden), per sample: for even K the mean of the two middle values; NaN when a
 * member's prediction is NaN. Equal, bit for bit, to predicting with each network and sorting. */
void bl_bnet_predict_median(const bl_bnet *const *nets, int K, const double *ctx, const double *feat, size_t n,
                            double *out);
/* The same from f's outputs: F[k] is member k's [n][f_out] (f does not depend on the context, so a
 * caller may keep them for scale-outs it is asked for again). */
void bl_bnet_predict_median_f(const bl_bnet *const *nets, int K, const double *ctx, const double *const *F,
                              size_t n, double *out);
/* f's outputs of one network: F [n][f_out] for feat [n][f_in]. */
void bl_bnet_f_forward(const bl_bnet *net, const double *feat, size_t n, double *F);

/* Code of one property vector in evaluation mode (no dropout): code [d.code]. */
void bl_bnet_encode(const bl_bnet *net, const double *vec, double *code);
/* The constant part of z's first pre-activation for a context: ctx[z_hidden] = b + Σ_j W_j·c_j +
 * W_o·mean(optional codes); ess_codes [n_ess][code], opt_codes [n_opt_present][code]; with no optional
 * property present the optional block adds nothing (its code counts as zero). */
void bl_bnet_context_term(const bl_bnet *net, const double *ess_codes, const double *opt_codes, int n_opt_present,
                          double *ctx);

#endif /* BL_NN_BPASS_H */
