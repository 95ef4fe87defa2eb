/* example_scheduler.c — how a cluster scheduler uses libbellamy, with nothing but the public header.
 *
 *   example_scheduler MODEL.h5 NAME|- [prop=value ...] [run=SCALEOUT:SECONDS ...]
 *
 * It opens the model file and lists its models, loads one (NAME, or "-" for the file's only model),
 * optionally fine-tunes it on the given runs of this job's context (every property must then be
 * given, except those the model fills: the constants of its schema), predicts the runtime at
 * scale-outs 2..12, and makes the three decisions a scheduler makes: the fastest scale-out, the
 * smallest one that meets a deadline (here 1.25 × the fastest runtime) and the cheapest at 0.40 per
 * machine-hour. What the model warns about the request (a value it never saw, scale-outs outside
 * its training range) is printed as "warning: ..." lines. Build it against an installed library with
 *
 *   cc example_scheduler.c $(pkg-config --cflags --libs bellamy)
 *
 * Not here: a real scheduler's queue; any error handling beyond printing the library's message.
 */
#include <bellamy/bellamy.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PROPS 64
#define MAX_RUNS  64

static int fail(const bl_error *err) {
    fprintf(stderr, "example_scheduler: %s (%s)\n", err->message, bl_status_string(err->status));
    return 1;
}

static void print_warnings(const bl_warnings *w) {
    for (size_t i = 0; i < bl_warnings_count(w); i++)
        printf("warning (%s): %s\n", bl_warning_kind_name(bl_warnings_kind(w, i)), bl_warnings_message(w, i));
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: example_scheduler MODEL.h5 NAME|- [prop=value ...] [run=SCALEOUT:SECONDS ...]\n");
        return 2;
    }
    bl_prop_value ctx[MAX_PROPS];
    double run_x[MAX_RUNS], run_t[MAX_RUNS];
    size_t n_ctx = 0, n_runs = 0;
    for (int i = 3; i < argc; i++) {
        char *eq = strchr(argv[i], '=');
        if (!eq) { fprintf(stderr, "example_scheduler: '%s' is not name=value\n", argv[i]); return 2; }
        *eq = '\0';
        if (strcmp(argv[i], "run") == 0) {
            if (n_runs == MAX_RUNS || sscanf(eq + 1, "%lf:%lf", &run_x[n_runs], &run_t[n_runs]) != 2) {
                fprintf(stderr, "example_scheduler: run=%s is not SCALEOUT:SECONDS\n", eq + 1);
                return 2;
            }
            n_runs++;
        } else if (n_ctx < MAX_PROPS) {
            ctx[n_ctx].name = argv[i];
            ctx[n_ctx].value = eq + 1;
            n_ctx++;
        }
    }

    bl_error err;
    bl_model_file *file = NULL;
    bl_predictor *model = NULL, *tuned = NULL;
    bl_warnings *warnings = NULL;
    int rc = 1;
    if (bl_warnings_new(&warnings, &err) != BL_OK) return fail(&err);

    /* 1. What is in the file? */
    if (bl_model_file_open(argv[1], &file, &err) != BL_OK) { rc = fail(&err); goto done; }
    printf("libbellamy %s; %s holds %zu model(s):", bl_version(), argv[1], bl_model_file_count(file));
    for (size_t i = 0; i < bl_model_file_count(file); i++) printf(" %s", bl_model_file_name(file, i));
    printf("\n");

    /* 2. Load one model and show what a context needs. */
    const char *name = strcmp(argv[2], "-") == 0 ? NULL : argv[2];
    if (bl_model_file_load(file, name, &model, &err) != BL_OK) { rc = fail(&err); goto done; }
    printf("model '%s' properties:", bl_predictor_name(model));
    for (size_t i = 0; i < bl_predictor_prop_count(model); i++) {
        bl_prop_info info;
        bl_predictor_prop(model, i, &info);
        printf(" %s(%s%s%s)", info.name, info.essential ? "essential" : "optional", info.number ? ", number" : "",
               info.cluster_total ? ", per machine" : "");
    }
    printf("\n");
    /* the context, checked with what the model warns about it */
    if (bl_predictor_review(model, ctx, n_ctx, NULL, 0, warnings, &err) != BL_OK) { rc = fail(&err); goto done; }
    print_warnings(warnings);

    /* 3. A few runs of this context seen already? Fine-tune on them (a new predictor; the old stays). */
    const bl_predictor *use = model;
    if (n_runs > 0) {
        bl_tune_opts to;
        bl_tune_opts_init(&to);
        if (bl_predictor_finetune(model, ctx, n_ctx, run_x, run_t, n_runs, &to, &tuned, &err) != BL_OK) {
            rc = fail(&err);
            goto done;
        }
        printf("fine-tuned on %zu run(s)\n", n_runs);
        use = tuned;
    }

    /* 4. Predict scale-outs 2..12. */
    enum { FIRST = 2, LAST = 12, N = LAST - FIRST + 1 };
    double x[N], t[N];
    for (int i = 0; i < N; i++) x[i] = FIRST + i;
    if (bl_predict_range(use, ctx, n_ctx, FIRST, LAST, t, &err) != BL_OK) { rc = fail(&err); goto done; }
    printf("scale_out\tpredicted_runtime_s\n");
    for (int i = 0; i < N; i++) printf("%g\t%.1f\n", x[i], t[i]);

    /* 5. Decide. */
    bl_choice_opts co;
    bl_choice c;
    bl_choice_opts_init(&co);
    if (bl_choose(x, t, N, &co, &c, &err) != BL_OK) { rc = fail(&err); goto done; }
    printf("fastest: %g machines, %.1f s (%s)\n", c.scale_out, c.runtime_s, c.reason);
    co.goal = BL_GOAL_SMALLEST;
    co.target_runtime_s = 1.25 * c.runtime_s;
    if (bl_choose(x, t, N, &co, &c, &err) != BL_OK) { rc = fail(&err); goto done; }
    printf("deadline %.1f s: %g machines, %.1f s (%s)\n", co.target_runtime_s, c.scale_out, c.runtime_s, c.reason);
    co.goal = BL_GOAL_CHEAPEST;
    co.target_runtime_s = 0;
    co.price_per_hour = 0.40;
    if (bl_choose_scale_out_warn(use, ctx, n_ctx, x, N, &co, &c, warnings, &err) != BL_OK) { rc = fail(&err); goto done; }
    printf("cheapest: %g machines, %.1f s, cost %.4f (%s)\n", c.scale_out, c.runtime_s, c.cost, c.reason);
    print_warnings(warnings);
    rc = 0;
done:
    bl_warnings_free(warnings);
    bl_predictor_free(tuned);
    bl_predictor_free(model);
    bl_model_file_free(file);
    return rc;
}
