/* calib.c — calibration of prediction intervals on held-out contexts, and the intervals (calib.h); the record
 * a model carries is calib_rec.c. */
#include "model/calib.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/error.h"
#include "common/rng.h"
#include "model/model_internal.h"
#include "model/seen.h"

#define BL_LN2 0.69314718055994530942

/* ---- support and intervals ------------------------------------------------------------------------- */

static void pre_range(const bl_model *m, double *lo, double *hi) {
    if (m->seen.known) {
        *lo = m->seen.scale_out_min;
        *hi = m->seen.scale_out_max;
    } else {
        *lo = m->scaler.lo[2];
        *hi = m->scaler.hi[2];
    }
}

void bl_model_support(const bl_model *m, double *lo, double *hi) {
    pre_range(m, lo, hi);
    if (m->tuned.known) {
        if (!(m->tuned.scale_out_min >= *lo)) *lo = m->tuned.scale_out_min;
        if (!(m->tuned.scale_out_max <= *hi)) *hi = m->tuned.scale_out_max;
    }
}

double bl_model_floor(double x, double raw, double lo, double r_lo, double hi, double r_hi) {
    if (!isfinite(raw)) return raw; /* an overflow stays one: refused, not dressed up as a runtime */
    if (x > hi && r_hi > 0 && isfinite(r_hi)) {
        const double f = r_hi * hi / x;
        return raw > f ? raw : f;
    }
    if (x < lo && r_lo > 0 && isfinite(r_lo)) {
        const double f = r_lo * x / lo;
        return raw > f ? raw : f;
    }
    return raw;
}

double bl_model_runtime_floor(const bl_model *m) {
    double r = INFINITY;
    if (m->seen.known && m->seen.runtime_min_s > 0) r = m->seen.runtime_min_s;
    if (m->tuned.known && m->tuned.runtime_min_s > 0 && m->tuned.runtime_min_s < r) r = m->tuned.runtime_min_s;
    return isfinite(r) ? 0.01 * r : 1e-3;
}

double bl_model_positive(double t, double F) {
    if (!isfinite(t) || t >= F) return t;
    const double a = (t - F) / F;
    return F * exp(a > -700 ? a : -700);
}

double bl_model_finish(const bl_model *m, double x, double raw, double r_lo, double r_hi) {
    double lo, hi;
    bl_model_support(m, &lo, &hi);
    const double F = bl_model_runtime_floor(m);
    return bl_model_positive(bl_model_floor(x, raw, lo, r_lo >= F ? r_lo : NAN, hi, r_hi >= F ? r_hi : NAN), F);
}

/* ln-distance of x outside [lo, hi] (0 inside) */
static double outside_by(double x, double lo, double hi) {
    if (x < lo) return log(lo / x);
    if (x > hi) return log(x / hi);
    return 0.0;
}

static int distinct_runs(const bl_model_tuned *t) {
    if (!t->n_fit) return t->runs > 0 ? (int)(t->runs < 1000 ? t->runs : 1000) : 0;
    int d = 0;
    for (size_t i = 0; i < t->n_fit; i++) {
        int dup = 0;
        for (size_t j = 0; j < i && !dup; j++) dup = t->fit_x[j] == t->fit_x[i];
        d += !dup;
    }
    return d;
}

static double d_ref_of(const bl_model *m, int k) {
    const double d = k >= 0 && k <= BL_CALIB_KMAX ? m->calib.d_ref[k] : 0;
    return d > BL_CALIB_DREF_MIN ? d : BL_CALIB_DREF_MIN;
}

void bl_interval_basis_of(const bl_model *m, int mismatch, bl_interval_basis *b) {
    memset(b, 0, sizeof *b);
    b->factor = 1.0;
    if (!m->tuned.known) return;
    b->ernest_w = m->guard.ernest_w > 0 ? m->guard.ernest_w : 0;
    if (mismatch) { /* calibrated by the cell of other contexts; without it, cell 0 doubled */
        b->mismatch = 1;
        b->factor = (m->calib.known && m->calib.cell_n[BL_CALIB_CELL_OTHER] ? 1.0 : 2.0) * (1.0 + b->ernest_w);
        return;
    }
    int k = distinct_runs(&m->tuned);
    b->k = k > BL_CALIB_KMAX ? BL_CALIB_KMAX : k;
    const double D = m->tuned.disagreement > 0 ? m->tuned.disagreement : 0; /* +inf: a fit that failed its runs */
    b->held_out = m->tuned.held_out;
    b->factor = (b->held_out ? 1.0 : 1.0 + b->ernest_w) * (1.0 + D / d_ref_of(m, b->k));
}

