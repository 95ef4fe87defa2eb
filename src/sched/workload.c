/* workload.c — DBMLSched workloads: the TSV reader/writer (format documented in bellamy/sched.h) and
 * the generators "paper", "hybrid", "sql" and "poisson:N".
 * It does not simulate anything; jobs here carry their true sizes, and the simulator decides what a
 * scheduler may see. */
#include "sched/sched_internal.h"
#include "common/error.h"
#include "common/file.h"
#include "common/fmt.h"
#include "common/suggest.h"
#include "common/utf8.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const bl_sched_kind_names[BL_SCHED_NKINDS] = { "nn", "nn_small", "nn_large", "kmeans", "regression" };

int bl_sched_kind_lookup(const char *name) {
    for (int i = 0; i < BL_SCHED_NKINDS; i++)
        if (strcmp(name, bl_sched_kind_names[i]) == 0) return i;
    return -1;
}

bl_sched_workload *bl_sched_workload_alloc(void) {
    bl_sched_workload *w = calloc(1, sizeof *w);
    if (!w) return NULL;
    w->interference = 1.0;
    w->overhead_s = 0.1;
    return w;
}

void bl_sched_workload_free(bl_sched_workload *w) {
    if (!w) return;
    free(w->jobs);
    free(w->par);
    free(w->load);
    free(w);
}

bl_status bl_sched_workload_push(bl_sched_workload *w, const bl_sched_wjob *j, const double *params) {
    if (w->n == w->cap) {
        size_t nc = w->cap ? w->cap * 2 : 64;
        bl_sched_wjob *nj = realloc(w->jobs, nc * sizeof *nj);
        if (!nj) return BL_ENOMEM;
        w->jobs = nj;
        w->cap = nc;
    }
    if (j->n_params > w->cappar - w->npar) {
        size_t nc = w->cappar ? w->cappar * 2 : 256;
        if (nc > UINT32_MAX) return BL_ENOMEM;   /* par_off is 32 bits: 4 x 10^7 params at most */
        double *np = realloc(w->par, nc * sizeof *np);
        if (!np) return BL_ENOMEM;
        w->par = np;
        w->cappar = nc;
    }
    bl_sched_wjob *x = &w->jobs[w->n++];
    *x = *j;
    x->par_off = (uint32_t)w->npar;
    if (j->n_params) memcpy(w->par + w->npar, params, j->n_params * sizeof *params);
    w->npar += j->n_params;
    return BL_OK;
}

bl_status bl_sched_workload_push_load(bl_sched_workload *w, double t, double pct) {
    if (w->nload == w->capload) {
        size_t nc = w->capload ? w->capload * 2 : 8;
        bl_sched_load_step *nl = realloc(w->load, nc * sizeof *nl);
        if (!nl) return BL_ENOMEM;
        w->load = nl;
        w->capload = nc;
    }
    w->load[w->nload].t = t;
    w->load[w->nload].pct = pct;
    w->nload++;
    return BL_OK;
}

/* Stable merge sort by arrival: qsort is not stable, and input order must break ties. */
static void sort_jobs(bl_sched_wjob *a, bl_sched_wjob *tmp, size_t n) {
    if (n < 2) return;
    size_t h = n / 2;
    sort_jobs(a, tmp, h);
    sort_jobs(a + h, tmp, n - h);
    if (a[h - 1].arrival <= a[h].arrival) return;   /* already ordered: the common case */
    size_t i = 0, j = h, k = 0;
    while (i < h && j < n) tmp[k++] = (a[j].arrival < a[i].arrival) ? a[j++] : a[i++];
    while (i < h) tmp[k++] = a[i++];
    while (j < n) tmp[k++] = a[j++];
    memcpy(a, tmp, n * sizeof *a);
}

bl_status bl_sched_workload_finish(bl_sched_workload *w) {
    if (w->n > 1) {
        bl_sched_wjob *tmp = malloc(w->n * sizeof *tmp);
        if (!tmp) return BL_ENOMEM;
        sort_jobs(w->jobs, tmp, w->n);
        free(tmp);
    }
    /* load steps: few, insertion sort (stable) */
    for (size_t i = 1; i < w->nload; i++) {
        bl_sched_load_step s = w->load[i];
        size_t j = i;
        while (j > 0 && w->load[j - 1].t > s.t) { w->load[j] = w->load[j - 1]; j--; }
        w->load[j] = s;
    }
    return BL_OK;
}

