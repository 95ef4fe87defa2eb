/* modelio.c — a bl_model as a model-file record (src/modelfile) and back.
 * The layout of each group and attribute is documented in models/README.md ("What the Bellamy
 * model stores"); reading checks every shape and every required attribute.
 * Not here: HDF5 itself (src/modelfile/h5.c, write.c and read.c are its only users).
 */
#include "model/model_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>

#include "bl_config.h"
#include "common/error.h"
#include "modelfile/modelfile.h"
#include "model/seen.h"
#include "common/utf8.h"

static const char *DIM_NAMES[9] = {"f_in", "f_hidden", "f_out", "vec_len", "ae_hidden", "code",
                                   "z_hidden", "n_essential", "n_optional"};

/* A weight block must hold finite numbers: NaN or ±inf would only show later, as predictions that
 * are not numbers, far from the file that caused them. */
static bl_status finite_block(const char *model, const char *block, const double *x, size_t n, bl_error *err) {
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i]))
            return bl_seterr(err, BL_EFORMAT, "model '%s': block '%s' holds %g at element %zu (finite numbers "
                             "expected)", model, block, x[i], i);
    return BL_OK;
}

/* s as it may appear in a one-line message: at most 60 bytes, control characters and bytes that are
 * not UTF-8 as '?' (a string from a file may hold anything). */
static const char *shown(const char *s, char *buf, size_t cap) {
    size_t n = strlen(s);
    if (n > cap - 4) n = cap - 4;
    if (n > 60) n = 60;
    memcpy(buf, s, n);
    buf[n] = '\0';
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)buf[i] < 0x20 || buf[i] == 0x7f) buf[i] = '?';
    bl_utf8_sanitize(buf, n);
    if (strlen(s) > n) strcat(buf, "...");
    return buf;
}

/* The member index j of a block named "member<j>.<block>", or 0 for any other name. */
static long member_of_block(const char *name) {
    if (strncmp(name, "member", 6) != 0 || name[6] < '1' || name[6] > '9') return 0;
    char *end;
    long j = strtol(name + 6, &end, 10);
    return *end == '.' ? j : 0;
}