/* The cell of a scale-out x for a request with k runs spanning [rlo, rhi]. */
static int cell_of(int k, double x, double rlo, double rhi) {
    if (k <= 0) return 0;
    if (k == 1) return 3;
    return x > rlo && x < rhi ? 2 * k : 2 * k + 1;
}

double bl_calib_cell_quantile(const bl_model_calib *c, int k, int inside, double coverage) {
    for (int kk = k; kk >= 0; kk--) {
        const int cell = kk == 0 ? 0 : kk == 1 ? 3 : 2 * kk + (inside ? 0 : 1);
        const double q = bl_calib_quantile(c, cell, coverage, NULL);
        if (!isnan(q)) return q;
    }
    return INFINITY;
}

bl_status bl_model_interval(const bl_model *m, const bl_interval_basis *b, double coverage, const double *x,
                            const double *point, size_t n, double *lo, double *hi, int *why, bl_error *err) {
    if (!m || !b || (n && (!x || !point || !lo || !hi)))
        return bl_seterr(err, BL_EINVAL, "bl_model_interval: NULL argument");
    if (!(coverage > 0 && coverage < 1))
        return bl_seterr(err, BL_EINVAL, "coverage %g: must lie strictly between 0 and 1 (e.g. 0.9)", coverage);
    if (!m->calib.known)
        return bl_seterr(err, BL_EUNSUPPORTED, "model '%s' carries no calibration (pre-trained before libbellamy 0.6, "
                         "or with calibration off): intervals are unavailable; pre-train it again to get them",
                         m->name ? m->name : "");
    double slo, shi, plo, phi;
    bl_model_support(m, &slo, &shi);
    pre_range(m, &plo, &phi);
    const double rlo = m->tuned.known ? m->tuned.scale_out_min : NAN, rhi = m->tuned.known ? m->tuned.scale_out_max : NAN;
    const double F = bl_model_runtime_floor(m);
    for (size_t i = 0; i < n; i++) {
        lo[i] = 0.0;
        hi[i] = INFINITY;
        int w = BL_INTERVAL_BOUNDED;
        const int cell = cell_of(b->k, x[i], rlo, rhi);
        const int other = b->mismatch && m->calib.cell_n[BL_CALIB_CELL_OTHER];
        const double q = other ? bl_calib_quantile(&m->calib, BL_CALIB_CELL_OTHER, coverage, NULL)
                               : bl_calib_cell_quantile(&m->calib, b->k, cell % 2 == 0 && b->k >= 2, coverage);
        double h = NAN;
        if (x[i] < slo / BL_CALIB_SUPPORT || x[i] > shi * BL_CALIB_SUPPORT) w = BL_INTERVAL_BEYOND; /* unknown there */
        else if (!(point[i] >= F) || !isfinite(point[i])) w = BL_INTERVAL_STAND_IN;
        else if (!isfinite(q)) w = BL_INTERVAL_TOO_FEW;
        else {
            const double d = (b->k >= 1 ? outside_by(x[i], rlo, rhi) : 0.0) +
                             (b->held_out ? 0.0 : outside_by(x[i], plo, phi));
            h = q * (1.0 + d / BL_LN2) * b->factor;
            /* wider than a factor 100 either way: no bound worth the name */
            if (!(h <= BL_CALIB_HMAX) || !(point[i] * exp(h) <= BL_RUNTIME_MAX_S)) w = BL_INTERVAL_TOO_WIDE;
        }
        if (why) why[i] = w;
        if (w != BL_INTERVAL_BOUNDED) continue;
        lo[i] = point[i] * exp(-h);
        hi[i] = point[i] * exp(h);
    }
    return BL_OK;
}

/* ---- fitting ------------------------------------------------------------------------------------------ */

