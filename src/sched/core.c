/* core.c — the DBMLSched scheduler core: the policies as an event-driven library (bellamy/sched.h).
 *
 * The host reports events (a job arrives, stops at an iteration boundary, finishes; a paused device
 * is ready again; database CPU use or GPU utilisation changes; a timer is due) and the core answers
 * with actions (START, PAUSE, TIMER), queued for bl_sched_core_next_action() or handed to a host hook
 * the moment they are decided. It keeps, per job, what the scheduler knows (estimated seconds per
 * iteration, predictions, time run per device kind, iterations done at the last stop) -- while the job
 * is in the system: finished jobs are forgotten from the oldest on, so a long-running host's memory
 * follows its queues, not its history -- and, per device, what runs there, its queues and the
 * observer's state.
 *
 * Policies (see bl_sched_policy): FIFO-GPU, RR (one global queue, quota slices on any device),
 * DBMLSched (estimation phase; explicit jobs to the device with the smallest service time, per-device
 * queues by shortest remaining service time, preemptive on arrival; implicit jobs in a per-device
 * round robin of quotas alternating with explicit ones; aging; CPU observer; interference holding),
 * DBMLSched + predictor (estimation skipped where the predictor answers for every device kind) and
 * Oracle SRPT (true remaining times, idle devices steal queued work).
 *
 * Per-device explicit queues are treaps keyed by (remaining estimate, job id) with subtree sums, so
 * "work queued ahead of a job" is O(log n). Aging timers sit in a (time, seq) heap.
 * Not here: any notion of how fast a job really runs, overheads' durations, database latency -- the
 * host (e.g. sim.c) owns those. */
#include "sched/sched_internal.h"
#include "common/error.h"
#include "common/utf8.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { Q_NONE = 0, Q_EXP, Q_IMP, Q_FIFO, Q_EST, Q_RUN, Q_DONE };
enum { CLS_EXP = 0, CLS_IMP = 1 };
#define MAXDEV 64
#define MAXKINDS 256

typedef struct cjob {
    double   k;                 /* iterations done at the last stop (whole) */
    double   iters;             /* known iteration count (explicit jobs) */
    double   true_iters, true_spi[2];   /* oracle only */
    double   use_gpu;           /* expected GPU utilisation */
    double   spi_est[2];        /* measured in the estimation phase; 0 = unknown */
    double   pred[2];           /* predicted whole-job seconds; 0 = none */
    double   time_on[2], iters_on[2];
    double   enq_t, waited;     /* aging: total time spent waiting in an explicit queue */
    double   key, sum;          /* treap: key = remaining estimate when queued, sum over subtree */
    double   par_in[4];         /* params: here when at most 4, else par_ext (freed with the record) */
    double  *par_ext;
    int      left, right;
    uint32_t prio, qver;
    int      next;              /* FIFO link (implicit queue, global queue, estimation queue) */
    int      dev, where, kind, n_par;
    unsigned char implicit, aged, estimated, predicted, est_step;
} cjob;

typedef struct cdev {
    int    kind, job, pausing, reserved;
    double est_window, k_rep, baseline, hold_since;
    int    est, cls, preempt_req, last_cls;
    int    root, fhead, ftail;
    int    blocked, iblocked;
} cdev;

struct bl_sched_core {
    bl_sched_config    cfg;
    bl_sched_policy    pol;
    int                dbml;          /* DBMLSched or DBMLSched + predictor */
    bl_sched_predictor pred;
    int                have_pred;
    bl_sched_history  *own;
    bl_sched_host      host;
    bl_sched_ring      jobs;          /* cjob records of the jobs not yet forgotten (see bl_sched_core_job) */
    size_t             nj, n_done;
    cdev               D[MAXDEV];
    int                nd;
    int                has_kind[2];
    bl_sched_evheap    timers;
    bl_rng       rng;
    double             now, db, interference, held_s;
    int                ghead, gtail;  /* global FIFO (FIFO-GPU, RR) */
    int                ehead, etail, est_cur;
    char              *kinds[MAXKINDS];
    int                nkinds;
    bl_sched_action   *q;             /* pending actions (no act hook): ring buffer */
    size_t             qhead, qn, qcap;
    bl_status          oom;
};

/* A job's record by id: ids from jobs.lo on are held (finished ones are dropped from the low end at
 * the next submit). */
#define JX(c, j) ((cjob *)bl_sched_ring_at(&(c)->jobs, (size_t)(j)))

/* ---------------- treap with subtree sums ---------------- */

static int tlt(const bl_sched_core *c, int a, int b) {   /* (key, id) order */
    if (JX(c, a)->key < JX(c, b)->key) return 1;
    if (JX(c, a)->key > JX(c, b)->key) return 0;
    return a < b;
}
static void tupd(bl_sched_core *c, int t) {
    cjob *x = JX(c, t);
    x->sum = x->key + (x->left >= 0 ? JX(c, x->left)->sum : 0) + (x->right >= 0 ? JX(c, x->right)->sum : 0);
}
/* Splits t into nodes before x (l) and the rest (r); with incl, x itself goes to l. */
static void tsplit(bl_sched_core *c, int t, int x, int incl, int *l, int *r) {
    if (t < 0) { *l = *r = -1; return; }
    cjob *n = JX(c, t);
    if (tlt(c, t, x) || (incl && t == x)) {
        tsplit(c, n->right, x, incl, &n->right, r);
        *l = t;
    } else {
        tsplit(c, n->left, x, incl, l, &n->left);
        *r = t;
    }
    tupd(c, t);
}
static int tmerge(bl_sched_core *c, int a, int b) {
    if (a < 0) return b;
    if (b < 0) return a;
    cjob *x = JX(c, a), *y = JX(c, b);
    if (x->prio > y->prio) {
        x->right = tmerge(c, x->right, b);
        tupd(c, a);
        return a;
    }
    y->left = tmerge(c, a, y->left);
    tupd(c, b);
    return b;
}
static void tinsert(bl_sched_core *c, int *root, int x) {
    JX(c, x)->left = JX(c, x)->right = -1;
    JX(c, x)->sum = JX(c, x)->key;
    int l, r;
    tsplit(c, *root, x, 0, &l, &r);
    *root = tmerge(c, tmerge(c, l, x), r);
}
/* Removes x (which must be in the tree): cut out [x, x] and merge the sides. */
static void terase(bl_sched_core *c, int *root, int x) {
    int l, m, r;
    tsplit(c, *root, x, 0, &l, &r);
    tsplit(c, r, x, 1, &m, &r);
    (void)m;
    JX(c, x)->left = JX(c, x)->right = -1;
    *root = tmerge(c, l, r);
}
static int tmin(const bl_sched_core *c, int t) {
    if (t < 0) return -1;
    while (JX(c, t)->left >= 0) t = JX(c, t)->left;
    return t;
}
/* Sum of keys strictly before (key, id). */
static double tprefix(const bl_sched_core *c, int t, double key, int id) {
    double s = 0;
    while (t >= 0) {
        const cjob *n = JX(c, t);
        int before = (n->key < key) || (n->key == key && t < id);
        if (before) {
            s += n->key + (n->left >= 0 ? JX(c, n->left)->sum : 0);
            t = n->right;
        } else {
            t = n->left;
        }
    }
    return s;
}

