/* test_eval.c — the evaluation harness (src/eval/): a tiny run on the synthetic corpus writes
 * well-formed splits/predictions/summary files with finite predictions; reading its splits.tsv back
 * (on another thread count) reproduces the predictions exactly; bad split files fail with FILE:LINE
 * messages; bad command lines, and every option out of its bounds, are usage errors before any work;
 * a folder given for a data file (or a file for a folder) is named as such; the intervals and
 * decisions: the baselines' cross-context conformal quantile on constructed cases, decisions' regret,
 * misses and "none meets it" on constructed cases, the new summary columns' values, and a model cache
 * from before the calibration never passing for a calibrated fold model. */
#include "testutil.h"

#include <dirent.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "eval/eval.h"
#include "common/error.h"
#include "data/synth.h"
#include "model/model.h"

/* The synthetic corpus as DIR/synth.tsv + DIR/synth.schema (6 contexts × 6 scale-outs × 3 reps). */
static const char *corpus_dir(void) {
    static char dir[4096];
    if (dir[0]) return dir;
    snprintf(dir, sizeof dir, "%s/corpus", bl_test_tmpdir());
    mkdir(dir, 0777);
    bl_synth_config c;
    bl_synth_config_default(&c);
    c.n_contexts = 6;
    c.seed = 3;
    bl_synth_corpus *corpus = NULL;
    bl_error err;
    ck_assert_int_eq(bl_synth_generate(&c, &corpus, &err), BL_OK);
    ck_assert_int_eq(bl_synth_write(corpus, dir, "synth", &err), BL_OK);
    bl_synth_free(corpus);
    return dir;
}

/* A synthetic corpus of 20 contexts as DIR/synth.tsv + .schema: enough other contexts (19 ≥ 9) for a
 * bounded cross-context 0.9 interval. */
static const char *corpus20_dir(void) {
    static char dir[4096];
    if (dir[0]) return dir;
    snprintf(dir, sizeof dir, "%s/corpus20", bl_test_tmpdir());
    mkdir(dir, 0777);
    bl_synth_config c;
    bl_synth_config_default(&c);
    c.n_contexts = 20;
    c.seed = 5;
    bl_synth_corpus *corpus = NULL;
    bl_error err;
    ck_assert_int_eq(bl_synth_generate(&c, &corpus, &err), BL_OK);
    ck_assert_int_eq(bl_synth_write(corpus, dir, "synth", &err), BL_OK);
    bl_synth_free(corpus);
    return dir;
}

static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    ck_assert_ptr_nonnull(buf);
    ck_assert_int_eq((long)fread(buf, 1, (size_t)n, f), n);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* Splits text into lines in place (no trailing empty line); returns the count. */
static size_t lines_of(char *text, char **lines, size_t cap) {
    size_t n = 0;
    for (char *p = text; *p && n < cap;) {
        char *nl = strchr(p, '\n');
        lines[n++] = p;
        if (!nl) break;
        *nl = '\0';
        p = nl + 1;
    }
    return n;
}

static int count_fields(const char *line) {
    int n = 1;
    for (; *line; line++) n += *line == '\t';
    return n;
}

/* Runs bellamy-eval on the corpus with tiny settings; extra (NULL-terminated) arguments appended. */
static int run_eval(const char *out, const char *threads, const char *splits) {
    const char *argv[64] = { "bellamy-eval", "--data", corpus_dir(), "--schemas", corpus_dir(), "--out", out, "--quiet",
                             "--contexts", "3", "--splits-per-cell", "2", "--max-n", "3", "--epochs", "20", "--grace", "10",
                             "--trials", "2", "--ft-epochs", "40", "--ft-patience", "20", "--seed", "7", "--threads", threads };
    int argc = 28;
    if (splits) { argv[argc++] = "--splits"; argv[argc++] = splits; }
    return bl_eval_main(argc, (char **)argv);
}

#define MAXL 4096

/* The summary's columns from coverage90 on (fields 12..22) of one line. */
typedef struct newcols {
    double cov, cov_b, unb, width, width_med;
    unsigned long decisions;
    double reg_fast, reg_cheap, reg_dl, miss, none;
} newcols;

static newcols parse_new_columns(const char *line) {
    const char *p = line;
    for (int k = 0; k < 11; k++) p = strchr(p, '\t') + 1;
    newcols c;
    ck_assert_int_eq(sscanf(p, "%lf\t%lf\t%lf\t%lf\t%lf\t%lu\t%lf\t%lf\t%lf\t%lf\t%lf", &c.cov, &c.cov_b, &c.unb,
                            &c.width, &c.width_med, &c.decisions, &c.reg_fast, &c.reg_cheap, &c.reg_dl, &c.miss, &c.none), 11);
    return c;
}

/* Sane values: shares in [0, 1] (or NaN), widths > 0, regrets of the fastest and the cheapest choice
 * ≥ 0 (the best is the best under the same means), a deadline regret > −1; the noise floor has none. */
static void check_new_columns(const char *line) {
    newcols c = parse_new_columns(line);
    const int floor = strstr(line, "\tnoise-floor\t") != NULL;
    const double share[] = { c.cov, c.cov_b, c.unb, c.miss, c.none };
    for (size_t k = 0; k < sizeof share / sizeof share[0]; k++)
        ck_assert_msg(isnan(share[k]) || (share[k] >= 0 && share[k] <= 1), "%s: share %g", line, share[k]);
    ck_assert_msg(isnan(c.width) || c.width > 0, "%s", line);
    ck_assert_msg(isnan(c.width_med) || c.width_med > 0, "%s", line);
    ck_assert_msg(isnan(c.reg_fast) || c.reg_fast >= -1e-12, "%s", line);
    ck_assert_msg(isnan(c.reg_cheap) || c.reg_cheap >= -1e-12, "%s", line);
    ck_assert_msg(isnan(c.reg_dl) || c.reg_dl > -1, "%s", line);
    if (floor) {
        ck_assert(isnan(c.cov) && isnan(c.reg_fast) && c.decisions == 0);
    } else if (strstr(line, "\tinterp\t0\t") == NULL) { /* a cell with splits has intervals and decisions */
        ck_assert_msg(!isnan(c.cov) && !isnan(c.unb), "%s", line);
        ck_assert_msg(c.decisions > 0 && !isnan(c.reg_fast) && !isnan(c.reg_cheap), "%s", line);
    }
}

