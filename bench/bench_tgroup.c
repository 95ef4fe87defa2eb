/* bench_tgroup.c — one pre-training search (the default 12 trials, successive halving) on the per-trial
 * kernels (BL_DEVICE_CPU) or on the batched trial group (BL_DEVICE_CPU_BATCHED: every trial at once,
 * its GEMMs through bl_gemm_blas), one thread either way, so that the two can be timed against each
 * other from outside (A B A B); --device cuda runs the same search on the GPU (the CUDA module). Prints
 * the search's wall time and its winner (the same halving decisions: with BELLAMY_CPU=generic cpu and
 * batched agree to rounding; the optimised copies' rounding can tip a close halving decision).
 *
 *   bench_tgroup DATA SCHEMA [--device cpu|batched|cuda] [--epochs N] [--grace N] [--trials N]
 *
 * Epochs and grace default to the library's (2500, 1000). Asserts nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench/bench_args.h"
#include "model/model.h"

#define USAGE "DATA SCHEMA [--device cpu|batched|cuda] [--epochs N] [--grace N] [--trials N]"

static double wall(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv) {
    /* OpenBLAS reads its thread count when it loads: one thread, as the per-trial path has */
    if (!getenv("OPENBLAS_NUM_THREADS") && setenv("OPENBLAS_NUM_THREADS", "1", 1) == 0)
        execv("/proc/self/exe", argv); /* on failure, carry on as we are */
    int done = bench_args(argc, argv, "bench_tgroup", USAGE);
    if (done >= 0) return done;
    bl_pretrain_opts o;
    bl_pretrain_opts_default(&o);
    o.members = 1;   /* one search: the ensemble's other members repeat it with other seeds */
    o.calibrate = 0; /* the calibration fine-tunes; it is not the search */
    o.threads = 1;
    o.precision = BL_PRECISION_F64; /* the trial groups compute in float64: every device alike */
    const char *paths[2] = {NULL, NULL};
    int n_paths = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--device") == 0 && i + 1 < argc) {
            const char *d = argv[++i];
            if (strcmp(d, "cpu") == 0) o.device = BL_DEVICE_CPU;
            else if (strcmp(d, "batched") == 0) o.device = BL_DEVICE_CPU_BATCHED;
            else if (strcmp(d, "cuda") == 0) o.device = BL_DEVICE_CUDA;
            else return fprintf(stderr, "bench_tgroup: --device cpu|batched|cuda, not '%s'\n", d), 2;
        } else if (strcmp(argv[i], "--epochs") == 0 && i + 1 < argc) o.epochs = atol(argv[++i]);
        else if (strcmp(argv[i], "--grace") == 0 && i + 1 < argc) o.grace = atol(argv[++i]);
        else if (strcmp(argv[i], "--trials") == 0 && i + 1 < argc) o.trials = atoi(argv[++i]);
        else if (argv[i][0] != '-' && n_paths < 2) paths[n_paths++] = argv[i];
        else return fprintf(stderr, "bench_tgroup: unknown argument '%s'\nusage: bench_tgroup %s\n", argv[i], USAGE), 2;
    }
    if (n_paths != 2) return fprintf(stderr, "usage: bench_tgroup %s\n", USAGE), 2;
    bl_dataset *ds;
    bl_error err;
    if (bl_dataset_load(paths[0], paths[1], 0, NULL, &ds, &err))
        return fprintf(stderr, "bench_tgroup: %s\n", err.message), 1;
    bl_model *m;
    const double t0 = wall();
    if (bl_pretrain(ds, NULL, &o, &m, &err)) {
        fprintf(stderr, "bench_tgroup: %s\n", err.message);
        bl_dataset_free(ds);
        return 1;
    }
    const double t = wall() - t0;
    const char *dev = o.device == BL_DEVICE_CPU ? "cpu" : o.device == BL_DEVICE_CUDA ? "cuda" : "batched";
    printf("%s: %zu rows, %d trials, %ld epochs (grace %ld), device %s, kernels %s: %.3f s; winner dropout %g "
           "lr %g wd %g epochs %lld val loss %.9g\n",
           paths[0], ds->n_rows, o.trials, o.epochs, o.grace, dev, bl_cpu_kernels(), t, m->dropout, m->lr,
           m->weight_decay, (long long)m->epochs, m->best_val_loss);
    bl_model_free(m);
    bl_dataset_free(ds);
    return 0;
}
