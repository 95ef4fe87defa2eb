/* testutil.c — main() for every Check suite, and helpers to find data and temporary folders. */
#define _XOPEN_SOURCE 700 /* nftw */
#include "testutil.h"

#include <ftw.h>
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
    srunner_free(sr);
    const char *keep = getenv("BELLAMY_KEEP_TMP");
    if (failed > 0 || (keep && *keep && strcmp(keep, "0") != 0)) fprintf(stderr, "kept %s\n", tmp);
    else nftw(tmp, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    return failed == 0 ? 0 : 1;
}
