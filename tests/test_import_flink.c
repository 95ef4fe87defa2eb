/* test_import_flink.c — the Flink reader (src/import/flink.c): archives written here the way Flink's
 * FsJobArchivist writes them (every REST answer as JSON text, with the answers' own field names), saved
 * /jobs/<jobid> and /jobs/overview answers, and every kind of damage it must refuse or note.
 * With BELLAMY_FLINK_SEEDS=DIR the files written are also copied to DIR (the fuzz target's seeds,
 * tests/fuzz/corpus_flink/). */
#include "testutil.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/utf8.h"
#include "import/import.h"

#define JID "5c9a1d7e2b3f4a6c8d0e1f2a3b4c5d6e"
#define V_SRC1 "bc764cd8ddf7a0cff126f51c16239658"
#define V_SRC2 "0a448493b4782967b150582570326227"
#define V_JOIN "ea632d67b7d595e5b851708ae9ad79d6"
#define V_SINK "6d2677a0ecc3fd8df0b72ec675edf8f4"
#define T0 1700000000000LL /* the job's start, epoch ms */

/* ---- what a reader gave -------------------------------------------------------------------------- */

typedef struct got {
    bl_run_record *rec[8];
    size_t n;
    char notes[8][600];
    size_t n_notes;
    size_t refuse_at; /* the sink refuses its record number refuse_at (1-based; 0: never) */
} got;

static bl_status take(void *ctx, bl_run_record *r, bl_error *err) {
    got *g = ctx;
    if (g->refuse_at && g->n + 1 == g->refuse_at) { /* as a sink whose disk is full */
        bl_run_record_free(r);
        err->status = BL_EIO;
        snprintf(err->message, sizeof err->message, "full");
        return BL_EIO;
    }
    ck_assert_uint_lt(g->n, 8);
    g->rec[g->n++] = r;
    return BL_OK;
}

static void noted(void *ctx, const char *file, size_t line, const char *what) {
    got *g = ctx;
    ck_assert_uint_eq(line, 0);
    if (g->n_notes < 8) snprintf(g->notes[g->n_notes++], sizeof g->notes[0], "%s: %s", file, what);
}

static void got_free(got *g) {
    for (size_t i = 0; i < g->n; i++) bl_run_record_free(g->rec[i]);
    memset(g, 0, sizeof *g);
}

static bl_status read_into(const char *path, got *g, bl_error *err) {
    const bl_import_sink sink = {g, take, noted};
    return bl_flink_read(path, &sink, err);
}

/* ---- files as Flink writes them ------------------------------------------------------------------ */

static const char *tmp_file(const char *name) {
    static char buf[4096];
    snprintf(buf, sizeof buf, "%s/%s", bl_test_tmpdir(), name);
    return buf;
}

static void write_bytes(const char *path, const void *p, size_t n) {
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(p, 1, n, f), n);
    ck_assert_int_eq(fclose(f), 0);
}

/* Whether what is saved is also a fuzz seed: the variants of one archive that differ in one field
 * (join_archive_with) are not, to keep the corpus small. */
static int seeding = 1;

/* Writes text as tmp/NAME (and as a fuzz seed); returns the path. */
static const char *save_text(const char *name, const char *text) {
    const char *seeds = getenv("BELLAMY_FLINK_SEEDS");
    if (seeds && *seeds && seeding) {
        char p[4096];
        snprintf(p, sizeof p, "%s/%s", seeds, name);
        write_bytes(p, text, strlen(text));
    }
    const char *path = tmp_file(name);
    write_bytes(path, text, strlen(text));
    return path;
}

/* Writes j (stolen) as tmp/NAME the way Flink's Jackson does (compact UTF-8); returns the path. */
static const char *save(const char *name, json_t *j) {
    ck_assert_ptr_nonnull(j);
    char *text = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
    ck_assert_ptr_nonnull(text);
    const char *path = save_text(name, text);
    free(text);
    json_decref(j);
    return path;
}

static json_t *archive_new(void) { return json_pack("{s:[]}", "archive"); }

/* Adds answer (stolen) as an entry: its path and its JSON as text, as FsJobArchivist writes them. */
static void archive_add(json_t *a, const char *path, json_t *answer) {
    ck_assert_ptr_nonnull(answer);
    char *text = json_dumps(answer, JSON_COMPACT | JSON_PRESERVE_ORDER);
    ck_assert_ptr_nonnull(text);
    ck_assert_int_eq(json_array_append_new(json_object_get(a, "archive"),
                                           json_pack("{s:s, s:s}", "path", path, "json", text)), 0);
    free(text);
    json_decref(answer);
}

/* A JobVertexDetailsInfo of a job's details (Flink 1.17+ fields). */
static json_t *vertex(const char *id, const char *name, int par, json_int_t read_bytes, json_int_t write_bytes,
                      const char *status, json_int_t start, json_int_t end) {
    return json_pack("{s:s, s:s, s:s, s:i, s:i, s:s, s:I, s:I, s:I,"
                     " s:{s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i},"
                     " s:{s:I, s:b, s:I, s:b, s:I, s:b, s:I, s:b, s:I, s:I, s:f}}",
                     "id", id, "slotSharingGroupId", "a7d3b5c1e9f24680b1c3d5e7f9a0b2c4", "name", name,
                     "maxParallelism", 128, "parallelism", par, "status", status, "start-time", start,
                     "end-time", end, "duration", end < 0 ? (json_int_t)-1 : end - start, "tasks", "CREATED", 0,
                     "SCHEDULED", 0, "DEPLOYING", 0, "RUNNING", strcmp(status, "RUNNING") ? 0 : par, "FINISHED",
                     strcmp(status, "FINISHED") ? 0 : par, "CANCELING", 0, "CANCELED",
                     strcmp(status, "CANCELED") ? 0 : par, "FAILED", strcmp(status, "FAILED") ? 0 : par,
                     "RECONCILING", 0, "INITIALIZING", 0, "metrics", "read-bytes", read_bytes,
                     "read-bytes-complete", 1, "write-bytes", write_bytes, "write-bytes-complete", 1,
                     "read-records", read_bytes / 100, "read-records-complete", 1, "write-records",
                     write_bytes / 100, "write-records-complete", 1, "accumulated-backpressured-time",
                     (json_int_t)0, "accumulated-idle-time", (json_int_t)12, "accumulated-busy-time", 4711.0);
}

/* A plan node (JobPlanInfo.Plan.Node): inputs NULL for a source, else the ids it reads. */
static json_t *plan_node(const char *id, int par, const char *desc, const char *in1, const char *in2) {
    json_t *n = json_pack("{s:s, s:i, s:s, s:s, s:s, s:{}}", "id", id, "parallelism", par, "operator", "",
                          "operator_strategy", "", "description", desc, "optimizer_properties");
    if (in1) {
        json_t *ins = json_array();
        const char *in[2] = {in1, in2};
        for (int i = 0; i < 2 && in[i]; i++)
            json_array_append_new(ins, json_pack("{s:i, s:s, s:s, s:s}", "num", i, "id", in[i], "ship_strategy",
                                                 "HASH", "exchange", "blocking"));
        json_object_set_new(n, "inputs", ins);
    }
    return n;
}

