/* eventlog_gen.c — Spark event logs and Spark's codec framing for the tests (eventlog_gen.h). */
#include "eventlog_gen.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lz4.h>
#include <snappy-c.h>
#include <xxhash.h>
#include <zstd.h>

#include "import/stream.h"

static void die(const char *what) {
    fprintf(stderr, "eventlog_gen: %s\n", what);
    exit(1);
}

void elg_add(elg_buf *b, const void *p, size_t n) {
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->n + n + 1) cap *= 2;
        unsigned char *q = realloc(b->p, cap);
        if (!q) die("out of memory");
        b->p = q;
        b->cap = cap;
    }
    if (n) memcpy(b->p + b->n, p, n);
    b->n += n;
    b->p[b->n] = '\0';
}

void elg_printf(elg_buf *b, const char *fmt, ...) {
    va_list ap, aq;
    va_start(ap, fmt);
    va_copy(aq, ap);
    const int k = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (k < 0) die("printf");
    char *s = malloc((size_t)k + 1);
    if (!s) die("out of memory");
    vsnprintf(s, (size_t)k + 1, fmt, aq);
    va_end(aq);
    elg_add(b, s, (size_t)k);
    free(s);
}

void elg_str(elg_buf *b, const char *s) {
    elg_add(b, "\"", 1);
    for (; *s; s++) {
        const unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') elg_printf(b, "\\%c", c);
        else if (c == '\n') elg_add(b, "\\n", 2);
        else if (c == '\t') elg_add(b, "\\t", 2);
        else if (c < 0x20) elg_printf(b, "\\u%04x", c);
        else elg_add(b, s, 1);
    }
    elg_add(b, "\"", 1);
}

void elg_free(elg_buf *b) {
    free(b->p);
    memset(b, 0, sizeof *b);
}

/* ---- codecs ----------------------------------------------------------------------------------------- */

void elg_zstd(const void *in, size_t n, int checksum, elg_buf *out) {
    ZSTD_CCtx *c = ZSTD_createCCtx();
    const size_t bound = ZSTD_compressBound(n);
    unsigned char *dst = malloc(bound);
    if (!c || !dst) die("out of memory");
    ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, checksum ? 1 : 0);
    const size_t k = ZSTD_compress2(c, dst, bound, in, n);
    if (ZSTD_isError(k)) die("zstd");
    elg_add(out, dst, k);
    free(dst);
    ZSTD_freeCCtx(c);
}

static void put_le32(unsigned char *p, uint32_t v) {
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
    p[2] = (unsigned char)(v >> 16);
    p[3] = (unsigned char)(v >> 24);
}