/* ---------------- actions and small helpers ---------------- */

static void emit(bl_sched_core *c, bl_sched_action_type type, int j, int d, double seconds, double at, int est) {
    bl_sched_action a;
    a.type = type;
    a.job = (size_t)j;
    a.device = d;
    a.estimation = est;
    a.seconds = seconds;
    a.at = at;
    if (c->host.act) { c->host.act(c->host.ctx, &a); return; }
    if (c->qn == c->qcap) {   /* grow the ring, unrolling it */
        size_t nc = c->qcap ? 2 * c->qcap : 16;
        bl_sched_action *nq = malloc(nc * sizeof *nq);
        if (!nq) { c->oom = BL_ENOMEM; return; }
        for (size_t i = 0; i < c->qn; i++) nq[i] = c->q[(c->qhead + i) % c->qcap];
        free(c->q);
        c->q = nq;
        c->qcap = nc;
        c->qhead = 0;
    }
    c->q[(c->qhead + c->qn) % c->qcap] = a;
    c->qn++;
}

static void arm_timer(bl_sched_core *c, double t, int j, uint32_t ver) {
    if (bl_sched_evheap_push(&c->timers, t, 0, j, ver)) { c->oom = BL_ENOMEM; return; }
    if (c->host.act) emit(c, BL_SCHED_ACT_TIMER, j, -1, 0, t, 0);
}

static void fifo_push(bl_sched_core *c, int *head, int *tail, int j) {
    JX(c, j)->next = -1;
    if (*tail >= 0) JX(c, *tail)->next = j; else *head = j;
    *tail = j;
}
static int fifo_pop(bl_sched_core *c, int *head, int *tail) {
    int j = *head;
    if (j < 0) return -1;
    *head = JX(c, j)->next;
    if (*head < 0) *tail = -1;
    JX(c, j)->next = -1;
    return j;
}

/* What a predictor sees; reveal_iters > 0 is the count completion revealed. */
static bl_sched_job_desc make_desc(const bl_sched_core *c, int j, double reveal_iters) {
    const cjob *x = JX(c, j);
    bl_sched_job_desc d;
    d.kind = c->kinds[x->kind];
    d.implicit = x->implicit;
    d.iterations = reveal_iters > 0 ? reveal_iters : (x->implicit ? 0 : x->iters);
    d.params = x->n_par ? (x->par_ext ? x->par_ext : x->par_in) : NULL;
    d.n_params = (size_t)x->n_par;
    return d;
}

static bl_sched_device_info dev_info(const bl_sched_core *c, int kind) {
    bl_sched_device_info di;
    di.kind = (bl_sched_device_kind)kind;
    di.index = 0;
    for (int d = 0; d < c->nd; d++)
        if (c->D[d].kind == kind) { di.index = d; break; }
    di.cores = kind == BL_SCHED_CPU ? c->cfg.cpu_cores : c->cfg.gpu_cores;
    return di;
}

/* Iterations done by the job running on d, now. */
static double cur_k(const bl_sched_core *c, int d) {
    if (c->host.progress) return c->host.progress(c->host.ctx, d, c->now);
    return c->D[d].k_rep;
}

/* The scheduler's view of the remaining seconds of job j on a device kind after kcur iterations;
 * INFINITY when it cannot know (an implicit job without a prediction, or a device not measured). */
static double rem_sched(const bl_sched_core *c, int j, int dk, double kcur) {
    const cjob *x = JX(c, j);
    if (c->pol == BL_SCHED_ORACLE) return (x->true_iters - kcur) * x->true_spi[dk];
    if (x->pred[dk] > 0) {
        if (!x->implicit) return x->pred[dk] * (1.0 - kcur / x->iters);
        double frac = 0;
        for (int k = 0; k < 2; k++)
            if (x->pred[k] > 0) frac += x->time_on[k] / x->pred[k];
        if (frac > 0.95) frac = 0.95;   /* overran its prediction: still "nearly done" */
        return x->pred[dk] * (1.0 - frac);
    }
    if (x->implicit) return INFINITY;
    if (x->spi_est[dk] > 0) return (x->iters - kcur) * x->spi_est[dk];
    return INFINITY;
}

static int job_class(const bl_sched_core *c, int j) {
    if (JX(c, j)->aged) return CLS_IMP;
    for (int k = 0; k < 2; k++)
        if (c->has_kind[k] && isfinite(rem_sched(c, j, k, JX(c, j)->k))) return CLS_EXP;
    return CLS_IMP;
}

/* ---------------- device decisions ---------------- */

