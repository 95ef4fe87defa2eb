/* kernels.c — fills the kernel tables once, in level order, from the CPU probe (kernels.h). */
#include "nn/kernels.h"

#include <pthread.h>

#include "bl_config.h"

static bl_kernel_table tables[BL_CPU_LEVELS][2]; /* [level][f32] */
static int built[BL_CPU_LEVELS];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void init(void) {
    const int lvl = bl_cpu_level();
    bl_kernels_init_generic(&tables[BL_CPU_GENERIC][0]);
    bl_kernels_init_generic_f32(&tables[BL_CPU_GENERIC][1]);
    built[BL_CPU_GENERIC] = 1;
#if BL_HAVE_KERN_AVX2
    if (lvl >= BL_CPU_AVX2) {
        for (int f = 0; f < 2; f++) tables[BL_CPU_AVX2][f] = tables[BL_CPU_GENERIC][f];
        bl_kernels_init_avx2(&tables[BL_CPU_AVX2][0]);
        bl_kernels_init_avx2_f32(&tables[BL_CPU_AVX2][1]);
        built[BL_CPU_AVX2] = 1;
    }
#endif
#if BL_HAVE_KERN_AVX512
    if (lvl >= BL_CPU_AVX512) {
        for (int f = 0; f < 2; f++) tables[BL_CPU_AVX512][f] = tables[BL_CPU_AVX2][f];
        bl_kernels_init_avx512(&tables[BL_CPU_AVX512][0]);
        bl_kernels_init_avx512_f32(&tables[BL_CPU_AVX512][1]);
        built[BL_CPU_AVX512] = 1;
    }
#endif
    for (int l = 0; l < BL_CPU_LEVELS; l++) /* parameters and moments are double in both precisions */
        if (built[l]) tables[l][1].adam = tables[l][0].adam;
    (void)lvl;
}

const bl_kernel_table *bl_kernels(void) { return bl_kernels_prec(0); }

const bl_kernel_table *bl_kernels_prec(int f32) {
    pthread_once(&once, init);
    return &tables[bl_cpu_level()][f32 != 0];
}

const bl_kernel_table *bl_kernels_copy(int level) { return bl_kernels_copy_prec(level, 0); }

const bl_kernel_table *bl_kernels_copy_prec(int level, int f32) {
    pthread_once(&once, init);
    return level >= 0 && level < BL_CPU_LEVELS && built[level] ? &tables[level][f32 != 0] : NULL;
}
