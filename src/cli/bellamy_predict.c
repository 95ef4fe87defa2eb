/* bellamy_predict.c — the `bellamy-predict` program: predicted runtime per scale-out for one job
 * context, and the scale-out to choose, using the public library API (bellamy/bellamy.h) and, for
 * --history, the internal split of bl_predictor_finetune_file (api/api_internal.h) that lets it note
 * on stderr when the runs span several contexts or are of another context than --set.
 *
 *   bellamy-predict --model MODEL.h5 [--name NAME] --set prop=value ... --scale-out 2..12
 *                   [--history RUNS.tsv [--schema FILE]] [--target-runtime S] [--price P]
 *                   [--goal fastest|smallest|cheapest] [--json]
 *
 * Output: a TSV table (scale_out, predicted_runtime_s, and cost with --price) followed by one
 * "# chosen: ..." line, or one JSON object with --json. Exit 0 ok, 1 failure, 2 usage error.
 * Not here: model logic (src/api, src/model).
 */
#include "cli/cli_util.h"
#include "api/api_internal.h"
#include "bl_config.h"
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

/* Copies s[0..n) without leading and trailing blanks into buf (cap bytes); NULL when it does not fit. */
static const char *trimmed(const char *s, size_t n, char *buf, size_t cap) {
    while (n > 0 && (*s == ' ' || *s == '\t')) { s++; n--; }
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t')) n--;
    if (n >= cap) return NULL;
    memcpy(buf, s, n);
    buf[n] = '\0';
    return buf;
}

/* One scale-out of --scale-out SPEC (item: its text, blanks trimmed): a decimal number, then in
 * 1..MAX_SCALE_OUT, then whole (a number of machines). Prints why not and returns BL_EXIT_USAGE. */
static int scale_out_item(const char *spec, const char *item, double *x) {
    if (!item || bl_cli_number(item, x) != 0) {
        bl_cli_error(PROG, "--scale-out %s: '%s' is not a number (give N, A..B or N,M,...)", spec, item ? item : "(too long)");
        return BL_EXIT_USAGE;
    }
    if (!(*x >= 1) || *x > MAX_SCALE_OUT) {
        bl_cli_error(PROG, "--scale-out %s: scale-out %s must be >= 1 and <= %.0f (a number of machines)", spec, item,
                     MAX_SCALE_OUT);
        return BL_EXIT_USAGE;
    }
    if (*x != floor(*x)) {
        bl_cli_error(PROG, "--scale-out %s: '%s' is not a whole number (a scale-out counts machines)", spec, item);
        return BL_EXIT_USAGE;
    }
    return 0;
}

/* Parses "A..B" (1 ≤ A ≤ B), "X" or "X,Y,Z": whole numbers of machines, blanks around items
 * allowed. Returns 0, BL_EXIT_USAGE or BL_EXIT_FAIL (out of memory). */