/* Stop the job on d at the first iteration boundary at or after time tl. */
static void stop_at(bl_sched_core *c, int d, double tl) {
    if (c->D[d].job < 0) return;
    emit(c, BL_SCHED_ACT_PAUSE, c->D[d].job, d, 0, tl, 0);
}

static void preempt(bl_sched_core *c, int d) {
    if (c->D[d].job < 0) return;
    c->D[d].preempt_req = 1;
    stop_at(c, d, c->now);
}

static void hold_begin(bl_sched_core *c, cdev *v) { if (!v->blocked && !v->iblocked) v->hold_since = c->now; }
static void hold_end(bl_sched_core *c, cdev *v) {
    if (!v->blocked && !v->iblocked) c->held_s += c->now - v->hold_since;
}

static void dispatch(bl_sched_core *c, int d);

/* DBMLSched's reaction to interference: while a running GPU job would lose more than gpu_drop_pct
 * points of utilisation to a CPU job beside it, CPUs are held (a running CPU job is paused, an idle
 * CPU starts nothing). */
static void update_interference(bl_sched_core *c) {
    if (c->host.interference) {   /* asked whatever the policy: the host may track the world here */
        double f = c->host.interference(c->host.ctx, c->now);
        c->interference = f >= 1 ? f : 1;
    }
    if (!c->dbml) return;
    double f = c->interference;
    int hurt = 0;
    for (int d = 0; d < c->nd; d++) {
        const cdev *g = &c->D[d];
        if (g->kind != BL_SCHED_GPU || g->job < 0) continue;
        double use = JX(c, g->job)->use_gpu;
        if (f > 1 && use - use / f > c->cfg.gpu_drop_pct) hurt = 1;
    }
    for (int d = 0; d < c->nd; d++) {
        cdev *v = &c->D[d];
        if (v->kind != BL_SCHED_CPU) continue;
        if (hurt && !v->iblocked) {   /* also keeps an idle CPU from starting a job */
            hold_begin(c, v);
            v->iblocked = 1;
            if (v->job >= 0 && !v->est) preempt(c, d);
        } else if (!hurt && v->iblocked) {
            v->iblocked = 0;
            hold_end(c, v);
            dispatch(c, d);
        }
    }
}

static void start_run(bl_sched_core *c, int d, int j, double slice, int est, int cls) {
    cdev *dv = &c->D[d];
    cjob *x = JX(c, j);
    dv->job = j;
    dv->est = est;
    dv->cls = cls;
    dv->preempt_req = 0;
    dv->k_rep = x->k;
    x->where = Q_RUN;
    x->dev = d;
    if (dv->kind == BL_SCHED_CPU && !dv->blocked) dv->baseline = c->db;
    emit(c, BL_SCHED_ACT_START, j, d, slice, c->now, est);
    update_interference(c);
}

/* ---------------- queues ---------------- */

static void enqueue_exp(bl_sched_core *c, int d, int j, double r) {
    cjob *x = JX(c, j);
    x->key = r;
    uint64_t z = (uint64_t)j * 0x9E3779B97F4A7C15ULL;   /* a fixed hash: deterministic priorities */
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    x->prio = (uint32_t)(z >> 32);
    tinsert(c, &c->D[d].root, j);
    x->where = Q_EXP;
    x->dev = d;
    x->qver++;
    x->enq_t = c->now;
    /* aging counts all the time a job has waited, so repeated short runs between preemptions do not
     * reset its claim */
    if (c->dbml && isfinite(c->cfg.aging_s)) {
        double left = c->cfg.aging_s - x->waited;
        arm_timer(c, c->now + (left > 0 ? left : 0), j, x->qver);
    }
}

static void enqueue_imp(bl_sched_core *c, int d, int j) {
    cjob *x = JX(c, j);
    fifo_push(c, &c->D[d].fhead, &c->D[d].ftail, j);
    x->where = Q_IMP;
    x->dev = d;
    x->qver++;
}

/* Service time of a job with remaining r on d: itself + queued explicit work ahead + the running
 * explicit job if it is not going to be preempted by this one. */
static double service_time(const bl_sched_core *c, int d, int j, double r) {
    const cdev *dv = &c->D[d];
    double t = r + tprefix(c, dv->root, r, j);
    if (dv->job >= 0 && !dv->est && dv->cls == CLS_EXP) {
        double rr = rem_sched(c, dv->job, dv->kind, cur_k(c, d));
        if (rr <= r) t += rr;
    }
    return t;
}

/* Queue an explicit-class job on the device with the smallest service time (DBMLSched, Oracle). */
static void place_explicit(bl_sched_core *c, int j) {
    int best = -1;
    double bt = INFINITY, br = INFINITY;
    for (int d = 0; d < c->nd; d++) {
        double r = rem_sched(c, j, c->D[d].kind, JX(c, j)->k);
        if (!isfinite(r)) continue;
        double t = service_time(c, d, j, r);
        if (t < bt) { bt = t; br = r; best = d; }
    }
    if (best < 0) return;   /* caller guarantees a finite estimate */
    enqueue_exp(c, best, j, br);
    cdev *dv = &c->D[best];
    if (dv->job >= 0 && !dv->est) {
        if (dv->cls == CLS_EXP) {
            double rr = rem_sched(c, dv->job, dv->kind, cur_k(c, best));
            if (rr > br) preempt(c, best);
        } else {
            stop_at(c, best, c->now + c->cfg.quota_s);   /* the implicit job keeps one quota */
        }
    } else if (dv->job < 0) {
        dispatch(c, best);
    }
}

static void place_implicit(bl_sched_core *c, int j) {
    const cjob *x = JX(c, j);
    int best = -1;
    double bs = INFINITY;
    for (int d = 0; d < c->nd; d++) {
        int k = c->D[d].kind;
        double v = x->spi_est[k] > 0 ? x->spi_est[k] : INFINITY;
        if (v < bs) { bs = v; best = d; }
    }
    if (best < 0)   /* nothing measured: the GPU, else the first device */
        for (int d = 0; d < c->nd && best < 0; d++)
            if (c->D[d].kind == BL_SCHED_GPU) best = d;
    if (best < 0) best = 0;
    enqueue_imp(c, best, j);
    cdev *dv = &c->D[best];
    if (dv->job >= 0 && !dv->est) stop_at(c, best, c->now + c->cfg.quota_s);
    else if (dv->job < 0) dispatch(c, best);
}

