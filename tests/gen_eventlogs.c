/* gen_eventlogs.c — Spark event logs for the runs of a Bellamy data file, as Spark 3 writes them (one
 * log per run, one JSON event per line), so that the import can be tried end to end without logs from
 * outside (tools/demo-eventlogs, test_import). A run's properties go where a cluster keeps them:
 *   job_type → the application's name            job_args → the arguments after the application jar
 *   data_size_MB → input bytes read by its tasks  machine_type → spark.kubernetes.node.selector.node.
 *   slots, memory (per machine) → spark.executor.cores and .memory (one executor per machine)   kubernetes.io/instance-type
 *   data_characteristics → spark.bellamy.dataCharacteristics (a configuration key a team might set)
 *   environment → spark.bellamy.environment
 * The scale-out is the number of executors, each on a host of its own; the runtime is the time from
 * the application's start to its end, to the millisecond.
 *
 * usage: gen-eventlogs --data FILE --schema FILE --out-dir DIR [--codec none|zstd|mixed]
 * Logs are named app-NNNNNN[_1.zstd] in the data file's row order; mixed alternates the codecs. */
#include "bellamy/bellamy.h"
#include "bellamy/train.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zstd.h>

/* A growing text buffer. */
typedef struct buf {
    char  *p;
    size_t n, cap;
} buf;

static void put(buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(buf *b, const char *fmt, ...) {
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        const int w = vsnprintf(b->p ? b->p + b->n : NULL, b->p ? b->cap - b->n : 0, fmt, ap);
        va_end(ap);
        if (w < 0) exit(1);
        if (b->p && b->n + (size_t)w < b->cap) {
            b->n += (size_t)w;
            return;
        }
        b->cap = (b->cap + (size_t)w + 1) * 2;
        if (!(b->p = realloc(b->p, b->cap))) exit(1);
    }
}

/* s as a JSON string's content (quotes and backslashes escaped, control characters as \u00XX). */
static void put_json(buf *b, const char *s) {
    for (; *s; s++) {
        const unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') put(b, "\\%c", c);
        else if (c < 0x20) put(b, "\\u%04x", c);
        else put(b, "%c", c);
    }
}

static const char *value_of(const bl_data *d, const char *prop, size_t r) {
    const long p = bl_data_find_property(d, prop);
    const char *v = NULL;
    if (p < 0 || bl_data_value(d, (size_t)p, r, &v, NULL) != BL_OK) return "";
    return v ? v : "";
}

static void conf(buf *b, int *first, const char *key, const char *value) {
    if (!value[0]) return;
    put(b, "%s\"", *first ? "" : ",");
    put_json(b, key);
    put(b, "\":\"");
    put_json(b, value);
    put(b, "\"");
    *first = 0;
}

