/* test_tgroup.c — the trial group (src/nn/tgroup.c) on the CPU reference ops, against the per-trial
 * path written as pretrain.c's run_epoch (bl_bnet_pass + bl_adam_step, one generator per trial).
 *
 * What agreement proves: the group draws each trial's shuffle and AlphaDropout masks in bl_bnet_pass's
 * order (any slip changes masks and the results by far more than rounding), and the batched pass —
 * the same sequence of ops the CUDA table runs — computes the network's loss and exact gradient. The two
 * differ only in summation order (the pass shares work between rows of one value; the group runs every
 * row), so losses and parameters agree to ~1e-14 after several epochs; the tests demand 1e-9.
 * The same checks run on the CUDA kernels' own code emulated on the host (emu_ops below: every kernel
 * body of src/nn/cuda/tgroup_kern.h, the cuBLAS argument mapping into a column-major BLAS, and graph
 * capture/replay, including captures that fail to start or to end), which covers the CUDA path everywhere
 * except the CUDA runtime and cuBLAS themselves.
 * Also: successive-halving use (trials stopped between epochs, their state kept), a short search,
 * best-state bookkeeping, argument errors, and the CUDA device refused where no GPU is usable.
 */
#include "testutil.h"

#include "bl_config.h"
#if BL_HAVE_BLAS
#include <cblas.h>
#endif
#include "nn/gemm.h"
#include "nn/device.h"
#include "nn/tgroup_ops.h"
#include "nn/cuda/cuda.h"
#include "nn/cuda/tgroup_kern.h"
#include "tgroup_fixture.h"

/* ---- the CUDA kernels emulated on the host ------------------------------------------------------
 * The bodies of src/nn/cuda/tgroup_kern.h — the code the GPU runs — in plain loops: element-wise kernels
 * over their index range, block kernels phase by phase over TPB threads (the reconstruction tree step
 * by step, in the GPU's order), and GEMMs through the cuBLAS argument mapping into OpenBLAS's
 * column-major dgemm, which rejects a leading dimension cuBLAS would reject too. Memory is the CPU
 * table's. */

#define TPB BL_KERN_TPB

/* Graph capture, emulated like CUDA's: between capture_begin and capture_end the ops are recorded with
 * their arguments by value (the state struct included, as kernel parameters are) and not run; replay
 * runs the record. A group that recorded its epoch and replays it computes what direct launches compute
 * only if nothing that changes between epochs hides in an argument. One emulated group at a time. */
enum { R_GEMM, R_GATHER, R_BIAS_SELU, R_SELU_DROPOUT, R_CODES, R_RECON, R_HEAD, R_SBB, R_DSB, R_CODE_BACK, R_ADAM,
       R_AVERAGE };
typedef struct emu_rec {
    int op;
    bl_tg_state s;
    bl_tg_view v;
    long l[10];
    double d[3];
    const double *c[3];
    double *m[2];
} emu_rec;
typedef struct emu_log {
    emu_rec *r;
    size_t n, cap;
} emu_log;
static int emu_capturing;
static emu_log emu_cap, emu_graph;

static emu_rec *rec_push(int op, const bl_tg_state *s, const bl_tg_view *v) {
    if (emu_cap.n == emu_cap.cap) {
        emu_cap.cap = emu_cap.cap ? 2 * emu_cap.cap : 256;
        emu_cap.r = realloc(emu_cap.r, emu_cap.cap * sizeof *emu_cap.r);
        ck_assert_ptr_nonnull(emu_cap.r);
    }
    emu_rec *r = &emu_cap.r[emu_cap.n++];
    memset(r, 0, sizeof *r);
    r->op = op;
    if (s) r->s = *s;
    if (v) r->v = *v;
    return r;
}

/* A column-major dgemm, as cuBLAS computes it: OpenBLAS's where the build has it, else the portable GEMM
 * on the transposed problem (column-major C = op(A)·op(B) is row-major Cᵀ = op(B)ᵀ·op(A)ᵀ). */
static void colmajor_dgemm(int ta, int tb, int m, int n, int k, double alpha, const double *A, int lda,
                           const double *B, int ldb, double beta, double *C, int ldc) {
#if BL_HAVE_BLAS
    cblas_dgemm(CblasColMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, m, n, k, alpha, A, lda,
                B, ldb, beta, C, ldc);
#else
    bl_gemm_ref(tb, ta, n, m, k, alpha, B, ldb, A, lda, beta, C, ldc);
#endif
}