size_t bl_sched_workload_njobs(const bl_sched_workload *w) { return w ? w->n : 0; }

bl_status bl_sched_workload_job(const bl_sched_workload *w, size_t i, bl_sched_job_info *out) {
    if (!w || !out || i >= w->n) return BL_EINVAL;
    const bl_sched_wjob *j = &w->jobs[i];
    out->arrival = j->arrival;
    out->kind = bl_sched_kind_names[j->kind];
    out->iterations = j->iters;
    out->implicit = j->implicit;
    for (int d = 0; d < 2; d++) { out->s_per_iter[d] = j->spi[d]; out->use_pct[d] = j->use[d]; }
    return BL_OK;
}

/* ---------------- TSV reader ---------------- */

#define MAXCOLS 16

/* The simulator's clock: an arrival, a job's work on a device (iterations x seconds per iteration) and
 * the pause cost are each at most 1e12 s (some 30 000 years), and the GPU slow-down at most 1e6 (what
 * the core assumes of a GPU that shows no use at all). Then every time a run reaches -- a sum of ten
 * million jobs' slowed work and of a pause cost per event -- stays far below overflow, which the
 * tester's 1e308 s per iteration and 1e308 s overhead reached as "time inf is not a finite number of
 * seconds", with no file, line or field. */
#define TIME_MAX_S 1e12
#define INTERFERENCE_MAX 1e6

/* User text as a message quotes it: a file's field, a workload name (common/utf8.h: bytes that are not
 * UTF-8 and control characters written \xHH, cut with "..." past some 60 characters). */
#define QMAX 72
#define Q(s) bl_utf8_escape((char[QMAX]){ 0 }, QMAX, (s))

static int parse_num(const char *s, double *out) {
    if (!*s) return 0;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end != '\0' || errno == ERANGE || !isfinite(v)) return 0;
    *out = v;
    return 1;
}

/* Whitespace-separated words over columns (a line written with spaces instead of tabs has few
 * columns but many words). */
static int words(char *const *cols, int nc) {
    int n = 0;
    for (int i = 0; i < nc; i++)
        for (const char *c = cols[i]; *c;) {
            while (*c == ' ') c++;
            if (!*c) break;
            n++;
            while (*c && *c != ' ') c++;
        }
    return n;
}

/* A directive line: cols[0] starts with '@'. Fields are tab-separated as in job lines; one written
 * with spaces is recognised by its first word and the error says to use tabs. Messages name the
 * field by number (the directive itself is field 1) and what to write. */
