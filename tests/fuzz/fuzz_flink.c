/* fuzz_flink.c — libFuzzer target for the Flink reader (src/import/flink.c): the input is written to a
 * file and read as it is (an archive, a /jobs/<jobid> or /jobs/overview answer, or anything else), and
 * when it is UTF-8 text it is also read as the REST answer of every path an archive entry can hold
 * (the job's details, config, exceptions, task managers, cluster configuration, /config). The only
 * acceptable outcomes are records that keep the record's rules, or an error with a message.
 * Seeds: tests/fuzz/corpus_flink/, written by test_import_flink (BELLAMY_FLINK_SEEDS=DIR). */
#include "import/import.h"

#include <jansson.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bl_status take(void *ctx, bl_run_record *r, bl_error *err) {
    (void)ctx;
    (void)err;
    const char *s[] = {r->source, r->engine, r->app_id, r->attempt, r->name, r->version,
                       r->master, r->deploy_mode, r->args, r->why};
    for (size_t i = 0; i < sizeof s / sizeof s[0]; i++)
        if (!s[i]) __builtin_trap();
    if (strcmp(r->engine, "flink") != 0 || !r->app_id[0]) __builtin_trap();
    if ((r->state == BL_RUN_COMPLETE) != (r->why[0] == '\0') || r->state > BL_RUN_INCOMPLETE) __builtin_trap();
    if (r->executors < -1 || r->executors == 0 || r->hosts < -1 || r->executor_cores < -1 || r->executor_cores == 0)
        __builtin_trap();
    if (!isnan(r->input_bytes) && !(r->input_bytes >= 0)) __builtin_trap();
    if (r->state == BL_RUN_COMPLETE && !(r->end_ms >= r->start_ms)) __builtin_trap();
    for (size_t i = 1; i < r->n_conf; i++)
        if (strcmp(r->conf_key[i - 1], r->conf_key[i]) >= 0) __builtin_trap();
    bl_run_record_free(r);
    return BL_OK;
}

static void noted(void *ctx, const char *file, size_t line, const char *what) {
    (void)ctx;
    (void)line;
    if (!file || !what || !what[0]) __builtin_trap();
}

static void read_file(const char *path) {
    const bl_import_sink sink = {NULL, take, noted};
    bl_error e = {BL_OK, ""};
    if (bl_flink_read(path, &sink, &e) != BL_OK && !e.message[0]) __builtin_trap();
    (void)bl_flink_sniff(path);
}

static int write_file(const char *path, const void *p, size_t n) {
    FILE *f = fopen(path, "wb");
    if (!f) return 0;
    const int ok = fwrite(p, 1, n, f) == n;
    return fclose(f) == 0 && ok;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static char path[64];
    if (!path[0]) snprintf(path, sizeof path, "/tmp/fuzz_flink-%ld.json", (long)getpid());
    if (!write_file(path, data, size)) return 0;
    read_file(path);

    /* the input as every answer of one archive */
    json_t *answer = json_stringn((const char *)data, size);
    if (answer) {
        static const char *const paths[] = {
            "/jobs/0123456789abcdef0123456789abcdef", "/jobs/0123456789abcdef0123456789abcdef/config",
            "/jobs/0123456789abcdef0123456789abcdef/exceptions",
            "/jobs/0123456789abcdef0123456789abcdef/vertices/v1/taskmanagers",
            "/jobs/0123456789abcdef0123456789abcdef/jobmanager/config",
            "/jobs/0123456789abcdef0123456789abcdef/jobmanager/environment", "/config", "/jobs/overview"};
        json_t *entries = json_array();
        for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++)
            json_array_append_new(entries, json_pack("{s:s, s:O}", "path", paths[i], "json", answer));
        json_t *top = json_pack("{s:o}", "archive", entries);
        char *text = top ? json_dumps(top, JSON_COMPACT) : NULL;
        if (text && write_file(path, text, strlen(text))) read_file(path);
        free(text);
        json_decref(top);
        json_decref(answer);
    }
    unlink(path);
    return 0;
}
