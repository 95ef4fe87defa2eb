/* test_api.c — the public C API (include/bellamy/bellamy.h) on a tiny model pre-trained once on the
 * synthetic corpus: model files, predictor properties, predictions (checked against the internal
 * model), context errors, choosing a scale-out, fine-tuning from arrays and from a file (also in the
 * two internal steps, and refused for runs whose schema differs from the model's), saving,
 * concurrent predictions from several threads, and the example scheduler program run as a process.
 */
#include "testutil.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bellamy/bellamy.h"
#include "api/api_internal.h"
#include "data/synth.h"
#include "model/model.h"
#include "modelfile/modelfile.h"
/* the stress suite's users' data sets (seed 1733's: test_finetune_never_collapses_below_its_runs) */
#include "gen_userdata.c"

static char g_model[4096], g_tsv[4096], g_schema[4096], g_runs[4096], g_user[4096];
static bl_synth_corpus *g_corpus;
static bl_dataset *g_ds;

/* Pre-trains the tiny model once, in the parent, before the tests fork. */
static void setup(void) {
    bl_error err;
    const char *dir = bl_test_tmpdir();
    bl_synth_config c;
    bl_synth_config_default(&c);
    c.n_contexts = 8;
    ck_assert_int_eq(bl_synth_generate(&c, &g_corpus, &err), BL_OK);
    ck_assert_int_eq(bl_synth_write(g_corpus, dir, "synth", &err), BL_OK);
    snprintf(g_tsv, sizeof g_tsv, "%s/synth.tsv", dir);
    snprintf(g_schema, sizeof g_schema, "%s/synth.schema", dir);
    snprintf(g_model, sizeof g_model, "%s/model.h5", dir);
    snprintf(g_runs, sizeof g_runs, "%s/runs.tsv", dir);
    ck_assert_int_eq(bl_dataset_load(g_tsv, g_schema, 0, NULL, &g_ds, &err), BL_OK);
    bl_pretrain_opts o;
    bl_pretrain_opts_default(&o);
    o.trials = 2;
    o.epochs = 30;
    o.grace = 30;
    o.calib_draws = 1; /* a calibration complete in its parts, one draw per run count (the suite's time) */
    bl_model *m = NULL;
    if (bl_pretrain(g_ds, bl_synth_schema_text(), &o, &m, &err) != BL_OK) ck_abort_msg("pretrain: %s", err.message);
    free(m->name);
    m->name = strdup("synth");
    if (bl_model_save(m, g_model, &err) != BL_OK) ck_abort_msg("save: %s", err.message);
    bl_model_free(m);

    /* A user's own data set (the ETL reproducer's shape), pre-trained as a two-member ensemble. */
    bl_test_write_user_data(dir);
    char path[4200], sch[4200];
    snprintf(path, sizeof path, "%s/user-rest.csv", dir);
    snprintf(sch, sizeof sch, "%s/user.schema", dir);
    snprintf(g_user, sizeof g_user, "%s/user.h5", dir);
    bl_dataset *uds = NULL;
    ck_assert_int_eq(bl_dataset_load(path, sch, 0, NULL, &uds, &err), BL_OK);
    o.members = 2;
    if (bl_pretrain(uds, NULL, &o, &m, &err) != BL_OK) ck_abort_msg("pretrain: %s", err.message);
    free(m->schema_text); /* the schema text, as bellamy-train stores it */
    FILE *sf = fopen(sch, "r");
    char text[2048];
    size_t tl = fread(text, 1, sizeof text - 1, sf);
    fclose(sf);
    text[tl] = '\0';
    m->schema_text = strdup(text);
    free(m->name);
    m->name = strdup("etl");
    if (bl_model_save(m, g_user, &err) != BL_OK) ck_abort_msg("save: %s", err.message);
    bl_model_free(m);
    bl_dataset_free(uds);

    /* Three runs of context 0 (scale-outs 2, 6, 12), in the corpus's own file format. */
    FILE *f = fopen(g_tsv, "r");
    FILE *o2 = fopen(g_runs, "w");
    ck_assert_ptr_nonnull(f);
    ck_assert_ptr_nonnull(o2);
    char line[1024];
    size_t row = 0;
    while (fgets(line, sizeof line, f)) {
        if (row == 0) fputs(line, o2);
        else {
            size_t r = row - 1;
            if (g_ds->context[r] == 0 && (r % 3) == 0 && (g_ds->scale_out[r] == 2 || g_ds->scale_out[r] == 6 ||
                                                        g_ds->scale_out[r] == 12))
                fputs(line, o2);
        }
        row++;
    }
    fclose(f);
    fclose(o2);
}

static void teardown(void) {
    bl_dataset_free(g_ds);
    bl_synth_free(g_corpus);
}

/* The context of data-set row r as name/value pairs (cluster totals per machine). */
static size_t row_context(size_t r, bl_prop_value *ctx, char bufs[][64]) {
    size_t n = 0;
    for (size_t p = 0; p < g_ds->n_props; p++) {
        const bl_dataset_prop *pr = &g_ds->props[p];
        const char *v = pr->values[pr->row_value[r]];
        if (pr->cluster_total) {
            snprintf(bufs[n], 64, "%.0f", strtod(v, NULL) / g_ds->scale_out[r]);
            v = bufs[n];
        }
        ctx[n].name = pr->name;
        ctx[n].value = v;
        n++;
    }
    return n;
}

static bl_predictor *load(void) {
    bl_error err;
    bl_predictor *p = NULL;
    if (bl_predictor_load(g_model, "synth", &p, &err) != BL_OK) ck_abort_msg("load: %s", err.message);
    return p;
}

START_TEST(test_model_file) {
    bl_error err;
    bl_model_file *f = NULL;
    ck_assert_int_eq(bl_model_file_open(g_model, &f, &err), BL_OK);
    ck_assert_uint_eq(bl_model_file_count(f), 1);
    ck_assert_str_eq(bl_model_file_name(f, 0), "synth");
    ck_assert_ptr_null(bl_model_file_name(f, 1));
    bl_predictor *p = NULL;
    ck_assert_int_eq(bl_model_file_load(f, NULL, &p, &err), BL_OK);
    ck_assert_str_eq(bl_predictor_name(p), "synth");
    bl_predictor_free(p);
    ck_assert_int_eq(bl_model_file_load(f, "nope", &p, &err), BL_ENOTFOUND);
    ck_assert_ptr_null(p);
    ck_assert_ptr_nonnull(strstr(err.message, "synth")); /* lists what is there */
    bl_model_file_free(f);
    bl_model_file_free(NULL);
    bl_predictor_free(NULL);
    ck_assert_uint_eq(bl_model_file_count(NULL), 0);
}
END_TEST

START_TEST(test_bad_files) {
    bl_error err;
    bl_model_file *f = NULL;
    char path[4200];
    snprintf(path, sizeof path, "%s/absent.h5", bl_test_tmpdir());
    ck_assert_int_ne(bl_model_file_open(path, &f, &err), BL_OK);
    ck_assert_ptr_null(f);
    ck_assert_ptr_nonnull(strstr(err.message, "absent.h5"));
    /* a text file is not a model file */
    bl_predictor *p = NULL;
    ck_assert_int_ne(bl_predictor_load(g_tsv, NULL, &p, &err), BL_OK);
    ck_assert_ptr_null(p);
    ck_assert(err.message[0] != '\0');
    ck_assert_int_eq(bl_predictor_load(NULL, NULL, &p, &err), BL_EINVAL);
}
END_TEST

