/* guard.c — after fine-tuning on a context's runs, how far the model trusts its network against a
 * four-parameter Ernest fit of the same runs (model.h: bl_guard).
 *
 * A pre-trained network knows the shape of runtime curves where it was trained: the contexts of its
 * environment and, above all, the scale-outs of its pre-training rows, outside which its scaled
 * features are extrapolations (a model pre-trained on 2..12 machines predicts a nearly flat curve at
 * 40). So:
 *   - runs inside the pre-training scale-out range: the network alone (its own domain, where it
 *     predicts far better than a scaling law fitted to a few runs);
 *   - runs reaching outside it: Ernest's weight w_E comes from the runs themselves, as the larger of
 *       shape    how badly the pre-trained model's curve, scaled to fit, explains the runs compared
 *                with the closer of two laws that know nothing of the job, no scaling (t = c) and
 *                linear scaling (t = c/x): e_model / (e_model + e_law), each the mean absolute
 *                deviation of log(runtime / curve) around its mean over the runs; 0 when the model's
 *                shape is the runs', ½ when it is no better than the closer law, towards 1 when worse;
 *       held-out (three or more scale-outs) the network's and Ernest's leave-one-out predictions of the
 *                runs (the network's from fine-tuning's own cross-validation, each run predicted by
 *                members trained without it) stacked: the weight in {0, 0.05, …, 1} of the blend with
 *                the lowest leave-one-out error (ties: the network);
 *     either alone errs with few runs (three held-out runs are noise; the shape cannot see a wrong
 *     curvature between the runs), and a prior proven wrong by either should yield; and at least ½,
 *     since weights estimated from a few runs are noisy and the network is extrapolating;
 *   - one scale-out among the runs: the network alone (Ernest fitted to one scale-out has no shape).
 * A fine-tuned network that misses one of its own runs by more than a factor 100 is dropped (model.c,
 * keep_known): then Ernest alone (bl_guard_ernest_alone) where it predicts the runs.
 * A prediction is (1 − w_E)·network + w_E·Ernest(θ), θ fitted to all the runs. Before such runs are
 * fine-tuned on, the output scale is set so that the pre-trained curve passes through their geometric
 * mean (bl_guard_rescale): a job twenty times longer than any pre-training row is then a question of
 * shape, not of an output the network cannot reach in a few hundred steps.
 * Not here: the fine-tuning itself (model.c), Ernest's fit (baselines/).
 */
#include "model/guard.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "baselines/baselines.h"
#include "common/error.h"
#include "modelfile/modelfile.h"

/* Ernest's least weight for runs reaching outside the pre-training scale-outs (measured on Bell grep and
 * eight synthetic shifts, four of them held out: never worse than the tests' weight alone; bench/README) */
#define GUARD_OUTSIDE_MIN 0.5

void bl_guard_reset(bl_guard *g) { memset(g, 0, sizeof *g); }

double bl_guard_apply(const bl_guard *g, double x, double net) {
    if (!(g->ernest_w > 0)) return net;
    const double e = g->theta[0] + g->theta[1] / x + g->theta[2] * log(x) + g->theta[3] * x;
    if (g->ernest_w >= 1) return e; /* whatever the network says (a dropped one may say infinity) */
    return (1.0 - g->ernest_w) * net + g->ernest_w * e;
}

static void set_method(bl_guard *g) {
    g->method = g->ernest_w <= 0 ? BL_GUARD_NETWORK : g->ernest_w >= 1 ? BL_GUARD_ERNEST : BL_GUARD_BLEND;
}

static double rel(double p, double y) { return fabs(p - y) / y; }

/* Mean absolute deviation of log(y / c) around its mean over n runs; INFINITY when c is not positive. */
static double log_dev(const double *y, const double *c, size_t n) {
    double mean = 0;
    for (size_t i = 0; i < n; i++) {
        if (!(c[i] > 0) || !isfinite(c[i])) return INFINITY;
        mean += log(y[i] / c[i]);
    }
    mean /= (double)n;
    double d = 0;
    for (size_t i = 0; i < n; i++) d += fabs(log(y[i] / c[i]) - mean);
    return d / (double)n;
}

