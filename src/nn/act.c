/* act.c — activation gains, AlphaDropout's coefficients and Kaiming-normal initialisation (act.h). */
#include "nn/act.h"

#include <math.h>

#include "common/error.h"

double bl_act_gain(bl_act act) {
    switch (act) {
    case BL_ACT_SELU: return 0.75;
    case BL_ACT_TANH: return 5.0 / 3.0;
    case BL_ACT_IDENTITY: return 1.0;
    }
    return 1.0;
}

bl_status bl_alpha_dropout_coef(double p, double *a, double *b, bl_error *err) {
    BL_CHECK_ARG(a != NULL && b != NULL, err, "bl_alpha_dropout_coef: NULL argument");
    if (!(p >= 0.0 && p <= 1.0))
        return bl_seterr(err, BL_ERANGE, "bl_alpha_dropout_coef: probability %g is outside [0, 1]", p);
    if (p == 1.0) { /* everything dropped: the output is 0 (PyTorch multiplies by zero) */
        *a = 0.0;
        *b = 0.0;
        return BL_OK;
    }
    const double ap = BL_SELU_ALPHA_PRIME;
    *a = 1.0 / sqrt((1.0 - p) * (1.0 + p * ap * ap));
    *b = -(*a) * ap * p;
    return BL_OK;
}

bl_status bl_init_kaiming_normal(double *w, int rows, int cols, double gain, bl_rng *rng, bl_error *err) {
    BL_CHECK_ARG(w != NULL && rng != NULL, err, "bl_init_kaiming_normal: NULL argument");
    BL_CHECK_ARG(rows > 0 && cols > 0, err, "bl_init_kaiming_normal: shape %d x %d must be positive", rows, cols);
    if (!(gain >= 0.0 && isfinite(gain)))
        return bl_seterr(err, BL_ERANGE, "bl_init_kaiming_normal: gain %g must be finite and >= 0", gain);
    const double std = gain / sqrt((double)cols);
    const size_t n = (size_t)rows * (size_t)cols;
    for (size_t i = 0; i < n; i++) w[i] = std * bl_rng_normal(rng);
    return BL_OK;
}
