/* file.h — reading a whole file into memory, with the errors every caller wants; where this program runs
 * from (for finding the library's helper files). */
#ifndef BL_COMMON_FILE_H
#define BL_COMMON_FILE_H

#include <stddef.h>

#include "bellamy/bellamy.h"

/* Reads path into a new NUL-terminated buffer (*buf, *len without the NUL; free with free()).
 * BL_EIO "PATH: cannot open: REASON" / "PATH: is a folder, not a file" / "PATH: read error: REASON"; BL_EFORMAT when the file is larger than
 * max_bytes ("PATH: larger than N bytes"); BL_ENOMEM. */
bl_status bl_read_file(const char *path, size_t max_bytes, char **buf, size_t *len, bl_error *err);

/* 1 when the running program lives in this library's build tree (a CLI or test run from build/): the
 * library then prefers the helpers built beside it (model-file reader, CUDA module) to installed ones. */
int bl_running_from_build_tree(void);

#endif
