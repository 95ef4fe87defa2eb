/* layers.c — argument checking and backend calls for the layer primitives of layers.h.
 * The arithmetic lives in the backend kernels; this file decides shapes, strides and offsets.
 * Not here: workspaces or layer sequences (net.c), the optimiser (adam.c). */
#include "nn/layers.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/error.h"

/* ---- dense ---- */

bl_status bl_dense_init(bl_dense *d, bl_params *p, const char *name, int in, int out, int has_bias,
                        bl_error *err) {
    BL_CHECK_ARG(d != NULL && p != NULL && name != NULL, err, "bl_dense_init: NULL argument");
    BL_CHECK_ARG(in > 0 && out > 0, err, "bl_dense_init: '%s': sizes %d -> %d must be positive", name, in, out);
    char vname[BL_PARAM_NAME_MAX + 16];
    bl_dense t = {.in = in, .out = out, .has_bias = has_bias ? 1 : 0, .b_view = -1};
    snprintf(vname, sizeof vname, "%s.weight", name);
    BL_CHECK_ARG(strlen(vname) < BL_PARAM_NAME_MAX, err, "bl_dense_init: name '%s' is too long", name);
    bl_status st = bl_params_add(p, vname, out, in, &t.w_off, &t.w_view, err);
    if (st != BL_OK) return st;
    if (t.has_bias) {
        snprintf(vname, sizeof vname, "%s.bias", name);
        BL_CHECK_ARG(strlen(vname) < BL_PARAM_NAME_MAX, err, "bl_dense_init: name '%s' is too long", name);
        st = bl_params_add(p, vname, 1, out, &t.b_off, &t.b_view, err);
        if (st != BL_OK) return st;
    }
    *d = t;
    return BL_OK;
}

/* Checks that d describes views that exist in p with d's shape (catches a layer used with the wrong
 * parameter store). */
static bl_status check_dense(const char *fn, const bl_backend *be, const bl_dense *d, const bl_params *p,
                             int B, bl_error *err) {
    BL_CHECK_ARG(be != NULL && d != NULL && p != NULL, err, "%s: NULL backend, layer or params", fn);
    BL_CHECK_ARG(B > 0, err, "%s: batch size %d must be positive", fn, B);
    BL_CHECK_ARG(d->in > 0 && d->out > 0, err, "%s: layer is not initialised", fn);
    BL_CHECK_ARG(d->w_view >= 0 && d->w_view < p->n_views && p->views[d->w_view].offset == d->w_off &&
                     p->views[d->w_view].rows == d->out && p->views[d->w_view].cols == d->in,
                 err, "%s: layer weights do not match the parameter store", fn);
    BL_CHECK_ARG(!d->has_bias || (d->b_view >= 0 && d->b_view < p->n_views &&
                                  p->views[d->b_view].offset == d->b_off && p->views[d->b_view].cols == d->out),
                 err, "%s: layer bias does not match the parameter store", fn);
    return BL_OK;
}

bl_status bl_dense_forward(const bl_backend *be, const bl_dense *d, const bl_params *p, int B,
                           const double *X, int ldx, double *Y, int ldy, bl_error *err) {
    bl_status st = check_dense("bl_dense_forward", be, d, p, B, err);
    if (st != BL_OK) return st;
    BL_CHECK_ARG(X != NULL && Y != NULL, err, "bl_dense_forward: NULL input or output");
    BL_CHECK_ARG(ldx >= d->in && ldy >= d->out, err, "bl_dense_forward: strides %d, %d below widths %d, %d",
                 ldx, ldy, d->in, d->out);
    /* Y = X·Wᵀ: A = X (B×in, no transpose), B = W (out×in, transposed). */
    be->gemm(0, 1, B, d->out, d->in, 1.0, X, ldx, p->param + d->w_off, d->in, 0.0, Y, ldy);
    if (d->has_bias) be->bias_add(B, d->out, p->param + d->b_off, Y, ldy);
    return BL_OK;
}