static void emu_gemm(void *ctx, int ta, int tb, int M, int N, int K, double alpha, const double *A, long lda,
                     long sA, const double *B, long ldb, long sB, double beta, double *C, long ldc, long sC,
                     int batch) {
    (void)ctx;
    if (emu_capturing) {
        emu_rec *r = rec_push(R_GEMM, NULL, NULL);
        const long l[10] = {ta, tb, M, N, K, lda, sA, ldb, sB, ldc};
        memcpy(r->l, l, sizeof l);
        r->d[0] = alpha;
        r->d[1] = beta;
        r->d[2] = (double)sC;
        r->c[0] = A;
        r->c[1] = B;
        r->m[0] = C;
        r->s.n = batch;
        return;
    }
    const bl_cm_gemm g = bl_kern_colmajor(ta, tb, M, N, K, A, lda, sA, B, ldb, sB);
    /* cuBLAS's constraints on the column-major call (it answers CUBLAS_STATUS_INVALID_VALUE) */
    ck_assert(g.lda >= (g.ta ? g.k : g.m) && g.ldb >= (g.tb ? g.n : g.k) && ldc >= g.m);
    for (int s = 0; s < batch; s++)
        colmajor_dgemm(g.ta, g.tb, g.m, g.n, g.k, alpha, g.A + (size_t)s * (size_t)g.sA, (int)g.lda,
                       g.B + (size_t)s * (size_t)g.sB, (int)g.ldb, beta, C + (size_t)s * (size_t)sC, (int)ldc);
}
static void emu_gather(void *ctx, const bl_tg_state *s, const bl_tg_view *v, int use_order, long i0, int B) {
    (void)ctx;
    if (emu_capturing) {
        emu_rec *r = rec_push(R_GATHER, s, v);
        r->l[0] = use_order, r->l[1] = i0, r->l[2] = B;
        return;
    }
    for (size_t i = 0; i < kb_gather_n(s, B); i++) kb_gather(s, v, use_order, i0, B, i);
}
static void emu_bias_selu(void *ctx, const bl_tg_state *s, int rows, int cols, double *Y, long ldy, long sY, long bias) {
    (void)ctx;
    if (emu_capturing) {
        emu_rec *r = rec_push(R_BIAS_SELU, s, NULL);
        r->l[0] = rows, r->l[1] = cols, r->l[2] = ldy, r->l[3] = sY, r->l[4] = bias, r->m[0] = Y;
        return;
    }
    for (size_t i = 0; i < kb_bias_selu_n(s, rows, cols); i++) kb_bias_selu(s, rows, cols, Y, ldy, sY, bias, i);
}
static void emu_selu_dropout(void *ctx, const bl_tg_state *s, int B, double *a, double *d, int which, long i0,
                             int training) {
    (void)ctx;
    if (emu_capturing) {
        emu_rec *r = rec_push(R_SELU_DROPOUT, s, NULL);
        r->l[0] = B, r->l[1] = which, r->l[2] = i0, r->l[3] = training, r->m[0] = a, r->m[1] = d;
        return;
    }
    for (size_t i = 0; i < kb_ae_n(s, B, s->net.H); i++) kb_selu_dropout(s, B, a, d, which, i0, training, i);
}
static void emu_codes(void *ctx, const bl_tg_state *s, int B) {
    (void)ctx;
    if (emu_capturing) {
        rec_push(R_CODES, s, NULL)->l[0] = B;
        return;
    }
    for (size_t i = 0; i < kb_codes_n(s, B); i++) kb_codes(s, B, i);
}
static void emu_recon(void *ctx, const bl_tg_state *s, int B) {
    (void)ctx;
    if (emu_capturing) {
        rec_push(R_RECON, s, NULL)->l[0] = B;
        return;
    }
    static double red[2][TPB];
    for (int sl = 0; sl < s->n; sl++) {
        for (int t = 0; t < TPB; t++) {
            double part[2];
            kb_recon_part(s, B, sl, t, TPB, part);
            red[0][t] = part[0];
            red[1][t] = part[1];
        }
        for (int h = TPB / 2; h > 0; h /= 2)
            for (int t = 0; t < h; t++) {
                red[0][t] += red[0][t + h];
                red[1][t] += red[1][t + h];
            }
        kb_recon_store(s, sl, red[0][0], red[1][0]);
    }
}
static void emu_head(void *ctx, const bl_tg_state *s, int B, int want_grad, long col) {
    (void)ctx;
    if (emu_capturing) {
        emu_rec *r = rec_push(R_HEAD, s, NULL);
        r->l[0] = B, r->l[1] = want_grad, r->l[2] = col;
        return;
    }
    for (int sl = 0; sl < s->n; sl++) {
        for (int t = 0; t < TPB; t++) kb_head_rows(s, B, want_grad, sl, t, TPB);
        for (int t = 0; t < TPB; t++) kb_head_sums(s, B, want_grad, col, sl, t, TPB);
    }
}
static void emu_selu_back_bias(void *ctx, const bl_tg_state *s, int B, int cols, double *dY, long ld, long sD,
                               const double *Y, long ldy, long sY, long bias) {
    (void)ctx;
    if (emu_capturing) {
        emu_rec *r = rec_push(R_SBB, s, NULL);
        r->l[0] = B, r->l[1] = cols, r->l[2] = ld, r->l[3] = sD, r->l[4] = ldy, r->l[5] = sY, r->l[6] = bias;
        r->m[0] = dY, r->c[0] = Y;
        return;
    }
    for (int sl = 0; sl < s->n; sl++) {
        for (int t = 0; t < TPB; t++) kb_sbb_elem(B, cols, dY, ld, sD, Y, ldy, sY, sl, t, TPB);
        for (int t = 0; t < TPB; t++) kb_sbb_sums(s, B, cols, dY, ld, sD, bias, sl, t, TPB);
    }
}
static void emu_dropout_selu_back(void *ctx, const bl_tg_state *s, int B, double *dx, const double *y, int which,
                                  long i0, const double *extra) {
    (void)ctx;
    if (emu_capturing) {
        emu_rec *r = rec_push(R_DSB, s, NULL);
        r->l[0] = B, r->l[1] = which, r->l[2] = i0, r->m[0] = dx, r->c[0] = y, r->c[1] = extra;
        return;
    }
    for (size_t i = 0; i < kb_ae_n(s, B, s->net.H); i++) kb_dropout_selu_back(s, B, dx, y, which, i0, extra, i);
}
static void emu_code_back(void *ctx, const bl_tg_state *s, int B, int clean) {
    (void)ctx;
    if (emu_capturing) {
        emu_rec *r = rec_push(R_CODE_BACK, s, NULL);
        r->l[0] = B, r->l[1] = clean;
        return;
    }
    for (size_t i = 0; i < kb_ae_n(s, B, s->net.C); i++) kb_code_back(s, B, clean, i);
}
static void emu_adam(void *ctx, const bl_tg_state *s, double beta1, double beta2, double eps, long ib) {
    (void)ctx;
    if (emu_capturing) {
        emu_rec *r = rec_push(R_ADAM, s, NULL);
        r->d[0] = beta1, r->d[1] = beta2, r->d[2] = eps, r->l[0] = ib;
        return;
    }
    for (size_t i = 0; i < kb_params_n(s); i++) kb_adam(s, beta1, beta2, eps, ib, i);
}
static void emu_keep_best(void *ctx, const bl_tg_state *s) {
    (void)ctx;
    for (size_t i = 0; i < kb_params_n(s); i++) kb_keep_best(s, i);
}
static void emu_average(void *ctx, const bl_tg_state *s) {
    (void)ctx;
    if (emu_capturing) {
        rec_push(R_AVERAGE, s, NULL);
        return;
    }
    for (size_t i = 0; i < kb_params_n(s); i++) kb_average(s, i);
}

/* Failures to simulate, as CUDA can have them: capture_begin refused (cudaStreamBeginCapture failed: the
 * stream is not capturing, so whatever the caller queues next really runs), or capture_end failing
 * (an invalidated capture: nothing recorded, nothing ran). Counters: captures started, and calls of
 * capture_end without a capture (the caller broke tgroup_ops.h's contract; like cudaStreamEndCapture on
 * a stream that is not capturing, it fails). */
static int emu_fail_begin, emu_fail_end; /* emu_fail_end = k > 0: the k-th capture and later ones fail */
static int emu_begins, emu_stray_ends;

