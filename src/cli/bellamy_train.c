/* bellamy_train.c — the `bellamy-train` program: one entry point, one subcommand per task.
 *
 *   bellamy-train inspect  --data FILE --schema FILE [--row K] [--delimiter tab|comma]
 *   bellamy-train pretrain --data FILE --schema FILE --out MODEL.h5 [--name NAME] [--trials 12] ...
 *   bellamy-train finetune --model MODEL.h5 [--name NAME] --data RUNS [--schema FILE] --out NEW.h5
 *   bellamy-train evaluate --model MODEL.h5 [--name NAME] --data RUNS [--schema FILE] [--json]
 *   bellamy-train info     --model MODEL.h5 [--name NAME] [--json]
 *   bellamy-train check    --model MODEL.h5 [--stamp] [--json]
 *   bellamy-train split    --data FILE --schema FILE --context K --held-out A.tsv --rest B.tsv ...
 *   bellamy-train synth    --out-dir DIR [--contexts N] ...
 *
 * Subcommands live in the table `commands` below; each is a function (prog, argc, argv) that parses
 * its own options with bl_cli_parse (argv[0] is the subcommand's name) and returns an exit code
 * (0 ok, 1 failure, 2 usage error). To add one, write cmd_NAME and add a row to the table.
 * It sees the library through its public headers only (bellamy/bellamy.h, bellamy/train.h).
 * Not here: library logic (src/), option parsing machinery (cli_util.c).
 */
#include "cli/cli_util.h"
#include "cli/train_cmds.h"
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

/* ---- inspect ------------------------------------------------------------------------------------ */