/* The log of run r (index i), into b. */
static void write_log(const bl_data *d, size_t r, size_t i, buf *b) {
    bl_data_row row;
    bl_data_get_row(d, r, &row);
    const long n = (long)row.scale_out;
    const double t0 = 1700000000000.0 + 3600000.0 * (double)i; /* an hour apart, ms */
    const double t1 = t0 + round(row.runtime_s * 1000.0);
    const char *name = value_of(d, "job_type", r), *args = value_of(d, "job_args", r);
    const char *slots = value_of(d, "slots", r), *memory = value_of(d, "memory", r);
    char mem[64] = "";
    if (memory[0]) snprintf(mem, sizeof mem, "%sm", memory);
    put(b, "{\"Event\":\"SparkListenerLogStart\",\"Spark Version\":\"3.3.1\"}\n");
    put(b, "{\"Event\":\"SparkListenerEnvironmentUpdate\",\"JVM Information\":{\"Java Version\":\"17.0.8\"},"
           "\"Spark Properties\":{");
    int first = 1;
    conf(b, &first, "spark.master", "k8s://https://kubernetes.default.svc:443");
    conf(b, &first, "spark.submit.deployMode", "cluster");
    conf(b, &first, "spark.app.name", name[0] ? name : "job");
    char inst[32];
    snprintf(inst, sizeof inst, "%ld", n);
    conf(b, &first, "spark.executor.instances", inst);
    conf(b, &first, "spark.executor.cores", slots);
    conf(b, &first, "spark.executor.memory", mem);
    conf(b, &first, "spark.kubernetes.node.selector.node.kubernetes.io/instance-type", value_of(d, "machine_type", r));
    conf(b, &first, "spark.bellamy.dataCharacteristics", value_of(d, "data_characteristics", r));
    conf(b, &first, "spark.bellamy.environment", value_of(d, "environment", r));
    put(b, "},\"System Properties\":{\"java.version\":\"17.0.8\",\"sun.java.command\":\"org.apache.spark.deploy."
           "SparkSubmit --deploy-mode cluster --class org.example.Job local:///opt/app/job.jar");
    if (args[0]) {
        put(b, " ");
        put_json(b, args);
    }
    put(b, "\"},\"Classpath Entries\":{}}\n");
    put(b, "{\"Event\":\"SparkListenerApplicationStart\",\"App Name\":\"");
    put_json(b, name[0] ? name : "job");
    put(b, "\",\"App ID\":\"spark-%06zu\",\"Timestamp\":%.0f,\"User\":\"demo\",\"App Attempt ID\":\"1\"}\n", i, t0);
    put(b, "{\"Event\":\"SparkListenerExecutorAdded\",\"Timestamp\":%.0f,\"Executor ID\":\"driver\",\"Executor Info\":"
           "{\"Host\":\"driver-%zu\",\"Total Cores\":1,\"Log Urls\":{}}}\n", t0 + 50, i);
    for (long k = 1; k <= n; k++)
        put(b, "{\"Event\":\"SparkListenerExecutorAdded\",\"Timestamp\":%.0f,\"Executor ID\":\"%ld\",\"Executor Info\":"
               "{\"Host\":\"10.%zu.%ld.%ld\",\"Total Cores\":%s,\"Log Urls\":{}}}\n", t0 + 500 + (double)k, k, i % 250,
               k / 250, k % 250, slots[0] ? slots : "1");
    put(b, "{\"Event\":\"SparkListenerJobStart\",\"Job ID\":0,\"Submission Time\":%.0f,\"Stage Infos\":[],"
           "\"Stage IDs\":[0],\"Properties\":{}}\n", t0 + 1000);
    /* the input read by 4 tasks per executor, in whole bytes summing to the data size */
    const char *mb = value_of(d, "data_size_MB", r);
    const double total = mb[0] ? strtod(mb, NULL) * 1e6 : 0;
    const long tasks = 4 * n;
    double left = total;
    for (long k = 0; k < tasks; k++) {
        const double bytes = k + 1 == tasks ? left : floor(total / (double)tasks);
        left -= bytes;
        put(b, "{\"Event\":\"SparkListenerTaskEnd\",\"Stage ID\":0,\"Stage Attempt ID\":0,\"Task Type\":\"ResultTask\","
               "\"Task End Reason\":{\"Reason\":\"Success\"},\"Task Info\":{\"Task ID\":%ld,\"Index\":%ld,\"Attempt\":0,"
               "\"Launch Time\":%.0f,\"Executor ID\":\"%ld\",\"Host\":\"10.%zu.%ld.%ld\",\"Locality\":\"NODE_LOCAL\","
               "\"Speculative\":false,\"Getting Result Time\":0,\"Finish Time\":%.0f,\"Failed\":false,\"Killed\":false,"
               "\"Accumulables\":[]},\"Task Metrics\":{\"Executor Deserialize Time\":12,\"Executor Run Time\":900,"
               "\"Result Size\":1500,\"JVM GC Time\":5,\"Memory Bytes Spilled\":0,\"Disk Bytes Spilled\":0,"
               "\"Shuffle Read Metrics\":{\"Remote Blocks Fetched\":0,\"Local Blocks Fetched\":0,\"Fetch Wait Time\":0,"
               "\"Remote Bytes Read\":0,\"Local Bytes Read\":0,\"Total Records Read\":0},\"Shuffle Write Metrics\":"
               "{\"Shuffle Bytes Written\":0,\"Shuffle Write Time\":0,\"Shuffle Records Written\":0},\"Input Metrics\":"
               "{\"Bytes Read\":%.0f,\"Records Read\":1000},\"Output Metrics\":{\"Bytes Written\":0,\"Records Written\":0}}}\n",
            k, k, t0 + 1100, 1 + k % n, i % 250, (1 + k % n) / 250, (1 + k % n) % 250, t1 - 200, bytes);
    }
    put(b, "{\"Event\":\"SparkListenerJobEnd\",\"Job ID\":0,\"Completion Time\":%.0f,\"Job Result\":{\"Result\":"
           "\"JobSucceeded\"}}\n", t1 - 100);
    for (long k = 1; k <= n; k++)
        put(b, "{\"Event\":\"SparkListenerExecutorRemoved\",\"Timestamp\":%.0f,\"Executor ID\":\"%ld\",\"Removed Reason\":"
               "\"application finished\"}\n", t1 - 50, k);
    put(b, "{\"Event\":\"SparkListenerApplicationEnd\",\"Timestamp\":%.0f}\n", t1);
}

