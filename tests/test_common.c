/* test_common.c — the shared utilities of src/common/: string copies, UTF-8 checks, and the one
 * file-replacement policy every writer uses. */
#include "testutil.h"

#include "common/file.h"
#include "common/fmt.h"
#include "common/rng.h"
#include "common/str.h"
#include "common/utf8.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- strings ------------------------------------------------------------------------------------ */

START_TEST(strdup_copies_and_takes_null) {
    char *a = bl_strdup("grep");
    ck_assert_str_eq(a, "grep");
    free(a);
    ck_assert_ptr_null(bl_strdup(NULL));
    char *b = bl_strndup("machine_type", 7);
    ck_assert_str_eq(b, "machine");
    free(b);
    char *c = bl_strndup("ab", 10); /* shorter than n: the whole string */
    ck_assert_str_eq(c, "ab");
    free(c);
    char *d = bl_strndup("x", 0);
    ck_assert_str_eq(d, "");
    free(d);
}
END_TEST

/* ---- numbers as text ------------------------------------------------------------------------------ */

/* The shortest text that reads back: exact values for known cases, and a round trip with no shorter
 * text that also reads back for random bit patterns of every exponent. */
START_TEST(fmt_double_is_shortest_round_trip) {
    char b[BL_FMT_DOUBLE_MAX];
    ck_assert_str_eq(bl_fmt_double(b, 0.1), "0.1");
    ck_assert_str_eq(bl_fmt_double(b, 1959.6), "1959.6");
    ck_assert_str_eq(bl_fmt_double(b, 1959.5999999999999), "1959.6"); /* the same double */
    ck_assert_str_eq(bl_fmt_double(b, 0.1 + 0.2), "0.30000000000000004");
    ck_assert_str_eq(bl_fmt_double(b, 12), "12");
    ck_assert_str_eq(bl_fmt_double(b, 100), "100"); /* not 1e+02 */
    ck_assert_str_eq(bl_fmt_double(b, 3600), "3600");
    ck_assert_str_eq(bl_fmt_double(b, 1e16), "10000000000000000");
    ck_assert_str_eq(bl_fmt_double(b, 1e17), "1e+17");
    ck_assert_str_eq(bl_fmt_double(b, 0.0001), "0.0001");
    ck_assert_str_eq(bl_fmt_double(b, 1.5e-5), "1.5e-05");
    ck_assert_str_eq(bl_fmt_double(b, -0.0), "-0");
    ck_assert_str_eq(bl_fmt_double(b, 1e300), "1e+300");
    ck_assert_str_eq(bl_fmt_double(b, 5e-324), "5e-324"); /* the least subnormal reads back from one digit */
    ck_assert_str_eq(bl_fmt_double(b, NAN), "nan");
    ck_assert_str_eq(bl_fmt_double(b, -INFINITY), "-inf");
    bl_rng r;
    bl_rng_seed(&r, 23);
    for (int i = 0; i < 20000; i++) {
        uint64_t bits = bl_rng_u64(&r);
        double v;
        memcpy(&v, &bits, sizeof v);
        if (!isfinite(v)) continue;
        bl_fmt_double(b, v);
        ck_assert_msg(strtod(b, NULL) == v, "%s does not read back as %a", b, v);
        int p = 1; /* the fewest significant digits that read back, by definition */
        char g[64];
        for (; p < 17; p++) {
            snprintf(g, sizeof g, "%.*g", p, v);
            if (strtod(g, NULL) == v) break;
        }
        snprintf(g, sizeof g, "%.*g", p, v);
        ck_assert_msg(strlen(b) <= strlen(g), "%s is longer than %s", b, g);
    }
}
END_TEST

/* ---- UTF-8 -------------------------------------------------------------------------------------- */

