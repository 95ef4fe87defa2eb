/* spark.c — Spark event logs into run records (import.h): a file or a rolling log's folder, read line
 * by line through its codec (stream.c), each line one JSON event (Spark's JsonProtocol, 1.4 to 4.1).
 *
 * What is read, per application attempt:
 *   SparkListenerLogStart          "Spark Version"
 *   SparkListenerApplicationStart  "App Name", "App ID", "App Attempt ID" (absent in client mode), "Timestamp"
 *   SparkListenerApplicationEnd    "Timestamp" (none: INCOMPLETE, the log ends before the application does)
 *   SparkListenerEnvironmentUpdate "Spark Properties" (an object, or an array of [key, value] pairs), every
 *                                  one into the configuration; "System Properties" for sun.java.command
 *   SparkListenerExecutorAdded / Removed, and BlockManagerAdded / Removed (Spark 1.x logs without
 *                                  ExecutorAdded; compacted logs): the executors alive over time
 *   SparkListenerTaskEnd           "Task Metrics": input, shuffle read (remote + local), shuffle write
 *   SparkListenerJobEnd            "Job Result": a failed job makes the attempt FAILED
 * Other kinds of Spark's scheduler are known and passed over; any other kind (SQL, streaming, what a
 * newer Spark adds) is counted in unknown_events. Only the lines of the kinds read are parsed whole
 * (a line's kind is taken from its start, {"Event":"NAME"...); so a damaged line of a kind passed
 * over goes unnoticed, which costs nothing.
 *
 * Decisions (see also the functions below):
 *   - Executors: the most alive at once, the driver ("driver", "<driver>") never counted; hosts: the
 *     distinct hosts among them when that peak was first reached. In local mode (spark.master local,
 *     local[N], local[N,F], local[*]) the driver runs every task: executors 1, hosts 1, cores the
 *     driver's, memory spark.driver.memory.
 *   - One file is one attempt. A second SparkListenerApplicationStart after an ApplicationEnd starts
 *     another attempt (another record); one before it closes the first attempt as INCOMPLETE ("another
 *     attempt starts in the log before this one ends"), and the new one keeps the version and
 *     configuration read so far (a re-logged attempt writes no environment of its own).
 *   - Cores per executor: spark.executor.cores, else the executors' "Total Cores"; memory:
 *     spark.executor.memory by Spark's unit rules (memory_mb), Spark's default 1g when not set; the
 *     task metric sums are NaN when no task reported that metric at all.
 *   - Records are given only once the whole log was read: a cut or damaged stream gives none. A log
 *     of more than MAX_ATTEMPTS starts or MAX_CONF bytes of properties is refused (no real log is).
 *   - A compacted rolling log (an events_<n>_...compact part) has lost the task and job events of
 *     finished jobs and the ExecutorAdded of executors gone: its executors are counted from block
 *     managers (compaction keeps those), its input and shuffle totals are unknown (NaN), and failed
 *     jobs before the compaction are not known.
 * Not here: the codecs (stream.c), finding logs under a path and writing the data file (import.c). */
#include "import/import.h"
#include "import/stream.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "common/error.h"
#include "common/utf8.h"
#include "common/str.h"

#define MAX_NOTES 50        /* notes per log; past them only a count */
#define MAX_ATTEMPTS 64     /* application starts in one log before it is refused */
#define MAX_CONF ((size_t)256 << 20) /* bytes of properties kept for one log's records before it is refused */
#define WHY_MESSAGE 200     /* bytes of a failed job's message kept in why */

/* ---- strings to strings and counts: executors alive (id -> host), hosts alive (host -> count) --------- */

typedef struct snode {
    char *key, *val;
    long n;
    struct snode *next;
} snode;

typedef struct smap {
    snode **b;
    size_t nb, count;
} smap;

static size_t shash(const char *s) {
    size_t h = 1469598103934665603u; /* FNV-1a */
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211u;
    return h;
}

static snode *smap_find(const smap *m, const char *key) {
    if (!m->nb) return NULL;
    for (snode *n = m->b[shash(key) % m->nb]; n; n = n->next)
        if (strcmp(n->key, key) == 0) return n;
    return NULL;
}

/* A new entry for key (not present yet); NULL when out of memory. */
static snode *smap_add(smap *m, const char *key) {
    if (m->count + 1 > m->nb) {
        const size_t nb = m->nb ? m->nb * 2 : 16;
        snode **b = calloc(nb, sizeof *b);
        if (!b) return NULL;
        for (size_t i = 0; i < m->nb; i++)
            for (snode *n = m->b[i], *next; n; n = next) {
                next = n->next;
                const size_t k = shash(n->key) % nb;
                n->next = b[k];
                b[k] = n;
            }
        free(m->b);
        m->b = b;
        m->nb = nb;
    }
    snode *n = calloc(1, sizeof *n);
    if (!n || !(n->key = bl_strdup(key))) {
        free(n);
        return NULL;
    }
    const size_t k = shash(key) % m->nb;
    n->next = m->b[k];
    m->b[k] = n;
    m->count++;
    return n;
}

static void smap_del(smap *m, const char *key) {
    if (!m->nb) return;
    for (snode **p = &m->b[shash(key) % m->nb]; *p; p = &(*p)->next)
        if (strcmp((*p)->key, key) == 0) {
            snode *n = *p;
            *p = n->next;
            free(n->key);
            free(n->val);
            free(n);
            m->count--;
            return;
        }
}

static void smap_free(smap *m) {
    for (size_t i = 0; i < m->nb; i++)
        for (snode *n = m->b[i], *next; n; n = next) {
            next = n->next;
            free(n->key);
            free(n->val);
            free(n);
        }
    free(m->b);
    memset(m, 0, sizeof *m);
}

/* ---- executors over time ---------------------------------------------------------------------------- */

typedef struct tracker {
    smap alive, hosts;
    long peak, peak_hosts; /* the most executors alive at once; distinct hosts when first reached */
    int seen;              /* an add event of this source was read (the driver's too) */
} tracker;

static int is_driver(const char *id) { return strcmp(id, "driver") == 0 || strcmp(id, "<driver>") == 0; }

static void host_drop(tracker *t, const char *host) {
    snode *h = smap_find(&t->hosts, host);
    if (h && --h->n <= 0) smap_del(&t->hosts, host);
}

/* 0, or -1 when out of memory. */
static int track_add(tracker *t, const char *id, const char *host) {
    t->seen = 1;
    if (is_driver(id)) return 0;
    snode *e = smap_find(&t->alive, id);
    if (e && strcmp(e->val, host) == 0) return 0; /* told again (ExecutorAdded, then a re-registration) */
    char *hcopy = bl_strdup(host);
    if (!hcopy) return -1;
    snode *h = smap_find(&t->hosts, host);
    if (!h && !(h = smap_add(&t->hosts, host))) {
        free(hcopy);
        return -1;
    }
    if (!e && !(e = smap_add(&t->alive, id))) {
        if (h->n == 0) smap_del(&t->hosts, host);
        free(hcopy);
        return -1;
    }
    h->n++;
    if (e->val) host_drop(t, e->val); /* the same executor on another host: it moved */
    free(e->val);
    e->val = hcopy;
    if ((long)t->alive.count > t->peak) {
        t->peak = (long)t->alive.count;
        t->peak_hosts = (long)t->hosts.count;
    }
    return 0;
}

static void track_remove(tracker *t, const char *id) {
    snode *e = smap_find(&t->alive, id);
    if (!e) return; /* never added (a compacted or cut log): nothing to undo */
    host_drop(t, e->val);
    smap_del(&t->alive, id);
}

/* ---- an attempt being read -------------------------------------------------------------------------- */

/* Where an event stands: its file (a part of a rolling log) and line; a note about a value names the
 * event that carries it, which in a rolling log may be in another part than the attempt's start. */
