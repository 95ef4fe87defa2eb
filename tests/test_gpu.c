/* test_gpu.c — the CUDA trial group against the CPU: the reference ops (tgroup_cpu.c) and the per-trial
 * path (bl_bnet_pass + bl_adam_step, as pretrain.c). Suite 'gpu'; without a usable GPU, or without the
 * CUDA module (a build without CUDA, or a module that does not load), the whole program exits 77 (SKIP)
 * with bl_cuda_available's reason.
 *
 * Stated tolerances:
 *   - one epoch of every trial (12 trials of the default grid, one of them without dropout; masks per
 *     row, per value, hybrid; the synthetic corpus and, when present, C3O grep): losses, parameters,
 *     Adam moments, best state within 1e-9 relative (per parameter block, see params_dev), against both
 *     CPU paths; a group of one trial (with and without dropout) over 3 epochs, the same;
 *   - trials stopped between epochs (slots compacted on the device): 1e-9 over 5 epochs;
 *   - the same with opts.graphs (the first epoch direct, later ones replayed from a recorded CUDA
 *     graph), and the graphs must really be recorded: a fallback to direct launches fails the test;
 *   - graph capture at the level of the ops: recorded work does not run until replayed;
 *   - a short search (successive halving, 10 epochs): the same halving decisions and winner, the
 *     winner's best validation loss and best parameters within 1e-6 (SEARCH_TOL). Longer runs agree
 *     statistically, not numerically: lr 0.1 amplifies rounding differences ~10× per epoch, between any
 *     two correct implementations (test_tgroup.c shows the same between the two CPU paths);
 *   - model files: the parameters a CUDA group trained go through bl_model_save/load unchanged, in the
 *     layout of bl_bnet_init (the group copies into a bl_bnet; nothing depends on the device).
 */
#include "testutil.h"

#include "nn/tgroup_ops.h"
#include "nn/cuda/cuda.h"
#include "tgroup_fixture.h"

#define TOL 1e-9
#define SEARCH_TOL 1e-6

static int use_graphs; /* opts.graphs for the CUDA groups make() creates */

static bl_tgroup *make(const fixture *f, int T, const bl_tgroup_trial *cfg, int mode, int device) {
    bl_tgroup_opts o;
    bl_tgroup_opts_default(&o);
    o.graphs = use_graphs;
    o.per_row_dropout = mode;
    o.device = device;
    o.threads = 4;
    bl_tgroup *g = NULL;
    bl_error e;
    bl_status st = bl_tgroup_new(&f->d, &f->tr.v, f->has_val ? &f->va.v : NULL, T, cfg, &o, &g, &e);
    ck_assert_msg(st == BL_OK, "bl_tgroup_new (%s): %s", device ? "cuda" : "cpu", e.message);
    return g;
}

/* Largest deviation of trial i between two groups: losses, bookkeeping, parameters, moments, best. */
static double group_dev(bl_tgroup *a, bl_tgroup *b, int i, const fixture *f) {
    bl_tgroup_stat sa, sb;
    bl_tgroup_stat_get(a, i, &sa);
    bl_tgroup_stat_get(b, i, &sb);
    ck_assert_int_eq(sa.epochs_done, sb.epochs_done);
    ck_assert_int_eq(sa.best_epoch, sb.best_epoch);
    double dev = fmax(rel_dev(sa.train_loss, sb.train_loss), rel_dev(sa.val_loss, sb.val_loss));
    bl_bnet na, nb;
    bl_error e;
    ck_assert_int_eq(bl_bnet_init(&na, &f->d, NULL, &e), BL_OK);
    ck_assert_int_eq(bl_bnet_init(&nb, &f->d, NULL, &e), BL_OK);
    ck_assert_int_eq(bl_tgroup_get_params(a, i, &na, 1, &e), BL_OK);
    ck_assert_int_eq(bl_tgroup_get_params(b, i, &nb, 1, &e), BL_OK);
    dev = fmax(dev, params_dev(&na, nb.P.param));
    bl_bnet ma = na;
    ma.P.param = na.P.m;
    dev = fmax(dev, params_dev(&ma, nb.P.m));
    ma.P.param = na.P.v;
    dev = fmax(dev, params_dev(&ma, nb.P.v));
    ck_assert_int_eq(bl_tgroup_get_best(a, i, &na, &e), BL_OK);
    ck_assert_int_eq(bl_tgroup_get_best(b, i, &nb, &e), BL_OK);
    dev = fmax(dev, params_dev(&na, nb.P.param));
    bl_bnet_free(&na);
    bl_bnet_free(&nb);
    return dev;
}

