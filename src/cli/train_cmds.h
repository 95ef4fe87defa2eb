/* train_cmds.h — bellamy-train's subcommands, one file each (git's builtin/ layout): bellamy_train.c
 * holds the table and main; train_util.c what several commands share. Each command is a function
 * (prog, argc, argv) that parses its own options (argv[0] is the subcommand's name) and returns an exit
 * code (0 ok, 1 failure, 2 usage error). */
#ifndef BL_CLI_TRAIN_CMDS_H
#define BL_CLI_TRAIN_CMDS_H

#include <stddef.h>

#include "bellamy/bellamy.h"
#include "cli/cli_util.h"

int bl_train_cmd_inspect(const char *prog, int argc, char **argv);
int bl_train_cmd_pretrain(const char *prog, int argc, char **argv);
int bl_train_cmd_finetune(const char *prog, int argc, char **argv);
int bl_train_cmd_evaluate(const char *prog, int argc, char **argv);
int bl_train_cmd_info(const char *prog, int argc, char **argv);
int bl_train_cmd_check(const char *prog, int argc, char **argv);
int bl_train_cmd_split(const char *prog, int argc, char **argv);
int bl_train_cmd_synth(const char *prog, int argc, char **argv);
/* bellamy-train import: Spark event logs and Flink job archives → a data file and its schema. */
int bl_train_cmd_import(const char *prog, int argc, char **argv);

/* ---- shared by several commands (train_util.c) ---- */

/* Most epochs (and grace period, patience) a command line may ask for: 400 times the default of
 * 2500. More is a typo, not a plan; without a bound a stray digit means a run that never ends. */
#define BL_TR_EPOCHS_MAX BL_TRAIN_EPOCHS_MAX
/* A fit missing the runs by more than their noise (twice it, and at least 5 %: a few runs' noise is
 * itself uncertain) is a model whose predictions rest on more than its runs: said at fine-tuning. */
#define BL_TR_FIT_MISS_MIN 0.05

double bl_tr_now_s(void);                                                 /* a monotonic clock, s */
int bl_tr_seen(const bl_cli_option *opts, size_t n, const char *name);   /* was option name given? */
/* Checks an output model file before any training (writable; an existing one of a version this
 * library can add to). 0 or the exit code after a message. */
int bl_tr_check_model_out(const char *prog, const char *flag, const char *path);
int bl_tr_cmp_dbl(const void *a, const void *b);                          /* qsort, ascending */
/* The fine-tuned model's fit to its runs: the worst miss and the runs' noise (NaN: no repetitions);
 * returns the runs (0: not recorded). */
size_t bl_tr_fit_summary(const bl_predictor *p, double *worst, double *noise);
void bl_tr_print_fit_lines(const bl_predictor *p, const char *indent);  /* one line of the fit */
/* A relative miss f/y − 1 as "+12.3 %", or past ±1000 % as a factor ("over by a factor 2.4e+96");
 * bl_tr_fmt_up_to: the worst |miss| as "12.3 %" or "a factor 2.4e+96". Both return buf. */
const char *bl_tr_fmt_miss(double rel, char *buf, size_t cap);
const char *bl_tr_fmt_up_to(double worst, char *buf, size_t cap);
void bl_tr_note_fit(const char *prog, const bl_predictor *p);            /* a note when it misses */

#endif
