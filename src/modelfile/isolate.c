/* isolate.c — runs the HDF5 parse of a model file in the model-file reader, a separate process.
 *
 * HDF5 1.10 is not hardened against crafted input: some damaged files crash it, hang it or make it
 * allocate without end. So the library never parses a file's bytes itself. It spawns the reader
 * (posix_spawn: safe in a threaded host, unlike fork), hands it the bytes it has read and checked
 * over a socket pair, and reads back a bounded answer (wire.c). The reader runs under a CPU-time and
 * an address-space limit it sets itself from the request; here a wall-clock deadline ends it with
 * SIGKILL. A crash, hang, excess or malformed answer is BL_EFORMAT naming the file; the host keeps
 * running. Every call has its own process and sockets: threads may load at once.
 *
 * Host-friendly: the sockets are close-on-exec (another thread's spawn does not inherit them), writes
 * use MSG_NOSIGNAL (a reader that died never raises SIGPIPE here), every wait is EINTR-safe, the child
 * is always reaped (no zombie), and a host that ignores SIGCHLD (children reaped by the kernel) still
 * gets its answer: the verdict comes from the answer, the exit status only names a crash.
 * Not here: what the answer means (wire.c), HDF5 (h5.c, write.c, read.c).
 */
#include "modelfile/modelfile.h"
#include "modelfile/modelfile_internal.h"
#include "common/error.h"
#include "common/file.h"
#include "bl_config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define READER_NAME "bellamy-model-reader"
#define READER_ARG  "--bellamy-model-reader" /* argv[1]: the reader refuses to run without it */

/* ---- where the reader is -------------------------------------------------------------------------- */

static int is_executable_file(const char *p) {
    struct stat sb;
    return stat(p, &sb) == 0 && S_ISREG(sb.st_mode) && access(p, X_OK) == 0;
}

/* The reader's path into out: $BELLAMY_LOADER when set; else the build tree's for a program run from
 * it, then the installed one, then the build tree's. */
static bl_status find_reader(char *out, size_t cap, const char *label, bl_error *err) {
    const char *env = getenv("BELLAMY_LOADER");
    if (env && *env) {
        if (strlen(env) >= cap || !is_executable_file(env))
            return bl_seterr(err, BL_EUNSUPPORTED, "%s: cannot read model files: BELLAMY_LOADER=%s is not an "
                             "executable file (point it at %s, or unset it to use the installed one)", label, env,
                             READER_NAME);
        snprintf(out, cap, "%s", env);
        return BL_OK;
    }
    const char *order[3] = {BL_READER_BUILD, BL_READER_INSTALLED, BL_READER_BUILD};
    for (int i = bl_running_from_build_tree() ? 0 : 1; i < 3; i++)
        if (is_executable_file(order[i]) && strlen(order[i]) < cap) {
            snprintf(out, cap, "%s", order[i]);
            return BL_OK;
        }
    return bl_seterr(err, BL_EUNSUPPORTED, "%s: cannot read model files: the model-file reader %s is missing (looked "
                     "for %s and %s); install libbellamy completely (meson install), or set BELLAMY_LOADER to the "
                     "path of %s", label, READER_NAME, BL_READER_INSTALLED, BL_READER_BUILD, READER_NAME);
}

/* ---- limits ---------------------------------------------------------------------------------------- */

/* A positive whole number from the environment (1..max) in *x, or dflt when unset or empty; a value
 * that is no such number is an error naming the variable (never silently the default). */
static bl_status env_number(const char *name, unsigned long max, unsigned long dflt, const char *what,
                            unsigned long *x, bl_error *err) {
    const char *v = getenv(name);
    *x = dflt;
    if (!v || !*v) return BL_OK;
    char *end;
    errno = 0;
    unsigned long n = strtoul(v, &end, 10);
    if (errno || *end || n == 0 || n > max || *v == '-' || *v == '+' || *v == ' ')
        return bl_seterr(err, BL_EINVAL, "%s='%.40s': must be a whole number of %s from 1 to %lu (or unset for "
                         "the default)", name, v, what, max);
    *x = n;
    return BL_OK;
}

