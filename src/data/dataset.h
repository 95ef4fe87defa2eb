/* dataset.h — a data file read through a schema: per row the scale-out, the runtime in seconds and
 * the context; per property a table of its DISTINCT values with their encoded vectors, and per row
 * the index of the row's value in that table (so a model reads a row's property vector as
 * props[p].vectors + props[p].row_value[row] * vec_len, with no re-encoding).
 *
 * Contexts: rows with identical values of every essential property that is not a cluster total
 * (the scale-out and the runtime never count). Contexts and distinct values are numbered in order
 * of first appearance in the file, so a data set always loads to the same numbering.
 *
 * Errors name "FILE:LINE:COLUMN" (header = line 1; the line the field is on, bl_reader_where) for
 * every bad field: a missing number,
 * non-numeric text, NaN/infinity, a negative or non-integral number or one ≥ 2^39 in a number
 * property, a scale-out that is not a whole number in 1..BL_SCALE_OUT_MAX, runtime ≤ 0 or above
 * BL_RUNTIME_MAX_S seconds, plus everything the reader and schema parser reject. A missing column's
 * message carries the reader's header hint (wrong delimiter, old Mac line ends) when there is one.
 * Not here: scaling of scale-out features (a model fits bl_minmax on its training rows).
 */
#ifndef BL_DATA_DATASET_H
#define BL_DATA_DATASET_H

#include <stddef.h>
#include <stdint.h>

#include "bellamy/bellamy.h"
#include "data/schema.h"
#include "encode/encode.h"

/* Largest scale-out (machines) a data row may have; the same bound as bellamy-predict --scale-out.
 * Scale-outs are machine counts: whole numbers from 1 to this. */
#define BL_SCALE_OUT_MAX 1000000

/* BL_RUNTIME_MAX_S (bellamy/bellamy.h, 1e12 s, some 30 000 years) is also the largest runtime (seconds,
 * after the schema's unit is applied) a data row may have: larger values are typos or unit mistakes,
 * and would give models whose target scale a model file refuses. */

typedef struct bl_dataset_prop {
    char        *name;
    int          essential;      /* 1 essential, 0 optional */
    bl_prop_kind kind;           /* BL_PROP_NUMBER → binarizer, BL_PROP_TEXT → hasher */
    int          cluster_total;  /* 1: grows with the scale-out; not part of context identity */
    size_t       n_values;       /* distinct values */
    char       **values;         /* [n_values] text of each (numbers in canonical decimal) */
    double      *vectors;        /* [n_values][vec_len] encoded values */
    uint32_t    *row_value;      /* [n_rows] index into values/vectors */
} bl_dataset_prop;

typedef struct bl_context {
    char   *label;               /* "machine_type=c4.2xlarge; job_args=computer; ..." */
    size_t  n_rows;
    size_t *rows;                /* [n_rows] row indices, ascending */
} bl_context;

typedef struct bl_dataset {
    char              *name;          /* data file path (or the label of an in-memory source) */
    uint64_t           data_hash;     /* XXH64, seed 0, of the data file's bytes */
    bl_encode_settings settings;      /* how vectors were encoded; vec_len = settings.vec_len */
    size_t             n_rows;
    double            *scale_out;     /* [n_rows] whole numbers in 1..BL_SCALE_OUT_MAX */
    double            *runtime_s;     /* [n_rows] seconds in (0, BL_RUNTIME_MAX_S] */
    char              *runtime_column; /* the data file's runtime column, as the schema names it */
    const char        *runtime_unit;  /* its unit as the schema writes it: "s", "ms", "min" or "h" (static) */
    uint32_t          *context;       /* [n_rows] index into contexts */
    size_t            *src_row;       /* [n_rows] 0-based data-row index in the file (header excluded,
                                         blank lines not counted) */
    size_t            *src_lines;     /* [n_rows][2] the first and last line (1-based) of each row in the
                                         file: more than one when a quoted field holds line breaks */
    size_t             header_lines[2]; /* the same for the header */
    size_t             n_contexts;
    bl_context        *contexts;      /* [n_contexts] */
    size_t             n_props;
    bl_dataset_prop   *props;         /* [n_props] in schema order */
    size_t             n_skipped;     /* invalid rows left out (only when loaded with skip_invalid) */
    char             **skipped;       /* [min(n_skipped, BL_DATASET_SKIPPED_KEPT)] why, as
                                         "FILE:LINE:COLUMN: message", in file order */
} bl_dataset;

/* Most messages about skipped rows a data set keeps (n_skipped counts them all). */
#define BL_DATASET_SKIPPED_KEPT 100

/* Loads path through the schema file. delim: '\t', ',' or 0 (by extension). settings NULL → defaults. */
bl_status bl_dataset_load(const char *data_path, const char *schema_path, char delim,
                          const bl_encode_settings *settings, bl_dataset **out, bl_error *err);
/* Same with a parsed schema. */
bl_status bl_dataset_load_schema(const char *data_path, const bl_schema *schema, char delim,
                                 const bl_encode_settings *settings, bl_dataset **out, bl_error *err);