START_TEST(utf8_valid_rejects_what_it_should) {
    static const char *const good[] = { "", "grep", "gr\xc3\xa9p", "\xe2\x82\xac", "\xf0\x9f\x98\x80", "\xf4\x8f\xbf\xbf" };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
        ck_assert_msg(bl_utf8_valid(good[i], strlen(good[i]), NULL), "good %zu", i);
    /* text, offending byte offset */
    static const struct { const char *s; size_t bad; } badc[] = {
        { "ab\xff", 2 },            /* not a lead byte */
        { "\xc0\xaf", 0 },          /* overlong '/' */
        { "x\xe0\x80\xaf", 1 },     /* overlong three-byte form */
        { "\xed\xa0\x80", 0 },      /* a surrogate */
        { "\xf4\x90\x80\x80", 0 },  /* above U+10FFFF */
        { "ok\xc3", 2 },            /* cut short */
        { "\xe2\x28\xa1", 0 },      /* a continuation byte missing */
    };
    for (size_t i = 0; i < sizeof badc / sizeof badc[0]; i++) {
        size_t bad = 99;
        ck_assert_msg(!bl_utf8_valid(badc[i].s, strlen(badc[i].s), &bad), "bad %zu", i);
        ck_assert_uint_eq(bad, badc[i].bad);
    }
    size_t bad = 99;
    ck_assert(!bl_utf8_valid("a\0b", 3, &bad)); /* a NUL byte is not text */
    ck_assert_uint_eq(bad, 1);
    ck_assert_uint_eq(bl_utf8_chars("gr\xc3\xa9p \xe2\x82\xac", 9), 6);
    char s[] = "a\xff" "b\xc3";
    bl_utf8_sanitize(s, strlen(s));
    ck_assert_str_eq(s, "a?b?");
}
END_TEST

/* Text quoted in a message: UTF-8 kept, stray bytes, control characters and the backslash escaped, a
 * long text cut between characters with "..." (never inside a character or an escape). */
START_TEST(utf8_escape_for_messages) {
    char b[64];
    ck_assert_str_eq(bl_utf8_escape(b, sizeof b, "\xff\xfe" "0"), "\\xff\\xfe0");
    ck_assert_str_eq(bl_utf8_escape(b, sizeof b, "gr\xc3\xa9p \xe2\x82\xac"), "gr\xc3\xa9p \xe2\x82\xac");
    ck_assert_str_eq(bl_utf8_escape(b, sizeof b, "a\\b\x1b[2J\r"), "a\\\\b\\x1b[2J\\x0d");
    ck_assert_str_eq(bl_utf8_escape(b, sizeof b, "\xc3"), "\\xc3");             /* a character cut short */
    ck_assert_str_eq(bl_utf8_escape(b, sizeof b, "\xed\xa0\x80"), "\\xed\\xa0\\x80"); /* a surrogate */
    ck_assert_str_eq(bl_utf8_escape(b, sizeof b, ""), "");
    ck_assert_str_eq(bl_utf8_escape(b, 8, "abcdefg"), "abcdefg");               /* just fits */
    ck_assert_str_eq(bl_utf8_escape(b, 8, "abcdefgh"), "abcd...");
    ck_assert_str_eq(bl_utf8_escape(b, 8, "ab\xff\xff"), "ab...");          /* an escape is never cut */
    ck_assert_str_eq(bl_utf8_escape(b, 8, "a\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac"), "a\xe2\x82\xac..."); /* nor a character */
    ck_assert_str_eq(bl_utf8_escape(b, 4, "abcd"), "...");
}
END_TEST

/* ---- replacing a file ------------------------------------------------------------------------------ */

static const char *tpath(const char *name) {
    static char buf[8][4200];
    static int k;
    k = (k + 1) % 8;
    snprintf(buf[k], sizeof buf[k], "%s/%s", bl_test_tmpdir(), name);
    return buf[k];
}

static void put_text(const char *path, const char *text) {
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    ck_assert_int_eq(fclose(f), 0);
}

/* The whole file as a string (static buffer), or NULL when it cannot be read. */
static const char *get_text(const char *path) {
    static char buf[1 << 20];
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return buf;
}

