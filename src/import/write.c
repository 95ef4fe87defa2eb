/* write.c — imported runs as a Bellamy data file and its schema (import.h: bl_import_write). One row per
 * run, in fixed columns plus the user's property columns; text fields have tabs, line breaks and other
 * control characters turned into spaces (the data file has no quoting), numbers the reader accepts.
 * An existing data file of the same columns keeps every row it holds, a run already there (the same
 * engine, application and attempt) is not added again, and the whole file is replaced at once (the
 * one file policy of common/file.h), so nothing is ever written half. An existing schema is the
 * user's: never rewritten. */
#include "import/import.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/error.h"
#include "common/file.h"
#include "common/str.h"
#include "data/reader.h"

/* The fixed columns, in file order. */
static const char *const COLS[] = {"app_id", "attempt", "engine", "name", "version", "master", "deploy_mode",
                                   "start_time", "runtime_s", "hosts", "executors", "dynamic_allocation",
                                   "executor_cores", "executor_memory_mb", "total_cores", "total_memory_mb",
                                   "input_mb", "input_bytes",
                                   "shuffle_read_bytes", "shuffle_write_bytes", "state", "args"};
enum { N_COLS = sizeof COLS / sizeof COLS[0] };
enum { C_APP, C_ATTEMPT, C_ENGINE, C_NAME, C_VERSION, C_MASTER, C_DEPLOY, C_START, C_RUNTIME, C_HOSTS, C_EXECUTORS,
       C_DYNAMIC, C_CORES, C_MEMORY, C_TOTAL_CORES, C_TOTAL_MEMORY, C_INPUT_MB, C_INPUT, C_SHUFFLE_R, C_SHUFFLE_W, C_STATE, C_ARGS };

const char *const *bl_import_columns(size_t *n) {
    *n = N_COLS;
    return COLS;
}

/* A row: its fields, each malloc'd. */
typedef struct row {
    char **f;
} row;

typedef struct table {
    size_t ncols, n, cap;
    row   *rows;
} table;

static void table_free(table *t) {
    for (size_t i = 0; i < t->n; i++) {
        for (size_t c = 0; c < t->ncols; c++) free(t->rows[i].f[c]);
        free(t->rows[i].f);
    }
    free(t->rows);
    memset(t, 0, sizeof *t);
}

/* Appends an empty row (fields NULL); NULL when out of memory. */
static row *table_add(table *t) {
    if (t->n == t->cap) {
        const size_t cap = t->cap ? 2 * t->cap : 64;
        row *r = realloc(t->rows, cap * sizeof *r);
        if (!r) return NULL;
        t->rows = r;
        t->cap = cap;
    }
    row *r = &t->rows[t->n];
    if (!(r->f = calloc(t->ncols, sizeof *r->f))) return NULL;
    t->n++;
    return r;
}

/* A copy of s fit for one field: control characters (tab, line breaks) become spaces, blanks at the
 * ends are dropped (the reader trims them anyway). */
static char *field_text(const char *s) {
    while (*s == ' ') s++;
    char *c = bl_strdup(s);
    if (!c) return NULL;
    for (char *p = c; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f) *p = ' ';
    size_t n = strlen(c);
    while (n > 0 && c[n - 1] == ' ') c[--n] = '\0';
    return c;
}

/* A number as the reader takes it: a whole number when the value is one, else up to millisecond
 * precision; "" when unknown. */
static char *field_num(double v, int whole) {
    char b[64] = "";
    if (isfinite(v)) {
        if (whole) snprintf(b, sizeof b, "%.0f", round(v));
        else snprintf(b, sizeof b, "%.3f", v);
    }
    return bl_strdup(b);
}

static char *field_long(long v) {
    char b[32] = "";
    if (v >= 0) snprintf(b, sizeof b, "%ld", v);
    return bl_strdup(b);
}

/* Epoch milliseconds as ISO 8601 UTC with milliseconds ("" unknown). */
static char *field_time(double ms) {
    char b[40] = "";
    if (isfinite(ms) && ms >= 0 && ms < 253402300800000.0) { /* year 9999 */
        const time_t s = (time_t)(ms / 1000);
        struct tm tm;
        if (gmtime_r(&s, &tm)) {
            size_t n = strftime(b, sizeof b, "%Y-%m-%dT%H:%M:%S", &tm);
            snprintf(b + n, sizeof b - n, ".%03dZ", (int)fmod(ms, 1000.0));
        }
    }
    return bl_strdup(b);
}

