/* test_import.c — importing run histories (src/import/): the run record every reader fills, the data
 * file and schema written, and the --property / --const options (with logs made by eventlog_gen.c). */
#include "testutil.h"
#include "eventlog_gen.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import/import.h"
#include "bellamy/train.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

START_TEST(record_starts_unknown_and_keeps_configuration_sorted) {
    bl_run_record *r = bl_run_record_new("logs/app-1", "spark");
    ck_assert_ptr_nonnull(r);
    ck_assert_str_eq(r->source, "logs/app-1");
    ck_assert_str_eq(r->engine, "spark");
    ck_assert_str_eq(r->app_id, "");
    ck_assert_str_eq(r->why, "");
    ck_assert(isnan(r->start_ms) && isnan(r->input_bytes) && isnan(r->executor_memory_mb));
    ck_assert(r->hosts == -1 && r->executors == -1 && r->executor_cores == -1 && r->dynamic_allocation == -1);
    ck_assert_int_eq(r->state, BL_RUN_COMPLETE);
    bl_error err;
    const char *keys[] = {"spark.master", "spark.app.name", "spark.executor.memory", "spark.app.name", "a"};
    const char *vals[] = {"yarn", "first", "4g", "second", ""};
    for (int i = 0; i < 5; i++) ck_assert_int_eq(bl_run_record_conf(r, keys[i], vals[i], &err), BL_OK);
    ck_assert_uint_eq(r->n_conf, 4); /* a key given again replaces its value */
    for (size_t i = 1; i < r->n_conf; i++) ck_assert_int_lt(strcmp(r->conf_key[i - 1], r->conf_key[i]), 0);
    ck_assert_str_eq(bl_run_record_get(r, "spark.app.name"), "second");
    ck_assert_str_eq(bl_run_record_get(r, "a"), "");
    ck_assert_ptr_null(bl_run_record_get(r, "spark.nothere"));
    ck_assert_int_eq(bl_run_record_set(&r->name, "grep", &err), BL_OK);
    ck_assert_int_eq(bl_run_record_set(&r->args, NULL, &err), BL_OK);
    ck_assert_str_eq(r->name, "grep");
    ck_assert_str_eq(r->args, "");
    bl_run_record_free(r);
    bl_run_record_free(NULL);
}
END_TEST

/* A complete Spark run for the writer's tests. */
static bl_run_record *spark_run(const char *app, const char *attempt, const char *name, long hosts, double start_ms,
                               double seconds, double input_bytes) {
    bl_run_record *r = bl_run_record_new("logs/x", "spark");
    bl_error err;
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(bl_run_record_set(&r->app_id, app, &err), BL_OK);
    ck_assert_int_eq(bl_run_record_set(&r->attempt, attempt, &err), BL_OK);
    ck_assert_int_eq(bl_run_record_set(&r->name, name, &err), BL_OK);
    ck_assert_int_eq(bl_run_record_set(&r->version, "3.5.1", &err), BL_OK);
    ck_assert_int_eq(bl_run_record_set(&r->master, "yarn", &err), BL_OK);
    ck_assert_int_eq(bl_run_record_set(&r->args, "--pattern\tfoo\nbar", &err), BL_OK);
    ck_assert_int_eq(bl_run_record_conf(r, "spark.yarn.instanceType", hosts > 4 ? "m5.xlarge" : "c5.xlarge", &err), BL_OK);
    r->start_ms = start_ms;
    r->end_ms = start_ms + 1000 * seconds;
    r->hosts = hosts;
    r->executors = 2 * hosts;
    r->executor_cores = 4;
    r->executor_memory_mb = 4096;
    r->input_bytes = input_bytes;
    return r;
}

static char *read_all(const char *path) {
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return buf;
}

/* Runs become rows of fixed columns plus the user's, text cleaned of tabs and line breaks; the schema
 * names what every row knows; the pair loads through the data reader as a Bellamy data set. */
