/* utf8.h — UTF-8 checks for every text that crosses a boundary: data fields, schema values, model,
 * block and attribute names, messages that go into files or JSON.
 * Not here: decoding to code points, normalisation, case folding. */
#ifndef BL_COMMON_UTF8_H
#define BL_COMMON_UTF8_H

#include <stddef.h>

/* Checks that s[0..n) is UTF-8 without NUL; on failure returns 0 and *bad (may be NULL) = offset of
 * the first offending byte. Rejects overlong forms, surrogates and code points above U+10FFFF. */
int bl_utf8_valid(const char *s, size_t n, size_t *bad);

/* Number of characters (UTF-8 code points) in s[0..n), for editor columns. */
size_t bl_utf8_chars(const char *s, size_t n);

/* Replaces every byte that keeps s[0..n) from being valid UTF-8 by '?', so that text of unknown
 * origin (an HDF5 message, a file name) can go into a message, a file or JSON. */
void bl_utf8_sanitize(char *s, size_t n);
/* s as text a message can quote (a field of a file, an argument): valid UTF-8 is kept, every byte that is
 * not (invalid UTF-8) and every control character is written \xHH, and a backslash \\, so that a stray
 * byte shows as what it is and no escape sequence reaches a terminal. At most cap - 1 bytes go to out
 * (cap >= 4), cut between characters with "..." when the whole does not fit; 4 * strlen(s) + 1 always
 * fits. Returns out. */
const char *bl_utf8_escape(char *out, size_t cap, const char *s);

#endif /* BL_COMMON_UTF8_H */
