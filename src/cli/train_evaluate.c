/* train_evaluate.c — bellamy-train evaluate: every run of a data file predicted and compared, per context
 * and scale-out. */
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

int bl_train_cmd_evaluate(const char *prog, int argc, char **argv) {
    const char *model = NULL, *name = NULL, *data = NULL, *schema = NULL;
    int json = 0, skip_invalid = 0;
    bl_cli_option opts[] = {
        { "model", BL_OPT_STRING, &model, "MODEL.h5", "model file", NULL, 1, NULL, 0 },
        { "name", BL_OPT_STRING, &name, "NAME", "model inside the file", "the file's only model", 0, NULL, 0 },
        { "data", BL_OPT_STRING, &data, "RUNS", "runs to predict (.tsv or .csv)", NULL, 1, NULL, 0 },
        { "schema", BL_OPT_STRING, &schema, "FILE", "schema of RUNS", "the schema stored in the model", 0, NULL, 0 },
        { "skip-invalid", BL_OPT_FLAG, &skip_invalid, NULL,
          "leave invalid rows of RUNS out, each named on stderr (without it the first one is an error)", NULL, 0,
          NULL, 0 },
        { "json", BL_OPT_FLAG, &json, NULL, "write one JSON object instead of TSV", NULL, 0, NULL, 0 },
    };
    const size_t nopts = sizeof opts / sizeof opts[0];
    int rc = bl_cli_parse(prog, "bellamy-train evaluate --model MODEL.h5 [--name NAME] --data RUNS [--schema FILE]\n"
                          "         [--skip-invalid] [--json]", argc,
                          argv, 1, opts, nopts, NULL, NULL);
    if (rc) return rc < 0 ? bl_cli_finish(prog) : rc;
    if ((rc = bl_cli_check_input(prog, "model", model)) || (rc = bl_cli_check_input(prog, "data", data)) ||
        (schema && (rc = bl_cli_check_input(prog, "schema", schema))))
        return rc;

    bl_error err = { 0 };
    bl_predictor *m = NULL;
    bl_evaluation *ev = NULL;
    bl_cli_note_unverified(prog, model);
    bl_status st = bl_predictor_load(model, name, &m, &err);
    if (st == BL_OK) st = bl_evaluate_file(m, data, schema, skip_invalid, &ev, &err);
    if (st == BL_OK) {
        const bl_data *ds = bl_evaluation_data(ev);
        bl_data_summary sum;
        bl_data_summarize(ds, &sum);
        bl_cli_note_skipped(prog, "data", ds);
        if (json) {
            printf("{\"model\":");
            bl_cli_json_str(bl_predictor_name(m));
            printf(",\"data\":");
            bl_cli_json_str(data);
            printf(",\"runs\":%zu,\"skipped_rows\":%zu,\"contexts\":%zu,\"context_labels\":[", sum.rows, sum.skipped,
                   sum.contexts);
            for (size_t c = 0; c < sum.contexts; c++) {
                const char *label = "";
                bl_data_context(ds, c, &label, NULL);
                printf("%s", c ? "," : "");
                bl_cli_json_str(label);
            }
            printf("],\"scale_outs\":[");
        } else if (sum.contexts > 1) { /* several contexts: one row per context and scale-out, never pooled */
            printf("context\tscale_out\truns\tmeasured_mean_s\tpredicted_s\trelative_error\n");
        } else {
            printf("scale_out\truns\tmeasured_mean_s\tpredicted_s\trelative_error\n");
        }
        const size_t n_x = bl_evaluation_count(ev);
        for (size_t i = 0; i < n_x; i++) {
            bl_eval_row r;
            bl_evaluation_row(ev, i, &r);
            if (json) {
                printf("%s{\"context\":%zu,\"scale_out\":%s,\"runs\":%zu,\"measured_mean_s\":", i ? "," : "", r.context + 1,
                       bl_cli_num(r.scale_out), r.runs);
                bl_cli_json_num(r.measured_mean_s);
                printf(",\"predicted_s\":");
                bl_cli_json_num(r.predicted_mean_s);
                printf(",\"relative_error\":");
                bl_cli_json_num(r.relative_error);
                putchar('}');
            } else {
                if (sum.contexts > 1) printf("%zu\t", r.context + 1);
                printf("%g\t%zu\t%.2f\t%.2f\t%.2f%%\n", r.scale_out, r.runs, r.measured_mean_s, r.predicted_mean_s,
                       100 * r.relative_error);
            }
        }
        if (json) {
            printf("],\"mean_relative_error\":");
            bl_cli_json_num(bl_evaluation_mean_relative_error(ev));
            printf("}\n");
        } else if (sum.contexts > 1) {
            for (size_t c = 0; c < sum.contexts; c++) {
                const char *label = "";
                bl_data_context(ds, c, &label, NULL);
                printf("# context %zu: %s\n", c + 1, label);
            }
            printf("# mean relative error over %zu contexts x scale-outs: %.2f%%\n", n_x,
                   100 * bl_evaluation_mean_relative_error(ev));
        } else {
            printf("# mean relative error over %zu scale-out%s: %.2f%%\n", n_x, n_x == 1 ? "" : "s",
                   100 * bl_evaluation_mean_relative_error(ev));
        }
    }
    bl_evaluation_free(ev);
    bl_predictor_free(m);
    if (st != BL_OK) return bl_cli_fail(prog, &err);
    return bl_cli_finish(prog);
}