static bl_status parse_directive(bl_sched_workload *w, char **cols, int nc, const char *name, size_t lineno,
                                 bl_error *err) {
    static const char *const dirs[2] = { "@load", "@set" };
    char word[64];
    size_t wl = strcspn(cols[0], " ");
    snprintf(word, sizeof word, "%.*s", (int)(wl < sizeof word - 1 ? wl : sizeof word - 1), cols[0]);
    int d = strcmp(word, "@load") == 0 ? 0 : strcmp(word, "@set") == 0 ? 1 : -1;
    if (d < 0) {
        char sug[160];
        return bl_seterr(err, BL_EFORMAT, "%s:%zu: unknown directive '%s' (@load, @set)%s", name, lineno, Q(word),
                         bl_suggest(word, dirs, 2, "", sug, sizeof sug));
    }
    const char *usage = d == 0 ? "@load<TAB>time_s<TAB>db_cpu_pct, e.g. @load<TAB>60<TAB>20"
                               : "@set<TAB>key<TAB>value, e.g. @set<TAB>interference<TAB>1.5";
    if (nc < 3) {
        int nw = words(cols, nc);
        if (nw == 3) {   /* the fields are all there, separated by spaces: spell out the fix */
            char fix[200];
            size_t fl = 0;
            fix[0] = '\0';
            for (int i = 0; i < nc; i++)
                for (const char *c = cols[i]; *c;) {
                    while (*c == ' ') c++;
                    size_t l = strcspn(c, " ");
                    if (!l) break;
                    int n = snprintf(fix + fl, sizeof fix - fl, "%s%.*s", fl ? "<TAB>" : "", (int)l, c);
                    if (n < 0 || (size_t)n >= sizeof fix - fl) { snprintf(fix, sizeof fix, "%s", usage); i = nc; break; }
                    fl += (size_t)n;
                    c += l;
                }
            return bl_seterr(err, BL_EFORMAT, "%s:%zu: %s: fields are separated by spaces, not tabs: write %s", name,
                             lineno, dirs[d], bl_utf8_escape((char[sizeof fix * 4]){ 0 }, sizeof fix * 4, fix));
        }
        return bl_seterr(err, BL_EFORMAT, "%s:%zu: %s needs 2 tab-separated fields after it, found %d%s: write %s", name,
                         lineno, dirs[d], nw - 1, nw > nc ? " (separated by spaces, not tabs)" : "", usage);
    }
    for (int i = 3; i < nc; i++)
        if (cols[i][0])
            return bl_seterr(err, BL_EFORMAT, "%s:%zu: %s takes 2 fields after it; field %d '%s' is one too many: "
                             "write %s", name, lineno, dirs[d], i + 1, Q(cols[i]), usage);
    if (d == 0) {
        double t, pct;
        if (!parse_num(cols[1], &t) || t < 0)
            return bl_seterr(err, BL_EFORMAT, "%s:%zu: @load time_s (field 2) '%s' must be a number >= 0 (seconds)",
                             name, lineno, Q(cols[1]));
        if (!parse_num(cols[2], &pct) || pct < 0 || pct > 100)
            return bl_seterr(err, BL_EFORMAT, "%s:%zu: @load db_cpu_pct (field 3) '%s' must be a number in 0..100",
                             name, lineno, Q(cols[2]));
        return bl_sched_workload_push_load(w, t, pct) ? bl_seterr(err, BL_ENOMEM, "out of memory") : BL_OK;
    }
    static const char *const keys[2] = { "interference", "overhead" };
    int k = strcmp(cols[1], keys[0]) == 0 ? 0 : strcmp(cols[1], keys[1]) == 0 ? 1 : -1;
    if (k < 0) {
        char sug[160];
        return bl_seterr(err, BL_EFORMAT, "%s:%zu: @set key (field 2) '%s' is unknown: interference or overhead%s",
                         name, lineno, Q(cols[1]), bl_suggest(cols[1], keys, 2, "", sug, sizeof sug));
    }
    double v;
    if (!parse_num(cols[2], &v) || (k == 0 && !(v >= 1 && v <= INTERFERENCE_MAX)) || (k == 1 && !(v >= 0 && v <= TIME_MAX_S)))
        return bl_seterr(err, BL_EFORMAT, "%s:%zu: @set %s value (field 3) '%s' must be %s", name, lineno, keys[k],
                         Q(cols[2]), k == 0 ? "a number >= 1 and at most 1e6 (the GPU slow-down factor; beyond 1e6, "
                                              "slowed jobs' times overflow the simulator's clock)"
                                            : "a number >= 0 and at most 1e12 (seconds; beyond 1e12 s, the pauses' "
                                              "times overflow the simulator's clock)");
    if (k == 0) w->interference = v;
    else w->overhead_s = v;
    return BL_OK;
}

