/* h5.c — what the writing and the reading of model files share in HDF5: the one lock around every HDF5
 * call (Debian's libhdf5 is not thread-safe) with HDF5's own error printing off, the innermost HDF5
 * message copied into a bl_error, name lists of groups and attributes, typed attributes, and the check
 * of a file's root attributes. Not here: the layout of a model (write.c, read.c), the checksum header
 * (checksum.c). */
#include "modelfile/h5.h"
#include "common/error.h"
#include "bl_config.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- lock, error capture --------------------------------------------------------------------- */

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static H5E_auto2_t g_old_efunc;
static void *g_old_edata;

void bl_mf_lock(void) {
    pthread_mutex_lock(&g_lock);
    /* Library code never prints: silence HDF5's automatic error report, restore it on unlock so that
     * an application using HDF5 itself keeps its own setting. */
    if (H5Eget_auto2(H5E_DEFAULT, &g_old_efunc, &g_old_edata) < 0) {
        g_old_efunc = NULL;
        g_old_edata = NULL;
    }
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}

void bl_mf_unlock(void) {
    H5Eclear2(H5E_DEFAULT);
    H5Eset_auto2(H5E_DEFAULT, g_old_efunc, g_old_edata);
    pthread_mutex_unlock(&g_lock);
}

typedef struct { char *buf; size_t size; } ewalk_ctx;

/* H5E_WALK_UPWARD starts at the innermost (most specific) error: keep record 0 only. */
static herr_t ewalk_cb(unsigned n, const H5E_error2_t *e, void *vctx) {
    ewalk_ctx *c = vctx;
    if (n == 0 && e && e->desc) snprintf(c->buf, c->size, "%s", e->desc);
    return 0;
}

/* The innermost message on HDF5's error stack ("" when empty); clears the stack. */
const char *bl_mf_h5_inner(char *buf, size_t size) {
    buf[0] = '\0';
    ewalk_ctx c = {buf, size};
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, ewalk_cb, &c);
    H5Eclear2(H5E_DEFAULT);
    return buf;
}

