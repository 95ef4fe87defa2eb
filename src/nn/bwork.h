/* bwork.h — the layout of a pass's workspace, shared by bwork.c (which sizes and carves it) and the
 * pass kernels (kern/pass.c). Not for other users: they see bl_bwork as opaque (bpass.h).
 *
 * Per distinct scale-out: a0[FH] s0[FH] a2[FO] F[FO] A[Z] dA[Z] dF[FO]
 * Per value slot (a distinct value, or with per-row masks a row's copy of it), offsets below:
 *   a1[H] s1[H]   the encoder's first layer: filled in a value's first slot only, read by the others
 *   d1[H]         s1 after this slot's AlphaDropout mask
 *   P[Z] dP[Z]    z's term of this code (scaled) and its gradient
 *   acc[H]        d loss / d a1 summed over the slots of the value (first slot)
 *   a2[C] c[C]    the code's pre-activation and the code
 *   dcd[C]        d loss / d code through the decoder (decoder slots)
 *   a2c[C] cc[C]  hybrid masks: the code without encoder dropout, which the decoder reads (first slot)
 * The decoder keeps nothing per slot: its forward and backward run together.
 * Records, their strides and all arrays are multiples of 64 bytes (BL_REC_ALIGN), so that for the
 * paper's dimensions every 8-wide field is one aligned vector: a vector store that straddles two cache
 * lines cannot forward to the loads that read it back.
 */
#ifndef BL_NN_BWORK_H
#define BL_NN_BWORK_H

#include <stddef.h>
#include <stdint.h>

#include "nn/bpass.h"

#define BL_O_A1(H, C, Z)  0
#define BL_O_S1(H, C, Z)  (H)
#define BL_O_D1(H, C, Z)  (2 * (H))
#define BL_O_P(H, C, Z)   (3 * (H))
#define BL_O_DP(H, C, Z)  (3 * (H) + (Z))
#define BL_O_ACC(H, C, Z) (3 * (H) + 2 * (Z))
#define BL_O_A2(H, C, Z)  (4 * (H) + 2 * (Z))
#define BL_O_C(H, C, Z)   (4 * (H) + 2 * (Z) + (C))
#define BL_O_DCD(H, C, Z) (4 * (H) + 2 * (Z) + 2 * (C))
#define BL_O_A2C(H, C, Z) (4 * (H) + 2 * (Z) + 3 * (C))
#define BL_O_CC(H, C, Z)  (4 * (H) + 2 * (Z) + 4 * (C))
#define BL_REC_ALIGN 64
#define BL_ROUND8(n) (((size_t)(n) + 7) & ~(size_t)7) /* doubles, to a multiple of BL_REC_ALIGN bytes */
#define BL_SLOT_STRIDE(H, C, Z) BL_ROUND8(4 * (size_t)(H) + 5 * (size_t)(C) + 2 * (size_t)(Z))

struct bl_bwork {
    size_t max_batch, n_props;
    int32_t *sx_slot;              /* [n_sx] → slot or -1 */
    uint32_t *sx_list;             /* [min(n_sx, B)] */
    double *sx_rec;                /* [slots][sx_stride] */
    size_t sx_stride, sx_cap;
    int32_t **val_slot;            /* [p] → [n_vals[p]] */
    uint32_t **val_list;           /* [p] → [B] */
    double **val_rec;              /* [p] → [B][val_stride] */
    double **val_mask;             /* [p] → [B][4H]: AlphaDropout of the encoder's hidden layer as
                                      a multiply-add y = t·mk + ad (mk[H], ad[H]), then the decoder's */
    uint32_t **val_first;          /* [p] → [B] slot of the first row with the same value */
    double **val_w;                /* [p] → [B] rows using the value in this batch */
    size_t *val_cap;
    size_t val_stride;
    double *row;                   /* [B][row_stride]: u[Z] h[Z] pre out dout */
    double *WT;                    /* [P.n] every weight block transposed, refreshed each pass */
    uint32_t *row_slot;            /* [B][n_props] value slot of each row of the batch */
    size_t row_stride;
    /* the decoder slots of a batch, over all properties: [B·n_props] each */
    const double **dec_code, **dec_x;
    const double **dec_mask;
    double **dec_dcd;
    double *dec_w;                 /* loss weight: rows of the slot / (B · properties of its kind · V) */
    size_t n_sx_view;              /* the view's distinct scale-outs, and values per property, */
    size_t *n_vals_view;           /* [n_props]: what the slot maps were sized for */
    void *block;                   /* everything above lives in one allocation */
};

#endif /* BL_NN_BWORK_H */
