/* dbmlsched_sim.c — command-line front end of the DBMLSched simulator (bellamy/sched.h).
 *
 *   dbmlsched-sim --workload paper|hybrid|sql|poisson:N|FILE --policy P [--policy P ...] [--seed S]
 *                 [--json] [--plot FILE.svg|png] [--gantt FILE.svg|png] [--gantt-policy P] [--jobs|--no-jobs]
 *                 [--save-workload FILE] [--est-noise X] [--predictor bellamy|history]
 *   dbmlsched-sim --help | --version
 *
 * poisson:N and workload files hold at most 10 000 000 jobs (BL_SCHED_MAX_JOBS). A run keeps the
 * workload (about 64 bytes a job) and, per policy, 8 bytes a job for the exact median and p95; the
 * per-job table (--jobs) 56 more a job and policy, --gantt every run segment of its policy; --plot a
 * curve thinned to at most 4096 points per policy. 90 MB for the man page's million-job example.
 * Options are long ("--name VALUE" or "--name=VALUE"), each at most once except --policy; errors are
 * one line on stderr, exit 2 for a usage error, 1 for a failure, 3 when only a plot failed.
 *
 * dbmlsched-bellamy takes its runtimes from a Bellamy model trained on the run's history as it goes
 * (bl_sched_bellamy, the default) or from the built-in per-kind history predictor (--predictor history).
 *
 * Prints, per policy, mean/median/p95 service time, makespan, time lost to estimation and pauses, query
 * latency inflation and per-device utilisation, then a per-job table (by default for up to 200 jobs).
 * Plots are drawn by gnuplot (run as a child process); without gnuplot it says so and still prints results.
 * It does not schedule real jobs. */
#include "bellamy/sched.h"
#include "common/fmt.h"
#include "common/file.h"
#include "common/gnuplot.h"
#include "common/utf8.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define GANTT_JOBS_MAX 20000 /* jobs a Gantt chart draws (a box per run segment); --plot has no limit */

#define MAXPOL 16

/* An argument as a message quotes it: bytes that are not UTF-8 and control characters written \xHH
 * (common/utf8.h), so that a stray byte shows as what it is and never reaches the terminal raw. */
#define QMAX 1024
#define Q(s) bl_utf8_escape((char[QMAX]){ 0 }, QMAX, (s))

static void usage(FILE *f) {
    fprintf(f,
            "usage: dbmlsched-sim --workload paper|hybrid|sql|poisson:N|FILE --policy P [--policy P ...]\n"
            "                     [--seed S] [--json] [--plot FILE] [--gantt FILE] [--gantt-policy P]\n"
            "                     [--jobs | --no-jobs] [--save-workload FILE] [--est-noise X]\n"
            "                     [--predictor bellamy|history]\n"
            "       dbmlsched-sim --help | --version\n"
            "options are long (--name VALUE or --name=VALUE), each given once except --policy;\n"
            "--seed is a whole number, --est-noise a relative noise 0..10 (default 0).\n"
            "poisson:N generates N jobs, 1 <= N <= 10000000 (a run keeps about 80 MB per million jobs,\n" /* as
            * the generator's cap message says: BL_SCHED_RUN_MB_PER_MILLION_JOBS, src/sched/sched_internal.h */
            "more with --jobs or --gantt);\n"
            "a workload FILE holds at most 10000000 jobs too.\n"
            "policies: fifo-gpu, rr, dbmlsched, dbmlsched-bellamy, oracle\n"
            "dbmlsched-bellamy predicts runtimes with a Bellamy model trained on the finished jobs as the run\n"
            "goes (--predictor bellamy, the default) or with the per-kind history predictor (history).\n"
            "plots (.svg or .png) are drawn with gnuplot: jobs in the system per policy (--plot), and the\n"
            "device timeline of one run (--gantt, of --gantt-policy or else the first policy).\n");
}

static const char *find_gnuplot(void) {
    static char buf[4096];
    const char *env = getenv("GNUPLOT");
    if (env && *env) return access(env, X_OK) == 0 ? env : NULL;
    const char *path = getenv("PATH");
    if (!path) path = "/usr/bin:/bin";
    const char *p = path;
    while (*p) {
        const char *c = strchr(p, ':');
        size_t l = c ? (size_t)(c - p) : strlen(p);
        if (l > 0 && l < sizeof buf - 16) {
            snprintf(buf, sizeof buf, "%.*s/gnuplot", (int)l, p);
            if (access(buf, X_OK) == 0) return buf;
        }
        if (!c) break;
        p = c + 1;
    }
    return NULL;
}

