/* fuzz_eventlog.c — libFuzzer target for the Spark event-log reader (src/import/spark.c, stream.c).
 * The input is read as a plain log, then, less its first byte, as a compressed one whose codec that
 * byte picks: zstd, lz4 (lz4-java's blocks), snappy (snappy-java's stream), lz4 still being written
 * (.inprogress), or the zstd part of a rolling log folder whose appstatus is .inprogress. The only
 * acceptable outcomes are records or a clean error that names the file. Not here: the Flink reader. */
#include "import/import.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[4096];

static bl_status on_record(void *ctx, bl_run_record *r, bl_error *err) {
    (void)ctx;
    (void)err;
    size_t n = strlen(r->app_id) + strlen(r->name) + strlen(r->args) + strlen(r->why) + strlen(r->master);
    for (size_t i = 0; i < r->n_conf; i++) n += strlen(r->conf_key[i]) + strlen(r->conf_val[i]);
    (void)n;
    bl_run_record_free(r);
    return BL_OK;
}

static void on_note(void *ctx, const char *file, size_t line, const char *what) {
    (void)ctx;
    (void)line;
    if (!file || !what || !*what) __builtin_trap(); /* every note names its file and says something */
}

static void put(const char *path, const uint8_t *p, size_t n) {
    FILE *f = fopen(path, "wb");
    if (!f) return;
    if (n) fwrite(p, 1, n, f);
    fclose(f);
}

static const char *const names[] = {"app-plain", "app.zstd", "app.lz4", "app.snappy", "app.lz4.inprogress",
                                    "eventlog_v2_app/events_1_app.zstd", "eventlog_v2_app/appstatus_app.inprogress",
                                    "eventlog_v2_app"};

/* At exit: the files of the last input and the folder (libFuzzer ends by exit()). */
static void clean(void) {
    char p[4200];
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, names[i]);
        remove(p);
    }
    remove(dir);
}

static void read_log(const char *path) {
    bl_import_sink sink = {NULL, on_record, on_note};
    bl_error err;
    err.message[0] = '\0';
    if (bl_spark_read_log(path, &sink, &err) != BL_OK && !strstr(err.message, dir))
        __builtin_trap(); /* every failure names the file */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!dir[0]) {
        const char *t = getenv("TMPDIR");
        snprintf(dir, sizeof dir, "%s/fuzz-eventlog-XXXXXX", t && *t ? t : "/tmp");
        if (!mkdtemp(dir)) abort();
        atexit(clean);
        char p[4200];
        snprintf(p, sizeof p, "%s/eventlog_v2_app", dir);
        mkdir(p, 0700);
        snprintf(p, sizeof p, "%s/eventlog_v2_app/appstatus_app.inprogress", dir);
        put(p, NULL, 0);
    }
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, names[0]);
    put(path, data, size);
    read_log(path);
    if (size == 0) return 0;
    const unsigned pick = data[0] % 5u;
    snprintf(path, sizeof path, "%s/%s", dir, names[1 + pick]);
    put(path, data + 1, size - 1);
    if (pick == 4) snprintf(path, sizeof path, "%s/eventlog_v2_app", dir);
    read_log(path);
    return 0;
}