static int emu_capture_begin(void *ctx) {
    (void)ctx;
    if (emu_fail_begin) return 0;
    emu_capturing = 1;
    emu_cap.n = 0;
    emu_begins++;
    return 1;
}
static int emu_capture_end(void *ctx) {
    (void)ctx;
    if (!emu_capturing) {
        emu_stray_ends++;
        return 0;
    }
    emu_capturing = 0;
    if (emu_fail_end > 0 && emu_begins >= emu_fail_end) { /* the record is discarded; the earlier graph stays, as with CUDA */
        emu_cap.n = 0;
        return 0;
    }
    emu_log t = emu_graph;
    emu_graph = emu_cap;
    emu_cap = t;
    return 1;
}
static const char *emu_capture_why(void *ctx) {
    (void)ctx;
    return emu_fail_begin ? "simulated: begin refused" : emu_fail_end ? "simulated: capture invalidated" : "";
}
/* Back to a clean emulator (between tests: the checks below count from zero). */
static void emu_reset(void) {
    free(emu_cap.r);
    free(emu_graph.r);
    memset(&emu_cap, 0, sizeof emu_cap);
    memset(&emu_graph, 0, sizeof emu_graph);
    emu_capturing = emu_fail_begin = emu_fail_end = emu_begins = emu_stray_ends = 0;
}
static void emu_replay(void *ctx) {
    for (size_t i = 0; i < emu_graph.n; i++) {
        const emu_rec *r = &emu_graph.r[i];
        const long *l = r->l;
        switch (r->op) {
        case R_GEMM:
            emu_gemm(ctx, (int)l[0], (int)l[1], (int)l[2], (int)l[3], (int)l[4], r->d[0], r->c[0], l[5], l[6], r->c[1],
                     l[7], l[8], r->d[1], r->m[0], l[9], (long)r->d[2], r->s.n);
            break;
        case R_GATHER: emu_gather(ctx, &r->s, &r->v, (int)l[0], l[1], (int)l[2]); break;
        case R_BIAS_SELU: emu_bias_selu(ctx, &r->s, (int)l[0], (int)l[1], r->m[0], l[2], l[3], l[4]); break;
        case R_SELU_DROPOUT: emu_selu_dropout(ctx, &r->s, (int)l[0], r->m[0], r->m[1], (int)l[1], l[2], (int)l[3]); break;
        case R_CODES: emu_codes(ctx, &r->s, (int)l[0]); break;
        case R_RECON: emu_recon(ctx, &r->s, (int)l[0]); break;
        case R_HEAD: emu_head(ctx, &r->s, (int)l[0], (int)l[1], l[2]); break;
        case R_SBB: emu_selu_back_bias(ctx, &r->s, (int)l[0], (int)l[1], r->m[0], l[2], l[3], r->c[0], l[4], l[5], l[6]); break;
        case R_DSB: emu_dropout_selu_back(ctx, &r->s, (int)l[0], r->m[0], r->c[0], (int)l[1], l[2], r->c[1]); break;
        case R_CODE_BACK: emu_code_back(ctx, &r->s, (int)l[0], (int)l[1]); break;
        case R_ADAM: emu_adam(ctx, &r->s, r->d[0], r->d[1], r->d[2], l[0]); break;
        case R_AVERAGE: emu_average(ctx, &r->s); break;
        default: ck_abort_msg("unknown record %d", r->op);
        }
    }
}

static bl_tg_ops emu_ops(void) {
    bl_tg_ops o = *bl_tg_ops_cpu(); /* memory and copies */
    o.name = "cuda-emulated";
    o.gemm = emu_gemm;
    o.gather = emu_gather;
    o.bias_selu = emu_bias_selu;
    o.selu_dropout = emu_selu_dropout;
    o.codes = emu_codes;
    o.recon = emu_recon;
    o.head = emu_head;
    o.selu_back_bias = emu_selu_back_bias;
    o.dropout_selu_back = emu_dropout_selu_back;
    o.code_back = emu_code_back;
    o.adam = emu_adam;
    o.keep_best = emu_keep_best;
    o.average = emu_average;
    o.capture_begin = emu_capture_begin;
    o.capture_end = emu_capture_end;
    o.replay = emu_replay;
    o.capture_why = emu_capture_why;
    return o;
}

#define TOL 1e-9

static const bl_tgroup_trial CFG[4] = {
    {.lr = 0.01, .wd = 0.001, .dropout = 0.1, .seed = 11},
    {.lr = 0.1, .wd = 0.01, .dropout = 0.2, .seed = 12},
    {.lr = 0.001, .wd = 0.0001, .dropout = 0.0, .seed = 13},
    {.lr = 0.01, .wd = 0.0, .dropout = 0.05, .seed = 14},
};

static int use_graphs; /* make_group_ops sets opts.graphs from this */
static int use_span = 1; /* and opts.avg_span from this */

static bl_tgroup *make_group_ops(const bl_tg_ops *ops, const fixture *f, int T, const bl_tgroup_trial *cfg,
                                 int batch, int mode, int threads) {
    bl_tgroup_opts o;
    bl_tgroup_opts_default(&o);
    o.graphs = use_graphs;
    o.avg_span = use_span;
    o.batch = batch;
    o.per_row_dropout = mode;
    o.threads = threads;
    bl_tgroup *g = NULL;
    bl_error e;
    bl_status st = bl_tgroup_new_ops(ops, &f->d, &f->tr.v, f->has_val ? &f->va.v : NULL, T, cfg, &o, &g, &e);
    ck_assert_msg(st == BL_OK, "bl_tgroup_new: %s", e.message);
    return g;
}

static bl_tgroup *make_group(const fixture *f, int T, const bl_tgroup_trial *cfg, int batch, int mode, int threads) {
    return make_group_ops(NULL, f, T, cfg, batch, mode, threads);
}

/* Trial i of g against its reference: losses, bookkeeping, parameters, Adam state and best state. */
static double compare_trial(bl_tgroup *g, int i, const ref_trial *r, const fixture *f) {
    bl_tgroup_stat st;
    bl_tgroup_stat_get(g, i, &st);
    ck_assert_int_eq(st.epochs_done, r->epochs_done);
    ck_assert_int_eq(st.best_epoch, r->best_epoch);
    double dev = rel_dev(st.train_loss, r->last_train);
    dev = fmax(dev, rel_dev(st.val_loss, r->last_val));
    dev = fmax(dev, rel_dev(st.best_val, r->best_val));
    bl_bnet net;
    bl_error e;
    ck_assert_int_eq(bl_bnet_init(&net, &f->d, NULL, &e), BL_OK);
    ck_assert_int_eq(bl_tgroup_get_params(g, i, &net, 1, &e), BL_OK);
    dev = fmax(dev, params_dev(&r->net, net.P.param));
    /* Adam's moments, as parameter-shaped vectors */
    bl_bnet mref = r->net;
    mref.P.param = r->net.P.m;
    dev = fmax(dev, params_dev(&mref, net.P.m));
    mref.P.param = r->net.P.v;
    dev = fmax(dev, params_dev(&mref, net.P.v));
    ck_assert_int_eq(net.P.views[0].step, r->net.P.views[0].step);
    ck_assert_int_eq(bl_tgroup_get_best(g, i, &net, &e), BL_OK);
    bl_bnet bref = r->net;
    bref.P.param = r->best;
    dev = fmax(dev, params_dev(&bref, net.P.param));
    bl_bnet_free(&net);
    return dev;
}

