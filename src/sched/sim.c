/* sim.c — the deterministic discrete-event simulator of DBMLSched and its baselines.
 *
 * World: devices (CPUs, GPUs), each running at most one ML job; a job advances at its per-iteration
 * time (slowed on a GPU by `interference` while any CPU runs an ML job) and stops only at iteration
 * boundaries; a stop costs `overhead` on the device and a later start of a started job costs it again.
 * Database load is a piecewise-constant CPU-use profile; query latency is inflated by CPU ML use.
 *
 * Policies (see bl_sched_policy): FIFO-GPU, RR (one global queue, quota slices on any device),
 * DBMLSched (estimation phase; explicit jobs to the device with the smallest service time, per-device
 * queues by shortest remaining service time, preemptive on arrival; implicit jobs in a per-device
 * round robin of quotas alternating with explicit ones; aging; CPU observer; interference pausing),
 * DBMLSched + predictor (estimation skipped where the predictor answers for every device kind) and
 * Oracle SRPT (true remaining times, idle devices steal queued work, no overhead, no estimation).
 *
 * Mechanics: one event heap on (time, seq); events carry version stamps and stale ones are skipped,
 * so nothing is ever searched or removed from the heap. Per-device explicit queues are treaps keyed
 * by (remaining estimate, job id) with subtree sums, so "work queued ahead of a job" is O(log n).
 * Not modelled: memory limits, data movement between devices, multi-device jobs. */
#include "sched/sched_internal.h"
#include "common/error.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { EV_ARRIVAL = 0, EV_STOP, EV_FREE, EV_AGE, EV_LOAD };
enum { Q_NONE = 0, Q_EXP, Q_IMP, Q_FIFO, Q_EST, Q_RUN, Q_DONE };
enum { CLS_EXP = 0, CLS_IMP = 1 };
#define MAXDEV 64
#define EPS 1e-9

typedef struct sjob {
    double   k;                 /* iterations done (whole at every stop) */
    double   spi_est[2];        /* measured in the estimation phase; 0 = unknown */
    double   pred[2];           /* predicted whole-job seconds; 0 = none */
    double   time_on[2], iters_on[2];
    double   first_start, completion;
    double   enq_t, waited;         /* aging: total time spent waiting in an explicit queue */
    double   key, sum;          /* treap: key = remaining estimate when queued, sum over subtree */
    int      left, right;
    uint32_t prio, qver;
    int      next;              /* FIFO link (implicit queue, global queue, estimation queue) */
    int      dev, where, preemptions;
    unsigned char started, aged, estimated, predicted, est_step;
} sjob;

typedef struct sdev {
    int      kind, index;
    int      job, in_overhead, reserved;
    uint32_t ver;
    double   t0, k0, spi_eff, k_stop, slow;
    double   prog_start, kstart, est_window;
    int      stop_finish, est, cls, preempt_req, last_cls;
    int      root, fhead, ftail;
    int      blocked, iblocked;
    double   baseline, busy, hold_since;
} sdev;

struct bl_sched_result {
    size_t               n;
    bl_sched_job_result *jobs;
    bl_sched_segment    *seg;
    size_t               nseg, capseg;
    double              *ct;
    int                 *cn;
    size_t               ncurve, capcurve;
    bl_sched_summary     sum;
};

typedef struct sim {
    const bl_sched_workload *w;
    bl_sched_config          cfg;
    bl_sched_policy          pol;
    int                      dbml;          /* DBMLSched or DBMLSched + predictor */
    bl_sched_predictor       pred;
    int                      have_pred;
    sjob                    *J;
    sdev                     D[MAXDEV];
    int                      nd;
    int                      has_kind[2];
    bl_sched_evheap          h;
    bl_sched_rng             rng;
    double                   now, last_t, overhead, db;
    int                      ghead, gtail;  /* global FIFO (FIFO-GPU, RR) */
    int                      ehead, etail, est_cur;
    size_t                   n_in_system, n_done;
    double                   db_time, infl_int, infl_max;
    bl_sched_result         *R;
    bl_status                oom;
} sim;

/* ---------------- treap with subtree sums ---------------- */

