/* train_info.c — bellamy-train info: what a model needs and knows, text or JSON. */
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

/* How the stored schema makes property i: "column X", "join A B", "template \"...\"", "const \"v\"",
 * "per_machine v"; "" when the model stores no schema (or not this property). *src receives the
 * source (kind NULL when none). */
static void source_text(const bl_predictor *p, size_t i, char *buf, size_t cap, bl_prop_source *src) {
    buf[0] = '\0';
    memset(src, 0, sizeof *src);
    if (bl_predictor_prop_source(p, i, src) != BL_OK) {
        src->kind = NULL;
        return;
    }
    size_t len = 0;
    int w = snprintf(buf, cap, "%s", src->kind);
    len = w > 0 && (size_t)w < cap ? (size_t)w : len;
    if (strcmp(src->kind, "column") == 0 || strcmp(src->kind, "join") == 0)
        for (size_t k = 0; k < src->n_columns && len + 1 < cap; k++) {
            w = snprintf(buf + len, cap - len, " %s", bl_predictor_prop_source_column(p, i, k));
            if (w > 0) len += (size_t)w;
        }
    else if (src->value && len + 1 < cap)
        snprintf(buf + len, cap - len, strcmp(src->kind, "per_machine") == 0 ? " %s" : " \"%s\"", src->value);
}

/* Everything a model knows, for a person (text) or a program (--json): properties (kind, essential or
 * optional, source, the value used when a context leaves it out), the values the pre-training rows
 * had with their counts, the ranges, the training and fine-tuning records with the context it was
 * fine-tuned for, members and encodings. */