/* The default grid's T configurations, trial 1 without dropout (no masks are drawn or read for it). */
static void gpu_configs(bl_tgroup_trial *cfg, int T, uint64_t seed) {
    grid_configs(cfg, T, seed);
    if (T > 1) cfg[1].dropout = 0.0;
}

/* E epochs of T trials (T ≤ 12) on CUDA, the CPU reference ops and the per-trial path, compared after
 * every epoch. With use_graphs the CUDA group runs its first epoch directly and replays a recorded graph
 * from the second on: E ≥ 2 then, and the graph must have been recorded. */
static void compare_epochs(const fixture *f, const char *what, int T, const bl_tgroup_trial *cfg, int mode, int E) {
    ck_assert(T >= 1 && T <= 12);
    bl_tgroup *gc = make(f, T, cfg, mode, BL_NN_CUDA), *gr = make(f, T, cfg, mode, BL_NN_CPU_BATCHED);
    ref_trial r[12];
    for (int i = 0; i < T; i++) ck_assert_int_eq(ref_init(&r[i], f, &cfg[i], 64), 0);
    bl_error e;
    double worst = 0.0, worst_ref = 0.0;
    bl_bnet net;
    ck_assert_int_eq(bl_bnet_init(&net, &f->d, NULL, &e), BL_OK);
    for (int ep = 0; ep < E; ep++) {
        ck_assert_msg(bl_tgroup_epoch(gc, NULL, &e) == BL_OK, "cuda epoch: %s", e.message);
        ck_assert_msg(bl_tgroup_epoch(gr, NULL, &e) == BL_OK, "cpu epoch: %s", e.message);
        for (int i = 0; i < T; i++) {
            const double dev = group_dev(gc, gr, i, f);
            ck_assert_msg(dev <= TOL, "%s, mode %d, epoch %d, trial %d: CUDA vs CPU reference %.3g > %.0g", what, mode,
                          ep + 1, i, dev, TOL);
            worst = fmax(worst, dev);
            /* the per-trial path (pretrain.c's), for the trial's parameters and losses */
            ck_assert_int_eq(ref_epoch(&r[i], f, 64, mode), 0);
            bl_tgroup_stat st;
            bl_tgroup_stat_get(gc, i, &st);
            ck_assert_int_eq(bl_tgroup_get_params(gc, i, &net, 0, &e), BL_OK);
            double d2 = fmax(params_dev(&r[i].net, net.P.param), fmax(rel_dev(st.train_loss, r[i].last_train),
                                                                          rel_dev(st.val_loss, r[i].last_val)));
            ck_assert_msg(d2 <= TOL, "%s, mode %d, epoch %d, trial %d: CUDA vs per-trial %.3g > %.0g", what, mode,
                          ep + 1, i, d2, TOL);
            worst_ref = fmax(worst_ref, d2);
        }
    }
    ck_assert_msg(!use_graphs || bl_tgroup_graphs(gc),
                  "%s, mode %d: CUDA graphs requested but not recorded (the group fell back to direct launches; "
                  "test_graph_capture_ops says why)", what, mode);
    fprintf(stderr, "%s, masks mode %d, %d epoch%s of %d trial%s%s: CUDA vs CPU reference %.2e, vs per-trial %.2e\n",
            what, mode, E, E == 1 ? "" : "s", T, T == 1 ? "" : "s", bl_tgroup_graphs(gc) ? ", graph replayed" : "",
            worst, worst_ref);
    for (int i = 0; i < T; i++) ref_free(&r[i]);
    bl_bnet_free(&net);
    bl_tgroup_free(gc);
    bl_tgroup_free(gr);
}

/* One epoch of the 12 trials; with graphs two (the first runs directly, the second is recorded). */
static void one_epoch(const fixture *f, const char *what, int mode) {
    bl_tgroup_trial cfg[12];
    gpu_configs(cfg, 12, 1);
    compare_epochs(f, what, 12, cfg, mode, use_graphs ? 2 : 1);
}