static void place_dbml(bl_sched_core *c, int j) {
    if (job_class(c, j) == CLS_EXP) place_explicit(c, j);
    else place_implicit(c, j);
}

/* ---------------- estimation phase ---------------- */

static void next_est(bl_sched_core *c);

static void est_advance(bl_sched_core *c, int j) {
    cjob *x = JX(c, j);
    static const int order[2] = { BL_SCHED_GPU, BL_SCHED_CPU };
    while (x->est_step < 2) {
        int kind = order[x->est_step++];
        if (!c->has_kind[kind]) continue;
        int d = -1;
        for (int e = 0; e < c->nd; e++)   /* an idle device of the kind, else the first */
            if (c->D[e].kind == kind && c->D[e].job < 0 && !c->D[e].pausing && c->D[e].reserved < 0) { d = e; break; }
        for (int e = 0; e < c->nd && d < 0; e++)
            if (c->D[e].kind == kind && c->D[e].reserved < 0) d = e;
        if (d < 0) continue;
        cdev *dv = &c->D[d];
        if (kind == BL_SCHED_CPU && (dv->blocked || dv->iblocked)) continue;   /* the DB needs the CPU */
        double win = c->cfg.est_min_s;
        if (dv->job >= 0) {
            double rr = rem_sched(c, dv->job, dv->kind, cur_k(c, d));
            if (isfinite(rr) && c->cfg.est_fraction * rr > win) win = c->cfg.est_fraction * rr;
        }
        dv->reserved = j;
        dv->est_window = win;
        x->where = Q_EST;
        if (dv->job >= 0) preempt(c, d);
        else dispatch(c, d);
        return;
    }
    /* every device kind measured (or skipped): place it */
    c->est_cur = -1;
    place_dbml(c, j);
    next_est(c);
}

static void next_est(bl_sched_core *c) {
    while (c->est_cur < 0 && c->ehead >= 0) {
        int j = fifo_pop(c, &c->ehead, &c->etail);
        c->est_cur = j;
        JX(c, j)->estimated = 1;
        JX(c, j)->est_step = 0;
        est_advance(c, j);
    }
}

/* ---------------- dispatch: what an idle device runs next ---------------- */

static int oracle_steal(bl_sched_core *c, int d) {
    int best = -1, from = -1;
    double bh = INFINITY;
    for (int e = 0; e < c->nd; e++) {
        if (e == d) continue;
        int x = tmin(c, c->D[e].root);
        if (x < 0) continue;
        double here = rem_sched(c, x, c->D[d].kind, JX(c, x)->k);
        double there = rem_sched(c, x, c->D[e].kind, JX(c, x)->k);
        if (c->D[e].job >= 0) there += rem_sched(c, c->D[e].job, c->D[e].kind, cur_k(c, e));
        if (here < there && here < bh) { bh = here; best = x; from = e; }
    }
    if (best >= 0) { terase(c, &c->D[from].root, best); JX(c, best)->qver++; }
    return best;
}

static void dispatch(bl_sched_core *c, int d) {
    cdev *dv = &c->D[d];
    if (dv->job >= 0 || dv->pausing) return;
    int j;
    switch (c->pol) {
    case BL_SCHED_FIFO_GPU:
        if (dv->kind != BL_SCHED_GPU) return;
        j = fifo_pop(c, &c->ghead, &c->gtail);
        if (j >= 0) start_run(c, d, j, INFINITY, 0, CLS_EXP);
        return;
    case BL_SCHED_RR:
        j = fifo_pop(c, &c->ghead, &c->gtail);
        if (j >= 0) start_run(c, d, j, c->cfg.quota_s, 0, CLS_IMP);
        return;
    case BL_SCHED_ORACLE:
        j = tmin(c, dv->root);
        if (j >= 0) { terase(c, &dv->root, j); JX(c, j)->qver++; }
        else j = oracle_steal(c, d);
        if (j >= 0) start_run(c, d, j, INFINITY, 0, CLS_EXP);
        return;
    default:
        break;
    }
    /* DBMLSched */
    if (dv->reserved >= 0) {
        j = dv->reserved;
        dv->reserved = -1;
        start_run(c, d, j, dv->est_window, 1, CLS_EXP);
        return;
    }
    if (dv->kind == BL_SCHED_CPU && (dv->blocked || dv->iblocked)) return;
    int has_e = dv->root >= 0, has_i = dv->fhead >= 0;
    if (!has_e && !has_i) return;
    if (has_i && (!has_e || dv->last_cls == CLS_EXP)) {
        j = fifo_pop(c, &dv->fhead, &dv->ftail);
        JX(c, j)->qver++;
        dv->last_cls = CLS_IMP;
        start_run(c, d, j, (has_e || dv->fhead >= 0) ? c->cfg.quota_s : INFINITY, 0, CLS_IMP);
    } else {
        j = tmin(c, dv->root);
        terase(c, &dv->root, j);
        JX(c, j)->qver++;
        JX(c, j)->waited += c->now - JX(c, j)->enq_t;
        dv->last_cls = CLS_EXP;
        start_run(c, d, j, has_i ? c->cfg.quota_s : INFINITY, 0, CLS_EXP);
    }
}

static void dispatch_all(bl_sched_core *c) {
    for (int d = 0; d < c->nd; d++) dispatch(c, d);
}

/* ---------------- event handlers ---------------- */

