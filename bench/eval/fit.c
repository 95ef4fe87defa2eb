/* fit.c — the harness's work: pre-training one Bellamy model per fold (on the other contexts only,
 * or on the pre-training file in the cross-environment case), then, on a pool of threads, fitting
 * every method on every fit group's training runs and predicting each of its splits' test runs.
 *
 * Threads: each worker takes the next fit group from a shared counter and writes only that group's
 * splits, so the results do not depend on the thread count; fine-tuning copies the shared, const
 * fold model (bl_finetune), so workers never write shared state. A fit's seed is derived from the
 * seed and its training rows, so a split file read back gives the same predictions.
 *
 * Not here: drawing splits (eval.c), statistics (report.c).
 */
#include "eval.h"

#include <math.h>
#include <pthread.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "baselines/baselines.h"
#include "common/error.h"
#include "common/rng.h"
#include "common/str.h"

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- pre-training ------------------------------------------------------------------------------ */

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
            if (ev->o.log) {
                fprintf(ev->o.log, "%s: pre-training fold %d/%d on %zu rows of %zu contexts (%d trials, %ld epochs, %d threads)...\n",
                        a->name, f + 1, a->n_folds, src->n_rows, src->n_contexts, ev->o.pre.trials, ev->o.pre.epochs,
                        ev->o.pre.threads);
                fflush(ev->o.log);
            }
            /* members: the K best trials of one search, or (ensemble_seeds) the winners of K searches
             * with seeds seed, seed + 1, ... */
            /* An ensemble model (pre.members > 1, the library default) is assembled here from the
             * single-network searches with seeds seed, seed + 1, ... exactly as bl_pretrain builds it
             * (tests/test_model.c checks that equality), so each search is cached on its own. */
            const int M = K == 1 && !ev->o.ensemble_seeds ? ev->o.pre.members : 1;
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
                    /* Everything that decides the fold model is in the name: the data file, its
                     * schema ("sc", a hash of the schema files), the encoding, the fold — which contexts fold f holds follows from the harness's seed
                     * (ev->o.seed, "fs"), the fold count and --fold-by — and the search's settings
                     * and seed ("s"; a member's, which differs from the harness's) */
                    snprintf(cache, sizeof cache, "%s/%s-%016llx-sc%016llx%s%s%s%s%s-%s-k%d-fs%llu-f%d-s%llu-t%d-e%ld-g%ld-r%d-b%d-v%g-ts%d%s.h5",
                             ev->o.model_cache, a->name, (unsigned long long)src->data_hash,
                             (unsigned long long)a->schema_hash,
                             ev->o.totals_per_machine ? "-pm" : "", numbers == BL_ENC_NUMBERS_LOG ? "-numlog" : numbers == BL_ENC_NUMBERS_RANGE ? "-numrange" : "", ev->o.fold_by ? "-by-" : "", ev->o.fold_by ? ev->o.fold_by : "", po->val_split == BL_VAL_GROUPS ? "-vgroups" : "",
                             a->pre_ds ? "cross" : "kfold", a->n_folds, (unsigned long long)ev->o.seed, f,
                             (unsigned long long)po->seed, po->trials,
                             po->epochs, po->grace, po->reduction, po->batch, po->val_fraction, po->target_scaling,
                             po->per_row_dropout == 2 ? (po->refit ? "-hybrid-refit" : "-hybrid")
                             : po->per_row_dropout && po->refit ? "-rowdrop-refit" : po->per_row_dropout ? "-rowdrop"
                             : po->refit ? "-refit" : "");
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
            /* the fold's wall time when any member was trained here (NaN: every member from the cache) */
            a->fold_seconds[f] = trained ? now_s() - fold_t0 : NAN;
            bl_dataset_free(train);
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
                    return bl_prefixerr(err, "%s: pre-training fold %d", a->name, f + 1);
                }
                a->fold_model[f * K] = parts[0];
            }
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

