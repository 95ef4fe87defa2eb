/* bench_pretrain_gpu.c — pre-training speed of the hyper-parameter search's 12 trials on the C3O data:
 * per trial on the CPU (pretrain.c's path, one thread), as one CPU-batched trial group (the reference
 * ops), and as one CUDA trial group; the speed-up, the deviation between CUDA and the CPU, and a short
 * successive-halving search on the GPU against one trial on the CPU (the target).
 *
 *   bench_pretrain_gpu [DATA_DIR] [--epochs E] [--algorithms grep,sort] [--threads N]
 *                      [--search-epochs S] [--dropout-masks row|value|hybrid] [--synthetic]
 *   bench_pretrain_gpu --probe
 *
 * --probe: only asks the library whether a GPU is usable (bl_cuda_available) and prints the answer;
 * exit status 0 usable, 77 not, with the reason (no CUDA module, a module that does not load — a missing
 * libcudart, say — or no device); tools/gpu-check's probe: any other status means it crashed.
 * --threads: host threads drawing the groups' shuffles and masks (default 4); the per-trial CPU path
 * always runs on one thread.
 *
 * DATA_DIR defaults to $BELLAMY_DATA or ../shared/datasets/c3o; schemas come from datasets/c3o/. Where
 * that folder does not exist (or with --synthetic) the table has one row, the synthetic corpus
 * (src/data/synth.h: 60 contexts × 6 scale-outs × 3 repetitions, 1080 rows), so the GPU can be measured
 * without the data.
 * Times are per epoch of all 12 trials (validation loss included); CUDA excludes its first epoch
 * (context and cuBLAS start-up), CUDA graph its first two (direct, then recorded). Deviations: largest relative deviation (per parameter block) of any
 * trial's parameters, CUDA against the CPU-batched group, after 1 and after E epochs. The search runs
 * S epochs (grace S·0.4, reduction 2: the default schedule 2500/1000 scaled) on the GPU; "1 trial" is
 * pretrain.c's path for S epochs on one CPU thread. Prints figures; asserts nothing.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "bench/bench_args.h"
#include "nn/cuda/cuda.h"
#include "nn/gemm.h"
#include "tests/tgroup_fixture.h" /* views, grid configurations, pretrain.c's per-trial epoch, deviations */

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int use_graphs;

static bl_tgroup *group(const fixture *f, const bl_tgroup_trial *cfg, int T, int device, int mode, int threads) {
    bl_tgroup_opts o;
    bl_tgroup_opts_default(&o);
    o.graphs = use_graphs;
    o.device = device;
    o.per_row_dropout = mode;
    o.threads = threads;
    bl_tgroup *g = NULL;
    bl_error e;
    if (bl_tgroup_new(&f->d, &f->tr.v, &f->va.v, T, cfg, &o, &g, &e)) {
        fprintf(stderr, "bench_pretrain_gpu: %s group: %s\n", device ? "cuda" : "cpu", e.message);
        return NULL;
    }
    return g;
}

static int epochs(bl_tgroup *g, long n) {
    bl_error e;
    for (long i = 0; i < n; i++)
        if (bl_tgroup_epoch(g, NULL, &e)) {
            fprintf(stderr, "bench_pretrain_gpu: %s epoch: %s\n", bl_tgroup_device_name(g), e.message);
            return 1;
        }
    return 0;
}

/* Largest parameter deviation of any trial, a against b. */
static double max_dev(bl_tgroup *a, bl_tgroup *b, const fixture *f) {
    bl_bnet na, nb;
    bl_error e;
    double worst = 0.0;
    if (bl_bnet_init(&na, &f->d, NULL, &e) || bl_bnet_init(&nb, &f->d, NULL, &e)) return NAN;
    for (int i = 0; i < bl_tgroup_trials(a); i++) {
        if (bl_tgroup_get_params(a, i, &na, 0, &e) || bl_tgroup_get_params(b, i, &nb, 0, &e)) worst = NAN;
        else worst = fmax(worst, params_dev(&nb, na.P.param));
    }
    bl_bnet_free(&na);
    bl_bnet_free(&nb);
    return worst;
}

