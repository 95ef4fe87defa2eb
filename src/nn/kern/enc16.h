/* kern/enc16.h — the float32 AVX-512 copy's per-slot encoder forward and its first layer's gradient on
 * 16-float vectors (enc16.c), called by that copy's pass (pass.c, encoder_forward and encoder_backward)
 * for the paper's dimensions. Other copies have no such entry. */
#ifndef BL_NN_KERN_ENC16_H
#define BL_NN_KERN_ENC16_H

#include <stddef.h>
#include <stdint.h>

/* For the n slots of one property, records rec = base + i·ST, masks mask + i·MS, the value's first
 * slot first[i] (whose record holds s1): d1 = s1·mk + ad [8], a2 = G3·d1 [4], c = selu(a2), P = scale ·
 * Z0[:, block]·c [8] (WTz: the block transposed, 4 rows of 8), dP = 0; each slot as pass.c's 8-float
 * loop computes it, bit for bit. */
void bl_kern_enc16_avx512_f32(const float *G3T, const float *WTz, float scale, float *base, size_t ST,
                              const float *mask, size_t MS, const uint32_t *first, size_t n);
/* Only P and dP, from the codes c the records already hold (a pass that reuses g's outputs, bpass.h):
 * the same bits as the kernel above gives them. */
void bl_kern_enc16p_avx512_f32(const float *WTz, float scale, float *base, size_t ST, size_t n);
/* The encoder's first layer of n ≤ 8 distinct values, two values a vector: a1 = G0·x, s1 = selu(a1)
 * and acc = 0 into each value's record recs[j], its vector xs[j] [40]; each value as pass.c's
 * first_layer_x4 computes it, bit for bit. g0td: G0ᵀ [40 × 8] with each unit twice ([40 × 16]), from
 * bl_kern_enc16dup_avx512_f32. */
void bl_kern_enc16a1_avx512_f32(const float *g0td, const float *const *xs, float *const *recs, int n);
void bl_kern_enc16dup_avx512_f32(const float *G0T, float *g0td);
/* G0's gradient [8 × 40, row-major] += acc·xᵀ for each distinct value (first[i] == i) in slot order, from
 * its first slot's record (acc: d a1 summed over its slots; x: its vector): every element by the chain
 * of FMAs pass.c's outer_add runs, so the same bits; the 320 sums stay in registers over the values. */
void bl_kern_enc16g0_avx512_f32(float *G0, const float *base, size_t ST, const uint32_t *first, size_t n);

#endif /* BL_NN_KERN_ENC16_H */
