/* train.c — the training face of libbellamy (include/bellamy/train.h): data files read through a
 * schema (a bl_data wraps a bl_dataset and the schema's text), pre-training and untrained predictors,
 * fine-tuning on such data, evaluation on a data file, what a model records about its training,
 * model-file checks and the synthetic corpus. Thin: each call checks its arguments, then hands over to
 * src/data, src/model, src/modelfile; predictors are those of api.c (api_internal.h).
 *
 * Not here: printing, option parsing (src/cli); the network and training loops (src/model).
 */
#include "bellamy/train.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "api/api_internal.h"
#include "common/error.h"
#include "common/file.h"
#include "common/str.h"
#include "data/dataset.h"
#include "data/schema.h"
#include "data/synth.h"
#include "encode/encode.h"
#include "model/model.h"
#include "model/seen.h"
#include "modelfile/modelfile.h"
#include "nn/device.h"

/* The public numbers, constants and enums are the internal ones. */
_Static_assert((int)BL_NUMBERS_BINARY == (int)BL_ENC_NUMBERS_BINARY && (int)BL_NUMBERS_LOG == (int)BL_ENC_NUMBERS_LOG &&
               (int)BL_NUMBERS_RANGE == (int)BL_ENC_NUMBERS_RANGE && (int)BL_NUMBERS_BOTH == (int)BL_ENC_NUMBERS_BOTH, "numbers");
_Static_assert(BL_SCALE_OUT_FEATURES == BL_SCALEOUT_NFEAT, "scale-out features");
_Static_assert(BL_CORPUS_CONTEXTS_MAX == BL_SYNTH_MAX_CONTEXTS && BL_CORPUS_SCALE_OUTS_MAX == BL_SYNTH_MAX_SCALEOUTS,
               "corpus bounds");
_Static_assert(BL_CORPUS_ENVIRONMENT_MAX + 1 == sizeof(((bl_synth_config *)0)->environment), "environment");
_Static_assert((int)BL_SHAPE_ERNEST == (int)BL_SYNTH_ERNEST, "shapes");

struct bl_data {
    bl_dataset *ds;
    char       *schema_text;   /* NULL for runs read through a model (bl_runs_load) */
};

struct bl_evaluation {
    bl_data     *runs;
    size_t       n;
    bl_eval_row *rows;         /* [n] ascending scale-out */
    double       mean_rel;
};

/* Copies a caller's versioned options (first field: their size) over dst's defaults: only the bytes
 * that size covers, so an older caller's struct reads as its fields plus today's defaults. */
static bl_status opts_copy(void *dst, size_t dst_size, const void *src, const char *what, bl_error *err) {
    if (!src) return BL_OK;
    size_t n;
    memcpy(&n, src, sizeof n);
    if (n <= sizeof(size_t) || n > dst_size)
        return bl_seterr(err, BL_EINVAL, "%s: size %zu is not one this library knows (%zu): start from %s_init", what,
                         n, dst_size, what);
    memcpy(dst, src, n);
    memcpy(dst, &dst_size, sizeof dst_size);
    return BL_OK;
}

/* ---- data files -------------------------------------------------------------------------------- */

void bl_data_opts_init(bl_data_opts *o) {
    if (!o) return;
    memset(o, 0, sizeof *o);
    o->size = sizeof *o;
    o->numbers = BL_NUMBERS_BINARY;
}

/* The encoder settings of data options, checked. */
static bl_status data_settings(const bl_data_opts *in, bl_data_opts *o, bl_encode_settings *es, bl_error *err) {
    bl_data_opts_init(o);
    bl_status st = opts_copy(o, sizeof *o, in, "bl_data_opts", err);
    if (st != BL_OK) return st;
    if (o->delimiter != 0 && o->delimiter != '\t' && o->delimiter != ',')
        return bl_seterr(err, BL_EINVAL, "bl_data_opts.delimiter: 0x%02x must be a tab, a comma or 0 (by extension)",
                         (unsigned)(unsigned char)o->delimiter);
    if (o->skip_invalid != 0 && o->skip_invalid != 1)
        return bl_seterr(err, BL_EINVAL, "bl_data_opts.skip_invalid: %d must be 0 or 1", o->skip_invalid);
    if (o->totals_per_machine != 0 && o->totals_per_machine != 1)
        return bl_seterr(err, BL_EINVAL, "bl_data_opts.totals_per_machine: %d must be 0 or 1", o->totals_per_machine);
    if (o->numbers < BL_NUMBERS_BINARY || o->numbers > BL_NUMBERS_BOTH)
        return bl_seterr(err, BL_EINVAL, "bl_data_opts.numbers: %d must be one of BL_NUMBERS_BINARY, _LOG, _RANGE, "
                         "_BOTH", o->numbers);
    bl_encode_settings_default(es);
    es->totals_per_machine = (uint32_t)o->totals_per_machine;
    es->numbers = (uint32_t)o->numbers;
    return BL_OK;
}

