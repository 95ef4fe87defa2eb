/* pretrain.c — pre-training with a hyper-parameter search and synchronous successive halving.
 *
 * The grid dropout × learning rate × weight decay (27 points) is shuffled with the seed and the
 * first `trials` points are trained, each from its own initialisation and generator. Contexts are
 * shuffled with the seed and a share of them is held out for validation (whole contexts, so the
 * validation loss measures transfer to unseen contexts). Every trial trains to the first rung
 * (`grace` epochs); the better 1/reduction of them (by best validation loss so far) continues to the
 * next rung (grace·reduction), and so on until `epochs`. What is validated and kept is the running
 * average of a trial's parameters over ~avg_span epochs (average_params): each trial keeps that average
 * at its best validation epoch; the winner's best state becomes the model.
 *
 * Threads: trials of a rung are handed out to worker threads; a trial's result depends only on its
 * own generator, so the outcome is the same for any thread count.
 * Devices: with o->device CUDA (or CPU_BATCHED) the rungs drive a trial group (tgroup.h) that trains
 * every alive trial at once, with the same generators, masks and halving decisions.
 * Not here: the ensemble of searches and its calibration (ensemble.c), fine-tuning, files.
 */
#include "model/model_internal.h"
#include "model/seen.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "nn/tgroup.h"

/* The grid dropout × learning rate × weight decay, 3 values each: the most trials a search can sample. */
enum { GRID = 27 };
_Static_assert(GRID == BL_TRAIN_TRIALS_MAX, "trials sample the grid");

/* The generator seed of trial i of a search seeded `seed`: its initial weights, shuffles and masks,
 * whichever device trains it (and a refit of it). */
static uint64_t trial_seed(uint64_t seed, int i) { return seed * 0x9E3779B97F4A7C15ull + (uint64_t)i + 1; }

/* Successive halving: the first rung, the rung after `rung`, and how many of `alive` trials go on. */
static long first_rung(const bl_pretrain_opts *o) { return o->grace < o->epochs ? o->grace : o->epochs; }
static long next_rung(const bl_pretrain_opts *o, long rung) {
    long next = rung * o->reduction;
    return next < o->epochs ? next : o->epochs;
}
static int halving_keep(const bl_pretrain_opts *o, int alive) { return (alive + o->reduction - 1) / o->reduction; }

typedef struct trial {
    int      id;
    double   dropout, lr, wd;
    bl_bnet  net;
    bl_rng   rng;
    bl_adam  opt;
    bl_bwork *w, *wv;
    size_t  *order;
    double  *best;            /* parameters (their running average) at the best validation epoch */
    double  *ema, *avg;       /* the parameters' running average (average_params; NULL: none) */
    double   ema_w;           /* its weight so far, 1 − βᵗ */
    double   best_val, last_train;
    long     epochs_done, best_epoch;
    long     reported;         /* epochs already counted in the search's progress total */
    int      alive;
    bl_status st;
    bl_error  err;
} trial;

typedef struct search {
    const bl_pretrain_opts *o;
    const bl_dataset *ds;
    bl_model *m;              /* the model the winner becomes (the search's until search_close) */
    bl_vbuf  tr, va;
    int      has_val;
    size_t  *tr_rows, *va_rows, *val_idx;
    size_t   n_va;
    trial   *t;
    int      n;
    long     done_all, planned_all;
    int      alive;
    int      cancelled;
} search;

/* One rung of one or several searches at once: the alive trials of every search that this rank trains,
 * handed out to worker threads; progress reports and cancels are serialised by mu. */
typedef struct rung_job {
    search **S;
    int     (*todo)[2];       /* (search, trial) */
    int      n_todo, next;
    long     target;          /* epoch the rung trains to */
    int      cancelled;
    pthread_mutex_t mu;
} rung_job;

/* Loss of the whole view in evaluation mode; rows are 0..n-1. */
static bl_status full_loss(trial *t, const bl_vbuf *vb, bl_bwork *w, const size_t *idx, double *loss,
                           bl_error *err) {
    bl_bpass ps = {.training = 0, .dropout = 0.0, .want_grad = 0, .recon = 1, .rng = NULL};
    bl_bloss L;
    bl_status st = bl_bnet_pass(&t->net, &vb->v, idx, vb->v.n_rows, &ps, w, NULL, &L, err);
    *loss = L.total;
    return st;
}

/* The parameters' running average after an epoch: ema ← β·ema + (1 − β)·θ, avg = ema / (1 − βᵗ) (a
 * zero start, corrected as Adam corrects its moments), β = 1 − 1/avg_span. The validation loss, the best
 * state, and so the halving and the winner, read avg: an epoch's parameters on a noisy trajectory are one
 * draw, which the last bits of a sum decide (bench/README.md, "A search that does not hang on rounding");
 * their average over ~avg_span epochs is not. */
