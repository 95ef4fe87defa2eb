/* eventlog_gen.h — Spark event logs made here for test_import_spark and the fuzz seeds: events as
 * Spark's JsonProtocol writes them, one per line, and the framing of Spark's codecs written with the
 * codec libraries (zstd frames; lz4-java's LZ4BlockOutputStream blocks; snappy-java's
 * SnappyOutputStream chunks). Every helper exits the process on out of memory or a failed write
 * (test code). Not here: reading them (src/import/). */
#ifndef BL_TESTS_EVENTLOG_GEN_H
#define BL_TESTS_EVENTLOG_GEN_H

#include <stddef.h>

/* A growing byte buffer. */
typedef struct elg_buf {
    unsigned char *p;
    size_t n, cap;
} elg_buf;

void elg_add(elg_buf *b, const void *p, size_t n);
void elg_printf(elg_buf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* s as a JSON string, quoted and escaped. */
void elg_str(elg_buf *b, const char *s);
void elg_free(elg_buf *b);

/* Encoders: out gets the whole stream for in[0..n). */
void elg_zstd(const void *in, size_t n, int checksum, elg_buf *out);  /* one frame (with its checksum) */
/* lz4-java blocks of up to block bytes (64 .. 32 MiB; the level from it, as lz4-java picks it), raw
 * where LZ4 does not shrink a block, each with its masked XXH32; then the end block. */
void elg_lz4(const void *in, size_t n, size_t block, elg_buf *out);
/* snappy-java: the 16-byte header, then chunks of up to chunk bytes (n == 0: the header alone). */
void elg_snappy(const void *in, size_t n, size_t chunk, elg_buf *out);

/* Writes p[0..n) to path, encoded by the codec the name gives (.zstd / .zst, .lz4, .snappy; any other
 * name: as is); ".inprogress" and ".compact" after the codec's extension are allowed. */
void elg_write(const char *path, const void *p, size_t n);
/* Writes p[0..n) to path as is. */
void elg_write_raw(const char *path, const void *p, size_t n);

/* Events, each a line ending in '\n'. attempt NULL: no "App Attempt ID" (client mode). props: the
 * inside of the "Spark Properties" object ("\"k\":\"v\",..."); command: sun.java.command or NULL. */
void elg_logstart(elg_buf *b, const char *version);
void elg_env(elg_buf *b, const char *props, const char *command);
void elg_appstart(elg_buf *b, const char *name, const char *id, const char *attempt, double ts);
void elg_append(elg_buf *b, double ts);
void elg_exec_add(elg_buf *b, const char *id, const char *host, int cores, double ts);
void elg_exec_del(elg_buf *b, const char *id, double ts);
void elg_bm_add(elg_buf *b, const char *id, const char *host, double ts);
void elg_bm_del(elg_buf *b, const char *id, double ts);
/* A task's end with input, shuffle read (remote, local) and shuffle write bytes (Spark 3's shape). */
void elg_task_end(elg_buf *b, long task, double in, double remote, double local, double written);
/* A job's end: failed with message when message is not NULL. */
void elg_job_end(elg_buf *b, int job, const char *message);

/* A small complete log of Spark 3.5 on YARN: 2 executors on 2 hosts, 3 tasks (input 600, shuffle read
 * 60 + 6, shuffle write 66), one job that succeeds, from 1000 to 61000 ms, app "app-1" attempt "1"
 * named "small", executor memory 2g with 2 cores; args "in out". */
void elg_small_log(elg_buf *b);

#endif /* BL_TESTS_EVENTLOG_GEN_H */
