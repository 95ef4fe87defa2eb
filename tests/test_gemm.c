/* test_gemm.c — OpenBLAS's GEMM (bl_gemm_blas, the batched CPU trial group's) against the portable
 * reference on random shapes: both transposes, alpha and beta, padded leading dimensions (padding left
 * alone), and C never read when beta == 0. In a build without BLAS (-Dblas=disabled) bl_gemm_blas is
 * the reference itself, so there is nothing to compare: the suite reports SKIP. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bl_config.h"
#include "nn/nn.h"

static void fill_normal(bl_rng *r, double *x, size_t n, double scale) {
    for (size_t i = 0; i < n; i++) x[i] = scale * bl_rng_normal(r);
}

/* Max |C1 - C2| / (|alpha|·Σ|a||b| + |beta·C0| + 1) over all elements, for C from two kernels. */
static double gemm_compare(bl_gemm_fn f, bl_rng *r, int tA, int tB, int M, int N, int K, double alpha,
                           double beta, int pad, int nan_c) {
    int lda = (tA ? M : K) + pad, ldb = (tB ? K : N) + pad, ldc = N + pad;
    size_t na = (size_t)(tA ? K : M) * lda, nb = (size_t)(tB ? N : K) * ldb, nc = (size_t)M * ldc;
    double *A = malloc(na * sizeof *A), *B = malloc(nb * sizeof *B);
    double *C1 = malloc(nc * sizeof *C1), *C2 = malloc(nc * sizeof *C2);
    fill_normal(r, A, na, 1.0);
    fill_normal(r, B, nb, 1.0);
    fill_normal(r, C1, nc, 1.0);
    if (nan_c)
        for (size_t i = 0; i < nc; i++) C1[i] = NAN;
    memcpy(C2, C1, nc * sizeof *C1);
    bl_gemm_ref(tA, tB, M, N, K, alpha, A, lda, B, ldb, beta, C1, ldc);
    f(tA, tB, M, N, K, alpha, A, lda, B, ldb, beta, C2, ldc);
    double worst = 0.0;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double scale = 1.0 + 4.0 * K;
            double e = fabs(C1[(size_t)i * ldc + j] - C2[(size_t)i * ldc + j]) / scale;
            if (isnan(e)) e = INFINITY;
            worst = fmax(worst, e);
        }
    /* Padding columns must be left alone. */
    for (int i = 0; i < M; i++)
        for (int j = N; j < ldc; j++)
            if (!(C1[(size_t)i * ldc + j] == C2[(size_t)i * ldc + j] ||
                  (isnan(C1[(size_t)i * ldc + j]) && isnan(C2[(size_t)i * ldc + j]))))
                worst = INFINITY;
    free(A), free(B), free(C1), free(C2);
    return worst;
}

START_TEST(test_gemm_blas_matches_reference) {
    bl_rng r;
    bl_rng_seed(&r, 99);
    const double alphas[2] = {1.0, -0.7}, betas[3] = {0.0, 1.0, 0.35};
    int cases = 0;
    for (int trial = 0; trial < 40; trial++) {
        int M, N, K;
        if (trial < 4) { /* 1-row batches and degenerate widths */
            M = 1, N = 1 + (int)bl_rng_int(&r, 20), K = 1 + (int)bl_rng_int(&r, 40);
            if (trial == 1) N = 1;
            if (trial == 2) K = 1;
        } else if (trial < 30) {
            M = 1 + (int)bl_rng_int(&r, 70), N = 1 + (int)bl_rng_int(&r, 20), K = 1 + (int)bl_rng_int(&r, 45);
        } else {
            M = 60 + (int)bl_rng_int(&r, 60), N = 60 + (int)bl_rng_int(&r, 60), K = 70 + (int)bl_rng_int(&r, 60);
        }
        for (int tA = 0; tA < 2; tA++)
            for (int tB = 0; tB < 2; tB++) {
                double alpha = alphas[trial % 2], beta = betas[trial % 3];
                double e = gemm_compare(bl_gemm_blas, &r, tA, tB, M, N, K, alpha, beta, trial % 3, 0);
                if (e > 1e-14) ck_abort_msg("blas gemm tA=%d tB=%d M=%d N=%d K=%d: err %g", tA, tB, M, N, K, e);
                cases++;
            }
    }
    ck_assert_int_eq(cases, 40 * 4);
    /* beta == 0 writes C without reading it: NaNs already there must vanish. */
    for (int tA = 0; tA < 2; tA++)
        for (int tB = 0; tB < 2; tB++)
            ck_assert_msg(gemm_compare(bl_gemm_blas, &r, tA, tB, 5, 7, 3, 1.0, 0.0, 1, 1) < 1e-14,
                          "blas gemm reads C when beta == 0");
}
END_TEST

Suite *bl_test_suite(void) {
    if (!BL_HAVE_BLAS)
        bl_test_skip_all("this build has no BLAS (-Dblas=disabled or OpenBLAS not found): bl_gemm_blas is the "
                         "portable reference, nothing to compare it with");
    Suite *s = suite_create("gemm");
    TCase *tc = tcase_create("blas");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_gemm_blas_matches_reference);
    suite_add_tcase(s, tc);
    return s;
}
