/* bench_model.c — speed of the Bellamy model on the C3O data, one thread:
 * pre-training time per epoch and per trial, fine-tuning wall time on 1..5 runs, predictions per second.
 *
 *   bench_model [DATA_DIR] [--epochs N] [--algorithms grep,sort] [--dropout-masks row|value|hybrid]
 *
 * DATA_DIR defaults to $BELLAMY_DATA or ../shared/datasets/c3o; schemas come from datasets/c3o/.
 * Prints figures; asserts nothing (speed targets are reported in bench/README.md, not tested).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model/model.h"
#include "nn/gemm.h"

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int main(int argc, char **argv) {
    const char *dir = getenv("BELLAMY_DATA");
    char dbuf[4096];
    long epochs = 200;
    const char *algos = "grep,kmeans,pagerank,sgd,sort";
    int masks = -1; /* default */
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--epochs") == 0 && i + 1 < argc) epochs = atol(argv[++i]);
        else if (strcmp(argv[i], "--algorithms") == 0 && i + 1 < argc) algos = argv[++i];
        else if (strcmp(argv[i], "--dropout-masks") == 0 && i + 1 < argc) {
            const char *v = argv[++i];
            masks = strcmp(v, "value") == 0 ? 0 : strcmp(v, "row") == 0 ? 1 : strcmp(v, "hybrid") == 0 ? 2 : -2;
            if (masks == -2) { fprintf(stderr, "bench_model: --dropout-masks row|value|hybrid\n"); return 2; }
        }
        else dir = argv[i];
    }
    if (!dir) dir = "../shared/datasets/c3o";
    else if (strcmp(dir + strlen(dir) - 4, "/c3o") != 0) {
        snprintf(dbuf, sizeof dbuf, "%s/c3o", dir);
        FILE *f = fopen(dbuf, "r");
        if (f) { fclose(f); dir = dbuf; }
    }
    bl_blas_set_threads(1);
    printf("Bellamy model speed, one thread (pre-training: %ld epochs of one trial, batch 64)\n", epochs);
    printf("%-9s %6s %12s %12s %10s %10s %10s %10s %10s %12s %14s\n", "algorithm", "rows", "pretrain/ep",
           "trial(2500)", "ft n=1", "ft n=2", "ft n=3", "ft n=4", "ft n=5", "ft/ep (max)", "predictions/s");
    char list[256];
    snprintf(list, sizeof list, "%s", algos);
    for (char *a = strtok(list, ","); a; a = strtok(NULL, ",")) {
        char data[4200], schema[512];
        snprintf(data, sizeof data, "%s/%s.tsv", dir, a);
        snprintf(schema, sizeof schema, "datasets/c3o/%s.schema", a);
        bl_dataset *ds;
        bl_error err;
        if (bl_dataset_load(data, schema, 0, NULL, &ds, &err)) {
            fprintf(stderr, "bench_model: %s\n", err.message);
            return 1;
        }
        bl_pretrain_opts po;
        bl_pretrain_opts_default(&po);
        po.trials = 1;
        po.epochs = epochs;
        po.grace = epochs;
        if (masks >= 0) po.per_row_dropout = masks;
        double t0 = now();
        bl_model *m;
        if (bl_pretrain(ds, NULL, &po, &m, &err)) {
            fprintf(stderr, "bench_model: %s\n", err.message);
            return 1;
        }
        double per_epoch = (now() - t0) / (double)epochs;
        /* fine-tuning on n runs of context 0 at distinct scale-outs */
        double ft[5], ft_ep[5];
        const bl_context *c = &ds->contexts[0];
        for (int n = 1; n <= 5; n++) {
            size_t rows[5];
            for (int k = 0; k < n; k++) rows[k] = c->rows[(size_t)k * 5 % c->n_rows];
            double times[5], per[5];
            for (int rep = 0; rep < 5; rep++) {
                bl_model *f;
                double t1 = now();
                if (bl_finetune(m, ds, rows, (size_t)n, NULL, &f, &err)) {
                    fprintf(stderr, "bench_model: %s\n", err.message);
                    return 1;
                }
                times[rep] = now() - t1;
                per[rep] = times[rep] / (double)(f->finetune_epochs > 0 ? f->finetune_epochs : 1);
                bl_model_free(f);
            }
            ft[n - 1] = median(times, 5);
            ft_ep[n - 1] = median(per, 5);
        }
        /* predictions per second for one context over many scale-outs */
        double ctx[64], xs[1024], out[1024], sink = 0;
        bl_model_context_row(m, ds, 0, ctx, &err);
        for (int i = 0; i < 1024; i++) xs[i] = 1 + (i % 200);
        double rates[5];
        for (int rep = 0; rep < 5; rep++) {
            long count = 0;
            double t1 = now(), t2;
            do {
                for (int k = 0; k < 50; k++) {
                    bl_model_predict(m, ctx, xs, 1024, out, &err);
                    sink += out[k];
                }
                count += 50 * 1024;
                t2 = now();
            } while (t2 - t1 < 0.2);
            rates[rep] = (double)count / (t2 - t1);
        }
        double ft_ep_max = 0;
        for (int k = 0; k < 5; k++) ft_ep_max = ft_ep[k] > ft_ep_max ? ft_ep[k] : ft_ep_max;
        printf("%-9s %6zu %9.3f ms %9.2f s %7.2f ms %7.2f ms %7.2f ms %7.2f ms %7.2f ms %9.1f us %11.2f M%s\n", a,
               ds->n_rows, 1e3 * per_epoch, 2500 * per_epoch, 1e3 * ft[0], 1e3 * ft[1], 1e3 * ft[2], 1e3 * ft[3],
               1e3 * ft[4], 1e6 * ft_ep_max, median(rates, 5) / 1e6, sink == 12345.678 ? " " : "");
        bl_model_free(m);
        bl_dataset_free(ds);
    }
    return 0;
}
