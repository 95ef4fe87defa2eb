/* kern/dec16.h — the float32 AVX-512 copy's decoder on 16-float vectors (dec16.c), called by that copy's
 * pass (pass.c, decoder_forward_backward) for the paper's dimensions. Other copies have no such entry. */
#ifndef BL_NN_KERN_DEC16_H
#define BL_NN_KERN_DEC16_H

#include <stddef.h>

/* h forward and backward over n slots as pass.c's vdec_chunk loop computes it, bit for bit: the
 * reconstruction loss Σ w·(r − x)² is returned; with grad_h the gradients are added into GH0 [8×4] and
 * GH3 [40×8], with grad_in d loss / d code is written to dcd[s] [4]. */
double bl_kern_dec16_avx512_f32(const float *H0T, const float *H0, const float *H3T, const float *H3, float *GH0,
                                float *GH3, const float *const *code, const float *const *x, const float *const *m,
                                const float *w, float *const *dcd, size_t n, int grad_h, int grad_in);

#endif /* BL_NN_KERN_DEC16_H */
