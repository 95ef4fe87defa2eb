/* params.h — every trainable number of a model in four parallel contiguous blocks (parameters,
 * gradients, Adam first and second moments) with named views into them.
 *
 * Why: a model file writes each view by name, a GPU copy is one memcpy per block, and the optimiser
 * walks ranges instead of pointer lists. Layers keep OFFSETS (never pointers) into the blocks, because
 * adding a view may move the blocks (realloc).
 *
 * A view is a rows×cols row-major matrix at `offset` elements into each block; views never overlap and
 * follow each other in the order they were added. Each view has a freeze flag (Adam skips it: its
 * parameters and moments stay bit-identical) and its own Adam step count (PyTorch counts steps per
 * parameter tensor, which matters when a view is unfrozen later).
 * Not here: initialisation values (init.h) or file I/O (modelfile/).
 */
#ifndef BL_NN_PARAMS_H
#define BL_NN_PARAMS_H

#include <stddef.h>

#include "bellamy/bellamy.h"

#define BL_PARAM_NAME_MAX 64

typedef struct bl_param_view {
    char   name[BL_PARAM_NAME_MAX]; /* e.g. "encoder.0.weight" (PyTorch state-dict style) */
    size_t offset;                  /* element offset into each block */
    int    rows, cols;              /* shape; size = rows·cols */
    int    frozen;                  /* 1: Adam leaves parameters and moments untouched */
    long   step;                    /* Adam steps taken by this view */
} bl_param_view;

typedef struct bl_params {
    double *param;   /* [n] values */
    double *grad;    /* [n] dLoss/dparam, accumulated by backward passes */
    double *m, *v;   /* [n] Adam moments */
    size_t  n;       /* elements in use */
    size_t  cap;     /* elements allocated */
    bl_param_view *views;
    int     n_views, cap_views;
} bl_params;

/* Empties p (no allocation). */
bl_status bl_params_init(bl_params *p, bl_error *err);
/* Frees the blocks and views; accepts NULL and an initialised-but-empty p; leaves p empty. */
void bl_params_free(bl_params *p);

/* Appends a rows×cols view named `name` (unique, 1..63 chars), zero in all four blocks. Stores its
 * element offset in *offset and its index in *view (either may be NULL).
 * BL_EINVAL: NULL p/name, empty, too long or duplicate name, rows or cols ≤ 0.
 * BL_ERANGE: total size overflows size_t/int.  BL_ENOMEM: allocation failed (p unchanged). */
bl_status bl_params_add(bl_params *p, const char *name, int rows, int cols,
                        size_t *offset, int *view, bl_error *err);

/* Index of the view called name, or -1. */
int bl_params_find(const bl_params *p, const char *name);

/* Sets the freeze flag of every view whose name starts with prefix ("" = all); stores the number of
 * views changed in *count (may be NULL). BL_EINVAL: NULL p/prefix; BL_ENOTFOUND: no view matched. */
bl_status bl_params_set_frozen(bl_params *p, const char *prefix, int frozen, int *count, bl_error *err);

/* grad[0..n) = 0 (host memory). */
void bl_params_zero_grad(bl_params *p);
/* Clears the Adam moments and step counts (a fresh optimiser on the same parameters). */
void bl_params_reset_adam(bl_params *p);

#endif /* BL_NN_PARAMS_H */
