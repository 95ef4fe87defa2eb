/* guard.c — after fine-tuning on a context's runs, how far the model trusts its network against a
 * four-parameter Ernest fit of the same runs (model.h: bl_guard).
 *
 * A pre-trained network knows the shape of runtime curves in the environment it was trained in; in
 * another (another cluster, framework or scale-out range) its shape can be wrong where a few runs
 * cannot correct it, and then the simplest scaling law fitted to those runs predicts better. So the
 * runs themselves decide, as Bell decides between its candidates:
 *   - three or more distinct scale-outs: the network's and Ernest's leave-one-out predictions of the
 *     runs (the network's come from fine-tuning's own cross-validation, each held-out run predicted
 *     by members trained without it) are stacked: the weight w ∈ {0, 0.05, …, 1} of the blend
 *     w·network + (1 − w)·Ernest with the lowest leave-one-out mean relative error (ties: the
 *     larger w);
 *   - two distinct scale-outs: no fit can be checked on a held-out run, but the pre-trained model's
 *     shape can: the speed-up the runs show between the two scale-outs is compared with the speed-up
 *     the model predicted before fine-tuning (e_model) and with linear scaling's (e_linear, a law that
 *     knows nothing of the job). w = e_linear / (e_model + e_linear): the network counts fully when
 *     its prior explains the runs' speed-up exactly, half when it explains it as badly as linear
 *     scaling, and less when worse;
 *   - one scale-out: the network alone (Ernest fitted to one scale-out has no shape).
 * In the pre-training's environment the network's leave-one-out error is far below Ernest's and its
 * prior predicts the speed-up, so w stays at or near 1 there.
 * Not here: the fine-tuning itself (model.c), Ernest's fit (baselines/).
 */
#include "model/model_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "baselines/baselines.h"
#include "common/error.h"
#include "modelfile/modelfile.h"

void bl_guard_reset(bl_guard *g) { memset(g, 0, sizeof *g); }

double bl_guard_apply(const bl_guard *g, double x, double net) {
    if (!(g->ernest_w > 0)) return net;
    const double e = g->theta[0] + g->theta[1] / x + g->theta[2] * log(x) + g->theta[3] * x;
    return (1.0 - g->ernest_w) * net + g->ernest_w * e;
}

static void set_method(bl_guard *g) {
    g->method = g->ernest_w <= 0 ? BL_GUARD_NETWORK : g->ernest_w >= 1 ? BL_GUARD_ERNEST : BL_GUARD_BLEND;
}

static double rel(double p, double y) { return fabs(p - y) / y; }

