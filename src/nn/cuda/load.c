/* load.c — the core's side of the CUDA backend: finds, loads and checks the CUDA module
 * (libbellamy-cuda.so, see module.h) the first time a CUDA device is asked for, and answers
 * bl_cuda_available and bl_tg_ops_cuda from it. libbellamy links no CUDA library, so it loads on a
 * machine without one; only a program that asks for --device cuda needs the module and the CUDA runtime.
 *
 * Where the module is looked for: $BELLAMY_CUDA_MODULE when set (then nothing else); otherwise, as for
 * the model-file reader, the build tree's module first for a program run from the build tree, then the
 * installed one (LIBDIR/bellamy/libbellamy-cuda.so), then the build tree's.
 * A module once loaded stays loaded (never dlclose'd: the CUDA runtime does not support being unloaded)
 * and answers every later call, whatever the environment says by then. A failure is not remembered: the
 * next call looks again (a module installed meanwhile, a corrected BELLAMY_CUDA_MODULE). One mutex
 * guards the search, so threads may ask at once.
 * Not here: CUDA itself (tgroup_cuda.cu, inside the module).
 */
#include "nn/cuda/cuda.h"
#include "nn/cuda/module.h"
#include "common/error.h"
#include "common/file.h"
#include "bl_config.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static pthread_mutex_t module_lock = PTHREAD_MUTEX_INITIALIZER;
static const bl_cuda_module *module;   /* under module_lock; never reset once set */
static char module_path[PATH_MAX];     /* the file it came from */

static int is_file(const char *p) {
    struct stat sb;
    return stat(p, &sb) == 0 && S_ISREG(sb.st_mode);
}

/* What to do about a module that is missing, by how this library was built. */
static const char *missing_fix(void) {
    return BL_HAVE_CUDA ? "install it with the library (meson install), or set BELLAMY_CUDA_MODULE to its path"
                        : "this library was built without its CUDA module: configure with -Dcuda=enabled (needs "
                          "nvcc and cuBLAS), build and install, or set BELLAMY_CUDA_MODULE to a "
                          BL_CUDA_MODULE_FILE " built for Bellamy " BL_VERSION;
}

static bl_status check_module(const bl_cuda_module *m, const char *path, bl_error *err) {
    static const uint32_t want[5] = {BL_CUDA_MODULE_SIZES};
    if (!m)
        return bl_seterr(err, BL_EUNSUPPORTED, "the CUDA module %s returned no table: the file is damaged or not "
                         "Bellamy's; reinstall it", path);
    /* abi is the first field in every version: read nothing else before it matches */
    if (m->abi != BL_CUDA_MODULE_ABI)
        return bl_seterr(err, BL_EUNSUPPORTED, "the CUDA module %s has module ABI %u, this library (Bellamy %s) needs "
                         "ABI %u: install the module built with this library, or point BELLAMY_CUDA_MODULE at it",
                         path, (unsigned)m->abi, BL_VERSION, (unsigned)BL_CUDA_MODULE_ABI);
    const uint32_t got[5] = {m->size_module, m->size_ops, m->size_state, m->size_view, m->size_error};
    if (memcmp(got, want, sizeof want) != 0)
        return bl_seterr(err, BL_EUNSUPPORTED, "the CUDA module %s (Bellamy %s) was built with other table layouts "
                         "than this library (Bellamy %s; sizes %u/%u/%u/%u/%u against %u/%u/%u/%u/%u): rebuild and "
                         "reinstall the module with this library", path, m->version ? m->version : "?", BL_VERSION,
                         (unsigned)got[0], (unsigned)got[1], (unsigned)got[2], (unsigned)got[3], (unsigned)got[4],
                         (unsigned)want[0], (unsigned)want[1], (unsigned)want[2], (unsigned)want[3],
                         (unsigned)want[4]);
    if (!m->available || !m->ops)
        return bl_seterr(err, BL_EUNSUPPORTED, "the CUDA module %s has an incomplete table: reinstall it", path);
    return BL_OK;
}

