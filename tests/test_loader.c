/* test_loader.c — loading model files from strangers: the issue-18 experiment (200 mutated copies of a
 * real six-member model file, with and without its checksum header, with and without the override)
 * ends with no crash or hang of the calling process, and every load that succeeds without the
 * override predicts bit for bit what the original predicts; a reader that crashes, hangs, floods,
 * answers garbage, is missing or runs out of memory is a clear error naming the file; files without
 * a header are refused unless allowed; loads from many threads, with SIGCHLD ignored or SIGPIPE at its
 * default, leave no child, zombie or descriptor behind. */
#include "testutil.h"

#include "bellamy/bellamy.h"
#include "data/synth.h"
#include "model/model.h"
#include "modelfile/modelfile.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif

/* ---- the fixture: a six-member model, stamped and unstamped, and what it predicts ------------------ */

enum { NX = 6 };
static const double g_x[NX] = {1, 2, 3, 5, 8, 13};
static char g_stamped[4200], g_unstamped[4200];
static unsigned char *g_img;  /* the stamped file's bytes */
static size_t g_len;
static double g_want[NX];     /* the original's predictions */

static char *tpath(const char *name) {
    static char buf[8][4200];
    static int k;
    char *b = buf[k++ % 8];
    snprintf(b, sizeof buf[0], "%s/%s", bl_test_tmpdir(), name);
    return b;
}

static void write_bytes(const char *path, const void *p, size_t n) {
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(p, 1, n, f), n);
    ck_assert_int_eq(fclose(f), 0);
}

/* A context giving every property of p: numbers 7, texts "m1" (any fixed values do). */
static size_t context_of(const bl_predictor *p, bl_prop_value *ctx, size_t cap) {
    size_t n = bl_predictor_prop_count(p);
    if (n > cap) n = cap;
    for (size_t i = 0; i < n; i++) {
        bl_prop_info pi;
        if (bl_predictor_prop(p, i, &pi) != BL_OK) return 0;
        ctx[i].name = pi.name;
        ctx[i].value = pi.number ? "7" : "m1";
    }
    return n;
}

/* Predicts at g_x with p; BL_OK and out filled, or the predictor's error. */
static bl_status predict_all(const bl_predictor *p, double *out, bl_error *e) {
    bl_prop_value ctx[64];
    size_t n = context_of(p, ctx, 64);
    return bl_predict(p, ctx, n, g_x, NX, out, e);
}

static void make_fixture(void) {
    bl_synth_config c;
    bl_synth_config_default(&c);
    c.n_contexts = 4;
    bl_synth_corpus *corp;
    bl_error e;
    ck_assert_int_eq(bl_synth_generate(&c, &corp, &e), BL_OK);
    bl_dataset *ds;
    ck_assert_int_eq(bl_synth_dataset(corp, NULL, &ds, &e), BL_OK);
    bl_synth_free(corp);
    bl_pretrain_opts o;
    bl_pretrain_opts_default(&o);
    o.calibrate = 0; /* intervals are not what this checks (test_api and the calibration tests do) */
    o.trials = 1;
    o.epochs = 5;
    o.grace = 5;
    o.members = 6;
    bl_model *m;
    ck_assert_msg(bl_pretrain(ds, NULL, &o, &m, &e) == BL_OK, "%s", e.message);
    ck_assert_int_eq(m->n_members, 6);
    snprintf(g_stamped, sizeof g_stamped, "%s", tpath("six.h5"));
    snprintf(g_unstamped, sizeof g_unstamped, "%s", tpath("six-unstamped.h5"));
    ck_assert_msg(bl_model_save(m, g_stamped, &e) == BL_OK, "%s", e.message);
    bl_model_free(m);
    bl_dataset_free(ds);
    FILE *f = fopen(g_stamped, "rb");
    ck_assert_ptr_nonnull(f);
    fseek(f, 0, SEEK_END);
    g_len = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    g_img = malloc(g_len);
    ck_assert_uint_eq(fread(g_img, 1, g_len, f), g_len);
    fclose(f);
    ck_assert_int_eq(memcmp(g_img, "BELLAMY-MODEL 1 ", 16), 0);
    /* as 0.4.0 wrote it: HDF5 from byte 0 (HDF5 finds its superblock there and rebases) */
    write_bytes(g_unstamped, g_img + 512, g_len - 512);
    bl_predictor *p;
    ck_assert_msg(bl_predictor_load(g_stamped, NULL, &p, &e) == BL_OK, "%s", e.message);
    ck_assert_msg(predict_all(p, g_want, &e) == BL_OK, "%s", e.message);
    bl_predictor_free(p);
    for (int i = 0; i < NX; i++) ck_assert(isfinite(g_want[i]));
}