static int ends_with(const char *s, const char *suf) {
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && strcmp(s + a - b, suf) == 0;
}

/* Runs gnuplot on a script file; returns 0 on success. */
static int run_gnuplot(const char *gp, const char *script) {
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        execl(gp, gp, script, (char *)NULL);
        _exit(127);
    }
    int status = 0;
    if (waitpid(pid, &status, 0) < 0) return -1;
    return (WIFEXITED(status) && WEXITSTATUS(status) == 0) ? 0 : -1;
}

/* After gnuplot: the file must be whole (gnuplot does not always fail when its writes do); a partial
 * one is removed. Says what went wrong; 1 when the file is fine. */
static int plot_whole(const char *out) {
    if (bl_gp_output_complete(out)) return 1;
    fprintf(stderr, "dbmlsched-sim: gnuplot failed to write %s whole (a full disk or a file-size limit?); "
                    "the partial file is removed\n", out);
    remove(out);
    return 0;
}

static const char *terminal_for(const char *out) {
    if (ends_with(out, ".png") || ends_with(out, ".PNG")) return "pngcairo size 1100,500";
    return "svg size 1100,500 dynamic";
}

/* Writes the data files and script into a fresh temporary folder and runs gnuplot. */
static int plot_curves(const char *gp, const char *out, bl_sched_result **res, const bl_sched_policy *pols, int np,
                       const char *wname) {
    char dir[] = "/tmp/dbmlsched-plot-XXXXXX";
    if (!mkdtemp(dir)) { fprintf(stderr, "dbmlsched-sim: cannot create a temporary folder: %s\n", strerror(errno)); return -1; }
    char path[4200], script[4200];
    int rc = -1;
    snprintf(script, sizeof script, "%s/plot.gp", dir);
    FILE *sf = fopen(script, "w");
    if (!sf) goto cleanup;
    fprintf(sf, "set terminal %s\nset output '%s'\nset title noenhanced ", terminal_for(out), out);
    char title[600];
    snprintf(title, sizeof title, "Jobs in the system: %s", wname);
    bl_gp_put_str(sf, title); /* the workload may be any file name: text, never script */
    fprintf(sf, "\nset xlabel 'time (s)'\nset ylabel 'jobs in system'\nset key outside right\nset grid\nplot ");
    for (int p = 0; p < np; p++) {
        snprintf(path, sizeof path, "%s/curve%d.dat", dir, p);
        FILE *f = fopen(path, "w");
        if (!f) { fclose(sf); goto cleanup; }
        size_t n = bl_sched_result_ncurve(res[p]);
        for (size_t i = 0; i < n; i++) {
            double t;
            int c;
            bl_sched_result_curve(res[p], i, &t, &c);
            fprintf(f, "%.6f %d\n", t, c);
        }
        fclose(f);
        fprintf(sf, "%s'%s' using 1:2 with steps lw 2 title '%s'", p ? ", " : "", path, bl_sched_policy_name(pols[p]));
    }
    fprintf(sf, "\n");
    fclose(sf);
    rc = run_gnuplot(gp, script);
cleanup:
    for (int p = 0; p < np; p++) { snprintf(path, sizeof path, "%s/curve%d.dat", dir, p); remove(path); }
    remove(script);
    rmdir(dir);
    return rc;
}