START_TEST(eval_writes_well_formed_files) {
    char out[4096], path[8192];
    snprintf(out, sizeof out, "%s/run1", bl_test_tmpdir());
    ck_assert_int_eq(run_eval(out, "2", NULL), 0);

    static char *lines[MAXL];
    snprintf(path, sizeof path, "%s/splits.tsv", out);
    char *sp = slurp(path);
    size_t ns = lines_of(sp, lines, MAXL);
    ck_assert_str_eq(lines[0], "split_id\talgorithm\tcontext\tn\tkind\ttrain_rows\ttest_row");
    ck_assert_uint_gt(ns, 10);
    size_t n_interp = 0, n_extrap = 0;
    for (size_t i = 1; i < ns; i++) {
        ck_assert_int_eq(count_fields(lines[i]), 7);
        char id[128], algo[64], kind[16], train[256];
        int n;
        unsigned long test;
        char *ctx_end = strchr(strchr(lines[i], '\t') + 1, '\t'); /* skip id, algorithm */
        ck_assert_int_eq(sscanf(lines[i], "%127[^\t]\t%63[^\t]", id, algo), 2);
        ck_assert_str_eq(algo, "synth");
        ck_assert_int_eq(sscanf(strchr(ctx_end + 1, '\t') + 1, "%d\t%15[^\t]\t%255[^\t]\t%lu", &n, kind, train, &test), 4);
        ck_assert(n >= 1 && n <= 3);
        ck_assert(strcmp(kind, "interp") == 0 || strcmp(kind, "extrap") == 0);
        if (kind[0] == 'i') { n_interp++; ck_assert_int_ge(n, 2); } else n_extrap++;
        int commas = 0;
        for (char *c = train; *c; c++) commas += *c == ',';
        ck_assert_int_eq(commas + 1, n);
        ck_assert_uint_lt(test, 6 * 6 * 3);
    }
    /* 3 contexts × (n=1: extrap; n=2,3: both) × 2 splits; 6 scale-outs leave room for every cell */
    ck_assert_uint_eq(n_extrap, 3 * 3 * 2);
    ck_assert_uint_eq(n_interp, 3 * 2 * 2);

    snprintf(path, sizeof path, "%s/predictions.tsv", out);
    char *pr = slurp(path);
    static char *pl[4 * MAXL];
    size_t np = lines_of(pr, pl, 4 * MAXL);
    ck_assert_str_eq(pl[0], "split_id\tmethod\tpredicted\tactual\tlo90\thi90");
    ck_assert_uint_eq(np - 1, BL_EVAL_N_METHODS * (ns - 1));
    /* the noise floor, recomputed here: the median of the test run's repetitions (the other runs of
     * its context at its scale-out; the corpus has 3 of each, so the mean of the other two) */
    char tsv[8192], schema[8192];
    snprintf(tsv, sizeof tsv, "%s/synth.tsv", corpus_dir());
    snprintf(schema, sizeof schema, "%s/synth.schema", corpus_dir());
    bl_dataset *ds = NULL;
    bl_error err;
    ck_assert_msg(bl_dataset_load(tsv, schema, 0, NULL, &ds, &err) == BL_OK, "%s", err.message);
    size_t n_floor = 0;
    for (size_t i = 1; i < np; i++) {
        char id[128], method[32];
        double pred, actual;
        double lo, hi;
        ck_assert_int_eq(count_fields(pl[i]), 6);
        ck_assert_int_eq(sscanf(pl[i], "%127[^\t]\t%31[^\t]\t%lf\t%lf\t%lf\t%lf", id, method, &pred, &actual, &lo, &hi), 6);
        ck_assert_msg(isfinite(pred), "prediction %s %s not finite", id, method);
        ck_assert(actual > 0);
        ck_assert_int_ge(bl_eval_method_index(method), 0);
        /* every predictor has an interval around its prediction (bounded or, with this few contexts,
         * unbounded: 0 and inf); the noise floor none */
        if (strcmp(method, "noise-floor") == 0) ck_assert(isnan(lo) && isnan(hi));
        else ck_assert_msg(lo >= 0 && lo <= pred && hi >= pred, "%s %s: [%g, %g] around %g", id, method, lo, hi, pred);
        if (strcmp(method, "noise-floor") != 0) continue;
        unsigned long test = ULONG_MAX; /* the split's test row, from splits.tsv */
        for (size_t j = 1; j < ns && test == ULONG_MAX; j++)
            if (strncmp(lines[j], id, strlen(id)) == 0 && lines[j][strlen(id)] == '\t')
                test = strtoul(strrchr(lines[j], '\t') + 1, NULL, 10);
        ck_assert_msg(test != ULONG_MAX, "split %s not in splits.tsv", id);
        size_t t = SIZE_MAX;
        for (size_t r = 0; r < ds->n_rows; r++)
            if (ds->src_row[r] == test) t = r;
        ck_assert(t != SIZE_MAX);
        ck_assert_double_eq(actual, ds->runtime_s[t]);
        double sum = 0.0;
        int reps = 0;
        for (size_t r = 0; r < ds->n_rows; r++)
            if (r != t && ds->context[r] == ds->context[t] && ds->scale_out[r] == ds->scale_out[t]) {
                sum += ds->runtime_s[r];
                reps++;
            }
        ck_assert_int_eq(reps, 2);
        ck_assert_double_eq_tol(pred, sum / 2, 1e-12 * sum);
        n_floor++;
    }
    ck_assert_uint_eq(n_floor, ns - 1);
    bl_dataset_free(ds);

    snprintf(path, sizeof path, "%s/summary.tsv", out);
    char *su = slurp(path);
    size_t nsu = lines_of(su, lines, MAXL);
    ck_assert_str_eq(lines[0], "algorithm\tmethod\tn\tkind\tsplits\tfailed\tmre_mean\tmre_median\tmre_p90\tmae_s\tfit_ms_mean"
                               "\tcoverage90\tcoverage90_bounded\tunbounded_share\twidth90_mean\twidth90_median\tdecisions"
                               "\tregret_fastest_runtime\tregret_cheapest_cost\tregret_deadline_cost\tdeadline_miss"
                               "\tdeadline_none_meets");
    /* (synth + ALL) × 5 methods × 2 kinds × (n = 1..3 and "2-3") */
    ck_assert_uint_eq(nsu - 1, 2 * BL_EVAL_N_METHODS * 2 * 4);
    int saw_all_ernest = 0;
    for (size_t i = 1; i < nsu; i++) {
        ck_assert_int_eq(count_fields(lines[i]), 22);
        check_new_columns(lines[i]);
        char algo[32], method[32], n[8], kind[8];
        unsigned long count, failed;
        double mre;
        ck_assert_int_eq(sscanf(lines[i], "%31s %31s %7s %7s %lu %lu %lf", algo, method, n, kind, &count, &failed, &mre), 7);
        ck_assert_uint_eq(failed, 0);
        if (strcmp(algo, "ALL") == 0 && strcmp(method, "ernest") == 0 && strcmp(n, "3") == 0 && kind[0] == 'e') {
            saw_all_ernest = 1;
            ck_assert_uint_eq(count, 6);
            ck_assert(mre >= 0 && mre < 1); /* Ernest's own model family: small error on 3 runs */
        }
    }
    ck_assert(saw_all_ernest);

    snprintf(path, sizeof path, "%s/pretrain.tsv", out);
    char *pt = slurp(path);
    ck_assert_uint_ge(lines_of(pt, lines, MAXL), 2);
    snprintf(path, sizeof path, "%s/plot.gp", out);
    ck_assert_int_eq(access(path, R_OK), 0);
    snprintf(path, sizeof path, "%s/coverage.gp", out);
    ck_assert_int_eq(access(path, R_OK), 0);
    snprintf(path, sizeof path, "%s/coverage.dat", out);
    ck_assert_int_eq(access(path, R_OK), 0);
    if (access("/usr/bin/gnuplot", X_OK) == 0) {
        snprintf(path, sizeof path, "%s/mre.svg", out);
        ck_assert_int_eq(access(path, R_OK), 0);
        snprintf(path, sizeof path, "%s/coverage.svg", out);
        ck_assert_int_eq(access(path, R_OK), 0);
    }
    free(sp); free(pr); free(su); free(pt);
}
END_TEST

/* Predictions of one method, in file order, as text lines joined. */
static char *method_lines(const char *pred_path, const char *method) {
    char *text = slurp(pred_path);
    size_t cap = strlen(text) + 1, used = 0;
    char *out = calloc(cap, 1);
    ck_assert_ptr_nonnull(out);
    static char *l[4 * MAXL];
    size_t n = lines_of(text, l, 4 * MAXL);
    for (size_t i = 1; i < n; i++) {
        const char *m = strchr(l[i], '\t') + 1;
        if (strncmp(m, method, strlen(method)) == 0 && m[strlen(method)] == '\t') {
            size_t len = strlen(l[i]);
            memcpy(out + used, l[i], len);
            used += len;
            out[used++] = '\n';
        }
    }
    free(text);
    return out;
}

