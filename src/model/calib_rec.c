/* calib_rec.c — the calibration a model carries (bl_model_calib): its derived tables, copy, free, the
 * quantiles it answers, and its group of a model record. Data only: fitting it is calib.c's, which needs
 * the model and its search; the model's records (seen.c) need only this.
 */
#include "model/calib.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "modelfile/modelfile.h"

static void derived_free(bl_model_calib *c) {
    for (int k = 0; k < BL_CALIB_CELLS; k++) {
        free(c->sorted[k]);
        free(c->weight[k]);
        c->sorted[k] = c->weight[k] = NULL;
        c->cell_n[k] = 0;
        c->cell_groups[k] = 0;
    }
}

void bl_calib_free(bl_model_calib *c) {
    if (!c) return;
    derived_free(c);
    free(c->cell);
    free(c->group);
    free(c->score);
    memset(c, 0, sizeof *c);
}

typedef struct { double s, w; } sw_pair;
static int cmp_sw(const void *a, const void *b) {
    const double x = ((const sw_pair *)a)->s, y = ((const sw_pair *)b)->s;
    return x < y ? -1 : x > y;
}

/* Each cell's scores ascending, each weighted 1 / (the scores its context has in the cell). */
bl_status bl_calib_derive(bl_model_calib *c, bl_error *err) {
    derived_free(c);
    const size_t G = c->contexts > 0 ? (size_t)c->contexts : 1;
    size_t *count = calloc(G * BL_CALIB_CELLS, sizeof *count);
    sw_pair *tmp = malloc((c->n ? c->n : 1) * sizeof *tmp);
    bl_status st = count && tmp ? BL_OK : bl_seterr(err, BL_ENOMEM, "out of memory");
    for (size_t i = 0; i < c->n && !st; i++) count[(size_t)c->group[i] * BL_CALIB_CELLS + (size_t)c->cell[i]]++;
    for (int k = 0; k < BL_CALIB_CELLS && !st; k++) {
        size_t n = 0;
        for (size_t i = 0; i < c->n; i++)
            if (c->cell[i] == k) {
                tmp[n].s = c->score[i];
                tmp[n].w = 1.0 / (double)count[(size_t)c->group[i] * BL_CALIB_CELLS + (size_t)k];
                n++;
            }
        for (size_t g = 0; g < G; g++) c->cell_groups[k] += count[g * BL_CALIB_CELLS + (size_t)k] > 0;
        if (!n) continue;
        qsort(tmp, n, sizeof *tmp, cmp_sw);
        c->sorted[k] = malloc(n * sizeof(double));
        c->weight[k] = malloc(n * sizeof(double));
        if (!c->sorted[k] || !c->weight[k]) {
            st = bl_seterr(err, BL_ENOMEM, "out of memory");
            break;
        }
        for (size_t i = 0; i < n; i++) {
            c->sorted[k][i] = tmp[i].s;
            c->weight[k][i] = tmp[i].w;
        }
        c->cell_n[k] = n;
    }
    free(count);
    free(tmp);
    if (st) derived_free(c);
    return st;
}

bl_status bl_calib_copy(bl_model_calib *dst, const bl_model_calib *src, bl_error *err) {
    bl_calib_free(dst);
    if (!src->known) return BL_OK;
    *dst = *src;
    for (int k = 0; k < BL_CALIB_CELLS; k++) dst->sorted[k] = dst->weight[k] = NULL;
    const size_t n = src->n ? src->n : 1;
    dst->cell = malloc(n * sizeof *dst->cell);
    dst->group = malloc(n * sizeof *dst->group);
    dst->score = malloc(n * sizeof *dst->score);
    if (!dst->cell || !dst->group || !dst->score) {
        free(dst->cell);
        free(dst->group);
        free(dst->score);
        memset(dst, 0, sizeof *dst);
        return bl_seterr(err, BL_ENOMEM, "out of memory");
    }
    memcpy(dst->cell, src->cell, src->n * sizeof *dst->cell);
    memcpy(dst->group, src->group, src->n * sizeof *dst->group);
    memcpy(dst->score, src->score, src->n * sizeof *dst->score);
    bl_status st = bl_calib_derive(dst, err);
    if (st) bl_calib_free(dst);
    return st;
}

double bl_calib_quantile(const bl_model_calib *c, int cell, double coverage, int64_t *groups) {
    if (groups) *groups = 0;
    if (!c || !c->known || cell < 0 || cell >= BL_CALIB_CELLS || !c->cell_n[cell]) return NAN;
    const double G = (double)c->cell_groups[cell];
    if (groups) *groups = c->cell_groups[cell];
    const double need = coverage * (G + 1.0); /* of the total weight G */
    if (need > G * (1.0 + 1e-12)) return INFINITY;
    double cum = 0.0;
    for (size_t i = 0; i < c->cell_n[cell]; i++) {
        cum += c->weight[cell][i];
        if (cum >= need * (1.0 - 1e-12)) return c->sorted[cell][i];
    }
    return c->sorted[cell][c->cell_n[cell] - 1];
}