/* Temporaries (".NAME.tmp-*") in the suite's folder, or in dir when given. */
static int temps(const char *dir, const char *name) {
    char prefix[300];
    snprintf(prefix, sizeof prefix, ".%s.tmp-", name);
    DIR *d = opendir(dir ? dir : bl_test_tmpdir());
    ck_assert_ptr_nonnull(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
    closedir(d);
    return n;
}

static mode_t mode_of(const char *path) {
    struct stat sb;
    ck_assert_int_eq(stat(path, &sb), 0);
    return sb.st_mode & 07777;
}

/* A FIFO nobody writes to: opening it must not block (a user's --data or --model pointing at one hung
 * every program); alarm() turns a hang into a failure. */
START_TEST(file_open_read_never_blocks_on_a_fifo) {
    char path[600];
    snprintf(path, sizeof path, "%s/fifo", bl_test_tmpdir());
    unlink(path);
    ck_assert_int_eq(mkfifo(path, 0600), 0);
    alarm(20);
    bl_error e = { 0 };
    ck_assert_ptr_null(bl_file_open_read(path, 1, &e));
    ck_assert_int_eq(e.status, BL_EIO);
    ck_assert_msg(strstr(e.message, path) && strstr(e.message, "not a regular file"), "%s", e.message);
    FILE *f = bl_file_open_read(path, 0, &e); /* pipes allowed: no writer reads as empty */
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(getc(f), EOF);
    fclose(f);
    char *buf = NULL;
    size_t len = 1;
    ck_assert_int_eq(bl_read_file(path, 1 << 20, &buf, &len, &e), BL_OK);
    ck_assert_uint_eq(len, 0);
    free(buf);
    ck_assert_ptr_null(bl_file_open_read(bl_test_tmpdir(), 0, &e));
    ck_assert_msg(strstr(e.message, "is a folder"), "%s", e.message);
    ck_assert_ptr_null(bl_file_open_read("/nonexistent/x", 0, &e));
    ck_assert_msg(strstr(e.message, "/nonexistent/x: cannot open"), "%s", e.message);
    alarm(0);
    unlink(path);
}
END_TEST

START_TEST(file_replace_new_and_existing_keep_their_mode) {
    bl_error e;
    const char *p = tpath("new.txt");
    const mode_t um = umask(027);
    ck_assert_int_eq(bl_file_replace(p, "one\n", 4, &e), BL_OK);
    ck_assert_str_eq(get_text(p), "one\n");
    ck_assert_uint_eq(mode_of(p), 0640); /* a new file: 0666 less the umask */
    umask(um);
    ck_assert_int_eq(chmod(p, 0604), 0);
    ck_assert_int_eq(bl_file_replace(p, "two\n", 4, &e), BL_OK);
    ck_assert_str_eq(get_text(p), "two\n");
    ck_assert_uint_eq(mode_of(p), 0604); /* an existing file keeps its mode */
    ck_assert_int_eq(bl_file_replace(p, "", 0, &e), BL_OK); /* empty contents are contents */
    ck_assert_str_eq(get_text(p), "");
    ck_assert_int_eq(temps(NULL, "new.txt"), 0);
}
END_TEST

START_TEST(file_replace_buffers_large_and_formatted_writes) {
    bl_error e;
    const char *p = tpath("big.txt");
    bl_file_out *o = NULL;
    ck_assert_int_eq(bl_file_out_open(p, &o, &e), BL_OK);
    ck_assert_ptr_nonnull(strstr(bl_file_out_temp(o), "/.big.txt.tmp-"));
    ck_assert_int_eq(temps(NULL, "big.txt"), 1); /* the temporary exists from the start */
    static char block[200000];
    memset(block, 'x', sizeof block);
    for (int i = 0; i < 5000; i++) ck_assert_int_eq(bl_file_out_printf(o, &e, "line %d\n", i), BL_OK);
    ck_assert_int_eq(bl_file_out_write(o, block, sizeof block, &e), BL_OK);
    char long_line[2000];
    memset(long_line, 'y', sizeof long_line - 1);
    long_line[sizeof long_line - 1] = '\0';
    ck_assert_int_eq(bl_file_out_printf(o, &e, "%s\n", long_line), BL_OK); /* longer than the small buffer */
    ck_assert_int_eq(bl_file_out_commit(o, &e), BL_OK);
    struct stat sb;
    ck_assert_int_eq(stat(p, &sb), 0);
    size_t want = sizeof block + sizeof long_line;
    for (int i = 0; i < 5000; i++) want += (size_t)snprintf(NULL, 0, "line %d\n", i);
    ck_assert_uint_eq((size_t)sb.st_size, want);
    ck_assert_int_eq(temps(NULL, "big.txt"), 0);
}
END_TEST

START_TEST(file_replace_stream_keeps_the_order) {
    bl_error e;
    const char *p = tpath("stream.txt");
    bl_file_out *o = NULL;
    ck_assert_int_eq(bl_file_out_open(p, &o, &e), BL_OK);
    ck_assert_int_eq(bl_file_out_write(o, "a\n", 2, &e), BL_OK);
    FILE *f = bl_file_out_stream(o, &e);
    ck_assert_ptr_nonnull(f);
    ck_assert_ptr_eq(bl_file_out_stream(o, &e), f); /* one stream per file */
    fprintf(f, "b %d\n", 2);
    ck_assert_int_eq(bl_file_out_printf(o, &e, "c\n"), BL_OK);
    fputs("d\n", f);
    ck_assert_int_eq(bl_file_out_commit(o, &e), BL_OK);
    ck_assert_str_eq(get_text(p), "a\nb 2\nc\nd\n");
    /* abort with a stream open: nothing left, nothing leaked */
    ck_assert_int_eq(bl_file_out_open(p, &o, &e), BL_OK);
    fputs("lost\n", bl_file_out_stream(o, &e));
    bl_file_out_abort(o);
    ck_assert_str_eq(get_text(p), "a\nb 2\nc\nd\n");
    ck_assert_int_eq(temps(NULL, "stream.txt"), 0);
}
END_TEST

START_TEST(file_replace_follows_symbolic_links) {
    bl_error e;
    const char *real = tpath("real.txt"), *link1 = tpath("link1.txt"), *link2 = tpath("link2.txt");
    put_text(real, "old\n");
    ck_assert_int_eq(chmod(real, 0600), 0);
    ck_assert_int_eq(symlink("real.txt", link1), 0);   /* relative to the link's folder */
    ck_assert_int_eq(symlink(link1, link2), 0);        /* a chain, absolute */
    ck_assert_int_eq(bl_file_replace(link2, "new\n", 4, &e), BL_OK);
    struct stat lb;
    ck_assert_int_eq(lstat(link1, &lb), 0);
    ck_assert(S_ISLNK(lb.st_mode));
    ck_assert_int_eq(lstat(link2, &lb), 0);
    ck_assert(S_ISLNK(lb.st_mode));
    ck_assert_str_eq(get_text(real), "new\n");
    ck_assert_uint_eq(mode_of(real), 0600);
    /* a dangling link: its target is created */
    const char *dangling = tpath("dangling.txt");
    ck_assert_int_eq(symlink("made.txt", dangling), 0);
    ck_assert_int_eq(bl_file_replace(dangling, "made\n", 5, &e), BL_OK);
    ck_assert_str_eq(get_text(tpath("made.txt")), "made\n");
    ck_assert_int_eq(lstat(dangling, &lb), 0);
    ck_assert(S_ISLNK(lb.st_mode));
    /* a loop is an error, and nothing is written */
    const char *la = tpath("loop-a"), *lbp = tpath("loop-b");
    ck_assert_int_eq(symlink("loop-b", la), 0);
    ck_assert_int_eq(symlink("loop-a", lbp), 0);
    ck_assert_int_eq(bl_file_replace(la, "x", 1, &e), BL_EIO);
    ck_assert_msg(strstr(e.message, strerror(ELOOP)), "%s", e.message);
    ck_assert_int_eq(temps(NULL, "real.txt") + temps(NULL, "made.txt") + temps(NULL, "loop-a") + temps(NULL, "loop-b"), 0);
}
END_TEST

START_TEST(file_replace_refuses_folders_and_devices) {
    bl_error e;
    ck_assert_int_eq(bl_file_replace(bl_test_tmpdir(), "x", 1, &e), BL_EIO);
    ck_assert_msg(strstr(e.message, "is a folder"), "%s", e.message);
    ck_assert_int_eq(bl_file_replace("/dev/null", "x", 1, &e), BL_EIO);
    ck_assert_msg(strstr(e.message, "not a regular file"), "%s", e.message);
    struct stat sb;
    ck_assert_int_eq(stat("/dev/null", &sb), 0);
    ck_assert(S_ISCHR(sb.st_mode));
    if (access("/dev/full", F_OK) == 0) { /* a full disk's device: refused like any device, not written */
        ck_assert_int_eq(bl_file_replace("/dev/full", "x", 1, &e), BL_EIO);
        ck_assert_msg(strstr(e.message, "not a regular file"), "%s", e.message);
        ck_assert_int_eq(stat("/dev/full", &sb), 0);
        ck_assert(S_ISCHR(sb.st_mode));
    }
    /* a link to a device is refused too (links are followed) */
    const char *l = tpath("to-null");
    ck_assert_int_eq(symlink("/dev/null", l), 0);
    ck_assert_int_eq(bl_file_replace(l, "x", 1, &e), BL_EIO);
    ck_assert_msg(strstr(e.message, "not a regular file"), "%s", e.message);
    /* a folder that does not exist */
    ck_assert_int_eq(bl_file_replace(tpath("no-such-dir/x.txt"), "x", 1, &e), BL_EIO);
    ck_assert_msg(strstr(e.message, "cannot create a temporary file"), "%s", e.message);
}
END_TEST

START_TEST(file_replace_read_only_folder_leaves_file_intact) {
    if (!bl_test_obey_permissions()) BL_TEST_SKIP("running as root, and file permissions cannot be made to apply");
    bl_error e;
    const char *dir = tpath("ro");
    ck_assert_int_eq(mkdir(dir, 0755), 0);
    char p[4300];
    snprintf(p, sizeof p, "%s/f.txt", dir);
    ck_assert_int_eq(bl_file_replace(p, "old\n", 4, &e), BL_OK);
    ck_assert_int_eq(chmod(dir, 0555), 0);
    ck_assert_int_eq(bl_file_replace(p, "new\n", 4, &e), BL_EIO);
    ck_assert_msg(strstr(e.message, "cannot create a temporary file") && strstr(e.message, strerror(EACCES)), "%s",
                  e.message);
    ck_assert_str_eq(get_text(p), "old\n");
    ck_assert_int_eq(chmod(dir, 0755), 0);
    ck_assert_int_eq(temps(dir, "f.txt"), 0);
}
END_TEST

/* A file-size limit, with SIGXFSZ at its default (which ends a process) and ignored: an error naming
 * EFBIG, the old file intact, no temporary, and the process lives on. */
START_TEST(file_replace_file_size_limit_is_an_error) {
    const char *p = tpath("limited.txt");
    put_text(p, "old\n");
    static char block[100000];
    memset(block, 'z', sizeof block);
    for (int ignore = 0; ignore < 2; ignore++) {
        fflush(NULL);
        pid_t pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
            signal(SIGXFSZ, ignore ? SIG_IGN : SIG_DFL);
            struct rlimit rl = { 4096, 4096 };
            if (setrlimit(RLIMIT_FSIZE, &rl) != 0) _exit(3);
            bl_error ce;
            if (bl_file_replace(p, block, sizeof block, &ce) != BL_EIO) _exit(4);
            if (!strstr(ce.message, "cannot write temporary file") || !strstr(ce.message, strerror(EFBIG))) _exit(5);
            bl_file_out *o = NULL; /* buffered writes meet the limit at commit */
            if (bl_file_out_open(p, &o, &ce) != BL_OK) _exit(6);
            for (int i = 0; i < 2000; i++) bl_file_out_printf(o, &ce, "row %d\n", i);
            if (bl_file_out_commit(o, &ce) != BL_EIO || !strstr(ce.message, strerror(EFBIG))) _exit(7);
            _exit(0);
        }
        int status;
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child (SIGXFSZ %s): %s %d",
                      ignore ? "ignored" : "default", WIFEXITED(status) ? "exit" : "signal",
                      WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
        ck_assert_str_eq(get_text(p), "old\n");
        ck_assert_int_eq(temps(NULL, "limited.txt"), 0);
    }
}
END_TEST