typedef struct place {
    const char *file;
    size_t line;
} place;

typedef struct attempt {
    bl_run_record *r;
    int started, ended, start_bad, end_bad, superseded, has_props;
    tracker ex, bm;              /* from ExecutorAdded/Removed, from BlockManagerAdded/Removed */
    long driver_cores, max_cores;/* Total Cores of the driver's ExecutorAdded; the largest of executors' */
    double in, sr, sw;           /* task metric sums, and whether any task gave each */
    int has_in, has_sr, has_sw;
    int failed;
    long failed_job;
    char *failed_msg, *command;  /* the first failed job's message; sun.java.command */
    size_t start_line;
    const char *start_file;
    place end_at;                /* the SparkListenerApplicationEnd */
    place master_at, mem_at[2];  /* the EnvironmentUpdate that set spark.master, spark.executor.memory and
                                    spark.driver.memory last (finish() notes their values) */
} attempt;

static void attempt_free(attempt *a) {
    if (!a) return;
    bl_run_record_free(a->r);
    smap_free(&a->ex.alive);
    smap_free(&a->ex.hosts);
    smap_free(&a->bm.alive);
    smap_free(&a->bm.hosts);
    free(a->failed_msg);
    free(a->command);
    free(a);
}

typedef struct reader {
    const bl_import_sink *sink;
    const char *source;  /* the log: the file or the folder */
    const char *file;    /* the file being read (a part of a rolling log) */
    size_t line;
    size_t notes, notes_left_out;
    attempt **att;
    size_t n_att;
    int inprogress, compacted, seen_event;
    size_t conf_bytes;   /* properties kept so far, all attempts together */
    struct part *parts;  /* a rolling log's parts */
    size_t n_parts;
} reader;

