/* train_synth.c — bellamy-train synth: the synthetic corpus (known runtime curves) or a shifted
 * environment of it. */
#include "cli/train_cmds.h"
#include "cli/cli_util.h"
#include "bellamy/bellamy.h"
#include "bellamy/train.h"
#include "common/file.h"
#include "common/suggest.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

/* --scale-outs: the one scale-out list syntax (bl_cli_scale_outs), 1..100000, at most 64 of them. */
static int synth_scale_outs(const char *prog, const char *spec, bl_corpus_opts *c) {
    double *x;
    size_t n;
    int rc = bl_cli_scale_outs(prog, "scale-outs", spec, 100000, BL_CORPUS_SCALE_OUTS_MAX, &x, &n);
    if (rc) return rc;
    memcpy(c->scale_outs, x, n * sizeof *x);
    c->n_scale_outs = n;
    free(x);
    return 0;
}

int bl_train_cmd_synth(const char *prog, int argc, char **argv) {
    const char *dir = NULL, *stem = "synth";
    bl_corpus_opts c;
    bl_corpus_opts_init(&c);
    size_t contexts = c.contexts, reps = c.reps;
    long seed = (long)c.seed;
    double noise = c.noise, time_scale = 1.0;
    const char *xs_spec = NULL, *shape_s = NULL, *env = NULL;
    bl_cli_option opts[] = {
        { "out-dir", BL_OPT_STRING, &dir, "DIR", "folder to write STEM.tsv and STEM.schema into (must exist)", NULL, 1,
          NULL, 0 },
        { "stem", BL_OPT_STRING, &stem, "STEM", "file name stem", "synth", 0, NULL, 0 },
        { "contexts", BL_OPT_SIZE, &contexts, "N", "contexts (1..60)", "12", 0, NULL, 0 },
        { "reps", BL_OPT_SIZE, &reps, "N", "repetitions per scale-out (1..1000)", "3", 0, NULL, 0 },
        { "noise", BL_OPT_DOUBLE, &noise, "F", "relative noise (standard deviation, 0..1)", "0.03", 0, NULL, 0 },
        { "seed", BL_OPT_INT, &seed, "S", "random seed", "1", 0, NULL, 0 },
        { "scale-outs", BL_OPT_STRING, &xs_spec, "LIST", "scale-outs: N, A..B or A..B:STEP, or a list of them (4,8,16..32:8; 1..100000, at most 64)",
          "2..12:2", 0, NULL, 0 },
        { "shape", BL_OPT_STRING, &shape_s, "ernest|cliff|superlinear|plateau",
          "the curves' shape (src/data/synth.h; the others are shifted environments)", "ernest", 0, NULL, 0 },
        { "time-scale", BL_OPT_DOUBLE, &time_scale, "F", "every runtime times F (1e-4 <= F <= 1e6)", "1", 0, NULL, 0 },
        { "environment", BL_OPT_STRING, &env, "TEXT", "the environment property's value", "synthetic corpus", 0, NULL,
          0 },
    };
    const size_t nopts = sizeof opts / sizeof opts[0];
    int rc = bl_cli_parse(prog,
                          "bellamy-train synth --out-dir DIR [--stem STEM] [--contexts N] [--reps N] [--noise F] [--seed S]\n"
                          "                    [--scale-outs LIST] [--shape S] [--time-scale F] [--environment TEXT]\n"
                          "Writes the synthetic corpus (Ernest-form runtime curves, scale-outs 2..12) and its schema, or a\n"
                          "shifted environment of it (other scale-outs, shape, runtime scale, environment).",
                          argc, argv, 1, opts, nopts, NULL, NULL);
    if (rc) return rc < 0 ? bl_cli_finish(prog) : rc;
    if (contexts < 1 || contexts > BL_CORPUS_CONTEXTS_MAX) {
        bl_cli_error(prog, "--contexts %zu: must be 1..%d", contexts, BL_CORPUS_CONTEXTS_MAX);
        return BL_EXIT_USAGE;
    }
    /* the bounds bl_corpus_write checks, named by flag here */
    if (reps < 1 || reps > 1000) { bl_cli_error(prog, "--reps %zu: must be 1..1000", reps); return BL_EXIT_USAGE; }
    if (noise < 0 || noise > 1) { bl_cli_error(prog, "--noise %g: must be 0..1", noise); return BL_EXIT_USAGE; }
    if (strchr(stem, '/') || strcmp(stem, ".") == 0 || strcmp(stem, "..") == 0) {
        bl_cli_error(prog, "--stem '%s': a file name without folders (the folder is --out-dir)", stem);
        return BL_EXIT_USAGE;
    }
    struct stat dst;
    if (stat(dir, &dst) != 0) { bl_cli_error(prog, "--out-dir %s: %s", dir, strerror(errno)); return BL_EXIT_FAIL; }
    if (!S_ISDIR(dst.st_mode)) { bl_cli_error(prog, "--out-dir %s: not a folder", dir); return BL_EXIT_FAIL; }
    if (seed < 0) { bl_cli_error(prog, "--seed %ld: must be >= 0", seed); return BL_EXIT_USAGE; }
    c.contexts = contexts;
    c.reps = reps;
    c.noise = noise;
    c.seed = (unsigned long long)seed;
    if (xs_spec && (rc = synth_scale_outs(prog, xs_spec, &c))) return rc;
    if (shape_s && (c.shape = bl_corpus_shape(shape_s)) < 0) {
        bl_cli_error(prog, "--shape '%s': one of ernest, cliff, superlinear, plateau", shape_s);
        return BL_EXIT_USAGE;
    }
    if (!(time_scale >= 1e-4 && time_scale <= 1e6)) {
        bl_cli_error(prog, "--time-scale %g: must be from 1e-4 to 1e6 (runtimes stay above a millisecond)", time_scale);
        return BL_EXIT_USAGE;
    }
    c.time_scale = time_scale;
    if (env) {
        int printable = 1, allowed = 1; /* a schema constant holds printable ASCII, no quote or backslash */
        for (const unsigned char *q = (const unsigned char *)env; *q; q++) {
            printable &= *q >= 0x20 && *q < 0x7f;
            allowed &= *q != '"' && *q != '\\';
        }
        if (!*env || strlen(env) > BL_CORPUS_ENVIRONMENT_MAX || !printable || !allowed) {
            bl_cli_error(prog, "--environment: 1..%d printable ASCII characters without a quote or backslash (a "
                         "schema constant holds it); %s%.60s%s is not", BL_CORPUS_ENVIRONMENT_MAX, printable ? "'" : "",
                         printable ? env : "a value with control or non-ASCII bytes",
                         !printable ? "" : strlen(env) > 60 ? "...'" : "'");
            return BL_EXIT_USAGE;
        }
        c.environment = env;
    }
    bl_error err = { 0 };
    size_t n_rows = 0, n_contexts = 0;
    bl_status st = bl_corpus_write(&c, dir, stem, &n_rows, &n_contexts, &err);
    if (st == BL_OK) printf("%s/%s.tsv (%zu rows, %zu contexts) and %s/%s.schema\n", dir, stem, n_rows, n_contexts, dir,
                            stem);
    if (st != BL_OK) return bl_cli_fail(prog, &err);
    return bl_cli_finish(prog);
}