/* A JobDetailsInfo: the answer of /jobs/<jobid>. end -1: not ended. */
static json_t *details(const char *jid, const char *name, const char *state, json_int_t start, json_int_t end,
                       json_t *vertices, json_t *plan) {
    const json_int_t now = T0 + 3600000;
    json_t *j = json_pack("{s:s, s:s, s:b, s:s, s:s, s:I, s:I, s:I, s:i, s:I, s:{s:I, s:I, s:I}, s:o,"
                          " s:{s:i, s:i}, s:i}",
                          "jid", jid, "name", name, "isStoppable", 0, "state", state, "job-type", "BATCH",
                          "start-time", start, "end-time", end, "duration", (end < 0 ? now : end) - start,
                          "maxParallelism", -1, "now", now, "timestamps", "INITIALIZING", start, "CREATED",
                          start + 3, "RUNNING", start + 120, "vertices", vertices, "status-counts", "FINISHED",
                          (int)json_array_size(vertices), "RUNNING", 0, "pending-operators", 0);
    if (plan) json_object_set_new(j, "plan", plan);
    return j;
}

/* The join job's four vertices and plan: two sources (read-bytes 1000 and 2000) into a join, a sink. */
static json_t *join_vertices(const char *status, json_int_t end) {
    return json_pack("[o, o, o, o]",
                     vertex(V_SRC1, "Source: lineitem[1] -> Calc[2]", 4, 1000, 500000, status, T0 + 200, end),
                     vertex(V_SRC2, "Source: orders[3]", 2, 2000, 300000, status, T0 + 210, end),
                     vertex(V_JOIN, "HashJoin[4] -> Calc[5]", 8, 800000, 4000, status, T0 + 900, end),
                     vertex(V_SINK, "Sink: Collect table sink", 1, 4000, 0, status, T0 + 950, end));
}

static json_t *join_plan(void) {
    return json_pack("{s:s, s:s, s:s, s:[o, o, o, o]}", "jid", JID, "name", "tpch-q3", "type", "BATCH", "nodes",
                     plan_node(V_SRC1, 4, "Source: lineitem[1] -&gt; Calc[2]", NULL, NULL),
                     plan_node(V_SRC2, 2, "Source: orders[3]", NULL, NULL),
                     plan_node(V_JOIN, 8, "HashJoin[4] -&gt; Calc[5]", V_SRC1, V_SRC2),
                     plan_node(V_SINK, 1, "Sink: Collect table sink", V_JOIN, NULL));
}

/* A JobVertexTaskManagersInfo whose subtasks ran on the task managers named (Flink 1.13+: endpoint and
 * taskmanager-id; NULL id: "(unassigned)"). */
static json_t *vertex_tms(const char *vid, const char *name, const char *const *tm_ids, size_t n) {
    json_t *list = json_array();
    for (size_t i = 0; i < n; i++) {
        char endpoint[64];
        snprintf(endpoint, sizeof endpoint, "%s", tm_ids[i] ? tm_ids[i] : "(unassigned)");
        char *colon = strchr(endpoint, '_');
        if (colon) *colon = ':';
        json_array_append_new(list, json_pack("{s:s, s:s, s:I, s:I, s:I, s:{s:I, s:b, s:I, s:b}, s:{s:i},"
                                              " s:s}",
                                              "endpoint", endpoint, "status", "FINISHED", "start-time", T0 + 200,
                                              "end-time", T0 + 90000, "duration", (json_int_t)89800, "metrics",
                                              "read-bytes", (json_int_t)10, "read-bytes-complete", 1, "write-bytes",
                                              (json_int_t)20, "write-bytes-complete", 1, "status-counts",
                                              "FINISHED", 1, "taskmanager-id",
                                              tm_ids[i] ? tm_ids[i] : "(unassigned)"));
    }
    return json_pack("{s:s, s:s, s:I, s:o}", "id", vid, "name", name, "now", T0 + 3600000, "taskmanagers", list);
}

/* The configuration answers of a job: /jobs/<id>/config (JobConfigInfo) and the cluster's
 * /jobs/<id>/jobmanager/config. */
static json_t *job_config(void) {
    return json_pack("{s:s, s:s, s:{s:s, s:s, s:i, s:b, s:{s:s, s:s}}}", "jid", JID, "name", "tpch-q3",
                     "execution-config", "execution-mode", "PIPELINED", "restart-strategy",
                     "Restart deactivated.", "job-parallelism", 8, "object-reuse-mode", 0, "user-config", "input",
                     "hdfs:///tpch/sf100/lineitem", "iterations", "10");
}

static json_t *jm_config(void) {
    return json_pack("[{s:s, s:s}, {s:s, s:s}, {s:s, s:s}, {s:s, s:s}]", "key", "taskmanager.numberOfTaskSlots",
                     "value", "4", "key", "taskmanager.memory.process.size", "value", "4096m", "key",
                     "$internal.application.program-args", "value",
                     "--input;hdfs:///tpch/sf100/lineitem;--iterations;10",
                     "key", "execution.target", "value", "yarn-application");
}

static json_t *dashboard(const char *version) {
    return json_pack("{s:i, s:s, s:i, s:s, s:s, s:{s:b, s:b, s:b, s:b}}", "refresh-interval", 10000,
                     "timezone-name", "Coordinated Universal Time", "timezone-offset", 0, "flink-version", version,
                     "flink-revision", "a8c8b1c @ 2024-01-17T12:10:15+01:00", "features", "web-submit", 0,
                     "web-cancel", 0, "web-rescale", 0, "web-history", 1);
}

static json_t *overview_job(const char *jid, const char *name, const char *state, json_int_t start, json_int_t end) {
    return json_pack("{s:s, s:s, s:s, s:I, s:I, s:I, s:I, s:{s:i, s:i, s:i}}", "jid", jid, "name", name, "state",
                     state, "start-time", start, "end-time", end, "duration", end < 0 ? (json_int_t)5000 : end - start,
                     "last-modification", end < 0 ? start : end, "tasks", "total", 15, "running", 0, "finished", 15);
}

/* A whole archive of the finished join job, with every answer Flink archives for it. */
static json_t *join_archive(void) {
    json_t *a = archive_new();
    json_t *d = details(JID, "tpch-q3", "FINISHED", T0, T0 + 95000, join_vertices("FINISHED", T0 + 94000),
                        join_plan());
    json_object_set_new(d, "future-field", json_string("added by a newer Flink"));
    json_object_set_new(json_array_get(json_object_get(d, "vertices"), 2), "future-vertex-field", json_true());
    archive_add(a, "/jobs/overview",
                json_pack("{s:[o]}", "jobs", overview_job(JID, "tpch-q3", "FINISHED", T0, T0 + 95000)));
    archive_add(a, "/jobs/" JID, d);
    archive_add(a, "/jobs/" JID "/config", job_config());
    archive_add(a, "/jobs/" JID "/exceptions",
                json_pack("{s:n, s:n, s:[], s:b, s:{s:[], s:b}}", "root-exception", "timestamp", "all-exceptions",
                          "truncated", 0, "exceptionHistory", "entries", "truncated", 0));
    archive_add(a, "/jobs/" JID "/accumulators",
                json_pack("{s:[], s:[], s:b}", "job-accumulators", "user-task-accumulators",
                          "serialized-user-task-accumulators", 0));
    archive_add(a, "/jobs/" JID "/plan", json_pack("{s:o}", "plan", join_plan()));
    archive_add(a, "/jobs/" JID "/jobmanager/config", jm_config());
    archive_add(a, "/jobs/" JID "/checkpoints", json_pack("{s:{s:i}}", "counts", "restored", 0));
    const char *const tm1[] = {"container_01_000002", "container_01_000003"};
    const char *const tm2[] = {"container_01_000003", "container_01_000004"};
    const char *const tm3[] = {"container_01_000002", "container_01_000003", "container_01_000004", NULL};
    const char *const tm4[] = {"container_01_000004"};
    archive_add(a, "/jobs/" JID "/vertices/" V_SRC1, json_pack("{s:s, s:i}", "id", V_SRC1, "parallelism", 4));
    archive_add(a, "/jobs/" JID "/vertices/" V_SRC1 "/taskmanagers", vertex_tms(V_SRC1, "Source: lineitem", tm1, 2));
    archive_add(a, "/jobs/" JID "/vertices/" V_SRC1 "/subtasktimes", json_pack("{s:[]}", "subtasks"));
    archive_add(a, "/jobs/" JID "/vertices/" V_SRC1 "/subtasks/0/attempts/0", json_pack("{s:i}", "subtask", 0));
    archive_add(a, "/jobs/" JID "/vertices/" V_SRC2 "/taskmanagers", vertex_tms(V_SRC2, "Source: orders", tm2, 2));
    archive_add(a, "/jobs/" JID "/vertices/" V_JOIN "/taskmanagers", vertex_tms(V_JOIN, "HashJoin", tm3, 4));
    archive_add(a, "/jobs/" JID "/vertices/" V_SINK "/taskmanagers", vertex_tms(V_SINK, "Sink", tm4, 1));
    archive_add(a, "/applications/app-1", json_pack("{s:s}", "id", "app-1"));
    archive_add(a, "/config", dashboard("1.18.1"));
    return a;
}

