/* fuzz_schema.c — libFuzzer target for the schema parser: arbitrary bytes as schema text, then (when
 * it parses) a small fixed data file loaded through it, so column resolution runs too.
 * Not here: data-file fuzzing (fuzz_reader.c). */
#include "data/dataset.h"
#include "data/schema.h"

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char tsv[] =
    "x\tt\tm\tn\ta\ts\n"
    "2\t100\tc4.large\t10\tfoo\t8\n"
    "4\t60\tc4.large\t10\tfoo\t16\n"
    "2\t90\tr4.large\t20\tbar\t8\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    bl_schema *sc;
    bl_error err;
    if (bl_schema_parse("fuzz.schema", (const char *)data, size, &sc, &err) != BL_OK) {
        if (err.message[0] == '\0') __builtin_trap();
        return 0;
    }
    bl_dataset *ds;
    if (bl_dataset_load_mem("fuzz.tsv", tsv, sizeof tsv - 1, '\t', sc, NULL, &ds, &err) == BL_OK)
        bl_dataset_free(ds);
    else if (err.message[0] == '\0')
        __builtin_trap();
    bl_schema_free(sc);
    return 0;
}