/* Sets err to "<file>: <message> (HDF5: <innermost HDF5 error>)"; the HDF5 part only when there is one. */
bl_status bl_mf_h5fail(bl_error *err, bl_status st, const char *file, const char *fmt, ...) {
    char msg[384], inner[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    bl_mf_h5_inner(inner, sizeof inner);
    if (inner[0]) return bl_seterr(err, st, "%s: %s (HDF5: %s)", file, msg, inner);
    return bl_seterr(err, st, "%s: %s", file, msg);
}

size_t bl_mf_image_cap;

/* ---- name lists ------------------------------------------------------------------------------- */

void bl_mf_names_clear(bl_mf_names *l) {
    for (size_t i = 0; i < l->n; i++) free(l->names[i]);
    free(l->names);
    memset(l, 0, sizeof *l);
}

int bl_mf_names_push(bl_mf_names *l, const char *s) {
    if (l->n == l->cap) {
        size_t nc = l->cap ? l->cap * 2 : 8;
        char **p = realloc(l->names, nc * sizeof *p);
        if (!p) return 1;
        l->names = p;
        l->cap = nc;
    }
    size_t len = strlen(s) + 1;
    if (!(l->names[l->n] = malloc(len))) return 1;
    memcpy(l->names[l->n++], s, len);
    return 0;
}

static herr_t link_name_cb(hid_t g, const char *name, const H5L_info_t *info, void *vctx) {
    bl_mf_names *l = vctx;
    if (bl_mf_image_cap && l->n >= bl_mf_image_cap / 8) return -1; /* more links than the file has room for */
    if (bl_mf_names_push(l, name)) {
        l->oom = 1;
        return -1;
    }
    return 0;
}

static herr_t attr_name_cb(hid_t loc, const char *name, const H5A_info_t *info, void *vctx) {
    bl_mf_names *l = vctx;
    if (bl_mf_image_cap && l->n >= bl_mf_image_cap / 8) return -1;
    if (bl_mf_names_push(l, name)) {
        l->oom = 1;
        return -1;
    }
    return 0;
}

/* Names of a group's links (attrs == 0) or an object's attributes (attrs == 1) in creation order,
 * falling back to name order for files written without creation-order tracking (e.g. by h5py). */
int bl_mf_h5_names(hid_t loc, int attrs, bl_mf_names *out) {
    H5_index_t idx[2] = {H5_INDEX_CRT_ORDER, H5_INDEX_NAME};
    for (int k = 0; k < 2; k++) {
        bl_mf_names_clear(out);
        hsize_t pos = 0;
        herr_t r = attrs ? H5Aiterate2(loc, idx[k], H5_ITER_INC, &pos, attr_name_cb, out)
                         : H5Literate(loc, idx[k], H5_ITER_INC, &pos, link_name_cb, out);
        if (out->oom) break;
        if (r >= 0) {
            H5Eclear2(H5E_DEFAULT);
            return 0;
        }
    }
    bl_mf_names_clear(out);
    return -1;
}

/* "a, b, c" (or "none") into buf, for "models present" messages. */
void bl_mf_join_names(const bl_mf_names *l, char *buf, size_t size) {
    buf[0] = '\0';
    if (l->n == 0) {
        snprintf(buf, size, "none");
        return;
    }
    size_t used = 0;
    for (size_t i = 0; i < l->n && used < size; i++) {
        int w = snprintf(buf + used, size - used, "%s'%s'", i ? ", " : "", l->names[i]);
        if (w < 0) break;
        used += (size_t)w;
    }
}

/* ---- attributes -------------------------------------------------------------------------------- */

/* Variable-length string type with the given character set (caller closes). */
static hid_t vstr_type(H5T_cset_t cset) {
    hid_t t = H5Tcopy(H5T_C_S1);
    if (t < 0) return -1;
    if (H5Tset_size(t, H5T_VARIABLE) < 0 || H5Tset_cset(t, cset) < 0) {
        H5Tclose(t);
        return -1;
    }
    return t;
}

/* Writes one attribute of the record onto loc. Scalars get a scalar dataspace, arrays a 1-D one
 * (possibly of length 0), so readers can tell "x" from ["x"]. */
bl_status bl_mf_h5_write_attr(hid_t loc, const bl_mfattr *a, hid_t acpl, const char *file, const char *where,
                              bl_error *err) {
    bl_status st = BL_OK;
    hid_t space = -1, vstr = -1, attr = -1;
    hid_t ftype, mtype;
    const void *buf;
    double dummy = 0.0; /* HDF5 wants a non-NULL buffer even for 0 elements */
    int scalar = 0;
    switch (a->type) {
    case BL_MFATTR_STRING: scalar = 1; buf = &a->v.s; break;
    case BL_MFATTR_INT64: scalar = 1; buf = &a->v.i; break;
    case BL_MFATTR_DOUBLE: scalar = 1; buf = &a->v.d; break;
    case BL_MFATTR_DOUBLES: buf = a->count ? (const void *)a->v.dv : &dummy; break;
    case BL_MFATTR_INT64S: buf = a->count ? (const void *)a->v.iv : &dummy; break;
    case BL_MFATTR_STRINGS: buf = a->count ? (const void *)a->v.sv : &dummy; break;
    default: return bl_seterr(err, BL_EINVAL, "%s: attribute '%s%s': bad type %d", file, where, a->name, (int)a->type);
    }
    switch (a->type) {
    case BL_MFATTR_INT64:
    case BL_MFATTR_INT64S: ftype = H5T_STD_I64LE; mtype = H5T_NATIVE_INT64; break;
    case BL_MFATTR_DOUBLE:
    case BL_MFATTR_DOUBLES: ftype = H5T_IEEE_F64LE; mtype = H5T_NATIVE_DOUBLE; break;
    default:
        if ((vstr = vstr_type(H5T_CSET_UTF8)) < 0) {
            st = bl_mf_h5fail(err, BL_EINTERNAL, file, "cannot make a string type");
            goto cleanup;
        }
        ftype = mtype = vstr;
        break;
    }
    hsize_t n = (hsize_t)a->count;
    space = scalar ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &n, NULL);
    if (space < 0) {
        st = bl_mf_h5fail(err, BL_EINTERNAL, file, "attribute '%s%s': cannot make a dataspace", where, a->name);
        goto cleanup;
    }
    if ((attr = H5Acreate2(loc, a->name, ftype, space, acpl, H5P_DEFAULT)) < 0 || H5Awrite(attr, mtype, buf) < 0) {
        st = bl_mf_h5fail(err, BL_EIO, file, "cannot write attribute '%s%s'", where, a->name);
        goto cleanup;
    }
cleanup:
    H5CLOSE(attr, H5Aclose);
    H5CLOSE(space, H5Sclose);
    H5CLOSE(vstr, H5Tclose);
    return st;
}

/* Reads attribute aname of loc into out (type, count, value; not group or name). Accepts scalar or
 * 1-D dataspaces of integer, float or string type (variable- or fixed-length strings). where names
 * the object for messages, e.g. "/models/m/scaler". */
