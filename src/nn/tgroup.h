/* tgroup.h — a trial group: T trials of one network shape trained in lockstep, every trial its own
 * configuration (learning rate, weight decay, dropout) and random generator, all of them together as
 * batched operations over trials (on the CPU, or on a CUDA GPU with cuBLAS).
 *
 * It reproduces pretrain.c's per-trial training: per epoch each trial draws a Fisher–Yates shuffle of
 * its persistent row order and then, batch after batch, its AlphaDropout masks in exactly the order
 * bl_bnet_pass draws them (per_row_dropout 0, 1 or 2), takes an Adam step per batch, computes its
 * validation loss in evaluation mode (pretrain.c's full_loss) and keeps the parameters of its best
 * validation epoch. Random numbers are drawn on the host (bl_rng), so a trial's masks are the same
 * whichever device trains it; results agree with the per-trial path to rounding (tests/test_tgroup.c).
 *
 * Where the arithmetic happens (see tgroup_ops.h): every parameter of every trial lives in one
 * [T × P] block (a trial's P in bl_bnet's bl_params layout), Adam moments likewise; the training and
 * validation tables are uploaded once; per epoch only the shuffles and masks go up and the losses come
 * back. Alive trials are kept in consecutive slots, so a trial that is stopped costs nothing.
 *
 * Successive halving drives it like this (pretrain.c): every epoch call trains the trials marked in
 * `alive`; a trial, once left out, never comes back (its state is kept on the host).
 * Not here: the search grid, halving decisions, files, threads over trials (the group is one stream).
 */
#ifndef BL_NN_TGROUP_H
#define BL_NN_TGROUP_H

#include <stdint.h>

#include "nn/bpass.h"
#include "nn/device.h"

#define BL_TGROUP_MAX_TRIALS 1024

/* One trial's configuration. Its generator is seeded with `seed` and its initial parameters drawn from
 * it with bl_bnet_init, as pretrain.c does for trial i with seed = o->seed·0x9E3779B97F4A7C15 + i + 1. */
typedef struct bl_tgroup_trial {
    double   lr, wd, dropout;   /* Adam learning rate, Adam (coupled) weight decay, AlphaDropout p */
    uint64_t seed;
} bl_tgroup_trial;

typedef struct bl_tgroup_opts {
    int batch;             /* rows per minibatch, ≥ 1 (pretrain's o->batch; the last batch is smaller) */
    int per_row_dropout;   /* 0, 1 (default), 2: bl_bpass.per_row_dropout */
    int device;            /* a batched device of the registry (device.h): BL_NN_CPU_BATCHED or BL_NN_CUDA */
    int threads;           /* host threads drawing shuffles and masks, ≥ 1; they draw the next epoch
                              while the calling thread drives the current one */
    int graphs;            /* CUDA: 1 records an epoch's launches once as a CUDA graph and replays it,
                              from the second epoch on (the first runs directly, so lazy initialisation
                              happens outside capture); re-recorded when trials stop; falls back to
                              direct launches if recording fails. Ignored on the CPU. */
    int avg_span;          /* the parameters' running average that validation and the best state read
                              (pretrain.c's average_params), over ~avg_span epochs; 1: none */
} bl_tgroup_opts;

/* batch 64, per_row_dropout 1, BL_NN_CPU_BATCHED, 1 thread, no graphs, no average */
void bl_tgroup_opts_default(bl_tgroup_opts *o);

typedef struct bl_tgroup bl_tgroup;

/* What a trial has done so far. */
typedef struct bl_tgroup_stat {
    int    alive;          /* 1 while it trains */
    long   epochs_done;
    double train_loss;     /* mean training loss of its last epoch (pretrain's last_train) */
    double val_loss;       /* validation loss after its last epoch (not finite → INFINITY); without
                              a validation view, train_loss */
    double best_val;       /* lowest val_loss so far (INFINITY before the first epoch) */
    long   best_epoch;     /* epochs_done when best_val was reached (0: none yet) */
} bl_tgroup_stat;

/* A group of T trials (1..BL_TGROUP_MAX_TRIALS) of network dims d on the rows of `train`, validated on
 * `val` (NULL: no validation, the training loss stands in as pretrain.c does). The views' tables are
 * copied; the views may be freed afterwards. BL_EINVAL: bad arguments (the message says which);
 * BL_EUNSUPPORTED: a device this machine cannot run (bl_nn_device_check says why). */
bl_status bl_tgroup_new(const bl_bnet_dims *d, const bl_bview *train, const bl_bview *val, int T,
                        const bl_tgroup_trial *cfg, const bl_tgroup_opts *o, bl_tgroup **out, bl_error *err);
void bl_tgroup_free(bl_tgroup *g);

/* The same on a given table of ops (tgroup_ops.h) instead of o->device's; for tests. */
struct bl_tg_ops;
bl_status bl_tgroup_new_ops(const struct bl_tg_ops *ops, const bl_bnet_dims *d, const bl_bview *train,
                            const bl_bview *val, int T, const bl_tgroup_trial *cfg, const bl_tgroup_opts *o,
                            bl_tgroup **out, bl_error *err);

int bl_tgroup_trials(const bl_tgroup *g);
/* "cpu" or "cuda". */
const char *bl_tgroup_device_name(const bl_tgroup *g);
/* 1 when the last epoch replayed a recorded CUDA graph (opts.graphs and recording worked). */
int bl_tgroup_graphs(const bl_tgroup *g);

/* Replaces trial i's initial parameters (net's, same dims) and, when rng is not NULL, its generator
 * state (the state after drawing those parameters). Only before the first epoch (BL_EINVAL after). */
bl_status bl_tgroup_set_trial(bl_tgroup *g, int i, const bl_bnet *net, const bl_rng *rng, bl_error *err);

/* One epoch of every trial with alive[i] != 0 (alive NULL: every trial still alive), then each one's
 * validation loss and best-state bookkeeping. Trials left out stop for good (BL_EINVAL if one comes
 * back); every alive trial must have trained the same number of epochs (true when trials only stop).
 * On an error the group is no longer usable (free it). */
bl_status bl_tgroup_epoch(bl_tgroup *g, const uint8_t *alive, bl_error *err);

void bl_tgroup_stat_get(const bl_tgroup *g, int i, bl_tgroup_stat *st);

/* Trial i's current parameters (with_adam: also Adam's moments and step counts) into net, which must
 * have the group's dims (bl_bnet_init). BL_EINVAL: bad index or dims. */
bl_status bl_tgroup_get_params(bl_tgroup *g, int i, bl_bnet *net, int with_adam, bl_error *err);
/* Trial i's parameters at its best validation epoch (its initial parameters before any epoch). */
bl_status bl_tgroup_get_best(bl_tgroup *g, int i, bl_bnet *net, bl_error *err);

#endif /* BL_NN_TGROUP_H */
