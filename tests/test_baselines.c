/* test_baselines.c — Check suite of src/baselines: NNLS, Ernest, kernel regression, Bell.
 * NNLS is checked against brute force over all active sets and against the KKT conditions;
 * Ernest and Bell against the figures of issue 6 and against scores recomputed here by hand.
 */
#include "testutil.h"
#include "baselines/baselines.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

/* ---- helpers ------------------------------------------------------------------------------------ */

static uint64_t lcg_state;
static double lcg_uniform(void) { /* [0, 1), deterministic */
    lcg_state = lcg_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(lcg_state >> 11) / 9007199254740992.0;
}

/* ||A x − b||² for row-major A [m, n]. */
static double objective(const double *A, int m, int n, const double *b, const double *x) {
    double s = 0.0;
    for (int i = 0; i < m; i++) {
        double r = -b[i];
        for (int j = 0; j < n; j++) r += A[i * n + j] * x[j];
        s += r * r;
    }
    return s;
}

/* KKT of NNLS: x ≥ 0, w = Aᵀ(b − A x) ≤ tol, and |w_j| ≤ tol where x_j > 0. */
static void check_kkt(const double *A, int m, int n, const double *b, const double *x, double tol) {
    for (int j = 0; j < n; j++) {
        double w = 0.0;
        for (int i = 0; i < m; i++) {
            double r = b[i];
            for (int c = 0; c < n; c++) r -= A[i * n + c] * x[c];
            w += A[i * n + j] * r;
        }
        ck_assert_msg(x[j] >= 0.0, "x[%d] = %g < 0", j, x[j]);
        ck_assert_msg(w <= tol, "gradient w[%d] = %g > 0 (not optimal)", j, w);
        if (x[j] > 0.0) ck_assert_msg(fabs(w) <= tol, "w[%d] = %g but x[%d] > 0", j, w, j);
    }
}

/* Unconstrained least squares on the columns in mask (normal equations, Gauss–Jordan with pivoting;
 * fine for the small, well-conditioned random test problems). Returns 0 if singular. */
static int ls_subset(const double *A, int m, int n, const double *b, unsigned mask, double *x) {
    int idx[8], k = 0;
    for (int j = 0; j < n; j++) {
        x[j] = 0.0;
        if (mask & (1u << j)) idx[k++] = j;
    }
    double M[8][9];
    for (int r = 0; r < k; r++) {
        for (int c = 0; c < k; c++) {
            double s = 0.0;
            for (int i = 0; i < m; i++) s += A[i * n + idx[r]] * A[i * n + idx[c]];
            M[r][c] = s;
        }
        double s = 0.0;
        for (int i = 0; i < m; i++) s += A[i * n + idx[r]] * b[i];
        M[r][k] = s;
    }
    for (int c = 0; c < k; c++) {
        int p = c;
        for (int r = c + 1; r < k; r++)
            if (fabs(M[r][c]) > fabs(M[p][c])) p = r;
        if (fabs(M[p][c]) < 1e-12) return 0;
        for (int q = 0; q <= k; q++) {
            double t = M[c][q];
            M[c][q] = M[p][q];
            M[p][q] = t;
        }
        for (int r = 0; r < k; r++) {
            if (r == c) continue;
            double f = M[r][c] / M[c][c];
            for (int q = c; q <= k; q++) M[r][q] -= f * M[c][q];
        }
    }
    for (int r = 0; r < k; r++) x[idx[r]] = M[r][k] / M[r][r];
    return 1;
}

/* Ernest's true function of the issue: 5 + 4 ln x + 3/x + 2x. */
static double ernest_truth(double x) { return 5.0 + 4.0 * log(x) + 3.0 / x + 2.0 * x; }

/* ---- NNLS --------------------------------------------------------------------------------------- */