static int tlt(const sjob *J, int a, int b) {   /* (key, id) order */
    if (J[a].key < J[b].key) return 1;
    if (J[a].key > J[b].key) return 0;
    return a < b;
}
static void tupd(sjob *J, int t) {
    J[t].sum = J[t].key + (J[t].left >= 0 ? J[J[t].left].sum : 0) + (J[t].right >= 0 ? J[J[t].right].sum : 0);
}
/* Splits t into nodes before x (l) and the rest (r); with incl, x itself goes to l. */
static void tsplit(sjob *J, int t, int x, int incl, int *l, int *r) {
    if (t < 0) { *l = *r = -1; return; }
    if (tlt(J, t, x) || (incl && t == x)) {
        tsplit(J, J[t].right, x, incl, &J[t].right, r);
        *l = t;
    } else {
        tsplit(J, J[t].left, x, incl, l, &J[t].left);
        *r = t;
    }
    tupd(J, t);
}
static int tmerge(sjob *J, int a, int b) {
    if (a < 0) return b;
    if (b < 0) return a;
    if (J[a].prio > J[b].prio) {
        J[a].right = tmerge(J, J[a].right, b);
        tupd(J, a);
        return a;
    }
    J[b].left = tmerge(J, a, J[b].left);
    tupd(J, b);
    return b;
}
static void tinsert(sjob *J, int *root, int x) {
    J[x].left = J[x].right = -1;
    J[x].sum = J[x].key;
    int l, r;
    tsplit(J, *root, x, 0, &l, &r);
    *root = tmerge(J, tmerge(J, l, x), r);
}
/* Removes x (which must be in the tree): cut out [x, x] and merge the sides. */
static void terase(sjob *J, int *root, int x) {
    int l, m, r;
    tsplit(J, *root, x, 0, &l, &r);
    tsplit(J, r, x, 1, &m, &r);
    (void)m;
    J[x].left = J[x].right = -1;
    *root = tmerge(J, l, r);
}
static int tmin(const sjob *J, int t) {
    if (t < 0) return -1;
    while (J[t].left >= 0) t = J[t].left;
    return t;
}
/* Sum of keys strictly before (key, id). */
static double tprefix(const sjob *J, int t, double key, int id) {
    double s = 0;
    while (t >= 0) {
        int before = (J[t].key < key) || (J[t].key == key && t < id);
        if (before) {
            s += J[t].key + (J[t].left >= 0 ? J[J[t].left].sum : 0);
            t = J[t].right;
        } else {
            t = J[t].left;
        }
    }
    return s;
}

/* ---------------- small helpers ---------------- */

static const bl_sched_wjob *W(const sim *s, int j) { return &s->w->jobs[j]; }

static void push_ev(sim *s, double t, int type, int a, uint32_t ver) {
    if (bl_sched_evheap_push(&s->h, t, type, a, ver)) s->oom = BL_ENOMEM;
}

static void curve_point(sim *s) {
    bl_sched_result *R = s->R;
    if (!s->cfg.record_trace) return;
    if (R->ncurve == R->capcurve) {
        size_t nc = R->capcurve ? R->capcurve * 2 : 256;
        double *nt = realloc(R->ct, nc * sizeof *nt);
        if (!nt) { s->oom = BL_ENOMEM; return; }
        R->ct = nt;
        int *nn = realloc(R->cn, nc * sizeof *nn);
        if (!nn) { s->oom = BL_ENOMEM; return; }
        R->cn = nn;
        R->capcurve = nc;
    }
    R->ct[R->ncurve] = s->now;
    R->cn[R->ncurve] = (int)s->n_in_system;
    R->ncurve++;
}

static void add_segment(sim *s, int j, int d, double a, double b, int est) {
    bl_sched_result *R = s->R;
    if (!s->cfg.record_trace || !(b > a)) return;
    if (R->nseg == R->capseg) {
        size_t nc = R->capseg ? R->capseg * 2 : 256;
        bl_sched_segment *ns = realloc(R->seg, nc * sizeof *ns);
        if (!ns) { s->oom = BL_ENOMEM; return; }
        R->seg = ns;
        R->capseg = nc;
    }
    bl_sched_segment g = { (size_t)j, d, est, a, b };
    R->seg[R->nseg++] = g;
}

static void fifo_push(sim *s, int *head, int *tail, int j) {
    s->J[j].next = -1;
    if (*tail >= 0) s->J[*tail].next = j; else *head = j;
    *tail = j;
}
static int fifo_pop(sim *s, int *head, int *tail) {
    int j = *head;
    if (j < 0) return -1;
    *head = s->J[j].next;
    if (*head < 0) *tail = -1;
    s->J[j].next = -1;
    return j;
}

static bl_sched_job_desc make_desc(const sim *s, int j, int reveal) {
    const bl_sched_wjob *wj = W(s, j);
    bl_sched_job_desc d;
    d.kind = bl_sched_kind_names[wj->kind];
    d.implicit = wj->implicit;
    d.iterations = (wj->implicit && !reveal) ? 0 : wj->iters;
    d.params = wj->n_params ? wj->params : NULL;
    d.n_params = (size_t)wj->n_params;
    return d;
}

static bl_sched_device_info dev_info(const sim *s, int kind) {
    bl_sched_device_info di;
    di.kind = (bl_sched_device_kind)kind;
    di.index = 0;
    for (int d = 0; d < s->nd; d++)
        if (s->D[d].kind == kind) { di.index = d; break; }
    di.cores = kind == BL_SCHED_CPU ? s->cfg.cpu_cores : s->cfg.gpu_cores;
    return di;
}

/* Iterations done by the job running on d at time t. */
static double cur_k(const sdev *dv, double t) {
    if (t <= dv->t0) return dv->k0;
    double k = dv->k0 + (t - dv->t0) / dv->spi_eff;
    return k > dv->k_stop ? dv->k_stop : k;
}

/* The scheduler's view of the remaining seconds of job j on a device kind after kcur iterations;
 * INFINITY when it cannot know (an implicit job without a prediction, or a device not measured). */
