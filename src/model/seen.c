/* seen.c — the records of what a model's training and fine-tuning rows held (seen.h). */
#include "model/seen.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/str.h"

static void seen_free(bl_model_seen *s) {
    if (s->value)
        for (size_t k = 0; k < s->n; k++) free(s->value[k]);
    free(s->prop);
    free(s->value);
    free(s->count);
    free(s->distinct);
    free(s->per_machine);
    free(s->num_min);
    free(s->num_max);
    memset(s, 0, sizeof *s);
}

static void tuned_free(bl_model_tuned *t, size_t n_props) {
    if (t->context)
        for (size_t i = 0; i < n_props; i++) free(t->context[i]);
    free(t->context);
    free(t->fit_x);
    memset(t, 0, sizeof *t);
    t->disagreement = NAN;
}

/* The fit arrays (one block of 4 × n: x, y, prediction, prior) for n runs; 0 when out of memory. */
static int fit_alloc(bl_model_tuned *t, size_t n) {
    free(t->fit_x);
    t->fit_x = t->fit_y = t->fit_pred = t->fit_prior = NULL;
    t->n_fit = 0;
    if (!n) return 1;
    if (!(t->fit_x = malloc(4 * n * sizeof *t->fit_x))) return 0;
    t->fit_y = t->fit_x + n;
    t->fit_pred = t->fit_y + n;
    t->fit_prior = t->fit_pred + n;
    t->n_fit = n;
    return 1;
}

bl_status bl_model_tuned_set_fit(bl_model *m, const double *x, const double *y, const double *pred,
                                 const double *prior, size_t n, bl_error *err) {
    if (!m->tuned.known) return BL_OK;
    if (!fit_alloc(&m->tuned, n)) return bl_seterr(err, BL_ENOMEM, "out of memory");
    memcpy(m->tuned.fit_x, x, n * sizeof *x);
    memcpy(m->tuned.fit_y, y, n * sizeof *y);
    memcpy(m->tuned.fit_pred, pred, n * sizeof *pred);
    memcpy(m->tuned.fit_prior, prior, n * sizeof *prior);
    /* D: the fit's root-mean-square log error plus the spread of the prior's log errors (its shape's
     * disagreement with the runs, whatever their level); runs at one scale-out have no shape, only a
     * level: then the prior's mean log error (a run far from what pre-training expects: another
     * environment, where one run cannot tell the network's shape is still right) */
    double ss = 0, mp = 0, sp = 0;
    size_t np = 0;
    for (size_t i = 0; i < n; i++) {
        const double e = log(pred[i] / y[i]);
        ss += isfinite(e) ? e * e : 0;
        const double q = log(prior[i] / y[i]);
        if (isfinite(q)) { mp += q; np++; }
    }
    mp = np ? mp / (double)np : 0;
    for (size_t i = 0; i < n; i++) {
        const double q = log(prior[i] / y[i]);
        if (isfinite(q)) sp += (q - mp) * (q - mp);
    }
    int one_scale_out = 1;
    for (size_t i = 1; i < n; i++) one_scale_out &= x[i] == x[0];
    const double shape = one_scale_out ? fabs(mp) : np > 1 ? sqrt(sp / (double)(np - 1)) : 0;
    m->tuned.disagreement = (n ? sqrt(ss / (double)n) : 0) + shape;
    for (size_t i = 0; i < n; i++) /* a fit that cannot predict its own runs vouches for nothing */
        if (!(pred[i] > 0) || !isfinite(pred[i])) m->tuned.disagreement = INFINITY;
    return BL_OK;
}

void bl_model_records_free(bl_model *m) {
    if (!m) return;
    seen_free(&m->seen);
    tuned_free(&m->tuned, m->n_props);
    bl_calib_free(&m->calib);
    free(m->member_epochs);
    m->member_epochs = NULL;
}

/* The value of data-set property j in row r as a model request gives it: canonical text, and per
 * machine for a cluster total (the data records totals unless encoded per machine). */
