/* import.h — run histories from where clusters keep them: Spark event logs (the files the Spark History
 * Server reads, one per application attempt) and Flink job archives (the JSON the Flink History Server
 * serves), read into one record per application attempt or job, for bellamy-train import to write as a
 * data file with its schema.
 *
 * Readers never fail on what a newer engine adds (an unknown event or field is counted, never an
 * error) and never keep a whole log in memory: Spark logs are read line by line as a stream, whatever
 * their size. A log that cannot be read as a whole (cut mid-frame, not JSON at all) is an error naming
 * the file and line; a line that is damaged inside a readable log is skipped and noted (sink->note).
 * Not here: finding the logs under the user's paths and writing the data file (import.c), the JSON
 * library (Jansson) or the codecs (libzstd, liblz4, libsnappy) themselves.
 */
#ifndef BL_IMPORT_IMPORT_H
#define BL_IMPORT_IMPORT_H

#include <stddef.h>

#include "bellamy/bellamy.h"

typedef enum bl_run_state {
    BL_RUN_COMPLETE = 0,   /* ended, every job succeeded */
    BL_RUN_FAILED = 1,     /* ended, but a job (Spark) or the job (Flink) failed or was cancelled */
    BL_RUN_INCOMPLETE = 2  /* still being written (.inprogress), or it never ended */
} bl_run_state;

/* One application attempt (Spark) or one job (Flink). Strings are malloc'd and never NULL ("" when
 * unknown); numbers are -1 (counts) or NaN (amounts) when unknown. */
typedef struct bl_run_record {
    char  *source;             /* the log: a file, or a rolling log's folder */
    char  *engine;             /* "spark" or "flink" */
    char  *app_id;             /* Spark: the application id; Flink: the job id */
    char  *attempt;            /* Spark: the attempt id ("" where the log has none: client mode, local);
                                  Flink: "" */
    char  *name;               /* application / job name */
    char  *version;            /* engine version */
    char  *master;             /* Spark: yarn, k8s, standalone, local, mesos (from spark.master) */
    char  *deploy_mode;        /* Spark: client or cluster */
    double start_ms, end_ms;   /* epoch milliseconds (Spark: application start and end events;
                                  Flink: the job's start-time and end-time) */
    long   hosts;              /* Spark: distinct executor hosts when the most executors ran at once;
                                  Flink: task managers that ran the job's subtasks */
    long   executors;          /* Spark: the most executors that ran at once (the driver not counted);
                                  Flink: the largest parallelism of a vertex */
    int    dynamic_allocation; /* Spark: 1 on, 0 off (spark.dynamicAllocation.enabled); -1 unknown */
    long   executor_cores;     /* cores per executor (or task slots per task manager) */
    double executor_memory_mb; /* memory per executor in MiB (spark.executor.memory) */
    double input_bytes;        /* bytes read from input by all tasks (Spark task metrics; Flink: read-bytes
                                  of the sources) */
    double shuffle_read_bytes, shuffle_write_bytes; /* Spark task metrics (local and remote reads) */
    char  *args;               /* the job's arguments: Spark, sun.java.command after the main class or
                                  the application file; "" when none */
    bl_run_state state;
    char  *why;                /* FAILED / INCOMPLETE: what shows it ("job 3 failed: ...", "the log ends
                                  before the application does"); "" when complete */
    size_t n_conf;             /* configuration: Spark properties / Flink job configuration, sorted by key */
    char **conf_key, **conf_val;
    size_t unknown_events;     /* events of kinds this reader does not know (counted, never an error) */
} bl_run_record;

/* A new record: every string "", every number unknown (-1 / NaN), state COMPLETE. NULL: out of memory. */
bl_run_record *bl_run_record_new(const char *source, const char *engine);
void bl_run_record_free(bl_run_record *r);
/* Sets *field (one of r's strings) to a copy of value; BL_ENOMEM. */
bl_status bl_run_record_set(char **field, const char *value, bl_error *err);
/* Adds a configuration entry (kept sorted; a key given again replaces its value); BL_ENOMEM. */
bl_status bl_run_record_conf(bl_run_record *r, const char *key, const char *value, bl_error *err);
/* The value of a configuration key, or NULL. */
const char *bl_run_record_get(const bl_run_record *r, const char *key);

