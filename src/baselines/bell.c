/* bell.c — the Bell baseline: cross-validated choice between local-linear kernel regression
 * (100 bandwidths) and Ernest, refitted on all runs. See baselines.h for the exact protocol and
 * what happens with fewer than three distinct scale-outs.
 *
 * Efficiency: all runs of a fold share one held-out scale-out x0, so each kernel candidate needs one
 * prediction per fold (not per run); squared distances to x0 are computed once per fold and reused
 * for the 100 bandwidths. A Bell fit therefore costs 100·(k−2)·n exponentials plus k−2 Ernest fits
 * (k = distinct scale-outs), with one workspace allocation.
 * Not here: choosing scale-outs to run, input-size features.
 */
#include "baselines/baselines.h"
#include "common/error.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Ridge added to the weighted x-variance: relative to the total weight and h², so it is negligible
 * whenever the runs in the window spread out at all, and makes the slope exactly 0 (prediction = the
 * weighted mean) when they do not. */
#define BELL_RIDGE 1e-10

double bl_bell_bandwidth(int i) { return 1.0 + (double)i; }

/* Local-linear prediction at x0 from m runs (x, y) with squared distances d2[i] = (x[i] − x0)²
 * (d2 may be NULL: then computed here). Weights are exp(−(d2 − d2min)/(2h²)): dividing every weight
 * by that of the nearest run changes nothing in a weighted least-squares fit and keeps them from all
 * underflowing when x0 is far from the data. Accumulation is West's one-pass weighted
 * mean/covariance update, which avoids the cancellation of raw sums. */
static double kernel_eval(const double *x, const double *y, const double *d2, int m, double x0,
                          double h) {
    double d2min = INFINITY;
    for (int i = 0; i < m; i++) {
        double d = d2 ? d2[i] : (x[i] - x0) * (x[i] - x0);
        if (d < d2min) d2min = d;
    }
    const double inv2h2 = 1.0 / (2.0 * h * h);
    double W = 0.0, mx = 0.0, my = 0.0, cxx = 0.0, cxy = 0.0;
    for (int i = 0; i < m; i++) {
        double d = d2 ? d2[i] : (x[i] - x0) * (x[i] - x0);
        double w = exp(-(d - d2min) * inv2h2);
        if (w == 0.0) continue;
        W += w;
        double dx = x[i] - mx;
        mx += (w / W) * dx;
        my += (w / W) * (y[i] - my);
        cxx += w * dx * (x[i] - mx);
        cxy += w * dx * (y[i] - my);
    }
    double slope = cxy / (cxx + BELL_RIDGE * W * h * h);
    return my + slope * (x0 - mx);
}

double bl_kernel_predict(const double *x, const double *y, int n, double h, double x0) {
    if (x == NULL || y == NULL || n <= 0 || !isfinite(h) || !(h > 0.0) || !isfinite(x0)) return NAN;
    return kernel_eval(x, y, NULL, n, x0, h);
}

static int cmp_double(const void *a, const void *b) {
    double u = *(const double *)a, v = *(const double *)b;
    return (u > v) - (u < v);
}

void bl_bell_free(bl_bell *model) {
    if (model == NULL) return;
    free(model->x); /* y lives in the same block */
    memset(model, 0, sizeof *model);
}

