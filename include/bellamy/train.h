/* train.h — the training face of libbellamy: data files read through a schema, pre-training, a fresh
 * untrained predictor, fine-tuning on data read that way, evaluation on a data file, what a model
 * records about its training, model-file checks, the synthetic corpus, and run histories imported from
 * Spark event logs and Flink job archives.
 *
 * The conventions of bellamy.h hold: every function returns a bl_status (BL_OK is 0) and fills the
 * optional bl_error* (may be NULL) with a one-line message naming the file, line, field or option and
 * the fix; the library never prints, never exits, never aborts on bad input; every *_free accepts NULL.
 *
 * Option structs are versioned: their first field, size, is set by their *_init to the struct's size
 * in the caller's build, and the library reads only the fields that size covers (a program built
 * against an older header keeps working; one whose size the library does not know is BL_EINVAL).
 * Always start from *_init; a NULL options pointer means the defaults.
 */
#ifndef BELLAMY_TRAIN_H
#define BELLAMY_TRAIN_H

#include "bellamy/bellamy.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ==== data files ================================================================================
 *
 * A bl_data is a data file (.tsv or .csv with a header line) read through a schema (format:
 * datasets/README.md): per row the scale-out, the runtime in seconds and the context (the values of
 * the essential properties that are not cluster totals); contexts and each property's distinct values
 * are numbered in order of first appearance. Immutable once loaded; strings live as long as it. */

typedef struct bl_data bl_data;

/* How number properties are encoded (bl_data_opts.numbers). */
typedef enum bl_numbers {
    BL_NUMBERS_BINARY = 0,   /* the paper's bits (default) */
    BL_NUMBERS_LOG = 1,      /* a log-magnitude thermometer */
    BL_NUMBERS_RANGE = 2,    /* that thermometer over each property's range in the pre-training data */
    BL_NUMBERS_BOTH = 3      /* ensemble members alternate bits and log (pre-training with ≥ 2 members) */
} bl_numbers;

typedef struct bl_data_opts {
    size_t size;             /* sizeof(bl_data_opts), set by bl_data_opts_init */
    char   delimiter;        /* '\t', ',' or 0 (default: .tsv tab, .csv comma; other names: a tab in the
                                first line, else comma) */
    int    skip_invalid;     /* 1: leave invalid rows out, each named by bl_data_skipped (default 0: the
                                first one is an error) */
    int    totals_per_machine; /* 1: cluster-total numbers encoded per machine; 0 as totals (default) */
    int    numbers;          /* bl_numbers (default BL_NUMBERS_BINARY) */
} bl_data_opts;

BL_API void bl_data_opts_init(bl_data_opts *o);
/* The defaults for data to pre-train on with t (NULL: bl_train_opts_init's): bl_data_opts_init's, but
 * numbers BL_NUMBERS_BOTH when t->members >= 2 (measured better; one network reads bits). The defaults
 * bl_pretrain_file uses when dopts is NULL, and bellamy-train pretrain's. (0.8) */
typedef struct bl_train_opts bl_train_opts;
BL_API void bl_data_opts_for_training(bl_data_opts *o, const bl_train_opts *t);

/* Reads data_path through the schema file schema_path (whose text a pre-training stores in the model).
 * Errors name "FILE:LINE:COLUMN" for a bad field, the schema line for a bad schema; BL_EINVAL for
 * out-of-range options. */
BL_API bl_status bl_data_load(const char *data_path, const char *schema_path, const bl_data_opts *o,
                              bl_data **out, bl_error *err);

/* The same from memory: data (len bytes, delimiter '\t' or ',' in o, default '\t') read through the
 * schema text, with every option of o (skip_invalid too); data_name and schema_name label the two in
 * messages. */
BL_API bl_status bl_data_load_text(const char *data_name, const char *data, size_t len, const char *schema_name,
                                   const char *schema_text, size_t schema_len, const bl_data_opts *o,
                                   bl_data **out, bl_error *err);

