/* testutil.c — main() for every Check suite, and helpers to find data and temporary folders. */
#define _GNU_SOURCE /* nftw, syscall */
#include "testutil.h"

#include <fcntl.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <ftw.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int is_dir(const char *p) {
    struct stat st;
    return p && stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

const char *bl_test_c3o_dir(void) {
    static char buf[4096];
    const char *env = getenv("BELLAMY_DATA");
    if (env && *env) {
        snprintf(buf, sizeof buf, "%s/c3o", env);
        if (is_dir(buf)) return buf;
        if (is_dir(env)) { snprintf(buf, sizeof buf, "%s", env); return buf; }
        return NULL;
    }
    const char *root = getenv("BELLAMY_SOURCE_ROOT");
    snprintf(buf, sizeof buf, "%s/../shared/datasets/c3o", root ? root : ".");
    return is_dir(buf) ? buf : NULL;
}

const char *bl_test_shared_path(const char *rel) {
    static char buf[4096];
    const char *env = getenv("BELLAMY_SHARED"), *root = getenv("BELLAMY_SOURCE_ROOT");
    if (env && *env) snprintf(buf, sizeof buf, "%s/%s", env, rel);
    else snprintf(buf, sizeof buf, "%s/../shared/%s", root ? root : ".", rel);
    struct stat st;
    return stat(buf, &st) == 0 ? buf : NULL;
}

const char *bl_test_source_path(const char *rel) {
    static char buf[4096];
    const char *root = getenv("BELLAMY_SOURCE_ROOT");
    snprintf(buf, sizeof buf, "%s/%s", root ? root : ".", rel);
    return buf;
}

const char *bl_test_tmpdir(void) {
    static char buf[4096];
    if (!buf[0]) {
        const char *t = getenv("TMPDIR");
        snprintf(buf, sizeof buf, "%s/bellamy-test-XXXXXX", t && *t ? t : "/tmp");
        if (!mkdtemp(buf)) { perror("mkdtemp"); exit(1); }
    }
    return buf;
}

void bl_test_skip_all(const char *why) {
    fprintf(stderr, "SKIP: %s\n", why);
    exit(77);
}

int bl_test_obey_permissions(void) {
    if (geteuid() != 0) return 1;
    struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
    struct __user_cap_data_struct d[2];
    if (syscall(SYS_capget, &h, d) != 0) return 0;
    const int caps[] = {CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH};
    /* out of the bounding set first (that needs CAP_SETPCAP, kept): a program run as root gets every
     * capability of that set again when it starts, so only this makes permissions apply to it too */
    for (size_t i = 0; i < sizeof caps / sizeof caps[0]; i++)
        if (prctl(PR_CAPBSET_DROP, (unsigned long)caps[i], 0UL, 0UL, 0UL) != 0) return 0;
    for (size_t i = 0; i < sizeof caps / sizeof caps[0]; i++) d[caps[i] / 32].effective &= ~(1u << (caps[i] % 32));
    if (syscall(SYS_capset, &h, d) != 0) return 0;
    /* the proof: a file without read permission for its owner cannot be opened */
    char p[4200];
    snprintf(p, sizeof p, "%s/.perm-probe-%d", bl_test_tmpdir(), (int)getpid());
    const int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0200);
    if (fd < 0) return 0;
    close(fd);
    const int rd = open(p, O_RDONLY);
    if (rd >= 0) close(rd);
    unlink(p);
    return rd < 0;
}

/* Skipped tests, one "name: reason" line each, in the suite's folder: Check runs each test in a child
 * process, and main() reads them back after the run. */
static const char *skip_file(void) {
    static char buf[4200];
    snprintf(buf, sizeof buf, "%s/skipped-tests", bl_test_tmpdir());
    return buf;
}

void bl_test_skip_note(const char *fn, const char *fmt, ...) {
    char line[1024];
    size_t len = strlen(fn);
    if (len > 3 && strcmp(fn + len - 3, "_fn") == 0) len -= 3; /* START_TEST(name) defines name_fn */
    int k = snprintf(line, sizeof line, "%.*s: ", (int)len, fn);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line + k, sizeof line - (size_t)k - 1, fmt, ap);
    va_end(ap);
    for (char *c = line; *c; c++)
        if (*c == '\n') *c = ' ';
    strcat(line, "\n");
    fprintf(stderr, "SKIP %s", line);
    const int fd = open(skip_file(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd < 0 || write(fd, line, strlen(line)) != (ssize_t)strlen(line)) {
        perror(skip_file());
        exit(1);
    }
    close(fd);
}

/* The name in a "START_TEST(name)" line of file (relative to the build folder, where Meson runs the
 * suites), or 0 when the line is no such line or the file cannot be read. */
static int start_test_at(const char *file, int lno, char *name, size_t cap) {
    char path[4200];
    FILE *f = fopen(file, "r");
    const char *build = getenv("BELLAMY_BUILD_ROOT");
    if (!f && build && file[0] != '/') {
        snprintf(path, sizeof path, "%s/%s", build, file);
        f = fopen(path, "r");
    }
    if (!f) return 0;
    char line[1024];
    int found = 0;
    for (int i = 1; fgets(line, sizeof line, f); i++)
        if (i == lno) {
            const char *p = strstr(line, "START_TEST(");
            if (p) {
                p += strlen("START_TEST(");
                size_t n = strcspn(p, ") \t");
                snprintf(name, cap, "%.*s", (int)(n < cap ? n : cap - 1), p);
                found = 1;
            }
            break;
        }
    fclose(f);
    return found;
}

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

