/* tgroup_fixture.h — what test_tgroup.c and test_gpu.c share: training/validation views of a data set
 * (synthetic or C3O), the search grid's trial configurations, the per-trial reference training written
 * exactly as pretrain.c's run_epoch, and deviation measures. Static inline functions, included by each test.
 */
#ifndef BL_TESTS_TGROUP_FIXTURE_H
#define BL_TESTS_TGROUP_FIXTURE_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/synth.h"
#include "model/model_internal.h"
#include "nn/tgroup.h"

typedef struct fixture {
    bl_dataset  *ds;
    bl_model    *m;
    bl_vbuf      tr, va;
    int          has_val;
    bl_bnet_dims d;
} fixture;

/* Views of ds: the rows of the first n_val_ctx contexts validate, the rest train. */
static inline int fixture_views(fixture *f, size_t n_val_ctx, bl_error *e) {
    if (bl_model_from_dataset(f->ds, NULL, NULL, &f->m, e)) return 1;
    if (bl_model_fit_scalers(f->m, f->ds, BL_TARGET_SECONDS, e)) return 1;
    size_t *tr = malloc(f->ds->n_rows * sizeof *tr), *va = malloc(f->ds->n_rows * sizeof *va), nt = 0, nv = 0;
    for (size_t r = 0; r < f->ds->n_rows; r++) {
        if (f->ds->context[r] < n_val_ctx) va[nv++] = r;
        else tr[nt++] = r;
    }
    int bad = bl_vbuf_build(f->m, f->ds, tr, nt, &f->tr, e) != BL_OK;
    f->has_val = nv > 0;
    if (!bad && nv) bad = bl_vbuf_build(f->m, f->ds, va, nv, &f->va, e) != BL_OK;
    free(tr);
    free(va);
    f->d = f->m->net.d;
    return bad;
}

static inline int fixture_synth(fixture *f, size_t n_contexts, size_t reps, size_t n_val_ctx) {
    memset(f, 0, sizeof *f);
    bl_synth_config c;
    bl_synth_config_default(&c);
    c.n_contexts = n_contexts;
    c.reps = reps;
    bl_synth_corpus *corp;
    bl_error e;
    if (bl_synth_generate(&c, &corp, &e)) return 1;
    bl_status st = bl_synth_dataset(corp, NULL, &f->ds, &e);
    bl_synth_free(corp);
    if (st) return 1;
    return fixture_views(f, n_val_ctx, &e);
}

/* The C3O table of one algorithm (dir from bl_test_c3o_dir, schemas from the source tree). */
static inline int fixture_c3o(fixture *f, const char *dir, const char *algo, const char *schema_path, size_t n_val_ctx) {
    memset(f, 0, sizeof *f);
    char data[4200];
    snprintf(data, sizeof data, "%s/%s.tsv", dir, algo);
    bl_error e;
    if (bl_dataset_load(data, schema_path, 0, NULL, &f->ds, &e)) {
        fprintf(stderr, "fixture_c3o: %s\n", e.message);
        return 1;
    }
    return fixture_views(f, n_val_ctx, &e);
}

static inline void fixture_free(fixture *f) {
    bl_vbuf_free(&f->tr);
    if (f->has_val) bl_vbuf_free(&f->va);
    bl_model_free(f->m);
    bl_dataset_free(f->ds);
}

/* T configurations from pretrain's default grid, in a fixed spread (every dropout, lr and wd occurs);
 * seeds as pretrain.c with o->seed = seed. */
static inline void grid_configs(bl_tgroup_trial *cfg, int T, uint64_t seed) {
    const double dr[3] = {0.05, 0.1, 0.2}, lr[3] = {0.1, 0.01, 0.001}, wd[3] = {0.01, 0.001, 0.0001};
    for (int i = 0; i < T; i++) {
        const int gpt = (i * 7 + 3) % 27;
        cfg[i].dropout = dr[gpt / 9];
        cfg[i].lr = lr[(gpt / 3) % 3];
        cfg[i].wd = wd[gpt % 3];
        cfg[i].seed = seed * 0x9E3779B97F4A7C15ull + (uint64_t)i + 1;
    }
}

/* ---- the per-trial reference: pretrain.c's trial and run_epoch, verbatim in substance ---------- */

typedef struct ref_trial {
    double    dropout;
    bl_bnet   net;
    bl_rng    rng;
    bl_adam   opt;
    bl_bwork *w, *wv;
    size_t   *order, *val_idx;
    double   *best;
    double    best_val, last_train, last_val;
    long      epochs_done, best_epoch;
} ref_trial;

static inline int ref_init(ref_trial *t, const fixture *f, const bl_tgroup_trial *c, int batch) {
    memset(t, 0, sizeof *t);
    t->dropout = c->dropout;
    t->best_val = INFINITY;
    bl_rng_seed(&t->rng, c->seed);
    bl_error e;
    if (bl_bnet_init(&t->net, &f->d, &t->rng, &e) || bl_adam_init(&t->opt, c->lr, c->wd, &e)) return 1;
    const size_t n = f->tr.v.n_rows, B = (size_t)batch < n ? (size_t)batch : n;
    if (bl_bwork_new(&t->net, &f->tr.v, B, &t->w, &e)) return 1;
    if (f->has_val && bl_bwork_new(&t->net, &f->va.v, f->va.v.n_rows, &t->wv, &e)) return 1;
    t->order = malloc(n * sizeof *t->order);
    t->best = malloc(t->net.P.n * sizeof *t->best);
    t->val_idx = malloc((f->has_val ? f->va.v.n_rows : 1) * sizeof *t->val_idx);
    for (size_t k = 0; k < n; k++) t->order[k] = k;
    for (size_t k = 0; f->has_val && k < f->va.v.n_rows; k++) t->val_idx[k] = k;
    memcpy(t->best, t->net.P.param, t->net.P.n * sizeof *t->best);
    return 0;
}

