/* bench_pretrain_gpu.c — pre-training speed of the hyper-parameter search's 12 trials on the C3O data,
 * through bl_pretrain on each device: per trial on the CPU (BL_DEVICE_CPU, one thread), as one
 * CPU-batched trial group (BL_DEVICE_CPU_BATCHED), and as one CUDA trial group (BL_DEVICE_CUDA, graphs
 * as pre-training uses them); the speed-up, and a short successive-halving search on the GPU against
 * one trial on the CPU (the target). Timing only: CUDA's deviation from the CPU is test_gpu's.
 *
 *   bench_pretrain_gpu [DATA_DIR] [--epochs E] [--algorithms grep,sort] [--threads N]
 *                      [--search-epochs S] [--dropout-masks row|value|hybrid] [--synthetic]
 *   bench_pretrain_gpu --probe
 *
 * --probe: only asks the library whether a GPU is usable (bl_cuda_available) and prints the answer;
 * exit status 0 usable, 77 not, with the reason (no CUDA module, a module that does not load — a missing
 * libcudart, say — or no device); tools/gpu-check's probe: any other status means it crashed.
 * --threads: threads of the batched groups (default 4); the per-trial CPU path always runs on one.
 *
 * DATA_DIR defaults to $BELLAMY_DATA or ../shared/datasets/c3o; schemas come from datasets/c3o/. Where
 * that folder does not exist (or with --synthetic) the table has one row, the synthetic corpus
 * (src/data/synth.h: 60 contexts × 6 scale-outs × 3 repetitions, 1080 rows), so the GPU can be measured
 * without the data.
 * Times are per epoch of all 12 trials (validation loss included): a search of 2 + E epochs less one of
 * 2 (grace = epochs, so no trial stops), divided by E — start-up (views, CUDA context, cuBLAS, the
 * graph's recording) is left out. The search runs S epochs (grace S·0.4, reduction 2: the default
 * schedule 2500/1000 scaled) on the GPU; "1 trial" is one trial of S epochs on one CPU thread.
 * Prints figures; asserts nothing.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "bench/bench_args.h"
#include "data/synth.h"
#include "model/model.h"
#include "nn/cuda/cuda.h"
#include "nn/gemm.h"

#define TRIALS 12
#define USAGE                                                                                              \
    "[DATA_DIR] [--epochs E] [--algorithms a,b] [--threads N] [--search-epochs S] "                          \
    "[--dropout-masks row|value|hybrid] [--synthetic] | --probe"

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Wall seconds of one search of `trials` trials on `device`; NAN on an error (printed). */
static double search_s(const bl_dataset *ds, const bl_pretrain_opts *base, int device, int threads, int trials,
                       long epochs, long grace) {
    bl_pretrain_opts o = *base;
    o.device = device;
    o.threads = threads;
    o.trials = trials;
    o.epochs = epochs;
    o.grace = grace;
    bl_model *m = NULL;
    bl_error e;
    const double t0 = now();
    if (bl_pretrain(ds, NULL, &o, &m, &e) != BL_OK) {
        fprintf(stderr, "bench_pretrain_gpu: %s search: %s\n",
                device == BL_DEVICE_CUDA ? "cuda" : device == BL_DEVICE_CPU ? "cpu" : "batched", e.message);
        return NAN;
    }
    const double t = now() - t0;
    bl_model_free(m);
    return t;
}

/* Seconds per epoch of all TRIALS trials, start-up left out. */
static double per_epoch_s(const bl_dataset *ds, const bl_pretrain_opts *base, int device, int threads, long E) {
    const double a = search_s(ds, base, device, threads, TRIALS, 2, 2);
    const double b = isfinite(a) ? search_s(ds, base, device, threads, TRIALS, 2 + E, 2 + E) : NAN;
    return (b - a) / (double)E;
}

static void fmt_ms(char *buf, size_t n, double s) {
    if (!isfinite(s)) snprintf(buf, n, "-");
    else if (s < 0.01) snprintf(buf, n, "%.2f ms", 1e3 * s);
    else if (s < 1.0) snprintf(buf, n, "%.1f ms", 1e3 * s);
    else snprintf(buf, n, "%.2f s", s);
}

