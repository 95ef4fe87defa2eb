/* api.c — the public C API of libbellamy (include/bellamy/bellamy.h): model files, predictors,
 * prediction for a context given as name/value pairs, choosing a scale-out, fine-tuning on runs
 * given as arrays or read from a data file (also in two steps, load then fine-tune, for programs that
 * look at the runs first: api_internal.h, public as train.h's bl_runs_load and bl_predictor_finetune_data),
 * and saving. The training face (bellamy/train.h) is train.c.
 *
 * A bl_predictor wraps a bl_model (src/model) plus what the public API adds: which properties are
 * cluster totals (from the schema stored in the model), so that such values can be given per
 * machine and scaled by each scale-out, and the value filled in for each property a context may
 * leave out (the stored schema's constants, or the one value the pre-training rows had). A request
 * is resolved once (request_open, shared by predicting and reviewing): its scale-outs checked, its
 * names matched, every value that does not vary with the scale-out encoded into its codes per member
 * (model.h's bl_model_ctx); cluster totals stay numbers, re-encoded at each scale-out. Requests
 * are compared with the model's records (model/seen.h) into a caller's bl_warnings list. A predictor
 * is never modified after it is built, which is what makes concurrent predictions safe: every call
 * works on its own stack or heap buffers (or the caller's warnings list) and reads the model through
 * const pointers only.
 *
 * Not here: the network, training loops and the HDF5 layout (src/model, src/modelfile); printing.
 */
#include "bellamy/bellamy.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_internal.h"
#include "common/error.h"
#include "common/str.h"
#include "common/suggest.h"
#include "data/dataset.h"
#include "data/reader.h"
#include "data/schema.h"
#include "model/model.h"
#include "model/seen.h"
#include "modelfile/modelfile.h"

struct bl_model_file {
    char    *path;
    char   **names;   /* [n] */
    size_t   n;
    unsigned flags;   /* BL_LOAD_* */
};


/* One warning about a request, and the list a caller owns. */
typedef struct warning {
    bl_warning_kind kind;
    char           *prop;     /* NULL: not about a property */
    char           *msg;
} warning;

struct bl_warnings {
    size_t   n, cap;
    warning *w;
};


/* ---- model files ------------------------------------------------------------------------------- */

bl_status bl_model_file_open(const char *path, bl_model_file **out, bl_error *err) {
    return bl_model_file_open_ex(path, 0, out, err);
}

bl_status bl_model_file_open_ex(const char *path, unsigned flags, bl_model_file **out, bl_error *err) {
    BL_CHECK_ARG(out, err, "bl_model_file_open: NULL out");
    *out = NULL;
    BL_CHECK_ARG(path && *path, err, "bl_model_file_open: no path");
    BL_CHECK_ARG(!(flags & ~BL_LOAD_ALLOW_UNSTAMPED), err, "bl_model_file_open_ex: unknown flags 0x%x",
                 flags & ~BL_LOAD_ALLOW_UNSTAMPED);
    bl_status cst = bl_cpu_kernels_check(err);
    if (cst != BL_OK) return cst;
    bl_model_file *f = calloc(1, sizeof *f);
    if (!f || !(f->path = bl_strdup(path))) {
        free(f);
        return bl_seterr(err, BL_ENOMEM, "out of memory");
    }
    f->flags = flags;
    _Static_assert(BL_LOAD_ALLOW_UNSTAMPED == BL_MF_ALLOW_UNSTAMPED, "one flag, one value");
    bl_status st = bl_mf_list_ex(path, flags, &f->names, &f->n, err);
    if (st != BL_OK) {
        free(f->path);
        free(f);
        return st;
    }
    *out = f;
    return BL_OK;
}

void bl_model_file_free(bl_model_file *f) {
    if (!f) return;
    bl_mf_names_free(f->names, f->n);
    free(f->path);
    free(f);
}

size_t bl_model_file_count(const bl_model_file *f) { return f ? f->n : 0; }

const char *bl_model_file_name(const bl_model_file *f, size_t i) {
    return f && i < f->n ? f->names[i] : NULL;
}

bl_status bl_model_file_load(const bl_model_file *f, const char *name, bl_predictor **out, bl_error *err) {
    BL_CHECK_ARG(f && out, err, "bl_model_file_load: NULL argument");
    *out = NULL;
    bl_model *m = NULL;
    bl_status st = bl_model_load_ex(f->path, name, f->flags, &m, err);
    if (st != BL_OK) return st;
    st = bl_predictor_wrap(m, out, err);
    if (st != BL_OK && st != BL_ENOMEM) bl_prefixerr(err, "%s", f->path); /* the stored schema's errors name no file */
    return st;
}

/* ---- predictors ---------------------------------------------------------------------------------- */

/* The model's cluster-total properties, the way the data-set loader marks them (a per_machine
 * source, or a source reading a column listed in cluster_totals): total[i] for property i, 1 or 0.
 * Returns 0 when the model has no (parsable) schema: total[] is then all 0 and unknown. */
static bl_status model_schema(const bl_model *m, unsigned char *total, char **fill, bl_schema **keep, bl_error *err) {
    memset(total, 0, m->n_props);
    if (!m->schema_text || !*m->schema_text) return BL_OK;
    bl_schema *sc = NULL;
    /* leniently: the schema was valid when the model was written (bl_schema_parse_stored) */
    bl_status st = bl_schema_parse_stored("schema stored in the model", m->schema_text, strlen(m->schema_text), &sc, err);
    if (st != BL_OK) /* never drop the cluster totals silently: requests would be encoded wrongly */
        return bl_prefixerr(err, "model '%.60s'", m->name ? m->name : "");
    for (size_t i = 0; i < sc->n_props; i++) {
        long k = bl_model_find_prop(m, sc->props[i].name);
        /* Only a number can be multiplied by the scale-out. */
        if (k >= 0 && bl_schema_prop_is_total(sc, i) && m->props[k].kind == BL_PROP_NUMBER) total[k] = 1;
        /* a constant of the schema (per_machine: per machine, as a context gives it) is what every
         * training row had: the value to use when a context leaves the property out */
        const bl_schema_prop *sp = &sc->props[i];
        if (k >= 0 && fill && !fill[k] && (sp->source == BL_SRC_CONST || sp->source == BL_SRC_PER_MACHINE) &&
            !(fill[k] = bl_strdup(sp->value))) {
            bl_schema_free(sc);
            return bl_seterr(err, BL_ENOMEM, "out of memory");
        }
    }
    if (keep) *keep = sc;
    else bl_schema_free(sc);
    return BL_OK;
}

static bl_status model_totals(const bl_model *m, unsigned char *total, bl_error *err) {
    return model_schema(m, total, NULL, NULL, err);
}

/* Marks the predictor's cluster totals. A model without a schema has none: its values are then
 * taken as given. */
static bl_status mark_totals(bl_predictor *p, bl_error *err) {
    bl_status st = model_schema(p->m, p->total, p->fill, &p->schema, err);
    for (size_t i = 0; i < p->m->n_props; i++) {
        p->any_total |= p->total[i];
        if (p->fill[i]) p->fill_from[i] = FILL_SCHEMA;
    }
    /* an optional property whose every pre-training row had one value: that value (an essential one
     * defines the context: it must be given, and the error names the value) */
    for (size_t i = 0; i < p->m->n_props && st == BL_OK; i++) {
        const char *only = bl_model_seen_only_value(p->m, i);
        if (p->fill[i] || p->m->props[i].essential || !only) continue;
        if (!(p->fill[i] = bl_strdup(only))) st = bl_seterr(err, BL_ENOMEM, "out of memory");
        else p->fill_from[i] = FILL_SEEN;
    }
    /* a model fine-tuned on runs of one context fills what it fills with that context's value: the
     * stored schema's constant is the pre-training environment's, not the one the runs came from */
    const bl_model_tuned *t = &p->m->tuned;
    for (size_t i = 0; i < p->m->n_props && st == BL_OK && t->known && t->contexts == 1 && t->context; i++) {
        const char *tv = t->context[i];
        if (!p->fill[i] || !tv || !*tv || strcmp(tv, p->fill[i]) == 0) continue;
        char *c = bl_strdup(tv);
        if (!c) { st = bl_seterr(err, BL_ENOMEM, "out of memory"); break; }
        free(p->fill[i]);
        p->fill[i] = c;
        p->fill_from[i] = FILL_TUNED;
    }
    return st;
}

/* Takes ownership of m (freed on failure). */
bl_status bl_predictor_wrap(bl_model *m, bl_predictor **out, bl_error *err) {
    bl_predictor *p = calloc(1, sizeof *p);
    const size_t np = m->n_props ? m->n_props : 1;
    if (p) {
        p->total = calloc(np, 1);
        p->fill = calloc(np, sizeof *p->fill);
        p->fill_from = calloc(np, 1);
    }
    if (!p || !p->total || !p->fill || !p->fill_from) {
        if (p) {
            free(p->total);
            free(p->fill);
            free(p->fill_from);
        }
        free(p);
        bl_model_free(m);
        return bl_seterr(err, BL_ENOMEM, "out of memory");
    }
    p->m = m;
    p->fc = bl_fcache_new(m); /* NULL (out of memory) only costs speed */
    /* the encoder's settings checked once, here, for every request */
    bl_status st = bl_encoder_init(&p->enc, &m->enc, err);
    if (st == BL_OK) st = mark_totals(p, err);
    if (st != BL_OK) {
        bl_predictor_free(p);
        return st;
    }
    *out = p;
    return BL_OK;
}

bl_status bl_predictor_load(const char *path, const char *name, bl_predictor **out, bl_error *err) {
    BL_CHECK_ARG(out, err, "bl_predictor_load: NULL out");
    *out = NULL;
    BL_CHECK_ARG(path && *path, err, "bl_predictor_load: no path");
    bl_status st = bl_cpu_kernels_check(err);
    if (st != BL_OK) return st;
    bl_model *m = NULL;
    st = bl_model_load(path, name, &m, err);
    if (st != BL_OK) return st;
    st = bl_predictor_wrap(m, out, err);
    if (st != BL_OK && st != BL_ENOMEM) bl_prefixerr(err, "%s", path);
    return st;
}

void bl_predictor_free(bl_predictor *p) {
    if (!p) return;
    bl_fcache_free(p->fc);
    bl_schema_free(p->schema);
    if (p->fill)
        for (size_t i = 0; i < p->m->n_props; i++) free(p->fill[i]);
    free(p->fill);
    free(p->fill_from);
    bl_model_free(p->m);
    free(p->total);
    free(p);
}

const char *bl_predictor_name(const bl_predictor *p) { return p && p->m->name ? p->m->name : ""; }

size_t bl_predictor_prop_count(const bl_predictor *p) { return p ? p->m->n_props : 0; }

bl_status bl_predictor_prop(const bl_predictor *p, size_t i, bl_prop_info *info) {
    if (!p || !info) return BL_EINVAL;
    if (i >= p->m->n_props) return BL_ERANGE;
    info->name = p->m->props[i].name;
    info->essential = p->m->props[i].essential;
    info->number = p->m->props[i].kind == BL_PROP_NUMBER;
    info->cluster_total = p->total[i];
    return BL_OK;
}

