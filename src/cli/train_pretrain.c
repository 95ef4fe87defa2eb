/* train_pretrain.c — bellamy-train pretrain: the search on a data file with progress and a summary per
 * member; the model saved. */
#include "cli/train_cmds.h"
#include "cli/cli_util.h"
#include "bellamy/bellamy.h"
#include "bellamy/train.h"
#include "common/file.h"
#include "common/suggest.h"
#include "dist/dist.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

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

/* The search reports each trial's epoch count at every 25th epoch and at each rung's end. The share
 * done is counted here from those counts, per search and trial: the library's epochs_done_all adds
 * "epochs since the last multiple of 25", which overcounts when a rung ends off a multiple of 25 (grace
 * 10: 175 %). The members' searches run side by side, so their reports interleave; each trial's last
 * report is at its last rung, so the sum ends at exactly epochs_planned_all (every member's plan). */
typedef struct progress_state {
    int    tty;
    double t0, last;
    int    printed;   /* a live line is on the terminal */
    long   seen[BL_TRAIN_MEMBERS_MAX][BL_TRAIN_TRIALS_MAX]; /* last epoch count reported per search and trial */
    long   done;                        /* epochs trained so far, every trial and member */
    int    ranks;                       /* > 1: these counts are rank 0's own trials, about 1/ranks of all */
} progress_state;

/* Adds p's epochs to s->done and returns the share of the plan done, in [0, 1]. */
static double progress_fraction(progress_state *s, const bl_train_progress *p) {
    if (p->epochs_planned_all <= 0) return 0;
    if (p->search >= 0 && p->search < BL_TRAIN_MEMBERS_MAX && p->trial >= 0 && p->trial < BL_TRAIN_TRIALS_MAX &&
        p->epoch >= 0) {
        long *seen = &s->seen[p->search][p->trial];
        if (p->epoch > *seen) s->done += p->epoch - *seen;
        *seen = p->epoch;
    } else if (p->epochs_done_all > s->done) {
        s->done = p->epochs_done_all;   /* not expected: fall back on the library's count */
    }
    double frac = (double)s->done / (double)p->epochs_planned_all;
    if (s->ranks > 1) frac = frac * s->ranks < 0.99 ? frac * s->ranks : 0.99; /* an estimate from rank 0's share */
    return frac < 1 ? frac : 1;
}

