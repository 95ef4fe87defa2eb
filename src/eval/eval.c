/* eval.c — the harness's data: options, algorithms (data files with their pre-training folds), and
 * the splits: drawing them by the protocol, writing them, reading them back with every field checked.
 *
 * Protocol (the Bellamy authors'): for each evaluated context and each n = 1..max_n, up to K splits
 * per kind. A split's training runs are n distinct scale-outs of the context, one random repetition
 * each; its test run is at a scale-out that is not a training one, strictly inside the training range
 * (interpolation) or outside it (extrapolation). Each (context, n, kind) cell has its own generator,
 * seeded from the seed, the algorithm's name and the cell, so adding contexts or n values never
 * changes the other cells' splits. Identical splits are not drawn twice.
 *
 * Not here: fitting (fit.c), statistics and files of results (report.c), option parsing (eval_cli.c).
 */
#include "eval.h"

#include <errno.h>
#include <xxhash.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/file.h"
#include "common/str.h"
#include "common/rng.h"

static const char *const method_names[BL_EVAL_N_METHODS] = { "bellamy", "bellamy-scratch", "ernest", "bell",
                                                                      "noise-floor" };

const char *bl_eval_method_name(int m) {
    return m >= 0 && m < BL_EVAL_N_METHODS ? method_names[m] : NULL;
}

int bl_eval_method_index(const char *name) {
    for (int m = 0; m < BL_EVAL_N_METHODS; m++)
        if (name && strcmp(name, method_names[m]) == 0) return m;
    return -1;
}

const char *bl_eval_kind_name(int kind) { return kind == BL_EVAL_INTERP ? "interp" : "extrap"; }

void bl_eval_opts_default(bl_eval_opts *o) {
    memset(o, 0, sizeof *o);
    o->seed = 1;
    o->threads = 1;
    o->contexts = 6;
    o->splits_per_cell = 24;
    o->max_n = 5;
    o->folds = 3;
    o->methods = (1u << BL_EVAL_N_METHODS) - 1;
    bl_pretrain_opts_default(&o->pre);
    bl_finetune_opts_default(&o->ft);
    o->target_scaling = o->pre.target_scaling;
    o->ensemble = 1;
    o->log = NULL;
}

void bl_eval_opts_quick(bl_eval_opts *o) {
    o->contexts = 2;
    o->splits_per_cell = 2;
    o->pre.epochs = 200;
    o->pre.grace = 100;
    o->pre.trials = 2;
    o->ft.max_epochs = 500;
    o->ft.patience = 200;
}


static uint64_t hash_name(const char *s) {
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return h;
}

bl_status bl_eval_init(bl_eval *ev, const bl_eval_opts *o, bl_error *err) {
    BL_CHECK_ARG(ev && o, err, "bl_eval_init: NULL argument");
    memset(ev, 0, sizeof *ev);
    ev->o = *o;
    BL_CHECK_ARG(o->max_n >= 1 && o->max_n <= BL_EVAL_MAX_N, err, "n must be 1..%d, not %d", BL_EVAL_MAX_N, o->max_n);
    BL_CHECK_ARG(o->folds >= 2, err, "--folds must be at least 2, not %d", o->folds);
    BL_CHECK_ARG(o->threads >= 1, err, "--threads must be at least 1");
    BL_CHECK_ARG(o->splits_per_cell >= 1, err, "--splits-per-cell must be at least 1");
    BL_CHECK_ARG(o->methods != 0, err, "no method selected");
    return BL_OK;
}

static void algo_free(bl_eval_algo *a, int ens) {
    free(a->name);
    free(a->data_path);
    free(a->pre_path);
    bl_dataset_free(a->ds);
    bl_dataset_free(a->pre_ds);
    free(a->row_of_src);
    free(a->ctx_fold);
    if (a->fold_model)
        for (int f = 0; f < a->n_folds * ens; f++) bl_model_free(a->fold_model[f]);
    free(a->fold_model);
    free(a->fold_seconds);
    free(a->fold_rows);
    free(a->fold_contexts);
}

void bl_eval_free(bl_eval *ev) {
    if (!ev) return;
    for (size_t i = 0; i < ev->n_algos; i++) algo_free(&ev->algos[i], ev->o.ensemble > 0 ? ev->o.ensemble : 1);
    free(ev->algos);
    for (size_t i = 0; i < ev->n_splits; i++) free(ev->splits[i].id);
    free(ev->splits);
    bl_eval_grids_free(ev); /* uses n_groups */
    free(ev->group_first);
    free(ev->group_split);
    memset(ev, 0, sizeof *ev);
}

