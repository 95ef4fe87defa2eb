/* eval_cli.c — the `bellamy-eval` command line: options, finding the data files, and the run
 * (load → splits → pre-training → fits → report). bl_eval_main is also what tests/test_eval.c calls.
 *
 *   bellamy-eval --data DIR --schemas DIR --out DIR [options]      every DIR/NAME.{tsv,csv} with SCHEMAS/NAME.schema
 *   bellamy-eval --data FILE --schema S --out DIR [options]         one data file, k-fold over its contexts
 *   bellamy-eval --pretrain-data FILE --pretrain-schema S --data FILE --schema S --out DIR [options]
 *                                                                    cross-environment: pre-train on one, evaluate on the other
 *
 * Not here: the protocol (eval.c), the fits (fit.c), the statistics (report.c).
 */
#include "eval.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bl_config.h"
#include "cli/cli_util.h"
#include "common/error.h"
#include "common/str.h"
#include "dist/dist.h"

/* Pre-training's bound (include/bellamy/train.h), for fine-tuning's epochs too: more is a typo, not a plan. */
#define EPOCHS_MAX BL_TRAIN_EPOCHS_MAX
/* Largest fine-tuning weight decay and peak learning rate: beyond, the schedule is meaningless. */
#define FT_WD_MAX 1.0
#define FT_LR_MAX 1.0

static const char usage[] =
    "bellamy-eval --data DIR --schemas DIR --out DIR [--splits FILE] [--algorithms a,b] [--quick] [--seed S] [--threads N]\n"
    "       bellamy-eval --data FILE --schema S --out DIR [options]\n"
    "       bellamy-eval --pretrain-data FILE --pretrain-schema S --data FILE --schema S --out DIR [options]";

/* "dir/grep.tsv" → "grep" (malloc'd). */
static char *stem_of(const char *path) {
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    const char *dot = strrchr(b, '.');
    size_t n = dot && dot != b ? (size_t)(dot - b) : strlen(b);
    return bl_strndup(b, n);
}

static int mkdir_p(const char *path) {
    char buf[4096];
    size_t n = strlen(path);
    if (n == 0 || n >= sizeof buf) return -1;
    memcpy(buf, path, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (buf[i] != '/' && buf[i] != '\0') continue;
        char c = buf[i];
        buf[i] = '\0';
        if (mkdir(buf, 0777) != 0 && errno != EEXIST) return -1;
        buf[i] = c;
    }
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode) ? 0 : -1;
}

static int opt_seen(const bl_cli_option *opts, size_t n, const char *name) {
    for (size_t i = 0; i < n; i++)
        if (strcmp(opts[i].name, name) == 0) return opts[i].seen;
    return 0;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Is name in the comma-separated list? */
static int in_list(const char *list, const char *name) {
    size_t n = strlen(name);
    for (const char *p = list; *p;) {
        const char *c = strchr(p, ',');
        size_t len = c ? (size_t)(c - p) : strlen(p);
        if (len == n && strncmp(p, name, n) == 0) return 1;
        if (!c) break;
        p = c + 1;
    }
    return 0;
}

/* A data file named by --flag (--data with --schema, --pretrain-data): like bl_cli_check_input, and a
 * folder is named as such (for --data, with the way to evaluate a folder). BL_EXIT_FAIL after the
 * message, else 0. */
static int check_data_file(const char *prog, const char *flag, const char *path) {
    struct stat st;
    if (path && stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        bl_cli_error(prog, "--%s %s: is a folder, not a data file%s", flag, path,
                     strcmp(flag, "data") == 0 ? " (a folder of data files goes with --data DIR --schemas DIR)" : "");
        return BL_EXIT_FAIL;
    }
    return bl_cli_check_input(prog, flag, path);
}

/* A folder named by --flag (--data and --schemas together); hint says what to give instead. */
static int check_folder(const char *prog, const char *flag, const char *path, const char *hint) {
    struct stat st;
    if (stat(path, &st) != 0) {
        bl_cli_error(prog, "--%s %s: cannot open: %s", flag, path, strerror(errno));
        return BL_EXIT_FAIL;
    }
    if (!S_ISDIR(st.st_mode)) {
        bl_cli_error(prog, "--%s %s: not a folder (%s)", flag, path, hint);
        return BL_EXIT_FAIL;
    }
    return 0;
}

/* Adds every DIR/NAME.tsv|csv that has SCHEMAS/NAME.schema (sorted by name; filtered by --algorithms). */
static int add_dir(const char *prog, bl_eval *ev, const char *dir, const char *schemas, const char *algos) {
    DIR *d = opendir(dir);
    if (!d) { bl_cli_error(prog, "%s: %s", dir, strerror(errno)); return BL_EXIT_FAIL; }
    char **files = NULL;
    size_t nf = 0, cap = 0;
    struct dirent *e;
    int rc = BL_EXIT_OK;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len < 5 || (strcmp(e->d_name + len - 4, ".tsv") != 0 && strcmp(e->d_name + len - 4, ".csv") != 0)) continue;
        if (nf == cap) {
            cap = cap ? 2 * cap : 16;
            char **g = realloc(files, cap * sizeof *g);
            if (!g) { rc = BL_EXIT_FAIL; break; }
            files = g;
        }
        if (!(files[nf] = malloc(len + 1))) { rc = BL_EXIT_FAIL; break; }
        memcpy(files[nf++], e->d_name, len + 1);
    }
    closedir(d);
    if (files) qsort(files, nf, sizeof *files, cmp_str);
    for (size_t i = 0; i < nf && rc == BL_EXIT_OK; i++) {
        char *name = stem_of(files[i]);
        char data[4096], schema[4096];
        snprintf(data, sizeof data, "%s/%s", dir, files[i]);
        snprintf(schema, sizeof schema, "%s/%s.schema", schemas, name ? name : "");
        if (name && access(schema, R_OK) == 0 && (!algos || in_list(algos, name))) {
            bl_error err;
            if (ev->o.log) { fprintf(ev->o.log, "loading %s (schema %s)\n", data, schema); fflush(ev->o.log); }
            if (bl_eval_add_algo(ev, name, data, schema, NULL, NULL, &err) != BL_OK) rc = bl_cli_fail(prog, &err);
        }
        free(name);
    }
    for (size_t i = 0; i < nf; i++) free(files[i]);
    free(files);
    if (rc != BL_EXIT_OK) return rc;
    if (algos) { /* every requested algorithm must have been found */
        for (const char *p = algos; *p;) {
            const char *c = strchr(p, ',');
            size_t len = c ? (size_t)(c - p) : strlen(p);
            int found = 0;
            for (size_t i = 0; i < ev->n_algos; i++)
                found |= strlen(ev->algos[i].name) == len && strncmp(ev->algos[i].name, p, len) == 0;
            if (!found) {
                bl_cli_error(prog, "--algorithms: no data file '%.*s.tsv' or '.csv' with a schema '%.*s.schema' in %s / %s",
                             (int)len, p, (int)len, p, dir, schemas);
                return BL_EXIT_USAGE;
            }
            if (!c) break;
            p = c + 1;
        }
    }
    if (ev->n_algos == 0) {
        bl_cli_error(prog, "%s: no data file (.tsv/.csv) with a schema of the same name in %s", dir, schemas);
        return BL_EXIT_FAIL;
    }
    return BL_EXIT_OK;
}

