/* history.c — the built-in history predictor for DBMLSched's simulator.
 * It learns, per (kind, device kind, cores), seconds per iteration as total seconds / total iterations
 * of observed runs, and per kind the mean iteration count of finished implicit jobs. A prediction is
 * iterations (known, or that mean for implicit jobs) x seconds per iteration; with no history it
 * answers BL_ENOTFOUND. It ignores job params: that is where a Bellamy model, which takes them as
 * context properties, does better. Entries are few (kinds x devices), so lookups are linear. */
#include "bellamy/sched.h"
#include "common/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct hist_entry {
    char   kind[32];
    int    dev_kind, cores;      /* cores < 0: the implicit-iterations entry of a kind */
    double iters, secs;          /* sums */
    double count;
} hist_entry;

struct bl_sched_history {
    hist_entry *e;
    size_t      n, cap;
    size_t      observations;
};

bl_status bl_sched_history_new(bl_sched_history **out, bl_error *err) {
    BL_CHECK_ARG(out != NULL, err, "out is NULL");
    *out = calloc(1, sizeof **out);
    return *out ? BL_OK : bl_seterr(err, BL_ENOMEM, "out of memory");
}

void bl_sched_history_free(bl_sched_history *h) {
    if (!h) return;
    free(h->e);
    free(h);
}

size_t bl_sched_history_count(const bl_sched_history *h) { return h ? h->observations : 0; }

static hist_entry *find(bl_sched_history *h, const char *kind, int dev_kind, int cores, int create) {
    for (size_t i = 0; i < h->n; i++)
        if (h->e[i].dev_kind == dev_kind && h->e[i].cores == cores && strcmp(h->e[i].kind, kind) == 0) return &h->e[i];
    if (!create) return NULL;
    if (h->n == h->cap) {
        size_t nc = h->cap ? h->cap * 2 : 16;
        hist_entry *ne = realloc(h->e, nc * sizeof *ne);
        if (!ne) return NULL;
        h->e = ne;
        h->cap = nc;
    }
    hist_entry *x = &h->e[h->n++];
    memset(x, 0, sizeof *x);
    snprintf(x->kind, sizeof x->kind, "%s", kind);
    x->dev_kind = dev_kind;
    x->cores = cores;
    return x;
}

static int hist_predict(void *ctx, const bl_sched_job_desc *job, const bl_sched_device_info *dev, double *seconds) {
    bl_sched_history *h = ctx;
    if (!h || !job || !job->kind || !dev || !seconds) return BL_EINVAL;
    hist_entry *x = find(h, job->kind, (int)dev->kind, dev->cores, 0);
    if (!x || x->iters <= 0 || x->secs <= 0) return BL_ENOTFOUND;
    double iters = job->iterations;
    if (job->implicit || iters <= 0) {
        hist_entry *im = find(h, job->kind, -1, -1, 0);
        if (!im || im->count <= 0) return BL_ENOTFOUND;
        iters = im->iters / im->count;
    }
    *seconds = iters * (x->secs / x->iters);
    return *seconds > 0 ? BL_OK : BL_ENOTFOUND;
}

static void hist_observe(void *ctx, const bl_sched_job_desc *job, const bl_sched_device_info *dev, double iterations,
                         double seconds) {
    bl_sched_history *h = ctx;
    if (!h || !job || !job->kind || !dev || !(iterations > 0) || !(seconds > 0)) return;
    hist_entry *x = find(h, job->kind, (int)dev->kind, dev->cores, 1);
    if (!x) return;   /* out of memory: the observation is dropped, predictions stay valid */
    x->iters += iterations;
    x->secs += seconds;
    x->count += 1;
    h->observations++;
    /* A finished implicit job reveals its iteration count; a job that ran on two devices is counted
     * twice with the same total, which leaves the mean a mean of true totals. */
    if (job->implicit && job->iterations > 0) {
        hist_entry *im = find(h, job->kind, -1, -1, 1);
        if (im) { im->iters += job->iterations; im->count += 1; }
    }
}

bl_sched_predictor bl_sched_history_predictor(bl_sched_history *h) {
    bl_sched_predictor p = { h, hist_predict, hist_observe };
    return p;
}
