/* report.c — the harness's results: every prediction (predictions.tsv), the statistics per method ×
 * algorithm × n × kind (summary.tsv), the pre-training folds (pretrain.tsv), a readable table, and
 * the plots (plot.dat + plot.gp, rendered to mre.svg, and coverage.dat + coverage.gp to coverage.svg,
 * by gnuplot when it is installed).
 *
 * Statistics of a cell: relative error |pred − actual| / actual over its splits: mean (MRE), median
 * and 90th percentile (linear interpolation between order statistics), MAE in seconds, and the mean
 * fit time per split. Rows with algorithm "ALL" are the unweighted mean of each statistic over the
 * algorithms that have the cell ("averaged over the algorithms", each algorithm counting once);
 * rows with n "2-N" average the per-n values over n = 2..N (the headline figure of the protocol).
 * A prediction that is not finite counts as a failure (column `failed`) and is left out of the
 * statistics.
 *
 * Intervals (eval.h, interval.c) of a cell: coverage = the share of its splits with an interval whose
 * test runtime lies in [lo, hi] (an unbounded interval counts as covering), coverage_bounded the same
 * over the bounded ones alone, unbounded_share, and the mean relative width (hi − lo) / actual over the
 * bounded ones. Decisions (one per fit group, method and goal) do not depend on the kind of test run:
 * a cell's are those of every fit group of its algorithm and n, and both kind rows show them.
 *
 * Not here: fitting (fit.c), splits (eval.c).
 */
#include "eval.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/error.h"
#include "common/file.h"
#include "common/gnuplot.h"

typedef struct cell {
    size_t count, failed;
    double mre, median, p90, mae, fit_ms;
    double coverage, coverage_bounded, unbounded, width, width_median; /* NAN: no interval */
    size_t decisions;                                    /* fit groups with a decision (fastest) */
    double regret[BL_EVAL_N_GOALS], miss, none;          /* means over the groups decided (NAN: none) */
} cell;

