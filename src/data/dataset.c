/* dataset.c — builds a bl_dataset from a delimited file and a schema (see dataset.h).
 * One streaming pass: each row's property texts are interned into per-property tables of distinct
 * values (hash map), then every distinct value is encoded once and rows are grouped into contexts
 * (hash map over the tuple of essential value indices). Not here: the file format (reader.c), the
 * schema format (schema.c), the encoders (src/encode/). */
#include "data/dataset.h"
#include "data/reader.h"
#include "common/error.h"
#include "common/str.h"
#include "common/utf8.h"
#include "common/suggest.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

/* ---- open-addressing id map: hash → id, equality decided by the caller ---------------------------- */

typedef struct idmap {
    uint32_t *slot;      /* [cap] id + 1, 0 = empty */
    uint64_t *hash;      /* [cap] */
    size_t    cap, n;    /* cap is a power of two, kept at most half full */
} idmap;

typedef int (*id_eq_fn)(uint32_t id, const void *key, void *ctx);

static void idmap_free(idmap *m) { free(m->slot); free(m->hash); }

static int idmap_grow(idmap *m) {
    size_t cap = m->cap ? m->cap * 2 : 64;
    uint32_t *s = calloc(cap, sizeof *s);
    uint64_t *h = calloc(cap, sizeof *h);
    if (!s || !h) { free(s); free(h); return 1; }
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->slot[i]) continue;
        size_t j = (size_t)m->hash[i] & (cap - 1);
        while (s[j]) j = (j + 1) & (cap - 1);
        s[j] = m->slot[i];
        h[j] = m->hash[i];
    }
    idmap_free(m);
    m->slot = s;
    m->hash = h;
    m->cap = cap;
    return 0;
}

/* Finds key; if absent inserts new_id. Returns the id found/inserted, or UINT32_MAX on no memory. */
static uint32_t idmap_get(idmap *m, uint64_t h, const void *key, id_eq_fn eq, void *ctx, uint32_t new_id,
                          int *inserted) {
    *inserted = 0;
    if ((m->n + 1) * 2 > m->cap && idmap_grow(m)) return UINT32_MAX;
    size_t j = (size_t)h & (m->cap - 1);
    while (m->slot[j]) {
        if (m->hash[j] == h && eq(m->slot[j] - 1, key, ctx)) return m->slot[j] - 1;
        j = (j + 1) & (m->cap - 1);
    }
    m->slot[j] = new_id + 1;
    m->hash[j] = h;
    m->n++;
    *inserted = 1;
    return new_id;
}

/* ---- building state -------------------------------------------------------------------------------- */

/* Growable text buffer for building a property's value. */
typedef struct sbuf { char *s; size_t len, cap; } sbuf;

typedef struct prop_build {
    long    *cols;        /* [n_cols] column index of each source column */
    idmap    map;
    size_t   values_cap;
    sbuf     val;         /* the value of the row being read */
} prop_build;

static int value_eq(uint32_t id, const void *key, void *ctx) {
    const bl_dataset_prop *p = ctx;
    return strcmp(p->values[id], key) == 0;
}

typedef struct ctx_key { const uint32_t *ids; size_t n; } ctx_key;

static int ctx_eq(uint32_t id, const void *key, void *ctx) {
    const ctx_key *k = key;
    const uint32_t *tuples = ctx;
    return memcmp(tuples + (size_t)id * k->n, k->ids, k->n * sizeof *k->ids) == 0;
}

void bl_dataset_free(bl_dataset *ds) {
    if (!ds) return;
    for (size_t p = 0; p < ds->n_props; p++) {
        bl_dataset_prop *pr = &ds->props[p];
        if (pr->values)
            for (size_t i = 0; i < pr->n_values; i++) free(pr->values[i]);
        free(pr->values);
        free(pr->vectors);
        free(pr->row_value);
        free(pr->name);
    }
    free(ds->props);
    for (size_t c = 0; c < ds->n_contexts; c++) {
        free(ds->contexts[c].label);
        free(ds->contexts[c].rows);
    }
    free(ds->contexts);
    free(ds->scale_out);
    free(ds->runtime_s);
    free(ds->runtime_column);
    free(ds->context);
    free(ds->src_row);
    free(ds->src_lines);
    for (size_t i = 0; i < ds->n_skipped && i < BL_DATASET_SKIPPED_KEPT; i++) free(ds->skipped[i]);
    free(ds->skipped);
    free(ds->name);
    free(ds);
}

long bl_dataset_find_prop(const bl_dataset *ds, const char *name) {
    if (!ds || !name) return -1;
    for (size_t p = 0; p < ds->n_props; p++)
        if (strcmp(ds->props[p].name, name) == 0) return (long)p;
    return -1;
}

void bl_dataset_scaleout_features(const bl_dataset *ds, double *out) {
    bl_scaleout_features_forward(ds->scale_out, ds->n_rows, out);
}

bl_status bl_encode_value(const char *name, bl_prop_kind kind, const char *value,
                          const bl_encode_settings *settings, double *out, bl_error *err) {
    return bl_encode_value_range(name, kind, value, settings, NULL, out, err);
}

bl_status bl_encode_value_range(const char *name, bl_prop_kind kind, const char *value,
                                const bl_encode_settings *settings, const double *range, double *out,
                                bl_error *err) {
    BL_CHECK_ARG(name && value && settings && out, err, "encode value: NULL argument");
    bl_encoder e;
    bl_status st = bl_encoder_init(&e, settings, err);
    if (st != BL_OK) return st;
    return bl_encoder_value(&e, name, kind, value, range, out, err);
}