/* The bytes of the file at path (*len), malloc'd. */
static unsigned char *file_bytes(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc((size_t)n + 1);
    ck_assert_ptr_nonnull(b);
    ck_assert_uint_eq(fread(b, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *len = (size_t)n;
    return b;
}

/* A model of precision f32 in a file (issue 28): written with the attribute and read back as f32, its
 * weights their floats; a weight float32 cannot hold refused on saving (the old file intact); a float32
 * weight that is +inf refused on loading, naming the file, the model and the block; the batched CPU
 * trial group refused with f32 naming the option. */
START_TEST(test_f32_model_file) {
    bl_error err;
    bl_model *m = NULL;
    ck_assert_msg(bl_model_load(g_model, "synth", &m, &err) == BL_OK, "%s", err.message);
    ck_assert_int_eq(bl_model_precision(m), BL_PRECISION_F32); /* trained with the default: float32 on the CPU */
    bl_model_set_precision(m, BL_PRECISION_F32);
    for (int j = 0; j < m->n_members; j++) ck_assert_int_eq(bl_model_member(m, j)->d.f32, 1);
    char path[4200];
    snprintf(path, sizeof path, "%s/f32.h5", bl_test_tmpdir());
    unlink(path);
    ck_assert_msg(bl_model_save(m, path, &err) == BL_OK, "%s", err.message);
    bl_model *b = NULL;
    ck_assert_msg(bl_model_load(path, "synth", &b, &err) == BL_OK, "%s", err.message);
    ck_assert_int_eq(bl_model_precision(b), BL_PRECISION_F32);
    ck_assert_int_eq(b->n_members, m->n_members);
    for (int j = 0; j < m->n_members; j++) {
        const bl_bnet *x = bl_model_member_c(m, j), *y = bl_model_member_c(b, j);
        ck_assert_int_eq(y->d.f32, 1);
        for (size_t k = 0; k < x->P.n; k++)
            ck_assert_msg(y->P.param[k] == (double)(float)x->P.param[k] && y->P.param[k] == x->P.param[k],
                          "member %d, parameter %zu: %.17g read back, %.17g trained (a float32 model's parameters "
                          "are float32 values in memory too)", j, k, y->P.param[k], x->P.param[k]);
    }
    bl_predictor *p = NULL;
    ck_assert_msg(bl_predictor_load(path, "synth", &p, &err) == BL_OK, "%s", err.message);
    ck_assert_str_eq(bl_predictor_precision(p), "f32");
    bl_predictor_free(p);
    /* a clone (what fine-tuning copies) keeps it */
    bl_model *c = NULL;
    ck_assert_int_eq(bl_model_clone(b, &c, &err), BL_OK);
    ck_assert_int_eq(bl_model_precision(c), BL_PRECISION_F32);
    for (int j = 0; j < c->n_members; j++) ck_assert_int_eq(bl_model_member_c(c, j)->d.f32, 1);
    bl_model_free(c);

    /* a weight beyond float32's range: refused before the file is touched */
    size_t len0, len1;
    unsigned char *before = file_bytes(path, &len0);
    const double keep = b->net.P.param[b->net.f0w + 1];
    b->net.P.param[b->net.f0w + 1] = 1e39;
    bl_status st = bl_model_save(b, path, &err);
    ck_assert_msg(st == BL_ERANGE && strstr(err.message, path) && strstr(err.message, "f.0.weight") &&
                  strstr(err.message, "float32's range") && strstr(err.message, "precision f64"), "%d %s", st,
                  err.message);
    unsigned char *after = file_bytes(path, &len1);
    ck_assert(len0 == len1 && memcmp(before, after, len0) == 0);
    free(after);
    free(before);
    /* as a float64 model the same weight saves */
    bl_model_set_precision(b, BL_PRECISION_F64);
    char path64[4200];
    snprintf(path64, sizeof path64, "%s/f64-big.h5", bl_test_tmpdir());
    ck_assert_msg(bl_model_save(b, path64, &err) == BL_OK, "%s", err.message);
    b->net.P.param[b->net.f0w + 1] = keep;
    bl_model_free(b);

    /* a float32 weight that is +inf: refused on loading (the finite-weight check covers float32) */
    size_t dims[2] = {16, 3};
    ck_assert_int_eq(bl_mf_test_write_dataset(path, "/models/synth/weights/f.0.weight", 2, dims, 'F', &err), BL_OK);
    p = NULL;
    st = bl_predictor_load(path, "synth", &p, &err);
    ck_assert_msg(st == BL_EFORMAT && strstr(err.message, path) && strstr(err.message, "model 'synth'") &&
                  strstr(err.message, "f.0.weight") && strstr(err.message, "finite"), "%d %s", st, err.message);
    ck_assert_ptr_null(p);
    /* and in another member */
    ck_assert_msg(bl_model_save(m, path, &err) == BL_OK, "%s", err.message); /* replaces the damaged model */
    if (m->n_members > 1) {
        ck_assert_int_eq(bl_mf_test_write_dataset(path, "/models/synth/weights/member1.z.2.bias", 1, (size_t[]){1}, 'F',
                                                  &err), BL_OK);
        st = bl_predictor_load(path, "synth", &p, &err);
        ck_assert_msg(st == BL_EFORMAT && strstr(err.message, "member1.z.2.bias") && strstr(err.message, "inf"), "%d %s",
                      st, err.message);
    }
    bl_model_free(m);

    /* the batched CPU trial group computes in float64 only: refused, never a silent switch */
    bl_pretrain_opts po;
    bl_pretrain_opts_default(&po);
    po.precision = BL_PRECISION_F32;
    ck_assert_int_eq(bl_pretrain_opts_check(&po, &err), BL_OK);
    po.device = BL_DEVICE_CPU_BATCHED;
    st = bl_pretrain_opts_check(&po, &err);
    ck_assert_msg(st == BL_EUNSUPPORTED && strstr(err.message, "precision f32") && strstr(err.message, "batched"), "%d %s",
                  st, err.message);
    bl_model *none = NULL;
    ck_assert_int_eq(bl_pretrain(g_ds, NULL, &po, &none, &err), BL_EUNSUPPORTED);
    ck_assert_ptr_null(none);
    po.device = BL_DEVICE_CUDA;
    ck_assert_int_eq(bl_pretrain_opts_check(&po, &err), BL_EUNSUPPORTED);
    ck_assert_ptr_nonnull(strstr(err.message, "precision"));
}
END_TEST

START_TEST(test_props) {
    bl_predictor *p = load();
    ck_assert_uint_eq(bl_predictor_prop_count(p), 8);
    int seen_total = 0, n_ess = 0;
    for (size_t i = 0; i < 8; i++) {
        bl_prop_info in;
        ck_assert_int_eq(bl_predictor_prop(p, i, &in), BL_OK);
        n_ess += in.essential;
        if (strcmp(in.name, "memory") == 0 || strcmp(in.name, "slots") == 0) {
            ck_assert_int_eq(in.cluster_total, 1);
            ck_assert_int_eq(in.number, 1);
            seen_total++;
        } else {
            ck_assert_int_eq(in.cluster_total, 0);
        }
        if (i < 5) ck_assert_int_eq(in.essential, 1); /* essential first */
    }
    ck_assert_int_eq(seen_total, 2);
    ck_assert_int_eq(n_ess, 5);
    bl_prop_info in;
    ck_assert_int_eq(bl_predictor_prop(p, 8, &in), BL_ERANGE);
    bl_model_info mi;
    ck_assert_int_eq(bl_predictor_info(p, &mi), BL_OK);
    ck_assert_int_eq(mi.pretrained, 1);
    ck_assert_int_eq(mi.rows, (long long)g_ds->n_rows);
    ck_assert_int_eq(mi.members, 6); /* the default ensemble */
    bl_predictor_free(p);
}
END_TEST

/* The public prediction for a row's context equals the internal one from the row itself. */
START_TEST(test_predict_matches_internal) {
    bl_error err;
    bl_predictor *p = load();
    bl_model *m = NULL;
    ck_assert_int_eq(bl_model_load(g_model, "synth", &m, &err), BL_OK);
    for (size_t r = 0; r < g_ds->n_rows; r += 7) {
        bl_prop_value ctx[16];
        char bufs[16][64];
        size_t n = row_context(r, ctx, bufs);
        double c[BL_BNET_DIM_MAX], want, got;
        ck_assert_int_eq(bl_model_context_row(m, g_ds, r, c, &err), BL_OK);
        ck_assert_int_eq(bl_model_predict(m, c, &g_ds->scale_out[r], 1, &want, &err), BL_OK);
        ck_assert_int_eq(bl_predict(p, ctx, n, &g_ds->scale_out[r], 1, &got, &err), BL_OK);
        ck_assert_double_eq_tol(got, want, 1e-9 * fabs(want) + 1e-12);
        ck_assert(isfinite(got));
    }
    /* a range agrees with the array form; optional properties may be left out */
    bl_prop_value ctx[16];
    char bufs[16][64];
    size_t n = row_context(0, ctx, bufs);
    double a[11], b[11], x[11];
    for (int i = 0; i < 11; i++) x[i] = 2 + i;
    ck_assert_int_eq(bl_predict_range(p, ctx, n, 2, 12, a, &err), BL_OK);
    ck_assert_int_eq(bl_predict(p, ctx, n, x, 11, b, &err), BL_OK);
    for (int i = 0; i < 11; i++) ck_assert_double_eq(a[i], b[i]);
    ck_assert_int_eq(bl_predict(p, ctx, 5, x, 11, b, &err), BL_OK);
    bl_model_free(m);
    bl_predictor_free(p);
}
END_TEST

START_TEST(test_context_errors) {
    bl_error err;
    bl_predictor *p = load();
    bl_prop_value ctx[16];
    char bufs[16][64];
    size_t n = row_context(0, ctx, bufs);
    double x = 4, t;
    /* unknown property */
    bl_prop_value bad[17];
    memcpy(bad, ctx, n * sizeof *ctx);
    bad[n].name = "colour";
    bad[n].value = "blue";
    ck_assert_int_eq(bl_predict(p, bad, n + 1, &x, 1, &t, &err), BL_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.message, "unknown property 'colour'"));
    ck_assert_ptr_nonnull(strstr(err.message, "machine_type"));
    /* repeated */
    bad[n] = ctx[0];
    ck_assert_int_eq(bl_predict(p, bad, n + 1, &x, 1, &t, &err), BL_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.message, "twice"));
    /* missing essential: drop machine_type (index 0) */
    ck_assert_int_eq(bl_predict(p, ctx + 1, n - 1, &x, 1, &t, &err), BL_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.message, "essential property 'machine_type' is missing"));
    ck_assert_int_eq(bl_predictor_check_context(p, ctx + 1, n - 1, &err), BL_EINVAL);
    /* text for a number */
    memcpy(bad, ctx, n * sizeof *ctx);
    for (size_t i = 0; i < n; i++)
        if (strcmp(bad[i].name, "data_size_MB") == 0) bad[i].value = "lots";
    ck_assert_int_eq(bl_predict(p, bad, n, &x, 1, &t, &err), BL_EFORMAT);
    ck_assert_ptr_nonnull(strstr(err.message, "data_size_MB"));
    /* beside a cluster total that scales, it is still refused once, before any scale-out (also for none),
     * naming none: it does not vary with the scale-out */
    int scales = 0;
    for (size_t i = 0; i < n; i++) scales |= strcmp(bad[i].name, "memory") == 0;
    ck_assert(scales);
    ck_assert_int_eq(bl_predict(p, bad, n, NULL, 0, NULL, &err), BL_EFORMAT);
    ck_assert_msg(strstr(err.message, "data_size_MB") && !strstr(err.message, "scale-out"), "%s", err.message);
    ck_assert_int_eq(bl_predict(p, bad, n, &x, 1, &t, &err), BL_EFORMAT);
    ck_assert_msg(!strstr(err.message, "scale-out"), "%s", err.message);
    memcpy(bad, ctx, n * sizeof *ctx);
    for (size_t i = 0; i < n; i++)
        if (strcmp(bad[i].name, "memory") == 0) bad[i].value = "-3";
    ck_assert_int_eq(bl_predict(p, bad, n, &x, 1, &t, &err), BL_EFORMAT);
    ck_assert_ptr_nonnull(strstr(err.message, "memory"));
    /* a per-machine value that fits, but not once multiplied by the scale-out: the message names it */
    for (size_t i = 0; i < n; i++)
        if (strcmp(bad[i].name, "memory") == 0) bad[i].value = "549755813887"; /* 2^39 − 1 */
    double x2[2] = {1, 2}, t2[2];
    ck_assert_int_ne(bl_predict(p, bad, n, x2, 2, t2, &err), BL_OK);
    ck_assert_msg(strstr(err.message, "at scale-out 2 (cluster totals are the per-machine values × 2)") &&
                  strstr(err.message, "memory"), "%s", err.message);
    /* bad scale-outs */
    double xs[2] = { 4, 0 }, ts[2];
    ck_assert_int_eq(bl_predict(p, ctx, n, xs, 2, ts, &err), BL_ERANGE);
    xs[1] = NAN;
    ck_assert_int_eq(bl_predict(p, ctx, n, xs, 2, ts, &err), BL_ERANGE);
    ck_assert_int_eq(bl_predict_range(p, ctx, n, 12, 2, ts, &err), BL_ERANGE);
    /* positive but so small that the features overflow: an error, never a NaN runtime */
    const double tiny[3] = { 5e-324, 1e-310, 1e-308 };
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(bl_predict(p, ctx, n, &tiny[i], 1, ts, &err), BL_ERANGE);
        ck_assert_msg(strstr(err.message, "not a number"), "%s", err.message);
    }
    /* choosing among them and sound ones: the NaN candidates are left out, not an error */
    const double mixed[3] = { 5e-324, 4, 6 };
    bl_choice ch;
    ck_assert_int_eq(bl_choose_scale_out(p, ctx, n, mixed, 3, NULL, &ch, &err), BL_OK);
    ck_assert(ch.scale_out == 4 || ch.scale_out == 6);
    ck_assert_msg(strstr(ch.reason, "1 left out"), "%s", ch.reason);
    ck_assert_int_eq(bl_predict_range(p, ctx, n, 0, 2, ts, &err), BL_ERANGE);
    ck_assert_int_eq(bl_predict(NULL, ctx, n, xs, 1, ts, &err), BL_EINVAL);
    bl_predictor_free(p);
}
END_TEST

/* A model whose log-runtime output overflows exp() predicts an infinite runtime: bl_predict refuses it
 * as it refuses a NaN (it used to hand it out as a runtime), bl_choose_scale_out leaves it out. */
START_TEST(test_predict_refuses_infinite_runtimes) {
    bl_error err;
    bl_model *m = NULL;
    ck_assert_msg(bl_model_load(g_model, "synth", &m, &err) == BL_OK, "%s", err.message);
    m->target_scaling = BL_TARGET_LOG;
    for (int k = 0; k < m->n_members; k++) { /* exp(1e4) overflows, in every member of the median */
        bl_bnet *net = bl_model_member(m, k);
        int b = bl_params_find(&net->P, "z.2.bias");
        ck_assert_int_ge(b, 0);
        net->P.param[net->P.views[b].offset] = 1e4;
    }
    char path[4200];
    snprintf(path, sizeof path, "%s/overflow.h5", bl_test_tmpdir());
    ck_assert_msg(bl_model_save(m, path, &err) == BL_OK, "%s", err.message);
    bl_model_free(m);
    bl_predictor *p = NULL;
    ck_assert_msg(bl_predictor_load(path, "synth", &p, &err) == BL_OK, "%s", err.message);
    bl_prop_value ctx[16];
    char bufs[16][64];
    size_t n = row_context(0, ctx, bufs);
    const double x[2] = {2, 4};
    double t[2];
    ck_assert_int_eq(bl_predict(p, ctx, n, x, 2, t, &err), BL_ERANGE);
    ck_assert_msg(strstr(err.message, "scale-out 2: the model's prediction is infinite"), "%s", err.message);
    ck_assert_int_eq(bl_predict_range(p, ctx, n, 2, 3, t, &err), BL_ERANGE); /* t holds 2 */
    bl_choice ch;
    ck_assert_int_eq(bl_choose_scale_out(p, ctx, n, x, 2, NULL, &ch, &err), BL_ERANGE);
    bl_predictor_free(p);
}
END_TEST

