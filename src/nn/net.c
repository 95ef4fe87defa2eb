/* net.c — the feed-forward net of net.h: workspace layout, and forward/backward as sequences of the
 * layer primitives. Not here: any arithmetic of its own (all of it goes through layers.h). */
#include "nn/net.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"

void bl_mlp_free(bl_mlp *net) {
    if (!net) return;
    free(net->work);
    free(net->mask_work);
    memset(net, 0, sizeof *net);
}

bl_status bl_mlp_init(bl_mlp *net, bl_params *p, const char *name, int n_layers, const int *sizes,
                      const bl_act *acts, const double *dropout, int max_batch, bl_error *err) {
    BL_CHECK_ARG(net != NULL, err, "bl_mlp_init: net is NULL");
    memset(net, 0, sizeof *net);
    BL_CHECK_ARG(p != NULL && name != NULL && sizes != NULL && acts != NULL, err, "bl_mlp_init: NULL argument");
    BL_CHECK_ARG(n_layers >= 1 && n_layers <= BL_MLP_MAX_LAYERS, err,
                 "bl_mlp_init: '%s': %d layers (1 to %d allowed)", name, n_layers, BL_MLP_MAX_LAYERS);
    BL_CHECK_ARG(max_batch > 0, err, "bl_mlp_init: '%s': max batch %d must be positive", name, max_batch);
    for (int i = 0; i <= n_layers; i++)
        BL_CHECK_ARG(sizes[i] > 0, err, "bl_mlp_init: '%s': width %d of layer boundary %d must be positive",
                     name, sizes[i], i);
    for (int i = 0; i < n_layers; i++) {
        BL_CHECK_ARG(bl_act_name(acts[i]) != NULL, err, "bl_mlp_init: '%s': unknown activation %d", name,
                     (int)acts[i]);
        if (dropout && !(dropout[i] >= 0.0 && dropout[i] < 1.0))
            return bl_seterr(err, BL_ERANGE, "bl_mlp_init: '%s': dropout %g of layer %d is outside [0, 1)",
                             name, dropout[i], i);
    }

    /* Count the workspace doubles: per layer z and dh always, a/da unless identity, h/da unless no dropout. */
    size_t total = 0, masks = 0;
    for (int i = 0; i < n_layers; i++) {
        size_t rows_x_out;
        int copies = 2 + (acts[i] != BL_ACT_IDENTITY ? 2 : 0) + (dropout && dropout[i] > 0.0 ? 2 : 0);
        if (bl_mul_size((size_t)max_batch, (size_t)sizes[i + 1], &rows_x_out) ||
            bl_mul_size(rows_x_out, (size_t)copies, &rows_x_out) || bl_add_size(total, rows_x_out, &total) ||
            total > SIZE_MAX / sizeof(double))
            return bl_seterr(err, BL_ERANGE, "bl_mlp_init: '%s': workspace size overflows", name);
        if (dropout && dropout[i] > 0.0) masks += (size_t)max_batch * (size_t)sizes[i + 1];
    }

    net->n_layers = n_layers;
    net->max_batch = max_batch;
    memcpy(net->sizes, sizes, (size_t)(n_layers + 1) * sizeof *sizes);
    memcpy(net->acts, acts, (size_t)n_layers * sizeof *acts);
    if (dropout) memcpy(net->dropout, dropout, (size_t)n_layers * sizeof *dropout);

    for (int i = 0; i < n_layers; i++) {
        char lname[BL_PARAM_NAME_MAX];
        int len = snprintf(lname, sizeof lname, "%s.%d", name, i);
        if (len < 0 || (size_t)len >= sizeof lname) {
            bl_mlp_free(net);
            return bl_seterr(err, BL_EINVAL, "bl_mlp_init: name '%s' is too long", name);
        }
        bl_status st = bl_dense_init(&net->layers[i], p, lname, sizes[i], sizes[i + 1], 1, err);
        if (st != BL_OK) {
            bl_mlp_free(net);
            return st;
        }
    }

    net->work = calloc(total, sizeof(double));
    net->mask_work = masks ? calloc(masks, 1) : NULL;
    if (!net->work || (masks && !net->mask_work)) {
        bl_mlp_free(net);
        return bl_seterr(err, BL_ENOMEM, "bl_mlp_init: cannot allocate workspaces");
    }
    double *w = net->work;
    uint8_t *mw = net->mask_work;
    for (int i = 0; i < n_layers; i++) {
        const size_t sz = (size_t)max_batch * (size_t)sizes[i + 1];
        net->z[i] = w, w += sz;
        net->dh[i] = w, w += sz;
        if (acts[i] != BL_ACT_IDENTITY) {
            net->a[i] = w, w += sz;
            net->dz[i] = w, w += sz;
        } else {
            net->a[i] = net->z[i];
            net->dz[i] = NULL; /* dL/dz is dL/da: no buffer */
        }
        if (net->dropout[i] > 0.0) {
            net->h[i] = w, w += sz;
            net->da[i] = w, w += sz;
            net->mask[i] = mw, mw += sz;
        } else {
            net->h[i] = net->a[i];
            net->da[i] = NULL;
        }
    }
    return BL_OK;
}

