/* nn.h — the neural-network engine in one include. What production runs: the Bellamy network's
 * layout and initialisation (bnet.h); its pass, predictions and ensemble median (bpass.h) through one
 * kernel table (kernels.h) of a portable reference and optimised copies chosen by one CPU probe
 * (cpu.h); the parameter store (params.h); Adam (adam.h); activation constants and initialisation
 * (act.h); and the trial group (tgroup.h) on the devices of the registry (device.h): its op table
 * (tgroup_ops.h) with CPU ops on OpenBLAS GEMMs (gemm.h) and CUDA ops (cuda/).
 */
#ifndef BL_NN_NN_H
#define BL_NN_NN_H

#include "common/rng.h"
#include "nn/act.h"
#include "nn/adam.h"
#include "nn/bnet.h"
#include "nn/bpass.h"
#include "nn/cpu.h"
#include "nn/device.h"
#include "nn/gemm.h"
#include "nn/kernels.h"
#include "nn/params.h"
#include "nn/tgroup.h"

#endif /* BL_NN_NN_H */
