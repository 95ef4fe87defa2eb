/* nn.h — the neural-network engine in one include. What production runs: the Bellamy network's
 * pass, predictions and ensemble median (bpass.h) through one kernel table (kernels.h) of a portable
 * reference and optimised copies chosen by one CPU probe (cpu.h); the parameter store (params.h);
 * Adam (adam.h); activation constants and initialisation (act.h); and the trial group's op table
 * (tgroup_ops.h) with its CPU ops on OpenBLAS GEMMs (gemm.h) and its CUDA ops (cuda/).
 */
#ifndef BL_NN_NN_H
#define BL_NN_NN_H

#include "common/rng.h"
#include "nn/act.h"
#include "nn/adam.h"
#include "nn/bpass.h"
#include "nn/cpu.h"
#include "nn/gemm.h"
#include "nn/kernels.h"
#include "nn/params.h"

#endif /* BL_NN_NN_H */