START_TEST(test_choose) {
    bl_error err;
    bl_choice c;
    bl_choice_opts o;
    const double x[5] = { 2, 4, 6, 8, 10 };
    const double t[5] = { 1000, 520, 400, 390, 390 };
    bl_choice_opts_init(&o);
    ck_assert_int_eq(bl_choose(x, t, 5, &o, &c, &err), BL_OK);
    ck_assert_double_eq(c.scale_out, 8); /* tie 390 → smaller scale-out */
    ck_assert_uint_eq(c.index, 3);
    ck_assert_int_eq(c.fallback, 0);
    ck_assert(c.reason[0]);
    ck_assert_int_eq(bl_choose(x, t, 5, NULL, &c, &err), BL_OK);
    ck_assert_double_eq(c.scale_out, 8);

    o.goal = BL_GOAL_SMALLEST;
    o.target_runtime_s = 600;
    ck_assert_int_eq(bl_choose(x, t, 5, &o, &c, &err), BL_OK);
    ck_assert_double_eq(c.scale_out, 4);
    ck_assert_int_eq(c.met_target, 1);
    o.target_runtime_s = 100; /* nobody makes it: the fastest, flagged */
    ck_assert_int_eq(bl_choose(x, t, 5, &o, &c, &err), BL_OK);
    ck_assert_double_eq(c.scale_out, 8);
    ck_assert_int_eq(c.fallback, 1);
    ck_assert_int_eq(c.met_target, 0);
    ck_assert_ptr_nonnull(strstr(c.reason, "no candidate"));

    /* machine-seconds: 2000, 2080, 2400, 3120, 3900 */
    o.goal = BL_GOAL_CHEAPEST;
    o.target_runtime_s = 0;
    o.price_per_hour = 0.4;
    ck_assert_int_eq(bl_choose(x, t, 5, &o, &c, &err), BL_OK);
    ck_assert_double_eq(c.scale_out, 2);
    ck_assert_double_eq_tol(c.cost, 2000 / 3600.0 * 0.4, 1e-12);
    o.target_runtime_s = 450; /* cheapest among 6, 8, 10 */
    ck_assert_int_eq(bl_choose(x, t, 5, &o, &c, &err), BL_OK);
    ck_assert_double_eq(c.scale_out, 6);
    ck_assert_double_eq_tol(c.cost, 2400 / 3600.0 * 0.4, 1e-12);

    /* invalid options */
    o.price_per_hour = -1;
    ck_assert_int_eq(bl_choose(x, t, 5, &o, &c, &err), BL_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.message, "price"));
    o.price_per_hour = 0.4;
    o.target_runtime_s = -5;
    ck_assert_int_eq(bl_choose(x, t, 5, &o, &c, &err), BL_EINVAL);
    o.target_runtime_s = 0;
    o.goal = BL_GOAL_SMALLEST;
    ck_assert_int_eq(bl_choose(x, t, 5, &o, &c, &err), BL_EINVAL);
    o.goal = BL_GOAL_CHEAPEST;
    o.price_per_hour = 0;
    ck_assert_int_eq(bl_choose(x, t, 5, &o, &c, &err), BL_EINVAL);
    ck_assert_int_eq(bl_choose(x, t, 0, NULL, &c, &err), BL_EINVAL);
    /* a non-finite prediction is never chosen */
    const double t2[3] = { NAN, 500, INFINITY };
    ck_assert_int_eq(bl_choose(x, t2, 3, NULL, &c, &err), BL_OK);
    ck_assert_double_eq(c.scale_out, 4);
    /* nor one at or below 0 (a model's output floor far outside its training data) or above
     * BL_RUNTIME_MAX_S, whatever the goal; the reason says how many were left out */
    const double t3[5] = { -1.75, 0.0, 900, 2e12, 700 };
    for (int g = 0; g < 3; g++) {
        bl_choice_opts_init(&o);
        o.goal = (bl_goal)g;
        o.price_per_hour = g == BL_GOAL_CHEAPEST ? 2.0 : 0.0;
        o.target_runtime_s = g == BL_GOAL_SMALLEST ? 1000 : 0;
        ck_assert_int_eq(bl_choose(x, t3, 5, &o, &c, &err), BL_OK);
        ck_assert_double_eq(c.scale_out, g == BL_GOAL_FASTEST ? 10 : g == BL_GOAL_SMALLEST ? 6 : 6);
        ck_assert_msg(strstr(c.reason, "3 left out"), "%s", c.reason);
    }
    const double t4[3] = { -1.7, 0.0, 1e300 };
    ck_assert_int_eq(bl_choose(x, t4, 3, NULL, &c, &err), BL_ERANGE);
    ck_assert_ptr_nonnull(strstr(err.message, "plausible"));
    /* none may be chosen: each reason that applies once, with its count; none that does not (before:
     * "0 one wider than allowed, 0 no plausible prediction") */
    const double ut[3] = { 100, 60, -1 }, ulo[3] = { 0, 10, 0 }, uhi[3] = { INFINITY, 200, INFINITY };
    bl_choice_opts_init(&o);
    o.max_width = 1; /* (200 − 10) / 60 > 1 */
    ck_assert_int_eq(bl_choose_interval(x, ut, ulo, uhi, 3, 0.9, &o, &c, &err), BL_ERANGE);
    ck_assert_msg(strncmp(err.message, "no candidate can be chosen: 1 has an unbounded interval (", 57) == 0 &&
                  strstr(err.message, "; 1 has an interval wider than the width limit (1 of the prediction); 1 has no "
                                      "plausible prediction (not in (0, 1e+12] s)"), "%s", err.message);
    o.max_width = 0;
    const double vt[2] = { 100, 60 };
    ck_assert_int_eq(bl_choose_interval(x, vt, ulo, uhi, 1, 0.9, &o, &c, &err), BL_ERANGE);
    ck_assert_msg(strstr(err.message, "no candidate can be chosen: 1 has an unbounded interval") &&
                  !strstr(err.message, " 0 ") && !strstr(err.message, "wider than"), "%s", err.message);
}
END_TEST

START_TEST(test_choose_scale_out) {
    bl_error err;
    bl_predictor *p = load();
    bl_prop_value ctx[16];
    char bufs[16][64];
    size_t n = row_context(0, ctx, bufs);
    double x[11], t[11];
    for (int i = 0; i < 11; i++) x[i] = 2 + i;
    ck_assert_int_eq(bl_predict(p, ctx, n, x, 11, t, &err), BL_OK);
    bl_choice a, b;
    bl_choice_opts o;
    bl_choice_opts_init(&o);
    o.goal = BL_GOAL_CHEAPEST;
    o.price_per_hour = 1.5;
    ck_assert_int_eq(bl_choose(x, t, 11, &o, &a, &err), BL_OK);
    ck_assert_int_eq(bl_choose_scale_out(p, ctx, n, x, 11, &o, &b, &err), BL_OK);
    ck_assert_uint_eq(a.index, b.index);
    ck_assert_double_eq(a.runtime_s, b.runtime_s);
    bl_predictor_free(p);
}
END_TEST

static double mean_abs_err(const bl_predictor *p, size_t context) {
    bl_error err;
    double s = 0;
    size_t k = 0;
    for (size_t r = 0; r < g_ds->n_rows; r++) {
        if (g_ds->context[r] != context) continue;
        bl_prop_value ctx[16];
        char bufs[16][64];
        size_t n = row_context(r, ctx, bufs);
        double t;
        ck_assert_int_eq(bl_predict(p, ctx, n, &g_ds->scale_out[r], 1, &t, &err), BL_OK);
        s += fabs(t - g_ds->runtime_s[r]);
        k++;
    }
    return s / (double)k;
}

START_TEST(test_finetune_arrays) {
    bl_error err;
    bl_predictor *p = load(), *q = NULL;
    /* context 1: its runs at scale-outs 2, 6, 12 */
    double x[3], t[3];
    size_t k = 0, r0 = 0;
    for (size_t r = 0; r < g_ds->n_rows && k < 3; r++) {
        if (g_ds->context[r] != 1) continue;
        if (k == 0) r0 = r;
        double s = g_ds->scale_out[r];
        if ((s == 2 || s == 6 || s == 12) && (k == 0 || x[k - 1] != s)) {
            x[k] = s;
            t[k] = g_ds->runtime_s[r];
            k++;
        }
    }
    ck_assert_uint_eq(k, 3);
    bl_prop_value ctx[16];
    char bufs[16][64];
    size_t n = row_context(r0, ctx, bufs);
    double before = mean_abs_err(p, 1);
    bl_tune_opts to;
    bl_tune_opts_init(&to);
    ck_assert_int_eq(to.max_epochs, 2500);
    ck_assert_int_eq(to.stop_cv, 1);
    to.max_epochs = 300;
    if (bl_predictor_finetune(p, ctx, n, x, t, 3, &to, &q, &err) != BL_OK) ck_abort_msg("finetune: %s", err.message);
    bl_model_info mi;
    ck_assert_int_eq(bl_predictor_info(q, &mi), BL_OK);
    ck_assert_int_eq(mi.finetune_runs, 3);
    ck_assert_int_ge(mi.finetune_epochs, 0); /* cross-validation may keep the pre-trained state */
    double after = mean_abs_err(q, 1);
    ck_assert_double_eq(mean_abs_err(p, 1), before); /* the base is unchanged */
    ck_assert_msg(after < before, "fine-tuning did not help: %g -> %g", before, after);

    /* errors: an optional property missing, a bad runtime, no runs, bad options */
    bl_predictor *z = NULL;
    ck_assert_int_eq(bl_predictor_finetune(p, ctx, 5, x, t, 3, NULL, &z, &err), BL_EINVAL);
    /* job_type is the schema's constant (filled); memory and slots are named together */
    ck_assert_msg(strstr(err.message, "2 optional properties are missing: 'memory' (seen in training: ") &&
                  strstr(err.message, "'slots' (seen in training: ") &&
                  strstr(err.message, "fine-tuning needs every property"), "%s", err.message);
    double tb[3] = { t[0], -1, t[2] };
    ck_assert_int_eq(bl_predictor_finetune(p, ctx, n, x, tb, 3, NULL, &z, &err), BL_ERANGE);
    ck_assert_int_eq(bl_predictor_finetune(p, ctx, n, x, t, 0, NULL, &z, &err), BL_EINVAL);
    /* scale-outs are numbers of machines */
    double xf[3] = { x[0], 2.5, x[2] }, xb[3] = { x[0], x[1], 2e6 };
    ck_assert_int_eq(bl_predictor_finetune(p, ctx, n, xf, t, 3, NULL, &z, &err), BL_ERANGE);
    ck_assert_str_eq(err.message, "run 1: scale-out 2.5 is not a number of machines (a whole number from 1 to 1000000)");
    ck_assert_int_eq(bl_predictor_finetune(p, ctx, n, xb, t, 3, NULL, &z, &err), BL_ERANGE);
    ck_assert_ptr_null(z);
    to.stop_cv = 2;
    ck_assert_int_eq(bl_predictor_finetune(p, ctx, n, x, t, 3, &to, &z, &err), BL_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.message, "stop_cv"));
    to.stop_cv = 0; /* the stopping rule alone also fine-tunes */
    ck_assert_int_eq(bl_predictor_finetune(p, ctx, n, x, t, 3, &to, &z, &err), BL_OK);
    ck_assert_msg(mean_abs_err(z, 1) < before, "fine-tuning with the rule did not help");
    bl_predictor_free(z);
    z = NULL;
    to.max_epochs = 0;
    ck_assert_int_eq(bl_predictor_finetune(p, ctx, n, x, t, 3, &to, &z, &err), BL_EINVAL);
    ck_assert_ptr_null(z);
    bl_predictor_free(q);
    bl_predictor_free(p);
}
END_TEST

/* Property names may hold blanks (also at the end), '#', quotes and backslashes, quoted in a schema.
 * Fine-tuning on values writes a schema and a table of its own; it once named the properties unquoted
 * there (and used them as column names), so the first such name made it fail. It must equal
 * fine-tuning on the same runs read from a file. A value that starts with a quote is written quoted in
 * that table (the reader would take the quote for a quoted field's), as a data file quotes it. */
START_TEST(test_finetune_values_odd_property_names) {
    char dir[4200], schema[4300], data[4300], runs[4300], model[4300];
    snprintf(dir, sizeof dir, "%s/odd-names", bl_test_tmpdir());
    mkdir(dir, 0777);
    snprintf(schema, sizeof schema, "%s/odd.schema", dir);
    snprintf(data, sizeof data, "%s/odd.tsv", dir);
    snprintf(runs, sizeof runs, "%s/runs.tsv", dir);
    snprintf(model, sizeof model, "%s/odd.h5", dir);
    FILE *f = fopen(schema, "w");
    ck_assert_ptr_nonnull(f);
    fputs("scale_out x\nruntime t s\n"
          "property \"x_with space\" essential text column m\n"
          "property \"x_a#b \\\"q\\\" \\\\\" essential number column n\n"
          "property \"x_trail \" optional text column o\n", f);
    fclose(f);
    static const char head[] = "x\tt\tm\tn\to\n";
    f = fopen(data, "w");
    ck_assert_ptr_nonnull(f);
    fputs(head, f);
    for (int c = 0; c < 3; c++)
        for (int x = 1; x <= 8; x *= 2) fprintf(f, "%d\t%g\tm%d\t%d\tz\n", x, 20.0 + 40.0 * (c + 1) / x, c, 10 * c);
    fclose(f);
    f = fopen(runs, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "%s2\t55\t\"\"\"new\"\" one\"\t7\tw\n4\t31\t\"\"\"new\"\" one\"\t7\tw\n8\t19.5\t\"\"\"new\"\" one\"\t7\tw\n",
            head);
    fclose(f);

    bl_error err;
    bl_dataset *ds = NULL;
    ck_assert_msg(bl_dataset_load(data, schema, 0, NULL, &ds, &err) == BL_OK, "%s", err.message);
    char *text = NULL;
    size_t len = 0;
    f = fopen(schema, "r");
    ck_assert_int_eq(getdelim(&text, &len, '\0', f) > 0, 1);
    fclose(f);
    bl_pretrain_opts o;
    bl_pretrain_opts_default(&o);
    o.calibrate = 0; /* intervals are not what this checks (test_api and the calibration tests do) */
    o.members = 1;
    o.trials = 1;
    o.epochs = 3;
    o.grace = 3;
    bl_model *m = NULL;
    ck_assert_msg(bl_pretrain(ds, text, &o, &m, &err) == BL_OK, "%s", err.message);
    ck_assert_msg(bl_model_save(m, model, &err) == BL_OK, "%s", err.message);
    bl_predictor *p = NULL, *a = NULL, *b = NULL;
    ck_assert_msg(bl_predictor_load(model, NULL, &p, &err) == BL_OK, "%s", err.message);
    const bl_prop_value ctx[3] = {{"x_with space", "\"new\" one"}, {"x_a#b \"q\" \\", "7"}, {"x_trail ", "w"}};
    const double xs[3] = {2, 4, 8}, ts[3] = {55, 31, 19.5};
    bl_tune_opts to;
    bl_tune_opts_init(&to);
    to.max_epochs = 10;
    ck_assert_msg(bl_predictor_finetune(p, ctx, 3, xs, ts, 3, &to, &a, &err) == BL_OK, "%s", err.message);
    ck_assert_msg(bl_predictor_finetune_file(p, runs, NULL, &to, &b, &err) == BL_OK, "%s", err.message);
    double ya, yb, x3 = 3;
    ck_assert_int_eq(bl_predict(a, ctx, 3, &x3, 1, &ya, &err), BL_OK);
    ck_assert_int_eq(bl_predict(b, ctx, 3, &x3, 1, &yb, &err), BL_OK);
    ck_assert_msg(memcmp(&ya, &yb, sizeof ya) == 0, "%.17g on values, %.17g from the file", ya, yb);
    bl_predictor_free(a);
    bl_predictor_free(b);
    bl_predictor_free(p);
    bl_model_free(m);
    bl_dataset_free(ds);
    free(text);
}
END_TEST