enum { N_STATS = 5 + 5 + BL_EVAL_N_GOALS + 2 };

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* q-quantile of sorted v[0..n) by linear interpolation (numpy's default). */
static double quantile(const double *v, size_t n, double q) {
    if (n == 0) return NAN;
    double pos = q * (double)(n - 1);
    size_t i = (size_t)pos;
    if (i + 1 >= n) return v[n - 1];
    return v[i] + (pos - (double)i) * (v[i + 1] - v[i]);
}

static void cell_stats(const bl_eval *ev, size_t algo, int method, int n, int kind, double *buf, cell *c) {
    memset(c, 0, sizeof *c);
    double sum = 0, sum_abs = 0, sum_ms = 0;
    for (size_t i = 0; i < ev->n_splits; i++) {
        const bl_eval_split *s = &ev->splits[i];
        if (s->algo != algo || s->n != n || s->kind != kind) continue;
        double actual = ev->algos[algo].ds->runtime_s[s->test], p = s->pred[method];
        if (!isfinite(p)) {
            c->failed += method != BL_EVAL_FLOOR; /* the floor has no value without repetitions */
            continue;
        }
        double ae = fabs(p - actual);
        buf[c->count++] = ae / actual;
        sum += ae / actual;
        sum_abs += ae;
        sum_ms += s->fit_ms[method];
    }
    if (c->count == 0) {
        c->mre = c->median = c->p90 = c->mae = c->fit_ms = NAN;
        c->coverage = c->coverage_bounded = c->unbounded = c->width = c->width_median = NAN;
        return;
    }
    qsort(buf, c->count, sizeof *buf, cmp_double);
    c->mre = sum / (double)c->count;
    c->median = quantile(buf, c->count, 0.5);
    c->p90 = quantile(buf, c->count, 0.9);
    c->mae = sum_abs / (double)c->count;
    c->fit_ms = sum_ms / (double)c->count;
    size_t with = 0, covered = 0, bounded = 0, covered_b = 0;
    double wsum = 0;
    for (size_t i = 0; i < ev->n_splits; i++) {
        const bl_eval_split *s = &ev->splits[i];
        if (s->algo != algo || s->n != n || s->kind != kind || !isfinite(s->pred[method])) continue;
        const double lo = s->lo[method], hi = s->hi[method], actual = ev->algos[algo].ds->runtime_s[s->test];
        if (isnan(lo) || isnan(hi)) continue;
        const int in = actual >= lo && actual <= hi;
        with++;
        covered += in;
        if (isfinite(hi)) {
            covered_b += in;
            wsum += (hi - lo) / actual;
            buf[bounded++] = (hi - lo) / actual; /* the errors' quantiles are taken */
        }
    }
    qsort(buf, bounded, sizeof *buf, cmp_double);
    c->width_median = bounded ? quantile(buf, bounded, 0.5) : NAN;
    c->coverage = with ? (double)covered / (double)with : NAN;
    c->unbounded = with ? (double)(with - bounded) / (double)with : NAN;
    c->coverage_bounded = bounded ? (double)covered_b / (double)bounded : NAN;
    c->width = bounded ? wsum / (double)bounded : NAN;
}

/* The decisions of method at (algo, n) into c (every fit group of them, whatever its splits' kinds). */
static void decision_stats(const bl_eval *ev, size_t algo, int method, int n, cell *c) {
    double sum[BL_EVAL_N_GOALS] = {0}, miss = 0, none = 0;
    size_t made[BL_EVAL_N_GOALS] = {0};
    for (size_t g = 0; ev->decisions && g < ev->n_groups; g++) {
        const bl_eval_split *s0 = &ev->splits[ev->group_split[ev->group_first[g]]];
        if (s0->algo != algo || s0->n != n) continue;
        const bl_eval_decision *d = &ev->decisions[(g * BL_EVAL_N_METHODS + (size_t)method) * BL_EVAL_N_GOALS];
        for (int k = 0; k < BL_EVAL_N_GOALS; k++) {
            if (!d[k].made) continue;
            made[k]++;
            sum[k] += d[k].regret;
            if (k == BL_EVAL_GOAL_DEADLINE) {
                miss += d[k].miss;
                none += d[k].none;
            }
        }
    }
    c->decisions = made[BL_EVAL_GOAL_FASTEST];
    for (int k = 0; k < BL_EVAL_N_GOALS; k++) c->regret[k] = made[k] ? sum[k] / (double)made[k] : NAN;
    const size_t md = made[BL_EVAL_GOAL_DEADLINE];
    c->miss = md ? miss / (double)md : NAN;
    c->none = md ? none / (double)md : NAN;
}

/* The statistics, computed once: stats[((a·M + m)·(max_n + 1) + n)·2 + kind] for a < n_algos, and
 * a = n_algos for ALL; n = 0 holds the 2..max_n average. */
typedef struct table {
    size_t n_panels; /* n_algos + 1 */
    int    max_n;
    cell  *c;
} table;

static cell *at(const table *t, size_t a, int m, int n, int kind) {
    return &t->c[(((a * BL_EVAL_N_METHODS + (size_t)m) * (size_t)(t->max_n + 1) + (size_t)n) * 2) + (size_t)kind];
}

/* The statistics in summary.tsv's order after fit_ms_mean's. */
static void stat_get(const cell *c, double v[N_STATS]) {
    v[0] = c->mre; v[1] = c->median; v[2] = c->p90; v[3] = c->mae; v[4] = c->fit_ms;
    v[5] = c->coverage; v[6] = c->coverage_bounded; v[7] = c->unbounded; v[8] = c->width; v[9] = c->width_median;
    for (int k = 0; k < BL_EVAL_N_GOALS; k++) v[10 + k] = c->regret[k];
    v[10 + BL_EVAL_N_GOALS] = c->miss; v[11 + BL_EVAL_N_GOALS] = c->none;
}
static void stat_set(cell *c, const double v[N_STATS]) {
    c->mre = v[0]; c->median = v[1]; c->p90 = v[2]; c->mae = v[3]; c->fit_ms = v[4];
    c->coverage = v[5]; c->coverage_bounded = v[6]; c->unbounded = v[7]; c->width = v[8]; c->width_median = v[9];
    for (int k = 0; k < BL_EVAL_N_GOALS; k++) c->regret[k] = v[10 + k];
    c->miss = v[10 + BL_EVAL_N_GOALS]; c->none = v[11 + BL_EVAL_N_GOALS];
}

/* Average of cells into out: each statistic over the cells where it has a value (for the error
 * statistics: the cells with splits); the counts summed. */
static void average(cell *out, cell *const *in, size_t k) {
    double acc[N_STATS] = { 0 }, v[N_STATS];
    size_t used[N_STATS] = { 0 }, count = 0, failed = 0, decisions = 0;
    for (size_t i = 0; i < k; i++) {
        count += in[i]->count;
        failed += in[i]->failed;
        decisions += in[i]->decisions;
        stat_get(in[i], v);
        for (int j = 0; j < N_STATS; j++)
            if (!isnan(v[j])) {
                acc[j] += v[j];
                used[j]++;
            }
    }
    for (int j = 0; j < N_STATS; j++) acc[j] = used[j] ? acc[j] / (double)used[j] : NAN;
    stat_set(out, acc);
    out->count = count;
    out->failed = failed;
    out->decisions = decisions;
}

static bl_status table_make(const bl_eval *ev, table *t, bl_error *err) {
    t->n_panels = ev->n_algos + 1;
    t->max_n = ev->o.max_n;
    size_t ncell = t->n_panels * BL_EVAL_N_METHODS * (size_t)(t->max_n + 1) * 2;
    t->c = calloc(ncell, sizeof *t->c);
    double *buf = malloc((ev->n_splits ? ev->n_splits : 1) * sizeof *buf);
    cell **in = malloc((t->n_panels + (size_t)t->max_n) * sizeof *in);
    if (!t->c || !buf || !in) {
        free(t->c); free(buf); free(in);
        return bl_seterr(err, BL_ENOMEM, "out of memory");
    }
    for (int m = 0; m < BL_EVAL_N_METHODS; m++)
        for (int kind = 0; kind < 2; kind++) {
            for (int n = 1; n <= t->max_n; n++) {
                for (size_t a = 0; a < ev->n_algos; a++) {
                    cell_stats(ev, a, m, n, kind, buf, at(t, a, m, n, kind));
                    decision_stats(ev, a, m, n, at(t, a, m, n, kind));
                    in[a] = at(t, a, m, n, kind);
                }
                average(at(t, ev->n_algos, m, n, kind), in, ev->n_algos);
            }
            for (size_t a = 0; a < t->n_panels; a++) {
                size_t k = 0;
                for (int n = 2; n <= t->max_n; n++) in[k++] = at(t, a, m, n, kind);
                average(at(t, a, m, 0, kind), in, k);
            }
        }
    free(buf);
    free(in);
    return BL_OK;
}

static void put_num(FILE *f, double v) {
    if (isnan(v)) fputs("NaN", f);
    else fprintf(f, "%.6g", v);
}

/* dir/name replaced by the common policy (common/file.h): a report is whole or absent. *o receives the
 * file, whose stream is returned; close_out commits it. */
static FILE *open_out(const char *dir, const char *name, bl_file_out **o, bl_error *err) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = bl_file_out_open(path, o, err) == BL_OK ? bl_file_out_stream(*o, err) : NULL;
    if (!f) {
        bl_file_out_abort(*o);
        *o = NULL;
    }
    return f;
}

