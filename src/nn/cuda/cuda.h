/* cuda.h — the CUDA backend as the core sees it: whether this machine can run it, and its trial-group
 * ops, both answered by the CUDA module libbellamy-cuda.so, which load.c loads on first use (module.h).
 * Every build has these functions; libbellamy links no CUDA library. The only CUDA headers of the
 * project are included by the .cu files here, which are built into the module.
 * Not here: the trial-group ops themselves (nn/tgroup_ops.h declares their table).
 */
#ifndef BL_NN_CUDA_CUDA_H
#define BL_NN_CUDA_CUDA_H

#include "bellamy/bellamy.h"

#ifdef __cplusplus
extern "C" {
#endif

/* BL_OK when the CUDA module loads and finds at least one usable device. Otherwise BL_EUNSUPPORTED with
 * what is missing and the fix: "no CUDA module: looked for PATH and PATH; ..." (not built, not
 * installed, or BELLAMY_CUDA_MODULE names no file), "the CUDA module PATH cannot be loaded: <dlerror>
 * ..." (the CUDA runtime or cuBLAS missing), a module of another ABI, or the module's own
 * "no CUDA device: <reason>". Thread-safe. */
bl_status bl_cuda_available(bl_error *err);

/* The path of the CUDA module loaded by an earlier call, or NULL when none is loaded. */
const char *bl_cuda_module_loaded(void);

#ifdef __cplusplus
}
#endif

#endif /* BL_NN_CUDA_CUDA_H */