/* Whether a slice that ended without a request to stop simply goes on (nobody else is waiting). */
static int slice_goes_on(const bl_sched_core *c, int d, double *slice) {
    const cdev *dv = &c->D[d];
    *slice = INFINITY;
    if (c->pol == BL_SCHED_RR) { *slice = c->cfg.quota_s; return c->ghead < 0; }
    if (!c->dbml) return 0;
    if (dv->kind == BL_SCHED_CPU && (dv->blocked || dv->iblocked)) return 0;
    if (dv->cls == CLS_EXP) return dv->fhead < 0;
    return dv->root < 0 && dv->fhead < 0;
}

/* The job on d left the device at a boundary: kt = its total iterations, prog = seconds it ran. */
static void on_stop(bl_sched_core *c, int d, double kt, double prog, int finished) {
    cdev *dv = &c->D[d];
    int j = dv->job;
    cjob *x = JX(c, j);
    int kind = dv->kind, was_est = dv->est;
    double iters = kt - x->k;
    x->time_on[kind] += prog;
    x->iters_on[kind] += iters;
    x->k = kt;
    dv->job = -1;
    if (finished) {
        x->where = Q_DONE;
        c->n_done++;
        if (c->have_pred && c->pred.observe) {
            bl_sched_job_desc desc = make_desc(c, j, kt);
            for (int k = 0; k < 2; k++)
                if (x->iters_on[k] > 0 && x->time_on[k] > 0) {
                    bl_sched_device_info di = dev_info(c, k);
                    c->pred.observe(c->pred.ctx, &desc, &di, x->iters_on[k], x->time_on[k]);
                }
        }
        if (c->est_cur == j) { c->est_cur = -1; next_est(c); }
        update_interference(c);
        if (c->pol == BL_SCHED_ORACLE) dispatch_all(c); else dispatch(c, d);
        return;
    }
    int busy = c->cfg.overhead_s > 0;   /* the host spends the pause cost on the device */
    if (busy) dv->pausing = 1;
    /* the stopped job goes back where its policy keeps it */
    if (was_est) {
        if (iters > 0 && prog > 0) {
            double m = prog / iters;
            if (c->cfg.est_noise > 0) {
                double f = 1.0 + c->cfg.est_noise * bl_rng_normal(&c->rng);
                m *= f < 0.05 ? 0.05 : f;
            }
            x->spi_est[kind] = m;
        }
    } else if (c->pol == BL_SCHED_RR) {
        fifo_push(c, &c->ghead, &c->gtail, j);
        x->where = Q_FIFO;
    } else if (c->pol == BL_SCHED_ORACLE) {
        enqueue_exp(c, d, j, rem_sched(c, j, kind, x->k));
    } else if (c->dbml) {
        if (job_class(c, j) == CLS_EXP) enqueue_exp(c, d, j, rem_sched(c, j, kind, x->k));
        else enqueue_imp(c, d, j);
    }
    update_interference(c);
    if (was_est) est_advance(c, j);
    if (!busy) dispatch(c, d);
    if (c->pol == BL_SCHED_RR || c->pol == BL_SCHED_ORACLE) dispatch_all(c);
}

static int predict_all(bl_sched_core *c, int j) {
    bl_sched_job_desc desc = make_desc(c, j, 0);
    double p[2] = { 0, 0 };
    for (int k = 0; k < 2; k++) {
        if (!c->has_kind[k]) continue;
        bl_sched_device_info di = dev_info(c, k);
        double v = 0;
        if (c->pred.predict(c->pred.ctx, &desc, &di, &v) != 0 || !(v > 0) || !isfinite(v)) return 0;
        p[k] = v;
    }
    JX(c, j)->pred[0] = p[0];
    JX(c, j)->pred[1] = p[1];
    JX(c, j)->predicted = 1;
    return 1;
}

static void on_arrival(bl_sched_core *c, int j) {
    switch (c->pol) {
    case BL_SCHED_FIFO_GPU:
    case BL_SCHED_RR:
        fifo_push(c, &c->ghead, &c->gtail, j);
        JX(c, j)->where = Q_FIFO;
        dispatch_all(c);
        return;
    case BL_SCHED_ORACLE:
        place_explicit(c, j);
        return;
    default:
        break;
    }
    if (c->pol == BL_SCHED_DBMLSCHED_PRED && c->have_pred && c->pred.predict && predict_all(c, j)) {
        place_dbml(c, j);
        return;
    }
    fifo_push(c, &c->ehead, &c->etail, j);
    JX(c, j)->where = Q_EST;
    next_est(c);
}

static void on_age(bl_sched_core *c, int j, uint32_t ver) {
    if ((size_t)j < c->jobs.lo) return;   /* finished and forgotten: a stale timer */
    cjob *x = JX(c, j);
    if (x->where != Q_EXP || x->qver != ver) return;
    int d = x->dev;
    terase(c, &c->D[d].root, j);
    x->aged = 1;
    enqueue_imp(c, d, j);
    if (c->D[d].job >= 0 && !c->D[d].est) stop_at(c, d, c->now + c->cfg.quota_s);
}

static void on_load(bl_sched_core *c, double pct) {
    c->db = pct;
    if (!c->dbml) return;
    for (int d = 0; d < c->nd; d++) {
        cdev *v = &c->D[d];
        if (v->kind != BL_SCHED_CPU) continue;
        if (!v->blocked) {
            if (v->job >= 0 && !v->est && c->db - v->baseline > c->cfg.cpu_excess_pct) {
                hold_begin(c, v);
                v->blocked = 1;
                preempt(c, d);
            }
        } else if (c->db < v->baseline + c->cfg.cpu_resume_pct) {
            v->blocked = 0;
            hold_end(c, v);
            dispatch(c, d);
        }
    }
}

/* ---------------- configuration ---------------- */

void bl_sched_config_default(bl_sched_config *c) {
    if (!c) return;
    memset(c, 0, sizeof *c);
    c->policy = BL_SCHED_DBMLSCHED;
    c->n_cpu = 1;
    c->n_gpu = 1;
    c->cpu_cores = 1;
    c->gpu_cores = 1;
    c->overhead_s = -1;
    c->quota_s = 10;
    c->est_fraction = 0.1;
    c->est_min_s = 1;
    c->aging_s = 300;
    c->cpu_excess_pct = 20;
    c->cpu_resume_pct = 5;
    c->gpu_drop_pct = 20;
    c->query_slowdown = 1;
    c->seed = 1;
    c->est_noise = 0;
    c->max_events = 0;
    c->record_trace = 1;
}