static void average_params(const bl_pretrain_opts *o, trial *t) {
    const double beta = 1.0 - 1.0 / (double)o->avg_span;
    t->ema_w = beta * t->ema_w + (1.0 - beta);
    const double inv = 1.0 / t->ema_w;
    const double *p = t->net.P.param;
    for (size_t i = 0; i < t->net.P.n; i++) {
        t->ema[i] = beta * t->ema[i] + (1.0 - beta) * p[i];
        t->avg[i] = t->ema[i] * inv;
    }
}

/* One epoch of t on view tr (shuffled minibatches); then, with validate, the validation loss and the
 * best-state bookkeeping. */
static bl_status run_epoch(search *s, trial *t, const bl_vbuf *tr, const size_t *val_idx, int validate) {
    const bl_pretrain_opts *o = s->o;
    const size_t n = tr->v.n_rows, B = (size_t)o->batch;
    /* Fisher–Yates shuffle with the trial's generator */
    for (size_t i = n - 1; i > 0; i--) {
        size_t j = (size_t)bl_rng_int(&t->rng, i + 1);
        size_t tmp = t->order[i];
        t->order[i] = t->order[j];
        t->order[j] = tmp;
    }
    bl_bpass ps = {.training = 1, .dropout = t->dropout, .want_grad = 1, .recon = 1, .rng = &t->rng,
                   .per_row_dropout = o->per_row_dropout};
    double sum = 0.0;
    bl_status st;
    for (size_t i0 = 0; i0 < n; i0 += B) {
        size_t k = n - i0 < B ? n - i0 : B;
        bl_params_zero_grad(&t->net.P);
        bl_bloss L;
        if ((st = bl_bnet_pass(&t->net, &tr->v, t->order + i0, k, &ps, t->w, NULL, &L, &t->err))) return st;
        sum += L.total * (double)k;
        if ((st = bl_adam_step(&t->opt, &t->net.P, &t->err))) return st;
    }
    t->last_train = sum / (double)n;
    t->epochs_done++;
    if (t->ema) average_params(o, t);
    if (!validate) return BL_OK;
    double val = t->last_train;
    if (s->has_val) { /* the average's loss: the network's parameters are lent it for one pass */
        double *own = t->net.P.param;
        if (t->ema) t->net.P.param = t->avg;
        st = full_loss(t, &s->va, t->wv, val_idx, &val, &t->err);
        t->net.P.param = own;
        if (st) return st;
    }
    if (!isfinite(val)) val = INFINITY;
    if (val < t->best_val) {
        t->best_val = val;
        t->best_epoch = t->epochs_done;
        memcpy(t->best, t->ema ? t->avg : t->net.P.param, t->net.P.n * sizeof(double));
    }
    return BL_OK;
}

static bl_status train_epoch(search *s, trial *t, const size_t *val_idx) {
    return run_epoch(s, t, &s->tr, val_idx, 1);
}

static void *worker(void *arg) {
    rung_job *J = arg;
    for (;;) {
        pthread_mutex_lock(&J->mu);
        int k = J->cancelled ? J->n_todo : J->next++;
        pthread_mutex_unlock(&J->mu);
        if (k >= J->n_todo) break;
        search *s = J->S[J->todo[k][0]];
        trial *t = &s->t[J->todo[k][1]];
        while (t->epochs_done < J->target) {
            if ((t->st = train_epoch(s, t, s->val_idx))) break;
            if (s->o->progress && (t->epochs_done % 25 == 0 || t->epochs_done == J->target)) {
                pthread_mutex_lock(&J->mu);
                s->done_all += t->epochs_done - t->reported; /* rungs need not end on a multiple of 25 */
                t->reported = t->epochs_done;
                bl_progress p = {.trial = t->id, .trials_alive = s->alive, .trials_total = s->n,
                                 .epoch = t->epochs_done, .epochs_total = s->o->epochs,
                                 .epochs_done_all = s->done_all, .epochs_planned_all = s->planned_all,
                                 .train_loss = t->last_train, .val_loss = t->best_val,
                                 .best_val_loss = t->best_val, .has_val = s->has_val};
                for (int i = 0; i < s->n; i++)
                    if (s->t[i].best_val < p.best_val_loss) p.best_val_loss = s->t[i].best_val;
                if (s->o->progress(s->o->progress_ctx, &p)) J->cancelled = 1;
                int stop = J->cancelled;
                pthread_mutex_unlock(&J->mu);
                if (stop) break;
            }
        }
        if (t->st) {
            pthread_mutex_lock(&J->mu);
            J->cancelled = 1;
            pthread_mutex_unlock(&J->mu);
        }
    }
    return NULL;
}

/* Ranks (bl_train_ranks): trial i of a search is trained by rank (item_base + i) mod size alone; after
 * every rung the ranks exchange each trial's bookkeeping whole, and after the last its best parameters,
 * so every rank holds what one process would have computed, bit for bit. */