/* Folds over contexts: a seeded permutation, then round robin, so fold sizes differ by at most one.
 * With fold_by, the same over the property's distinct values (contexts follow their value). */
static bl_status assign_folds(const bl_eval *ev, bl_eval_algo *a, bl_error *err) {
    size_t nc = a->ds->n_contexts;
    a->ctx_fold = calloc(nc ? nc : 1, sizeof *a->ctx_fold);
    if (!a->ctx_fold) return bl_seterr(err, BL_ENOMEM, "out of memory");
    if (a->pre_ds) {
        a->n_folds = 1;
    } else if (ev->o.fold_by) {
        const bl_dataset *ds = a->ds;
        long p = bl_dataset_find_prop(ds, ev->o.fold_by);
        if (p < 0) return bl_seterr(err, BL_EINVAL, "--fold-by %s: %s has no such property", ev->o.fold_by, a->data_path);
        const bl_dataset_prop *pr = &ds->props[p];
        if (pr->cluster_total)
            return bl_seterr(err, BL_EINVAL, "--fold-by %s: a cluster total changes with the scale-out, not with the context",
                             ev->o.fold_by);
        /* only essential properties define a context; an optional one may vary inside a context, and
         * a held-out value could then reach another fold's pre-training */
        if (!pr->essential)
            return bl_seterr(err, BL_EINVAL, "--fold-by %s: an optional property does not define the contexts (give an "
                             "essential one)", ev->o.fold_by);
        /* the values the contexts have, in a seeded order */
        int32_t *fold_of = malloc(pr->n_values * sizeof *fold_of);
        size_t *perm = malloc(pr->n_values * sizeof *perm), nv = 0;
        if (!fold_of || !perm) {
            free(fold_of);
            free(perm);
            return bl_seterr(err, BL_ENOMEM, "out of memory");
        }
        for (size_t v = 0; v < pr->n_values; v++) fold_of[v] = -1;
        for (size_t c = 0; c < nc; c++) {
            uint32_t v = pr->row_value[ds->contexts[c].rows[0]];
            if (fold_of[v] < 0) {
                fold_of[v] = 0;
                perm[nv++] = v;
            }
        }
        if (nv < 2) {
            free(fold_of);
            free(perm);
            return bl_seterr(err, BL_EINVAL, "--fold-by %s: every context of %s has the same value, so no fold could leave it out",
                             ev->o.fold_by, a->data_path);
        }
        bl_rng rng;
        bl_rng_seed(&rng, bl_mix64(ev->o.seed ^ hash_name(a->name) ^ 0xf01df01dull));
        for (size_t i = nv; i > 1; i--) {
            size_t j = (size_t)bl_rng_int(&rng, i);
            size_t t = perm[i - 1]; perm[i - 1] = perm[j]; perm[j] = t;
        }
        a->n_folds = (size_t)ev->o.folds < nv ? ev->o.folds : (int)nv;
        for (size_t i = 0; i < nv; i++) fold_of[perm[i]] = (int32_t)(i % (size_t)a->n_folds);
        for (size_t c = 0; c < nc; c++) a->ctx_fold[c] = fold_of[pr->row_value[ds->contexts[c].rows[0]]];
        free(fold_of);
        free(perm);
    } else {
        a->n_folds = (size_t)ev->o.folds < nc ? ev->o.folds : (int)nc;
        size_t *perm = malloc(nc * sizeof *perm);
        if (!perm) return bl_seterr(err, BL_ENOMEM, "out of memory");
        for (size_t i = 0; i < nc; i++) perm[i] = i;
        bl_rng rng;
        bl_rng_seed(&rng, bl_mix64(ev->o.seed ^ hash_name(a->name) ^ 0xf01df01dull));
        for (size_t i = nc; i > 1; i--) {
            size_t j = (size_t)bl_rng_int(&rng, i);
            size_t t = perm[i - 1]; perm[i - 1] = perm[j]; perm[j] = t;
        }
        for (size_t i = 0; i < nc; i++) a->ctx_fold[perm[i]] = (int)(i % (size_t)a->n_folds);
        free(perm);
    }
    size_t nf = (size_t)a->n_folds;
    a->fold_model = calloc(nf * (size_t)(ev->o.ensemble > 0 ? ev->o.ensemble : 1), sizeof *a->fold_model);
    a->fold_seconds = malloc(nf * sizeof *a->fold_seconds);
    a->fold_rows = calloc(nf, sizeof *a->fold_rows);
    a->fold_contexts = calloc(nf, sizeof *a->fold_contexts);
    if (!a->fold_model || !a->fold_seconds || !a->fold_rows || !a->fold_contexts)
        return bl_seterr(err, BL_ENOMEM, "out of memory");
    for (size_t f = 0; f < nf; f++) a->fold_seconds[f] = NAN;
    return BL_OK;
}

