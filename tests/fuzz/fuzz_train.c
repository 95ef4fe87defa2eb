/* fuzz_train.c — libFuzzer target for training on a fuzzed (schema, data) pair: whatever parses and
 * loads is pre-trained for a few epochs, fine-tuned and asked for predictions, so the whole training
 * path meets shapes no shipped data set has (input format: fuzz_train.h). The encoder and training
 * choices (number encoding, totals per machine, target scaling, validation split, trials, dropout
 * masks) follow from the input's length, so the corpus covers them all. Only a clean refusal or a
 * result is acceptable. Not here: model files (their loader has its own target). */
#include "tests/fuzz/fuzz_train.h"

#include "data/dataset.h"
#include "data/schema.h"
#include "model/model.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A failure must explain itself. */
static void check_refusal(bl_status st, const bl_error *e) {
    if (st != BL_OK && e->message[0] == '\0') __builtin_trap();
}

/* The data part's delimiter: a tab when its header line holds one, else a comma. */
static char header_delim(const char *d, size_t n) {
    for (size_t i = 0; i < n && d[i] != '\n'; i++)
        if (d[i] == '\t') return '\t';
    return ',';
}

static int train(const bl_dataset *ds, const char *schema_text, unsigned pick) {
    bl_error e = {0};
    bl_pretrain_opts po;
    bl_pretrain_opts_default(&po);
    po.members = 1;
    po.trials = 1 + (int)(pick & 1);
    po.epochs = 3;
    po.grace = 1 + (long)((pick >> 1) & 1);
    po.batch = 8;
    po.threads = 1;
    po.target_scaling = (int)((pick >> 2) % 3);
    po.val_split = (int)((pick >> 4) & 1);
    po.per_row_dropout = (int)((pick >> 5) % 3);
    bl_model *m = NULL, *t = NULL;
    bl_status st = bl_pretrain(ds, schema_text, &po, &m, &e);
    check_refusal(st, &e);
    if (st != BL_OK) return 0;

    /* fine-tune on up to three rows of the first context, then predict them two ways */
    const bl_context *c = &ds->contexts[0];
    size_t n = c->n_rows < 3 ? c->n_rows : 3;
    bl_finetune_opts fo;
    bl_finetune_opts_default(&fo);
    fo.max_epochs = 3;
    fo.patience = 2;
    fo.cv_epochs = 3;
    st = bl_finetune(m, ds, c->rows, n, &fo, &t, &e);
    check_refusal(st, &e);
    if (st == BL_OK) {
        double ctx[BL_BNET_DIM_MAX], y[3];
        const double x[3] = {1, ds->scale_out[c->rows[0]], 1e6};
        st = bl_model_context_row(t, ds, c->rows[0], ctx, &e);
        if (st == BL_OK) st = bl_model_predict(t, ctx, x, 3, y, &e);
        check_refusal(st, &e);
        const char *vals[2 * BL_BNET_PROPS_MAX];
        for (size_t i = 0; i < t->n_props && i < 2 * BL_BNET_PROPS_MAX; i++) {
            long j = bl_dataset_find_prop(ds, t->props[i].name);
            vals[i] = j < 0 ? NULL : ds->props[j].values[ds->props[j].row_value[c->rows[0]]];
        }
        st = bl_model_context(t, vals, ctx, &e);
        if (st == BL_OK) st = bl_model_predict(t, ctx, x, 3, y, &e);
        check_refusal(st, &e);
    }
    bl_model_free(t);
    bl_model_free(m);
    return 1;
}

int bl_fuzz_train_one(const uint8_t *data, size_t size) {
    if (size > BL_FUZZ_TRAIN_MAX_INPUT) return 0;
    const char *in = (const char *)data;
    const size_t seplen = strlen(BL_FUZZ_TRAIN_SEPARATOR);
    size_t ls = size, d0 = size;
    for (size_t i = 0; i + seplen <= size; i++)
        if (memcmp(in + i, BL_FUZZ_TRAIN_SEPARATOR, seplen) == 0) {
            ls = i;
            d0 = i + seplen;
            break;
        }
    bl_schema *sc = NULL;
    bl_error e = {0};
    bl_status st = bl_schema_parse("fuzz.schema", in, ls, &sc, &e);
    check_refusal(st, &e);
    if (st != BL_OK) return 0;
    /* the choices: from the length, so that mutations that grow or shrink an input visit them all */
    const unsigned pick = (unsigned)(size * 2654435761u >> 7);
    bl_encode_settings es;
    bl_encode_settings_default(&es);
    es.numbers = pick % 3; /* binary, log, range: one network reads one encoding */
    es.totals_per_machine = (pick >> 2) & 1;
    bl_dataset *ds = NULL, *sub = NULL;
    int trained = 0;
    st = bl_dataset_load_mem("fuzz.data", in + d0, size - d0, header_delim(in + d0, size - d0), sc, &es, &ds, &e);
    check_refusal(st, &e);
    if (st == BL_OK && ds->n_rows > BL_FUZZ_TRAIN_MAX_ROWS) { /* the first rows only: each input stays fast */
        size_t rows[BL_FUZZ_TRAIN_MAX_ROWS];
        for (size_t i = 0; i < BL_FUZZ_TRAIN_MAX_ROWS; i++) rows[i] = i;
        st = bl_dataset_subset(ds, rows, BL_FUZZ_TRAIN_MAX_ROWS, &sub, &e);
        check_refusal(st, &e);
    }
    if (st == BL_OK) {
        /* the schema text as a model stores it */
        char *text = malloc(ls + 1);
        if (text) {
            memcpy(text, in, ls);
            text[ls] = '\0';
            trained = train(sub ? sub : ds, text, pick >> 3);
            free(text);
        }
    }
    bl_dataset_free(sub);
    bl_dataset_free(ds);
    bl_schema_free(sc);
    return trained;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    (void)bl_fuzz_train_one(data, size);
    return 0;
}
