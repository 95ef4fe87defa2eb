/* bellamy.h — the public face of libbellamy: runtime prediction for distributed dataflow jobs.
 *
 * Every function returns a bl_status; BL_OK is 0. Functions that can fail take an optional
 * bl_error* (may be NULL) that receives a one-line, human-readable message naming what is wrong.
 * The library never prints, never exits and never aborts on bad input.
 * Opaque handles come in open/free pairs; every *_free accepts NULL.
 */
#ifndef BELLAMY_BELLAMY_H
#define BELLAMY_BELLAMY_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#  define BL_API __declspec(dllexport)
#elif defined(__GNUC__)
#  define BL_API __attribute__((visibility("default")))
#else
#  define BL_API
#endif

/* Status codes: X(name, value, message). One list drives the enum and bl_status_string(). */
#define BL_STATUS_LIST(X)                                                     \
    X(BL_OK,           0, "success")                                          \
    X(BL_EINVAL,      -1, "invalid argument")                                 \
    X(BL_ENOMEM,      -2, "out of memory")                                    \
    X(BL_EIO,         -3, "input/output error")                               \
    X(BL_EFORMAT,     -4, "malformed input")                                  \
    X(BL_EVERSION,    -5, "unsupported format version")                       \
    X(BL_ENOTFOUND,   -6, "not found")                                        \
    X(BL_EUNSUPPORTED,-7, "not supported in this build or on this machine")   \
    X(BL_ERANGE,      -8, "value out of range")                               \
    X(BL_EINTERNAL,   -9, "internal error")

typedef enum bl_status {
#define BL_X_ENUM(name, value, msg) name = value,
    BL_STATUS_LIST(BL_X_ENUM)
#undef BL_X_ENUM
} bl_status;

/* Detailed error: the status and a message such as "runs.tsv:14: column 'gross_runtime': not a number". */
typedef struct bl_error {
    bl_status status;
    char      message[512];
} bl_error;

/* Static string for a status code ("invalid argument"); never NULL. */
BL_API const char *bl_status_string(bl_status status);

/* Library version as "MAJOR.MINOR.PATCH". */
BL_API const char *bl_version(void);

#ifdef __cplusplus
}
#endif
#endif /* BELLAMY_BELLAMY_H */
