/* test_import_spark.c — the Spark event-log reader (src/import/spark.c) and its line reader through
 * Spark's codecs (src/import/stream.c): the real logs in ../shared/datasets/spark-eventlogs/ read to
 * the values they hold, logs written here (tests/eventlog_gen.c) for every codec, cut and damaged
 * streams, rolling logs, executors over time, failed jobs, unknown events, damaged lines, and a large
 * log read in flat memory. */
#include "testutil.h"
#include "eventlog_gen.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <zstd.h>

#include "common/utf8.h"
#include "import/import.h"
#include "import/stream.h"

/* ---- a sink that keeps what it gets ------------------------------------------------------------------ */

#define MAX_RECORDS 8
#define MAX_GOT_NOTES 64

typedef struct got {
    bl_run_record *r[MAX_RECORDS];
    size_t n;
    char notes[MAX_GOT_NOTES][600];
    size_t n_notes;
    bl_status fail_with; /* the sink's answer to each record (BL_OK: take it) */
} got;

static bl_status grab(void *ctx, bl_run_record *r, bl_error *err) {
    got *g = ctx;
    if (g->fail_with != BL_OK) {
        bl_run_record_free(r);
        snprintf(err->message, sizeof err->message, "sink refused");
        err->status = g->fail_with;
        return g->fail_with;
    }
    if (g->n < MAX_RECORDS) g->r[g->n++] = r;
    else bl_run_record_free(r);
    return BL_OK;
}

static void grab_note(void *ctx, const char *file, size_t line, const char *what) {
    got *g = ctx;
    if (g->n_notes < MAX_GOT_NOTES) snprintf(g->notes[g->n_notes++], sizeof g->notes[0], "%s:%zu: %s", file, line, what);
}

static void got_clear(got *g) {
    for (size_t i = 0; i < g->n; i++) bl_run_record_free(g->r[i]);
    memset(g, 0, sizeof *g);
}

static bl_status read_log(const char *path, got *g, bl_error *err) {
    got_clear(g);
    bl_import_sink sink = {g, grab, grab_note};
    memset(err, 0, sizeof *err);
    return bl_spark_read_log(path, &sink, err);
}

/* The note that contains needle, or NULL. */
static const char *note_with(const got *g, const char *needle) {
    for (size_t i = 0; i < g->n_notes; i++)
        if (strstr(g->notes[i], needle)) return g->notes[i];
    return NULL;
}

/* A path in the suite's temporary folder. */
static const char *tmp(char *buf, size_t cap, const char *name) {
    snprintf(buf, cap, "%s/%s", bl_test_tmpdir(), name);
    return buf;
}

static void write_log(const char *path, const elg_buf *b) { elg_write(path, b->p, b->n); }
static void write_str(const char *path, const char *s) { elg_write_raw(path, s, strlen(s)); }

/* Reads a log made of b under name (encoded by its name) and expects one record. */
static bl_run_record *one_record(const char *name, const elg_buf *b, got *g) {
    char path[4096];
    tmp(path, sizeof path, name);
    write_log(path, b);
    bl_error err;
    const bl_status st = read_log(path, g, &err);
    ck_assert_msg(st == BL_OK, "%s: %s", name, err.message);
    ck_assert_uint_eq(g->n, 1);
    return g->r[0];
}

static int same_num(double a, double b) { return (isnan(a) && isnan(b)) || a == b; }

/* Every field of two records equal (the source aside). */
static void assert_same_record(const bl_run_record *a, const bl_run_record *b) {
    ck_assert_str_eq(a->app_id, b->app_id);
    ck_assert_str_eq(a->attempt, b->attempt);
    ck_assert_str_eq(a->name, b->name);
    ck_assert_str_eq(a->version, b->version);
    ck_assert_str_eq(a->master, b->master);
    ck_assert_str_eq(a->deploy_mode, b->deploy_mode);
    ck_assert_str_eq(a->args, b->args);
    ck_assert_str_eq(a->why, b->why);
    ck_assert(same_num(a->start_ms, b->start_ms) && same_num(a->end_ms, b->end_ms));
    ck_assert(same_num(a->input_bytes, b->input_bytes) && same_num(a->shuffle_read_bytes, b->shuffle_read_bytes) &&
              same_num(a->shuffle_write_bytes, b->shuffle_write_bytes) &&
              same_num(a->executor_memory_mb, b->executor_memory_mb));
    ck_assert_int_eq(a->hosts, b->hosts);
    ck_assert_int_eq(a->executors, b->executors);
    ck_assert_int_eq(a->executor_cores, b->executor_cores);
    ck_assert_int_eq(a->dynamic_allocation, b->dynamic_allocation);
    ck_assert_int_eq(a->state, b->state);
    ck_assert_uint_eq(a->unknown_events, b->unknown_events);
    ck_assert_uint_eq(a->n_conf, b->n_conf);
    for (size_t i = 0; i < a->n_conf; i++) {
        ck_assert_str_eq(a->conf_key[i], b->conf_key[i]);
        ck_assert_str_eq(a->conf_val[i], b->conf_val[i]);
    }
}

/* The first field in which two records differ, or NULL: for loops over many reads, where each Check
 * assertion would cost a write to Check's log (checked once after the loop). */
static const char *record_differs(const bl_run_record *a, const bl_run_record *b) {
    if (strcmp(a->app_id, b->app_id) || strcmp(a->attempt, b->attempt) || strcmp(a->name, b->name) ||
        strcmp(a->version, b->version) || strcmp(a->args, b->args) || strcmp(a->why, b->why))
        return "a string";
    if (!same_num(a->start_ms, b->start_ms) || !same_num(a->end_ms, b->end_ms) ||
        !same_num(a->input_bytes, b->input_bytes) || !same_num(a->shuffle_read_bytes, b->shuffle_read_bytes) ||
        !same_num(a->shuffle_write_bytes, b->shuffle_write_bytes))
        return "a number";
    if (a->executors != b->executors || a->hosts != b->hosts || a->state != b->state || a->n_conf != b->n_conf ||
        a->unknown_events != b->unknown_events)
        return "a count";
    return NULL;
}

/* The small log's values (eventlog_gen.h). */
static void assert_small_record(const bl_run_record *r) {
    ck_assert_str_eq(r->engine, "spark");
    ck_assert_str_eq(r->app_id, "app-1");
    ck_assert_str_eq(r->attempt, "1");
    ck_assert_str_eq(r->name, "small");
    ck_assert_str_eq(r->version, "3.5.1");
    ck_assert_str_eq(r->master, "yarn");
    ck_assert_str_eq(r->deploy_mode, "cluster");
    ck_assert_double_eq(r->start_ms, 1000);
    ck_assert_double_eq(r->end_ms, 61000);
    ck_assert_int_eq(r->executors, 2);
    ck_assert_int_eq(r->hosts, 2);
    ck_assert_int_eq(r->executor_cores, 2);
    ck_assert_double_eq(r->executor_memory_mb, 2048);
    ck_assert_int_eq(r->dynamic_allocation, 0);
    ck_assert_double_eq(r->input_bytes, 600);
    ck_assert_double_eq(r->shuffle_read_bytes, 66);
    ck_assert_double_eq(r->shuffle_write_bytes, 66);
    ck_assert_str_eq(r->args, "in out");
    ck_assert_int_eq(r->state, BL_RUN_COMPLETE);
    ck_assert_str_eq(r->why, "");
    ck_assert_uint_eq(r->n_conf, 5);
    ck_assert_str_eq(bl_run_record_get(r, "spark.executor.memory"), "2g");
    ck_assert_uint_eq(r->unknown_events, 0);
}

/* ---- the real logs ---------------------------------------------------------------------------------- */

static const char *real_log(char *buf, size_t cap, const char *name) {
    const char *dir = bl_test_shared_path("datasets/spark-eventlogs");
    if (!dir) return NULL;
    snprintf(buf, cap, "%s/%s", dir, name);
    return buf;
}

START_TEST(real_spark_4_1_zstd_logs_give_two_attempts_the_first_never_ended) {
    char p1[4096], p2[4096];
    if (!real_log(p1, sizeof p1, "application_1713000000000_0001_1.zstd") ||
        !real_log(p2, sizeof p2, "application_1713000000000_0001_2.zstd")) {
        BL_TEST_SKIP("no ../shared/datasets/spark-eventlogs: the real Spark logs cannot be read");
    }
    got g = {0};
    bl_error err;
    ck_assert_msg(read_log(p1, &g, &err) == BL_OK, "%s", err.message);
    ck_assert_uint_eq(g.n, 1);
    const bl_run_record *r = g.r[0];
    ck_assert_str_eq(r->source, p1);
    ck_assert_str_eq(r->app_id, "application_1713000000000_0001");
    ck_assert_str_eq(r->attempt, "1");
    ck_assert_str_eq(r->name, "shs-e2e-yarn");
    ck_assert_str_eq(r->version, "4.1.0");
    ck_assert_str_eq(r->master, "local"); /* local[2,4]: the driver runs every task */
    ck_assert_str_eq(r->deploy_mode, "client");
    ck_assert_double_eq(r->start_ms, 1776462935276.0);
    ck_assert(isnan(r->end_ms));
    ck_assert_int_eq(r->executors, 1);
    ck_assert_int_eq(r->hosts, 1);
    ck_assert_int_eq(r->executor_cores, 2);
    ck_assert_double_eq(r->executor_memory_mb, 512); /* spark.driver.memory 512m */
    ck_assert_int_eq(r->dynamic_allocation, 0);
    ck_assert_double_eq(r->input_bytes, 0);
    ck_assert_double_eq(r->shuffle_read_bytes, 496);
    ck_assert_double_eq(r->shuffle_write_bytes, 496);
    ck_assert_str_eq(r->args, "");
    ck_assert_int_eq(r->state, BL_RUN_INCOMPLETE);
    ck_assert_str_eq(r->why, "the log ends before the application does");
    ck_assert_uint_eq(r->n_conf, 25);
    ck_assert_str_eq(bl_run_record_get(r, "spark.sql.shuffle.partitions"), "4");
    ck_assert_uint_eq(r->unknown_events, 13); /* the SQL listener's events */

    ck_assert_msg(read_log(p2, &g, &err) == BL_OK, "%s", err.message);
    ck_assert_uint_eq(g.n, 1);
    r = g.r[0];
    ck_assert_str_eq(r->app_id, "application_1713000000000_0001");
    ck_assert_str_eq(r->attempt, "2");
    ck_assert_str_eq(r->name, "shs-e2e-yarn");
    ck_assert_str_eq(r->version, "4.1.0");
    ck_assert_double_eq(r->start_ms, 1776462945821.0);
    ck_assert_double_eq(r->end_ms, 1776462958891.0);
    ck_assert_int_eq(r->executors, 1);
    ck_assert_int_eq(r->hosts, 1);
    ck_assert_int_eq(r->executor_cores, 2);
    ck_assert_double_eq(r->executor_memory_mb, 1024);
    ck_assert_double_eq(r->input_bytes, 27637960);
    ck_assert_double_eq(r->shuffle_read_bytes, 60658667);
    ck_assert_double_eq(r->shuffle_write_bytes, 60646996);
    ck_assert_int_eq(r->state, BL_RUN_FAILED);
    ck_assert_str_eq(r->why, "job 4 failed: Job aborted due to stage failure: Task 1 in stage 5.0 failed 4 times, most "
                             "recent failure: Lost task 1.3 in stage 5.0 (TID 20) (7a5c48b7798f executor driver): "
                             "org.apache.spark.api.python.PythonExcepti...");
    ck_assert_uint_eq(r->n_conf, 25);
    ck_assert_uint_eq(r->unknown_events, 69);
    got_clear(&g);
}
END_TEST

