/* gen_userdata.c — the users' data-set generator (what it draws: gen_userdata.h).
 * Two steps: draw a spec (columns, properties, contexts with their values and scale-outs), then write
 * it out as text, spoiling one thing when a flaw is asked for. Every value is drawn so that the
 * loader's rules (datasets/README.md) hold for a valid set; the counts the loader must find are
 * computed alongside. Not here: anything that reads the files back. */
#include "gen_userdata.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/rng.h"
#include "data/schema.h"

#define MAX_CTX 31                           /* 30 pre-training contexts + the runs' own */
#define MAX_COLS 32
#define MAX_SX 10
#define VAL_CAP 160
#define NUM_LIMIT ((uint64_t)1 << 39)        /* the binarizer keeps 39 bits (vec_len 40) */
#define SX_MAX 64                            /* scale-outs drawn from 1..64 */
#define TOTAL_PM_MAX ((NUM_LIMIT - 1) / SX_MAX) /* a per-machine share whose total stays below 2^39 */
#define NUL_MARK '\x01'                      /* written as a NUL byte (fields are C strings) */

typedef struct gcol {
    char name[64];
    int  number;     /* holds natural numbers */
    int  total;      /* listed in cluster_totals: the file holds the per-machine share × the scale-out */
    int  extra;      /* read by no property */
    int  varies;     /* a new value on every row */
} gcol;

typedef struct gprop {
    char     name[64];
    int      essential, number, source, total, varies;
    int      cols[2], n_cols;
    char     tmpl[VAL_CAP];    /* template text with <column> placeholders */
    char     konst[VAL_CAP];   /* const value as written */
    uint64_t pm;               /* per_machine value */
} gprop;

typedef struct gctx {
    char     text[MAX_COLS][VAL_CAP];   /* per text column */
    uint64_t num[MAX_COLS];             /* per number column; a totals column's per-machine share */
    size_t   n_sx;
    int      sx[MAX_SX];
    double   mag, shape[4], noise;
} gctx;

typedef struct gen {
    bl_rng   r;
    gen_opts o;
    gen_flaw flaw;
    char     delim, runs_delim;
    int      ms;                   /* runtimes written in ms */
    size_t   n_cols;
    gcol     cols[MAX_COLS];
    int      c_scale, c_run;
    size_t   n_props;
    gprop    props[GEN_PROPS_MAX];
    size_t   n_ctx;                /* pre-training contexts */
    gctx     ctx[MAX_CTX];
    size_t   run_ctx;              /* the runs' context: n_ctx for a new one, else a pre-training one */
    size_t   reps, n_runs;
    int      bom, crlf, blanks, pad, shuffle;
    int      quote;                /* some fields quoted (RFC 4180), as spreadsheets and pandas write them */
    bl_rng   qr;                   /* which ones: a stream of its own, so the other draws stay as they were */
    size_t   serial;               /* counter for values that differ on every row */
    int      flaw_prop;            /* the property a flaw needs, -1 when none */
} gen;

/* ---- drawing --------------------------------------------------------------------------------- */

static uint64_t below(gen *g, uint64_t n) { return bl_rng_int(&g->r, n); }
static double unif(gen *g) { return bl_rng_uniform(&g->r); }
static int chance(gen *g, double p) { return unif(g) < p; }

/* Text pieces: ASCII job words, non-ASCII in several scripts (the hasher drops it all, so some values
 * hash alike), characters that matter to parsers elsewhere ('#', '"', '\'), and digits. */
static const char *const WORDS[] = {
    "r5.xlarge", "m4.2xlarge", "q17", "etl", "spark-sql", "hadoop 3.3", "prod", "blue/green", "A_B", "x=1",
    "nightly", "TPC-DS", "s3a://bucket/in", "#7", "say \"hi\"", "back\\slash", "0.5", "1e3", "NaN", "--", "k8s",
};
static const char *const UNICODE[] = {
    "Zürich", "東京", "Ελλάδα", "😀", "İstanbul", "naïve café", "Ångström", "straße", "ﬁle", "Жёлтый",
    "مرحبا", "עברית", "a\xcc\x81", "\xe2\x80\x8b", "\xef\xbb\xbf" "bom", "\xc2\xa0nbsp", "𝔘𝔫𝔦", "한국어",
};

/* A random text value (no delimiter, tab, line break, NUL; no blank at either end). */
static void rand_text(gen *g, char *buf, size_t cap) {
    size_t len = 0;
    buf[0] = '\0';
    if (chance(g, 0.04)) return; /* the empty text */
    int parts = 1 + (int)below(g, 3);
    for (int i = 0; i < parts; i++) {
        const char *w = chance(g, 0.45) ? UNICODE[below(g, sizeof UNICODE / sizeof *UNICODE)]
                                        : WORDS[below(g, sizeof WORDS / sizeof *WORDS)];
        static const char *const seps[] = {" ", "-", "_", "/", ".", ":"};
        const char *sep = i ? seps[below(g, 6)] : "";
        int w_ = snprintf(buf + len, cap - len, "%s%s", sep, w);
        if (w_ < 0 || (size_t)w_ >= cap - len) break;
        len += (size_t)w_;
    }
    if (chance(g, 0.6)) {
        int w_ = snprintf(buf + len, cap - len, "%s%llu", chance(g, 0.5) ? " " : "-",
                          (unsigned long long)below(g, 100000));
        if (w_ > 0 && (size_t)w_ < cap - len) len += (size_t)w_;
    }
    /* no delimiters, and the reader trims blanks at the ends */
    for (size_t i = 0; i < len; i++)
        if (buf[i] == ',' || buf[i] == '\t') buf[i] = ';';
    while (len && buf[len - 1] == ' ') buf[--len] = '\0';
    size_t a = 0;
    while (buf[a] == ' ') a++;
    memmove(buf, buf + a, len - a + 1);
}

