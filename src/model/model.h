/* model.h — a complete Bellamy model (network + scale-out scaler + encoder settings + property
 * schema + training record), its pre-training with hyper-parameter search, its fine-tuning on a few
 * runs of a new context, prediction, and its HDF5 representation.
 *
 * Pre-training (bl_pretrain): joint loss SmoothL1(runtime) + MSE(reconstruction), Adam, batch 64.
 * A search samples `trials` configurations of dropout × learning rate × weight decay (seeded),
 * holds out a validation set of whole contexts, and runs synchronous successive halving: all
 * trials train to `grace` epochs, the better half (by best validation loss) continues to 2·grace,
 * and so on up to `epochs`. The trial with the lowest validation loss wins and the model keeps its
 * best validation state. Trials run on `threads` threads; each owns its generator, so the result
 * depends on the seed only (not on the thread count).
 *
 * Fine-tuning (bl_finetune): dropout off, everything but z frozen; with n > 1 runs f is unfrozen
 * after ⌊7.5·2ⁿ⌋ epochs. Learning rate: linear ramp 0.001 → 0.01 over the first 10 epochs (the first
 * half of a triangular cycle of 20), then cosine annealing 0.01 → 0.001 restarting every 40 epochs.
 * Stops when the training MAE ≤ stop_mae seconds (or ≤ stop_rel × mean runtime when stop_rel > 0),
 * after `patience` epochs without improvement, or at max_epochs; the best state (by training MAE)
 * is restored. Without pre-training (a fresh model), f and z both train from the start.
 *
 * Targets: by default the network predicts runtime in seconds, as the paper does
 * (target_scaling = BL_TARGET_SECONDS). BL_TARGET_MEAN divides runtimes by the mean runtime of the
 * pre-training rows, so the loss sees values near 1 whatever the job's length. BL_TARGET_LOG trains
 * on ln(runtime / geometric mean), so the loss weighs relative errors (what users judge) and a
 * prediction is target_scale · exp(output); the fine-tuning stop rule still reads seconds.
 *
 * Not here: command-line parsing, printing. Thread safety: a const model may be used for
 * predictions from many threads at once.
 */
#ifndef BL_MODEL_MODEL_H
#define BL_MODEL_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "bellamy/bellamy.h"
#include "bellamy/train.h" /* bl_train_opts: the pre-training options, their bounds and defaults */
#include "data/dataset.h"
#include "encode/encode.h"
#include "nn/bpass.h"
#include "model/guard.h" /* bl_guard: how far a fine-tuned model trusts its network */
#include "model/calib.h" /* bl_model_calib: the errors on held-out contexts that size intervals */

/* The public BL_SCALE_* under the names model/ reads them by. */
typedef enum bl_target_scaling {
    BL_TARGET_SECONDS = BL_SCALE_SECONDS, /* the network predicts seconds (the paper) */
    BL_TARGET_MEAN    = BL_SCALE_MEAN,    /* seconds ÷ the pre-training rows' mean runtime */
    BL_TARGET_LOG     = BL_SCALE_LOG      /* ln(seconds ÷ the rows' geometric-mean runtime): errors become relative */
} bl_target_scaling;

typedef struct bl_model_prop {
    char        *name;
    int          essential;
    bl_prop_kind kind;
} bl_model_prop;

#define BL_MODEL_MEMBERS_MAX BL_TRAIN_MEMBERS_MAX


/* What the pre-training rows held, so that a request can be compared with it (model/seen.h; file
 * group `seen`, format 1.3). Per property (network order) the values with their row counts, most
 * frequent first, at most BL_SEEN_VALUES_MAX of them; a cluster total's values are per machine
 * (total ÷ the row's scale-out), as a context gives them. known = 0: a file written before 1.3. */
#define BL_SEEN_VALUES_MAX 1000

typedef struct bl_model_seen {
    int      known;
    int64_t  rows;
    double   scale_out_min, scale_out_max, runtime_min_s, runtime_max_s;
    size_t   n;             /* entries in prop/value/count */
    uint32_t *prop;         /* [n] property index; entries grouped by property, in property order */
    char    **value;        /* [n] canonical text (numbers in decimal) */
    int64_t  *count;        /* [n] rows with that value */
    int64_t  *distinct;     /* [n_props] distinct values in all (more than kept when > BL_SEEN_VALUES_MAX) */
    int64_t  *per_machine;  /* [n_props] 1: the values are per machine (a cluster total) */
    double   *num_min, *num_max; /* [n_props] a number property's smallest and largest value; NaN for text */
} bl_model_seen;