bl_status bl_predictor_info(const bl_predictor *p, bl_model_info *info) {
    if (!p || !info) return BL_EINVAL;
    const bl_model *m = p->m;
    info->pretrained = m->pretrained;
    info->rows = m->rows;
    info->contexts = m->contexts;
    info->epochs = m->epochs;
    info->finetune_runs = m->finetune_runs;
    info->finetune_epochs = m->finetune_epochs;
    info->best_val_loss = m->best_val_loss;
    info->finetune_mae_s = m->finetune_mae;
    info->dropout = m->dropout;
    info->learning_rate = m->lr;
    info->weight_decay = m->weight_decay;
    info->created = m->created;
    info->members = m->n_members;
    info->finetune_created = m->tuned.known ? m->tuned.created : "";
    return BL_OK;
}

/* ---- what the model knows ----------------------------------------------------------------------- */

bl_status bl_predictor_prop_default(const bl_predictor *p, size_t i, const char **value, int *from) {
    if (!p || !value) return BL_EINVAL;
    if (i >= p->m->n_props) return BL_ERANGE;
    *value = p->fill[i];
    if (from) *from = p->fill_from[i];
    return p->fill[i] ? BL_OK : BL_ENOTFOUND;
}

bl_status bl_predictor_prop_seen(const bl_predictor *p, size_t i, size_t k, const char **value, long long *rows) {
    if (!p || !value) return BL_EINVAL;
    if (i >= p->m->n_props) return BL_ERANGE;
    if (!p->m->seen.known) return BL_ENOTFOUND;
    size_t f, n;
    bl_model_seen_span(p->m, i, &f, &n);
    if (k >= n) return BL_ERANGE;
    *value = p->m->seen.value[f + k];
    if (rows) *rows = (long long)p->m->seen.count[f + k];
    return BL_OK;
}

bl_status bl_predictor_finetune_context(const bl_predictor *p, size_t i, const char **value) {
    if (!p || !value) return BL_EINVAL;
    if (i >= p->m->n_props) return BL_ERANGE;
    if (!p->m->tuned.known) return BL_ENOTFOUND;
    *value = p->m->tuned.context[i];
    return BL_OK;
}

bl_status bl_predictor_method(const bl_predictor *p, const char **method, double *ernest_weight, const char **why) {
    if (!p) return BL_EINVAL;
    static const char *const names[] = {"network", "blend", "ernest"};
    const bl_guard *g = &p->m->guard;
    if (method) *method = names[g->method >= 0 && g->method <= 2 ? g->method : 0];
    if (ernest_weight) *ernest_weight = g->ernest_w;
    if (why) *why = g->why;
    return BL_OK;
}

/* The pre-training scale-outs: recorded, or (files before 0.5) the scaler's bounds of the feature x. */
static void pretrain_scale_outs(const bl_model *m, double *lo, double *hi) {
    if (m->seen.known) {
        *lo = m->seen.scale_out_min;
        *hi = m->seen.scale_out_max;
    } else {
        *lo = m->scaler.lo[2];
        *hi = m->scaler.hi[2];
    }
}

bl_status bl_predictor_ranges(const bl_predictor *p, bl_model_ranges *out) {
    if (!p || !out) return BL_EINVAL;
    const bl_model *m = p->m;
    pretrain_scale_outs(m, &out->scale_out_min, &out->scale_out_max);
    out->runtime_min_s = m->seen.known ? m->seen.runtime_min_s : NAN;
    out->runtime_max_s = m->seen.known ? m->seen.runtime_max_s : NAN;
    const bl_model_tuned *t = &m->tuned;
    out->finetune_runs = t->known ? (long long)t->runs : 0;
    out->finetune_contexts = t->known ? (long long)t->contexts : 0;
    out->finetune_scale_out_min = t->known ? t->scale_out_min : NAN;
    out->finetune_scale_out_max = t->known ? t->scale_out_max : NAN;
    out->finetune_runtime_min_s = t->known ? t->runtime_min_s : NAN;
    out->finetune_runtime_max_s = t->known ? t->runtime_max_s : NAN;
    return BL_OK;
}

/* ---- warnings ------------------------------------------------------------------------------------ */

const char *bl_warning_kind_name(bl_warning_kind kind) {
    switch (kind) {
    case BL_WARN_SCALE_OUT: return "scale_out";
    case BL_WARN_UNSEEN_VALUE: return "unseen_value";
    case BL_WARN_NUMBER_RANGE: return "number_range";
    case BL_WARN_LEFT_OUT: return "left_out";
    case BL_WARN_CONTEXT: return "context";
    case BL_WARN_PROTOCOL: return "protocol";
    }
    return "unknown";
}

bl_status bl_warnings_new(bl_warnings **out, bl_error *err) {
    BL_CHECK_ARG(out, err, "bl_warnings_new: NULL out");
    *out = calloc(1, sizeof **out);
    return *out ? BL_OK : bl_seterr(err, BL_ENOMEM, "out of memory");
}

static void warnings_clear(bl_warnings *w) {
    if (!w) return;
    for (size_t i = 0; i < w->n; i++) {
        free(w->w[i].prop);
        free(w->w[i].msg);
    }
    w->n = 0;
}

void bl_warnings_free(bl_warnings *w) {
    if (!w) return;
    warnings_clear(w);
    free(w->w);
    free(w);
}

size_t bl_warnings_count(const bl_warnings *w) { return w ? w->n : 0; }

bl_warning_kind bl_warnings_kind(const bl_warnings *w, size_t i) {
    return w && i < w->n ? w->w[i].kind : (bl_warning_kind)0;
}

const char *bl_warnings_property(const bl_warnings *w, size_t i) { return w && i < w->n ? w->w[i].prop : NULL; }

const char *bl_warnings_message(const bl_warnings *w, size_t i) { return w && i < w->n ? w->w[i].msg : NULL; }

static bl_status warn(bl_warnings *w, bl_warning_kind kind, const char *prop, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* Adds a warning (w NULL: none is kept). */
static bl_status warn(bl_warnings *w, bl_warning_kind kind, const char *prop, const char *fmt, ...) {
    if (!w) return BL_OK;
    if (w->n == w->cap) {
        size_t cap = w->cap ? 2 * w->cap : 8;
        warning *nw = realloc(w->w, cap * sizeof *nw);
        if (!nw) return BL_ENOMEM;
        w->w = nw;
        w->cap = cap;
    }
    char msg[640];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    warning *x = &w->w[w->n];
    x->kind = kind;
    x->prop = prop ? bl_strdup(prop) : NULL;
    x->msg = bl_strdup(msg);
    if (!x->msg || (prop && !x->prop)) {
        free(x->prop);
        free(x->msg);
        return BL_ENOMEM;
    }
    w->n++;
    return BL_OK;
}

/* ---- contexts ------------------------------------------------------------------------------------ */

/* A context resolved to the model's property order: vals[i] the text of property i or NULL. */
typedef struct resolved {
    size_t         n;
    const char   **vals;        /* [n] points into the caller's pairs or the predictor's fills */
    unsigned char *filled;      /* [n] 1: the context left it out and the model filled it */
    double        *per_machine; /* [n] parsed value of a given cluster total; −1 for any other */
    unsigned char *varies;      /* [n] 1: a cluster total given per machine: its value varies with the scale-out */
    int            scaled;      /* some given value is a cluster total */
} resolved;

static void resolved_free(resolved *r) {
    free(r->vals);
    free(r->filled);
    free(r->per_machine);
    free(r->varies);
}

/* Writes "a, b, c" (the model's property names) into buf. */
static void prop_list(const bl_model *m, char *buf, size_t cap) {
    size_t len = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < m->n_props && len + 1 < cap; i++) {
        int w = snprintf(buf + len, cap - len, "%s%s", i ? ", " : "", m->props[i].name);
        if (w < 0) break;
        len += (size_t)w;
    }
}