static bl_status parse_line(bl_sched_workload *w, char *line, const char *name, size_t lineno, bl_error *err) {
    char *cols[MAXCOLS];
    int nc = 0;
    char *p = line;
    for (;;) {
        if (nc == MAXCOLS) return bl_seterr(err, BL_EFORMAT, "%s:%zu: too many columns (at most %d)", name, lineno, MAXCOLS);
        cols[nc++] = p;
        char *tab = strchr(p, '\t');
        if (!tab) break;
        *tab = '\0';
        p = tab + 1;
    }
    /* trim spaces around each column so hand-written files are forgiving */
    for (int i = 0; i < nc; i++) {
        while (*cols[i] == ' ') cols[i]++;
        size_t l = strlen(cols[i]);
        while (l > 0 && cols[i][l - 1] == ' ') cols[i][--l] = '\0';
    }
    if (cols[0][0] == '@') return parse_directive(w, cols, nc, name, lineno, err);
    if (nc < 8) {
        /* the fields are there but separated by spaces: say so, as the count alone would mislead */
        if (words(cols, nc) >= 8)
            return bl_seterr(err, BL_EFORMAT, "%s:%zu: fields are separated by spaces, not tabs: separate the 8 fields "
                             "(arrival_s kind iterations mode cpu_s_per_iter gpu_s_per_iter cpu_use_pct gpu_use_pct, "
                             "then optional params) with tabs", name, lineno);
        return bl_seterr(err, BL_EFORMAT, "%s:%zu: missing column: expected 8 tab-separated columns "
                         "(arrival_s kind iterations mode cpu_s_per_iter gpu_s_per_iter cpu_use_pct gpu_use_pct), found %d%s",
                         name, lineno, nc, words(cols, nc) > nc ? " (some separated by spaces, not tabs)" : "");
    }
    bl_sched_wjob j;
    double par[BL_SCHED_MAXPARAMS];
    memset(&j, 0, sizeof j);
    /* at most 1e12 s (some 30 000 years): beyond, adding a job's seconds to its arrival loses them */
    if (!parse_num(cols[0], &j.arrival) || !(j.arrival >= 0) || j.arrival > TIME_MAX_S)
        return bl_seterr(err, BL_EFORMAT, "%s:%zu: arrival_s '%s' must be a number from 0 to 1e12", name, lineno,
                         Q(cols[0]));
    int kind = bl_sched_kind_lookup(cols[1]);
    if (kind < 0)
        return bl_seterr(err, BL_EFORMAT, "%s:%zu: unknown kind '%s' (nn, nn_small, nn_large, kmeans, regression)", name, lineno, Q(cols[1]));
    if (!parse_num(cols[2], &j.iters) || j.iters < 1 || j.iters != floor(j.iters) || j.iters > 1e15)
        return bl_seterr(err, BL_EFORMAT, "%s:%zu: iterations '%s' must be a whole number > 0", name, lineno, Q(cols[2]));
    if (strcmp(cols[3], "explicit") == 0) j.implicit = 0;
    else if (strcmp(cols[3], "implicit") == 0) j.implicit = 1;
    else return bl_seterr(err, BL_EFORMAT, "%s:%zu: mode '%s' must be explicit or implicit", name, lineno, Q(cols[3]));
    static const char *const cn[4] = { "cpu_s_per_iter", "gpu_s_per_iter", "cpu_use_pct", "gpu_use_pct" };
    for (int d = 0; d < 2; d++) {
        if (!parse_num(cols[4 + d], &j.spi[d]) || j.spi[d] <= 0)
            return bl_seterr(err, BL_EFORMAT, "%s:%zu: %s '%s' must be a number > 0", name, lineno, cn[d], Q(cols[4 + d]));
        if (!parse_num(cols[6 + d], &j.use[d]) || j.use[d] < 0 || j.use[d] > 100)
            return bl_seterr(err, BL_EFORMAT, "%s:%zu: %s '%s' must be in 0..100", name, lineno, cn[2 + d], Q(cols[6 + d]));
        /* the job's work on the device, iterations x seconds per iteration, must fit the clock */
        if (!(j.iters * j.spi[d] <= TIME_MAX_S)) {
            char most[BL_FMT_DOUBLE_MAX];
            return bl_seterr(err, BL_EFORMAT, "%s:%zu: %s '%s' x iterations '%s' is more than 1e12 s of work (some "
                             "30 000 years), beyond the simulator's clock: %s must be at most %s s with these iterations, "
                             "or the iterations fewer", name, lineno, cn[d], Q(cols[4 + d]), Q(cols[2]), cn[d],
                             bl_fmt_double(most, TIME_MAX_S / j.iters));
        }
    }
    if (nc >= 9 && strcmp(cols[8], "-") != 0 && cols[8][0]) {
        char *q = cols[8];
        for (;;) {
            char *comma = strchr(q, ',');
            if (comma) *comma = '\0';
            if (j.n_params == BL_SCHED_MAXPARAMS)
                return bl_seterr(err, BL_EFORMAT, "%s:%zu: at most %d params", name, lineno, BL_SCHED_MAXPARAMS);
            if (!parse_num(q, &par[j.n_params]))
                return bl_seterr(err, BL_EFORMAT, "%s:%zu: param '%s' is not a number", name, lineno, Q(q));
            j.n_params++;
            if (!comma) break;
            q = comma + 1;
        }
    }
    if (nc > 9) return bl_seterr(err, BL_EFORMAT, "%s:%zu: %d columns, at most 9 expected", name, lineno, nc);
    if (w->n >= BL_SCHED_MAX_JOBS)
        return bl_seterr(err, BL_ERANGE, "%s:%zu: too many jobs (a workload holds at most %u)", name, lineno,
                         BL_SCHED_MAX_JOBS);
    j.kind = (unsigned char)kind;
    return bl_sched_workload_push(w, &j, par) ? bl_seterr(err, BL_ENOMEM, "out of memory") : BL_OK;
}

