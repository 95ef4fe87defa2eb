/* schema.c — parser for the schema text format described in schema.h and datasets/README.md.
 * Works line by line on an in-memory copy; every error names schema:line:column.
 * Not here: matching column names to a data file (dataset.c does that). */
#include "data/schema.h"
#include "common/utf8.h"
#include "common/error.h"
#include "common/str.h"
#include "common/suggest.h"
#include "common/file.h"
#include "encode/encode.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Bellamy's property names (the authors' preparation.py); models trained on different data sets
 * share them, so a typo must fail loudly instead of creating a new property. */
static const char *const known_props[] = {
    "machine_type", "job_type", "job_args", "data_size_MB", "data_characteristics",
    "environment", "memory", "slots",
};

int bl_schema_known_property(const char *name) {
    if (!name) return 0;
    if (strncmp(name, "x_", 2) == 0 && name[2] != '\0') return 1;
    for (size_t i = 0; i < sizeof known_props / sizeof known_props[0]; i++)
        if (strcmp(name, known_props[i]) == 0) return 1;
    return 0;
}

const char *bl_schema_suggest_property(const char *name, char *buf, size_t cap) {
    return bl_suggest(name ? name : "", known_props, sizeof known_props / sizeof known_props[0], "", buf, cap);
}

const char *bl_schema_known_list(void) {
    return "machine_type, job_type, job_args, data_size_MB, data_characteristics, environment, "
           "memory, slots, or x_ followed by a name of your own (x_cluster)";
}

/* The runtime units a schema may name; runtimes are kept in seconds. */
static const struct runtime_unit {
    const char *name, *words;
    double      to_s;
} runtime_units[] = {
    { "s", "seconds", 1.0 }, { "ms", "milliseconds", 1e-3 }, { "min", "minutes", 60.0 }, { "h", "hours", 3600.0 },
};

#define UNITS_LIST "s, ms, min or h (seconds, milliseconds, minutes, hours)"

#define MAX_TOK 256

typedef struct tok {
    char  *s;      /* unquoted, NUL-terminated, points into the line copy */
    size_t col;    /* 1-based editor column */
} tok;

typedef struct parser {
    const char *name;
    size_t      line;
    bl_error   *err;
} parser;

/* Splits line (modified in place) into tokens; quoted tokens lose their quotes and escapes. */
static bl_status tokenize(parser *ps, char *line, tok *toks, size_t *ntok) {
    size_t n = 0;
    char *p = line;
    for (;;) {
        while (*p == ' ' || *p == '\t') p++;
        if (*p == '\0' || *p == '#') break;
        if (n == MAX_TOK)
            return bl_seterr(ps->err, BL_EFORMAT, "%s:%zu:%zu: too many tokens on one line", ps->name,
                             ps->line, bl_utf8_chars(line, (size_t)(p - line)) + 1);
        size_t col = bl_utf8_chars(line, (size_t)(p - line)) + 1;
        if (*p == '"') {
            char *w = p, *r = p + 1;
            for (;;) {
                if (*r == '\0')
                    return bl_seterr(ps->err, BL_EFORMAT, "%s:%zu:%zu: unterminated quote", ps->name,
                                     ps->line, col);
                if (*r == '"') break;
                if (*r == '\\' && (r[1] == '"' || r[1] == '\\')) r++;
                *w++ = *r++;
            }
            char *after = r + 1;
            if (*after != '\0' && *after != ' ' && *after != '\t' && *after != '#')
                return bl_seterr(ps->err, BL_EFORMAT, "%s:%zu:%zu: text right after a closing quote",
                                 ps->name, ps->line, bl_utf8_chars(line, (size_t)(after - line)) + 1);
            *w = '\0';
            toks[n].s = p;
            toks[n].col = col;
            n++;
            p = after;
        } else {
            char *start = p;
            while (*p && *p != ' ' && *p != '\t' && *p != '#') p++;
            char end = *p;
            *p = '\0';
            toks[n].s = start;
            toks[n].col = col;
            n++;
            if (end == '#') break;
            if (end) p++;
        }
    }
    *ntok = n;
    return BL_OK;
}