/* XXH64 of a file's bytes, folded into h (the model cache's names must change with the schema: a unit
 * or a column changed there gives other models from the same data file). */
static bl_status hash_file(const char *path, uint64_t *h, bl_error *err) {
    FILE *f = fopen(path, "rb");
    if (!f) return bl_seterr(err, BL_EIO, "%s: cannot open: %s", path, strerror(errno));
    XXH64_state_t *st = XXH64_createState();
    if (!st) {
        fclose(f);
        return bl_seterr(err, BL_ENOMEM, "out of memory");
    }
    XXH64_reset(st, *h);
    unsigned char buf[65536];
    size_t got;
    while ((got = fread(buf, 1, sizeof buf, f)) > 0) XXH64_update(st, buf, got);
    const int bad = ferror(f);
    fclose(f);
    *h = XXH64_digest(st);
    XXH64_freeState(st);
    return bad ? bl_seterr(err, BL_EIO, "%s: read error", path) : BL_OK;
}

bl_status bl_eval_add_algo(bl_eval *ev, const char *name, const char *data_path, const char *schema_path,
                           const char *pre_data, const char *pre_schema, bl_error *err) {
    BL_CHECK_ARG(ev && name && *name && data_path && schema_path, err, "bl_eval_add_algo: NULL argument");
    BL_CHECK_ARG(!pre_data == !pre_schema, err, "the pre-training data and its schema go together");
    for (size_t i = 0; i < ev->n_algos; i++)
        if (strcmp(ev->algos[i].name, name) == 0)
            return bl_seterr(err, BL_EINVAL, "algorithm '%s' given twice", name);
    bl_eval_algo *grown = realloc(ev->algos, (ev->n_algos + 1) * sizeof *grown);
    if (!grown) return bl_seterr(err, BL_ENOMEM, "out of memory");
    ev->algos = grown;
    bl_eval_algo *a = &ev->algos[ev->n_algos];
    memset(a, 0, sizeof *a);
    ev->n_algos++; /* from here algo_free cleans up whatever is set */
    a->name = bl_strdup(name);
    a->data_path = bl_strdup(data_path);
    if (!a->name || !a->data_path) return bl_seterr(err, BL_ENOMEM, "out of memory");
    bl_encode_settings es;
    bl_encode_settings_default(&es);
    es.totals_per_machine = (uint32_t)ev->o.totals_per_machine;
    es.numbers = (uint32_t)ev->o.numbers;
    bl_status st = bl_dataset_load(data_path, schema_path, 0, &es, &a->ds, err);
    if (st != BL_OK) return st;
    if ((st = hash_file(schema_path, &a->schema_hash, err)) != BL_OK) return st;
    if (pre_schema && (st = hash_file(pre_schema, &a->schema_hash, err)) != BL_OK) return st;
    if (a->ds->n_rows == 0) return bl_seterr(err, BL_EINVAL, "%s: no rows", data_path);
    if (pre_data) {
        if (!(a->pre_path = bl_strdup(pre_data))) return bl_seterr(err, BL_ENOMEM, "out of memory");
        if ((st = bl_dataset_load(pre_data, pre_schema, 0, &es, &a->pre_ds, err)) != BL_OK) return st;
    }
    size_t max_src = 0;
    for (size_t r = 0; r < a->ds->n_rows; r++)
        if (a->ds->src_row[r] > max_src) max_src = a->ds->src_row[r];
    a->n_src = max_src + 1;
    a->row_of_src = malloc(a->n_src * sizeof *a->row_of_src);
    if (!a->row_of_src) return bl_seterr(err, BL_ENOMEM, "out of memory");
    for (size_t i = 0; i < a->n_src; i++) a->row_of_src[i] = SIZE_MAX;
    for (size_t r = 0; r < a->ds->n_rows; r++) a->row_of_src[a->ds->src_row[r]] = r;
    return assign_folds(ev, a, err);
}

