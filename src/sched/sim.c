/* sim.c — the deterministic discrete-event simulator of DBMLSched and its baselines, a user of the
 * scheduler core (core.c).
 *
 * The simulator owns the world: the clock and a (time, seq) event heap; devices, each running at most
 * one ML job; a job advances at its per-iteration time (slowed on a GPU by `interference` while any
 * CPU runs an ML job) and stops only at iteration boundaries; a stop costs `overhead` on the device and
 * a later start of a started job costs it again. Database load is a piecewise-constant CPU-use profile;
 * query latency is inflated by CPU ML use. Every decision -- what runs where, for how long, when to
 * pause -- comes from the core: the simulator reports arrivals, pause points, stops, finished jobs,
 * database load and due timers, and carries out the actions the core hands its hook at once, so the
 * event order is the order of the decisions.
 *
 * Events carry version stamps and stale ones are skipped, so nothing is ever searched or removed from
 * the heap. Memory follows the jobs in the system: arrivals come from the sorted workload as the clock
 * reaches them, per-job state lives in a ring that drops finished jobs, and what is kept for every job
 * (service times for exact quantiles; per-job results, segments, the curve) is what record_trace asks
 * for; a plot's curve is thinned as it is recorded (thin.c).
 * Not modelled: memory limits, data movement between devices, multi-device jobs. */
#include "sched/sched_internal.h"
#include "common/error.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { EV_ARRIVAL = 0, EV_STOP, EV_FREE, EV_WAKE, EV_LOAD };
#define MAXDEV 64
#define EPS 1e-9

/* A job's state while it is in the system (dropped once it and every earlier job have finished). */
typedef struct sjob {
    double k;                   /* iterations done (whole at every stop) */
    double first_start;
    int    preemptions;
    unsigned char started, done;
} sjob;

typedef struct sdev {
    int      kind, job, in_overhead, est, stop_finish;
    uint32_t ver;
    double   t0, k0, spi_eff, k_stop, slow;   /* progress: k(t) = k0 + (t - t0) / spi_eff, up to k_stop */
    double   prog_start, kstart, busy;
} sdev;

struct bl_sched_result {
    size_t               n;
    bl_sched_job_result *jobs;     /* NULL with BL_SCHED_TRACE_NO_JOBS */
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
    bl_sched_core           *core;
    bl_sched_ring            J;         /* sjob of the jobs in the system, by id */
    int                      trace;     /* BL_SCHED_TRACE_* flags (record_trace 1 spelled out) */
    double                  *svc;       /* service time per job: the exact median and p95 need them all */
    size_t                   pre;       /* preemptions of finished jobs */
    double                   last_done; /* latest completion */
    bl_sched_thin            thin;      /* the curve, with BL_SCHED_TRACE_PLOT */
    sdev                     D[MAXDEV];
    int                      nd;
    bl_sched_evheap          h;
    double                   now, last_t, overhead, db;
    size_t                   n_in_system, n_done;
    double                   db_time, infl_int, infl_max;
    bl_sched_result         *R;
    bl_status                oom;
} sim;

static const bl_sched_wjob *W(const sim *s, int j) { return &s->w->jobs[j]; }
static sjob *SJ(const sim *s, int j) { return (sjob *)bl_sched_ring_at(&s->J, (size_t)j); }

static void push_ev(sim *s, double t, int type, int a, uint32_t ver) {
    if (bl_sched_evheap_push(&s->h, t, type, a, ver)) s->oom = BL_ENOMEM;
}