/* ---- the records --------------------------------------------------------------------------------- */

START_TEST(archive_of_finished_job_fills_every_field) {
    const char *path = save("finished.archive", join_archive());
    got g = {0};
    bl_error err;
    ck_assert_int_eq(read_into(path, &g, &err), BL_OK);
    ck_assert_uint_eq(g.n, 1);
    ck_assert_uint_eq(g.n_notes, 0);
    const bl_run_record *r = g.rec[0];
    ck_assert_str_eq(r->source, path);
    ck_assert_str_eq(r->engine, "flink");
    ck_assert_str_eq(r->app_id, JID);
    ck_assert_str_eq(r->attempt, "");
    ck_assert_str_eq(r->name, "tpch-q3");
    ck_assert_str_eq(r->version, "1.18.1");
    ck_assert_str_eq(r->master, "");
    ck_assert_str_eq(r->deploy_mode, "");
    ck_assert_double_eq(r->start_ms, (double)T0);
    ck_assert_double_eq(r->end_ms, (double)(T0 + 95000));
    ck_assert_int_eq(r->hosts, 3);          /* container _02, _03, _04; "(unassigned)" ran nothing */
    ck_assert_int_eq(r->executors, 8);      /* the join's parallelism */
    ck_assert_int_eq(r->dynamic_allocation, -1);
    ck_assert_int_eq(r->executor_cores, 4); /* taskmanager.numberOfTaskSlots */
    ck_assert_double_eq(r->executor_memory_mb, 4096.0);
    ck_assert_double_eq(r->input_bytes, 3000.0); /* the two sources' read-bytes, not the join's */
    ck_assert(isnan(r->shuffle_read_bytes) && isnan(r->shuffle_write_bytes));
    ck_assert_str_eq(r->args, "--input hdfs:///tpch/sf100/lineitem --iterations 10");
    ck_assert_int_eq(r->state, BL_RUN_COMPLETE);
    ck_assert_str_eq(r->why, "");
    /* the cluster's configuration, the execution config's fields, the job's parameters */
    ck_assert_uint_eq(r->n_conf, 10);
    ck_assert_str_eq(bl_run_record_get(r, "taskmanager.numberOfTaskSlots"), "4");
    ck_assert_str_eq(bl_run_record_get(r, "taskmanager.memory.process.size"), "4096m");
    ck_assert_str_eq(bl_run_record_get(r, "execution.target"), "yarn-application");
    ck_assert_str_eq(bl_run_record_get(r, "$internal.application.program-args"),
                     "--input;hdfs:///tpch/sf100/lineitem;--iterations;10");
    ck_assert_str_eq(bl_run_record_get(r, "execution-config.execution-mode"), "PIPELINED");
    ck_assert_str_eq(bl_run_record_get(r, "execution-config.restart-strategy"), "Restart deactivated.");
    ck_assert_str_eq(bl_run_record_get(r, "execution-config.job-parallelism"), "8");
    ck_assert_str_eq(bl_run_record_get(r, "execution-config.object-reuse-mode"), "false");
    ck_assert_str_eq(bl_run_record_get(r, "input"), "hdfs:///tpch/sf100/lineitem");
    ck_assert_str_eq(bl_run_record_get(r, "iterations"), "10");
    /* a field of the job, one of a vertex and the path /applications/app-1 are newer than the reader */
    ck_assert_uint_eq(r->unknown_events, 3);
    got_free(&g);
}
END_TEST

START_TEST(failed_and_canceled_jobs_are_failed_with_the_root_exception) {
    /* Flink 1.x: root-exception, a whole stack trace; the first line is kept */
    json_t *a = archive_new();
    archive_add(a, "/jobs/" JID,
                details(JID, "wordcount", "FAILED", T0, T0 + 5000, join_vertices("FAILED", T0 + 4900), NULL));
    archive_add(a, "/jobs/" JID "/exceptions",
                json_pack("{s:s, s:I, s:[], s:b}", "root-exception",
                          "org.apache.flink.runtime.JobException: Recovery is suppressed by "
                          "NoRestartBackoffTimeStrategy\n\tat org.apache.flink.runtime.executiongraph.failover."
                          "ExecutionFailureHandler.handleFailure(ExecutionFailureHandler.java:176)\n",
                          "timestamp", T0 + 4900, "all-exceptions", "truncated", 0));
    const char *path = save("failed.archive", a);
    got g = {0};
    bl_error err;
    ck_assert_int_eq(read_into(path, &g, &err), BL_OK);
    ck_assert_uint_eq(g.n, 1);
    ck_assert_int_eq(g.rec[0]->state, BL_RUN_FAILED);
    ck_assert_str_eq(g.rec[0]->why, "the job ended FAILED: org.apache.flink.runtime.JobException: Recovery is "
                                    "suppressed by NoRestartBackoffTimeStrategy");
    ck_assert_double_eq(g.rec[0]->end_ms, (double)(T0 + 5000));
    ck_assert_int_eq(g.rec[0]->hosts, -1); /* no taskmanagers answers */
    ck_assert_int_eq(g.rec[0]->executor_cores, -1);
    ck_assert_str_eq(g.rec[0]->version, "");
    got_free(&g);

    /* Flink 2.x: only exceptionHistory; a long message is cut at a character boundary */
    char msg[400];
    strcpy(msg, "java.lang.RuntimeException: "); /* byte 200 falls inside an "\xc3\xa4" */
    while (strlen(msg) < 300) strcat(msg, "fehlgeschlagen \xc3\xbc\xc3\xa4\xc3\xb6 ");
    strcat(msg, "\n\tat Main.main(Main.java:1)");
    a = archive_new();
    archive_add(a, "/jobs/" JID,
                details(JID, "wordcount", "FAILED", T0, T0 + 5000, join_vertices("FAILED", T0 + 4900), NULL));
    archive_add(a, "/jobs/" JID "/exceptions",
                json_pack("{s:{s:[{s:s, s:s, s:I, s:s, s:s, s:s, s:{}, s:[]}], s:b}}", "exceptionHistory", "entries",
                          "exceptionName", "java.lang.IllegalStateException", "stacktrace", msg, "timestamp",
                          T0 + 4900, "taskName", "Source: orders (1/2)#0", "endpoint", "host-b:40123",
                          "taskManagerId", "container_01_000003", "failureLabels", "concurrentExceptions",
                          "truncated", 0));
    path = save("failed-history.archive", a);
    ck_assert_int_eq(read_into(path, &g, &err), BL_OK);
    ck_assert_uint_eq(g.n, 1);
    const char *why = g.rec[0]->why;
    ck_assert_int_eq(g.rec[0]->state, BL_RUN_FAILED);
    ck_assert_ptr_nonnull(strstr(why, "the job ended FAILED: java.lang.RuntimeException: fehlgeschlagen"));
    ck_assert_uint_le(strlen(why), strlen("the job ended FAILED: ") + 200 + 3);
    ck_assert_str_eq(why + strlen(why) - 3, "...");
    ck_assert(bl_utf8_valid(why, strlen(why), NULL));
    got_free(&g);

    /* cancelled, with no exceptions answer at all */
    a = archive_new();
    archive_add(a, "/jobs/" JID,
                details(JID, "wordcount", "CANCELED", T0, T0 + 7000, join_vertices("CANCELED", T0 + 6900), NULL));
    path = save("canceled.archive", a);
    ck_assert_int_eq(read_into(path, &g, &err), BL_OK);
    ck_assert_int_eq(g.rec[0]->state, BL_RUN_FAILED);
    ck_assert_str_eq(g.rec[0]->why, "the job ended CANCELED");
    got_free(&g);
}
END_TEST