bl_status bl_bell_fit(const double *x, const double *y, int n, bl_bell *model, bl_error *err) {
    BL_CHECK_ARG(model != NULL, err, "bell: model must not be NULL");
    memset(model, 0, sizeof *model);
    bl_status st = bl_baselines_check_runs("bell", x, y, n, 1, err);
    if (st != BL_OK) return st;

    /* One block: model copies x[n], y[n]; then workspace u[n] (distinct scale-outs), xt[n], yt[n]
     * (a fold's training runs), d2[n] (their squared distances to the held-out scale-out). */
    size_t cells, bytes;
    if (bl_mul_size((size_t)n, 6, &cells) || bl_mul_size(cells, sizeof(double), &bytes))
        return bl_seterr(err, BL_EINVAL, "bell: %d runs are too many", n);
    double *mem = malloc(bytes);
    if (mem == NULL) return bl_seterr(err, BL_ENOMEM, "bell: cannot allocate %zu bytes", bytes);
    double *mx = mem, *my = mem + n, *u = mem + 2 * (size_t)n, *xt = mem + 3 * (size_t)n,
           *yt = mem + 4 * (size_t)n, *d2 = mem + 5 * (size_t)n;
    memcpy(mx, x, (size_t)n * sizeof(double));
    memcpy(my, y, (size_t)n * sizeof(double));

    memcpy(u, x, (size_t)n * sizeof(double));
    qsort(u, (size_t)n, sizeof(double), cmp_double);
    int k = 0;
    for (int i = 0; i < n; i++)
        if (k == 0 || u[i] != u[k - 1]) u[k++] = u[i];

    double sum[BL_BELL_N_CANDIDATES];
    for (int c = 0; c < BL_BELL_N_CANDIDATES; c++) {
        sum[c] = 0.0;
        model->cv_scores[c] = NAN;
    }
    model->cv_score = NAN;
    int chosen;
    if (k == 1) {
        chosen = BL_BELL_N_BANDWIDTHS - 1; /* widest kernel: the mean runtime */
    } else if (k == 2) {
        chosen = BL_BELL_N_BANDWIDTHS; /* Ernest: keeps a scaling-law shape for extrapolation */
    } else {
        int held_total = 0, ernest_ok = 1;
        for (int f = 1; f + 1 < k; f++) {
            const double x0 = u[f];
            int m = 0, first_held = -1;
            for (int i = 0; i < n; i++) {
                if (x[i] == x0) {
                    if (first_held < 0) first_held = i;
                    continue;
                }
                xt[m] = x[i];
                yt[m] = y[i];
                d2[m] = (x[i] - x0) * (x[i] - x0);
                m++;
            }
            for (int c = 0; c < BL_BELL_N_BANDWIDTHS; c++) {
                double p = kernel_eval(xt, yt, d2, m, x0, bl_bell_bandwidth(c));
                for (int i = first_held; i < n; i++)
                    if (x[i] == x0) sum[c] += fabs(p - y[i]) / y[i];
            }
            if (ernest_ok) {
                bl_ernest e;
                bl_error eerr;
                st = bl_ernest_fit(xt, yt, m, &e, &eerr);
                if (st == BL_ENOMEM) {
                    bl_seterr(err, st, "bell: %s", eerr.message);
                    goto fail;
                }
                if (st != BL_OK) {
                    ernest_ok = 0; /* numerical trouble: Ernest drops out of the race */
                } else {
                    double p = bl_ernest_predict(&e, x0);
                    for (int i = first_held; i < n; i++)
                        if (x[i] == x0) sum[BL_BELL_N_BANDWIDTHS] += fabs(p - y[i]) / y[i];
                }
            }
            for (int i = first_held; i < n; i++) held_total += x[i] == x0;
        }
        for (int c = 0; c < BL_BELL_N_CANDIDATES; c++) model->cv_scores[c] = sum[c] / held_total;
        if (!ernest_ok) model->cv_scores[BL_BELL_N_BANDWIDTHS] = NAN;
        /* First strictly lowest score; NAN never wins (comparisons with NAN are false). */
        chosen = -1;
        double best = INFINITY;
        for (int c = 0; c < BL_BELL_N_CANDIDATES; c++)
            if (model->cv_scores[c] < best) { best = model->cv_scores[c]; chosen = c; }
        if (chosen < 0) {
            st = bl_seterr(err, BL_EINTERNAL, "bell: no candidate has a finite CV score");
            goto fail;
        }
        model->cv_score = best;
        model->n_folds = k - 2;
    }

    model->candidate = chosen;
    if (chosen == BL_BELL_N_BANDWIDTHS) {
        model->kind = BL_BELL_ERNEST;
        model->bandwidth = 0.0;
        st = bl_ernest_fit(x, y, n, &model->ernest, err);
        if (st != BL_OK) {
            bl_prefixerr(err, "bell");
            goto fail;
        }
    } else {
        model->kind = BL_BELL_KERNEL;
        model->bandwidth = bl_bell_bandwidth(chosen);
    }
    model->n = n;
    model->x = mx;
    model->y = my;
    bl_clearerr(err);
    return BL_OK;

fail:
    free(mem);
    memset(model, 0, sizeof *model);
    return st;
}

double bl_bell_predict(const bl_bell *model, double x) {
    if (model == NULL || model->x == NULL || model->n <= 0 || !isfinite(x) || !(x > 0.0)) return NAN;
    if (model->kind == BL_BELL_ERNEST) return bl_ernest_predict(&model->ernest, x);
    return kernel_eval(model->x, model->y, NULL, model->n, x, model->bandwidth);
}
