/* train_cmds.h — bellamy-train's subcommands that live in files of their own (one file each, as the
 * programs grow; bellamy_train.c keeps the table and the older ones). */
#ifndef BL_CLI_TRAIN_CMDS_H
#define BL_CLI_TRAIN_CMDS_H

/* bellamy-train import: Spark event logs and Flink job archives → a data file and its schema. */
int bl_train_cmd_import(const char *prog, int argc, char **argv);

#endif