bl_status bl_encoder_value(const bl_encoder *e, const char *name, bl_prop_kind kind, const char *value,
                           const double *range, double *out, bl_error *err) {
    const bl_encode_settings *settings = &e->s;
    size_t bad;
    if (!bl_utf8_valid(value, strlen(value), &bad))
        return bl_seterr(err, BL_EFORMAT, "property '%.100s': invalid UTF-8 at byte %zu of the value", name, bad);
    if (kind == BL_PROP_NUMBER) {
        uint64_t v;
        bl_status st = bl_parse_natural(value, settings, &v, err);
        if (st == BL_OK && range && settings->numbers == BL_ENC_NUMBERS_RANGE)
            bl_number_range_forward(v, range, settings, out);
        else if (st == BL_OK)
            st = bl_binarize_forward(v, settings, out, err);
        if (st != BL_OK) bl_prefixerr(err, "property '%.100s' is a number", name);
        return st;
    }
    return bl_encoder_hash(e, value, out, err);
}

bl_status bl_dataset_encode_value(const bl_dataset *ds, size_t p, const char *value, double *out,
                                  bl_error *err) {
    BL_CHECK_ARG(ds && p < ds->n_props, err, "encode value: no property %zu", p);
    return bl_encode_value(ds->props[p].name, ds->props[p].kind, value, &ds->settings, out, err);
}

static int sbuf_put(sbuf *b, const char *t, size_t n) {
    size_t need;
    if (bl_add_size(b->len, n + 1, &need)) return 1;
    if (need > b->cap) {
        size_t cap = b->cap ? b->cap : 64;
        while (cap < need) cap = cap > SIZE_MAX / 2 ? need : cap * 2;
        char *s = realloc(b->s, cap);
        if (!s) return 1;
        b->s = s;
        b->cap = cap;
    }
    memcpy(b->s + b->len, t, n);
    b->len += n;
    b->s[b->len] = '\0';
    return 0;
}

static long find_col(const bl_reader *r, const bl_schema *sc, const bl_schema_ref *ref, bl_error *err,
                     bl_status *st) {
    long j = bl_reader_find(r, ref->name);
    if (j < 0) {
        /* A wrong delimiter or old Mac line ends show up first as a missing column: say so. */
        char hint[256], mean[400] = "";
        bl_reader_header_hint(r, hint, sizeof hint);
        const size_t nc = bl_reader_ncols(r);
        const char **cands = malloc((nc ? nc : 1) * sizeof *cands);
        if (cands && !hint[0]) { /* the header's columns closest to the name: a column renamed, or a typo
                                  * (not when the header itself looks misread) */
            for (size_t j = 0; j < nc; j++) cands[j] = bl_reader_colname(r, j);
            bl_suggest(ref->name, cands, nc, "", mean, sizeof mean);
        }
        free(cands);
        *st = bl_seterr(err, BL_EFORMAT, "%s:1:1: missing column '%.100s' (named in %s:%zu:%zu)%s%s%s",
                        bl_reader_name(r), ref->name, sc->name, ref->line, ref->col, mean, hint[0] ? "; " : "", hint);
    }
    return j;
}

static int is_total_col(const bl_schema *sc, const char *col) {
    for (size_t i = 0; i < sc->n_totals; i++)
        if (strcmp(sc->totals[i].name, col) == 0) return 1;
    return 0;
}

/* Grows every per-row array to hold cap rows. */
static int grow_rows(bl_dataset *ds, size_t cap) {
    double *a = realloc(ds->scale_out, cap * sizeof *a);
    if (!a) return 1;
    ds->scale_out = a;
    double *b = realloc(ds->runtime_s, cap * sizeof *b);
    if (!b) return 1;
    ds->runtime_s = b;
    size_t *c = realloc(ds->src_row, cap * sizeof *c);
    if (!c) return 1;
    ds->src_row = c;
    size_t *l = realloc(ds->src_lines, 2 * cap * sizeof *l);
    if (!l) return 1;
    ds->src_lines = l;
    for (size_t p = 0; p < ds->n_props; p++) {
        uint32_t *v = realloc(ds->props[p].row_value, cap * sizeof *v);
        if (!v) return 1;
        ds->props[p].row_value = v;
    }
    return 0;
}

/* Messages about field j of the row just read start with bl_reader_where's "FILE:LINE:COLUMN: ". */
#define WHERE(r, j, buf) bl_reader_where((r), (j), (buf), sizeof (buf))

/* Parses a number field that must be finite and > 0. */
static bl_status positive_field(const bl_reader *r, size_t j, const char *text, const char *what,
                                double *v, bl_error *err) {
    bl_error e;
    char at[1200];
    if (bl_parse_number(text, v, &e) != BL_OK)
        return bl_seterr(err, BL_EFORMAT, "%scolumn '%.100s' (%s): %s", WHERE(r, j, at), bl_reader_colname(r, j),
                         what, e.message);
    if (!(*v > 0))
        return bl_seterr(err, BL_EFORMAT, "%scolumn '%.100s' (%s): '%.40s' must be greater than 0", WHERE(r, j, at),
                         bl_reader_colname(r, j), what, text);
    return BL_OK;
}

/* Parses the runtime field: a finite number > 0 in the schema's unit. A blank, non-numeric or
 * non-positive runtime is mostly a failed run; unless the caller skips such rows already, the message
 * says both ways out: fix the row, or skip it (skip_invalid, which the programs call --skip-invalid). */