START_TEST(real_spark_3_5_rolling_logs_on_kubernetes) {
    char p[4096];
    if (!real_log(p, sizeof p, "eventlog_v2_spark-110be3a8424d4a2789cb88134418217b")) {
        BL_TEST_SKIP("no ../shared/datasets/spark-eventlogs: the real Spark logs cannot be read");
    }
    ck_assert(bl_spark_sniff(p));
    got g = {0};
    bl_error err;
    ck_assert_msg(read_log(p, &g, &err) == BL_OK, "%s", err.message);
    ck_assert_uint_eq(g.n, 1);
    const bl_run_record *r = g.r[0];
    ck_assert_str_eq(r->source, p);
    ck_assert_str_eq(r->app_id, "spark-110be3a8424d4a2789cb88134418217b");
    ck_assert_str_eq(r->attempt, "");
    ck_assert_str_eq(r->name, "NewYorkTaxiData_2025_06_27_00_24_44");
    ck_assert_str_eq(r->version, "3.5.3");
    ck_assert_str_eq(r->master, "k8s");
    ck_assert_str_eq(r->deploy_mode, "client");
    ck_assert_double_eq(r->start_ms, 1750983884577.0);
    ck_assert_double_eq(r->end_ms, 1750984188493.0);
    ck_assert_int_eq(r->executors, 4);
    ck_assert_int_eq(r->hosts, 4);
    ck_assert_int_eq(r->executor_cores, 1);
    ck_assert_double_eq(r->executor_memory_mb, 4096);
    ck_assert_int_eq(r->dynamic_allocation, 0);
    ck_assert_double_eq(r->input_bytes, 1984229200.0);
    ck_assert_double_eq(r->shuffle_read_bytes, 5387322083.0);
    ck_assert_double_eq(r->shuffle_write_bytes, 5387322083.0);
    ck_assert_str_eq(r->args, "s3a://sparksense-ai-spark-20250624175205897100000006/taxi-trip/input/ "
                              "s3a://sparksense-ai-spark-20250624175205897100000006/taxi-trip/output/");
    ck_assert_int_eq(r->state, BL_RUN_COMPLETE);
    ck_assert_uint_eq(r->n_conf, 77);
    ck_assert_uint_eq(r->unknown_events, 16);

    ck_assert_ptr_nonnull(real_log(p, sizeof p, "eventlog_v2_spark-bcec39f6201b42b9925124595baad260"));
    ck_assert_msg(read_log(p, &g, &err) == BL_OK, "%s", err.message);
    ck_assert_uint_eq(g.n, 1);
    r = g.r[0];
    ck_assert_str_eq(r->app_id, "spark-bcec39f6201b42b9925124595baad260");
    ck_assert_str_eq(r->name, "PythonPi");
    ck_assert_str_eq(r->version, "3.5.3");
    ck_assert_str_eq(r->master, "k8s");
    ck_assert_double_eq(r->start_ms, 1750896411168.0);
    ck_assert_double_eq(r->end_ms, 1750896418590.0);
    ck_assert_int_eq(r->executors, 1);
    ck_assert_int_eq(r->hosts, 1);
    ck_assert_int_eq(r->executor_cores, 1);
    ck_assert_double_eq(r->executor_memory_mb, 512);
    ck_assert_double_eq(r->input_bytes, 0); /* every task reported its metrics, all zero */
    ck_assert_double_eq(r->shuffle_read_bytes, 0);
    ck_assert_double_eq(r->shuffle_write_bytes, 0);
    ck_assert_str_eq(r->args, ""); /* pi.py without arguments */
    ck_assert_int_eq(r->state, BL_RUN_COMPLETE);
    ck_assert_uint_eq(r->n_conf, 56);
    ck_assert_uint_eq(r->unknown_events, 0);
    got_clear(&g);
}
END_TEST

START_TEST(real_spark_1_x_logs_of_dr_elephant) {
    char p[4096];
    if (!real_log(p, sizeof p, "dr-elephant_event_log_1")) {
        BL_TEST_SKIP("no ../shared/datasets/spark-eventlogs: the real Spark logs cannot be read");
    }
    ck_assert(bl_spark_sniff(p));
    got g = {0};
    bl_error err;
    ck_assert_msg(read_log(p, &g, &err) == BL_OK, "%s", err.message);
    ck_assert_uint_eq(g.n, 1);
    const bl_run_record *r = g.r[0];
    ck_assert_str_eq(r->app_id, "application_1457600942802_0093");
    ck_assert_str_eq(r->attempt, "1");
    ck_assert_str_eq(r->name, "PythonPi");
    ck_assert_str_eq(r->version, "1.5.1");
    ck_assert_str_eq(r->master, "");  /* no spark.master in the log */
    ck_assert_str_eq(r->deploy_mode, "client"); /* Spark's default: the log does not say */
    ck_assert_double_eq(r->start_ms, 1458126354336.0);
    ck_assert_double_eq(r->end_ms, 1458126409609.0);
    ck_assert_int_eq(r->executors, 2);
    ck_assert_int_eq(r->hosts, 1); /* both on ".hello.com" */
    ck_assert_int_eq(r->executor_cores, 2); /* no spark.executor.cores: the executors' Total Cores */
    ck_assert_double_eq(r->executor_memory_mb, 1024);
    ck_assert_int_eq(r->dynamic_allocation, 0);
    ck_assert(isnan(r->input_bytes) && isnan(r->shuffle_read_bytes) && isnan(r->shuffle_write_bytes));
    ck_assert_str_eq(r->args, "");
    ck_assert_int_eq(r->state, BL_RUN_COMPLETE);
    ck_assert_uint_eq(r->n_conf, 6);
    ck_assert_uint_eq(r->unknown_events, 0);

    ck_assert_ptr_nonnull(real_log(p, sizeof p, "dr-elephant_event_log_2"));
    ck_assert_msg(read_log(p, &g, &err) == BL_OK, "%s", err.message);
    ck_assert_uint_eq(g.n, 1);
    r = g.r[0];
    ck_assert_str_eq(r->app_id, "application_1");
    ck_assert_str_eq(r->attempt, "1");
    ck_assert_str_eq(r->name, "app");
    ck_assert_str_eq(r->version, "1.4.1");
    ck_assert_double_eq(r->start_ms, 1475761112578.0);
    ck_assert(isnan(r->end_ms));
    ck_assert_int_eq(r->executors, 0); /* only the driver's block manager */
    ck_assert_int_eq(r->hosts, 0);
    ck_assert_int_eq(r->executor_cores, -1);
    ck_assert_double_eq(r->executor_memory_mb, 1024);
    ck_assert(isnan(r->input_bytes));
    ck_assert_int_eq(r->state, BL_RUN_INCOMPLETE);
    ck_assert_str_eq(r->why, "the log ends before the application does");
    got_clear(&g);
}
END_TEST

/* ---- codecs ----------------------------------------------------------------------------------------- */

START_TEST(every_codec_gives_the_same_record_as_plain_text) {
    elg_buf log = {0};
    elg_small_log(&log);
    got plain = {0}, g = {0};
    assert_small_record(one_record("small.log", &log, &plain));
    const char *names[] = {"small.zstd", "small.zst", "small.lz4", "small.snappy", "SMALL.ZSTD"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        bl_run_record *r = one_record(names[i], &log, &g);
        assert_same_record(plain.r[0], r);
        ck_assert_uint_eq(g.n_notes, 0);
    }
    /* many small blocks and chunks (raw blocks among them), and concatenated frames and streams */
    char path[4096];
    bl_error err;
    const size_t half = log.n / 2;
    for (int v = 0; v < 6; v++) {
        elg_buf e = {0};
        const char *name = "x";
        switch (v) {
        case 0: elg_lz4(log.p, log.n, 64, &e); name = "blocks.lz4"; break;
        case 1: elg_lz4(log.p, half, 1000, &e); elg_lz4(log.p + half, log.n - half, 70000, &e); name = "two.lz4"; break;
        case 2: elg_snappy(log.p, log.n, 100, &e); name = "chunks.snappy"; break;
        case 3: elg_snappy(log.p, half, 300, &e); elg_snappy(log.p + half, log.n - half, 300, &e); name = "two.snappy"; break;
        case 4: elg_zstd(log.p, half, 0, &e); elg_zstd(log.p + half, log.n - half, 1, &e); name = "two.zstd"; break;
        default: elg_zstd(log.p, log.n, 0, &e); name = "nosum.zstd"; break;
        }
        elg_write_raw(tmp(path, sizeof path, name), e.p, e.n);
        ck_assert_msg(read_log(path, &g, &err) == BL_OK, "%s: %s", name, err.message);
        ck_assert_uint_eq(g.n, 1);
        assert_same_record(plain.r[0], g.r[0]);
        elg_free(&e);
    }
    got_clear(&plain);
    got_clear(&g);
    elg_free(&log);
}
END_TEST

/* Offsets where a snappy-java stream of b may end cleanly: after its header and after each chunk. */
static int snappy_boundary(const elg_buf *e, size_t cut) {
    size_t at = 16;
    if (cut == at) return 1;
    while (at + 4 <= e->n) {
        at += 4 + ((size_t)e->p[at] << 24 | (size_t)e->p[at + 1] << 16 | (size_t)e->p[at + 2] << 8 | e->p[at + 3]);
        if (cut == at) return 1;
    }
    return 0;
}

