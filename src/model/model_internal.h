/* model_internal.h — pieces shared by model.c, pretrain.c and modelio.c; not part of any API. */
#ifndef BL_MODEL_MODEL_INTERNAL_H
#define BL_MODEL_MODEL_INTERNAL_H

#include "model/model.h"
#include "nn/adam.h"
#include "nn/act.h"

/* A view over rows of a data set, with the tables it owns (bpass.h's bl_bview points into them). */
typedef struct bl_vbuf {
    bl_bview v;
    uint32_t *sx, *val;
    double *target, *sx_feat, *sx_value;
    size_t *n_vals;
    const double **vecs;
    double *own;      /* range-encoded number properties: their value tables re-encoded over the
                         model's bounds (vecs points here for those) */
} bl_vbuf;

/* Rows rows[0..n) (rows NULL: 0..n-1) of ds, properties matched to m's by name, as member 0 reads
 * them (bl_vbuf_build) or member mi (numbers in that member's encoding). */
bl_status bl_vbuf_build(const bl_model *m, const bl_dataset *ds, const size_t *rows, size_t n,
                        bl_vbuf *b, bl_error *err);
bl_status bl_vbuf_build_member(const bl_model *m, int mi, const bl_dataset *ds, const size_t *rows, size_t n,
                               bl_vbuf *b, bl_error *err);
void bl_vbuf_free(bl_vbuf *b);

/* map[i] = index in ds of model property i; errors name the data set and the property. */
bl_status bl_model_map_props(const bl_model *m, const bl_dataset *ds, size_t *map, bl_error *err);

/* A model with the given properties (reordered essential first) and a network drawn from rng. */
bl_status bl_model_alloc(const bl_model_prop *props, size_t n_props, const bl_encode_settings *enc,
                         const char *schema_text, bl_rng *rng, bl_model **out, bl_error *err);
bl_status bl_model_from_dataset(const bl_dataset *ds, const char *schema_text, bl_rng *rng,
                                bl_model **out, bl_error *err);
bl_status bl_model_fit_scalers(bl_model *m, const bl_dataset *ds, int target_scaling, bl_error *err);
/* The vector member mi reads for model property i in row r of ds (ds's property j = map[i]): ds's
 * own, or for a number the model encodes itself (bounds: BL_ENC_NUMBERS_RANGE; members in two
 * encodings: _BOTH) the value encoded into buf [vec_len]. */
const double *bl_model_row_vec(const bl_model *m, int mi, size_t i, const bl_dataset *ds, size_t j, size_t r,
                               double *buf);
void bl_model_stamp_now(bl_model *m);

/* Fine-tuning learning rate at an epoch (ramp, then cosine restarts). */
double bl_finetune_lr(const bl_finetune_opts *o, long epoch);

/* The search's validation split of ds by o->val_split and o->val_fraction (none with o->no_validation),
 * drawn from rng: the row indices of each side in ascending order (tr_rows and va_rows hold ds->n_rows
 * each). */
bl_status bl_pretrain_split(const bl_dataset *ds, const bl_pretrain_opts *o, bl_rng *rng, size_t *tr_rows,
                            size_t *n_tr, size_t *va_rows, size_t *n_va, bl_error *err);

/* The epochs every trial of one search will train (the successive-halving plan), for a progress ETA. */
long bl_pretrain_planned_epochs(const bl_pretrain_opts *o);

/* Ranks (bl_train_ranks, o->ranks): whether o spreads work over several, whether this rank computes work
 * item first+i, and the exchange of n records of the items first.. (each filled by its owner) so that
 * every rank holds all of them (BL_EIO naming the exchange's message when it fails). */
int bl_ranks_multi(const bl_pretrain_opts *o);
int bl_ranks_mine(const bl_pretrain_opts *o, size_t first, size_t i);
bl_status bl_ranks_gather(const bl_pretrain_opts *o, void *recs, size_t first, size_t n, size_t rec_size,
                          const char *what, bl_error *err);

/* The guard (guard.h), as fine-tuning uses it (model.c gathers the runs and the prior's predictions).
 * Decides c->guard from the n runs (rows of runs; NULL: every row) c was fine-tuned on. prior: the
 * model before this fine-tuning. net_loo [n]: the network's held-out prediction of each run over
 * `folds` folds (run i in fold i % folds), or NULL. */
bl_status bl_guard_decide(bl_model *c, const bl_model *prior, const bl_dataset *runs, const size_t *rows, size_t n,
                          const double *net_loo, size_t folds, bl_error *err);
/* Before fine-tuning c (a copy of prior) on runs that reach outside the pre-training scale-outs: the
 * output scale multiplied by bl_guard_scale's factor. */
bl_status bl_guard_rescale(bl_model *c, const bl_model *prior, const bl_dataset *runs, const size_t *rows, size_t n,
                           bl_error *err);

#endif