static int fail_stage;
static int fail_hook(bl_file_stage s, void *ctx) { return (int)s == fail_stage; }
static int crash_hook(bl_file_stage s, void *ctx) {
    if ((int)s == fail_stage) _exit(0); /* the child dies mid-commit, as on a power cut */
    return 0;
}

START_TEST(file_replace_injected_failures_and_crashes) {
    bl_error e;
    const char *p = tpath("hooked.txt");
    put_text(p, "old\n");
    for (int s = BL_FILE_WRITTEN; s <= BL_FILE_SYNCED; s++) {
        bl_file_out *o = NULL;
        ck_assert_int_eq(bl_file_out_open(p, &o, &e), BL_OK);
        fail_stage = s;
        bl_file_out_set_hook(o, fail_hook, NULL);
        ck_assert_int_eq(bl_file_out_write(o, "new\n", 4, &e), BL_OK);
        ck_assert_int_eq(bl_file_out_commit(o, &e), BL_EIO);
        ck_assert_msg(strstr(e.message, "injected"), "%s", e.message);
        ck_assert_str_eq(get_text(p), "old\n");
        ck_assert_int_eq(temps(NULL, "hooked.txt"), 0);
    }
    /* abort: nothing written, nothing left */
    bl_file_out *o = NULL;
    ck_assert_int_eq(bl_file_out_open(p, &o, &e), BL_OK);
    ck_assert_int_eq(bl_file_out_write(o, "new\n", 4, &e), BL_OK);
    bl_file_out_abort(o);
    bl_file_out_abort(NULL);
    ck_assert_str_eq(get_text(p), "old\n");
    ck_assert_int_eq(temps(NULL, "hooked.txt"), 0);
    /* a crash at each stage: the target whole and old, the temporary left for whoever cleans up */
    for (int s = BL_FILE_WRITTEN; s <= BL_FILE_SYNCED; s++) {
        fflush(NULL);
        pid_t pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
            bl_file_out *c = NULL;
            if (bl_file_out_open(p, &c, NULL) != BL_OK) _exit(2);
            fail_stage = s;
            bl_file_out_set_hook(c, crash_hook, NULL);
            bl_file_out_write(c, "new\n", 4, NULL);
            bl_file_out_commit(c, NULL);
            _exit(1);
        }
        int status;
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        ck_assert_str_eq(get_text(p), "old\n");
        ck_assert_int_eq(temps(NULL, "hooked.txt"), 1);
        /* the crashed writer is gone: listed as such, then the next save removes its temporary (issue 24:
         * 30 SIGKILLs left temporaries behind for good) */
        char list[512];
        ck_assert_uint_eq(bl_file_out_leftovers(p, 0, list, sizeof list), 1);
        ck_assert_msg(strstr(list, ".hooked.txt.tmp-") && strstr(list, "(its writer is gone)"), "%s", list);
        bl_file_out *again = NULL;
        ck_assert_int_eq(bl_file_out_open(p, &again, &e), BL_OK);
        ck_assert_int_eq(temps(NULL, "hooked.txt"), 1); /* its own only */
        bl_file_out_abort(again);
        ck_assert_int_eq(temps(NULL, "hooked.txt"), 0);
    }
    /* a writer still running keeps its temporary, and one of an older libbellamy (no PID in its name)
     * is never guessed at: both listed, neither removed */
    FILE *f = fopen(tpath(".hooked.txt.tmp-1-abcdef"), "w"); /* PID 1 never goes */
    ck_assert_ptr_nonnull(f);
    fclose(f);
    ck_assert_ptr_nonnull(f = fopen(tpath(".hooked.txt.tmp-Ab3dEf"), "w"));
    fclose(f);
    ck_assert_ptr_nonnull(f = fopen(tpath(".hooked.txt.tmp-12x-abcdef"), "w")); /* no temporary's name */
    fclose(f);
    char list[512];
    ck_assert_int_eq(bl_file_replace(p, "new\n", 4, &e), BL_OK);
    ck_assert_str_eq(get_text(p), "new\n");
    ck_assert_uint_eq(bl_file_out_leftovers(p, 1, list, sizeof list), 2);
    ck_assert_msg(strstr(list, ".hooked.txt.tmp-1-abcdef (its writer is running)") &&
                  strstr(list, ".hooked.txt.tmp-Ab3dEf (writer unknown: an older libbellamy's)"), "%s", list);
    ck_assert_int_eq(access(tpath(".hooked.txt.tmp-12x-abcdef"), F_OK), 0);
    unlink(tpath(".hooked.txt.tmp-1-abcdef"));
    unlink(tpath(".hooked.txt.tmp-Ab3dEf"));
    unlink(tpath(".hooked.txt.tmp-12x-abcdef"));
}
END_TEST

Suite *bl_test_suite(void) {
    Suite *s = suite_create("common");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, strdup_copies_and_takes_null);
    tcase_add_test(tc, fmt_double_is_shortest_round_trip);
    tcase_add_test(tc, utf8_valid_rejects_what_it_should);
    tcase_add_test(tc, utf8_escape_for_messages);
    tcase_add_test(tc, file_open_read_never_blocks_on_a_fifo);
    tcase_add_test(tc, file_replace_new_and_existing_keep_their_mode);
    tcase_add_test(tc, file_replace_buffers_large_and_formatted_writes);
    tcase_add_test(tc, file_replace_stream_keeps_the_order);
    tcase_add_test(tc, file_replace_follows_symbolic_links);
    tcase_add_test(tc, file_replace_refuses_folders_and_devices);
    tcase_add_test(tc, file_replace_read_only_folder_leaves_file_intact);
    tcase_add_test(tc, file_replace_file_size_limit_is_an_error);
    tcase_add_test(tc, file_replace_injected_failures_and_crashes);
    suite_add_tcase(s, tc);
    return s;
}