START_TEST(a_stream_cut_anywhere_is_an_error_naming_the_file_and_gives_no_record) {
    elg_buf log = {0};
    elg_small_log(&log);
    const char *names[] = {"cut.zstd", "cut.lz4", "cut.snappy"};
    got g = {0};
    char path[4096];
    for (size_t c = 0; c < 3; c++) {
        elg_buf e = {0};
        if (c == 0) elg_zstd(log.p, log.n, 1, &e);
        else if (c == 1) elg_lz4(log.p, log.n, 256, &e);
        else elg_snappy(log.p, log.n, 256, &e);
        tmp(path, sizeof path, names[c]);
        size_t errors = 0;
        char bad[800] = "";
        /* every offset near the start and the end, a sample between (each read costs file system time) */
        const size_t step = e.n / 60 + 1;
        for (size_t cut = 1; cut < e.n && !bad[0]; cut += cut < 40 || cut + 40 > e.n ? 1 : step) {
            elg_write_raw(path, e.p, cut);
            bl_error err;
            const bl_status st = read_log(path, &g, &err);
            if (c == 2 && snappy_boundary(&e, cut)) { /* a shorter stream, complete as far as snappy can tell */
                if (st != BL_OK && !(st == BL_EFORMAT && strstr(err.message, "no events")))
                    snprintf(bad, sizeof bad, "%s cut at %zu (a chunk's end): %s", names[c], cut, err.message);
                continue;
            }
            if (st != BL_EFORMAT || !strstr(err.message, path) || !strstr(err.message, "cut off") || g.n != 0)
                snprintf(bad, sizeof bad, "%s cut at %zu: status %d, %zu records, %s", names[c], cut, st, g.n,
                         err.message); /* an error naming the file, never half a record */
            errors++;
        }
        ck_assert_msg(!bad[0], "%s", bad);
        ck_assert_uint_gt(errors, 100);
        /* still being written: a cut is where the stream ends for now, and the record is incomplete (zstd
         * gives nothing of a block before its end: the log's first half in a frame of its own) */
        elg_buf w = {0};
        if (c == 0) {
            elg_zstd(log.p, log.n / 2, 1, &w);
            elg_zstd(log.p + log.n / 2, log.n - log.n / 2, 1, &w);
        } else elg_add(&w, e.p, e.n);
        char ip[4200];
        snprintf(ip, sizeof ip, "%s.inprogress", path);
        elg_write_raw(ip, w.p, c == 0 ? w.n - 20 : w.n * 2 / 3);
        bl_error err;
        ck_assert_msg(read_log(ip, &g, &err) == BL_OK, "%s", err.message);
        ck_assert_uint_eq(g.n, 1);
        ck_assert_int_eq(g.r[0]->state, BL_RUN_INCOMPLETE);
        ck_assert_str_eq(g.r[0]->why, "the log is still being written (.inprogress)");
        ck_assert_str_eq(g.r[0]->app_id, "app-1");
        if (c != 2) ck_assert_ptr_nonnull(note_with(&g, "still being written"));
        elg_free(&w);
        elg_free(&e);
    }
    got_clear(&g);
    elg_free(&log);
}
END_TEST

START_TEST(a_damaged_lz4_stream_is_refused_and_no_flip_crashes_any_codec) {
    elg_buf log = {0};
    elg_small_log(&log);
    got g = {0};
    char path[4096];
    bl_error err;
    /* a wrong checksum */
    elg_buf e = {0};
    elg_lz4(log.p, log.n, 512, &e);
    e.p[17] ^= 0x01;
    elg_write_raw(tmp(path, sizeof path, "sum.lz4"), e.p, e.n);
    ck_assert_int_eq(read_log(path, &g, &err), BL_EFORMAT);
    ck_assert_msg(strstr(err.message, path) && strstr(err.message, "checksum") &&
                  strstr(err.message, "before its first line"), "%s", err.message);
    ck_assert_uint_eq(g.n, 0);
    e.p[17] ^= 0x01;
    /* the second block's checksum: the message tells how far the lines went */
    const size_t second = 21 + (e.p[9] | (size_t)e.p[10] << 8);
    e.p[second + 17] ^= 0x01;
    elg_write_raw(path, e.p, e.n);
    ck_assert_int_eq(read_log(path, &g, &err), BL_EFORMAT);
    ck_assert_msg(strstr(err.message, "damaged after line "), "%s", err.message);
    e.p[second + 17] ^= 0x01;
    /* every byte flipped: lz4 notices, unless the flip leaves the decoded bytes as they were (a match
     * offset moved onto equal text, a token's level raised) */
    got plain = {0};
    one_record("flip-plain.log", &log, &plain);
    char bad[800] = "";
    size_t block = 0, next = 0; /* every byte of the block headers, every 8th of the data */
    for (size_t i = 0; i < e.n && !bad[0]; i++) {
        if (i == next) {
            block = i;
            next = i + 21 + (e.p[i + 9] | (size_t)e.p[i + 10] << 8 | (size_t)e.p[i + 11] << 16);
        }
        if (i >= block + 21 && i % 8) continue;
        for (unsigned m = 1; m <= 0x80; m <<= 7) {
            e.p[i] ^= (unsigned char)m;
            elg_write_raw(path, e.p, e.n);
            const bl_status st = read_log(path, &g, &err);
            e.p[i] ^= (unsigned char)m;
            const char *diff = st == BL_OK ? (g.n == 1 ? record_differs(plain.r[0], g.r[0]) : "records") : NULL;
            if (diff || (st != BL_OK && (st != BL_EFORMAT || !strstr(err.message, path) || g.n != 0)))
                snprintf(bad, sizeof bad, "lz4, byte %zu ^ 0x%x: status %d, %s", i, m, st, diff ? diff : err.message);
        }
    }
    ck_assert_msg(!bad[0], "%s", bad);
    elg_free(&e);
    /* zstd (with its checksum): the same; snappy-java has no checksum: flips never crash, errors name
     * the file */
    for (int c = 0; c < 2; c++) {
        elg_buf z = {0};
        if (c == 0) elg_zstd(log.p, log.n, 1, &z);
        else elg_snappy(log.p, log.n, 512, &z);
        tmp(path, sizeof path, c == 0 ? "flip.zstd" : "flip.snappy");
        size_t noticed = 0;
        for (size_t i = 0; i < z.n && !bad[0]; i += c == 0 ? 3 : 7) {
            z.p[i] ^= 0x04;
            elg_write_raw(path, z.p, z.n);
            const bl_status st = read_log(path, &g, &err);
            z.p[i] ^= 0x04;
            const char *diff = st == BL_OK && c == 0 ? (g.n == 1 ? record_differs(plain.r[0], g.r[0]) : "records") : NULL;
            if (st != BL_OK) noticed++;
            if (diff || (st != BL_OK && !strstr(err.message, path)))
                snprintf(bad, sizeof bad, "%.200s, byte %zu: status %d, %.500s", path, i, st, diff ? diff : err.message);
        }
        ck_assert_msg(!bad[0], "%s", bad);
        if (c == 0) ck_assert_uint_gt(noticed, z.n / 6);
        elg_free(&z);
    }
    got_clear(&plain);
    got_clear(&g);
    elg_free(&log);
}
END_TEST

START_TEST(empty_files_are_no_event_logs_and_lzf_is_refused_with_what_to_do) {
    got g = {0};
    char path[4096];
    bl_error err;
    const char *names[] = {"empty.log", "empty.zstd", "empty.lz4", "empty.snappy", "blank.log"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        tmp(path, sizeof path, names[i]);
        if (i == 4) elg_write_raw(path, "\n \n\n", 4);
        else elg_write_raw(path, "", 0);
        ck_assert_int_eq(read_log(path, &g, &err), BL_EFORMAT);
        ck_assert_msg(strstr(err.message, path) && strstr(err.message, "no events"), "%s", err.message);
        ck_assert_uint_eq(g.n, 0);
    }
    /* streams of nothing: an lz4 end block alone, a snappy header alone, an empty zstd frame */
    elg_buf e = {0};
    elg_lz4("", 0, 64, &e);
    elg_write_raw(tmp(path, sizeof path, "nothing.lz4"), e.p, e.n);
    ck_assert_int_eq(read_log(path, &g, &err), BL_EFORMAT);
    ck_assert_msg(strstr(err.message, "no events"), "%s", err.message);
    elg_free(&e);
    elg_snappy("", 0, 64, &e);
    elg_write_raw(tmp(path, sizeof path, "nothing.snappy"), e.p, e.n);
    ck_assert_int_eq(read_log(path, &g, &err), BL_EFORMAT);
    elg_free(&e);
    elg_zstd("", 0, 1, &e);
    elg_write_raw(tmp(path, sizeof path, "nothing.zstd"), e.p, e.n);
    ck_assert_int_eq(read_log(path, &g, &err), BL_EFORMAT);
    ck_assert_msg(strstr(err.message, "no events"), "%s", err.message);
    elg_free(&e);
    /* LZF: refused, saying what to do instead */
    elg_write_raw(tmp(path, sizeof path, "app.lzf"), "ZV\0\0", 4);
    ck_assert_int_eq(read_log(path, &g, &err), BL_EUNSUPPORTED);
    ck_assert_msg(strstr(err.message, path) && strstr(err.message, "LZF") &&
                  strstr(err.message, "spark.eventLog.compression.codec=zstd"), "%s", err.message);
    /* a missing file, a file that is no event log, an lz4 frame-format file named .lz4 */
    ck_assert_int_eq(read_log(tmp(path, sizeof path, "missing.log"), &g, &err), BL_EIO);
    ck_assert_msg(strstr(err.message, path), "%s", err.message);
    elg_write_raw(tmp(path, sizeof path, "runs.csv"), "a,b\n1,2\n", 8);
    ck_assert_int_eq(read_log(path, &g, &err), BL_EFORMAT);
    ck_assert_msg(strstr(err.message, "runs.csv:1: not a Spark event log"), "%s", err.message);
    const unsigned char frame[] = {0x04, 0x22, 0x4d, 0x18, 0x64, 0x40, 0xa7, 0, 0, 0, 0};
    elg_write_raw(tmp(path, sizeof path, "frame.lz4"), frame, sizeof frame);
    ck_assert_int_eq(read_log(path, &g, &err), BL_EFORMAT);
    ck_assert_msg(strstr(err.message, "LZ4Block"), "%s", err.message);
    got_clear(&g);
}
END_TEST

/* ---- what the events give --------------------------------------------------------------------------- */

START_TEST(a_small_log_gives_every_field) {
    elg_buf log = {0};
    elg_small_log(&log);
    got g = {0};
    assert_small_record(one_record("fields.log", &log, &g));
    char path[4096];
    ck_assert_str_eq(g.r[0]->source, tmp(path, sizeof path, "fields.log"));
    ck_assert_uint_eq(g.n_notes, 0);
    got_clear(&g);
    elg_free(&log);
}
END_TEST

/* Input read by a failed, killed or lost task attempt is read again by another: only successful
 * attempts count (retries must not change a job's data size); implausible byte counts are damage.
 * The same sums whether a line goes the fast way (its metrics' numbers alone) or is parsed whole
 * (a line with a mistyped metric is). */
START_TEST(only_successful_task_attempts_count_and_both_paths_agree) {
    elg_buf b = {0};
    elg_logstart(&b, "3.5.0");
    elg_appstart(&b, "t", "app-t", "1", 1000);
    elg_task_end(&b, 0, 100, 10, 1, 5);
    elg_printf(&b, "{\"Event\":\"SparkListenerTaskEnd\",\"Stage ID\":0,\"Task End Reason\":{\"Reason\":\"TaskKilled\","
                   "\"Kill Reason\":\"another attempt succeeded\"},\"Task Info\":{\"Task ID\":1},\"Task Metrics\":"
                   "{\"Input Metrics\":{\"Bytes Read\":1000000000},\"Shuffle Write Metrics\":{\"Shuffle Bytes Written\":7}}}\n");
    elg_printf(&b, "{\"Event\":\"SparkListenerTaskEnd\",\"Stage ID\":0,\"Task End Reason\":{\"Reason\":\"ExceptionFailure\"},"
                   "\"Task Metrics\":{\"Input Metrics\":{\"Bytes Read\":3}}}\n");
    elg_printf(&b, "{\"Event\":\"SparkListenerTaskEnd\",\"Task End Reason\":{\"Reason\":\"Success\"},\"Task Metrics\":"
                   "{\"Input Metrics\":{\"Bytes Read\":1e300},\"Shuffle Write Metrics\":{\"Shuffle Bytes Written\":2}}}\n");
    elg_printf(&b, "{\"Event\":\"SparkListenerTaskEnd\",\"Task End Reason\":{\"Reason\":\"Success\"},\"Task Metrics\":"
                   "{\"Input Metrics\":{\"Bytes Read\":-4},\"Shuffle Read Metrics\":{\"Remote Bytes Read\":20,"
                   "\"Local Bytes Read\":\"two\"}}}\n");
    /* the same success written with blanks and in another key order: parsed the fast way too */
    elg_printf(&b, "{\"Event\":\"SparkListenerTaskEnd\", \"Task Metrics\" : { \"Shuffle Read Metrics\" : "
                   "{ \"Local Bytes Read\" : 2, \"Remote Bytes Read\" : 3 }, \"Input Metrics\" : { \"Bytes Read\" : 50 } }, "
                   "\"Task End Reason\" : { \"Reason\" : \"Success\" } }\n");
    elg_append(&b, 9000);
    got g = {0};
    const bl_run_record *r = one_record("retries.log", &b, &g);
    ck_assert_double_eq(r->input_bytes, 150);       /* 100 + 50: killed, failed and implausible left out */
    ck_assert_double_eq(r->shuffle_read_bytes, 36); /* 11 + 20 + 5: a mistyped field alone is left out */
    ck_assert_double_eq(r->shuffle_write_bytes, 7); /* 5 + 2 */
    ck_assert_uint_eq(g.n_notes, 2);                /* the implausible input and the mistyped line */
    got_clear(&g);
    elg_free(&b);
}
END_TEST