static void fixture_setup(void) {
    if (!g_img) make_fixture();
}

/* Open descriptors of this process. */
static int count_fds(void) {
    DIR *d = opendir("/proc/self/fd");
    if (!d) return -1;
    int n = 0;
    while (readdir(d)) n++;
    closedir(d);
    return n;
}

/* No child of this process is left, running or as a zombie. */
static void assert_no_children(void) {
    int st;
    errno = 0;
    ck_assert_int_eq(waitpid(-1, &st, WNOHANG), -1);
    ck_assert_int_eq(errno, ECHILD);
}

static uint64_t g_rng = 0x2545F4914F6CDD1Dull;
static uint64_t rnd(void) {
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 7;
    g_rng ^= g_rng << 17;
    return g_rng;
}

/* ---- the experiment ------------------------------------------------------------------------------- */

typedef struct tally {
    int loaded, refused, reader_crashed, same, differs;
} tally;

/* Loads path through the public API (flags for bl_model_file_open_ex) and predicts. Without the
 * override (strict), a load that succeeds must predict exactly the original's runtimes. */
static void load_and_predict(const char *path, unsigned flags, int strict, tally *t) {
    bl_error e = {BL_OK, ""};
    bl_model_file *f = NULL;
    bl_status st = bl_model_file_open_ex(path, flags, &f, &e);
    size_t n = st == BL_OK ? bl_model_file_count(f) : 0;
    for (size_t i = 0; st == BL_OK && i < n; i++) {
        bl_predictor *p = NULL;
        bl_error le = {BL_OK, ""};
        if (bl_model_file_load(f, bl_model_file_name(f, i), &p, &le) != BL_OK) {
            ck_assert_msg(le.message[0] && strstr(le.message, path), "load error without the file: %s", le.message);
            t->refused++;
            if (strstr(le.message, "reader crashed")) t->reader_crashed++;
            continue;
        }
        t->loaded++;
        double got[NX];
        bl_error pe = {BL_OK, ""};
        bl_status ps = predict_all(p, got, &pe);
        int same = ps == BL_OK && memcmp(got, g_want, sizeof got) == 0;
        if (ps != BL_OK) ck_assert_msg(pe.message[0], "predict failed without a message");
        if (strict)
            ck_assert_msg(same, "%s loaded without the override but predicts otherwise (%s)", path,
                          ps == BL_OK ? "other runtimes" : pe.message);
        if (same) t->same++;
        else t->differs++;
        bl_predictor_free(p);
    }
    if (st != BL_OK) {
        ck_assert_msg(e.message[0] && strstr(e.message, path), "open error without the file: %s", e.message);
        t->refused++;
        if (strstr(e.message, "reader crashed")) t->reader_crashed++;
    }
    bl_model_file_free(f);
}

/* 200 copies (60 under AddressSanitizer) of the six-member file, each with 1–8 random bytes changed, given to the loader stamped
 * and unstamped, each with and without the override. */