static const char *state_name(bl_run_state s) {
    return s == BL_RUN_FAILED ? "failed" : s == BL_RUN_INCOMPLETE ? "incomplete" : "complete";
}

/* Fills r's fields from run rec. 1 on success, 0 out of memory. */
static int fill_row(row *r, const bl_run_record *rec, const bl_import_plan *p) {
    r->f[C_APP] = field_text(rec->app_id);
    r->f[C_ATTEMPT] = field_text(rec->attempt);
    r->f[C_ENGINE] = field_text(rec->engine);
    r->f[C_NAME] = field_text(rec->name);
    r->f[C_VERSION] = field_text(rec->version);
    r->f[C_MASTER] = field_text(rec->master);
    r->f[C_DEPLOY] = field_text(rec->deploy_mode);
    r->f[C_START] = field_time(rec->start_ms);
    r->f[C_RUNTIME] = field_num((rec->end_ms - rec->start_ms) / 1000.0, 0);
    r->f[C_HOSTS] = field_long(rec->hosts);
    r->f[C_EXECUTORS] = field_long(rec->executors);
    r->f[C_DYNAMIC] = bl_strdup(rec->dynamic_allocation < 0 ? "" : rec->dynamic_allocation ? "true" : "false");
    r->f[C_CORES] = field_long(rec->executor_cores);
    r->f[C_MEMORY] = field_num(rec->executor_memory_mb, 1);
    /* what the cluster had at the peak: cluster totals, as C3O's slots and memory (per machine × machines) */
    /* Spark: cores and memory are per executor; Flink: per task manager (its slots and process size) */
    const long units = strcmp(rec->engine, "flink") == 0 ? rec->hosts : rec->executors;
    const double n = units >= 1 ? (double)units : NAN;
    r->f[C_TOTAL_CORES] = field_num(rec->executor_cores >= 1 ? n * (double)rec->executor_cores : NAN, 1);
    r->f[C_TOTAL_MEMORY] = field_num(n * rec->executor_memory_mb, 1);
    r->f[C_INPUT_MB] = field_num(rec->input_bytes / 1e6, 1);
    r->f[C_INPUT] = field_num(rec->input_bytes, 1);
    r->f[C_SHUFFLE_R] = field_num(rec->shuffle_read_bytes, 1);
    r->f[C_SHUFFLE_W] = field_num(rec->shuffle_write_bytes, 1);
    r->f[C_STATE] = bl_strdup(state_name(rec->state));
    r->f[C_ARGS] = field_text(p->redact ? "" : rec->args);
    for (size_t k = 0; k < p->n_props; k++) {
        const char *v = bl_run_record_get(rec, p->prop_key[k]);
        r->f[N_COLS + k] = field_text(v ? v : "");
    }
    for (size_t c = 0; c < N_COLS + p->n_props; c++)
        if (!r->f[c]) return 0;
    return 1;
}

/* A run's identity as one string: engine, application and attempt, as field_text writes them. */
static char *run_key(const char *engine, const char *app, const char *attempt) {
    char *e = field_text(engine), *a = field_text(app), *t = field_text(attempt);
    char *k = e && a && t ? malloc(strlen(e) + strlen(a) + strlen(t) + 3) : NULL;
    if (k) sprintf(k, "%s\x1f%s\x1f%s", e, a, t);
    free(e);
    free(a);
    free(t);
    return k;
}

static int cmp_key(const void *x, const void *y) { return strcmp(*(char *const *)x, *(char *const *)y); }

/* The rows an earlier import wrote to path (absent: none). BL_EFORMAT when its columns are not this
 * import's (another program's file, or other --property columns). */