START_TEST(executors_are_the_most_alive_at_once_and_hosts_those_at_that_moment) {
    elg_buf b = {0};
    elg_logstart(&b, "3.4.0");
    elg_env(&b, "\"spark.master\":\"yarn\",\"spark.dynamicAllocation.enabled\":\"true\"", NULL);
    elg_appstart(&b, "dyn", "app-2", NULL, 0);
    elg_exec_add(&b, "driver", "d", 4, 1);          /* never counted */
    elg_exec_add(&b, "1", "h1", 4, 2);
    elg_exec_add(&b, "2", "h1", 4, 3);
    elg_exec_add(&b, "3", "h2", 4, 4);              /* 3 alive on 2 hosts */
    elg_exec_del(&b, "1", 5);
    elg_exec_add(&b, "4", "h3", 4, 6);
    elg_exec_add(&b, "5", "h3", 4, 7);              /* 2,3,4,5: 4 alive on h1,h2,h3 — the peak */
    elg_exec_del(&b, "2", 8);
    elg_exec_del(&b, "3", 9);
    elg_exec_del(&b, "nobody", 9);                  /* never added: nothing to undo */
    elg_exec_add(&b, "6", "h4", 4, 10);
    elg_exec_add(&b, "7", "h5", 4, 11);             /* 4,5,6,7: 4 alive again, on 3 hosts, not a new peak */
    elg_exec_add(&b, "7", "h5", 4, 12);             /* told twice */
    elg_append(&b, 100);
    got g = {0};
    const bl_run_record *r = one_record("dyn.log", &b, &g);
    ck_assert_int_eq(r->executors, 4);
    ck_assert_int_eq(r->hosts, 3);
    ck_assert_int_eq(r->dynamic_allocation, 1);
    ck_assert_int_eq(r->executor_cores, 4); /* no spark.executor.cores: the executors' Total Cores */
    ck_assert_str_eq(r->attempt, "");
    ck_assert_str_eq(r->deploy_mode, "client");
    elg_free(&b);
    /* the same moves told only by block managers (Spark 1.x), properties as [key, value] pairs */
    elg_logstart(&b, "1.6.3");
    elg_printf(&b, "{\"Event\":\"SparkListenerEnvironmentUpdate\",\"Spark Properties\":[[\"spark.master\","
                   "\"spark://m:7077\"],[\"spark.executor.memory\",\"3g\"],[\"bad\",1]],\"System Properties\":"
                   "[[\"sun.java.command\",\"org.apache.spark.deploy.SparkSubmit --master spark://m:7077 a.jar x y\"]]}\n");
    elg_appstart(&b, "old", "app-20160101-0001", NULL, 0);
    elg_bm_add(&b, "<driver>", "d", 1);
    elg_bm_add(&b, "1", "h1", 2);
    elg_bm_add(&b, "2", "h1", 3);
    elg_bm_add(&b, "3", "h2", 4);
    elg_bm_del(&b, "1", 5);
    elg_bm_add(&b, "4", "h3", 6);
    elg_bm_add(&b, "5", "h3", 7);
    elg_bm_del(&b, "2", 8);
    elg_append(&b, 100);
    r = one_record("bm.log", &b, &g);
    ck_assert_int_eq(r->executors, 4);
    ck_assert_int_eq(r->hosts, 3);
    ck_assert_str_eq(r->master, "standalone");
    ck_assert_double_eq(r->executor_memory_mb, 3072);
    ck_assert_str_eq(r->args, "x y");
    ck_assert_uint_eq(r->n_conf, 2);
    ck_assert_ptr_nonnull(note_with(&g, "not a string: skipped"));
    got_clear(&g);
    elg_free(&b);
}
END_TEST

START_TEST(local_mode_is_one_executor_with_the_driver_cores_and_memory) {
    const char *masters[] = {"local[4]", "local[3,2]", "local[*]", "local"};
    const long cores[] = {8, 3, -1, 1};
    for (int i = 0; i < 4; i++) {
        elg_buf b = {0};
        char props[256];
        snprintf(props, sizeof props, "\"spark.master\":\"%s\",\"spark.driver.memory\":\"3g\",\"spark.executor.memory\":\"9g\"",
                 masters[i]);
        elg_logstart(&b, "3.3.0");
        elg_env(&b, props, "org.apache.spark.deploy.SparkSubmit --master local job.py 7");
        elg_appstart(&b, "loc", "local-1", NULL, 0);
        if (i == 0) elg_exec_add(&b, "driver", "me", 8, 1); /* the driver's own cores win over local[N] */
        elg_bm_add(&b, "driver", "me", 1);
        elg_append(&b, 10);
        got g = {0};
        const bl_run_record *r = one_record("local.log", &b, &g);
        ck_assert_str_eq(r->master, "local");
        ck_assert_int_eq(r->executors, 1);
        ck_assert_int_eq(r->hosts, 1);
        ck_assert_int_eq(r->executor_cores, cores[i]);
        ck_assert_double_eq(r->executor_memory_mb, 3072);
        ck_assert_str_eq(r->args, "7");
        got_clear(&g);
        elg_free(&b);
    }
    /* local-cluster: one machine, but real executors */
    elg_buf b = {0};
    elg_logstart(&b, "3.3.0");
    elg_env(&b, "\"spark.master\":\"local-cluster[2,1,1024]\"", NULL);
    elg_appstart(&b, "lc", "app-3", NULL, 0);
    elg_exec_add(&b, "0", "127.0.0.1", 1, 1);
    elg_exec_add(&b, "1", "127.0.0.1", 1, 1);
    elg_append(&b, 10);
    got g = {0};
    const bl_run_record *r = one_record("lc.log", &b, &g);
    ck_assert_str_eq(r->master, "local");
    ck_assert_int_eq(r->executors, 2);
    ck_assert_int_eq(r->hosts, 1);
    ck_assert_double_eq(r->executor_memory_mb, 1024); /* Spark's default */
    got_clear(&g);
    elg_free(&b);
}
END_TEST

START_TEST(a_failed_job_makes_the_run_failed_with_its_message_cut_short) {
    elg_buf b = {0};
    elg_logstart(&b, "3.5.0");
    elg_appstart(&b, "f", "app-f", "1", 0);
    elg_job_end(&b, 0, NULL);
    char msg[1200];
    strcpy(msg, "Job aborted\n\tdue to stage failure:   ");
    while (strlen(msg) < 900) strcat(msg, "d\xc3\xa9j\xc3\xa0 "); /* two-byte characters across the cut */
    elg_job_end(&b, 7, msg);
    elg_job_end(&b, 8, "a later failure");
    elg_job_end(&b, 9, NULL);
    elg_append(&b, 10);
    got g = {0};
    const bl_run_record *r = one_record("failed.log", &b, &g);
    ck_assert_int_eq(r->state, BL_RUN_FAILED);
    const char *head = "job 7 failed: Job aborted due to stage failure: d\xc3\xa9j\xc3\xa0 d";
    ck_assert_msg(strncmp(r->why, head, strlen(head)) == 0, "%s", r->why);
    const size_t n = strlen(r->why);
    ck_assert_uint_le(n, strlen("job 7 failed: ") + 200 + 3);
    ck_assert_uint_ge(n, strlen("job 7 failed: ") + 190);
    ck_assert_str_eq(r->why + n - 3, "...");
    ck_assert(bl_utf8_valid(r->why, n, NULL));
    ck_assert_ptr_null(strchr(r->why, '\n'));
    got_clear(&g);
    elg_free(&b);
    /* no message */
    elg_logstart(&b, "3.5.0");
    elg_appstart(&b, "f", "app-f", "1", 0);
    elg_printf(&b, "{\"Event\":\"SparkListenerJobEnd\",\"Job ID\":3,\"Job Result\":{\"Result\":\"JobFailed\"}}\n");
    elg_append(&b, 10);
    r = one_record("failed2.log", &b, &g);
    ck_assert_int_eq(r->state, BL_RUN_FAILED);
    ck_assert_str_eq(r->why, "job 3 failed");
    got_clear(&g);
    elg_free(&b);
}
END_TEST

START_TEST(unknown_events_are_counted_never_an_error) {
    elg_buf b = {0};
    elg_logstart(&b, "4.0.0");
    elg_appstart(&b, "u", "app-u", NULL, 0);
    elg_printf(&b, "{\"Event\":\"org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionStart\",\"executionId\":0}\n");
    elg_printf(&b, "{\"Event\" : \"SparkListenerSomethingFromSpark9\", \"x\": [1, 2]}\n");
    elg_printf(&b, "{\"x\":1,\"Event\":\"AnotherNewKind\"}\n"); /* not at the start: parsed whole */
    elg_printf(&b, "{\"Event\":\"SparkListenerTaskStart\",\"Task Info\":{}}\n");    /* known, not needed */
    elg_printf(&b, "{\"Event\":\"SparkListenerStageCompleted\",\"Stage Info\":{}}\n");
    elg_append(&b, 10);
    got g = {0};
    const bl_run_record *r = one_record("unknown.log", &b, &g);
    ck_assert_uint_eq(r->unknown_events, 3);
    ck_assert_int_eq(r->state, BL_RUN_COMPLETE);
    ck_assert_uint_eq(g.n_notes, 0);
    got_clear(&g);
    elg_free(&b);
}
END_TEST