/* ---- splits ------------------------------------------------------------------------------------ */

static bl_status add_split(bl_eval *ev, const char *id, size_t algo, int n, int kind, const size_t *train,
                           size_t test, bl_error *err) {
    if (ev->n_splits == ev->cap_splits) {
        size_t cap = ev->cap_splits ? 2 * ev->cap_splits : 256;
        bl_eval_split *g = realloc(ev->splits, cap * sizeof *g);
        if (!g) return bl_seterr(err, BL_ENOMEM, "out of memory");
        ev->splits = g;
        ev->cap_splits = cap;
    }
    bl_eval_split *s = &ev->splits[ev->n_splits];
    memset(s, 0, sizeof *s);
    if (!(s->id = bl_strdup(id))) return bl_seterr(err, BL_ENOMEM, "out of memory");
    s->algo = algo;
    s->context = ev->algos[algo].ds->context[test];
    s->n = n;
    s->kind = kind;
    memcpy(s->train, train, (size_t)n * sizeof *train);
    s->test = test;
    for (int m = 0; m < BL_EVAL_N_METHODS; m++) s->pred[m] = s->fit_ms[m] = s->lo[m] = s->hi[m] = NAN;
    ev->n_splits++;
    return BL_OK;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Distinct scale-outs of context c (ascending) and, for each, its rows. xs: [nx]; rows_at[i] lists
 * the rows at xs[i] as offsets [first[i], first[i+1]) into rows. */
typedef struct ctx_grid {
    size_t  nx;
    double *xs;
    size_t *first; /* [nx + 1] */
    size_t *rows;  /* [n_rows of the context] */
} ctx_grid;

static void grid_free(ctx_grid *g) { free(g->xs); free(g->first); free(g->rows); }

static bl_status grid_make(const bl_dataset *ds, size_t c, ctx_grid *g, bl_error *err) {
    const bl_context *cx = &ds->contexts[c];
    memset(g, 0, sizeof *g);
    size_t m = cx->n_rows;
    g->xs = malloc(m * sizeof *g->xs);
    g->first = malloc((m + 1) * sizeof *g->first);
    g->rows = malloc(m * sizeof *g->rows);
    if (!g->xs || !g->first || !g->rows) { grid_free(g); return bl_seterr(err, BL_ENOMEM, "out of memory"); }
    for (size_t i = 0; i < m; i++) g->xs[i] = ds->scale_out[cx->rows[i]];
    qsort(g->xs, m, sizeof *g->xs, cmp_double);
    size_t nx = 0;
    for (size_t i = 0; i < m; i++)
        if (nx == 0 || g->xs[i] != g->xs[nx - 1]) g->xs[nx++] = g->xs[i];
    g->nx = nx;
    size_t k = 0;
    for (size_t i = 0; i < nx; i++) { /* rows in file order within each scale-out */
        g->first[i] = k;
        for (size_t j = 0; j < m; j++)
            if (ds->scale_out[cx->rows[j]] == g->xs[i]) g->rows[k++] = cx->rows[j];
    }
    g->first[nx] = k;
    return BL_OK;
}

static int same_split(const bl_eval_split *s, const size_t *train, int n, size_t test) {
    if (s->n != n || s->test != test) return 0;
    for (int i = 0; i < n; i++)
        if (s->train[i] != train[i]) return 0;
    return 1;
}

/* Up to K splits of one (context, n, kind) cell by rejection sampling of scale-out sets. */
static bl_status draw_cell(bl_eval *ev, size_t ai, size_t c, const ctx_grid *g, int n, int kind, bl_error *err) {
    const bl_eval_algo *a = &ev->algos[ai];
    if ((size_t)n + 1 > g->nx) return BL_OK;             /* no scale-out left to test on */
    if (kind == BL_EVAL_INTERP && (n < 2 || g->nx < 3)) return BL_OK; /* nothing strictly inside */
    bl_rng rng;
    bl_rng_seed(&rng, bl_mix64(ev->o.seed ^ bl_mix64(hash_name(a->name) + 0x51u) ^
                            bl_mix64(((uint64_t)c << 20) ^ ((uint64_t)n << 4) ^ (uint64_t)kind)));
    size_t cell_start = ev->n_splits, got = 0;
    size_t K = ev->o.splits_per_cell;
    size_t *perm = malloc(g->nx * sizeof *perm), *cand = malloc(g->nx * sizeof *cand);
    if (!perm || !cand) { free(perm); free(cand); return bl_seterr(err, BL_ENOMEM, "out of memory"); }
    bl_status st = BL_OK;
    for (size_t attempt = 0; got < K && attempt < 200 * K + 200; attempt++) {
        for (size_t i = 0; i < g->nx; i++) perm[i] = i;
        for (int i = 0; i < n; i++) { /* partial Fisher–Yates: the first n are the chosen scale-outs */
            size_t j = (size_t)i + (size_t)bl_rng_int(&rng, g->nx - (size_t)i);
            size_t t = perm[i]; perm[i] = perm[j]; perm[j] = t;
        }
        /* sort the chosen n (insertion sort; n ≤ 16) so rows are listed by ascending scale-out */
        for (int i = 1; i < n; i++)
            for (int j = i; j > 0 && perm[j - 1] > perm[j]; j--) { size_t t = perm[j]; perm[j] = perm[j - 1]; perm[j - 1] = t; }
        size_t lo = perm[0], hi = perm[n - 1], nc = 0;
        for (size_t i = 0; i < g->nx; i++) {
            int in_train = 0;
            for (int j = 0; j < n; j++) in_train |= perm[j] == i;
            if (in_train) continue;
            int inside = i > lo && i < hi;
            if ((kind == BL_EVAL_INTERP) == inside) cand[nc++] = i;
        }
        if (nc == 0) continue;
        size_t train[BL_EVAL_MAX_N];
        for (int j = 0; j < n; j++) {
            size_t x = perm[j], cnt = g->first[x + 1] - g->first[x];
            train[j] = g->rows[g->first[x] + (size_t)bl_rng_int(&rng, cnt)];
        }
        size_t tx = cand[bl_rng_int(&rng, nc)], tcnt = g->first[tx + 1] - g->first[tx];
        size_t test = g->rows[g->first[tx] + (size_t)bl_rng_int(&rng, tcnt)];
        int dup = 0;
        for (size_t s = cell_start; s < ev->n_splits && !dup; s++) dup = same_split(&ev->splits[s], train, n, test);
        if (dup) continue;
        char id[256];
        snprintf(id, sizeof id, "%s-c%zu-n%d-%c%02zu", a->name, c, n, kind == BL_EVAL_INTERP ? 'i' : 'e', got);
        if ((st = add_split(ev, id, ai, n, kind, train, test, err)) != BL_OK) break;
        got++;
    }
    free(perm);
    free(cand);
    return st;
}

static bl_status make_groups(bl_eval *ev, bl_error *err);

bl_status bl_eval_draw_splits(bl_eval *ev, bl_error *err) {
    BL_CHECK_ARG(ev && ev->n_algos > 0, err, "no data to evaluate");
    for (size_t ai = 0; ai < ev->n_algos; ai++) {
        const bl_dataset *ds = ev->algos[ai].ds;
        /* eligible contexts: at least two distinct scale-outs (one to train on, one to test) */
        size_t nc = ds->n_contexts, ne = 0;
        size_t *elig = malloc(nc * sizeof *elig);
        if (!elig) return bl_seterr(err, BL_ENOMEM, "out of memory");
        for (size_t c = 0; c < nc; c++) {
            ctx_grid g;
            bl_status st = grid_make(ds, c, &g, err);
            if (st != BL_OK) { free(elig); return st; }
            if (g.nx >= 2) elig[ne++] = c;
            grid_free(&g);
        }
        /* the evaluated contexts: a seeded choice of K among the eligible ones, then in file order */
        size_t k = ev->o.contexts == 0 || ev->o.contexts > ne ? ne : ev->o.contexts;
        bl_rng rng;
        bl_rng_seed(&rng, bl_mix64(ev->o.seed ^ hash_name(ev->algos[ai].name) ^ 0xc0c0c0c0ull));
        for (size_t i = 0; i < k; i++) {
            size_t j = i + (size_t)bl_rng_int(&rng, ne - i);
            size_t t = elig[i]; elig[i] = elig[j]; elig[j] = t;
        }
        for (size_t i = 1; i < k; i++)
            for (size_t j = i; j > 0 && elig[j - 1] > elig[j]; j--) { size_t t = elig[j]; elig[j] = elig[j - 1]; elig[j - 1] = t; }
        for (size_t i = 0; i < k; i++) {
            ctx_grid g;
            bl_status st = grid_make(ds, elig[i], &g, err);
            for (int n = 1; st == BL_OK && n <= ev->o.max_n; n++)
                for (int kind = 0; st == BL_OK && kind < 2; kind++) st = draw_cell(ev, ai, elig[i], &g, n, kind, err);
            if (st == BL_OK || g.xs) grid_free(&g);
            if (st != BL_OK) { free(elig); return st; }
        }
        free(elig);
    }
    if (ev->n_splits == 0) {
        char files[600];
        size_t len = 0;
        files[0] = '\0';
        for (size_t ai = 0; ai < ev->n_algos && len < sizeof files - 1; ai++)
            len += (size_t)snprintf(files + len, sizeof files - len, "%s%s", ai ? ", " : "", ev->algos[ai].data_path);
        return bl_seterr(err, BL_EINVAL, "%s: no split could be drawn: every context needs runs at two or more distinct "
                         "scale-outs (give more runs, at other scale-outs)", files);
    }
    return make_groups(ev, err);
}

/* Context labels go into a TSV column: tabs and line breaks become spaces. */
static void put_field(FILE *f, const char *s) {
    for (; *s; s++) fputc(*s == '\t' || *s == '\n' || *s == '\r' ? ' ' : *s, f);
}

bl_status bl_eval_write_splits(const bl_eval *ev, const char *path, bl_error *err) {
    bl_file_out *o = NULL;
    bl_status st = bl_file_out_open(path, &o, err);
    FILE *f = st == BL_OK ? bl_file_out_stream(o, err) : NULL;
    if (!f) {
        bl_file_out_abort(o);
        return err ? err->status : BL_EIO;
    }
    fputs("split_id\talgorithm\tcontext\tn\tkind\ttrain_rows\ttest_row\n", f);
    for (size_t i = 0; i < ev->n_splits; i++) {
        const bl_eval_split *s = &ev->splits[i];
        const bl_eval_algo *a = &ev->algos[s->algo];
        fprintf(f, "%s\t%s\t", s->id, a->name);
        put_field(f, a->ds->contexts[s->context].label);
        fprintf(f, "\t%d\t%s\t", s->n, bl_eval_kind_name(s->kind));
        for (int j = 0; j < s->n; j++) fprintf(f, "%s%zu", j ? "," : "", a->ds->src_row[s->train[j]]);
        fprintf(f, "\t%zu\n", a->ds->src_row[s->test]);
    }
    return bl_file_out_commit(o, err);
}

/* A data-row index: decimal digits only. */
static int parse_index(const char *s, size_t len, size_t *out) {
    if (len == 0 || len > 18) return 0;
    size_t v = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9') return 0;
        v = v * 10 + (size_t)(s[i] - '0');
    }
    *out = v;
    return 1;
}