static inline void ref_free(ref_trial *t) {
    bl_bnet_free(&t->net);
    bl_bwork_free(t->w);
    bl_bwork_free(t->wv);
    free(t->order);
    free(t->best);
    free(t->val_idx);
}

static inline int ref_epoch(ref_trial *t, const fixture *f, int batch, int per_row_dropout) {
    const size_t n = f->tr.v.n_rows, B = (size_t)batch;
    for (size_t i = n - 1; i > 0; i--) {
        size_t j = (size_t)bl_rng_int(&t->rng, i + 1);
        size_t tmp = t->order[i];
        t->order[i] = t->order[j];
        t->order[j] = tmp;
    }
    bl_bpass ps = {.training = 1, .dropout = t->dropout, .want_grad = 1, .recon = 1, .rng = &t->rng,
                   .per_row_dropout = per_row_dropout};
    double sum = 0.0;
    bl_error e;
    for (size_t i0 = 0; i0 < n; i0 += B) {
        size_t k = n - i0 < B ? n - i0 : B;
        bl_params_zero_grad(&t->net.P);
        bl_bloss L;
        if (bl_bnet_pass(&t->net, &f->tr.v, t->order + i0, k, &ps, t->w, NULL, &L, &e)) return 1;
        sum += L.total * (double)k;
        if (bl_adam_step(&t->opt, &t->net.P, &e)) return 1;
    }
    t->last_train = sum / (double)n;
    t->epochs_done++;
    double val = t->last_train;
    if (f->has_val) {
        bl_bpass pv = {.training = 0, .dropout = 0.0, .want_grad = 0, .recon = 1, .rng = NULL};
        bl_bloss L;
        if (bl_bnet_pass(&t->net, &f->va.v, t->val_idx, f->va.v.n_rows, &pv, t->wv, NULL, &L, &e)) return 1;
        val = L.total;
    }
    if (!isfinite(val)) val = INFINITY;
    t->last_val = val;
    if (val < t->best_val) {
        t->best_val = val;
        t->best_epoch = t->epochs_done;
        memcpy(t->best, t->net.P.param, t->net.P.n * sizeof(double));
    }
    return 0;
}

/* ---- a search: pretrain.c's synchronous successive halving over a group ----------------------------
 * Every alive trial trains to the rung (grace, grace·reduction, … up to epochs); then the better
 * ceil(alive / reduction) by best validation loss (ties: lower index) go on. Returns the winner (lowest
 * best validation loss, lower index on ties) or −1 on an error (message in e). */
static inline int search_run(bl_tgroup *g, long epochs, long grace, int reduction, bl_error *e) {
    const int T = bl_tgroup_trials(g);
    uint8_t alive[BL_TGROUP_MAX_TRIALS];
    for (int i = 0; i < T; i++) alive[i] = 1;
    int n_alive = T;
    long rung = grace < epochs ? grace : epochs, done = 0;
    for (;;) {
        for (; done < rung; done++)
            if (bl_tgroup_epoch(g, alive, e)) return -1;
        if (rung >= epochs) break;
        const int keep = (n_alive + reduction - 1) / reduction;
        for (int k = 0; k < n_alive - keep; k++) { /* drop the worst alive trial, keep times */
            int worst = -1;
            double wv = -INFINITY;
            for (int i = 0; i < T; i++) {
                if (!alive[i]) continue;
                bl_tgroup_stat st;
                bl_tgroup_stat_get(g, i, &st);
                if (st.best_val >= wv) { /* ties: the higher index goes first */
                    wv = st.best_val;
                    worst = i;
                }
            }
            alive[worst] = 0;
        }
        n_alive = keep;
        rung = rung * reduction < epochs ? rung * reduction : epochs;
    }
    int best = -1;
    double bv = INFINITY;
    for (int i = 0; i < T; i++) {
        bl_tgroup_stat st;
        bl_tgroup_stat_get(g, i, &st);
        if (best < 0 || st.best_val < bv) {
            best = i;
            bv = st.best_val;
        }
    }
    return best;
}

/* ---- deviations -------------------------------------------------------------------------------- */

/* Relative deviation of two numbers: |a − b| / max(|a|, |b|), 0 when both are 0 or both infinite alike. */
static inline double rel_dev(double a, double b) {
    if (a == b) return 0.0;
    const double m = fmax(fabs(a), fabs(b));
    return isfinite(m) ? fabs(a - b) / m : INFINITY;
}

/* Largest deviation of a parameter vector from a reference, relative to the reference's largest
 * magnitude within each block of the network (a weight matrix or bias vector): rounding differences
 * scale with the block, while single entries near zero would make an element-wise ratio meaningless. */
static inline double params_dev(const bl_bnet *ref, const double *x) {
    double worst = 0.0;
    for (int v = 0; v < ref->P.n_views; v++) {
        const bl_param_view *pv = &ref->P.views[v];
        const size_t n = (size_t)pv->rows * (size_t)pv->cols;
        const double *a = ref->P.param + pv->offset, *b = x + pv->offset;
        double scale = 0.0, dev = 0.0;
        for (size_t i = 0; i < n; i++) {
            scale = fmax(scale, fabs(a[i]));
            dev = fmax(dev, fabs(a[i] - b[i]));
        }
        if (!isfinite(dev)) return INFINITY;
        if (dev > 0.0) worst = fmax(worst, scale > 0.0 ? dev / scale : INFINITY);
    }
    return worst;
}

#endif /* BL_TESTS_TGROUP_FIXTURE_H */
