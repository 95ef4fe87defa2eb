/* bellamy_predict.c — the `bellamy-predict` program: predicted runtime per scale-out for one job
 * context, and the scale-out to choose, using the public library API (bellamy/bellamy.h) and, for
 * --history, bl_predictor_finetune_file in its two steps (bellamy/train.h: bl_runs_load, then
 * bl_predictor_finetune_data), which lets it note on stderr when the runs span several contexts or are
 * of another context than --set.
 *
 *   bellamy-predict --model MODEL.h5 [--name NAME] [--set prop=value ...] [--context-from RUNS]
 *                   --scale-out 2..12 [--history RUNS.tsv [--schema FILE]] [--skip-invalid]
 *                   [--target-runtime S [--confidence P]] [--price P] [--goal fastest|smallest|cheapest]
 *                   [--coverage C] [--max-width W] [--json]
 *
 * The context: --set values, then those of --context-from (or of --history when its runs are of
 * one context), then what the model knows (bl_predictor_prop_default). Warnings about the request
 * (bl_warnings) go to stderr as "bellamy-predict: warning: ..." and into the JSON's "warnings".
 * Output: a TSV table (scale_out, predicted_runtime_s, lo_runtime_s and hi_runtime_s at --coverage when
 * the model is calibrated, cost with --price, then unbounded_why when calibrated) followed by one
 * "# chosen: ..." line, or one JSON object with --json. Exit 0 ok, 1 failure, 2 usage error, 3 the
 * predictions printed but no scale-out could be chosen (the "# chosen: none" line says why).
 * Not here: model logic (src/api, src/model).
 */
#include "cli/cli_util.h"
#include "common/error.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *PROG = "bellamy-predict";

#define MAX_SCALE_OUTS 100000      /* most scale-outs one call predicts */
#define MAX_SCALE_OUT  1000000.0   /* largest scale-out (machines); beyond, a typo, not a cluster */
#define MAX_PRICE      1e9         /* largest --price per machine-hour: keeps every cost finite */
#define MAX_TARGET     BL_RUNTIME_MAX_S /* largest --target-runtime in seconds (some 30 000 years) */

#define EXIT_NO_CHOICE 3            /* predictions printed, but no scale-out could be chosen: not a crash */

#define json_num bl_cli_json_num
#define json_str bl_cli_json_str

/* What bl_choose can choose: a runtime in (0, BL_RUNTIME_MAX_S]. */
static int plausible(double t) { return t > 0 && t <= BL_RUNTIME_MAX_S; }

/* A runtime (decimals 2) or a cost (4) as the table shows it, in one of 8 static buffers used in turn:
 * fixed decimals as always, but 3 significant digits where those decimals would show a positive value
 * as 0 or keep one digit of it (below 0.1 s: a model fine-tuned on 1e-300 s predicts 2.45e-99, never
 * "0.00"), and %g for what no choice takes (0 or less, above 1e12: no 300-digit numbers). */
static const char *shown(double v, int decimals, int fixed_ok) {
    static char buf[8][48];
    static unsigned next;
    char *b = buf[next++ % 8];
    const double small = pow(10.0, 1 - decimals);
    if (fixed_ok && v >= small) snprintf(b, sizeof buf[0], "%.*f", decimals, v);
    else if (v > 0 && v < small) snprintf(b, sizeof buf[0], "%.3g", v);
    else snprintf(b, sizeof buf[0], "%g", v);
    return b;
}
static const char *secs(double t) { return shown(t, 2, plausible(t)); }

/* bl_interval_why as the TSV's unbounded_why and the JSON's "unbounded_why" say it (the names of the
 * JSON's "interval" counts); "" for a bounded interval. */
static const char *unbounded_name(int why) {
    return why == BL_INTERVAL_BEYOND ? "beyond_support" : why == BL_INTERVAL_STAND_IN ? "stand_in"
           : why == BL_INTERVAL_TOO_FEW ? "too_few_contexts" : why == BL_INTERVAL_TOO_WIDE ? "too_wide" : "";
}

static const char *goal_name(bl_goal g) {
    return g == BL_GOAL_SMALLEST ? "smallest" : g == BL_GOAL_CHEAPEST ? "cheapest" : "fastest";
}

/* Notes on stderr (the prediction still goes ahead) when the --history runs are not the runs of
 * the one context predicted for: fine-tuning is meant for those. */
