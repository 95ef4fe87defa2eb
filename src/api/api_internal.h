/* api_internal.h — what src/api/api.c shares with src/api/train.c and the tests (not exported: no
 * BL_API): the predictor's layout, bl_predictor_finetune_file in its two steps on internal data sets
 * (train.c wraps them as bl_runs_load and bl_predictor_finetune_data for programs: the CLIs and the
 * scheduler use those, never this header), and the check of a runs schema against a model.
 * Not here: anything the public header (include/bellamy/bellamy.h) promises.
 */
#ifndef BL_API_API_INTERNAL_H
#define BL_API_API_INTERNAL_H

#include "bellamy/bellamy.h"
#include "data/dataset.h"
#include "data/schema.h"
#include "model/model.h"
#include "model/fcache.h"

/* A predictor: one model plus what the public API adds (api.c; train.c reads it too). */
struct bl_predictor {
    bl_model      *m;
    unsigned char *total;     /* [m->n_props] 1: cluster total (given per machine) */
    int            any_total; /* some property is a cluster total */
    bl_fcache     *fc;        /* f's outputs per scale-out (the model never changes once wrapped) */
    char         **fill;      /* [m->n_props] the value used when a context leaves the property out, or NULL */
    unsigned char *fill_from; /* [m->n_props] FILL_SCHEMA, FILL_SEEN or FILL_TUNED */
    bl_schema     *schema;    /* the schema stored in the model, parsed (NULL: none) */
    bl_encoder     enc;       /* the model's encoder settings, checked when the predictor was made */
};

enum { FILL_SCHEMA = 1, FILL_SEEN = 2, FILL_TUNED = 3 }; /* bl_predictor_prop_default's *from */

/* A predictor around m, taking ownership of m (freed on failure). */
bl_status bl_predictor_wrap(bl_model *m, bl_predictor **out, bl_error *err);

/* Fine-tuning options of the public bl_tune_opts (NULL: the defaults), checked: BL_EINVAL naming the field. */
bl_status bl_tune_opts_apply(const bl_tune_opts *o, bl_finetune_opts *f, bl_error *err);

/* Checks that the runs' schema describes the model's properties: the same names, essential or
 * optional, number or text, and cluster total or not (the last only when the model stores its
 * schema). BL_EFORMAT naming the schema file, line and property otherwise (bl_schema_check_props). */
bl_status bl_model_check_runs_schema(const bl_model *m, const bl_schema *runs, bl_error *err);
/* Runs read through the schema stored in m (sc, parsed): the columns sc names that data_path's header
 * lacks, in one message naming the model, what it was pre-trained for and the ways out (another job's
 * runs, or columns named otherwise). BL_OK when none is missing or the header cannot be read. */
bl_status bl_model_check_runs_columns(const bl_model *m, const bl_schema *sc, const char *data_path, bl_error *err);

/* The runs bl_predictor_finetune_file would fine-tune on: data_path read through schema_path (NULL:
 * the schema stored in the model), with the model's encoder settings, after the schema check above;
 * BL_EINVAL for a file without runs. Free with bl_dataset_free. The runs may span several contexts:
 * (*out)->n_contexts says how many (bl_dataset_context_spread says how they differ). */
bl_status bl_predictor_load_runs(const bl_predictor *base, const char *data_path, const char *schema_path,
                                 bl_dataset **out, bl_error *err);
/* The same; skip_invalid = 1 leaves invalid rows out, each named in (*out)->skipped (bl_dataset_load_skip). */
bl_status bl_predictor_load_runs_skip(const bl_predictor *base, const char *data_path, const char *schema_path,
                                      int skip_invalid, bl_dataset **out, bl_error *err);

/* Fine-tunes a copy of base on every row of runs (from bl_predictor_load_runs), as
 * bl_predictor_finetune_file does; every row counts, whatever its context. */
bl_status bl_predictor_finetune_runs(const bl_predictor *base, const bl_dataset *runs, const bl_tune_opts *o,
                                     bl_predictor **out, bl_error *err);

#endif /* BL_API_API_INTERNAL_H */
