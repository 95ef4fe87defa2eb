/* thin.c — the jobs-in-system curve thinned for a plot as the simulation records it
 * (BL_SCHED_TRACE_PLOT, sched_internal.h). A million jobs make two million points; a picture 1100
 * pixels wide shows about a thousand columns, so each span of time keeps the points a step plot needs
 * to look the same there: its first and last (where it starts and what it leaves behind) and its lowest
 * and highest (its extremes). The spans are set when the points outgrow the exact buffer and double in
 * length (merging neighbours) when the curve runs past the last one; the time range need not be known
 * in advance and memory is fixed. Not here: drawing (the CLI runs gnuplot). */
#include "sched/sched_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NSPAN BL_SCHED_THIN_SPANS

void bl_sched_thin_init(bl_sched_thin *th) { memset(th, 0, sizeof *th); }

void bl_sched_thin_free(bl_sched_thin *th) {
    free(th->raw);
    free(th->span);
    memset(th, 0, sizeof *th);
}

static void span_add(bl_sched_thin_span *s, const bl_sched_thin_pt *p) {
    if (!s->used) {
        s->first = s->lo = s->hi = s->last = *p;
        s->used = 1;
        return;
    }
    s->last = *p;
    if (p->y < s->lo.y) s->lo = *p;   /* ties keep the earlier point */
    if (p->y > s->hi.y) s->hi = *p;
}

/* a then b (b later in time) as one span */
static bl_sched_thin_span span_merge(const bl_sched_thin_span *a, const bl_sched_thin_span *b) {
    if (!a->used) return *b;
    if (!b->used) return *a;
    bl_sched_thin_span m = *a;
    m.last = b->last;
    if (b->lo.y < m.lo.y) m.lo = b->lo;
    if (b->hi.y > m.hi.y) m.hi = b->hi;
    return m;
}

/* Into the spans; a point past the last doubles the span length until it fits. Span i of the doubled
 * length is exactly spans 2i and 2i+1: (t - t0) / 2w is (t - t0) / w halved, exactly, in binary. */
static void spanned_add(bl_sched_thin *th, const bl_sched_thin_pt *p) {
    double q = (p->t - th->t0) / th->w;
    while (!(q < NSPAN)) {
        for (size_t i = 0; i < NSPAN / 2; i++) th->span[i] = span_merge(&th->span[2 * i], &th->span[2 * i + 1]);
        memset(th->span + NSPAN / 2, 0, (NSPAN / 2) * sizeof *th->span);
        th->w *= 2;
        q = (p->t - th->t0) / th->w;
    }
    span_add(&th->span[q > 0 ? (size_t)q : 0], p);
}

bl_status bl_sched_thin_add(bl_sched_thin *th, double t, int y) {
    bl_sched_thin_pt p = { t, th->seq++, y };
    if (th->span) {
        spanned_add(th, &p);
        return BL_OK;
    }
    if (th->nraw < BL_SCHED_PLOT_POINTS) {
        if (!th->raw && !(th->raw = malloc(BL_SCHED_PLOT_POINTS * sizeof *th->raw))) return BL_ENOMEM;
        th->raw[th->nraw++] = p;
        return BL_OK;
    }
    /* one point too many to keep them all: spans from here on, the points so far filling about half of
     * them so that the curve can go on as long again before the first doubling */
    if (!(th->span = calloc(NSPAN, sizeof *th->span))) return BL_ENOMEM;
    th->t0 = th->raw[0].t;
    double range = t - th->t0;
    th->w = range / (NSPAN / 2);
    if (!(th->w > 0)) th->w = 1e-9 * fmax(1.0, fabs(th->t0));   /* no time passed yet (or too little to divide) */
    for (size_t i = 0; i < th->nraw; i++) spanned_add(th, &th->raw[i]);
    spanned_add(th, &p);
    free(th->raw);
    th->raw = NULL;
    th->nraw = 0;
    return BL_OK;
}

static int by_seq(const void *a, const void *b) {
    uint64_t x = ((const bl_sched_thin_pt *)a)->seq, y = ((const bl_sched_thin_pt *)b)->seq;
    return (x > y) - (x < y);
}

bl_status bl_sched_thin_result(const bl_sched_thin *th, double **t, int **y, size_t *n) {
    *t = NULL;
    *y = NULL;
    *n = 0;
    size_t cap = th->span ? 4 * (size_t)NSPAN : th->nraw;
    if (cap == 0) return BL_OK;
    double *tt = malloc(cap * sizeof *tt);
    int *yy = malloc(cap * sizeof *yy);
    if (!tt || !yy) { free(tt); free(yy); return BL_ENOMEM; }
    size_t k = 0;
    if (!th->span) {
        for (size_t i = 0; i < th->nraw; i++) { tt[k] = th->raw[i].t; yy[k] = th->raw[i].y; k++; }
    } else {
        for (size_t i = 0; i < NSPAN; i++) {
            const bl_sched_thin_span *s = &th->span[i];
            if (!s->used) continue;
            bl_sched_thin_pt q[4] = { s->first, s->lo, s->hi, s->last };
            qsort(q, 4, sizeof *q, by_seq);
            for (int j = 0; j < 4; j++) {
                if (j > 0 && q[j].seq == q[j - 1].seq) continue;   /* one point in two roles */
                tt[k] = q[j].t;
                yy[k] = q[j].y;
                k++;
            }
        }
    }
    *t = tt;
    *y = yy;
    *n = k;
    return BL_OK;
}
