/* bench_nn.c — throughput of the engine on networks the size of Bellamy's, single thread.
 *
 * Part 1: time per GEMM call for the shapes those networks issue (forward X·Wᵀ, backward dY·W and
 *         dYᵀ·X), portable reference vs the direct small kernel vs OpenBLAS; this is the measurement
 *         behind BL_GEMM_SMALL_FLOPS (gemm.h).
 * Part 2: samples/s of one training step (forward + backward + Adam) at batch 64 of a Bellamy-sized
 *         model: an auto-encoder 40→8→4→8→40 (SELU) run on the 5 property vectors of each sample,
 *         and a runtime net (3 + 5·4)→16→8→1 (SELU, AlphaDropout) on the concatenation; losses
 *         SmoothL1 (runtime) + MSE (reconstruction). Backends: cpu (size dispatch), cpu forced to
 *         OpenBLAS, ref.
 * Every figure is the median of several timed runs. Usage: bench_nn [scale] (default 1; the run
 * takes a few seconds; larger scale = longer, steadier runs).
 * Not here: correctness (tests/test_nn.c), multi-threading. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nn/nn.h"

#define REPS 7

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static void die(const char *what, const bl_error *err) {
    fprintf(stderr, "bench_nn: %s: %s\n", what, err->message);
    exit(1);
}

/* ---- part 1: GEMM ---- */

/* Median ns per call of kernel f on one shape. */
static double time_gemm(bl_gemm_fn f, int tA, int tB, int M, int N, int K, double scale) {
    int lda = tA ? M : K, ldb = tB ? K : N;
    size_t na = (size_t)M * K, nb = (size_t)K * N, nc = (size_t)M * N;
    double *A = malloc(na * sizeof *A), *B = malloc(nb * sizeof *B), *C = calloc(nc, sizeof *C);
    bl_rng r;
    bl_rng_seed(&r, 1);
    for (size_t i = 0; i < na; i++) A[i] = bl_rng_normal(&r);
    for (size_t i = 0; i < nb; i++) B[i] = bl_rng_normal(&r);
    /* Aim at ~5 ms per timed run (the whole default run stays well under 10 s). */
    double flops = 2.0 * M * N * K;
    long iters = (long)(scale * 5e6 / (flops + 2000.0)) + 1;
    double t[REPS];
    for (int rep = 0; rep < REPS; rep++) {
        double t0 = now();
        for (long it = 0; it < iters; it++) f(tA, tB, M, N, K, 1.0, A, lda, B, ldb, 1.0, C, N);
        t[rep] = (now() - t0) / (double)iters * 1e9;
    }
    free(A), free(B), free(C);
    return median(t, REPS);
}

static void bench_gemm(double scale) {
    static const struct { int tA, tB, M, N, K; const char *what; } shapes[] = {
        {0, 1, 1, 16, 3, "1 row, fc1 forward"},
        {0, 0, 1, 3, 16, "1 row, fc1 dX"},
        {0, 1, 5, 8, 4, "5 rows, 4->8"},
        {0, 1, 64, 16, 3, "runtime fc1 forward"},
        {1, 0, 16, 3, 64, "runtime fc1 dW"},
        {0, 1, 64, 8, 16, "runtime fc2 forward"},
        {0, 0, 64, 16, 8, "runtime fc2 dX"},
        {1, 0, 8, 16, 64, "runtime fc2 dW"},
        {0, 1, 320, 8, 40, "encoder fc1 forward"},
        {1, 0, 8, 40, 320, "encoder fc1 dW"},
        {0, 1, 320, 40, 8, "decoder fc2 forward"},
        {0, 0, 320, 8, 40, "decoder fc2 dX"},
        {1, 0, 40, 8, 320, "decoder fc2 dW"},
        {0, 1, 64, 1, 8, "runtime fc3 forward"},
        {1, 0, 1, 8, 64, "runtime fc3 dW"},
        {0, 0, 64, 8, 1, "runtime fc3 dX"},
        {0, 1, 320, 4, 8, "encoder fc2 forward"},
        {0, 0, 320, 4, 8, "decoder fc1 dX"},
        {0, 1, 64, 64, 64, "64^3"},
        {0, 0, 64, 64, 64, "64^3 NN"},
        {0, 1, 128, 128, 128, "128^3"},
        {0, 0, 256, 256, 256, "256^3"},
    };
    printf("GEMM, ns per call (median of %d), single thread\n", REPS);
    printf("%-22s %-3s %5s %5s %5s %10s %10s %10s %8s %s\n", "shape", "op", "M", "N", "K", "ref", "small",
           "openblas", "best", "cpu uses");
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        const int tA = shapes[s].tA, tB = shapes[s].tB, M = shapes[s].M, N = shapes[s].N, K = shapes[s].K;
        double tr = time_gemm(bl_gemm_ref, tA, tB, M, N, K, scale);
        double ts = time_gemm(bl_gemm_small, tA, tB, M, N, K, scale);
        double tb = time_gemm(bl_gemm_blas, tA, tB, M, N, K, scale);
        const char *best = ts <= tb ? (ts <= tr ? "small" : "ref") : (tb <= tr ? "openblas" : "ref");
        int uses_small = (long long)M * N * K <= BL_GEMM_SMALL_FLOPS;
        printf("%-22s %c%c  %5d %5d %5d %10.0f %10.0f %10.0f %8s %s\n", shapes[s].what, tA ? 'T' : 'N',
               tB ? 'T' : 'N', M, N, K, tr, ts, tb, best, uses_small ? "small" : "openblas");
    }
}

