/* train_finetune.c — bellamy-train finetune: a saved model fine-tuned on a few runs, its fit to them said,
 * the result saved. */
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

int bl_train_cmd_finetune(const char *prog, int argc, char **argv) {
    const char *model = NULL, *name = NULL, *data = NULL, *schema = NULL, *out = NULL, *out_name = NULL;
    bl_tune_opts to;
    bl_tune_opts_init(&to);
    long max_epochs = to.max_epochs, patience = to.patience, seed = (long)to.seed;
    double stop_mae = to.stop_mae_s, stop_rel = to.stop_rel;
    const char *stop = to.stop_cv ? "cv" : "mae", *guard = "on";
    int skip_invalid = 0;
    bl_tune_more more;
    bl_tune_more_init(&more);
    bl_cli_option opts[] = {
        { "model", BL_OPT_STRING, &model, "MODEL.h5", "model file to start from", NULL, 1, NULL, 0 },
        { "name", BL_OPT_STRING, &name, "NAME", "model inside the file", "the file's only model", 0, NULL, 0 },
        { "data", BL_OPT_STRING, &data, "RUNS", "runs of the new context (.tsv or .csv, same format as the training data)",
          NULL, 1, NULL, 0 },
        { "schema", BL_OPT_STRING, &schema, "FILE", "schema of RUNS", "the schema stored in the model", 0, NULL, 0 },
        { "out", BL_OPT_STRING, &out, "NEW.h5", "model file to write (may be MODEL.h5 itself)", NULL, 1, NULL, 0 },
        { "out-name", BL_OPT_STRING, &out_name, "NAME", "name of the fine-tuned model in NEW.h5", "the model's name", 0,
          NULL, 0 },
        { "max-epochs", BL_OPT_INT, &max_epochs, "N", "most fine-tuning epochs (1..1000000)", "2500", 0, NULL, 0 },
        { "patience", BL_OPT_INT, &patience, "N", "stop after N epochs without improvement (1..1000000)", "1000", 0, NULL, 0 },
        { "stop-mae", BL_OPT_DOUBLE, &stop_mae, "S", "stop when the training mean absolute error <= S seconds", "5", 0,
          NULL, 0 },
        { "stop-rel", BL_OPT_DOUBLE, &stop_rel, "F", "if > 0: stop when the MAE <= F x mean runtime instead", "0", 0, NULL,
          0 },
        { "seed", BL_OPT_INT, &seed, "S", "random seed", "1", 0, NULL, 0 },
        { "stop", BL_OPT_CHOICE, &stop, NULL,
          "cv: with 3 or more runs, train for the epoch count that cross-validation over the runs finds best "
          "(leave-one-out, at most 10 folds; the other stopping options then apply to 1-2 runs only); mae: the "
          "--stop-mae/--stop-rel/--patience rule for any number of runs", "cv", 0, "cv|mae", 0 },
        { "skip-invalid", BL_OPT_FLAG, &skip_invalid, NULL,
          "leave invalid rows of RUNS out (a failed run with a blank runtime, say), each named on stderr (without it "
          "the first one is an error)", NULL, 0, NULL, 0 },
        { "guard", BL_OPT_CHOICE, &guard, NULL,
          "on: runs reaching outside the scale-outs the model was pre-trained on weigh its network against Ernest "
          "fitted to them (the note says how); off: the fine-tuned network alone", "on", 0, "on|off", 0 },
    };
    const size_t nopts = sizeof opts / sizeof opts[0];
    int rc = bl_cli_parse(prog,
                          "bellamy-train finetune --model MODEL.h5 [--name NAME] --data RUNS [--schema FILE] --out NEW.h5\n"
                          "         [--out-name NAME] [--max-epochs N] [--patience N] [--stop-mae S] [--stop-rel F] [--seed S]\n"
                          "         [--stop cv|mae] [--skip-invalid] [--guard on|off]",
                          argc, argv, 1, opts, nopts, NULL, NULL);
    if (rc) return rc < 0 ? bl_cli_finish(prog) : rc;
    if (max_epochs < 1 || max_epochs > BL_TR_EPOCHS_MAX) {
        bl_cli_error(prog, "--max-epochs %ld: must be 1..%ld", max_epochs, BL_TR_EPOCHS_MAX);
        return BL_EXIT_USAGE;
    }
    if (patience < 1 || patience > BL_TR_EPOCHS_MAX) {
        bl_cli_error(prog, "--patience %ld: must be 1..%ld", patience, BL_TR_EPOCHS_MAX);
        return BL_EXIT_USAGE;
    }
    if (stop_mae < 0) { bl_cli_error(prog, "--stop-mae %g: must be >= 0", stop_mae); return BL_EXIT_USAGE; }
    if (stop_rel < 0) { bl_cli_error(prog, "--stop-rel %g: must be >= 0", stop_rel); return BL_EXIT_USAGE; }
    if (seed < 0) { bl_cli_error(prog, "--seed %ld: must be >= 0", seed); return BL_EXIT_USAGE; }
    to.max_epochs = max_epochs;
    to.patience = patience;
    to.stop_mae_s = stop_mae;
    to.stop_rel = stop_rel;
    to.seed = (unsigned long long)seed;
    to.stop_cv = strcmp(stop, "cv") == 0;
    more.guard = strcmp(guard, "on") == 0;
    if (out_name && (rc = bl_cli_check_model_name(prog, "out-name", out_name))) return rc;
    if ((rc = bl_cli_check_input(prog, "model", model)) || (rc = bl_cli_check_input(prog, "data", data)) ||
        (schema && (rc = bl_cli_check_input(prog, "schema", schema))) || (rc = bl_tr_check_model_out(prog, "out", out)))
        return rc;

    bl_error err = { 0 };
    bl_predictor *base = NULL, *tuned = NULL;
    bl_data *runs = NULL;
    double t0 = bl_tr_now_s();
    bl_cli_note_unverified(prog, model);
    bl_status st = bl_predictor_load(model, name, &base, &err);
    /* Loaded first (as bl_predictor_finetune_file would) to warn about runs of several contexts:
     * fine-tuning is meant for one, the new job's; the library fine-tunes on them all regardless. */
    if (st == BL_OK) st = bl_runs_load(base, data, schema, skip_invalid, &runs, &err);
    if (st == BL_OK) bl_cli_note_skipped(prog, "data", runs);
    bl_data_summary rs = { 0 };
    if (st == BL_OK) bl_data_summarize(runs, &rs);
    if (st == BL_OK && rs.contexts > 1) {
        char spread[600];
        bl_data_context_spread(runs, spread, sizeof spread);
        fprintf(stderr, "%s: note: --data %s holds runs of %zu contexts, which differ in %s; fine-tuning is meant for "
                "the runs of one context (the new job), and uses all %zu runs\n", prog, data, rs.contexts, spread,
                rs.rows);
    }
    if (st == BL_OK) st = bl_predictor_finetune_data(base, runs, &to, &more, &tuned, &err);
    if (st == BL_OK) st = bl_predictor_save(tuned, out, out_name, &err);
    if (st == BL_OK) {
        bl_model_info mi;
        bl_predictor_info(tuned, &mi);
        printf("fine-tuned '%s' on %lld run%s in %lld epochs (%.3f s): training MAE %.4g s; saved to %s as '%s'\n",
               bl_predictor_name(base), mi.finetune_runs, mi.finetune_runs == 1 ? "" : "s", mi.finetune_epochs,
               bl_tr_now_s() - t0, mi.finetune_mae_s, out, out_name ? out_name : bl_predictor_name(tuned));
        /* the context it was fine-tuned for, as stored in the file (bellamy-train info shows it again) */
        printf("fine-tuned for:");
        for (size_t i = 0; i < bl_predictor_prop_count(tuned); i++) {
            bl_prop_info pi;
            const char *v;
            bl_predictor_prop(tuned, i, &pi);
            if (bl_predictor_finetune_context(tuned, i, &v) == BL_OK) printf("%s%s='%s'", i ? "; " : " ", pi.name, v);
        }
        putchar('\n');
        bl_tr_print_fit_lines(tuned, "");
        bl_tr_note_fit(prog, tuned);
        /* how far the runs let it trust the network against Ernest (the guard): said as bellamy-predict
         * says it, when the runtimes are not the fine-tuned network's alone */
        const char *meth = "network", *why = "";
        double ew = 0;
        bl_predictor_method(tuned, &meth, &ew, &why);
        if (strcmp(meth, "network") != 0)
            fprintf(stderr, "%s: note: runtimes are %s (Ernest's weight %.3g): %s\n", prog,
                    strcmp(meth, "ernest") == 0 ? "Ernest's fit to the fine-tuning runs" : "a blend of the network and Ernest",
                    ew, why);
    }
    bl_data_free(runs);
    bl_predictor_free(tuned);
    bl_predictor_free(base);
    if (st != BL_OK) return bl_cli_fail(prog, &err);
    return bl_cli_finish(prog);
}