static int parse_scale_outs(const char *spec, double **out, size_t *n) {
    char buf[64];
    *out = NULL;
    *n = 0;
    const char *dots = strstr(spec, "..");
    if (dots) {
        double a, b;
        const char *bs = dots + 2;
        if (strstr(bs, "..") || strchr(spec, ',')) {
            bl_cli_error(PROG, "--scale-out %s: a range is two whole numbers, e.g. 2..12", spec);
            return BL_EXIT_USAGE;
        }
        if (scale_out_item(spec, trimmed(spec, (size_t)(dots - spec), buf, sizeof buf), &a) ||
            scale_out_item(spec, trimmed(bs, strlen(bs), buf, sizeof buf), &b))
            return BL_EXIT_USAGE;
        if (b < a) {
            bl_cli_error(PROG, "--scale-out %s: the range is reversed (write %.0f..%.0f)", spec, b, a);
            return BL_EXIT_USAGE;
        }
        if (b - a + 1 > MAX_SCALE_OUTS) {
            bl_cli_error(PROG, "--scale-out %s: more than %d scale-outs", spec, MAX_SCALE_OUTS);
            return BL_EXIT_USAGE;
        }
        *n = (size_t)(b - a + 1);
        *out = malloc(*n * sizeof **out);
        if (!*out) { bl_cli_error(PROG, "out of memory"); return BL_EXIT_FAIL; }
        for (size_t i = 0; i < *n; i++) (*out)[i] = a + (double)i;
        return 0;
    }
    size_t cnt = 1;
    for (const char *p = spec; *p; p++) cnt += *p == ',';
    if (cnt > MAX_SCALE_OUTS) { bl_cli_error(PROG, "--scale-out: more than %d scale-outs", MAX_SCALE_OUTS); return BL_EXIT_USAGE; }
    double *x = malloc(cnt * sizeof *x);
    if (!x) { bl_cli_error(PROG, "out of memory"); return BL_EXIT_FAIL; }
    const char *p = spec;
    for (size_t i = 0; i < cnt; i++) {
        size_t len = strcspn(p, ",");
        if (scale_out_item(spec, trimmed(p, len, buf, sizeof buf), &x[i])) { /* machines: whole */
            free(x);
            return BL_EXIT_USAGE;
        }
        p += len + (p[len] == ',');
    }
    *out = x;
    *n = cnt;
    return 0;
}

/* A JSON number; JSON has no infinity or NaN, so those become null. */
static void json_num(double v) {
    if (isfinite(v)) printf("%.17g", v);
    else printf("null");
}

/* A JSON string literal. */
static void json_str(const char *s) {
    putchar('"');
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') printf("\\%c", *p);
        else if (*p == '\n') printf("\\n");
        else if (*p == '\t') printf("\\t");
        else if (*p < 0x20) printf("\\u%04x", *p);
        else putchar(*p);
    }
    putchar('"');
}

/* What bl_choose can choose: a runtime in (0, BL_RUNTIME_MAX_S]. */
static int plausible(double t) { return t > 0 && t <= BL_RUNTIME_MAX_S; }

static const char *goal_name(bl_goal g) {
    return g == BL_GOAL_SMALLEST ? "smallest" : g == BL_GOAL_CHEAPEST ? "cheapest" : "fastest";
}

/* Notes on stderr (the prediction still goes ahead) when the --history runs are not the runs of
 * the one context predicted for: fine-tuning is meant for those. */
static void history_notes(const char *path, const bl_dataset *runs, const bl_prop_value *ctx, size_t n_ctx) {
    char msg[600];
    if (runs->n_contexts > 1) {
        bl_dataset_context_spread(runs, msg, sizeof msg);
        fprintf(stderr, "%s: note: --history %s holds runs of %zu contexts, which differ in %s; fine-tuning is meant "
                "for the runs of one context (the job predicted for), and uses all %zu runs\n", PROG, path,
                runs->n_contexts, msg, runs->n_rows);
        size_t match = 0;
        for (size_t c = 0; c < runs->n_contexts && !match; c++)
            match = bl_dataset_context_diff(runs, c, ctx, n_ctx, msg, sizeof msg) == 0;
        if (!match) fprintf(stderr, "%s: note: none of those contexts is the --set context\n", PROG);
    } else if (bl_dataset_context_diff(runs, 0, ctx, n_ctx, msg, sizeof msg) > 0) {
        fprintf(stderr, "%s: note: the --history runs are of another context than --set (%s); the model is "
                "fine-tuned on them and predicts for --set\n", PROG, msg);
    }
}

