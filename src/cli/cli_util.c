/* cli_util.c — option parsing, --help generation and error printing for the command-line programs.
 * Not here: program logic. */
#include "cli/cli_util.h"
#include "common/file.h"
#include "common/fmt.h"
#include "common/suggest.h"
#include "common/utf8.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

void bl_cli_init(void) {
#ifdef SIGXFSZ
    signal(SIGXFSZ, SIG_IGN);
#endif
}

int bl_cli_version(const char *prog) {
    const char *name = strchr(prog, ' ');
    printf("%.*s %s\n", name ? (int)(name - prog) : (int)strlen(prog), prog, bl_version());
    printf("kernels: %s (this processor runs %s; BELLAMY_CPU=generic|avx2|avx512 caps it)\n", bl_cpu_kernels(),
           bl_cpu_kernels_available());
    bl_error e = { 0 };
    if (bl_cpu_kernels_check(&e) != BL_OK) {
        bl_cli_error(prog, "%s", e.message);
        return BL_EXIT_USAGE;
    }
    return bl_cli_finish(prog);
}

void bl_cli_note_unverified(const char *prog, const char *model_path) {
    const char *ov = getenv("BELLAMY_MODEL_IGNORE_CHECKSUM"), *un = getenv("BELLAMY_MODEL_ALLOW_UNSTAMPED");
    const int ignore = ov && strcmp(ov, "1") == 0, unstamped = un && strcmp(un, "1") == 0;
    if (!model_path || (!ignore && !unstamped)) return;
    bl_error e = { 0 };
    int present = 0;
    const int header = bl_model_file_verify(model_path, &present, &e) != BL_OK ? -1 : present;
    if (header < 0 && ignore)
        fprintf(stderr, "%s: note: %s; read anyway because BELLAMY_MODEL_IGNORE_CHECKSUM=1\n", prog, e.message);
    else if (header == 0 && unstamped)
        fprintf(stderr, "%s: note: %s has no checksum header; read unverified because "
                        "BELLAMY_MODEL_ALLOW_UNSTAMPED=1\n", prog, model_path);
}

