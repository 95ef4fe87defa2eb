/* device.c — the device registry (device.h): one row per device with its name, whether it is batched,
 * how to check it and where its trial-group ops come from. */
#include "nn/device.h"

#include <stddef.h>

#include "common/error.h"
#include "nn/cuda/cuda.h"

static bl_status always(bl_error *err) {
    (void)err;
    return BL_OK;
}

static const bl_tg_ops *no_ops(void) { return NULL; }

typedef struct device {
    const char *name;
    int batched;
    bl_status (*check)(bl_error *err);
    const bl_tg_ops *(*ops)(void);
} device;

static const device devices[BL_NN_DEVICES] = {
    [BL_NN_CPU] = {"cpu", 0, always, no_ops},
    [BL_NN_CUDA] = {"cuda", 1, bl_cuda_available, bl_tg_ops_cuda},
    [BL_NN_CPU_BATCHED] = {"cpu-batched", 1, always, bl_tg_ops_cpu},
};

static const device *get(int id) { return id >= 0 && id < BL_NN_DEVICES ? &devices[id] : NULL; }

const char *bl_nn_device_name(int id) { return get(id) ? get(id)->name : "unknown"; }

int bl_nn_device_batched(int id) { return get(id) ? get(id)->batched : 0; }

int bl_nn_device_probe(int id) {
    bl_error e;
    return get(id) && get(id)->check(&e) == BL_OK;
}

bl_status bl_nn_device_check(int id, bl_error *err) {
    if (!get(id)) return bl_seterr(err, BL_EINVAL, "unknown device %d (0 cpu, 1 cuda, 2 cpu-batched)", id);
    return get(id)->check(err);
}

bl_status bl_nn_device_open(int id, const bl_tg_ops **ops, bl_error *err) {
    if (!ops) return bl_seterr(err, BL_EINVAL, "bl_nn_device_open: NULL output");
    *ops = NULL;
    if (!bl_nn_device_batched(id))
        return bl_seterr(err, BL_EINVAL, "device %d (%s) trains no trial group (1 cuda, 2 cpu-batched)", id,
                         bl_nn_device_name(id));
    bl_status st = get(id)->check(err);
    if (st) return st;
    if (!(*ops = get(id)->ops()))
        return bl_seterr(err, BL_EUNSUPPORTED, "device %s: no trial-group ops", get(id)->name);
    return BL_OK;
}
