/* kernels.c — fills the kernel tables once, in level order, from the CPU probe (kernels.h). */
#include "nn/kernels.h"

#include <pthread.h>

#include "bl_config.h"

static bl_kernel_table tables[BL_CPU_LEVELS];
static int built[BL_CPU_LEVELS];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void init(void) {
    const int lvl = bl_cpu_level();
    bl_kernels_init_generic(&tables[BL_CPU_GENERIC]);
    built[BL_CPU_GENERIC] = 1;
#if BL_HAVE_KERN_AVX2
    if (lvl >= BL_CPU_AVX2) {
        tables[BL_CPU_AVX2] = tables[BL_CPU_GENERIC];
        bl_kernels_init_avx2(&tables[BL_CPU_AVX2]);
        built[BL_CPU_AVX2] = 1;
    }
#endif
#if BL_HAVE_KERN_AVX512
    if (lvl >= BL_CPU_AVX512) {
        tables[BL_CPU_AVX512] = tables[BL_CPU_AVX2];
        bl_kernels_init_avx512(&tables[BL_CPU_AVX512]);
        built[BL_CPU_AVX512] = 1;
    }
#endif
    (void)lvl;
}

const bl_kernel_table *bl_kernels(void) {
    pthread_once(&once, init);
    return &tables[bl_cpu_level()];
}

const bl_kernel_table *bl_kernels_copy(int level) {
    pthread_once(&once, init);
    return level >= 0 && level < BL_CPU_LEVELS && built[level] ? &tables[level] : NULL;
}
