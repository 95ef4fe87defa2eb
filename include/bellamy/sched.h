/* sched.h — DBMLSched: scheduling ML jobs that share a CPU and a GPU with a database, and a
 * deterministic discrete-event simulator of it with its baselines.
 *
 * Zheng, Tian, D'silva, Kemme: "DBMLSched: Scheduling In-database Machine Learning Jobs" (AIDB @ VLDB 2023).
 *
 * Two layers:
 *  - the scheduler core (bl_sched_core_*): the policies (FIFO-GPU, round robin, DBMLSched, DBMLSched
 *    driven by a runtime predictor, Oracle SRPT) as an event-driven library. A host (a real system, or
 *    the simulator) tells it what happens -- a job arrives, a job reaches an iteration boundary or
 *    finishes, the database's CPU use or a GPU's utilisation changes -- and the core answers with
 *    actions: start a job on a device for up to T seconds (or an estimation run), pause a job at an
 *    iteration boundary, or nothing until time T. The core never reads a clock and never runs anything.
 *  - the simulator (bl_sched_simulate): a workload (jobs + database load profile, loaded from TSV or
 *    generated) run through the core. The simulator owns the clock, the (time, seq) event heap, the
 *    job progress model, database load and interference, and returns per-job results, summary figures,
 *    a Gantt trace and the jobs-in-system curve.
 *
 * Runtime predictions come through bl_sched_predictor, a pair of callbacks. Two ship here: the Bellamy
 * predictor (bl_sched_bellamy: a Bellamy model trained on the history of finished runs and fine-tuned
 * as it grows -- what "DBMLSched + Bellamy" means, and dbmlsched-sim's default) and a built-in one that
 * learns per-kind, per-device seconds per iteration (bl_sched_history; the default when no predictor
 * is passed to bl_sched_core_new / bl_sched_simulate).
 *
 * Workload TSV format (one job per line, tab separated, '#' starts a comment line):
 *   arrival_s  kind  iterations  mode  cpu_s_per_iter  gpu_s_per_iter  cpu_use_pct  gpu_use_pct  [params]
 *     arrival_s       0 .. 1e12, seconds since the start
 *     kind            nn | nn_small | nn_large | kmeans | regression
 *     iterations      > 0, the true iteration count (hidden from schedulers when mode is implicit)
 *     mode            explicit | implicit
 *     *_s_per_iter    > 0, true seconds per iteration on that device kind; iterations x each of them (the
 *                     job's work on the device) at most 1e12 s, so that a run's times stay finite
 *     *_use_pct       0..100, utilisation of that device while the job runs there
 *     params          optional: up to 4 comma-separated numbers ("-" for none, the default): the job's
 *                     context properties for a predictor (the simulator never reads them); the built-in
 *                     workloads give every kind one, its training data's size in thousands of rows
 *   Directive lines start with '@', their fields tab-separated like a job's (a line written with
 *   spaces is an error that says so and spells out the line with tabs):
 *     @load  <time_s>  <db_cpu_pct>     database CPU load from time_s on (piecewise constant; default 0)
 *     @set   <key>     <value>          interference (GPU slow-down factor while a CPU job runs, 1 .. 1e6),
 *                                       overhead (pause and resume cost, 0 .. 1e12 seconds)
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

/* Parameters. Fill with bl_sched_config_default() and change what you need. The scheduler core reads
 * the policy, device and threshold fields, seed and est_noise; query_slowdown, max_events and
 * record_trace are the simulator's. */
typedef struct bl_sched_config {
    bl_sched_policy policy;
    int      n_cpu, n_gpu;            /* device counts (default 1 and 1) */
    int      cpu_cores, gpu_cores;    /* scale-out passed to predictors (default 1, 1) */
    double   overhead_s;              /* pause and resume cost each; < 0: take the workload's (default -1).
                                       * For the core: > 0 means a paused device stays busy until
                                       * bl_sched_core_device_ready(); otherwise it is free at once */
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
    double   est_noise;               /* relative noise of measured iteration times in estimation (0);
                                       * a simulation knob: leave 0 in a real system */
    uint64_t max_events;              /* 0: 64 * jobs + 100000 + 8 * the jobs' iterations (each counted up
                                         to 1e8, the term up to 2e9); exceeding it is BL_ERANGE, said
                                         before the run for round robin when its turns alone (an event
                                         per quota_s, at least one per iteration) would pass it */
    int      record_trace;            /* what a simulation keeps besides its summary: 0 the per-job results;
                                       * 1 (default) also the Gantt segments and the whole jobs-in-system
                                       * curve; or an OR of the BL_SCHED_TRACE_* flags below */
} bl_sched_config;

