/* test_cli.c — bellamy-train (pretrain, finetune, evaluate, split, synth), bellamy-predict and
 * dbmlsched-sim run as processes: outputs, exit codes (0 ok, 1 failure, 2 usage; bellamy-predict 3: no
 * scale-out could be chosen) and one-line error
 * messages for bad input — empty, blank, hexadecimal and absurd option values, folders and missing
 * files as inputs, outputs that are inputs or non-model files (checked before any training), and
 * failed writes to standard output; notes when fine-tuning runs span several contexts or another
 * context than --set, and errors for runs whose schema differs from the model's. A tiny model (2 trials × 30 epochs) is pre-trained once on the
 * synthetic corpus.
 */
#include "testutil.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "data/synth.h"
#include "modelfile/modelfile.h"

static char g_dir[4096], g_train[4200], g_predict[4200], g_sim[4200], g_sets[2048];

/* Runs a shell command line (printf-style); stdout and stderr land in out/err; returns the exit code. */
static char g_out[65536], g_err[65536];

static void slurp(const char *path, char *buf, size_t cap) {
    FILE *f = fopen(path, "rb");
    size_t n = f ? fread(buf, 1, cap - 1, f) : 0;
    buf[n] = '\0';
    if (f) fclose(f);
}

static int run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int run(const char *fmt, ...) {
    char cmd[16384], full[32768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    snprintf(full, sizeof full, "cd '%s' && ( %s ) >'%s/out.txt' 2>'%s/err.txt' </dev/null", g_dir, cmd, g_dir, g_dir);
    int st = system(full);
    char p[4200];
    snprintf(p, sizeof p, "%s/out.txt", g_dir);
    slurp(p, g_out, sizeof g_out);
    snprintf(p, sizeof p, "%s/err.txt", g_dir);
    slurp(p, g_err, sizeof g_err);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Removes from g_err the lines holding needle (a note a tiny test model may rightly earn, such as a fit
 * that misses its runs, where a test looks at the other notes); returns how many it removed. */
static size_t drop_err_lines(const char *needle) {
    size_t dropped = 0;
    char *r = g_err, *w = g_err;
    while (*r) {
        char *end = strchr(r, '\n');
        size_t len = end ? (size_t)(end - r) + 1 : strlen(r);
        char keep = 1, save = r[len];
        r[len] = '\0';
        if (strstr(r, needle)) keep = 0;
        r[len] = save;
        if (keep) {
            memmove(w, r, len);
            w += len;
        } else {
            dropped++;
        }
        r += len;
    }
    *w = '\0';
    return dropped;
}

static size_t count(const char *hay, const char *needle) {
    size_t n = 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle)) n++;
    return n;
}

/* Every number in a JSON text is the shortest that reads back as the same double (issue 24: never
 * 1959.5999999999999 for 1959.6). Numbers inside strings are skipped. */
static void assert_shortest_numbers(const char *json) {
    int in_str = 0;
    for (const char *c = json; *c; c++) {
        if (in_str) {
            if (*c == '\\' && c[1]) c++;
            else if (*c == '"') in_str = 0;
            continue;
        }
        if (*c == '"') {
            in_str = 1;
            continue;
        }
        if (!(*c == '-' || (*c >= '0' && *c <= '9'))) continue;
        char *end;
        const double v = strtod(c, &end);
        char tok[64], g[64];
        snprintf(tok, sizeof tok, "%.*s", (int)(end - c), c);
        int p = 1;
        for (; p < 17; p++) {
            snprintf(g, sizeof g, "%.*g", p, v);
            if (strtod(g, NULL) == v) break;
        }
        snprintf(g, sizeof g, "%.*g", p, v);
        ck_assert_msg(strlen(tok) <= strlen(g), "JSON number %s: %s reads back the same", tok, g);
        c = end - 1;
    }
}

#define EXPECT(rc_want, ...)                                                                              \
    do {                                                                                                  \
        int rc_ = run(__VA_ARGS__);                                                                       \
        ck_assert_msg(rc_ == (rc_want), "exit %d, expected %d\nstdout: %s\nstderr: %s", rc_, (rc_want), g_out, \
                      g_err);                                                                             \
    } while (0)

/* An error: the wanted exit code, exactly one line on stderr, containing `what`. */
#define EXPECT_ERR(rc_want, what, ...)                                                                    \
    do {                                                                                                  \
        EXPECT(rc_want, __VA_ARGS__);                                                                     \
        ck_assert_msg(strstr(g_err, (what)) != NULL, "stderr lacks '%s': %s", (what), g_err);             \
        ck_assert_msg(count(g_err, "\n") == 1, "not one line: %s", g_err);                                \
    } while (0)

static void setup(void) {
    bl_error err;
    snprintf(g_dir, sizeof g_dir, "%s", bl_test_tmpdir());
    const char *root = getenv("BELLAMY_BUILD_ROOT");
    ck_assert_ptr_nonnull(root);
    snprintf(g_train, sizeof g_train, "'%s/bellamy-train'", root);
    snprintf(g_predict, sizeof g_predict, "'%s/bellamy-predict'", root);
    snprintf(g_sim, sizeof g_sim, "'%s/dbmlsched-sim'", root);
    bl_synth_config c;
    bl_synth_config_default(&c);
    c.n_contexts = 8;
    bl_synth_corpus *corp = NULL;
    ck_assert_int_eq(bl_synth_generate(&c, &corp, &err), BL_OK);
    ck_assert_int_eq(bl_synth_write(corp, g_dir, "synth", &err), BL_OK);
    bl_synth_free(corp);
    /* hold context 1 out; 3 of its runs become the history */
    EXPECT(0, "%s split --data synth.tsv --schema synth.schema --context 1 --held-out held.tsv --rest rest.tsv "
              "--sample 3 --sample-out runs.tsv", g_train);
    /* its values as --set arguments */
    size_t len = 0;
    for (char *line = strtok(g_out, "\n"); line; line = strtok(NULL, "\n"))
        len += (size_t)snprintf(g_sets + len, sizeof g_sets - len, " --set '%s'", line);
    EXPECT(0, "%s pretrain --data rest.tsv --schema synth.schema --out model.h5 --name synth --trials 2 --epochs 30 "
              "--grace 30 --threads 1 --quiet", g_train);
    bl_test_write_user_data(g_dir);
    EXPECT(0, "%s pretrain --data user-rest.csv --schema user.schema --out user.h5 --name etl --trials 2 --epochs 30 "
              "--grace 30 --members 2 --threads 1 --quiet", g_train);
}

static void teardown(void) {}

START_TEST(test_help_version) {
    EXPECT(0, "%s --version", g_train);
    ck_assert_msg(strncmp(g_out, "bellamy-train 0.11.0\nkernels: ", strlen("bellamy-train 0.11.0\nkernels: ")) == 0, "%s", g_out);
    EXPECT(0, "%s --version", g_predict);
    ck_assert_msg(strncmp(g_out, "bellamy-predict 0.11.0\nkernels: ", strlen("bellamy-predict 0.11.0\nkernels: ")) == 0, "%s", g_out);
    /* the kernel copy in use, capped by BELLAMY_CPU; a value the library cannot read is an error */
    EXPECT(0, "BELLAMY_CPU=generic %s --version", g_train);
    ck_assert_ptr_nonnull(strstr(g_out, "kernels: generic ("));
    EXPECT(0, "BELLAMY_CPU=generic %s --version", g_sim);
    ck_assert_ptr_nonnull(strstr(g_out, "kernels: generic ("));
    EXPECT(0, "BELLAMY_CPU=avx512 %s --version", g_predict);
    ck_assert_ptr_null(strstr(g_out, "kernels: generic (this processor runs avx")); /* a cap never lowers below it */
    EXPECT_ERR(2, "BELLAMY_CPU='avx3' is not one of generic, avx2, avx512", "BELLAMY_CPU=avx3 %s --version", g_train);
    EXPECT_ERR(1, "BELLAMY_CPU='sse'", "BELLAMY_CPU=sse %s --model model.h5 %s --scale-out 4", g_predict, g_sets);
    EXPECT_ERR(1, "BELLAMY_CPU='sse'", "BELLAMY_CPU=sse %s --workload paper --policy fifo-gpu", g_sim); /* no Bellamy */
    EXPECT(0, "%s --help", g_train);
    ck_assert_ptr_nonnull(strstr(g_out, "pretrain"));
    ck_assert_ptr_nonnull(strstr(g_out, "finetune"));
    EXPECT(2, "%s", g_train);
    EXPECT_ERR(2, "unknown command", "%s frobnicate", g_train);
    EXPECT(0, "COLUMNS=200 %s pretrain --help", g_train); /* wide: no default wraps */
    const char *want[] = { "--data FILE", "--schema FILE", "--out MODEL.h5", "--name NAME", "--trials N", "(default: 12)",
                           "--epochs N", "(default: 2500)", "--threads N", "--seed S", "--device cpu|cuda",
                           "--target-scale seconds|mean", "--quiet" };
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
        ck_assert_msg(strstr(g_out, want[i]), "pretrain --help lacks %s", want[i]);
    EXPECT(0, "COLUMNS=200 %s finetune --help", g_train);
    ck_assert_ptr_nonnull(strstr(g_out, "--model MODEL.h5"));
    ck_assert_ptr_nonnull(strstr(g_out, "the schema stored in the model"));
    EXPECT(0, "COLUMNS=200 %s --help", g_predict);
    const char *want2[] = { "--model", "--name", "--set", "--scale-out", "--history", "--target-runtime", "--price",
                            "--goal", "--json", "(default:" };
    for (size_t i = 0; i < sizeof want2 / sizeof *want2; i++)
        ck_assert_msg(strstr(g_out, want2[i]), "bellamy-predict --help lacks %s", want2[i]);
}
END_TEST

/* The inputs of ../shared/repro/ that broke the project, each with its own command: they train. */
START_TEST(test_repro_inputs) {
    const char *etl = bl_test_shared_path("repro/etl");
    if (!etl) BL_TEST_SKIP("no ../shared/repro/etl: the reproducer is not run");
    /* a user's ETL history, 4 essential + 1 optional property: wrote past the pass's workspace */
    EXPECT(0, "%s pretrain --data '%s/history.csv' --schema '%s/etl.schema' --out etl.h5 --trials 2 --epochs 50 "
              "--members 2 --threads 1 --quiet", g_train, etl, etl);
    EXPECT(0, "%s check --model etl.h5", g_train);
    /* the user's report: job_type (a const of the schema) left out predicted 30 %% more; now filled */
    const char *sets = "--set machine_type=r5.xlarge --set job_args=q1 --set data_size_MB=50";
    EXPECT(0, "%s --model etl.h5 %s --set job_type=etl-spark --set 'environment=private yarn' --scale-out 2..16",
           g_predict, sets);
    char want[65536];
    strcpy(want, g_out);
    EXPECT(0, "%s --model etl.h5 %s --scale-out 2..16", g_predict, sets);
    ck_assert_str_eq(g_out, want);
    EXPECT(0, "%s info --model etl.h5", g_train);
    ck_assert_msg(strstr(g_out, "  job_type: optional text, from const \"etl-spark\"; left out, it is 'etl-spark'"),
                  "%s", g_out);
}
END_TEST

/* FIFOs nobody writes to, given as a model, data or schema file: a one-line error at once (each
 * program hung in its open); `timeout` turns a hang into exit 124. */
START_TEST(test_fifo_inputs_fail_at_once) {
    EXPECT(0, "rm -f f.h5 f.tsv f.schema && mkfifo f.h5 f.tsv f.schema");
    EXPECT_ERR(1, "f.h5: not a regular file", "timeout 20 %s --model f.h5 --scale-out 4", g_predict);
    EXPECT_ERR(1, "f.h5: not a regular file", "timeout 20 %s info --model f.h5", g_train);
    EXPECT_ERR(1, "f.h5: not a regular file", "timeout 20 %s check --model f.h5", g_train);
    EXPECT_ERR(1, "f.tsv:1:1: empty file", "timeout 20 %s inspect --data f.tsv --schema '%s/datasets/c3o/grep.schema'",
               g_train, getenv("BELLAMY_SOURCE_ROOT"));
    EXPECT_ERR(1, "f.schema", "timeout 20 %s synth --out-dir . --stem fs --contexts 2 >/dev/null && timeout 20 %s "
               "inspect --data fs.tsv --schema f.schema", g_train, g_train);
    EXPECT(0, "rm -f f.h5 f.tsv f.schema fs.tsv fs.schema");
}
END_TEST

/* The C3O data: job_type and environment are constants of the schema and slots had one value (8 per
 * machine) in every grep row, so leaving them out predicts the same; memory (an optional cluster total
 * of two values) left out is named, and so are a machine type the rows never had and scale-outs
 * beyond the data's, with its range. */
START_TEST(test_c3o_contexts) {
    const char *c3o = bl_test_c3o_dir();
    if (!c3o) BL_TEST_SKIP("no C3O data (BELLAMY_DATA, ../shared/datasets/c3o): the C3O contexts are not checked");
    const char *sch = bl_test_source_path("datasets/c3o/grep.schema");
    EXPECT(0, "%s split --data '%s/grep.tsv' --schema '%s' --context 0 --held-out g0.tsv --rest grest.tsv", g_train, c3o,
           sch);
    char all[4096] = "", some[4096] = "", ess[4096] = "";
    size_t la = 0, ls = 0, le = 0;
    for (char *line = strtok(g_out, "\n"); line; line = strtok(NULL, "\n")) {
        la += (size_t)snprintf(all + la, sizeof all - la, " --set '%s'", line);
        if (strncmp(line, "job_type=", 9) && strncmp(line, "environment=", 12) && strncmp(line, "slots=", 6))
            ls += (size_t)snprintf(some + ls, sizeof some - ls, " --set '%s'", line);
        if (strncmp(line, "job_type=", 9) && strncmp(line, "memory=", 7) && strncmp(line, "slots=", 6))
            le += (size_t)snprintf(ess + le, sizeof ess - le, " --set '%s'", line);
    }
    /* enough epochs for runtimes the model knows (5 leave its output near 0 s: stand-ins, never chosen) */
    EXPECT(0, "%s pretrain --data grest.tsv --schema '%s' --out grep.h5 --name grep --trials 1 --epochs 100 --grace 100 "
              "--members 1 --threads 1 --quiet", g_train, sch);
    EXPECT(0, "%s --model grep.h5 %s --scale-out 2..12", g_predict, all);
    char want[65536];
    strcpy(want, g_out);
    EXPECT(0, "%s --model grep.h5 %s --scale-out 2..12", g_predict, some);
    ck_assert_str_eq(g_out, want);
    EXPECT(0, "%s --model grep.h5 %s --scale-out 2..40 --json", g_predict, ess);
    ck_assert_msg(strstr(g_out, "\"job_type\":\"model\"") && strstr(g_out, "\"slots\":\"model\"") &&
                  strstr(g_out, "{\"kind\":\"left_out\",\"property\":\"memory\"") &&
                  strstr(g_out, "{\"kind\":\"unseen_value\",\"property\":\"machine_type\",\"message\":\"machine_type "
                                "'c4.2xlarge' is a value no pre-training row had (closest seen: 'm4.2xlarge', 'r4.2xlarge'") &&
                  strstr(g_out, "{\"kind\":\"scale_out\",\"property\":null,\"message\":\"scale-outs 13..40 lie outside the "
                                "range of scale-outs the model was pre-trained on (2..12)"), "%s", g_out);
    EXPECT(0, "%s info --model grep.h5", g_train);
    ck_assert_msg(strstr(g_out, "  slots: optional number, a cluster total (given per machine), from column slots; left "
                                "out, it is '8' (the one value every row had)\n    seen: 1 value of 8 per machine: '8' "
                                "(780 rows)"), "%s", g_out);
}
END_TEST

START_TEST(test_pretrain_progress_and_errors) {
    /* stderr is a file here: plain lines (no \r), with trial, epoch, loss and ETA */
    EXPECT(0, "%s pretrain --data rest.tsv --schema synth.schema --out p.h5 --trials 1 --epochs 10 --grace 10 --threads 1 "
              "--calibrate off", g_train);
    ck_assert_ptr_nonnull(strstr(g_err, "trial "));
    ck_assert_ptr_nonnull(strstr(g_err, "epoch "));
    ck_assert_ptr_nonnull(strstr(g_err, "loss "));
    ck_assert_ptr_nonnull(strstr(g_err, "ETA"));
    ck_assert_ptr_null(strchr(g_err, '\r'));
    ck_assert_ptr_nonnull(strstr(g_out, "pre-trained 'rest'")); /* the default name is the data file's stem */
    /* rungs off multiples of 25 (10, 20, 30): the share done never passes 100 % and shows 100 % once, at the end */
    EXPECT(0, "%s pretrain --data rest.tsv --schema synth.schema --out p.h5 --trials 2 --epochs 30 --grace 10 "
              "--members 1 --threads 1 --calibrate off", g_train);
    ck_assert_msg(count(g_err, " 100%  ") == 1, "%s", g_err);
    for (const char *q = strchr(g_err, '%'); q; q = strchr(q + 1, '%')) {
        const char *b = q;
        while (b > g_err && b[-1] >= '0' && b[-1] <= '9') b--;
        ck_assert_msg(q - b <= 3 && atoi(b) <= 100, "%s", g_err);
    }
    EXPECT(0, "%s pretrain --data rest.tsv --schema synth.schema --out p.h5 --trials 1 --epochs 5 --grace 5 --quiet "
              "--calibrate off", g_train);
    ck_assert_str_eq(g_err, "");

    EXPECT_ERR(1, "no CUDA support", "%s pretrain --data rest.tsv --schema synth.schema --out c.h5 --device cuda", g_train);
    EXPECT_ERR(2, "--data is required", "%s pretrain --schema synth.schema --out x.h5", g_train);
    EXPECT_ERR(2, "--trials 0", "%s pretrain --data rest.tsv --schema synth.schema --out x.h5 --trials 0", g_train);
    /* the library's check of bl_train_opts, in the options' words: every bound, one statement of it */
    EXPECT_ERR(2, "bellamy-train pretrain: --threads 5000: must be 1..1024",
               "%s pretrain --data rest.tsv --schema synth.schema --out x.h5 --threads 5000", g_train);
    EXPECT_ERR(2, "--trials 28: must be 1..27", "%s pretrain --data rest.tsv --schema synth.schema --out x.h5 --trials 28",
               g_train);
    EXPECT_ERR(2, "--val-fraction 1: must be strictly between 0 and 1",
               "%s pretrain --data rest.tsv --schema synth.schema --out x.h5 --val-fraction 1", g_train);
    EXPECT_ERR(2, "--members 17: must be 1..16", "%s pretrain --data rest.tsv --schema synth.schema --out x.h5 --members 17",
               g_train);
    EXPECT_ERR(2, "--grace 1000001: must be 1..1000000",
               "%s pretrain --data rest.tsv --schema synth.schema --out x.h5 --grace 1000001", g_train);
    EXPECT_ERR(2, "--threads 99999999999: out of range",
               "%s pretrain --data rest.tsv --schema synth.schema --out x.h5 --threads 99999999999", g_train);
    EXPECT_ERR(2, "--epochs", "%s pretrain --data rest.tsv --schema synth.schema --out x.h5 --epochs many", g_train);
    EXPECT_ERR(2, "--device", "%s pretrain --data rest.tsv --schema synth.schema --out x.h5 --device tpu", g_train);
    EXPECT(0, "%s pretrain --data rest.tsv --schema synth.schema --out g.h5 --trials 1 --epochs 5 --grace 5 --val-split groups "
              "--quiet --calibrate off", g_train);
    EXPECT_ERR(2, "--val-split", "%s pretrain --data rest.tsv --schema synth.schema --out x.h5 --val-split rows", g_train);
    EXPECT_ERR(2, "unknown option", "%s pretrain --data rest.tsv --schema synth.schema --out x.h5 --bogus", g_train);
    EXPECT_ERR(1, "nothere.tsv", "%s pretrain --data nothere.tsv --schema synth.schema --out x.h5", g_train);
    EXPECT_ERR(1, "synth.tsv", "%s pretrain --data synth.tsv --schema synth.tsv --out x.h5", g_train);
}
END_TEST

