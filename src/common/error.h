/* error.h — internal helpers to fill a bl_error and return its status.
 * Library code reports problems only through these; it never prints. */
#ifndef BL_COMMON_ERROR_H
#define BL_COMMON_ERROR_H

#include "bellamy/bellamy.h"
#include <stddef.h>
#include <stdint.h>

/* Sets err->status and a printf-style message (err may be NULL); returns status. */
bl_status bl_seterr(bl_error *err, bl_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Clears err to BL_OK with an empty message (err may be NULL). */
void bl_clearerr(bl_error *err);

/* Prepends "prefix: " to an existing message (e.g. a file name); returns err->status. */
bl_status bl_prefixerr(bl_error *err, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Overflow-checked size arithmetic: returns 0 and stores the result, or 1 on overflow. */
static inline int bl_mul_size(size_t a, size_t b, size_t *out) {
    if (a != 0 && b > SIZE_MAX / a) return 1;
    *out = a * b;
    return 0;
}
static inline int bl_add_size(size_t a, size_t b, size_t *out) {
    if (b > SIZE_MAX - a) return 1;
    *out = a + b;
    return 0;
}

/* Return early with an error when a boundary condition fails. */
#define BL_CHECK_ARG(cond, err, ...)                                          \
    do {                                                                      \
        if (!(cond)) return bl_seterr((err), BL_EINVAL, __VA_ARGS__);         \
    } while (0)

#endif