static double rem_sched(const sim *s, int j, int dk, double kcur) {
    const bl_sched_wjob *wj = W(s, j);
    const sjob *x = &s->J[j];
    if (s->pol == BL_SCHED_ORACLE) return (wj->iters - kcur) * wj->spi[dk];
    if (x->pred[dk] > 0) {
        if (!wj->implicit) return x->pred[dk] * (1.0 - kcur / wj->iters);
        double frac = 0;
        for (int k = 0; k < 2; k++)
            if (x->pred[k] > 0) frac += x->time_on[k] / x->pred[k];
        if (frac > 0.95) frac = 0.95;   /* overran its prediction: still "nearly done" */
        return x->pred[dk] * (1.0 - frac);
    }
    if (wj->implicit) return INFINITY;
    if (x->spi_est[dk] > 0) return (wj->iters - kcur) * x->spi_est[dk];
    return INFINITY;
}

static int job_class(const sim *s, int j) {
    if (s->J[j].aged) return CLS_IMP;
    for (int k = 0; k < 2; k++)
        if (s->has_kind[k] && isfinite(rem_sched(s, j, k, s->J[j].k))) return CLS_EXP;
    return CLS_IMP;
}

/* ---------------- device mechanics ---------------- */

static void plan(sim *s, int d) {
    sdev *dv = &s->D[d];
    dv->ver++;
    double t = dv->t0 + (dv->k_stop - dv->k0) * dv->spi_eff;
    if (t < s->now) t = s->now;
    push_ev(s, t, EV_STOP, d, dv->ver);
}

static void set_slice(sim *s, int d, double slice) {
    sdev *dv = &s->D[d];
    const bl_sched_wjob *wj = W(s, dv->job);
    double kc = cur_k(dv, s->now);
    dv->k_stop = wj->iters;
    dv->stop_finish = 1;
    if (isfinite(slice)) {
        double base = s->now > dv->t0 ? s->now : dv->t0;
        double ks = ceil(kc + (slice - (base - s->now)) / dv->spi_eff - EPS);
        if (ks < floor(kc + EPS) + 1) ks = floor(kc + EPS) + 1;   /* at least one iteration */
        if (ks < wj->iters) { dv->k_stop = ks; dv->stop_finish = 0; }
    }
}

/* Stop the job on d at the first iteration boundary at or after time tl. */
static void stop_at(sim *s, int d, double tl) {
    sdev *dv = &s->D[d];
    if (dv->job < 0) return;
    double kl = cur_k(dv, tl > dv->t0 ? tl : dv->t0);
    double kb = ceil(kl - EPS);
    if (kb < dv->k_stop) {
        dv->k_stop = kb;
        dv->stop_finish = 0;
        plan(s, d);
    }
}

static void preempt(sim *s, int d) {
    if (s->D[d].job < 0) return;
    s->D[d].preempt_req = 1;
    stop_at(s, d, s->now);
}

static void hold_begin(sim *s, sdev *c) { if (!c->blocked && !c->iblocked) c->hold_since = s->now; }
static void hold_end(sim *s, sdev *c) {
    if (!c->blocked && !c->iblocked) s->R->sum.observer_pause_s += s->now - c->hold_since;
}

static void dispatch(sim *s, int d);

/* GPU slow-down from a running CPU job, and DBMLSched's reaction to it. */
static void update_interference(sim *s) {
    double f = s->w->interference;
    int cpu_busy = 0;
    for (int d = 0; d < s->nd; d++)
        if (s->D[d].kind == BL_SCHED_CPU && s->D[d].job >= 0) cpu_busy = 1;
    int hurt = 0;   /* would a running GPU job lose more than gpu_drop_pct of its utilisation? */
    for (int d = 0; d < s->nd; d++) {
        sdev *g = &s->D[d];
        if (g->kind != BL_SCHED_GPU || g->job < 0) continue;
        double slow = cpu_busy ? f : 1.0;
        if (slow != g->slow) {
            if (s->now > g->t0) { g->k0 = cur_k(g, s->now); g->t0 = s->now; }
            g->slow = slow;
            g->spi_eff = W(s, g->job)->spi[BL_SCHED_GPU] * slow;
            plan(s, d);
        }
        double use = W(s, g->job)->use[BL_SCHED_GPU];
        if (f > 1 && use - use / f > s->cfg.gpu_drop_pct) hurt = 1;
    }
    if (!s->dbml) return;
    for (int d = 0; d < s->nd; d++) {
        sdev *c = &s->D[d];
        if (c->kind != BL_SCHED_CPU) continue;
        if (hurt && !c->iblocked) {   /* also keeps an idle CPU from starting a job */
            hold_begin(s, c);
            c->iblocked = 1;
            if (c->job >= 0 && !c->est) preempt(s, d);
        } else if (!hurt && c->iblocked) {
            c->iblocked = 0;
            hold_end(s, c);
            dispatch(s, d);
        }
    }
}

