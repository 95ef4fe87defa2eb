/* flink.c — Flink jobs (import.h): a JobManager / History Server archive, a saved answer of the REST
 * API's /jobs/<jobid>, or one of /jobs/overview, read into one record per job.
 *
 * An archive is what FsJobArchivist writes under jobmanager.archive.fs.dir: {"archive": [{"path":
 * "/jobs/<id>", "json": "<the REST answer as text>"}, ...]}, one entry per REST path the JobManager
 * archives. The answers read here, with the field names of Flink's REST API reference:
 *   /jobs/<id>                            jid, name, state, start-time, end-time, duration, plan
 *                                         (nodes with their inputs), vertices (id, name, parallelism,
 *                                         metrics.read-bytes)
 *   /jobs/<id>/config                     execution-config {execution-mode, job-parallelism, ...,
 *                                         user-config {...}}
 *   /jobs/<id>/exceptions                 root-exception, or exceptionHistory.entries[0]
 *   /jobs/<id>/vertices/<vid>/taskmanagers  taskmanagers [{taskmanager-id | endpoint | host}]
 *   /jobs/<id>/jobmanager/config          [{key, value}]: the cluster's configuration
 *   /jobs/<id>/jobmanager/environment     classpath (the flink-dist jar names the version)
 *   /jobs/overview                        jobs [{jid, name, state, start-time, end-time}]
 *   /config                               flink-version (the History Server's own answer)
 * Every other path under /jobs/<id>/ is Flink's and not needed; any other path is counted in
 * unknown_events, as are fields of the job and vertex answers that Flink did not write when this
 * was written. Answers are parsed whole (archives are small; a file over 256 MiB is refused).
 * Not here: finding archives in folders (import.c), the History Server's unpacked web folder.
 */
#include "import/import.h"

#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/error.h"
#include "common/file.h"
#include "common/str.h"

#define FL_MAX_BYTES ((size_t)256 << 20) /* the largest file read: archives are kilobytes to megabytes */
#define FL_ROOT_MAX 200                  /* bytes of the root exception kept in a record's why */
#define FL_SNIFF_BYTES 4096

/* A read in progress: the file, where records go, and which answer is being read (for messages). */
typedef struct rd {
    const char *file;
    const bl_import_sink *sink;
    bl_error *err;
    char at[300]; /* "" (the file's own JSON) or "archive entry N (PATH): " */
} rd;

static bl_status bad(rd *r, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static bl_status bad(rd *r, const char *fmt, ...) {
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return bl_seterr(r->err, BL_EFORMAT, "%s: %s%s", r->file, r->at, msg);
}

static void note(rd *r, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void note(rd *r, const char *fmt, ...) {
    if (!r->sink->note) return;
    char msg[400], line[720];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(line, sizeof line, "%s%s", r->at, msg);
    r->sink->note(r->sink->ctx, r->file, 0, line);
}

static bl_status nomem(rd *r) { return bl_seterr(r->err, BL_ENOMEM, "%s: out of memory", r->file); }

/* Text from the file for a one-line message: at most cap-1 bytes, control characters as '?'. */
static void printable(const char *s, char *out, size_t cap) {
    size_t n = 0;
    for (; s[n] && n + 1 < cap; n++) out[n] = (unsigned char)s[n] < 0x20 || s[n] == 0x7f ? '?' : s[n];
    out[n] = '\0';
}

static void set_at_entry(rd *r, size_t i, const char *path) {
    char p[200];
    printable(path, p, sizeof p);
    snprintf(r->at, sizeof r->at, "archive entry %zu (%s): ", i, p);
}

static const char *type_name(const json_t *v) {
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER:
    case JSON_REAL: return "a number";
    case JSON_TRUE: return "true";
    case JSON_FALSE: return "false";
    case JSON_NULL: break;
    }
    return "null";
}

/* obj[key] as a number; *found 0 when absent or null. BL_EFORMAT naming PRE+key when of another type. */
static bl_status get_num(rd *r, const json_t *obj, const char *pre, const char *key, double *out, int *found) {
    const json_t *v = json_object_get(obj, key);
    *found = 0;
    if (!v || json_is_null(v)) return BL_OK;
    if (!json_is_number(v)) return bad(r, "%s%s is %s, not a number", pre, key, type_name(v));
    *out = json_number_value(v);
    *found = 1;
    return BL_OK;
}

/* obj[key] as a string (borrowed); *out NULL when absent or null. */
static bl_status get_str(rd *r, const json_t *obj, const char *pre, const char *key, const char **out) {
    const json_t *v = json_object_get(obj, key);
    *out = NULL;
    if (!v || json_is_null(v)) return BL_OK;
    if (!json_is_string(v)) return bad(r, "%s%s is %s, not a string", pre, key, type_name(v));
    *out = json_string_value(v);
    return BL_OK;
}

/* The fields of JobDetailsInfo and of a JobDetails in /jobs/overview, and of JobVertexDetailsInfo,
 * up to Flink 2.x; any other field is counted in unknown_events. */
static const char *const job_fields[] = {"jid", "name", "isStoppable", "state", "job-type", "schedulerType",
                                         "start-time", "end-time", "duration", "maxParallelism", "now",
                                         "timestamps", "vertices", "status-counts", "plan", "stream-graph",
                                         "pending-operators", "application-id", "last-modification", "tasks",
                                         NULL};
static const char *const vertex_fields[] = {"id", "slotSharingGroupId", "slotSharingGroupName", "name",
                                            "maxParallelism", "parallelism", "status", "start-time",
                                            "end-time", "duration", "tasks", "metrics", NULL};

static size_t count_unknown(const json_t *obj, const char *const *known) {
    size_t n = 0;
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)obj, k, v) {
        size_t i = 0;
        while (known[i] && strcmp(known[i], k) != 0) i++;
        n += known[i] == NULL;
    }
    return n;
}