void bl_cli_error(const char *prog, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", prog);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

int bl_cli_fail(const char *prog, const bl_error *err) {
    bl_cli_error(prog, "%s", err && err->message[0] ? err->message : "failed");
    return BL_EXIT_FAIL;
}

int bl_cli_opts_fail(const char *prog, const bl_error *err) {
    static const char pre[] = "bl_train_opts.";
    const char *m = err->message;
    if (strncmp(m, pre, sizeof pre - 1) != 0) {
        bl_cli_error(prog, "%s", m);
        return BL_EXIT_USAGE;
    }
    m += sizeof pre - 1;
    char opt[64];
    size_t n = 0;
    for (; m[n] && m[n] != ' ' && m[n] != ':' && n + 1 < sizeof opt; n++) opt[n] = m[n] == '_' ? '-' : m[n];
    opt[n] = '\0';
    bl_cli_error(prog, "--%s%s", opt, m + n);
    return BL_EXIT_USAGE;
}

int bl_cli_int_option(const char *prog, const char *name, long v, int *out) {
    if (v < INT_MIN || v > INT_MAX) {
        bl_cli_error(prog, "--%s %ld: out of range", name, v);
        return BL_EXIT_USAGE;
    }
    *out = (int)v;
    return 0;
}

char bl_cli_delim(const char *value) {
    if (!value) return 0;
    return strcmp(value, "comma") == 0 ? ',' : '\t';
}

/* ---- numbers ------------------------------------------------------------------------------------ */

static int is_digit(char c) { return c >= '0' && c <= '9'; }

/* Is s an optional sign, digits, and (frac) an optional fraction and exponent, and nothing else?
 * strtod/strtol alone would also take leading blanks, hexadecimal, "inf" and "nan". */
static int decimal_syntax(const char *s, int frac) {
    const char *p = s;
    size_t digits = 0;
    if (*p == '+' || *p == '-') p++;
    while (is_digit(*p)) { p++; digits++; }
    if (frac && *p == '.') {
        p++;
        while (is_digit(*p)) { p++; digits++; }
    }
    if (digits == 0) return 0;
    if (frac && (*p == 'e' || *p == 'E')) {
        p++;
        if (*p == '+' || *p == '-') p++;
        if (!is_digit(*p)) return 0;
        while (is_digit(*p)) p++;
    }
    return *p == '\0';
}

int bl_cli_number(const char *s, double *out) {
    if (!s || !decimal_syntax(s, 1)) return -1;
    errno = 0;
    double x = strtod(s, NULL);
    /* ERANGE: overflow (±HUGE_VAL) or underflow (a non-zero number that became 0 or subnormal) */
    if (errno == ERANGE || !isfinite(x)) return -2;
    *out = x;
    return 0;
}

int bl_cli_integer(const char *s, long *out) {
    if (!s || !decimal_syntax(s, 0)) return -1;
    errno = 0;
    long x = strtol(s, NULL, 10);
    if (errno == ERANGE) return -2;
    *out = x;
    return 0;
}

/* ---- scale-out lists ------------------------------------------------------------------------------ */

static int cmp_double(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One whole number of machines (text without blanks): 0, or prints why not and returns BL_EXIT_USAGE. */
static int scale_out_number(const char *prog, const char *flag, const char *spec, const char *t, double max_value,
                            double *x) {
    const char *hint = "give N, A..B, A..B:STEP or a list of them, e.g. 2..12 or 4,8,16..32:8";
    if (!*t) {
        bl_cli_error(prog, "--%s '%s': an empty item (%s)", flag, spec, hint);
        return BL_EXIT_USAGE;
    }
    if (bl_cli_number(t, x) != 0) {
        bl_cli_error(prog, "--%s '%s': '%s' is not a number (%s)", flag, spec, t, hint);
        return BL_EXIT_USAGE;
    }
    if (!(*x >= 1) || *x > max_value) {
        bl_cli_error(prog, "--%s '%s': scale-out %s must be >= 1 and <= %.0f (a number of machines)", flag, spec, t,
                     max_value);
        return BL_EXIT_USAGE;
    }
    /* a whole number in any decimal form a data file's scale-out column accepts (2, 2.0, 2e1); no sign,
     * which reads as part of a range or list gone wrong */
    if (*t == '+' || *t == '-') {
        bl_cli_error(prog, "--%s '%s': '%s' is not a whole number written in digits (write it without the sign)", flag,
                     spec, t);
        return BL_EXIT_USAGE;
    }
    if (*x != floor(*x)) {
        bl_cli_error(prog, "--%s '%s': '%s' is not a whole number of machines (a scale-out counts machines): write "
                     "%.0f or %.0f", flag, spec, t, floor(*x), ceil(*x));
        return BL_EXIT_USAGE;
    }
    return 0;
}

int bl_cli_scale_outs(const char *prog, const char *flag, const char *spec, double max_value, size_t max_count,
                      double **out, size_t *n) {
    *out = NULL;
    *n = 0;
    char shown[72]; /* the list as messages show it: a long one cut */
    snprintf(shown, sizeof shown, strlen(spec) > 60 ? "%.57s..." : "%s", spec);
    size_t cap = 16, len = 0;
    double *x = malloc(cap * sizeof *x);
    if (!x) goto oom;
    for (const char *p = spec;;) {
        size_t ilen = strcspn(p, ",");
        char item[64], num[3][64];
        const char *b = p, *e = p + ilen;
        while (b < e && (*b == ' ' || *b == '\t')) b++;
        while (e > b && (e[-1] == ' ' || e[-1] == '\t')) e--;
        if ((size_t)(e - b) >= sizeof item) {
            bl_cli_error(prog, "--%s '%s': an item longer than %zu characters", flag, shown, sizeof item - 1);
            goto usage;
        }
        memcpy(item, b, (size_t)(e - b));
        item[e - b] = '\0';
        const int one = strchr(spec, ',') == NULL; /* the list is this item: said once, not twice */
        /* N, or A..B, or A..B:STEP */
        const char *dots = strstr(item, ".."), *colon = dots ? strchr(dots, ':') : NULL;
        double a, bnd, step = 1;
        if (!dots) {
            if (strchr(item, ':')) {
                bl_cli_error(prog, "--%s '%s': %s%s%sa step belongs to a range (A..B:STEP)", flag, shown, one ? "" : "'",
                             one ? "" : item, one ? "" : "': ");
                goto usage;
            }
            if (scale_out_number(prog, flag, shown, item, max_value, &a)) goto usage;
            bnd = a;
        } else {
            snprintf(num[0], sizeof num[0], "%.*s", (int)(dots - item), item);
            snprintf(num[1], sizeof num[1], "%.*s", (int)((colon ? colon : item + strlen(item)) - dots - 2), dots + 2);
            snprintf(num[2], sizeof num[2], "%s", colon ? colon + 1 : "1");
            if (strstr(dots + 2, "..")) {
                bl_cli_error(prog, "--%s '%s': %s%s%sa range is A..B or A..B:STEP, e.g. 2..12 or 4..60:4", flag, shown,
                             one ? "" : "'", one ? "" : item, one ? "" : "': ");
                goto usage;
            }
            if (scale_out_number(prog, flag, shown, num[0], max_value, &a) ||
                scale_out_number(prog, flag, shown, num[1], max_value, &bnd))
                goto usage;
            if (bl_cli_number(num[2], &step) != 0 || !(step >= 1) || step != floor(step) || step > max_value ||
                !(num[2][0] >= '0' && num[2][0] <= '9')) {
                bl_cli_error(prog, "--%s '%s': %s%s%sthe step '%s' is not a whole number >= 1", flag, shown, one ? "" : "'",
                             one ? "" : item, one ? "" : "': ", num[2]);
                goto usage;
            }
            if (bnd < a) {
                bl_cli_error(prog, "--%s '%s': the range runs down (%.0f > %.0f): write %.0f..%.0f", flag, shown, a, bnd,
                             bnd, a);
                goto usage;
            }
        }
        const size_t before = len; /* the scale-outs of the items before this one */
        for (double v = a; v <= bnd; v += step) {
            if (len == max_count) {
                /* too many: a range thins with a step, the smallest that fits what the items before leave */
                const size_t left = max_count - before;
                if (dots && left >= 1) {
                    const double fit = floor((bnd - a) / (double)left) + 1;
                    char range[96];
                    snprintf(range, sizeof range, step > 1 ? "%.0f..%.0f:%.0f" : "%.0f..%.0f", a, bnd, step);
                    char with[64] = "";
                    if (before)
                        snprintf(with, sizeof with, ", and %zu come%s before it", before, before == 1 ? "s" : "");
                    bl_cli_error(prog, "--%s '%s': more than %zu scale-outs (%s holds %.0f%s): thin the range with a "
                                 "step, e.g. %.0f..%.0f:%.0f (a scale-out every %.0f machines)", flag, shown, max_count,
                                 range, floor((bnd - a) / step) + 1, with, a, bnd, fit, fit);
                } else {
                    bl_cli_error(prog, "--%s '%s': more than %zu scale-outs: give fewer, or ranges with a step "
                                 "(A..B:STEP, e.g. 1..1000000:10)", flag, shown, max_count);
                }
                goto usage;
            }
            if (len == cap) {
                double *t = realloc(x, (cap *= 2) * sizeof *x);
                if (!t) goto oom;
                x = t;
            }
            x[len++] = v;
        }
        if (!p[ilen]) break;
        p += ilen + 1;
    }
    /* each scale-out once: a repeated one would print twice and count as two candidates */
    double *s = malloc(len * sizeof *s);
    if (!s) goto oom;
    memcpy(s, x, len * sizeof *s);
    qsort(s, len, sizeof *s, cmp_double);
    for (size_t i = 1; i < len; i++)
        if (s[i] == s[i - 1]) {
            bl_cli_error(prog, "--%s '%s': scale-out %.0f is given twice: give each once", flag,
                         shown, s[i]);
            free(s);
            goto usage;
        }
    free(s);
    *out = x;
    *n = len;
    return 0;
usage:
    free(x);
    return BL_EXIT_USAGE;
oom:
    free(x);
    bl_cli_error(prog, "out of memory");
    return BL_EXIT_FAIL;
}

/* ---- files ---------------------------------------------------------------------------------------- */

int bl_cli_check_input(const char *prog, const char *flag, const char *path) {
    struct stat st;
    if (!path || !*path) { bl_cli_error(prog, "--%s: empty file name", flag); return BL_EXIT_FAIL; }
    if (stat(path, &st) != 0) {
        bl_cli_error(prog, "--%s %s: cannot open: %s", flag, path, strerror(errno));
        return BL_EXIT_FAIL;
    }
    if (S_ISDIR(st.st_mode)) { bl_cli_error(prog, "--%s %s: is a folder, not a file", flag, path); return BL_EXIT_FAIL; }
    if (!S_ISREG(st.st_mode)) return 0; /* a pipe is opened once, by its reader (a probe would end its writer) */
    bl_error e = { 0 };
    FILE *f = bl_file_open_read(path, 0, &e); /* can it be read (permissions)? */
    if (!f) { bl_cli_error(prog, "--%s %s", flag, e.message); return BL_EXIT_FAIL; }
    fclose(f);
    return 0;
}

int bl_cli_check_output(const char *prog, const char *flag, const char *path) {
    struct stat st;
    if (!path || !*path) { bl_cli_error(prog, "--%s: empty file name", flag); return BL_EXIT_FAIL; }
    size_t n = strlen(path);
    if (path[n - 1] == '/') { bl_cli_error(prog, "--%s %s: names a folder, not a file", flag, path); return BL_EXIT_FAIL; }
    /* the folder: everything before the last '/' ("/" for "/x", "." without a '/') */
    char *dir = malloc(n + 2);
    if (!dir) { bl_cli_error(prog, "out of memory"); return BL_EXIT_FAIL; }
    const char *slash = strrchr(path, '/');
    if (!slash) strcpy(dir, ".");
    else if (slash == path) strcpy(dir, "/");
    else { memcpy(dir, path, (size_t)(slash - path)); dir[slash - path] = '\0'; }
    int rc = 0;
    if (stat(dir, &st) != 0) {
        bl_cli_error(prog, "--%s %s: folder '%s': %s", flag, path, dir, strerror(errno));
        rc = BL_EXIT_FAIL;
    } else if (!S_ISDIR(st.st_mode)) {
        bl_cli_error(prog, "--%s %s: '%s' is not a folder", flag, path, dir);
        rc = BL_EXIT_FAIL;
    } else if (access(dir, W_OK | X_OK) != 0) {
        bl_cli_error(prog, "--%s %s: cannot write into folder '%s': %s", flag, path, dir, strerror(errno));
        rc = BL_EXIT_FAIL;
    } else if (stat(path, &st) == 0) {
        /* writing replaces the file by a rename, which its permissions would not stop: honour them here */
        if (S_ISDIR(st.st_mode)) {
            bl_cli_error(prog, "--%s %s: is a folder, not a file", flag, path);
            rc = BL_EXIT_FAIL;
        } else if (access(path, W_OK) != 0) {
            bl_cli_error(prog, "--%s %s: the file is not writable (%s); it is left as it is", flag, path, strerror(errno));
            rc = BL_EXIT_FAIL;
        }
    }
    if (rc == 0) {
        /* permissions do not tell all (root passes access() on /sys, a read-only mount, a full quota):
         * the temporary file the save will write is made now, the way the save makes it, and removed */
        bl_file_out *o = NULL;
        bl_error e = { 0 };
        if (bl_file_out_open(path, &o, &e) != BL_OK) {
            bl_cli_error(prog, "--%s %s", flag, e.message);
            rc = BL_EXIT_FAIL;
        } else {
            bl_file_out_abort(o);
        }
    }
    free(dir);
    return rc;
}

const char *bl_cli_model_name_problem(const char *name) {
    size_t n = name ? strlen(name) : 0;
    if (n == 0) return "it is empty";
    if (n > 255) return "it is longer than 255 bytes";
    if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0) return "it is '.' or '..'";
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)name[i];
        if (c == '/') return "it contains '/'";
        if (c < 0x20 || c == 0x7f) return "it contains control characters";
    }
    if (!bl_utf8_valid(name, n, NULL)) return "it is not valid UTF-8";
    return NULL;
}