START_TEST(test_predict_table) {
    EXPECT(0, "%s --model model.h5 %s --scale-out 2..12", g_predict, g_sets);
    /* the model is calibrated: each prediction with its 0.9 interval, and a line saying on what */
    const char *head = "scale_out\tpredicted_runtime_s\tlo_runtime_s\thi_runtime_s\tunbounded_why\n2\t";
    ck_assert_msg(strncmp(g_out, head, strlen(head)) == 0, "%s", g_out);
    ck_assert_uint_eq(count(g_out, "\n"), 1 + 11 + 2);
    ck_assert_ptr_nonnull(strstr(g_out, "\n# intervals: 0.9 coverage, calibrated on "));
    ck_assert_ptr_nonnull(strstr(g_out, "\n12\t"));
    ck_assert_ptr_nonnull(strstr(g_out, "# chosen: scale-out "));
    ck_assert_ptr_nonnull(strstr(g_out, ": fastest of 11 candidates"));
    ck_assert_str_eq(g_err, "");
    /* single value and list */
    EXPECT(0, "%s --model model.h5 --name synth %s --scale-out 4", g_predict, g_sets);
    ck_assert_uint_eq(count(g_out, "\n"), 4);
    ck_assert_msg(strstr(g_out, "): the only candidate"), "%s", g_out); /* not "fastest of 1 candidates" */
    EXPECT(0, "%s --model model.h5 %s --scale-out 2,4,8 --price 0.4", g_predict, g_sets);
    ck_assert_ptr_nonnull(
        strstr(g_out, "scale_out\tpredicted_runtime_s\tlo_runtime_s\thi_runtime_s\tcost\tunbounded_why\n2\t"));
    ck_assert_ptr_nonnull(strstr(g_out, "\n8\t"));
    ck_assert_ptr_nonnull(strstr(g_out, ": cheapest ("));
    EXPECT(0, "%s --model model.h5 %s --scale-out 2..12 --target-runtime 100000", g_predict, g_sets);
    ck_assert_ptr_nonnull(strstr(g_out, "# chosen: scale-out 2,")); /* everyone meets it: the smallest */
    ck_assert_ptr_nonnull(strstr(g_out, ": smallest scale-out predicted to finish within 100000 s"));
    EXPECT(0, "%s --model model.h5 %s --scale-out 2..12 --target-runtime 0.001", g_predict, g_sets);
    ck_assert_ptr_nonnull(strstr(g_out, "no candidate"));
    EXPECT(0, "%s --model model.h5 %s --scale-out 2..12 --price 0.4 --target-runtime 500 --json", g_predict, g_sets);
    ck_assert(g_out[0] == '{');
    ck_assert_ptr_nonnull(strstr(g_out, "\"model\":\"synth\""));
    ck_assert_ptr_nonnull(strstr(g_out, "\"context\":{\"machine_type\":"));
    ck_assert_uint_eq(count(g_out, "\"scale_out\":"), 11 + 1);
    ck_assert_uint_eq(count(g_out, "\"cost\":"), 11 + 1);
    ck_assert_ptr_nonnull(strstr(g_out, "\"choice\":{\"goal\":\"cheapest\""));
    ck_assert_ptr_nonnull(strstr(g_out, "\"meets_target\":"));
    ck_assert_ptr_nonnull(strstr(g_out, "\"fine_tuned_on_runs\":0"));
    ck_assert_str_eq(g_out + strlen(g_out) - 2, "}\n");
    assert_shortest_numbers(g_out);
}
END_TEST

START_TEST(test_history_and_finetune) {
    EXPECT(0, "%s --model model.h5 %s --scale-out 2..12 --json", g_predict, g_sets);
    char before[65536];
    strcpy(before, g_out);
    EXPECT(0, "%s --model model.h5 %s --scale-out 2..12 --json --history runs.tsv", g_predict, g_sets);
    ck_assert_ptr_nonnull(strstr(g_out, "\"fine_tuned_on_runs\":3"));
    ck_assert_str_ne(before, g_out);
    assert_shortest_numbers(g_out);
    EXPECT(0, "%s --model model.h5 %s --scale-out 2..12 --json --history runs.tsv --schema synth.schema", g_predict,
           g_sets);
    ck_assert_ptr_nonnull(strstr(g_out, "\"fine_tuned_on_runs\":3"));

    /* finetune writes a model that predicts what --history predicted */
    char hist[65536];
    EXPECT(0, "%s --model model.h5 %s --scale-out 2..12 --history runs.tsv", g_predict, g_sets);
    strcpy(hist, g_out);
    EXPECT(0, "%s finetune --model model.h5 --data runs.tsv --out tuned.h5", g_train);
    ck_assert_ptr_nonnull(strstr(g_out, "fine-tuned 'synth' on 3 runs"));
    EXPECT(0, "%s --model tuned.h5 %s --scale-out 2..12", g_predict, g_sets);
    ck_assert_str_eq(g_out, hist);
    /* the paper's stopping rule instead of cross-validation over the 3 runs: another model */
    EXPECT(0, "%s finetune --model model.h5 --data runs.tsv --out tuned-mae.h5 --stop mae", g_train);
    EXPECT(0, "%s --model tuned-mae.h5 %s --scale-out 2..12", g_predict, g_sets);
    ck_assert_str_ne(g_out, hist);
    EXPECT_ERR(2, "--stop", "%s finetune --model model.h5 --data runs.tsv --out x.h5 --stop never", g_train);
    EXPECT(0, "%s finetune --model model.h5 --name synth --data runs.tsv --schema synth.schema --out ctx1.h5 "
              "--out-name ctx1 --max-epochs 50", g_train);
    EXPECT(0, "%s --model ctx1.h5 --name ctx1 %s --scale-out 3", g_predict, g_sets);

    /* evaluate: measured vs predicted per scale-out */
    EXPECT(0, "%s evaluate --model ctx1.h5 --name ctx1 --data held.tsv", g_train);
    ck_assert_msg(strncmp(g_out, "scale_out\truns\t", 14) == 0, "%s", g_out); /* one context: no context column */
    ck_assert_ptr_nonnull(strstr(g_out, "scale_out\truns\tmeasured_mean_s\tpredicted_s\trelative_error\n2\t3\t"));
    ck_assert_ptr_nonnull(strstr(g_out, "# mean relative error over 6 scale-outs: "));

    EXPECT_ERR(1, "nosuch", "%s finetune --model model.h5 --name nosuch --data runs.tsv --out t2.h5", g_train);
    EXPECT_ERR(2, "--out is required", "%s finetune --model model.h5 --data runs.tsv", g_train);
    EXPECT_ERR(1, "missing.tsv", "%s finetune --model model.h5 --data missing.tsv --out t2.h5", g_train);
    EXPECT_ERR(1, "--history", "%s --model model.h5 %s --scale-out 2..4 --history missing.tsv", g_predict, g_sets);
}
END_TEST

/* bellamy-train finetune says how the guard weighed the network against Ernest, as bellamy-predict does:
 * one note on stderr when the runtimes are not the fine-tuned network's alone (runs outside the
 * pre-trained scale-outs 2..12), none when they are (runs inside: test_history_contexts_noted). */
START_TEST(test_finetune_guard_note) {
    EXPECT(0, "%s synth --out-dir . --stem wide --contexts 1 --reps 1 --scale-outs 16,24,32", g_train);
    EXPECT(0, "%s finetune --model model.h5 --data wide.tsv --out wide.h5 --max-epochs 20", g_train);
    ck_assert_ptr_nonnull(strstr(g_out, "fine-tuned 'synth' on 3 runs"));
    drop_err_lines("note: the fine-tuned model misses its own runs by up to "); /* another note, not this test's */
    ck_assert_msg(strstr(g_err, "bellamy-train finetune: note: runtimes are ") == g_err, "%s", g_err);
    ck_assert_msg(strstr(g_err, "Ernest") != NULL && strstr(g_err, "reach outside the scale-outs it was pre-trained "
                                                            "on (2..12)") != NULL, "%s", g_err);
    ck_assert_msg(count(g_err, "\n") == 1, "not one line: %s", g_err);
    /* the same decision, read back from the file, in bellamy-predict's note */
    static char note[sizeof g_err];
    snprintf(note, sizeof note, "%s", g_err + strlen("bellamy-train finetune"));
    EXPECT(0, "%s --model wide.h5 %s --scale-out 16..32", g_predict, g_sets);
    ck_assert_msg(strstr(g_err, note) != NULL, "bellamy-predict: %s\nbellamy-train: %s", g_err, note);
    ck_assert_msg(strstr(note, "(Ernest's weight ") != NULL, "%s", note);
    /* and bellamy-train info, in words and in JSON */
    EXPECT(0, "%s info --model wide.h5", g_train);
    ck_assert_msg(strstr(g_out, "\nruntimes: a blend of the network and Ernest (Ernest's weight ") ||
                  strstr(g_out, "\nruntimes: Ernest's fit to the fine-tuning runs (Ernest's weight 1)"), "%s", g_out);
    EXPECT(0, "%s info --model wide.h5 --json | python3 -c 'import json,sys; m=json.load(sys.stdin)[\"fine_tuning\"]"
              "[\"method\"]; assert m[\"name\"] in (\"blend\", \"ernest\") and m[\"ernest_weight\"] > 0 and "
              "\"reach outside\" in m[\"why\"], m'", g_train);
    /* --guard off: the network alone, no note */
    EXPECT(0, "%s finetune --model model.h5 --data wide.tsv --out wide0.h5 --max-epochs 20 --guard off", g_train);
    ck_assert_ptr_nonnull(strstr(g_out, "\nfit to its runs (scale-out: measured, predicted, miss): "));
    drop_err_lines("note: the fine-tuned model misses its own runs by up to "); /* 20 epochs of a tiny model */
    ck_assert_str_eq(g_err, "");
    EXPECT(0, "%s info --model wide0.h5", g_train);
    ck_assert_msg(strstr(g_out, "\nruntimes: the fine-tuned network alone\n"), "%s", g_out);
    /* fine-tuned otherwise than its calibration assumed (the guard off): its predictions say so */
    EXPECT(0, "%s --model wide0.h5 %s --scale-out 2..4 --json", g_predict, g_sets);
    ck_assert_msg(strstr(g_err, "warning: the model was fine-tuned with other options than those its intervals were "
                                "calibrated for") && strstr(g_out, "\"kind\":\"protocol\""), "%s\n%s", g_err, g_out);
    EXPECT_ERR(2, "--guard", "%s finetune --model model.h5 --data wide.tsv --out wide0.h5 --guard maybe", g_train);
}
END_TEST

/* Fine-tuning is meant for the runs of one context: notes on stderr (one line each, the command
 * still succeeds) when the runs span several, or are of another context than --set. */
START_TEST(test_history_contexts_noted) {
    /* runs of the --set context: no note */
    EXPECT(0, "%s --model model.h5 %s --scale-out 2..4 --history runs.tsv", g_predict, g_sets);
    ck_assert_str_eq(g_err, "");
    EXPECT(0, "%s finetune --model model.h5 --data runs.tsv --out n1.h5 --max-epochs 20", g_train);
    drop_err_lines("note: the fine-tuned model misses its own runs by up to ");
    ck_assert_str_eq(g_err, "");
    /* every context but the --set one */
    EXPECT(0, "%s --model model.h5 %s --scale-out 2..4 --history rest.tsv", g_predict, g_sets);
    ck_assert_msg(strstr(g_err, "bellamy-predict: note: --history rest.tsv holds runs of 7 contexts, which differ in "
                                "machine_type: ") != NULL, "%s", g_err);
    ck_assert_ptr_nonnull(strstr(g_err, "and uses all 126 runs\n"));
    ck_assert_ptr_nonnull(strstr(g_err, "bellamy-predict: note: none of those contexts is the --set context\n"));
    ck_assert_uint_eq(count(g_err, "\n"), 2);
    ck_assert_ptr_nonnull(strstr(g_out, "# chosen:"));
    /* every context, the --set one among them */
    EXPECT(0, "%s --model model.h5 %s --scale-out 2..4 --history synth.tsv", g_predict, g_sets);
    ck_assert_ptr_nonnull(strstr(g_err, "holds runs of 8 contexts"));
    ck_assert_uint_eq(count(g_err, "\n"), 1);
    /* one context, another than --set: the differing properties named */
    EXPECT(0, "head -n 4 rest.tsv > other.tsv");
    EXPECT(0, "%s --model model.h5 %s --scale-out 2..4 --history other.tsv", g_predict, g_sets);
    ck_assert_msg(strstr(g_err, "bellamy-predict: note: the --history runs are of another context than --set (") != NULL,
                  "%s", g_err);
    ck_assert_ptr_nonnull(strstr(g_err, "' in the data, '"));
    /* its runs are all at 2 machines: predicting 3 and 4 is named as outside their range */
    ck_assert_msg(strstr(g_err, "bellamy-predict: warning: scale-outs 3..4 lie outside the range of the 3 runs it was "
                                "fine-tuned on (2 only)"), "%s", g_err);
    /* and the model, fine-tuned on those runs, is asked about the --set context: said, naming what differs */
    ck_assert_msg(strstr(g_err, "bellamy-predict: warning: the model was fine-tuned on 3 runs of another context ("),
                  "%s", g_err);
    ck_assert_uint_eq(count(g_err, "\n"), 3);
    /* bellamy-train finetune on several contexts */
    EXPECT(0, "%s finetune --model model.h5 --data rest.tsv --out n2.h5 --max-epochs 20", g_train);
    ck_assert_msg(strstr(g_err, "bellamy-train finetune: note: --data rest.tsv holds runs of 7 contexts, which differ in ")
                  != NULL, "%s", g_err);
    ck_assert_ptr_nonnull(strstr(g_out, "fine-tuned 'synth' on 126 runs"));
}
END_TEST

/* Runs described by properties the model does not have (or has otherwise): errors naming the schema
 * file, line and property, in every command that reads runs for a model. */
START_TEST(test_runs_schema_checked) {
    EXPECT(0, "cp synth.schema extra.schema && echo 'property x_extra essential text const \"foo\"' >> extra.schema");
    EXPECT(0, "wc -l < extra.schema");
    int lines = atoi(g_out);
    char want[256];
    snprintf(want, sizeof want, "extra.schema:%d:10: property 'x_extra' is not a property of model 'synth'", lines);
    EXPECT_ERR(1, want, "%s evaluate --model model.h5 --data held.tsv --schema extra.schema", g_train);
    EXPECT_ERR(1, want, "%s finetune --model model.h5 --data runs.tsv --schema extra.schema --out x.h5", g_train);
    EXPECT_ERR(1, want, "%s --model model.h5 %s --scale-out 2..4 --history runs.tsv --schema extra.schema", g_predict,
               g_sets);
    EXPECT(0, "sed 's/^property data_size_MB .*/property data_size_MB essential text column data_size_MB/' synth.schema "
              "> kind.schema");
    EXPECT_ERR(1, "property 'data_size_MB' is text here but a number in model 'synth'",
               "%s evaluate --model model.h5 --data held.tsv --schema kind.schema", g_train);
    EXPECT(0, "%s evaluate --model model.h5 --data held.tsv --schema synth.schema", g_train);
    /* several contexts: a line per context and scale-out, never a mean pooled over contexts (issue 24) */
    EXPECT(0, "%s evaluate --model model.h5 --data synth.tsv", g_train);
    ck_assert_msg(strncmp(g_out, "context\tscale_out\truns\tmeasured_mean_s\tpredicted_s\trelative_error\n1\t2\t3\t", 67)
                  == 0 && strstr(g_out, "\n8\t12\t3\t") && strstr(g_out, "\n# context 8: machine_type=") &&
                  strstr(g_out, "\n# mean relative error over 48 contexts x scale-outs: "), "%s", g_out);
    EXPECT(0, "%s evaluate --model model.h5 --data synth.tsv --json", g_train);
    ck_assert_msg(strstr(g_out, "\"contexts\":8,\"context_labels\":[\"machine_type=") &&
                  strstr(g_out, "{\"context\":8,\"scale_out\":12,\"runs\":3,"), "%s", g_out);
    /* runs of another job through the model's stored schema (issue 24): the model named with what it was
     * pre-trained for, and both ways out, not an invitation to rename a column */
    EXPECT(0, "printf 'nodes,instance,runtime\\n4,m5,100\\n8,m5,60\\n' > other-job.csv");
    const char *other = "other-job.csv:1:1: these runs lack 7 of the 7 columns model 'synth' reads ('instance_count', "
                        "'gross_runtime', ";
    EXPECT_ERR(1, other, "%s finetune --model model.h5 --data other-job.csv --out x.h5", g_train);
    ck_assert_msg(strstr(g_err, "they look like another job's than the one 'synth' was pre-trained for (126 runs of 7 "
                                "contexts; job_type 'synth-spark'") && strstr(g_err, "give their own schema (--schema)") &&
                  !strstr(g_err, "did you mean"), "%s", g_err);
    EXPECT_ERR(1, other, "%s --model model.h5 %s --scale-out 2..4 --history other-job.csv", g_predict, g_sets);
    EXPECT_ERR(1, other, "%s evaluate --model model.h5 --data other-job.csv", g_train);
    /* one column of seven renamed: named with its place in the stored schema and the closest names */
    /* the scale-out's column renamed (the issue's own case): a rename, with its did-you-mean, not another job */
    EXPECT(0, "sed '1s/instance_count/instance/' runs.tsv > renamed-x.tsv");
    EXPECT_ERR(1, "renamed-x.tsv:1:1: missing column 'instance_count', which model 'synth' reads (schema stored in the "
               "model:", "%s --model model.h5 %s --scale-out 2..4 --history renamed-x.tsv", g_predict, g_sets);
    ck_assert_msg(strstr(g_err, "did you mean 'instance'?") && !strstr(g_err, "another job's:"), "%s", g_err);
    EXPECT(0, "sed '1s/iterations/iteration/' runs.tsv > renamed.tsv");
    EXPECT_ERR(1, "renamed.tsv:1:1: missing column 'iterations', which model 'synth' reads (schema stored in the model:",
               "%s finetune --model model.h5 --data renamed.tsv --out x.h5", g_train);
    ck_assert_msg(strstr(g_err, "; did you mean 'iteration'?; if the runs are another job's than 'synth' was pre-trained "
                                "for (126 runs of 7 contexts; job_type 'synth-spark'"), "%s", g_err);
}
END_TEST