START_TEST(write_rows_and_a_schema_that_loads) {
    char data[4200], schema[4200];
    snprintf(data, sizeof data, "%s/runs.tsv", bl_test_tmpdir());
    snprintf(schema, sizeof schema, "%s/runs.schema", bl_test_tmpdir());
    unlink(data);
    unlink(schema);
    bl_run_record *recs[4] = {spark_run("application_1_0001", "1", "grep", 4, 1.7e12, 120.5, 2e9),
                              spark_run("application_1_0002", "1", "grep", 8, 1.7e12 + 9e5, 70.25, 2e9),
                              spark_run("application_1_0003", "", "grep", 2, 1.7e12 + 2e6, 230, 2.5e9),
                              spark_run("application_1_0004", "2", "grep", 12, 1.7e12 + 3e6, 61.125, 2e9)};
    char *pn[1] = {"machine_type"}, *pk[1] = {"spark.yarn.instanceType"}, *cn[1] = {"x_site"}, *cv[1] = {"our \"yarn\""};
    bl_import_plan plan = {0, 0, 1, pn, pk, 1, cn, cv};
    bl_import_counts c;
    bl_error err;
    ck_assert_msg(bl_import_write(recs, 4, &plan, data, schema, &c, &err) == BL_OK, "%s", err.message);
    ck_assert(c.added == 4 && c.kept == 0 && c.already == 0 && c.schema_written == 1);
    const char *text = read_all(data);
    ck_assert_msg(strncmp(text, "app_id\tattempt\tengine\tname\tversion\tmaster\tdeploy_mode\tstart_time\truntime_s\thosts\t"
                                "executors\tdynamic_allocation\texecutor_cores\texecutor_memory_mb\ttotal_cores\ttotal_memory_mb\tinput_mb\t"
                                "input_bytes\t"
                                "shuffle_read_bytes\tshuffle_write_bytes\tstate\targs\tmachine_type\n", 200) == 0, "%s", text);
    ck_assert_msg(strstr(text, "\napplication_1_0001\t1\tspark\tgrep\t3.5.1\tyarn\t\t2023-11-14T22:13:20.000Z\t120.500\t4\t"
                               "8\t\t4\t4096\t32\t32768\t2000\t2000000000\t\t\tcomplete\t--pattern foo bar\tc5.xlarge\n"), "%s", text);
    const char *sch = read_all(schema);
    ck_assert_msg(strstr(sch, "\nscale_out hosts") && strstr(sch, "\nruntime runtime_s s\n") &&
                  strstr(sch, "\nproperty job_type essential text column name\n") &&
                  strstr(sch, "\nproperty data_size_MB essential number column input_mb\n") &&
                  strstr(sch, "\nproperty machine_type essential text column machine_type") &&
                  strstr(sch, "\nproperty slots optional number column total_cores\n") &&
                  strstr(sch, "\nproperty memory optional number column total_memory_mb\n") &&
                  strstr(sch, "\ncluster_totals total_cores total_memory_mb\n") &&
                  strstr(sch, "\nproperty x_site essential text const \"our \\\"yarn\\\"\"\n"), "%s", sch);
    /* the data reader takes the pair: 4 runs in 2 contexts (the machine type differs) */
    bl_data *d = NULL;
    ck_assert_msg(bl_data_load(data, schema, NULL, &d, &err) == BL_OK, "%s", err.message);
    bl_data_summary sum;
    bl_data_summarize(d, &sum);
    ck_assert_uint_eq(sum.rows, 4);
    long slots = bl_data_find_property(d, "slots");
    bl_data_prop pr;
    ck_assert(slots >= 0 && bl_data_property(d, (size_t)slots, &pr) == BL_OK && pr.cluster_total);
    ck_assert_double_eq(sum.scale_out_min, 2);
    ck_assert_double_eq(sum.runtime_max_s, 230);
    bl_data_free(d);
    /* importing again adds only runs it does not hold, keeps every row and the user's schema */
    FILE *f = fopen(schema, "a");
    fputs("# my edit\n", f);
    fclose(f);
    bl_run_record *more[2] = {recs[1], spark_run("application_1_0005", "1", "grep", 6, 1.7e12 + 4e6, 90, 2e9)};
    ck_assert_msg(bl_import_write(more, 2, &plan, data, schema, &c, &err) == BL_OK, "%s", err.message);
    ck_assert(c.added == 1 && c.kept == 4 && c.already == 1 && c.schema_written == 0);
    ck_assert_ptr_nonnull(strstr(read_all(schema), "# my edit\n"));
    ck_assert_ptr_nonnull(strstr(read_all(data), "\napplication_1_0001\t1\t"));
    ck_assert_ptr_nonnull(strstr(read_all(data), "\napplication_1_0005\t1\t"));
    /* other --property columns than the file's: refused, the file untouched */
    bl_import_plan other = {0, 0, 0, NULL, NULL, 0, NULL, NULL};
    char before[1 << 16];
    snprintf(before, sizeof before, "%s", read_all(data));
    ck_assert_int_eq(bl_import_write(more, 2, &other, data, NULL, &c, &err), BL_EFORMAT);
    ck_assert_msg(strstr(err.message, "runs.tsv:1:1: its columns") && strstr(err.message, "are not those this import writes"),
                  "%s", err.message);
    ck_assert_str_eq(read_all(data), before);
    /* redacted arguments; a run without input leaves data_size_MB out of a new schema, saying why */
    snprintf(data, sizeof data, "%s/redacted.tsv", bl_test_tmpdir());
    snprintf(schema, sizeof schema, "%s/redacted.schema", bl_test_tmpdir());
    recs[2]->input_bytes = NAN;
    bl_import_plan red = {1, 1, 0, NULL, NULL, 0, NULL, NULL};
    ck_assert_msg(bl_import_write(recs, 4, &red, data, schema, &c, &err) == BL_OK, "%s", err.message);
    ck_assert_ptr_null(strstr(read_all(data), "--pattern"));
    sch = read_all(schema);
    ck_assert_msg(strstr(sch, "\nscale_out executors") && strstr(sch, "# job_args: left out, the arguments were redacted") &&
                  strstr(sch, "# data_size_MB: left out, some runs report no input bytes"), "%s", sch);
    ck_assert_msg(bl_data_load(data, schema, NULL, &d, &err) == BL_OK, "%s", err.message);
    bl_data_free(d);
    for (int i = 0; i < 4; i++) bl_run_record_free(recs[i]);
    bl_run_record_free(more[1]);
}
END_TEST