/* The runs of a data file read as base would fine-tune on them: through schema_path, or the schema
 * stored in the model when schema_path is NULL, with the model's encodings. The schema must describe
 * the model's properties (BL_EFORMAT naming the schema line otherwise); a file without runs is
 * BL_EINVAL. Such data cannot be pre-trained on (it keeps no schema text). */
BL_API bl_status bl_runs_load(const bl_predictor *base, const char *data_path, const char *schema_path,
                              int skip_invalid, bl_data **out, bl_error *err);

BL_API void bl_data_free(bl_data *d);

/* What a data set holds. */
typedef struct bl_data_summary {
    const char *name;                      /* the data file's path (or data_name) */
    unsigned long long data_hash;          /* XXH64 (seed 0) of the file's bytes */
    size_t rows, contexts, props;
    size_t skipped;                        /* invalid rows left out (skip_invalid) */
    double scale_out_min, scale_out_max;   /* over the rows */
    double runtime_min_s, runtime_max_s;
    size_t vec_len;                        /* length of each encoded property vector */
    int    totals_per_machine;             /* as loaded */
} bl_data_summary;

/* BL_EINVAL for NULL arguments. */
BL_API bl_status bl_data_summarize(const bl_data *d, bl_data_summary *s);

/* The data file's runtime column, as the schema names it, and its unit as the schema writes it ("s",
 * "ms", "min" or "h"); every runtime of d is in seconds whatever the unit. Either out pointer may be
 * NULL; the strings live as long as d. BL_EINVAL for a NULL d. */
BL_API bl_status bl_data_runtime_column(const bl_data *d, const char **column, const char **unit);

/* Why skipped row i was left out, "FILE:LINE:COLUMN: message" (file order); NULL past the last one
 * kept (at most 100 are kept; bl_data_summary.skipped counts them all). */
BL_API const char *bl_data_skipped(const bl_data *d, size_t i);

/* Property p (schema order). BL_ERANGE for p ≥ props. */
typedef struct bl_data_prop {
    const char *name;
    int    essential, number, cluster_total;
    size_t distinct;                       /* distinct values among the rows */
} bl_data_prop;

BL_API bl_status bl_data_property(const bl_data *d, size_t p, bl_data_prop *out);
/* Index of the property called name, or -1. */
BL_API long bl_data_find_property(const bl_data *d, const char *name);

/* Context c: its label ("name=value; ...") and rows. BL_ERANGE for c ≥ contexts. */
BL_API bl_status bl_data_context(const bl_data *d, size_t c, const char **label, size_t *rows);
/* Row index of the k-th row (ascending) of context c into *row. BL_ERANGE out of range. */
BL_API bl_status bl_data_context_row(const bl_data *d, size_t c, size_t k, size_t *row);

/* Row r. BL_ERANGE for r ≥ rows. */
typedef struct bl_data_row {
    size_t data_row;                       /* 0-based data row in the file (header and blank lines not
                                              counted) */
    size_t context;
    double scale_out, runtime_s;
} bl_data_row;

BL_API bl_status bl_data_get_row(const bl_data *d, size_t r, bl_data_row *out);
/* The lines of the data file (1-based, *first..*last) that row r was read from: one, or several when a
 * quoted field holds line breaks; r = BL_DATA_HEADER for the header. BL_ERANGE for r ≥ rows. */
#define BL_DATA_HEADER ((size_t)-1)
BL_API bl_status bl_data_row_lines(const bl_data *d, size_t r, size_t *first, size_t *last);
/* Property p's value in row r (text; numbers in canonical decimal; a cluster total as a total unless
 * loaded per machine) and its encoded vector ([vec_len]); either out pointer may be NULL. */
BL_API bl_status bl_data_value(const bl_data *d, size_t p, size_t r, const char **value, const double **vector);

/* The scale-out features a model reads, [1/x, ln x, x], of row r, and the same min-max scaled over
 * every row of d (either may be NULL). */
