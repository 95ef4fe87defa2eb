/* gemm.h — row-major double GEMM behind one signature:
 *
 *     C[M×N] = alpha · op(A)[M×K] · op(B)[K×N] + beta · C          op(X) = X or Xᵀ
 *
 * All matrices are row-major. A is stored M×K (lda ≥ K) when transA == 0 and K×M (lda ≥ M) when
 * transA != 0; likewise B is K×N (ldb ≥ N) or N×K (ldb ≥ K); C is M×N (ldc ≥ N). As in BLAS,
 * beta == 0 means C is written without being read (NaNs already in C do not propagate).
 *   bl_gemm_ref   portable triple loop, compiled in every build; the reference tests hold OpenBLAS to.
 *   bl_gemm_blas  OpenBLAS cblas_dgemm with CblasRowMajor: the trial group's CPU ops (tgroup_cpu.c).
 *                 In a build without BLAS (BL_HAVE_BLAS 0, -Dblas=disabled) it is bl_gemm_ref: the
 *                 batched CPU group is a test reference, slower than the per-trial kernels either way.
 * The per-trial pass does not use GEMMs: its layers are 4 to 40 wide, where a BLAS call costs more
 * than the arithmetic (kern/pass.c).
 * Not here: threading policy (the caller sets OpenBLAS's thread count), device memory.
 */
#ifndef BL_NN_GEMM_H
#define BL_NN_GEMM_H

typedef void (*bl_gemm_fn)(int transA, int transB, int M, int N, int K, double alpha,
                           const double *A, int lda, const double *B, int ldb,
                           double beta, double *C, int ldc);

void bl_gemm_ref(int transA, int transB, int M, int N, int K, double alpha,
                 const double *A, int lda, const double *B, int ldb,
                 double beta, double *C, int ldc);
void bl_gemm_blas(int transA, int transB, int M, int N, int K, double alpha,
                  const double *A, int lda, const double *B, int ldb,
                  double beta, double *C, int ldc);

/* Sets OpenBLAS's thread count (1 for reproducible single-thread figures); no-op when n < 1 or without BLAS. */
void bl_blas_set_threads(int n);

#endif /* BL_NN_GEMM_H */
