/* train_util.c — what several bellamy-train commands share: the clock, option checks, the model file a
 * command writes, a fine-tuned model's fit to its runs. */
#include "cli/train_cmds.h"
#include "cli/cli_util.h"
#include "bellamy/bellamy.h"
#include "bellamy/train.h"
#include "common/file.h"
#include "common/suggest.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

double bl_tr_now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int bl_tr_seen(const bl_cli_option *opts, size_t n, const char *name) {
    for (size_t i = 0; i < n; i++)
        if (strcmp(opts[i].name, name) == 0) return opts[i].seen;
    return 0;
}

/* Checks an output model file before any training: writable (bl_cli_check_output), and when it
 * exists, a model file of a version this library can add to (saving would refuse it only at the
 * end, after hours of training). */
int bl_tr_check_model_out(const char *prog, const char *flag, const char *path) {
    int rc = bl_cli_check_output(prog, flag, path);
    if (rc) return rc;
    if (access(path, F_OK) != 0) return 0;
    bl_model_file *f = NULL;
    bl_error err = { 0 };
    int present;
    /* strictly, as the save will: a checksum the override would let a load through still refuses it */
    if (bl_model_file_verify(path, &present, &err) != BL_OK || bl_model_file_open(path, &f, &err) != BL_OK) {
        bl_cli_error(prog, "--%s: refusing to overwrite %s", flag, err.message);
        return BL_EXIT_FAIL;
    }
    bl_model_file_free(f);
    return 0;
}

int bl_tr_cmp_dbl(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The runs' own noise: the pooled standard deviation of ln(runtime) over scale-outs with repetitions
 * among them; NaN when none repeats. */
static double fit_noise(const bl_predictor *p, size_t n) {
    double ss = 0;
    size_t dof = 0;
    for (size_t i = 0; i < n; i++) {
        double xi, yi, sum = 0, sum2 = 0;
        size_t k = 0, first = 1;
        bl_predictor_finetune_fit(p, i, &xi, NULL, NULL, NULL, NULL);
        for (size_t j = 0; j < n && first; j++) {
            double xj;
            bl_predictor_finetune_fit(p, j, &xj, NULL, NULL, NULL, NULL);
            if (xj == xi && j < i) first = 0; /* each scale-out once */
        }
        if (!first) continue;
        for (size_t j = 0; j < n; j++) {
            double xj;
            bl_predictor_finetune_fit(p, j, &xj, &yi, NULL, NULL, NULL);
            if (xj != xi) continue;
            sum += log(yi);
            sum2 += log(yi) * log(yi);
            k++;
        }
        if (k < 2) continue;
        ss += sum2 - sum * sum / (double)k;
        dof += k - 1;
    }
    return dof ? sqrt(fmax(ss, 0) / (double)dof) : NAN;
}

/* How the fine-tuned model fits its runs: *worst the largest relative miss, *noise the runs' own. 0 when
 * not recorded. */
size_t bl_tr_fit_summary(const bl_predictor *p, double *worst, double *noise) {
    size_t n = 0;
    *worst = 0;
    *noise = NAN;
    if (bl_predictor_finetune_fit(p, 0, NULL, NULL, NULL, NULL, &n) != BL_OK) return 0;
    for (size_t i = 0; i < n; i++) {
        double y, f;
        bl_predictor_finetune_fit(p, i, NULL, &y, &f, NULL, NULL);
        if (fabs(f / y - 1) > *worst || !isfinite(f)) *worst = isfinite(f) ? fabs(f / y - 1) : INFINITY;
    }
    *noise = fit_noise(p, n);
    return n;
}


const char *bl_tr_fmt_up_to(double worst, char *buf, size_t cap) {
    if (isfinite(worst) && worst > 10) snprintf(buf, cap, "a factor %.3g", 1 + worst);
    else snprintf(buf, cap, "%.1f %%", 100 * worst);
    return buf;
}

const char *bl_tr_fmt_miss(double rel, char *buf, size_t cap) {
    /* past 1000 % a percentage is a string of digits nobody reads: say the factor */
    if (isfinite(rel) && rel > 10) snprintf(buf, cap, "over by a factor %.3g", 1 + rel);
    else snprintf(buf, cap, "%+.1f %%", 100 * rel);
    return buf;
}

void bl_tr_print_fit_lines(const bl_predictor *p, const char *indent) {
    size_t n = 0;
    if (bl_predictor_finetune_fit(p, 0, NULL, NULL, NULL, NULL, &n) != BL_OK) return;
    printf("%sfit to its runs (scale-out: measured, predicted, miss):", indent);
    for (size_t i = 0; i < n && i < 50; i++) {
        double x, y, f;
        bl_predictor_finetune_fit(p, i, &x, &y, &f, NULL, NULL);
        char miss[48];
        printf("%s %.10g: %.6g s, %.6g s, %s", i ? ";" : "", x, y, f, bl_tr_fmt_miss(f / y - 1, miss, sizeof miss));
    }
    if (n > 50) printf("; ... (%zu runs)", n);
    putchar('\n');
}

void bl_tr_note_fit(const char *prog, const bl_predictor *p) {
    double worst, noise;
    if (!bl_tr_fit_summary(p, &worst, &noise)) return;
    const double allow = fmax(isfinite(noise) ? 2 * noise : 0, BL_TR_FIT_MISS_MIN);
    if (!(worst > allow)) return;
    char nz[96];
    if (isfinite(noise)) snprintf(nz, sizeof nz, "their noise, from repetitions among them, is about %.1f %%", 100 * noise);
    else snprintf(nz, sizeof nz, "no scale-out repeats among them, so their noise is taken as under %.1f %%",
                  100 * BL_TR_FIT_MISS_MIN / 2);
    char up[48];
    fprintf(stderr, "%s: note: the fine-tuned model misses its own runs by up to %s (%s): its predictions rest on "
            "more than these runs (the pre-trained network, or Ernest's fit where the guard blends it in), and its "
            "intervals widen with that disagreement; more runs, or runs that agree, narrow them (bellamy-train info "
            "lists the fit per run)\n", prog, bl_tr_fmt_up_to(worst, up, sizeof up), nz);
}