#define BL_SCALE_OUT_FEATURES 3
BL_API bl_status bl_data_scale_out_features(const bl_data *d, size_t r, double raw[BL_SCALE_OUT_FEATURES],
                                            double scaled[BL_SCALE_OUT_FEATURES], bl_error *err);

/* How the contexts differ, into buf (always NUL-terminated): "name: K values (a, b, ...); ..." for each
 * property of a context's identity with more than one value. Returns how many properties differ. */
BL_API size_t bl_data_context_spread(const bl_data *d, char *buf, size_t cap);
/* How context c differs from a context given as name/value pairs (cluster totals excluded; properties
 * ctx does not give are skipped): "name: 'a' in the data, 'b' given; ...". Returns how many differ. */
BL_API size_t bl_data_context_diff(const bl_data *d, size_t c, const bl_prop_value *ctx, size_t n_ctx, char *buf,
                                   size_t cap);

/* ==== pre-training ============================================================================== */

/* Progress of a pre-training, reported from worker threads (serialised by the library). */
typedef struct bl_train_progress {
    int    search, searches_total;         /* the ensemble member whose search this is (0-based), of how many */
    int    trial, trials_alive, trials_total;
    long   epoch, epochs_total;
    long   epochs_done_all, epochs_planned_all; /* over every trial and member, for an ETA */
    double train_loss, val_loss, best_val_loss;
    int    has_val;                        /* 0: no validation rows; the val losses are training losses */
} bl_train_progress;

/* Return 0 to go on (other values are reserved). */
typedef int (*bl_train_progress_fn)(void *ctx, const bl_train_progress *p);

enum { BL_SPLIT_CONTEXTS = 0, BL_SPLIT_GROUPS = 1 };                 /* bl_train_opts.val_split */
enum { BL_SCALE_SECONDS = 0, BL_SCALE_MEAN = 1, BL_SCALE_LOG = 2 };   /* bl_train_opts.target_scale */
enum { BL_ON_CPU = 0, BL_ON_CUDA = 1 };                              /* bl_train_opts.device */
enum { BL_MASKS_VALUE = 0, BL_MASKS_ROW = 1, BL_MASKS_HYBRID = 2 };   /* bl_train_opts.dropout_masks */
/* bl_train_opts.precision: what the network's passes and predictions compute in (its parameters and Adam's
 * state are float64 in memory while it trains; a trained float32 model's parameters are float32 values). A
 * float32 model's file stores its weights as float32 (models/README.md). (0.9)
 * BL_PRECISION_AUTO (the default since 0.10): float32 on the CPU, float64 with device BL_ON_CUDA (the GPU
 * search computes in float64 only); the model records which. */
enum { BL_PRECISION_F64 = 0, BL_PRECISION_F32 = 1, BL_PRECISION_AUTO = 2 };

/* The bounds bl_train_opts_check holds every field to, and the defaults bl_train_opts_init sets: the one
 * statement of each (the library's internals and bellamy-train use these). */
#define BL_TRAIN_TRIALS_MAX      27        /* the grid: 3 dropouts x 3 learning rates x 3 weight decays */
#define BL_TRAIN_MEMBERS_MAX     16
#define BL_TRAIN_EPOCHS_MAX      1000000L  /* epochs and grace */
#define BL_TRAIN_THREADS_MAX     1024
#define BL_TRAIN_TRIALS_DEFAULT  12
#define BL_TRAIN_EPOCHS_DEFAULT  2500L
#define BL_TRAIN_GRACE_DEFAULT   300L      /* with reduction 3: rungs 300, 900, 2500 (bench/README.md) */
#define BL_TRAIN_THREADS_DEFAULT 1
#define BL_TRAIN_SEED_DEFAULT    1ULL
#define BL_TRAIN_VAL_FRACTION_DEFAULT 0.2
#define BL_TRAIN_MEMBERS_DEFAULT 6         /* measured better than 1 or 3, with numbers in both encodings */
#define BL_TRAIN_PRECISION_DEFAULT BL_PRECISION_AUTO /* the one statement of the default precision */