static void start_run(sim *s, int d, int j, double slice, int est, int cls) {
    sdev *dv = &s->D[d];
    sjob *x = &s->J[j];
    const bl_sched_wjob *wj = W(s, j);
    double oh = (x->started && s->pol != BL_SCHED_ORACLE) ? s->overhead : 0;
    s->R->sum.overhead_s += oh;
    dv->job = j;
    dv->t0 = s->now + oh;
    dv->prog_start = dv->t0;
    dv->k0 = dv->kstart = x->k;
    int cpu_busy = 0;
    for (int e = 0; e < s->nd; e++)
        if (s->D[e].kind == BL_SCHED_CPU && s->D[e].job >= 0) cpu_busy = 1;
    dv->slow = (dv->kind == BL_SCHED_GPU && cpu_busy) ? s->w->interference : 1.0;
    dv->spi_eff = wj->spi[dv->kind] * dv->slow;
    dv->est = est;
    dv->cls = cls;
    dv->preempt_req = 0;
    set_slice(s, d, slice);
    if (!x->started) { x->started = 1; x->first_start = s->now; }
    x->where = Q_RUN;
    x->dev = d;
    if (dv->kind == BL_SCHED_CPU && !dv->blocked) dv->baseline = s->db;
    plan(s, d);
    update_interference(s);
}

/* ---------------- queues ---------------- */

static void enqueue_exp(sim *s, int d, int j, double r) {
    sjob *x = &s->J[j];
    x->key = r;
    uint64_t z = (uint64_t)j * 0x9E3779B97F4A7C15ULL;   /* a fixed hash: deterministic priorities */
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    x->prio = (uint32_t)(z >> 32);
    tinsert(s->J, &s->D[d].root, j);
    x->where = Q_EXP;
    x->dev = d;
    x->qver++;
    x->enq_t = s->now;
    /* aging counts all the time a job has waited, so repeated short runs between preemptions do not
     * reset its claim */
    if (s->dbml && isfinite(s->cfg.aging_s)) {
        double left = s->cfg.aging_s - x->waited;
        push_ev(s, s->now + (left > 0 ? left : 0), EV_AGE, j, x->qver);
    }
}

static void enqueue_imp(sim *s, int d, int j) {
    sjob *x = &s->J[j];
    fifo_push(s, &s->D[d].fhead, &s->D[d].ftail, j);
    x->where = Q_IMP;
    x->dev = d;
    x->qver++;
}

/* Service time of a job with remaining r on d: itself + queued explicit work ahead + the running
 * explicit job if it is not going to be preempted by this one. */
static double service_time(const sim *s, int d, int j, double r) {
    const sdev *dv = &s->D[d];
    double t = r + tprefix(s->J, dv->root, r, j);
    if (dv->job >= 0 && !dv->est && dv->cls == CLS_EXP) {
        double rr = rem_sched(s, dv->job, dv->kind, cur_k(dv, s->now));
        if (rr <= r) t += rr;
    }
    return t;
}

/* Queue an explicit-class job on the device with the smallest service time (DBMLSched, Oracle). */
static void place_explicit(sim *s, int j) {
    int best = -1;
    double bt = INFINITY, br = INFINITY;
    for (int d = 0; d < s->nd; d++) {
        double r = rem_sched(s, j, s->D[d].kind, s->J[j].k);
        if (!isfinite(r)) continue;
        double t = service_time(s, d, j, r);
        if (t < bt) { bt = t; br = r; best = d; }
    }
    if (best < 0) return;   /* caller guarantees a finite estimate */
    enqueue_exp(s, best, j, br);
    sdev *dv = &s->D[best];
    if (dv->job >= 0 && !dv->est) {
        if (dv->cls == CLS_EXP) {
            double rr = rem_sched(s, dv->job, dv->kind, cur_k(dv, s->now));
            if (rr > br) preempt(s, best);
        } else {
            stop_at(s, best, s->now + s->cfg.quota_s);   /* the implicit job keeps one quota */
        }
    } else if (dv->job < 0) {
        dispatch(s, best);
    }
}

static void place_implicit(sim *s, int j) {
    const sjob *x = &s->J[j];
    int best = -1;
    double bs = INFINITY;
    for (int d = 0; d < s->nd; d++) {
        int k = s->D[d].kind;
        double v = x->spi_est[k] > 0 ? x->spi_est[k] : INFINITY;
        if (v < bs) { bs = v; best = d; }
    }
    if (best < 0)   /* nothing measured: the GPU, else the first device */
        for (int d = 0; d < s->nd && best < 0; d++)
            if (s->D[d].kind == BL_SCHED_GPU) best = d;
    if (best < 0) best = 0;
    enqueue_imp(s, best, j);
    sdev *dv = &s->D[best];
    if (dv->job >= 0 && !dv->est) stop_at(s, best, s->now + s->cfg.quota_s);
    else if (dv->job < 0) dispatch(s, best);
}

static void place_dbml(sim *s, int j) {
    if (job_class(s, j) == CLS_EXP) place_explicit(s, j);
    else place_implicit(s, j);
}

/* ---------------- estimation phase ---------------- */

static void next_est(sim *s);