static const char *const pol_names[BL_SCHED_NPOLICIES] = { "fifo-gpu", "rr", "dbmlsched", "dbmlsched-bellamy", "oracle" };

const char *bl_sched_policy_name(bl_sched_policy p) {
    return ((unsigned)p < BL_SCHED_NPOLICIES) ? pol_names[p] : "unknown";
}

bl_status bl_sched_policy_parse(const char *name, bl_sched_policy *out, bl_error *err) {
    BL_CHECK_ARG(name != NULL && out != NULL, err, "name or out is NULL");
    for (int i = 0; i < BL_SCHED_NPOLICIES; i++)
        if (strcmp(name, pol_names[i]) == 0) { *out = (bl_sched_policy)i; return BL_OK; }
    if (strcmp(name, "dbmlsched+bellamy") == 0 || strcmp(name, "dbmlsched-pred") == 0) { *out = BL_SCHED_DBMLSCHED_PRED; return BL_OK; }
    return bl_seterr(err, BL_ENOTFOUND, "unknown policy '%s' (fifo-gpu, rr, dbmlsched, dbmlsched-bellamy, oracle)",
                     bl_utf8_escape((char[128]){ 0 }, 128, name));
}

bl_status bl_sched_config_check(const bl_sched_config *cfg, bl_error *err) {
    BL_CHECK_ARG(cfg != NULL, err, "config is NULL");
    BL_CHECK_ARG((unsigned)cfg->policy < BL_SCHED_NPOLICIES, err, "unknown policy %d", (int)cfg->policy);
    BL_CHECK_ARG(cfg->n_cpu >= 0 && cfg->n_gpu >= 0 && cfg->n_cpu + cfg->n_gpu >= 1 && cfg->n_cpu + cfg->n_gpu <= MAXDEV,
                 err, "device counts n_cpu=%d n_gpu=%d: need 1..%d devices", cfg->n_cpu, cfg->n_gpu, MAXDEV);
    BL_CHECK_ARG(cfg->policy != BL_SCHED_FIFO_GPU || cfg->n_gpu >= 1, err, "fifo-gpu needs a GPU (n_gpu >= 1)");
    BL_CHECK_ARG(cfg->quota_s > 0 && isfinite(cfg->quota_s), err, "quota_s must be > 0");
    BL_CHECK_ARG(cfg->est_min_s > 0 && cfg->est_fraction >= 0 && isfinite(cfg->est_fraction), err,
                 "est_min_s must be > 0 and est_fraction >= 0");
    BL_CHECK_ARG(cfg->aging_s > 0, err, "aging_s must be > 0 (use INFINITY to disable)");
    BL_CHECK_ARG(cfg->cpu_excess_pct >= 0 && cfg->cpu_resume_pct >= 0 && cfg->gpu_drop_pct >= 0, err,
                 "observer thresholds must be >= 0");
    BL_CHECK_ARG(cfg->est_noise >= 0 && cfg->query_slowdown >= 0, err, "est_noise and query_slowdown must be >= 0");
    BL_CHECK_ARG(cfg->cpu_cores >= 1 && cfg->gpu_cores >= 1, err, "cpu_cores and gpu_cores must be >= 1");
    BL_CHECK_ARG(cfg->record_trace >= 0 && (cfg->record_trace & ~0x1f) == 0, err,
                 "record_trace %d: 0, 1 or an OR of the BL_SCHED_TRACE_* flags", cfg->record_trace);
    return BL_OK;
}

/* ---------------- public API ---------------- */

bl_status bl_sched_core_new(const bl_sched_config *cfg, const bl_sched_predictor *pred, const bl_sched_host *host,
                            bl_sched_core **out, bl_error *err) {
    BL_CHECK_ARG(out != NULL, err, "out is NULL");
    *out = NULL;
    bl_status st = bl_sched_config_check(cfg, err);
    if (st) return st;
    bl_sched_core *c = calloc(1, sizeof *c);
    if (!c) return bl_seterr(err, BL_ENOMEM, "out of memory");
    c->cfg = *cfg;
    c->pol = cfg->policy;
    c->dbml = c->pol == BL_SCHED_DBMLSCHED || c->pol == BL_SCHED_DBMLSCHED_PRED;
    c->interference = 1.0;
    c->ghead = c->gtail = c->ehead = c->etail = c->est_cur = -1;
    if (host) c->host = *host;
    bl_sched_evheap_init(&c->timers);
    bl_sched_ring_init(&c->jobs, sizeof(cjob));
    bl_rng_seed(&c->rng, cfg->seed);
    if (c->pol == BL_SCHED_DBMLSCHED_PRED) {
        if (pred && pred->predict) {
            c->pred = *pred;
        } else {
            if ((st = bl_sched_history_new(&c->own, err))) { bl_sched_core_free(c); return st; }
            c->pred = bl_sched_history_predictor(c->own);
        }
        c->have_pred = 1;
    }
    c->nd = cfg->n_cpu + cfg->n_gpu;
    for (int d = 0; d < c->nd; d++) {
        cdev *dv = &c->D[d];
        dv->kind = d < cfg->n_cpu ? BL_SCHED_CPU : BL_SCHED_GPU;
        dv->job = dv->reserved = dv->root = dv->fhead = dv->ftail = -1;
        dv->last_cls = CLS_IMP;
        c->has_kind[dv->kind] = 1;
    }
    *out = c;
    return BL_OK;
}

void bl_sched_core_free(bl_sched_core *c) {
    if (!c) return;
    bl_sched_history_free(c->own);
    bl_sched_evheap_free(&c->timers);
    for (int i = 0; i < c->nkinds; i++) free(c->kinds[i]);
    for (size_t i = c->jobs.lo; i < c->jobs.hi; i++) free(JX(c, i)->par_ext);
    bl_sched_ring_free(&c->jobs);
    free(c->q);
    free(c);
}