static bl_status runtime_field(const bl_reader *r, size_t j, const char *text, const bl_schema *sc,
                               int skip_invalid, double *v, bl_error *err) {
    if (bl_parse_number(text, v, NULL) == BL_OK && *v > 0) return BL_OK;
    char at[1200];
    const char *unit = sc->runtime_unit_words;
    const char *fix = skip_invalid ? "" : "; fix or remove the row, or skip such rows with skip_invalid "
                                          "(--skip-invalid of bellamy-train pretrain, finetune, evaluate and inspect, "
                                          "and of bellamy-predict)";
    if (text[0] == '\0')
        return bl_seterr(err, BL_EFORMAT, "%scolumn '%.100s' (runtime) is empty, not a positive number of %s%s",
                         WHERE(r, j, at), bl_reader_colname(r, j), unit, fix);
    return bl_seterr(err, BL_EFORMAT, "%scolumn '%.100s' (runtime): '%.40s' is not a positive number of %s%s",
                     WHERE(r, j, at), bl_reader_colname(r, j), text, unit, fix);
}

/* Parses a scale-out field: a number of machines, so a whole number in 1..BL_SCALE_OUT_MAX. */
static bl_status scale_out_field(const bl_reader *r, size_t j, const char *text, double *v, bl_error *err) {
    bl_status st = positive_field(r, j, text, "scale-out", v, err);
    if (st != BL_OK) return st;
    char at[1200];
    if (*v != floor(*v) || *v > BL_SCALE_OUT_MAX)
        return bl_seterr(err, BL_EFORMAT, "%scolumn '%.100s' (scale-out): '%.40s' is not a number of machines (a "
                         "whole number from 1 to %d)", WHERE(r, j, at), bl_reader_colname(r, j), text, BL_SCALE_OUT_MAX);
    return BL_OK;
}

/* Rejects a runtime s (in seconds, after the unit) outside [BL_RUNTIME_MIN_S, BL_RUNTIME_MAX_S]: such a
 * value is a typo or a unit mistake; above, it makes target scales a model file refuses or runs a
 * fine-tuning drops; below, one row pulls every prediction towards 0. text is the field as written. */
static bl_status runtime_bound(const bl_reader *r, size_t j, const char *text, const bl_schema *sc, double s,
                               bl_error *err) {
    if (s >= BL_RUNTIME_MIN_S && s <= BL_RUNTIME_MAX_S) return BL_OK;
    char at[1200];
    if (!(s > 0))   /* a subnormal count of milliseconds underflows to 0 s */
        return bl_seterr(err, BL_EFORMAT, "%scolumn '%.100s' (runtime): '%.40s' %s is 0 s after conversion: must be "
                         "greater than 0", WHERE(r, j, at), bl_reader_colname(r, j), text, sc->runtime_unit);
    if (s < BL_RUNTIME_MIN_S)
        return bl_seterr(err, BL_EFORMAT, "%scolumn '%.100s' (runtime): '%.40s'%s%s is %.3g s, less than a millisecond: "
                         "no distributed job is that fast; is the column in another unit than the schema's runtime "
                         "line says (%s)?", WHERE(r, j, at), bl_reader_colname(r, j), text,
                         sc->runtime_to_s == 1 ? "" : " ", sc->runtime_to_s == 1 ? "" : sc->runtime_unit, s,
                         sc->runtime_unit_words);
    return bl_seterr(err, BL_EFORMAT, "%scolumn '%.100s' (runtime): '%.40s'%s%s is more than 1e12 s (some 30 000 "
                     "years)", WHERE(r, j, at), bl_reader_colname(r, j), text, sc->runtime_to_s == 1 ? "" : " ",
                     sc->runtime_to_s == 1 ? "" : sc->runtime_unit);
}

/* Groups rows into contexts; fills ds->context, ds->contexts. */
static bl_status build_contexts(bl_dataset *ds, bl_error *err) {
    size_t nk = 0;
    size_t *key_props = malloc((ds->n_props + 1) * sizeof *key_props);
    uint32_t *tuples = NULL, *key = NULL;
    size_t *counts = NULL;
    idmap map = {0};
    bl_status st = BL_OK;
    if (!key_props) { st = bl_seterr(err, BL_ENOMEM, "out of memory"); goto done; }
    for (size_t p = 0; p < ds->n_props; p++)
        if (ds->props[p].essential && !ds->props[p].cluster_total) key_props[nk++] = p;
    ds->context = malloc((ds->n_rows ? ds->n_rows : 1) * sizeof *ds->context);
    tuples = malloc((ds->n_rows ? ds->n_rows : 1) * (nk ? nk : 1) * sizeof *tuples);
    key = malloc((nk ? nk : 1) * sizeof *key);
    if (!ds->context || !tuples || !key) { st = bl_seterr(err, BL_ENOMEM, "out of memory"); goto done; }
    size_t nc = 0;
    for (size_t r = 0; r < ds->n_rows; r++) {
        for (size_t k = 0; k < nk; k++) key[k] = ds->props[key_props[k]].row_value[r];
        ctx_key ck = { key, nk };
        int ins;
        uint32_t id = idmap_get(&map, XXH64(key, nk * sizeof *key, 0), &ck, ctx_eq, tuples, (uint32_t)nc, &ins);
        if (id == UINT32_MAX) { st = bl_seterr(err, BL_ENOMEM, "out of memory"); goto done; }
        if (ins) memcpy(tuples + nc++ * nk, key, nk * sizeof *key);
        ds->context[r] = id;
    }
    ds->contexts = calloc(nc ? nc : 1, sizeof *ds->contexts);
    counts = calloc(nc ? nc : 1, sizeof *counts);
    if (!ds->contexts || !counts) { st = bl_seterr(err, BL_ENOMEM, "out of memory"); goto done; }
    ds->n_contexts = nc;
    for (size_t r = 0; r < ds->n_rows; r++) ds->contexts[ds->context[r]].n_rows++;
    for (size_t c = 0; c < nc; c++) {
        bl_context *cx = &ds->contexts[c];
        cx->rows = malloc(cx->n_rows * sizeof *cx->rows);
        sbuf lb = {0};
        int bad = !cx->rows;
        for (size_t k = 0; k < nk && !bad; k++) {
            const bl_dataset_prop *p = &ds->props[key_props[k]];
            const char *v = p->values[tuples[c * nk + k]];
            bad |= (k && sbuf_put(&lb, "; ", 2)) || sbuf_put(&lb, p->name, strlen(p->name)) ||
                   sbuf_put(&lb, "=", 1) || sbuf_put(&lb, v, strlen(v));
        }
        if (!bad && !lb.s) bad = sbuf_put(&lb, "", 0);
        cx->label = lb.s;
        if (bad) { st = bl_seterr(err, BL_ENOMEM, "out of memory"); goto done; }
    }
    for (size_t r = 0; r < ds->n_rows; r++) {
        uint32_t c = ds->context[r];
        ds->contexts[c].rows[counts[c]++] = r;
    }
done:
    idmap_free(&map);
    free(key_props);
    free(tuples);
    free(key);
    free(counts);
    return st;
}

