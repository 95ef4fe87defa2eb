/* rng.c — xoshiro256** (Blackman & Vigna, 2018) seeded by splitmix64, plus uniform, normal and
 * bounded-integer draws on top of it. See rng.h for the determinism guarantees.
 * Not here: anything thread-shared; each owner keeps its own bl_rng. */
#include "common/rng.h"

#include <math.h>

void bl_rng_seed(bl_rng *rng, uint64_t seed) {
    if (!rng) return;
    uint64_t x = seed;
    for (int i = 0; i < 4; i++) rng->s[i] = bl_splitmix64(&x);
    /* splitmix64 is a bijection of its counter, so four successive outputs are never all zero;
     * keep a guard anyway because an all-zero state would emit zeros forever. */
    if ((rng->s[0] | rng->s[1] | rng->s[2] | rng->s[3]) == 0) rng->s[0] = 1;
    rng->spare = 0.0;
    rng->has_spare = 0;
}

uint64_t bl_rng_u64(bl_rng *rng) { return bl_xoshiro_next(rng->s); }

double bl_rng_uniform(bl_rng *rng) {
    /* Top 53 bits scaled by 2^-53: exact, so identical on every IEEE machine. */
    return (double)(bl_rng_u64(rng) >> 11) * 0x1.0p-53;
}

double bl_rng_normal(bl_rng *rng) {
    if (rng->has_spare) {
        rng->has_spare = 0;
        return rng->spare;
    }
    double u, v, s;
    do {
        u = 2.0 * bl_rng_uniform(rng) - 1.0;
        v = 2.0 * bl_rng_uniform(rng) - 1.0;
        s = u * u + v * v;
    } while (s >= 1.0 || s == 0.0);
    double f = sqrt(-2.0 * log(s) / s);
    rng->spare = v * f;
    rng->has_spare = 1;
    return u * f;
}

uint64_t bl_rng_int(bl_rng *rng, uint64_t n) {
    if (n == 0) return 0;
    /* Rejection: accept only below the largest multiple of n, so every residue is equally likely. */
    uint64_t limit = UINT64_MAX - (UINT64_MAX % n);
    uint64_t r;
    do r = bl_rng_u64(rng); while (r >= limit);
    return r % n;
}