/* Predicts each split of group g with a fine-tuned model. */
static bl_status predict_model(bl_eval *ev, size_t g, int method, const bl_model *m, bl_error *err) {
    double ctx[BL_BNET_DIM_MAX]; /* bl_model_ctx_len ≤ BL_BNET_DIM_MAX */
    for (size_t k = ev->group_first[g]; k < ev->group_first[g + 1]; k++) {
        bl_eval_split *s = &ev->splits[ev->group_split[k]];
        const bl_dataset *ds = ev->algos[s->algo].ds;
        bl_status st = bl_model_context_row(m, ds, s->test, ctx, err);
        if (st == BL_OK) st = bl_model_predict(m, ctx, &ds->scale_out[s->test], 1, &s->pred[method], err);
        if (st != BL_OK) return bl_prefixerr(err, "split %s, %s", s->id, bl_eval_method_name(method));
    }
    return BL_OK;
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

    if (methods & (1u << BL_EVAL_ERNEST)) {
        bl_ernest em;
        t0 = now_s();
        st = bl_ernest_fit(x, y, n, &em, err);
        set_fit_ms(ev, g, BL_EVAL_ERNEST, 1e3 * (now_s() - t0));
        if (st != BL_OK) return bl_prefixerr(err, "split %s, ernest", s0->id);
        for (size_t k = ev->group_first[g]; k < ev->group_first[g + 1]; k++) {
            bl_eval_split *s = &ev->splits[ev->group_split[k]];
            s->pred[BL_EVAL_ERNEST] = bl_ernest_predict(&em, ds->scale_out[s->test]);
        }
    }
    if (methods & (1u << BL_EVAL_BELL)) {
        bl_bell bm;
        t0 = now_s();
        st = bl_bell_fit(x, y, n, &bm, err);
        set_fit_ms(ev, g, BL_EVAL_BELL, 1e3 * (now_s() - t0));
        if (st != BL_OK) return bl_prefixerr(err, "split %s, bell", s0->id);
        for (size_t k = ev->group_first[g]; k < ev->group_first[g + 1]; k++) {
            bl_eval_split *s = &ev->splits[ev->group_split[k]];
            s->pred[BL_EVAL_BELL] = bl_bell_predict(&bm, ds->scale_out[s->test]);
        }
        bl_bell_free(&bm);
    }
    bl_finetune_opts ft = ev->o.ft;
    ft.seed = seed;
    if (methods & (1u << BL_EVAL_BELLAMY)) {
        const int K = ev->o.ensemble;
        const int f = a->ctx_fold[s0->context];
        double preds[64][32];
        size_t ns = ev->group_first[g + 1] - ev->group_first[g];
        if (ns > 64 || K > 32) return bl_seterr(err, BL_EUNSUPPORTED, "split group too large for the ensemble");
        t0 = now_s();
        for (int j = 0; j < K; j++) {
            const bl_model *pre = a->fold_model[f * K + j];
            if (!pre) return bl_seterr(err, BL_EINTERNAL, "split %s: fold model missing", s0->id);
            bl_model *m = NULL;
            st = bl_finetune(pre, ds, s0->train, (size_t)n, &ft, &m, err);
            if (st != BL_OK) return bl_prefixerr(err, "split %s, bellamy", s0->id);
            st = predict_model(ev, g, BL_EVAL_BELLAMY, m, err);
            bl_model_free(m);
            if (st != BL_OK) return st;
            for (size_t k = 0; k < ns; k++) preds[k][j] = ev->splits[ev->group_split[ev->group_first[g] + k]].pred[BL_EVAL_BELLAMY];
        }
        for (size_t k = 0; k < ns && K > 1; k++) {
            double *p = preds[k], v = 0.0;
            if (ev->o.ensemble_agg == 1) { /* median */
                for (int i = 1; i < K; i++)
                    for (int j2 = i; j2 > 0 && p[j2 - 1] > p[j2]; j2--) { double t = p[j2]; p[j2] = p[j2 - 1]; p[j2 - 1] = t; }
                v = K % 2 ? p[K / 2] : 0.5 * (p[K / 2 - 1] + p[K / 2]);
            } else if (ev->o.ensemble_agg == 2) {
                for (int i = 0; i < K; i++) v += log(p[i] > 1e-9 ? p[i] : 1e-9);
                v = exp(v / K);
            } else {
                for (int i = 0; i < K; i++) v += p[i];
                v /= K;
            }
            ev->splits[ev->group_split[ev->group_first[g] + k]].pred[BL_EVAL_BELLAMY] = v;
        }
        set_fit_ms(ev, g, BL_EVAL_BELLAMY, 1e3 * (now_s() - t0));
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
        if (st == BL_OK) st = predict_model(ev, g, BL_EVAL_SCRATCH, m, err);
        else bl_prefixerr(err, "split %s, bellamy-scratch", s0->id);
        bl_model_free(m);
        bl_model_free(fresh);
        bl_dataset_free(runs);
        if (st != BL_OK) return st;
    }
    return BL_OK;
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
        bl_status st = fit_group(ev, g, &e);
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

bl_status bl_eval_fit(bl_eval *ev, bl_error *err) {
    BL_CHECK_ARG(ev && ev->n_splits > 0, err, "no splits to fit");
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
    if (p.failed) {
        if (err) *err = p.err;
        return p.err.status;
    }
    return BL_OK;
}