int bl_cli_check_model_name(const char *prog, const char *flag, const char *name) {
    const char *why = bl_cli_model_name_problem(name);
    if (!why) return 0;
    size_t n = name ? strlen(name) : 0;
    bl_cli_error(prog, "--%s '%.*s%s' is not a valid model name: %s", flag, n > 64 ? 64 : (int)n, name ? name : "", n > 64 ? "..." : "",
                 why);
    return BL_EXIT_USAGE;
}

void bl_cli_json_str(const char *s) {
    putchar('"');
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        if (*p == '"' || *p == '\\') printf("\\%c", *p);
        else if (*p == '\n') printf("\\n");
        else if (*p == '\t') printf("\\t");
        else if (*p < 0x20) printf("\\u%04x", *p);
        else putchar(*p);
    }
    putchar('"');
}

const char *bl_cli_num(double v) {
    static char ring[8][BL_FMT_DOUBLE_MAX];
    static unsigned next;
    return bl_fmt_double(ring[next++ % 8], v);
}

void bl_cli_json_num(double v) {
    char b[BL_FMT_DOUBLE_MAX];
    if (isfinite(v)) printf("%s", bl_fmt_double(b, v)); /* the shortest text that reads back the same */
    else printf("null");
}

void bl_cli_json_value(const char *v, int number) {
    double d;
    if (number && v && bl_cli_number(v, &d) == 0 && d >= 0 && d == floor(d) && d < 9007199254740992.0)
        printf("%.0f", d);
    else
        bl_cli_json_str(v);
}