/* A natural number below 2^39: often at or next to the edges, else spread over every magnitude. */
static uint64_t rand_number(gen *g, uint64_t limit) {
    static const uint64_t edge[] = {0, 1, 2, (uint64_t)1 << 38, ((uint64_t)1 << 38) + 1, ((uint64_t)1 << 38) - 1,
                                    NUM_LIMIT - 1, NUM_LIMIT - 2, NUM_LIMIT - 64, 1000000};
    if (chance(g, 0.25)) {
        uint64_t v = edge[below(g, sizeof edge / sizeof *edge)];
        if (v < limit) return v;
    }
    double bits = unif(g) * log2((double)limit);
    uint64_t v = (uint64_t)floor(exp2(bits)) - 1;
    return v < limit ? v : limit - 1;
}

/* v as the loader must read it back: "16", "16.0", "1.6e1", "+16" or "016". */
static void fmt_number(gen *g, uint64_t v, char *buf, size_t cap) {
    double u = unif(g);
    char d[32];
    snprintf(d, sizeof d, "%llu", (unsigned long long)v);
    size_t n = strlen(d);
    if (u < 0.65 || n > 17) {
        snprintf(buf, cap, "%s", d);
    } else if (u < 0.78) {
        snprintf(buf, cap, "%s.%s", d, chance(g, 0.5) ? "0" : "000");
    } else if (u < 0.92 && n > 1) {
        /* d.ddde(n-1) with the trailing zeros of the fraction dropped: parsed exactly (an integer < 2^53) */
        size_t f = n;
        while (f > 1 && d[f - 1] == '0') f--;
        if (f == 1) snprintf(buf, cap, "%ce%zu", d[0], n - 1);
        else snprintf(buf, cap, "%c.%.*se%zu", d[0], (int)(f - 1), d + 1, n - 1);
    } else {
        snprintf(buf, cap, "%s%s", chance(g, 0.5) ? "+" : "0", d);
    }
}

static const char *const COLNAMES[] = {
    "executors", "num_nodes", "Knoten", "node_flavor", "input_gb", "wall_time_s", "Laufzeit", "query", "cluster size",
    "tier", "région", "队列", "dur", "N", "t", "mem_total_mb", "cores_total", "run #", "say \"x\"", "a\\b", "Größe",
    "job", "params", "ds", "size (MB)", "flavor", "infra", "zone", "ver", "user", "attempt", "cfg",
};

/* A column name not used yet: from the pool, made distinct by a suffix. */
static void new_colname(gen *g, char *out, size_t cap) {
    for (int tries = 0;; tries++) {
        const char *base = COLNAMES[below(g, sizeof COLNAMES / sizeof *COLNAMES)];
        if (tries < 8) snprintf(out, cap, "%s", base);
        else snprintf(out, cap, "%s_%d", base, tries);
        int used = 0;
        for (size_t j = 0; j < g->n_cols && !used; j++) used = strcmp(g->cols[j].name, out) == 0;
        if (!used) return;
    }
}

static int add_col(gen *g, int number, int total, int extra, int varies) {
    gcol *c = &g->cols[g->n_cols];
    memset(c, 0, sizeof *c);
    new_colname(g, c->name, sizeof c->name);
    c->number = number;
    c->total = total;
    c->extra = extra;
    c->varies = varies;
    return (int)g->n_cols++;
}

static const char *const KNOWN[] = {"machine_type", "job_type", "job_args", "data_size_MB", "data_characteristics",
                                    "environment", "memory", "slots"};
static const char *const EXT[] = {"x_queue", "x_région", "x_队列", "x_tier", "x_spark_version", "x_id", "x_a",
                                  "x_cores", "x_disk_gb", "x_with space", "x_Ω", "x_q"};

static void new_propname(gen *g, char *out, size_t cap) {
    for (;;) {
        if (chance(g, 0.55)) snprintf(out, cap, "%s", KNOWN[below(g, 8)]);
        else snprintf(out, cap, "%s", EXT[below(g, sizeof EXT / sizeof *EXT)]);
        int used = 0;
        for (size_t i = 0; i < g->n_props && !used; i++) used = strcmp(g->props[i].name, out) == 0;
        if (!used) return;
    }
}

/* What a flaw needs the set to have (one property of its kind, drawn first). */
enum need { NEED_NONE, NEED_NUMBER_COLUMN, NEED_PER_MACHINE, NEED_NUMBER_CONST, NEED_NUMBER };

static enum need flaw_need(gen_flaw f) {
    switch (f) {
    case GEN_FLAW_NUMBER_AT_LIMIT: case GEN_FLAW_NUMBER_HUGE: case GEN_FLAW_NUMBER_FRACTION:
    case GEN_FLAW_NUMBER_NEGATIVE: case GEN_FLAW_RUNS_NUMBER_AT_LIMIT:
        return NEED_NUMBER_COLUMN;
    case GEN_FLAW_TOTAL_AT_LIMIT: return NEED_PER_MACHINE;
    case GEN_FLAW_CONST_AT_LIMIT: return NEED_NUMBER_CONST;
    case GEN_FLAW_PREDICT_AT_LIMIT: return NEED_NUMBER;
    default: return NEED_NONE;
    }
}