/* Seconds the reader may take for a file of size bytes: 30 s plus 1 s per MiB, or BELLAMY_LOADER_TIMEOUT;
 * the address space it may use: 512 MiB plus 16 times the file, or BELLAMY_LOADER_MEMORY_MB. */
static bl_status loader_limits(size_t size, unsigned *limit_s, uint64_t *mem, bl_error *err) {
    unsigned long d = 30 + (unsigned long)(size >> 20), t, mb;
    bl_status st = env_number("BELLAMY_LOADER_TIMEOUT", 86400, d > 86400 ? 86400 : d, "seconds", &t, err);
    if (st == BL_OK) st = env_number("BELLAMY_LOADER_MEMORY_MB", 1ul << 24, 0, "MiB", &mb, err);
    if (st != BL_OK) return st;
    *limit_s = (unsigned)t;
    *mem = mb ? (uint64_t)mb << 20 : ((uint64_t)512 << 20) + 16 * (uint64_t)size;
    return BL_OK;
}

/* ---- the exchange ---------------------------------------------------------------------------------- */

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* A descriptor moved to 3 or above (close-on-exec), so that dup2 onto 0 and 1 in the child never
 * meets itself; -1 on failure (fd closed). */
static int above_stdio(int fd) {
    if (fd > 2) return fd;
    int nfd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    close(fd);
    return nfd;
}

typedef struct exchange {
    const unsigned char *piece[2];  /* the request head, then the image */
    size_t               plen[2];
    int                  cur;       /* piece being sent; 2 when all is sent */
    size_t               off;
    unsigned char       *ans;       /* the answer so far */
    size_t               alen, acap, amax;
    int                  eof, too_big, timed_out, io_error;
} exchange;

/* Sends what it can and reads what there is until the reader closes its end, the answer passes amax
 * bytes, or the deadline passes. fd is non-blocking. */
static void pump(int fd, exchange *x, double deadline) {
    while (!x->eof && !x->too_big && !x->io_error) {
        double left = deadline - now_s();
        if (left <= 0) {
            x->timed_out = 1;
            return;
        }
        struct pollfd p = {fd, (short)(POLLIN | (x->cur < 2 ? POLLOUT : 0)), 0};
        int ms = left > 1000.0 ? 1000000 : (int)(left * 1000.0) + 1;
        int r = poll(&p, 1, ms);
        if (r < 0) {
            if (errno == EINTR) continue;
            x->io_error = 1;
            return;
        }
        if (r == 0) continue;
        if (x->cur < 2 && (p.revents & (POLLOUT | POLLERR | POLLHUP))) {
            size_t n = x->plen[x->cur] - x->off;
            ssize_t w = n ? send(fd, x->piece[x->cur] + x->off, n > (1u << 20) ? (1u << 20) : n,
                                 MSG_NOSIGNAL | MSG_DONTWAIT) : 0;
            if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
                /* full: wait for the next poll */
            } else if (w < 0) {
                x->cur = 2; /* the reader stopped reading (EPIPE, ECONNRESET): read what it says */
                shutdown(fd, SHUT_WR);
            } else {
                x->off += (size_t)w;
                while (x->cur < 2 && x->off == x->plen[x->cur]) {
                    x->cur++;
                    x->off = 0;
                }
                if (x->cur == 2) shutdown(fd, SHUT_WR);
            }
        }
        if (p.revents & (POLLIN | POLLERR | POLLHUP)) {
            if (x->alen == x->acap) {
                if (x->acap >= x->amax) {
                    x->too_big = 1;
                    return;
                }
                size_t nc = x->acap ? x->acap * 2 : 65536;
                if (nc > x->amax) nc = x->amax;
                unsigned char *q = realloc(x->ans, nc);
                if (!q) {
                    x->io_error = 1;
                    return;
                }
                x->ans = q;
                x->acap = nc;
            }
            ssize_t g = recv(fd, x->ans + x->alen, x->acap - x->alen, MSG_DONTWAIT);
            if (g > 0) x->alen += (size_t)g;
            else if (g == 0) x->eof = 1;
            else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
                if (errno == ECONNRESET) x->eof = 1; /* the reader died: what came is all there is */
                else x->io_error = 1;
            }
        }
    }
}