static void est_advance(sim *s, int j) {
    sjob *x = &s->J[j];
    static const int order[2] = { BL_SCHED_GPU, BL_SCHED_CPU };
    while (x->est_step < 2) {
        int kind = order[x->est_step++];
        if (!s->has_kind[kind]) continue;
        int d = -1;
        for (int e = 0; e < s->nd; e++)   /* an idle device of the kind, else the first */
            if (s->D[e].kind == kind && s->D[e].job < 0 && !s->D[e].in_overhead && s->D[e].reserved < 0) { d = e; break; }
        for (int e = 0; e < s->nd && d < 0; e++)
            if (s->D[e].kind == kind && s->D[e].reserved < 0) d = e;
        if (d < 0) continue;
        sdev *dv = &s->D[d];
        if (kind == BL_SCHED_CPU && (dv->blocked || dv->iblocked)) continue;   /* the DB needs the CPU */
        double win = s->cfg.est_min_s;
        if (dv->job >= 0) {
            double rr = rem_sched(s, dv->job, dv->kind, cur_k(dv, s->now));
            if (isfinite(rr) && s->cfg.est_fraction * rr > win) win = s->cfg.est_fraction * rr;
        }
        dv->reserved = j;
        dv->est_window = win;
        x->where = Q_EST;
        if (dv->job >= 0) preempt(s, d);
        else dispatch(s, d);
        return;
    }
    /* every device kind measured (or skipped): place it */
    s->est_cur = -1;
    place_dbml(s, j);
    next_est(s);
}

static void next_est(sim *s) {
    while (s->est_cur < 0 && s->ehead >= 0) {
        int j = fifo_pop(s, &s->ehead, &s->etail);
        s->est_cur = j;
        s->J[j].estimated = 1;
        s->J[j].est_step = 0;
        est_advance(s, j);
    }
}

/* ---------------- dispatch: what an idle device runs next ---------------- */

static int oracle_steal(sim *s, int d) {
    int best = -1, from = -1;
    double bh = INFINITY;
    for (int e = 0; e < s->nd; e++) {
        if (e == d) continue;
        int x = tmin(s->J, s->D[e].root);
        if (x < 0) continue;
        double here = rem_sched(s, x, s->D[d].kind, s->J[x].k);
        double there = rem_sched(s, x, s->D[e].kind, s->J[x].k);
        if (s->D[e].job >= 0) there += rem_sched(s, s->D[e].job, s->D[e].kind, cur_k(&s->D[e], s->now));
        if (here < there && here < bh) { bh = here; best = x; from = e; }
    }
    if (best >= 0) { terase(s->J, &s->D[from].root, best); s->J[best].qver++; }
    return best;
}

static void dispatch(sim *s, int d) {
    sdev *dv = &s->D[d];
    if (dv->job >= 0 || dv->in_overhead) return;
    int j;
    switch (s->pol) {
    case BL_SCHED_FIFO_GPU:
        if (dv->kind != BL_SCHED_GPU) return;
        j = fifo_pop(s, &s->ghead, &s->gtail);
        if (j >= 0) start_run(s, d, j, INFINITY, 0, CLS_EXP);
        return;
    case BL_SCHED_RR:
        j = fifo_pop(s, &s->ghead, &s->gtail);
        if (j >= 0) start_run(s, d, j, s->cfg.quota_s, 0, CLS_IMP);
        return;
    case BL_SCHED_ORACLE:
        j = tmin(s->J, dv->root);
        if (j >= 0) { terase(s->J, &dv->root, j); s->J[j].qver++; }
        else j = oracle_steal(s, d);
        if (j >= 0) start_run(s, d, j, INFINITY, 0, CLS_EXP);
        return;
    default:
        break;
    }
    /* DBMLSched */
    if (dv->reserved >= 0) {
        j = dv->reserved;
        dv->reserved = -1;
        start_run(s, d, j, dv->est_window, 1, CLS_EXP);
        return;
    }
    if (dv->kind == BL_SCHED_CPU && (dv->blocked || dv->iblocked)) return;
    int has_e = dv->root >= 0, has_i = dv->fhead >= 0;
    if (!has_e && !has_i) return;
    if (has_i && (!has_e || dv->last_cls == CLS_EXP)) {
        j = fifo_pop(s, &dv->fhead, &dv->ftail);
        s->J[j].qver++;
        dv->last_cls = CLS_IMP;
        start_run(s, d, j, (has_e || dv->fhead >= 0) ? s->cfg.quota_s : INFINITY, 0, CLS_IMP);
    } else {
        j = tmin(s->J, dv->root);
        terase(s->J, &dv->root, j);
        s->J[j].qver++;
        s->J[j].waited += s->now - s->J[j].enq_t;
        dv->last_cls = CLS_EXP;
        start_run(s, d, j, has_i ? s->cfg.quota_s : INFINITY, 0, CLS_EXP);
    }
}

static void dispatch_all(sim *s) {
    for (int d = 0; d < s->nd; d++) dispatch(s, d);
}

/* ---------------- event handlers ---------------- */

static void finish_job(sim *s, int j) {
    sjob *x = &s->J[j];
    const bl_sched_wjob *wj = W(s, j);
    x->where = Q_DONE;
    x->k = wj->iters;
    x->completion = s->now;
    s->n_in_system--;
    s->n_done++;
    curve_point(s);
    if (s->have_pred && s->pred.observe) {
        bl_sched_job_desc desc = make_desc(s, j, 1);
        for (int k = 0; k < 2; k++)
            if (x->iters_on[k] > 0 && x->time_on[k] > 0) {
                bl_sched_device_info di = dev_info(s, k);
                s->pred.observe(s->pred.ctx, &desc, &di, x->iters_on[k], x->time_on[k]);
            }
    }
    if (s->est_cur == j) { s->est_cur = -1; next_est(s); }
}