/* Appends printf-style text to buf[*len..cap), stopping (with "...") when it does not fit. */
static void put(char *buf, size_t cap, size_t *len, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

static void put(char *buf, size_t cap, size_t *len, const char *fmt, ...) {
    if (*len + 1 >= cap) return;
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(buf + *len, cap - *len, fmt, ap);
    va_end(ap);
    if (w < 0) return;
    if ((size_t)w >= cap - *len) {
        *len = cap - 1;
        if (cap > 4) memcpy(buf + cap - 4, "...", 3);
    } else {
        *len += (size_t)w;
    }
}

/* "50..200" (numbers, per machine for cluster totals) or "'a', 'b', 'c', ..." (up to `most` of the
 * values property i had in the pre-training rows, the most frequent first): what it saw, for a
 * message. "" when the file predates the record. */
static void seen_brief(const bl_model *m, size_t i, size_t most, char *buf, size_t cap) {
    size_t len = 0, f, n;
    buf[0] = '\0';
    if (!m->seen.known) return;
    if (m->props[i].kind == BL_PROP_NUMBER && isfinite(m->seen.num_min[i])) {
        if (m->seen.num_min[i] == m->seen.num_max[i]) put(buf, cap, &len, "%.17g", m->seen.num_min[i]);
        else put(buf, cap, &len, "%.17g..%.17g", m->seen.num_min[i], m->seen.num_max[i]);
        if (m->seen.per_machine[i]) put(buf, cap, &len, " per machine");
        return;
    }
    bl_model_seen_span(m, i, &f, &n);
    for (size_t k = 0; k < n && k < most; k++) put(buf, cap, &len, "%s'%.40s'", k ? ", " : "", m->seen.value[f + k]);
    if ((size_t)m->seen.distinct[i] > most) put(buf, cap, &len, ", ... (%lld values)", (long long)m->seen.distinct[i]);
}

/* need_all: every property must be given or filled (fine-tuning a model needs the optional ones too).
 * w (may be NULL) receives a warning for each optional property left out that the model cannot fill. */
static bl_status resolve(const bl_predictor *p, const bl_prop_value *ctx, size_t n_ctx, int need_all,
                         resolved *r, bl_warnings *w, bl_error *err) {
    const bl_model *m = p->m;
    memset(r, 0, sizeof *r);
    r->n = m->n_props;
    size_t n = r->n ? r->n : 1;
    r->vals = calloc(n, sizeof *r->vals);
    r->filled = calloc(n, 1);
    r->per_machine = calloc(n, sizeof *r->per_machine);
    r->varies = calloc(n, 1);
    if (!r->vals || !r->filled || !r->per_machine || !r->varies) {
        resolved_free(r);
        return bl_seterr(err, BL_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < r->n; i++) r->per_machine[i] = -1;
    bl_status st = BL_OK;
    char list[400];
    if (n_ctx && !ctx) { st = bl_seterr(err, BL_EINVAL, "context: NULL array of %zu values", n_ctx); goto fail; }
    for (size_t j = 0; j < n_ctx; j++) {
        if (!ctx[j].name || !ctx[j].name[0]) {
            st = bl_seterr(err, BL_EINVAL, "context value %zu has no property name", j);
            goto fail;
        }
        long k = bl_model_find_prop(m, ctx[j].name);
        if (k < 0) {
            char mean[300];
            const char *cands[BL_BNET_PROPS_MAX + 1];
            size_t nc = 0;
            for (size_t i = 0; i < m->n_props && nc < BL_BNET_PROPS_MAX; i++) cands[nc++] = m->props[i].name;
            bl_suggest(ctx[j].name, cands, nc, "", mean, sizeof mean);
            prop_list(m, list, sizeof list);
            st = bl_seterr(err, BL_EINVAL, "unknown property '%.80s'%s (model '%.60s' has: %s)", ctx[j].name, mean,
                           bl_predictor_name(p), list);
            goto fail;
        }
        if (!ctx[j].value) {
            st = bl_seterr(err, BL_EINVAL, "property '%.80s' has no value", ctx[j].name);
            goto fail;
        }
        if (r->vals[k]) {
            st = bl_seterr(err, BL_EINVAL, "property '%.80s' is given twice", ctx[j].name);
            goto fail;
        }
        r->vals[k] = ctx[j].value;
    }
    /* left out: filled from what the model knows, else named (every missing one in one message) */
    size_t n_ess = 0, n_opt = 0;
    for (size_t i = 0; i < r->n; i++) {
        if (r->vals[i]) continue;
        if (p->fill[i]) {
            r->vals[i] = p->fill[i];
            r->filled[i] = 1;
        } else if (m->props[i].essential) {
            n_ess++;
        } else if (need_all) {
            n_opt++;
        } else if (m->seen.known) {
            char seen[200];
            seen_brief(m, i, 3, seen, sizeof seen);
            if (warn(w, BL_WARN_LEFT_OUT, m->props[i].name, "optional property '%.80s' is left out, but every "
                     "pre-training row had it (%s): the prediction then rests on the other properties alone; give "
                     "its value", m->props[i].name, seen) != BL_OK) {
                st = bl_seterr(err, BL_ENOMEM, "out of memory");
                goto fail;
            }
        }
    }
    if (n_ess + n_opt) {
        char msg[sizeof err->message];
        size_t len = 0, shown = 0;
        const int one = n_ess + n_opt == 1;
        if (n_ess == 1 && n_opt == 0) put(msg, sizeof msg, &len, "essential property ");
        else if (n_opt == 0) put(msg, sizeof msg, &len, "%zu essential properties are missing: ", n_ess);
        else if (one) put(msg, sizeof msg, &len, "optional property ");
        else if (n_ess == 0) put(msg, sizeof msg, &len, "%zu optional properties are missing: ", n_opt);
        else put(msg, sizeof msg, &len, "%zu properties are missing: ", n_ess + n_opt);
        for (size_t i = 0; i < r->n; i++) {
            if (r->vals[i] || (!m->props[i].essential && !need_all)) continue;
            char seen[160];
            seen_brief(m, i, 2, seen, sizeof seen);
            put(msg, sizeof msg, &len, "%s%s'%.60s'%s", shown++ ? ", " : "",
                n_opt && n_ess ? (m->props[i].essential ? "essential " : "optional ") : "", m->props[i].name,
                one ? " is missing" : "");
            if (seen[0]) put(msg, sizeof msg, &len, " (seen in training: %s)", seen);
        }
        if (n_opt) put(msg, sizeof msg, &len, "; fine-tuning needs every property");
        st = bl_seterr(err, BL_EINVAL, "%s", msg);
        goto fail;
    }
    for (size_t k = 0; k < r->n; k++) {
        if (!p->total[k]) continue;
        /* Checked here so that the message says "per machine"; the encoder checks the rest. */
        const char *v = r->vals[k];
        if (!v) continue;
        char *end;
        double d = strtod(v, &end);
        if (!*v || *end || !(d >= 0) || d != floor(d) || d >= 9007199254740992.0) {
            st = bl_seterr(err, BL_EFORMAT, "property '%.80s' is a number per machine: '%.40s' is %s", m->props[k].name,
                           v, *v && !*end && d >= 9007199254740992.0 ? "too large (below 2^53 expected)"
                                                                     : "not a natural number");
            goto fail;
        }
        /* A model that encodes totals per machine reads the value as given. */
        if (!m->enc.totals_per_machine) {
            r->per_machine[k] = d;
            r->varies[k] = 1;
            r->scaled = 1;
        }
    }
    return BL_OK;
fail:
    resolved_free(r);
    return st;
}

/* The one check of a request's scale-outs (inside, they are taken as checked). */
static bl_status check_scale_outs(const double *x, size_t n, bl_error *err) {
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i]) || !(x[i] > 0))
            return bl_seterr(err, BL_ERANGE, "scale-out %g is not a positive number", x[i]);
    return BL_OK;
}

/* Property i's value at scale-out x: a cluster total is the per-machine value × x, rounded to a whole
 * number as the data sets record it. */
static double total_at(const resolved *r, size_t i, double x) { return nearbyint(r->per_machine[i] * x); }

/* A request resolved once: its context in the model's order, every value encoded into its codes per
 * member but the cluster totals, which are kept as numbers and re-encoded per scale-out. */
typedef struct request {
    resolved     r;
    bl_model_ctx c;
} request;

static void request_free(request *q) {
    bl_model_ctx_free(&q->c);
    resolved_free(&q->r);
}

/* The checks and encoding a prediction and a review share: the scale-outs, the context's names and
 * values (w: warnings about what it leaves out), and every value that does not vary with the scale-out. */
static bl_status request_open(const bl_predictor *p, const bl_prop_value *ctx, size_t n_ctx, const double *x,
                              size_t n, bl_warnings *w, request *q, bl_error *err) {
    bl_status st = check_scale_outs(x, n, err);
    if (st != BL_OK) return st;
    st = resolve(p, ctx, n_ctx, 0, &q->r, w, err);
    if (st != BL_OK) return st;
    st = bl_model_ctx_init(&q->c, p->m, &p->enc, q->r.vals, q->r.varies, err);
    if (st != BL_OK) resolved_free(&q->r);
    return st;
}

/* The context term at scale-out x: the cluster totals at x encoded, the rest as encoded once. */
static bl_status term_at(const bl_predictor *p, request *q, double x, double *ctx, bl_error *err) {
    for (size_t i = 0; i < q->r.n && q->r.scaled; i++) {
        if (!q->r.varies[i]) continue;
        bl_status st = bl_model_ctx_number(&q->c, &p->enc, i, total_at(&q->r, i, x), err);
        if (st != BL_OK) return st;
    }
    bl_model_ctx_term(&q->c, ctx);
    return BL_OK;
}

/* "17..200" or "1 and 17..200": the scale-outs of x[0..n) below lo and above hi (each side as its
 * smallest..largest, or one value); returns how many there are. */
static size_t outside(const double *x, size_t n, double lo, double hi, char *buf, size_t cap) {
    double bmin = INFINITY, bmax = -INFINITY, amin = INFINITY, amax = -INFINITY;
    size_t k = 0, len = 0;
    for (size_t i = 0; i < n; i++) {
        if (x[i] < lo) { bmin = fmin(bmin, x[i]); bmax = fmax(bmax, x[i]); k++; }
        if (x[i] > hi) { amin = fmin(amin, x[i]); amax = fmax(amax, x[i]); k++; }
    }
    buf[0] = '\0';
    if (bmin == bmax) put(buf, cap, &len, "%.10g", bmin);
    else if (bmin < bmax) put(buf, cap, &len, "%.10g..%.10g", bmin, bmax);
    if (len && amin <= amax) put(buf, cap, &len, " and ");
    if (amin == amax) put(buf, cap, &len, "%.10g", amin);
    else if (amin < amax) put(buf, cap, &len, "%.10g..%.10g", amin, amax);
    return k;
}

/* The scale-outs outside the ranges the model was pre-trained and fine-tuned on: one warning. */
static bl_status review_scale_outs(const bl_predictor *p, const double *x, size_t n, bl_warnings *w) {
    if (!w || n == 0) return BL_OK;
    const bl_model *m = p->m;
    double lo, hi;
    pretrain_scale_outs(m, &lo, &hi);
    char pre[80], ft[80], msg[600];
    size_t len = 0, k_pre = 0, k_ft = 0;
    if (isfinite(lo) && isfinite(hi) && lo > 0) k_pre = outside(x, n, lo, hi, pre, sizeof pre);
    const bl_model_tuned *t = &m->tuned;
    if (t->known) k_ft = outside(x, n, t->scale_out_min, t->scale_out_max, ft, sizeof ft);
    if (!k_pre && !k_ft) return BL_OK;
    msg[0] = '\0';
    if (k_pre)
        put(msg, sizeof msg, &len, "%s %s %s outside the range of scale-outs the model was pre-trained on "
            "(%.10g..%.10g)", k_pre == 1 ? "scale-out" : "scale-outs", pre, k_pre == 1 ? "lies" : "lie", lo, hi);
    if (k_ft) {
        char rg[64];
        if (t->scale_out_min == t->scale_out_max) snprintf(rg, sizeof rg, "%.10g only", t->scale_out_min);
        else snprintf(rg, sizeof rg, "%.10g..%.10g", t->scale_out_min, t->scale_out_max);
        put(msg, sizeof msg, &len, "%s%s %s %s outside the range of the %lld run%s it was fine-tuned on (%s)",
            k_pre ? "; " : "", k_ft == 1 ? "scale-out" : "scale-outs", ft, k_ft == 1 ? "lies" : "lie",
            (long long)t->runs, t->runs == 1 ? "" : "s", rg);
    }
    put(msg, sizeof msg, &len, ": predictions there extrapolate; %s",
        k_ft ? "fine-tune on runs that bracket the scale-outs you consider" :
               "consider scale-outs inside that range, or fine-tune on runs at the scale-outs you consider");
    return warn(w, BL_WARN_SCALE_OUT, NULL, "%s", msg);
}

/* The values given (not filled) that no training row had: text never seen (the closest seen named)
 * and numbers outside the range seen; a value of the fine-tuning runs' context counts as seen. */
static bl_status review_values(const bl_predictor *p, const resolved *r, bl_warnings *w) {
    const bl_model *m = p->m;
    if (!w || !m->seen.known) return BL_OK;
    bl_status st = BL_OK;
    for (size_t i = 0; i < r->n && st == BL_OK; i++) {
        const char *v = r->vals[i];
        if (!v || r->filled[i]) continue;
        const char *tuned = m->tuned.known ? m->tuned.context[i] : NULL;
        const char *name = m->props[i].name;
        size_t f, n;
        bl_model_seen_span(m, i, &f, &n);
        if (m->props[i].kind == BL_PROP_NUMBER) {
            const double x = strtod(v, NULL);
            double lo = m->seen.num_min[i], hi = m->seen.num_max[i];
            if (!isfinite(lo) || !isfinite(hi)) continue;
            const char *unit = m->seen.per_machine[i] ? " per machine" : "";
            if (x >= lo && x <= hi) continue;
            if (tuned && *tuned && strtod(tuned, NULL) == x) continue;
            st = warn(w, BL_WARN_NUMBER_RANGE, name, "%.80s %.40s%s lies outside the values the pre-training rows "
                      "had (%.17g..%.17g%s): the prediction extrapolates; fine-tune on runs of this context (their "
                      "runs bring the value in)", name, v, unit, lo, hi, unit);
            continue;
        }
        int found = tuned && strcmp(tuned, v) == 0;
        for (size_t k = 0; k < n && !found; k++) found = strcmp(m->seen.value[f + k], v) == 0;
        if (found || (size_t)m->seen.distinct[i] > n) continue; /* not every value kept: cannot tell */
        /* the closest values seen, by edit distance (ties: the more frequent) */
        size_t best[3] = {0, 0, 0}, dist[3] = {(size_t)-1, (size_t)-1, (size_t)-1}, nb = 0;
        for (size_t k = 0; k < n; k++) {
            size_t d = bl_edit_distance(v, m->seen.value[f + k]);
            size_t pos = nb < 3 ? nb : 3;
            while (pos > 0 && d < dist[pos - 1]) pos--;
            if (pos >= 3) continue;
            for (size_t q = 2; q > pos; q--) { best[q] = best[q - 1]; dist[q] = dist[q - 1]; }
            best[pos] = f + k;
            dist[pos] = d;
            if (nb < 3) nb++;
        }
        char close[300];
        size_t len = 0;
        close[0] = '\0';
        for (size_t q = 0; q < nb; q++) put(close, sizeof close, &len, "%s'%.60s'", q ? ", " : "", m->seen.value[best[q]]);
        st = warn(w, BL_WARN_UNSEEN_VALUE, name, "%.80s '%.60s' is a value no pre-training row had (closest seen: "
                  "%s; %lld value%s in all): the model reads it by its characters alone; check the spelling, or "
                  "fine-tune on runs of this context", name, v, nb ? close : "none",
                  (long long)m->seen.distinct[i], m->seen.distinct[i] == 1 ? "" : "s");
    }
    return st;
}

