/* fuzz_train.h — the training fuzz target's work, callable from a test as well as from libFuzzer
 * (test_stress.c runs the seed corpus through it).
 *
 * Input: schema text, then a line holding only "---", then a data file (header + rows):
 *     <schema bytes>\n---\n<data bytes>
 * split at the first such line; without one the whole input is schema text. The data's delimiter is
 * a tab when its header line holds one, else a comma. Inputs over BL_FUZZ_TRAIN_MAX_INPUT bytes are
 * ignored and at most BL_FUZZ_TRAIN_MAX_ROWS rows are trained on, so every input takes milliseconds.
 */
#ifndef BL_TESTS_FUZZ_TRAIN_H
#define BL_TESTS_FUZZ_TRAIN_H

#include <stddef.h>
#include <stdint.h>

#define BL_FUZZ_TRAIN_SEPARATOR "\n---\n"
#define BL_FUZZ_TRAIN_MAX_INPUT 4096
#define BL_FUZZ_TRAIN_MAX_ROWS 48

/* Parses, loads and, when both succeed, pre-trains one network (1–2 trials, ≤ 3 epochs, batch 8),
 * fine-tunes it on up to 3 rows and predicts. Returns 1 when it trained, 0 when the input was refused
 * (cleanly: a failure without a message traps). */
int bl_fuzz_train_one(const uint8_t *data, size_t size);

#endif