static bl_status read_existing(const char *path, const bl_import_plan *p, table *t, bl_error *err) {
    FILE *probe = fopen(path, "rb");
    if (!probe) return BL_OK; /* a new file (a folder or an unreadable one fails at the save) */
    fclose(probe);
    bl_reader *r = NULL;
    bl_status st = bl_reader_open(&r, path, '\t', err);
    if (st != BL_OK) return st;
    const size_t want = N_COLS + p->n_props;
    int same = bl_reader_ncols(r) == want;
    for (size_t c = 0; same && c < want; c++)
        same = strcmp(bl_reader_colname(r, c), c < N_COLS ? COLS[c] : p->prop_name[c - N_COLS]) == 0;
    if (!same) {
        char have[300] = "";
        for (size_t c = 0, len = 0; c < bl_reader_ncols(r) && len + 40 < sizeof have; c++)
            len += (size_t)snprintf(have + len, sizeof have - len, "%s%.30s", c ? " " : "", bl_reader_colname(r, c));
        st = bl_seterr(err, BL_EFORMAT, "%s:1:1: its columns (%s%s) are not those this import writes (%zu fixed ones%s): "
                       "it holds no earlier import of these logs with these --property columns; import into another "
                       "file, or give the --property columns it was imported with", path, have,
                       strlen(have) + 40 >= sizeof have ? " ..." : "", (size_t)N_COLS,
                       p->n_props ? " and the --property columns" : "");
        bl_reader_free(r);
        return st;
    }
    char **fields;
    while ((st = bl_reader_next(r, &fields, err)) == BL_OK && fields) {
        row *w = table_add(t);
        if (!w) {
            st = bl_seterr(err, BL_ENOMEM, "out of memory");
            break;
        }
        for (size_t c = 0; c < want; c++)
            if (!(w->f[c] = bl_strdup(fields[c]))) {
                st = bl_seterr(err, BL_ENOMEM, "out of memory");
                break;
            }
        if (st != BL_OK) break;
    }
    bl_reader_free(r);
    return st;
}

/* 1 when every row has a value in column c. */
static int known_in_all(const table *t, size_t c) {
    for (size_t i = 0; i < t->n; i++)
        if (!t->rows[i].f[c][0]) return 0;
    return t->n > 0;
}

/* 1 when a property of this name is given by the user (a --property or --const). */
static int user_names(const bl_import_plan *p, const char *name) {
    for (size_t k = 0; k < p->n_props; k++)
        if (strcmp(p->prop_name[k], name) == 0) return 1;
    for (size_t k = 0; k < p->n_consts; k++)
        if (strcmp(p->const_name[k], name) == 0) return 1;
    return 0;
}

/* The schema a user starts from: the scale-out and runtime, the properties every row knows, the
 * user's own. Written only where no schema is (it is the user's to edit). */
static bl_status write_schema(const char *path, const table *t, const bl_import_plan *p, bl_error *err) {
    bl_file_out *o = NULL;
    bl_status st = bl_file_out_open(path, &o, err);
    if (st != BL_OK) return st;
    FILE *f = bl_file_out_stream(o, err);
    if (!f) {
        bl_file_out_abort(o);
        return err ? err->status : BL_ENOMEM;
    }
    fprintf(f, "bellamy-schema 1\n"
               "# Written by bellamy-train import (datasets/README.md: the format). A property describes a run's\n"
               "# context: what the job is, what it reads, where it runs. Edit this file to say so for your\n"
               "# jobs; later imports into the same data file keep it as it is.\n"
               "scale_out %s%s\n"
               "runtime runtime_s s\n",
            p->scale_out_executors ? "executors" : "hosts",
            p->scale_out_executors ? "  # the most executors at once (--scale-out executors)"
                                   : "  # distinct executor hosts when the most executors ran");
    if (!user_names(p, "job_type")) fprintf(f, "property job_type essential text column name\n");
    if (!user_names(p, "job_args")) {
        if (p->redact) fprintf(f, "# job_args: left out, the arguments were redacted (--redact)\n");
        else fprintf(f, "property job_args essential text column args\n");
    }
    if (!user_names(p, "data_size_MB")) {
        if (known_in_all(t, C_INPUT_MB)) fprintf(f, "property data_size_MB essential number column input_mb\n");
        else fprintf(f, "# data_size_MB: left out, some runs report no input bytes (column input_mb)\n");
    }
    if (!user_names(p, "environment")) fprintf(f, "property environment essential text column master\n");
    /* the cluster's cores and memory as totals (the schema's cluster_totals: the model reads them per
     * machine as it reads the scale-out), as C3O's slots and memory */
    const int slots = !user_names(p, "slots") && known_in_all(t, C_TOTAL_CORES);
    const int memory = !user_names(p, "memory") && known_in_all(t, C_TOTAL_MEMORY);
    if (slots) fprintf(f, "property slots optional number column total_cores\n");
    else if (!user_names(p, "slots")) fprintf(f, "# slots: left out, the executors' cores are unknown for some runs\n");
    if (memory) fprintf(f, "property memory optional number column total_memory_mb\n");
    else if (!user_names(p, "memory")) fprintf(f, "# memory: left out, the executors' memory is unknown for some runs\n");

    for (size_t k = 0; k < p->n_props; k++)
        fprintf(f, "property %s essential text column %s  # from %s\n", p->prop_name[k], p->prop_name[k],
                p->prop_key[k]);
    for (size_t k = 0; k < p->n_consts; k++) {
        fprintf(f, "property %s essential text const \"", p->const_name[k]);
        for (const char *c = p->const_val[k]; *c; c++) {
            if (*c == '"' || *c == '\\') fputc('\\', f);
            fputc((unsigned char)*c < 0x20 ? ' ' : *c, f);
        }
        fprintf(f, "\"\n");
    }
    if (slots || memory)
        fprintf(f, "cluster_totals%s%s\n", slots ? " total_cores" : "", memory ? " total_memory_mb" : "");
    return bl_file_out_commit(o, err);
}