/* A fine-tuned model saved into the file that holds its base: two models, --name picks one. */
START_TEST(test_multi_model_file) {
    EXPECT(0, "cp model.h5 both.h5");
    EXPECT(0, "%s finetune --model both.h5 --data runs.tsv --out both.h5 --out-name ctx1 --max-epochs 50", g_train);
    EXPECT(0, "%s --model both.h5 --name ctx1 %s --scale-out 3", g_predict, g_sets);
    EXPECT(0, "%s --model both.h5 --name synth %s --scale-out 3", g_predict, g_sets);
    EXPECT_ERR(1, "ctx1", "%s --model both.h5 %s --scale-out 3", g_predict, g_sets); /* which one? */
    /* check: both models load, the checksum header is there; a damaged copy is named and fails */
    EXPECT(0, "%s check --model both.h5", g_train);
    ck_assert_msg(strstr(g_out, "2 models; checksum header present and matching") && strstr(g_out, "  synth: ok") &&
                  strstr(g_out, "  ctx1: ok") && !strstr(g_out, "temporar"), "%s", g_out);
    /* a save killed mid-way left its temporary: check names it, the next save removes it (issue 24) */
    EXPECT(0, "head -c 100 both.h5 > .both.h5.tmp-2147483000-Zq9xYw");
    EXPECT(0, "%s check --model both.h5", g_train);
    ck_assert_msg(strstr(g_out, "both.h5: 1 temporary of unfinished saves beside it: .both.h5.tmp-2147483000-Zq9xYw (its "
                                "writer is gone); the next save of the file removes those whose writer is gone"),
                  "%s", g_out);
    EXPECT(0, "%s finetune --model both.h5 --name synth --data runs.tsv --out both.h5 --out-name ctx1 --max-epochs 50",
           g_train);
    EXPECT(0, "test ! -e .both.h5.tmp-2147483000-Zq9xYw && ls -a | grep -c 'both.h5.tmp' || true");
    ck_assert_str_eq(g_out, "0\n");
    EXPECT(0, "cp both.h5 dmg.h5 && printf 'XXXX' | dd of=dmg.h5 bs=1 seek=3000 conv=notrunc 2>/dev/null");
    EXPECT_ERR(1, "dmg.h5: damaged file: its checksum does not match", "%s check --model dmg.h5", g_train);
    /* read on request, with a note; a save into it is refused all the same, pointing at check --stamp */
    EXPECT(0, "BELLAMY_MODEL_IGNORE_CHECKSUM=1 %s --model dmg.h5 --name ctx1 %s --scale-out 3", g_predict, g_sets);
    ck_assert_msg(strstr(g_err, "note: dmg.h5: damaged file") && strstr(g_err, "read anyway"), "%s", g_err);
    EXPECT_ERR(1, "check --model FILE --stamp", "BELLAMY_MODEL_IGNORE_CHECKSUM=1 %s finetune --model both.h5 --data "
               "runs.tsv --out dmg.h5 --max-epochs 5", g_train);
    /* --stamp gives a file without a header (as 0.4.0 wrote them; h5unjam strips the user block) one */
    if (access("/usr/bin/h5unjam", X_OK) == 0) {
        EXPECT(0, "h5unjam -i both.h5 -o legacy.h5 >/dev/null");
        /* nothing vouches for it: refused everywhere, naming both remedies, until someone does */
        EXPECT_ERR(1, "legacy.h5: no checksum header", "%s --model legacy.h5 --name ctx1 %s --scale-out 3", g_predict,
                   g_sets);
        EXPECT_ERR(1, "BELLAMY_MODEL_ALLOW_UNSTAMPED=1", "%s check --model legacy.h5", g_train);
        ck_assert_msg(strstr(g_err, "check --model FILE --stamp"), "%s", g_err);
        EXPECT(0, "BELLAMY_MODEL_ALLOW_UNSTAMPED=1 %s --model legacy.h5 --name ctx1 %s --scale-out 3", g_predict, g_sets);
        ck_assert_msg(strstr(g_err, "note: legacy.h5 has no checksum header"), "%s", g_err);
        EXPECT(0, "%s check --model legacy.h5 --stamp", g_train);
        ck_assert_msg(strstr(g_out, "no checksum header") && strstr(g_out, "rewritten with a checksum header"), "%s",
                      g_out);
        EXPECT(0, "%s check --model legacy.h5", g_train);
        ck_assert_msg(strstr(g_out, "checksum header present and matching"), "%s", g_out);
        EXPECT(0, "%s --model legacy.h5 --name ctx1 %s --scale-out 3", g_predict, g_sets);
    }
}
END_TEST

/* models/README's own example: an attribute added with h5py changes the file's size as well as its
 * bytes. Refused as it stands; read with BELLAMY_MODEL_IGNORE_CHECKSUM=1 (and a note); check --stamp
 * under the override keeps the edit with a matching header. Without h5py the same edit is made with
 * HDF5 from C and the old header put back, which leaves the file as h5py would. */
START_TEST(test_h5py_edit_on_purpose) {
    EXPECT(0, "cp model.h5 edited.h5");
    const int h5py = run("for p in /usr/bin/python3 python3; do $p -c 'import h5py' 2>/dev/null && exit 0; done; "
                         "exit 1") == 0;
    if (h5py) {
        EXPECT(0, "for p in /usr/bin/python3 python3; do $p -c 'import h5py' 2>/dev/null && break; done; $p -c \""
                  "import h5py\nwith h5py.File('edited.h5', 'a') as f: f['models/synth'].attrs['note'] = 'kept'\"");
        /* another program's HDF5 file is named as such first, never offered a stamp (issue 24) */
        EXPECT(0, "for p in /usr/bin/python3 python3; do $p -c 'import h5py' 2>/dev/null && break; done; $p -c \""
                  "import h5py\nwith h5py.File('foreign.h5', 'w') as f: f['x'] = [1, 2, 3]\"");
        EXPECT_ERR(1, "foreign.h5: not a Bellamy model file", "%s --model foreign.h5 %s --scale-out 3", g_predict, g_sets);
        ck_assert_msg(!strstr(g_err, "--stamp"), "%s", g_err);
        EXPECT_ERR(1, "refusing to overwrite foreign.h5: not a Bellamy model file",
                   "%s finetune --model model.h5 --data runs.tsv --out foreign.h5", g_train);
        ck_assert_msg(!strstr(g_err, "--stamp"), "%s", g_err);
    } else {
        bl_error err;
        char path[4200];
        snprintf(path, sizeof path, "%s/edited.h5", g_dir);
        ck_assert_int_eq(bl_mf_test_set_root_string(path, "note", "kept, a long note that grows the file", 0,
                                                    &err), BL_OK);
        EXPECT(0, "dd if=model.h5 of=edited.h5 bs=512 count=1 conv=notrunc 2>/dev/null");
    }
    EXPECT(0, "test $(stat -c %%s edited.h5) -ne $(stat -c %%s model.h5)"); /* the size changed */
    EXPECT_ERR(1, "its header says", "%s --model edited.h5 %s --scale-out 2..4", g_predict, g_sets);
    ck_assert_msg(strstr(g_err, "BELLAMY_MODEL_IGNORE_CHECKSUM=1"), "%s", g_err);
    EXPECT(0, "%s --model model.h5 %s --scale-out 2..4", g_predict, g_sets);
    char want[65536];
    strcpy(want, g_out);
    EXPECT(0, "BELLAMY_MODEL_IGNORE_CHECKSUM=1 %s --model edited.h5 %s --scale-out 2..4", g_predict, g_sets);
    ck_assert_str_eq(g_out, want);
    ck_assert_msg(strstr(g_err, "note: edited.h5: damaged or truncated file") && strstr(g_err, "read anyway"), "%s",
                  g_err);
    EXPECT(1, "%s check --model edited.h5 --stamp", g_train); /* strictly: not without the override */
    EXPECT(0, "BELLAMY_MODEL_IGNORE_CHECKSUM=1 %s check --model edited.h5 --stamp", g_train);
    ck_assert_msg(strstr(g_out, "rewritten with a checksum header"), "%s", g_out);
    EXPECT(0, "%s check --model edited.h5", g_train);
    ck_assert_msg(strstr(g_out, "checksum header present and matching"), "%s", g_out);
    EXPECT(0, "%s --model edited.h5 %s --scale-out 2..4", g_predict, g_sets);
    ck_assert_str_eq(g_out, want);
    ck_assert_str_eq(g_err, "");
    if (h5py) { /* the edit itself is kept */
        EXPECT(0, "for p in /usr/bin/python3 python3; do $p -c 'import h5py' 2>/dev/null && break; done; $p -c \""
                  "import h5py\nprint(h5py.File('edited.h5', 'r')['models/synth'].attrs['note'])\"");
        ck_assert_str_eq(g_out, "kept\n");
    }
}
END_TEST

/* Unknown options, commands, columns and property names: the error suggests the closest known
 * name, the way git does; a name close to nothing gets no suggestion. */
START_TEST(test_did_you_mean) {
    EXPECT_ERR(2, "unknown option '--epoch'; did you mean '--epochs'?",
               "%s pretrain --data rest.tsv --schema synth.schema --out x.h5 --epoch 5", g_train);
    EXPECT_ERR(2, "unknown command 'pretain'; did you mean 'pretrain'?", "%s pretain --data x", g_train);
    EXPECT_ERR(2, "unknown option '--scaleout'; did you mean '--scale-out'?", "%s --model model.h5 --scaleout 2",
               g_predict);
    EXPECT_ERR(2, "unknown option '-model'; did you mean '--model'?", "%s -model model.h5", g_predict);
    EXPECT_ERR(2, "unknown option '--frob' (try --help)", "%s --model model.h5 --frob", g_predict);
    /* a forgotten value: the next option is not taken for it (no file named --quiet is written) */
    EXPECT_ERR(2, "--out needs a value (MODEL.h5), not the option '--quiet'; a value that begins with '--' is given as "
                  "--out=--quiet", "%s pretrain --data rest.tsv --schema synth.schema --out --quiet", g_train);
    EXPECT(1, "test -e ./--quiet");
    EXPECT_ERR(2, "--data needs a value (FILE), not the option '--schema'",
               "%s pretrain --data --schema synth.schema --out x.h5", g_train);
    EXPECT_ERR(2, "--model needs a value (MODEL.h5), not the option '--'", "%s --model -- 2", g_predict);
    /* a column renamed in the user's file: node_type for node_flavor */
    EXPECT(0, "sed 's/column node_flavor/column node_type/' user.schema > node-type.schema");
    EXPECT_ERR(1, "missing column 'node_type' (named in node-type.schema:5:45); did you mean 'node_flavor'?",
               "%s inspect --data user-all.csv --schema node-type.schema", g_train);
    /* a property name misspelt in a schema, in a context and in a runs schema */
    EXPECT(0, "sed 's/property machine_type/property machine_typ/' user.schema > typo.schema");
    EXPECT_ERR(1, "unknown property 'machine_typ'; did you mean 'machine_type'?",
               "%s inspect --data user-all.csv --schema typo.schema", g_train);
    EXPECT_ERR(1, "unknown property 'data_size_mb'; did you mean 'data_size_MB'?",
               "%s --model user.h5 --set machine_type=r5.xlarge --set job_args=q1 --set data_size_mb=50 "
               "--scale-out 2..4", g_predict);
    EXPECT(0, "sed 's/property machine_type/property x_machine_type/' user.schema > extra.schema");
    EXPECT_ERR(1, "property 'x_machine_type' is not a property of model 'etl'; did you mean 'machine_type'?",
               "%s evaluate --model user.h5 --data user-runs.csv --schema extra.schema", g_train);
}
END_TEST

/* JSON that parses (where python3 is there to say so). */
#define EXPECT_JSON(file)                                                                                 \
    EXPECT(0, "python3 -m json.tool %s > /dev/null || ! command -v python3", file)

/* A user's own model (the ETL reproducer's shape): the schema's constants are filled when --set leaves
 * them out (the same predictions), the context can come from runs (--context-from, or --history of one
 * context), warnings name the range or the values seen, JSON numbers are numbers, and a fine-tuned file
 * says what it was tuned on. */
START_TEST(test_user_contexts_and_warnings) {
    const char *full = "--set machine_type=m5.2xlarge --set job_args=q3 --set data_size_MB=200 "
                       "--set 'environment=private yarn' --set job_type=etl-spark";
    const char *part = "--set machine_type=m5.2xlarge --set job_args=q3 --set data_size_MB=200";
    char want[65536];
    EXPECT(0, "%s --model user.h5 %s --scale-out 2..16", g_predict, full);
    strcpy(want, g_out);
    ck_assert_str_eq(g_err, "");
    EXPECT(0, "%s --model user.h5 %s --scale-out 2..16", g_predict, part);
    ck_assert_str_eq(g_out, want); /* job_type and environment from the stored schema */
    ck_assert_str_eq(g_err, "");
    /* the context from a runs file of one context */
    EXPECT(0, "%s --model user.h5 --context-from user-runs.csv --scale-out 2..16", g_predict);
    ck_assert_str_eq(g_out, want);
    EXPECT_ERR(1, "--context-from user-rest.csv holds runs of 11 contexts, which differ in machine_type: ",
               "%s --model user.h5 --context-from user-rest.csv --scale-out 2..16", g_predict);
    /* --history alone: its one context; the same as --set and --history */
    EXPECT(0, "%s --model user.h5 %s --history user-runs.csv --scale-out 2..16 --json > h1.json", g_predict, part);
    EXPECT(0, "%s --model user.h5 --history user-runs.csv --scale-out 2..16 --json > h2.json", g_predict);
    EXPECT(0, "grep -o '\"predictions\".*\"choice\"' h1.json > p1; grep -o '\"predictions\".*\"choice\"' h2.json > p2; "
              "cmp p1 p2");
    EXPECT(0, "cat h2.json");
    ck_assert_msg(strstr(g_out, "\"context\":{\"machine_type\":\"m5.2xlarge\",\"job_args\":\"q3\",\"data_size_MB\":200,"
                                "\"environment\":\"private yarn\",\"job_type\":\"etl-spark\"}") &&
                  strstr(g_out, "\"context_from\":{\"machine_type\":\"runs\"") &&
                  strstr(g_out, "\"fine_tuned_on_runs\":3,\"fine_tuned_now\":true"), "%s", g_out);
    EXPECT_JSON("h2.json");
    EXPECT(0, "%s --model user.h5 %s --scale-out 2..4 --json > h3.json && cat h3.json", g_predict, part);
    ck_assert_msg(strstr(g_out, "\"context_from\":{\"machine_type\":\"set\",\"job_args\":\"set\",\"data_size_MB\":\"set\","
                                "\"environment\":\"model\",\"job_type\":\"model\"}") &&
                  strstr(g_out, "\"warnings\":[]"), "%s", g_out);
    EXPECT_ERR(1, "3 essential properties are missing: 'machine_type' (seen in training: 'r5.xlarge', 'm5.2xlarge'), "
                  "'job_args' (seen in training: 'q1', 'q2', ... (3 values)), 'data_size_MB' (seen in training: 50..200); "
                  "give each with --set NAME=VALUE or take them from runs with --context-from RUNS",
               "%s --model user.h5 --scale-out 2..4", g_predict);
    EXPECT(1, "%s --model user.h5 --history user-rest.csv --scale-out 2..4", g_predict);
    ck_assert_msg(strstr(g_err, "note: --history user-rest.csv holds runs of 11 contexts") &&
                  strstr(g_err, "--history holds runs of 11 contexts, so the context is not taken from it") &&
                  count(g_err, "\n") == 2, "%s", g_err);
    ck_assert_ptr_null(strstr(g_err, "none of those contexts")); /* no --set to compare with */
    /* warnings that name the fix: on stderr and in the JSON, the prediction made all the same */
    EXPECT(0, "%s --model user.h5 %s --scale-out 2..200", g_predict, part);
    ck_assert_msg(strstr(g_err, "bellamy-predict: warning: scale-outs 17..200 lie outside the range of scale-outs the "
                                "model was pre-trained on (2..16)") && count(g_err, "\n") == 2, "%s", g_err);
    /* beyond 4 × 16 machines the runtime is unknown: said, and never chosen */
    ck_assert_msg(strstr(g_err, "note: 136 scale-outs lie beyond 4 times the scale-outs the model and its runs know "
                                "(2..16): the runtime is unknown there"), "%s", g_err);
    ck_assert_ptr_nonnull(strstr(g_out, "# chosen: scale-out"));
    EXPECT(0, "%s --model user.h5 --set machine_type=r5.2xlarge --set job_args=q3 --set data_size_MB=2000 "
              "--scale-out 2..8 --json > w.json 2> w.err && cat w.err", g_predict);
    ck_assert_msg(strstr(g_out, "warning: machine_type 'r5.2xlarge' is a value no pre-training row had (closest seen: "
                                "'r5.xlarge', 'm5.2xlarge'; 2 values in all)") &&
                  strstr(g_out, "warning: data_size_MB 2000 lies outside the values the pre-training rows had (50..200)"),
                  "%s", g_out);
    EXPECT(0, "cat w.json");
    ck_assert_msg(strstr(g_out, "\"warnings\":[{\"kind\":\"unseen_value\",\"property\":\"machine_type\",\"message\":") &&
                  strstr(g_out, "{\"kind\":\"number_range\",\"property\":\"data_size_MB\",\"message\":"), "%s", g_out);
    EXPECT_JSON("w.json");
    /* the synthetic corpus: optional cluster totals left out are named */
    EXPECT(0, "%s --model model.h5 --set machine_type=s1.large --set job_args=5 --set data_size_MB=5000 --scale-out 2..4",
           g_predict);
    ck_assert_msg(strstr(g_err, "warning: optional property 'memory' is left out, but every pre-training row had it "
                                "(16000..61000 per machine)") && strstr(g_err, "'slots' is left out"), "%s", g_err);
    /* a fine-tuned file says what it was tuned on, and for which context */
    EXPECT(0, "%s finetune --model user.h5 --data user-runs.csv --out user-tuned.h5", g_train);
    ck_assert_msg(strstr(g_out, "fine-tuned for: machine_type='m5.2xlarge'; job_args='q3'; data_size_MB='200'; "
                                "environment='private yarn'; job_type='etl-spark'"), "%s", g_out);
    EXPECT(0, "%s --model user-tuned.h5 %s --scale-out 4..12 --json", g_predict, part);
    ck_assert_msg(strstr(g_out, "\"fine_tuned_on_runs\":3,\"fine_tuned_now\":false,\"method\":{") &&
                  strstr(g_out, "},\"fine_tuned_context\":{"
                                "\"machine_type\":\"m5.2xlarge\",\"job_args\":\"q3\",\"data_size_MB\":200,"), "%s", g_out);
    EXPECT(0, "%s --model user-tuned.h5 %s --scale-out 2..16", g_predict, part);
    ck_assert_msg(strstr(g_err, "scale-outs 2..3 and 13..16 lie outside the range of the 3 runs it was fine-tuned on "
                                "(4..12)"), "%s", g_err);
}
END_TEST