static bl_status row_of(const bl_eval_algo *a, const char *path, size_t line, const char *what, const char *s,
                        size_t len, size_t *out, bl_error *err) {
    size_t src;
    if (!parse_index(s, len, &src))
        return bl_seterr(err, BL_EFORMAT, "%s:%zu: %s '%.*s' is not a row number (0-based data row)", path, line,
                         what, (int)(len > 40 ? 40 : len), s);
    if (src >= a->n_src || a->row_of_src[src] == SIZE_MAX)
        return bl_seterr(err, BL_ERANGE, "%s:%zu: %s %zu is not a data row of %s (rows 0..%zu)", path, line, what, src,
                         a->data_path, a->n_src - 1);
    *out = a->row_of_src[src];
    return BL_OK;
}

static const char split_header[] = "split_id\talgorithm\tcontext\tn\tkind\ttrain_rows\ttest_row";

/* One line (without its line break) of a split file. */
static bl_status parse_split_line(bl_eval *ev, const char *path, size_t line, char *text, bl_error *err) {
    char *field[8];
    int nf = 0;
    for (char *p = text;; ) {
        char *tab = strchr(p, '\t');
        if (nf < 8) field[nf] = p;
        nf++;
        if (!tab) break;
        *tab = '\0';
        p = tab + 1;
    }
    if (nf != 7) return bl_seterr(err, BL_EFORMAT, "%s:%zu: %d fields, expected 7 (%s)", path, line, nf, "tab separated");
    if (!*field[0]) return bl_seterr(err, BL_EFORMAT, "%s:%zu: empty split_id", path, line);
    for (size_t i = 0; i < ev->n_splits; i++)
        if (strcmp(ev->splits[i].id, field[0]) == 0)
            return bl_seterr(err, BL_EFORMAT, "%s:%zu: split_id '%s' used twice", path, line, field[0]);
    size_t ai = ev->n_algos;
    for (size_t i = 0; i < ev->n_algos; i++)
        if (strcmp(ev->algos[i].name, field[1]) == 0) ai = i;
    if (ai == ev->n_algos) return bl_seterr(err, BL_EINVAL, "%s:%zu: unknown algorithm '%s' (no such data file loaded)", path, line, field[1]);
    const bl_eval_algo *a = &ev->algos[ai];
    size_t nval;
    if (!parse_index(field[3], strlen(field[3]), &nval) || nval < 1 || nval > BL_EVAL_MAX_N)
        return bl_seterr(err, BL_EFORMAT, "%s:%zu: n '%s' must be a whole number 1..%d", path, line, field[3], BL_EVAL_MAX_N);
    int n = (int)nval, kind;
    if (strcmp(field[4], "interp") == 0) kind = BL_EVAL_INTERP;
    else if (strcmp(field[4], "extrap") == 0) kind = BL_EVAL_EXTRAP;
    else return bl_seterr(err, BL_EFORMAT, "%s:%zu: kind '%s' must be interp or extrap", path, line, field[4]);
    size_t train[BL_EVAL_MAX_N];
    int nt = 0;
    for (char *p = field[5];; ) {
        char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (nt == n) return bl_seterr(err, BL_EFORMAT, "%s:%zu: more than n = %d train_rows", path, line, n);
        bl_status st = row_of(a, path, line, "train row", p, len, &train[nt], err);
        if (st != BL_OK) return st;
        for (int j = 0; j < nt; j++)
            if (train[j] == train[nt]) return bl_seterr(err, BL_EINVAL, "%s:%zu: train row %.*s listed twice", path, line, (int)len, p);
        nt++;
        if (!comma) break;
        p = comma + 1;
    }
    if (nt != n) return bl_seterr(err, BL_EFORMAT, "%s:%zu: %d train_rows but n = %d", path, line, nt, n);
    size_t test;
    bl_status st = row_of(a, path, line, "test row", field[6], strlen(field[6]), &test, err);
    if (st != BL_OK) return st;
    const bl_dataset *ds = a->ds;
    double lo = INFINITY, hi = -INFINITY, tx = ds->scale_out[test];
    for (int j = 0; j < n; j++) {
        if (train[j] == test) return bl_seterr(err, BL_EINVAL, "%s:%zu: the test row is also a train row", path, line);
        if (ds->context[train[j]] != ds->context[test])
            return bl_seterr(err, BL_EINVAL, "%s:%zu: train row %zu and test row %zu belong to different contexts", path,
                             line, ds->src_row[train[j]], ds->src_row[test]);
        if (ds->scale_out[train[j]] < lo) lo = ds->scale_out[train[j]];
        if (ds->scale_out[train[j]] > hi) hi = ds->scale_out[train[j]];
    }
    int inside = tx > lo && tx < hi;
    if ((kind == BL_EVAL_INTERP) != inside)
        return bl_seterr(err, BL_EINVAL, "%s:%zu: kind %s but the test scale-out %g is %s the training range [%g, %g]", path,
                         line, field[4], tx, inside ? "strictly inside" : "not strictly inside", lo, hi);
    return add_split(ev, field[0], ai, n, kind, train, test, err);
}