int bl_ranks_multi(const bl_pretrain_opts *o) { return o->ranks && o->ranks->size > 1; }
int bl_ranks_mine(const bl_pretrain_opts *o, size_t first, size_t i) {
    return !bl_ranks_multi(o) || (first + i) % (size_t)o->ranks->size == (size_t)o->ranks->rank;
}
bl_status bl_ranks_gather(const bl_pretrain_opts *o, void *recs, size_t first, size_t n, size_t rec_size,
                          const char *what, bl_error *err) {
    char msg[256] = "";
    if (o->ranks->gather(o->ranks->ctx, recs, first, n, rec_size, msg, sizeof msg))
        return bl_seterr(err, BL_EIO, "exchanging %s between ranks: %s", what, msg[0] ? msg : "failed");
    return BL_OK;
}
static int ranked(const bl_pretrain_opts *o) { return bl_ranks_multi(o); }
static int is_mine(const bl_pretrain_opts *o, int i) { return bl_ranks_mine(o, (size_t)o->item_base, (size_t)i); }

/* A trial's bookkeeping as the ranks exchange it after a rung. */
typedef struct trial_rec {
    double  best_val, last_train;
    int64_t epochs_done, best_epoch;
    int32_t status, cancelled;
    char    message[200];
} trial_rec;

static int cmp_trial_ptr(const void *a, const void *b) {
    const trial *x = *(trial *const *)a, *y = *(trial *const *)b;
    if (x->best_val < y->best_val) return -1;
    if (x->best_val > y->best_val) return 1;
    return (x->id > y->id) - (x->id < y->id);
}

/* bl_pretrain_planned_epochs (model_internal.h). */
long bl_pretrain_planned_epochs(const bl_pretrain_opts *o) {
    long total = 0, prev = 0;
    int alive = o->trials;
    long rung = first_rung(o);
    for (;;) {
        total += (rung - prev) * alive;
        if (rung >= o->epochs) break;
        prev = rung;
        alive = halving_keep(o, alive);
        rung = next_rung(o, rung);
    }
    return total;
}

/* The end of a rung: the alive trials ranked by best validation loss (ties by id), the better
 * halving_keep of them go on; the others are marked dead (in mask too when given). */
static void halve(search *s, uint8_t *mask) {
    trial *rank[GRID];
    int na = 0;
    for (int i = 0; i < s->n; i++)
        if (s->t[i].alive) rank[na++] = &s->t[i];
    qsort(rank, (size_t)na, sizeof rank[0], cmp_trial_ptr);
    int keep = halving_keep(s->o, na);
    for (int i = keep; i < na; i++) {
        rank[i]->alive = 0;
        if (mask) mask[rank[i]->id] = 0;
    }
    s->alive = keep;
}

/* After a rung on ranks: every trial's bookkeeping from the rank that trained it (its status and
 * message too, so that every rank fails alike; a cancel anywhere cancels everywhere). */
static bl_status exchange_rung(search *s, bl_error *err) {
    const size_t n = (size_t)s->n;
    trial_rec *r = calloc(n, sizeof *r);
    if (!r) return bl_seterr(err, BL_ENOMEM, "out of memory");
    for (int i = 0; i < s->n; i++) {
        if (!is_mine(s->o, i)) continue;
        const trial *t = &s->t[i];
        r[i] = (trial_rec){.best_val = t->best_val, .last_train = t->last_train, .epochs_done = t->epochs_done,
                           .best_epoch = t->best_epoch, .status = (int32_t)t->st, .cancelled = s->cancelled};
        if (t->st) snprintf(r[i].message, sizeof r[i].message, "%.199s", t->err.message);
    }
    bl_status st = bl_ranks_gather(s->o, r, (size_t)s->o->item_base, n, sizeof *r, "trial results", err);
    for (int i = 0; i < s->n && !st; i++) {
        if (r[i].cancelled) s->cancelled = 1;
        if (is_mine(s->o, i)) continue;
        trial *t = &s->t[i];
        t->best_val = r[i].best_val;
        t->last_train = r[i].last_train;
        t->epochs_done = (long)r[i].epochs_done;
        t->best_epoch = (long)r[i].best_epoch;
        t->st = (bl_status)r[i].status;
        if (t->st) bl_seterr(&t->err, t->st, "%s", r[i].message);
    }
    free(r);
    return st;
}

/* After the last rung on ranks: every trial's best parameters from the rank that trained it. */
static bl_status exchange_best(search *s, bl_error *err) {
    const size_t n = (size_t)s->n, P = s->t[0].net.P.n;
    double *all = malloc(n * P * sizeof *all);
    if (!all) return bl_seterr(err, BL_ENOMEM, "out of memory");
    for (int i = 0; i < s->n; i++)
        if (is_mine(s->o, i)) memcpy(all + (size_t)i * P, s->t[i].best, P * sizeof *all);
    bl_status st = bl_ranks_gather(s->o, all, (size_t)s->o->item_base, n, P * sizeof *all, "trial results", err);
    for (int i = 0; i < s->n && !st; i++)
        if (!is_mine(s->o, i)) memcpy(s->t[i].best, all + (size_t)i * P, P * sizeof *all);
    free(all);
    return st;
}