/* bellamy-train info: every property with what it needs, the values seen with their counts, the
 * ranges, training and fine-tuning (and the context), members and encodings; as text and as JSON.
 * check, inspect and evaluate have --json too. */
START_TEST(test_info_and_json) {
    EXPECT(0, "%s info --model user.h5", g_train);
    const char *want[] = {
        "model 'etl' in user.h5: 2 members (the median of their predictions), 5 properties\n",
        "  machine_type: essential text, from column node_flavor; must be given\n",
        "    seen: 2 values: 'r5.xlarge' (48 rows), 'm5.2xlarge' (40 rows)\n",
        "    seen: 3 values: 'q1' (32 rows), 'q2' (32 rows), 'q3' (24 rows)\n",
        "  data_size_MB: essential number, from column input_gb; must be given\n",
        "    seen: 2 values in 50..200: '50' (48 rows), '200' (40 rows)\n",
        "  environment: essential text, from const \"private yarn\"; left out, it is 'private yarn' (the schema's constant)\n",
        "  job_type: optional text, from const \"etl-spark\"; left out, it is 'etl-spark' (the schema's constant)\n",
        "pre-training: yes; 88 rows, 11 contexts, scale-outs 2..16, runtimes ",
        "  member 2/2: numbers log, best loss ",
        "encoding: numbers both, cluster totals as totals, vectors of 40",
        "fine-tuning: never fine-tuned\n" };
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) ck_assert_msg(strstr(g_out, want[i]), "lacks %s: %s", want[i], g_out);
    EXPECT(0, "%s finetune --model user.h5 --data user-runs.csv --out info-tuned.h5 --out-name tuned", g_train);
    EXPECT(0, "%s info --model info-tuned.h5 --name tuned", g_train);
    ck_assert_msg(strstr(g_out, "fine-tuning: 3 runs, ") && strstr(g_out, "; 1 context, scale-outs 4..12, runtimes ") &&
                  strstr(g_out, "fine-tuned for: machine_type='m5.2xlarge'; job_args='q3'; data_size_MB='200'; "
                                "environment='private yarn'; job_type='etl-spark'\n"), "%s", g_out);
    /* issue 24: the pre-training keeps its own time beside the fine-tuning's (a fine-tuning rewrote it);
     * the guard's reason is not said twice */
    char pre_time[32] = "", ft_time[32] = "";
    const char *pt = strstr(g_out, "; pre-trained "), *ft = strstr(g_out, "; fine-tuned ");
    ck_assert_msg(pt && ft, "%s", g_out);
    sscanf(pt + strlen("; pre-trained "), "%20s", pre_time);
    sscanf(ft + strlen("; fine-tuned "), "%20s", ft_time);
    ck_assert_msg(strlen(pre_time) == 20 && pre_time[19] == 'Z' && strlen(ft_time) == 20 && strcmp(pre_time, ft_time) <= 0,
                  "%s / %s", pre_time, ft_time);
    EXPECT(0, "%s info --model user.h5", g_train);
    ck_assert_msg(strstr(g_out, pre_time), "the pre-training's time %s changed: %s", pre_time, g_out);
    EXPECT(0, "%s info --model info-tuned.h5 --name tuned", g_train);
    ck_assert_msg(!strstr(g_out, "network: the network alone") && !strstr(g_out, "network alone: the network alone"),
                  "%s", g_out);
    EXPECT(0, "%s info --model info-tuned.h5 --name tuned --json > info.json && cat info.json", g_train);
    ck_assert_msg(strstr(g_out, "{\"name\":\"data_size_MB\",\"essential\":true,\"kind\":\"number\",\"cluster_total\":false,"
                                "\"source\":{\"kind\":\"column\",\"text\":\"column input_gb\",\"columns\":[\"input_gb\"]},"
                                "\"default\":null,\"default_from\":null,\"seen\":{\"distinct\":2,\"per_machine\":false,"
                                "\"min\":50,\"max\":200,\"values\":[{\"value\":50,\"rows\":48},{\"value\":200,\"rows\":40}]},"
                                "\"fine_tuned_value\":200}") &&
                  strstr(g_out, "\"default\":\"etl-spark\",\"default_from\":\"schema\"") &&
                  strstr(g_out, "\"fine_tuning\":{\"runs\":3,") && strstr(g_out, "\"scale_out_min\":4,\"scale_out_max\":12") &&
                  strstr(g_out, "\"members\":[{\"numbers\":\"binary\""), "%s", g_out);
    assert_shortest_numbers(g_out);
    EXPECT_JSON("info.json");
    EXPECT(0, "%s info --model model.h5 --values 2", g_train);
    ck_assert_msg(strstr(g_out, "  memory: optional number, a cluster total (given per machine), from column memory; may "
                                "be left out\n    seen: 3 values in 16000..61000 per machine: '"), "%s", g_out);
    ck_assert_msg(strstr(g_out, ", ... (1 more; --values N or --json)"), "%s", g_out);
    /* --values 0: the counts alone (it printed "3 values:, ... (3 more; ...)") */
    EXPECT(0, "%s info --model model.h5 --values 0", g_train);
    ck_assert_msg(strstr(g_out, "\n    seen: 3 values in 16000..61000 per machine (--values N or --json lists them)\n") &&
                  !strstr(g_out, ":,") && !strstr(g_out, "more;"), "%s", g_out);
    /* the search winner is the member with the lowest loss, not member 1 */
    double loss[6] = {0}, least = INFINITY;
    int members = 0, winner = 0;
    for (const char *m = strstr(g_out, "\n  member "); m && members < 6; m = strstr(m + 1, "\n  member ")) {
        const char *b = strstr(m, "best loss ");
        ck_assert_ptr_nonnull(b);
        loss[members] = strtod(b + strlen("best loss "), NULL);
        if (loss[members] < least) {
            least = loss[members];
            winner = members;
        }
        members++;
    }
    ck_assert_int_eq(members, 6);
    char win[64];
    snprintf(win, sizeof win, "\nsearch winner: member %d of 6, best validation loss ", winner + 1);
    ck_assert_msg(strstr(g_out, win), "lacks '%s': %s", win, g_out);
    EXPECT_ERR(1, "nosuch", "%s info --model user.h5 --name nosuch", g_train);
    /* check lists what each model needs; --json */
    EXPECT(0, "%s check --model info-tuned.h5", g_train);
    ck_assert_msg(strstr(g_out, "  tuned: ok (2 members, 88 pre-training rows; 5 properties: machine_type, job_args, "
                                "data_size_MB, environment, job_type; bellamy-train info"), "%s", g_out);
    EXPECT(0, "%s check --model info-tuned.h5 --json > check.json && cat check.json", g_train);
    ck_assert_msg(strstr(g_out, "\"header\":\"matching\",\"models\":[{\"name\":\"tuned\",\"ok\":true,\"members\":2,"
                                "\"pretraining_rows\":88,\"fine_tuned_on_runs\":3,\"properties\":[\"machine_type\","),
                  "%s", g_out);
    EXPECT_JSON("check.json");
    EXPECT(0, "%s inspect --data user-all.csv --schema user.schema --row 3 --json > inspect.json && cat inspect.json",
           g_train);
    ck_assert_msg(strstr(g_out, "\"rows\":96,\"contexts\":12,\"skipped_rows\":0,\"scale_out\":{\"min\":2,\"max\":16}") &&
                  strstr(g_out, "\"data_size_MB\":{\"value\":50,\"vector\":["), "%s", g_out);
    assert_shortest_numbers(g_out);
    EXPECT_JSON("inspect.json");
    EXPECT(0, "%s evaluate --model info-tuned.h5 --name tuned --data user-runs.csv --json > eval.json && cat eval.json",
           g_train);
    ck_assert_msg(strstr(g_out, "\"runs\":3,\"skipped_rows\":0,\"contexts\":1,\"context_labels\":[\"machine_type=m5.2xlarge; "
                                "job_args=q3; data_size_MB=200; environment=private yarn\"],\"scale_outs\":[{\"context\":1,"
                                "\"scale_out\":4,\"runs\":1,\"measured_mean_s\":") &&
                  strstr(g_out, "\"mean_relative_error\":"), "%s", g_out);
    assert_shortest_numbers(g_out);
    EXPECT_JSON("eval.json");
}
END_TEST

/* --precision (issue 28): f32 pre-trains a model that info shows, check accepts, predict and finetune use
 * and that stays f32 when fine-tuned; a bad value and --device cuda with f32 are usage errors naming the
 * option (never a silent switch); bellamy-eval's --precision likewise, its model cache by precision. */
START_TEST(test_precision_cli) {
    EXPECT_ERR(2, "--precision", "%s pretrain --data rest.tsv --schema synth.schema --out x.h5 --precision f16", g_train);
    EXPECT_ERR(2, "--precision", "%s pretrain --data rest.tsv --schema synth.schema --out x.h5 --precision ''", g_train);
    EXPECT_ERR(2, "--precision f32: the CUDA search computes in float64 only; use --device cpu with --precision f32, "
               "or --precision f64 with --device cuda",
               "%s pretrain --data rest.tsv --schema synth.schema --out x.h5 --device cuda --precision f32", g_train);
    EXPECT(0, "%s pretrain --help", g_train);
    ck_assert_msg(strstr(g_out, "--precision") && strstr(g_out, "f64|f32") && strstr(g_out, "(default: f32; f64 with --device"),
                  "%s", g_out);
    EXPECT(0, "%s pretrain --data rest.tsv --schema synth.schema --out f32.h5 --name s32 --trials 1 --epochs 5 "
              "--grace 5 --members 2 --threads 1 --quiet --calibrate off --precision f32", g_train);
    EXPECT(0, "%s info --model f32.h5", g_train);
    ck_assert_msg(strstr(g_out, "\nprecision: f32 (float32 arithmetic; the file stores float32 weights)\n"), "%s", g_out);
    EXPECT(0, "%s info --model f32.h5 --json > info32.json && cat info32.json", g_train);
    ck_assert_msg(strstr(g_out, "\"precision\":\"f32\""), "%s", g_out);
    EXPECT_JSON("info32.json");
    EXPECT(0, "%s info --model model.h5", g_train); /* pre-trained with the default: float32 on the CPU */
    ck_assert_msg(strstr(g_out, "\nprecision: f32 (float32 arithmetic; the file stores float32 weights)\n"), "%s", g_out);
    EXPECT(0, "%s info --model model.h5 --json", g_train);
    ck_assert_msg(strstr(g_out, "\"precision\":\"f32\""), "%s", g_out);
    EXPECT(0, "%s check --model f32.h5", g_train);
    ck_assert_msg(strstr(g_out, "checksum header present and matching") && strstr(g_out, "  s32: ok (2 members"), "%s",
                  g_out);
    EXPECT(0, "%s --model f32.h5 %s --scale-out 2..6", g_predict, g_sets);
    EXPECT(0, "%s finetune --model f32.h5 --data runs.tsv --out f32-tuned.h5 --max-epochs 20", g_train);
    EXPECT(0, "%s info --model f32-tuned.h5", g_train);
    ck_assert_msg(strstr(g_out, "\nprecision: f32 "), "%s", g_out);
    /* a float64 model saved into the f32 file beside it: each keeps its own */
    EXPECT(0, "%s pretrain --data rest.tsv --schema synth.schema --out f32.h5 --name s64 --trials 1 --epochs 5 "
              "--grace 5 --members 1 --threads 1 --quiet --calibrate off --precision f64", g_train);
    EXPECT(0, "%s info --model f32.h5 --name s32", g_train);
    ck_assert_msg(strstr(g_out, "\nprecision: f32 "), "%s", g_out);
    EXPECT(0, "%s info --model f32.h5 --name s64", g_train);
    ck_assert_msg(strstr(g_out, "\nprecision: f64 (float64 arithmetic and weights)\n"), "%s", g_out);
    EXPECT(0, "%s info --model f32.h5 --name s64 --json", g_train);
    ck_assert_msg(strstr(g_out, "\"precision\":\"f64\""), "%s", g_out);
    /* bellamy-eval */
    char eval[4200];
    snprintf(eval, sizeof eval, "'%s/bellamy-eval'", getenv("BELLAMY_BUILD_ROOT"));
    EXPECT_ERR(2, "--precision", "%s --data rest.tsv --schema synth.schema --out ev --precision double", eval);
    EXPECT_ERR(2, "--val-fraction 1: must be strictly between 0 and 1",
               "%s --data rest.tsv --schema synth.schema --out ev --val-fraction 1", eval);
    EXPECT_ERR(2, "--val-fraction", "%s --data rest.tsv --schema synth.schema --out ev --val-fraction x", eval);
    /* its model cache keeps float32 fold models apart from float64 ones (their names say -f32) */
    EXPECT(0, "%s --data rest.tsv --schema synth.schema --out ev32 --quick --quiet --precision f32 --model-cache c32 "
              "--methods bellamy --folds 2 --max-n 1 >/dev/null && ls c32 | grep -c -- '-f32'", eval);
    ck_assert_msg(atoi(g_out) > 0, "no float32 fold model in the cache: %s", g_out);
    EXPECT(0, "%s --data rest.tsv --schema synth.schema --out ev64 --quick --quiet --model-cache c32 --methods bellamy "
              "--folds 2 --max-n 1 --precision f64 >/dev/null && ls c32 | grep -vc -- '-f32'", eval);
    ck_assert_msg(atoi(g_out) > 0, "the float64 run reused the float32 fold models: %s", g_out);
    EXPECT(0, "%s --help", eval);
    ck_assert_msg(strstr(g_out, "--precision"), "%s", g_out);
}
END_TEST

/* --skip-invalid: a runs file with a failed run (blank runtime) and a bad row loads with those rows
 * left out, each named with its line, and the count said; without it the first error stands. */
START_TEST(test_skip_invalid) {
    EXPECT(0, "cp user-runs.csv bad-runs.csv && printf 'r9001,2024-04-01,q3,m5.2xlarge,16,200,\\n"
              "r9002,2024-04-02,q3,m5.2xlarge,many,200,99.5\\n' >> bad-runs.csv");
    EXPECT_ERR(1, "bad-runs.csv:5:", "%s finetune --model user.h5 --data bad-runs.csv --out s.h5", g_train);
    EXPECT(0, "%s finetune --model user.h5 --data bad-runs.csv --out s.h5 --skip-invalid", g_train);
    drop_err_lines("note: the fine-tuned model misses its own runs by up to ");
    ck_assert_msg(strstr(g_err, "bellamy-train finetune: note: bad-runs.csv:5:") &&
                  strstr(g_err, "bellamy-train finetune: note: bad-runs.csv:6:") &&
                  strstr(g_err, "; row skipped (--skip-invalid)\n") &&
                  strstr(g_err, "note: --data bad-runs.csv: 2 invalid rows skipped, 3 used\n") && count(g_err, "\n") == 3,
                  "%s", g_err);
    ck_assert_ptr_nonnull(strstr(g_out, "fine-tuned 'etl' on 3 runs"));
    EXPECT(0, "%s --model user.h5 --history bad-runs.csv --skip-invalid --scale-out 4..12", g_predict);
    ck_assert_ptr_nonnull(strstr(g_err, "--history bad-runs.csv: 2 invalid rows skipped, 3 used"));
    EXPECT(0, "%s evaluate --model user.h5 --data bad-runs.csv --skip-invalid", g_train);
    ck_assert_ptr_nonnull(strstr(g_out, "# mean relative error over 3 scale-outs"));
    EXPECT(0, "%s inspect --data bad-runs.csv --schema user.schema --skip-invalid", g_train);
    ck_assert_ptr_nonnull(strstr(g_out, "rows: 3\nskipped rows: 2"));
    EXPECT_ERR(1, "bad-runs.csv:5:", "%s --model user.h5 --history bad-runs.csv --scale-out 4..12", g_predict);
    EXPECT_ERR(2, "--skip-invalid is only used with --history or --context-from",
               "%s --model user.h5 --set machine_type=r5.xlarge --set job_args=q1 --set data_size_MB=50 --scale-out 4 "
               "--skip-invalid", g_predict);
    EXPECT(0, "head -n 1 bad-runs.csv > none.csv && tail -n 2 bad-runs.csv >> none.csv");
    EXPECT_ERR(1, "none.csv: no valid rows: all 2 were invalid (the first: none.csv:2:",
               "%s finetune --model user.h5 --data none.csv --out s.h5 --skip-invalid", g_train);
}
END_TEST

