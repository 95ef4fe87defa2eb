/* modelfile.c — saving and loading model records as HDF5 files (layout: models/README.md).
 *
 * Save = build the complete new file in memory (HDF5's core driver), holding the other models of the
 * target re-written from their records (not H5Ocopy, see rewrite()); check that it reads back; write
 * it with plain write() to a temporary next to the target (mkstemp name), fsync, rename over the
 * target, fsync the folder. HDF5 never writes to the disk itself, so a full disk or a file-size limit
 * is a write() error, and nothing of HDF5's stays open after a failure. Load = open, check the root
 * attributes (format name, major version), read one /models/<name> group into a bl_modelrec.
 *
 * Every HDF5 call runs under one mutex (bl_mf_lock) because Debian's libhdf5 is not thread-safe,
 * with HDF5's own error printing switched off; the innermost HDF5 error message is copied into the
 * bl_error instead. This file does not interpret blocks or attributes: that is the model's job.
 */
#include "modelfile/modelfile.h"
#include "modelfile/modelfile_internal.h"
#include "common/error.h"
#include "common/file.h"
#include "bl_config.h"

#include <hdf5.h>
#include <xxhash.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

static bl_modelfile_hook g_hook;
static void *g_hook_ctx;

void bl_modelfile_set_test_hook(bl_modelfile_hook hook, void *ctx) {
    pthread_mutex_lock(&g_lock);
    g_hook = hook;
    g_hook_ctx = ctx;
    pthread_mutex_unlock(&g_lock);
}

static int hook_fails(bl_modelfile_point p) { return g_hook && g_hook(p, g_hook_ctx) != 0; }
/* The commit's stages as the points of a save. */
static int stage_hook(bl_file_stage s, void *ctx) {
    (void)ctx;
    return hook_fails(s == BL_FILE_WRITTEN ? BL_MFPOINT_CLOSED : BL_MFPOINT_BEFORE_RENAME);
}

typedef struct { char *buf; size_t size; } ewalk_ctx;

/* H5E_WALK_UPWARD starts at the innermost (most specific) error: keep record 0 only. */
static herr_t ewalk_cb(unsigned n, const H5E_error2_t *e, void *vctx) {
    ewalk_ctx *c = vctx;
    if (n == 0 && e && e->desc) snprintf(c->buf, c->size, "%s", e->desc);
    return 0;
}

/* The innermost message on HDF5's error stack ("" when empty); clears the stack. */
static const char *h5_inner(char *buf, size_t size) {
    buf[0] = '\0';
    ewalk_ctx c = {buf, size};
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, ewalk_cb, &c);
    H5Eclear2(H5E_DEFAULT);
    return buf;
}