START_TEST(eval_split_file_reproduces_predictions) {
    char out1[4096], out2[4096], splits[8192], p1[8192], p2[8192];
    snprintf(out1, sizeof out1, "%s/rt1", bl_test_tmpdir());
    snprintf(out2, sizeof out2, "%s/rt2", bl_test_tmpdir());
    ck_assert_int_eq(run_eval(out1, "2", NULL), 0);
    snprintf(splits, sizeof splits, "%s/splits.tsv", out1);
    ck_assert_int_eq(run_eval(out2, "1", splits), 0); /* another thread count, too */
    snprintf(p1, sizeof p1, "%s/splits.tsv", out2);
    char *a = slurp(splits), *b = slurp(p1);
    ck_assert_str_eq(a, b); /* written back unchanged */
    free(a); free(b);
    snprintf(p1, sizeof p1, "%s/predictions.tsv", out1);
    snprintf(p2, sizeof p2, "%s/predictions.tsv", out2);
    const char *methods[] = { "ernest", "bell", "bellamy", "bellamy-scratch" };
    for (int m = 0; m < 4; m++) {
        char *x = method_lines(p1, methods[m]), *y = method_lines(p2, methods[m]);
        ck_assert_uint_gt(strlen(x), 0);
        ck_assert_msg(strcmp(x, y) == 0, "%s predictions differ after reading the splits back", methods[m]);
        free(x); free(y);
    }
}
END_TEST

/* Loads the corpus into a fresh harness. */
static void load(bl_eval *ev) {
    bl_eval_opts o;
    bl_eval_opts_default(&o);
    bl_error err;
    ck_assert_int_eq(bl_eval_init(ev, &o, &err), BL_OK);
    char data[8192], schema[8192];
    snprintf(data, sizeof data, "%s/synth.tsv", corpus_dir());
    snprintf(schema, sizeof schema, "%s/synth.schema", corpus_dir());
    ck_assert_int_eq(bl_eval_add_algo(ev, "synth", data, schema, NULL, NULL, &err), BL_OK);
    /* the layout the cases below rely on: context 0 is rows 0..17, scale-outs 2,4,…,12 × 3 reps */
    const bl_dataset *ds = ev->algos[0].ds;
    ck_assert_double_eq(ds->scale_out[0], 2);
    ck_assert_double_eq(ds->scale_out[3], 4);
    ck_assert_double_eq(ds->scale_out[9], 8);
    ck_assert_double_eq(ds->scale_out[15], 12);
    ck_assert_uint_eq(ds->context[17], 0);
    ck_assert_uint_eq(ds->context[18], 1);
}

static const char HDR[] = "split_id\talgorithm\tcontext\tn\tkind\ttrain_rows\ttest_row\n";

/* Writes text to a split file, reads it, expects failure whose message contains want. */
static void expect_bad(const char *text, const char *want) {
    char path[8192];
    snprintf(path, sizeof path, "%s/bad.tsv", bl_test_tmpdir());
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
    bl_eval ev;
    load(&ev);
    bl_error err;
    bl_clearerr(&err);
    bl_status st = bl_eval_read_splits(&ev, path, &err);
    ck_assert_int_ne(st, BL_OK);
    ck_assert_msg(strstr(err.message, want) != NULL, "message '%s' lacks '%s'", err.message, want);
    ck_assert_msg(strstr(err.message, "bad.tsv:") != NULL, "message '%s' lacks the file name", err.message);
    bl_eval_free(&ev);
}

START_TEST(eval_split_file_errors) {
    char buf[1024];
    expect_bad("split_id algorithm context n kind train_rows test_row\n", "bad.tsv:1: expected the header");
    expect_bad("", "no header");
    expect_bad(HDR, "no splits");
#define BAD(line, want) do { snprintf(buf, sizeof buf, "%s%s", HDR, line); expect_bad(buf, want); } while (0)
    BAD("a\tsynth\tc\t2\tinterp\t0,9\n", "bad.tsv:2: 6 fields, expected 7");
    BAD("a\tsynth\tc\t2\tinterp\t0,9\t3\textra\n", "bad.tsv:2: 8 fields");
    BAD("\tsynth\tc\t2\tinterp\t0,9\t3\n", "bad.tsv:2: empty split_id");
    BAD("a\tgrep\tc\t2\tinterp\t0,9\t3\n", "bad.tsv:2: unknown algorithm 'grep'");
    BAD("a\tsynth\tc\ttwo\tinterp\t0,9\t3\n", "bad.tsv:2: n 'two'");
    BAD("a\tsynth\tc\t0\tinterp\t0,9\t3\n", "bad.tsv:2: n '0'");
    BAD("a\tsynth\tc\t2\tmiddle\t0,9\t3\n", "bad.tsv:2: kind 'middle'");
    BAD("a\tsynth\tc\t2\tinterp\t0,x9\t3\n", "bad.tsv:2: train row 'x9' is not a row number");
    BAD("a\tsynth\tc\t2\tinterp\t0,-9\t3\n", "bad.tsv:2: train row '-9'");
    BAD("a\tsynth\tc\t2\tinterp\t0,,9\t3\n", "bad.tsv:2: train row ''");
    BAD("a\tsynth\tc\t2\tinterp\t0,99999\t3\n", "bad.tsv:2: train row 99999 is not a data row");
    BAD("a\tsynth\tc\t2\tinterp\t0,9\t108\n", "bad.tsv:2: test row 108 is not a data row");
    BAD("a\tsynth\tc\t2\tinterp\t0,9\t3.0\n", "bad.tsv:2: test row '3.0'");
    BAD("a\tsynth\tc\t2\tinterp\t0\t3\n", "bad.tsv:2: 1 train_rows but n = 2");
    BAD("a\tsynth\tc\t1\textrap\t0,9\t3\n", "bad.tsv:2: more than n = 1 train_rows");
    BAD("a\tsynth\tc\t2\tinterp\t0,0\t3\n", "listed twice");
    BAD("a\tsynth\tc\t2\textrap\t0,9\t9\n", "bad.tsv:2: the test row is also a train row");
    BAD("a\tsynth\tc\t2\tinterp\t0,27\t3\n", "bad.tsv:2: train row 27 and test row 3 belong to different contexts");
    BAD("a\tsynth\tc\t2\tinterp\t3,9\t15\n", "bad.tsv:2: kind interp but the test scale-out 12 is not strictly inside");
    BAD("a\tsynth\tc\t2\textrap\t0,9\t3\n", "bad.tsv:2: kind extrap but the test scale-out 4 is strictly inside");
    BAD("a\tsynth\tc\t2\tinterp\t0,9\t3\n# comment\n\na\tsynth\tc\t2\textrap\t3,6\t15\n", "bad.tsv:5: split_id 'a' used twice");
#undef BAD
}
END_TEST

/* Runs of one scale-out only: no split can be drawn, and the error names the data file. */
START_TEST(eval_no_split_names_the_file) {
    char data[8192], schema[8192];
    snprintf(data, sizeof data, "%s/one-scale-out.tsv", bl_test_tmpdir());
    snprintf(schema, sizeof schema, "%s/synth.schema", corpus_dir());
    FILE *f = fopen(data, "w");
    ck_assert_ptr_nonnull(f);
    fputs("instance_count\tmachine_type\tslots\tmemory\tdata_size_MB\titerations\tgross_runtime\n"
          "4\tc1.large\t16\t16000\t1000\t1\t100\n4\tc1.large\t16\t16000\t1000\t1\t110\n", f);
    fclose(f);
    bl_eval_opts o;
    bl_eval_opts_default(&o);
    bl_eval ev;
    bl_error err;
    ck_assert_int_eq(bl_eval_init(&ev, &o, &err), BL_OK);
    ck_assert_msg(bl_eval_add_algo(&ev, "synth", data, schema, NULL, NULL, &err) == BL_OK, "%s", err.message);
    ck_assert_int_eq(bl_eval_draw_splits(&ev, &err), BL_EINVAL);
    ck_assert_msg(strstr(err.message, data) && strstr(err.message, "two or more distinct scale-outs"), "%s", err.message);
    bl_eval_free(&ev);
}
END_TEST

/* --fold-by: contexts that share the property's value share a fold (so a fold model never saw the
 * values of the contexts it is evaluated on), several folds are used, and a property that does not
 * exist, is a cluster total, is optional, or has one value is an error naming the flag. */
