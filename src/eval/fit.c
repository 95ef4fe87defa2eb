/* fit.c — the harness's work: pre-training one Bellamy model per fold (on the other contexts only,
 * or on the pre-training file in the cross-environment case) and calibrating its intervals as
 * bl_pretrain does, then, on a pool of threads, fitting every method on every fit group's training
 * runs and predicting each of its splits' test runs and every scale-out of its context (the decisions'
 * candidates), Bellamy's with its model's own intervals.
 *
 * Threads: each worker takes the next fit group from a shared counter and writes only that group's
 * splits, so the results do not depend on the thread count; fine-tuning copies the shared, const
 * fold model (bl_finetune), so workers never write shared state. A fit's seed is derived from the
 * seed and its training rows, so a split file read back gives the same predictions.
 *
 * Not here: drawing splits (eval.c), the cross-context intervals and the decisions (interval.c),
 * statistics (report.c).
 */
#include "eval.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "baselines/baselines.h"
#include "model/calib.h"
#include "model/model_internal.h" /* the ranks: bl_ranks_mine, bl_ranks_gather */
#include "common/error.h"
#include "common/rng.h"
#include "common/str.h"

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- pre-training ------------------------------------------------------------------------------ */

/* The model cache's file of one search of fold f (po: its settings and seed, numbers: its encoding).
 * Everything that decides the fold model is in the name: the data file, its schema ("sc", a hash of
 * the schema files), the encoding, the fold — which contexts fold f holds follows from the harness's
 * seed (ev->o.seed, "fs"), the fold count and --fold-by — and the search's settings and seed ("s"; a
 * member's, which differs from the harness's). */
static void cache_name(char *out, size_t cap, const bl_eval *ev, const bl_eval_algo *a, const bl_dataset *src, int f,
                       const bl_pretrain_opts *po, int numbers) {
    snprintf(out, cap, "%s/%s-%016llx-sc%016llx%s%s%s%s%s-%s-k%d-fs%llu-f%d-s%llu-t%d-e%ld-g%ld-r%d-a%d-b%d-v%g-ts%d%s%s.h5",
             ev->o.model_cache, a->name, (unsigned long long)src->data_hash, (unsigned long long)a->schema_hash,
             ev->o.totals_per_machine ? "-pm" : "",
             numbers == BL_ENC_NUMBERS_LOG     ? "-numlog"
             : numbers == BL_ENC_NUMBERS_RANGE ? "-numrange"
             : numbers == BL_ENC_NUMBERS_BOTH  ? "-numboth"
                                               : "",
             ev->o.fold_by ? "-by-" : "", ev->o.fold_by ? ev->o.fold_by : "", po->val_split == BL_VAL_GROUPS ? "-vgroups" : "",
             a->pre_ds ? "cross" : "kfold", a->n_folds, (unsigned long long)ev->o.seed, f, (unsigned long long)po->seed,
             po->trials, po->epochs, po->grace, po->reduction, po->avg_span, po->batch, po->val_fraction, po->target_scaling,
             po->per_row_dropout == 2 ? (po->refit ? "-hybrid-refit" : "-hybrid")
             : po->per_row_dropout && po->refit ? "-rowdrop-refit" : po->per_row_dropout ? "-rowdrop"
             : po->refit ? "-refit" : "", bl_pretrain_precision(po) == BL_PRECISION_F32 ? "-f32" : "");
}

/* The cache file of fold f's model as it is evaluated: its M searches assembled (the first search's
 * name, the members and their encoding) and calibrated. Files of searches alone (cache_name, as every
 * harness before the calibration wrote them) carry no calibration and serve only as searches, so an
 * old cache never passes for a calibrated fold model. "cal2k5d4-ft…": the calibration's version, its runs
 * and draws per context (calib.h) and a hash of the fine-tuning options it used; a change to the
 * calibration must change this tag. */
static void fold_cache_name(char *out, size_t cap, const bl_eval *ev, const bl_eval_algo *a, const bl_dataset *src,
                            int f, int M) {
    cache_name(out, cap, ev, a, src, f, &ev->o.pre, ev->o.numbers);
    const size_t len = strlen(out);
    if (len < 3) return;
    /* the calibration fine-tunes as the harness does: its options are part of the name */
    const bl_finetune_opts *ft = &ev->o.ft;
    const unsigned ftag = (unsigned)(bl_mix64((uint64_t)ft->max_epochs * 1000003u ^ (uint64_t)ft->patience * 7919u ^
                                              (uint64_t)ft->cv_epochs * 104729u ^ (uint64_t)ft->fixed_epochs * 31u ^
                                              (uint64_t)ft->stop_cv * 2u ^ (uint64_t)ft->guard * 5u ^
                                              (uint64_t)ft->unfreeze_f * 11u ^ (uint64_t)ft->cv_folds * 13u ^
                                              (uint64_t)llround(ft->stop_mae * 1e6) ^
                                              (uint64_t)llround(ft->stop_rel * 1e9) << 20) & 0xffffffu);
    snprintf(out + len - 3, cap - (len - 3), "-m%d-cal2k%dd%d-ft%06x.h5", M, BL_CALIB_KMAX, BL_CALIB_DRAWS, ftag);
}