/* The first line of an exception's text, control characters as spaces, cut to FL_ROOT_MAX bytes at a
 * character boundary ("..." marks the cut); out holds FL_ROOT_MAX + 4 bytes. */
static void first_line(const char *s, char *out) {
    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r') s++;
    size_t n = 0;
    while (s[n] && s[n] != '\n' && s[n] != '\r' && n < FL_ROOT_MAX) n++;
    const int cut = s[n] && s[n] != '\n' && s[n] != '\r';
    if (cut)
        while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80) n--; /* s[n] continues a character */
    for (size_t i = 0; i < n; i++) out[i] = (unsigned char)s[i] < 0x20 ? ' ' : s[i];
    while (n > 0 && out[n - 1] == ' ') n--;
    memcpy(out + n, cut ? "..." : "", cut ? 4 : 1);
}

/* ---- the job's own answer: /jobs/<id>, or a job of /jobs/overview --------------------------------- */

/* The ids of the plan's source vertices (nodes without inputs) as the keys of a new object; *out NULL
 * when the answer has no plan with nodes. */
static bl_status plan_sources(rd *r, const json_t *job, const char *pre, json_t **out) {
    *out = NULL;
    const json_t *plan = json_object_get(job, "plan");
    if (!plan || json_is_null(plan)) return BL_OK;
    if (!json_is_object(plan)) return bad(r, "%splan is %s, not an object", pre, type_name(plan));
    const json_t *nodes = json_object_get(plan, "nodes");
    if (!nodes || json_is_null(nodes)) return BL_OK;
    if (!json_is_array(nodes)) return bad(r, "%splan.nodes is %s, not an array", pre, type_name(nodes));
    json_t *set = json_object();
    if (!set) return nomem(r);
    for (size_t i = 0; i < json_array_size(nodes); i++) {
        const json_t *node = json_array_get(nodes, i);
        char np[96];
        snprintf(np, sizeof np, "%splan.nodes[%zu].", pre, i);
        if (!json_is_object(node)) {
            json_decref(set);
            return bad(r, "%splan.nodes[%zu] is %s, not an object", pre, i, type_name(node));
        }
        const char *id;
        bl_status st = get_str(r, node, np, "id", &id);
        const json_t *in = json_object_get(node, "inputs");
        if (!st && in && !json_is_null(in) && !json_is_array(in))
            st = bad(r, "%sinputs is %s, not an array", np, type_name(in));
        if (st) {
            json_decref(set);
            return st;
        }
        if (id && json_array_size(in) == 0 && json_object_set_new(set, id, json_true()) != 0) {
            json_decref(set);
            return nomem(r);
        }
    }
    *out = set;
    return BL_OK;
}

/* Without a plan, sources by the names Flink gives them: "Source: ..." (DataStream, Table API) and
 * "DataSource (...)" (DataSet; "CHAIN DataSource ..." when chained). */
static int named_source(const char *name) {
    return name && (strncmp(name, "Source: ", 8) == 0 || strncmp(name, "DataSource", 10) == 0 ||
                    strncmp(name, "CHAIN DataSource", 16) == 0);
}

/* executors (the largest vertex parallelism) and input_bytes (read-bytes summed over the sources). */
static bl_status read_vertices(rd *r, const json_t *job, const char *pre, bl_run_record *rec) {
    const json_t *vs = json_object_get(job, "vertices");
    if (!vs || json_is_null(vs)) return BL_OK;
    if (!json_is_array(vs)) return bad(r, "%svertices is %s, not an array", pre, type_name(vs));
    json_t *sources;
    bl_status st = plan_sources(r, job, pre, &sources);
    if (st) return st;
    long most = -1;
    double in = 0;
    int have_in = 0;
    for (size_t i = 0; i < json_array_size(vs) && !st; i++) {
        const json_t *v = json_array_get(vs, i);
        char vp[96], mp[112];
        snprintf(vp, sizeof vp, "%svertices[%zu].", pre, i);
        snprintf(mp, sizeof mp, "%smetrics.", vp);
        if (!json_is_object(v)) {
            st = bad(r, "%svertices[%zu] is %s, not an object", pre, i, type_name(v));
            break;
        }
        rec->unknown_events += count_unknown(v, vertex_fields);
        const char *id, *name;
        double par = 0, rb = 0;
        int have_par, have_rb = 0;
        const json_t *m = json_object_get(v, "metrics");
        if ((st = get_str(r, v, vp, "id", &id)) || (st = get_str(r, v, vp, "name", &name)) ||
            (st = get_num(r, v, vp, "parallelism", &par, &have_par)))
            break;
        if (m && !json_is_null(m) && !json_is_object(m)) {
            st = bad(r, "%smetrics is %s, not an object", vp, type_name(m));
            break;
        }
        if (m && (st = get_num(r, m, mp, "read-bytes", &rb, &have_rb))) break;
        /* the adaptive batch scheduler shows -1 for a parallelism not decided yet */
        if (have_par && par >= 1 && par <= 1e9 && (long)par > most) most = (long)par;
        const int source = sources ? id && json_object_get(sources, id) : named_source(name);
        if (source && have_rb && rb >= 0) {
            in += rb;
            have_in = 1;
        }
    }
    json_decref(sources);
    if (st) return st;
    rec->executors = most;
    /* Flink's read-bytes counts what a task receives over the network, so a source reading files shows
     * 0: a sum of 0 says nothing of the job's input, and is left unknown */
    rec->input_bytes = have_in && in > 0 ? in : NAN;
    return BL_OK;
}

