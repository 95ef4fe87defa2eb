/* bench_nn.c — every kernel copy this machine runs, timed against the reference on synthetic shapes of
 * the paper's network: the training pass (a batch of 64 rows, 5 properties, per-row / per-value masks),
 * the trainer's batches (per-row masks, Adam after every batch; no shuffle, no validation pass), one
 * network's predictions, the 6-member median (from the features and from stored f outputs), SELU
 * and tanh vectors, Adam. One thread, processor time, the best of several rounds. Every copy in float64
 * and float32 (a copy's float32 twin; its Adam is the float64 one, as the library runs it).
 *
 *   bench_nn [--rounds N] [--only COPY] [--train-only]
 *       COPY: generic, avx2, avx512, generic/f32, avx2/f32, avx512/f32; --train-only times the trainer's
 *       epochs alone, 50 a round (for comparing two builds of the kernels: less noise per round)
 *
 * Prints figures; asserts nothing (targets live in bench/README.md). BELLAMY_CPU caps the copies.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/bench_args.h"
#include "nn/bpass.h"
#include "nn/nn.h"

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

enum { NP = 5, ROWS = 1410, NSX = 6, K = 6, NPRED = 1024 };

typedef struct shape {
    size_t n_vals[NP];
    uint32_t sx[ROWS], val[ROWS * NP];
    double target[ROWS], sx_feat[NSX * 3], *vecs[NP];
    const double *cvecs[NP];
    bl_bview v;
} shape;

/* pagerank-like: 1410 rows, 6 scale-outs, properties with 1, 3, 8, 20 and 47 distinct values */
static void shape_make(shape *s, bl_rng *r) {
    const size_t nv[NP] = {1, 3, 8, 20, 47};
    for (int p = 0; p < NP; p++) {
        s->n_vals[p] = nv[p];
        s->vecs[p] = malloc(nv[p] * 40 * sizeof(double));
        for (size_t i = 0; i < nv[p] * 40; i++) s->vecs[p][i] = (double)bl_rng_int(r, 2);
        s->cvecs[p] = s->vecs[p];
    }
    for (int i = 0; i < NSX * 3; i++) s->sx_feat[i] = bl_rng_uniform(r);
    for (int i = 0; i < ROWS; i++) {
        s->sx[i] = (uint32_t)bl_rng_int(r, NSX);
        for (int p = 0; p < NP; p++) s->val[i * NP + p] = (uint32_t)bl_rng_int(r, nv[p]);
        s->target[i] = 1.0 + 3.0 * bl_rng_uniform(r);
    }
    s->v = (bl_bview){.n_rows = ROWS, .sx = s->sx, .val = s->val, .target = s->target, .n_sx = NSX,
                      .sx_feat = s->sx_feat, .n_vals = s->n_vals, .vecs = s->cvecs};
}

