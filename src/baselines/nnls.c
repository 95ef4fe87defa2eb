/* nnls.c — Lawson–Hanson non-negative least squares for small dense problems (Ernest's fit).
 *
 * Active-set method (Lawson & Hanson, "Solving Least Squares Problems", 1974, ch. 23): grow the
 * passive set P by the column with the largest positive gradient w = Aᵀ(b − A x), solve the
 * unconstrained least-squares problem on P, and step back towards feasibility whenever that solution
 * has non-positive entries. Each least-squares solve is a fresh Householder QR of the passive columns:
 * Ernest's columns (1, 1/x, ln x, x) are strongly collinear and the normal equations would square
 * their condition number. P is at most min(m, n) columns, so refactoring is cheap.
 * Not here: sparse or large problems, warm starts, weights (scale rows before calling).
 */
#include "baselines/baselines.h"
#include "common/error.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A column whose part orthogonal to the passive columns is below this fraction of its norm is
 * treated as dependent and not admitted (its coefficient would be mostly rounding noise). */
#define NNLS_RANK_RTOL 1e-12

typedef struct nnls_ws {
    double *qr;    /* [k, m] passive columns, column-major, overwritten by Householder QR */
    double *qb;    /* [m] copy of b, overwritten by Qᵀb */
    double *z;     /* [n] least-squares solution on P (indexed by column) */
    double *w;     /* [n] gradient Aᵀ(b − A x) */
    double *r;     /* [m] residual */
    double *cnorm; /* [n] column norms of A */
    int *passive;  /* [n] list of passive column indices, in order of admission */
    int *inp;      /* [n] 1 when column is in P */
    int *reject;   /* [n] 1 when column was refused in the current outer step */
} nnls_ws;

/* Least squares on the k passive columns: z[P[j]] for j < k.
 * Returns -1 on success, else the position (0..k-1) of the first numerically dependent column. */
static int nnls_solve_passive(const double *A, int m, int n, const double *b, const int *P, int k,
                              const nnls_ws *ws, double *z) {
    if (k > m) return m; /* more columns than rows: column m is necessarily dependent */
    for (int j = 0; j < k; j++)
        for (int i = 0; i < m; i++) ws->qr[(size_t)j * m + i] = A[(size_t)i * n + P[j]];
    memcpy(ws->qb, b, (size_t)m * sizeof(double));

    for (int j = 0; j < k; j++) {
        double *col = ws->qr + (size_t)j * m;
        /* Norm of the part of column j not yet explained by columns 0..j-1 (rows j..m-1). */
        double scale = 0.0;
        for (int i = j; i < m; i++) scale = fmax(scale, fabs(col[i]));
        double sig = 0.0;
        if (scale > 0.0) {
            for (int i = j; i < m; i++) sig += (col[i] / scale) * (col[i] / scale);
            sig = scale * sqrt(sig);
        }
        if (!(sig > NNLS_RANK_RTOL * ws->cnorm[P[j]])) return j;
        /* Householder vector v = col[j..] + sign(col[j])·sig·e_j, so that H col = −sign·sig·e_j. */
        double alpha = col[j] >= 0.0 ? -sig : sig;
        double v0 = col[j] - alpha;
        double vnorm2 = v0 * v0;
        for (int i = j + 1; i < m; i++) vnorm2 += col[i] * col[i];
        col[j] = v0;
        /* Apply H = I − 2 v vᵀ / (vᵀv) to the remaining columns and to qb. */
        for (int c = j + 1; c < k; c++) {
            double *cc = ws->qr + (size_t)c * m;
            double dot = 0.0;
            for (int i = j; i < m; i++) dot += col[i] * cc[i];
            double f = 2.0 * dot / vnorm2;
            for (int i = j; i < m; i++) cc[i] -= f * col[i];
        }
        double dot = 0.0;
        for (int i = j; i < m; i++) dot += col[i] * ws->qb[i];
        double f = 2.0 * dot / vnorm2;
        for (int i = j; i < m; i++) ws->qb[i] -= f * col[i];
        col[j] = alpha; /* R[j][j]; the rest of v below the diagonal is no longer needed */
    }
    /* Back-substitution R z = (Qᵀb)[0..k-1]; R[r][c] = qr[c*m + r] for r ≤ c. */
    for (int j = k - 1; j >= 0; j--) {
        double s = ws->qb[j];
        for (int c = j + 1; c < k; c++) s -= ws->qr[(size_t)c * m + j] * z[P[c]];
        z[P[j]] = s / ws->qr[(size_t)j * m + j];
    }
    return -1;
}