/* T trials (T ≤ 4) of cfg, E epochs, group against per-trial reference after every epoch. With use_graphs
 * (emulated ops): the first epoch runs directly, the second records, the rest replay, unless a simulated
 * capture failure sends the group back to direct launches; either way each epoch runs exactly once. */
static void run_compare_cfg(const bl_tg_ops *ops, int T, const bl_tgroup_trial *cfg, int mode, int threads, int batch,
                            int E) {
    fixture f;
    ck_assert_int_eq(fixture_synth(&f, 8, 2, 2), 0);
    ck_assert(T >= 1 && T <= 4);
    bl_tgroup *g = make_group_ops(ops, &f, T, cfg, batch, mode, threads);
    ref_trial r[4];
    for (int i = 0; i < T; i++) ck_assert_int_eq(ref_init(&r[i], &f, &cfg[i], batch), 0);
    bl_error e;
    double worst = 0.0;
    const int begins0 = emu_begins;
    for (int ep = 0; ep < E; ep++) {
        ck_assert_msg(bl_tgroup_epoch(g, NULL, &e) == BL_OK, "epoch: %s", e.message);
        if (use_graphs && ep == 0) { /* the first epoch runs directly */
            ck_assert_int_eq(emu_begins, begins0);
            ck_assert_int_eq(bl_tgroup_graphs(g), 0);
        }
        for (int i = 0; i < T; i++) {
            ck_assert_int_eq(ref_epoch(&r[i], &f, batch, mode), 0);
            const double dev = compare_trial(g, i, &r[i], &f);
            ck_assert_msg(dev <= TOL, "mode %d epoch %d trial %d: deviation %.3g > %.0g", mode, ep + 1, i, dev, TOL);
            worst = fmax(worst, dev);
        }
    }
    if (use_graphs) {
        /* one capture (at the second epoch), which fails when simulated so */
        const int expect = E >= 2 && !emu_fail_begin && !(emu_fail_end > 0 && emu_fail_end <= emu_begins);
        ck_assert_msg(bl_tgroup_graphs(g) == expect, "graphs %d, expected %d", bl_tgroup_graphs(g), expect);
        ck_assert_int_eq(emu_begins - begins0, E >= 2 && !emu_fail_begin);
        ck_assert_int_eq(emu_stray_ends, 0); /* capture_end never called without a capture */
    }
    fprintf(stderr, "tgroup (%s%s) vs per-trial, masks mode %d, %d epochs of %d trials: largest relative deviation "
            "%.2e\n", bl_tgroup_device_name(g), bl_tgroup_graphs(g) ? ", graphs" : "", mode, E, T, worst);
    for (int i = 0; i < T; i++) ref_free(&r[i]);
    bl_tgroup_free(g);
    fixture_free(&f);
}

static void run_compare(const bl_tg_ops *ops, int mode, int threads, int batch, int E) {
    run_compare_cfg(ops, 4, CFG, mode, threads, batch, E);
}

START_TEST(test_matches_per_trial_rows) { run_compare(NULL, 1, 1, 16, 5); }
END_TEST
START_TEST(test_matches_per_trial_values) { run_compare(NULL, 0, 2, 16, 4); }
END_TEST
START_TEST(test_matches_per_trial_hybrid) { run_compare(NULL, 2, 3, 16, 4); }
END_TEST
/* one batch holding every row (the pass's largest B) */
START_TEST(test_matches_per_trial_one_batch) { run_compare(NULL, 1, 1, 1000, 3); }
END_TEST

/* The CUDA kernels' code, emulated (see emu_ops), in every mask mode. */
START_TEST(test_cuda_kernels_emulated) {
    const bl_tg_ops emu = emu_ops();
    run_compare(&emu, 1, 2, 16, 3);
    run_compare(&emu, 0, 1, 16, 2);
    run_compare(&emu, 2, 1, 16, 2);
    run_compare(&emu, 1, 1, 1000, 2);
}
END_TEST

/* Successive-halving use: trials stop between epochs; the stopped keep their state (moved to the host),
 * the others move to lower slots and go on exactly as alone. */
static void run_halving(const bl_tg_ops *ops) {
    fixture f;
    ck_assert_int_eq(fixture_synth(&f, 8, 2, 2), 0);
    const int T = 4, batch = 16, mode = 1;
    bl_tgroup *g = make_group_ops(ops, &f, T, CFG, batch, mode, 2);
    ref_trial r[4];
    for (int i = 0; i < T; i++) ck_assert_int_eq(ref_init(&r[i], &f, &CFG[i], batch), 0);
    const uint8_t plan[5][4] = {{1, 1, 1, 1}, {1, 1, 1, 1}, {1, 0, 0, 1}, {1, 0, 0, 1}, {0, 0, 0, 1}};
    bl_error e;
    double worst = 0.0;
    for (int ep = 0; ep < 5; ep++) {
        ck_assert_msg(bl_tgroup_epoch(g, plan[ep], &e) == BL_OK, "epoch: %s", e.message);
        for (int i = 0; i < T; i++) {
            if (plan[ep][i]) ck_assert_int_eq(ref_epoch(&r[i], &f, batch, mode), 0);
            bl_tgroup_stat st;
            bl_tgroup_stat_get(g, i, &st);
            ck_assert_int_eq(st.alive, plan[ep][i]);
            const double dev = compare_trial(g, i, &r[i], &f);
            ck_assert_msg(dev <= TOL, "epoch %d trial %d: deviation %.3g", ep + 1, i, dev);
            worst = fmax(worst, dev);
        }
    }
    /* a stopped trial cannot come back; nothing alive is an error too */
    const uint8_t back[4] = {0, 1, 0, 1}, none[4] = {0, 0, 0, 0};
    ck_assert_int_eq(bl_tgroup_epoch(g, back, &e), BL_EINVAL);
    ck_assert_ptr_nonnull(strstr(e.message, "stopped"));
    ck_assert_int_eq(bl_tgroup_epoch(g, none, &e), BL_EINVAL);
    /* NULL: every trial still alive (trial 3) */
    ck_assert_int_eq(bl_tgroup_epoch(g, NULL, &e), BL_OK);
    ck_assert_int_eq(ref_epoch(&r[3], &f, batch, mode), 0);
    for (int i = 0; i < T; i++) ck_assert(compare_trial(g, i, &r[i], &f) <= TOL);
    if (use_graphs) {
        /* captures at epochs 2, 3 and 5 (the slots changed), replays at 4 and 6 */
        const int expect = !emu_fail_begin && emu_fail_end == 0;
        ck_assert_msg(bl_tgroup_graphs(g) == expect, "graphs %d, expected %d", bl_tgroup_graphs(g), expect);
        ck_assert_int_eq(emu_stray_ends, 0);
    }
    fprintf(stderr, "tgroup (%s%s) with trials stopped between epochs: largest relative deviation %.2e\n",
            bl_tgroup_device_name(g), bl_tgroup_graphs(g) ? ", graphs" : "", worst);
    for (int i = 0; i < T; i++) ref_free(&r[i]);
    bl_tgroup_free(g);
    fixture_free(&f);
}

