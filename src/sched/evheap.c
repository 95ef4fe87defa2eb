/* evheap.c — the simulator's event queue (binary min-heap on (time, insertion seq)) and its RNG.
 * Ties on time resolve in insertion order, which makes every simulation reproducible bit for bit.
 * It does not support removal: the simulator stamps events with versions and skips stale ones. */
#include "sched/sched_internal.h"

#include <math.h>
#include <stdlib.h>

void bl_sched_evheap_init(bl_sched_evheap *h) {
    h->v = NULL;
    h->n = h->cap = 0;
    h->next_seq = 0;
}

void bl_sched_evheap_free(bl_sched_evheap *h) {
    if (!h) return;
    free(h->v);
    h->v = NULL;
    h->n = h->cap = 0;
}

static int ev_less(const bl_sched_event *a, const bl_sched_event *b) {
    if (a->t < b->t) return 1;
    if (a->t > b->t) return 0;
    return a->seq < b->seq;
}

bl_status bl_sched_evheap_push(bl_sched_evheap *h, double t, int type, int a, uint32_t ver) {
    if (h->n == h->cap) {
        size_t nc = h->cap ? h->cap * 2 : 256;
        bl_sched_event *nv = realloc(h->v, nc * sizeof *nv);
        if (!nv) return BL_ENOMEM;
        h->v = nv;
        h->cap = nc;
    }
    bl_sched_event e = { t, h->next_seq++, type, a, ver };
    size_t i = h->n++;
    /* sift up */
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!ev_less(&e, &h->v[p])) break;
        h->v[i] = h->v[p];
        i = p;
    }
    h->v[i] = e;
    return BL_OK;
}

int bl_sched_evheap_pop(bl_sched_evheap *h, bl_sched_event *out) {
    if (h->n == 0) return 0;
    *out = h->v[0];
    bl_sched_event last = h->v[--h->n];
    size_t i = 0, n = h->n;
    /* sift down the former last element from the root */
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        const bl_sched_event *best = &last;
        if (l < n && ev_less(&h->v[l], best)) { m = l; best = &h->v[l]; }
        if (r < n && ev_less(&h->v[r], best)) { m = r; }
        if (m == i) break;
        h->v[i] = h->v[m];
        i = m;
    }
    if (n > 0) h->v[i] = last;
    return 1;
}

