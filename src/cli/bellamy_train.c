/* bellamy_train.c — the `bellamy-train` program: one entry point, one subcommand per task.
 *
 *   bellamy-train inspect --data FILE --schema FILE [--row K] [--delimiter tab|comma]
 *
 * Subcommands live in the table `commands` below; each is a function (prog, argc, argv) that parses
 * its own options with bl_cli_parse (argv[0] is the subcommand's name) and returns an exit code
 * (0 ok, 1 failure, 2 usage error). To add one, write cmd_NAME and add a row to the table.
 * Not here: library logic (src/), option parsing machinery (cli_util.c).
 */
#include "cli/cli_util.h"
#include "bl_config.h"
#include "data/dataset.h"
#include "encode/encode.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void print_vec(const double *v, size_t n) {
    for (size_t i = 0; i < n; i++) printf("%s%.6g", i ? " " : "", v[i]);
    putchar('\n');
}

/* ---- inspect ------------------------------------------------------------------------------------ */

static int cmd_inspect(const char *prog, int argc, char **argv) {
    const char *data = NULL, *schema = NULL, *delim = NULL;
    size_t row = 0;
    bl_cli_option opts[] = {
        { "data", BL_OPT_STRING, &data, "FILE", "data file (.tsv or .csv) with a header line", NULL, 1, NULL, 0 },
        { "schema", BL_OPT_STRING, &schema, "FILE", "schema file (format: datasets/README.md)", NULL, 1, NULL, 0 },
        { "row", BL_OPT_SIZE, &row, "K", "also show the encoding of row K (0-based data row)", "none", 0, NULL, 0 },
        { "delimiter", BL_OPT_CHOICE, &delim, NULL, "field delimiter", "by extension: .tsv tab, .csv comma", 0,
          "tab|comma", 0 },
    };
    const size_t nopts = sizeof opts / sizeof opts[0];
    int rc = bl_cli_parse(prog, "bellamy-train inspect --data FILE --schema FILE [--row K] [--delimiter tab|comma]",
                          argc, argv, 1, opts, nopts, NULL, NULL);
    if (rc) return rc < 0 ? BL_EXIT_OK : rc;

    bl_error err;
    bl_dataset *ds;
    bl_encode_settings es;
    bl_encode_settings_default(&es);
    if (bl_dataset_load(data, schema, bl_cli_delim(delim), &es, &ds, &err) != BL_OK) return bl_cli_fail(prog, &err);
    if (opts[2].seen && row >= ds->n_rows) {
        bl_cli_error(prog, "--row %zu: the data set has %zu rows (0..%zu)", row, ds->n_rows, ds->n_rows - 1);
        bl_dataset_free(ds);
        return BL_EXIT_FAIL;
    }
    double xmin = ds->scale_out[0], xmax = xmin, tmin = ds->runtime_s[0], tmax = tmin;
    for (size_t r = 1; r < ds->n_rows; r++) {
        if (ds->scale_out[r] < xmin) xmin = ds->scale_out[r];
        if (ds->scale_out[r] > xmax) xmax = ds->scale_out[r];
        if (ds->runtime_s[r] < tmin) tmin = ds->runtime_s[r];
        if (ds->runtime_s[r] > tmax) tmax = ds->runtime_s[r];
    }
    printf("data: %s\n", data);
    printf("schema: %s\n", schema);
    printf("data hash: xxh64:%016llx\n", (unsigned long long)ds->data_hash);
    printf("rows: %zu\n", ds->n_rows);
    printf("contexts: %zu\n", ds->n_contexts);
    printf("scale-out: %g .. %g\n", xmin, xmax);
    printf("runtime (s): %g .. %g\n", tmin, tmax);
    printf("properties: %zu\n", ds->n_props);
    for (size_t p = 0; p < ds->n_props; p++) {
        const bl_dataset_prop *pr = &ds->props[p];
        printf("property %s: %s %s%s (%zu distinct value%s)\n", pr->name, pr->essential ? "essential" : "optional",
               pr->kind == BL_PROP_NUMBER ? "number" : "text", pr->cluster_total ? " cluster-total" : "",
               pr->n_values, pr->n_values == 1 ? "" : "s");
    }
    if (opts[2].seen) {
        int ok = 1;
        double *feat = malloc(ds->n_rows * BL_SCALEOUT_NFEAT * sizeof *feat);
        bl_minmax mm;
        if (!feat) ok = 0;
        if (ok) {
            bl_dataset_scaleout_features(ds, feat);
            ok = bl_minmax_fit(&mm, feat, ds->n_rows, BL_SCALEOUT_NFEAT, &err) == BL_OK;
        }
        if (!ok) {
            free(feat);
            bl_dataset_free(ds);
            return bl_cli_fail(prog, &err);
        }
        double scaled[BL_SCALEOUT_NFEAT];
        bl_minmax_transform(&mm, feat + row * BL_SCALEOUT_NFEAT, 1, scaled);
        printf("row: %zu (data row %zu)\n", row, ds->src_row[row]);
        printf("context: %u (%s)\n", (unsigned)ds->context[row], ds->contexts[ds->context[row]].label);
        printf("scale-out: %g\n", ds->scale_out[row]);
        printf("runtime (s): %g\n", ds->runtime_s[row]);
        printf("scale-out features [1/x, ln x, x]: ");
        print_vec(feat + row * BL_SCALEOUT_NFEAT, BL_SCALEOUT_NFEAT);
        printf("scale-out features min-max scaled over this file: ");
        print_vec(scaled, BL_SCALEOUT_NFEAT);
        for (size_t p = 0; p < ds->n_props; p++) {
            const bl_dataset_prop *pr = &ds->props[p];
            printf("%s = \"%s\": ", pr->name, pr->values[pr->row_value[row]]);
            print_vec(bl_dataset_vec(ds, p, row), ds->settings.vec_len);
        }
        free(feat);
    }
    bl_dataset_free(ds);
    return fflush(stdout) == 0 ? BL_EXIT_OK : BL_EXIT_FAIL;
}

/* ---- dispatch ----------------------------------------------------------------------------------- */

typedef int (*command_fn)(const char *prog, int argc, char **argv);

static const struct command {
    const char *name;
    const char *summary;
    command_fn  run;
} commands[] = {
    { "inspect", "load a data file through a schema; show rows, contexts, properties and one row's encoding",
      cmd_inspect },
};

static void usage(FILE *f) {
    fprintf(f, "usage: bellamy-train COMMAND [options]   (bellamy-train COMMAND --help for its options)\n"
               "       bellamy-train --help | --version\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %-12s %s\n", commands[i].name, commands[i].summary);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        usage(stderr);
        return BL_EXIT_USAGE;
    }
    const char *a = argv[1];
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) { usage(stdout); return BL_EXIT_OK; }
    if (strcmp(a, "--version") == 0) { printf("bellamy-train %s\n", BL_VERSION); return BL_EXIT_OK; }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        if (strcmp(a, commands[i].name) == 0) {
            char prog[64];
            snprintf(prog, sizeof prog, "bellamy-train %s", commands[i].name);
            return commands[i].run(prog, argc - 1, argv + 1);
        }
    }
    bl_cli_error("bellamy-train", "unknown command '%s' (try --help)", a);
    return BL_EXIT_USAGE;
}