static bl_status data_wrap(bl_dataset *ds, char *schema_text, bl_data **out, bl_error *err) {
    bl_data *d = calloc(1, sizeof *d);
    if (!d) {
        bl_dataset_free(ds);
        free(schema_text);
        return bl_seterr(err, BL_ENOMEM, "out of memory");
    }
    d->ds = ds;
    d->schema_text = schema_text;
    *out = d;
    return BL_OK;
}

bl_status bl_data_load(const char *data_path, const char *schema_path, const bl_data_opts *o, bl_data **out,
                       bl_error *err) {
    BL_CHECK_ARG(out, err, "bl_data_load: NULL out");
    *out = NULL;
    BL_CHECK_ARG(data_path && *data_path, err, "bl_data_load: no data file");
    BL_CHECK_ARG(schema_path && *schema_path, err, "bl_data_load: no schema file");
    bl_data_opts oo;
    bl_encode_settings es;
    bl_status st = data_settings(o, &oo, &es, err);
    if (st != BL_OK) return st;
    bl_dataset *ds = NULL;
    st = bl_dataset_load_skip(data_path, schema_path, oo.delimiter, &es, oo.skip_invalid, &ds, err);
    if (st != BL_OK) return st;
    char *text = NULL;
    size_t len = 0;
    /* the text a pre-training stores in the model, as parsed just now */
    if ((st = bl_read_file(schema_path, (size_t)1 << 24, &text, &len, err)) != BL_OK) {
        bl_dataset_free(ds);
        return st;
    }
    return data_wrap(ds, text, out, err);
}

bl_status bl_data_load_text(const char *data_name, const char *data, size_t len, const char *schema_name,
                            const char *schema_text, size_t schema_len, const bl_data_opts *o, bl_data **out,
                            bl_error *err) {
    BL_CHECK_ARG(out, err, "bl_data_load_text: NULL out");
    *out = NULL;
    BL_CHECK_ARG(data && schema_text, err, "bl_data_load_text: NULL text");
    if (!data_name) data_name = "data";
    if (!schema_name) schema_name = "schema";
    bl_data_opts oo;
    bl_encode_settings es;
    bl_status st = data_settings(o, &oo, &es, err);
    if (st != BL_OK) return st;
    bl_schema *sc = NULL;
    bl_dataset *ds = NULL;
    char *text = malloc(schema_len + 1);
    if (!text) return bl_seterr(err, BL_ENOMEM, "out of memory");
    memcpy(text, schema_text, schema_len);
    text[schema_len] = '\0';
    st = bl_schema_parse(schema_name, text, schema_len, &sc, err);
    if (st == BL_OK)
        st = bl_dataset_load_mem_skip(data_name, data, len, oo.delimiter ? oo.delimiter : '\t', sc, &es,
                                      oo.skip_invalid, &ds, err);
    bl_schema_free(sc);
    if (st != BL_OK) {
        free(text);
        return st;
    }
    return data_wrap(ds, text, out, err);
}

bl_status bl_runs_load(const bl_predictor *base, const char *data_path, const char *schema_path, int skip_invalid,
                       bl_data **out, bl_error *err) {
    BL_CHECK_ARG(out, err, "bl_runs_load: NULL out");
    *out = NULL;
    BL_CHECK_ARG(base && data_path && *data_path, err, "bl_runs_load: NULL argument");
    BL_CHECK_ARG(skip_invalid == 0 || skip_invalid == 1, err, "bl_runs_load: skip_invalid %d must be 0 or 1",
                 skip_invalid);
    bl_dataset *ds = NULL;
    bl_status st = bl_predictor_load_runs_skip(base, data_path, schema_path, skip_invalid, &ds, err);
    if (st != BL_OK) return st;
    return data_wrap(ds, NULL, out, err);
}

void bl_data_free(bl_data *d) {
    if (!d) return;
    bl_dataset_free(d->ds);
    free(d->schema_text);
    free(d);
}

bl_status bl_data_summarize(const bl_data *d, bl_data_summary *s) {
    if (!d || !s) return BL_EINVAL;
    const bl_dataset *ds = d->ds;
    memset(s, 0, sizeof *s);
    s->name = ds->name;
    s->data_hash = (unsigned long long)ds->data_hash;
    s->rows = ds->n_rows;
    s->contexts = ds->n_contexts;
    s->props = ds->n_props;
    s->skipped = ds->n_skipped;
    s->vec_len = ds->settings.vec_len;
    s->totals_per_machine = (int)ds->settings.totals_per_machine;
    s->scale_out_min = s->scale_out_max = s->runtime_min_s = s->runtime_max_s = NAN;
    for (size_t r = 0; r < ds->n_rows; r++) {
        if (r == 0 || ds->scale_out[r] < s->scale_out_min) s->scale_out_min = ds->scale_out[r];
        if (r == 0 || ds->scale_out[r] > s->scale_out_max) s->scale_out_max = ds->scale_out[r];
        if (r == 0 || ds->runtime_s[r] < s->runtime_min_s) s->runtime_min_s = ds->runtime_s[r];
        if (r == 0 || ds->runtime_s[r] > s->runtime_max_s) s->runtime_max_s = ds->runtime_s[r];
    }
    return BL_OK;
}

