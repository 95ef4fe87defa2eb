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
 *   x[V]          float32 only: the value's vector rounded to float (first slot), which the
 *                 encoder, the decoder's loss and G0's gradient read instead of the view's doubles
 * Records, their strides and all arrays are multiples of 64 bytes (BL_REC_ALIGN), so that for the
 * paper's dimensions every 8-wide field is one aligned vector: a vector store that straddles two cache
 * lines cannot forward to the loads that read it back.
 * The real-valued arrays hold the pass's precision (`f32`: float, else double); they are declared
 * void and the kernels (kern/pass.c) read them through their own `real` type.
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
#define BL_O_X(H, C, Z)   (4 * (H) + 2 * (Z) + 5 * (C))
#define BL_REC_ALIGN 64
/* n elements of es bytes, rounded up to a multiple of BL_REC_ALIGN bytes */
#define BL_ROUND_REC(n, es) (((size_t)(n) + (BL_REC_ALIGN / (es)) - 1) & ~(size_t)(BL_REC_ALIGN / (es) - 1))
#define BL_ROUND8(n) BL_ROUND_REC(n, 8) /* doubles */
/* A slot record's stride in elements: float32 records carry the value's vector x[V] too. */
#define BL_SLOT_STRIDE(H, C, Z) BL_ROUND8(4 * (size_t)(H) + 5 * (size_t)(C) + 2 * (size_t)(Z))
#define BL_SLOT_STRIDE_F32(H, C, Z, V) \
    BL_ROUND_REC(4 * (size_t)(H) + 5 * (size_t)(C) + 2 * (size_t)(Z) + (size_t)(V), 4)

struct bl_bwork {
    size_t max_batch, n_props;
    int32_t *sx_slot;              /* [n_sx] → slot or -1 */
    uint32_t *sx_list;             /* [min(n_sx, B)] */
    int f32;                       /* the precision of the real-valued arrays below (the network's) */
    void *sx_rec;                  /* [slots][sx_stride] */
    size_t sx_stride, sx_cap;
    int32_t **val_slot;            /* [p] → [n_vals[p]] */
    uint32_t **val_list;           /* [p] → [B] */
    void **val_rec;                /* [p] → [B][val_stride] */
    void **val_mask;               /* [p] → [B][4H]: AlphaDropout of the encoder's hidden layer as
                                      a multiply-add y = t·mk + ad (mk[H], ad[H]), then the decoder's */
    uint32_t **val_first;          /* [p] → [B] slot of the first row with the same value */
    void **val_w;                  /* [p] → [B] rows using the value in this batch */
    size_t *val_cap;
    size_t val_stride;
    void *row;                     /* [B][row_stride]: u[Z] h[Z] pre out dout */
    void *WT;                      /* [P.n] every weight block transposed, refreshed each pass (but for
                                      the views a reusing pass keeps, bl_bpass.reuse) */
    void *Wf, *Gf;                 /* float32 only, [P.n]: the parameters rounded to float, refreshed as
                                      WT is, and the pass's gradients, added into P.grad at its end */
    uint32_t *row_slot;            /* [B][n_props] value slot of each row of the batch */
    size_t row_stride;
    /* the decoder slots of a batch, over all properties: [B·n_props] each */
    const void **dec_code, **dec_x;
    const void **dec_mask;
    void **dec_dcd;
    void *dec_w;                   /* loss weight: rows of the slot / (B · properties of its kind · V) */
    size_t n_sx_view;              /* the view's distinct scale-outs, and values per property, */
    size_t *n_vals_view;           /* [n_props]: what the slot maps were sized for */
    struct {                       /* the last pass without dropout or reconstruction, for bl_bpass.reuse */
        const void *net, *view;
        size_t B, *rows;           /* rows [max_batch] */
        int per_row, n_views, plain; /* plain: such a pass ran through, and nothing since */
        int copy;                  /* the kernel copy and precision that ran it */
        uint32_t frozen;           /* bit i: view i was frozen */
    } last;
    void *block;                   /* everything above lives in one allocation */
};

#endif /* BL_NN_BWORK_H */
