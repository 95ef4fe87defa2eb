/* gemm.c — the GEMMs declared in gemm.h: the portable reference and the OpenBLAS wrapper (the
 * reference itself in a build without BLAS, -Dblas=disabled).
 * Not here: argument validation (callers check their shapes). */
#include "nn/gemm.h"

#include "bl_config.h"

#include <stddef.h>
#if BL_HAVE_BLAS
#include <cblas.h>
#endif

/* Element (i, j) of op(X) for a row-major X with leading dimension ld. */
#define OPX(X, t, ld, i, j) ((t) ? (X)[(size_t)(j) * (ld) + (i)] : (X)[(size_t)(i) * (ld) + (j)])

void bl_gemm_ref(int transA, int transB, int M, int N, int K, double alpha,
                 const double *A, int lda, const double *B, int ldb,
                 double beta, double *C, int ldc) {
    for (int i = 0; i < M; i++) {
        for (int j = 0; j < N; j++) {
            double acc = 0.0;
            for (int k = 0; k < K; k++) acc += OPX(A, transA, lda, i, k) * OPX(B, transB, ldb, k, j);
            double *c = &C[(size_t)i * ldc + j];
            *c = (beta == 0.0) ? alpha * acc : alpha * acc + beta * *c;
        }
    }
}

#if BL_HAVE_BLAS
/* C = beta·C, honouring the "beta == 0 writes, never reads" rule. */
static void scale_c(int M, int N, double beta, double *C, int ldc) {
    if (beta == 1.0) return;
    for (int i = 0; i < M; i++) {
        double *c = C + (size_t)i * ldc;
        if (beta == 0.0)
            for (int j = 0; j < N; j++) c[j] = 0.0;
        else
            for (int j = 0; j < N; j++) c[j] *= beta;
    }
}

void bl_gemm_blas(int transA, int transB, int M, int N, int K, double alpha,
                  const double *A, int lda, const double *B, int ldb,
                  double beta, double *C, int ldc) {
    if (M <= 0 || N <= 0) return;
    if (K <= 0) { /* BLAS leaves C untouched for K == 0 only when beta == 1; do the scaling here. */
        scale_c(M, N, beta, C, ldc);
        return;
    }
    cblas_dgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans, transB ? CblasTrans : CblasNoTrans,
                M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

void bl_blas_set_threads(int n) {
    if (n >= 1) openblas_set_num_threads(n);
}
#else
void bl_gemm_blas(int transA, int transB, int M, int N, int K, double alpha,
                  const double *A, int lda, const double *B, int ldb,
                  double beta, double *C, int ldc) {
    bl_gemm_ref(transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

void bl_blas_set_threads(int n) { (void)n; }
#endif
