/* scaler.c — scale-out features [1/x, ln x, x] and the per-feature min-max scaler.
 * The scaler is fitted on training rows only and its bounds are stored with a model, so inference
 * maps new scale-outs exactly as training did. Not here: choosing which rows are training rows. */
#include "encode/encode.h"
#include "common/error.h"

#include <math.h>

void bl_scaleout_features_forward(const double *x, size_t n, double *out) {
    for (size_t i = 0; i < n; i++) {
        out[i * BL_SCALEOUT_NFEAT + 0] = 1.0 / x[i];
        out[i * BL_SCALEOUT_NFEAT + 1] = log(x[i]);
        out[i * BL_SCALEOUT_NFEAT + 2] = x[i];
    }
}

bl_status bl_minmax_fit(bl_minmax *s, const double *x, size_t n, size_t dim, bl_error *err) {
    BL_CHECK_ARG(s && x, err, "min-max fit: NULL argument");
    BL_CHECK_ARG(n > 0, err, "min-max fit: no rows to fit on");
    BL_CHECK_ARG(dim >= 1 && dim <= BL_MINMAX_MAXDIM, err, "min-max fit: %zu features (1..%d allowed)",
                 dim, BL_MINMAX_MAXDIM);
    bl_minmax t = { .dim = dim };
    for (size_t j = 0; j < dim; j++) t.lo[j] = t.hi[j] = x[j];
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < dim; j++) {
            double v = x[i * dim + j];
            if (!isfinite(v))
                return bl_seterr(err, BL_EINVAL, "min-max fit: row %zu feature %zu is not finite", i, j);
            if (v < t.lo[j]) t.lo[j] = v;
            if (v > t.hi[j]) t.hi[j] = v;
        }
    }
    *s = t;
    return BL_OK;
}

/* Range used for feature j: hi − lo, or 1 when degenerate (scikit-learn's _handle_zeros_in_scale). */
static double range_of(const bl_minmax *s, size_t j) {
    double r = s->hi[j] - s->lo[j];
    return r > 0.0 ? r : 1.0;
}

void bl_minmax_transform(const bl_minmax *s, const double *x, size_t n, double *y) {
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < s->dim; j++)
            y[i * s->dim + j] = (x[i * s->dim + j] - s->lo[j]) / range_of(s, j);
}

void bl_minmax_inverse(const bl_minmax *s, const double *y, size_t n, double *x) {
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < s->dim; j++)
            x[i * s->dim + j] = y[i * s->dim + j] * range_of(s, j) + s->lo[j];
}
