/* gemm.c — the GEMM kernels declared in gemm.h: a portable reference, a direct kernel for tiny
 * shapes, the OpenBLAS wrapper and the size dispatch used by the CPU backend.
 * Not here: argument validation (callers are the layers, which validate once at their boundary). */
#include "nn/gemm.h"

#include <cblas.h>
#include <stddef.h>

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

/* The direct kernel: a 4×4 register-blocked loop with no packing and no allocation. op(A) and op(B)
 * are read through (row, column) strides, so one body serves all four transpose cases. Sixteen
 * independent accumulators keep the floating-point units busy where a single running dot product would
 * wait on add latency. Only for very small products does this beat a BLAS call, whose fixed cost
 * (argument checks, dispatch, packing) dominates there; see BL_GEMM_SMALL_FLOPS. */
#define SMALL_MR 4
#define SMALL_NR 4

/* C block [mr×nr] at (i0, j0) for a partial edge block (mr, nr ≤ 4). */
static void small_edge(int mr, int nr, int K, double alpha, const double *A, ptrdiff_t sai, ptrdiff_t sak,
                       const double *B, ptrdiff_t sbk, ptrdiff_t sbj, double beta, double *C, int ldc) {
    double acc[SMALL_MR][SMALL_NR] = {{0}};
    for (int k = 0; k < K; k++)
        for (int i = 0; i < mr; i++) {
            const double a = A[i * sai + k * sak];
            for (int j = 0; j < nr; j++) acc[i][j] += a * B[k * sbk + j * sbj];
        }
    for (int i = 0; i < mr; i++)
        for (int j = 0; j < nr; j++) {
            double *c = &C[(size_t)i * ldc + j];
            *c = (beta == 0.0) ? alpha * acc[i][j] : alpha * acc[i][j] + beta * *c;
        }
}

void bl_gemm_small(int transA, int transB, int M, int N, int K, double alpha,
                   const double *A, int lda, const double *B, int ldb,
                   double beta, double *C, int ldc) {
    if (M <= 0 || N <= 0) return;
    /* op(A)(i, k) = A[i·sai + k·sak];  op(B)(k, j) = B[k·sbk + j·sbj] */
    const ptrdiff_t sai = transA ? 1 : lda, sak = transA ? lda : 1;
    const ptrdiff_t sbk = transB ? 1 : ldb, sbj = transB ? ldb : 1;
    int i0 = 0;
    for (; i0 + SMALL_MR <= M; i0 += SMALL_MR) {
        const double *a = A + i0 * sai;
        int j0 = 0;
        for (; j0 + SMALL_NR <= N; j0 += SMALL_NR) {
            const double *b = B + j0 * sbj;
            double c00 = 0, c01 = 0, c02 = 0, c03 = 0, c10 = 0, c11 = 0, c12 = 0, c13 = 0;
            double c20 = 0, c21 = 0, c22 = 0, c23 = 0, c30 = 0, c31 = 0, c32 = 0, c33 = 0;
            for (int k = 0; k < K; k++) {
                const double *ak = a + k * sak, *bk = b + k * sbk;
                const double a0 = ak[0], a1 = ak[sai], a2 = ak[2 * sai], a3 = ak[3 * sai];
                const double b0 = bk[0], b1 = bk[sbj], b2 = bk[2 * sbj], b3 = bk[3 * sbj];
                c00 += a0 * b0, c01 += a0 * b1, c02 += a0 * b2, c03 += a0 * b3;
                c10 += a1 * b0, c11 += a1 * b1, c12 += a1 * b2, c13 += a1 * b3;
                c20 += a2 * b0, c21 += a2 * b1, c22 += a2 * b2, c23 += a2 * b3;
                c30 += a3 * b0, c31 += a3 * b1, c32 += a3 * b2, c33 += a3 * b3;
            }
            double acc[4][4] = {{c00, c01, c02, c03}, {c10, c11, c12, c13}, {c20, c21, c22, c23}, {c30, c31, c32, c33}};
            for (int i = 0; i < 4; i++) {
                double *c = C + (size_t)(i0 + i) * ldc + j0;
                if (beta == 0.0)
                    for (int j = 0; j < 4; j++) c[j] = alpha * acc[i][j];
                else
                    for (int j = 0; j < 4; j++) c[j] = alpha * acc[i][j] + beta * c[j];
            }
        }
        if (j0 < N)
            small_edge(SMALL_MR, N - j0, K, alpha, a, sai, sak, B + j0 * sbj, sbk, sbj, beta,
                       C + (size_t)i0 * ldc + j0, ldc);
    }
    if (i0 < M)
        for (int j0 = 0; j0 < N; j0 += SMALL_NR)
            small_edge(M - i0, N - j0 < SMALL_NR ? N - j0 : SMALL_NR, K, alpha, A + i0 * sai, sai, sak,
                       B + j0 * sbj, sbk, sbj, beta, C + (size_t)i0 * ldc + j0, ldc);
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

void bl_gemm_cpu(int transA, int transB, int M, int N, int K, double alpha,
                 const double *A, int lda, const double *B, int ldb,
                 double beta, double *C, int ldc) {
    if ((long long)M * N * K <= BL_GEMM_SMALL_FLOPS)
        bl_gemm_small(transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    else
        bl_gemm_blas(transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

void bl_blas_set_threads(int n) {
    if (n >= 1) openblas_set_num_threads(n);
}
