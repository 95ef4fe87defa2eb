/* bellamy.h — the public face of libbellamy: runtime prediction for distributed dataflow jobs.
 *
 * Every function returns a bl_status; BL_OK is 0. Functions that can fail take an optional
 * bl_error* (may be NULL) that receives a one-line, human-readable message naming what is wrong.
 * The library never prints, never exits and never aborts on bad input.
 * Opaque handles come in open/free pairs; every *_free accepts NULL.
 */
#ifndef BELLAMY_BELLAMY_H
#define BELLAMY_BELLAMY_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#  define BL_API __declspec(dllexport)
#elif defined(__GNUC__)
#  define BL_API __attribute__((visibility("default")))
#else
#  define BL_API
#endif

/* Status codes: X(name, value, message). One list drives the enum and bl_status_string(). */
#define BL_STATUS_LIST(X)                                                     \
    X(BL_OK,           0, "success")                                          \
    X(BL_EINVAL,      -1, "invalid argument")                                 \
    X(BL_ENOMEM,      -2, "out of memory")                                    \
    X(BL_EIO,         -3, "input/output error")                               \
    X(BL_EFORMAT,     -4, "malformed input")                                  \
    X(BL_EVERSION,    -5, "unsupported format version")                       \
    X(BL_ENOTFOUND,   -6, "not found")                                        \
    X(BL_EUNSUPPORTED,-7, "not supported in this build or on this machine")   \
    X(BL_ERANGE,      -8, "value out of range")                               \
    X(BL_EINTERNAL,   -9, "internal error")

typedef enum bl_status {
#define BL_X_ENUM(name, value, msg) name = value,
    BL_STATUS_LIST(BL_X_ENUM)
#undef BL_X_ENUM
} bl_status;

/* Detailed error: the status and a message such as "runs.tsv:14: column 'gross_runtime': not a number". */
typedef struct bl_error {
    bl_status status;
    char      message[512];
} bl_error;

/* Static string for a status code ("invalid argument"); never NULL. */
BL_API const char *bl_status_string(bl_status status);

/* Library version as "MAJOR.MINOR.PATCH". */
BL_API const char *bl_version(void);

/* The copy of the compute kernels in use: "generic" (portable C), "avx2" or "avx512" — the best this
 * processor runs, capped by the environment variable BELLAMY_CPU=generic|avx2|avx512 (read once, at the
 * library's first use). bl_cpu_kernels_available() ignores the cap. Results agree between copies to
 * rounding (about 1e-15 relative). */
BL_API const char *bl_cpu_kernels(void);
BL_API const char *bl_cpu_kernels_available(void);
/* BL_OK, or BL_EINVAL naming a BELLAMY_CPU value that is none of generic, avx2, avx512 (the library then
 * runs the generic copy, and bl_model_file_open and pre-training refuse to start). */
BL_API bl_status bl_cpu_kernels_check(bl_error *err);

/* ==== Models and predictions ==================================================================
 *
 * A model file (HDF5, layout in models/README.md) holds one or more named Bellamy models, e.g. one
 * per algorithm. A bl_predictor is one loaded model: it predicts the runtime of a job in a given
 * CONTEXT (the job's property values: machine type, input size, job arguments, ...) at any
 * scale-out, chooses a scale-out, and can be fine-tuned on a few runs of a new context.
 *
 * Contexts are given as name/value pairs (bl_prop_value), values as text: "c4.2xlarge", "15150".
 * Every essential property of the model must be given (unless the model knows its value: see
 * bl_predictor_prop_default), optional ones may be left out, an unknown name (the message suggests
 * the closest) or a repeated one is an error, a number property needs a natural number in decimal.
 * Cluster-total properties (a schema's per_machine sources and cluster_totals columns, such as the
 * cluster's memory or slots) are given PER MACHINE: the library multiplies the value by the
 * scale-out of each prediction or run, the way the training data were recorded (a model trained
 * with totals encoded per machine, `bellamy-train pretrain --totals per-machine`, uses the value
 * as given).
 *
 * Thread safety: a bl_predictor is never changed after it is made (fine-tuning returns a new one),
 * so any number of threads may call bl_predict, bl_predict_interval, bl_choose_scale_out and the
 * bl_predictor_* getters (bl_predictor_calibration, _finetune_fit and the others) on one predictor at
 * once. Loading, fine-tuning and saving may run in other threads at the same
 * time (HDF5 access is serialised inside the library). Freeing must wait until the others are done.
 * ============================================================================================== */

