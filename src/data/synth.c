/* synth.c — seeded synthetic runtime corpus with Ernest-form ground truth (see synth.h).
 * Not here: training or evaluation; this only makes data. */
#include "data/synth.h"
#include "common/error.h"
#include "common/file.h"
#include "common/rng.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
    const char *name;
    double speed;
    uint64_t slots, memory;
} machines[4] = {
    { "s1.large",   1.0,  4, 16000 },
    { "s1.xlarge",  1.6,  8, 32000 },
    { "c1.2xlarge", 2.4,  8, 15000 },
    { "r1.2xlarge", 2.0,  8, 61000 },
};
static const uint64_t sizes_mb[5] = { 2000, 5000, 10000, 20000, 40000 };
static const uint64_t iterations[3] = { 1, 5, 10 };

#define SCHEMA_HEAD                                                                              \
    "# Synthetic corpus (src/data/synth.c): runtime curves with known ground truth.\n"              \
    "bellamy-schema 1\n"                                                                           \
    "scale_out instance_count\n"                                                                  \
    "runtime   gross_runtime s\n"                                                                 \
    "property machine_type         essential text   column machine_type\n"                        \
    "property job_args             essential text   column iterations\n"                          \
    "property data_size_MB         essential number column data_size_MB\n"                        \
    "property data_characteristics essential text   const \"\"\n"
#define SCHEMA_TAIL                                                                              \
    "property job_type             optional  text   const \"synth-spark\"\n"                      \
    "property memory               optional  number column memory\n"                              \
    "property slots                optional  number column slots\n"                               \
    "cluster_totals slots memory\n"
#define SCHEMA_ENV "property environment          essential text   const \"%s\"\n"
#define DEFAULT_ENV "synthetic corpus"

static const char schema_text[] = SCHEMA_HEAD "property environment          essential text   const \"" DEFAULT_ENV
                                  "\"\n" SCHEMA_TAIL;

const char *bl_synth_schema_text(void) { return schema_text; }

int bl_synth_shape_from_name(const char *name) {
    static const char *const names[] = {"ernest", "cliff", "superlinear", "plateau"};
    for (int i = 0; name && i < 4; i++)
        if (strcmp(name, names[i]) == 0) return i;
    return -1;
}

