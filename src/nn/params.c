/* params.c — the four-block parameter store of params.h: growth, lookup, freeze flags.
 * Not here: the optimiser (adam.c) or initial values (init.c). */
#include "nn/params.h"

#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "common/error.h"

bl_status bl_params_init(bl_params *p, bl_error *err) {
    BL_CHECK_ARG(p != NULL, err, "bl_params_init: params is NULL");
    memset(p, 0, sizeof *p);
    return BL_OK;
}

void bl_params_free(bl_params *p) {
    if (!p) return;
    free(p->param);
    free(p->grad);
    free(p->m);
    free(p->v);
    free(p->views);
    memset(p, 0, sizeof *p);
}

/* Grows the four blocks to at least need elements; on failure nothing observable changes
 * (blocks that were already grown stay valid and are simply larger than cap says). */
static bl_status grow_blocks(bl_params *p, size_t need, bl_error *err) {
    if (need <= p->cap) return BL_OK;
    size_t cap = p->cap ? p->cap : 64;
    while (cap < need) cap = (cap > SIZE_MAX / 2) ? need : cap * 2;
    size_t bytes;
    if (bl_mul_size(cap, sizeof(double), &bytes))
        return bl_seterr(err, BL_ERANGE, "bl_params_add: %zu parameters overflow the address space", need);
    double **blocks[4] = {&p->param, &p->grad, &p->m, &p->v};
    for (int i = 0; i < 4; i++) {
        double *nb = realloc(*blocks[i], bytes);
        if (!nb) return bl_seterr(err, BL_ENOMEM, "bl_params_add: cannot allocate %zu bytes", bytes);
        *blocks[i] = nb;
    }
    p->cap = cap;
    return BL_OK;
}

bl_status bl_params_add(bl_params *p, const char *name, int rows, int cols,
                        size_t *offset, int *view, bl_error *err) {
    BL_CHECK_ARG(p != NULL, err, "bl_params_add: params is NULL");
    BL_CHECK_ARG(name != NULL, err, "bl_params_add: name is NULL");
    size_t len = strlen(name);
    BL_CHECK_ARG(len > 0 && len < BL_PARAM_NAME_MAX, err,
                 "bl_params_add: name must have 1 to %d characters", BL_PARAM_NAME_MAX - 1);
    BL_CHECK_ARG(rows > 0 && cols > 0, err, "bl_params_add: '%s': shape %d x %d must be positive", name, rows, cols);
    BL_CHECK_ARG(bl_params_find(p, name) < 0, err, "bl_params_add: duplicate view name '%s'", name);
    size_t size, need;
    if (bl_mul_size((size_t)rows, (size_t)cols, &size) || size > (size_t)INT32_MAX ||
        bl_add_size(p->n, size, &need))
        return bl_seterr(err, BL_ERANGE, "bl_params_add: '%s': %d x %d parameters is too many", name, rows, cols);
    if (p->n_views == p->cap_views) {
        int nc = p->cap_views ? p->cap_views * 2 : 8;
        bl_param_view *nv = realloc(p->views, (size_t)nc * sizeof *nv);
        if (!nv) return bl_seterr(err, BL_ENOMEM, "bl_params_add: cannot allocate views");
        p->views = nv;
        p->cap_views = nc;
    }
    bl_status st = grow_blocks(p, need, err);
    if (st != BL_OK) return st;
    memset(p->param + p->n, 0, size * sizeof(double));
    memset(p->grad + p->n, 0, size * sizeof(double));
    memset(p->m + p->n, 0, size * sizeof(double));
    memset(p->v + p->n, 0, size * sizeof(double));
    bl_param_view *w = &p->views[p->n_views];
    memset(w, 0, sizeof *w);
    memcpy(w->name, name, len + 1);
    w->offset = p->n;
    w->rows = rows;
    w->cols = cols;
    if (offset) *offset = p->n;
    if (view) *view = p->n_views;
    p->n = need;
    p->n_views++;
    return BL_OK;
}

int bl_params_find(const bl_params *p, const char *name) {
    if (!p || !name) return -1;
    for (int i = 0; i < p->n_views; i++)
        if (strcmp(p->views[i].name, name) == 0) return i;
    return -1;
}

bl_status bl_params_set_frozen(bl_params *p, const char *prefix, int frozen, int *count, bl_error *err) {
    BL_CHECK_ARG(p != NULL, err, "bl_params_set_frozen: params is NULL");
    BL_CHECK_ARG(prefix != NULL, err, "bl_params_set_frozen: prefix is NULL");
    size_t len = strlen(prefix);
    int c = 0;
    for (int i = 0; i < p->n_views; i++) {
        if (strncmp(p->views[i].name, prefix, len) == 0) {
            p->views[i].frozen = frozen ? 1 : 0;
            c++;
        }
    }
    if (count) *count = c;
    if (c == 0) return bl_seterr(err, BL_ENOTFOUND, "bl_params_set_frozen: no view starts with '%s'", prefix);
    return BL_OK;
}

void bl_params_zero_grad(bl_params *p) {
    if (p && p->grad && p->n) memset(p->grad, 0, p->n * sizeof(double));
}

void bl_params_reset_adam(bl_params *p) {
    if (!p) return;
    if (p->n) {
        memset(p->m, 0, p->n * sizeof(double));
        memset(p->v, 0, p->n * sizeof(double));
    }
    for (int i = 0; i < p->n_views; i++) p->views[i].step = 0;
}