/* Waits for the child until the deadline, then kills it; always reaps it. *known: 0 when the kernel
 * reaped it already (the host ignores SIGCHLD) or another waiter did. */
static void reap(pid_t pid, double deadline, int kill_now, int *status, int *known) {
    *known = 0;
    if (kill_now) kill(pid, SIGKILL);
    long nap_ns = 100000; /* 0.1 ms, doubling to 10 ms */
    for (;;) {
        pid_t r = waitpid(pid, status, kill_now ? 0 : WNOHANG);
        if (r == pid) {
            *known = 1;
            return;
        }
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return; /* ECHILD */
        if (now_s() >= deadline) {
            kill(pid, SIGKILL);
            kill_now = 1;
            continue;
        }
        struct timespec ts = {0, nap_ns};
        nanosleep(&ts, NULL);
        if (nap_ns < 10000000) nap_ns *= 2;
    }
}

static const char *signal_name(int sig) {
    switch (sig) {
    case SIGSEGV: return "SIGSEGV, a memory fault";
    case SIGABRT: return "SIGABRT, an abort";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    case SIGKILL: return "SIGKILL";
    case SIGXCPU: return "SIGXCPU, its CPU time limit";
    default: return "a signal";
    }
}

/* The reader died of sig: the file crashed HDF5, or the memory limit stopped it mid-way. */
static bl_status crashed(bl_error *err, const char *label, int sig, uint64_t mem_bytes) {
    return bl_seterr(err, BL_EFORMAT, "%s: the model-file reader crashed on this file (%s): the file is damaged or "
                     "crafted, or reading it needs more than the reader's %llu MiB (BELLAMY_LOADER_MEMORY_MB)", label,
                     signal_name(sig), (unsigned long long)(mem_bytes >> 20));
}