START_TEST(test_halving) { run_halving(NULL); }
END_TEST
START_TEST(test_halving_emulated) {
    const bl_tg_ops emu = emu_ops();
    run_halving(&emu);
}
END_TEST

/* Epochs recorded once and replayed (opts.graphs), re-recorded when trials stop: the same results as
 * direct launches, so nothing that changes between epochs is baked into an op's arguments. */
START_TEST(test_graphs_emulated) {
    const bl_tg_ops emu = emu_ops();
    emu_reset();
    use_graphs = 1;
    run_compare(&emu, 1, 2, 16, 3);
    ck_assert_int_eq(emu_begins, 1); /* epoch 1 direct, 2 recorded, 3 replayed */
    run_compare(&emu, 2, 1, 16, 2);
    ck_assert_int_eq(emu_begins, 2);
    run_halving(&emu);
    ck_assert_int_eq(emu_begins, 5); /* recorded again only when the slots changed */
    ck_assert_int_gt((int)emu_graph.n, 50); /* an epoch was recorded */
    /* one trial (one slot), with and without masks */
    run_compare_cfg(&emu, 1, &CFG[2], 1, 1, 16, 3);
    run_compare_cfg(&emu, 1, &CFG[0], 0, 1, 16, 3);
    ck_assert_int_eq(emu_begins, 7);
    use_graphs = 0;
    emu_reset();
}
END_TEST

/* Captures that fail (tgroup_ops.h's contract): whether capture_begin refuses (the stream is not
 * capturing, so the ops queued next really run) or capture_end fails (nothing ran), every epoch must run
 * exactly once. Running it a second time after a refused start — two Adam steps per batch and a second
 * shuffle — is far outside the tolerance against the per-trial path. */
START_TEST(test_graph_capture_fails_emulated) {
    const bl_tg_ops emu = emu_ops();
    emu_reset();
    use_graphs = 1;
    emu_fail_begin = 1;
    run_compare(&emu, 1, 2, 16, 3);
    run_compare_cfg(&emu, 1, &CFG[2], 1, 1, 16, 3);
    ck_assert_int_eq(emu_begins, 0);
    ck_assert_int_eq((int)emu_graph.n, 0);
    run_halving(&emu);
    emu_fail_begin = 0;
    /* the first capture fails at its end: direct launches from then on */
    emu_fail_end = 1;
    run_compare(&emu, 2, 1, 16, 3);
    ck_assert_int_eq(emu_begins, 1);
    ck_assert_int_eq((int)emu_graph.n, 0);
    /* a later capture fails (slots changed after a good one): the stale graph is never replayed */
    emu_reset();
    use_graphs = 1;
    emu_fail_end = 2;
    run_halving(&emu);
    ck_assert_int_eq(emu_begins, 2);
    ck_assert_int_eq(emu_stray_ends, 0);
    use_graphs = 0;
    emu_reset();
}
END_TEST

/* Best state: before any epoch it is the initial network; afterwards the parameters of the epoch with
 * the lowest validation loss, which the per-trial comparison checks; here also the initial state and a
 * trial whose validation loss rises (lr 0.1 diverges from the start on this data, so its best epoch
 * stays early while its parameters move on). */
START_TEST(test_best_state) {
    fixture f;
    ck_assert_int_eq(fixture_synth(&f, 8, 2, 2), 0);
    bl_tgroup *g = make_group(&f, 4, CFG, 16, 1, 1);
    bl_error e;
    bl_bnet init, got;
    ck_assert_int_eq(bl_bnet_init(&got, &f.d, NULL, &e), BL_OK);
    for (int i = 0; i < 4; i++) {
        bl_rng rng;
        bl_rng_seed(&rng, CFG[i].seed);
        ck_assert_int_eq(bl_bnet_init(&init, &f.d, &rng, &e), BL_OK);
        ck_assert_int_eq(bl_tgroup_get_best(g, i, &got, &e), BL_OK);
        ck_assert_mem_eq(got.P.param, init.P.param, init.P.n * sizeof(double));
        ck_assert_int_eq(bl_tgroup_get_params(g, i, &got, 1, &e), BL_OK);
        ck_assert_mem_eq(got.P.param, init.P.param, init.P.n * sizeof(double));
        bl_tgroup_stat st;
        bl_tgroup_stat_get(g, i, &st);
        ck_assert(st.alive == 1 && st.epochs_done == 0 && st.best_epoch == 0 && isinf(st.best_val));
        bl_bnet_free(&init);
    }
    int saw_stale_best = 0;
    for (int ep = 0; ep < 12; ep++) {
        ck_assert_int_eq(bl_tgroup_epoch(g, NULL, &e), BL_OK);
        for (int i = 0; i < 4; i++) {
            bl_tgroup_stat st;
            bl_tgroup_stat_get(g, i, &st);
            ck_assert_int_eq(st.epochs_done, ep + 1);
            ck_assert(st.best_val <= st.val_loss);
            ck_assert(st.best_epoch >= 1 && st.best_epoch <= st.epochs_done);
            ck_assert(st.best_epoch == st.epochs_done ? st.best_val == st.val_loss : st.best_val < st.val_loss);
            if (st.best_epoch < st.epochs_done) {
                /* best differs from the current parameters */
                ck_assert_int_eq(bl_tgroup_get_best(g, i, &got, &e), BL_OK);
                bl_bnet cur;
                ck_assert_int_eq(bl_bnet_init(&cur, &f.d, NULL, &e), BL_OK);
                ck_assert_int_eq(bl_tgroup_get_params(g, i, &cur, 0, &e), BL_OK);
                ck_assert(memcmp(cur.P.param, got.P.param, cur.P.n * sizeof(double)) != 0);
                bl_bnet_free(&cur);
                saw_stale_best = 1;
            }
        }
    }
    ck_assert_msg(saw_stale_best, "no trial had a best epoch before its last one");
    bl_bnet_free(&got);
    bl_tgroup_free(g);
    fixture_free(&f);
}
END_TEST

/* Without a validation view the training loss stands in for it (pretrain.c when no context is held
 * out); set_trial replaces a trial's start. */