/* The runs of the last fine-tuning (file group `finetune`, format 1.3): their ranges and the context
 * they are of (its first run's values, per machine for cluster totals; contexts > 1 when the runs
 * spanned several). known = 0: never fine-tuned, or by a library before 0.5. */
typedef struct bl_model_tuned {
    int      known;
    int64_t  runs, contexts;
    double   scale_out_min, scale_out_max, runtime_min_s, runtime_max_s;
    char   **context;       /* [n_props] */
    /* How the fine-tuned model fits its own runs (format 1.4 / 2.2 / 3.1; n_fit = 0 in older files): per run its
     * scale-out, runtime, the fine-tuned model's prediction and the model's before this fine-tuning
     * (s), and the disagreement that widens its intervals (model/calib.h); NaN when unknown. */
    size_t   n_fit;
    double  *fit_x, *fit_y, *fit_pred, *fit_prior;
    double   disagreement;
    int64_t  protocol;      /* bl_finetune_opts_fingerprint of the fine-tuning (0: not recorded) */
    int      held_out;      /* 1: disagreement is the held-out error on the runs (calib.h) */
    char     created[24];   /* ISO 8601 UTC time of the fine-tuning ("": not recorded, before 0.6);
                               the model's own `created` stays the pre-training's */
} bl_model_tuned;

typedef struct bl_model {
    char              *name;          /* model name inside a file (e.g. the algorithm) */
    bl_bnet            net;           /* the network (member 0 of an ensemble) */
    /* An ensemble: n_members networks of the same shape (net, then more[0..n_members-2]), trained by
     * independent searches, fine-tuned alike; a prediction is the median of theirs. 1: net alone. */
    int                n_members;
    bl_bnet           *more;
    double            *member_meta;   /* [n_members × 4]: dropout, learning rate, weight decay, best
                                         validation loss of each member's search (NULL when 1) */
    bl_minmax          scaler;        /* fitted on the pre-training rows' scale-out features */
    double             target_scale;  /* runtime_s = network output × target_scale */
    int                target_scaling;/* bl_target_scaling */
    bl_encode_settings enc;
    size_t             n_props;       /* network order: essential first, then optional */
    bl_model_prop     *props;
    double            *num_range;     /* enc.numbers == BL_ENC_NUMBERS_RANGE: [n_props][2] bounds lo, hi
                                         of each number property's thermometer in log2(1 + value),
                                         fitted on the pre-training rows (text properties: unused);
                                         NULL for the other encodings */
    char              *schema_text;   /* the data-set schema the model was trained with (may be NULL) */
    /* hyper-parameters */
    double dropout, lr, weight_decay;
    /* training record */
    uint64_t data_hash;
    int64_t  rows, contexts, epochs, finetune_epochs, finetune_runs;
    int64_t  val_rows;                /* rows the search validated on; 0: none (one context with the
                                         contexts split), so best_val_loss is the winner's training
                                         loss; −1: unknown (files written before 0.3) */
    int64_t  finetune_steps;          /* Adam steps of the last fine-tuning, all members and cross-
                                         validation folds included (in memory only, not in files) */
    double   best_val_loss, best_train_loss, finetune_mae;
    char     created[32];             /* ISO 8601 UTC */
    int      pretrained;              /* 1 when the weights come from pre-training */
    int64_t *member_epochs;           /* [n_members] epochs of each member's search winner (NULL when 1:
                                         `epochs` alone) */
    bl_model_seen  seen;              /* what the pre-training rows held */
    bl_model_tuned tuned;             /* what the last fine-tuning's runs held */
    bl_guard       guard;             /* how the last fine-tuning weighs the network against Ernest */
    bl_model_calib calib;             /* the pre-training's calibration of intervals (known = 0: none) */
} bl_model;

/* Progress of a running pre-training: the public bl_train_progress, called from worker threads,
 * serialised by the library (never two calls at once). Return non-zero to cancel (bl_pretrain →
 * BL_EINTERNAL with "cancelled"). */
typedef bl_train_progress bl_progress;
typedef bl_train_progress_fn bl_progress_fn;