START_TEST(eval_folds_by_property) {
    char data[8192], schema[8192];
    snprintf(data, sizeof data, "%s/synth.tsv", corpus_dir());
    snprintf(schema, sizeof schema, "%s/synth.schema", corpus_dir());
    const char *props[] = {"data_size_MB", "machine_type"};
    for (int k = 0; k < 2; k++) {
        bl_eval_opts o;
        bl_eval_opts_default(&o);
        o.fold_by = props[k];
        bl_eval ev;
        bl_error err;
        ck_assert_int_eq(bl_eval_init(&ev, &o, &err), BL_OK);
        ck_assert_msg(bl_eval_add_algo(&ev, "synth", data, schema, NULL, NULL, &err) == BL_OK, "%s", err.message);
        const bl_eval_algo *a = &ev.algos[0];
        const bl_dataset *ds = a->ds;
        long p = bl_dataset_find_prop(ds, props[k]);
        ck_assert_int_ge(p, 0);
        const uint32_t *val = ds->props[p].row_value;
        int used[16] = {0}, shared = 0;
        for (size_t c = 0; c < ds->n_contexts; c++) {
            ck_assert(a->ctx_fold[c] >= 0 && a->ctx_fold[c] < a->n_folds);
            used[a->ctx_fold[c]] = 1;
            for (size_t d = 0; d < ds->n_contexts; d++) {
                int same = val[ds->contexts[c].rows[0]] == val[ds->contexts[d].rows[0]];
                if (same) ck_assert_int_eq(a->ctx_fold[c], a->ctx_fold[d]);
                shared += same && c != d;
            }
        }
        ck_assert_int_ge(used[0] + used[1] + used[2], 2);
        if (k == 1) ck_assert_int_gt(shared, 0); /* machine types repeat: the grouping is exercised */
        bl_eval_free(&ev);
    }
    const char *bad[] = {"no_such_property", "memory", "job_type", "environment"}; /* absent, a total, optional, one value */
    for (int k = 0; k < 4; k++) {
        bl_eval_opts o;
        bl_eval_opts_default(&o);
        o.fold_by = bad[k];
        bl_eval ev;
        bl_error err;
        ck_assert_int_eq(bl_eval_init(&ev, &o, &err), BL_OK);
        ck_assert_int_ne(bl_eval_add_algo(&ev, "synth", data, schema, NULL, NULL, &err), BL_OK);
        ck_assert_msg(strstr(err.message, "--fold-by"), "%s", err.message);
        bl_eval_free(&ev);
    }
}
END_TEST

START_TEST(eval_split_file_valid_groups) {
    char path[8192];
    snprintf(path, sizeof path, "%s/good.tsv", bl_test_tmpdir());
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "# a comment\n%s\na\tsynth\tx\t2\tinterp\t0,9\t3\r\nb\tsynth\tx\t2\textrap\t0,9\t15\n"
               "c\tsynth\tx\t1\textrap\t4\t15\n", HDR);
    fclose(f);
    bl_eval ev;
    load(&ev);
    bl_error err;
    ck_assert_int_eq(bl_eval_read_splits(&ev, path, &err), BL_OK);
    ck_assert_uint_eq(ev.n_splits, 3);
    ck_assert_uint_eq(ev.n_groups, 2); /* a and b share their training rows: fitted once */
    ck_assert_uint_eq(ev.splits[0].group, ev.splits[1].group);
    ck_assert_uint_ne(ev.splits[0].group, ev.splits[2].group);
    ck_assert_int_eq(ev.splits[0].kind, BL_EVAL_INTERP);
    ck_assert_int_eq(ev.splits[1].kind, BL_EVAL_EXTRAP);
    ck_assert_uint_eq(ev.splits[2].train[0], 4);
    bl_eval_free(&ev);
}
END_TEST

START_TEST(eval_command_line_errors) {
    char out[4096];
    snprintf(out, sizeof out, "%s/cli", bl_test_tmpdir());
    const char *no_out[] = { "bellamy-eval", "--data", corpus_dir(), "--schemas", corpus_dir() };
    ck_assert_int_eq(bl_eval_main(5, (char **)no_out), 2);
    const char *bad_method[] = { "bellamy-eval", "--data", corpus_dir(), "--schemas", corpus_dir(), "--out", out,
                                 "--methods", "ernest,oracle" };
    ck_assert_int_eq(bl_eval_main(9, (char **)bad_method), 2);
    const char *bad_algo[] = { "bellamy-eval", "--data", corpus_dir(), "--schemas", corpus_dir(), "--out", out,
                               "--algorithms", "grep" };
    ck_assert_int_eq(bl_eval_main(9, (char **)bad_algo), 2);
    const char *no_schema[] = { "bellamy-eval", "--data", corpus_dir(), "--out", out };
    ck_assert_int_eq(bl_eval_main(5, (char **)no_schema), 2);
    char missing[4096];
    snprintf(missing, sizeof missing, "%s/nonexistent.tsv", bl_test_tmpdir());
    const char *bad_splits[] = { "bellamy-eval", "--data", corpus_dir(), "--schemas", corpus_dir(), "--out", out,
                                 "--splits", missing, "--quiet" };
    ck_assert_int_eq(bl_eval_main(10, (char **)bad_splits), 1);
    /* fine-tuning and validation options out of their ranges or choices */
    const char *bad_opts[][2] = { { "--ft-stop", "never" }, { "--ft-cv-epochs", "0" }, { "--ft-fixed-epochs", "-1" },
                                  { "--ft-fixed-epochs", "999999" }, { "--val-split", "rows" } };
    for (size_t i = 0; i < sizeof bad_opts / sizeof bad_opts[0]; i++) {
        const char *argv[] = { "bellamy-eval", "--data", corpus_dir(), "--schemas", corpus_dir(), "--out", out,
                               bad_opts[i][0], bad_opts[i][1] };
        ck_assert_msg(bl_eval_main(9, (char **)argv) == 2, "%s %s accepted", bad_opts[i][0], bad_opts[i][1]);
    }
}
END_TEST

static int run_eval_stderr(int argc, const char **argv, char **msg);

/* --out naming a file: said as such, not as "cannot create the output folder (File exists)". */
START_TEST(eval_out_that_is_a_file) {
    char out[4096];
    snprintf(out, sizeof out, "%s/a-file", bl_test_tmpdir());
    FILE *f = fopen(out, "w");
    ck_assert_ptr_nonnull(f);
    fclose(f);
    const char *argv[] = { "bellamy-eval", "--data", corpus_dir(), "--schemas", corpus_dir(), "--out", out, "--quick",
                           "--quiet", "--methods", "ernest" };
    char *msg = NULL;
    ck_assert_int_eq(run_eval_stderr(11, argv, &msg), 1);
    ck_assert_msg(strstr(msg, "is a file, not a folder"), "%s", msg);
    free(msg);
}
END_TEST

/* Runs bl_eval_main with stderr sent to a file; returns the exit status and the text (malloc'd) in *msg. */
static int run_eval_stderr(int argc, const char **argv, char **msg) {
    char path[4096];
    snprintf(path, sizeof path, "%s/stderr.txt", bl_test_tmpdir());
    fflush(stderr);
    int saved = dup(STDERR_FILENO);
    ck_assert_int_ge(saved, 0);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_ge(dup2(fd, STDERR_FILENO), 0);
    close(fd);
    int rc = bl_eval_main(argc, (char **)argv);
    fflush(stderr);
    ck_assert_int_ge(dup2(saved, STDERR_FILENO), 0);
    close(saved);
    *msg = slurp(path);
    return rc;
}

/* The readable table of one algorithm: its own panel only, never an 'ALL' panel repeating it, and the
 * numbers said to be fractions (issue 24: the README quotes percent). Ernest alone: seconds. */
