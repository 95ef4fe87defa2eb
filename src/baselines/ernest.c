/* ernest.c — the Ernest baseline: runtime = θ0 + θ1/x + θ2·ln x + θ3·x with θ ≥ 0, fitted by NNLS.
 *
 * The design matrix columns are scaled to unit norm before the NNLS (a positive scaling keeps the
 * constraint θ ≥ 0 and evens out the very different magnitudes of 1/x and x), then θ is unscaled.
 * An all-zero column (ln x when every x is 1) is left unscaled: its gradient is 0, so it never enters.
 * Not here: Ernest's experiment design (choosing which scale-outs to run), input-size features.
 */
#include "baselines/baselines.h"
#include "common/error.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Basis row at x: [1, 1/x, ln x, x]. */
static void ernest_basis(double x, double *row) {
    row[0] = 1.0;
    row[1] = 1.0 / x;
    row[2] = log(x);
    row[3] = x;
}

bl_status bl_baselines_check_runs(const char *who, const double *x, const double *y, int n,
                                  int y_positive, bl_error *err) {
    BL_CHECK_ARG(x != NULL && y != NULL, err, "%s: x and y must not be NULL", who);
    BL_CHECK_ARG(n > 0, err, "%s: need at least one run, got n = %d", who, n);
    for (int i = 0; i < n; i++) {
        BL_CHECK_ARG(isfinite(x[i]) && x[i] > 0.0, err,
                     "%s: scale-out x[%d] = %g must be finite and > 0", who, i, x[i]);
        BL_CHECK_ARG(isfinite(y[i]), err, "%s: runtime y[%d] = %g is not finite", who, i, y[i]);
        BL_CHECK_ARG(!y_positive || y[i] > 0.0, err, "%s: runtime y[%d] = %g must be > 0", who, i,
                     y[i]);
    }
    return BL_OK;
}

bl_status bl_ernest_fit(const double *x, const double *y, int n, bl_ernest *model, bl_error *err) {
    BL_CHECK_ARG(model != NULL, err, "ernest: model must not be NULL");
    memset(model, 0, sizeof *model);
    bl_status st = bl_baselines_check_runs("ernest", x, y, n, 0, err);
    if (st != BL_OK) return st;

    size_t cells, bytes;
    if (bl_mul_size((size_t)n, 4, &cells) || bl_mul_size(cells, sizeof(double), &bytes))
        return bl_seterr(err, BL_EINVAL, "ernest: %d runs are too many", n);
    double *A = malloc(bytes);
    if (A == NULL) return bl_seterr(err, BL_ENOMEM, "ernest: cannot allocate %zu bytes", bytes);

    double scale[4] = {0.0, 0.0, 0.0, 0.0};
    for (int i = 0; i < n; i++) {
        ernest_basis(x[i], A + (size_t)i * 4);
        for (int j = 0; j < 4; j++) scale[j] += A[(size_t)i * 4 + j] * A[(size_t)i * 4 + j];
    }
    for (int j = 0; j < 4; j++) scale[j] = scale[j] > 0.0 ? sqrt(scale[j]) : 1.0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < 4; j++) A[(size_t)i * 4 + j] /= scale[j];

    double theta[4];
    st = bl_nnls(A, n, 4, y, theta, NULL, 0, err);
    free(A);
    if (st != BL_OK) return bl_prefixerr(err, "ernest");
    for (int j = 0; j < 4; j++) model->theta[j] = theta[j] / scale[j];
    return BL_OK;
}

double bl_ernest_predict(const bl_ernest *model, double x) {
    if (model == NULL || !isfinite(x) || !(x > 0.0)) return NAN;
    double row[4];
    ernest_basis(x, row);
    return model->theta[0] * row[0] + model->theta[1] * row[1] + model->theta[2] * row[2] +
           model->theta[3] * row[3];
}
