/* fuzz_workload.c — libFuzzer target for the scheduler's workload files (TSV, format in
 * bellamy/sched.h): arbitrary bytes through bl_sched_workload_parse, and every job of a workload that
 * parses read back. The only acceptable outcomes are BL_OK or an error with a message.
 * Not here: simulating the workload (its length depends on the jobs, not on parsing). */
#include "bellamy/sched.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    bl_sched_workload *w = NULL;
    bl_error e = {BL_OK, ""};
    if (bl_sched_workload_parse((const char *)data, size, "fuzz.tsv", &w, &e) != BL_OK) {
        if (!e.message[0]) __builtin_trap();
        return 0;
    }
    size_t n = bl_sched_workload_njobs(w);
    for (size_t i = 0; i < n; i++) {
        bl_sched_job_info j;
        /* what the parser accepted is what the format allows */
        if (bl_sched_workload_job(w, i, &j) != BL_OK || !j.kind || !(j.arrival >= 0 && j.arrival <= 1e12) ||
            !(j.iterations >= 1 && j.iterations <= 1e15) || !(isfinite(j.s_per_iter[0]) && j.s_per_iter[0] > 0) ||
            !(isfinite(j.s_per_iter[1]) && j.s_per_iter[1] > 0) || !(j.use_pct[0] >= 0 && j.use_pct[0] <= 100) ||
            !(j.use_pct[1] >= 0 && j.use_pct[1] <= 100))
            __builtin_trap();
    }
    bl_sched_job_info j;
    if (bl_sched_workload_job(w, n, &j) == BL_OK) __builtin_trap(); /* past the end is an error */
    bl_sched_workload_free(w);
    return 0;
}