START_TEST(test_finetune_file_and_save) {
    bl_error err;
    bl_predictor *p = load(), *q = NULL, *q2 = NULL, *back = NULL;
    bl_tune_opts to;
    bl_tune_opts_init(&to);
    to.max_epochs = 200;
    if (bl_predictor_finetune_file(p, g_runs, NULL, &to, &q, &err) != BL_OK) ck_abort_msg("finetune: %s", err.message);
    ck_assert_int_eq(bl_predictor_finetune_file(p, g_runs, g_schema, &to, &q2, &err), BL_OK);
    bl_model_info mi;
    bl_predictor_info(q, &mi);
    ck_assert_int_eq(mi.finetune_runs, 3);
    /* the stored schema and the explicit one give the same model */
    double x[4] = { 2, 5, 9, 12 }, a[4], b[4], c[4];
    bl_prop_value ctx[16];
    char bufs[16][64];
    size_t n = row_context(0, ctx, bufs);
    ck_assert_int_eq(bl_predict(q, ctx, n, x, 4, a, &err), BL_OK);
    ck_assert_int_eq(bl_predict(q2, ctx, n, x, 4, b, &err), BL_OK);
    for (int i = 0; i < 4; i++) ck_assert_double_eq(a[i], b[i]);
    /* save under a new name; load gives identical predictions */
    char path[4200];
    snprintf(path, sizeof path, "%s/tuned.h5", bl_test_tmpdir());
    ck_assert_int_eq(bl_predictor_save(q, path, "synth-ctx0", &err), BL_OK);
    bl_model_file *f = NULL;
    ck_assert_int_eq(bl_model_file_open(path, &f, &err), BL_OK);
    ck_assert_uint_eq(bl_model_file_count(f), 1);
    ck_assert_int_eq(bl_model_file_load(f, "synth-ctx0", &back, &err), BL_OK);
    ck_assert_str_eq(bl_predictor_name(back), "synth-ctx0");
    ck_assert_int_eq(bl_predict(back, ctx, n, x, 4, c, &err), BL_OK);
    for (int i = 0; i < 4; i++) ck_assert_double_eq(a[i], c[i]);
    bl_model_file_free(f);
    /* bad inputs */
    bl_predictor *z = NULL;
    ck_assert_int_ne(bl_predictor_finetune_file(p, "/nonexistent/runs.tsv", NULL, NULL, &z, &err), BL_OK);
    ck_assert_ptr_nonnull(strstr(err.message, "runs.tsv"));
    ck_assert_int_ne(bl_predictor_finetune_file(p, g_runs, "/nonexistent/x.schema", NULL, &z, &err), BL_OK);
    ck_assert_ptr_null(z);
    bl_predictor_free(back);
    bl_predictor_free(q2);
    bl_predictor_free(q);
    bl_predictor_free(p);
}
END_TEST

/* Writes the synthetic schema with extra appended (a line or "") into the tmp dir; returns the path. */
static const char *schema_with(const char *file, const char *extra, const char *from, const char *to) {
    static char path[4200];
    snprintf(path, sizeof path, "%s/%s", bl_test_tmpdir(), file);
    const char *text = bl_synth_schema_text();
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    const char *at = from ? strstr(text, from) : NULL;
    if (at) {
        fwrite(text, 1, (size_t)(at - text), f);
        fputs(to, f);
        fputs(at + strlen(from), f);
    } else {
        fputs(text, f);
    }
    fputs(extra, f);
    fclose(f);
    return path;
}

/* The two steps of bl_predictor_finetune_file (api_internal.h): the runs first, so a caller can see
 * how many contexts they span; the same fine-tuned model as the one-call form. */
START_TEST(test_load_runs_contexts) {
    bl_error err;
    bl_predictor *p = load(), *q = NULL, *r = NULL;
    bl_dataset *runs = NULL;
    ck_assert_int_eq(bl_predictor_load_runs(p, g_tsv, NULL, &runs, &err), BL_OK);
    ck_assert_uint_eq(runs->n_contexts, 8);
    char spread[512];
    ck_assert_uint_gt(bl_dataset_context_spread(runs, spread, sizeof spread), 0);
    ck_assert_ptr_nonnull(strstr(spread, "machine_type: "));
    bl_dataset_free(runs);
    ck_assert_int_eq(bl_predictor_load_runs(p, g_runs, g_schema, &runs, &err), BL_OK);
    ck_assert_uint_eq(runs->n_contexts, 1);
    ck_assert_uint_eq(runs->n_rows, 3);
    bl_tune_opts to;
    bl_tune_opts_init(&to);
    to.max_epochs = 100;
    ck_assert_int_eq(bl_predictor_finetune_runs(p, runs, &to, &q, &err), BL_OK);
    ck_assert_int_eq(bl_predictor_finetune_file(p, g_runs, g_schema, &to, &r, &err), BL_OK);
    double x[3] = { 2, 7, 12 }, a[3], b[3];
    bl_prop_value ctx[16];
    char bufs[16][64];
    size_t n = row_context(0, ctx, bufs);
    ck_assert_int_eq(bl_predict(q, ctx, n, x, 3, a, &err), BL_OK);
    ck_assert_int_eq(bl_predict(r, ctx, n, x, 3, b, &err), BL_OK);
    for (int i = 0; i < 3; i++) ck_assert_double_eq(a[i], b[i]);
    /* the runs' context compared with a given one */
    ck_assert_uint_eq(bl_dataset_context_diff(runs, 0, ctx, n, spread, sizeof spread), 0);
    bl_dataset_free(runs);
    /* the library stays permissive: runs of 8 contexts fine-tune (a scheduler may mean to) */
    bl_predictor_free(q);
    q = NULL;
    to.max_epochs = 20;
    ck_assert_int_eq(bl_predictor_finetune_file(p, g_tsv, NULL, &to, &q, &err), BL_OK);
    bl_model_info mi;
    bl_predictor_info(q, &mi);
    ck_assert_int_eq(mi.finetune_runs, (long long)g_ds->n_rows);
    bl_predictor_free(q);
    bl_predictor_free(r);
    bl_predictor_free(p);
}
END_TEST

/* Runs whose schema describes other properties than the model's: an error naming schema, line and
 * property, not a silent fine-tuning on the properties the two share. */
START_TEST(test_runs_schema_must_match) {
    bl_error err;
    bl_predictor *p = load(), *q = NULL;
    size_t lines = 0;
    for (const char *c = bl_synth_schema_text(); *c; c++) lines += *c == '\n';
    const char *path = schema_with("extra.schema", "property x_extra essential text const \"foo\"\n", NULL, NULL);
    char want[4400];
    snprintf(want, sizeof want, "%s:%zu:10: property 'x_extra' is not a property of model 'synth'", path, lines + 1);
    ck_assert_int_eq(bl_predictor_finetune_file(p, g_runs, path, NULL, &q, &err), BL_EFORMAT);
    ck_assert_ptr_null(q);
    ck_assert_msg(strncmp(err.message, want, strlen(want)) == 0, "%s", err.message);
    path = schema_with("optional.schema", "", "property job_type             optional", "property job_type essential");
    ck_assert_int_eq(bl_predictor_finetune_file(p, g_runs, path, NULL, &q, &err), BL_EFORMAT);
    ck_assert_ptr_nonnull(strstr(err.message, "property 'job_type' is essential here but optional in model 'synth'"));
    path = schema_with("totals.schema", "", "cluster_totals slots memory", "cluster_totals slots");
    ck_assert_int_eq(bl_predictor_finetune_file(p, g_runs, path, NULL, &q, &err), BL_EFORMAT);
    ck_assert_ptr_nonnull(strstr(err.message, "property 'memory' is not a cluster total here but one in model 'synth'"));
    path = schema_with("same.schema", "", NULL, NULL);
    ck_assert_int_eq(bl_predictor_finetune_file(p, g_runs, path, NULL, &q, &err), BL_OK);
    bl_predictor_free(q);
    bl_predictor_free(p);
}
END_TEST

/* Two models in one file: the fine-tuned one saved next to its base. */
START_TEST(test_multi_model_file) {
    bl_error err;
    bl_predictor *p = load(), *back = NULL;
    char path[4200];
    snprintf(path, sizeof path, "%s/two.h5", bl_test_tmpdir());
    ck_assert_int_eq(bl_predictor_save(p, path, NULL, &err), BL_OK);
    if (bl_predictor_save(p, path, "copy", &err) != BL_OK) ck_abort_msg("second save: %s", err.message);
    bl_model_file *f = NULL;
    ck_assert_int_eq(bl_model_file_open(path, &f, &err), BL_OK);
    ck_assert_uint_eq(bl_model_file_count(f), 2);
    ck_assert_str_eq(bl_model_file_name(f, 0), "synth");
    ck_assert_str_eq(bl_model_file_name(f, 1), "copy");
    ck_assert_int_eq(bl_model_file_load(f, NULL, &back, &err), BL_EINVAL); /* which one? */
    ck_assert_int_eq(bl_model_file_load(f, "copy", &back, &err), BL_OK);
    double x = 7, a, b;
    bl_prop_value ctx[16];
    char bufs[16][64];
    size_t n = row_context(0, ctx, bufs);
    ck_assert_int_eq(bl_predict(p, ctx, n, &x, 1, &a, &err), BL_OK);
    ck_assert_int_eq(bl_predict(back, ctx, n, &x, 1, &b, &err), BL_OK);
    ck_assert_double_eq(a, b);
    bl_model_file_free(f);
    bl_predictor_free(back);
    bl_predictor_free(p);
}
END_TEST

typedef struct thr_arg {
    const bl_predictor *p;
    const bl_prop_value *ctx;
    size_t n_ctx;
    const double *want;
    int bad;
} thr_arg;

static void *thr_main(void *v) {
    thr_arg *a = v;
    double t[11];
    bl_error err;
    for (int it = 0; it < 300; it++) {
        if (bl_predict_range(a->p, a->ctx, a->n_ctx, 2, 12, t, &err) != BL_OK) { a->bad = 1; break; }
        if (memcmp(t, a->want, sizeof t) != 0) { a->bad = 1; break; }
    }
    return NULL;
}

START_TEST(test_threads) {
    bl_error err;
    bl_predictor *p = load();
    bl_prop_value ctx[16];
    char bufs[16][64];
    size_t n = row_context(3, ctx, bufs);
    double want[11];
    ck_assert_int_eq(bl_predict_range(p, ctx, n, 2, 12, want, &err), BL_OK);
    pthread_t th[4];
    thr_arg a[4];
    for (int i = 0; i < 4; i++) {
        a[i] = (thr_arg){ p, ctx, n, want, 0 };
        ck_assert_int_eq(pthread_create(&th[i], NULL, thr_main, &a[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        ck_assert_int_eq(a[i].bad, 0);
    }
    bl_predictor_free(p);
}
END_TEST

/* The example scheduler, built against the shared library, runs and decides. */
static size_t count_str(const char *hay, const char *needle) {
    size_t n = 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle)) n++;
    return n;
}

START_TEST(test_example_program) {
    const char *root = getenv("BELLAMY_BUILD_ROOT");
    ck_assert_ptr_nonnull(root);
    bl_prop_value ctx[16];
    char bufs[16][64];
    size_t n = row_context(0, ctx, bufs);
    char cmd[8192];
    int len = snprintf(cmd, sizeof cmd, "'%s/example_scheduler' '%s' synth", root, g_model);
    for (size_t i = 0; i < n; i++) len += snprintf(cmd + len, sizeof cmd - (size_t)len, " '%s=%s'", ctx[i].name, ctx[i].value);
    snprintf(cmd + len, sizeof cmd - (size_t)len, " run=2:%g run=12:%g 2>&1", g_ds->runtime_s[0], g_ds->runtime_s[15]);
    FILE *f = popen(cmd, "r");
    ck_assert_ptr_nonnull(f);
    char out[16384];
    size_t got = fread(out, 1, sizeof out - 1, f);
    out[got] = '\0';
    int status = pclose(f);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "example failed: %s", out);
    ck_assert_ptr_nonnull(strstr(out, "holds 1 model(s): synth"));
    ck_assert_ptr_nonnull(strstr(out, "fine-tuned on 2 run(s)"));
    ck_assert_ptr_nonnull(strstr(out, "fastest: "));
    ck_assert_ptr_nonnull(strstr(out, "deadline "));
    ck_assert_ptr_nonnull(strstr(out, "cheapest: "));
    ck_assert_ptr_null(strstr(out, "warning"));
    /* a scheduler sees the warnings: a machine type the model never saw, the constants left out */
    snprintf(cmd, sizeof cmd, "'%s/example_scheduler' '%s' synth machine_type=z9.huge job_args=5 data_size_MB=5000 "
             "memory=16000 slots=8 2>&1", root, g_model);
    f = popen(cmd, "r");
    got = fread(out, 1, sizeof out - 1, f);
    out[got] = '\0';
    status = pclose(f);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s", out);
    ck_assert_msg(count_str(out, "warning (unseen_value): machine_type 'z9.huge' is a value no pre-training row had") == 2,
                  "%s", out);
    /* a bad context is reported, not crashed on */
    snprintf(cmd, sizeof cmd, "'%s/example_scheduler' '%s' synth colour=blue 2>&1", root, g_model);
    f = popen(cmd, "r");
    got = fread(out, 1, sizeof out - 1, f);
    out[got] = '\0';
    status = pclose(f);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 1);
    ck_assert_ptr_nonnull(strstr(out, "unknown property 'colour'"));
}
END_TEST