bl_status bl_data_runtime_column(const bl_data *d, const char **column, const char **unit) {
    if (!d) return BL_EINVAL;
    if (column) *column = d->ds->runtime_column ? d->ds->runtime_column : "";
    if (unit) *unit = d->ds->runtime_unit ? d->ds->runtime_unit : "s";
    return BL_OK;
}

const char *bl_data_skipped(const bl_data *d, size_t i) {
    if (!d) return NULL;
    size_t kept = d->ds->n_skipped < BL_DATASET_SKIPPED_KEPT ? d->ds->n_skipped : BL_DATASET_SKIPPED_KEPT;
    return i < kept ? d->ds->skipped[i] : NULL;
}

bl_status bl_data_property(const bl_data *d, size_t p, bl_data_prop *out) {
    if (!d || !out) return BL_EINVAL;
    if (p >= d->ds->n_props) return BL_ERANGE;
    const bl_dataset_prop *pr = &d->ds->props[p];
    out->name = pr->name;
    out->essential = pr->essential;
    out->number = pr->kind == BL_PROP_NUMBER;
    out->cluster_total = pr->cluster_total;
    out->distinct = pr->n_values;
    return BL_OK;
}

long bl_data_find_property(const bl_data *d, const char *name) {
    return d && name ? bl_dataset_find_prop(d->ds, name) : -1;
}

bl_status bl_data_context(const bl_data *d, size_t c, const char **label, size_t *rows) {
    if (!d) return BL_EINVAL;
    if (c >= d->ds->n_contexts) return BL_ERANGE;
    if (label) *label = d->ds->contexts[c].label;
    if (rows) *rows = d->ds->contexts[c].n_rows;
    return BL_OK;
}

bl_status bl_data_context_row(const bl_data *d, size_t c, size_t k, size_t *row) {
    if (!d || !row) return BL_EINVAL;
    if (c >= d->ds->n_contexts || k >= d->ds->contexts[c].n_rows) return BL_ERANGE;
    *row = d->ds->contexts[c].rows[k];
    return BL_OK;
}

bl_status bl_data_get_row(const bl_data *d, size_t r, bl_data_row *out) {
    if (!d || !out) return BL_EINVAL;
    if (r >= d->ds->n_rows) return BL_ERANGE;
    out->data_row = d->ds->src_row[r];
    out->context = d->ds->context[r];
    out->scale_out = d->ds->scale_out[r];
    out->runtime_s = d->ds->runtime_s[r];
    return BL_OK;
}

bl_status bl_data_row_lines(const bl_data *d, size_t r, size_t *first, size_t *last) {
    if (!d || !first || !last) return BL_EINVAL;
    const size_t *l = r == BL_DATA_HEADER ? d->ds->header_lines : r < d->ds->n_rows ? d->ds->src_lines + 2 * r : NULL;
    if (!l) return BL_ERANGE;
    *first = l[0];
    *last = l[1];
    return BL_OK;
}

bl_status bl_data_value(const bl_data *d, size_t p, size_t r, const char **value, const double **vector) {
    if (!d) return BL_EINVAL;
    if (p >= d->ds->n_props || r >= d->ds->n_rows) return BL_ERANGE;
    const bl_dataset_prop *pr = &d->ds->props[p];
    if (value) *value = pr->values[pr->row_value[r]];
    if (vector) *vector = bl_dataset_vec(d->ds, p, r);
    return BL_OK;
}

bl_status bl_data_scale_out_features(const bl_data *d, size_t r, double raw[BL_SCALE_OUT_FEATURES],
                                     double scaled[BL_SCALE_OUT_FEATURES], bl_error *err) {
    BL_CHECK_ARG(d, err, "bl_data_scale_out_features: NULL data");
    const bl_dataset *ds = d->ds;
    if (r >= ds->n_rows)
        return bl_seterr(err, BL_ERANGE, "row %zu: %s has %zu rows", r, ds->name, ds->n_rows);
    double *feat = malloc(ds->n_rows * BL_SCALEOUT_NFEAT * sizeof *feat);
    if (!feat) return bl_seterr(err, BL_ENOMEM, "out of memory");
    bl_dataset_scaleout_features(ds, feat);
    bl_status st = BL_OK;
    if (raw) memcpy(raw, feat + r * BL_SCALEOUT_NFEAT, BL_SCALEOUT_NFEAT * sizeof *raw);
    if (scaled) {
        bl_minmax mm;
        st = bl_minmax_fit(&mm, feat, ds->n_rows, BL_SCALEOUT_NFEAT, err);
        if (st == BL_OK) bl_minmax_transform(&mm, feat + r * BL_SCALEOUT_NFEAT, 1, scaled);
    }
    free(feat);
    return st;
}