START_TEST(test_nnls_active_constraint) {
    /* A = I, b = (1, −1): the second coefficient wants −1 and must stop at 0. */
    const double A[] = {1, 0, 0, 1};
    const double b[] = {1, -1};
    double x[2], rn;
    ck_assert_int_eq(bl_nnls(A, 2, 2, b, x, &rn, 0, NULL), BL_OK);
    ck_assert_double_eq_tol(x[0], 1.0, 1e-15);
    ck_assert_double_eq(x[1], 0.0);
    ck_assert_double_eq_tol(rn, 1.0, 1e-15);

    /* A 4×3 problem whose unconstrained solution (1, −1, 2)+noise has a negative entry. */
    const double A2[] = {1, 2, 0, 0, 1, 1, 1, 0, 1, 2, 1, 1};
    double b2[4];
    const double xt[3] = {1, -1, 2};
    for (int i = 0; i < 4; i++) {
        b2[i] = 0.1 * (i % 2 ? 1 : -1);
        for (int j = 0; j < 3; j++) b2[i] += A2[i * 3 + j] * xt[j];
    }
    double x2[3];
    ck_assert_int_eq(bl_nnls(A2, 4, 3, b2, x2, NULL, 0, NULL), BL_OK);
    ck_assert_double_eq(x2[1], 0.0);
    check_kkt(A2, 4, 3, b2, x2, 1e-12);
}
END_TEST

START_TEST(test_nnls_bruteforce) {
    /* Random 8×5 problems: NNLS must reach the optimum found by enumerating every active set. */
    lcg_state = 12345;
    const int m = 8, n = 5;
    int constrained = 0;
    for (int trial = 0; trial < 200; trial++) {
        double A[8 * 5], b[8], x[5], best_x[5], xs[5];
        for (int i = 0; i < m * n; i++) A[i] = 2.0 * lcg_uniform() - 1.0;
        for (int i = 0; i < m; i++) b[i] = 2.0 * lcg_uniform() - 1.0;
        ck_assert_int_eq(bl_nnls(A, m, n, b, x, NULL, 0, NULL), BL_OK);
        double best = objective(A, m, n, b, (double[5]){0, 0, 0, 0, 0});
        memset(best_x, 0, sizeof best_x);
        for (unsigned mask = 1; mask < (1u << n); mask++) {
            if (!ls_subset(A, m, n, b, mask, xs)) continue;
            int feasible = 1;
            for (int j = 0; j < n; j++) feasible &= xs[j] >= 0.0;
            double f = objective(A, m, n, b, xs);
            if (feasible && f < best) {
                best = f;
                memcpy(best_x, xs, sizeof xs);
            }
        }
        ck_assert_double_eq_tol(objective(A, m, n, b, x), best, 1e-10);
        for (int j = 0; j < n; j++) ck_assert_double_eq_tol(x[j], best_x[j], 1e-8);
        check_kkt(A, m, n, b, x, 1e-12);
        for (int j = 0; j < n; j++) constrained += x[j] == 0.0;
    }
    ck_assert_int_gt(constrained, 100); /* the test really exercised active constraints */
}
END_TEST

START_TEST(test_nnls_exact_positive) {
    /* b = A xt with xt > 0: NNLS is plain least squares and recovers xt. */
    lcg_state = 777;
    double A[20 * 6], b[20], xt[6], x[6], rn;
    for (int i = 0; i < 120; i++) A[i] = lcg_uniform();
    for (int j = 0; j < 6; j++) xt[j] = 0.5 + j;
    for (int i = 0; i < 20; i++) {
        b[i] = 0.0;
        for (int j = 0; j < 6; j++) b[i] += A[i * 6 + j] * xt[j];
    }
    ck_assert_int_eq(bl_nnls(A, 20, 6, b, x, &rn, 0, NULL), BL_OK);
    for (int j = 0; j < 6; j++) ck_assert_double_eq_tol(x[j], xt[j], 1e-10);
    ck_assert_double_lt(rn, 1e-12);
}
END_TEST

