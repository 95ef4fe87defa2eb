/* test_cudaload.c — the core's CUDA module loader (src/nn/cuda/load.c) on any machine: a module that is
 * missing, not a shared library, without the entry point, of another ABI or other table sizes is a
 * clear BL_EUNSUPPORTED naming the path and the fix; a well-formed module (a fake one, without CUDA:
 * tests/fake_cuda_module.c) is loaded once and answers for itself; a failure is not remembered.
 * The fake modules' paths come from the environment (BL_FAKE_CUDA_OK, _ABI, _SIZES, _NOENTRY; set by
 * tests/meson.build). Each test runs in its own process (a loaded module stays loaded).
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bl_config.h"
#include "nn/tgroup.h"
#include "nn/cuda/cuda.h"
#include "nn/cuda/module.h"
#include "nn/tgroup_ops.h"
#include "tgroup_fixture.h"

static const char *fake(const char *var) {
    const char *p = getenv(var);
    ck_assert_msg(p && *p, "%s is not set (run this test through meson test)", var);
    return p;
}

/* Asks with BELLAMY_CUDA_MODULE=path; returns the status, the message in e. */
static bl_status ask(const char *path, bl_error *e) {
    if (path) setenv("BELLAMY_CUDA_MODULE", path, 1);
    else unsetenv("BELLAMY_CUDA_MODULE");
    memset(e, 0, sizeof *e);
    return bl_cuda_available(e);
}

#define HAS(msg, part) ck_assert_msg(strstr((msg), (part)) != NULL, "'%s' not in: %s", (part), (msg))

START_TEST(module_missing_names_the_path) {
    bl_error e;
    const char *p = "/nonexistent/bellamy-test/libbellamy-cuda.so";
    ck_assert_int_eq(ask(p, &e), BL_EUNSUPPORTED);
    ck_assert_int_eq(e.status, BL_EUNSUPPORTED);
    HAS(e.message, "no CUDA module");
    HAS(e.message, p);
    HAS(e.message, "BELLAMY_CUDA_MODULE");
    HAS(e.message, BL_CUDA_MODULE_INSTALLED);
    ck_assert_ptr_null(bl_tg_ops_cuda());
    ck_assert_ptr_null(bl_cuda_module_loaded());
}
END_TEST

/* Without the override: where no module exists, the installed and the build tree's paths and the fix by
 * how this was built; where one exists (a CUDA build), the search finds it: any refusal is then about the
 * module or the device, never a missing module. */
START_TEST(default_search_names_both_paths) {
    FILE *a = fopen(BL_CUDA_MODULE_INSTALLED, "rb"), *b = fopen(BL_CUDA_MODULE_BUILD, "rb");
    bl_error e;
    if (a || b) {
        if (a) fclose(a);
        if (b) fclose(b);
        bl_status st = ask(NULL, &e);
        ck_assert_msg(st == BL_OK || st == BL_EUNSUPPORTED, "status %d: %s", (int)st, e.message);
        ck_assert_msg(st == BL_OK || !strstr(e.message, "no CUDA module"), "a module exists, yet: %s", e.message);
        return;
    }
    ck_assert_int_eq(ask(NULL, &e), BL_EUNSUPPORTED);
    HAS(e.message, BL_CUDA_MODULE_INSTALLED);
    HAS(e.message, BL_CUDA_MODULE_BUILD);
    HAS(e.message, BL_HAVE_CUDA ? "meson install" : "-Dcuda=enabled");
}
END_TEST

START_TEST(not_a_library_gives_dlerror) {
    char p[4096];
    snprintf(p, sizeof p, "%s/libbellamy-cuda.so", bl_test_tmpdir());
    FILE *f = fopen(p, "w");
    ck_assert_ptr_nonnull(f);
    fputs("not an ELF file\n", f);
    fclose(f);
    bl_error e;
    ck_assert_int_eq(ask(p, &e), BL_EUNSUPPORTED);
    HAS(e.message, "cannot be loaded");
    HAS(e.message, p);
    /* glibc's dlerror names the file and the reason after it */
    ck_assert_msg(strstr(e.message, "header") || strstr(e.message, "too short"), "no dlerror reason: %s", e.message);
}
END_TEST

