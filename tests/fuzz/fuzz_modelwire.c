/* fuzz_modelwire.c — libFuzzer target for what the library does with the model-file reader's answer:
 * the answer checked field by field (bl_mf_wire_get_answer, as asked for a list, one model and every
 * model), each record made a model (bl_model_from_record: shapes, enums, bounds, member counts) and
 * every model that loads asked for a prediction. This is all a host runs on a file's behalf once HDF5
 * is in another process, so it must never crash, leak or misbehave, whatever the reader says.
 * Not here: the reader's HDF5 parse (fuzz_modelfile.c runs the whole path through the reader). */
#include "model/model.h"
#include "modelfile/modelfile.h"
#include "modelfile/modelfile_internal.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A prediction from a model that loaded: every property given (numbers 7, texts "m1"). */
static void predict(const bl_model *m) {
    const char *values[2 * BL_BNET_PROPS_MAX];
    if (m->n_props > sizeof values / sizeof values[0]) __builtin_trap();
    for (size_t i = 0; i < m->n_props; i++) values[i] = m->props[i].kind == BL_PROP_NUMBER ? "7" : "m1";
    double ctx[BL_BNET_DIM_MAX], x[3] = {1, 4, 1e6}, out[3];
    if (bl_model_ctx_len(m) > BL_BNET_DIM_MAX) __builtin_trap(); /* the loader bounds members × z_hidden */
    bl_error e = {BL_OK, ""};
    if (bl_model_context(m, values, ctx, &e) == BL_OK) bl_model_predict(m, ctx, x, 3, out, &e);
    else if (!e.message[0]) __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static const bl_mf_op ops[3] = {BL_MF_OP_LIST, BL_MF_OP_LOAD, BL_MF_OP_ALL};
    for (int k = 0; k < 3; k++) {
        bl_mf_result r;
        bl_error e = {BL_OK, ""};
        if (bl_mf_wire_get_answer(data, size, ops[k], NULL, "fuzz.h5", &r, &e) != BL_OK) {
            if (!e.message[0] || !strstr(e.message, "fuzz.h5")) __builtin_trap(); /* every failure names the file */
            continue;
        }
        for (size_t i = 0; i < r.n_recs; i++) {
            bl_model *m = NULL;
            bl_error me = {BL_OK, ""};
            if (bl_model_from_record(r.recs[i], &m, &me) == BL_OK) predict(m);
            else if (!me.message[0]) __builtin_trap();
            bl_model_free(m);
        }
        bl_mf_result_clear(&r);
    }
    return 0;
}