static void history_notes(const char *path, const bl_data *runs, const bl_prop_value *ctx, size_t n_ctx) {
    char msg[600];
    bl_data_summary s;
    bl_data_summarize(runs, &s);
    if (s.contexts > 1) {
        bl_data_context_spread(runs, msg, sizeof msg);
        fprintf(stderr, "%s: note: --history %s holds runs of %zu contexts, which differ in %s; fine-tuning is meant "
                "for the runs of one context (the job predicted for), and uses all %zu runs\n", PROG, path,
                s.contexts, msg, s.rows);
        size_t match = 0;
        for (size_t c = 0; c < s.contexts && !match; c++)
            match = bl_data_context_diff(runs, c, ctx, n_ctx, msg, sizeof msg) == 0;
        if (!match) fprintf(stderr, "%s: note: none of those contexts is the --set context\n", PROG);
    } else if (bl_data_context_diff(runs, 0, ctx, n_ctx, msg, sizeof msg) > 0) {
        fprintf(stderr, "%s: note: the --history runs are of another context than --set (%s); the model is "
                "fine-tuned on them and predicts for --set\n", PROG, msg);
    }
}

/* Contexts of a runs file (0 for NULL). */
static size_t n_contexts(const bl_data *runs) {
    bl_data_summary s;
    return runs && bl_data_summarize(runs, &s) == BL_OK ? s.contexts : 0;
}

/* Where each value of the context came from, for the JSON output. */
enum { FROM_SET = 1, FROM_FILE = 2, FROM_MODEL = 3 };

static const char *from_name(int from) {
    return from == FROM_SET ? "set" : from == FROM_FILE ? "runs" : from == FROM_MODEL ? "model" : "none";
}

/* The value of property `name` in the first run of runs' first context, as a context gives it (a
 * cluster total per machine), into buf; NULL when the runs lack it. */
static const char *run_value(const bl_data *runs, const char *name, char *buf, size_t cap) {
    long j = bl_data_find_property(runs, name);
    size_t r;
    bl_data_prop pr;
    bl_data_row row;
    bl_data_summary s;
    const char *v;
    if (j < 0 || bl_data_context_row(runs, 0, 0, &r) != BL_OK || bl_data_property(runs, (size_t)j, &pr) != BL_OK ||
        bl_data_get_row(runs, r, &row) != BL_OK || bl_data_value(runs, (size_t)j, r, &v, NULL) != BL_OK ||
        bl_data_summarize(runs, &s) != BL_OK)
        return NULL;
    if (pr.number && pr.cluster_total && !s.totals_per_machine) {
        snprintf(buf, cap, "%.0f", floor(strtod(v, NULL) / row.scale_out + 0.5));
        return buf;
    }
    snprintf(buf, cap, "%s", v);
    return buf;
}

