/* kernels.h — the one table of hot kernels, filled once from the CPU probe (dav1d's pattern: each
 * kern/ file is one C source compiled per copy — generic, avx2, avx512 — and each copy's init
 * function overrides the entries it has). The generic copy is the reference: plain portable C,
 * compiled in every build, against which tests/test_kernels.c checks every other copy on random
 * shapes. Callers go through bl_kernels(); tests and benchmarks may ask for one copy with
 * bl_kernels_copy().
 *
 * Entries and their contracts (argument checks happen before: bpass.c, adam.c):
 *   pass            one training/evaluation pass (bl_bnet_pass in bpass.h)
 *   f_forward       f's outputs per scale-out (bl_bnet_f_forward)
 *   predict         one network's predictions (bl_bnet_predict_scaled)
 *   predict_median  the members' median (bl_bnet_predict_median), and from stored f outputs
 *   act             y[i] = SELU(x[i]) (fn 0) or tanh(x[i]) (fn 1), as the pass evaluates them
 *   adam            Adam over one range (PyTorch semantics, coupled weight decay; bit-identical in
 *                   every copy: no contraction, IEEE division and square root)
 */
#ifndef BL_NN_KERNELS_H
#define BL_NN_KERNELS_H

#include <stddef.h>

#include "nn/bpass.h"
#include "nn/cpu.h"

/* Adam hyper-parameters for one update of one contiguous range; bc1 = 1-β1^t, bc2 = 1-β2^t:
 *   g' = g + wd·p;  m = m + (1-β1)(g' - m);  v = β2·v + (1-β2)·g'²;
 *   p -= (lr / bc1) · m / (sqrt(v) / sqrt(bc2) + eps).  g is not modified. */
typedef struct bl_adam_hyper {
    double lr, beta1, beta2, eps, weight_decay;
    double bc1, bc2;
} bl_adam_hyper;

typedef struct bl_kernel_table {
    const char *name;   /* "generic", "avx2", "avx512" */
    int level;          /* BL_CPU_* */
    int f32;            /* 1: a float32 copy */
    bl_status (*pass)(bl_bnet *net, const bl_bview *v, const size_t *rows, size_t B, const bl_bpass *pass,
                      bl_bwork *w, double *pred, bl_bloss *loss, bl_error *err);
    void (*f_forward)(const bl_bnet *net, const double *feat, size_t n, double *F);
    void (*predict)(const bl_bnet *net, const double *ctx, const double *feat, size_t n, double *out);
    void (*predict_median)(const bl_bnet *const *nets, int K, const double *ctx, const double *feat, size_t n,
                           double *out);
    void (*predict_median_f)(const bl_bnet *const *nets, int K, const double *ctx, const double *const *F,
                             size_t n, double *out);
    void (*act)(int fn, const double *x, size_t n, double *y);
    void (*adam)(size_t n, const bl_adam_hyper *h, double *p, const double *g, double *m, double *v);
} bl_kernel_table;

/* The float64 table of the level in use (bl_cpu_level()). Never NULL. */
const bl_kernel_table *bl_kernels(void);
/* The table of the level in use in a precision (f32 0 or 1). Never NULL: every level this build has
 * exists in both precisions (a build without one is refused at configuration, src/nn/meson.build). */
const bl_kernel_table *bl_kernels_prec(int f32);
/* The table of one copy, or NULL when this build lacks it, the processor cannot run it, or
 * BELLAMY_CPU caps below it. bl_kernels_copy(BL_CPU_GENERIC) is never NULL. */
const bl_kernel_table *bl_kernels_copy(int level);
const bl_kernel_table *bl_kernels_copy_prec(int level, int f32);

/* Each copy's init: fills every entry (kern/init.c compiled per copy). */
void bl_kernels_init_generic(bl_kernel_table *k);
void bl_kernels_init_avx2(bl_kernel_table *k);
void bl_kernels_init_avx512(bl_kernel_table *k);
void bl_kernels_init_generic_f32(bl_kernel_table *k);
void bl_kernels_init_avx2_f32(bl_kernel_table *k);
void bl_kernels_init_avx512_f32(bl_kernel_table *k);

#endif /* BL_NN_KERNELS_H */
