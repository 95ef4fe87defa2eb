/* file.c — whole-file reads (schemas, workloads and other small text files) and the one policy of
 * replacing a file (file.h). */
#include "common/file.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bl_config.h"
#include "common/error.h"
#include "common/rng.h"
#include "common/str.h"

bl_status bl_read_file(const char *path, size_t max_bytes, char **buf, size_t *len, bl_error *err) {
    BL_CHECK_ARG(path && buf && len, err, "bl_read_file: NULL argument");
    *buf = NULL;
    *len = 0;
    FILE *f = bl_file_open_read(path, 0, err);
    if (!f) return err ? err->status : BL_EIO;
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

FILE *bl_file_open_read(const char *path, int regular_only, bl_error *err) {
    if (!path) {
        bl_seterr(err, BL_EINVAL, "bl_file_open_read: NULL path");
        return NULL;
    }
    /* O_NONBLOCK makes the open of a FIFO without a writer return at once; it is cleared again, so
     * reads from a pipe with a writer wait for its data as usual (and see EOF when there is none). */
    const int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        bl_seterr(err, BL_EIO, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    struct stat sb;
    const char *bad = NULL;
    if (fstat(fd, &sb) != 0) bad = strerror(errno);
    else if (S_ISDIR(sb.st_mode)) bad = "is a folder, not a file"; /* opens fine, fails only at the first read */
    else if (regular_only && !S_ISREG(sb.st_mode)) bad = "not a regular file (a pipe, device or socket)";
    const int fl = bad ? 0 : fcntl(fd, F_GETFL);
    if (!bad && (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0)) bad = strerror(errno);
    FILE *f = bad ? NULL : fdopen(fd, "rb");
    if (!f) {
        if (!bad) bad = "cannot open (out of memory)";
        close(fd);
        bl_seterr(err, BL_EIO, "%s: %s", path, bad);
    }
    return f;
}

int bl_running_from_build_tree(void) {
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return 0;
    exe[n] = '\0';
    const size_t rl = strlen(BL_BUILD_ROOT);
    return rl > 0 && (size_t)n > rl && strncmp(exe, BL_BUILD_ROOT, rl) == 0 && exe[rl] == '/';
}

/* ---- replacing a file ------------------------------------------------------------------------------ */

#define OUT_BUF 65536   /* bytes buffered before they go to the temporary */
#define LINKS_MAX 40    /* symbolic links followed before the chain counts as a loop (Linux's bound) */

struct bl_file_out {
    char         *path;      /* as the caller named it (messages) */
    char         *target;    /* the file replaced: path with its chain of symbolic links followed */
    char         *dir;       /* the target's folder */
    char         *tmp;       /* the temporary, in dir */
    int           fd;        /* the temporary, open for writing */
    int           exists;    /* the target exists: the temporary takes its mode */
    mode_t        mode;
    unsigned char *buf;      /* bytes not yet written */
    size_t        len, cap;
    FILE         *mem;       /* bl_file_out_stream's memory stream, or NULL */
    char         *mem_buf;   /* its buffer (open_memstream's) */
    size_t        mem_len;
    int           failed;    /* a write failed: err_msg says how */
    bl_status     err_status;
    char          err_msg[sizeof ((bl_error *)0)->message];
    bl_file_hook  hook;
    void         *hook_ctx;
};

/* folder of p ("." without a '/', "/" for a file in the root), malloc'd */
static char *dir_of(const char *p) {
    const char *slash = strrchr(p, '/');
    if (!slash) return bl_strdup(".");
    if (slash == p) return bl_strdup("/");
    return bl_strndup(p, (size_t)(slash - p));
}

/* path with every symbolic link of its last component followed (relative link texts are relative to
 * the link's folder); NULL with err set on a loop, an unreadable link or out of memory. A target that
 * does not exist (a new file, or a dangling link's target) is returned as it is. */
static char *follow_links(const char *path, bl_error *err) {
    char *cur = bl_strdup(path);
    if (!cur) { bl_seterr(err, BL_ENOMEM, "out of memory"); return NULL; }
    for (int hop = 0;; hop++) {
        struct stat lb;
        if (lstat(cur, &lb) != 0) {
            if (errno == ENOENT) return cur;
            bl_seterr(err, BL_EIO, "%s: %s", path, strerror(errno));
            free(cur);
            return NULL;
        }
        if (!S_ISLNK(lb.st_mode)) return cur;
        if (hop == LINKS_MAX) {
            bl_seterr(err, BL_EIO, "%s: %s", path, strerror(ELOOP));
            free(cur);
            return NULL;
        }
        size_t cap = lb.st_size > 0 ? (size_t)lb.st_size + 1 : 256;
        char *link = NULL;
        ssize_t n;
        for (;;) { /* the size lstat gave may be stale or 0 (some file systems): grow until it fits */
            char *nl = realloc(link, cap);
            if (!nl) { free(link); free(cur); bl_seterr(err, BL_ENOMEM, "out of memory"); return NULL; }
            link = nl;
            n = readlink(cur, link, cap);
            if (n < 0 || (size_t)n < cap) break;
            cap *= 2;
        }
        if (n < 0) {
            bl_seterr(err, BL_EIO, "%s: cannot read the symbolic link %s: %s", path, cur, strerror(errno));
            free(link);
            free(cur);
            return NULL;
        }
        link[n] = '\0';
        char *next;
        if (link[0] == '/') {
            next = link;
        } else {
            char *d = dir_of(cur);
            const size_t nn = d ? strlen(d) + strlen(link) + 2 : 0;
            next = d ? malloc(nn) : NULL;
            if (next) snprintf(next, nn, "%s/%s", d, link);
            free(d);
            free(link);
        }
        free(cur);
        if (!next) { bl_seterr(err, BL_ENOMEM, "out of memory"); return NULL; }
        cur = next;
    }
}

/* A temporary's name: ".BASE.tmp-PID-XXXXXX" (PID its writer's process); older libbellamy wrote
 * ".BASE.tmp-XXXXXX". For name (a folder entry) of target base: 1 when it is one of base's temporaries,
 * with *pid its writer (0: the older form, writer unknown). */
static int temp_of(const char *name, const char *base, long *pid) {
    const size_t bl = strlen(base);
    if (name[0] != '.' || strncmp(name + 1, base, bl) != 0 || strncmp(name + 1 + bl, ".tmp-", 5) != 0) return 0;
    const char *t = name + 1 + bl + 5;
    *pid = 0;
    if (strlen(t) == 6) return 1; /* the older form */
    char *end;
    errno = 0;
    long p = strtol(t, &end, 10);
    if (errno || p <= 0 || end == t || *end != '-' || strlen(end + 1) != 6) return 0;
    *pid = p;
    return 1;
}

/* 1 when process pid is gone (never for this process, or where the system cannot tell). */
static int writer_gone(long pid) {
    if (pid <= 0 || pid == (long)getpid()) return 0;
    return kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

size_t bl_file_out_leftovers(const char *path, int remove_stale, char *list, size_t cap) {
    if (list && cap) list[0] = '\0';
    if (!path || !*path) return 0;
    char *dir = dir_of(path);
    if (!dir) return 0;
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t found = 0, len = 0;
    DIR *d = opendir(dir);
    for (struct dirent *de; d && (de = readdir(d)) != NULL;) {
        long pid;
        if (!temp_of(de->d_name, base, &pid)) continue;
        const int gone = writer_gone(pid);
        if (remove_stale && gone) { /* a save killed mid-way (SIGKILL, power): its writer cannot finish it */
            char *full = malloc(strlen(dir) + strlen(de->d_name) + 2);
            if (full) {
                sprintf(full, "%s/%s", dir, de->d_name);
                if (unlink(full) == 0) {
                    free(full);
                    continue;
                }
                free(full);
            }
        }
        found++;
        if (list && cap > len + 1) {
            int w = snprintf(list + len, cap - len, "%s%s (%s)", len ? ", " : "", de->d_name,
                             pid == 0 ? "writer unknown: an older libbellamy's" : gone ? "its writer is gone" :
                             "its writer is running");
            len = w < 0 ? len : len + (size_t)w >= cap ? cap - 1 : len + (size_t)w;
        }
    }
    if (d) closedir(d);
    free(dir);
    return found;
}

/* Opens a new temporary ".BASE.tmp-PID-XXXXXX" next to target, exclusively; -1 with errno set. */
static int open_temp(const char *target, const char *dir, int private_mode, char **tmp_out) {
    static atomic_uint_fast64_t counter;
    const char *base = strrchr(target, '/');
    base = base ? base + 1 : target;
    const size_t n = strlen(dir) + strlen(base) + 40;
    char *tmp = malloc(n);
    if (!tmp) { errno = ENOMEM; return -1; }
    static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t seed = (uint64_t)getpid() << 32 ^ (uint64_t)ts.tv_nsec ^ (uint64_t)ts.tv_sec << 20 ^
                    (uint64_t)(uintptr_t)&ts;
    for (int attempt = 0; attempt < 100; attempt++) {
        uint64_t r = bl_mix64(seed ^ atomic_fetch_add(&counter, 1) * 0x9E3779B97F4A7C15ull);
        char suffix[7];
        for (int i = 0; i < 6; i++, r /= 62) suffix[i] = abc[r % 62];
        suffix[6] = '\0';
        snprintf(tmp, n, "%s/.%s.tmp-%ld-%s", dir, base, (long)getpid(), suffix);
        /* a new file is created as any file (0666 less the umask); over an existing one, private until
         * commit gives it the existing mode (the bytes may be as private as the file they replace) */
        int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, private_mode ? 0600 : 0666);
        if (fd >= 0) {
            *tmp_out = tmp;
            return fd;
        }
        if (errno != EEXIST) break;
    }
    const int e = errno;
    free(tmp);
    errno = e;
    return -1;
}

bl_status bl_file_out_open(const char *path, bl_file_out **out, bl_error *err) {
    BL_CHECK_ARG(out, err, "bl_file_out_open: NULL out");
    *out = NULL;
    BL_CHECK_ARG(path && *path, err, "bl_file_out_open: no path");
    bl_file_out *o = calloc(1, sizeof *o);
    if (!o) return bl_seterr(err, BL_ENOMEM, "out of memory");
    o->fd = -1;
    bl_status st = BL_OK;
    if (!(o->path = bl_strdup(path))) { st = bl_seterr(err, BL_ENOMEM, "out of memory"); goto fail; }
    if (!(o->target = follow_links(path, err))) { st = err ? err->status : BL_EIO; goto fail; }
    struct stat sb;
    if (stat(o->target, &sb) == 0) {
        if (S_ISDIR(sb.st_mode)) { st = bl_seterr(err, BL_EIO, "%s: is a folder, not a file", path); goto fail; }
        if (!S_ISREG(sb.st_mode)) {
            st = bl_seterr(err, BL_EIO, "%s: not a regular file (a device, a pipe or a socket): refusing to replace it",
                           path);
            goto fail;
        }
        o->exists = 1;
        o->mode = sb.st_mode & 07777;
    } else if (errno != ENOENT) {
        st = bl_seterr(err, BL_EIO, "%s: %s", path, strerror(errno));
        goto fail;
    }
    if (!(o->dir = dir_of(o->target))) { st = bl_seterr(err, BL_ENOMEM, "out of memory"); goto fail; }
    bl_file_out_leftovers(o->target, 1, NULL, 0); /* the temporaries of killed saves of this file */
    if ((o->fd = open_temp(o->target, o->dir, o->exists, &o->tmp)) < 0) {
        st = bl_seterr(err, errno == ENOMEM ? BL_ENOMEM : BL_EIO, "%s: cannot create a temporary file in folder '%s': %s",
                       path, o->dir, strerror(errno));
        goto fail;
    }
    *out = o;
    return BL_OK;
fail:
    bl_file_out_abort(o);
    return st;
}

/* Writes buf[0..n) to fd whole, with SIGXFSZ blocked in this thread: past a file-size limit write()
 * then fails with EFBIG instead of the signal ending the process. A SIGXFSZ this raised is taken
 * off the thread before the mask is restored (one that was pending before is left alone).
 * 0, or -1 with errno set. */
static int write_all(int fd, const unsigned char *buf, size_t n) {
    sigset_t xfsz, old, pend;
    sigemptyset(&xfsz);
    sigaddset(&xfsz, SIGXFSZ);
    const int masked = pthread_sigmask(SIG_BLOCK, &xfsz, &old) == 0;
    const int was_pending = masked && sigpending(&pend) == 0 && sigismember(&pend, SIGXFSZ) == 1;
    int rc = 0, e = 0;
    for (size_t done = 0; done < n;) {
        ssize_t w = write(fd, buf + done, n - done);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            rc = -1;
            e = w < 0 ? errno : EIO;
            break;
        }
        done += (size_t)w;
    }
    if (masked) {
        if (!was_pending && sigpending(&pend) == 0 && sigismember(&pend, SIGXFSZ) == 1) {
            const struct timespec now = { 0, 0 };
            sigtimedwait(&xfsz, NULL, &now);
        }
        pthread_sigmask(SIG_SETMASK, &old, NULL);
    }
    errno = e;
    return rc;
}

/* Records the first failure; later writes are ignored and commit reports it. */
static bl_status out_fail(bl_file_out *o, bl_status st, bl_error *err, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
static bl_status out_fail(bl_file_out *o, bl_status st, bl_error *err, const char *fmt, ...) {
    if (!o->failed) {
        o->failed = 1;
        o->err_status = st;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(o->err_msg, sizeof o->err_msg, fmt, ap);
        va_end(ap);
    }
    return bl_seterr(err, o->err_status, "%s", o->err_msg);
}

static bl_status out_flush(bl_file_out *o, bl_error *err) {
    if (o->failed) return bl_seterr(err, o->err_status, "%s", o->err_msg);
    if (o->len && write_all(o->fd, o->buf, o->len) != 0)
        return out_fail(o, BL_EIO, err, "%s: cannot write temporary file '%s': %s", o->path, o->tmp, strerror(errno));
    o->len = 0;
    return BL_OK;
}

bl_status bl_file_out_write(bl_file_out *o, const void *data, size_t n, bl_error *err) {
    BL_CHECK_ARG(o && (data || n == 0), err, "bl_file_out_write: NULL argument");
    if (o->failed) return bl_seterr(err, o->err_status, "%s", o->err_msg);
    if (o->mem) {
        if (n && fwrite(data, 1, n, o->mem) != n) return out_fail(o, BL_ENOMEM, err, "%s: out of memory", o->path);
        return BL_OK;
    }
    if (o->len + n > OUT_BUF) {
        bl_status st = out_flush(o, err);
        if (st != BL_OK) return st;
        if (n > OUT_BUF) { /* large blocks go straight to the file */
            if (write_all(o->fd, data, n) != 0)
                return out_fail(o, BL_EIO, err, "%s: cannot write temporary file '%s': %s", o->path, o->tmp,
                                strerror(errno));
            return BL_OK;
        }
    }
    if (!o->buf && !(o->buf = malloc(OUT_BUF))) return out_fail(o, BL_ENOMEM, err, "%s: out of memory", o->path);
    o->cap = OUT_BUF;
    memcpy(o->buf + o->len, data, n);
    o->len += n;
    return BL_OK;
}

bl_status bl_file_out_printf(bl_file_out *o, bl_error *err, const char *fmt, ...) {
    BL_CHECK_ARG(o && fmt, err, "bl_file_out_printf: NULL argument");
    char small[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) return out_fail(o, BL_EINTERNAL, err, "%s: cannot format the text to write", o->path);
    if ((size_t)n < sizeof small) return bl_file_out_write(o, small, (size_t)n, err);
    char *big = malloc((size_t)n + 1);
    if (!big) return out_fail(o, BL_ENOMEM, err, "%s: out of memory", o->path);
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    bl_status st = bl_file_out_write(o, big, (size_t)n, err);
    free(big);
    return st;
}

FILE *bl_file_out_stream(bl_file_out *o, bl_error *err) {
    if (!o) {
        bl_seterr(err, BL_EINVAL, "bl_file_out_stream: NULL argument");
        return NULL;
    }
    if (o->mem) return o->mem;
    if (out_flush(o, err) != BL_OK) return NULL; /* the stream's bytes follow these */
    if (!(o->mem = open_memstream(&o->mem_buf, &o->mem_len))) {
        out_fail(o, BL_ENOMEM, err, "%s: out of memory", o->path);
        return NULL;
    }
    return o->mem;
}

/* Closes the memory stream and writes what it holds. */
static bl_status mem_flush(bl_file_out *o, bl_error *err) {
    if (!o->mem) return BL_OK;
    const int bad = ferror(o->mem);
    const int rc = fclose(o->mem);
    o->mem = NULL;
    if (bad || rc != 0 || !o->mem_buf) return out_fail(o, BL_ENOMEM, err, "%s: out of memory", o->path);
    if (o->failed) return bl_seterr(err, o->err_status, "%s", o->err_msg);
    if (o->mem_len && write_all(o->fd, (const unsigned char *)o->mem_buf, o->mem_len) != 0)
        return out_fail(o, BL_EIO, err, "%s: cannot write temporary file '%s': %s", o->path, o->tmp, strerror(errno));
    return BL_OK;
}

void bl_file_out_set_hook(bl_file_out *o, bl_file_hook hook, void *ctx) {
    if (!o) return;
    o->hook = hook;
    o->hook_ctx = ctx;
}

const char *bl_file_out_temp(const bl_file_out *o) { return o ? o->tmp : NULL; }

static int hook_fails(const bl_file_out *o, bl_file_stage s) { return o->hook && o->hook(s, o->hook_ctx) != 0; }

bl_status bl_file_out_commit(bl_file_out *o, bl_error *err) {
    BL_CHECK_ARG(o, err, "bl_file_out_commit: NULL argument");
    bl_status st = out_flush(o, err);
    if (st == BL_OK) st = mem_flush(o, err);
    if (st == BL_OK && hook_fails(o, BL_FILE_WRITTEN))
        st = bl_seterr(err, BL_EIO, "%s: injected failure after writing temporary file '%s'", o->path, o->tmp);
    if (st == BL_OK && ((o->exists && fchmod(o->fd, o->mode) != 0) || fsync(o->fd) != 0))
        st = bl_seterr(err, BL_EIO, "%s: cannot sync temporary file '%s': %s", o->path, o->tmp, strerror(errno));
    if (st == BL_OK) {
        const int rc = close(o->fd);
        o->fd = -1;
        if (rc != 0) st = bl_seterr(err, BL_EIO, "%s: cannot close temporary file '%s': %s", o->path, o->tmp, strerror(errno));
    }
    if (st == BL_OK && hook_fails(o, BL_FILE_SYNCED))
        st = bl_seterr(err, BL_EIO, "%s: injected failure before renaming temporary file '%s'", o->path, o->tmp);
    if (st == BL_OK && rename(o->tmp, o->target) != 0)
        st = bl_seterr(err, BL_EIO, "%s: cannot replace with '%s': %s", o->path, o->tmp, strerror(errno));
    if (st != BL_OK) {
        bl_file_out_abort(o);
        return st;
    }
    free(o->tmp); /* renamed: nothing to remove any more */
    o->tmp = NULL;
    /* the rename itself made durable; some file systems cannot fsync a folder (EINVAL): not an error */
    int dfd = open(o->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        const int r = fsync(dfd), e = errno;
        close(dfd);
        if (r != 0 && e != EINVAL && e != ENOTSUP)
            st = bl_seterr(err, BL_EIO, "%s: saved, but syncing folder '%s' failed: %s", o->path, o->dir, strerror(e));
    }
    bl_file_out_abort(o);
    return st;
}

void bl_file_out_abort(bl_file_out *o) {
    if (!o) return;
    if (o->mem) fclose(o->mem);
    free(o->mem_buf);
    if (o->fd >= 0) close(o->fd);
    if (o->tmp) unlink(o->tmp);
    free(o->tmp);
    free(o->dir);
    free(o->target);
    free(o->path);
    free(o->buf);
    free(o);
}

bl_status bl_file_replace(const char *path, const void *data, size_t n, bl_error *err) {
    bl_file_out *o = NULL;
    bl_status st = bl_file_out_open(path, &o, err);
    if (st == BL_OK) st = bl_file_out_write(o, data, n, err);
    if (st == BL_OK) return bl_file_out_commit(o, err);
    bl_file_out_abort(o);
    return st;
}