/* Flags of bl_sched_config.record_trace (1, the default, means SEGMENTS | CURVE). A simulation's memory
 * grows with the jobs in the system at once, except for what these keep and the workload itself:
 * about 8 bytes per job for the exact median and p95, plus per-job results (56 bytes) unless NO_JOBS,
 * the curve (12 bytes per arrival and completion) with CURVE, the segments (40 bytes per run) with
 * SEGMENTS. */
#define BL_SCHED_TRACE_SEGMENTS 0x2  /* Gantt segments: one per run of a job on a device */
#define BL_SCHED_TRACE_CURVE    0x4  /* the jobs-in-system curve, a point per arrival and completion */
#define BL_SCHED_TRACE_PLOT     0x8  /* instead of CURVE: the curve thinned as it is recorded to at most
                                      * BL_SCHED_PLOT_POINTS points, enough for a picture and no more: time
                                      * is cut into at most 1024 equal spans (fewer as the run goes on:
                                      * they double in length when needed) and each span keeps its first,
                                      * last, lowest and highest point, in time order, so a step plot keeps
                                      * its shape, its extremes and its first and last points. A curve of
                                      * at most BL_SCHED_PLOT_POINTS points is kept whole. */
#define BL_SCHED_TRACE_NO_JOBS  0x10 /* no per-job results (bl_sched_result_njobs is 0): a summary-only
                                      * run's memory stays flat in the number of jobs */
#define BL_SCHED_PLOT_POINTS    4096

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

/* Reads a TSV workload, line by line (its text is never held whole); errors name the file and line
 * ("w.tsv:7: iterations must be > 0"). */
BL_API bl_status bl_sched_workload_load(const char *path, bl_sched_workload **out, bl_error *err);
/* Parses TSV text; name is used in error messages. */
BL_API bl_status bl_sched_workload_parse(const char *text, size_t len, const char *name,
                                         bl_sched_workload **out, bl_error *err);
/* "paper", "hybrid", "sql" or "poisson:N" with 1 <= N <= 10 000 000 (BL_ERANGE above: a workload
 * keeps about 64 bytes per job and a simulation 8 more, or 64 more with per-job results); seed drives
 * the random generators. A TSV workload holds at most 10 000 000 jobs as well. */
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

/* ---- the Bellamy predictor ("DBMLSched + Bellamy") ----
 * Keeps a history of finished runs and trains a Bellamy model on it: one row per finished job and
 * device kind it ran on, with job kind, params and the known iteration count (0 for an implicit job)
 * as context properties (job_type, job_args, x_iterations), the device kind as machine_type
 * ("cpu"/"gpu"), the device's core count as the scale-out, and the whole job's seconds there
 * (extrapolated from the iterations it ran there) as the runtime. The model is trained when the
 * history reaches 1, 2, ..., every_until rows, then each time it has grown by `growth`, and at once
 * when a (kind, device kind, mode) appears for the first time; each training reads at most the
 * max_rows most recent rows and fine-tunes the previous model (warm_start) or a fresh seeded one.
 * predict() answers BL_ENOTFOUND until the model has seen min_obs rows of the job's (kind, device
 * kind, mode). Deterministic: the same observations in the same order give the same predictions. */
typedef struct bl_sched_bellamy bl_sched_bellamy;

