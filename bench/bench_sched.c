/* bench_sched.c — figures for the DBMLSched simulator (bench/README.md, "DBMLSched" section):
 * the paper workload under every policy (mean service time ratio FIFO-GPU / DBMLSched, each policy's
 * gap to Oracle SRPT), the hybrid and sql scenarios, and the time to simulate N Poisson jobs per policy
 * on one core (default N = 1 000 000).  Usage: bench_sched [N]
 * It prints; it asserts nothing (the tests do). */
#include "bellamy/sched.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int table(const char *spec) {
    bl_sched_workload *w = NULL;
    bl_error err = { 0 };
    if (bl_sched_workload_generate(spec, 1, &w, &err)) { fprintf(stderr, "%s\n", err.message); return 1; }
    double mean[BL_SCHED_NPOLICIES];
    printf("\n%s workload (%zu jobs)\n%-18s %8s %8s %8s %9s %8s %8s %8s %9s\n", spec, bl_sched_workload_njobs(w), "policy",
           "mean_s", "median_s", "p95_s", "makespan", "est_s", "pause_s", "held_s", "query_x");
    bl_sched_summary sm[BL_SCHED_NPOLICIES];
    for (int p = 0; p < BL_SCHED_NPOLICIES; p++) {
        bl_sched_config c;
        bl_sched_config_default(&c);
        c.policy = (bl_sched_policy)p;
        bl_sched_result *r = NULL;
        if (bl_sched_simulate(w, &c, NULL, &r, &err)) { fprintf(stderr, "%s\n", err.message); bl_sched_workload_free(w); return 1; }
        bl_sched_result_summary(r, &sm[p]);
        mean[p] = sm[p].mean_service;
        printf("%-18s %8.2f %8.2f %8.2f %9.2f %8.2f %8.2f %8.2f %9.3f\n", bl_sched_policy_name((bl_sched_policy)p),
               sm[p].mean_service, sm[p].median_service, sm[p].p95_service, sm[p].makespan, sm[p].estimation_s,
               sm[p].overhead_s, sm[p].observer_pause_s, sm[p].query_inflation_mean);
        bl_sched_result_free(r);
    }
    printf("mean service FIFO-GPU / DBMLSched = %.3f\n", mean[BL_SCHED_FIFO_GPU] / mean[BL_SCHED_DBMLSCHED]);
    printf("gap to Oracle SRPT (mean / oracle mean - 1):");
    for (int p = 0; p < BL_SCHED_NPOLICIES; p++)
        printf(" %s %+.1f%%", bl_sched_policy_name((bl_sched_policy)p), 100.0 * (mean[p] / mean[BL_SCHED_ORACLE] - 1));
    printf("\n");
    bl_sched_workload_free(w);
    return 0;
}

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    if (n < 1) n = 1000000;
    if (table("paper") || table("hybrid") || table("sql")) return 1;

    char spec[64];
    snprintf(spec, sizeof spec, "poisson:%ld", n);
    bl_sched_workload *w = NULL;
    bl_error err = { 0 };
    double t0 = now_s();
    if (bl_sched_workload_generate(spec, 1, &w, &err)) { fprintf(stderr, "%s\n", err.message); return 1; }
    printf("\n%s: generated in %.2f s\n%-18s %9s %12s %10s %10s\n", spec, now_s() - t0, "policy", "sim_s", "events",
           "mean_s", "p95_s");
    for (int p = 0; p < BL_SCHED_NPOLICIES; p++) {
        bl_sched_config c;
        bl_sched_config_default(&c);
        c.policy = (bl_sched_policy)p;
        c.record_trace = 0;
        bl_sched_result *r = NULL;
        t0 = now_s();
        bl_status st = bl_sched_simulate(w, &c, NULL, &r, &err);
        double dt = now_s() - t0;
        if (st) { printf("%-18s failed: %s\n", bl_sched_policy_name((bl_sched_policy)p), err.message); continue; }
        bl_sched_summary s;
        bl_sched_result_summary(r, &s);
        printf("%-18s %9.2f %12llu %10.2f %10.2f\n", bl_sched_policy_name((bl_sched_policy)p), dt,
               (unsigned long long)s.events, s.mean_service, s.p95_service);
        bl_sched_result_free(r);
    }
    bl_sched_workload_free(w);
    return 0;
}
