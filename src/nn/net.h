/* net.h — a small feed-forward network: a sequence of dense → activation (→ AlphaDropout) layers
 * with its own workspaces, run forward/backward on a batch of rows.
 *
 * Layer i (0-based) maps sizes[i] → sizes[i+1]; its parameters are the views
 * "<name>.<i>.weight" and "<name>.<i>.bias" of a shared bl_params (several nets can share one store,
 * e.g. encoder, decoder and the runtime net of one model). The net keeps offsets, never pointers, into
 * the store, so adding views later is safe.
 *
 * Workspaces (host memory) are allocated once by bl_mlp_init for up to max_batch rows; forward and
 * backward never allocate. The forward pass keeps every intermediate the backward pass needs, so a
 * backward call must follow its own forward call (same X, same B) before the next forward.
 * Gradients ADD (into p->grad and into dX), see layers.h.
 * Not here: losses (call bl_loss on the output), the optimiser (adam.h), device workspaces (a device
 * backend will bring its own allocation).
 */
#ifndef BL_NN_NET_H
#define BL_NN_NET_H

#include <stdint.h>

#include "bellamy/bellamy.h"
#include "nn/backend.h"
#include "nn/layers.h"
#include "nn/params.h"
#include "nn/rng.h"

#define BL_MLP_MAX_LAYERS 8

typedef struct bl_mlp {
    int      n_layers;
    int      max_batch;
    int      sizes[BL_MLP_MAX_LAYERS + 1];   /* sizes[0] inputs, sizes[n_layers] outputs */
    bl_act   acts[BL_MLP_MAX_LAYERS];        /* activation after layer i */
    double   dropout[BL_MLP_MAX_LAYERS];     /* AlphaDropout probability after activation i (0: none) */
    bl_dense layers[BL_MLP_MAX_LAYERS];
    /* workspaces, max_batch rows each (z: pre-activation, a: activation, h: after dropout; a aliases z
     * for identity, h aliases a without dropout; dz/da/dh likewise) */
    double  *z[BL_MLP_MAX_LAYERS], *a[BL_MLP_MAX_LAYERS], *h[BL_MLP_MAX_LAYERS];
    double  *dz[BL_MLP_MAX_LAYERS], *da[BL_MLP_MAX_LAYERS], *dh[BL_MLP_MAX_LAYERS];
    uint8_t *mask[BL_MLP_MAX_LAYERS];        /* NULL where the layer has no dropout */
    double  *out[BL_MLP_MAX_LAYERS];         /* where layer i's output went in the last forward */
    double  *work;                           /* one allocation behind all the double workspaces */
    uint8_t *mask_work;
    int      last_batch;                     /* B of the last forward (0: none yet) */
    int      last_training;                  /* training flag of the last forward */
} bl_mlp;

/* Builds the net and adds its zeroed parameter views to p.
 *   sizes[n_layers + 1]: widths; acts[n_layers]: activation after each layer;
 *   dropout[n_layers] or NULL: AlphaDropout probability in [0, 1) after each activation.
 * BL_EINVAL: NULL argument, n_layers outside 1..BL_MLP_MAX_LAYERS, a size or max_batch ≤ 0,
 * unknown activation. BL_ERANGE: dropout outside [0, 1), workspace size overflow. BL_ENOMEM.
 * On error net is left freeable (bl_mlp_free) and p may hold the views added so far. */
bl_status bl_mlp_init(bl_mlp *net, bl_params *p, const char *name, int n_layers, const int *sizes,
                      const bl_act *acts, const double *dropout, int max_batch, bl_error *err);

/* Frees the workspaces (not the parameters, which belong to the bl_params); accepts NULL. */
void bl_mlp_free(bl_mlp *net);

/* Kaiming-normal weights with the given gain for every layer (PyTorch's calculate_gain('selu') = 3/4
 * is bl_act_gain(BL_ACT_SELU)), zero biases; layers drawn in order from rng. */
bl_status bl_mlp_init_params(const bl_mlp *net, bl_params *p, double gain, bl_rng *rng, bl_error *err);

/* Forward pass on X[B×sizes[0]] (B ≤ max_batch). *out receives the net's output workspace
 * [B×sizes[n_layers]], valid until the next forward. AlphaDropout is active only when training;
 * rng is needed only then (and only if some layer has dropout). */
bl_status bl_mlp_forward(bl_mlp *net, const bl_backend *be, const bl_params *p, int B, const double *X,
                         int training, bl_rng *rng, const double **out, bl_error *err);

/* Backward pass for the last forward: given dOut[B×sizes[n_layers]] = dL/d(output), adds the parameter
 * gradients into p->grad and, when dX != NULL, dL/dX into dX[B×sizes[0]].
 * BL_EINVAL also when B differs from the last forward's or no forward happened. */
bl_status bl_mlp_backward(bl_mlp *net, const bl_backend *be, bl_params *p, int B, const double *X,
                          const double *dOut, double *dX, bl_error *err);

/* Total number of parameters of the net. */
size_t bl_mlp_num_params(const bl_mlp *net);

#endif /* BL_NN_NET_H */
