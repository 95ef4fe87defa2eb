/* bench_model.c — speed of the Bellamy model on the C3O data, one thread:
 * pre-training time per epoch and per trial, fine-tuning wall time on 1..5 runs (the default rule: with
 * 3+ runs the epoch count comes from cross-validation over the runs), fine-tuning time per epoch (the
 * paper's MAE rule, one fit) and per step of the cross-validated fine-tuning, predictions per second.
 *
 *   bench_model [DATA_DIR] [--epochs N] [--algorithms grep,sort] [--dropout-masks row|value|hybrid]
 *               [--reps R] [--no-finetune] [--no-predict]
 *
 * DATA_DIR defaults to $BELLAMY_DATA or ../shared/datasets/c3o; schemas come from datasets/c3o/.
 * Times are processor time (see now()). --reps R repeats the pre-training R times and reports the
 * fastest (the development machine is shared, so the minimum is the figure least disturbed by
 * other jobs' use of caches and memory). Predictions: the median of 1000 (R > 1: 2000) calls of
 * 1024 scale-outs each, for bl_model_predict (features, scaling, f, z), for the network alone
 * (bl_bnet_predict_scaled on scaled features), and for the default ensemble without and with f's
 * outputs kept per scale-out (bl_model_predict_cached, what bl_predict runs on a context term it has).
 * And the public call a scheduler makes, bl_predict, for the default ensemble on a fresh context every
 * call (the data set's contexts in turn, given as name/value pairs with the cluster totals per machine
 * as the schema says): the request resolved and encoded, then 1..200 (1024 scale-outs; "predict
 * ctx/s", predictions per second) or one scale-out ("1 x/s", calls per second); the median of 400
 * calls (R > 1: 800).
 * Prints figures; asserts nothing (speed targets are reported in bench/README.md, not tested).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "api/api_internal.h"
#include "bench/bench_args.h"
#include "nn/bpass.h"
#include "model/model.h"
#include "model/fcache.h"
#include "nn/gemm.h"

/* Processor time rather than wall time: the development machine is shared, and a benchmark that is
 * descheduled should not be charged for it. Pre-training with one thread runs in one worker thread
 * while the caller waits, so it is timed by the process's time; predictions run in the calling
 * thread and are timed by that thread's time alone (idle library threads that spin now and then,
 * such as OpenBLAS's, then do not count). */
static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
static double now_thread(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
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

/* The text of a file (NULL when it cannot be read); free with free(). */
static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = NULL;
    size_t len = 0, cap = 0, got;
    char chunk[4096];
    while ((got = fread(chunk, 1, sizeof chunk, f)) > 0) {
        if (len + got + 1 > cap) {
            cap = 2 * (len + got + 1);
            char *nb = realloc(buf, cap);
            if (!nb) { free(buf); fclose(f); return NULL; }
            buf = nb;
        }
        memcpy(buf + len, chunk, got);
        len += got;
    }
    fclose(f);
    if (buf) buf[len] = '\0';
    return buf;
}

/* Context c of ds as a caller gives it: name/value pairs, cluster totals per machine (the total of
 * its first row ÷ that row's scale-out); the values' text in text[][32] where computed. */
static size_t context_pairs(const bl_dataset *ds, size_t c, bl_prop_value *pv, char (*text)[32]) {
    const size_t r = ds->contexts[c].rows[0];
    for (size_t p = 0; p < ds->n_props; p++) {
        const bl_dataset_prop *pr = &ds->props[p];
        const char *v = pr->values[pr->row_value[r]];
        if (pr->cluster_total) {
            snprintf(text[p], sizeof text[p], "%.0f", strtod(v, NULL) / ds->scale_out[r]);
            v = text[p];
        }
        pv[p].name = pr->name;
        pv[p].value = v;
    }
    return ds->n_props;
}