/* ---- model files ---------------------------------------------------------------------------- */

typedef struct bl_model_file bl_model_file;   /* an opened model file: the names of its models */
typedef struct bl_predictor bl_predictor;     /* one model, ready to predict; immutable */

/* Opens a model file and reads the list of its models. BL_EIO when it cannot be read, BL_EFORMAT
 * when it is not a Bellamy model file, BL_EVERSION when it was written by a newer major version.
 * Model files may come from anyone (models/README.md, "Threat model"): a file is checked against its
 * checksum header before anything parses it, and HDF5 parses it only in a helper process
 * (bellamy-model-reader, installed under libexec; BELLAMY_LOADER overrides its path), so a damaged or
 * crafted file that crashes, hangs or exhausts HDF5 is BL_EFORMAT naming the file, never a crash of
 * the caller. A file without a checksum header (written before 0.4.1 or by another program) is
 * BL_EFORMAT naming the remedy, unless BELLAMY_MODEL_ALLOW_UNSTAMPED=1 is set or the flag below is
 * given. A missing helper is BL_EUNSUPPORTED naming where it was looked for. Every load does the same. */
BL_API bl_status bl_model_file_open(const char *path, bl_model_file **out, bl_error *err);

/* Flags of bl_model_file_open_ex. */
#define BL_LOAD_ALLOW_UNSTAMPED 1u /* load a file without a checksum header, unverified (its weights may
                                      not be the ones written); for old files from a trusted source */

/* bl_model_file_open with flags (0: the same); bl_model_file_load on the handle uses them too. */
BL_API bl_status bl_model_file_open_ex(const char *path, unsigned flags, bl_model_file **out, bl_error *err);
BL_API void bl_model_file_free(bl_model_file *f);
/* Number of models in the file, and the name of model i (NULL when i is out of range). */
BL_API size_t bl_model_file_count(const bl_model_file *f);
BL_API const char *bl_model_file_name(const bl_model_file *f, size_t i);
/* Loads model `name` of the opened file (NULL: the file's only model). */
BL_API bl_status bl_model_file_load(const bl_model_file *f, const char *name, bl_predictor **out,
                                    bl_error *err);

/* ---- predictors ----------------------------------------------------------------------------- */

/* One property value of a context. */
typedef struct bl_prop_value {
    const char *name;                         /* e.g. "machine_type" */
    const char *value;                        /* e.g. "c4.2xlarge" */
} bl_prop_value;

/* What the model knows about one of its properties. Strings live as long as the predictor. */
typedef struct bl_prop_info {
    const char *name;
    int essential;                            /* 1: must be given; 0: optional */
    int number;                               /* 1: a natural number; 0: text */
    int cluster_total;                        /* 1: given per machine, multiplied by the scale-out */
} bl_prop_info;

/* Loads model `name` from the file at path (NULL: the file's only model; BL_EINVAL if it holds
 * several, BL_ENOTFOUND if no model has that name — the message lists the models present). */
BL_API bl_status bl_predictor_load(const char *path, const char *name, bl_predictor **out, bl_error *err);
BL_API void bl_predictor_free(bl_predictor *p);

/* The model's name, and its properties (essential first). bl_predictor_prop: BL_ERANGE for i ≥ count. */
BL_API const char *bl_predictor_name(const bl_predictor *p);
BL_API size_t bl_predictor_prop_count(const bl_predictor *p);
BL_API bl_status bl_predictor_prop(const bl_predictor *p, size_t i, bl_prop_info *info);