static bl_status to_record(const bl_model *m, bl_modelrec **out, bl_error *err) {
    bl_modelrec *rec = NULL;
    bl_status st = bl_modelrec_new(m->name ? m->name : "model", &rec, err);
    if (st) return st;
    const bl_params *P = &m->net.P;
    for (int i = 0; i < P->n_views && !st; i++) {
        const bl_param_view *v = &P->views[i];
        int bias = v->rows == 1 && strstr(v->name, ".bias") != NULL;
        st = bl_modelrec_add_block(rec, v->name, bias ? 1 : 2, bias ? (size_t)v->cols : (size_t)v->rows,
                                   bias ? 1 : (size_t)v->cols, P->param + v->offset, err);
    }
    /* the other members of an ensemble: the same blocks, named member<j>.<block> */
    for (int j = 1; j < m->n_members && !st; j++) {
        const bl_params *Q = &m->more[j - 1].P;
        for (int i = 0; i < Q->n_views && !st; i++) {
            const bl_param_view *v = &Q->views[i];
            int bias = v->rows == 1 && strstr(v->name, ".bias") != NULL;
            char bn[96];
            snprintf(bn, sizeof bn, "member%d.%s", j, v->name);
            st = bl_modelrec_add_block(rec, bn, bias ? 1 : 2, bias ? (size_t)v->cols : (size_t)v->rows,
                                       bias ? 1 : (size_t)v->cols, Q->param + v->offset, err);
        }
    }
    if (!st && m->n_members > 1) {
        const int K = m->n_members;
        double col[BL_MODEL_MEMBERS_MAX];
        const char *names[4] = {"dropout", "learning_rate", "weight_decay", "best_val_loss"};
        st = bl_modelrec_add_int(rec, "members", "count", K, err);
        if (!st) st = bl_modelrec_add_string(rec, "members", "combine", "median", err);
        for (int c = 0; c < 4 && !st; c++) {
            for (int j = 0; j < K; j++) col[j] = m->member_meta[4 * j + c];
            st = bl_modelrec_add_doubles(rec, "members", names[c], col, (size_t)K, err);
        }
    }
    const bl_bnet_dims *d = &m->net.d;
    const int dims[9] = {d->f_in, d->f_hidden, d->f_out, d->vec_len, d->ae_hidden, d->code, d->z_hidden,
                         d->n_ess, d->n_opt};
    for (int i = 0; i < 9 && !st; i++) st = bl_modelrec_add_int(rec, "network", DIM_NAMES[i], dims[i], err);
    if (!st) st = bl_modelrec_add_doubles(rec, "scaler", "min", m->scaler.lo, BL_SCALEOUT_NFEAT, err);
    if (!st) st = bl_modelrec_add_doubles(rec, "scaler", "max", m->scaler.hi, BL_SCALEOUT_NFEAT, err);
    if (!st) st = bl_modelrec_add_string(rec, "scaler", "features", "1/x,ln x,x", err);
    if (!st) st = bl_modelrec_add_string(rec, "target", "scaling",
                                         m->target_scaling == BL_TARGET_MEAN  ? "mean"
                                         : m->target_scaling == BL_TARGET_LOG ? "log"
                                                                              : "seconds", err);
    if (!st) st = bl_modelrec_add_double(rec, "target", "scale", m->target_scale, err);
    if (!st) st = bl_modelrec_add_int(rec, "encoder", "vec_len", m->enc.vec_len, err);
    if (!st) st = bl_modelrec_add_int(rec, "encoder", "ngram_min", m->enc.ngram_min, err);
    if (!st) st = bl_modelrec_add_int(rec, "encoder", "ngram_max", m->enc.ngram_max, err);
    if (!st) st = bl_modelrec_add_int(rec, "encoder", "hash_seed", m->enc.hash_seed, err);
    if (!st) st = bl_modelrec_add_string(rec, "encoder", "vocabulary", m->enc.vocabulary, err);
    if (!st) st = bl_modelrec_add_string(rec, "encoder", "hash", "xxh32", err);
    if (!st) st = bl_modelrec_add_string(rec, "encoder", "cluster_totals",
                                         m->enc.totals_per_machine ? "per_machine" : "total", err);
    if (!st) st = bl_modelrec_add_string(rec, "encoder", "numbers", bl_enc_numbers_name(m->enc.numbers), err);
    if (!st && m->num_range) { /* per property in schema/names order; text properties' are unused */
        const size_t n = m->n_props;
        double *lo = malloc((n ? n : 1) * sizeof *lo), *hi = malloc((n ? n : 1) * sizeof *hi);
        if (!lo || !hi) st = bl_seterr(err, BL_ENOMEM, "out of memory");
        for (size_t i = 0; !st && i < n; i++) {
            lo[i] = m->num_range[2 * i];
            hi[i] = m->num_range[2 * i + 1];
        }
        if (!st) st = bl_modelrec_add_doubles(rec, "encoder", "number_lo", lo, n, err);
        if (!st) st = bl_modelrec_add_doubles(rec, "encoder", "number_hi", hi, n, err);
        free(lo);
        free(hi);
    }
    /* a reader that ignored encoder/numbers would binarize a log or range model's requests: make its
     * file one that such a reader refuses (modelfile.h) */
    /* and one that ignored guard/ would predict with the network alone where the model blends in Ernest */
    int64_t major = m->enc.numbers != BL_ENC_NUMBERS_BINARY ? 2 : 1;
    if (m->guard.ernest_w > 0) major = 3;
    if (!st && major > 1) st = bl_modelrec_add_int(rec, "", BL_MF_MAJOR_ATTR, major, err);
    /* float32 weights (a float64 model's file stays as files were before the attribute: none) */
    if (!st && bl_model_precision(m) == BL_PRECISION_F32)
        st = bl_modelrec_add_string(rec, "", BL_MF_PRECISION_ATTR, "f32", err);
    if (!st) {
        size_t n = m->n_props;
        const char **names = calloc(n ? n : 1, sizeof *names);
        const char **kinds = calloc(n ? n : 1, sizeof *kinds);
        int64_t *ess = calloc(n ? n : 1, sizeof *ess);
        if (!names || !kinds || !ess) st = bl_seterr(err, BL_ENOMEM, "out of memory");
        for (size_t i = 0; !st && i < n; i++) {
            names[i] = m->props[i].name;
            kinds[i] = m->props[i].kind == BL_PROP_NUMBER ? "number" : "text";
            ess[i] = m->props[i].essential;
        }
        if (!st) st = bl_modelrec_add_strings(rec, "schema", "names", names, n, err);
        if (!st) st = bl_modelrec_add_strings(rec, "schema", "kinds", kinds, n, err);
        if (!st) st = bl_modelrec_add_ints(rec, "schema", "essential", ess, n, err);
        free(names);
        free(kinds);
        free(ess);
    }
    if (!st) st = bl_modelrec_add_string(rec, "schema", "text", m->schema_text ? m->schema_text : "", err);
    if (!st) st = bl_modelrec_add_double(rec, "hyperparameters", "dropout", m->dropout, err);
    if (!st) st = bl_modelrec_add_double(rec, "hyperparameters", "learning_rate", m->lr, err);
    if (!st) st = bl_modelrec_add_double(rec, "hyperparameters", "weight_decay", m->weight_decay, err);
    char hash[32];
    snprintf(hash, sizeof hash, "%016" PRIx64, m->data_hash);
    if (!st) st = bl_modelrec_add_string(rec, "training", "data_hash", hash, err);
    const struct { const char *n; int64_t v; } ints[] = {
        {"rows", m->rows}, {"contexts", m->contexts}, {"epochs", m->epochs},
        {"finetune_epochs", m->finetune_epochs}, {"finetune_runs", m->finetune_runs},
        {"pretrained", m->pretrained}, {"val_rows", m->val_rows}};
    for (size_t i = 0; i < sizeof ints / sizeof ints[0] && !st; i++)
        st = bl_modelrec_add_int(rec, "training", ints[i].n, ints[i].v, err);
    if (!st) st = bl_modelrec_add_double(rec, "training", "best_val_loss", m->best_val_loss, err);
    if (!st) st = bl_modelrec_add_double(rec, "training", "best_train_loss", m->best_train_loss, err);
    if (!st) st = bl_modelrec_add_double(rec, "training", "finetune_mae", m->finetune_mae, err);
    if (!st) st = bl_modelrec_add_string(rec, "training", "created", m->created, err);
    if (!st) st = bl_modelrec_add_string(rec, "training", "library_version", BL_VERSION, err);
    if (!st) st = bl_model_records_save(m, rec, err);
    if (!st) st = bl_guard_save(&m->guard, rec, err);
    if (st) {
        bl_modelrec_free(rec);
        return st;
    }
    *out = rec;
    return BL_OK;
}