/* The successive-halving rungs on a trial group (every alive trial of the search at once). Fills the
 * trials' bookkeeping and best parameters exactly as the threaded path does. */
static bl_status search_on_group(search *s, const bl_bnet_dims *d, bl_error *err) {
    const bl_pretrain_opts *o = s->o;
    bl_tgroup_trial cfg[GRID];
    for (int i = 0; i < s->n; i++) {
        cfg[i].lr = s->t[i].lr;
        cfg[i].wd = s->t[i].wd;
        cfg[i].dropout = s->t[i].dropout;
        cfg[i].seed = trial_seed(o->seed, i);
    }
    bl_tgroup_opts go;
    bl_tgroup_opts_default(&go);
    go.batch = o->batch;
    go.per_row_dropout = o->per_row_dropout;
    go.device = o->device == BL_DEVICE_CUDA ? BL_NN_CUDA : BL_NN_CPU_BATCHED;
    go.threads = o->threads;
    go.graphs = o->device == BL_DEVICE_CUDA;
    go.avg_span = o->avg_span;
    bl_tgroup *g = NULL;
    bl_status st = bl_tgroup_new(d, &s->tr.v, s->has_val ? &s->va.v : NULL, s->n, cfg, &go, &g, err);
    if (st) return st;
    uint8_t alive[GRID];
    for (int i = 0; i < s->n; i++) alive[i] = 1;
    long rung = first_rung(o), done = 0, reported = 0;
    for (;;) {
        for (; done < rung; done++) {
            if ((st = bl_tgroup_epoch(g, alive, err))) goto out;
            for (int i = 0; i < s->n; i++) {
                if (!alive[i]) continue;
                bl_tgroup_stat ts;
                bl_tgroup_stat_get(g, i, &ts);
                trial *t = &s->t[i];
                t->epochs_done = ts.epochs_done;
                t->last_train = ts.train_loss;
                t->best_val = ts.best_val;
                t->best_epoch = ts.best_epoch;
            }
            if (o->progress && ((done + 1) % 25 == 0 || done + 1 == rung)) {
                s->done_all += (long)s->alive * (done + 1 - reported);
                reported = done + 1;
                for (int i = 0; i < s->n; i++) {
                    if (!alive[i]) continue;
                    bl_progress p = {.trial = i, .trials_alive = s->alive, .trials_total = s->n,
                                     .epoch = done + 1, .epochs_total = o->epochs,
                                     .epochs_done_all = s->done_all, .epochs_planned_all = s->planned_all,
                                     .train_loss = s->t[i].last_train, .val_loss = s->t[i].best_val,
                                     .best_val_loss = s->t[i].best_val, .has_val = s->has_val};
                    for (int j = 0; j < s->n; j++)
                        if (s->t[j].best_val < p.best_val_loss) p.best_val_loss = s->t[j].best_val;
                    if (o->progress(o->progress_ctx, &p)) {
                        st = bl_seterr(err, BL_EINTERNAL, "pre-training cancelled");
                        goto out;
                    }
                }
            }
        }
        if (rung >= o->epochs) break;
        halve(s, alive);
        rung = next_rung(o, rung);
    }
    for (int i = 0; i < s->n && !st; i++) {
        trial *t = &s->t[i];
        if (!(st = bl_tgroup_get_best(g, i, &t->net, err)))
            memcpy(t->best, t->net.P.param, t->net.P.n * sizeof(double));
    }
out:
    bl_tgroup_free(g);
    return st;
}

static void shuffle_sizes(bl_rng *rng, size_t *a, size_t n) {
    for (size_t i = n; i > 1; i--) {
        size_t j = (size_t)bl_rng_int(rng, i);
        size_t tmp = a[i - 1];
        a[i - 1] = a[j];
        a[j] = tmp;
    }
}

typedef struct row_key {
    uint32_t context;
    double   scale_out;
    size_t   row;
} row_key;

static int cmp_row_key(const void *a, const void *b) {
    const row_key *x = a, *y = b;
    if (x->context != y->context) return x->context < y->context ? -1 : 1;
    if (x->scale_out != y->scale_out) return x->scale_out < y->scale_out ? -1 : 1;
    return x->row < y->row ? -1 : x->row > y->row;
}

/* bl_pretrain_split (model_internal.h): the search's split into training and validation rows.
 * BL_VAL_CONTEXTS: a shuffled val_fraction of the contexts (at least one, never all) is held out whole.
 * BL_VAL_GROUPS: the (context, scale-out) groups, in a shuffled order, give their rows to validation
 * by systematic allocation — the running total of val_fraction × group size, started at a random
 * offset in [0, 1), decides how many rows each takes, so the total follows the fraction to a row —
 * except that a group never gives its last row (a one-row group gives none; what it could not give
 * moves on to the next groups, and with val_fraction × size > size − 1 the total falls short). So
 * every context and scale-out stays in training. */
