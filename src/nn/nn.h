/* nn.h — the neural-network engine in one include: RNG, GEMM kernels, backend table, parameter
 * store, layer primitives, Adam and the feed-forward net helper. See each header for its contract. */
#ifndef BL_NN_NN_H
#define BL_NN_NN_H

#include "nn/rng.h"
#include "nn/gemm.h"
#include "nn/backend.h"
#include "nn/params.h"
#include "nn/layers.h"
#include "nn/adam.h"
#include "nn/net.h"

#endif /* BL_NN_NN_H */