/* w = Aᵀ(b − A x), r = b − A x. */
static void nnls_gradient(const double *A, int m, int n, const double *b, const double *x, double *r,
                          double *w) {
    for (int i = 0; i < m; i++) {
        double s = b[i];
        for (int j = 0; j < n; j++) s -= A[(size_t)i * n + j] * x[j];
        r[i] = s;
    }
    for (int j = 0; j < n; j++) {
        double s = 0.0;
        for (int i = 0; i < m; i++) s += A[(size_t)i * n + j] * r[i];
        w[j] = s;
    }
}

/* Removes column c from the passive list, keeping the admission order of the others. */
static void nnls_drop(nnls_ws *ws, int *k, int c) {
    int out = 0;
    for (int j = 0; j < *k; j++)
        if (ws->passive[j] != c) ws->passive[out++] = ws->passive[j];
    *k = out;
    ws->inp[c] = 0;
}

bl_status bl_nnls(const double *A, int m, int n, const double *b, double *x, double *rnorm,
                  int max_iter, bl_error *err) {
    BL_CHECK_ARG(A != NULL && b != NULL && x != NULL, err, "nnls: NULL argument");
    BL_CHECK_ARG(m > 0 && n > 0, err, "nnls: matrix is %d x %d, need at least 1 x 1", m, n);

    /* Workspace: doubles qr[m*n] + qb[m] + r[m] + z[n] + w[n] + cnorm[n]; ints passive, inp, reject. */
    size_t mn, nd, bytes_d, bytes_i, bytes;
    if (bl_mul_size((size_t)m, (size_t)n, &mn) || bl_add_size(mn, 2 * (size_t)m, &nd) ||
        bl_add_size(nd, 3 * (size_t)n, &nd) || bl_mul_size(nd, sizeof(double), &bytes_d) ||
        bl_mul_size(3 * (size_t)n, sizeof(int), &bytes_i) || bl_add_size(bytes_d, bytes_i, &bytes))
        return bl_seterr(err, BL_EINVAL, "nnls: %d x %d problem is too large", m, n);

    double normA2 = 0.0, normb2 = 0.0;
    for (size_t i = 0; i < mn; i++) {
        if (!isfinite(A[i])) return bl_seterr(err, BL_EINVAL, "nnls: A[%zu] is not finite", i);
        normA2 += A[i] * A[i];
    }
    for (int i = 0; i < m; i++) {
        if (!isfinite(b[i])) return bl_seterr(err, BL_EINVAL, "nnls: b[%d] is not finite", i);
        normb2 += b[i] * b[i];
    }

    void *mem = malloc(bytes);
    if (mem == NULL) return bl_seterr(err, BL_ENOMEM, "nnls: cannot allocate %zu bytes", bytes);
    nnls_ws ws;
    double *d = mem;
    ws.qr = d;          d += mn;
    ws.qb = d;          d += m;
    ws.r = d;           d += m;
    ws.z = d;           d += n;
    ws.w = d;           d += n;
    ws.cnorm = d;       d += n;
    int *ip = (int *)d; /* doubles come first, so ints are suitably aligned */
    ws.passive = ip;    ip += n;
    ws.inp = ip;        ip += n;
    ws.reject = ip;

    for (int j = 0; j < n; j++) {
        double s = 0.0;
        for (int i = 0; i < m; i++) s += A[(size_t)i * n + j] * A[(size_t)i * n + j];
        ws.cnorm[j] = sqrt(s);
        x[j] = 0.0;
        ws.z[j] = 0.0;
        ws.inp[j] = 0;
        ws.reject[j] = 0;
    }
    /* A gradient entry below tol is rounding noise: |w_j| ≤ ||A_j||·||r|| ≤ ||A||·||b||. */
    const double tol = 10.0 * DBL_EPSILON * (double)(m > n ? m : n) * sqrt(normA2) * sqrt(normb2);
    if (max_iter <= 0) max_iter = 30 * n + 30;

    bl_status st = BL_OK;
    int k = 0, iter = 0;
    for (;;) {
        nnls_gradient(A, m, n, b, x, ws.r, ws.w);
        /* Admit the best column that really improves the fit. */
        int admitted = 0;
        for (;;) {
            int t = -1;
            double best = tol;
            for (int j = 0; j < n; j++)
                if (!ws.inp[j] && !ws.reject[j] && ws.w[j] > best) { best = ws.w[j]; t = j; }
            if (t < 0) break;
            ws.passive[k++] = t;
            ws.inp[t] = 1;
            if (++iter > max_iter) { st = BL_ERANGE; nnls_drop(&ws, &k, t); goto done; }
            int bad = nnls_solve_passive(A, m, n, b, ws.passive, k, &ws, ws.z);
            /* A dependent column, or one whose coefficient comes out ≤ 0 although its gradient was
             * positive (rounding), cannot help: refuse it until x changes (Lawson–Hanson step 6). */
            if (bad >= 0 || !(ws.z[t] > 0.0)) {
                ws.reject[t] = 1;
                nnls_drop(&ws, &k, t);
                if (bad >= 0 && bad < k) { st = BL_EINTERNAL; goto done; } /* P itself lost rank */
                continue;
            }
            admitted = 1;
            break;
        }
        if (!admitted) break; /* KKT holds: w_j ≤ tol on every column outside P */

        /* Inner loop: step from x towards z until z is strictly positive on P. */
        for (;;) {
            int all_pos = 1;
            for (int j = 0; j < k; j++)
                if (!(ws.z[ws.passive[j]] > 0.0)) { all_pos = 0; break; }
            if (all_pos) {
                for (int j = 0; j < k; j++) x[ws.passive[j]] = ws.z[ws.passive[j]];
                break;
            }
            double alpha = 2.0;
            int arg = -1;
            for (int j = 0; j < k; j++) {
                int c = ws.passive[j];
                if (ws.z[c] <= 0.0) {
                    double den = x[c] - ws.z[c];
                    double a = den > 0.0 ? x[c] / den : 0.0;
                    if (a < alpha) { alpha = a; arg = c; }
                }
            }
            for (int j = 0; j < k; j++) {
                int c = ws.passive[j];
                x[c] += alpha * (ws.z[c] - x[c]);
            }
            x[arg] = 0.0; /* exactly, so the blocking column surely leaves P */
            for (int j = k - 1; j >= 0; j--) {
                int c = ws.passive[j];
                if (x[c] <= 0.0) { x[c] = 0.0; nnls_drop(&ws, &k, c); }
            }
            if (++iter > max_iter) { st = BL_ERANGE; goto done; }
            if (k == 0) break;
            /* A subset of independent columns stays independent. */
            if (nnls_solve_passive(A, m, n, b, ws.passive, k, &ws, ws.z) >= 0) {
                st = BL_EINTERNAL;
                goto done;
            }
        }
        memset(ws.reject, 0, (size_t)n * sizeof(int));
    }

done:
    for (int j = 0; j < n; j++)
        if (!(x[j] > 0.0)) x[j] = 0.0; /* feasible by construction; this only clears −0.0 */
    if (rnorm != NULL) {
        nnls_gradient(A, m, n, b, x, ws.r, ws.w);
        double s = 0.0;
        for (int i = 0; i < m; i++) s += ws.r[i] * ws.r[i];
        *rnorm = sqrt(s);
    }
    free(mem);
    if (st == BL_ERANGE)
        return bl_seterr(err, st, "nnls: no convergence within %d iterations", max_iter);
    if (st == BL_EINTERNAL)
        return bl_seterr(err, st, "nnls: passive columns became rank deficient");
    bl_clearerr(err);
    return BL_OK;
}