static void curve_point(sim *s) {
    bl_sched_result *R = s->R;
    if (s->trace & BL_SCHED_TRACE_PLOT) {
        if (bl_sched_thin_add(&s->thin, s->now, (int)s->n_in_system)) s->oom = BL_ENOMEM;
        return;
    }
    if (!(s->trace & BL_SCHED_TRACE_CURVE)) return;
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
    if (!(s->trace & BL_SCHED_TRACE_SEGMENTS) || !(b > a)) return;
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

/* ---------------- the progress model ---------------- */

/* Iterations done by the job running on d at time t. */
static double cur_k(const sdev *dv, double t) {
    if (t <= dv->t0) return dv->k0;
    double k = dv->k0 + (t - dv->t0) / dv->spi_eff;
    return k > dv->k_stop ? dv->k_stop : k;
}

static void plan(sim *s, int d) {
    sdev *dv = &s->D[d];
    dv->ver++;
    double t = dv->t0 + (dv->k_stop - dv->k0) * dv->spi_eff;
    if (t < s->now) t = s->now;
    push_ev(s, t, EV_STOP, d, dv->ver);
}

/* Run on for `slice` seconds from now (resume overhead included), then stop at the next boundary. */
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

/* GPU slow-down from a running CPU job (the world's side of interference; the core decides whether
 * to hold CPUs because of it). */
static void world_interference(sim *s) {
    double f = s->w->interference;
    int cpu_busy = 0;
    for (int d = 0; d < s->nd; d++)
        if (s->D[d].kind == BL_SCHED_CPU && s->D[d].job >= 0) cpu_busy = 1;
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
    }
}

static void start_run(sim *s, int d, int j, double slice, int est) {
    sdev *dv = &s->D[d];
    sjob *x = SJ(s, j);
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
    set_slice(s, d, slice);
    if (!x->started) { x->started = 1; x->first_start = s->now; }
    plan(s, d);
}

/* ---------------- the core's hooks ---------------- */

/* Carries out an action the moment the core decides it. */
static void act(void *ctx, const bl_sched_action *a) {
    sim *s = ctx;
    if (a->type == BL_SCHED_ACT_TIMER) push_ev(s, a->at, EV_WAKE, (int)a->job, 0);
    else if (a->type == BL_SCHED_ACT_START) start_run(s, a->device, (int)a->job, a->seconds, a->estimation);
    else if (a->type == BL_SCHED_ACT_PAUSE) stop_at(s, a->device, a->at);
}

static double progress(void *ctx, int d, double now) {
    const sim *s = ctx;
    return cur_k(&s->D[d], now);
}

/* The core checks for interference after every start and stop -- exactly when a CPU job may have
 * come or gone -- so this is where the GPUs' speeds are brought up to date. */
static double interference(void *ctx, double now) {
    sim *s = ctx;
    (void)now;
    world_interference(s);
    return s->w->interference;
}

/* ---------------- event handlers ---------------- */

static void job_done(sim *s, int j);

static bl_status on_stop(sim *s, int d, bl_error *err) {
    sdev *dv = &s->D[d];
    int j = dv->job;
    sjob *x = SJ(s, j);
    double slice;
    if (!dv->stop_finish && bl_sched_core_pause_point(s->core, s->now, (size_t)j, &slice)) {
        if (s->now > dv->t0) { dv->k0 = cur_k(dv, s->now); dv->t0 = s->now; }
        set_slice(s, d, slice);
        plan(s, d);
        return BL_OK;
    }
    int was_est = dv->est, finished = dv->stop_finish;
    double prog = s->now - dv->prog_start;
    if (prog < 0) prog = 0;
    dv->busy += prog;
    if (was_est) s->R->sum.estimation_s += prog;
    add_segment(s, j, d, dv->prog_start, s->now, was_est);
    x->k = dv->k_stop;
    dv->job = -1;
    dv->ver++;
    bl_status st;
    if (finished) {
        s->n_in_system--;
        s->n_done++;
        curve_point(s);
        st = bl_sched_core_finished(s->core, s->now, (size_t)j, x->k, prog, err);
        if (st == BL_OK) job_done(s, j);
    } else {
        if (!was_est) x->preemptions++;
        double oh = s->pol == BL_SCHED_ORACLE ? 0 : s->overhead;
        if (oh > 0) {
            dv->in_overhead = 1;
            s->R->sum.overhead_s += oh;
            push_ev(s, s->now + oh, EV_FREE, d, dv->ver);
        }
        st = bl_sched_core_paused(s->core, s->now, (size_t)j, x->k, prog, err);
    }
    return st;
}

/* A job has finished: what the summary and the per-job results need of it, taken now (the core
 * forgets a finished job at a later submit). Its sjob may go once every earlier job's has. */