START_TEST(missing_or_mistyped_fields_are_noted_with_file_and_line) {
    elg_buf b = {0};
    elg_logstart(&b, "3.5.0");                                                                         /* 1 */
    elg_printf(&b, "{\"Event\":\"SparkListenerEnvironmentUpdate\",\"Spark Properties\":\"oops\"}\n");    /* 2 */
    elg_printf(&b, "{\"Event\":\"SparkListenerApplicationStart\",\"App Name\":7,\"App ID\":\"a\","
                   "\"Timestamp\":\"yesterday\"}\n");                                                  /* 3 */
    elg_printf(&b, "{\"Event\":\"SparkListenerExecutorAdded\",\"Executor Info\":{\"Host\":\"h\"}}\n");  /* 4 */
    elg_printf(&b, "{\"Event\":\"SparkListenerExecutorAdded\",\"Executor ID\":\"1\"}\n");               /* 5 */
    elg_printf(&b, "{\"Event\":\"SparkListenerExecutorAdded\",\"Executor ID\":\"2\",\"Executor Info\":{}}\n"); /* 6 */
    elg_printf(&b, "{\"Event\":\"SparkListenerTaskEnd\",\"Task Metrics\":{\"Input Metrics\":{\"Bytes Read\":\"x\"},"
                   "\"Shuffle Write Metrics\":{\"Shuffle Bytes Written\":5}}}\n");                     /* 7 */
    elg_printf(&b, "{\"Event\":\"SparkListenerTaskEnd\",\"Task Metrics\":null}\n");                   /* 8 */
    elg_printf(&b, "{\"Event\":\"SparkListenerJobEnd\",\"Job ID\":1}\n");                              /* 9 */
    elg_printf(&b, "{\"Event\":\"SparkListenerJobEnd\",\"Job ID\":2,\"Job Result\":{\"Result\":\"JobMaybe\"}}\n"); /* 10 */
    elg_printf(&b, "[1,2,3]\n");                                                                       /* 11 */
    elg_printf(&b, "{\"Event\":\"SparkListenerLogStart\",\"Spark Version\":3}\n");                    /* 12 */
    elg_printf(&b, "{\"Event\":\"SparkListenerBlockManagerRemoved\"}\n");                              /* 13 */
    elg_append(&b, 10);                                                                                /* 14 */
    got g = {0};
    const bl_run_record *r = one_record("fields-bad.log", &b, &g);
    char path[4096];
    tmp(path, sizeof path, "fields-bad.log");
    const struct { size_t line; const char *what; } want[] = {
        {2, "\"Spark Properties\" is neither an object nor an array"},
        {3, "with a mistyped \"App Name\""},
        {3, "with a mistyped \"Timestamp\""},
        {4, "without \"Executor ID\""},
        {5, "without \"Executor Info\""},
        {6, "without \"Host\": counted on an unknown host"},
        {7, "mistyped task metrics"},
        {9, "without \"Job Result\""},
        {10, "unknown result \"JobMaybe\""},
        {11, "not an event"},
        {12, "mistyped \"Spark Version\""},
        {13, "without \"Block Manager ID\""},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        char needle[4300];
        snprintf(needle, sizeof needle, "%s:%zu: ", path, want[i].line);
        int found = 0;
        for (size_t k = 0; k < g.n_notes; k++) found |= strstr(g.notes[k], needle) && strstr(g.notes[k], want[i].what);
        ck_assert_msg(found, "no note \"%s\" at line %zu", want[i].what, want[i].line);
    }
    ck_assert_str_eq(r->name, "");
    ck_assert_str_eq(r->app_id, "a");
    ck_assert_str_eq(r->version, "3.5.0");
    ck_assert(isnan(r->start_ms));
    ck_assert_int_eq(r->state, BL_RUN_INCOMPLETE);
    ck_assert_str_eq(r->why, "the application start has no time stamp");
    ck_assert_int_eq(r->executors, 1); /* "2" on an unknown host */
    ck_assert(isnan(r->input_bytes));
    ck_assert_double_eq(r->shuffle_write_bytes, 5);
    got_clear(&g);
    elg_free(&b);
}
END_TEST

START_TEST(damaged_lines_are_skipped_and_noted) {
    elg_buf b = {0};
    elg_logstart(&b, "3.5.0");
    elg_appstart(&b, "d", "app-d", NULL, 0);
    elg_task_end(&b, 0, 100, 0, 0, 0);
    /* invalid UTF-8 inside a task's line: not JSON, skipped */
    elg_printf(&b, "{\"Event\":\"SparkListenerTaskEnd\",\"Task Info\":{\"Host\":\"\xff\xfe\"},\"Task Metrics\":"
                   "{\"Input Metrics\":{\"Bytes Read\":1000}}}\n");
    elg_printf(&b, "{\"Event\":\"SparkListenerTaskEnd\",\"Task Metrics\":{\"Input Metr\n"); /* cut mid-line */
    elg_printf(&b, "\r\n   \n");
    elg_append(&b, 10);
    elg_printf(&b, "{\"Event\":\"SparkListenerTaskEnd\",\"Task Metrics\":{\"Input Metrics\":{\"Bytes"); /* cut, last */
    got g = {0};
    const bl_run_record *r = one_record("damaged.log", &b, &g);
    ck_assert_double_eq(r->input_bytes, 100);
    ck_assert_int_eq(r->state, BL_RUN_COMPLETE);
    char path[4096], needle[4200];
    tmp(path, sizeof path, "damaged.log");
    snprintf(needle, sizeof needle, "%s:4: not JSON", path);
    ck_assert_ptr_nonnull(note_with(&g, needle));
    snprintf(needle, sizeof needle, "%s:5: not JSON", path);
    ck_assert_ptr_nonnull(note_with(&g, needle));
    snprintf(needle, sizeof needle, "%s:9: the last line is cut off", path);
    ck_assert_ptr_nonnull(note_with(&g, needle));
    ck_assert_uint_eq(g.n_notes, 3);
    got_clear(&g);
    elg_free(&b);
    /* a log cut before its end event: incomplete */
    elg_logstart(&b, "3.5.0");
    elg_appstart(&b, "d", "app-d", NULL, 0);
    elg_printf(&b, "{\"Event\":\"SparkListenerApplicationEnd\",\"Timest");
    r = one_record("cut-end.log", &b, &g);
    ck_assert_int_eq(r->state, BL_RUN_INCOMPLETE);
    ck_assert_str_eq(r->why, "the log ends before the application does");
    got_clear(&g);
    elg_free(&b);
    /* the first line is what tells an event log: invalid UTF-8 there refuses the file */
    elg_printf(&b, "{\"Event\":\"SparkListenerLogStart\",\"Spark Version\":\"\xc3\x28\"}\n");
    elg_appstart(&b, "d", "app-d", NULL, 0);
    write_log(tmp(path, sizeof path, "bad-first.log"), &b);
    bl_error err;
    ck_assert_int_eq(read_log(path, &g, &err), BL_EFORMAT);
    snprintf(needle, sizeof needle, "%s:1: not a Spark event log", path);
    ck_assert_msg(strstr(err.message, needle), "%s", err.message);
    elg_free(&b);
    /* many damaged lines: the notes stop at a bound and say how many more there were */
    elg_logstart(&b, "3.5.0");
    elg_appstart(&b, "d", "app-d", NULL, 0);
    for (int i = 0; i < 80; i++) elg_printf(&b, "{broken %d\n", i);
    elg_append(&b, 10);
    r = one_record("many.log", &b, &g);
    ck_assert_int_eq(r->state, BL_RUN_COMPLETE);
    ck_assert_uint_eq(g.n_notes, 51);
    ck_assert_ptr_nonnull(note_with(&g, "30 more notes about this log not listed"));
    got_clear(&g);
    elg_free(&b);
}
END_TEST

START_TEST(an_end_before_the_start_is_incomplete_for_clock_skew) {
    elg_buf b = {0};
    elg_logstart(&b, "3.5.0");
    elg_appstart(&b, "s", "app-s", NULL, 5000);
    elg_append(&b, 4000);
    got g = {0};
    const bl_run_record *r = one_record("skew.log", &b, &g);
    ck_assert_int_eq(r->state, BL_RUN_INCOMPLETE);
    ck_assert_str_eq(r->why, "the application ends before it starts (clock skew?)");
    ck_assert_double_eq(r->start_ms, 5000);
    ck_assert_double_eq(r->end_ms, 4000);
    ck_assert_ptr_nonnull(note_with(&g, "clock skew"));
    got_clear(&g);
    elg_free(&b);
}
END_TEST

START_TEST(two_application_starts_in_one_log_are_two_attempts) {
    /* one after the other's end: each its own */
    elg_buf b = {0};
    elg_logstart(&b, "2.4.8");
    elg_env(&b, "\"spark.master\":\"yarn\",\"spark.executor.memory\":\"1g\"", NULL);
    elg_appstart(&b, "a", "app-9", "1", 0);
    elg_exec_add(&b, "1", "h1", 1, 1);
    elg_task_end(&b, 0, 10, 0, 0, 0);
    elg_append(&b, 100);
    elg_exec_del(&b, "1", 101); /* after the end: still the first attempt's */
    elg_logstart(&b, "2.4.8");
    elg_env(&b, "\"spark.master\":\"yarn\",\"spark.executor.memory\":\"2g\"", NULL);
    elg_appstart(&b, "a", "app-9", "2", 200);
    elg_exec_add(&b, "1", "h1", 1, 201);
    elg_exec_add(&b, "2", "h2", 1, 202);
    elg_task_end(&b, 0, 20, 0, 0, 0);
    elg_append(&b, 300);
    char path[4096];
    write_log(tmp(path, sizeof path, "two.log"), &b);
    got g = {0};
    bl_error err;
    ck_assert_msg(read_log(path, &g, &err) == BL_OK, "%s", err.message);
    ck_assert_uint_eq(g.n, 2);
    ck_assert_str_eq(g.r[0]->attempt, "1");
    ck_assert_str_eq(g.r[1]->attempt, "2");
    ck_assert_double_eq(g.r[0]->executor_memory_mb, 1024);
    ck_assert_double_eq(g.r[1]->executor_memory_mb, 2048);
    ck_assert_int_eq(g.r[0]->executors, 1);
    ck_assert_int_eq(g.r[1]->executors, 2);
    ck_assert_double_eq(g.r[0]->input_bytes, 10);
    ck_assert_double_eq(g.r[1]->input_bytes, 20);
    ck_assert_double_eq(g.r[1]->start_ms, 200);
    ck_assert_int_eq(g.r[0]->state, BL_RUN_COMPLETE);
    ck_assert_int_eq(g.r[1]->state, BL_RUN_COMPLETE);
    elg_free(&b);
    /* a second start before the first ends: the first incomplete, the second keeps the configuration */
    elg_logstart(&b, "2.4.8");
    elg_env(&b, "\"spark.master\":\"yarn\",\"spark.executor.memory\":\"1g\"", "com.acme.Main x");
    elg_appstart(&b, "a", "app-9", "1", 0);
    elg_appstart(&b, "a", "app-9", "2", 50);
    elg_append(&b, 300);
    elg_env(&b, "\"spark.master\":\"yarn\"", NULL); /* after the last end, no start: ignored */
    write_log(tmp(path, sizeof path, "relogged.log"), &b);
    ck_assert_msg(read_log(path, &g, &err) == BL_OK, "%s", err.message);
    ck_assert_uint_eq(g.n, 2);
    ck_assert_int_eq(g.r[0]->state, BL_RUN_INCOMPLETE);
    ck_assert_str_eq(g.r[0]->why, "another attempt starts in the log before this one ends");
    ck_assert_int_eq(g.r[1]->state, BL_RUN_COMPLETE);
    ck_assert_str_eq(g.r[1]->version, "2.4.8");
    ck_assert_double_eq(g.r[1]->executor_memory_mb, 1024);
    ck_assert_str_eq(g.r[1]->args, "x");
    ck_assert_ptr_nonnull(note_with(&g, "a second SparkListenerApplicationStart"));
    ck_assert_ptr_nonnull(note_with(&g, "events after an attempt's end without a SparkListenerApplicationStart"));
    got_clear(&g);
    elg_free(&b);
    /* more starts than any real log holds: refused */
    elg_logstart(&b, "2.4.8");
    for (int i = 0; i < 70; i++) elg_appstart(&b, "a", "app-9", NULL, i);
    write_log(tmp(path, sizeof path, "starts.log"), &b);
    ck_assert_int_eq(read_log(path, &g, &err), BL_EFORMAT);
    ck_assert_msg(strstr(err.message, "starts.log:66: more than 64 application attempts"), "%s", err.message);
    ck_assert_uint_eq(g.n, 0);
    elg_free(&b);
    /* a log without any start: nothing to import, said so */
    elg_logstart(&b, "2.4.8");
    elg_env(&b, "\"spark.master\":\"yarn\"", NULL);
    write_log(tmp(path, sizeof path, "nostart.log"), &b);
    ck_assert_msg(read_log(path, &g, &err) == BL_OK, "%s", err.message);
    ck_assert_uint_eq(g.n, 0);
    ck_assert_ptr_nonnull(note_with(&g, "no attempt to import"));
    got_clear(&g);
    elg_free(&b);
}
END_TEST