START_TEST(eval_table_of_one_algorithm) {
    char out[4096], path[4200];
    snprintf(out, sizeof out, "%s/one-algo", bl_test_tmpdir());
    snprintf(path, sizeof path, "%s/stdout.txt", bl_test_tmpdir());
    const char *argv[] = { "bellamy-eval", "--data", corpus_dir(), "--schemas", corpus_dir(), "--out", out, "--quiet",
                           "--methods", "ernest", "--contexts", "2", "--splits-per-cell", "1", "--max-n", "3" };
    fflush(stdout);
    int saved = dup(STDOUT_FILENO);
    ck_assert_int_ge(saved, 0);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_ge(dup2(fd, STDOUT_FILENO), 0);
    close(fd);
    int rc = bl_eval_main((int)(sizeof argv / sizeof argv[0]), (char **)argv);
    fflush(stdout);
    ck_assert_int_ge(dup2(saved, STDOUT_FILENO), 0);
    close(saved);
    ck_assert_int_eq(rc, 0);
    char *text = slurp(path);
    ck_assert_msg(strstr(text, "\nMean relative error, as a fraction (0.05 = 5 %; splits in parentheses)\n") &&
                  strstr(text, "\nsynth (") && !strstr(text, "\nALL"), "%s", text);
    free(text);
}
END_TEST

/* A folder where a data file belongs (and a file where a folder belongs) is named as such, before
 * any work, instead of reaching the reader ("cannot tell the delimiter from the file name"). */
START_TEST(eval_folder_for_a_file) {
    char out[4096], tsv[4200], sch[4200];
    snprintf(out, sizeof out, "%s/folder-args", bl_test_tmpdir());
    snprintf(tsv, sizeof tsv, "%s/synth.tsv", corpus_dir());
    snprintf(sch, sizeof sch, "%s/synth.schema", corpus_dir());
    char *msg = NULL;
    {
        const char *argv[] = { "bellamy-eval", "--data", ".", "--schema", sch, "--out", out, "--quiet" };
        ck_assert_int_eq(run_eval_stderr(8, argv, &msg), 1);
        ck_assert_msg(strstr(msg, "bellamy-eval: --data .: is a folder, not a data file") != NULL, "%s", msg);
        ck_assert_msg(strstr(msg, "delimiter") == NULL, "%s", msg);
        free(msg);
    }
    {
        const char *argv[] = { "bellamy-eval", "--pretrain-data", corpus_dir(), "--pretrain-schema", sch, "--data", tsv,
                               "--schema", sch, "--out", out, "--quiet" };
        ck_assert_int_eq(run_eval_stderr(12, argv, &msg), 1);
        ck_assert_msg(strstr(msg, "--pretrain-data") != NULL && strstr(msg, "is a folder, not a data file") != NULL,
                      "%s", msg);
        free(msg);
    }
    {
        const char *argv[] = { "bellamy-eval", "--data", tsv, "--schema", corpus_dir(), "--out", out, "--quiet" };
        ck_assert_int_eq(run_eval_stderr(8, argv, &msg), 1);
        ck_assert_msg(strstr(msg, "--schema ") != NULL && strstr(msg, "is a folder") != NULL, "%s", msg);
        free(msg);
    }
    {
        const char *argv[] = { "bellamy-eval", "--data", tsv, "--schemas", corpus_dir(), "--out", out, "--quiet" };
        ck_assert_int_eq(run_eval_stderr(8, argv, &msg), 1);
        ck_assert_msg(strstr(msg, "--data ") != NULL && strstr(msg, "not a folder") != NULL, "%s", msg);
        free(msg);
    }
    ck_assert_msg(access(out, F_OK) != 0, "the run started");
}
END_TEST

/* Every option out of the library's or bellamy-train's bounds is a usage error up front: before the
 * data is split or anything trains. The run only fits Ernest (no pre-training, seconds), so an option
 * that is not checked shows as a run that succeeds (or fails later, with exit status 1). */
/* The model cache: a file given as the cache is refused before any work; a changed schema gives new
 * cache files (its models would differ), never the old ones; a failed run leaves no stale results. */
START_TEST(eval_model_cache_follows_the_schema) {
    char out[4096], cache[4200], sch2[4200], tsv[4200], sch[4200];
    snprintf(out, sizeof out, "%s/cache-run", bl_test_tmpdir());
    snprintf(cache, sizeof cache, "%s/cache", bl_test_tmpdir());
    snprintf(tsv, sizeof tsv, "%s/synth.tsv", corpus_dir());
    snprintf(sch, sizeof sch, "%s/synth.schema", corpus_dir());
    snprintf(sch2, sizeof sch2, "%s/synth-copy.schema", bl_test_tmpdir());
    char cmd[13000];
    snprintf(cmd, sizeof cmd, "cp '%s' '%s' && echo '# the same schema, other bytes' >> '%s'", sch, sch2, sch2);
    ck_assert_int_eq(system(cmd), 0);
    const char *schemas[2] = { sch, sch2 };
    int files[2];
    for (int k = 0; k < 2; k++) {
        const char *argv[] = { "bellamy-eval", "--data", tsv, "--schema", schemas[k], "--out", out, "--quiet",
                               "--methods", "bellamy", "--members", "1", "--contexts", "3", "--splits-per-cell", "1",
                               "--max-n", "2", "--epochs", "10", "--grace", "5", "--trials", "1", "--model-cache", cache };
        ck_assert_int_eq(bl_eval_main((int)(sizeof argv / sizeof argv[0]), (char **)argv), 0);
        files[k] = 0;
        DIR *d = opendir(cache);
        ck_assert_ptr_nonnull(d);
        for (struct dirent *de; (de = readdir(d));) files[k] += strstr(de->d_name, ".h5") != NULL;
        closedir(d);
    }
    ck_assert_int_gt(files[0], 0);
    ck_assert_int_eq(files[1], 2 * files[0]); /* the second schema's models are its own */
    /* a file as the cache: refused before the splits are drawn */
    char afile[4200], splits[4300];
    snprintf(afile, sizeof afile, "%s/not-a-folder", bl_test_tmpdir());
    FILE *f = fopen(afile, "w");
    fclose(f);
    snprintf(out, sizeof out, "%s/cache-run2", bl_test_tmpdir());
    snprintf(splits, sizeof splits, "%s/splits.tsv", out);
    const char *argv2[] = { "bellamy-eval", "--data", tsv, "--schema", sch, "--out", out, "--quiet", "--model-cache", afile };
    ck_assert_int_eq(bl_eval_main((int)(sizeof argv2 / sizeof argv2[0]), (char **)argv2), 1);
    ck_assert_int_ne(access(splits, F_OK), 0);
    /* an earlier run's results go before a new run starts, so a run that fails leaves none behind */
    char stale[4300];
    snprintf(stale, sizeof stale, "%s/summary.tsv", out);
    f = fopen(stale, "w");
    fputs("old\n", f);
    fclose(f);
    char junk[4300];
    snprintf(junk, sizeof junk, "%s/junk-splits.tsv", bl_test_tmpdir());
    f = fopen(junk, "w");
    fputs("not a splits file\n", f);
    fclose(f);
    const char *argv3[] = { "bellamy-eval", "--data", tsv, "--schema", sch, "--out", out, "--quiet", "--splits", junk };
    ck_assert_int_ne(bl_eval_main((int)(sizeof argv3 / sizeof argv3[0]), (char **)argv3), 0);
    ck_assert_int_ne(access(stale, F_OK), 0);
}
END_TEST

/* ---- intervals and decisions --------------------------------------------------------------------- */