bl_status bl_eval_pretrain(bl_eval *ev, bl_error *err) {
    if (!(ev->o.methods & (1u << BL_EVAL_BELLAMY))) return BL_OK;
    for (size_t ai = 0; ai < ev->n_algos; ai++) {
        bl_eval_algo *a = &ev->algos[ai];
        for (int f = 0; f < a->n_folds; f++) {
            int needed = 0;
            for (size_t i = 0; i < ev->n_splits && !needed; i++)
                needed = ev->splits[i].algo == ai && a->ctx_fold[ev->splits[i].context] == f;
            const int K = ev->o.ensemble;
            if (!needed || a->fold_model[f * K]) continue;
            bl_dataset *train = NULL;
            const bl_dataset *src = a->pre_ds;
            bl_status st = BL_OK;
            if (!src) { /* every row of the contexts outside fold f */
                size_t *rows = malloc(a->ds->n_rows * sizeof *rows), nr = 0;
                if (!rows) return bl_seterr(err, BL_ENOMEM, "out of memory");
                for (size_t r = 0; r < a->ds->n_rows; r++)
                    if (a->ctx_fold[a->ds->context[r]] != f) rows[nr++] = r;
                st = nr ? bl_dataset_subset(a->ds, rows, nr, &train, err)
                        : bl_seterr(err, BL_EINVAL, "%s: fold %d leaves no other context to pre-train on", a->name, f + 1);
                free(rows);
                if (st != BL_OK) return st;
                src = train;
            }
            a->fold_rows[f] = src->n_rows;
            a->fold_contexts[f] = src->n_contexts;
            /* members: the K best trials of one search, or (ensemble_seeds) the winners of K searches
             * with seeds seed, seed + 1, ... */
            /* An ensemble model (pre.members > 1, the library default) is assembled here from the
             * single-network searches with seeds seed, seed + 1, ... exactly as bl_pretrain builds it
             * (tests/test_model.c checks that equality), so each search is cached on its own. */
            const int M = K == 1 && !ev->o.ensemble_seeds ? ev->o.pre.members : 1;
            /* One model per fold (K = 1) is the model a user gets from bl_pretrain, which ends by
             * calibrating its intervals on the contexts the searches held out: so here. --ensemble
             * combines K networks in the harness, which no model file does: no intervals. */
            const int calibrate = K == 1;
            char calname[4096] = "";
            if (calibrate && ev->o.model_cache) {
                fold_cache_name(calname, sizeof calname, ev, a, src, f, M);
                bl_model *cm = NULL;
                if (access(calname, R_OK) == 0) {
                    if (bl_model_load(calname, NULL, &cm, NULL) == BL_OK && cm->calib.known) {
                        a->fold_model[f] = cm;
                        a->fold_seconds[f] = NAN;
                        if (ev->o.log) fprintf(ev->o.log, "%s: fold %d/%d from %s\n", a->name, f + 1, a->n_folds, calname);
                        bl_dataset_free(train);
                        continue;
                    }
                    /* not a calibrated fold model (or unreadable): made again below, and replaced */
                    bl_model_free(cm);
                    if (unlink(calname) != 0) {
                        bl_dataset_free(train);
                        return bl_seterr(err, BL_EIO, "%s: cannot replace this cache file: %s", calname, strerror(errno));
                    }
                }
            }
            if (ev->o.log) {
                fprintf(ev->o.log, "%s: pre-training fold %d/%d on %zu rows of %zu contexts (%d trials, %ld epochs, %d threads)...\n",
                        a->name, f + 1, a->n_folds, src->n_rows, src->n_contexts, ev->o.pre.trials, ev->o.pre.epochs,
                        ev->o.pre.threads);
                fflush(ev->o.log);
            }
            const int S = ev->o.ensemble_seeds ? K : M, KL = ev->o.ensemble_seeds ? 1 : K;
            bl_model *parts[BL_MODEL_MEMBERS_MAX] = {NULL};
            double fold_t0 = now_s();
            int trained = 0;
            /* numbers in both encodings (as bl_pretrain does it): member 2i reads bits, 2i + 1 the log
             * magnitude, both from the search with seed + i, each on the data encoded its way */
            const int both = ev->o.numbers == BL_ENC_NUMBERS_BOTH && M > 1;
            bl_dataset *enc_src[2] = {NULL, NULL};
            if (both) {
                st = bl_dataset_with_numbers(src, BL_ENC_NUMBERS_BINARY, &enc_src[0], err);
                if (!st) st = bl_dataset_with_numbers(src, BL_ENC_NUMBERS_LOG, &enc_src[1], err);
                if (st) {
                    bl_dataset_free(enc_src[0]);
                    bl_dataset_free(train);
                    return st;
                }
            }
            for (int sj = 0; sj < S; sj++) {
                bl_pretrain_opts pos = ev->o.pre;
                pos.seed += (uint64_t)(both ? sj / 2 : sj);
                pos.members = 1;
                const bl_dataset *msrc = both ? enc_src[sj & 1] : src;
                const int numbers = both ? (sj & 1 ? BL_ENC_NUMBERS_LOG : BL_ENC_NUMBERS_BINARY) : ev->o.numbers;
                const bl_pretrain_opts *po = &pos;
                bl_model **dst = M > 1 ? &parts[sj] : &a->fold_model[f * K + sj];
                double t0 = now_s();
                char cache[4096] = "";
                int top = 0; /* the cache file holds ranked members m0, m1, ... */
                if (ev->o.model_cache) {
                    cache_name(cache, sizeof cache, ev, a, src, f, po, numbers);
                    /* K > 1: the members live in their own file, named m0, m1, ...; a file kept for a
                     * larger ensemble serves a smaller one (the members are ranked), even K = 1 */
                    {
                        size_t len = strlen(cache);
                        char plain[4096];
                        memcpy(plain, cache, len + 1);
                        char *tail = cache + len - 3;
                        for (int k2 = 27; k2 >= (KL > 1 ? KL : 2); k2--) {
                            snprintf(tail, sizeof cache - (len - 3), "-top%d.h5", k2);
                            if (access(cache, R_OK) == 0) { top = 1; break; }
                        }
                        if (!top && KL > 1) { snprintf(tail, sizeof cache - (len - 3), "-top%d.h5", KL); top = 1; }
                        if (!top) memcpy(cache, plain, len + 1);
                    }
                    int loaded = access(cache, R_OK) == 0;
                    for (int j = 0; j < KL && loaded; j++) {
                        char nm[32];
                        snprintf(nm, sizeof nm, "m%d", j);
                        loaded = bl_model_load(cache, top ? nm : NULL, &dst[j], NULL) == BL_OK;
                    }
                    if (!loaded)
                        for (int j = 0; j < KL; j++) {
                            bl_model_free(dst[j]);
                            dst[j] = NULL;
                        }
                    if (loaded) {
                        a->fold_seconds[f] = NAN;
                        if (ev->o.log) fprintf(ev->o.log, "%s: fold %d/%d from %s\n", a->name, f + 1, a->n_folds, cache);
                        continue;
                    }
                }
                st = bl_pretrain_top(msrc, NULL, po, KL, dst, err);
                a->fold_seconds[f] = now_s() - t0;
                trained = 1;
                for (int j = 0; j < KL && st == BL_OK && cache[0]; j++) {
                    bl_model *mj = dst[j];
                    char nm[32];
                    snprintf(nm, sizeof nm, "m%d", j);
                    if (top) {
                        char *dup = bl_strdup(nm);
                        if (!dup) { st = bl_seterr(err, BL_ENOMEM, "out of memory"); break; }
                        free(mj->name);
                        mj->name = dup;
                    }
                    st = bl_model_save(mj, cache, err);
                }
                if (st != BL_OK) {
                    bl_dataset_free(train);
                    bl_dataset_free(enc_src[0]);
                    bl_dataset_free(enc_src[1]);
                    for (int j = 0; j < M; j++) bl_model_free(parts[j]);
                    return bl_prefixerr(err, "%s: pre-training fold %d", a->name, f + 1);
                }
                if (ev->o.log) {
                    const bl_model *m = dst[0];
                    fprintf(ev->o.log, "%s: fold %d/%d pre-trained in %.1f s (lr %g, dropout %g, wd %g, %lld epochs, val loss %.4g)\n",
                            a->name, f + 1, a->n_folds, a->fold_seconds[f], m->lr, m->dropout, m->weight_decay,
                            (long long)m->epochs, m->best_val_loss);
                    fflush(ev->o.log);
                }
            }
            bl_dataset_free(enc_src[0]);
            bl_dataset_free(enc_src[1]);
            if (M > 1) {
                bl_status st2 = BL_OK;
                for (int j = 0; j < M && !st2; j++)
                    if (!parts[j]) st2 = bl_seterr(err, BL_EINTERNAL, "%s: fold %d: member %d missing", a->name, f + 1, j);
                if (!st2 && both) parts[0]->enc.numbers = BL_ENC_NUMBERS_BOTH; /* member 0 reads bits */
                if (!st2) st2 = bl_model_add_members(parts[0], (const bl_model *const *)(parts + 1), M - 1, err);
                for (int j = 1; j < M; j++) bl_model_free(parts[j]);
                if (st2) {
                    bl_model_free(parts[0]);
                    bl_dataset_free(train);
                    return bl_prefixerr(err, "%s: pre-training fold %d", a->name, f + 1);
                }
                a->fold_model[f * K] = parts[0];
            }
            if (calibrate) { /* as bl_pretrain: on the data it was pre-trained on, with its options */
                bl_model *fm = a->fold_model[f];
                bl_pretrain_opts pc = ev->o.pre;
                pc.members = M;
                pc.calib_ft = &ev->o.ft; /* calibrated for the fine-tuning evaluated */
                if (ev->o.log) {
                    fprintf(ev->o.log, "%s: fold %d/%d: calibrating intervals...\n", a->name, f + 1, a->n_folds);
                    fflush(ev->o.log);
                }
                st = bl_calib_fit(fm, src, &pc, err);
                if (st == BL_OK && calname[0]) st = bl_model_save(fm, calname, err);
                if (st != BL_OK) {
                    bl_dataset_free(train);
                    return bl_prefixerr(err, "%s: calibrating fold %d", a->name, f + 1);
                }
                if (ev->o.log) {
                    fprintf(ev->o.log, "%s: fold %d/%d calibrated on %lld held-out contexts in %.1f s\n", a->name, f + 1,
                            a->n_folds, (long long)fm->calib.contexts, fm->calib.seconds);
                    fflush(ev->o.log);
                }
                trained = 1;
            }
            /* the fold's wall time when any work was done here (a search or the calibration; NaN: the
             * whole fold model from the cache) */
            a->fold_seconds[f] = trained ? now_s() - fold_t0 : NAN;
            bl_dataset_free(train);
        }
    }
    return BL_OK;
}