bl_status bl_pretrain_split(const bl_dataset *ds, const bl_pretrain_opts *o, bl_rng *rng, size_t *tr_rows,
                            size_t *n_tr, size_t *va_rows, size_t *n_va, bl_error *err) {
    const size_t n = ds->n_rows;
    const double vf = o->no_validation ? 0.0 : o->val_fraction;
    uint8_t *is_val = calloc(n ? n : 1, 1);
    if (!is_val) return bl_seterr(err, BL_ENOMEM, "out of memory");
    if (o->val_split == BL_VAL_CONTEXTS) {
        size_t nc = ds->n_contexts, n_val_ctx = 0;
        size_t *perm = malloc((nc ? nc : 1) * sizeof *perm);
        if (!perm) {
            free(is_val);
            return bl_seterr(err, BL_ENOMEM, "out of memory");
        }
        if (nc >= 2 && vf > 0) {
            n_val_ctx = (size_t)llround(vf * (double)nc);
            if (n_val_ctx < 1) n_val_ctx = 1;
            if (n_val_ctx > nc - 1) n_val_ctx = nc - 1;
        }
        for (size_t i = 0; i < nc; i++) perm[i] = i;
        shuffle_sizes(rng, perm, nc);
        uint8_t *ctx_val = calloc(nc ? nc : 1, 1);
        if (!ctx_val) {
            free(perm);
            free(is_val);
            return bl_seterr(err, BL_ENOMEM, "out of memory");
        }
        for (size_t i = 0; i < n_val_ctx; i++) ctx_val[perm[i]] = 1;
        for (size_t r = 0; r < n; r++) is_val[r] = ctx_val[ds->context[r]];
        free(ctx_val);
        free(perm);
    } else if (vf > 0 && n >= 2) {
        row_key *k = malloc(n * sizeof *k);
        size_t *start = malloc((n + 1) * sizeof *start), *order = malloc(n * sizeof *order);
        if (!k || !start || !order) {
            free(k);
            free(start);
            free(order);
            free(is_val);
            return bl_seterr(err, BL_ENOMEM, "out of memory");
        }
        for (size_t r = 0; r < n; r++) k[r] = (row_key){ds->context[r], ds->scale_out[r], r};
        qsort(k, n, sizeof *k, cmp_row_key);
        size_t ng = 0;
        for (size_t r = 0; r < n; r++)
            if (r == 0 || k[r].context != k[r - 1].context || k[r].scale_out != k[r - 1].scale_out)
                start[ng++] = r;
        start[ng] = n;
        for (size_t g = 0; g < ng; g++) order[g] = g;
        shuffle_sizes(rng, order, ng);
        double share = bl_rng_uniform(rng); /* systematic allocation of the fractional parts */
        size_t taken = 0;
        for (size_t i = 0; i < ng; i++) {
            size_t g = order[i], size = start[g + 1] - start[g];
            share += vf * (double)size;
            size_t want = (size_t)floor(share) > taken ? (size_t)floor(share) - taken : 0;
            if (want > size - 1) want = size - 1;
            taken += want;
            /* a random `want` rows of the group: a partial Fisher–Yates over its row indices */
            for (size_t j = 0; j < want; j++) {
                size_t pick = j + (size_t)bl_rng_int(rng, size - j);
                row_key tmp = k[start[g] + j];
                k[start[g] + j] = k[start[g] + pick];
                k[start[g] + pick] = tmp;
                is_val[k[start[g] + j].row] = 1;
            }
        }
        free(k);
        free(start);
        free(order);
    }
    *n_tr = *n_va = 0;
    for (size_t r = 0; r < n; r++) {
        if (is_val[r]) va_rows[(*n_va)++] = r;
        else tr_rows[(*n_tr)++] = r;
    }
    free(is_val);
    if (*n_tr == 0) return bl_seterr(err, BL_EINVAL, "%s: the validation split leaves no training rows", ds->name);
    return BL_OK;
}

static void search_free(search *s) {
    if (s->t)
        for (int i = 0; i < s->n; i++) {
            bl_bnet_free(&s->t[i].net);
            bl_bwork_free(s->t[i].w);
            bl_bwork_free(s->t[i].wv);
            free(s->t[i].order);
            free(s->t[i].best);
            free(s->t[i].ema);
            free(s->t[i].avg);
        }
    free(s->t);
    bl_vbuf_free(&s->tr);
    bl_vbuf_free(&s->va);
    free(s->tr_rows);
    free(s->va_rows);
    free(s->val_idx);
    bl_model_free(s->m);
    memset(s, 0, sizeof *s);
}

/* A search of o on ds made ready to run: its model and scalers, its validation split, its sampled
 * configurations and every trial's initial state. */