bl_status bl_mlp_init_params(const bl_mlp *net, bl_params *p, double gain, bl_rng *rng, bl_error *err) {
    BL_CHECK_ARG(net != NULL && p != NULL && rng != NULL, err, "bl_mlp_init_params: NULL argument");
    BL_CHECK_ARG(net->n_layers > 0, err, "bl_mlp_init_params: net is not initialised");
    for (int i = 0; i < net->n_layers; i++) {
        bl_status st = bl_dense_init_params(&net->layers[i], p, gain, rng, err);
        if (st != BL_OK) return st;
    }
    return BL_OK;
}

size_t bl_mlp_num_params(const bl_mlp *net) {
    size_t n = 0;
    if (!net) return 0;
    for (int i = 0; i < net->n_layers; i++)
        n += (size_t)net->sizes[i + 1] * (size_t)(net->sizes[i] + (net->layers[i].has_bias ? 1 : 0));
    return n;
}

bl_status bl_mlp_forward(bl_mlp *net, const bl_backend *be, const bl_params *p, int B, const double *X,
                         int training, bl_rng *rng, const double **out, bl_error *err) {
    BL_CHECK_ARG(net != NULL && be != NULL && p != NULL && X != NULL && out != NULL, err,
                 "bl_mlp_forward: NULL argument");
    BL_CHECK_ARG(net->n_layers > 0, err, "bl_mlp_forward: net is not initialised");
    BL_CHECK_ARG(B > 0 && B <= net->max_batch, err, "bl_mlp_forward: batch %d outside 1..%d", B, net->max_batch);
    net->last_batch = 0;
    const double *in = X;
    for (int i = 0; i < net->n_layers; i++) {
        const int nin = net->sizes[i], nout = net->sizes[i + 1];
        const size_t n = (size_t)B * (size_t)nout;
        bl_status st = bl_dense_forward(be, &net->layers[i], p, B, in, nin, net->z[i], nout, err);
        if (st == BL_OK && net->acts[i] != BL_ACT_IDENTITY)
            st = bl_act_forward(be, net->acts[i], n, net->z[i], net->a[i], err);
        double *o = net->a[i];
        if (st == BL_OK && net->dropout[i] > 0.0 && training) {
            st = bl_alpha_dropout_forward(be, net->dropout[i], 1, n, net->a[i], net->h[i], net->mask[i], rng, err);
            o = net->h[i];
        }
        if (st != BL_OK) {
            if (err) bl_prefixerr(err, "layer %d", i);
            return st;
        }
        net->out[i] = o;
        in = o;
    }
    net->last_batch = B;
    net->last_training = training ? 1 : 0;
    *out = in;
    return BL_OK;
}

bl_status bl_mlp_backward(bl_mlp *net, const bl_backend *be, bl_params *p, int B, const double *X,
                          const double *dOut, double *dX, bl_error *err) {
    BL_CHECK_ARG(net != NULL && be != NULL && p != NULL && X != NULL && dOut != NULL, err,
                 "bl_mlp_backward: NULL argument");
    BL_CHECK_ARG(net->n_layers > 0, err, "bl_mlp_backward: net is not initialised");
    BL_CHECK_ARG(B > 0 && B == net->last_batch, err,
                 "bl_mlp_backward: batch %d does not match the last forward (%d)", B, net->last_batch);
    for (int i = net->n_layers - 1; i >= 0; i--) {
        const int nin = net->sizes[i], nout = net->sizes[i + 1];
        const size_t n = (size_t)B * (size_t)nout;
        const double *g = (i == net->n_layers - 1) ? dOut : net->dh[i];
        bl_status st = BL_OK;
        if (net->dropout[i] > 0.0 && net->last_training) {
            be->fill(n, 0.0, net->da[i]);
            st = bl_alpha_dropout_backward(be, net->dropout[i], 1, n, net->mask[i], g, net->da[i], err);
            g = net->da[i];
        }
        if (st == BL_OK && net->acts[i] != BL_ACT_IDENTITY) {
            be->fill(n, 0.0, net->dz[i]);
            st = bl_act_backward(be, net->acts[i], n, net->z[i], net->a[i], g, net->dz[i], err);
            g = net->dz[i];
        }
        double *dprev = NULL;
        if (i > 0) {
            dprev = net->dh[i - 1];
            be->fill((size_t)B * (size_t)nin, 0.0, dprev);
        } else {
            dprev = dX;
        }
        const double *xin = (i == 0) ? X : net->out[i - 1];
        if (st == BL_OK) st = bl_dense_backward(be, &net->layers[i], p, B, xin, nin, g, nout, dprev, nin, err);
        if (st != BL_OK) {
            if (err) bl_prefixerr(err, "layer %d", i);
            return st;
        }
    }
    return BL_OK;
}