static void job_done(sim *s, int j) {
    sjob *x = SJ(s, j);
    const double arrival = W(s, j)->arrival;
    s->svc[j] = s->now - arrival;
    s->pre += (size_t)x->preemptions;
    if (s->now > s->last_done) s->last_done = s->now;
    x->done = 1;
    if (!s->R->jobs) return;
    bl_sched_job_result *o = &s->R->jobs[j];
    bl_sched_core_job_info ci;
    memset(&ci, 0, sizeof ci);
    bl_sched_core_job(s->core, (size_t)j, &ci);
    o->arrival = arrival;
    o->first_start = x->first_start;
    o->completion = s->now;
    o->service = s->svc[j];
    o->last_device = ci.device;
    o->preemptions = x->preemptions;
    o->aged = ci.aged;
    o->estimated = ci.estimated;
    o->predicted = ci.predicted;
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

static bl_status on_arrival(sim *s, int j, bl_error *err) {
    const bl_sched_wjob *wj = W(s, j);
    while (s->J.lo < s->J.hi && SJ(s, (int)s->J.lo)->done) s->J.lo++;   /* finished ones at the low end */
    size_t rid;
    if (bl_sched_ring_push(&s->J, &rid)) return bl_seterr(err, BL_ENOMEM, "out of memory");
    if (rid != (size_t)j) return bl_seterr(err, BL_EINTERNAL, "arrival %d out of order (expected %zu)", j, rid);
    s->n_in_system++;
    curve_point(s);
    bl_sched_submit sub;
    memset(&sub, 0, sizeof sub);
    sub.job.kind = bl_sched_kind_names[wj->kind];
    sub.job.implicit = wj->implicit;
    sub.job.iterations = wj->implicit ? 0 : wj->iters;
    sub.job.params = bl_sched_wjob_params(s->w, wj);
    sub.job.n_params = (size_t)wj->n_params;
    sub.use_pct[0] = wj->use[0];
    sub.use_pct[1] = wj->use[1];
    sub.true_iterations = wj->iters;
    sub.true_s_per_iter[0] = wj->spi[0];
    sub.true_s_per_iter[1] = wj->spi[1];
    size_t id = 0;
    bl_status st = bl_sched_core_submit(s->core, s->now, &sub, &id, err);
    if (!st && id != (size_t)j) st = bl_seterr(err, BL_EINTERNAL, "core numbered job %d as %zu", j, id);
    return st;
}

/* ---------------- results ---------------- */

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The summary from what was gathered as jobs finished. The mean sums the service times in job order;
 * then they are sorted in place for the exact median and p95. */
static bl_status summarize(sim *s) {
    bl_sched_result *R = s->R;
    bl_sched_summary *S = &R->sum;
    size_t n = s->w->n;
    double *sv = s->svc;
    double tot = 0, first = INFINITY;
    for (size_t i = 0; i < n; i++) {
        tot += sv[i];
        if (W(s, (int)i)->arrival < first) first = W(s, (int)i)->arrival;
    }
    qsort(sv, n, sizeof *sv, cmp_double);
    S->n_jobs = n;
    S->mean_service = tot / (double)n;
    S->median_service = (n % 2) ? sv[n / 2] : 0.5 * (sv[n / 2 - 1] + sv[n / 2]);
    size_t r95 = (size_t)ceil(0.95 * (double)n);
    S->p95_service = sv[r95 > 0 ? r95 - 1 : 0];
    S->makespan = s->last_done - first;
    S->preemptions = s->pre;
    S->query_inflation_mean = s->db_time > 0 ? s->infl_int / s->db_time : 1.0;
    S->query_inflation_max = s->db_time > 0 ? s->infl_max : 1.0;
    S->n_devices = s->nd;
    for (int d = 0; d < s->nd && d < 8; d++) {
        S->util[d] = S->makespan > 0 ? s->D[d].busy / S->makespan : 0;
        S->device_kind[d] = s->D[d].kind;
    }
    if (s->trace & BL_SCHED_TRACE_PLOT) {
        if (bl_sched_thin_result(&s->thin, &R->ct, &R->cn, &R->ncurve)) return BL_ENOMEM;
        R->capcurve = R->ncurve;
    }
    return BL_OK;
}

/* Round robin stops a running job every quota_s, at an iteration boundary, so a job of K iterations takes
 * at least K / ceil(quota_s / s_per_iter) turns on its fastest device, an event each, and an arrival event:
 * a lower bound known before the run. When it alone passes the event limit the run cannot finish, and
 * saying so now beats saying it after the limit's events (the tester's 1e9 iterations of 1000 s spun
 * 38 s before failing). The job that needs the most turns is named, with what to change. */
static bl_status rr_events_fit(const bl_sched_workload *w, const bl_sched_config *cfg, uint64_t limit, bl_error *err) {
    double need = 0, most = -1;
    size_t worst = 0;
    for (size_t i = 0; i < w->n; i++) {
        const bl_sched_wjob *j = &w->jobs[i];
        double spi = INFINITY;
        if (cfg->n_cpu > 0) spi = j->spi[BL_SCHED_CPU];
        if (cfg->n_gpu > 0 && j->spi[BL_SCHED_GPU] < spi) spi = j->spi[BL_SCHED_GPU];
        const double turns = ceil(j->iters / ceil(cfg->quota_s / spi));
        need += 1 + turns;
        if (turns > most) { most = turns; worst = i; }
    }
    if (!(need > (double)limit)) return BL_OK;
    const bl_sched_wjob *j = &w->jobs[worst];
    return bl_seterr(err, BL_ERANGE, "rr: the workload needs at least %.4g events, more than its limit of %llu (%s): "
                     "round robin stops a job every %g s (quota_s) and at least once an iteration, so the %s job at "
                     "%g s with %.17g iterations takes %.4g turns, an event each; give it fewer iterations, or "
                     "simulate it with another policy (fifo-gpu, dbmlsched, oracle)", need, (unsigned long long)limit,
                     cfg->max_events ? "the config's max_events" : "64 a job + 100000 + 8 an iteration, counting at "
                     "most 1e8 iterations a job and 2e9 in all", cfg->quota_s, bl_sched_kind_names[j->kind], j->arrival,
                     j->iters, most);
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
    bl_status st = bl_sched_config_check(cfg, err);
    if (st) return st;

    sim *s = calloc(1, sizeof *s);
    if (!s) return bl_seterr(err, BL_ENOMEM, "out of memory");
    s->w = w;
    s->cfg = *cfg;
    s->pol = cfg->policy;
    s->overhead = cfg->overhead_s >= 0 ? cfg->overhead_s : w->overhead_s;
    bl_sched_evheap_init(&s->h);
    /* the core is told the pause cost the world charges (none for the oracle) and the interference
     * factor, which a real system would measure */
    bl_sched_config cc = *cfg;
    cc.overhead_s = s->pol == BL_SCHED_ORACLE ? 0 : s->overhead;
    bl_sched_host host = { s, act, progress, interference };
    if ((st = bl_sched_core_new(&cc, pred, &host, &s->core, err))) goto done;
    s->trace = cfg->record_trace;
    if (s->trace & 1) s->trace |= BL_SCHED_TRACE_SEGMENTS | BL_SCHED_TRACE_CURVE;
    bl_sched_ring_init(&s->J, sizeof(sjob));
    bl_sched_thin_init(&s->thin);
    s->R = calloc(1, sizeof *s->R);
    s->svc = malloc(w->n * sizeof *s->svc);
    if (!s->R || !s->svc) { st = bl_seterr(err, BL_ENOMEM, "out of memory"); goto done; }
    if (!(s->trace & BL_SCHED_TRACE_NO_JOBS)) {
        s->R->n = w->n;
        s->R->jobs = calloc(w->n, sizeof *s->R->jobs);
        if (!s->R->jobs) { st = bl_seterr(err, BL_ENOMEM, "out of memory"); goto done; }
    }
    s->nd = cfg->n_cpu + cfg->n_gpu;
    for (int d = 0; d < s->nd; d++) {
        sdev *dv = &s->D[d];
        dv->kind = d < cfg->n_cpu ? BL_SCHED_CPU : BL_SCHED_GPU;
        dv->job = -1;
        dv->slow = 1;
    }
    /* Load steps, then the arrivals, come first at equal times, in file order: the load steps are
     * pushed with the sequence numbers 0 .. nload-1; arrival i is not pushed (a million jobs would
     * make the heap a million events deep) but taken from the sorted workload as if it had been
     * pushed next, with sequence number nload + i; every later event numbers from nload + n on. */
    for (size_t i = 0; i < w->nload; i++) push_ev(s, w->load[i].t, EV_LOAD, (int)i, 0);
    if (s->oom) { st = bl_seterr(err, BL_ENOMEM, "out of memory"); goto done; }
    s->h.next_seq = (uint64_t)w->nload + (uint64_t)w->n;
    size_t next_arrival = 0;

    /* a guard against a policy that never finishes, not a budget: slices end at iteration boundaries,
     * so a job needs at most a few events per iteration (round robin on long jobs needs many) */
    double its = 0;
    for (size_t i = 0; i < w->n; i++) its += fmin(w->jobs[i].iters, 1e8);
    uint64_t limit = cfg->max_events ? cfg->max_events
                                     : 64 * (uint64_t)w->n + 100000 + (uint64_t)fmin(8 * its, 2e9);
    if (s->pol == BL_SCHED_RR && (st = rr_events_fit(w, cfg, limit, err))) goto done;
    uint64_t nev = 0;
    bl_sched_event e;
    for (;;) {
        int arrival = 0;
        if (next_arrival < w->n) {
            double ta = w->jobs[next_arrival].arrival;
            uint64_t sa = (uint64_t)w->nload + next_arrival;
            arrival = s->h.n == 0 || ta < s->h.v[0].t || (ta == s->h.v[0].t && sa < s->h.v[0].seq);
        }
        if (arrival) {
            e.t = w->jobs[next_arrival].arrival;
            e.seq = (uint64_t)w->nload + next_arrival;
            e.type = EV_ARRIVAL;
            e.a = (int)next_arrival++;
            e.ver = 0;
        } else if (!bl_sched_evheap_pop(&s->h, &e)) {
            break;
        }
        if (++nev > limit) {
            st = bl_seterr(err, BL_ERANGE, "%s: stopped at the event limit of %llu events (%s) at t=%.3f s with %zu of "
                           "%zu jobs done: a policy that takes turns needs an event at every pause, and at least one "
                           "pause an iteration when an iteration outlasts the quota; give the jobs fewer iterations, "
                           "or simulate fewer jobs at once", bl_sched_policy_name(s->pol), (unsigned long long)limit,
                           cfg->max_events ? "the config's max_events" : "64 a job + 100000 + 8 an iteration, counting "
                           "at most 1e8 iterations a job and 2e9 in all", e.t, s->n_done, w->n);
            goto done;
        }
        accumulate(s, e.t);
        s->now = e.t;
        switch (e.type) {
        case EV_ARRIVAL: st = on_arrival(s, e.a, err); break;
        case EV_STOP:
            if (s->D[e.a].job >= 0 && s->D[e.a].ver == e.ver) st = on_stop(s, e.a, err);
            break;
        case EV_FREE:
            if (s->D[e.a].in_overhead && s->D[e.a].ver == e.ver) {
                s->D[e.a].in_overhead = 0;
                st = bl_sched_core_device_ready(s->core, s->now, e.a, err);
            }
            break;
        case EV_WAKE: st = bl_sched_core_timer(s->core, s->now, err); break;
        case EV_LOAD:
            s->db = w->load[e.a].pct;
            st = bl_sched_core_cpu_utilisation(s->core, s->now, s->db, err);
            break;
        default: break;
        }
        if (st) goto done;
        if (s->oom) { st = bl_seterr(err, BL_ENOMEM, "out of memory"); goto done; }
        if (s->n_done == w->n && s->h.n == 0) break;   /* every job has arrived and finished */
    }
    s->R->sum.events = nev;
    if (s->n_done != w->n) {
        st = bl_seterr(err, BL_ERANGE, "%s: %zu of %zu jobs never finished (a device was held back for good, "
                       "e.g. the database load never fell below the observer's resume level)",
                       bl_sched_policy_name(s->pol), w->n - s->n_done, w->n);
        goto done;
    }
    bl_sched_core_stats cs;   /* holds still open at the end count up to now */
    bl_sched_core_stats_get(s->core, s->now, &cs);
    s->R->sum.observer_pause_s = cs.held_s;
    if ((st = summarize(s))) { st = bl_seterr(err, st, "out of memory"); goto done; }
    *out = s->R;
    s->R = NULL;
done:
    bl_sched_result_free(s->R);
    bl_sched_evheap_free(&s->h);
    bl_sched_core_free(s->core);
    bl_sched_ring_free(&s->J);
    bl_sched_thin_free(&s->thin);
    free(s->svc);
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