bl_status bl_calib_save(const bl_model_calib *c, bl_modelrec *rec, bl_error *err) {
    if (!c->known) return BL_OK;
    const size_t n = c->n;
    int64_t *cell = malloc((n ? n : 1) * sizeof *cell), *group = malloc((n ? n : 1) * sizeof *group);
    bl_status st = cell && group ? BL_OK : bl_seterr(err, BL_ENOMEM, "out of memory");
    for (size_t i = 0; i < n && !st; i++) {
        cell[i] = c->cell[i];
        group[i] = c->group[i];
    }
    if (!st) st = bl_modelrec_add_int(rec, "calibration", "version", 1, err);
    if (!st) st = bl_modelrec_add_int(rec, "calibration", "contexts", c->contexts, err);
    if (!st) st = bl_modelrec_add_int(rec, "calibration", "finetunings", c->finetunings, err);
    if (!st && c->protocol) st = bl_modelrec_add_int(rec, "calibration", "protocol", c->protocol, err);
    if (!st) st = bl_modelrec_add_double(rec, "calibration", "seconds", c->seconds, err);
    if (!st) st = bl_modelrec_add_doubles(rec, "calibration", "d_ref", c->d_ref, BL_CALIB_KMAX + 1, err);
    if (!st) st = bl_modelrec_add_ints(rec, "calibration", "cell", cell, n, err);
    if (!st) st = bl_modelrec_add_ints(rec, "calibration", "group", group, n, err);
    if (!st) st = bl_modelrec_add_doubles(rec, "calibration", "score", c->score, n, err);
    free(cell);
    free(group);
    return st;
}

bl_status bl_calib_load(bl_model_calib *c, const bl_modelrec *rec, bl_error *err) {
    bl_calib_free(c);
    if (!bl_modelrec_find_attr(rec, "calibration", "version")) return BL_OK; /* before format 1.4 / 2.2 / 3.1 */
    int64_t version = 0, contexts = 0, ft = 0;
    double secs = 0;
    const double *dref, *score;
    const int64_t *cell, *group;
    size_t nd, n1, n2, n3;
    bl_status st;
    if ((st = bl_modelrec_get_int(rec, "calibration", "version", &version, err))) return st;
    if (version != 1)
        return bl_seterr(err, BL_EVERSION, "model '%s': calibration version %lld is not the one this library reads (1): "
                         "%s", rec->name, (long long)version, version > 1 ? "a newer version wrote it" : "the file is damaged");
    if ((st = bl_modelrec_get_int(rec, "calibration", "contexts", &contexts, err)) ||
        (st = bl_modelrec_get_int(rec, "calibration", "finetunings", &ft, err)) ||
        (st = bl_modelrec_get_double(rec, "calibration", "seconds", &secs, err)) ||
        (st = bl_modelrec_get_doubles(rec, "calibration", "d_ref", &dref, &nd, err)) ||
        (st = bl_modelrec_get_ints(rec, "calibration", "cell", &cell, &n1, err)) ||
        (st = bl_modelrec_get_ints(rec, "calibration", "group", &group, &n2, err)) ||
        (st = bl_modelrec_get_doubles(rec, "calibration", "score", &score, &n3, err)))
        return st;
    if (contexts < 0 || contexts > INT32_MAX || (uint64_t)contexts > (uint64_t)n1 || ft < 0 || nd != BL_CALIB_KMAX + 1 ||
        n1 != n2 || n1 != n3)
        return bl_seterr(err, BL_EFORMAT, "model '%s': calibration/contexts (at most one per score), finetunings, d_ref "
                         "(%d values), cell, group and score (one length) out of range", rec->name, BL_CALIB_KMAX + 1);
    for (size_t k = 0; k < nd; k++)
        if (!(dref[k] > 0) || !isfinite(dref[k]))
            return bl_seterr(err, BL_EFORMAT, "model '%s': calibration/d_ref[%zu] is %g (a positive number "
                             "expected)", rec->name, k, dref[k]);
    for (size_t i = 0; i < n1; i++)
        if (cell[i] < 0 || cell[i] >= BL_CALIB_CELLS || group[i] < 0 || group[i] >= contexts ||
            !(score[i] >= 0) || !isfinite(score[i]))
            return bl_seterr(err, BL_EFORMAT, "model '%s': calibration entry %zu (cell %lld, group %lld, score %g) "
                             "out of range (cells 0..%d, groups below contexts, scores finite and >= 0)", rec->name, i,
                             (long long)cell[i], (long long)group[i], score[i], BL_CALIB_CELLS - 1);
    const size_t n = n1 ? n1 : 1;
    c->cell = malloc(n * sizeof *c->cell);
    c->group = malloc(n * sizeof *c->group);
    c->score = malloc(n * sizeof *c->score);
    if (!c->cell || !c->group || !c->score) {
        bl_calib_free(c);
        return bl_seterr(err, BL_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < n1; i++) {
        c->cell[i] = (int32_t)cell[i];
        c->group[i] = (int32_t)group[i];
        c->score[i] = score[i];
    }
    c->n = n1;
    c->contexts = contexts;
    c->protocol = 0;
    if (bl_modelrec_find_attr(rec, "calibration", "protocol") &&
        (st = bl_modelrec_get_int(rec, "calibration", "protocol", &c->protocol, err))) {
        bl_calib_free(c);
        return st;
    }
    c->finetunings = ft;
    c->seconds = secs;
    memcpy(c->d_ref, dref, sizeof c->d_ref);
    c->known = 1;
    if ((st = bl_calib_derive(c, err))) bl_calib_free(c);
    return st;
}
