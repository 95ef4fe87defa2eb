/* device.h — where the network trains: a registry of the devices by id. The per-trial CPU path runs
 * the kernel table (kernels.h) one trial per thread; the batched devices train a trial group
 * (tgroup.h) through a table of ops (tgroup_ops.h): the CPU's, or the CUDA module's, which is loaded
 * on first use (cuda/). This is the one place outside cuda/ that knows the CUDA backend exists, so
 * that model/ and api/ ask for a device by id and never include cuda/.
 * Not here: the ops themselves, the choice of a device for a search (model/pretrain.c).
 */
#ifndef BL_NN_DEVICE_H
#define BL_NN_DEVICE_H

#include "bellamy/bellamy.h"
#include "nn/tgroup_ops.h"

/* Device ids; the values are those of bl_pretrain_opts.device (model/model.h). */
enum bl_nn_device_id {
    BL_NN_CPU = 0,          /* per-trial kernels, one trial per thread */
    BL_NN_CUDA = 1,         /* a trial group on a GPU (the CUDA module) */
    BL_NN_CPU_BATCHED = 2,  /* a trial group on the CPU (OpenBLAS GEMMs) */
    BL_NN_DEVICES = 3
};

/* "cpu", "cuda", "cpu-batched"; "unknown" for an id outside the registry. */
const char *bl_nn_device_name(int id);
/* 1 when id names a device that trains a trial group (BL_NN_CUDA, BL_NN_CPU_BATCHED). */
int bl_nn_device_batched(int id);
/* 1 when the device can run on this machine (as bl_nn_device_check, without a message). */
int bl_nn_device_probe(int id);
/* BL_OK when the device can run on this machine. BL_EINVAL for an unknown id; BL_EUNSUPPORTED with
 * what is missing and the fix (CUDA: no module, no runtime, no device). Thread-safe. */
bl_status bl_nn_device_check(int id, bl_error *err);
/* The trial-group ops of a batched device, checked as bl_nn_device_check (the CUDA module is loaded
 * now if need be). BL_EINVAL for an id that is unknown or not batched. */
bl_status bl_nn_device_open(int id, const bl_tg_ops **ops, bl_error *err);

#endif /* BL_NN_DEVICE_H */
