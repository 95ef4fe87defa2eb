/* adam.c — Adam step over the views of a bl_params (see adam.h); the arithmetic is the kernel
 * table's adam, run once per run of non-frozen views. Not here: learning-rate schedules (callers set lr). */
#include "nn/adam.h"

#include <math.h>

#include "common/error.h"
#include "nn/kernels.h"

static bl_status check_hyper(const bl_adam *o, bl_error *err) {
    if (!(isfinite(o->lr) && o->lr >= 0.0))
        return bl_seterr(err, BL_ERANGE, "adam: learning rate %g must be finite and >= 0", o->lr);
    if (!(o->beta1 >= 0.0 && o->beta1 < 1.0) || !(o->beta2 >= 0.0 && o->beta2 < 1.0))
        return bl_seterr(err, BL_ERANGE, "adam: betas (%g, %g) must lie in [0, 1)", o->beta1, o->beta2);
    if (!(isfinite(o->eps) && o->eps >= 0.0))
        return bl_seterr(err, BL_ERANGE, "adam: eps %g must be finite and >= 0", o->eps);
    if (!(isfinite(o->weight_decay) && o->weight_decay >= 0.0))
        return bl_seterr(err, BL_ERANGE, "adam: weight decay %g must be finite and >= 0", o->weight_decay);
    return BL_OK;
}

bl_status bl_adam_init(bl_adam *opt, double lr, double weight_decay, bl_error *err) {
    BL_CHECK_ARG(opt != NULL, err, "bl_adam_init: optimiser is NULL");
    bl_adam o = {.lr = lr, .beta1 = 0.9, .beta2 = 0.999, .eps = 1e-8, .weight_decay = weight_decay};
    bl_status st = check_hyper(&o, err);
    if (st != BL_OK) return st;
    *opt = o;
    return BL_OK;
}

bl_status bl_adam_step(const bl_adam *opt, bl_params *p, bl_error *err) {
    BL_CHECK_ARG(opt != NULL && p != NULL, err, "bl_adam_step: NULL argument");
    bl_status st = check_hyper(opt, err);
    if (st != BL_OK) return st;
    const bl_kernel_table *k = bl_kernels();
    /* Views are laid out back to back, so a run of unfrozen views at the same step count is one
     * contiguous range: update it with one kernel call (fewer calls matter on a GPU). */
    int i = 0;
    while (i < p->n_views) {
        if (p->views[i].frozen) {
            i++;
            continue;
        }
        const long step = p->views[i].step + 1;
        int j = i;
        size_t n = 0;
        while (j < p->n_views && !p->views[j].frozen && p->views[j].step + 1 == step) {
            n += (size_t)p->views[j].rows * (size_t)p->views[j].cols;
            p->views[j].step = step;
            j++;
        }
        bl_adam_hyper h = {
            .lr = opt->lr, .beta1 = opt->beta1, .beta2 = opt->beta2, .eps = opt->eps,
            .weight_decay = opt->weight_decay,
            .bc1 = 1.0 - pow(opt->beta1, (double)step),
            .bc2 = 1.0 - pow(opt->beta2, (double)step),
        };
        const size_t off = p->views[i].offset;
        k->adam(n, &h, p->param + off, p->grad + off, p->m + off, p->v + off);
        i = j;
    }
    return BL_OK;
}