size_t bl_data_context_spread(const bl_data *d, char *buf, size_t cap) {
    if (!d || !buf || !cap) return 0;
    return bl_dataset_context_spread(d->ds, buf, cap);
}

size_t bl_data_context_diff(const bl_data *d, size_t c, const bl_prop_value *ctx, size_t n_ctx, char *buf,
                            size_t cap) {
    if (!d || !buf || !cap) return 0;
    buf[0] = '\0';
    if (c >= d->ds->n_contexts) return 0;
    return bl_dataset_context_diff(d->ds, c, ctx, ctx ? n_ctx : 0, buf, cap);
}

/* ---- pre-training ------------------------------------------------------------------------------- */

void bl_train_opts_init(bl_train_opts *o) {
    if (o) bl_train_opts_default(o);
}

void bl_data_opts_for_training(bl_data_opts *o, const bl_train_opts *t) {
    if (!o) return;
    bl_data_opts_init(o);
    bl_train_opts d;
    bl_train_opts_default(&d);
    /* a caller's older struct holds members (an original field) */
    const int members = t && t->size > offsetof(bl_train_opts, members) ? t->members : d.members;
    if (members >= 2) o->numbers = BL_NUMBERS_BOTH; /* measured best; members alternate bits and log */
}

/* The one check: a caller's struct over the defaults, then every bound of include/bellamy/train.h. */
static bl_status train_opts(const bl_train_opts *in, bl_train_opts *o, bl_error *err) {
    bl_train_opts_init(o);
    bl_status st = opts_copy(o, sizeof *o, in, "bl_train_opts", err);
    if (st != BL_OK) return st;
    return bl_train_opts_bounds(o, err);
}

bl_status bl_train_opts_check(const bl_train_opts *in, bl_error *err) {
    bl_train_opts o;
    bl_status st = train_opts(in, &o, err);
    if (st == BL_OK && o.device == BL_ON_CUDA) st = bl_cuda_check(err);
    return st;
}

bl_status bl_cuda_check(bl_error *err) { return bl_nn_device_check(BL_NN_CUDA, err); }

/* "grep" from "../shared/datasets/c3o/grep.tsv". */
static char *file_stem(const char *path) {
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    const char *dot = strrchr(b, '.');
    size_t n = dot && dot > b ? (size_t)(dot - b) : strlen(b);
    char *s = malloc(n + 1);
    if (s) {
        memcpy(s, b, n);
        s[n] = '\0';
    }
    return s;
}

bl_status bl_pretrain_data(const bl_data *d, const bl_train_opts *in, const char *name, bl_predictor **out,
                           bl_error *err) {
    BL_CHECK_ARG(out, err, "bl_pretrain_data: NULL out");
    *out = NULL;
    BL_CHECK_ARG(d, err, "bl_pretrain_data: NULL data");
    bl_train_opts o;
    bl_status st = train_opts(in, &o, err);
    if (st != BL_OK) return st;
    if (!d->schema_text)
        return bl_seterr(err, BL_EINVAL, "%s: read as runs of a model (bl_runs_load), it keeps no schema to store: "
                         "read it with bl_data_load", d->ds->name);
    if (d->ds->settings.numbers == BL_ENC_NUMBERS_BOTH && o.members < 2)
        return bl_seterr(err, BL_EINVAL, "bl_train_opts.members: %d, but numbers in both encodings need an ensemble "
                         "of 2 or more members (they alternate)", o.members);
    if (d->ds->n_rows == 0) return bl_seterr(err, BL_EINVAL, "%s: no rows to pre-train on", d->ds->name);
    if (name && !*name) return bl_seterr(err, BL_EINVAL, "bl_pretrain_data: empty model name");
    char *nm = name ? bl_strdup(name) : file_stem(d->ds->name);
    if (!nm) return bl_seterr(err, BL_ENOMEM, "out of memory");
    bl_pretrain_opts po;
    bl_pretrain_opts_from(&po, &o);
    bl_model *m = NULL;
    st = bl_pretrain(d->ds, d->schema_text, &po, &m, err);
    if (st != BL_OK) {
        free(nm);
        return st;
    }
    free(m->name);
    m->name = nm;
    return bl_predictor_wrap(m, out, err);
}

bl_status bl_pretrain_file(const char *data_path, const char *schema_path, const bl_data_opts *dopts,
                           const bl_train_opts *o, const char *name, const char *out_path, bl_predictor **out,
                           bl_error *err) {
    if (out) *out = NULL;
    BL_CHECK_ARG(out || out_path, err, "bl_pretrain_file: neither out nor out_path");
    bl_status st = train_opts(o, &(bl_train_opts){ 0 }, err); /* bad options before the file is read */
    if (st != BL_OK) return st;
    bl_data_opts dt;
    if (!dopts) bl_data_opts_for_training(&dt, o);
    bl_data *d = NULL;
    bl_predictor *p = NULL;
    st = bl_data_load(data_path, schema_path, dopts ? dopts : &dt, &d, err);
    if (st == BL_OK) st = bl_pretrain_data(d, o, name, &p, err);
    if (st == BL_OK && out_path) st = bl_predictor_save(p, out_path, NULL, err);
    bl_data_free(d);
    if (st == BL_OK && out) *out = p;
    else bl_predictor_free(p);
    return st;
}