int main(int argc, char **argv) {
    bl_cli_init();
    if (argc >= 2 && strcmp(argv[1], "--version") == 0) {
        if (argc > 2) { bl_cli_error(PROG, "--version takes no other arguments"); return BL_EXIT_USAGE; }
        return bl_cli_version(PROG);
    }
    const char *model = NULL, *name = NULL, *spec = NULL, *history = NULL, *schema = NULL, *goal_s = NULL;
    const char *ctx_from = NULL;
    bl_cli_list sets = { 0 };
    double target = 0, price = 0, coverage = 0.9, confidence = 0, max_width = 0;
    int json = 0, skip_invalid = 0;
    bl_cli_option opts[] = {
        { "model", BL_OPT_STRING, &model, "MODEL.h5", "model file", NULL, 1, NULL, 0 },
        { "name", BL_OPT_STRING, &name, "NAME", "model inside the file", "the file's only model", 0, NULL, 0 },
        { "set", BL_OPT_LIST, &sets, "PROP=VALUE",
          "a property of the job's context (cluster totals per machine); every essential one the model cannot fill "
          "is needed (bellamy-train info lists them)", NULL, 0, NULL, 0 },
        { "scale-out", BL_OPT_STRING, &spec, "SPEC", "scale-outs (whole numbers of machines) to predict: N, a range A..B or A..B:STEP, or a list of them (4,8,16..32:8)",
          NULL, 1, NULL, 0 },
        { "history", BL_OPT_STRING, &history, "RUNS",
          "runs of this context (.tsv/.csv like the training data) to fine-tune on first, in memory; when they are "
          "of one context, the properties --set leaves out are taken from them", "none", 0, NULL, 0 },
        { "context-from", BL_OPT_STRING, &ctx_from, "RUNS",
          "take the context from a runs file of one context (--set values take precedence)", "none", 0, NULL, 0 },
        { "schema", BL_OPT_STRING, &schema, "FILE", "schema of RUNS", "the schema stored in the model", 0, NULL, 0 },
        { "skip-invalid", BL_OPT_FLAG, &skip_invalid, NULL,
          "leave invalid rows of RUNS out, each named on stderr (without it the first one is an error)", NULL, 0,
          NULL, 0 },
        { "target-runtime", BL_OPT_DOUBLE, &target, "S", "runtime target in seconds (> 0)", "none", 0, NULL, 0 },
        { "price", BL_OPT_DOUBLE, &price, "P", "price of one machine for one hour (> 0); adds a cost column", "none", 0,
          NULL, 0 },
        { "goal", BL_OPT_CHOICE, &goal_s, NULL, "how to choose the scale-out",
          "cheapest with --price, else smallest with --target-runtime, else fastest", 0, "fastest|smallest|cheapest", 0 },
        { "json", BL_OPT_FLAG, &json, NULL, "write one JSON object instead of TSV", NULL, 0, NULL, 0 },
        { "coverage", BL_OPT_DOUBLE, &coverage, "C",
          "coverage of the intervals printed beside each prediction, strictly between 0 and 1", "0.9", 0, NULL, 0 },
        { "confidence", BL_OPT_DOUBLE, &confidence, "P",
          "meet --target-runtime with the upper end of the interval at coverage P (0 < P < 1), not the prediction",
          "none", 0, NULL, 0 },
        { "max-width", BL_OPT_DOUBLE, &max_width, "W",
          "never choose a scale-out whose interval is wider than W times its prediction", "no limit", 0, NULL, 0 },
    };
    const size_t nopts = sizeof opts / sizeof opts[0];
    int rc = bl_cli_parse(PROG,
                          "bellamy-predict --model MODEL.h5 [--name NAME] [--set PROP=VALUE ...] [--context-from RUNS]\n"
                          "         --scale-out A..B|N|N,M,... [--history RUNS] [--schema FILE] [--skip-invalid]\n"
                          "         [--target-runtime S [--confidence P]] [--price P] [--goal fastest|smallest|cheapest]\n"
                          "         [--coverage C] [--max-width W] [--json]\n"
                          "       bellamy-predict --help | --version\n\n"
                          "exit status: 0 the predictions and the choice printed; 3 the predictions printed, but no\n"
                          "scale-out could be chosen (the \"# chosen: none\" line says why); 1 failure; 2 usage error",
                          argc, argv, 1, opts, nopts, NULL, NULL);
    if (rc) return rc < 0 ? bl_cli_finish(PROG) : rc;

    /* Everything the command line alone can refute is a usage error (exit 2). */
    bl_choice_opts co;
    bl_choice_opts_init(&co);
    if (opts[8].seen && !(target > 0 && target <= MAX_TARGET)) {
        bl_cli_error(PROG, "--target-runtime %g: must be a positive number of seconds (at most %g)", target, MAX_TARGET);
        return BL_EXIT_USAGE;
    }
    if (opts[9].seen && !(price > 0 && price <= MAX_PRICE)) {
        bl_cli_error(PROG, "--price %g: must be a positive price per machine-hour (at most %g)", price, MAX_PRICE);
        return BL_EXIT_USAGE;
    }
    if (schema && !history && !ctx_from) {
        bl_cli_error(PROG, "--schema is only used with --history or --context-from");
        return BL_EXIT_USAGE;
    }
    if (skip_invalid && !history && !ctx_from) {
        bl_cli_error(PROG, "--skip-invalid is only used with --history or --context-from");
        return BL_EXIT_USAGE;
    }
    const int coverage_given = opts[12].seen;
    if (coverage_given && !(coverage > 0 && coverage < 1)) {
        bl_cli_error(PROG, "--coverage %g: must lie strictly between 0 and 1 (0.9: a 90 %% interval)", coverage);
        return BL_EXIT_USAGE;
    }
    if (opts[13].seen && !(confidence > 0 && confidence < 1)) {
        bl_cli_error(PROG, "--confidence %g: must lie strictly between 0 and 1 (0.9: the runtime target is met 9 "
                     "times in 10)", confidence);
        return BL_EXIT_USAGE;
    }
    if (opts[13].seen && !(target > 0)) {
        bl_cli_error(PROG, "--confidence needs --target-runtime (the runtime to be confident about)");
        return BL_EXIT_USAGE;
    }
    if (opts[14].seen && !(max_width > 0 && max_width <= 1e6)) {
        bl_cli_error(PROG, "--max-width %g: must be a positive share of the prediction (e.g. 0.5: the interval spans "
                     "at most half the predicted runtime)", max_width);
        return BL_EXIT_USAGE;
    }
    co.target_runtime_s = target;
    co.price_per_hour = price;
    co.confidence = confidence;
    co.max_width = max_width;
    if (goal_s) co.goal = strcmp(goal_s, "cheapest") == 0 ? BL_GOAL_CHEAPEST
                        : strcmp(goal_s, "smallest") == 0 ? BL_GOAL_SMALLEST : BL_GOAL_FASTEST;
    else co.goal = price > 0 ? BL_GOAL_CHEAPEST : target > 0 ? BL_GOAL_SMALLEST : BL_GOAL_FASTEST;
    if (co.goal == BL_GOAL_SMALLEST && !(target > 0)) {
        bl_cli_error(PROG, "--goal smallest needs --target-runtime");
        return BL_EXIT_USAGE;
    }
    if (co.goal == BL_GOAL_CHEAPEST && !(price > 0)) {
        bl_cli_error(PROG, "--goal cheapest needs --price");
        return BL_EXIT_USAGE;
    }
    bl_prop_value ctx[BL_CLI_LIST_MAX];
    char *set_copy[BL_CLI_LIST_MAX] = { 0 };
    for (size_t i = 0; i < sets.n; i++) {
        const char *eq = strchr(sets.items[i], '=');
        if (!eq || eq == sets.items[i]) {
            bl_cli_error(PROG, "--set '%s': write PROP=VALUE, e.g. --set machine_type=c4.2xlarge", sets.items[i]);
            for (size_t j = 0; j < i; j++) free(set_copy[j]);
            return BL_EXIT_USAGE;
        }
        set_copy[i] = malloc(strlen(sets.items[i]) + 1);
        if (!set_copy[i]) {
            for (size_t j = 0; j < i; j++) free(set_copy[j]);
            bl_cli_error(PROG, "out of memory");
            return BL_EXIT_FAIL;
        }
        strcpy(set_copy[i], sets.items[i]);
        set_copy[i][eq - sets.items[i]] = '\0';
        ctx[i].name = set_copy[i];
        ctx[i].value = set_copy[i] + (eq - sets.items[i]) + 1;
    }
    double *x = NULL, *t = NULL;
    int *iwhy = NULL; /* bl_interval_why of each interval */
    size_t n = 0;
    /* the full context: --set, then the runs file's, then (in the library) the model's own */
    bl_prop_value *full = NULL;
    char (*vbuf)[256] = NULL;
    int *from = NULL;
    size_t n_full = 0;
    bl_warnings *warns = NULL;
    rc = bl_cli_scale_outs(PROG, "scale-out", spec, MAX_SCALE_OUT, MAX_SCALE_OUTS, &x, &n);
    if (rc) goto out;
    /* the files, before the model is loaded: a clear message naming the flag */
    if ((rc = bl_cli_check_input(PROG, "model", model)) || (history && (rc = bl_cli_check_input(PROG, "history", history))) ||
        (ctx_from && (rc = bl_cli_check_input(PROG, "context-from", ctx_from))) ||
        (schema && (rc = bl_cli_check_input(PROG, "schema", schema))))
        goto out;

    bl_error err = { 0 };
    bl_predictor *base = NULL, *tuned = NULL;
    const bl_predictor *p = NULL;
    bl_data *runs = NULL, *cruns = NULL;
    bl_choice ch;
    bl_cli_note_unverified(PROG, model);
    bl_status st = bl_predictor_load(model, name, &base, &err);
    if (st == BL_OK) st = bl_warnings_new(&warns, &err);
    if (st == BL_OK && ctx_from) {
        st = bl_runs_load(base, ctx_from, schema, skip_invalid, &cruns, &err);
        if (st == BL_OK) bl_cli_note_skipped(PROG, "context-from", cruns);
        if (st == BL_OK && n_contexts(cruns) > 1) {
            char spread[600];
            bl_data_context_spread(cruns, spread, sizeof spread);
            st = bl_seterr(&err, BL_EINVAL, "--context-from %s holds runs of %zu contexts, which differ in %s: give a "
                           "file of one context, or those properties with --set", ctx_from, n_contexts(cruns), spread);
        }
        if (st != BL_OK && strncmp(err.message, "--context-from", 14) != 0) bl_prefixerr(&err, "--context-from");
    }
    if (st == BL_OK && history) {
        st = bl_runs_load(base, history, schema, skip_invalid, &runs, &err);
        if (st == BL_OK) bl_cli_note_skipped(PROG, "history", runs);
        if (st == BL_OK && (sets.n || cruns)) history_notes(history, runs, ctx, sets.n);
        else if (st == BL_OK && n_contexts(runs) > 1) history_notes(history, runs, NULL, 0);
        if (st != BL_OK) bl_prefixerr(&err, "--history");
    }
    p = base; /* the fine-tuned model has the same properties */
    /* the context: --set, then the runs of --context-from, or of --history when of one context */
    const bl_data *src = cruns ? cruns : runs && n_contexts(runs) == 1 ? runs : NULL;
    const size_t np = p ? bl_predictor_prop_count(p) : 0;
    if (st == BL_OK) {
        full = calloc(sets.n + np + 1, sizeof *full);
        vbuf = calloc(np + 1, sizeof *vbuf);
        from = calloc(sets.n + np + 1, sizeof *from);
        if (!full || !vbuf || !from) st = bl_seterr(&err, BL_ENOMEM, "out of memory");
    }
    for (size_t i = 0; st == BL_OK && i < sets.n; i++) {
        full[n_full] = ctx[i];
        from[n_full++] = FROM_SET;
    }
    for (size_t i = 0; st == BL_OK && src && i < np; i++) {
        bl_prop_info pi;
        bl_predictor_prop(p, i, &pi);
        int given = 0;
        for (size_t j = 0; j < sets.n && !given; j++) given = strcmp(ctx[j].name, pi.name) == 0;
        if (given) continue;
        const char *v = run_value(src, pi.name, vbuf[i], sizeof vbuf[i]);
        if (!v) continue;
        full[n_full].name = pi.name;
        full[n_full].value = v;
        from[n_full++] = FROM_FILE;
    }
    if (st == BL_OK) {
        t = malloc(3 * n * sizeof *t);
        iwhy = calloc(n, sizeof *iwhy);
        if (!t || !iwhy) st = bl_seterr(&err, BL_ENOMEM, "out of memory");
    }
    /* the context is checked before the fine-tuning, which takes a while */
    if (st == BL_OK && runs) st = bl_predictor_check_context(base, full, n_full, &err);
    if (st == BL_OK && runs) {
        bl_tune_opts to;
        bl_tune_opts_init(&to);
        st = bl_predictor_finetune_data(base, runs, &to, NULL, &tuned, &err);
        if (st != BL_OK) bl_prefixerr(&err, "--history");
        else p = tuned;
    }
    bl_calibration_info cal = { 0 };
    if (st == BL_OK) bl_predictor_calibration(p, &cal);
    const int intervals = cal.present;
    double *lo = t ? t + n : NULL, *hi = t ? t + 2 * n : NULL;
    if (st == BL_OK && !intervals && (coverage_given || confidence > 0 || max_width > 0))
        st = bl_seterr(&err, BL_EUNSUPPORTED, "model '%s' in %s carries no calibration (pre-trained before libbellamy "
                       "0.6, or with --calibrate off): %s are unavailable; pre-train it again with bellamy-train pretrain to get intervals",
                       bl_predictor_name(p), model, confidence > 0 ? "confident choices (--confidence)" :
                       max_width > 0 ? "width limits (--max-width)" : "intervals (--coverage)");
    if (st == BL_OK && intervals) st = bl_predict_interval(p, full, n_full, x, n, coverage, lo, t, hi, iwhy, warns, &err);
    else if (st == BL_OK) st = bl_predict_warn(p, full, n_full, x, n, t, warns, &err);
    if (st == BL_EINVAL && runs && !cruns && n_contexts(runs) > 1 && strstr(err.message, "missing")) {
        size_t len = strlen(err.message);
        snprintf(err.message + len, sizeof err.message - len, "; --history holds runs of %zu contexts, so the "
                 "context is not taken from it: give --set or --context-from", n_contexts(runs));
    } else if (st == BL_EINVAL && strstr(err.message, "missing") && !src) {
        size_t len = strlen(err.message);
        snprintf(err.message + len, sizeof err.message - len, "; give each with --set NAME=VALUE or take them from "
                 "runs with --context-from RUNS");
    }
    /* no scale-out may be chosen (BL_ERANGE): the predictions are still what was asked for, so they are
     * printed, the choice line says why none was chosen, and the exit status (3) tells a script */
    char no_choice[sizeof err.message] = "";
    if (st == BL_OK) st = bl_choose_scale_out(p, full, n_full, x, n, &co, &ch, &err);
    const char *why_none = no_choice; /* the reasons alone, after the library's "no candidate can be chosen: " */
    if (st == BL_ERANGE) {
        snprintf(no_choice, sizeof no_choice, "%s", err.message);
        const char *lead = "no candidate can be chosen: ";
        if (strncmp(no_choice, lead, strlen(lead)) == 0) why_none = no_choice + strlen(lead);
        st = BL_OK;
    }
    /* the choice's interval at --coverage, as in the table */
    if (st == BL_OK && intervals && !(confidence > 0) && !*no_choice) {
        ch.lo_runtime_s = lo[ch.index];
        ch.hi_runtime_s = hi[ch.index];
        ch.coverage = coverage;
    }
    if (st != BL_OK) {
        rc = bl_cli_fail(PROG, &err);
        goto done;
    }
    for (size_t i = 0; i < bl_warnings_count(warns); i++)
        fprintf(stderr, "%s: warning: %s\n", PROG, bl_warnings_message(warns, i));
    if (!intervals)
        fprintf(stderr, "%s: note: model '%s' carries no calibration (pre-trained before libbellamy 0.6, or with "
                "--calibrate off): no intervals are shown; pre-train it again to get them\n", PROG, bl_predictor_name(p));
    /* where intervals are unbounded, and why: beyond the support (never chosen), or too few held-out
     * contexts for the coverage asked for */
    size_t n_beyond = 0, n_thin = 0, n_wide = 0;
    double slo = NAN, shi = NAN;
    bl_model_ranges rg;
    if (bl_predictor_ranges(p, &rg) == BL_OK) {
        slo = rg.scale_out_min;
        shi = rg.scale_out_max;
        if (rg.finetune_runs > 0) {
            slo = fmin(slo, rg.finetune_scale_out_min);
            shi = fmax(shi, rg.finetune_scale_out_max);
        }
    }
    for (size_t i = 0; intervals && i < n; i++) { /* a stand-in is warned about */
        n_beyond += iwhy[i] == BL_INTERVAL_BEYOND;
        n_thin += iwhy[i] == BL_INTERVAL_TOO_FEW;
        n_wide += iwhy[i] == BL_INTERVAL_TOO_WIDE;
    }
    int mismatch = 0;
    for (size_t i = 0; i < bl_warnings_count(warns); i++) mismatch |= bl_warnings_kind(warns, i) == BL_WARN_CONTEXT;
    if (mismatch) cal.runs = 0; /* sized as for an unseen context */
    if (n_beyond)
        fprintf(stderr, "%s: note: %zu scale-out%s lie%s beyond 4 times the scale-outs the model and its runs know "
                "(%.10g..%.10g): the runtime is unknown there (unbounded interval), and %s never chosen\n", PROG,
                n_beyond, n_beyond == 1 ? "" : "s", n_beyond == 1 ? "s" : "", slo, shi,
                n_beyond == 1 ? "it is" : "they are");
    const char *meth = "network", *why = "";
    double ew = 0;
    bl_predictor_method(p, &meth, &ew, &why);
    if (strcmp(meth, "network") != 0) /* not the fine-tuned network alone: say what and why */
        fprintf(stderr, "%s: note: runtimes are %s (Ernest's weight %.3g): %s\n", PROG,
                strcmp(meth, "ernest") == 0 ? "Ernest's fit to the fine-tuning runs" : "a blend of the network and Ernest",
                ew, why);
    if (json) {
        printf("{\"model\":");
        json_str(bl_predictor_name(p));
        /* every property in the model's order: the values used, and where each came from */
        printf(",\"context\":{");
        int first = 1;
        for (size_t i = 0; i < np; i++) {
            bl_prop_info pi;
            bl_predictor_prop(p, i, &pi);
            const char *v = NULL;
            for (size_t j = 0; j < n_full && !v; j++)
                if (strcmp(full[j].name, pi.name) == 0) v = full[j].value;
            if (!v && bl_predictor_prop_default(p, i, &v, NULL) != BL_OK) v = NULL;
            if (!v) continue;
            printf("%s", first ? "" : ",");
            first = 0;
            json_str(pi.name);
            putchar(':');
            bl_cli_json_value(v, pi.number);
        }
        printf("},\"context_from\":{");
        first = 1;
        for (size_t i = 0; i < np; i++) {
            bl_prop_info pi;
            bl_predictor_prop(p, i, &pi);
            int f = 0;
            for (size_t j = 0; j < n_full && !f; j++)
                if (strcmp(full[j].name, pi.name) == 0) f = from[j];
            const char *v;
            if (!f && bl_predictor_prop_default(p, i, &v, NULL) == BL_OK) f = FROM_MODEL;
            if (!f) continue;
            printf("%s", first ? "" : ",");
            first = 0;
            json_str(pi.name);
            putchar(':');
            json_str(from_name(f));
        }
        bl_model_info mi;
        bl_predictor_info(p, &mi);
        printf("},\"fine_tuned_on_runs\":%lld,\"fine_tuned_now\":%s", mi.finetune_runs, tuned ? "true" : "false");
        printf(",\"method\":{\"name\":");
        json_str(meth);
        printf(",\"ernest_weight\":");
        json_num(ew);
        printf(",\"why\":");
        json_str(why);
        putchar('}');
        const char *fv;
        if (bl_predictor_finetune_context(p, 0, &fv) == BL_OK) {
            printf(",\"fine_tuned_context\":{");
            for (size_t i = 0; i < np; i++) {
                bl_prop_info pi;
                bl_predictor_prop(p, i, &pi);
                bl_predictor_finetune_context(p, i, &fv);
                printf("%s", i ? "," : "");
                json_str(pi.name);
                putchar(':');
                bl_cli_json_value(fv, pi.number);
            }
            putchar('}');
        }
        if (intervals) {
            printf(",\"interval\":{\"coverage\":");
            json_num(coverage);
            printf(",\"runs\":%d,\"calibration_contexts\":%lld,\"unbounded_beyond_support\":%zu,"
                   "\"unbounded_too_few_contexts\":%zu,\"unbounded_too_wide\":%zu}", cal.runs, cal.contexts, n_beyond,
                   n_thin, n_wide);
        } else {
            printf(",\"interval\":null");
        }
        printf(",\"predictions\":[");
        for (size_t i = 0; i < n; i++) {
            printf("%s{\"scale_out\":", i ? "," : "");
            json_num(x[i]);
            printf(",\"predicted_runtime_s\":");
            json_num(t[i]);
            if (intervals && hi[i] <= BL_RUNTIME_MAX_S) {
                printf(",\"lo_runtime_s\":");
                json_num(lo[i]);
                printf(",\"hi_runtime_s\":");
                json_num(hi[i]);
            } else if (intervals) { /* unbounded: no end is a runtime (not 0 s, not inf), and why */
                printf(",\"lo_runtime_s\":null,\"hi_runtime_s\":null,\"unbounded_why\":");
                json_str(*unbounded_name(iwhy[i]) ? unbounded_name(iwhy[i]) : "?");
            }
            if (price > 0) {
                printf(",\"cost\":");
                json_num(x[i] * t[i] / 3600.0 * price);
            }
            if (!plausible(t[i])) printf(",\"left_out\":true"); /* never chosen: see bl_choose */
            putchar('}');
        }
        printf("],\"choice\":{\"goal\":\"%s\",\"scale_out\":", goal_name(co.goal));
        if (*no_choice) printf("null"); /* none: the reason says why */
        else json_num(ch.scale_out);
        printf(",\"predicted_runtime_s\":");
        if (*no_choice) printf("null");
        else json_num(ch.runtime_s);
        if (ch.coverage > 0 && !*no_choice) {
            printf(",\"lo_runtime_s\":");
            json_num(ch.lo_runtime_s);
            printf(",\"hi_runtime_s\":");
            if (ch.hi_runtime_s <= BL_RUNTIME_MAX_S) json_num(ch.hi_runtime_s);
            else printf("null");
            printf(",\"interval_coverage\":");
            json_num(ch.coverage);
        }
        if (confidence > 0) {
            printf(",\"confidence\":");
            json_num(confidence);
        }
        printf(",\"left_out\":%zu", *no_choice ? n : ch.left_out);
        if (price > 0) {
            printf(",\"cost\":");
            if (*no_choice) printf("null");
            else json_num(ch.cost);
            printf(",\"price_per_hour\":");
            json_num(price);
        }
        if (target > 0) {
            printf(",\"target_runtime_s\":");
            json_num(target);
            printf(",\"meets_target\":%s", ch.met_target && !*no_choice ? "true" : "false");
        }
        printf(",\"reason\":");
        json_str(*no_choice ? no_choice : ch.reason);
        printf("},\"warnings\":[");
        for (size_t i = 0; i < bl_warnings_count(warns); i++) {
            printf("%s{\"kind\":", i ? "," : "");
            json_str(bl_warning_kind_name(bl_warnings_kind(warns, i)));
            printf(",\"property\":");
            if (bl_warnings_property(warns, i)) json_str(bl_warnings_property(warns, i));
            else printf("null");
            printf(",\"message\":");
            json_str(bl_warnings_message(warns, i));
            putchar('}');
        }
        printf("]}\n");
    } else {
        /* an unbounded interval's ends are empty fields (0 s and inf are no runtimes), unbounded_why says
         * why; it is last, so the columns before keep their places */
        printf("scale_out\tpredicted_runtime_s%s%s%s\n", intervals ? "\tlo_runtime_s\thi_runtime_s" : "",
               price > 0 ? "\tcost" : "", intervals ? "\tunbounded_why" : "");
        for (size_t i = 0; i < n; i++) {
            printf("%.10g\t%s", x[i], secs(t[i]));
            const int bounded = hi[i] <= BL_RUNTIME_MAX_S;
            if (intervals && bounded) printf("\t%s\t%s", secs(lo[i]), secs(hi[i]));
            else if (intervals) printf("\t\t");
            if (price > 0) printf("\t%s", shown(x[i] * t[i] / 3600.0 * price, 4, plausible(t[i])));
            if (intervals) printf("\t%s", bounded ? "" : *unbounded_name(iwhy[i]) ? unbounded_name(iwhy[i]) : "?");
            putchar('\n');
        }
        if (*no_choice) {
            printf("# chosen: none (no scale-out can be chosen): %s\n", why_none);
        } else {
            printf("# chosen: scale-out %.10g, predicted %s s", ch.scale_out, secs(ch.runtime_s));
            if (ch.coverage > 0 && ch.hi_runtime_s <= BL_RUNTIME_MAX_S)
                printf(" (%g interval %s..%s s)", ch.coverage, secs(ch.lo_runtime_s), secs(ch.hi_runtime_s));
            else if (ch.coverage > 0)
                printf(" (%g interval unbounded)", ch.coverage);
            if (price > 0) printf(", cost %s", shown(ch.cost, 4, 1));
            printf(": %s\n", ch.reason);
        }
        if (intervals) {
            printf("# intervals: %g coverage, calibrated on %lld held-out contexts, sized for %d run%s%s", coverage,
                   cal.contexts, cal.runs, cal.runs == 1 ? "" : "s", cal.runs == 0 ? " (a pre-trained model)" : "");
            if (n_thin && cal.contexts == 0)
                printf("; all unbounded: no context was held out at pre-training (its data had one context, or it "
                       "was pre-trained with --val-split groups): pre-training on runs of several contexts, with "
                       "--val-split contexts (the default), bounds them");
            else if (n_thin) /* the conformal quantile needs coverage · (G + 1) ≤ G */
                printf("; %zu unbounded: too few held-out contexts vouch for %g (9 are needed for 0.9), --coverage "
                       "%.2f or lower bounds them", n_thin, coverage,
                       floor(100.0 * (double)cal.contexts / (double)(cal.contexts + 1)) / 100.0);
            if (n_wide)
                printf("; %zu unbounded: wider than a factor 100 either way (the model's runs disagree with it, or the "
                       "scale-out is far from them)", n_wide);
            putchar('\n');
        }
    }
    rc = bl_cli_finish(PROG);
    if (rc == BL_EXIT_OK && *no_choice) {
        fprintf(stderr, "%s: no scale-out could be chosen (the predictions are printed; exit %d): %s\n", PROG,
                EXIT_NO_CHOICE, why_none);
        rc = EXIT_NO_CHOICE;
    }
done:
    bl_data_free(runs);
    bl_data_free(cruns);
    bl_predictor_free(tuned);
    bl_predictor_free(base);
out:
    bl_warnings_free(warns);
    free(full);
    free(vbuf);
    free(from);
    free(t);
    free(iwhy);
    free(x);
    for (size_t i = 0; i < sets.n; i++) free(set_copy[i]);
    return rc;
}