int main(int argc, char **argv) {
    int done = bench_args(argc, argv, "bench_pretrain_gpu", USAGE);
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
            fprintf(stderr, "usage: bench_pretrain_gpu %s\n", USAGE);
            return 2;
        } else dir = argv[i];
    }
    if (E < 1 || S < 1 || threads < 1 || E > BL_TRAIN_EPOCHS_MAX - 2 || S > BL_TRAIN_EPOCHS_MAX ||
        threads > BL_TRAIN_THREADS_MAX) {
        fprintf(stderr, "bench_pretrain_gpu: epochs 1..%ld, search epochs 1..%ld, threads 1..%d\n",
                BL_TRAIN_EPOCHS_MAX - 2, BL_TRAIN_EPOCHS_MAX, BL_TRAIN_THREADS_MAX);
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
    bl_pretrain_opts base; /* the library's search, one member, no calibration (it fine-tunes) */
    bl_pretrain_opts_default(&base);
    base.members = 1;
    base.calibrate = 0;
    base.per_row_dropout = mode;
    base.precision = BL_PRECISION_F64; /* the trial groups compute in float64: the CPU alike, to compare */
    printf("Pre-training in float64, %d trials of the default grid, batch %d, %s masks, %ld epochs timed, batched threads %d\n",
           TRIALS, base.batch, mode == 1 ? "per-row" : mode == 0 ? "per-value" : "hybrid", E, threads);
    if (!have_cuda) printf("CUDA: %s\n", err.message);
    printf("%-9s %6s %11s %11s %11s %11s %8s %9s %11s %11s\n", "algorithm", "rows", "CPU 1 tr", "CPU 12 tr",
           "CPU batch", "CUDA 12 tr", "speed-up", "CUDA/1tr", "search GPU", "1 trial CPU");
    char list[256];
    snprintf(list, sizeof list, "%s", algos);
    int status = 0;
    for (char *a = strtok(list, ","); a; a = strtok(NULL, ",")) {
        char data[4200], schema[512];
        snprintf(data, sizeof data, "%s/%s.tsv", dir, a);
        snprintf(schema, sizeof schema, "datasets/c3o/%s.schema", a);
        bl_dataset *ds = NULL;
        if (synthetic) {
            bl_synth_config sc;
            bl_synth_config_default(&sc);
            sc.n_contexts = 60;
            bl_synth_corpus *corp;
            if (bl_synth_generate(&sc, &corp, &err)) {
                fprintf(stderr, "bench_pretrain_gpu: synthetic corpus: %s\n", err.message);
                return 1;
            }
            bl_status st = bl_synth_dataset(corp, NULL, &ds, &err);
            bl_synth_free(corp);
            if (st) {
                fprintf(stderr, "bench_pretrain_gpu: synthetic corpus: %s\n", err.message);
                return 1;
            }
        } else if (bl_dataset_load(data, schema, 0, NULL, &ds, &err)) {
            fprintf(stderr, "bench_pretrain_gpu: %s\n", err.message);
            return 1;
        }
        const double cpu12 = per_epoch_s(ds, &base, BL_DEVICE_CPU, 1, E), cpu1 = cpu12 / TRIALS;
        const double batch = per_epoch_s(ds, &base, BL_DEVICE_CPU_BATCHED, threads, E);
        double cuda = NAN, search = NAN, trial1 = NAN;
        if (have_cuda) {
            cuda = per_epoch_s(ds, &base, BL_DEVICE_CUDA, threads, E);
            const long grace = (long)(0.4 * (double)S) > 0 ? (long)(0.4 * (double)S) : 1;
            search = search_s(ds, &base, BL_DEVICE_CUDA, threads, TRIALS, S, grace);
            trial1 = search_s(ds, &base, BL_DEVICE_CPU, 1, 1, S, S);
            if (!isfinite(cuda) || !isfinite(search)) status = 1;
        }
        if (!isfinite(cpu12) || !isfinite(batch) || (have_cuda && !isfinite(trial1))) status = 1;
        char rows[32], c1[32], c12[32], cb[32], cu[32], sg[32], st1[32], su[32], rel[32];
        snprintf(rows, sizeof rows, "%zu", ds->n_rows);
        fmt_ms(c1, sizeof c1, cpu1);
        fmt_ms(c12, sizeof c12, cpu12);
        fmt_ms(cb, sizeof cb, batch);
        fmt_ms(cu, sizeof cu, cuda);
        fmt_ms(sg, sizeof sg, search);
        fmt_ms(st1, sizeof st1, trial1);
        snprintf(su, sizeof su, isfinite(cuda) ? "%.1fx" : "-", cpu12 / cuda);
        snprintf(rel, sizeof rel, isfinite(cuda) ? "%.2fx" : "-", cuda / cpu1);
        printf("%-9s %6s %11s %11s %11s %11s %8s %9s %11s %11s\n", a, rows, c1, c12, cb, cu, su, rel, sg, st1);
        fflush(stdout);
        bl_dataset_free(ds);
    }
    printf("per epoch of %d trials; speed-up = CPU 12 trials / CUDA; CUDA/1tr = CUDA 12 trials / CPU 1 trial "
           "(target: <= 1);\nsearch GPU = %ld-epoch search (grace %ld, reduction 2) of %d trials on the GPU; "
           "1 trial CPU = %ld epochs of one trial (target: search GPU <= 1 trial CPU)\n",
           TRIALS, S, (long)(0.4 * (double)S), TRIALS, S);
    return status;
}
