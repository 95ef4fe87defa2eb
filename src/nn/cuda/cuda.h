/* cuda.h — whether this build and this machine can run the CUDA code (src/nn/cuda/), as a plain C
 * function every build has. The only CUDA headers of the project are included by the .cu files here.
 * Not here: the trial-group ops themselves (nn/tgroup_ops.h declares their table).
 */
#ifndef BL_NN_CUDA_CUDA_H
#define BL_NN_CUDA_CUDA_H

#include "bellamy/bellamy.h"

#ifdef __cplusplus
extern "C" {
#endif

/* BL_OK when the build has CUDA (BL_HAVE_CUDA) and cudaGetDeviceCount finds at least one device;
 * otherwise BL_EUNSUPPORTED with "built without CUDA (-Dcuda=enabled)" or "no CUDA device: <reason>". */
bl_status bl_cuda_available(bl_error *err);

#ifdef __cplusplus
}
#endif

#endif /* BL_NN_CUDA_CUDA_H */
