/* baselines.h — the two baselines Bellamy is compared against: Ernest and Bell.
 *
 * Internal API (not part of the public bellamy.h). Everything works on plain arrays of runs:
 * x[i] = scale-out (number of nodes, > 0), y[i] = runtime of run i.
 *
 * Ernest (Venkataraman et al., NSDI'16): runtime = θ0 + θ1/x + θ2·ln x + θ3·x with θ ≥ 0, fitted by
 *   non-negative least squares (Lawson–Hanson, bl_nnls). With fewer distinct scale-outs than basis
 *   functions the fit is under-determined; NNLS then returns a sparse non-negative solution
 *   (at most as many active terms as distinct scale-outs). For x ≥ 1 every basis function is ≥ 0,
 *   so Ernest never predicts a negative runtime there.
 *
 * Bell (Thamsen et al., IPCCC'16): picks, by cross-validation, among
 *   candidates 0..99   local-linear kernel regression with Gaussian weights exp(−(x0−xi)²/(2h²)),
 *                      h = 1, 2, …, 100 (100 bandwidths evenly spaced from 1 to 100);
 *   candidate  100     Ernest.
 *   The order (kernels by ascending h, then Ernest) decides ties: the first candidate with the lowest
 *   score wins. Kernels come first because they are the nonparametric core of Bell and Ernest is its
 *   parametric fallback; among kernels the narrowest tied one is kept, matching a plain argmin.
 *   Folds: for every distinct scale-out except the smallest and the largest, all runs at that
 *   scale-out are held out and the candidate is fitted on the rest (which therefore always spans the
 *   held-out scale-out: the CV only interpolates). Score = mean relative error |pred − actual| / actual
 *   pooled over all held-out runs of all folds (each held-out run counts once). The winner is refitted
 *   on all runs.
 *   Fewer than three distinct scale-outs (no folds):
 *     - one distinct scale-out: the kernel with the largest bandwidth (h = 100). With all runs at one
 *       scale-out it predicts their mean everywhere, the only honest guess. Ernest is not used: its
 *       four columns are then parallel and which single term NNLS keeps depends on rounding, so the
 *       prediction elsewhere (constant, 1/x, ln x or x shaped) would be arbitrary.
 *     - two distinct scale-outs: Ernest. Both the widest kernel and Ernest then pass (nearly) through
 *       the two mean runtimes, but the widest kernel is a straight line, which extrapolates a falling
 *       runtime through zero to negative values, while Ernest keeps a non-negative scaling-law shape
 *       (typically θ0 + θ1/x for a job that speeds up), which is what an extrapolation needs.
 *   cv_score is NAN and n_folds is 0 in both cases.
 *
 * Inputs are validated (NULL, n ≤ 0, x not finite or ≤ 0, y not finite; Bell also needs y > 0 for the
 * relative error) → BL_EINVAL with a message. Predict functions never allocate; they return NAN for an
 * unusable model or a query x that is not finite and > 0.
 * Not here: reading data, splitting, scoring of the evaluation protocol (bench/).
 */
#ifndef BL_BASELINES_BASELINES_H
#define BL_BASELINES_BASELINES_H

#include "bellamy/bellamy.h"

/* ---- Non-negative least squares -------------------------------------------------------------- */

/* Lawson–Hanson NNLS: x = argmin ||A x − b||₂ subject to x ≥ 0.
 * A: [m, n] row-major (A[i*n + j]); b: [m]; x: [n] output. rnorm (may be NULL) receives ||A x − b||₂.
 * max_iter ≤ 0 selects the default (30·n + 30 least-squares solves). Each inner solve is a Householder
 * QR of the passive columns (not the normal equations), and a column that is numerically dependent on
 * the passive set is not admitted. Returns BL_OK, BL_EINVAL (bad arguments, non-finite entries),
 * BL_ENOMEM, or BL_ERANGE when the cap is reached (x then holds the last feasible iterate, x ≥ 0). */
bl_status bl_nnls(const double *A, int m, int n, const double *b, double *x, double *rnorm,
                  int max_iter, bl_error *err);

/* ---- Ernest ------------------------------------------------------------------------------------ */

typedef struct bl_ernest {
    double theta[4]; /* θ0 (constant), θ1 (1/x), θ2 (ln x), θ3 (x); all ≥ 0 */
} bl_ernest;

/* Fits Ernest on n runs. model is output only (no free needed). */
bl_status bl_ernest_fit(const double *x, const double *y, int n, bl_ernest *model, bl_error *err);

/* θ0 + θ1/x + θ2·ln x + θ3·x; NAN when model is NULL or x is not finite and > 0. */
double bl_ernest_predict(const bl_ernest *model, double x);

/* ---- Local-linear kernel regression -------------------------------------------------------------- */

/* Prediction at x0 of the local-linear fit with Gaussian weights of bandwidth h on n runs
 * (weighted least-squares line, tiny ridge on the slope so equal x stay well defined: then it is the
 * weighted mean). Weights are taken relative to the nearest run, so they never all underflow.
 * NAN when an argument is unusable (NULL, n ≤ 0, h not finite and > 0, x0 not finite). No allocation. */
double bl_kernel_predict(const double *x, const double *y, int n, double h, double x0);

/* ---- Bell -------------------------------------------------------------------------------------- */

#define BL_BELL_N_BANDWIDTHS 100                       /* kernel candidates: h = 1, 2, …, 100 */
#define BL_BELL_N_CANDIDATES (BL_BELL_N_BANDWIDTHS + 1) /* … then Ernest */

typedef enum bl_bell_kind {
    BL_BELL_KERNEL = 0,
    BL_BELL_ERNEST = 1
} bl_bell_kind;

typedef struct bl_bell {
    bl_bell_kind kind;      /* the chosen candidate */
    double bandwidth;       /* its h when kind == BL_BELL_KERNEL, else 0 */
    int candidate;          /* its index: 0..99 kernel (h = index + 1), 100 Ernest */
    double cv_score;        /* its CV mean relative error; NAN when there were no folds */
    int n_folds;            /* distinct scale-outs − 2, or 0 */
    double cv_scores[BL_BELL_N_CANDIDATES]; /* every candidate's CV score (NAN when no folds) */
    bl_ernest ernest;       /* the refitted Ernest when kind == BL_BELL_ERNEST */
    int n;                  /* training runs kept for the kernel */
    double *x, *y;          /* owned copies [n]; freed by bl_bell_free */
} bl_bell;

/* Bell bandwidth of kernel candidate i (0..99): 1 + i. */
double bl_bell_bandwidth(int i);

/* Runs the cross-validation and refits the winner on all n runs. model is output only: on success it
 * owns memory (call bl_bell_free); on failure it is left zeroed. Do not pass a fitted model without
 * freeing it first. */
bl_status bl_bell_fit(const double *x, const double *y, int n, bl_bell *model, bl_error *err);

/* Prediction of the chosen candidate at x; NAN for NULL/unfitted model or x not finite and > 0. */
double bl_bell_predict(const bl_bell *model, double x);

/* Releases the copies held by model and zeroes it; accepts NULL. */
void bl_bell_free(bl_bell *model);

/* Internal: validates a run list for `who` (NULL, n ≤ 0, x finite > 0, y finite, and y > 0 when
 * y_positive); BL_OK or BL_EINVAL with a message. */
bl_status bl_baselines_check_runs(const char *who, const double *x, const double *y, int n,
                                  int y_positive, bl_error *err);

#endif
