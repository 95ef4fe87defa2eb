/* fake_cuda_module.c — stand-ins for libbellamy-cuda.so, so that the core's module loader
 * (src/nn/cuda/load.c) is tested on machines without CUDA (tests/test_cudaload.c). One source, four
 * modules (tests/meson.build), chosen by FAKE_KIND:
 *   0  a well-formed module without a device: available() answers "no CUDA device: ..."
 *   1  a module of another ABI
 *   2  a module of the right ABI whose tables have other sizes
 *   3  a shared object without the entry point
 * Not here: any CUDA, any op (the table's functions are NULL; nothing may call them).
 */
#include <stdio.h>

#include "nn/cuda/module.h"

#ifndef FAKE_KIND
#error "FAKE_KIND must be defined"
#endif

#define FAKE_EXPORT __attribute__((visibility("default")))

#if FAKE_KIND == 3
FAKE_EXPORT int bl_fake_not_an_entry(void);
FAKE_EXPORT int bl_fake_not_an_entry(void) { return 3; }
#else
static bl_status fake_available(bl_error *err) {
    if (err) {
        err->status = BL_EUNSUPPORTED;
        snprintf(err->message, sizeof err->message, "no CUDA device: fake module (tests/fake_cuda_module.c)");
    }
    return BL_EUNSUPPORTED;
}

static const bl_tg_ops fake_ops = {.name = "fake-cuda", .device = 1};

static const bl_cuda_module fake_module = {
#if FAKE_KIND == 1
    .abi = BL_CUDA_MODULE_ABI + 100,
#else
    .abi = BL_CUDA_MODULE_ABI,
#endif
    .size_module = sizeof(bl_cuda_module),
#if FAKE_KIND == 2
    .size_ops = sizeof(bl_tg_ops) + 8,
#else
    .size_ops = sizeof(bl_tg_ops),
#endif
    .size_state = sizeof(bl_tg_state),
    .size_view = sizeof(bl_tg_view),
    .size_error = sizeof(bl_error),
    .version = "fake",
    .cuda_runtime = 0,
    .available = fake_available,
    .ops = &fake_ops,
};

FAKE_EXPORT const bl_cuda_module *bl_cuda_module_entry(void);
FAKE_EXPORT const bl_cuda_module *bl_cuda_module_entry(void) { return &fake_module; }
#endif
