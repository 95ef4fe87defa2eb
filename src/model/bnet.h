/* bnet.h — the Bellamy network's shape (f, g, h, z; nn/bpass.h draws it): the paper's dimensions, the
 * parameters in one bl_params block with PyTorch state-dict style names
 * (f.0.weight, f.0.bias, f.2.weight, f.2.bias, g.0.weight, g.3.weight, h.0.weight, h.3.weight,
 *  z.0.weight, z.0.bias, z.2.weight, z.2.bias; weights [out×in] row-major), and their initialisation.
 * Passes, predictions and codes are the engine's (nn/bpass.h), which this header brings in.
 * Not here: data sets, training loops (pretrain.c, model.c), files (modelio.c).
 */
#ifndef BL_MODEL_BNET_H
#define BL_MODEL_BNET_H

#include "bellamy/bellamy.h"
#include "common/rng.h"
#include "nn/bpass.h"
#include "nn/params.h"

void bl_bnet_dims_default(bl_bnet_dims *d, int n_ess, int n_opt);

/* Creates the parameter block; weights Kaiming-normal (SELU gain 3/4, fan-in; tanh gain 5/3 for the
 * decoder's output layer), zero biases, drawn from rng in the order above. rng may be NULL: zeros. */
bl_status bl_bnet_init(bl_bnet *net, const bl_bnet_dims *d, bl_rng *rng, bl_error *err);
void bl_bnet_free(bl_bnet *net);
/* dst = src (same dims; parameters only, or parameters and Adam state). */
void bl_bnet_copy_params(bl_bnet *dst, const bl_bnet *src, int with_adam);

#endif /* BL_MODEL_BNET_H */
