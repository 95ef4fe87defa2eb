/* model.c — a Bellamy model: creation, the tables a training pass reads, fine-tuning, prediction.
 * Pre-training and its search live in pretrain.c, files in modelio.c.
 * Not here: printing, argument parsing, HDF5.
 */
#include "model/model_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/error.h"
#include "common/str.h"
#include "model/seen.h"

void bl_train_opts_default(bl_train_opts *t) {
    memset(t, 0, sizeof *t);
    t->size = sizeof *t;
    t->trials = BL_TRAIN_TRIALS_DEFAULT;
    t->epochs = BL_TRAIN_EPOCHS_DEFAULT;
    t->grace = BL_TRAIN_GRACE_DEFAULT;
    t->threads = BL_TRAIN_THREADS_DEFAULT;
    t->seed = BL_TRAIN_SEED_DEFAULT;
    t->val_fraction = BL_TRAIN_VAL_FRACTION_DEFAULT;
    t->val_split = BL_SPLIT_CONTEXTS;
    t->target_scale = BL_SCALE_SECONDS;
    t->device = BL_ON_CPU;
    t->members = BL_TRAIN_MEMBERS_DEFAULT;
    t->dropout_masks = BL_MASKS_ROW; /* measured better than per-value masks (bench/README.md) */
    t->calibrate = 1;
    t->precision = BL_TRAIN_PRECISION_DEFAULT;
}

void bl_pretrain_opts_from(bl_pretrain_opts *o, const bl_train_opts *t) {
    memset(o, 0, sizeof *o);
    o->trials = t->trials;
    o->epochs = t->epochs;
    o->grace = t->grace;
    o->reduction = BL_PRETRAIN_REDUCTION_DEFAULT;
    o->batch = 64;
    o->avg_span = BL_PRETRAIN_AVG_SPAN_DEFAULT;
    o->threads = t->threads;
    o->seed = (uint64_t)t->seed;
    o->val_fraction = t->val_fraction;
    o->val_split = t->val_split;
    o->target_scaling = t->target_scale;
    o->per_row_dropout = t->dropout_masks;
    o->device = t->device;
    o->members = t->members;
    o->calibrate = t->calibrate;
    o->calib_draws = BL_CALIB_DRAWS;
    o->progress = t->progress;
    o->progress_ctx = t->progress_ctx;
    o->ranks = t->ranks;
    o->precision = t->precision;
    const double dr[3] = {0.05, 0.1, 0.2}, lr[3] = {0.1, 0.01, 0.001}, wd[3] = {0.01, 0.001, 0.0001};
    memcpy(o->dropouts, dr, sizeof dr);
    memcpy(o->lrs, lr, sizeof lr);
    memcpy(o->wds, wd, sizeof wd);
}

void bl_pretrain_opts_default(bl_pretrain_opts *o) {
    bl_train_opts t;
    bl_train_opts_default(&t);
    bl_pretrain_opts_from(o, &t);
}

bl_status bl_train_opts_bounds(const bl_train_opts *o, bl_error *err) {
    if (o->trials < 1 || o->trials > BL_TRAIN_TRIALS_MAX)
        return bl_seterr(err, BL_EINVAL, "bl_train_opts.trials %d: must be 1..%d", o->trials, BL_TRAIN_TRIALS_MAX);
    if (o->epochs < 1 || o->epochs > BL_TRAIN_EPOCHS_MAX)
        return bl_seterr(err, BL_EINVAL, "bl_train_opts.epochs %ld: must be 1..%ld", o->epochs, BL_TRAIN_EPOCHS_MAX);
    if (o->grace < 1 || o->grace > BL_TRAIN_EPOCHS_MAX)
        return bl_seterr(err, BL_EINVAL, "bl_train_opts.grace %ld: must be 1..%ld", o->grace, BL_TRAIN_EPOCHS_MAX);
    if (o->threads < 1 || o->threads > BL_TRAIN_THREADS_MAX)
        return bl_seterr(err, BL_EINVAL, "bl_train_opts.threads %d: must be 1..%d", o->threads, BL_TRAIN_THREADS_MAX);
    if (!(o->val_fraction > 0 && o->val_fraction < 1))
        return bl_seterr(err, BL_EINVAL, "bl_train_opts.val_fraction %g: must be strictly between 0 and 1",
                         o->val_fraction);
    if (o->val_split != BL_SPLIT_CONTEXTS && o->val_split != BL_SPLIT_GROUPS)
        return bl_seterr(err, BL_EINVAL, "bl_train_opts.val_split %d: must be BL_SPLIT_CONTEXTS or BL_SPLIT_GROUPS",
                         o->val_split);
    if (o->target_scale < BL_SCALE_SECONDS || o->target_scale > BL_SCALE_LOG)
        return bl_seterr(err, BL_EINVAL, "bl_train_opts.target_scale %d: must be BL_SCALE_SECONDS, _MEAN or _LOG",
                         o->target_scale);
    if (o->device != BL_ON_CPU && o->device != BL_ON_CUDA)
        return bl_seterr(err, BL_EINVAL, "bl_train_opts.device %d: must be BL_ON_CPU or BL_ON_CUDA", o->device);
    if (o->members < 1 || o->members > BL_TRAIN_MEMBERS_MAX)
        return bl_seterr(err, BL_EINVAL, "bl_train_opts.members %d: must be 1..%d", o->members, BL_TRAIN_MEMBERS_MAX);
    if (o->dropout_masks < BL_MASKS_VALUE || o->dropout_masks > BL_MASKS_HYBRID)
        return bl_seterr(err, BL_EINVAL, "bl_train_opts.dropout_masks %d: must be BL_MASKS_VALUE, _ROW or _HYBRID",
                         o->dropout_masks);
    if (o->calibrate != 0 && o->calibrate != 1)
        return bl_seterr(err, BL_EINVAL, "bl_train_opts.calibrate %d: must be 0 or 1", o->calibrate);
    const bl_train_ranks *r = o->ranks;
    if (r && (r->size < 1 || r->rank < 0 || r->rank >= r->size))
        return bl_seterr(err, BL_EINVAL, "bl_train_opts.ranks: rank %d of %d: must be 0 <= rank < size", r->rank,
                         r->size);
    if (r && r->size > 1 && !r->gather)
        return bl_seterr(err, BL_EINVAL, "bl_train_opts.ranks: %d ranks need a gather function", r->size);
    if (r && r->size > 1 && o->device != BL_ON_CPU)
        return bl_seterr(err, BL_EUNSUPPORTED, "bl_train_opts.ranks: a pre-training over %d ranks runs on CPUs only; "
                         "use device BL_ON_CPU or one rank", r->size);
    if (o->precision != BL_PRECISION_F64 && o->precision != BL_PRECISION_F32 && o->precision != BL_PRECISION_AUTO)
        return bl_seterr(err, BL_EINVAL,
                         "bl_train_opts.precision %d: must be BL_PRECISION_AUTO, BL_PRECISION_F64 or BL_PRECISION_F32",
                         o->precision);
    if (o->precision == BL_PRECISION_F32 && o->device == BL_ON_CUDA)
        return bl_seterr(err, BL_EUNSUPPORTED, "bl_train_opts.precision BL_PRECISION_F32: the CUDA search computes in "
                         "float64 only; use device BL_ON_CPU with precision f32, or precision BL_PRECISION_F64 on CUDA");
    return BL_OK;
}

bl_status bl_pretrain_opts_check(const bl_pretrain_opts *o, bl_error *err) {
    bl_train_opts t; /* the shared fields, under their public names */
    bl_train_opts_default(&t);
    t.trials = o->trials;
    t.epochs = o->epochs;
    t.grace = o->grace;
    t.threads = o->threads;
    t.seed = (unsigned long long)o->seed;
    if (!o->no_validation) t.val_fraction = o->val_fraction;
    t.val_split = o->val_split;
    t.target_scale = o->target_scaling;
    t.device = o->device == BL_DEVICE_CPU_BATCHED ? BL_ON_CPU : o->device;
    t.members = o->members;
    t.dropout_masks = o->per_row_dropout;
    t.calibrate = o->calibrate;
    t.ranks = o->ranks;
    t.precision = o->precision;
    bl_status st = bl_train_opts_bounds(&t, err);
    if (st != BL_OK) return st;
    if (o->precision == BL_PRECISION_F32 && o->device == BL_DEVICE_CPU_BATCHED)
        return bl_seterr(err, BL_EUNSUPPORTED, "precision f32: the batched CPU trial group (BL_DEVICE_CPU_BATCHED) "
                         "computes in float64 only; use BL_DEVICE_CPU with precision f32");
    if (o->reduction < 2) return bl_seterr(err, BL_EINVAL, "reduction factor %d: must be at least 2", o->reduction);
    if (o->batch < 1 || o->batch > 1 << 20) return bl_seterr(err, BL_EINVAL, "batch size %d: must be 1..2^20", o->batch);
    if (o->avg_span < 1 || o->avg_span > 1000000)
        return bl_seterr(err, BL_EINVAL, "parameter average span %d epochs: must be 1..1000000", o->avg_span);
    if (o->no_validation != 0 && o->no_validation != 1)
        return bl_seterr(err, BL_EINVAL, "no_validation %d: must be 0 or 1", o->no_validation);
    if (o->ranks && o->ranks->size > 1 && o->device != BL_DEVICE_CPU)
        return bl_seterr(err, BL_EUNSUPPORTED, "a pre-training over %d ranks runs the per-trial CPU search only",
                         o->ranks->size);
    return BL_OK;
}

