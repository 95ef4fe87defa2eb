/* collect.c — an import as a whole (train.h: bl_import_histories): the logs under the user's paths are
 * found (folders recursively, a Spark rolling log's folder as one log) and read, the runs filtered —
 * those still running or that never ended, failed ones (unless asked for), duplicates, a clock that
 * ran backwards, no machine to count — each left out named with the reason, and the rest written by
 * write.c, into one data file or one per application name. Not here: reading a log (spark.c,
 * flink.c) or the columns of the data file (write.c). */
#include "import/import.h"
#include "bellamy/train.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <xxhash.h>

#include "common/error.h"
#include "common/str.h"
#include "common/suggest.h"
#include "common/utf8.h"
#include "data/schema.h"

#define NOTES_MAX 10000 /* notes kept (the count goes on) */

struct bl_import_result {
    bl_import_summary sum;
    size_t            n_notes, notes_dropped;
    char            **notes;
    size_t            n_out;
    char            **out_data, **out_schema;
    size_t           *out_added;
    int              *out_schema_new; /* 1: the schema was written now; 0: one was there (kept) */
};

typedef struct state {
    bl_import_result *res;
    bl_run_record   **runs;
    size_t            n, cap;
    bl_status         oom;
    dev_t            *seen_dev;  /* the folders searched, by device and inode: links that lead back */
    ino_t            *seen_ino;
    size_t            n_seen;
} state;

