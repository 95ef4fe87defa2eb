/* write.c — saving model records: the complete new file is built in memory (HDF5's core driver), the
 * target's other models re-written from their records (not H5Ocopy, see rewrite()), checked to read
 * back, stamped with the checksum header, and then replaced by the one policy of common/file.h. HDF5
 * never writes to the disk itself, so a full disk or a file-size limit is an ordinary write error and
 * nothing of HDF5's stays open after a failure. Not here: reading (read.c). */
#include "modelfile/h5.h"
#include "common/error.h"
#include "common/file.h"
#include "bl_config.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---- test hook ------------------------------------------------------------------------------------ */

static pthread_mutex_t g_hook_lock = PTHREAD_MUTEX_INITIALIZER;
static bl_mf_hook g_hook;
static void *g_hook_ctx;

void bl_mf_set_test_hook(bl_mf_hook hook, void *ctx) {
    pthread_mutex_lock(&g_hook_lock);
    g_hook = hook;
    g_hook_ctx = ctx;
    pthread_mutex_unlock(&g_hook_lock);
}

static int hook_fails(bl_mf_point p) { return g_hook && g_hook(p, g_hook_ctx) != 0; }
/* The commit's stages as the points of a save. */
static int stage_hook(bl_file_stage s, void *ctx) {
    (void)ctx;
    return hook_fails(s == BL_FILE_WRITTEN ? BL_MFPOINT_CLOSED : BL_MFPOINT_BEFORE_RENAME);
}

/* ---- writing ---------------------------------------------------------------------------------------- */

typedef struct wplists {
    hid_t gcpl; /* groups: track and index link and attribute creation order */
    hid_t lcpl; /* links: UTF-8 names */
    hid_t acpl; /* attributes: UTF-8 names */
} wplists;

/* Opens or creates the group path ("a/b") below loc. */
static hid_t open_group_path(hid_t loc, const char *path, const wplists *pl) {
    char buf[BL_MF_NAME_MAX + 1];
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
    float *fbuf = NULL;
    char where[2 * BL_MF_NAME_MAX + 32];
    if ((g = H5Gcreate2(models, rec->name, pl->lcpl, pl->gcpl, H5P_DEFAULT)) < 0 ||
        (w = H5Gcreate2(g, "weights", pl->lcpl, pl->gcpl, H5P_DEFAULT)) < 0) {
        st = bl_mf_h5fail(err, BL_EIO, file, "cannot create group /models/%s", rec->name);
        goto cleanup;
    }
    int f32 = 0; /* checked (check_record; a re-written model as its load read it) */
    if ((st = bl_modelrec_precision(rec, file, &f32, err)) != BL_OK) goto cleanup;
    for (size_t i = 0; i < rec->n_blocks; i++) {
        const bl_mfblock *b = &rec->blocks[i];
        hsize_t dims[2] = {(hsize_t)b->rows, (hsize_t)b->cols};
        if (f32) { /* each value rounded to the nearest float (its range checked by check_record) */
            const size_t n = b->rows * b->cols;
            if (!(fbuf = malloc(n * sizeof *fbuf))) {
                st = bl_seterr(err, BL_ENOMEM, "%s: out of memory", file);
                goto cleanup;
            }
            for (size_t k = 0; k < n; k++) fbuf[k] = (float)b->data[k];
        }
        if ((sp = H5Screate_simple(b->rank, dims, NULL)) < 0 ||
            (d = H5Dcreate2(w, b->name, f32 ? H5T_IEEE_F32LE : H5T_IEEE_F64LE, sp, pl->lcpl, H5P_DEFAULT,
                            H5P_DEFAULT)) < 0 ||
            H5Dwrite(d, f32 ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT,
                     f32 ? (const void *)fbuf : (const void *)b->data) < 0) {
            st = bl_mf_h5fail(err, BL_EIO, file, "cannot write dataset /models/%s/weights/%s", rec->name, b->name);
            goto cleanup;
        }
        free(fbuf);
        fbuf = NULL;
        H5CLOSE(d, H5Dclose);
        H5CLOSE(sp, H5Sclose);
    }
    for (size_t i = 0; i < rec->n_attrs; i++) {
        const bl_mfattr *a = &rec->attrs[i];
        snprintf(where, sizeof where, "/models/%s/%s%s", rec->name, a->group, *a->group ? "/" : "");
        if ((loc = *a->group ? open_group_path(g, a->group, pl) : H5Gopen2(g, ".", H5P_DEFAULT)) < 0) {
            st = bl_mf_h5fail(err, BL_EIO, file, "cannot create group %s", where);
            goto cleanup;
        }
        if ((st = bl_mf_h5_write_attr(loc, a, pl->acpl, file, where, err)) != BL_OK) goto cleanup;
        H5CLOSE(loc, H5Gclose);
    }
cleanup:
    free(fbuf);
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
        if (!*a->group && strcmp(a->name, BL_MF_MAJOR_ATTR) == 0 && a->type == BL_MFATTR_INT64 && a->count == 1)
            return a->v.i > BL_MF_VERSION_MAJOR ? a->v.i : BL_MF_VERSION_MAJOR;
    }
    return BL_MF_VERSION_MAJOR;
}