/* ---- part 2: a Bellamy-sized training step ---- */

enum { BATCH = 64, NPROP = 5, PROPW = 40, CODE = 4, NESS = 3, RIN = NESS + NPROP * CODE };

typedef struct model {
    bl_params p;
    bl_mlp enc, dec, run;
    bl_adam opt;
    bl_rng rng;
    double *X, *P, *T;            /* inputs: essentials [B×3], properties [B·5×40], targets [B] */
    double *cat, *dcat, *dcode;   /* runtime input [B×23], its gradient, code gradient [B·5×4] */
    double *gout, *grec;          /* loss gradients */
} model;

static void model_init(model *m) {
    bl_error err;
    const int es[3] = {PROPW, 8, CODE}, ds[3] = {CODE, 8, PROPW}, rs[4] = {RIN, 16, 8, 1};
    const bl_act ea[2] = {BL_ACT_SELU, BL_ACT_SELU}, da[2] = {BL_ACT_SELU, BL_ACT_IDENTITY};
    const bl_act ra[3] = {BL_ACT_SELU, BL_ACT_SELU, BL_ACT_IDENTITY};
    const double rd[3] = {0.1, 0.1, 0.0};
    memset(m, 0, sizeof *m);
    if (bl_params_init(&m->p, &err) || bl_mlp_init(&m->enc, &m->p, "encoder", 2, es, ea, NULL, BATCH * NPROP, &err) ||
        bl_mlp_init(&m->dec, &m->p, "decoder", 2, ds, da, NULL, BATCH * NPROP, &err) ||
        bl_mlp_init(&m->run, &m->p, "runtime", 3, rs, ra, rd, BATCH, &err))
        die("model", &err);
    bl_rng_seed(&m->rng, 42);
    if (bl_mlp_init_params(&m->enc, &m->p, 0.75, &m->rng, &err) ||
        bl_mlp_init_params(&m->dec, &m->p, 0.75, &m->rng, &err) ||
        bl_mlp_init_params(&m->run, &m->p, 0.75, &m->rng, &err) || bl_adam_init(&m->opt, 1e-3, 1e-4, &err))
        die("init", &err);
    m->X = malloc(sizeof(double) * BATCH * NESS);
    m->P = malloc(sizeof(double) * BATCH * NPROP * PROPW);
    m->T = malloc(sizeof(double) * BATCH);
    m->cat = malloc(sizeof(double) * BATCH * RIN);
    m->dcat = malloc(sizeof(double) * BATCH * RIN);
    m->dcode = malloc(sizeof(double) * BATCH * NPROP * CODE);
    m->gout = malloc(sizeof(double) * BATCH);
    m->grec = malloc(sizeof(double) * BATCH * NPROP * PROPW);
    for (int i = 0; i < BATCH * NESS; i++) m->X[i] = bl_rng_normal(&m->rng);
    for (int i = 0; i < BATCH * NPROP * PROPW; i++) m->P[i] = bl_rng_uniform(&m->rng) < 0.3;
    for (int i = 0; i < BATCH; i++) m->T[i] = bl_rng_normal(&m->rng);
}

