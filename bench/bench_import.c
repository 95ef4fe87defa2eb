/* bench_import.c — how fast the Spark event-log reader reads, and in how much memory: a generated log of
 * SparkListenerTaskEnd lines (as Spark 3 writes them, ~1.2 kB each) read plain and zstd-compressed on
 * one core, at two sizes (memory must not grow with the log), against Python's json module parsing the
 * same lines (python3, when there). Prints MB/s of the uncompressed log and the reading process's peak
 * resident memory (each read runs in a child process of its own).
 *
 * usage: bench_import [--lines N] (default 200000: a log of ~240 MB; the second size is 2 N) */
#define _DEFAULT_SOURCE /* wait4: a child's own peak memory */
#include "bench_args.h"
#include "import/import.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <zstd.h>

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* One task's end, as Spark 3.5 writes it (the fields a history has, not only those the reader uses). */
static int task_line(char *b, size_t cap, long k) {
    return snprintf(b, cap,
        "{\"Event\":\"SparkListenerTaskEnd\",\"Stage ID\":%ld,\"Stage Attempt ID\":0,\"Task Type\":\"ShuffleMapTask\","
        "\"Task End Reason\":{\"Reason\":\"Success\"},\"Task Info\":{\"Task ID\":%ld,\"Index\":%ld,\"Attempt\":0,"
        "\"Partition ID\":%ld,\"Launch Time\":1700000001%03ld,\"Executor ID\":\"%ld\",\"Host\":\"10.0.%ld.%ld\","
        "\"Locality\":\"PROCESS_LOCAL\",\"Speculative\":false,\"Getting Result Time\":0,\"Finish Time\":1700000002%03ld,"
        "\"Failed\":false,\"Killed\":false,\"Accumulables\":[{\"ID\":%ld,\"Name\":\"internal.metrics.executorRunTime\","
        "\"Update\":812,\"Value\":%ld,\"Internal\":true,\"Count Failed Values\":true}]},\"Task Executor Metrics\":"
        "{\"JVMHeapMemory\":0,\"JVMOffHeapMemory\":0,\"OnHeapExecutionMemory\":0,\"OffHeapExecutionMemory\":0},"
        "\"Task Metrics\":{\"Executor Deserialize Time\":12,\"Executor Deserialize CPU Time\":9110203,"
        "\"Executor Run Time\":812,\"Executor CPU Time\":701234562,\"Peak Execution Memory\":0,\"Result Size\":2351,"
        "\"JVM GC Time\":17,\"Result Serialization Time\":0,\"Memory Bytes Spilled\":0,\"Disk Bytes Spilled\":0,"
        "\"Shuffle Read Metrics\":{\"Remote Blocks Fetched\":3,\"Local Blocks Fetched\":1,\"Fetch Wait Time\":0,"
        "\"Remote Bytes Read\":%ld,\"Remote Bytes Read To Disk\":0,\"Local Bytes Read\":%ld,\"Total Records Read\":1000},"
        "\"Shuffle Write Metrics\":{\"Shuffle Bytes Written\":%ld,\"Shuffle Write Time\":1234567,\"Shuffle Records "
        "Written\":1000},\"Input Metrics\":{\"Bytes Read\":%ld,\"Records Read\":50000},\"Output Metrics\":"
        "{\"Bytes Written\":0,\"Records Written\":0},\"Updated Blocks\":[]}}\n",
        k / 1000, k, k % 1000, k % 1000, k % 1000, 1 + k % 16, k % 16, 1 + k % 200, k % 1000, 1000 + k, 812 * (k + 1),
        4096 + k % 7, 2048 + k % 5, 8192 + k % 11, 134217728 + k % 13);
}

/* Writes a log of n task lines between an application's start and end, plain to path and zstd to
 * path.zstd; returns the plain size in bytes (0 on failure). */