struct bl_train_opts {
    size_t size;              /* sizeof(bl_train_opts), set by bl_train_opts_init */
    int    trials;            /* hyper-parameter configurations to try, 1..27 (default 12) */
    long   epochs;            /* most epochs per trial, 1..1000000 (default 2500) */
    long   grace;             /* successive-halving grace period, 1..1000000 (default 300) */
    int    threads;           /* trials trained in parallel, 1..1024 (default 1; the result does not depend on it) */
    unsigned long long seed;  /* configurations, splits, initial weights (default 1) */
    double val_fraction;      /* share held out for validation, strictly between 0 and 1 (default 0.2) */
    int    val_split;         /* BL_SPLIT_CONTEXTS (whole contexts; default) or BL_SPLIT_GROUPS (a share of
                                 every (context, scale-out) group's rows) */
    int    target_scale;      /* network target: BL_SCALE_SECONDS (default), _MEAN (÷ mean runtime), _LOG */
    int    device;            /* BL_ON_CPU (default) or BL_ON_CUDA (every trial at once on a GPU) */
    int    members;           /* ensemble searches whose winners' median predicts, 1..16 (default 6); read
                                 numbers in both encodings by default when 2 or more (bl_data_opts_for_training) */
    int    dropout_masks;     /* AlphaDropout masks: BL_MASKS_ROW (default), _VALUE (faster), _HYBRID */
    bl_train_progress_fn progress;   /* NULL: none */
    void  *progress_ctx;
    int    calibrate;         /* 1 (default): calibrate prediction intervals on held-out contexts after the
                                 searches (bl_predict_interval; a few per cent more time: +2.5 % measured on C3O grep); 0: none (0.6) */
    const struct bl_train_ranks *ranks; /* NULL (default): this process alone; else one of several processes
                                 that share this pre-training (bl_train_ranks; 0.8) */
    int    precision;         /* BL_PRECISION_AUTO (default: float32 on the CPU, float64 on CUDA), _F64 or _F32:
                                 what the search, the model it makes and that model's file compute and store
                                 in; _F32 is CPU only (with device BL_ON_CUDA: BL_EUNSUPPORTED) (0.9) */
};

/* Several processes sharing one pre-training, e.g. the ranks of an MPI job (bellamy-train makes one
 * from MPI_COMM_WORLD). Every rank calls bl_pretrain_data with the same data and options; trial i of
 * member j is trained by rank (j * trials + i) mod size alone, and after every successive-halving rung
 * the ranks exchange the trials' results whole through gather, so every rank ends with the model one
 * process would have trained, bit for bit, whatever size is. CPU only (device BL_ON_CPU). A rank whose
 * call fails may leave the others waiting in gather: end the job then (MPI_Abort). */
typedef struct bl_train_ranks {
    int   rank, size;         /* 0 <= rank < size */
    void *ctx;                /* passed to gather */
    /* records: n records of rec_size bytes for the work items first .. first+n-1, of which this rank has
     * filled those it owns ((first + i) mod size == rank). On return every record must be as its owner
     * wrote it, on every rank. Returns 0, or non-zero with a message in msg (cap bytes). Called by every
     * rank with the same first, n and rec_size, from the thread that called bl_pretrain_data. */
    int (*gather)(void *ctx, void *records, size_t first, size_t n, size_t rec_size, char *msg, size_t cap);
} bl_train_ranks;

BL_API void bl_train_opts_init(bl_train_opts *o);

/* The one check of pre-training options (bl_pretrain_data and bl_pretrain_file run it; so does
 * bellamy-train): BL_EINVAL with "bl_train_opts.FIELD VALUE: must be RANGE" for the first field out of
 * its range (the bounds above); BL_EUNSUPPORTED for device BL_ON_CUDA where bl_cuda_check fails, and for
 * device BL_ON_CUDA with precision BL_PRECISION_F32 (the GPU search computes in float64 only). */