void bl_cli_note_skipped(const char *prog, const char *flag, const bl_data *d) {
    bl_data_summary s;
    if (!d || bl_data_summarize(d, &s) != BL_OK || s.skipped == 0) return;
    size_t kept = 0;
    for (const char *why; (why = bl_data_skipped(d, kept)) != NULL; kept++)
        fprintf(stderr, "%s: note: %s; row skipped (--skip-invalid)\n", prog, why);
    if (s.skipped > kept)
        fprintf(stderr, "%s: note: ... and %zu more invalid rows (the first %zu are named above)\n", prog,
                s.skipped - kept, kept);
    fprintf(stderr, "%s: note: --%s %s: %zu invalid row%s skipped, %zu used\n", prog, flag, s.name, s.skipped,
            s.skipped == 1 ? "" : "s", s.rows);
}

int bl_cli_finish(const char *prog) {
    /* fflush reports what buffered writes failed; ferror what already failed before */
    errno = 0; /* so that a reason printed below is this flush's, not an older call's */
    if (fflush(stdout) != 0 || ferror(stdout)) {
        bl_cli_error(prog, "cannot write the output: %s", errno ? strerror(errno) : "write error");
        return BL_EXIT_FAIL;
    }
    return BL_EXIT_OK;
}

/* ---- options -------------------------------------------------------------------------------------- */