static bl_status ref_set(parser *ps, bl_schema_ref *r, const tok *t) {
    r->name = bl_strdup(t->s);
    r->line = ps->line;
    r->col = t->col;
    if (!r->name) return bl_seterr(ps->err, BL_ENOMEM, "%s: out of memory", ps->name);
    if (r->name[0] == '\0')
        return bl_seterr(ps->err, BL_EFORMAT, "%s:%zu:%zu: empty column name", ps->name, ps->line, t->col);
    return BL_OK;
}

static bl_status err_at(parser *ps, const tok *t, size_t fallback_col, const char *msg, const char *what) {
    return bl_seterr(ps->err, BL_EFORMAT, "%s:%zu:%zu: %s%s%.100s%s", ps->name, ps->line,
                     t ? t->col : fallback_col, msg, what ? " '" : "", what ? what : "", what ? "'" : "");
}

static bl_status parse_property(parser *ps, bl_schema *s, tok *t, size_t n, size_t eol_col) {
    /* property NAME essential|optional number|text SOURCE ARGS... */
    if (n < 2) return err_at(ps, NULL, eol_col, "property: missing name", NULL);
    if (!bl_schema_known_property(t[1].s)) {
        char mean[400];
        bl_schema_suggest_property(t[1].s, mean, sizeof mean);
        return bl_seterr(ps->err, BL_EFORMAT, "%s:%zu:%zu: unknown property '%.100s'%s (known: %s)", ps->name,
                         ps->line, t[1].col, t[1].s, mean, bl_schema_known_list());
    }
    for (size_t i = 0; i < s->n_props; i++)
        if (strcmp(s->props[i].name, t[1].s) == 0)
            return bl_seterr(ps->err, BL_EFORMAT, "%s:%zu:%zu: property '%.100s' declared twice (first on "
                             "line %zu)", ps->name, ps->line, t[1].col, t[1].s, s->props[i].line);
    if (n < 3) return err_at(ps, NULL, eol_col, "property: missing essential|optional", NULL);
    int essential;
    if (strcmp(t[2].s, "essential") == 0) essential = 1;
    else if (strcmp(t[2].s, "optional") == 0) essential = 0;
    else return err_at(ps, &t[2], 0, "expected essential or optional, found", t[2].s);
    if (n < 4) return err_at(ps, NULL, eol_col, "property: missing number|text", NULL);
    bl_prop_kind kind;
    if (strcmp(t[3].s, "number") == 0) kind = BL_PROP_NUMBER;
    else if (strcmp(t[3].s, "text") == 0) kind = BL_PROP_TEXT;
    else return err_at(ps, &t[3], 0, "expected number or text, found", t[3].s);
    if (n < 5) return err_at(ps, NULL, eol_col, "property: missing source (column, join, template, const or per_machine)", NULL);

    bl_schema_prop *np = realloc(s->props, (s->n_props + 1) * sizeof *np);
    if (!np) return bl_seterr(ps->err, BL_ENOMEM, "%s: out of memory", ps->name);
    s->props = np;
    bl_schema_prop *p = &s->props[s->n_props++];
    memset(p, 0, sizeof *p);
    p->essential = essential;
    p->kind = kind;
    p->line = ps->line;
    p->col = t[1].col;
    p->name = bl_strdup(t[1].s);
    if (!p->name) return bl_seterr(ps->err, BL_ENOMEM, "%s: out of memory", ps->name);

    const char *src = t[4].s;
    size_t nargs = n - 5;
    if (strcmp(src, "column") == 0 || strcmp(src, "join") == 0) {
        int join = src[0] == 'j';
        p->source = join ? BL_SRC_JOIN : BL_SRC_COLUMN;
        if (nargs == 0) return err_at(ps, NULL, eol_col, join ? "join: no columns named" : "column: no column named", NULL);
        if (!join && nargs > 1) return err_at(ps, &t[6], 0, "column takes one column name; extra token", t[6].s);
        p->cols = calloc(nargs, sizeof *p->cols);
        if (!p->cols) return bl_seterr(ps->err, BL_ENOMEM, "%s: out of memory", ps->name);
        p->n_cols = nargs;
        for (size_t i = 0; i < nargs; i++) {
            bl_status st = ref_set(ps, &p->cols[i], &t[5 + i]);
            if (st != BL_OK) return st;
        }
    } else if (strcmp(src, "const") == 0 || strcmp(src, "per_machine") == 0) {
        int pm = src[0] == 'p';
        p->source = pm ? BL_SRC_PER_MACHINE : BL_SRC_CONST;
        if (nargs == 0) return err_at(ps, NULL, eol_col, pm ? "per_machine: missing value" : "const: missing value", NULL);
        if (nargs > 1) return err_at(ps, &t[6], 0, "one value expected (quote text with spaces); extra token", t[6].s);
        p->value = bl_strdup(t[5].s);
        if (!p->value) return bl_seterr(ps->err, BL_ENOMEM, "%s: out of memory", ps->name);
        size_t bad;
        if (!bl_utf8_valid(p->value, strlen(p->value), &bad))
            return err_at(ps, &t[5], 0, "invalid UTF-8 in value", NULL);
        if (pm && kind != BL_PROP_NUMBER)
            return err_at(ps, &t[4], 0, "per_machine needs a number property", NULL);
        if (kind == BL_PROP_NUMBER) {
            /* Checked here so a bad constant names the schema line, not every data row. */
            bl_encode_settings es;
            bl_encode_settings_default(&es);
            es.vec_len = BL_ENC_VEC_LEN_MAX;   /* range is checked against the real settings later */
            uint64_t v;
            bl_error e2;
            if (bl_parse_natural(p->value, &es, &v, &e2) != BL_OK)
                return bl_seterr(ps->err, BL_EFORMAT, "%s:%zu:%zu: %s", ps->name, ps->line, t[5].col, e2.message);
            p->per_machine = (double)v;
        }
    } else if (strcmp(src, "template") == 0) {
        p->source = BL_SRC_TEMPLATE;
        if (nargs == 0) return err_at(ps, NULL, eol_col, "template: missing text", NULL);
        if (nargs > 1) return err_at(ps, &t[6], 0, "template takes one (quoted) text; extra token", t[6].s);
        p->value = bl_strdup(t[5].s);
        if (!p->value) return bl_seterr(ps->err, BL_ENOMEM, "%s: out of memory", ps->name);
        /* Collect the placeholders; their column is reported at the template token. */
        size_t n_ph = 0;
        for (const char *q = p->value; *q; q++) n_ph += *q == '<';
        p->cols = calloc(n_ph ? n_ph : 1, sizeof *p->cols);
        if (!p->cols) return bl_seterr(ps->err, BL_ENOMEM, "%s: out of memory", ps->name);
        for (const char *q = p->value; *q; q++) {
            if (*q == '>') return err_at(ps, &t[5], 0, "template: '>' without '<'", NULL);
            if (*q != '<') continue;
            const char *e = strchr(q + 1, '>');
            const char *lt = strchr(q + 1, '<');
            if (!e || (lt && lt < e)) return err_at(ps, &t[5], 0, "template: '<' without a closing '>'", NULL);
            if (e == q + 1) return err_at(ps, &t[5], 0, "template: empty placeholder <>", NULL);
            bl_schema_ref *r = &p->cols[p->n_cols++];
            r->name = malloc((size_t)(e - q));
            if (!r->name) return bl_seterr(ps->err, BL_ENOMEM, "%s: out of memory", ps->name);
            memcpy(r->name, q + 1, (size_t)(e - q - 1));
            r->name[e - q - 1] = '\0';
            r->line = ps->line;
            r->col = t[5].col;
            q = e;
        }
    } else {
        return err_at(ps, &t[4], 0, "unknown source (expected column, join, template, const or per_machine):", src);
    }
    return BL_OK;
}