/* The split file open as f (path names it in messages). */
static bl_status read_splits_stream(bl_eval *ev, const char *path, FILE *f, bl_error *err) {
    char *buf = NULL;
    size_t cap = 0, line = 0;
    ssize_t len;
    bl_status st = BL_OK;
    int header = 0;
    while ((len = getline(&buf, &cap, f)) >= 0) {
        line++;
        while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\r')) buf[--len] = '\0';
        if ((size_t)len != strlen(buf)) { st = bl_seterr(err, BL_EFORMAT, "%s:%zu: NUL byte in line", path, line); break; }
        if (len == 0 || buf[0] == '#') continue; /* blank lines and comments */
        if (!header) {
            if (strcmp(buf, split_header) != 0) {
                st = bl_seterr(err, BL_EFORMAT, "%s:%zu: expected the header '%s' (tab separated)", path, line,
                               "split_id algorithm context n kind train_rows test_row");
                break;
            }
            header = 1;
            continue;
        }
        if ((st = parse_split_line(ev, path, line, buf, err)) != BL_OK) break;
    }
    if (st == BL_OK && ferror(f)) st = bl_seterr(err, BL_EIO, "%s: read error", path);
    if (st == BL_OK && !header) st = bl_seterr(err, BL_EFORMAT, "%s:%zu: empty split file (no header)", path, line + 1);
    if (st == BL_OK && ev->n_splits == 0) st = bl_seterr(err, BL_EFORMAT, "%s:%zu: no splits", path, line + 1);
    free(buf);
    return st == BL_OK ? make_groups(ev, err) : st;
}

