/* test_train_api.c — the training face (include/bellamy/train.h) as a program outside the library sees
 * it: this suite includes only the public headers and links the installed shared library, so a call
 * left out of the exports fails to link. On a small synthetic corpus: data files, pre-training,
 * untrained predictors, fine-tuning on data, evaluation, what a model records, model-file checks, and
 * bad input (NULL arguments, missing files, schemas that do not match, options out of range), each an
 * error status with a message naming the file, field or option, never a crash. */
#include "bellamy/bellamy.h"
#include "bellamy/train.h"
#include "testutil.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char g_tsv[4096], g_schema[4096], g_model[4096], g_runs[4096], g_dir[4096];

/* path of name in the suite's folder (static buffer per call site: copy it) */
static const char *at(const char *name) {
    static char p[4096];
    snprintf(p, sizeof p, "%s/%s", bl_test_tmpdir(), name);
    return p;
}

static void write_text(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

/* asserts st is the wanted error and its message names `what` */
#define EXPECT_ERR(call, want, what)                                                                     \
    do {                                                                                                 \
        bl_error e_ = { 0 };                                                                             \
        bl_error *err = &e_;                                                                             \
        bl_status st_ = (call);                                                                          \
        ck_assert_msg(st_ == (want), "%s: status %d (%s), want %d: %s", #call, st_, bl_status_string(st_), \
                      (want), e_.message);                                                               \
        ck_assert_msg(strstr(e_.message, (what)) != NULL, "%s: message lacks '%s': %s", #call, (what),   \
                      e_.message);                                                                       \
        (void)err;                                                                                       \
    } while (0)

/* a small pre-training: one trial, one member, a few epochs */
static void small_opts(bl_train_opts *o) {
    bl_train_opts_init(o);
    o->trials = 1;
    o->epochs = 5;
    o->grace = 5;
    o->members = 1;
}

static void setup(void) {
    snprintf(g_dir, sizeof g_dir, "%s", bl_test_tmpdir());
    bl_corpus_opts c;
    bl_corpus_opts_init(&c);
    c.contexts = 3;
    c.reps = 2;
    bl_error err = { 0 };
    size_t rows = 0, ctxs = 0;
    ck_assert_msg(bl_corpus_write(&c, g_dir, "c", &rows, &ctxs, &err) == BL_OK, "%s", err.message);
    ck_assert_uint_eq(rows, 3 * 6 * 2);
    ck_assert_uint_eq(ctxs, 3);
    snprintf(g_tsv, sizeof g_tsv, "%s", at("c.tsv"));
    snprintf(g_schema, sizeof g_schema, "%s", at("c.schema"));
    snprintf(g_model, sizeof g_model, "%s", at("c.h5"));
    /* the runs of a new context: the corpus's first context at three scale-outs */
    c.contexts = 1;
    c.reps = 1;
    c.n_scale_outs = 3;
    c.scale_outs[0] = 2;
    c.scale_outs[1] = 6;
    c.scale_outs[2] = 10;
    c.seed = 7;
    ck_assert_msg(bl_corpus_write(&c, g_dir, "runs", NULL, NULL, &err) == BL_OK, "%s", err.message);
    snprintf(g_runs, sizeof g_runs, "%s", at("runs.tsv"));
}

static void teardown(void) {}

START_TEST(corpus_errors) {
    bl_corpus_opts c;
    bl_corpus_opts_init(&c);
    EXPECT_ERR(bl_corpus_write(&c, NULL, "x", NULL, NULL, err), BL_EINVAL, "folder");
    EXPECT_ERR(bl_corpus_write(&c, g_dir, "a/b", NULL, NULL, err), BL_EINVAL, "stem 'a/b'");
    EXPECT_ERR(bl_corpus_write(&c, at("nosuch"), "x", NULL, NULL, err), BL_EIO, "nosuch");
    EXPECT_ERR(bl_corpus_write(&c, g_tsv, "x", NULL, NULL, err), BL_EINVAL, "not a folder");
    c.contexts = 0;
    EXPECT_ERR(bl_corpus_write(&c, g_dir, "x", NULL, NULL, err), BL_EINVAL, "contexts");
    bl_corpus_opts_init(&c);
    c.reps = 1001;
    EXPECT_ERR(bl_corpus_write(&c, g_dir, "x", NULL, NULL, err), BL_EINVAL, "reps");
    bl_corpus_opts_init(&c);
    c.noise = NAN;
    EXPECT_ERR(bl_corpus_write(&c, g_dir, "x", NULL, NULL, err), BL_EINVAL, "noise");
    bl_corpus_opts_init(&c);
    c.scale_outs[1] = 2.5;
    EXPECT_ERR(bl_corpus_write(&c, g_dir, "x", NULL, NULL, err), BL_EINVAL, "scale_outs[1]");
    bl_corpus_opts_init(&c);
    c.n_scale_outs = 65;
    EXPECT_ERR(bl_corpus_write(&c, g_dir, "x", NULL, NULL, err), BL_EINVAL, "n_scale_outs");
    bl_corpus_opts_init(&c);
    c.shape = 9;
    EXPECT_ERR(bl_corpus_write(&c, g_dir, "x", NULL, NULL, err), BL_EINVAL, "shape");
    bl_corpus_opts_init(&c);
    c.time_scale = 0;
    EXPECT_ERR(bl_corpus_write(&c, g_dir, "x", NULL, NULL, err), BL_EINVAL, "time_scale");
    bl_corpus_opts_init(&c);
    c.environment = "say \"hi\"";
    EXPECT_ERR(bl_corpus_write(&c, g_dir, "x", NULL, NULL, err), BL_EINVAL, "environment");
    bl_corpus_opts_init(&c);
    c.size = 3;
    EXPECT_ERR(bl_corpus_write(&c, g_dir, "x", NULL, NULL, err), BL_EINVAL, "bl_corpus_opts_init");
    ck_assert_int_eq(bl_corpus_shape("plateau"), BL_SHAPE_PLATEAU);
    ck_assert_int_eq(bl_corpus_shape("nosuch"), -1);
    ck_assert_int_eq(bl_corpus_shape(NULL), -1);
    /* a shifted environment writes */
    bl_corpus_opts_init(&c);
    c.shape = BL_SHAPE_CLIFF;
    c.time_scale = 10;
    c.environment = "another cluster";
    bl_error err = { 0 };
    ck_assert_msg(bl_corpus_write(&c, g_dir, "shifted", NULL, NULL, &err) == BL_OK, "%s", err.message);
}
END_TEST

START_TEST(data_load_and_queries) {
    bl_error err = { 0 };
    bl_data *d = NULL;
    ck_assert_msg(bl_data_load(g_tsv, g_schema, NULL, &d, &err) == BL_OK, "%s", err.message);
    bl_data_summary s;
    ck_assert_int_eq(bl_data_summarize(d, &s), BL_OK);
    ck_assert_uint_eq(s.rows, 36);
    ck_assert_uint_eq(s.contexts, 3);
    ck_assert_uint_eq(s.skipped, 0);
    ck_assert_str_eq(s.name, g_tsv);
    ck_assert(s.scale_out_min == 2 && s.scale_out_max == 12);
    ck_assert(s.runtime_min_s > 0 && s.runtime_max_s >= s.runtime_min_s);
    ck_assert_uint_gt(s.vec_len, 0);
    ck_assert_uint_gt(s.props, 0);
    long j = bl_data_find_property(d, "machine_type");
    ck_assert_int_ge(j, 0);
    bl_data_prop pr;
    ck_assert_int_eq(bl_data_property(d, (size_t)j, &pr), BL_OK);
    ck_assert_str_eq(pr.name, "machine_type");
    ck_assert(pr.essential && !pr.number);
    ck_assert_int_eq(bl_data_property(d, s.props, &pr), BL_ERANGE);
    ck_assert_int_eq(bl_data_find_property(d, "nosuch"), -1);
    const char *label;
    size_t n;
    ck_assert_int_eq(bl_data_context(d, 0, &label, &n), BL_OK);
    ck_assert_uint_eq(n, 12);
    ck_assert_ptr_nonnull(strstr(label, "machine_type="));
    ck_assert_int_eq(bl_data_context(d, 3, &label, &n), BL_ERANGE);
    size_t r;
    ck_assert_int_eq(bl_data_context_row(d, 1, 0, &r), BL_OK);
    ck_assert_int_eq(bl_data_context_row(d, 1, 12, &r), BL_ERANGE);
    bl_data_row row;
    ck_assert_int_eq(bl_data_get_row(d, r, &row), BL_OK);
    ck_assert_uint_eq(row.context, 1);
    ck_assert_int_eq(bl_data_get_row(d, 36, &row), BL_ERANGE);
    const char *v;
    const double *vec;
    ck_assert_int_eq(bl_data_value(d, (size_t)j, r, &v, &vec), BL_OK);
    ck_assert_ptr_nonnull(v);
    ck_assert_ptr_nonnull(vec);
    ck_assert_int_eq(bl_data_value(d, (size_t)j, 36, &v, &vec), BL_ERANGE);
    double raw[BL_SCALE_OUT_FEATURES], sc[BL_SCALE_OUT_FEATURES];
    ck_assert_int_eq(bl_data_scale_out_features(d, 0, raw, sc, &err), BL_OK);
    ck_assert(fabs(raw[0] - 1.0 / row.scale_out) < 1 || raw[2] >= 1);
    for (int k = 0; k < BL_SCALE_OUT_FEATURES; k++) ck_assert(sc[k] >= -1e-12 && sc[k] <= 1 + 1e-12);
    EXPECT_ERR(bl_data_scale_out_features(d, 99, raw, sc, err), BL_ERANGE, "row 99");
    char buf[600];
    ck_assert_uint_gt(bl_data_context_spread(d, buf, sizeof buf), 0);
    ck_assert_ptr_nonnull(strstr(buf, "values"));
    bl_prop_value given = { "machine_type", "no-such-machine" };
    ck_assert_uint_eq(bl_data_context_diff(d, 0, &given, 1, buf, sizeof buf), 1);
    ck_assert_ptr_nonnull(strstr(buf, "no-such-machine"));
    ck_assert_uint_eq(bl_data_context_diff(d, 9, &given, 1, buf, sizeof buf), 0);
    ck_assert_ptr_null(bl_data_skipped(d, 0));
    bl_data_free(d);
    /* NULL everywhere: a status, never a crash */
    ck_assert_int_eq(bl_data_summarize(NULL, &s), BL_EINVAL);
    ck_assert_int_eq(bl_data_property(NULL, 0, &pr), BL_EINVAL);
    ck_assert_int_eq(bl_data_get_row(NULL, 0, &row), BL_EINVAL);
    ck_assert_int_eq(bl_data_context(NULL, 0, NULL, NULL), BL_EINVAL);
    ck_assert_int_eq(bl_data_value(NULL, 0, 0, NULL, NULL), BL_EINVAL);
    ck_assert_int_eq(bl_data_find_property(NULL, "x"), -1);
    ck_assert_uint_eq(bl_data_context_spread(NULL, buf, sizeof buf), 0);
    ck_assert_ptr_null(bl_data_skipped(NULL, 0));
    bl_data_free(NULL);
}
END_TEST

START_TEST(data_load_errors) {
    bl_data *d = NULL;
    EXPECT_ERR(bl_data_load(g_tsv, g_schema, NULL, NULL, err), BL_EINVAL, "NULL out");
    EXPECT_ERR(bl_data_load(NULL, g_schema, NULL, &d, err), BL_EINVAL, "no data file");
    EXPECT_ERR(bl_data_load(g_tsv, NULL, NULL, &d, err), BL_EINVAL, "no schema file");
    EXPECT_ERR(bl_data_load(at("missing.tsv"), g_schema, NULL, &d, err), BL_EIO, "missing.tsv");
    EXPECT_ERR(bl_data_load(g_tsv, at("missing.schema"), NULL, &d, err), BL_EIO, "missing.schema");
    ck_assert_ptr_null(d);
    /* a schema naming a column the data lacks: the error names the column */
    char path[4096];
    snprintf(path, sizeof path, "%s", at("other.schema"));
    write_text(path, "bellamy-schema 1\nscale_out instance_count\nruntime gross_runtime s\n"
                     "property machine_type essential text column machine_type\n"
                     "property tenant essential text column tenant\n");
    EXPECT_ERR(bl_data_load(g_tsv, path, NULL, &d, err), BL_EFORMAT, "tenant");
    /* a malformed schema: its file and line */
    write_text(path, "bellamy-schema 1\nscale_out instance_count\nruntime gross_runtime s\nproperty x sometimes text "
                     "column machine_type\n");
    EXPECT_ERR(bl_data_load(g_tsv, path, NULL, &d, err), BL_EFORMAT, "other.schema:4");
    /* a bad row: its file and line */
    snprintf(path, sizeof path, "%s", at("bad.tsv"));
    write_text(path, "instance_count\tmachine_type\tslots\tmemory\tdata_size_MB\titerations\tgross_runtime\n"
                     "2\ts1.xlarge\t16\t64000\t40000\t1\tslow\n");
    EXPECT_ERR(bl_data_load(path, g_schema, NULL, &d, err), BL_EFORMAT, "bad.tsv:2");
    /* options out of range name the field */
    bl_data_opts o;
    bl_data_opts_init(&o);
    o.delimiter = ';';
    EXPECT_ERR(bl_data_load(g_tsv, g_schema, &o, &d, err), BL_EINVAL, "delimiter");
    bl_data_opts_init(&o);
    o.numbers = 7;
    EXPECT_ERR(bl_data_load(g_tsv, g_schema, &o, &d, err), BL_EINVAL, "numbers");
    bl_data_opts_init(&o);
    o.skip_invalid = 2;
    EXPECT_ERR(bl_data_load(g_tsv, g_schema, &o, &d, err), BL_EINVAL, "skip_invalid");
    bl_data_opts_init(&o);
    o.size = 0;
    EXPECT_ERR(bl_data_load(g_tsv, g_schema, &o, &d, err), BL_EINVAL, "bl_data_opts_init");
    ck_assert_ptr_null(d);
    /* from memory */
    EXPECT_ERR(bl_data_load_text("t", NULL, 0, "s", "", 0, NULL, &d, err), BL_EINVAL, "NULL text");
    static const char sch[] = "bellamy-schema 1\nscale_out x\nruntime t s\nproperty job_type essential text column k\n";
    static const char tab[] = "x\tt\tk\n2\t10\ta\n4\t6\ta\n";
    EXPECT_ERR(bl_data_load_text("t", tab, sizeof tab - 1, "mine.schema", "bellamy-schema 9\n", 17, NULL, &d, err),
               BL_EVERSION, "mine.schema");
    bl_error err = { 0 };
    ck_assert_msg(bl_data_load_text("t", tab, sizeof tab - 1, "s", sch, sizeof sch - 1, NULL, &d, &err) == BL_OK, "%s",
                  err.message);
    bl_predictor *p = NULL;
    ck_assert_msg(bl_predictor_new_untrained(d, NULL, &p, &err) == BL_OK, "%s", err.message);
    ck_assert_uint_eq(bl_predictor_prop_count(p), 1);
    bl_data_summary s;
    bl_data_summarize(d, &s);
    ck_assert_uint_eq(s.rows, 2);
    bl_predictor *q = NULL;
    bl_tune_opts to;
    bl_tune_opts_init(&to);
    to.max_epochs = 20;
    to.stop_cv = 0;
    bl_tune_more more;
    bl_tune_more_init(&more);
    more.lr_min = 0;
    EXPECT_ERR(bl_predictor_finetune_data(p, d, &to, &more, &q, err), BL_EINVAL, "lr_min");
    bl_tune_more_init(&more);
    more.weight_decay = -1;
    EXPECT_ERR(bl_predictor_finetune_data(p, d, &to, &more, &q, err), BL_EINVAL, "weight_decay");
    to.patience = 0;
    EXPECT_ERR(bl_predictor_finetune_data(p, d, &to, NULL, &q, err), BL_EINVAL, "patience");
    bl_tune_opts_init(&to);
    to.max_epochs = 20;
    ck_assert_msg(bl_predictor_finetune_data(p, d, &to, NULL, &q, &err) == BL_OK, "%s", err.message);
    bl_prop_value ctx = { "job_type", "a" };
    double x = 3, y = 0;
    ck_assert_msg(bl_predict(q, &ctx, 1, &x, 1, &y, &err) == BL_OK, "%s", err.message);
    ck_assert(isfinite(y));
    bl_predictor *none = NULL;
    EXPECT_ERR(bl_predictor_finetune_data(NULL, d, NULL, NULL, &none, err), BL_EINVAL, "NULL");
    EXPECT_ERR(bl_predictor_new_untrained(NULL, NULL, &none, err), BL_EINVAL, "NULL data");
    ck_assert_ptr_null(none);
    bl_predictor_free(q);
    bl_predictor_free(p);
    bl_data_free(d);
}
END_TEST

START_TEST(train_opts_errors) {
    bl_train_opts o;
    bl_train_opts_init(&o);
    bl_error e0 = { 0 };
    ck_assert_int_eq(bl_train_opts_check(&o, &e0), BL_OK);
    ck_assert_int_eq(bl_train_opts_check(NULL, &e0), BL_OK);
    o.trials = 0;
    EXPECT_ERR(bl_train_opts_check(&o, err), BL_EINVAL, "trials");
    bl_train_opts_init(&o);
    o.epochs = BL_TRAIN_EPOCHS_MAX + 1;
    EXPECT_ERR(bl_train_opts_check(&o, err), BL_EINVAL, "epochs");
    bl_train_opts_init(&o);
    o.grace = 0;
    EXPECT_ERR(bl_train_opts_check(&o, err), BL_EINVAL, "grace");
    bl_train_opts_init(&o);
    o.threads = 0;
    EXPECT_ERR(bl_train_opts_check(&o, err), BL_EINVAL, "threads");
    bl_train_opts_init(&o);
    o.val_fraction = 1;
    EXPECT_ERR(bl_train_opts_check(&o, err), BL_EINVAL, "val_fraction");
    bl_train_opts_init(&o);
    o.val_split = 3;
    EXPECT_ERR(bl_train_opts_check(&o, err), BL_EINVAL, "val_split");
    bl_train_opts_init(&o);
    o.target_scale = -1;
    EXPECT_ERR(bl_train_opts_check(&o, err), BL_EINVAL, "target_scale");
    bl_train_opts_init(&o);
    o.device = 4;
    EXPECT_ERR(bl_train_opts_check(&o, err), BL_EINVAL, "device");
    bl_train_opts_init(&o);
    o.members = BL_TRAIN_MEMBERS_MAX + 1;
    EXPECT_ERR(bl_train_opts_check(&o, err), BL_EINVAL, "members");
    bl_train_opts_init(&o);
    o.dropout_masks = 3;
    EXPECT_ERR(bl_train_opts_check(&o, err), BL_EINVAL, "dropout_masks");
    bl_train_opts_init(&o);
    o.size = sizeof o + 8;
    EXPECT_ERR(bl_train_opts_check(&o, err), BL_EINVAL, "bl_train_opts_init");
    /* CUDA: a clear answer either way */
    bl_error e = { 0 };
    bl_status st = bl_cuda_check(&e);
    ck_assert(st == BL_OK || (st == BL_EUNSUPPORTED && e.message[0]));
    bl_train_opts_init(&o);
    o.device = BL_ON_CUDA;
    ck_assert_int_eq(bl_train_opts_check(&o, &e), st);
}
END_TEST

/* Every bound of include/bellamy/train.h at its edges: the value on the edge passes, the one past it is
 * BL_EINVAL from bl_train_opts_check naming the field, the value and the range (the one check: the
 * same bounds hold inside the library, so nothing out of range gets as far as an internal message). */
static void bound_edge(const char *field, void (*set)(bl_train_opts *, double), double ok, double bad,
                       const char *range) {
    bl_train_opts o;
    bl_train_opts_init(&o);
    set(&o, ok);
    bl_error e = { 0 };
    ck_assert_msg(bl_train_opts_check(&o, &e) == BL_OK, "%s = %g: %s", field, ok, e.message);
    bl_train_opts_init(&o);
    set(&o, bad);
    bl_status st = bl_train_opts_check(&o, &e);
    char want[96];
    snprintf(want, sizeof want, "bl_train_opts.%s ", field);
    ck_assert_msg(st == BL_EINVAL && strstr(e.message, want) && strstr(e.message, range),
                  "%s = %g: status %d, message '%s' (want '%s' and '%s')", field, bad, st, e.message, want, range);
}
static void set_trials(bl_train_opts *o, double v) { o->trials = (int)v; }
static void set_epochs(bl_train_opts *o, double v) { o->epochs = (long)v; }
static void set_grace(bl_train_opts *o, double v) { o->grace = (long)v; }
static void set_threads(bl_train_opts *o, double v) { o->threads = (int)v; }
static void set_val_fraction(bl_train_opts *o, double v) { o->val_fraction = v; }
static void set_members(bl_train_opts *o, double v) { o->members = (int)v; }
static void set_val_split(bl_train_opts *o, double v) { o->val_split = (int)v; }
static void set_target_scale(bl_train_opts *o, double v) { o->target_scale = (int)v; }
static void set_device(bl_train_opts *o, double v) { o->device = (int)v; }
static void set_dropout_masks(bl_train_opts *o, double v) { o->dropout_masks = (int)v; }
static void set_calibrate(bl_train_opts *o, double v) { o->calibrate = (int)v; }
static void set_precision(bl_train_opts *o, double v) { o->precision = (int)v; }

START_TEST(train_opts_bounds) {
    const double EMAX = (double)BL_TRAIN_EPOCHS_MAX;
    bound_edge("trials", set_trials, 1, 0, "1..27");
    bound_edge("trials", set_trials, BL_TRAIN_TRIALS_MAX, BL_TRAIN_TRIALS_MAX + 1, "1..27");
    bound_edge("epochs", set_epochs, 1, 0, "1..1000000");
    bound_edge("epochs", set_epochs, EMAX, EMAX + 1, "1..1000000");
    bound_edge("grace", set_grace, 1, 0, "1..1000000");
    bound_edge("grace", set_grace, EMAX, EMAX + 1, "1..1000000");
    bound_edge("threads", set_threads, 1, 0, "1..1024");
    bound_edge("threads", set_threads, BL_TRAIN_THREADS_MAX, BL_TRAIN_THREADS_MAX + 1, "1..1024");
    bound_edge("threads", set_threads, 2, 5000, "1..1024"); /* the public check once let this through */
    bound_edge("val_fraction", set_val_fraction, nextafter(0.0, 1.0), 0, "strictly between 0 and 1");
    bound_edge("val_fraction", set_val_fraction, nextafter(1.0, 0.0), 1, "strictly between 0 and 1");
    bound_edge("val_fraction", set_val_fraction, 0.5, NAN, "strictly between 0 and 1");
    bound_edge("members", set_members, 1, 0, "1..16");
    bound_edge("members", set_members, BL_TRAIN_MEMBERS_MAX, BL_TRAIN_MEMBERS_MAX + 1, "1..16");
    bound_edge("val_split", set_val_split, BL_SPLIT_GROUPS, 2, "BL_SPLIT_CONTEXTS or BL_SPLIT_GROUPS");
    bound_edge("val_split", set_val_split, BL_SPLIT_CONTEXTS, -1, "BL_SPLIT_CONTEXTS or BL_SPLIT_GROUPS");
    bound_edge("target_scale", set_target_scale, BL_SCALE_LOG, BL_SCALE_LOG + 1, "BL_SCALE_SECONDS");
    bound_edge("target_scale", set_target_scale, BL_SCALE_SECONDS, -1, "BL_SCALE_SECONDS");
    bound_edge("device", set_device, BL_ON_CPU, 2, "BL_ON_CPU or BL_ON_CUDA"); /* 2: the library's own */
    bound_edge("device", set_device, BL_ON_CPU, -1, "BL_ON_CPU or BL_ON_CUDA");
    bound_edge("dropout_masks", set_dropout_masks, BL_MASKS_HYBRID, BL_MASKS_HYBRID + 1, "BL_MASKS_VALUE");
    bound_edge("dropout_masks", set_dropout_masks, BL_MASKS_VALUE, -1, "BL_MASKS_VALUE");
    bound_edge("calibrate", set_calibrate, 0, 2, "0 or 1");
    bound_edge("calibrate", set_calibrate, 1, -1, "0 or 1");
    bound_edge("precision", set_precision, BL_PRECISION_AUTO, 3, "BL_PRECISION_AUTO, BL_PRECISION_F64 or BL_PRECISION_F32");
    bound_edge("precision", set_precision, BL_PRECISION_F64, -1, "BL_PRECISION_AUTO, BL_PRECISION_F64 or BL_PRECISION_F32");

    /* the pre-training calls run the same check first: threads 5000 is refused before the data file is
     * opened (it does not exist), with the check's message, not one from inside the search */
    bl_train_opts o;
    small_opts(&o);
    o.threads = 5000;
    EXPECT_ERR(bl_pretrain_file(at("no-such.tsv"), g_schema, NULL, &o, NULL, at("never.h5"), NULL, err), BL_EINVAL,
               "bl_train_opts.threads 5000: must be 1..1024");
    bl_data *d = NULL;
    bl_error e = { 0 };
    ck_assert_msg(bl_data_load(g_tsv, g_schema, NULL, &d, &e) == BL_OK, "%s", e.message);
    bl_predictor *p = NULL;
    EXPECT_ERR(bl_pretrain_data(d, &o, NULL, &p, err), BL_EINVAL, "bl_train_opts.threads 5000: must be 1..1024");
    ck_assert_ptr_null(p);
    o.threads = BL_TRAIN_THREADS_MAX; /* the edge trains (on as many threads as there are trials) */
    ck_assert_msg(bl_pretrain_data(d, &o, NULL, &p, &e) == BL_OK, "%s", e.message);
    bl_predictor_free(p);
    bl_data_free(d);
}
END_TEST

/* One default: the defaults bl_train_opts_init sets are the header's, and data to pre-train on reads
 * numbers both ways exactly when the ensemble has 2 or more members (bellamy-train's default, the one
 * bl_pretrain_file uses with NULL data options). */
START_TEST(train_defaults) {
    bl_train_opts o;
    bl_train_opts_init(&o);
    ck_assert_uint_eq(o.size, sizeof o);
    ck_assert_int_eq(o.trials, BL_TRAIN_TRIALS_DEFAULT);
    ck_assert_int_eq(o.epochs, BL_TRAIN_EPOCHS_DEFAULT);
    ck_assert_int_eq(o.grace, BL_TRAIN_GRACE_DEFAULT);
    ck_assert_int_eq(o.threads, BL_TRAIN_THREADS_DEFAULT);
    ck_assert(o.seed == BL_TRAIN_SEED_DEFAULT);
    ck_assert(o.val_fraction == BL_TRAIN_VAL_FRACTION_DEFAULT);
    ck_assert_int_eq(o.members, BL_TRAIN_MEMBERS_DEFAULT);
    ck_assert_int_eq(o.val_split, BL_SPLIT_CONTEXTS);
    ck_assert_int_eq(o.target_scale, BL_SCALE_SECONDS);
    ck_assert_int_eq(o.device, BL_ON_CPU);
    ck_assert_int_eq(o.dropout_masks, BL_MASKS_ROW);
    ck_assert_int_eq(o.calibrate, 1);
    ck_assert_int_eq(o.precision, BL_TRAIN_PRECISION_DEFAULT);
    ck_assert_int_eq(BL_TRAIN_PRECISION_DEFAULT, BL_PRECISION_AUTO); /* float32 on the CPU, float64 on CUDA */
    ck_assert(o.progress == NULL && o.progress_ctx == NULL);

    bl_data_opts d, plain;
    bl_data_opts_init(&plain);
    ck_assert_int_eq(plain.numbers, BL_NUMBERS_BINARY);
    bl_data_opts_for_training(&d, NULL); /* the default ensemble: both */
    ck_assert_int_eq(d.numbers, BL_NUMBERS_BOTH);
    ck_assert_uint_eq(d.size, sizeof d);
    ck_assert_int_eq(d.delimiter, plain.delimiter);
    ck_assert_int_eq(d.skip_invalid, plain.skip_invalid);
    ck_assert_int_eq(d.totals_per_machine, plain.totals_per_machine);
    bl_data_opts_for_training(&d, &o);
    ck_assert_int_eq(d.numbers, BL_NUMBERS_BOTH);
    o.members = 2;
    bl_data_opts_for_training(&d, &o);
    ck_assert_int_eq(d.numbers, BL_NUMBERS_BOTH);
    o.members = 1; /* one network reads bits */
    bl_data_opts_for_training(&d, &o);
    ck_assert_int_eq(d.numbers, BL_NUMBERS_BINARY);
    o.size = offsetof(bl_train_opts, members); /* a caller's struct that ends before members: its default */
    bl_data_opts_for_training(&d, &o);
    ck_assert_int_eq(d.numbers, BL_NUMBERS_BOTH);
    o.size = sizeof o;

    /* bl_pretrain_file without data options: that default, recorded in the model */
    small_opts(&o);
    o.members = 2;
    o.calibrate = 0;
    bl_predictor *p = NULL;
    bl_error e = { 0 };
    ck_assert_msg(bl_pretrain_file(g_tsv, g_schema, NULL, &o, NULL, NULL, &p, &e) == BL_OK, "%s", e.message);
    bl_training_info ti;
    ck_assert_int_eq(bl_predictor_training(p, &ti), BL_OK);
    ck_assert_str_eq(ti.numbers, "both");
    bl_predictor_free(p);
    o.members = 1;
    ck_assert_msg(bl_pretrain_file(g_tsv, g_schema, NULL, &o, NULL, NULL, &p, &e) == BL_OK, "%s", e.message);
    ck_assert_int_eq(bl_predictor_training(p, &ti), BL_OK);
    ck_assert_str_eq(ti.numbers, "binary");
    bl_predictor_free(p);
}
END_TEST

/* The context of data row r (every property's value), in ctx[0..n) (n ≤ 16). */
static size_t row_context(const bl_data *d, size_t r, bl_prop_value *ctx) {
    bl_data_summary s;
    bl_data_summarize(d, &s);
    ck_assert_uint_le(s.props, 16);
    for (size_t i = 0; i < s.props; i++) {
        bl_data_prop dp;
        ck_assert_int_eq(bl_data_property(d, i, &dp), BL_OK);
        ctx[i].name = dp.name;
        ck_assert_int_eq(bl_data_value(d, i, r, &ctx[i].value, NULL), BL_OK);
    }
    return s.props;
}

/* Precision (issue 28): f32 refused on CUDA naming the option; a caller's struct from before the field
 * gets the default; an f32 model is f32 when pre-trained, saved, loaded, fine-tuned and saved again, and
 * predicts what it predicted before the save to float32's rounding of its weights; a fresh untrained
 * predictor takes it too; an f32 file whose weight is +inf is refused naming the block. */
START_TEST(precision_f32) {
    bl_error err = { 0 };
    bl_train_opts o;
    bl_train_opts_init(&o);
    o.precision = BL_PRECISION_F32;
    o.device = BL_ON_CUDA;
    EXPECT_ERR(bl_train_opts_check(&o, err), BL_EUNSUPPORTED, "bl_train_opts.precision BL_PRECISION_F32");
    EXPECT_ERR(bl_train_opts_check(&o, err), BL_EUNSUPPORTED, "use device BL_ON_CPU");
    EXPECT_ERR(bl_pretrain_file(g_tsv, g_schema, NULL, &o, NULL, at("never32.h5"), NULL, err), BL_EUNSUPPORTED,
               "CUDA search computes in float64 only");
    o.device = BL_ON_CPU;
    ck_assert_msg(bl_train_opts_check(&o, &err) == BL_OK, "%s", err.message);

    /* a caller built against a header without precision: its size ends before it, the default holds */
    small_opts(&o);
    o.calibrate = 0;
    o.size = offsetof(bl_train_opts, precision);
    o.precision = 12345; /* beyond the caller's struct: never read */
    ck_assert_msg(bl_train_opts_check(&o, &err) == BL_OK, "%s", err.message);
    bl_predictor *p = NULL;
    ck_assert_msg(bl_pretrain_file(g_tsv, g_schema, NULL, &o, NULL, NULL, &p, &err) == BL_OK, "%s", err.message);
    ck_assert_str_eq(bl_predictor_precision(p), "f32"); /* the default on the CPU */
    bl_predictor_free(p);
    ck_assert_ptr_null(bl_predictor_precision(NULL));

    /* f32 through pre-training, a save, a load and a fine-tuning */
    small_opts(&o);
    o.members = 2;
    o.precision = BL_PRECISION_F32;
    char path[4096], path2[4096];
    snprintf(path, sizeof path, "%s", at("f32.h5"));
    snprintf(path2, sizeof path2, "%s", at("f32-tuned.h5"));
    ck_assert_msg(bl_pretrain_file(g_tsv, g_schema, NULL, &o, NULL, path, &p, &err) == BL_OK, "%s", err.message);
    ck_assert_str_eq(bl_predictor_precision(p), "f32");
    bl_predictor *l = NULL;
    ck_assert_msg(bl_predictor_load(path, NULL, &l, &err) == BL_OK, "%s", err.message);
    ck_assert_str_eq(bl_predictor_precision(l), "f32");
    bl_data *d = NULL;
    ck_assert_msg(bl_data_load(g_tsv, g_schema, NULL, &d, &err) == BL_OK, "%s", err.message);
    bl_prop_value ctx[16];
    const size_t nc = row_context(d, 0, ctx);
    const double xs[4] = {2, 4, 8, 12};
    double y0[4], y1[4], y2[4];
    ck_assert_msg(bl_predict(p, ctx, nc, xs, 4, y0, &err) == BL_OK, "%s", err.message);
    ck_assert_msg(bl_predict(l, ctx, nc, xs, 4, y1, &err) == BL_OK, "%s", err.message);
    for (int i = 0; i < 4; i++) /* the weights rounded to float: a float's relative precision, amplified a little */
        ck_assert_msg(fabs(y1[i] - y0[i]) <= 1e-4 * fabs(y0[i]), "x %g: %.17g before the save, %.17g after", xs[i],
                      y0[i], y1[i]);
    /* saved again from the loaded model: the same floats, the same predictions bit for bit */
    ck_assert_msg(bl_predictor_save(l, path2, NULL, &err) == BL_OK, "%s", err.message);
    bl_predictor *l2 = NULL;
    ck_assert_msg(bl_predictor_load(path2, NULL, &l2, &err) == BL_OK, "%s", err.message);
    ck_assert_msg(bl_predict(l2, ctx, nc, xs, 4, y2, &err) == BL_OK, "%s", err.message);
    ck_assert_int_eq(memcmp(y1, y2, sizeof y1), 0);
    bl_predictor_free(l2);
    /* fine-tuned: still f32, in memory and in its file */
    bl_data *runs = NULL;
    ck_assert_msg(bl_runs_load(l, g_runs, NULL, 0, &runs, &err) == BL_OK, "%s", err.message);
    bl_tune_opts to;
    bl_tune_opts_init(&to);
    to.max_epochs = 20;
    bl_predictor *q = NULL;
    ck_assert_msg(bl_predictor_finetune_data(l, runs, &to, NULL, &q, &err) == BL_OK, "%s", err.message);
    ck_assert_str_eq(bl_predictor_precision(q), "f32");
    ck_assert_msg(bl_predictor_save(q, path2, NULL, &err) == BL_OK, "%s", err.message);
    bl_predictor *q2 = NULL;
    ck_assert_msg(bl_predictor_load(path2, NULL, &q2, &err) == BL_OK, "%s", err.message);
    ck_assert_str_eq(bl_predictor_precision(q2), "f32");
    bl_predictor_free(q2);
    bl_predictor_free(q);
    bl_data_free(runs);
    /* a fresh untrained predictor computes in the precision asked for */
    bl_predictor *u = NULL;
    ck_assert_msg(bl_predictor_new_untrained(d, &o, &u, &err) == BL_OK, "%s", err.message);
    ck_assert_str_eq(bl_predictor_precision(u), "f32");
    bl_predictor_free(u);
    o.precision = BL_PRECISION_F64;
    ck_assert_msg(bl_predictor_new_untrained(d, &o, &u, &err) == BL_OK, "%s", err.message);
    ck_assert_str_eq(bl_predictor_precision(u), "f64");
    bl_predictor_free(u);
    /* a float64 model of the same options: f64, its file as ever */
    ck_assert_msg(bl_pretrain_data(d, &o, NULL, &u, &err) == BL_OK, "%s", err.message);
    ck_assert_str_eq(bl_predictor_precision(u), "f64");
    bl_predictor_free(u);
    bl_data_free(d);
    bl_predictor_free(l);
    bl_predictor_free(p);
}
END_TEST

START_TEST(pretrain_finetune_evaluate) {
    bl_error err = { 0 };
    bl_train_opts o;
    small_opts(&o);
    bl_predictor *p = NULL;
    /* the one-call form, saved; its name the data file's stem */
    ck_assert_msg(bl_pretrain_file(g_tsv, g_schema, NULL, &o, NULL, g_model, &p, &err) == BL_OK, "%s", err.message);
    ck_assert_str_eq(bl_predictor_name(p), "c");
    bl_model_info mi;
    bl_training_info ti;
    ck_assert_int_eq(bl_predictor_info(p, &mi), BL_OK);
    ck_assert_int_eq(mi.members, 1);
    ck_assert_int_eq(mi.pretrained, 1);
    ck_assert_int_eq(mi.rows, 36);
    ck_assert_int_eq(bl_predictor_training(p, &ti), BL_OK);
    ck_assert_str_eq(ti.numbers, "binary");
    ck_assert_str_eq(ti.target_scale, "seconds");
    ck_assert_int_ge(ti.val_rows, 0);
    ck_assert_int_eq(ti.finetune_recorded, 0);
    bl_member_info mb;
    ck_assert_int_eq(bl_predictor_member(p, 0, &mb), BL_OK);
    ck_assert_str_eq(mb.numbers, "binary");
    ck_assert_int_eq(bl_predictor_member(p, 1, &mb), BL_ERANGE);
    ck_assert_int_eq(bl_predictor_member(p, -1, &mb), BL_ERANGE);
    /* the stored schema's sources */
    size_t np = bl_predictor_prop_count(p);
    int consts = 0, columns = 0;
    for (size_t i = 0; i < np; i++) {
        bl_prop_source src;
        ck_assert_int_eq(bl_predictor_prop_source(p, i, &src), BL_OK);
        if (strcmp(src.kind, "const") == 0) {
            consts++;
            ck_assert_ptr_nonnull(src.value);
        }
        if (strcmp(src.kind, "column") == 0) {
            columns++;
            ck_assert_uint_eq(src.n_columns, 1);
            ck_assert_ptr_nonnull(bl_predictor_prop_source_column(p, i, 0));
            ck_assert_ptr_null(bl_predictor_prop_source_column(p, i, 1));
        }
        bl_prop_seen_info sn;
        ck_assert_int_eq(bl_predictor_prop_seen_info(p, i, &sn), BL_OK);
        ck_assert_int_eq(sn.recorded, 1);
        ck_assert_int_ge(sn.distinct, 1);
    }
    ck_assert_int_gt(consts, 0);
    ck_assert_int_gt(columns, 0);
    bl_prop_source src;
    ck_assert_int_eq(bl_predictor_prop_source(p, np, &src), BL_ERANGE);
    bl_prop_seen_info sn;
    ck_assert_int_eq(bl_predictor_prop_seen_info(p, np, &sn), BL_ERANGE);
    ck_assert_int_eq(bl_predictor_training(NULL, &ti), BL_EINVAL);
    ck_assert_int_eq(bl_predictor_member(NULL, 0, &mb), BL_EINVAL);

    /* the file: a matching checksum header */
    int present = -1;
    ck_assert_msg(bl_model_file_verify(g_model, &present, &err) == BL_OK, "%s", err.message);
    ck_assert_int_eq(present, 1);
    EXPECT_ERR(bl_model_file_verify(at("missing.h5"), &present, err), BL_EIO, "missing.h5");
    EXPECT_ERR(bl_model_file_verify(g_model, NULL, err), BL_EINVAL, "NULL");
    /* no header: a file of before 0.4.1, or none at all (bl_model_file_open tells) */
    ck_assert_int_eq(bl_model_file_verify(g_tsv, &present, &err), BL_OK);
    ck_assert_int_eq(present, 0);
    bl_model_file *mf = NULL;
    EXPECT_ERR(bl_model_file_open(g_tsv, &mf, err), BL_EFORMAT, "c.tsv");
    EXPECT_ERR(bl_model_file_stamp(NULL, 0, err), BL_EINVAL, "no path");
    EXPECT_ERR(bl_model_file_stamp(g_model, 2, err), BL_EINVAL, "trust_edits");
    ck_assert_msg(bl_model_file_stamp(g_model, 0, &err) == BL_OK, "%s", err.message);

    /* runs through the model; fine-tuning on them; the guard's decision */
    bl_data *runs = NULL;
    ck_assert_msg(bl_runs_load(p, g_runs, NULL, 0, &runs, &err) == BL_OK, "%s", err.message);
    bl_data_summary rs;
    bl_data_summarize(runs, &rs);
    ck_assert_uint_eq(rs.rows, 3);
    ck_assert_uint_eq(rs.contexts, 1);
    bl_predictor *q = NULL;
    EXPECT_ERR(bl_pretrain_data(runs, &o, NULL, &q, err), BL_EINVAL, "bl_data_load");
    bl_tune_opts to;
    bl_tune_opts_init(&to);
    to.max_epochs = 30;
    ck_assert_msg(bl_predictor_finetune_data(p, runs, &to, NULL, &q, &err) == BL_OK, "%s", err.message);
    bl_model_info qi;
    bl_predictor_info(q, &qi);
    ck_assert_int_eq(qi.finetune_runs, 3);
    const char *meth = NULL;
    ck_assert_int_eq(bl_predictor_method(q, &meth, NULL, NULL), BL_OK);
    ck_assert_str_eq(meth, "network"); /* runs inside the pre-trained scale-outs */
    bl_predictor_training(q, &ti);
    ck_assert_int_eq(ti.finetune_recorded, 1);
    bl_predictor_free(q);
    bl_data_free(runs);

    /* runs of other properties: the schema's line named */
    char path[4096];
    snprintf(path, sizeof path, "%s", at("runs-other.schema"));
    write_text(path, "bellamy-schema 1\nscale_out instance_count\nruntime gross_runtime s\n"
                     "property machine_type essential text column machine_type\n");
    EXPECT_ERR(bl_runs_load(p, g_runs, path, 0, &runs, err), BL_EFORMAT, "runs-other.schema");
    EXPECT_ERR(bl_runs_load(p, at("missing.tsv"), NULL, 0, &runs, err), BL_EIO, "missing.tsv");
    EXPECT_ERR(bl_runs_load(NULL, g_runs, NULL, 0, &runs, err), BL_EINVAL, "NULL");
    EXPECT_ERR(bl_runs_load(p, g_runs, NULL, 5, &runs, err), BL_EINVAL, "skip_invalid");
    EXPECT_ERR(bl_runs_load(p, g_runs, NULL, 0, NULL, err), BL_EINVAL, "NULL out");

    /* evaluation: one row per context and scale-out (3 × 6), contexts never pooled; the mean weighs each
     * row once */
    bl_evaluation *ev = NULL;
    ck_assert_msg(bl_evaluate_file(p, g_tsv, NULL, 0, &ev, &err) == BL_OK, "%s", err.message);
    ck_assert_uint_eq(bl_evaluation_count(ev), 18);
    bl_eval_row er;
    double sum = 0;
    for (size_t i = 0; i < 18; i++) {
        ck_assert_int_eq(bl_evaluation_row(ev, i, &er), BL_OK);
        ck_assert(er.context == i / 6 && er.scale_out == 2 + 2 * (double)(i % 6) && er.runs == 2 &&
                  er.measured_mean_s > 0 && isfinite(er.predicted_mean_s));
        ck_assert_double_eq_tol(er.relative_error, fabs(er.predicted_mean_s - er.measured_mean_s) / er.measured_mean_s,
                                1e-15);
        sum += er.relative_error;
    }
    ck_assert_int_eq(bl_evaluation_row(ev, 18, &er), BL_ERANGE);
    ck_assert_double_eq_tol(bl_evaluation_mean_relative_error(ev), sum / 18, 1e-15);
    bl_data_summarize(bl_evaluation_data(ev), &rs);
    ck_assert_uint_eq(rs.rows, 36);
    bl_evaluation_free(ev);
    EXPECT_ERR(bl_evaluate_file(p, at("missing.tsv"), NULL, 0, &ev, err), BL_EIO, "missing.tsv");
    EXPECT_ERR(bl_evaluate_file(p, g_tsv, path, 0, &ev, err), BL_EFORMAT, "runs-other.schema");
    EXPECT_ERR(bl_evaluate_file(NULL, g_tsv, NULL, 0, &ev, err), BL_EINVAL, "NULL");
    ck_assert_ptr_null(ev);
    ck_assert_uint_eq(bl_evaluation_count(NULL), 0);
    ck_assert_int_eq(bl_evaluation_row(NULL, 0, &er), BL_EINVAL);
    ck_assert_ptr_null(bl_evaluation_data(NULL));
    bl_evaluation_free(NULL);
    bl_predictor_free(p);

    /* pre-training errors: the file, the field */
    EXPECT_ERR(bl_pretrain_file(at("missing.tsv"), g_schema, NULL, &o, NULL, NULL, &p, err), BL_EIO, "missing.tsv");
    EXPECT_ERR(bl_pretrain_file(g_tsv, g_schema, NULL, &o, NULL, NULL, NULL, err), BL_EINVAL, "out_path");
    o.trials = 99;
    EXPECT_ERR(bl_pretrain_file(g_tsv, g_schema, NULL, &o, NULL, NULL, &p, err), BL_EINVAL, "trials");
    small_opts(&o);
    bl_data *d = NULL;
    bl_data_opts dopt;
    bl_data_opts_init(&dopt);
    dopt.numbers = BL_NUMBERS_BOTH;
    ck_assert_msg(bl_data_load(g_tsv, g_schema, &dopt, &d, &err) == BL_OK, "%s", err.message);
    EXPECT_ERR(bl_pretrain_data(d, &o, "both", &p, err), BL_EINVAL, "members");
    o.members = 2;
    EXPECT_ERR(bl_pretrain_data(d, &o, "", &p, err), BL_EINVAL, "name");
    EXPECT_ERR(bl_pretrain_data(NULL, &o, NULL, &p, err), BL_EINVAL, "NULL data");
    EXPECT_ERR(bl_pretrain_data(d, &o, NULL, NULL, err), BL_EINVAL, "NULL out");
    bl_data_free(d);
}
END_TEST

/* a progress callback sees the search go on to its end */
static int on_progress(void *ctx, const bl_train_progress *p) {
    long *last = ctx;
    ck_assert_int_le(p->epoch, p->epochs_total);
    ck_assert_int_ge(p->trials_total, 1);
    *last = p->epoch;
    return 0;
}

START_TEST(pretrain_progress) {
    bl_error err = { 0 };
    bl_data *d = NULL;
    ck_assert_msg(bl_data_load(g_tsv, g_schema, NULL, &d, &err) == BL_OK, "%s", err.message);
    bl_train_opts o;
    small_opts(&o);
    long last = -1;
    o.progress = on_progress;
    o.progress_ctx = &last;
    bl_predictor *p = NULL;
    ck_assert_msg(bl_pretrain_data(d, &o, "named", &p, &err) == BL_OK, "%s", err.message);
    ck_assert_str_eq(bl_predictor_name(p), "named");
    ck_assert_int_eq(last, 5);
    bl_predictor_free(p);
    bl_data_free(d);
}
END_TEST

Suite *bl_test_suite(void) {
    Suite *s = suite_create("train_api");
    TCase *tc = tcase_create("train_api");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, corpus_errors);
    tcase_add_test(tc, data_load_and_queries);
    tcase_add_test(tc, data_load_errors);
    tcase_add_test(tc, train_opts_errors);
    tcase_add_test(tc, train_opts_bounds);
    tcase_add_test(tc, train_defaults);
    tcase_add_test(tc, pretrain_finetune_evaluate);
    tcase_add_test(tc, pretrain_progress);
    tcase_add_test(tc, precision_f32);
    suite_add_tcase(s, tc);
    return s;
}