bl_status bl_mf_h5_read_attr(hid_t loc, const char *aname, bl_mfattr *out, const char *file, const char *where,
                             bl_error *err) {
    bl_status st = BL_OK;
    hid_t attr = -1, ftype = -1, space = -1, mtype = -1;
    void *tmp = NULL;
    memset(out, 0, sizeof *out);
    if ((attr = H5Aopen(loc, aname, H5P_DEFAULT)) < 0 || (ftype = H5Aget_type(attr)) < 0 ||
        (space = H5Aget_space(attr)) < 0) {
        st = bl_mf_h5fail(err, BL_EFORMAT, file, "cannot read attribute '%s' of %s", aname, where);
        goto cleanup;
    }
    H5S_class_t sc = H5Sget_simple_extent_type(space);
    int array = 0;
    size_t count = 1;
    if (sc == H5S_SIMPLE && H5Sget_simple_extent_ndims(space) == 1) {
        hsize_t d = 0;
        H5Sget_simple_extent_dims(space, &d, NULL);
        if (d > (hsize_t)(SIZE_MAX / 16)) {
            st = bl_seterr(err, BL_EFORMAT, "%s: attribute '%s' of %s is too long", file, aname, where);
            goto cleanup;
        }
        array = 1;
        count = (size_t)d;
    } else if (sc != H5S_SCALAR) {
        st = bl_seterr(err, BL_EFORMAT, "%s: attribute '%s' of %s has an unsupported shape (must be scalar or 1-D)",
                       file, aname, where);
        goto cleanup;
    }
    out->count = count;
    H5T_class_t tc = H5Tget_class(ftype);
    size_t esize = H5Tget_size(ftype), fbytes;
    if (bl_mf_image_cap && (esize == 0 || bl_mul_size(count, esize, &fbytes) || fbytes > bl_mf_image_cap)) {
        st = bl_seterr(err, BL_EFORMAT, "%s: attribute '%s' of %s claims more bytes than the file holds", file, aname,
                       where);
        goto cleanup;
    }
    size_t nalloc = count ? count : 1;
    if (tc == H5T_INTEGER || tc == H5T_FLOAT) {
        /* integers of any width/sign read as int64, floats of any width as double (HDF5 converts) */
        int isint = tc == H5T_INTEGER;
        tmp = malloc(nalloc * 8);
        if (!tmp) {
            st = bl_seterr(err, BL_ENOMEM, "out of memory");
            goto cleanup;
        }
        if (H5Aread(attr, isint ? H5T_NATIVE_INT64 : H5T_NATIVE_DOUBLE, tmp) < 0) {
            st = bl_mf_h5fail(err, BL_EFORMAT, file, "cannot read attribute '%s' of %s", aname, where);
            goto cleanup;
        }
        if (!array) {
            out->type = isint ? BL_MFATTR_INT64 : BL_MFATTR_DOUBLE;
            if (isint) memcpy(&out->v.i, tmp, 8);
            else memcpy(&out->v.d, tmp, 8);
        } else {
            out->type = isint ? BL_MFATTR_INT64S : BL_MFATTR_DOUBLES;
            if (count) {
                if (isint) out->v.iv = tmp;
                else out->v.dv = tmp;
                tmp = NULL;
            }
        }
    } else if (tc == H5T_STRING) {
        char **sv = calloc(nalloc, sizeof *sv);
        if (!sv) {
            st = bl_seterr(err, BL_ENOMEM, "out of memory");
            goto cleanup;
        }
        /* out owns sv from here, so bl_mf_attr_clear frees it on any failure below */
        out->type = array ? BL_MFATTR_STRINGS : BL_MFATTR_STRING;
        out->v.sv = sv;
        if (H5Tis_variable_str(ftype) > 0) {
            char **raw = calloc(nalloc, sizeof *raw);
            if (!raw || (mtype = vstr_type(H5Tget_cset(ftype))) < 0) {
                free(raw);
                st = bl_seterr(err, BL_ENOMEM, "out of memory");
                goto cleanup;
            }
            if (count && H5Aread(attr, mtype, raw) < 0) {
                free(raw);
                st = bl_mf_h5fail(err, BL_EFORMAT, file, "cannot read attribute '%s' of %s", aname, where);
                goto cleanup;
            }
            for (size_t i = 0; i < count; i++) {
                const char *s = raw[i] ? raw[i] : "";
                size_t len = strlen(s) + 1;
                if ((sv[i] = malloc(len))) memcpy(sv[i], s, len);
            }
            for (size_t i = 0; i < count; i++) H5free_memory(raw[i]);
            free(raw);
        } else {
            size_t sz = H5Tget_size(ftype), bytes;
            if (sz == 0 || bl_mul_size(nalloc, sz, &bytes) || !(tmp = malloc(bytes)) || (mtype = H5Tcopy(ftype)) < 0) {
                st = bl_seterr(err, BL_ENOMEM, "out of memory");
                goto cleanup;
            }
            if (count && H5Aread(attr, mtype, tmp) < 0) {
                st = bl_mf_h5fail(err, BL_EFORMAT, file, "cannot read attribute '%s' of %s", aname, where);
                goto cleanup;
            }
            for (size_t i = 0; i < count; i++) {
                const char *s = (const char *)tmp + i * sz;
                size_t len = strnlen(s, sz);
                if ((sv[i] = malloc(len + 1))) {
                    memcpy(sv[i], s, len);
                    sv[i][len] = '\0';
                }
            }
        }
        for (size_t i = 0; i < count; i++)
            if (!sv[i]) {
                st = bl_seterr(err, BL_ENOMEM, "out of memory");
                goto cleanup;
            }
        if (!array) { /* a scalar string: keep the one string, drop the array around it */
            char *s = sv[0];
            free(sv);
            out->v.s = s;
        } else if (count == 0) {
            free(sv);
            out->v.sv = NULL;
        }
    } else {
        st = bl_seterr(err, BL_EFORMAT, "%s: attribute '%s' of %s has an unsupported type (not a number or string)",
                       file, aname, where);
        goto cleanup;
    }
cleanup:
    if (st != BL_OK) bl_mf_attr_clear(out);
    free(tmp);
    H5CLOSE(mtype, H5Tclose);
    H5CLOSE(space, H5Sclose);
    H5CLOSE(ftype, H5Tclose);
    H5CLOSE(attr, H5Aclose);
    return st;
}