static bl_status parse_line(parser *ps, bl_schema *s, char *line, int *seen_scale, int *seen_runtime,
                            int *seen_any) {
    tok t[MAX_TOK];
    size_t n = 0;
    /* Where "missing argument" errors point: after the last non-blank before any comment. Taken
     * before tokenize, which cuts the line into pieces. */
    size_t end = 0;
    for (size_t i = 0, q = 0; line[i]; i++) {
        if (line[i] == '"') q = !q;
        if (line[i] == '#' && !q) break;
        if (line[i] != ' ' && line[i] != '\t') end = i + 1;
    }
    size_t eol_col = bl_utf8_chars(line, end) + 1;
    bl_status st = tokenize(ps, line, t, &n);
    if (st != BL_OK || n == 0) return st;
    const char *d = t[0].s;
    int first = !*seen_any;
    *seen_any = 1;
    if (strcmp(d, "bellamy-schema") == 0) {
        if (!first) return err_at(ps, &t[0], 0, "bellamy-schema must be the first line", NULL);
        if (n != 2) return err_at(ps, n > 2 ? &t[2] : NULL, eol_col, "bellamy-schema takes one version number", NULL);
        if (strcmp(t[1].s, "1") != 0)
            return bl_seterr(ps->err, BL_EVERSION, "%s:%zu:%zu: schema format version '%.20s' is not supported "
                             "(this build reads version 1)", ps->name, ps->line, t[1].col, t[1].s);
        return BL_OK;
    }
    if (strcmp(d, "scale_out") == 0) {
        if (*seen_scale) return err_at(ps, &t[0], 0, "scale_out given twice", NULL);
        if (n != 2) return err_at(ps, n > 2 ? &t[2] : NULL, eol_col, "scale_out takes one column name", NULL);
        *seen_scale = 1;
        return ref_set(ps, &s->scale_out, &t[1]);
    }
    if (strcmp(d, "runtime") == 0) {
        if (*seen_runtime) return err_at(ps, &t[0], 0, "runtime given twice", NULL);
        if (n < 3) return err_at(ps, NULL, eol_col, "runtime takes a column name and a unit: " UNITS_LIST, NULL);
        if (n > 3) return err_at(ps, &t[3], 0, "runtime: extra token", t[3].s);
        const struct runtime_unit *u = NULL;
        for (size_t i = 0; i < sizeof runtime_units / sizeof runtime_units[0] && !u; i++)
            if (strcmp(t[2].s, runtime_units[i].name) == 0) u = &runtime_units[i];
        if (!u) return err_at(ps, &t[2], 0, "runtime unit must be " UNITS_LIST ", found", t[2].s);
        s->runtime_to_s = u->to_s;
        s->runtime_unit = u->name;
        s->runtime_unit_words = u->words;
        *seen_runtime = 1;
        return ref_set(ps, &s->runtime, &t[1]);
    }
    if (strcmp(d, "property") == 0) return parse_property(ps, s, t, n, eol_col);
    if (strcmp(d, "cluster_totals") == 0) {
        if (n < 2) return err_at(ps, NULL, eol_col, "cluster_totals: no columns named", NULL);
        bl_schema_ref *nt = realloc(s->totals, (s->n_totals + n - 1) * sizeof *nt);
        if (!nt) return bl_seterr(ps->err, BL_ENOMEM, "%s: out of memory", ps->name);
        s->totals = nt;
        for (size_t i = 1; i < n; i++) {
            memset(&s->totals[s->n_totals], 0, sizeof s->totals[0]);
            s->n_totals++;
            st = ref_set(ps, &s->totals[s->n_totals - 1], &t[i]);
            if (st != BL_OK) return st;
        }
        return BL_OK;
    }
    return err_at(ps, &t[0], 0, "unknown directive (expected scale_out, runtime, property or cluster_totals):", d);
}