bl_status bl_eval_read_splits(bl_eval *ev, const char *path, bl_error *err) {
    BL_CHECK_ARG(ev && path, err, "bl_eval_read_splits: NULL argument");
    FILE *f = fopen(path, "r");
    if (!f) return bl_seterr(err, BL_EIO, "%s: %s", path, strerror(errno));
    bl_status st = read_splits_stream(ev, path, f, err);
    fclose(f);
    return st;
}

bl_status bl_eval_read_splits_mem(bl_eval *ev, const char *name, const char *text, size_t len, bl_error *err) {
    BL_CHECK_ARG(ev && name && (text || len == 0), err, "bl_eval_read_splits_mem: NULL argument");
    if (len == 0) return bl_seterr(err, BL_EFORMAT, "%s:1: empty split file (no header)", name);
    FILE *f = fmemopen((void *)text, len, "r");
    if (!f) return bl_seterr(err, BL_ENOMEM, "%s: cannot read from memory: %s", name, strerror(errno));
    bl_status st = read_splits_stream(ev, name, f, err);
    fclose(f);
    return st;
}

/* ---- fit groups: splits with the same algorithm and training rows are fitted once -------------- */

static int cmp_split_ptr(const void *pa, const void *pb) {
    const bl_eval_split *a = *(const bl_eval_split *const *)pa, *b = *(const bl_eval_split *const *)pb;
    if (a->algo != b->algo) return a->algo < b->algo ? -1 : 1;
    if (a->n != b->n) return a->n < b->n ? -1 : 1;
    for (int i = 0; i < a->n; i++)
        if (a->train[i] != b->train[i]) return a->train[i] < b->train[i] ? -1 : 1;
    return (a > b) - (a < b); /* stable: file order within a group */
}

