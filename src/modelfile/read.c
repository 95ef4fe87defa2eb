/* read.c — reading model files: a file read whole, its header checked (checksum.c), the bytes handed
 * to the reader process (isolate.c), which alone runs the HDF5 half below: open the image, check the
 * root attributes, list /models, read one model group (weights, then attribute groups) into a
 * bl_modelrec. Every HDF5 allocation is bounded by the image's size. Not here: interpreting blocks and
 * attributes (the model's job), writing (write.c). */
#include "modelfile/h5.h"
#include "common/error.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Groups a model may still have (links may share one group many times); under the lock. */
static size_t g_groups_left;
#define GROUPS_PER_MODEL_MAX 4096

/* ---- opening and checking a file ------------------------------------------------------------------ */

/* HDF5's signature at byte 0, 512, 1024, 2048, ... (where HDF5 looks for it) of a file in memory. */
static int has_hdf5_signature(const unsigned char *buf, size_t size) {
    static const unsigned char sig[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
    for (size_t off = 0; off + 8 <= size; off = off ? off * 2 : 512)
        if (memcmp(buf + off, sig, 8) == 0) return 1;
    return 0;
}

/* Opens a file image in memory with HDF5 and checks its root attributes; *fid >= 0 on success.
 * Under the lock; only the reader process parses a file that came from the disk this way. */
static bl_status open_image(const char *label, const unsigned char *img, size_t size, hid_t *fid, bl_error *err) {
    *fid = -1;
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl < 0 || H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG) < 0 || H5Pset_fapl_core(fapl, 1 << 16, 0) < 0 ||
        H5Pset_file_image(fapl, (void *)img, size) < 0) { /* copies the image */
        H5CLOSE(fapl, H5Pclose);
        return bl_mf_h5fail(err, BL_ENOMEM, label, "cannot hold the file's image in memory (out of memory)");
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
    bl_mf_h5_inner(inner, sizeof inner); /* before H5Pclose, which would clear the error stack */
    H5Pclose(fapl);
    if (f < 0) {
        if (!has_hdf5_signature(img, size)) return bl_seterr(err, BL_EFORMAT, "%s: not an HDF5 file", label);
        return bl_seterr(err, BL_EFORMAT, "%s: damaged or truncated HDF5 file%s%s%s", label, inner[0] ? " (HDF5: " : "",
                         inner, inner[0] ? ")" : "");
    }
    bl_status st = bl_mf_h5_check_root(f, label, err);
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
    bl_status st = bl_mf_header_check(img, size, label, (flags & BL_MF_STRICT) != 0, &has, err);
    if (st != BL_OK) return st;
    if (size == 0) return bl_seterr(err, BL_EFORMAT, "%s: empty file, not an HDF5 model file", label);
    if (!has_hdf5_signature(img, size)) return bl_seterr(err, BL_EFORMAT, "%s: not an HDF5 file", label);
    /* Without a header nothing vouches for the bytes: a damaged or crafted file would load with other
     * weights than were written. Whoever trusts the file says so once (--stamp) or per load. */
    if (has == 0 && !(flags & BL_MF_ALLOW_UNSTAMPED) && !env_allow_unstamped()) {
        /* Stamping is advice for a Bellamy model file only: another program's HDF5 file is named as
         * what it is (the reader process parses it, so a damaged one cannot harm this one). */
        bl_error e = {BL_OK, ""};
        bl_mf_result probe;
        st = bl_mf_parse_isolated(label, img, size, BL_MF_OP_LIST, NULL, &probe, &e);
        if (st == BL_OK) bl_mf_result_clear(&probe);
        if (st != BL_OK && strstr(e.message, "not a Bellamy model file")) {
            if (err) *err = e;
            return st;
        }
        return bl_seterr(err, BL_EFORMAT, "%s: no checksum header (written before libbellamy 0.4.1 or by another "
                         "program), so its contents cannot be verified; if you trust the file, stamp it once with "
                         "'bellamy-train check --model FILE --stamp', or load it unverified with "
                         "BELLAMY_MODEL_ALLOW_UNSTAMPED=1", label);
    }
    return bl_mf_parse_isolated(label, img, size, op, name, out, err);
}

/* The file at path read whole and through bl_mf_read_image. */
bl_status bl_mf_read_file(const char *path, bl_mf_op op, const char *name, unsigned flags, bl_mf_result *out,
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
    bl_status st = bl_mf_read_whole(path, &buf, &size, err);
    if (st != BL_OK) return st;
    st = bl_mf_read_image(path, buf, size, op, name, flags, out, err);
    free(buf);
    return st;
}