/* Where records and notes go. */
typedef struct bl_import_sink {
    void *ctx;
    /* One record; the sink owns it from here (frees it with bl_run_record_free, also on error). A status
     * other than BL_OK stops the reading and is returned by the reader. */
    bl_status (*record)(void *ctx, bl_run_record *r, bl_error *err);
    /* What was skipped or noted while reading, and what was done: file, line (0: the file as a whole). */
    void (*note)(void *ctx, const char *file, size_t line, const char *what);
} bl_import_sink;

/* One Spark event log: a file — plain, compressed by Spark's codecs by name (".zstd" or ".zst": zstd
 * frames; ".lz4": Spark's LZ4 block stream, not the lz4 frame format; ".snappy": snappy-java's
 * stream), possibly ".inprogress" — or a rolling log's folder ("eventlog_v2_<app>" with its
 * "events_<n>_<app>[.<codec>]" parts read in order of n, and "appstatus_<app>[.inprogress]"). Gives
 * one record per application attempt found (a record's state says whether it ended and succeeded).
 * BL_EIO naming the file when it cannot be read; BL_EFORMAT "FILE:LINE: ..." when it is no event log
 * at all (its first event is no JSON object with "Event") or a compressed stream is cut or damaged
 * (what was read up to there is not used: never half a record); BL_EUNSUPPORTED for Spark's LZF codec
 * (".lzf"), saying what to do instead. */
bl_status bl_spark_read_log(const char *path, const bl_import_sink *sink, bl_error *err);

/* 1 when path looks like a Spark event log (by its name: a codec extension, "eventlog_v2_" folder, or
 * by its first bytes: a JSON line with "Event":"SparkListener...); 0 otherwise. Reads at most 4 KiB. */
int bl_spark_sniff(const char *path);

/* One Flink job: a JobManager / History Server archive (a JSON object {"archive":[{"path": ...,
 * "json": "<the REST answer as text>"}, ...]}) or a saved answer of the REST API's /jobs/<jobid>
 * (a JSON object with "jid", "name", "state", "start-time", "end-time", "duration", "vertices").
 * Gives one record (job id, name, state, duration, the largest vertex parallelism and the task
 * managers used). BL_EIO, BL_EFORMAT "FILE: ..." naming what is missing or mistyped. */
bl_status bl_flink_read(const char *path, const bl_import_sink *sink, bl_error *err);

/* 1 when path looks like a Flink archive or a saved /jobs/<id> answer (its first 4 KiB: a JSON object
 * with "archive" or "jid"); 0 otherwise. */
int bl_flink_sniff(const char *path);

/* ---- the data file (write.c) ---------------------------------------------------------------------- */

/* How runs become rows (the internal form of bl_import_opts). */
typedef struct bl_import_plan {
    int     scale_out_executors; /* the schema's scale-out: 0 distinct executor hosts, 1 executors */
    int     redact;              /* 1: the args column left empty */
    size_t  n_props;             /* --property NAME=KEY: a column NAME holding configuration value KEY */
    char  **prop_name, **prop_key;
    size_t  n_consts;            /* --const NAME=VALUE: a constant property of the schema */
    char  **const_name, **const_val;
} bl_import_plan;

typedef struct bl_import_counts {
    size_t added;          /* rows added */
    size_t kept;           /* rows the data file held already (all kept) */
    size_t already;        /* runs given that it held already (not added again) */
    int    schema_written; /* 1: a schema was written (0: none asked, or the user's was kept) */
} bl_import_counts;

/* The fixed columns of an imported data file, in order (the --property columns follow them). */
const char *const *bl_import_columns(size_t *n);

/* Adds recs[0..n) (runs to import, already filtered and without duplicates among themselves) to the
 * data file data_path, keeping every row it holds (it must have this import's columns; a run it holds
 * is not added again), replacing it whole; writes schema_path (may be NULL) when no file is there.
 * BL_EFORMAT naming the data file when its columns differ; BL_EIO when a file cannot be written. */
bl_status bl_import_write(bl_run_record *const *recs, size_t n, const bl_import_plan *p, const char *data_path,
                          const char *schema_path, bl_import_counts *counts, bl_error *err);

#endif /* BL_IMPORT_IMPORT_H */