START_TEST(running_job_is_incomplete) {
    json_t *vs = join_vertices("RUNNING", -1);
    /* the adaptive batch scheduler has not decided this vertex's parallelism yet */
    json_object_set_new(json_array_get(vs, 2), "parallelism", json_integer(-1));
    json_t *a = archive_new();
    archive_add(a, "/jobs/" JID, details(JID, "streaming-etl", "RUNNING", T0, -1, vs, join_plan()));
    const char *path = save("running.archive", a);
    got g = {0};
    bl_error err;
    ck_assert_int_eq(read_into(path, &g, &err), BL_OK);
    const bl_run_record *r = g.rec[0];
    ck_assert_int_eq(r->state, BL_RUN_INCOMPLETE);
    ck_assert_str_eq(r->why, "the job had not ended (state RUNNING)");
    ck_assert_double_eq(r->start_ms, (double)T0);
    ck_assert(isnan(r->end_ms));
    ck_assert_int_eq(r->executors, 4);
    got_free(&g);

    const char *states[] = {"INITIALIZING", "CREATED", "RESTARTING", "FAILING", "CANCELLING", "SUSPENDED"};
    for (size_t i = 0; i < 6; i++) {
        path = save("state.json", details(JID, "etl", states[i], T0, -1, json_array(), NULL));
        ck_assert_int_eq(read_into(path, &g, &err), BL_OK);
        ck_assert_int_eq(g.rec[0]->state, BL_RUN_INCOMPLETE);
        ck_assert_int_eq(g.rec[0]->executors, -1);
        ck_assert_uint_eq(g.rec[0]->unknown_events, 0);
        got_free(&g);
    }
    /* a state a newer Flink may add: incomplete, and counted */
    path = save("state.json", details(JID, "etl", "HIBERNATING", T0, T0 + 10, json_array(), NULL));
    ck_assert_int_eq(read_into(path, &g, &err), BL_OK);
    ck_assert_int_eq(g.rec[0]->state, BL_RUN_INCOMPLETE);
    ck_assert_str_eq(g.rec[0]->why, "the job's state HIBERNATING is not one this reader knows");
    ck_assert_uint_eq(g.rec[0]->unknown_events, 1);
    got_free(&g);
}
END_TEST

START_TEST(saved_job_answer_gives_what_it_holds) {
    /* GET /jobs/<jobid> saved as a file: no task managers, configuration or version in it */
    const char *path = save("job.json", details(JID, "tpch-q3", "FINISHED", T0, T0 + 95000,
                                                join_vertices("FINISHED", T0 + 94000), join_plan()));
    got g = {0};
    bl_error err;
    ck_assert_int_eq(read_into(path, &g, &err), BL_OK);
    ck_assert_uint_eq(g.n, 1);
    const bl_run_record *r = g.rec[0];
    ck_assert_str_eq(r->app_id, JID);
    ck_assert_str_eq(r->name, "tpch-q3");
    ck_assert_str_eq(r->version, "");
    ck_assert_int_eq(r->state, BL_RUN_COMPLETE);
    ck_assert_double_eq(r->end_ms - r->start_ms, 95000.0);
    ck_assert_int_eq(r->hosts, -1);
    ck_assert_int_eq(r->executors, 8);
    ck_assert_int_eq(r->executor_cores, -1);
    ck_assert(isnan(r->executor_memory_mb));
    ck_assert_double_eq(r->input_bytes, 3000.0);
    ck_assert_str_eq(r->args, "");
    ck_assert_uint_eq(r->n_conf, 0);
    ck_assert_uint_eq(r->unknown_events, 0);
    got_free(&g);

    /* without a plan the sources are told by their names ("Source: ...") */
    path = save("job-noplan.json", details(JID, "tpch-q3", "FINISHED", T0, T0 + 95000,
                                           join_vertices("FINISHED", T0 + 94000), NULL));
    ck_assert_int_eq(read_into(path, &g, &err), BL_OK);
    ck_assert_double_eq(g.rec[0]->input_bytes, 3000.0);
    got_free(&g);

    /* no source to be told: the input is unknown */
    path = save("job-nosource.json",
                details(JID, "iterate", "FINISHED", T0, T0 + 10,
                        json_pack("[o]", vertex(V_JOIN, "Iteration", 3, 50, 50, "FINISHED", T0, T0 + 9)), NULL));
    ck_assert_int_eq(read_into(path, &g, &err), BL_OK);
    ck_assert(isnan(g.rec[0]->input_bytes));
    ck_assert_int_eq(g.rec[0]->executors, 3);
    got_free(&g);
}
END_TEST