/* How a job's state ends its record: 0 FINISHED, 1 FAILED or CANCELED, 2 not ended, 3 not known. */
static int state_kind(const char *s) {
    static const char *const running[] = {"INITIALIZING", "CREATED", "RUNNING", "FAILING", "CANCELLING",
                                          "RESTARTING", "SUSPENDED", "RECONCILING", NULL};
    if (strcmp(s, "FINISHED") == 0) return 0;
    if (strcmp(s, "FAILED") == 0 || strcmp(s, "CANCELED") == 0) return 1;
    for (size_t i = 0; running[i]; i++)
        if (strcmp(s, running[i]) == 0) return 2;
    return 3;
}

/* Fills rec from a job's answer (a JobDetailsInfo, or a JobDetails of /jobs/overview; PRE names it in
 * messages: "" or "jobs[3]."): ids, times, state (root: the root exception's first line, or NULL). */
static bl_status fill_job(rd *r, const json_t *job, const char *pre, const char *root, bl_run_record *rec) {
    if (!json_is_object(job)) {
        char label[64];
        snprintf(label, sizeof label, "%.*s", (int)(strlen(pre) ? strlen(pre) - 1 : 0), pre);
        return bad(r, "%s is %s, not an object (a job)", *pre ? label : "the answer", type_name(job));
    }
    const char *jid, *name, *state;
    double start = 0, end = 0, dur = 0;
    int have_start, have_end, have_dur;
    bl_status st;
    if ((st = get_str(r, job, pre, "jid", &jid)) || (st = get_str(r, job, pre, "name", &name)) ||
        (st = get_str(r, job, pre, "state", &state)) ||
        (st = get_num(r, job, pre, "start-time", &start, &have_start)) ||
        (st = get_num(r, job, pre, "end-time", &end, &have_end)) ||
        (st = get_num(r, job, pre, "duration", &dur, &have_dur)))
        return st;
    if (!jid || !*jid) return bad(r, "%sjid is %s (the job id)", pre, jid ? "empty" : "missing");
    if (!state) return bad(r, "%sstate is missing (the job's status: FINISHED, FAILED, RUNNING, ...)", pre);
    if (!have_start) return bad(r, "%sstart-time is missing (when the job started, epoch ms)", pre);
    if (have_dur && dur < 0) note(r, "%sduration %.0f is negative; start-time and end-time are used", pre, dur);
    rec->unknown_events += count_unknown(job, job_fields);
    if ((st = bl_run_record_set(&rec->app_id, jid, r->err)) || (st = bl_run_record_set(&rec->name, name, r->err)))
        return st;
    rec->start_ms = start >= 0 ? start : NAN;
    rec->end_ms = have_end && end >= 0 ? end : NAN;
    if ((st = read_vertices(r, job, pre, rec))) return st;

    char why[FL_ROOT_MAX + 160], shown[40];
    printable(state, shown, sizeof shown);
    const int kind = state_kind(state);
    rec->state = BL_RUN_INCOMPLETE;
    if (kind == 3) {
        rec->unknown_events++;
        snprintf(why, sizeof why, "the job's state %s is not one this reader knows", shown);
    } else if (kind == 2) {
        snprintf(why, sizeof why, "the job had not ended (state %s)", shown);
    } else if (isnan(rec->start_ms)) {
        snprintf(why, sizeof why, "the job ended %s but has no start-time (%.0f)", shown, start);
    } else if (isnan(rec->end_ms)) {
        snprintf(why, sizeof why, "the job ended %s but has no end-time", shown);
    } else if (rec->end_ms < rec->start_ms) {
        snprintf(why, sizeof why, "the job ends before it starts (clock skew?)");
    } else if (kind == 0) {
        rec->state = BL_RUN_COMPLETE;
        why[0] = '\0';
    } else {
        rec->state = BL_RUN_FAILED;
        snprintf(why, sizeof why, "the job ended %s%s%s", shown, root && *root ? ": " : "", root ? root : "");
    }
    return bl_run_record_set(&rec->why, why, r->err);
}

/* ---- the archive's other answers ------------------------------------------------------------------- */

/* A JSON value as configuration text: a string as it is, null as "", anything else as compact JSON. */
static char *value_text(const json_t *v) {
    if (json_is_string(v)) return bl_strdup(json_string_value(v));
    if (!v || json_is_null(v)) return bl_strdup("");
    return json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
}

static bl_status conf_json(rd *r, bl_run_record *rec, const char *key, const json_t *v) {
    char *t = value_text(v);
    if (!t) return nomem(r);
    const bl_status st = bl_run_record_conf(rec, key, t, r->err);
    free(t);
    return st;
}

/* /jobs/<id>/jobmanager/config: the cluster's configuration, [{"key": ..., "value": ...}]. */
static bl_status read_jm_config(rd *r, const json_t *ans, bl_run_record *rec) {
    if (!json_is_array(ans)) return bad(r, "the answer is %s, not an array of {key, value}", type_name(ans));
    for (size_t i = 0; i < json_array_size(ans); i++) {
        const json_t *e = json_array_get(ans, i);
        char ep[32];
        snprintf(ep, sizeof ep, "[%zu].", i);
        if (!json_is_object(e)) return bad(r, "[%zu] is %s, not an object {key, value}", i, type_name(e));
        const char *key;
        bl_status st = get_str(r, e, ep, "key", &key);
        if (!st && !key) st = bad(r, "%skey is missing", ep);
        if (!st) st = conf_json(r, rec, key, json_object_get(e, "value"));
        if (st) return st;
    }
    return BL_OK;
}