/* ---- fitting ----------------------------------------------------------------------------------- */

typedef struct pool {
    bl_eval        *ev;
    pthread_mutex_t lock;
    size_t          next, done;
    int             failed;
    bl_error        err;       /* the first failure */
    double          t0;
} pool;

/* The points a fit group predicts: its splits' test runs (first ns), then every candidate of its grid
 * (nx), each as a ds row (its context term) and a scale-out. */
typedef struct points {
    size_t  ns, nx, n;
    size_t *row;
    double *x;
} points;

static bl_status points_make(const bl_eval *ev, size_t g, points *p, bl_error *err) {
    const bl_eval_grid *gd = &ev->grids[g];
    const bl_dataset *ds = ev->algos[ev->splits[ev->group_split[ev->group_first[g]]].algo].ds;
    p->ns = ev->group_first[g + 1] - ev->group_first[g];
    p->nx = gd->nx;
    p->n = p->ns + p->nx;
    p->row = malloc(p->n * sizeof *p->row);
    p->x = malloc(p->n * sizeof *p->x);
    if (!p->row || !p->x) {
        free(p->row);
        free(p->x);
        return bl_seterr(err, BL_ENOMEM, "out of memory");
    }
    for (size_t k = 0; k < p->ns; k++) p->row[k] = ev->splits[ev->group_split[ev->group_first[g] + k]].test;
    for (size_t i = 0; i < p->nx; i++) p->row[p->ns + i] = gd->row[i];
    for (size_t k = 0; k < p->n; k++) p->x[k] = ds->scale_out[p->row[k]];
    return BL_OK;
}