bl_status bl_predictor_new_untrained(const bl_data *d, const bl_train_opts *in, bl_predictor **out,
                                     bl_error *err) {
    BL_CHECK_ARG(out, err, "bl_predictor_new_untrained: NULL out");
    *out = NULL;
    BL_CHECK_ARG(d, err, "bl_predictor_new_untrained: NULL data");
    bl_status st = bl_cpu_kernels_check(err); /* BELLAMY_CPU must be honoured wherever a model is made */
    if (st != BL_OK) return st;
    bl_train_opts o;
    st = train_opts(in, &o, err);
    if (st != BL_OK) return st;
    if (d->ds->n_rows == 0) return bl_seterr(err, BL_EINVAL, "%s: no rows to fit the scaler on", d->ds->name);
    bl_model *m = NULL;
    st = bl_model_new_untrained(d->ds, d->schema_text, o.target_scale, (uint64_t)o.seed, &m, err);
    if (st != BL_OK) return st;
    bl_model_set_precision(m, o.precision == BL_PRECISION_AUTO ? BL_PRECISION_F32 : o.precision); /* computed on the CPU */
    bl_model_round_params(m);
    return bl_predictor_wrap(m, out, err);
}

void bl_tune_more_init(bl_tune_more *o) {
    if (!o) return;
    bl_finetune_opts f;
    bl_finetune_opts_default(&f);
    memset(o, 0, sizeof *o);
    o->size = sizeof *o;
    o->lr_min = f.lr_min;
    o->lr_max = f.lr_max;
    o->weight_decay = f.weight_decay;
    o->guard = f.guard;
}

bl_status bl_predictor_finetune_data(const bl_predictor *base, const bl_data *runs, const bl_tune_opts *o,
                                     const bl_tune_more *more, bl_predictor **out, bl_error *err) {
    BL_CHECK_ARG(out, err, "bl_predictor_finetune_data: NULL out");
    *out = NULL;
    BL_CHECK_ARG(base && runs, err, "bl_predictor_finetune_data: NULL argument");
    bl_tune_more mo;
    bl_tune_more_init(&mo);
    bl_status st = opts_copy(&mo, sizeof mo, more, "bl_tune_more", err);
    if (st != BL_OK) return st;
    if (!(mo.lr_min > 0 && mo.lr_max >= mo.lr_min && isfinite(mo.lr_max)))
        return bl_seterr(err, BL_EINVAL, "bl_tune_more: learning rates %g..%g need 0 < lr_min <= lr_max", mo.lr_min,
                         mo.lr_max);
    if (!(mo.weight_decay >= 0 && isfinite(mo.weight_decay)))
        return bl_seterr(err, BL_EINVAL, "bl_tune_more.weight_decay: %g must be >= 0", mo.weight_decay);
    if (mo.guard != 0 && mo.guard != 1)
        return bl_seterr(err, BL_EINVAL, "bl_tune_more.guard: %d must be 0 or 1", mo.guard);
    bl_finetune_opts fo;
    if ((st = bl_tune_opts_apply(o, &fo, err)) != BL_OK) return st;
    if (runs->ds->n_rows == 0) return bl_seterr(err, BL_EINVAL, "%s: no runs to fine-tune on", runs->ds->name);
    fo.lr_min = mo.lr_min;
    fo.lr_max = mo.lr_max;
    fo.weight_decay = mo.weight_decay;
    fo.guard = mo.guard;
    bl_model *tuned = NULL;
    st = bl_finetune(base->m, runs->ds, NULL, 0, &fo, &tuned, err);
    if (st == BL_OK) st = bl_predictor_wrap(tuned, out, err);
    return st;
}

/* ---- what a model records ------------------------------------------------------------------------ */

static const char *target_name(int t) {
    return t == BL_TARGET_MEAN ? "mean" : t == BL_TARGET_LOG ? "log" : "seconds";
}

bl_status bl_predictor_training(const bl_predictor *p, bl_training_info *out) {
    if (!p || !out) return BL_EINVAL;
    const bl_model *m = p->m;
    memset(out, 0, sizeof *out);
    out->val_rows = (long long)m->val_rows;
    out->data_hash = (unsigned long long)m->data_hash;
    out->numbers = bl_enc_numbers_name(m->enc.numbers);
    out->totals_per_machine = (int)m->enc.totals_per_machine;
    out->vec_len = m->enc.vec_len;
    out->ngram_min = m->enc.ngram_min;
    out->ngram_max = m->enc.ngram_max;
    out->hash_seed = m->enc.hash_seed;
    out->target_scale = target_name(m->target_scaling);
    out->target_scale_s = m->target_scale;
    out->finetune_recorded = m->tuned.known;
    out->runtime_column = p->schema && p->schema->runtime.name ? p->schema->runtime.name : "";
    out->runtime_unit = p->schema && p->schema->runtime_unit ? p->schema->runtime_unit : "";
    return BL_OK;
}