bl_status bl_guard_decide(bl_model *c, const bl_model *prior, const bl_dataset *runs, const size_t *rows, size_t n,
                          const double *net_loo, size_t folds, bl_error *err) {
    bl_guard *g = &c->guard;
    bl_guard_reset(g);
    if (n == 0) return BL_OK;
    double *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
    double *xe = malloc(n * sizeof *xe), *ye = malloc(n * sizeof *ye), *eloo = malloc(n * sizeof *eloo);
    bl_status st = BL_OK;
    if (!x || !y || !xe || !ye || !eloo) {
        st = bl_seterr(err, BL_ENOMEM, "out of memory");
        goto out;
    }
    size_t distinct = 0;
    for (size_t i = 0; i < n; i++) {
        const size_t r = rows ? rows[i] : i;
        x[i] = runs->scale_out[r];
        y[i] = runs->runtime_s[r];
        int seen = 0;
        for (size_t j = 0; j < i; j++) seen |= x[j] == x[i];
        distinct += !seen;
    }
    if (distinct < 2) {
        snprintf(g->why, sizeof g->why, "the network alone: the runs hold one scale-out, which shows no scaling");
        goto out;
    }
    bl_ernest em;
    bl_error e2;
    if (bl_ernest_fit(x, y, (int)n, &em, &e2) != BL_OK) {
        snprintf(g->why, sizeof g->why, "the network alone: Ernest cannot be fitted to the runs (%.200s)", e2.message);
        goto out;
    }
    memcpy(g->theta, em.theta, sizeof g->theta);
    if (distinct == 2) {
        /* the two scale-outs' mean runtimes, against the prior's prediction of them */
        double xa = x[0], xb = 0, sa = 0, sb = 0;
        size_t na = 0, nb = 0;
        for (size_t i = 0; i < n; i++)
            if (x[i] != xa) xb = x[i];
        if (xb < xa) {
            const double t = xa;
            xa = xb;
            xb = t;
        }
        for (size_t i = 0; i < n; i++) {
            if (x[i] == xa) sa += y[i], na++;
            else sb += y[i], nb++;
        }
        const double ma = sa / (double)na, mb = sb / (double)nb, xs[2] = {xa, xb};
        double ctx[BL_BNET_DIM_MAX], p[2] = {NAN, NAN};
        st = bl_model_context_row(prior, runs, rows ? rows[0] : 0, ctx, err);
        if (!st) st = bl_model_predict(prior, ctx, xs, 2, p, err);
        if (st) goto out;
        const double obs = mb / ma;
        const double e_model = p[0] > 0 && p[1] > 0 && isfinite(p[0]) && isfinite(p[1])
                                   ? fabs(obs / (p[1] / p[0]) - 1.0) : INFINITY;
        const double e_lin = fabs(obs * xb / xa - 1.0);
        const double em_f = fmax(e_model, 1e-3), el_f = fmax(e_lin, 1e-3);
        g->ernest_w = isinf(em_f) ? 1.0 : em_f / (em_f + el_f);
        snprintf(g->why, sizeof g->why,
                 "two scale-outs: the runs' speed-up from %g to %g machines (%.3g×) is missed by %.1f %% by the "
                 "pre-trained model's prediction and by %.1f %% by linear scaling, so the network counts %.2f and "
                 "Ernest (fitted to the runs) %.2f",
                 xa, xb, ma / mb, 100.0 * e_model, 100.0 * e_lin, 1.0 - g->ernest_w, g->ernest_w);
        goto out;
    }
    if (!net_loo || folds < 2) {
        snprintf(g->why, sizeof g->why, "the network alone: no held-out predictions to weigh it by");
        goto out;
    }
    /* Ernest's held-out predictions over the same folds as the network's */
    for (size_t h = 0; h < folds; h++) {
        size_t m = 0;
        for (size_t i = 0; i < n; i++)
            if (i % folds != h) xe[m] = x[i], ye[m] = y[i], m++;
        bl_ernest ef;
        const int ok = bl_ernest_fit(xe, ye, (int)m, &ef, NULL) == BL_OK;
        for (size_t i = h; i < n; i += folds) eloo[i] = ok ? bl_ernest_predict(&ef, x[i]) : NAN;
    }
    double best = INFINITY, err_net = 0, err_ern = 0;
    int best_k = 20;
    size_t used = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(net_loo[i]) && isfinite(eloo[i])) {
            err_net += rel(net_loo[i], y[i]);
            err_ern += rel(eloo[i], y[i]);
            used++;
        }
    if (used == 0) {
        snprintf(g->why, sizeof g->why, "the network alone: no run had held-out predictions of both");
        goto out;
    }
    for (int k = 20; k >= 0; k--) { /* from the network alone down: ties keep the network */
        const double w = k / 20.0;
        double s = 0;
        for (size_t i = 0; i < n; i++)
            if (isfinite(net_loo[i]) && isfinite(eloo[i])) s += rel(w * net_loo[i] + (1.0 - w) * eloo[i], y[i]);
        if (!isfinite(best) || s < best * (1.0 - 1e-12)) best = s, best_k = k;
    }
    g->ernest_w = 1.0 - best_k / 20.0;
    snprintf(g->why, sizeof g->why,
             "leave-one-out over the %zu runs: the network misses by %.1f %%, Ernest (fitted to the other runs) by "
             "%.1f %%, the blend of network %.2f and Ernest %.2f by %.1f %%",
             used, 100.0 * err_net / (double)used, 100.0 * err_ern / (double)used, best_k / 20.0, g->ernest_w,
             100.0 * best / (double)used);
out:
    set_method(g);
    free(x);
    free(y);
    free(xe);
    free(ye);
    free(eloo);
    return st;
}

/* ---- in the model file: group "guard" (models/README.md) ---- */

bl_status bl_guard_save(const bl_guard *g, bl_modelrec *rec, bl_error *err) {
    if (!g->why[0] && !(g->ernest_w > 0)) return BL_OK; /* never decided: the network alone, as before 0.5 */
    bl_status st = bl_modelrec_add_double(rec, "guard", "ernest_weight", g->ernest_w, err);
    if (!st) st = bl_modelrec_add_doubles(rec, "guard", "ernest_theta", g->theta, 4, err);
    if (!st) st = bl_modelrec_add_string(rec, "guard", "why", g->why, err);
    return st;
}

bl_status bl_guard_load(bl_guard *g, const bl_modelrec *rec, bl_error *err) {
    bl_guard_reset(g);
    if (!bl_modelrec_find_attr(rec, "guard", "ernest_weight")) return BL_OK; /* the network alone */
    const double *th;
    const char *why;
    size_t n;
    bl_status st;
    if ((st = bl_modelrec_get_double(rec, "guard", "ernest_weight", &g->ernest_w, err)) ||
        (st = bl_modelrec_get_doubles(rec, "guard", "ernest_theta", &th, &n, err)) ||
        (st = bl_modelrec_get_string(rec, "guard", "why", &why, err)))
        return st;
    if (!(g->ernest_w >= 0 && g->ernest_w <= 1) || n != 4)
        return bl_seterr(err, BL_EFORMAT, "model '%s': guard/ernest_weight must lie in [0, 1] and guard/ernest_theta "
                         "hold 4 values", rec->name);
    for (int k = 0; k < 4; k++)
        if (!(th[k] >= 0 && th[k] <= 1e300))
            return bl_seterr(err, BL_EFORMAT, "model '%s': guard/ernest_theta[%d] = %g (Ernest's terms are finite "
                             "and >= 0)", rec->name, k, th[k]);
    memcpy(g->theta, th, sizeof g->theta);
    snprintf(g->why, sizeof g->why, "%s", why);
    set_method(g);
    return BL_OK;
}
