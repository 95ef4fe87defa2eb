/* interval.c — the harness's intervals and decisions: the decision grids (every distinct scale-out of
 * a fit group's context), the cross-context intervals of the methods without a calibration of their
 * own, and the three choices per fit group and method, judged against the measured means.
 *
 * Intervals (eval.h, BL_EVAL_COVERAGE). Bellamy's come from its fine-tuned model (fit.c:
 * bl_model_interval on the calibration its pre-training made). bellamy-scratch, Ernest and Bell have
 * nothing to calibrate on but the other contexts, so they get the same rule across the evaluated
 * contexts, on equal footing: for a split (or a candidate) of context c with n runs, of kind k (interp
 * when its scale-out lies strictly inside the runs' range, else extrap), q is the group-weighted
 * conformal quantile (each context weighs 1; need = coverage·(G + 1); unbounded when need > G, so fewer
 * than 9 other contexts give no bound at 0.9 — models/README.md §P10 step 5, computed by the library's
 * own bl_calib_quantile) of |ln(actual / predicted)| over that method's splits of the OTHER evaluated
 * contexts of the same algorithm at the same n and kind; the interval is predicted·e^(±q), unbounded
 * (lo 0, hi ∞) when q is infinite or hi exceeds BL_RUNTIME_MAX_S.
 *
 * Decisions (bl_eval_decide_one), through the public chooser bl_choose_interval, with the candidates'
 * intervals prepared as bl_choose_scale_out prepares them: a candidate whose runtime is unknown
 * (bellamy beyond 4 × its support) is never chosen; a goal without confidence takes an unbounded
 * interval's prediction as it is; the deadline (confidence BL_EVAL_COVERAGE) takes only bounded
 * intervals, judged by their upper end. When no candidate's upper end meets the deadline — the
 * chooser's fallback, or every interval unbounded — the decision counts as "none meets it" and the
 * scale-out scored is the chooser's fallback, the fastest predicted; whether it misses the deadline is
 * then measured like any other choice (so "none" is not counted as a miss by itself). A model without
 * calibration makes no deadline decision (bl_choose_scale_out refuses a confidence for it).
 *
 * Not here: the fits and Bellamy's own intervals (fit.c), the statistics (report.c).
 */
#include "eval.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "model/calib.h"

/* ---- grids ------------------------------------------------------------------------------------- */

static void grid_free(bl_eval_grid *g) {
    free(g->x);
    free(g->mean);
    free(g->row);
    free(g->pred);
    free(g->lo);
    free(g->hi);
    free(g->known);
    memset(g, 0, sizeof *g);
}

void bl_eval_grids_free(bl_eval *ev) {
    if (ev->grids)
        for (size_t g = 0; g < ev->n_groups; g++) grid_free(&ev->grids[g]);
    free(ev->grids);
    free(ev->decisions);
    ev->grids = NULL;
    ev->decisions = NULL;
}

