/* seen.h — what a model's training rows held (bl_model_seen) and what its last fine-tuning's runs held
 * (bl_model_tuned), both declared in model.h: recorded from the rows, copied with the model, kept in
 * the model file (groups `seen` and `finetune`, models/README.md) and read back. The public API
 * compares a request with them (values never seen, numbers and scale-outs outside the ranges) and
 * fills a property a context leaves out when the rows all had one value of it.
 * Not here: the warnings' wording (src/api), printing.
 */
#ifndef BL_MODEL_SEEN_H
#define BL_MODEL_SEEN_H

#include "model/model.h"
#include "modelfile/modelfile.h"

/* m->seen from every row of ds (properties matched by name; ds must have each of m's). */
bl_status bl_model_seen_record(bl_model *m, const bl_dataset *ds, bl_error *err);

/* m->tuned from rows[0..n) of runs (rows NULL: every row). */
bl_status bl_model_tuned_record(bl_model *m, const bl_dataset *runs, const size_t *rows, size_t n, bl_error *err);

/* The fine-tuned model's fit to its n runs (scale-outs, runtimes, its predictions and the prior's),
 * and from it m->tuned.disagreement (the fit's and the prior's share; bl_finetune replaces it by the
 * held-out error where it has one); nothing when m->tuned is not recorded. */
bl_status bl_model_tuned_set_fit(bl_model *m, const double *x, const double *y, const double *pred,
                                 const double *prior, size_t n, bl_error *err);

/* Replaces m->tuned.context by values[0..n_props) (network order; NULL entries become ""), for a
 * caller that knows the context better than the runs table does (per-machine values). */
bl_status bl_model_tuned_set_context(bl_model *m, const char *const *values, bl_error *err);

/* Copies src's seen, tuned, calibration and member_epochs records into dst (same properties); frees them. */
bl_status bl_model_records_copy(bl_model *dst, const bl_model *src, bl_error *err);
void bl_model_records_free(bl_model *m);

/* The records into a model-file record, and back (absent groups: known = 0; malformed: BL_EFORMAT
 * naming the attribute). */
bl_status bl_model_records_save(const bl_model *m, bl_modelrec *rec, bl_error *err);
bl_status bl_model_records_load(bl_model *m, const bl_modelrec *rec, bl_error *err);

/* The entries of property i in m->seen: *first and *n (0 when none). */
void bl_model_seen_span(const bl_model *m, size_t i, size_t *first, size_t *n);

/* The one value every training row had for property i (the stored schema's constant is not looked
 * at here), or NULL when the rows had several, or none is recorded. */
const char *bl_model_seen_only_value(const bl_model *m, size_t i);

#endif /* BL_MODEL_SEEN_H */