static bl_status make_groups(bl_eval *ev, bl_error *err) {
    size_t ns = ev->n_splits;
    const bl_eval_split **p = malloc(ns * sizeof *p);
    bl_eval_grids_free(ev); /* they follow the groups */
    free(ev->group_first);
    free(ev->group_split);
    ev->group_first = malloc((ns + 1) * sizeof *ev->group_first);
    ev->group_split = malloc(ns * sizeof *ev->group_split);
    if (!p || !ev->group_first || !ev->group_split) { free(p); return bl_seterr(err, BL_ENOMEM, "out of memory"); }
    for (size_t i = 0; i < ns; i++) p[i] = &ev->splits[i];
    qsort(p, ns, sizeof *p, cmp_split_ptr);
    size_t g = 0;
    for (size_t i = 0; i < ns; i++) {
        if (i == 0 || p[i - 1]->algo != p[i]->algo || p[i - 1]->n != p[i]->n ||
            memcmp(p[i - 1]->train, p[i]->train, (size_t)p[i]->n * sizeof p[i]->train[0]) != 0)
            ev->group_first[g++] = i;
        size_t si = (size_t)(p[i] - ev->splits);
        ev->group_split[i] = si;
        ev->splits[si].group = g - 1;
    }
    ev->group_first[g] = ns;
    ev->n_groups = g;
    free(p);
    return BL_OK;
}
