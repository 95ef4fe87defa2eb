/* tgroup.c — a trial group (tgroup.h): the training pass of the Bellamy network written once as a
 * sequence of trial-batched ops (tgroup_ops.h), the host's random draws, and the bookkeeping.
 *
 * The pass per minibatch of B rows, for every slot at once (shapes per slot, row-major):
 *   f   s0[B×FH] = selu(xs·F0ᵀ + b)            zin[:, 0:FO] = selu(s0·F2ᵀ + b)
 *   g   s1[S×H]  = selu(X·G0ᵀ)  d1 = AlphaDropout(s1)   c[S×C] = selu(d1·G3ᵀ)        (S = NP·B)
 *       (mode 2: ck = selu(s1·G3ᵀ), the code without encoder dropout, feeds the decoder)
 *   h   t1[S×H]  = selu(c·H0ᵀ)  e1 = AlphaDropout(t1)   r[S×V] = tanh(e1·H3ᵀ)
 *   z   zin = [F | essential codes | mean optional code]   h = selu(zin·Z0ᵀ + b)   out = selu(h·z2 + b)
 * and back the same way; the weight gradients are GEMMs over the rows (dYᵀ·X), the input gradients
 * GEMMs with the weights (dY·W). This is bl_bnet_pass in per-row form: the pass (nn/kern/pass.c) runs f once per distinct
 * scale-out and shares the encoder's first layer between rows of one value, which changes only the
 * rounding. Modes 0 and 2 become per-row passes too: a value's masks (mode 0: both; mode 2: the
 * decoder's) are copied to every row that holds the value, and the per-row losses and gradients then
 * sum to exactly the per-value ones the pass computes with weights (linearity of the backward pass).
 *
 * Random draws stay on the host, in bl_bnet_pass's order: per epoch the shuffle (run_epoch), then per
 * batch, per property, per row (mode 0: per distinct value; mode 2: the decoder's only at a value's first
 * row) the encoder's H uniforms then the decoder's H. While the device trains epoch e the host already
 * draws epoch e+1 (draws do not depend on results), into the other half of a double buffer.
 * Not here: the arithmetic (tgroup_cpu.c, cuda/), the device registry (device.c), the search
 * (model/pretrain.c).
 */
#include "nn/tgroup.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "bellamy/train.h"
#include "bl_config.h"
#include "common/error.h"
#include "common/rng.h"
#include "nn/act.h"
#include "nn/adam.h"
#include "nn/device.h"
#include "nn/tgroup_ops.h"

#define MAX_ALLOCS 64

static size_t nz(size_t n) { return n ? n : 1; } /* allocations of zero elements get one */

typedef struct draw_job {
    bl_tgroup *g;
    const int *list;
    int n, k, part, parts;
} draw_job;

/* Draws running in the background: up to 64 parts, each on its own thread. */
typedef struct drawer {
    draw_job  jobs[64];
    pthread_t th[64];
    int       list[BL_TGROUP_MAX_TRIALS];
    int       parts, started; /* parts 0..started-1 run on threads */
} drawer;

struct bl_tgroup {
    const bl_tg_ops *ops;
    void *ctx;
    bl_bnet_dims d;
    bl_tg_state s;
    bl_tg_view vtr, vva;
    int T, batch, mode, threads, has_val;
    int graphs;                  /* record an epoch as a graph and replay it (ops permitting; from the
                                    second epoch on; 0 again once a recording failed) */
    int graph_n;                 /* slots in use when the graph was recorded; 0: none */
    long n_tr, n_va, nb;         /* rows of the views, batches per epoch */
    long epochs, step;           /* epochs and Adam steps of the alive trials (lockstep) */
    double beta1, beta2, eps;
    /* per trial (host) */
    bl_tgroup_trial *cfg;
    bl_rng *rng;
    uint32_t *order;             /* [T][n_tr] persistent row order (shuffled in place each epoch) */
    long *drawn;                 /* [T] epochs whose draws have been made */
    long *steps;                 /* [T] Adam steps (of a stopped trial: when it stopped) */
    bl_tgroup_stat *stat;
    int *slot_of;                /* [T] slot or -1 */
    double *hW, *hM, *hV, *hBest; /* [T][n_params] a stopped trial's state */
    /* host tables for the draws */
    uint32_t *tr_val;            /* [n_tr][NP] value index per row and property (train view) */
    size_t max_vals;
    int32_t *scratch;            /* [threads][max_vals] first row of a value within a batch, or -1 */
    /* transfer buffers (page-locked for CUDA) */
    uint32_t *h_order[2];        /* [T][n_tr] */
    uint8_t  *h_mask[2];         /* [T][n_tr][NP][2H] */
    double   *h_loss;            /* [T][loss_ld] */
    int32_t  *h_keep, *h_slot;   /* [T] */
    double   *h_hyp;             /* [T][BL_TG_HYP] */
    double   *h_bc;              /* [nb][2] this epoch's Adam bias corrections */
    double   *h_avgk;            /* [2] this epoch's β and 1 / (1 − βᵗ) of the parameters' average */
    int       avg_span;          /* bl_tgroup_opts.avg_span */
    double    ema_w;             /* the average's weight so far, 1 − βᵗ (pretrain.c's ema_w) */
    drawer *drawer_p;            /* background draws (see draw_start) */
    /* every ops allocation, for bl_tgroup_free */
    void *dev[MAX_ALLOCS];
    int n_dev;
    void *host[12];
    int n_host;
};

void bl_tgroup_opts_default(bl_tgroup_opts *o) {
    o->batch = 64;
    o->per_row_dropout = 1;
    o->device = BL_NN_CPU_BATCHED;
    o->threads = 1;
    o->graphs = 0;
    o->avg_span = 1;
}

int bl_tgroup_trials(const bl_tgroup *g) { return g ? g->T : 0; }
int bl_tgroup_graphs(const bl_tgroup *g) { return g && g->graphs && g->graph_n > 0; }
const char *bl_tgroup_device_name(const bl_tgroup *g) { return g ? g->ops->name : ""; }

static void *dalloc(bl_tgroup *g, size_t bytes) {
    if (g->n_dev >= MAX_ALLOCS) return NULL;
    void *p = g->ops->alloc(g->ctx, bytes);
    if (p) g->dev[g->n_dev++] = p;
    return p;
}
static void *halloc(bl_tgroup *g, size_t bytes) {
    if (g->n_host >= 12) return NULL;
    void *p = g->ops->host_alloc(g->ctx, bytes ? bytes : 1);
    if (p) g->host[g->n_host++] = p;
    return p;
}