static bl_status close_out(bl_file_out *o, bl_error *err) { return bl_file_out_commit(o, err); }

static bl_status write_predictions(const bl_eval *ev, const char *dir, bl_error *err) {
    bl_file_out *o = NULL;
    FILE *f = open_out(dir, "predictions.tsv", &o, err);
    if (!f) return err ? err->status : BL_EIO;
    fputs("split_id\tmethod\tpredicted\tactual\tlo90\thi90\n", f);
    for (size_t i = 0; i < ev->n_splits; i++) {
        const bl_eval_split *s = &ev->splits[i];
        double actual = ev->algos[s->algo].ds->runtime_s[s->test];
        for (int m = 0; m < BL_EVAL_N_METHODS; m++) {
            if (!(ev->o.methods & (1u << m))) continue;
            fprintf(f, "%s\t%s\t", s->id, bl_eval_method_name(m));
            if (isfinite(s->pred[m])) fprintf(f, "%.17g", s->pred[m]);
            else fputs("NaN", f);
            fprintf(f, "\t%.17g", actual);
            for (int e = 0; e < 2; e++) { /* the interval: NaN none, inf unbounded */
                const double v = e ? s->hi[m] : s->lo[m];
                if (isnan(v)) fputs("\tNaN", f);
                else if (isinf(v)) fputs("\tinf", f);
                else fprintf(f, "\t%.17g", v);
            }
            fputc('\n', f);
        }
    }
    return close_out(o, err);
}

static void n_label(char *buf, size_t cap, int n, int max_n) {
    if (n == 0) snprintf(buf, cap, "2-%d", max_n);
    else snprintf(buf, cap, "%d", n);
}

static const char *panel_name(const bl_eval *ev, size_t a) { return a < ev->n_algos ? ev->algos[a].name : "ALL"; }