/* Where a model comes from. Strings live as long as the predictor. */
typedef struct bl_model_info {
    int         pretrained;      /* 1: weights from pre-training (0: trained from scratch) */
    long long   rows, contexts;  /* pre-training data */
    long long   epochs;          /* pre-training epochs of the winning trial */
    long long   finetune_runs;   /* runs of the last fine-tuning; 0 when never fine-tuned */
    long long   finetune_epochs; /* its length: epochs of the longest member's fit on all runs (with
                                    cross-validation the chosen count, which may be 0) */
    double      best_val_loss;   /* pre-training */
    double      finetune_mae_s;  /* training mean absolute error after fine-tuning (s) */
    double      dropout, learning_rate, weight_decay;
    const char *created;         /* ISO 8601 UTC: when it was pre-trained (before 0.6 a fine-tuning
                                    rewrote it: then the last fine-tuning's) */
    int         members;         /* networks in the ensemble (their median is the prediction); 1: one */
    const char *finetune_created;/* ISO 8601 UTC of the last fine-tuning; "" when never fine-tuned or
                                    not recorded (before 0.6) (0.6) */
} bl_model_info;

BL_API bl_status bl_predictor_info(const bl_predictor *p, bl_model_info *info);

/* Checks a context without predicting (the same errors bl_predict reports for it). */
BL_API bl_status bl_predictor_check_context(const bl_predictor *p, const bl_prop_value *ctx, size_t n_ctx,
                                            bl_error *err);

/* Predicted runtimes in seconds: runtimes_s[i] for scale_outs[i], i < n (each scale-out finite, > 0).
 * Every runtime returned is > 0: outside the scale-outs the model and its runs know (the pre-training's
 * and the fine-tuning runs' together) a prediction falls no faster than linear scaling from the nearest
 * one known (a network's linear output would otherwise cross 0). BL_ERANGE when a prediction is not a
 * positive finite number even so (a scale-out far outside the model's range, a damaged model). */
BL_API bl_status bl_predict(const bl_predictor *p, const bl_prop_value *ctx, size_t n_ctx,
                            const double *scale_outs, size_t n, double *runtimes_s, bl_error *err);

/* Same for every integer scale-out first, first+1, ..., last (1 ≤ first ≤ last); runtimes_s holds
 * last − first + 1 values. */
BL_API bl_status bl_predict_range(const bl_predictor *p, const bl_prop_value *ctx, size_t n_ctx,
                                  int first, int last, double *runtimes_s, bl_error *err);

/* ---- what the model knows, and warnings about a request (0.5) -------------------------------
 *
 * A model file written by libbellamy 0.5 or later records what its pre-training rows held (each
 * property's values with their row counts, the ranges of numbers, scale-outs and runtimes) and what
 * the runs of its last fine-tuning held (their ranges, and the context they were of). Older files
 * lack these records: they load and predict as before, and give fewer warnings (only the
 * pre-training scale-out range is known for them, from the scaler).
 *
 * Properties a context leaves out are FILLED where the model knows the value: a constant of the
 * schema stored in the model (its `const` and `per_machine` sources; per_machine values are per
 * machine, as a context gives them), or, for an optional property, the one value every pre-training
 * row had; a model fine-tuned on runs of one context fills such a property with that context's value
 * instead. A prediction with such a property left out equals the prediction with it given. An
 * optional property left out that the model cannot fill is left out, with a warning. An essential
 * property left out that the model cannot fill is an error; every missing one is named at once. */

/* The value the library uses for property i when a context leaves it out, into *value (lives as long
 * as the predictor), and where it comes from (*from: 1 the stored schema's constant, 2 the one value
 * every pre-training row had, 3 the context the model was fine-tuned for; may be NULL). BL_ENOTFOUND when there is none, BL_ERANGE for i ≥ count. */
BL_API bl_status bl_predictor_prop_default(const bl_predictor *p, size_t i, const char **value, int *from);

/* Value k (0 = the most frequent) that property i had in the pre-training rows, and in how many rows
 * (*rows may be NULL); a cluster total's values are per machine. The value lives as long as the
 * predictor. BL_ERANGE past the last value kept (at most 1000 per property) or for i ≥ count;
 * BL_ENOTFOUND when the model file predates these records (before 0.5). */
BL_API bl_status bl_predictor_prop_seen(const bl_predictor *p, size_t i, size_t k, const char **value,
                                        long long *rows);

/* The value of property i in the context the model was last fine-tuned for (the first run's; per
 * machine for a cluster total). BL_ENOTFOUND when the model was never fine-tuned or the file predates
 * the record; BL_ERANGE for i ≥ count. */
