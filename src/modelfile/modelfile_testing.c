/* modelfile_testing.c — test support: crafts foreign, mislabelled, future-version and malformed HDF5
 * files, because the tests may not include hdf5.h. Edits files in place, not atomically; not for use
 * on real model files. */
#include "modelfile/modelfile.h"
#include "modelfile/modelfile_internal.h"
#include "common/error.h"
#include "modelfile/h5.h"

#include <hdf5.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static bl_status set_root_string_locked(const char *path, const char *attr, const char *value, int fixed,
                                        bl_error *err) {
    bl_status st = BL_OK;
    hid_t f = -1, t = -1, sp = -1, a = -1;
    if ((f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT)) < 0)
        return bl_seterr(err, BL_EIO, "%s: cannot open for writing", path);
    if (H5Aexists(f, attr) > 0 && H5Adelete(f, attr) < 0) {
        st = bl_seterr(err, BL_EIO, "%s: cannot delete attribute '%s'", path, attr);
        goto cleanup;
    }
    if (value) {
        t = H5Tcopy(H5T_C_S1);
        if (t < 0 || H5Tset_size(t, fixed ? strlen(value) + 1 : H5T_VARIABLE) < 0 ||
            (sp = H5Screate(H5S_SCALAR)) < 0 || (a = H5Acreate2(f, attr, t, sp, H5P_DEFAULT, H5P_DEFAULT)) < 0 ||
            H5Awrite(a, t, fixed ? (const void *)value : (const void *)&value) < 0) {
            st = bl_seterr(err, BL_EIO, "%s: cannot write attribute '%s'", path, attr);
            goto cleanup;
        }
    }
cleanup:
    if (a >= 0) H5Aclose(a);
    if (sp >= 0) H5Sclose(sp);
    if (t >= 0) H5Tclose(t);
    if (f >= 0 && H5Fclose(f) < 0 && st == BL_OK) st = bl_seterr(err, BL_EIO, "%s: cannot close", path);
    return st;
}

bl_status bl_mf_test_set_root_string(const char *path, const char *attr, const char *value, int fixed,
                                     bl_error *err) {
    BL_CHECK_ARG(path && attr, err, "test_set_root_string: NULL argument");
    bl_mf_lock();
    bl_status st = set_root_string_locked(path, attr, value, fixed, err);
    bl_mf_unlock();
    if (st == BL_OK) st = bl_mf_restamp(path, err); /* an edit, not damage */
    return st;
}

static bl_status write_dataset_locked(const char *path, const char *dset_path, int rank, const size_t *dims,
                                      char kind, bl_error *err) {
    bl_status st = BL_OK;
    hid_t f = -1, lcpl = -1, sp = -1, d = -1;
    void *zeros = NULL;
    f = access(path, F_OK) == 0 ? H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT)
                                : H5Fcreate(path, H5F_ACC_EXCL, H5P_DEFAULT, H5P_DEFAULT);
    if (f < 0) return bl_seterr(err, BL_EIO, "%s: cannot open or create", path);
    hsize_t hd[3];
    size_t n = 1;
    for (int i = 0; i < rank; i++) {
        hd[i] = dims[i];
        n *= dims[i];
    }
    const int f32 = kind == 'f' || kind == 'F';
    hid_t type = f32 ? H5T_IEEE_F32LE : kind == 'i' ? H5T_STD_I32LE : H5T_IEEE_F64LE;
    hid_t mtype = f32 ? H5T_NATIVE_FLOAT : kind == 'i' ? H5T_NATIVE_INT : H5T_NATIVE_DOUBLE;
    if (H5Lexists(f, dset_path, H5P_DEFAULT) > 0) H5Ldelete(f, dset_path, H5P_DEFAULT);
    H5Eclear2(H5E_DEFAULT);
    if ((zeros = calloc(n ? n : 1, 8)) && kind == 'F')
        for (size_t i = 0; i < n; i++) ((float *)zeros)[i] = INFINITY;
    if (!zeros || (lcpl = H5Pcreate(H5P_LINK_CREATE)) < 0 ||
        H5Pset_create_intermediate_group(lcpl, 1) < 0 || (sp = H5Screate_simple(rank, hd, NULL)) < 0 ||
        (d = H5Dcreate2(f, dset_path, type, sp, lcpl, H5P_DEFAULT, H5P_DEFAULT)) < 0 ||
        H5Dwrite(d, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, zeros) < 0)
        st = bl_seterr(err, BL_EIO, "%s: cannot write dataset %s", path, dset_path);
    free(zeros);
    if (d >= 0) H5Dclose(d);
    if (sp >= 0) H5Sclose(sp);
    if (lcpl >= 0) H5Pclose(lcpl);
    if (H5Fclose(f) < 0 && st == BL_OK) st = bl_seterr(err, BL_EIO, "%s: cannot close", path);
    return st;
}

bl_status bl_mf_test_write_dataset(const char *path, const char *dset_path, int rank, const size_t *dims,
                                   char kind, bl_error *err) {
    BL_CHECK_ARG(path && dset_path && dims && rank >= 1 && rank <= 3 && (kind == 'd' || kind == 'f' || kind == 'F' || kind == 'i'),
                 err, "test_write_dataset: bad argument");
    bl_mf_lock();
    bl_status st = write_dataset_locked(path, dset_path, rank, dims, kind, err);
    bl_mf_unlock();
    if (st == BL_OK) st = bl_mf_restamp(path, err); /* an edit, not damage */
    return st;
}

bl_status bl_mf_test_restamp(const char *path, bl_error *err) {
    BL_CHECK_ARG(path, err, "test_restamp: NULL path");
    return bl_mf_restamp(path, err);
}

static bl_status set_attr_locked(const char *path, const char *group, const char *attr, const bl_mfattr *value,
                                 bl_error *err) {
    bl_status st = BL_OK;
    hid_t f = -1, g = -1;
    if ((f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT)) < 0)
        return bl_seterr(err, BL_EIO, "%s: cannot open for writing", path);
    if ((g = H5Gopen2(f, group, H5P_DEFAULT)) < 0) {
        st = bl_seterr(err, BL_EIO, "%s: no group %s", path, group);
        goto cleanup;
    }
    if (H5Aexists(g, attr) > 0 && H5Adelete(g, attr) < 0) {
        st = bl_seterr(err, BL_EIO, "%s: cannot delete attribute '%s'", path, attr);
        goto cleanup;
    }
    if (value) {
        bl_mfattr a = *value;
        a.name = (char *)attr;
        a.group = (char *)"";
        st = bl_mf_h5_write_attr(g, &a, H5P_DEFAULT, path, group, err);
    }
cleanup:
    if (g >= 0) H5Gclose(g);
    if (f >= 0 && H5Fclose(f) < 0 && st == BL_OK) st = bl_seterr(err, BL_EIO, "%s: cannot close", path);
    return st;
}

bl_status bl_mf_test_set_attr(const char *path, const char *group, const char *attr, const bl_mfattr *value,
                              bl_error *err) {
    BL_CHECK_ARG(path && group && attr, err, "test_set_attr: NULL argument");
    bl_mf_lock();
    bl_status st = set_attr_locked(path, group, attr, value, err);
    bl_mf_unlock();
    if (st == BL_OK) st = bl_mf_restamp(path, err); /* an edit, not damage */
    return st;
}
