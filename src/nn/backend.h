/* backend.h — the table of compute kernels the layers call: GEMM plus every element-wise op.
 *
 * Layers, losses and the optimiser never loop over tensor data themselves; they call through a
 * const bl_backend*. A CUDA backend (a later issue) supplies the same table with device pointers, so
 * it slots in without touching the layers. Two CPU tables exist:
 *   bl_backend_cpu()  OpenBLAS for large GEMMs, a direct kernel for tiny ones (see gemm.h);
 *   bl_backend_ref()  portable loops only (bl_gemm_ref), the reference the tests compare against.
 * The table is a plain struct: a caller may copy it and swap one entry (the benchmark forces BLAS
 * this way).
 *
 * Kernel conventions (no argument checks here; the layer functions validate first):
 *   - "_backward" kernels and the reductions ADD into their output (llm.c habit: gradients
 *     accumulate, zeroing is a separate step), unless the comment says "writes".
 *   - Output buffers must not alias inputs unless the comment allows it.
 *   - Sizes are element counts (size_t) or row/column counts (int).
 * Not here: memory allocation or transfer (device backends add those in their own header).
 */
#ifndef BL_NN_BACKEND_H
#define BL_NN_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "nn/gemm.h"

/* SELU constants (Klambauer et al., 2017), as PyTorch uses them. */
#define BL_SELU_LAMBDA 1.0507009873554805
#define BL_SELU_ALPHA  1.6732632423543772
/* -λα: SELU's negative saturation value, which AlphaDropout assigns to dropped units (α' in the paper). */
#define BL_SELU_ALPHA_PRIME (-1.7580993408473766)

typedef enum bl_act {
    BL_ACT_IDENTITY = 0,
    BL_ACT_SELU     = 1,
    BL_ACT_TANH     = 2
} bl_act;

typedef enum bl_loss_kind {
    BL_LOSS_SMOOTHL1 = 0, /* Huber with β = 1, mean over elements (PyTorch SmoothL1Loss()) */
    BL_LOSS_MSE      = 1, /* mean squared error */
    BL_LOSS_L1       = 2  /* mean absolute error */
} bl_loss_kind;

/* Adam hyper-parameters for one update of one contiguous range; bc1 = 1-β1^t, bc2 = 1-β2^t. */
typedef struct bl_adam_hyper {
    double lr, beta1, beta2, eps, weight_decay;
    double bc1, bc2;
} bl_adam_hyper;

typedef struct bl_backend {
    const char *name;     /* "cpu", "ref", later "cuda" */
    int         device;   /* 1 when the pointers given to this table are device memory */

    /* Row-major GEMM, see gemm.h. */
    bl_gemm_fn gemm;

    /* y[i] = f(x[i]), i < n (writes; y may equal x). */
    void (*act_forward)(bl_act act, size_t n, const double *x, double *y);
    /* dx[i] += f'(x[i]) · dy[i]; x is the forward input, y the forward output (SELU reads x, tanh
     * reads y, identity neither). dx must not alias dy. */
    void (*act_backward)(bl_act act, size_t n, const double *x, const double *y,
                         const double *dy, double *dx);

    /* Y[r, j] += b[j] for r < rows, j < cols (row stride ldy). */
    void (*bias_add)(int rows, int cols, const double *b, double *Y, int ldy);
    /* db[j] += Σ_r dY[r, j] (adds). */
    void (*bias_grad)(int rows, int cols, const double *dY, int lddy, double *db);

    /* y += a·x. */
    void (*axpy)(size_t n, double a, const double *x, double *y);
    /* x *= a. */
    void (*scale)(size_t n, double a, double *x);
    /* x[i] = v (writes; used to zero gradients). */
    void (*fill)(size_t n, double v, double *x);

    /* AlphaDropout with a host mask (1 keep, 0 drop): y = mask ? a·x + b : a·α' + b (writes; y may
     * equal x). */
    void (*dropout_forward)(size_t n, double a, double b, const uint8_t *mask, const double *x, double *y);
    /* dx += mask ? a·dy : 0 (adds). */
    void (*dropout_backward)(size_t n, double a, const uint8_t *mask, const double *dy, double *dx);

    /* Returns the loss (mean over n elements) and, when dpred != NULL, writes dL/dpred. */
    double (*loss)(bl_loss_kind kind, size_t n, const double *pred, const double *target, double *dpred);

    /* Adam over one contiguous range (PyTorch semantics, coupled weight decay):
     *   g' = g + wd·p;  m = m + (1-β1)(g' - m);  v = β2·v + (1-β2)·g'²;
     *   p -= (lr / bc1) · m / (sqrt(v) / sqrt(bc2) + eps).  g is not modified. */
    void (*adam)(size_t n, const bl_adam_hyper *h, double *p, const double *g, double *m, double *v);
} bl_backend;

/* The OpenBLAS-backed CPU table (small shapes use the direct kernel). Never NULL. */
const bl_backend *bl_backend_cpu(void);
/* For tests: runs one copy of the CPU backend's Adam update — 0 the plain loop, 1 AVX2, 2 AVX-512 —
 * and returns 1, or returns 0 without touching anything when this build or processor lacks it. */
int bl_backend_adam_copy(int which, size_t n, const bl_adam_hyper *h, double *p, const double *g, double *m,
                         double *v);

/* The portable reference table. Never NULL. */
const bl_backend *bl_backend_ref(void);

#endif /* BL_NN_BACKEND_H */