/* What the columns are used for, checked once the whole schema is read (a directive may name a
 * column before the line that gives it its role): the scale-out and the runtime are two different
 * columns that no property reads, and every cluster_totals column is read by number properties
 * only (and by at least one: otherwise the line does nothing, which is most likely a typo). */
static bl_status check_columns(const bl_schema *s, bl_error *err) {
    const bl_schema_ref *so = &s->scale_out, *rt = &s->runtime;
    if (strcmp(so->name, rt->name) == 0) {
        const bl_schema_ref *later = so->line > rt->line ? so : rt, *first = later == so ? rt : so;
        return bl_seterr(err, BL_EFORMAT, "%s:%zu:%zu: %s reads column '%.100s', which %s already reads (line %zu): "
                         "the scale-out and the runtime must be different columns", s->name, later->line, later->col,
                         later == so ? "scale_out" : "runtime", later->name, later == so ? "runtime" : "scale_out",
                         first->line);
    }
    for (size_t i = 0; i < s->n_props; i++) {
        const bl_schema_prop *p = &s->props[i];
        for (size_t k = 0; k < p->n_cols; k++) {
            const bl_schema_ref *c = &p->cols[k];
            if (strcmp(c->name, so->name) == 0)
                return bl_seterr(err, BL_EFORMAT, "%s:%zu:%zu: property '%.100s' reads the scale-out column '%.100s' "
                                 "(scale_out, line %zu): the scale-out is the model's input already and not part of a "
                                 "context; for a value that grows with it use per_machine", s->name, c->line, c->col,
                                 p->name, c->name, so->line);
            if (strcmp(c->name, rt->name) == 0)
                return bl_seterr(err, BL_EFORMAT, "%s:%zu:%zu: property '%.100s' reads the runtime column '%.100s' "
                                 "(runtime, line %zu): the runtime is what the model predicts, not a property of the "
                                 "job", s->name, c->line, c->col, p->name, c->name, rt->line);
        }
    }
    for (size_t j = 0; j < s->n_totals; j++) {
        const bl_schema_ref *t = &s->totals[j];
        for (size_t q = 0; q < j; q++)
            if (strcmp(s->totals[q].name, t->name) == 0)
                return bl_seterr(err, BL_EFORMAT, "%s:%zu:%zu: cluster_totals: column '%.100s' is listed twice (first "
                                 "on line %zu)", s->name, t->line, t->col, t->name, s->totals[q].line);
        int read = 0;
        for (size_t i = 0; i < s->n_props; i++) {
            const bl_schema_prop *p = &s->props[i];
            for (size_t k = 0; k < p->n_cols; k++) {
                if (strcmp(p->cols[k].name, t->name) != 0) continue;
                if (p->kind != BL_PROP_NUMBER)
                    return bl_seterr(err, BL_EFORMAT, "%s:%zu:%zu: cluster_totals: column '%.100s' is read by the text "
                                     "property '%.100s' (line %zu); a cluster total grows with the scale-out, so it "
                                     "must be a number property", s->name, t->line, t->col, t->name, p->name, p->line);
                read = 1;
            }
        }
        if (!read)
            return bl_seterr(err, BL_EFORMAT, "%s:%zu:%zu: cluster_totals: no property reads column '%.100s' (a "
                             "cluster_totals line marks the number properties that read its columns)", s->name,
                             t->line, t->col, t->name);
    }
    return BL_OK;
}