static const char *value_of(const bl_dataset *ds, size_t j, size_t r, char *buf, size_t cap) {
    const bl_dataset_prop *p = &ds->props[j];
    const char *v = p->values[p->row_value[r]];
    if (p->kind != BL_PROP_NUMBER || !p->cluster_total || ds->settings.totals_per_machine) return v;
    const double x = ds->scale_out[r];
    snprintf(buf, cap, "%.0f", floor(strtod(v, NULL) / x + 0.5));
    return buf;
}

typedef struct entry {
    const char *text;   /* points into the data set or into nums */
    int64_t     count;
    size_t      order;  /* first appearance (or numeric order) */
} entry;

static int cmp_entry(const void *a, const void *b) {
    const entry *x = a, *y = b;
    if (x->count != y->count) return x->count > y->count ? -1 : 1;
    return (x->order > y->order) - (x->order < y->order);
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

bl_status bl_model_seen_record(bl_model *m, const bl_dataset *ds, bl_error *err) {
    if (!m || !ds) return bl_seterr(err, BL_EINVAL, "bl_model_seen_record: NULL argument");
    bl_model_seen s;
    memset(&s, 0, sizeof s);
    const size_t np = m->n_props, nr = ds->n_rows, npp = np ? np : 1;
    bl_status st = BL_OK;
    entry *ent = NULL;
    uint64_t *nums = NULL;
    char (*numtext)[24] = NULL;
    int64_t *hist = NULL;
    s.distinct = calloc(npp, sizeof *s.distinct);
    s.per_machine = calloc(npp, sizeof *s.per_machine);
    s.num_min = malloc(npp * sizeof *s.num_min);
    s.num_max = malloc(npp * sizeof *s.num_max);
    ent = malloc((nr ? nr : 1) * sizeof *ent);
    nums = malloc((nr ? nr : 1) * sizeof *nums);
    numtext = malloc((nr ? nr : 1) * sizeof *numtext);
    if (!s.distinct || !s.per_machine || !s.num_min || !s.num_max || !ent || !nums || !numtext) goto oom;
    s.rows = (int64_t)nr;
    s.scale_out_min = s.runtime_min_s = INFINITY;
    s.scale_out_max = s.runtime_max_s = -INFINITY;
    for (size_t r = 0; r < nr; r++) {
        s.scale_out_min = fmin(s.scale_out_min, ds->scale_out[r]);
        s.scale_out_max = fmax(s.scale_out_max, ds->scale_out[r]);
        s.runtime_min_s = fmin(s.runtime_min_s, ds->runtime_s[r]);
        s.runtime_max_s = fmax(s.runtime_max_s, ds->runtime_s[r]);
    }
    size_t cap = 0;
    for (size_t i = 0; i < np; i++) {
        const long jl = bl_dataset_find_prop(ds, m->props[i].name);
        if (jl < 0) {
            st = bl_seterr(err, BL_EINVAL, "%s: lacks the model's property '%s'", ds->name, m->props[i].name);
            goto done;
        }
        const size_t j = (size_t)jl;
        const bl_dataset_prop *p = &ds->props[j];
        const int number = m->props[i].kind == BL_PROP_NUMBER;
        const int pm = number && p->cluster_total;
        s.per_machine[i] = pm;
        size_t ne = 0;
        if (!pm || ds->settings.totals_per_machine) {
            /* the data set's own table of distinct values: count its rows */
            free(hist);
            hist = calloc(p->n_values ? p->n_values : 1, sizeof *hist);
            if (!hist) goto oom;
            for (size_t r = 0; r < nr; r++) hist[p->row_value[r]]++;
            for (size_t v = 0; v < p->n_values; v++)
                if (hist[v]) ent[ne++] = (entry){p->values[v], hist[v], v};
        } else {
            /* totals: each row's per-machine value, counted after sorting */
            for (size_t r = 0; r < nr; r++) nums[r] = strtoull(value_of(ds, j, r, numtext[0], sizeof numtext[0]), NULL, 10);
            qsort(nums, nr, sizeof *nums, cmp_u64);
            for (size_t r = 0; r < nr; r++) {
                if (ne && nums[r] == nums[r - 1]) {
                    ent[ne - 1].count++;
                    continue;
                }
                snprintf(numtext[ne], sizeof numtext[ne], "%" PRIu64, nums[r]);
                ent[ne] = (entry){numtext[ne], 1, ne};
                ne++;
            }
        }
        s.distinct[i] = (int64_t)ne;
        s.num_min[i] = s.num_max[i] = NAN;
        if (number)
            for (size_t k = 0; k < ne; k++) {
                const double v = strtod(ent[k].text, NULL);
                if (k == 0 || v < s.num_min[i]) s.num_min[i] = v;
                if (k == 0 || v > s.num_max[i]) s.num_max[i] = v;
            }
        qsort(ent, ne, sizeof *ent, cmp_entry);
        if (ne > BL_SEEN_VALUES_MAX) ne = BL_SEEN_VALUES_MAX;
        if (s.n + ne > cap) {
            size_t nc = cap ? cap : 64;
            while (nc < s.n + ne) nc *= 2;
            uint32_t *a = realloc(s.prop, nc * sizeof *a);
            if (a) s.prop = a;
            char **b = realloc(s.value, nc * sizeof *b);
            if (b) s.value = b;
            int64_t *c = realloc(s.count, nc * sizeof *c);
            if (c) s.count = c;
            if (!a || !b || !c) goto oom;
            cap = nc;
        }
        for (size_t k = 0; k < ne; k++) {
            if (!(s.value[s.n] = bl_strdup(ent[k].text))) goto oom;
            s.prop[s.n] = (uint32_t)i;
            s.count[s.n] = ent[k].count;
            s.n++;
        }
    }
    s.known = 1;
    seen_free(&m->seen);
    m->seen = s;
    memset(&s, 0, sizeof s);
    goto done;
oom:
    st = bl_seterr(err, BL_ENOMEM, "out of memory");
done:
    seen_free(&s);
    free(ent);
    free(nums);
    free(numtext);
    free(hist);
    return st;
}

bl_status bl_model_tuned_record(bl_model *m, const bl_dataset *runs, const size_t *rows, size_t n, bl_error *err) {
    if (!m || !runs) return bl_seterr(err, BL_EINVAL, "bl_model_tuned_record: NULL argument");
    if (!rows) n = runs->n_rows;
    if (n == 0) return bl_seterr(err, BL_EINVAL, "%s: no runs", runs->name);
    bl_model_tuned t;
    memset(&t, 0, sizeof t);
    unsigned char *ctx_seen = calloc(runs->n_contexts ? runs->n_contexts : 1, 1);
    t.context = calloc(m->n_props ? m->n_props : 1, sizeof *t.context);
    if (!ctx_seen || !t.context) {
        free(ctx_seen);
        free(t.context);
        return bl_seterr(err, BL_ENOMEM, "out of memory");
    }
    t.runs = (int64_t)n;
    t.scale_out_min = t.runtime_min_s = INFINITY;
    t.scale_out_max = t.runtime_max_s = -INFINITY;
    for (size_t k = 0; k < n; k++) {
        const size_t r = rows ? rows[k] : k;
        t.scale_out_min = fmin(t.scale_out_min, runs->scale_out[r]);
        t.scale_out_max = fmax(t.scale_out_max, runs->scale_out[r]);
        t.runtime_min_s = fmin(t.runtime_min_s, runs->runtime_s[r]);
        t.runtime_max_s = fmax(t.runtime_max_s, runs->runtime_s[r]);
        if (runs->context[r] < runs->n_contexts && !ctx_seen[runs->context[r]]) {
            ctx_seen[runs->context[r]] = 1;
            t.contexts++;
        }
    }
    free(ctx_seen);
    const size_t r0 = rows ? rows[0] : 0;
    bl_status st = BL_OK;
    for (size_t i = 0; i < m->n_props && !st; i++) {
        const long j = bl_dataset_find_prop(runs, m->props[i].name);
        char buf[32], other[32];
        if (j < 0) {
            st = bl_seterr(err, BL_EINVAL, "%s: lacks the model's property '%s'", runs->name, m->props[i].name);
            break;
        }
        /* the runs' value; "" when they differ in it (an optional property need not be one per context) */
        const char *v = value_of(runs, (size_t)j, r0, buf, sizeof buf);
        for (size_t k = 1; k < n && *v; k++)
            if (strcmp(value_of(runs, (size_t)j, rows ? rows[k] : k, other, sizeof other), v) != 0) v = "";
        if (!(t.context[i] = bl_strdup(v))) st = bl_seterr(err, BL_ENOMEM, "out of memory");
    }
    if (st) {
        tuned_free(&t, m->n_props);
        return st;
    }
    t.known = 1;
    t.disagreement = NAN;
    tuned_free(&m->tuned, m->n_props);
    m->tuned = t;
    return BL_OK;
}

bl_status bl_model_tuned_set_context(bl_model *m, const char *const *values, bl_error *err) {
    if (!m || !values) return bl_seterr(err, BL_EINVAL, "bl_model_tuned_set_context: NULL argument");
    if (!m->tuned.known) return BL_OK;
    for (size_t i = 0; i < m->n_props; i++) {
        char *v = bl_strdup(values[i] ? values[i] : "");
        if (!v) return bl_seterr(err, BL_ENOMEM, "out of memory");
        free(m->tuned.context[i]);
        m->tuned.context[i] = v;
    }
    return BL_OK;
}

bl_status bl_model_records_copy(bl_model *dst, const bl_model *src, bl_error *err) {
    if (!dst || !src || dst->n_props != src->n_props) return bl_seterr(err, BL_EINVAL, "records copy: bad argument");
    bl_model_records_free(dst);
    const size_t np = src->n_props ? src->n_props : 1;
    if (src->member_epochs) {
        if (!(dst->member_epochs = malloc((size_t)src->n_members * sizeof *dst->member_epochs))) goto oom;
        memcpy(dst->member_epochs, src->member_epochs, (size_t)src->n_members * sizeof *dst->member_epochs);
    }
    if (src->seen.known) {
        const bl_model_seen *a = &src->seen;
        bl_model_seen *b = &dst->seen;
        *b = *a;
        b->prop = NULL;
        b->value = NULL;
        b->count = NULL;
        b->distinct = b->per_machine = NULL;
        b->num_min = b->num_max = NULL;
        b->n = 0;
        const size_t nn = a->n ? a->n : 1;
        b->prop = malloc(nn * sizeof *b->prop);
        b->value = calloc(nn, sizeof *b->value);
        b->count = malloc(nn * sizeof *b->count);
        b->distinct = malloc(np * sizeof *b->distinct);
        b->per_machine = malloc(np * sizeof *b->per_machine);
        b->num_min = malloc(np * sizeof *b->num_min);
        b->num_max = malloc(np * sizeof *b->num_max);
        if (!b->prop || !b->value || !b->count || !b->distinct || !b->per_machine || !b->num_min || !b->num_max) goto oom;
        for (size_t k = 0; k < a->n; k++) {
            if (!(b->value[k] = bl_strdup(a->value[k]))) goto oom;
            b->n = k + 1;
        }
        memcpy(b->prop, a->prop, a->n * sizeof *b->prop);
        memcpy(b->count, a->count, a->n * sizeof *b->count);
        memcpy(b->distinct, a->distinct, src->n_props * sizeof *b->distinct);
        memcpy(b->per_machine, a->per_machine, src->n_props * sizeof *b->per_machine);
        memcpy(b->num_min, a->num_min, src->n_props * sizeof *b->num_min);
        memcpy(b->num_max, a->num_max, src->n_props * sizeof *b->num_max);
    }
    if (src->tuned.known) {
        dst->tuned = src->tuned;
        dst->tuned.fit_x = NULL;
        dst->tuned.n_fit = 0;
        if (!(dst->tuned.context = calloc(np, sizeof *dst->tuned.context))) goto oom;
        for (size_t i = 0; i < src->n_props; i++)
            if (!(dst->tuned.context[i] = bl_strdup(src->tuned.context[i]))) goto oom;
        const bl_model_tuned *t = &src->tuned;
        if (t->n_fit && !fit_alloc(&dst->tuned, t->n_fit)) goto oom;
        if (t->n_fit) memcpy(dst->tuned.fit_x, t->fit_x, 4 * t->n_fit * sizeof *t->fit_x);
    }
    if (bl_calib_copy(&dst->calib, &src->calib, NULL) != BL_OK) goto oom;
    return BL_OK;
oom:
    bl_model_records_free(dst);
    return bl_seterr(err, BL_ENOMEM, "out of memory");
}

/* ---- in the model file ---------------------------------------------------------------------------- */

bl_status bl_model_records_save(const bl_model *m, bl_modelrec *rec, bl_error *err) {
    bl_status st = BL_OK;
    const size_t np = m->n_props;
    if (m->member_epochs && m->n_members > 1)
        st = bl_modelrec_add_ints(rec, "members", "epochs", m->member_epochs, (size_t)m->n_members, err);
    if (!st && m->seen.known) {
        const bl_model_seen *s = &m->seen;
        int64_t *prop = malloc((s->n ? s->n : 1) * sizeof *prop);
        if (!prop) return bl_seterr(err, BL_ENOMEM, "out of memory");
        for (size_t k = 0; k < s->n; k++) prop[k] = s->prop[k];
        st = bl_modelrec_add_int(rec, "seen", "rows", s->rows, err);
        if (!st) st = bl_modelrec_add_double(rec, "seen", "scale_out_min", s->scale_out_min, err);
        if (!st) st = bl_modelrec_add_double(rec, "seen", "scale_out_max", s->scale_out_max, err);
        if (!st) st = bl_modelrec_add_double(rec, "seen", "runtime_min_s", s->runtime_min_s, err);
        if (!st) st = bl_modelrec_add_double(rec, "seen", "runtime_max_s", s->runtime_max_s, err);
        if (!st) st = bl_modelrec_add_ints(rec, "seen", "value_prop", prop, s->n, err);
        if (!st) st = bl_modelrec_add_strings(rec, "seen", "values", (const char *const *)s->value, s->n, err);
        if (!st) st = bl_modelrec_add_ints(rec, "seen", "counts", s->count, s->n, err);
        if (!st) st = bl_modelrec_add_ints(rec, "seen", "distinct", s->distinct, np, err);
        if (!st) st = bl_modelrec_add_ints(rec, "seen", "per_machine", s->per_machine, np, err);
        if (!st) st = bl_modelrec_add_doubles(rec, "seen", "number_min", s->num_min, np, err);
        if (!st) st = bl_modelrec_add_doubles(rec, "seen", "number_max", s->num_max, np, err);
        free(prop);
    }
    if (!st && m->tuned.known) {
        const bl_model_tuned *t = &m->tuned;
        st = bl_modelrec_add_int(rec, "finetune", "runs", t->runs, err);
        if (!st) st = bl_modelrec_add_int(rec, "finetune", "contexts", t->contexts, err);
        if (!st) st = bl_modelrec_add_double(rec, "finetune", "scale_out_min", t->scale_out_min, err);
        if (!st) st = bl_modelrec_add_double(rec, "finetune", "scale_out_max", t->scale_out_max, err);
        if (!st) st = bl_modelrec_add_double(rec, "finetune", "runtime_min_s", t->runtime_min_s, err);
        if (!st) st = bl_modelrec_add_double(rec, "finetune", "runtime_max_s", t->runtime_max_s, err);
        if (!st) st = bl_modelrec_add_strings(rec, "finetune", "context", (const char *const *)t->context, np, err);
        if (!st && t->n_fit) {
            st = bl_modelrec_add_doubles(rec, "finetune", "fit_scale_out", t->fit_x, t->n_fit, err);
            if (!st) st = bl_modelrec_add_doubles(rec, "finetune", "fit_runtime_s", t->fit_y, t->n_fit, err);
            if (!st) st = bl_modelrec_add_doubles(rec, "finetune", "fit_predicted_s", t->fit_pred, t->n_fit, err);
            if (!st) st = bl_modelrec_add_doubles(rec, "finetune", "fit_prior_s", t->fit_prior, t->n_fit, err);
            if (!st) st = bl_modelrec_add_double(rec, "finetune", "disagreement", t->disagreement, err);
        }
        if (!st && t->protocol) st = bl_modelrec_add_int(rec, "finetune", "protocol", t->protocol, err);
        if (!st && t->created[0]) st = bl_modelrec_add_string(rec, "finetune", "created", t->created, err);
        if (!st && t->n_fit) st = bl_modelrec_add_int(rec, "finetune", "disagreement_held_out", t->held_out, err);
    }
    if (!st) st = bl_calib_save(&m->calib, rec, err);
    return st;
}

static bl_status bad(const bl_modelrec *rec, const char *what, bl_error *err) {
    return bl_seterr(err, BL_EFORMAT, "model '%s': %s", rec->name, what);
}

/* A positive finite range lo <= hi. */
static int range_ok(double lo, double hi) { return isfinite(lo) && isfinite(hi) && lo > 0 && lo <= hi; }

static bl_status load_seen(bl_model *m, const bl_modelrec *rec, bl_error *err) {
    if (!bl_modelrec_find_attr(rec, "seen", "rows")) return BL_OK; /* before format 1.3 */
    bl_model_seen s;
    memset(&s, 0, sizeof s);
    const size_t np = m->n_props, npp = np ? np : 1;
    const int64_t *prop, *counts, *distinct, *pm;
    const char *const *values;
    const double *nmin, *nmax;
    size_t n1, n2, n3, a, b, c, d;
    bl_status st;
    if ((st = bl_modelrec_get_int(rec, "seen", "rows", &s.rows, err)) ||
        (st = bl_modelrec_get_double(rec, "seen", "scale_out_min", &s.scale_out_min, err)) ||
        (st = bl_modelrec_get_double(rec, "seen", "scale_out_max", &s.scale_out_max, err)) ||
        (st = bl_modelrec_get_double(rec, "seen", "runtime_min_s", &s.runtime_min_s, err)) ||
        (st = bl_modelrec_get_double(rec, "seen", "runtime_max_s", &s.runtime_max_s, err)) ||
        (st = bl_modelrec_get_ints(rec, "seen", "value_prop", &prop, &n1, err)) ||
        (st = bl_modelrec_get_strings(rec, "seen", "values", &values, &n2, err)) ||
        (st = bl_modelrec_get_ints(rec, "seen", "counts", &counts, &n3, err)) ||
        (st = bl_modelrec_get_ints(rec, "seen", "distinct", &distinct, &a, err)) ||
        (st = bl_modelrec_get_ints(rec, "seen", "per_machine", &pm, &b, err)) ||
        (st = bl_modelrec_get_doubles(rec, "seen", "number_min", &nmin, &c, err)) ||
        (st = bl_modelrec_get_doubles(rec, "seen", "number_max", &nmax, &d, err)))
        return st;
    if (s.rows < 1 || !range_ok(s.scale_out_min, s.scale_out_max) || !range_ok(s.runtime_min_s, s.runtime_max_s))
        return bad(rec, "seen/rows, scale_out_min/max or runtime_min_s/max_s out of range (rows >= 1, "
                   "0 < min <= max expected)", err);
    if (n1 != n2 || n1 != n3)
        return bad(rec, "seen/value_prop, values and counts differ in length", err);
    if (a != np || b != np || c != np || d != np)
        return bad(rec, "seen/distinct, per_machine, number_min and number_max must hold one value per property "
                   "(schema/names)", err);
    for (size_t k = 0; k < n1; k++)
        if (prop[k] < 0 || (size_t)prop[k] >= np || (k && prop[k] < prop[k - 1]) || counts[k] < 1)
            return bad(rec, "seen/value_prop must list property indices in order, seen/counts positive counts", err);
    for (size_t i = 0; i < np; i++)
        if (distinct[i] < 0 || (pm[i] != 0 && pm[i] != 1))
            return bad(rec, "seen/distinct must be >= 0 and seen/per_machine 0 or 1", err);
    s.n = n1;
    const size_t nn = n1 ? n1 : 1;
    s.prop = malloc(nn * sizeof *s.prop);
    s.value = calloc(nn, sizeof *s.value);
    s.count = malloc(nn * sizeof *s.count);
    s.distinct = malloc(npp * sizeof *s.distinct);
    s.per_machine = malloc(npp * sizeof *s.per_machine);
    s.num_min = malloc(npp * sizeof *s.num_min);
    s.num_max = malloc(npp * sizeof *s.num_max);
    int oom = !s.prop || !s.value || !s.count || !s.distinct || !s.per_machine || !s.num_min || !s.num_max;
    for (size_t k = 0; k < n1 && !oom; k++) {
        s.prop[k] = (uint32_t)prop[k];
        s.count[k] = counts[k];
        oom = !(s.value[k] = bl_strdup(values[k]));
    }
    if (oom) {
        seen_free(&s);
        return bl_seterr(err, BL_ENOMEM, "out of memory");
    }
    memcpy(s.distinct, distinct, np * sizeof *s.distinct);
    memcpy(s.per_machine, pm, np * sizeof *s.per_machine);
    memcpy(s.num_min, nmin, np * sizeof *s.num_min);
    memcpy(s.num_max, nmax, np * sizeof *s.num_max);
    s.known = 1;
    m->seen = s;
    return BL_OK;
}

static bl_status load_tuned(bl_model *m, const bl_modelrec *rec, bl_error *err) {
    if (!bl_modelrec_find_attr(rec, "finetune", "runs")) return BL_OK; /* never fine-tuned, or before 1.3 */
    bl_model_tuned t;
    memset(&t, 0, sizeof t);
    const char *const *ctx;
    size_t n;
    bl_status st;
    if ((st = bl_modelrec_get_int(rec, "finetune", "runs", &t.runs, err)) ||
        (st = bl_modelrec_get_int(rec, "finetune", "contexts", &t.contexts, err)) ||
        (st = bl_modelrec_get_double(rec, "finetune", "scale_out_min", &t.scale_out_min, err)) ||
        (st = bl_modelrec_get_double(rec, "finetune", "scale_out_max", &t.scale_out_max, err)) ||
        (st = bl_modelrec_get_double(rec, "finetune", "runtime_min_s", &t.runtime_min_s, err)) ||
        (st = bl_modelrec_get_double(rec, "finetune", "runtime_max_s", &t.runtime_max_s, err)) ||
        (st = bl_modelrec_get_strings(rec, "finetune", "context", &ctx, &n, err)))
        return st;
    if (t.runs < 1 || t.contexts < 1 || !range_ok(t.scale_out_min, t.scale_out_max) ||
        !range_ok(t.runtime_min_s, t.runtime_max_s))
        return bad(rec, "finetune/runs, contexts, scale_out_min/max or runtime_min_s/max_s out of range", err);
    if (n != m->n_props) return bad(rec, "finetune/context must hold one value per property (schema/names)", err);
    if (!(t.context = calloc(n ? n : 1, sizeof *t.context))) return bl_seterr(err, BL_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++)
        if (!(t.context[i] = bl_strdup(ctx[i]))) {
            tuned_free(&t, n);
            return bl_seterr(err, BL_ENOMEM, "out of memory");
        }
    t.known = 1;
    t.disagreement = NAN;
    if (bl_modelrec_find_attr(rec, "finetune", "protocol") &&
        (st = bl_modelrec_get_int(rec, "finetune", "protocol", &t.protocol, err))) {
        tuned_free(&t, n);
        return st;
    }
    int64_t held = 0;
    if (bl_modelrec_find_attr(rec, "finetune", "disagreement_held_out") &&
        ((st = bl_modelrec_get_int(rec, "finetune", "disagreement_held_out", &held, err)) || (held != 0 && held != 1))) {
        tuned_free(&t, n);
        return st ? st : bad(rec, "finetune/disagreement_held_out must be 0 or 1", err);
    }
    t.held_out = (int)held;
    const char *when = NULL; /* optional: not recorded before 0.6 */
    if (bl_modelrec_find_attr(rec, "finetune", "created") &&
        (st = bl_modelrec_get_string(rec, "finetune", "created", &when, err))) {
        tuned_free(&t, n);
        return st;
    }
    if (when) snprintf(t.created, sizeof t.created, "%s", when);
    if (bl_modelrec_find_attr(rec, "finetune", "fit_scale_out")) { /* format 1.4, 2.2, 3.1 */
        const double *a[4];
        size_t na[4];
        static const char *const names[4] = {"fit_scale_out", "fit_runtime_s", "fit_predicted_s", "fit_prior_s"};
        for (int q = 0; q < 4 && !st; q++) st = bl_modelrec_get_doubles(rec, "finetune", names[q], &a[q], &na[q], err);
        if (!st) st = bl_modelrec_get_double(rec, "finetune", "disagreement", &t.disagreement, err);
        if (!st && (na[0] != na[1] || na[0] != na[2] || na[0] != na[3] || na[0] == 0 || na[0] != (size_t)t.runs ||
                    !(t.disagreement >= 0)))
            st = bad(rec, "finetune/fit_scale_out, fit_runtime_s, fit_predicted_s and fit_prior_s must hold one value "
                     "per run (finetune/runs) and finetune/disagreement a number >= 0", err);
        for (size_t i = 0; !st && i < na[0]; i++)
            if (!(a[0][i] > 0) || !(a[1][i] > 0) || !isfinite(a[0][i]) || !isfinite(a[1][i]) || isinf(a[2][i]) ||
                isinf(a[3][i]))
                st = bad(rec, "finetune/fit_scale_out and fit_runtime_s must be positive numbers, fit_predicted_s "
                         "and fit_prior_s finite or NaN", err);
        if (!st && !fit_alloc(&t, na[0])) st = bl_seterr(err, BL_ENOMEM, "out of memory");
        for (int q = 0; q < 4 && !st; q++) memcpy(t.fit_x + (size_t)q * na[0], a[q], na[0] * sizeof(double));
        if (st) {
            tuned_free(&t, n);
            return st;
        }
    }
    m->tuned = t;
    return BL_OK;
}

bl_status bl_model_records_load(bl_model *m, const bl_modelrec *rec, bl_error *err) {
    bl_status st = BL_OK;
    if (m->n_members > 1 && bl_modelrec_find_attr(rec, "members", "epochs")) {
        const int64_t *e;
        size_t n;
        if ((st = bl_modelrec_get_ints(rec, "members", "epochs", &e, &n, err))) return st;
        if (n != (size_t)m->n_members) return bad(rec, "members/epochs must hold one value per member", err);
        if (!(m->member_epochs = malloc(n * sizeof *m->member_epochs))) return bl_seterr(err, BL_ENOMEM, "out of memory");
        memcpy(m->member_epochs, e, n * sizeof *e);
    }
    if ((st = load_seen(m, rec, err))) return st;
    if ((st = load_tuned(m, rec, err))) return st;
    return bl_calib_load(&m->calib, rec, err);
}

/* ---- queries ---------------------------------------------------------------------------------------- */

void bl_model_seen_span(const bl_model *m, size_t i, size_t *first, size_t *n) {
    *first = *n = 0;
    if (!m->seen.known) return;
    size_t k = 0;
    while (k < m->seen.n && m->seen.prop[k] < i) k++;
    *first = k;
    while (k < m->seen.n && m->seen.prop[k] == i) k++;
    *n = k - *first;
}

const char *bl_model_seen_only_value(const bl_model *m, size_t i) {
    size_t f, n;
    bl_model_seen_span(m, i, &f, &n);
    if (n != 1 || m->seen.distinct[i] != 1) return NULL;
    return m->seen.value[f];
}