bl_status bl_guard_weigh(bl_guard *g, const bl_guard_runs *r, const double *net_loo, size_t folds, bl_error *err) {
    bl_guard_reset(g);
    const size_t n = r->n;
    if (n == 0) return BL_OK;
    const double *x = r->x, *y = r->y, *p = r->prior, lo = r->lo, hi = r->hi;
    double *xe = malloc(n * sizeof *xe), *ye = malloc(n * sizeof *ye), *eloo = malloc(n * sizeof *eloo);
    bl_status st = BL_OK;
    if (!xe || !ye || !eloo) {
        st = bl_seterr(err, BL_ENOMEM, "out of memory");
        goto out;
    }
    size_t distinct = 0;
    double xmin = INFINITY, xmax = 0;
    for (size_t i = 0; i < n; i++) {
        xmin = fmin(xmin, x[i]);
        xmax = fmax(xmax, x[i]);
        int seen = 0;
        for (size_t j = 0; j < i; j++) seen |= x[j] == x[i];
        distinct += !seen;
    }
    if (distinct < 2) {
        snprintf(g->why, sizeof g->why, "the network alone: the runs hold one scale-out, which shows no scaling");
        goto out;
    }
    if (xmin >= lo && xmax <= hi) {
        snprintf(g->why, sizeof g->why, "the network alone: the runs (%g..%g machines) lie inside the scale-outs it "
                 "was pre-trained on (%g..%g)", xmin, xmax, lo, hi);
        goto out;
    }
    bl_ernest em;
    bl_error e2;
    if (bl_ernest_fit(x, y, (int)n, &em, &e2) != BL_OK) {
        snprintf(g->why, sizeof g->why, "the network alone: Ernest cannot be fitted to the runs (%.200s)", e2.message);
        goto out;
    }
    memcpy(g->theta, em.theta, sizeof g->theta);
    /* the shape: the pre-trained model's curve (before this fine-tuning) against linear scaling's */
    const double e_model = log_dev(y, p, n);
    for (size_t i = 0; i < n; i++) xe[i] = 1.0 / x[i];
    const double e_lin = log_dev(y, xe, n);
    for (size_t i = 0; i < n; i++) xe[i] = 1.0;
    const double e_const = log_dev(y, xe, n), e_ref = fmin(e_lin, e_const);
    const double w_shape = isinf(e_model) ? 1.0 : fmax(e_model, 1e-3) / (fmax(e_model, 1e-3) + fmax(e_ref, 1e-3));
    char shape_text[200];
    snprintf(shape_text, sizeof shape_text, "the pre-trained model's curve misses the runs' shape by %.1f %%, %s by "
             "%.1f %% (Ernest %.3g by the shape)", 100.0 * (exp(e_model) - 1),
             e_lin <= e_const ? "linear scaling" : "no scaling", 100.0 * (exp(e_ref) - 1), w_shape);
    double w_held = -1; /* none */
    char held_text[200] = "";
    if (distinct >= 3 && net_loo && folds >= 2) {
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
        for (int k = 20; k >= 0 && used; k--) { /* from the network alone down: ties keep the network */
            const double w = k / 20.0;
            double s = 0;
            for (size_t i = 0; i < n; i++)
                if (isfinite(net_loo[i]) && isfinite(eloo[i])) s += rel(w * net_loo[i] + (1.0 - w) * eloo[i], y[i]);
            if (!isfinite(best) || s < best * (1.0 - 1e-12)) best = s, best_k = k;
        }
        if (used) {
            w_held = 1.0 - best_k / 20.0;
            snprintf(held_text, sizeof held_text, "; left out one at a time, the network misses the %zu runs by %.1f %%, "
                     "Ernest by %.1f %%, their best blend (Ernest %.3g) by %.1f %%", used,
                     100.0 * err_net / (double)used, 100.0 * err_ern / (double)used, w_held, 100.0 * best / (double)used);
        }
    }
    /* Weights estimated from two to five runs are noisy; outside its domain the network gets at most half
     * (equal weights, the robust choice of forecast combination, unless a test gives Ernest more) */
    const double w_test = fmax(w_shape, w_held);
    g->ernest_w = fmax(GUARD_OUTSIDE_MIN, w_test);
    snprintf(g->why, sizeof g->why, "the runs (%g..%g machines) reach outside the scale-outs it was pre-trained on "
             "(%g..%g), so they weigh it against Ernest fitted to them: %s%s; %s: Ernest %.3g, the network %.3g",
             xmin, xmax, lo, hi, shape_text, held_text,
             w_test < GUARD_OUTSIDE_MIN ? "outside its pre-training the network gets at most half"
             : w_held < 0 ? "the shape's weight holds" : "the larger weight holds", g->ernest_w, 1.0 - g->ernest_w);
out:
    set_method(g);
    free(xe);
    free(ye);
    free(eloo);
    return st;
}