/* Encodes every distinct value of every property. */
static bl_status encode_values(bl_dataset *ds, bl_error *err) {
    size_t L = ds->settings.vec_len;
    bl_encoder e;
    bl_status est = bl_encoder_init(&e, &ds->settings, err);
    if (est != BL_OK) return est;
    for (size_t p = 0; p < ds->n_props; p++) {
        bl_dataset_prop *pr = &ds->props[p];
        size_t n;
        if (bl_mul_size(pr->n_values ? pr->n_values : 1, L * sizeof(double), &n))
            return bl_seterr(err, BL_ENOMEM, "out of memory");
        pr->vectors = malloc(n);
        if (!pr->vectors) return bl_seterr(err, BL_ENOMEM, "out of memory");
        for (size_t i = 0; i < pr->n_values; i++) {
            bl_status st = bl_encoder_value(&e, pr->name, pr->kind, pr->values[i], NULL, pr->vectors + i * L, err);
            if (st != BL_OK) return st;   /* values were validated while reading; defensive */
        }
    }
    return BL_OK;
}

static bl_status load_from_reader(bl_reader *r, const bl_schema *sc, const bl_encode_settings *settings,
                                  int skip_invalid, bl_dataset **out, bl_error *err) {
    bl_status st = BL_OK;
    prop_build *pb = NULL;
    bl_dataset *ds = calloc(1, sizeof *ds);
    if (!ds) return bl_seterr(err, BL_ENOMEM, "out of memory");
    if (settings) ds->settings = *settings;
    else bl_encode_settings_default(&ds->settings);
    st = bl_encode_settings_check(&ds->settings, err);
    if (st != BL_OK) goto fail;
    ds->name = bl_strdup(bl_reader_name(r));
    ds->runtime_column = bl_strdup(sc->runtime.name);
    ds->runtime_unit = sc->runtime_unit;
    ds->props = calloc(sc->n_props ? sc->n_props : 1, sizeof *ds->props);
    pb = calloc(sc->n_props ? sc->n_props : 1, sizeof *pb);
    if (!ds->name || !ds->runtime_column || !ds->props || !pb) {
        st = bl_seterr(err, BL_ENOMEM, "out of memory");
        goto fail;
    }
    ds->n_props = sc->n_props;

    ds->header_lines[0] = bl_reader_line(r);
    ds->header_lines[1] = bl_reader_last_line(r);
    /* Resolve every column the schema names against the header. */
    long c_scale = find_col(r, sc, &sc->scale_out, err, &st);
    if (c_scale < 0) goto fail;
    long c_run = find_col(r, sc, &sc->runtime, err, &st);
    if (c_run < 0) goto fail;
    for (size_t i = 0; i < sc->n_totals; i++)
        if (find_col(r, sc, &sc->totals[i], err, &st) < 0) goto fail;
    uint64_t limit = (uint64_t)1 << (ds->settings.vec_len - 1);
    for (size_t p = 0; p < sc->n_props; p++) {
        const bl_schema_prop *sp = &sc->props[p];
        bl_dataset_prop *dp = &ds->props[p];
        dp->name = bl_strdup(sp->name);
        if (!dp->name) { st = bl_seterr(err, BL_ENOMEM, "out of memory"); goto fail; }
        dp->essential = sp->essential;
        dp->kind = sp->kind;
        dp->cluster_total = sp->source == BL_SRC_PER_MACHINE;
        pb[p].cols = calloc(sp->n_cols ? sp->n_cols : 1, sizeof *pb[p].cols);
        if (!pb[p].cols) { st = bl_seterr(err, BL_ENOMEM, "out of memory"); goto fail; }
        for (size_t k = 0; k < sp->n_cols; k++) {
            pb[p].cols[k] = find_col(r, sc, &sp->cols[k], err, &st);
            if (pb[p].cols[k] < 0) goto fail;
            if (is_total_col(sc, sp->cols[k].name)) dp->cluster_total = 1;
        }
        /* a constant, or a per-machine value (× a scale-out ≥ 1), past the binarizer's bits: said once, at
         * the schema line, not on every row (the schema parser checks against the widest vector only) */
        if (sp->kind == BL_PROP_NUMBER && (sp->source == BL_SRC_CONST || sp->source == BL_SRC_PER_MACHINE) &&
            sp->per_machine >= (double)limit) {
            const unsigned bits = (unsigned)ds->settings.vec_len - 1;
            st = bl_seterr(err, BL_ERANGE, "%s:%zu:%zu: %s %s is too large: the binarizer keeps %u bits, so values "
                           "must be below 2^%u%s", sc->name, sp->line, sp->col,
                           sp->source == BL_SRC_CONST ? "constant" : "per_machine value", sp->value, bits, bits,
                           sp->source == BL_SRC_CONST ? "" : " (times the scale-out)");
            goto fail;
        }
    }

    size_t cap = 0;
    char **f;
    for (;;) {
        st = bl_reader_next(r, &f, err);
        if (st != BL_OK) goto bad_row; /* a ragged row or invalid UTF-8 (the line is consumed) */
        if (!f) break;
        size_t row = ds->n_rows;
        if (row == cap) {
            cap = cap ? cap * 2 : 256;
            if (cap > UINT32_MAX || grow_rows(ds, cap)) { st = bl_seterr(err, BL_ENOMEM, "out of memory"); goto fail; }
        }
        double x, t;
        st = scale_out_field(r, (size_t)c_scale, f[c_scale], &x, err);
        if (st != BL_OK) goto bad_row;
        st = runtime_field(r, (size_t)c_run, f[c_run], sc, skip_invalid, &t, err);
        if (st != BL_OK) goto bad_row;
        st = runtime_bound(r, (size_t)c_run, f[c_run], sc, t * sc->runtime_to_s, err);
        if (st != BL_OK) goto bad_row;
        ds->scale_out[row] = x;
        ds->runtime_s[row] = t * sc->runtime_to_s;
        ds->src_row[row] = bl_reader_rows(r) - 1;
        ds->src_lines[2 * row] = bl_reader_line(r);
        ds->src_lines[2 * row + 1] = bl_reader_last_line(r);

        /* every field of the row is checked before any value is kept: a row skipped leaves no trace */
        for (size_t p = 0; p < sc->n_props; p++) {
            const bl_schema_prop *sp = &sc->props[p];
            const bl_dataset_prop *dp = &ds->props[p];
            size_t at_col = sp->n_cols ? (size_t)pb[p].cols[0] : (size_t)c_scale;   /* for messages */
            char at[1200];
            pb[p].val.len = 0;
            int oom = 0;
            char num[32];
            switch (sp->source) {
            case BL_SRC_COLUMN:
                oom = sbuf_put(&pb[p].val, f[pb[p].cols[0]], strlen(f[pb[p].cols[0]]));
                break;
            case BL_SRC_JOIN:
                for (size_t k = 0; k < sp->n_cols && !oom; k++) {
                    const char *s = f[pb[p].cols[k]];
                    oom = (k && sbuf_put(&pb[p].val, " ", 1)) || sbuf_put(&pb[p].val, s, strlen(s));
                }
                break;
            case BL_SRC_TEMPLATE: {
                size_t k = 0;
                for (const char *q = sp->value; *q && !oom; q++) {
                    if (*q != '<') { oom = sbuf_put(&pb[p].val, q, 1); continue; }
                    const char *s = f[pb[p].cols[k++]];
                    oom = sbuf_put(&pb[p].val, s, strlen(s));
                    q = strchr(q, '>');   /* the parser guaranteed it */
                }
                if (!oom && !pb[p].val.s) oom = sbuf_put(&pb[p].val, "", 0);
                break;
            }
            case BL_SRC_CONST:
                oom = sbuf_put(&pb[p].val, sp->value, strlen(sp->value));
                break;
            case BL_SRC_PER_MACHINE: {
                double v = ds->settings.totals_per_machine ? sp->per_machine : sp->per_machine * x;
                if (v != floor(v) || v >= (double)limit) {
                    st = bl_seterr(err, BL_EFORMAT, "%sproperty '%.100s' = %s per machine × scale-out "
                                   "%.17g = %.17g is not a natural number below 2^%u", WHERE(r, (size_t)c_scale, at),
                                   sp->name, sp->value, x, v, (unsigned)ds->settings.vec_len - 1);
                    goto bad_row;
                }
                snprintf(num, sizeof num, "%.0f", v);
                oom = sbuf_put(&pb[p].val, num, strlen(num));
                break;
            }
            }
            if (oom) { st = bl_seterr(err, BL_ENOMEM, "out of memory"); goto fail; }
            if (sp->kind == BL_PROP_NUMBER && sp->source != BL_SRC_PER_MACHINE) {
                uint64_t v;
                bl_error e;
                if (bl_parse_natural(pb[p].val.s, &ds->settings, &v, &e) != BL_OK) {
                    st = bl_seterr(err, e.status, "%scolumn '%.100s' (property %s): %s", WHERE(r, at_col, at),
                                   sp->n_cols ? bl_reader_colname(r, at_col) : "-", sp->name, e.message);
                    goto bad_row;
                }
                /* A cluster total encoded per machine: the total ÷ the scale-out, to the nearest
                 * natural number (cluster totals are whole multiples of the machine's share). */
                if (dp->cluster_total && ds->settings.totals_per_machine) v = (uint64_t)llround((double)v / x);
                /* Canonical form, so "16" and "16.0" are one value. */
                snprintf(num, sizeof num, "%llu", (unsigned long long)v);
                pb[p].val.len = 0;
                if (sbuf_put(&pb[p].val, num, strlen(num))) { st = bl_seterr(err, BL_ENOMEM, "out of memory"); goto fail; }
            }
        }
        for (size_t p = 0; p < sc->n_props; p++) {
            bl_dataset_prop *dp = &ds->props[p];
            const sbuf val = pb[p].val;
            int ins;
            uint32_t id = idmap_get(&pb[p].map, XXH64(val.s, val.len, 0), val.s, value_eq, dp,
                                    (uint32_t)dp->n_values, &ins);
            if (id == UINT32_MAX) { st = bl_seterr(err, BL_ENOMEM, "out of memory"); goto fail; }
            if (ins) {
                if (dp->n_values == pb[p].values_cap) {
                    size_t nc = pb[p].values_cap ? pb[p].values_cap * 2 : 16;
                    char **nv = realloc(dp->values, nc * sizeof *nv);
                    if (!nv) { st = bl_seterr(err, BL_ENOMEM, "out of memory"); goto fail; }
                    dp->values = nv;
                    pb[p].values_cap = nc;
                }
                dp->values[dp->n_values] = bl_strdup(val.s);
                if (!dp->values[dp->n_values]) { st = bl_seterr(err, BL_ENOMEM, "out of memory"); goto fail; }
                dp->n_values++;
            }
            dp->row_value[row] = id;
        }
        ds->n_rows++;
        continue;
    bad_row:
        /* only a row's own fault is skipped, and only when asked; the first one stands otherwise (and an
         * unclosed quote, which swallowed the rest of the file, is no single row's) */
        if (!skip_invalid || (st != BL_EFORMAT && st != BL_ERANGE) || bl_reader_fatal(r)) goto fail;
        if (ds->n_skipped < BL_DATASET_SKIPPED_KEPT) {
            char *msg = err ? bl_strdup(err->message) : bl_strdup("invalid row");
            char **ns = realloc(ds->skipped, (ds->n_skipped + 1) * sizeof *ns);
            if (!msg || !ns) {
                free(msg);
                if (ns) ds->skipped = ns;
                st = bl_seterr(err, BL_ENOMEM, "out of memory");
                goto fail;
            }
            ds->skipped = ns;
            ds->skipped[ds->n_skipped] = msg;
        }
        ds->n_skipped++;
        st = BL_OK;
    }
    if (ds->n_rows == 0 && ds->n_skipped) {
        st = bl_seterr(err, BL_EFORMAT, "%s: no valid rows: all %zu were invalid (the first: %s)", bl_reader_name(r),
                       ds->n_skipped, ds->skipped[0]);
        goto fail;
    }
    if (ds->n_rows == 0) {
        st = bl_seterr(err, BL_EFORMAT, "%s:%zu:1: no data rows after the header", bl_reader_name(r),
                       bl_reader_line(r) + 1);
        goto fail;
    }
    ds->data_hash = bl_reader_hash(r);
    st = encode_values(ds, err);
    if (st != BL_OK) goto fail;
    st = build_contexts(ds, err);
    if (st != BL_OK) goto fail;
    goto done;
fail:
    bl_dataset_free(ds);
    ds = NULL;
done:
    if (pb) {
        for (size_t p = 0; p < sc->n_props; p++) {
            free(pb[p].cols);
            free(pb[p].val.s);
            idmap_free(&pb[p].map);
        }
    }
    free(pb);
    *out = ds;
    return st;
}