BL_API bl_status bl_train_opts_check(const bl_train_opts *o, bl_error *err);

/* BL_OK when pre-training can run on a CUDA GPU here; otherwise BL_EUNSUPPORTED saying what is missing
 * (no CUDA module, no runtime, no device) and the fix. Thread-safe. */
BL_API bl_status bl_cuda_check(bl_error *err);

/* Pre-trains a model (a hyper-parameter search per ensemble member) on every row of d, which must come
 * from bl_data_load or bl_data_load_text (its schema is stored in the model; BL_EINVAL for runs from
 * bl_runs_load). name: the model's name (NULL: the data file's stem). A data set encoded with
 * BL_NUMBERS_BOTH needs members ≥ 2 (BL_EINVAL). *out receives the new predictor; save it with
 * bl_predictor_save. */
BL_API bl_status bl_pretrain_data(const bl_data *d, const bl_train_opts *o, const char *name, bl_predictor **out,
                                  bl_error *err);

/* bl_data_load (dopts: NULL for bl_data_opts_for_training(o)), bl_pretrain_data, then, when out_path is given,
 * bl_predictor_save into it. *out receives the predictor; out may be NULL when out_path is given
 * (BL_EINVAL when both are NULL). Options are checked before the file is read. */
BL_API bl_status bl_pretrain_file(const char *data_path, const char *schema_path, const bl_data_opts *dopts,
                                  const bl_train_opts *o, const char *name, const char *out_path,
                                  bl_predictor **out, bl_error *err);

/* A fresh, untrained predictor for d's properties (from bl_data_load or bl_data_load_text): its
 * weights drawn from seed, its target scaled by o->target_scale, computing in o->precision (only those
 * three fields of o are read; NULL: seconds, seed 1, BL_TRAIN_PRECISION_DEFAULT; BL_PRECISION_AUTO is
 * float32 here, as on the CPU). Meant to be fine-tuned
 * (bl_predictor_finetune_data) by a program that learns from its own history, e.g. a scheduler; its
 * predictions before that are meaningless. */
BL_API bl_status bl_predictor_new_untrained(const bl_data *d, const bl_train_opts *o, bl_predictor **out,
                                            bl_error *err);

/* What fine-tuning may change beyond bl_tune_opts (NULL: these defaults). */
typedef struct bl_tune_more {
    size_t size;              /* sizeof(bl_tune_more), set by bl_tune_more_init */
    double lr_min, lr_max;    /* the learning-rate schedule's bounds, 0 < lr_min ≤ lr_max (0.001, 0.01) */
    double weight_decay;      /* ≥ 0 (default 0) */
    int guard;                /* 1 (default): runs reaching outside the pre-training scale-outs weigh the network
                                 against Ernest fitted to them (bl_predictor_method says how); 0: the network alone */
    int reserved;             /* 0; fills the padding, so that a field added later grows sizeof (the version) */
} bl_tune_more;

BL_API void bl_tune_more_init(bl_tune_more *o);

/* Fine-tunes a copy of base on every row of runs (from bl_runs_load, or bl_data_load_text with the
 * model's properties; every row counts, whatever its context). Options as bl_predictor_finetune_file,
 * more as above. base is unchanged. */
BL_API bl_status bl_predictor_finetune_data(const bl_predictor *base, const bl_data *runs, const bl_tune_opts *o,
                                            const bl_tune_more *more, bl_predictor **out, bl_error *err);

/* ==== what a model records ====================================================================== */