/* Issue 24 item 3: an invalid runtime (NaN, 0, negative, blank: a failed run) is an error naming the row
 * and both ways out, in every program that reads data or runs; with --skip-invalid the row's note says
 * why it was skipped, without the advice. */
START_TEST(test_invalid_runtime_fix) {
    const char *msg = "nan-runs.csv:5:39: column 'wall_time_s' (runtime): 'NaN' is not a positive number of seconds; "
                      "fix or remove the row, or skip such rows with skip_invalid (--skip-invalid of bellamy-train "
                      "pretrain, finetune, evaluate and inspect, and of bellamy-predict)\n";
    EXPECT(0, "cp user-runs.csv nan-runs.csv && printf 'r9003,2024-04-03,q3,m5.2xlarge,16,200,NaN\\n' >> nan-runs.csv");
    EXPECT_ERR(1, msg, "%s finetune --model user.h5 --data nan-runs.csv --out s.h5", g_train);
    EXPECT_ERR(1, msg, "%s evaluate --model user.h5 --data nan-runs.csv", g_train);
    EXPECT_ERR(1, msg, "%s inspect --data nan-runs.csv --schema user.schema", g_train);
    EXPECT_ERR(1, msg, "%s pretrain --data nan-runs.csv --schema user.schema --out p.h5 --trials 1 --epochs 1", g_train);
    EXPECT_ERR(1, msg, "%s --model user.h5 --history nan-runs.csv --scale-out 4..12", g_predict);
    EXPECT_ERR(1, msg, "%s --model user.h5 --context-from nan-runs.csv --scale-out 4..12", g_predict);
    EXPECT(0, "%s inspect --data nan-runs.csv --schema user.schema --skip-invalid", g_train);
    ck_assert_msg(strstr(g_err, "bellamy-train inspect: note: nan-runs.csv:5:39: column 'wall_time_s' (runtime): 'NaN' "
                                "is not a positive number of seconds; row skipped (--skip-invalid)\n") &&
                  !strstr(g_err, "fix or remove"), "%s", g_err);
    /* 0, a negative number and a blank runtime say the same */
    EXPECT(0, "head -n 4 user-runs.csv > zero-runs.csv && printf 'r9004,2024-04-04,q3,m5.2xlarge,16,200,0\\n' >> "
              "zero-runs.csv && sed 's/,0$/,-3.5/' zero-runs.csv > neg-runs.csv && sed 's/,0$/,/' zero-runs.csv > "
              "blank-runs.csv");
    EXPECT_ERR(1, "zero-runs.csv:5:39: column 'wall_time_s' (runtime): '0' is not a positive number of seconds; fix or "
               "remove the row, or skip such rows", "%s finetune --model user.h5 --data zero-runs.csv --out s.h5", g_train);
    EXPECT_ERR(1, "neg-runs.csv:5:39: column 'wall_time_s' (runtime): '-3.5' is not a positive number of seconds; fix "
               "or remove the row, or skip such rows", "%s finetune --model user.h5 --data neg-runs.csv --out s.h5", g_train);
    EXPECT_ERR(1, "blank-runs.csv:5:39: column 'wall_time_s' (runtime) is empty, not a positive number of seconds; fix "
               "or remove the row, or skip such rows with skip_invalid (--skip-invalid of bellamy-train pretrain, "
               "finetune, evaluate and inspect, and of bellamy-predict)", "%s --model user.h5 --history blank-runs.csv --scale-out 4..12", g_predict);
}
END_TEST

/* Issue 24 item 8: runs whose runtimes are in minutes or hours (runtime COLUMN min|h) read as the same
 * runs in seconds; an invalid one names the unit, and an unknown unit lists every accepted one. */
START_TEST(test_runtime_units_cli) {
    EXPECT(0, "printf 'run_id,date,query,node_flavor,executors,input_gb,wall_time_s\\n"
              "r1,2024-04-01,q3,m5.2xlarge,4,200,5400\\nr2,2024-04-01,q3,m5.2xlarge,8,200,2700\\n' > sec.csv && "
              "sed 's/wall_time_s$/wall_time_h/; s/,5400$/,1.5/; s/,2700$/,0.75/' sec.csv > h.csv && "
              "sed 's/wall_time_s$/wall_time_min/; s/,5400$/,90/; s/,2700$/,45/' sec.csv > min.csv && "
              "sed 's/^runtime wall_time_s s$/runtime wall_time_h h/' user.schema > h.schema && "
              "sed 's/^runtime wall_time_s s$/runtime wall_time_min min/' user.schema > min.schema && "
              "grep -q '^runtime wall_time_h h$' h.schema");
    EXPECT(0, "%s evaluate --model user.h5 --data sec.csv --json", g_train);
    char want[4096];
    const char *at = strstr(g_out, "\"runs\":");
    ck_assert_ptr_nonnull(at);
    snprintf(want, sizeof want, "%s", at);
    ck_assert_msg(strstr(want, "\"measured_mean_s\":5400,") && strstr(want, "\"measured_mean_s\":2700,"), "%s", want);
    EXPECT(0, "%s evaluate --model user.h5 --data h.csv --schema h.schema --json", g_train);
    ck_assert_msg(strstr(g_out, want), "hours: %s\nseconds: %s", g_out, want);
    EXPECT(0, "%s evaluate --model user.h5 --data min.csv --schema min.schema --json", g_train);
    ck_assert_msg(strstr(g_out, want), "minutes: %s\nseconds: %s", g_out, want);
    EXPECT(0, "%s inspect --data h.csv --schema h.schema", g_train);
    ck_assert_msg(strstr(g_out, "\nruntime (s): 2700 .. 5400 (from column 'wall_time_h' in h)\n"), "%s", g_out);
    EXPECT(0, "sed 's/,0.75$/,0/' h.csv > h0.csv && sed 's/^runtime wall_time_h h$/runtime wall_time_h hours/' h.schema "
              "> hours.schema");
    EXPECT_ERR(1, "h0.csv:3:35: column 'wall_time_h' (runtime): '0' is not a positive number of hours; fix or remove "
               "the row", "%s --model user.h5 --history h0.csv --schema h.schema --scale-out 4..12", g_predict);
    EXPECT_ERR(1, "hours.schema:4:21: runtime unit must be s, ms, min or h (seconds, milliseconds, minutes, hours), "
               "found 'hours'", "%s evaluate --model user.h5 --data h.csv --schema hours.schema", g_train);
    /* info says the unit of the data a model was trained on (its predictions are in seconds) */
    EXPECT(0, "%s pretrain --data h.csv --schema h.schema --out h.h5 --trials 1 --epochs 5 --grace 5 --members 1 "
              "--threads 1 --quiet --calibrate off && %s info --model h.h5", g_train, g_train);
    ck_assert_msg(strstr(g_out, ", runtimes 2700..5400 s (read from column 'wall_time_h' in h); "), "%s", g_out);
    EXPECT(0, "%s info --model h.h5 --json", g_train);
    ck_assert_msg(strstr(g_out, "\"runtime_column\":\"wall_time_h\",\"runtime_unit\":\"h\""), "%s", g_out);
}
END_TEST

/* Issue 24 item 7: quoted CSV fields, as pandas, spreadsheets and most exporters write them. A fully
 * quoted export reads as the same runs as the plain file (it failed with "did you mean '"executors"'"),
 * split copies a row whose quoted field spans lines whole, and a quote that never closes is named. */
START_TEST(test_quoted_csv) {
    EXPECT(0, "sed 's/[^,]*/\"&\"/g' user-runs.csv > quoted-runs.csv && head -n 1 quoted-runs.csv");
    ck_assert_str_eq(g_out, "\"run_id\",\"date\",\"query\",\"node_flavor\",\"executors\",\"input_gb\","
                            "\"wall_time_s\"\n");
    EXPECT(0, "%s evaluate --model user.h5 --data user-runs.csv --json", g_train);
    char want[4096];
    const char *at = strstr(g_out, "\"runs\":");
    ck_assert_ptr_nonnull(at);
    snprintf(want, sizeof want, "%s", at);
    EXPECT(0, "%s evaluate --model user.h5 --data quoted-runs.csv --json", g_train);
    ck_assert_msg(strstr(g_out, want), "quoted: %s\nplain: %s", g_out, want);
    EXPECT(0, "%s --model user.h5 --context-from quoted-runs.csv --scale-out 4..12 --json > q.json && "
              "%s --model user.h5 --context-from user-runs.csv --scale-out 4..12 --json > p.json && cmp q.json p.json",
           g_predict, g_predict);
    /* a value with the delimiter, a quote and a line break inside quotes: one context, its value intact */
    EXPECT(0, "sed 's/,m5.2xlarge,/,\"m5.2xlarge, \"\"big\"\"\\nnode\",/' user-all.csv > multi.csv && "
              "%s split --data multi.csv --schema user.schema --list", g_train);
    ck_assert_msg(strstr(g_out, "\tmachine_type=m5.2xlarge, \"big\"\nnode; job_args=q1; data_size_MB=50"), "%s", g_out);
    EXPECT(0, "%s split --data multi.csv --schema user.schema --list | grep -c 'machine_type=m5.2xlarge, \"big\"$'",
           g_train);
    ck_assert_str_eq(g_out, "6\n");
    /* split writes every line of a row that spans lines, and only those: both parts read back whole */
    EXPECT(0, "%s split --data multi.csv --schema user.schema --context 6 --held-out mh.csv --rest mr.csv", g_train);
    EXPECT(0, "%s inspect --data mh.csv --schema user.schema && %s inspect --data mr.csv --schema user.schema",
           g_train, g_train);
    ck_assert_msg(strstr(g_out, "rows: 8\ncontexts: 1\n") && strstr(g_out, "rows: 88\ncontexts: 11\n"), "%s", g_out);
    EXPECT(0, "grep -c '^node\",' mh.csv; grep -c '^node\",' mr.csv; true");
    ck_assert_str_eq(g_out, "8\n40\n");
    /* a quote that never closes: named where it opens, even with --skip-invalid */
    EXPECT(0, "head -n 3 user-runs.csv > open.csv && printf 'r9,2024-04-09,q3,\"m5.2xlarge,12,200,99\\n' >> open.csv "
              "&& tail -n 1 user-runs.csv >> open.csv");
    EXPECT_ERR(1, "open.csv:4:18: unclosed quote: the quoted field that starts here runs to the end of the file",
               "%s inspect --data open.csv --schema user.schema --skip-invalid", g_train);
}
END_TEST

/* The help text at any width: every option's help starts in one column, continuation lines are
 * indented to it, and no line is wider than the terminal unless a single word is. */
static void check_help_layout(int width) {
    const char *opt = strstr(g_out, "\noptions:\n");
    ck_assert_ptr_nonnull(opt);
    const char *help_line = strstr(opt, "\n  --help ");
    ck_assert_ptr_nonnull(help_line);
    const char *h = help_line + 3;
    while (*h != ' ') h++;
    while (*h == ' ') h++;
    const size_t col = (size_t)(h - (help_line + 1));
    char buf[65536];
    snprintf(buf, sizeof buf, "%s", opt + 10);
    for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
        size_t len = strlen(line), lead = strspn(line, " ");
        if (strncmp(line, "  --", 4) == 0) {
            char *gap = strstr(line + 2, "  ");
            if (gap) {
                size_t at = (size_t)(gap - line) + strspn(gap, " ");
                ck_assert_msg(at == col, "width %d: help at column %zu, not %zu: '%s'", width, at, col, line);
            }
        } else {
            ck_assert_msg(lead == col, "width %d: continuation indented %zu, not %zu: '%s'", width, lead, col, line);
        }
        ck_assert_msg(len <= (size_t)width || !strchr(line + lead, ' ') || col + 24 > (size_t)width,
                      "width %d: line of %zu: '%s'", width, len, line);
    }
}

START_TEST(test_help_aligned) {
    const int widths[] = { 60, 80, 100, 200 };
    for (size_t i = 0; i < 4; i++) {
        EXPECT(0, "COLUMNS=%d %s pretrain --help", widths[i], g_train);
        check_help_layout(widths[i]);
        EXPECT(0, "COLUMNS=%d %s --help", widths[i], g_predict);
        check_help_layout(widths[i]);
        EXPECT(0, "COLUMNS=%d %s finetune --help", widths[i], g_train);
        check_help_layout(widths[i]);
        EXPECT(0, "COLUMNS=%d %s --help", widths[i], g_train);
        for (char *l = strtok(g_out, "\n"); l; l = strtok(NULL, "\n"))
            ck_assert_msg(strlen(l) <= (size_t)widths[i] || strncmp(l, "usage", 5) == 0 || strncmp(l, "     ", 5) == 0,
                          "%s", l);
    }
}
END_TEST

/* Pre-training progress names the search and the trial; the summary has a line per member and one
 * for the ensemble; the grace period is printed only where it applies. */
START_TEST(test_pretrain_ensemble_report) {
    EXPECT(0, "%s pretrain --data rest.tsv --schema synth.schema --out e.h5 --trials 2 --epochs 30 --grace 10 "
              "--members 2 --threads 1", g_train);
    ck_assert_msg(strstr(g_err, "(grace 10)") && strstr(g_err, "search 1/2, trial ") && strstr(g_err, "search 2/2, trial "),
                  "%s", g_err);
    ck_assert_msg(strstr(g_out, "member 1/2 (search seed 1, numbers binary): best validation loss ") &&
                  strstr(g_out, "member 2/2 (search seed 1, numbers log): best validation loss ") &&
                  strstr(g_out, "pre-trained 'rest' on 126 rows (7 contexts) in ") &&
                  strstr(g_out, ": an ensemble of 2 members (the median of their predictions), validated on ") &&
                  strstr(g_out, "\nintervals: calibrated on ") && count(g_out, "\n") == 4, "%s", g_out);
    EXPECT(0, "%s pretrain --data rest.tsv --schema synth.schema --out e.h5 --trials 2 --epochs 10 --members 1 "
              "--threads 1 --calibrate off", g_train);
    ck_assert_msg(!strstr(g_err, "grace") && !strstr(g_err, "search 1/"), "%s", g_err); /* 10 epochs < the grace of 300 */
    EXPECT(0, "%s pretrain --data rest.tsv --schema synth.schema --out e.h5 --trials 1 --epochs 30 --grace 10 "
              "--members 1 --threads 1 --calibrate off", g_train);
    ck_assert_msg(!strstr(g_err, "grace"), "%s", g_err); /* one trial: nothing to halve */
}
END_TEST