bl_status bl_mf_parse_isolated(const char *label, const unsigned char *img, size_t size, bl_mf_op op,
                               const char *name, bl_mf_result *out, bl_error *err) {
    memset(out, 0, sizeof *out);
    char reader[PATH_MAX];
    bl_status st = find_reader(reader, sizeof reader, label, err);
    if (st != BL_OK) return st;

    unsigned limit_s;
    uint64_t mem;
    if ((st = loader_limits(size, &limit_s, &mem, err)) != BL_OK) return st;
    bl_mf_request rq = {op, limit_s, mem, label, name, img, size};
    bl_mf_buf head = {0};
    if (bl_mf_wire_put_request_head(&head, &rq) != 0) {
        free(head.p);
        return bl_seterr(err, BL_ENOMEM, "%s: out of memory", label);
    }
    /* the answer is bounded by what a file of this size can hold (an int8 read as int64 is 8 times
     * its bytes in the file) */
    size_t amax = size > (SIZE_MAX - (1u << 20)) / 8 ? SIZE_MAX : 8 * size + (1u << 20);

    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
        free(head.p);
        return bl_seterr(err, BL_EIO, "%s: cannot start the model-file reader: socketpair: %s", label, strerror(errno));
    }
    sv[0] = above_stdio(sv[0]);
    sv[1] = above_stdio(sv[1]);
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    int fa_ok = 0, at_ok = 0, rc = 0;
    pid_t pid = -1;
    if (sv[0] < 0 || sv[1] < 0) rc = errno ? errno : EMFILE;
    if (!rc && !(rc = posix_spawn_file_actions_init(&fa))) fa_ok = 1;
    if (!rc && !(rc = posix_spawnattr_init(&at))) at_ok = 1;
    /* the reader's stdin and stdout are its end of the pair; its stderr goes nowhere (the library
     * never prints, and HDF5 or a sanitizer in the reader might) */
    if (!rc) rc = posix_spawn_file_actions_adddup2(&fa, sv[1], 0);
    if (!rc) rc = posix_spawn_file_actions_adddup2(&fa, sv[1], 1);
    if (!rc) rc = posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    /* default signal actions and an empty mask, whatever the host set (an ignored SIGPIPE or SIGSEGV
     * handler is not the reader's) */
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    sigdelset(&all, SIGKILL);
    sigdelset(&all, SIGSTOP);
    if (!rc) rc = posix_spawnattr_setsigmask(&at, &none);
    if (!rc) rc = posix_spawnattr_setsigdefault(&at, &all);
    if (!rc) rc = posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    char *argv[] = {reader, (char *)READER_ARG, NULL};
    if (!rc) rc = posix_spawn(&pid, reader, &fa, &at, argv, environ);
    if (fa_ok) posix_spawn_file_actions_destroy(&fa);
    if (at_ok) posix_spawnattr_destroy(&at);
    if (sv[1] >= 0) close(sv[1]);
    if (rc) {
        if (sv[0] >= 0) close(sv[0]);
        free(head.p);
        if (rc == ENOENT || rc == EACCES || rc == ENOEXEC)
            return bl_seterr(err, BL_EUNSUPPORTED, "%s: cannot start the model-file reader %s: %s (set BELLAMY_LOADER "
                             "to the path of %s)", label, reader, strerror(rc), READER_NAME);
        return bl_seterr(err, BL_EIO, "%s: cannot start the model-file reader %s: %s", label, reader, strerror(rc));
    }

    exchange x = {{head.p, img}, {head.len, size}, 0, 0, NULL, 0, 0, amax, 0, 0, 0, 0};
    int fl = fcntl(sv[0], F_GETFL);
    if (fl < 0 || fcntl(sv[0], F_SETFL, fl | O_NONBLOCK) < 0) x.io_error = 1;
    const double deadline = now_s() + limit_s;
    pump(sv[0], &x, deadline);
    close(sv[0]);
    free(head.p);
    int status = 0, known = 0;
    /* a reader that answered gets a moment to exit on its own; otherwise it is stopped now */
    reap(pid, x.eof ? now_s() + 5.0 : deadline, !x.eof, &status, &known);

    if (x.timed_out)
        st = bl_seterr(err, BL_EFORMAT, "%s: reading the file took longer than %u s and was stopped (a damaged or "
                       "crafted file; BELLAMY_LOADER_TIMEOUT raises the limit for a very large one)", label, limit_s);
    else if (x.too_big)
        st = bl_seterr(err, BL_EFORMAT, "%s: the model-file reader's answer is larger than a file of %zu bytes can "
                       "hold (a crafted file?)", label, size);
    else if (x.io_error)
        st = bl_seterr(err, BL_EIO, "%s: cannot talk to the model-file reader: %s", label, strerror(errno));
    else if (x.alen == 0 && known && WIFSIGNALED(status))
        st = crashed(err, label, WTERMSIG(status), rq.mem_bytes);
    else if (x.alen == 0 && known && WIFEXITED(status))
        st = bl_seterr(err, BL_EFORMAT, "%s: the model-file reader stopped without an answer (exit status %d): the "
                       "file is damaged or crafted, or %s is not libbellamy's reader", label, WEXITSTATUS(status),
                       reader);
    else if (x.alen == 0)
        st = bl_seterr(err, BL_EFORMAT, "%s: the model-file reader ended without an answer: the file is damaged or "
                       "crafted", label);
    else {
        bl_error e = {BL_OK, ""};
        st = bl_mf_wire_get_answer(x.ans, x.alen, op, name, label, out, &e);
        /* a cut-off answer from a reader that crashed mid-way says so */
        if (st == BL_EFORMAT && known && WIFSIGNALED(status) && strstr(e.message, "malformed answer"))
            st = crashed(err, label, WTERMSIG(status), rq.mem_bytes);
        else if (st != BL_OK && err)
            *err = e;
    }
    free(x.ans);
    return st;
}