static bl_status write_summary(const bl_eval *ev, const table *t, const char *dir, bl_error *err) {
    char nl[32];
    bl_file_out *o = NULL;
    FILE *f = open_out(dir, "summary.tsv", &o, err);
    if (!f) return err ? err->status : BL_EIO;
    fputs("algorithm\tmethod\tn\tkind\tsplits\tfailed\tmre_mean\tmre_median\tmre_p90\tmae_s\tfit_ms_mean"
          "\tcoverage90\tcoverage90_bounded\tunbounded_share\twidth90_mean\twidth90_median\tdecisions\tregret_fastest_runtime"
          "\tregret_cheapest_cost\tregret_deadline_cost\tdeadline_miss\tdeadline_none_meets\n", f);
    for (size_t a = 0; a < t->n_panels; a++)
        for (int m = 0; m < BL_EVAL_N_METHODS; m++) {
            if (!(ev->o.methods & (1u << m))) continue;
            for (int kind = 0; kind < 2; kind++)
                for (int n = 1; n <= t->max_n + (t->max_n >= 2); n++) {
                    int nn = n > t->max_n ? 0 : n;
                    const cell *c = at(t, a, m, nn, kind);
                    n_label(nl, sizeof nl, nn, t->max_n);
                    fprintf(f, "%s\t%s\t%s\t%s\t%zu\t%zu\t", panel_name(ev, a), bl_eval_method_name(m), nl,
                            bl_eval_kind_name(kind), c->count, c->failed);
                    double v[N_STATS];
                    stat_get(c, v);
                    for (int j = 0; j < N_STATS; j++) {
                        if (j == 10) fprintf(f, "%zu\t", c->decisions); /* before the regrets */
                        put_num(f, v[j]);
                        fputc(j + 1 < N_STATS ? '\t' : '\n', f);
                    }
                }
        }
    bl_status st = close_out(o, err);
    if (st != BL_OK) return st;

    f = open_out(dir, "pretrain.tsv", &o, err);
    if (!f) return err ? err->status : BL_EIO;
    fputs("algorithm\tfold\tsource\tcontexts\trows\tseconds\ttrials\tepochs\tlr\tdropout\tweight_decay\tbest_val_loss"
          "\tcalib_contexts\tcalib_seconds\n", f);
    for (size_t a = 0; a < ev->n_algos; a++) {
        const bl_eval_algo *al = &ev->algos[a];
        for (int fo = 0; fo < al->n_folds; fo++) {
            const bl_model *m = al->fold_model[fo * ev->o.ensemble];
            if (!m) continue;
            fprintf(f, "%s\t%d\t%s\t%zu\t%zu\t", al->name, fo + 1, al->pre_ds ? al->pre_path : "other-contexts",
                    al->fold_contexts[fo], al->fold_rows[fo]);
            put_num(f, al->fold_seconds[fo]); /* NaN (a cached fold) as the other TSVs write it */
            fprintf(f, "\t%d\t%lld\t%g\t%g\t%g\t%.6g\t", ev->o.pre.trials, (long long)m->epochs, m->lr, m->dropout,
                    m->weight_decay, m->best_val_loss);
            /* the calibration of the fold model (NaN: none, as with --ensemble); its seconds are the
             * calibration's own, recorded in the model (so also for a fold from the cache) */
            put_num(f, m->calib.known ? (double)m->calib.contexts : NAN);
            fputc('\t', f);
            put_num(f, m->calib.known ? m->calib.seconds : NAN);
            fputc('\n', f);
        }
    }
    return close_out(o, err);
}

static void print_block(const bl_eval *ev, const table *t, size_t a, FILE *out) {
    char nl[32];
    fprintf(out, "  %-7s %-5s", "kind", "n");
    for (int m = 0; m < BL_EVAL_N_METHODS; m++)
        if (ev->o.methods & (1u << m)) fprintf(out, " %16s", bl_eval_method_name(m));
    fputc('\n', out);
    for (int kind = 0; kind < 2; kind++)
        for (int n = 1; n <= t->max_n + (t->max_n >= 2); n++) {
            int nn = n > t->max_n ? 0 : n;
            size_t any = 0;
            for (int m = 0; m < BL_EVAL_N_METHODS; m++) any += at(t, a, m, nn, kind)->count;
            if (any == 0) continue;
            n_label(nl, sizeof nl, nn, t->max_n);
            fprintf(out, "  %-7s %-5s", bl_eval_kind_name(kind), nl);
            for (int m = 0; m < BL_EVAL_N_METHODS; m++) {
                if (!(ev->o.methods & (1u << m))) continue;
                const cell *c = at(t, a, m, nn, kind);
                if (c->count == 0) fprintf(out, " %16s", "-");
                else fprintf(out, " %9.4f (%4zu)", c->mre, c->count);
            }
            fputc('\n', out);
        }
}