static void draw_prop(gen *g, enum need need) {
    gprop *p = &g->props[g->n_props];
    memset(p, 0, sizeof *p);
    new_propname(g, p->name, sizeof p->name);
    p->essential = chance(g, 0.5);
    p->number = need != NEED_NONE ? 1 : chance(g, 0.4);
    double u = unif(g);
    if (p->number) {
        if (need == NEED_NUMBER_COLUMN) u = 0.1;
        else if (need == NEED_PER_MACHINE) u = 0.7;
        else if (need == NEED_NUMBER_CONST) u = 0.9;
        if (u < 0.45) {
            p->source = BL_SRC_COLUMN;
        } else if (u < 0.65) {
            p->source = BL_SRC_COLUMN;
            p->total = 1;
        } else if (u < 0.8) {
            p->source = BL_SRC_PER_MACHINE;
            p->total = 1;
            p->pm = rand_number(g, TOTAL_PM_MAX + 1);
        } else {
            p->source = BL_SRC_CONST;
            fmt_number(g, rand_number(g, NUM_LIMIT), p->konst, sizeof p->konst);
        }
    } else {
        if (u < 0.5) p->source = BL_SRC_COLUMN;
        else if (u < 0.65) p->source = BL_SRC_JOIN;
        else if (u < 0.8) p->source = BL_SRC_TEMPLATE;
        else {
            p->source = BL_SRC_CONST;
            rand_text(g, p->konst, sizeof p->konst);
        }
    }
    /* an optional property may change on every row: hundreds of distinct values */
    p->varies = !p->essential && !p->total && p->source == BL_SRC_COLUMN && chance(g, 0.3);
    if (p->source == BL_SRC_COLUMN) {
        p->cols[p->n_cols++] = add_col(g, p->number, p->total, 0, p->varies);
    } else if (p->source == BL_SRC_JOIN || p->source == BL_SRC_TEMPLATE) {
        p->cols[p->n_cols++] = add_col(g, 0, 0, 0, 0);
        /* the second column is often another text property's own: two properties read one column */
        int shared = -1;
        for (size_t j = 0; j < g->n_cols - 1 && shared < 0; j++)
            if (!g->cols[j].number && !g->cols[j].extra && !g->cols[j].varies && chance(g, 0.5)) shared = (int)j;
        if (chance(g, 0.7)) p->cols[p->n_cols++] = shared >= 0 ? shared : add_col(g, 0, 0, 0, 0);
        if (p->source == BL_SRC_TEMPLATE) {
            static const char *const lits[] = {"", " 0.001", " / ", "k=", " ×", "-"};
            char a[64], b[64];
            snprintf(a, sizeof a, "%s", g->cols[p->cols[0]].name);
            snprintf(b, sizeof b, "%s", g->cols[p->cols[p->n_cols - 1]].name);
            if (p->n_cols == 1) snprintf(p->tmpl, sizeof p->tmpl, "%s<%s>%s", lits[below(g, 6)], a, lits[below(g, 6)]);
            else snprintf(p->tmpl, sizeof p->tmpl, "<%s>%s<%s>", a, lits[below(g, 6)], b);
        }
    }
    g->n_props++;
}

/* The value property p takes in context c at scale-out x (not for columns that vary by row). */
static void prop_value(const gen *g, const gprop *p, size_t c, int x, char *out, size_t cap) {
    const gctx *k = &g->ctx[c];
    switch (p->source) {
    case BL_SRC_COLUMN:
        if (p->number && p->total) snprintf(out, cap, "%llu", (unsigned long long)(k->num[p->cols[0]] * (uint64_t)x));
        else if (p->number) snprintf(out, cap, "%llu", (unsigned long long)k->num[p->cols[0]]);
        else snprintf(out, cap, "%s", k->text[p->cols[0]]);
        break;
    case BL_SRC_JOIN:
        if (p->n_cols == 1) snprintf(out, cap, "%s", k->text[p->cols[0]]);
        else snprintf(out, cap, "%s %s", k->text[p->cols[0]], k->text[p->cols[1]]);
        break;
    case BL_SRC_TEMPLATE: {
        size_t len = 0, ci = 0;
        out[0] = '\0';
        for (const char *q = p->tmpl; *q && len + 1 < cap; q++) {
            if (*q != '<') { out[len++] = *q; out[len] = '\0'; continue; }
            int w = snprintf(out + len, cap - len, "%s", k->text[p->cols[ci++]]);
            len = w < 0 ? len : len + (size_t)w < cap ? len + (size_t)w : cap - 1;
            q = strchr(q, '>');
        }
        break;
    }
    case BL_SRC_CONST: snprintf(out, cap, "%s", p->konst); break;
    case BL_SRC_PER_MACHINE: snprintf(out, cap, "%llu", (unsigned long long)(p->pm * (uint64_t)x)); break;
    }
}

/* The context's identity as the loader keys it: every essential property that is not a cluster total. */
static void ctx_key(const gen *g, size_t c, char *out, size_t cap) {
    size_t len = 0;
    out[0] = '\0';
    for (size_t i = 0; i < g->n_props; i++) {
        const gprop *p = &g->props[i];
        if (!p->essential || p->total) continue;
        char v[2 * VAL_CAP + 8];
        prop_value(g, p, c, 1, v, sizeof v);
        if (p->number && p->source == BL_SRC_CONST) { /* "16.0" and "16" are one value */
            double d = strtod(v, NULL);
            snprintf(v, sizeof v, "%.0f", d);
        }
        int w = snprintf(out + len, cap - len, "%s\x1f", v);
        if (w < 0 || (size_t)w >= cap - len) return;
        len += (size_t)w;
    }
}

static void draw_ctx(gen *g, size_t c, int one_sx, int common_sx) {
    gctx *k = &g->ctx[c];
    for (size_t j = 0; j < g->n_cols; j++) {
        const gcol *col = &g->cols[j];
        if (col->extra || col->varies) continue;
        if (col->total) k->num[j] = chance(g, 0.6) && c > 0 ? g->ctx[c - 1].num[j] : rand_number(g, TOTAL_PM_MAX + 1);
        else if (col->number) k->num[j] = rand_number(g, NUM_LIMIT);
        else rand_text(g, k->text[j], VAL_CAP);
    }
    /* scale-outs: k distinct in 1..64, often including 1 and 64 */
    size_t n = one_sx ? 1 : 1 + (size_t)below(g, MAX_SX);
    k->n_sx = 0;
    if (common_sx > 0) {
        k->sx[k->n_sx++] = common_sx;
    }
    while (k->n_sx < n) {
        int x = chance(g, 0.1) ? 1 : chance(g, 0.1) ? SX_MAX : 1 + (int)below(g, SX_MAX);
        int dup = 0;
        for (size_t i = 0; i < k->n_sx; i++) dup |= k->sx[i] == x;
        if (!dup) k->sx[k->n_sx++] = x;
    }
    k->shape[0] = 0.05 + unif(g);          /* serial part */
    k->shape[1] = unif(g) * 3;             /* parallel part, ÷ x */
    k->shape[2] = unif(g) * 0.2;           /* ln x: aggregation */
    k->shape[3] = unif(g) * 0.5;           /* x: per-machine overhead */
    k->noise = chance(g, 0.15) ? 0.5 : 0.05;
}