/* The same, but with skip_invalid = 1 a row with an invalid field (a number that is not one, a
 * blank runtime, a scale-out that is no number of machines, a ragged row, invalid UTF-8) is left out
 * and named in ds->skipped instead of failing the load; with every row invalid it still fails.
 * Errors of the file itself (header, missing columns, reading) fail as always. Without it, a blank,
 * non-numeric or non-positive runtime's message names both fixes: the row, or skip_invalid. */
bl_status bl_dataset_load_skip(const char *data_path, const char *schema_path, char delim,
                               const bl_encode_settings *settings, int skip_invalid, bl_dataset **out, bl_error *err);
bl_status bl_dataset_load_schema_skip(const char *data_path, const bl_schema *schema, char delim,
                                      const bl_encode_settings *settings, int skip_invalid, bl_dataset **out,
                                      bl_error *err);
/* Same from memory (delim must be '\t' or ','); name is used in messages and as ds->name. */
bl_status bl_dataset_load_mem(const char *name, const void *data, size_t len, char delim,
                              const bl_schema *schema, const bl_encode_settings *settings,
                              bl_dataset **out, bl_error *err);
bl_status bl_dataset_load_mem_skip(const char *name, const void *data, size_t len, char delim,
                                   const bl_schema *schema, const bl_encode_settings *settings, int skip_invalid,
                                   bl_dataset **out, bl_error *err);

/* A copy of ds (every row) whose number properties are encoded with `numbers` (a BL_ENC_NUMBERS_*
 * value; RANGE without bounds is LOG, BOTH is BINARY) and whose settings say so. */
bl_status bl_dataset_with_numbers(const bl_dataset *ds, uint32_t numbers, bl_dataset **out, bl_error *err);

/* A new data set of the given rows (indices into ds, in that order; repeats allowed). Distinct-value
 * tables are copied whole, so value indices agree with ds; contexts are renumbered in order of first
 * appearance among the chosen rows and keep their labels; src_row, name, data_hash and settings are
 * kept. An empty subset (n = 0) is allowed. */
bl_status bl_dataset_subset(const bl_dataset *ds, const size_t *rows, size_t n, bl_dataset **out,
                            bl_error *err);

void bl_dataset_free(bl_dataset *ds);

/* How the contexts of ds differ, for a message: into buf (cap bytes, always NUL-terminated)
 * "name: K values (a, b, c, ...); name2: ..." for every property that makes up a context's identity
 * (essential, not a cluster total) and has more than one value among the rows. Returns how many
 * properties differ (0 when ds has one context). */
size_t bl_dataset_context_spread(const bl_dataset *ds, char *buf, size_t cap);

/* How context c of ds differs from a context given as name/value pairs (cluster totals excluded:
 * ds records totals, a caller gives them per machine): into buf "name: 'a' in the data, 'b' given;
 * ..." for every essential property, and every optional one ctx gives, whose value differs; a
 * property ctx does not give is skipped. Numbers compare by value ("16.0" equals "16"). Returns how
 * many properties differ. */
size_t bl_dataset_context_diff(const bl_dataset *ds, size_t c, const bl_prop_value *ctx, size_t n_ctx,
                               char *buf, size_t cap);

/* Index of the property called name, or -1. */
long bl_dataset_find_prop(const bl_dataset *ds, const char *name);

/* The encoded vector of property p for row r: [settings.vec_len]. No bounds checks. */
static inline const double *bl_dataset_vec(const bl_dataset *ds, size_t p, size_t r) {
    return ds->props[p].vectors + (size_t)ds->props[p].row_value[r] * ds->settings.vec_len;
}

/* Scale-out features of every row: out [n_rows][BL_SCALEOUT_NFEAT] (unscaled). */
void bl_dataset_scaleout_features(const bl_dataset *ds, double *out);

/* Encodes one value given as text (e.g. from `--set name=value`) the way property `name` of
 * `kind` is encoded: out [settings->vec_len]. Numbers: BL_EFORMAT for text, NaN/infinity, negative or
 * non-integral values, BL_ERANGE for ≥ 2^(vec_len−1); text: BL_EFORMAT for invalid UTF-8. */
bl_status bl_encode_value(const char *name, bl_prop_kind kind, const char *value,
                          const bl_encode_settings *settings, double *out, bl_error *err);
/* The same for a number property encoded over fitted bounds (BL_ENC_NUMBERS_RANGE; range = lo, hi
 * in log2(1 + value), as a model keeps them). range NULL, a text property or another encoding:
 * exactly bl_encode_value. */
bl_status bl_encode_value_range(const char *name, bl_prop_kind kind, const char *value,
                                const bl_encode_settings *settings, const double *range, double *out,
                                bl_error *err);
/* bl_encode_value_range with an encoder whose settings were checked when it was made (value, name
 * and out not NULL): what encoding many values calls, so that the settings are checked once. */
bl_status bl_encoder_value(const bl_encoder *e, const char *name, bl_prop_kind kind, const char *value,
                           const double *range, double *out, bl_error *err);
/* Same for property p of ds. */
bl_status bl_dataset_encode_value(const bl_dataset *ds, size_t p, const char *value, double *out,
                                  bl_error *err);

#endif /* BL_DATA_DATASET_H */