/* Whether method m predicts (and so has intervals and decisions): not the noise floor. */
static int predictor(const bl_eval *ev, int m) { return m != BL_EVAL_FLOOR && (ev->o.methods & (1u << m)); }

static void print_cov_block(const bl_eval *ev, const table *t, size_t a, FILE *out) {
    char nl[32];
    fprintf(out, "  %-7s %-5s", "kind", "n");
    for (int m = 0; m < BL_EVAL_N_METHODS; m++)
        if (predictor(ev, m)) fprintf(out, " %16s", bl_eval_method_name(m));
    fputc('\n', out);
    for (int kind = 0; kind < 2; kind++)
        for (int n = 1; n <= t->max_n + (t->max_n >= 2); n++) {
            int nn = n > t->max_n ? 0 : n;
            size_t any = 0;
            for (int m = 0; m < BL_EVAL_N_METHODS; m++) any += predictor(ev, m) ? at(t, a, m, nn, kind)->count : 0;
            if (any == 0) continue;
            n_label(nl, sizeof nl, nn, t->max_n);
            fprintf(out, "  %-7s %-5s", bl_eval_kind_name(kind), nl);
            for (int m = 0; m < BL_EVAL_N_METHODS; m++) {
                if (!predictor(ev, m)) continue;
                const cell *c = at(t, a, m, nn, kind);
                if (isnan(c->coverage)) fprintf(out, " %16s", "-");
                else fprintf(out, "    %5.3f (%5.3f)", c->coverage, c->unbounded);
            }
            fputc('\n', out);
        }
}

static void print_decision_block(const bl_eval *ev, const table *t, size_t a, FILE *out) {
    char nl[32];
    fprintf(out, "  %-13s", "n");
    for (int m = 0; m < BL_EVAL_N_METHODS; m++)
        if (predictor(ev, m)) fprintf(out, " %16s", bl_eval_method_name(m));
    fputc('\n', out);
    for (int n = 1; n <= t->max_n + (t->max_n >= 2); n++) {
        int nn = n > t->max_n ? 0 : n;
        size_t any = 0;
        for (int m = 0; m < BL_EVAL_N_METHODS; m++) any += predictor(ev, m) ? at(t, a, m, nn, 0)->decisions : 0;
        if (any == 0) continue;
        n_label(nl, sizeof nl, nn, t->max_n);
        fprintf(out, "  %-13s", nl);
        for (int m = 0; m < BL_EVAL_N_METHODS; m++) {
            if (!predictor(ev, m)) continue;
            const cell *c = at(t, a, m, nn, 0);
            if (isnan(c->regret[BL_EVAL_GOAL_DEADLINE])) fprintf(out, " %16s", "-");
            else fprintf(out, "    %5.3f (%5.3f)", c->regret[BL_EVAL_GOAL_DEADLINE], c->miss);
        }
        fputc('\n', out);
    }
}

