/* bellamy_train.c — the `bellamy-train` program: one entry point, one subcommand per task, each in a
 * file of its own (train_<command>.c; train_cmds.h lists them, train_util.c holds what several share).
 *
 *   bellamy-train inspect  --data FILE --schema FILE [--row K] [--delimiter tab|comma]
 *   bellamy-train pretrain --data FILE --schema FILE --out MODEL.h5 [--name NAME] [--trials 12] ...
 *   bellamy-train finetune --model MODEL.h5 [--name NAME] --data RUNS [--schema FILE] --out NEW.h5
 *   bellamy-train evaluate --model MODEL.h5 [--name NAME] --data RUNS [--schema FILE] [--json]
 *   bellamy-train info     --model MODEL.h5 [--name NAME] [--json]
 *   bellamy-train check    --model MODEL.h5 [--stamp] [--json]
 *   bellamy-train split    --data FILE --schema FILE --context K --held-out A.tsv --rest B.tsv ...
 *   bellamy-train synth    --out-dir DIR [--contexts N] ...
 *   bellamy-train import   --out FILE.tsv LOG|FOLDER ...
 *
 * To add a command: write bl_train_cmd_NAME in train_NAME.c, declare it in train_cmds.h and add a row
 * to the table below. The commands see the library through its public headers only (bellamy/bellamy.h,
 * bellamy/train.h). Not here: library logic (src/), option parsing machinery (cli_util.c).
 */
#include "cli/cli_util.h"
#include "cli/train_cmds.h"
#include "bellamy/bellamy.h"
#include "common/suggest.h"

#include <stdio.h>
#include <string.h>

/* ---- dispatch ----------------------------------------------------------------------------------- */

typedef int (*command_fn)(const char *prog, int argc, char **argv);

static const struct command {
    const char *name;
    const char *summary;
    command_fn  run;
} commands[] = {
    { "inspect", "load a data file through a schema; show rows, contexts, properties and one row's encoding",
      bl_train_cmd_inspect },
    { "pretrain", "pre-train a model (hyper-parameter search) on a data file and save it", bl_train_cmd_pretrain },
    { "finetune", "fine-tune a saved model on a few runs of a new context and save the result", bl_train_cmd_finetune },
    { "evaluate", "predict every run of a data file; measured vs. predicted per scale-out", bl_train_cmd_evaluate },
    { "info", "what a model knows: its properties and what each needs, the values and ranges it was trained on, "
      "its training and fine-tuning (and for which context), members and encodings", bl_train_cmd_info },
    { "check", "load and check every model of a model file (checksum, blocks, attributes); --stamp adds a checksum", bl_train_cmd_check },
    { "split", "hold one context of a data file out: write its rows and the other rows to two files",
      bl_train_cmd_split },
    { "synth", "write the synthetic corpus (known runtime curves) and its schema", bl_train_cmd_synth },
    { "import", "Spark event logs and Flink job archives into a data file of runs and a schema to edit",
      bl_train_cmd_import },
};

static void usage(FILE *f) {
    fprintf(f, "usage: bellamy-train COMMAND [options]   (bellamy-train COMMAND --help for its options)\n"
               "       bellamy-train --help | --version\n\ncommands:\n");
    size_t w = 0;
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strlen(commands[i].name) > w) w = strlen(commands[i].name);
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        fprintf(f, "  %-*s  ", (int)w, commands[i].name);
        if (f == stdout) bl_cli_print_wrapped(commands[i].summary, w + 4, w + 4, bl_cli_width());
        else fprintf(f, "%s\n", commands[i].summary);
    }
}

int main(int argc, char **argv) {
    bl_cli_init();
    if (argc < 2) {
        usage(stderr);
        return BL_EXIT_USAGE;
    }
    const char *a = argv[1];
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) { usage(stdout); return bl_cli_finish("bellamy-train"); }
    if (strcmp(a, "--version") == 0) {
        if (argc > 2) { bl_cli_error("bellamy-train", "--version takes no other arguments"); return BL_EXIT_USAGE; }
        return bl_cli_version("bellamy-train");
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        if (strcmp(a, commands[i].name) == 0) {
            char prog[64];
            snprintf(prog, sizeof prog, "bellamy-train %s", commands[i].name);
            return commands[i].run(prog, argc - 1, argv + 1);
        }
    }
    const char *names[sizeof commands / sizeof commands[0]];
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) names[i] = commands[i].name;
    char hint[400];
    bl_suggest(a, names, sizeof names / sizeof names[0], "", hint, sizeof hint);
    bl_cli_error("bellamy-train", "unknown command '%s'%s (try --help)", a, hint);
    return BL_EXIT_USAGE;
}