/* Context c's curve at x over its magnitude (the runtime without noise is mag times this). */
static double shape_at(const gen *g, size_t c, double x) {
    const gctx *k = &g->ctx[c];
    return k->shape[0] + k->shape[1] / x + k->shape[2] * log(x) + k->shape[3] * x / SX_MAX;
}

static double runtime_at(gen *g, size_t c, int x) {
    const gctx *k = &g->ctx[c];
    double t = shape_at(g, c, x);
    t *= k->mag * (1.0 + k->noise * (unif(g) - 0.5) * 2.0);
    if (!(t >= 1e-3)) t = 1e-3;
    if (t > BL_RUNTIME_MAX_S) t = BL_RUNTIME_MAX_S;
    return t;
}

/* Draws the whole spec. */
static void draw(gen *g) {
    const int small = g->o.small;
    enum need need = flaw_need(g->flaw);
    size_t np = small ? 1 + (size_t)below(g, 3) : chance(g, 0.1) ? 10 : 1 + (size_t)below(g, 8);
    g->c_scale = add_col(g, 1, 0, 0, 0);
    g->c_run = add_col(g, 1, 0, 0, 0);
    g->flaw_prop = need != NEED_NONE ? 0 : -1;
    for (size_t i = 0; i < np; i++) draw_prop(g, i == 0 ? need : NEED_NONE);
    if (g->flaw == GEN_FLAW_CONST_AT_LIMIT) snprintf(g->props[0].konst, sizeof g->props[0].konst, "549755813888");
    /* a context needs one essential property */
    int any_ess = 0;
    for (size_t i = 0; i < g->n_props; i++) any_ess |= g->props[i].essential;
    if (!any_ess) g->props[below(g, g->n_props)].essential = 1;
    for (size_t i = 0; i < g->n_props; i++) /* an essential property never varies by row */
        if (g->props[i].essential && g->props[i].varies) {
            g->props[i].varies = 0;
            g->cols[g->props[i].cols[0]].varies = 0;
        }
    size_t n_extra = small ? 0 : (size_t)below(g, 4);
    for (size_t i = 0; i < n_extra; i++) add_col(g, 0, 0, 1, 1);
    /* shuffle the property order (the schema interleaves essential and optional) */
    for (size_t i = g->n_props; i > 1; i--) {
        size_t j = (size_t)below(g, i);
        gprop t = g->props[i - 1];
        g->props[i - 1] = g->props[j];
        g->props[j] = t;
        if (g->flaw_prop == (int)(i - 1)) g->flaw_prop = (int)j;
        else if (g->flaw_prop == (int)j) g->flaw_prop = (int)(i - 1);
    }

    /* contexts: distinct identities, or one when nothing essential can differ */
    size_t want = small ? 1 + (size_t)below(g, 4) : chance(g, 0.2) ? 1 : 1 + (size_t)below(g, 30);
    int one_sx = chance(g, 0.2);
    int common_sx = one_sx && chance(g, 0.5) ? 1 + (int)below(g, SX_MAX) : 0;
    double base = -3 + unif(g) * 14, spread = chance(g, 0.5) ? 0.3 : 6;
    char keys[MAX_CTX][1024];
    size_t n = 0;
    for (size_t c = 0; c < want + 1 && c < MAX_CTX; c++) {
        int ok = 0;
        for (int tries = 0; tries < 40 && !ok; tries++) {
            draw_ctx(g, n, one_sx || (small && chance(g, 0.5)), common_sx);
            ctx_key(g, n, keys[n], sizeof keys[n]);
            ok = 1;
            for (size_t q = 0; q < n && ok; q++) ok = strcmp(keys[q], keys[n]) != 0;
        }
        if (!ok) break;
        double lg = base + (unif(g) - 0.5) * spread;
        g->ctx[n].mag = chance(g, 0.03) ? BL_RUNTIME_MAX_S : pow(10.0, lg < -3 ? -3 : lg > 12 ? 12 : lg);
        n++;
    }
    /* the runs are of a new context (the last drawn) or, when only one could be drawn or now and
     * then, of a pre-training one */
    if (n >= 2 && !chance(g, 0.25)) {
        g->n_ctx = n - 1;
        g->run_ctx = n - 1;
    } else {
        g->n_ctx = n > 1 ? n - 1 : 1;
        g->run_ctx = (size_t)below(g, g->n_ctx);
    }
    g->reps = small ? 1 + (size_t)below(g, 2) : 1 + (size_t)below(g, 5);
    /* within the row budget: fewer repetitions first, then fewer scale-outs */
    size_t max_rows = small ? 24 : g->o.max_rows;
    for (;;) {
        size_t rows = 0, big = 0;
        for (size_t c = 0; c < g->n_ctx; c++) {
            rows += g->ctx[c].n_sx * g->reps;
            if (g->ctx[c].n_sx > g->ctx[big].n_sx) big = c;
        }
        if (rows <= max_rows) break;
        if (g->reps > 1) g->reps--;
        else if (g->ctx[big].n_sx > 1) g->ctx[big].n_sx--;
        else if (g->n_ctx > 1) { /* one row per context already: fewer contexts (a new runs' context
                                    moves down to stay just past the pre-training ones) */
            if (g->run_ctx == g->n_ctx) {
                g->ctx[g->n_ctx - 1] = g->ctx[g->n_ctx];
                g->run_ctx = g->n_ctx - 1;
            }
            g->n_ctx--;
        } else break;
    }
    size_t rows = 0; /* pre-training needs two rows */
    for (size_t c = 0; c < g->n_ctx; c++) rows += g->ctx[c].n_sx * g->reps;
    if (rows < 2) g->reps = 2;
    g->n_runs = 1 + (size_t)below(g, small ? 3 : 6);
    g->delim = chance(g, 0.5) ? '\t' : ',';
    g->runs_delim = chance(g, 0.5) ? '\t' : ',';
    g->ms = chance(g, 0.3);
    g->bom = chance(g, 0.1);
    g->crlf = chance(g, 0.15);
    g->blanks = chance(g, 0.1);
    g->pad = chance(g, 0.15);
    g->shuffle = chance(g, 0.4);
}