/* /jobs/<id>/config: execution-config's fields as "execution-config.FIELD", and the job's own
 * parameters (execution-config.user-config, the web UI's "User Configuration") under their names. */
static bl_status read_job_config(rd *r, const json_t *ans, bl_run_record *rec) {
    if (!json_is_object(ans)) return bad(r, "the answer is %s, not an object", type_name(ans));
    const json_t *ec = json_object_get(ans, "execution-config");
    if (!ec || json_is_null(ec)) return BL_OK;
    if (!json_is_object(ec)) return bad(r, "execution-config is %s, not an object", type_name(ec));
    const json_t *uc = json_object_get(ec, "user-config");
    if (uc && !json_is_null(uc) && !json_is_object(uc))
        return bad(r, "execution-config.user-config is %s, not an object", type_name(uc));
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)ec, k, v) {
        if (strcmp(k, "user-config") == 0) continue;
        char *key = malloc(strlen(k) + sizeof "execution-config.");
        if (!key) return nomem(r);
        strcpy(key, "execution-config.");
        strcat(key, k);
        bl_status st = conf_json(r, rec, key, v);
        free(key);
        if (st) return st;
    }
    if (!json_is_object(uc)) return BL_OK;
    json_object_foreach((json_t *)uc, k, v) {
        bl_status st = conf_json(r, rec, k, v);
        if (st) return st;
    }
    return BL_OK;
}

/* /jobs/<id>/exceptions: the root exception's first line ("" when the job has none). Flink up to 1.x
 * writes root-exception; later ones keep only exceptionHistory.entries, newest first. */
static bl_status read_exceptions(rd *r, const json_t *ans, char *root) {
    root[0] = '\0';
    if (!json_is_object(ans)) return bad(r, "the answer is %s, not an object", type_name(ans));
    const char *s;
    bl_status st = get_str(r, ans, "", "root-exception", &s);
    if (st || s) {
        if (s) first_line(s, root);
        return st;
    }
    const json_t *h = json_object_get(ans, "exceptionHistory");
    if (!h || json_is_null(h)) return BL_OK;
    if (!json_is_object(h)) return bad(r, "exceptionHistory is %s, not an object", type_name(h));
    const json_t *es = json_object_get(h, "entries");
    if (!es || json_is_null(es)) return BL_OK;
    if (!json_is_array(es)) return bad(r, "exceptionHistory.entries is %s, not an array", type_name(es));
    const json_t *e = json_array_get(es, 0);
    if (!e) return BL_OK;
    if (!json_is_object(e)) return bad(r, "exceptionHistory.entries[0] is %s, not an object", type_name(e));
    const char *trace, *name;
    if ((st = get_str(r, e, "exceptionHistory.entries[0].", "stacktrace", &trace)) ||
        (st = get_str(r, e, "exceptionHistory.entries[0].", "exceptionName", &name)))
        return st;
    if (trace || name) first_line(trace && *trace ? trace : name, root);
    return BL_OK;
}

/* /jobs/<id>/vertices/<vid>/taskmanagers: adds the task managers that ran the vertex's subtasks to
 * the keys of tms, each by its taskmanager-id (Flink 1.13+), else endpoint, else host ("(unassigned)":
 * a subtask never deployed). */
static bl_status add_taskmanagers(rd *r, const json_t *ans, json_t *tms) {
    if (!json_is_object(ans)) return bad(r, "the answer is %s, not an object", type_name(ans));
    const json_t *list = json_object_get(ans, "taskmanagers");
    if (!list || json_is_null(list)) return BL_OK;
    if (!json_is_array(list)) return bad(r, "taskmanagers is %s, not an array", type_name(list));
    static const char *const keys[] = {"taskmanager-id", "endpoint", "host"};
    for (size_t i = 0; i < json_array_size(list); i++) {
        const json_t *tm = json_array_get(list, i);
        char tp[48];
        snprintf(tp, sizeof tp, "taskmanagers[%zu].", i);
        if (!json_is_object(tm)) return bad(r, "taskmanagers[%zu] is %s, not an object", i, type_name(tm));
        const char *who = NULL;
        for (size_t k = 0; k < 3 && !who; k++) {
            bl_status st = get_str(r, tm, tp, keys[k], &who);
            if (st) return st;
        }
        if (who && strcmp(who, "(unassigned)") != 0 && json_object_set_new(tms, who, json_true()) != 0)
            return nomem(r);
    }
    return BL_OK;
}

/* /config (the History Server's dashboard configuration): flink-version. */
static bl_status read_dashboard(rd *r, const json_t *ans, bl_run_record *rec) {
    if (!json_is_object(ans)) return bad(r, "the answer is %s, not an object", type_name(ans));
    const char *v;
    bl_status st = get_str(r, ans, "", "flink-version", &v);
    return st || !v ? st : bl_run_record_set(&rec->version, v, r->err);
}

/* /jobs/<id>/jobmanager/environment: the version in the name of the flink-dist jar on the classpath
 * ("flink-dist-1.18.1.jar", "flink-dist_2.12-1.14.6.jar"), when the archive has no /config. */