static void fmt_ms(char *buf, size_t n, double s) {
    if (!isfinite(s)) snprintf(buf, n, "-");
    else if (s < 0.01) snprintf(buf, n, "%.2f ms", 1e3 * s);
    else if (s < 1.0) snprintf(buf, n, "%.1f ms", 1e3 * s);
    else snprintf(buf, n, "%.2f s", s);
}

int main(int argc, char **argv) {
    int done = bench_args(argc, argv, "bench_pretrain_gpu",
                          "[DATA_DIR] [--epochs E] [--algorithms a,b] [--threads N] [--search-epochs S] "
                          "[--dropout-masks row|value|hybrid] [--synthetic] | --probe");
    if (done >= 0) return done;
    const char *dir = getenv("BELLAMY_DATA");
    char dbuf[4096];
    long E = 10, S = 250;
    int threads = 4, mode = 1, synthetic = 0;
    const char *algos = "grep,kmeans,pagerank,sgd,sort";
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--probe") == 0) {
            bl_error e;
            if (bl_cuda_available(&e) != BL_OK) {
                printf("%s\n", e.message);
                return 77;
            }
            printf("a CUDA device is usable\n");
            return 0;
        }
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--epochs") == 0 && i + 1 < argc) E = atol(argv[++i]);
        else if (strcmp(argv[i], "--search-epochs") == 0 && i + 1 < argc) S = atol(argv[++i]);
        else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) threads = atoi(argv[++i]);
        else if (strcmp(argv[i], "--algorithms") == 0 && i + 1 < argc) algos = argv[++i];
        else if (strcmp(argv[i], "--synthetic") == 0) synthetic = 1;
        else if (strcmp(argv[i], "--dropout-masks") == 0 && i + 1 < argc) {
            const char *v = argv[++i];
            mode = strcmp(v, "value") == 0 ? 0 : strcmp(v, "row") == 0 ? 1 : strcmp(v, "hybrid") == 0 ? 2 : -1;
            if (mode < 0) {
                fprintf(stderr, "bench_pretrain_gpu: --dropout-masks row|value|hybrid\n");
                return 2;
            }
        } else if (argv[i][0] == '-') {
            fprintf(stderr, "usage: bench_pretrain_gpu [DATA_DIR] [--epochs E] [--algorithms a,b] [--threads N] "
                            "[--search-epochs S] [--dropout-masks row|value|hybrid] [--synthetic] | --probe\n");
            return 2;
        } else dir = argv[i];
    }
    if (E < 1 || S < 1 || threads < 1) {
        fprintf(stderr, "bench_pretrain_gpu: epochs, search epochs and threads must be positive\n");
        return 2;
    }
    if (!dir) dir = "../shared/datasets/c3o";
    else if (strlen(dir) < 4 || strcmp(dir + strlen(dir) - 4, "/c3o") != 0) {
        snprintf(dbuf, sizeof dbuf, "%s/c3o", dir);
        FILE *fp = fopen(dbuf, "r");
        if (fp) {
            fclose(fp);
            dir = dbuf;
        }
    }
    struct stat sb;
    if (!synthetic && (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode))) {
        printf("no C3O data at %s (set BELLAMY_DATA); measuring the synthetic corpus instead\n", dir);
        synthetic = 1;
    }
    if (synthetic) algos = "synthetic";
    bl_blas_set_threads(1);
    printf("CPU kernels: %s (processor: %s)\n", bl_cpu_kernels(), bl_cpu_kernels_available());
    bl_error err;
    const int have_cuda = bl_cuda_available(&err) == BL_OK;
    const int T = 12;
    printf("Pre-training, %d trials of the default grid, batch 64, %s masks, %ld epochs timed, host threads %d\n", T,
           mode == 1 ? "per-row" : mode == 0 ? "per-value" : "hybrid", E, threads);
    if (!have_cuda) printf("CUDA: %s\n", err.message);
    printf("%-9s %9s %11s %11s %11s %11s %11s %8s %9s %10s %10s %11s %11s\n", "algorithm", "rows", "CPU 1 tr",
           "CPU 12 tr", "CPU batch", "CUDA 12 tr", "CUDA graph", "speed-up", "CUDA/1tr", "dev 1 ep", "dev E ep",
           "search GPU", "1 trial CPU");
    char list[256];
    snprintf(list, sizeof list, "%s", algos);
    int status = 0;
    for (char *a = strtok(list, ","); a; a = strtok(NULL, ",")) {
        char data[4200], schema[512];
        snprintf(data, sizeof data, "%s/%s.tsv", dir, a);
        snprintf(schema, sizeof schema, "datasets/c3o/%s.schema", a);
        fixture f;
        memset(&f, 0, sizeof f);
        if (synthetic) {
            bl_synth_config sc;
            bl_synth_config_default(&sc);
            sc.n_contexts = 60;
            bl_synth_corpus *corp;
            if (bl_synth_generate(&sc, &corp, &err) || bl_synth_dataset(corp, NULL, &f.ds, &err)) {
                fprintf(stderr, "bench_pretrain_gpu: synthetic corpus: %s\n", err.message);
                return 1;
            }
            bl_synth_free(corp);
        } else if (bl_dataset_load(data, schema, 0, NULL, &f.ds, &err)) {
            fprintf(stderr, "bench_pretrain_gpu: %s\n", err.message);
            return 1;
        }
        /* a fifth of the contexts validate, as pretrain's default share */
        size_t n_val = (size_t)llround(0.2 * (double)f.ds->n_contexts);
        if (n_val < 1) n_val = 1;
        if (fixture_views(&f, n_val, &err)) {
            fprintf(stderr, "bench_pretrain_gpu: %s: %s\n", a, err.message);
            return 1;
        }
        bl_tgroup_trial cfg[12];
        grid_configs(cfg, T, 1);

        /* CPU, per trial (pretrain.c's path), one thread */
        ref_trial r;
        double t0 = now();
        for (int i = 0; i < T; i++) {
            if (ref_init(&r, &f, &cfg[i], 64)) return 1;
            for (long ep = 0; ep < E; ep++)
                if (ref_epoch(&r, &f, 64, mode)) return 1;
            ref_free(&r);
        }
        const double cpu12 = (now() - t0) / (double)E, cpu1 = cpu12 / T;

        /* CPU-batched reference ops: 1 epoch, then E − 1 more */
        bl_tgroup *gr = group(&f, cfg, T, BL_NN_CPU_BATCHED, mode, threads), *gc = NULL;
        if (!gr) return 1;
        t0 = now();
        if (epochs(gr, 1)) return 1;
        const double t_r1 = now() - t0;
        double batch = NAN, cuda = NAN, graph = NAN, dev1 = NAN, devE = NAN, search = NAN, trial1 = NAN;
        if (have_cuda) {
            if (!(gc = group(&f, cfg, T, BL_NN_CUDA, mode, threads)) || epochs(gc, 1)) {
                status = 1;
            } else {
                dev1 = max_dev(gc, gr, &f);
                t0 = now();
                if (epochs(gc, E)) status = 1;
                cuda = (now() - t0) / (double)E;
            }
        }
        if (have_cuda && !status) {
            /* the same with the epoch recorded once as a CUDA graph and replayed: the group's first epoch
             * runs directly, the second records the graph */
            use_graphs = 1;
            bl_tgroup *gg = group(&f, cfg, T, BL_NN_CUDA, mode, threads);
            use_graphs = 0;
            if (!gg || epochs(gg, 2)) {
                status = 1;
            } else if (bl_tgroup_graphs(gg)) {
                t0 = now();
                if (epochs(gg, E)) status = 1;
                graph = (now() - t0) / (double)E;
            } else {
                printf("%s: CUDA graph recording failed; direct launches only\n", a);
            }
            bl_tgroup_free(gg);
        }
        t0 = now();
        if (epochs(gr, E - 1)) return 1;
        batch = (t_r1 + now() - t0) / (double)E;
        if (gc && !status) {
            /* compare at E epochs: rebuild CUDA from scratch, E epochs */
            bl_tgroup_free(gc);
            if (!(gc = group(&f, cfg, T, BL_NN_CUDA, mode, threads)) || epochs(gc, E)) status = 1;
            else devE = max_dev(gc, gr, &f);
            bl_tgroup_free(gc);
            gc = NULL;
            /* the target: a whole search on the GPU (graphs if they were faster) against one trial on the CPU */
            use_graphs = isfinite(graph) && graph < cuda;
            gc = status ? NULL : group(&f, cfg, T, BL_NN_CUDA, mode, threads);
            use_graphs = 0;
            if (gc) {
                t0 = now();
                if (search_run(gc, S, (long)(0.4 * (double)S) > 0 ? (long)(0.4 * (double)S) : 1, 2, &err) < 0) {
                    fprintf(stderr, "bench_pretrain_gpu: search: %s\n", err.message);
                    status = 1;
                }
                search = now() - t0;
                bl_tgroup_free(gc);
                gc = NULL;
                t0 = now();
                if (ref_init(&r, &f, &cfg[0], 64)) return 1;
                for (long ep = 0; ep < S; ep++)
                    if (ref_epoch(&r, &f, 64, mode)) return 1;
                ref_free(&r);
                trial1 = now() - t0;
            }
        }
        bl_tgroup_free(gc);
        bl_tgroup_free(gr);
        char rows[32], c1[32], c12[32], cb[32], cu[32], cg[32], sg[32], st1[32], su[32], rel[32];
        snprintf(rows, sizeof rows, "%zu/%zu", f.tr.v.n_rows, f.va.v.n_rows);
        fmt_ms(c1, sizeof c1, cpu1);
        fmt_ms(c12, sizeof c12, cpu12);
        fmt_ms(cb, sizeof cb, batch);
        fmt_ms(cu, sizeof cu, cuda);
        fmt_ms(cg, sizeof cg, graph);
        const double best_gpu = isfinite(graph) && graph < cuda ? graph : cuda;
        fmt_ms(sg, sizeof sg, search);
        fmt_ms(st1, sizeof st1, trial1);
        snprintf(su, sizeof su, isfinite(best_gpu) ? "%.1fx" : "-", cpu12 / best_gpu);
        snprintf(rel, sizeof rel, isfinite(best_gpu) ? "%.2fx" : "-", best_gpu / cpu1);
        char d1[32], dE[32];
        snprintf(d1, sizeof d1, isfinite(dev1) ? "%.1e" : "-", dev1);
        snprintf(dE, sizeof dE, isfinite(devE) ? "%.1e" : "-", devE);
        printf("%-9s %9s %11s %11s %11s %11s %11s %8s %9s %10s %10s %11s %11s\n", a, rows, c1, c12, cb, cu, cg, su, rel,
               d1, dE, sg, st1);
        fflush(stdout);
        fixture_free(&f);
    }
    printf("CUDA graph = CUDA with opts.graphs (epoch recorded once, replayed); speed-up = CPU 12 trials / the faster "
           "CUDA;\nCUDA/1tr = the faster CUDA 12 trials / CPU 1 trial (target: <= 1); dev = CUDA (direct) vs CPU batch;\n"
           "search GPU = %ld-epoch search (grace %ld, reduction 2) of %d trials on the GPU; 1 trial CPU = %ld epochs of one "
           "trial (target: search GPU <= 1 trial CPU)\n", S, (long)(0.4 * (double)S), T, S);
    return status;
}