static void model_free(model *m) {
    bl_mlp_free(&m->enc), bl_mlp_free(&m->dec), bl_mlp_free(&m->run);
    bl_params_free(&m->p);
    free(m->X), free(m->P), free(m->T), free(m->cat), free(m->dcat), free(m->dcode), free(m->gout), free(m->grec);
}

/* One forward + backward + Adam step; returns the loss. */
static double model_step(model *m, const bl_backend *be) {
    bl_error err;
    const double *code, *rec, *out;
    double lrec, lrun;
    const int rows = BATCH * NPROP;
    bl_params_zero_grad(&m->p);
    if (bl_mlp_forward(&m->enc, be, &m->p, rows, m->P, 1, &m->rng, &code, &err) ||
        bl_mlp_forward(&m->dec, be, &m->p, rows, code, 1, &m->rng, &rec, &err))
        die("autoencoder forward", &err);
    /* code is [B·5×4] sample-major, i.e. [B×20]: place it beside the 3 essential inputs. */
    for (int b = 0; b < BATCH; b++) {
        memcpy(m->cat + b * RIN, m->X + b * NESS, NESS * sizeof(double));
        memcpy(m->cat + b * RIN + NESS, code + b * NPROP * CODE, NPROP * CODE * sizeof(double));
    }
    if (bl_mlp_forward(&m->run, be, &m->p, BATCH, m->cat, 1, &m->rng, &out, &err) ||
        bl_loss(be, BL_LOSS_SMOOTHL1, BATCH, out, m->T, m->gout, &lrun, &err) ||
        bl_loss(be, BL_LOSS_MSE, (size_t)rows * PROPW, rec, m->P, m->grec, &lrec, &err))
        die("forward", &err);
    memset(m->dcat, 0, sizeof(double) * BATCH * RIN);
    memset(m->dcode, 0, sizeof(double) * rows * CODE);
    if (bl_mlp_backward(&m->run, be, &m->p, BATCH, m->cat, m->gout, m->dcat, &err) ||
        bl_mlp_backward(&m->dec, be, &m->p, rows, code, m->grec, m->dcode, &err))
        die("backward", &err);
    for (int b = 0; b < BATCH; b++)
        for (int j = 0; j < NPROP * CODE; j++) m->dcode[b * NPROP * CODE + j] += m->dcat[b * RIN + NESS + j];
    if (bl_mlp_backward(&m->enc, be, &m->p, rows, m->P, m->dcode, NULL, &err) ||
        bl_adam_step(&m->opt, be, &m->p, &err))
        die("backward/adam", &err);
    return lrun + lrec;
}

static void bench_training(double scale) {
    bl_backend blas_only = *bl_backend_cpu();
    blas_only.gemm = bl_gemm_blas;
    blas_only.name = "cpu/openblas-only";
    const bl_backend *bes[3] = {bl_backend_cpu(), &blas_only, bl_backend_ref()};
    model m;
    model_init(&m);
    printf("\nTraining step (forward + backward + Adam), batch %d, single thread, median of %d runs\n", BATCH, REPS);
    printf("model: autoencoder %d->8->%d->8->%d (SELU) on %d property vectors per sample,\n", PROPW, CODE, PROPW, NPROP);
    printf("       runtime net %d->16->8->1 (SELU, AlphaDropout 0.1), %zu parameters\n", RIN, m.p.n);
    printf("%-20s %14s %14s %12s\n", "backend", "samples/s", "steps/s", "us/step");
    for (int k = 0; k < 3; k++) {
        const long iters = (long)(scale * 300) + 1;
        double t[REPS], sink = 0.0;
        for (int i = 0; i < 20; i++) sink += model_step(&m, bes[k]); /* warm-up */
        for (int rep = 0; rep < REPS; rep++) {
            double t0 = now();
            for (long it = 0; it < iters; it++) sink += model_step(&m, bes[k]);
            t[rep] = (now() - t0) / (double)iters;
        }
        double sec = median(t, REPS);
        printf("%-20s %14.0f %14.0f %12.1f%s\n", bes[k]->name, BATCH / sec, 1.0 / sec, sec * 1e6,
               sink == sink ? "" : " (loss NaN!)");
    }
    model_free(&m);
}

int main(int argc, char **argv) {
    double scale = argc > 1 ? atof(argv[1]) : 1.0;
    if (!(scale > 0)) scale = 1.0;
    bl_blas_set_threads(1);
    printf("bench_nn: engine throughput (OpenBLAS threads: 1)\n\n");
    bench_gemm(scale);
    bench_training(scale);
    return 0;
}
