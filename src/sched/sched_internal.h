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
/* Most jobs one workload may hold (poisson:N and TSV files alike). A simulation keeps about 435 bytes
 * per job for one policy (peak RSS 435 MB at 1 000 000 jobs, rr; 670 MB with all five policies), so
 * this cap keeps a run within about 4.4 GB (6.7 GB for five policies) instead of letting a large N
 * grow until the machine runs out of memory. */
#define BL_SCHED_MAX_JOBS 10000000u

typedef struct bl_sched_wjob {
    double arrival;
    double iters;          /* true iteration count (integer valued) */
    double spi[2];         /* true seconds per iteration on CPU, GPU */
    double use[2];         /* utilisation percent on CPU, GPU */
    double params[BL_SCHED_MAXPARAMS];
    int    n_params;
    int    kind;           /* index into bl_sched_kind_names */
    int    implicit;
} bl_sched_wjob;

typedef struct bl_sched_load_step { double t, pct; } bl_sched_load_step;

struct bl_sched_workload {
    bl_sched_wjob      *jobs;       /* sorted by (arrival, input order) */
    size_t              n, cap;
    bl_sched_load_step *load;       /* sorted by t */
    size_t              nload, capload;
    double              interference;   /* >= 1 */
    double              overhead_s;     /* pause and resume cost */
};

/* Appends a job / load step (amortised growth); BL_ENOMEM on failure. */
bl_status bl_sched_workload_push(bl_sched_workload *w, const bl_sched_wjob *j);
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


/* Validates a config for the core and the simulator (messages name the field). */
bl_status bl_sched_config_check(const bl_sched_config *cfg, bl_error *err);

#endif