bl_status bl_model_save(const bl_model *m, const char *path, bl_error *err) {
    if (!m || !path) return bl_seterr(err, BL_EINVAL, "bl_model_save: NULL argument");
    bl_modelrec *rec;
    bl_status st = to_record(m, &rec, err);
    if (st) return st;
    st = bl_mf_save(path, rec, err);
    bl_modelrec_free(rec);
    return st;
}

/* A search's winner as a save writes it: dropout in [0, 1), a positive learning rate, a decay >= 0. */
static bl_status hyper_check(const char *model, const char *where, double dropout, double lr, double wd,
                             bl_error *err) {
    if (!(dropout >= 0 && dropout < 1) || !(lr > 0 && lr < 1e6) || !(wd >= 0 && wd < 1e6))
        return bl_seterr(err, BL_EFORMAT, "model '%s': %sdropout, learning_rate, weight_decay = %g, %g, %g (expected "
                         "0 <= dropout < 1, learning_rate > 0, weight_decay >= 0, all finite)", model, where, dropout, lr,
                         wd);
    return BL_OK;
}

static bl_status get_int_range(const bl_modelrec *rec, const char *g, const char *n, int64_t lo, int64_t hi,
                               int64_t *v, bl_error *err) {
    bl_status st = bl_modelrec_get_int(rec, g, n, v, err);
    if (st) return st;
    if (*v < lo || *v > hi)
        return bl_seterr(err, BL_EFORMAT, "model '%s': %s/%s = %" PRId64 " outside %" PRId64 "..%" PRId64,
                         rec->name, g, n, *v, lo, hi);
    return BL_OK;
}