/* The group-weighted conformal quantile (models/README.md §P10 step 5) on cases worked by hand. */
START_TEST(eval_group_quantile_exact) {
    double sc[40];
    size_t gr[40];
    /* 19 groups of one score each, 1..19: need = 0.9 · 20 = 18, so the 18th smallest */
    for (size_t i = 0; i < 19; i++) {
        sc[i] = (double)(19 - i); /* any order */
        gr[i] = 100 + i;          /* any labels */
    }
    ck_assert_double_eq(bl_eval_group_quantile(sc, gr, 19, 0.9), 18.0);
    /* 9 groups: need = 9 = G, the largest; 8 groups: need 8.1 > 8, unbounded */
    for (size_t i = 0; i < 9; i++) { sc[i] = 0.1 * (double)(i + 1); gr[i] = i; }
    ck_assert_double_eq_tol(bl_eval_group_quantile(sc, gr, 9, 0.9), 0.9, 1e-15);
    ck_assert(isinf(bl_eval_group_quantile(sc, gr, 8, 0.9)));
    ck_assert(isinf(bl_eval_group_quantile(sc, gr, 0, 0.9)));
    /* each group weighs 1 however many scores it has: 18 groups of one score (1..18) and a 19th with
     * two, 0.5 and 100 (0.5 each). Ascending: 0.5 (cum 0.5), 1 (1.5), ..., k (k + 0.5): need 18 is
     * reached at k = 18 (18.5), not at 17 (17.5). At coverage 0.95 (need 19 = G) the cumulative weight
     * at 18 is 18.5, so it takes the last score, 100 (19.0) */
    for (size_t i = 0; i < 18; i++) { sc[i] = (double)(i + 1); gr[i] = i; }
    sc[18] = 0.5; gr[18] = 18;
    sc[19] = 100; gr[19] = 18;
    ck_assert_double_eq(bl_eval_group_quantile(sc, gr, 20, 0.9), 18.0);
    ck_assert_double_eq(bl_eval_group_quantile(sc, gr, 20, 0.95), 100.0);
    /* two groups of many scores each vs their weight: G = 2, need 2.7 > 2 at 0.9: unbounded */
    for (size_t i = 0; i < 30; i++) { sc[i] = (double)i; gr[i] = i % 2; }
    ck_assert(isinf(bl_eval_group_quantile(sc, gr, 30, 0.9)));
    /* coverage 0.5 of those two: need 1.5: the 30 scores weigh 1/15 each, ascending 0, 1, 2, ...; the
     * running sum reaches 1.5 · (1 − 1e-12) at the 23rd score (22 · 1/15 = 1.4667 < 1.5 ≤ 23/15) */
    ck_assert_double_eq(bl_eval_group_quantile(sc, gr, 30, 0.5), 22.0);
}
END_TEST

/* Loads the 20-context corpus and draws every context's splits (n = 1..2, 2 per cell). */
static void load20(bl_eval *ev, size_t contexts) {
    bl_eval_opts o;
    bl_eval_opts_default(&o);
    o.contexts = contexts;
    o.splits_per_cell = 2;
    o.max_n = 2;
    o.methods = 1u << BL_EVAL_ERNEST;
    bl_error err;
    ck_assert_int_eq(bl_eval_init(ev, &o, &err), BL_OK);
    char data[8192], schema[8192];
    snprintf(data, sizeof data, "%s/synth.tsv", corpus20_dir());
    snprintf(schema, sizeof schema, "%s/synth.schema", corpus20_dir());
    ck_assert_int_eq(bl_eval_add_algo(ev, "synth", data, schema, NULL, NULL, &err), BL_OK);
    ck_assert_int_eq(bl_eval_draw_splits(ev, &err), BL_OK);
}

/* The cross-context interval of a baseline: with Ernest's errors set by hand (context c's first split of
 * a cell off by 0.01·(c + 1), its second by 1 + 0.01·(c + 1), in ln), a split's q is the 0.9 quantile of
 * the OTHER 19 contexts' errors of its n and kind, each context weighing 1 (0.5 per split): the 19 small
 * ones sum to 9.5, so need = 0.9 · 20 = 18 takes 17 of the large ones — the 17th smallest large error
 * of the others. Interpolation cells, set to exact predictions, are a cell of their own (q = 0); with 6
 * contexts (5 others) every interval is unbounded. */
START_TEST(eval_cross_context_interval_exact) {
    bl_eval ev;
    load20(&ev, 0);
    const bl_dataset *ds = ev.algos[0].ds;
    ck_assert_uint_eq(ds->n_contexts, 20);
    for (size_t i = 0; i < ev.n_splits; i++) {
        bl_eval_split *s = &ev.splits[i];
        const double y = ds->runtime_s[s->test];
        const int second = s->id[strlen(s->id) - 1] == '1'; /* ...-e00 / -e01 */
        const double e = (second ? 1.0 : 0.0) + 0.01 * (double)(s->context + 1);
        s->pred[BL_EVAL_ERNEST] = s->kind == BL_EVAL_INTERP ? y : y / exp(e);
    }
    bl_error err;
    ck_assert_int_eq(bl_eval_intervals(&ev, &err), BL_OK);
    size_t checked = 0;
    for (size_t i = 0; i < ev.n_splits; i++) {
        const bl_eval_split *s = &ev.splits[i];
        const double p = s->pred[BL_EVAL_ERNEST];
        if (s->kind == BL_EVAL_INTERP) {
            ck_assert_double_eq_tol(s->lo[BL_EVAL_ERNEST], p, 1e-12 * p);
            ck_assert_double_eq_tol(s->hi[BL_EVAL_ERNEST], p, 1e-12 * p);
            continue;
        }
        double large[20];
        size_t k = 0;
        for (size_t c = 0; c < 20; c++)
            if (c != s->context) large[k++] = 1.0 + 0.01 * (double)(c + 1); /* ascending */
        ck_assert_uint_eq(k, 19);
        const double q = large[16];
        ck_assert_double_eq_tol(s->lo[BL_EVAL_ERNEST], p * exp(-q), 1e-9 * p);
        ck_assert_double_eq_tol(s->hi[BL_EVAL_ERNEST], p * exp(q), 1e-9 * p);
        checked++;
    }
    ck_assert_uint_eq(checked, 20 * 2 * 2); /* n = 1 and 2, two extrapolation splits each */
    ck_assert(isnan(ev.splits[0].lo[BL_EVAL_BELL])); /* a method not run has none */
    bl_eval_free(&ev);

    load20(&ev, 6);
    for (size_t i = 0; i < ev.n_splits; i++) ev.splits[i].pred[BL_EVAL_ERNEST] = 100.0;
    ck_assert_int_eq(bl_eval_intervals(&ev, &err), BL_OK);
    for (size_t i = 0; i < ev.n_splits; i++) {
        ck_assert_double_eq(ev.splits[i].lo[BL_EVAL_ERNEST], 0.0);
        ck_assert(isinf(ev.splits[i].hi[BL_EVAL_ERNEST]));
    }
    bl_eval_free(&ev);
}
END_TEST

/* Decisions on constructed candidates. Means 100, 60, 45, 40, 38, 37 s at 2..12 machines: the fastest
 * is 12, the cheapest (x · mean 200, 240, 270, 320, 380, 444) 2, the deadline 1.25 · 37 = 46.25 s, met
 * by 6..12, the cheapest of which is 6. */