START_TEST(test_one_epoch_synthetic) {
    fixture f;
    ck_assert_int_eq(fixture_synth(&f, 20, 3, 4), 0);
    for (int mode = 0; mode <= 2; mode++) one_epoch(&f, "synthetic", mode);
    fixture_free(&f);
}
END_TEST

START_TEST(test_one_epoch_c3o) {
    const char *dir = bl_test_c3o_dir();
    if (!dir) BL_TEST_SKIP("no C3O data (BELLAMY_DATA, or ../shared/datasets/c3o)");
    fixture f;
    char schema[4096];
    snprintf(schema, sizeof schema, "%s", bl_test_source_path("datasets/c3o/grep.schema"));
    ck_assert_int_eq(fixture_c3o(&f, dir, "grep", schema, 4), 0);
    one_epoch(&f, "C3O grep", 1);
    fixture_free(&f);
}
END_TEST

/* Trials stopped between epochs: the CUDA group moves slots on the device. */
static void halving(void) {
    fixture f;
    ck_assert_int_eq(fixture_synth(&f, 20, 3, 4), 0);
    const int T = 12;
    bl_tgroup_trial cfg[12];
    gpu_configs(cfg, T, 2);
    bl_tgroup *gc = make(&f, T, cfg, 1, BL_NN_CUDA), *gr = make(&f, T, cfg, 1, BL_NN_CPU_BATCHED);
    uint8_t alive[12];
    for (int i = 0; i < T; i++) alive[i] = 1;
    bl_error e;
    double worst = 0.0;
    for (int ep = 0; ep < 5; ep++) {
        if (ep == 2)
            for (int i = 0; i < T; i += 2) alive[i] = 0; /* even trials stop */
        if (ep == 4) alive[3] = alive[7] = 0;
        ck_assert_msg(bl_tgroup_epoch(gc, alive, &e) == BL_OK, "cuda: %s", e.message);
        ck_assert_msg(bl_tgroup_epoch(gr, alive, &e) == BL_OK, "cpu: %s", e.message);
        for (int i = 0; i < T; i++) {
            const double dev = group_dev(gc, gr, i, &f);
            ck_assert_msg(dev <= TOL, "epoch %d trial %d: %.3g", ep + 1, i, dev);
            worst = fmax(worst, dev);
        }
    }
    ck_assert_msg(!use_graphs || bl_tgroup_graphs(gc),
                  "trials stopped between epochs: CUDA graphs requested but not recorded (the group fell back to "
                  "direct launches; test_graph_capture_ops says why)");
    fprintf(stderr, "trials stopped between epochs, 5 epochs%s: CUDA vs CPU reference %.2e\n",
            use_graphs ? ", CUDA graphs" : "", worst);
    bl_tgroup_free(gc);
    bl_tgroup_free(gr);
    fixture_free(&f);
}

START_TEST(test_halving) { halving(); }
END_TEST

/* A group of one trial (one slot: every batched GEMM of batch 1), with and without dropout (the group
 * without dropout draws and uploads no masks), directly and with graphs. */
START_TEST(test_single_trial) {
    fixture f;
    ck_assert_int_eq(fixture_synth(&f, 20, 3, 4), 0);
    bl_tgroup_trial cfg[2];
    grid_configs(cfg, 2, 4);
    cfg[1].dropout = 0.0;
    for (int graphs = 0; graphs <= 1; graphs++) {
        use_graphs = graphs;
        compare_epochs(&f, graphs ? "synthetic, one trial, CUDA graphs" : "synthetic, one trial", 1, &cfg[0], 1, 3);
        compare_epochs(&f, graphs ? "synthetic, one trial without dropout, CUDA graphs"
                                  : "synthetic, one trial without dropout", 1, &cfg[1], 1, 3);
    }
    use_graphs = 0;
    fixture_free(&f);
}
END_TEST

/* Graph capture at the level of the ops (tgroup_ops.h's contract), with the reason when it fails: work
 * queued between capture_begin and capture_end is recorded, not run; each replay runs it once. Here a
 * GEMM that accumulates, C += A·B with A, B all ones (2×2·2×2): 0 after the capture, 2 after one replay,
 * 4 after two. */