/* Encoder options travel in the model file: a model that encodes cluster totals per machine (_i = 0),
 * numbers by their log magnitude (_i = 1), over fitted bounds (_i = 2) or as bits and log magnitude in
 * alternate members (_i = 3, three members), saved and loaded, predicts through the public API what
 * the internal model predicts on a data set loaded the same way (a file that lost the setting would
 * encode the request differently and fail). */
START_TEST(test_totals_per_machine_model) {
    bl_error err;
    bl_encode_settings es;
    bl_encode_settings_default(&es);
    if (_i == 0) es.totals_per_machine = 1;
    else es.numbers = _i == 1 ? BL_ENC_NUMBERS_LOG : _i == 2 ? BL_ENC_NUMBERS_RANGE : BL_ENC_NUMBERS_BOTH;
    bl_dataset *ds = NULL;
    ck_assert_int_eq(bl_dataset_load(g_tsv, g_schema, 0, &es, &ds, &err), BL_OK);
    bl_pretrain_opts o;
    bl_pretrain_opts_default(&o);
    o.calibrate = 0; /* intervals are not what this checks (test_api and the calibration tests do) */
    o.trials = 1;
    o.epochs = 20;
    o.grace = 20;
    bl_model *m = NULL;
    ck_assert_int_eq(bl_pretrain(ds, bl_synth_schema_text(), &o, &m, &err), BL_OK);
    char path[4200];
    snprintf(path, sizeof path, "%s/encoder-%d.h5", bl_test_tmpdir(), _i);
    ck_assert_int_eq(bl_model_save(m, path, &err), BL_OK);
    bl_model *back = NULL; /* the settings themselves came back (a barely trained network may not show it) */
    ck_assert_int_eq(bl_model_load(path, NULL, &back, &err), BL_OK);
    ck_assert_uint_eq(back->enc.totals_per_machine, es.totals_per_machine);
    ck_assert_uint_eq(back->enc.numbers, es.numbers);
    ck_assert((back->num_range != NULL) == (es.numbers == BL_ENC_NUMBERS_RANGE));
    if (back->num_range) ck_assert_mem_eq(back->num_range, m->num_range, m->n_props * 2 * sizeof(double));
    bl_model_free(back);
    bl_predictor *p = NULL;
    ck_assert_int_eq(bl_predictor_load(path, NULL, &p, &err), BL_OK);
    bl_prop_value ctx[16];
    char bufs[16][64];
    for (size_t r = 0; r < ds->n_rows; r += 7) {
        size_t n = row_context(r, ctx, bufs);
        double x = ds->scale_out[r], got, want, c[BL_BNET_DIM_MAX];
        ck_assert_msg(bl_predict(p, ctx, n, &x, 1, &got, &err) == BL_OK, "%s", err.message);
        ck_assert_int_eq(bl_model_context_row(m, ds, r, c, &err), BL_OK);
        ck_assert_int_eq(bl_model_predict(m, c, &x, 1, &want, &err), BL_OK);
        ck_assert_double_eq_tol(got, want, 1e-9 * fabs(want));
    }
    bl_predictor_free(p);
    bl_model_free(m);
    bl_dataset_free(ds);
}
END_TEST

/* A model written by 0.2 may store a schema that 0.3's column checks refuse (here: a cluster total
 * listed twice, which 0.2 allowed). It must still load and keep its cluster totals — the same
 * predictions as with the clean schema — and a stored schema that cannot be read at all is an
 * error, never a predictor that silently takes per-machine values as totals. */
START_TEST(test_stored_schema_read_leniently) {
    bl_error err;
    bl_pretrain_opts o;
    bl_pretrain_opts_default(&o);
    o.calibrate = 0; /* intervals are not what this checks (test_api and the calibration tests do) */
    o.trials = 1;
    o.epochs = 20;
    o.grace = 20;
    o.members = 1;
    bl_model *m = NULL;
    ck_assert_int_eq(bl_pretrain(g_ds, bl_synth_schema_text(), &o, &m, &err), BL_OK);
    const char *variants[3] = {NULL, "cluster_totals memory\n", "no schema at all\n"};
    double first[12];
    for (int v = 0; v < 3; v++) {
        if (variants[v]) {
            size_t n = strlen(bl_synth_schema_text()) + strlen(variants[v]) + 1;
            char *t = malloc(n);
            ck_assert_ptr_nonnull(t);
            snprintf(t, n, "%s%s", v == 2 ? "" : bl_synth_schema_text(), variants[v]);
            free(m->schema_text);
            m->schema_text = t;
        }
        char path[4200];
        snprintf(path, sizeof path, "%s/stored-%d.h5", bl_test_tmpdir(), v);
        ck_assert_int_eq(bl_model_save(m, path, &err), BL_OK);
        bl_predictor *p = NULL;
        if (v == 2) {
            ck_assert_int_ne(bl_predictor_load(path, NULL, &p, &err), BL_OK);
            ck_assert_ptr_null(p);
            ck_assert_msg(strstr(err.message, "schema stored in the model"), "%s", err.message);
            ck_assert_msg(strncmp(err.message, path, strlen(path)) == 0, "the file is not named: %s", err.message);
            continue;
        }
        ck_assert_msg(bl_predictor_load(path, NULL, &p, &err) == BL_OK, "%s", err.message);
        bl_prop_value ctx[16];
        char bufs[16][64];
        size_t n = row_context(0, ctx, bufs);
        double x[12], y[12];
        for (int i = 0; i < 12; i++) x[i] = 1 + i;
        ck_assert_msg(bl_predict(p, ctx, n, x, 12, y, &err) == BL_OK, "%s", err.message);
        if (v == 0) memcpy(first, y, sizeof y);
        else ck_assert_int_eq(memcmp(first, y, sizeof y), 0);
        bl_predictor_free(p);
    }
    bl_model_free(m);
}
END_TEST

/* The user's context m5.2xlarge/q3/200 (held out of pre-training), fully given. */
static const bl_prop_value USER_CTX[] = { { "machine_type", "m5.2xlarge" }, { "job_args", "q3" },
                                          { "data_size_MB", "200" }, { "environment", "private yarn" },
                                          { "job_type", "etl-spark" } };

static bl_predictor *load_user(void) {
    bl_error err;
    bl_predictor *p = NULL;
    if (bl_predictor_load(g_user, NULL, &p, &err) != BL_OK) ck_abort_msg("load: %s", err.message);
    return p;
}

static int has_warning(const bl_warnings *w, bl_warning_kind kind, const char *prop, const char *text) {
    for (size_t i = 0; i < bl_warnings_count(w); i++) {
        const char *wp = bl_warnings_property(w, i);
        if (bl_warnings_kind(w, i) == kind && (!prop ? !wp : wp && strcmp(wp, prop) == 0) &&
            (!text || strstr(bl_warnings_message(w, i), text)))
            return 1;
    }
    return 0;
}

/* Issue 23's reproducer: an Amdahl-like job of 12 contexts × 7 scale-outs (2..16), pre-trained as two
 * members × 2 trials × 200 epochs without one context, fine-tuned on its runs at 2, 6 and 12 machines.
 * Asked for 1..100000 machines (where the network's linear output once fell through 0 at 159 and the
 * chooser took 158): every runtime > 0, intervals that grow outside the runs and are unbounded beyond
 * 4 × the support, and no choice there; a confident choice meets its target by the upper bound; the
 * context it was fine-tuned for is the only one without a warning. */
