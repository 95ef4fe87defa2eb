/* str.h — the project's one copy of a C string (strdup is POSIX, not C11, and each module had its own).
 * Not here: formatting, growable buffers. */
#ifndef BL_COMMON_STR_H
#define BL_COMMON_STR_H

#include <stddef.h>

/* A malloc'd copy of s (free with free()); NULL when out of memory or when s is NULL. */
char *bl_strdup(const char *s);

/* A malloc'd copy of the first n bytes of s (fewer when s ends sooner), NUL-terminated; NULL when out
 * of memory or when s is NULL. */
char *bl_strndup(const char *s, size_t n);

#endif /* BL_COMMON_STR_H */