/* Writes the root attributes: format, format_version ("1.3", or "2.1" when a model needs major 2),
 * its parts as integers, library_version. */
static bl_status write_root_attrs(hid_t fid, const wplists *pl, const char *file, int64_t major, bl_error *err) {
    char ver[32];
    const int64_t minor = major == BL_MF_VERSION_MAJOR ? BL_MF_VERSION_MINOR
                          : major == 2                         ? BL_MF_VERSION_MINOR_2
                                                               : BL_MF_VERSION_MINOR_3;
    snprintf(ver, sizeof ver, "%lld.%lld", (long long)major, (long long)minor);
    char *sfmt = (char *)BL_MF_FORMAT, *sver = ver, *slib = (char *)BL_VERSION;
    const bl_mfattr attrs[] = {
        {.group = "", .name = "format", .type = BL_MFATTR_STRING, .count = 1, .v.s = sfmt},
        {.group = "", .name = "format_version", .type = BL_MFATTR_STRING, .count = 1, .v.s = sver},
        {.group = "", .name = "format_version_major", .type = BL_MFATTR_INT64, .count = 1, .v.i = major},
        {.group = "", .name = "format_version_minor", .type = BL_MFATTR_INT64, .count = 1, .v.i = minor},
        {.group = "", .name = "library_version", .type = BL_MFATTR_STRING, .count = 1, .v.s = slib},
    };
    for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; i++) {
        bl_status st = bl_mf_h5_write_attr(fid, &attrs[i], pl->acpl, file, "/", err);
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
 * base address BL_MF_HEADER_SIZE, 8-byte addresses) stores, which counts from the file's first byte. 0 when the
 * superblock is not one of those or the address lies outside the buffer. */
