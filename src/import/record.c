/* record.c — the run record that every history reader fills (import.h). */
#include "import/import.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/str.h"

bl_run_record *bl_run_record_new(const char *source, const char *engine) {
    bl_run_record *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    char **s[] = {&r->source, &r->engine, &r->app_id, &r->attempt, &r->name, &r->version, &r->master,
                  &r->deploy_mode, &r->args, &r->why};
    for (size_t i = 0; i < sizeof s / sizeof s[0]; i++)
        if (!(*s[i] = bl_strdup(i == 0 ? (source ? source : "") : i == 1 ? (engine ? engine : "") : ""))) {
            bl_run_record_free(r);
            return NULL;
        }
    r->start_ms = r->end_ms = NAN;
    r->hosts = r->executors = r->executor_cores = -1;
    r->dynamic_allocation = -1;
    r->executor_memory_mb = r->input_bytes = r->shuffle_read_bytes = r->shuffle_write_bytes = NAN;
    r->state = BL_RUN_COMPLETE;
    return r;
}

void bl_run_record_free(bl_run_record *r) {
    if (!r) return;
    char *s[] = {r->source, r->engine, r->app_id, r->attempt, r->name, r->version, r->master, r->deploy_mode,
                 r->args, r->why};
    for (size_t i = 0; i < sizeof s / sizeof s[0]; i++) free(s[i]);
    for (size_t i = 0; i < r->n_conf; i++) {
        free(r->conf_key[i]);
        free(r->conf_val[i]);
    }
    free(r->conf_key);
    free(r->conf_val);
    free(r);
}

bl_status bl_run_record_set(char **field, const char *value, bl_error *err) {
    char *c = bl_strdup(value ? value : "");
    if (!c) return bl_seterr(err, BL_ENOMEM, "out of memory");
    free(*field);
    *field = c;
    return BL_OK;
}

/* Index of key in r's sorted keys, or where it would go (*found 0). */
static size_t conf_find(const bl_run_record *r, const char *key, int *found) {
    size_t lo = 0, hi = r->n_conf;
    while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        const int c = strcmp(r->conf_key[mid], key);
        if (c == 0) {
            *found = 1;
            return mid;
        }
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    *found = 0;
    return lo;
}

bl_status bl_run_record_conf(bl_run_record *r, const char *key, const char *value, bl_error *err) {
    int found;
    const size_t at = conf_find(r, key, &found);
    if (found) return bl_run_record_set(&r->conf_val[at], value, err);
    char *k = bl_strdup(key), *v = bl_strdup(value ? value : "");
    char **nk = k && v ? realloc(r->conf_key, (r->n_conf + 1) * sizeof *nk) : NULL;
    if (nk) r->conf_key = nk;
    char **nv = nk ? realloc(r->conf_val, (r->n_conf + 1) * sizeof *nv) : NULL;
    if (nv) r->conf_val = nv;
    if (!nk || !nv) {
        free(k);
        free(v);
        return bl_seterr(err, BL_ENOMEM, "out of memory");
    }
    memmove(r->conf_key + at + 1, r->conf_key + at, (r->n_conf - at) * sizeof *nk);
    memmove(r->conf_val + at + 1, r->conf_val + at, (r->n_conf - at) * sizeof *nv);
    r->conf_key[at] = k;
    r->conf_val[at] = v;
    r->n_conf++;
    return BL_OK;
}

const char *bl_run_record_get(const bl_run_record *r, const char *key) {
    int found;
    const size_t at = conf_find(r, key, &found);
    return found ? r->conf_val[at] : NULL;
}