START_TEST(test_graph_capture_ops) {
    const bl_tg_ops *o = bl_tg_ops_cuda();
    ck_assert_ptr_nonnull(o);
    ck_assert(o->capture_begin && o->capture_end && o->replay && o->capture_why);
    void *cx = NULL;
    bl_error e;
    ck_assert_msg(o->open(&cx, &e) == BL_OK, "open: %s", e.message);
    const double ones[4] = {1, 1, 1, 1};
    double *A = o->alloc(cx, sizeof ones), *C = o->alloc(cx, sizeof ones), got[4];
    ck_assert(A && C);
    o->put(cx, A, ones, sizeof ones);
    /* a direct GEMM first: cuBLAS and the module load outside the capture, as in a group */
    o->gemm(cx, 0, 0, 2, 2, 2, 1.0, A, 2, 4, A, 2, 4, 0.0, C, 2, 4, 1);
    ck_assert_msg(o->finish(cx, &e) == BL_OK, "direct GEMM: %s", e.message);
    const double zeros[4] = {0, 0, 0, 0};
    o->put(cx, C, zeros, sizeof zeros);
    ck_assert_msg(o->finish(cx, &e) == BL_OK, "reset: %s", e.message);
    const int began = o->capture_begin(cx);
    ck_assert_msg(began == 1, "capture_begin refused: %s", o->capture_why(cx));
    o->gemm(cx, 0, 0, 2, 2, 2, 1.0, A, 2, 4, A, 2, 4, 1.0, C, 2, 4, 1);
    const int ended = o->capture_end(cx);
    ck_assert_msg(ended == 1, "capture_end failed: %s", o->capture_why(cx));
    ck_assert_msg(o->finish(cx, &e) == BL_OK, "after capture: %s", e.message);
    o->get(cx, got, C, sizeof got);
    ck_assert_msg(o->finish(cx, &e) == BL_OK, "get: %s", e.message);
    for (int i = 0; i < 4; i++) ck_assert_double_eq(got[i], 0.0); /* recorded, not run */
    for (int k = 1; k <= 2; k++) {
        o->replay(cx);
        o->get(cx, got, C, sizeof got);
        ck_assert_msg(o->finish(cx, &e) == BL_OK, "replay %d: %s", k, e.message);
        for (int i = 0; i < 4; i++) ck_assert_double_eq(got[i], 2.0 * k);
    }
    ck_assert_str_eq(o->capture_why(cx), "");
    o->dfree(cx, A);
    o->dfree(cx, C);
    o->close(cx);
}
END_TEST

/* opts.graphs: epochs recorded as a CUDA graph and replayed (re-recorded when trials stop) give the
 * same results, and are really recorded (on an H200 with CUDA 13 nothing should make capture fail). */
START_TEST(test_graphs) {
    use_graphs = 1;
    fixture f;
    ck_assert_int_eq(fixture_synth(&f, 20, 3, 4), 0);
    one_epoch(&f, "synthetic, CUDA graphs", 1);
    fixture_free(&f);
    halving();
    use_graphs = 0;
}
END_TEST