int bl_train_cmd_info(const char *prog, int argc, char **argv) {
    const char *model = NULL, *name = NULL;
    int json = 0;
    size_t most = 10;
    bl_cli_option opts[] = {
        { "model", BL_OPT_STRING, &model, "MODEL.h5", "model file", NULL, 1, NULL, 0 },
        { "name", BL_OPT_STRING, &name, "NAME", "model inside the file", "the file's only model", 0, NULL, 0 },
        { "values", BL_OPT_SIZE, &most, "N", "values seen listed per property in the text (--json lists every one kept)",
          "10", 0, NULL, 0 },
        { "json", BL_OPT_FLAG, &json, NULL, "write one JSON object instead of text", NULL, 0, NULL, 0 },
    };
    const size_t nopts = sizeof opts / sizeof opts[0];
    int rc = bl_cli_parse(prog, "bellamy-train info --model MODEL.h5 [--name NAME] [--values N] [--json]\n"
                          "What a model knows: what each property needs, the values and ranges it was trained on, how it\n"
                          "was trained and fine-tuned (and for which context), its members and encodings.",
                          argc, argv, 1, opts, nopts, NULL, NULL);
    if (rc) return rc < 0 ? bl_cli_finish(prog) : rc;
    if ((rc = bl_cli_check_input(prog, "model", model))) return rc;
    bl_error err = { 0 };
    bl_predictor *p = NULL;
    bl_cli_note_unverified(prog, model);
    if (bl_predictor_load(model, name, &p, &err) != BL_OK) return bl_cli_fail(prog, &err);
    bl_model_ranges rg;
    bl_model_info mi;
    bl_training_info ti;
    bl_predictor_ranges(p, &rg);
    bl_predictor_info(p, &mi);
    bl_predictor_training(p, &ti);
    const size_t np = bl_predictor_prop_count(p);
    const char *mname = bl_predictor_name(p);
    bl_prop_seen_info sn0 = { 0 };
    if (np > 0) bl_predictor_prop_seen_info(p, 0, &sn0);
    const int seen_known = sn0.recorded; /* the records are kept for every property or for none */
    if (json) {
        printf("{\"file\":");
        bl_cli_json_str(model);
        printf(",\"model\":");
        bl_cli_json_str(mname);
        printf(",\"properties\":[");
        for (size_t i = 0; i < np; i++) {
            bl_prop_info pi;
            bl_predictor_prop(p, i, &pi);
            char src[300];
            bl_prop_source sp;
            source_text(p, i, src, sizeof src, &sp);
            printf("%s{\"name\":", i ? "," : "");
            bl_cli_json_str(pi.name);
            printf(",\"essential\":%s,\"kind\":\"%s\",\"cluster_total\":%s,\"source\":", pi.essential ? "true" : "false",
                   pi.number ? "number" : "text", pi.cluster_total ? "true" : "false");
            if (sp.kind) {
                printf("{\"kind\":\"%s\",\"text\":", sp.kind);
                bl_cli_json_str(src);
                printf(",\"columns\":[");
                for (size_t k = 0; k < sp.n_columns; k++) {
                    printf("%s", k ? "," : "");
                    bl_cli_json_str(bl_predictor_prop_source_column(p, i, k));
                }
                printf("]");
                if (sp.value) {
                    printf(",\"value\":");
                    bl_cli_json_value(sp.value, pi.number && strcmp(sp.kind, "template") != 0);
                }
                putchar('}');
            } else {
                printf("null");
            }
            const char *dv;
            int from = 0;
            printf(",\"default\":");
            if (bl_predictor_prop_default(p, i, &dv, &from) == BL_OK) {
                bl_cli_json_value(dv, pi.number);
                printf(",\"default_from\":\"%s\"", from == 1 ? "schema" : from == 3 ? "finetune" : "seen");
            } else {
                printf("null,\"default_from\":null");
            }
            printf(",\"seen\":");
            bl_prop_seen_info sn;
            bl_predictor_prop_seen_info(p, i, &sn);
            if (sn.recorded) {
                printf("{\"distinct\":%lld,\"per_machine\":%s,\"min\":", sn.distinct, sn.per_machine ? "true" : "false");
                bl_cli_json_num(sn.num_min);
                printf(",\"max\":");
                bl_cli_json_num(sn.num_max);
                printf(",\"values\":[");
                for (size_t k = 0; k < sn.kept; k++) {
                    const char *v;
                    long long rows = 0;
                    bl_predictor_prop_seen(p, i, k, &v, &rows);
                    printf("%s{\"value\":", k ? "," : "");
                    bl_cli_json_value(v, pi.number);
                    printf(",\"rows\":%lld}", rows);
                }
                printf("]}");
            } else {
                printf("null");
            }
            printf(",\"fine_tuned_value\":");
            const char *fv;
            if (ti.finetune_recorded && bl_predictor_finetune_context(p, i, &fv) == BL_OK) bl_cli_json_value(fv, pi.number);
            else printf("null");
            putchar('}');
        }
        printf("],\"pretraining\":{\"pretrained\":%s,\"rows\":%lld,\"contexts\":%lld,\"data_hash\":\"%016llx\","
               "\"created\":", mi.pretrained ? "true" : "false", mi.rows, mi.contexts, ti.data_hash);
        bl_cli_json_str(mi.created);
        printf(",\"runtime_column\":");
        bl_cli_json_str(ti.runtime_column);
        printf(",\"runtime_unit\":");
        bl_cli_json_str(ti.runtime_unit);
        printf(",\"epochs\":%lld,\"val_rows\":%lld,\"best_val_loss\":", mi.epochs, ti.val_rows);
        bl_cli_json_num(mi.best_val_loss);
        printf(",\"scale_out_min\":");
        bl_cli_json_num(rg.scale_out_min);
        printf(",\"scale_out_max\":");
        bl_cli_json_num(rg.scale_out_max);
        printf(",\"runtime_min_s\":");
        bl_cli_json_num(rg.runtime_min_s);
        printf(",\"runtime_max_s\":");
        bl_cli_json_num(rg.runtime_max_s);
        printf(",\"recorded\":%s},\"hyperparameters\":{\"dropout\":", seen_known ? "true" : "false");
        bl_cli_json_num(mi.dropout);
        printf(",\"learning_rate\":");
        bl_cli_json_num(mi.learning_rate);
        printf(",\"weight_decay\":");
        bl_cli_json_num(mi.weight_decay);
        printf("},\"members\":[");
        for (int j = 0; j < mi.members; j++) {
            bl_member_info mb;
            bl_predictor_member(p, j, &mb);
            printf("%s{\"numbers\":\"%s\",\"dropout\":", j ? "," : "", mb.numbers);
            bl_cli_json_num(mb.dropout);
            printf(",\"learning_rate\":");
            bl_cli_json_num(mb.learning_rate);
            printf(",\"weight_decay\":");
            bl_cli_json_num(mb.weight_decay);
            printf(",\"best_val_loss\":");
            bl_cli_json_num(mb.best_loss);
            printf(",\"epochs\":");
            if (mb.epochs >= 0) printf("%lld", mb.epochs);
            else if (j == 0) printf("%lld", mi.epochs);
            else printf("null");
            putchar('}');
        }
        printf("],\"combine\":\"%s\",\"precision\":\"%s\",\"encoding\":{\"numbers\":\"%s\",\"cluster_totals\":\"%s\","
               "\"vec_len\":%u,\"ngram_min\":%u,\"ngram_max\":%u,\"hash\":\"xxh32\",\"hash_seed\":%u,"
               "\"target_scaling\":\"%s\",\"target_scale\":", mi.members > 1 ? "median" : "single",
               bl_predictor_precision(p), ti.numbers,
               ti.totals_per_machine ? "per_machine" : "total", ti.vec_len, ti.ngram_min, ti.ngram_max, ti.hash_seed,
               ti.target_scale);
        bl_cli_json_num(ti.target_scale_s);
        printf("},\"fine_tuning\":");
        if (mi.finetune_runs > 0) {
            printf("{\"runs\":%lld,\"epochs\":%lld,\"created\":", mi.finetune_runs, mi.finetune_epochs);
            if (mi.finetune_created && mi.finetune_created[0]) bl_cli_json_str(mi.finetune_created);
            else printf("null");
            printf(",\"mae_s\":");
            bl_cli_json_num(mi.finetune_mae_s);
            printf(",\"recorded\":%s", ti.finetune_recorded ? "true" : "false");
            if (ti.finetune_recorded) {
                printf(",\"contexts\":%lld,\"scale_out_min\":", rg.finetune_contexts);
                bl_cli_json_num(rg.finetune_scale_out_min);
                printf(",\"scale_out_max\":");
                bl_cli_json_num(rg.finetune_scale_out_max);
                printf(",\"runtime_min_s\":");
                bl_cli_json_num(rg.finetune_runtime_min_s);
                printf(",\"runtime_max_s\":");
                bl_cli_json_num(rg.finetune_runtime_max_s);
                printf(",\"context\":{");
                for (size_t i = 0; i < np; i++) {
                    bl_prop_info pi;
                    const char *fv = "";
                    bl_predictor_prop(p, i, &pi);
                    bl_predictor_finetune_context(p, i, &fv);
                    printf("%s", i ? "," : "");
                    bl_cli_json_str(pi.name);
                    putchar(':');
                    bl_cli_json_value(fv, pi.number);
                }
                putchar('}');
            }
            const char *meth = "network", *why = "";
            double ew = 0;
            bl_predictor_method(p, &meth, &ew, &why);
            printf(",\"method\":{\"name\":");
            bl_cli_json_str(meth);
            printf(",\"ernest_weight\":");
            bl_cli_json_num(ew);
            printf(",\"why\":");
            bl_cli_json_str(why);
            putchar('}');
            size_t nf = 0;
            double worst, noise;
            if (bl_tr_fit_summary(p, &worst, &noise)) {
                bl_predictor_finetune_fit(p, 0, NULL, NULL, NULL, NULL, &nf);
                printf(",\"fit\":[");
                for (size_t i = 0; i < nf; i++) {
                    double x, y, f, pr;
                    bl_predictor_finetune_fit(p, i, &x, &y, &f, &pr, NULL);
                    printf("%s{\"scale_out\":", i ? "," : "");
                    bl_cli_json_num(x);
                    printf(",\"runtime_s\":");
                    bl_cli_json_num(y);
                    printf(",\"predicted_s\":");
                    if (isfinite(f)) bl_cli_json_num(f); else printf("null");
                    printf(",\"before_fine_tuning_s\":");
                    if (isfinite(pr)) bl_cli_json_num(pr); else printf("null");
                    putchar('}');
                }
                printf("],\"fit_worst_miss\":");
                if (isfinite(worst)) bl_cli_json_num(worst); else printf("null");
                printf(",\"runs_noise\":");
                if (isfinite(noise)) bl_cli_json_num(noise); else printf("null");
            }
            putchar('}');
        } else {
            printf("null");
        }
        bl_calibration_info cal;
        bl_predictor_calibration(p, &cal);
        printf(",\"intervals\":");
        if (cal.present) {
            double q_in, q_out;
            long long g_in = 0, g_out = 0;
            bl_predictor_calibration_quantile(p, cal.runs, 1, 0.9, &q_in, &g_in, NULL);
            bl_predictor_calibration_quantile(p, cal.runs, 0, 0.9, &q_out, &g_out, NULL);
            printf("{\"calibration_contexts\":%lld,\"finetunings\":%lld,\"seconds\":", cal.contexts, cal.finetunings);
            bl_cli_json_num(cal.seconds);
            printf(",\"runs\":%d,\"factor\":", cal.runs);
            bl_cli_json_num(cal.factor);
            printf(",\"q90_inside\":");
            if (cal.runs >= 2 && isfinite(q_in)) bl_cli_json_num(q_in); else printf("null");
            printf(",\"q90_outside\":");
            if (isfinite(q_out)) bl_cli_json_num(q_out); else printf("null");
            putchar('}');
        } else {
            printf("null");
        }
        printf("}\n");
    } else {
        printf("model '%s' in %s: %d member%s%s, %zu propert%s\n", mname, model, mi.members,
               mi.members == 1 ? "" : "s", mi.members > 1 ? " (the median of their predictions)" : "", np,
               np == 1 ? "y" : "ies");
        printf("properties (a context gives each by name; cluster totals per machine):\n");
        for (size_t i = 0; i < np; i++) {
            bl_prop_info pi;
            bl_predictor_prop(p, i, &pi);
            char src[300];
            bl_prop_source sp;
            source_text(p, i, src, sizeof src, &sp);
            const char *dv;
            int from = 0;
            const int has_default = bl_predictor_prop_default(p, i, &dv, &from) == BL_OK;
            printf("  %s: %s %s%s", pi.name, pi.essential ? "essential" : "optional", pi.number ? "number" : "text",
                   pi.cluster_total ? ", a cluster total (given per machine)" : "");
            if (src[0]) printf(", from %s", src);
            if (has_default)
                printf("; left out, it is '%s' (%s)", dv, from == 1 ? "the schema's constant" : from == 3 ?
                       "the context it was fine-tuned for" : "the one value every row had");
            else if (pi.essential)
                printf("; must be given");
            else
                printf("; may be left out");
            putchar('\n');
            bl_prop_seen_info sn;
            bl_predictor_prop_seen_info(p, i, &sn);
            if (sn.recorded) {
                const size_t nv = sn.kept;
                printf("    seen: %lld value%s", sn.distinct, sn.distinct == 1 ? "" : "s");
                if (pi.number && isfinite(sn.num_min) && sn.num_min == sn.num_max)
                    printf(" of %s%s", bl_cli_num(sn.num_min), sn.per_machine ? " per machine" : "");
                else if (pi.number && isfinite(sn.num_min))
                    printf(" in %s..%s%s", bl_cli_num(sn.num_min), bl_cli_num(sn.num_max), sn.per_machine ? " per machine" : "");
                if (most == 0 && sn.distinct > 0) { /* --values 0: the count alone */
                    printf(" (--values N or --json lists them)\n");
                    continue;
                }
                printf(":");
                for (size_t k = 0; k < nv && k < most; k++) {
                    const char *v;
                    long long rows = 0;
                    bl_predictor_prop_seen(p, i, k, &v, &rows);
                    printf("%s '%s' (%lld row%s)", k ? "," : "", v, rows, rows == 1 ? "" : "s");
                }
                if ((long long)nv > (long long)most || sn.distinct > (long long)nv)
                    printf(", ... (%lld more; --values N or --json)", sn.distinct - (long long)(nv < most ? nv : most));
                putchar('\n');
            }
        }
        if (!seen_known)
            printf("  (the values the pre-training rows had are not recorded: the file was written before 0.5)\n");
        printf("pre-training: %s; %lld rows, %lld contexts, scale-outs %.10g..%.10g", mi.pretrained ? "yes" : "no (trained from scratch)",
               mi.rows, mi.contexts, rg.scale_out_min, rg.scale_out_max);
        if (isfinite(rg.runtime_min_s)) printf(", runtimes %.6g..%.6g s", rg.runtime_min_s, rg.runtime_max_s);
        if (ti.runtime_column[0]) /* the data's own unit, which predictions never use (always seconds) */
            printf(" (read from column '%s' in %s)", ti.runtime_column, ti.runtime_unit);
        /* a fine-tuning before 0.6 rewrote `created`: then it is the last save's, not the pre-training's */
        printf("; data xxh64:%016llx; %s %s\n", ti.data_hash,
               mi.finetune_runs > 0 && !(mi.finetune_created && mi.finetune_created[0]) ? "last saved" : "pre-trained",
               mi.created);
        /* each member ran its own search: the winner is the member with the lowest loss, not member 1 */
        int best = 0;
        bl_member_info bm;
        for (int j = 1; mi.members > 1 && j < mi.members; j++) {
            bl_member_info a, b;
            bl_predictor_member(p, j, &a);
            bl_predictor_member(p, best, &b);
            if (a.best_loss < b.best_loss) best = j;
        }
        if (mi.members > 1 && bl_predictor_member(p, best, &bm) == BL_OK) {
            printf("search winner: member %d of %d, best %s loss %.6g%s", best + 1, mi.members,
                   ti.val_rows == 0 ? "training" : "validation", bm.best_loss,
                   ti.val_rows > 0 ? "" : ti.val_rows == 0 ? " (no validation rows)" : "");
            if (bm.epochs >= 0) printf(" after %lld epochs", bm.epochs);
            printf("; dropout %g, learning rate %g, weight decay %g (each member's search below)\n", bm.dropout,
                   bm.learning_rate, bm.weight_decay);
        } else {
            printf("search winner: %lld epochs, best %s loss %.6g%s; dropout %g, learning rate %g, weight decay %g\n",
                   mi.epochs, ti.val_rows == 0 ? "training" : "validation", mi.best_val_loss,
                   ti.val_rows > 0 ? "" : ti.val_rows == 0 ? " (no validation rows)" : "", mi.dropout,
                   mi.learning_rate, mi.weight_decay);
        }
        for (int j = 0; mi.members > 1 && j < mi.members; j++) {
            bl_member_info mb;
            bl_predictor_member(p, j, &mb);
            printf("  member %d/%d: numbers %s, best loss %.6g", j + 1, mi.members, mb.numbers, mb.best_loss);
            if (mb.epochs >= 0) printf(" after %lld epochs", mb.epochs);
            printf(" (dropout %g, learning rate %g, weight decay %g)\n", mb.dropout, mb.learning_rate, mb.weight_decay);
        }
        printf("encoding: numbers %s, cluster totals as %s, vectors of %u, character %u..%u-grams hashed with "
               "xxh32 (seed %u); target %s (scale %g)\n", ti.numbers,
               ti.totals_per_machine ? "per-machine values" : "totals", ti.vec_len, ti.ngram_min, ti.ngram_max,
               ti.hash_seed, strcmp(ti.target_scale, "mean") == 0 ? "seconds / mean" : ti.target_scale,
               ti.target_scale_s);
        printf("precision: %s\n", strcmp(bl_predictor_precision(p), "f32") == 0
                                      ? "f32 (float32 arithmetic; the file stores float32 weights)"
                                      : "f64 (float64 arithmetic and weights)");
        if (mi.finetune_runs <= 0) {
            printf("fine-tuning: never fine-tuned\n");
        } else {
            printf("fine-tuning: %lld run%s, %lld epochs, training MAE %.4g s", mi.finetune_runs,
                   mi.finetune_runs == 1 ? "" : "s", mi.finetune_epochs, mi.finetune_mae_s);
            if (mi.finetune_created && mi.finetune_created[0]) printf("; fine-tuned %s", mi.finetune_created);
            if (ti.finetune_recorded)
                printf("; %lld context%s, scale-outs %.10g..%.10g, runtimes %.6g..%.6g s\n", rg.finetune_contexts,
                       rg.finetune_contexts == 1 ? "" : "s", rg.finetune_scale_out_min, rg.finetune_scale_out_max,
                       rg.finetune_runtime_min_s, rg.finetune_runtime_max_s);
            else
                printf("; its runs and context are not recorded (fine-tuned before 0.5)\n");
            if (ti.finetune_recorded) {
                printf("fine-tuned for%s:", rg.finetune_contexts > 1 ? " (what its runs of several contexts share)" : "");
                for (size_t i = 0; i < np; i++) {
                    bl_prop_info pi;
                    const char *fv = "";
                    bl_predictor_prop(p, i, &pi);
                    bl_predictor_finetune_context(p, i, &fv);
                    printf("%s %s='%s'", i ? ";" : "", pi.name, fv);
                }
                putchar('\n');
            }
            /* the guard's decision (bellamy-predict's note says the same when it is not the network alone) */
            const char *meth = "network", *why = "";
            double ew = 0;
            bl_predictor_method(p, &meth, &ew, &why);
            /* the guard's why starts "the network alone: ..." when it kept the network: said once */
            const char *alone = "the network alone: ";
            const int net = strcmp(meth, "network") == 0;
            if (net && strncmp(why, alone, strlen(alone)) == 0) why += strlen(alone);
            printf("runtimes: %s", strcmp(meth, "ernest") == 0 ? "Ernest's fit to the fine-tuning runs" :
                   strcmp(meth, "blend") == 0 ? "a blend of the network and Ernest" : "the fine-tuned network alone");
            if (strcmp(meth, "network") != 0) printf(" (Ernest's weight %.3g)", ew);
            printf(why[0] ? ": %s\n" : "\n", why);
            bl_tr_print_fit_lines(p, "");
            double worst, noise;
            if (bl_tr_fit_summary(p, &worst, &noise) &&
                worst > fmax(isfinite(noise) ? 2 * noise : 0, BL_TR_FIT_MISS_MIN))
            {
                char up[48];
                printf("  it misses its own runs by up to %s, more than their noise (%s): its intervals widen "
                       "accordingly\n", bl_tr_fmt_up_to(worst, up, sizeof up),
                       isfinite(noise) ? "from repetitions" : "no repetitions: taken as under 2.5 %");
            }
        }
        bl_calibration_info cal;
        bl_predictor_calibration(p, &cal);
        if (cal.present) {
            double q_in, q_out;
            long long g_in = 0, g_out = 0;
            const int k = cal.runs;
            bl_predictor_calibration_quantile(p, k, 1, 0.9, &q_in, &g_in, NULL);
            bl_predictor_calibration_quantile(p, k, 0, 0.9, &q_out, &g_out, NULL);
            printf("intervals: calibrated on %lld held-out contexts (%lld fine-tunings, %.1f s at pre-training); ",
                   cal.contexts, cal.finetunings, cal.seconds);
            if (k > 0) printf("for %d run%s ", k, k == 1 ? "" : "s");
            printf("the 0.9 interval is the prediction");
            if (k >= 2) {
                if (isfinite(q_in)) printf(" x/÷ %.3g inside the runs' range (%lld contexts)", exp(q_in * cal.factor), g_in);
                else printf(": unbounded inside the runs' range (%lld contexts)", g_in);
            }
            if (isfinite(q_out)) printf("%s x/÷ %.3g %s", k >= 2 ? "," : "", exp(q_out * cal.factor),
                                        k == 0 ? "for an unseen context" : "at the runs' range, growing outside it");
            else printf("%s unbounded %s(%lld contexts)", k >= 2 ? "," : ":", k == 0 ? "for an unseen context " :
                        "outside the runs' range ", g_out);
            if (k > 0 || cal.factor != 1)
                printf("; its runs widen the calibrated width %.3g times", cal.factor);
            printf(" (models/README.md, §P10)\n");
        } else {
            printf("intervals: none (no calibration: pre-trained before 0.6, or with it off; pre-train again)\n");
        }
    }
    bl_predictor_free(p);
    return bl_cli_finish(prog);
}
