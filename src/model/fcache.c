/* fcache.c — f's outputs per whole scale-out, computed in chunks on first use (fcache.h). */
#include "model/fcache.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "encode/encode.h"
#include "model/model_internal.h"

#define CHUNK 64
#define N_CHUNKS (BL_FCACHE_MAX / CHUNK)

struct bl_fcache {
    const bl_model *m;
    int K;                          /* members */
    size_t FO;                      /* f's outputs per member */
    _Atomic(double *) chunk[N_CHUNKS]; /* [K][CHUNK][FO] for scale-outs 64c + 1 .. 64c + 64 */
};

bl_fcache *bl_fcache_new(const bl_model *m) {
    if (!m) return NULL;
    bl_fcache *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->m = m;
    c->K = m->n_members;
    c->FO = (size_t)m->net.d.f_out;
    for (int i = 0; i < N_CHUNKS; i++) atomic_init(&c->chunk[i], NULL);
    return c;
}

void bl_fcache_free(bl_fcache *c) {
    if (!c) return;
    for (int i = 0; i < N_CHUNKS; i++) free(atomic_load(&c->chunk[i]));
    free(c);
}

/* f's outputs of members for n scale-outs x: F[k] [n][FO]. */
static void f_of(const bl_model *m, const double *x, size_t n, double *const *F) {
    double feat[CHUNK * BL_SCALEOUT_NFEAT];
    bl_scaleout_features_forward(x, n, feat);
    bl_minmax_transform(&m->scaler, feat, n, feat);
    for (int k = 0; k < m->n_members; k++) bl_bnet_f_forward(bl_model_member_c(m, k), feat, n, F[k]);
}

/* Chunk ci, computing and publishing it when no thread has yet; NULL when out of memory. */
static const double *chunk_get(bl_fcache *c, int ci) {
    double *p = atomic_load_explicit(&c->chunk[ci], memory_order_acquire);
    if (p) return p;
    const size_t per = CHUNK * c->FO;
    double *buf = malloc((size_t)c->K * per * sizeof *buf);
    if (!buf) return NULL;
    double x[CHUNK], *F[BL_MODEL_MEMBERS_MAX];
    for (int i = 0; i < CHUNK; i++) x[i] = (double)(ci * CHUNK + i + 1);
    for (int k = 0; k < c->K; k++) F[k] = buf + (size_t)k * per;
    f_of(c->m, x, CHUNK, F);
    double *expected = NULL;
    if (atomic_compare_exchange_strong_explicit(&c->chunk[ci], &expected, buf, memory_order_acq_rel,
                                                memory_order_acquire))
        return buf;
    free(buf); /* another thread published it first: the same values */
    return expected;
}

/* Chunk and row of a whole scale-out the cache keeps, or -1. */
static int cached_at(double x, int *row) {
    if (!(x >= 1.0 && x <= BL_FCACHE_MAX) || x != floor(x)) return -1;
    const int i = (int)x - 1;
    *row = i % CHUNK;
    return i / CHUNK;
}

bl_status bl_model_predict_cached(const bl_model *m, bl_fcache *c, const double *ctx, const double *x, size_t n,
                                  double *out, bl_error *err) {
    if (!m || !ctx || (n && (!x || !out)) || (c && c->m != m))
        return bl_seterr(err, BL_EINVAL, "bl_model_predict_cached: NULL argument or another model's cache");
    if (!c) {
        bl_model_predict_at(m, ctx, x, n, out);
        return BL_OK;
    }
    const bl_bnet *nets[BL_MODEL_MEMBERS_MAX];
    for (int k = 0; k < m->n_members; k++) nets[k] = bl_model_member_c(m, k);
    const size_t FO = c->FO;
    double scratch[BL_MODEL_MEMBERS_MAX][CHUNK * 8];
    if (FO > 8) { /* only the paper's f is kept this way */
        bl_model_predict_at(m, ctx, x, n, out);
        return BL_OK;
    }
    for (size_t i0 = 0; i0 < n;) {
        size_t nb = n - i0 < CHUNK ? n - i0 : CHUNK;
        const double *F[BL_MODEL_MEMBERS_MAX];
        int row, ci = cached_at(x[i0], &row);
        /* a run of consecutive scale-outs inside one chunk is read in place */
        size_t run = 0;
        if (ci >= 0)
            while (run < nb && row + (int)run < CHUNK && x[i0 + run] == x[i0] + (double)run) run++;
        const double *base = ci >= 0 && run > 1 ? chunk_get(c, ci) : NULL;
        if (base) {
            nb = run;
            for (int k = 0; k < c->K; k++) F[k] = base + ((size_t)k * CHUNK + (size_t)row) * FO;
        } else { /* otherwise row by row: from the cache where it has them, computed where not */
            double *Fw[BL_MODEL_MEMBERS_MAX];
            for (int k = 0; k < c->K; k++) Fw[k] = scratch[k], F[k] = scratch[k];
            for (size_t i = 0; i < nb; i++) {
                const double *src = NULL;
                int r2, c2 = cached_at(x[i0 + i], &r2);
                if (c2 >= 0) src = chunk_get(c, c2);
                if (src)
                    for (int k = 0; k < c->K; k++)
                        memcpy(Fw[k] + i * FO, src + ((size_t)k * CHUNK + (size_t)r2) * FO, FO * sizeof(double));
                else {
                    double *one[BL_MODEL_MEMBERS_MAX];
                    for (int k = 0; k < c->K; k++) one[k] = Fw[k] + i * FO;
                    f_of(m, x + i0 + i, 1, one);
                }
            }
        }
        bl_bnet_predict_median_f(nets, m->n_members, ctx, F, nb, out + i0);
        bl_model_to_seconds(m, x + i0, out + i0, nb);
        i0 += nb;
    }
    return BL_OK;
}