static void print_table(const bl_eval *ev, const table *t, FILE *out) {
    /* one algorithm: its own table only ('ALL' would repeat it) */
    const int all = ev->n_algos > 1;
    fprintf(out, "\nMean relative error, as a fraction (0.05 = 5 %%; splits in parentheses%s)\n",
            all ? "; 'ALL' = the mean over the algorithms" : "");
    if (all) {
        fprintf(out, "\nALL (%zu algorithms)\n", ev->n_algos);
        print_block(ev, t, ev->n_algos, out);
    }
    for (size_t a = 0; a < ev->n_algos; a++) {
        fprintf(out, "\n%s (%zu contexts in the data)\n", ev->algos[a].name, ev->algos[a].ds->n_contexts);
        print_block(ev, t, a, out);
    }
    int any_predictor = 0;
    for (int m = 0; m < BL_EVAL_N_METHODS; m++) any_predictor |= predictor(ev, m);
    if (any_predictor) {
        fprintf(out, "\nCoverage of the %g interval: the share of test runs inside it, as a fraction (in parentheses "
                "the share of intervals that are unbounded, which count as covering; '-': no interval)\n",
                BL_EVAL_COVERAGE);
        for (size_t i = all ? 0 : 1; i <= ev->n_algos; i++) { /* ALL first (several algorithms), then each */
            const size_t p = i == 0 ? ev->n_algos : i - 1;
            fprintf(out, "\n%s\n", panel_name(ev, p));
            print_cov_block(ev, t, p, out);
        }
        fprintf(out, "\nDeadline choice: the cheapest scale-out whose %g upper end meets %g x the context's best mean "
                "runtime; its cost regret against the cheapest whose measured mean meets it (in parentheses the share "
                "of choices whose measured mean misses it), as fractions\n", BL_EVAL_COVERAGE, BL_EVAL_DEADLINE);
        for (size_t i = all ? 0 : 1; i <= ev->n_algos; i++) {
            const size_t p = i == 0 ? ev->n_algos : i - 1;
            fprintf(out, "\n%s\n", panel_name(ev, p));
            print_decision_block(ev, t, p, out);
        }
    }
    fprintf(out, "\nFit time per split, ms (mean over all splits):");
    for (int m = 0; m < BL_EVAL_N_METHODS; m++) {
        if (!(ev->o.methods & (1u << m))) continue;
        double sum = 0;
        size_t k = 0;
        for (size_t i = 0; i < ev->n_splits; i++)
            if (isfinite(ev->splits[i].fit_ms[m])) { sum += ev->splits[i].fit_ms[m]; k++; }
        fprintf(out, "  %s %.3g", bl_eval_method_name(m), k ? sum / (double)k : NAN);
    }
    fprintf(out, "\nFitting: %zu splits in %zu groups, %.1f s wall on %d thread%s\n", ev->n_splits, ev->n_groups,
            ev->fit_wall_s, ev->o.threads, ev->o.threads == 1 ? "" : "s");
    for (size_t a = 0; a < ev->n_algos; a++)
        for (int f = 0; f < ev->algos[a].n_folds; f++)
            if (ev->algos[a].fold_model[f * ev->o.ensemble])
                fprintf(out, "Pre-training %s fold %d: %.1f s (%zu rows, %zu contexts)\n", ev->algos[a].name, f + 1,
                        ev->algos[a].fold_seconds[f], ev->algos[a].fold_rows[f], ev->algos[a].fold_contexts[f]);
}

/* ---- plot -------------------------------------------------------------------------------------- */

/* Runs gnuplot on dir/script (in dir, so the script's paths stay relative) and checks that dir/svg came
 * out whole. Absent gnuplot (or one that fails) is a note on `note`, still BL_OK. */
static bl_status run_gnuplot(const char *dir, const char *script, const char *svg_name, FILE *note, bl_error *err) {
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) return bl_seterr(err, BL_EIO, "fork: %s", strerror(errno));
    if (pid == 0) {
        if (chdir(dir) == 0) execlp("gnuplot", "gnuplot", script, (char *)NULL);
        _exit(127);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) return bl_seterr(err, BL_EIO, "waitpid: %s", strerror(errno));
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127) {
        if (note) fprintf(note, "note: gnuplot was not found on PATH: no %s (the TSVs, the .dat and .gp files are written)\n",
                          svg_name);
    } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        if (note) fprintf(note, "note: gnuplot failed (status %d): %s may be missing\n", status, svg_name);
    } else {
        char svg[4200];
        snprintf(svg, sizeof svg, "%s/%s", dir, svg_name);
        if (!bl_gp_output_complete(svg)) { /* gnuplot does not always fail when its writes do */
            remove(svg);
            return bl_seterr(err, BL_EIO, "%s: gnuplot did not write it whole (a full disk or a file-size limit?); "
                             "the partial file is removed", svg);
        }
        if (note) fprintf(note, "plot: %s/%s\n", dir, svg_name);
    }
    return BL_OK;
}