bl_status bl_dense_backward(const bl_backend *be, const bl_dense *d, bl_params *p, int B,
                            const double *X, int ldx, const double *dY, int lddy,
                            double *dX, int lddx, bl_error *err) {
    bl_status st = check_dense("bl_dense_backward", be, d, p, B, err);
    if (st != BL_OK) return st;
    BL_CHECK_ARG(X != NULL && dY != NULL, err, "bl_dense_backward: NULL input or output gradient");
    BL_CHECK_ARG(ldx >= d->in && lddy >= d->out && (dX == NULL || lddx >= d->in), err,
                 "bl_dense_backward: a stride is below its matrix width");
    if (!p->views[d->w_view].frozen)
        /* dW[out×in] += dYᵀ[out×B]·X[B×in] */
        be->gemm(1, 0, d->out, d->in, B, 1.0, dY, lddy, X, ldx, 1.0, p->grad + d->w_off, d->in);
    if (d->has_bias && !p->views[d->b_view].frozen) be->bias_grad(B, d->out, dY, lddy, p->grad + d->b_off);
    if (dX)
        /* dX[B×in] += dY[B×out]·W[out×in] */
        be->gemm(0, 0, B, d->in, d->out, 1.0, dY, lddy, p->param + d->w_off, d->in, 1.0, dX, lddx);
    return BL_OK;
}

/* ---- activations ---- */

static int act_valid(bl_act act) {
    return act == BL_ACT_IDENTITY || act == BL_ACT_SELU || act == BL_ACT_TANH;
}

const char *bl_act_name(bl_act act) {
    switch (act) {
    case BL_ACT_IDENTITY: return "identity";
    case BL_ACT_SELU: return "selu";
    case BL_ACT_TANH: return "tanh";
    }
    return NULL;
}

bl_status bl_act_forward(const bl_backend *be, bl_act act, size_t n, const double *x, double *y,
                         bl_error *err) {
    BL_CHECK_ARG(be != NULL && x != NULL && y != NULL, err, "bl_act_forward: NULL argument");
    BL_CHECK_ARG(n > 0, err, "bl_act_forward: no elements");
    BL_CHECK_ARG(act_valid(act), err, "bl_act_forward: unknown activation %d", (int)act);
    be->act_forward(act, n, x, y);
    return BL_OK;
}

bl_status bl_act_backward(const bl_backend *be, bl_act act, size_t n, const double *x, const double *y,
                          const double *dy, double *dx, bl_error *err) {
    BL_CHECK_ARG(be != NULL && x != NULL && y != NULL && dy != NULL && dx != NULL, err,
                 "bl_act_backward: NULL argument");
    BL_CHECK_ARG(n > 0, err, "bl_act_backward: no elements");
    BL_CHECK_ARG(act_valid(act), err, "bl_act_backward: unknown activation %d", (int)act);
    BL_CHECK_ARG(dx != dy, err, "bl_act_backward: dx must not alias dy (it accumulates)");
    be->act_backward(act, n, x, y, dy, dx);
    return BL_OK;
}

/* ---- AlphaDropout ---- */

bl_status bl_alpha_dropout_coef(double p, double *a, double *b, bl_error *err) {
    BL_CHECK_ARG(a != NULL && b != NULL, err, "bl_alpha_dropout_coef: NULL argument");
    if (!(p >= 0.0 && p <= 1.0))
        return bl_seterr(err, BL_ERANGE, "bl_alpha_dropout_coef: probability %g is outside [0, 1]", p);
    if (p == 1.0) { /* everything dropped: the output is 0 (PyTorch multiplies by zero) */
        *a = 0.0;
        *b = 0.0;
        return BL_OK;
    }
    const double ap = BL_SELU_ALPHA_PRIME;
    *a = 1.0 / sqrt((1.0 - p) * (1.0 + p * ap * ap));
    *b = -(*a) * ap * p;
    return BL_OK;
}

