/* cpu.h — the one CPU probe: which kernel copy this processor can run, capped by BELLAMY_CPU.
 *
 * Levels, each a superset of the one below: BL_CPU_GENERIC (portable C, every machine: the reference),
 * BL_CPU_AVX2 (x86-64-v3: AVX2, FMA, BMI2), BL_CPU_AVX512 (x86-64-v4: AVX-512 F/BW/CD/DQ/VL).
 * BELLAMY_CPU=generic|avx2|avx512 caps the level the library uses (as dav1d's CPU mask does); it never
 * raises it above what the processor has. The environment is read once, on first use.
 * Nothing else in the project asks the processor what it supports.
 */
#ifndef BL_NN_CPU_H
#define BL_NN_CPU_H

#include "bellamy/bellamy.h"

enum { BL_CPU_GENERIC = 0, BL_CPU_AVX2 = 1, BL_CPU_AVX512 = 2, BL_CPU_LEVELS = 3 };

/* What the processor (and this build) supports, ignoring BELLAMY_CPU. */
int bl_cpu_detected(void);
/* The level in use: min(detected, BELLAMY_CPU's cap). An invalid BELLAMY_CPU gives the generic level
 * (the safest reading of a cap that cannot be read) and makes bl_cpu_check fail. */
int bl_cpu_level(void);
/* "generic", "avx2", "avx512"; NULL for an unknown level. */
const char *bl_cpu_level_name(int level);
/* BL_OK, or BL_EINVAL naming BELLAMY_CPU's bad value and the accepted ones. */
bl_status bl_cpu_check(bl_error *err);

#endif /* BL_NN_CPU_H */