static void put_be32(unsigned char *p, uint32_t v) {
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

void elg_lz4(const void *in, size_t n, size_t block, elg_buf *out) {
    if (block < 64 || block > ((size_t)1 << 25)) die("lz4 block size");
    unsigned level = 0; /* the ceiling of log2(block), less 10, at least 0 (lz4-java's compressionLevel) */
    while (((size_t)1 << (10 + level)) < block) level++;
    char *tmp = malloc((size_t)LZ4_compressBound((int)block));
    if (!tmp) die("out of memory");
    const unsigned char *p = in;
    for (size_t off = 0; off < n; off += block) {
        const size_t len = n - off < block ? n - off : block;
        int clen = LZ4_compress_default((const char *)p + off, tmp, (int)len, LZ4_compressBound((int)block));
        unsigned method = 0x20;
        if (clen <= 0 || (size_t)clen >= len) {
            method = 0x10;
            clen = (int)len;
        }
        unsigned char h[21];
        memcpy(h, "LZ4Block", 8);
        h[8] = (unsigned char)(method | level);
        put_le32(h + 9, (uint32_t)clen);
        put_le32(h + 13, (uint32_t)len);
        put_le32(h + 17, XXH32(p + off, len, 0x9747b28cu) & 0x0FFFFFFFu);
        elg_add(out, h, sizeof h);
        elg_add(out, method == 0x10 ? (const void *)(p + off) : (const void *)tmp, (size_t)clen);
    }
    unsigned char end[21] = {0};
    memcpy(end, "LZ4Block", 8);
    end[8] = (unsigned char)(0x10 | level);
    elg_add(out, end, sizeof end);
    free(tmp);
}

void elg_snappy(const void *in, size_t n, size_t chunk, elg_buf *out) {
    unsigned char h[16] = {0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0};
    put_be32(h + 8, 1);
    put_be32(h + 12, 1);
    elg_add(out, h, sizeof h);
    size_t cap = snappy_max_compressed_length(chunk);
    char *tmp = malloc(cap);
    if (!tmp) die("out of memory");
    const char *p = in;
    for (size_t off = 0; off < n; off += chunk) {
        const size_t len = n - off < chunk ? n - off : chunk;
        size_t k = cap;
        if (snappy_compress(p + off, len, tmp, &k) != SNAPPY_OK) die("snappy");
        unsigned char l4[4];
        put_be32(l4, (uint32_t)k);
        elg_add(out, l4, 4);
        elg_add(out, tmp, k);
    }
    free(tmp);
}

void elg_write_raw(const char *path, const void *p, size_t n) {
    FILE *f = fopen(path, "wb");
    if (!f || (n && fwrite(p, 1, n, f) != n) || fclose(f) != 0) die(path);
}

void elg_write(const char *path, const void *p, size_t n) {
    elg_buf e = {0};
    switch (bl_codec_for_name(path, NULL, NULL)) {
    case BL_CODEC_ZSTD: elg_zstd(p, n, 1, &e); break;
    case BL_CODEC_LZ4: elg_lz4(p, n, 32768, &e); break;
    case BL_CODEC_SNAPPY: elg_snappy(p, n, 32768, &e); break;
    default: elg_add(&e, p, n); break;
    }
    elg_write_raw(path, e.p, e.n);
    elg_free(&e);
}

/* ---- events ----------------------------------------------------------------------------------------- */

void elg_logstart(elg_buf *b, const char *version) {
    elg_printf(b, "{\"Event\":\"SparkListenerLogStart\",\"Spark Version\":");
    elg_str(b, version);
    elg_printf(b, "}\n");
}

void elg_env(elg_buf *b, const char *props, const char *command) {
    elg_printf(b, "{\"Event\":\"SparkListenerEnvironmentUpdate\",\"JVM Information\":{\"Java Version\":\"17\"},"
                  "\"Spark Properties\":{%s},\"Hadoop Properties\":{},\"System Properties\":{",
               props);
    if (command) {
        elg_printf(b, "\"java.version\":\"17\",\"sun.java.command\":");
        elg_str(b, command);
    }
    elg_printf(b, "},\"Metrics Properties\":{},\"Classpath Entries\":{}}\n");
}

void elg_appstart(elg_buf *b, const char *name, const char *id, const char *attempt, double ts) {
    elg_printf(b, "{\"Event\":\"SparkListenerApplicationStart\",\"App Name\":");
    elg_str(b, name);
    elg_printf(b, ",\"App ID\":");
    elg_str(b, id);
    elg_printf(b, ",\"Timestamp\":%.0f,\"User\":\"spark\"", ts);
    if (attempt) {
        elg_printf(b, ",\"App Attempt ID\":");
        elg_str(b, attempt);
    }
    elg_printf(b, "}\n");
}

void elg_append(elg_buf *b, double ts) {
    elg_printf(b, "{\"Event\":\"SparkListenerApplicationEnd\",\"Timestamp\":%.0f}\n", ts);
}

void elg_exec_add(elg_buf *b, const char *id, const char *host, int cores, double ts) {
    elg_printf(b, "{\"Event\":\"SparkListenerExecutorAdded\",\"Timestamp\":%.0f,\"Executor ID\":", ts);
    elg_str(b, id);
    elg_printf(b, ",\"Executor Info\":{\"Host\":");
    elg_str(b, host);
    elg_printf(b, ",\"Total Cores\":%d,\"Log Urls\":{},\"Attributes\":{},\"Resources\":{},"
                  "\"Resource Profile Id\":0}}\n", cores);
}

void elg_exec_del(elg_buf *b, const char *id, double ts) {
    elg_printf(b, "{\"Event\":\"SparkListenerExecutorRemoved\",\"Timestamp\":%.0f,\"Executor ID\":", ts);
    elg_str(b, id);
    elg_printf(b, ",\"Removed Reason\":\"idle\"}\n");
}

void elg_bm_add(elg_buf *b, const char *id, const char *host, double ts) {
    elg_printf(b, "{\"Event\":\"SparkListenerBlockManagerAdded\",\"Block Manager ID\":{\"Executor ID\":");
    elg_str(b, id);
    elg_printf(b, ",\"Host\":");
    elg_str(b, host);
    elg_printf(b, ",\"Port\":7079},\"Maximum Memory\":1000000,\"Timestamp\":%.0f}\n", ts);
}

void elg_bm_del(elg_buf *b, const char *id, double ts) {
    elg_printf(b, "{\"Event\":\"SparkListenerBlockManagerRemoved\",\"Block Manager ID\":{\"Executor ID\":");
    elg_str(b, id);
    elg_printf(b, ",\"Host\":\"h\",\"Port\":7079},\"Timestamp\":%.0f}\n", ts);
}

void elg_task_end(elg_buf *b, long task, double in, double remote, double local, double written) {
    elg_printf(b,
               "{\"Event\":\"SparkListenerTaskEnd\",\"Stage ID\":0,\"Stage Attempt ID\":0,\"Task Type\":\"ResultTask\","
               "\"Task End Reason\":{\"Reason\":\"Success\"},\"Task Info\":{\"Task ID\":%ld,\"Executor ID\":\"1\"},"
               "\"Task Metrics\":{\"Executor Run Time\":10,\"Input Metrics\":{\"Bytes Read\":%.0f,\"Records Read\":1},"
               "\"Shuffle Read Metrics\":{\"Remote Blocks Fetched\":1,\"Remote Bytes Read\":%.0f,\"Local Bytes Read\":%.0f},"
               "\"Shuffle Write Metrics\":{\"Shuffle Bytes Written\":%.0f,\"Shuffle Records Written\":1}}}\n",
               task, in, remote, local, written);
}

void elg_job_end(elg_buf *b, int job, const char *message) {
    elg_printf(b, "{\"Event\":\"SparkListenerJobEnd\",\"Job ID\":%d,\"Completion Time\":5000,\"Job Result\":", job);
    if (!message) elg_printf(b, "{\"Result\":\"JobSucceeded\"}}\n");
    else {
        elg_printf(b, "{\"Result\":\"JobFailed\",\"Exception\":{\"Message\":");
        elg_str(b, message);
        elg_printf(b, ",\"Stack Trace\":[]}}}\n");
    }
}

void elg_small_log(elg_buf *b) {
    elg_logstart(b, "3.5.1");
    elg_bm_add(b, "driver", "drv", 900);
    elg_env(b, "\"spark.master\":\"yarn\",\"spark.submit.deployMode\":\"cluster\",\"spark.executor.memory\":\"2g\","
               "\"spark.executor.cores\":\"2\",\"spark.app.name\":\"small\"",
            "org.apache.spark.deploy.yarn.ApplicationMaster --class 'Main' --jar file:/app.jar --arg 'in' --arg 'out' "
            "--properties-file /conf/__spark_conf__.properties");
    elg_appstart(b, "small", "app-1", "1", 1000);
    elg_exec_add(b, "1", "host-a", 2, 2000);
    elg_bm_add(b, "1", "host-a", 2001);
    elg_exec_add(b, "2", "host-b", 2, 2100);
    elg_bm_add(b, "2", "host-b", 2101);
    elg_printf(b, "{\"Event\":\"SparkListenerJobStart\",\"Job ID\":0,\"Submission Time\":3000,\"Stage Infos\":[],"
                  "\"Stage IDs\":[0]}\n");
    for (long t = 0; t < 3; t++) {
        elg_printf(b, "{\"Event\":\"SparkListenerTaskStart\",\"Stage ID\":0,\"Task Info\":{\"Task ID\":%ld}}\n", t);
        elg_task_end(b, t, 200, 20, 2, 22);
    }
    elg_job_end(b, 0, NULL);
    elg_append(b, 61000);
}