/* Successive halving keeps the better third of a rung's trials: with the default grace (300) and epochs
 * (2500), 12 trials train 300 epochs, 4 of them go on to 900, 2 to 2500 — 9 200 epochs a search against
 * 19 500 with the earlier reduction 2 and grace 1000. A trial's training does not depend on the schedule,
 * so a search that keeps its winner gives the same model as before, bit for bit; on C3O's full searches
 * most do (bench/README.md, "Pre-training"). */
#define BL_PRETRAIN_REDUCTION_DEFAULT 3

/* The parameters' running average that the validation, the best state, the halving and the winner read
 * (pretrain.c, average_params): an exponential average over about this many epochs; 1: none, the
 * parameters of the best epoch themselves. 1 by default: 50 measured steadier across kernel copies but
 * less accurate on C3O seed 1 (0.058 / 0.109 against 0.050 / 0.097; bench/README.md, "A search that does
 * not hang on rounding"), so it stays an option (bellamy-eval --avg-span). */
#define BL_PRETRAIN_AVG_SPAN_DEFAULT 1

/* Pre-training options: the public bl_train_opts (include/bellamy/train.h: its bounds and defaults,
 * checked by bl_train_opts_check) under model/'s names, plus what only the library's own callers set
 * (reduction, batch, the grid, refit, no_validation, the calibration's fine-tuning, the batched CPU
 * device). bl_pretrain_opts_from is the one translation, bl_pretrain_opts_check the one check. */
typedef struct bl_pretrain_opts {
    int      trials;          /* bl_train_opts.trials */
    long     epochs;          /* bl_train_opts.epochs */
    long     grace;           /* bl_train_opts.grace */
    int      reduction;       /* reduction factor (default BL_PRETRAIN_REDUCTION_DEFAULT, >= 2) */
    int      batch;           /* default 64, 1..2^20 */
    int      avg_span;        /* epochs of the parameters' running average (default
                                 BL_PRETRAIN_AVG_SPAN_DEFAULT = 1: none; 1..1000000) */
    int      threads;         /* bl_train_opts.threads */
    uint64_t seed;            /* bl_train_opts.seed */
    double   val_fraction;    /* bl_train_opts.val_fraction: of the contexts or of each group's rows, by
                                 val_split */
    int      val_split;       /* bl_train_opts.val_split (bl_val_split) */
    int      target_scaling;  /* bl_train_opts.target_scale (bl_target_scaling) */
    double   dropouts[3], lrs[3], wds[3]; /* the grid (defaults from the paper) */
    int      refit;           /* 1: after the search, train the winning configuration again on every
                                 row (validation contexts included) for its best epoch count */
    int      per_row_dropout; /* bl_train_opts.dropout_masks (BL_MASKS_*; bl_bpass.per_row_dropout): 1
                                 dropout masks per row, as a row-by-row network draws them (default;
                                 measured more accurate); 0 per distinct property value within a batch
                                 (faster); 2 encoder masks per row, decoder per value on the undropped code */
    int      device;          /* bl_train_opts.device, or BL_DEVICE_CPU_BATCHED (bl_pretrain_device) */
    int      members;         /* bl_train_opts.members: searches (seeds seed, seed+1, ...; with numbers in
                                 both encodings seed, seed, seed+1, seed+1, ...: members 2i and 2i+1 are
                                 the same search on the data encoded two ways) whose winners form the
                                 model's ensemble */
    int      calibrate;       /* bl_train_opts.calibrate: after the searches, calibrate intervals on the
                                 contexts the members' searches held out (model/calib.h) */
    int      calib_draws;     /* fine-tunings per calibrated context and run count (default 4, 1..64) */
    const struct bl_finetune_opts *calib_ft; /* how the calibration fine-tunes: as the evaluated or the
                                 user's fine-tuning will (NULL, default: bl_finetune_opts_default) */
    bl_progress_fn progress;  /* bl_train_opts.progress */
    void          *progress_ctx;
    int      no_validation;   /* 1: every row trains, none is held out (val_fraction is not read): the
                                 calibration's fold models; default 0 */
    const bl_train_ranks *ranks; /* bl_train_opts.ranks (NULL: this process alone) */
    int      item_base;       /* the work-item number of this search's trial 0 (member × trials): which
                                 rank trains a trial; set by bl_pretrain per member, default 0 */
    int      precision;       /* bl_train_opts.precision (BL_PRECISION_AUTO, _F64 or _F32; bl_pretrain_precision
                                 resolves AUTO by device): the networks' d.f32 (the search's trials, the
                                 model, its members); _F32 on BL_DEVICE_CPU only */
} bl_pretrain_opts;