/* The properties in which the context differs from the one the model was fine-tuned for (a value its
 * runs all shared): how many, and "name value (runs: value), ..." into buf. */
static size_t context_differs(const bl_predictor *p, const resolved *r, char *buf, size_t cap) {
    const bl_model *m = p->m;
    size_t k = 0, len = 0;
    buf[0] = '\0';
    if (!m->tuned.known || !m->tuned.context) return 0;
    for (size_t i = 0; i < r->n; i++) {
        const char *t = m->tuned.context[i], *v = r->vals[i];
        if (!t || !*t || !v) continue;
        int same = m->props[i].kind == BL_PROP_NUMBER ? strtod(t, NULL) == strtod(v, NULL) : strcmp(t, v) == 0;
        if (same) continue;
        put(buf, cap, &len, "%s%.60s %.40s%s (runs: %.40s)", k ? ", " : "", m->props[i].name, v,
            p->total[i] ? " per machine" : "", t);
        k++;
    }
    return k;
}

/* A fine-tuning by other options than the calibration's: its intervals assume the calibrated protocol. */
static bl_status review_protocol(const bl_predictor *p, bl_warnings *w) {
    const bl_model *m = p->m;
    if (!w || !m->calib.known || !m->tuned.known || !m->calib.protocol || !m->tuned.protocol ||
        m->calib.protocol == m->tuned.protocol)
        return BL_OK;
    return warn(w, BL_WARN_PROTOCOL, NULL, "the model was fine-tuned with other options than those its intervals were "
                "calibrated for (e.g. another stopping rule, learning rates, or the guard off): the intervals assume "
                "the calibrated fine-tuning; fine-tune with the defaults for intervals that hold");
}

static bl_status review_context(const bl_predictor *p, const resolved *r, bl_warnings *w) {
    if (review_protocol(p, w) != BL_OK) return BL_ENOMEM;
    char diff[400];
    const size_t k = context_differs(p, r, diff, sizeof diff);
    if (!w || !k) return BL_OK;
    return warn(w, BL_WARN_CONTEXT, NULL, "the model was fine-tuned on %lld run%s of another context (%s): for this "
                "context no run of its own informs the prediction, which rests on the pre-trained network as that "
                "fine-tuning moved it, and its interval is sized as a pre-trained model's on an unseen context, "
                "doubled; fine-tune on runs of this context, or predict with the pre-trained model",
                (long long)p->m->tuned.runs, p->m->tuned.runs == 1 ? "" : "s", diff);
}

/* The warnings about a request that was resolved: its values, its context and its scale-outs. */
static bl_status review(const bl_predictor *p, const resolved *r, const double *x, size_t n, bl_warnings *w,
                        bl_error *err) {
    if (review_values(p, r, w) != BL_OK || review_context(p, r, w) != BL_OK || review_scale_outs(p, x, n, w) != BL_OK)
        return bl_seterr(err, BL_ENOMEM, "out of memory");
    return BL_OK;
}

bl_status bl_predictor_review(const bl_predictor *p, const bl_prop_value *ctx, size_t n_ctx, const double *scale_outs,
                              size_t n, bl_warnings *w, bl_error *err) {
    warnings_clear(w);
    BL_CHECK_ARG(p, err, "bl_predictor_review: NULL predictor");
    BL_CHECK_ARG(n == 0 || scale_outs, err, "bl_predictor_review: NULL scale-outs");
    request q;
    bl_status st = request_open(p, ctx, n_ctx, scale_outs, n, w, &q, err);
    if (st != BL_OK) return st;
    double c[BL_BNET_DIM_MAX];
    if (q.r.scaled) st = term_at(p, &q, 1.0, c, err); /* the cluster totals as given, per machine */
    if (st == BL_OK) st = review(p, &q.r, scale_outs, n, w, err);
    request_free(&q);
    if (st != BL_OK) warnings_clear(w);
    return st;
}

bl_status bl_predictor_check_context(const bl_predictor *p, const bl_prop_value *ctx, size_t n_ctx,
                                     bl_error *err) {
    BL_CHECK_ARG(p, err, "bl_predictor_check_context: NULL predictor");
    return bl_predictor_review(p, ctx, n_ctx, NULL, 0, NULL, err);
}

/* bl_predict; nan_ok: a prediction that is not a positive number stays in runtimes_s (bl_choose_scale_out
 * leaves it out); w: the warnings about the request (may be NULL); *mismatch (may be NULL): 1 when a
 * fine-tuned model is asked about another context */
static bl_status predict_impl(const bl_predictor *p, const bl_prop_value *ctx, size_t n_ctx, const double *scale_outs,
                              size_t n, double *runtimes_s, int nan_ok, bl_warnings *w, int *mismatch, bl_error *err);

bl_status bl_predict(const bl_predictor *p, const bl_prop_value *ctx, size_t n_ctx, const double *scale_outs,
                     size_t n, double *runtimes_s, bl_error *err) {
    return predict_impl(p, ctx, n_ctx, scale_outs, n, runtimes_s, 0, NULL, NULL, err);
}

bl_status bl_predict_warn(const bl_predictor *p, const bl_prop_value *ctx, size_t n_ctx, const double *scale_outs,
                          size_t n, double *runtimes_s, bl_warnings *w, bl_error *err) {
    return predict_impl(p, ctx, n_ctx, scale_outs, n, runtimes_s, 0, w, NULL, err);
}

/* The raw predictions at the ends of the model's support (bl_model_support) for request q (c1: its
 * term when no value varies with the scale-out), so that predictions beyond them can be floored
 * (bl_model_floor). */
static bl_status support_ends(const bl_predictor *p, request *q, const double *c1, double *lo, double *hi,
                              double *r_lo, double *r_hi, bl_error *err) {
    bl_model_support(p->m, lo, hi);
    const double xs[2] = {*lo, *hi};
    double out[2], c[BL_BNET_DIM_MAX];
    bl_status st = BL_OK;
    for (int e = 0; e < 2 && st == BL_OK; e++) {
        if (q->r.scaled) st = term_at(p, q, xs[e], c, err);
        if (st == BL_OK) st = bl_model_predict_cached(p->m, p->fc, q->r.scaled ? c : c1, xs + e, 1, out + e, err);
    }
    *r_lo = st == BL_OK ? out[0] : NAN;
    *r_hi = st == BL_OK ? out[1] : NAN;
    return st;
}

static bl_status predict_impl(const bl_predictor *p, const bl_prop_value *ctx, size_t n_ctx, const double *scale_outs,
                              size_t n, double *runtimes_s, int nan_ok, bl_warnings *w, int *mismatch, bl_error *err) {
    warnings_clear(w);
    BL_CHECK_ARG(p, err, "bl_predict: NULL predictor");
    BL_CHECK_ARG(n == 0 || (scale_outs && runtimes_s), err, "bl_predict: NULL array");
    request q;
    bl_status st = request_open(p, ctx, n_ctx, scale_outs, n, w, &q, err);
    if (st != BL_OK) return st;
    const resolved *r = &q.r;
    double c[BL_BNET_DIM_MAX];
    if (!r->scaled) {
        /* The common case: one context term serves every scale-out. */
        bl_model_ctx_term(&q.c, c);
        st = bl_model_predict_cached(p->m, p->fc, c, scale_outs, n, runtimes_s, err);
    } else {
        for (size_t i = 0; i < n && st == BL_OK; i++) {
            st = term_at(p, &q, scale_outs[i], c, err);
            if (st != BL_OK) /* the value that failed is a per-machine value × the scale-out: say so */
                bl_prefixerr(err, "at scale-out %g (cluster totals are the per-machine values × %g)", scale_outs[i],
                             scale_outs[i]);
            if (st == BL_OK) st = bl_model_predict_cached(p->m, p->fc, c, scale_outs + i, 1, runtimes_s + i, err);
        }
    }
    if (st == BL_OK) { /* no runtime <= 0: beyond the support, no faster than linear scaling; below the
                          least runtime the model knows, a positive stand-in (calib.h) */
        double slo, shi, r_lo = NAN, r_hi = NAN;
        int beyond = 0;
        bl_model_support(p->m, &slo, &shi);
        for (size_t i = 0; i < n && !beyond; i++) beyond = scale_outs[i] < slo || scale_outs[i] > shi;
        if (beyond) st = support_ends(p, &q, c, &slo, &shi, &r_lo, &r_hi, err);
        for (size_t i = 0; i < n && st == BL_OK; i++)
            runtimes_s[i] = bl_model_finish(p->m, scale_outs[i], runtimes_s[i], r_lo, r_hi);
    }
    if (st == BL_OK && w) { /* stand-ins: the model knows no runtime there */
        const double F = bl_model_runtime_floor(p->m);
        double a = INFINITY, b = -INFINITY;
        size_t k = 0;
        for (size_t i = 0; i < n; i++)
            if (isfinite(runtimes_s[i]) && runtimes_s[i] < F) {
                k++;
                a = fmin(a, scale_outs[i]);
                b = fmax(b, scale_outs[i]);
            }
        char where[80];
        if (a == b) snprintf(where, sizeof where, "scale-out %.10g", a);
        else snprintf(where, sizeof where, "%zu scale-outs in %.10g..%.10g", k, a, b);
        if (k && warn(w, BL_WARN_SCALE_OUT, NULL, "%s: the model predicts no runtime it knows (its output falls below "
                      "%.3g s, 1 %% of the least runtime it was trained or fine-tuned on): the value shown is a "
                      "positive stand-in, the runtime is unknown there, never chosen; fine-tune on runs nearer those "
                      "scale-outs", where, F) != BL_OK)
            st = bl_seterr(err, BL_ENOMEM, "out of memory");
    }
    if (st == BL_OK && mismatch) {
        char diff[8];
        *mismatch = context_differs(p, r, diff, sizeof diff) > 0;
    }
    if (st == BL_OK) st = review(p, r, scale_outs, n, w, err);
    request_free(&q);
    /* a NaN, an infinity or a runtime <= 0 would pass for a runtime further on: scale-outs so far outside
     * the model's range that its arithmetic overflows (e.g. 1e-310, whose 1/x is infinite; a log-runtime
     * output past exp()'s range), or a damaged model, are an error here */
    for (size_t i = 0; i < n && st == BL_OK && !nan_ok; i++)
        if (!isfinite(runtimes_s[i]) || !(runtimes_s[i] > 0))
            st = bl_seterr(err, BL_ERANGE, "scale-out %g: the model's prediction is %s (the scale-out is too far "
                           "outside the range it was trained on, or the model is damaged)", scale_outs[i],
                           isnan(runtimes_s[i]) ? "not a number" : isinf(runtimes_s[i]) ? "infinite" : "not positive");
    if (st != BL_OK) warnings_clear(w);
    return st;
}