/* Common entry checks: time never goes backwards; a previous allocation failure sticks. */
static bl_status enter(bl_sched_core *c, double now, bl_error *err) {
    BL_CHECK_ARG(c != NULL, err, "core is NULL");
    BL_CHECK_ARG(isfinite(now), err, "time %.17g is not a finite number of seconds", now);
    BL_CHECK_ARG(now >= c->now, err, "time %.17g is before the core's last time %.17g", now, c->now);
    if (c->oom) return bl_seterr(err, BL_ENOMEM, "out of memory (an earlier call failed)");
    c->now = now;
    return BL_OK;
}
static bl_status leave(bl_sched_core *c, bl_error *err) {
    return c->oom ? bl_seterr(err, BL_ENOMEM, "out of memory") : BL_OK;
}

static int running(const bl_sched_core *c, size_t job) {
    if (job >= c->nj || job < c->jobs.lo) return -1;
    int d = JX(c, job)->dev;
    return (JX(c, job)->where == Q_RUN && d >= 0 && c->D[d].job == (int)job) ? d : -1;
}

static int kind_id(bl_sched_core *c, const char *name) {
    for (int i = 0; i < c->nkinds; i++)
        if (strcmp(c->kinds[i], name) == 0) return i;
    if (c->nkinds == MAXKINDS) return -2;
    size_t n = strlen(name) + 1;
    char *s = malloc(n);
    if (!s) return -1;
    memcpy(s, name, n);
    c->kinds[c->nkinds] = s;
    return c->nkinds++;
}

bl_status bl_sched_core_submit(bl_sched_core *c, double now, const bl_sched_submit *sub, size_t *id, bl_error *err) {
    bl_status st = enter(c, now, err);
    if (st) return st;
    BL_CHECK_ARG(sub != NULL && sub->job.kind != NULL, err, "job or its kind is NULL");
    const bl_sched_job_desc *jd = &sub->job;
    BL_CHECK_ARG(jd->implicit || (jd->iterations > 0 && isfinite(jd->iterations)), err,
                 "an explicit job needs iterations > 0 (got %g)", jd->iterations);
    BL_CHECK_ARG(jd->n_params == 0 || jd->params != NULL, err, "n_params = %zu but params is NULL", jd->n_params);
    BL_CHECK_ARG(jd->n_params <= 1024, err, "too many params (%zu)", jd->n_params);
    BL_CHECK_ARG(sub->use_pct[0] >= 0 && sub->use_pct[1] >= 0, err, "use_pct must be >= 0");
    if (c->pol == BL_SCHED_ORACLE)
        for (int k = 0; k < 2; k++)
            BL_CHECK_ARG(!c->has_kind[k] || (sub->true_iterations > 0 && sub->true_s_per_iter[k] > 0), err,
                         "the oracle needs true_iterations and true_s_per_iter > 0");
    BL_CHECK_ARG(c->nj < (size_t)INT32_MAX - 1, err, "too many jobs");
    int kid = kind_id(c, jd->kind);
    if (kid == -2) return bl_seterr(err, BL_ERANGE, "more than %d job kinds", MAXKINDS);
    if (kid < 0) return bl_seterr(err, BL_ENOMEM, "out of memory");
    double *ext = NULL;
    if (jd->n_params > 4 && !(ext = malloc(jd->n_params * sizeof *ext))) return bl_seterr(err, BL_ENOMEM, "out of memory");
    /* forget the finished jobs at the low end: nothing refers to them any more (their timers are
     * stale, and a host reads a finished job's record before submitting the next) */
    while (c->jobs.lo < c->jobs.hi && JX(c, c->jobs.lo)->where == Q_DONE) {
        free(JX(c, c->jobs.lo)->par_ext);
        c->jobs.lo++;
    }
    if (bl_sched_ring_push(&c->jobs, NULL)) { free(ext); return bl_seterr(err, BL_ENOMEM, "out of memory"); }
    int j = (int)c->nj++;
    cjob *x = JX(c, j);
    x->left = x->right = x->next = x->dev = -1;
    x->kind = kid;
    x->implicit = jd->implicit ? 1 : 0;
    x->iters = jd->implicit ? 0 : jd->iterations;
    x->true_iters = sub->true_iterations;
    x->true_spi[0] = sub->true_s_per_iter[0];
    x->true_spi[1] = sub->true_s_per_iter[1];
    x->use_gpu = sub->use_pct[BL_SCHED_GPU];
    x->n_par = (int)jd->n_params;
    x->par_ext = ext;
    if (jd->n_params) memcpy(ext ? ext : x->par_in, jd->params, jd->n_params * sizeof *jd->params);
    if (id) *id = (size_t)j;
    on_arrival(c, j);
    return leave(c, err);
}

bl_status bl_sched_core_next_action(bl_sched_core *c, double now, bl_sched_action *out) {
    if (!c || !out) return BL_EINVAL;
    bl_status st = enter(c, now, NULL);
    if (st) return st;
    bl_sched_event e;
    /* due timers first: they may add actions */
    while (c->timers.n > 0 && c->timers.v[0].t <= now && bl_sched_evheap_pop(&c->timers, &e)) on_age(c, e.a, e.ver);
    if ((st = leave(c, NULL))) return st;
    memset(out, 0, sizeof *out);
    if (c->qn > 0) {
        *out = c->q[c->qhead];
        c->qhead = (c->qhead + 1) % c->qcap;
        c->qn--;
        return BL_OK;
    }
    out->type = BL_SCHED_ACT_NONE;
    out->device = -1;
    out->at = c->timers.n > 0 ? c->timers.v[0].t : INFINITY;
    return BL_OK;
}