static bl_status version_from_classpath(rd *r, const json_t *ans, bl_run_record *rec) {
    const json_t *cp = json_is_object(ans) ? json_object_get(ans, "classpath") : NULL;
    for (size_t i = 0; i < json_array_size(cp); i++) {
        const char *s = json_string_value(json_array_get(cp, i));
        const char *base = s ? strrchr(s, '/') : NULL;
        base = base ? base + 1 : s;
        if (!base || strncmp(base, "flink-dist", 10) != 0) continue;
        const char *p = base + 10;
        if (*p == '_') p = strchr(p, '-'); /* the Scala version */
        if (!p || *p != '-' || p[1] < '0' || p[1] > '9') continue;
        const size_t n = strlen(p + 1);
        if (n <= 4 || strcmp(p + 1 + n - 4, ".jar") != 0) continue;
        char v[64];
        snprintf(v, sizeof v, "%.*s", (int)(n - 4 < sizeof v - 1 ? n - 4 : sizeof v - 1), p + 1);
        return bl_run_record_set(&rec->version, v, r->err);
    }
    return BL_OK;
}

/* ---- what the configuration tells ------------------------------------------------------------------- */

/* Flink's MemorySize text ("1728m", "4 gb", "1073741824": a whole number and a unit, bytes without
 * one) in bytes, or -1 when it is none. */
static double memory_bytes(const char *s) {
    static const struct { const char *unit; double mult; } units[] = {
        {"", 1}, {"b", 1}, {"bytes", 1}, {"k", 1024.0}, {"kb", 1024.0}, {"kibibytes", 1024.0},
        {"m", 1048576.0}, {"mb", 1048576.0}, {"mebibytes", 1048576.0},
        {"g", 1073741824.0}, {"gb", 1073741824.0}, {"gibibytes", 1073741824.0},
        {"t", 1099511627776.0}, {"tb", 1099511627776.0}, {"tebibytes", 1099511627776.0}};
    while (*s == ' ') s++;
    if (*s < '0' || *s > '9') return -1;
    double v = 0;
    for (; *s >= '0' && *s <= '9'; s++)
        if ((v = v * 10 + (*s - '0')) > 1e18) return -1;
    while (*s == ' ') s++;
    char unit[16];
    size_t n = 0;
    for (; s[n] && s[n] != ' ' && n + 1 < sizeof unit; n++)
        unit[n] = (char)(s[n] >= 'A' && s[n] <= 'Z' ? s[n] + 32 : s[n]);
    unit[n] = '\0';
    for (s += n; *s == ' '; s++) {}
    if (*s) return -1;
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (strcmp(unit, units[i].unit) == 0) return v * units[i].mult;
    return -1;
}

/* A list option as Flink prints it, "a;b;'c;d'" (items with ';' or quotes in '...', a quote doubled)
 * or, from a standard YAML configuration, "[a, b, 'c, d']", joined with spaces. */
static char *list_words(const char *s) {
    size_t n = strlen(s);
    while (n && s[n - 1] == ' ') n--;
    while (n && *s == ' ') s++, n--;
    char sep = ';';
    if (n >= 2 && s[0] == '[' && s[n - 1] == ']') sep = ',', s++, n -= 2;
    char *out = malloc(n + 1);
    if (!out) return NULL;
    size_t o = 0, i = 0;
    while (i < n) {
        while (i < n && s[i] == ' ') i++;
        if (o) out[o++] = ' ';
        if (i < n && (s[i] == '\'' || s[i] == '"')) {
            const char q = s[i++];
            for (; i < n; i++) {
                if (s[i] == q && i + 1 < n && s[i + 1] == q) out[o++] = s[i++];
                else if (s[i] == q) break;
                else out[o++] = s[i];
            }
            while (i < n && s[i] != sep) i++;
        } else {
            const size_t from = o;
            for (; i < n && s[i] != sep; i++) out[o++] = s[i];
            while (o > from && out[o - 1] == ' ') o--;
        }
        i++; /* the separator */
    }
    while (o && out[o - 1] == ' ') o--;
    out[o] = '\0';
    return out;
}

struct archive;
static void at_conf_key(rd *r, const struct archive *a, const char *key);

/* executor_cores (task slots per task manager), executor_memory_mb (a task manager's whole process, as
 * its container is sized) and args from the configuration read; a note names the answer that holds the
 * value (the job's configuration or the cluster's), not the file alone. */
static bl_status from_configuration(rd *r, const struct archive *a, bl_run_record *rec) {
    char shown[64];
    const char *slots = bl_run_record_get(rec, "taskmanager.numberOfTaskSlots");
    if (slots) {
        at_conf_key(r, a, "taskmanager.numberOfTaskSlots");
        char *end;
        const long v = strtol(slots, &end, 10);
        while (*end == ' ') end++;
        printable(slots, shown, sizeof shown);
        if (end != slots && !*end && v >= 1 && v <= 1000000) rec->executor_cores = v;
        else
            note(r, "taskmanager.numberOfTaskSlots '%s' is not a count of slots; executor_cores is left unknown",
                 shown);
    }
    const char *mem = bl_run_record_get(rec, "taskmanager.memory.process.size");
    if (mem) {
        at_conf_key(r, a, "taskmanager.memory.process.size");
        const double b = memory_bytes(mem);
        printable(mem, shown, sizeof shown);
        if (b >= 0) rec->executor_memory_mb = b / 1048576.0;
        else note(r, "taskmanager.memory.process.size '%s' is not a memory size; executor_memory_mb is left unknown",
                  shown);
    }
    const char *args = bl_run_record_get(rec, "$internal.application.program-args");
    if (args) {
        char *w = list_words(args);
        if (!w) return nomem(r);
        free(rec->args);
        rec->args = w;
    }
    return BL_OK;
}