bl_status bl_predict_interval(const bl_predictor *p, const bl_prop_value *ctx, size_t n_ctx, const double *scale_outs,
                              size_t n, double coverage, double *lo_s, double *runtimes_s, double *hi_s, int *why,
                              bl_warnings *w, bl_error *err) {
    warnings_clear(w);
    BL_CHECK_ARG(p, err, "bl_predict_interval: NULL predictor");
    BL_CHECK_ARG(n == 0 || (scale_outs && lo_s && runtimes_s && hi_s), err, "bl_predict_interval: NULL array");
    if (!(coverage > 0 && coverage < 1))
        return bl_seterr(err, BL_EINVAL, "coverage %g: must lie strictly between 0 and 1 (e.g. 0.9 for a 90 %% "
                         "interval)", coverage);
    if (!p->m->calib.known) { /* BL_EUNSUPPORTED naming the fix */
        const bl_interval_basis none = {0};
        return bl_model_interval(p->m, &none, coverage, NULL, NULL, 0, NULL, NULL, NULL, err);
    }
    int mismatch = 0;
    bl_status st = predict_impl(p, ctx, n_ctx, scale_outs, n, runtimes_s, 0, w, &mismatch, err);
    if (st != BL_OK) return st;
    bl_interval_basis b;
    bl_interval_basis_of(p->m, mismatch, &b);
    st = bl_model_interval(p->m, &b, coverage, scale_outs, runtimes_s, n, lo_s, hi_s, why, err);
    if (st != BL_OK) warnings_clear(w);
    return st;
}

double bl_predictor_runtime_floor(const bl_predictor *p) { return p ? bl_model_runtime_floor(p->m) : NAN; }

bl_status bl_predictor_calibration(const bl_predictor *p, bl_calibration_info *out) {
    if (!p || !out) return BL_EINVAL;
    memset(out, 0, sizeof *out);
    const bl_model *m = p->m;
    if (!m->calib.known) return BL_OK;
    out->present = 1;
    out->contexts = m->calib.contexts;
    out->finetunings = m->calib.finetunings;
    out->seconds = m->calib.seconds;
    bl_interval_basis b;
    bl_interval_basis_of(m, 0, &b);
    out->runs = b.k;
    out->factor = b.factor;
    return BL_OK;
}

bl_status bl_predictor_calibration_quantile(const bl_predictor *p, int runs, int inside, double coverage, double *q,
                                            long long *contexts, bl_error *err) {
    BL_CHECK_ARG(p && q, err, "bl_predictor_calibration_quantile: NULL argument");
    if (contexts) *contexts = 0;
    if (!(coverage > 0 && coverage < 1))
        return bl_seterr(err, BL_EINVAL, "coverage %g: must lie strictly between 0 and 1", coverage);
    if (runs < 0) return bl_seterr(err, BL_EINVAL, "runs %d: must be 0 or more", runs);
    if (!p->m->calib.known)
        return bl_seterr(err, BL_EUNSUPPORTED, "model '%s' carries no calibration (pre-train it again with 0.6 or later)",
                         bl_predictor_name(p));
    const int k = runs > BL_CALIB_KMAX ? BL_CALIB_KMAX : runs;
    /* as an interval takes it: an empty cell falls back to fewer runs (the contexts those had) */
    int64_t g = 0;
    for (int kk = k; kk >= 0; kk--) {
        const int cell = kk == 0 ? 0 : kk == 1 ? 3 : 2 * kk + (inside && kk >= 2 ? 0 : 1);
        if (!isnan(bl_calib_quantile(&p->m->calib, cell, coverage, &g))) break;
    }
    *q = bl_calib_cell_quantile(&p->m->calib, k, inside && k >= 2, coverage);
    if (contexts) *contexts = (long long)g;
    return BL_OK;
}

bl_status bl_predictor_finetune_fit(const bl_predictor *p, size_t i, double *scale_out, double *runtime_s,
                                    double *predicted_s, double *prior_s, size_t *n_runs) {
    if (!p) return BL_EINVAL;
    const bl_model_tuned *t = &p->m->tuned;
    if (n_runs) *n_runs = t->known ? t->n_fit : 0;
    if (!t->known || !t->n_fit) return BL_ENOTFOUND;
    if (i >= t->n_fit) return BL_ERANGE;
    if (scale_out) *scale_out = t->fit_x[i];
    if (runtime_s) *runtime_s = t->fit_y[i];
    if (predicted_s) *predicted_s = t->fit_pred[i];
    if (prior_s) *prior_s = t->fit_prior[i];
    return BL_OK;
}

bl_status bl_predict_range(const bl_predictor *p, const bl_prop_value *ctx, size_t n_ctx, int first, int last,
                           double *runtimes_s, bl_error *err) {
    BL_CHECK_ARG(p && runtimes_s, err, "bl_predict_range: NULL argument");
    if (first < 1 || last < first)
        return bl_seterr(err, BL_ERANGE, "scale-out range %d..%d: need 1 <= first <= last", first, last);
    size_t n = (size_t)last - (size_t)first + 1;
    double *x = malloc(n * sizeof *x);
    if (!x) return bl_seterr(err, BL_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) x[i] = (double)first + (double)i;
    bl_status st = bl_predict(p, ctx, n_ctx, x, n, runtimes_s, err);
    free(x);
    return st;
}

/* ---- choosing a scale-out -------------------------------------------------------------------------- */

void bl_choice_opts_init(bl_choice_opts *o) {
    if (!o) return;
    memset(o, 0, sizeof *o);
    o->goal = BL_GOAL_FASTEST;
}

/* a better than b: lower key, ties to the smaller scale-out. */
static int better(double key_a, double x_a, double key_b, double x_b) {
    return key_a < key_b || (key_a == key_b && x_a < x_b);
}

bl_status bl_choose(const double *x, const double *t, size_t n, const bl_choice_opts *o, bl_choice *out,
                    bl_error *err) {
    return bl_choose_interval(x, t, NULL, NULL, n, 0.0, o, out, err);
}

