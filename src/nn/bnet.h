/* bnet.h — the Bellamy network: its dimensions, the layout of its parameter block (one list of the
 * twelve blocks below, which every layout in the project is generated from), and its initialisation.
 *
 *   f  scale-out net   [1/x, ln x, x] (min-max scaled) → 16 → 8, SELU after both layers
 *   g  encoder         40 → 8 → 4, no biases, SELU, AlphaDropout(p) between, SELU
 *   h  decoder         4 → 8 → 40, no biases, SELU, AlphaDropout(p) between, tanh
 *   z  runtime net     [f(x) (8), codes of the m essential properties (4m), mean code of the
 *                      optional ones (4)] → 8 → 1, SELU after both layers
 *
 * The parameters live in one bl_params block (params.h) with PyTorch state-dict style names, weights
 * [out×in] row-major; a network keeps each block's element offset. The trial group's slots (tgroup_ops.h)
 * use the same offsets, generated from the same list.
 * Not here: passes, predictions and codes (bpass.h), data sets, training loops (model/), files
 * (modelfile/). This header is plain C that C++ (the CUDA module) can include too.
 */
#ifndef BL_NN_BNET_H
#define BL_NN_BNET_H

#include <stddef.h>

#include "bellamy/bellamy.h"
#include "nn/params.h"

#ifdef __cplusplus
extern "C" {
#endif

#define BL_BNET_DIM_MAX   256  /* largest layer width (vec_len ≤ 64 comes from the encoders) */
#define BL_BNET_PROPS_MAX 256  /* most essential (and most optional) properties */
#define BL_BNET_MEMBERS_MAX 16 /* most networks of one median prediction */

/* Dimensions; bl_bnet_dims_default fills the paper's values. */
typedef struct bl_bnet_dims {
    int f_in, f_hidden, f_out;     /* 3, 16, 8 */
    int vec_len, ae_hidden, code;  /* 40, 8, 4 */
    int z_hidden;                  /* 8 */
    int n_ess, n_opt;              /* essential / optional properties (n_ess ≥ 0, n_opt ≥ 0) */
    int f32;                       /* 0: the float64 engine; 1: the float32 kernel copies (parameters and
                                      Adam stay float64: passes and predictions compute in float32) */
} bl_bnet_dims;

/* The parameter blocks in the order they are laid out (and drawn at initialisation):
 * X(field, state-dict name, rows, cols), rows and cols read from dims D and z's input width ZI.
 * Biases are the blocks of one row whose name ends in ".bias". */
#define BL_BNET_BLOCKS(X, D, ZI)                                   \
    X(f0w, "f.0.weight", (D)->f_hidden, (D)->f_in)                 \
    X(f0b, "f.0.bias", 1, (D)->f_hidden)                           \
    X(f2w, "f.2.weight", (D)->f_out, (D)->f_hidden)                \
    X(f2b, "f.2.bias", 1, (D)->f_out)                              \
    X(g0w, "g.0.weight", (D)->ae_hidden, (D)->vec_len)             \
    X(g3w, "g.3.weight", (D)->code, (D)->ae_hidden)                \
    X(h0w, "h.0.weight", (D)->ae_hidden, (D)->code)                \
    X(h3w, "h.3.weight", (D)->vec_len, (D)->ae_hidden)             \
    X(z0w, "z.0.weight", (D)->z_hidden, (ZI))                      \
    X(z0b, "z.0.bias", 1, (D)->z_hidden)                           \
    X(z2w, "z.2.weight", 1, (D)->z_hidden)                         \
    X(z2b, "z.2.bias", 1, 1)

/* Offset fields, one per block (size_t here, long in the trial group's slots): expand
 * BL_BNET_BLOCKS(BL_BNET_SIZE_FIELD, 0, 0) inside a struct. */
#define BL_BNET_SIZE_FIELD(field, name, rows, cols) size_t field;
#define BL_BNET_LONG_FIELD(field, name, rows, cols) long field;

typedef struct bl_bnet {
    bl_bnet_dims d;
    int z_in;                      /* f_out + code·n_ess + code */
    bl_params P;
    BL_BNET_BLOCKS(BL_BNET_SIZE_FIELD, 0, 0) /* element offsets into P of each block: f0w, f0b, …, z2b */
} bl_bnet;

/* 1 for the paper's dimensions (f 3 → 16 → 8, auto-encoder 40 → 8 → 4 → 8 → 40, z … → 8 → 1), which
 * the vector copies run with their own kernels; other dimensions run the plain loops everywhere. */
static inline int bl_bnet_paper_dims(const bl_bnet_dims *d) {
    return d->f_in == 3 && d->f_hidden == 16 && d->f_out == 8 && d->ae_hidden == 8 && d->code == 4 &&
           d->vec_len == 40 && d->z_hidden == 8;
}

/* The paper's dimensions with n_ess essential and n_opt optional properties. */
void bl_bnet_dims_default(bl_bnet_dims *d, int n_ess, int n_opt);

/* Creates the parameter block; weights Kaiming-normal (SELU gain 3/4, fan-in; tanh gain 5/3 for the
 * decoder's output layer), zero biases, drawn from rng in the order of BL_BNET_BLOCKS. rng may be
 * NULL: zeros. BL_EINVAL for dimensions outside 1..BL_BNET_DIM_MAX or property counts outside
 * 0..BL_BNET_PROPS_MAX. */
struct bl_rng;
bl_status bl_bnet_init(bl_bnet *net, const bl_bnet_dims *d, struct bl_rng *rng, bl_error *err);
void bl_bnet_free(bl_bnet *net);
/* dst = src (same dims; parameters only, or parameters and Adam state). */
void bl_bnet_copy_params(bl_bnet *dst, const bl_bnet *src, int with_adam);

#ifdef __cplusplus
}
#endif

#endif /* BL_NN_BNET_H */
