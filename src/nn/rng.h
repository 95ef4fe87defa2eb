/* rng.h — the engine's own seeded random generator: xoshiro256** seeded through splitmix64.
 *
 * Why our own: training runs must repeat bit for bit from a seed on every platform, and each training
 * trial / thread must own an independent stream, so the state is a small struct passed explicitly
 * (no hidden globals, no rand()).
 *
 * Determinism: bl_rng_u64, bl_rng_uniform and bl_rng_int use only integer arithmetic and one exact
 * power-of-two scaling, so they are identical everywhere. bl_rng_normal uses the Marsaglia polar
 * method, which needs log() and sqrt(); sqrt is correctly rounded by IEEE 754, log() comes from the
 * C library (glibc's is correctly rounded in practice), so normals are bit-identical across machines
 * that share a libm.
 *
 * Not here: cryptographic quality, jump-ahead (seed distinct streams with distinct seeds instead).
 */
#ifndef BL_NN_RNG_H
#define BL_NN_RNG_H

#include <stdint.h>

typedef struct bl_rng {
    uint64_t s[4];      /* xoshiro256** state, never all zero */
    double   spare;     /* second normal deviate of the last polar-method pair */
    int      has_spare; /* 1 when spare holds an unused deviate */
} bl_rng;

/* Seeds the generator: the four state words are four successive splitmix64 outputs of seed. */
void bl_rng_seed(bl_rng *rng, uint64_t seed);

/* Next raw 64-bit output of xoshiro256**. */
uint64_t bl_rng_u64(bl_rng *rng);

/* Uniform double in [0, 1) with 53 random bits. */
double bl_rng_uniform(bl_rng *rng);

/* Standard normal deviate, N(0, 1) (Marsaglia polar method; consumes pairs, caches the spare). */
double bl_rng_normal(bl_rng *rng);

/* Uniform integer in [0, n) without modulo bias; returns 0 when n == 0. */
uint64_t bl_rng_int(bl_rng *rng, uint64_t n);

#endif /* BL_NN_RNG_H */