START_TEST(overview_answer_gives_one_record_per_job) {
    const char *path = save("overview.json",
                            json_pack("{s:[o, o, o]}", "jobs",
                                      overview_job("00000000000000000000000000000001", "a", "FINISHED", T0, T0 + 10),
                                      overview_job("00000000000000000000000000000002", "b", "FAILED", T0, T0 + 20),
                                      overview_job("00000000000000000000000000000003", "c", "RUNNING", T0, -1)));
    got g = {0};
    bl_error err;
    ck_assert_int_eq(read_into(path, &g, &err), BL_OK);
    ck_assert_uint_eq(g.n, 3);
    ck_assert_str_eq(g.rec[0]->app_id, "00000000000000000000000000000001");
    ck_assert_int_eq(g.rec[0]->state, BL_RUN_COMPLETE);
    ck_assert_str_eq(g.rec[1]->name, "b");
    ck_assert_int_eq(g.rec[1]->state, BL_RUN_FAILED);
    ck_assert_str_eq(g.rec[1]->why, "the job ended FAILED");
    ck_assert_int_eq(g.rec[2]->state, BL_RUN_INCOMPLETE);
    for (size_t i = 0; i < 3; i++) {
        ck_assert_int_eq(g.rec[i]->executors, -1);
        ck_assert_int_eq(g.rec[i]->hosts, -1);
        ck_assert_uint_eq(g.rec[i]->unknown_events, 0);
    }
    got_free(&g);

    /* a job of the overview that is damaged: no record at all, the job named */
    path = save("overview-bad.json",
                json_pack("{s:[o, {s:s, s:s, s:s}]}", "jobs",
                          overview_job("00000000000000000000000000000001", "a", "FINISHED", T0, T0 + 10), "jid",
                          "00000000000000000000000000000002", "name", "b", "state", "FINISHED"));
    ck_assert_int_eq(read_into(path, &g, &err), BL_EFORMAT);
    ck_assert_uint_eq(g.n, 0);
    ck_assert_ptr_nonnull(strstr(err.message, "jobs[1].start-time is missing"));
}
END_TEST

START_TEST(times_that_cannot_be_a_run_make_it_incomplete) {
    got g = {0};
    bl_error err;
    const char *path = save("skew.json", details(JID, "etl", "FINISHED", T0, T0 - 5000, json_array(), NULL));
    ck_assert_int_eq(read_into(path, &g, &err), BL_OK);
    ck_assert_int_eq(g.rec[0]->state, BL_RUN_INCOMPLETE);
    ck_assert_str_eq(g.rec[0]->why, "the job ends before it starts (clock skew?)");
    ck_assert_double_eq(g.rec[0]->end_ms, (double)(T0 - 5000));
    /* its duration (end - start) is negative too: said once, in a note */
    ck_assert_uint_eq(g.n_notes, 1);
    ck_assert_ptr_nonnull(strstr(g.notes[0], "duration -5000 is negative; start-time and end-time are used"));
    got_free(&g);

    path = save("noend.json", details(JID, "etl", "FINISHED", T0, -1, json_array(), NULL));
    ck_assert_int_eq(read_into(path, &g, &err), BL_OK);
    ck_assert_int_eq(g.rec[0]->state, BL_RUN_INCOMPLETE);
    ck_assert_str_eq(g.rec[0]->why, "the job ended FINISHED but has no end-time");
    got_free(&g);

    json_t *j = details(JID, "etl", "FAILED", T0, T0 + 10, json_array(), NULL);
    json_object_del(j, "end-time");
    path = save("noend2.json", j);
    ck_assert_int_eq(read_into(path, &g, &err), BL_OK);
    ck_assert_int_eq(g.rec[0]->state, BL_RUN_INCOMPLETE);
    ck_assert_str_eq(g.rec[0]->why, "the job ended FAILED but has no end-time");
    got_free(&g);

    path = save("nostart.json", details(JID, "etl", "FINISHED", -1, T0, json_array(), NULL));
    ck_assert_int_eq(read_into(path, &g, &err), BL_OK);
    ck_assert_int_eq(g.rec[0]->state, BL_RUN_INCOMPLETE);
    ck_assert(isnan(g.rec[0]->start_ms));
    ck_assert_str_eq(g.rec[0]->why, "the job ended FINISHED but has no start-time (-1)");
    got_free(&g);

    j = details(JID, "etl", "FINISHED", T0, T0 + 10, json_array(), NULL);
    json_object_set_new(j, "duration", json_integer(-3));
    path = save("negdur.json", j);
    ck_assert_int_eq(read_into(path, &g, &err), BL_OK);
    ck_assert_int_eq(g.rec[0]->state, BL_RUN_COMPLETE);
    ck_assert_uint_eq(g.n_notes, 1);
    char want[4300];
    snprintf(want, sizeof want, "%s: duration -3 is negative; start-time and end-time are used", path);
    ck_assert_str_eq(g.notes[0], want);
    got_free(&g);
}
END_TEST

START_TEST(older_archives_name_task_managers_by_host) {
    /* Flink before 1.13: taskmanagers by "host" (host:port) only; no /config, but the classpath */
    json_t *a = archive_new();
    archive_add(a, "/jobs/" JID, details(JID, "wordcount", "FINISHED", T0, T0 + 1000,
                                         join_vertices("FINISHED", T0 + 900), join_plan()));
    archive_add(a, "/jobs/" JID "/vertices/" V_SRC1 "/taskmanagers",
                json_pack("{s:s, s:s, s:I, s:[{s:s, s:s}, {s:s, s:s}, {s:s, s:s}]}", "id", V_SRC1, "name", "Source",
                          "now", T0, "taskmanagers", "host", "worker-1:40123", "status", "FINISHED", "host",
                          "worker-2:40123", "status", "FINISHED", "host", "(unassigned)", "status", "CREATED"));
    archive_add(a, "/jobs/" JID "/vertices/" V_JOIN "/taskmanagers",
                json_pack("{s:s, s:s, s:I, s:[{s:s}]}", "id", V_JOIN, "name", "Join", "now", T0, "taskmanagers",
                          "host", "worker-2:40123"));
    archive_add(a, "/jobs/" JID "/jobmanager/environment",
                json_pack("{s:{s:s, s:s, s:[s]}, s:[s, s, s]}", "jvm", "version", "OpenJDK 64-Bit Server VM - 11",
                          "arch", "amd64", "options", "-Xmx1024m", "classpath", "/opt/flink/lib/flink-csv-1.12.7.jar",
                          "/opt/flink/lib/flink-dist_2.12-1.12.7.jar", "/opt/flink/lib/log4j-api-2.17.1.jar"));
    const char *path = save("older.archive", a);
    got g = {0};
    bl_error err;
    ck_assert_int_eq(read_into(path, &g, &err), BL_OK);
    ck_assert_int_eq(g.rec[0]->hosts, 2);
    ck_assert_str_eq(g.rec[0]->version, "1.12.7");
    ck_assert_int_eq(g.rec[0]->state, BL_RUN_COMPLETE);
    got_free(&g);

    /* an archive with only the overview (no /jobs/<id>): its one job */
    a = archive_new();
    archive_add(a, "/jobs/overview", json_pack("{s:[o]}", "jobs", overview_job(JID, "wc", "FINISHED", T0, T0 + 10)));
    archive_add(a, "/jobs/" JID "/config", job_config());
    path = save("overview-only.archive", a);
    ck_assert_int_eq(read_into(path, &g, &err), BL_OK);
    ck_assert_str_eq(g.rec[0]->app_id, JID);
    ck_assert_str_eq(bl_run_record_get(g.rec[0], "input"), "hdfs:///tpch/sf100/lineitem");
    got_free(&g);
}
END_TEST