static bl_status schema_parse(const char *name, const char *text, size_t len, int strict, bl_schema **out,
                              bl_error *err) {
    BL_CHECK_ARG(name && out && (text || len == 0), err, "schema: NULL argument");
    *out = NULL;
    bl_status st = BL_OK;
    char *copy = NULL;
    bl_schema *s = calloc(1, sizeof *s);
    if (!s || !(s->name = bl_strdup(name))) { st = bl_seterr(err, BL_ENOMEM, "schema: out of memory"); goto fail; }
    parser ps = { name, 0, err };
    /* A leading byte-order mark is skipped, as the data reader does: editors on some systems add
     * one, and it would otherwise glue itself to the first directive. */
    if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) {
        text += 3;
        len -= 3;
    }
    size_t bad;
    if (!bl_utf8_valid(text, len, &bad)) {
        /* Name the line and column of the first bad byte. */
        size_t line = 1, ls = 0;
        for (size_t i = 0; i < bad; i++)
            if (text[i] == '\n') { line++; ls = i + 1; }
        st = bl_seterr(err, BL_EFORMAT, "%s:%zu:%zu: %s (byte 0x%02x)", name, line,
                       bl_utf8_chars(text + ls, bad - ls) + 1,
                       text[bad] == 0 ? "NUL byte in text" : "invalid UTF-8", (unsigned char)text[bad]);
        goto fail;
    }
    copy = malloc(len + 1);
    if (!copy) { st = bl_seterr(err, BL_ENOMEM, "schema: out of memory"); goto fail; }
    memcpy(copy, text, len);
    copy[len] = '\0';
    int seen_scale = 0, seen_runtime = 0, seen_any = 0;
    char *p = copy;
    while (*p || p == copy) {
        ps.line++;
        char *nl = strchr(p, '\n');
        if (nl) *nl = '\0';
        size_t ll = strlen(p);
        if (ll && p[ll - 1] == '\r') p[ll - 1] = '\0';
        st = parse_line(&ps, s, p, &seen_scale, &seen_runtime, &seen_any);
        if (st != BL_OK) goto fail;
        if (!nl) break;
        p = nl + 1;
    }
    if (!seen_scale) { st = bl_seterr(err, BL_EFORMAT, "%s:%zu:1: no scale_out line", name, ps.line); goto fail; }
    if (!seen_runtime) { st = bl_seterr(err, BL_EFORMAT, "%s:%zu:1: no runtime line", name, ps.line); goto fail; }
    size_t n_ess = 0;
    for (size_t i = 0; i < s->n_props; i++) n_ess += s->props[i].essential;
    if (n_ess == 0) {
        st = bl_seterr(err, BL_EFORMAT, "%s:%zu:1: no essential property (a context needs at least one)", name, ps.line);
        goto fail;
    }
    if (strict && (st = check_columns(s, err)) != BL_OK) goto fail;
    free(copy);
    *out = s;
    return BL_OK;