BL_API bl_status bl_predictor_finetune_context(const bl_predictor *p, size_t i, const char **value);

/* Ranges a model was trained on. A range not known is NaN (min and max). */
typedef struct bl_model_ranges {
    double scale_out_min, scale_out_max;        /* the pre-training rows' scale-outs (every file) */
    double runtime_min_s, runtime_max_s;        /* the pre-training rows' runtimes (files of 0.5 and later) */
    long long finetune_runs;                    /* runs of the last fine-tuning as recorded (0: none recorded) */
    long long finetune_contexts;                /* contexts those runs spanned (1: one) */
    double finetune_scale_out_min, finetune_scale_out_max;
    double finetune_runtime_min_s, finetune_runtime_max_s;
} bl_model_ranges;

BL_API bl_status bl_predictor_ranges(const bl_predictor *p, bl_model_ranges *out);

/* How the predictor's runtimes come about. A pre-trained network alone knows the runtime curves of
 * the environment it was trained in; after fine-tuning, the runs decide how far to trust it against
 * Ernest's four-parameter scaling law fitted to the same runs (leave-one-out over the runs with three
 * or more scale-outs; with two, how well the pre-trained model predicted the runs' speed-up): a
 * prediction is (1 − w)·network + w·Ernest. *method: "network" (w = 0), "blend" or "ernest" (w = 1);
 * *ernest_weight: w; *why: one line saying how the runs decided it ("" for a model never fine-tuned).
 * Any out pointer may be NULL; the strings live as long as the predictor. BL_EINVAL for a NULL p. */
BL_API bl_status bl_predictor_method(const bl_predictor *p, const char **method, double *ernest_weight,
                                     const char **why);

/* What a warning is about. */
typedef enum bl_warning_kind {
    BL_WARN_SCALE_OUT = 1,     /* scale-outs outside the range the model was pre-trained or fine-tuned on */
    BL_WARN_UNSEEN_VALUE = 2,  /* a text value no pre-training row (nor the fine-tuning runs) had */
    BL_WARN_NUMBER_RANGE = 3,  /* a number outside the range of the pre-training rows (and fine-tuning runs) */
    BL_WARN_LEFT_OUT = 4,      /* an optional property every pre-training row had was left out */
    BL_WARN_CONTEXT = 5,       /* a fine-tuned model asked about another context than its runs' (0.6) */
    BL_WARN_PROTOCOL = 6       /* fine-tuned with other options than its intervals were calibrated for (0.6) */
} bl_warning_kind;

/* "scale_out", "unseen_value", "number_range", "left_out", "context", "protocol" (static; "unknown" for
 * another value). */
BL_API const char *bl_warning_kind_name(bl_warning_kind kind);

/* A list of warnings about one request (opaque). The calls below that take one empty it first and then
 * add what they find; the caller owns it. Strings live until the list is next filled, or freed. */
typedef struct bl_warnings bl_warnings;

BL_API bl_status bl_warnings_new(bl_warnings **out, bl_error *err);
BL_API void bl_warnings_free(bl_warnings *w);
BL_API size_t bl_warnings_count(const bl_warnings *w);
/* Warning i: its kind (0 for i ≥ count), the property it is about (NULL: none, e.g. scale-outs, or
 * i ≥ count) and a one-line message that names the range or values seen and the fix (NULL for
 * i ≥ count). */
BL_API bl_warning_kind bl_warnings_kind(const bl_warnings *w, size_t i);
BL_API const char *bl_warnings_property(const bl_warnings *w, size_t i);
BL_API const char *bl_warnings_message(const bl_warnings *w, size_t i);

/* Checks a context and candidate scale-outs (n may be 0) as bl_predict would, without predicting,
 * and fills w (may be NULL) with the warnings about them. */
BL_API bl_status bl_predictor_review(const bl_predictor *p, const bl_prop_value *ctx, size_t n_ctx,
                                     const double *scale_outs, size_t n, bl_warnings *w, bl_error *err);

/* bl_predict that also fills w (may be NULL) with the warnings about the request (those of
 * bl_predictor_review). Warnings never change the predictions. */
