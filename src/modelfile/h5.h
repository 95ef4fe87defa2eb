/* h5.h — the HDF5 helpers the writing (write.c) and the reading (read.c) of model files share (h5.c).
 * Internal to src/modelfile/, the only part of the project that includes hdf5.h. Every call below runs
 * under bl_mf_lock. */
#ifndef BL_MODELFILE_H5_H
#define BL_MODELFILE_H5_H

#include "modelfile/modelfile.h"
#include "modelfile/modelfile_internal.h"

#include <hdf5.h>

#define H5CLOSE(id, fn)        \
    do {                       \
        if ((id) >= 0) fn(id); \
        (id) = -1;             \
    } while (0)

/* The bounds of a parse of a file image (bl_mf_parse_image). A file this size cannot hold more than
 * this many bytes of values, links or attributes: whatever HDF5 reports beyond that (a dataset without
 * storage, a count from a damaged header) is refused before it is allocated. 0: no bound (the library
 * reading back an image it made itself). */
extern size_t bl_mf_image_cap;

/* The innermost message on HDF5's error stack into buf ("" when empty); clears the stack. */
const char *bl_mf_h5_inner(char *buf, size_t size);
/* Sets err to "<file>: <message> (HDF5: <innermost HDF5 error>)"; the HDF5 part only when there is one. */
bl_status bl_mf_h5fail(bl_error *err, bl_status st, const char *file, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* A growable list of names; oom is set when an append failed. */
typedef struct bl_mf_names {
    char **names;
    size_t n, cap;
    int oom;
} bl_mf_names;

void bl_mf_names_clear(bl_mf_names *l);
/* Appends a copy of s; 1 when out of memory. */
int bl_mf_names_push(bl_mf_names *l, const char *s);
/* Names of a group's links (attrs == 0) or an object's attributes (attrs == 1) in creation order,
 * falling back to name order for files written without creation-order tracking (e.g. by h5py);
 * 0, or -1 (out->oom says whether for want of memory). Bounded by bl_mf_image_cap. */
int bl_mf_h5_names(hid_t loc, int attrs, bl_mf_names *out);
/* "'a', 'b', 'c'" (or "none") into buf, for "models present" messages. */
void bl_mf_join_names(const bl_mf_names *l, char *buf, size_t size);

/* Writes one attribute of a record onto loc (acpl: UTF-8 names); where names loc in messages. */
bl_status bl_mf_h5_write_attr(hid_t loc, const bl_mfattr *a, hid_t acpl, const char *file, const char *where,
                              bl_error *err);
/* Reads attribute aname of loc into out (type, count, value; not group or name): scalar or 1-D, of
 * integer, float or string type (variable- or fixed-length). Bounded by bl_mf_image_cap. */
bl_status bl_mf_h5_read_attr(hid_t loc, const char *aname, bl_mfattr *out, const char *file, const char *where,
                             bl_error *err);

/* Checks the root attributes (format name, a supported major version) and that /models exists. */
bl_status bl_mf_h5_check_root(hid_t fid, const char *path, bl_error *err);

#endif /* BL_MODELFILE_H5_H */
