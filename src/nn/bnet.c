/* bnet.c — the Bellamy network's shape (bnet.h): the paper's dimensions, the parameter blocks laid
 * out from BL_BNET_BLOCKS and their initialisation. What runs on them is the engine's (bpass.h,
 * kernels.h). */
#include "nn/bnet.h"

#include <string.h>

#include "common/error.h"
#include "common/rng.h"
#include "nn/act.h"

void bl_bnet_dims_default(bl_bnet_dims *d, int n_ess, int n_opt) {
    d->f_in = 3; d->f_hidden = 16; d->f_out = 8;
    d->vec_len = 40; d->ae_hidden = 8; d->code = 4;
    d->z_hidden = 8;
    d->n_ess = n_ess; d->n_opt = n_opt;
    d->f32 = 0;
}

static bl_status dims_check(const bl_bnet_dims *d, bl_error *err) {
    if (!d) return bl_seterr(err, BL_EINVAL, "network dimensions: NULL");
    const int v[] = {d->f_in, d->f_hidden, d->f_out, d->vec_len, d->ae_hidden, d->code, d->z_hidden};
    const char *nm[] = {"f_in", "f_hidden", "f_out", "vec_len", "ae_hidden", "code", "z_hidden"};
    for (int i = 0; i < 7; i++)
        if (v[i] <= 0 || v[i] > BL_BNET_DIM_MAX)
            return bl_seterr(err, BL_EINVAL, "network dimension %s = %d (must be 1..%d)", nm[i], v[i],
                             BL_BNET_DIM_MAX);
    if (d->n_ess < 0 || d->n_opt < 0 || d->n_ess > BL_BNET_PROPS_MAX || d->n_opt > BL_BNET_PROPS_MAX)
        return bl_seterr(err, BL_EINVAL, "property counts %d essential, %d optional (must be 0..%d)",
                         d->n_ess, d->n_opt, BL_BNET_PROPS_MAX);
    if (d->f32 != 0 && d->f32 != 1) return bl_seterr(err, BL_EINVAL, "network precision flag f32 = %d (must be 0 or 1)", d->f32);
    return BL_OK;
}

bl_status bl_bnet_init(bl_bnet *net, const bl_bnet_dims *d, struct bl_rng *rng, bl_error *err) {
    if (!net) return bl_seterr(err, BL_EINVAL, "bl_bnet_init: NULL network");
    memset(net, 0, sizeof *net);
    bl_status st = dims_check(d, err);
    if (st) return st;
    net->d = *d;
    net->z_in = d->f_out + d->code * d->n_ess + d->code;
    if ((st = bl_params_init(&net->P, err))) return st;
#define BLOCK(field, name, rows, cols) {name, rows, cols, &net->field},
    struct { const char *name; int rows, cols; size_t *off; } v[] = {BL_BNET_BLOCKS(BLOCK, d, net->z_in)};
#undef BLOCK
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        if ((st = bl_params_add(&net->P, v[i].name, v[i].rows, v[i].cols, v[i].off, NULL, err))) goto fail;
    if (rng) {
        const double selu_gain = bl_act_gain(BL_ACT_SELU), tanh_gain = bl_act_gain(BL_ACT_TANH);
        for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
            if (v[i].rows == 1 && strstr(v[i].name, ".bias")) continue; /* biases stay zero */
            double gain = strcmp(v[i].name, "h.3.weight") == 0 ? tanh_gain : selu_gain;
            if ((st = bl_init_kaiming_normal(net->P.param + *v[i].off, v[i].rows, v[i].cols, gain, rng, err)))
                goto fail;
        }
    }
    return BL_OK;
fail:
    bl_params_free(&net->P);
    return st;
}

void bl_bnet_free(bl_bnet *net) {
    if (!net) return;
    bl_params_free(&net->P);
}

void bl_bnet_copy_params(bl_bnet *dst, const bl_bnet *src, int with_adam) {
    size_t n = src->P.n;
    memcpy(dst->P.param, src->P.param, n * sizeof(double));
    if (with_adam) {
        memcpy(dst->P.m, src->P.m, n * sizeof(double));
        memcpy(dst->P.v, src->P.v, n * sizeof(double));
        for (int i = 0; i < src->P.n_views; i++) dst->P.views[i].step = src->P.views[i].step;
    }
}