bl_status bl_alpha_dropout_forward(const bl_backend *be, double p, int training, size_t n,
                                   const double *x, double *y, uint8_t *mask, bl_rng *rng, bl_error *err) {
    BL_CHECK_ARG(be != NULL && x != NULL && y != NULL, err, "bl_alpha_dropout_forward: NULL argument");
    BL_CHECK_ARG(n > 0, err, "bl_alpha_dropout_forward: no elements");
    double a = 0.0, b = 0.0;
    bl_status st = bl_alpha_dropout_coef(p, &a, &b, err);
    if (st != BL_OK) return st;
    if (!training || p == 0.0) {
        if (mask) memset(mask, 1, n);
        if (y != x) be->act_forward(BL_ACT_IDENTITY, n, x, y); /* the identity kernel copies */
        return BL_OK;
    }
    BL_CHECK_ARG(mask != NULL && rng != NULL, err, "bl_alpha_dropout_forward: training needs a mask and an rng");
    /* Keep with probability 1 − p (Bernoulli(1 − p), as PyTorch's noise.bernoulli_(1 - p)). */
    for (size_t i = 0; i < n; i++) mask[i] = bl_rng_uniform(rng) >= p;
    be->dropout_forward(n, a, b, mask, x, y);
    return BL_OK;
}

bl_status bl_alpha_dropout_backward(const bl_backend *be, double p, int training, size_t n,
                                    const uint8_t *mask, const double *dy, double *dx, bl_error *err) {
    BL_CHECK_ARG(be != NULL && dy != NULL && dx != NULL, err, "bl_alpha_dropout_backward: NULL argument");
    BL_CHECK_ARG(n > 0, err, "bl_alpha_dropout_backward: no elements");
    BL_CHECK_ARG(dx != dy, err, "bl_alpha_dropout_backward: dx must not alias dy (it accumulates)");
    double a = 0.0, b = 0.0;
    bl_status st = bl_alpha_dropout_coef(p, &a, &b, err);
    if (st != BL_OK) return st;
    if (!training || p == 0.0) {
        be->axpy(n, 1.0, dy, dx);
        return BL_OK;
    }
    BL_CHECK_ARG(mask != NULL, err, "bl_alpha_dropout_backward: training needs the forward mask");
    be->dropout_backward(n, a, mask, dy, dx);
    return BL_OK;
}

/* ---- losses ---- */

bl_status bl_loss(const bl_backend *be, bl_loss_kind kind, size_t n, const double *pred,
                  const double *target, double *dpred, double *loss, bl_error *err) {
    BL_CHECK_ARG(be != NULL && pred != NULL && target != NULL && loss != NULL, err, "bl_loss: NULL argument");
    BL_CHECK_ARG(n > 0, err, "bl_loss: no elements");
    BL_CHECK_ARG(kind == BL_LOSS_SMOOTHL1 || kind == BL_LOSS_MSE || kind == BL_LOSS_L1, err,
                 "bl_loss: unknown loss %d", (int)kind);
    *loss = be->loss(kind, n, pred, target, dpred);
    return BL_OK;
}

/* ---- initialisation ---- */

double bl_act_gain(bl_act act) {
    switch (act) {
    case BL_ACT_SELU: return 0.75;
    case BL_ACT_TANH: return 5.0 / 3.0;
    case BL_ACT_IDENTITY: return 1.0;
    }
    return 1.0;
}

bl_status bl_init_kaiming_normal(double *w, int rows, int cols, double gain, bl_rng *rng, bl_error *err) {
    BL_CHECK_ARG(w != NULL && rng != NULL, err, "bl_init_kaiming_normal: NULL argument");
    BL_CHECK_ARG(rows > 0 && cols > 0, err, "bl_init_kaiming_normal: shape %d x %d must be positive", rows, cols);
    if (!(gain >= 0.0 && isfinite(gain)))
        return bl_seterr(err, BL_ERANGE, "bl_init_kaiming_normal: gain %g must be finite and >= 0", gain);
    const double std = gain / sqrt((double)cols);
    const size_t n = (size_t)rows * (size_t)cols;
    for (size_t i = 0; i < n; i++) w[i] = std * bl_rng_normal(rng);
    return BL_OK;
}

bl_status bl_dense_init_params(const bl_dense *d, bl_params *p, double gain, bl_rng *rng, bl_error *err) {
    bl_status st = check_dense("bl_dense_init_params", bl_backend_ref(), d, p, 1, err);
    if (st != BL_OK) return st;
    st = bl_init_kaiming_normal(p->param + d->w_off, d->out, d->in, gain, rng, err);
    if (st != BL_OK) return st;
    if (d->has_bias) memset(p->param + d->b_off, 0, (size_t)d->out * sizeof(double));
    return BL_OK;
}
