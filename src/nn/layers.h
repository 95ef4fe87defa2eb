/* layers.h — the engine's layer primitives on batches of rows: dense (fully connected), activations,
 * AlphaDropout, losses, and Kaiming-normal initialisation.
 *
 * Every op is a *_forward / *_backward pair over plain row-major arrays, computed through a backend
 * table (backend.h), so the same calls run on any backend. No op allocates: callers own every buffer.
 * The ops work on any set of rows (a batch, or the distinct rows of a batch), so a model can run a
 * sub-network once per distinct input and accumulate its gradients.
 *
 * Gradient convention (llm.c habit): every *_backward ADDS into the gradients it produces — the input
 * gradient dX and the parameter gradients in bl_params.grad. Zeroing is a separate step
 * (bl_params_zero_grad, or backend->fill on a workspace). The losses are the exception: they start the
 * chain and WRITE dL/dpred.
 *
 * Validation: each function checks its arguments (NULL pointers, sizes ≤ 0, a layer that does not fit
 * its bl_params) and returns BL_EINVAL with a message in err; nothing else is ever touched on error.
 * Not here: the optimiser (adam.h), layer sequences with their own workspaces (net.h).
 */
#ifndef BL_NN_LAYERS_H
#define BL_NN_LAYERS_H

#include <stddef.h>
#include <stdint.h>

#include "bellamy/bellamy.h"
#include "nn/backend.h"
#include "nn/params.h"
#include "nn/rng.h"

/* ---- dense layer: Y[B×out] = X[B×in] · Wᵀ + b, W[out×in] (PyTorch nn.Linear layout), b[out] ---- */

typedef struct bl_dense {
    int    in, out;     /* fan-in, fan-out */
    int    has_bias;    /* 0: no bias view, b is treated as 0 */
    size_t w_off;       /* offset of W[out×in] in the param/grad blocks */
    size_t b_off;       /* offset of b[out] (valid when has_bias) */
    int    w_view;      /* view index of "<name>.weight" */
    int    b_view;      /* view index of "<name>.bias", or -1 */
} bl_dense;

/* Adds the views "<name>.weight" (out×in) and, when has_bias, "<name>.bias" (1×out) to p, zeroed.
 * BL_EINVAL: NULL d/p/name, in or out ≤ 0, name too long/duplicate. BL_ERANGE: size overflow. */
bl_status bl_dense_init(bl_dense *d, bl_params *p, const char *name, int in, int out, int has_bias,
                        bl_error *err);

/* Y[B×out] = X[B×in]·Wᵀ + b (WRITES Y). ldx ≥ in and ldy ≥ out are row strides (so Y may be a
 * column slice of a wider buffer). Y must not overlap X. */
bl_status bl_dense_forward(const bl_backend *be, const bl_dense *d, const bl_params *p, int B,
                           const double *X, int ldx, double *Y, int ldy, bl_error *err);

/* Given dY[B×out] and the forward input X[B×in]:
 *   grad W += dYᵀ·X,  grad b += Σ_rows dY   (skipped for a frozen view: nothing reads it),
 *   dX[B×in] += dY·W  (skipped when dX == NULL, e.g. for the first layer).
 * A frozen layer still back-propagates to dX. */
bl_status bl_dense_backward(const bl_backend *be, const bl_dense *d, bl_params *p, int B,
                            const double *X, int ldx, const double *dY, int lddy,
                            double *dX, int lddx, bl_error *err);

/* ---- activations (element-wise over n values) ----
 * SELU(x) = λx (x > 0), λα(eˣ − 1) (x ≤ 0), λ = 1.0507009873554805, α = 1.6732632423543772;
 * tanh; identity. */

/* y = f(x) (WRITES; y may equal x). */
bl_status bl_act_forward(const bl_backend *be, bl_act act, size_t n, const double *x, double *y,
                         bl_error *err);
/* dx += f'(x)·dy, with x the forward input and y = f(x) the forward output (both needed so each
 * activation can use the cheaper/more accurate one). dx must not alias dy. At the SELU kink x = 0
 * the left derivative λα is used, as PyTorch does. */
bl_status bl_act_backward(const bl_backend *be, bl_act act, size_t n, const double *x, const double *y,
                          const double *dy, double *dx, bl_error *err);

/* "identity" / "selu" / "tanh"; NULL for an unknown value. */
const char *bl_act_name(bl_act act);

/* ---- AlphaDropout (Klambauer et al., 2017), PyTorch semantics ----
 * Training with 0 < p < 1: each unit is kept with probability 1 − p (mask from the engine RNG).
 *   α' = −λα = −1.7580993408473766
 *   a  = ((1 − p)(1 + p·α'²))^(−1/2),   b = −a·α'·p
 *   y  = a·x + b      for a kept unit
 *   y  = a·α' + b     for a dropped unit (it is set to α', then the same affine map)
 * so zero mean / unit variance inputs keep zero mean / unit variance.
 * p == 1 in training gives y = 0 (as PyTorch). Not training, or p == 0: y = x (the mask, if given,
 * is set to all-keep so a backward pass is the identity). */

/* a and b above for drop probability p in [0, 1] (p == 1 gives a = b = 0). */
bl_status bl_alpha_dropout_coef(double p, double *a, double *b, bl_error *err);

/* y = AlphaDropout(x) over n values (WRITES; y may equal x). mask[n] (host memory) receives 1 for
 * kept units, 0 for dropped; it is required when training with p > 0, and so is rng. */
bl_status bl_alpha_dropout_forward(const bl_backend *be, double p, int training, size_t n,
                                   const double *x, double *y, uint8_t *mask, bl_rng *rng, bl_error *err);
/* dx += (∂y/∂x)·dy: a·mask·dy when training with p > 0, dy otherwise. dx must not alias dy. */
bl_status bl_alpha_dropout_backward(const bl_backend *be, double p, int training, size_t n,
                                    const uint8_t *mask, const double *dy, double *dx, bl_error *err);

/* ---- losses over n elements, mean reduction (PyTorch defaults) ----
 * SmoothL1 (β = 1): ½d² if |d| < 1, |d| − ½ otherwise;  MSE: d²;  L1: |d|;  d = pred − target.
 * *loss receives the mean; dpred[n] (optional) is WRITTEN with dL/dpred. */
bl_status bl_loss(const bl_backend *be, bl_loss_kind kind, size_t n, const double *pred,
                  const double *target, double *dpred, double *loss, bl_error *err);

/* ---- initialisation ---- */

/* PyTorch's nn.init.calculate_gain: selu 3/4, tanh 5/3, identity (linear) 1. */
double bl_act_gain(bl_act act);

/* Kaiming-normal, mode fan_in, as nn.init.kaiming_normal_: w[rows×cols] ~ N(0, (gain/√cols)²),
 * drawn in row-major order from rng (host memory). */
bl_status bl_init_kaiming_normal(double *w, int rows, int cols, double gain, bl_rng *rng, bl_error *err);

/* Kaiming-normal weights (fan_in = d->in) with the given gain, zero bias. */
bl_status bl_dense_init_params(const bl_dense *d, bl_params *p, double gain, bl_rng *rng, bl_error *err);

#endif /* BL_NN_LAYERS_H */
