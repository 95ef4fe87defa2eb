/* sched.h — DBMLSched: scheduling ML jobs that share a CPU and a GPU with a database, and a
 * deterministic discrete-event simulator of it with its baselines.
 *
 * Zheng, Tian, D'silva, Kemme: "DBMLSched: Scheduling In-database Machine Learning Jobs" (AIDB @ VLDB 2023).
 *
 * What it is: a workload (jobs + database load profile, loaded from TSV or generated), a policy
 * (FIFO-GPU, round robin, DBMLSched, DBMLSched driven by a runtime predictor, Oracle SRPT) and a
 * simulation that returns per-job results, summary figures, a Gantt trace and the jobs-in-system curve.
 * What it is not: it does not launch real processes; a real system would call the same policies with
 * measured iteration times in place of simulated ones.
 *
 * Runtime predictions come through bl_sched_predictor, a pair of callbacks. A built-in predictor that
 * learns per-kind, per-device seconds per iteration from finished jobs (bl_sched_history) ships here;
 * a Bellamy-model-backed predictor plugs into the same struct.
 *
 * Workload TSV format (one job per line, tab separated, '#' starts a comment line):
 *   arrival_s  kind  iterations  mode  cpu_s_per_iter  gpu_s_per_iter  cpu_use_pct  gpu_use_pct  [params]
 *     arrival_s       >= 0, seconds since the start
 *     kind            nn | nn_small | nn_large | kmeans | regression
 *     iterations      > 0, the true iteration count (hidden from schedulers when mode is implicit)
 *     mode            explicit | implicit
 *     *_s_per_iter    > 0, true seconds per iteration on that device kind
 *     *_use_pct       0..100, utilisation of that device while the job runs there
 *     params          optional: comma-separated numbers, the kind's context properties ("-" for none)
 *   Directive lines start with '@':
 *     @load  <time_s>  <db_cpu_pct>     database CPU load from time_s on (piecewise constant; default 0)
 *     @set   <key>     <value>          interference (GPU slow-down factor while a CPU job runs, >= 1),
 *                                       overhead (pause and resume cost, seconds)
 *   Lines need not be sorted by arrival_s; jobs are ordered by (arrival_s, line).
 */
#ifndef BELLAMY_SCHED_H
#define BELLAMY_SCHED_H

#include "bellamy.h"
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum bl_sched_device_kind { BL_SCHED_CPU = 0, BL_SCHED_GPU = 1 } bl_sched_device_kind;

typedef enum bl_sched_policy {
    BL_SCHED_FIFO_GPU = 0,       /* every job on the GPU in arrival order (the paper's baseline) */
    BL_SCHED_RR,                 /* one global queue, every device takes the head for one quota */
    BL_SCHED_DBMLSCHED,          /* estimation phase, service-time placement, SRST, quotas, aging, observer */
    BL_SCHED_DBMLSCHED_PRED,     /* DBMLSched with runtimes from a predictor ("DBMLSched + Bellamy") */
    BL_SCHED_ORACLE              /* SRPT with true runtimes, no estimation, no overhead */
} bl_sched_policy;
#define BL_SCHED_NPOLICIES 5

/* One job as a predictor sees it: what the scheduler knows before the job has run. */
typedef struct bl_sched_job_desc {
    const char   *kind;        /* "nn_small", "kmeans", ... */
    double        iterations;  /* known iteration count; 0 when the job is implicit */
    int           implicit;    /* 1: stopping condition unknown to the scheduler */
    const double *params;      /* kind-specific context properties (may be NULL) */
    size_t        n_params;
} bl_sched_job_desc;

typedef struct bl_sched_device_info {
    bl_sched_device_kind kind;
    int                  index;   /* device number within all devices */
    int                  cores;   /* scale-out of the device (CPU cores, GPU count); >= 1 */
} bl_sched_device_info;

/* Runtime predictor. predict() returns BL_OK with *seconds > 0, the whole job's runtime on that
 * device, or any other status (e.g. BL_ENOTFOUND) when it cannot predict; the scheduler then falls
 * back to the estimation phase. observe() receives, once per finished job and device it ran on, the
 * iterations it completed there and the seconds it ran there (scheduling overheads excluded); in
 * observe, job->iterations is the job's total iteration count, which completion reveals even for
 * implicit jobs (job->implicit still says how it was submitted).
 * observe may be NULL. Callbacks must be deterministic for simulations to be reproducible. */
typedef struct bl_sched_predictor {
    void *ctx;
    int  (*predict)(void *ctx, const bl_sched_job_desc *job, const bl_sched_device_info *dev,
                    double *seconds);
    void (*observe)(void *ctx, const bl_sched_job_desc *job, const bl_sched_device_info *dev,
                    double iterations, double seconds);
} bl_sched_predictor;

/* Parameters. Fill with bl_sched_config_default() and change what you need. */
typedef struct bl_sched_config {
    bl_sched_policy policy;
    int      n_cpu, n_gpu;            /* device counts (default 1 and 1) */
    int      cpu_cores, gpu_cores;    /* scale-out passed to predictors (default 1, 1) */
    double   overhead_s;              /* pause and resume cost each; < 0: take the workload's (default -1) */
    double   quota_s;                 /* round-robin quota for implicit jobs and RR (default 10) */
    double   est_fraction;            /* estimation window: fraction of the running job's estimate (0.1) */
    double   est_min_s;               /* ... but at least this long (default 1) */
    double   aging_s;                 /* an explicit job that has waited this long in all (seconds, summed
                                       * over its queue stays) is treated as implicit (300; INFINITY: off) */
    double   cpu_excess_pct;          /* observer: pause CPU job when load exceeds expected by more (20) */
    double   cpu_resume_pct;          /* observer: resume when load < baseline + this (5) */
    double   gpu_drop_pct;            /* pause CPU job when GPU use falls this far below its estimate (20) */
    double   query_slowdown;          /* query latency x (1 + this * CPU ML use/100) (default 1) */
    uint64_t seed;                    /* seeds measurement noise (default 1) */
    double   est_noise;               /* relative noise of measured iteration times in estimation (0) */
    uint64_t max_events;              /* 0: 64 * jobs + 100000; exceeding it is BL_ERANGE */
    int      record_trace;            /* keep Gantt segments and the jobs-in-system curve (default 1) */
} bl_sched_config;

