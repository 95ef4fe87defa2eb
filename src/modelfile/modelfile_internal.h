/* modelfile_internal.h — helpers shared by the files of src/modelfile only (no HDF5 types here). */
#ifndef BL_MODELFILE_INTERNAL_H
#define BL_MODELFILE_INTERNAL_H

#include "modelfile/modelfile.h"

/* 1 when s is a valid model, block or attribute name (see bl_modelrec_new). */
int bl_mf_valid_name(const char *s);
/* 1 when g is "" or a valid attribute group path (see bl_modelrec_add_string). */
int bl_mf_valid_group(const char *g);
/* "string", "int64", ... for messages. */
const char *bl_mf_type_name(bl_mfattr_type t);
/* Frees what an attribute owns (group, name, value) and zeroes it. */
void bl_mf_attr_clear(bl_mfattr *a);

/* The module's one lock around every HDF5 call, and HDF5's error printing switched off while held
 * (the previous handler is restored on unlock). */
void bl_mf_lock(void);
void bl_mf_unlock(void);

/* Recomputes the checksum header of a model file changed in place (files without one are left
 * alone). Test support only: real saves write a whole new file. */
bl_status bl_mf_restamp(const char *path, bl_error *err);

#endif