START_TEST(eval_decisions_constructed) {
    const double x[6] = { 2, 4, 6, 8, 10, 12 }, mean[6] = { 100, 60, 45, 40, 38, 37 };
    double pred[6], lo[6], hi[6];
    bl_eval_decision d;
    /* predictions equal to the means, tight intervals: no regret, no miss, no fallback */
    for (int i = 0; i < 6; i++) { pred[i] = mean[i]; lo[i] = 0.99 * mean[i]; hi[i] = 1.01 * mean[i]; }
    for (int goal = 0; goal < BL_EVAL_N_GOALS; goal++) {
        bl_eval_decide_one(goal, x, mean, pred, lo, hi, NULL, 6, &d);
        ck_assert_int_eq(d.made, 1);
        ck_assert_double_eq(d.regret, 0.0);
        ck_assert_double_eq(d.chosen, d.best);
        ck_assert_int_eq(d.miss, 0);
        ck_assert_int_eq(d.none, 0);
    }
    bl_eval_decide_one(BL_EVAL_GOAL_FASTEST, x, mean, pred, NULL, NULL, NULL, 6, &d);
    ck_assert(d.made && d.chosen == 12 && d.regret == 0.0);
    bl_eval_decide_one(BL_EVAL_GOAL_CHEAPEST, x, mean, pred, NULL, NULL, NULL, 6, &d);
    ck_assert(d.made && d.chosen == 2 && d.regret == 0.0);
    bl_eval_decide_one(BL_EVAL_GOAL_DEADLINE, x, mean, pred, lo, hi, NULL, 6, &d);
    ck_assert(d.chosen == 6 && d.best == 6);
    /* without intervals a deadline at a confidence is not decided (a model without calibration) */
    bl_eval_decide_one(BL_EVAL_GOAL_DEADLINE, x, mean, pred, NULL, NULL, NULL, 6, &d);
    ck_assert_int_eq(d.made, 0);
    ck_assert(isnan(d.regret));
    /* a miss: 4 machines predicted at 44 s (within the deadline, confidently) but measured 60 s; it is
     * cheaper than the best that meets the deadline, so its cost regret is 240 / 270 − 1 < 0 */
    pred[1] = 44; lo[1] = 43.9; hi[1] = 44.1;
    bl_eval_decide_one(BL_EVAL_GOAL_DEADLINE, x, mean, pred, lo, hi, NULL, 6, &d);
    ck_assert(d.made && d.chosen == 4 && d.miss == 1 && d.none == 0);
    ck_assert_double_eq_tol(d.regret, 240.0 / 270.0 - 1.0, 1e-12);
    /* none meets it: upper ends twice the predictions (the least 74 s) — the chooser falls back to the
     * fastest predicted (12), which in fact meets the deadline: not a miss, cost regret 444 / 270 − 1 */
    for (int i = 0; i < 6; i++) { pred[i] = mean[i]; lo[i] = 0.5 * mean[i]; hi[i] = 2 * mean[i]; }
    bl_eval_decide_one(BL_EVAL_GOAL_DEADLINE, x, mean, pred, lo, hi, NULL, 6, &d);
    ck_assert(d.made && d.none == 1 && d.miss == 0 && d.chosen == 12);
    ck_assert_double_eq_tol(d.regret, 444.0 / 270.0 - 1.0, 1e-12);
    /* every interval unbounded: none meets it either, the same fallback; and a fallback that misses:
     * predictions that make 2 machines look fastest */
    for (int i = 0; i < 6; i++) { lo[i] = 0; hi[i] = INFINITY; }
    bl_eval_decide_one(BL_EVAL_GOAL_DEADLINE, x, mean, pred, lo, hi, NULL, 6, &d);
    ck_assert(d.made && d.none == 1 && d.miss == 0 && d.chosen == 12);
    pred[0] = 10;
    bl_eval_decide_one(BL_EVAL_GOAL_DEADLINE, x, mean, pred, lo, hi, NULL, 6, &d);
    ck_assert(d.made && d.none == 1 && d.miss == 1 && d.chosen == 2);
    /* without a confidence an unbounded interval's prediction is taken as it is: fastest is 2 (10 s
     * predicted), 100 / 37 − 1 in runtime */
    bl_eval_decide_one(BL_EVAL_GOAL_FASTEST, x, mean, pred, lo, hi, NULL, 6, &d);
    ck_assert(d.made && d.chosen == 2);
    ck_assert_double_eq_tol(d.regret, 100.0 / 37.0 - 1.0, 1e-12);
    /* a candidate whose runtime is unknown (beyond 4 × the support) is never chosen */
    pred[0] = mean[0];
    const unsigned char known[6] = { 1, 1, 1, 1, 1, 0 };
    bl_eval_decide_one(BL_EVAL_GOAL_FASTEST, x, mean, pred, NULL, NULL, known, 6, &d);
    ck_assert(d.made && d.chosen == 10);
    ck_assert_double_eq_tol(d.regret, 38.0 / 37.0 - 1.0, 1e-12);
}
END_TEST

/* On 20 contexts Ernest and Bell get bounded cross-context intervals: coverage, widths and decisions
 * with sane values in summary.tsv, one row set per (method, n, kind), the decisions the same on both
 * kind rows. */
START_TEST(eval_interval_columns_on_many_contexts) {
    char out[4096], path[8192];
    snprintf(out, sizeof out, "%s/run20", bl_test_tmpdir());
    const char *argv[] = { "bellamy-eval", "--data", corpus20_dir(), "--schemas", corpus20_dir(), "--out", out, "--quiet",
                           "--methods", "ernest,bell,noise-floor", "--contexts", "0", "--splits-per-cell", "3",
                           "--max-n", "3" };
    ck_assert_int_eq(bl_eval_main((int)(sizeof argv / sizeof argv[0]), (char **)argv), 0);
    snprintf(path, sizeof path, "%s/summary.tsv", out);
    char *su = slurp(path);
    static char *lines[MAXL];
    size_t n = lines_of(su, lines, MAXL);
    ck_assert_uint_eq(n - 1, 2 * 3 * 2 * 4);
    int bounded_rows = 0, twins = 0;
    for (size_t i = 1; i < n; i++) {
        check_new_columns(lines[i]);
        newcols c = parse_new_columns(lines[i]);
        if (strstr(lines[i], "\tnoise-floor\t")) continue;
        if (!isnan(c.width)) {
            bounded_rows++;
            ck_assert(c.unb < 1 && !isnan(c.cov_b) && c.width_med > 0);
        }
        char algo[32], method[32], nl[8], kind[8], twin[128];
        ck_assert_int_eq(sscanf(lines[i], "%31s %31s %7s %7s", algo, method, nl, kind), 4);
        if (strcmp(kind, "extrap") != 0) continue;
        /* its interp twin (algorithm, method and n alike) shows the same decisions */
        snprintf(twin, sizeof twin, "%s\t%s\t%s\tinterp\t", algo, method, nl);
        for (size_t j = 1; j < n; j++) {
            if (strncmp(lines[j], twin, strlen(twin)) != 0) continue;
            newcols t = parse_new_columns(lines[j]);
            ck_assert_uint_eq(c.decisions, t.decisions);
            const double a[] = { c.reg_fast, c.reg_cheap, c.reg_dl, c.miss, c.none },
                         b[] = { t.reg_fast, t.reg_cheap, t.reg_dl, t.miss, t.none };
            for (int k = 0; k < 5; k++) ck_assert_msg(a[k] == b[k] || (isnan(a[k]) && isnan(b[k])), "%s", lines[i]);
            twins++;
        }
    }
    ck_assert_int_eq(twins, 2 * 2 * 4);
    ck_assert_int_gt(bounded_rows, 0);
    free(su);
}
END_TEST

/* How many files in dir have `part` in their name. */
static int count_files(const char *dir, const char *part) {
    int k = 0;
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    for (struct dirent *de; (de = readdir(d));) k += strstr(de->d_name, part) != NULL;
    closedir(d);
    return k;
}

/* The model cache from before the calibration held files of searches only (no calibration). Such a
 * cache never passes for calibrated fold models: the searches are reused, each fold model is calibrated
 * again (Bellamy's intervals are there, not NaN) and its calibrated file written; an uncalibrated
 * model under a calibrated file's name is replaced. */