int bl_eval_main(int argc, char **argv) { return bl_eval_main_ranks(argc, argv, NULL); }

/* A rank's scratch folder and the files in it (the reports write no sub-folders). */
static void remove_tree(const char *dir) {
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        char path[4400];
        while ((e = readdir(d)))
            if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
                snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
                unlink(path);
            }
        closedir(d);
    }
    rmdir(dir);
}

/* bl_train_ranks.gather over the MPI ranks. */
static int gather_ranks(void *ctx, void *recs, size_t first, size_t n, size_t rec_size, char *msg, size_t cap) {
    bl_error e = { 0 };
    if (bl_dist_gather(ctx, recs, first, n, rec_size, &e) == BL_OK) return 0;
    snprintf(msg, cap, "%s", e.message);
    return 1;
}

static int eval_main(int argc, char **argv, bl_dist *dist);

int bl_eval_main_ranks(int argc, char **argv, bl_dist *dist) {
    if (bl_dist_size(dist) == 1 || bl_dist_rank(dist) == 0) return eval_main(argc, argv, dist);
    /* the other ranks compute alongside rank 0, silent, writing into a folder of their own */
    fflush(stdout);
    fflush(stderr);
    const int saved_out = dup(STDOUT_FILENO), saved_err = dup(STDERR_FILENO), null = open("/dev/null", O_WRONLY);
    if (null >= 0) {
        dup2(null, STDOUT_FILENO);
        dup2(null, STDERR_FILENO);
        close(null);
    }
    int rc = eval_main(argc, argv, dist);
    fflush(stdout);
    fflush(stderr);
    if (saved_out >= 0) dup2(saved_out, STDOUT_FILENO), close(saved_out);
    if (saved_err >= 0) dup2(saved_err, STDERR_FILENO), close(saved_err);
    return rc;
}