static int plot_gantt(const char *gp, const char *out, const bl_sched_result *r, const bl_sched_summary *s,
                      const char *pname, const char *wname) {
    char dir[] = "/tmp/dbmlsched-gantt-XXXXXX";
    if (!mkdtemp(dir)) { fprintf(stderr, "dbmlsched-sim: cannot create a temporary folder: %s\n", strerror(errno)); return -1; }
    char data[4200], est[4200], script[4200];
    snprintf(data, sizeof data, "%s/run.dat", dir);
    snprintf(est, sizeof est, "%s/est.dat", dir);
    snprintf(script, sizeof script, "%s/gantt.gp", dir);
    int rc = -1;
    FILE *f = fopen(data, "w"), *g = fopen(est, "w"), *sf = fopen(script, "w");
    if (!f || !g || !sf) goto cleanup;
    /* one box per segment: x centre, device row, half width, half height, colour by job */
    size_t n = bl_sched_result_nsegments(r);
    int any_est = 0;
    for (size_t i = 0; i < n; i++) {
        bl_sched_segment sg;
        bl_sched_result_segment(r, i, &sg);
        FILE *o = sg.estimation ? g : f;
        any_est |= sg.estimation;
        fprintf(o, "%.6f %d %.6f 0.35 %zu\n", 0.5 * (sg.start + sg.end), sg.device, 0.5 * (sg.end - sg.start), sg.job % 12 + 1);
    }
    fprintf(f, "-1 -5 0 0 1\n");   /* keeps gnuplot happy when a file would otherwise be empty */
    fprintf(g, "-1 -5 0 0 1\n");
    fclose(f); f = NULL;
    fclose(g); g = NULL;
    fprintf(sf, "set terminal %s\nset output '%s'\nset title noenhanced ", terminal_for(out), out);
    char title[700];
    snprintf(title, sizeof title, "Device timeline: %s on %s (hatched: estimation runs)", pname, wname);
    bl_gp_put_str(sf, title);
    fprintf(sf, "\nset xlabel 'time (s)'\nset yrange [-0.6:%d.6]\nset xrange [0:*]\nset ytics (", s->n_devices - 1);
    for (int d = 0; d < s->n_devices && d < 8; d++)
        fprintf(sf, "%s'%s%d' %d", d ? ", " : "", s->device_kind[d] == BL_SCHED_CPU ? "cpu" : "gpu", d, d);
    fprintf(sf, ")\nunset key\nset grid xtics\n"
                "plot '%s' using 1:2:3:4:5 with boxxyerror fs solid 0.8 border lc rgb 'black' lc variable",
            data);
    if (any_est) fprintf(sf, ", '%s' using 1:2:3:4 with boxxyerror fs pattern 2 lc rgb 'red'", est);
    fprintf(sf, "\n");
    fclose(sf); sf = NULL;
    rc = run_gnuplot(gp, script);
cleanup:
    if (f) fclose(f);
    if (g) fclose(g);
    if (sf) fclose(sf);
    remove(data);
    remove(est);
    remove(script);
    rmdir(dir);
    return rc;
}

/* s as a JSON string (quotes, backslashes and control characters escaped). */
static void json_str(const char *s) {
    putchar('"');
    for (; *s; s++) {
        const unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') printf("\\%c", c);
        else if (c < 0x20) printf("\\u%04x", c);
        else putchar(c);
    }
    putchar('"');
}

/* A JSON number: the shortest text that reads back as the same double (common/fmt.h); null for
 * infinity or NaN, which JSON lacks. Never %.6f or %.17g: the first loses digits, the second adds noise. */
static void json_num(double v) {
    char b[BL_FMT_DOUBLE_MAX];
    fputs(isfinite(v) ? bl_fmt_double(b, v) : "null", stdout);
}

static void print_json(const char *wname, const bl_sched_workload *w, bl_sched_result **res, const bl_sched_policy *pols,
                       int np, int with_jobs) {
    printf("{\n  \"workload\": ");
    json_str(wname);
    printf(",\n  \"jobs\": %zu,\n  \"policies\": [\n", bl_sched_workload_njobs(w));
    for (int p = 0; p < np; p++) {
        bl_sched_summary s;
        bl_sched_result_summary(res[p], &s);
        const struct { const char *name; double v; } nums[] = {
            { "mean_service_time", s.mean_service },   { "median_service_time", s.median_service },
            { "p95_service_time", s.p95_service },     { "makespan", s.makespan },
            { "estimation_time", s.estimation_s },     { "pause_overhead_time", s.overhead_s },
            { "cpu_held_time", s.observer_pause_s },   { "query_latency_inflation", s.query_inflation_mean },
            { "query_latency_inflation_max", s.query_inflation_max },
        };
        printf("    {\"policy\": \"%s\"", bl_sched_policy_name(pols[p]));
        for (size_t k = 0; k < sizeof nums / sizeof *nums; k++) {
            printf(", \"%s\": ", nums[k].name);
            json_num(nums[k].v);
        }
        printf(", \"preemptions\": %zu, \"events\": %llu, \"utilisation\": {", s.preemptions,
               (unsigned long long)s.events);
        for (int d = 0; d < s.n_devices && d < 8; d++) {
            printf("%s\"%s%d\": ", d ? ", " : "", s.device_kind[d] == BL_SCHED_CPU ? "cpu" : "gpu", d);
            json_num(s.util[d]);
        }
        printf("}");
        if (with_jobs) {
            printf(", \"job_results\": [");
            size_t n = bl_sched_result_njobs(res[p]);
            for (size_t i = 0; i < n; i++) {
                bl_sched_job_result jr;
                bl_sched_result_job(res[p], i, &jr);
                printf("%s{\"arrival\": ", i ? ", " : "");
                json_num(jr.arrival);
                printf(", \"completion\": ");
                json_num(jr.completion);
                printf(", \"service\": ");
                json_num(jr.service);
                printf(", \"device\": %d}", jr.last_device);
            }
            printf("]");
        }
        printf("}%s\n", p + 1 < np ? "," : "");
    }
    printf("  ]\n}\n");
}