static void note(reader *rd, size_t line, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static void vnote(reader *rd, const char *file, size_t line, const char *fmt, va_list ap) {
    if (!rd->sink || !rd->sink->note) return;
    if (rd->notes >= MAX_NOTES) {
        rd->notes_left_out++;
        return;
    }
    rd->notes++;
    char what[1024];
    vsnprintf(what, sizeof what, fmt, ap);
    rd->sink->note(rd->sink->ctx, file, line, what);
}

static void note(reader *rd, size_t line, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vnote(rd, rd->file, line, fmt, ap);
    va_end(ap);
}

/* A note at another place than the line being read (finish() notes once the whole log was read). */
static void note_at(reader *rd, place at, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static void note_at(reader *rd, place at, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vnote(rd, at.file ? at.file : rd->file, at.line, fmt, ap);
    va_end(ap);
}

static bl_status oom(bl_error *err) { return bl_seterr(err, BL_ENOMEM, "out of memory"); }

/* A property into an attempt's configuration, within MAX_CONF for the whole log (a crafted log of
 * many attempts with huge properties would otherwise hold many copies of them). */
static bl_status conf_add(reader *rd, attempt *a, const char *key, const char *val, bl_error *err) {
    rd->conf_bytes += strlen(key) + strlen(val) + 2;
    if (rd->conf_bytes > MAX_CONF)
        return bl_seterr(err, BL_EFORMAT, "%s:%zu: more than %zu MiB of Spark properties in one log: refused", rd->file,
                         rd->line, MAX_CONF >> 20);
    return bl_run_record_conf(a->r, key, val, err);
}

static attempt *attempt_new(reader *rd, const attempt *from, bl_error *err) {
    if (rd->n_att >= MAX_ATTEMPTS) {
        bl_seterr(err, BL_EFORMAT, "%s:%zu: more than %d application attempts in one log: refused", rd->file,
                  rd->line, MAX_ATTEMPTS);
        return NULL;
    }
    attempt **na = realloc(rd->att, (rd->n_att + 1) * sizeof *na);
    attempt *a = na ? calloc(1, sizeof *a) : NULL;
    if (na) rd->att = na;
    if (!a || !(a->r = bl_run_record_new(rd->source, "spark"))) {
        free(a);
        oom(err);
        return NULL;
    }
    a->driver_cores = a->max_cores = -1;
    rd->att[rd->n_att++] = a;
    if (from) { /* a re-logged attempt: the version and configuration read so far */
        bl_status st = bl_run_record_set(&a->r->version, from->r->version, err);
        for (size_t i = 0; st == BL_OK && i < from->r->n_conf; i++)
            st = conf_add(rd, a, from->r->conf_key[i], from->r->conf_val[i], err);
        if (st == BL_OK && from->command && !(a->command = bl_strdup(from->command))) st = oom(err);
        if (st != BL_OK) return NULL; /* a is in rd->att: freed with the rest */
        a->has_props = from->has_props;
        a->master_at = from->master_at; /* notes about those values name where they were read */
        a->mem_at[0] = from->mem_at[0];
        a->mem_at[1] = from->mem_at[1];
    }
    return a;
}

/* ---- JSON helpers ----------------------------------------------------------------------------------- */

/* 1: a number in *v; 0: absent or null; -1: something else. */
static int get_num(const json_t *o, const char *key, double *v) {
    const json_t *x = json_object_get(o, key);
    if (!x || json_is_null(x)) return 0;
    if (!json_is_number(x)) return -1;
    *v = json_number_value(x);
    return isfinite(*v) ? 1 : -1;
}

/* 1: a string in *s; 0: absent or null; -1: something else. */
static int get_str(const json_t *o, const char *key, const char **s) {
    const json_t *x = json_object_get(o, key);
    if (!x || json_is_null(x)) return 0;
    if (!json_is_string(x)) return -1;
    *s = json_string_value(x);
    return 1;
}

/* 1: an object in *out; 0: absent or null; -1: something else. */
static int get_obj(const json_t *o, const char *key, const json_t **out) {
    const json_t *x = json_object_get(o, key);
    if (!x || json_is_null(x)) return 0;
    if (!json_is_object(x)) return -1;
    *out = x;
    return 1;
}

static const char *missing(int r) { return r == 0 ? "without" : "with a mistyped"; }

/* ---- events ----------------------------------------------------------------------------------------- */

enum kind {
    K_UNKNOWN = 0, K_PASS, /* counted / passed over */
    K_LOGSTART, K_APPSTART, K_APPEND, K_ENV, K_EXEC_ADD, K_EXEC_DEL, K_BM_ADD, K_BM_DEL, K_TASKEND, K_JOBEND
};

static const struct { const char *name; enum kind k; } kinds[] = {
    /* the most frequent first: a big log is mostly tasks and metrics updates */
    {"SparkListenerTaskEnd", K_TASKEND},
    {"SparkListenerTaskStart", K_PASS},
    {"SparkListenerBlockUpdated", K_PASS},
    {"SparkListenerExecutorMetricsUpdate", K_PASS},
    {"SparkListenerLogStart", K_LOGSTART},
    {"SparkListenerApplicationStart", K_APPSTART},
    {"SparkListenerApplicationEnd", K_APPEND},
    {"SparkListenerEnvironmentUpdate", K_ENV},
    {"SparkListenerExecutorAdded", K_EXEC_ADD},
    {"SparkListenerExecutorRemoved", K_EXEC_DEL},
    {"SparkListenerBlockManagerAdded", K_BM_ADD},
    {"SparkListenerBlockManagerRemoved", K_BM_DEL},
    {"SparkListenerJobEnd", K_JOBEND},
    /* the rest of Spark's scheduler events (JsonProtocol): known, not needed here */
    {"SparkListenerStageSubmitted", K_PASS},
    {"SparkListenerStageCompleted", K_PASS},
    {"SparkListenerTaskGettingResult", K_PASS},
    {"SparkListenerJobStart", K_PASS},
    {"SparkListenerUnpersistRDD", K_PASS},
    {"SparkListenerStageExecutorMetrics", K_PASS},
    {"SparkListenerResourceProfileAdded", K_PASS},
    {"SparkListenerExecutorBlacklisted", K_PASS},
    {"SparkListenerExecutorUnblacklisted", K_PASS},
    {"SparkListenerNodeBlacklisted", K_PASS},
    {"SparkListenerNodeUnblacklisted", K_PASS},
    {"SparkListenerExecutorBlacklistedForStage", K_PASS},
    {"SparkListenerNodeBlacklistedForStage", K_PASS},
    {"SparkListenerExecutorExcluded", K_PASS},
    {"SparkListenerExecutorUnexcluded", K_PASS},
    {"SparkListenerNodeExcluded", K_PASS},
    {"SparkListenerNodeUnexcluded", K_PASS},
    {"SparkListenerExecutorExcludedForStage", K_PASS},
    {"SparkListenerNodeExcludedForStage", K_PASS},
    {"SparkListenerSpeculativeTaskSubmitted", K_PASS},
    {"SparkListenerUnschedulableTaskSetAdded", K_PASS},
    {"SparkListenerUnschedulableTaskSetRemoved", K_PASS},
    {"SparkListenerMiscellaneousProcessAdded", K_PASS},
};

static enum kind kind_of(const char *name) {
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (strcmp(kinds[i].name, name) == 0) return kinds[i].k;
    return K_UNKNOWN;
}

/* The kind named at the start of a line as Spark writes it ({"Event":"NAME", ...}), without parsing
 * the rest; 0 when the line does not start so (then it is parsed whole). */
static int event_prefix(const char *s, size_t n, char *name, size_t cap) {
    size_t i = 0;
#define SKIP_WS while (i < n && (s[i] == ' ' || s[i] == '\t')) i++
    SKIP_WS;
    if (i >= n || s[i++] != '{') return 0;
    SKIP_WS;
    if (n - i < 7 || memcmp(s + i, "\"Event\"", 7) != 0) return 0;
    i += 7;
    SKIP_WS;
    if (i >= n || s[i++] != ':') return 0;
    SKIP_WS;
    if (i >= n || s[i++] != '"') return 0;
    size_t k = 0;
    for (; i < n && s[i] != '"'; i++) {
        if (s[i] == '\\' || (unsigned char)s[i] < 0x20 || k + 1 >= cap) return 0;
        name[k++] = s[i];
    }
    if (i >= n) return 0;
    name[k] = '\0';
    return 1;
#undef SKIP_WS
}

/* The attempt an event of kind k belongs to: a new one for the first event, and for a start (or what
 * precedes a start: LogStart, EnvironmentUpdate) once the current attempt has ended or started. */
static attempt *attempt_for(reader *rd, enum kind k, bl_error *err) {
    attempt *cur = rd->n_att ? rd->att[rd->n_att - 1] : NULL;
    if (!cur) return attempt_new(rd, NULL, err);
    if (cur->ended && (k == K_APPSTART || k == K_LOGSTART || k == K_ENV)) return attempt_new(rd, NULL, err);
    if (k == K_APPSTART && cur->started) {
        const int same = cur->start_file == rd->file; /* else the first starts in an earlier part */
        note(rd, rd->line,
             "a second SparkListenerApplicationStart before the first attempt's end (from %s%s%zu): the first "
             "is kept as incomplete, a new attempt starts here", same ? "line " : cur->start_file, same ? "" : ":",
             cur->start_line);
        cur->superseded = 1;
        return attempt_new(rd, cur, err);
    }
    return cur;
}

/* Remembers where the properties finish() notes on were set (the line being read). */
static void mark_prop(reader *rd, attempt *a, const char *key) {
    const place here = {rd->file, rd->line};
    if (strcmp(key, "spark.master") == 0) a->master_at = here;
    else if (strcmp(key, "spark.executor.memory") == 0) a->mem_at[0] = here;
    else if (strcmp(key, "spark.driver.memory") == 0) a->mem_at[1] = here;
}

/* Spark Properties or System Properties: an object of strings, or an array of [key, value] pairs. */
static bl_status read_props(reader *rd, attempt *a, const json_t *p, const char *what, int spark, bl_error *err) {
    if (!p || json_is_null(p)) return BL_OK;
    const char *key;
    const json_t *val;
    size_t i, bad = 0;
    bl_status st = BL_OK;
    if (json_is_object(p)) {
        json_object_foreach((json_t *)p, key, val) {
            if (!json_is_string(val)) { bad++; continue; }
            const char *v = json_string_value(val);
            if (spark) {
                st = conf_add(rd, a, key, v, err);
                mark_prop(rd, a, key);
            }
            else if (strcmp(key, "sun.java.command") == 0) {
                free(a->command);
                if (!(a->command = bl_strdup(v))) st = oom(err);
            }
            if (st != BL_OK) return st;
        }
    } else if (json_is_array(p)) {
        json_array_foreach(p, i, val) {
            const json_t *k = json_array_get(val, 0), *v = json_array_get(val, 1);
            if (!json_is_array(val) || json_array_size(val) != 2 || !json_is_string(k) || !json_is_string(v)) {
                bad++;
                continue;
            }
            if (spark) {
                st = conf_add(rd, a, json_string_value(k), json_string_value(v), err);
                mark_prop(rd, a, json_string_value(k));
            } else if (strcmp(json_string_value(k), "sun.java.command") == 0) {
                free(a->command);
                if (!(a->command = bl_strdup(json_string_value(v)))) st = oom(err);
            }
            if (st != BL_OK) return st;
        }
    } else {
        note(rd, rd->line, "SparkListenerEnvironmentUpdate: \"%s\" is neither an object nor an array: skipped", what);
        return BL_OK;
    }
    if (bad) note(rd, rd->line, "SparkListenerEnvironmentUpdate: %zu entr%s of \"%s\" not a string: skipped", bad,
                  bad == 1 ? "y" : "ies", what);
    if (spark) a->has_props = 1;
    return BL_OK;
}

/* The text of a failed job's message for why: control characters as spaces, runs of spaces as one,
 * cut to WHY_MESSAGE bytes at a character boundary ("..." added). */
static char *job_message(const char *m) {
    const size_t n = strlen(m);
    char *out = malloc((n < WHY_MESSAGE ? n : WHY_MESSAGE) + 4);
    if (!out) return NULL;
    size_t k = 0;
    int space = 1, cut = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)m[i];
        if (c < 0x20 || c == 0x7f) c = ' ';
        if (c == ' ' && space) continue;
        space = c == ' ';
        if (k >= WHY_MESSAGE) {
            if ((c & 0xC0) == 0x80) { /* c continues a character begun in out: drop that character */
                while (k > 0 && ((unsigned char)out[k - 1] & 0xC0) == 0x80) k--;
                if (k > 0) k--;
            }
            cut = 1;
            break;
        }
        out[k++] = (char)c;
    }
    while (k > 0 && out[k - 1] == ' ') k--;
    if (cut) {
        memcpy(out + k, "...", 3);
        k += 3;
    }
    out[k] = '\0';
    return out;
}

/* task_end's answer for a damaged line: parse it whole instead (not a status any caller sees). */
#define BL_EAGAIN_WHOLE ((bl_status)1000)

/* A byte count is a number from 0 to 1e18 (an exabyte for one task): others are damage. */
#define BYTES_OK(v) ((v) >= 0 && (v) <= 1e18)

/* The task metrics the import sums, inside "Task Metrics". */
static const char *const METRICS[3] = {"Input Metrics", "Shuffle Read Metrics", "Shuffle Write Metrics"};