/* Runs bellamy-train with args (a shell command line's rest), stderr into err; its exit code, or -1 when
 * this build's bellamy-train is not there (BELLAMY_BUILD_ROOT unset: not run by meson test). */
static int train_cli(const char *args, char *err, size_t cap) {
    const char *root = getenv("BELLAMY_BUILD_ROOT");
    char exe[4200], cmd[9000], errf[4200];
    snprintf(exe, sizeof exe, "%s/bellamy-train", root ? root : "");
    if (!root || access(exe, X_OK) != 0) return -1;
    snprintf(errf, sizeof errf, "%s/cli.err", bl_test_tmpdir());
    snprintf(cmd, sizeof cmd, "cd '%s' && '%s' %s > /dev/null 2> '%s'", bl_test_tmpdir(), exe, args, errf);
    const int rc = system(cmd);
    FILE *f = fopen(errf, "rb");
    ck_assert_ptr_nonnull(f);
    const size_t n = fread(err, 1, cap - 1, f);
    err[n] = '\0';
    fclose(f);
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -2;
}

/* A misspelt property name in --property or --const: refused before any log is read (*res NULL, the
 * log not even looked for), with the closest name a schema takes; bellamy-train exits with the usage
 * code (2), as for other bad flags, while a run it cannot import stays a failure (1). */
START_TEST(a_misspelt_property_name_is_a_usage_error_with_a_suggestion) {
    const char *inputs[1] = {"no-such-log"};
    char out[4200];
    snprintf(out, sizeof out, "%s/typo.tsv", bl_test_tmpdir());
    const struct { int is_const; const char *item, *want; } cases[] = {
        {0, "machine_typ=spark.kubernetes.node.selector.node.kubernetes.io/instance-type",
         "--property: 'machine_typ' is no property name a schema takes; did you mean 'machine_type'?"},
        {1, "enviroment=ours", "--const: 'enviroment' is no property name a schema takes; did you mean 'environment'?"},
        {0, "colour=spark.x", "--property: 'colour' is no property name a schema takes (known: machine_type, "},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        bl_import_opts o;
        bl_import_opts_init(&o);
        const char *items[1] = {cases[i].item};
        if (cases[i].is_const) o.consts = items, o.n_consts = 1;
        else o.properties = items, o.n_properties = 1;
        bl_import_result *res = NULL;
        bl_error err;
        ck_assert_int_eq(bl_import_histories(inputs, 1, out, NULL, &o, &res, &err), BL_EINVAL);
        ck_assert_ptr_null(res);
        ck_assert_msg(strstr(err.message, cases[i].want), "%s", err.message);
    }
    char err[4096];
    int rc = train_cli("import --out typo.tsv --property machine_typ=spark.x no-such-log", err, sizeof err);
    if (rc == -1) BL_TEST_SKIP("no bellamy-train in BELLAMY_BUILD_ROOT: its exit code is not checked");
    ck_assert_msg(rc == 2 && strstr(err, "did you mean 'machine_type'?"), "exit %d: %s", rc, err);
    rc = train_cli("import --out typo.tsv --const enviroment=ours no-such-log", err, sizeof err);
    ck_assert_msg(rc == 2 && strstr(err, "did you mean 'environment'?"), "exit %d: %s", rc, err);
    /* the options are fine, the input is not: a failure, not a usage error */
    rc = train_cli("import --out typo.tsv --const environment=ours no-such-log", err, sizeof err);
    ck_assert_msg(rc == 1 && strstr(err, "no-such-log: cannot open"), "exit %d: %s", rc, err);
    ck_assert_int_ne(access(out, F_OK), 0);
}
END_TEST

