/* ring.c — per-job records of the jobs still in the system, by job id (sched_internal.h): the core's and
 * the simulator's, so that their memory follows the jobs in the system rather than all jobs ever seen. */
#include "sched/sched_internal.h"

#include <stdlib.h>
#include <string.h>

void bl_sched_ring_init(bl_sched_ring *r, size_t size) {
    memset(r, 0, sizeof *r);
    r->size = size;
}

bl_status bl_sched_ring_push(bl_sched_ring *r, size_t *id) {
    if (r->hi - r->lo == r->cap) {
        /* full: double it; each held id moves to its index in the larger ring */
        size_t nc = r->cap ? 2 * r->cap : 64;
        if (nc > SIZE_MAX / r->size) return BL_ENOMEM;
        unsigned char *nv = malloc(nc * r->size);
        if (!nv) return BL_ENOMEM;
        for (size_t i = r->lo; i < r->hi; i++)
            memcpy(nv + (i & (nc - 1)) * r->size, r->v + (i & (r->cap - 1)) * r->size, r->size);
        free(r->v);
        r->v = nv;
        r->cap = nc;
    }
    size_t i = r->hi++;
    memset(bl_sched_ring_at(r, i), 0, r->size);
    if (id) *id = i;
    return BL_OK;
}

void bl_sched_ring_free(bl_sched_ring *r) {
    free(r->v);
    r->v = NULL;
    r->cap = r->lo = r->hi = 0;
}