/* One line of len bytes, its newline cut off and a NUL at line[len] (it is cut up in place): a blank
 * or comment line is skipped, anything else is a directive or a job. */
static bl_status parse_one(bl_sched_workload *w, char *line, size_t len, const char *name, size_t lineno,
                           bl_error *err) {
    if (memchr(line, '\0', len))
        return bl_seterr(err, BL_EFORMAT, "%s:%zu: contains a NUL byte (a workload is text)", name, lineno);
    if (len && line[len - 1] == '\r') line[--len] = '\0';
    const char *s = line;
    while (*s == ' ' || *s == '\t') s++;
    return (*s && *s != '#') ? parse_line(w, line, name, lineno, err) : BL_OK;
}

/* After the last line: there must be jobs; then they are sorted. */
static bl_status parse_end(bl_sched_workload *w, const char *name, bl_error *err) {
    if (w->n == 0) return bl_seterr(err, BL_EFORMAT, "%s: no jobs", name);
    if (bl_sched_workload_finish(w)) return bl_seterr(err, BL_ENOMEM, "out of memory");
    return BL_OK;
}

/* The workload's name as messages give it, escaped once (a file name need not be UTF-8); free it. */
static char *message_name(const char *name) {
    size_t cap = 4 * strlen(name) + 1;
    char *e = malloc(cap);
    return e ? (char *)bl_utf8_escape(e, cap, name) : NULL;
}

/* Line by line through a copy of one line at a time, so that a large text is not copied whole. */
bl_status bl_sched_workload_parse(const char *text, size_t len, const char *name, bl_sched_workload **out, bl_error *err) {
    BL_CHECK_ARG(out != NULL, err, "out is NULL");
    *out = NULL;
    BL_CHECK_ARG(text != NULL || len == 0, err, "text is NULL");
    char *ename = message_name(name ? name : "<workload>");
    bl_sched_workload *w = ename ? bl_sched_workload_alloc() : NULL;
    if (!w) {
        free(ename);
        return bl_seterr(err, BL_ENOMEM, "out of memory");
    }
    char *line = NULL;
    size_t cap = 0, lineno = 0, at = 0;
    bl_status st = BL_OK;
    while (st == BL_OK && at < len) {
        const char *nl = memchr(text + at, '\n', len - at);
        size_t l = nl ? (size_t)(nl - (text + at)) : len - at;
        if (l + 1 > cap) {
            size_t nc = cap ? cap : 256;
            while (nc < l + 1) nc *= 2;
            char *nb = realloc(line, nc);
            if (!nb) { st = bl_seterr(err, BL_ENOMEM, "out of memory"); break; }
            line = nb;
            cap = nc;
        }
        memcpy(line, text + at, l);
        line[l] = '\0';
        st = parse_one(w, line, l, ename, ++lineno, err);
        at += l + 1;
    }
    free(line);
    if (st == BL_OK) st = parse_end(w, ename, err);
    free(ename);
    if (st != BL_OK) {
        bl_sched_workload_free(w);
        return st;
    }
    *out = w;
    return BL_OK;
}

/* Read line by line: the file's text is never held whole, only the jobs (a million-job file is
 * about 110 MB of text for 64 MB of jobs). */