/* ---- an archive ------------------------------------------------------------------------------------- */

typedef enum pkind {
    P_OTHER, P_DASHBOARD, P_OVERVIEW, P_DETAILS, P_CONFIG, P_EXCEPTIONS, P_JMCONFIG, P_JMENV, P_TMS, P_JOB_OTHER,
    P_KINDS
} pkind;

/* What an archive path answers, and the job id in it (*id, *idlen) for paths under /jobs/<id>. */
static pkind classify(const char *path, const char **id, size_t *idlen) {
    *id = NULL;
    *idlen = 0;
    if (strcmp(path, "/config") == 0) return P_DASHBOARD;
    if (strcmp(path, "/jobs/overview") == 0) return P_OVERVIEW;
    if (strncmp(path, "/jobs/", 6) != 0) return P_OTHER;
    *id = path + 6;
    *idlen = strcspn(*id, "/");
    if (*idlen == 0) return P_OTHER;
    const char *rest = *id + *idlen;
    if (!*rest) return P_DETAILS;
    if (strcmp(rest, "/config") == 0) return P_CONFIG;
    if (strcmp(rest, "/exceptions") == 0) return P_EXCEPTIONS;
    if (strcmp(rest, "/jobmanager/config") == 0) return P_JMCONFIG;
    if (strcmp(rest, "/jobmanager/environment") == 0) return P_JMENV;
    if (strncmp(rest, "/vertices/", 10) == 0) {
        const size_t v = strcspn(rest + 10, "/");
        if (v > 0 && strcmp(rest + 10 + v, "/taskmanagers") == 0) return P_TMS;
    }
    return P_JOB_OTHER;
}

/* The answers of one archive that make its record. */
typedef struct archive {
    const json_t *entries;
    unsigned char *skip;      /* per entry: a repeated path, not read */
    json_t *ans[P_KINDS];     /* parsed answers of the kinds kept (owned) */
    size_t idx[P_KINDS];      /* and their entries */
    json_t *tms;              /* task managers seen (keys) */
    int tms_seen;             /* some taskmanagers answer was read */
} archive;

static const char *entry_path(const archive *a, size_t i) {
    return json_string_value(json_object_get(json_array_get(a->entries, i), "path"));
}

/* Parses entry i's "json" into *out, naming the entry when it is no JSON. */
static bl_status parse_entry(rd *r, const archive *a, size_t i, json_t **out) {
    const json_t *js = json_object_get(json_array_get(a->entries, i), "json");
    json_error_t je;
    set_at_entry(r, i, entry_path(a, i));
    *out = json_loadb(json_string_value(js), json_string_length(js), 0, &je);
    if (*out) return BL_OK;
    if (json_error_code(&je) == json_error_out_of_memory) return nomem(r);
    return bad(r, "json is not a JSON answer: line %d, column %d: %s", je.line, je.column, je.text);
}

/* Checks every entry ({path, json}, both strings), marks repeated paths, and keeps the answers that
 * name the job: /jobs/<id> (one job only), /jobs/overview, /config. */
static bl_status scan_entries(rd *r, archive *a, bl_run_record *rec) {
    const size_t n = json_array_size(a->entries);
    json_t *seen = json_object();
    if (!seen) return nomem(r);
    bl_status st = BL_OK;
    for (size_t i = 0; i < n && !st; i++) {
        const json_t *e = json_array_get(a->entries, i);
        r->at[0] = '\0';
        if (!json_is_object(e)) {
            st = bad(r, "archive entry %zu is %s, not an object {path, json}", i, type_name(e));
            break;
        }
        const json_t *p = json_object_get(e, "path"), *js = json_object_get(e, "json");
        if (!json_is_string(p)) {
            st = bad(r, "archive entry %zu: path is %s, not a string", i, p ? type_name(p) : "missing");
            break;
        }
        set_at_entry(r, i, json_string_value(p));
        if (!json_is_string(js)) {
            st = bad(r, "json is %s, not a string (the REST answer as JSON text)", js ? type_name(js) : "missing");
            break;
        }
        rec->unknown_events += json_object_size(e) - 2; /* fields besides path and json */
        const json_t *first = json_object_get(seen, json_string_value(p));
        if (first) {
            note(r, "repeats the path of archive entry %" JSON_INTEGER_FORMAT "; the first is used",
                 json_integer_value(first));
            a->skip[i] = 1;
            continue;
        }
        if (json_object_set_new(seen, json_string_value(p), json_integer((json_int_t)i)) != 0) {
            st = nomem(r);
            break;
        }
        const char *id;
        size_t idlen;
        const pkind k = classify(json_string_value(p), &id, &idlen);
        if (k != P_DASHBOARD && k != P_OVERVIEW && k != P_DETAILS) continue;
        if (a->ans[k]) { /* a second /jobs/<id> with another id */
            char one[200];
            printable(entry_path(a, a->idx[k]), one, sizeof one);
            st = bad(r, "the archive holds a second job besides %s (entry %zu); an archive is one job's", one,
                     a->idx[k]);
            break;
        }
        a->idx[k] = i;
        st = parse_entry(r, a, i, &a->ans[k]);
    }
    json_decref(seen);
    return st;
}