static void note(bl_import_result *res, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(bl_import_result *res, const char *fmt, ...) {
    if (res->n_notes == NOTES_MAX) {
        res->notes_dropped++;
        return;
    }
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    /* text from logs (ids, names, messages) never reaches a terminal as control characters, nor the
     * JSON as invalid UTF-8 */
    for (char *c = buf; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f) *c = '?';
    bl_utf8_sanitize(buf, strlen(buf));
    char **n = realloc(res->notes, (res->n_notes + 1) * sizeof *n);
    char *c = n ? bl_strdup(buf) : NULL;
    if (n) res->notes = n;
    if (!c) {
        res->notes_dropped++;
        return;
    }
    res->notes[res->n_notes++] = c;
}

static void sink_note(void *ctx, const char *file, size_t line, const char *what) {
    state *s = ctx;
    if (line) note(s->res, "%s:%zu: %s", file, line, what);
    else note(s->res, "%s: %s", file, what);
}

static bl_status sink_record(void *ctx, bl_run_record *r, bl_error *err) {
    state *s = ctx;
    if (s->n == s->cap) {
        const size_t cap = s->cap ? 2 * s->cap : 64;
        bl_run_record **n = realloc(s->runs, cap * sizeof *n);
        if (!n) {
            bl_run_record_free(r);
            return bl_seterr(err, BL_ENOMEM, "out of memory");
        }
        s->runs = n;
        s->cap = cap;
    }
    s->runs[s->n++] = r;
    s->res->sum.runs_found++;
    s->res->sum.unknown_events += r->unknown_events;
    return BL_OK;
}

static int cmp_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int ends_with(const char *s, const char *suffix) {
    const size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* Reads one log at path (a file, or a Spark rolling log's folder). A log that cannot be read is named
 * and skipped, the others go on: one bad file in a history of thousands must not stop the import. */
static bl_status read_log(const char *path, int rolling, state *s, bl_error *err) {
    bl_import_sink sink = {s, sink_record, sink_note};
    bl_error e = {BL_OK, ""};
    bl_status st;
    if (rolling || bl_spark_sniff(path)) st = bl_spark_read_log(path, &sink, &e);
    else if (bl_flink_sniff(path)) st = bl_flink_read(path, &sink, &e);
    else {
        note(s->res, "%s: neither a Spark event log nor a Flink job archive; skipped", path);
        return BL_OK;
    }
    s->res->sum.logs++;
    if (st == BL_ENOMEM) return bl_seterr(err, st, "%s", e.message);
    if (st != BL_OK) {
        s->res->sum.logs_failed++;
        note(s->res, "%s; skipped", e.message);
    }
    return BL_OK;
}

/* Every log under path: a file, a rolling log's folder, or a folder searched recursively (entries in
 * name order, hidden ones and Hadoop's .crc checksums left alone). depth bounds symbolic-link loops. */
static bl_status walk(const char *path, int depth, state *s, bl_error *err) {
    struct stat sb;
    if (stat(path, &sb) != 0) { /* a path the user gave is an error; one found in a folder, a note */
        if (depth == 0) return bl_seterr(err, BL_EIO, "%s: cannot open: %s", path, strerror(errno));
        note(s->res, "%s: cannot open: %s; skipped", path, strerror(errno));
        s->res->sum.logs_failed++;
        return BL_OK;
    }
    if (!S_ISDIR(sb.st_mode)) {
        if (!S_ISREG(sb.st_mode)) {
            note(s->res, "%s: not a regular file (a device, a pipe or a socket); skipped", path);
            return BL_OK;
        }
        FILE *probe = fopen(path, "rb"); /* unreadable: said as such, not as "no event log" */
        if (!probe) {
            note(s->res, "%s: cannot read: %s; skipped", path, strerror(errno));
            s->res->sum.logs_failed++;
            return BL_OK;
        }
        fclose(probe);
        return read_log(path, 0, s, err);
    }
    for (size_t i = 0; i < s->n_seen; i++) /* a folder reached again (links to a parent): once */
        if (s->seen_dev[i] == sb.st_dev && s->seen_ino[i] == sb.st_ino) {
            if (depth > 0) note(s->res, "%s: a folder already searched (a link to it); not searched again", path);
            return BL_OK;
        }
    if (s->n_seen % 64 == 0) {
        dev_t *nd = realloc(s->seen_dev, (s->n_seen + 64) * sizeof *nd);
        if (nd) s->seen_dev = nd;
        ino_t *ni = nd ? realloc(s->seen_ino, (s->n_seen + 64) * sizeof *ni) : NULL;
        if (!ni) return bl_seterr(err, BL_ENOMEM, "out of memory");
        s->seen_ino = ni;
    }
    s->seen_dev[s->n_seen] = sb.st_dev;
    s->seen_ino[s->n_seen++] = sb.st_ino;
    const char *base = strrchr(path, '/');
    base = base && base[1] ? base + 1 : path;
    if (strncmp(base, "eventlog_v2_", 12) == 0) return read_log(path, 1, s, err);
    if (depth > 32) {
        note(s->res, "%s: folders nested more than 32 deep; not searched", path);
        return BL_OK;
    }
    DIR *d = opendir(path);
    if (!d) {
        if (depth == 0) return bl_seterr(err, BL_EIO, "%s: cannot open the folder: %s", path, strerror(errno));
        note(s->res, "%s: cannot open the folder: %s; skipped", path, strerror(errno));
        s->res->sum.logs_failed++;
        return BL_OK;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    bl_status st = BL_OK;
    for (struct dirent *de; st == BL_OK && (de = readdir(d)) != NULL;) {
        if (de->d_name[0] == '.' || ends_with(de->d_name, ".crc")) continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            char **nn = realloc(names, cap * sizeof *nn);
            if (!nn) st = bl_seterr(err, BL_ENOMEM, "out of memory");
            else names = nn;
        }
        if (st == BL_OK && !(names[n++] = bl_strdup(de->d_name))) st = bl_seterr(err, BL_ENOMEM, "out of memory");
    }
    closedir(d);
    if (st == BL_OK) qsort(names, n, sizeof *names, cmp_name);
    const size_t before = s->res->sum.logs;
    for (size_t i = 0; i < n; i++) {
        if (st == BL_OK) {
            char *child = malloc(strlen(path) + strlen(names[i]) + 2);
            if (!child) st = bl_seterr(err, BL_ENOMEM, "out of memory");
            else {
                sprintf(child, "%s%s%s", path, ends_with(path, "/") ? "" : "/", names[i]);
                st = walk(child, depth + 1, s, err);
                free(child);
            }
        }
        free(names[i]);
    }
    free(names);
    if (st == BL_OK && depth == 0 && s->res->sum.logs == before)
        note(s->res, "%s: a folder without Spark event logs or Flink job archives", path);
    return st;
}

/* A run and the order it was read in, for finding copies of one run by sorting. */
typedef struct ranked {
    const bl_run_record *r;
    size_t at;
} ranked;

/* By identity (engine, application, attempt), then by reading order. */
static int cmp_ranked(const void *x, const void *y) {
    const ranked *a = x, *b = y;
    int c = strcmp(a->r->engine, b->r->engine);
    if (!c) c = strcmp(a->r->app_id, b->r->app_id);
    if (!c) c = strcmp(a->r->attempt, b->r->attempt);
    return c ? c : (a->at > b->at) - (a->at < b->at);
}

/* Why run r cannot be a row (NULL: it can), into buf. */
static const char *unusable(const bl_run_record *r, const bl_import_opts *o, char *buf, size_t cap) {
    const double secs = (r->end_ms - r->start_ms) / 1000.0;
    const long scale = o->scale_out == BL_IMPORT_EXECUTORS ? r->executors : r->hosts;
    if (r->state == BL_RUN_INCOMPLETE) snprintf(buf, cap, "%s", r->why[0] ? r->why : "it never ended");
    else if (r->state == BL_RUN_FAILED && !o->include_failed)
        snprintf(buf, cap, "%s (--include-failed imports it)", r->why[0] ? r->why : "it failed");
    else if (!isfinite(r->start_ms) || !isfinite(r->end_ms)) snprintf(buf, cap, "its start or end time is missing");
    else if (!(secs > 0))
        snprintf(buf, cap, "it ends %.3f s %s it starts (a clock that ran backwards?)", fabs(secs),
                 secs < 0 ? "before" : "when");
    else if (secs > 1e12) snprintf(buf, cap, "it ran %.3g s by its time stamps, more than 1e12 s (damaged time stamps?)", secs);
    else if (scale < 1)
        snprintf(buf, cap, "no %s to count as its scale-out%s", o->scale_out == BL_IMPORT_EXECUTORS ? "executor" :
                 "executor host", o->scale_out == BL_IMPORT_EXECUTORS ? "" : " (--scale-out executors counts executors)");
    else return NULL;
    return buf;
}

static void skip_note(state *s, const bl_run_record *r, const char *why) {
    note(s->res, "%s: %s%s%s%s: %s; skipped", r->source, r->engine[0] == 'f' ? "job " : "application ",
         r->app_id[0] ? r->app_id : "(no id)", r->attempt[0] ? ", attempt " : "", r->attempt, why);
    s->res->sum.skipped++;
}

/* Keeps the runs that can be rows; names each one left out and why. Copies of one run (a log in two
 * folders) are found among the usable ones by sorting: the first read is kept. */
static bl_status filter(state *s, const bl_import_opts *o, bl_error *err) {
    ranked *rk = malloc((s->n ? s->n : 1) * sizeof *rk);
    unsigned char *keep = malloc(s->n ? s->n : 1);
    if (!rk || !keep) {
        free(rk);
        free(keep);
        return bl_seterr(err, BL_ENOMEM, "out of memory");
    }
    size_t nr = 0;
    for (size_t i = 0; i < s->n; i++) {
        char buf[512];
        const char *why = unusable(s->runs[i], o, buf, sizeof buf);
        if (why) skip_note(s, s->runs[i], why);
        else rk[nr++] = (ranked){s->runs[i], i};
        keep[i] = why == NULL;
    }
    qsort(rk, nr, sizeof *rk, cmp_ranked);
    for (size_t i = 1, head = 0; i < nr; i++) {
        const bl_run_record *a = rk[head].r, *b = rk[i].r;
        if (strcmp(a->engine, b->engine) || strcmp(a->app_id, b->app_id) || strcmp(a->attempt, b->attempt)) {
            head = i;
            continue;
        }
        char buf[1024]; /* a copy of rk[head], which was read first */
        snprintf(buf, sizeof buf, "the same run as in %s", a->source);
        if (fabs((a->end_ms - a->start_ms) - (b->end_ms - b->start_ms)) > 1)
            snprintf(buf + strlen(buf), sizeof buf - strlen(buf), " (though the two give other runtimes: copies of "
                     "different ages, or two applications under one id?)");
        skip_note(s, b, buf);
        keep[rk[i].at] = 0;
    }
    free(rk);
    /* the kept in reading order; the left out freed (only now: a copy's note names the first's log) */
    size_t k = 0;
    for (size_t i = 0; i < s->n; i++) {
        if (keep[i]) s->runs[k++] = s->runs[i];
        else bl_run_record_free(s->runs[i]);
    }
    s->n = k;
    free(keep);
    return BL_OK;
}

/* A file name for application name: letters, digits, '-', '_' and '.' kept, others '_'; empty or
 * taken by another name: a hash of the name added. */
static void name_file(const char *name, char *buf, size_t cap) {
    size_t n = 0;
    int changed = 0;
    for (const char *c = name; *c && n + 10 < cap; c++) {
        const int keep = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '-' ||
                         *c == '_' || (*c == '.' && n > 0);
        buf[n++] = keep ? *c : '_';
        changed |= !keep || n == 80;
        if (n == 80) break;
    }
    buf[n] = '\0';
    /* a name written otherwise than it is ("a b" and "a/b" both a_b) gets its own hash: the same file
     * for the same name in every import, never one for two names */
    if (n == 0) snprintf(buf, cap, "unnamed-%08x", (unsigned)XXH32(name, strlen(name), 0));
    else if (changed || strlen(name) > n) snprintf(buf + n, cap - n, "-%08x", (unsigned)XXH32(name, strlen(name), 0));
}

static bl_status add_output(bl_import_result *res, const char *data, const char *schema, size_t added, int schema_new,
                            bl_error *err) {
    char **d = realloc(res->out_data, (res->n_out + 1) * sizeof *d);
    if (d) res->out_data = d;
    char **sc = d ? realloc(res->out_schema, (res->n_out + 1) * sizeof *sc) : NULL;
    if (sc) res->out_schema = sc;
    size_t *a = sc ? realloc(res->out_added, (res->n_out + 1) * sizeof *a) : NULL;
    if (a) res->out_added = a;
    int *sn = a ? realloc(res->out_schema_new, (res->n_out + 1) * sizeof *sn) : NULL;
    if (sn) res->out_schema_new = sn;
    if (sn) sn[res->n_out] = schema_new;
    char *dc = sn ? bl_strdup(data) : NULL, *scc = dc ? bl_strdup(schema) : NULL;
    if (!scc) {
        free(dc);
        return bl_seterr(err, BL_ENOMEM, "out of memory");
    }
    res->out_data[res->n_out] = dc;
    res->out_schema[res->n_out] = scc;
    res->out_added[res->n_out++] = added;
    return BL_OK;
}

/* Splits "NAME=REST" into copies; BL_EINVAL naming the option when malformed. A --const VALUE may be
 * empty, as a schema's const "" is a constant (a --property KEY names a configuration key: never). */
static bl_status split_pair(const char *flag, const char *item, int check_name, char **name, char **rest,
                            bl_error *err) {
    const char *eq = item ? strchr(item, '=') : NULL;
    if (!eq || eq == item || (check_name == 1 && !eq[1]))
        return bl_seterr(err, BL_EINVAL, "%s '%.100s': write NAME=%s", flag, item ? item : "",
                         check_name == 1 ? "CONFIGURATION_KEY, e.g. machine_type=spark.yarn.instanceType" :
                                           "VALUE, e.g. environment=\"our yarn cluster\" (NAME= for an empty one)");
    *name = bl_strndup(item, (size_t)(eq - item));
    *rest = bl_strdup(eq + 1);
    if (!*name || !*rest) return bl_seterr(err, BL_ENOMEM, "out of memory");
    int plain = 1; /* a schema's token and a data file's column: letters, digits and '_' */
    for (const char *c = *name; *c; c++)
        plain &= (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '_';
    if (!plain || !bl_schema_known_property(*name)) {
        char mean[300]; /* a misspelt name: the closest, as the schema parser suggests */
        bl_schema_suggest_property(*name, mean, sizeof mean);
        return bl_seterr(err, BL_EINVAL, "%s: '%.60s' is no property name a schema takes%s (known: %s; letters, "
                         "digits and _)", flag, *name, mean, bl_schema_known_list());
    }
    for (const char *c = *rest; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            return bl_seterr(err, BL_EINVAL, "%s %.60s=...: the %s holds a control character (a tab or a line break)",
                             flag, *name, check_name == 1 ? "key" : "value");
    /* a property's name never clashes with a fixed column: none is a schema's property name */
    return BL_OK;
}

static void plan_free(bl_import_plan *p) {
    for (size_t k = 0; k < p->n_props; k++) {
        free(p->prop_name[k]);
        free(p->prop_key[k]);
    }
    for (size_t k = 0; k < p->n_consts; k++) {
        free(p->const_name[k]);
        free(p->const_val[k]);
    }
    free(p->prop_name);
    free(p->prop_key);
    free(p->const_name);
    free(p->const_val);
}

static bl_status make_plan(const bl_import_opts *o, bl_import_plan *p, bl_error *err) {
    memset(p, 0, sizeof *p);
    p->scale_out_executors = o->scale_out == BL_IMPORT_EXECUTORS;
    p->redact = o->redact;
    const size_t np = o->n_properties, nc = o->n_consts;
    p->prop_name = calloc(np ? np : 1, sizeof *p->prop_name);
    p->prop_key = calloc(np ? np : 1, sizeof *p->prop_key);
    p->const_name = calloc(nc ? nc : 1, sizeof *p->const_name);
    p->const_val = calloc(nc ? nc : 1, sizeof *p->const_val);
    if (!p->prop_name || !p->prop_key || !p->const_name || !p->const_val) return bl_seterr(err, BL_ENOMEM, "out of memory");
    bl_status st = BL_OK;
    for (size_t k = 0; st == BL_OK && k < np; k++, p->n_props++)
        st = split_pair("--property", o->properties[k], 1, &p->prop_name[k], &p->prop_key[k], err);
    for (size_t k = 0; st == BL_OK && k < nc; k++, p->n_consts++)
        st = split_pair("--const", o->consts[k], 2, &p->const_name[k], &p->const_val[k], err);
    for (size_t a = 0; st == BL_OK && a < p->n_props + p->n_consts; a++) /* each name once */
        for (size_t b = 0; st == BL_OK && b < a; b++) {
            const char *x = a < p->n_props ? p->prop_name[a] : p->const_name[a - p->n_props];
            const char *y = b < p->n_props ? p->prop_name[b] : p->const_name[b - p->n_props];
            if (strcmp(x, y) == 0)
                st = bl_seterr(err, BL_EINVAL, "property '%s' is given twice (--property / --const): give it once", x);
        }
    return st;
}

/* Each --property key: no run that has it is a typo (an error, with the closest keys the runs have);
 * some runs without it get an empty value, said once. */
static bl_status check_keys(state *s, const bl_import_plan *p, bl_error *err) {
    for (size_t k = 0; k < p->n_props; k++) {
        size_t have = 0;
        for (size_t i = 0; i < s->n; i++) have += bl_run_record_get(s->runs[i], p->prop_key[k]) != NULL;
        if (have == s->n || s->n == 0) continue;
        if (have > 0) {
            note(s->res, "--property %s=%s: %zu of the %zu runs have no such configuration key: their %s is empty",
                 p->prop_name[k], p->prop_key[k], s->n - have, s->n, p->prop_name[k]);
            continue;
        }
        /* the keys of the first runs, for a did-you-mean */
        size_t nc = 0, cap = 0;
        const char **cands = NULL;
        for (size_t i = 0; i < s->n && i < 20; i++)
            for (size_t c = 0; c < s->runs[i]->n_conf; c++) {
                if (nc == cap) {
                    cap = cap ? 2 * cap : 256;
                    const char **n = realloc(cands, cap * sizeof *n);
                    if (!n) break;
                    cands = n;
                }
                if (nc < cap) cands[nc++] = s->runs[i]->conf_key[c];
            }
        char mean[300] = "";
        if (cands) bl_suggest(p->prop_key[k], cands, nc, "", mean, sizeof mean);
        free(cands);
        return bl_seterr(err, BL_EINVAL, "--property %s=%.200s: none of the %zu runs has that configuration key%s; "
                         "nothing written", p->prop_name[k], p->prop_key[k], s->n, mean);
    }
    return BL_OK;
}

void bl_import_opts_init(bl_import_opts *o) {
    if (!o) return;
    memset(o, 0, sizeof *o);
    o->size = sizeof *o;
    o->scale_out = BL_IMPORT_HOSTS;
}

bl_status bl_import_histories(const char *const *inputs, size_t n_inputs, const char *out, const char *schema_out,
                              const bl_import_opts *in, bl_import_result **res_out, bl_error *err) {
    BL_CHECK_ARG(res_out, err, "bl_import_histories: NULL result");
    *res_out = NULL;
    BL_CHECK_ARG(inputs && n_inputs > 0, err, "bl_import_histories: no logs given (files or folders)");
    BL_CHECK_ARG(out && *out, err, "bl_import_histories: no output given");
    bl_import_opts o;
    bl_import_opts_init(&o);
    if (in) {
        if (in->size <= sizeof(size_t) || in->size > sizeof o)
            return bl_seterr(err, BL_EINVAL, "bl_import_opts: size %zu is not one this library knows (%zu): start from "
                             "bl_import_opts_init", in->size, sizeof o);
        memcpy(&o, in, in->size);
        o.size = sizeof o;
    }
    BL_CHECK_ARG(o.scale_out == BL_IMPORT_HOSTS || o.scale_out == BL_IMPORT_EXECUTORS, err,
                 "bl_import_opts.scale_out %d: BL_IMPORT_HOSTS or BL_IMPORT_EXECUTORS", o.scale_out);
    BL_CHECK_ARG((o.n_properties == 0 || o.properties) && (o.n_consts == 0 || o.consts), err,
                 "bl_import_opts: properties or consts NULL with a count");
    BL_CHECK_ARG(!(o.group_by_name && schema_out), err, "bl_import_histories: with group_by_name each data file gets its "
                 "own schema beside it (give no schema path)");
    for (size_t i = 0; i < n_inputs; i++) BL_CHECK_ARG(inputs[i] && *inputs[i], err, "input %zu: an empty path", i + 1);
    if (schema_out && strcmp(schema_out, out) == 0)
        return bl_seterr(err, BL_EINVAL, "the schema and the data file are one path (%.200s): give the schema another",
                         out);
    struct stat osb;
    if (o.group_by_name && (stat(out, &osb) != 0 || !S_ISDIR(osb.st_mode))) /* said before any log is read */
        return bl_seterr(err, BL_EIO, "%s: with grouping by name the output is a folder, and it %s", out,
                         stat(out, &osb) != 0 ? "does not exist (create it first)" : "is no folder");
    bl_import_plan plan;
    bl_status st = make_plan(&o, &plan, err);
    if (st != BL_OK) {
        plan_free(&plan);
        return st;
    }
    state s = {calloc(1, sizeof *s.res), NULL, 0, 0, BL_OK, NULL, NULL, 0};
    if (!s.res) {
        plan_free(&plan);
        return bl_seterr(err, BL_ENOMEM, "out of memory");
    }
    for (size_t i = 0; st == BL_OK && i < n_inputs; i++) st = walk(inputs[i], 0, &s, err);
    if (st == BL_OK) st = filter(&s, &o, err);
    if (st == BL_OK) st = check_keys(&s, &plan, err);
    if (st == BL_OK && s.n == 0)
        st = bl_seterr(err, BL_EINVAL, "no run to import: %zu log%s read, %zu run%s found, %zu skipped (the notes say "
                       "why); nothing written", s.res->sum.logs, s.res->sum.logs == 1 ? "" : "s", s.res->sum.runs_found,
                       s.res->sum.runs_found == 1 ? "" : "s", s.res->sum.skipped);
    if (st == BL_OK && !o.group_by_name) {
        char *sch = NULL;
        if (!schema_out) { /* beside the data file: runs.tsv → runs.schema */
            const char *dot = strrchr(out, '.'), *slash = strrchr(out, '/');
            const size_t stem = dot && (!slash || dot > slash) ? (size_t)(dot - out) : strlen(out);
            if ((sch = malloc(stem + 8))) sprintf(sch, "%.*s.schema", (int)stem, out);
        }
        bl_import_counts c;
        if (!schema_out && !sch) st = bl_seterr(err, BL_ENOMEM, "out of memory");
        else st = bl_import_write(s.runs, s.n, &plan, out, schema_out ? schema_out : sch, &c, err);
        if (st == BL_OK) {
            s.res->sum.added = c.added;
            s.res->sum.kept = c.kept;
            s.res->sum.already = c.already;
            st = add_output(s.res, out, schema_out ? schema_out : sch, c.added, c.schema_written, err);
        }
        free(sch);
    } else if (st == BL_OK) { /* one data set per application name: the unit a model is pre-trained for */
        char **files = calloc(s.n ? s.n : 1, sizeof *files);
        if (st == BL_OK && !files) st = bl_seterr(err, BL_ENOMEM, "out of memory");
        for (size_t i = 0; st == BL_OK && i < s.n; i++) {
            if (files[i]) continue;
            char base[128];
            name_file(s.runs[i]->name, base, sizeof base);
            bl_run_record **grp = malloc(s.n * sizeof *grp);
            char *data = malloc(strlen(out) + strlen(base) + 16), *sch = malloc(strlen(out) + strlen(base) + 16);
            if (!grp || !data || !sch) st = bl_seterr(err, BL_ENOMEM, "out of memory");
            size_t ng = 0;
            for (size_t j = i; st == BL_OK && j < s.n; j++)
                if (!files[j] && strcmp(s.runs[j]->name, s.runs[i]->name) == 0) {
                    grp[ng++] = s.runs[j];
                    if (!(files[j] = bl_strdup(base))) st = bl_seterr(err, BL_ENOMEM, "out of memory");
                }
            if (st == BL_OK) {
                sprintf(data, "%s/%s.tsv", out, base);
                sprintf(sch, "%s/%s.schema", out, base);
                bl_import_counts c;
                st = bl_import_write(grp, ng, &plan, data, sch, &c, err);
                if (st == BL_OK) {
                    s.res->sum.added += c.added;
                    s.res->sum.kept += c.kept;
                    s.res->sum.already += c.already;
                    st = add_output(s.res, data, sch, c.added, c.schema_written, err);
                }
            }
            free(grp);
            free(data);
            free(sch);
        }
        for (size_t i = 0; files && i < s.n; i++) free(files[i]);
        free(files);
    }
    for (size_t i = 0; i < s.n; i++) bl_run_record_free(s.runs[i]);
    free(s.runs);
    free(s.seen_dev);
    free(s.seen_ino);
    plan_free(&plan);
    if (st != BL_OK && s.res->n_out) /* say what was written before the failure */
        bl_prefixerr(err, "after writing %s%s", s.res->out_data[0], s.res->n_out > 1 ? " and more" : "");
    *res_out = s.res;
    return st;
}

void bl_import_result_free(bl_import_result *r) {
    if (!r) return;
    for (size_t i = 0; i < r->n_notes; i++) free(r->notes[i]);
    free(r->notes);
    for (size_t i = 0; i < r->n_out; i++) {
        free(r->out_data[i]);
        free(r->out_schema[i]);
    }
    free(r->out_data);
    free(r->out_schema);
    free(r->out_added);
    free(r->out_schema_new);
    free(r);
}

void bl_import_summarize(const bl_import_result *r, bl_import_summary *s) {
    if (!s) return;
    if (!r) {
        memset(s, 0, sizeof *s);
        return;
    }
    *s = r->sum;
    s->notes = r->n_notes + r->notes_dropped;
    s->outputs = r->n_out;
}

const char *bl_import_note(const bl_import_result *r, size_t i) { return r && i < r->n_notes ? r->notes[i] : NULL; }

bl_status bl_import_output(const bl_import_result *r, size_t i, const char **data, const char **schema, size_t *added,
                           int *schema_written) {
    if (!r) return BL_EINVAL;
    if (i >= r->n_out) return BL_ERANGE;
    if (data) *data = r->out_data[i];
    if (schema) *schema = r->out_schema[i];
    if (added) *added = r->out_added[i];
    if (schema_written) *schema_written = r->out_schema_new[i];
    return BL_OK;
}