bl_status bl_sched_workload_load(const char *path, bl_sched_workload **out, bl_error *err) {
    BL_CHECK_ARG(path != NULL && out != NULL, err, "path or out is NULL");
    *out = NULL;
    FILE *f = bl_file_open_read(path, 0, err);
    if (!f) return err ? err->status : BL_EIO;
    char *ename = message_name(path);
    bl_sched_workload *w = ename ? bl_sched_workload_alloc() : NULL;
    if (!w) {
        free(ename);
        fclose(f);
        return bl_seterr(err, BL_ENOMEM, "out of memory");
    }
    char *line = NULL;
    size_t cap = 0, lineno = 0;
    bl_status st = BL_OK;
    ssize_t n;
    errno = 0;
    while (st == BL_OK && (n = getline(&line, &cap, f)) >= 0) {
        size_t l = (size_t)n;
        if (l && line[l - 1] == '\n') line[--l] = '\0';
        st = parse_one(w, line, l, ename, ++lineno, err);
        errno = 0;
    }
    /* getline says -1 at the end, on a read error (ferror) and when out of memory (errno ENOMEM) */
    if (st == BL_OK && errno == ENOMEM) st = bl_seterr(err, BL_ENOMEM, "%s: out of memory", ename);
    else if (st == BL_OK && ferror(f))
        st = bl_seterr(err, BL_EIO, "%s: read error: %s", ename, errno ? strerror(errno) : "unknown reason");
    free(line);
    fclose(f);
    if (st == BL_OK) st = parse_end(w, ename, err);
    free(ename);
    if (st != BL_OK) {
        bl_sched_workload_free(w);
        return st;
    }
    *out = w;
    return BL_OK;
}

/* Replaced by the one policy of common/file.h: a failed save (a full disk, a file-size limit) leaves
 * no partial file and the previous one intact; a link is followed, a device or a folder refused. */
bl_status bl_sched_workload_save(const bl_sched_workload *w, const char *path, bl_error *err) {
    BL_CHECK_ARG(w != NULL && path != NULL, err, "workload or path is NULL");
    bl_file_out *f = NULL;
    bl_status st = bl_file_out_open(path, &f, err);
    if (st != BL_OK) return st;
    st = bl_file_out_printf(f, err, "# DBMLSched workload: arrival_s kind iterations mode cpu_s_per_iter gpu_s_per_iter "
                            "cpu_use_pct gpu_use_pct params\n");
    char a[BL_FMT_DOUBLE_MAX], b[BL_FMT_DOUBLE_MAX], c[BL_FMT_DOUBLE_MAX], d[BL_FMT_DOUBLE_MAX], e[BL_FMT_DOUBLE_MAX],
        g[BL_FMT_DOUBLE_MAX], h[BL_FMT_DOUBLE_MAX]; /* numbers as the shortest text that reads back the same */
    if (st == BL_OK)
        st = bl_file_out_printf(f, err, "@set\tinterference\t%s\n@set\toverhead\t%s\n", bl_fmt_double(a, w->interference),
                                bl_fmt_double(b, w->overhead_s));
    for (size_t i = 0; st == BL_OK && i < w->nload; i++)
        st = bl_file_out_printf(f, err, "@load\t%s\t%s\n", bl_fmt_double(a, w->load[i].t), bl_fmt_double(b, w->load[i].pct));
    for (size_t i = 0; st == BL_OK && i < w->n; i++) {
        const bl_sched_wjob *j = &w->jobs[i];
        st = bl_file_out_printf(f, err, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t", bl_fmt_double(a, j->arrival),
                                bl_sched_kind_names[j->kind], bl_fmt_double(b, j->iters), j->implicit ? "implicit" : "explicit",
                                bl_fmt_double(c, j->spi[0]), bl_fmt_double(d, j->spi[1]), bl_fmt_double(e, j->use[0]),
                                bl_fmt_double(g, j->use[1]));
        if (st == BL_OK && j->n_params == 0) st = bl_file_out_write(f, "-", 1, err);
        for (int k = 0; st == BL_OK && k < j->n_params; k++)
            st = bl_file_out_printf(f, err, "%s%s", k ? "," : "", bl_fmt_double(h, bl_sched_wjob_params(w, j)[k]));
        if (st == BL_OK) st = bl_file_out_write(f, "\n", 1, err);
    }
    if (st != BL_OK) {
        bl_file_out_abort(f);
        return st;
    }
    return bl_file_out_commit(f, err);
}

/* ---------------- generators ---------------- */

