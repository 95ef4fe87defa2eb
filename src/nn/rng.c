/* rng.c — xoshiro256** (Blackman & Vigna, 2018) seeded by splitmix64, plus uniform, normal and
 * bounded-integer draws on top of it. See rng.h for the determinism guarantees.
 * Not here: anything thread-shared; each owner keeps its own bl_rng. */
#include "nn/rng.h"

#include <math.h>

static uint64_t splitmix64(uint64_t *x) {
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

void bl_rng_seed(bl_rng *rng, uint64_t seed) {
    if (!rng) return;
    uint64_t x = seed;
    for (int i = 0; i < 4; i++) rng->s[i] = splitmix64(&x);
    /* splitmix64 is a bijection of its counter, so four successive outputs are never all zero;
     * keep a guard anyway because an all-zero state would emit zeros forever. */
    if ((rng->s[0] | rng->s[1] | rng->s[2] | rng->s[3]) == 0) rng->s[0] = 1;
    rng->spare = 0.0;
    rng->has_spare = 0;
}

uint64_t bl_rng_u64(bl_rng *rng) {
    uint64_t *s = rng->s;
    const uint64_t result = rotl(s[1] * 5, 7) * 9;
    const uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

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