static bl_status search_open(search *s, const bl_dataset *ds, const char *schema_text, const bl_pretrain_opts *o,
                             bl_error *err) {
    memset(s, 0, sizeof *s);
    s->o = o;
    s->ds = ds;
    bl_status st;
    bl_rng rng;
    bl_rng_seed(&rng, o->seed);
    if ((st = bl_model_from_dataset(ds, schema_text, NULL, &s->m, err))) return st;
    s->m->net.d.f32 = bl_pretrain_precision(o) == BL_PRECISION_F32; /* the trials, the refit and the model so */
    if ((st = bl_model_fit_scalers(s->m, ds, o->target_scaling, err))) return st;

    /* the validation split */
    s->tr_rows = malloc(ds->n_rows * sizeof *s->tr_rows);
    s->va_rows = malloc(ds->n_rows * sizeof *s->va_rows);
    if (!s->tr_rows || !s->va_rows) return bl_seterr(err, BL_ENOMEM, "out of memory");
    size_t n_tr = 0, n_va = 0;
    if ((st = bl_pretrain_split(ds, o, &rng, s->tr_rows, &n_tr, s->va_rows, &n_va, err))) return st;
    if ((st = bl_vbuf_build(s->m, ds, s->tr_rows, n_tr, &s->tr, err))) return st;
    s->n_va = n_va;
    s->has_val = n_va > 0;
    if (s->has_val) {
        if ((st = bl_vbuf_build(s->m, ds, s->va_rows, n_va, &s->va, err))) return st;
        if (!(s->val_idx = malloc(n_va * sizeof *s->val_idx))) return bl_seterr(err, BL_ENOMEM, "out of memory");
        for (size_t i = 0; i < n_va; i++) s->val_idx[i] = i;
    }

    /* sample the configurations */
    int grid[GRID];
    for (int i = 0; i < GRID; i++) grid[i] = i;
    for (int i = GRID - 1; i > 0; i--) {
        int j = (int)bl_rng_int(&rng, (uint64_t)i + 1);
        int tmp = grid[i];
        grid[i] = grid[j];
        grid[j] = tmp;
    }
    s->n = o->trials;
    if (!(s->t = calloc((size_t)s->n, sizeof *s->t))) return bl_seterr(err, BL_ENOMEM, "out of memory");
    const size_t B = (size_t)o->batch < n_tr ? (size_t)o->batch : n_tr;
    for (int i = 0; i < s->n; i++) {
        trial *t = &s->t[i];
        t->id = i;
        t->dropout = o->dropouts[grid[i] / 9];
        t->lr = o->lrs[(grid[i] / 3) % 3];
        t->wd = o->wds[grid[i] % 3];
        t->best_val = INFINITY;
        t->alive = 1;
        bl_rng_seed(&t->rng, trial_seed(o->seed, i));
        if ((st = bl_bnet_init(&t->net, &s->m->net.d, &t->rng, err))) return st;
        if ((st = bl_adam_init(&t->opt, t->lr, t->wd, err))) return st;
        if ((st = bl_bwork_new(&t->net, &s->tr.v, B, &t->w, err))) return st;
        if (s->has_val && (st = bl_bwork_new(&t->net, &s->va.v, n_va, &t->wv, err))) return st;
        t->order = malloc(n_tr * sizeof *t->order);
        t->best = malloc(t->net.P.n * sizeof *t->best);
        if (!t->order || !t->best) return bl_seterr(err, BL_ENOMEM, "out of memory");
        if (o->avg_span > 1 && (!(t->ema = calloc(t->net.P.n, sizeof *t->ema)) ||
                                !(t->avg = malloc(t->net.P.n * sizeof *t->avg))))
            return bl_seterr(err, BL_ENOMEM, "out of memory");
        for (size_t k = 0; k < n_tr; k++) t->order[k] = k;
        memcpy(t->best, t->net.P.param, t->net.P.n * sizeof *t->best);
    }
    s->planned_all = bl_pretrain_planned_epochs(o);
    s->alive = s->n;
    return BL_OK;
}

/* Successive halving of ns searches with the same schedule (trials, epochs, grace, reduction), rung by
 * rung together: on the CPU every alive trial of every search is one task for the threads (and, over
 * ranks, the rank that owns it), so later rungs, with few trials per search, still find work for every
 * thread and rank. A trial's arithmetic is its own: the result is that of the searches one by one. */