START_TEST(no_entry_point) {
    bl_error e;
    const char *p = fake("BL_FAKE_CUDA_NOENTRY");
    ck_assert_int_eq(ask(p, &e), BL_EUNSUPPORTED);
    HAS(e.message, "is not Bellamy's CUDA module");
    HAS(e.message, BL_CUDA_MODULE_ENTRY);
}
END_TEST

START_TEST(other_abi_refused) {
    bl_error e;
    const char *p = fake("BL_FAKE_CUDA_ABI");
    ck_assert_int_eq(ask(p, &e), BL_EUNSUPPORTED);
    HAS(e.message, p);
    HAS(e.message, "module ABI");
    ck_assert_ptr_null(bl_tg_ops_cuda());
}
END_TEST

START_TEST(other_sizes_refused) {
    bl_error e;
    ck_assert_int_eq(ask(fake("BL_FAKE_CUDA_SIZES"), &e), BL_EUNSUPPORTED);
    HAS(e.message, "other table layouts");
    HAS(e.message, "rebuild");
}
END_TEST

/* A well-formed module: its own answer comes through (here: no device), its table is the ops, and the
 * trial group refuses device CUDA with that answer. A refused module before it is not remembered; once
 * loaded, it stays (a later BELLAMY_CUDA_MODULE is not read). */
START_TEST(module_loaded_once_answers_for_itself) {
    bl_error e;
    ck_assert_int_eq(ask(fake("BL_FAKE_CUDA_ABI"), &e), BL_EUNSUPPORTED);
    const char *ok = fake("BL_FAKE_CUDA_OK");
    ck_assert_int_eq(ask(ok, &e), BL_EUNSUPPORTED);
    ck_assert_str_eq(e.message, "no CUDA device: fake module (tests/fake_cuda_module.c)");
    const bl_tg_ops *o = bl_tg_ops_cuda();
    ck_assert_ptr_nonnull(o);
    ck_assert_str_eq(o->name, "fake-cuda");
    ck_assert_ptr_nonnull(bl_cuda_module_loaded());
    ck_assert_str_eq(bl_cuda_module_loaded(), ok);

    fixture f;
    ck_assert_int_eq(fixture_synth(&f, 6, 2, 2), 0);
    bl_tgroup_opts opts;
    bl_tgroup_opts_default(&opts);
    opts.device = BL_NN_CUDA;
    bl_tgroup_trial cfg[2];
    grid_configs(cfg, 2, 1);
    bl_tgroup *g = NULL;
    bl_error e2;
    ck_assert_int_eq(bl_tgroup_new(&f.d, &f.tr.v, f.has_val ? &f.va.v : NULL, 2, cfg, &opts, &g, &e2),
                     BL_EUNSUPPORTED);
    ck_assert_ptr_null(g);
    ck_assert_str_eq(e2.message, e.message);
    /* the CPU-batched group needs no module at all */
    opts.device = BL_NN_CPU_BATCHED;
    ck_assert_int_eq(bl_tgroup_new(&f.d, &f.tr.v, f.has_val ? &f.va.v : NULL, 2, cfg, &opts, &g, &e2), BL_OK);
    bl_tgroup_free(g);
    fixture_free(&f);

    ck_assert_int_eq(ask("/nonexistent/libbellamy-cuda.so", &e), BL_EUNSUPPORTED);
    ck_assert_str_eq(e.message, "no CUDA device: fake module (tests/fake_cuda_module.c)");
    ck_assert_str_eq(bl_cuda_module_loaded(), ok);
}
END_TEST

Suite *bl_test_suite(void) {
    setenv("CK_FORK", "yes", 1); /* a module once loaded stays: every test in a fresh process */
    Suite *s = suite_create("cudaload");
    TCase *tc = tcase_create("loader");
    tcase_add_test(tc, module_missing_names_the_path);
    tcase_add_test(tc, default_search_names_both_paths);
    tcase_add_test(tc, not_a_library_gives_dlerror);
    tcase_add_test(tc, no_entry_point);
    tcase_add_test(tc, other_abi_refused);
    tcase_add_test(tc, other_sizes_refused);
    tcase_add_test(tc, module_loaded_once_answers_for_itself);
    suite_add_tcase(s, tc);
    return s;
}