/* Adds a task's metrics (each object may be NULL) to its attempt; 1 when one of them is mistyped. */
static int add_metrics(attempt *a, const json_t *in, const json_t *sr, const json_t *sw) {
    double b = 0, b2 = 0;
    int bad = 0, g, g2;

    if (in) {
        if ((g = get_num(in, "Bytes Read", &b)) == 1 && BYTES_OK(b)) a->in += b, a->has_in = 1;
        else bad |= g != 0;
    }
    if (sr) {
        g = get_num(sr, "Remote Bytes Read", &b);
        g2 = get_num(sr, "Local Bytes Read", &b2);
        if (g == 1 && !BYTES_OK(b)) g = -1;
        if (g2 == 1 && !BYTES_OK(b2)) g2 = -1;
        if (g == 1 || g2 == 1) a->sr += (g == 1 ? b : 0) + (g2 == 1 ? b2 : 0), a->has_sr = 1;
        bad |= g < 0 || g2 < 0;
    }
    if (sw) {
        if ((g = get_num(sw, "Shuffle Bytes Written", &b)) == 1 && BYTES_OK(b)) a->sw += b, a->has_sw = 1;
        else bad |= g != 0;
    }
    return bad;
}

/* 1 when a task's end says it succeeded ("Task End Reason": {"Reason": "Success"}) or says nothing of it;
 * 0 for a failed, killed or lost attempt, whose input another attempt reads again (counting both would
 * make one job's data size depend on its retries). */
static int task_succeeded(const json_t *j) {
    const json_t *r = NULL;
    const char *s = NULL;
    if (get_obj(j, "Task End Reason", &r) != 1 || get_str(r, "Reason", &s) != 1) return 1;
    return strcmp(s, "Success") == 0;
}

static bl_status on_event(reader *rd, enum kind k, const char *name, json_t *j, bl_error *err) {
    attempt *a = attempt_for(rd, k, err);
    if (!a) return err ? err->status : BL_ENOMEM;
    bl_run_record *r = a->r;
    const char *s = NULL, *id = NULL, *host = NULL;
    const json_t *o = NULL;
    double v = 0;
    int g;
    switch (k) {
    case K_LOGSTART:
        if ((g = get_str(j, "Spark Version", &s)) == 1) return bl_run_record_set(&r->version, s, err);
        note(rd, rd->line, "%s %s \"Spark Version\": the version is unknown", name, missing(g));
        return BL_OK;
    case K_APPSTART:
        a->started = 1;
        a->start_line = rd->line;
        a->start_file = rd->file;
        if ((g = get_str(j, "App Name", &s)) == 1) {
            if (bl_run_record_set(&r->name, s, err) != BL_OK) return err->status;
        } else note(rd, rd->line, "%s %s \"App Name\": the name is unknown", name, missing(g));
        if ((g = get_str(j, "App ID", &s)) == 1) {
            if (bl_run_record_set(&r->app_id, s, err) != BL_OK) return err->status;
        } else note(rd, rd->line, "%s %s \"App ID\": the application id is unknown", name, missing(g));
        if ((g = get_str(j, "App Attempt ID", &s)) == 1) {
            if (bl_run_record_set(&r->attempt, s, err) != BL_OK) return err->status;
        } else if (g < 0) note(rd, rd->line, "%s with a mistyped \"App Attempt ID\": the attempt is unknown", name);
        if ((g = get_num(j, "Timestamp", &v)) == 1) {
            r->start_ms = v;
            a->start_bad = 0;
        } else {
            a->start_bad = 1;
            note(rd, rd->line, "%s %s \"Timestamp\": the start is unknown", name, missing(g));
        }
        return BL_OK;
    case K_APPEND:
        a->ended = 1;
        a->end_at = (place){rd->file, rd->line};
        if ((g = get_num(j, "Timestamp", &v)) == 1) {
            r->end_ms = v;
            a->end_bad = 0;
        } else {
            a->end_bad = 1;
            note(rd, rd->line, "%s %s \"Timestamp\": the end is unknown", name, missing(g));
        }
        return BL_OK;
    case K_ENV: {
        bl_status st = read_props(rd, a, json_object_get(j, "Spark Properties"), "Spark Properties", 1, err);
        if (st == BL_OK) st = read_props(rd, a, json_object_get(j, "System Properties"), "System Properties", 0, err);
        return st;
    }
    case K_EXEC_ADD:
    case K_BM_ADD: {
        const char *holder = k == K_EXEC_ADD ? "Executor Info" : "Block Manager ID";
        if ((g = get_obj(j, holder, &o)) != 1) {
            note(rd, rd->line, "%s %s \"%s\": skipped", name, missing(g), holder);
            return BL_OK;
        }
        if ((g = get_str(k == K_EXEC_ADD ? j : o, "Executor ID", &id)) != 1) {
            note(rd, rd->line, "%s %s \"Executor ID\": skipped", name, missing(g));
            return BL_OK;
        }
        if ((g = get_str(o, "Host", &host)) != 1) {
            note(rd, rd->line, "%s %s \"Host\": counted on an unknown host", name, missing(g));
            host = "";
        }
        if (k == K_EXEC_ADD && get_num(o, "Total Cores", &v) == 1 && v >= 1 && v < 1e9) {
            if (is_driver(id)) a->driver_cores = (long)v;
            else if ((long)v > a->max_cores) a->max_cores = (long)v;
        }
        return track_add(k == K_EXEC_ADD ? &a->ex : &a->bm, id, host) == 0 ? BL_OK : oom(err);
    }
    case K_EXEC_DEL:
    case K_BM_DEL:
        if (k == K_BM_DEL && (g = get_obj(j, "Block Manager ID", &o)) != 1) {
            note(rd, rd->line, "%s %s \"Block Manager ID\": skipped", name, missing(g));
            return BL_OK;
        }
        if ((g = get_str(k == K_EXEC_DEL ? j : o, "Executor ID", &id)) != 1) {
            note(rd, rd->line, "%s %s \"Executor ID\": skipped", name, missing(g));
            return BL_OK;
        }
        track_remove(k == K_EXEC_DEL ? &a->ex : &a->bm, id);
        return BL_OK;
    case K_TASKEND: {
        const json_t *tm = NULL, *m[3] = {NULL, NULL, NULL};
        if ((g = get_obj(j, "Task Metrics", &tm)) != 1) { /* a failed task may have none */
            if (g < 0) note(rd, rd->line, "%s with a mistyped \"Task Metrics\": skipped", name);
            return BL_OK;
        }
        if (!task_succeeded(j)) return BL_OK; /* another attempt reads its input again */
        int bad = 0;
        for (int q = 0; q < 3; q++)
            if ((g = get_obj(tm, METRICS[q], &m[q])) < 0) bad = 1;
        if (add_metrics(a, m[0], m[1], m[2]) || bad) note(rd, rd->line, "%s with mistyped task metrics: those skipped", name);
        return BL_OK;
    }
    case K_JOBEND: {
        const json_t *res = NULL, *ex = NULL;
        if ((g = get_obj(j, "Job Result", &res)) != 1 || (g = get_str(res, "Result", &s)) != 1) {
            note(rd, rd->line, "%s %s \"Job Result\": skipped", name, missing(g));
            return BL_OK;
        }
        if (strcmp(s, "JobSucceeded") == 0) return BL_OK;
        if (strcmp(s, "JobFailed") != 0) {
            note(rd, rd->line, "%s with the unknown result \"%.100s\": skipped", name, s);
            return BL_OK;
        }
        if (a->failed) return BL_OK; /* why tells the first */
        a->failed = 1;
        a->failed_job = get_num(j, "Job ID", &v) == 1 && v >= 0 && v < 1e15 ? (long)v : -1;
        const char *msg = NULL;
        if (get_obj(res, "Exception", &ex) == 1 && get_str(ex, "Message", &msg) == 1 && *msg &&
            !(a->failed_msg = job_message(msg)))
            return oom(err);
        return BL_OK;
    }
    default:
        return BL_OK;
    }
}