static void points_free(points *p) {
    free(p->row);
    free(p->x);
}

/* Model m's runtimes at the points, as bl_predict returns them (src/api/api.c): beyond the scale-outs
 * the model and its runs know (bl_model_support) no faster than linear scaling from the nearer end
 * (bl_model_floor; the ends predicted in the point's own context term, as the calibration scores). */
static bl_status predict_points(const bl_model *m, const bl_dataset *ds, const points *p, double *out, bl_error *err) {
    double lo, hi, ctx[BL_BNET_DIM_MAX]; /* bl_model_ctx_len ≤ BL_BNET_DIM_MAX */
    bl_model_support(m, &lo, &hi);
    const double ends[2] = {lo, hi};
    for (size_t k = 0; k < p->n; k++) {
        bl_status st = bl_model_context_row(m, ds, p->row[k], ctx, err);
        if (st == BL_OK) st = bl_model_predict(m, ctx, &p->x[k], 1, &out[k], err);
        double e[2] = {NAN, NAN}; /* the ends of the support, in the row's context: the rule of §P9 */
        if (st == BL_OK && (p->x[k] < lo || p->x[k] > hi)) st = bl_model_predict(m, ctx, ends, 2, e, err);
        if (st == BL_OK) out[k] = bl_model_finish(m, p->x[k], out[k], e[0], e[1]);
        if (st != BL_OK) return st;
    }
    return BL_OK;
}