bl_status bl_dataset_load_schema(const char *data_path, const bl_schema *schema, char delim,
                                 const bl_encode_settings *settings, bl_dataset **out, bl_error *err) {
    return bl_dataset_load_schema_skip(data_path, schema, delim, settings, 0, out, err);
}

bl_status bl_dataset_load_schema_skip(const char *data_path, const bl_schema *schema, char delim,
                                      const bl_encode_settings *settings, int skip_invalid, bl_dataset **out,
                                      bl_error *err) {
    BL_CHECK_ARG(data_path && schema && out, err, "dataset: NULL argument");
    *out = NULL;
    bl_reader *r;
    bl_status st = bl_reader_open(&r, data_path, delim, err);
    if (st != BL_OK) return st;
    st = load_from_reader(r, schema, settings, skip_invalid, out, err);
    bl_reader_free(r);
    return st;
}

bl_status bl_dataset_load_mem(const char *name, const void *data, size_t len, char delim,
                              const bl_schema *schema, const bl_encode_settings *settings,
                              bl_dataset **out, bl_error *err) {
    return bl_dataset_load_mem_skip(name, data, len, delim, schema, settings, 0, out, err);
}

bl_status bl_dataset_load_mem_skip(const char *name, const void *data, size_t len, char delim,
                                   const bl_schema *schema, const bl_encode_settings *settings, int skip_invalid,
                                   bl_dataset **out, bl_error *err) {
    BL_CHECK_ARG(name && schema && out, err, "dataset: NULL argument");
    *out = NULL;
    bl_reader *r;
    bl_status st = bl_reader_open_mem(&r, name, data, len, delim, err);
    if (st != BL_OK) return st;
    st = load_from_reader(r, schema, settings, skip_invalid, out, err);
    bl_reader_free(r);
    return st;
}

