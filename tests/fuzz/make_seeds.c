/* make_seeds.c — writes the seed corpora of fuzz_modelfile and fuzz_modelwire: real model files of
 * every format version and member count, made with the project's own pre-training and saving, then
 * edited back to older versions the way those versions wrote them (1.0: one network, no members
 * group; 1.1: members, no encoder/numbers or training/val_rows), plus a file of two models. A seed
 * of corpus_modelfile (NAME.seed) is a file's bytes after its 512-byte header; corpus_modelwire holds
 * the model-file reader's answer for the same file. Usage: make_seeds SOURCE_ROOT (writes into
 * SOURCE_ROOT/tests/fuzz/corpus_modelfile and corpus_modelwire). Not run by the tests. */
#include "data/synth.h"
#include "model/model.h"
#include "modelfile/modelfile.h"
#include "modelfile/modelfile_internal.h"

#include <hdf5.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void die(const char *what, const bl_error *e) {
    fprintf(stderr, "make_seeds: %s: %s\n", what, e ? e->message : "failed");
    exit(1);
}

static unsigned char *slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) die(path, NULL);
    fseek(f, 0, SEEK_END);
    *len = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc(*len);
    if (!b || fread(b, 1, *len, f) != *len) die(path, NULL);
    fclose(f);
    return b;
}

static void spit(const char *path, const void *p, size_t n) {
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(p, 1, n, f) != n || fclose(f) != 0) die(path, NULL);
}

/* A model of `members` networks with numbers encoded so, pre-trained briefly on 3 synthetic contexts. */
static bl_model *train(int members, uint32_t numbers, const char *name) {
    bl_synth_config c;
    bl_synth_config_default(&c);
    c.n_contexts = 3;
    c.reps = 1;
    bl_synth_corpus *corp;
    bl_error e;
    if (bl_synth_generate(&c, &corp, &e) != BL_OK) die("synth", &e);
    bl_encode_settings es;
    bl_encode_settings_default(&es);
    es.numbers = numbers;
    bl_dataset *ds;
    if (bl_synth_dataset(corp, &es, &ds, &e) != BL_OK) die("dataset", &e);
    bl_synth_free(corp);
    bl_pretrain_opts o;
    bl_pretrain_opts_default(&o);
    o.trials = 1;
    o.epochs = 3;
    o.grace = 3;
    o.members = members;
    bl_model *m;
    if (bl_pretrain(ds, NULL, &o, &m, &e) != BL_OK) die("pretrain", &e);
    bl_dataset_free(ds);
    free(m->name);
    m->name = strdup(name);
    return m;
}

/* Deletes attribute group/attr of model `model` in an HDF5 file (absent: nothing), and sets the
 * root format_version. */
static void downgrade(const char *path, const char *model, const char *const *paths, const char *const *attrs,
                      int n, const char *version) {
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    if (f < 0) die(path, NULL);
    for (int i = 0; i < n; i++) {
        char obj[256];
        snprintf(obj, sizeof obj, "/models/%s/%s", model, paths[i]);
        if (attrs[i]) {
            if (H5Aexists_by_name(f, obj, attrs[i], H5P_DEFAULT) > 0) H5Adelete_by_name(f, obj, attrs[i], H5P_DEFAULT);
        } else if (H5Lexists(f, obj, H5P_DEFAULT) > 0) {
            H5Ldelete(f, obj, H5P_DEFAULT);
        }
    }
    H5Fclose(f);
    bl_error e;
    if (bl_mf_test_set_root_string(path, "format_version", version, 0, &e) != BL_OK) die(path, &e);
}

/* Writes the seeds for the model file at path under the name stem. */
static void seeds(const char *root, const char *path, const char *stem) {
    size_t len;
    unsigned char *b = slurp(path, &len);
    char out[4096];
    snprintf(out, sizeof out, "%s/tests/fuzz/corpus_modelfile/%s.seed", root, stem);
    spit(out, b + 512, len - 512);
    bl_mf_result r;
    bl_error e;
    if (bl_mf_parse_image(path, b, len, BL_MF_OP_ALL, NULL, &r, &e) != BL_OK) die(path, &e);
    bl_mf_buf w = {0};
    if (bl_mf_wire_put_answer(&w, BL_OK, "", &r) != 0) die("answer", NULL);
    snprintf(out, sizeof out, "%s/tests/fuzz/corpus_modelwire/%s.answer", root, stem);
    spit(out, w.p, w.len);
    printf("%s: file %zu bytes, answer %zu bytes\n", stem, len - 512, w.len);
    free(w.p);
    bl_mf_result_clear(&r);
    free(b);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: make_seeds SOURCE_ROOT\n");
        return 2;
    }
    const char *root = argv[1];
    char dir[] = "/tmp/make_seeds-XXXXXX", path[256];
    if (!mkdtemp(dir)) die("mkdtemp", NULL);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    bl_error e;
    struct {
        const char *stem;
        int members;
        uint32_t numbers;
        const char *version; /* NULL: as this library writes it */
    } v[] = {
        {"v1.0-one", 1, BL_ENC_NUMBERS_BINARY, "1.0"},
        {"v1.1-three", 3, BL_ENC_NUMBERS_BINARY, "1.1"},
        {"v1.2-one", 1, BL_ENC_NUMBERS_BINARY, NULL},
        {"v1.2-two", 2, BL_ENC_NUMBERS_BINARY, NULL},
        {"v2.0-log", 1, BL_ENC_NUMBERS_LOG, NULL},
        {"v2.0-range", 1, BL_ENC_NUMBERS_RANGE, NULL},
        {"v2.0-both-six", 6, BL_ENC_NUMBERS_BOTH, NULL},
    };
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        bl_model *m = train(v[i].members, v[i].numbers, "grep");
        snprintf(path, sizeof path, "%s/%s.h5", dir, v[i].stem);
        if (bl_model_save(m, path, &e) != BL_OK) die("save", &e);
        bl_model_free(m);
        if (v[i].version) {
            const char *p[] = {"encoder", "training", "members"};
            const char *a[] = {"numbers", "val_rows", NULL};
            downgrade(path, "grep", p, a, strcmp(v[i].version, "1.0") == 0 ? 3 : 2, v[i].version);
        }
        seeds(root, path, v[i].stem);
    }
    /* two models in one file */
    bl_model *a = train(1, BL_ENC_NUMBERS_BINARY, "grep"), *b = train(2, BL_ENC_NUMBERS_LOG, "sort");
    snprintf(path, sizeof path, "%s/two.h5", dir);
    if (bl_model_save(a, path, &e) != BL_OK || bl_model_save(b, path, &e) != BL_OK) die("save", &e);
    bl_model_free(a);
    bl_model_free(b);
    seeds(root, path, "v2.0-two-models");
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : 1;
}
