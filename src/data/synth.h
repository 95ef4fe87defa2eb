/* synth.h — a seeded synthetic corpus of runtime curves with known ground truth, so the demo and the
 * tests have data where ../shared is absent.
 *
 * Shifted environments (other scale-out ranges, curve shapes, runtime scales, an environment of
 * their own) come from the same generator: bl_synth_config's shape, scale_outs, time_scale and
 * environment.
 * Each context is a distinct combination of machine type, input size and job argument (iterations),
 * drawn without repetition from a 4 × 5 × 3 grid by a seeded shuffle. Its noise-free runtime follows
 * Ernest's model (Venkataraman et al., NSDI 2016):
 *
 *     t(x) = θ0 + θ1 · size/x + θ2 · ln x + θ3 · x          (x = scale-out, size in GB)
 *
 * with θ derived from the context: θ0 = 15 + 2·iterations (start-up), θ1 = 40·iterations / speed
 * (parallel work per GB; speed is the machine type's relative speed), θ2 = 6 / speed (tree
 * aggregation), θ3 = 0.8 (per-machine overhead). Observed runtimes are t(x)·(1 + noise·z), z a
 * standard normal (Box–Muller on the project's generator, common/rng.h), limited to ≥ 0.2·t(x) so they stay positive.
 * Rows: every context × every scale-out × reps repetitions, in that order.
 *
 * The TSV has columns instance_count, machine_type, slots, memory, data_size_MB, iterations,
 * gross_runtime (s) and bl_synth_schema_text() is its schema (environment "synthetic corpus",
 * job_type "synth-spark", slots/memory as cluster totals).
 * Not here: anything the loader does (bl_synth_dataset goes through the ordinary reader).
 */
#ifndef BL_DATA_SYNTH_H
#define BL_DATA_SYNTH_H

#include <stddef.h>
#include <stdint.h>

#include "bellamy/bellamy.h"
#include "data/dataset.h"

#define BL_SYNTH_MAX_CONTEXTS 60    /* 4 machine types × 5 sizes × 3 iteration counts */
#define BL_SYNTH_MAX_SCALEOUTS 64

/* The curve's shape: the corpus's own Ernest form, or a shifted environment's (for measuring how a
 * model pre-trained on the default corpus copes with runs from elsewhere). With size in GB:
 *   ERNEST       t(x) = θ0 + θ1·size/x + θ2·ln x + θ3·x
 *   CLIFF        the Ernest form × 2.5 while the cluster's memory x·memory < 2·size (data spills)
 *   SUPERLINEAR  θ0 + θ1·size/x + θ2·ln x + θ1·size·x^1.5 / 400: communication grows faster than
 *                the machines (a U-shaped curve with an optimum)
 *   PLATEAU      4·θ0 + θ1·size/min(x, 16): a serial part four times larger, no speed-up past 16 */
typedef enum bl_synth_shape {
    BL_SYNTH_ERNEST = 0,
    BL_SYNTH_CLIFF = 1,
    BL_SYNTH_SUPERLINEAR = 2,
    BL_SYNTH_PLATEAU = 3
} bl_synth_shape;

typedef struct bl_synth_config {
    uint64_t seed;                          /* default 1 */
    size_t   n_contexts;                    /* 1..60, default 12 */
    size_t   n_scale_outs;                  /* default 6 */
    double   scale_outs[BL_SYNTH_MAX_SCALEOUTS];   /* default 2, 4, 6, 8, 10, 12 (each ≥ 1, integral) */
    size_t   reps;                          /* repetitions per scale-out, default 3 */
    double   noise;                         /* relative noise std dev, default 0.03 (0 = exact) */
    int      shape;                         /* bl_synth_shape, default BL_SYNTH_ERNEST */
    double   time_scale;                    /* every runtime × this (default 1; > 0) */
    char     environment[64];               /* the `environment` property's value (default "synthetic
                                               corpus"; printable ASCII, no double quote) */
} bl_synth_config;

typedef struct bl_synth_context {
    char     machine_type[16];
    double   speed;                         /* relative machine speed */
    uint64_t slots_per_machine, memory_per_machine;
    uint64_t data_size_mb;
    uint64_t iterations;
    double   theta[4];                      /* Ernest θ0..θ3 */
    int      shape;                         /* bl_synth_shape */
    double   time_scale;
} bl_synth_context;

typedef struct bl_synth_corpus {
    size_t            n_contexts;
    bl_synth_context *contexts;             /* [n_contexts] */
    size_t            n_rows;
    double           *scale_out;            /* [n_rows] */
    double           *runtime_s;            /* [n_rows] observed (noisy) */
    double           *truth_s;              /* [n_rows] noise-free t(x) */
    uint32_t         *context;              /* [n_rows] */
    char             *schema;               /* its schema text (the environment named in it) */
} bl_synth_corpus;

void bl_synth_config_default(bl_synth_config *c);
bl_status bl_synth_generate(const bl_synth_config *c, bl_synth_corpus **out, bl_error *err);
void bl_synth_free(bl_synth_corpus *c);

/* Noise-free runtime of context c at scale-out x (seconds). */
double bl_synth_truth(const bl_synth_context *c, double x);

/* The schema matching the TSV of the default configuration (static text); a corpus's own is
 * corpus->schema (they differ in the environment's value only). */
const char *bl_synth_schema_text(void);
/* "ernest", "cliff", "superlinear", "plateau" → shape; -1 for another name. */
int bl_synth_shape_from_name(const char *name);

/* The corpus as TSV text (malloc'd, NUL-terminated; *len without the NUL). */
bl_status bl_synth_tsv(const bl_synth_corpus *c, char **text, size_t *len, bl_error *err);

/* Writes DIR/STEM.tsv and DIR/STEM.schema (DIR must exist). */
bl_status bl_synth_write(const bl_synth_corpus *c, const char *dir, const char *stem, bl_error *err);

/* Loads the corpus through the ordinary reader and schema: contexts and rows keep the corpus order
 * (context k of the data set is context k of the corpus). settings NULL → defaults. */
bl_status bl_synth_dataset(const bl_synth_corpus *c, const bl_encode_settings *settings,
                           bl_dataset **out, bl_error *err);

#endif /* BL_DATA_SYNTH_H */