/* ---- the root group ------------------------------------------------------------------------------ */

/* Checks the root attributes and that /models exists. */
bl_status bl_mf_h5_check_root(hid_t fid, const char *path, bl_error *err) {
    bl_mfattr a;
    bl_status st;
    if (H5Aexists(fid, "format") <= 0)
        return bl_mf_h5fail(err, BL_EFORMAT, path, "not a Bellamy model file (no root attribute 'format')");
    if ((st = bl_mf_h5_read_attr(fid, "format", &a, path, "the root group", err)) != BL_OK) return st;
    if (a.type != BL_MFATTR_STRING || strcmp(a.v.s, BL_MF_FORMAT) != 0) {
        st = bl_seterr(err, BL_EFORMAT, "%s: not a Bellamy model file (root attribute 'format' is %s%s%s, expected '%s')",
                       path, a.type == BL_MFATTR_STRING ? "'" : "a ",
                       a.type == BL_MFATTR_STRING ? a.v.s : bl_mf_type_name(a.type),
                       a.type == BL_MFATTR_STRING ? "'" : "", BL_MF_FORMAT);
        bl_mf_attr_clear(&a);
        return st;
    }
    bl_mf_attr_clear(&a);
    if (H5Aexists(fid, "format_version") <= 0)
        return bl_mf_h5fail(err, BL_EFORMAT, path, "no root attribute 'format_version'");
    if ((st = bl_mf_h5_read_attr(fid, "format_version", &a, path, "the root group", err)) != BL_OK) return st;
    unsigned major = 0, minor = 0;
    char extra;
    if (a.type != BL_MFATTR_STRING || sscanf(a.v.s, "%u.%u%c", &major, &minor, &extra) != 2) {
        st = bl_seterr(err, BL_EFORMAT, "%s: root attribute 'format_version' is not \"MAJOR.MINOR\"", path);
        bl_mf_attr_clear(&a);
        return st;
    }
    if (major < BL_MF_VERSION_MAJOR || major > BL_MF_VERSION_MAJOR_MAX) {
        st = bl_seterr(err, BL_EVERSION, "%s: model file format version %s is %s than this library supports "
                       "(%d.x to %d.x, library %s)%s", path, a.v.s, major > BL_MF_VERSION_MAJOR_MAX ? "newer" : "older",
                       BL_MF_VERSION_MAJOR, BL_MF_VERSION_MAJOR_MAX, BL_VERSION,
                       major > BL_MF_VERSION_MAJOR_MAX ? "; update libbellamy" : "");
        bl_mf_attr_clear(&a);
        return st;
    }
    bl_mf_attr_clear(&a);
    H5L_info_t li;
    if (H5Lexists(fid, "models", H5P_DEFAULT) <= 0 || H5Lget_info(fid, "models", &li, H5P_DEFAULT) < 0 ||
        li.type != H5L_TYPE_HARD)
        return bl_mf_h5fail(err, BL_EFORMAT, path, "no group /models");
    return BL_OK;
}