fail:
    free(copy);
    bl_schema_free(s);
    return st;
}

bl_status bl_schema_parse(const char *name, const char *text, size_t len, bl_schema **out, bl_error *err) {
    return schema_parse(name, text, len, 1, out, err);
}

bl_status bl_schema_parse_stored(const char *name, const char *text, size_t len, bl_schema **out, bl_error *err) {
    return schema_parse(name, text, len, 0, out, err);
}

int bl_schema_prop_is_total(const bl_schema *s, size_t i) {
    if (!s || i >= s->n_props) return 0;
    const bl_schema_prop *p = &s->props[i];
    if (p->source == BL_SRC_PER_MACHINE) return 1;
    for (size_t k = 0; k < p->n_cols; k++)
        for (size_t j = 0; j < s->n_totals; j++)
            if (strcmp(p->cols[k].name, s->totals[j].name) == 0) return 1;
    return 0;
}

static const char *kind_words(bl_prop_kind k) { return k == BL_PROP_NUMBER ? "a number" : "text"; }

bl_status bl_schema_check_props(const bl_schema *s, const bl_prop_spec *want, size_t n, const char *what,
                                bl_error *err) {
    BL_CHECK_ARG(s && (want || n == 0) && what, err, "schema check: NULL argument");
    for (size_t i = 0; i < s->n_props; i++) {
        const bl_schema_prop *p = &s->props[i];
        const bl_prop_spec *w = NULL;
        for (size_t k = 0; k < n && !w; k++)
            if (strcmp(want[k].name, p->name) == 0) w = &want[k];
        if (!w) {
            /* The list of what is wanted, so the user sees what to write instead. */
            char list[300];
            size_t len = 0;
            list[0] = '\0';
            for (size_t k = 0; k < n && len + 1 < sizeof list; k++) {
                int c = snprintf(list + len, sizeof list - len, "%s%s", k ? ", " : "", want[k].name);
                if (c < 0) break;
                len += (size_t)c;
            }
            char mean[400] = "";
            const char **cands = malloc((n ? n : 1) * sizeof *cands);
            if (cands) {
                for (size_t k = 0; k < n; k++) cands[k] = want[k].name;
                bl_suggest(p->name, cands, n, "", mean, sizeof mean);
                free(cands);
            }
            return bl_seterr(err, BL_EFORMAT, "%s:%zu:%zu: property '%.100s' is not a property of %s%s (it has: %s); "
                             "the runs must be described by the properties it was trained with", s->name, p->line,
                             p->col, p->name, what, mean, list);
        }
        if (w->essential != p->essential)
            return bl_seterr(err, BL_EFORMAT, "%s:%zu:%zu: property '%.100s' is %s here but %s in %s", s->name, p->line,
                             p->col, p->name, p->essential ? "essential" : "optional",
                             w->essential ? "essential" : "optional", what);
        if (w->kind != p->kind)
            return bl_seterr(err, BL_EFORMAT, "%s:%zu:%zu: property '%.100s' is %s here but %s in %s", s->name, p->line,
                             p->col, p->name, kind_words(p->kind), kind_words(w->kind), what);
        int total = bl_schema_prop_is_total(s, i);
        if (w->cluster_total >= 0 && w->cluster_total != total)
            return bl_seterr(err, BL_EFORMAT, "%s:%zu:%zu: property '%.100s' is %s here but %s in %s (%s)", s->name,
                             p->line, p->col, p->name, total ? "a cluster total" : "not a cluster total",
                             total ? "not one" : "one", what,
                             total ? "per_machine or cluster_totals makes it one" : "add its column to cluster_totals "
                             "or use per_machine");
    }
    for (size_t k = 0; k < n; k++) {
        int found = 0;
        for (size_t i = 0; i < s->n_props && !found; i++) found = strcmp(s->props[i].name, want[k].name) == 0;
        if (!found)
            return bl_seterr(err, BL_EFORMAT, "%s: no property '%.100s': %s has it (%s %s), so the runs must give it too",
                             s->name, want[k].name, what, want[k].essential ? "essential" : "optional",
                             want[k].kind == BL_PROP_NUMBER ? "number" : "text");
    }
    return BL_OK;
}

bl_status bl_schema_load(const char *path, bl_schema **out, bl_error *err) {
    BL_CHECK_ARG(path && out, err, "schema: NULL argument");
    *out = NULL;
    char *buf;
    size_t len;
    bl_status st = bl_read_file(path, (size_t)1 << 24, &buf, &len, err);
    if (st) return st;
    st = bl_schema_parse(path, buf, len, out, err);
    free(buf);
    return st;
}

static void ref_free(bl_schema_ref *r) { if (r) free(r->name); }

void bl_schema_free(bl_schema *s) {
    if (!s) return;
    for (size_t i = 0; i < s->n_props; i++) {
        bl_schema_prop *p = &s->props[i];
        for (size_t j = 0; j < p->n_cols; j++) ref_free(&p->cols[j]);
        free(p->cols);
        free(p->value);
        free(p->name);
    }
    free(s->props);
    for (size_t i = 0; i < s->n_totals; i++) ref_free(&s->totals[i]);
    free(s->totals);
    ref_free(&s->scale_out);
    ref_free(&s->runtime);
    free(s->name);
    free(s);
}