int bl_sched_core_pause_point(const bl_sched_core *c, double now, size_t job, double *seconds) {
    (void)now;
    double slice = INFINITY;
    int d = c ? running(c, job) : -1, go = 0;
    if (d >= 0 && !c->D[d].preempt_req && !c->D[d].est) go = slice_goes_on(c, d, &slice);
    if (seconds) *seconds = slice;
    return go;
}

static bl_status stopped(bl_sched_core *c, double now, size_t job, double iterations, double seconds, int finished,
                         bl_error *err) {
    bl_status st = enter(c, now, err);
    if (st) return st;
    int d = running(c, job);
    BL_CHECK_ARG(d >= 0, err, "job %zu is not running", job);
    BL_CHECK_ARG(iterations >= JX(c, job)->k && isfinite(iterations) && seconds >= 0 && isfinite(seconds), err,
                 "job %zu: iterations %g (had %g) or seconds %g invalid", job, iterations, JX(c, job)->k, seconds);
    on_stop(c, d, iterations, seconds, finished);
    return leave(c, err);
}

bl_status bl_sched_core_paused(bl_sched_core *c, double now, size_t job, double iterations, double seconds, bl_error *err) {
    return stopped(c, now, job, iterations, seconds, 0, err);
}

bl_status bl_sched_core_finished(bl_sched_core *c, double now, size_t job, double iterations, double seconds, bl_error *err) {
    return stopped(c, now, job, iterations, seconds, 1, err);
}

bl_status bl_sched_core_device_ready(bl_sched_core *c, double now, int device, bl_error *err) {
    bl_status st = enter(c, now, err);
    if (st) return st;
    BL_CHECK_ARG(device >= 0 && device < c->nd, err, "no device %d", device);
    c->D[device].pausing = 0;
    dispatch(c, device);
    return leave(c, err);
}

bl_status bl_sched_core_iteration_end(bl_sched_core *c, double now, size_t job, double iterations, bl_error *err) {
    bl_status st = enter(c, now, err);
    if (st) return st;
    int d = running(c, job);
    BL_CHECK_ARG(d >= 0, err, "job %zu is not running", job);
    BL_CHECK_ARG(isfinite(iterations) && iterations >= JX(c, job)->k, err, "job %zu: iterations %g invalid", job, iterations);
    c->D[d].k_rep = iterations;
    return BL_OK;
}

bl_status bl_sched_core_cpu_utilisation(bl_sched_core *c, double now, double pct, bl_error *err) {
    bl_status st = enter(c, now, err);
    if (st) return st;
    BL_CHECK_ARG(pct >= 0 && pct <= 100, err, "CPU utilisation %g outside 0..100", pct);
    on_load(c, pct);
    return leave(c, err);
}

bl_status bl_sched_core_set_interference(bl_sched_core *c, double now, double factor, bl_error *err) {
    bl_status st = enter(c, now, err);
    if (st) return st;
    BL_CHECK_ARG(factor >= 1 && isfinite(factor), err, "interference factor %g must be >= 1", factor);
    c->interference = factor;
    update_interference(c);
    return leave(c, err);
}

bl_status bl_sched_core_gpu_utilisation(bl_sched_core *c, double now, int device, double pct, bl_error *err) {
    bl_status st = enter(c, now, err);
    if (st) return st;
    BL_CHECK_ARG(device >= 0 && device < c->nd && c->D[device].kind == BL_SCHED_GPU, err, "device %d is not a GPU", device);
    BL_CHECK_ARG(pct >= 0 && pct <= 100, err, "GPU utilisation %g outside 0..100", pct);
    int g = c->D[device].job, cpu_busy = 0;
    for (int d = 0; d < c->nd; d++)
        if (c->D[d].kind == BL_SCHED_CPU && c->D[d].job >= 0) cpu_busy = 1;
    /* only a reading taken beside one of our CPU jobs says anything about interference */
    if (g < 0 || !cpu_busy || !(JX(c, g)->use_gpu > 0)) return BL_OK;
    double f = pct > 0 ? JX(c, g)->use_gpu / pct : INFINITY;
    if (!(f >= 1)) f = 1;
    if (!isfinite(f)) f = 1e6;
    c->interference = f;
    update_interference(c);
    return leave(c, err);
}

bl_status bl_sched_core_timer(bl_sched_core *c, double now, bl_error *err) {
    bl_status st = enter(c, now, err);
    if (st) return st;
    bl_sched_event e;
    if (c->timers.n > 0 && c->timers.v[0].t <= now && bl_sched_evheap_pop(&c->timers, &e)) on_age(c, e.a, e.ver);
    return leave(c, err);
}

bl_status bl_sched_core_job(const bl_sched_core *c, size_t job, bl_sched_core_job_info *out) {
    if (!c || !out || job >= c->nj) return BL_EINVAL;
    if (job < c->jobs.lo) return BL_ENOTFOUND;   /* finished and forgotten */
    const cjob *x = JX(c, job);
    memset(out, 0, sizeof *out);
    switch (x->where) {
    case Q_EST: out->state = 1; break;
    case Q_RUN: out->state = 2; break;
    case Q_DONE: out->state = 3; break;
    default: out->state = 0; break;
    }
    out->device = x->dev;
    out->iterations = x->k;
    out->remaining_s = x->dev >= 0 && x->where != Q_DONE ? rem_sched(c, (int)job, c->D[x->dev].kind, x->k) : INFINITY;
    if (x->where == Q_DONE) out->remaining_s = 0;
    out->estimated = x->estimated;
    out->predicted = x->predicted;
    out->aged = x->aged;
    return BL_OK;
}

void bl_sched_core_stats_get(const bl_sched_core *c, double now, bl_sched_core_stats *out) {
    if (!out) return;
    memset(out, 0, sizeof *out);
    if (!c) return;
    out->submitted = c->nj;
    out->finished = c->n_done;
    out->interference = c->interference;
    double h = c->held_s;   /* holds still open count up to now, device by device */
    for (int d = 0; d < c->nd; d++)
        if (c->D[d].blocked || c->D[d].iblocked) h += now - c->D[d].hold_since;
    out->held_s = h;
}