bl_status bl_choose_interval(const double *x, const double *t, const double *lo, const double *hi, size_t n,
                             double coverage, const bl_choice_opts *o, bl_choice *out, bl_error *err) {
    BL_CHECK_ARG(out, err, "bl_choose: NULL out");
    memset(out, 0, sizeof *out);
    out->lo_runtime_s = out->hi_runtime_s = NAN;
    BL_CHECK_ARG(n == 0 || (x && t), err, "bl_choose: NULL array");
    BL_CHECK_ARG(!lo == !hi, err, "bl_choose_interval: give both ends of the intervals, or neither");
    bl_choice_opts def;
    if (!o) {
        bl_choice_opts_init(&def);
        o = &def;
    }
    if (n == 0) return bl_seterr(err, BL_EINVAL, "no candidate scale-outs");
    if (!isfinite(o->target_runtime_s) || o->target_runtime_s < 0)
        return bl_seterr(err, BL_EINVAL, "runtime target %g s: must be a positive number (0: none)", o->target_runtime_s);
    if (!isfinite(o->price_per_hour) || o->price_per_hour < 0)
        return bl_seterr(err, BL_EINVAL, "price %g per machine-hour: must be a finite number, not negative",
                         o->price_per_hour);
    if (o->goal != BL_GOAL_FASTEST && o->goal != BL_GOAL_SMALLEST && o->goal != BL_GOAL_CHEAPEST)
        return bl_seterr(err, BL_EINVAL, "unknown goal %d", (int)o->goal);
    if (o->goal == BL_GOAL_SMALLEST && !(o->target_runtime_s > 0))
        return bl_seterr(err, BL_EINVAL, "the smallest scale-out meeting a target needs a runtime target");
    if (o->goal == BL_GOAL_CHEAPEST && !(o->price_per_hour > 0))
        return bl_seterr(err, BL_EINVAL, "the cheapest scale-out needs a price per machine-hour > 0");
    if (!(o->confidence == 0 || (o->confidence > 0 && o->confidence < 1)))
        return bl_seterr(err, BL_EINVAL, "confidence %g: must lie strictly between 0 and 1 (0: none)", o->confidence);
    if (o->confidence > 0 && !(o->target_runtime_s > 0))
        return bl_seterr(err, BL_EINVAL, "a confidence (%g) needs a runtime target to be confident about", o->confidence);
    if (!(o->max_width >= 0) || !isfinite(o->max_width))
        return bl_seterr(err, BL_EINVAL, "width limit %g: must be a positive share of the prediction (0: none)",
                         o->max_width);
    if ((o->confidence > 0 || o->max_width > 0) && !hi)
        return bl_seterr(err, BL_EINVAL, "a confidence or a width limit needs intervals (bl_choose_interval, or "
                         "bl_choose_scale_out with a calibrated model)");
    if (o->confidence > 0 && coverage != o->confidence)
        return bl_seterr(err, BL_EINVAL, "the intervals are at coverage %g, but the confidence asked for is %g: give "
                         "intervals at the confidence", coverage, o->confidence);
    bl_status st = check_scale_outs(x, n, err);
    if (st != BL_OK) return st;

    const double target = o->target_runtime_s, price = o->price_per_hour;
    const int confident = o->confidence > 0;
    long fastest = -1, pick = -1;
    size_t n_met = 0, n_ok = 0, n_bad = 0, n_unbounded = 0, n_wide = 0;
    for (size_t i = 0; i < n; i++) {
        /* a model can overflow, or predict 0 or less far outside its training data (its output
         * layer's floor): such a candidate is never chosen; nor one whose runtime is unknown there
         * (an unbounded interval) or too uncertain (wider than allowed) */
        if (!(t[i] > 0) || !(t[i] <= BL_RUNTIME_MAX_S)) { n_bad++; continue; }
        if (hi && !(hi[i] <= BL_RUNTIME_MAX_S)) { n_unbounded++; continue; }
        if (hi && o->max_width > 0 && !((hi[i] - lo[i]) / t[i] <= o->max_width)) { n_wide++; continue; }
        n_ok++;
        if (fastest < 0 || better(t[i], x[i], t[fastest], x[fastest])) fastest = (long)i;
        const double judged = confident ? hi[i] : t[i];
        int met = target > 0 ? judged <= target : 1;
        if (!met) continue;
        n_met++;
        if (pick < 0) { pick = (long)i; continue; }
        switch (o->goal) {
        case BL_GOAL_FASTEST:
            if (better(t[i], x[i], t[pick], x[pick])) pick = (long)i;
            break;
        case BL_GOAL_SMALLEST:
            if (better(x[i], t[i], x[pick], t[pick])) pick = (long)i;
            break;
        case BL_GOAL_CHEAPEST:
            if (better(x[i] * t[i], x[i], x[pick] * t[pick], x[pick])) pick = (long)i;
            break;
        }
    }
    out->left_out = n - n_ok;
    if (fastest < 0) {
        if (n_unbounded + n_wide) { /* each reason that applies, once: a "0 ..." reads as a reason too */
            char msg[sizeof err->message];
            size_t len = (size_t)snprintf(msg, sizeof msg, "no candidate can be chosen");
            const char *sep = ": ";
            if (n_unbounded) {
                len += (size_t)snprintf(msg + len, sizeof msg - len, "%s%zu %s an unbounded interval (the runtime is "
                                        "unknown there, or too uncertain to choose on)", sep, n_unbounded,
                                        n_unbounded == 1 ? "has" : "have");
                sep = "; ";
            }
            if (n_wide && len < sizeof msg) {
                len += (size_t)snprintf(msg + len, sizeof msg - len, "%s%zu %s an interval wider than the width limit "
                                        "(%g of the prediction)", sep, n_wide, n_wide == 1 ? "has" : "have",
                                        o->max_width);
                sep = "; ";
            }
            if (n_bad && len < sizeof msg)
                len += (size_t)snprintf(msg + len, sizeof msg - len, "%s%zu %s no plausible prediction (not in (0, %g] "
                                        "s)", sep, n_bad, n_bad == 1 ? "has" : "have", BL_RUNTIME_MAX_S);
            if (n_unbounded && len < sizeof msg)
                snprintf(msg + len, sizeof msg - len, "; consider scale-outs closer to the runs, or fine-tune on runs "
                         "there");
            return bl_seterr(err, BL_ERANGE, "%s", msg);
        }
        return bl_seterr(err, BL_ERANGE,
                         "no candidate has a plausible predicted runtime (every one is 0 or less, above %g s, or not "
                         "a number: the scale-outs or the context may be far outside the model's training data)",
                         BL_RUNTIME_MAX_S);
    }
    if (pick < 0) {
        pick = fastest;
        out->fallback = 1;
    }
    out->index = (size_t)pick;
    out->scale_out = x[pick];
    out->runtime_s = t[pick];
    out->cost = price > 0 ? x[pick] * t[pick] / 3600.0 * price : 0.0;
    out->met_target = target > 0 && (confident ? hi[pick] : t[pick]) <= target;
    if (hi) {
        out->lo_runtime_s = lo[pick];
        out->hi_runtime_s = hi[pick];
        out->coverage = coverage;
    }
    char conf[64] = "";
    if (confident) snprintf(conf, sizeof conf, " at confidence %g", o->confidence);
    const char *what = confident ? "whose upper bound meets" : "meeting";
    if (out->fallback) {
        if (n_ok == 1)
            snprintf(out->reason, sizeof out->reason, "the only candidate is not predicted to meet the %g s target%s",
                     target, conf);
        else
            snprintf(out->reason, sizeof out->reason, "no candidate is predicted to meet the %g s target%s; the fastest "
                     "of %zu instead", target, conf, n_ok);
    } else if (o->goal == BL_GOAL_FASTEST) { /* one candidate is not "the fastest of 1" */
        char of[64] = "the only candidate";
        if (n_ok != 1) snprintf(of, sizeof of, "fastest of %zu candidates", n_ok);
        snprintf(out->reason, sizeof out->reason, "%s%s", of,
                 target > 0 ? (confident ? " (its upper bound meets the runtime target)" : " (meets the runtime target)")
                            : "");
    } else if (o->goal == BL_GOAL_SMALLEST && !confident) {
        if (n_ok == 1)
            snprintf(out->reason, sizeof out->reason, "the only candidate, predicted to finish within %g s", target);
        else
            snprintf(out->reason, sizeof out->reason, "smallest scale-out predicted to finish within %g s (%zu of %zu "
                     "do)", target, n_met, n_ok);
    } else if (o->goal == BL_GOAL_SMALLEST) {
        if (n_ok == 1)
            snprintf(out->reason, sizeof out->reason, "the only candidate, %s %g s%s", what, target, conf);
        else
            snprintf(out->reason, sizeof out->reason, "smallest scale-out %s %g s%s (%zu of %zu candidates do)", what,
                     target, conf, n_met, n_ok);
    } else if (target > 0) {
        snprintf(out->reason, sizeof out->reason, "cheapest (%.4g at %g per machine-hour) of the %zu candidate%s %s "
                 "%g s%s", out->cost, price, n_met, n_met == 1 ? "" : "s", what, target, conf);
    } else if (n_ok == 1) {
        snprintf(out->reason, sizeof out->reason, "the only candidate (%.4g at %g per machine-hour)", out->cost, price);
    } else {
        snprintf(out->reason, sizeof out->reason, "cheapest (%.4g at %g per machine-hour) of %zu candidates", out->cost,
                 price, n_ok);
    }
    size_t len = strlen(out->reason);
    if (n_bad)
        len += (size_t)snprintf(out->reason + len, sizeof out->reason - len, "; %zu left out (predicted runtime not in "
                                "(0, %g] s)", n_bad, BL_RUNTIME_MAX_S);
    if (len < sizeof out->reason && n_unbounded)
        len += (size_t)snprintf(out->reason + len, sizeof out->reason - len, "; %zu left out (runtime unknown there: "
                                "unbounded interval)", n_unbounded);
    if (len < sizeof out->reason && n_wide)
        snprintf(out->reason + len, sizeof out->reason - len, "; %zu left out (interval wider than %g of the "
                 "prediction)", n_wide, o->max_width);
    return BL_OK;
}

/* Why bl_choose_scale_out found no candidate it may choose, in words: each reason that applies with its
 * count and what would admit those candidates (a reason with none is left out), into msg. why, lo, hi:
 * bl_predict_interval's at coverage; strict: a confidence or a width limit asks for bounded intervals. */
static void no_choice_reasons(const bl_predictor *p, const double *t, const double *lo, const double *hi,
                              const int *why, size_t n, const bl_choice_opts *o, double coverage, int strict, char *msg,
                              size_t cap) {
    size_t n_bad = 0, n_beyond = 0, n_stand_in = 0, n_few = 0, n_too_wide = 0, n_width = 0;
    double narrowest = INFINITY;
    for (size_t i = 0; i < n; i++) {
        if (!(t[i] > 0) || !(t[i] <= BL_RUNTIME_MAX_S)) n_bad++;
        else if (why[i] == BL_INTERVAL_BEYOND) n_beyond++;
        else if (why[i] == BL_INTERVAL_STAND_IN) n_stand_in++;
        else if (why[i] == BL_INTERVAL_TOO_FEW && strict) n_few++;
        else if (why[i] == BL_INTERVAL_TOO_WIDE && strict) n_too_wide++;
        else if (why[i] == BL_INTERVAL_BOUNDED && o && o->max_width > 0 && !((hi[i] - lo[i]) / t[i] <= o->max_width)) {
            n_width++;
            narrowest = fmin(narrowest, (hi[i] - lo[i]) / t[i]);
        }
    }
    size_t len = (size_t)snprintf(msg, cap, "no candidate can be chosen");
    const char *sep = ": ";
#define REASON(...)                                                                    \
    do {                                                                               \
        if (len < cap) len += (size_t)snprintf(msg + len, cap - len, "%s", sep);       \
        if (len < cap) len += (size_t)snprintf(msg + len, cap - len, __VA_ARGS__);     \
        sep = "; ";                                                                    \
    } while (0)
    if (n_beyond) {
        double slo, shi;
        bl_model_support(p->m, &slo, &shi);
        REASON("%zu %s beyond 4 times the scale-outs the model and its runs know (%g..%g), where the runtime is "
               "unknown: ask for scale-outs in %g..%g, or fine-tune on runs nearer", n_beyond,
               n_beyond == 1 ? "lies" : "lie", slo, shi, fmax(1.0, ceil(slo / BL_CALIB_SUPPORT)),
               floor(shi * BL_CALIB_SUPPORT));
    }
    if (n_stand_in)
        REASON("%zu %s where the model predicts below any runtime it knows, so the runtime is unknown there: "
               "fine-tune on runs nearer", n_stand_in, n_stand_in == 1 ? "lies" : "lie");
    if (n_few) {
        const long long g = p->m->calib.known ? (long long)p->m->calib.contexts : 0;
        char up[96] = "none was held out at pre-training";
        if (g > 0) snprintf(up, sizeof up, "the %lld held out vouch for coverages up to %.2f", g,
                            floor(100.0 * (double)g / (double)(g + 1)) / 100.0);
        REASON("%zu %s no %g interval: too few held-out contexts vouch for that coverage (%s)", n_few,
               n_few == 1 ? "has" : "have", coverage, up);
    }
    if (n_too_wide)
        REASON("%zu %s an interval wider than a factor 100 either way (the runs disagree with the model, or the "
               "scale-out is far from them)", n_too_wide, n_too_wide == 1 ? "has" : "have");
    if (n_width)
        REASON("%zu %s an interval wider than the width limit (%g of the prediction; the narrowest spans %.3g of "
               "it)", n_width, n_width == 1 ? "has" : "have", o->max_width, narrowest);
    if (n_bad)
        REASON("%zu %s no plausible prediction (not in (0, %g] s: far outside the model's training data)", n_bad,
               n_bad == 1 ? "has" : "have", BL_RUNTIME_MAX_S);
#undef REASON
}

bl_status bl_choose_scale_out(const bl_predictor *p, const bl_prop_value *ctx, size_t n_ctx,
                              const double *scale_outs, size_t n, const bl_choice_opts *o, bl_choice *out,
                              bl_error *err) {
    return bl_choose_scale_out_warn(p, ctx, n_ctx, scale_outs, n, o, out, NULL, err);
}