/* The record of a one-attempt log with these Spark properties and this command. */
static bl_run_record *with_props(const char *props, const char *command, got *g) {
    elg_buf b = {0};
    elg_logstart(&b, "3.5.0");
    elg_env(&b, props, command);
    elg_appstart(&b, "p", "app-p", NULL, 0);
    elg_append(&b, 10);
    bl_run_record *r = one_record("props.log", &b, g);
    elg_free(&b);
    return r;
}

START_TEST(memory_sizes_follow_sparks_units) {
    const struct { const char *v; double mb; } cases[] = {
        {"512m", 512}, {"4g", 4096}, {"4G", 4096}, {"2048", 2048}, {"1t", 1048576}, {"1500k", 1},
        {"3gb", 3072}, {"1073741824b", 1024}, {"1.5g", NAN}, {"", NAN}, {"lots", NAN}, {"4 g", NAN}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char props[200];
        snprintf(props, sizeof props, "\"spark.master\":\"yarn\",\"spark.executor.memory\":\"%s\"", cases[i].v);
        got g = {0};
        const bl_run_record *r = with_props(props, NULL, &g);
        ck_assert_msg(same_num(r->executor_memory_mb, cases[i].mb), "\"%s\": %g", cases[i].v, r->executor_memory_mb);
        if (isnan(cases[i].mb)) ck_assert_ptr_nonnull(note_with(&g, "is no JVM memory size"));
        got_clear(&g);
    }
}
END_TEST

