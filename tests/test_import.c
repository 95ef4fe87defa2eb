/* test_import.c — importing run histories (src/import/): the run record every reader fills. */
#include "testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "import/import.h"

START_TEST(record_starts_unknown_and_keeps_configuration_sorted) {
    bl_run_record *r = bl_run_record_new("logs/app-1", "spark");
    ck_assert_ptr_nonnull(r);
    ck_assert_str_eq(r->source, "logs/app-1");
    ck_assert_str_eq(r->engine, "spark");
    ck_assert_str_eq(r->app_id, "");
    ck_assert_str_eq(r->why, "");
    ck_assert(isnan(r->start_ms) && isnan(r->input_bytes) && isnan(r->executor_memory_mb));
    ck_assert(r->hosts == -1 && r->executors == -1 && r->executor_cores == -1 && r->dynamic_allocation == -1);
    ck_assert_int_eq(r->state, BL_RUN_COMPLETE);
    bl_error err;
    const char *keys[] = {"spark.master", "spark.app.name", "spark.executor.memory", "spark.app.name", "a"};
    const char *vals[] = {"yarn", "first", "4g", "second", ""};
    for (int i = 0; i < 5; i++) ck_assert_int_eq(bl_run_record_conf(r, keys[i], vals[i], &err), BL_OK);
    ck_assert_uint_eq(r->n_conf, 4); /* a key given again replaces its value */
    for (size_t i = 1; i < r->n_conf; i++) ck_assert_int_lt(strcmp(r->conf_key[i - 1], r->conf_key[i]), 0);
    ck_assert_str_eq(bl_run_record_get(r, "spark.app.name"), "second");
    ck_assert_str_eq(bl_run_record_get(r, "a"), "");
    ck_assert_ptr_null(bl_run_record_get(r, "spark.nothere"));
    ck_assert_int_eq(bl_run_record_set(&r->name, "grep", &err), BL_OK);
    ck_assert_int_eq(bl_run_record_set(&r->args, NULL, &err), BL_OK);
    ck_assert_str_eq(r->name, "grep");
    ck_assert_str_eq(r->args, "");
    bl_run_record_free(r);
    bl_run_record_free(NULL);
}
END_TEST

Suite *bl_test_suite(void) {
    Suite *s = suite_create("import");
    TCase *tc = tcase_create("record");
    tcase_add_test(tc, record_starts_unknown_and_keeps_configuration_sorted);
    suite_add_tcase(s, tc);
    return s;
}