/* --const NAME= gives an empty constant, as a schema's `const ""` is one (bellamy-train synth writes
 * data_characteristics so): the schema written says so and loads; a --property KEY must still be named. */
START_TEST(an_empty_const_value_is_a_constant_as_in_a_schema) {
    char dir[4200], log[4300], out[4300], schema[4300];
    snprintf(dir, sizeof dir, "%s/constlogs", bl_test_tmpdir());
    mkdir(dir, 0700);
    snprintf(log, sizeof log, "%s/app-1_1", dir);
    snprintf(out, sizeof out, "%s/const.tsv", bl_test_tmpdir());
    snprintf(schema, sizeof schema, "%s/const.schema", bl_test_tmpdir());
    unlink(out);
    unlink(schema);
    elg_buf b = {0};
    elg_small_log(&b);
    elg_write(log, b.p, b.n);
    elg_free(&b);
    const char *inputs[1] = {dir}, *consts[2] = {"environment=", "x_site=ours"};
    bl_import_opts o;
    bl_import_opts_init(&o);
    o.consts = consts;
    o.n_consts = 2;
    bl_import_result *res = NULL;
    bl_error err;
    ck_assert_msg(bl_import_histories(inputs, 1, out, NULL, &o, &res, &err) == BL_OK, "%s", err.message);
    bl_import_result_free(res);
    const char *sch = read_all(schema);
    ck_assert_msg(strstr(sch, "\nproperty environment essential text const \"\"\n") &&
                  strstr(sch, "\nproperty x_site essential text const \"ours\"\n") &&
                  !strstr(sch, "property environment essential text column master"), "%s", sch);
    bl_data *d = NULL;
    ck_assert_msg(bl_data_load(out, schema, NULL, &d, &err) == BL_OK, "%s", err.message);
    bl_data_free(d);
    /* no '=' at all, or an empty configuration key: refused, saying what to write */
    const char *no_eq[1] = {"environment"}, *no_key[1] = {"machine_type="};
    o.consts = no_eq;
    o.n_consts = 1;
    ck_assert_int_eq(bl_import_histories(inputs, 1, out, NULL, &o, &res, &err), BL_EINVAL);
    ck_assert_msg(strstr(err.message, "--const 'environment': write NAME=VALUE"), "%s", err.message);
    o.consts = NULL;
    o.n_consts = 0;
    o.properties = no_key;
    o.n_properties = 1;
    ck_assert_int_eq(bl_import_histories(inputs, 1, out, NULL, &o, &res, &err), BL_EINVAL);
    ck_assert_msg(strstr(err.message, "--property 'machine_type=': write NAME=CONFIGURATION_KEY"), "%s", err.message);
    /* and through bellamy-train */
    char msg[4096];
    const int rc = train_cli("import --out const2.tsv --const environment= constlogs", msg, sizeof msg);
    if (rc == -1) BL_TEST_SKIP("no bellamy-train in BELLAMY_BUILD_ROOT: its exit code is not checked");
    ck_assert_msg(rc == 0, "exit %d: %s", rc, msg);
}
END_TEST

Suite *bl_test_suite(void) {
    Suite *s = suite_create("import");
    TCase *tc = tcase_create("record");
    tcase_add_test(tc, record_starts_unknown_and_keeps_configuration_sorted);
    tcase_add_test(tc, write_rows_and_a_schema_that_loads);
    tcase_add_test(tc, a_misspelt_property_name_is_a_usage_error_with_a_suggestion);
    tcase_add_test(tc, an_empty_const_value_is_a_constant_as_in_a_schema);
    suite_add_tcase(s, tc);
    return s;
}