/* The first object in s[0..n) that is the value of one of keys[0..nk) — text "KEY" then ':' then '{' —
 * as [*b, *e) (e past its '}'), *which the key. In valid JSON that text cannot stand inside a string
 * (a string's quotes are escaped), so a match is a key; the object's end is found by counting braces
 * outside strings. 1 found, 0 not, -1 found but its value is no object or it is not closed. */
static int find_any_object(const char *s, size_t n, const char *const *keys, size_t nk, int *which, size_t *b,
                           size_t *e) {
    for (const char *q = s; (q = memchr(q, '"', n - (size_t)(q - s))) != NULL; q++) {
        const char *p = q + 1; /* a key's first character, after its opening quote */
        const size_t left = n - (size_t)(p - s);
        size_t kl = 0;
        int k = 0;
        for (; k < (int)nk; k++) {
            if (p[0] != keys[k][0]) continue; /* most quotes open another key or a value */
            kl = strlen(keys[k]);
            if (kl < left && p[kl] == '"' && memcmp(p, keys[k], kl) == 0) break;
        }
        if (k == (int)nk) continue;
        size_t i = (size_t)(p - s) + kl + 1;
        while (i < n && (s[i] == ' ' || s[i] == '\t')) i++;
        if (i >= n || s[i] != ':') continue;
        i++;
        while (i < n && (s[i] == ' ' || s[i] == '\t')) i++;
        if (i >= n || s[i] != '{') return -1;
        *which = k;
        *b = i;
        int depth = 0, in_str = 0;
        for (; i < n; i++) {
            const char c = s[i];
            if (in_str) {
                if (c == '\\') i++;
                else if (c == '"') in_str = 0;
            } else if (c == '"') in_str = 1;
            else if (c == '{') depth++;
            else if (c == '}' && --depth == 0) {
                *e = i + 1;
                return 1;
            }
        }
        return -1;
    }
    return 0;
}

/* The same for one key. */
static int find_object(const char *s, size_t n, const char *key, size_t *b, size_t *e) {
    int which;
    return find_any_object(s, n, &key, 1, &which, b, e);
}

/* The number that is the value of "key" in the flat JSON object o[0..n) ({"key": 123, ...}): its text
 * found after the key and parsed by Jansson alone. 1 with *v, 0 when the key is absent (or null), -1
 * when its value is no finite number or the object is not flat where the key stands (then the object
 * is parsed whole). */
static int number_in(const char *o, size_t n, const char *key, double *v) {
    const size_t kl = strlen(key);
    for (const char *q = o; (q = memchr(q, '"', n - (size_t)(q - o))) != NULL; q++) {
        const char *p = q + 1;
        if ((size_t)(p - o) + kl >= n || p[kl] != '"' || memcmp(p, key, kl) != 0) continue;
        size_t i = (size_t)(p - o) + kl + 1;
        while (i < n && (o[i] == ' ' || o[i] == '\t')) i++;
        if (i >= n || o[i] != ':') continue;
        i++;
        while (i < n && (o[i] == ' ' || o[i] == '\t')) i++;
        size_t j = i;
        while (j < n && o[j] != ',' && o[j] != '}' && o[j] != ' ' && o[j] != '\t') j++;
        if (j == i || o[i] == '"' || o[i] == '{' || o[i] == '[') return -1;
        json_error_t je;
        json_t *x = json_loadb(o + i, j - i, JSON_DECODE_ANY | JSON_DECODE_INT_AS_REAL, &je);
        int r = -1;
        if (x && json_is_null(x)) r = 0;
        else if (x && json_is_number(x) && BYTES_OK(json_number_value(x))) {
            *v = json_number_value(x);
            r = 1;
        }
        json_decref(x);
        return r;
    }
    return 0;
}

/* A task's end, the most frequent line of a log (millions in a big one): only the three metric objects
 * the import sums (METRICS, inside "Task Metrics") are parsed, by Jansson as every event; the task's
 * info, accumulables and other metrics around them are not. The sums are those of on_event; the
 * reader's speed rests on this (3x). A line that is not UTF-8 is parsed whole (and so skipped as not
 * JSON); other damage outside those objects goes unnoticed, as in the events passed over unparsed. */
static bl_status task_end(reader *rd, const char *line, size_t len, const char *name, bl_error *err) {
    attempt *a = attempt_for(rd, K_TASKEND, err);
    if (!a) return err ? err->status : BL_ENOMEM;
    size_t tb, te;
    /* Spark writes "Task Metrics" last: looked for from the line's end (after the task's info and
     * accumulables, most of the line), then as anywhere else */
    size_t from_end = len;
    static const char tmk[] = "\"Task Metrics\"";
    const size_t tl = sizeof tmk - 1;
    while (from_end > tl && !(line[from_end - tl] == '"' && memcmp(line + from_end - tl, tmk, tl) == 0)) from_end--;
    const size_t start = from_end > tl ? from_end - tl : 0;
    int f = find_object(line + start, len - start, "Task Metrics", &tb, &te);
    if (f == 1) tb += start, te += start;
    else if (start > 0) f = find_object(line, len, "Task Metrics", &tb, &te);
    if (f == 0) return BL_OK; /* a failed task may have none */
    if (f < 0) return BL_EAGAIN_WHOLE;
    size_t rb, re; /* the task's end reason, near the line's start: a failed attempt's input is not counted */
    const int fr = find_object(line, tb, "Task End Reason", &rb, &re);
    if (fr < 0) return BL_EAGAIN_WHOLE;
    static const char success[] = "{\"Reason\":\"Success\"}"; /* as Spark writes it: no parse needed */
    if (fr == 1 && !(re - rb == sizeof success - 1 && memcmp(line + rb, success, sizeof success - 1) == 0)) {
        json_error_t je;
        json_t *reason = json_loadb(line + rb, re - rb, 0, &je), *wrap = reason ? json_object() : NULL;
        if (!wrap || json_object_set_new(wrap, "Task End Reason", reason) != 0) {
            if (wrap) json_decref(wrap);
            else json_decref(reason);
            return BL_EAGAIN_WHOLE;
        }
        const int ok = task_succeeded(wrap);
        json_decref(wrap);
        if (!ok) return BL_OK;
    }
    /* each metric object: its numbers' texts found by their keys and each parsed alone by Jansson
     * (feeding Jansson a whole object costs it ~5 ns a byte through its character-by-character
     * reader: most of a big log's time); an object whose numbers are not plain is parsed whole */
    static const char *const fields[3][2] = {{"Bytes Read", NULL}, {"Remote Bytes Read", "Local Bytes Read"},
                                             {"Shuffle Bytes Written", NULL}};
    double sum[3] = {0, 0, 0};
    int bad = 0, have[3] = {0, 0, 0}, known[3] = {0, 0, 0};
    for (size_t from = tb + 1; !bad && from < te;) { /* one pass: the keys stand in this order or any */
        size_t b, e;
        int which = -1;
        const int g = find_any_object(line + from, te - from, METRICS, 3, &which, &b, &e);
        if (g == 0) break;
        if (g < 0 || have[which]) { /* unclosed, not an object, or given twice */
            bad = 1;
            break;
        }
        have[which] = 1;
        const char *o = line + from + b;
        for (int f = 0; f < 2 && fields[which][f] && !bad; f++) {
            double v = 0;
            const int nv = number_in(o, e - b, fields[which][f], &v);
            if (nv < 0) bad = 1;
            else if (nv == 1) sum[which] += v, known[which] = 1;
        }
        from += e;
    }
    if (!bad) { /* as add_metrics sums them */
        if (known[0]) a->in += sum[0], a->has_in = 1;
        if (known[1]) a->sr += sum[1], a->has_sr = 1;
        if (known[2]) a->sw += sum[2], a->has_sw = 1;
    }
    return bad ? BL_EAGAIN_WHOLE : BL_OK; /* damaged: the whole line parsed, as any, says how */
}

