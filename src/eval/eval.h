/* eval.h — the evaluation harness behind `bellamy-eval`: the Bellamy authors' protocol (random
 * few-run splits per context, interpolation and extrapolation test runs, k-fold pre-training over
 * the other contexts) applied to Bellamy, Bellamy without pre-training, Ernest and Bell.
 *
 * Flow: bl_eval_init → bl_eval_add_algo (one per data file) → bl_eval_draw_splits or
 * bl_eval_read_splits → bl_eval_pretrain → bl_eval_fit (which ends with the intervals and the
 * decisions, interval.c) → bl_eval_report → bl_eval_free.
 * Every step returns a bl_status and fills a bl_error; only the log stream (opts.log, may be NULL)
 * and bl_eval_report's table are printed. Results depend on the seed only, never on --threads
 * (each fit derives its own seed from the seed and its training rows).
 *
 * Not here: option parsing (eval_cli.c), the model itself (src/model), the baselines (src/baselines).
 */
#ifndef BL_EVAL_EVAL_H
#define BL_EVAL_EVAL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "bellamy/bellamy.h"
#include "data/dataset.h"
#include "model/model.h"

/* BL_EVAL_FLOOR is a reference, not a predictor: the median of the test run's repetitions (the other
 * runs of its context at its scale-out), which no method could know in advance — the error that
 * run-to-run noise alone leaves, and so how much of each method's error could still be removed. */
enum { BL_EVAL_BELLAMY = 0, BL_EVAL_SCRATCH = 1, BL_EVAL_ERNEST = 2, BL_EVAL_BELL = 3, BL_EVAL_FLOOR = 4, BL_EVAL_N_METHODS = 5 };
enum { BL_EVAL_INTERP = 0, BL_EVAL_EXTRAP = 1 };

#define BL_EVAL_MAX_N 16

/* Intervals and decisions (interval.c). Every method that predicts gets a BL_EVAL_COVERAGE interval
 * at each test run, and per fit group (one training set) three choices among the distinct scale-outs
 * of its context, judged against the measured means:
 *   BL_EVAL_GOAL_FASTEST   the fastest (regret: mean(chosen) / mean(best) − 1),
 *   BL_EVAL_GOAL_CHEAPEST  the cheapest at a price of 1 per machine-hour (cost x·t/3600; regret in cost),
 *   BL_EVAL_GOAL_DEADLINE  the cheapest whose interval's upper end meets BL_EVAL_DEADLINE × the
 *                          context's best mean runtime, at confidence BL_EVAL_COVERAGE (regret in cost
 *                          against the cheapest whose mean meets it; a miss when the chosen scale-out's
 *                          mean does not; "none" when the chooser found no candidate that meets it).
 * Bellamy's interval is its fine-tuned model's own (the calibration of its pre-training, models/README.md
 * §P10); bellamy-scratch, Ernest and Bell have no calibration of their own, so theirs come from the
 * other evaluated contexts: for a split of context c, q = the group-weighted conformal quantile (each
 * context weighs 1; need = coverage·(G + 1), unbounded when that exceeds G: §P10 step 5) of
 * |ln(actual / predicted)| over the same method's splits of the other contexts of the algorithm at the
 * same n and kind, and the interval is predicted·e^(±q). */
#define BL_EVAL_COVERAGE 0.9
#define BL_EVAL_DEADLINE 1.25
enum { BL_EVAL_GOAL_FASTEST = 0, BL_EVAL_GOAL_CHEAPEST = 1, BL_EVAL_GOAL_DEADLINE = 2, BL_EVAL_N_GOALS = 3 };

/* "bellamy", "bellamy-scratch", "ernest", "bell", "noise-floor"; NULL when out of range. */
const char *bl_eval_method_name(int m);
/* -1 when unknown. */
int bl_eval_method_index(const char *name);
/* "interp" / "extrap". */
const char *bl_eval_kind_name(int kind);

