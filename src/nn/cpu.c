/* cpu.c — the processor probe and the BELLAMY_CPU cap (cpu.h), evaluated once. */
#include "nn/cpu.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bl_config.h"
#include "common/error.h"

static const char *const names[BL_CPU_LEVELS] = {"generic", "avx2", "avx512"};

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int detected, level, env_bad;
static char env_value[64];

static int probe(void) {
    int l = BL_CPU_GENERIC;
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
    __builtin_cpu_init();
    if (BL_HAVE_KERN_AVX2 && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
        __builtin_cpu_supports("bmi2"))
        l = BL_CPU_AVX2;
    if (l == BL_CPU_AVX2 && BL_HAVE_KERN_AVX512 && __builtin_cpu_supports("avx512f") &&
        __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512cd") &&
        __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl"))
        l = BL_CPU_AVX512;
#endif
    return l;
}

static void init(void) {
    detected = probe();
    level = detected;
    const char *e = getenv("BELLAMY_CPU");
    if (!e || !*e) return;
    snprintf(env_value, sizeof env_value, "%s", e);
    for (int i = 0; i < BL_CPU_LEVELS; i++)
        if (strcmp(e, names[i]) == 0) {
            if (i < level) level = i;
            return;
        }
    env_bad = 1;
    level = BL_CPU_GENERIC;
}

int bl_cpu_detected(void) {
    pthread_once(&once, init);
    return detected;
}

int bl_cpu_level(void) {
    pthread_once(&once, init);
    return level;
}

const char *bl_cpu_level_name(int l) { return l >= 0 && l < BL_CPU_LEVELS ? names[l] : NULL; }

bl_status bl_cpu_check(bl_error *err) {
    pthread_once(&once, init);
    if (!env_bad) return BL_OK;
    return bl_seterr(err, BL_EINVAL,
                     "environment variable BELLAMY_CPU='%s' is not one of generic, avx2, avx512 (it caps the "
                     "kernels used; unset it to use the best this processor runs)", env_value);
}

/* The public face of the probe (bellamy.h). */
const char *bl_cpu_kernels(void) { return names[bl_cpu_level()]; }
const char *bl_cpu_kernels_available(void) { return names[bl_cpu_detected()]; }
bl_status bl_cpu_kernels_check(bl_error *err) { return bl_cpu_check(err); }