void bl_tgroup_free(bl_tgroup *g) {
    if (!g) return;
    if (g->ctx) {
        bl_error e;
        g->ops->finish(g->ctx, &e); /* nothing may still be reading what is freed below */
        for (int i = 0; i < g->n_dev; i++) g->ops->dfree(g->ctx, g->dev[i]);
        for (int i = 0; i < g->n_host; i++) g->ops->host_free(g->ctx, g->host[i]);
        g->ops->close(g->ctx);
    }
    free(g->cfg);
    free(g->rng);
    free(g->order);
    free(g->drawn);
    free(g->steps);
    free(g->stat);
    free(g->slot_of);
    free(g->hW);
    free(g->hM);
    free(g->hV);
    free(g->hBest);
    free(g->tr_val);
    free(g->scratch);
    free(g->drawer_p);
    free(g);
}

/* ---- set-up ---------------------------------------------------------------------------------- */

static bl_status check_view(const bl_bview *v, const bl_bnet_dims *d, const char *what, bl_error *err) {
    const int np = d->n_ess + d->n_opt;
    if (!v->sx || !v->sx_feat || !v->target || (np > 0 && (!v->val || !v->n_vals || !v->vecs)))
        return bl_seterr(err, BL_EINVAL, "trial group: %s view lacks tables (targets are required)", what);
    if (v->n_rows == 0 || v->n_rows > (size_t)INT32_MAX)
        return bl_seterr(err, BL_EINVAL, "trial group: %s view has %zu rows (1..%d)", what, v->n_rows, INT32_MAX);
    for (size_t r = 0; r < v->n_rows; r++) {
        if (v->sx[r] >= v->n_sx)
            return bl_seterr(err, BL_EINVAL, "trial group: %s row %zu: scale-out index out of range", what, r);
        for (int p = 0; p < np; p++)
            if (v->val[r * (size_t)np + (size_t)p] >= v->n_vals[p])
                return bl_seterr(err, BL_EINVAL, "trial group: %s row %zu: value of property %d out of range",
                                 what, r, p);
    }
    return BL_OK;
}

/* Copies a view's tables into ops memory. */
static bl_status upload_view(bl_tgroup *g, const bl_bview *v, bl_tg_view *out, bl_error *err) {
    const bl_tg_net *n = &g->s.net;
    const size_t rows = v->n_rows, np = (size_t)n->NP;
    size_t n_vecs = 0;
    for (size_t p = 0; p < np; p++) n_vecs += v->n_vals[p];
    double *vecs = malloc((n_vecs ? n_vecs : 1) * (size_t)n->V * sizeof *vecs);
    uint32_t *vec = malloc(nz(rows * np) * sizeof *vec);
    size_t *off = malloc((np ? np : 1) * sizeof *off);
    double *d_feat = dalloc(g, v->n_sx * (size_t)n->FI * sizeof(double));
    double *d_vecs = dalloc(g, (n_vecs ? n_vecs : 1) * (size_t)n->V * sizeof(double));
    uint32_t *d_sx = dalloc(g, rows * sizeof(uint32_t));
    uint32_t *d_vec = dalloc(g, nz(rows * np) * sizeof(uint32_t));
    double *d_tgt = dalloc(g, rows * sizeof(double));
    bl_status st = BL_OK;
    if (!vecs || !vec || !off || !d_feat || !d_vecs || !d_sx || !d_vec || !d_tgt) {
        st = bl_seterr(err, BL_ENOMEM, "trial group: out of %s memory for the data", g->ops->name);
        goto done;
    }
    size_t k = 0;
    for (size_t p = 0; p < np; p++) {
        off[p] = k;
        memcpy(vecs + k * (size_t)n->V, v->vecs[p], v->n_vals[p] * (size_t)n->V * sizeof *vecs);
        k += v->n_vals[p];
    }
    for (size_t r = 0; r < rows; r++)
        for (size_t p = 0; p < np; p++) vec[r * np + p] = (uint32_t)(off[p] + v->val[r * np + p]);
    g->ops->put(g->ctx, d_feat, v->sx_feat, v->n_sx * (size_t)n->FI * sizeof(double));
    g->ops->put(g->ctx, d_vecs, vecs, n_vecs * (size_t)n->V * sizeof(double));
    g->ops->put(g->ctx, d_sx, v->sx, rows * sizeof(uint32_t));
    g->ops->put(g->ctx, d_vec, vec, rows * np * sizeof(uint32_t));
    g->ops->put(g->ctx, d_tgt, v->target, rows * sizeof(double));
    st = g->ops->finish(g->ctx, err); /* the host copies are freed next */
    out->n_rows = (long)rows;
    out->sx_feat = d_feat;
    out->vecs = d_vecs;
    out->sx = d_sx;
    out->vec = d_vec;
    out->target = d_tgt;
done:
    free(vecs);
    free(vec);
    free(off);
    return st;
}

static void slot_hyper(const bl_tgroup_trial *c, double *h) {
    h[BL_TG_LR] = c->lr;
    h[BL_TG_WD] = c->wd;
    h[BL_TG_DA] = 1.0;
    h[BL_TG_DB] = 0.0;
    h[BL_TG_DROP] = 0.0;
    if (c->dropout > 0.0) {
        double a = 1.0, b = 0.0;
        bl_alpha_dropout_coef(c->dropout, &a, &b, NULL); /* p checked to lie in (0, 1) */
        h[BL_TG_DA] = a;
        h[BL_TG_DB] = b;
        h[BL_TG_DROP] = 1.0;
    }
}

/* Uploads the slot map and the per-slot hyper-parameters of the slots in use. */
static void put_slots(bl_tgroup *g) {
    for (int t = 0; t < g->T; t++) {
        const int sl = g->slot_of[t];
        if (sl < 0) continue;
        g->h_slot[sl] = t;
        slot_hyper(&g->cfg[t], g->h_hyp + (size_t)sl * BL_TG_HYP);
    }
    g->ops->put(g->ctx, (void *)g->s.slot_trial, g->h_slot, (size_t)g->s.n * sizeof(int32_t));
    g->ops->put(g->ctx, g->s.hyp, g->h_hyp, (size_t)g->s.n * BL_TG_HYP * sizeof(double));
}