/* BL_DEVICE_CPU: one trial per thread (`threads`). BL_DEVICE_CUDA: every trial of the search at once
 * on the GPU (nn/tgroup.h; BL_EUNSUPPORTED without the CUDA module or without a device), the
 * same masks and the same arithmetic, so the result matches the CPU's to rounding. BL_DEVICE_CPU_BATCHED:
 * the GPU's algorithm on the CPU (all trials batched; a reference for tests, not fast). */
/* How the search's validation rows are chosen. CONTEXTS: whole contexts (the loss measures transfer
 * to unseen contexts; the winner never trains on them). GROUPS: val_fraction of the rows of every
 * (context, scale-out) group, as the prototype's stratified split does (every context trains; the
 * loss measures the fit to unseen repetitions). */
enum bl_val_split { BL_VAL_CONTEXTS = BL_SPLIT_CONTEXTS, BL_VAL_GROUPS = BL_SPLIT_GROUPS };

enum bl_pretrain_device { BL_DEVICE_CPU = BL_ON_CPU, BL_DEVICE_CUDA = BL_ON_CUDA, BL_DEVICE_CPU_BATCHED = 2 };

typedef struct bl_finetune_opts {
    long   max_epochs;        /* default 2500 */
    long   patience;          /* epochs without improvement before stopping (default 1000) */
    double stop_mae;          /* seconds (default 5) */
    double stop_rel;          /* > 0: stop when MAE ≤ stop_rel × mean runtime instead (default 0) */
    int    stop_cv;           /* 1 (default): with n ≥ 3 runs, each member trains for the step count
                                 (< cv_epochs) that cross-validation over the runs finds best —
                                 leave-one-out, or cv_folds folds with more runs — instead of the
                                 MAE rule and patience; with fewer runs a fold would learn from a
                                 single run, so the MAE rule applies */
    long   cv_epochs;         /* steps stop_cv considers (default 500; at most max_epochs) */
    int    cv_folds;          /* most folds of stop_cv (default 10, ≥ 2) */
    long   fixed_epochs;      /* ≥ 0: exactly this many steps, keeping the last state, no stopping
                                 rule (overrides stop_cv; ≤ max_epochs); default -1. Start from
                                 bl_finetune_opts_default: a zero-filled struct means 0 steps */
    double lr_min, lr_max;    /* 0.001, 0.01 */
    int    ramp_epochs;       /* 10 */
    int    cosine_epochs;     /* 40 */
    double weight_decay;      /* Adam's coupled weight decay; < 0: the pre-trained model's (default 0) */
    int    unfreeze_f;        /* 0: f stays frozen; 1: unfreeze f after ⌊7.5·2ⁿ⌋ epochs when n > 1
                                 (the paper, default); 2: f trains from the first epoch */
    uint64_t seed;            /* for a fresh model's initialisation (default 1) */
    int    guard;             /* 1 (default): weigh the tuned network against Ernest fitted to the runs
                                 (bl_guard, guard.c); 0: the network alone */
} bl_finetune_opts;

/* The public defaults (include/bellamy/train.h's BL_TRAIN_*_DEFAULT; bl_train_opts_init's). */
void bl_train_opts_default(bl_train_opts *t);
/* bl_pretrain_opts_from(o, &t) with t from bl_train_opts_default: the public defaults, the paper's grid. */
void bl_pretrain_opts_default(bl_pretrain_opts *o);
/* Options pre-training with the public t (already checked by bl_train_opts_check) runs with. */
void bl_pretrain_opts_from(bl_pretrain_opts *o, const bl_train_opts *t);
/* The bounds of include/bellamy/train.h on every field (o's full size: a caller's shorter struct is
 * copied over the defaults first, api/train.c), without the CUDA probe: BL_EINVAL naming the field. */
bl_status bl_train_opts_bounds(const bl_train_opts *o, bl_error *err);
/* The same bounds on the fields o shares with bl_train_opts, and the extension's own: the check of
 * bl_pretrain and bl_pretrain_top (the library's own callers: tests, bench, the calibration). */
