/* test_common.c — the shared utilities of src/common/: string copies, UTF-8 checks, and the one
 * file-replacement policy every writer uses. */
#include "testutil.h"

#include "common/str.h"
#include "common/utf8.h"

#include <stdlib.h>
#include <string.h>

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

Suite *bl_test_suite(void) {
    Suite *s = suite_create("common");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, strdup_copies_and_takes_null);
    tcase_add_test(tc, utf8_valid_rejects_what_it_should);
    suite_add_tcase(s, tc);
    return s;
}