static bl_status set_params(bl_tgroup *g, int t, const bl_bnet *net, bl_error *err) {
    const bl_tg_ops *o = g->ops;
    const size_t off = (size_t)g->slot_of[t] * (size_t)g->s.net.P, np = (size_t)g->s.net.n_params;
    o->put(g->ctx, g->s.W + off, net->P.param, np * sizeof(double));
    o->put(g->ctx, g->s.best + off, net->P.param, np * sizeof(double));
    /* the moments stay zero (allocations are zero-filled); the host copies the stat of a fresh trial */
    return o->finish(g->ctx, err);
}

bl_status bl_tgroup_new(const bl_bnet_dims *d, const bl_bview *train, const bl_bview *val, int T,
                        const bl_tgroup_trial *cfg, const bl_tgroup_opts *o, bl_tgroup **out, bl_error *err) {
    return bl_tgroup_new_ops(NULL, d, train, val, T, cfg, o, out, err);
}

bl_status bl_tgroup_new_ops(const struct bl_tg_ops *with, const bl_bnet_dims *d, const bl_bview *train,
                            const bl_bview *val, int T, const bl_tgroup_trial *cfg, const bl_tgroup_opts *o,
                            bl_tgroup **out, bl_error *err) {
    if (!out) return bl_seterr(err, BL_EINVAL, "bl_tgroup_new: NULL output");
    *out = NULL;
    if (!d || !train || !cfg || !o) return bl_seterr(err, BL_EINVAL, "bl_tgroup_new: NULL argument");
    if (T < 1 || T > BL_TGROUP_MAX_TRIALS)
        return bl_seterr(err, BL_EINVAL, "trial group: %d trials (must be 1..%d)", T, BL_TGROUP_MAX_TRIALS);
    if (o->batch < 1 || o->batch > 1 << 20)
        return bl_seterr(err, BL_EINVAL, "trial group: batch size %d out of range", o->batch);
    if (o->per_row_dropout < 0 || o->per_row_dropout > 2)
        return bl_seterr(err, BL_EINVAL, "trial group: dropout-mask mode %d (0 per value, 1 per row, 2 hybrid)",
                         o->per_row_dropout);
    if (o->threads < 1 || o->threads > BL_TRAIN_THREADS_MAX)
        return bl_seterr(err, BL_EINVAL, "trial group: threads %d: must be 1..%d", o->threads, BL_TRAIN_THREADS_MAX);
    if (o->avg_span < 1 || o->avg_span > 1000000)
        return bl_seterr(err, BL_EINVAL, "trial group: parameter average span %d: must be 1..1000000", o->avg_span);
    if (!bl_nn_device_batched(o->device))
        return bl_seterr(err, BL_EINVAL, "trial group: device %d (%s) is not a batched one (%d %s, %d %s)",
                         o->device, bl_nn_device_name(o->device), BL_NN_CPU_BATCHED,
                         bl_nn_device_name(BL_NN_CPU_BATCHED), BL_NN_CUDA, bl_nn_device_name(BL_NN_CUDA));
    for (int i = 0; i < T; i++) {
        const bl_tgroup_trial *c = &cfg[i];
        if (!(isfinite(c->lr) && c->lr >= 0.0) || !(isfinite(c->wd) && c->wd >= 0.0))
            return bl_seterr(err, BL_EINVAL, "trial group: trial %d: learning rate %g / weight decay %g must be "
                             "finite and >= 0", i, c->lr, c->wd);
        if (!(c->dropout >= 0.0 && c->dropout < 1.0))
            return bl_seterr(err, BL_EINVAL, "trial group: trial %d: dropout %g outside [0, 1)", i, c->dropout);
    }
    bl_status st;
    bl_bnet tmp;
    memset(&tmp, 0, sizeof tmp);
    if ((st = bl_bnet_init(&tmp, d, NULL, err))) return st; /* checks the dims; gives the layout */
    const int np = d->n_ess + d->n_opt;
    if ((st = check_view(train, d, "training", err)) || (val && (st = check_view(val, d, "validation", err)))) {
        bl_bnet_free(&tmp);
        return st;
    }
    const bl_tg_ops *ops = with;
    if (!with && (st = bl_nn_device_open(o->device, &ops, err))) { /* CUDA: the module, loaded now if need be */
        bl_bnet_free(&tmp);
        return st;
    }
    if (o->avg_span > 1 && !ops->average) {
        bl_bnet_free(&tmp);
        return bl_seterr(err, BL_EUNSUPPORTED, "trial group: the %s ops have no parameter average (a module of "
                         "another version?); use span 1 or another device", ops->name);
    }

    bl_tgroup *g = calloc(1, sizeof *g);
    if (!g) {
        bl_bnet_free(&tmp);
        return bl_seterr(err, BL_ENOMEM, "out of memory");
    }
    g->ops = ops;
    g->d = *d;
    g->T = T;
    g->batch = o->batch;
    g->mode = o->per_row_dropout;
    g->threads = o->threads;
    g->graphs = o->graphs != 0;
    g->avg_span = o->avg_span;
    g->has_val = val != NULL;
    g->n_tr = (long)train->n_rows;
    g->n_va = val ? (long)val->n_rows : 0;
    g->nb = (g->n_tr + g->batch - 1) / g->batch;
    bl_adam adam;
    bl_adam_init(&adam, 0.0, 0.0, NULL);
    g->beta1 = adam.beta1;
    g->beta2 = adam.beta2;
    g->eps = adam.eps;

    bl_tg_net *n = &g->s.net;
    n->FI = d->f_in; n->FH = d->f_hidden; n->FO = d->f_out;
    n->V = d->vec_len; n->H = d->ae_hidden; n->C = d->code;
    n->Z = d->z_hidden; n->ZI = tmp.z_in;
    n->NE = d->n_ess; n->NO = d->n_opt; n->NP = np;
    n->n_params = (long)tmp.P.n;
    n->P = (n->n_params + 3) / 4 * 4; /* 32-byte aligned slot blocks */
#define OFFSET(field, name, rows, cols) n->field = (long)tmp.field;
    BL_BNET_BLOCKS(OFFSET, d, tmp.z_in)
#undef OFFSET

    const size_t tT = (size_t)T, P = (size_t)n->P, npar = (size_t)n->n_params, ntr = (size_t)g->n_tr;
    const size_t mrow = (size_t)np * 2 * (size_t)n->H; /* mask bytes per row position */
    g->cfg = malloc(tT * sizeof *g->cfg);
    g->rng = malloc(tT * sizeof *g->rng);
    g->order = malloc(tT * ntr * sizeof *g->order);
    g->drawn = calloc(tT, sizeof *g->drawn);
    g->steps = calloc(tT, sizeof *g->steps);
    g->stat = calloc(tT, sizeof *g->stat);
    g->slot_of = malloc(tT * sizeof *g->slot_of);
    g->hW = calloc(tT * npar, sizeof(double));
    g->hM = calloc(tT * npar, sizeof(double));
    g->hV = calloc(tT * npar, sizeof(double));
    g->hBest = calloc(tT * npar, sizeof(double));
    g->tr_val = malloc(nz(ntr * (size_t)np) * sizeof *g->tr_val);
    g->max_vals = 1;
    for (int p = 0; p < np; p++)
        if (train->n_vals[p] > g->max_vals) g->max_vals = train->n_vals[p];
    g->scratch = malloc((size_t)g->threads * g->max_vals * sizeof *g->scratch);
    g->drawer_p = calloc(1, sizeof *g->drawer_p);
    if (!g->drawer_p || !g->cfg || !g->rng || !g->order || !g->drawn || !g->steps || !g->stat || !g->slot_of ||
        !g->hW || !g->hM || !g->hV || !g->hBest || !g->tr_val || !g->scratch) {
        st = bl_seterr(err, BL_ENOMEM, "out of memory");
        goto fail;
    }
    memcpy(g->cfg, cfg, tT * sizeof *cfg);
    if (np) memcpy(g->tr_val, train->val, ntr * (size_t)np * sizeof *g->tr_val);
    for (size_t i = 0; i < (size_t)g->threads * g->max_vals; i++) g->scratch[i] = -1;

    if ((st = ops->open(&g->ctx, err))) {
        g->ctx = NULL;
        goto fail;
    }
    /* work buffers: R rows per slot */
    const long Rb = g->batch < g->n_tr ? g->batch : g->n_tr;
    const long Rv = Rb > g->n_va ? Rb : g->n_va;
    bl_tg_work *w = &g->s.w;
    w->R = Rv;
    const size_t r1 = tT * (size_t)Rv, ra = r1 * (size_t)np;
    double **bufs[] = {&w->xs, &w->tgt, &w->s0, &w->zin, &w->dzin, &w->ds0, &w->h, &w->du, &w->dpre, &w->rowl,
                       &w->X, &w->s1, &w->d1, &w->c, &w->ck, &w->dc, &w->t1, &w->e1, &w->r, &w->de1, &w->dd1,
                       &w->dk1, &w->rec};
    const size_t sizes[] = {r1 * n->FI, r1, r1 * n->FH, r1 * n->ZI, r1 * n->ZI, r1 * n->FH, r1 * n->Z, r1 * n->Z, r1,
                            r1, ra * n->V, ra * n->H, ra * n->H, ra * n->C, ra * n->C, ra * n->C, ra * n->H,
                            ra * n->H, ra * n->V, ra * n->H, ra * n->H, ra * n->H, tT * 2};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        if (!(*bufs[i] = dalloc(g, (sizes[i] ? sizes[i] : 1) * sizeof(double)))) goto nomem;
    g->s.n = T;
    g->s.n_order = g->n_tr;
    g->s.loss_ld = g->nb + 1;
    if (!(g->s.W = dalloc(g, tT * P * sizeof(double))) || !(g->s.G = dalloc(g, tT * P * sizeof(double))) ||
        !(g->s.M = dalloc(g, tT * P * sizeof(double))) || !(g->s.Vm = dalloc(g, tT * P * sizeof(double))) ||
        !(g->s.best = dalloc(g, tT * P * sizeof(double))) ||
        !(g->s.hyp = dalloc(g, tT * BL_TG_HYP * sizeof(double))) ||
        !(g->s.slot_trial = dalloc(g, tT * sizeof(int32_t))) || !(g->s.keep = dalloc(g, tT * sizeof(int32_t))) ||
        !(g->s.order = dalloc(g, tT * ntr * sizeof(uint32_t))) ||
        !(g->s.mask = dalloc(g, tT * ntr * mrow)) ||
        !(g->s.loss = dalloc(g, tT * (size_t)g->s.loss_ld * sizeof(double))) ||
        !(g->s.bc = dalloc(g, (size_t)g->nb * 2 * sizeof(double))))
        goto nomem;
    if (g->avg_span > 1 &&
        (!(g->s.ema = dalloc(g, tT * P * sizeof(double))) || !(g->s.avg = dalloc(g, tT * P * sizeof(double))) ||
         !(g->s.avgk = dalloc(g, 2 * sizeof(double))) || !(g->h_avgk = halloc(g, 2 * sizeof(double)))))
        goto nomem;
    for (int k = 0; k < 2; k++)
        if (!(g->h_order[k] = halloc(g, tT * ntr * sizeof(uint32_t))) || !(g->h_mask[k] = halloc(g, tT * ntr * mrow)))
            goto nomem;
    if (!(g->h_loss = halloc(g, tT * (size_t)g->s.loss_ld * sizeof(double))) ||
        !(g->h_keep = halloc(g, tT * sizeof(int32_t))) || !(g->h_slot = halloc(g, tT * sizeof(int32_t))) ||
        !(g->h_hyp = halloc(g, tT * BL_TG_HYP * sizeof(double))) ||
        !(g->h_bc = halloc(g, (size_t)g->nb * 2 * sizeof(double))))
        goto nomem;
    if ((st = upload_view(g, train, &g->vtr, err))) goto fail;
    if (val && (st = upload_view(g, val, &g->vva, err))) goto fail;

    /* trials: generator, initial parameters (pretrain.c's order), identity row order */
    for (int t = 0; t < T; t++) {
        g->slot_of[t] = t;
        g->stat[t].alive = 1;
        g->stat[t].best_val = INFINITY;
        g->stat[t].val_loss = INFINITY;
        g->stat[t].train_loss = INFINITY;
        for (size_t k = 0; k < ntr; k++) g->order[(size_t)t * ntr + k] = (uint32_t)k;
        bl_rng_seed(&g->rng[t], cfg[t].seed);
        bl_bnet net;
        if ((st = bl_bnet_init(&net, d, &g->rng[t], err))) goto fail;
        st = set_params(g, t, &net, err);
        bl_bnet_free(&net);
        if (st) goto fail;
    }
    put_slots(g);
    if ((st = ops->finish(g->ctx, err))) goto fail;
    bl_bnet_free(&tmp);
    *out = g;
    return BL_OK;
nomem:
    st = bl_seterr(err, BL_ENOMEM, "trial group: out of %s memory (%d trials)", ops->name, T);
fail:
    bl_bnet_free(&tmp);
    bl_tgroup_free(g);
    return st;
}