static bl_status write_plot(const bl_eval *ev, const table *t, const char *dir, FILE *note, bl_error *err) {
    bl_file_out *o = NULL;
    FILE *f = open_out(dir, "plot.dat", &o, err);
    if (!f) return err ? err->status : BL_EIO;
    /* block index = panel·2 + kind; columns: n, then one column per method (NaN when absent) */
    for (size_t a = 0; a < t->n_panels; a++)
        for (int kind = 0; kind < 2; kind++) {
            fprintf(f, "# %s %s\n", panel_name(ev, a), bl_eval_kind_name(kind));
            for (int n = 1; n <= t->max_n; n++) {
                fprintf(f, "%d", n);
                for (int m = 0; m < BL_EVAL_N_METHODS; m++) {
                    fputc('\t', f);
                    put_num(f, at(t, a, m, n, kind)->mre);
                }
                fputc('\n', f);
            }
            fputs("\n\n", f);
        }
    bl_status st = close_out(o, err);
    if (st != BL_OK) return st;

    f = open_out(dir, "plot.gp", &o, err);
    if (!f) return err ? err->status : BL_EIO;
    size_t cols = t->n_panels;
    fprintf(f, "# MRE against n: one panel per algorithm (and ALL), interpolation above, extrapolation below.\n"
               "set terminal svg size %zu,700 dynamic enhanced font 'sans,11'\n"
               "set output 'mre.svg'\n"
               "set datafile missing 'NaN'\n"
               "set multiplot layout 2,%zu title 'Mean relative error against the number of training runs n'\n"
               "set logscale y\nset xrange [0.5:%d.5]\nset xtics 1\nset grid\nset key top right font ',9'\n"
               "set xlabel 'n'\nset ylabel 'MRE'\n",
            cols * 330 + 40, cols, t->max_n);
    static const char *const style[BL_EVAL_N_METHODS] = { "lc rgb '#d62728' pt 7", "lc rgb '#ff7f0e' pt 5 dt 2",
                                                          "lc rgb '#1f77b4' pt 9", "lc rgb '#2ca02c' pt 11",
                                                          "lc rgb '#7f7f7f' pt 1 dt 3" };
    for (int kind = 0; kind < 2; kind++)
        for (size_t a = 0; a < cols; a++) {
            size_t idx = a * 2 + (size_t)kind;
            int any = 0;
            for (int m = 0; m < BL_EVAL_N_METHODS; m++) {
                int finite = 0;
                for (int n = 1; n <= t->max_n; n++) finite |= at(t, a, m, n, kind)->count > 0;
                if (!finite || !(ev->o.methods & (1u << m))) continue;
                if (!any) { /* the panel is named after a data file: text, never script */
                    char title[600];
                    snprintf(title, sizeof title, "%s (%s)", panel_name(ev, a), kind ? "extrapolation" : "interpolation");
                    fputs("set title noenhanced ", f);
                    bl_gp_put_str(f, title);
                    fputs("\nplot ", f);
                }
                /* one legend, in the first panel, so the others stay readable */
                fprintf(f, "%s'plot.dat' index %zu using 1:%d with linespoints %s lw 2 ", any ? ", \\\n     " : "", idx, m + 2,
                        style[m]);
                if (kind == 0 && a == 0) fprintf(f, "title '%s'", bl_eval_method_name(m));
                else fputs("notitle", f);
                any = 1;
            }
            fputs(any ? "\n" : "set multiplot next\n", f);
        }
    fputs("unset multiplot\n", f);
    if ((st = close_out(o, err)) != BL_OK) return st;

    return run_gnuplot(dir, "plot.gp", "mre.svg", note, err);
}

/* coverage.dat + coverage.gp → coverage.svg: per panel (algorithm, and ALL), the coverage of the
 * interval against n (interp solid, extrap dashed, the nominal level dotted) above, and the regret of
 * the deadline choice in cost (solid) and of the fastest choice in runtime (dashed) below. */