/* The other answers of the job jid[0..jl): configuration, exceptions, task managers, environment. */
static bl_status read_job_entries(rd *r, archive *a, const char *jid, size_t jl, bl_run_record *rec) {
    const size_t n = json_array_size(a->entries);
    for (size_t i = 0; i < n; i++) {
        if (a->skip[i]) continue;
        const char *id;
        size_t idlen;
        const pkind k = classify(entry_path(a, i), &id, &idlen);
        if (k == P_DASHBOARD || k == P_OVERVIEW || k == P_DETAILS) continue;
        if (k == P_OTHER || idlen != jl || memcmp(id, jid, jl) != 0) { /* or another job's answer */
            rec->unknown_events++;
            continue;
        }
        if (k == P_JOB_OTHER) continue; /* Flink's, not needed */
        json_t *ans;
        bl_status st = parse_entry(r, a, i, &ans);
        if (st) return st;
        if (k == P_TMS) {
            a->tms_seen = 1;
            st = add_taskmanagers(r, ans, a->tms);
            json_decref(ans);
            if (st) return st;
        } else {
            a->ans[k] = ans;
            a->idx[k] = i;
        }
    }
    return BL_OK;
}

/* Sets r->at to the entry of answer kind k. */
static void at_kind(rd *r, const archive *a, pkind k) { set_at_entry(r, a->idx[k], entry_path(a, a->idx[k])); }

/* Sets r->at to the answer whose value of configuration key the record holds: the job's own
 * (/jobs/<id>/config, read last, replaces) when it gives the key, else the cluster's. */
static void at_conf_key(rd *r, const archive *a, const char *key) {
    const json_t *ec = json_object_get(a->ans[P_CONFIG], "execution-config");
    const int job = strncmp(key, "execution-config.", 17) == 0
                        ? json_object_get(ec, key + 17) != NULL
                        : json_object_get(json_object_get(ec, "user-config"), key) != NULL;
    if (a->ans[P_CONFIG] && job) at_kind(r, a, P_CONFIG);
    else if (a->ans[P_JMCONFIG]) at_kind(r, a, P_JMCONFIG);
    else r->at[0] = '\0';
}

static bl_status read_archive(rd *r, const json_t *top, bl_run_record *rec) {
    archive a = {0};
    a.entries = json_object_get(top, "archive");
    if (!json_is_array(a.entries)) return bad(r, "archive is %s, not an array of {path, json}", type_name(a.entries));
    a.skip = calloc(json_array_size(a.entries) + 1, 1);
    a.tms = json_object();
    bl_status st = a.skip && a.tms ? scan_entries(r, &a, rec) : nomem(r);

    /* the job: its /jobs/<id> answer, else the one job of the archive's /jobs/overview */
    const json_t *job = NULL;
    const char *pre = "", *jid = "";
    size_t jl = 0;
    if (!st && a.ans[P_DETAILS]) {
        classify(entry_path(&a, a.idx[P_DETAILS]), &jid, &jl);
        job = a.ans[P_DETAILS];
        at_kind(r, &a, P_DETAILS);
    } else if (!st && a.ans[P_OVERVIEW]) {
        at_kind(r, &a, P_OVERVIEW);
        const json_t *jobs = json_is_object(a.ans[P_OVERVIEW]) ? json_object_get(a.ans[P_OVERVIEW], "jobs") : NULL;
        if (json_array_size(jobs) != 1)
            st = bad(r, "the archive has no /jobs/<jobid> entry, and its overview does not hold one job");
        job = json_array_get(jobs, 0);
        pre = "jobs[0].";
        const char *s = json_is_object(job) ? json_string_value(json_object_get(job, "jid")) : NULL;
        jid = s ? s : "";
        jl = strlen(jid);
    } else if (!st) {
        r->at[0] = '\0';
        st = bad(r, "the archive has no /jobs/<jobid> entry (the job's details)");
    }
    if (!st) st = read_job_entries(r, &a, jid, jl, rec);

    char root[FL_ROOT_MAX + 4] = "";
    if (!st && a.ans[P_EXCEPTIONS]) {
        at_kind(r, &a, P_EXCEPTIONS);
        st = read_exceptions(r, a.ans[P_EXCEPTIONS], root);
    }
    if (!st) {
        at_kind(r, &a, a.ans[P_DETAILS] ? P_DETAILS : P_OVERVIEW);
        st = fill_job(r, job, pre, root, rec);
        if (!st && (strlen(rec->app_id) != jl || memcmp(rec->app_id, jid, jl) != 0)) {
            char shown[80];
            printable(rec->app_id, shown, sizeof shown);
            note(r, "answers for job %s; its jid is used", shown);
        }
    }
    /* the cluster's configuration first, the job's own after it (a key it repeats replaces) */
    if (!st && a.ans[P_JMCONFIG]) {
        at_kind(r, &a, P_JMCONFIG);
        st = read_jm_config(r, a.ans[P_JMCONFIG], rec);
    }
    if (!st && a.ans[P_CONFIG]) {
        at_kind(r, &a, P_CONFIG);
        st = read_job_config(r, a.ans[P_CONFIG], rec);
    }
    if (!st) st = from_configuration(r, &a, rec);
    if (!st && a.ans[P_DASHBOARD]) {
        at_kind(r, &a, P_DASHBOARD);
        st = read_dashboard(r, a.ans[P_DASHBOARD], rec);
    }
    if (!st && !rec->version[0] && a.ans[P_JMENV]) st = version_from_classpath(r, a.ans[P_JMENV], rec);
    if (!st) rec->hosts = a.tms_seen ? (long)json_object_size(a.tms) : -1;

    for (int k = 0; k < P_KINDS; k++) json_decref(a.ans[k]);
    json_decref(a.tms);
    free(a.skip);
    r->at[0] = '\0';
    return st;
}