int bl_guard_ernest_alone(bl_guard *g, const bl_guard_runs *r, double within, const char *reason) {
    int distinct = 0;
    for (size_t i = 0; i < r->n && !distinct; i++) distinct = r->x[i] != r->x[0];
    bl_ernest em;
    if (!distinct || bl_ernest_fit(r->x, r->y, (int)r->n, &em, NULL) != BL_OK) return 0;
    for (size_t i = 0; i < r->n; i++) {
        const double p = bl_ernest_predict(&em, r->x[i]);
        if (!(p >= r->y[i] / within && p <= r->y[i] * within)) return 0;
    }
    bl_guard_reset(g);
    g->ernest_w = 1.0;
    memcpy(g->theta, em.theta, sizeof g->theta);
    snprintf(g->why, sizeof g->why, "Ernest alone, fitted to the runs: %s", reason);
    set_method(g);
    return 1;
}

double bl_guard_loo_log_error(const bl_guard *g, const double *x, const double *y, size_t n, const double *net_loo,
                              size_t folds) {
    if (n < 3 || folds < 2 || !net_loo) return NAN;
    const double w = g->ernest_w > 0 ? g->ernest_w : 0;
    double *xe = malloc(2 * n * sizeof *xe), ss = 0;
    if (!xe) return NAN;
    double *ye = xe + n;
    for (size_t h = 0; h < folds; h++) {
        double ern = NAN;
        bl_ernest ef;
        size_t m = 0;
        for (size_t i = 0; i < n; i++)
            if (i % folds != h) xe[m] = x[i], ye[m] = y[i], m++;
        const int ok = w > 0 && bl_ernest_fit(xe, ye, (int)m, &ef, NULL) == BL_OK;
        for (size_t i = h; i < n; i += folds) {
            if (w > 0) ern = ok ? bl_ernest_predict(&ef, x[i]) : NAN;
            const double p = w > 0 ? (1.0 - w) * net_loo[i] + w * ern : net_loo[i];
            const double e = log(y[i] / p);
            if (!(p > 0) || !isfinite(e)) {
                free(xe);
                return NAN;
            }
            ss += e * e;
        }
    }
    free(xe);
    return sqrt(ss / (double)n);
}

double bl_guard_scale(const bl_guard_runs *r) {
    int outside = 0;
    for (size_t i = 0; i < r->n; i++) outside |= r->x[i] < r->lo || r->x[i] > r->hi;
    if (!outside) return 1.0;
    double sum = 0;
    for (size_t i = 0; i < r->n; i++) {
        if (!(r->prior[i] > 0) || !isfinite(r->prior[i])) return 1.0; /* no curve to scale: leave the scale */
        sum += log(r->y[i] / r->prior[i]);
    }
    const double f = exp(sum / (double)r->n);
    return isfinite(f) && f > 0 ? f : 1.0;
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
    if (!bl_modelrec_find_attr(rec, "guard", "ernest_weight")) {
        /* the network alone, unless the file says the model needs its guard (or holds part of one) */
        int64_t major = 1;
        if (bl_modelrec_find_attr(rec, "", BL_MF_MAJOR_ATTR) &&
            bl_modelrec_get_int(rec, "", BL_MF_MAJOR_ATTR, &major, err) != BL_OK)
            return BL_EFORMAT;
        if (major >= 3 || bl_modelrec_find_attr(rec, "guard", "ernest_theta") || bl_modelrec_find_attr(rec, "guard", "why"))
            return bl_seterr(err, BL_EFORMAT, "model '%s': damaged: it %s but guard/ernest_weight is missing (without "
                             "it the model would predict with its network alone); fine-tune it again or restore the "
                             "file", rec->name, major >= 3 ? "blends Ernest into its predictions (format_major_required "
                             "= 3)" : "holds part of a guard/ group");
        return BL_OK;
    }
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