START_TEST(test_nnls_degenerate) {
    /* b = 0 → x = 0. */
    const double A[] = {1, 2, 3, 4};
    const double z[] = {0, 0};
    double x[4] = {9, 9, 9, 9};
    ck_assert_int_eq(bl_nnls(A, 2, 2, z, x, NULL, 0, NULL), BL_OK);
    ck_assert_double_eq(x[0], 0.0);
    ck_assert_double_eq(x[1], 0.0);

    /* Identical columns: one of them carries the fit, the residual is optimal. */
    const double D[] = {1, 1, 2, 2, 3, 3};
    const double bd[] = {2, 4, 6};
    double rn;
    ck_assert_int_eq(bl_nnls(D, 3, 2, bd, x, &rn, 0, NULL), BL_OK);
    ck_assert_double_eq_tol(x[0] + x[1], 2.0, 1e-12);
    ck_assert_double_lt(rn, 1e-12);
    check_kkt(D, 3, 2, bd, x, 1e-12);

    /* Wide (m < n): at most m columns become active, KKT still holds. */
    const double W[] = {1, 2, 0.5, 3, 2, 1, 4, 0.2};
    const double bw[] = {1, 2};
    ck_assert_int_eq(bl_nnls(W, 2, 4, bw, x, &rn, 0, NULL), BL_OK);
    int active = 0;
    for (int j = 0; j < 4; j++) active += x[j] > 0.0;
    ck_assert_int_le(active, 2);
    ck_assert_double_lt(rn, 1e-12);
    check_kkt(W, 2, 4, bw, x, 1e-12);

    /* A zero column never enters. */
    const double Z0[] = {0, 1, 0, 2};
    const double bz[] = {1, 2};
    ck_assert_int_eq(bl_nnls(Z0, 2, 2, bz, x, NULL, 0, NULL), BL_OK);
    ck_assert_double_eq(x[0], 0.0);
    ck_assert_double_eq_tol(x[1], 1.0, 1e-15);
}
END_TEST

START_TEST(test_nnls_invalid) {
    const double A[] = {1, 0, 0, 1};
    const double b[] = {1, 1};
    double x[2];
    bl_error err;
    ck_assert_int_eq(bl_nnls(NULL, 2, 2, b, x, NULL, 0, &err), BL_EINVAL);
    ck_assert_int_eq(err.status, BL_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.message, "NULL"));
    ck_assert_int_eq(bl_nnls(A, 2, 2, NULL, x, NULL, 0, &err), BL_EINVAL);
    ck_assert_int_eq(bl_nnls(A, 2, 2, b, NULL, NULL, 0, &err), BL_EINVAL);
    ck_assert_int_eq(bl_nnls(A, 0, 2, b, x, NULL, 0, &err), BL_EINVAL);
    ck_assert_int_eq(bl_nnls(A, 2, -1, b, x, NULL, 0, NULL), BL_EINVAL);
    const double An[] = {1, NAN, 0, 1};
    ck_assert_int_eq(bl_nnls(An, 2, 2, b, x, NULL, 0, &err), BL_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.message, "not finite"));
    const double bi[] = {1, INFINITY};
    ck_assert_int_eq(bl_nnls(A, 2, 2, bi, x, NULL, 0, &err), BL_EINVAL);
}
END_TEST

START_TEST(test_nnls_iteration_cap) {
    /* Two columns must enter; a cap of one solve stops early with ERANGE and a feasible x. */
    const double A[] = {1, 0, 0, 1};
    const double b[] = {1, 2};
    double x[2];
    bl_error err;
    ck_assert_int_eq(bl_nnls(A, 2, 2, b, x, NULL, 1, &err), BL_ERANGE);
    ck_assert_ptr_nonnull(strstr(err.message, "iterations"));
    ck_assert(x[0] >= 0.0 && x[1] >= 0.0);
    ck_assert_int_eq(bl_nnls(A, 2, 2, b, x, NULL, 2, &err), BL_OK);
    ck_assert_double_eq_tol(x[1], 2.0, 1e-15);
}
END_TEST

/* ---- Ernest ------------------------------------------------------------------------------------- */

