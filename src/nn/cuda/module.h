/* module.h — the contract between libbellamy and its CUDA module, libbellamy-cuda.so.
 *
 * The core links no CUDA library: the CUDA trial-group ops live in a shared module that the core
 * dlopen()s the first time a CUDA device is asked for (load.c). The module exports exactly one symbol,
 * BL_CUDA_MODULE_ENTRY, a function returning a constant bl_cuda_module. The core refuses a module whose
 * abi differs from BL_CUDA_MODULE_ABI or whose recorded struct sizes differ from its own, so a module
 * from another release fails with a message instead of running on mismatched tables.
 *
 * Bump BL_CUDA_MODULE_ABI whenever this file, nn/tgroup_ops.h or bl_error (bellamy.h) changes in a way
 * the other side can see: a field added, removed, moved or retyped, an op's meaning changed.
 * Not here: the search for the module file (load.c), the ops themselves (tgroup_cuda.cu).
 */
#ifndef BL_NN_CUDA_MODULE_H
#define BL_NN_CUDA_MODULE_H

#include <stdint.h>

#include "bellamy/bellamy.h"
#include "nn/tgroup_ops.h"

#ifdef __cplusplus
extern "C" {
#endif

#define BL_CUDA_MODULE_ABI   1u
#define BL_CUDA_MODULE_FILE  "libbellamy-cuda.so"
#define BL_CUDA_MODULE_ENTRY "bl_cuda_module_entry"

typedef struct bl_cuda_module {
    uint32_t abi;               /* BL_CUDA_MODULE_ABI of the sources the module was built from */
    uint32_t size_module;       /* sizeof(bl_cuda_module) */
    uint32_t size_ops;          /* sizeof(bl_tg_ops) */
    uint32_t size_state;        /* sizeof(bl_tg_state) */
    uint32_t size_view;         /* sizeof(bl_tg_view) */
    uint32_t size_error;        /* sizeof(bl_error) */
    const char *version;        /* the Bellamy version it was built from ("0.5.0"), for messages */
    int32_t     cuda_runtime;   /* CUDART_VERSION it was built against (13000: CUDA 13.0) */
    /* BL_OK when a CUDA device is usable; else BL_EUNSUPPORTED, "no CUDA device: <reason>". */
    bl_status (*available)(bl_error *err);
    const bl_tg_ops *ops;       /* the CUDA trial-group ops */
} bl_cuda_module;

/* The one exported function of libbellamy-cuda.so. */
typedef const bl_cuda_module *(*bl_cuda_module_entry_fn)(void);

/* Fills the size fields as this compilation unit sees them (both sides use it: the module to describe
 * itself, the core to compare). */
#define BL_CUDA_MODULE_SIZES                                                                      \
    (uint32_t)sizeof(bl_cuda_module), (uint32_t)sizeof(bl_tg_ops), (uint32_t)sizeof(bl_tg_state), \
        (uint32_t)sizeof(bl_tg_view), (uint32_t)sizeof(bl_error)

#ifdef __cplusplus
}
#endif

#endif /* BL_NN_CUDA_MODULE_H */