int bl_cli_width(void) {
    const char *c = getenv("COLUMNS");
    long w = 0;
    if (c && bl_cli_integer(c, &w) == 0 && w >= 20 && w <= 10000) return (int)w;
#ifdef TIOCGWINSZ
    struct winsize ws;
    if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20) return ws.ws_col;
#endif
    return 100;
}

void bl_cli_print_wrapped(const char *text, size_t indent, size_t first_col, int width) {
    size_t avail = width > (int)indent + 24 ? (size_t)width - indent : 24, col = first_col;
    const char *p = text;
    int first_word = 1;
    while (*p) {
        while (*p == ' ') p++;
        if (!*p) break;
        size_t wl = strcspn(p, " ");
        if (!first_word && col + 1 + wl > indent + avail) {
            printf("\n%*s", (int)indent, "");
            col = indent;
        } else if (!first_word) {
            putchar(' ');
            col++;
        }
        fwrite(p, 1, wl, stdout);
        col += wl;
        p += wl;
        first_word = 0;
    }
    putchar('\n');
}

/* The left column of an option's help line: "--name VALUE". */
static void option_left(const bl_cli_option *o, char *left, size_t cap) {
    if (o->type == BL_OPT_FLAG) snprintf(left, cap, "--%s", o->name);
    else if (o->type == BL_OPT_CHOICE) snprintf(left, cap, "--%s %s", o->name, o->choices);
    else snprintf(left, cap, "--%s %s", o->name, o->metavar ? o->metavar : "VALUE");
}