BL_API bl_status bl_predict_warn(const bl_predictor *p, const bl_prop_value *ctx, size_t n_ctx,
                                 const double *scale_outs, size_t n, double *runtimes_s, bl_warnings *w,
                                 bl_error *err);

/* ---- intervals (0.6) ---------------------------------------------------------------------------
 *
 * How far to trust a prediction: [lo_s[i], hi_s[i]] is meant to hold the runtime of a run at
 * scale_outs[i] with probability `coverage` (0 < coverage < 1, e.g. 0.9). It is calibrated at
 * pre-training, not guessed: contexts the searches held out were fine-tuned on 0..5 of their runs as a
 * user's would be, and their errors at the other scale-outs size the interval for the model's number
 * of runs, inside or outside their range (models/README.md, "Intervals"). It widens with the distance
 * from the runs and from the pre-training scale-outs, with the guard's weight on Ernest, with the runs'
 * disagreement with the model, and for a context other than the fine-tuned one. Unbounded (lo 0, hi
 * +infinity) where the calibration cannot vouch for the coverage asked for (too few held-out contexts)
 * and beyond 4 × the scale-outs the model and its runs know (below a quarter of the smallest): there
 * the runtime is unknown, and bl_choose_scale_out never chooses such a scale-out. runtimes_s receives
 * bl_predict's values. BL_EINVAL for a coverage outside (0, 1); BL_EUNSUPPORTED for a model file
 * without calibration (pre-trained before 0.6: pre-train it again). w (may be NULL): the warnings. */
BL_API bl_status bl_predict_interval(const bl_predictor *p, const bl_prop_value *ctx, size_t n_ctx,
                                     const double *scale_outs, size_t n, double coverage, double *lo_s,
                                     double *runtimes_s, double *hi_s, int *why, bl_warnings *w, bl_error *err);

/* Why an interval is as it is (bl_predict_interval's why[i], may be NULL). */
typedef enum bl_interval_why {
    BL_INTERVAL_BOUNDED = 0,     /* calibrated and bounded */
    BL_INTERVAL_BEYOND = 1,      /* beyond 4 × the scale-outs the model and its runs know: the runtime is unknown */
    BL_INTERVAL_STAND_IN = 2,    /* the model predicts below any runtime it knows (a stand-in): unknown */
    BL_INTERVAL_TOO_FEW = 3,     /* too few held-out contexts vouch for this coverage (a lower one may be bounded) */
    BL_INTERVAL_TOO_WIDE = 4     /* wider than a factor 100 either way (or above 1e12 s): no bound worth the name */
} bl_interval_why;

/* The least runtime the model states as a prediction: 1 % of the smallest runtime it knows (pre-training
 * rows, fine-tuning runs; 1 ms when neither is recorded). Where its network's output falls below (at its
 * floor, far outside its data), bl_predict returns a positive stand-in under this value instead, which
 * says the runtime is unknown there: its interval is unbounded, bl_predict_warn warns, and it is never
 * chosen. */
BL_API double bl_predictor_runtime_floor(const bl_predictor *p);

/* What a model's calibration holds: present 0 when it has none (older files); a calibration may hold 0
 * contexts (pre-trained with validation by groups: no context was held out), and its intervals are then
 * unbounded. */
typedef struct bl_calibration_info {
    int       present;          /* 1: the model carries a calibration */
    long long contexts;         /* held-out contexts calibrated on */
    long long finetunings;      /* fine-tunings run for it */
    double    seconds;          /* its wall time at pre-training */
    int       runs;             /* runs this predictor's intervals are sized for (0: not fine-tuned) */
    double    factor;           /* how much its runs widen them, for its own context: (1 + w)(1 + D/D_ref) */
} bl_calibration_info;
BL_API bl_status bl_predictor_calibration(const bl_predictor *p, bl_calibration_info *out);

/* The calibrated log half-width q (an interval ŷ·e^(±q) before widening) for `runs` runs (0..5; more
 * count as 5), inside (1) or outside (0) their range, at coverage; +infinity when too few contexts
 * vouch for that coverage, NaN when none was scored; *contexts (may be NULL): how many contexts did.
 * BL_EUNSUPPORTED without calibration. */