/* Whether a slice that ended without a request to stop simply goes on (nobody else is waiting). */
static int slice_goes_on(sim *s, int d, double *slice) {
    sdev *dv = &s->D[d];
    *slice = INFINITY;
    if (s->pol == BL_SCHED_RR) { *slice = s->cfg.quota_s; return s->ghead < 0; }
    if (!s->dbml) return 0;
    if (dv->kind == BL_SCHED_CPU && (dv->blocked || dv->iblocked)) return 0;
    if (dv->cls == CLS_EXP) return dv->fhead < 0;
    return dv->root < 0 && dv->fhead < 0;
}

static void on_stop(sim *s, int d) {
    sdev *dv = &s->D[d];
    int j = dv->job;
    sjob *x = &s->J[j];
    double slice;
    if (!dv->stop_finish && !dv->preempt_req && !dv->est && slice_goes_on(s, d, &slice)) {
        if (s->now > dv->t0) { dv->k0 = cur_k(dv, s->now); dv->t0 = s->now; }
        set_slice(s, d, slice);
        plan(s, d);
        return;
    }
    int kind = dv->kind, was_est = dv->est, finished = dv->stop_finish;
    double prog = s->now - dv->prog_start;
    if (prog < 0) prog = 0;
    double iters = dv->k_stop - dv->kstart;
    x->time_on[kind] += prog;
    x->iters_on[kind] += iters;
    dv->busy += prog;
    if (was_est) s->R->sum.estimation_s += prog;
    add_segment(s, j, d, dv->prog_start, s->now, was_est);
    x->k = dv->k_stop;
    dv->job = -1;
    dv->ver++;
    if (finished) {
        finish_job(s, j);
        update_interference(s);
        if (s->pol == BL_SCHED_ORACLE) dispatch_all(s); else dispatch(s, d);
        return;
    }
    if (!was_est) x->preemptions++;
    double oh = s->pol == BL_SCHED_ORACLE ? 0 : s->overhead;
    if (oh > 0) {
        dv->in_overhead = 1;
        s->R->sum.overhead_s += oh;
        push_ev(s, s->now + oh, EV_FREE, d, dv->ver);
    }
    /* the stopped job goes back where its policy keeps it */
    if (was_est) {
        if (iters > 0 && prog > 0) {
            double m = prog / iters;
            if (s->cfg.est_noise > 0) {
                double f = 1.0 + s->cfg.est_noise * bl_sched_rng_normal(&s->rng);
                m *= f < 0.05 ? 0.05 : f;
            }
            x->spi_est[kind] = m;
        }
    } else if (s->pol == BL_SCHED_RR) {
        fifo_push(s, &s->ghead, &s->gtail, j);
        x->where = Q_FIFO;
    } else if (s->pol == BL_SCHED_ORACLE) {
        enqueue_exp(s, d, j, rem_sched(s, j, kind, x->k));
    } else if (s->dbml) {
        if (job_class(s, j) == CLS_EXP) enqueue_exp(s, d, j, rem_sched(s, j, kind, x->k));
        else enqueue_imp(s, d, j);
    }
    update_interference(s);
    if (was_est) est_advance(s, j);
    if (oh <= 0) dispatch(s, d);
    if (s->pol == BL_SCHED_RR || s->pol == BL_SCHED_ORACLE) dispatch_all(s);
}

static int predict_all(sim *s, int j) {
    bl_sched_job_desc desc = make_desc(s, j, 0);
    double p[2] = { 0, 0 };
    for (int k = 0; k < 2; k++) {
        if (!s->has_kind[k]) continue;
        bl_sched_device_info di = dev_info(s, k);
        double v = 0;
        if (s->pred.predict(s->pred.ctx, &desc, &di, &v) != 0 || !(v > 0) || !isfinite(v)) return 0;
        p[k] = v;
    }
    s->J[j].pred[0] = p[0];
    s->J[j].pred[1] = p[1];
    s->J[j].predicted = 1;
    return 1;
}

static void on_arrival(sim *s, int j) {
    s->n_in_system++;
    curve_point(s);
    switch (s->pol) {
    case BL_SCHED_FIFO_GPU:
    case BL_SCHED_RR:
        fifo_push(s, &s->ghead, &s->gtail, j);
        s->J[j].where = Q_FIFO;
        dispatch_all(s);
        return;
    case BL_SCHED_ORACLE:
        place_explicit(s, j);
        return;
    default:
        break;
    }
    if (s->pol == BL_SCHED_DBMLSCHED_PRED && s->have_pred && s->pred.predict && predict_all(s, j)) {
        place_dbml(s, j);
        return;
    }
    fifo_push(s, &s->ehead, &s->etail, j);
    s->J[j].where = Q_EST;
    next_est(s);
}

static void on_age(sim *s, int j, uint32_t ver) {
    sjob *x = &s->J[j];
    if (x->where != Q_EXP || x->qver != ver) return;
    int d = x->dev;
    terase(s->J, &s->D[d].root, j);
    x->aged = 1;
    enqueue_imp(s, d, j);
    if (s->D[d].job >= 0 && !s->D[d].est) stop_at(s, d, s->now + s->cfg.quota_s);
}