START_TEST(test_ernest_recovers) {
    double x[10], y[10];
    for (int i = 0; i < 10; i++) {
        x[i] = i + 1;
        y[i] = ernest_truth(x[i]);
    }
    bl_ernest e;
    ck_assert_int_eq(bl_ernest_fit(x, y, 10, &e, NULL), BL_OK);
    ck_assert_double_eq_tol(e.theta[0], 5.0, 1e-8);
    ck_assert_double_eq_tol(e.theta[1], 3.0, 1e-8);
    ck_assert_double_eq_tol(e.theta[2], 4.0, 1e-8);
    ck_assert_double_eq_tol(e.theta[3], 2.0, 1e-8);
    for (double q = 0.5; q <= 20.0; q += 0.25)
        ck_assert_double_eq_tol(bl_ernest_predict(&e, q), ernest_truth(q), 1e-8 * ernest_truth(q));
}
END_TEST

START_TEST(test_ernest_nonnegative) {
    /* y = 5 − 2x falls below zero; every basis function grows or its fit would need θ < 0. */
    double x[10], y[10];
    for (int i = 0; i < 10; i++) {
        x[i] = i + 1;
        y[i] = 5.0 - 2.0 * x[i];
    }
    bl_ernest e;
    ck_assert_int_eq(bl_ernest_fit(x, y, 10, &e, NULL), BL_OK);
    for (int j = 0; j < 4; j++) ck_assert_double_eq(e.theta[j], 0.0);
    for (double q = 0.5; q <= 50.0; q += 0.5) ck_assert_double_eq(bl_ernest_predict(&e, q), 0.0);

    /* A falling but positive runtime keeps θ ≥ 0 and fits where it can. */
    const double x2[] = {2, 4, 8, 16};
    double y2[4];
    for (int i = 0; i < 4; i++) y2[i] = 10.0 + 80.0 / x2[i];
    ck_assert_int_eq(bl_ernest_fit(x2, y2, 4, &e, NULL), BL_OK);
    for (int j = 0; j < 4; j++) ck_assert_double_ge(e.theta[j], 0.0);
    ck_assert_double_eq_tol(bl_ernest_predict(&e, 32.0), 12.5, 1e-8);
}
END_TEST

START_TEST(test_ernest_degenerate) {
    bl_ernest e;
    /* n = 1: under-determined; the fit still passes through the run with θ ≥ 0. */
    const double x1[] = {4}, y1[] = {100};
    ck_assert_int_eq(bl_ernest_fit(x1, y1, 1, &e, NULL), BL_OK);
    ck_assert_double_eq_tol(bl_ernest_predict(&e, 4.0), 100.0, 1e-9);
    for (int j = 0; j < 4; j++) ck_assert_double_ge(e.theta[j], 0.0);

    /* All x equal: the prediction there is the mean runtime. */
    const double xe[] = {4, 4, 4}, ye[] = {10, 12, 14};
    ck_assert_int_eq(bl_ernest_fit(xe, ye, 3, &e, NULL), BL_OK);
    ck_assert_double_eq_tol(bl_ernest_predict(&e, 4.0), 12.0, 1e-9);

    /* All x = 1 (the ln x column is zero). */
    const double xo[] = {1, 1}, yo[] = {3, 5};
    ck_assert_int_eq(bl_ernest_fit(xo, yo, 2, &e, NULL), BL_OK);
    ck_assert_double_eq_tol(bl_ernest_predict(&e, 1.0), 4.0, 1e-12);
    ck_assert_double_eq(e.theta[2], 0.0);

    /* Duplicated scale-outs with exact data still recover θ. */
    double xd[16], yd[16];
    for (int i = 0; i < 16; i++) {
        xd[i] = 2 + 2 * (i / 2); /* 2,2,4,4,…,16,16 */
        yd[i] = ernest_truth(xd[i]);
    }
    ck_assert_int_eq(bl_ernest_fit(xd, yd, 16, &e, NULL), BL_OK);
    ck_assert_double_eq_tol(e.theta[0], 5.0, 1e-7);
    ck_assert_double_eq_tol(e.theta[1], 3.0, 1e-7);
    ck_assert_double_eq_tol(e.theta[2], 4.0, 1e-7);
    ck_assert_double_eq_tol(e.theta[3], 2.0, 1e-7);
    /* Duplicates with noise: the fit equals the fit of the per-scale-out means (same optimum). */
    double ym[8], xm[8];
    for (int i = 0; i < 16; i += 2) {
        yd[i] += 1.0;
        yd[i + 1] -= 1.0;
        xm[i / 2] = xd[i];
        ym[i / 2] = ernest_truth(xd[i]);
    }
    bl_ernest e2;
    ck_assert_int_eq(bl_ernest_fit(xd, yd, 16, &e, NULL), BL_OK);
    ck_assert_int_eq(bl_ernest_fit(xm, ym, 8, &e2, NULL), BL_OK);
    for (int j = 0; j < 4; j++) ck_assert_double_eq_tol(e.theta[j], e2.theta[j], 1e-7);
}
END_TEST

