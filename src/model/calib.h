/* calib.h — prediction intervals: what the pre-training measures on contexts its searches held out,
 * and the interval a prediction gets from it.
 *
 * A context's own 2–5 runs cannot calibrate an interval, so the errors come from other contexts. After
 * the searches, every pre-training context that some member's search held out for validation (so that
 * member never trained on it) is treated as a user's context: the members that never saw it are
 * fine-tuned by the real protocol (bl_finetune's defaults, the guard included) on k = 1..5 of its runs
 * (k distinct scale-outs, one random repetition each, BL_CALIB_DRAWS draws per k), and every run of it
 * at another scale-out is scored; k = 0 scores the pre-trained members on every run. A score is
 *     s = |ln(runtime / prediction)| / u(x),   u(x) = g(x) · (1 + w) · (1 + D / D_ref(k))
 * with g(x) = 1 + (d_runs(x) + d_pre(x)) / ln 2 (d: how far x lies outside the runs' scale-outs and the
 * pre-training's, in ln machines), w the guard's Ernest weight and D the fine-tuned model's disagreement
 * with its runs (bl_model_tuned.disagreement; D_ref(k) the median over the calibration's fine-tunings).
 * Where D is the held-out error on the runs (three or more, the guard on), it measures this context's
 * error directly: then u = (1 + d_runs / ln 2) · (1 + D / D_ref(k)), without w and d_pre.
 * Scores fall into cells by k and by whether the scale-out lies inside the runs' range (k ≥ 2) or not;
 * one more cell holds each fine-tuned sub-ensemble's scores on another held-out context it never saw
 * (u = (1 + d_pre / ln 2) · (1 + w)): what a model fine-tuned for one context is worth on another.
 * Scale-outs of one context are not exchangeable, so each context weighs 1 in a cell however many
 * scores it has, and the quantile is the group-weighted conformal one: with G contexts in the cell, the
 * smallest s whose cumulative weight reaches coverage · (G + 1); none (an unbounded interval) when that
 * exceeds G. A prediction ŷ at x then gets [ŷ·e^(−q·u(x)), ŷ·e^(q·u(x))].
 * Not here: the fine-tuning (model.c), choosing from intervals (src/api).
 */
#ifndef BL_MODEL_CALIB_H
#define BL_MODEL_CALIB_H

#include <stddef.h>
#include <stdint.h>

#include "bellamy/bellamy.h"

#define BL_CALIB_KMAX 5                          /* runs calibrated: k = 0..5 (more runs use k = 5) */
#define BL_CALIB_CELL_OTHER (2 * (BL_CALIB_KMAX + 1)) /* a fine-tuned model asked about another context */
#define BL_CALIB_CELLS (BL_CALIB_CELL_OTHER + 1) /* cell 2k (inside the runs' range), 2k + 1 (outside), and
                                                    BL_CALIB_CELL_OTHER */
#define BL_CALIB_DRAWS 4                         /* fine-tunings per context and k (the default) */
#define BL_CALIB_DRAWS_MAX 64
#define BL_CALIB_DREF_MIN 0.01                   /* least D_ref (a 1 % disagreement) */
#define BL_CALIB_HMAX 4.605170185988091            /* ln 100: an interval wider than a factor 100 either
                                                    way is unbounded (no bound worth the name) */
#define BL_CALIB_SUPPORT 4.0                     /* beyond this factor outside every scale-out the model
                                                    and its runs know, an interval is unbounded */

typedef struct bl_model_calib {
    int      known;                      /* 0: the file predates calibration (or pre-training skipped it) */
    int64_t  contexts;                   /* contexts calibrated on */
    int64_t  finetunings;                /* fine-tunings run */
    int64_t  protocol;                   /* bl_finetune_opts_fingerprint of their options (0: not recorded) */
    double   seconds;                    /* the calibration's wall time */
    double   d_ref[BL_CALIB_KMAX + 1];   /* D_ref(k); k = 0 unused (1) */
    size_t   n;                          /* scores */
    int32_t *cell, *group;               /* [n] cell and context (0..contexts-1) of each score */
    double  *score;                      /* [n] */
    /* derived on load and after fitting: each cell's scores ascending with their weights */
    size_t   cell_n[BL_CALIB_CELLS];
    int64_t  cell_groups[BL_CALIB_CELLS];
    double  *sorted[BL_CALIB_CELLS], *weight[BL_CALIB_CELLS];
} bl_model_calib;

struct bl_model;
struct bl_dataset;
struct bl_pretrain_opts;
struct bl_modelrec;

