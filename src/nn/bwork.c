/* bwork.c — a pass's workspace (bwork.h): one allocation, its layout walked once to size it and once
 * more to carve it, so the two can never disagree. */
#include "nn/bwork.h"

#include <stdlib.h>

#include "common/error.h"

void bl_bwork_free(bl_bwork *w) {
    if (!w) return;
    free(w->block);
    free(w);
}

/* The workspace's layout, walked once to size the block and once more to hand out its arrays: the
 * same calls in the same order both times, so the block always holds what is carved from it (sizing
 * and carving used to be written out separately and disagreed as soon as a pointer table's rounding
 * differed: an overflow past the block with most property counts). */
typedef struct carver {
    unsigned char *base;           /* NULL while sizing */
    size_t off;
    int ovf;
} carver;

/* n items of size bytes, BL_REC_ALIGN-aligned; NULL while sizing or after an overflow. */
static void *carve(carver *c, size_t n, size_t size) {
    size_t b;
    if (c->ovf || bl_mul_size(n, size, &b) || b > SIZE_MAX / 2 ||
        bl_add_size(c->off, (b + BL_REC_ALIGN - 1) & ~(size_t)(BL_REC_ALIGN - 1), &b)) {
        c->ovf = 1;
        return NULL;
    }
    void *p = c->base ? c->base + c->off : NULL;
    c->off = b;
    return p;
}

static void bwork_layout(bl_bwork *w, carver *c, const bl_bview *v, size_t n_sx, size_t n_params, size_t H,
                         size_t n_dec) {
    const size_t np = w->n_props, B = w->max_batch, es = w->f32 ? sizeof(float) : sizeof(double);
    w->sx_slot = carve(c, n_sx, sizeof(int32_t));
    w->sx_list = carve(c, w->sx_cap, sizeof(uint32_t));
    w->sx_rec = carve(c, w->sx_cap, w->sx_stride * es);
    w->val_slot = carve(c, np, sizeof(int32_t *));
    w->val_list = carve(c, np, sizeof(uint32_t *));
    w->val_rec = carve(c, np, sizeof(void *));
    w->val_w = carve(c, np, sizeof(void *));
    w->val_mask = carve(c, np, sizeof(void *));
    w->val_cap = carve(c, np, sizeof(size_t));
    w->val_first = carve(c, np, sizeof(uint32_t *));
    for (size_t p = 0; p < np; p++) { /* per-row dropout gives every row its own slot: B slots */
        int32_t *slot = carve(c, v->n_vals[p], sizeof(int32_t));
        uint32_t *list = carve(c, B, sizeof(uint32_t));
        void *rec = carve(c, B, w->val_stride * es);
        void *mask = carve(c, B, 4 * H * es);
        void *wt = carve(c, B, es);
        uint32_t *first = carve(c, B, sizeof(uint32_t));
        if (!c->base || c->ovf) continue;
        w->val_cap[p] = B;
        w->val_slot[p] = slot;
        w->val_list[p] = list;
        w->val_rec[p] = rec;
        w->val_mask[p] = mask;
        w->val_w[p] = wt;
        w->val_first[p] = first;
    }
    w->row = carve(c, B, w->row_stride * es);
    w->WT = carve(c, n_params, es);
    w->Wf = w->f32 ? carve(c, n_params, es) : NULL;
    w->Gf = w->f32 ? carve(c, n_params, es) : NULL;
    w->row_slot = carve(c, B, (np ? np : 1) * sizeof(uint32_t));
    w->dec_code = carve(c, n_dec, sizeof(void *));
    w->dec_x = carve(c, n_dec, sizeof(void *));
    w->dec_mask = carve(c, n_dec, sizeof(void *));
    w->dec_dcd = carve(c, n_dec, sizeof(void *));
    w->dec_w = carve(c, n_dec, es);
    w->n_vals_view = carve(c, np, sizeof(size_t));
    w->last.rows = carve(c, B, sizeof(size_t));
}

bl_status bl_bwork_new(const bl_bnet *net, const bl_bview *v, size_t max_batch, bl_bwork **out,
                       bl_error *err) {
    if (!net || !v || !out) return bl_seterr(err, BL_EINVAL, "bl_bwork_new: NULL argument");
    *out = NULL;
    if (max_batch == 0) return bl_seterr(err, BL_EINVAL, "batch size must be positive");
    const bl_bnet_dims *d = &net->d;
    size_t np = (size_t)d->n_ess + (size_t)d->n_opt;
    if (v->n_sx == 0 || !v->sx_feat) return bl_seterr(err, BL_EINVAL, "view has no scale-out table");
    if (np && (!v->n_vals || !v->vecs)) return bl_seterr(err, BL_EINVAL, "view has no property tables");
    const size_t H = (size_t)d->ae_hidden, Z = (size_t)d->z_hidden;
    bl_bwork *w = calloc(1, sizeof *w);
    if (!w) return bl_seterr(err, BL_ENOMEM, "out of memory for a training workspace");
    w->max_batch = max_batch;
    w->n_props = np;
    w->f32 = d->f32;
    const size_t es = w->f32 ? sizeof(float) : sizeof(double);
    w->sx_stride = BL_ROUND_REC(2 * (size_t)d->f_hidden + 3 * (size_t)d->f_out + 2 * Z, es);
    w->sx_cap = v->n_sx < max_batch ? v->n_sx : max_batch;
    w->val_stride = w->f32 ? BL_SLOT_STRIDE_F32(d->ae_hidden, d->code, d->z_hidden, d->vec_len)
                           : BL_SLOT_STRIDE(d->ae_hidden, d->code, d->z_hidden);
    w->row_stride = BL_ROUND_REC(2 * Z + 3, es);
    size_t n_dec; /* decoder slots: at most one per row and property */
    carver c = {NULL, 0, 0};
    if (bl_mul_size(max_batch, np ? np : 1, &n_dec)) c.ovf = 1;
    else bwork_layout(w, &c, v, v->n_sx, net->P.n, H, n_dec);
    if (c.ovf || c.off > SIZE_MAX - BL_REC_ALIGN) {
        free(w);
        return bl_seterr(err, BL_ERANGE, "training workspace size overflows");
    }
    w->block = calloc(1, c.off + BL_REC_ALIGN);
    if (!w->block) {
        free(w);
        return bl_seterr(err, BL_ENOMEM, "out of memory for a training workspace (%zu bytes)", c.off);
    }
    const size_t total = c.off;
    c.base = (unsigned char *)w->block + (BL_REC_ALIGN - (uintptr_t)w->block % BL_REC_ALIGN) % BL_REC_ALIGN;
    c.off = 0;
    bwork_layout(w, &c, v, v->n_sx, net->P.n, H, n_dec);
    if (c.ovf || c.off != total) { /* cannot happen: the same walk */
        bl_bwork_free(w);
        return bl_seterr(err, BL_EINTERNAL, "training workspace layout changed between sizing and carving");
    }
    for (size_t p = 0; p < np; p++)
        for (size_t i = 0; i < v->n_vals[p]; i++) w->val_slot[p][i] = -1;
    for (size_t i = 0; i < v->n_sx; i++) w->sx_slot[i] = -1;
    w->n_sx_view = v->n_sx;
    for (size_t p = 0; p < np; p++) w->n_vals_view[p] = v->n_vals[p];
    *out = w;
    return BL_OK;
}