BL_API bl_status bl_predictor_calibration_quantile(const bl_predictor *p, int runs, int inside, double coverage,
                                                   double *q, long long *contexts, bl_error *err);

/* How the fine-tuned model fits run i of its last fine-tuning: scale-out, measured and predicted
 * runtime (s), and the prediction before that fine-tuning. BL_ERANGE past the last run, BL_ENOTFOUND
 * when not recorded (never fine-tuned, or before 0.6). *n_runs (may be NULL) receives the count. */
BL_API bl_status bl_predictor_finetune_fit(const bl_predictor *p, size_t i, double *scale_out, double *runtime_s,
                                           double *predicted_s, double *prior_s, size_t *n_runs);

/* ---- choosing a scale-out ------------------------------------------------------------------- */

typedef enum bl_goal {
    BL_GOAL_FASTEST = 0,   /* the lowest predicted runtime */
    BL_GOAL_SMALLEST = 1,  /* the smallest scale-out whose runtime ≤ target_runtime_s (needs a target) */
    BL_GOAL_CHEAPEST = 2   /* the lowest scale-out × runtime/3600 × price_per_hour among those meeting
                              the target (every candidate when there is no target); needs a price */
} bl_goal;

typedef struct bl_choice_opts {
    bl_goal goal;
    double  target_runtime_s;   /* > 0: the runtime target; 0: none. Negative: BL_EINVAL */
    double  price_per_hour;     /* price of one machine for one hour (≥ 0); CHEAPEST only */
    double  confidence;         /* 0 (default): a target is met by the predicted runtime; in (0, 1): by
                                   the upper end of the interval at this coverage (0.6) */
    double  max_width;          /* > 0: never choose a candidate whose interval is wider than this
                                   share of its prediction ((hi − lo) / runtime); 0: no limit (0.6) */
} bl_choice_opts;

typedef struct bl_choice {
    size_t index;               /* into the candidates */
    double scale_out;
    double runtime_s;           /* predicted (the expected runtime at the choice) */
    double cost;                /* scale_out × runtime_s / 3600 × price_per_hour (0 without a price) */
    int    met_target;          /* 1: a target was given and this candidate meets it (its upper end,
                                   with a confidence) */
    int    fallback;            /* 1: a target was given, no candidate meets it, and the choice is the
                                   fastest candidate instead */
    char   reason[256];         /* one line saying why, e.g. "smallest scale-out meeting 300 s" */
    double lo_runtime_s, hi_runtime_s; /* the choice's interval (0.6; NaN when there was none) */
    double coverage;            /* the interval's coverage (0: none) */
    size_t left_out;            /* candidates never considered: no positive prediction, an unbounded
                                   interval or one wider than max_width */
} bl_choice;

/* Default options: BL_GOAL_FASTEST, no target, no price, no confidence, no width limit. */
BL_API void bl_choice_opts_init(bl_choice_opts *o);

/* The largest runtime taken as a prediction or read from a data file (some 30 000 years). */
#define BL_RUNTIME_MAX_S 1e12
/* The smallest runtime read from a data file or given as a run (one millisecond): a distributed job
 * faster than that is a unit mistake or a typo, and one such row drags a model's every prediction down. */
#define BL_RUNTIME_MIN_S 1e-3

/* Chooses among n candidates whose predicted runtimes are known (no model needed). Ties go to the
 * smaller scale-out. When no candidate meets a given target, the choice is the fastest one, with
 * fallback = 1 (a scheduler then decides whether to run anyway). A candidate whose runtime is not a
 * number in (0, BL_RUNTIME_MAX_S] is never chosen — a model asked about scale-outs far outside its
 * training data can predict 0 or less — and the reason says how many were left out; with none left,
 * BL_ERANGE. */
BL_API bl_status bl_choose(const double *scale_outs, const double *runtimes_s, size_t n,
                           const bl_choice_opts *o, bl_choice *out, bl_error *err);

/* bl_choose with each candidate's interval [lo_s[i], hi_s[i]] at coverage (lo_s, hi_s may be NULL: none;
 * then a confidence is BL_EINVAL). A candidate with an unbounded interval (hi not finite), or one wider
 * than o->max_width, is never chosen; with o->confidence a target is met when hi_s ≤ it. */
