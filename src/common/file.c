/* file.c — whole-file reads (schemas, workloads and other small text files). */
#include "common/file.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bl_config.h"
#include "common/error.h"

bl_status bl_read_file(const char *path, size_t max_bytes, char **buf, size_t *len, bl_error *err) {
    BL_CHECK_ARG(path && buf && len, err, "bl_read_file: NULL argument");
    *buf = NULL;
    *len = 0;
    FILE *f = fopen(path, "rb");
    if (!f) return bl_seterr(err, BL_EIO, "%s: cannot open: %s", path, strerror(errno));
    /* A folder opens fine on POSIX systems and fails only at the first read (EISDIR); say so plainly. */
    struct stat sb;
    if (fstat(fileno(f), &sb) == 0 && S_ISDIR(sb.st_mode)) {
        fclose(f);
        return bl_seterr(err, BL_EIO, "%s: is a folder, not a file", path);
    }
    char *b = NULL;
    size_t n = 0, cap = 0;
    bl_status st = BL_OK;
    for (;;) {
        if (cap - n < 4096 + 1) {
            size_t nc = cap ? 2 * cap : 8192;
            char *nb = realloc(b, nc);
            if (!nb) { st = bl_seterr(err, BL_ENOMEM, "%s: out of memory", path); break; }
            b = nb;
            cap = nc;
        }
        errno = 0;
        size_t got = fread(b + n, 1, cap - n - 1, f);
        n += got;
        if (n > max_bytes) { st = bl_seterr(err, BL_EFORMAT, "%s: larger than %zu bytes", path, max_bytes); break; }
        if (got == 0) {
            if (ferror(f))
                st = bl_seterr(err, BL_EIO, "%s: read error: %s", path, errno ? strerror(errno) : "unknown reason");
            break;
        }
    }
    fclose(f);
    if (st) {
        free(b);
        return st;
    }
    b[n] = '\0';
    *buf = b;
    *len = n;
    return BL_OK;
}

int bl_running_from_build_tree(void) {
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return 0;
    exe[n] = '\0';
    const size_t rl = strlen(BL_BUILD_ROOT);
    return rl > 0 && (size_t)n > rl && strncmp(exe, BL_BUILD_ROOT, rl) == 0 && exe[rl] == '/';
}
