/* bench_sched.c — figures for the DBMLSched simulator (bench/README.md, "DBMLSched" section):
 * the paper workload under every policy (mean service time ratio FIFO-GPU / DBMLSched, each policy's
 * gap to Oracle SRPT), the hybrid and sql scenarios, and the time to simulate N Poisson jobs per policy
 * on one core (default N = 1 000 000). DBMLSched + Bellamy runs twice: with the Bellamy predictor (a
 * Bellamy model trained on the run's history, bl_sched_bellamy) and with the per-kind history predictor.
 * Usage: bench_sched [N]
 * It prints; it asserts nothing (the tests do). */
#include "bellamy/sched.h"
#include "bench/bench_args.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The rows of a table: every policy, DBMLSched + predictor twice. */
#define NROWS (BL_SCHED_NPOLICIES + 1)
static bl_sched_policy row_policy(int i) { return i < BL_SCHED_NPOLICIES ? (bl_sched_policy)i : BL_SCHED_DBMLSCHED_PRED; }
static const char *row_name(int i) {
    if (i == BL_SCHED_DBMLSCHED_PRED) return "dbmlsched-bellamy";
    if (i == BL_SCHED_NPOLICIES) return "dbmlsched-history";
    return bl_sched_policy_name((bl_sched_policy)i);
}

/* Simulates row i; the Bellamy row gets a fresh Bellamy predictor (its stats land in *bst). */
static bl_status sim_row(const bl_sched_workload *w, int i, int trace, bl_sched_result **r, bl_sched_bellamy_stats *bst,
                         bl_error *err) {
    bl_sched_config c;
    bl_sched_config_default(&c);
    c.policy = row_policy(i);
    c.record_trace = trace;
    if (i != BL_SCHED_DBMLSCHED_PRED) return bl_sched_simulate(w, &c, NULL, r, err);   /* NULL: history predictor */
    bl_sched_bellamy *b = NULL;
    bl_status st = bl_sched_bellamy_new(NULL, &b, err);
    if (st) return st;
    bl_sched_predictor p = bl_sched_bellamy_predictor(b);
    st = bl_sched_simulate(w, &c, &p, r, err);
    bl_sched_bellamy_stats_get(b, bst);
    bl_sched_bellamy_free(b);
    return st;
}

static void print_bstats(const bl_sched_bellamy_stats *b) {
    printf("  (bellamy predictor: %zu observations, %zu trainings, %ld epochs, last MAE %.3g s, %zu predictions, "
           "%zu fall-backs)\n", b->observations, b->trainings, b->epochs_total, b->last_mae, b->predictions, b->fallbacks);
}

static int table(const char *spec) {
    bl_sched_workload *w = NULL;
    bl_error err = { 0 };
    if (bl_sched_workload_generate(spec, 1, &w, &err)) { fprintf(stderr, "%s\n", err.message); return 1; }
    double mean[NROWS];
    bl_sched_bellamy_stats bst = { 0 };
    printf("\n%s workload (%zu jobs)\n%-18s %8s %8s %8s %9s %8s %8s %8s %9s\n", spec, bl_sched_workload_njobs(w), "policy",
           "mean_s", "median_s", "p95_s", "makespan", "est_s", "pause_s", "held_s", "query_x");
    bl_sched_summary sm[NROWS];
    for (int p = 0; p < NROWS; p++) {
        bl_sched_result *r = NULL;
        if (sim_row(w, p, 1, &r, &bst, &err)) { fprintf(stderr, "%s\n", err.message); bl_sched_workload_free(w); return 1; }
        bl_sched_result_summary(r, &sm[p]);
        mean[p] = sm[p].mean_service;
        printf("%-18s %8.2f %8.2f %8.2f %9.2f %8.2f %8.2f %8.2f %9.3f\n", row_name(p),
               sm[p].mean_service, sm[p].median_service, sm[p].p95_service, sm[p].makespan, sm[p].estimation_s,
               sm[p].overhead_s, sm[p].observer_pause_s, sm[p].query_inflation_mean);
        bl_sched_result_free(r);
    }
    print_bstats(&bst);
    printf("mean service FIFO-GPU / DBMLSched = %.3f\n", mean[BL_SCHED_FIFO_GPU] / mean[BL_SCHED_DBMLSCHED]);
    printf("gap to Oracle SRPT (mean / oracle mean - 1):");
    for (int p = 0; p < NROWS; p++) printf(" %s %+.1f%%", row_name(p), 100.0 * (mean[p] / mean[BL_SCHED_ORACLE] - 1));
    printf("\n");
    bl_sched_workload_free(w);
    return 0;
}

int main(int argc, char **argv) {
    int done = bench_args(argc, argv, "bench_sched", "[JOBS] (jobs of the large Poisson workload; default 1000000)");
    if (done >= 0) return done;
    if (argc > 2 || (argc == 2 && (argv[1][0] < '0' || argv[1][0] > '9'))) {
        fprintf(stderr, "bench_sched: unexpected '%s'\nusage: bench_sched [JOBS]\n", argv[argc - 1]);
        return 2;
    }
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    if (n < 1) n = 1000000;
    printf("kernels: %s (processor: %s)\n", bl_cpu_kernels(), bl_cpu_kernels_available());
    if (table("paper") || table("hybrid") || table("sql")) return 1;

    char spec[64];
    snprintf(spec, sizeof spec, "poisson:%ld", n);
    bl_sched_workload *w = NULL;
    bl_error err = { 0 };
    double t0 = now_s();
    if (bl_sched_workload_generate(spec, 1, &w, &err)) { fprintf(stderr, "%s\n", err.message); return 1; }
    printf("\n%s: generated in %.2f s\n%-18s %9s %12s %10s %10s\n", spec, now_s() - t0, "policy", "sim_s", "events",
           "mean_s", "p95_s");
    for (int p = 0; p < NROWS; p++) {
        bl_sched_result *r = NULL;
        bl_sched_bellamy_stats bst = { 0 };
        t0 = now_s();
        bl_status st = sim_row(w, p, 0, &r, &bst, &err);
        double dt = now_s() - t0;
        if (st) { printf("%-18s failed: %s\n", row_name(p), err.message); continue; }
        bl_sched_summary s;
        bl_sched_result_summary(r, &s);
        printf("%-18s %9.2f %12llu %10.2f %10.2f\n", row_name(p), dt, (unsigned long long)s.events, s.mean_service,
               s.p95_service);
        if (p == BL_SCHED_DBMLSCHED_PRED) print_bstats(&bst);
        bl_sched_result_free(r);
    }
    bl_sched_workload_free(w);
    return 0;
}