typedef struct bl_training_info {
    long long val_rows;           /* rows the search validated on; 0 none (the losses are training losses);
                                     -1 unknown (files written before 0.3) */
    unsigned long long data_hash; /* XXH64 of the pre-training data file */
    const char *numbers;          /* "binary", "log", "range" or "both" */
    int totals_per_machine;       /* 1: cluster totals encoded per machine */
    unsigned vec_len, ngram_min, ngram_max, hash_seed; /* the encoders */
    const char *target_scale;     /* "seconds", "mean" or "log" */
    double target_scale_s;        /* runtime = network output × this */
    int finetune_recorded;        /* 1: the last fine-tuning's runs and context are recorded (0.5 and later) */
    const char *runtime_column;   /* the runtime's column in the data it was trained on (stored schema;
                                     "" when it stores none) (0.7) */
    const char *runtime_unit;     /* that column's unit: "s", "ms", "min" or "h" ("" likewise); predictions
                                     are in seconds whatever it is (0.7) */
} bl_training_info;

BL_API bl_status bl_predictor_training(const bl_predictor *p, bl_training_info *out);

/* The precision the model computes in: "f64" or "f32" (bl_train_opts.precision; a model file without the
 * attribute is "f64"); fine-tuning keeps it. NULL for a NULL p. (0.9) */
BL_API const char *bl_predictor_precision(const bl_predictor *p);

/* Ensemble member j (0-based, < bl_model_info.members): its number encoding and its search winner's
 * hyper-parameters, loss and epochs (epochs -1 when not recorded). BL_ERANGE for j out of range. */
typedef struct bl_member_info {
    const char *numbers;
    double dropout, learning_rate, weight_decay, best_loss;
    long long epochs;
} bl_member_info;

BL_API bl_status bl_predictor_member(const bl_predictor *p, int j, bl_member_info *out);

/* How the schema stored in the model makes property i. kind: "column", "join", "const", "per_machine"
 * or "template"; columns: the columns read; value: the constant or template (NULL for column, join).
 * BL_ENOTFOUND when the model stores no schema (or it lacks the property); BL_ERANGE for i ≥ count. */
typedef struct bl_prop_source {
    const char *kind;
    size_t      n_columns;
    const char *value;
} bl_prop_source;

BL_API bl_status bl_predictor_prop_source(const bl_predictor *p, size_t i, bl_prop_source *out);
/* Column k of that source; NULL out of range. */
BL_API const char *bl_predictor_prop_source_column(const bl_predictor *p, size_t i, size_t k);

/* What the pre-training rows held of property i (see bl_predictor_prop_seen for the values). */
typedef struct bl_prop_seen_info {
    int       recorded;           /* 0: the file predates these records (before 0.5); the rest is 0 */
    long long distinct;           /* distinct values in all (more than kept past 1000) */
    size_t    kept;               /* values bl_predictor_prop_seen returns */
    int       per_machine;        /* 1: the values are per machine (a cluster total) */
    double    num_min, num_max;   /* a number property's range; NaN for text */
} bl_prop_seen_info;

BL_API bl_status bl_predictor_prop_seen_info(const bl_predictor *p, size_t i, bl_prop_seen_info *out);

/* ==== evaluation ================================================================================ */

/* Predictions for every run of a data file, each in its own context, and the measured runtimes,
 * summarised per context (in the order of bl_data_context) and, within it, per distinct scale-out
 * (ascending): one row for each pair that has runs. Contexts are never pooled (0.6). */
typedef struct bl_evaluation bl_evaluation;

typedef struct bl_eval_row {
    double scale_out;
    size_t runs;
    double measured_mean_s, predicted_mean_s;
    double relative_error;        /* |predicted − measured| / measured, of the means: a fraction */
    size_t context;               /* the runs' context, for bl_data_context of bl_evaluation_data (0.6) */
} bl_eval_row;

/* Reads the runs as bl_runs_load does (schema_path NULL: the model's stored schema; BL_EINVAL when it
 * stores none) and predicts each. BL_EINVAL for a file without runs. */
BL_API bl_status bl_evaluate_file(const bl_predictor *p, const char *data_path, const char *schema_path,
                                  int skip_invalid, bl_evaluation **out, bl_error *err);
