/* cli_util.c — option parsing, --help generation and error printing for the command-line programs.
 * Not here: program logic. */
#include "cli/cli_util.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

char bl_cli_delim(const char *value) {
    if (!value) return 0;
    return strcmp(value, "comma") == 0 ? ',' : '\t';
}

void bl_cli_print_help(const char *prog, const char *usage, const bl_cli_option *opts, size_t nopts) {
    printf("usage: %s\n\noptions:\n", usage ? usage : prog);
    for (size_t i = 0; i < nopts; i++) {
        const bl_cli_option *o = &opts[i];
        char left[96];
        if (o->type == BL_OPT_FLAG) snprintf(left, sizeof left, "--%s", o->name);
        else if (o->type == BL_OPT_CHOICE) snprintf(left, sizeof left, "--%s %s", o->name, o->choices);
        else snprintf(left, sizeof left, "--%s %s", o->name, o->metavar ? o->metavar : "VALUE");
        printf("  %-28s %s", left, o->help ? o->help : "");
        if (o->required) printf(" (required)");
        else if (o->def) printf(" (default: %s)", o->def);
        if (o->type == BL_OPT_LIST) printf(" (repeatable)");
        putchar('\n');
    }
    printf("  %-28s %s\n", "--help", "show this help and exit");
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
    char *end;
    switch (o->type) {
    case BL_OPT_FLAG:
        *(int *)o->dest = 1;
        return 0;
    case BL_OPT_STRING:
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
        errno = 0;
        long x = strtol(v, &end, 10);
        if (!*v || *end || errno) { bl_cli_error(prog, "--%s: '%s' is not an integer", o->name, v); return BL_EXIT_USAGE; }
        *(long *)o->dest = x;
        return 0;
    }
    case BL_OPT_SIZE: {
        errno = 0;
        if (!(*v >= '0' && *v <= '9')) { bl_cli_error(prog, "--%s: '%s' is not a non-negative integer", o->name, v); return BL_EXIT_USAGE; }
        unsigned long long x = strtoull(v, &end, 10);
        if (*end || errno || x > (unsigned long long)SIZE_MAX) {
            bl_cli_error(prog, "--%s: '%s' is not a non-negative integer", o->name, v);
            return BL_EXIT_USAGE;
        }
        *(size_t *)o->dest = (size_t)x;
        return 0;
    }
    case BL_OPT_DOUBLE: {
        errno = 0;
        double x = strtod(v, &end);
        if (!*v || *end || errno || !isfinite(x)) { bl_cli_error(prog, "--%s: '%s' is not a finite number", o->name, v); return BL_EXIT_USAGE; }
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
        if (a[1] != '-') { bl_cli_error(prog, "unknown option '%s' (options are long: --name; try --help)", a); return BL_EXIT_USAGE; }
        const char *name = a + 2, *eq = strchr(name, '=');
        size_t nl = eq ? (size_t)(eq - name) : strlen(name);
        bl_cli_option *o = NULL;
        for (size_t k = 0; k < nopts; k++)
            if (strlen(opts[k].name) == nl && strncmp(opts[k].name, name, nl) == 0) { o = &opts[k]; break; }
        if (!o) { bl_cli_error(prog, "unknown option '--%.*s' (try --help)", (int)nl, name); return BL_EXIT_USAGE; }
        if (o->seen && o->type != BL_OPT_LIST) { bl_cli_error(prog, "--%s given twice", o->name); return BL_EXIT_USAGE; }
        o->seen = 1;
        const char *v = NULL;
        if (o->type == BL_OPT_FLAG) {
            if (eq) { bl_cli_error(prog, "--%s takes no value", o->name); return BL_EXIT_USAGE; }
        } else if (eq) {
            v = eq + 1;
        } else {
            if (i + 1 >= argc) { bl_cli_error(prog, "--%s needs a value (%s)", o->name, o->metavar ? o->metavar : "VALUE"); return BL_EXIT_USAGE; }
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