static bl_status write_coverage_plot(const bl_eval *ev, const table *t, const char *dir, FILE *note, bl_error *err) {
    enum { COLS = 4 }; /* per method: coverage interp, coverage extrap, deadline regret, fastest regret */
    bl_file_out *o = NULL;
    FILE *f = open_out(dir, "coverage.dat", &o, err);
    if (!f) return err ? err->status : BL_EIO;
    fputs("# block index = panel; columns: n, then per method (bellamy, bellamy-scratch, ernest, bell, noise-floor)\n"
          "# coverage interp, coverage extrap, regret_deadline_cost, regret_fastest_runtime (NaN when absent)\n", f);
    for (size_t a = 0; a < t->n_panels; a++) {
        fprintf(f, "# %s\n", panel_name(ev, a));
        for (int n = 1; n <= t->max_n; n++) {
            fprintf(f, "%d", n);
            for (int m = 0; m < BL_EVAL_N_METHODS; m++) {
                const double v[COLS] = { at(t, a, m, n, BL_EVAL_INTERP)->coverage, at(t, a, m, n, BL_EVAL_EXTRAP)->coverage,
                                         at(t, a, m, n, 0)->regret[BL_EVAL_GOAL_DEADLINE],
                                         at(t, a, m, n, 0)->regret[BL_EVAL_GOAL_FASTEST] };
                for (int j = 0; j < COLS; j++) {
                    fputc('\t', f);
                    put_num(f, v[j]);
                }
            }
            fputc('\n', f);
        }
        fputs("\n\n", f);
    }
    bl_status st = close_out(o, err);
    if (st != BL_OK) return st;

    f = open_out(dir, "coverage.gp", &o, err);
    if (!f) return err ? err->status : BL_EIO;
    const size_t cols = t->n_panels;
    fprintf(f, "# Coverage of the %g interval and the regret of the choices against n: one panel per algorithm (and ALL).\n"
               "set terminal svg size %zu,700 dynamic enhanced font 'sans,11'\n"
               "set output 'coverage.svg'\n"
               "set datafile missing 'NaN'\n"
               "set multiplot layout 2,%zu title 'Intervals and decisions against the number of training runs n'\n"
               "set xrange [0.5:%d.5]\nset xtics 1\nset grid\nset key bottom right font ',9'\nset xlabel 'n'\n",
            BL_EVAL_COVERAGE, cols * 330 + 40, cols, t->max_n);
    static const char *const color[BL_EVAL_N_METHODS] = { "lc rgb '#d62728' pt 7", "lc rgb '#ff7f0e' pt 5",
                                                          "lc rgb '#1f77b4' pt 9", "lc rgb '#2ca02c' pt 11",
                                                          "lc rgb '#7f7f7f' pt 1" };
    for (int row = 0; row < 2; row++) {
        fprintf(f, row == 0 ? "set yrange [0:1.05]\nset ylabel 'coverage (solid interp, dashed extrap)'\n"
                            : "set yrange [*:*]\nset ylabel 'regret (solid deadline cost, dashed fastest runtime)'\n");
        for (size_t a = 0; a < cols; a++) {
            int any = 0;
            for (int m = 0; m < BL_EVAL_N_METHODS; m++) {
                if (!predictor(ev, m)) continue;
                for (int j = 0; j < 2; j++) {
                    const int col = 2 + m * COLS + row * 2 + j;
                    int finite = 0;
                    for (int n = 1; n <= t->max_n; n++) {
                        const cell *c = row == 0 ? at(t, a, m, n, j ? BL_EVAL_EXTRAP : BL_EVAL_INTERP) : at(t, a, m, n, 0);
                        finite |= !isnan(row == 0 ? c->coverage : c->regret[j ? BL_EVAL_GOAL_FASTEST : BL_EVAL_GOAL_DEADLINE]);
                    }
                    if (!finite) continue;
                    if (!any) { /* the panel is named after a data file: text, never script */
                        char title[600];
                        snprintf(title, sizeof title, "%s (%s)", panel_name(ev, a), row ? "regret" : "coverage");
                        fputs("set title noenhanced ", f);
                        bl_gp_put_str(f, title);
                        fputs("\nplot ", f);
                        if (row == 0) fprintf(f, "%g with lines lc rgb '#000000' dt 3 notitle, \\\n     ", BL_EVAL_COVERAGE);
                    }
                    fprintf(f, "%s'coverage.dat' index %zu using 1:%d with linespoints %s dt %d lw 2 ", any ? ", \\\n     " : "",
                            a, col, color[m], j ? 2 : 1);
                    if (row == 0 && a == 0 && j == 0) fprintf(f, "title '%s'", bl_eval_method_name(m));
                    else fputs("notitle", f);
                    any = 1;
                }
            }
            fputs(any ? "\n" : "set multiplot next\n", f);
        }
    }
    fputs("unset multiplot\n", f);
    if ((st = close_out(o, err)) != BL_OK) return st;
    return run_gnuplot(dir, "coverage.gp", "coverage.svg", note, err);
}

bl_status bl_eval_report(const bl_eval *ev, const char *out_dir, FILE *out, bl_error *err) {
    BL_CHECK_ARG(ev && out_dir, err, "bl_eval_report: NULL argument");
    table t;
    bl_status st = table_make(ev, &t, err);
    if (st != BL_OK) return st;
    if ((st = write_predictions(ev, out_dir, err)) == BL_OK && (st = write_summary(ev, &t, out_dir, err)) == BL_OK) {
        if (out) print_table(ev, &t, out);
        st = write_plot(ev, &t, out_dir, out, err);
        if (st == BL_OK) st = write_coverage_plot(ev, &t, out_dir, out, err);
    }
    free(t.c);
    return st;
}