static int write_file(const char *path, const void *p, size_t n) {
    FILE *f = fopen(path, "wb");
    if (!f) return 0;
    const int ok = fwrite(p, 1, n, f) == n;
    return fclose(f) == 0 && ok;
}

int main(int argc, char **argv) {
    const char *data = NULL, *schema = NULL, *dir = NULL, *codec = "none";
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--data") == 0) data = argv[i + 1];
        else if (strcmp(argv[i], "--schema") == 0) schema = argv[i + 1];
        else if (strcmp(argv[i], "--out-dir") == 0) dir = argv[i + 1];
        else if (strcmp(argv[i], "--codec") == 0) codec = argv[i + 1];
        else {
            data = NULL; /* an unknown option: the usage below */
            break;
        }
    }
    if (!data || !schema || !dir || (strcmp(codec, "none") && strcmp(codec, "zstd") && strcmp(codec, "mixed"))) {
        fprintf(stderr, "usage: gen-eventlogs --data FILE --schema FILE --out-dir DIR [--codec none|zstd|mixed]\n");
        return 2;
    }
    bl_data_opts o;
    bl_data_opts_init(&o);
    o.totals_per_machine = 1; /* slots and memory as a machine has them */
    bl_data *d = NULL;
    bl_error err;
    if (bl_data_load(data, schema, &o, &d, &err) != BL_OK) {
        fprintf(stderr, "gen-eventlogs: %s\n", err.message);
        return 1;
    }
    bl_data_summary s;
    bl_data_summarize(d, &s);
    buf b = {0};
    for (size_t r = 0; r < s.rows; r++) {
        b.n = 0;
        write_log(d, r, r, &b);
        const int z = strcmp(codec, "zstd") == 0 || (strcmp(codec, "mixed") == 0 && r % 2 == 1);
        char path[4200];
        snprintf(path, sizeof path, "%s/app-%06zu_1%s", dir, r, z ? ".zstd" : "");
        int ok;
        if (z) {
            const size_t cap = ZSTD_compressBound(b.n);
            void *c = malloc(cap);
            const size_t zn = c ? ZSTD_compress(c, cap, b.p, b.n, 3) : 0;
            ok = c && !ZSTD_isError(zn) && write_file(path, c, zn);
            free(c);
        } else {
            ok = write_file(path, b.p, b.n);
        }
        if (!ok) {
            fprintf(stderr, "gen-eventlogs: cannot write %s\n", path);
            return 1;
        }
    }
    printf("%zu event logs written to %s\n", s.rows, dir);
    free(b.p);
    bl_data_free(d);
    return 0;
}
