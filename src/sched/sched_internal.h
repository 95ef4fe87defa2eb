/* sched_internal.h — internals of the DBMLSched core and simulator shared by their files and tests:
 * the workload representation, the (time, seq) event heap, a small seeded RNG, the config check.
 * Not installed; the public API is include/bellamy/sched.h. */
#ifndef BL_SCHED_INTERNAL_H
#define BL_SCHED_INTERNAL_H

#include "bellamy/sched.h"
#include <stddef.h>
#include <stdint.h>

#include "common/rng.h"

#define BL_SCHED_NKINDS 5
extern const char *const bl_sched_kind_names[BL_SCHED_NKINDS];
#define BL_SCHED_MAXPARAMS 4
/* Most jobs one workload may hold (poisson:N and TSV files alike). A workload keeps about 64 bytes per
 * job (56 and its params) and a simulation 8 more per job and policy (the service times, for exact
 * quantiles) when it keeps no per-job results; so this cap keeps a summary-only run of N = 10^7
 * under 1 GB instead of letting a large N grow until the machine runs out of memory. */
#define BL_SCHED_MAX_JOBS 10000000u
/* What a run keeps per million jobs, as messages and dbmlsched-sim --help say it: 56 bytes a job, 8 for its
 * param and 8 for its service time (72 bytes), in arrays grown by doubling (2^20 places for 10^6 jobs):
 * 75 MB; measured, poisson:1000000 and poisson:2000000 with one policy and --no-jobs peak 78 MB apart. */
#define BL_SCHED_RUN_MB_PER_MILLION_JOBS 80

/* One job of a workload; 56 bytes, as a workload holds every job (its file need not be sorted). */
typedef struct bl_sched_wjob {
    double        arrival;
    double        iters;          /* true iteration count (integer valued) */
    double        spi[2];         /* true seconds per iteration on CPU, GPU */
    double        use[2];         /* utilisation percent on CPU, GPU */
    uint32_t      par_off;        /* its params: the workload's par[par_off .. par_off + n_params) */
    unsigned char n_params;       /* 0 .. BL_SCHED_MAXPARAMS */
    unsigned char kind;           /* index into bl_sched_kind_names */
    unsigned char implicit;
} bl_sched_wjob;

typedef struct bl_sched_load_step { double t, pct; } bl_sched_load_step;

struct bl_sched_workload {
    bl_sched_wjob      *jobs;       /* sorted by (arrival, input order) */
    size_t              n, cap;
    double             *par;        /* every job's params, in input order */
    size_t              npar, cappar;
    bl_sched_load_step *load;       /* sorted by t */
    size_t              nload, capload;
    double              interference;   /* >= 1 */
    double              overhead_s;     /* pause and resume cost */
};

static inline const double *bl_sched_wjob_params(const bl_sched_workload *w, const bl_sched_wjob *j) {
    return j->n_params ? w->par + j->par_off : NULL;
}

/* Appends a job with its j->n_params params (j->par_off is set here) / a load step (amortised
 * growth); BL_ENOMEM on failure. */
bl_status bl_sched_workload_push(bl_sched_workload *w, const bl_sched_wjob *j, const double *params);
bl_status bl_sched_workload_push_load(bl_sched_workload *w, double t, double pct);
/* Sorts jobs by arrival (stable) and load steps by time. */
bl_status bl_sched_workload_finish(bl_sched_workload *w);
bl_sched_workload *bl_sched_workload_alloc(void);
int bl_sched_kind_lookup(const char *name);   /* index or -1 */

/* ---- event heap: a binary min-heap on (t, seq); seq is the insertion counter, so events at
 * equal times come out in the order they were pushed. O(log n) push and pop. ---- */
typedef struct bl_sched_event {
    double   t;
    uint64_t seq;
    int      type;
    int      a;        /* job or device index */
    uint32_t ver;      /* version stamp: stale events are ignored by the simulator */
} bl_sched_event;

typedef struct bl_sched_evheap {
    bl_sched_event *v;
    size_t          n, cap;
    uint64_t        next_seq;
} bl_sched_evheap;

void      bl_sched_evheap_init(bl_sched_evheap *h);
void      bl_sched_evheap_free(bl_sched_evheap *h);
bl_status bl_sched_evheap_push(bl_sched_evheap *h, double t, int type, int a, uint32_t ver);
int       bl_sched_evheap_pop(bl_sched_evheap *h, bl_sched_event *out);   /* 0 when empty */

/* ---- ring: per-job records for the jobs still in the system, indexed by job id ----
 * Ids lo .. hi-1 are held, at index id mod cap (cap a power of two), so a record is found as fast as in
 * a plain array while memory follows the span from the oldest unfinished job to the newest, not all
 * jobs ever seen. The owner drops finished records from the low end (lo++) when nothing needs them. */
typedef struct bl_sched_ring {
    unsigned char *v;
    size_t         size, cap, lo, hi;   /* size: bytes per record */
} bl_sched_ring;

static inline void *bl_sched_ring_at(const bl_sched_ring *r, size_t id) {
    return r->v + (id & (r->cap - 1)) * r->size;
}
void      bl_sched_ring_init(bl_sched_ring *r, size_t size);
/* Adds id hi (zero-filled) and returns it in *id, doubling the ring when full; BL_ENOMEM on failure. */
bl_status bl_sched_ring_push(bl_sched_ring *r, size_t *id);
void      bl_sched_ring_free(bl_sched_ring *r);

/* ---- thin: a step series (time, value) thinned for a plot as it is recorded ----
 * Exact up to BL_SCHED_PLOT_POINTS points; past that, time from the first point on is cut into at most
 * THIN_SPANS equal spans (the span doubles, merging neighbours, when a point falls beyond the last) and
 * each span keeps its first, lowest, highest and last point. Times must not decrease. */
#define BL_SCHED_THIN_SPANS 1024
typedef struct bl_sched_thin_pt { double t; uint64_t seq; int y; } bl_sched_thin_pt;
typedef struct bl_sched_thin_span { bl_sched_thin_pt first, lo, hi, last; int used; } bl_sched_thin_span;
typedef struct bl_sched_thin {
    bl_sched_thin_pt   *raw;      /* every point, while at most BL_SCHED_PLOT_POINTS */
    size_t              nraw;
    bl_sched_thin_span *span;     /* once spanned: THIN_SPANS of them, span i covers [t0 + i w, t0 + (i+1) w) */
    double              t0, w;
    uint64_t            seq;      /* points seen: orders a span's points */
} bl_sched_thin;

void      bl_sched_thin_init(bl_sched_thin *th);
bl_status bl_sched_thin_add(bl_sched_thin *th, double t, int y);
/* The kept points in time order into fresh arrays (free them); *n at most BL_SCHED_PLOT_POINTS. */
bl_status bl_sched_thin_result(const bl_sched_thin *th, double **t, int **y, size_t *n);
void      bl_sched_thin_free(bl_sched_thin *th);

/* Validates a config for the core and the simulator (messages name the field). */
bl_status bl_sched_config_check(const bl_sched_config *cfg, bl_error *err);

#endif