bl_status bl_model_from_record(const bl_modelrec *rec, bl_model **out, bl_error *err) {
    *out = NULL;
    bl_status st;
    int64_t dims[9];
    for (int i = 0; i < 9; i++)
        if ((st = get_int_range(rec, "network", DIM_NAMES[i], i < 7 ? 1 : 0,
                                i < 7 ? BL_BNET_DIM_MAX : BL_BNET_PROPS_MAX, &dims[i], err)))
            return st;
    /* the scale-out net reads the scaler's features: any other input width reads past them */
    if (dims[0] != BL_SCALEOUT_NFEAT)
        return bl_seterr(err, BL_EFORMAT, "model '%s': network/f_in = %" PRId64 " (the scale-out features are %d)",
                         rec->name, dims[0], BL_SCALEOUT_NFEAT);
    bl_encode_settings enc;
    bl_encode_settings_default(&enc);
    int64_t v;
    if ((st = get_int_range(rec, "encoder", "vec_len", 2, BL_ENC_VEC_LEN_MAX, &v, err))) return st;
    enc.vec_len = (uint32_t)v;
    if ((st = get_int_range(rec, "encoder", "ngram_min", 1, BL_ENC_NGRAM_MAX, &v, err))) return st;
    enc.ngram_min = (uint32_t)v;
    if ((st = get_int_range(rec, "encoder", "ngram_max", 1, BL_ENC_NGRAM_MAX, &v, err))) return st;
    enc.ngram_max = (uint32_t)v;
    if ((st = get_int_range(rec, "encoder", "hash_seed", 0, UINT32_MAX, &v, err))) return st;
    enc.hash_seed = (uint32_t)v;
    const char *hash;
    char q[64];
    if (bl_modelrec_find_attr(rec, "encoder", "hash")) { /* absent in none of our files, but optional */
        if ((st = bl_modelrec_get_string(rec, "encoder", "hash", &hash, err))) return st;
        if (strcmp(hash, "xxh32") != 0)
            return bl_seterr(err, BL_EFORMAT, "model '%s': encoder/hash '%s' (this library hashes with xxh32 only)",
                             rec->name, shown(hash, q, sizeof q));
    }
    const char *vocab;
    if ((st = bl_modelrec_get_string(rec, "encoder", "vocabulary", &vocab, err))) return st;
    if (strlen(vocab) >= sizeof enc.vocabulary)
        return bl_seterr(err, BL_EFORMAT, "model '%s': encoder/vocabulary is too long", rec->name);
    strcpy(enc.vocabulary, vocab);
    const char *totals;
    if (bl_modelrec_get_string(rec, "encoder", "cluster_totals", &totals, NULL) == BL_OK) {
        if (strcmp(totals, "per_machine") == 0) enc.totals_per_machine = 1;
        else if (strcmp(totals, "total") != 0)
            return bl_seterr(err, BL_EFORMAT, "model '%s': encoder/cluster_totals '%s' (expected total or per_machine)",
                             rec->name, shown(totals, q, sizeof q));
    } /* absent: files written before the option, which encoded totals */
    const char *numbers;
    if (bl_modelrec_get_string(rec, "encoder", "numbers", &numbers, NULL) == BL_OK) {
        const int nb = bl_enc_numbers_parse(numbers);
        if (nb < 0)
            return bl_seterr(err, BL_EFORMAT, "model '%s': encoder/numbers '%s' (expected binary, log, range or both)",
                             rec->name, shown(numbers, q, sizeof q));
        enc.numbers = (uint32_t)nb;
    } /* absent: files written before the option, which binarized */
    if ((st = bl_encode_settings_check(&enc, err))) return bl_prefixerr(err, "model '%s': encoder", rec->name);
    if (dims[3] != (int64_t)enc.vec_len)
        return bl_seterr(err, BL_EFORMAT, "model '%s': network/vec_len %" PRId64 " differs from encoder/vec_len %u",
                         rec->name, dims[3], enc.vec_len);

    const char *const *names, *const *kinds;
    const int64_t *ess;
    size_t nn, nk, ne;
    if ((st = bl_modelrec_get_strings(rec, "schema", "names", &names, &nn, err))) return st;
    if ((st = bl_modelrec_get_strings(rec, "schema", "kinds", &kinds, &nk, err))) return st;
    if ((st = bl_modelrec_get_ints(rec, "schema", "essential", &ess, &ne, err))) return st;
    if (nn != nk || nn != ne || nn != (size_t)(dims[7] + dims[8]))
        return bl_seterr(err, BL_EFORMAT, "model '%s': schema/names, kinds and essential disagree with the "
                         "network's %" PRId64 " + %" PRId64 " properties", rec->name, dims[7], dims[8]);
    bl_model_prop *props = calloc(nn ? nn : 1, sizeof *props);
    if (!props) return bl_seterr(err, BL_ENOMEM, "out of memory");
    size_t n_ess = 0;
    for (size_t i = 0; i < nn; i++) {
        int dup = 0;
        for (size_t j = 0; j < i && !dup; j++) dup = strcmp(names[i], names[j]) == 0;
        if (!bl_schema_known_property(names[i]) || dup) {
            free(props);
            return bl_seterr(err, BL_EFORMAT, "model '%s': schema/names[%zu] = '%s' (%s)", rec->name, i,
                             shown(names[i], q, sizeof q), dup ? "named twice" : "not a property name: expected one of "
                             "the schema's");
        }
        props[i].name = (char *)names[i];
        props[i].essential = ess[i] != 0;
        n_ess += props[i].essential;
        if (strcmp(kinds[i], "number") == 0) props[i].kind = BL_PROP_NUMBER;
        else if (strcmp(kinds[i], "text") == 0) props[i].kind = BL_PROP_TEXT;
        else {
            free(props);
            return bl_seterr(err, BL_EFORMAT, "model '%s': schema/kinds[%zu] = '%s' (expected number or text)",
                             rec->name, i, shown(kinds[i], q, sizeof q));
        }
        if (i > 0 && props[i].essential && !props[i - 1].essential) {
            free(props);
            return bl_seterr(err, BL_EFORMAT, "model '%s': schema lists essential properties after optional ones",
                             rec->name);
        }
    }
    if (n_ess != (size_t)dims[7]) {
        free(props);
        return bl_seterr(err, BL_EFORMAT, "model '%s': schema/essential marks %zu properties, network/n_essential is %" PRId64,
                         rec->name, n_ess, dims[7]);
    }
    const char *text;
    if ((st = bl_modelrec_get_string(rec, "schema", "text", &text, err))) {
        free(props);
        return st;
    }
    int f32 = 0; /* the weights' precision: absent (files before it, float64 models) is f64 */
    if ((st = bl_modelrec_precision(rec, NULL, &f32, err))) {
        free(props);
        return st;
    }
    bl_model *m;
    st = bl_model_alloc(props, nn, &enc, *text ? text : NULL, NULL, &m, err);
    free(props);
    if (st) return st;
    bl_bnet_dims *d = &m->net.d;
    const int want[7] = {d->f_in, d->f_hidden, d->f_out, d->vec_len, d->ae_hidden, d->code, d->z_hidden};
    int rebuild = 0;
    for (int i = 0; i < 7; i++) rebuild |= want[i] != dims[i];
    if (rebuild) {
        bl_bnet_dims nd = {(int)dims[0], (int)dims[1], (int)dims[2], (int)dims[3], (int)dims[4], (int)dims[5],
                           (int)dims[6], (int)dims[7], (int)dims[8], f32};
        bl_bnet_free(&m->net);
        if ((st = bl_bnet_init(&m->net, &nd, NULL, err))) goto fail;
    }
    bl_model_set_precision(m, f32 ? BL_PRECISION_F32 : BL_PRECISION_F64); /* before the members: they inherit it */
    char *nm = malloc(strlen(rec->name) + 1);
    if (!nm) {
        st = bl_seterr(err, BL_ENOMEM, "out of memory");
        goto fail;
    }
    strcpy(nm, rec->name);
    free(m->name);
    m->name = nm;
    bl_params *P = &m->net.P;
    for (int i = 0; i < P->n_views; i++) {
        const bl_param_view *pv = &P->views[i];
        int bias = pv->rows == 1 && strstr(pv->name, ".bias") != NULL;
        const double *data;
        if ((st = bl_modelrec_get_block(rec, pv->name, bias ? 1 : 2, bias ? (size_t)pv->cols : (size_t)pv->rows,
                                        bias ? 1 : (size_t)pv->cols, &data, err)))
            goto fail;
        memcpy(P->param + pv->offset, data, (size_t)pv->rows * (size_t)pv->cols * sizeof(double));
        if ((st = finite_block(rec->name, pv->name, data, (size_t)pv->rows * (size_t)pv->cols, err))) goto fail;
    }
    if (m->num_range) { /* numbers over fitted bounds: each number property's, lo < hi, finite */
        const double *lo, *hi;
        size_t nlo, nhi;
        if ((st = bl_modelrec_get_doubles(rec, "encoder", "number_lo", &lo, &nlo, err)) ||
            (st = bl_modelrec_get_doubles(rec, "encoder", "number_hi", &hi, &nhi, err)))
            goto fail;
        if (nlo != nn || nhi != nn) {
            st = bl_seterr(err, BL_EFORMAT, "model '%s': encoder/number_lo and number_hi have %zu and %zu values, "
                           "schema/names %zu", rec->name, nlo, nhi, nn);
            goto fail;
        }
        for (size_t i = 0; i < nn; i++) {
            if (m->props[i].kind == BL_PROP_NUMBER && !(isfinite(lo[i]) && isfinite(hi[i]) && lo[i] < hi[i])) {
                st = bl_seterr(err, BL_EFORMAT, "model '%s': encoder/number_lo, number_hi [%zu] = %g, %g for "
                               "property '%s' (finite bounds with lo < hi expected)", rec->name, i, lo[i], hi[i],
                               m->props[i].name);
                goto fail;
            }
            m->num_range[2 * i] = lo[i];
            m->num_range[2 * i + 1] = hi[i];
        }
    }
    /* an ensemble's other members (absent: one network, as files before format 1.1) */
    int64_t count = 1;
    if (bl_modelrec_find_attr(rec, "members", "count")) {
        if ((st = get_int_range(rec, "members", "count", 1, BL_MODEL_MEMBERS_MAX, &count, err))) goto fail;
        if ((size_t)count * (size_t)m->net.d.z_hidden > BL_BNET_DIM_MAX) {
            st = bl_seterr(err, BL_EFORMAT, "model '%s': members/count %" PRId64 " × z_hidden %d exceeds %d",
                           rec->name, count, m->net.d.z_hidden, BL_BNET_DIM_MAX);
            goto fail;
        }
        const char *comb;
        if ((st = bl_modelrec_get_string(rec, "members", "combine", &comb, err))) goto fail;
        if (strcmp(comb, "median") != 0) {
            st = bl_seterr(err, BL_EFORMAT, "model '%s': members/combine '%s' (expected median)", rec->name,
                           shown(comb, q, sizeof q));
            goto fail;
        }
    }
    /* blocks of a member past the count: a damaged or lost members group would drop networks silently */
    for (size_t b = 0; b < rec->n_blocks; b++) {
        long j = member_of_block(rec->blocks[b].name);
        if (j >= count) {
            st = bl_seterr(err, BL_EFORMAT, "model '%s': block '%s' belongs to member %ld, but the model has %" PRId64
                           " member%s (members/count)", rec->name, rec->blocks[b].name, j, count, count == 1 ? "" : "s");
            goto fail;
        }
    }
    if (count > 1) {
        m->more = calloc((size_t)count - 1, sizeof *m->more);
        m->member_meta = calloc((size_t)count * 4, sizeof *m->member_meta);
        if (!m->more || !m->member_meta) {
            st = bl_seterr(err, BL_ENOMEM, "out of memory");
            goto fail;
        }
        for (int64_t j = 1; j < count; j++) {
            bl_bnet *net = &m->more[j - 1];
            if ((st = bl_bnet_init(net, &m->net.d, NULL, err))) goto fail;
            m->n_members++; /* from here bl_model_free frees it */
            for (int i = 0; i < net->P.n_views; i++) {
                const bl_param_view *pv = &net->P.views[i];
                int bias = pv->rows == 1 && strstr(pv->name, ".bias") != NULL;
                char bn[96];
                snprintf(bn, sizeof bn, "member%" PRId64 ".%s", j, pv->name);
                const double *data;
                if ((st = bl_modelrec_get_block(rec, bn, bias ? 1 : 2, bias ? (size_t)pv->cols : (size_t)pv->rows,
                                                bias ? 1 : (size_t)pv->cols, &data, err)))
                    goto fail;
                memcpy(net->P.param + pv->offset, data, (size_t)pv->rows * (size_t)pv->cols * sizeof(double));
                if ((st = finite_block(rec->name, bn, data, (size_t)pv->rows * (size_t)pv->cols, err))) goto fail;
            }
        }
        const char *names[4] = {"dropout", "learning_rate", "weight_decay", "best_val_loss"};
        for (int c = 0; c < 4; c++) {
            const double *col;
            size_t nc;
            if ((st = bl_modelrec_get_doubles(rec, "members", names[c], &col, &nc, err))) goto fail;
            if (nc != (size_t)count) {
                st = bl_seterr(err, BL_EFORMAT, "model '%s': members/%s holds %zu values, members/count is %" PRId64,
                               rec->name, names[c], nc, count);
                goto fail;
            }
            for (int64_t j = 0; j < count; j++) m->member_meta[4 * j + c] = col[j];
        }
    }
    const double *lo, *hi;
    size_t nlo, nhi;
    if ((st = bl_modelrec_get_doubles(rec, "scaler", "min", &lo, &nlo, err))) goto fail;
    if ((st = bl_modelrec_get_doubles(rec, "scaler", "max", &hi, &nhi, err))) goto fail;
    if (nlo != BL_SCALEOUT_NFEAT || nhi != BL_SCALEOUT_NFEAT) {
        st = bl_seterr(err, BL_EFORMAT, "model '%s': scaler/min and scaler/max must hold %d values", rec->name,
                       BL_SCALEOUT_NFEAT);
        goto fail;
    }
    for (int k = 0; k < BL_SCALEOUT_NFEAT; k++)
        if (!(isfinite(lo[k]) && isfinite(hi[k]) && lo[k] <= hi[k])) {
            st = bl_seterr(err, BL_EFORMAT, "model '%s': scaler/min, scaler/max [%d] = %g, %g (finite, min <= max "
                           "expected)", rec->name, k, lo[k], hi[k]);
            goto fail;
        }
    m->scaler.dim = BL_SCALEOUT_NFEAT;
    memcpy(m->scaler.lo, lo, sizeof(double) * BL_SCALEOUT_NFEAT);
    memcpy(m->scaler.hi, hi, sizeof(double) * BL_SCALEOUT_NFEAT);
    const char *scaling;
    if ((st = bl_modelrec_get_string(rec, "target", "scaling", &scaling, err))) goto fail;
    if (strcmp(scaling, "seconds") == 0) m->target_scaling = BL_TARGET_SECONDS;
    else if (strcmp(scaling, "mean") == 0) m->target_scaling = BL_TARGET_MEAN;
    else if (strcmp(scaling, "log") == 0) m->target_scaling = BL_TARGET_LOG;
    else {
        st = bl_seterr(err, BL_EFORMAT, "model '%s': target/scaling '%s' (expected seconds, mean or log)", rec->name,
                       shown(scaling, q, sizeof q));
        goto fail;
    }
    if ((st = bl_modelrec_get_double(rec, "target", "scale", &m->target_scale, err))) goto fail;
    if (!(m->target_scale > 0) || m->target_scale > 1e300) {
        st = bl_seterr(err, BL_EFORMAT, "model '%s': target/scale must be a positive number", rec->name);
        goto fail;
    }
    if ((st = bl_modelrec_get_double(rec, "hyperparameters", "dropout", &m->dropout, err))) goto fail;
    if ((st = bl_modelrec_get_double(rec, "hyperparameters", "learning_rate", &m->lr, err))) goto fail;
    if ((st = bl_modelrec_get_double(rec, "hyperparameters", "weight_decay", &m->weight_decay, err))) goto fail;
    if ((st = hyper_check(rec->name, "hyperparameters/", m->dropout, m->lr, m->weight_decay, err))) goto fail;
    for (int j = 1; j < m->n_members; j++) {
        char what[48];
        snprintf(what, sizeof what, "members/ (member %d) ", j);
        const double *mm = m->member_meta + 4 * j;
        if ((st = hyper_check(rec->name, what, mm[0], mm[1], mm[2], err))) goto fail;
    }
    /* training metadata: informative; absent fields keep their defaults */
    const char *s;
    if (bl_modelrec_get_string(rec, "training", "data_hash", &s, NULL) == BL_OK)
        m->data_hash = strtoull(s, NULL, 16);
    int64_t iv;
    if (bl_modelrec_get_int(rec, "training", "rows", &iv, NULL) == BL_OK) m->rows = iv;
    if (bl_modelrec_get_int(rec, "training", "contexts", &iv, NULL) == BL_OK) m->contexts = iv;
    if (bl_modelrec_get_int(rec, "training", "epochs", &iv, NULL) == BL_OK) m->epochs = iv;
    if (bl_modelrec_get_int(rec, "training", "finetune_epochs", &iv, NULL) == BL_OK) m->finetune_epochs = iv;
    if (bl_modelrec_get_int(rec, "training", "finetune_runs", &iv, NULL) == BL_OK) m->finetune_runs = iv;
    if (bl_modelrec_get_int(rec, "training", "pretrained", &iv, NULL) == BL_OK) m->pretrained = iv != 0;
    m->val_rows = -1; /* absent: written before the attribute existed */
    if (bl_modelrec_get_int(rec, "training", "val_rows", &iv, NULL) == BL_OK) m->val_rows = iv;
    if (m->rows < 0 || m->contexts < 0 || m->epochs < 0 || m->finetune_epochs < 0 || m->finetune_runs < 0 ||
        m->val_rows < -1) {
        st = bl_seterr(err, BL_EFORMAT, "model '%s': a training/ count is negative (rows, contexts, epochs, "
                       "finetune_epochs, finetune_runs, val_rows)", rec->name);
        goto fail;
    }
    bl_modelrec_get_double(rec, "training", "best_val_loss", &m->best_val_loss, NULL);
    bl_modelrec_get_double(rec, "training", "best_train_loss", &m->best_train_loss, NULL);
    bl_modelrec_get_double(rec, "training", "finetune_mae", &m->finetune_mae, NULL);
    if (bl_modelrec_get_string(rec, "training", "created", &s, NULL) == BL_OK)
        snprintf(m->created, sizeof m->created, "%s", s);
    if ((st = bl_model_records_load(m, rec, err))) goto fail;
    if ((st = bl_guard_load(&m->guard, rec, err))) goto fail;
    *out = m;
    return BL_OK;
fail:
    bl_model_free(m);
    return st;
}

bl_status bl_model_load_ex(const char *path, const char *name, unsigned flags, bl_model **out, bl_error *err) {
    if (!path || !out) return bl_seterr(err, BL_EINVAL, "bl_model_load: NULL argument");
    *out = NULL;
    bl_modelrec *rec;
    bl_status st = bl_mf_load_ex(path, name, flags, &rec, err);
    if (st) return st;
    st = bl_model_from_record(rec, out, err);
    bl_modelrec_free(rec);
    if (st) bl_prefixerr(err, "%s", path);
    return st;
}

bl_status bl_model_load(const char *path, const char *name, bl_model **out, bl_error *err) {
    return bl_model_load_ex(path, name, 0, out, err);
}