#define HELP_LEFT_MAX 30 /* a longer left column gets a line of its own, its help below */

void bl_cli_print_help(const char *prog, const char *usage, const bl_cli_option *opts, size_t nopts) {
    printf("usage: %s\n\noptions:\n", usage ? usage : prog);
    const int width = bl_cli_width();
    size_t lw = strlen("--help");
    char left[160], help[1200];
    for (size_t i = 0; i < nopts; i++) {
        option_left(&opts[i], left, sizeof left);
        size_t l = strlen(left);
        if (l <= HELP_LEFT_MAX && l > lw) lw = l;
    }
    const size_t col = 2 + lw + 2; /* every help text starts here */
    for (size_t i = 0; i <= nopts; i++) {
        const bl_cli_option *o = i < nopts ? &opts[i] : NULL;
        size_t len = 0;
        if (o) {
            option_left(o, left, sizeof left);
            len = (size_t)snprintf(help, sizeof help, "%s", o->help ? o->help : "");
            if (len < sizeof help && o->required) len += (size_t)snprintf(help + len, sizeof help - len, " (required)");
            else if (len < sizeof help && o->def) len += (size_t)snprintf(help + len, sizeof help - len, " (default: %s)", o->def);
            if (len < sizeof help && o->type == BL_OPT_LIST) snprintf(help + len, sizeof help - len, " (repeatable)");
        } else {
            snprintf(left, sizeof left, "--help");
            snprintf(help, sizeof help, "show this help and exit");
        }
        size_t l = strlen(left);
        if (l > lw) printf("  %s\n%*s", left, (int)col, "");
        else printf("  %-*s  ", (int)lw, left);
        bl_cli_print_wrapped(help, col, col, width);
    }
}

static int choice_ok(const char *choices, const char *v) {
    size_t n = strlen(v);
    const char *p = choices;
    while (p && *p) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        if (len == n && strncmp(p, v, n) == 0) return 1;
        p = bar ? bar + 1 : NULL;
    }
    return 0;
}

static int set_value(const char *prog, bl_cli_option *o, const char *v) {
    switch (o->type) {
    case BL_OPT_FLAG:
        *(int *)o->dest = 1;
        return 0;
    case BL_OPT_STRING:
        /* every string option names a file, a folder, a model or a value: "" is always a mistake
         * (an unset shell variable), and would otherwise surface later as a puzzling message */
        if (!*v) { bl_cli_error(prog, "--%s: empty value", o->name); return BL_EXIT_USAGE; }
        *(const char **)o->dest = v;
        return 0;
    case BL_OPT_CHOICE:
        if (!choice_ok(o->choices, v)) {
            bl_cli_error(prog, "--%s: '%s' is not one of %s", o->name, v, o->choices);
            return BL_EXIT_USAGE;
        }
        *(const char **)o->dest = v;
        return 0;
    case BL_OPT_INT: {
        long x = 0;
        int r = bl_cli_integer(v, &x);
        if (r) {
            bl_cli_error(prog, "--%s: '%s' %s", o->name, v, r == -2 ? "is out of range" : "is not an integer");
            return BL_EXIT_USAGE;
        }
        *(long *)o->dest = x;
        return 0;
    }
    case BL_OPT_SIZE: {
        long x = 0;
        int r = is_digit(*v) ? bl_cli_integer(v, &x) : -1;
        if (r) {
            bl_cli_error(prog, "--%s: '%s' %s", o->name, v, r == -2 ? "is out of range" : "is not a non-negative integer");
            return BL_EXIT_USAGE;
        }
        *(size_t *)o->dest = (size_t)x;
        return 0;
    }
    case BL_OPT_DOUBLE: {
        double x = 0;
        int r = bl_cli_number(v, &x);
        if (r) {
            bl_cli_error(prog, "--%s: '%s' %s", o->name, v, r == -2 ? "is out of range" : "is not a finite decimal number");
            return BL_EXIT_USAGE;
        }
        *(double *)o->dest = x;
        return 0;
    }
    case BL_OPT_LIST: {
        bl_cli_list *l = o->dest;
        if (l->n == BL_CLI_LIST_MAX) { bl_cli_error(prog, "--%s: given more than %d times", o->name, BL_CLI_LIST_MAX); return BL_EXIT_USAGE; }
        l->items[l->n++] = v;
        return 0;
    }
    }
    return BL_EXIT_USAGE;
}

