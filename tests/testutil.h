/* testutil.h — shared bits of the Check suites.
 * Each tests/test_<module>.c defines bl_test_suite(); testutil.c supplies main(), which runs the
 * suite and exits 1 when a test failed or a test that passed asserted nothing, else 77 when a test could
 * not run (BL_TEST_SKIP) or the whole suite asked to be skipped, else 0. Skipped tests and tests that
 * asserted nothing are named on stderr with their reason. */
#ifndef BL_TESTUTIL_H
#define BL_TESTUTIL_H

#include <check.h>

/* Defined by each test file. */
Suite *bl_test_suite(void);

/* Folder of the C3O data (BELLAMY_DATA, else ../shared/datasets/c3o beside the source tree),
 * or NULL when it does not exist. */
const char *bl_test_c3o_dir(void);

/* Path rel under the shared folder beside the source tree (BELLAMY_SHARED, else ../shared), or NULL
 * when it does not exist (static buffer, valid until the next call). */
const char *bl_test_shared_path(const char *rel);

/* Path of a file in the source tree (static buffer, valid until the next call). */
const char *bl_test_source_path(const char *rel);

/* The suite's temporary directory under $TMPDIR (default /tmp), shared by all its tests; main()
 * removes it at the end unless a test failed or BELLAMY_KEEP_TMP=1 (it then names it on stderr). */
const char *bl_test_tmpdir(void);

/* A user's own data set in dir, shaped like ../shared/repro/etl (other column names than C3O, four
 * essential properties, one a constant, and an optional constant): user.schema; user-all.csv (12
 * contexts at 2..16 executors), user-rest.csv (all but the context m5.2xlarge/q3/200) and
 * user-runs.csv (3 runs of that context, at 4, 8 and 12 executors). */
void bl_test_write_user_data(const char *dir);

/* Exit the whole test binary with SKIP (77) and a reason on stderr. Call before srunner_run. */
void bl_test_skip_all(const char *why);

/* Makes file permissions apply to this process and the programs it starts even when it runs as root
 * (drops the capabilities that bypass them, CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH, from the effective
 * and the bounding set; for the rest of the process, which under Check's fork mode is the running test).
 * 1 when permissions now apply, 0 when they could not be made to. */
int bl_test_obey_permissions(void);

/* Ends the running test as one that could not run (printf-style reason): the suite then exits 77 unless
 * another test failed. Use in the test's own body (it returns from it), before or instead of asserting. */
#define BL_TEST_SKIP(...)                             \
    do {                                              \
        bl_test_skip_note(__func__, __VA_ARGS__);     \
        return;                                       \
    } while (0)
/* Notes that a part of the running test (fn: __func__) could not run, and lets the test go on with the
 * rest: the suite exits 77 as for BL_TEST_SKIP. */
void bl_test_skip_note(const char *fn, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