static size_t write_logs(const char *path, long n) {
    char zpath[4400];
    snprintf(zpath, sizeof zpath, "%s.zstd", path);
    FILE *p = fopen(path, "wb"), *z = fopen(zpath, "wb");
    ZSTD_CCtx *cc = ZSTD_createCCtx();
    if (!p || !z || !cc) return 0;
    ZSTD_CCtx_setParameter(cc, ZSTD_c_compressionLevel, 1); /* Spark's default zstd level */
    size_t out_cap = ZSTD_CStreamOutSize(), total = 0;
    char *out = malloc(out_cap), line[4096];
    if (!out) return 0;
    for (long k = -2; k <= n; k++) {
        int len;
        if (k == -2)
            len = snprintf(line, sizeof line, "{\"Event\":\"SparkListenerLogStart\",\"Spark Version\":\"3.5.1\"}\n"
                           "{\"Event\":\"SparkListenerApplicationStart\",\"App Name\":\"bench\",\"App ID\":"
                           "\"app-bench\",\"Timestamp\":1700000000000,\"User\":\"b\",\"App Attempt ID\":\"1\"}\n");
        else if (k == -1)
            len = snprintf(line, sizeof line, "{\"Event\":\"SparkListenerExecutorAdded\",\"Timestamp\":1700000000500,"
                           "\"Executor ID\":\"1\",\"Executor Info\":{\"Host\":\"10.0.0.1\",\"Total Cores\":4,"
                           "\"Log Urls\":{}}}\n");
        else if (k == n)
            len = snprintf(line, sizeof line, "{\"Event\":\"SparkListenerApplicationEnd\",\"Timestamp\":1700003600000}\n");
        else
            len = task_line(line, sizeof line, k);
        if (len <= 0 || fwrite(line, 1, (size_t)len, p) != (size_t)len) return 0;
        total += (size_t)len;
        ZSTD_inBuffer in = {line, (size_t)len, 0};
        while (in.pos < in.size) {
            ZSTD_outBuffer ob = {out, out_cap, 0};
            if (ZSTD_isError(ZSTD_compressStream2(cc, &ob, &in, ZSTD_e_continue))) return 0;
            fwrite(out, 1, ob.pos, z);
        }
    }
    for (size_t left = 1; left;) {
        ZSTD_inBuffer in = {NULL, 0, 0};
        ZSTD_outBuffer ob = {out, out_cap, 0};
        left = ZSTD_compressStream2(cc, &ob, &in, ZSTD_e_end);
        if (ZSTD_isError(left)) return 0;
        fwrite(out, 1, ob.pos, z);
    }
    free(out);
    ZSTD_freeCCtx(cc);
    return fclose(p) == 0 && fclose(z) == 0 ? total : 0;
}

static bl_status drop(void *ctx, bl_run_record *r, bl_error *err) {
    (void)err;
    *(long *)ctx += r->state == BL_RUN_COMPLETE;
    bl_run_record_free(r);
    return BL_OK;
}
static void quiet(void *ctx, const char *file, size_t line, const char *what) {
    (void)ctx, (void)file, (void)line, (void)what;
}

/* Runs argv (argv[0] == NULL: the library's reader on path) in a child; its wall seconds and peak RSS
 * (MiB). 0 on success. */
static int measure(const char *path, char *const *argv, double *secs, double *rss_mib) {
    fflush(NULL);
    const double t0 = now_s();
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        if (argv) {
            int null = open("/dev/null", 1);
            if (null >= 0) dup2(null, 1);
            execvp(argv[0], argv);
            _exit(127);
        }
        long complete = 0;
        bl_import_sink sink = {&complete, drop, quiet};
        bl_error e;
        _exit(bl_spark_read_log(path, &sink, &e) == BL_OK && complete == 1 ? 0 : 3);
    }
    int status;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) != pid) return -1;
    *secs = now_s() - t0;
    *rss_mib = (double)ru.ru_maxrss / 1024.0;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

int main(int argc, char **argv) {
    int rc = bench_args(argc, argv, "bench_import", "[--lines N]");
    if (rc >= 0) return rc;
    long lines = 200000;
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], "--lines") == 0) lines = strtol(argv[i + 1], NULL, 10);
    if (lines < 1000 || lines > 100000000) {
        fprintf(stderr, "bench_import: --lines must be 1000..100000000\n");
        return 2;
    }
    char dir[] = "/tmp/bench-import-XXXXXX";
    if (!mkdtemp(dir)) return 1;
    printf("bench_import: %s; a Spark event log of SparkListenerTaskEnd lines read on one core\n", bl_version());
    printf("%-10s %-8s %10s %10s %12s %12s\n", "lines", "reader", "MB", "seconds", "MB/s", "peak MiB");
    int status = 0;
    for (int size = 1; size <= 2; size++) {
        const long n = lines * size;
        char plain[4200], z[4300];
        snprintf(plain, sizeof plain, "%s/app-%d", dir, size);
        snprintf(z, sizeof z, "%s.zstd", plain);
        const size_t bytes = write_logs(plain, n);
        if (!bytes) {
            fprintf(stderr, "bench_import: cannot write %s\n", plain);
            return 1;
        }
        const double mb = (double)bytes / 1e6;
        double s, m;
        const char *names[] = {"plain", "zstd"};
        const char *paths[] = {plain, z};
        for (int k = 0; k < 2; k++) {
            if (measure(paths[k], NULL, &s, &m) != 0) {
                fprintf(stderr, "bench_import: reading %s failed\n", paths[k]);
                status = 1;
                continue;
            }
            printf("%-10ld %-8s %10.1f %10.2f %12.1f %12.1f\n", n, names[k], mb, s, mb / s, m);
        }
        char *py[] = {"python3", "-c",
                      "import json, sys\n"
                      "n = 0\n"
                      "with open(sys.argv[1], 'rb') as f:\n"
                      "    for line in f:\n"
                      "        json.loads(line); n += 1\n"
                      "print(n)\n",
                      plain, NULL};
        if (measure(plain, py, &s, &m) == 0) printf("%-10ld %-8s %10.1f %10.2f %12.1f %12.1f\n", n, "python", mb, s, mb / s, m);
        else printf("%-10ld %-8s (python3 not found or failed)\n", n, "python");
        remove(plain);
        remove(z);
    }
    rmdir(dir);
    return status;
}