START_TEST(test_predict_bad_input) {
    EXPECT_ERR(1, "unknown property 'colour'", "%s --model model.h5 %s --set colour=blue --scale-out 2..4", g_predict,
               g_sets);
    /* intervals and confident choices: bad values are usage errors naming the option and the fix */
    EXPECT_ERR(2, "--coverage 1.5: must lie strictly between 0 and 1", "%s --model model.h5 %s --scale-out 2..4 "
               "--coverage 1.5", g_predict, g_sets);
    EXPECT_ERR(2, "--coverage 0: must lie strictly between 0 and 1", "%s --model model.h5 %s --scale-out 2..4 "
               "--coverage 0", g_predict, g_sets);
    EXPECT_ERR(2, "--confidence needs --target-runtime", "%s --model model.h5 %s --scale-out 2..4 --confidence 0.9",
               g_predict, g_sets);
    EXPECT_ERR(2, "--confidence 1: must lie strictly between 0 and 1", "%s --model model.h5 %s --scale-out 2..4 "
               "--confidence 1 --target-runtime 100", g_predict, g_sets);
    EXPECT_ERR(2, "--max-width -1", "%s --model model.h5 %s --scale-out 2..4 --max-width -1", g_predict, g_sets);
    /* a model without calibration (as an older file): predictions as before, no interval columns, a note;
     * intervals asked for are an error naming the fix, never made up */
    EXPECT(0, "%s pretrain --data rest.tsv --schema synth.schema --out nocal.h5 --trials 1 --epochs 30 --grace 30 "
              "--members 2 --threads 1 --quiet --calibrate off", g_train);
    ck_assert_msg(strstr(g_out, "intervals: none (--calibrate off)"), "%s", g_out);
    EXPECT(0, "%s --model nocal.h5 %s --scale-out 2..4", g_predict, g_sets);
    ck_assert_msg(strncmp(g_out, "scale_out\tpredicted_runtime_s\n", 30) == 0, "%s", g_out);
    ck_assert_msg(strstr(g_err, "carries no calibration") && strstr(g_err, "pre-train it again"), "%s", g_err);
    EXPECT_ERR(1, "carries no calibration", "%s --model nocal.h5 %s --scale-out 2..4 --coverage 0.8", g_predict, g_sets);
    ck_assert_ptr_nonnull(strstr(g_err, "pre-train it again"));
    EXPECT_ERR(1, "confident choices (--confidence) are unavailable", "%s --model nocal.h5 %s --scale-out 2..4 "
               "--target-runtime 1000 --confidence 0.9", g_predict, g_sets);
    EXPECT(0, "%s info --model nocal.h5", g_train);
    ck_assert_ptr_nonnull(strstr(g_out, "\nintervals: none (no calibration"));
    EXPECT_ERR(2, "--calibrate", "%s pretrain --data rest.tsv --schema synth.schema --out x.h5 --calibrate maybe", g_train);
    /* a calibrated model: the interval columns, --coverage in the JSON, hi null where unbounded */
    EXPECT(0, "%s --model model.h5 %s --scale-out 2,8,1000 --coverage 0.5 --json", g_predict, g_sets);
    ck_assert_msg(strstr(g_out, "\"interval\":{\"coverage\":0.5,") && strstr(g_out, "\"lo_runtime_s\":") &&
                  strstr(g_out, "\"hi_runtime_s\":null"), "%s", g_out); /* 1000 machines: beyond 4 × 12 */
    ck_assert_msg(strstr(g_err, "note: 1 scale-out lies beyond 4 times the scale-outs the model and its runs know"),
                  "%s", g_err);
    /* every missing property in one message, with values it saw; the schema's constants are filled */
    EXPECT_ERR(1, "2 essential properties are missing: 'machine_type' (seen in training: ",
               "%s --model model.h5 --set data_size_MB=1000 --scale-out 2..4", g_predict);
    ck_assert_msg(strstr(g_err, "'job_args' (seen in training: ") && !strstr(g_err, "environment"), "%s", g_err);
    EXPECT_ERR(1, "essential property 'machine_type' is missing (seen in training: ",
               "%s --model model.h5 --set data_size_MB=1000 --set job_args=3 --scale-out 2..4", g_predict);
    EXPECT_ERR(1, "data_size_MB", "%s --model model.h5 %s --set data_size_MB=huge --scale-out 2..4", g_predict,
               "--set machine_type=m1 --set job_args=3 --set data_characteristics= --set 'environment=synthetic corpus'");
    EXPECT_ERR(1, "twice", "%s --model model.h5 %s --set machine_type=x --scale-out 2..4", g_predict, g_sets);
    EXPECT_ERR(2, "the range runs down (12 > 2): write 2..12", "%s --model model.h5 %s --scale-out 12..2", g_predict, g_sets);
    EXPECT_ERR(2, ">= 1", "%s --model model.h5 %s --scale-out 0..4", g_predict, g_sets);
    EXPECT_ERR(2, ">= 1", "%s --model model.h5 %s --scale-out 2,-4", g_predict, g_sets);
    EXPECT_ERR(2, "not a number", "%s --model model.h5 %s --scale-out 2,x", g_predict, g_sets);
    EXPECT_ERR(2, "--scale-out is required", "%s --model model.h5 %s", g_predict, g_sets);
    EXPECT_ERR(2, "--price -1", "%s --model model.h5 %s --scale-out 2..4 --price -1", g_predict, g_sets);
    EXPECT_ERR(2, "--target-runtime -5", "%s --model model.h5 %s --scale-out 2..4 --target-runtime -5", g_predict,
               g_sets);
    EXPECT_ERR(2, "--goal smallest needs --target-runtime", "%s --model model.h5 %s --scale-out 2..4 --goal smallest",
               g_predict, g_sets);
    EXPECT_ERR(2, "PROP=VALUE", "%s --model model.h5 --set machine_type --scale-out 2..4", g_predict);
    EXPECT_ERR(1, "not-there", "%s --model model.h5 --name not-there %s --scale-out 2..4", g_predict, g_sets);
    EXPECT_ERR(1, "absent.h5", "%s --model absent.h5 %s --scale-out 2..4", g_predict, g_sets);
    EXPECT_ERR(1, "synth.tsv", "%s --model synth.tsv %s --scale-out 2..4", g_predict, g_sets);
    EXPECT_ERR(2, "unknown option", "%s --model model.h5 --frob", g_predict);
}
END_TEST

START_TEST(test_split) {
    EXPECT(0, "%s split --data synth.tsv --schema synth.schema --list", g_train);
    ck_assert_uint_eq(count(g_out, "\n"), 8);
    EXPECT(0, "wc -l < held.tsv; wc -l < rest.tsv; wc -l < runs.tsv");
    ck_assert_str_eq(g_out, "19\n127\n4\n"); /* header + 18 rows; header + 7 × 18; header + 3 */
    EXPECT_ERR(1, "--context 99", "%s split --data synth.tsv --schema synth.schema --context 99 --held-out a.tsv", g_train);
    EXPECT_ERR(1, "distinct scale-outs",
               "%s split --data synth.tsv --schema synth.schema --sample 7 --sample-out a.tsv", g_train);
    EXPECT_ERR(2, "go together", "%s split --data synth.tsv --schema synth.schema --sample 2", g_train);
}
END_TEST

/* ---- adversarial input: every user-facing value gets a clear, early error --------------------- */

/* Option values: empty strings, blanks, hexadecimal, out-of-range and absurd numbers are usage
 * errors naming the flag (before: accepted, or a late message naming an internal function). */
START_TEST(test_strict_option_values) {
    EXPECT_ERR(2, "--out: empty value", "%s pretrain --data rest.tsv --schema synth.schema --out '' --quiet", g_train);
    EXPECT_ERR(2, "--data: empty value", "%s pretrain --data '' --schema synth.schema --out x.h5", g_train);
    EXPECT_ERR(2, "--model: empty value", "%s --model '' %s --scale-out 2", g_predict, g_sets);
    EXPECT_ERR(2, "--model: empty value", "%s evaluate --model '' --data held.tsv", g_train);
    EXPECT_ERR(2, "--out: empty value", "%s finetune --model model.h5 --data runs.tsv --out ''", g_train);
    EXPECT_ERR(2, "--trials", "%s pretrain --data rest.tsv --schema synth.schema --out x.h5 --trials ' 3'", g_train);
    EXPECT_ERR(2, "out of range", "%s pretrain --data rest.tsv --schema synth.schema --out x.h5 --val-fraction 1e-400",
               g_train);
    EXPECT_ERR(2, "--price", "%s --model model.h5 %s --scale-out 2 --price 0x10", g_predict, g_sets);
    EXPECT_ERR(2, "--price", "%s --model model.h5 %s --scale-out 2,1000 --price 1e308 --json", g_predict, g_sets);
    /* a stray digit must not mean a run that never ends */
    EXPECT_ERR(2, "--epochs 99999999999999", "%s pretrain --data rest.tsv --schema synth.schema --out x.h5 --epochs "
               "99999999999999", g_train);
    EXPECT_ERR(2, "--max-epochs", "%s finetune --model model.h5 --data runs.tsv --out x.h5 --max-epochs 99999999999",
               g_train);
    EXPECT_ERR(2, "--noise 5", "%s synth --out-dir . --stem s2 --noise 5", g_train);
    EXPECT_ERR(2, "--reps 1001", "%s synth --out-dir . --stem s2 --reps 1001", g_train);
    EXPECT_ERR(2, "--stem", "%s synth --out-dir . --stem ''", g_train);
    EXPECT_ERR(2, "--stem", "%s synth --out-dir . --stem ../s2", g_train);
    /* shifted environments' options: usage errors (exit 2), one line, the value shown only when printable */
    EXPECT_ERR(2, "--scale-outs '5..2': the range runs down (5 > 2): write 2..5",
               "%s synth --out-dir . --stem s2 --scale-outs 5..2", g_train);
    EXPECT_ERR(2, "scale-out 2 is given twice", "%s synth --out-dir . --stem s2 --scale-outs 2,2,4", g_train);
    EXPECT_ERR(2, "--scale-outs '+2,4': '+2' is not a whole number written in digits",
               "%s synth --out-dir . --stem s2 --scale-outs '+2,4'", g_train);
    /* one scale-out list syntax everywhere (issue 24): ranges with a step, lists of them, blanks around items */
    EXPECT(0, "%s synth --out-dir . --stem s3 --contexts 1 --reps 1 --scale-outs ' 2, 4..8:2' && cut -f1 s3.tsv | "
              "sort -un | tr '\\n' ' '", g_train);
    ck_assert_msg(strstr(g_out, "2 4 6 8 "), "%s", g_out);
    EXPECT(0, "%s --model model.h5 %s --scale-out 20..40:10", g_predict, g_sets);
    ck_assert_msg(strstr(g_out, "\n20\t") && strstr(g_out, "\n30\t") && strstr(g_out, "\n40\t") &&
                  !strstr(g_out, "\n21\t"), "%s", g_out);
    EXPECT(0, "%s --model model.h5 %s --scale-out 2,4..8:2,16", g_predict, g_sets);
    ck_assert_msg(strstr(g_out, "\n2\t") && strstr(g_out, "\n6\t") && strstr(g_out, "\n16\t") &&
                  strstr(g_out, "of 5 candidates"), "%s", g_out);
    EXPECT_ERR(2, "--scale-out '2,2,3': scale-out 2 is given twice: give each once",
               "%s --model model.h5 %s --scale-out 2,2,3", g_predict, g_sets);
    EXPECT_ERR(2, "scale-out 4 is given twice", "%s --model model.h5 %s --scale-out 2..6,4", g_predict, g_sets);
    EXPECT_ERR(2, "the step '0' is not a whole number >= 1", "%s --model model.h5 %s --scale-out 2..8:0", g_predict, g_sets);
    EXPECT_ERR(2, "a step belongs to a range", "%s --model model.h5 %s --scale-out 4:2", g_predict, g_sets);
    EXPECT_ERR(2, "the range runs down (8 > 2): write 2..8", "%s --model model.h5 %s --scale-out 8..2", g_predict, g_sets);
    EXPECT_ERR(2, "an empty item", "%s --model model.h5 %s --scale-out 2,,4", g_predict, g_sets);
    EXPECT_ERR(2, "a value with control or non-ASCII bytes", "%s synth --out-dir . --stem s2 --environment \"$(printf "
               "'a\\tb')\"", g_train);
    EXPECT_ERR(2, "'a\"b' is not", "%s synth --out-dir . --stem s2 --environment 'a\"b'", g_train);
    EXPECT_ERR(2, "--environment", "%s synth --out-dir . --stem s2 --environment \"$(printf '%%0200d' 0)\"", g_train);
    ck_assert_msg(strlen(g_err) < 400, "the message echoes a long value whole: %zu bytes", strlen(g_err));
    EXPECT_ERR(2, "--time-scale", "%s synth --out-dir . --stem s2 --time-scale 0", g_train);
    EXPECT_ERR(2, "--version", "%s --version extra", g_train);
}
END_TEST

/* --scale-out: numbers of machines, 1..1e6; no hexadecimal; blanks around items are fine. JSON
 * never holds inf or nan. */
START_TEST(test_predict_scale_out_bounds) {
    EXPECT_ERR(2, ">= 1", "%s --model model.h5 %s --scale-out 1e300", g_predict, g_sets);
    EXPECT_ERR(2, ">= 1", "%s --model model.h5 %s --scale-out 1e-300", g_predict, g_sets);
    EXPECT_ERR(2, ">= 1", "%s --model model.h5 %s --scale-out 0.5", g_predict, g_sets);
    EXPECT_ERR(2, ">= 1", "%s --model model.h5 %s --scale-out 1..1000001", g_predict, g_sets);
    EXPECT_ERR(2, "not a number", "%s --model model.h5 %s --scale-out 0x10", g_predict, g_sets);
    EXPECT_ERR(2, "whole number", "%s --model model.h5 %s --scale-out 2.5..5", g_predict, g_sets);
    EXPECT_ERR(2, "whole number", "%s --model model.h5 %s --scale-out 2,2.5,4", g_predict, g_sets); /* machines */
    EXPECT_ERR(2, ">= 1", "%s --model model.h5 %s --scale-out 0.5", g_predict, g_sets);
    EXPECT(0, "%s --model model.h5 %s --scale-out '2 , 4'", g_predict, g_sets);
    ck_assert_uint_eq(count(g_out, "\n"), 5);
    /* far outside the tiny model's training the runtime is unknown, or implausible: printed all the same,
     * never chosen (exit 3), and no inf or nan is printed */
    int rc = run("%s --model model.h5 %s --scale-out 1000000 --price 1000000000 --json", g_predict, g_sets);
    ck_assert_msg(rc == 0 || rc == 3, "exit %d: %s", rc, g_err);
    ck_assert_ptr_null(strstr(g_out, "inf"));
    ck_assert_ptr_null(strstr(g_out, "nan"));
    rc = run("%s --model model.h5 %s --scale-out 1000000", g_predict, g_sets);
    ck_assert_msg(rc == 0 || rc == 3, "exit %d: %s", rc, g_err);
    ck_assert_ptr_nonnull(strstr(g_out, "\n1000000\t")); /* not 1e+06 */
    EXPECT_ERR(2, "--version", "%s --version extra", g_predict);
}
END_TEST

/* The data lines of a bellamy-predict table (the header and "# ..." lines left out), each checked:
 * every runtime and cost field a positive number, never shown as 0 ("0.00") nor as inf; returns how
 * many. An empty field (an unbounded interval's end) is allowed where empty_ok. */
static size_t check_table_numbers(const char *out, int empty_ok) {
    char buf[65536];
    snprintf(buf, sizeof buf, "%s", out);
    size_t rows = 0, cols = 0;
    int why_col = 0; /* the last column is unbounded_why: words, or empty */
    char *save = NULL;
    for (char *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (line[0] == '#') continue;
        if (strncmp(line, "scale_out\t", 10) == 0) {
            cols = count(line, "\t") + 1;
            why_col = strlen(line) >= 13 && strcmp(line + strlen(line) - 13, "unbounded_why") == 0;
            continue;
        }
        ck_assert_msg(count(line, "\t") + 1 == cols, "%zu fields, not %zu: '%s'", count(line, "\t") + 1, cols, line);
        rows++;
        char *f = line, *tab;
        for (size_t c = 0; c < cols; c++, f = tab + 1) {
            tab = strchr(f, '\t');
            if (tab) *tab = '\0';
            if (c == 0 || (c == cols - 1 && why_col)) { /* the scale-out; unbounded_why */
                if (!tab) break;
                continue;
            }
            if (*f || !empty_ok) {
                char *end;
                const double v = strtod(f, &end);
                ck_assert_msg(*f && *end == '\0' && v > 0 && v < 1e300, "field %zu '%s' is no positive number", c + 1, f);
            }
            if (!tab) break;
        }
    }
    return rows;
}

/* No scale-out can be chosen (beyond what the model knows, intervals wider than --max-width, a
 * --confidence no calibration vouches for): the predictions are printed all the same, each row with its
 * interval or why it has none, then "# chosen: none" with only the reasons that apply, in words; exit 3,
 * which the man page and --help name (before: exit 1, nothing printed, "0 one wider than allowed"). */
START_TEST(test_predict_no_choice_keeps_table) {
    EXPECT(3, "%s --model model.h5 %s --scale-out 1000000", g_predict, g_sets);
    ck_assert_msg(strncmp(g_out, "scale_out\t", 10) == 0 && strstr(g_out, "\n1000000\t") &&
                  strstr(g_out, "\n# chosen: none (no scale-out can be chosen): 1 lies beyond 4 times the scale-outs "
                                "the model and its runs know (2..12), where the runtime is unknown: ask for scale-outs "
                                "in 1..48"), "%s", g_out);
    ck_assert_msg(!strstr(g_out, ": 0 ") && !strstr(g_out, "; 0 ") && !strstr(g_out, "wider than allowed"), "%s", g_out);
    ck_assert_uint_eq(check_table_numbers(g_out, 1), 1);
    ck_assert_msg(strstr(g_err, "bellamy-predict: no scale-out could be chosen (the predictions are printed; exit 3): 1 "
                                "lies beyond 4 times"), "%s", g_err);
    /* the same in JSON: the prediction, and a choice of none that says why */
    EXPECT(3, "%s --model model.h5 %s --scale-out 1000000 --json > nc.json; rc=$?; cat nc.json; exit $rc", g_predict,
           g_sets);
    ck_assert_msg(strstr(g_out, "\"predictions\":[{\"scale_out\":1000000,\"predicted_runtime_s\":") &&
                  strstr(g_out, "\"choice\":{\"goal\":\"fastest\",\"scale_out\":null,\"predicted_runtime_s\":null,"
                                "\"left_out\":1,\"reason\":\"no candidate can be chosen: 1 lies beyond 4 times"), "%s",
                  g_out);
    EXPECT_JSON("nc.json");
    /* a width limit no interval meets: every row printed, the reason with the narrowest width */
    EXPECT(3, "%s --model model.h5 %s --scale-out 2..12 --target-runtime 1000 --confidence 0.5 --max-width 0.001",
           g_predict, g_sets);
    ck_assert_uint_eq(check_table_numbers(g_out, 1), 11);
    ck_assert_msg(strstr(g_out, "\n# chosen: none (no scale-out can be chosen): 11 have an interval wider than the width "
                                "limit (0.001 of the prediction; the narrowest spans ") && !strstr(g_out, "; 0 "), "%s",
                  g_out);
    /* a confidence the held-out contexts cannot vouch for: said, with the coverage they do vouch for */
    EXPECT(3, "%s --model model.h5 %s --scale-out 2..12 --target-runtime 100 --confidence 0.999999", g_predict, g_sets);
    ck_assert_uint_eq(check_table_numbers(g_out, 1), 11);
    ck_assert_msg(strstr(g_out, "\n# chosen: none (no scale-out can be chosen): 11 have no 0.999999 interval: too few "
                                "held-out contexts vouch for that coverage (the ") &&
                  strstr(g_out, " held out vouch for coverages up to 0."), "%s", g_out);
    EXPECT(3, "%s --model model.h5 %s --scale-out 2..12 --max-width 0.001 --json", g_predict, g_sets);
    ck_assert_uint_eq(count(g_out, "\"scale_out\":"), 11 + 1);
    ck_assert_ptr_nonnull(strstr(g_out, "\"scale_out\":null"));
    /* exit 3 is documented where a user looks */
    EXPECT(0, "%s --help", g_predict);
    ck_assert_msg(strstr(g_out, "exit status: 0 ") && strstr(g_out, "; 3 the predictions printed, but no"), "%s", g_out);
    EXPECT(0, "grep -c 'no scale-out could be chosen' '%s/man/bellamy-predict.1'", getenv("BELLAMY_SOURCE_ROOT"));
}
END_TEST