bl_status bl_tgroup_set_trial(bl_tgroup *g, int i, const bl_bnet *net, const bl_rng *rng, bl_error *err) {
    if (!g || !net) return bl_seterr(err, BL_EINVAL, "bl_tgroup_set_trial: NULL argument");
    if (i < 0 || i >= g->T) return bl_seterr(err, BL_EINVAL, "trial group: no trial %d (%d trials)", i, g->T);
    if (g->stat[i].epochs_done > 0 || g->drawn[i] > 0)
        return bl_seterr(err, BL_EINVAL, "trial group: trial %d has started; set it before the first epoch", i);
    if (memcmp(&net->d, &g->d, sizeof g->d) != 0 || (long)net->P.n != g->s.net.n_params)
        return bl_seterr(err, BL_EINVAL, "trial group: network dimensions differ from the group's");
    if (rng) g->rng[i] = *rng;
    return set_params(g, i, net, err);
}

/* ---- random draws ---------------------------------------------------------------------------- */


/* Trial t's draws of its next epoch into transfer buffer k: the shuffle, then the masks of each batch in
 * bl_bnet_pass's order. scratch: [max_vals], all −1 on entry and exit. */
static void draw_trial(bl_tgroup *g, int t, int k, int32_t *scratch) {
    const size_t n = (size_t)g->n_tr, NP = (size_t)g->s.net.NP, H = (size_t)g->s.net.H;
    uint32_t *ord = g->order + (size_t)t * n;
    bl_rng *rng = &g->rng[t];
    for (size_t i = n - 1; i > 0; i--) {
        size_t j = (size_t)bl_rng_int(rng, i + 1);
        uint32_t tmp = ord[i];
        ord[i] = ord[j];
        ord[j] = tmp;
    }
    memcpy(g->h_order[k] + (size_t)t * n, ord, n * sizeof *ord);
    g->drawn[t]++;
    const double p = g->cfg[t].dropout;
    if (!(p > 0.0)) return; /* bl_bnet_pass draws nothing without dropout */
    uint8_t *mk = g->h_mask[k] + (size_t)t * n * NP * 2 * H;
    const uint32_t thresh = bl_rng_threshold16(p);
    const int h = (int)H;
    uint64_t st[4]; /* a local copy of the state: the mask draws are the group's host-side hot loop */
    memcpy(st, rng->s, sizeof st);
    for (size_t i0 = 0; i0 < n; i0 += (size_t)g->batch) {
        const size_t B = n - i0 < (size_t)g->batch ? n - i0 : (size_t)g->batch;
        for (size_t q = 0; q < NP; q++) {
            for (size_t b = 0; b < B; b++) {
                uint8_t *m = mk + ((i0 + b) * NP + q) * 2 * H;
                const uint32_t x = g->tr_val[(size_t)ord[i0 + b] * NP + q];
                const int32_t first = scratch[x];
                if (first < 0) scratch[x] = (int32_t)b;
                const uint8_t *fm = mk + ((i0 + (size_t)(first < 0 ? 0 : first)) * NP + q) * 2 * H;
                switch (g->mode) {
                case 1: /* every row its own masks: encoder's then decoder's */
                    bl_rng_keep16(st, thresh, h, m);
                    bl_rng_keep16(st, thresh, h, m + H);
                    break;
                case 0: /* one pair of masks per distinct value, drawn at its first row */
                    if (first < 0) {
                        bl_rng_keep16(st, thresh, h, m);
                        bl_rng_keep16(st, thresh, h, m + H);
                    } else
                        memcpy(m, fm, 2 * H);
                    break;
                default: /* 2: the encoder's per row; the decoder's once per value, after that row's */
                    bl_rng_keep16(st, thresh, h, m);
                    if (first < 0)
                        bl_rng_keep16(st, thresh, h, m + H);
                    else
                        memcpy(m + H, fm + H, H);
                    break;
                }
            }
            for (size_t b = 0; b < B; b++) scratch[g->tr_val[(size_t)ord[i0 + b] * NP + q]] = -1;
        }
    }
    memcpy(rng->s, st, sizeof st);
}

