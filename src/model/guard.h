/* guard.h — how far a fine-tuned model trusts its network against Ernest fitted to its runs: the
 * decision from the runs alone (their scale-outs and runtimes, and what the pre-trained model predicted
 * for them), the blend a prediction applies, and the guard's place in a model record. The model
 * gathers the runs (model_internal.h: bl_guard_decide, bl_guard_rescale); this knows no model. */
#ifndef BL_MODEL_GUARD_H
#define BL_MODEL_GUARD_H

#include <stddef.h>

#include "bellamy/bellamy.h"

/* A prediction of a guarded model is
 *   (1 − ernest_w) · network(x) + ernest_w · (θ0 + θ1/x + θ2·ln x + θ3·x)
 * with Ernest's θ fitted on the fine-tuning runs. ernest_w is 0 (the network alone) until a
 * fine-tuning decides otherwise. */
enum bl_guard_method { BL_GUARD_NETWORK = 0, BL_GUARD_BLEND = 1, BL_GUARD_ERNEST = 2 };
typedef struct bl_guard {
    double ernest_w;                  /* 0..1 */
    double theta[4];                  /* Ernest's θ0..θ3 in seconds */
    int    method;                    /* bl_guard_method, from ernest_w */
    char   why[768];                  /* how the weight was found ("" for the network alone by default) */
} bl_guard;

/* The runs a guard is decided on. */
typedef struct bl_guard_runs {
    size_t        n;
    const double *x, *y;   /* [n] scale-outs (machines) and runtimes (s) */
    const double *prior;   /* [n] the model before this fine-tuning at each run, in the run's own context (s);
                              NaN where it could not predict */
    double        lo, hi;  /* the scale-outs of the pre-training rows */
} bl_guard_runs;

void bl_guard_reset(bl_guard *g);
/* The prediction at scale-out x from the network's net (seconds). */
double bl_guard_apply(const bl_guard *g, double x, double net);
/* Decides g from the runs. net_loo [n]: the network's held-out prediction of each run over `folds`
 * folds (run i in fold i % folds), or NULL. */
bl_status bl_guard_weigh(bl_guard *g, const bl_guard_runs *r, const double *net_loo, size_t folds, bl_error *err);
/* How the guarded model misses runs it did not see: the root-mean-square ln(runtime / prediction) over the
 * n runs, each predicted by the blend of the network's held-out prediction net_loo[i] (folds as in
 * bl_guard_weigh) and Ernest fitted without run i's fold, with g's weight. NaN when there is none
 * (fewer than 3 runs or 2 folds, no net_loo, a prediction that is not a positive number). */
double bl_guard_loo_log_error(const bl_guard *g, const double *x, const double *y, size_t n, const double *net_loo,
                              size_t folds);

/* Ernest alone for a fine-tuning whose network cannot predict its own runs (reason: how it missed them,
 * for g->why): 1 when Ernest fitted to the runs (two scale-outs or more) predicts each within a factor
 * `within`, and g then holds it (weight 1); 0 otherwise, g untouched. */
int bl_guard_ernest_alone(bl_guard *g, const bl_guard_runs *r, double within, const char *reason);

/* The factor for the output scale before fine-tuning on runs that reach outside the pre-training
 * scale-outs: the prior's curve, scaled by it, passes through the runs' geometric mean (a job of another
 * runtime scale is then a matter of shape, which fine-tuning can learn from a few runs); 1 for runs
 * inside, or when the prior cannot predict them. */
double bl_guard_scale(const bl_guard_runs *r);
/* The guard in a model record (group "guard"), and back; a record without one is the network alone. */
struct bl_modelrec;
bl_status bl_guard_save(const bl_guard *g, struct bl_modelrec *rec, bl_error *err);
bl_status bl_guard_load(bl_guard *g, const struct bl_modelrec *rec, bl_error *err);

#endif /* BL_MODEL_GUARD_H */