void bl_finetune_opts_default(bl_finetune_opts *o) {
    memset(o, 0, sizeof *o);
    o->max_epochs = 2500;
    o->patience = 1000;
    o->stop_mae = 5.0;
    o->stop_rel = 0.0;
    o->stop_cv = 1; /* measured better than the MAE rule alone (bench/README.md) */
    o->cv_epochs = 500;
    o->cv_folds = 10;
    o->fixed_epochs = -1;
    o->lr_min = 0.001;
    o->lr_max = 0.01;
    o->ramp_epochs = 10;
    o->cosine_epochs = 40;
    o->weight_decay = 0.0; /* measured better than the pre-training's decay (bench/README.md) */
    o->unfreeze_f = 1;
    o->seed = 1;
    o->guard = 1;
}

int64_t bl_finetune_opts_fingerprint(const bl_finetune_opts *o) {
    const double v[] = {(double)o->max_epochs, (double)o->patience, o->stop_mae, o->stop_rel, (double)o->stop_cv,
                        (double)o->cv_epochs, (double)o->cv_folds, (double)o->fixed_epochs, o->lr_min, o->lr_max,
                        (double)o->ramp_epochs, (double)o->cosine_epochs, o->weight_decay, (double)o->unfreeze_f,
                        (double)o->guard};
    uint64_t h = 0x9e3779b97f4a7c15ull;
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        uint64_t b;
        memcpy(&b, &v[i], sizeof b);
        h = (h ^ b) * 0x100000001b3ull;
        h ^= h >> 29;
    }
    h &= 0x7fffffffffffffffull;
    return h ? (int64_t)h : 1;
}

void bl_model_free(bl_model *m) {
    if (!m) return;
    bl_model_records_free(m);
    bl_bnet_free(&m->net);
    if (m->more)
        for (int i = 0; i < m->n_members - 1; i++) bl_bnet_free(&m->more[i]);
    free(m->more);
    free(m->member_meta);
    free(m->num_range);
    for (size_t i = 0; i < m->n_props; i++) free(m->props[i].name);
    free(m->props);
    free(m->schema_text);
    free(m->name);
    free(m);
}

long bl_model_find_prop(const bl_model *m, const char *name) {
    if (!m || !name) return -1;
    for (size_t i = 0; i < m->n_props; i++)
        if (strcmp(m->props[i].name, name) == 0) return (long)i;
    return -1;
}

/* The time now as ISO 8601 UTC into buf (at least 21 bytes). */
static void iso_now(char *buf, size_t cap) {
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, cap, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

void bl_model_stamp_now(bl_model *m) { iso_now(m->created, sizeof m->created); }

bl_status bl_model_alloc(const bl_model_prop *props, size_t n_props, const bl_encode_settings *enc,
                         const char *schema_text, bl_rng *rng, bl_model **out, bl_error *err) {
    *out = NULL;
    bl_model *m = calloc(1, sizeof *m);
    if (!m) return bl_seterr(err, BL_ENOMEM, "out of memory for a model");
    int n_ess = 0, n_opt = 0;
    m->props = calloc(n_props ? n_props : 1, sizeof *m->props);
    m->name = bl_strdup("model");
    if (!m->props || !m->name) goto nomem;
    /* network order: essential first, then optional, each in the given order */
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < n_props; i++) {
            if ((pass == 0) != (props[i].essential != 0)) continue;
            bl_model_prop *p = &m->props[m->n_props++];
            p->name = bl_strdup(props[i].name);
            p->essential = props[i].essential != 0;
            p->kind = props[i].kind;
            if (!p->name) goto nomem;
            if (p->essential) n_ess++; else n_opt++;
        }
    if (schema_text && !(m->schema_text = bl_strdup(schema_text))) goto nomem;
    m->enc = *enc;
    if (enc->numbers == BL_ENC_NUMBERS_RANGE) {
        /* until fitted, LOG's bounds: 0 .. vec_len − 1 */
        if (!(m->num_range = malloc((n_props ? n_props : 1) * 2 * sizeof *m->num_range))) goto nomem;
        for (size_t i = 0; i < n_props; i++) {
            m->num_range[2 * i] = 0.0;
            m->num_range[2 * i + 1] = (double)(enc->vec_len - 1);
        }
    }
    bl_bnet_dims d;
    bl_bnet_dims_default(&d, n_ess, n_opt);
    d.vec_len = (int)enc->vec_len;
    bl_status st = bl_bnet_init(&m->net, &d, rng, err);
    if (st) {
        bl_model_free(m);
        return st;
    }
    m->n_members = 1;
    m->val_rows = -1;
    m->target_scale = 1.0;
    m->dropout = 0.0;
    m->lr = 0.01;
    m->weight_decay = 0.001;
    bl_model_stamp_now(m);
    *out = m;
    return BL_OK;
nomem:
    bl_model_free(m);
    return bl_seterr(err, BL_ENOMEM, "out of memory for a model");
}

void bl_model_set_precision(bl_model *m, int precision) {
    const int f32 = precision == BL_PRECISION_F32;
    m->net.d.f32 = f32;
    for (int j = 1; j < m->n_members; j++) m->more[j - 1].d.f32 = f32;
}

void bl_model_round_params(bl_model *m) {
    if (!m->net.d.f32) return;
    for (int j = 0; j < m->n_members; j++) {
        bl_bnet *net = bl_model_member(m, j);
        for (size_t i = 0; i < net->P.n; i++) net->P.param[i] = (double)(float)net->P.param[i];
    }
}

size_t bl_model_ctx_len(const bl_model *m) { return (size_t)m->n_members * (size_t)m->net.d.z_hidden; }

bl_status bl_model_add_members(bl_model *m, const bl_model *const *others, int k, bl_error *err) {
    if (!m || (k > 0 && !others)) return bl_seterr(err, BL_EINVAL, "bl_model_add_members: NULL argument");
    int total = m->n_members + k;
    if (total > BL_MODEL_MEMBERS_MAX || (size_t)total * (size_t)m->net.d.z_hidden > BL_BNET_DIM_MAX)
        return bl_seterr(err, BL_EINVAL, "an ensemble of %d members is too large (at most %d, and %d context values)",
                         total, BL_MODEL_MEMBERS_MAX, BL_BNET_DIM_MAX);
    for (int j = 0; j < k; j++) {
        const bl_bnet_dims *a = &m->net.d, *b = &others[j]->net.d;
        if (memcmp(a, b, sizeof *a) != 0 || others[j]->n_props != m->n_props)
            return bl_seterr(err, BL_EINVAL, "ensemble member %d has another network shape", m->n_members + j);
        /* a member reads numbers as its place in the ensemble says, with the same bounds; a model
         * whose setting is BOTH reads them, with its one network, as bits */
        const uint32_t want = bl_model_member_numbers(m, m->n_members + j),
                       has = bl_model_member_numbers(others[j], 0);
        if (has != want ||
            (m->num_range && memcmp(m->num_range, others[j]->num_range, m->n_props * 2 * sizeof(double)) != 0))
            return bl_seterr(err, BL_EINVAL, "ensemble member %d encodes numbers otherwise (%s, expected %s)",
                             m->n_members + j, bl_enc_numbers_name(has), bl_enc_numbers_name(want));
    }
    if (k == 0) return BL_OK;
    bl_bnet *more = realloc(m->more, (size_t)(total - 1) * sizeof *more);
    if (!more) return bl_seterr(err, BL_ENOMEM, "out of memory for an ensemble");
    m->more = more;
    double *meta = realloc(m->member_meta, (size_t)total * 4 * sizeof *meta);
    if (!meta) return bl_seterr(err, BL_ENOMEM, "out of memory for an ensemble");
    if (!m->member_meta) { /* member 0's record comes from the model itself */
        meta[0] = m->dropout;
        meta[1] = m->lr;
        meta[2] = m->weight_decay;
        meta[3] = m->best_val_loss;
    }
    m->member_meta = meta;
    int64_t *ep = realloc(m->member_epochs, (size_t)total * sizeof *ep);
    if (!ep) return bl_seterr(err, BL_ENOMEM, "out of memory for an ensemble");
    if (!m->member_epochs) ep[0] = m->epochs;
    m->member_epochs = ep;
    for (int j = 0; j < k; j++) {
        const bl_model *o = others[j];
        bl_bnet *dst = &m->more[m->n_members - 1];
        bl_status st = bl_bnet_init(dst, &m->net.d, NULL, err);
        if (st) return st;
        bl_bnet_copy_params(dst, &o->net, 0);
        double *mm = meta + (size_t)m->n_members * 4;
        mm[0] = o->dropout;
        mm[1] = o->lr;
        mm[2] = o->weight_decay;
        mm[3] = o->best_val_loss;
        m->member_epochs[m->n_members] = o->epochs;
        m->n_members++;
    }
    return BL_OK;
}