bl_status bl_choose_scale_out_warn(const bl_predictor *p, const bl_prop_value *ctx, size_t n_ctx,
                                   const double *scale_outs, size_t n, const bl_choice_opts *o, bl_choice *out,
                                   bl_warnings *w, bl_error *err) {
    warnings_clear(w);
    BL_CHECK_ARG(p && out, err, "bl_choose_scale_out: NULL argument");
    memset(out, 0, sizeof *out);
    if (n == 0) return bl_seterr(err, BL_EINVAL, "no candidate scale-outs");
    BL_CHECK_ARG(scale_outs, err, "bl_choose_scale_out: NULL scale-outs");
    const int calibrated = p->m->calib.known;
    if (o && (o->confidence > 0 || o->max_width > 0) && !calibrated)
        return bl_seterr(err, BL_EUNSUPPORTED, "model '%s' carries no calibration (pre-trained before libbellamy 0.6, or with calibration "
                         "off): a confidence or a width limit needs intervals; pre-train it again, or choose without them",
                         bl_predictor_name(p));
    const int strict = o && (o->confidence > 0 || o->max_width > 0);
    const double coverage = o && o->confidence > 0 ? o->confidence : 0.9;
    double *t = malloc(5 * n * sizeof *t);
    int *why = malloc(n * sizeof *why);
    if (!t || !why) {
        free(t);
        free(why);
        return bl_seterr(err, BL_ENOMEM, "out of memory");
    }
    double *lo = t + n, *hi = t + 2 * n, *clo = t + 3 * n, *chi = t + 4 * n;
    int mismatch = 0;
    bl_status st = predict_impl(p, ctx, n_ctx, scale_outs, n, t, 1, w, &mismatch, err); /* bl_choose leaves them out */
    if (st == BL_OK && calibrated) {
        bl_interval_basis b;
        bl_interval_basis_of(p->m, mismatch, &b);
        st = bl_model_interval(p->m, &b, coverage, scale_outs, t, n, lo, hi, why, err);
    } else if (st == BL_OK) { /* no calibration: the support and the stand-ins alone */
        double slo, shi;
        const double F = bl_model_runtime_floor(p->m);
        bl_model_support(p->m, &slo, &shi);
        for (size_t i = 0; i < n; i++) {
            lo[i] = hi[i] = NAN;
            why[i] = scale_outs[i] < slo / BL_CALIB_SUPPORT || scale_outs[i] > shi * BL_CALIB_SUPPORT ? BL_INTERVAL_BEYOND
                     : !(t[i] >= F) ? BL_INTERVAL_STAND_IN : BL_INTERVAL_TOO_FEW;
        }
    }
    /* what the choice may rest on: a bounded interval; without a confidence or a width limit also the
     * prediction alone where only too few held-out contexts (or no calibration) keep it unbounded, or
     * where it is wider than a bound worth the name: inside what the model knows, its best guess still
     * (beyond it, or for a stand-in, the runtime is unknown: never chosen) */
    size_t n_unproven = 0;
    for (size_t i = 0; i < n && st == BL_OK; i++) {
        const int usable = why[i] == BL_INTERVAL_BOUNDED ||
                           ((why[i] == BL_INTERVAL_TOO_FEW || why[i] == BL_INTERVAL_TOO_WIDE) && !strict);
        clo[i] = !usable ? 0.0 : why[i] == BL_INTERVAL_BOUNDED ? lo[i] : t[i];
        chi[i] = !usable ? INFINITY : why[i] == BL_INTERVAL_BOUNDED ? hi[i] : t[i];
    }
    if (st == BL_OK) st = bl_choose_interval(scale_outs, t, clo, chi, n, calibrated ? coverage : 0.0, o, out, err);
    /* none may be chosen (some plausible): why, by what each interval says */
    if (st == BL_ERANGE && err && strncmp(err->message, "no candidate can be chosen", 26) == 0) {
        char msg[sizeof err->message];
        no_choice_reasons(p, t, lo, hi, why, n, o, coverage, strict, msg, sizeof msg);
        bl_seterr(err, BL_ERANGE, "%s", msg);
    }
    if (st == BL_OK) { /* the choice's own interval, as bl_predict_interval gives it */
        out->lo_runtime_s = calibrated ? lo[out->index] : NAN;
        out->hi_runtime_s = calibrated ? hi[out->index] : NAN;
        n_unproven = calibrated && why[out->index] == BL_INTERVAL_TOO_FEW;
        size_t len = strlen(out->reason);
        if (n_unproven && len < sizeof out->reason)
            snprintf(out->reason + len, sizeof out->reason - len, "; no %g bound on it: too few held-out contexts vouch "
                     "for that coverage", coverage);
        else if (calibrated && why[out->index] == BL_INTERVAL_TOO_WIDE && len < sizeof out->reason)
            snprintf(out->reason + len, sizeof out->reason - len, "; no %g bound on it: its interval is wider than a "
                     "factor 100 either way, so the prediction is a guess (fine-tune on more runs, or runs that agree)",
                     coverage);
    }
    if (st != BL_OK) warnings_clear(w);
    free(t);
    free(why);
    return st;
}

/* ---- fine-tuning and saving ------------------------------------------------------------------------- */

void bl_tune_opts_init(bl_tune_opts *o) {
    if (!o) return;
    bl_finetune_opts f;
    bl_finetune_opts_default(&f);
    o->max_epochs = f.max_epochs;
    o->patience = f.patience;
    o->stop_mae_s = f.stop_mae;
    o->stop_rel = f.stop_rel;
    o->seed = (unsigned long long)f.seed;
    o->stop_cv = f.stop_cv;
}

bl_status bl_tune_opts_apply(const bl_tune_opts *o, bl_finetune_opts *f, bl_error *err) {
    bl_finetune_opts_default(f);
    if (!o) return BL_OK;
    if (o->max_epochs < 1) return bl_seterr(err, BL_EINVAL, "fine-tuning: max_epochs %ld must be >= 1", o->max_epochs);
    if (o->patience < 1) return bl_seterr(err, BL_EINVAL, "fine-tuning: patience %ld must be >= 1", o->patience);
    if (!isfinite(o->stop_mae_s) || o->stop_mae_s < 0)
        return bl_seterr(err, BL_EINVAL, "fine-tuning: stop_mae_s %g must be >= 0", o->stop_mae_s);
    if (!isfinite(o->stop_rel) || o->stop_rel < 0)
        return bl_seterr(err, BL_EINVAL, "fine-tuning: stop_rel %g must be >= 0", o->stop_rel);
    f->max_epochs = o->max_epochs;
    f->patience = o->patience;
    f->stop_mae = o->stop_mae_s;
    f->stop_rel = o->stop_rel;
    f->seed = (uint64_t)o->seed;
    if (o->stop_cv != 0 && o->stop_cv != 1)
        return bl_seterr(err, BL_EINVAL, "fine-tuning: stop_cv %d must be 0 or 1", o->stop_cv);
    f->stop_cv = o->stop_cv;
    return BL_OK;
}

/* Growable text for the in-memory runs table. */
typedef struct tbuf { char *s; size_t len, cap; int oom; } tbuf;

static void tput(tbuf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static void tput(tbuf *b, const char *fmt, ...) {
    if (b->oom) return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int w = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? b->cap - b->len : 0, fmt, ap);
        va_end(ap);
        if (w < 0) { b->oom = 1; return; }
        if (b->s && (size_t)w < b->cap - b->len) { b->len += (size_t)w; return; }
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + (size_t)w + 1) cap *= 2;
        char *s = realloc(b->s, cap);
        if (!s) { b->oom = 1; return; }
        b->s = s;
        b->cap = cap;
    }
}

/* Appends a table field that the data reader reads back as s (blanks at its ends trimmed, as the reader
 * trims them): quoted, with its quotes doubled, when it starts with a quote, which would open a quoted
 * field; as is otherwise (a quote further in is an ordinary character). */
static void tput_field(tbuf *b, const char *s) {
    size_t a = 0, n = strlen(s);
    while (s[a] == ' ') a++;
    while (n > a && s[n - 1] == ' ') n--;
    if (s[a] != '"') {
        tput(b, "%s", s);
        return;
    }
    tput(b, "\"");
    for (size_t i = a; i < n; i++) tput(b, "%s%c", s[i] == '"' ? "\"" : "", s[i]);
    tput(b, "\"");
}

/* Appends s as one double-quoted schema token, with the schema parser's two escapes (\" and \\). */
static void tput_quoted(tbuf *b, const char *s) {
    tput(b, "\"");
    for (; *s; s++) tput(b, "%s%c", *s == '"' || *s == '\\' ? "\\" : "", *s);
    tput(b, "\"");
}

bl_status bl_predictor_finetune(const bl_predictor *base, const bl_prop_value *ctx, size_t n_ctx,
                                const double *scale_outs, const double *runtimes_s, size_t n_runs,
                                const bl_tune_opts *o, bl_predictor **out, bl_error *err) {
    BL_CHECK_ARG(out, err, "bl_predictor_finetune: NULL out");
    *out = NULL;
    BL_CHECK_ARG(base, err, "bl_predictor_finetune: NULL predictor");
    if (n_runs == 0) return bl_seterr(err, BL_EINVAL, "fine-tuning needs at least one run");
    BL_CHECK_ARG(scale_outs && runtimes_s, err, "bl_predictor_finetune: NULL array");
    bl_finetune_opts fo;
    bl_status st = bl_tune_opts_apply(o, &fo, err);
    if (st != BL_OK) return st;
    st = check_scale_outs(scale_outs, n_runs, err);
    if (st != BL_OK) return st;
    /* Said here, by run, rather than by the loader about a line of the generated table. */
    for (size_t i = 0; i < n_runs; i++)
        if (scale_outs[i] != floor(scale_outs[i]) || scale_outs[i] > BL_SCALE_OUT_MAX)
            return bl_seterr(err, BL_ERANGE, "run %zu: scale-out %.17g is not a number of machines (a whole number "
                             "from 1 to %d)", i, scale_outs[i], BL_SCALE_OUT_MAX);
    for (size_t i = 0; i < n_runs; i++)
        if (!isfinite(runtimes_s[i]) || !(runtimes_s[i] >= BL_RUNTIME_MIN_S) || runtimes_s[i] > BL_RUNTIME_MAX_S)
            return bl_seterr(err, BL_ERANGE, "run %zu: runtime %g s is not a number of seconds from %g to %g (a "
                             "runtime in another unit?)", i, runtimes_s[i], BL_RUNTIME_MIN_S, BL_RUNTIME_MAX_S);
    resolved r;
    st = resolve(base, ctx, n_ctx, 1, &r, NULL, err);
    if (st != BL_OK) return st;
    const bl_model *m = base->m;
    for (size_t i = 0; i < r.n; i++)
        if (strpbrk(r.vals[i], "\t\r\n")) {
            resolved_free(&r);
            return bl_seterr(err, BL_EINVAL, "property '%.80s': a value may not contain a tab or a line break",
                             m->props[i].name);
        }

    /* The runs become a small table read through a generated schema, so they are encoded exactly as
     * a data file would be (the model's encoder settings, the loader's checks). */
    tbuf sch = { 0 }, tab = { 0 };
    bl_schema *sc = NULL;
    bl_dataset *ds = NULL;
    bl_model *tuned = NULL;
    /* Property names are quoted (a schema allows blanks, '#' and quotes in them) and the columns are
     * named p0, p1, ...: a name as a header column would lose blanks at its ends or split at a tab. */
    tput(&sch, "bellamy-schema 1\nscale_out bl_scale_out\nruntime bl_runtime_s s\n");
    tput(&tab, "bl_scale_out\tbl_runtime_s");
    for (size_t i = 0; i < r.n; i++) {
        tput(&sch, "property ");
        tput_quoted(&sch, m->props[i].name);
        tput(&sch, " %s %s column p%zu\n", m->props[i].essential ? "essential" : "optional",
             m->props[i].kind == BL_PROP_NUMBER ? "number" : "text", i);
        tput(&tab, "\tp%zu", i);
    }
    tput(&tab, "\n");
    for (size_t k = 0; k < n_runs; k++) {
        tput(&tab, "%.17g\t%.17g", scale_outs[k], runtimes_s[k]);
        for (size_t i = 0; i < r.n; i++) {
            char at[32]; /* a data file's text: a cluster total at this scale-out */
            if (r.varies[i]) snprintf(at, sizeof at, "%.0f", total_at(&r, i, scale_outs[k]));
            tput(&tab, "\t");
            tput_field(&tab, r.varies[i] ? at : r.vals[i]);
        }
        tput(&tab, "\n");
    }
    if (sch.oom || tab.oom) { st = bl_seterr(err, BL_ENOMEM, "out of memory"); goto done; }
    st = bl_schema_parse("runs", sch.s, sch.len, &sc, err);
    if (st == BL_OK) st = bl_dataset_load_mem("runs", tab.s, tab.len, '\t', sc, &m->enc, &ds, err);
    if (st == BL_OK) st = bl_finetune(m, ds, NULL, 0, &fo, &tuned, err);
    /* the context as given (cluster totals per machine), not as the table recorded it */
    if (st == BL_OK && (st = bl_model_tuned_set_context(tuned, r.vals, err)) != BL_OK) bl_model_free(tuned);
    if (st == BL_OK) st = bl_predictor_wrap(tuned, out, err);
done:
    bl_dataset_free(ds);
    bl_schema_free(sc);
    free(sch.s);
    free(tab.s);
    resolved_free(&r);
    return st;
}