/* A model holding members which[0..k) of m, in that order (numbers in both encodings: pairs in order). */
static bl_status sub_model(const bl_model *m, const int *which, int k, bl_model **out, bl_error *err) {
    bl_model view = *m;
    view.net = *bl_model_member_c(m, which[0]);
    view.n_members = 1;
    view.more = NULL;
    view.member_meta = NULL;
    view.member_epochs = NULL;
    view.enc.numbers = bl_model_member_numbers(m, which[0]);
    memset(&view.calib, 0, sizeof view.calib);
    bl_model *c = NULL;
    bl_status st = bl_model_clone(&view, &c, err);
    if (st) return st;
    c->enc.numbers = m->enc.numbers;
    for (int j = 1; j < k && !st; j++) {
        bl_model v = view;
        v.net = *bl_model_member_c(m, which[j]);
        v.enc.numbers = bl_model_member_numbers(m, which[j]);
        const bl_model *vp = &v;
        st = bl_model_add_members(c, &vp, 1, err);
    }
    if (st) {
        bl_model_free(c);
        return st;
    }
    *out = c;
    return BL_OK;
}

/* One raw score before D_ref is known. */
typedef struct { int32_t cell, k; double e, gw, D; } item;

typedef struct {
    item  *it;
    size_t n, cap;
    double D[BL_CALIB_KMAX + 1][BL_CALIB_DRAWS_MAX]; /* each fine-tuning's disagreement */
    int    nD[BL_CALIB_KMAX + 1];
    bl_status st;
    bl_error err;
} ctx_out;

typedef struct {
    const bl_model *m;
    const bl_dataset *ds;
    const bl_pretrain_opts *o;
    const size_t *ctxs;     /* [nc] dataset context of each calibration context */
    const int *members;     /* [nc × n_members] which members held it out (-1 ends) */
    bl_model *const *fold;  /* [nc] a fold model that never saw the context, or NULL: its members */
    const long *other;      /* [nc] another calibration context its model never saw either, or -1 */
    size_t nc;
    ctx_out *out;           /* [nc] */
    atomic_size_t next;
    atomic_int cancel;
} fit_job;

static int push(ctx_out *o, item v) {
    if (o->n == o->cap) {
        size_t cap = o->cap ? 2 * o->cap : 64;
        item *t = realloc(o->it, cap * sizeof *t);
        if (!t) return 0;
        o->it = t;
        o->cap = cap;
    }
    o->it[o->n++] = v;
    return 1;
}