static int eval_main(int argc, char **argv, bl_dist *dist) {
    bl_cli_init();
    const char *prog = "bellamy-eval";
    if (argc >= 2 && strcmp(argv[1], "--version") == 0) {
        if (argc > 2) { bl_cli_error(prog, "--version takes no other arguments"); return BL_EXIT_USAGE; }
        return bl_cli_version(prog);
    }
    const char *data = NULL, *schemas = NULL, *schema = NULL, *pre_data = NULL, *pre_schema = NULL, *out = NULL;
    const char *splits = NULL, *algos = NULL, *methods = NULL, *tscale = NULL, *cache = NULL;
    int quick = 0, quiet = 0;
    size_t seed = 1, pre_seed = 1, contexts = 0, spc = 0;
    long threads = 1, max_n = 5, folds = 3, epochs = 0, trials = 0, grace = 0, reduction = 0, avg_span = 0, ft_epochs = 0, ft_patience = 0;
    double stop_mae = 0, stop_rel = 0, ft_wd = -1, ft_lr_max = 0, val_fraction = 0;
    long ft_unfreeze = 1, ft_cv_epochs = 500, ft_fixed = -1;
    const char *ft_stop = NULL, *ft_guard = NULL;
    int refit = 0, per_machine = 0;
    long ensemble = 1, members = 0;
    const char *ens_agg = "mean";
    int ens_seeds = 0;
    const char *masks = "row", *numbers = NULL, *fold_by = NULL;
    const char *vsplit = "contexts";
    const char *precision = NULL; /* not given: the library default, float32 on these CPU searches */
    bl_cli_option opts[] = {
        { "data", BL_OPT_STRING, &data, "DIR|FILE", "folder of data files (with --schemas) or one data file (with --schema)", NULL, 1, NULL, 0 },
        { "schemas", BL_OPT_STRING, &schemas, "DIR", "folder with NAME.schema for each data file NAME.tsv/.csv", NULL, 0, NULL, 0 },
        { "schema", BL_OPT_STRING, &schema, "FILE", "schema of a single --data FILE", NULL, 0, NULL, 0 },
        { "pretrain-data", BL_OPT_STRING, &pre_data, "FILE", "cross-environment: pre-train Bellamy on this file instead of k-fold", NULL, 0, NULL, 0 },
        { "pretrain-schema", BL_OPT_STRING, &pre_schema, "FILE", "schema of --pretrain-data", NULL, 0, NULL, 0 },
        { "out", BL_OPT_STRING, &out, "DIR", "output folder (created): splits.tsv, predictions.tsv, summary.tsv, pretrain.tsv, mre.svg, coverage.svg", NULL, 1, NULL, 0 },
        { "splits", BL_OPT_STRING, &splits, "FILE", "read the splits from FILE (format of splits.tsv) instead of drawing", NULL, 0, NULL, 0 },
        { "algorithms", BL_OPT_STRING, &algos, "a,b", "only these data files (by name without extension)", "all", 0, NULL, 0 },
        { "methods", BL_OPT_STRING, &methods, "a,b", "bellamy, bellamy-scratch, ernest, bell, noise-floor (the median of the test run's repetitions: a reference)", "all", 0, NULL, 0 },
        { "quick", BL_OPT_FLAG, &quick, NULL, "smoke test: 2 contexts, 2 splits per cell, pre-training 200 epochs x 2 trials, fine-tuning <= 500 epochs", NULL, 0, NULL, 0 },
        { "seed", BL_OPT_SIZE, &seed, "S", "seed of splits, folds, context choice, pre-training and fits", "1", 0, NULL, 0 },
        { "pretrain-seed", BL_OPT_SIZE, &pre_seed, "S",
          "seed of the pre-training searches alone (default: --seed): the same splits and folds with other networks", NULL, 0, NULL, 0 },
        { "threads", BL_OPT_INT, &threads, "N", "threads for the fits and for pre-training", "1", 0, NULL, 0 },
        { "contexts", BL_OPT_SIZE, &contexts, "K", "contexts evaluated per data file (0 = all)", "6 (quick: 2)", 0, NULL, 0 },
        { "splits-per-cell", BL_OPT_SIZE, &spc, "K", "up to K splits per context, n and kind", "24 (quick: 2)", 0, NULL, 0 },
        { "max-n", BL_OPT_INT, &max_n, "N", "training runs n = 1..N", "5", 0, NULL, 0 },
        { "folds", BL_OPT_INT, &folds, "K", "k-fold over contexts for pre-training", "3", 0, NULL, 0 },
        { "epochs", BL_OPT_INT, &epochs, "N", "pre-training: maximum epochs per trial (1..1000000)", "model default (quick: 200)", 0, NULL, 0 },
        { "trials", BL_OPT_INT, &trials, "N", "pre-training: configurations searched (1..27)", "model default (quick: 2)", 0, NULL, 0 },
        { "grace", BL_OPT_INT, &grace, "N", "pre-training: successive-halving grace period (1..1000000)", "model default (quick: 100)", 0, NULL, 0 },
        { "reduction", BL_OPT_INT, &reduction, "N", "pre-training: successive halving keeps the better 1/N of a rung's trials (2..27)", "model default (3)", 0, NULL, 0 },
        { "val-fraction", BL_OPT_DOUBLE, &val_fraction, "F", "pre-training: share of each search's contexts held out for validation, strictly between 0 and 1", "model default (0.2)", 0, NULL, 0 },
        { "avg-span", BL_OPT_INT, &avg_span, "N", "pre-training: validate and keep the parameters' running average over ~N epochs (1: each epoch's own parameters)", "model default (1)", 0, NULL, 0 },
        { "ft-epochs", BL_OPT_INT, &ft_epochs, "N", "fine-tuning: maximum epochs (1..1000000)", "model default (quick: 500)", 0, NULL, 0 },
        { "ft-patience", BL_OPT_INT, &ft_patience, "N", "fine-tuning: epochs without improvement before stopping (1..1000000)", "model default (quick: 200)", 0, NULL, 0 },
        { "stop-mae", BL_OPT_DOUBLE, &stop_mae, "S", "fine-tuning: stop at training MAE <= S seconds (>= 0)", "model default", 0, NULL, 0 },
        { "stop-rel", BL_OPT_DOUBLE, &stop_rel, "R", "fine-tuning: stop at training MAE <= R x mean runtime (>= 0; > 0 replaces --stop-mae)", "model default", 0, NULL, 0 },
        { "target-scale", BL_OPT_CHOICE, &tscale, NULL, "network target: runtime in seconds, divided by the mean runtime, or ln(runtime / geometric mean)", "model default", 0, "seconds|mean|log", 0 },
        { "ft-weight-decay", BL_OPT_DOUBLE, &ft_wd, "WD", "fine-tuning: Adam weight decay, 0..1 (< 0: the pre-trained model's)", "0", 0, NULL, 0 },
        { "ft-lr-max", BL_OPT_DOUBLE, &ft_lr_max, "LR", "fine-tuning: peak learning rate of the schedule (0 < LR <= 1)", "model default (0.01)", 0, NULL, 0 },
        { "ft-guard", BL_OPT_CHOICE, &ft_guard, NULL, "fine-tuning: weigh the tuned network against Ernest fitted to the runs (on) or the network alone (off)", "model default (on)", 0, "on|off", 0 },
        { "ft-stop", BL_OPT_CHOICE, &ft_stop, NULL, "fine-tuning: with n >= 3 runs, the epoch count chosen by cross-validation over the runs (cv), or the MAE rule for every n (mae)", "model default (cv)", 0, "cv|mae", 0 },
        { "ft-fixed-epochs", BL_OPT_INT, &ft_fixed, "N", "fine-tuning: exactly N epochs for every n, keeping the last state (no stopping rule, no cross-validation)", NULL, 0, NULL, 0 },
        { "ft-cv-epochs", BL_OPT_INT, &ft_cv_epochs, "N", "fine-tuning: epochs the cross-validation considers (1..1000000)", "model default (500)", 0, NULL, 0 },
        { "ft-unfreeze", BL_OPT_INT, &ft_unfreeze, "0|1|2", "fine-tuning: f frozen / unfrozen after 7.5*2^n epochs / trained from the start", "1", 0, NULL, 0 },
        { "dropout-masks", BL_OPT_CHOICE, &masks, NULL, "pre-training: AlphaDropout masks per row, per distinct property value of a batch, or hybrid (encoder per row, decoder per value)", "row", 0, "row|value|hybrid", 0 },
        { "val-split", BL_OPT_CHOICE, &vsplit, NULL, "pre-training: validation rows are whole contexts, or a share of every (context, scale-out) group as the prototype's stratified split", "model default", 0, "contexts|groups", 0 },
        { "refit", BL_OPT_FLAG, &refit, NULL, "pre-training: train the search's winner again on every row", NULL, 0, NULL, 0 },
        { "precision", BL_OPT_CHOICE, &precision, NULL, "pre-training: what the networks compute in, float64 or float32 (CPU only); the fold models and their fine-tuned copies keep it", "f32", 0, "f64|f32", 0 },
        { "totals-per-machine", BL_OPT_FLAG, &per_machine, NULL, "encode cluster-total numbers (memory, slots) per machine", NULL, 0, NULL, 0 },
        { "fold-by", BL_OPT_STRING, &fold_by, "PROP", "pre-training folds group the contexts by this property's value, so the evaluated contexts' values (e.g. data sizes) are new to their models", "contexts", 0, NULL, 0 },
        { "numbers", BL_OPT_CHOICE, &numbers, NULL, "number properties: the paper's bits (binary), a log-magnitude thermometer (log), that thermometer over each property's range in the pre-training data (range), or ensemble members alternating bits and log (both)", "both with 2 or more members, else binary", 0, "binary|log|range|both", 0 },
        { "ensemble", BL_OPT_INT, &ensemble, "K", "bellamy: fine-tune the K best trials of each search and combine their predictions", "1", 0, NULL, 0 },
        { "ensemble-agg", BL_OPT_CHOICE, &ens_agg, NULL, "how --ensemble combines the members' predictions", "mean", 0, "mean|median|gmean", 0 },
        { "members", BL_OPT_INT, &members, "N", "pre-training: ensemble members (searches with seeds S, S+1, ...; with --numbers both S, S, S+1, S+1, ...; 1 = one network)", "model default (6)", 0, NULL, 0 },
        { "ensemble-seeds", BL_OPT_FLAG, &ens_seeds, NULL, "--ensemble members are the winners of K searches with seeds S, S+1, ... (not one search's K best trials)", NULL, 0, NULL, 0 },
        { "model-cache", BL_OPT_STRING, &cache, "DIR", "keep pre-trained fold models in DIR and reuse them (for fine-tuning experiments)", NULL, 0, NULL, 0 },
        { "quiet", BL_OPT_FLAG, &quiet, NULL, "no progress lines on stderr", NULL, 0, NULL, 0 },
    };
    const size_t nopts = sizeof opts / sizeof opts[0];
    int rc = bl_cli_parse(prog, usage, argc, argv, 1, opts, nopts, NULL, NULL);
    if (rc) return rc < 0 ? BL_EXIT_OK : rc;
#define SEEN(name) opt_seen(opts, nopts, name)
    bl_eval_opts o;
    bl_eval_opts_default(&o);
    if (quick) bl_eval_opts_quick(&o);
    o.log = quiet ? NULL : stderr;
    o.model_cache = cache;
    o.pre.per_row_dropout = strcmp(masks, "row") == 0 ? 1 : strcmp(masks, "hybrid") == 0 ? 2 : 0;
    o.pre.refit = refit;
    if (precision) o.pre.precision = strcmp(precision, "f32") == 0 ? BL_PRECISION_F32 : BL_PRECISION_F64;
    if (SEEN("val-split")) o.pre.val_split = strcmp(vsplit, "groups") == 0 ? BL_VAL_GROUPS : BL_VAL_CONTEXTS;
    /* Every option is checked here, before any data is read or any training starts; a bad one is a
     * usage error (exit 2) naming flag and value. Pre-training's by the library's one check. */
    o.seed = seed;
    o.pre.seed = SEEN("pretrain-seed") ? pre_seed : seed;
    if ((rc = bl_cli_int_option(prog, "threads", threads, &o.pre.threads))) return rc;
    o.threads = o.pre.threads;
    if (SEEN("members") && (rc = bl_cli_int_option(prog, "members", members, &o.pre.members))) return rc;
    if (SEEN("trials") && (rc = bl_cli_int_option(prog, "trials", trials, &o.pre.trials))) return rc;
    if (SEEN("epochs")) o.pre.epochs = epochs;
    if (SEEN("grace")) o.pre.grace = grace;
    if (SEEN("reduction")) {
        if (reduction < 2 || reduction > BL_TRAIN_TRIALS_MAX) {
            bl_cli_error(prog, "--reduction %ld: must be 2..%d", reduction, BL_TRAIN_TRIALS_MAX);
            return BL_EXIT_USAGE;
        }
        o.pre.reduction = (int)reduction;
    }
    if (SEEN("avg-span")) {
        if (avg_span < 1 || avg_span > 1000000) {
            bl_cli_error(prog, "--avg-span %ld: must be 1..1000000", avg_span);
            return BL_EXIT_USAGE;
        }
        o.pre.avg_span = (int)avg_span;
    }
    if (SEEN("val-fraction")) o.pre.val_fraction = val_fraction; /* checked by the library's check below */
    if (tscale) o.pre.target_scaling = strcmp(tscale, "mean") == 0  ? BL_TARGET_MEAN
                                     : strcmp(tscale, "log") == 0 ? BL_TARGET_LOG
                                                                  : BL_TARGET_SECONDS;
    o.target_scaling = o.pre.target_scaling;
    bl_error perr;
    if (bl_pretrain_opts_check(&o.pre, &perr) != BL_OK) return bl_cli_opts_fail(prog, &perr);
    /* bellamy-eval's own */
    if (ensemble < 1 || ensemble > BL_TRAIN_TRIALS_MAX) {
        bl_cli_error(prog, "--ensemble %ld: must be 1..%d", ensemble, BL_TRAIN_TRIALS_MAX);
        return BL_EXIT_USAGE;
    }
    o.ensemble = (int)ensemble;
    o.ensemble_seeds = ens_seeds;
    if (o.pre.members > 1 && (o.ensemble > 1 || o.ensemble_seeds)) {
        bl_cli_error(prog, "--ensemble combines single networks: use it with --members 1");
        return BL_EXIT_USAGE;
    }
    /* K best trials of one search need K trials (--ensemble-seeds runs K searches instead) */
    if (o.ensemble > o.pre.trials && !o.ensemble_seeds) {
        bl_cli_error(prog, "--ensemble %d: the %d best trials of a search of %d trials do not exist (raise --trials "
                     "or use --ensemble-seeds)", o.ensemble, o.ensemble, o.pre.trials);
        return BL_EXIT_USAGE;
    }
    o.ensemble_agg = strcmp(ens_agg, "median") == 0 ? 1 : strcmp(ens_agg, "gmean") == 0 ? 2 : 0;
    o.totals_per_machine = per_machine;
    o.fold_by = fold_by;
    if (numbers) {
        o.numbers = bl_enc_numbers_parse(numbers); /* one of the choices above */
    } else { /* the library's default for data to pre-train on (bellamy-train's) */
        bl_train_opts to;
        bl_train_opts_init(&to);
        to.members = o.pre.members;
        bl_data_opts dd;
        bl_data_opts_for_training(&dd, &to);
        o.numbers = dd.numbers;
    }
    if (o.numbers == BL_ENC_NUMBERS_BOTH && (o.pre.members < 2 || o.ensemble > 1 || o.ensemble_seeds)) {
        bl_cli_error(prog, "--numbers both: the members of an ensemble alternate the encodings, so it needs "
                     "--members 2 or more (and no --ensemble)");
        return BL_EXIT_USAGE;
    }
    if (ft_unfreeze < 0 || ft_unfreeze > 2) { bl_cli_error(prog, "--ft-unfreeze %ld: must be 0, 1 or 2", ft_unfreeze); return BL_EXIT_USAGE; }
    o.ft.unfreeze_f = (int)ft_unfreeze;
    if (SEEN("ft-weight-decay")) {
        /* Negative: the pre-trained model's own. Otherwise at most FT_WD_MAX: the search's grid tops
         * out at 0.01, and a coupled decay of 1 or more outweighs the loss's gradient. */
        if (ft_wd > FT_WD_MAX) {
            bl_cli_error(prog, "--ft-weight-decay %g: must be 0..%g (or negative for the pre-trained model's)", ft_wd,
                         FT_WD_MAX);
            return BL_EXIT_USAGE;
        }
        o.ft.weight_decay = ft_wd;
    }
    if (SEEN("ft-lr-max")) {
        if (!(ft_lr_max > 0 && ft_lr_max <= FT_LR_MAX)) {
            bl_cli_error(prog, "--ft-lr-max %g: must be a positive learning rate of at most %g", ft_lr_max, FT_LR_MAX);
            return BL_EXIT_USAGE;
        }
        o.ft.lr_max = ft_lr_max;
        if (o.ft.lr_min > ft_lr_max) o.ft.lr_min = ft_lr_max;
    }
    if (SEEN("contexts")) o.contexts = contexts;
    if (SEEN("splits-per-cell")) {
        if (spc < 1) { bl_cli_error(prog, "--splits-per-cell %zu: must be at least 1", spc); return BL_EXIT_USAGE; }
        o.splits_per_cell = spc;
    }
    if (max_n < 1 || max_n > BL_EVAL_MAX_N) { bl_cli_error(prog, "--max-n %ld: must be 1..%d", max_n, BL_EVAL_MAX_N); return BL_EXIT_USAGE; }
    o.max_n = (int)max_n;
    if (folds < 2 || folds > 1000) { bl_cli_error(prog, "--folds %ld: must be 2..1000", folds); return BL_EXIT_USAGE; }
    o.folds = (int)folds;
    struct { const char *name; long v, max; } bounded[] = {
        { "ft-epochs", ft_epochs, EPOCHS_MAX }, { "ft-patience", ft_patience, EPOCHS_MAX },
        { "ft-cv-epochs", ft_cv_epochs, EPOCHS_MAX },
    };
    for (size_t i = 0; i < sizeof bounded / sizeof bounded[0]; i++)
        if (SEEN(bounded[i].name) && (bounded[i].v < 1 || bounded[i].v > bounded[i].max)) {
            bl_cli_error(prog, "--%s %ld: must be 1..%ld", bounded[i].name, bounded[i].v, bounded[i].max);
            return BL_EXIT_USAGE;
        }
    if (SEEN("ft-epochs")) o.ft.max_epochs = ft_epochs;
    if (SEEN("ft-patience")) o.ft.patience = ft_patience;
    if (SEEN("ft-cv-epochs")) o.ft.cv_epochs = ft_cv_epochs;
    if (SEEN("stop-mae")) {
        if (!(stop_mae >= 0)) { bl_cli_error(prog, "--stop-mae %g: must be >= 0 seconds", stop_mae); return BL_EXIT_USAGE; }
        o.ft.stop_mae = stop_mae;
    }
    if (SEEN("stop-rel")) {
        if (!(stop_rel >= 0)) { bl_cli_error(prog, "--stop-rel %g: must be >= 0", stop_rel); return BL_EXIT_USAGE; }
        o.ft.stop_rel = stop_rel;
    }
    if (ft_stop) o.ft.stop_cv = strcmp(ft_stop, "cv") == 0;
    if (ft_guard) o.ft.guard = strcmp(ft_guard, "on") == 0;
    if (SEEN("ft-fixed-epochs")) {
        if (ft_fixed < 0 || ft_fixed > o.ft.max_epochs) {
            bl_cli_error(prog, "--ft-fixed-epochs %ld: must be 0..%ld (at most --ft-epochs)", ft_fixed, o.ft.max_epochs);
            return BL_EXIT_USAGE;
        }
        o.ft.fixed_epochs = ft_fixed;
    }
    if (methods) {
        o.methods = 0;
        for (const char *p = methods; *p;) {
            const char *c = strchr(p, ',');
            size_t len = c ? (size_t)(c - p) : strlen(p);
            char name[32];
            snprintf(name, sizeof name, "%.*s", (int)(len < 31 ? len : 31), p);
            int m = bl_eval_method_index(name);
            if (m < 0) { bl_cli_error(prog, "--methods: unknown method '%s' (bellamy, bellamy-scratch, ernest, bell, noise-floor)", name); return BL_EXIT_USAGE; }
            o.methods |= 1u << m;
            if (!c) break;
            p = c + 1;
        }
    }
    if (pre_data && (!pre_schema || !schema)) {
        bl_cli_error(prog, "--pretrain-data needs --pretrain-schema and a single --data FILE with --schema");
        return BL_EXIT_USAGE;
    }
    if (pre_schema && !pre_data) { bl_cli_error(prog, "--pretrain-schema needs --pretrain-data"); return BL_EXIT_USAGE; }
    if (pre_data && fold_by) {
        bl_cli_error(prog, "--fold-by %s: the cross-environment case (--pretrain-data) has no folds", fold_by);
        return BL_EXIT_USAGE;
    }
    if (!schema && !schemas) { bl_cli_error(prog, "give --schemas DIR (with --data DIR) or --schema FILE (with --data FILE)"); return BL_EXIT_USAGE; }
    if (schema && schemas) { bl_cli_error(prog, "--schema and --schemas exclude each other"); return BL_EXIT_USAGE; }
    if (schema && algos) { bl_cli_error(prog, "--algorithms goes with --data DIR --schemas DIR"); return BL_EXIT_USAGE; }
    /* The files and folders named, before any work: a folder given where a data file belongs would
     * otherwise reach the reader, which can only say it cannot tell the delimiter from the name. */
    if (schema) {
        if ((rc = check_data_file(prog, "data", data)) || (rc = bl_cli_check_input(prog, "schema", schema)) ||
            (pre_data && ((rc = check_data_file(prog, "pretrain-data", pre_data)) ||
                          (rc = bl_cli_check_input(prog, "pretrain-schema", pre_schema)))))
            return rc;
    } else if ((rc = check_folder(prog, "data", data, "with --schemas, --data names a folder of data files; "
                                  "one data file goes with --schema FILE")) ||
               (rc = check_folder(prog, "schemas", schemas, "one schema file goes with --schema FILE, and --data FILE"))) {
        return rc;
    }
    if (splits && (rc = bl_cli_check_input(prog, "splits", splits))) return rc;
    /* several ranks: every pre-training's trials spread over them; no cache (a file one rank finds and
     * another does not would part their work); rank 0 writes --out, the others a scratch folder */
    bl_train_ranks ranks = { bl_dist_rank(dist), bl_dist_size(dist), dist, gather_ranks };
    char scratch[4200] = "";
    if (ranks.size > 1) {
        o.pre.ranks = &ranks;
        if (cache && ranks.rank == 0)
            fprintf(stderr, "%s: note: --model-cache is not used over %d MPI ranks\n", prog, ranks.size);
        cache = NULL;
        o.model_cache = NULL;
        if (ranks.rank != 0) {
            const char *tmp = getenv("TMPDIR");
            snprintf(scratch, sizeof scratch, "%s/bellamy-eval-rank%d-XXXXXX", tmp && *tmp ? tmp : "/tmp", ranks.rank);
            if (!mkdtemp(scratch)) {
                bl_cli_error(prog, "rank %d: cannot make a scratch folder %s: %s", ranks.rank, scratch, strerror(errno));
                bl_dist_abort(dist, BL_EXIT_FAIL);
            }
            out = scratch;
        }
    }

#undef SEEN
    bl_eval ev;
    bl_error err;
    if (bl_eval_init(&ev, &o, &err) != BL_OK) return bl_cli_fail(prog, &err);
    if (schema) {
        char *name = stem_of(data);
        bl_status st = name ? bl_eval_add_algo(&ev, name, data, schema, pre_data, pre_schema, &err)
                            : bl_seterr(&err, BL_ENOMEM, "out of memory");
        free(name);
        if (st != BL_OK) { bl_eval_free(&ev); return bl_cli_fail(prog, &err); }
    } else if ((rc = add_dir(prog, &ev, data, schemas, algos)) != BL_EXIT_OK) {
        bl_eval_free(&ev);
        return rc;
    }
    if (mkdir_p(out) != 0) {
        struct stat so;
        if (errno == EEXIST && stat(out, &so) == 0 && !S_ISDIR(so.st_mode))
            bl_cli_error(prog, "--out %s is a file, not a folder: name a folder for the outputs (it is created)", out);
        else
            bl_cli_error(prog, "%s: cannot create the output folder (%s)", out, strerror(errno));
        bl_eval_free(&ev);
        return BL_EXIT_FAIL;
    }
    /* the model cache is checked now, not after the first pre-training */
    struct stat cs;
    int cache_ok = !cache || (mkdir_p(cache) == 0 && stat(cache, &cs) == 0 && S_ISDIR(cs.st_mode));
    if (cache && cache_ok) { /* writable in fact (access() says yes to root everywhere, even in /sys) */
        char probe[4200];
        snprintf(probe, sizeof probe, "%s/.bellamy-eval-probe-XXXXXX", cache);
        const int fd = mkstemp(probe);
        cache_ok = fd >= 0;
        if (fd >= 0) {
            close(fd);
            unlink(probe);
        }
    }
    if (!cache_ok) {
        bl_cli_error(prog, "--model-cache %s: %s", cache,
                     stat(cache, &cs) == 0 && !S_ISDIR(cs.st_mode) ? "is a file, not a folder"
                                                                   : "cannot create or write to this folder");
        bl_eval_free(&ev);
        return BL_EXIT_FAIL;
    }
    /* a previous run's results in the same folder go first: a run that stops early must not leave
     * them beside its own splits.tsv, which they no longer match */
    static const char *const outputs[] = {"predictions.tsv", "summary.tsv", "pretrain.tsv", "plot.dat", "plot.gp",
                                          "mre.svg", "coverage.dat", "coverage.gp", "coverage.svg"};
    for (size_t i = 0; i < sizeof outputs / sizeof outputs[0]; i++) {
        char old[4200];
        snprintf(old, sizeof old, "%s/%s", out, outputs[i]);
        if (unlink(old) != 0 && errno != ENOENT) {
            bl_cli_error(prog, "%s: cannot remove the previous run's file: %s", old, strerror(errno));
            bl_eval_free(&ev);
            return BL_EXIT_FAIL;
        }
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/splits.tsv", out);
    bl_status st = splits ? bl_eval_read_splits(&ev, splits, &err) : bl_eval_draw_splits(&ev, &err);
    if (st == BL_OK) st = bl_eval_write_splits(&ev, path, &err);
    if (st == BL_OK) {
        time_t now = time(NULL);
        char when[64];
        strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S UTC", gmtime(&now));
        printf("bellamy-eval %s, %s; kernels: %s (processor: %s)\n", BL_VERSION, when, bl_cpu_kernels(),
               bl_cpu_kernels_available());
        char cvdesc[96] = "";
        if (o.ft.fixed_epochs >= 0)
            snprintf(cvdesc, sizeof cvdesc, "; every n: exactly %ld epochs", o.ft.fixed_epochs);
        else if (o.ft.stop_cv)
            snprintf(cvdesc, sizeof cvdesc, "; n >= 3: epochs by cross-validation over up to %ld",
                     o.ft.cv_epochs < o.ft.max_epochs ? o.ft.cv_epochs : o.ft.max_epochs);
        printf("settings: seed %llu, threads %d, %s, n = 1..%d, folds %d; pre-training %d trials x %ld epochs (grace %ld, "
               "reduction %d, average over %d epochs, target %s, validation %s); fine-tuning <= %ld epochs (patience %ld, stop %s %g%s)\n",
               (unsigned long long)o.seed, o.threads, splits ? "splits from file" : "drawn splits", o.max_n, o.folds,
               o.pre.trials, o.pre.epochs, o.pre.grace, o.pre.reduction, o.pre.avg_span,
               o.pre.target_scaling == BL_TARGET_MEAN ? "mean-scaled" : o.pre.target_scaling == BL_TARGET_LOG ? "log-scaled" : "seconds",
               o.pre.val_split == BL_VAL_GROUPS ? "groups" : "contexts",
               o.ft.max_epochs, o.ft.patience, o.ft.stop_rel > 0 ? "rel" : "mae",
               o.ft.stop_rel > 0 ? o.ft.stop_rel : o.ft.stop_mae,
               cvdesc);
        if (!splits) printf("splits: up to %zu per context x n x kind, %zu contexts per data file (0 = all)\n",
                            o.splits_per_cell, o.contexts);
        for (size_t a = 0; a < ev.n_algos; a++) {
            size_t k = 0;
            for (size_t i = 0; i < ev.n_splits; i++) k += ev.splits[i].algo == a;
            printf("  %s: %zu rows, %zu contexts, %zu splits%s%s\n", ev.algos[a].name, ev.algos[a].ds->n_rows,
                   ev.algos[a].ds->n_contexts, k, ev.algos[a].pre_ds ? ", pre-trained on " : "",
                   ev.algos[a].pre_ds ? ev.algos[a].pre_path : "");
        }
        fflush(stdout);
        st = bl_eval_pretrain(&ev, &err);
    }
    if (st == BL_OK) st = bl_eval_fit(&ev, &err);
    if (st == BL_OK) st = bl_eval_report(&ev, out, stdout, &err);
    bl_eval_free(&ev);
    if (scratch[0]) remove_tree(scratch);
    if (st != BL_OK && ranks.size > 1) { /* another rank may wait inside a search for this one: end the job */
        bl_cli_fail(prog, &err);
        bl_dist_abort(dist, BL_EXIT_FAIL);
    }
    if (st != BL_OK) return bl_cli_fail(prog, &err);
    printf("wrote %s/{splits,predictions,summary,pretrain}.tsv\n", out);
    return BL_EXIT_OK;
}