START_TEST(program_arguments_and_memory_in_flink_notations) {
    struct {
        const char *args, *want, *mem;
        double mb;
    } cases[] = {
        {"--input;'a;b';--x", "--input a;b --x", "1728m", 1728},
        {"'it''s';\"q\"", "it's q", "2 gb", 2048},
        {"[--input, hdfs:///x, 'a, b']", "--input hdfs:///x a, b", "1073741824", 1024},
        {"", "", "512 MEBIBYTES", 512},
        {"  ", "", "4t", 4194304},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        json_t *a = archive_new();
        archive_add(a, "/jobs/" JID, details(JID, "x", "FINISHED", T0, T0 + 1, json_array(), NULL));
        archive_add(a, "/jobs/" JID "/jobmanager/config",
                    json_pack("[{s:s, s:s}, {s:s, s:s}]", "key", "$internal.application.program-args", "value",
                              cases[i].args, "key", "taskmanager.memory.process.size", "value", cases[i].mem));
        const char *path = save("args.archive", a);
        got g = {0};
        bl_error err;
        ck_assert_int_eq(read_into(path, &g, &err), BL_OK);
        ck_assert_str_eq(g.rec[0]->args, cases[i].want);
        ck_assert_double_eq(g.rec[0]->executor_memory_mb, cases[i].mb);
        got_free(&g);
    }
    /* values that are no count or size: noted, left unknown */
    json_t *a = archive_new();
    archive_add(a, "/jobs/" JID, details(JID, "x", "FINISHED", T0, T0 + 1, json_array(), NULL));
    archive_add(a, "/jobs/" JID "/jobmanager/config",
                json_pack("[{s:s, s:s}, {s:s, s:s}]", "key", "taskmanager.numberOfTaskSlots", "value", "four", "key",
                          "taskmanager.memory.process.size", "value", "lots"));
    const char *path = save("badconf.archive", a);
    got g = {0};
    bl_error err;
    ck_assert_int_eq(read_into(path, &g, &err), BL_OK);
    ck_assert_int_eq(g.rec[0]->executor_cores, -1);
    ck_assert(isnan(g.rec[0]->executor_memory_mb));
    ck_assert_uint_eq(g.n_notes, 2); /* each names the answer that holds the value */
    ck_assert_str_eq(strchr(g.notes[0], ' ') + 1, "archive entry 1 (/jobs/" JID "/jobmanager/config): "
                     "taskmanager.numberOfTaskSlots 'four' is not a count of slots; executor_cores is left unknown");
    ck_assert_str_eq(strchr(g.notes[1], ' ') + 1, "archive entry 1 (/jobs/" JID "/jobmanager/config): "
                     "taskmanager.memory.process.size 'lots' is not a memory size; executor_memory_mb is left unknown");
    got_free(&g);
    /* a value the job's own configuration gives (it replaces the cluster's): that answer named */
    a = archive_new();
    archive_add(a, "/jobs/" JID, details(JID, "x", "FINISHED", T0, T0 + 1, json_array(), NULL));
    archive_add(a, "/jobs/" JID "/jobmanager/config",
                json_pack("[{s:s, s:s}, {s:s, s:s}]", "key", "taskmanager.numberOfTaskSlots", "value", "4", "key",
                          "taskmanager.memory.process.size", "value", "1g"));
    archive_add(a, "/jobs/" JID "/config",
                json_pack("{s:s, s:{s:{s:s}}}", "jid", JID, "execution-config", "user-config",
                          "taskmanager.memory.process.size", "lots"));
    path = save("badjobconf.archive", a);
    ck_assert_int_eq(read_into(path, &g, &err), BL_OK);
    ck_assert_int_eq(g.rec[0]->executor_cores, 4);
    ck_assert_uint_eq(g.n_notes, 1);
    ck_assert_str_eq(strchr(g.notes[0], ' ') + 1, "archive entry 2 (/jobs/" JID "/config): "
                     "taskmanager.memory.process.size 'lots' is not a memory size; executor_memory_mb is left unknown");
    got_free(&g);
}
END_TEST

START_TEST(repeated_paths_and_other_jobs_answers_are_not_read) {
    json_t *a = join_archive();
    archive_add(a, "/jobs/" JID "/config",
                json_pack("{s:s, s:s, s:{s:{s:s}}}", "jid", JID, "name", "x", "execution-config", "user-config",
                          "input", "the second, not used"));
    archive_add(a, "/jobs/ffffffffffffffffffffffffffffffff/config",
                json_pack("{s:s, s:s, s:{s:{s:s}}}", "jid", "ffffffffffffffffffffffffffffffff", "name", "x",
                          "execution-config", "user-config", "input", "another job's, not used"));
    const char *path = save("dup.archive", a);
    got g = {0};
    bl_error err;
    ck_assert_int_eq(read_into(path, &g, &err), BL_OK);
    ck_assert_uint_eq(g.n, 1);
    ck_assert_str_eq(bl_run_record_get(g.rec[0], "input"), "hdfs:///tpch/sf100/lineitem");
    ck_assert_uint_eq(g.rec[0]->unknown_events, 3 + 1); /* the other job's answer is counted, not read */
    ck_assert_uint_eq(g.n_notes, 1);
    ck_assert_ptr_nonnull(strstr(g.notes[0], "archive entry 17 (/jobs/" JID "/config): repeats the path of "
                                             "archive entry 2; the first is used"));
    got_free(&g);

    a = archive_new();
    archive_add(a, "/jobs/" JID, details("ffffffffffffffffffffffffffffffff", "x", "FINISHED", T0, T0 + 1,
                                         json_array(), NULL));
    path = save("otherjid.archive", a);
    ck_assert_int_eq(read_into(path, &g, &err), BL_OK);
    ck_assert_str_eq(g.rec[0]->app_id, "ffffffffffffffffffffffffffffffff");
    ck_assert_uint_eq(g.n_notes, 1);
    ck_assert_ptr_nonnull(strstr(g.notes[0], "answers for job ffffffffffffffffffffffffffffffff; its jid is used"));
    got_free(&g);
}
END_TEST

/* ---- what is refused ------------------------------------------------------------------------------ */

/* Reads path, expecting status and a message that starts with the file and holds what. */
static void refused(const char *path, bl_status status, const char *what) {
    got g = {0};
    bl_error err = {BL_OK, ""};
    const bl_status st = read_into(path, &g, &err);
    if (st != status || strncmp(err.message, path, strlen(path)) != 0 || !strstr(err.message, what))
        ck_abort_msg("%s: got %d \"%s\", want %d with \"%s\"", path, st, err.message, status, what);
    ck_assert_uint_eq(g.n, 0);
    got_free(&g);
}

static const char *archive_of(const char *name, const char *entries) {
    char text[4096];
    snprintf(text, sizeof text, "{\"archive\":[%s]}", entries);
    return save_text(name, text);
}

