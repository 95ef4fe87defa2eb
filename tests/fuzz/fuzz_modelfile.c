/* fuzz_modelfile.c — libFuzzer target for the whole model-file load path, as a scheduler meets it:
 * the input is the file after its 512-byte header; the target stamps a header that matches (so the
 * checksum lets every input through to the parser), writes the file and loads it through the public
 * API — the library's own reading and header check, the model-file reader process (HDF5), the checked
 * answer, the model's checks — then asks every model that loads for its properties, its record and a
 * prediction. A crash, hang or sanitizer report here is the host's; HDF5's own crashes stay in the
 * reader and must come back as errors naming the file. The reader runs with its sanitizers set to
 * exit with status 86 on a report of their own (not on HDF5's signals) and to write it to a log file:
 * a report whose first frame past the sanitizer's own is in libhdf5 is HDF5's (its memcpy on a damaged
 * global heap, caught by the interceptor, is a crash the reader contains); any other is a finding,
 * printed and trapped. Not here: the answer's decoder alone (fuzz_modelwire.c, much faster). */
#include "bellamy/bellamy.h"

#include <xxhash.h>

#include <dirent.h>
#include <inttypes.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char g_path[PATH_MAX];
static char g_report[PATH_MAX]; /* the reader's sanitizer reports: g_report.<pid> */
static unsigned char *g_buf;
static size_t g_cap;

static void remove_file(void) { unlink(g_path); }

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    /* the reader built beside this target, unless told otherwise */
    static char reader[PATH_MAX];
    if (!getenv("BELLAMY_LOADER")) {
        char exe[PATH_MAX];
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        if (n > 0) {
            exe[n] = '\0';
            char *slash = strrchr(exe, '/');
            if (slash) *slash = '\0';
            snprintf(reader, sizeof reader, "%s/bellamy-model-reader", exe);
            setenv("BELLAMY_LOADER", reader, 1);
        }
    }
    const char *tmp = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(g_path, sizeof g_path, "%s/fuzz_modelfile-%ld.h5", tmp, (long)getpid());
    snprintf(g_report, sizeof g_report, "%s/fuzz_modelfile-%ld-reader", tmp, (long)getpid());
    /* for the reader only (this process read its options at start): a sanitizer report exits 86 and
     * goes to g_report.<pid>; signals (HDF5 crashing on a damaged file) are left to kill it */
    char opt[PATH_MAX + 256];
    snprintf(opt, sizeof opt, "detect_leaks=0:abort_on_error=0:exitcode=86:handle_segv=0:handle_sigbus=0:"
             "handle_abort=0:handle_sigfpe=0:handle_sigill=0:allocator_may_return_null=1:log_path=%s", g_report);
    setenv("ASAN_OPTIONS", opt, 1);
    snprintf(opt, sizeof opt, "halt_on_error=1:exitcode=86:print_stacktrace=1:log_path=%s", g_report);
    setenv("UBSAN_OPTIONS", opt, 1);
    setenv("BELLAMY_LOADER_TIMEOUT", "5", 0);
    atexit(remove_file);
    return 0;
}

/* The first stack frame of a sanitizer report that is not the sanitizer's own (its interceptors and
 * runtime): HDF5's when that frame lies in libhdf5. */
static int report_is_hdf5s(const char *report) {
    for (const char *l = report; (l = strstr(l, "\n    #")) != NULL; l++) {
        const char *end = strchr(l + 1, '\n');
        size_t len = end ? (size_t)(end - l) : strlen(l);
        char frame[1024];
        snprintf(frame, sizeof frame, "%.*s", (int)(len < sizeof frame ? len : sizeof frame - 1), l);
        if (strstr(frame, " in __interceptor_") || strstr(frame, " in __asan") || strstr(frame, " in __sanitizer") ||
            strstr(frame, " in __ubsan") || strstr(frame, " in __interception"))
            continue;
        return strstr(frame, "libhdf5") != NULL;
    }
    return 0;
}

/* The reader's report(s) of this input: HDF5's own are removed (1); any other is printed (0). */
static int reader_report_is_hdf5s(void) {
    char dir[PATH_MAX], *slash;
    snprintf(dir, sizeof dir, "%s", g_report);
    if (!(slash = strrchr(dir, '/'))) return 0;
    *slash = '\0';
    const char *base = slash + 1;
    DIR *d = opendir(dir);
    if (!d) return 0;
    int found = 0, hdf5s = 1;
    for (struct dirent *de; (de = readdir(d)) != NULL;) {
        if (strncmp(de->d_name, base, strlen(base)) != 0 || de->d_name[strlen(base)] != '.') continue;
        char path[PATH_MAX * 2];
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        FILE *f = fopen(path, "rb");
        static char report[1 << 16];
        size_t n = f ? fread(report, 1, sizeof report - 1, f) : 0;
        if (f) fclose(f);
        report[n] = '\0';
        found = 1;
        if (report_is_hdf5s(report)) {
            unlink(path);
        } else {
            fprintf(stderr, "fuzz_modelfile: the model-file reader's sanitizer report (%s):\n%s\n", path, report);
            hdf5s = 0;
        }
    }
    closedir(d);
    return found && hdf5s;
}

/* An error must name the file; a sanitizer report in the reader is a finding unless it is HDF5's. */
static void check_error(const bl_error *e) {
    if (!e->message[0] || !strstr(e->message, g_path)) __builtin_trap();
    if (strstr(e->message, "exit status 86") && !reader_report_is_hdf5s()) __builtin_trap();
}

static void use(const bl_predictor *p) {
    bl_model_info info;
    if (bl_predictor_info(p, &info) != BL_OK) __builtin_trap();
    bl_prop_value ctx[512];
    size_t n = bl_predictor_prop_count(p);
    if (n > 512) __builtin_trap();
    for (size_t i = 0; i < n; i++) {
        bl_prop_info pi;
        if (bl_predictor_prop(p, i, &pi) != BL_OK || !pi.name) __builtin_trap();
        ctx[i].name = pi.name;
        ctx[i].value = pi.number ? "7" : "m1";
    }
    const double x[3] = {1, 4, 1e6};
    double out[3];
    bl_error e = {BL_OK, ""};
    if (bl_predict(p, ctx, n, x, 3, out, &e) != BL_OK && !e.message[0]) __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size + 512 > g_cap) {
        free(g_buf);
        g_cap = size + 512;
        if (!(g_buf = malloc(g_cap))) return 0;
    }
    memset(g_buf, 0, 512);
    snprintf((char *)g_buf, 512, "BELLAMY-MODEL 1 size=%zu xxh64=%016" PRIx64 "\n", size + 512,
             (uint64_t)XXH64(data, size, 0));
    memcpy(g_buf + 512, data, size);
    FILE *f = fopen(g_path, "wb");
    if (!f) return 0;
    int ok = fwrite(g_buf, 1, size + 512, f) == size + 512;
    if (fclose(f) != 0 || !ok) return 0;

    bl_model_file *mf = NULL;
    bl_error e = {BL_OK, ""};
    if (bl_model_file_open(g_path, &mf, &e) != BL_OK) {
        check_error(&e);
        return 0;
    }
    for (size_t i = 0; i < bl_model_file_count(mf) && i < 4; i++) {
        bl_predictor *p = NULL;
        bl_error le = {BL_OK, ""};
        if (bl_model_file_load(mf, bl_model_file_name(mf, i), &p, &le) == BL_OK) use(p);
        else check_error(&le);
        bl_predictor_free(p);
    }
    bl_model_file_free(mf);
    return 0;
}