START_TEST(test_ernest_invalid) {
    const double x[] = {1, 2, 3}, y[] = {3, 2, 1};
    bl_ernest e;
    bl_error err;
    ck_assert_int_eq(bl_ernest_fit(NULL, y, 3, &e, &err), BL_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.message, "ernest"));
    ck_assert_int_eq(bl_ernest_fit(x, NULL, 3, &e, &err), BL_EINVAL);
    ck_assert_int_eq(bl_ernest_fit(x, y, 3, NULL, &err), BL_EINVAL);
    ck_assert_int_eq(bl_ernest_fit(x, y, 0, &e, &err), BL_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.message, "n = 0"));
    ck_assert_int_eq(bl_ernest_fit(x, y, -3, &e, &err), BL_EINVAL);
    const double x0[] = {1, 0, 3}, xn[] = {1, -2, 3}, xnan[] = {1, NAN, 3};
    ck_assert_int_eq(bl_ernest_fit(x0, y, 3, &e, &err), BL_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.message, "x[1]"));
    ck_assert_int_eq(bl_ernest_fit(xn, y, 3, &e, &err), BL_EINVAL);
    ck_assert_int_eq(bl_ernest_fit(xnan, y, 3, &e, &err), BL_EINVAL);
    const double yinf[] = {1, 2, INFINITY};
    ck_assert_int_eq(bl_ernest_fit(x, yinf, 3, &e, &err), BL_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.message, "y[2]"));
    ck_assert_int_eq(bl_ernest_fit(x, y, 3, &e, &err), BL_OK);
    ck_assert(isnan(bl_ernest_predict(&e, 0.0)));
    ck_assert(isnan(bl_ernest_predict(&e, -1.0)));
    ck_assert(isnan(bl_ernest_predict(&e, NAN)));
    ck_assert(isnan(bl_ernest_predict(NULL, 2.0)));
}
END_TEST

/* ---- Kernel regression ------------------------------------------------------------------------- */

START_TEST(test_kernel_issue_figures) {
    const double x[] = {1, 2, 3, 4, 5}, y[] = {1, 4, 6, 4, 1};
    const double want[] = {2.0008, 2.7264, 3.2511, 3.5680, 3.6740, 3.5680, 3.2511, 2.7264, 2.0008};
    for (int k = 0; k < 9; k++)
        ck_assert_double_eq_tol(bl_kernel_predict(x, y, 5, 1.8, 1.0 + 0.5 * k), want[k], 1e-3);
}
END_TEST

START_TEST(test_kernel_properties) {
    /* A line is reproduced exactly by a local-linear fit, for any bandwidth. */
    const double x[] = {2, 3, 7, 11}, y[] = {5, 7, 15, 23};
    for (double h = 1; h <= 100; h += 11)
        ck_assert_double_eq_tol(bl_kernel_predict(x, y, 4, h, 9.0), 19.0, 1e-6);
    /* Equal x: the weighted mean. */
    const double xe[] = {3, 3, 3}, ye[] = {1, 2, 6};
    ck_assert_double_eq_tol(bl_kernel_predict(xe, ye, 3, 1.0, 50.0), 3.0, 1e-12);
    /* Far from the data with a narrow bandwidth: no underflow, the nearest run dominates. */
    const double xf[] = {1, 2}, yf[] = {10, 20};
    double p = bl_kernel_predict(xf, yf, 2, 1.0, 1000.0);
    ck_assert(isfinite(p));
    ck_assert_double_eq_tol(p, 20.0, 1e-6);
    ck_assert(isnan(bl_kernel_predict(xf, yf, 2, 0.0, 1.0)));
    ck_assert(isnan(bl_kernel_predict(NULL, yf, 2, 1.0, 1.0)));
    ck_assert(isnan(bl_kernel_predict(xf, yf, 0, 1.0, 1.0)));
}
END_TEST