START_TEST(test_no_validation_and_set_trial) {
    fixture f;
    ck_assert_int_eq(fixture_synth(&f, 6, 2, 0), 0);
    ck_assert_int_eq(f.has_val, 0);
    bl_tgroup *g = make_group(&f, 2, CFG, 16, 1, 1);
    /* trial 1 starts from seed 99's network and generator instead */
    bl_tgroup_trial c1 = CFG[1];
    c1.seed = 99;
    bl_rng rng;
    bl_rng_seed(&rng, 99);
    bl_bnet net;
    bl_error e;
    ck_assert_int_eq(bl_bnet_init(&net, &f.d, &rng, &e), BL_OK);
    ck_assert_int_eq(bl_tgroup_set_trial(g, 1, &net, &rng, &e), BL_OK);
    ref_trial r[2];
    ck_assert_int_eq(ref_init(&r[0], &f, &CFG[0], 16), 0);
    ck_assert_int_eq(ref_init(&r[1], &f, &c1, 16), 0);
    for (int ep = 0; ep < 3; ep++) {
        ck_assert_int_eq(bl_tgroup_epoch(g, NULL, &e), BL_OK);
        for (int i = 0; i < 2; i++) {
            ck_assert_int_eq(ref_epoch(&r[i], &f, 16, 1), 0);
            bl_tgroup_stat st;
            bl_tgroup_stat_get(g, i, &st);
            ck_assert(st.val_loss == st.train_loss);
            ck_assert(compare_trial(g, i, &r[i], &f) <= TOL);
        }
    }
    /* too late now */
    ck_assert_int_eq(bl_tgroup_set_trial(g, 0, &net, NULL, &e), BL_EINVAL);
    for (int i = 0; i < 2; i++) ref_free(&r[i]);
    bl_bnet_free(&net);
    bl_tgroup_free(g);
    fixture_free(&f);
}
END_TEST

static bl_status try_new(const fixture *f, int T, const bl_tgroup_trial *cfg, const bl_tgroup_opts *o, bl_error *e) {
    bl_tgroup *g = (bl_tgroup *)1;
    bl_status st = bl_tgroup_new(&f->d, &f->tr.v, &f->va.v, T, cfg, o, &g, e);
    if (st) ck_assert_ptr_null(g);
    bl_tgroup_free(st ? NULL : g);
    return st;
}