static int cmp_dbl(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The floored prediction of model t at row r of ds (what the public path returns); NaN when none. */
static double predict_row(const bl_model *t, const bl_dataset *ds, size_t r, bl_error *err) {
    double ctx[BL_BNET_DIM_MAX], y = NAN, x = ds->scale_out[r], b[2], lo, hi;
    bl_model_support(t, &lo, &hi);
    const double xs[2] = {lo, hi};
    if (bl_model_context_row(t, ds, r, ctx, err) || bl_model_predict(t, ctx, &x, 1, &y, err))
        return NAN;
    /* calibration rows lie inside the pre-training's scale-outs: the ends matter only for the rule's sake
     * (a cluster total at the ends is the row's own here, which the floor never reaches) */
    if ((x < lo || x > hi) && bl_model_predict(t, ctx, xs, 2, b, err)) return NAN;
    const double p = bl_model_finish(t, x, y, x < lo || x > hi ? b[0] : NAN, x < lo || x > hi ? b[1] : NAN);
    return p >= bl_model_runtime_floor(t) ? p : NAN; /* a stand-in is never scored: its interval is unbounded anyway */
}

static void calibrate_context(fit_job *J, size_t ci) {
    ctx_out *O = &J->out[ci];
    const bl_model *m = J->m;
    const bl_dataset *ds = J->ds;
    const bl_context *cx = &ds->contexts[J->ctxs[ci]];
    int which[BL_MODEL_MEMBERS_MAX], k_mem = 0;
    for (int j = 0; j < m->n_members && J->members[ci * (size_t)m->n_members + (size_t)j] >= 0; j++)
        which[k_mem++] = J->members[ci * (size_t)m->n_members + (size_t)j];
    bl_model *own = NULL;
    if (!J->fold[ci] && (O->st = sub_model(m, which, k_mem, &own, &O->err))) return;
    const bl_model *sub = J->fold[ci] ? J->fold[ci] : own;
    /* the context's distinct scale-outs, each with its rows */
    const size_t nr = cx->n_rows;
    double *xs = malloc(nr * sizeof *xs);
    size_t *rows = malloc(BL_CALIB_KMAX * sizeof *rows);
    size_t nx = 0;
    if (!xs || !rows) {
        O->st = bl_seterr(&O->err, BL_ENOMEM, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < nr; i++) {
        double x = ds->scale_out[cx->rows[i]];
        int dup = 0;
        for (size_t j = 0; j < nx && !dup; j++) dup = xs[j] == x;
        if (!dup) xs[nx++] = x;
    }
    qsort(xs, nx, sizeof *xs, cmp_dbl);
    /* k = 0: the pre-trained members on every run */
    for (size_t i = 0; i < nr; i++) {
        const size_t r = cx->rows[i];
        const double p = predict_row(sub, ds, r, &O->err);
        if (!(p > 0) || !isfinite(p)) continue;
        if (!push(O, (item){0, 0, fabs(log(ds->runtime_s[r] / p)), 1.0, 0.0})) goto oom;
    }
    bl_rng rng;
    bl_rng_seed(&rng, J->o->seed * 0x9E3779B97F4A7C15ull + 0x51ED27u + (uint64_t)J->ctxs[ci]);
    bl_finetune_opts fo;
    if (J->o->calib_ft) fo = *J->o->calib_ft;
    else bl_finetune_opts_default(&fo);
    const int draws = J->o->calib_draws;
    double plo, phi;
    pre_range(sub, &plo, &phi);
    size_t *perm = malloc((nx ? nx : 1) * sizeof *perm);
    if (!perm) goto oom;
    for (int k = 1; k <= BL_CALIB_KMAX && (size_t)k < nx && !atomic_load(&J->cancel); k++) {
        for (int d = 0; d < draws; d++) {
            for (size_t i = 0; i < nx; i++) perm[i] = i;
            for (int i = 0; i < k; i++) { /* k distinct scale-outs, then one repetition of each */
                size_t j = (size_t)i + (size_t)bl_rng_int(&rng, nx - (size_t)i), t = perm[i];
                perm[i] = perm[j];
                perm[j] = t;
            }
            double rlo = INFINITY, rhi = -INFINITY;
            for (int i = 0; i < k; i++) {
                const double x = xs[perm[i]];
                size_t cand = 0;
                for (size_t q = 0; q < nr; q++) cand += ds->scale_out[cx->rows[q]] == x;
                size_t want = (size_t)bl_rng_int(&rng, cand), seen = 0;
                for (size_t q = 0; q < nr; q++)
                    if (ds->scale_out[cx->rows[q]] == x && seen++ == want) rows[i] = cx->rows[q];
                rlo = fmin(rlo, x);
                rhi = fmax(rhi, x);
            }
            bl_model *t = NULL;
            bl_error e2;
            if (bl_finetune(sub, ds, rows, (size_t)k, &fo, &t, &e2) != BL_OK) continue; /* a draw it cannot fit */
            const double D = isfinite(t->tuned.disagreement) ? t->tuned.disagreement : 0.0;
            const int held = t->tuned.held_out;
            const double w = t->guard.ernest_w > 0 ? t->guard.ernest_w : 0.0;
            O->D[k][O->nD[k]++] = D;
            for (size_t i = 0; i < nr; i++) {
                const size_t r = cx->rows[i];
                const double x = ds->scale_out[r];
                int train = 0;
                for (int q = 0; q < k && !train; q++) train = xs[perm[q]] == x;
                if (train) continue;
                const double p = predict_row(t, ds, r, &e2);
                if (!(p > 0) || !isfinite(p)) continue;
                const int cell = cell_of(k, x, rlo, rhi);
                const double g = 1.0 + (outside_by(x, rlo, rhi) + (held ? 0.0 : outside_by(x, plo, phi))) / BL_LN2;
                if (!push(O, (item){cell, k, fabs(log(ds->runtime_s[r] / p)), held ? g : g * (1.0 + w), D})) {
                    bl_model_free(t);
                    free(perm);
                    goto oom;
                }
            }
            /* the same fine-tuned model on another context it never saw: a mismatch's error */
            const long oc = J->other[ci];
            const bl_context *co = oc >= 0 ? &ds->contexts[J->ctxs[oc]] : NULL;
            for (size_t i = 0; co && i < co->n_rows; i++) {
                const size_t r = co->rows[i];
                const double x = ds->scale_out[r], p = predict_row(t, ds, r, &e2);
                if (!(p > 0) || !isfinite(p)) continue;
                const double g = 1.0 + outside_by(x, plo, phi) / BL_LN2;
                if (!push(O, (item){BL_CALIB_CELL_OTHER, 0, fabs(log(ds->runtime_s[r] / p)), g * (1.0 + w), 0.0})) {
                    bl_model_free(t);
                    free(perm);
                    goto oom;
                }
            }
            bl_model_free(t);
        }
    }
    free(perm);
    goto done;
oom:
    O->st = bl_seterr(&O->err, BL_ENOMEM, "out of memory");
done:
    free(xs);
    free(rows);
    bl_model_free(own);
}

static void *fit_worker(void *arg) {
    fit_job *J = arg;
    for (;;) {
        size_t ci = atomic_fetch_add(&J->next, 1);
        if (ci >= J->nc || atomic_load(&J->cancel)) break;
        if (!bl_ranks_mine(J->o, 0, ci)) continue; /* another rank's context (exchange_contexts) */
        calibrate_context(J, ci);
        if (J->out[ci].st) atomic_store(&J->cancel, 1);
    }
    return NULL;
}

/* A calibrated context's scores as the ranks exchange them: first its counts and disagreements, then
 * its scores, padded to the most any context has. */
typedef struct ctx_rec {
    int32_t  st, nD[BL_CALIB_KMAX + 1];
    uint64_t n;
    double   D[BL_CALIB_KMAX + 1][BL_CALIB_DRAWS_MAX];
    char     message[200];
} ctx_rec;

/* Over ranks, each context was calibrated by rank ci mod size alone: every rank gets every context's
 * scores, exactly as their rank computed them. */
static bl_status exchange_contexts(const bl_pretrain_opts *o, ctx_out *out, size_t nc, bl_error *err) {
    ctx_rec *r = calloc(nc ? nc : 1, sizeof *r);
    if (!r) return bl_seterr(err, BL_ENOMEM, "out of memory");
    for (size_t ci = 0; ci < nc; ci++) {
        if (!bl_ranks_mine(o, 0, ci)) continue;
        r[ci].st = (int32_t)out[ci].st;
        r[ci].n = out[ci].n;
        memcpy(r[ci].nD, out[ci].nD, sizeof r[ci].nD);
        memcpy(r[ci].D, out[ci].D, sizeof r[ci].D);
        if (out[ci].st) snprintf(r[ci].message, sizeof r[ci].message, "%.199s", out[ci].err.message);
    }
    bl_status st = bl_ranks_gather(o, r, 0, nc, sizeof *r, "calibration scores", err);
    size_t most = 0;
    for (size_t ci = 0; ci < nc && !st; ci++) {
        if (r[ci].n > most) most = (size_t)r[ci].n;
        if (bl_ranks_mine(o, 0, ci)) continue;
        ctx_out *O = &out[ci];
        O->st = (bl_status)r[ci].st;
        if (O->st) bl_seterr(&O->err, O->st, "%s", r[ci].message);
        memcpy(O->nD, r[ci].nD, sizeof O->nD);
        memcpy(O->D, r[ci].D, sizeof O->D);
        O->n = 0;
        if (r[ci].n && !(O->it = malloc((size_t)r[ci].n * sizeof *O->it))) st = bl_seterr(err, BL_ENOMEM, "out of memory");
        else O->n = O->cap = (size_t)r[ci].n;
    }
    item *all = NULL;
    if (!st && most && !(all = calloc(nc * most, sizeof *all))) st = bl_seterr(err, BL_ENOMEM, "out of memory");
    if (!st && most) {
        for (size_t ci = 0; ci < nc; ci++)
            if (bl_ranks_mine(o, 0, ci) && out[ci].n) memcpy(all + ci * most, out[ci].it, out[ci].n * sizeof *all);
        st = bl_ranks_gather(o, all, 0, nc, most * sizeof *all, "calibration scores", err);
        for (size_t ci = 0; ci < nc && !st; ci++)
            if (!bl_ranks_mine(o, 0, ci) && out[ci].n) memcpy(out[ci].it, all + ci * most, out[ci].n * sizeof *all);
    }
    free(all);
    free(r);
    return st;
}

/* Contexts calibrated on at least, where the data has them: the searches' held-out contexts, topped up
 * by cross-fitting when they are fewer (a 0.9 interval needs 9 per cell; cells with more runs lose the
 * contexts with too few scale-outs). */
#define BL_CALIB_CONTEXTS_MIN 12

/* A model that never saw the contexts marked in excl: each of the networks a member pair (or member 0)
 * of m is, trained once more with that member's winning configuration and epoch count on the other
 * contexts' rows (one trial, no validation), read as m reads numbers. */
static bl_status fold_model(const bl_model *m, const bl_dataset *ds, const bl_pretrain_opts *o, const uint8_t *excl,
                            uint64_t seed, bl_model **out, bl_error *err) {
    *out = NULL;
    size_t *rows = malloc((ds->n_rows ? ds->n_rows : 1) * sizeof *rows), n = 0;
    if (!rows) return bl_seterr(err, BL_ENOMEM, "out of memory");
    for (size_t r = 0; r < ds->n_rows; r++)
        if (!excl[ds->context[r]]) rows[n++] = r;
    bl_dataset *sub = NULL;
    bl_status st = bl_dataset_subset(ds, rows, n, &sub, err);
    free(rows);
    if (st) return st;
    const int both = m->enc.numbers == BL_ENC_NUMBERS_BOTH, K = both && m->n_members >= 2 ? 2 : 1;
    bl_model *fm = NULL;
    for (int j = 0; j < K && !st; j++) {
        bl_pretrain_opts o1 = *o;
        const double d = j ? m->member_meta[4 * j] : m->dropout, lr = j ? m->member_meta[4 * j + 1] : m->lr,
                     wd = j ? m->member_meta[4 * j + 2] : m->weight_decay;
        for (int i = 0; i < 3; i++) {
            o1.dropouts[i] = d;
            o1.lrs[i] = lr;
            o1.wds[i] = wd;
        }
        const int64_t E = m->member_epochs ? m->member_epochs[j] : m->epochs;
        o1.trials = 1;
        o1.epochs = o1.grace = E > 0 ? (long)E : 1;
        o1.members = 1;
        o1.calibrate = 0;
        o1.refit = 0;
        o1.no_validation = 1;
        o1.threads = 1;
        o1.device = BL_DEVICE_CPU;
        o1.precision = bl_model_precision(m); /* as m computes, whichever device trained m (not the CPU's default) */
        o1.progress = NULL;
        o1.seed = seed;
        bl_dataset *enc = NULL;
        if (both && (st = bl_dataset_with_numbers(sub, j ? BL_ENC_NUMBERS_LOG : BL_ENC_NUMBERS_BINARY, &enc, err))) break;
        bl_model *mj = NULL;
        st = bl_pretrain_top(enc ? enc : sub, m->schema_text, &o1, 1, &mj, err);
        bl_dataset_free(enc);
        if (st) break;
        if (!fm) {
            fm = mj;
            if (both) fm->enc.numbers = BL_ENC_NUMBERS_BOTH;
            continue;
        }
        const bl_model *mc = mj;
        st = bl_model_add_members(fm, &mc, 1, err);
        bl_model_free(mj);
    }
    bl_dataset_free(sub);
    if (st) {
        bl_model_free(fm);
        return st;
    }
    bl_model_set_precision(fm, bl_model_precision(m)); /* the fold model computes as m does */
    *out = fm;
    return BL_OK;
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

bl_status bl_calib_fit(bl_model *m, const bl_dataset *ds, const bl_pretrain_opts *o, bl_error *err) {
    if (!m || !ds || !o) return bl_seterr(err, BL_EINVAL, "bl_calib_fit: NULL argument");
    if (o->calib_draws < 1 || o->calib_draws > BL_CALIB_DRAWS_MAX)
        return bl_seterr(err, BL_EINVAL, "calibration: %d draws (1..%d)", o->calib_draws, BL_CALIB_DRAWS_MAX);
    bl_calib_free(&m->calib);
    const double t0 = now_s();
    const int K = m->n_members, both = m->enc.numbers == BL_ENC_NUMBERS_BOTH;
    const size_t nc_all = ds->n_contexts;
    uint8_t *held = calloc((nc_all ? nc_all : 1) * (size_t)K, 1);
    size_t *tr = malloc((ds->n_rows ? ds->n_rows : 1) * sizeof *tr), *va = malloc((ds->n_rows ? ds->n_rows : 1) * sizeof *va);
    size_t *ctxs = malloc((nc_all ? nc_all : 1) * sizeof *ctxs);
    int *members = malloc((nc_all ? nc_all : 1) * (size_t)K * sizeof *members);
    ctx_out *out = NULL;
    bl_status st = held && tr && va && ctxs && members ? BL_OK : bl_seterr(err, BL_ENOMEM, "out of memory");
    /* each member's validation contexts: its search's split, redrawn from its seed (never with refit,
     * which trains the winner on them too) */
    for (int j = 0; j < K && !st && !o->refit && o->val_split == BL_VAL_CONTEXTS; j++) {
        bl_rng rng;
        bl_rng_seed(&rng, o->seed + (uint64_t)(both ? j / 2 : j));
        size_t ntr = 0, nva = 0;
        if ((st = bl_pretrain_split(ds, o, &rng, tr, &ntr, va, &nva, err))) break;
        for (size_t i = 0; i < nva; i++) held[(size_t)ds->context[va[i]] * (size_t)K + (size_t)j] = 1;
    }
    size_t nc = 0;
    for (size_t c = 0; c < nc_all && !st; c++) {
        int q = 0;
        for (int j = 0; j < K; j++)
            if (held[c * (size_t)K + (size_t)j]) members[nc * (size_t)K + (size_t)q++] = j;
        if (!q) continue;
        for (int j = q; j < K; j++) members[nc * (size_t)K + (size_t)j] = -1;
        ctxs[nc++] = c;
    }
    /* too few held out: cross-fit more, folds of the other contexts the size of a search's validation share */
    bl_model **fold = calloc((nc_all ? nc_all : 1), sizeof *fold), **fold_own = NULL;
    size_t n_folds = 0;
    if (!fold) st = bl_seterr(err, BL_ENOMEM, "out of memory");
    const int can_fold = nc_all >= 2; /* also where the searches held no context out (groups, refit) */
    if (!st && can_fold && nc < BL_CALIB_CONTEXTS_MIN && nc < nc_all) {
        size_t *rest = malloc(nc_all * sizeof *rest), nr = 0;
        uint8_t *excl = calloc(nc_all, 1);
        fold_own = calloc(nc_all, sizeof *fold_own);
        if (!rest || !excl || !fold_own) st = bl_seterr(err, BL_ENOMEM, "out of memory");
        for (size_t c = 0; c < nc_all && !st; c++) {
            int q = 0;
            for (int j = 0; j < K; j++) q |= held[c * (size_t)K + (size_t)j];
            if (!q) rest[nr++] = c;
        }
        bl_rng rng;
        bl_rng_seed(&rng, o->seed ^ 0xC411B7A7E5ull);
        for (size_t i = nr; i > 1; i--) {
            size_t j = (size_t)bl_rng_int(&rng, i), t = rest[i - 1];
            rest[i - 1] = rest[j];
            rest[j] = t;
        }
        const size_t want = BL_CALIB_CONTEXTS_MIN - nc < nr ? BL_CALIB_CONTEXTS_MIN - nc : nr;
        size_t fs = (size_t)llround(o->val_fraction * (double)nc_all);
        if (fs < 1) fs = 1;
        if (fs > nc_all - 1) fs = nc_all - 1;
        for (size_t a = 0; a < want && !st; a += fs, n_folds++) {
            const size_t b = a + fs < want ? a + fs : want;
            memset(excl, 0, nc_all);
            for (size_t i = a; i < b; i++) excl[rest[i]] = 1;
            st = fold_model(m, ds, o, excl, o->seed + 7919u * (n_folds + 1), &fold_own[n_folds], err);
            for (size_t i = a; i < b && !st; i++) {
                for (int j = 0; j < K; j++) members[nc * (size_t)K + (size_t)j] = -1;
                fold[nc] = fold_own[n_folds];
                ctxs[nc++] = rest[i];
            }
        }
        if (st) bl_prefixerr(err, "cross-fitting a fold for calibration");
        free(rest);
        free(excl);
    }
    /* for each, the next calibration context its model never saw either (the same fold model, or held out
     * by every member that held it out) */
    long *other = malloc((nc ? nc : 1) * sizeof *other);
    if (!st && !other) st = bl_seterr(err, BL_ENOMEM, "out of memory");
    for (size_t ci = 0; ci < nc && !st; ci++) {
        other[ci] = -1;
        for (size_t s1 = 1; s1 < nc && other[ci] < 0; s1++) {
            const size_t cj = (ci + s1) % nc;
            int ok = fold[ci] ? fold[cj] == fold[ci] : !fold[cj];
            for (int j = 0; j < K && ok && !fold[ci]; j++) {
                const int mj = members[ci * (size_t)K + (size_t)j];
                if (mj < 0) break;
                ok = held[ctxs[cj] * (size_t)K + (size_t)mj];
            }
            if (ok) other[ci] = (long)cj;
        }
    }
    if (!st && nc && !(out = calloc(nc, sizeof *out))) st = bl_seterr(err, BL_ENOMEM, "out of memory");
    if (!st && nc) {
        fit_job J = {.m = m, .ds = ds, .o = o, .ctxs = ctxs, .members = members, .fold = fold, .other = other,
                     .nc = nc, .out = out};
        atomic_init(&J.next, 0);
        atomic_init(&J.cancel, 0);
        int threads = o->threads < 1 ? 1 : o->threads > 64 ? 64 : o->threads;
        if ((size_t)threads > nc) threads = (int)nc;
        pthread_t th[64];
        int started = 0;
        for (int i = 1; i < threads; i++) {
            if (pthread_create(&th[i], NULL, fit_worker, &J) != 0) break;
            started++;
        }
        fit_worker(&J);
        for (int i = 1; i <= started; i++) pthread_join(th[i], NULL);
        if (bl_ranks_multi(o)) st = exchange_contexts(o, out, nc, err);
        for (size_t ci = 0; ci < nc && !st; ci++)
            if (out[ci].st) {
                st = out[ci].st;
                if (err) *err = out[ci].err;
            }
    }
    bl_model_calib C;
    memset(&C, 0, sizeof C);
    if (!st) {
        /* D_ref(k): the median disagreement of the fine-tunings with k runs */
        size_t DS_MAX = 1;
        for (size_t ci = 0; ci < nc; ci++)
            for (int k = 1; k <= BL_CALIB_KMAX; k++) DS_MAX += (size_t)out[ci].nD[k];
        double *Ds = malloc(DS_MAX * sizeof *Ds);
        if (!Ds) {
            st = bl_seterr(err, BL_ENOMEM, "out of memory");
            goto out_free;
        }
        C.d_ref[0] = 1.0;
        for (int k = 1; k <= BL_CALIB_KMAX; k++) {
            size_t nd = 0;
            for (size_t ci = 0; ci < nc; ci++)
                for (int d = 0; d < out[ci].nD[k] && nd < DS_MAX; d++) Ds[nd++] = out[ci].D[k][d];
            qsort(Ds, nd, sizeof *Ds, cmp_dbl);
            double med = nd ? (nd % 2 ? Ds[nd / 2] : 0.5 * (Ds[nd / 2 - 1] + Ds[nd / 2])) : 0.0;
            C.d_ref[k] = med > BL_CALIB_DREF_MIN ? med : BL_CALIB_DREF_MIN;
            for (size_t ci = 0; ci < nc; ci++) C.finetunings += out[ci].nD[k];
        }
        free(Ds);
        size_t n = 0;
        for (size_t ci = 0; ci < nc; ci++) n += out[ci].n;
        C.cell = malloc((n ? n : 1) * sizeof *C.cell);
        C.group = malloc((n ? n : 1) * sizeof *C.group);
        C.score = malloc((n ? n : 1) * sizeof *C.score);
        if (!C.cell || !C.group || !C.score) st = bl_seterr(err, BL_ENOMEM, "out of memory");
        int32_t g = 0; /* contexts numbered as they have scores (one that scored none is no context of it) */
        for (size_t ci = 0; ci < nc && !st; ci++) {
            for (size_t i = 0; i < out[ci].n; i++) {
                const item *v = &out[ci].it[i];
                const double a = v->k && v->cell != BL_CALIB_CELL_OTHER ? v->gw * (1.0 + v->D / C.d_ref[v->k]) : v->gw;
                C.cell[C.n] = v->cell;
                C.group[C.n] = g;
                C.score[C.n] = v->e / a;
                C.n++;
            }
            g += out[ci].n > 0;
        }
        C.contexts = g;
        bl_finetune_opts fdef;
        bl_finetune_opts_default(&fdef);
        C.protocol = bl_finetune_opts_fingerprint(o->calib_ft ? o->calib_ft : &fdef);
        C.seconds = now_s() - t0;
        C.known = 1;
        if (!st) st = bl_calib_derive(&C, err);
        if (st) bl_calib_free(&C);
        else m->calib = C;
    }
out_free:
    if (out)
        for (size_t ci = 0; ci < nc; ci++) free(out[ci].it);
    free(out);
    if (fold_own)
        for (size_t f = 0; f < n_folds; f++) bl_model_free(fold_own[f]);
    free(fold_own);
    free(fold);
    free(other);
    free(held);
    free(tr);
    free(va);
    free(ctxs);
    free(members);
    return st;
}