const char *bl_predictor_precision(const bl_predictor *p) {
    if (!p) return NULL;
    return bl_model_precision(p->m) == BL_PRECISION_F32 ? "f32" : "f64";
}

bl_status bl_predictor_member(const bl_predictor *p, int j, bl_member_info *out) {
    if (!p || !out) return BL_EINVAL;
    const bl_model *m = p->m;
    if (j < 0 || j >= m->n_members) return BL_ERANGE;
    const double *mm = m->member_meta ? m->member_meta + 4 * j : NULL;
    out->numbers = bl_enc_numbers_name(bl_model_member_numbers(m, j));
    out->dropout = mm ? mm[0] : m->dropout;
    out->learning_rate = mm ? mm[1] : m->lr;
    out->weight_decay = mm ? mm[2] : m->weight_decay;
    out->best_loss = mm ? mm[3] : m->best_val_loss;
    out->epochs = m->member_epochs ? (long long)m->member_epochs[j] : -1;
    return BL_OK;
}

static const bl_schema_prop *stored_source(const bl_predictor *p, size_t i) {
    if (!p->schema) return NULL;
    for (size_t k = 0; k < p->schema->n_props; k++)
        if (strcmp(p->schema->props[k].name, p->m->props[i].name) == 0) return &p->schema->props[k];
    return NULL;
}

bl_status bl_predictor_prop_source(const bl_predictor *p, size_t i, bl_prop_source *out) {
    if (!p || !out) return BL_EINVAL;
    if (i >= p->m->n_props) return BL_ERANGE;
    static const char *const kinds[] = { "column", "join", "const", "per_machine", "template" };
    const bl_schema_prop *sp = stored_source(p, i);
    if (!sp || (int)sp->source < 0 || sp->source > BL_SRC_TEMPLATE) return BL_ENOTFOUND;
    out->kind = kinds[sp->source];
    out->n_columns = sp->n_cols;
    out->value = sp->value;
    return BL_OK;
}

const char *bl_predictor_prop_source_column(const bl_predictor *p, size_t i, size_t k) {
    if (!p || i >= p->m->n_props) return NULL;
    const bl_schema_prop *sp = stored_source(p, i);
    return sp && k < sp->n_cols ? sp->cols[k].name : NULL;
}

bl_status bl_predictor_prop_seen_info(const bl_predictor *p, size_t i, bl_prop_seen_info *out) {
    if (!p || !out) return BL_EINVAL;
    if (i >= p->m->n_props) return BL_ERANGE;
    const bl_model_seen *sn = &p->m->seen;
    memset(out, 0, sizeof *out);
    out->num_min = out->num_max = NAN;
    if (!sn->known) return BL_OK;
    size_t f;
    bl_model_seen_span(p->m, i, &f, &out->kept);
    out->recorded = 1;
    out->distinct = (long long)sn->distinct[i];
    out->per_machine = sn->per_machine[i] != 0;
    out->num_min = sn->num_min[i];
    out->num_max = sn->num_max[i];
    return BL_OK;
}

/* ---- evaluation ---------------------------------------------------------------------------------- */