typedef struct bl_sched_bellamy_opts {
    uint64_t seed;          /* initialisation of the first model (default 1) */
    size_t   min_obs;       /* rows of a (kind, device kind, mode) before it is predicted (1) */
    size_t   every_until;   /* train after every observation while the history is below this (32) */
    double   growth;        /* then train when the history has grown by this factor (> 1; default 2) */
    size_t   max_rows;      /* train on at most this many most recent rows (256) */
    long     max_epochs;    /* per training (1500) */
    long     patience;      /* epochs without improvement before a training stops (300) */
    double   stop_rel;      /* a training stops when its MAE <= stop_rel x mean runtime (0.005) */
    double   lr_min, lr_max;/* fine-tuning learning-rate range (cyclical ramp, then cosine) */
    double   weight_decay;  /* Adam's weight decay during training */
    int      warm_start;    /* 1: fine-tune the previous model; 0: a fresh model each time (1) */
    int      per_iteration; /* 1: explicit jobs are learned at a reference size (the first count seen
                             * of their kind and device kind) and predictions scaled by count / reference;
                             * 0: the count is only a context property (default 1) */
} bl_sched_bellamy_opts;

typedef struct bl_sched_bellamy_stats {
    size_t observations;    /* rows observed in all */
    size_t rows;            /* rows held for training now (<= max_rows) */
    size_t trainings;       /* successful trainings */
    size_t failures;        /* failed trainings (the previous model was kept) */
    size_t predictions;     /* predict() calls answered */
    size_t fallbacks;       /* predict() calls answered BL_ENOTFOUND */
    size_t last_rows;       /* rows of the last training */
    long   last_epochs;     /* epochs of the last training */
    long   epochs_total;    /* epochs over all trainings */
    double last_mae;        /* training MAE (seconds) of the last training */
} bl_sched_bellamy_stats;

BL_API void      bl_sched_bellamy_opts_default(bl_sched_bellamy_opts *o);
/* opts NULL: the defaults. */
BL_API bl_status bl_sched_bellamy_new(const bl_sched_bellamy_opts *opts, bl_sched_bellamy **out, bl_error *err);
BL_API void      bl_sched_bellamy_free(bl_sched_bellamy *b);
/* The predictor to pass to bl_sched_simulate / bl_sched_core_new; b must outlive their use of it. */
BL_API bl_sched_predictor bl_sched_bellamy_predictor(bl_sched_bellamy *b);
BL_API void      bl_sched_bellamy_stats_get(const bl_sched_bellamy *b, bl_sched_bellamy_stats *out);


/* ---- the scheduler core ----
 * An event-driven DBMLSched scheduler (and its baselines) that a real system can call. The host
 * reports events with the time they happened (non-decreasing `now`, seconds on any fixed origin) and
 * carries out the actions the core decides. Devices are numbered 0 .. n_cpu-1 (CPUs), then the GPUs;
 * job ids are 0, 1, 2, ... in submission order. At most one job runs per device.
 *
 * Rules the host follows:
 *  - START: run a.job on a.device for up to a.seconds from now (resume overhead included; INFINITY:
 *    to completion), then stop at the first iteration boundary after that. a.estimation marks an
 *    estimation run. A job that was started before is being resumed.
 *  - PAUSE: stop a.job at its first iteration boundary at or after time a.at (a.at <= now: the next
 *    boundary). A later PAUSE or the end of its slice, whichever comes first, wins.
 *  - When the job reaches a boundary where it was to stop, ask bl_sched_core_pause_point(): 1 means keep
 *    it running (no pause) for up to *seconds more; 0 means pause it and report bl_sched_core_paused().
 *  - When a job completes, report bl_sched_core_finished() (this reveals an implicit job's count).
 *  - If cfg.overhead_s > 0, a device that paused a job is busy until bl_sched_core_device_ready().
 *  - Report the database's CPU use (everything but the scheduled ML jobs) with
 *    bl_sched_core_cpu_utilisation() when it changes, and GPU utilisation with
 *    bl_sched_core_gpu_utilisation(); optionally iteration progress with bl_sched_core_iteration_end().
 *  - Drain actions with bl_sched_core_next_action() after each report; BL_SCHED_ACT_NONE says
 *    nothing is to be done until a.at (INFINITY: until the next report). Call it again at a.at:
 *    timers (aging) fire inside next_action.
 *
 * Usage (one CPU, one GPU, DBMLSched):
 *
 *     bl_sched_config cfg;
 *     bl_sched_config_default(&cfg);              // policy DBMLSCHED, 1 CPU + 1 GPU
 *     cfg.overhead_s = 0;                         // pauses free the device at once
 *     bl_sched_core *core = NULL;
 *     if (bl_sched_core_new(&cfg, NULL, NULL, &core, &err)) ...;
 *     bl_sched_submit sub = { { "kmeans", 500, 0, NULL, 0 }, { 10, 100 }, 0, { 0, 0 } };
 *     size_t id;
 *     bl_sched_core_submit(core, now, &sub, &id, &err);
 *     bl_sched_action a;
 *     while (bl_sched_core_next_action(core, now, &a) == BL_OK && a.type != BL_SCHED_ACT_NONE) {
 *         if (a.type == BL_SCHED_ACT_START) launch_or_resume(a.job, a.device, a.seconds);
 *         else if (a.type == BL_SCHED_ACT_PAUSE) pause_at_boundary_after(a.job, a.at);
 *     }
 *     // sleep until a.at or the next event; then, e.g. when job 0 hits its pause point:
 *     double more;
 *     if (!bl_sched_core_pause_point(core, now, 0, &more)) {
 *         pause_it(0);
 *         bl_sched_core_paused(core, now, 0, iterations_done, seconds_run, &err);
 *     } else extend_slice(0, more);
 *     ...
 *     bl_sched_core_free(core);
 *
 * The simulator uses the same core with a bl_sched_host: actions are delivered to host.act the
 * moment they are decided (so the simulator's (time, seq) event order is exactly that of the
 * decisions), host.progress answers how far a running job has got, and host.interference gives the
 * world's GPU slow-down (the simulator brings its GPUs' speeds up to date when asked).
 */