static void *draw_worker(void *arg) {
    draw_job *j = arg;
    for (int i = j->part; i < j->n; i += j->parts)
        draw_trial(j->g, j->list[i], j->k, j->g->scratch + (size_t)j->part * j->g->max_vals);
    return NULL;
}

/* Starts drawing the next epoch of trials list[0..n) into buffer k on min(g->threads, n) threads (each
 * trial's draws come from its own generator, so the split does not change them). Every part touches
 * only its trials' generators, orders and buffer rows, so the caller may drive the device meanwhile. */
static void draw_start(bl_tgroup *g, drawer *d, const int *list, int n, int k) {
    int parts = g->threads < n ? g->threads : n;
    if (parts > 64) parts = 64;
    d->parts = parts > 0 ? parts : 0;
    d->started = 0;
    memcpy(d->list, list, (size_t)n * sizeof *list);
    for (int i = 0; i < d->parts; i++) d->jobs[i] = (draw_job){g, d->list, n, k, i, d->parts};
    for (int i = 0; i < d->parts; i++) {
        if (pthread_create(&d->th[i], NULL, draw_worker, &d->jobs[i]) != 0) break;
        d->started = i + 1;
    }
}

/* Waits for the draws; parts that got no thread run here. */
static void draw_join(drawer *d) {
    for (int i = d->started; i < d->parts; i++) draw_worker(&d->jobs[i]);
    for (int i = 0; i < d->started; i++) pthread_join(d->th[i], NULL);
    d->parts = d->started = 0;
}

/* ---- the pass -------------------------------------------------------------------------------- */

/* One pass over rows i0..i0+B of view v (training: trial orders, dropout, gradients, an Adam step;
 * otherwise view order, evaluation mode); the loss of each slot goes to loss column col (training: the
 * batch's index, which also picks its Adam bias corrections). */