static int cmp_dbl(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

bl_status bl_evaluate_file(const bl_predictor *p, const char *data_path, const char *schema_path, int skip_invalid,
                           bl_evaluation **out, bl_error *err) {
    BL_CHECK_ARG(out, err, "bl_evaluate_file: NULL out");
    *out = NULL;
    BL_CHECK_ARG(p && data_path && *data_path, err, "bl_evaluate_file: NULL argument");
    BL_CHECK_ARG(skip_invalid == 0 || skip_invalid == 1, err, "bl_evaluate_file: skip_invalid %d must be 0 or 1",
                 skip_invalid);
    const bl_model *m = p->m;
    bl_schema *sc = NULL;
    bl_dataset *ds = NULL;
    double *pred = NULL, *xs = NULL;
    bl_evaluation *e = calloc(1, sizeof *e);
    bl_status st = e ? BL_OK : bl_seterr(err, BL_ENOMEM, "out of memory");
    if (st == BL_OK) {
        if (schema_path) st = bl_schema_load(schema_path, &sc, err);
        else if (m->schema_text)
            st = bl_schema_parse_stored("schema stored in the model", m->schema_text, strlen(m->schema_text), &sc, err);
        else
            st = bl_seterr(err, BL_EINVAL, "model '%.60s' stores no schema: give the runs' schema file",
                           bl_predictor_name(p));
    }
    /* runs described by other properties than the model's: an error naming the schema line */
    if (st == BL_OK) st = bl_model_check_runs_schema(m, sc, err);
    if (st == BL_OK && !schema_path) st = bl_model_check_runs_columns(m, sc, data_path, err);
    if (st == BL_OK) st = bl_dataset_load_schema_skip(data_path, sc, 0, &m->enc, skip_invalid, &ds, err);
    if (st == BL_OK && ds->n_rows == 0) st = bl_seterr(err, BL_EINVAL, "%s: no runs", data_path);
    if (st == BL_OK) {
        pred = malloc(ds->n_rows * sizeof *pred);
        xs = malloc(ds->n_rows * sizeof *xs);
        e->rows = malloc(ds->n_rows * sizeof *e->rows);
        if (!pred || !xs || !e->rows) st = bl_seterr(err, BL_ENOMEM, "out of memory");
    }
    double ctx[BL_BNET_DIM_MAX];
    for (size_t r = 0; st == BL_OK && r < ds->n_rows; r++) {
        /* each row's own context (its cluster totals included), as in training */
        st = bl_model_context_row(m, ds, r, ctx, err);
        if (st == BL_OK) st = bl_model_predict(m, ctx, &ds->scale_out[r], 1, &pred[r], err);
    }
    if (st == BL_OK) {
        /* per context and scale-out: pooling contexts would compare a mean over other jobs' runs */
        memcpy(xs, ds->scale_out, ds->n_rows * sizeof *xs);
        qsort(xs, ds->n_rows, sizeof *xs, cmp_dbl);
        double sum_rel = 0;
        for (size_t c = 0; c < ds->n_contexts; c++)
            for (size_t i = 0; i < ds->n_rows; i++) {
                if (i > 0 && xs[i] == xs[i - 1]) continue;
                double sm = 0, sp = 0;
                size_t k = 0;
                for (size_t r = 0; r < ds->n_rows; r++)
                    if (ds->context[r] == c && ds->scale_out[r] == xs[i]) { sm += ds->runtime_s[r]; sp += pred[r]; k++; }
                if (k == 0) continue;
                bl_eval_row *row = &e->rows[e->n++];
                row->scale_out = xs[i];
                row->runs = k;
                row->measured_mean_s = sm / (double)k;
                row->predicted_mean_s = sp / (double)k;
                row->relative_error = fabs(row->predicted_mean_s - row->measured_mean_s) / row->measured_mean_s;
                row->context = c;
                sum_rel += row->relative_error;
            }
        e->mean_rel = sum_rel / (double)e->n;
        st = data_wrap(ds, NULL, &e->runs, err);
        ds = NULL;
    }
    free(pred);
    free(xs);
    bl_dataset_free(ds);
    bl_schema_free(sc);
    if (st != BL_OK) {
        bl_evaluation_free(e);
        return st;
    }
    *out = e;
    return BL_OK;
}

void bl_evaluation_free(bl_evaluation *e) {
    if (!e) return;
    bl_data_free(e->runs);
    free(e->rows);
    free(e);
}

const bl_data *bl_evaluation_data(const bl_evaluation *e) { return e ? e->runs : NULL; }

size_t bl_evaluation_count(const bl_evaluation *e) { return e ? e->n : 0; }

bl_status bl_evaluation_row(const bl_evaluation *e, size_t i, bl_eval_row *out) {
    if (!e || !out) return BL_EINVAL;
    if (i >= e->n) return BL_ERANGE;
    *out = e->rows[i];
    return BL_OK;
}

double bl_evaluation_mean_relative_error(const bl_evaluation *e) { return e ? e->mean_rel : NAN; }

/* ---- model files ----------------------------------------------------------------------------------- */

bl_status bl_model_file_verify(const char *path, int *present, bl_error *err) {
    BL_CHECK_ARG(path && *path && present, err, "bl_model_file_verify: NULL argument");
    *present = 0;
    bl_error e = { 0 };
    const int h = bl_mf_verify(path, &e);
    if (h < 0) {
        bl_status st = e.status != BL_OK ? e.status : BL_EFORMAT;
        return bl_seterr(err, st, "%s", e.message[0] ? e.message : "damaged checksum header");
    }
    *present = h;
    return BL_OK;
}

bl_status bl_model_file_stamp(const char *path, int trust_edits, bl_error *err) {
    BL_CHECK_ARG(path && *path, err, "bl_model_file_stamp: no path");
    BL_CHECK_ARG(trust_edits == 0 || trust_edits == 1, err, "bl_model_file_stamp: trust_edits %d must be 0 or 1",
                 trust_edits);
    return bl_mf_rewrite(path, trust_edits, err);
}

/* ---- the synthetic corpus ---------------------------------------------------------------------------- */

void bl_corpus_opts_init(bl_corpus_opts *o) {
    if (!o) return;
    bl_synth_config c;
    bl_synth_config_default(&c);
    memset(o, 0, sizeof *o);
    o->size = sizeof *o;
    o->contexts = c.n_contexts;
    o->reps = c.reps;
    o->noise = c.noise;
    o->seed = (unsigned long long)c.seed;
    o->n_scale_outs = c.n_scale_outs;
    memcpy(o->scale_outs, c.scale_outs, sizeof o->scale_outs);
    o->shape = c.shape;
    o->time_scale = c.time_scale;
    o->environment = NULL;
}

int bl_corpus_shape(const char *name) { return name ? bl_synth_shape_from_name(name) : -1; }

bl_status bl_corpus_write(const bl_corpus_opts *in, const char *dir, const char *stem, size_t *rows,
                          size_t *contexts, bl_error *err) {
    BL_CHECK_ARG(dir && *dir && stem && *stem, err, "bl_corpus_write: no folder or stem");
    if (strchr(stem, '/') || strcmp(stem, ".") == 0 || strcmp(stem, "..") == 0)
        return bl_seterr(err, BL_EINVAL, "stem '%.100s': a file name without folders (the folder is given apart)",
                         stem);
    bl_corpus_opts o;
    bl_corpus_opts_init(&o);
    bl_status st = opts_copy(&o, sizeof o, in, "bl_corpus_opts", err);
    if (st != BL_OK) return st;
    if (o.contexts < 1 || o.contexts > BL_CORPUS_CONTEXTS_MAX)
        return bl_seterr(err, BL_EINVAL, "bl_corpus_opts.contexts: %zu must be 1..%d", o.contexts,
                         BL_CORPUS_CONTEXTS_MAX);
    if (o.reps < 1 || o.reps > 1000)
        return bl_seterr(err, BL_EINVAL, "bl_corpus_opts.reps: %zu must be 1..1000", o.reps);
    if (!(o.noise >= 0 && o.noise <= 1))
        return bl_seterr(err, BL_EINVAL, "bl_corpus_opts.noise: %g must be 0..1", o.noise);
    if (o.n_scale_outs < 1 || o.n_scale_outs > BL_CORPUS_SCALE_OUTS_MAX)
        return bl_seterr(err, BL_EINVAL, "bl_corpus_opts.n_scale_outs: %zu must be 1..%d", o.n_scale_outs,
                         BL_CORPUS_SCALE_OUTS_MAX);
    for (size_t i = 0; i < o.n_scale_outs; i++)
        if (!(o.scale_outs[i] >= 1 && o.scale_outs[i] <= 100000) || o.scale_outs[i] != floor(o.scale_outs[i]))
            return bl_seterr(err, BL_EINVAL, "bl_corpus_opts.scale_outs[%zu]: %g must be a whole number 1..100000", i,
                             o.scale_outs[i]);
    if (o.shape < BL_SHAPE_ERNEST || o.shape > BL_SHAPE_PLATEAU)
        return bl_seterr(err, BL_EINVAL, "bl_corpus_opts.shape: %d must be one of BL_SHAPE_ERNEST, _CLIFF, "
                         "_SUPERLINEAR, _PLATEAU", o.shape);
    if (!(o.time_scale >= 1e-4 && o.time_scale <= 1e6))
        return bl_seterr(err, BL_EINVAL, "bl_corpus_opts.time_scale: %g must be from 1e-4 to 1e6 (runtimes stay "
                         "above a millisecond)", o.time_scale);
    bl_synth_config c;
    bl_synth_config_default(&c);
    if (o.environment) {
        if (strlen(o.environment) > BL_CORPUS_ENVIRONMENT_MAX || strpbrk(o.environment, "\"\\"))
            return bl_seterr(err, BL_EINVAL, "bl_corpus_opts.environment '%.80s': at most %d characters, no quote or "
                             "backslash", o.environment, BL_CORPUS_ENVIRONMENT_MAX);
        snprintf(c.environment, sizeof c.environment, "%s", o.environment);
    }
    struct stat dst;
    if (stat(dir, &dst) != 0) return bl_seterr(err, BL_EIO, "%s: no such folder", dir);
    if (!S_ISDIR(dst.st_mode)) return bl_seterr(err, BL_EINVAL, "%s: not a folder", dir);
    c.n_contexts = o.contexts;
    c.reps = o.reps;
    c.noise = o.noise;
    c.seed = (uint64_t)o.seed;
    c.n_scale_outs = o.n_scale_outs;
    memcpy(c.scale_outs, o.scale_outs, sizeof c.scale_outs);
    c.shape = o.shape;
    c.time_scale = o.time_scale;
    bl_synth_corpus *corp = NULL;
    st = bl_synth_generate(&c, &corp, err);
    if (st == BL_OK) st = bl_synth_write(corp, dir, stem, err);
    if (st == BL_OK && rows) *rows = corp->n_rows;
    if (st == BL_OK && contexts) *contexts = corp->n_contexts;
    bl_synth_free(corp);
    return st;
}