/* Progress callback: a live line (\r) on a terminal, else a line every 5 s. Serialised by the library. */
static int on_progress(void *ctx, const bl_train_progress *p) {
    progress_state *s = ctx;
    double t = bl_tr_now_s();
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


#define VAL_SPLIT_DEFAULT "contexts" /* bl_train_opts_init's val_split */

/* bl_train_ranks.gather over the MPI ranks (src/dist). */
static int gather_ranks(void *ctx, void *recs, size_t first, size_t n, size_t rec_size, char *msg, size_t cap) {
    bl_error e = { 0 };
    if (bl_dist_gather(ctx, recs, first, n, rec_size, &e) == BL_OK) return 0;
    snprintf(msg, cap, "%s", e.message);
    return 1;
}

static int pretrain_cmd(const char *prog, int argc, char **argv, bl_dist *dist, int rank_err);

/* Under an MPI launcher (mpirun, srun) the ranks share the search (bl_train_ranks): every rank reads the
 * same data and trains its share of the trials; rank 0 alone prints and writes the model. */
int bl_train_cmd_pretrain(const char *prog, int argc, char **argv) {
    bl_dist *dist = NULL;
    bl_error err = { 0 };
    if (bl_dist_open(NULL, NULL, &dist, &err) != BL_OK) {
        bl_cli_error(prog, "%s", err.message);
        return BL_EXIT_FAIL;
    }
    int rank_err = -1; /* the other ranks are silent; a failure of their own still reaches this stderr */
    if (bl_dist_rank(dist) != 0) {
        fflush(stdout);
        fflush(stderr);
        rank_err = dup(STDERR_FILENO);
        int null = open("/dev/null", O_WRONLY);
        if (null >= 0) {
            dup2(null, STDOUT_FILENO);
            dup2(null, STDERR_FILENO);
            close(null);
        }
    }
    int rc = pretrain_cmd(prog, argc, argv, dist, rank_err);
    if (rank_err >= 0) close(rank_err);
    bl_dist_close(dist);
    return rc;
}

static int pretrain_cmd(const char *prog, int argc, char **argv, bl_dist *dist, int rank_err) {
    bl_train_opts po; /* the defaults are the library's */
    bl_train_opts_init(&po);
    const char *data = NULL, *schema = NULL, *out = NULL, *name = NULL, *delim = NULL;
    const char *device = "cpu", *tscale = "seconds";
    long trials = po.trials, epochs = po.epochs, grace = po.grace, threads = 0, seed = (long)po.seed,
         members = po.members;
    double val_fraction = po.val_fraction;
    int quiet = 0, skip_invalid = 0;
    const char *totals = "total", *masks = "row", *vsplit = NULL, *numbers = NULL, *calib = "on";
    const char *precision = NULL; /* not given: BL_TRAIN_PRECISION_DEFAULT, float32 on the CPU */
    char thr_def[48], tr_help[64], tr_def[24], ep_help[64], ep_def[24], gr_help[80], gr_def[24], vf_def[24],
        seed_def[24], mem_def[24];
    snprintf(thr_def, sizeof thr_def, "number of CPUs (%ld here)", default_threads());
    snprintf(tr_help, sizeof tr_help, "hyper-parameter configurations to try (1..%d)", BL_TRAIN_TRIALS_MAX);
    snprintf(ep_help, sizeof ep_help, "most epochs per trial (1..%ld)", BL_TRAIN_EPOCHS_MAX);
    snprintf(gr_help, sizeof gr_help, "successive-halving grace period (epochs, 1..%ld)", BL_TRAIN_EPOCHS_MAX);
    snprintf(tr_def, sizeof tr_def, "%ld", trials);
    snprintf(ep_def, sizeof ep_def, "%ld", epochs);
    snprintf(gr_def, sizeof gr_def, "%ld", grace);
    snprintf(vf_def, sizeof vf_def, "%g", val_fraction);
    snprintf(seed_def, sizeof seed_def, "%ld", seed);
    snprintf(mem_def, sizeof mem_def, "%ld", members);
    bl_cli_option opts[] = {
        { "data", BL_OPT_STRING, &data, "FILE", "training data (.tsv or .csv with a header line)", NULL, 1, NULL, 0 },
        { "schema", BL_OPT_STRING, &schema, "FILE", "schema of the data (format: datasets/README.md); stored in the model",
          NULL, 1, NULL, 0 },
        { "out", BL_OPT_STRING, &out, "MODEL.h5", "model file to write (the model is added to or replaced in it)", NULL, 1,
          NULL, 0 },
        { "name", BL_OPT_STRING, &name, "NAME", "name of the model inside the file", "the data file's stem", 0, NULL, 0 },
        { "trials", BL_OPT_INT, &trials, "N", tr_help, tr_def, 0, NULL, 0 },
        { "epochs", BL_OPT_INT, &epochs, "N", ep_help, ep_def, 0, NULL, 0 },
        { "grace", BL_OPT_INT, &grace, "N", gr_help, gr_def, 0, NULL, 0 },
        { "val-fraction", BL_OPT_DOUBLE, &val_fraction, "F",
          "share held out for validation: of the contexts, or of every (context, scale-out) group's rows", vf_def, 0,
          NULL, 0 },
        { "val-split", BL_OPT_CHOICE, &vsplit, NULL,
          "validation rows: whole contexts (transfer to unseen contexts), or a share of every group (the prototype's "
          "stratified split; every context trains)", VAL_SPLIT_DEFAULT, 0, "contexts|groups", 0 },
        { "threads", BL_OPT_INT, &threads, "N", "trials trained in parallel (the result does not depend on it)", thr_def,
          0, NULL, 0 },
        { "seed", BL_OPT_INT, &seed, "S", "random seed (configurations, splits, initial weights)", seed_def, 0, NULL, 0 },
        { "members", BL_OPT_INT, &members, "N",
          "ensemble: N searches whose winners' median is the prediction (seeds S, S+1, ...; with --numbers both "
          "S, S, S+1, S+1, ...); 1 = one network", mem_def, 0, NULL, 0 },
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
        { "precision", BL_OPT_CHOICE, &precision, NULL,
          "what the network computes in: float64, or float32 (CPU only; the model file stores float32 weights)",
          "f32; f64 with --device cuda", 0, "f64|f32", 0 },
    };
    const size_t nopts = sizeof opts / sizeof opts[0];
    int rc = bl_cli_parse(prog,
                          "bellamy-train pretrain --data FILE --schema FILE --out MODEL.h5 [--name NAME] [--trials N]\n"
                          "         [--epochs N] [--grace N] [--val-fraction F] [--val-split contexts|groups] [--threads N]\n"
                          "         [--seed S] [--members N] [--device cpu|cuda] [--target-scale seconds|mean|log]\n"
                          "         [--totals total|per-machine] [--numbers binary|log|range|both]\n"
                          "         [--dropout-masks row|value|hybrid] [--calibrate on|off] [--delimiter tab|comma]\n"
                          "         [--precision f64|f32] [--skip-invalid] [--quiet]",
                          argc, argv, 1, opts, nopts, NULL, NULL);
    if (rc) return rc < 0 ? bl_cli_finish(prog) : rc;
    /* the values as given, checked by the library's one check (before the data is read) */
    if (seed < 0) { bl_cli_error(prog, "--seed %ld: must be >= 0", seed); return BL_EXIT_USAGE; }
    if (!bl_tr_seen(opts, nopts, "threads")) { /* as many as there are CPUs (shared by the ranks here) and trials */
        long cpus = default_threads() / bl_dist_local_size(dist);
        threads = cpus < trials ? cpus : trials;
        if (threads > BL_TRAIN_THREADS_MAX) threads = BL_TRAIN_THREADS_MAX;
        if (threads < 1) threads = 1;
    }
    if ((rc = bl_cli_int_option(prog, "trials", trials, &po.trials)) ||
        (rc = bl_cli_int_option(prog, "threads", threads, &po.threads)) ||
        (rc = bl_cli_int_option(prog, "members", members, &po.members)))
        return rc;
    po.epochs = epochs;
    po.grace = grace;
    po.seed = (unsigned long long)seed;
    po.val_fraction = val_fraction;
    if (vsplit) po.val_split = strcmp(vsplit, "groups") == 0 ? BL_SPLIT_GROUPS : BL_SPLIT_CONTEXTS;
    po.target_scale = strcmp(tscale, "mean") == 0  ? BL_SCALE_MEAN
                    : strcmp(tscale, "log") == 0 ? BL_SCALE_LOG
                                                 : BL_SCALE_SECONDS;
    po.device = strcmp(device, "cuda") == 0 ? BL_ON_CUDA : BL_ON_CPU;
    po.calibrate = strcmp(calib, "off") != 0;
    if (precision) po.precision = strcmp(precision, "f32") == 0 ? BL_PRECISION_F32 : BL_PRECISION_F64;
    if (po.precision == BL_PRECISION_F32 && po.device == BL_ON_CUDA) { /* asked for: never a silent switch */
        bl_cli_error(prog, "--precision f32: the CUDA search computes in float64 only; use --device cpu with "
                     "--precision f32, or --precision f64 with --device cuda");
        return BL_EXIT_USAGE;
    }
    po.dropout_masks = strcmp(masks, "row") == 0 ? BL_MASKS_ROW : strcmp(masks, "hybrid") == 0 ? BL_MASKS_HYBRID
                                                                                             : BL_MASKS_VALUE;
    bl_train_ranks ranks = { bl_dist_rank(dist), bl_dist_size(dist), dist, gather_ranks };
    const int multi = ranks.size > 1;
    if (multi) {
        if (po.device == BL_ON_CUDA) {
            bl_cli_error(prog, "--device cuda: a pre-training over %d MPI ranks runs on CPUs only; use --device cpu, "
                         "or start one process", ranks.size);
            return BL_EXIT_USAGE;
        }
        po.ranks = &ranks;
        quiet |= ranks.rank != 0;
    }
    bl_error err = { 0 };
    bl_status cst = bl_train_opts_check(&po, &err);
    if (cst == BL_EUNSUPPORTED) { /* --device cuda where there is none: a clear error at once */
        bl_cli_error(prog, "--device cuda: no CUDA support here: %s; use --device cpu", err.message);
        return BL_EXIT_FAIL;
    }
    if (cst != BL_OK) return bl_cli_opts_fail(prog, &err);
    if (po.threads > po.trials) po.threads = po.trials; /* the result does not depend on it */
    bl_data_opts dopt;
    bl_data_opts_for_training(&dopt, &po);
    if (numbers)
        dopt.numbers = strcmp(numbers, "log") == 0     ? BL_NUMBERS_LOG
                     : strcmp(numbers, "range") == 0 ? BL_NUMBERS_RANGE
                     : strcmp(numbers, "both") == 0  ? BL_NUMBERS_BOTH
                                                     : BL_NUMBERS_BINARY;
    if (dopt.numbers == BL_NUMBERS_BOTH && po.members < 2) {
        bl_cli_error(prog, "--numbers both: the members of an ensemble alternate the encodings, so it needs "
                     "--members 2 or more");
        return BL_EXIT_USAGE;
    }
    if (name && (rc = bl_cli_check_model_name(prog, "name", name))) return rc;
    /* everything that can be checked before the (long) training is checked now */
    rc = bl_cli_check_input(prog, "data", data);
    if (!rc) rc = bl_cli_check_input(prog, "schema", schema);
    if (!rc && ranks.rank == 0) rc = bl_tr_check_model_out(prog, "out", out); /* rank 0 alone writes it */
    if (multi) {
        /* every rank goes on only if all can, and only with the same data and schema as rank 0 */
        if (rc) snprintf(err.message, sizeof err.message, "the data or schema cannot be read there%s",
                         ranks.rank == 0 ? ", or --out cannot be written" : "");
        if (bl_dist_agree(dist, rc ? BL_EIO : BL_OK, &err) != BL_OK) {
            if (!rc) bl_cli_error(prog, "%s", err.message);
            return rc ? rc : BL_EXIT_FAIL;
        }
        if (bl_dist_same_file(dist, data, &err) != BL_OK || bl_dist_same_file(dist, schema, &err) != BL_OK)
            return bl_cli_fail(prog, &err);
    }
    if (rc) return rc;
    char stem[128];
    file_stem(data, stem, sizeof stem);
    if (!name && bl_cli_model_name_problem(stem)) {
        bl_cli_error(prog, "the model would be named after the data file, '%s', which is not a valid model name (%s): "
                     "give --name", stem, bl_cli_model_name_problem(stem));
        return BL_EXIT_USAGE;
    }

    bl_data *ds = NULL;
    bl_predictor *m = NULL;
    dopt.delimiter = bl_cli_delim(delim);
    dopt.skip_invalid = skip_invalid;
    dopt.totals_per_machine = strcmp(totals, "per-machine") == 0;
    bl_status lst = bl_data_load(data, schema, &dopt, &ds, &err);
    if (multi) lst = bl_dist_agree(dist, lst, &err);
    if (lst != BL_OK) {
        bl_data_free(ds);
        return bl_cli_fail(prog, &err);
    }
    bl_cli_note_skipped(prog, "data", ds); /* even with --quiet: rows left out are never silent */
    bl_data_summary sum;
    bl_data_summarize(ds, &sum);
    /* last = long ago: the first report prints at once */
    progress_state ps = { isatty(STDERR_FILENO), bl_tr_now_s(), -1e9, 0, { { 0 } }, 0, ranks.size };
    if (!quiet) {
        po.progress = on_progress;
        po.progress_ctx = &ps;
        /* the grace period only matters where successive halving has rungs to halve at */
        char gr[48] = "";
        if (trials > 1 && grace < epochs) snprintf(gr, sizeof gr, " (grace %ld)", grace);
        fprintf(stderr, "%s: %zu rows, %zu contexts; %ld search%s of %ld trial%s x up to %ld epochs%s on %ld "
                "thread%s, seed %ld%s\n", prog, sum.rows, sum.contexts, members, members == 1 ? "" : "es", trials,
                trials == 1 ? "" : "s", epochs, gr, (long)po.threads, po.threads == 1 ? "" : "s", seed,
                members < 2 ? "" : dopt.numbers == BL_NUMBERS_BOTH
                                       ? " (an ensemble: the median of the searches' winners, which read numbers "
                                         "alternately as bits and as log magnitude)"
                                       : " (an ensemble: the median of the searches' winners)");
    }
    if (!quiet && multi)
        fprintf(stderr, "%s: the trials spread over %d MPI ranks (%d thread%s each); rank 0 reports its own\n", prog,
                ranks.size, po.threads, po.threads == 1 ? "" : "s");
    if (ranks.rank == 0 && multi && (long)ranks.size > (long)po.trials * po.members)
        fprintf(stderr, "%s: note: %d ranks for %ld trials (%d x %d): %ld ranks stay idle in the searches\n", prog,
                ranks.size, (long)po.trials * po.members, po.members, po.trials,
                (long)ranks.size - (long)po.trials * po.members);
    bl_status st = bl_pretrain_data(ds, &po, name ? name : stem, &m, &err);
    if (ps.printed) fputc('\n', stderr);
    if (st != BL_OK && multi) {
        /* another rank may wait for this one inside the search: end the whole job, never hang */
        if (ranks.rank == 0) bl_cli_fail(prog, &err);
        else if (rank_err >= 0) dprintf(rank_err, "%s: rank %d: %s\n", prog, ranks.rank, err.message);
        bl_dist_abort(dist, BL_EXIT_FAIL);
    }
    if (st == BL_OK && ranks.rank == 0) st = bl_predictor_save(m, out, NULL, &err);
    if (multi) st = bl_dist_agree(dist, st, &err);
    if (st == BL_OK) {
        char el[32];
        fmt_duration(bl_tr_now_s() - ps.t0, el, sizeof el);
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
                printf("pre-trained '%s' on %zu rows (%zu context%s) in %s: an ensemble of %d members (the median of "
                       "their predictions); no validation rows (%s), so each search ranked trials by their training "
                       "loss; saved to %s\n", mname, sum.rows, sum.contexts, sum.contexts == 1 ? "" : "s", el, mi.members, why, out);
            else
                printf("pre-trained '%s' on %zu rows (%zu context%s) in %s: an ensemble of %d members (the median of "
                       "their predictions), validated on %lld rows; saved to %s\n", mname, sum.rows,
                       sum.contexts, sum.contexts == 1 ? "" : "s", el, mi.members, ti.val_rows, out);
        } else if (ti.val_rows == 0) {
            printf("pre-trained '%s' on %zu rows (%zu context%s) in %s: no validation rows (%s), so the search ranked "
                   "trials by their training loss, best %.6g after %lld epochs (dropout %g, learning rate %g, weight "
                   "decay %g); saved to %s\n",
                   mname, sum.rows, sum.contexts, sum.contexts == 1 ? "" : "s", el, why, mi.best_val_loss, mi.epochs, mi.dropout, mi.learning_rate,
                   mi.weight_decay, out);
        } else
            printf("pre-trained '%s' on %zu rows (%zu context%s) in %s: best validation loss %.6g on %lld rows after %lld "
                   "epochs (dropout %g, learning rate %g, weight decay %g); saved to %s\n",
                   mname, sum.rows, sum.contexts, sum.contexts == 1 ? "" : "s", el, mi.best_val_loss, ti.val_rows, mi.epochs, mi.dropout,
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
                   cal.contexts > 0 ? ""
                   : po.val_split == BL_SPLIT_GROUPS ? " (none: validation by groups holds no context out; use --val-split "
                                                       "contexts)"
                   : sum.contexts < 2 ? " (none: with one context there is no other to hold out; runs of more contexts "
                                        "give intervals)"
                                      : " (none: the validation share holds out no context; a larger "
                                        "--val-fraction gives intervals)");
        else
            printf("intervals: none (--calibrate off)\n");
    }
    bl_predictor_free(m);
    bl_data_free(ds);
    if (st != BL_OK) return bl_cli_fail(prog, &err);
    return bl_cli_finish(prog);
}