int main(void) {
    /* One temporary folder for the whole suite, made after the suite is built (a suite may skip
     * everything, exit 77, from bl_test_suite) and before Check forks its tests, so that they all
     * share it; removed at the end unless a test failed or BELLAMY_KEEP_TMP=1 (post-mortem). */
    SRunner *sr = srunner_create(bl_test_suite());
    const char *tmp = bl_test_tmpdir();
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    /* the tests that could not run */
    char skipped[64 * 1024] = "";
    FILE *sf = fopen(skip_file(), "r");
    if (sf) {
        size_t n = fread(skipped, 1, sizeof skipped - 1, sf);
        skipped[n] = 0;
        fclose(sf);
    }
    /* A passing test whose last checkpoint is its own START_TEST line passed no ck_assert (each passing
     * assert marks its line, Check's mark_point): it asserted nothing, so it could not have failed. */
    int empty = 0;
    const int nrun = srunner_ntests_run(sr);
    TestResult **res = srunner_results(sr);
    for (int i = 0; res && i < nrun; i++) {
        char name[256], key[260];
        if (tr_rtype(res[i]) != CK_PASS || !tr_lfile(res[i]) ||
            !start_test_at(tr_lfile(res[i]), tr_lno(res[i]), name, sizeof name))
            continue;
        snprintf(key, sizeof key, "%s: ", name);
        int was_skipped = 0;
        for (const char *p = strstr(skipped, key); p && !was_skipped; p = strstr(p + 1, key))
            was_skipped = p == skipped || p[-1] == '\n';
        if (was_skipped) continue;
        fprintf(stderr, "NO ASSERT: %s (%s:%d) passed without asserting anything: it cannot fail\n", name,
                tr_lfile(res[i]), tr_lno(res[i]));
        empty++;
    }
    free(res);
    srunner_free(sr);
    if (skipped[0]) fprintf(stderr, "skipped tests (the suite reports SKIP):\n%s", skipped);
    const char *keep = getenv("BELLAMY_KEEP_TMP");
    if (failed > 0 || (keep && *keep && strcmp(keep, "0") != 0)) fprintf(stderr, "kept %s\n", tmp);
    else nftw(tmp, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    return failed > 0 || empty > 0 ? 1 : skipped[0] ? 77 : 0;
}

/* A user's own data set, shaped like the ETL reproducer (../shared/repro/etl): other column names than
 * C3O, four essential properties (one a constant) and one optional constant. 12 contexts (2 node
 * flavours × 3 queries × 2 input sizes) at 2..16 executors; the context m5.2xlarge/q3/200 is held out
 * of the pre-training data and three of its runs (4, 8, 12 executors) are the user's history.
 * Writes user.schema, user-all.csv, user-rest.csv, user-runs.csv. */
static const char USER_SCHEMA[] =
    "bellamy-schema 1\n"
    "# my ETL job: Spark SQL queries on our YARN cluster\n"
    "scale_out executors\n"
    "runtime wall_time_s s\n"
    "property machine_type essential text column node_flavor\n"
    "property job_args     essential text column query\n"
    "property data_size_MB essential number column input_gb\n"
    "property environment  essential text const \"private yarn\"\n"
    "property job_type     optional text const \"etl-spark\"\n";

void bl_test_write_user_data(const char *dir) {
    char path[4200];
    snprintf(path, sizeof path, "%s/user.schema", dir);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(USER_SCHEMA, f);
    fclose(f);
    const char *files[3] = { "user-all.csv", "user-rest.csv", "user-runs.csv" };
    FILE *out[3];
    for (int k = 0; k < 3; k++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[k]);
        out[k] = fopen(path, "w");
        ck_assert_ptr_nonnull(out[k]);
        fputs("run_id,date,query,node_flavor,executors,input_gb,wall_time_s\n", out[k]);
    }
    const char *flavour[2] = { "r5.xlarge", "m5.2xlarge" }, *query[3] = { "q1", "q2", "q3" };
    const int gb[2] = { 50, 200 };
    unsigned id = 0, noise = 12345;
    for (int a = 0; a < 2; a++)
        for (int q = 0; q < 3; q++)
            for (int g = 0; g < 2; g++)
                for (int x = 2; x <= 16; x += 2) {
                    noise = noise * 1103515245u + 12345u;
                    const double speed = a ? 1.6 : 1.0, work = (q + 1) * 0.8 * gb[g];
                    const double t = (20 + 3.0 * q + work * 6 / (x * speed) + 4 * log(x) + 0.9 * x) *
                                     (1 + 0.02 * ((double)(noise >> 16 & 1023) / 1023 - 0.5));
                    const int held = a == 1 && q == 2 && g == 1;
                    char line[256];
                    id++;
                    snprintf(line, sizeof line, "r%04u,2024-03-%02u,%s,%s,%d,%d,%.1f\n", id, 1 + id % 28, query[q],
                             flavour[a], x, gb[g], t);
                    fputs(line, out[0]);
                    if (!held) fputs(line, out[1]);
                    if (held && (x == 4 || x == 8 || x == 12)) fputs(line, out[2]);
                }
    for (int k = 0; k < 3; k++) fclose(out[k]);
}