static void run_pass(bl_tgroup *g, const bl_tg_view *v, int training, long i0, int B, long col) {
    const bl_tg_ops *o = g->ops;
    void *cx = g->ctx;
    bl_tg_state *s = &g->s;
    const bl_tg_net *n = &s->net;
    bl_tg_work *w = &s->w;
    const int ns = s->n, S = n->NP * B;
    const int FI = n->FI, FH = n->FH, FO = n->FO, V = n->V, H = n->H, C = n->C, Z = n->Z, ZI = n->ZI;
    const long R = w->R, P = n->P, RA = R * n->NP; /* rows and AE rows per slot */
    const int clean = training && g->mode == 2;
    double *W = s->W, *G = s->G;

    o->gather(cx, s, v, training, i0, B);
    /* f → zin[:, 0:FO] */
    o->gemm(cx, 0, 1, B, FH, FI, 1.0, w->xs, FI, R * FI, W + n->f0w, FI, P, 0.0, w->s0, FH, R * FH, ns);
    o->bias_selu(cx, s, B, FH, w->s0, FH, R * FH, n->f0b);
    o->gemm(cx, 0, 1, B, FO, FH, 1.0, w->s0, FH, R * FH, W + n->f2w, FH, P, 0.0, w->zin, ZI, R * ZI, ns);
    o->bias_selu(cx, s, B, FO, w->zin, ZI, R * ZI, n->f2b);
    if (S > 0) {
        /* encoder */
        o->gemm(cx, 0, 1, S, H, V, 1.0, w->X, V, RA * V, W + n->g0w, V, P, 0.0, w->s1, H, RA * H, ns);
        o->selu_dropout(cx, s, B, w->s1, w->d1, 0, i0, training);
        o->gemm(cx, 0, 1, S, C, H, 1.0, w->d1, H, RA * H, W + n->g3w, H, P, 0.0, w->c, C, RA * C, ns);
        if (clean) {
            o->gemm(cx, 0, 1, S, C, H, 1.0, w->s1, H, RA * H, W + n->g3w, H, P, 0.0, w->ck, C, RA * C, ns);
            o->bias_selu(cx, s, S, C, w->ck, C, RA * C, -1);
        }
    }
    o->codes(cx, s, B); /* selu of the codes, and z's input (zeros where there is no property) */
    if (S > 0) {
        /* decoder */
        const double *code = clean ? w->ck : w->c;
        o->gemm(cx, 0, 1, S, H, C, 1.0, code, C, RA * C, W + n->h0w, C, P, 0.0, w->t1, H, RA * H, ns);
        o->selu_dropout(cx, s, B, w->t1, w->e1, 1, i0, training);
        o->gemm(cx, 0, 1, S, V, H, 1.0, w->e1, H, RA * H, W + n->h3w, H, P, 0.0, w->r, V, RA * V, ns);
    }
    o->recon(cx, s, B); /* tanh, the reconstruction sums, and d loss / d pre-activation */
    /* z */
    o->gemm(cx, 0, 1, B, Z, ZI, 1.0, w->zin, ZI, R * ZI, W + n->z0w, ZI, P, 0.0, w->h, Z, R * Z, ns);
    o->head(cx, s, B, training, col);
    if (!training) return;

    /* z backward: G_Z0 += duᵀ·zin, dzin = du·Z0 */
    o->gemm(cx, 1, 0, Z, ZI, B, 1.0, w->du, Z, R * Z, w->zin, ZI, R * ZI, 1.0, G + n->z0w, ZI, P, ns);
    o->gemm(cx, 0, 0, B, ZI, Z, 1.0, w->du, Z, R * Z, W + n->z0w, ZI, P, 0.0, w->dzin, ZI, R * ZI, ns);
    /* f backward */
    o->selu_back_bias(cx, s, B, FO, w->dzin, ZI, R * ZI, w->zin, ZI, R * ZI, n->f2b);
    o->gemm(cx, 1, 0, FO, FH, B, 1.0, w->dzin, ZI, R * ZI, w->s0, FH, R * FH, 1.0, G + n->f2w, FH, P, ns);
    o->gemm(cx, 0, 0, B, FH, FO, 1.0, w->dzin, ZI, R * ZI, W + n->f2w, FH, P, 0.0, w->ds0, FH, R * FH, ns);
    o->selu_back_bias(cx, s, B, FH, w->ds0, FH, R * FH, w->s0, FH, R * FH, n->f0b);
    o->gemm(cx, 1, 0, FH, FI, B, 1.0, w->ds0, FH, R * FH, w->xs, FI, R * FI, 1.0, G + n->f0w, FI, P, ns);
    if (S > 0) {
        /* decoder backward: w->r holds d loss / d (pre-tanh) */
        const double *code = clean ? w->ck : w->c;
        o->gemm(cx, 1, 0, V, H, S, 1.0, w->r, V, RA * V, w->e1, H, RA * H, 1.0, G + n->h3w, H, P, ns);
        o->gemm(cx, 0, 0, S, H, V, 1.0, w->r, V, RA * V, W + n->h3w, H, P, 0.0, w->de1, H, RA * H, ns);
        o->dropout_selu_back(cx, s, B, w->de1, w->t1, 1, i0, NULL);
        o->gemm(cx, 1, 0, H, C, S, 1.0, w->de1, H, RA * H, code, C, RA * C, 1.0, G + n->h0w, C, P, ns);
        /* the decoder's share of d code; mode 2 it belongs to the clean code */
        o->gemm(cx, 0, 0, S, C, H, 1.0, w->de1, H, RA * H, W + n->h0w, C, P, 0.0, w->dc, C, RA * C, ns);
        o->code_back(cx, s, B, clean); /* mode 2: ck becomes the clean code's gradient */
        /* encoder backward */
        o->gemm(cx, 1, 0, C, H, S, 1.0, w->dc, C, RA * C, w->d1, H, RA * H, 1.0, G + n->g3w, H, P, ns);
        o->gemm(cx, 0, 0, S, H, C, 1.0, w->dc, C, RA * C, W + n->g3w, H, P, 0.0, w->dd1, H, RA * H, ns);
        if (clean) {
            o->gemm(cx, 1, 0, C, H, S, 1.0, w->ck, C, RA * C, w->s1, H, RA * H, 1.0, G + n->g3w, H, P, ns);
            o->gemm(cx, 0, 0, S, H, C, 1.0, w->ck, C, RA * C, W + n->g3w, H, P, 0.0, w->dk1, H, RA * H, ns);
        }
        o->dropout_selu_back(cx, s, B, w->dd1, w->s1, 0, i0, clean ? w->dk1 : NULL);
        o->gemm(cx, 1, 0, H, V, S, 1.0, w->dd1, H, RA * H, w->X, V, RA * V, 1.0, G + n->g0w, V, P, ns);
    }
    /* Adam, as bl_adam_step (one step count for every view) */
    o->adam(cx, s, g->beta1, g->beta2, g->eps, col);
}