/* The model's own intervals at the points (NAN without calibration, and at a failed prediction), and
 * known[i] for the grid's candidates: within 4 × the support, where bl_choose_scale_out may choose. */
static void model_intervals(const bl_model *m, const points *p, const double *pred, double *lo, double *hi,
                            unsigned char *known) {
    double slo, shi;
    bl_model_support(m, &slo, &shi);
    for (size_t i = 0; i < p->nx; i++) {
        const double x = p->x[p->ns + i];
        known[i] = x >= slo / BL_CALIB_SUPPORT && x <= shi * BL_CALIB_SUPPORT &&
                   pred[p->ns + i] >= bl_model_runtime_floor(m); /* never a stand-in, as the library */
    }
    for (size_t k = 0; k < p->n; k++) lo[k] = hi[k] = NAN;
    if (!m->calib.known) return;
    bl_interval_basis b;
    bl_interval_basis_of(m, 0, &b); /* asked about its own context: no mismatch */
    if (bl_model_interval(m, &b, BL_EVAL_COVERAGE, p->x, pred, p->n, lo, hi, NULL, NULL) != BL_OK) {
        for (size_t k = 0; k < p->n; k++) lo[k] = hi[k] = NAN;
        return;
    }
    for (size_t k = 0; k < p->n; k++)
        if (!(pred[k] > 0) || !isfinite(pred[k])) lo[k] = hi[k] = NAN;
}

/* Stores method's values at the points: the splits' predictions and intervals, the grid's candidates. */
static void store_points(bl_eval *ev, size_t g, int method, const points *p, const double *pred, const double *lo,
                         const double *hi, const unsigned char *known) {
    for (size_t k = 0; k < p->ns; k++) {
        bl_eval_split *s = &ev->splits[ev->group_split[ev->group_first[g] + k]];
        s->pred[method] = pred[k];
        s->lo[method] = lo ? lo[k] : NAN;
        s->hi[method] = hi ? hi[k] : NAN;
    }
    bl_eval_grid *gd = &ev->grids[g];
    for (size_t i = 0; i < p->nx; i++) {
        const size_t at = (size_t)method * gd->nx + i;
        gd->pred[at] = pred[p->ns + i];
        gd->lo[at] = lo ? lo[p->ns + i] : NAN;
        gd->hi[at] = hi ? hi[p->ns + i] : NAN;
        gd->known[at] = known ? known[i] : 1;
    }
}

static void set_fit_ms(bl_eval *ev, size_t g, int method, double ms) {
    for (size_t k = ev->group_first[g]; k < ev->group_first[g + 1]; k++) ev->splits[ev->group_split[k]].fit_ms[method] = ms;
}