static bl_status on_line(reader *rd, const char *line, size_t len, unsigned flags, bl_error *err) {
    if (flags & BL_LINE_TOO_LONG) {
        if (!rd->seen_event)
            return bl_seterr(err, BL_EFORMAT, "%s:%zu: not a Spark event log (its first line is longer than %zu bytes)",
                             rd->file, rd->line, (size_t)BL_LINES_MAX_DEFAULT);
        note(rd, rd->line, "a line longer than %zu MiB (damaged?): skipped", (size_t)BL_LINES_MAX_DEFAULT >> 20);
        return BL_OK;
    }
    size_t i = 0;
    while (i < len && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) i++;
    if (i == len) return BL_OK; /* an empty line: Spark writes none, nothing is lost */
    char name[128];
    if (rd->seen_event && event_prefix(line, len, name, sizeof name)) {
        const enum kind k = kind_of(name);
        if (k == K_PASS) return BL_OK;
        if (k == K_TASKEND && !(flags & BL_LINE_UNTERMINATED) && bl_utf8_valid(line, len, NULL)) {
            const bl_status st = task_end(rd, line, len, name, err);
            if (st != BL_EAGAIN_WHOLE) return st;
        }
        if (k == K_UNKNOWN) {
            attempt *a = attempt_for(rd, k, err);
            if (!a) return err ? err->status : BL_ENOMEM;
            a->r->unknown_events++;
            return BL_OK;
        }
    }
    json_error_t je;
    json_t *j = json_loadb(line, len, JSON_DECODE_INT_AS_REAL, &je);
    const json_t *ev = json_is_object(j) ? json_object_get(j, "Event") : NULL;
    if (!json_is_string(ev)) {
        json_decref(j);
        if (!rd->seen_event)
            return bl_seterr(err, BL_EFORMAT, "%s:%zu: not a Spark event log (its first line is no JSON object with "
                             "\"Event\")", rd->file, rd->line);
        if (flags & BL_LINE_UNTERMINATED)
            note(rd, rd->line, "the last line is cut off (the log was being written?): skipped");
        else if (!j) note(rd, rd->line, "not JSON (%s): skipped", je.text);
        else note(rd, rd->line, "not an event (no \"Event\" name): skipped");
        return BL_OK;
    }
    rd->seen_event = 1;
    const char *evname = json_string_value(ev);
    const enum kind k = kind_of(evname);
    bl_status st = BL_OK;
    if (k == K_UNKNOWN) {
        attempt *a = attempt_for(rd, k, err);
        if (a) a->r->unknown_events++;
        else st = err ? err->status : BL_ENOMEM;
    } else if (k != K_PASS) st = on_event(rd, k, evname, j, err);
    json_decref(j);
    return st;
}

/* Reads one file's lines into rd. */
static bl_status read_file(reader *rd, const char *path, int still_written, bl_error *err) {
    bl_lines *l;
    rd->file = path;
    rd->line = 0;
    bl_status st = bl_lines_open(path, 0, still_written, &l, err);
    if (st != BL_OK) return st;
    for (;;) {
        const char *line;
        size_t len;
        unsigned flags;
        if ((st = bl_lines_next(l, &line, &len, &flags, err)) != BL_OK) break;
        if (!line) break;
        rd->line = bl_lines_number(l);
        if ((st = on_line(rd, line, len, flags, err)) != BL_OK) break;
    }
    if (st == BL_OK && bl_lines_cut(l))
        note(rd, 0, "the %s stream ends mid-block after line %zu (still being written): read up to there",
             bl_codec_name(bl_codec_for_name(path, NULL, NULL)), bl_lines_number(l));
    bl_lines_close(l);
    return st;
}

/* ---- from an attempt to its record ------------------------------------------------------------------ */

/* A JVM memory size as Spark reads spark.executor.memory and spark.driver.memory (JavaUtils.byteStringAs
 * with MiB as the unit): digits, then optionally b, k/kb, m/mb, g/gb, t/tb, p/pb in any case (binary
 * units); no suffix means MiB; fractions are refused. MiB rounded down, as Spark does; -1 when not so. */
static double memory_mb(const char *s) {
    while (*s == ' ' || *s == '\t') s++;
    if (*s < '0' || *s > '9') return -1;
    double v = 0;
    for (; *s >= '0' && *s <= '9'; s++) v = v * 10 + (*s - '0');
    char suf[4] = {0};
    size_t k = 0;
    for (; *s && *s != ' ' && *s != '\t'; s++) {
        if (k >= 2) return -1;
        suf[k++] = (char)((*s >= 'A' && *s <= 'Z') ? *s - 'A' + 'a' : *s);
    }
    while (*s == ' ' || *s == '\t') s++;
    if (*s) return -1;
    static const struct { const char *s; double mib; } units[] = {
        {"", 1}, {"b", 1.0 / 1048576}, {"k", 1.0 / 1024}, {"kb", 1.0 / 1024}, {"m", 1}, {"mb", 1},
        {"g", 1024}, {"gb", 1024}, {"t", 1048576}, {"tb", 1048576}, {"p", 1073741824.0}, {"pb", 1073741824.0}};
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) /* above a petabyte: no executor's */
        if (strcmp(suf, units[i].s) == 0) return v * units[i].mib <= 1e9 ? floor(v * units[i].mib) : -1;
    return -1;
}

/* A positive whole number, or -1. */
static long count_of(const char *s) {
    char *end;
    errno = 0;
    const long v = s ? strtol(s, &end, 10) : -1;
    return s && end != s && *end == '\0' && errno == 0 && v > 0 ? v : -1;
}

/* The cluster manager of spark.master: yarn (also Spark 1's yarn-client / yarn-cluster), k8s://...,
 * spark://... (standalone), local / local[...] / local-cluster[...] (local), mesos://...; "" else. */
static const char *master_kind(const char *m) {
    if (!m) return "";
    if (strcmp(m, "yarn") == 0 || strcmp(m, "yarn-client") == 0 || strcmp(m, "yarn-cluster") == 0) return "yarn";
    if (strncmp(m, "k8s://", 6) == 0) return "k8s";
    if (strncmp(m, "spark://", 8) == 0) return "standalone";
    if (strncmp(m, "mesos://", 8) == 0) return "mesos";
    if (strcmp(m, "local") == 0 || strncmp(m, "local[", 6) == 0 || strncmp(m, "local-cluster[", 14) == 0)
        return "local";
    return "";
}

/* Task threads of local mode: local 1, local[N] / local[N,F] N, local[*]: -1 (unknown here). */
static long local_threads(const char *m) {
    if (strcmp(m, "local") == 0) return 1;
    char *end;
    const long v = strtol(m + 6, &end, 10);
    return end != m + 6 && (*end == ']' || *end == ',') && v > 0 ? v : -1;
}

/* SparkSubmit's options that take a value (the next word unless given as --opt=value). */
static int submit_takes_value(const char *w) {
    static const char *const opts[] = {
        "--master", "--deploy-mode", "--class", "--name", "--jars", "--packages", "--exclude-packages",
        "--repositories", "--files", "--archives", "--py-files", "--conf", "-c", "--properties-file",
        "--driver-memory", "--driver-java-options", "--driver-library-path", "--driver-class-path",
        "--driver-cores", "--executor-memory", "--executor-cores", "--total-executor-cores", "--num-executors",
        "--queue", "--principal", "--keytab", "--proxy-user", "--kill", "--status", "--remote"};
    if (strchr(w, '=')) return 0;
    for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++)
        if (strcmp(w, opts[i]) == 0) return 1;
    return 0;
}

