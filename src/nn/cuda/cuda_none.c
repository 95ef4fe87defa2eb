/* cuda_none.c — what a build without CUDA answers: no device, and no CUDA trial-group ops.
 * With CUDA (BL_HAVE_CUDA) the same functions come from tgroup_cuda.cu and this file is empty.
 * Not here: anything that needs the CUDA toolkit.
 */
#include "bl_config.h"
#include "common/error.h"
#include "nn/tgroup_ops.h"
#include "nn/cuda/cuda.h"

#if !BL_HAVE_CUDA
bl_status bl_cuda_available(bl_error *err) {
    return bl_seterr(err, BL_EUNSUPPORTED, "built without CUDA (-Dcuda=enabled)");
}

const bl_tg_ops *bl_tg_ops_cuda(void) { return NULL; }
#else
typedef int bl_cuda_none_unused; /* ISO C forbids an empty translation unit */
#endif
