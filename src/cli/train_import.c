/* train_import.c — bellamy-train import: the run histories clusters keep (Spark event logs, Flink job
 * archives; files or folders) into a Bellamy data file and a schema to edit, through the library's
 * bl_import_histories. Prints what it read, wrote and left out (each run or file left out on stderr
 * with why, the first 100, then how many more), or one JSON object with --json. */
#include "cli/train_cmds.h"
#include "cli/cli_util.h"
#include "bellamy/bellamy.h"
#include "bellamy/train.h"

#include <stdio.h>
#include <string.h>

#define NOTES_SHOWN 100

int bl_train_cmd_import(const char *prog, int argc, char **argv) {
    const char *out = NULL, *schema = NULL, *scale = "hosts", *group = NULL;
    int failed = 0, redact = 0, json = 0;
    bl_cli_list props = {0}, consts = {0};
    bl_cli_option opts[] = {
        { "out", BL_OPT_STRING, &out, "FILE.tsv",
          "the data file to write (runs already in it are kept and not added again); with --group-by name, an "
          "existing folder for one NAME.tsv per application name", NULL, 1, NULL, 0 },
        { "schema-out", BL_OPT_STRING, &schema, "FILE",
          "the schema to write beside it (only where none is: yours to edit)", "FILE.tsv's name with .schema", 0,
          NULL, 0 },
        { "scale-out", BL_OPT_CHOICE, &scale, "hosts|executors",
          "the schema's scale-out: distinct executor hosts when the most executors ran, or that number of executors",
          "hosts", 0, "hosts|executors", 0 },
        { "property", BL_OPT_LIST, &props, "NAME=KEY",
          "a property from a configuration value, e.g. machine_type=spark.kubernetes.node.selector.node.kubernetes.io/"
          "instance-type (a column NAME of its own; may repeat)", NULL, 0, NULL, 0 },
        { "const", BL_OPT_LIST, &consts, "NAME=VALUE", "a constant property, e.g. environment=\"our yarn cluster\" (may "
          "repeat)", NULL, 0, NULL, 0 },
        { "group-by", BL_OPT_CHOICE, &group, "name", "one data set per application name (--out is a folder)", NULL, 0,
          "name", 0 },
        { "include-failed", BL_OPT_FLAG, &failed, NULL, "import runs with a failed job too (their state column says so)",
          NULL, 0, NULL, 0 },
        { "redact", BL_OPT_FLAG, &redact, NULL, "leave the jobs' arguments out (they may name data or credentials)",
          NULL, 0, NULL, 0 },
        { "json", BL_OPT_FLAG, &json, NULL, "write one JSON object instead of text", NULL, 0, NULL, 0 },
    };
    const size_t nopts = sizeof opts / sizeof opts[0];
    const char *paths[BL_CLI_LIST_MAX];
    size_t npaths = BL_CLI_LIST_MAX;
    int rc = bl_cli_parse(prog,
                          "bellamy-train import --out FILE.tsv [--schema-out FILE] [--scale-out hosts|executors]\n"
                          "                     [--property NAME=KEY ...] [--const NAME=VALUE ...] [--group-by name]\n"
                          "                     [--include-failed] [--redact] [--json] LOG|FOLDER ...\n"
                          "Reads Spark event logs (plain, .zstd, .lz4, .snappy; rolling logs' folders) and Flink job\n"
                          "archives, one run per application attempt or job, into a data file and its schema.",
                          argc, argv, 1, opts, nopts, paths, &npaths);
    if (rc) return rc < 0 ? bl_cli_finish(prog) : rc;
    if (npaths == 0) {
        bl_cli_error(prog, "no logs given: name Spark event logs, Flink job archives or folders holding them (e.g. a "
                           "copy of spark.history.fs.logDirectory)");
        return BL_EXIT_USAGE;
    }
    if (group && schema) {
        bl_cli_error(prog, "--schema-out goes without --group-by (each data file gets its schema beside it)");
        return BL_EXIT_USAGE;
    }
    /* the outputs before any reading: an hour of logs must not end in "cannot write" */
    if (!group) {
        if ((rc = bl_cli_check_output(prog, "out", out)) || (schema && (rc = bl_cli_check_output(prog, "schema-out", schema))))
            return rc;
    }
    bl_import_opts o;
    bl_import_opts_init(&o);
    o.scale_out = strcmp(scale, "executors") == 0 ? BL_IMPORT_EXECUTORS : BL_IMPORT_HOSTS;
    o.include_failed = failed;
    o.redact = redact;
    o.properties = props.items;
    o.n_properties = props.n;
    o.consts = consts.items;
    o.n_consts = consts.n;
    o.group_by_name = group != NULL;
    bl_import_result *res = NULL;
    bl_error err = { 0 };
    bl_status st = bl_import_histories(paths, npaths, out, schema, &o, &res, &err);
    bl_import_summary s;
    bl_import_summarize(res, &s);
    const size_t shown = s.notes < NOTES_SHOWN ? s.notes : NOTES_SHOWN;
    if (!json) { /* what was left out, and why: on stderr, before the summary or the error */
        for (size_t i = 0; i < shown; i++) {
            const char *n = bl_import_note(res, i);
            if (n) fprintf(stderr, "%s: note: %s\n", prog, n);
        }
        if (s.notes > shown) fprintf(stderr, "%s: note: %zu more notes (--json lists up to 10000)\n", prog, s.notes - shown);
    }
    if (st == BL_OK && json) {
        printf("{\"logs\":%zu,\"logs_failed\":%zu,\"runs_found\":%zu,\"skipped\":%zu,\"added\":%zu,\"kept\":%zu,"
               "\"already\":%zu,\"unknown_events\":%zu,\"outputs\":[", s.logs, s.logs_failed, s.runs_found, s.skipped,
               s.added, s.kept, s.already, s.unknown_events);
        for (size_t i = 0; i < s.outputs; i++) {
            const char *d, *sc;
            size_t added;
            int fresh;
            bl_import_output(res, i, &d, &sc, &added, &fresh);
            printf("%s{\"data\":", i ? "," : "");
            bl_cli_json_str(d);
            printf(",\"schema\":");
            bl_cli_json_str(sc);
            printf(",\"schema_written\":%s,\"added\":%zu}", fresh ? "true" : "false", added);
        }
        printf("],\"notes\":[");
        for (size_t i = 0; bl_import_note(res, i); i++) {
            printf("%s", i ? "," : "");
            bl_cli_json_str(bl_import_note(res, i));
        }
        printf("]}\n");
    } else if (st == BL_OK) {
        printf("read %zu log%s (%zu unreadable, skipped): %zu run%s, %zu left out", s.logs, s.logs == 1 ? "" : "s",
               s.logs_failed, s.runs_found, s.runs_found == 1 ? "" : "s", s.skipped);
        if (s.unknown_events) printf("; %zu events of kinds this version does not know, ignored", s.unknown_events);
        putchar('\n');
        for (size_t i = 0; i < s.outputs; i++) {
            const char *d, *sc;
            size_t added;
            int fresh;
            bl_import_output(res, i, &d, &sc, &added, &fresh);
            printf("%s: %zu run%s added", d, added, added == 1 ? "" : "s");
            if (i == 0 && s.outputs == 1 && (s.kept || s.already))
                printf(" (it held %zu; %zu of the runs read were in it already)", s.kept, s.already);
            printf("; schema %s (%s)\n", sc, fresh ? "written" : "yours, kept as it was");
        }
        const char *d0 = NULL, *s0 = NULL;
        bl_import_output(res, 0, &d0, &s0, NULL, NULL);
        printf("next: edit the schema (what describes a run's context), then bellamy-train pretrain --data %s "
               "--schema %s --out MODEL.h5\n", s.outputs == 1 ? d0 : "NAME.tsv", s.outputs == 1 ? s0 : "NAME.schema");
    }
    /* a bad option (a misspelt --property or --const name, ...) is refused before any log is read, with
     * no result: the usage exit code, as for other bad flags; what the logs hold is a failure */
    const int bad_option = st == BL_EINVAL && !res;
    bl_import_result_free(res);
    if (bad_option) {
        bl_cli_error(prog, "%s", err.message);
        return BL_EXIT_USAGE;
    }
    if (st != BL_OK) return bl_cli_fail(prog, &err);
    return bl_cli_finish(prog);
}