typedef struct bl_eval_opts {
    uint64_t seed;            /* splits, folds, context choice, fits (default 1) */
    int      threads;         /* fits in parallel; also bl_pretrain_opts.threads (default 1) */
    size_t   contexts;        /* contexts evaluated per data file; 0 = all (default 6) */
    size_t   splits_per_cell; /* up to K splits per context × n × kind (default 24) */
    int      max_n;           /* n = 1..max_n training runs (default 5) */
    int      folds;           /* k-fold over contexts for pre-training (default 3) */
    unsigned methods;         /* bit mask of 1u << BL_EVAL_* (default all) */
    int      target_scaling;  /* for bellamy-scratch's fresh models (pre-training uses pre.target_scaling) */
    bl_pretrain_opts pre;
    bl_finetune_opts ft;
    FILE    *log;             /* progress lines (NULL: silent) */
    int      totals_per_machine; /* encode cluster-total numbers per machine (bl_encode_settings) */
    int      numbers;          /* bl_encode_settings.numbers: BL_ENC_NUMBERS_BINARY (default), _LOG, _RANGE or _BOTH */
    const char *fold_by;      /* NULL: folds of contexts; a property name: the contexts grouped by that
                                 property's value, whole groups to a fold, so every evaluated context's
                                 value is absent from its fold model's pre-training data */
    int      ensemble;        /* bellamy: fine-tune the best `ensemble` trials of each fold's search and
                                 combine their predictions (default 1: the winner alone) */
    int      ensemble_seeds;  /* 1: the members are the winners of searches with seeds seed, seed+1, ... */
    int      ensemble_agg;    /* 0 mean, 1 median, 2 geometric mean */
    const char *model_cache;  /* folder to keep pre-trained fold models in and reuse them from
                                 (NULL: none); the file name carries every setting that decides
                                 the model, so a changed setting never reuses a stale one */
} bl_eval_opts;

void bl_eval_opts_default(bl_eval_opts *o);
/* The CI smoke-test settings: 2 contexts, 2 splits per cell, pre-training 200 epochs × 2 trials
 * (grace 100), fine-tuning at most 500 epochs (patience 200). */
void bl_eval_opts_quick(bl_eval_opts *o);

typedef struct bl_eval_algo {
    char       *name;            /* the data file's stem, e.g. "grep" */
    char       *data_path;
    uint64_t    schema_hash;     /* XXH64 of the schema file (and of the pre-training schema, if any):
                                    part of the model cache's file names */
    bl_dataset *ds;
    size_t     *row_of_src;      /* [max_src + 1] data row → ds row, SIZE_MAX when absent */
    size_t      n_src;           /* max_src + 1 */
    /* Pre-training: either k-fold over ds's own contexts, or (cross-environment) one model
     * pre-trained on every row of pre_ds. */
    bl_dataset *pre_ds;          /* NULL: k-fold */
    char       *pre_path;
    int         n_folds;
    int        *ctx_fold;        /* [ds->n_contexts] fold of each context (all 0 when cross) */
    bl_model  **fold_model;      /* [n_folds × ensemble] (fold f's members at f·ensemble + j), NULL
                                    until pre-trained (or when not needed) */
    double     *fold_seconds;    /* [n_folds] pre-training wall time, NAN when not run */
    size_t     *fold_rows;       /* [n_folds] pre-training rows */
    size_t     *fold_contexts;   /* [n_folds] pre-training contexts */
} bl_eval_algo;

typedef struct bl_eval_split {
    char   *id;
    size_t  algo;
    size_t  context;             /* ds context index (of the test row) */
    int     n;                   /* training runs */
    int     kind;                /* BL_EVAL_INTERP / BL_EVAL_EXTRAP */
    size_t  train[BL_EVAL_MAX_N];/* ds row indices */
    size_t  test;                /* ds row index */
    size_t  group;               /* fit group: splits sharing algorithm and training rows */
    double  pred[BL_EVAL_N_METHODS];   /* NAN when the method was not run */
    double  lo[BL_EVAL_N_METHODS], hi[BL_EVAL_N_METHODS]; /* the BL_EVAL_COVERAGE interval of pred: NAN
                                          when there is none (a model without calibration, the noise
                                          floor, a failed prediction); lo 0 and hi INFINITY when unbounded */
    double  fit_ms[BL_EVAL_N_METHODS]; /* wall time of the group's fit (same for its splits) */
} bl_eval_split;

/* The decisions' candidates of one fit group: every distinct scale-out of its context. */
typedef struct bl_eval_grid {
    size_t  nx;
    double *x;                   /* [nx] ascending */
    double *mean;                /* [nx] the measured mean runtime over the context's runs at x */
    size_t *row;                 /* [nx] a ds row of the context at x (its context term) */
    double *pred, *lo, *hi;      /* [BL_EVAL_N_METHODS × nx]: method m's at m·nx + i (NAN: none) */
    unsigned char *known;        /* [BL_EVAL_N_METHODS × nx]: 0 where the method's runtime is unknown
                                    (bellamy: beyond 4 × its support, as bl_choose_scale_out) */
} bl_eval_grid;

/* One decision of one method for one fit group. */
typedef struct bl_eval_decision {
    int    made;                 /* 0: no decision (method not run, no prediction, or — the deadline with
                                    confidence — no interval: a model without calibration) */
    double chosen, best;         /* the chosen and the best scale-out under the measured means */
    double regret;               /* runtime regret (fastest), cost regret (cheapest, deadline) */
    int    miss, none;           /* deadline only: the chosen mean exceeds the target; no candidate's upper
                                    end met it (the chooser's fallback, the fastest, is then scored) */
} bl_eval_decision;

