/* gemm.h — row-major double GEMM kernels behind one signature:
 *
 *     C[M×N] = alpha · op(A)[M×K] · op(B)[K×N] + beta · C          op(X) = X or Xᵀ
 *
 * All matrices are row-major. A is stored M×K (lda ≥ K) when transA == 0 and K×M (lda ≥ M) when
 * transA != 0; likewise B is K×N (ldb ≥ N) or N×K (ldb ≥ K); C is M×N (ldc ≥ N). As in BLAS,
 * beta == 0 means C is written without being read (NaNs already in C do not propagate).
 *
 * Kernels (no argument checking here: these are the backends' inner loops; the layers validate):
 *   bl_gemm_ref   portable triple loop, compiled in every build; the reference for tests.
 *   bl_gemm_small register-blocked direct loops for very small products (a few rows), where a
 *                 BLAS call's fixed overhead costs more than the arithmetic.
 *   bl_gemm_blas  OpenBLAS cblas_dgemm with CblasRowMajor.
 *   bl_gemm_cpu   the CPU backend's choice: bl_gemm_small below BL_GEMM_SMALL_FLOPS, else BLAS.
 * Not here: threading policy (the caller sets OpenBLAS's thread count), device memory.
 */
#ifndef BL_NN_GEMM_H
#define BL_NN_GEMM_H

typedef void (*bl_gemm_fn)(int transA, int transB, int M, int N, int K, double alpha,
                           const double *A, int lda, const double *B, int ldb,
                           double beta, double *C, int ldc);

/* M·N·K at or below which bl_gemm_cpu uses bl_gemm_small. Measured with bench_nn (OpenBLAS 0.3.21,
 * one thread, x86-64): OpenBLAS's call costs ~100–300 ns, and its vectorised kernels win from a few
 * hundred multiply-adds up — already for 64×16×3 (1.6 µs vs 2.8 µs) — while the direct kernel wins
 * only on very small products such as 5×8×4 (115 ns vs 142 ns). */
#define BL_GEMM_SMALL_FLOPS 256LL

void bl_gemm_ref(int transA, int transB, int M, int N, int K, double alpha,
                 const double *A, int lda, const double *B, int ldb,
                 double beta, double *C, int ldc);
void bl_gemm_small(int transA, int transB, int M, int N, int K, double alpha,
                   const double *A, int lda, const double *B, int ldb,
                   double beta, double *C, int ldc);
void bl_gemm_blas(int transA, int transB, int M, int N, int K, double alpha,
                  const double *A, int lda, const double *B, int ldb,
                  double beta, double *C, int ldc);
void bl_gemm_cpu(int transA, int transB, int M, int N, int K, double alpha,
                 const double *A, int lda, const double *B, int ldb,
                 double beta, double *C, int ldc);

/* Sets OpenBLAS's thread count (1 for reproducible single-thread figures); no-op when n < 1. */
void bl_blas_set_threads(int n);

#endif /* BL_NN_GEMM_H */