/* A positive runtime never prints as 0: a model fine-tuned on runs of 1e-300 s predicts some 2e-99 s,
 * shown with significant digits in the table, the choice line and the cost (before: "0.00" and
 * "0.0000"); JSON numbers stay the shortest that read back the same. Normal runtimes keep 2 decimals. */
START_TEST(test_predict_tiny_runtimes) {
    /* a runtime below a millisecond is a unit mistake the reader names (the file, line and column) */
    EXPECT(0, "awk -F'\\t' 'BEGIN { OFS = \"\\t\" } NR == 4 { $7 = \"1e-300\" } { print }' runs.tsv > tinyrt.tsv && "
              "tail -n 1 tinyrt.tsv | cut -f 7");
    EXPECT_ERR(1, "'1e-300' is 1e-300 s, less than a millisecond",
               "%s --model model.h5 %s --scale-out 2..4 --history tinyrt.tsv --price 0.4", g_predict, g_sets);
    /* runs of some 10 ms each (a model told so): small positive runtimes never print as 0.00 */
    EXPECT(0, "awk -F'\\t' 'BEGIN { OFS = \"\\t\" } NR > 1 { $7 = $7 * 1e-4 } { print }' runs.tsv > tinyrt.tsv");
    EXPECT(0, "%s --model model.h5 %s --scale-out 2..4 --history tinyrt.tsv --price 0.4", g_predict, g_sets);
    ck_assert_uint_eq(check_table_numbers(g_out, 1), 3);
    ck_assert_msg(!strstr(g_out, "\t0.00\t") && !strstr(g_out, "predicted 0.00 s") && !strstr(g_out, "\t0.0000") &&
                  !strstr(g_out, "cost 0.0000"), "%s", g_out);
    const char *chosen = strstr(g_out, "# chosen: scale-out ");
    const char *pred = chosen ? strstr(chosen, ", predicted ") : NULL;
    ck_assert_msg(pred && strtod(pred + strlen(", predicted "), NULL) > 0, "%s", g_out);
    EXPECT(0, "%s --model model.h5 %s --scale-out 2..4 --history tinyrt.tsv --price 0.4 --json", g_predict, g_sets);
    assert_shortest_numbers(g_out);
    ck_assert_msg(!strstr(g_out, "\"predicted_runtime_s\":0,") && !strstr(g_out, "\"cost\":0,") &&
                  !strstr(g_out, "\"cost\":0}"), "%s", g_out);
    /* runtimes of a normal size as before: 2 decimals */
    EXPECT(0, "%s --model model.h5 %s --scale-out 2 --coverage 0.5", g_predict, g_sets);
    const char *row = strstr(g_out, "\n2\t");
    ck_assert_msg(row && strchr(row + 3, '.') && strchr(row + 3, '.')[3] == '\t', "%s", g_out);
}
END_TEST

/* An unbounded interval has no ends that are runtimes: empty fields in the TSV and null in the JSON (before:
 * "0" and "inf", lo 0), and the unbounded_why column (the JSON's "unbounded_why") says why; the columns
 * before it keep their places. */
START_TEST(test_predict_unbounded_fields) {
    EXPECT(0, "%s --model model.h5 %s --scale-out 2,8,1000 --coverage 0.5", g_predict, g_sets);
    const char *head = "scale_out\tpredicted_runtime_s\tlo_runtime_s\thi_runtime_s\tunbounded_why\n2\t";
    ck_assert_msg(strncmp(g_out, head, strlen(head)) == 0, "%s", g_out);
    ck_assert_uint_eq(check_table_numbers(g_out, 1), 3);
    const char *far = strstr(g_out, "\n1000\t");
    ck_assert_msg(far && strncmp(strchr(far + 6, '\t'), "\t\t\tbeyond_support\n", 18) == 0, "%s", g_out);
    ck_assert_msg(!strstr(g_out, "inf") && !strstr(g_out, "\t0\t"), "%s", g_out);
    const char *near = strstr(g_out, "\n8\t"), *end = near ? strchr(near + 1, '\n') : NULL;
    ck_assert_msg(end && end[-1] == '\t', "%s", g_out); /* bounded: its unbounded_why is empty */
    /* with a cost: it stays where it was, unbounded_why after it */
    EXPECT(0, "%s --model model.h5 %s --scale-out 2,1000 --price 0.4", g_predict, g_sets);
    ck_assert_msg(strstr(g_out, "scale_out\tpredicted_runtime_s\tlo_runtime_s\thi_runtime_s\tcost\tunbounded_why\n") &&
                  strstr(g_out, "\ttoo_few_contexts\n") && strstr(g_out, "\tbeyond_support\n") && !strstr(g_out, "inf"),
                  "%s", g_out);
    ck_assert_uint_eq(check_table_numbers(g_out, 1), 2);
    EXPECT(0, "%s --model model.h5 %s --scale-out 2,8,1000 --coverage 0.5 --json", g_predict, g_sets);
    ck_assert_msg(strstr(g_out, "{\"scale_out\":1000,\"predicted_runtime_s\":") &&
                  strstr(g_out, ",\"lo_runtime_s\":null,\"hi_runtime_s\":null,\"unbounded_why\":\"beyond_support\"}") &&
                  !strstr(g_out, "\"lo_runtime_s\":0,") && count(g_out, "\"unbounded_why\"") == 1, "%s", g_out);
}
END_TEST

/* --scale-out takes a whole number in any decimal form a data file's scale-out column does (2.0, 2e1)
 * and refuses a fraction naming the whole numbers near it; more than 100000 scale-outs name the step
 * that thins the range enough (before: 2.0 refused; "more than 100000 scale-outs" alone). */
START_TEST(test_predict_scale_out_forms) {
    EXPECT(0, "%s --model model.h5 %s --scale-out 2,4..8:2,20", g_predict, g_sets);
    char want[65536];
    snprintf(want, sizeof want, "%s", g_out);
    EXPECT(0, "%s --model model.h5 %s --scale-out '2.0,4.0..8e0:2.0,2e1'", g_predict, g_sets);
    ck_assert_str_eq(g_out, want);
    EXPECT_ERR(2, "--scale-out '2.5': '2.5' is not a whole number of machines (a scale-out counts machines): write 2 or 3",
               "%s --model model.h5 %s --scale-out 2.5", g_predict, g_sets);
    EXPECT_ERR(2, "the step '2.5' is not a whole number >= 1", "%s --model model.h5 %s --scale-out 2..8:2.5", g_predict,
               g_sets);
    EXPECT_ERR(2, "--scale-out '1..1000000': more than 100000 scale-outs (1..1000000 holds 1000000): thin the range with "
                  "a step, e.g. 1..1000000:10 (a scale-out every 10 machines)",
               "%s --model model.h5 %s --scale-out 1..1000000", g_predict, g_sets);
    EXPECT_ERR(2, "(1..1000000 holds 1000000, and 1 comes before it): thin the range with a step, e.g. 1..1000000:11",
               "%s --model model.h5 %s --scale-out 3,1..1000000", g_predict, g_sets);
    /* the step it names fits */
    EXPECT(0, "%s synth --out-dir . --stem sf --contexts 1 --reps 1 --scale-outs '2.0,3e0' && cut -f1 sf.tsv | sort -un | "
              "tr '\\n' ' '", g_train);
    ck_assert_msg(strstr(g_out, "2 3 "), "%s", g_out);
}
END_TEST

/* Input files are checked before any work: a folder, a missing file and an unreadable one are
 * named with their flag. */
START_TEST(test_input_files_checked) {
    EXPECT(0, "mkdir -p adir");
    EXPECT_ERR(1, "--model adir: is a folder", "%s --model adir %s --scale-out 2", g_predict, g_sets);
    EXPECT_ERR(1, "--schema adir: is a folder", "%s inspect --data rest.tsv --schema adir", g_train);
    EXPECT_ERR(1, "--schema adir: is a folder", "%s pretrain --data rest.tsv --schema adir --out x.h5", g_train);
    EXPECT_ERR(1, "--history adir: is a folder", "%s --model model.h5 %s --scale-out 2 --history adir", g_predict, g_sets);
    EXPECT_ERR(1, "--data nothere.tsv: cannot open", "%s evaluate --model model.h5 --data nothere.tsv", g_train);
    /* an unreadable file (as root too, without the capabilities that bypass permissions) */
    if (!bl_test_obey_permissions()) BL_TEST_SKIP("running as root, and file permissions cannot be made to apply");
    EXPECT(0, "cp model.h5 unreadable.h5 && chmod 000 unreadable.h5");
    EXPECT_ERR(1, "Permission denied", "%s --model unreadable.h5 %s --scale-out 2", g_predict, g_sets);
}
END_TEST

/* pretrain and finetune check what they will write before training: a non-model --out, a file of a
 * newer format, a missing folder or an invalid model name fail at once, with no training (no
 * progress line) and the existing file untouched. */
START_TEST(test_train_output_checked_first) {
    const char *pre = "pretrain --data rest.tsv --schema synth.schema --trials 1 --epochs 5 --grace 5 --members 1 --threads 1";
    EXPECT(0, "cp rest.tsv victim.tsv");
    EXPECT_ERR(1, "refusing to overwrite", "%s %s --out victim.tsv", g_train, pre);
    EXPECT(0, "cmp rest.tsv victim.tsv");
    /* a folder whose permissions would let a file in but whose file system makes none (as root, /proc and
     * /sys): refused before any training, as the save's own temporary file cannot be made (issue 24) */
    const char *nowhere[] = { "/proc/x.h5", "/sys/x.h5" };
    for (size_t i = 0; i < 2; i++) {
        if (access(nowhere[i] + 0, F_OK) == 0) continue; /* never over a file that is there */
        char want[64]; /* the check before training names the flag; a failed save after it does not */
        snprintf(want, sizeof want, "--out %s: cannot create a temporary file", nowhere[i]);
        EXPECT_ERR(1, want, "%s %s --out %s", g_train, pre, nowhere[i]);
        EXPECT_ERR(1, want, "%s finetune --model model.h5 --data runs.tsv --out %s", g_train, nowhere[i]);
    }
    /* --numbers log: trained, stored (a format 2.2 file), and predicted from; an unknown encoding is a usage error */
    EXPECT(0, "%s pretrain --data rest.tsv --schema synth.schema --trials 1 --epochs 5 --grace 5 --members 1 "
              "--threads 1 --quiet --numbers log --out log-numbers.h5 --calibrate off", g_train);
    EXPECT(0, "h5dump -a /format_version log-numbers.h5 | grep -c '\"2.2\"'");
    EXPECT(0, "h5dump -a /models/rest/encoder/numbers log-numbers.h5 | grep -c '\"log\"'");
    EXPECT(0, "%s --model log-numbers.h5 %s --scale-out 2..12", g_predict, g_sets);
    ck_assert_uint_eq(count(g_out, "\n"), 1 + 11 + 1); /* no calibration: no interval line */
    /* --numbers range: the bounds are in the file, fine-tuning and predicting read them */
    EXPECT(0, "%s pretrain --data rest.tsv --schema synth.schema --trials 1 --epochs 5 --grace 5 --members 1 "
              "--threads 1 --quiet --numbers range --out range-numbers.h5 --calibrate off", g_train);
    EXPECT(0, "h5dump -a /format_version range-numbers.h5 | grep -c '\"2.2\"'");
    EXPECT(0, "h5dump -a /models/rest/encoder/numbers range-numbers.h5 | grep -c '\"range\"'");
    EXPECT(0, "h5dump -a /models/rest/encoder/number_lo range-numbers.h5 | grep -c DATASPACE");
    EXPECT(0, "%s finetune --model range-numbers.h5 --data runs.tsv --out range-ft.h5",
           g_train);
    EXPECT(0, "%s --model range-ft.h5 %s --scale-out 2..12", g_predict, g_sets);
    ck_assert_uint_eq(count(g_out, "\n"), 1 + 11 + 1);
    /* the defaults: six members reading numbers in both encodings; one network reads bits */
    EXPECT(0, "%s pretrain --data rest.tsv --schema synth.schema --trials 1 --epochs 3 --grace 3 --threads 1 --quiet "
              "--out default.h5 --calibrate off", g_train);
    EXPECT(0, "h5dump -a /models/rest/encoder/numbers default.h5 | grep -c '\"both\"'");
    EXPECT(0, "h5dump -a /models/rest/members/count default.h5 | grep -c '(0): 6'");
    EXPECT(0, "h5dump -a /models/rest/encoder/numbers log-numbers.h5 | grep -c '\"log\"'");
    EXPECT(0, "%s pretrain --data rest.tsv --schema synth.schema --trials 1 --epochs 3 --grace 3 --threads 1 --quiet "
              "--members 1 --out one.h5 --calibrate off", g_train);
    EXPECT(0, "h5dump -a /models/rest/encoder/numbers one.h5 | grep -c '\"binary\"'");
    /* --numbers both: two members, bits and log magnitude, fine-tuned and predicted from */
    EXPECT(0, "%s pretrain --data rest.tsv --schema synth.schema --trials 1 --epochs 5 --grace 5 --members 2 "
              "--threads 1 --quiet --numbers both --out both-numbers.h5", g_train);
    EXPECT(0, "h5dump -a /models/rest/encoder/numbers both-numbers.h5 | grep -c '\"both\"'");
    EXPECT(0, "h5dump -a /format_version both-numbers.h5 | grep -c '\"2.2\"'");
    EXPECT_ERR(2, "--members 2 or more", "%s pretrain --data rest.tsv --schema synth.schema --members 1 --numbers both "
                                         "--out x.h5", g_train);
    EXPECT(0, "h5dump -a /models/rest/members/count both-numbers.h5 | grep -c '(0): 2'");
    EXPECT(0, "%s finetune --model both-numbers.h5 --data runs.tsv --out both-ft.h5", g_train);
    EXPECT(0, "%s --model both-ft.h5 %s --scale-out 2..12", g_predict, g_sets);
    ck_assert_uint_eq(count(g_out, "\n"), 1 + 11 + 2);
    EXPECT_ERR(2, "--numbers", "%s pretrain --data rest.tsv --schema synth.schema --numbers octal --out x.h5", g_train);
    /* one context and whole contexts held out: no validation rows, and the summary says so */
    EXPECT(0, "%s pretrain --data runs.tsv --schema synth.schema --trials 1 --epochs 5 --grace 5 --members 1 "
              "--threads 1 --quiet --out one-context.h5 --calibrate off", g_train);
    ck_assert_msg(strstr(g_out, "no validation rows (one context") && !strstr(g_out, "best validation loss"), "%s", g_out);
    EXPECT(0, "%s pretrain --data rest.tsv --schema synth.schema --trials 1 --epochs 5 --grace 5 --members 1 "
              "--threads 1 --quiet --out more-contexts.h5 --calibrate off", g_train);
    ck_assert_msg(strstr(g_out, "best validation loss") && strstr(g_out, " rows after "), "%s", g_out);
    EXPECT_ERR(1, "--out nodir/x.h5", "%s %s --out nodir/x.h5", g_train, pre);
    EXPECT_ERR(2, "not a valid model name", "%s %s --out x.h5 --name a/b", g_train, pre);
    EXPECT_ERR(2, "not valid UTF-8", "%s %s --out x.h5 --name \"$(printf 'gr\\377p')\"", g_train, pre);
    /* a file-size limit: an ordinary write error, reported, the temporary removed (SIGXFSZ killed it) */
    EXPECT_ERR(1, "File too large", "ulimit -f 20; %s %s --quiet --out fsize.h5", g_train, pre);
    EXPECT(0, "test ! -e fsize.h5 && ! ls -a | grep -q 'fsize.h5.tmp'");
    EXPECT(0, "cp rest.tsv ..tsv");
    EXPECT_ERR(2, "give --name", "%s pretrain --data ..tsv --schema synth.schema --trials 1 --epochs 5 --grace 5 "
               "--members 1 --threads 1 --out x.h5", g_train);
    /* a file written by a newer major version: refused before training, left as it was */
    bl_error err;
    char path[4200];
    EXPECT(0, "cp model.h5 newer.h5 && cp model.h5 newer-orig.h5");
    snprintf(path, sizeof path, "%s/newer.h5", g_dir);
    ck_assert_int_eq(bl_mf_test_set_root_string(path, "format_version", "4.0", 0, &err), BL_OK);
    EXPECT(0, "cp newer.h5 newer-orig.h5");
    EXPECT_ERR(1, "newer than this library", "%s %s --out newer.h5", g_train, pre);
    EXPECT(0, "cmp newer.h5 newer-orig.h5");
    EXPECT_ERR(1, "newer than this library", "%s finetune --model model.h5 --data runs.tsv --out newer.h5", g_train);
    EXPECT(0, "cmp newer.h5 newer-orig.h5");
    EXPECT_ERR(2, "--out-name 'a/b' is not a valid model name",
               "%s finetune --model model.h5 --data runs.tsv --out x.h5 --out-name a/b", g_train);
    EXPECT_ERR(1, "--out adir: is a folder", "mkdir -p adir && %s finetune --model model.h5 --data runs.tsv --out adir",
               g_train);
    /* a read-only model file is not replaced behind its back (as root too, without the capabilities
     * that bypass permissions) */
    if (!bl_test_obey_permissions()) BL_TEST_SKIP("running as root, and file permissions cannot be made to apply");
    EXPECT(0, "cp model.h5 ro.h5 && chmod 444 ro.h5 && cp ro.h5 ro-orig.h5");
    EXPECT_ERR(1, "not writable", "%s finetune --model ro.h5 --data runs.tsv --out ro.h5", g_train);
    EXPECT(0, "cmp ro.h5 ro-orig.h5");
}
END_TEST