START_TEST(test_reproducer_no_impossible_numbers) {
    bl_error err;
    char dir[4200], data[4300], schema[4300];
    snprintf(dir, sizeof dir, "%s", bl_test_tmpdir());
    snprintf(data, sizeof data, "%s/amdahl.tsv", dir);
    snprintf(schema, sizeof schema, "%s/amdahl.schema", dir);
    FILE *f = fopen(schema, "w");
    fputs("bellamy-schema 1\nscale_out nodes\nruntime runtime_s s\nproperty machine_type essential text column machine\n"
          "property job_args essential text column query\nproperty data_size_MB essential number column input_gb\n", f);
    fclose(f);
    f = fopen(data, "w");
    fputs("nodes\tmachine\tquery\tinput_gb\truntime_s\n", f);
    const int xs[7] = {2, 4, 6, 8, 10, 12, 16};
    unsigned noise = 777;
    double held_t[7];
    for (int a = 0; a < 2; a++)
        for (int q = 0; q < 3; q++)
            for (int g = 0; g < 2; g++)
                for (int i = 0; i < 7; i++) {
                    noise = noise * 1103515245u + 12345u;
                    const double serial = 30 + 10 * q, work = (1 + q) * (g ? 400 : 100) / (a ? 1.5 : 1.0);
                    const double t = (serial + work / xs[i]) * (1 + 0.02 * ((double)(noise >> 16 & 1023) / 1023 - 0.5));
                    const int held = a == 1 && q == 1 && g == 1;
                    if (held) held_t[i] = t;
                    else fprintf(f, "%d\t%s\tq%d\t%d\t%.2f\n", xs[i], a ? "m5.2xlarge" : "c5.xlarge", q + 1, g ? 400 : 100, t);
                }
    fclose(f);
    bl_dataset *ds = NULL;
    ck_assert_msg(bl_dataset_load(data, schema, 0, NULL, &ds, &err) == BL_OK, "%s", err.message);
    bl_pretrain_opts o;
    bl_pretrain_opts_default(&o);
    o.members = 2;
    o.trials = 2;
    o.epochs = 200;
    o.grace = 100;
    o.threads = 2;
    o.calib_draws = 2; /* fewer draws than the default's 4 (the suite's time); the protocol is the default */
    bl_model *m = NULL;
    ck_assert_msg(bl_pretrain(ds, NULL, &o, &m, &err) == BL_OK, "%s", err.message);
    bl_dataset_free(ds);
    ck_assert(m->calib.known);
    bl_predictor *base = NULL, *p = NULL;
    ck_assert_int_eq(bl_predictor_wrap(m, &base, &err), BL_OK);
    const bl_prop_value ctx[3] = {{"machine_type", "m5.2xlarge"}, {"job_args", "q2"}, {"data_size_MB", "400"}};
    const double rx[3] = {2, 6, 12}, ry[3] = {held_t[0], held_t[2], held_t[5]};
    ck_assert_msg(bl_predictor_finetune(base, ctx, 3, rx, ry, 3, NULL, &p, &err) == BL_OK, "%s", err.message);
    enum { N = 100000 };
    double *x = malloc(N * sizeof *x), *t = malloc(N * sizeof *t), *lo = malloc(N * sizeof *lo),
           *hi = malloc(N * sizeof *hi);
    for (int i = 0; i < N; i++) x[i] = 1 + i;
    for (int which = 0; which < 2; which++) {
        const bl_predictor *q = which ? p : base;
        ck_assert_msg(bl_predict_interval(q, ctx, 3, x, N, 0.9, lo, t, hi, NULL, NULL, &err) == BL_OK, "%s", err.message);
        for (int i = 0; i < N; i++) {
            ck_assert_msg(t[i] > 0 && isfinite(t[i]), "%s: scale-out %g predicted %g", which ? "tuned" : "base", x[i], t[i]);
            ck_assert(lo[i] >= 0 && lo[i] <= t[i] && !(hi[i] < t[i]));
            if (x[i] > 4 * 16) ck_assert_msg(isinf(hi[i]) && lo[i] == 0, "scale-out %g: [%g, %g]", x[i], lo[i], hi[i]);
        }
        /* bl_predict says the same, and the point stays positive where it once crossed 0 */
        double t158, x158 = 158;
        ck_assert_int_eq(bl_predict(q, ctx, 3, &x158, 1, &t158, &err), BL_OK);
        ck_assert(t158 == t[157] && t158 > 0);
    }
    /* the fine-tuned intervals: bounded and growing with the distance from the runs (2..12) */
    ck_assert_msg(isfinite(hi[5]) && isfinite(hi[15]), "12: %g, 16: %g", hi[5], hi[15]);
    ck_assert_msg(log(hi[15] / t[15]) > log(hi[7] / t[7]), "16 machines %g vs 8 machines %g", hi[15] / t[15], hi[7] / t[7]);
    /* the measured runtimes at the four other scale-outs mostly lie inside */
    int inside = 0;
    for (int i = 0; i < 7; i++)
        if (xs[i] != 2 && xs[i] != 6 && xs[i] != 12) inside += held_t[i] >= lo[xs[i] - 1] && held_t[i] <= hi[xs[i] - 1];
    ck_assert_msg(inside >= 3, "%d of the 4 other runs inside their 0.9 intervals", inside);
    /* choices: never beyond the support, the fastest among the rest; a confident one by its upper bound */
    bl_choice ch;
    ck_assert_int_eq(bl_choose_scale_out(p, ctx, 3, x, 1000, NULL, &ch, &err), BL_OK);
    ck_assert_msg(ch.scale_out <= 64, "chose %g: %s", ch.scale_out, ch.reason);
    ck_assert_msg(ch.left_out >= 1000 - 64, "%zu left out", ch.left_out);
    bl_choice_opts co;
    bl_choice_opts_init(&co);
    co.goal = BL_GOAL_SMALLEST;
    co.target_runtime_s = 2 * held_t[5];
    co.confidence = 0.9;
    ck_assert_int_eq(bl_choose_scale_out(p, ctx, 3, x, 100, &co, &ch, &err), BL_OK);
    ck_assert_msg(!ch.fallback, "%s", ch.reason); /* twice the runtime at 12 machines is reachable with confidence */
    ck_assert(ch.met_target && ch.hi_runtime_s <= co.target_runtime_s && ch.coverage == 0.9);
    ck_assert(ch.runtime_s == t[(size_t)ch.scale_out - 1]);
    for (size_t i = 0; i + 1 < (size_t)ch.scale_out; i++) /* the smallest: no fewer machines' bound meets it */
        ck_assert_msg(!(hi[i] <= co.target_runtime_s), "%zu machines: %g <= %g", i + 1, hi[i], co.target_runtime_s);
    /* confidence needs a target; coverage outside (0, 1) */
    co.target_runtime_s = 0;
    ck_assert_int_eq(bl_choose_scale_out(p, ctx, 3, x, 10, &co, &ch, &err), BL_EINVAL);
    ck_assert_int_eq(bl_predict_interval(p, ctx, 3, x, 10, 1.0, lo, t, hi, NULL, NULL, &err), BL_EINVAL);
    ck_assert_int_eq(bl_predict_interval(p, ctx, 3, x, 10, 0, lo, t, hi, NULL, NULL, &err), BL_EINVAL);
    /* another context than the fine-tuned one: a warning naming what differs, and a wider interval */
    bl_warnings *w = NULL;
    ck_assert_int_eq(bl_warnings_new(&w, &err), BL_OK);
    double own_lo, own_t, own_hi, x8 = 8;
    ck_assert_int_eq(bl_predict_interval(p, ctx, 3, &x8, 1, 0.9, &own_lo, &own_t, &own_hi, NULL, w, &err), BL_OK);
    ck_assert_uint_eq(bl_warnings_count(w), 0);
    const bl_prop_value other[3] = {{"machine_type", "c5.xlarge"}, {"job_args", "q2"}, {"data_size_MB", "100"}};
    double o_lo, o_t, o_hi;
    ck_assert_int_eq(bl_predict_interval(p, other, 3, &x8, 1, 0.9, &o_lo, &o_t, &o_hi, NULL, w, &err), BL_OK);
    ck_assert_uint_eq(bl_warnings_count(w), 1);
    ck_assert_int_eq(bl_warnings_kind(w, 0), BL_WARN_CONTEXT);
    ck_assert_msg(strstr(bl_warnings_message(w, 0), "machine_type c5.xlarge (runs: m5.2xlarge), data_size_MB 100 (runs: 400)"),
                  "%s", bl_warnings_message(w, 0));
    ck_assert_str_eq(bl_warning_kind_name(BL_WARN_CONTEXT), "context");
    ck_assert_msg(!(log(o_hi / o_t) <= log(own_hi / own_t)), "other %g, own %g", o_hi / o_t, own_hi / own_t);
    /* the fit to its runs is recorded */
    size_t nf = 0;
    double fx, fy, fp, fq;
    ck_assert_int_eq(bl_predictor_finetune_fit(p, 0, &fx, &fy, &fp, &fq, &nf), BL_OK);
    ck_assert_uint_eq(nf, 3);
    ck_assert(fx == 2 && fy == ry[0] && fp > 0 && fq > 0);
    ck_assert_int_eq(bl_predictor_finetune_fit(p, 3, &fx, &fy, &fp, &fq, NULL), BL_ERANGE);
    ck_assert_int_eq(bl_predictor_finetune_fit(base, 0, &fx, &fy, &fp, &fq, NULL), BL_ENOTFOUND);
    /* runs that disagree wildly: every interval inside the support wider than a factor 100. Without a
     * confidence the choice still rests on the predictions, saying so (it failed: "no candidate can be
     * chosen"); with one, none can be chosen; beyond the support never */
    p->m->tuned.disagreement = 1e6;
    int why[12];
    ck_assert_int_eq(bl_predict_interval(p, ctx, 3, x, 12, 0.9, lo, t, hi, why, NULL, &err), BL_OK);
    for (int i = 0; i < 12; i++) ck_assert_msg(why[i] == BL_INTERVAL_TOO_WIDE && isinf(hi[i]), "%d: %d", i, why[i]);
    ck_assert_msg(bl_choose_scale_out(p, ctx, 3, x, 1000, NULL, &ch, &err) == BL_OK, "%s", err.message);
    ck_assert_msg(ch.scale_out <= 64 && strstr(ch.reason, "wider than a factor 100") && isinf(ch.hi_runtime_s), "%g: %s",
                  ch.scale_out, ch.reason);
    co.target_runtime_s = 1e9;
    ck_assert_int_eq(bl_choose_scale_out(p, ctx, 3, x, 12, &co, &ch, &err), BL_ERANGE);
    ck_assert_msg(strstr(err.message, "no candidate can be chosen"), "%s", err.message);
    bl_warnings_free(w);
    free(x);
    free(t);
    free(lo);
    free(hi);
    bl_predictor_free(p);
    bl_predictor_free(base);
}
END_TEST

/* A model without calibration (an older file) has no intervals: refused naming the fix, never made up;
 * it still chooses, never beyond 4 × its support, and refuses a confidence. Calibration survives a save
 * and a load bit for bit. */
START_TEST(test_intervals_need_calibration) {
    bl_error err;
    bl_model *m = NULL;
    ck_assert_int_eq(bl_model_load(g_user, NULL, &m, &err), BL_OK);
    ck_assert(m->calib.known);
    bl_predictor *a = NULL, *b = NULL;
    bl_model *c = NULL;
    ck_assert_int_eq(bl_model_clone(m, &c, &err), BL_OK);
    ck_assert_int_eq(bl_predictor_wrap(m, &a, &err), BL_OK);
    bl_calib_free(&c->calib);
    ck_assert_int_eq(bl_predictor_wrap(c, &b, &err), BL_OK);
    double x[4] = {2, 8, 16, 100}, lo[4], t[4], hi[4], t2[4], lo2[4], hi2[4];
    ck_assert_int_eq(bl_predict_interval(a, USER_CTX, 5, x, 4, 0.8, lo, t, hi, NULL, NULL, &err), BL_OK);
    ck_assert(isinf(hi[3]));
    ck_assert_int_eq(bl_predict_interval(b, USER_CTX, 5, x, 4, 0.8, lo2, t2, hi2, NULL, NULL, &err), BL_EUNSUPPORTED);
    ck_assert_msg(strstr(err.message, "carries no calibration") && strstr(err.message, "pre-train it again"), "%s",
                  err.message);
    ck_assert_int_eq(bl_predict(b, USER_CTX, 5, x, 4, t2, &err), BL_OK);
    ck_assert_mem_eq(t, t2, sizeof t); /* the same predictions */
    bl_choice ch;
    ck_assert_int_eq(bl_choose_scale_out(b, USER_CTX, 5, x, 4, NULL, &ch, &err), BL_OK);
    ck_assert(ch.scale_out < 100 && isnan(ch.hi_runtime_s) && ch.left_out == 1);
    bl_choice_opts co;
    bl_choice_opts_init(&co);
    co.target_runtime_s = 1e6;
    co.confidence = 0.9;
    ck_assert_int_eq(bl_choose_scale_out(b, USER_CTX, 5, x, 4, &co, &ch, &err), BL_EUNSUPPORTED);
    bl_calibration_info ci;
    ck_assert_int_eq(bl_predictor_calibration(b, &ci), BL_OK);
    ck_assert_int_eq(ci.contexts, 0);
    ck_assert_int_eq(bl_predictor_calibration(a, &ci), BL_OK);
    ck_assert_int_gt(ci.contexts, 0);
    /* bl_choose_interval: a confidence without intervals is an error; with them, the upper bound decides */
    const double cx[3] = {2, 4, 8}, ct[3] = {100, 60, 40}, clo[3] = {90, 50, 30}, chi[3] = {110, 75, INFINITY};
    co.goal = BL_GOAL_SMALLEST;
    co.target_runtime_s = 70;
    ck_assert_int_eq(bl_choose(cx, ct, 3, &co, &ch, &err), BL_EINVAL);
    ck_assert_int_eq(bl_choose_interval(cx, ct, clo, chi, 3, 0.9, &co, &ch, &err), BL_OK);
    ck_assert(ch.fallback && ch.scale_out == 4); /* 4 meets 70 s by its point, not its upper bound; 8 is unbounded */
    co.target_runtime_s = 80;
    ck_assert_int_eq(bl_choose_interval(cx, ct, clo, chi, 3, 0.9, &co, &ch, &err), BL_OK);
    ck_assert(!ch.fallback && ch.scale_out == 4 && ch.met_target && ch.hi_runtime_s == 75 && ch.left_out == 1);
    co.max_width = 0.3; /* (75 − 50) / 60 > 0.3: only 2 remains, which misses 80 s */
    ck_assert_int_eq(bl_choose_interval(cx, ct, clo, chi, 3, 0.9, &co, &ch, &err), BL_OK);
    ck_assert(ch.fallback && ch.scale_out == 2);
    /* saved and loaded, the calibration is the same */
    char path[4300];
    snprintf(path, sizeof path, "%s/calib-copy.h5", bl_test_tmpdir());
    ck_assert_int_eq(bl_predictor_save(a, path, NULL, &err), BL_OK);
    bl_model *r = NULL;
    ck_assert_int_eq(bl_model_load(path, NULL, &r, &err), BL_OK);
    ck_assert(r->calib.known && r->calib.n == a->m->calib.n && r->calib.contexts == a->m->calib.contexts);
    ck_assert_mem_eq(r->calib.score, a->m->calib.score, r->calib.n * sizeof(double));
    for (int k = 0; k < BL_CALIB_CELLS; k++) {
        const double q1 = bl_calib_quantile(&r->calib, k, 0.5, NULL), q2 = bl_calib_quantile(&a->m->calib, k, 0.5, NULL);
        ck_assert(q1 == q2 || (isnan(q1) && isnan(q2)));
    }
    bl_model_free(r);
    bl_predictor_free(a);
    bl_predictor_free(b);
}
END_TEST

/* Properties the stored schema makes constant are filled when a context leaves them out, and the
 * prediction equals the one with them given: the user's model (environment and job_type constants)
 * and the synthetic corpus's (data_characteristics, environment, job_type). Fine-tuning accepts the
 * same omission. */