static bl_status open_module(const char *path, const bl_cuda_module **out, bl_error *err) {
    dlerror();
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *why = dlerror();
        if (!why) why = "unknown reason";
        /* a library the module needs is the usual cause: the CUDA runtime or cuBLAS */
        const int runtime = strstr(why, "libcu") != NULL;
        return bl_seterr(err, BL_EUNSUPPORTED, "the CUDA module %s cannot be loaded: %s%s", path, why,
                         runtime ? " (install the CUDA runtime and cuBLAS the module was built with, or add their "
                                   "folder to LD_LIBRARY_PATH)"
                                 : " (is it a " BL_CUDA_MODULE_FILE " built for this machine?)");
    }
    dlerror();
    void *sym = dlsym(h, BL_CUDA_MODULE_ENTRY);
    if (!sym) {
        const char *why = dlerror();
        bl_status st = bl_seterr(err, BL_EUNSUPPORTED, "%s is not Bellamy's CUDA module: %s", path,
                                 why ? why : "no " BL_CUDA_MODULE_ENTRY);
        dlclose(h);
        return st;
    }
    bl_cuda_module_entry_fn entry;
    memcpy(&entry, &sym, sizeof entry); /* POSIX: dlsym's object pointer holds the function's address */
    const bl_cuda_module *m = entry();
    bl_status st = check_module(m, path, err);
    if (st) {
        dlclose(h);
        return st;
    }
    *out = m;
    return BL_OK;
}

/* The module, loading it on the first call that finds it; NULL with err set when it cannot be had. */
static const bl_cuda_module *get_module(bl_error *err) {
    pthread_mutex_lock(&module_lock);
    const bl_cuda_module *m = module;
    if (m) goto done;
    char path[PATH_MAX];
    const char *env = getenv("BELLAMY_CUDA_MODULE");
    if (env && *env) {
        if (strlen(env) >= sizeof path || !is_file(env)) {
            bl_seterr(err, BL_EUNSUPPORTED, "no CUDA module: BELLAMY_CUDA_MODULE=%s is not a file (point it at "
                      BL_CUDA_MODULE_FILE ", or unset it to use the installed module %s)", env,
                      BL_CUDA_MODULE_INSTALLED);
            goto done;
        }
        snprintf(path, sizeof path, "%s", env);
    } else {
        const char *order[3] = {BL_CUDA_MODULE_BUILD, BL_CUDA_MODULE_INSTALLED, BL_CUDA_MODULE_BUILD};
        int i = bl_running_from_build_tree() ? 0 : 1;
        for (; i < 3; i++)
            if (is_file(order[i]) && strlen(order[i]) < sizeof path) break;
        if (i == 3) {
            bl_seterr(err, BL_EUNSUPPORTED, "no CUDA module: looked for %s and %s; %s", BL_CUDA_MODULE_INSTALLED,
                      BL_CUDA_MODULE_BUILD, missing_fix());
            goto done;
        }
        snprintf(path, sizeof path, "%s", order[i]);
    }
    if (open_module(path, &m, err) == BL_OK) {
        snprintf(module_path, sizeof module_path, "%s", path);
        module = m;
    }
done:
    pthread_mutex_unlock(&module_lock);
    return m;
}

bl_status bl_cuda_available(bl_error *err) {
    const bl_cuda_module *m = get_module(err);
    if (!m) return err ? err->status : BL_EUNSUPPORTED;
    return m->available(err);
}

const bl_tg_ops *bl_tg_ops_cuda(void) {
    bl_error e;
    const bl_cuda_module *m = get_module(&e);
    return m ? m->ops : NULL;
}

const char *bl_cuda_module_loaded(void) {
    pthread_mutex_lock(&module_lock);
    const char *p = module ? module_path : NULL;
    pthread_mutex_unlock(&module_lock);
    return p;
}