/* ---- Bell --------------------------------------------------------------------------------------- */

/* CV score recomputed from scratch with the public pieces: candidate c on runs (x, y). */
static double manual_cv(const double *x, const double *y, int n, int c) {
    double u[64];
    int k = 0;
    for (int i = 0; i < n; i++) { /* distinct, sorted (insertion) */
        int seen = 0;
        for (int j = 0; j < k; j++) seen |= u[j] == x[i];
        if (seen) continue;
        int p = k++;
        while (p > 0 && u[p - 1] > x[i]) { u[p] = u[p - 1]; p--; }
        u[p] = x[i];
    }
    double sum = 0.0;
    int cnt = 0;
    for (int f = 1; f + 1 < k; f++) {
        double xt[64], yt[64];
        int m = 0;
        for (int i = 0; i < n; i++)
            if (x[i] != u[f]) { xt[m] = x[i]; yt[m] = y[i]; m++; }
        double p;
        if (c < BL_BELL_N_BANDWIDTHS) {
            p = bl_kernel_predict(xt, yt, m, 1.0 + c, u[f]);
        } else {
            bl_ernest e;
            ck_assert_int_eq(bl_ernest_fit(xt, yt, m, &e, NULL), BL_OK);
            p = bl_ernest_predict(&e, u[f]);
        }
        for (int i = 0; i < n; i++)
            if (x[i] == u[f]) { sum += fabs(p - y[i]) / y[i]; cnt++; }
    }
    return sum / cnt;
}

static void check_choice(const bl_bell *b) {
    /* The chosen candidate is the first with the lowest score. */
    int first = -1;
    for (int c = 0; c < BL_BELL_N_CANDIDATES; c++)
        if (first < 0 || b->cv_scores[c] < b->cv_scores[first]) first = c;
    ck_assert_int_eq(b->candidate, first);
    ck_assert_double_eq(b->cv_score, b->cv_scores[first]);
    ck_assert_int_eq(b->kind, first == BL_BELL_N_BANDWIDTHS ? BL_BELL_ERNEST : BL_BELL_KERNEL);
    if (b->kind == BL_BELL_KERNEL) ck_assert_double_eq(b->bandwidth, 1.0 + first);
}

START_TEST(test_bell_picks_ernest) {
    /* Exact Ernest data with repetitions: Ernest's CV error is ~0 and beats every kernel. */
    double x[20], y[20];
    for (int i = 0; i < 20; i++) {
        x[i] = 2 + 2 * (i % 10);
        y[i] = 100.0 + 600.0 / x[i] + 3.0 * x[i];
    }
    bl_bell b;
    ck_assert_int_eq(bl_bell_fit(x, y, 20, &b, NULL), BL_OK);
    ck_assert_int_eq(b.n_folds, 8);
    ck_assert_int_eq(b.kind, BL_BELL_ERNEST);
    ck_assert_double_lt(b.cv_score, 1e-9);
    check_choice(&b);
    ck_assert_double_eq_tol(b.cv_scores[4], manual_cv(x, y, 20, 4), 1e-12);
    ck_assert_double_eq_tol(b.cv_scores[100], manual_cv(x, y, 20, 100), 1e-12);
    ck_assert_double_eq_tol(bl_bell_predict(&b, 30.0), 100.0 + 20.0 + 90.0, 1e-6);
    bl_bell_free(&b);
    ck_assert_ptr_null(b.x);
}
END_TEST

