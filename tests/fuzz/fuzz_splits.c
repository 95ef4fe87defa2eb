/* fuzz_splits.c — libFuzzer target for bellamy-eval's split files (format in bench/README.md):
 * arbitrary bytes read as a split file against a small synthetic data set (bl_eval_read_splits_mem),
 * then the fit groups it forms checked for consistency. The only acceptable outcomes are BL_OK or an
 * error naming the file. Not here: fitting the splits (bl_eval_fit trains models). */
#include "eval/eval.h"
#include "data/synth.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bl_eval g_ev;
static int g_ready;

/* One algorithm, "synth": the synthetic corpus (4 contexts, 6 scale-outs, 3 repetitions) written to a
 * temporary folder and loaded as bellamy-eval would. */
int LLVMFuzzerInitialize(int *argc, char ***argv) {
    char dir[] = "/tmp/fuzz_splits-XXXXXX";
    if (!mkdtemp(dir)) return 0;
    bl_synth_config c;
    bl_synth_config_default(&c);
    c.n_contexts = 4;
    bl_synth_corpus *corp;
    bl_error e;
    if (bl_synth_generate(&c, &corp, &e) != BL_OK) return 0;
    if (bl_synth_write(corp, dir, "synth", &e) != BL_OK) return 0;
    bl_synth_free(corp);
    char data[64], schema[64];
    snprintf(data, sizeof data, "%s/synth.tsv", dir);
    snprintf(schema, sizeof schema, "%s/synth.schema", dir);
    bl_eval_opts o;
    bl_eval_opts_default(&o);
    if (bl_eval_init(&g_ev, &o, &e) != BL_OK || bl_eval_add_algo(&g_ev, "synth", data, schema, NULL, NULL, &e) != BL_OK)
        return 0;
    unlink(data);
    unlink(schema);
    rmdir(dir);
    g_ready = 1;
    return 0;
}

/* Forgets the splits of the last input (the data set stays). */
static void clear_splits(bl_eval *ev) {
    for (size_t i = 0; i < ev->n_splits; i++) free(ev->splits[i].id);
    ev->n_splits = 0;
    free(ev->group_first);
    free(ev->group_split);
    ev->group_first = ev->group_split = NULL;
    ev->n_groups = 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!g_ready) __builtin_trap();
    bl_error e = {BL_OK, ""};
    if (bl_eval_read_splits_mem(&g_ev, "fuzz.splits", (const char *)data, size, &e) != BL_OK) {
        if (!e.message[0] || !strstr(e.message, "fuzz.splits")) __builtin_trap();
    } else {
        /* every split in exactly one group, groups in order, rows inside the data set */
        size_t seen = 0;
        for (size_t g = 0; g < g_ev.n_groups; g++) {
            if (g_ev.group_first[g] >= g_ev.group_first[g + 1]) __builtin_trap();
            seen += g_ev.group_first[g + 1] - g_ev.group_first[g];
        }
        if (seen != g_ev.n_splits || g_ev.group_first[g_ev.n_groups] != g_ev.n_splits) __builtin_trap();
        const bl_dataset *ds = g_ev.algos[0].ds;
        for (size_t i = 0; i < g_ev.n_splits; i++) {
            const bl_eval_split *s = &g_ev.splits[i];
            if (s->n < 1 || s->n > BL_EVAL_MAX_N || s->test >= ds->n_rows || s->group >= g_ev.n_groups) __builtin_trap();
            for (int j = 0; j < s->n; j++)
                if (s->train[j] >= ds->n_rows || s->train[j] == s->test) __builtin_trap();
        }
    }
    clear_splits(&g_ev);
    return 0;
}