START_TEST(test_constants_filled) {
    bl_error err;
    bl_predictor *p = load_user();
    double x[15], full[15], part[15];
    for (int i = 0; i < 15; i++) x[i] = 2 + i;
    ck_assert_int_eq(bl_predict(p, USER_CTX, 5, x, 15, full, &err), BL_OK);
    ck_assert_msg(bl_predict(p, USER_CTX, 3, x, 15, part, &err) == BL_OK, "%s", err.message);
    ck_assert_mem_eq(full, part, sizeof full);
    const char *v;
    int from;
    ck_assert_int_eq(bl_predictor_prop_default(p, 4, &v, &from), BL_OK); /* job_type, optional */
    ck_assert_str_eq(v, "etl-spark");
    ck_assert_int_eq(from, 1);
    ck_assert_int_eq(bl_predictor_prop_default(p, 3, &v, &from), BL_OK); /* environment, essential const */
    ck_assert_str_eq(v, "private yarn");
    ck_assert_int_eq(bl_predictor_prop_default(p, 0, &v, &from), BL_ENOTFOUND); /* machine_type: given or error */
    ck_assert_int_eq(bl_predictor_prop_default(p, 9, &v, &from), BL_ERANGE);
    /* without a warning about them */
    bl_warnings *w = NULL;
    ck_assert_int_eq(bl_warnings_new(&w, &err), BL_OK);
    double x6 = 6;
    ck_assert_int_eq(bl_predict_warn(p, USER_CTX, 3, &x6, 1, part, w, &err), BL_OK);
    ck_assert_uint_eq(bl_warnings_count(w), 0);
    /* fine-tuning on arrays, the constants left out: the same model as with them given */
    const double rx[3] = { 4, 8, 12 }, rt[3] = { 120, 80, 70 };
    bl_tune_opts to;
    bl_tune_opts_init(&to);
    to.max_epochs = 50;
    bl_predictor *a = NULL, *b = NULL;
    ck_assert_int_eq(bl_predictor_finetune(p, USER_CTX, 5, rx, rt, 3, &to, &a, &err), BL_OK);
    ck_assert_msg(bl_predictor_finetune(p, USER_CTX, 3, rx, rt, 3, &to, &b, &err) == BL_OK, "%s", err.message);
    ck_assert_int_eq(bl_predict(a, USER_CTX, 5, x, 15, full, &err), BL_OK);
    ck_assert_int_eq(bl_predict(b, USER_CTX, 3, x, 15, part, &err), BL_OK);
    ck_assert_mem_eq(full, part, sizeof full);
    bl_predictor_free(a);
    bl_predictor_free(b);
    /* fine-tuned on runs of another environment, the model fills environment with theirs (from 3),
     * not the stored schema's pre-training constant: left out equals given as the runs had it */
    const bl_prop_value lab[5] = { USER_CTX[0], USER_CTX[1], USER_CTX[2], { "environment", "lab b" }, USER_CTX[4] };
    ck_assert_int_eq(bl_predictor_finetune(p, lab, 5, rx, rt, 3, &to, &a, &err), BL_OK);
    ck_assert_int_eq(bl_predictor_prop_default(a, 3, &v, &from), BL_OK);
    ck_assert_str_eq(v, "lab b");
    ck_assert_int_eq(from, 3);
    ck_assert_int_eq(bl_predictor_prop_default(a, 4, &v, &from), BL_OK); /* the same value: still the schema's */
    ck_assert_int_eq(from, 1);
    ck_assert_int_eq(bl_predict(a, lab, 5, x, 15, full, &err), BL_OK);
    ck_assert_int_eq(bl_predict(a, USER_CTX, 3, x, 15, part, &err), BL_OK);
    ck_assert_mem_eq(full, part, sizeof full);
    bl_predictor_free(a);
    bl_predictor_free(p);
    /* the synthetic corpus: three constants left out */
    p = load();
    bl_prop_value ctx[16];
    char bufs[16][64];
    size_t n = row_context(0, ctx, bufs), k = 0;
    bl_prop_value few[16];
    for (size_t i = 0; i < n; i++)
        if (strcmp(ctx[i].name, "environment") && strcmp(ctx[i].name, "job_type") &&
            strcmp(ctx[i].name, "data_characteristics"))
            few[k++] = ctx[i];
    ck_assert_uint_eq(k, n - 3);
    ck_assert_int_eq(bl_predict(p, ctx, n, x, 11, full, &err), BL_OK);
    ck_assert_int_eq(bl_predict(p, few, k, x, 11, part, &err), BL_OK);
    ck_assert_mem_eq(full, part, 11 * sizeof *full);
    bl_predictor_free(p);
    bl_warnings_free(w);
    bl_warnings_free(NULL);
}
END_TEST

/* An optional property that is no constant of the schema but had one value in every pre-training row
 * (job_type read from a column, or here made by a template without placeholders) is filled with that
 * value too: the same predictions, and bl_predictor_prop_default says where it came from. */
START_TEST(test_single_value_filled) {
    bl_error err;
    const char *dir = bl_test_tmpdir();
    char data[4200], sch[4200], path[4200];
    snprintf(data, sizeof data, "%s/user-rest.csv", dir);
    snprintf(sch, sizeof sch, "%s/user-template.schema", dir);
    FILE *f = fopen(sch, "w");
    ck_assert_ptr_nonnull(f);
    fputs("scale_out executors\nruntime wall_time_s s\n"
          "property machine_type essential text column node_flavor\nproperty job_args essential text column query\n"
          "property data_size_MB essential number column input_gb\n"
          "property job_type optional text template \"etl-spark\"\n", f);
    fclose(f);
    bl_dataset *ds = NULL;
    ck_assert_int_eq(bl_dataset_load(data, sch, 0, NULL, &ds, &err), BL_OK);
    bl_pretrain_opts o;
    bl_pretrain_opts_default(&o);
    o.calibrate = 0; /* intervals are not what this checks (test_api and the calibration tests do) */
    o.trials = 1;
    o.epochs = 20;
    o.grace = 20;
    o.members = 1;
    bl_model *m = NULL;
    ck_assert_int_eq(bl_pretrain(ds, NULL, &o, &m, &err), BL_OK); /* no stored schema at all */
    snprintf(path, sizeof path, "%s/user-template.h5", dir);
    ck_assert_int_eq(bl_model_save(m, path, &err), BL_OK);
    bl_model_free(m);
    bl_dataset_free(ds);
    bl_predictor *p = NULL;
    ck_assert_int_eq(bl_predictor_load(path, NULL, &p, &err), BL_OK);
    const char *v;
    int from;
    ck_assert_int_eq(bl_predictor_prop_default(p, 3, &v, &from), BL_OK);
    ck_assert_str_eq(v, "etl-spark");
    ck_assert_int_eq(from, 2);
    double x[8], a[8], b[8];
    for (int i = 0; i < 8; i++) x[i] = 2 * (i + 1);
    const bl_prop_value ctx[4] = { { "machine_type", "r5.xlarge" }, { "job_args", "q2" }, { "data_size_MB", "50" },
                                   { "job_type", "etl-spark" } };
    ck_assert_int_eq(bl_predict(p, ctx, 4, x, 8, a, &err), BL_OK);
    ck_assert_int_eq(bl_predict(p, ctx, 3, x, 8, b, &err), BL_OK);
    ck_assert_mem_eq(a, b, sizeof a);
    bl_predictor_free(p);
}
END_TEST

/* Warnings that name the fix, on the prediction, through the public API: scale-outs outside the
 * trained range (the range named), a text value never seen (the closest named), a number outside
 * the seen range, an optional property left out that every row had; every missing property in one
 * error. The warnings never change the predictions. */
START_TEST(test_warnings) {
    bl_error err;
    bl_predictor *p = load_user();
    bl_warnings *w = NULL;
    ck_assert_int_eq(bl_warnings_new(&w, &err), BL_OK);
    double x[199], t[199], t2[199];
    for (int i = 0; i < 199; i++) x[i] = 2 + i;
    ck_assert_int_eq(bl_predict_warn(p, USER_CTX, 5, x, 199, t, w, &err), BL_OK);
    ck_assert_uint_eq(bl_warnings_count(w), 1);
    ck_assert_msg(has_warning(w, BL_WARN_SCALE_OUT, NULL, "scale-outs 17..200 lie outside the range of scale-outs the "
                              "model was pre-trained on (2..16)"), "%s", bl_warnings_message(w, 0));
    ck_assert_str_eq(bl_warning_kind_name(bl_warnings_kind(w, 0)), "scale_out");
    ck_assert_int_eq(bl_predict(p, USER_CTX, 5, x, 199, t2, &err), BL_OK);
    ck_assert_mem_eq(t, t2, sizeof t);
    /* the scheduler's call: the same warning with the choice */
    bl_choice ch;
    ck_assert_int_eq(bl_choose_scale_out_warn(p, USER_CTX, 5, x, 199, NULL, &ch, w, &err), BL_OK);
    ck_assert(has_warning(w, BL_WARN_SCALE_OUT, NULL, "(2..16)"));
    /* inside the range: none (the list is emptied by each call) */
    ck_assert_int_eq(bl_predict_warn(p, USER_CTX, 5, x, 15, t, w, &err), BL_OK);
    ck_assert_uint_eq(bl_warnings_count(w), 0);
    /* an unseen machine type, the closest named; a data size outside 50..200 */
    bl_prop_value c2[5];
    memcpy(c2, USER_CTX, sizeof c2);
    c2[0].value = "r5.2xlarge";
    c2[2].value = "2000";
    ck_assert_int_eq(bl_predictor_review(p, c2, 5, x, 15, w, &err), BL_OK);
    ck_assert_uint_eq(bl_warnings_count(w), 2);
    ck_assert_msg(has_warning(w, BL_WARN_UNSEEN_VALUE, "machine_type", "machine_type 'r5.2xlarge' is a value no "
                              "pre-training row had (closest seen: 'r5.xlarge', 'm5.2xlarge'; 2 values in all)"),
                  "%s", bl_warnings_message(w, 0));
    ck_assert_msg(has_warning(w, BL_WARN_NUMBER_RANGE, "data_size_MB", "data_size_MB 2000 lies outside the values the "
                              "pre-training rows had (50..200)"), "%s", bl_warnings_message(w, 1));
    /* every missing property in one message, with what the model saw */
    ck_assert_int_eq(bl_predict(p, USER_CTX + 2, 1, x, 1, t, &err), BL_EINVAL);
    ck_assert_msg(strstr(err.message, "2 essential properties are missing: 'machine_type' (seen in training: ") &&
                  strstr(err.message, "'job_args' (seen in training: 'q1', 'q2', ... (3 values))"), "%s", err.message);
    ck_assert_int_eq(bl_predictor_review(p, USER_CTX + 2, 1, x, 1, w, &err), BL_EINVAL);
    ck_assert_uint_eq(bl_warnings_count(w), 0);
    /* an unknown name: the closest suggested */
    bl_prop_value c3[1] = { { "machine_typ", "x" } };
    ck_assert_int_eq(bl_predict(p, c3, 1, x, 1, t, &err), BL_EINVAL);
    ck_assert_msg(strstr(err.message, "unknown property 'machine_typ'; did you mean 'machine_type'?"), "%s", err.message);
    bl_predictor_free(p);
    /* the synthetic corpus: memory and slots (optional, many values) left out */
    p = load();
    bl_prop_value ctx[16];
    char bufs[16][64];
    size_t n = row_context(0, ctx, bufs);
    ck_assert_int_eq(bl_predict_warn(p, ctx, 5, x, 11, t, w, &err), BL_OK);
    ck_assert_msg(has_warning(w, BL_WARN_LEFT_OUT, "memory", "optional property 'memory' is left out, but every "
                              "pre-training row had it (") && has_warning(w, BL_WARN_LEFT_OUT, "slots", " per machine)"),
                  "%s", bl_warnings_message(w, 0));
    ck_assert_int_eq(bl_predict_warn(p, ctx, n, x, 11, t, w, &err), BL_OK);
    ck_assert_uint_eq(bl_warnings_count(w), 0);
    ck_assert_ptr_null(bl_warnings_message(w, 0));
    ck_assert_int_eq(bl_warnings_kind(w, 0), 0);
    bl_predictor_free(p);
    bl_warnings_free(w);
}
END_TEST

/* What the model knows: the values seen with their counts and the ranges, in the file; fine-tuning
 * records its runs' range and context, a save keeps them, and predicting outside the fine-tuning range
 * warns with it named; a value of the fine-tuned context is no longer "never seen". A file without
 * these records (as written before 0.5) loads and gives fewer warnings. */