/* A short search with successive halving, CUDA against the CPU reference. */
START_TEST(test_short_search) {
    fixture f;
    ck_assert_int_eq(fixture_synth(&f, 20, 3, 4), 0);
    const int T = 12;
    bl_tgroup_trial cfg[12];
    grid_configs(cfg, T, 1);
    bl_tgroup *gc = make(&f, T, cfg, 1, BL_NN_CUDA), *gr = make(&f, T, cfg, 1, BL_NN_CPU_BATCHED);
    bl_error e;
    const int wc = search_run(gc, 10, 3, 2, &e);
    ck_assert_msg(wc >= 0, "cuda search: %s", e.message);
    const int wr = search_run(gr, 10, 3, 2, &e);
    ck_assert_msg(wr >= 0, "cpu search: %s", e.message);
    ck_assert_int_eq(wc, wr);
    bl_bnet na, nb;
    ck_assert_int_eq(bl_bnet_init(&na, &f.d, NULL, &e), BL_OK);
    ck_assert_int_eq(bl_bnet_init(&nb, &f.d, NULL, &e), BL_OK);
    double wv = 0.0, wp = 0.0;
    for (int i = 0; i < T; i++) {
        bl_tgroup_stat sc, sr;
        bl_tgroup_stat_get(gc, i, &sc);
        bl_tgroup_stat_get(gr, i, &sr);
        ck_assert_int_eq(sc.epochs_done, sr.epochs_done);
        ck_assert_int_eq(bl_tgroup_get_best(gc, i, &na, &e), BL_OK);
        ck_assert_int_eq(bl_tgroup_get_best(gr, i, &nb, &e), BL_OK);
        const double dv = rel_dev(sc.best_val, sr.best_val), dp = params_dev(&nb, na.P.param);
        if (i == wc) ck_assert_msg(dv <= SEARCH_TOL && dp <= SEARCH_TOL, "winner %d: %.3g / %.3g", i, dv, dp);
        wv = fmax(wv, dv);
        wp = fmax(wp, dp);
    }
    fprintf(stderr, "short search (10 epochs, halving at 3 and 6): winner %d on both; largest deviation of a best "
            "validation loss %.2e, of best parameters %.2e (tolerance for the winner %.0g)\n", wc, wv, wp, SEARCH_TOL);
    bl_bnet_free(&na);
    bl_bnet_free(&nb);
    bl_tgroup_free(gc);
    bl_tgroup_free(gr);
    fixture_free(&f);
}
END_TEST

/* What a CUDA group trained saves and loads as any model does. */
START_TEST(test_model_file) {
    fixture f;
    ck_assert_int_eq(fixture_synth(&f, 8, 2, 2), 0);
    bl_tgroup_trial cfg[2];
    grid_configs(cfg, 2, 3);
    bl_tgroup *g = make(&f, 2, cfg, 1, BL_NN_CUDA);
    bl_error e;
    for (int ep = 0; ep < 3; ep++) ck_assert_int_eq(bl_tgroup_epoch(g, NULL, &e), BL_OK);
    bl_model *m;
    ck_assert_int_eq(bl_model_clone(f.m, &m, &e), BL_OK);
    ck_assert_int_eq(bl_tgroup_get_best(g, 1, &m->net, &e), BL_OK);
    char path[4200];
    snprintf(path, sizeof path, "%s/gpu-model.h5", bl_test_tmpdir());
    ck_assert_msg(bl_model_save(m, path, &e) == BL_OK, "save: %s", e.message);
    bl_model *back;
    ck_assert_msg(bl_model_load(path, NULL, &back, &e) == BL_OK, "load: %s", e.message);
    ck_assert_int_eq(back->net.P.n, m->net.P.n);
    ck_assert_int_eq(back->net.P.n_views, f.m->net.P.n_views);
    for (int v = 0; v < back->net.P.n_views; v++) {
        ck_assert_str_eq(back->net.P.views[v].name, f.m->net.P.views[v].name);
        ck_assert_int_eq(back->net.P.views[v].offset, f.m->net.P.views[v].offset);
    }
    ck_assert_mem_eq(back->net.P.param, m->net.P.param, m->net.P.n * sizeof(double));
    bl_model_free(back);
    bl_model_free(m);
    bl_tgroup_free(g);
    fixture_free(&f);
}
END_TEST

Suite *bl_test_suite(void) {
    /* CUDA does not survive fork(): once this process has touched the driver (the check below), a
     * forked child cannot use it. So the tests run in this process. */
    setenv("CK_FORK", "no", 1);
    bl_error err;
    if (bl_cuda_available(&err)) bl_test_skip_all(err.message);
    Suite *s = suite_create("gpu");
    TCase *tc = tcase_create("cuda");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_one_epoch_synthetic);
    tcase_add_test(tc, test_one_epoch_c3o);
    tcase_add_test(tc, test_halving);
    tcase_add_test(tc, test_single_trial);
    tcase_add_test(tc, test_graph_capture_ops);
    tcase_add_test(tc, test_graphs);
    tcase_add_test(tc, test_short_search);
    tcase_add_test(tc, test_model_file);
    suite_add_tcase(s, tc);
    return s;
}