static bl_status fit_group(bl_eval *ev, size_t g, bl_error *err) {
    const bl_eval_split *s0 = &ev->splits[ev->group_split[ev->group_first[g]]];
    const bl_eval_algo *a = &ev->algos[s0->algo];
    const bl_dataset *ds = a->ds;
    int n = s0->n;
    double x[BL_EVAL_MAX_N], y[BL_EVAL_MAX_N];
    uint64_t seed = bl_mix64(ev->o.seed ^ 0xf17f17f1ull);
    for (int i = 0; i < n; i++) {
        x[i] = ds->scale_out[s0->train[i]];
        y[i] = ds->runtime_s[s0->train[i]];
        seed = bl_mix64(seed ^ (uint64_t)ds->src_row[s0->train[i]]);
    }
    unsigned methods = ev->o.methods;
    bl_status st = BL_OK;
    double t0;

    if (methods & (1u << BL_EVAL_FLOOR)) { /* the median of the test run's repetitions (eval.h) */
        for (size_t k = ev->group_first[g]; k < ev->group_first[g + 1]; k++) {
            bl_eval_split *s = &ev->splits[ev->group_split[k]];
            double rep[64];
            size_t m = 0;
            for (size_t r = 0; r < ds->n_rows && m < 64; r++)
                if (r != s->test && ds->context[r] == ds->context[s->test] && ds->scale_out[r] == ds->scale_out[s->test])
                    rep[m++] = ds->runtime_s[r];
            for (size_t i = 1; i < m; i++) /* insertion sort: a handful of repetitions */
                for (size_t j = i; j > 0 && rep[j - 1] > rep[j]; j--) {
                    double t = rep[j];
                    rep[j] = rep[j - 1];
                    rep[j - 1] = t;
                }
            /* no repetition: no reference (NAN, which the report leaves out rather than counting a failure) */
            s->pred[BL_EVAL_FLOOR] = m == 0 ? NAN : m % 2 ? rep[m / 2] : 0.5 * (rep[m / 2 - 1] + rep[m / 2]);
            s->fit_ms[BL_EVAL_FLOOR] = 0.0;
        }
    }

    points P;
    if ((st = points_make(ev, g, &P, err)) != BL_OK) return st;
    const size_t np = P.n;
    double *buf = malloc(3 * np * sizeof *buf);
    unsigned char *known = malloc(P.nx ? P.nx : 1);
    if (!buf || !known) {
        free(buf);
        free(known);
        points_free(&P);
        return bl_seterr(err, BL_ENOMEM, "out of memory");
    }
    double *pred = buf, *lo = buf + np, *hi = buf + 2 * np;

    if (methods & (1u << BL_EVAL_ERNEST)) {
        bl_ernest em;
        t0 = now_s();
        st = bl_ernest_fit(x, y, n, &em, err);
        set_fit_ms(ev, g, BL_EVAL_ERNEST, 1e3 * (now_s() - t0));
        if (st != BL_OK) {
            bl_prefixerr(err, "split %s, ernest", s0->id);
            goto out;
        }
        for (size_t k = 0; k < np; k++) pred[k] = bl_ernest_predict(&em, P.x[k]);
        store_points(ev, g, BL_EVAL_ERNEST, &P, pred, NULL, NULL, NULL); /* intervals: interval.c */
    }
    if (methods & (1u << BL_EVAL_BELL)) {
        bl_bell bm;
        t0 = now_s();
        st = bl_bell_fit(x, y, n, &bm, err);
        set_fit_ms(ev, g, BL_EVAL_BELL, 1e3 * (now_s() - t0));
        if (st != BL_OK) {
            bl_prefixerr(err, "split %s, bell", s0->id);
            goto out;
        }
        for (size_t k = 0; k < np; k++) pred[k] = bl_bell_predict(&bm, P.x[k]);
        bl_bell_free(&bm);
        store_points(ev, g, BL_EVAL_BELL, &P, pred, NULL, NULL, NULL);
    }
    bl_finetune_opts ft = ev->o.ft;
    ft.seed = seed;
    if (methods & (1u << BL_EVAL_BELLAMY)) {
        const int K = ev->o.ensemble;
        const int f = a->ctx_fold[s0->context];
        double *each = malloc(np * (size_t)K * sizeof *each); /* member j's at j·np + k */
        if (!each) {
            st = bl_seterr(err, BL_ENOMEM, "out of memory");
            goto out;
        }
        t0 = now_s();
        for (int j = 0; j < K && st == BL_OK; j++) {
            const bl_model *pre = a->fold_model[f * K + j];
            if (!pre) {
                st = bl_seterr(err, BL_EINTERNAL, "fold model missing");
                break;
            }
            bl_model *m = NULL;
            st = bl_finetune(pre, ds, s0->train, (size_t)n, &ft, &m, err);
            if (st == BL_OK) st = predict_points(m, ds, &P, each + (size_t)j * np, err);
            /* K = 1, the fold model (what bl_pretrain gives a user): its own calibrated intervals;
             * --ensemble combines K networks here, which no model file does, so it has none */
            if (st == BL_OK && K == 1) model_intervals(m, &P, each, lo, hi, known);
            if (st == BL_OK && K > 1 && j == 0) { /* the candidates' support, for the decisions */
                model_intervals(m, &P, each, lo, hi, known);
                for (size_t k = 0; k < np; k++) lo[k] = hi[k] = NAN;
            }
            bl_model_free(m);
        }
        if (st != BL_OK) {
            free(each);
            bl_prefixerr(err, "split %s, bellamy", s0->id);
            goto out;
        }
        for (size_t k = 0; k < np; k++) {
            double v = 0.0, p[32];
            if (K == 1) v = each[k];
            else if (ev->o.ensemble_agg == 1) { /* median */
                for (int i = 0; i < K; i++) p[i] = each[(size_t)i * np + k];
                for (int i = 1; i < K; i++)
                    for (int j2 = i; j2 > 0 && p[j2 - 1] > p[j2]; j2--) { double t = p[j2]; p[j2] = p[j2 - 1]; p[j2 - 1] = t; }
                v = K % 2 ? p[K / 2] : 0.5 * (p[K / 2 - 1] + p[K / 2]);
            } else if (ev->o.ensemble_agg == 2) {
                for (int i = 0; i < K; i++) v += log(each[(size_t)i * np + k] > 1e-9 ? each[(size_t)i * np + k] : 1e-9);
                v = exp(v / K);
            } else {
                for (int i = 0; i < K; i++) v += each[(size_t)i * np + k];
                v /= K;
            }
            pred[k] = v;
        }
        free(each);
        set_fit_ms(ev, g, BL_EVAL_BELLAMY, 1e3 * (now_s() - t0));
        store_points(ev, g, BL_EVAL_BELLAMY, &P, pred, lo, hi, known);
    }
    if (methods & (1u << BL_EVAL_SCRATCH)) {
        bl_dataset *runs = NULL;
        bl_model *fresh = NULL, *m = NULL;
        t0 = now_s();
        /* a fresh model sees only the n runs: its scaler and target scale come from them */
        st = bl_dataset_subset(ds, s0->train, (size_t)n, &runs, err);
        if (st == BL_OK) st = bl_model_new_untrained(runs, NULL, ev->o.target_scaling, seed, &fresh, err);
        if (st == BL_OK) st = bl_finetune(fresh, runs, NULL, runs->n_rows, &ft, &m, err);
        set_fit_ms(ev, g, BL_EVAL_SCRATCH, 1e3 * (now_s() - t0));
        if (st == BL_OK) st = predict_points(m, ds, &P, pred, err);
        if (st != BL_OK) bl_prefixerr(err, "split %s, bellamy-scratch", s0->id);
        /* no pre-training, so no calibration of its own: cross-context intervals as the baselines' */
        else store_points(ev, g, BL_EVAL_SCRATCH, &P, pred, NULL, NULL, NULL);
        bl_model_free(m);
        bl_model_free(fresh);
        bl_dataset_free(runs);
    }
out:
    free(buf);
    free(known);
    points_free(&P);
    return st;
}