bl_status bl_model_clone(const bl_model *m, bl_model **out, bl_error *err) {
    if (!m || !out) return bl_seterr(err, BL_EINVAL, "bl_model_clone: NULL argument");
    bl_status st = bl_model_alloc(m->props, m->n_props, &m->enc, m->schema_text, NULL, out, err);
    if (st) return st;
    bl_model *c = *out;
    char *nm = bl_strdup(m->name);
    if (!nm) {
        bl_model_free(c);
        *out = NULL;
        return bl_seterr(err, BL_ENOMEM, "out of memory for a model");
    }
    free(c->name);
    c->name = nm;
    c->net.d.f32 = m->net.d.f32; /* a copy (a fine-tuned one too) computes as the model does */
    bl_bnet_copy_params(&c->net, &m->net, 0);
    for (int i = 0; i < m->net.P.n_views; i++) c->net.P.views[i].frozen = m->net.P.views[i].frozen;
    c->scaler = m->scaler;
    if (m->num_range) memcpy(c->num_range, m->num_range, m->n_props * 2 * sizeof *c->num_range);
    c->target_scale = m->target_scale;
    c->target_scaling = m->target_scaling;
    c->dropout = m->dropout;
    c->lr = m->lr;
    c->weight_decay = m->weight_decay;
    c->data_hash = m->data_hash;
    c->rows = m->rows;
    c->contexts = m->contexts;
    c->epochs = m->epochs;
    c->finetune_epochs = m->finetune_epochs;
    c->finetune_runs = m->finetune_runs;
    c->val_rows = m->val_rows;
    c->best_val_loss = m->best_val_loss;
    c->best_train_loss = m->best_train_loss;
    c->finetune_mae = m->finetune_mae;
    c->guard = m->guard;
    memcpy(c->created, m->created, sizeof c->created);
    c->pretrained = m->pretrained;
    if (m->n_members > 1) { /* the other members, through a view of each as a one-network model */
        for (int j = 1; j < m->n_members; j++) {
            bl_model view = *m;
            view.net = m->more[j - 1];
            view.n_members = 1;
            view.enc.numbers = bl_model_member_numbers(m, j); /* the member alone reads numbers so */
            view.dropout = m->member_meta[4 * j];
            view.lr = m->member_meta[4 * j + 1];
            view.weight_decay = m->member_meta[4 * j + 2];
            view.best_val_loss = m->member_meta[4 * j + 3];
            if (m->member_epochs) view.epochs = m->member_epochs[j];
            const bl_model *vp = &view;
            bl_status st = bl_model_add_members(c, &vp, 1, err);
            if (st) {
                bl_model_free(c);
                *out = NULL;
                return st;
            }
        }
        memcpy(c->member_meta, m->member_meta, (size_t)m->n_members * 4 * sizeof(double));
    }
    st = bl_model_records_copy(c, m, err);
    if (st) {
        bl_model_free(c);
        *out = NULL;
        return st;
    }
    return BL_OK;
}

/* ---- views: the tables a pass reads ----------------------------------------------------------- */