/* The job's arguments from sun.java.command (the JVM's main class and its arguments joined by spaces,
 * quoting lost), as words joined by one space:
 *   org.apache.spark.deploy.SparkSubmit [options] RESOURCE ARGS...  -> ARGS: RESOURCE is the first word
 *       that is neither an option (-x, --x, --x=v) nor the value of one that takes a value (--class C,
 *       --conf k=v, ...): the application jar, the .py or .R file, or spark-shell / pyspark-shell /
 *       spark-internal; also when the main class is a runner (--class ...PythonRunner app.py ...);
 *   org.apache.spark.deploy.yarn.ApplicationMaster ... --arg A --arg B ...  -> the --arg values, their
 *       single quotes removed (a YARN cluster-mode driver);
 *   org.apache.spark.deploy.worker.DriverWrapper WORKER USER_JAR MAIN ARGS...  -> ARGS (a standalone
 *       cluster-mode driver);
 *   any other MAIN ARGS... (a user's class run directly)  -> ARGS.
 * NULL when out of memory. */
static char *args_of(const char *cmd) {
    const size_t n = cmd ? strlen(cmd) : 0;
    char *copy = malloc(n + 1), *out = malloc(n + 1);
    size_t nw = 0;
    char **w = malloc((n / 2 + 2) * sizeof *w);
    if (!copy || !out || !w) {
        free(copy);
        free(out);
        free(w);
        return NULL;
    }
    memcpy(copy, cmd ? cmd : "", n + 1);
    for (char *p = strtok(copy, " \t\r\n"); p; p = strtok(NULL, " \t\r\n")) w[nw++] = p;
    size_t o = 0;
    out[0] = '\0';
#define ADD(word)                                                                                                      \
    do {                                                                                                               \
        const char *a_ = (word);                                                                                       \
        size_t l_ = strlen(a_);                                                                                        \
        if (o) out[o++] = ' ';                                                                                         \
        memcpy(out + o, a_, l_);                                                                                       \
        o += l_;                                                                                                       \
        out[o] = '\0';                                                                                                 \
    } while (0)
    if (nw == 0) {
        /* no command: no arguments */
    } else if (strcmp(w[0], "org.apache.spark.deploy.SparkSubmit") == 0) {
        size_t i = 1;
        while (i < nw && w[i][0] == '-') i += submit_takes_value(w[i]) ? 2 : 1;
        for (i++; i < nw; i++) ADD(w[i]);
    } else if (strcmp(w[0], "org.apache.spark.deploy.yarn.ApplicationMaster") == 0) {
        for (size_t i = 1; i + 1 < nw; i++)
            if (strcmp(w[i], "--arg") == 0) {
                char *a = w[++i];
                const size_t l = strlen(a);
                if (l >= 2 && a[0] == '\'' && a[l - 1] == '\'') {
                    a[l - 1] = '\0';
                    a++;
                }
                ADD(a);
            }
    } else if (strcmp(w[0], "org.apache.spark.deploy.worker.DriverWrapper") == 0) {
        for (size_t i = 4; i < nw; i++) ADD(w[i]);
    } else {
        for (size_t i = 1; i < nw; i++) ADD(w[i]);
    }
#undef ADD
    free(copy);
    free(w);
    return out;
}

/* The record of an attempt read whole. Its notes name the event that carries the value they are about
 * (the environment's line for a property, the end's for an end before the start), not the start's. */
static bl_status finish(reader *rd, attempt *a, bl_error *err) {
    bl_run_record *r = a->r;
    bl_status st = BL_OK;
    const char *master = bl_run_record_get(r, "spark.master");
    const int local = master && strcmp(master_kind(master), "local") == 0 && strncmp(master, "local-cluster", 13) != 0;
    if (a->has_props) {
        st = bl_run_record_set(&r->master, master_kind(master), err);
        if (st == BL_OK && master && !master_kind(master)[0])
            note_at(rd, a->master_at, "spark.master \"%.100s\" is no cluster manager known here: master left empty",
                    master);
        const char *dm = bl_run_record_get(r, "spark.submit.deployMode");
        const char *mode = dm && (strcmp(dm, "client") == 0 || strcmp(dm, "cluster") == 0) ? dm
                           : master && strcmp(master, "yarn-cluster") == 0       ? "cluster"
                                                                                 : "client";
        if (st == BL_OK) st = bl_run_record_set(&r->deploy_mode, mode, err);
        const char *da = bl_run_record_get(r, "spark.dynamicAllocation.enabled");
        r->dynamic_allocation = !da || strcmp(da, "false") == 0 ? 0 : strcmp(da, "true") == 0 ? 1 : -1;
        const char *memkey = local ? "spark.driver.memory" : "spark.executor.memory";
        const char *mem = bl_run_record_get(r, memkey);
        r->executor_memory_mb = mem ? memory_mb(mem) : 1024; /* Spark's default: 1g */
        if (r->executor_memory_mb < 0) {
            r->executor_memory_mb = NAN;
            note_at(rd, a->mem_at[local], "%s \"%.100s\" is no JVM memory size: the memory is unknown", memkey, mem);
        }
        if (!local) r->executor_cores = count_of(bl_run_record_get(r, "spark.executor.cores"));
    }
    /* cores: local mode the driver's; else spark.executor.cores, or what the executors had */
    if (local) r->executor_cores = a->driver_cores > 0 ? a->driver_cores : local_threads(master);
    else if (r->executor_cores < 0) r->executor_cores = a->max_cores;
    /* executors: from ExecutorAdded where the log has it (and was not compacted), else block managers */
    const tracker *t = a->ex.seen && !rd->compacted ? &a->ex : &a->bm;
    if (local && t->peak == 0) r->executors = r->hosts = 1;
    else if (t->seen || a->ex.seen || a->bm.seen) {
        r->executors = t->peak;
        r->hosts = t->peak_hosts;
    }
    if (!rd->compacted) {
        r->input_bytes = a->has_in ? a->in : NAN;
        r->shuffle_read_bytes = a->has_sr ? a->sr : NAN;
        r->shuffle_write_bytes = a->has_sw ? a->sw : NAN;
    }
    char *args = st == BL_OK ? args_of(a->command) : NULL;
    if (st == BL_OK && !args) st = oom(err);
    if (st == BL_OK) {
        free(r->args);
        r->args = args;
    }
    /* the state: still written, cut short, no times, skewed clocks (INCOMPLETE), a failed job (FAILED) */
    char why[WHY_MESSAGE + 64];
    why[0] = '\0';
    r->state = BL_RUN_INCOMPLETE;
    if (rd->inprogress) snprintf(why, sizeof why, "the log is still being written (.inprogress)");
    else if (a->superseded) snprintf(why, sizeof why, "another attempt starts in the log before this one ends");
    else if (!a->ended) snprintf(why, sizeof why, "the log ends before the application does");
    else if (a->start_bad) snprintf(why, sizeof why, "the application start has no time stamp");
    else if (a->end_bad) snprintf(why, sizeof why, "the application end has no time stamp");
    else if (r->end_ms < r->start_ms) {
        snprintf(why, sizeof why, "the application ends before it starts (clock skew?)");
        const int same = a->start_file == a->end_at.file; /* else the start is in an earlier part */
        note_at(rd, a->end_at, "the application ends (SparkListenerApplicationEnd, Timestamp %.0f) before it starts "
                "(SparkListenerApplicationStart on %s%s%zu, Timestamp %.0f): clock skew? kept as incomplete", r->end_ms,
                same ? "line " : a->start_file, same ? "" : ":", a->start_line, r->start_ms);
    } else if (a->failed) {
        r->state = BL_RUN_FAILED;
        if (a->failed_job >= 0) snprintf(why, sizeof why, "job %ld failed", a->failed_job);
        else snprintf(why, sizeof why, "a job failed");
        if (a->failed_msg) {
            const size_t k = strlen(why);
            snprintf(why + k, sizeof why - k, ": %s", a->failed_msg);
        }
    } else r->state = BL_RUN_COMPLETE;
    if (st == BL_OK) st = bl_run_record_set(&r->why, why, err);
    return st;
}

/* ---- the log ---------------------------------------------------------------------------------------- */