static void print_text(const char *wname, const bl_sched_workload *w, bl_sched_result **res, const bl_sched_policy *pols,
                       int np, int with_jobs) {
    printf("workload %s: %zu jobs\n\n", wname, bl_sched_workload_njobs(w));
    printf("%-18s %9s %9s %9s %9s %8s %8s %8s %7s  %s\n", "policy", "mean_s", "median_s", "p95_s", "makespan", "est_s",
           "pause_s", "held_s", "query_x", "utilisation");
    for (int p = 0; p < np; p++) {
        bl_sched_summary s;
        bl_sched_result_summary(res[p], &s);
        printf("%-18s %9.2f %9.2f %9.2f %9.2f %8.2f %8.2f %8.2f %7.3f ", bl_sched_policy_name(pols[p]), s.mean_service,
               s.median_service, s.p95_service, s.makespan, s.estimation_s, s.overhead_s, s.observer_pause_s,
               s.query_inflation_mean);
        for (int d = 0; d < s.n_devices && d < 8; d++)
            printf(" %s%d=%.0f%%", s.device_kind[d] == BL_SCHED_CPU ? "cpu" : "gpu", d, 100.0 * s.util[d]);
        printf("\n");
    }
    printf("\nservice = completion - arrival; est_s = device time in estimation runs; pause_s = pause/resume\n"
           "overhead; held_s = time the CPU was held back for the database (observer, interference);\n"
           "query_x = mean query-latency factor while the database has load (1 = no inflation).\n");
    if (!with_jobs) return;
    for (int p = 0; p < np; p++) {
        printf("\n%s: per job\n%5s %-9s %-9s %9s %9s %9s %9s %4s %5s %s\n", bl_sched_policy_name(pols[p]), "job", "kind",
               "mode", "arrival", "start", "complete", "service", "dev", "preem", "flags");
        size_t n = bl_sched_result_njobs(res[p]);
        for (size_t i = 0; i < n; i++) {
            bl_sched_job_result jr;
            bl_sched_job_info ji;
            bl_sched_result_job(res[p], i, &jr);
            bl_sched_workload_job(w, i, &ji);
            printf("%5zu %-9s %-9s %9.2f %9.2f %9.2f %9.2f %4d %5d %s%s%s\n", i, ji.kind, ji.implicit ? "implicit" : "explicit",
                   jr.arrival, jr.first_start, jr.completion, jr.service, jr.last_device, jr.preemptions,
                   jr.estimated ? "E" : "", jr.predicted ? "P" : "", jr.aged ? "A" : "");
        }
    }
    printf("\nflags: E = went through the estimation phase, P = runtime from the predictor, A = aged into the implicit queue\n");
}

static const char *PROG = "dbmlsched-sim";

/* "dbmlsched-sim: message (try --help)" on stderr, one line; returns the usage exit code 2. */
static int usage_error(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
static int usage_error(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", PROG);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, " (try --help)\n");
    va_end(ap);
    return 2;
}

/* Flushes stdout; a failed write (disk full, closed pipe) is an error with a message, never silent. */
static int finish_stdout(int rc) {
    errno = 0; /* so that a reason printed below is this flush's, not an older call's */
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "%s: cannot write the output: %s\n", PROG, errno ? strerror(errno) : "write error");
        return 1;
    }
    return rc;
}