static int cmp_double(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

bl_status bl_eval_grids_make(bl_eval *ev, bl_error *err) {
    bl_eval_grids_free(ev);
    ev->grids = calloc(ev->n_groups ? ev->n_groups : 1, sizeof *ev->grids);
    ev->decisions = calloc((ev->n_groups ? ev->n_groups : 1) * BL_EVAL_N_METHODS * BL_EVAL_N_GOALS,
                           sizeof *ev->decisions);
    if (!ev->grids || !ev->decisions) {
        bl_eval_grids_free(ev);
        return bl_seterr(err, BL_ENOMEM, "out of memory");
    }
    for (size_t g = 0; g < ev->n_groups; g++) {
        const bl_eval_split *s0 = &ev->splits[ev->group_split[ev->group_first[g]]];
        const bl_dataset *ds = ev->algos[s0->algo].ds;
        const bl_context *cx = &ds->contexts[s0->context];
        bl_eval_grid *gr = &ev->grids[g];
        const size_t m = cx->n_rows, M = BL_EVAL_N_METHODS;
        gr->x = malloc(m * sizeof *gr->x);
        gr->mean = malloc(m * sizeof *gr->mean);
        gr->row = malloc(m * sizeof *gr->row);
        if (!gr->x || !gr->mean || !gr->row) goto oom;
        for (size_t i = 0; i < m; i++) gr->x[i] = ds->scale_out[cx->rows[i]];
        qsort(gr->x, m, sizeof *gr->x, cmp_double);
        size_t nx = 0;
        for (size_t i = 0; i < m; i++)
            if (nx == 0 || gr->x[i] != gr->x[nx - 1]) gr->x[nx++] = gr->x[i];
        gr->nx = nx;
        for (size_t i = 0; i < nx; i++) { /* the mean over every run at x; the first such row in file order */
            double sum = 0.0;
            size_t k = 0;
            for (size_t j = 0; j < m; j++)
                if (ds->scale_out[cx->rows[j]] == gr->x[i]) {
                    if (k++ == 0) gr->row[i] = cx->rows[j];
                    sum += ds->runtime_s[cx->rows[j]];
                }
            gr->mean[i] = sum / (double)k;
        }
        gr->pred = malloc(M * nx * sizeof *gr->pred);
        gr->lo = malloc(M * nx * sizeof *gr->lo);
        gr->hi = malloc(M * nx * sizeof *gr->hi);
        gr->known = malloc(M * nx);
        if (!gr->pred || !gr->lo || !gr->hi || !gr->known) goto oom;
        for (size_t i = 0; i < M * nx; i++) {
            gr->pred[i] = gr->lo[i] = gr->hi[i] = NAN;
            gr->known[i] = 1;
        }
    }
    return BL_OK;
oom:
    bl_eval_grids_free(ev);
    return bl_seterr(err, BL_ENOMEM, "out of memory");
}

/* ---- the cross-context intervals ------------------------------------------------------------- */

double bl_eval_group_quantile(const double *score, const size_t *group, size_t n, double coverage) {
    if (n == 0) return INFINITY;
    /* the groups renumbered 0..G-1 (first-seen order; the quantile does not depend on it) */
    size_t *label = malloc(n * sizeof *label);
    bl_model_calib src, d;
    memset(&src, 0, sizeof src);
    memset(&d, 0, sizeof d);
    src.cell = malloc(n * sizeof *src.cell);
    src.group = malloc(n * sizeof *src.group);
    src.score = malloc(n * sizeof *src.score);
    double q = NAN;
    if (label && src.cell && src.group && src.score) {
        size_t G = 0;
        for (size_t i = 0; i < n; i++) {
            size_t k = 0;
            while (k < G && label[k] != group[i]) k++;
            if (k == G) label[G++] = group[i];
            src.cell[i] = 0;
            src.group[i] = (int32_t)k;
            src.score[i] = score[i];
        }
        src.known = 1;
        src.contexts = (int64_t)G;
        src.n = n;
        /* bl_calib_copy derives each cell's sorted scores and weights, as a model file's are */
        if (bl_calib_copy(&d, &src, NULL) == BL_OK) q = bl_calib_quantile(&d, 0, coverage, NULL);
        bl_calib_free(&d);
    }
    free(label);
    free(src.cell);
    free(src.group);
    free(src.score);
    return q;
}

static int cross_method(int m) { return m == BL_EVAL_SCRATCH || m == BL_EVAL_ERNEST || m == BL_EVAL_BELL; }

/* q of (algorithm a, method m, n, kind) for context c, memoised in memo (NaN: not computed yet). */
static double cross_q(const bl_eval *ev, size_t a, int m, int n, int kind, size_t c, double *memo, double *sc,
                      size_t *gr) {
    const size_t nc = ev->algos[a].ds->n_contexts;
    double *slot = &memo[(((size_t)m * (BL_EVAL_MAX_N + 1) + (size_t)n) * 2 + (size_t)kind) * nc + c];
    if (!isnan(*slot)) return *slot;
    size_t k = 0;
    for (size_t i = 0; i < ev->n_splits; i++) {
        const bl_eval_split *s = &ev->splits[i];
        if (s->algo != a || s->n != n || s->kind != kind || s->context == c) continue;
        const double p = s->pred[m], y = ev->algos[a].ds->runtime_s[s->test];
        if (!(p > 0) || !isfinite(p)) continue;
        sc[k] = fabs(log(y / p));
        gr[k++] = s->context;
    }
    double q = bl_eval_group_quantile(sc, gr, k, BL_EVAL_COVERAGE);
    if (isnan(q)) q = INFINITY;
    return *slot = q;
}

static void interval_of(double p, double q, double *lo, double *hi) {
    if (!(p > 0) || !isfinite(p)) {
        *lo = *hi = NAN;
        return;
    }
    *lo = 0.0;
    *hi = INFINITY;
    if (!isfinite(q)) return;
    const double u = p * exp(q);
    if (!(u <= BL_RUNTIME_MAX_S)) return;
    *lo = p * exp(-q);
    *hi = u;
}

bl_status bl_eval_intervals(bl_eval *ev, bl_error *err) {
    double *sc = malloc((ev->n_splits ? ev->n_splits : 1) * sizeof *sc);
    size_t *gr = malloc((ev->n_splits ? ev->n_splits : 1) * sizeof *gr);
    double **memo = calloc(ev->n_algos ? ev->n_algos : 1, sizeof *memo);
    bl_status st = sc && gr && memo ? BL_OK : bl_seterr(err, BL_ENOMEM, "out of memory");
    for (size_t a = 0; a < ev->n_algos && !st; a++) {
        /* n up to BL_EVAL_MAX_N: a split file may hold more runs than --max-n */
        const size_t len = (size_t)BL_EVAL_N_METHODS * (BL_EVAL_MAX_N + 1) * 2 * ev->algos[a].ds->n_contexts;
        if (!(memo[a] = malloc((len ? len : 1) * sizeof **memo))) st = bl_seterr(err, BL_ENOMEM, "out of memory");
        for (size_t i = 0; i < len && !st; i++) memo[a][i] = NAN;
    }
    for (int m = 0; m < BL_EVAL_N_METHODS && !st; m++) {
        if (!cross_method(m) || !(ev->o.methods & (1u << m))) continue;
        for (size_t i = 0; i < ev->n_splits; i++) {
            bl_eval_split *s = &ev->splits[i];
            const double q = cross_q(ev, s->algo, m, s->n, s->kind, s->context, memo[s->algo], sc, gr);
            interval_of(s->pred[m], q, &s->lo[m], &s->hi[m]);
        }
        for (size_t g = 0; g < ev->n_groups && ev->grids; g++) {
            const bl_eval_split *s0 = &ev->splits[ev->group_split[ev->group_first[g]]];
            const bl_dataset *ds = ev->algos[s0->algo].ds;
            double rlo = INFINITY, rhi = -INFINITY;
            for (int j = 0; j < s0->n; j++) {
                rlo = fmin(rlo, ds->scale_out[s0->train[j]]);
                rhi = fmax(rhi, ds->scale_out[s0->train[j]]);
            }
            bl_eval_grid *gd = &ev->grids[g];
            for (size_t j = 0; j < gd->nx; j++) {
                /* a candidate's kind as a test run's: strictly inside the runs' range or not (a training
                 * scale-out at an end is outside, as Bellamy's cells have it) */
                const int kind = gd->x[j] > rlo && gd->x[j] < rhi ? BL_EVAL_INTERP : BL_EVAL_EXTRAP;
                const double q = cross_q(ev, s0->algo, m, s0->n, kind, s0->context, memo[s0->algo], sc, gr);
                const size_t at = (size_t)m * gd->nx + j;
                interval_of(gd->pred[at], q, &gd->lo[at], &gd->hi[at]);
            }
        }
    }
    if (memo)
        for (size_t a = 0; a < ev->n_algos; a++) free(memo[a]);
    free(memo);
    free(sc);
    free(gr);
    return st;
}

/* ---- decisions --------------------------------------------------------------------------------- */

void bl_eval_decide_one(int goal, const double *x, const double *mean, const double *pred, const double *lo,
                        const double *hi, const unsigned char *known, size_t nx, bl_eval_decision *d) {
    memset(d, 0, sizeof *d);
    d->chosen = d->best = d->regret = NAN;
    if (nx == 0 || (goal == BL_EVAL_GOAL_DEADLINE && !lo)) return; /* a confidence needs intervals */
    /* the best under the measured means (ties to the smaller scale-out, as the chooser breaks them) */
    double fastest = INFINITY;
    for (size_t i = 0; i < nx; i++) fastest = fmin(fastest, mean[i]);
    const double target = BL_EVAL_DEADLINE * fastest;
    long best = -1;
    for (size_t i = 0; i < nx; i++) {
        const double key = goal == BL_EVAL_GOAL_FASTEST ? mean[i] : x[i] * mean[i];
        if (goal == BL_EVAL_GOAL_DEADLINE && !(mean[i] <= target)) continue;
        const double bk = best < 0 ? INFINITY : goal == BL_EVAL_GOAL_FASTEST ? mean[best] : x[best] * mean[best];
        if (best < 0 || key < bk || (key == bk && x[i] < x[best])) best = (long)i;
    }
    if (best < 0) return;
    /* the candidates as bl_choose_scale_out gives them to bl_choose_interval */
    double *buf = malloc(4 * nx * sizeof *buf);
    if (!buf) return;
    double *clo = buf, *chi = buf + nx, *plo = buf + 2 * nx, *phi = buf + 3 * nx;
    const int strict = goal == BL_EVAL_GOAL_DEADLINE;
    for (size_t i = 0; i < nx; i++) {
        const int kn = known ? known[i] : 1;
        const int bounded = lo && hi[i] <= BL_RUNTIME_MAX_S;
        clo[i] = !kn ? 0.0 : lo && (bounded || strict) ? lo[i] : pred[i];
        chi[i] = !kn ? INFINITY : lo && (bounded || strict) ? hi[i] : pred[i];
        plo[i] = !kn ? 0.0 : bounded ? lo[i] : pred[i]; /* the same without a confidence */
        phi[i] = !kn ? INFINITY : bounded ? hi[i] : pred[i];
    }
    bl_choice_opts o;
    bl_choice_opts_init(&o);
    o.goal = goal == BL_EVAL_GOAL_FASTEST ? BL_GOAL_FASTEST : BL_GOAL_CHEAPEST;
    o.price_per_hour = goal == BL_EVAL_GOAL_FASTEST ? 0.0 : 1.0;
    if (strict) {
        o.target_runtime_s = target;
        o.confidence = BL_EVAL_COVERAGE;
    }
    bl_choice c;
    bl_status st = bl_choose_interval(x, pred, clo, chi, nx, BL_EVAL_COVERAGE, &o, &c, NULL);
    if (strict && st == BL_ERANGE) {
        /* no candidate could be judged at all (every interval unbounded): none meets the deadline, and
         * the scale-out taken is what the chooser falls back to, the fastest predicted */
        bl_choice_opts f;
        bl_choice_opts_init(&f);
        st = bl_choose_interval(x, pred, plo, phi, nx, BL_EVAL_COVERAGE, &f, &c, NULL);
        c.fallback = 1;
    }
    free(buf);
    if (st != BL_OK) return;
    const size_t k = c.index;
    d->made = 1;
    d->chosen = x[k];
    d->best = x[best];
    d->regret = goal == BL_EVAL_GOAL_FASTEST ? mean[k] / mean[best] - 1.0 : (x[k] * mean[k]) / (x[best] * mean[best]) - 1.0;
    if (strict) {
        d->none = c.fallback;
        d->miss = mean[k] > target;
    }
}

bl_status bl_eval_decide(bl_eval *ev, bl_error *err) {
    BL_CHECK_ARG(ev && ev->grids && ev->decisions, err, "bl_eval_decide: no grids (bl_eval_fit makes them)");
    for (size_t g = 0; g < ev->n_groups; g++) {
        const bl_eval_grid *gd = &ev->grids[g];
        for (int m = 0; m < BL_EVAL_N_METHODS; m++) {
            bl_eval_decision *d = &ev->decisions[((size_t)g * BL_EVAL_N_METHODS + (size_t)m) * BL_EVAL_N_GOALS];
            for (int goal = 0; goal < BL_EVAL_N_GOALS; goal++) {
                memset(&d[goal], 0, sizeof d[goal]);
                d[goal].chosen = d[goal].best = d[goal].regret = NAN;
            }
            /* the noise floor is a reference at the test run, not a predictor of the other scale-outs */
            if (m == BL_EVAL_FLOOR || !(ev->o.methods & (1u << m))) continue;
            const size_t at = (size_t)m * gd->nx;
            int any = 0, calibrated = 0;
            for (size_t i = 0; i < gd->nx; i++) {
                any |= gd->pred[at + i] > 0 && isfinite(gd->pred[at + i]);
                calibrated |= !isnan(gd->lo[at + i]);
            }
            if (!any) continue;
            for (int goal = 0; goal < BL_EVAL_N_GOALS; goal++)
                bl_eval_decide_one(goal, gd->x, gd->mean, gd->pred + at, calibrated ? gd->lo + at : NULL,
                                   calibrated ? gd->hi + at : NULL, gd->known + at, gd->nx, &d[goal]);
        }
    }
    return BL_OK;
}
