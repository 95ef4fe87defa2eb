/* adam.h — the Adam optimiser over a bl_params store, with PyTorch's torch.optim.Adam semantics:
 *
 *   g ← g + wd·θ                   (coupled L2 weight decay, the `weight_decay` argument of Adam)
 *   m ← β1·m + (1 − β1)·g          v ← β2·v + (1 − β2)·g²
 *   θ ← θ − lr/(1 − β1ᵗ) · m / (√v / √(1 − β2ᵗ) + ε)
 *
 * with t counted per view (PyTorch counts per parameter tensor). Frozen views are skipped entirely:
 * parameters, moments and step count stay bit-identical. The learning rate is read from the struct
 * at every step, so a caller can run a schedule by setting opt->lr before each step.
 * Not here: gradient zeroing (bl_params_zero_grad), AMSGrad, decoupled (AdamW) decay.
 */
#ifndef BL_NN_ADAM_H
#define BL_NN_ADAM_H

#include "bellamy/bellamy.h"
#include "nn/params.h"

typedef struct bl_adam {
    double lr;            /* learning rate, may change between steps */
    double beta1, beta2;  /* default 0.9, 0.999 */
    double eps;           /* default 1e-8 */
    double weight_decay;  /* default 0 */
} bl_adam;

/* PyTorch defaults with the given learning rate and weight decay.
 * BL_EINVAL: NULL opt. BL_ERANGE: lr or weight_decay negative or not finite. */
bl_status bl_adam_init(bl_adam *opt, double lr, double weight_decay, bl_error *err);

/* One update of every non-frozen view of p from p->grad (grad itself is left unchanged), through the
 * kernel table's adam (nn/kernels.h).
 * BL_EINVAL: NULL argument. BL_ERANGE: a hyper-parameter outside its domain (lr < 0, β ∉ [0, 1),
 * eps < 0, weight_decay < 0, or non-finite). */
bl_status bl_adam_step(const bl_adam *opt, bl_params *p, bl_error *err);

#endif /* BL_NN_ADAM_H */