BL_API void bl_evaluation_free(bl_evaluation *e);
/* The runs read (for their summary and skipped rows); lives as long as e. */
BL_API const bl_data *bl_evaluation_data(const bl_evaluation *e);
BL_API size_t bl_evaluation_count(const bl_evaluation *e);
BL_API bl_status bl_evaluation_row(const bl_evaluation *e, size_t i, bl_eval_row *out);
/* The mean of the rows' relative errors (each context and scale-out weighs one). */
BL_API double bl_evaluation_mean_relative_error(const bl_evaluation *e);

/* ==== model files =============================================================================== */

/* The checksum header of a model file, checked strictly (BELLAMY_MODEL_IGNORE_CHECKSUM does not
 * apply), without parsing HDF5: BL_OK with *present 1 (present and matching) or 0 (none: written before
 * 0.4.1, by another program, or no model file at all: bl_model_file_open tells); BL_EFORMAT for a
 * damaged, truncated or edited file, BL_EIO for one that cannot be read, the message naming the file. */
BL_API bl_status bl_model_file_verify(const char *path, int *present, bl_error *err);

/* Rewrites a model file with a checksum header (atomically): vouches for the file, so give it only a
 * file you trust. trust_edits 0: a header that does not match is an error; 1: with
 * BELLAMY_MODEL_IGNORE_CHECKSUM=1 set, a file edited on purpose gets a header matching its edits. */
BL_API bl_status bl_model_file_stamp(const char *path, int trust_edits, bl_error *err);

/* ==== the synthetic corpus ====================================================================== */

/* Runtime curves of known shape over contexts of machine types, data sizes and iteration counts, with
 * their schema: for tests, demos and shifted environments. */
enum { BL_SHAPE_ERNEST = 0, BL_SHAPE_CLIFF = 1, BL_SHAPE_SUPERLINEAR = 2, BL_SHAPE_PLATEAU = 3 };

#define BL_CORPUS_CONTEXTS_MAX   60
#define BL_CORPUS_SCALE_OUTS_MAX 64
#define BL_CORPUS_ENVIRONMENT_MAX 63

typedef struct bl_corpus_opts {
    size_t size;                  /* sizeof(bl_corpus_opts), set by bl_corpus_opts_init */
    size_t contexts;              /* 1..60 (default 12) */
    size_t reps;                  /* repetitions per scale-out, 1..1000 (default 3) */
    double noise;                 /* relative noise (standard deviation), 0..1 (default 0.03) */
    unsigned long long seed;      /* default 1 */
    size_t n_scale_outs;          /* 1..64 (default 6: 2, 4, ..., 12) */
    double scale_outs[BL_CORPUS_SCALE_OUTS_MAX]; /* whole numbers 1..100000 */
    int    shape;                 /* BL_SHAPE_* (default BL_SHAPE_ERNEST) */
    double time_scale;            /* every runtime × this, 1e-4 ≤ F ≤ 1e6 (default 1) */
    const char *environment;      /* the environment property's value (NULL: "synthetic corpus"); at most
                                     63 printable ASCII characters, no quote or backslash */
} bl_corpus_opts;

BL_API void bl_corpus_opts_init(bl_corpus_opts *o);
/* BL_SHAPE_* for "ernest", "cliff", "superlinear", "plateau"; -1 for another name. */
BL_API int bl_corpus_shape(const char *name);

/* Writes DIR/STEM.tsv and DIR/STEM.schema (DIR must exist; STEM a file name without folders), each
 * replaced whole or not at all; *rows and *contexts (may be NULL) receive the counts written. */
BL_API bl_status bl_corpus_write(const bl_corpus_opts *o, const char *dir, const char *stem, size_t *rows,
                                 size_t *contexts, bl_error *err);

/* ==== run histories (0.7) =========================================================================
 *
 * Spark event logs and Flink job archives, as clusters keep them, imported as a data file of runs and
 * a schema to edit (bellamy-train import; the columns: datasets/README.md). Each Spark application
 * attempt or Flink job is one run: its runtime (end − start), its scale-out (executor hosts, or
 * executors), what it read and how it was configured. Runs still being written or that never ended
 * are left out, and failed ones unless asked for; every run or file left out is named, with why, in
 * the result's notes. Logs: plain or compressed with Spark's codecs (zstd, lz4, snappy), single files
 * or rolling logs' folders; folders are searched recursively. */