bl_status bl_dataset_load(const char *data_path, const char *schema_path, char delim,
                          const bl_encode_settings *settings, bl_dataset **out, bl_error *err) {
    BL_CHECK_ARG(data_path && schema_path && out, err, "dataset: NULL argument");
    *out = NULL;
    bl_schema *sc;
    bl_status st = bl_schema_load(schema_path, &sc, err);
    if (st != BL_OK) return st;
    st = bl_dataset_load_schema(data_path, sc, delim, settings, out, err);
    bl_schema_free(sc);
    return st;
}

bl_status bl_dataset_load_skip(const char *data_path, const char *schema_path, char delim,
                               const bl_encode_settings *settings, int skip_invalid, bl_dataset **out, bl_error *err) {
    BL_CHECK_ARG(data_path && schema_path && out, err, "dataset: NULL argument");
    *out = NULL;
    bl_schema *sc;
    bl_status st = bl_schema_load(schema_path, &sc, err);
    if (st != BL_OK) return st;
    st = bl_dataset_load_schema_skip(data_path, sc, delim, settings, skip_invalid, out, err);
    bl_schema_free(sc);
    return st;
}

/* Appends formatted text to buf[*len..cap), cutting it short (with "...") when it does not fit. */
static void msg_put(char *buf, size_t cap, size_t *len, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

static void msg_put(char *buf, size_t cap, size_t *len, const char *fmt, ...) {
    if (cap == 0 || *len + 1 >= cap) return;
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(buf + *len, cap - *len, fmt, ap);
    va_end(ap);
    if (w < 0) return;
    if ((size_t)w >= cap - *len) {
        *len = cap - 1;
        if (cap >= 4) memcpy(buf + cap - 4, "...", 3);
    } else {
        *len += (size_t)w;
    }
}

/* A property that makes up a context's identity (build_contexts keys on the same ones). */
static int identity_prop(const bl_dataset_prop *p) { return p->essential && !p->cluster_total; }

size_t bl_dataset_context_spread(const bl_dataset *ds, char *buf, size_t cap) {
    size_t len = 0, n_diff = 0;
    if (cap) buf[0] = '\0';
    if (!ds || ds->n_contexts < 2) return 0;
    for (size_t p = 0; p < ds->n_props; p++) {
        const bl_dataset_prop *pr = &ds->props[p];
        if (!identity_prop(pr) || pr->n_values < 2) continue;
        unsigned char *seen = calloc(pr->n_values, 1);
        if (!seen) break;
        size_t k = 0;
        for (size_t c = 0; c < ds->n_contexts; c++) {
            if (ds->contexts[c].n_rows == 0) continue;
            uint32_t v = pr->row_value[ds->contexts[c].rows[0]];
            if (!seen[v]) { seen[v] = 1; k++; }
        }
        if (k > 1) {
            msg_put(buf, cap, &len, "%s%s: %zu values (", n_diff ? "; " : "", pr->name, k);
            size_t shown = 0;
            for (size_t v = 0; v < pr->n_values && shown < 3; v++)
                if (seen[v]) msg_put(buf, cap, &len, "%s'%.40s'", shown++ ? ", " : "", pr->values[v]);
            msg_put(buf, cap, &len, "%s)", k > shown ? ", ..." : "");
            n_diff++;
        }
        free(seen);
    }
    return n_diff;
}

size_t bl_dataset_context_diff(const bl_dataset *ds, size_t c, const bl_prop_value *ctx, size_t n_ctx,
                               char *buf, size_t cap) {
    size_t len = 0, n_diff = 0;
    if (cap) buf[0] = '\0';
    if (!ds || c >= ds->n_contexts || ds->contexts[c].n_rows == 0 || (n_ctx && !ctx)) return 0;
    size_t r = ds->contexts[c].rows[0];
    for (size_t p = 0; p < ds->n_props; p++) {
        const bl_dataset_prop *pr = &ds->props[p];
        if (pr->cluster_total) continue;
        const char *given = NULL;
        for (size_t j = 0; j < n_ctx && !given; j++)
            if (ctx[j].name && ctx[j].value && strcmp(ctx[j].name, pr->name) == 0) given = ctx[j].value;
        if (!given) continue;
        const char *have = pr->values[pr->row_value[r]];
        int same;
        uint64_t v;
        char num[32];
        if (pr->kind == BL_PROP_NUMBER && bl_parse_natural(given, &ds->settings, &v, NULL) == BL_OK) {
            snprintf(num, sizeof num, "%llu", (unsigned long long)v);
            same = strcmp(num, have) == 0;
        } else {
            same = strcmp(given, have) == 0;
        }
        if (same) continue;
        msg_put(buf, cap, &len, "%s%s: '%.60s' in the data, '%.60s' given", n_diff ? "; " : "", pr->name, have, given);
        n_diff++;
    }
    return n_diff;
}

bl_status bl_dataset_subset(const bl_dataset *ds, const size_t *rows, size_t n, bl_dataset **out,
                            bl_error *err) {
    BL_CHECK_ARG(ds && out && (rows || n == 0), err, "subset: NULL argument");
    *out = NULL;
    for (size_t i = 0; i < n; i++)
        BL_CHECK_ARG(rows[i] < ds->n_rows, err, "subset: row %zu is out of range (the data set has %zu rows)",
                     rows[i], ds->n_rows);
    bl_status st = BL_OK;
    uint32_t *remap = NULL;
    size_t *counts = NULL;
    size_t nn = n ? n : 1;
    bl_dataset *s = calloc(1, sizeof *s);
    if (!s) return bl_seterr(err, BL_ENOMEM, "out of memory");
    s->settings = ds->settings;
    s->data_hash = ds->data_hash;
    s->header_lines[0] = ds->header_lines[0];
    s->header_lines[1] = ds->header_lines[1];
    s->n_rows = n;
    s->name = bl_strdup(ds->name);
    s->runtime_column = ds->runtime_column ? bl_strdup(ds->runtime_column) : NULL;
    s->runtime_unit = ds->runtime_unit;
    s->scale_out = malloc(nn * sizeof *s->scale_out);
    s->runtime_s = malloc(nn * sizeof *s->runtime_s);
    s->src_row = malloc(nn * sizeof *s->src_row);
    s->src_lines = malloc(2 * nn * sizeof *s->src_lines);
    s->context = malloc(nn * sizeof *s->context);
    s->props = calloc(ds->n_props ? ds->n_props : 1, sizeof *s->props);
    remap = malloc((ds->n_contexts ? ds->n_contexts : 1) * sizeof *remap);
    if (!s->name || (ds->runtime_column && !s->runtime_column) || !s->scale_out || !s->runtime_s || !s->src_row ||
        !s->src_lines || !s->context || !s->props || !remap)
        goto oom;
    s->n_props = ds->n_props;
    for (size_t p = 0; p < ds->n_props; p++) {
        const bl_dataset_prop *a = &ds->props[p];
        bl_dataset_prop *b = &s->props[p];
        b->name = bl_strdup(a->name);
        b->essential = a->essential;
        b->kind = a->kind;
        b->cluster_total = a->cluster_total;
        b->values = calloc(a->n_values ? a->n_values : 1, sizeof *b->values);
        b->vectors = malloc((a->n_values ? a->n_values : 1) * ds->settings.vec_len * sizeof *b->vectors);
        b->row_value = malloc(nn * sizeof *b->row_value);
        if (!b->name || !b->values || !b->vectors || !b->row_value) goto oom;
        b->n_values = a->n_values;
        for (size_t i = 0; i < a->n_values; i++)
            if (!(b->values[i] = bl_strdup(a->values[i]))) goto oom;
        memcpy(b->vectors, a->vectors, a->n_values * ds->settings.vec_len * sizeof *b->vectors);
        for (size_t i = 0; i < n; i++) b->row_value[i] = a->row_value[rows[i]];
    }
    for (size_t c = 0; c < ds->n_contexts; c++) remap[c] = UINT32_MAX;
    size_t nc = 0;
    for (size_t i = 0; i < n; i++) {
        size_t r = rows[i];
        s->scale_out[i] = ds->scale_out[r];
        s->runtime_s[i] = ds->runtime_s[r];
        s->src_row[i] = ds->src_row[r];
        s->src_lines[2 * i] = ds->src_lines[2 * r];
        s->src_lines[2 * i + 1] = ds->src_lines[2 * r + 1];
        uint32_t c = ds->context[r];
        if (remap[c] == UINT32_MAX) remap[c] = (uint32_t)nc++;
        s->context[i] = remap[c];
    }
    s->contexts = calloc(nc ? nc : 1, sizeof *s->contexts);
    counts = calloc(nc ? nc : 1, sizeof *counts);
    if (!s->contexts || !counts) goto oom;
    s->n_contexts = nc;
    for (size_t c = 0; c < ds->n_contexts; c++)
        if (remap[c] != UINT32_MAX && !(s->contexts[remap[c]].label = bl_strdup(ds->contexts[c].label))) goto oom;
    for (size_t i = 0; i < n; i++) s->contexts[s->context[i]].n_rows++;
    for (size_t c = 0; c < nc; c++)
        if (!(s->contexts[c].rows = malloc(s->contexts[c].n_rows * sizeof(size_t)))) goto oom;
    for (size_t i = 0; i < n; i++) {
        uint32_t c = s->context[i];
        s->contexts[c].rows[counts[c]++] = i;
    }
    free(remap);
    free(counts);
    *out = s;
    return BL_OK;
oom:
    st = bl_seterr(err, BL_ENOMEM, "subset: out of memory");
    free(remap);
    free(counts);
    bl_dataset_free(s);
    return st;
}

bl_status bl_dataset_with_numbers(const bl_dataset *ds, uint32_t numbers, bl_dataset **out, bl_error *err) {
    BL_CHECK_ARG(ds && out, err, "bl_dataset_with_numbers: NULL argument");
    *out = NULL;
    bl_encode_settings es = ds->settings;
    es.numbers = numbers;
    bl_status st = bl_encode_settings_check(&es, err);
    if (st) return st;
    size_t *rows = malloc((ds->n_rows ? ds->n_rows : 1) * sizeof *rows);
    if (!rows) return bl_seterr(err, BL_ENOMEM, "out of memory");
    for (size_t r = 0; r < ds->n_rows; r++) rows[r] = r;
    bl_dataset *c = NULL;
    st = bl_dataset_subset(ds, rows, ds->n_rows, &c, err);
    free(rows);
    if (st) return st;
    c->settings = es;
    const size_t L = es.vec_len;
    for (size_t p = 0; p < c->n_props && !st; p++) {
        bl_dataset_prop *pr = &c->props[p];
        if (pr->kind != BL_PROP_NUMBER) continue;
        for (size_t i = 0; i < pr->n_values && !st; i++)
            st = bl_encode_value(pr->name, pr->kind, pr->values[i], &es, pr->vectors + i * L, err);
    }
    if (st) {
        bl_dataset_free(c);
        return st;
    }
    *out = c;
    return BL_OK;
}