/* call must fail with BL_EINVAL and a message (in e) containing text */
#define EXPECT_EINVAL(call, text)                                                                            \
    do {                                                                                                     \
        e.message[0] = 0;                                                                                    \
        const bl_status st_ = (call);                                                                        \
        ck_assert_msg(st_ == BL_EINVAL, "%s: status %d", #call, (int)st_);                                   \
        ck_assert_msg(strstr(e.message, text) != NULL, "%s: message '%s' lacks '%s'", #call, e.message, text); \
    } while (0)

START_TEST(test_bad_arguments) {
    fixture f;
    ck_assert_int_eq(fixture_synth(&f, 6, 2, 2), 0);
    bl_tgroup_opts o;
    bl_tgroup_opts_default(&o);
    bl_tgroup_trial c[2] = {CFG[0], CFG[1]};
    bl_error e;
    bl_tgroup *g = NULL;
    EXPECT_EINVAL(bl_tgroup_new(NULL, &f.tr.v, NULL, 2, c, &o, &g, &e), "NULL");
    EXPECT_EINVAL(bl_tgroup_new(&f.d, &f.tr.v, NULL, 2, c, &o, NULL, &e), "NULL");
    EXPECT_EINVAL(try_new(&f, 0, c, &o, &e), "trials");
    EXPECT_EINVAL(try_new(&f, BL_TGROUP_MAX_TRIALS + 1, c, &o, &e), "trials");
    o.batch = 0;
    EXPECT_EINVAL(try_new(&f, 2, c, &o, &e), "batch");
    o.batch = 16;
    o.per_row_dropout = 3;
    EXPECT_EINVAL(try_new(&f, 2, c, &o, &e), "mode");
    o.per_row_dropout = 1;
    o.threads = 0;
    EXPECT_EINVAL(try_new(&f, 2, c, &o, &e), "threads");
    o.threads = 1;
    o.device = 7;
    EXPECT_EINVAL(try_new(&f, 2, c, &o, &e), "device");
    o.device = BL_NN_CPU_BATCHED;
    c[1].dropout = 1.0;
    EXPECT_EINVAL(try_new(&f, 2, c, &o, &e), "dropout");
    c[1] = CFG[1];
    c[0].lr = -0.1;
    EXPECT_EINVAL(try_new(&f, 2, c, &o, &e), "learning rate");
    c[0].lr = 0.01;
    c[0].wd = NAN;
    EXPECT_EINVAL(try_new(&f, 2, c, &o, &e), "weight decay");
    c[0] = CFG[0];
    /* a view that points outside its tables, and one without targets */
    bl_bview bad = f.tr.v;
    bad.n_sx = 0;
    EXPECT_EINVAL(bl_tgroup_new(&f.d, &bad, NULL, 2, c, &o, &g, &e), "scale-out");
    bad = f.tr.v;
    bad.target = NULL;
    EXPECT_EINVAL(bl_tgroup_new(&f.d, &bad, NULL, 2, c, &o, &g, &e), "targets");
    bl_bnet_dims d2 = f.d;
    d2.z_hidden = 0;
    ck_assert_int_eq(bl_tgroup_new(&d2, &f.tr.v, NULL, 2, c, &o, &g, &e), BL_EINVAL);
    /* a good group: calls with a bad trial index or a network of other dims */
    ck_assert_int_eq(bl_tgroup_new(&f.d, &f.tr.v, &f.va.v, 2, c, &o, &g, &e), BL_OK);
    bl_bnet other;
    d2 = f.d;
    d2.z_hidden = 5;
    ck_assert_int_eq(bl_bnet_init(&other, &d2, NULL, &e), BL_OK);
    EXPECT_EINVAL(bl_tgroup_get_params(g, 0, &other, 0, &e), "dimensions");
    EXPECT_EINVAL(bl_tgroup_get_best(g, 0, &other, &e), "dimensions");
    EXPECT_EINVAL(bl_tgroup_set_trial(g, 0, &other, NULL, &e), "dimensions");
    EXPECT_EINVAL(bl_tgroup_get_best(g, 2, &other, &e), "no trial");
    EXPECT_EINVAL(bl_tgroup_get_params(g, -1, &other, 0, &e), "no trial");
    EXPECT_EINVAL(bl_tgroup_epoch(NULL, NULL, &e), "NULL");
    bl_tgroup_stat st;
    bl_tgroup_stat_get(g, 5, &st);
    ck_assert_int_eq(st.alive, 0);
    ck_assert_int_eq(bl_tgroup_trials(g), 2);
    ck_assert_str_eq(bl_tgroup_device_name(g), "cpu");
    bl_bnet_free(&other);
    bl_tgroup_free(g);
    bl_tgroup_free(NULL);
    fixture_free(&f);
}
END_TEST

/* The device registry (nn/device.h): names and batched flags by id, unknown ids refused, the CPU always
 * there, the batched CPU opening the CPU ops, the per-trial CPU opening none, CUDA answering as the
 * module's loader does. */
START_TEST(test_device_registry) {
    ck_assert_str_eq(bl_nn_device_name(BL_NN_CPU), "cpu");
    ck_assert_str_eq(bl_nn_device_name(BL_NN_CUDA), "cuda");
    ck_assert_str_eq(bl_nn_device_name(BL_NN_CPU_BATCHED), "cpu-batched");
    ck_assert_str_eq(bl_nn_device_name(-1), "unknown");
    ck_assert_str_eq(bl_nn_device_name(BL_NN_DEVICES), "unknown");
    ck_assert_int_eq(bl_nn_device_batched(BL_NN_CPU), 0);
    ck_assert_int_eq(bl_nn_device_batched(BL_NN_CUDA), 1);
    ck_assert_int_eq(bl_nn_device_batched(BL_NN_CPU_BATCHED), 1);
    ck_assert_int_eq(bl_nn_device_batched(7), 0);
    bl_error e;
    ck_assert_int_eq(bl_nn_device_check(BL_NN_CPU, &e), BL_OK);
    ck_assert_int_eq(bl_nn_device_check(BL_NN_CPU_BATCHED, &e), BL_OK);
    ck_assert_int_eq(bl_nn_device_probe(BL_NN_CPU), 1);
    ck_assert_int_eq(bl_nn_device_probe(BL_NN_DEVICES), 0);
    ck_assert_int_eq(bl_nn_device_check(BL_NN_DEVICES, &e), BL_EINVAL);
    ck_assert_msg(strstr(e.message, "unknown device 3"), "message: %s", e.message);
    const bl_tg_ops *ops = bl_tg_ops_cpu(); /* a refusal resets it */
    ck_assert_int_eq(bl_nn_device_open(BL_NN_CPU, &ops, &e), BL_EINVAL);
    ck_assert_ptr_null(ops);
    ck_assert_msg(strstr(e.message, "trains no trial group"), "message: %s", e.message);
    ck_assert_int_eq(bl_nn_device_open(BL_NN_CPU_BATCHED, &ops, &e), BL_OK);
    ck_assert_ptr_eq(ops, bl_tg_ops_cpu());
    bl_error ec;
    const bl_status cuda = bl_cuda_available(&ec);
    ck_assert_int_eq(bl_nn_device_check(BL_NN_CUDA, &e), cuda);
    ck_assert_int_eq(bl_nn_device_probe(BL_NN_CUDA), cuda == BL_OK);
    ck_assert_int_eq(bl_nn_device_open(BL_NN_CUDA, &ops, &e), cuda);
    if (cuda == BL_OK) {
        ck_assert_ptr_eq(ops, bl_tg_ops_cuda());
    } else {
        ck_assert_ptr_null(ops);
        ck_assert_str_eq(e.message, ec.message);
    }
}
END_TEST

/* Device CUDA where no GPU is usable (or in a build without the CUDA module): a clear BL_EUNSUPPORTED.
 * The tests' environment points BELLAMY_CUDA_MODULE at this build tree's module (tests/meson.build). */
START_TEST(test_cuda_unavailable) {
    bl_error e;
    const bl_status avail = bl_cuda_available(&e);
    if (!BL_HAVE_CUDA) {
        ck_assert_int_eq(avail, BL_EUNSUPPORTED);
        ck_assert_msg(strstr(e.message, "no CUDA module: ") && strstr(e.message, "libbellamy-cuda.so"),
                      "message: %s", e.message);
        ck_assert_ptr_null(bl_tg_ops_cuda());
    } else {
        ck_assert_msg(bl_tg_ops_cuda() != NULL, "the build tree's CUDA module did not load: %s", e.message);
        if (avail) ck_assert_msg(strstr(e.message, "no CUDA device: "), "message: %s", e.message);
    }
    if (avail == BL_OK) {
        fprintf(stderr, "test_cuda_unavailable: a CUDA device is present; the refusal is not exercised here\n");
        return;
    }
    ck_assert_int_eq(avail, BL_EUNSUPPORTED);
    fixture f;
    ck_assert_int_eq(fixture_synth(&f, 6, 2, 2), 0);
    bl_tgroup_opts o;
    bl_tgroup_opts_default(&o);
    o.device = BL_NN_CUDA;
    bl_error e2;
    ck_assert_int_eq(try_new(&f, 2, CFG, &o, &e2), BL_EUNSUPPORTED);
    ck_assert_str_eq(e2.message, e.message);
    fixture_free(&f);
}
END_TEST

/* A short search (12 trials of the default grid, successive halving over 10 epochs) on two
 * implementations whose sums differ in order (CPU loops; the CUDA kernels with a BLAS): the same halving
 * decisions and winner, and the winner's best state within SEARCH_TOL. Training at lr 0.1 amplifies
 * rounding differences about tenfold per epoch, so numerical agreement holds for short runs only; the
 * figures are printed. test_gpu.c runs the same check with cuBLAS. */
#define SEARCH_TOL 1e-6
static void compare_search(const bl_tg_ops *a_ops, const bl_tg_ops *b_ops, const fixture *f) {
    const int T = 12;
    bl_tgroup_trial cfg[12];
    grid_configs(cfg, T, 1);
    bl_tgroup *a = make_group_ops(a_ops, f, T, cfg, 64, 1, 2), *b = make_group_ops(b_ops, f, T, cfg, 64, 1, 2);
    bl_error e;
    const int wa = search_run(a, 10, 3, 2, &e), wb = search_run(b, 10, 3, 2, &e);
    ck_assert_int_ge(wa, 0);
    ck_assert_int_eq(wa, wb);
    bl_bnet na, nb;
    ck_assert_int_eq(bl_bnet_init(&na, &f->d, NULL, &e), BL_OK);
    ck_assert_int_eq(bl_bnet_init(&nb, &f->d, NULL, &e), BL_OK);
    double worst_val = 0.0, worst_par = 0.0;
    for (int i = 0; i < T; i++) {
        bl_tgroup_stat sa, sb;
        bl_tgroup_stat_get(a, i, &sa);
        bl_tgroup_stat_get(b, i, &sb);
        ck_assert_int_eq(sa.epochs_done, sb.epochs_done); /* the same halving decisions */
        ck_assert_int_eq(sa.best_epoch, sb.best_epoch);
        ck_assert_int_eq(bl_tgroup_get_best(a, i, &na, &e), BL_OK);
        ck_assert_int_eq(bl_tgroup_get_best(b, i, &nb, &e), BL_OK);
        const double dv = rel_dev(sa.best_val, sb.best_val), dp = params_dev(&na, nb.P.param);
        fprintf(stderr, "  trial %2d (lr %-5g wd %-6g p %-4g): %2ld epochs, best val %.6g, deviation: best val %.1e, best "
                "parameters %.1e\n", i, cfg[i].lr, cfg[i].wd, cfg[i].dropout, sa.epochs_done, sa.best_val, dv, dp);
        if (i == wa) {
            ck_assert_msg(dv <= SEARCH_TOL && dp <= SEARCH_TOL, "winner %d: deviation %.3g / %.3g", i, dv, dp);
        }
        worst_val = fmax(worst_val, dv);
        worst_par = fmax(worst_par, dp);
    }
    fprintf(stderr, "search (%s vs %s): winner %d, largest deviation of a best val %.2e, of best parameters %.2e\n",
            bl_tgroup_device_name(a), bl_tgroup_device_name(b), wa, worst_val, worst_par);
    bl_bnet_free(&na);
    bl_bnet_free(&nb);
    bl_tgroup_free(a);
    bl_tgroup_free(b);
}

START_TEST(test_search_emulated) {
    fixture f;
    ck_assert_int_eq(fixture_synth(&f, 12, 2, 2), 0);
    const bl_tg_ops emu = emu_ops();
    compare_search(bl_tg_ops_cpu(), &emu, &f);
    /* with the parameters' average (the CUDA kernel's body, emulated, recorded in a graph) */
    use_span = 5;
    use_graphs = 1;
    compare_search(bl_tg_ops_cpu(), &emu, &f);
    use_graphs = 0;
    use_span = 1;
    fixture_free(&f);
}
END_TEST

/* The parameters' running average (pretrain.c's average_params): the best state a trial keeps is
 * avg = ema / (1 − βᵗ) of its parameters after each epoch, β = 1 − 1/span, at its best epoch, and its
 * validation loss is the average's; span 1 keeps the epoch's parameters themselves. */
START_TEST(test_parameter_average) {
    enum { E = 9, T = 3 };
    fixture f;
    ck_assert_int_eq(fixture_synth(&f, 8, 2, 2), 0);
    for (int span = 1; span <= 4; span += 3) {
        use_span = span;
        bl_tgroup *g = make_group(&f, T, CFG, 16, 1, 1);
        use_span = 1;
        bl_error e;
        bl_bnet raw, got;
        ck_assert_int_eq(bl_bnet_init(&raw, &f.d, NULL, &e), BL_OK);
        ck_assert_int_eq(bl_bnet_init(&got, &f.d, NULL, &e), BL_OK);
        const size_t n = raw.P.n;
        double *ema = calloc(T * n, sizeof *ema), *hist = malloc((size_t)E * T * n * sizeof *hist), w = 0.0;
        const double beta = 1.0 - 1.0 / span;
        int averaged = 0;
        for (int ep = 0; ep < E; ep++) {
            ck_assert_int_eq(bl_tgroup_epoch(g, NULL, &e), BL_OK);
            w = beta * w + (1.0 - beta);
            for (int i = 0; i < T; i++) {
                ck_assert_int_eq(bl_tgroup_get_params(g, i, &raw, 0, &e), BL_OK);
                double *h = hist + ((size_t)ep * T + (size_t)i) * n;
                for (size_t k = 0; k < n; k++) {
                    ema[(size_t)i * n + k] = beta * ema[(size_t)i * n + k] + (1.0 - beta) * raw.P.param[k];
                    h[k] = ema[(size_t)i * n + k] * (1.0 / w);
                }
                bl_tgroup_stat st;
                bl_tgroup_stat_get(g, i, &st);
                ck_assert_int_eq(bl_tgroup_get_best(g, i, &got, &e), BL_OK);
                const double *want = hist + ((size_t)(st.best_epoch - 1) * T + (size_t)i) * n;
                double dev = 0.0, moved = 0.0;
                for (size_t k = 0; k < n; k++) {
                    dev = fmax(dev, fabs(got.P.param[k] - want[k]) / fmax(1e-3, fabs(want[k])));
                    moved = fmax(moved, fabs(want[k] - raw.P.param[k]));
                }
                ck_assert_msg(dev <= 1e-12, "span %d epoch %d trial %d: best state %.3g from the average at its best "
                              "epoch %ld", span, ep + 1, i, dev, st.best_epoch);
                if (span == 1) ck_assert_msg(st.best_epoch != ep + 1 || moved == 0.0, "span 1 averaged");
                else averaged |= st.best_epoch == ep + 1 && moved > 0.0;
            }
        }
        if (span > 1) ck_assert_msg(averaged, "span %d: no best state differed from its epoch's parameters", span);
        free(ema);
        free(hist);
        bl_bnet_free(&raw);
        bl_bnet_free(&got);
        bl_tgroup_free(g);
    }
    /* a span out of range is refused */
    bl_tgroup_opts o;
    bl_tgroup_opts_default(&o);
    ck_assert_int_eq(o.avg_span, 1);
    bl_tgroup *g = NULL;
    bl_error e;
    o.avg_span = 0;
    ck_assert_int_eq(bl_tgroup_new(&f.d, &f.tr.v, &f.va.v, 2, CFG, &o, &g, &e), BL_EINVAL);
    ck_assert_ptr_nonnull(strstr(e.message, "average span 0"));
    fixture_free(&f);
}
END_TEST

Suite *bl_test_suite(void) {
    Suite *s = suite_create("tgroup");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_matches_per_trial_rows);
    tcase_add_test(tc, test_matches_per_trial_values);
    tcase_add_test(tc, test_matches_per_trial_hybrid);
    tcase_add_test(tc, test_matches_per_trial_one_batch);
    tcase_add_test(tc, test_cuda_kernels_emulated);
    tcase_add_test(tc, test_halving);
    tcase_add_test(tc, test_halving_emulated);
    tcase_add_test(tc, test_graphs_emulated);
    tcase_add_test(tc, test_graph_capture_fails_emulated);
    tcase_add_test(tc, test_search_emulated);
    tcase_add_test(tc, test_best_state);
    tcase_add_test(tc, test_parameter_average);
    tcase_add_test(tc, test_no_validation_and_set_trial);
    tcase_add_test(tc, test_bad_arguments);
    tcase_add_test(tc, test_device_registry);
    tcase_add_test(tc, test_cuda_unavailable);
    suite_add_tcase(s, tc);
    return s;
}
