/* bpass.c — the checked entry points of bpass.h: argument checks, then the kernel table's copy; and
 * the small context-side computations (a property's code, the context term), which run once per
 * context rather than per sample and so take the reference's scalar arithmetic. */
#define BL_ISA 0
#include "nn/kern/vmath.h"

#include "common/error.h"
#include "nn/bwork.h"
#include "nn/kernels.h"

bl_status bl_bnet_pass(bl_bnet *net, const bl_bview *v, const size_t *rows, size_t B, const bl_bpass *pass,
                       bl_bwork *w, double *pred, bl_bloss *loss, bl_error *err) {
    if (!net || !v || !rows || !pass || !w || !loss) return bl_seterr(err, BL_EINVAL, "bl_bnet_pass: NULL argument");
    if (B == 0 || B > w->max_batch)
        return bl_seterr(err, BL_EINVAL, "batch of %zu rows (workspace holds %zu)", B, w->max_batch);
    if (pass->training && pass->dropout > 0.0 && !pass->rng)
        return bl_seterr(err, BL_EINVAL, "training with dropout needs a random generator");
    if (!(pass->dropout >= 0.0 && pass->dropout < 1.0))
        return bl_seterr(err, BL_EINVAL, "dropout %g outside [0, 1)", pass->dropout);
    if (pass->per_row_dropout < 0 || pass->per_row_dropout > 2)
        return bl_seterr(err, BL_EINVAL, "dropout mask mode %d (0 per value, 1 per row, 2 hybrid)", pass->per_row_dropout);
    if (pass->reuse != 0 && pass->reuse != 1)
        return bl_seterr(err, BL_EINVAL, "bl_bnet_pass: reuse is %d (0 or 1)", pass->reuse);
    if (pass->want_grad && !v->target) return bl_seterr(err, BL_EINVAL, "gradients need targets");
    /* the workspace's slot maps were sized for a view: this one must fit them, row by row */
    const size_t np = (size_t)net->d.n_ess + (size_t)net->d.n_opt;
    if (np != w->n_props || v->n_sx > w->n_sx_view)
        return bl_seterr(err, BL_EINVAL, "bl_bnet_pass: the view does not match the workspace it was made for");
    if (w->f32 != net->d.f32)
        return bl_seterr(err, BL_EINVAL, "bl_bnet_pass: a %s workspace for a %s network", w->f32 ? "float32" : "float64",
                         net->d.f32 ? "float32" : "float64");
    for (size_t p = 0; p < np; p++)
        if (v->n_vals[p] > w->n_vals_view[p])
            return bl_seterr(err, BL_EINVAL, "bl_bnet_pass: property %zu has more values than the workspace holds", p);
    for (size_t b = 0; b < B; b++) {
        const size_t r = rows[b];
        if (r >= v->n_rows || v->sx[r] >= v->n_sx)
            return bl_seterr(err, BL_EINVAL, "bl_bnet_pass: row %zu outside the view", r);
        for (size_t p = 0; p < np; p++)
            if (v->val[r * np + p] >= v->n_vals[p])
                return bl_seterr(err, BL_EINVAL, "bl_bnet_pass: row %zu: value index outside property %zu", r, p);
    }
    return bl_kernels_prec(net->d.f32)->pass(net, v, rows, B, pass, w, pred, loss, err);
}

/* Predictions run in the networks' precision (an ensemble's members share their model's). */
void bl_bnet_predict_scaled(const bl_bnet *net, const double *ctx, const double *feat, size_t n, double *out) {
    if (n) bl_kernels_prec(net->d.f32)->predict(net, ctx, feat, n, out);
}

void bl_bnet_predict_median(const bl_bnet *const *nets, int K, const double *ctx, const double *feat, size_t n,
                            double *out) {
    if (n == 0 || K < 1 || K > BL_BNET_MEMBERS_MAX) return;
    const bl_kernel_table *k = bl_kernels_prec(nets[0]->d.f32);
    if (K == 1) k->predict(nets[0], ctx, feat, n, out);
    else k->predict_median(nets, K, ctx, feat, n, out);
}

void bl_bnet_predict_median_f(const bl_bnet *const *nets, int K, const double *ctx, const double *const *F,
                              size_t n, double *out) {
    if (n == 0 || K < 1 || K > BL_BNET_MEMBERS_MAX) return;
    bl_kernels_prec(nets[0]->d.f32)->predict_median_f(nets, K, ctx, F, n, out);
}

void bl_bnet_f_forward(const bl_bnet *net, const double *feat, size_t n, double *F) {
    if (n) bl_kernels_prec(net->d.f32)->f_forward(net, feat, n, F);
}

/* y[o] = Σ_i W[o][i] x[i]   W: [out×in] with row stride ld */
static void mv(const double *W, int ld, int out, int in, const double *x, double *y) {
    for (int o = 0; o < out; o++) {
        const double *w = W + (size_t)o * ld;
        double s = 0.0;
        for (int i = 0; i < in; i++) s += w[i] * x[i];
        y[o] = s;
    }
}

void bl_bnet_encode(const bl_bnet *net, const double *vec, double *code) {
    const bl_bnet_dims *d = &net->d;
    double a1[BL_BNET_DIM_MAX], a2[BL_BNET_DIM_MAX];
    mv(net->P.param + net->g0w, d->vec_len, d->ae_hidden, d->vec_len, vec, a1);
    for (int i = 0; i < d->ae_hidden; i++) a1[i] = k_selu(a1[i]);
    mv(net->P.param + net->g3w, d->ae_hidden, d->code, d->ae_hidden, a1, a2);
    for (int i = 0; i < d->code; i++) code[i] = k_selu(a2[i]);
}

void bl_bnet_context_term(const bl_bnet *net, const double *ess_codes, const double *opt_codes, int n_opt_present,
                          double *ctx) {
    const bl_bnet_dims *d = &net->d;
    const int Z = d->z_hidden, C = d->code, ZI = net->z_in, FO = d->f_out;
    const double *W = net->P.param;
    for (int k = 0; k < Z; k++) ctx[k] = W[net->z0b + (size_t)k];
    double tmp[BL_BNET_DIM_MAX];
    for (int j = 0; j < d->n_ess; j++) {
        mv(W + net->z0w + FO + C * j, ZI, Z, C, ess_codes + (size_t)j * C, tmp);
        for (int k = 0; k < Z; k++) ctx[k] += tmp[k];
    }
    if (n_opt_present > 0) {
        double mean[BL_BNET_DIM_MAX];
        memset(mean, 0, sizeof mean);
        for (int q = 0; q < n_opt_present; q++)
            for (int k = 0; k < C; k++) mean[k] += opt_codes[(size_t)q * C + k];
        for (int k = 0; k < C; k++) mean[k] /= n_opt_present;
        mv(W + net->z0w + FO + C * d->n_ess, ZI, Z, C, mean, tmp);
        for (int k = 0; k < Z; k++) ctx[k] += tmp[k];
    }
}