START_TEST(test_records_and_finetune_context) {
    bl_error err;
    bl_predictor *p = load_user();
    bl_model_ranges rg;
    ck_assert_int_eq(bl_predictor_ranges(p, &rg), BL_OK);
    ck_assert_double_eq(rg.scale_out_min, 2);
    ck_assert_double_eq(rg.scale_out_max, 16);
    ck_assert(rg.runtime_min_s > 0 && rg.runtime_min_s < rg.runtime_max_s);
    ck_assert_int_eq(rg.finetune_runs, 0);
    ck_assert(isnan(rg.finetune_scale_out_min));
    const char *v;
    long long rows;
    ck_assert_int_eq(bl_predictor_prop_seen(p, 1, 0, &v, &rows), BL_OK); /* job_args: q1, q2, q3 */
    ck_assert_int_eq(rows, 32); /* 2 flavours × 2 sizes × 8 scale-outs each */
    ck_assert_int_eq(bl_predictor_prop_seen(p, 1, 3, &v, &rows), BL_ERANGE);
    ck_assert_int_eq(bl_predictor_prop_seen(p, 2, 0, &v, &rows), BL_OK);
    ck_assert(strcmp(v, "50") == 0 || strcmp(v, "200") == 0);
    ck_assert_int_eq(bl_predictor_finetune_context(p, 0, &v), BL_ENOTFOUND);
    /* fine-tuned on a new machine type at 4, 8, 12 */
    bl_prop_value c2[5];
    memcpy(c2, USER_CTX, sizeof c2);
    c2[0].value = "c6i.4xlarge";
    const double rx[3] = { 4, 8, 12 }, rt[3] = { 120, 80, 70 };
    bl_tune_opts to;
    bl_tune_opts_init(&to);
    to.max_epochs = 50;
    bl_predictor *q = NULL, *back = NULL;
    ck_assert_int_eq(bl_predictor_finetune(p, c2, 3, rx, rt, 3, &to, &q, &err), BL_OK);
    char path[4200];
    snprintf(path, sizeof path, "%s/user-tuned.h5", bl_test_tmpdir());
    ck_assert_int_eq(bl_predictor_save(q, path, "tuned", &err), BL_OK);
    ck_assert_int_eq(bl_predictor_load(path, "tuned", &back, &err), BL_OK);
    ck_assert_int_eq(bl_predictor_ranges(back, &rg), BL_OK);
    ck_assert_int_eq(rg.finetune_runs, 3);
    ck_assert_int_eq(rg.finetune_contexts, 1);
    ck_assert_double_eq(rg.finetune_scale_out_min, 4);
    ck_assert_double_eq(rg.finetune_scale_out_max, 12);
    ck_assert_double_eq(rg.finetune_runtime_min_s, 70);
    ck_assert_int_eq(bl_predictor_finetune_context(back, 0, &v), BL_OK);
    ck_assert_str_eq(v, "c6i.4xlarge");
    ck_assert_int_eq(bl_predictor_finetune_context(back, 4, &v), BL_OK);
    ck_assert_str_eq(v, "etl-spark"); /* filled, and recorded */
    bl_warnings *w = NULL;
    ck_assert_int_eq(bl_warnings_new(&w, &err), BL_OK);
    double x[15], t[15];
    for (int i = 0; i < 15; i++) x[i] = 2 + i;
    ck_assert_int_eq(bl_predict_warn(p, c2, 5, x, 15, t, w, &err), BL_OK); /* the base: never seen */
    ck_assert(has_warning(w, BL_WARN_UNSEEN_VALUE, "machine_type", "'c6i.4xlarge'"));
    ck_assert_int_eq(bl_predict_warn(back, c2, 5, x, 15, t, w, &err), BL_OK);
    /* fine-tuned for at most 50 epochs, not as its intervals were calibrated: said, beside the scale-outs */
    ck_assert_uint_eq(bl_warnings_count(w), 2);
    ck_assert(has_warning(w, BL_WARN_PROTOCOL, NULL, "fine-tuned with other options than those its intervals were "
                          "calibrated for"));
    ck_assert_str_eq(bl_warning_kind_name(BL_WARN_PROTOCOL), "protocol");
    ck_assert_msg(has_warning(w, BL_WARN_SCALE_OUT, NULL, "scale-outs 2..3 and 13..16 lie outside the range of the 3 "
                              "runs it was fine-tuned on (4..12)"), "%s", bl_warnings_message(w, 0));
    bl_predictor_free(back);
    bl_predictor_free(q);
    bl_predictor_free(p);
    /* an older file: the records dropped */
    bl_model *m = NULL;
    ck_assert_int_eq(bl_model_load(g_user, NULL, &m, &err), BL_OK);
    ck_assert_int_eq(m->seen.known, 1);
    m->seen.known = 0;
    snprintf(path, sizeof path, "%s/user-old.h5", bl_test_tmpdir());
    ck_assert_int_eq(bl_model_save(m, path, &err), BL_OK);
    bl_model_free(m);
    ck_assert_int_eq(bl_predictor_load(path, NULL, &p, &err), BL_OK);
    ck_assert_int_eq(bl_predictor_prop_seen(p, 0, 0, &v, &rows), BL_ENOTFOUND);
    ck_assert_int_eq(bl_predictor_ranges(p, &rg), BL_OK);
    ck_assert_double_eq(rg.scale_out_max, 16); /* from the scaler */
    ck_assert(isnan(rg.runtime_max_s));
    double x200 = 200;
    ck_assert_int_eq(bl_predict_warn(p, c2, 5, &x200, 1, t, w, &err), BL_OK);
    ck_assert_uint_eq(bl_warnings_count(w), 1); /* the scale-out only: no record of the values */
    ck_assert(has_warning(w, BL_WARN_SCALE_OUT, NULL, "(2..16)"));
    ck_assert_int_eq(bl_predict(p, USER_CTX, 3, &x200, 1, t, &err), BL_OK); /* the schema's constants still fill */
    bl_predictor_free(p);
    bl_warnings_free(w);
    /* records that do not hold together are refused, naming the attribute (never read out of range) */
    ck_assert_int_eq(bl_model_load(g_user, NULL, &m, &err), BL_OK);
    m->seen.prop[m->seen.n - 1] = 99;
    snprintf(path, sizeof path, "%s/user-bad.h5", bl_test_tmpdir());
    ck_assert_int_eq(bl_model_save(m, path, &err), BL_OK);
    m->seen.prop[m->seen.n - 1] = (uint32_t)(m->n_props - 1);
    m->seen.runtime_min_s = -1;
    char path2[4200];
    snprintf(path2, sizeof path2, "%s/user-bad2.h5", bl_test_tmpdir());
    ck_assert_int_eq(bl_model_save(m, path2, &err), BL_OK);
    bl_model_free(m);
    ck_assert_int_eq(bl_predictor_load(path, NULL, &p, &err), BL_EFORMAT);
    ck_assert_msg(strstr(err.message, "seen/value_prop"), "%s", err.message);
    ck_assert_int_eq(bl_predictor_load(path2, NULL, &p, &err), BL_EFORMAT);
    ck_assert_msg(strstr(err.message, "seen/rows, scale_out_min/max or runtime_min_s/max_s"), "%s", err.message);
}
END_TEST

/* A fine-tuned model that cannot predict its own runs never answers as if it knew (the stress suite's
 * seed 1733): a users' data set whose runs (~1.7 ms) lie far below the pre-training rows' runtimes (the
 * pre-trained model predicts ~0.6 s there); fine-tuning the linear-target network on them overshot below
 * zero, and the model predicted 1e-309 s (bl_model_positive's stand-in) at every run's scale-out. With the
 * stress suite's quick settings, the fine-tuned model must predict each run within a factor 100, say
 * which fallback it took, and bound no interval by the dropped network's fit. */
START_TEST(test_finetune_never_collapses_below_its_runs) {
    char dir[1024], why[512], pre[1100];
    snprintf(dir, sizeof dir, "%s/collapse-1733", bl_test_tmpdir());
    snprintf(pre, sizeof pre, "%s/pre.h5", dir);
    gen_set s;
    ck_assert_msg(gen_userdata(1733, GEN_VALID, NULL, dir, &s, why, sizeof why) == 0, "%s", why);
    bl_error err = {0};
    char *text = NULL;
    size_t len = 0;
    FILE *f = fopen(s.schema_path, "r");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(getdelim(&text, &len, '\0', f) > 0, 1);
    fclose(f);
    bl_encode_settings es; /* as test_stress's quick_pretrain, with calibration (seed % 4 == 1) */
    bl_encode_settings_default(&es);
    es.numbers = BL_ENC_NUMBERS_BOTH;
    bl_pretrain_opts po;
    bl_pretrain_opts_default(&po);
    po.trials = 2;
    po.epochs = 8;
    po.grace = 4;
    po.threads = 1;
    po.avg_span = 1; /* the network of one epoch's parameters: the collapse this test was built on */
    bl_finetune_opts ft;
    bl_finetune_opts_default(&ft);
    ft.max_epochs = 20;
    ft.patience = 10;
    ft.cv_epochs = 20;
    po.calib_draws = 1;
    po.calib_ft = &ft;
    po.calibrate = 1;
    bl_dataset *ds = NULL, *runs = NULL;
    ck_assert_msg(bl_dataset_load(s.data_path, s.schema_path, 0, &es, &ds, &err) == BL_OK, "%s", err.message);
    bl_model *m = NULL;
    ck_assert_msg(bl_pretrain(ds, text, &po, &m, &err) == BL_OK, "%s", err.message);
    ck_assert_msg(bl_model_save(m, pre, &err) == BL_OK, "%s", err.message);
    bl_predictor *base = NULL, *tuned = NULL;
    ck_assert_msg(bl_predictor_load(pre, NULL, &base, &err) == BL_OK, "%s", err.message);
    ck_assert_msg(bl_predictor_load_runs(base, s.runs_path, NULL, &runs, &err) == BL_OK, "%s", err.message);
    bl_tune_opts to;
    bl_tune_opts_init(&to);
    to.max_epochs = 20;
    to.patience = 10;
    ck_assert_msg(bl_predictor_finetune_runs(base, runs, &to, &tuned, &err) == BL_OK, "%s", err.message);
    size_t far = 0; /* runs the pre-trained model misses by more than a factor 100: the case at hand */
    for (size_t i = 0; i < runs->n_rows; i++) {
        const double x = runs->scale_out[i], t = runs->runtime_s[i];
        double y0 = 0, y = 0, lo = 0, hi = 0;
        int w = -1;
        ck_assert_int_eq(bl_predict(base, s.ctx, s.n_ctx, &x, 1, &y0, &err), BL_OK);
        far += y0 > 100 * t;
        ck_assert_msg(bl_predict_interval(tuned, s.ctx, s.n_ctx, &x, 1, 0.9, &lo, &y, &hi, &w, NULL, &err) == BL_OK,
                      "%s", err.message);
        ck_assert_msg(y >= t / 100 && y <= 100 * t, "run at scale-out %g: %g s, the fine-tuned model predicts %g s "
                      "(the pre-trained one %g s)", x, t, y, y0);
        ck_assert_msg(w != BL_INTERVAL_STAND_IN, "scale-out %g: a stand-in at the model's own run", x);
    }
    ck_assert_msg(far == runs->n_rows, "%zu of %zu runs far from the pre-trained model: the data no longer shows the "
                  "case", far, runs->n_rows);
    const char *method = NULL, *said = NULL;
    double ew = -1;
    ck_assert_int_eq(bl_predictor_method(tuned, &method, &ew, &said), BL_OK);
    ck_assert_msg(strstr(said, "dropped"), "method %s (Ernest %g): %s", method, ew, said);
    bl_predictor_free(tuned);
    bl_predictor_free(base);
    bl_dataset_free(runs);
    bl_model_free(m);
    bl_dataset_free(ds);
    free(text);
}
END_TEST

START_TEST(test_version_and_status) {
    ck_assert_str_eq(bl_version(), "0.11.0");
    ck_assert_str_eq(bl_status_string(BL_ENOTFOUND), "not found");
}
END_TEST

Suite *bl_test_suite(void) {
    Suite *s = suite_create("api");
    TCase *tc = tcase_create("api");
    tcase_add_unchecked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 300); /* sanitizer builds on a busy machine */
    tcase_add_test(tc, test_version_and_status);
    tcase_add_test(tc, test_model_file);
    tcase_add_test(tc, test_bad_files);
    tcase_add_test(tc, test_props);
    tcase_add_test(tc, test_f32_model_file);
    tcase_add_test(tc, test_predict_matches_internal);
    tcase_add_test(tc, test_context_errors);
    tcase_add_test(tc, test_predict_refuses_infinite_runtimes);
    tcase_add_test(tc, test_choose);
    tcase_add_test(tc, test_choose_scale_out);
    tcase_add_test(tc, test_finetune_arrays);
    tcase_add_test(tc, test_finetune_values_odd_property_names);
    tcase_add_test(tc, test_finetune_file_and_save);
    tcase_add_test(tc, test_finetune_never_collapses_below_its_runs);
    tcase_add_test(tc, test_load_runs_contexts);
    tcase_add_test(tc, test_runs_schema_must_match);
    tcase_add_test(tc, test_multi_model_file);
    tcase_add_test(tc, test_threads);
    tcase_add_test(tc, test_example_program);
    tcase_add_loop_test(tc, test_totals_per_machine_model, 0, 4);
    tcase_add_test(tc, test_stored_schema_read_leniently);
    tcase_add_test(tc, test_constants_filled);
    tcase_add_test(tc, test_single_value_filled);
    tcase_add_test(tc, test_warnings);
    tcase_add_test(tc, test_reproducer_no_impossible_numbers);
    tcase_add_test(tc, test_intervals_need_calibration);
    tcase_add_test(tc, test_records_and_finetune_context);
    suite_add_tcase(s, tc);
    return s;
}