static bl_status searches_run(search **S, int ns, bl_error *err) {
    const bl_pretrain_opts *o = S[0]->o;
    bl_status st = BL_OK;
    if (o->device != BL_DEVICE_CPU) {
        for (int j = 0; j < ns && !st; j++)
            if ((st = search_on_group(S[j], &S[j]->m->net.d, err)) && ns > 1) bl_prefixerr(err, "search %d", j + 1);
        return st;
    }
    rung_job J;
    memset(&J, 0, sizeof J);
    J.S = S;
    int total = 0;
    for (int j = 0; j < ns; j++) total += S[j]->n;
    if (!(J.todo = malloc((size_t)(total ? total : 1) * sizeof *J.todo))) return bl_seterr(err, BL_ENOMEM, "out of memory");
    if (pthread_mutex_init(&J.mu, NULL) != 0) {
        free(J.todo);
        return bl_seterr(err, BL_EINTERNAL, "cannot create a mutex");
    }
    for (long rung = first_rung(o);; rung = next_rung(o, rung)) {
        J.n_todo = 0;
        for (int j = 0; j < ns; j++)
            for (int i = 0; i < S[j]->n; i++)
                if (S[j]->t[i].alive && is_mine(S[j]->o, i)) {
                    J.todo[J.n_todo][0] = j;
                    J.todo[J.n_todo++][1] = i;
                }
        J.next = 0;
        J.target = rung;
        int nth = o->threads < J.n_todo ? o->threads : J.n_todo;
        pthread_t th[BL_TRAIN_THREADS_MAX];
        int started = 0;
        for (int i = 1; i < nth; i++) {
            if (pthread_create(&th[i], NULL, worker, &J) != 0) break;
            started = i;
        }
        worker(&J);
        for (int i = 1; i <= started; i++) pthread_join(th[i], NULL);
        for (int j = 0; j < ns && !st; j++) {
            S[j]->cancelled = J.cancelled;
            if (ranked(o)) st = exchange_rung(S[j], err);
        }
        for (int j = 0; j < ns && !st; j++) {
            J.cancelled |= S[j]->cancelled;
            for (int i = 0; i < S[j]->n && !st; i++)
                if (S[j]->t[i].st) {
                    st = bl_seterr(err, S[j]->t[i].st, "trial %d: %s", i, S[j]->t[i].err.message);
                    if (ns > 1) bl_prefixerr(err, "search %d", j + 1);
                }
        }
        if (!st && J.cancelled) st = bl_seterr(err, BL_EINTERNAL, "pre-training cancelled");
        if (st || rung >= o->epochs) break;
        for (int j = 0; j < ns; j++) halve(S[j], NULL);
    }
    pthread_mutex_destroy(&J.mu);
    free(J.todo);
    for (int j = 0; j < ns && !st; j++)
        if (ranked(o)) st = exchange_best(S[j], err);
    return st;
}

/* The search's winner into its model (after a refit when o->refit), then the k best models into outs
 * (outs[0] the winner: the search gives its model away). */
static bl_status search_close(search *s, int k, bl_model **outs, bl_error *err) {
    const bl_pretrain_opts *o = s->o;
    const bl_dataset *ds = s->ds;
    bl_model *m = s->m;
    bl_status st = BL_OK;
    trial *best = NULL;
    for (int i = 0; i < s->n; i++)
        if (!best || s->t[i].best_val < best->best_val) best = &s->t[i];
    memcpy(m->net.P.param, best->best, m->net.P.n * sizeof(double));
    long refit_epochs = 0;
    if (o->refit && s->has_val) {
        /* The winner's configuration again, from the same initial weights and generator, on every
         * row (training and validation contexts) for as many epochs as its best validation state. */
        trial r;
        memset(&r, 0, sizeof r);
        bl_vbuf all;
        r.dropout = best->dropout;
        r.best_val = INFINITY;
        bl_rng_seed(&r.rng, trial_seed(o->seed, best->id));
        st = bl_bnet_init(&r.net, &m->net.d, &r.rng, err);
        if (!st) st = bl_adam_init(&r.opt, best->lr, best->wd, err);
        if (!st) st = bl_vbuf_build(m, ds, NULL, ds->n_rows, &all, err);
        else memset(&all, 0, sizeof all);
        const size_t Bmax = (size_t)o->batch < ds->n_rows ? (size_t)o->batch : ds->n_rows;
        if (!st) st = bl_bwork_new(&r.net, &all.v, Bmax, &r.w, err);
        if (!st && !(r.order = malloc(ds->n_rows * sizeof *r.order))) st = bl_seterr(err, BL_ENOMEM, "out of memory");
        if (!st && o->avg_span > 1 && (!(r.ema = calloc(r.net.P.n, sizeof *r.ema)) ||
                                       !(r.avg = malloc(r.net.P.n * sizeof *r.avg))))
            st = bl_seterr(err, BL_ENOMEM, "out of memory");
        if (!st) {
            for (size_t k = 0; k < ds->n_rows; k++) r.order[k] = k;
            refit_epochs = best->best_epoch > 0 ? best->best_epoch : best->epochs_done;
            for (long e = 0; e < refit_epochs && !st; e++) {
                st = run_epoch(s, &r, &all, NULL, 0);
                if (st) bl_seterr(err, st, "refit: %s", r.err.message);
            }
        }
        if (!st) memcpy(m->net.P.param, r.ema ? r.avg : r.net.P.param, m->net.P.n * sizeof(double));
        free(r.ema);
        free(r.avg);
        bl_bnet_free(&r.net);
        bl_bwork_free(r.w);
        free(r.order);
        bl_vbuf_free(&all);
        if (st) return st;
    }
    bl_model_round_params(m); /* float32: the parameters its file will hold */
    m->dropout = best->dropout;
    m->lr = best->lr;
    m->weight_decay = best->wd;
    m->best_val_loss = best->best_val;
    m->best_train_loss = best->last_train;
    m->val_rows = s->has_val ? (int64_t)s->n_va : 0;
    m->epochs = refit_epochs ? refit_epochs : best->epochs_done;
    m->pretrained = 1;
    m->data_hash = ds->data_hash;
    m->rows = (int64_t)ds->n_rows;
    m->contexts = (int64_t)ds->n_contexts;
    bl_model_stamp_now(m);
    if ((st = bl_model_seen_record(m, ds, err))) return st;
    if (k > 1) {
        /* the runners-up, best validation loss first (the winner is rank[0]) */
        trial *rank[GRID];
        for (int i = 0; i < s->n; i++) rank[i] = &s->t[i];
        qsort(rank, (size_t)s->n, sizeof rank[0], cmp_trial_ptr);
        for (int i = 1; i < k; i++) {
            bl_model *c = NULL;
            if ((st = bl_model_clone(m, &c, err))) {
                for (int q = 1; q < i; q++) {
                    bl_model_free(outs[q]);
                    outs[q] = NULL;
                }
                return st;
            }
            outs[i] = c;
            memcpy(c->net.P.param, rank[i]->best, c->net.P.n * sizeof(double));
            bl_model_round_params(c);
            c->dropout = rank[i]->dropout;
            c->lr = rank[i]->lr;
            c->weight_decay = rank[i]->wd;
            c->best_val_loss = rank[i]->best_val;
            c->best_train_loss = rank[i]->last_train;
            c->epochs = rank[i]->epochs_done;
        }
    }
    outs[0] = m;
    s->m = NULL;
    return BL_OK;
}