/* Names of the models (hard-linked groups) under /models of an open, checked file. */
static bl_status list_models(hid_t fid, const char *path, bl_mf_names *out, bl_error *err) {
    memset(out, 0, sizeof *out);
    hid_t models = H5Gopen2(fid, "models", H5P_DEFAULT);
    if (models < 0) return bl_mf_h5fail(err, BL_EFORMAT, path, "cannot open group /models");
    bl_mf_names all = {0};
    bl_status st = BL_OK;
    if (bl_mf_h5_names(models, 0, &all) != 0) {
        st = all.oom ? bl_seterr(err, BL_ENOMEM, "out of memory") : bl_mf_h5fail(err, BL_EFORMAT, path, "cannot list /models");
        goto cleanup;
    }
    for (size_t i = 0; i < all.n; i++) {
        H5L_info_t li;
        if (H5Lget_info(models, all.names[i], &li, H5P_DEFAULT) < 0) {
            st = bl_mf_h5fail(err, BL_EFORMAT, path, "damaged file: cannot read the link /models/%s", all.names[i]);
            goto cleanup;
        }
        if (li.type != H5L_TYPE_HARD) continue; /* soft or external links are not models */
        hid_t o = H5Oopen(models, all.names[i], H5P_DEFAULT);
        if (o < 0) {
            st = bl_mf_h5fail(err, BL_EFORMAT, path, "damaged file: cannot open /models/%s", all.names[i]);
            goto cleanup;
        }
        int isgroup = H5Iget_type(o) == H5I_GROUP;
        H5Oclose(o);
        if (isgroup && !bl_mf_valid_name(all.names[i])) {
            st = bl_seterr(err, BL_EFORMAT, "%s: damaged file: /models holds a group whose name is not a model name",
                           path);
            goto cleanup;
        }
        if (isgroup && bl_mf_names_push(out, all.names[i])) {
            st = bl_seterr(err, BL_ENOMEM, "out of memory");
            goto cleanup;
        }
    }
    H5Eclear2(H5E_DEFAULT);
cleanup:
    if (st != BL_OK) bl_mf_names_clear(out);
    bl_mf_names_clear(&all);
    H5Gclose(models);
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
    bl_mf_names an = {0};
    bl_status st = BL_OK;
    if (bl_mf_h5_names(loc, 1, &an) != 0) {
        st = an.oom ? bl_seterr(err, BL_ENOMEM, "out of memory")
                    : bl_mf_h5fail(err, BL_EFORMAT, file, "cannot list the attributes of %s", where);
        goto cleanup;
    }
    for (size_t i = 0; i < an.n; i++) {
        bl_mfattr val;
        if ((st = bl_mf_h5_read_attr(loc, an.names[i], &val, file, where, err)) != BL_OK) goto cleanup;
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
    bl_mf_names_clear(&an);
    return st;
}

/* Reads the datasets of a weights group: each must be float64 (f32: float32, the model's attribute
 * precision "f32") with rank 1 or 2 and no empty axis. */
static bl_status read_weights(hid_t w, bl_modelrec *rec, const char *file, int f32, bl_error *err) {
    bl_mf_names dn = {0};
    bl_status st = BL_OK;
    hid_t d = -1, t = -1, sp = -1;
    double *buf = NULL;
    float *fbuf = NULL;
    const size_t esize = f32 ? 4 : 8;
    char where[2 * BL_MF_NAME_MAX + 32];
    if (bl_mf_h5_names(w, 0, &dn) != 0) {
        st = dn.oom ? bl_seterr(err, BL_ENOMEM, "out of memory")
                    : bl_mf_h5fail(err, BL_EFORMAT, file, "cannot list /models/%s/weights", rec->name);
        goto cleanup;
    }
    for (size_t i = 0; i < dn.n; i++) {
        snprintf(where, sizeof where, "/models/%s/weights/%s", rec->name, dn.names[i]);
        H5L_info_t li;
        if (H5Lget_info(w, dn.names[i], &li, H5P_DEFAULT) < 0 || li.type != H5L_TYPE_HARD ||
            (d = H5Oopen(w, dn.names[i], H5P_DEFAULT)) < 0 || H5Iget_type(d) != H5I_DATASET) {
            st = bl_mf_h5fail(err, BL_EFORMAT, file, "%s is not a dataset", where);
            goto cleanup;
        }
        if ((t = H5Dget_type(d)) < 0 || H5Tget_class(t) != H5T_FLOAT || H5Tget_size(t) != esize) {
            if (f32)
                st = bl_mf_h5fail(err, BL_EFORMAT, file, "dataset %s is not float32, as the model's attribute "
                                  "precision \"f32\" says its weights are", where);
            else
                st = bl_mf_h5fail(err, BL_EFORMAT, file, "dataset %s is not float64%s", where,
                                  t >= 0 && H5Tget_class(t) == H5T_FLOAT && H5Tget_size(t) == 4
                                      ? " (float32 weights need the model attribute precision = \"f32\")" : "");
            goto cleanup;
        }
        /* Plain storage only: a filter could inflate a small file (or run a plugin), external or
         * virtual storage would read other files. libbellamy writes contiguous datasets. */
        hid_t dcpl = H5Dget_create_plist(d);
        H5D_layout_t lay = dcpl < 0 ? H5D_LAYOUT_ERROR : H5Pget_layout(dcpl);
        int nfilt = dcpl < 0 ? -1 : H5Pget_nfilters(dcpl), next = dcpl < 0 ? -1 : H5Pget_external_count(dcpl);
        if (dcpl >= 0) H5Pclose(dcpl);
        if ((lay != H5D_CONTIGUOUS && lay != H5D_COMPACT && lay != H5D_CHUNKED) || nfilt != 0 || next != 0) {
            st = bl_mf_h5fail(err, BL_EFORMAT, file, "dataset %s is filtered, external or virtual (plain storage expected)",
                              where);
            goto cleanup;
        }
        hsize_t dims[2] = {0, 1};
        int rank = (sp = H5Dget_space(d)) < 0 || H5Sget_simple_extent_type(sp) != H5S_SIMPLE
                       ? -1 : H5Sget_simple_extent_ndims(sp);
        if (rank != 1 && rank != 2) {
            st = bl_mf_h5fail(err, BL_EFORMAT, file, "dataset %s has rank %d (must be 1 or 2)", where, rank);
            goto cleanup;
        }
        H5Sget_simple_extent_dims(sp, dims, NULL);
        size_t n;
        if (dims[0] == 0 || dims[1] == 0 || dims[0] > SIZE_MAX || dims[1] > SIZE_MAX ||
            bl_mul_size((size_t)dims[0], (size_t)dims[1], &n) || n > ((size_t)1 << 52) ||
            (bl_mf_image_cap && n > bl_mf_image_cap / esize)) { /* a dataset's values take room in the file */
            st = bl_seterr(err, BL_EFORMAT, "%s: dataset %s has an empty or too large shape", file, where);
            goto cleanup;
        }
        if (!(buf = malloc(n * sizeof *buf))) {
            st = bl_seterr(err, BL_ENOMEM, "out of memory");
            goto cleanup;
        }
        if (f32) { /* read as stored, each float then widened exactly (inf and NaN stay what they are) */
            if (!(fbuf = malloc(n * sizeof *fbuf))) {
                st = bl_seterr(err, BL_ENOMEM, "out of memory");
                goto cleanup;
            }
            if (H5Dread(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, fbuf) < 0) {
                st = bl_mf_h5fail(err, BL_EFORMAT, file, "cannot read dataset %s", where);
                goto cleanup;
            }
            for (size_t k = 0; k < n; k++) buf[k] = (double)fbuf[k];
            free(fbuf);
            fbuf = NULL;
        } else if (H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0) {
            st = bl_mf_h5fail(err, BL_EFORMAT, file, "cannot read dataset %s", where);
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
    free(fbuf);
    H5CLOSE(sp, H5Sclose);
    H5CLOSE(t, H5Tclose);
    H5CLOSE(d, H5Oclose);
    bl_mf_names_clear(&dn);
    return st;
}

/* Reads an attribute group (its attributes, then its sub-groups, recursively) into rec. group is the
 * path below the model group ("" for the model group itself, whose "weights" is read separately). */
static bl_status read_group(hid_t g, bl_modelrec *rec, const char *group, int depth, const char *file,
                            bl_error *err) {
    char where[2 * BL_MF_NAME_MAX + 32];
    snprintf(where, sizeof where, "/models/%s%s%s", rec->name, *group ? "/" : "", group);
    if (depth > BL_MF_GROUP_DEPTH_MAX)
        return bl_seterr(err, BL_EFORMAT, "%s: group %s is nested too deeply", file, where);
    if (g_groups_left == 0)
        return bl_seterr(err, BL_EFORMAT, "%s: model '%s' has more than %d groups", file, rec->name, GROUPS_PER_MODEL_MAX);
    g_groups_left--;
    bl_status st = read_attrs_of(g, rec, group, file, where, err);
    if (st) return st;
    bl_mf_names ln = {0};
    if (bl_mf_h5_names(g, 0, &ln) != 0)
        return ln.oom ? bl_seterr(err, BL_ENOMEM, "out of memory")
                      : bl_mf_h5fail(err, BL_EFORMAT, file, "cannot list group %s", where);
    for (size_t i = 0; i < ln.n && st == BL_OK; i++) {
        if (depth == 0 && strcmp(ln.names[i], "weights") == 0) continue;
        H5L_info_t li;
        if (H5Lget_info(g, ln.names[i], &li, H5P_DEFAULT) < 0) {
            st = bl_mf_h5fail(err, BL_EFORMAT, file, "damaged file: cannot read the link %s/%s", where, ln.names[i]);
            break;
        }
        if (li.type != H5L_TYPE_HARD) continue; /* soft and external links are not ours: ignored */
        /* an object the file names but HDF5 cannot open is damage, not absence: a group of the model
         * skipped here (its guard, say) would change predictions without a word */
        hid_t o = H5Oopen(g, ln.names[i], H5P_DEFAULT);
        if (o < 0) {
            st = bl_mf_h5fail(err, BL_EFORMAT, file, "damaged file: cannot open %s/%s", where, ln.names[i]);
            break;
        }
        if (H5Iget_type(o) == H5I_GROUP) { /* datasets outside weights/ are not ours: ignored */
            char sub[BL_MF_NAME_MAX + 2];
            int w = snprintf(sub, sizeof sub, "%s%s%s", group, *group ? "/" : "", ln.names[i]);
            if (w < 0 || (size_t)w >= sizeof sub)
                st = bl_seterr(err, BL_EFORMAT, "%s: group path %s/%s is too long", file, where, ln.names[i]);
            else
                st = read_group(o, rec, sub, depth + 1, file, err);
        }
        H5Oclose(o);
    }
    H5Eclear2(H5E_DEFAULT);
    bl_mf_names_clear(&ln);
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
        st = bl_mf_h5fail(err, BL_EFORMAT, path, "cannot open group /models");
        goto cleanup;
    }
    hid_t m = open_hard_group(g, name);
    H5Gclose(g);
    g = m;
    if (g < 0) {
        st = bl_mf_h5fail(err, BL_EFORMAT, path, "cannot open group /models/%s", name);
        goto cleanup;
    }
    if ((w = open_hard_group(g, "weights")) < 0) {
        st = bl_mf_h5fail(err, BL_EFORMAT, path, "model '%s' has no group /models/%s/weights", name, name);
        goto cleanup;
    }
    g_groups_left = GROUPS_PER_MODEL_MAX;
    /* the attributes first: the model's precision says what type its weight datasets are */
    int f32 = 0;
    if ((st = read_group(g, rec, "", 0, path, err)) != BL_OK) goto cleanup;
    if ((st = bl_modelrec_precision(rec, path, &f32, err)) != BL_OK) goto cleanup;
    if ((st = read_weights(w, rec, path, f32, err)) != BL_OK) goto cleanup;
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
    bl_mf_names names = {0};
    bl_status st = list_models(f, label, &names, err);
    if (st != BL_OK) return st;
    out->names = names.names;
    out->n_names = names.n;
    if (op == BL_MF_OP_LIST) return BL_OK;
    char list[256];
    bl_mf_join_names(&names, list, sizeof list);
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
    bl_mf_image_cap = size;
    hid_t f = -1;
    bl_status st = open_image(label, img, size, &f, err);
    if (st == BL_OK) st = parse_open(f, label, op, name, out, err);
    H5CLOSE(f, H5Fclose);
    bl_mf_image_cap = 0;
    bl_mf_unlock();
    if (st != BL_OK) bl_mf_result_clear(out);
    return st;
}

bl_status bl_mf_load_ex(const char *path, const char *name, unsigned flags, bl_modelrec **out,
                        bl_error *err) {
    BL_CHECK_ARG(path && *path && out, err, "load: NULL argument");
    *out = NULL;
    bl_mf_result r;
    bl_status st = bl_mf_read_file(path, BL_MF_OP_LOAD, name, flags & BL_MF_ALLOW_UNSTAMPED, &r, err);
    if (st == BL_OK) {
        *out = r.recs[0];
        r.recs[0] = NULL;
    }
    bl_mf_result_clear(&r);
    return st;
}

bl_status bl_mf_load(const char *path, const char *name, bl_modelrec **out, bl_error *err) {
    return bl_mf_load_ex(path, name, 0, out, err);
}

bl_status bl_mf_list_ex(const char *path, unsigned flags, char ***names, size_t *n, bl_error *err) {
    BL_CHECK_ARG(path && *path && names && n, err, "list: NULL argument");
    *names = NULL;
    *n = 0;
    bl_mf_result r;
    bl_status st = bl_mf_read_file(path, BL_MF_OP_LIST, NULL, flags & BL_MF_ALLOW_UNSTAMPED, &r, err);
    if (st == BL_OK) {
        *names = r.names;
        *n = r.n_names;
        r.names = NULL;
        r.n_names = 0;
    }
    bl_mf_result_clear(&r);
    return st;
}

bl_status bl_mf_list(const char *path, char ***names, size_t *n, bl_error *err) {
    return bl_mf_list_ex(path, 0, names, n, err);
}

void bl_mf_names_free(char **names, size_t n) {
    if (!names) return;
    for (size_t i = 0; i < n; i++) free(names[i]);
    free(names);
}