/* ---- writing --------------------------------------------------------------------------------- */

typedef struct buf { char *s; size_t len, cap; int oom; } buf;

static void put(buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(buf *b, const char *fmt, ...) {
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int w = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? b->cap - b->len : 0, fmt, ap);
        va_end(ap);
        if (w < 0) { b->oom = 1; return; }
        if (b->s && (size_t)w < b->cap - b->len) { b->len += (size_t)w; return; }
        size_t cap = b->cap ? b->cap * 2 : 4096;
        while (cap < b->len + (size_t)w + 1) cap *= 2;
        char *s = realloc(b->s, cap);
        if (!s) { b->oom = 1; return; }
        b->s = s;
        b->cap = cap;
    }
}

/* A schema token in double quotes, with the parser's two escapes. */
static void put_quoted(buf *b, const char *s) {
    put(b, "\"");
    for (; *s; s++) put(b, "%s%c", *s == '"' || *s == '\\' ? "\\" : "", *s);
    put(b, "\"");
}

static int write_file(const char *path, const buf *b, char *why, size_t cap) {
    FILE *f = fopen(path, "wb");
    if (!f) { snprintf(why, cap, "%s: %s", path, strerror(errno)); return -1; }
    size_t n = b->len;
    /* NUL_MARK stands for a NUL byte */
    for (size_t i = 0; i < n; i++)
        if (fputc(b->s[i] == NUL_MARK ? 0 : b->s[i], f) == EOF) break;
    if (fclose(f) != 0) { snprintf(why, cap, "%s: write failed", path); return -1; }
    return 0;
}

static void put_schema(gen *g, buf *b) {
    const char *nl = "\n";
    if (g->bom) put(b, "\xEF\xBB\xBF");
    put(b, "# users' history, seed-drawn%s", nl);
    if (chance(g, 0.7)) put(b, "bellamy-schema 1%s", nl);
    /* directives in an order of their own: a line may name a column before its role is given */
    char lines[GEN_PROPS_MAX + 3][1024];
    size_t nl_ = 0;
    buf t = {0};
    for (size_t i = 0; i < g->n_props + 3; i++) {
        t.len = 0;
        if (i == g->n_props) {
            put(&t, "scale_out%s", chance(g, 0.3) ? "\t" : " ");
            put_quoted(&t, g->cols[g->c_scale].name);
        } else if (i == g->n_props + 1) {
            put(&t, "runtime ");
            put_quoted(&t, g->cols[g->c_run].name);
            put(&t, " %s", g->ms ? "ms" : "s");
        } else if (i == g->n_props + 2) {
            int any = 0;
            for (size_t j = 0; j < g->n_cols; j++)
                if (g->cols[j].total) {
                    if (!any) put(&t, "cluster_totals");
                    put(&t, " ");
                    put_quoted(&t, g->cols[j].name);
                    any = 1;
                }
            if (!any) continue;
        } else {
            const gprop *p = &g->props[i];
            put(&t, "property ");
            put_quoted(&t, p->name);
            put(&t, "  %s %s ", p->essential ? "essential" : "optional", p->number ? "number" : "text");
            switch (p->source) {
            case BL_SRC_COLUMN: put(&t, "column "); put_quoted(&t, g->cols[p->cols[0]].name); break;
            case BL_SRC_JOIN:
                put(&t, "join");
                for (int k = 0; k < p->n_cols; k++) { put(&t, " "); put_quoted(&t, g->cols[p->cols[k]].name); }
                break;
            case BL_SRC_TEMPLATE: put(&t, "template "); put_quoted(&t, p->tmpl); break;
            case BL_SRC_CONST: put(&t, "const "); put_quoted(&t, p->konst); break;
            case BL_SRC_PER_MACHINE: put(&t, "per_machine %llu", (unsigned long long)p->pm); break;
            }
            if (chance(g, 0.2)) put(&t, "   # %s", p->essential ? "part of the context" : "optional");
        }
        if (t.s && !t.oom) snprintf(lines[nl_++], sizeof lines[0], "%s", t.s);
    }
    free(t.s);
    for (size_t i = nl_; i > 1; i--) {
        size_t j = (size_t)below(g, i);
        char tmp[1024];
        memcpy(tmp, lines[i - 1], sizeof tmp);
        memcpy(lines[i - 1], lines[j], sizeof tmp);
        memcpy(lines[j], tmp, sizeof tmp);
    }
    for (size_t i = 0; i < nl_; i++) {
        if (g->blanks && chance(g, 0.3)) put(b, "%s", nl);
        put(b, "%s%s", lines[i], g->crlf ? "\r\n" : nl);
    }
    switch (g->flaw) {
    case GEN_FLAW_SCHEMA_BAD_UTF8: put(b, "property x_bad optional text const \"caf\xc3\x28\"\n"); break;
    case GEN_FLAW_SCHEMA_TEXT_TOTAL: put(b, "property x_bad optional text per_machine 3\n"); break;
    case GEN_FLAW_SCHEMA_UNKNOWN_PROP: put(b, "property datasize essential number const 1\n"); break;
    default: break;
    }
}