bl_status bl_pretrain_searches(const bl_dataset *const *ds, const char *schema_text, const bl_pretrain_opts *o,
                               int n, int k, bl_model **outs, bl_error *err) {
    if (!ds || !o || !outs || n < 1 || n > BL_TRAIN_MEMBERS_MAX)
        return bl_seterr(err, BL_EINVAL, "bl_pretrain_searches: NULL argument or %d searches", n);
    if (k < 1) return bl_seterr(err, BL_EINVAL, "bl_pretrain: %d models asked for", k);
    for (int i = 0; i < n * k; i++) outs[i] = NULL;
    bl_status st = bl_cpu_kernels_check(err);
    if (st != BL_OK) return st;
    for (int j = 0; j < n; j++) {
        if (!ds[j]) return bl_seterr(err, BL_EINVAL, "bl_pretrain: NULL argument");
        if ((st = bl_pretrain_opts_check(&o[j], err)) != BL_OK) return st;
        if (k > o[j].trials) return bl_seterr(err, BL_EINVAL, "%d models asked for from %d trials", k, o[j].trials);
        if (ds[j]->n_rows < 2)
            return bl_seterr(err, BL_EINVAL, "%s: pre-training needs at least 2 rows", ds[j]->name);
        if (o[j].trials != o[0].trials || o[j].epochs != o[0].epochs || o[j].grace != o[0].grace ||
            o[j].reduction != o[0].reduction || o[j].device != o[0].device || o[j].threads != o[0].threads)
            return bl_seterr(err, BL_EINVAL, "searches run together share one schedule (search %d differs)", j + 1);
    }
    search *all = calloc((size_t)n, sizeof *all), *S[BL_TRAIN_MEMBERS_MAX];
    if (!all) return bl_seterr(err, BL_ENOMEM, "out of memory");
    for (int j = 0; j < n; j++) S[j] = &all[j];
    for (int j = 0; j < n && !st; j++)
        if ((st = search_open(S[j], ds[j], schema_text, &o[j], err)) && n > 1) bl_prefixerr(err, "search %d", j + 1);
    if (!st) st = searches_run(S, n, err);
    for (int j = 0; j < n && !st; j++)
        if ((st = search_close(S[j], k, outs + (size_t)j * (size_t)k, err)) && n > 1)
            bl_prefixerr(err, "search %d", j + 1);
    for (int j = 0; j < n; j++) search_free(S[j]);
    free(all);
    if (st)
        for (int i = 0; i < n * k; i++) {
            bl_model_free(outs[i]);
            outs[i] = NULL;
        }
    return st;
}

bl_status bl_pretrain_top(const bl_dataset *ds, const char *schema_text, const bl_pretrain_opts *o,
                          int k, bl_model **outs, bl_error *err) {
    bl_pretrain_opts def;
    if (!o) {
        bl_pretrain_opts_default(&def);
        o = &def;
    }
    if (!ds || !outs) return bl_seterr(err, BL_EINVAL, "bl_pretrain: NULL argument");
    return bl_pretrain_searches(&ds, schema_text, o, 1, k, outs, err);
}