void bl_vbuf_free(bl_vbuf *b) {
    if (!b) return;
    free(b->sx);
    free(b->val);
    free(b->target);
    free(b->sx_feat);
    free(b->sx_value);
    free(b->n_vals);
    free(b->vecs);
    free(b->own);
    memset(b, 0, sizeof *b);
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

bl_status bl_model_map_props(const bl_model *m, const bl_dataset *ds, size_t *map, bl_error *err) {
    if (m->enc.vec_len != ds->settings.vec_len || m->enc.ngram_min != ds->settings.ngram_min ||
        m->enc.ngram_max != ds->settings.ngram_max || m->enc.hash_seed != ds->settings.hash_seed ||
        m->enc.totals_per_machine != ds->settings.totals_per_machine || m->enc.numbers != ds->settings.numbers ||
        strcmp(m->enc.vocabulary, ds->settings.vocabulary) != 0)
        return bl_seterr(err, BL_EINVAL, "%s: encoded with other encoder settings than the model", ds->name);
    for (size_t i = 0; i < m->n_props; i++) {
        long j = bl_dataset_find_prop(ds, m->props[i].name);
        if (j < 0)
            return bl_seterr(err, BL_EFORMAT, "%s: lacks the model's %s property '%s'", ds->name,
                             m->props[i].essential ? "essential" : "optional", m->props[i].name);
        if (ds->props[j].kind != m->props[i].kind)
            return bl_seterr(err, BL_EFORMAT, "%s: property '%s' is %s, the model expects %s", ds->name,
                             m->props[i].name, ds->props[j].kind == BL_PROP_NUMBER ? "a number" : "text",
                             m->props[i].kind == BL_PROP_NUMBER ? "a number" : "text");
        map[i] = (size_t)j;
    }
    return BL_OK;
}

/* 1 when the model encodes number properties itself from their values (bounds, or members in two
 * encodings) instead of reading the data set's vectors. */
static int encodes_numbers(const bl_model *m) {
    return m->enc.numbers == BL_ENC_NUMBERS_RANGE || m->enc.numbers == BL_ENC_NUMBERS_BOTH;
}

/* Number v of model property i as member mi reads it: out [vec_len]. */
static void member_number_vec(const bl_model *m, int mi, size_t i, uint64_t v, double *out) {
    const uint32_t e = bl_model_member_numbers(m, mi);
    if (e == BL_ENC_NUMBERS_RANGE) {
        bl_number_range_forward(v, m->num_range + 2 * i, &m->enc, out);
        return;
    }
    bl_encode_settings s = m->enc;
    s.numbers = e;
    (void)bl_binarize_forward(v, &s, out, NULL); /* v was checked against vec_len when it was read */
}

bl_status bl_vbuf_build(const bl_model *m, const bl_dataset *ds, const size_t *rows, size_t n,
                        bl_vbuf *b, bl_error *err) {
    return bl_vbuf_build_member(m, 0, ds, rows, n, b, err);
}

bl_status bl_vbuf_build_member(const bl_model *m, int mi, const bl_dataset *ds, const size_t *rows, size_t n,
                               bl_vbuf *b, bl_error *err) {
    memset(b, 0, sizeof *b);
    if (n == 0) return bl_seterr(err, BL_EINVAL, "%s: no rows to train on", ds->name);
    const size_t np = m->n_props;
    size_t map[2 * BL_BNET_PROPS_MAX];
    if (np > 2 * BL_BNET_PROPS_MAX) return bl_seterr(err, BL_EINVAL, "too many properties");
    bl_status st = bl_model_map_props(m, ds, map, err);
    if (st) return st;
    b->sx = malloc(n * sizeof *b->sx);
    b->val = malloc((np ? np : 1) * n * sizeof *b->val);
    b->target = malloc(n * sizeof *b->target);
    b->sx_value = malloc(n * sizeof *b->sx_value);
    b->n_vals = malloc((np ? np : 1) * sizeof *b->n_vals);
    b->vecs = malloc((np ? np : 1) * sizeof *b->vecs);
    if (!b->sx || !b->val || !b->target || !b->sx_value || !b->n_vals || !b->vecs) goto nomem;
    for (size_t i = 0; i < n; i++) {
        size_t r = rows ? rows[i] : i;
        if (r >= ds->n_rows) {
            bl_vbuf_free(b);
            return bl_seterr(err, BL_EINVAL, "%s: row %zu out of range (%zu rows)", ds->name, r, ds->n_rows);
        }
        b->sx_value[i] = ds->scale_out[r];
        b->target[i] = m->target_scaling == BL_TARGET_LOG ? log(ds->runtime_s[r] / m->target_scale)
                                                          : ds->runtime_s[r] / m->target_scale;
        for (size_t p = 0; p < np; p++) b->val[i * np + p] = ds->props[map[p]].row_value[r];
    }
    /* distinct scale-outs, sorted */
    double *uniq = malloc(n * sizeof *uniq);
    if (!uniq) goto nomem;
    memcpy(uniq, b->sx_value, n * sizeof *uniq);
    qsort(uniq, n, sizeof *uniq, cmp_double);
    size_t nu = 0;
    for (size_t i = 0; i < n; i++)
        if (nu == 0 || uniq[i] != uniq[nu - 1]) uniq[nu++] = uniq[i];
    b->sx_feat = malloc(nu * BL_SCALEOUT_NFEAT * sizeof *b->sx_feat);
    if (!b->sx_feat) {
        free(uniq);
        goto nomem;
    }
    bl_scaleout_features_forward(uniq, nu, b->sx_feat);
    bl_minmax_transform(&m->scaler, b->sx_feat, nu, b->sx_feat);
    for (size_t i = 0; i < n; i++) {
        const double *hit = bsearch(&b->sx_value[i], uniq, nu, sizeof *uniq, cmp_double);
        b->sx[i] = (uint32_t)(hit - uniq);
    }
    free(uniq);
    size_t n_own = 0;
    const size_t L = m->enc.vec_len;
    for (size_t p = 0; p < np; p++) {
        b->n_vals[p] = ds->props[map[p]].n_values;
        b->vecs[p] = ds->props[map[p]].vectors;
        if (encodes_numbers(m) && m->props[p].kind == BL_PROP_NUMBER) n_own += b->n_vals[p];
    }
    if (n_own) { /* numbers the model encodes itself: the value tables in the member's encoding */
        if (!(b->own = malloc(n_own * L * sizeof *b->own))) goto nomem;
        double *o = b->own;
        for (size_t p = 0; p < np; p++) {
            if (!(m->props[p].kind == BL_PROP_NUMBER)) continue;
            const bl_dataset_prop *dp = &ds->props[map[p]];
            for (size_t v = 0; v < dp->n_values; v++) {
                uint64_t x = 0;
                if ((st = bl_parse_natural(dp->values[v], &m->enc, &x, err))) { /* read from ds: defensive */
                    bl_vbuf_free(b);
                    return st;
                }
                member_number_vec(m, mi, p, x, o + v * L);
            }
            b->vecs[p] = o;
            o += dp->n_values * L;
        }
    }
    b->v.n_rows = n;
    b->v.sx = b->sx;
    b->v.val = b->val;
    b->v.target = b->target;
    b->v.n_sx = nu;
    b->v.sx_feat = b->sx_feat;
    b->v.n_vals = b->n_vals;
    b->v.vecs = b->vecs;
    return BL_OK;
nomem:
    bl_vbuf_free(b);
    return bl_seterr(err, BL_ENOMEM, "out of memory for training tables");
}

const double *bl_model_row_vec(const bl_model *m, int mi, size_t i, const bl_dataset *ds, size_t j, size_t r,
                               double *buf) {
    if (!encodes_numbers(m) || m->props[i].kind != BL_PROP_NUMBER) return bl_dataset_vec(ds, j, r);
    uint64_t v = 0;
    (void)bl_parse_natural(ds->props[j].values[ds->props[j].row_value[r]], &m->enc, &v, NULL); /* read from ds */
    member_number_vec(m, mi, i, v, buf);
    return buf;
}

/* With numbers over fitted bounds: each number property's bounds from the values its rows hold. */
static bl_status fit_number_ranges(bl_model *m, const bl_dataset *ds, bl_error *err) {
    if (!m->num_range) return BL_OK;
    size_t map[2 * BL_BNET_PROPS_MAX];
    if (m->n_props > 2 * BL_BNET_PROPS_MAX) return bl_seterr(err, BL_EINVAL, "too many properties");
    bl_status st = bl_model_map_props(m, ds, map, err);
    if (st) return st;
    for (size_t i = 0; i < m->n_props; i++) {
        if (m->props[i].kind != BL_PROP_NUMBER) continue;
        const bl_dataset_prop *dp = &ds->props[map[i]];
        /* a subset keeps its parent's whole value table: only the values its rows use count */
        unsigned char *used = calloc(dp->n_values ? dp->n_values : 1, 1);
        double *L = malloc((dp->n_values ? dp->n_values : 1) * sizeof *L);
        if (!used || !L) {
            free(used);
            free(L);
            return bl_seterr(err, BL_ENOMEM, "out of memory");
        }
        for (size_t r = 0; r < ds->n_rows; r++) used[dp->row_value[r]] = 1;
        size_t n = 0;
        for (size_t v = 0; v < dp->n_values && !st; v++) {
            if (!used[v]) continue;
            uint64_t x = 0;
            st = bl_parse_natural(dp->values[v], &m->enc, &x, err);
            L[n++] = log2(1.0 + (double)x);
        }
        if (!st && n) bl_number_range_fit(L, n, m->num_range + 2 * i);
        free(used);
        free(L);
        if (st) return st;
    }
    return BL_OK;
}

/* Fits the scale-out scaler, the target scale and (numbers over fitted bounds) the number bounds
 * on rows of ds. */
bl_status bl_model_fit_scalers(bl_model *m, const bl_dataset *ds, int target_scaling, bl_error *err) {
    bl_status st0 = fit_number_ranges(m, ds, err);
    if (st0) return st0;
    double *feat = malloc(ds->n_rows * BL_SCALEOUT_NFEAT * sizeof *feat);
    if (!feat) return bl_seterr(err, BL_ENOMEM, "out of memory");
    bl_dataset_scaleout_features(ds, feat);
    bl_status st = bl_minmax_fit(&m->scaler, feat, ds->n_rows, BL_SCALEOUT_NFEAT, err);
    free(feat);
    if (st) return st;
    m->target_scaling = target_scaling;
    m->target_scale = 1.0;
    if (target_scaling == BL_TARGET_MEAN) {
        double s = 0.0;
        for (size_t i = 0; i < ds->n_rows; i++) s += ds->runtime_s[i];
        m->target_scale = s / (double)ds->n_rows;
    } else if (target_scaling == BL_TARGET_LOG) {
        double s = 0.0;
        for (size_t i = 0; i < ds->n_rows; i++) {
            if (!(ds->runtime_s[i] > 0))
                return bl_seterr(err, BL_EINVAL, "%s: row %zu: runtime %g must be positive for log targets",
                                 ds->name, i, ds->runtime_s[i]);
            s += log(ds->runtime_s[i]);
        }
        m->target_scale = exp(s / (double)ds->n_rows);
    } else if (target_scaling != BL_TARGET_SECONDS) {
        return bl_seterr(err, BL_EINVAL, "unknown target scaling %d", target_scaling);
    }
    return BL_OK;
}

bl_status bl_model_from_dataset(const bl_dataset *ds, const char *schema_text, bl_rng *rng,
                                bl_model **out, bl_error *err) {
    size_t np = ds->n_props;
    bl_model_prop *props = calloc(np ? np : 1, sizeof *props);
    if (!props) return bl_seterr(err, BL_ENOMEM, "out of memory");
    for (size_t i = 0; i < np; i++) {
        props[i].name = ds->props[i].name;
        props[i].essential = ds->props[i].essential;
        props[i].kind = ds->props[i].kind;
    }
    bl_status st = bl_model_alloc(props, np, &ds->settings, schema_text, rng, out, err);
    free(props);
    return st;
}

bl_status bl_model_new_untrained(const bl_dataset *ds, const char *schema_text, int target_scaling,
                                 uint64_t seed, bl_model **out, bl_error *err) {
    if (!ds || !out) return bl_seterr(err, BL_EINVAL, "bl_model_new_untrained: NULL argument");
    *out = NULL;
    if (ds->n_rows == 0) return bl_seterr(err, BL_EINVAL, "%s: no rows", ds->name);
    bl_rng rng;
    bl_rng_seed(&rng, seed);
    bl_model *m;
    bl_status st = bl_model_from_dataset(ds, schema_text, &rng, &m, err);
    if (st) return st;
    if ((st = bl_model_fit_scalers(m, ds, target_scaling, err))) {
        bl_model_free(m);
        return st;
    }
    m->pretrained = 0;
    m->data_hash = ds->data_hash;
    m->rows = (int64_t)ds->n_rows;
    m->contexts = (int64_t)ds->n_contexts;
    if ((st = bl_model_seen_record(m, ds, err))) {
        bl_model_free(m);
        return st;
    }
    *out = m;
    return BL_OK;
}

/* ---- fine-tuning ------------------------------------------------------------------------------- */

double bl_finetune_lr(const bl_finetune_opts *o, long epoch) {
    if (epoch < o->ramp_epochs)
        return o->lr_min + (o->lr_max - o->lr_min) * (double)epoch / (double)o->ramp_epochs;
    long t = (epoch - o->ramp_epochs) % (o->cosine_epochs > 0 ? o->cosine_epochs : 1);
    const double pi = 3.14159265358979323846;
    return o->lr_min + 0.5 * (o->lr_max - o->lr_min) * (1.0 + cos(pi * (double)t / (double)o->cosine_epochs));
}

/* One member's fine-tuning on idx[0..k) of fc->vb: from its current (pre-trained) state, with
 * z trainable (f too when fresh, or from fc->unfreeze_at). fixed < 0: train until the MAE rule or
 * patience stops and keep the best-MAE state; fixed ≥ 0: exactly `fixed` steps, keep the last state.
 * With nh > 0, curve[e] receives the mean relative error on the held-out runs held[0..nh) after
 * e steps, for e < fixed (predicted as bl_model_predict does; nothing is learnt from them). */
typedef struct ft_held { /* a held-out run, ready for the predictor's path */
    const double *ess, *opt; /* codes (g is frozen throughout fine-tuning, so they stay valid) */
    int           n_opt;
    double        feat[BL_SCALEOUT_NFEAT];  /* scaled scale-out features */
    double        runtime_s;
} ft_held;

typedef struct ft_ctx {
    bl_model               *c;
    const bl_dataset       *runs;
    const size_t           *rows;       /* data-set row of each view row (NULL: the same index) */
    const bl_vbuf          *vb;
    bl_bwork               *w;
    const bl_finetune_opts *o;
    double                 *best, *pred;
    double                  threshold;
    long                    unfreeze_at;
    long                    steps;       /* every step taken, cross-validation included */
} ft_ctx;

/* Mean absolute error in seconds of pred[0..k) against rows idx[0..k) of v (L: the pass's losses). */
static double ft_mae(const bl_model *c, const double *pred, const bl_bview *v, const size_t *idx, size_t k,
                     const bl_bloss *L) {
    if (c->target_scaling != BL_TARGET_LOG) return L->abs_err / (double)k * c->target_scale;
    double mae = 0.0; /* the rule reads seconds, as in the other modes */
    for (size_t i = 0; i < k; i++) mae += fabs(c->target_scale * (exp(pred[i]) - exp(v->target[idx[i]])));
    return mae / (double)k;
}

static bl_status ft_train(ft_ctx *fc, int mi, const size_t *idx, size_t k, long fixed, const ft_held *held,
                          size_t nh, double *curve, double *held_pred, long *epochs_out, double *mae_out,
                          bl_error *err) {
    bl_model *c = fc->c;
    const bl_finetune_opts *o = fc->o;
    bl_bnet *net = bl_model_member(c, mi);
    bl_params *P = &net->P;
    bl_params_reset_adam(P);
    bl_params_set_frozen(P, "", 1, NULL, NULL);
    bl_params_set_frozen(P, "z.", 0, NULL, NULL);
    if (!c->pretrained) bl_params_set_frozen(P, "f.", 0, NULL, NULL);
    bl_adam opt;
    double own_wd = mi == 0 ? c->weight_decay : c->member_meta[4 * mi + 2];
    double wd = o->weight_decay >= 0 ? o->weight_decay : own_wd;
    bl_status st = bl_adam_init(&opt, o->lr_min, wd, err);
    if (st) return st;
    bl_bpass ps = {.training = 0, .dropout = 0.0, .want_grad = 1, .recon = 0, .rng = NULL};
    bl_bpass pe = {.training = 0, .dropout = 0.0, .want_grad = 0, .recon = 0, .rng = NULL};
    double best_mae = INFINITY;
    long since = 0, epoch = 0;
    const long last = fixed >= 0 ? fixed : o->max_epochs;
    if (fixed < 0) memcpy(fc->best, P->param, P->n * sizeof *fc->best); /* kept when no MAE is a number */
    for (epoch = 0; epoch < last; epoch++) {
        if (epoch == fc->unfreeze_at) bl_params_set_frozen(P, "f.", 0, NULL, NULL);
        bl_params_zero_grad(P);
        bl_bloss L;
        ps.reuse = epoch > 0; /* the frozen layers' outputs from the epoch before (Adam leaves them) */
        if ((st = bl_bnet_pass(net, &fc->vb->v, idx, k, &ps, fc->w, fc->pred, &L, err))) return st;
        double mae = ft_mae(c, fc->pred, &fc->vb->v, idx, k, &L);
        if (nh) {
            double e = 0.0, ctx[BL_BNET_DIM_MAX], y;
            for (size_t i = 0; i < nh; i++) {
                bl_bnet_context_term(net, held[i].ess, held[i].opt, held[i].n_opt, ctx);
                bl_bnet_predict_scaled(net, ctx, held[i].feat, 1, &y);
                e += fabs(bl_model_seconds(c, y) - held[i].runtime_s) / held[i].runtime_s;
                if (held_pred) held_pred[(size_t)epoch * nh + i] = bl_model_seconds(c, y);
            }
            curve[epoch] = e / (double)nh;
        }
        if (fixed < 0) {
            if (mae < best_mae) {
                best_mae = mae;
                since = 0;
                memcpy(fc->best, P->param, P->n * sizeof *fc->best);
            } else if (++since >= o->patience) {
                break;
            }
            if (best_mae <= fc->threshold) break;
        }
        opt.lr = bl_finetune_lr(o, epoch);
        if ((st = bl_adam_step(&opt, P, err))) return st;
        fc->steps++;
    }
    if (fixed < 0) {
        memcpy(P->param, fc->best, P->n * sizeof *fc->best);
        *epochs_out = epoch + (epoch < o->max_epochs ? 1 : 0);
    } else { /* the MAE of the state kept: the last one */
        bl_bloss L;
        pe.reuse = fixed > 0;
        if ((st = bl_bnet_pass(net, &fc->vb->v, idx, k, &pe, fc->w, fc->pred, &L, err))) return st;
        best_mae = ft_mae(c, fc->pred, &fc->vb->v, idx, k, &L);
        *epochs_out = fixed;
    }
    bl_params_set_frozen(P, "", 0, NULL, NULL);
    bl_params_reset_adam(P);
    *mae_out = best_mae;
    return BL_OK;
}

/* Runs of fold h (those with index ≡ h mod folds) and where its block starts in a [fold][E][held]
 * buffer: Σ of the earlier folds' sizes. */
static size_t fold_size(size_t k, size_t folds, size_t h) { return (k - h + folds - 1) / folds; }
static size_t fold_start(size_t k, size_t folds, size_t h) {
    size_t s = 0;
    for (size_t j = 0; j < h; j++) s += fold_size(k, folds, j);
    return s;
}

/* Cross-validation over the k runs (leave-one-out, or o->cv_folds folds of every cv_folds-th run
 * when there are more runs): for each fold, fine-tune member mi on the other runs for E steps (the
 * full-k schedule), recording the held-out runs' mean relative error after every step; *epochs
 * receives the step count with the lowest mean over the folds (the first on ties). The member's
 * parameters are restored afterwards. */
static bl_status ft_choose_epochs(ft_ctx *fc, int mi, const size_t *idx, size_t k, long E, long *epochs,
                                  double *loo, bl_error *err) {
    bl_model *c = fc->c;
    const bl_bnet *net = bl_model_member(c, mi);
    bl_params *P = &bl_model_member(c, mi)->P;
    const size_t folds = k < (size_t)fc->o->cv_folds ? k : (size_t)fc->o->cv_folds;
    const size_t C = (size_t)net->d.code, np = c->n_props;
    size_t map[2 * BL_BNET_PROPS_MAX];
    double vbuf[BL_ENC_VEC_LEN_MAX];
    bl_status st = bl_model_map_props(c, fc->runs, map, err);
    if (st) return st;
    double *orig = malloc(P->n * sizeof *orig), *curve = malloc((size_t)E * sizeof *curve),
           *sum = calloc((size_t)E, sizeof *sum), *codes = malloc(k * (np ? np : 1) * C * sizeof *codes);
    size_t *fit = malloc(k * sizeof *fit);
    ft_held *all = malloc(k * sizeof *all), *held = malloc(k * sizeof *held);
    double *hp = loo ? malloc((size_t)E * k * sizeof *hp) : NULL; /* [fold][E][held] */
    if (!orig || !curve || !sum || !codes || !fit || !all || !held || (loo && !hp)) {
        st = bl_seterr(err, BL_ENOMEM, "out of memory");
        goto out;
    }
    /* every run's codes and features, once: fine-tuning never changes g */
    for (size_t i = 0; i < k; i++) {
        size_t r = fc->rows ? fc->rows[idx[i]] : idx[i];
        double *ess = codes + i * np * C, *opt = ess;
        int n_ess = 0, n_opt = 0;
        for (size_t j = 0; j < np; j++) n_ess += c->props[j].essential;
        opt = ess + (size_t)n_ess * C;
        for (size_t j = 0; j < np; j++) {
            const double *vec = bl_model_row_vec(c, mi, j, fc->runs, map[j], r, vbuf);
            if (c->props[j].essential) bl_bnet_encode(net, vec, ess + j * C);
            else bl_bnet_encode(net, vec, opt + (size_t)n_opt++ * C);
        }
        all[i].ess = ess;
        all[i].opt = opt;
        all[i].n_opt = n_opt;
        bl_scaleout_features_forward(&fc->runs->scale_out[r], 1, all[i].feat);
        bl_minmax_transform(&c->scaler, all[i].feat, 1, all[i].feat);
        all[i].runtime_s = fc->runs->runtime_s[r];
    }
    memcpy(orig, P->param, P->n * sizeof *orig);
    for (size_t h = 0; h < folds && !st; h++) {
        size_t nf = 0, nh = 0;
        for (size_t i = 0; i < k; i++) {
            if (i % folds == h) held[nh++] = all[i];
            else fit[nf++] = idx[i];
        }
        long ep;
        double mae;
        st = ft_train(fc, mi, fit, nf, E, held, nh, curve, hp ? hp + (size_t)E * fold_start(k, folds, h) : NULL, &ep, &mae, err);
        for (long e = 0; e < E && !st; e++) sum[e] += curve[e];
        memcpy(P->param, orig, P->n * sizeof *orig);
    }
    if (!st) {
        long best_e = 0;
        for (long e = 1; e < E; e++)
            if (sum[e] < sum[best_e]) best_e = e;
        *epochs = best_e;
        /* each run's held-out prediction after best_e steps: the fold that held it, trained that long */
        for (size_t h = 0; hp && h < folds; h++) {
            const size_t nh = fold_size(k, folds, h);
            const double *base = hp + (size_t)E * fold_start(k, folds, h) + (size_t)best_e * nh;
            for (size_t q = 0; q < nh; q++) loo[h + q * folds] = base[q];
        }
    }
out:
    free(hp);
    free(orig);
    free(curve);
    free(sum);
    free(codes);
    free(fit);
    free(all);
    free(held);
    return st;
}

/* ---- the guard's inputs (guard.h decides from them) ---- */

/* The pre-training rows' scale-outs: recorded (format 1.3), else the scaler's bounds of feature x. */
static void pretrain_range(const bl_model *m, double *lo, double *hi) {
    if (m->seen.known) {
        *lo = m->seen.scale_out_min;
        *hi = m->seen.scale_out_max;
    } else {
        *lo = m->scaler.lo[2];
        *hi = m->scaler.hi[2];
    }
}

/* The n runs as the guard sees them, into buf [3n]: scale-outs, runtimes and the prior network's
 * prediction of each in its own row's context (cluster totals grow with the scale-out). The network's,
 * not a blend: a guarded model fine-tuned again is judged by what it learned, not by its last runs' Ernest. */
static bl_status guard_runs(const bl_model *prior, const bl_dataset *runs, const size_t *rows, size_t n, double *buf,
                            bl_guard_runs *r, bl_error *err) {
    double *x = buf, *y = buf + n, *p = buf + 2 * n, ctx[BL_BNET_DIM_MAX];
    bl_model net = *prior; /* shares every block; only its guard differs (predictions read, never write, it) */
    bl_guard_reset(&net.guard);
    for (size_t i = 0; i < n; i++) {
        const size_t row = rows ? rows[i] : i;
        x[i] = runs->scale_out[row];
        y[i] = runs->runtime_s[row];
        bl_status st = bl_model_context_row(&net, runs, row, ctx, err);
        if (!st) st = bl_model_predict(&net, ctx, &x[i], 1, &p[i], err);
        if (st) return st;
    }
    *r = (bl_guard_runs){.n = n, .x = x, .y = y, .prior = p};
    pretrain_range(prior, &r->lo, &r->hi);
    return BL_OK;
}

bl_status bl_guard_decide(bl_model *c, const bl_model *prior, const bl_dataset *runs, const size_t *rows, size_t n,
                          const double *net_loo, size_t folds, bl_error *err) {
    bl_guard_reset(&c->guard);
    if (n == 0) return BL_OK;
    double *buf = malloc(3 * n * sizeof *buf);
    if (!buf) return bl_seterr(err, BL_ENOMEM, "out of memory");
    bl_guard_runs r;
    bl_status st = guard_runs(prior, runs, rows, n, buf, &r, err);
    if (!st) st = bl_guard_weigh(&c->guard, &r, net_loo, folds, err);
    free(buf);
    return st;
}

bl_status bl_guard_rescale(bl_model *c, const bl_model *prior, const bl_dataset *runs, const size_t *rows, size_t n,
                           bl_error *err) {
    if (n == 0 || !(c->target_scale > 0)) return BL_OK;
    double *buf = malloc(3 * n * sizeof *buf);
    if (!buf) return bl_seterr(err, BL_ENOMEM, "out of memory");
    bl_guard_runs r;
    bl_status st = guard_runs(prior, runs, rows, n, buf, &r, err);
    const double f = st ? 1.0 : bl_guard_scale(&r);
    if (isfinite(c->target_scale * f) && c->target_scale * f > 0) c->target_scale *= f;
    free(buf);
    return st;
}

/* The network's held-out predictions when fine-tuning ran no cross-validation (another stopping rule or
 * a fixed length): per fold, the same fine-tuning on the other runs (the network alone), predicting the
 * fold's runs. *loo [n] is malloc'd. */
static bl_status guard_refits(const bl_model *m, const bl_dataset *runs, const size_t *rows, size_t n,
                              const bl_finetune_opts *o, size_t folds, double **loo, bl_error *err) {
    bl_finetune_opts o2 = *o;
    o2.guard = 0;
    double *p = malloc(n * sizeof *p);
    size_t *fit = malloc(n * sizeof *fit);
    bl_status st = p && fit ? BL_OK : bl_seterr(err, BL_ENOMEM, "out of memory");
    for (size_t h = 0; h < folds && !st; h++) {
        size_t nf = 0;
        for (size_t i = 0; i < n; i++)
            if (i % folds != h) fit[nf++] = rows ? rows[i] : i;
        bl_model *sub = NULL;
        st = bl_finetune(m, runs, fit, nf, &o2, &sub, err);
        for (size_t i = h; i < n && !st; i += folds) {
            const size_t r = rows ? rows[i] : i;
            double ctx[BL_BNET_DIM_MAX];
            st = bl_model_context_row(sub, runs, r, ctx, err);
            if (!st) st = bl_model_predict(sub, ctx, &runs->scale_out[r], 1, &p[i], err);
        }
        bl_model_free(sub);
    }
    free(fit);
    if (st) {
        free(p);
        return st;
    }
    *loo = p;
    return BL_OK;
}

/* c's fit to the runs it was fine-tuned on, beside the prior's predictions (the disagreement that
 * widens c's intervals, and what `info` shows per run). */
static bl_status record_fit(bl_model *c, const bl_model *prior, const bl_dataset *runs, const size_t *rows, size_t n,
                            bl_error *err) {
    double *buf = malloc(4 * n * sizeof *buf);
    if (!buf) return bl_seterr(err, BL_ENOMEM, "out of memory");
    bl_guard_runs r;
    bl_status st = guard_runs(prior, runs, rows, n, buf, &r, err); /* x, y, prior */
    double *fit = buf + 3 * n, ctx[BL_BNET_DIM_MAX];
    for (size_t i = 0; i < n && !st; i++) {
        const size_t row = rows ? rows[i] : i;
        st = bl_model_context_row(c, runs, row, ctx, err);
        if (!st) st = bl_model_predict(c, ctx, &runs->scale_out[row], 1, &fit[i], err);
    }
    if (!st) st = bl_model_tuned_set_fit(c, buf, buf + n, fit, buf + 2 * n, n, err);
    free(buf);
    return st;
}

/* How far a fine-tuned model may miss a run it was fine-tuned on (either way) and still be kept: beyond,
 * it does not know the job (a network that overshot below zero, or a log output that ran off towards
 * exp(-700), misses by 1e300). */
#define FT_MISS_MAX 100.0

/* c's prediction of each of the n runs (as bl_model_predict gives it, guard applied) into fit [n]; the
 * index of the run missed worst (a prediction that is no positive number first), and whether it lies
 * beyond FT_MISS_MAX. */
static bl_status worst_miss(const bl_model *c, const bl_dataset *runs, const size_t *rows, size_t n, double *fit,
                            size_t *worst, int *beyond, bl_error *err) {
    double ctx[BL_BNET_DIM_MAX], far = -1;
    *worst = 0;
    *beyond = 0;
    for (size_t i = 0; i < n; i++) {
        const size_t r = rows ? rows[i] : i;
        bl_status st = bl_model_context_row(c, runs, r, ctx, err);
        if (!st) st = bl_model_predict(c, ctx, &runs->scale_out[r], 1, &fit[i], err);
        if (st) return st;
        const double y = runs->runtime_s[r], d = fit[i] > 0 && isfinite(fit[i]) ? fabs(log(fit[i] / y)) : INFINITY;
        if (d > far) far = d, *worst = i;
    }
    *beyond = !(far <= log(FT_MISS_MAX));
    return BL_OK;
}

/* A fine-tuned model c that misses one of its own runs by more than FT_MISS_MAX knows nothing it could
 * say: its network is dropped for the prior's (m's), and the model predicts with Ernest fitted to the
 * runs alone, else (runs at one scale-out) with the prior's curve scaled through the runs' geometric
 * mean, else (neither predicts the runs within FT_MISS_MAX) with that mean at every scale-out (Ernest's
 * constant term) and intervals never bounded; c->guard.why says which and why. *rescued: 0 when c was
 * kept, 1 when rescued, 2 for the runs' level alone. */
static bl_status keep_known(bl_model *c, const bl_model *m, const bl_dataset *runs, const size_t *rows, size_t n,
                            int *rescued, bl_error *err) {
    *rescued = 0;
    double *buf = malloc(4 * n * sizeof *buf), *fit = buf ? buf + 3 * n : NULL;
    if (!buf) return bl_seterr(err, BL_ENOMEM, "out of memory");
    size_t w;
    int beyond;
    bl_status st = worst_miss(c, runs, rows, n, fit, &w, &beyond, err);
    if (st || !beyond) goto out;
    *rescued = 1;
    const size_t rw = rows ? rows[w] : w;
    const double xw = runs->scale_out[rw], yw = runs->runtime_s[rw], fw = fit[w];
    char reason[400];
    snprintf(reason, sizeof reason, "fine-tuning left a network that predicts %.3g s for its own run at scale-out "
             "%.10g (%.3g s), %s, so it was dropped",
             fw, xw, yw, fw > 0 && isfinite(fw) ? "off by more than a factor 100" : "no runtime at all");
    for (int mi = 0; mi < c->n_members; mi++) {
        bl_params *P = &bl_model_member(c, mi)->P;
        memcpy(P->param, bl_model_member_c(m, mi)->P.param, P->n * sizeof *P->param);
    }
    c->target_scale = m->target_scale;
    bl_guard_runs r;
    if ((st = guard_runs(m, runs, rows, n, buf, &r, err))) goto out;
    if (bl_guard_ernest_alone(&c->guard, &r, FT_MISS_MAX, reason)) goto out;
    double sum = 0;
    for (size_t i = 0; i < n; i++) sum += log(r.y[i] / r.prior[i]);
    const double f = exp(sum / (double)n);
    bl_guard_reset(&c->guard);
    if (isfinite(f) && f > 0 && isfinite(c->target_scale * f) && c->target_scale * f > 0) {
        c->target_scale *= f;
        snprintf(c->guard.why, sizeof c->guard.why, "the pre-trained network, its output scaled by %.3g to pass "
                 "through the runs (Ernest fitted to them does not predict each within a factor 100, or the runs hold one "
                 "scale-out): %s",
                 f, reason);
        if ((st = worst_miss(c, runs, rows, n, fit, &w, &beyond, err)) || !beyond) goto out;
    }
    /* nothing knows the shape: the runs' level at every scale-out, which the interval does not vouch for */
    c->target_scale = m->target_scale;
    bl_guard_reset(&c->guard);
    c->guard.ernest_w = 1.0;
    c->guard.method = BL_GUARD_ERNEST;
    double lv = 0;
    for (size_t i = 0; i < n; i++) lv += log(r.y[i]);
    c->guard.theta[0] = exp(lv / (double)n); /* their geometric mean */
    snprintf(c->guard.why, sizeof c->guard.why, "the runs' own level (%.3g s) at every scale-out, the runtime "
             "elsewhere unknown (neither Ernest fitted to the runs nor the pre-trained network predicts them "
             "within a factor 100; runs at other scale-outs would show the scaling): %s", c->guard.theta[0], reason);
    *rescued = 2;
out:
    free(buf);
    return st;
}

bl_status bl_finetune(const bl_model *m, const bl_dataset *runs, const size_t *rows, size_t n,
                      const bl_finetune_opts *o, bl_model **out, bl_error *err) {
    if (!m || !runs || !out) return bl_seterr(err, BL_EINVAL, "bl_finetune: NULL argument");
    *out = NULL;
    bl_finetune_opts def;
    if (!o) {
        bl_finetune_opts_default(&def);
        o = &def;
    }
    if (!rows) n = runs->n_rows;
    if (n == 0) return bl_seterr(err, BL_EINVAL, "%s: no runs to fine-tune on", runs->name);
    if (o->max_epochs <= 0 || o->patience <= 0 || o->ramp_epochs < 0 || o->cosine_epochs <= 0 ||
        o->unfreeze_f < 0 || o->unfreeze_f > 2 ||
        !(o->lr_min > 0) || !(o->lr_max >= o->lr_min) || !(o->stop_mae >= 0) || !(o->stop_rel >= 0) ||
        (o->stop_cv && (o->cv_epochs < 1 || o->cv_folds < 2)) || o->fixed_epochs < -1 ||
        o->fixed_epochs > o->max_epochs)
        return bl_seterr(err, BL_EINVAL, "fine-tuning options out of range");
    bl_model *c = NULL;
    bl_vbuf vb, vb_odd; /* the training tables of even members, and of odd ones when they read numbers otherwise */
    memset(&vb_odd, 0, sizeof vb_odd);
    bl_bwork *w = NULL;
    double *best = NULL;
    double *member_loo = NULL, *net_loo = NULL; /* [n_members][n], [n]: held-out predictions (the guard) */
    int rescued = 0; /* keep_known dropped the fine-tuned network */
    bl_status st = bl_model_clone(m, &c, err);
    if (st) return st;
    bl_guard_reset(&c->guard); /* the network alone while it is tuned; decided at the end */
    if (o->guard && (st = bl_guard_rescale(c, m, runs, rows, n, err))) goto done;
    if ((st = bl_vbuf_build(c, runs, rows, n, &vb, err))) goto done;
    const int two = c->n_members > 1 && bl_model_member_numbers(c, 1) != bl_model_member_numbers(c, 0);
    if (two && (st = bl_vbuf_build_member(c, 1, runs, rows, n, &vb_odd, err))) goto done;
    if ((st = bl_bwork_new(&c->net, &vb.v, n, &w, err))) goto done;
    best = malloc(c->net.P.n * sizeof *best);
    if (!best) {
        st = bl_seterr(err, BL_ENOMEM, "out of memory");
        goto done;
    }
    double mean_rt = 0.0;
    for (size_t i = 0; i < n; i++) mean_rt += runs->runtime_s[rows ? rows[i] : i];
    mean_rt /= (double)n;
    const double threshold = o->stop_rel > 0 ? o->stop_rel * mean_rt : o->stop_mae;
    size_t *all = malloc(n * sizeof *all);
    double *pred = malloc(n * sizeof *pred);
    if (!all || !pred) {
        free(all);
        free(pred);
        st = bl_seterr(err, BL_ENOMEM, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < n; i++) all[i] = i;
    const int cv = o->fixed_epochs < 0 && o->stop_cv && n >= 3;
    const size_t folds = n < (size_t)o->cv_folds ? n : (size_t)o->cv_folds;
    if (o->guard && cv && !(member_loo = malloc((size_t)c->n_members * n * sizeof *member_loo))) {
        free(all);
        free(pred);
        st = bl_seterr(err, BL_ENOMEM, "out of memory");
        goto done;
    }
    long epochs_max = 0;
    double best_mae = INFINITY;
    ft_ctx fc = {c, runs, rows, &vb, w, o, best, pred, threshold, -1, 0};
    /* every member alike: the same runs, schedule and stopping rule */
    for (int mi = 0; mi < c->n_members && !st; mi++) {
        fc.vb = two && (mi & 1) ? &vb_odd : &vb;
        if (c->pretrained && o->unfreeze_f == 1 && n > 1 && n < 60) fc.unfreeze_at = (long)floor(7.5 * ldexp(1.0, (int)n));
        else if (c->pretrained && o->unfreeze_f == 2) fc.unfreeze_at = 0;
        else fc.unfreeze_at = -1;
        long fixed = o->fixed_epochs, ep = 0;
        if (cv) { /* the epoch count by cross-validation (each fold ≥ 2 runs) */
            long E = o->cv_epochs < o->max_epochs ? o->cv_epochs : o->max_epochs;
            if ((st = ft_choose_epochs(&fc, mi, all, n, E, &fixed, member_loo ? member_loo + (size_t)mi * n : NULL,
                                       err)))
                break;
        }
        if ((st = ft_train(&fc, mi, all, n, fixed, NULL, 0, NULL, NULL, &ep, &best_mae, err))) break;
        if (ep > epochs_max) epochs_max = ep;
    }
    free(all);
    free(pred);
    if (st) goto done;
    bl_model_round_params(c); /* float32: what its file will hold, before anything is measured on it */
    if (c->n_members > 1 || c->net.d.f32) { /* the MAE of what the model predicts (the members' median;
                                               float32: its rounded parameters, as its file will predict) */
        double ctx[BL_BNET_DIM_MAX], sum = 0.0;
        for (size_t i = 0; i < n && !st; i++) {
            size_t r = rows ? rows[i] : i;
            double y;
            st = bl_model_context_row(c, runs, r, ctx, err);
            if (!st) st = bl_model_predict(c, ctx, &runs->scale_out[r], 1, &y, err);
            sum += fabs(y - runs->runtime_s[r]);
        }
        if (st) goto done;
        best_mae = sum / (double)n;
    }
    c->finetune_epochs = epochs_max;
    c->finetune_steps = fc.steps;
    c->finetune_runs = (int64_t)n;
    c->finetune_mae = best_mae;
    if ((st = bl_model_tuned_record(c, runs, rows, n, err))) goto done;
    if (o->guard) {
        if (member_loo) { /* the ensemble's held-out prediction: its members' median, as it predicts */
            if (!(net_loo = malloc(n * sizeof *net_loo))) {
                st = bl_seterr(err, BL_ENOMEM, "out of memory");
                goto done;
            }
            for (size_t i = 0; i < n; i++) {
                double v[BL_MODEL_MEMBERS_MAX];
                const int K = c->n_members;
                for (int k = 0; k < K; k++) v[k] = member_loo[(size_t)k * n + i];
                for (int a = 1; a < K; a++)
                    for (int b = a; b > 0 && v[b - 1] > v[b]; b--) {
                        const double t = v[b];
                        v[b] = v[b - 1];
                        v[b - 1] = t;
                    }
                net_loo[i] = K % 2 ? v[K / 2] : 0.5 * (v[K / 2 - 1] + v[K / 2]);
            }
        } else if (n >= 3 && (st = guard_refits(m, runs, rows, n, o, folds, &net_loo, err))) {
            goto done;
        }
        if ((st = bl_guard_decide(c, m, runs, rows, n, net_loo, net_loo ? folds : 0, err))) goto done;
        if ((st = keep_known(c, m, runs, rows, n, &rescued, err))) goto done;
    }
    if ((st = record_fit(c, m, runs, rows, n, err))) goto done;
    c->tuned.protocol = bl_finetune_opts_fingerprint(o);
    if (rescued && c->tuned.n_fit == n) { /* the MAE of what the model now predicts */
        double sum = 0;
        for (size_t i = 0; i < n; i++) sum += fabs(c->tuned.fit_pred[i] - c->tuned.fit_y[i]);
        c->finetune_mae = sum / (double)n;
        if (rescued == 2) c->tuned.disagreement = INFINITY; /* a level, no curve: no interval is bounded */
    }
    /* (a rescued model's held-out error would be the dropped network's: its D stays the fit's) */
    if (!rescued && net_loo && c->tuned.n_fit == n && isfinite(c->tuned.disagreement)) {
        /* with held-out predictions of the runs, D is how the guarded model misses runs it did not see */
        const double d = bl_guard_loo_log_error(&c->guard, c->tuned.fit_x, c->tuned.fit_y, n, net_loo, folds);
        if (isfinite(d)) {
            c->tuned.disagreement = d;
            c->tuned.held_out = 1;
        }
    }
    /* the fine-tuning's own time; `created` stays the pre-training's (info showed the last save's) */
    if (c->tuned.known) iso_now(c->tuned.created, sizeof c->tuned.created);
    *out = c;
    c = NULL;
done:
    free(member_loo);
    free(net_loo);
    free(best);
    bl_bwork_free(w);
    bl_vbuf_free(&vb);
    bl_vbuf_free(&vb_odd);
    bl_model_free(c);
    return st;
}

/* ---- prediction -------------------------------------------------------------------------------- */

double bl_model_seconds(const bl_model *m, double y) {
    return m->target_scaling == BL_TARGET_LOG ? m->target_scale * exp(y) : m->target_scale * y;
}

void bl_model_to_seconds(const bl_model *m, const double *x, double *y, size_t n) {
    for (size_t i = 0; i < n; i++) y[i] = bl_model_seconds(m, y[i]);
    if (m->guard.ernest_w > 0)
        for (size_t i = 0; i < n; i++) y[i] = bl_guard_apply(&m->guard, x[i], y[i]);
}

/* Member 0's vector of number v (< 2^(vec_len − 1)) of property i: what bl_encode_value_range gives
 * for its text. */
static void number_vec0(const bl_model *m, size_t i, uint64_t v, double *out) {
    if (m->num_range && m->enc.numbers == BL_ENC_NUMBERS_RANGE) bl_number_range_forward(v, m->num_range + 2 * i, &m->enc, out);
    else (void)bl_binarize_forward(v, &m->enc, out, NULL); /* v is in range */
}

/* Property i's code for every member from member 0's vector vec0 (x: the number, for numbers). */
static void codes_of(bl_model_ctx *c, size_t i, const double *vec0, uint64_t x) {
    const bl_model *m = c->m;
    const size_t code = (size_t)m->net.d.code;
    double vec[BL_ENC_VEC_LEN_MAX];
    for (int mi = 0; mi < m->n_members; mi++) {
        const double *v = vec0;
        if (mi > 0 && encodes_numbers(m) && m->props[i].kind == BL_PROP_NUMBER) {
            member_number_vec(m, mi, i, x, vec); /* this member's encoding of the number */
            v = vec;
        }
        bl_bnet_encode(bl_model_member_c(m, mi), v, c->codes + ((size_t)mi * m->n_props + i) * code);
    }
}

/* Property i from its text: checked and encoded, its codes set. */
static bl_status ctx_text(bl_model_ctx *c, const bl_encoder *e, size_t i, const char *value, bl_error *err) {
    const bl_model *m = c->m;
    const bl_model_prop *p = &m->props[i];
    double vec[BL_ENC_VEC_LEN_MAX];
    bl_status st = bl_encoder_value(e, p->name, p->kind, value, m->num_range ? m->num_range + 2 * i : NULL, vec, err);
    if (st) return st;
    uint64_t x = 0;
    if (encodes_numbers(m) && p->kind == BL_PROP_NUMBER && m->n_members > 1)
        (void)bl_parse_natural(value, &m->enc, &x, NULL); /* checked above */
    codes_of(c, i, vec, x);
    return BL_OK;
}

void bl_model_ctx_free(bl_model_ctx *c) {
    if (!c) return;
    free(c->codes);
    free(c->opt);
    free(c->present);
    memset(c, 0, sizeof *c);
}

bl_status bl_model_ctx_init(bl_model_ctx *c, const bl_model *m, const bl_encoder *e, const char *const *values,
                            const unsigned char *later, bl_error *err) {
    memset(c, 0, sizeof *c);
    if (!m || !e || !values) return bl_seterr(err, BL_EINVAL, "bl_model_ctx_init: NULL argument");
    const bl_bnet_dims *d = &m->net.d;
    if (d->code > 16) return bl_seterr(err, BL_EINVAL, "code size %d unsupported", d->code);
    const size_t np = m->n_props ? m->n_props : 1, code = (size_t)d->code;
    c->m = m;
    c->codes = malloc((size_t)m->n_members * np * code * sizeof *c->codes);
    c->opt = malloc(np * code * sizeof *c->opt);
    c->present = calloc(np, 1);
    if (!c->codes || !c->opt || !c->present) {
        bl_model_ctx_free(c);
        return bl_seterr(err, BL_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < m->n_props; i++) {
        const bl_model_prop *p = &m->props[i];
        if (!values[i]) {
            if (p->essential) {
                bl_model_ctx_free(c);
                return bl_seterr(err, BL_EINVAL, "essential property '%s' has no value", p->name);
            }
            continue;
        }
        c->present[i] = 1;
        if (later && later[i]) continue;
        bl_status st = ctx_text(c, e, i, values[i], err);
        if (st) {
            bl_model_ctx_free(c);
            return st;
        }
    }
    return BL_OK;
}

bl_status bl_model_ctx_number(bl_model_ctx *c, const bl_encoder *e, size_t i, double v, bl_error *err) {
    const bl_model *m = c->m;
    if (v >= 0 && v < ldexp(1.0, (int)m->enc.vec_len - 1) && v == floor(v)) {
        double vec[BL_ENC_VEC_LEN_MAX];
        const uint64_t x = (uint64_t)v;
        number_vec0(m, i, x, vec);
        codes_of(c, i, vec, x);
        return BL_OK;
    }
    /* not a number the encoder takes: its text, as a data set records it, names the fault */
    char text[32];
    snprintf(text, sizeof text, "%.0f", v);
    return ctx_text(c, e, i, text, err);
}

void bl_model_ctx_term(bl_model_ctx *c, double *ctx) {
    const bl_model *m = c->m;
    const size_t code = (size_t)m->net.d.code;
    for (int mi = 0; mi < m->n_members; mi++) {
        const double *codes = c->codes + (size_t)mi * m->n_props * code;
        int n_opt = 0;
        for (size_t i = 0; i < m->n_props; i++)
            if (c->present[i] && !m->props[i].essential)
                memcpy(c->opt + (size_t)n_opt++ * code, codes + i * code, code * sizeof *codes);
        /* the essential properties come first (network order): their codes are codes[0 .. n_ess) */
        bl_bnet_context_term(bl_model_member_c(m, mi), codes, c->opt, n_opt, ctx + (size_t)mi * (size_t)m->net.d.z_hidden);
    }
}

bl_status bl_model_context(const bl_model *m, const char *const *values, double *ctx, bl_error *err) {
    if (!m || !values || !ctx) return bl_seterr(err, BL_EINVAL, "bl_model_context: NULL argument");
    bl_encoder e;
    bl_model_ctx c;
    bl_status st = bl_encoder_init(&e, &m->enc, err);
    if (st == BL_OK) st = bl_model_ctx_init(&c, m, &e, values, NULL, err);
    if (st != BL_OK) return st;
    bl_model_ctx_term(&c, ctx);
    bl_model_ctx_free(&c);
    return BL_OK;
}

bl_status bl_model_context_row(const bl_model *m, const bl_dataset *ds, size_t r, double *ctx,
                               bl_error *err) {
    if (!m || !ds || !ctx) return bl_seterr(err, BL_EINVAL, "bl_model_context_row: NULL argument");
    if (r >= ds->n_rows) return bl_seterr(err, BL_EINVAL, "%s: row %zu out of range", ds->name, r);
    size_t map[2 * BL_BNET_PROPS_MAX];
    bl_status st = bl_model_map_props(m, ds, map, err);
    if (st) return st;
    const bl_bnet_dims *d = &m->net.d;
    double ess[BL_BNET_PROPS_MAX * 16], opt[BL_BNET_PROPS_MAX * 16], vbuf[BL_ENC_VEC_LEN_MAX];
    if (d->code > 16) return bl_seterr(err, BL_EINVAL, "code size %d unsupported", d->code);
    for (int mi = 0; mi < m->n_members; mi++) {
        const bl_bnet *net = bl_model_member_c(m, mi);
        int n_opt = 0;
        for (size_t i = 0; i < m->n_props; i++) {
            const double *vec = bl_model_row_vec(m, mi, i, ds, map[i], r, vbuf);
            if (m->props[i].essential) bl_bnet_encode(net, vec, ess + i * (size_t)d->code);
            else bl_bnet_encode(net, vec, opt + (size_t)n_opt++ * (size_t)d->code);
        }
        bl_bnet_context_term(net, ess, opt, n_opt, ctx + (size_t)mi * (size_t)d->z_hidden);
    }
    return BL_OK;
}

_Static_assert(BL_MODEL_MEMBERS_MAX <= BL_BNET_MEMBERS_MAX, "bl_bnet_predict_median takes every member");

void bl_model_predict_at(const bl_model *m, const double *ctx, const double *x, size_t n, double *out) {
    double feat[64 * BL_SCALEOUT_NFEAT];
    const bl_bnet *nets[BL_MODEL_MEMBERS_MAX];
    for (int mi = 0; mi < m->n_members; mi++) nets[mi] = bl_model_member_c(m, mi);
    for (size_t i0 = 0; i0 < n; i0 += 64) {
        size_t k = n - i0 < 64 ? n - i0 : 64;
        bl_scaleout_features_forward(x + i0, k, feat);
        bl_minmax_transform(&m->scaler, feat, k, feat);
        bl_bnet_predict_median(nets, m->n_members, ctx, feat, k, out + i0); /* one network, or the members' median */
        bl_model_to_seconds(m, x + i0, out + i0, k);
    }
}

bl_status bl_model_predict(const bl_model *m, const double *ctx, const double *x, size_t n, double *out,
                           bl_error *err) {
    if (!m || !ctx || (n && (!x || !out))) return bl_seterr(err, BL_EINVAL, "bl_model_predict: NULL argument");
    for (size_t i = 0; i < n; i++)
        if (!(x[i] > 0) || !isfinite(x[i]))
            return bl_seterr(err, BL_EINVAL, "scale-out %g is not a positive number", x[i]);
    bl_model_predict_at(m, ctx, x, n, out);
    return BL_OK;
}