bl_status bl_pretrain_opts_check(const bl_pretrain_opts *o, bl_error *err);
void bl_finetune_opts_default(bl_finetune_opts *o);
/* A fingerprint of what decides a fine-tuning's outcome (not its seed): the calibration records the one
 * it fine-tuned with, a fine-tuned model its own, so that intervals can say when they were calibrated
 * for another protocol. Never 0. */
int64_t bl_finetune_opts_fingerprint(const bl_finetune_opts *o);

/* Pre-trains a new model on every row of ds (schema_text, may be NULL, is stored with it). */
bl_status bl_pretrain(const bl_dataset *ds, const char *schema_text, const bl_pretrain_opts *o,
                      bl_model **out, bl_error *err);

/* The same search, keeping the k best trials (by validation loss) as k models: outs[0] is the
 * model bl_pretrain returns, outs[1..k) the runners-up in order, each in its best validation state
 * (k ≤ trials). On failure every outs[i] is NULL. */
bl_status bl_pretrain_top(const bl_dataset *ds, const char *schema_text, const bl_pretrain_opts *o,
                          int k, bl_model **outs, bl_error *err);
/* n searches run side by side, search j on ds[j] with o[j] (the same schedule: trials, epochs, grace,
 * reduction, device, threads), rung by rung: outs[j·k .. j·k+k) the k best of search j. The same models as
 * n calls of bl_pretrain_top, sooner on several threads or ranks. */
bl_status bl_pretrain_searches(const bl_dataset *const *ds, const char *schema_text, const bl_pretrain_opts *o,
                               int n, int k, bl_model **outs, bl_error *err);

/* A fresh, untrained model for ds's properties (for training from scratch): weights drawn from
 * seed, scaler fitted on ds's rows, target scale from ds's runtimes. */
bl_status bl_model_new_untrained(const bl_dataset *ds, const char *schema_text, int target_scaling,
                                 uint64_t seed, bl_model **out, bl_error *err);

/* Fine-tunes a copy of m on rows[0..n) of runs (rows NULL: every row). runs must carry every
 * property of the model (matched by name). *out receives the new model. */
bl_status bl_finetune(const bl_model *m, const bl_dataset *runs, const size_t *rows, size_t n,
                      const bl_finetune_opts *o, bl_model **out, bl_error *err);

bl_status bl_model_clone(const bl_model *m, bl_model **out, bl_error *err);
void bl_model_free(bl_model *m);

/* The model's precision (BL_PRECISION_F64 or _F32): m->net.d.f32, which every network made with its
 * dims inherits. bl_model_set_precision sets it on every member (a clone and a fine-tuned copy keep it). */
static inline int bl_model_precision(const bl_model *m) { return m->net.d.f32 ? BL_PRECISION_F32 : BL_PRECISION_F64; }
/* The precision a search with these options computes in: o->precision, with BL_PRECISION_AUTO float32 on
 * the CPU's threads and float64 on the trial groups (CUDA, batched CPU), which compute in float64 only. */
static inline int bl_pretrain_precision(const bl_pretrain_opts *o) {
    return o->precision != BL_PRECISION_AUTO ? o->precision
         : o->device == BL_DEVICE_CPU        ? BL_PRECISION_F32
                                             : BL_PRECISION_F64;
}
void bl_model_set_precision(bl_model *m, int precision);
/* A float32 model's parameters rounded to float32 values (its file stores them so), where training left
 * them in float64: the model then predicts in memory exactly as after a save and a load. Float64: nothing. */
void bl_model_round_params(bl_model *m);

/* The encoding (BL_ENC_NUMBERS_BINARY, _LOG or _RANGE) in which member mi reads number properties:
 * enc.numbers, or with BL_ENC_NUMBERS_BOTH binary for even members and log for odd ones. */
static inline uint32_t bl_model_member_numbers(const bl_model *m, int mi) {
    return m->enc.numbers == BL_ENC_NUMBERS_BOTH ? ((mi & 1) ? BL_ENC_NUMBERS_LOG : BL_ENC_NUMBERS_BINARY)
                                                 : m->enc.numbers;
}

