/* train_inspect.c — bellamy-train inspect: a data file read through a schema, its rows, contexts and
 * properties, and one row as the model reads it. */
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

static void print_vec(const double *v, size_t n) {
    for (size_t i = 0; i < n; i++) printf("%s%.6g", i ? " " : "", v[i]);
    putchar('\n');
}

int bl_train_cmd_inspect(const char *prog, int argc, char **argv) {
    const char *data = NULL, *schema = NULL, *delim = NULL;
    size_t row = 0;
    int json = 0, skip_invalid = 0;
    bl_cli_option opts[] = {
        { "data", BL_OPT_STRING, &data, "FILE", "data file (.tsv or .csv) with a header line", NULL, 1, NULL, 0 },
        { "schema", BL_OPT_STRING, &schema, "FILE", "schema file (format: datasets/README.md)", NULL, 1, NULL, 0 },
        { "row", BL_OPT_SIZE, &row, "K", "also show the encoding of row K (0-based data row)", "none", 0, NULL, 0 },
        { "delimiter", BL_OPT_CHOICE, &delim, NULL, "field delimiter", "by extension: .tsv tab, .csv comma; other names: a tab in the first line, else comma", 0,
          "tab|comma", 0 },
        { "skip-invalid", BL_OPT_FLAG, &skip_invalid, NULL,
          "leave invalid rows out, each named on stderr (without it the first one is an error)", NULL, 0, NULL, 0 },
        { "json", BL_OPT_FLAG, &json, NULL, "write one JSON object instead of text", NULL, 0, NULL, 0 },
    };
    const size_t nopts = sizeof opts / sizeof opts[0];
    int rc = bl_cli_parse(prog, "bellamy-train inspect --data FILE --schema FILE [--row K] [--delimiter tab|comma]\n"
                          "         [--skip-invalid] [--json]",
                          argc, argv, 1, opts, nopts, NULL, NULL);
    if (rc) return rc < 0 ? bl_cli_finish(prog) : rc;
    if ((rc = bl_cli_check_input(prog, "data", data)) || (rc = bl_cli_check_input(prog, "schema", schema))) return rc;

    bl_error err;
    bl_data *ds;
    bl_data_opts dopt;
    bl_data_opts_init(&dopt);
    dopt.delimiter = bl_cli_delim(delim);
    dopt.skip_invalid = skip_invalid;
    if (bl_data_load(data, schema, &dopt, &ds, &err) != BL_OK) return bl_cli_fail(prog, &err);
    bl_cli_note_skipped(prog, "data", ds);
    bl_data_summary sum;
    bl_data_summarize(ds, &sum);
    if (opts[2].seen && row >= sum.rows) {
        bl_cli_error(prog, "--row %zu: the data set has %zu rows (0..%zu)", row, sum.rows, sum.rows - 1);
        bl_data_free(ds);
        return BL_EXIT_FAIL;
    }
    const double xmin = sum.scale_out_min, xmax = sum.scale_out_max, tmin = sum.runtime_min_s, tmax = sum.runtime_max_s;
    const char *rt_col = "", *rt_unit = "s";   /* where the runtimes come from, before they became seconds */
    bl_data_runtime_column(ds, &rt_col, &rt_unit);
    double feat[BL_SCALE_OUT_FEATURES], scaled[BL_SCALE_OUT_FEATURES];
    bl_data_row rw = { 0 };
    const char *label = "";
    if (opts[2].seen) {
        if (bl_data_scale_out_features(ds, row, feat, scaled, &err) != BL_OK) {
            bl_data_free(ds);
            return bl_cli_fail(prog, &err);
        }
        bl_data_get_row(ds, row, &rw);
        bl_data_context(ds, rw.context, &label, NULL);
    }
    if (json) {
        printf("{\"data\":");
        bl_cli_json_str(data);
        printf(",\"schema\":");
        bl_cli_json_str(schema);
        printf(",\"data_hash\":\"xxh64:%016llx\",\"rows\":%zu,\"contexts\":%zu,\"skipped_rows\":%zu", sum.data_hash,
               sum.rows, sum.contexts, sum.skipped);
        printf(",\"scale_out\":{\"min\":%s,\"max\":%s},\"runtime_s\":{\"min\":%s,\"max\":%s}", bl_cli_num(xmin), bl_cli_num(xmax),
               bl_cli_num(tmin), bl_cli_num(tmax));
        printf(",\"runtime_column\":");
        bl_cli_json_str(rt_col);
        printf(",\"runtime_unit\":\"%s\"", rt_unit);
        printf(",\"properties\":[");
        for (size_t p = 0; p < sum.props; p++) {
            bl_data_prop pr;
            bl_data_property(ds, p, &pr);
            printf("%s{\"name\":", p ? "," : "");
            bl_cli_json_str(pr.name);
            printf(",\"essential\":%s,\"kind\":\"%s\",\"cluster_total\":%s,\"distinct_values\":%zu}",
                   pr.essential ? "true" : "false", pr.number ? "number" : "text",
                   pr.cluster_total ? "true" : "false", pr.distinct);
        }
        printf("]");
        if (opts[2].seen) {
            printf(",\"row\":{\"index\":%zu,\"data_row\":%zu,\"context\":%u,\"context_label\":", row, rw.data_row,
                   (unsigned)rw.context);
            bl_cli_json_str(label);
            printf(",\"scale_out\":%s,\"runtime_s\":%s,\"scale_out_features\":[", bl_cli_num(rw.scale_out),
                   bl_cli_num(rw.runtime_s));
            for (int k = 0; k < BL_SCALE_OUT_FEATURES; k++) printf("%s%s", k ? "," : "", bl_cli_num(feat[k]));
            printf("],\"scale_out_features_scaled\":[");
            for (int k = 0; k < BL_SCALE_OUT_FEATURES; k++) printf("%s%s", k ? "," : "", bl_cli_num(scaled[k]));
            printf("],\"values\":{");
            for (size_t p = 0; p < sum.props; p++) {
                bl_data_prop pr;
                const char *v;
                const double *vec;
                bl_data_property(ds, p, &pr);
                bl_data_value(ds, p, row, &v, &vec);
                printf("%s", p ? "," : "");
                bl_cli_json_str(pr.name);
                printf(":{\"value\":");
                bl_cli_json_value(v, pr.number);
                printf(",\"vector\":[");
                for (size_t k = 0; k < sum.vec_len; k++) printf("%s%s", k ? "," : "", bl_cli_num(vec[k]));
                printf("]}");
            }
            printf("}}");
        }
        printf("}\n");
        bl_data_free(ds);
        return bl_cli_finish(prog);
    }
    printf("data: %s\n", data);
    printf("schema: %s\n", schema);
    printf("data hash: xxh64:%016llx\n", sum.data_hash);
    printf("rows: %zu\n", sum.rows);
    if (sum.skipped) printf("skipped rows: %zu (invalid; --skip-invalid)\n", sum.skipped);
    printf("contexts: %zu\n", sum.contexts);
    printf("scale-out: %g .. %g\n", xmin, xmax);
    printf("runtime (s): %g .. %g (from column '%s' in %s)\n", tmin, tmax, rt_col, rt_unit);
    printf("properties: %zu\n", sum.props);
    for (size_t p = 0; p < sum.props; p++) {
        bl_data_prop pr;
        bl_data_property(ds, p, &pr);
        printf("property %s: %s %s%s (%zu distinct value%s)\n", pr.name, pr.essential ? "essential" : "optional",
               pr.number ? "number" : "text", pr.cluster_total ? " cluster-total" : "", pr.distinct,
               pr.distinct == 1 ? "" : "s");
    }
    if (opts[2].seen) {
        printf("row: %zu (data row %zu)\n", row, rw.data_row);
        printf("context: %u (%s)\n", (unsigned)rw.context, label);
        printf("scale-out: %g\n", rw.scale_out);
        printf("runtime (s): %g\n", rw.runtime_s);
        printf("scale-out features [1/x, ln x, x]: ");
        print_vec(feat, BL_SCALE_OUT_FEATURES);
        printf("scale-out features min-max scaled over this file: ");
        print_vec(scaled, BL_SCALE_OUT_FEATURES);
        for (size_t p = 0; p < sum.props; p++) {
            bl_data_prop pr;
            const char *v;
            const double *vec;
            bl_data_property(ds, p, &pr);
            bl_data_value(ds, p, row, &v, &vec);
            printf("%s = \"%s\": ", pr.name, v);
            print_vec(vec, sum.vec_len);
        }
    }
    bl_data_free(ds);
    return bl_cli_finish(prog);
}