typedef struct bl_eval {
    bl_eval_opts   o;
    size_t         n_algos;
    bl_eval_algo  *algos;
    size_t         n_splits, cap_splits;
    bl_eval_split *splits;
    size_t         n_groups;
    size_t        *group_first;  /* [n_groups + 1] offsets into group_split */
    size_t        *group_split;  /* [n_splits] split indices grouped */
    double         fit_wall_s;   /* wall time of bl_eval_fit */
    bl_eval_grid  *grids;        /* [n_groups], filled by bl_eval_fit */
    bl_eval_decision *decisions; /* [n_groups × BL_EVAL_N_METHODS × BL_EVAL_N_GOALS], by bl_eval_fit */
} bl_eval;

bl_status bl_eval_init(bl_eval *ev, const bl_eval_opts *o, bl_error *err);
void bl_eval_free(bl_eval *ev);

/* Loads data_path through schema_path as algorithm `name`. With pre_data/pre_schema (both or
 * neither), Bellamy is pre-trained once on that file (cross-environment case) instead of k-fold over
 * the data file's own contexts. */
bl_status bl_eval_add_algo(bl_eval *ev, const char *name, const char *data_path, const char *schema_path,
                           const char *pre_data, const char *pre_schema, bl_error *err);

/* Draws the splits (seeded; see bench/README.md for the protocol). */
bl_status bl_eval_draw_splits(bl_eval *ev, bl_error *err);
/* Reads a split file (format in bench/README.md); every bad field is "FILE:LINE: message". */
bl_status bl_eval_read_splits(bl_eval *ev, const char *path, bl_error *err);
/* The same from text[0..len) in memory, named name in messages (for the fuzz target). */
bl_status bl_eval_read_splits_mem(bl_eval *ev, const char *name, const char *text, size_t len, bl_error *err);
bl_status bl_eval_write_splits(const bl_eval *ev, const char *path, bl_error *err);

/* Pre-trains every fold model that some split needs (only when bellamy is among the methods). */
bl_status bl_eval_pretrain(bl_eval *ev, bl_error *err);
/* Fits every method on every split group, on opts.threads threads, predicting each split's test run
 * and every scale-out of its context (with intervals where the method has its own), then
 * bl_eval_intervals and bl_eval_decide. */
bl_status bl_eval_fit(bl_eval *ev, bl_error *err);

/* interval.c. The grids of every fit group (x, means, rows; predictions NAN), made by bl_eval_fit, and
 * their release (bl_eval_free does it too). */
bl_status bl_eval_grids_make(bl_eval *ev, bl_error *err);
void bl_eval_grids_free(bl_eval *ev);
/* The cross-context intervals of bellamy-scratch, Ernest and Bell (at every test run and
 * every candidate of the grids; their point predictions must be there), from the splits' errors. */
bl_status bl_eval_intervals(bl_eval *ev, bl_error *err);
/* Every decision of every group and method from the grids (after bl_eval_intervals). */
bl_status bl_eval_decide(bl_eval *ev, bl_error *err);
/* The group-weighted conformal quantile at coverage of score[0..n) whose groups are group[0..n) (any
 * labels): each group weighs 1, shared among its scores; with G groups, the smallest score at which
 * the cumulative weight reaches coverage·(G + 1); INFINITY when that exceeds G (too few groups), and
 * for n = 0. The library's own (bl_calib_quantile), so that the baselines' intervals follow the
 * same rule as Bellamy's. */
double bl_eval_group_quantile(const double *score, const size_t *group, size_t n, double coverage);
/* One decision among nx candidates x[] with measured means mean[], predictions pred[], intervals
 * lo[]/hi[] (NULL: none, as for a model without calibration) and known[] (NULL: all known), through
 * bl_choose_interval. The deadline is BL_EVAL_DEADLINE × the smallest mean. */
void bl_eval_decide_one(int goal, const double *x, const double *mean, const double *pred, const double *lo,
                        const double *hi, const unsigned char *known, size_t nx, bl_eval_decision *d);

/* Writes predictions.tsv, summary.tsv, pretrain.tsv, plot.dat, plot.gp into out_dir (which must
 * exist), runs gnuplot for mre.svg (absent gnuplot: a note on `table`, still BL_OK), and prints the
 * readable table to `table` (may be NULL). */
bl_status bl_eval_report(const bl_eval *ev, const char *out_dir, FILE *table, bl_error *err);

/* The command line (argv[0] is the program name); returns the exit code. */
int bl_eval_main(int argc, char **argv);
/* bl_eval_main as one rank of an MPI job (src/dist; NULL: alone): the ranks share every pre-training's
 * trials (bl_train_ranks) and the split groups' fits; rank 0 alone prints and writes --out, and no rank
 * uses --model-cache. */
struct bl_dist;
int bl_eval_main_ranks(int argc, char **argv, struct bl_dist *dist);

#endif /* BL_EVAL_EVAL_H */