START_TEST(files_that_are_no_flink_job_are_refused) {
    refused(tmp_file("nothere.json"), BL_EIO, "cannot open");
    refused(bl_test_tmpdir(), BL_EIO, "is a folder");
    refused(save_text("empty.json", ""), BL_EFORMAT, "empty file");
    refused(save_text("blank.json", " \n\t\n"), BL_EFORMAT, "empty file");
    refused(save_text("text.json", "jobmanager.archive.fs.dir: hdfs:///completed-jobs\n"), BL_EFORMAT,
            "not JSON (line 1, column");
    refused(save_text("cut.json", "{\"archive\":[{\"path\":\"/jobs/" JID "\",\"json\":\"{\\\"jid\\\""), BL_EFORMAT,
            "not JSON");
    refused(save_text("latin1.json", "{\"jid\":\"" JID "\",\"name\":\"Z\xfcrich\",\"state\":\"FINISHED\"}"),
            BL_EFORMAT, "not UTF-8 text");
    refused(save_text("array.json", "[{\"jid\":\"" JID "\"}]"), BL_EFORMAT, "is an array, not an object");
    refused(save_text("spark.json", "{\"Event\":\"SparkListenerLogStart\",\"Spark Version\":\"3.5.1\"}"), BL_EFORMAT,
            "neither a Flink job archive");
    refused(save_text("archive-object.json", "{\"archive\":{}}"), BL_EFORMAT, "archive is an object, not an array");
    refused(archive_of("entry-string.json", "\"/jobs/" JID "\""), BL_EFORMAT,
            "archive entry 0 is a string, not an object {path, json}");
    refused(archive_of("entry-nopath.json", "{\"json\":\"{}\"}"), BL_EFORMAT, "archive entry 0: path is missing");
    refused(archive_of("entry-numpath.json", "{\"path\":7,\"json\":\"{}\"}"), BL_EFORMAT,
            "archive entry 0: path is a number, not a string");
    refused(archive_of("entry-objjson.json", "{\"path\":\"/jobs/" JID "\",\"json\":{\"jid\":\"" JID "\"}}"),
            BL_EFORMAT, "archive entry 0 (/jobs/" JID "): json is an object, not a string (the REST answer");
    refused(archive_of("entry-nojson.json", "{\"path\":\"/jobs/" JID "\"}"), BL_EFORMAT,
            "archive entry 0 (/jobs/" JID "): json is missing");
    refused(archive_of("entry-badjson.json",
                       "{\"path\":\"/jobs/" JID "\",\"json\":\"{\\\"jid\\\":\\\"" JID "\\\","
                       "\\\"state\\\":\\\"FINISHED\\\","
                       "\\\"start-time\\\":1}\"},{\"path\":\"/jobs/" JID "/config\",\"json\":\"<html>502</html>\"}"),
            BL_EFORMAT, "archive entry 1 (/jobs/" JID "/config): json is not a JSON answer: line 1");
    refused(archive_of("entry-nul.json", "{\"path\":\"/jobs/" JID "\",\"json\":\"{\\\"jid\\\":\\\"a\\u0000b\\\"}\"}"),
            BL_EFORMAT, "not JSON");
    refused(archive_of("no-details.json", "{\"path\":\"/jobs/" JID "/config\",\"json\":\"{}\"}"), BL_EFORMAT,
            "the archive has no /jobs/<jobid> entry (the job's details)");
    refused(archive_of("empty-archive.json", ""), BL_EFORMAT, "the archive has no /jobs/<jobid> entry");
    refused(archive_of("overview-two.json",
                       "{\"path\":\"/jobs/overview\",\"json\":"
                       "\"{\\\"jobs\\\":[{\\\"jid\\\":\\\"a\\\"},{\\\"jid\\\":\\\"b\\\"}]}\"}"),
            BL_EFORMAT, "its overview does not hold one job");
    refused(archive_of("two-jobs.json",
                       "{\"path\":\"/jobs/" JID "\",\"json\":\"{}\"},{\"path\":\"/jobs/ffffffffffffffffffffffffffffffff\","
                       "\"json\":\"{}\"}"),
            BL_EFORMAT, "holds a second job besides /jobs/" JID " (entry 0)");

    /* a larger file than any archive: refused before it is read */
    const char *big = tmp_file("big.archive");
    FILE *f = fopen(big, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(ftruncate(fileno(f), (off_t)257 << 20), 0);
    fclose(f);
    refused(big, BL_EFORMAT, "more than the 256 MiB a Flink job archive is read up to");
    unlink(big);
}
END_TEST

/* The join archive with one answer's field replaced (value NULL: removed). */
static const char *join_archive_with(const char *name, const char *path_suffix, const char *field, json_t *value) {
    json_t *a = join_archive(), *entries = json_object_get(a, "archive");
    char want[256];
    snprintf(want, sizeof want, "/jobs/%s%s", JID, path_suffix);
    for (size_t i = 0; i < json_array_size(entries); i++) {
        json_t *e = json_array_get(entries, i);
        if (strcmp(json_string_value(json_object_get(e, "path")), want) != 0) continue;
        json_t *ans = json_loads(json_string_value(json_object_get(e, "json")), 0, NULL);
        ck_assert_ptr_nonnull(ans);
        /* "a.b[1].c": a path into the answer */
        char f[128];
        snprintf(f, sizeof f, "%s", field);
        json_t *at = ans;
        char *part = f, *dot;
        while ((dot = strpbrk(part, ".[")) != NULL) {
            const char sep = *dot;
            *dot = '\0';
            if (*part) at = json_object_get(at, part);
            if (sep == '[') {
                at = json_array_get(at, strtoul(dot + 1, &part, 10));
                part += *part == ']' ? 1 : 0;
                if (*part == '.') part++;
            } else {
                part = dot + 1;
            }
            ck_assert_ptr_nonnull(at);
        }
        if (value) json_object_set_new(at, part, value);
        else json_object_del(at, part);
        char *text = json_dumps(ans, JSON_COMPACT | JSON_PRESERVE_ORDER);
        json_object_set_new(e, "json", json_string(text));
        free(text);
        json_decref(ans);
        seeding = 0;
        const char *saved = save(name, a);
        seeding = 1;
        return saved;
    }
    ck_abort_msg("no entry %s", want);
    return NULL;
}

START_TEST(missing_and_mistyped_fields_are_refused_by_name) {
    const char *at = "archive entry 1 (/jobs/" JID "): ";
    char want[512];
#define REFUSED(name, suffix, field, value, what)                                                                 \
    do {                                                                                                          \
        snprintf(want, sizeof want, "%s%s", strcmp(suffix, "") == 0 ? at : "", what);                            \
        refused(join_archive_with(name, suffix, field, value), BL_EFORMAT, want);                                  \
    } while (0)
    REFUSED("no-jid.archive", "", "jid", NULL, "jid is missing (the job id)");
    REFUSED("empty-jid.archive", "", "jid", json_string(""), "jid is empty");
    REFUSED("num-jid.archive", "", "jid", json_integer(5), "jid is a number, not a string");
    REFUSED("no-state.archive", "", "state", NULL, "state is missing");
    REFUSED("num-state.archive", "", "state", json_integer(3), "state is a number, not a string");
    REFUSED("no-start.archive", "", "start-time", NULL, "start-time is missing");
    REFUSED("str-start.archive", "", "start-time", json_string("2024-01-17T12:10:15Z"),
            "start-time is a string, not a number");
    REFUSED("str-end.archive", "", "end-time", json_string("1700000095000"), "end-time is a string, not a number");
    REFUSED("bool-duration.archive", "", "duration", json_true(), "duration is true, not a number");
    REFUSED("num-name.archive", "", "name", json_integer(1), "name is a number, not a string");
    REFUSED("obj-vertices.archive", "", "vertices", json_object(), "vertices is an object, not an array");
    REFUSED("str-vertex.archive", "", "vertices", json_pack("[s]", V_SRC1), "vertices[0] is a string, not an object");
    REFUSED("str-par.archive", "", "vertices[1].parallelism", json_string("2"),
            "vertices[1].parallelism is a string, not a number");
    REFUSED("num-vid.archive", "", "vertices[0].id", json_integer(1), "vertices[0].id is a number, not a string");
    REFUSED("str-metrics.archive", "", "vertices[2].metrics", json_string("n/a"),
            "vertices[2].metrics is a string, not an object");
    REFUSED("str-rb.archive", "", "vertices[0].metrics.read-bytes", json_string("1 KB"),
            "vertices[0].metrics.read-bytes is a string, not a number");
    REFUSED("str-plan.archive", "", "plan", json_string("{}"), "plan is a string, not an object");
    REFUSED("obj-nodes.archive", "", "plan.nodes", json_object(), "plan.nodes is an object, not an array");
    REFUSED("str-inputs.archive", "", "plan.nodes[2].inputs", json_string(V_SRC1),
            "plan.nodes[2].inputs is a string, not an array");
    REFUSED("arr-uc.archive", "/config", "execution-config.user-config", json_array(),
            "archive entry 2 (/jobs/" JID "/config): execution-config.user-config is an array, not an object");
    REFUSED("str-ec.archive", "/config", "execution-config", json_string("x"),
            "(/jobs/" JID "/config): execution-config is a string, not an object");
    REFUSED("num-root.archive", "/exceptions", "root-exception", json_integer(1),
            "(/jobs/" JID "/exceptions): root-exception is a number, not a string");
    REFUSED("str-tms.archive", "/vertices/" V_SRC1 "/taskmanagers", "taskmanagers", json_string("tm-1"),
            "(/jobs/" JID "/vertices/" V_SRC1 "/taskmanagers): taskmanagers is a string, not an array");
    REFUSED("num-tmid.archive", "/vertices/" V_JOIN "/taskmanagers", "taskmanagers[1].taskmanager-id",
            json_integer(2), "taskmanagers[1].taskmanager-id is a number, not a string");
#undef REFUSED
    /* the cluster configuration: not {key, value} pairs */
    json_t *a = archive_new();
    archive_add(a, "/jobs/" JID, details(JID, "x", "FINISHED", T0, T0 + 1, json_array(), NULL));
    archive_add(a, "/jobs/" JID "/jobmanager/config", json_pack("{s:s}", "taskmanager.numberOfTaskSlots", "4"));
    refused(save("jmconf-object.archive", a), BL_EFORMAT,
            "archive entry 1 (/jobs/" JID "/jobmanager/config): the answer is an object, not an array of {key, value}");
    a = archive_new();
    archive_add(a, "/jobs/" JID, details(JID, "x", "FINISHED", T0, T0 + 1, json_array(), NULL));
    archive_add(a, "/jobs/" JID "/jobmanager/config", json_pack("[{s:s}]", "value", "4"));
    refused(save("jmconf-nokey.archive", a), BL_EFORMAT, "[0].key is missing");
    /* a saved answer names the field alone */
    refused(save("plain-nostate.json", json_pack("{s:s, s:I}", "jid", JID, "start-time", T0)), BL_EFORMAT,
            "plain-nostate.json: state is missing");
}
END_TEST

START_TEST(null_parameter_of_the_job_is_empty) {
    const char *path = join_archive_with("null-uc.archive", "/config", "execution-config.user-config.input", json_null());
    got g = {0};
    bl_error err;
    ck_assert_int_eq(read_into(path, &g, &err), BL_OK);
    ck_assert_str_eq(bl_run_record_get(g.rec[0], "input"), "");
    got_free(&g);
}
END_TEST

START_TEST(a_refusing_sink_stops_the_reading) {
    seeding = 0; /* the files are the records' tests' again */
    got g = {.refuse_at = 1};
    bl_error err;
    ck_assert_int_eq(read_into(save("stop.archive", join_archive()), &g, &err), BL_EIO);
    ck_assert_str_eq(err.message, "full");
    ck_assert_uint_eq(g.n, 0);
    got_free(&g);

    g.refuse_at = 2;
    const char *path = save("stop-overview.json",
                            json_pack("{s:[o, o, o]}", "jobs",
                                      overview_job("00000000000000000000000000000001", "a", "FINISHED", T0, T0 + 10),
                                      overview_job("00000000000000000000000000000002", "b", "FINISHED", T0, T0 + 10),
                                      overview_job("00000000000000000000000000000003", "c", "FINISHED", T0, T0 + 10)));
    ck_assert_int_eq(read_into(path, &g, &err), BL_EIO);
    ck_assert_uint_eq(g.n, 1); /* the third is never made a record of the sink's */
    got_free(&g);

    bl_import_sink none = {NULL, NULL, NULL};
    ck_assert_int_eq(bl_flink_read(path, &none, &err), BL_EINVAL);
    ck_assert_int_eq(bl_flink_read(NULL, &none, &err), BL_EINVAL);
}
END_TEST

START_TEST(sniff_tells_flink_files_by_their_first_bytes) {
    seeding = 0;
    ck_assert_int_eq(bl_flink_sniff(save("s1.archive", join_archive())), 1);
    ck_assert_int_eq(bl_flink_sniff(save("s2.json", details(JID, "x", "FINISHED", T0, T0 + 1, json_array(), NULL))), 1);
    ck_assert_int_eq(bl_flink_sniff(save_text("s3.json", "\xEF\xBB\xBF \n { \"jid\" : \"" JID "\"}")), 1);
    ck_assert_int_eq(bl_flink_sniff(save_text("s4.json", "{\"jobs\":[{\"jid\":\"" JID "\"}]}")), 1);
    ck_assert_int_eq(bl_flink_sniff(save_text("s5.json", "{\"Event\":\"SparkListenerLogStart\",\"Spark Version\":\"3.5.1\"}\n")), 0);
    ck_assert_int_eq(bl_flink_sniff(save_text("s6.json", "{\"name\":\"jid\",\"x\":\"archive\"}")), 0); /* values, not members */
    ck_assert_int_eq(bl_flink_sniff(save_text("s7.json", "[{\"jid\":1}]")), 0);
    ck_assert_int_eq(bl_flink_sniff(save_text("s8.json", "")), 0);
    ck_assert_int_eq(bl_flink_sniff(tmp_file("nothere.json")), 0);
    ck_assert_int_eq(bl_flink_sniff(bl_test_tmpdir()), 0);
    ck_assert_int_eq(bl_flink_sniff(NULL), 0);
    /* "jid" past the first 4 KiB is not looked for */
    char text[6000];
    snprintf(text, sizeof text, "{\"pad\":\"%05000d\",\"jid\":\"x\"}", 0);
    ck_assert_int_eq(bl_flink_sniff(save_text("s9.json", text)), 0);
}
END_TEST

Suite *bl_test_suite(void) {
    Suite *s = suite_create("import_flink");
    TCase *tc = tcase_create("records");
    tcase_add_test(tc, archive_of_finished_job_fills_every_field);
    tcase_add_test(tc, failed_and_canceled_jobs_are_failed_with_the_root_exception);
    tcase_add_test(tc, running_job_is_incomplete);
    tcase_add_test(tc, saved_job_answer_gives_what_it_holds);
    tcase_add_test(tc, overview_answer_gives_one_record_per_job);
    tcase_add_test(tc, times_that_cannot_be_a_run_make_it_incomplete);
    tcase_add_test(tc, older_archives_name_task_managers_by_host);
    tcase_add_test(tc, program_arguments_and_memory_in_flink_notations);
    tcase_add_test(tc, repeated_paths_and_other_jobs_answers_are_not_read);
    suite_add_tcase(s, tc);
    TCase *bad = tcase_create("refused");
    tcase_add_test(bad, files_that_are_no_flink_job_are_refused);
    tcase_add_test(bad, missing_and_mistyped_fields_are_refused_by_name);
    tcase_add_test(bad, null_parameter_of_the_job_is_empty);
    tcase_add_test(bad, a_refusing_sink_stops_the_reading);
    tcase_add_test(bad, sniff_tells_flink_files_by_their_first_bytes);
    suite_add_tcase(s, bad);
    return s;
}
