/* error.c — status strings and the bl_error helpers. */
#include "common/error.h"
#include "bl_config.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *bl_status_string(bl_status status) {
    switch (status) {
#define BL_X_CASE(name, value, msg) case name: return msg;
        BL_STATUS_LIST(BL_X_CASE)
#undef BL_X_CASE
    }
    return "unknown status";
}

const char *bl_version(void) { return BL_VERSION; }

bl_status bl_seterr(bl_error *err, bl_status status, const char *fmt, ...) {
    if (err) {
        err->status = status;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->message, sizeof err->message, fmt, ap);
        va_end(ap);
    }
    return status;
}

void bl_clearerr(bl_error *err) {
    if (err) {
        err->status = BL_OK;
        err->message[0] = '\0';
    }
}

bl_status bl_prefixerr(bl_error *err, const char *fmt, ...) {
    if (!err) return BL_EINTERNAL;
    char prefix[256], old[sizeof err->message];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    memcpy(old, err->message, sizeof old);
    /* Build "prefix: old" piecewise; an over-long result is cut at the buffer's end on purpose. */
    size_t cap = sizeof err->message, n = strlen(prefix);
    if (n > cap - 3) n = cap - 3;
    memcpy(err->message, prefix, n);
    memcpy(err->message + n, ": ", 2);
    size_t room = cap - n - 3, m = strnlen(old, sizeof old);
    if (m > room) m = room;
    memcpy(err->message + n + 2, old, m);
    err->message[n + 2 + m] = '\0';
    return err->status;
}
