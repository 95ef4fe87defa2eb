/* kern/init.c — a copy's entries of the kernel table (kernels.h), compiled once per copy (isa.h). The
 * float32 copies have no Adam of their own: the parameters and Adam's moments stay float64 (kernels.c
 * gives their table the float64 copy's). */
#include "nn/kern/isa.h"

#include "nn/kernels.h"

bl_status KFN(bl_kern_pass)(bl_bnet *net, const bl_bview *v, const size_t *rows, size_t B, const bl_bpass *pass,
                            bl_bwork *w, double *pred, bl_bloss *loss, bl_error *err);
void KFN(bl_kern_f_forward)(const bl_bnet *net, const double *feat, size_t n, double *F);
void KFN(bl_kern_predict)(const bl_bnet *net, const double *ctx, const double *feat, size_t n, double *out);
void KFN(bl_kern_predict_median)(const bl_bnet *const *nets, int K, const double *ctx, const double *feat, size_t n,
                                 double *out);
void KFN(bl_kern_predict_median_f)(const bl_bnet *const *nets, int K, const double *ctx, const double *const *F,
                                   size_t n, double *out);
void KFN(bl_kern_act)(int fn, const double *x, size_t n, double *y);
#if !BL_F32
void KFN(bl_kern_adam)(size_t n, const bl_adam_hyper *h, double *p, const double *g, double *m, double *v);
#endif

static const char *const copy_name[] = {"generic", "avx2", "avx512"};

void KFN(bl_kernels_init)(bl_kernel_table *k) {
    k->name = copy_name[BL_ISA];
    k->level = BL_ISA;
    k->f32 = BL_F32;
    k->pass = KFN(bl_kern_pass);
    k->f_forward = KFN(bl_kern_f_forward);
    k->predict = KFN(bl_kern_predict);
    k->predict_median = KFN(bl_kern_predict_median);
    k->predict_median_f = KFN(bl_kern_predict_median_f);
    k->act = KFN(bl_kern_act);
#if BL_F32
    k->adam = NULL;
#else
    k->adam = KFN(bl_kern_adam);
#endif
}