/* Member i of the ensemble (0 ≤ i < n_members). */
static inline bl_bnet *bl_model_member(bl_model *m, int i) { return i == 0 ? &m->net : &m->more[i - 1]; }
static inline const bl_bnet *bl_model_member_c(const bl_model *m, int i) {
    return i == 0 ? &m->net : &m->more[i - 1];
}
/* Appends the networks of others[0..k) (same shapes and properties as m) as members of m. */
bl_status bl_model_add_members(bl_model *m, const bl_model *const *others, int k, bl_error *err);
/* Doubles a context term takes (bl_model_context): n_members × z_hidden (≤ BL_BNET_DIM_MAX). */
size_t bl_model_ctx_len(const bl_model *m);

/* Index of the property called name, or -1. */
long bl_model_find_prop(const bl_model *m, const char *name);

/* The constant part of a context: `values[i]` is the text value of property i (network order);
 * NULL for an absent optional property (essential ones are required). ctx: [bl_model_ctx_len(m)]
 * (each member's term in turn). One call of the bl_model_ctx steps below. */
bl_status bl_model_context(const bl_model *m, const char *const *values, double *ctx, bl_error *err);

/* A context prepared for prediction: every property's code for every member, so that a scale-out
 * re-encodes only the numbers that vary with it (cluster totals given per machine) and the rest is
 * encoded once. One per request (its caller's, never shared between threads). */
typedef struct bl_model_ctx {
    const bl_model *m;
    double         *codes;   /* [n_members][n_props][code] */
    double         *opt;     /* [n_props][code] the optional codes present, gathered for a term */
    unsigned char  *present; /* [n_props] 1: the property has a value */
} bl_model_ctx;

/* Encodes values[i] (as bl_model_context; e made from m->enc) for every property but those with
 * later[i] = 1 (later may be NULL), which bl_model_ctx_number sets before each term. Errors: a value
 * the encoder refuses, an essential property without a value. Free with bl_model_ctx_free. */
bl_status bl_model_ctx_init(bl_model_ctx *c, const bl_model *m, const bl_encoder *e, const char *const *values,
                            const unsigned char *later, bl_error *err);
/* Number property i takes value v: what the text "%.0f" of v encodes to, without printing it (the
 * text is made, and names the fault, only when the encoder refuses v). */
bl_status bl_model_ctx_number(bl_model_ctx *c, const bl_encoder *e, size_t i, double v, bl_error *err);
/* The context term of the values set: ctx [bl_model_ctx_len(m)]. */
void bl_model_ctx_term(bl_model_ctx *c, double *ctx);
void bl_model_ctx_free(bl_model_ctx *c);

/* Same from row r of a data set whose properties are matched by name. */
bl_status bl_model_context_row(const bl_model *m, const bl_dataset *ds, size_t r, double *ctx,
                               bl_error *err);
/* Runtimes in seconds at scale-outs x[0..n) (each > 0) for a context term; with several members the
 * median of the members' runtimes (the mean of the middle two for an even count). */
bl_status bl_model_predict(const bl_model *m, const double *ctx, const double *x, size_t n, double *out,
                           bl_error *err);
/* The same for scale-outs the caller checked (each > 0 and finite). */
void bl_model_predict_at(const bl_model *m, const double *ctx, const double *x, size_t n, double *out);
/* The network's output y in seconds (the target's scaling undone), and the same in place for y[0..n)
 * at scale-outs x[0..n) with the guard applied (what a prediction returns before bl_model_finish). */
double bl_model_seconds(const bl_model *m, double y);
void bl_model_to_seconds(const bl_model *m, const double *x, double *y, size_t n);

/* HDF5: save (adds or replaces the model `m->name` in path, atomically), load (name NULL: the only one). */
bl_status bl_model_save(const bl_model *m, const char *path, bl_error *err);
bl_status bl_model_load(const char *path, const char *name, bl_model **out, bl_error *err);
/* The same with flags of bl_mf_load_ex (BL_MF_ALLOW_UNSTAMPED: a file without a
 * checksum header loads, unverified). */
bl_status bl_model_load_ex(const char *path, const char *name, unsigned flags, bl_model **out, bl_error *err);
typedef struct bl_modelrec bl_modelrec; /* modelfile/modelfile.h */
/* A model from a record read from a file: every shape, enum, bound and count checked (what a save
 * cannot produce is BL_EFORMAT naming the model and the attribute or block). */
bl_status bl_model_from_record(const bl_modelrec *rec, bl_model **out, bl_error *err);

#endif /* BL_MODEL_MODEL_H */