int main(int argc, char **argv) {
    /* OpenBLAS starts its thread pool when it loads, before main, and idle pool threads spin now and
     * then, which a process's processor time counts: run again with a one-thread pool. */
    if (!getenv("OPENBLAS_NUM_THREADS") && setenv("OPENBLAS_NUM_THREADS", "1", 1) == 0)
        execv("/proc/self/exe", argv); /* on failure, carry on as we are */
#define BENCH_MODEL_USAGE "[DATA_DIR] [--epochs N] [--reps N] [--algorithms a,b] [--dropout-masks row|value|hybrid] " \
                          "[--no-finetune] [--no-predict] [--precision f64|f32]"
    int done = bench_args(argc, argv, "bench_model", BENCH_MODEL_USAGE);
    if (done >= 0) return done;
    const char *dir = getenv("BELLAMY_DATA");
    char dbuf[4096];
    long epochs = 200;
    const char *algos = "grep,kmeans,pagerank,sgd,sort";
    int masks = -1; /* default */
    int precision = BL_PRECISION_F64;
    int reps = 1, finetune = 1, predict = 1;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--epochs") == 0 && i + 1 < argc) epochs = atol(argv[++i]);
        else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) reps = atoi(argv[++i]);
        else if (strcmp(argv[i], "--no-finetune") == 0) finetune = 0;
        else if (strcmp(argv[i], "--no-predict") == 0) predict = 0;
        else if (strcmp(argv[i], "--algorithms") == 0 && i + 1 < argc) algos = argv[++i];
        else if (strcmp(argv[i], "--dropout-masks") == 0 && i + 1 < argc) {
            const char *v = argv[++i];
            masks = strcmp(v, "value") == 0 ? 0 : strcmp(v, "row") == 0 ? 1 : strcmp(v, "hybrid") == 0 ? 2 : -2;
            if (masks == -2) { fprintf(stderr, "bench_model: --dropout-masks row|value|hybrid\n"); return 2; }
        }
        else if (strcmp(argv[i], "--precision") == 0 && i + 1 < argc) {
            const char *v = argv[++i];
            precision = strcmp(v, "f32") == 0 ? BL_PRECISION_F32 : strcmp(v, "f64") == 0 ? BL_PRECISION_F64 : -1;
            if (precision < 0) { fprintf(stderr, "bench_model: --precision f64|f32\n"); return 2; }
        }
        else if (argv[i][0] == '-') {
            fprintf(stderr, "bench_model: unknown option '%s'\nusage: bench_model %s\n", argv[i], BENCH_MODEL_USAGE);
            return 2;
        } else dir = argv[i];
    }
    if (reps < 1) reps = 1;
    if (!dir) dir = "../shared/datasets/c3o";
    else if (strcmp(dir + strlen(dir) - 4, "/c3o") != 0) {
        snprintf(dbuf, sizeof dbuf, "%s/c3o", dir);
        FILE *f = fopen(dbuf, "r");
        if (f) { fclose(f); dir = dbuf; }
    }
    bl_blas_set_threads(1);
    printf("Bellamy model speed, one thread (pre-training: %ld epochs of one trial, batch 64, best of %d); kernels: %s "
           "(processor: %s)\n", epochs, reps, bl_cpu_kernels(), bl_cpu_kernels_available());
    bl_pretrain_opts pd;
    bl_pretrain_opts_default(&pd);
    pd.precision = precision;
    char ens_col[32], ens_col2[40];
    snprintf(ens_col, sizeof ens_col, "%d members/s", pd.members);
    snprintf(ens_col2, sizeof ens_col2, "%d, f kept/s", pd.members);
    printf("%-9s %6s %12s %12s %10s %10s %10s %10s %10s %12s %12s %14s %12s %12s %13s %14s %10s\n", "algorithm", "rows",
           "pretrain/ep", "trial(2500)", "ft n=1", "ft n=2", "ft n=3", "ft n=4", "ft n=5", "ft/ep (max)", "cv step(max)",
           "predictions/s", "f+z only/s", ens_col, ens_col2, "predict ctx/s", "1 x/s");
    char list[256];
    snprintf(list, sizeof list, "%s", algos);
    for (char *a = strtok(list, ","); a; a = strtok(NULL, ",")) {
        char data[4200], schema[512];
        snprintf(data, sizeof data, "%s/%s.tsv", dir, a);
        snprintf(schema, sizeof schema, "datasets/c3o/%s.schema", a);
        bl_dataset *ds;
        bl_error err;
        char *schema_text = slurp(schema); /* stored in the model: its cluster totals are given per machine */
        if (!schema_text) {
            fprintf(stderr, "bench_model: cannot read %s\n", schema);
            return 1;
        }
        if (bl_dataset_load(data, schema, 0, NULL, &ds, &err)) {
            fprintf(stderr, "bench_model: %s\n", err.message);
            return 1;
        }
        bl_pretrain_opts po;
        bl_pretrain_opts_default(&po);
        po.precision = precision;
        const int members = po.members;
        po.members = 1; /* one search, one trial: the time of one trial's epoch */
        po.trials = 1;
        po.epochs = epochs;
        po.grace = epochs;
        if (masks >= 0) po.per_row_dropout = masks;
        double per_epoch = INFINITY;
        bl_model *m = NULL;
        for (int rep = 0; rep < reps; rep++) {
            bl_model_free(m);
            double t0 = now();
            if (bl_pretrain(ds, schema_text, &po, &m, &err)) {
                fprintf(stderr, "bench_model: %s\n", err.message);
                return 1;
            }
            double t = (now() - t0) / (double)epochs;
            if (t < per_epoch) per_epoch = t;
        }
        /* fine-tuning on n runs of context 0 at distinct scale-outs: wall time with the default rule
         * (3+ runs: the epoch count by cross-validation); time per epoch with the paper's MAE rule
         * (one fit, as the prototype does it), and per Adam step of the cross-validated fine-tuning
         * (its folds' steps, each with an evaluation of the held-out run, and the final fit's) */
        double ft[5] = {0}, ft_ep[5] = {0}, cv_step[5] = {0};
        const bl_context *c = &ds->contexts[0];
        bl_finetune_opts mae_rule;
        bl_finetune_opts_default(&mae_rule);
        mae_rule.stop_cv = 0;
        for (int n = 1; n <= 5 && finetune; n++) {
            size_t rows[5];
            for (int k = 0; k < n; k++) rows[k] = c->rows[(size_t)k * 5 % c->n_rows];
            double times[5], per[5], per_cv[5];
            for (int rep = 0; rep < 5; rep++) {
                bl_model *f;
                double t1 = now();
                if (bl_finetune(m, ds, rows, (size_t)n, NULL, &f, &err)) {
                    fprintf(stderr, "bench_model: %s\n", err.message);
                    return 1;
                }
                times[rep] = now() - t1;
                per_cv[rep] = times[rep] / (double)(f->finetune_steps > 0 ? f->finetune_steps : 1);
                bl_model_free(f);
                t1 = now();
                if (bl_finetune(m, ds, rows, (size_t)n, &mae_rule, &f, &err)) {
                    fprintf(stderr, "bench_model: %s\n", err.message);
                    return 1;
                }
                per[rep] = (now() - t1) / (double)(f->finetune_epochs > 0 ? f->finetune_epochs : 1);
                bl_model_free(f);
            }
            ft[n - 1] = median(times, 5);
            ft_ep[n - 1] = median(per, 5);
            cv_step[n - 1] = n >= 3 ? median(per_cv, 5) : 0;
        }
        /* predictions per second for one context over many scale-outs: the one-member model, the
         * network alone, and the default ensemble (members copies of the network: a prediction is
         * then the median of the members' runtimes) */
        static double ctx[BL_BNET_DIM_MAX], xs[1024], out[1024], feat[1024 * BL_SCALEOUT_NFEAT];
        double sink = 0, rate[4] = {0, 0, 0, 0};
        bl_model *ens = NULL;
        if (predict) {
            for (int i = 0; i < 1024; i++) xs[i] = 1 + (i % 200);
            bl_scaleout_features_forward(xs, 1024, feat);
            bl_minmax_transform(&m->scaler, feat, 1024, feat);
            const bl_model *copies[BL_MODEL_MEMBERS_MAX];
            for (int k = 0; k < members - 1 && k < BL_MODEL_MEMBERS_MAX; k++) copies[k] = m;
            if (bl_model_clone(m, &ens, &err) || bl_model_add_members(ens, copies, members - 1, &err)) {
                fprintf(stderr, "bench_model: %s\n", err.message);
                return 1;
            }
        }
        /* each call of 1024 predictions timed alone; the median call gives the rate (sustained
         * windows on the shared machine swing with other jobs, single calls much less) */
        enum { CALLS = 2000 };
        static double tcall[CALLS];
        bl_fcache *fc = NULL;
        for (int kind = 0; kind < 4 && predict; kind++) {
            const bl_model *pm = kind >= 2 ? ens : m;
            if (kind == 3 && !(fc = bl_fcache_new(ens))) return fprintf(stderr, "bench_model: out of memory\n"), 1;
            if (bl_model_context_row(pm, ds, 0, ctx, &err)) {
                fprintf(stderr, "bench_model: %s\n", err.message);
                return 1;
            }
            int nc = CALLS / 2 * (reps < 2 ? 1 : 2);
            for (int k = 0; k < nc; k++) {
                double t1 = now_thread();
                if (kind == 1) bl_bnet_predict_scaled(&m->net, ctx, feat, 1024, out);
                else if (kind == 3) bl_model_predict_cached(pm, fc, ctx, xs, 1024, out, &err);
                else bl_model_predict(pm, ctx, xs, 1024, out, &err);
                tcall[k] = now_thread() - t1;
                sink += out[k % 1024];
            }
            rate[kind] = 1024.0 / median(tcall, nc);
        }
        bl_fcache_free(fc);
        /* bl_predict on a fresh context per call: 1024 scale-outs (kind 0), one (kind 1) */
        double api_rate[2] = {0, 0};
        bl_predictor *pred = NULL;
        bl_model *pe = NULL;
        if (predict && (bl_model_clone(ens, &pe, &err) || bl_predictor_wrap(pe, &pred, &err))) {
            fprintf(stderr, "bench_model: %s\n", err.message);
            return 1;
        }
        bl_prop_value pv[64];
        static char text[64][32];
        for (int kind = 0; kind < 2 && predict && ds->n_props <= 64; kind++) {
            const int nc = 200 * (reps < 2 ? 2 : 4);
            for (int k = 0; k < nc; k++) {
                const size_t n_pv = context_pairs(ds, (size_t)k % ds->n_contexts, pv, text);
                const double *x = kind == 0 ? xs : xs + k % 200;
                double t1 = now_thread();
                if (bl_predict(pred, pv, n_pv, x, kind == 0 ? 1024 : 1, out, &err)) {
                    fprintf(stderr, "bench_model: %s\n", err.message);
                    return 1;
                }
                tcall[k] = now_thread() - t1;
                sink += out[0];
            }
            api_rate[kind] = (kind == 0 ? 1024.0 : 1.0) / median(tcall, nc);
        }
        bl_predictor_free(pred);
        bl_model_free(ens);
        double ft_ep_max = 0, cv_max = 0;
        for (int k = 0; k < 5; k++) {
            ft_ep_max = ft_ep[k] > ft_ep_max ? ft_ep[k] : ft_ep_max;
            cv_max = cv_step[k] > cv_max ? cv_step[k] : cv_max;
        }
        printf("%-9s %6zu %9.3f ms %9.2f s %7.2f ms %7.2f ms %7.2f ms %7.2f ms %7.2f ms %9.1f us %9.1f us %11.2f M %9.2f M %9.2f M %10.2f M %11.3f M %8.1f k%s\n",
               a, ds->n_rows, 1e3 * per_epoch, 2500 * per_epoch, 1e3 * ft[0], 1e3 * ft[1], 1e3 * ft[2],
               1e3 * ft[3], 1e3 * ft[4], 1e6 * ft_ep_max, 1e6 * cv_max, rate[0] / 1e6, rate[1] / 1e6, rate[2] / 1e6,
               rate[3] / 1e6, api_rate[0] / 1e6, api_rate[1] / 1e3, sink == 12345.678 ? " " : "");
        free(schema_text);
        bl_model_free(m);
        bl_dataset_free(ds);
    }
    return 0;
}