/* A column's field for a row of context c at scale-out x (the value, then its written form). */
static void field(gen *g, size_t j, size_t c, int x, char *out, size_t cap) {
    const gcol *col = &g->cols[j];
    const gctx *k = &g->ctx[c];
    size_t s = g->serial++;
    if (col->extra) {
        switch (s % 3) {
        case 0: snprintf(out, cap, "r%05zu", s); break;
        case 1: snprintf(out, cap, "2024-%02zu-%02zu", 1 + s % 12, 1 + s % 28); break;
        default: rand_text(g, out, cap); break;
        }
        return;
    }
    if (col->varies && col->number) { fmt_number(g, rand_number(g, NUM_LIMIT), out, cap); return; }
    if (col->varies) { /* distinct on every row */
        char t[VAL_CAP];
        rand_text(g, t, sizeof t);
        snprintf(out, cap, "%s #%zu", t, s);
        return;
    }
    if (col->total) fmt_number(g, k->num[j] * (uint64_t)x, out, cap);
    else if (col->number) fmt_number(g, k->num[j], out, cap);
    else snprintf(out, cap, "%s", k->text[j]);
}

static void fmt_runtime(gen *g, double t, char *out, size_t cap) {
    static const int prec[] = {3, 6, 9, 17};
    double v = g->ms ? t * 1000.0 : t;
    snprintf(out, cap, "%.*g", prec[below(g, 4)], v);
}

/* A field as written: now and then in quotes, its quotes doubled (it reads back the same). */
static void put_field(gen *g, buf *b, const char *v) {
    if (!g->quote || bl_rng_uniform(&g->qr) >= 0.6) {
        put(b, "%s", v);
        return;
    }
    put(b, "\"");
    for (; *v; v++) put(b, "%s%c", *v == '"' ? "\"" : "", *v);
    put(b, "\"");
}

/* One table (the data file or the runs file): header and rows[n] of (context, scale-out). */
static void put_table(gen *g, buf *b, char delim, const size_t *rc, const int *rx, size_t n, int runs) {
    const char *eol = g->crlf ? "\r\n" : "\n";
    size_t order[MAX_COLS];
    for (size_t j = 0; j < g->n_cols; j++) order[j] = j;
    for (size_t j = g->n_cols; j > 1; j--) {
        size_t q = (size_t)below(g, j);
        size_t t = order[j - 1];
        order[j - 1] = order[q];
        order[q] = t;
    }
    /* the columns the table leaves out: a flaw's (the first column a property reads, else the
     * scale-out's), and in the runs file now and then the extra columns no property reads */
    int skip[MAX_COLS] = {0};
    if (runs && g->flaw == GEN_FLAW_RUNS_MISSING_COLUMN) {
        int col = g->c_scale;
        for (size_t i = g->n_props; i-- > 0;)
            if (g->props[i].n_cols) col = g->props[i].cols[0];
        skip[col] = 1;
    }
    for (size_t j = 0; j < g->n_cols; j++)
        if (runs && g->cols[j].extra && chance(g, 0.5)) skip[j] = 1;
    int dup_of = -1; /* GEN_FLAW_DUPLICATE_COLUMN: a second header column named as this one */
    if (!runs && g->flaw == GEN_FLAW_DUPLICATE_COLUMN) dup_of = g->c_run;

    if (g->bom && !runs) put(b, "\xEF\xBB\xBF");
    int first = 1;
    for (size_t q = 0; q < g->n_cols; q++) {
        if (skip[order[q]]) continue;
        put(b, "%s", first ? "" : (char[2]){delim, 0});
        put_field(g, b, g->cols[order[q]].name);
        first = 0;
    }
    if (dup_of >= 0) put(b, "%c%s", delim, g->cols[dup_of].name);
    put(b, "%s", eol);

    /* the row and column a data flaw spoils */
    size_t bad_row = n ? (size_t)below(g, n) : 0;
    int bad_col = -1;
    const char *bad_val = NULL;
    int data_flaw = !runs;
    switch (g->flaw) {
    case GEN_FLAW_DATA_BAD_UTF8: if (data_flaw) { bad_col = g->c_run; bad_val = "ok\xe2\x82"; } break;
    case GEN_FLAW_DATA_NUL: if (data_flaw) { bad_col = g->c_run; bad_val = "12\x01" "5"; } break;
    case GEN_FLAW_NUMBER_AT_LIMIT: if (data_flaw) bad_val = "549755813888"; break;
    case GEN_FLAW_NUMBER_HUGE: if (data_flaw) bad_val = "1e300"; break;
    case GEN_FLAW_NUMBER_FRACTION: if (data_flaw) bad_val = "2.5"; break;
    case GEN_FLAW_NUMBER_NEGATIVE: if (data_flaw) bad_val = "-3"; break;
    case GEN_FLAW_RUNTIME_TOO_LARGE: if (data_flaw) { bad_col = g->c_run; bad_val = g->ms ? "2e15" : "2e12"; } break;
    case GEN_FLAW_RUNTIME_ZERO: if (data_flaw) { bad_col = g->c_run; bad_val = "0"; } break;
    case GEN_FLAW_SCALE_OUT_FRACTION: if (data_flaw) { bad_col = g->c_scale; bad_val = "2.5"; } break;
    case GEN_FLAW_SCALE_OUT_ZERO: if (data_flaw) { bad_col = g->c_scale; bad_val = "0"; } break;
    case GEN_FLAW_RUNS_BAD_UTF8: if (runs) { bad_col = g->c_run; bad_val = "\xc0\xaf"; } break;
    case GEN_FLAW_RUNS_NUMBER_AT_LIMIT: if (runs) bad_val = "5.49755813888e11"; break;
    default: break;
    }
    if (bad_val && bad_col < 0) bad_col = g->props[g->flaw_prop].cols[0];

    for (size_t i = 0; i < n; i++) {
        if (g->blanks && chance(g, 0.05)) put(b, "%s", eol);
        first = 1;
        for (size_t q = 0; q < g->n_cols; q++) {
            size_t j = order[q];
            if (skip[j]) continue;
            char v[2 * VAL_CAP];
            if ((int)j == g->c_scale) {
                double u = unif(g);
                snprintf(v, sizeof v, u < 0.8 ? "%d" : u < 0.9 ? "%d.0" : "%de0", rx[i]);
            } else if ((int)j == g->c_run) {
                fmt_runtime(g, runtime_at(g, rc[i], rx[i]), v, sizeof v);
            } else {
                field(g, j, rc[i], rx[i], v, sizeof v);
            }
            if (i == bad_row && (int)j == bad_col) snprintf(v, sizeof v, "%s", bad_val);
            const char *pad = g->pad && chance(g, 0.3) ? " " : "";
            put(b, "%s%s", first ? "" : (char[2]){delim, 0}, pad);
            put_field(g, b, v);
            put(b, "%s", pad);
            first = 0;
        }
        if (dup_of >= 0) put(b, "%c1", delim);
        if (i == bad_row && !runs && g->flaw == GEN_FLAW_RAGGED_ROW) put(b, "%cextra", delim);
        if (i + 1 < n || chance(g, 0.8)) put(b, "%s", eol);
    }
}