START_TEST(eval_model_cache_before_calibration_not_reused) {
    char out[4096], cache[4200], pred1[4300], pred2[4300], tsv[4200], sch[4200], cmd[13000];
    snprintf(out, sizeof out, "%s/calcache-run", bl_test_tmpdir());
    snprintf(cache, sizeof cache, "%s/calcache", bl_test_tmpdir());
    snprintf(tsv, sizeof tsv, "%s/synth.tsv", corpus_dir());
    snprintf(sch, sizeof sch, "%s/synth.schema", corpus_dir());
    snprintf(pred1, sizeof pred1, "%s/predictions-1.tsv", bl_test_tmpdir());
    snprintf(pred2, sizeof pred2, "%s/predictions.tsv", out);
    const char *argv[] = { "bellamy-eval", "--data", tsv, "--schema", sch, "--out", out, "--quiet",
                           "--methods", "bellamy", "--members", "1", "--contexts", "3", "--splits-per-cell", "1",
                           "--max-n", "2", "--epochs", "10", "--grace", "5", "--trials", "1", "--ft-epochs", "20",
                           "--ft-patience", "10", "--model-cache", cache };
    const int argc = (int)(sizeof argv / sizeof argv[0]);
    ck_assert_int_eq(bl_eval_main(argc, (char **)argv), 0);
    const int cal = count_files(cache, "-cal2k"), all = count_files(cache, ".h5");
    ck_assert_int_gt(cal, 0);
    ck_assert_int_eq(all, 2 * cal); /* one search and one calibrated fold model per fold */
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", pred2, pred1);
    ck_assert_int_eq(system(cmd), 0);
    char *text = slurp(pred1);
    static char *pl[MAXL];
    size_t np = lines_of(text, pl, MAXL);
    for (size_t i = 1; i < np; i++) { /* calibrated: an interval (here, with few contexts, unbounded) */
        double pred, actual, lo, hi;
        ck_assert_int_eq(sscanf(strchr(strchr(pl[i], '\t') + 1, '\t') + 1, "%lf\t%lf\t%lf\t%lf", &pred, &actual, &lo, &hi), 4);
        ck_assert_msg(!isnan(lo) && !isnan(hi), "%s", pl[i]);
    }
    free(text);
    /* the cache as a harness before the calibration left it: its searches only */
    snprintf(cmd, sizeof cmd, "rm -f '%s'/*-cal2k*.h5", cache);
    ck_assert_int_eq(system(cmd), 0);
    ck_assert_int_eq(bl_eval_main(argc, (char **)argv), 0);
    ck_assert_int_eq(count_files(cache, "-cal2k"), cal);
    char *a = slurp(pred1), *b = slurp(pred2);
    ck_assert_str_eq(a, b); /* the same searches, calibrated again: the same predictions and intervals */
    free(b);
    /* a search's (uncalibrated) file under each calibrated name: not used, replaced */
    DIR *d = opendir(cache);
    ck_assert_ptr_nonnull(d);
    for (struct dirent *de; (de = readdir(d));) {
        char *tag = strstr(de->d_name, "-m1-cal2k");
        if (!tag) continue;
        char search[512];
        snprintf(search, sizeof search, "%.*s.h5", (int)(tag - de->d_name), de->d_name);
        snprintf(cmd, sizeof cmd, "cp '%s/%s' '%s/%s'", cache, search, cache, de->d_name);
        ck_assert_int_eq(system(cmd), 0);
    }
    closedir(d);
    ck_assert_int_eq(bl_eval_main(argc, (char **)argv), 0);
    b = slurp(pred2);
    ck_assert_str_eq(a, b);
    free(a);
    free(b);
    d = opendir(cache);
    for (struct dirent *de; (de = readdir(d));) {
        if (!strstr(de->d_name, "-cal2k")) continue;
        char file[4500];
        snprintf(file, sizeof file, "%s/%s", cache, de->d_name);
        bl_model *m = NULL;
        bl_error err;
        ck_assert_msg(bl_model_load(file, NULL, &m, &err) == BL_OK, "%s", err.message);
        ck_assert_msg(m->calib.known, "%s is not calibrated", file);
        bl_model_free(m);
    }
    closedir(d);
}
END_TEST

START_TEST(eval_options_checked_up_front) {
    const char *bad[][2] = {
        { "--stop-mae", "-5" },       { "--stop-rel", "-5" },          { "--trials", "99" },
        { "--trials", "0" },          { "--epochs", "999999999999" },  { "--epochs", "1000001" },
        { "--grace", "2000000" },     { "--ft-epochs", "1000001" },    { "--ft-patience", "0" },
        { "--ft-cv-epochs", "1000001" }, { "--ft-weight-decay", "1e300" }, { "--ft-weight-decay", "2" },
        { "--ft-lr-max", "1e300" },   { "--ft-lr-max", "0" },          { "--splits-per-cell", "0" },
        { "--ensemble", "13" },       { "--threads", "0" },            { "--threads", "1025" },
        { "--members", "0" },         { "--members", "17" },           { "--trials", "4294967297" },
        { "--reduction", "1" },       { "--reduction", "28" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char out[4096], splits[4200];
        snprintf(out, sizeof out, "%s/upfront%zu", bl_test_tmpdir(), i);
        snprintf(splits, sizeof splits, "%s/splits.tsv", out);
        /* --ensemble 13 needs 13 trials of the default 12; --members 1 so it is not refused for that */
        const char *argv[] = { "bellamy-eval", "--data", corpus_dir(), "--schemas", corpus_dir(), "--out", out, "--quiet",
                               "--methods", "ernest", "--contexts", "2", "--splits-per-cell", "1", "--max-n", "2",
                               "--members", "1", bad[i][0], bad[i][1] };
        int rc = bl_eval_main((int)(sizeof argv / sizeof argv[0]), (char **)argv);
        ck_assert_msg(rc == 2, "%s %s: exit %d, expected 2", bad[i][0], bad[i][1], rc);
        ck_assert_msg(access(splits, F_OK) != 0, "%s %s: the run started", bad[i][0], bad[i][1]);
    }
    { /* --fold-by has no folds to act on in the cross-environment case */
        char out[4096], tsv[4200], sch[4200];
        snprintf(out, sizeof out, "%s/upfront-foldby", bl_test_tmpdir());
        snprintf(tsv, sizeof tsv, "%s/synth.tsv", corpus_dir());
        snprintf(sch, sizeof sch, "%s/synth.schema", corpus_dir());
        const char *argv[] = { "bellamy-eval", "--pretrain-data", tsv, "--pretrain-schema", sch, "--data", tsv,
                               "--schema", sch, "--out", out, "--quiet", "--fold-by", "data_size_MB" };
        ck_assert_int_eq(bl_eval_main((int)(sizeof argv / sizeof argv[0]), (char **)argv), 2);
    }
    /* the bounds themselves are fine (no pre-training here, so nothing long runs) */
    const char *good[][2] = { { "--epochs", "1000000" }, { "--ft-weight-decay", "-1" }, { "--ft-lr-max", "1" },
                              { "--stop-mae", "0" },     { "--trials", "27" },
                              { "--reduction", "2" },    { "--reduction", "27" } };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        char out[4096];
        snprintf(out, sizeof out, "%s/bounds%zu", bl_test_tmpdir(), i);
        const char *argv[] = { "bellamy-eval", "--data", corpus_dir(), "--schemas", corpus_dir(), "--out", out, "--quiet",
                               "--methods", "ernest", "--contexts", "2", "--splits-per-cell", "1", "--max-n", "2",
                               good[i][0], good[i][1] };
        int rc = bl_eval_main((int)(sizeof argv / sizeof argv[0]), (char **)argv);
        ck_assert_msg(rc == 0, "%s %s: exit %d", good[i][0], good[i][1], rc);
    }
}
END_TEST

Suite *bl_test_suite(void) {
    Suite *s = suite_create("eval");
    TCase *tc = tcase_create("eval");
    tcase_set_timeout(tc, 240);
    tcase_add_test(tc, eval_writes_well_formed_files);
    tcase_add_test(tc, eval_model_cache_follows_the_schema);
    tcase_add_test(tc, eval_split_file_reproduces_predictions);
    tcase_add_test(tc, eval_split_file_errors);
    tcase_add_test(tc, eval_no_split_names_the_file);
    tcase_add_test(tc, eval_split_file_valid_groups);
    tcase_add_test(tc, eval_folds_by_property);
    tcase_add_test(tc, eval_command_line_errors);
    tcase_add_test(tc, eval_out_that_is_a_file);
    tcase_add_test(tc, eval_table_of_one_algorithm);
    tcase_add_test(tc, eval_folder_for_a_file);
    tcase_add_test(tc, eval_options_checked_up_front);
    tcase_add_test(tc, eval_group_quantile_exact);
    tcase_add_test(tc, eval_cross_context_interval_exact);
    tcase_add_test(tc, eval_decisions_constructed);
    tcase_add_test(tc, eval_interval_columns_on_many_contexts);
    tcase_add_test(tc, eval_model_cache_before_calibration_not_reused);
    suite_add_tcase(s, tc);
    return s;
}