static void *worker(void *arg) {
    pool *p = arg;
    bl_eval *ev = p->ev;
    for (;;) {
        pthread_mutex_lock(&p->lock);
        size_t g = p->next++;
        int stop = p->failed || g >= ev->n_groups;
        pthread_mutex_unlock(&p->lock);
        if (stop) break;
        bl_error e;
        bl_clearerr(&e);
        /* over ranks, group g is fitted by rank g mod K alone (exchange_fits) */
        bl_status st = bl_ranks_mine(&ev->o.pre, 0, g) ? fit_group(ev, g, &e) : BL_OK;
        pthread_mutex_lock(&p->lock);
        if (st != BL_OK && !p->failed) {
            p->failed = 1;
            p->err = e;
        }
        p->done++;
        /* about twenty progress lines per run */
        size_t step = ev->n_groups / 20 ? ev->n_groups / 20 : 1;
        if (ev->o.log && (p->done % step == 0 || p->done == ev->n_groups)) {
            fprintf(ev->o.log, "fitting: %zu/%zu split groups (%.1f s)\n", p->done, ev->n_groups, now_s() - p->t0);
            fflush(ev->o.log);
        }
        pthread_mutex_unlock(&p->lock);
    }
    return NULL;
}

/* Over ranks: every fit group's results, each from the rank that fitted it, into every rank's splits and
 * grids; a group that failed fails every rank with its message. One record per group, sized by the
 * largest group (every rank knows the groups' sizes: they come from the splits and grids alone). */