/* split never writes over its input (that emptied the data file) or one output over another. */
START_TEST(test_split_outputs_protected) {
    EXPECT(0, "cp synth.tsv in.tsv && cp synth.tsv in-orig.tsv && ln -sf in.tsv inlink.tsv");
    EXPECT_ERR(2, "is an input file", "%s split --data in.tsv --schema synth.schema --held-out in.tsv", g_train);
    EXPECT(0, "cmp in.tsv in-orig.tsv");
    EXPECT_ERR(2, "is an input file", "%s split --data inlink.tsv --schema synth.schema --rest ./in.tsv", g_train);
    EXPECT(0, "cmp in.tsv in-orig.tsv");
    EXPECT_ERR(2, "is an input file", "%s split --data in.tsv --schema synth.schema --held-out synth.schema", g_train);
    EXPECT_ERR(2, "the same file", "%s split --data in.tsv --schema synth.schema --held-out o.tsv --rest ./o.tsv", g_train);
    EXPECT_ERR(2, "--list", "%s split --data in.tsv --schema synth.schema --list --context 2", g_train);
    EXPECT_ERR(1, "--held-out nodir/o.tsv", "%s split --data in.tsv --schema synth.schema --held-out nodir/o.tsv", g_train);
    /* a good split leaves no temporary file behind */
    EXPECT(0, "%s split --data in.tsv --schema synth.schema --context 2 --held-out o.tsv --rest r.tsv", g_train);
    EXPECT(0, "ls | grep -c tmp- || true");
    ck_assert_str_eq(g_out, "0\n");
    EXPECT(0, "wc -l < o.tsv");
    ck_assert_str_eq(g_out, "19\n");
}
END_TEST

/* A failed write of the results (disk full) is an error with a message, never a silent exit 1 or 0. */
START_TEST(test_write_errors_reported) {
    if (access("/dev/full", W_OK) != 0) BL_TEST_SKIP("no writable /dev/full: write errors are not checked");
    EXPECT_ERR(1, "cannot write the output", "%s --model model.h5 %s --scale-out 2 >/dev/full", g_predict, g_sets);
    EXPECT_ERR(1, "cannot write the output", "%s inspect --data rest.tsv --schema synth.schema >/dev/full", g_train);
    EXPECT_ERR(1, "cannot write the output", "%s --help >/dev/full", g_train);
    EXPECT_ERR(1, "cannot write the output", "%s --workload hybrid --policy fifo-gpu >/dev/full", g_sim);
}
END_TEST

/* dbmlsched-sim: the same option rules as the other programs. */
START_TEST(test_sim_options) {
    EXPECT(0, "%s --version", g_sim);
    ck_assert_msg(strncmp(g_out, "dbmlsched-sim 0.11.0\nkernels: ", strlen("dbmlsched-sim 0.11.0\nkernels: ")) == 0, "%s", g_out);
    EXPECT_ERR(2, "--seed given twice", "%s --workload hybrid --policy fifo-gpu --seed 5 --seed 6", g_sim);
    EXPECT_ERR(2, "--workload given twice", "%s --workload hybrid --policy fifo-gpu --workload paper", g_sim);
    EXPECT_ERR(2, "exclude each other", "%s --workload hybrid --policy fifo-gpu --jobs --no-jobs", g_sim);
    EXPECT_ERR(2, "unexpected argument 'extra'", "%s --workload hybrid --policy fifo-gpu extra", g_sim);
    /* a plot's terminal comes from its name; a workload's name is text in the plot, never script; a
     * built-in name is the built-in even when a file of that name is here */
    EXPECT_ERR(2, "must end in .svg or .png", "%s --workload paper --policy rr --plot x.pdf", g_sim);
    EXPECT_ERR(2, "its folder does not exist", "%s --workload paper --policy rr --plot nodir/x.svg", g_sim);
    EXPECT_ERR(2, "is a folder", "mkdir -p dir.svg; %s --workload paper --policy rr --plot dir.svg", g_sim);
    EXPECT(0, "%s --workload paper --policy rr --save-workload \"q'.system('touch INJECTED').'.tsv\"", g_sim);
    EXPECT(0, "%s --workload \"q'.system('touch INJECTED').'.tsv\" --policy rr --json > q.json", g_sim);
    EXPECT(0, "python3 -m json.tool q.json > /dev/null || ! command -v python3");
    if (access("/usr/bin/gnuplot", X_OK) == 0) {
        EXPECT(0, "%s --workload \"q'.system('touch INJECTED').'.tsv\" --policy rr --plot q.svg --gantt q.png", g_sim);
        EXPECT(0, "test ! -e INJECTED && grep -q '</svg>' q.svg");
        /* a plot cut short by a file-size limit is an error and is removed, not "wrote" */
        EXPECT(3, "ulimit -f 4; %s --workload poisson:2000 --policy rr --plot lim.svg", g_sim);
        EXPECT(0, "test ! -e lim.svg");
    }
    /* plots and a saved workload that cannot be made are said before the run (issue 24: gnuplot failed after it) */
    EXPECT_ERR(1, "--plot /proc/p.svg: cannot create a temporary file", "%s --workload paper --policy rr --plot /proc/p.svg",
               g_sim);
    EXPECT_ERR(1, "--gantt /proc/g.png: cannot create a temporary file", "%s --workload paper --policy rr --gantt "
               "/proc/g.png", g_sim);
    EXPECT_ERR(1, "--save-workload /proc/w.tsv: cannot create a temporary file", "%s --workload paper --policy rr "
               "--save-workload /proc/w.tsv", g_sim);
    EXPECT_ERR(2, "--gantt draws a box for every run segment of every job: 20001 jobs are more than a chart can show",
               "%s --workload poisson:20001 --policy rr --gantt big.svg --save-workload big.tsv", g_sim);
    EXPECT(0, "test ! -e big.svg && test ! -e big.tsv");
    EXPECT(0, "mkdir -p paper && %s --workload paper --policy rr > /dev/null && rmdir paper", g_sim);
    EXPECT_ERR(2, "unknown option '--version2'", "%s --workload hybrid --policy fifo-gpu --version2", g_sim);
    EXPECT_ERR(2, "--json takes no value", "%s --workload hybrid --policy fifo-gpu --json=1", g_sim);
    EXPECT_ERR(2, "--est-noise", "%s --workload hybrid --policy fifo-gpu --est-noise inf", g_sim);
    EXPECT_ERR(2, "--seed", "%s --workload hybrid --policy fifo-gpu --seed ' 5'", g_sim);
    EXPECT_ERR(2, "--workload: empty value", "%s --workload '' --policy fifo-gpu", g_sim);
    EXPECT_ERR(2, "given twice", "%s --workload hybrid --policy rr --policy rr", g_sim);
    EXPECT_ERR(1, "is a folder", "mkdir -p adir && %s --workload adir --policy fifo-gpu", g_sim);
    EXPECT_ERR(1, "not a built-in workload", "%s --workload nosuch --policy fifo-gpu", g_sim);
    EXPECT(0, "%s --workload=hybrid --policy=fifo-gpu --no-jobs", g_sim);
}
END_TEST

/* bellamy-train import (issue 25): event logs written for the synthetic corpus's runs by gen-eventlogs
 * (one per run, every other one zstd) become a data file whose runs read back the same as the corpus
 * through the schema a user writes; importing again adds nothing; the real logs of ../shared are
 * imported with every one left out named; bad options and inputs are clear errors, nothing written. */
START_TEST(test_import_histories) {
    EXPECT(0, "rm -rf hist && mkdir hist && '%s/tests/gen-eventlogs' --data synth.tsv --schema synth.schema --out-dir hist "
              "--codec mixed", getenv("BELLAMY_BUILD_ROOT"));
    ck_assert_msg(strstr(g_out, "144 event logs written"), "%s", g_out);
    EXPECT(0, "rm -f imp.tsv imp.schema && %s import --out imp.tsv --property machine_type=spark.kubernetes.node.selector."
              "node.kubernetes.io/instance-type --property environment=spark.bellamy.environment hist", g_train);
    ck_assert_msg(strstr(g_out, "read 144 logs (0 unreadable, skipped): 144 runs, 0 left out\n") &&
                  strstr(g_out, "imp.tsv: 144 runs added; schema imp.schema (written)\n"), "%s", g_out);
    ck_assert_str_eq(g_err, "");
    EXPECT(0, "cat imp.schema");
    ck_assert_msg(strstr(g_out, "\nscale_out hosts") && strstr(g_out, "\nproperty job_type essential text column name\n") &&
                  strstr(g_out, "\nproperty data_size_MB essential number column input_mb\n") &&
                  strstr(g_out, "\nproperty machine_type essential text column machine_type  # from spark.kubernetes.") &&
                  strstr(g_out, "\ncluster_totals total_cores total_memory_mb\n"), "%s", g_out);
    /* the runs as the corpus has them: scale-outs, runtimes (to the millisecond) and sizes */
    EXPECT(0, "%s inspect --data imp.tsv --schema imp.schema", g_train);
    ck_assert_msg(strstr(g_out, "\nrows: 144\n") && strstr(g_out, "\nscale-out: 2 .. 12\n"), "%s", g_out);
    EXPECT(0, "%s inspect --data synth.tsv --schema synth.schema | grep '^runtime' && %s inspect --data imp.tsv --schema "
              "imp.schema | grep '^runtime'", g_train, g_train);
    char *second = strchr(g_out, '\n');
    ck_assert_ptr_nonnull(second);
    ck_assert_msg(strncmp(g_out, second + 1, strcspn(g_out, "(")) == 0, "runtimes differ: %s", g_out);
    /* again: nothing added, every row kept, the schema as it was */
    EXPECT(0, "echo '# mine' >> imp.schema && %s import --out imp.tsv --property machine_type=spark.kubernetes.node.selector."
              "node.kubernetes.io/instance-type --property environment=spark.bellamy.environment hist --json", g_train);
    ck_assert_msg(strstr(g_out, "\"logs\":144,\"logs_failed\":0,\"runs_found\":144,\"skipped\":0,\"added\":0,\"kept\":144,"
                                "\"already\":144"), "%s", g_out);
    EXPECT(0, "tail -n 1 imp.schema && wc -l < imp.tsv");
    ck_assert_str_eq(g_out, "# mine\n145\n");
    /* one data set per application name */
    EXPECT(0, "rm -rf byname && mkdir byname && %s import --out byname --group-by name --redact hist && ls byname", g_train);
    ck_assert_msg(strstr(g_out, "synth-spark.schema\nsynth-spark.tsv\n"), "%s", g_out);
    EXPECT(0, "grep -c -- '--redact' byname/synth-spark.schema; grep -c 'job_args: left out' byname/synth-spark.schema");
    /* bad input: named, nothing written; a bad option before any log is read (exit 2, as other bad flags) */
    EXPECT_ERR(2, "no logs given", "%s import --out x.tsv", g_train);
    EXPECT_ERR(2, "--property 'machine_type': write NAME=CONFIGURATION_KEY", "%s import --out x.tsv --property "
               "machine_type hist", g_train);
    EXPECT_ERR(2, "'colour' is no property name a schema takes", "%s import --out x.tsv --property colour=spark.x hist",
               g_train);
    EXPECT_ERR(2, "property 'environment' is given twice", "%s import --out x.tsv --property environment=k --const "
               "environment=v hist", g_train);
    EXPECT_ERR(1, "nothere: cannot open", "%s import --out x.tsv nothere", g_train);
    EXPECT(0, "rm -rf empty && mkdir empty && : > empty/zero.log && printf 'a,b\\n1,2\\n' > empty/table.csv");
    EXPECT(1, "%s import --out x.tsv empty", g_train);
    ck_assert_msg(strstr(g_err, "empty/zero.log: neither a Spark event log nor a Flink job archive; skipped") &&
                  strstr(g_err, "empty: a folder without Spark event logs or Flink job archives") &&
                  strstr(g_err, "no run to import: 0 logs read") && strstr(g_err, "nothing written"), "%s", g_err);
    EXPECT(0, "test ! -e x.tsv && test ! -e x.schema");
    EXPECT_ERR(1, "its columns", "%s import --out synth.tsv hist", g_train); /* another file, kept as it was */
    EXPECT(0, "head -c 60 synth.tsv");
    ck_assert_msg(strncmp(g_out, "instance_count\t", 15) == 0, "%s", g_out);
    /* a damaged log among good ones: named and skipped, the others imported */
    EXPECT(0, "rm -rf mixed && mkdir mixed && cp hist/app-000000_1 hist/app-000001_1.zstd mixed/ && head -c 300 "
              "hist/app-000003_1.zstd > mixed/app-cut_1.zstd");
    EXPECT(0, "rm -f m.tsv m.schema && %s import --out m.tsv mixed", g_train);
    ck_assert_msg(strstr(g_out, "read 3 logs (1 unreadable, skipped): 2 runs") && strstr(g_err, "app-cut_1.zstd") &&
                  strstr(g_err, "skipped"), "%s\n%s", g_out, g_err);
    /* a tree users have: links back to a parent (searched once, never a hang), a dangling link and an
     * unreadable part of a rolling log (named, the others read), a typo in a --property key (an error
     * with the closest keys), names and keys a schema cannot hold, the schema on the data file's path */
    EXPECT(0, "rm -rf tree && mkdir -p tree/a tree/eventlog_v2_spark-x && cp hist/app-000000_1 tree/a/ && "
              "ln -s .. tree/a/up && ln -s ../a tree/a/again && ln -s nothere tree/a/dangling && "
              "cp hist/app-000001_1.zstd tree/eventlog_v2_spark-x/events_1_spark-x.zstd && "
              "ln -s /dev/zero tree/eventlog_v2_spark-x/events_2_spark-x");
    EXPECT(0, "rm -f t.tsv t.schema && timeout 60 %s import --out t.tsv tree", g_train);
    ck_assert_msg(strstr(g_out, "read 2 logs (1 unreadable, skipped): 2 runs, 0 left out") &&
                  strstr(g_err, "a folder already searched (a link to it); not searched again") &&
                  strstr(g_err, "tree/a/dangling: cannot open: No such file or directory; skipped") &&
                  strstr(g_err, "\"events_2_spark-x\" is no regular file"), "%s\n%s", g_out, g_err);
    EXPECT_ERR(1, "--property machine_type=spark.kubernetes.node.selector.node.kubernetes.io/instance_type: none of the "
               "144 runs has that configuration key; did you mean 'spark.kubernetes.node.selector.node.kubernetes.io/"
               "instance-type'?", "%s import --out x.tsv --property machine_type=spark.kubernetes.node.selector.node."
               "kubernetes.io/instance_type hist", g_train);
    EXPECT_ERR(2, "--property: 'x_a b' is no property name a schema takes", "%s import --out x.tsv --property 'x_a b=k' "
               "hist", g_train);
    EXPECT_ERR(2, "the key holds a control character", "%s import --out x.tsv --property \"$(printf 'x_a=k\\nproperty')\" "
               "hist", g_train);
    EXPECT_ERR(2, "the schema and the data file are one path (y.tsv)", "%s import --out y.tsv --schema-out y.tsv hist",
               g_train);
    EXPECT_ERR(1, "nowhere: with grouping by name the output is a folder, and it does not exist", "%s import --out nowhere "
               "--group-by name hist", g_train);
    EXPECT(0, "test ! -e x.tsv && test ! -e y.tsv");
    /* the real logs: two attempts left out (one never ended, one failed), each named with why */
    const char *real = bl_test_shared_path("datasets/spark-eventlogs");
    if (!real) BL_TEST_SKIP("no ../shared/datasets/spark-eventlogs: the real logs are not imported");
    EXPECT(0, "rm -f real.tsv real.schema && %s import --out real.tsv '%s'", g_train, real);
    ck_assert_msg(strstr(g_out, "read 6 logs (0 unreadable, skipped): 6 runs, 3 left out") &&
                  strstr(g_err, "application_1713000000000_0001, attempt 1: the log ends before the application does; "
                                "skipped") &&
                  strstr(g_err, "attempt 2: job 4 failed: ") && strstr(g_err, "(--include-failed imports it); skipped"),
                  "%s\n%s", g_out, g_err);
    EXPECT(0, "%s import --out real.tsv --include-failed '%s'", g_train, real);
    ck_assert_msg(strstr(g_out, "real.tsv: 1 run added"), "%s", g_out);
    EXPECT(0, "grep -c failed real.tsv");
    ck_assert_str_eq(g_out, "1\n");
}
END_TEST

Suite *bl_test_suite(void) {
    Suite *s = suite_create("cli");
    TCase *tc = tcase_create("cli");
    tcase_add_unchecked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 300); /* sanitizer builds on a busy machine */
    tcase_add_test(tc, test_help_version);
    tcase_add_test(tc, test_repro_inputs);
    tcase_add_test(tc, test_fifo_inputs_fail_at_once);
    tcase_add_test(tc, test_c3o_contexts);
    tcase_add_test(tc, test_pretrain_progress_and_errors);
    tcase_add_test(tc, test_predict_table);
    tcase_add_test(tc, test_history_and_finetune);
    tcase_add_test(tc, test_history_contexts_noted);
    tcase_add_test(tc, test_finetune_guard_note);
    tcase_add_test(tc, test_runs_schema_checked);
    tcase_add_test(tc, test_multi_model_file);
    tcase_add_test(tc, test_h5py_edit_on_purpose);
    tcase_add_test(tc, test_did_you_mean);
    tcase_add_test(tc, test_user_contexts_and_warnings);
    tcase_add_test(tc, test_info_and_json);
    tcase_add_test(tc, test_precision_cli);
    tcase_add_test(tc, test_skip_invalid);
    tcase_add_test(tc, test_invalid_runtime_fix);
    tcase_add_test(tc, test_runtime_units_cli);
    tcase_add_test(tc, test_quoted_csv);
    tcase_add_test(tc, test_help_aligned);
    tcase_add_test(tc, test_pretrain_ensemble_report);
    tcase_add_test(tc, test_predict_bad_input);
    tcase_add_test(tc, test_split);
    tcase_add_test(tc, test_strict_option_values);
    tcase_add_test(tc, test_predict_scale_out_bounds);
    tcase_add_test(tc, test_predict_no_choice_keeps_table);
    tcase_add_test(tc, test_predict_tiny_runtimes);
    tcase_add_test(tc, test_predict_unbounded_fields);
    tcase_add_test(tc, test_predict_scale_out_forms);
    tcase_add_test(tc, test_input_files_checked);
    tcase_add_test(tc, test_train_output_checked_first);
    tcase_add_test(tc, test_split_outputs_protected);
    tcase_add_test(tc, test_write_errors_reported);
    tcase_add_test(tc, test_sim_options);
    tcase_add_test(tc, test_import_histories);
    suite_add_tcase(s, tc);
    return s;
}