static void on_load(sim *s, int i) {
    s->db = s->w->load[i].pct;
    if (!s->dbml) return;
    for (int d = 0; d < s->nd; d++) {
        sdev *c = &s->D[d];
        if (c->kind != BL_SCHED_CPU) continue;
        if (!c->blocked) {
            if (c->job >= 0 && !c->est && s->db - c->baseline > s->cfg.cpu_excess_pct) {
                hold_begin(s, c);
                c->blocked = 1;
                preempt(s, d);
            }
        } else if (s->db < c->baseline + s->cfg.cpu_resume_pct) {
            c->blocked = 0;
            hold_end(s, c);
            dispatch(s, d);
        }
    }
}

/* Query latency and DB-active time between events (state is constant in between). */
static void accumulate(sim *s, double t) {
    double dt = t - s->last_t;
    if (dt > 0 && s->db > 0) {
        double use = 0;
        for (int d = 0; d < s->nd; d++)
            if (s->D[d].kind == BL_SCHED_CPU && s->D[d].job >= 0) use += W(s, s->D[d].job)->use[BL_SCHED_CPU];
        double infl = 1.0 + s->cfg.query_slowdown * use / 100.0;
        s->db_time += dt;
        s->infl_int += infl * dt;
        if (infl > s->infl_max) s->infl_max = infl;
    }
    s->last_t = t;
}

/* ---------------- public API ---------------- */

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
    return bl_seterr(err, BL_ENOTFOUND, "unknown policy '%s' (fifo-gpu, rr, dbmlsched, dbmlsched-bellamy, oracle)", name);
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static bl_status summarize(sim *s) {
    bl_sched_result *R = s->R;
    bl_sched_summary *S = &R->sum;
    size_t n = s->w->n;
    double *sv = malloc(n * sizeof *sv);
    if (!sv) return BL_ENOMEM;
    double tot = 0, first = INFINITY, last = 0;
    size_t pre = 0;
    for (size_t i = 0; i < n; i++) {
        const sjob *x = &s->J[i];
        bl_sched_job_result *o = &R->jobs[i];
        o->arrival = W(s, (int)i)->arrival;
        o->first_start = x->first_start;
        o->completion = x->completion;
        o->service = x->completion - o->arrival;
        o->last_device = x->dev;
        o->preemptions = x->preemptions;
        o->aged = x->aged;
        o->estimated = x->estimated;
        o->predicted = x->predicted;
        sv[i] = o->service;
        tot += o->service;
        pre += (size_t)x->preemptions;
        if (o->arrival < first) first = o->arrival;
        if (o->completion > last) last = o->completion;
    }
    qsort(sv, n, sizeof *sv, cmp_double);
    S->n_jobs = n;
    S->mean_service = tot / (double)n;
    S->median_service = (n % 2) ? sv[n / 2] : 0.5 * (sv[n / 2 - 1] + sv[n / 2]);
    size_t r95 = (size_t)ceil(0.95 * (double)n);
    S->p95_service = sv[r95 > 0 ? r95 - 1 : 0];
    S->makespan = last - first;
    S->preemptions = pre;
    S->query_inflation_mean = s->db_time > 0 ? s->infl_int / s->db_time : 1.0;
    S->query_inflation_max = s->db_time > 0 ? s->infl_max : 1.0;
    S->n_devices = s->nd;
    for (int d = 0; d < s->nd && d < 8; d++) {
        S->util[d] = S->makespan > 0 ? s->D[d].busy / S->makespan : 0;
        S->device_kind[d] = s->D[d].kind;
    }
    free(sv);
    return BL_OK;
}

void bl_sched_result_free(bl_sched_result *r) {
    if (!r) return;
    free(r->jobs);
    free(r->seg);
    free(r->ct);
    free(r->cn);
    free(r);
}