BL_API bl_status bl_choose_interval(const double *scale_outs, const double *runtimes_s, const double *lo_s,
                                    const double *hi_s, size_t n, double coverage, const bl_choice_opts *o,
                                    bl_choice *out, bl_error *err);
/* (With o->confidence > 0, coverage must equal it: BL_EINVAL otherwise.) */

/* bl_predict_interval over the candidates (at o->confidence, or 0.9 without one), then
 * bl_choose_interval: a scale-out whose interval is unbounded is never chosen — with one exception
 * without a confidence or width limit: where only too few held-out contexts keep the interval from
 * being bounded (BL_INTERVAL_TOO_FEW), the prediction alone is judged, and the reason says the choice
 * has no bound. A model without calibration (before 0.6) chooses on its predictions, never beyond
 * 4 × the scale-outs it knows nor at a stand-in, and refuses a confidence or a width limit
 * (BL_EUNSUPPORTED). When no candidate may be chosen: BL_ERANGE, the message ("no candidate can be
 * chosen: ...") naming each reason that applies, with its count and what would admit those candidates. */
BL_API bl_status bl_choose_scale_out(const bl_predictor *p, const bl_prop_value *ctx, size_t n_ctx,
                                     const double *scale_outs, size_t n, const bl_choice_opts *o,
                                     bl_choice *out, bl_error *err);

/* bl_choose_scale_out that also fills w (may be NULL) with the warnings about the request. */
BL_API bl_status bl_choose_scale_out_warn(const bl_predictor *p, const bl_prop_value *ctx, size_t n_ctx,
                                          const double *scale_outs, size_t n, const bl_choice_opts *o,
                                          bl_choice *out, bl_warnings *w, bl_error *err);

/* ---- fine-tuning and saving ----------------------------------------------------------------- */

/* Fine-tuning options (NULL everywhere means these defaults). */
typedef struct bl_tune_opts {
    long     max_epochs;        /* default 2500 */
    long     patience;          /* epochs without improvement before stopping (default 1000) */
    double   stop_mae_s;        /* stop when the training mean absolute error ≤ this (default 5 s) */
    double   stop_rel;          /* > 0: stop when MAE ≤ stop_rel × mean runtime instead (default 0) */
    unsigned long long seed;    /* default 1 */
    int      stop_cv;           /* 1 (default): with 3 or more runs, train for the epoch count that
                                   cross-validation over the runs (leave-one-out, at most 10 folds)
                                   finds best, and ignore stop_mae_s / stop_rel / patience; 0: the
                                   stopping rule above for any number of runs */
} bl_tune_opts;

BL_API void bl_tune_opts_init(bl_tune_opts *o);

/* Fine-tunes a copy of base on n_runs runs of ONE context: scale_outs[i] machines (a whole number,
 * 1..1000000) took runtimes_s[i] seconds (finite, > 0). The context must give every property of the
 * model, optional ones included, except those the model fills (bl_predictor_prop_default). *out
 * receives a new predictor, which records the context and the runs' ranges; base is unchanged. */
BL_API bl_status bl_predictor_finetune(const bl_predictor *base, const bl_prop_value *ctx, size_t n_ctx,
                                       const double *scale_outs, const double *runtimes_s, size_t n_runs,
                                       const bl_tune_opts *o, bl_predictor **out, bl_error *err);

/* Fine-tunes on every row of a data file (.tsv or .csv with a header line), read through
 * schema_path, or through the schema stored in the model when schema_path is NULL. The schema must
 * describe the model's properties (BL_EFORMAT otherwise). Meant for the runs of one context; rows
 * of several contexts are all used. */
BL_API bl_status bl_predictor_finetune_file(const bl_predictor *base, const char *data_path,
                                            const char *schema_path, const bl_tune_opts *o,
                                            bl_predictor **out, bl_error *err);

/* Saves the model into the file at path under `name` (NULL: its own name), adding it to or
 * replacing it in an existing model file; atomic (a failed save leaves the old file intact). */
BL_API bl_status bl_predictor_save(const bl_predictor *p, const char *path, const char *name, bl_error *err);

#ifdef __cplusplus
}
#endif
#endif /* BELLAMY_BELLAMY_H */