int bl_cli_parse(const char *prog, const char *usage, int argc, char **argv, int first,
                 bl_cli_option *opts, size_t nopts, const char **pos, size_t *npos) {
    size_t cap = npos ? *npos : 0, np = 0;
    int only_pos = 0;
    for (int i = first; i < argc; i++) {
        const char *a = argv[i];
        if (only_pos || a[0] != '-' || a[1] == '\0') {
            if (!pos || np >= cap) { bl_cli_error(prog, "unexpected argument '%s' (try --help)", a); return BL_EXIT_USAGE; }
            pos[np++] = a;
            continue;
        }
        if (strcmp(a, "--") == 0) { only_pos = 1; continue; }
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            bl_cli_print_help(prog, usage, opts, nopts);
            return -1;
        }
        if (a[1] != '-') {
            char hint[400];
            const char *cands[128];
            size_t nc = 0;
            for (size_t k = 0; k < nopts && nc < 127; k++) cands[nc++] = opts[k].name;
            bl_suggest(a + 1, cands, nc, "--", hint, sizeof hint);
            bl_cli_error(prog, "unknown option '%s'%s (options are long: --name; try --help)", a, hint);
            return BL_EXIT_USAGE;
        }
        const char *name = a + 2, *eq = strchr(name, '=');
        size_t nl = eq ? (size_t)(eq - name) : strlen(name);
        bl_cli_option *o = NULL;
        for (size_t k = 0; k < nopts; k++)
            if (strlen(opts[k].name) == nl && strncmp(opts[k].name, name, nl) == 0) { o = &opts[k]; break; }
        if (!o) {
            char word[128], hint[400];
            snprintf(word, sizeof word, "%.*s", (int)(nl < sizeof word ? nl : sizeof word - 1), name);
            const char *cands[128];
            size_t nc = 0;
            for (size_t k = 0; k < nopts && nc < 127; k++) cands[nc++] = opts[k].name;
            cands[nc++] = "help";
            bl_suggest(word, cands, nc, "--", hint, sizeof hint);
            bl_cli_error(prog, "unknown option '--%.*s'%s (try --help)", (int)nl, name, hint);
            return BL_EXIT_USAGE;
        }
        if (o->seen && o->type != BL_OPT_LIST) { bl_cli_error(prog, "--%s given twice", o->name); return BL_EXIT_USAGE; }
        o->seen = 1;
        const char *v = NULL;
        if (o->type == BL_OPT_FLAG) {
            if (eq) { bl_cli_error(prog, "--%s takes no value", o->name); return BL_EXIT_USAGE; }
        } else if (eq) {
            v = eq + 1;
        } else {
            if (i + 1 >= argc) { bl_cli_error(prog, "--%s needs a value (%s)", o->name, o->metavar ? o->metavar : "VALUE"); return BL_EXIT_USAGE; }
            /* "--out --quiet" is a forgotten value far more often than a file named --quiet: refuse
             * a value that looks like an option ("--x", "--"); --name=VALUE still gives any value */
            const char *nx = argv[i + 1];
            if (nx[0] == '-' && nx[1] == '-') {
                bl_cli_error(prog, "--%s needs a value (%s), not the option '%s'; a value that begins with '--' is "
                             "given as --%s=%s", o->name, o->metavar ? o->metavar : "VALUE", nx, o->name, nx);
                return BL_EXIT_USAGE;
            }
            v = argv[++i];
        }
        int rc = set_value(prog, o, v);
        if (rc) return rc;
    }
    for (size_t k = 0; k < nopts; k++)
        if (opts[k].required && !opts[k].seen) {
            bl_cli_error(prog, "--%s is required (try --help)", opts[k].name);
            return BL_EXIT_USAGE;
        }
    if (npos) *npos = np;
    return 0;
}