typedef struct bl_sched_core bl_sched_core;

typedef enum bl_sched_action_type {
    BL_SCHED_ACT_NONE = 0,   /* nothing to do until a.at (INFINITY: until the next report) */
    BL_SCHED_ACT_START,      /* run a.job on a.device for up to a.seconds; a.estimation: estimation run */
    BL_SCHED_ACT_PAUSE,      /* stop a.job on a.device at its first iteration boundary at or after a.at */
    BL_SCHED_ACT_TIMER       /* host hooks only: call bl_sched_core_timer(core, a.at) at time a.at */
} bl_sched_action_type;

typedef struct bl_sched_action {
    bl_sched_action_type type;
    size_t job;
    int    device;
    int    estimation;
    double seconds;
    double at;
} bl_sched_action;

/* A job as submitted to the core: what the scheduler may know, plus the truth for the oracle. */
typedef struct bl_sched_submit {
    bl_sched_job_desc job;            /* kind, iterations (ignored when implicit), params */
    double use_pct[2];                /* expected utilisation while it runs on [CPU], [GPU] (0..100) */
    double true_iterations;           /* BL_SCHED_ORACLE only: the true count and seconds per iteration */
    double true_s_per_iter[2];        /*   on [CPU], [GPU]; other policies ignore them */
} bl_sched_submit;

/* Optional host hooks (any may be NULL; none may call back into the core).
 * act: receives each action as it is decided instead of queueing it for next_action; it must carry it
 *   out at once.
 * progress: iterations done (may be fractional) by the job running on device at time now; without it
 *   the core uses the last bl_sched_core_iteration_end report (or the count at start).
 * interference: the GPU slow-down factor (>= 1) a running CPU ML job causes, asked at every
 *   interference check (after each start and each stop); without it the core uses the factor from
 *   bl_sched_core_set_interference / bl_sched_core_gpu_utilisation. */
typedef struct bl_sched_host {
    void  *ctx;
    void   (*act)(void *ctx, const bl_sched_action *a);
    double (*progress)(void *ctx, int device, double now);
    double (*interference)(void *ctx, double now);
} bl_sched_host;

typedef struct bl_sched_core_job_info {
    int    state;          /* 0 queued, 1 in the estimation phase, 2 running, 3 done */
    int    device;         /* device it runs on / is queued for / last ran on; -1 none yet */
    double iterations;     /* iterations done at its last stop */
    double remaining_s;    /* the scheduler's remaining-time estimate on that device (INFINITY: unknown) */
    int    estimated, predicted, aged;
} bl_sched_core_job_info;

