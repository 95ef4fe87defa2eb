/* reader_main.c — bellamy-model-reader, the process in which libbellamy parses model files.
 *
 * libbellamy spawns it for every read of a file (isolate.c) and writes a request to its standard
 * input: what to read, the limits to run under, and the file's bytes, already read and checked by the
 * library. It sets the limits (CPU time, address space, no core file), parses the bytes with HDF5
 * (bl_mf_parse_image) and writes the answer (wire.c) to its standard output, then ends with _exit:
 * HDF5's exit handlers could loop on a damaged file. If a file crashes or hangs HDF5, only this
 * process goes; the library reports it. Not meant to be run by hand; it reads no file itself.
 */
#include "modelfile/modelfile.h"
#include "modelfile/modelfile_internal.h"
#include "common/error.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif

/* Closes every descriptor but 0, 1 and 2: whatever the host left open is not the reader's. */
static void close_inherited(void) {
    int fds[256], n = 0, more = 1;
    while (more) {
        more = 0;
        n = 0;
        DIR *d = opendir("/proc/self/fd");
        if (!d) {
            for (int fd = 3; fd < 4096; fd++) close(fd);
            return;
        }
        struct dirent *e;
        while ((e = readdir(d))) {
            int fd = atoi(e->d_name);
            if (fd <= 2 || fd == dirfd(d)) continue;
            if (n == 256) {
                more = 1;
                break;
            }
            fds[n++] = fd;
        }
        closedir(d);
        for (int i = 0; i < n; i++) close(fds[i]);
    }
}

/* Reads up to n bytes (fewer only at end of input); -1 on an error. */
static ssize_t read_full(int fd, void *buf, size_t n) {
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, (char *)buf + got, n - got);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return -1;
        if (r == 0) break;
        got += (size_t)r;
    }
    return (ssize_t)got;
}

static int write_full(int fd, const void *buf, size_t n) {
    size_t done = 0;
    while (done < n) {
        ssize_t w = write(fd, (const char *)buf + done, n - done);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        done += (size_t)w;
    }
    return 0;
}

/* Writes an answer and ends the process. An error answer (a message and no result) fits in a static
 * buffer, so that it is written even when the memory limit leaves none. */
static void answer(bl_status st, const char *msg, const bl_mf_result *res) {
    static unsigned char small[1024];
    bl_mf_buf b = {0}, e = {small, 0, sizeof small, 0};
    const bl_mf_buf *out = &b;
    if (st != BL_OK || bl_mf_wire_put_answer(&b, st, msg, res) != 0) {
        if (st == BL_OK) {
            st = BL_ENOMEM;
            msg = "out of memory writing the answer";
        }
        bl_mf_wire_put_answer(&e, st, msg, NULL);
        out = &e;
    }
    int rc = out->oom || write_full(1, out->p, out->len) != 0;
    _exit(rc ? 4 : 0);
}

int main(int argc, char **argv) {
    if (argc != 2 || strcmp(argv[1], "--bellamy-model-reader") != 0) {
        fprintf(stderr, "bellamy-model-reader: libbellamy starts this program itself to read model files "
                        "(see models/README.md); it is not meant to be run by hand\n");
        return 2;
    }
    close_inherited();
    struct rlimit none = {0, 0};
    setrlimit(RLIMIT_CORE, &none); /* a crash on a damaged file leaves no core file behind */

    /* the request head: at most magic, op, limits, a label, a name and the size */
    enum { HEAD_MAX = 8 + 4 + 4 + 8 + 4 + BL_MF_WIRE_LABEL_MAX + 1 + 4 + BL_MF_NAME_MAX + 8 };
    static unsigned char head[HEAD_MAX];
    static char label[BL_MF_WIRE_LABEL_MAX + 1], name[BL_MF_NAME_MAX + 1];
    size_t have = 0;
    long used = 0;
    bl_mf_request rq;
    while ((used = bl_mf_wire_get_request_head(head, have, &rq, label, name)) == 0) {
        if (have == HEAD_MAX) break;
        ssize_t r = read(0, head + have, HEAD_MAX - have);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) _exit(3); /* the library went away */
        have += (size_t)r;
    }
    if (used <= 0) answer(BL_EINTERNAL, "the model-file reader does not understand the request (a reader of another "
                                        "libbellamy version? set BELLAMY_LOADER)", NULL);

    /* the limits, before the image is even allocated */
    struct rlimit cpu = {rq.cpu_s, (rlim_t)rq.cpu_s + 1};
    setrlimit(RLIMIT_CPU, &cpu);
#ifndef UNDER_ASAN /* AddressSanitizer reserves terabytes of address space for itself */
    if (rq.mem_bytes) {
        struct rlimit as = {(rlim_t)rq.mem_bytes, (rlim_t)rq.mem_bytes};
        setrlimit(RLIMIT_AS, &as);
    }
#endif
    unsigned char *img = malloc(rq.size ? rq.size : 1);
    if (!img) answer(BL_ENOMEM, "out of memory for the file's bytes", NULL);
    size_t extra = have - (size_t)used;
    if (extra > rq.size) answer(BL_EINTERNAL, "the model-file reader got more bytes than announced", NULL);
    memcpy(img, head + used, extra);
    ssize_t r = read_full(0, img + extra, rq.size - extra);
    if (r < 0 || (size_t)r != rq.size - extra) _exit(3);

    bl_mf_result res;
    bl_error err = {BL_OK, ""};
    bl_status st = bl_mf_parse_image(rq.label, img, rq.size, rq.op, rq.name, &res, &err);
    free(img);
    if (st != BL_OK && !err.message[0]) snprintf(err.message, sizeof err.message, "%s: %s", rq.label, bl_status_string(st));
    answer(st, st == BL_OK ? "" : err.message, &res);
    return 0;
}
