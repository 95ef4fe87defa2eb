/* suggest.h — "did you mean" for a word that names nothing known (an option, a command, a column, a
 * property), the way git suggests commands: the known names closest to it by edit distance, or
 * sharing a word of it ("node_type" → "node_flavor"), or starting with it.
 * Not here: deciding that a word is unknown (the callers do) or printing. */
#ifndef BL_COMMON_SUGGEST_H
#define BL_COMMON_SUGGEST_H

#include <stddef.h>

/* Optimal-string-alignment distance between a and b (insertions, deletions, substitutions and swaps
 * of neighbours cost 1 each; ASCII letters compare without case). Names longer than 255 bytes are
 * compared by their first 255. */
size_t bl_edit_distance(const char *a, const char *b);

/* The candidates close to word, for a message: writes "; did you mean 'x'?" or "; did you mean 'x' or
 * 'y'?" (the closest, at most three) into buf (cap bytes, always NUL-terminated), or "" when no
 * candidate is close; returns buf. NULL candidates are skipped; prefix is written before each name
 * ("--" for options). */
const char *bl_suggest(const char *word, const char *const *cands, size_t n, const char *prefix, char *buf,
                       size_t cap);

#endif