/* Every op of one epoch: each batch of every alive slot, then the validation loss. The same sequence
 * every epoch while the slots stay (what changes lives in memory: draws, bias corrections). */
static void run_epoch_ops(bl_tgroup *g) {
    for (long ib = 0, i0 = 0; i0 < g->n_tr; ib++, i0 += g->batch) {
        const int B = (int)(g->n_tr - i0 < g->batch ? g->n_tr - i0 : g->batch);
        run_pass(g, &g->vtr, 1, i0, B, ib);
    }
    if (g->s.ema) { /* the average's validation loss: its parameters lent to the pass */
        g->ops->average(g->ctx, &g->s);
        double *own = g->s.W;
        g->s.W = g->s.avg;
        if (g->has_val) run_pass(g, &g->vva, 0, 0, (int)g->n_va, g->nb);
        g->s.W = own;
    } else if (g->has_val)
        run_pass(g, &g->vva, 0, 0, (int)g->n_va, g->nb);
}

/* ---- epochs and bookkeeping ------------------------------------------------------------------ */

/* Stops the trials whose alive flag went to 0: their state goes to the host, the remaining trials
 * move down to consecutive slots (in trial order, so a slot only ever moves to a lower one). */
static bl_status retire(bl_tgroup *g, const uint8_t *alive, bl_error *err) {
    const bl_tg_ops *o = g->ops;
    const size_t P = (size_t)g->s.net.P, np = (size_t)g->s.net.n_params;
    for (int t = 0; t < g->T; t++) {
        if (g->slot_of[t] < 0 || alive[t]) continue;
        const size_t off = (size_t)g->slot_of[t] * P;
        o->get(g->ctx, g->hW + (size_t)t * np, g->s.W + off, np * sizeof(double));
        o->get(g->ctx, g->hM + (size_t)t * np, g->s.M + off, np * sizeof(double));
        o->get(g->ctx, g->hV + (size_t)t * np, g->s.Vm + off, np * sizeof(double));
        o->get(g->ctx, g->hBest + (size_t)t * np, g->s.best + off, np * sizeof(double));
        g->steps[t] = g->step;
    }
    bl_status st = o->finish(g->ctx, err);
    if (st) return st;
    int next = 0;
    for (int t = 0; t < g->T; t++) {
        const int sl = g->slot_of[t];
        if (sl < 0) continue;
        if (!alive[t]) {
            g->slot_of[t] = -1;
            g->stat[t].alive = 0;
            continue;
        }
        if (sl != next) {
            double *blocks[] = {g->s.W, g->s.M, g->s.Vm, g->s.best, g->s.ema}; /* G is zero between steps */
            for (int k = 0; k < (g->s.ema ? 5 : 4); k++)
                o->copy(g->ctx, blocks[k] + (size_t)next * P, blocks[k] + (size_t)sl * P, np * sizeof(double));
        }
        g->slot_of[t] = next++;
    }
    g->s.n = next;
    put_slots(g);
    return BL_OK;
}

/* Puts the alive trials' draws for this epoch from buffer k into ops memory (runs of consecutive
 * trials in one copy each). */
static void put_draws(bl_tgroup *g, int k, int masks) {
    const size_t n = (size_t)g->n_tr, mrow = (size_t)g->s.net.NP * 2 * (size_t)g->s.net.H;
    for (int t = 0; t < g->T;) {
        if (g->slot_of[t] < 0) {
            t++;
            continue;
        }
        int e = t;
        while (e < g->T && g->slot_of[e] >= 0) e++;
        const size_t a = (size_t)t, cnt = (size_t)(e - t);
        g->ops->put(g->ctx, (void *)(g->s.order + a * n), g->h_order[k] + a * n, cnt * n * sizeof(uint32_t));
        if (masks && mrow)
            g->ops->put(g->ctx, (void *)(g->s.mask + a * n * mrow), g->h_mask[k] + a * n * mrow, cnt * n * mrow);
        t = e;
    }
}