/* A generated job and its one param, for bl_sched_workload_push. */
typedef struct newjob { bl_sched_wjob j; double par[1]; } newjob;

static bl_status push_new(bl_sched_workload *w, const newjob *nj) { return bl_sched_workload_push(w, &nj->j, nj->par); }

static newjob mkjob(double t, const char *kind, double iters, int implicit, double scpu, double sgpu,
                    double ucpu, double ugpu, double param) {
    newjob nj;
    memset(&nj, 0, sizeof nj);
    nj.j.arrival = t;
    nj.j.kind = (unsigned char)bl_sched_kind_lookup(kind);
    nj.j.iters = iters;
    nj.j.implicit = (unsigned char)implicit;
    nj.j.spi[0] = scpu;
    nj.j.spi[1] = sgpu;
    nj.j.use[0] = ucpu;
    nj.j.use[1] = ugpu;
    nj.par[0] = param;
    nj.j.n_params = 1;
    return nj;
}

/* The paper's 15-minute experiment, fixed: ten sets of six jobs, 4 s apart. The param is a size
 * context property (thousands of training rows) so predictors can tell the jobs apart. */
static bl_status gen_paper(bl_sched_workload *w) {
    static const double starts[10] = { 1, 81, 156, 241, 334, 418, 495, 577, 690, 803 };
    for (int s = 0; s < 10; s++) {
        double t = starts[s];
        newjob js[6] = {
            mkjob(t + 0,  "nn_small", 40000, 0, 0.0005,  0.000625, 50, 30, 10),
            mkjob(t + 4,  "nn_large", 18000, 0, 0.00667, 0.001667, 10, 78, 100),
            mkjob(t + 8,  "kmeans",   500,   0, 0.1,     0.02,     10, 100, 50),
            mkjob(t + 12, "kmeans",   500,   1, 0.1,     0.02,     10, 100, 50),
            mkjob(t + 16, "kmeans",   500,   0, 0.1,     0.02,     10, 100, 50),
            mkjob(t + 20, "kmeans",   500,   1, 0.1,     0.02,     10, 100, 50),
        };
        for (int k = 0; k < 6; k++)
            if (push_new(w, &js[k])) return BL_ENOMEM;
    }
    w->overhead_s = 0.1;
    w->interference = 1.0;
    return BL_OK;
}

/* Two implicit jobs, LONG first and SHORT last, with three identical explicit NN jobs between, 3 s apart. */
static bl_status gen_hybrid(bl_sched_workload *w) {
    newjob js[5] = {
        mkjob(0,  "kmeans", 3000,  1, 0.1,   0.02,   10, 100, 300),   /* LONG: 300 s CPU, 60 s GPU */
        mkjob(3,  "nn",     20000, 0, 0.001, 0.0005, 50, 60, 20),     /* 20 s CPU, 10 s GPU */
        mkjob(6,  "nn",     20000, 0, 0.001, 0.0005, 50, 60, 20),
        mkjob(9,  "nn",     20000, 0, 0.001, 0.0005, 50, 60, 20),
        mkjob(12, "kmeans", 100,   1, 0.1,   0.02,   10, 100, 10),    /* SHORT: 10 s CPU, 2 s GPU */
    };
    for (int k = 0; k < 5; k++)
        if (push_new(w, &js[k])) return BL_ENOMEM;
    w->overhead_s = 0.1;
    return BL_OK;
}

/* Database interference: the DB goes idle -> light (20 %) -> heavy (45 %) -> light -> idle while ML
 * jobs arrive every 30 s; a CPU job slows a GPU job by 1.5x. */
static bl_status gen_sql(bl_sched_workload *w) {
    static const double lt[5] = { 0, 60, 180, 300, 420 }, lp[5] = { 0, 20, 45, 20, 0 };
    for (int i = 0; i < 5; i++)
        if (bl_sched_workload_push_load(w, lt[i], lp[i])) return BL_ENOMEM;
    for (int i = 0; i < 14; i++) {
        double t = 30.0 * i;
        newjob j;
        switch (i % 4) {
        case 0: j = mkjob(t, "nn_small", 40000, 0, 0.0005, 0.000625, 50, 30, 10); break;
        case 1: j = mkjob(t, "kmeans", 500, 0, 0.1, 0.02, 10, 100, 50); break;
        case 2: j = mkjob(t, "regression", 2000, 0, 0.01, 0.006, 40, 50, 30); break;
        default: j = mkjob(t, "kmeans", 500, 1, 0.1, 0.02, 10, 100, 50); break;
        }
        if (push_new(w, &j)) return BL_ENOMEM;
    }
    w->overhead_s = 0.1;
    w->interference = 1.5;
    return BL_OK;
}