/* Is s digits only (a seed), or a plain decimal number (sign, digits, fraction, exponent; no blanks,
 * hexadecimal, inf or nan, which strtoull/strtod would also take)? */
static int all_digits(const char *s) {
    if (!*s) return 0;
    for (; *s; s++)
        if (*s < '0' || *s > '9') return 0;
    return 1;
}
static int decimal_number(const char *s) {
    size_t digits = 0;
    if (*s == '+' || *s == '-') s++;
    for (; *s >= '0' && *s <= '9'; s++) digits++;
    if (*s == '.')
        for (s++; *s >= '0' && *s <= '9'; s++) digits++;
    if (!digits) return 0;
    if (*s == 'e' || *s == 'E') {
        s++;
        if (*s == '+' || *s == '-') s++;
        if (!(*s >= '0' && *s <= '9')) return 0;
        while (*s >= '0' && *s <= '9') s++;
    }
    return *s == '\0';
}

#define EST_NOISE_MAX 10.0   /* relative noise of measured iteration times: 10 = 1000 % */

/* The options: long only, "--name VALUE" or "--name=VALUE"; each at most once except --policy. */
enum { O_WORKLOAD, O_POLICY, O_SEED, O_JSON, O_PLOT, O_GANTT, O_GANTT_POLICY, O_JOBS, O_NO_JOBS, O_SAVE, O_EST_NOISE,
       O_PREDICTOR, O_COUNT };
static const struct { const char *name; int takes_value; } OPTS[O_COUNT] = {
    [O_WORKLOAD] = { "workload", 1 }, [O_POLICY] = { "policy", 1 },      [O_SEED] = { "seed", 1 },
    [O_JSON] = { "json", 0 },         [O_PLOT] = { "plot", 1 },          [O_GANTT] = { "gantt", 1 },
    [O_GANTT_POLICY] = { "gantt-policy", 1 }, [O_JOBS] = { "jobs", 0 }, [O_NO_JOBS] = { "no-jobs", 0 },
    [O_SAVE] = { "save-workload", 1 }, [O_EST_NOISE] = { "est-noise", 1 }, [O_PREDICTOR] = { "predictor", 1 },
};

