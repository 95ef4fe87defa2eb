/* fcache.h — f's outputs kept per scale-out for a model whose weights no longer change.
 *
 * f maps a scale-out to f_out units without looking at the context, and a scheduler asks for the same
 * scale-outs again and again; so a prediction may read f's outputs from this table and run only z
 * (and the members' median). Whole scale-outs 1..BL_FCACHE_MAX are kept, in chunks of 64 computed on
 * first use; other scale-outs are computed on each call. Predictions through the cache equal
 * bl_model_predict's bit for bit (the same kernels compute f either way).
 * Thread safety: any number of threads may predict through one cache at once (chunks are published
 * with atomic compare-and-swap). The model must not change while a cache of it exists: a model that
 * is still trained (fine-tuning's cross-validation) predicts with bl_model_predict.
 */
#ifndef BL_MODEL_FCACHE_H
#define BL_MODEL_FCACHE_H

#include "model/model.h"

#define BL_FCACHE_MAX 1024

typedef struct bl_fcache bl_fcache;

/* An empty cache for m (nothing computed yet); NULL when out of memory. */
bl_fcache *bl_fcache_new(const bl_model *m);
void bl_fcache_free(bl_fcache *c);

/* bl_model_predict through the cache (c may be NULL: no cache), for scale-outs the caller checked
 * (each > 0 and finite: the API does, once per request). */
bl_status bl_model_predict_cached(const bl_model *m, bl_fcache *c, const double *ctx, const double *x, size_t n,
                                  double *out, bl_error *err);

#endif /* BL_MODEL_FCACHE_H */