static const char *ext_for(gen *g, char delim) {
    if (chance(g, 0.2)) return ".txt"; /* told by the header line */
    return delim == '\t' ? ".tsv" : ".csv";
}

const char *gen_flaw_name(gen_flaw f) {
    static const char *const names[GEN_FLAW_COUNT] = {
        "valid", "data-bad-utf8", "data-nul", "number-at-limit", "number-huge", "number-fraction", "number-negative",
        "total-at-limit", "const-at-limit", "runtime-too-large", "runtime-zero", "scale-out-fraction",
        "scale-out-zero", "ragged-row", "duplicate-column", "schema-bad-utf8", "schema-text-total",
        "schema-unknown-prop", "runs-missing-column", "runs-bad-utf8", "runs-number-at-limit", "predict-at-limit",
    };
    return f >= 0 && f < GEN_FLAW_COUNT ? names[f] : "?";
}

void gen_opts_default(gen_opts *o) {
    memset(o, 0, sizeof *o);
    o->max_rows = 1500;
}

/* The runs' context as bl_predict takes it, and scale-outs to predict at. */
static void fill_predict(gen *g, gen_set *s, const int *run_x) {
    s->n_ctx = 0;
    s->exact_ctx = 1;
    for (size_t i = 0; i < g->n_props; i++) {
        const gprop *p = &g->props[i];
        s->exact_ctx &= !p->varies;
        if (!p->essential && chance(g, 0.3) && (int)i != g->flaw_prop) continue; /* optional: may be left out */
        size_t k = s->n_ctx++;
        snprintf(s->ctx_name[k], sizeof s->ctx_name[k], "%s", p->name);
        if (p->total) /* cluster totals are given per machine */
            snprintf(s->ctx_val[k], sizeof s->ctx_val[k], "%llu",
                     (unsigned long long)(p->source == BL_SRC_PER_MACHINE ? p->pm : g->ctx[g->run_ctx].num[p->cols[0]]));
        else if (p->varies && p->number)
            snprintf(s->ctx_val[k], sizeof s->ctx_val[k], "%llu", (unsigned long long)rand_number(g, NUM_LIMIT));
        else if (p->varies)
            rand_text(g, s->ctx_val[k], sizeof s->ctx_val[k]);
        else
            prop_value(g, p, g->run_ctx, 1, s->ctx_val[k], sizeof s->ctx_val[k]);
        if (g->flaw == GEN_FLAW_PREDICT_AT_LIMIT && (int)i == g->flaw_prop)
            snprintf(s->ctx_val[k], sizeof s->ctx_val[k], "549755813888");
        s->ctx[k].name = s->ctx_name[k];
        s->exact_ctx &= g->flaw == GEN_VALID;
        s->ctx[k].value = s->ctx_val[k];
    }
    static const double fixed[] = {1, 2, 7.5, 64, 100, 1000, 1e5};
    s->exact_ctx &= s->n_ctx == g->n_props;
    s->n_x = 0;
    for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++) s->x[s->n_x++] = fixed[i];
    s->first_run_x = s->n_x;
    for (size_t i = 0; i < g->n_runs && s->n_x < GEN_PRED_MAX; i++) s->x[s->n_x++] = run_x[i];
    for (size_t i = 0; i < s->n_x; i++) s->curve[i] = g->ctx[g->run_ctx].mag * shape_at(g, g->run_ctx, s->x[i]);
    s->noise = g->ctx[g->run_ctx].noise;
    s->runs_ctx_pretrained = g->run_ctx < g->n_ctx;
}