/* N jobs of the paper's kinds with Poisson arrivals (mean gap 25 s), sizes x U(0.5, 1.5), per-job
 * speed noise exp(0.1 N(0,1)); half the kmeans jobs implicit. */
static bl_status gen_poisson(bl_sched_workload *w, size_t n, uint64_t seed) {
    bl_rng r;
    bl_rng_seed(&r, seed);
    double t = 0;
    for (size_t i = 0; i < n; i++) {
        t += -25.0 * log(1.0 - bl_rng_uniform(&r));
        int k = (int)(bl_rng_u64(&r) % 3);
        double scale = 0.5 + bl_rng_uniform(&r);
        double nc = exp(0.1 * bl_rng_normal(&r)), ng = exp(0.1 * bl_rng_normal(&r));
        newjob j;
        if (k == 0) j = mkjob(t, "nn_small", floor(40000 * scale), 0, 0.0005 * nc, 0.000625 * ng, 50, 30, 10 * scale);
        else if (k == 1) j = mkjob(t, "nn_large", floor(18000 * scale), 0, 0.00667 * nc, 0.001667 * ng, 10, 78, 100 * scale);
        else j = mkjob(t, "kmeans", floor(500 * scale), bl_rng_uniform(&r) < 0.5, 0.1 * nc, 0.02 * ng, 10, 100, 50 * scale);
        if (j.j.iters < 1) j.j.iters = 1;
        if (push_new(w, &j)) return BL_ENOMEM;
    }
    w->overhead_s = 0.1;
    return BL_OK;
}

bl_status bl_sched_workload_generate(const char *spec, uint64_t seed, bl_sched_workload **out, bl_error *err) {
    BL_CHECK_ARG(spec != NULL && out != NULL, err, "spec or out is NULL");
    *out = NULL;
    bl_sched_workload *w = bl_sched_workload_alloc();
    if (!w) return bl_seterr(err, BL_ENOMEM, "out of memory");
    bl_status st;
    if (strcmp(spec, "paper") == 0) st = gen_paper(w);
    else if (strcmp(spec, "hybrid") == 0) st = gen_hybrid(w);
    else if (strcmp(spec, "sql") == 0) st = gen_sql(w);
    else if (strncmp(spec, "poisson:", 8) == 0) {
        char *end;
        errno = 0;
        unsigned long long n = strtoull(spec + 8, &end, 10);
        if (end == spec + 8 || *end || errno || n == 0 || spec[8] == '-') {
            bl_sched_workload_free(w);
            return bl_seterr(err, BL_EINVAL, "workload '%s': poisson:N needs a whole number 1 <= N <= %u", Q(spec),
                             BL_SCHED_MAX_JOBS);
        }
        /* The cap is about memory (see BL_SCHED_MAX_JOBS), so say so rather than start a run that
         * cannot finish. */
        if (n > BL_SCHED_MAX_JOBS) {
            bl_sched_workload_free(w);
            return bl_seterr(err, BL_ERANGE, "workload '%s': at most %u jobs (poisson:N needs N <= %u; "
                             "a run keeps about %d MB per million jobs)", Q(spec), BL_SCHED_MAX_JOBS, BL_SCHED_MAX_JOBS,
                             BL_SCHED_RUN_MB_PER_MILLION_JOBS);
        }
        st = gen_poisson(w, (size_t)n, seed);
    } else {
        bl_sched_workload_free(w);
        return bl_seterr(err, BL_ENOTFOUND, "unknown workload '%s' (paper, hybrid, sql, poisson:N)", Q(spec));
    }
    if (!st) st = bl_sched_workload_finish(w);
    if (st) { bl_sched_workload_free(w); return bl_seterr(err, st, "out of memory"); }
    *out = w;
    return BL_OK;
}
