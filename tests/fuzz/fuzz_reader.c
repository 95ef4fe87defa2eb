/* fuzz_reader.c — libFuzzer target for the delimited-file reader and the data-set loader.
 * The input is read as a TSV and as a CSV (quoted fields included) through a fixed schema that
 * exercises every property source (column, join, template, const, per_machine), failing at the first
 * invalid row and skipping them; the only acceptable outcomes are BL_OK or a clean error. Not here: schema-text fuzzing (fuzz_schema.c). */
#include "data/dataset.h"
#include "data/reader.h"
#include "data/schema.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char schema_text[] =
    "bellamy-schema 1\n"
    "scale_out x\n"
    "runtime t ms\n"
    "property machine_type essential text column m\n"
    "property job_args essential text template \"<a> 0.1 <m>\"\n"
    "property data_size_MB essential number column n\n"
    "property data_characteristics essential text join a m\n"
    "property environment essential text const \"fuzz env\"\n"
    "property memory optional number per_machine 3\n"
    "property slots optional number column s\n"
    "cluster_totals s\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    bl_schema *sc = NULL;
    if (bl_schema_parse("fuzz.schema", schema_text, sizeof schema_text - 1, &sc, NULL) != BL_OK) return 0;
    static const char delims[2] = { '\t', ',' };
    for (int d = 0; d < 2; d++) {
        /* Raw reader: walk every row. */
        bl_reader *r;
        if (bl_reader_open_mem(&r, "fuzz.tsv", data, size, delims[d], NULL) == BL_OK) {
            char **f;
            while (bl_reader_next(r, &f, NULL) == BL_OK && f) {
                for (size_t j = 0; j < bl_reader_ncols(r); j++) (void)strlen(f[j]);
                (void)bl_reader_field_col(r, bl_reader_ncols(r) - 1);
                (void)bl_reader_field_line(r, bl_reader_ncols(r) - 1);
                char where[256];
                (void)bl_reader_where(r, bl_reader_ncols(r) - 1, where, sizeof where);
            }
            bl_reader_free(r);
        }
        /* Full loader, failing at the first invalid row and skipping them, and a subset of what it returns. */
        for (int skip = 0; skip < 2; skip++) {
            bl_dataset *ds;
            bl_error err;
            if (bl_dataset_load_mem_skip("fuzz.tsv", data, size, delims[d], sc, NULL, skip, &ds, &err) == BL_OK) {
                size_t rows[2] = { 0, ds->n_rows - 1 };
                bl_dataset *sub;
                if (bl_dataset_subset(ds, rows, 2, &sub, NULL) == BL_OK) bl_dataset_free(sub);
                bl_dataset_free(ds);
            } else if (err.message[0] == '\0') {
                __builtin_trap();   /* every failure must explain itself */
            }
        }
    }
    bl_schema_free(sc);
    return 0;
}