static int cmd_inspect(const char *prog, int argc, char **argv) {
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

/* ---- shared helpers ------------------------------------------------------------------------------ */

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* "grep" from "../shared/datasets/c3o/grep.tsv". */
static void file_stem(const char *path, char *out, size_t cap) {
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    const char *dot = strrchr(b, '.');
    size_t n = dot && dot > b ? (size_t)(dot - b) : strlen(b);
    if (n >= cap) n = cap - 1;
    memcpy(out, b, n);
    out[n] = '\0';
}

static void fmt_duration(double s, char *out, size_t cap) {
    if (!(s >= 0) || s > 1e7) { snprintf(out, cap, "?"); return; }
    long t = (long)(s + 0.5);
    if (t >= 3600) snprintf(out, cap, "%ldh%02ldm", t / 3600, (t / 60) % 60);
    else if (t >= 60) snprintf(out, cap, "%ldm%02lds", t / 60, t % 60);
    else snprintf(out, cap, "%lds", t);
}

/* ---- pretrain ------------------------------------------------------------------------------------ */

/* The search reports each trial's epoch count at every 25th epoch and at each rung's end. The share
 * done is counted here from those counts, per trial: the library's epochs_done_all adds "epochs since
 * the last multiple of 25", which overcounts when a rung ends off a multiple of 25 (grace 10: 175 %).
 * A trial's count only grows within one search, so a count at or below the last one seen means the
 * next ensemble member's search has started it again from 0. Each trial's last report is at its last
 * rung, so the sum ends at exactly epochs_planned_all (the successive-halving plan of every member). */
#define PROGRESS_MAX_TRIALS 64

typedef struct progress_state {
    int    tty;
    double t0, last;
    int    printed;   /* a live line is on the terminal */
    int    search;    /* the search the counts below are of */
    long   seen[PROGRESS_MAX_TRIALS];   /* last epoch count reported per trial, in the current search */
    long   done;                        /* epochs trained so far, every trial and member */
} progress_state;

/* Adds p's epochs to s->done and returns the share of the plan done, in [0, 1]. */
static double progress_fraction(progress_state *s, const bl_train_progress *p) {
    if (p->epochs_planned_all <= 0) return 0;
    if (p->search != s->search) { /* the next member's search: its trials start again from 0 */
        memset(s->seen, 0, sizeof s->seen);
        s->search = p->search;
    }
    if (p->trial >= 0 && p->trial < PROGRESS_MAX_TRIALS && p->epoch >= 0) {
        long *seen = &s->seen[p->trial];
        s->done += p->epoch > *seen ? p->epoch - *seen : p->epoch;
        *seen = p->epoch;
    } else if (p->epochs_done_all > s->done) {
        s->done = p->epochs_done_all;   /* not expected: fall back on the library's count */
    }
    double frac = (double)s->done / (double)p->epochs_planned_all;
    return frac < 1 ? frac : 1;
}

/* Progress callback: a live line (\r) on a terminal, else a line every 5 s. Serialised by the library. */
static int on_progress(void *ctx, const bl_train_progress *p) {
    progress_state *s = ctx;
    double t = now_s();
    double frac = progress_fraction(s, p);
    int done = frac >= 1;
    if (!done && t - s->last < (s->tty ? 0.2 : 5.0)) return 0;
    s->last = t;
    char eta[32], el[32];
    fmt_duration(frac > 0 ? (t - s->t0) * (1 - frac) / frac : -1, eta, sizeof eta);
    fmt_duration(t - s->t0, el, sizeof el);
    int pct = (int)(100 * frac);   /* rounded down: "100%" only once every planned epoch has run */
    char line[320], which[48] = "";
    if (p->searches_total > 1) /* an ensemble: which member's search */
        snprintf(which, sizeof which, "search %d/%d, ", p->search + 1, p->searches_total);
    if (p->has_val)
        snprintf(line, sizeof line,
                 "%strial %d/%d (%d running)  epoch %ld/%ld  loss %.4g  val %.4g  best val %.4g  %3d%%  %s elapsed, ETA %s",
                 which, p->trial + 1, p->trials_total, p->trials_alive, p->epoch, p->epochs_total, p->train_loss,
                 p->val_loss, p->best_val_loss, pct, el, eta);
    else /* no validation rows: the search ranks on the training loss, and says so */
        snprintf(line, sizeof line,
                 "%strial %d/%d (%d running)  epoch %ld/%ld  loss %.4g  best loss %.4g (no validation rows)  %3d%%  %s "
                 "elapsed, ETA %s",
                 which, p->trial + 1, p->trials_total, p->trials_alive, p->epoch, p->epochs_total, p->train_loss,
                 p->best_val_loss, pct, el, eta);
    if (s->tty) {
        fprintf(stderr, "\r%s\033[K", line);
        s->printed = 1;
    } else {
        fprintf(stderr, "%s\n", line);
    }
    fflush(stderr);
    return 0;
}

static long default_threads(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? n : 1;
}

static int seen(const bl_cli_option *opts, size_t n, const char *name) {
    for (size_t i = 0; i < n; i++)
        if (strcmp(opts[i].name, name) == 0) return opts[i].seen;
    return 0;
}

#define VAL_SPLIT_DEFAULT "contexts" /* bl_train_opts_init's val_split */

/* Most epochs (and grace period, patience) a command line may ask for: 400 times the default of
 * 2500. More is a typo, not a plan; without a bound a stray digit means a run that never ends. */
#define EPOCHS_MAX BL_TRAIN_EPOCHS_MAX

/* Checks an output model file before any training: writable (bl_cli_check_output), and when it
 * exists, a model file of a version this library can add to (saving would refuse it only at the
 * end, after hours of training). */
static int check_model_out(const char *prog, const char *flag, const char *path) {
    int rc = bl_cli_check_output(prog, flag, path);
    if (rc) return rc;
    if (access(path, F_OK) != 0) return 0;
    bl_model_file *f = NULL;
    bl_error err = { 0 };
    int present;
    /* strictly, as the save will: a checksum the override would let a load through still refuses it */
    if (bl_model_file_verify(path, &present, &err) != BL_OK || bl_model_file_open(path, &f, &err) != BL_OK) {
        bl_cli_error(prog, "--%s: refusing to overwrite %s", flag, err.message);
        return BL_EXIT_FAIL;
    }
    bl_model_file_free(f);
    return 0;
}

static int cmd_pretrain(const char *prog, int argc, char **argv) {
    const char *data = NULL, *schema = NULL, *out = NULL, *name = NULL, *delim = NULL;
    const char *device = "cpu", *tscale = "seconds";
    long trials = 12, epochs = 2500, grace = 1000, threads = 0, seed = 1, members = 6;
    double val_fraction = 0.2;
    int quiet = 0, skip_invalid = 0;
    const char *totals = "total", *masks = "row", *vsplit = NULL, *numbers = NULL, *calib = "on";
    char thr_def[48];
    snprintf(thr_def, sizeof thr_def, "number of CPUs (%ld here)", default_threads());
    bl_cli_option opts[] = {
        { "data", BL_OPT_STRING, &data, "FILE", "training data (.tsv or .csv with a header line)", NULL, 1, NULL, 0 },
        { "schema", BL_OPT_STRING, &schema, "FILE", "schema of the data (format: datasets/README.md); stored in the model",
          NULL, 1, NULL, 0 },
        { "out", BL_OPT_STRING, &out, "MODEL.h5", "model file to write (the model is added to or replaced in it)", NULL, 1,
          NULL, 0 },
        { "name", BL_OPT_STRING, &name, "NAME", "name of the model inside the file", "the data file's stem", 0, NULL, 0 },
        { "trials", BL_OPT_INT, &trials, "N", "hyper-parameter configurations to try (1..27)", "12", 0, NULL, 0 },
        { "epochs", BL_OPT_INT, &epochs, "N", "most epochs per trial (1..1000000)", "2500", 0, NULL, 0 },
        { "grace", BL_OPT_INT, &grace, "N", "successive-halving grace period (epochs, 1..1000000)", "1000", 0, NULL, 0 },
        { "val-fraction", BL_OPT_DOUBLE, &val_fraction, "F",
          "share held out for validation: of the contexts, or of every (context, scale-out) group's rows", "0.2", 0,
          NULL, 0 },
        { "val-split", BL_OPT_CHOICE, &vsplit, NULL,
          "validation rows: whole contexts (transfer to unseen contexts), or a share of every group (the prototype's "
          "stratified split; every context trains)", VAL_SPLIT_DEFAULT, 0, "contexts|groups", 0 },
        { "threads", BL_OPT_INT, &threads, "N", "trials trained in parallel (the result does not depend on it)", thr_def,
          0, NULL, 0 },
        { "seed", BL_OPT_INT, &seed, "S", "random seed (configurations, splits, initial weights)", "1", 0, NULL, 0 },
        { "members", BL_OPT_INT, &members, "N",
          "ensemble: N searches whose winners' median is the prediction (seeds S, S+1, ...; with --numbers both "
          "S, S, S+1, S+1, ...); 1 = one network", "6", 0, NULL, 0 },
        { "device", BL_OPT_CHOICE, &device, NULL,
          "where the search runs: CPU threads (one trial each) or a CUDA GPU (all trials at once)", "cpu", 0, "cpu|cuda", 0 },
        { "target-scale", BL_OPT_CHOICE, &tscale, NULL,
          "network target: runtime in seconds (as the paper), divided by the mean runtime, or ln(runtime / geometric "
          "mean)", "seconds", 0, "seconds|mean|log", 0 },
        { "delimiter", BL_OPT_CHOICE, &delim, NULL, "field delimiter", "by extension: .tsv tab, .csv comma; other names: a tab in the first line, else comma", 0,
          "tab|comma", 0 },
        { "skip-invalid", BL_OPT_FLAG, &skip_invalid, NULL,
          "leave invalid rows of the data out, each named on stderr (without it the first one is an error)", NULL, 0,
          NULL, 0 },
        { "quiet", BL_OPT_FLAG, &quiet, NULL, "no progress on stderr", NULL, 0, NULL, 0 },
        { "totals", BL_OPT_CHOICE, &totals, NULL,
          "cluster-total numbers (memory, slots): encoded as totals (as the paper) or per machine", "total", 0,
          "total|per-machine", 0 },
        { "numbers", BL_OPT_CHOICE, &numbers, NULL,
          "number properties: the paper's bits (binary), a log-magnitude thermometer (log), or that thermometer "
          "over each property's range in the data (range), or ensemble members alternating bits and log (both)",
          "both with 2 or more members, else binary", 0, "binary|log|range|both", 0 },
        { "dropout-masks", BL_OPT_CHOICE, &masks, NULL,
          "AlphaDropout masks per row (as a row-by-row network), per distinct property value of a batch (faster), or "
          "hybrid (encoder per row, decoder per value)", "row", 0, "row|value|hybrid", 0 },
        { "calibrate", BL_OPT_CHOICE, &calib, NULL,
          "after the searches, calibrate prediction intervals on the contexts they held out (off: predictions "
          "without intervals)", "on", 0, "on|off", 0 },
    };
    const size_t nopts = sizeof opts / sizeof opts[0];
    int rc = bl_cli_parse(prog,
                          "bellamy-train pretrain --data FILE --schema FILE --out MODEL.h5 [--name NAME] [--trials N]\n"
                          "         [--epochs N] [--grace N] [--val-fraction F] [--val-split contexts|groups] [--threads N]\n"
                          "         [--seed S] [--members N] [--device cpu|cuda] [--target-scale seconds|mean|log]\n"
                          "         [--totals total|per-machine] [--numbers binary|log|range|both]\n"
                          "         [--dropout-masks row|value|hybrid] [--calibrate on|off] [--delimiter tab|comma]\n"
                          "         [--skip-invalid] [--quiet]",
                          argc, argv, 1, opts, nopts, NULL, NULL);
    if (rc) return rc < 0 ? bl_cli_finish(prog) : rc;
    if (trials < 1 || trials > 27) { bl_cli_error(prog, "--trials %ld: must be 1..27", trials); return BL_EXIT_USAGE; }
    if (epochs < 1 || epochs > EPOCHS_MAX) {
        bl_cli_error(prog, "--epochs %ld: must be 1..%ld", epochs, EPOCHS_MAX);
        return BL_EXIT_USAGE;
    }
    if (grace < 1 || grace > EPOCHS_MAX) { bl_cli_error(prog, "--grace %ld: must be 1..%ld", grace, EPOCHS_MAX); return BL_EXIT_USAGE; }
    if (seen(opts, nopts, "threads") && threads < 1) { bl_cli_error(prog, "--threads %ld: must be >= 1", threads); return BL_EXIT_USAGE; }
    if (!(val_fraction > 0 && val_fraction < 1)) {
        bl_cli_error(prog, "--val-fraction %g: must be between 0 and 1", val_fraction);
        return BL_EXIT_USAGE;
    }
    if (seed < 0) { bl_cli_error(prog, "--seed %ld: must be >= 0", seed); return BL_EXIT_USAGE; }
    if (members < 1 || members > BL_TRAIN_MEMBERS_MAX) {
        bl_cli_error(prog, "--members %ld: must be 1..%d", members, BL_TRAIN_MEMBERS_MAX);
        return BL_EXIT_USAGE;
    }
    if (!numbers) numbers = members >= 2 ? "both" : "binary"; /* measured best; one network reads bits */
    if (strcmp(numbers, "both") == 0 && members < 2) {
        bl_cli_error(prog, "--numbers both: the members of an ensemble alternate the encodings, so it needs "
                     "--members 2 or more");
        return BL_EXIT_USAGE;
    }
    if (name && (rc = bl_cli_check_model_name(prog, "name", name))) return rc;
    if (strcmp(device, "cuda") == 0) { /* checked before the data is read: a clear error at once */
        bl_error cerr = { 0 };
        if (bl_cuda_check(&cerr) != BL_OK) {
            bl_cli_error(prog, "--device cuda: no CUDA support here: %s; use --device cpu", cerr.message);
            return BL_EXIT_FAIL;
        }
    }
    if (!seen(opts, nopts, "threads")) threads = default_threads();
    if (threads > trials) threads = trials;
    /* everything that can be checked before the (long) training is checked now */
    if ((rc = bl_cli_check_input(prog, "data", data)) || (rc = bl_cli_check_input(prog, "schema", schema)) ||
        (rc = check_model_out(prog, "out", out)))
        return rc;
    char stem[128];
    file_stem(data, stem, sizeof stem);
    if (!name && bl_cli_model_name_problem(stem)) {
        bl_cli_error(prog, "the model would be named after the data file, '%s', which is not a valid model name (%s): "
                     "give --name", stem, bl_cli_model_name_problem(stem));
        return BL_EXIT_USAGE;
    }

    bl_error err = { 0 };
    bl_data *ds = NULL;
    bl_predictor *m = NULL;
    bl_data_opts dopt;
    bl_data_opts_init(&dopt);
    dopt.delimiter = bl_cli_delim(delim);
    dopt.skip_invalid = skip_invalid;
    dopt.totals_per_machine = strcmp(totals, "per-machine") == 0;
    dopt.numbers = strcmp(numbers, "log") == 0     ? BL_NUMBERS_LOG
                 : strcmp(numbers, "range") == 0 ? BL_NUMBERS_RANGE
                 : strcmp(numbers, "both") == 0  ? BL_NUMBERS_BOTH
                                                 : BL_NUMBERS_BINARY;
    if (bl_data_load(data, schema, &dopt, &ds, &err) != BL_OK) return bl_cli_fail(prog, &err);
    bl_cli_note_skipped(prog, "data", ds); /* even with --quiet: rows left out are never silent */
    bl_data_summary sum;
    bl_data_summarize(ds, &sum);
    bl_train_opts po;
    bl_train_opts_init(&po);
    po.trials = (int)trials;
    po.epochs = epochs;
    po.grace = grace;
    po.threads = (int)threads;
    po.seed = (unsigned long long)seed;
    po.val_fraction = val_fraction;
    if (vsplit) po.val_split = strcmp(vsplit, "groups") == 0 ? BL_SPLIT_GROUPS : BL_SPLIT_CONTEXTS;
    po.target_scale = strcmp(tscale, "mean") == 0  ? BL_SCALE_MEAN
                    : strcmp(tscale, "log") == 0 ? BL_SCALE_LOG
                                                 : BL_SCALE_SECONDS;
    po.device = strcmp(device, "cuda") == 0 ? BL_ON_CUDA : BL_ON_CPU;
    po.members = (int)members;
    po.calibrate = strcmp(calib, "off") != 0;
    po.dropout_masks = strcmp(masks, "row") == 0 ? BL_MASKS_ROW : strcmp(masks, "hybrid") == 0 ? BL_MASKS_HYBRID
                                                                                             : BL_MASKS_VALUE;
    /* last = long ago: the first report prints at once */
    progress_state ps = { isatty(STDERR_FILENO), now_s(), -1e9, 0, 0, { 0 }, 0 };
    if (!quiet) {
        po.progress = on_progress;
        po.progress_ctx = &ps;
        /* the grace period only matters where successive halving has rungs to halve at */
        char gr[48] = "";
        if (trials > 1 && grace < epochs) snprintf(gr, sizeof gr, " (grace %ld)", grace);
        fprintf(stderr, "%s: %zu rows, %zu contexts; %ld search%s of %ld trial%s x up to %ld epochs%s on %ld "
                "thread%s, seed %ld%s\n", prog, sum.rows, sum.contexts, members, members == 1 ? "" : "es", trials,
                trials == 1 ? "" : "s", epochs, gr, threads, threads == 1 ? "" : "s", seed,
                members < 2 ? "" : dopt.numbers == BL_NUMBERS_BOTH
                                       ? " (an ensemble: the median of the searches' winners, which read numbers "
                                         "alternately as bits and as log magnitude)"
                                       : " (an ensemble: the median of the searches' winners)");
    }
    bl_status st = bl_pretrain_data(ds, &po, name ? name : stem, &m, &err);
    if (ps.printed) fputc('\n', stderr);
    if (st == BL_OK) st = bl_predictor_save(m, out, NULL, &err);
    if (st == BL_OK) {
        char el[32];
        fmt_duration(now_s() - ps.t0, el, sizeof el);
        bl_model_info mi;
        bl_training_info ti;
        bl_predictor_info(m, &mi);
        bl_predictor_training(m, &ti);
        const char *mname = bl_predictor_name(m);
        /* why there were no validation rows, when there were none: the split holds out whole contexts
         * and there is only one, or it holds out repetitions and no (context, scale-out) group has two */
        const char *why = po.val_split == BL_SPLIT_GROUPS
                              ? "no (context, scale-out) group has a second run to hold out"
                              : sum.contexts < 2 ? "one context, and the validation split holds out whole contexts; "
                                                   "--val-split groups holds out repetitions instead"
                                                 : "the validation share rounds to no context";
        if (mi.members > 1) {
            /* one line per member, then one for the ensemble */
            for (int j = 0; j < mi.members; j++) {
                bl_member_info mb;
                bl_predictor_member(m, j, &mb);
                const long long ep = mb.epochs >= 0 ? mb.epochs : mi.epochs;
                const int both = dopt.numbers == BL_NUMBERS_BOTH;
                printf("member %d/%d (search seed %ld, numbers %s): best %s loss %.6g after %lld epochs (dropout %g, "
                       "learning rate %g, weight decay %g)\n", j + 1, mi.members, seed + (both ? j / 2 : j),
                       mb.numbers, ti.val_rows == 0 ? "training" : "validation", mb.best_loss, ep, mb.dropout,
                       mb.learning_rate, mb.weight_decay);
            }
            if (ti.val_rows == 0)
                printf("pre-trained '%s' on %zu rows (%zu contexts) in %s: an ensemble of %d members (the median of "
                       "their predictions); no validation rows (%s), so each search ranked trials by their training "
                       "loss; saved to %s\n", mname, sum.rows, sum.contexts, el, mi.members, why, out);
            else
                printf("pre-trained '%s' on %zu rows (%zu contexts) in %s: an ensemble of %d members (the median of "
                       "their predictions), validated on %lld rows; saved to %s\n", mname, sum.rows,
                       sum.contexts, el, mi.members, ti.val_rows, out);
        } else if (ti.val_rows == 0) {
            printf("pre-trained '%s' on %zu rows (%zu contexts) in %s: no validation rows (%s), so the search ranked "
                   "trials by their training loss, best %.6g after %lld epochs (dropout %g, learning rate %g, weight "
                   "decay %g); saved to %s\n",
                   mname, sum.rows, sum.contexts, el, why, mi.best_val_loss, mi.epochs, mi.dropout, mi.learning_rate,
                   mi.weight_decay, out);
        } else
            printf("pre-trained '%s' on %zu rows (%zu contexts) in %s: best validation loss %.6g on %lld rows after %lld "
                   "epochs (dropout %g, learning rate %g, weight decay %g); saved to %s\n",
                   mname, sum.rows, sum.contexts, el, mi.best_val_loss, ti.val_rows, mi.epochs, mi.dropout,
                   mi.learning_rate, mi.weight_decay, out);
        bl_calibration_info cal;
        bl_predictor_calibration(m, &cal);
        if (cal.present && cal.contexts >= 9)
            printf("intervals: calibrated on %lld contexts the model never trained on (%lld fine-tunings, %.1f s)\n",
                   cal.contexts, cal.finetunings, cal.seconds);
        else if (cal.present)
            printf("intervals: calibrated on %lld context%s the model never trained on (%lld fine-tunings, %.1f s): too "
                   "few to bound a 0.9 interval (9 are needed); lower coverages up to %.2f are bounded%s\n",
                   cal.contexts, cal.contexts == 1 ? "" : "s", cal.finetunings, cal.seconds,
                   floor(100.0 * (double)cal.contexts / (double)(cal.contexts + 1)) / 100.0,
                   cal.contexts == 0 ? " (none: validation by groups holds no context out; use --val-split contexts)" : "");
        else
            printf("intervals: none (--calibrate off)\n");
    }
    bl_predictor_free(m);
    bl_data_free(ds);
    if (st != BL_OK) return bl_cli_fail(prog, &err);
    return bl_cli_finish(prog);
}

/* ---- the fine-tuned model's fit to its runs ----------------------------------------------------- */

/* The runs' own noise: the pooled standard deviation of ln(runtime) over scale-outs with repetitions
 * among them; NaN when none repeats. */
static double fit_noise(const bl_predictor *p, size_t n) {
    double ss = 0;
    size_t dof = 0;
    for (size_t i = 0; i < n; i++) {
        double xi, yi, sum = 0, sum2 = 0;
        size_t k = 0, first = 1;
        bl_predictor_finetune_fit(p, i, &xi, NULL, NULL, NULL, NULL);
        for (size_t j = 0; j < n && first; j++) {
            double xj;
            bl_predictor_finetune_fit(p, j, &xj, NULL, NULL, NULL, NULL);
            if (xj == xi && j < i) first = 0; /* each scale-out once */
        }
        if (!first) continue;
        for (size_t j = 0; j < n; j++) {
            double xj;
            bl_predictor_finetune_fit(p, j, &xj, &yi, NULL, NULL, NULL);
            if (xj != xi) continue;
            sum += log(yi);
            sum2 += log(yi) * log(yi);
            k++;
        }
        if (k < 2) continue;
        ss += sum2 - sum * sum / (double)k;
        dof += k - 1;
    }
    return dof ? sqrt(fmax(ss, 0) / (double)dof) : NAN;
}

/* How the fine-tuned model fits its runs: *worst the largest relative miss, *noise the runs' own. 0 when
 * not recorded. */
static size_t fit_summary(const bl_predictor *p, double *worst, double *noise) {
    size_t n = 0;
    *worst = 0;
    *noise = NAN;
    if (bl_predictor_finetune_fit(p, 0, NULL, NULL, NULL, NULL, &n) != BL_OK) return 0;
    for (size_t i = 0; i < n; i++) {
        double y, f;
        bl_predictor_finetune_fit(p, i, NULL, &y, &f, NULL, NULL);
        if (fabs(f / y - 1) > *worst || !isfinite(f)) *worst = isfinite(f) ? fabs(f / y - 1) : INFINITY;
    }
    *noise = fit_noise(p, n);
    return n;
}

/* A fit missing the runs by more than their noise (twice it, and at least 5 %: a few runs' noise is
 * itself uncertain) is a model whose predictions rest on more than its runs: said at fine-tuning. */
#define FIT_MISS_MIN 0.05

static void print_fit_lines(const bl_predictor *p, const char *indent) {
    size_t n = 0;
    if (bl_predictor_finetune_fit(p, 0, NULL, NULL, NULL, NULL, &n) != BL_OK) return;
    printf("%sfit to its runs (scale-out: measured, predicted, miss):", indent);
    for (size_t i = 0; i < n && i < 50; i++) {
        double x, y, f;
        bl_predictor_finetune_fit(p, i, &x, &y, &f, NULL, NULL);
        printf("%s %.10g: %.6g s, %.6g s, %+.1f %%", i ? ";" : "", x, y, f, 100.0 * (f / y - 1));
    }
    if (n > 50) printf("; ... (%zu runs)", n);
    putchar('\n');
}

static void note_fit(const char *prog, const bl_predictor *p) {
    double worst, noise;
    if (!fit_summary(p, &worst, &noise)) return;
    const double allow = fmax(isfinite(noise) ? 2 * noise : 0, FIT_MISS_MIN);
    if (!(worst > allow)) return;
    char nz[96];
    if (isfinite(noise)) snprintf(nz, sizeof nz, "their noise, from repetitions among them, is about %.1f %%", 100 * noise);
    else snprintf(nz, sizeof nz, "no scale-out repeats among them, so their noise is taken as under %.1f %%",
                  100 * FIT_MISS_MIN / 2);
    fprintf(stderr, "%s: note: the fine-tuned model misses its own runs by up to %.1f %% (%s): its predictions rest on "
            "more than these runs (the pre-trained network, or Ernest's fit where the guard blends it in), and its "
            "intervals widen with that disagreement; more runs, or runs that agree, narrow them (bellamy-train info "
            "lists the fit per run)\n", prog, 100 * worst, nz);
}

/* ---- finetune ------------------------------------------------------------------------------------ */

static int cmd_finetune(const char *prog, int argc, char **argv) {
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
    if (max_epochs < 1 || max_epochs > EPOCHS_MAX) {
        bl_cli_error(prog, "--max-epochs %ld: must be 1..%ld", max_epochs, EPOCHS_MAX);
        return BL_EXIT_USAGE;
    }
    if (patience < 1 || patience > EPOCHS_MAX) {
        bl_cli_error(prog, "--patience %ld: must be 1..%ld", patience, EPOCHS_MAX);
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
        (schema && (rc = bl_cli_check_input(prog, "schema", schema))) || (rc = check_model_out(prog, "out", out)))
        return rc;

    bl_error err = { 0 };
    bl_predictor *base = NULL, *tuned = NULL;
    bl_data *runs = NULL;
    double t0 = now_s();
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
               now_s() - t0, mi.finetune_mae_s, out, out_name ? out_name : bl_predictor_name(tuned));
        /* the context it was fine-tuned for, as stored in the file (bellamy-train info shows it again) */
        printf("fine-tuned for:");
        for (size_t i = 0; i < bl_predictor_prop_count(tuned); i++) {
            bl_prop_info pi;
            const char *v;
            bl_predictor_prop(tuned, i, &pi);
            if (bl_predictor_finetune_context(tuned, i, &v) == BL_OK) printf("%s%s='%s'", i ? "; " : " ", pi.name, v);
        }
        putchar('\n');
        print_fit_lines(tuned, "");
        note_fit(prog, tuned);
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

/* ---- evaluate ------------------------------------------------------------------------------------ */

static int cmp_dbl(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int cmd_evaluate(const char *prog, int argc, char **argv) {
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

/* ---- split --------------------------------------------------------------------------------------- */

/* Writes the lines of in whose mark matches `want` (mark[line] & want; lines counted from 1, mark has
 * n_mark entries) to path: the header's lines and the chosen rows' lines, as bl_data_row_lines gives
 * them (a row spans several when a quoted field holds line breaks). Line ends become LF.
 * The file is replaced by the one policy of common/file.h: whole or not at all. */
static int write_rows(const char *prog, const char *in, const char *path, const unsigned char *mark, size_t n_mark,
                      unsigned char want) {
    bl_error err = { 0 };
    FILE *f = bl_file_open_read(in, 0, &err);
    if (!f) return bl_cli_fail(prog, &err);
    bl_file_out *o = NULL;
    if (bl_file_out_open(path, &o, &err) != BL_OK) {
        fclose(f);
        return bl_cli_fail(prog, &err);
    }
    char *line = NULL;
    size_t cap = 0, ln = 0;
    ssize_t len;
    bl_status st = BL_OK;
    while (st == BL_OK && (len = getline(&line, &cap, f)) >= 0) {
        size_t l = (size_t)len;
        while (l > 0 && (line[l - 1] == '\n' || line[l - 1] == '\r')) l--;
        if (++ln < n_mark && (mark[ln] & want)) {
            line[l] = '\n';
            st = bl_file_out_write(o, line, l + 1, &err);
        }
    }
    free(line);
    const int bad_in = ferror(f);
    fclose(f);
    if (st == BL_OK && bad_in) {
        bl_file_out_abort(o);
        bl_cli_error(prog, "%s: read error", in);
        return BL_EXIT_FAIL;
    }
    if (st == BL_OK) return bl_file_out_commit(o, &err) == BL_OK ? BL_EXIT_OK : bl_cli_fail(prog, &err);
    bl_file_out_abort(o);
    return bl_cli_fail(prog, &err);
}

/* Splits path into its folder ("." when it has no '/') and last component; dir is malloc'd. */
static char *path_dir(const char *path, const char **base) {
    const char *slash = strrchr(path, '/');
    size_t dl = slash ? (size_t)(slash - path) : 0;
    char *dir = malloc(dl + 2);
    if (!dir) return NULL;
    if (!slash) strcpy(dir, ".");
    else if (dl == 0) strcpy(dir, "/");
    else { memcpy(dir, path, dl); dir[dl] = '\0'; }
    *base = slash ? slash + 1 : path;
    return dir;
}

/* Do the two paths name the same file? Existing files compare by device and inode (hard and
 * symbolic links included); a file that does not exist yet by its folder's device and inode and
 * its last component. */
static int same_file(const char *a, const char *b) {
    struct stat sa, sb;
    if (stat(a, &sa) == 0 && stat(b, &sb) == 0) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    const char *ba, *bb;
    char *da = path_dir(a, &ba), *db = path_dir(b, &bb);
    int same;
    if (da && db && stat(da, &sa) == 0 && stat(db, &sb) == 0)
        same = sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino && strcmp(ba, bb) == 0;
    else
        same = strcmp(a, b) == 0;
    free(da);
    free(db);
    return same;
}

/* Every model of a file loaded and checked (the header's checksum, then each model's blocks and
 * attributes), one line each; --stamp rewrites a file without a header so that it gets one. */
static int cmd_check(const char *prog, int argc, char **argv) {
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

static int cmd_split(const char *prog, int argc, char **argv) {
    const char *data = NULL, *schema = NULL, *held = NULL, *rest = NULL, *sample_out = NULL, *delim = NULL;
    size_t context = 0, sample = 0;
    int list = 0;
    bl_cli_option opts[] = {
        { "data", BL_OPT_STRING, &data, "FILE", "data file (.tsv or .csv)", NULL, 1, NULL, 0 },
        { "schema", BL_OPT_STRING, &schema, "FILE", "its schema", NULL, 1, NULL, 0 },
        { "context", BL_OPT_SIZE, &context, "K", "the context to hold out (0-based, in order of first appearance)", "0", 0,
          NULL, 0 },
        { "held-out", BL_OPT_STRING, &held, "FILE", "write the header and the context's rows here", "not written", 0, NULL,
          0 },
        { "rest", BL_OPT_STRING, &rest, "FILE", "write the header and every other row here", "not written", 0, NULL, 0 },
        { "sample", BL_OPT_SIZE, &sample, "N", "also pick N runs of the context at evenly spread distinct scale-outs", "0",
          0, NULL, 0 },
        { "sample-out", BL_OPT_STRING, &sample_out, "FILE", "write the header and the sampled runs here", "not written", 0,
          NULL, 0 },
        { "delimiter", BL_OPT_CHOICE, &delim, NULL, "field delimiter", "by extension: .tsv tab, .csv comma; other names: a tab in the first line, else comma", 0,
          "tab|comma", 0 },
        { "list", BL_OPT_FLAG, &list, NULL, "list the contexts (index, rows, label) and exit", NULL, 0, NULL, 0 },
    };
    const size_t nopts = sizeof opts / sizeof opts[0];
    int rc = bl_cli_parse(prog,
                          "bellamy-train split --data FILE --schema FILE [--context K] [--held-out FILE] [--rest FILE]\n"
                          "         [--sample N --sample-out FILE] [--delimiter tab|comma] [--list]\n"
                          "Prints the held-out context's property values as name=value lines (cluster totals per machine),\n"
                          "ready for bellamy-predict --set.",
                          argc, argv, 1, opts, nopts, NULL, NULL);
    if (rc) return rc < 0 ? bl_cli_finish(prog) : rc;
    if ((sample > 0) != (sample_out != NULL)) {
        bl_cli_error(prog, "--sample and --sample-out go together");
        return BL_EXIT_USAGE;
    }
    if (list && (held || rest || sample_out || seen(opts, nopts, "context"))) {
        bl_cli_error(prog, "--list only lists the contexts: it takes no --context, --held-out, --rest or --sample-out");
        return BL_EXIT_USAGE;
    }
    if ((rc = bl_cli_check_input(prog, "data", data)) || (rc = bl_cli_check_input(prog, "schema", schema))) return rc;
    /* The outputs: writable, and none of them the input or another output (writing one would
     * destroy the other: the data file would be emptied before it is read). */
    const struct { const char *flag, *path; } outs[] = { { "held-out", held }, { "rest", rest }, { "sample-out", sample_out } };
    for (size_t i = 0; i < 3; i++) {
        if (!outs[i].path) continue;
        if ((rc = bl_cli_check_output(prog, outs[i].flag, outs[i].path))) return rc;
        if (same_file(outs[i].path, data) || same_file(outs[i].path, schema)) {
            bl_cli_error(prog, "--%s %s: is an input file (--%s); choose another output file", outs[i].flag, outs[i].path,
                         same_file(outs[i].path, data) ? "data" : "schema");
            return BL_EXIT_USAGE;
        }
        for (size_t j = 0; j < i; j++)
            if (outs[j].path && same_file(outs[i].path, outs[j].path)) {
                bl_cli_error(prog, "--%s and --%s name the same file (%s)", outs[j].flag, outs[i].flag, outs[i].path);
                return BL_EXIT_USAGE;
            }
    }
    bl_error err = { 0 };
    bl_data *ds = NULL;
    bl_data_opts dopt;
    bl_data_opts_init(&dopt);
    dopt.delimiter = bl_cli_delim(delim);
    if (bl_data_load(data, schema, &dopt, &ds, &err) != BL_OK) return bl_cli_fail(prog, &err);
    bl_data_summary sum;
    bl_data_summarize(ds, &sum);
    if (list) {
        for (size_t c = 0; c < sum.contexts; c++) {
            const char *label;
            size_t nr;
            bl_data_context(ds, c, &label, &nr);
            printf("%zu\t%zu\t%s\n", c, nr, label);
        }
        bl_data_free(ds);
        return bl_cli_finish(prog);
    }
    if (context >= sum.contexts) {
        bl_cli_error(prog, "--context %zu: %s has %zu contexts (0..%zu)", context, data, sum.contexts, sum.contexts - 1);
        bl_data_free(ds);
        return BL_EXIT_FAIL;
    }
    const char *cx_label;
    size_t cx_rows;
    bl_data_context(ds, context, &cx_label, &cx_rows);
    size_t n_mark = 0;
    for (size_t r = 0; r < sum.rows; r++) {
        bl_data_row rw;
        bl_data_get_row(ds, r, &rw);
        if (rw.data_row + 1 > n_mark) n_mark = rw.data_row + 1;
    }
    unsigned char *mark = calloc(n_mark ? n_mark : 1, 1);
    double *xs = malloc((cx_rows ? cx_rows : 1) * sizeof *xs);
    if (!mark || !xs) {
        free(mark);
        free(xs);
        bl_data_free(ds);
        bl_cli_error(prog, "out of memory");
        return BL_EXIT_FAIL;
    }
    /* marks: 1 rest, 2 held out, 4 sampled */
    for (size_t r = 0; r < sum.rows; r++) {
        bl_data_row rw;
        bl_data_get_row(ds, r, &rw);
        mark[rw.data_row] = rw.context == context ? 2 : 1;
    }
    size_t k = 0;
    for (size_t i = 0; i < cx_rows; i++) {
        size_t r;
        bl_data_row rw;
        bl_data_context_row(ds, context, i, &r);
        bl_data_get_row(ds, r, &rw);
        xs[k++] = rw.scale_out;
    }
    qsort(xs, k, sizeof *xs, cmp_dbl);
    size_t nd = 0;
    for (size_t i = 0; i < k; i++)
        if (i == 0 || xs[i] != xs[nd - 1]) xs[nd++] = xs[i];
    rc = BL_EXIT_OK;
    if (sample > nd) {
        bl_cli_error(prog, "--sample %zu: context %zu has only %zu distinct scale-outs", sample, context, nd);
        rc = BL_EXIT_FAIL;
    }
    char picked[256] = "";
    for (size_t j = 0; rc == BL_EXIT_OK && j < sample; j++) {
        /* evenly spread over the sorted distinct scale-outs; the first run (file order) at each */
        size_t idx = sample == 1 ? nd / 2 : (size_t)floor((double)j * (double)(nd - 1) / (double)(sample - 1) + 0.5);
        for (size_t i = 0; i < cx_rows; i++) {
            size_t r;
            bl_data_row rw;
            bl_data_context_row(ds, context, i, &r);
            bl_data_get_row(ds, r, &rw);
            if (rw.scale_out == xs[idx]) {
                mark[rw.data_row] |= 4;
                size_t pl = strlen(picked);
                snprintf(picked + pl, sizeof picked - pl, "%s%g", j ? ", " : "", xs[idx]);
                break;
            }
        }
    }
    /* the marks by line: the header's lines go to every output, each row's lines where it goes */
    size_t first, last, n_lines = 0;
    unsigned char *lmark = NULL;
    if (rc == BL_EXIT_OK) {
        bl_data_row_lines(ds, BL_DATA_HEADER, &first, &last);
        n_lines = last + 1;
        for (size_t r = 0; r < sum.rows; r++) {
            bl_data_row_lines(ds, r, &first, &last);
            if (last + 1 > n_lines) n_lines = last + 1;
        }
        lmark = calloc(n_lines, 1);
        if (!lmark) {
            bl_cli_error(prog, "out of memory");
            rc = BL_EXIT_FAIL;
        }
    }
    if (lmark) {
        bl_data_row_lines(ds, BL_DATA_HEADER, &first, &last);
        for (size_t l = first; l <= last; l++) lmark[l] = 0xff;
        for (size_t r = 0; r < sum.rows; r++) {
            bl_data_row rw;
            bl_data_get_row(ds, r, &rw);
            bl_data_row_lines(ds, r, &first, &last);
            for (size_t l = first; l <= last; l++) lmark[l] = mark[rw.data_row];
        }
    }
    if (rc == BL_EXIT_OK && held) rc = write_rows(prog, data, held, lmark, n_lines, 2);
    if (rc == BL_EXIT_OK && rest) rc = write_rows(prog, data, rest, lmark, n_lines, 1);
    if (rc == BL_EXIT_OK && sample_out) rc = write_rows(prog, data, sample_out, lmark, n_lines, 4);
    free(lmark);
    if (rc == BL_EXIT_OK) {
        fprintf(stderr, "%s: context %zu of %zu held out: %s (%zu rows)%s%s\n", prog, context, sum.contexts, cx_label,
                cx_rows, sample ? "; sampled runs at scale-outs " : "", picked);
        /* The context's values, as bellamy-predict --set takes them. */
        size_t r0;
        bl_data_row rw0;
        bl_data_context_row(ds, context, 0, &r0);
        bl_data_get_row(ds, r0, &rw0);
        for (size_t p = 0; p < sum.props; p++) {
            bl_data_prop pr;
            const char *v;
            bl_data_property(ds, p, &pr);
            bl_data_value(ds, p, r0, &v, NULL);
            if (pr.cluster_total && pr.number)
                printf("%s=%.0f\n", pr.name, floor(strtod(v, NULL) / rw0.scale_out + 0.5));
            else
                printf("%s=%s\n", pr.name, v);
        }
        rc = bl_cli_finish(prog);
    }
    free(mark);
    free(xs);
    bl_data_free(ds);
    return rc;
}

/* ---- synth --------------------------------------------------------------------------------------- */

/* --scale-outs: the one scale-out list syntax (bl_cli_scale_outs), 1..100000, at most 64 of them. */
static int synth_scale_outs(const char *prog, const char *spec, bl_corpus_opts *c) {
    double *x;
    size_t n;
    int rc = bl_cli_scale_outs(prog, "scale-outs", spec, 100000, BL_CORPUS_SCALE_OUTS_MAX, &x, &n);
    if (rc) return rc;
    memcpy(c->scale_outs, x, n * sizeof *x);
    c->n_scale_outs = n;
    free(x);
    return 0;
}

static int cmd_synth(const char *prog, int argc, char **argv) {
    const char *dir = NULL, *stem = "synth";
    bl_corpus_opts c;
    bl_corpus_opts_init(&c);
    size_t contexts = c.contexts, reps = c.reps;
    long seed = (long)c.seed;
    double noise = c.noise, time_scale = 1.0;
    const char *xs_spec = NULL, *shape_s = NULL, *env = NULL;
    bl_cli_option opts[] = {
        { "out-dir", BL_OPT_STRING, &dir, "DIR", "folder to write STEM.tsv and STEM.schema into (must exist)", NULL, 1,
          NULL, 0 },
        { "stem", BL_OPT_STRING, &stem, "STEM", "file name stem", "synth", 0, NULL, 0 },
        { "contexts", BL_OPT_SIZE, &contexts, "N", "contexts (1..60)", "12", 0, NULL, 0 },
        { "reps", BL_OPT_SIZE, &reps, "N", "repetitions per scale-out (1..1000)", "3", 0, NULL, 0 },
        { "noise", BL_OPT_DOUBLE, &noise, "F", "relative noise (standard deviation, 0..1)", "0.03", 0, NULL, 0 },
        { "seed", BL_OPT_INT, &seed, "S", "random seed", "1", 0, NULL, 0 },
        { "scale-outs", BL_OPT_STRING, &xs_spec, "LIST", "scale-outs: N, A..B or A..B:STEP, or a list of them (4,8,16..32:8; 1..100000, at most 64)",
          "2..12:2", 0, NULL, 0 },
        { "shape", BL_OPT_STRING, &shape_s, "ernest|cliff|superlinear|plateau",
          "the curves' shape (src/data/synth.h; the others are shifted environments)", "ernest", 0, NULL, 0 },
        { "time-scale", BL_OPT_DOUBLE, &time_scale, "F", "every runtime times F (0 < F <= 1e6)", "1", 0, NULL, 0 },
        { "environment", BL_OPT_STRING, &env, "TEXT", "the environment property's value", "synthetic corpus", 0, NULL,
          0 },
    };
    const size_t nopts = sizeof opts / sizeof opts[0];
    int rc = bl_cli_parse(prog,
                          "bellamy-train synth --out-dir DIR [--stem STEM] [--contexts N] [--reps N] [--noise F] [--seed S]\n"
                          "                    [--scale-outs LIST] [--shape S] [--time-scale F] [--environment TEXT]\n"
                          "Writes the synthetic corpus (Ernest-form runtime curves, scale-outs 2..12) and its schema, or a\n"
                          "shifted environment of it (other scale-outs, shape, runtime scale, environment).",
                          argc, argv, 1, opts, nopts, NULL, NULL);
    if (rc) return rc < 0 ? bl_cli_finish(prog) : rc;
    if (contexts < 1 || contexts > BL_CORPUS_CONTEXTS_MAX) {
        bl_cli_error(prog, "--contexts %zu: must be 1..%d", contexts, BL_CORPUS_CONTEXTS_MAX);
        return BL_EXIT_USAGE;
    }
    /* the bounds bl_corpus_write checks, named by flag here */
    if (reps < 1 || reps > 1000) { bl_cli_error(prog, "--reps %zu: must be 1..1000", reps); return BL_EXIT_USAGE; }
    if (noise < 0 || noise > 1) { bl_cli_error(prog, "--noise %g: must be 0..1", noise); return BL_EXIT_USAGE; }
    if (strchr(stem, '/') || strcmp(stem, ".") == 0 || strcmp(stem, "..") == 0) {
        bl_cli_error(prog, "--stem '%s': a file name without folders (the folder is --out-dir)", stem);
        return BL_EXIT_USAGE;
    }
    struct stat dst;
    if (stat(dir, &dst) != 0) { bl_cli_error(prog, "--out-dir %s: %s", dir, strerror(errno)); return BL_EXIT_FAIL; }
    if (!S_ISDIR(dst.st_mode)) { bl_cli_error(prog, "--out-dir %s: not a folder", dir); return BL_EXIT_FAIL; }
    if (seed < 0) { bl_cli_error(prog, "--seed %ld: must be >= 0", seed); return BL_EXIT_USAGE; }
    c.contexts = contexts;
    c.reps = reps;
    c.noise = noise;
    c.seed = (unsigned long long)seed;
    if (xs_spec && (rc = synth_scale_outs(prog, xs_spec, &c))) return rc;
    if (shape_s && (c.shape = bl_corpus_shape(shape_s)) < 0) {
        bl_cli_error(prog, "--shape '%s': one of ernest, cliff, superlinear, plateau", shape_s);
        return BL_EXIT_USAGE;
    }
    if (!(time_scale > 0 && time_scale <= 1e6)) {
        bl_cli_error(prog, "--time-scale %g: must be above 0 and at most 1e6", time_scale);
        return BL_EXIT_USAGE;
    }
    c.time_scale = time_scale;
    if (env) {
        int printable = 1, allowed = 1; /* a schema constant holds printable ASCII, no quote or backslash */
        for (const unsigned char *q = (const unsigned char *)env; *q; q++) {
            printable &= *q >= 0x20 && *q < 0x7f;
            allowed &= *q != '"' && *q != '\\';
        }
        if (!*env || strlen(env) > BL_CORPUS_ENVIRONMENT_MAX || !printable || !allowed) {
            bl_cli_error(prog, "--environment: 1..%d printable ASCII characters without a quote or backslash (a "
                         "schema constant holds it); %s%.60s%s is not", BL_CORPUS_ENVIRONMENT_MAX, printable ? "'" : "",
                         printable ? env : "a value with control or non-ASCII bytes",
                         !printable ? "" : strlen(env) > 60 ? "...'" : "'");
            return BL_EXIT_USAGE;
        }
        c.environment = env;
    }
    bl_error err = { 0 };
    size_t n_rows = 0, n_contexts = 0;
    bl_status st = bl_corpus_write(&c, dir, stem, &n_rows, &n_contexts, &err);
    if (st == BL_OK) printf("%s/%s.tsv (%zu rows, %zu contexts) and %s/%s.schema\n", dir, stem, n_rows, n_contexts, dir,
                            stem);
    if (st != BL_OK) return bl_cli_fail(prog, &err);
    return bl_cli_finish(prog);
}

/* ---- info ---------------------------------------------------------------------------------------- */

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
static int cmd_info(const char *prog, int argc, char **argv) {
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
        printf("],\"combine\":\"%s\",\"encoding\":{\"numbers\":\"%s\",\"cluster_totals\":\"%s\",\"vec_len\":%u,"
               "\"ngram_min\":%u,\"ngram_max\":%u,\"hash\":\"xxh32\",\"hash_seed\":%u,\"target_scaling\":\"%s\","
               "\"target_scale\":", mi.members > 1 ? "median" : "single", ti.numbers,
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
            if (fit_summary(p, &worst, &noise)) {
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
            print_fit_lines(p, "");
            double worst, noise;
            if (fit_summary(p, &worst, &noise) &&
                worst > fmax(isfinite(noise) ? 2 * noise : 0, FIT_MISS_MIN))
                printf("  it misses its own runs by up to %.1f %%, more than their noise (%s): its intervals widen "
                       "accordingly\n", 100 * worst, isfinite(noise) ? "from repetitions" : "no repetitions: taken as under 2.5 %");
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

/* ---- dispatch ----------------------------------------------------------------------------------- */

typedef int (*command_fn)(const char *prog, int argc, char **argv);

static const struct command {
    const char *name;
    const char *summary;
    command_fn  run;
} commands[] = {
    { "inspect", "load a data file through a schema; show rows, contexts, properties and one row's encoding",
      cmd_inspect },
    { "pretrain", "pre-train a model (hyper-parameter search) on a data file and save it", cmd_pretrain },
    { "finetune", "fine-tune a saved model on a few runs of a new context and save the result", cmd_finetune },
    { "evaluate", "predict every run of a data file; measured vs. predicted per scale-out", cmd_evaluate },
    { "info", "what a model knows: its properties and what each needs, the values and ranges it was trained on, "
      "its training and fine-tuning (and for which context), members and encodings", cmd_info },
    { "check", "load and check every model of a model file (checksum, blocks, attributes); --stamp adds a checksum", cmd_check },
    { "split", "hold one context of a data file out: write its rows and the other rows to two files",
      cmd_split },
    { "synth", "write the synthetic corpus (known runtime curves) and its schema", cmd_synth },
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