START_TEST(master_deploy_mode_and_dynamic_allocation_come_from_the_properties) {
    const struct { const char *props; const char *master, *mode; int dyn; } cases[] = {
        {"\"spark.master\":\"yarn\"", "yarn", "client", 0},
        {"\"spark.master\":\"yarn-cluster\"", "yarn", "cluster", 0},
        {"\"spark.master\":\"yarn-client\",\"spark.dynamicAllocation.enabled\":\"false\"", "yarn", "client", 0},
        {"\"spark.master\":\"k8s://https://10.0.0.1:443\",\"spark.submit.deployMode\":\"cluster\"", "k8s", "cluster", 0},
        {"\"spark.master\":\"spark://m:7077\",\"spark.dynamicAllocation.enabled\":\"true\"", "standalone", "client", 1},
        {"\"spark.master\":\"mesos://zk://z:2181/mesos\"", "mesos", "client", 0},
        {"\"spark.master\":\"local[2]\"", "local", "client", 0},
        {"\"spark.master\":\"nomad:x\",\"spark.dynamicAllocation.enabled\":\"maybe\"", "", "client", -1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        got g = {0};
        const bl_run_record *r = with_props(cases[i].props, NULL, &g);
        ck_assert_str_eq(r->master, cases[i].master);
        ck_assert_str_eq(r->deploy_mode, cases[i].mode);
        ck_assert_int_eq(r->dynamic_allocation, cases[i].dyn);
        if (!cases[i].master[0]) ck_assert_ptr_nonnull(note_with(&g, "no cluster manager known here"));
        got_clear(&g);
    }
    /* no environment at all: unknown, not Spark's defaults */
    elg_buf b = {0};
    elg_logstart(&b, "3.5.0");
    elg_appstart(&b, "p", "app-p", NULL, 0);
    elg_append(&b, 10);
    got g = {0};
    const bl_run_record *r = one_record("noenv.log", &b, &g);
    ck_assert_str_eq(r->master, "");
    ck_assert_str_eq(r->deploy_mode, "");
    ck_assert_int_eq(r->dynamic_allocation, -1);
    ck_assert(isnan(r->executor_memory_mb));
    ck_assert_int_eq(r->executors, -1);
    ck_assert_int_eq(r->hosts, -1);
    got_clear(&g);
    elg_free(&b);
}
END_TEST

START_TEST(arguments_are_the_words_after_the_application) {
    const struct { const char *cmd, *args; } cases[] = {
        {"org.apache.spark.deploy.SparkSubmit --master yarn --class com.acme.Grep app.jar in out 3", "in out 3"},
        {"org.apache.spark.deploy.SparkSubmit --master yarn --deploy-mode client app.jar", ""},
        {"org.apache.spark.deploy.SparkSubmit --conf spark.x=1 -c spark.y=2 --name pi pi.py 10", "10"},
        {"org.apache.spark.deploy.SparkSubmit --master=local[2] --verbose --supervise app.jar -x --y z", "-x --y z"},
        {"org.apache.spark.deploy.SparkSubmit --deploy-mode client --properties-file /p --class "
         "org.apache.spark.deploy.PythonRunner s3a://b/job.py s3a://b/in/ s3a://b/out/", "s3a://b/in/ s3a://b/out/"},
        /* --name "Spark shell": its quotes are lost, so "shell" reads as the application */
        {"org.apache.spark.deploy.SparkSubmit --class org.apache.spark.repl.Main --name Spark shell spark-shell", "spark-shell"},
        {"org.apache.spark.deploy.yarn.ApplicationMaster --class 'com.acme.Main' --jar file:/a.jar --arg 'in' --arg "
         "'100' --properties-file /c/__spark_conf__.properties", "in 100"},
        {"org.apache.spark.deploy.worker.DriverWrapper spark://Worker@w:7078 /work/a.jar com.acme.Main 5 x", "5 x"},
        {"com.acme.Main  a   b", "a b"},
        {"com.acme.Main", ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        got g = {0};
        const bl_run_record *r = with_props("\"spark.master\":\"yarn\"", cases[i].cmd, &g);
        ck_assert_msg(strcmp(r->args, cases[i].args) == 0, "%s -> \"%s\"", cases[i].cmd, r->args);
        got_clear(&g);
    }
    /* no command at all: no arguments */
    got g = {0};
    ck_assert_str_eq(with_props("\"spark.master\":\"yarn\"", NULL, &g)->args, "");
    got_clear(&g);
}
END_TEST

/* ---- rolling logs ----------------------------------------------------------------------------------- */

/* A rolling log's folder under the temporary folder, emptied first. */
static const char *rolling_dir(char *buf, size_t cap, const char *name) {
    tmp(buf, cap, name);
    mkdir(buf, 0700);
    DIR *d = opendir(buf);
    ck_assert_ptr_nonnull(d);
    for (struct dirent *e; (e = readdir(d));) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        char p[4400];
        snprintf(p, sizeof p, "%s/%s", buf, e->d_name);
        ck_assert_int_eq(remove(p), 0);
    }
    closedir(d);
    return buf;
}

static void rolling_part(const char *dir, const char *name, const elg_buf *b) {
    char p[4300];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    write_log(p, b);
}

START_TEST(rolling_logs_are_read_in_part_order_as_one_stream) {
    char dir[4096];
    rolling_dir(dir, sizeof dir, "eventlog_v2_app-7_1");
    elg_buf p1 = {0}, p2 = {0}, p10 = {0};
    elg_logstart(&p1, "3.5.0");
    elg_env(&p1, "\"spark.master\":\"yarn\",\"spark.executor.memory\":\"1g\"", NULL);
    elg_appstart(&p1, "roll", "app-7", "1", 0);
    elg_exec_add(&p1, "1", "h1", 2, 1);
    elg_task_end(&p1, 0, 5, 0, 0, 0);
    elg_env(&p2, "\"spark.master\":\"yarn\",\"spark.executor.memory\":\"4g\"", NULL); /* addJar's update */
    elg_exec_add(&p2, "2", "h2", 2, 2);
    elg_task_end(&p2, 1, 6, 0, 0, 0);
    elg_task_end(&p10, 2, 7, 0, 0, 0);
    elg_append(&p10, 100);
    rolling_part(dir, "events_1_app-7_1.zstd", &p1);
    rolling_part(dir, "events_2_app-7_1.zstd", &p2);
    rolling_part(dir, "events_10_app-7_1.zstd", &p10); /* after 2, not between 1 and 2 */
    elg_buf none = {0};
    rolling_part(dir, "appstatus_app-7_1", &none);
    ck_assert(bl_spark_sniff(dir));
    got g = {0};
    bl_error err;
    ck_assert_msg(read_log(dir, &g, &err) == BL_OK, "%s", err.message);
    ck_assert_uint_eq(g.n, 1);
    const bl_run_record *r = g.r[0];
    ck_assert_str_eq(r->source, dir);
    ck_assert_str_eq(r->app_id, "app-7");
    ck_assert_str_eq(r->attempt, "1");
    ck_assert_double_eq(r->executor_memory_mb, 4096);
    ck_assert_int_eq(r->executors, 2);
    ck_assert_double_eq(r->input_bytes, 18);
    ck_assert_int_eq(r->state, BL_RUN_COMPLETE);
    ck_assert_uint_eq(g.n_notes, 0);
    /* still running: the appstatus says so; the last part may be cut mid-block */
    char p[4300];
    snprintf(p, sizeof p, "%s/appstatus_app-7_1", dir);
    remove(p);
    rolling_part(dir, "appstatus_app-7_1.inprogress", &none);
    elg_buf e = {0};
    elg_lz4(p10.p, p10.n, 64, &e);
    snprintf(p, sizeof p, "%s/events_10_app-7_1.zstd", dir);
    remove(p);
    snprintf(p, sizeof p, "%s/events_10_app-7_1.lz4", dir);
    elg_write_raw(p, e.p, e.n - 30);
    ck_assert_msg(read_log(dir, &g, &err) == BL_OK, "%s", err.message);
    ck_assert_uint_eq(g.n, 1);
    ck_assert_int_eq(g.r[0]->state, BL_RUN_INCOMPLETE);
    ck_assert_str_eq(g.r[0]->why, "the log is still being written (.inprogress)");
    ck_assert_ptr_nonnull(note_with(&g, "still being written"));
    /* a part before the last cut off: damage, whatever the appstatus */
    snprintf(p, sizeof p, "%s/events_2_app-7_1.zstd", dir);
    elg_buf z = {0};
    elg_zstd(p2.p, p2.n, 1, &z);
    elg_write_raw(p, z.p, z.n - 5);
    ck_assert_int_eq(read_log(dir, &g, &err), BL_EFORMAT);
    ck_assert_msg(strstr(err.message, p) && strstr(err.message, "cut off"), "%s", err.message);
    ck_assert_uint_eq(g.n, 0);
    /* no appstatus: noted, the events decide */
    rolling_dir(dir, sizeof dir, "eventlog_v2_app-7_1");
    rolling_part(dir, "events_1_app-7_1", &p1);
    rolling_part(dir, "events_2_app-7_1", &p10);
    rolling_part(dir, "events_x_app-7_1", &p10);
    rolling_part(dir, ".events_1_app-7_1.crc", &none);
    ck_assert_msg(read_log(dir, &g, &err) == BL_OK, "%s", err.message);
    ck_assert_int_eq(g.r[0]->state, BL_RUN_COMPLETE);
    ck_assert_ptr_nonnull(note_with(&g, "no appstatus_ file"));
    ck_assert_ptr_nonnull(note_with(&g, "is no events_<n>_<app> part"));
    /* a folder without parts */
    rolling_dir(dir, sizeof dir, "eventlog_v2_app-8");
    ck_assert_int_eq(read_log(dir, &g, &err), BL_EFORMAT);
    ck_assert_msg(strstr(err.message, "without events_<n>_<app> parts"), "%s", err.message);
    got_clear(&g);
    elg_free(&p1);
    elg_free(&p2);
    elg_free(&p10);
    elg_free(&e);
    elg_free(&z);
}
END_TEST

START_TEST(a_compacted_rolling_log_counts_block_managers_and_has_no_totals) {
    char dir[4096];
    rolling_dir(dir, sizeof dir, "eventlog_v2_app-c");
    elg_buf old = {0}, c = {0}, p3 = {0}, none = {0};
    elg_logstart(&old, "3.5.0"); /* replaced by the compacted part 2 */
    elg_appstart(&old, "stale", "app-c", NULL, 0);
    /* what compaction keeps of parts 1-2: start, environment, block managers, live executors */
    elg_logstart(&c, "3.5.0");
    elg_env(&c, "\"spark.master\":\"yarn\"", NULL);
    elg_appstart(&c, "comp", "app-c", NULL, 0);
    elg_bm_add(&c, "1", "h1", 1);
    elg_bm_add(&c, "2", "h2", 2);
    elg_bm_add(&c, "3", "h3", 3);
    elg_exec_add(&c, "3", "h3", 1, 3);
    elg_task_end(&p3, 9, 50, 0, 0, 0);
    elg_append(&p3, 100);
    rolling_part(dir, "events_1_app-c", &old);
    rolling_part(dir, "events_2_app-c.compact", &c);
    rolling_part(dir, "events_3_app-c", &p3);
    rolling_part(dir, "appstatus_app-c", &none);
    got g = {0};
    bl_error err;
    ck_assert_msg(read_log(dir, &g, &err) == BL_OK, "%s", err.message);
    ck_assert_uint_eq(g.n, 1);
    ck_assert_str_eq(g.r[0]->name, "comp");
    ck_assert_int_eq(g.r[0]->executors, 3);
    ck_assert_int_eq(g.r[0]->hosts, 3);
    ck_assert(isnan(g.r[0]->input_bytes) && isnan(g.r[0]->shuffle_read_bytes));
    ck_assert_ptr_nonnull(note_with(&g, "compacted rolling log"));
    got_clear(&g);
    elg_free(&old);
    elg_free(&c);
    elg_free(&p3);
}
END_TEST

/* ---- sniffing and the line reader ------------------------------------------------------------------- */

/* A note about a value names the line of the event that carries it: the end's for an end before the
 * start (naming the start's line too), the environment's for spark.master and the memory, in the part
 * of a rolling log that holds it, and for a re-logged attempt the environment it took them from. */
START_TEST(notes_name_the_event_that_carries_the_value) {
    elg_buf b = {0};
    elg_logstart(&b, "3.5.0");                                                                       /* 1 */
    elg_env(&b, "\"spark.master\":\"nomad:x\",\"spark.executor.memory\":\"lots\"", NULL);              /* 2 */
    elg_appstart(&b, "s", "app-s", NULL, 5000);                                                      /* 3 */
    elg_task_end(&b, 0, 10, 0, 0, 0);                                                                /* 4 */
    elg_append(&b, -1);                                                                              /* 5 */
    got g = {0};
    const bl_run_record *r = one_record("where.log", &b, &g);
    ck_assert_str_eq(r->why, "the application ends before it starts (clock skew?)");
    char path[4096], needle[9000];
    tmp(path, sizeof path, "where.log");
    snprintf(needle, sizeof needle, "%s:5: the application ends (SparkListenerApplicationEnd, Timestamp -1) before it "
             "starts (SparkListenerApplicationStart on line 3, Timestamp 5000)", path);
    ck_assert_msg(note_with(&g, needle), "no \"%s\" in %s", needle, g.n_notes ? g.notes[0] : "no notes");
    snprintf(needle, sizeof needle, "%s:2: spark.master \"nomad:x\"", path);
    ck_assert_msg(note_with(&g, needle), "no \"%s\"", needle);
    snprintf(needle, sizeof needle, "%s:2: spark.executor.memory \"lots\"", path);
    ck_assert_msg(note_with(&g, needle), "no \"%s\"", needle);
    got_clear(&g);
    elg_free(&b);
    /* a re-logged attempt: its configuration, and so its notes, from the first attempt's environment */
    elg_logstart(&b, "3.5.0");                                                                       /* 1 */
    elg_env(&b, "\"spark.master\":\"yarn\",\"spark.executor.memory\":\"lots\"", NULL);                 /* 2 */
    elg_appstart(&b, "s", "app-s", "1", 0);                                                          /* 3 */
    elg_appstart(&b, "s", "app-s", "2", 10);                                                         /* 4 */
    elg_append(&b, 20);                                                                              /* 5 */
    write_log(tmp(path, sizeof path, "where-relogged.log"), &b);
    bl_error err;
    ck_assert_msg(read_log(path, &g, &err) == BL_OK, "%s", err.message);
    ck_assert_uint_eq(g.n, 2);
    snprintf(needle, sizeof needle, "%s:2: spark.executor.memory \"lots\"", path);
    size_t at2 = 0;
    for (size_t i = 0; i < g.n_notes; i++) at2 += strstr(g.notes[i], needle) != NULL;
    ck_assert_msg(at2 == 2, "%zu notes \"%s\"; first: %s", at2, needle, g.n_notes ? g.notes[0] : "none");
    got_clear(&g);
    elg_free(&b);
    /* a rolling log: each note names the part that holds the event */
    char dir[4096];
    rolling_dir(dir, sizeof dir, "eventlog_v2_app-8_1");
    elg_buf p1 = {0}, p2 = {0}, none = {0};
    elg_logstart(&p1, "3.5.0");                                                                      /* 1 */
    elg_env(&p1, "\"spark.master\":\"nomad:x\"", NULL);                                                /* 2 */
    elg_appstart(&p1, "roll", "app-8", "1", 5000);                                                   /* 3 */
    elg_env(&p2, "\"spark.master\":\"nomad:x\",\"spark.executor.memory\":\"lots\"", NULL);             /* 1 */
    elg_append(&p2, 4000);                                                                           /* 2 */
    rolling_part(dir, "events_1_app-8_1", &p1);
    rolling_part(dir, "events_2_app-8_1", &p2);
    rolling_part(dir, "appstatus_app-8_1", &none);
    ck_assert_msg(read_log(dir, &g, &err) == BL_OK, "%s", err.message);
    ck_assert_uint_eq(g.n, 1);
    snprintf(needle, sizeof needle, "%s/events_2_app-8_1:2: the application ends (SparkListenerApplicationEnd, "
             "Timestamp 4000) before it starts (SparkListenerApplicationStart on %s/events_1_app-8_1:3, Timestamp 5000)",
             dir, dir);
    ck_assert_msg(note_with(&g, needle), "no \"%s\" in %s", needle, g.n_notes ? g.notes[0] : "no notes");
    snprintf(needle, sizeof needle, "%s/events_2_app-8_1:1: spark.master \"nomad:x\"", dir); /* the later value */
    ck_assert_msg(note_with(&g, needle), "no \"%s\"", needle);
    snprintf(needle, sizeof needle, "%s/events_2_app-8_1:1: spark.executor.memory \"lots\"", dir);
    ck_assert_msg(note_with(&g, needle), "no \"%s\"", needle);
    got_clear(&g);
    elg_free(&p1);
    elg_free(&p2);
    /* a second start in a later part than the first: the first's part named with its line */
    rolling_dir(dir, sizeof dir, "eventlog_v2_app-9_1");
    elg_logstart(&p1, "3.5.0");                                                                      /* 1 */
    elg_appstart(&p1, "roll", "app-9", "1", 0);                                                      /* 2 */
    elg_appstart(&p2, "roll", "app-9", "2", 10);                                                     /* 1 */
    elg_append(&p2, 20);                                                                             /* 2 */
    rolling_part(dir, "events_1_app-9_1", &p1);
    rolling_part(dir, "events_2_app-9_1", &p2);
    rolling_part(dir, "appstatus_app-9_1", &none);
    ck_assert_msg(read_log(dir, &g, &err) == BL_OK, "%s", err.message);
    ck_assert_uint_eq(g.n, 2);
    snprintf(needle, sizeof needle, "%s/events_2_app-9_1:1: a second SparkListenerApplicationStart before the first "
             "attempt's end (from %s/events_1_app-9_1:2)", dir, dir);
    ck_assert_msg(note_with(&g, needle), "no \"%s\" in %s", needle, g.n_notes ? g.notes[0] : "no notes");
    got_clear(&g);
    elg_free(&p1);
    elg_free(&p2);
}
END_TEST

START_TEST(sniff_knows_event_logs_by_name_or_first_line) {
    char path[4096];
    elg_buf b = {0};
    elg_small_log(&b);
    write_log(tmp(path, sizeof path, "sniff-plain"), &b);
    ck_assert_int_eq(bl_spark_sniff(path), 1);
    write_str(tmp(path, sizeof path, "sniff-spaced"), "  {\"Event\" : \"SparkListenerLogStart\"}\n");
    ck_assert_int_eq(bl_spark_sniff(path), 1);
    write_str(tmp(path, sizeof path, "sniff.json"), "{\"jid\":\"x\",\"Event\":\"Other\"}\n");
    ck_assert_int_eq(bl_spark_sniff(path), 0);
    write_str(tmp(path, sizeof path, "sniff.csv"), "a,b\n");
    ck_assert_int_eq(bl_spark_sniff(path), 0);
    write_str(tmp(path, sizeof path, "sniff-second"), "x\n{\"Event\":\"SparkListenerLogStart\"}\n");
    ck_assert_int_eq(bl_spark_sniff(path), 0); /* the first line decides */
    elg_write_raw(tmp(path, sizeof path, "app.zstd"), "", 0);
    ck_assert_int_eq(bl_spark_sniff(path), 1);
    elg_write_raw(tmp(path, sizeof path, "app.lz4.inprogress"), "", 0);
    ck_assert_int_eq(bl_spark_sniff(path), 1);
    char dir[4096];
    rolling_dir(dir, sizeof dir, "eventlog_v2_sniffed");
    ck_assert_int_eq(bl_spark_sniff(dir), 1);
    strcat(dir, "/");
    ck_assert_int_eq(bl_spark_sniff(dir), 1);
    ck_assert_int_eq(bl_spark_sniff(bl_test_tmpdir()), 0);
    ck_assert_int_eq(bl_spark_sniff(tmp(path, sizeof path, "no-such-file")), 0);
    elg_free(&b);
}
END_TEST

START_TEST(the_line_reader_skips_a_line_past_its_bound_and_keeps_its_buffer_at_the_longest_line) {
    char path[4096];
    elg_buf b = {0};
    elg_add(&b, "short\r\n", 7);
    for (int i = 0; i < 500; i++) elg_add(&b, "x", 1);
    elg_add(&b, "\nafter\nlast", 11);
    for (int c = 0; c < 3; c++) {
        const char *name = c == 0 ? "lines.log" : c == 1 ? "lines.lz4" : "lines.snappy";
        write_log(tmp(path, sizeof path, name), &b);
        bl_lines *l;
        bl_error err;
        ck_assert_int_eq(bl_lines_open(path, 100, 0, &l, &err), BL_OK);
        const char *line;
        size_t len;
        unsigned flags;
        ck_assert_int_eq(bl_lines_next(l, &line, &len, &flags, &err), BL_OK);
        ck_assert_str_eq(line, "short");
        ck_assert_uint_eq(flags, 0);
        ck_assert_int_eq(bl_lines_next(l, &line, &len, &flags, &err), BL_OK);
        ck_assert_uint_eq(flags, BL_LINE_TOO_LONG);
        ck_assert_uint_eq(len, 0);
        ck_assert_uint_eq(bl_lines_number(l), 2);
        ck_assert_int_eq(bl_lines_next(l, &line, &len, &flags, &err), BL_OK);
        ck_assert_str_eq(line, "after");
        ck_assert_int_eq(bl_lines_next(l, &line, &len, &flags, &err), BL_OK);
        ck_assert_str_eq(line, "last");
        ck_assert_uint_eq(flags, BL_LINE_UNTERMINATED);
        ck_assert_int_eq(bl_lines_next(l, &line, &len, &flags, &err), BL_OK);
        ck_assert_ptr_null(line);
        ck_assert_uint_le(bl_lines_buffer_peak(l), 101);
        bl_lines_close(l);
    }
    ck_assert_int_eq(bl_codec_for_name("a/events_1_x.zstd.compact", NULL, NULL), BL_CODEC_ZSTD);
    int ip = 0, cp = 0;
    ck_assert_int_eq(bl_codec_for_name("x.snappy.inprogress", &ip, &cp), BL_CODEC_SNAPPY);
    ck_assert(ip == 1 && cp == 0);
    ck_assert_int_eq(bl_codec_for_name("dir.lz4/app", NULL, NULL), BL_CODEC_PLAIN);
    elg_free(&b);
}
END_TEST

START_TEST(a_sink_that_fails_stops_the_reading) {
    elg_buf b = {0};
    elg_small_log(&b);
    elg_appstart(&b, "again", "app-2", NULL, 70000); /* two records: the first refused */
    elg_append(&b, 80000);
    char path[4096];
    write_log(tmp(path, sizeof path, "refused.log"), &b);
    got g = {0};
    g.fail_with = BL_EIO;
    bl_import_sink sink = {&g, grab, grab_note};
    bl_error err;
    ck_assert_int_eq(bl_spark_read_log(path, &sink, &err), BL_EIO);
    ck_assert_str_eq(err.message, "sink refused");
    got_clear(&g);
    elg_free(&b);
}
END_TEST

/* ---- a large log in flat memory --------------------------------------------------------------------- */

#define BIG_TASKS 200000

/* Writes a zstd log of n task ends (one input byte each) streaming, never holding it whole. */
static void write_big_log(const char *path, long n) {
    FILE *f = fopen(path, "wb");
    ZSTD_CCtx *c = ZSTD_createCCtx();
    ck_assert(f && c);
    unsigned char out[65536];
    elg_buf b = {0};
    elg_logstart(&b, "3.5.0");
    elg_appstart(&b, "big", "app-big", NULL, 0);
    elg_exec_add(&b, "1", "h", 8, 1);
    for (long t = 0; t <= n; t++) {
        if (t == n) elg_append(&b, 1e6);
        else elg_printf(&b, "{\"Event\":\"SparkListenerTaskEnd\",\"Stage ID\":1,\"Task Info\":{\"Task ID\":%ld},"
                            "\"Task Metrics\":{\"Input Metrics\":{\"Bytes Read\":1},\"Shuffle Read Metrics\":{"
                            "\"Remote Bytes Read\":2,\"Local Bytes Read\":1},\"Shuffle Write Metrics\":{"
                            "\"Shuffle Bytes Written\":3}}}\n", t);
        if (b.n < 65536 && t < n) continue;
        ZSTD_inBuffer in = {b.p, b.n, 0};
        const ZSTD_EndDirective mode = t == n ? ZSTD_e_end : ZSTD_e_continue;
        size_t left;
        do {
            ZSTD_outBuffer o = {out, sizeof out, 0};
            left = ZSTD_compressStream2(c, &o, &in, mode);
            ck_assert(!ZSTD_isError(left));
            ck_assert_uint_eq(fwrite(out, 1, o.pos, f), o.pos);
        } while (mode == ZSTD_e_end ? left != 0 : in.pos < in.size);
        b.n = 0;
    }
    ck_assert_int_eq(fclose(f), 0);
    ZSTD_freeCCtx(c);
    elg_free(&b);
}

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif

#ifndef UNDER_ASAN /* AddressSanitizer keeps freed memory in quarantine: no bound on the RSS there */
/* Peak memory growth (KiB) of reading path in a child process; -1 if the reading failed. */
static long child_read_kib(const char *path) {
    int fd[2];
    ck_assert_int_eq(pipe(fd), 0);
    const pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        struct rusage before, after;
        getrusage(RUSAGE_SELF, &before);
        got g = {0};
        bl_error err;
        long kib = -1;
        if (read_log(path, &g, &err) == BL_OK && g.n == 1 && g.r[0]->input_bytes == BIG_TASKS) {
            getrusage(RUSAGE_SELF, &after);
            kib = after.ru_maxrss - before.ru_maxrss;
        }
        if (write(fd[1], &kib, sizeof kib) != (ssize_t)sizeof kib) _exit(1);
        _exit(0);
    }
    close(fd[1]);
    long kib = -2;
    ck_assert_int_eq(read(fd[0], &kib, sizeof kib), (ssize_t)sizeof kib);
    close(fd[0]);
    int status;
    waitpid(pid, &status, 0);
    return kib;
}
#endif