typedef struct bl_sched_core_stats {
    size_t submitted, finished;
    double held_s;         /* device-seconds CPUs were held back by the observer/interference, to now */
    double interference;   /* the GPU slow-down factor the core currently assumes (1: none) */
} bl_sched_core_stats;

/* pred: used by BL_SCHED_DBMLSCHED_PRED (NULL: a fresh built-in history predictor); host may be NULL. */
BL_API bl_status bl_sched_core_new(const bl_sched_config *cfg, const bl_sched_predictor *pred,
                                   const bl_sched_host *host, bl_sched_core **out, bl_error *err);
BL_API void      bl_sched_core_free(bl_sched_core *c);
BL_API bl_status bl_sched_core_submit(bl_sched_core *c, double now, const bl_sched_submit *job, size_t *id,
                                      bl_error *err);
BL_API bl_status bl_sched_core_next_action(bl_sched_core *c, double now, bl_sched_action *out);
/* 1: the job at its pause point keeps running for up to *seconds more; 0: pause it. Changes nothing. */
BL_API int       bl_sched_core_pause_point(const bl_sched_core *c, double now, size_t job, double *seconds);
/* The running job stopped at a boundary: iterations = its total done, seconds = run time of this run
 * (resume overhead excluded). */
BL_API bl_status bl_sched_core_paused(bl_sched_core *c, double now, size_t job, double iterations, double seconds,
                                      bl_error *err);
BL_API bl_status bl_sched_core_finished(bl_sched_core *c, double now, size_t job, double iterations, double seconds,
                                        bl_error *err);
BL_API bl_status bl_sched_core_device_ready(bl_sched_core *c, double now, int device, bl_error *err);
BL_API bl_status bl_sched_core_iteration_end(bl_sched_core *c, double now, size_t job, double iterations,
                                             bl_error *err);
/* Database CPU use in percent (not counting the scheduled ML jobs): drives the observer. */
BL_API bl_status bl_sched_core_cpu_utilisation(bl_sched_core *c, double now, double pct, bl_error *err);
/* Utilisation of GPU device; taken while one of the core's CPU jobs runs, a drop below the GPU job's
 * expected use sets the interference factor (expected / measured) the core assumes from then on. */
BL_API bl_status bl_sched_core_gpu_utilisation(bl_sched_core *c, double now, int device, double pct,
                                               bl_error *err);
/* Sets the interference factor directly (known from earlier runs; >= 1). */
BL_API bl_status bl_sched_core_set_interference(bl_sched_core *c, double now, double factor, bl_error *err);
/* Host hooks: fires the earliest pending timer (announced by a BL_SCHED_ACT_TIMER action). */
BL_API bl_status bl_sched_core_timer(bl_sched_core *c, double now, bl_error *err);
/* BL_ENOTFOUND for a job the core has forgotten: it keeps a finished job until it and every job
 * submitted before it have finished and another job is submitted (so its memory follows the jobs in
 * the system, not all jobs ever submitted); read a finished job's record before the next submit. */
BL_API bl_status bl_sched_core_job(const bl_sched_core *c, size_t job, bl_sched_core_job_info *out);
BL_API void      bl_sched_core_stats_get(const bl_sched_core *c, double now, bl_sched_core_stats *out);

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
/* Per-job results: as many as the workload's jobs, 0 with BL_SCHED_TRACE_NO_JOBS. */
BL_API size_t    bl_sched_result_njobs(const bl_sched_result *r);
BL_API bl_status bl_sched_result_job(const bl_sched_result *r, size_t i, bl_sched_job_result *out);
BL_API size_t    bl_sched_result_nsegments(const bl_sched_result *r);
BL_API bl_status bl_sched_result_segment(const bl_sched_result *r, size_t i, bl_sched_segment *out);
/* Jobs in the system after each arrival/completion: point i is (time, count); with
 * BL_SCHED_TRACE_PLOT the thinned points, none without CURVE or PLOT. */
BL_API size_t    bl_sched_result_ncurve(const bl_sched_result *r);
BL_API bl_status bl_sched_result_curve(const bl_sched_result *r, size_t i, double *time, int *jobs);

#ifdef __cplusplus
}
#endif
#endif /* BELLAMY_SCHED_H */