int gen_userdata(uint64_t seed, gen_flaw flaw, const gen_opts *o, const char *dir, gen_set *out, char *why,
                 size_t cap) {
    gen *g = calloc(1, sizeof *g);
    if (!g) { snprintf(why, cap, "out of memory"); return -1; }
    if (o) g->o = *o;
    else gen_opts_default(&g->o);
    if (g->o.max_rows == 0) g->o.max_rows = 1500;
    g->flaw = flaw;
    bl_rng_seed(&g->r, seed);
    bl_rng_seed(&g->qr, seed ^ 0x71756f746564ULL);
    g->quote = bl_rng_uniform(&g->qr) < 0.3;
    draw(g);

    gen_set *s = out;
    memset(s, 0, sizeof *s);
    s->seed = seed;
    s->flaw = flaw;
    snprintf(s->dir, sizeof s->dir, "%s", dir);
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        snprintf(why, cap, "%s: %s", dir, strerror(errno));
        free(g);
        return -1;
    }
    static const char *const stems[] = {"history", "runs_export", "Verlauf", "jobs"};
    snprintf(s->schema_path, sizeof s->schema_path, "%s/%s", dir, chance(g, 0.5) ? "job.schema" : "schema.txt");
    snprintf(s->data_path, sizeof s->data_path, "%s/%s%s", dir, stems[below(g, 4)], ext_for(g, g->delim));
    snprintf(s->runs_path, sizeof s->runs_path, "%s/my-runs%s", dir, ext_for(g, g->runs_delim));

    /* rows: every context × scale-out × repetition, in that order or shuffled */
    size_t n = 0;
    for (size_t c = 0; c < g->n_ctx; c++) n += g->ctx[c].n_sx * g->reps;
    size_t *rc = malloc((n + 8) * sizeof *rc);
    int *rx = malloc((n + 8) * sizeof *rx);
    buf sb = {0}, db = {0}, rb = {0};
    int rcode = -1;
    if (!rc || !rx) { snprintf(why, cap, "out of memory"); goto done; }
    n = 0;
    for (size_t c = 0; c < g->n_ctx; c++)
        for (size_t q = 0; q < g->ctx[c].n_sx; q++)
            for (size_t k = 0; k < g->reps; k++) {
                rc[n] = c;
                rx[n++] = g->ctx[c].sx[q];
            }
    if (g->shuffle)
        for (size_t i = n; i > 1; i--) {
            size_t j = (size_t)below(g, i);
            size_t tc = rc[i - 1];
            int tx = rx[i - 1];
            rc[i - 1] = rc[j]; rx[i - 1] = rx[j];
            rc[j] = tc; rx[j] = tx;
        }
    if (flaw == GEN_FLAW_TOTAL_AT_LIMIT) { /* the largest scale-out's total reaches 2^39, smaller ones may not */
        int xmax = 1;
        for (size_t i = 0; i < n; i++) xmax = rx[i] > xmax ? rx[i] : xmax;
        g->props[g->flaw_prop].pm = (NUM_LIMIT + (uint64_t)xmax - 1) / (uint64_t)xmax;
    }
    put_schema(g, &sb);
    put_table(g, &db, g->delim, rc, rx, n, 0);
    /* runs: the runs' context at its own scale-outs (and now and then 1 or 64) */
    size_t run_c[8];
    int run_x[8];
    for (size_t i = 0; i < g->n_runs; i++) {
        const gctx *k = &g->ctx[g->run_ctx];
        run_c[i] = g->run_ctx;
        run_x[i] = chance(g, 0.15) ? 1 + (int)below(g, SX_MAX) : k->sx[below(g, k->n_sx)];
    }
    put_table(g, &rb, g->runs_delim, run_c, run_x, g->n_runs, 1);
    if (sb.oom || db.oom || rb.oom) { snprintf(why, cap, "out of memory"); goto done; }
    if (write_file(s->schema_path, &sb, why, cap) || write_file(s->data_path, &db, why, cap) ||
        write_file(s->runs_path, &rb, why, cap))
        goto done;

    s->n_props = g->n_props;
    s->n_rows = n;
    s->n_contexts = g->n_ctx;
    s->n_runs = g->n_runs;
    for (size_t i = 0; i < g->n_props; i++) s->n_numbers += g->props[i].number;
    fill_predict(g, s, run_x);

    switch (flaw) {
    case GEN_VALID: s->stage = GEN_STAGE_NONE; break;
    case GEN_FLAW_CONST_AT_LIMIT: case GEN_FLAW_SCHEMA_BAD_UTF8: case GEN_FLAW_SCHEMA_TEXT_TOTAL:
    case GEN_FLAW_SCHEMA_UNKNOWN_PROP:
        s->stage = GEN_STAGE_LOAD;
        s->bad_path = s->schema_path;
        break;
    case GEN_FLAW_RUNS_MISSING_COLUMN: case GEN_FLAW_RUNS_BAD_UTF8: case GEN_FLAW_RUNS_NUMBER_AT_LIMIT:
        s->stage = GEN_STAGE_RUNS;
        s->bad_path = s->runs_path;
        break;
    case GEN_FLAW_PREDICT_AT_LIMIT:
        s->stage = GEN_STAGE_PREDICT;
        snprintf(s->bad_word, sizeof s->bad_word, "%s", g->props[g->flaw_prop].name);
        break;
    default:
        s->stage = GEN_STAGE_LOAD;
        s->bad_path = s->data_path;
        break;
    }
    if (flaw == GEN_FLAW_SCHEMA_UNKNOWN_PROP) snprintf(s->bad_word, sizeof s->bad_word, "datasize");
    if (flaw == GEN_FLAW_TOTAL_AT_LIMIT) snprintf(s->bad_word, sizeof s->bad_word, "%s", g->props[g->flaw_prop].name);

    int n_ess = 0, n_opt = 0, n_tot = 0;
    for (size_t i = 0; i < g->n_props; i++) {
        n_ess += g->props[i].essential;
        n_opt += !g->props[i].essential;
        n_tot += g->props[i].total;
    }
    snprintf(s->summary, sizeof s->summary,
             "seed %llu (%s): %zu properties (%d essential, %d optional, %d number, %d cluster total), %zu rows in %zu "
             "context%s, %zu repetition%s, %zu runs, %s%s, runtimes in %s, files %.200s, %.200s",
             (unsigned long long)seed, gen_flaw_name(flaw), g->n_props, n_ess, n_opt, s->n_numbers, n_tot, n,
             g->n_ctx, g->n_ctx == 1 ? "" : "s", g->reps, g->reps == 1 ? "" : "s", g->n_runs,
             g->delim == '\t' ? "tabs" : "commas", g->quote ? " (some fields quoted)" : "", g->ms ? "ms" : "s",
             s->data_path, s->runs_path);
    rcode = 0;
done:
    free(rc);
    free(rx);
    free(sb.s);
    free(db.s);
    free(rb.s);
    free(g);
    return rcode;
}