bl_status bl_tgroup_epoch(bl_tgroup *g, const uint8_t *alive, bl_error *err) {
    if (!g) return bl_seterr(err, BL_EINVAL, "bl_tgroup_epoch: NULL group");
    uint8_t all[BL_TGROUP_MAX_TRIALS];
    int n_alive = 0, shrink = 0;
    for (int t = 0; t < g->T; t++) {
        all[t] = alive ? alive[t] != 0 : g->stat[t].alive;
        if (all[t] && !g->stat[t].alive)
            return bl_seterr(err, BL_EINVAL, "trial group: trial %d was stopped and cannot train again", t);
        if (all[t] && g->stat[t].epochs_done != g->epochs)
            return bl_seterr(err, BL_EINVAL, "trial group: trial %d is at epoch %ld, the others at %ld", t,
                             g->stat[t].epochs_done, g->epochs);
        n_alive += all[t];
        shrink |= g->stat[t].alive && !all[t];
    }
    if (n_alive == 0) return bl_seterr(err, BL_EINVAL, "trial group: no trial to train");
    bl_status st;
    if (shrink && (st = retire(g, all, err))) return st;

    const bl_tg_ops *o = g->ops;
    const long e = g->epochs;
    const int k = (int)(e & 1);
    int list[BL_TGROUP_MAX_TRIALS], n_list = 0, masks = 0;
    drawer *d = g->drawer_p;
    for (int t = 0; t < g->T; t++) {
        if (!all[t]) continue;
        if (g->drawn[t] == e) list[n_list++] = t; /* not drawn ahead (first epoch) */
        masks |= g->cfg[t].dropout > 0.0;
    }
    draw_start(g, d, list, n_list, k);
    draw_join(d);
    put_draws(g, k, masks);

    /* the next epoch's draws (they do not depend on results) while this thread drives the epoch; buffer
     * 1 − k was last uploaded in the previous call, which waited for it */
    n_list = 0;
    for (int t = 0; t < g->T; t++)
        if (all[t]) list[n_list++] = t;
    draw_start(g, d, list, n_list, 1 - k);

    /* Adam's bias corrections of this epoch's steps (bl_adam_step's arithmetic) */
    for (long ib = 0; ib < g->nb; ib++) {
        const double t = (double)(g->step + ib + 1);
        g->h_bc[2 * ib] = 1.0 - pow(g->beta1, t);
        g->h_bc[2 * ib + 1] = 1.0 - pow(g->beta2, t);
    }
    o->put(g->ctx, (void *)g->s.bc, g->h_bc, (size_t)g->nb * 2 * sizeof(double));
    const double beta = 1.0 - 1.0 / (double)g->avg_span, ema_w = beta * g->ema_w + (1.0 - beta);
    if (g->s.ema) { /* the average after this epoch (pretrain.c's average_params) */
        g->h_avgk[0] = beta;
        g->h_avgk[1] = 1.0 / ema_w;
        o->put(g->ctx, (void *)g->s.avgk, g->h_avgk, 2 * sizeof(double));
    }

    /* The epoch. With graphs: the group's first epoch runs directly (the device loads the kernels
     * and cuBLAS sets itself up outside any capture); from the second on it is recorded once per set of
     * slots and replayed. The ops are queued exactly once per epoch on every path: recorded only when
     * capture really started (tgroup_ops.h), else run directly. */
    if (g->graphs && o->capture_begin && g->epochs > 0 && g->graph_n != g->s.n) {
        g->graph_n = 0;
        if (o->capture_begin(g->ctx)) {
            run_epoch_ops(g); /* recorded, not run */
            if (o->capture_end(g->ctx)) g->graph_n = g->s.n;
        }
        if (g->graph_n == 0) g->graphs = 0; /* recording failed: launch directly from now on */
    }
    if (g->graphs && g->graph_n > 0 && g->graph_n == g->s.n) o->replay(g->ctx);
    else run_epoch_ops(g);
    g->step += g->nb;
    o->get(g->ctx, g->h_loss, g->s.loss, (size_t)g->s.n * (size_t)g->s.loss_ld * sizeof(double));
    draw_join(d);
    if ((st = o->finish(g->ctx, err))) return st;

    /* bookkeeping, in pretrain.c's arithmetic */
    int any = 0;
    for (int t = 0; t < g->T; t++) {
        const int sl = g->slot_of[t];
        if (sl < 0) continue;
        const double *L = g->h_loss + (size_t)sl * (size_t)g->s.loss_ld;
        double sum = 0.0;
        for (long ib = 0, i0 = 0; i0 < g->n_tr; ib++, i0 += g->batch) {
            const long B = g->n_tr - i0 < g->batch ? g->n_tr - i0 : g->batch;
            sum += L[ib] * (double)B;
        }
        bl_tgroup_stat *s = &g->stat[t];
        s->train_loss = sum / (double)g->n_tr;
        s->epochs_done++;
        double val = g->has_val ? L[g->nb] : s->train_loss;
        if (!isfinite(val)) val = INFINITY;
        s->val_loss = val;
        g->h_keep[sl] = val < s->best_val;
        if (g->h_keep[sl]) {
            s->best_val = val;
            s->best_epoch = s->epochs_done;
            any = 1;
        }
    }
    g->epochs++;
    g->ema_w = ema_w;
    if (any) {
        o->put(g->ctx, (void *)g->s.keep, g->h_keep, (size_t)g->s.n * sizeof(int32_t));
        double *own = g->s.W; /* the best state is the average's, when there is one */
        if (g->s.ema) g->s.W = g->s.avg;
        o->keep_best(g->ctx, &g->s); /* queued; the next finish reports any failure */
        g->s.W = own;
    }
    return BL_OK;
}

void bl_tgroup_stat_get(const bl_tgroup *g, int i, bl_tgroup_stat *st) {
    if (!st) return;
    if (!g || i < 0 || i >= g->T) {
        memset(st, 0, sizeof *st);
        return;
    }
    *st = g->stat[i];
}

static bl_status check_net(const bl_tgroup *g, int i, const bl_bnet *net, bl_error *err) {
    if (!g || !net) return bl_seterr(err, BL_EINVAL, "trial group: NULL argument");
    if (i < 0 || i >= g->T) return bl_seterr(err, BL_EINVAL, "trial group: no trial %d (%d trials)", i, g->T);
    if (memcmp(&net->d, &g->d, sizeof g->d) != 0 || (long)net->P.n != g->s.net.n_params || !net->P.param)
        return bl_seterr(err, BL_EINVAL, "trial group: network dimensions differ from the group's");
    return BL_OK;
}

bl_status bl_tgroup_get_params(bl_tgroup *g, int i, bl_bnet *net, int with_adam, bl_error *err) {
    bl_status st = check_net(g, i, net, err);
    if (st) return st;
    const size_t np = (size_t)g->s.net.n_params;
    const int sl = g->slot_of[i];
    if (sl >= 0) {
        const size_t off = (size_t)sl * (size_t)g->s.net.P;
        g->ops->get(g->ctx, net->P.param, g->s.W + off, np * sizeof(double));
        if (with_adam) {
            g->ops->get(g->ctx, net->P.m, g->s.M + off, np * sizeof(double));
            g->ops->get(g->ctx, net->P.v, g->s.Vm + off, np * sizeof(double));
        }
        if ((st = g->ops->finish(g->ctx, err))) return st;
    } else {
        memcpy(net->P.param, g->hW + (size_t)i * np, np * sizeof(double));
        if (with_adam) {
            memcpy(net->P.m, g->hM + (size_t)i * np, np * sizeof(double));
            memcpy(net->P.v, g->hV + (size_t)i * np, np * sizeof(double));
        }
    }
    if (with_adam)
        for (int v = 0; v < net->P.n_views; v++) net->P.views[v].step = sl >= 0 ? g->step : g->steps[i];
    return BL_OK;
}

bl_status bl_tgroup_get_best(bl_tgroup *g, int i, bl_bnet *net, bl_error *err) {
    bl_status st = check_net(g, i, net, err);
    if (st) return st;
    const size_t np = (size_t)g->s.net.n_params;
    const int sl = g->slot_of[i];
    if (sl < 0) {
        memcpy(net->P.param, g->hBest + (size_t)i * np, np * sizeof(double));
        return BL_OK;
    }
    g->ops->get(g->ctx, net->P.param, g->s.best + (size_t)sl * (size_t)g->s.net.P, np * sizeof(double));
    return g->ops->finish(g->ctx, err);
}