BL_API void bl_sched_config_default(bl_sched_config *cfg);
BL_API const char *bl_sched_policy_name(bl_sched_policy p);           /* "fifo-gpu", ... */
BL_API bl_status bl_sched_policy_parse(const char *name, bl_sched_policy *out, bl_error *err);

/* ---- workloads ---- */
typedef struct bl_sched_workload bl_sched_workload;

typedef struct bl_sched_job_info {
    double      arrival;
    const char *kind;
    double      iterations;
    int         implicit;
    double      s_per_iter[2];        /* [BL_SCHED_CPU], [BL_SCHED_GPU] */
    double      use_pct[2];
} bl_sched_job_info;

/* Reads a TSV workload; errors name the file and line ("w.tsv:7: iterations must be > 0"). */
BL_API bl_status bl_sched_workload_load(const char *path, bl_sched_workload **out, bl_error *err);
/* Parses TSV text; name is used in error messages. */
BL_API bl_status bl_sched_workload_parse(const char *text, size_t len, const char *name,
                                         bl_sched_workload **out, bl_error *err);
/* "paper", "hybrid", "sql" or "poisson:N"; seed drives the random generators. */
BL_API bl_status bl_sched_workload_generate(const char *spec, uint64_t seed, bl_sched_workload **out,
                                            bl_error *err);
BL_API bl_status bl_sched_workload_save(const bl_sched_workload *w, const char *path, bl_error *err);
BL_API size_t    bl_sched_workload_njobs(const bl_sched_workload *w);
BL_API bl_status bl_sched_workload_job(const bl_sched_workload *w, size_t i, bl_sched_job_info *out);
BL_API void      bl_sched_workload_free(bl_sched_workload *w);

/* ---- the built-in history predictor ----
 * Learns, per (kind, device kind, cores), seconds per iteration from observed runs and, per kind, the
 * mean iteration count of finished implicit jobs; predicts iterations x seconds-per-iteration. */
typedef struct bl_sched_history bl_sched_history;
BL_API bl_status bl_sched_history_new(bl_sched_history **out, bl_error *err);
BL_API void      bl_sched_history_free(bl_sched_history *h);
BL_API bl_sched_predictor bl_sched_history_predictor(bl_sched_history *h);
BL_API size_t    bl_sched_history_count(const bl_sched_history *h);   /* observations so far */

/* ---- simulation ---- */
typedef struct bl_sched_result bl_sched_result;

typedef struct bl_sched_summary {
    size_t   n_jobs;
    double   mean_service, median_service, p95_service;   /* completion - arrival, seconds */
    double   makespan;                 /* last completion - first arrival */
    double   estimation_s;             /* device-seconds spent in estimation runs */
    double   overhead_s;               /* device-seconds spent pausing and resuming */
    double   observer_pause_s;         /* seconds the CPU was held back by the observer/interference */
    double   query_inflation_mean;     /* time-mean query latency factor while the DB has load (1: none) */
    double   query_inflation_max;
    int      n_devices;
    double   util[8];                  /* busy share of the makespan per device (first 8 devices) */
    int      device_kind[8];
    uint64_t events;                   /* events processed */
    size_t   preemptions;
} bl_sched_summary;

typedef struct bl_sched_job_result {
    double arrival, first_start, completion, service;
    int    last_device;
    int    preemptions;    /* times it was stopped before finishing */
    int    aged;           /* treated as implicit after waiting too long */
    int    estimated;      /* went through the estimation phase */
    int    predicted;      /* runtime came from the predictor */
} bl_sched_job_result;

typedef struct bl_sched_segment {
    size_t job;
    int    device;
    int    estimation;     /* 1: an estimation run */
    double start, end;
} bl_sched_segment;

/* Runs the workload under cfg->policy. pred is used by BL_SCHED_DBMLSCHED_PRED; NULL there means a
 * fresh built-in history predictor for this run. Other policies ignore pred. */
BL_API bl_status bl_sched_simulate(const bl_sched_workload *w, const bl_sched_config *cfg,
                                   const bl_sched_predictor *pred, bl_sched_result **out, bl_error *err);
BL_API void      bl_sched_result_free(bl_sched_result *r);
BL_API void      bl_sched_result_summary(const bl_sched_result *r, bl_sched_summary *out);
BL_API size_t    bl_sched_result_njobs(const bl_sched_result *r);
BL_API bl_status bl_sched_result_job(const bl_sched_result *r, size_t i, bl_sched_job_result *out);
BL_API size_t    bl_sched_result_nsegments(const bl_sched_result *r);
BL_API bl_status bl_sched_result_segment(const bl_sched_result *r, size_t i, bl_sched_segment *out);
/* Jobs in the system after each arrival/completion: point i is (time, count). */
BL_API size_t    bl_sched_result_ncurve(const bl_sched_result *r);
BL_API bl_status bl_sched_result_curve(const bl_sched_result *r, size_t i, double *time, int *jobs);

#ifdef __cplusplus
}
#endif
#endif /* BELLAMY_SCHED_H */
