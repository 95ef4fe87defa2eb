/* train_check.c — bellamy-train check: every model of a model file loaded and checked; --stamp; unfinished
 * saves listed. */
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

/* Every model of a file loaded and checked (the header's checksum, then each model's blocks and
 * attributes), one line each; --stamp rewrites a file without a header so that it gets one. */
int bl_train_cmd_check(const char *prog, int argc, char **argv) {
    const char *model = NULL;
    int stamp = 0, json = 0;
    bl_cli_option opts[] = {
        { "model", BL_OPT_STRING, &model, "MODEL.h5", "model file", NULL, 1, NULL, 0 },
        { "stamp", BL_OPT_FLAG, &stamp, NULL,
          "when every model loads and the file has no checksum header (written before 0.4.1), or one an edit made "
          "on purpose no longer matches (with BELLAMY_MODEL_IGNORE_CHECKSUM=1), rewrite it with one (vouching "
          "for its contents: stamp only a file you trust)",
          NULL, 0, NULL, 0 },
        { "json", BL_OPT_FLAG, &json, NULL, "write one JSON object instead of text", NULL, 0, NULL, 0 },
    };
    const size_t nopts = sizeof opts / sizeof opts[0];
    int rc = bl_cli_parse(prog, "bellamy-train check --model MODEL.h5 [--stamp] [--json]", argc, argv, 1, opts, nopts,
                          NULL, NULL);
    if (rc) return rc < 0 ? bl_cli_finish(prog) : rc;
    if ((rc = bl_cli_check_input(prog, "model", model))) return rc;
    bl_error err = { 0 };
    /* the header first, strictly (BELLAMY_MODEL_IGNORE_CHECKSUM reads a file, it does not vouch for it);
     * with the variable set, --stamp gives a file edited on purpose a header matching its edits */
    const char *ov = getenv("BELLAMY_MODEL_IGNORE_CHECKSUM");
    const int trust = ov && strcmp(ov, "1") == 0;
    int present = 0;
    int header = bl_model_file_verify(model, &present, &err) == BL_OK ? present : -1;
    if (header < 0 && trust) {
        fprintf(stderr, "%s: %s; BELLAMY_MODEL_IGNORE_CHECKSUM=1: reading it anyway (HDF5 itself may fail on a "
                        "file that is really damaged)\n", prog, err.message);
        header = -2;
    } else if (header < 0) {
        bl_cli_error(prog, "%s", err.message);
        return BL_EXIT_FAIL;
    }
    /* a file without a header loads only for whoever trusts it: --stamp (which then vouches for it)
     * or BELLAMY_MODEL_ALLOW_UNSTAMPED=1; otherwise the load's own refusal names both */
    const unsigned flags = header == 0 && stamp ? BL_LOAD_ALLOW_UNSTAMPED : 0;
    bl_model_file *mf = NULL;
    if (bl_model_file_open_ex(model, flags, &mf, &err) != BL_OK) {
        bl_cli_error(prog, "%s", err.message);
        return BL_EXIT_FAIL;
    }
    const size_t n = bl_model_file_count(mf);
    if (json) {
        printf("{\"file\":");
        bl_cli_json_str(model);
        printf(",\"header\":\"%s\",\"models\":[", header == 1 ? "matching" : header == 0 ? "absent" : "mismatching");
    } else {
        printf("%s: %zu model%s; %s\n", model, n, n == 1 ? "" : "s",
               header == 1   ? "checksum header present and matching"
               : header == 0 ? "no checksum header (written before 0.4.1 or by another program): contents unverified"
                             : "checksum does NOT match (edited after it was written; read on request)");
    }
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        const char *nm = bl_model_file_name(mf, i);
        bl_predictor *m = NULL;
        const int ok = bl_model_file_load(mf, nm, &m, &err) == BL_OK;
        bl_model_info mi = { 0 };
        if (ok) bl_predictor_info(m, &mi);
        const size_t np = bl_predictor_prop_count(m);
        if (json) {
            printf("%s{\"name\":", i ? "," : "");
            bl_cli_json_str(nm);
            printf(",\"ok\":%s", ok ? "true" : "false");
            if (!ok) {
                printf(",\"error\":");
                bl_cli_json_str(err.message);
            } else {
                printf(",\"members\":%d,\"pretraining_rows\":%lld,\"fine_tuned_on_runs\":%lld,\"properties\":[",
                       mi.members, mi.rows, mi.finetune_runs);
                for (size_t k = 0; k < np; k++) {
                    bl_prop_info pi;
                    bl_predictor_prop(m, k, &pi);
                    printf("%s", k ? "," : "");
                    bl_cli_json_str(pi.name);
                }
                printf("]");
            }
            putchar('}');
        } else if (!ok) {
            printf("  %s: BAD: %s\n", nm, err.message);
        } else {
            printf("  %s: ok (%d member%s, %lld pre-training rows; %zu propert%s:", nm, mi.members,
                   mi.members == 1 ? "" : "s", mi.rows, np, np == 1 ? "y" : "ies");
            for (size_t k = 0; k < np; k++) {
                bl_prop_info pi;
                bl_predictor_prop(m, k, &pi);
                printf("%s %s", k ? "," : "", pi.name);
            }
            printf("; bellamy-train info --model FILE --name %s says what each needs)\n", nm);
        }
        bad += !ok;
        bl_predictor_free(m);
    }
    const char *stamped = NULL;
    if (stamp && !bad && header != 1 && n > 0) {
        bl_status st = bl_model_file_stamp(model, header == -2, &err);
        if (st != BL_OK) {
            if (json) printf("]}\n");
            bl_cli_error(prog, "--stamp: %s", err.message);
            bl_model_file_free(mf);
            return BL_EXIT_FAIL;
        }
        stamped = "rewritten with a checksum header";
    } else if (stamp && header == 1) {
        stamped = "already has a checksum header; nothing to do";
    } else if (stamp && bad) {
        stamped = "not rewritten: some models did not load";
    }
    /* temporaries of saves of this file that never finished (check only looks; a save removes those
     * whose writer is gone) */
    char left[2048];
    const size_t n_left = bl_file_out_leftovers(model, 0, left, sizeof left);
    if (json) {
        printf("]");
        if (stamp) {
            printf(",\"stamp\":");
            bl_cli_json_str(stamped);
        }
        printf(",\"leftover_temporaries\":%zu", n_left);
        printf("}\n");
    } else {
        if (stamped) {
            if (stamp && bad) printf("%s: not rewritten: %zu model%s did not load\n", model, bad, bad == 1 ? "" : "s");
            else printf("%s: %s\n", model, stamped);
        }
        if (n_left)
            printf("%s: %zu temporar%s of unfinished saves beside it: %s; the next save of the file removes those "
                   "whose writer is gone (the others may be removed by hand once no program writes the file)\n",
                   model, n_left, n_left == 1 ? "y" : "ies", left);
    }
    bl_model_file_free(mf);
    if (bad) {
        bl_cli_error(prog, "%zu of %zu models in %s did not load", bad, n, model);
        return BL_EXIT_FAIL;
    }
    return bl_cli_finish(prog);
}