START_TEST(mutated_files_never_crash_the_caller) {
    setenv("BELLAMY_LOADER_TIMEOUT", "20", 1);
    const int fds0 = count_fds();
    const char *vs = tpath("variant.h5"), *vu = tpath("variant-unstamped.h5");
    unsigned char *img = malloc(g_len);
    tally t[4];
    memset(t, 0, sizeof t);
#ifdef UNDER_ASAN
    const int variants = 60; /* the same experiment, shorter: every load is several times slower here */
#else
    const int variants = 200;
#endif
    /* the file holds one model: each variant counts once per condition, loaded or refused */
    bl_model_file *orig = NULL;
    bl_error oe = {BL_OK, ""};
    ck_assert_msg(bl_model_file_open_ex(g_stamped, 0, &orig, &oe) == BL_OK, "%s", oe.message);
    ck_assert_uint_eq(bl_model_file_count(orig), 1);
    bl_model_file_free(orig);
    int unchanged = 0; /* variants whose random bytes all equal the original's */
    time_t t0 = time(NULL);
    for (int v = 0; v < variants; v++) {
        memcpy(img, g_img, g_len);
        int k = 1 + (int)(rnd() % 8);
        for (int j = 0; j < k; j++) {
            /* one change in eight lands in the header, the rest in the HDF5 file behind it */
            size_t off = rnd() % 8 == 0 ? rnd() % 512 : 512 + rnd() % (g_len - 512);
            img[off] = (unsigned char)rnd();
        }
        unchanged += memcmp(img, g_img, g_len) == 0;
        write_bytes(vs, img, g_len);
        write_bytes(vu, img + 512, g_len - 512);
        unsetenv("BELLAMY_MODEL_IGNORE_CHECKSUM");
        unsetenv("BELLAMY_MODEL_ALLOW_UNSTAMPED");
        load_and_predict(vs, 0, 1, &t[0]);           /* stamped, no override: only an unchanged file loads */
        load_and_predict(vu, 0, 1, &t[1]);           /* unstamped, no override: refused */
        load_and_predict(vu, BL_LOAD_ALLOW_UNSTAMPED, 0, &t[3]); /* unstamped, allowed by the flag */
        setenv("BELLAMY_MODEL_IGNORE_CHECKSUM", "1", 1);
        load_and_predict(vs, 0, 0, &t[2]);           /* stamped, checksum overridden */
        unsetenv("BELLAMY_MODEL_IGNORE_CHECKSUM");
    }
    free(img);
    const char *what[4] = {"stamped", "unstamped", "stamped+IGNORE_CHECKSUM", "unstamped+ALLOW_UNSTAMPED"};
    for (int c = 0; c < 4; c++)
        fprintf(stderr, "%d variants, %s: %d loaded (%d predict as the original, %d otherwise), %d refused (%d by "
                        "a crash of the reader)\n", variants, what[c], t[c].loaded, t[c].same, t[c].differs,
                t[c].refused, t[c].reader_crashed);
    fprintf(stderr, "experiment: %ld s, %d variants unchanged by their random bytes\n", (long)(time(NULL) - t0),
            unchanged);
    for (int c = 0; c < 4; c++) {
        ck_assert_msg(t[c].loaded + t[c].refused == variants, "%s: %d loaded + %d refused of %d", what[c], t[c].loaded,
                      t[c].refused, variants);
        ck_assert_msg(t[c].same + t[c].differs == t[c].loaded, "%s", what[c]);
        ck_assert_msg(t[c].reader_crashed <= t[c].refused, "%s", what[c]);
    }
    /* stamped, no override: exactly the unchanged variants load, and predict as the original */
    ck_assert_int_eq(t[0].loaded, unchanged);
    ck_assert_int_eq(t[0].same, unchanged);
    ck_assert_int_eq(t[0].reader_crashed, 0); /* the checksum refuses before the reader sees the file */
    ck_assert_int_eq(t[1].loaded, 0); /* no unstamped file loads without the override */
    ck_assert_int_eq(t[1].reader_crashed, 0);
    /* the overrides do let damaged files through (the checksum alone refused them above), the unchanged
     * ones predicting as the original */
    ck_assert_int_gt(t[2].loaded, unchanged);
    ck_assert_int_gt(t[3].loaded, unchanged);
    ck_assert_int_ge(t[2].same, unchanged);
    assert_no_children();
    ck_assert_int_eq(count_fds(), fds0);
    unsetenv("BELLAMY_LOADER_TIMEOUT");
}
END_TEST

/* ---- the reader misbehaving ----------------------------------------------------------------------- */

/* A fake reader: a shell script with body, made executable. */
static const char *fake_reader(const char *name, const char *body) {
    const char *p = tpath(name);
    FILE *f = fopen(p, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "#!/bin/sh\n%s\n", body);
    fclose(f);
    ck_assert_int_eq(chmod(p, 0755), 0);
    return p;
}