static size_t image_length(const unsigned char *img, size_t buf_size) {
    static const unsigned char sig[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
    const size_t sb = BL_MF_HEADER_SIZE;
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
        st = bl_mf_h5fail(err, BL_EINTERNAL, path, "cannot make a property list");
    else if ((f = H5Fopen(mem_name, H5F_ACC_RDONLY, fapl)) < 0)
        st = bl_mf_h5fail(err, BL_EINTERNAL, path, "the new file does not read back");
    else
        st = bl_mf_h5_check_root(f, path, err);
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
    if (exists && (st = bl_mf_read_file(path, BL_MF_OP_ALL, NULL, flags, &old, err)) != BL_OK) {
        bl_prefixerr(err, "refusing to overwrite");
        goto cleanup;
    }
    if (drop) {
        int found = 0;
        for (size_t i = 0; i < old.n_names; i++) found |= strcmp(old.names[i], drop) == 0;
        if (!found) {
            bl_mf_names nl = {old.names, old.n_names, old.n_names, 0};
            char list[256];
            bl_mf_join_names(&nl, list, sizeof list);
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
        H5Pset_userblock(fcpl, BL_MF_HEADER_SIZE) < 0 ||
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
        st = bl_mf_h5fail(err, BL_EINTERNAL, path, "cannot make property lists");
        goto cleanup;
    }
    if ((dst = H5Fcreate(tmp, H5F_ACC_TRUNC, fcpl, fapl)) < 0) {
        st = bl_mf_h5fail(err, BL_EIO, path, "cannot create temporary file '%s'", tmp);
        goto cleanup;
    }
    if ((dst_models = H5Gcreate2(dst, "models", pl.lcpl, pl.gcpl, H5P_DEFAULT)) < 0) {
        st = bl_mf_h5fail(err, BL_EIO, path, "cannot create group /models");
        goto cleanup;
    }
    /* Keep the file's model order; a replaced model keeps its place, a new one goes last. The file's
     * major version is the largest any of its models needs (root attributes written after them). */
    int written = 0;
    int64_t major = add ? rec_major(add) : BL_MF_VERSION_MAJOR;
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
        st = bl_mf_h5fail(err, BL_EINTERNAL, path, "cannot flush the new file in memory");
        goto cleanup;
    }
    herr_t cr = H5Fclose(dst); /* the file's bytes, final, come to cap.kept */
    dst = -1;
    image = cap.kept;
    cap.kept = NULL;
    const size_t isize = image ? image_length(image, cap.kept_size) : 0;
    if (cr < 0 || !image) {
        st = bl_mf_h5fail(err, BL_EINTERNAL, path, "cannot close the new file in memory");
        goto cleanup;
    }
    if (!isize) {
        st = bl_seterr(err, BL_EINTERNAL, "%s: the new file's superblock is not the expected one", path);
        goto cleanup;
    }
    bl_mf_header_write(image, isize);
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
    if ((st = bl_file_out_write(out, image, isize, err)) == BL_OK) {
        st = bl_file_out_commit(out, err);
        out = NULL; /* committed or, on failure, removed by the commit */
    } /* else a failed write (an image over the write buffer, on a full disk): the abort below removes it */
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
static bl_status check_record(const bl_modelrec *rec, const char *path, bl_error *err) {
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
    /* float32 weights: the attribute one of ours, every value one a float holds (else nothing is written:
     * the file, if any, stays as it was) */
    int f32 = 0;
    bl_status st = bl_modelrec_precision(rec, path, &f32, err);
    if (st != BL_OK) {
        if (err) err->status = BL_EINVAL;
        return BL_EINVAL;
    }
    for (size_t i = 0; f32 && i < rec->n_blocks; i++) {
        const bl_mfblock *b = &rec->blocks[i];
        for (size_t k = 0; k < b->rows * b->cols; k++) {
            const double x = b->data[k];
            if (isnan(x) || isinf(x))
                return bl_seterr(err, BL_EINVAL, "%s: model '%s': block '%s' holds %g at element %zu (finite numbers "
                                 "expected); nothing was written", path, rec->name, b->name, x, k);
            if (fabs(x) > FLT_MAX)
                return bl_seterr(err, BL_ERANGE, "%s: model '%s' has precision f32, but its weight '%s' holds %g at "
                                 "element %zu, beyond float32's range (|w| <= %g); nothing was written (the file is "
                                 "as it was): train the model again, or with precision f64", path, rec->name, b->name,
                                 x, k, (double)FLT_MAX);
        }
    }
    return BL_OK;
}

/* Saves, removes and rewrites run one at a time in a process, reading and replacing a file as one
 * step (two threads saving into one file each keep the other's model); loads never wait for them. */
static pthread_mutex_t g_save_lock = PTHREAD_MUTEX_INITIALIZER;

bl_status bl_mf_save(const char *path, const bl_modelrec *rec, bl_error *err) {
    BL_CHECK_ARG(path && *path, err, "save: path is empty");
    bl_status st = check_record(rec, path, err);
    if (st) return st;
    pthread_mutex_lock(&g_save_lock);
    st = rewrite(path, rec, NULL, BL_MF_STRICT, err);
    pthread_mutex_unlock(&g_save_lock);
    return st;
}

bl_status bl_mf_remove(const char *path, const char *name, bl_error *err) {
    BL_CHECK_ARG(path && *path && name, err, "remove: NULL argument");
    pthread_mutex_lock(&g_save_lock);
    bl_status st = rewrite(path, NULL, name, BL_MF_STRICT, err);
    pthread_mutex_unlock(&g_save_lock);
    return st;
}

bl_status bl_mf_rewrite(const char *path, int trust_edits, bl_error *err) {
    BL_CHECK_ARG(path && *path, err, "rewrite: path is empty");
    /* stamping is what a file without a header is refused for: asking for it is the trust */
    pthread_mutex_lock(&g_save_lock);
    bl_status st = rewrite(path, NULL, NULL, (trust_edits ? 0 : BL_MF_STRICT) | BL_MF_ALLOW_UNSTAMPED, err);
    pthread_mutex_unlock(&g_save_lock);
    return st;
}