START_TEST(a_large_log_is_read_in_memory_that_stays_flat) {
    char path[4096];
    write_big_log(tmp(path, sizeof path, "big.zstd"), BIG_TASKS);
    /* the line buffer follows the longest line (a few hundred bytes), not the ~40 MB of text */
    bl_lines *l;
    bl_error err;
    ck_assert_int_eq(bl_lines_open(path, 0, 0, &l, &err), BL_OK);
    const char *line;
    size_t len, longest = 0;
    unsigned flags;
    while (bl_lines_next(l, &line, &len, &flags, &err) == BL_OK && line)
        if (len > longest) longest = len;
    ck_assert_uint_eq(bl_lines_number(l), BIG_TASKS + 4);
    ck_assert_uint_le(bl_lines_buffer_peak(l), 4096);
    ck_assert_uint_lt(longest, 4096);
    bl_lines_close(l);
#ifndef UNDER_ASAN
    const long kib = child_read_kib(path);
    ck_assert_msg(kib >= 0, "the large log was not read right");
    ck_assert_msg(kib < 16 * 1024, "reading the large log grew memory by %ld KiB", kib);
#endif
}
END_TEST

Suite *bl_test_suite(void) {
    Suite *s = suite_create("import_spark");
    TCase *real = tcase_create("real");
    tcase_add_test(real, real_spark_4_1_zstd_logs_give_two_attempts_the_first_never_ended);
    tcase_add_test(real, real_spark_3_5_rolling_logs_on_kubernetes);
    tcase_add_test(real, real_spark_1_x_logs_of_dr_elephant);
    suite_add_tcase(s, real);
    TCase *codec = tcase_create("codecs");
    tcase_add_test(codec, every_codec_gives_the_same_record_as_plain_text);
    tcase_add_test(codec, a_stream_cut_anywhere_is_an_error_naming_the_file_and_gives_no_record);
    tcase_add_test(codec, a_damaged_lz4_stream_is_refused_and_no_flip_crashes_any_codec);
    tcase_add_test(codec, empty_files_are_no_event_logs_and_lzf_is_refused_with_what_to_do);
    tcase_add_test(codec, the_line_reader_skips_a_line_past_its_bound_and_keeps_its_buffer_at_the_longest_line);
    suite_add_tcase(s, codec);
    TCase *ev = tcase_create("events");
    tcase_add_test(ev, a_small_log_gives_every_field);
    tcase_add_test(ev, only_successful_task_attempts_count_and_both_paths_agree);
    tcase_add_test(ev, executors_are_the_most_alive_at_once_and_hosts_those_at_that_moment);
    tcase_add_test(ev, local_mode_is_one_executor_with_the_driver_cores_and_memory);
    tcase_add_test(ev, a_failed_job_makes_the_run_failed_with_its_message_cut_short);
    tcase_add_test(ev, unknown_events_are_counted_never_an_error);
    tcase_add_test(ev, missing_or_mistyped_fields_are_noted_with_file_and_line);
    tcase_add_test(ev, damaged_lines_are_skipped_and_noted);
    tcase_add_test(ev, an_end_before_the_start_is_incomplete_for_clock_skew);
    tcase_add_test(ev, two_application_starts_in_one_log_are_two_attempts);
    tcase_add_test(ev, memory_sizes_follow_sparks_units);
    tcase_add_test(ev, master_deploy_mode_and_dynamic_allocation_come_from_the_properties);
    tcase_add_test(ev, arguments_are_the_words_after_the_application);
    tcase_add_test(ev, a_sink_that_fails_stops_the_reading);
    suite_add_tcase(s, ev);
    TCase *roll = tcase_create("rolling");
    tcase_add_test(roll, rolling_logs_are_read_in_part_order_as_one_stream);
    tcase_add_test(roll, a_compacted_rolling_log_counts_block_managers_and_has_no_totals);
    tcase_add_test(roll, sniff_knows_event_logs_by_name_or_first_line);
    tcase_add_test(roll, notes_name_the_event_that_carries_the_value);
    suite_add_tcase(s, roll);
    TCase *big = tcase_create("large");
    tcase_add_test(big, a_large_log_is_read_in_memory_that_stays_flat);
    suite_add_tcase(s, big);
    return s;
}