bl_status bl_sched_simulate(const bl_sched_workload *w, const bl_sched_config *cfg, const bl_sched_predictor *pred,
                            bl_sched_result **out, bl_error *err) {
    BL_CHECK_ARG(w != NULL && cfg != NULL && out != NULL, err, "workload, config or out is NULL");
    *out = NULL;
    BL_CHECK_ARG(w->n > 0 && w->n < (size_t)INT32_MAX, err, "workload has %zu jobs (1 .. 2^31-2)", w->n);
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

    bl_status st = BL_OK;
    sim *s = calloc(1, sizeof *s);
    bl_sched_history *own = NULL;
    if (!s) return bl_seterr(err, BL_ENOMEM, "out of memory");
    s->w = w;
    s->cfg = *cfg;
    s->pol = cfg->policy;
    s->dbml = s->pol == BL_SCHED_DBMLSCHED || s->pol == BL_SCHED_DBMLSCHED_PRED;
    s->overhead = cfg->overhead_s >= 0 ? cfg->overhead_s : w->overhead_s;
    s->ghead = s->gtail = s->ehead = s->etail = s->est_cur = -1;
    bl_sched_evheap_init(&s->h);
    bl_sched_rng_seed(&s->rng, cfg->seed);
    if (s->pol == BL_SCHED_DBMLSCHED_PRED) {
        if (pred && pred->predict) {
            s->pred = *pred;
        } else {
            if ((st = bl_sched_history_new(&own, err))) goto done;
            s->pred = bl_sched_history_predictor(own);
        }
        s->have_pred = 1;
    }
    s->R = calloc(1, sizeof *s->R);
    s->J = calloc(w->n, sizeof *s->J);
    if (!s->R || !s->J) { st = bl_seterr(err, BL_ENOMEM, "out of memory"); goto done; }
    s->R->n = w->n;
    s->R->jobs = calloc(w->n, sizeof *s->R->jobs);
    if (!s->R->jobs) { st = bl_seterr(err, BL_ENOMEM, "out of memory"); goto done; }
    for (size_t i = 0; i < w->n; i++) {
        s->J[i].left = s->J[i].right = s->J[i].next = s->J[i].dev = -1;
    }
    s->nd = cfg->n_cpu + cfg->n_gpu;
    for (int d = 0; d < s->nd; d++) {
        sdev *dv = &s->D[d];
        dv->kind = d < cfg->n_cpu ? BL_SCHED_CPU : BL_SCHED_GPU;
        dv->index = d;
        dv->job = dv->reserved = dv->root = dv->fhead = dv->ftail = -1;
        dv->slow = 1;
        dv->last_cls = CLS_IMP;
        s->has_kind[dv->kind] = 1;
    }
    /* load steps and arrivals first: pushed in time order so ties keep file order */
    for (size_t i = 0; i < w->nload; i++) push_ev(s, w->load[i].t, EV_LOAD, (int)i, 0);
    for (size_t i = 0; i < w->n; i++) push_ev(s, w->jobs[i].arrival, EV_ARRIVAL, (int)i, 0);
    if (s->oom) { st = bl_seterr(err, BL_ENOMEM, "out of memory"); goto done; }

    uint64_t limit = cfg->max_events ? cfg->max_events : 64 * (uint64_t)w->n + 100000;
    uint64_t nev = 0;
    bl_sched_event e;
    while (bl_sched_evheap_pop(&s->h, &e)) {
        if (++nev > limit) {
            st = bl_seterr(err, BL_ERANGE, "%s: event limit %llu exceeded at t=%.3f s with %zu of %zu jobs done",
                           bl_sched_policy_name(s->pol), (unsigned long long)limit, e.t, s->n_done, w->n);
            goto done;
        }
        accumulate(s, e.t);
        s->now = e.t;
        switch (e.type) {
        case EV_ARRIVAL: on_arrival(s, e.a); break;
        case EV_STOP:
            if (s->D[e.a].job >= 0 && s->D[e.a].ver == e.ver) on_stop(s, e.a);
            break;
        case EV_FREE:
            if (s->D[e.a].in_overhead && s->D[e.a].ver == e.ver) { s->D[e.a].in_overhead = 0; dispatch(s, e.a); }
            break;
        case EV_AGE: on_age(s, e.a, e.ver); break;
        case EV_LOAD: on_load(s, e.a); break;
        default: break;
        }
        if (s->oom) { st = bl_seterr(err, BL_ENOMEM, "out of memory"); goto done; }
        if (s->n_done == w->n && s->h.n == 0) break;
    }
    s->R->sum.events = nev;
    if (s->n_done != w->n) {
        st = bl_seterr(err, BL_ERANGE, "%s: %zu of %zu jobs never finished (a device was held back for good, "
                       "e.g. the database load never fell below the observer's resume level)",
                       bl_sched_policy_name(s->pol), w->n - s->n_done, w->n);
        goto done;
    }
    for (int d = 0; d < s->nd; d++)   /* close holds still open at the end */
        if (s->D[d].blocked || s->D[d].iblocked) s->R->sum.observer_pause_s += s->now - s->D[d].hold_since;
    if ((st = summarize(s))) { st = bl_seterr(err, st, "out of memory"); goto done; }
    *out = s->R;
    s->R = NULL;
done:
    bl_sched_result_free(s->R);
    bl_sched_evheap_free(&s->h);
    free(s->J);
    bl_sched_history_free(own);
    free(s);
    return st;
}

void bl_sched_result_summary(const bl_sched_result *r, bl_sched_summary *out) {
    if (!out) return;
    if (!r) { memset(out, 0, sizeof *out); return; }
    *out = r->sum;
}

size_t bl_sched_result_njobs(const bl_sched_result *r) { return r ? r->n : 0; }

bl_status bl_sched_result_job(const bl_sched_result *r, size_t i, bl_sched_job_result *out) {
    if (!r || !out || i >= r->n) return BL_EINVAL;
    *out = r->jobs[i];
    return BL_OK;
}

size_t bl_sched_result_nsegments(const bl_sched_result *r) { return r ? r->nseg : 0; }

bl_status bl_sched_result_segment(const bl_sched_result *r, size_t i, bl_sched_segment *out) {
    if (!r || !out || i >= r->nseg) return BL_EINVAL;
    *out = r->seg[i];
    return BL_OK;
}

size_t bl_sched_result_ncurve(const bl_sched_result *r) { return r ? r->ncurve : 0; }

bl_status bl_sched_result_curve(const bl_sched_result *r, size_t i, double *time, int *jobs) {
    if (!r || i >= r->ncurve) return BL_EINVAL;
    if (time) *time = r->ct[i];
    if (jobs) *jobs = r->cn[i];
    return BL_OK;
}