/* m->calib from the held-out contexts of ds (the data m was pre-trained on with opts o). */
bl_status bl_calib_fit(struct bl_model *m, const struct bl_dataset *ds, const struct bl_pretrain_opts *o,
                       bl_error *err);
/* calib_rec.c: the record. bl_calib_derive makes the sorted tables the quantiles read from c's scores. */
bl_status bl_calib_derive(bl_model_calib *c, bl_error *err);
void bl_calib_free(bl_model_calib *c);
bl_status bl_calib_copy(bl_model_calib *dst, const bl_model_calib *src, bl_error *err);
/* Group "calibration" of a model record, and back (absent: known = 0). */
bl_status bl_calib_save(const bl_model_calib *c, struct bl_modelrec *rec, bl_error *err);
bl_status bl_calib_load(bl_model_calib *c, const struct bl_modelrec *rec, bl_error *err);

/* The conformal quantile of cell at coverage (0 < coverage < 1): INFINITY when the cell's contexts are
 * too few for it, NaN for an empty cell. *groups (may be NULL): the cell's contexts. */
double bl_calib_quantile(const bl_model_calib *c, int cell, double coverage, int64_t *groups);

/* What a prediction's interval rests on. */
typedef struct bl_interval_basis {
    int    k;            /* runs calibrated with (0: none: the model not fine-tuned, or asked about another context) */
    int    mismatch;     /* 1: a fine-tuned model asked about another context than its runs' */
    double ernest_w;     /* the guard's weight */
    double factor;       /* (1 + w) · (1 + D / D_ref(k)), or 1 + D / D_ref(k) when D is the held-out error;
                            for a mismatch (1 + w), or 2 · (1 + w) where the calibration has no scores of
                            another context (it falls back on cell 0) */
    int    held_out;     /* D is the held-out error on the runs: it measures this context's error itself,
                            so neither w nor the distance outside the pre-training widens further */
} bl_interval_basis;

/* No runtime ≤ 0 leaves a model: outside [lo, hi] (bl_model_support) a prediction falls no faster
 * than linear scaling from the nearest end, r_lo · x / lo below and r_hi · hi / x above (r: the
 * predictions at lo and hi): raw where it is larger; a raw NaN or infinity is returned as it is. */
double bl_model_floor(double x, double raw, double lo, double r_lo, double hi, double r_hi);

/* The least runtime a model states as its own: 1 % of the smallest runtime it knows (its pre-training
 * rows' and its fine-tuning runs'; 1 ms for a file that records neither). A prediction below it (a
 * network's output at its floor, far outside its data) is no runtime the model knows: it becomes
 * bl_model_positive's stand-in and its interval is unbounded (the chooser never picks it). */
double bl_model_runtime_floor(const struct bl_model *m);
/* t when t ≥ F; below, F · e^((t − F) / F): positive, increasing, continuous; NaN and infinities as they are. */
double bl_model_positive(double t, double F);

/* The one rule a raw prediction becomes a runtime by (§P9): raw at scale-out x, r_lo and r_hi the raw
 * predictions at the support's ends (bl_model_support) in the same context, then bl_model_floor (an
 * end below bl_model_runtime_floor gives no bound) and bl_model_positive. */
double bl_model_finish(const struct bl_model *m, double x, double raw, double r_lo, double r_hi);

/* The scale-outs the model and its runs support: the pre-training's and the runs' together. */
void bl_model_support(const struct bl_model *m, double *lo, double *hi);
/* How the interval of a request is sized (mismatch: the context differs from the fine-tuned one). */
void bl_interval_basis_of(const struct bl_model *m, int mismatch, bl_interval_basis *b);
/* lo[i], hi[i] around point[i] at scale-out x[i] (point > 0), at coverage. BL_EUNSUPPORTED naming the
 * fix when m has no calibration. An unbounded interval is lo 0, hi INFINITY; why (may be NULL) receives
 * a bl_interval_why (bellamy.h) for each. */
bl_status bl_model_interval(const struct bl_model *m, const bl_interval_basis *b, double coverage, const double *x,
                            const double *point, size_t n, double *lo, double *hi, int *why, bl_error *err);
/* The calibrated q for k runs, inside the runs' range or not, falling back to fewer runs for an empty
 * cell (§P10 step 4); INFINITY when none vouches for the coverage. */
double bl_calib_cell_quantile(const bl_model_calib *c, int k, int inside, double coverage);

#endif /* BL_MODEL_CALIB_H */