enum { BL_IMPORT_HOSTS = 0, BL_IMPORT_EXECUTORS = 1 };

typedef struct bl_import_opts {
    size_t size;                     /* sizeof(bl_import_opts), set by bl_import_opts_init */
    int    scale_out;                /* BL_IMPORT_HOSTS (default): distinct executor hosts when the most
                                        executors ran; BL_IMPORT_EXECUTORS: that number of executors */
    int    include_failed;           /* 1: runs with a failed job too (their state column says so) */
    int    redact;                   /* 1: the job's arguments left out (the args column empty) */
    const char *const *properties;   /* "NAME=KEY": a property NAME (a schema's name: machine_type, ...,
                                        or x_<anything>) from the configuration value KEY (a Spark
                                        property, e.g. spark.yarn.instanceType), a column of its own */
    size_t n_properties;
    const char *const *consts;       /* "NAME=VALUE": a constant property of the schema */
    size_t n_consts;
    int    group_by_name;            /* 1: the output is a folder holding NAME.tsv and NAME.schema per
                                        application name (the unit a model is pre-trained for) */
} bl_import_opts;

BL_API void bl_import_opts_init(bl_import_opts *o);

typedef struct bl_import_result bl_import_result;

typedef struct bl_import_summary {
    size_t logs;            /* logs read (files, or rolling logs' folders) */
    size_t logs_failed;     /* of them, unreadable or damaged (named in the notes, skipped) */
    size_t runs_found;      /* application attempts / jobs in them */
    size_t skipped;         /* runs left out (named in the notes) */
    size_t added;           /* rows added to the data file(s) */
    size_t kept;            /* rows the data file(s) held already, all kept */
    size_t already;         /* runs the data file(s) held already (not added again) */
    size_t unknown_events;  /* events of kinds the reader does not know (ignored) */
    size_t notes;           /* notes (bl_import_note; at most 10000 are kept) */
    size_t outputs;         /* data files written (bl_import_output) */
} bl_import_summary;

/* Imports the logs under inputs[0..n) (files or folders) into the data file out (TSV; an existing one
 * of an earlier import keeps all its rows, and a run it holds is not added again) and the schema
 * schema_out (NULL: out with the extension .schema), written only where no schema is — yours to edit;
 * with o->group_by_name, out is an existing folder (and schema_out NULL). Files are replaced whole or
 * not at all. *res (may be set on error too: its notes say what was read) is freed with
 * bl_import_result_free. BL_EINVAL when no run can be imported (nothing is written), or for a bad
 * option (naming it, with the closest property name for a misspelt one; refused before any log is
 * read, and then *res is NULL); BL_EIO for an input that cannot be opened or an output that cannot be written;
 * BL_EFORMAT when out holds another file than an import with these --property columns. */
BL_API bl_status bl_import_histories(const char *const *inputs, size_t n, const char *out, const char *schema_out,
                                     const bl_import_opts *o, bl_import_result **res, bl_error *err);
BL_API void bl_import_result_free(bl_import_result *r);
BL_API void bl_import_summarize(const bl_import_result *r, bl_import_summary *s);
/* Note i ("FILE[:LINE]: what, and what was done"), or NULL. */
BL_API const char *bl_import_note(const bl_import_result *r, size_t i);
/* Data file i written: its path, its schema's path, the rows added to it, and whether the schema was
 * written now (1) or one was there and kept (0). Any out pointer may be NULL. BL_ERANGE past the end. */
BL_API bl_status bl_import_output(const bl_import_result *r, size_t i, const char **data, const char **schema,
                                  size_t *added, int *schema_written);

#ifdef __cplusplus
}
#endif
#endif /* BELLAMY_TRAIN_H */