START_TEST(test_bell_picks_kernel) {
    /* A hump (Ernest's non-negative terms cannot make a maximum): a kernel wins. */
    const double x[] = {1, 2, 3, 4, 5, 6, 7, 2, 4, 6};
    const double y[] = {10, 40, 60, 70, 60, 40, 10, 42, 69, 41};
    bl_bell b;
    ck_assert_int_eq(bl_bell_fit(x, y, 10, &b, NULL), BL_OK);
    ck_assert_int_eq(b.n_folds, 5);
    ck_assert_int_eq(b.kind, BL_BELL_KERNEL);
    check_choice(&b);
    for (int c = 0; c < BL_BELL_N_CANDIDATES; c += 9)
        ck_assert_double_eq_tol(b.cv_scores[c], manual_cv(x, y, 10, c), 1e-12);
    ck_assert_double_eq_tol(b.cv_scores[100], manual_cv(x, y, 10, 100), 1e-12);
    /* The refit uses all runs with the chosen bandwidth. */
    for (double q = 1; q <= 8; q += 0.5)
        ck_assert_double_eq_tol(bl_bell_predict(&b, q), bl_kernel_predict(x, y, 10, b.bandwidth, q),
                                1e-12);
    bl_bell_free(&b);
}
END_TEST

START_TEST(test_bell_few_scaleouts) {
    bl_bell b;
    /* One distinct scale-out: widest kernel, i.e. the mean everywhere. */
    const double x1[] = {4, 4, 4}, y1[] = {90, 100, 110};
    ck_assert_int_eq(bl_bell_fit(x1, y1, 3, &b, NULL), BL_OK);
    ck_assert_int_eq(b.kind, BL_BELL_KERNEL);
    ck_assert_int_eq(b.candidate, 99);
    ck_assert_double_eq(b.bandwidth, 100.0);
    ck_assert_int_eq(b.n_folds, 0);
    ck_assert(isnan(b.cv_score));
    ck_assert(isnan(b.cv_scores[0]));
    for (double q = 1; q <= 64; q *= 2) ck_assert_double_eq_tol(bl_bell_predict(&b, q), 100.0, 1e-9);
    bl_bell_free(&b);
    /* A single run. */
    const double xs[] = {8}, ys[] = {42};
    ck_assert_int_eq(bl_bell_fit(xs, ys, 1, &b, NULL), BL_OK);
    ck_assert_double_eq_tol(bl_bell_predict(&b, 2.0), 42.0, 1e-12);
    bl_bell_free(&b);

    /* Two distinct scale-outs: Ernest; a speed-up extrapolates along θ0 + θ1/x, not a line. */
    const double x2[] = {4, 8, 8}, y2[] = {200, 120, 120};
    ck_assert_int_eq(bl_bell_fit(x2, y2, 3, &b, NULL), BL_OK);
    ck_assert_int_eq(b.kind, BL_BELL_ERNEST);
    ck_assert_int_eq(b.candidate, 100);
    ck_assert_int_eq(b.n_folds, 0);
    ck_assert(isnan(b.cv_score));
    bl_ernest e;
    ck_assert_int_eq(bl_ernest_fit(x2, y2, 3, &e, NULL), BL_OK);
    for (double q = 1; q <= 64; q *= 2) {
        ck_assert_double_eq(bl_bell_predict(&b, q), bl_ernest_predict(&e, q));
        ck_assert_double_gt(bl_bell_predict(&b, q), 0.0);
    }
    ck_assert_double_eq_tol(bl_bell_predict(&b, 4.0), 200.0, 1e-9);
    ck_assert_double_eq_tol(bl_bell_predict(&b, 8.0), 120.0, 1e-9);
    bl_bell_free(&b);

    /* Three distinct scale-outs: one fold. */
    const double x3[] = {2, 4, 8}, y3[] = {300, 200, 120};
    ck_assert_int_eq(bl_bell_fit(x3, y3, 3, &b, NULL), BL_OK);
    ck_assert_int_eq(b.n_folds, 1);
    ck_assert(isfinite(b.cv_score));
    check_choice(&b);
    bl_bell_free(&b);
}
END_TEST