bl_status bl_import_write(bl_run_record *const *recs, size_t n, const bl_import_plan *p, const char *data_path,
                          const char *schema_path, bl_import_counts *counts, bl_error *err) {
    BL_CHECK_ARG(p && data_path && counts && (recs || n == 0), err, "bl_import_write: NULL argument");
    memset(counts, 0, sizeof *counts);
    table t = {N_COLS + p->n_props, 0, 0, NULL};
    bl_status st = read_existing(data_path, p, &t, err);
    counts->kept = t.n;
    /* the runs the file holds, by engine, application and attempt (sorted, for a binary search) */
    char **keys = st == BL_OK ? malloc((t.n ? t.n : 1) * sizeof *keys) : NULL;
    if (st == BL_OK && !keys) st = bl_seterr(err, BL_ENOMEM, "out of memory");
    size_t nk = 0;
    for (size_t j = 0; st == BL_OK && j < t.n; j++, nk++)
        if (!(keys[j] = run_key(t.rows[j].f[C_ENGINE], t.rows[j].f[C_APP], t.rows[j].f[C_ATTEMPT])))
            st = bl_seterr(err, BL_ENOMEM, "out of memory");
    if (st == BL_OK) qsort(keys, nk, sizeof *keys, cmp_key);
    for (size_t i = 0; st == BL_OK && i < n; i++) {
        const bl_run_record *rec = recs[i];
        char *k = run_key(rec->engine, rec->app_id, rec->attempt);
        if (!k) {
            st = bl_seterr(err, BL_ENOMEM, "out of memory");
            break;
        }
        const int seen = nk && bsearch(&k, keys, nk, sizeof *keys, cmp_key) != NULL;
        free(k);
        if (seen) {
            counts->already++;
            continue;
        }
        row *r = table_add(&t);
        if (!r || !fill_row(r, rec, p)) st = bl_seterr(err, BL_ENOMEM, "out of memory");
        else counts->added++;
    }
    bl_file_out *o = NULL;
    if (st == BL_OK) st = bl_file_out_open(data_path, &o, err);
    FILE *f = st == BL_OK ? bl_file_out_stream(o, err) : NULL;
    if (st == BL_OK && !f) st = err ? err->status : BL_ENOMEM;
    if (st == BL_OK) {
        for (size_t c = 0; c < t.ncols; c++) fprintf(f, "%s%s", c ? "\t" : "", c < N_COLS ? COLS[c] : p->prop_name[c - N_COLS]);
        fputc('\n', f);
        for (size_t i = 0; i < t.n; i++) {
            for (size_t c = 0; c < t.ncols; c++) fprintf(f, "%s%s", c ? "\t" : "", t.rows[i].f[c]);
            fputc('\n', f);
        }
        st = bl_file_out_commit(o, err);
        o = NULL;
    }
    bl_file_out_abort(o);
    for (size_t j = 0; j < nk; j++) free(keys[j]);
    free(keys);
    if (st == BL_OK && schema_path) {
        FILE *s = fopen(schema_path, "rb");
        if (s) fclose(s); /* the user's: kept */
        else if ((st = write_schema(schema_path, &t, p, err)) == BL_OK) counts->schema_written = 1;
    }
    table_free(&t);
    return st;
}
