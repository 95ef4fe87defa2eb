/* act.h — the activations' constants and what initialisation and AlphaDropout derive from them.
 *
 *   SELU(x) = λx for x > 0, λα(eˣ − 1) for x ≤ 0       λ = 1.0507009873554805, α = 1.6732632423543772
 *   AlphaDropout (Klambauer et al. 2017, PyTorch semantics), drop probability p, α' = −λα:
 *     a = ((1 − p)(1 + p·α'²))^(−1/2),  b = −a·α'·p;  kept unit y = a·x + b, dropped unit y = a·α' + b
 * The kernels that evaluate these on data live in kern/ (reference and optimised copies).
 * Not here: any loop over data.
 */
#ifndef BL_NN_ACT_H
#define BL_NN_ACT_H

#include "bellamy/bellamy.h"
#include "common/rng.h"

/* SELU constants (Klambauer et al., 2017), as PyTorch uses them. */
#define BL_SELU_LAMBDA 1.0507009873554805
#define BL_SELU_ALPHA  1.6732632423543772
/* −λα: SELU's negative saturation value, which AlphaDropout assigns to dropped units (α'). */
#define BL_SELU_ALPHA_PRIME (-1.7580993408473766)

typedef enum bl_act {
    BL_ACT_IDENTITY = 0,
    BL_ACT_SELU     = 1,
    BL_ACT_TANH     = 2
} bl_act;

/* PyTorch's nn.init.calculate_gain: selu 3/4, tanh 5/3, identity (linear) 1. */
double bl_act_gain(bl_act act);

/* a and b above for drop probability p in [0, 1] (p == 1 gives a = b = 0).
 * BL_EINVAL: NULL a or b; BL_ERANGE: p outside [0, 1]. */
bl_status bl_alpha_dropout_coef(double p, double *a, double *b, bl_error *err);

/* Kaiming-normal, mode fan_in, as nn.init.kaiming_normal_: w[rows×cols] ~ N(0, (gain/√cols)²),
 * drawn in row-major order from rng. */
bl_status bl_init_kaiming_normal(double *w, int rows, int cols, double gain, bl_rng *rng, bl_error *err);

#endif /* BL_NN_ACT_H */