int main(int argc, char **argv) {
    signal(SIGXFSZ, SIG_IGN); /* past a file-size limit, writes fail with EFBIG and are reported */
    const char *wspec = NULL, *plot = NULL, *gantt = NULL, *gantt_pol = NULL, *save = NULL;
    bl_sched_policy pols[MAXPOL];
    int np = 0, json = 0, jobs = -1, rc = 1, use_bellamy = 1;
    bl_sched_bellamy_stats bstats[MAXPOL];
    int have_bstats[MAXPOL] = { 0 };
    int given[O_COUNT] = { 0 };
    uint64_t seed = 1;
    double est_noise = 0;
    bl_error err = { 0 };
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) { usage(stdout); return finish_stdout(0); }
        if (strcmp(a, "--version") == 0) {
            if (argc > 2) return usage_error("--version takes no other arguments");
            printf("dbmlsched-sim %s\n", bl_version());
            printf("kernels: %s (this processor runs %s; BELLAMY_CPU=generic|avx2|avx512 caps it)\n",
                   bl_cpu_kernels(), bl_cpu_kernels_available());
            if (bl_cpu_kernels_check(&err) != BL_OK) {
                fflush(stdout);
                fprintf(stderr, "dbmlsched-sim: %s\n", err.message);
                return 2;
            }
            return finish_stdout(0);
        }
        if (a[0] != '-' || a[1] == '\0') return usage_error("unexpected argument '%s'", Q(a));
        if (a[1] != '-') return usage_error("unknown option '%s': options are long, e.g. --workload", Q(a));
        const char *name = a + 2, *eq = strchr(name, '=');
        size_t nl = eq ? (size_t)(eq - name) : strlen(name);
        int o = -1;
        for (int k = 0; k < O_COUNT; k++)
            if (strlen(OPTS[k].name) == nl && strncmp(OPTS[k].name, name, nl) == 0) { o = k; break; }
        if (o < 0) {
            char opt[QMAX];
            snprintf(opt, sizeof opt, "--%.*s", (int)nl, name);
            return usage_error("unknown option '%s'", Q(opt));
        }
        if (given[o] && o != O_POLICY) return usage_error("--%s given twice", OPTS[o].name);
        given[o] = 1;
        const char *v = NULL;
        if (!OPTS[o].takes_value) {
            if (eq) return usage_error("--%s takes no value", OPTS[o].name);
        } else {
            if (eq) v = eq + 1;
            else if (i + 1 < argc) v = argv[++i];
            else return usage_error("--%s needs a value", OPTS[o].name);
            if (!*v) return usage_error("--%s: empty value", OPTS[o].name);
        }
        switch (o) {
        case O_WORKLOAD: wspec = v; break;
        case O_JSON: json = 1; break;
        case O_JOBS: jobs = 1; break;
        case O_NO_JOBS: jobs = 0; break;
        case O_PLOT: plot = v; break;
        case O_GANTT: gantt = v; break;
        case O_GANTT_POLICY: gantt_pol = v; break;
        case O_SAVE: save = v; break;
        case O_PREDICTOR:
            if (strcmp(v, "bellamy") == 0) use_bellamy = 1;
            else if (strcmp(v, "history") == 0) use_bellamy = 0;
            else { fprintf(stderr, "dbmlsched-sim: --predictor '%s' must be bellamy or history\n", Q(v)); return 2; }
            break;
        case O_SEED: {
            errno = 0;
            unsigned long long x = all_digits(v) ? strtoull(v, NULL, 10) : 0;
            if (!all_digits(v) || errno) {
                fprintf(stderr, "dbmlsched-sim: --seed '%s' is not a whole number 0..%llu\n", Q(v),
                        (unsigned long long)UINT64_MAX);
                return 2;
            }
            seed = (uint64_t)x;
            break;
        }
        case O_EST_NOISE:
            errno = 0;
            est_noise = decimal_number(v) ? strtod(v, NULL) : -1;
            if (!decimal_number(v) || errno || !(est_noise >= 0 && est_noise <= EST_NOISE_MAX)) {
                fprintf(stderr, "dbmlsched-sim: --est-noise '%s' must be a number 0..%g\n", Q(v), EST_NOISE_MAX);
                return 2;
            }
            break;
        case O_POLICY:
            if (np == MAXPOL) { fprintf(stderr, "dbmlsched-sim: at most %d policies\n", MAXPOL); return 2; }
            if (bl_sched_policy_parse(v, &pols[np], &err)) { fprintf(stderr, "dbmlsched-sim: %s\n", err.message); return 2; }
            for (int p = 0; p < np; p++)
                if (pols[p] == pols[np]) return usage_error("--policy %s given twice", Q(v));
            np++;
            break;
        }
    }
    if (!wspec || np == 0) return usage_error("--workload and at least one --policy are required");
    if (given[O_JOBS] && given[O_NO_JOBS]) return usage_error("--jobs and --no-jobs exclude each other");
    if (given[O_PREDICTOR]) { /* only dbmlsched-bellamy predicts: the flag would be ignored, as --gantt-policy without --gantt */
        int any = 0;
        for (int p = 0; p < np; p++) any |= pols[p] == BL_SCHED_DBMLSCHED_PRED;
        if (!any)
            return usage_error("--predictor goes with --policy dbmlsched-bellamy (the other policies predict no "
                               "runtimes); add that policy or leave --predictor out");
    }
    for (int k = 0; k < 2; k++) { /* the path goes into gnuplot's script; the terminal comes from its name */
        const char *pp = k ? gantt : plot;
        if (!pp) continue;
        int ctrl = 0;
        for (const char *c = pp; *c; c++) ctrl |= (unsigned char)*c < 0x20 || *c == 0x7f;
        if (strchr(pp, '\'') || ctrl) {
            fprintf(stderr, "dbmlsched-sim: --%s: the path must not contain a quote or control characters\n",
                    k ? "gantt" : "plot");
            return 2;
        }
        if (!ends_with(pp, ".svg") && !ends_with(pp, ".SVG") && !ends_with(pp, ".png") && !ends_with(pp, ".PNG")) {
            fprintf(stderr, "dbmlsched-sim: --%s %s: the file must end in .svg or .png\n", k ? "gantt" : "plot", Q(pp));
            return 2;
        }
        /* its folder must exist, and the path must not be a folder: said now, not after the run */
        char dir[4200];
        snprintf(dir, sizeof dir, "%s", pp);
        char *sl = strrchr(dir, '/');
        if (sl) *(sl == dir ? sl + 1 : sl) = '\0';
        struct stat ps;
        if ((sl && (stat(dir, &ps) != 0 || !S_ISDIR(ps.st_mode))) || (stat(pp, &ps) == 0 && S_ISDIR(ps.st_mode))) {
            fprintf(stderr, "dbmlsched-sim: --%s %s: %s\n", k ? "gantt" : "plot", Q(pp),
                    stat(pp, &ps) == 0 && S_ISDIR(ps.st_mode) ? "is a folder" : "its folder does not exist");
            return 2;
        }
        /* can a file be made there at all (a read-only mount, /sys as root)? asked now by making the
         * temporary a save would make, not after the run by gnuplot */
        bl_file_out *probe = NULL;
        if (bl_file_out_open(pp, &probe, &err) != BL_OK) {
            fprintf(stderr, "dbmlsched-sim: --%s %s\n", k ? "gantt" : "plot", err.message);
            return 1;
        }
        bl_file_out_abort(probe);
        if (stat(pp, &ps) == 0 && access(pp, W_OK) != 0) {
            fprintf(stderr, "dbmlsched-sim: --%s %s: the file is not writable (%s)\n", k ? "gantt" : "plot", Q(pp),
                    strerror(errno));
            return 1;
        }
    }
    if (save) { /* the workload is saved before the run; its folder is asked the same way */
        bl_file_out *probe = NULL;
        if (bl_file_out_open(save, &probe, &err) != BL_OK) {
            fprintf(stderr, "dbmlsched-sim: --save-workload %s\n", err.message);
            return 1;
        }
        bl_file_out_abort(probe);
    }
    if (plot && gantt && strcmp(plot, gantt) == 0) return usage_error("--plot and --gantt name the same file (%s)", Q(plot));
    if (save && ((plot && strcmp(save, plot) == 0) || (gantt && strcmp(save, gantt) == 0)))
        return usage_error("--save-workload and a plot name the same file (%s)", Q(save));
    int gi = 0;
    if (gantt_pol) {
        bl_sched_policy gp;
        if (!gantt) return usage_error("--gantt-policy goes with --gantt");
        if (bl_sched_policy_parse(gantt_pol, &gp, &err)) { fprintf(stderr, "dbmlsched-sim: %s\n", err.message); return 2; }
        gi = -1;
        for (int p = 0; p < np; p++) if (pols[p] == gp) { gi = p; break; }
        if (gi < 0) { fprintf(stderr, "dbmlsched-sim: --gantt-policy %s is not among the --policy flags\n", Q(gantt_pol)); return 2; }
    }

    /* BELLAMY_CPU is checked for every run, as the other programs check it, whether a policy uses Bellamy */
    if (bl_cpu_kernels_check(&err) != BL_OK) {
        fprintf(stderr, "dbmlsched-sim: %s\n", err.message);
        return 1;
    }
    bl_sched_workload *w = NULL;
    bl_sched_result *res[MAXPOL] = { 0 };
    struct stat st;
    int is_gen = strcmp(wspec, "paper") == 0 || strcmp(wspec, "hybrid") == 0 || strcmp(wspec, "sql") == 0 ||
                 strncmp(wspec, "poisson:", 8) == 0;
    int from_file = !is_gen; /* a built-in name is the built-in; a file of that name is ./paper */
    if (from_file && stat(wspec, &st) != 0) {
        fprintf(stderr, "dbmlsched-sim: --workload %s: %s (and not a built-in workload: paper, hybrid, sql, poisson:N)\n",
                Q(wspec), strerror(errno));
        return 1;
    }
    if (from_file && S_ISDIR(st.st_mode)) {
        fprintf(stderr, "dbmlsched-sim: --workload %s: is a folder, not a workload file\n", Q(wspec));
        return 1;
    }
    bl_status s = from_file ? bl_sched_workload_load(wspec, &w, &err) : bl_sched_workload_generate(wspec, seed, &w, &err);
    if (s) {
        /* A bad poisson:N (not a number, or above the job cap) is a usage error; the generator's
         * messages start "workload '...'", which reads as the flag once "--" is put in front. */
        int bad_value = !from_file && (s == BL_EINVAL || s == BL_ERANGE);
        fprintf(stderr, "dbmlsched-sim: %s%s\n", bad_value && strncmp(err.message, "workload '", 10) == 0 ? "--" : "",
                err.message);
        if (bad_value) rc = 2;
        goto done;
    }
    size_t n = bl_sched_workload_njobs(w);
    if (gantt && n > GANTT_JOBS_MAX) { /* a box per run segment: 200000 jobs drew a 258 MB picture */
        fprintf(stderr, "dbmlsched-sim: --gantt draws a box for every run segment of every job: %zu jobs are more than "
                "a chart can show (at most %d); use --plot for the jobs in the system over time, or a smaller "
                "workload\n", n, GANTT_JOBS_MAX);
        rc = 2;
        goto done;
    }
    if (save && bl_sched_workload_save(w, save, &err)) { fprintf(stderr, "dbmlsched-sim: %s\n", err.message); goto done; }
    int with_jobs = jobs >= 0 ? jobs : n <= 200;
    for (int p = 0; p < np; p++) {
        bl_sched_config cfg;
        bl_sched_config_default(&cfg);
        cfg.policy = pols[p];
        cfg.seed = seed;
        cfg.est_noise = est_noise;
        /* keep only what the outputs use: a plot's curve thinned to what a picture shows, segments
         * for the Gantt chart, per-job results for the table; then memory follows the jobs in the
         * system, not the workload's size */
        cfg.record_trace = (plot ? BL_SCHED_TRACE_PLOT : 0) | (gantt && p == gi ? BL_SCHED_TRACE_SEGMENTS : 0) |
                           (with_jobs ? 0 : BL_SCHED_TRACE_NO_JOBS);
        /* dbmlsched-bellamy: a fresh Bellamy predictor per run, so every run starts without history */
        bl_sched_bellamy *bp = NULL;
        bl_sched_predictor pred;
        if (cfg.policy == BL_SCHED_DBMLSCHED_PRED && use_bellamy) {
            if (bl_sched_bellamy_new(NULL, &bp, &err)) { fprintf(stderr, "dbmlsched-sim: %s\n", err.message); goto done; }
            pred = bl_sched_bellamy_predictor(bp);
        }
        bl_status sst = bl_sched_simulate(w, &cfg, bp ? &pred : NULL, &res[p], &err);
        if (bp) {
            bl_sched_bellamy_stats_get(bp, &bstats[p]);
            have_bstats[p] = 1;
            bl_sched_bellamy_free(bp);
        }
        if (sst) {
            fprintf(stderr, "dbmlsched-sim: %s: %s\n", Q(wspec), err.message);
            goto done;
        }
    }
    if (json) print_json(wspec, w, res, pols, np, with_jobs);
    else {
        print_text(wspec, w, res, pols, np, with_jobs);
        for (int p = 0; p < np; p++) {
            if (!have_bstats[p]) continue;
            const bl_sched_bellamy_stats *b = &bstats[p];
            printf("\n%s: Bellamy predictor: %zu observations, %zu trainings (%zu failed, %ld epochs in all; last on %zu "
                   "rows, MAE %.3g s), %zu predictions, %zu fall-backs to estimation\n",
                   bl_sched_policy_name(pols[p]), b->observations, b->trainings, b->failures, b->epochs_total, b->last_rows,
                   b->last_mae, b->predictions, b->fallbacks);
        }
    }
    rc = finish_stdout(0);
    if (rc == 0 && (plot || gantt)) {
        const char *gp = find_gnuplot();
        if (!gp) {
            fprintf(stderr, "dbmlsched-sim: gnuplot not found (install gnuplot-nox, or set GNUPLOT=/path/to/gnuplot); "
                            "no plot written, results above are complete\n");
            rc = 3;
        } else {
            if (plot) {
                if (plot_curves(gp, plot, res, pols, np, wspec) || !plot_whole(plot)) rc = 3;
                else fprintf(stderr, "dbmlsched-sim: wrote %s\n", plot);
            }
            if (gantt) {
                bl_sched_summary sm;
                bl_sched_result_summary(res[gi], &sm);
                if (plot_gantt(gp, gantt, res[gi], &sm, bl_sched_policy_name(pols[gi]), wspec) || !plot_whole(gantt)) {
                    rc = 3;
                } else {
                    fprintf(stderr, "dbmlsched-sim: wrote %s\n", gantt);
                }
            }
        }
    }
done:
    for (int p = 0; p < np; p++) bl_sched_result_free(res[p]);
    bl_sched_workload_free(w);
    return rc;
}