/* Loading the stamped fixture with the reader at path fails with BL_EFORMAT (or want) naming the file
 * and containing what. */
static void expect_failure(const char *reader, bl_status want, const char *what) {
    const char *old = getenv("BELLAMY_LOADER");
    char keep[4200];
    snprintf(keep, sizeof keep, "%s", old ? old : "");
    setenv("BELLAMY_LOADER", reader, 1);
    bl_error e = {BL_OK, ""};
    bl_predictor *p = NULL;
    bl_status st = bl_predictor_load(g_stamped, NULL, &p, &e);
    if (*keep) setenv("BELLAMY_LOADER", keep, 1);
    else unsetenv("BELLAMY_LOADER");
    ck_assert_ptr_null(p);
    ck_assert_msg(st == want, "%s: status %d, want %d: %s", reader, st, want, e.message);
    ck_assert_msg(strstr(e.message, g_stamped) && strstr(e.message, what), "%s: %s", reader, e.message);
}

START_TEST(reader_failures_are_clear_errors) {
    signal(SIGPIPE, SIG_DFL); /* a reader that stops reading must not kill the caller */
    const int fds0 = count_fds();
    expect_failure(fake_reader("segv.sh", "kill -SEGV $$"), BL_EFORMAT, "crashed on this file (SIGSEGV");
    expect_failure(fake_reader("abort.sh", "kill -ABRT $$"), BL_EFORMAT, "crashed on this file (SIGABRT");
    expect_failure(fake_reader("quit.sh", "exit 0"), BL_EFORMAT, "without an answer (exit status 0)");
    expect_failure(fake_reader("garbage.sh", "head -c 100 >/dev/null; echo hello"), BL_EFORMAT, "malformed answer");
    expect_failure(fake_reader("flood.sh", "exec cat /dev/zero"), BL_EFORMAT, "larger than a file");
    /* a hang: stopped at the time limit, promptly */
    setenv("BELLAMY_LOADER_TIMEOUT", "1", 1);
    time_t t0 = time(NULL);
    expect_failure(fake_reader("hang.sh", "exec sleep 60"), BL_EFORMAT, "longer than 1 s");
    ck_assert_int_le(time(NULL) - t0, 5);
    /* a reader that spins on the CPU is stopped as well */
    expect_failure(fake_reader("spin.sh", "while :; do :; done"), BL_EFORMAT, "longer than 1 s");
    unsetenv("BELLAMY_LOADER_TIMEOUT");
    /* missing or not executable: names the variable and the remedy */
    expect_failure(tpath("no-such-reader"), BL_EUNSUPPORTED, "BELLAMY_LOADER");
    const char *plain = tpath("not-executable");
    FILE *f = fopen(plain, "w");
    fputs("#!/bin/sh\n", f);
    fclose(f);
    chmod(plain, 0644);
    expect_failure(plain, BL_EUNSUPPORTED, "not an executable file");
    assert_no_children();
    ck_assert_int_eq(count_fds(), fds0);
}
END_TEST