START_TEST(test_bell_invalid) {
    const double x[] = {1, 2, 3}, y[] = {3, 2, 1};
    bl_bell b;
    bl_error err;
    ck_assert_int_eq(bl_bell_fit(NULL, y, 3, &b, &err), BL_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.message, "bell"));
    ck_assert_ptr_null(b.x);
    ck_assert_int_eq(bl_bell_fit(x, NULL, 3, &b, &err), BL_EINVAL);
    ck_assert_int_eq(bl_bell_fit(x, y, 3, NULL, &err), BL_EINVAL);
    ck_assert_int_eq(bl_bell_fit(x, y, 0, &b, &err), BL_EINVAL);
    const double xz[] = {1, 0, 3}, xi[] = {1, INFINITY, 3};
    ck_assert_int_eq(bl_bell_fit(xz, y, 3, &b, &err), BL_EINVAL);
    ck_assert_int_eq(bl_bell_fit(xi, y, 3, &b, &err), BL_EINVAL);
    const double yz[] = {3, 0, 1}, yn[] = {3, NAN, 1};
    ck_assert_int_eq(bl_bell_fit(x, yz, 3, &b, &err), BL_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.message, "> 0"));
    ck_assert_int_eq(bl_bell_fit(x, yn, 3, &b, &err), BL_EINVAL);
    ck_assert_ptr_null(b.x);
    ck_assert(isnan(bl_bell_predict(&b, 2.0))); /* zeroed after failure */
    ck_assert(isnan(bl_bell_predict(NULL, 2.0)));
    bl_bell_free(NULL);
    bl_bell_free(&b);
    ck_assert_int_eq(bl_bell_fit(x, y, 3, &b, &err), BL_OK);
    ck_assert(isnan(bl_bell_predict(&b, 0.0)));
    ck_assert(isnan(bl_bell_predict(&b, NAN)));
    bl_bell_free(&b);
}
END_TEST

START_TEST(test_bell_many_fits) {
    /* The harness fits thousands of splits: 2000 fits of 18 runs stay quick and leak nothing. */
    lcg_state = 99;
    double x[18], y[18];
    double acc = 0.0;
    for (int t = 0; t < 2000; t++) {
        for (int i = 0; i < 18; i++) {
            x[i] = 2 + 2 * (i % 6);
            y[i] = (100.0 + 400.0 / x[i]) * (0.95 + 0.1 * lcg_uniform());
        }
        bl_bell b;
        ck_assert_int_eq(bl_bell_fit(x, y, 18, &b, NULL), BL_OK);
        acc += bl_bell_predict(&b, 7.0);
        bl_bell_free(&b);
    }
    ck_assert_double_eq_tol(acc / 2000.0, 100.0 + 400.0 / 7.0, 10.0);
}
END_TEST

Suite *bl_test_suite(void) {
    Suite *s = suite_create("baselines");
    TCase *tc = tcase_create("nnls");
    tcase_add_test(tc, test_nnls_active_constraint);
    tcase_add_test(tc, test_nnls_bruteforce);
    tcase_add_test(tc, test_nnls_exact_positive);
    tcase_add_test(tc, test_nnls_degenerate);
    tcase_add_test(tc, test_nnls_invalid);
    tcase_add_test(tc, test_nnls_iteration_cap);
    suite_add_tcase(s, tc);
    tc = tcase_create("ernest");
    tcase_add_test(tc, test_ernest_recovers);
    tcase_add_test(tc, test_ernest_nonnegative);
    tcase_add_test(tc, test_ernest_degenerate);
    tcase_add_test(tc, test_ernest_invalid);
    suite_add_tcase(s, tc);
    tc = tcase_create("bell");
    tcase_add_test(tc, test_kernel_issue_figures);
    tcase_add_test(tc, test_kernel_properties);
    tcase_add_test(tc, test_bell_picks_ernest);
    tcase_add_test(tc, test_bell_picks_kernel);
    tcase_add_test(tc, test_bell_few_scaleouts);
    tcase_add_test(tc, test_bell_invalid);
    tcase_add_test(tc, test_bell_many_fits);
    suite_add_tcase(s, tc);
    return s;
}
