/* str.c — string copies. */
#include "common/str.h"

#include <stdlib.h>
#include <string.h>

char *bl_strdup(const char *s) {
    return s ? bl_strndup(s, strlen(s)) : NULL;
}

char *bl_strndup(const char *s, size_t n) {
    if (!s) return NULL;
    const size_t len = strnlen(s, n);
    char *d = malloc(len + 1);
    if (!d) return NULL;
    memcpy(d, s, len);
    d[len] = '\0';
    return d;
}