/* The real reader under a memory limit too small for the file: an error naming the file, not a crash. */
START_TEST(reader_memory_limit_is_an_error) {
#ifdef UNDER_ASAN
    BL_TEST_SKIP("AddressSanitizer build: the reader sets no address-space limit (ASan reserves terabytes of it)");
#endif
    setenv("BELLAMY_LOADER_MEMORY_MB", "1", 1);
    bl_error e = {BL_OK, ""};
    bl_predictor *p = NULL;
    bl_status st = bl_predictor_load(g_stamped, NULL, &p, &e);
    unsetenv("BELLAMY_LOADER_MEMORY_MB");
    ck_assert_ptr_null(p);
    /* the reader crashes on the limit (BL_EFORMAT) or says it is out of memory (BL_ENOMEM) */
    ck_assert_msg((st == BL_EFORMAT || st == BL_ENOMEM) && strstr(e.message, g_stamped), "%d: %s", st, e.message);
    fprintf(stderr, "memory limit: %s\n", e.message);
    /* and without the limit the same file loads */
    ck_assert_msg(bl_predictor_load(g_stamped, NULL, &p, &e) == BL_OK, "%s", e.message);
    bl_predictor_free(p);
    /* a limit that is no number is refused naming the variable, never silently the default */
    const char *bad[][2] = {{"BELLAMY_LOADER_MEMORY_MB", "abc"}, {"BELLAMY_LOADER_MEMORY_MB", "0"},
                            {"BELLAMY_LOADER_TIMEOUT", "-1"}, {"BELLAMY_LOADER_TIMEOUT", "1e9"},
                            {"BELLAMY_LOADER_TIMEOUT", "100000"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        setenv(bad[i][0], bad[i][1], 1);
        st = bl_predictor_load(g_stamped, NULL, &p, &e);
        unsetenv(bad[i][0]);
        ck_assert_ptr_null(p);
        ck_assert_msg(st == BL_EINVAL && strstr(e.message, bad[i][0]) && strstr(e.message, "whole number"), "%s=%s: %d %s",
                      bad[i][0], bad[i][1], st, e.message);
    }
    assert_no_children();
}
END_TEST

/* ---- files without a header ------------------------------------------------------------------------- */

START_TEST(unstamped_files_need_permission) {
    bl_error e = {BL_OK, ""};
    bl_predictor *p = NULL;
    bl_model_file *f = NULL;
    /* refused by every load, naming the file and both remedies */
    ck_assert_int_eq(bl_predictor_load(g_unstamped, NULL, &p, &e), BL_EFORMAT);
    ck_assert_msg(strstr(e.message, g_unstamped) && strstr(e.message, "no checksum header") &&
                  strstr(e.message, "bellamy-train check --model FILE --stamp") &&
                  strstr(e.message, "BELLAMY_MODEL_ALLOW_UNSTAMPED=1"), "%s", e.message);
    ck_assert_int_eq(bl_model_file_open(g_unstamped, &f, &e), BL_EFORMAT);
    ck_assert_ptr_null(f);
    ck_assert_int_eq(bl_model_file_open_ex(g_unstamped, 0x80, &f, &e), BL_EINVAL); /* unknown flag */
    /* allowed by the flag: the old file loads and predicts as before */
    ck_assert_msg(bl_model_file_open_ex(g_unstamped, BL_LOAD_ALLOW_UNSTAMPED, &f, &e) == BL_OK, "%s", e.message);
    ck_assert_uint_eq(bl_model_file_count(f), 1);
    ck_assert_msg(bl_model_file_load(f, NULL, &p, &e) == BL_OK, "%s", e.message);
    double got[NX];
    ck_assert_int_eq(predict_all(p, got, &e), BL_OK);
    ck_assert_mem_eq(got, g_want, sizeof got);
    bl_predictor_free(p);
    bl_model_file_free(f);
    /* and by the environment */
    setenv("BELLAMY_MODEL_ALLOW_UNSTAMPED", "1", 1);
    ck_assert_msg(bl_predictor_load(g_unstamped, NULL, &p, &e) == BL_OK, "%s", e.message);
    bl_predictor_free(p);
    /* a save into it with permission gives it a header */
    const char *copy = tpath("unstamped-copy.h5");
    write_bytes(copy, g_img + 512, g_len - 512);
    ck_assert_int_eq(bl_mf_verify(copy, &e), 0);
    bl_modelrec *rec;
    ck_assert_int_eq(bl_mf_load(copy, NULL, &rec, &e), BL_OK);
    unsetenv("BELLAMY_MODEL_ALLOW_UNSTAMPED");
    ck_assert_int_eq(bl_mf_save(copy, rec, &e), BL_EFORMAT); /* without: refused, untouched */
    ck_assert_msg(strstr(e.message, "refusing to overwrite") && strstr(e.message, "no checksum header"), "%s",
                  e.message);
    ck_assert_int_eq(bl_mf_verify(copy, &e), 0);
    /* stamping (what check --stamp does) needs no permission: asking is the trust */
    ck_assert_msg(bl_mf_rewrite(copy, 0, &e) == BL_OK, "%s", e.message);
    ck_assert_int_eq(bl_mf_verify(copy, &e), 1);
    ck_assert_msg(bl_predictor_load(copy, NULL, &p, &e) == BL_OK, "%s", e.message);
    ck_assert_int_eq(predict_all(p, got, &e), BL_OK);
    ck_assert_mem_eq(got, g_want, sizeof got);
    bl_predictor_free(p);
    bl_modelrec_free(rec);
    /* "not an HDF5 file" is still said as such, header or not */
    const char *txt = tpath("notes.h5");
    write_bytes(txt, "just text\n", 10);
    ck_assert_int_eq(bl_predictor_load(txt, NULL, &p, &e), BL_EFORMAT);
    ck_assert_msg(strstr(e.message, "not an HDF5 file"), "%s", e.message);
}
END_TEST

/* ---- hosts --------------------------------------------------------------------------------------- */

typedef struct loader_arg {
    int bad;
} loader_arg;

static void *loader_thread(void *varg) {
    loader_arg *a = varg;
    for (int i = 0; i < 4; i++) {
        bl_predictor *p = NULL;
        double got[NX];
        if (bl_predictor_load(g_stamped, NULL, &p, NULL) != BL_OK || predict_all(p, got, NULL) != BL_OK ||
            memcmp(got, g_want, sizeof got) != 0)
            a->bad++;
        bl_predictor_free(p);
    }
    return NULL;
}

/* Eight threads loading at once, each with its own reader; nothing left behind. */
START_TEST(threads_load_at_once) {
    const int fds0 = count_fds();
    pthread_t t[8];
    loader_arg a[8];
    memset(a, 0, sizeof a);
    for (int i = 0; i < 8; i++) ck_assert_int_eq(pthread_create(&t[i], NULL, loader_thread, &a[i]), 0);
    for (int i = 0; i < 8; i++) {
        pthread_join(t[i], NULL);
        ck_assert_int_eq(a[i].bad, 0);
    }
    assert_no_children();
    ck_assert_int_eq(count_fds(), fds0);
}
END_TEST

/* A host that ignores SIGCHLD (the kernel reaps its children) or blocks signals still loads. */
START_TEST(host_signal_settings_do_not_matter) {
    signal(SIGCHLD, SIG_IGN);
    signal(SIGPIPE, SIG_IGN);
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    bl_predictor *p = NULL;
    bl_error e;
    double got[NX];
    for (int i = 0; i < 3; i++) {
        ck_assert_msg(bl_predictor_load(g_stamped, NULL, &p, &e) == BL_OK, "%s", e.message);
        ck_assert_int_eq(predict_all(p, got, &e), BL_OK);
        ck_assert_mem_eq(got, g_want, sizeof got);
        bl_predictor_free(p);
    }
    /* a crash is still named as an error (the exit status may be gone) */
    setenv("BELLAMY_LOADER", fake_reader("segv2.sh", "kill -SEGV $$"), 1);
    ck_assert_int_eq(bl_predictor_load(g_stamped, NULL, &p, &e), BL_EFORMAT);
    ck_assert_msg(strstr(e.message, g_stamped) && strstr(e.message, "reader"), "%s", e.message);
    signal(SIGCHLD, SIG_DFL);
    assert_no_children();
}
END_TEST

Suite *bl_test_suite(void) {
    Suite *s = suite_create("loader");
    TCase *tc = tcase_create("loader");
    tcase_add_unchecked_fixture(tc, fixture_setup, NULL);
    tcase_set_timeout(tc, 240);
    tcase_add_test(tc, unstamped_files_need_permission);
    tcase_add_test(tc, reader_failures_are_clear_errors);
    tcase_add_test(tc, reader_memory_limit_is_an_error);
    tcase_add_test(tc, threads_load_at_once);
    tcase_add_test(tc, host_signal_settings_do_not_matter);
    suite_add_tcase(s, tc);
    TCase *tx = tcase_create("experiment");
    tcase_add_unchecked_fixture(tx, fixture_setup, NULL);
    tcase_set_timeout(tx, 600);
    tcase_add_test(tx, mutated_files_never_crash_the_caller);
    suite_add_tcase(s, tx);
    return s;
}
