/* gen_userdata.h — a seeded generator of data sets shaped like users' own run histories (issue 16),
 * for the stress suite (test_stress.c) and the seed corpus of the training fuzz target.
 *
 * One call writes into a folder a schema, a data file of pre-training rows and a runs file (a few
 * runs of one context, to fine-tune on), all drawn from one seed through the project's generator
 * (common/rng.h), so a seed names a data set on every machine. What it draws, each within what
 * datasets/README.md accepts:
 *   - 1..8 properties (sometimes 10), every mix of essential and optional (at least one essential),
 *     text and number, sources column, join, template, const and per_machine, cluster totals both
 *     ways (per_machine, and columns listed in cluster_totals), names known and x_ extensions
 *     (non-ASCII and with blanks too), in schema order interleaved;
 *   - 1..30 contexts (often exactly one), 1..10 scale-outs from 1..64 per context (often one per
 *     context), 1..5 repetitions, runtimes from 1e-3 s to the 1e12 s bound in s or ms;
 *   - numbers up to 2^39 − 1 (the binarizer's limit), 2^38 and its neighbours included, written as
 *     "16", "16.0" or "1.6e1"; text with non-ASCII UTF-8, empty text, hundreds of distinct values;
 *   - column names unlike C3O's, extra columns no property reads, comma or tab (by extension or,
 *     for .txt, by the header), byte-order marks, CRLF, blank lines, blanks around fields, quoted
 *     fields (drawn from a stream of their own, so that a seed's other draws stay as they were).
 * A flaw (gen_flaw) spoils one thing of such a set so that exactly one step must refuse it.
 * Not here: training or checking (test_stress.c).
 */
#ifndef BL_TESTS_GEN_USERDATA_H
#define BL_TESTS_GEN_USERDATA_H

#include <stddef.h>
#include <stdint.h>

#include "bellamy/bellamy.h"

#define GEN_PROPS_MAX 10
#define GEN_PRED_MAX 16

/* What a flawed set spoils; GEN_VALID spoils nothing. */
typedef enum gen_flaw {
    GEN_VALID = 0,
    GEN_FLAW_DATA_BAD_UTF8,        /* a text field holds an invalid UTF-8 sequence */
    GEN_FLAW_DATA_NUL,             /* a data row holds a NUL byte */
    GEN_FLAW_NUMBER_AT_LIMIT,      /* a number column holds 2^39, one past the binarizer's limit */
    GEN_FLAW_NUMBER_HUGE,          /* a number column holds 1e300 */
    GEN_FLAW_NUMBER_FRACTION,      /* a number column holds 2.5 */
    GEN_FLAW_NUMBER_NEGATIVE,      /* a number column holds -3 */
    GEN_FLAW_TOTAL_AT_LIMIT,       /* a per_machine value × the largest scale-out reaches 2^39 */
    GEN_FLAW_CONST_AT_LIMIT,       /* a number const of 2^39 */
    GEN_FLAW_RUNTIME_TOO_LARGE,    /* a runtime above 1e12 s */
    GEN_FLAW_RUNTIME_ZERO,         /* a runtime of 0 */
    GEN_FLAW_SCALE_OUT_FRACTION,   /* 2.5 machines */
    GEN_FLAW_SCALE_OUT_ZERO,       /* 0 machines */
    GEN_FLAW_RAGGED_ROW,           /* a row with one field too many */
    GEN_FLAW_DUPLICATE_COLUMN,     /* two header columns with one name */
    GEN_FLAW_SCHEMA_BAD_UTF8,      /* invalid UTF-8 in the schema */
    GEN_FLAW_SCHEMA_TEXT_TOTAL,    /* per_machine on a text property */
    GEN_FLAW_SCHEMA_UNKNOWN_PROP,  /* a property name that is neither known nor x_ */
    GEN_FLAW_RUNS_MISSING_COLUMN,  /* the runs file lacks a column the schema reads */
    GEN_FLAW_RUNS_BAD_UTF8,        /* invalid UTF-8 in the runs file */
    GEN_FLAW_RUNS_NUMBER_AT_LIMIT, /* 2^39 in a number column of the runs file */
    GEN_FLAW_PREDICT_AT_LIMIT,     /* a context value of 2^39 for a number property */
    GEN_FLAW_COUNT
} gen_flaw;

/* The step that must refuse a flawed set. */
typedef enum gen_stage {
    GEN_STAGE_NONE = 0,    /* valid: every step succeeds */
    GEN_STAGE_LOAD,        /* loading the schema and data file */
    GEN_STAGE_RUNS,        /* reading the runs for fine-tuning */
    GEN_STAGE_PREDICT      /* predicting with the context values */
} gen_stage;

typedef struct gen_opts {
    size_t max_rows;       /* most pre-training rows (default 1500: no cut): repetitions and scale-outs are cut */
    int    small;          /* 1: at most 3 properties, 4 contexts, 3 scale-outs, 2 repetitions (for a
                              fuzz corpus) */
} gen_opts;

typedef struct gen_set {
    uint64_t  seed;
    gen_flaw  flaw;
    gen_stage stage;                    /* the step that must refuse it */
    const char *bad_path;               /* the file its message must name (NULL: stage PREDICT) */
    char      bad_word[80];             /* text its message must hold too ("" for none) */
    char      dir[900];
    char      data_path[1024], schema_path[1024], runs_path[1024];
    /* what the loader must find in a valid set */
    size_t    n_props, n_rows, n_contexts, n_runs;
    int       n_numbers;                /* number properties */
    /* the runs' context, as bl_predict takes it (cluster totals per machine; some optional
     * properties left out), and scale-outs to predict at */
    size_t        n_ctx;
    bl_prop_value ctx[GEN_PROPS_MAX];
    char          ctx_name[GEN_PROPS_MAX][64], ctx_val[GEN_PROPS_MAX][160];
    int           exact_ctx;            /* 1: ctx gives every property, each as in the runs file (so
                                           fine-tuning on ctx and the runs' scale-outs and runtimes is
                                           fine-tuning on the runs file) */
    size_t        n_x;
    double        x[GEN_PRED_MAX];
    /* the generator's own curve for the runs' context: the runtime (s) at x[i] without noise, and the
       noise's bound: every run's runtime lies within curve · (1 ± noise) (the 1e-3 s and 1e12 s bounds
       aside); x[first_run_x ..] are the runs' own scale-outs */
    double        curve[GEN_PRED_MAX];
    double        noise;
    size_t        first_run_x;
    int           runs_ctx_pretrained;  /* 1: the runs' context is one of the pre-training data's */
    char          summary[1024];        /* one line saying what was drawn, for messages */
} gen_set;

void gen_opts_default(gen_opts *o);

/* Writes the set of seed (spoilt by flaw) into dir (made when missing) as dir/schema.txt, a data file
 * and a runs file (names and extensions drawn). Returns 0, or -1 with a reason in why[cap] when a
 * file cannot be written. o NULL: defaults. */
int gen_userdata(uint64_t seed, gen_flaw flaw, const gen_opts *o, const char *dir, gen_set *out, char *why,
                 size_t cap);

/* A short name of a flaw ("data-bad-utf8"). */
const char *gen_flaw_name(gen_flaw flaw);

#endif