int main(int argc, char **argv) {
    int rounds = 5;
    const char *only = NULL;
    int train_only = 0;
    int done = bench_args(argc, argv, "bench_nn", "[--rounds N] [--only COPY] [--train-only]");
    if (done >= 0) return done;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) rounds = atoi(argv[++i]);
        else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) only = argv[++i];
        else if (strcmp(argv[i], "--train-only") == 0) train_only = 1;
        else {
            fprintf(stderr, "usage: bench_nn [--rounds N] [--only COPY] [--train-only]\n");
            return 2;
        }
    }
    if (rounds < 1) rounds = 1;
    bl_error e;
    if (bl_cpu_check(&e)) {
        fprintf(stderr, "bench_nn: %s\n", e.message);
        return 2;
    }
    bl_rng r;
    bl_rng_seed(&r, 1);
    shape s;
    shape_make(&s, &r);
    bl_bnet_dims d;
    bl_bnet_dims_default(&d, 4, 1);
    bl_bnet nets[K];
    const bl_bnet *np[K];
    bl_bwork *w = NULL;
    static double feat[NPRED * 3], out[NPRED], ctx[K * 8], F[K][NPRED * 8], xs[4096], ys[4096];
    for (int i = 0; i < NPRED; i++) {
        const double x = 1.0 + i;
        feat[3 * i] = 1.0 / x, feat[3 * i + 1] = 0.1 * (double)i / NPRED, feat[3 * i + 2] = x / NPRED;
    }
    for (int i = 0; i < K * 8; i++) ctx[i] = bl_rng_uniform(&r) - 0.5;
    for (int i = 0; i < 4096; i++) xs[i] = 8.0 * bl_rng_uniform(&r) - 6.0;
    const double *Fp[K];
    size_t order[ROWS];
    for (int i = 0; i < ROWS; i++) order[i] = (size_t)i;

    printf("Kernel copies, one thread (processor: %s, BELLAMY_CPU cap: %s, in use: %s); best of %d rounds\n",
           bl_cpu_level_name(bl_cpu_detected()), getenv("BELLAMY_CPU") ? getenv("BELLAMY_CPU") : "none",
           bl_kernels()->name, rounds);
    if (!train_only)
        printf("%-12s %10s %14s %13s %14s %14s %14s %12s %12s\n", "copy", "epoch/row ms", "epoch/value ms",
               "train/row ms", "predict M/s", "6-median M/s", "6-med f M/s", "tanh ns/val", "adam ns/par");
    double base[2][8] = {{0}};
    const uint64_t net_seed = bl_rng_u64(&r);
    for (int f32 = 0; f32 < 2; f32++) {
    /* the same networks in each precision */
    bl_rng nr;
    bl_rng_seed(&nr, net_seed);
    d.f32 = f32;
    for (int k = 0; k < K; k++) {
        if (bl_bnet_init(&nets[k], &d, &nr, &e)) return fprintf(stderr, "bench_nn: %s\n", e.message), 1;
        nets[k].P.param[nets[k].z2b] = 1.0;
        np[k] = &nets[k];
    }
    bl_bnet tr; /* trained in the train/row epoch, from nets[0]'s weights each round */
    if (bl_bnet_init(&tr, &d, &nr, &e)) return fprintf(stderr, "bench_nn: %s\n", e.message), 1;
    if (bl_bwork_new(&nets[0], &s.v, 64, &w, &e)) return fprintf(stderr, "bench_nn: %s\n", e.message), 1;
    for (int level = 0; level < BL_CPU_LEVELS; level++) {
        const bl_kernel_table *kt = bl_kernels_copy_prec(level, f32);
        if (!kt) continue;
        char name[32];
        snprintf(name, sizeof name, "%s%s", kt->name, f32 ? "/f32" : "");
        if (only && strcmp(only, name) != 0) continue;
        double best[8];
        for (int q = 0; q < 8; q++) best[q] = 1e30;
        for (int rd = 0; rd < rounds; rd++) {
            /* an epoch of the pagerank-like shape: 23 batches of 64 rows (the last short), training with
             * gradients and reconstruction, masks per row (default) and per value */
            for (int mode = 0; mode < (train_only ? 0 : 2); mode++) {
                bl_rng dr;
                bl_rng_seed(&dr, 3);
                bl_bpass ps = {.training = 1, .dropout = 0.1, .want_grad = 1, .recon = 1,
                               .per_row_dropout = mode == 0 ? 1 : 0, .rng = &dr};
                bl_bloss L;
                const double t0 = now();
                for (int rep = 0; rep < 5; rep++)
                    for (size_t i0 = 0; i0 < ROWS; i0 += 64) {
                        const size_t B = ROWS - i0 < 64 ? ROWS - i0 : 64;
                        bl_params_zero_grad(&nets[0].P);
                        kt->pass(&nets[0], &s.v, order + i0, B, &ps, w, NULL, &L, &e);
                    }
                const double t = (now() - t0) / 5 * 1e3;
                if (t < best[mode]) best[mode] = t;
            }
            bl_adam_hyper h = {.lr = 1e-3, .beta1 = 0.9, .beta2 = 0.999, .eps = 1e-8, .weight_decay = 1e-4,
                               .bc1 = 0.1, .bc2 = 0.001};
            { /* the epoch the trainer runs: per-row masks, then Adam over every parameter after each batch */
                bl_bnet_copy_params(&tr, &nets[0], 0);
                memset(tr.P.m, 0, tr.P.n * sizeof(double));
                memset(tr.P.v, 0, tr.P.n * sizeof(double));
                bl_rng dr;
                bl_rng_seed(&dr, 3);
                bl_bpass ps = {.training = 1, .dropout = 0.1, .want_grad = 1, .recon = 1, .per_row_dropout = 1,
                               .rng = &dr};
                bl_bloss L;
                int step = 0;
                const int reps = train_only ? 50 : 5;
                const double t0 = now();
                for (int rep = 0; rep < reps; rep++)
                    for (size_t i0 = 0; i0 < ROWS; i0 += 64) {
                        const size_t B = ROWS - i0 < 64 ? ROWS - i0 : 64;
                        bl_params_zero_grad(&tr.P);
                        kt->pass(&tr, &s.v, order + i0, B, &ps, w, NULL, &L, &e);
                        step++;
                        bl_adam_hyper ha = h;
                        ha.bc1 = 1.0 - pow(h.beta1, step), ha.bc2 = 1.0 - pow(h.beta2, step);
                        kt->adam(tr.P.n, &ha, tr.P.param, tr.P.grad, tr.P.m, tr.P.v);
                    }
                const double t = (now() - t0) / reps * 1e3;
                if (t < best[7]) best[7] = t;
            }
            if (train_only) continue;
            double t0 = now();
            for (int rep = 0; rep < 200; rep++) kt->predict(np[0], ctx, feat, NPRED, out);
            double t = (now() - t0) / (200.0 * NPRED);
            if (t < best[2]) best[2] = t;
            t0 = now();
            for (int rep = 0; rep < 50; rep++) kt->predict_median(np, K, ctx, feat, NPRED, out);
            t = (now() - t0) / (50.0 * NPRED);
            if (t < best[3]) best[3] = t;
            for (int k = 0; k < K; k++) {
                kt->f_forward(np[k], feat, NPRED, F[k]);
                Fp[k] = F[k];
            }
            t0 = now();
            for (int rep = 0; rep < 50; rep++) kt->predict_median_f(np, K, ctx, Fp, NPRED, out);
            t = (now() - t0) / (50.0 * NPRED);
            if (t < best[4]) best[4] = t;
            t0 = now();
            for (int rep = 0; rep < 200; rep++) kt->act(1, xs, 4096, ys);
            t = (now() - t0) / (200.0 * 4096) * 1e9;
            if (t < best[5]) best[5] = t;
            t0 = now();
            for (int rep = 0; rep < 2000; rep++)
                kt->adam(nets[1].P.n, &h, nets[1].P.param, nets[0].P.grad, nets[1].P.m, nets[1].P.v);
            t = (now() - t0) / (2000.0 * (double)nets[1].P.n) * 1e9;
            if (t < best[6]) best[6] = t;
        }
        if (train_only) {
            printf("%-12s train/row %.4f ms\n", name, best[7]);
            continue;
        }
        printf("%-12s %10.3f %14.3f %13.3f %14.2f %14.2f %14.2f %12.2f %12.2f\n", name, best[0], best[1], best[7],
               1e-6 / best[2], 1e-6 / best[3], 1e-6 / best[4], best[5], best[6]);
        memcpy(base[f32] + 0, level == 0 ? best : base[f32], level == 0 ? sizeof best : 0);
        if (level > 0 && base[f32][0] > 0)
            printf("%-12s %9.2fx %13.2fx %12.2fx %13.2fx %13.2fx %13.2fx %11.2fx %11.2fx   (speed-up over generic%s)\n",
                   "", base[f32][0] / best[0], base[f32][1] / best[1], base[f32][7] / best[7], base[f32][2] / best[2],
                   base[f32][3] / best[3],
                   base[f32][4] / best[4], base[f32][5] / best[5], base[f32][6] / best[6], f32 ? "/f32" : "");
    }
    bl_bwork_free(w);
    w = NULL;
    bl_bnet_free(&tr);
    for (int k = 0; k < K; k++) bl_bnet_free(&nets[k]);
    }
    for (int p = 0; p < NP; p++) free(s.vecs[p]);
    return 0;
}