static double uniform01(bl_rng *s) {   /* (0, 1) */
    return ((double)(bl_rng_u64(s) >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

static double normal(bl_rng *s) {
    double u = uniform01(s), v = uniform01(s);
    return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

void bl_synth_config_default(bl_synth_config *c) {
    if (!c) return;
    memset(c, 0, sizeof *c);
    c->seed = 1;
    c->n_contexts = 12;
    c->n_scale_outs = 6;
    for (size_t i = 0; i < 6; i++) c->scale_outs[i] = (double)(2 * (i + 1));
    c->reps = 3;
    c->noise = 0.03;
    c->shape = BL_SYNTH_ERNEST;
    c->time_scale = 1.0;
    snprintf(c->environment, sizeof c->environment, "%s", DEFAULT_ENV);
}

double bl_synth_truth(const bl_synth_context *c, double x) {
    const double gb = (double)c->data_size_mb / 1000.0, *th = c->theta;
    double t = th[0] + th[1] * gb / x + th[2] * log(x) + th[3] * x;
    switch (c->shape) {
    case BL_SYNTH_CLIFF:
        if (x * (double)c->memory_per_machine < 2.0 * (double)c->data_size_mb) t *= 2.5;
        break;
    case BL_SYNTH_SUPERLINEAR: t = th[0] + th[1] * gb / x + th[2] * log(x) + th[1] * gb * pow(x, 1.5) / 400.0; break;
    case BL_SYNTH_PLATEAU: t = 4.0 * th[0] + th[1] * gb / (x < 16.0 ? x : 16.0); break;
    default: break;
    }
    return t * (c->time_scale > 0 ? c->time_scale : 1.0);
}

void bl_synth_free(bl_synth_corpus *c) {
    if (!c) return;
    free(c->contexts);
    free(c->scale_out);
    free(c->runtime_s);
    free(c->truth_s);
    free(c->context);
    free(c->schema);
    free(c);
}

bl_status bl_synth_generate(const bl_synth_config *cfg, bl_synth_corpus **out, bl_error *err) {
    BL_CHECK_ARG(cfg && out, err, "synth: NULL argument");
    *out = NULL;
    BL_CHECK_ARG(cfg->n_contexts >= 1 && cfg->n_contexts <= BL_SYNTH_MAX_CONTEXTS, err,
                 "synth: %zu contexts (1..%d allowed)", cfg->n_contexts, BL_SYNTH_MAX_CONTEXTS);
    BL_CHECK_ARG(cfg->n_scale_outs >= 1 && cfg->n_scale_outs <= BL_SYNTH_MAX_SCALEOUTS, err,
                 "synth: %zu scale-outs (1..%d allowed)", cfg->n_scale_outs, BL_SYNTH_MAX_SCALEOUTS);
    BL_CHECK_ARG(cfg->reps >= 1 && cfg->reps <= 1000, err, "synth: %zu repetitions (1..1000 allowed)", cfg->reps);
    BL_CHECK_ARG(cfg->noise >= 0 && cfg->noise <= 1, err, "synth: noise %g outside 0..1", cfg->noise);
    BL_CHECK_ARG(cfg->shape >= BL_SYNTH_ERNEST && cfg->shape <= BL_SYNTH_PLATEAU, err, "synth: shape %d unknown",
                 cfg->shape);
    /* from 1e-4 the shortest curve (some 30 s at scale 1) stays above the reader's millisecond */
    BL_CHECK_ARG(cfg->time_scale >= 1e-4 && cfg->time_scale <= 1e6, err, "synth: time scale %g outside [1e-4, 1e6] "
                 "(runtimes below a millisecond are no data a reader takes)", cfg->time_scale);
    const size_t el = strnlen(cfg->environment, sizeof cfg->environment);
    BL_CHECK_ARG(el > 0 && el < sizeof cfg->environment, err, "synth: the environment must be 1..%zu characters",
                 sizeof cfg->environment - 1);
    for (size_t i = 0; i < el; i++)
        BL_CHECK_ARG(cfg->environment[i] >= 0x20 && cfg->environment[i] < 0x7f && cfg->environment[i] != '"' &&
                         cfg->environment[i] != '\\', err,
                     "synth: the environment '%s' holds a character a schema constant cannot (printable ASCII, no "
                     "quote or backslash)", cfg->environment);
    for (size_t i = 0; i < cfg->n_scale_outs; i++) {
        double x = cfg->scale_outs[i];
        BL_CHECK_ARG(x >= 1 && x <= 100000 && x == floor(x), err,
                     "synth: scale-out %g is not an integer in 1..100000", x);
    }
    bl_synth_corpus *c = calloc(1, sizeof *c);
    if (!c) return bl_seterr(err, BL_ENOMEM, "synth: out of memory");
    size_t n = cfg->n_contexts * cfg->n_scale_outs * cfg->reps;
    c->contexts = calloc(cfg->n_contexts, sizeof *c->contexts);
    c->scale_out = malloc(n * sizeof *c->scale_out);
    c->runtime_s = malloc(n * sizeof *c->runtime_s);
    c->truth_s = malloc(n * sizeof *c->truth_s);
    c->context = malloc(n * sizeof *c->context);
    const size_t slen = sizeof SCHEMA_HEAD + sizeof SCHEMA_ENV + sizeof cfg->environment + sizeof SCHEMA_TAIL;
    c->schema = malloc(slen);
    if (c->schema) snprintf(c->schema, slen, SCHEMA_HEAD SCHEMA_ENV SCHEMA_TAIL, cfg->environment);
    if (!c->contexts || !c->scale_out || !c->runtime_s || !c->truth_s || !c->context || !c->schema) {
        bl_synth_free(c);
        return bl_seterr(err, BL_ENOMEM, "synth: out of memory");
    }
    bl_rng rng;
    bl_rng_seed(&rng, cfg->seed);
    /* Seeded Fisher–Yates over the grid, so contexts are distinct. */
    unsigned grid[BL_SYNTH_MAX_CONTEXTS];
    for (unsigned i = 0; i < BL_SYNTH_MAX_CONTEXTS; i++) grid[i] = i;
    for (unsigned i = BL_SYNTH_MAX_CONTEXTS - 1; i > 0; i--) {
        unsigned j = (unsigned)bl_rng_int(&rng, i + 1);
        unsigned t = grid[i]; grid[i] = grid[j]; grid[j] = t;
    }
    c->n_contexts = cfg->n_contexts;
    for (size_t k = 0; k < cfg->n_contexts; k++) {
        unsigned g = grid[k];
        unsigned m = g % 4, s = (g / 4) % 5, it = g / 20;
        bl_synth_context *cx = &c->contexts[k];
        snprintf(cx->machine_type, sizeof cx->machine_type, "%s", machines[m].name);
        cx->speed = machines[m].speed;
        cx->slots_per_machine = machines[m].slots;
        cx->memory_per_machine = machines[m].memory;
        cx->data_size_mb = sizes_mb[s];
        cx->iterations = iterations[it];
        double iters = (double)cx->iterations;
        cx->theta[0] = 15.0 + 2.0 * iters;
        cx->theta[1] = 40.0 * iters / cx->speed;
        cx->theta[2] = 6.0 / cx->speed;
        cx->theta[3] = 0.8;
        cx->shape = cfg->shape;
        cx->time_scale = cfg->time_scale;
    }
    size_t r = 0;
    for (size_t k = 0; k < cfg->n_contexts; k++)
        for (size_t i = 0; i < cfg->n_scale_outs; i++)
            for (size_t rep = 0; rep < cfg->reps; rep++, r++) {
                double x = cfg->scale_outs[i];
                double t = bl_synth_truth(&c->contexts[k], x);
                double f = 1.0 + cfg->noise * normal(&rng);
                if (f < 0.2) f = 0.2;
                c->scale_out[r] = x;
                c->truth_s[r] = t;
                /* As the TSV prints it (milliseconds, six significant digits below a second), so
                 * the file and memory agree. */
                const double v = t * f;
                char txt[32];
                snprintf(txt, sizeof txt, "%.6g", v);
                c->runtime_s[r] = v >= 1 ? round(v * 1000.0) / 1000.0 : strtod(txt, NULL);
                c->context[r] = (uint32_t)k;
            }
    c->n_rows = n;
    *out = c;
    return BL_OK;
}

bl_status bl_synth_tsv(const bl_synth_corpus *c, char **text, size_t *len, bl_error *err) {
    BL_CHECK_ARG(c && text && len, err, "synth: NULL argument");
    *text = NULL;
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    if (!f) return bl_seterr(err, BL_ENOMEM, "synth: out of memory");
    fprintf(f, "instance_count\tmachine_type\tslots\tmemory\tdata_size_MB\titerations\tgross_runtime\n");
    for (size_t r = 0; r < c->n_rows; r++) {
        const bl_synth_context *cx = &c->contexts[c->context[r]];
        double x = c->scale_out[r];
        /* milliseconds, or six significant digits below one second (a small --time-scale wrote 0.000) */
        const double t = c->runtime_s[r];
        fprintf(f, t >= 1 ? "%.0f\t%s\t%.0f\t%.0f\t%llu\t%llu\t%.3f\n" : "%.0f\t%s\t%.0f\t%.0f\t%llu\t%llu\t%.6g\n", x,
                cx->machine_type, (double)cx->slots_per_machine * x, (double)cx->memory_per_machine * x,
                (unsigned long long)cx->data_size_mb, (unsigned long long)cx->iterations, t);
    }
    if (fclose(f) != 0 || !buf) { free(buf); return bl_seterr(err, BL_ENOMEM, "synth: out of memory"); }
    *text = buf;
    *len = size;
    return BL_OK;
}

bl_status bl_synth_write(const bl_synth_corpus *c, const char *dir, const char *stem, bl_error *err) {
    BL_CHECK_ARG(c && dir && stem, err, "synth: NULL argument");
    char *tsv;
    size_t len;
    bl_status st = bl_synth_tsv(c, &tsv, &len, err);
    if (st != BL_OK) return st;
    size_t plen = strlen(dir) + strlen(stem) + 16;
    char *path = malloc(plen);
    if (!path) { free(tsv); return bl_seterr(err, BL_ENOMEM, "synth: out of memory"); }
    snprintf(path, plen, "%s/%s.tsv", dir, stem);
    st = bl_file_replace(path, tsv, len, err);
    if (st == BL_OK) {
        snprintf(path, plen, "%s/%s.schema", dir, stem);
        st = bl_file_replace(path, c->schema, strlen(c->schema), err);
    }
    free(path);
    free(tsv);
    return st;
}

bl_status bl_synth_dataset(const bl_synth_corpus *c, const bl_encode_settings *settings,
                           bl_dataset **out, bl_error *err) {
    BL_CHECK_ARG(c && out, err, "synth: NULL argument");
    *out = NULL;
    bl_schema *sc;
    bl_status st = bl_schema_parse("synth.schema", c->schema, strlen(c->schema), &sc, err);
    if (st != BL_OK) return st;
    char *tsv;
    size_t len;
    st = bl_synth_tsv(c, &tsv, &len, err);
    if (st == BL_OK) {
        st = bl_dataset_load_mem("synth.tsv", tsv, len, '\t', sc, settings, out, err);
        free(tsv);
    }
    bl_schema_free(sc);
    return st;
}
