/* file.h — reading a whole file into memory, and the one policy by which every writer of the project
 * (model files, workloads, split data files, the synthetic corpus, the evaluation's reports) replaces
 * a file; where this program runs from (for finding the library's helper files).
 *
 * Replacing a file: whole or not at all.
 *  - The target is path, or the file a chain of symbolic links at path names (the links stay links).
 *    It must be a regular file or not exist yet: a folder, a device, a pipe or a socket is refused.
 *  - The new bytes go to a temporary ".NAME.tmp-PID-XXXXXX" in the target's folder (so the rename is
 *    atomic: one file system), created private (0600) over an existing file and with the usual mode
 *    (0666 less the umask) for a new one. PID names the writer, so that a later save can remove the
 *    temporaries of writers that were killed (bl_file_out_leftovers).
 *  - At commit: the bytes are written with SIGXFSZ blocked in the calling thread (a file-size limit is
 *    then the error EFBIG, not a killed process), the temporary takes the existing file's mode, is
 *    fsync'ed and closed, renamed over the target, and the folder is fsync'ed.
 *  - On any failure, and on abort, the temporary is removed and the target is as it was.
 * Not here: locking against other processes (two replacing one file at once: the last rename wins),
 * keeping the owner or group of a replaced file (it belongs to whoever replaced it).
 */
#ifndef BL_COMMON_FILE_H
#define BL_COMMON_FILE_H

#include <stddef.h>
#include <stdio.h>

#include "bellamy/bellamy.h"

/* Reads path into a new NUL-terminated buffer (*buf, *len without the NUL; free with free()).
 * BL_EIO "PATH: cannot open: REASON" / "PATH: is a folder, not a file" / "PATH: read error: REASON";
 * BL_EFORMAT when the file is larger than max_bytes ("PATH: larger than N bytes"); BL_ENOMEM. */
bl_status bl_read_file(const char *path, size_t max_bytes, char **buf, size_t *len, bl_error *err);

/* Opens path for reading ("rb") without ever blocking in the open: a FIFO nobody writes to is opened
 * and reads as empty instead of hanging the program. NULL with err set: BL_EIO "PATH: cannot open:
 * REASON", "PATH: is a folder, not a file", and with regular_only "PATH: not a regular file (a pipe,
 * device or socket)". Every reader of users' files opens them through it. */
FILE *bl_file_open_read(const char *path, int regular_only, bl_error *err);

/* 1 when the running program lives in this library's build tree (a CLI or test run from build/): the
 * library then prefers the helpers built beside it (model-file reader, CUDA module) to installed ones. */
int bl_running_from_build_tree(void);

/* A file being replaced: the checked target and its open temporary. */
typedef struct bl_file_out bl_file_out;

/* Checks the target of path, removes the temporaries its killed saves left (bl_file_out_leftovers)
 * and creates its own, ".BASE.tmp-PID-XXXXXX" in the target's folder. BL_EIO naming path: "is a folder, not a file",
 * "not a regular file", a link chain that loops, "cannot create a temporary file in folder 'DIR'"
 * (a missing or read-only folder); BL_ENOMEM. */
bl_status bl_file_out_open(const char *path, bl_file_out **out, bl_error *err);

/* Appends bytes. Writes are buffered: an error may also show only at commit. BL_EIO, BL_ENOMEM. */
bl_status bl_file_out_write(bl_file_out *o, const void *data, size_t n, bl_error *err);
/* Appends printf-style text. */
bl_status bl_file_out_printf(bl_file_out *o, bl_error *err, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* A stdio stream for writers built on fprintf: what it receives follows the bytes written so far and
 * goes to the file at commit (it is held in memory until then; the stream is closed by commit or
 * abort, never by the caller). NULL with err set when out of memory. Writes through
 * bl_file_out_write after this go to the stream too. */
FILE *bl_file_out_stream(bl_file_out *o, bl_error *err);

/* Stages of a commit at which a hook is called (test support: failure and crash injection). */
typedef enum bl_file_stage {
    BL_FILE_WRITTEN = 1, /* every byte is in the temporary, not yet fsync'ed */
    BL_FILE_SYNCED  = 2  /* fsync'ed and closed, about to be renamed over the target */
} bl_file_stage;
/* A hook that returns nonzero fails the commit there (BL_EIO "PATH: injected failure ..."). */
typedef int (*bl_file_hook)(bl_file_stage stage, void *ctx);
void bl_file_out_set_hook(bl_file_out *o, bl_file_hook hook, void *ctx);

/* The temporary's path (for messages and tests); valid until commit or abort. */
const char *bl_file_out_temp(const bl_file_out *o);

/* Writes what is buffered, gives the temporary the existing file's mode, fsyncs, closes and renames it
 * over the target, then fsyncs the folder (a folder that cannot be synced, EINVAL or ENOTSUP, is
 * fine). Frees o, on failure too (the temporary is then removed). BL_EIO naming path and the step:
 * "cannot write temporary file 'TMP': REASON", "cannot sync ...", "cannot close ...",
 * "cannot replace with 'TMP': REASON", or (the file replaced) "saved, but syncing folder 'DIR' failed". */
bl_status bl_file_out_commit(bl_file_out *o, bl_error *err);

/* Removes the temporary and frees o; the target is untouched. NULL is allowed. */
void bl_file_out_abort(bl_file_out *o);

/* Temporaries of saves of path that never finished (a writer killed by SIGKILL or a power cut leaves
 * ".BASE.tmp-PID-XXXXXX" behind): with remove_stale, those whose writer process is gone are removed
 * (bl_file_out_open does so before each save). Returns how many are left, and lists them with why
 * into list (cap bytes, may be NULL): a running writer's, or an older libbellamy's (no PID in the
 * name, so never removed). */
size_t bl_file_out_leftovers(const char *path, int remove_stale, char *list, size_t cap);

/* The whole policy in one call: path replaced by data[0..n). */
bl_status bl_file_replace(const char *path, const void *data, size_t n, bl_error *err);

#endif
