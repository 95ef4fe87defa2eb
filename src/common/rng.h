/* rng.h — the project's one seeded random generator: xoshiro256** seeded through splitmix64, and
 * splitmix64 itself for seeds that derive sub-streams. Training, data generation, the evaluation
 * harness and the simulator all draw from it.
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
#ifndef BL_COMMON_RNG_H
#define BL_COMMON_RNG_H

#include <stdint.h>

typedef struct bl_rng {
    uint64_t s[4];      /* xoshiro256** state, never all zero */
    double   spare;     /* second normal deviate of the last polar-method pair */
    int      has_spare; /* 1 when spare holds an unused deviate */
} bl_rng;

/* splitmix64 (Steele, Lea & Flood 2014): advances *x by the golden-ratio step and returns its mix. */
static inline uint64_t bl_splitmix64(uint64_t *x) {
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
/* splitmix64's output for counter z (a seed mixer: bl_mix64(z) == bl_splitmix64(&z) with z as is). */
static inline uint64_t bl_mix64(uint64_t z) { return bl_splitmix64(&z); }

/* One xoshiro256** step on a bare state (Blackman & Vigna 2018): what bl_rng_u64 runs, inlined so a
 * hot loop can keep the state in registers. */
static inline uint64_t bl_xoshiro_next(uint64_t s[4]) {
    const uint64_t r = ((s[1] * 5) << 7 | (s[1] * 5) >> 57) * 9;
    const uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = s[3] << 45 | s[3] >> 19;
    return r;
}
/* The dropout masks' draws: one xoshiro256** output gives four 16-bit lanes, the low bits first, and a
 * unit is kept when its lane is ≥ ⌈p·2¹⁶⌉, so p counts in steps of 2⁻¹⁶ (0.05, 0.1, 0.2 keep with
 * probability within 1.3e-5 of 1 − p). Four units a draw: the masks were bound by the generator's own
 * dependent chain at one unit a draw (bench/README.md, "Four mask units a draw"). */
static inline uint32_t bl_rng_threshold16(double p) {
    if (!(p > 0.0)) return 0;           /* every unit kept */
    if (p >= 1.0) return 65536;         /* none: no lane reaches it */
    const double t = p * 65536.0;       /* exact: a power-of-two scaling */
    const uint32_t k = (uint32_t)t;
    return k + ((double)k < t);
}
/* keep[0..n) = 1 for the units kept, 0 for those dropped, from ⌈n/4⌉ draws: unit k reads lane k mod 4 of
 * draw k / 4; a run that is not a multiple of four leaves its last draw's upper lanes unused. */
static inline void bl_rng_keep16(uint64_t s[4], uint32_t thresh, int n, uint8_t *keep) {
    for (int k = 0; k < n; k += 4) {
        const uint64_t d = bl_xoshiro_next(s);
        for (int j = 0; j < 4 && k + j < n; j++) keep[k + j] = (uint32_t)((d >> (16 * j)) & 0xFFFFu) >= thresh;
    }
}

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

#endif /* BL_COMMON_RNG_H */