static bl_status exchange_fits(bl_eval *ev, int failed, const bl_error *first, bl_error *err) {
    const size_t M = BL_EVAL_N_METHODS, G = ev->n_groups;
    size_t ns_max = 0, nx_max = 0;
    for (size_t g = 0; g < G; g++) {
        size_t ns = ev->group_first[g + 1] - ev->group_first[g];
        if (ns > ns_max) ns_max = ns;
        if (ev->grids[g].nx > nx_max) nx_max = ev->grids[g].nx;
    }
    /* a record: status (8 bytes), message (256), then per split 4M doubles (pred, lo, hi, fit_ms), per candidate 3M doubles
     * and M known bytes */
    const size_t head = 8 + 256, dbl = ns_max * 4 * M + nx_max * 3 * M;
    const size_t rec = head + dbl * sizeof(double) + nx_max * M;
    unsigned char *all = calloc(G ? G : 1, rec);
    if (!all) return bl_seterr(err, BL_ENOMEM, "out of memory");
    for (size_t g = 0; g < G; g++) {
        if (!bl_ranks_mine(&ev->o.pre, 0, g)) continue;
        unsigned char *r = all + g * rec;
        int32_t st = failed ? (int32_t)first->status : 0;
        memcpy(r, &st, sizeof st);
        if (failed) snprintf((char *)r + 8, 256, "%.255s", first->message);
        double *d = (double *)(void *)(r + head);
        for (size_t k = ev->group_first[g]; k < ev->group_first[g + 1]; k++, d += 4 * M) {
            const bl_eval_split *sp = &ev->splits[ev->group_split[k]];
            memcpy(d, sp->pred, M * sizeof *d);
            memcpy(d + M, sp->lo, M * sizeof *d);
            memcpy(d + 2 * M, sp->hi, M * sizeof *d);
            memcpy(d + 3 * M, sp->fit_ms, M * sizeof *d);
        }
        const bl_eval_grid *gd = &ev->grids[g];
        d = (double *)(void *)(r + head) + ns_max * 4 * M;
        memcpy(d, gd->pred, M * gd->nx * sizeof *d);
        memcpy(d + M * nx_max, gd->lo, M * gd->nx * sizeof *d);
        memcpy(d + 2 * M * nx_max, gd->hi, M * gd->nx * sizeof *d);
        memcpy(r + head + dbl * sizeof(double), gd->known, M * gd->nx);
    }
    bl_status st = head % sizeof(double) ? bl_seterr(err, BL_EINTERNAL, "fit record misaligned")
                                         : bl_ranks_gather(&ev->o.pre, all, 0, G, rec, "fits", err);
    for (size_t g = 0; g < G && !st; g++) {
        const unsigned char *r = all + g * rec;
        int32_t gst;
        memcpy(&gst, r, sizeof gst);
        if (gst) {
            st = bl_seterr(err, (bl_status)gst, "%s", (const char *)r + 8);
            break;
        }
        if (bl_ranks_mine(&ev->o.pre, 0, g)) continue;
        const double *d = (const double *)(const void *)(r + head);
        for (size_t k = ev->group_first[g]; k < ev->group_first[g + 1]; k++, d += 4 * M) {
            bl_eval_split *sp = &ev->splits[ev->group_split[k]];
            memcpy(sp->pred, d, M * sizeof *d);
            memcpy(sp->lo, d + M, M * sizeof *d);
            memcpy(sp->hi, d + 2 * M, M * sizeof *d);
            memcpy(sp->fit_ms, d + 3 * M, M * sizeof *d);
        }
        bl_eval_grid *gd = &ev->grids[g];
        d = (const double *)(const void *)(r + head) + ns_max * 4 * M;
        memcpy(gd->pred, d, M * gd->nx * sizeof *d);
        memcpy(gd->lo, d + M * nx_max, M * gd->nx * sizeof *d);
        memcpy(gd->hi, d + 2 * M * nx_max, M * gd->nx * sizeof *d);
        memcpy(gd->known, r + head + dbl * sizeof(double), M * gd->nx);
    }
    free(all);
    return st;
}

bl_status bl_eval_fit(bl_eval *ev, bl_error *err) {
    BL_CHECK_ARG(ev && ev->n_splits > 0, err, "no splits to fit");
    bl_status gst = bl_eval_grids_make(ev, err);
    if (gst != BL_OK) return gst;
    pool p;
    memset(&p, 0, sizeof p);
    p.ev = ev;
    p.t0 = now_s();
    if (pthread_mutex_init(&p.lock, NULL) != 0) return bl_seterr(err, BL_EINTERNAL, "pthread_mutex_init failed");
    int nt = ev->o.threads;
    if ((size_t)nt > ev->n_groups) nt = (int)ev->n_groups;
    pthread_t *th = malloc((size_t)nt * sizeof *th);
    if (!th) { pthread_mutex_destroy(&p.lock); return bl_seterr(err, BL_ENOMEM, "out of memory"); }
    int started = 0;
    for (; started < nt; started++)
        if (pthread_create(&th[started], NULL, worker, &p) != 0) break;
    if (started == 0) worker(&p); /* no thread could start: work on this one */
    for (int i = 0; i < started; i++) pthread_join(th[i], NULL);
    free(th);
    pthread_mutex_destroy(&p.lock);
    ev->fit_wall_s = now_s() - p.t0;
    if (bl_ranks_multi(&ev->o.pre)) { /* every rank reaches the exchange, failed or not */
        bl_status xst = exchange_fits(ev, p.failed, &p.err, err);
        if (xst != BL_OK) return xst;
    }
    if (p.failed) {
        if (err) *err = p.err;
        return p.err.status;
    }
    bl_status st = bl_eval_intervals(ev, err); /* the cross-context ones need every split's prediction */
    return st == BL_OK ? bl_eval_decide(ev, err) : st;
}