/* ---- the file ---------------------------------------------------------------------------------------- */

static bl_status load(rd *r, json_t **out) {
    *out = NULL;
    struct stat sb;
    if (stat(r->file, &sb) == 0 && S_ISREG(sb.st_mode) && (uintmax_t)sb.st_size > FL_MAX_BYTES)
        return bl_seterr(r->err, BL_EFORMAT,
                         "%s: %jd bytes, more than the %zu MiB a Flink job archive is read up to (is it one?)",
                         r->file, (intmax_t)sb.st_size, FL_MAX_BYTES >> 20);
    char *buf;
    size_t len;
    bl_status st = bl_read_file(r->file, FL_MAX_BYTES, &buf, &len, r->err);
    if (st) return st;
    size_t off = len >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0; /* a byte-order mark */
    size_t ws = off;
    while (ws < len && (buf[ws] == ' ' || buf[ws] == '\t' || buf[ws] == '\n' || buf[ws] == '\r')) ws++;
    if (ws == len) {
        free(buf);
        return bad(r, "empty file: a Flink job archive or a saved /jobs/<jobid> answer is a JSON object");
    }
    json_error_t je;
    json_t *j = json_loadb(buf + off, len - off, 0, &je);
    free(buf);
    if (!j) {
        if (json_error_code(&je) == json_error_out_of_memory) return nomem(r);
        if (json_error_code(&je) == json_error_invalid_utf8)
            return bad(r, "line %d: not UTF-8 text (%s); Flink writes its archives and answers in UTF-8, "
                          "so the file was changed or is another kind of file",
                       je.line, je.text);
        return bad(r, "not JSON (line %d, column %d: %s): not a Flink job archive or /jobs/<jobid> answer",
                   je.line, je.column, je.text);
    }
    if (!json_is_object(j)) {
        const char *t = type_name(j);
        json_decref(j);
        return bad(r, "the file's JSON is %s, not an object (a Flink job archive or /jobs/<jobid> answer)", t);
    }
    *out = j;
    return BL_OK;
}

/* A /jobs/overview answer: one record per job, all made before the first is given to the sink. */
static bl_status read_overview(rd *r, const json_t *jobs) {
    if (!json_is_array(jobs)) return bad(r, "jobs is %s, not an array", type_name(jobs));
    const size_t n = json_array_size(jobs);
    bl_run_record **recs = calloc(n + 1, sizeof *recs);
    if (!recs) return nomem(r);
    bl_status st = BL_OK;
    for (size_t i = 0; i < n && !st; i++) {
        char pre[48];
        snprintf(pre, sizeof pre, "jobs[%zu].", i);
        recs[i] = bl_run_record_new(r->file, "flink");
        st = recs[i] ? fill_job(r, json_array_get(jobs, i), pre, NULL, recs[i]) : nomem(r);
    }
    size_t i = 0;
    for (; i < n && !st; i++) {
        st = r->sink->record(r->sink->ctx, recs[i], r->err);
        recs[i] = NULL; /* the sink's now */
    }
    for (size_t j = 0; j < n; j++) bl_run_record_free(recs[j]);
    free(recs);
    return st;
}

bl_status bl_flink_read(const char *path, const bl_import_sink *sink, bl_error *err) {
    BL_CHECK_ARG(path && sink && sink->record, err, "bl_flink_read: NULL argument");
    rd r = {.file = path, .sink = sink, .err = err};
    json_t *top;
    bl_status st = load(&r, &top);
    if (st) return st;
    const json_t *arch = json_object_get(top, "archive"), *jobs = json_object_get(top, "jobs");
    if (arch || json_object_get(top, "jid")) {
        bl_run_record *rec = bl_run_record_new(path, "flink");
        if (!rec) st = nomem(&r);
        else if (arch) st = read_archive(&r, top, rec);
        else st = fill_job(&r, top, "", NULL, rec);
        if (!st) st = sink->record(sink->ctx, rec, err);
        else bl_run_record_free(rec);
    } else if (jobs) {
        st = read_overview(&r, jobs);
    } else {
        st = bad(&r, "neither a Flink job archive (no \"archive\") nor a saved /jobs/<jobid> answer "
                     "(no \"jid\") nor a /jobs/overview answer (no \"jobs\")");
    }
    json_decref(top);
    return st;
}

/* ---- sniffing ------------------------------------------------------------------------------------------ */

/* 1 when text has "KEY" followed by ':' (a member name, not a value). */
static int has_member(const char *text, const char *key) {
    const size_t kl = strlen(key);
    for (const char *p = strstr(text, key); p; p = strstr(p + 1, key)) {
        if (p == text || p[-1] != '"' || p[kl] != '"') continue;
        const char *q = p + kl + 1;
        while (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r') q++;
        if (*q == ':') return 1;
    }
    return 0;
}

int bl_flink_sniff(const char *path) {
    if (!path) return 0;
    FILE *f = bl_file_open_read(path, 1, NULL);
    if (!f) return 0;
    char buf[FL_SNIFF_BYTES + 1];
    const size_t n = fread(buf, 1, FL_SNIFF_BYTES, f);
    fclose(f);
    buf[n] = '\0';
    if (strlen(buf) != n) return 0; /* a NUL: no JSON text */
    const char *p = n >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0 ? buf + 3 : buf;
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
    return *p == '{' && (has_member(p, "archive") || has_member(p, "jid"));
}