/* Sets err to "<file>: <message> (HDF5: <innermost HDF5 error>)"; the HDF5 part only when there is one. */
static bl_status h5fail(bl_error *err, bl_status st, const char *file, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
static bl_status h5fail(bl_error *err, bl_status st, const char *file, const char *fmt, ...) {
    char msg[384], inner[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    h5_inner(inner, sizeof inner);
    if (inner[0]) return bl_seterr(err, st, "%s: %s (HDF5: %s)", file, msg, inner);
    return bl_seterr(err, st, "%s: %s", file, msg);
}

#define H5CLOSE(id, fn)        \
    do {                       \
        if ((id) >= 0) fn(id); \
        (id) = -1;             \
    } while (0)

/* The bounds of a parse of a file image (bl_mf_parse_image; under the lock). A file this size cannot
 * hold more than image_cap bytes of values, links or attributes: whatever HDF5 reports beyond that
 * (a dataset without storage, a count from a damaged header) is refused before it is allocated.
 * 0: no bound (the library reading back an image it made itself). */
static size_t g_image_cap;
static size_t g_groups_left; /* groups a model may still have (links may share one group many times) */
#define GROUPS_PER_MODEL_MAX 4096

/* ---- name lists ------------------------------------------------------------------------------- */

typedef struct namelist {
    char **names;
    size_t n, cap;
    int oom;
} namelist;

static void namelist_clear(namelist *l) {
    for (size_t i = 0; i < l->n; i++) free(l->names[i]);
    free(l->names);
    memset(l, 0, sizeof *l);
}

static int namelist_push(namelist *l, const char *s) {
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
    namelist *l = vctx;
    if (g_image_cap && l->n >= g_image_cap / 8) return -1; /* more links than the file has room for */
    if (namelist_push(l, name)) {
        l->oom = 1;
        return -1;
    }
    return 0;
}

static herr_t attr_name_cb(hid_t loc, const char *name, const H5A_info_t *info, void *vctx) {
    namelist *l = vctx;
    if (g_image_cap && l->n >= g_image_cap / 8) return -1;
    if (namelist_push(l, name)) {
        l->oom = 1;
        return -1;
    }
    return 0;
}

/* Names of a group's links (attrs == 0) or an object's attributes (attrs == 1) in creation order,
 * falling back to name order for files written without creation-order tracking (e.g. by h5py). */
static int list_names(hid_t loc, int attrs, namelist *out) {
    H5_index_t idx[2] = {H5_INDEX_CRT_ORDER, H5_INDEX_NAME};
    for (int k = 0; k < 2; k++) {
        namelist_clear(out);
        hsize_t pos = 0;
        herr_t r = attrs ? H5Aiterate2(loc, idx[k], H5_ITER_INC, &pos, attr_name_cb, out)
                         : H5Literate(loc, idx[k], H5_ITER_INC, &pos, link_name_cb, out);
        if (out->oom) break;
        if (r >= 0) {
            H5Eclear2(H5E_DEFAULT);
            return 0;
        }
    }
    namelist_clear(out);
    return -1;
}

/* "a, b, c" (or "none") into buf, for "models present" messages. */
static void join_names(const namelist *l, char *buf, size_t size) {
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
static bl_status write_attr(hid_t loc, const bl_mfattr *a, hid_t acpl, const char *file, const char *where,
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
            st = h5fail(err, BL_EINTERNAL, file, "cannot make a string type");
            goto cleanup;
        }
        ftype = mtype = vstr;
        break;
    }
    hsize_t n = (hsize_t)a->count;
    space = scalar ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &n, NULL);
    if (space < 0) {
        st = h5fail(err, BL_EINTERNAL, file, "attribute '%s%s': cannot make a dataspace", where, a->name);
        goto cleanup;
    }
    if ((attr = H5Acreate2(loc, a->name, ftype, space, acpl, H5P_DEFAULT)) < 0 || H5Awrite(attr, mtype, buf) < 0) {
        st = h5fail(err, BL_EIO, file, "cannot write attribute '%s%s'", where, a->name);
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
static bl_status read_attr(hid_t loc, const char *aname, bl_mfattr *out, const char *file, const char *where,
                           bl_error *err) {
    bl_status st = BL_OK;
    hid_t attr = -1, ftype = -1, space = -1, mtype = -1;
    void *tmp = NULL;
    memset(out, 0, sizeof *out);
    if ((attr = H5Aopen(loc, aname, H5P_DEFAULT)) < 0 || (ftype = H5Aget_type(attr)) < 0 ||
        (space = H5Aget_space(attr)) < 0) {
        st = h5fail(err, BL_EFORMAT, file, "cannot read attribute '%s' of %s", aname, where);
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
    if (g_image_cap && (esize == 0 || bl_mul_size(count, esize, &fbytes) || fbytes > g_image_cap)) {
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
            st = h5fail(err, BL_EFORMAT, file, "cannot read attribute '%s' of %s", aname, where);
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
                st = h5fail(err, BL_EFORMAT, file, "cannot read attribute '%s' of %s", aname, where);
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
                st = h5fail(err, BL_EFORMAT, file, "cannot read attribute '%s' of %s", aname, where);
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

/* ---- opening and checking a file ------------------------------------------------------------------ */

/* 1 when the HDF5 signature sits at offset 0 or at a power of two >= 512 (HDF5 allows a user block). */
/* HDF5's signature at byte 0, 512, 1024, 2048, ... (where HDF5 looks for it) of a file in memory. */
static int has_hdf5_signature(const unsigned char *buf, size_t size) {
    static const unsigned char sig[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
    for (size_t off = 0; off + 8 <= size; off = off ? off * 2 : 512)
        if (memcmp(buf + off, sig, 8) == 0) return 1;
    return 0;
}

/* Checks the root attributes and that /models exists. */
static bl_status check_root(hid_t fid, const char *path, bl_error *err) {
    bl_mfattr a;
    bl_status st;
    if (H5Aexists(fid, "format") <= 0)
        return h5fail(err, BL_EFORMAT, path, "not a Bellamy model file (no root attribute 'format')");
    if ((st = read_attr(fid, "format", &a, path, "the root group", err)) != BL_OK) return st;
    if (a.type != BL_MFATTR_STRING || strcmp(a.v.s, BL_MODELFILE_FORMAT) != 0) {
        st = bl_seterr(err, BL_EFORMAT, "%s: not a Bellamy model file (root attribute 'format' is %s%s%s, expected '%s')",
                       path, a.type == BL_MFATTR_STRING ? "'" : "a ",
                       a.type == BL_MFATTR_STRING ? a.v.s : bl_mf_type_name(a.type),
                       a.type == BL_MFATTR_STRING ? "'" : "", BL_MODELFILE_FORMAT);
        bl_mf_attr_clear(&a);
        return st;
    }
    bl_mf_attr_clear(&a);
    if (H5Aexists(fid, "format_version") <= 0)
        return h5fail(err, BL_EFORMAT, path, "no root attribute 'format_version'");
    if ((st = read_attr(fid, "format_version", &a, path, "the root group", err)) != BL_OK) return st;
    unsigned major = 0, minor = 0;
    char extra;
    if (a.type != BL_MFATTR_STRING || sscanf(a.v.s, "%u.%u%c", &major, &minor, &extra) != 2) {
        st = bl_seterr(err, BL_EFORMAT, "%s: root attribute 'format_version' is not \"MAJOR.MINOR\"", path);
        bl_mf_attr_clear(&a);
        return st;
    }
    if (major < BL_MODELFILE_VERSION_MAJOR || major > BL_MODELFILE_VERSION_MAJOR_MAX) {
        st = bl_seterr(err, BL_EVERSION, "%s: model file format version %s is %s than this library supports "
                       "(%d.x to %d.x, library %s)%s", path, a.v.s, major > BL_MODELFILE_VERSION_MAJOR_MAX ? "newer" : "older",
                       BL_MODELFILE_VERSION_MAJOR, BL_MODELFILE_VERSION_MAJOR_MAX, BL_VERSION,
                       major > BL_MODELFILE_VERSION_MAJOR_MAX ? "; update libbellamy" : "");
        bl_mf_attr_clear(&a);
        return st;
    }
    bl_mf_attr_clear(&a);
    H5L_info_t li;
    if (H5Lexists(fid, "models", H5P_DEFAULT) <= 0 || H5Lget_info(fid, "models", &li, H5P_DEFAULT) < 0 ||
        li.type != H5L_TYPE_HARD)
        return h5fail(err, BL_EFORMAT, path, "no group /models");
    return BL_OK;
}

/* Opens path read-only and checks it is a model file of a supported version; *fid >= 0 on success. */
/* ---- the file's header: a checksum in HDF5's user block ------------------------------------------
 * Since 0.4.1 a model file starts with a 512-byte user block (HDF5 skips it: h5py and h5dump read the
 * file as before) holding one line of text, then NUL bytes:
 *     BELLAMY-MODEL 1 size=<file length in bytes> xxh64=<16 hex digits>\n
 * where the hash (XXH64, seed 0) covers every byte after the user block. HDF5 checksums only its own
 * metadata, so without this a flipped byte in a weight block loads silently and predicts something
 * else; a damaged file is now refused before HDF5 parses a byte of it. Files without the header
 * (0.4.0 and older, or written by other programs) are read as before. */
#define HDR_SIZE 512
#define HDR_MAGIC "BELLAMY-MODEL 1 "

static void header_write(unsigned char *image, size_t size) {
    char line[HDR_SIZE];
    const uint64_t h = XXH64(image + HDR_SIZE, size - HDR_SIZE, 0);
    int n = snprintf(line, sizeof line, HDR_MAGIC "size=%zu xxh64=%016" PRIx64 "\n", size, h);
    memset(image, 0, HDR_SIZE);
    memcpy(image, line, (size_t)n);
}

/* A decimal number of at most 19 digits at *p (no sign, no spaces), advancing *p. */
static int parse_u64(const char **p, uint64_t *v) {
    const char *q = *p;
    uint64_t x = 0;
    int n = 0;
    for (; *q >= '0' && *q <= '9' && n < 20; q++, n++) x = x * 10 + (uint64_t)(*q - '0');
    if (n == 0 || n > 19) return 0;
    *v = x;
    *p = q;
    return 1;
}

/* Checks the header of a file read into memory. A file has one when its first bytes are the magic;
 * it has none when they are HDF5's signature (files of 0.4.0 and older, or of other programs).
 * Anything else in front of a signature at 512 is a damaged header — never a reason to skip the
 * check. *has: 1 present and matching, 0 absent, -1 present (or damaged) but let through by
 * BELLAMY_MODEL_IGNORE_CHECKSUM=1 (never when strict). */
static bl_status header_check(const unsigned char *buf, size_t size, const char *path, int strict, int *has,
                              bl_error *err) {
    static const unsigned char sig[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
    static const char family[] = "BELLAMY-MODEL ";
    const size_t fl = sizeof family - 1;
    const int ours = size >= fl && memcmp(buf, family, fl) == 0;
    const char *skip = getenv("BELLAMY_MODEL_IGNORE_CHECKSUM");
    const int override = !strict && skip && strcmp(skip, "1") == 0;
    *has = 0;
    if (!ours) {
        if (size >= 8 && memcmp(buf, sig, 8) == 0) return BL_OK;    /* no user block: no header */
        if (size < HDR_SIZE + 8 || memcmp(buf + HDR_SIZE, sig, 8) != 0) return BL_OK; /* HDF5 says */
        /* A user block without our magic: libbellamy never wrote one (before 0.4.1 files had none), so
         * it is a damaged header — zeroed or not — and never a reason to skip the check. (A file of
         * another program with a user block of its own reads with BELLAMY_MODEL_IGNORE_CHECKSUM=1.) */
        if (override) {
            *has = -1;
            return BL_OK;
        }
        return bl_seterr(err, BL_EFORMAT, "%s: damaged file: its first %d bytes (the header) are not a Bellamy "
                         "model header", path, HDR_SIZE);
    }
    if (size < HDR_SIZE)
        return bl_seterr(err, BL_EFORMAT, "%s: truncated file: %zu bytes, shorter than its header", path, size);
    char line[HDR_SIZE + 1];
    memcpy(line, buf, HDR_SIZE);
    line[HDR_SIZE] = '\0';
    const char *p = line + fl;
    uint64_t version, want, h = 0;
    if (!parse_u64(&p, &version) || *p != ' ')
        return bl_seterr(err, BL_EFORMAT, "%s: damaged file: its header line is unreadable", path);
    if (version != 1)
        return bl_seterr(err, version > 1 ? BL_EVERSION : BL_EFORMAT, "%s: header version %" PRIu64 " (%s)", path,
                         version, version > 1 ? "newer than this library supports" : "damaged header");
    p++;
    int ok = strncmp(p, "size=", 5) == 0;
    if (ok) p += 5;
    ok = ok && parse_u64(&p, &want) && strncmp(p, " xxh64=", 7) == 0;
    if (ok) p += 7;
    int hex = 0;
    for (; ok && hex < 16 && ((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')); p++, hex++)
        h = (h << 4) | (uint64_t)(*p <= '9' ? *p - '0' : *p - 'a' + 10);
    ok = ok && hex == 16 && *p == '\n';
    for (size_t i = ok ? (size_t)(p + 1 - line) : HDR_SIZE; i < HDR_SIZE; i++) ok = ok && buf[i] == 0;
    if (!ok) return bl_seterr(err, BL_EFORMAT, "%s: damaged file: its header line is unreadable", path);
    /* An edit on purpose (an attribute added with h5py) changes the length as often as the bytes: the
     * override lets both through, and HDF5 then judges the contents. */
    if (want != size) {
        if (override) { /* a header, overridden: not a file without one */
            *has = -1;
            return BL_OK;
        }
        return bl_seterr(err, BL_EFORMAT, "%s: damaged or truncated file: %zu bytes, its header says %" PRIu64
                         " (changed after it was written; %s)", path, size, want,
                         strict ? "to keep an edit made on purpose: BELLAMY_MODEL_IGNORE_CHECKSUM=1 bellamy-train "
                                  "check --model FILE --stamp"
                                : "BELLAMY_MODEL_IGNORE_CHECKSUM=1 reads a file edited on purpose");
    }
    if (XXH64(buf + HDR_SIZE, size - HDR_SIZE, 0) != h) {
        if (override) {
            *has = -1;
            return BL_OK;
        }
        return bl_seterr(err, BL_EFORMAT, "%s: damaged file: its checksum does not match its contents (changed "
                         "after it was written; %s)", path,
                         strict ? "to keep an edit made on purpose: BELLAMY_MODEL_IGNORE_CHECKSUM=1 bellamy-train "
                                  "check --model FILE --stamp; a damaged cache file can simply be deleted"
                                : "BELLAMY_MODEL_IGNORE_CHECKSUM=1 reads a file edited on purpose");
    }
    *has = 1;
    return BL_OK;
}


/* Re-writes the header of a file changed in place (test support edits files with HDF5). */
bl_status bl_mf_restamp(const char *path, bl_error *err) {
    FILE *f = fopen(path, "r+b");
    if (!f) return bl_seterr(err, BL_EIO, "%s: cannot open: %s", path, strerror(errno));
    bl_status st = BL_OK;
    unsigned char *buf = NULL;
    long size = -1;
    if (fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0 ||
        !(buf = malloc((size_t)size + 1)) || fread(buf, 1, (size_t)size, f) != (size_t)size)
        st = bl_seterr(err, BL_EIO, "%s: cannot read", path);
    else if ((size_t)size >= HDR_SIZE && memcmp(buf, HDR_MAGIC, strlen(HDR_MAGIC)) == 0) {
        header_write(buf, (size_t)size);
        if (fseek(f, 0, SEEK_SET) != 0 || fwrite(buf, 1, HDR_SIZE, f) != HDR_SIZE)
            st = bl_seterr(err, BL_EIO, "%s: cannot write", path);
    }
    free(buf);
    if (fclose(f) != 0 && st == BL_OK) st = bl_seterr(err, BL_EIO, "%s: cannot close", path);
    return st;
}

/* The whole file in memory (model files are small): HDF5 then parses exactly the bytes checked. The
 * size comes from the open descriptor, so a file replaced (renamed over) meanwhile is read whole,
 * old or new, never the one's size with the other's bytes. */
static bl_status read_whole(const char *path, unsigned char **out, size_t *size_out, bl_error *err) {
    *out = NULL;
    *size_out = 0;
    FILE *f = fopen(path, "rb");
    if (!f) return bl_seterr(err, BL_EIO, "%s: cannot open: %s", path, strerror(errno));
    struct stat sb;
    if (fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode)) {
        fclose(f);
        return bl_seterr(err, BL_EIO, "%s: not a regular file", path);
    }
    const size_t size = (size_t)sb.st_size;
    unsigned char *buf = malloc(size ? size : 1);
    size_t got = buf ? fread(buf, 1, size, f) : 0;
    int bad = !buf || got != size || ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        return buf ? bl_seterr(err, BL_EIO, "%s: cannot read (%zu of %zu bytes)", path, got, size)
                   : bl_seterr(err, BL_ENOMEM, "%s: out of memory (%zu bytes)", path, size);
    }
    *out = buf;
    *size_out = size;
    return BL_OK;
}

int bl_modelfile_verify(const char *path, bl_error *err) {
    if (!path) {
        bl_seterr(err, BL_EINVAL, "verify: NULL path");
        return -1;
    }
    unsigned char *buf;
    size_t size;
    int has = 0;
    if (read_whole(path, &buf, &size, err) != BL_OK) return -1;
    bl_status st = header_check(buf, size, path, 1, &has, err); /* strict: the override does not apply */
    free(buf);
    return st != BL_OK ? -1 : has;
}

/* Opens a file image in memory with HDF5 and checks its root attributes; *fid >= 0 on success.
 * Under the lock; only the reader process parses a file that came from the disk this way. */
static bl_status open_image(const char *label, const unsigned char *img, size_t size, hid_t *fid, bl_error *err) {
    *fid = -1;
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl < 0 || H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG) < 0 || H5Pset_fapl_core(fapl, 1 << 16, 0) < 0 ||
        H5Pset_file_image(fapl, (void *)img, size) < 0) { /* copies the image */
        H5CLOSE(fapl, H5Pclose);
        return h5fail(err, BL_EINTERNAL, label, "cannot make a property list");
    }
    /* The core driver refuses an image whose name exists on disk: HDF5 knows it by a name under
     * /dev/null, which cannot exist and stays distinct per label. */
    char *mem_name = malloc(strlen(label) + 16);
    if (!mem_name) {
        H5Pclose(fapl);
        return bl_seterr(err, BL_ENOMEM, "%s: out of memory", label);
    }
    snprintf(mem_name, strlen(label) + 16, "/dev/null/%s", label);
    hid_t f = H5Fopen(mem_name, H5F_ACC_RDONLY, fapl);
    free(mem_name);
    char inner[200];
    h5_inner(inner, sizeof inner); /* before H5Pclose, which would clear the error stack */
    H5Pclose(fapl);
    if (f < 0) {
        if (!has_hdf5_signature(img, size)) return bl_seterr(err, BL_EFORMAT, "%s: not an HDF5 file", label);
        return bl_seterr(err, BL_EFORMAT, "%s: damaged or truncated HDF5 file%s%s%s", label, inner[0] ? " (HDF5: " : "",
                         inner, inner[0] ? ")" : "");
    }
    bl_status st = check_root(f, label, err);
    if (st != BL_OK) {
        H5Fclose(f);
        return st;
    }
    *fid = f;
    return BL_OK;
}

/* 1 when the environment says to load files without a checksum header. */
static int env_allow_unstamped(void) {
    const char *v = getenv("BELLAMY_MODEL_ALLOW_UNSTAMPED");
    return v && strcmp(v, "1") == 0;
}

bl_status bl_mf_read_image(const char *label, const unsigned char *img, size_t size, bl_mf_op op, const char *name,
                           unsigned flags, bl_mf_result *out, bl_error *err) {
    memset(out, 0, sizeof *out);
    int has = 0;
    bl_status st = header_check(img, size, label, (flags & BL_MF_STRICT) != 0, &has, err);
    if (st != BL_OK) return st;
    if (size == 0) return bl_seterr(err, BL_EFORMAT, "%s: empty file, not an HDF5 model file", label);
    if (!has_hdf5_signature(img, size)) return bl_seterr(err, BL_EFORMAT, "%s: not an HDF5 file", label);
    /* Without a header nothing vouches for the bytes: a damaged or crafted file would load with other
     * weights than were written. Whoever trusts the file says so once (--stamp) or per load. */
    if (has == 0 && !(flags & BL_MF_ALLOW_UNSTAMPED) && !env_allow_unstamped())
        return bl_seterr(err, BL_EFORMAT, "%s: no checksum header (written before libbellamy 0.4.1 or by another "
                         "program), so its contents cannot be verified; if you trust the file, stamp it once with "
                         "'bellamy-train check --model FILE --stamp', or load it unverified with "
                         "BELLAMY_MODEL_ALLOW_UNSTAMPED=1", label);
    return bl_mf_parse_isolated(label, img, size, op, name, out, err);
}

/* The file at path read whole and through bl_mf_read_image. */
static bl_status read_file(const char *path, bl_mf_op op, const char *name, unsigned flags, bl_mf_result *out,
                           bl_error *err) {
    memset(out, 0, sizeof *out);
    struct stat sb;
    if (stat(path, &sb) != 0) return bl_seterr(err, BL_EIO, "%s: cannot open: %s", path, strerror(errno));
    if (S_ISDIR(sb.st_mode)) return bl_seterr(err, BL_EIO, "%s: is a directory, not a model file", path);
    if (!S_ISREG(sb.st_mode)) return bl_seterr(err, BL_EIO, "%s: not a regular file", path);
    /* Read by us first: when HDF5 cannot open a file it does not say why (an unreadable file would
     * read as "not an HDF5 file"), while the operating system's reason (permission denied, ...) is
     * what the user needs; and the header's checksum is checked before HDF5 parses a byte. */
    unsigned char *buf;
    size_t size;
    bl_status st = read_whole(path, &buf, &size, err);
    if (st != BL_OK) return st;
    st = bl_mf_read_image(path, buf, size, op, name, flags, out, err);
    free(buf);
    return st;
}

/* Names of the models (hard-linked groups) under /models of an open, checked file. */
static bl_status list_models(hid_t fid, const char *path, namelist *out, bl_error *err) {
    memset(out, 0, sizeof *out);
    hid_t models = H5Gopen2(fid, "models", H5P_DEFAULT);
    if (models < 0) return h5fail(err, BL_EFORMAT, path, "cannot open group /models");
    namelist all = {0};
    bl_status st = BL_OK;
    if (list_names(models, 0, &all) != 0) {
        st = all.oom ? bl_seterr(err, BL_ENOMEM, "out of memory") : h5fail(err, BL_EFORMAT, path, "cannot list /models");
        goto cleanup;
    }
    for (size_t i = 0; i < all.n; i++) {
        H5L_info_t li;
        if (H5Lget_info(models, all.names[i], &li, H5P_DEFAULT) < 0) {
            st = h5fail(err, BL_EFORMAT, path, "damaged file: cannot read the link /models/%s", all.names[i]);
            goto cleanup;
        }
        if (li.type != H5L_TYPE_HARD) continue; /* soft or external links are not models */
        hid_t o = H5Oopen(models, all.names[i], H5P_DEFAULT);
        if (o < 0) {
            st = h5fail(err, BL_EFORMAT, path, "damaged file: cannot open /models/%s", all.names[i]);
            goto cleanup;
        }
        int isgroup = H5Iget_type(o) == H5I_GROUP;
        H5Oclose(o);
        if (isgroup && !bl_mf_valid_name(all.names[i])) {
            st = bl_seterr(err, BL_EFORMAT, "%s: damaged file: /models holds a group whose name is not a model name",
                           path);
            goto cleanup;
        }
        if (isgroup && namelist_push(out, all.names[i])) {
            st = bl_seterr(err, BL_ENOMEM, "out of memory");
            goto cleanup;
        }
    }
    H5Eclear2(H5E_DEFAULT);
cleanup:
    if (st != BL_OK) namelist_clear(out);
    namelist_clear(&all);
    H5Gclose(models);
    return st;
}

/* ---- writing ---------------------------------------------------------------------------------------- */

typedef struct wplists {
    hid_t gcpl; /* groups: track and index link and attribute creation order */
    hid_t lcpl; /* links: UTF-8 names */
    hid_t acpl; /* attributes: UTF-8 names */
} wplists;

/* Opens or creates the group path ("a/b") below loc. */
static hid_t open_group_path(hid_t loc, const char *path, const wplists *pl) {
    char buf[BL_MODELFILE_NAME_MAX + 1];
    snprintf(buf, sizeof buf, "%s", path);
    hid_t cur = H5Gopen2(loc, ".", H5P_DEFAULT);
    char *p = buf;
    while (cur >= 0 && p) {
        char *slash = strchr(p, '/');
        if (slash) *slash = '\0';
        htri_t ex = H5Lexists(cur, p, H5P_DEFAULT);
        hid_t next = ex > 0 ? H5Gopen2(cur, p, H5P_DEFAULT) : ex == 0 ? H5Gcreate2(cur, p, pl->lcpl, pl->gcpl, H5P_DEFAULT) : -1;
        H5Gclose(cur);
        cur = next;
        p = slash ? slash + 1 : NULL;
    }
    return cur;
}

/* Writes rec as the group /models/<rec->name> below models (which must not hold that name). */
static bl_status write_model(hid_t models, const bl_modelrec *rec, const wplists *pl, const char *file,
                             bl_error *err) {
    bl_status st = BL_OK;
    hid_t g = -1, w = -1, d = -1, sp = -1, loc = -1;
    char where[2 * BL_MODELFILE_NAME_MAX + 32];
    if ((g = H5Gcreate2(models, rec->name, pl->lcpl, pl->gcpl, H5P_DEFAULT)) < 0 ||
        (w = H5Gcreate2(g, "weights", pl->lcpl, pl->gcpl, H5P_DEFAULT)) < 0) {
        st = h5fail(err, BL_EIO, file, "cannot create group /models/%s", rec->name);
        goto cleanup;
    }
    for (size_t i = 0; i < rec->n_blocks; i++) {
        const bl_mfblock *b = &rec->blocks[i];
        hsize_t dims[2] = {(hsize_t)b->rows, (hsize_t)b->cols};
        if ((sp = H5Screate_simple(b->rank, dims, NULL)) < 0 ||
            (d = H5Dcreate2(w, b->name, H5T_IEEE_F64LE, sp, pl->lcpl, H5P_DEFAULT, H5P_DEFAULT)) < 0 ||
            H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, b->data) < 0) {
            st = h5fail(err, BL_EIO, file, "cannot write dataset /models/%s/weights/%s", rec->name, b->name);
            goto cleanup;
        }
        H5CLOSE(d, H5Dclose);
        H5CLOSE(sp, H5Sclose);
    }
    for (size_t i = 0; i < rec->n_attrs; i++) {
        const bl_mfattr *a = &rec->attrs[i];
        snprintf(where, sizeof where, "/models/%s/%s%s", rec->name, a->group, *a->group ? "/" : "");
        if ((loc = *a->group ? open_group_path(g, a->group, pl) : H5Gopen2(g, ".", H5P_DEFAULT)) < 0) {
            st = h5fail(err, BL_EIO, file, "cannot create group %s", where);
            goto cleanup;
        }
        if ((st = write_attr(loc, a, pl->acpl, file, where, err)) != BL_OK) goto cleanup;
        H5CLOSE(loc, H5Gclose);
    }
cleanup:
    H5CLOSE(loc, H5Gclose);
    H5CLOSE(d, H5Dclose);
    H5CLOSE(sp, H5Sclose);
    H5CLOSE(w, H5Gclose);
    H5CLOSE(g, H5Gclose);
    return st;
}

/* The major version a record needs: its model-group attribute format_major_required, else 1. */
static int64_t rec_major(const bl_modelrec *r) {
    for (size_t i = 0; r && i < r->n_attrs; i++) {
        const bl_mfattr *a = &r->attrs[i];
        if (!*a->group && strcmp(a->name, BL_MODELFILE_MAJOR_ATTR) == 0 && a->type == BL_MFATTR_INT64 && a->count == 1)
            return a->v.i > BL_MODELFILE_VERSION_MAJOR ? a->v.i : BL_MODELFILE_VERSION_MAJOR;
    }
    return BL_MODELFILE_VERSION_MAJOR;
}

/* Writes the root attributes: format, format_version ("1.3", or "2.1" when a model needs major 2),
 * its parts as integers, library_version. */
static bl_status write_root_attrs(hid_t fid, const wplists *pl, const char *file, int64_t major, bl_error *err) {
    char ver[32];
    const int64_t minor = major == BL_MODELFILE_VERSION_MAJOR ? BL_MODELFILE_VERSION_MINOR
                          : major == 2                         ? BL_MODELFILE_VERSION_MINOR_2
                                                               : BL_MODELFILE_VERSION_MINOR_3;
    snprintf(ver, sizeof ver, "%lld.%lld", (long long)major, (long long)minor);
    char *sfmt = (char *)BL_MODELFILE_FORMAT, *sver = ver, *slib = (char *)BL_VERSION;
    const bl_mfattr attrs[] = {
        {.group = "", .name = "format", .type = BL_MFATTR_STRING, .count = 1, .v.s = sfmt},
        {.group = "", .name = "format_version", .type = BL_MFATTR_STRING, .count = 1, .v.s = sver},
        {.group = "", .name = "format_version_major", .type = BL_MFATTR_INT64, .count = 1, .v.i = major},
        {.group = "", .name = "format_version_minor", .type = BL_MFATTR_INT64, .count = 1, .v.i = minor},
        {.group = "", .name = "library_version", .type = BL_MFATTR_STRING, .count = 1, .v.s = slib},
    };
    for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; i++) {
        bl_status st = write_attr(fid, &attrs[i], pl->acpl, file, "/", err);
        if (st) return st;
    }
    return BL_OK;
}

static void plists_close(wplists *pl) {
    H5CLOSE(pl->gcpl, H5Pclose);
    H5CLOSE(pl->lcpl, H5Pclose);
    H5CLOSE(pl->acpl, H5Pclose);
}

static int plists_make(wplists *pl) {
    unsigned crt = H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED;
    pl->gcpl = H5Pcreate(H5P_GROUP_CREATE);
    pl->lcpl = H5Pcreate(H5P_LINK_CREATE);
    pl->acpl = H5Pcreate(H5P_ATTRIBUTE_CREATE);
    if (pl->gcpl < 0 || pl->lcpl < 0 || pl->acpl < 0 || H5Pset_link_creation_order(pl->gcpl, crt) < 0 ||
        H5Pset_attr_creation_order(pl->gcpl, crt) < 0 || H5Pset_char_encoding(pl->lcpl, H5T_CSET_UTF8) < 0 ||
        H5Pset_char_encoding(pl->acpl, H5T_CSET_UTF8) < 0) {
        plists_close(pl);
        return -1;
    }
    return 0;
}

/* The new file is built in memory by HDF5's core driver and handed to us when HDF5 closes it: these
 * callbacks manage the driver's buffer and keep it at close instead of freeing it. (The image that
 * H5Fget_file_image gives of a file still open carries a stale superblock checksum in HDF5 1.10 with
 * the 1.8 format; the close rewrites it.) */
typedef struct image_capture {
    void  *buf;      /* the driver's current buffer */
    size_t size;     /* its size */
    void  *kept;     /* the buffer at close, now ours */
    size_t kept_size;
} image_capture;

/* Buffers are zeroed as they grow, so that bytes HDF5 leaves unwritten (free space) are zeros, not
 * leftovers of other allocations: the same model gives the same file. */
static void *img_malloc(size_t size, H5FD_file_image_op_t op, void *udata) {
    (void)op;
    image_capture *c = udata;
    c->buf = calloc(size ? size : 1, 1);
    c->size = c->buf ? size : 0;
    return c->buf;
}
static void *img_memcpy(void *dst, const void *src, size_t size, H5FD_file_image_op_t op, void *udata) {
    (void)op;
    (void)udata;
    return memcpy(dst, src, size);
}
static void *img_realloc(void *ptr, size_t size, H5FD_file_image_op_t op, void *udata) {
    (void)op;
    image_capture *c = udata;
    const size_t old = ptr && ptr == c->buf ? c->size : 0;
    void *p = realloc(ptr, size ? size : 1);
    if (!p) return NULL;
    if (size > old) memset((unsigned char *)p + old, 0, size - old);
    c->buf = p;
    c->size = size;
    return p;
}
static herr_t img_free(void *ptr, H5FD_file_image_op_t op, void *udata) {
    image_capture *c = udata;
    if (op == H5FD_FILE_IMAGE_OP_FILE_CLOSE && ptr && ptr == c->buf && !c->kept) {
        c->kept = ptr;
        c->kept_size = c->size;
    } else {
        free(ptr);
    }
    if (ptr == c->buf) c->buf = NULL;
    return 0;
}

/* The length of a closed file's image: the end-of-file address its superblock (version 2 or 3, at the
 * base address HDR_SIZE, 8-byte addresses) stores, which counts from the file's first byte. 0 when the
 * superblock is not one of those or the address lies outside the buffer. */
static size_t image_length(const unsigned char *img, size_t buf_size) {
    static const unsigned char sig[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
    const size_t sb = HDR_SIZE;
    if (buf_size < sb + 48 || memcmp(img + sb, sig, 8) != 0 || (img[sb + 8] != 2 && img[sb + 8] != 3) ||
        img[sb + 9] != 8)
        return 0;
    uint64_t eof = 0;
    for (int k = 7; k >= 0; k--) eof = (eof << 8) | img[sb + 28 + (size_t)k]; /* little-endian */
    return eof > sb && eof <= buf_size ? (size_t)eof : 0;
}
static void *img_udata_copy(void *udata) { return udata; } /* shared: used only under the lock */
static herr_t img_udata_free(void *udata) {
    (void)udata;
    return 0;
}

/* Checks that an image reads back as a model file before it goes to the disk. */
static bl_status check_image(void *image, size_t size, const char *path, const char *mem_name, bl_error *err) {
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS), f = -1;
    bl_status st = BL_OK;
    if (fapl < 0 || H5Pset_fapl_core(fapl, 1 << 16, 0) < 0 || H5Pset_file_image(fapl, image, size) < 0 ||
        H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG) < 0)
        st = h5fail(err, BL_EINTERNAL, path, "cannot make a property list");
    else if ((f = H5Fopen(mem_name, H5F_ACC_RDONLY, fapl)) < 0)
        st = h5fail(err, BL_EINTERNAL, path, "the new file does not read back");
    else
        st = check_root(f, path, err);
    H5CLOSE(f, H5Fclose);
    H5CLOSE(fapl, H5Pclose);
    return st;
}

/* The common body of save and remove: writes a new file holding the existing file's models, with
 * add written in place of (or after) the model of its name and the model called drop left out,
 * then renames it over path. The existing file is read by the reader process (flags as for a load);
 * HDF5 here only writes records and reads back the image it made. Called with g_save_lock held. */
static bl_status rewrite(const char *path, const bl_modelrec *add, const char *drop, unsigned flags, bl_error *err) {
    bl_status st = BL_OK;
    hid_t dst = -1, dst_models = -1, fcpl = -1, fapl = -1;
    wplists pl = {-1, -1, -1};
    bl_mf_result old = {0};
    bl_file_out *out = NULL;
    unsigned char *image = NULL;
    /* file-static, not on this stack: should HDF5 keep the file after a failed close, it would call
     * img_free at exit (the struct is used only under bl_mf_lock) */
    static image_capture cap;
    H5FD_file_image_callbacks_t img_cb = {img_malloc, img_memcpy, img_realloc, img_free,
                                          img_udata_copy, img_udata_free, &cap};
    int locked = 0;
    const char *what = add ? add->name : drop;

    struct stat sb;
    int exists = 0;
    if (stat(path, &sb) == 0) {
        if (S_ISDIR(sb.st_mode)) return bl_seterr(err, BL_EIO, "%s: is a directory, not a model file", path);
        if (!S_ISREG(sb.st_mode)) return bl_seterr(err, BL_EIO, "%s: not a regular file", path);
        exists = 1;
    } else if (errno != ENOENT) {
        return bl_seterr(err, BL_EIO, "%s: %s", path, strerror(errno));
    }
    if (!exists && drop) return bl_seterr(err, BL_EIO, "%s: cannot open: %s", path, strerror(ENOENT));

    /* An existing file must be a model file we understand: never clobber anything else. */
    if (exists && (st = read_file(path, BL_MF_OP_ALL, NULL, flags, &old, err)) != BL_OK) {
        bl_prefixerr(err, "refusing to overwrite");
        goto cleanup;
    }
    if (drop) {
        int found = 0;
        for (size_t i = 0; i < old.n_names; i++) found |= strcmp(old.names[i], drop) == 0;
        if (!found) {
            namelist nl = {old.names, old.n_names, old.n_names, 0};
            char list[256];
            join_names(&nl, list, sizeof list);
            st = bl_seterr(err, BL_ENOTFOUND, "%s: no model '%s' (models present: %s)", path, drop, list);
            goto cleanup;
        }
    }

    /* The file is replaced by the one policy of common/file.h (a temporary in the target's folder,
     * links followed, the mode kept, fsync'ed, renamed); the temporary exists from here on. */
    if ((st = bl_file_out_open(path, &out, err)) != BL_OK) goto cleanup;
    const char *tmp = bl_file_out_temp(out);
    if (hook_fails(BL_MFPOINT_TEMP_CREATED)) goto injected;

    bl_mf_lock();
    locked = 1;
    cap = (image_capture){NULL, 0, NULL, 0};
    if (plists_make(&pl) < 0 || (fcpl = H5Pcreate(H5P_FILE_CREATE)) < 0 || (fapl = H5Pcreate(H5P_FILE_ACCESS)) < 0 ||
        H5Pset_userblock(fcpl, HDR_SIZE) < 0 ||
        H5Pset_link_creation_order(fcpl, H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED) < 0 ||
        H5Pset_attr_creation_order(fcpl, H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED) < 0 ||
        /* 1.8+ object format: needed for attributes over 64 KiB (vocabularies) */
        H5Pset_libver_bounds(fapl, H5F_LIBVER_V18, H5F_LIBVER_LATEST) < 0 ||
        H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG) < 0 ||
        /* The file is built in memory (HDF5's core driver, no backing store) and written out below
         * with plain write(): HDF5 itself never writes to the disk, so a full disk or a file-size
         * limit is our own write()'s error. (With HDF5 writing, a failed flush left a file that
         * neither closed nor could be closed at exit: the process crashed in HDF5's atexit.) */
        H5Pset_fapl_core(fapl, 1 << 16, 0) < 0 || H5Pset_file_image_callbacks(fapl, &img_cb) < 0) {
        st = h5fail(err, BL_EINTERNAL, path, "cannot make property lists");
        goto cleanup;
    }
    if ((dst = H5Fcreate(tmp, H5F_ACC_TRUNC, fcpl, fapl)) < 0) {
        st = h5fail(err, BL_EIO, path, "cannot create temporary file '%s'", tmp);
        goto cleanup;
    }
    if ((dst_models = H5Gcreate2(dst, "models", pl.lcpl, pl.gcpl, H5P_DEFAULT)) < 0) {
        st = h5fail(err, BL_EIO, path, "cannot create group /models");
        goto cleanup;
    }
    /* Keep the file's model order; a replaced model keeps its place, a new one goes last. The file's
     * major version is the largest any of its models needs (root attributes written after them). */
    int written = 0;
    int64_t major = add ? rec_major(add) : BL_MODELFILE_VERSION_MAJOR;
    for (size_t i = 0; i < old.n_recs; i++) {
        const bl_modelrec *other = old.recs[i];
        if (add && strcmp(other->name, add->name) == 0) {
            if ((st = write_model(dst_models, add, &pl, path, err)) != BL_OK) goto cleanup;
            written = 1;
        } else if (drop && strcmp(other->name, drop) == 0) {
            continue;
        } else {
            /* Re-written from its record rather than H5Ocopy: libhdf5 1.10.8 (Debian's) crashes
             * copying groups whose string attributes are in dense storage (HDF5 issue 2414). */
            if (rec_major(other) > major) major = rec_major(other);
            if ((st = write_model(dst_models, other, &pl, path, err)) != BL_OK) goto cleanup;
        }
    }
    if (add && !written && (st = write_model(dst_models, add, &pl, path, err)) != BL_OK) goto cleanup;
    if ((st = write_root_attrs(dst, &pl, path, major, err)) != BL_OK) goto cleanup;
    if (hook_fails(BL_MFPOINT_MODELS_WRITTEN)) goto injected;

    H5CLOSE(dst_models, H5Gclose);
    if (H5Fflush(dst, H5F_SCOPE_GLOBAL) < 0) {
        st = h5fail(err, BL_EINTERNAL, path, "cannot flush the new file in memory");
        goto cleanup;
    }
    herr_t cr = H5Fclose(dst); /* the file's bytes, final, come to cap.kept */
    dst = -1;
    image = cap.kept;
    cap.kept = NULL;
    const size_t isize = image ? image_length(image, cap.kept_size) : 0;
    if (cr < 0 || !image) {
        st = h5fail(err, BL_EINTERNAL, path, "cannot close the new file in memory");
        goto cleanup;
    }
    if (!isize) {
        st = bl_seterr(err, BL_EINTERNAL, "%s: the new file's superblock is not the expected one", path);
        goto cleanup;
    }
    header_write(image, isize);
    char *mem_name = malloc(strlen(tmp) + 24);
    if (!mem_name) {
        st = bl_seterr(err, BL_ENOMEM, "%s: out of memory", path);
        goto cleanup;
    }
    snprintf(mem_name, strlen(tmp) + 24, "/dev/null/%s.image", tmp); /* a name nothing on disk or open has */
    st = check_image(image, isize, path, mem_name, err);
    free(mem_name);
    if (st != BL_OK) goto cleanup;
    bl_mf_unlock();
    locked = 0;
    if (g_hook) bl_file_out_set_hook(out, stage_hook, NULL);
    if ((st = bl_file_out_write(out, image, isize, err)) == BL_OK) st = bl_file_out_commit(out, err);
    out = NULL; /* committed or, on failure, removed by the commit */
    goto cleanup;

injected:
    st = bl_seterr(err, BL_EIO, "%s: injected failure while saving model '%s'", path, what);
cleanup:
    if (locked || dst_models >= 0 || dst >= 0 || fcpl >= 0 || fapl >= 0 || pl.gcpl >= 0 || pl.lcpl >= 0 || pl.acpl >= 0) {
        if (!locked) bl_mf_lock();
        H5CLOSE(dst_models, H5Gclose);
        H5CLOSE(dst, H5Fclose);
        H5CLOSE(fcpl, H5Pclose);
        H5CLOSE(fapl, H5Pclose);
        plists_close(&pl);
        free(cap.kept);
        cap.kept = NULL;
        bl_mf_unlock();
    }
    bl_file_out_abort(out);
    bl_mf_result_clear(&old);
    free(image);
    return st;
}

/* A record handed to save is checked again here: its fields are public, so it may have been changed
 * by hand since the add functions checked them. */
static bl_status check_record(const bl_modelrec *rec, bl_error *err) {
    BL_CHECK_ARG(rec && bl_mf_valid_name(rec->name), err, "save: invalid record or model name");
    for (size_t i = 0; i < rec->n_blocks; i++) {
        const bl_mfblock *b = &rec->blocks[i];
        BL_CHECK_ARG(bl_mf_valid_name(b->name) && (b->rank == 1 || b->rank == 2) && b->rows >= 1 && b->cols >= 1 &&
                         (b->rank == 2 || b->cols == 1) && b->data,
                     err, "model '%s': block %zu ('%s') is malformed", rec->name, i, b->name ? b->name : "(null)");
    }
    for (size_t i = 0; i < rec->n_attrs; i++) {
        const bl_mfattr *a = &rec->attrs[i];
        BL_CHECK_ARG(a->group && bl_mf_valid_group(a->group) && bl_mf_valid_name(a->name), err,
                     "model '%s': attribute %zu has an invalid group or name", rec->name, i);
        int arr = a->type == BL_MFATTR_DOUBLES || a->type == BL_MFATTR_INT64S || a->type == BL_MFATTR_STRINGS;
        BL_CHECK_ARG(a->type >= BL_MFATTR_STRING && a->type <= BL_MFATTR_INT64S &&
                         (a->type != BL_MFATTR_STRING || a->v.s) && (!arr || a->count == 0 || a->v.dv),
                     err, "model '%s': attribute '%s/%s' is malformed", rec->name, a->group, a->name);
        if (a->type == BL_MFATTR_STRINGS)
            for (size_t k = 0; k < a->count; k++)
                BL_CHECK_ARG(a->v.sv[k], err, "model '%s': attribute '%s/%s': string %zu is NULL", rec->name,
                             a->group, a->name, k);
    }
    return BL_OK;
}

/* Saves, removes and rewrites run one at a time in a process, reading and replacing a file as one
 * step (two threads saving into one file each keep the other's model); loads never wait for them. */
static pthread_mutex_t g_save_lock = PTHREAD_MUTEX_INITIALIZER;

bl_status bl_modelfile_save(const char *path, const bl_modelrec *rec, bl_error *err) {
    BL_CHECK_ARG(path && *path, err, "save: path is empty");
    bl_status st = check_record(rec, err);
    if (st) return st;
    pthread_mutex_lock(&g_save_lock);
    st = rewrite(path, rec, NULL, BL_MF_STRICT, err);
    pthread_mutex_unlock(&g_save_lock);
    return st;
}

bl_status bl_modelfile_remove(const char *path, const char *name, bl_error *err) {
    BL_CHECK_ARG(path && *path && name, err, "remove: NULL argument");
    pthread_mutex_lock(&g_save_lock);
    bl_status st = rewrite(path, NULL, name, BL_MF_STRICT, err);
    pthread_mutex_unlock(&g_save_lock);
    return st;
}

bl_status bl_modelfile_rewrite(const char *path, int trust_edits, bl_error *err) {
    BL_CHECK_ARG(path && *path, err, "rewrite: path is empty");
    /* stamping is what a file without a header is refused for: asking for it is the trust */
    pthread_mutex_lock(&g_save_lock);
    bl_status st = rewrite(path, NULL, NULL, (trust_edits ? 0 : BL_MF_STRICT) | BL_MF_ALLOW_UNSTAMPED, err);
    pthread_mutex_unlock(&g_save_lock);
    return st;
}

/* ---- reading ---------------------------------------------------------------------------------------- */

/* Adds a value read from the file to rec under group/name (copying; the caller clears val). */
static bl_status add_read_attr(bl_modelrec *rec, const char *group, const char *name, const bl_mfattr *val,
                               bl_error *err) {
    switch (val->type) {
    case BL_MFATTR_STRING: return bl_modelrec_add_string(rec, group, name, val->v.s, err);
    case BL_MFATTR_INT64: return bl_modelrec_add_int(rec, group, name, val->v.i, err);
    case BL_MFATTR_DOUBLE: return bl_modelrec_add_double(rec, group, name, val->v.d, err);
    case BL_MFATTR_DOUBLES: return bl_modelrec_add_doubles(rec, group, name, val->v.dv, val->count, err);
    case BL_MFATTR_INT64S: return bl_modelrec_add_ints(rec, group, name, val->v.iv, val->count, err);
    case BL_MFATTR_STRINGS:
        return bl_modelrec_add_strings(rec, group, name, (const char *const *)val->v.sv, val->count, err);
    }
    return bl_seterr(err, BL_EINTERNAL, "bad attribute type");
}

/* Reads every attribute of loc into rec under group. */
static bl_status read_attrs_of(hid_t loc, bl_modelrec *rec, const char *group, const char *file, const char *where,
                               bl_error *err) {
    namelist an = {0};
    bl_status st = BL_OK;
    if (list_names(loc, 1, &an) != 0) {
        st = an.oom ? bl_seterr(err, BL_ENOMEM, "out of memory")
                    : h5fail(err, BL_EFORMAT, file, "cannot list the attributes of %s", where);
        goto cleanup;
    }
    for (size_t i = 0; i < an.n; i++) {
        bl_mfattr val;
        if ((st = read_attr(loc, an.names[i], &val, file, where, err)) != BL_OK) goto cleanup;
        st = add_read_attr(rec, group, an.names[i], &val, err);
        bl_mf_attr_clear(&val);
        if (st != BL_OK) {
            /* a name the file allows but a record does not (e.g. a control character) */
            bl_prefixerr(err, "%s: %s", file, where);
            if (st != BL_ENOMEM) st = BL_EFORMAT;
            if (err) err->status = st;
            goto cleanup;
        }
    }
cleanup:
    namelist_clear(&an);
    return st;
}

/* Reads the datasets of a weights group: each must be float64 with rank 1 or 2 and no empty axis. */
static bl_status read_weights(hid_t w, bl_modelrec *rec, const char *file, bl_error *err) {
    namelist dn = {0};
    bl_status st = BL_OK;
    hid_t d = -1, t = -1, sp = -1;
    double *buf = NULL;
    char where[2 * BL_MODELFILE_NAME_MAX + 32];
    if (list_names(w, 0, &dn) != 0) {
        st = dn.oom ? bl_seterr(err, BL_ENOMEM, "out of memory")
                    : h5fail(err, BL_EFORMAT, file, "cannot list /models/%s/weights", rec->name);
        goto cleanup;
    }
    for (size_t i = 0; i < dn.n; i++) {
        snprintf(where, sizeof where, "/models/%s/weights/%s", rec->name, dn.names[i]);
        H5L_info_t li;
        if (H5Lget_info(w, dn.names[i], &li, H5P_DEFAULT) < 0 || li.type != H5L_TYPE_HARD ||
            (d = H5Oopen(w, dn.names[i], H5P_DEFAULT)) < 0 || H5Iget_type(d) != H5I_DATASET) {
            st = h5fail(err, BL_EFORMAT, file, "%s is not a dataset", where);
            goto cleanup;
        }
        if ((t = H5Dget_type(d)) < 0 || H5Tget_class(t) != H5T_FLOAT || H5Tget_size(t) != 8) {
            st = h5fail(err, BL_EFORMAT, file, "dataset %s is not float64", where);
            goto cleanup;
        }
        /* Plain storage only: a filter could inflate a small file (or run a plugin), external or
         * virtual storage would read other files. libbellamy writes contiguous datasets. */
        hid_t dcpl = H5Dget_create_plist(d);
        H5D_layout_t lay = dcpl < 0 ? H5D_LAYOUT_ERROR : H5Pget_layout(dcpl);
        int nfilt = dcpl < 0 ? -1 : H5Pget_nfilters(dcpl), next = dcpl < 0 ? -1 : H5Pget_external_count(dcpl);
        if (dcpl >= 0) H5Pclose(dcpl);
        if ((lay != H5D_CONTIGUOUS && lay != H5D_COMPACT && lay != H5D_CHUNKED) || nfilt != 0 || next != 0) {
            st = h5fail(err, BL_EFORMAT, file, "dataset %s is filtered, external or virtual (plain storage expected)",
                        where);
            goto cleanup;
        }
        hsize_t dims[2] = {0, 1};
        int rank = (sp = H5Dget_space(d)) < 0 || H5Sget_simple_extent_type(sp) != H5S_SIMPLE
                       ? -1 : H5Sget_simple_extent_ndims(sp);
        if (rank != 1 && rank != 2) {
            st = h5fail(err, BL_EFORMAT, file, "dataset %s has rank %d (must be 1 or 2)", where, rank);
            goto cleanup;
        }
        H5Sget_simple_extent_dims(sp, dims, NULL);
        size_t n;
        if (dims[0] == 0 || dims[1] == 0 || dims[0] > SIZE_MAX || dims[1] > SIZE_MAX ||
            bl_mul_size((size_t)dims[0], (size_t)dims[1], &n) || n > ((size_t)1 << 52) ||
            (g_image_cap && n > g_image_cap / 8)) { /* a dataset's values take room in the file */
            st = bl_seterr(err, BL_EFORMAT, "%s: dataset %s has an empty or too large shape", file, where);
            goto cleanup;
        }
        if (!(buf = malloc(n * sizeof *buf))) {
            st = bl_seterr(err, BL_ENOMEM, "out of memory");
            goto cleanup;
        }
        if (H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0) {
            st = h5fail(err, BL_EFORMAT, file, "cannot read dataset %s", where);
            goto cleanup;
        }
        if ((st = bl_modelrec_add_block(rec, dn.names[i], rank, (size_t)dims[0], (size_t)dims[1], buf, err)) != BL_OK) {
            bl_prefixerr(err, "%s: %s", file, where);
            goto cleanup;
        }
        free(buf);
        buf = NULL;
        H5CLOSE(sp, H5Sclose);
        H5CLOSE(t, H5Tclose);
        H5CLOSE(d, H5Oclose);
    }
cleanup:
    free(buf);
    H5CLOSE(sp, H5Sclose);
    H5CLOSE(t, H5Tclose);
    H5CLOSE(d, H5Oclose);
    namelist_clear(&dn);
    return st;
}

/* Reads an attribute group (its attributes, then its sub-groups, recursively) into rec. group is the
 * path below the model group ("" for the model group itself, whose "weights" is read separately). */
static bl_status read_group(hid_t g, bl_modelrec *rec, const char *group, int depth, const char *file,
                            bl_error *err) {
    char where[2 * BL_MODELFILE_NAME_MAX + 32];
    snprintf(where, sizeof where, "/models/%s%s%s", rec->name, *group ? "/" : "", group);
    if (depth > BL_MODELFILE_GROUP_DEPTH_MAX)
        return bl_seterr(err, BL_EFORMAT, "%s: group %s is nested too deeply", file, where);
    if (g_groups_left == 0)
        return bl_seterr(err, BL_EFORMAT, "%s: model '%s' has more than %d groups", file, rec->name, GROUPS_PER_MODEL_MAX);
    g_groups_left--;
    bl_status st = read_attrs_of(g, rec, group, file, where, err);
    if (st) return st;
    namelist ln = {0};
    if (list_names(g, 0, &ln) != 0)
        return ln.oom ? bl_seterr(err, BL_ENOMEM, "out of memory")
                      : h5fail(err, BL_EFORMAT, file, "cannot list group %s", where);
    for (size_t i = 0; i < ln.n && st == BL_OK; i++) {
        if (depth == 0 && strcmp(ln.names[i], "weights") == 0) continue;
        H5L_info_t li;
        if (H5Lget_info(g, ln.names[i], &li, H5P_DEFAULT) < 0 || li.type != H5L_TYPE_HARD) continue;
        hid_t o = H5Oopen(g, ln.names[i], H5P_DEFAULT);
        if (o < 0) continue;
        if (H5Iget_type(o) == H5I_GROUP) { /* datasets outside weights/ are not ours: ignored */
            char sub[BL_MODELFILE_NAME_MAX + 2];
            int w = snprintf(sub, sizeof sub, "%s%s%s", group, *group ? "/" : "", ln.names[i]);
            if (w < 0 || (size_t)w >= sizeof sub)
                st = bl_seterr(err, BL_EFORMAT, "%s: group path %s/%s is too long", file, where, ln.names[i]);
            else
                st = read_group(o, rec, sub, depth + 1, file, err);
        }
        H5Oclose(o);
    }
    H5Eclear2(H5E_DEFAULT);
    namelist_clear(&ln);
    return st;
}

/* Opens a hard-linked group (never a soft or external link, which could lead to another file). */
static hid_t open_hard_group(hid_t loc, const char *name) {
    H5L_info_t li;
    if (H5Lexists(loc, name, H5P_DEFAULT) <= 0 || H5Lget_info(loc, name, &li, H5P_DEFAULT) < 0 ||
        li.type != H5L_TYPE_HARD)
        return -1;
    return H5Gopen2(loc, name, H5P_DEFAULT);
}

/* Model `name` (one of list_models') of a file already open and checked (path for messages). */
static bl_status load_one(hid_t f, const char *path, const char *name, bl_modelrec **out, bl_error *err) {
    hid_t g = -1, w = -1;
    bl_modelrec *rec = NULL;
    bl_status st;
    if ((st = bl_modelrec_new(name, &rec, err)) != BL_OK) {
        bl_prefixerr(err, "%s", path);
        st = st == BL_ENOMEM ? st : BL_EFORMAT;
        if (err) err->status = st;
        goto cleanup;
    }
    if ((g = open_hard_group(f, "models")) < 0) {
        st = h5fail(err, BL_EFORMAT, path, "cannot open group /models");
        goto cleanup;
    }
    hid_t m = open_hard_group(g, name);
    H5Gclose(g);
    g = m;
    if (g < 0) {
        st = h5fail(err, BL_EFORMAT, path, "cannot open group /models/%s", name);
        goto cleanup;
    }
    if ((w = open_hard_group(g, "weights")) < 0) {
        st = h5fail(err, BL_EFORMAT, path, "model '%s' has no group /models/%s/weights", name, name);
        goto cleanup;
    }
    g_groups_left = GROUPS_PER_MODEL_MAX;
    if ((st = read_weights(w, rec, path, err)) != BL_OK) goto cleanup;
    if ((st = read_group(g, rec, "", 0, path, err)) != BL_OK) goto cleanup;
    *out = rec;
    rec = NULL;
cleanup:
    bl_modelrec_free(rec);
    H5CLOSE(w, H5Gclose);
    H5CLOSE(g, H5Gclose);
    return st;
}

/* The op on a file open and checked: names, then the model(s) asked for. */
static bl_status parse_open(hid_t f, const char *label, bl_mf_op op, const char *name, bl_mf_result *out,
                            bl_error *err) {
    namelist names = {0};
    bl_status st = list_models(f, label, &names, err);
    if (st != BL_OK) return st;
    out->names = names.names;
    out->n_names = names.n;
    if (op == BL_MF_OP_LIST) return BL_OK;
    char list[256];
    join_names(&names, list, sizeof list);
    if (op == BL_MF_OP_LOAD && !name) {
        if (names.n != 1)
            return bl_seterr(err, names.n ? BL_EINVAL : BL_ENOTFOUND, "%s: %s; name the model to load (models "
                             "present: %s)", label, names.n ? "the file holds several models" : "the file holds no "
                             "model", list);
        name = names.names[0];
    } else if (op == BL_MF_OP_LOAD) {
        int found = 0;
        for (size_t i = 0; i < names.n; i++) found |= strcmp(names.names[i], name) == 0;
        if (!found) return bl_seterr(err, BL_ENOTFOUND, "%s: no model '%s' (models present: %s)", label, name, list);
    }
    const size_t want = op == BL_MF_OP_LOAD ? 1 : names.n;
    if (!(out->recs = calloc(want ? want : 1, sizeof *out->recs))) return bl_seterr(err, BL_ENOMEM, "out of memory");
    for (size_t i = 0; i < want; i++) {
        if ((st = load_one(f, label, op == BL_MF_OP_LOAD ? name : names.names[i], &out->recs[i], err)) != BL_OK)
            return st;
        out->n_recs++;
    }
    return BL_OK;
}

bl_status bl_mf_parse_image(const char *label, const unsigned char *img, size_t size, bl_mf_op op, const char *name,
                            bl_mf_result *out, bl_error *err) {
    memset(out, 0, sizeof *out);
    if (size == 0) return bl_seterr(err, BL_EFORMAT, "%s: empty file, not an HDF5 model file", label);
    bl_mf_lock();
    H5PLset_loading_state(0); /* a file names filters; HDF5 would look for plugins to run them */
    g_image_cap = size;
    hid_t f = -1;
    bl_status st = open_image(label, img, size, &f, err);
    if (st == BL_OK) st = parse_open(f, label, op, name, out, err);
    H5CLOSE(f, H5Fclose);
    g_image_cap = 0;
    bl_mf_unlock();
    if (st != BL_OK) bl_mf_result_clear(out);
    return st;
}

bl_status bl_modelfile_load_ex(const char *path, const char *name, unsigned flags, bl_modelrec **out,
                               bl_error *err) {
    BL_CHECK_ARG(path && *path && out, err, "load: NULL argument");
    *out = NULL;
    bl_mf_result r;
    bl_status st = read_file(path, BL_MF_OP_LOAD, name, flags & BL_MF_ALLOW_UNSTAMPED, &r, err);
    if (st == BL_OK) {
        *out = r.recs[0];
        r.recs[0] = NULL;
    }
    bl_mf_result_clear(&r);
    return st;
}

bl_status bl_modelfile_load(const char *path, const char *name, bl_modelrec **out, bl_error *err) {
    return bl_modelfile_load_ex(path, name, 0, out, err);
}

bl_status bl_modelfile_list_ex(const char *path, unsigned flags, char ***names, size_t *n, bl_error *err) {
    BL_CHECK_ARG(path && *path && names && n, err, "list: NULL argument");
    *names = NULL;
    *n = 0;
    bl_mf_result r;
    bl_status st = read_file(path, BL_MF_OP_LIST, NULL, flags & BL_MF_ALLOW_UNSTAMPED, &r, err);
    if (st == BL_OK) {
        *names = r.names;
        *n = r.n_names;
        r.names = NULL;
        r.n_names = 0;
    }
    bl_mf_result_clear(&r);
    return st;
}

bl_status bl_modelfile_list(const char *path, char ***names, size_t *n, bl_error *err) {
    return bl_modelfile_list_ex(path, 0, names, n, err);
}

void bl_modelfile_names_free(char **names, size_t n) {
    if (!names) return;
    for (size_t i = 0; i < n; i++) free(names[i]);
    free(names);
}