int main(int argc, char **argv) {
    bl_cli_init();
    if (argc >= 2 && strcmp(argv[1], "--version") == 0) {
        if (argc > 2) { bl_cli_error(PROG, "--version takes no other arguments"); return BL_EXIT_USAGE; }
        return bl_cli_version(PROG);
    }
    const char *model = NULL, *name = NULL, *spec = NULL, *history = NULL, *schema = NULL, *goal_s = NULL;
    bl_cli_list sets = { 0 };
    double target = 0, price = 0;
    int json = 0;
    bl_cli_option opts[] = {
        { "model", BL_OPT_STRING, &model, "MODEL.h5", "model file", NULL, 1, NULL, 0 },
        { "name", BL_OPT_STRING, &name, "NAME", "model inside the file", "the file's only model", 0, NULL, 0 },
        { "set", BL_OPT_LIST, &sets, "PROP=VALUE",
          "a property of the job's context; every essential one is needed (cluster totals per machine)", NULL, 0, NULL,
          0 },
        { "scale-out", BL_OPT_STRING, &spec, "SPEC", "scale-outs (whole numbers of machines) to predict: a range A..B, one value N, or a list N,M,...",
          NULL, 1, NULL, 0 },
        { "history", BL_OPT_STRING, &history, "RUNS",
          "runs of this context (.tsv/.csv like the training data) to fine-tune on first, in memory", "none", 0, NULL, 0 },
        { "schema", BL_OPT_STRING, &schema, "FILE", "schema of RUNS", "the schema stored in the model", 0, NULL, 0 },
        { "target-runtime", BL_OPT_DOUBLE, &target, "S", "runtime target in seconds (> 0)", "none", 0, NULL, 0 },
        { "price", BL_OPT_DOUBLE, &price, "P", "price of one machine for one hour (> 0); adds a cost column", "none", 0,
          NULL, 0 },
        { "goal", BL_OPT_CHOICE, &goal_s, NULL, "how to choose the scale-out",
          "cheapest with --price, else smallest with --target-runtime, else fastest", 0, "fastest|smallest|cheapest", 0 },
        { "json", BL_OPT_FLAG, &json, NULL, "write one JSON object instead of TSV", NULL, 0, NULL, 0 },
    };
    const size_t nopts = sizeof opts / sizeof opts[0];
    int rc = bl_cli_parse(PROG,
                          "bellamy-predict --model MODEL.h5 [--name NAME] --set PROP=VALUE ... --scale-out A..B|N|N,M,...\n"
                          "         [--history RUNS [--schema FILE]] [--target-runtime S] [--price P]\n"
                          "         [--goal fastest|smallest|cheapest] [--json]\n"
                          "       bellamy-predict --help | --version",
                          argc, argv, 1, opts, nopts, NULL, NULL);
    if (rc) return rc < 0 ? bl_cli_finish(PROG) : rc;

    /* Everything the command line alone can refute is a usage error (exit 2). */
    bl_choice_opts co;
    bl_choice_opts_init(&co);
    if (opts[6].seen && !(target > 0 && target <= MAX_TARGET)) {
        bl_cli_error(PROG, "--target-runtime %g: must be a positive number of seconds (at most %g)", target, MAX_TARGET);
        return BL_EXIT_USAGE;
    }
    if (opts[7].seen && !(price > 0 && price <= MAX_PRICE)) {
        bl_cli_error(PROG, "--price %g: must be a positive price per machine-hour (at most %g)", price, MAX_PRICE);
        return BL_EXIT_USAGE;
    }
    if (schema && !history) { bl_cli_error(PROG, "--schema is only used with --history"); return BL_EXIT_USAGE; }
    co.target_runtime_s = target;
    co.price_per_hour = price;
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
    size_t n = 0;
    rc = parse_scale_outs(spec, &x, &n);
    if (rc) goto out;
    /* the files, before the model is loaded: a clear message naming the flag */
    if ((rc = bl_cli_check_input(PROG, "model", model)) || (history && (rc = bl_cli_check_input(PROG, "history", history))) ||
        (schema && (rc = bl_cli_check_input(PROG, "schema", schema))))
        goto out;

    bl_error err = { 0 };
    bl_predictor *base = NULL, *tuned = NULL;
    const bl_predictor *p = NULL;
    bl_choice ch;
    bl_cli_note_unverified(PROG, model);
    bl_status st = bl_predictor_load(model, name, &base, &err);
    if (st == BL_OK) st = bl_predictor_check_context(base, ctx, sets.n, &err);
    if (st == BL_OK && history) {
        bl_tune_opts to;
        bl_tune_opts_init(&to);
        bl_dataset *runs = NULL;
        st = bl_predictor_load_runs(base, history, schema, &runs, &err);
        if (st == BL_OK) history_notes(history, runs, ctx, sets.n);
        if (st == BL_OK) st = bl_predictor_finetune_runs(base, runs, &to, &tuned, &err);
        bl_dataset_free(runs);
        if (st != BL_OK) bl_prefixerr(&err, "--history");
    }
    p = tuned ? tuned : base;
    if (st == BL_OK) {
        t = malloc(n * sizeof *t);
        if (!t) { st = BL_ENOMEM; snprintf(err.message, sizeof err.message, "out of memory"); }
    }
    if (st == BL_OK) st = bl_predict(p, ctx, sets.n, x, n, t, &err);
    if (st == BL_OK) st = bl_choose(x, t, n, &co, &ch, &err);
    if (st != BL_OK) {
        rc = bl_cli_fail(PROG, &err);
    } else if (json) {
        printf("{\"model\":");
        json_str(bl_predictor_name(p));
        printf(",\"context\":{");
        for (size_t i = 0; i < sets.n; i++) {
            printf(i ? "," : "");
            json_str(ctx[i].name);
            putchar(':');
            json_str(ctx[i].value);
        }
        printf("},\"fine_tuned_on_runs\":");
        if (tuned) {
            bl_model_info mi;
            bl_predictor_info(tuned, &mi);
            printf("%lld", mi.finetune_runs);
        } else {
            printf("0");
        }
        printf(",\"predictions\":[");
        for (size_t i = 0; i < n; i++) {
            printf("%s{\"scale_out\":", i ? "," : "");
            json_num(x[i]);
            printf(",\"predicted_runtime_s\":");
            json_num(t[i]);
            if (price > 0) {
                printf(",\"cost\":");
                json_num(x[i] * t[i] / 3600.0 * price);
            }
            if (!plausible(t[i])) printf(",\"left_out\":true"); /* never chosen: see bl_choose */
            putchar('}');
        }
        printf("],\"choice\":{\"goal\":\"%s\",\"scale_out\":", goal_name(co.goal));
        json_num(ch.scale_out);
        printf(",\"predicted_runtime_s\":");
        json_num(ch.runtime_s);
        if (price > 0) {
            printf(",\"cost\":");
            json_num(ch.cost);
            printf(",\"price_per_hour\":");
            json_num(price);
        }
        if (target > 0) {
            printf(",\"target_runtime_s\":");
            json_num(target);
            printf(",\"meets_target\":%s", ch.met_target ? "true" : "false");
        }
        printf(",\"reason\":");
        json_str(ch.reason);
        printf("}}\n");
    } else {
        printf(price > 0 ? "scale_out\tpredicted_runtime_s\tcost\n" : "scale_out\tpredicted_runtime_s\n");
        for (size_t i = 0; i < n; i++) { /* implausible runtimes (never chosen) in %g: no 300-digit numbers */
            printf(plausible(t[i]) ? "%.10g\t%.2f" : "%.10g\t%g", x[i], t[i]);
            if (price > 0) printf(plausible(t[i]) ? "\t%.4f" : "\t%g", x[i] * t[i] / 3600.0 * price);
            putchar('\n');
        }
        printf("# chosen: scale-out %.10g, predicted %.2f s", ch.scale_out, ch.runtime_s);
        if (price > 0) printf(", cost %.4f", ch.cost);
        printf(": %s\n", ch.reason);
    }
    if (rc == BL_EXIT_OK) rc = bl_cli_finish(PROG);
    bl_predictor_free(tuned);
    bl_predictor_free(base);
out:
    free(t);
    free(x);
    for (size_t i = 0; i < sets.n; i++) free(set_copy[i]);
    return rc;
}