typedef struct part {
    unsigned long long index;
    int compact;
    char *name;
} part;

static int part_cmp(const void *x, const void *y) {
    const part *a = x, *b = y;
    if (a->index != b->index) return a->index < b->index ? -1 : 1;
    if (a->compact != b->compact) return a->compact ? -1 : 1;
    return strcmp(a->name, b->name);
}

static char *join_path(const char *dir, const char *name) {
    const size_t a = strlen(dir), b = strlen(name);
    char *p = malloc(a + b + 2);
    if (!p) return NULL;
    memcpy(p, dir, a);
    p[a] = '/';
    memcpy(p + a + 1, name, b + 1);
    return p;
}

/* A rolling log: "events_<n>_<app>[_<attempt>][.<codec>][.compact]" parts in order of n, from the last
 * compacted part on (it replaces those before it, as Spark reads them), and an appstatus file. */
static bl_status read_folder(reader *rd, const char *dir, bl_error *err) {
    DIR *d = opendir(dir);
    if (!d) return bl_seterr(err, BL_EIO, "%s: cannot open the folder: %s", dir, strerror(errno));
    part *parts = NULL;
    size_t np = 0;
    int status = 0;
    bl_status st = BL_OK;
    rd->file = dir;
    for (struct dirent *e; st == BL_OK && (e = readdir(d));) {
        const char *nm = e->d_name;
        if (strncmp(nm, "appstatus_", 10) == 0) {
            int ip;
            bl_codec_for_name(nm, &ip, NULL);
            status = 1;
            rd->inprogress |= ip;
            continue;
        }
        if (strncmp(nm, "events_", 7) != 0) continue;
        const char *p = nm + 7;
        unsigned long long idx = 0;
        int digits = 0;
        for (; *p >= '0' && *p <= '9' && digits < 19; p++, digits++) idx = idx * 10 + (unsigned)(*p - '0');
        if (!digits || *p != '_') {
            note(rd, 0, "\"%.200s\" is no events_<n>_<app> part: skipped", nm);
            continue;
        }
        char *full = join_path(dir, nm);
        struct stat psb;
        if (!full) { st = oom(err); break; }
        if (stat(full, &psb) != 0 || !S_ISREG(psb.st_mode)) { /* a device or a pipe would never end */
            note(rd, 0, "\"%.200s\" is no regular file (a link to a device or a pipe, or gone): skipped", nm);
            free(full);
            continue;
        }
        free(full);
        part *q = realloc(parts, (np + 1) * sizeof *q);
        if (!q) { st = oom(err); break; }
        parts = q;
        int cp;
        bl_codec_for_name(nm, NULL, &cp);
        parts[np].index = idx;
        parts[np].compact = cp;
        if (!(parts[np].name = join_path(dir, nm))) { st = oom(err); break; }
        np++;
    }
    closedir(d);
    if (st == BL_OK && np == 0)
        st = bl_seterr(err, BL_EFORMAT, "%s: not a Spark event log (a folder without events_<n>_<app> parts)", dir);
    size_t from = 0;
    if (st == BL_OK) {
        qsort(parts, np, sizeof *parts, part_cmp);
        for (size_t i = 0; i < np; i++)
            if (parts[i].compact) from = i, rd->compacted = 1;
        if (rd->compacted)
            note(rd, 0, "a compacted rolling log (from %.200s on): executors counted from block managers, input "
                 "and shuffle totals unknown, failed jobs before the compaction not known", parts[from].name);
        if (!status) note(rd, 0, "no appstatus_ file: whether the application ended is taken from its events");
        for (size_t i = from + 1; i < np; i++)
            if (parts[i].index == parts[i - 1].index)
                note(rd, 0, "two parts numbered %llu (%.200s): both read, in name order", parts[i].index, parts[i].name);
    }
    for (size_t i = from; st == BL_OK && i < np; i++)
        st = read_file(rd, parts[i].name, rd->inprogress && i + 1 == np, err);
    rd->parts = parts; /* their names stay until the records are given (notes point at them) */
    rd->n_parts = np;
    return st;
}

bl_status bl_spark_read_log(const char *path, const bl_import_sink *sink, bl_error *err) {
    BL_CHECK_ARG(path && sink && sink->record, err, "bl_spark_read_log: NULL argument");
    reader rd = {.sink = sink, .source = path, .file = path};
    struct stat sb;
    if (stat(path, &sb) != 0) return bl_seterr(err, BL_EIO, "%s: cannot open: %s", path, strerror(errno));
    bl_status st;
    if (S_ISDIR(sb.st_mode)) st = read_folder(&rd, path, err);
    else {
        bl_codec_for_name(path, &rd.inprogress, NULL);
        st = read_file(&rd, path, 0, err);
    }
    if (st == BL_OK && !rd.seen_event)
        st = bl_seterr(err, BL_EFORMAT, "%s: not a Spark event log (no events: %s)", path,
                       S_ISDIR(sb.st_mode) ? "its parts hold none"
                       : rd.inprogress     ? "none written yet, it is still being written"
                                           : "an empty file");
    /* the records, once the whole log was read; attempts without a start are no attempts */
    size_t given = 0, startless = 0;
    for (size_t i = 0; i < rd.n_att; i++) {
        attempt *a = rd.att[i];
        if (st == BL_OK && !a->started) startless++;
        else if (st == BL_OK && (st = finish(&rd, a, err)) == BL_OK) {
            bl_run_record *r = a->r;
            a->r = NULL;
            st = sink->record(sink->ctx, r, err);
            given++;
        }
        attempt_free(a);
    }
    if (st == BL_OK && startless) {
        rd.file = path;
        note(&rd, 0, "%s without a SparkListenerApplicationStart: %s", given ? "events after an attempt's end" : "events",
             given ? "ignored" : "no attempt to import");
    }
    if (rd.notes_left_out && sink->note) {
        char what[128];
        snprintf(what, sizeof what, "%zu more notes about this log not listed", rd.notes_left_out);
        sink->note(sink->ctx, path, 0, what);
    }
    free(rd.att);
    for (size_t i = 0; i < rd.n_parts; i++) free(rd.parts[i].name);
    free(rd.parts);
    return st;
}

/* ---- sniffing --------------------------------------------------------------------------------------- */

int bl_spark_sniff(const char *path) {
    if (!path) return 0;
    struct stat sb;
    if (stat(path, &sb) != 0) return 0;
    if (S_ISDIR(sb.st_mode)) { /* the folder's own name, trailing slashes aside */
        size_t n = strlen(path);
        while (n > 1 && path[n - 1] == '/') n--;
        size_t b = n;
        while (b > 0 && path[b - 1] != '/') b--;
        return n - b >= 12 && strncmp(path + b, "eventlog_v2_", 12) == 0;
    }
    if (!S_ISREG(sb.st_mode)) return 0;
    if (bl_codec_for_name(path, NULL, NULL) != BL_CODEC_PLAIN) return 1;
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    char buf[4097];
    const size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    /* the first line: a JSON object whose "Event" names a SparkListener... */
    const char *end = memchr(buf, '\n', n);
    const size_t len = end ? (size_t)(end - buf) : n;
    for (size_t i = 0; i + 7 <= len; i++) {
        if (memcmp(buf + i, "\"Event\"", 7) != 0) continue;
        size_t k = i + 7;
        while (k < len && (buf[k] == ' ' || buf[k] == '\t')) k++;
        if (k >= len || buf[k++] != ':') continue;
        while (k < len && (buf[k] == ' ' || buf[k] == '\t')) k++;
        if (len - k >= 14 && memcmp(buf + k, "\"SparkListener", 14) == 0) {
            size_t s = 0;
            while (s < len && (buf[s] == ' ' || buf[s] == '\t')) s++;
            return buf[s] == '{';
        }
    }
    return 0;
}