bl_status bl_model_check_runs_schema(const bl_model *m, const bl_schema *runs, bl_error *err) {
    BL_CHECK_ARG(m && runs, err, "bl_model_check_runs_schema: NULL argument");
    bl_status st = BL_OK;
    bl_prop_spec *want = calloc(m->n_props ? m->n_props : 1, sizeof *want);
    unsigned char *total = calloc(m->n_props ? m->n_props : 1, 1);
    if (!want || !total) {
        st = bl_seterr(err, BL_ENOMEM, "out of memory");
        goto done;
    }
    const int known = m->schema_text && *m->schema_text;
    if ((st = model_totals(m, total, err)) != BL_OK) goto done;
    for (size_t i = 0; i < m->n_props; i++) {
        want[i].name = m->props[i].name;
        want[i].essential = m->props[i].essential;
        want[i].kind = m->props[i].kind;
        want[i].cluster_total = known ? total[i] : -1;
    }
    char what[160];
    snprintf(what, sizeof what, "model '%.100s'", m->name ? m->name : "");
    st = bl_schema_check_props(runs, want, m->n_props, what, err);
done:
    free(want);
    free(total);
    return st;
}

bl_status bl_predictor_load_runs(const bl_predictor *base, const char *data_path, const char *schema_path,
                                 bl_dataset **out, bl_error *err) {
    return bl_predictor_load_runs_skip(base, data_path, schema_path, 0, out, err);
}

/* What model m was pre-trained for, into buf (cap), for messages: its rows and contexts and up to two
 * constants of its stored schema (job_type first), the job a user recognises. */
static void model_job(const bl_model *m, const bl_schema *sc, char *buf, size_t cap) {
    size_t len = (size_t)snprintf(buf, cap, "%lld runs of %lld context%s", (long long)m->rows, (long long)m->contexts,
                                  m->contexts == 1 ? "" : "s");
    int shown = 0;
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < sc->n_props && shown < 2 && len < cap; i++) {
            const bl_schema_prop *p = &sc->props[i];
            if (p->source != BL_SRC_CONST || !p->value || !p->value[0] || (strcmp(p->name, "job_type") == 0) == pass)
                continue;
            len += (size_t)snprintf(buf + len, cap - len, "%s%.30s '%.30s'", shown ? ", " : "; ", p->name, p->value);
            shown++;
        }
}

/* (api_internal.h) Runs of another job than the model's are the usual cause of a missing column, so the
 * message names the model and what it was pre-trained for and gives both ways out, instead of only
 * inviting the user to rename a column. */
bl_status bl_model_check_runs_columns(const bl_model *m, const bl_schema *sc, const char *data_path, bl_error *err) {
    bl_reader *r = NULL;
    bl_error rerr;
    if (bl_reader_open(&r, data_path, 0, &rerr) != BL_OK) return BL_OK;
    /* the columns the schema reads, each once, in the schema's order */
    size_t n = 0, cap = 2 + sc->n_totals;
    for (size_t i = 0; i < sc->n_props; i++) cap += sc->props[i].n_cols;
    const bl_schema_ref **refs = malloc(cap * sizeof *refs);
    if (!refs) {
        bl_reader_free(r);
        return bl_seterr(err, BL_ENOMEM, "out of memory");
    }
    refs[n++] = &sc->scale_out;
    refs[n++] = &sc->runtime;
    for (size_t i = 0; i < sc->n_props; i++)
        for (size_t c = 0; c < sc->props[i].n_cols; c++) refs[n++] = &sc->props[i].cols[c];
    for (size_t i = 0; i < sc->n_totals; i++) refs[n++] = &sc->totals[i];
    size_t wanted = 0, missing = 0;
    char miss[160] = "";
    const bl_schema_ref *first = NULL;
    for (size_t i = 0; i < n; i++) {
        int dup = 0;
        for (size_t j = 0; j < i && !dup; j++) dup = strcmp(refs[i]->name, refs[j]->name) == 0;
        if (dup) continue;
        wanted++;
        if (bl_reader_find(r, refs[i]->name) >= 0) continue;
        if (!missing++) first = refs[i];
        size_t ml = strlen(miss);
        if (ml + 40 < sizeof miss) snprintf(miss + ml, sizeof miss - ml, "%s'%.30s'", ml ? ", " : "", refs[i]->name);
        else if (!strstr(miss, "...")) snprintf(miss + ml, sizeof miss - ml, ", ...");
    }
    bl_status st = BL_OK;
    if (missing) {
        char job[160], mean[200] = "", hint[200];
        const char *mname = m->name ? m->name : "";
        model_job(m, sc, job, sizeof job);
        bl_reader_header_hint(r, hint, sizeof hint);
        const size_t nc = bl_reader_ncols(r);
        if (missing * 2 >= wanted) { /* most of them: another job's runs (one renamed column is a rename) */
            st = bl_seterr(err, BL_EFORMAT, "%s:1:1: these runs lack %zu of the %zu columns model '%.60s' reads (%s): they "
                           "look like another job's than the one '%.60s' was pre-trained for (%s); use a model pre-trained "
                           "for their job, or give their own schema (--schema) if only the column names differ%s%s",
                           bl_reader_name(r), missing, wanted, mname, miss, mname, job, hint[0] ? "; " : "", hint);
        } else {
            /* one or a few columns missing among many found: perhaps renamed, so the closest names too */
            const char **cands = malloc((nc ? nc : 1) * sizeof *cands);
            if (cands && !hint[0]) {
                for (size_t j = 0; j < nc; j++) cands[j] = bl_reader_colname(r, j);
                bl_suggest(first->name, cands, nc, "", mean, sizeof mean);
            }
            free(cands);
            st = bl_seterr(err, BL_EFORMAT, "%s:1:1: missing column%s %s, which model '%.60s' reads (schema stored in the "
                           "model:%zu:%zu)%s; if the runs are another job's than '%.60s' was pre-trained for (%s), use a "
                           "model pre-trained for theirs; if only named otherwise, give their own schema (--schema)%s%s",
                           bl_reader_name(r), missing == 1 ? "" : "s", miss, mname, first->line, first->col, mean, mname,
                           job, hint[0] ? "; " : "", hint);
        }
    }
    free(refs);
    bl_reader_free(r);
    return st;
}

bl_status bl_predictor_load_runs_skip(const bl_predictor *base, const char *data_path, const char *schema_path,
                                      int skip_invalid, bl_dataset **out, bl_error *err) {
    BL_CHECK_ARG(out, err, "bl_predictor_load_runs: NULL out");
    *out = NULL;
    BL_CHECK_ARG(base && data_path, err, "bl_predictor_load_runs: NULL argument");
    const bl_model *m = base->m;
    bl_schema *sc = NULL;
    bl_dataset *ds = NULL;
    bl_status st;
    if (schema_path) {
        st = bl_schema_load(schema_path, &sc, err);
    } else if (m->schema_text) {
        st = bl_schema_parse_stored("schema stored in the model", m->schema_text, strlen(m->schema_text), &sc, err);
    } else {
        st = bl_seterr(err, BL_EINVAL, "model '%.60s' stores no schema: give the runs' schema file", bl_predictor_name(base));
    }
    /* Before the data: runs described by other properties than the model's would otherwise be
     * fine-tuned on with the extra properties silently dropped (or fail later without a line). */
    if (st == BL_OK) st = bl_model_check_runs_schema(m, sc, err);
    if (st == BL_OK && !schema_path) st = bl_model_check_runs_columns(m, sc, data_path, err);
    if (st == BL_OK) st = bl_dataset_load_schema_skip(data_path, sc, 0, &m->enc, skip_invalid, &ds, err);
    if (st == BL_OK && ds->n_rows == 0) st = bl_seterr(err, BL_EINVAL, "%s: no runs to fine-tune on", data_path);
    bl_schema_free(sc);
    if (st != BL_OK) {
        bl_dataset_free(ds);
        return st;
    }
    *out = ds;
    return BL_OK;
}

bl_status bl_predictor_finetune_runs(const bl_predictor *base, const bl_dataset *runs, const bl_tune_opts *o,
                                     bl_predictor **out, bl_error *err) {
    BL_CHECK_ARG(out, err, "bl_predictor_finetune_runs: NULL out");
    *out = NULL;
    BL_CHECK_ARG(base && runs, err, "bl_predictor_finetune_runs: NULL argument");
    if (runs->n_rows == 0) return bl_seterr(err, BL_EINVAL, "%s: no runs to fine-tune on", runs->name);
    bl_finetune_opts fo;
    bl_status st = bl_tune_opts_apply(o, &fo, err);
    if (st != BL_OK) return st;
    bl_model *tuned = NULL;
    st = bl_finetune(base->m, runs, NULL, 0, &fo, &tuned, err);
    if (st == BL_OK) st = bl_predictor_wrap(tuned, out, err);
    return st;
}

/* Runs of several contexts are fine-tuned on as they are: a scheduler may mean to (all the history
 * of a cluster, say). A caller that wants to warn first uses bl_predictor_load_runs, looks at the
 * runs' n_contexts, then bl_predictor_finetune_runs (public: bl_runs_load, bl_data_summarize,
 * bl_predictor_finetune_data, as bellamy-train finetune and bellamy-predict do). */
bl_status bl_predictor_finetune_file(const bl_predictor *base, const char *data_path, const char *schema_path,
                                     const bl_tune_opts *o, bl_predictor **out, bl_error *err) {
    BL_CHECK_ARG(out, err, "bl_predictor_finetune_file: NULL out");
    *out = NULL;
    BL_CHECK_ARG(base && data_path, err, "bl_predictor_finetune_file: NULL argument");
    bl_finetune_opts fo;
    bl_status st = bl_tune_opts_apply(o, &fo, err); /* bad options before the file is read */
    if (st != BL_OK) return st;
    bl_dataset *ds = NULL;
    st = bl_predictor_load_runs(base, data_path, schema_path, &ds, err);
    if (st == BL_OK) st = bl_predictor_finetune_runs(base, ds, o, out, err);
    bl_dataset_free(ds);
    return st;
}

bl_status bl_predictor_save(const bl_predictor *p, const char *path, const char *name, bl_error *err) {
    BL_CHECK_ARG(p && path && *path, err, "bl_predictor_save: NULL argument");
    if (!name || (p->m->name && strcmp(name, p->m->name) == 0)) return bl_model_save(p->m, path, err);
    if (!*name) return bl_seterr(err, BL_EINVAL, "empty model name");
    bl_model *c = NULL;
    bl_status st = bl_model_clone(p->m, &c, err);
    if (st != BL_OK) return st;
    char *nm = bl_strdup(name);
    if (!nm) {
        bl_model_free(c);
        return bl_seterr(err, BL_ENOMEM, "out of memory");
    }
    free(c->name);
    c->name = nm;
    st = bl_model_save(c, path, err);
    bl_model_free(c);
    return st;
}
