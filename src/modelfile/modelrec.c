/* modelrec.c — the in-memory model record: named float64 blocks and typed, grouped attributes.
 * Builds, copies, looks up and frees records. It does not touch files (write.c and read.c do) and knows
 * nothing about what a block or attribute means (the model code does). */
#include "modelfile/modelfile.h"
#include "modelfile/modelfile_internal.h"
#include "common/error.h"
#include "common/str.h"
#include "common/utf8.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A name is one HDF5 link or attribute name: 1..255 bytes, no '/', no control characters, and not
 * "." or ".." (HDF5 treats "." as the current group). */
int bl_mf_valid_name(const char *s) {
    if (!s || !*s) return 0;
    size_t n = strlen(s);
    if (n > BL_MF_NAME_MAX) return 0;
    if (strcmp(s, ".") == 0 || strcmp(s, "..") == 0) return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '/' || c < 0x20 || c == 0x7f) return 0;
    }
    return bl_utf8_valid(s, n, NULL); /* names become HDF5 link names, JSON and Python strings */
}

/* A group path: "" or names joined by '/', at most BL_MF_GROUP_DEPTH_MAX deep, not below
 * "weights" (that group holds only the blocks). */
int bl_mf_valid_group(const char *g) {
    if (!g || !*g) return 1;
    size_t n = strlen(g);
    if (n > BL_MF_NAME_MAX) return 0;
    char buf[BL_MF_NAME_MAX + 1];
    memcpy(buf, g, n + 1);
    int depth = 0;
    char *p = buf;
    for (;;) {
        char *slash = strchr(p, '/');
        if (slash) *slash = '\0';
        if (!bl_mf_valid_name(p)) return 0;
        if (depth == 0 && strcmp(p, "weights") == 0) return 0;
        if (++depth > BL_MF_GROUP_DEPTH_MAX) return 0;
        if (!slash) break;
        p = slash + 1;
    }
    return 1;
}

bl_status bl_modelrec_new(const char *name, bl_modelrec **out, bl_error *err) {
    BL_CHECK_ARG(out, err, "modelrec: out is NULL");
    *out = NULL;
    BL_CHECK_ARG(bl_mf_valid_name(name), err, "modelrec: invalid model name '%.64s%s' (1 to %d bytes of UTF-8, "
                 "no '/' or control characters, not '.' or '..')", name ? name : "(null)",
                 name && strlen(name) > 64 ? "..." : "", BL_MF_NAME_MAX);
    bl_modelrec *r = calloc(1, sizeof *r);
    if (!r || !(r->name = bl_strdup(name))) {
        free(r);
        return bl_seterr(err, BL_ENOMEM, "modelrec: out of memory");
    }
    *out = r;
    return BL_OK;
}

void bl_mf_attr_clear(bl_mfattr *a) {
    free(a->group);
    free(a->name);
    switch (a->type) {
    case BL_MFATTR_STRING: free(a->v.s); break;
    case BL_MFATTR_DOUBLES: free(a->v.dv); break;
    case BL_MFATTR_INT64S: free(a->v.iv); break;
    case BL_MFATTR_STRINGS:
        if (a->v.sv)
            for (size_t i = 0; i < a->count; i++) free(a->v.sv[i]);
        free(a->v.sv);
        break;
    case BL_MFATTR_INT64:
    case BL_MFATTR_DOUBLE: break;
    }
    memset(a, 0, sizeof *a);
}

void bl_modelrec_free(bl_modelrec *rec) {
    if (!rec) return;
    for (size_t i = 0; i < rec->n_blocks; i++) {
        free(rec->blocks[i].name);
        free(rec->blocks[i].data);
    }
    free(rec->blocks);
    for (size_t i = 0; i < rec->n_attrs; i++) bl_mf_attr_clear(&rec->attrs[i]);
    free(rec->attrs);
    free(rec->name);
    free(rec);
}

/* Grows an array of elem-sized items so that one more fits. */
static int grow(void **arr, size_t *cap, size_t n, size_t elem) {
    if (n < *cap) return 0;
    size_t nc = *cap ? *cap * 2 : 8, bytes;
    if (nc < *cap || bl_mul_size(nc, elem, &bytes)) return 1;
    void *p = realloc(*arr, bytes);
    if (!p) return 1;
    *arr = p;
    *cap = nc;
    return 0;
}

bl_status bl_modelrec_add_block(bl_modelrec *rec, const char *name, int rank, size_t rows, size_t cols,
                                const double *data, bl_error *err) {
    BL_CHECK_ARG(rec, err, "modelrec: rec is NULL");
    BL_CHECK_ARG(bl_mf_valid_name(name), err, "model '%s': invalid block name '%s'", rec->name,
                 name ? name : "(null)");
    BL_CHECK_ARG(rank == 1 || rank == 2, err, "model '%s': block '%s': rank %d (must be 1 or 2)", rec->name,
                 name, rank);
    BL_CHECK_ARG(rows >= 1 && cols >= 1 && (rank == 2 || cols == 1), err,
                 "model '%s': block '%s': bad shape %zu x %zu for rank %d", rec->name, name, rows, cols, rank);
    BL_CHECK_ARG(data, err, "model '%s': block '%s': data is NULL", rec->name, name);
    BL_CHECK_ARG(!bl_modelrec_find_block(rec, name), err, "model '%s': duplicate block '%s'", rec->name, name);
    size_t n, bytes;
    if (bl_mul_size(rows, cols, &n) || bl_mul_size(n, sizeof(double), &bytes) || n > ((size_t)1 << 52))
        return bl_seterr(err, BL_ERANGE, "model '%s': block '%s': %zu x %zu is too large", rec->name, name,
                         rows, cols);
    if (grow((void **)&rec->blocks, &rec->cap_blocks, rec->n_blocks, sizeof *rec->blocks))
        return bl_seterr(err, BL_ENOMEM, "modelrec: out of memory");
    bl_mfblock b = {.name = bl_strdup(name), .rank = rank, .rows = rows, .cols = cols, .data = malloc(bytes)};
    if (!b.name || !b.data) {
        free(b.name);
        free(b.data);
        return bl_seterr(err, BL_ENOMEM, "modelrec: out of memory");
    }
    memcpy(b.data, data, bytes);
    rec->blocks[rec->n_blocks++] = b;
    return BL_OK;
}

/* Checks the common arguments of the add_* functions and reserves a slot; on success *slot points
 * at a zeroed attribute with group, name and type filled in (the caller fills the value, or calls
 * attr_clear and returns on failure without bumping n_attrs). */
static bl_status attr_begin(bl_modelrec *rec, const char *group, const char *name, bl_mfattr_type type,
                            bl_mfattr **slot, bl_error *err) {
    BL_CHECK_ARG(rec, err, "modelrec: rec is NULL");
    if (!group) group = "";
    BL_CHECK_ARG(bl_mf_valid_group(group), err, "model '%s': invalid attribute group '%s'", rec->name, group);
    BL_CHECK_ARG(bl_mf_valid_name(name), err, "model '%s': invalid attribute name '%s'", rec->name,
                 name ? name : "(null)");
    BL_CHECK_ARG(!bl_modelrec_find_attr(rec, group, name), err, "model '%s': duplicate attribute '%s/%s'",
                 rec->name, group, name);
    if (grow((void **)&rec->attrs, &rec->cap_attrs, rec->n_attrs, sizeof *rec->attrs))
        return bl_seterr(err, BL_ENOMEM, "modelrec: out of memory");
    bl_mfattr *a = &rec->attrs[rec->n_attrs];
    memset(a, 0, sizeof *a);
    a->type = type;
    a->count = 1;
    a->group = bl_strdup(group);
    a->name = bl_strdup(name);
    if (!a->group || !a->name) {
        bl_mf_attr_clear(a);
        return bl_seterr(err, BL_ENOMEM, "modelrec: out of memory");
    }
    *slot = a;
    return BL_OK;
}

bl_status bl_modelrec_add_string(bl_modelrec *rec, const char *group, const char *name, const char *value,
                                 bl_error *err) {
    BL_CHECK_ARG(value, err, "modelrec: attribute '%s': value is NULL", name ? name : "(null)");
    bl_mfattr *a = NULL;
    bl_status st = attr_begin(rec, group, name, BL_MFATTR_STRING, &a, err);
    if (st) return st;
    if (!(a->v.s = bl_strdup(value))) {
        bl_mf_attr_clear(a);
        return bl_seterr(err, BL_ENOMEM, "modelrec: out of memory");
    }
    rec->n_attrs++;
    return BL_OK;
}

bl_status bl_modelrec_add_int(bl_modelrec *rec, const char *group, const char *name, int64_t value,
                              bl_error *err) {
    bl_mfattr *a = NULL;
    bl_status st = attr_begin(rec, group, name, BL_MFATTR_INT64, &a, err);
    if (st) return st;
    a->v.i = value;
    rec->n_attrs++;
    return BL_OK;
}

bl_status bl_modelrec_add_double(bl_modelrec *rec, const char *group, const char *name, double value,
                                 bl_error *err) {
    bl_mfattr *a = NULL;
    bl_status st = attr_begin(rec, group, name, BL_MFATTR_DOUBLE, &a, err);
    if (st) return st;
    a->v.d = value;
    rec->n_attrs++;
    return BL_OK;
}

/* Shared body of add_doubles / add_ints: both copy n fixed-size numbers. */
static bl_status add_numbers(bl_modelrec *rec, const char *group, const char *name, bl_mfattr_type type,
                             const void *values, size_t n, size_t elem, bl_error *err) {
    BL_CHECK_ARG(values || n == 0, err, "modelrec: attribute '%s': values is NULL", name ? name : "(null)");
    size_t bytes;
    if (bl_mul_size(n, elem, &bytes)) return bl_seterr(err, BL_ERANGE, "modelrec: attribute too large");
    bl_mfattr *a = NULL;
    bl_status st = attr_begin(rec, group, name, type, &a, err);
    if (st) return st;
    a->count = n;
    void *copy = NULL;
    if (n) {
        if (!(copy = malloc(bytes))) {
            bl_mf_attr_clear(a);
            return bl_seterr(err, BL_ENOMEM, "modelrec: out of memory");
        }
        memcpy(copy, values, bytes);
    }
    if (type == BL_MFATTR_DOUBLES) a->v.dv = copy;
    else a->v.iv = copy;
    rec->n_attrs++;
    return BL_OK;
}

bl_status bl_modelrec_add_doubles(bl_modelrec *rec, const char *group, const char *name, const double *values,
                                  size_t n, bl_error *err) {
    return add_numbers(rec, group, name, BL_MFATTR_DOUBLES, values, n, sizeof(double), err);
}

bl_status bl_modelrec_add_ints(bl_modelrec *rec, const char *group, const char *name, const int64_t *values,
                               size_t n, bl_error *err) {
    return add_numbers(rec, group, name, BL_MFATTR_INT64S, values, n, sizeof(int64_t), err);
}

bl_status bl_modelrec_add_strings(bl_modelrec *rec, const char *group, const char *name,
                                  const char *const *values, size_t n, bl_error *err) {
    BL_CHECK_ARG(values || n == 0, err, "modelrec: attribute '%s': values is NULL", name ? name : "(null)");
    for (size_t i = 0; i < n; i++)
        BL_CHECK_ARG(values[i], err, "modelrec: attribute '%s': string %zu is NULL", name ? name : "(null)", i);
    size_t bytes;
    if (bl_mul_size(n, sizeof(char *), &bytes)) return bl_seterr(err, BL_ERANGE, "modelrec: attribute too large");
    bl_mfattr *a = NULL;
    bl_status st = attr_begin(rec, group, name, BL_MFATTR_STRINGS, &a, err);
    if (st) return st;
    a->count = n;
    if (n) {
        /* calloc so that attr_clear can free a partly filled array */
        if (!(a->v.sv = calloc(n, sizeof(char *)))) goto oom;
        for (size_t i = 0; i < n; i++)
            if (!(a->v.sv[i] = bl_strdup(values[i]))) goto oom;
    }
    rec->n_attrs++;
    return BL_OK;
oom:
    bl_mf_attr_clear(a);
    return bl_seterr(err, BL_ENOMEM, "modelrec: out of memory");
}

const bl_mfblock *bl_modelrec_find_block(const bl_modelrec *rec, const char *name) {
    if (!rec || !name) return NULL;
    for (size_t i = 0; i < rec->n_blocks; i++)
        if (strcmp(rec->blocks[i].name, name) == 0) return &rec->blocks[i];
    return NULL;
}

bl_status bl_modelrec_get_block(const bl_modelrec *rec, const char *name, int rank, size_t rows, size_t cols,
                                const double **data, bl_error *err) {
    BL_CHECK_ARG(rec && name && data, err, "modelrec: NULL argument");
    *data = NULL;
    const bl_mfblock *b = bl_modelrec_find_block(rec, name);
    if (!b) return bl_seterr(err, BL_ENOTFOUND, "model '%s': no weight block '%s'", rec->name, name);
    if (b->rank != rank || (rows && b->rows != rows) || (cols && b->cols != cols)) {
        if (b->rank == 1)
            return bl_seterr(err, BL_EFORMAT, "model '%s': weight block '%s' has shape (%zu), expected rank %d "
                             "(%zu x %zu; 0 = any)", rec->name, name, b->rows, rank, rows, cols);
        return bl_seterr(err, BL_EFORMAT, "model '%s': weight block '%s' has shape (%zu, %zu), expected rank %d "
                         "(%zu x %zu; 0 = any)", rec->name, name, b->rows, b->cols, rank, rows, cols);
    }
    *data = b->data;
    return BL_OK;
}

const bl_mfattr *bl_modelrec_find_attr(const bl_modelrec *rec, const char *group, const char *name) {
    if (!rec || !name) return NULL;
    if (!group) group = "";
    for (size_t i = 0; i < rec->n_attrs; i++)
        if (strcmp(rec->attrs[i].group, group) == 0 && strcmp(rec->attrs[i].name, name) == 0)
            return &rec->attrs[i];
    return NULL;
}

const char *bl_mf_type_name(bl_mfattr_type t) {
    switch (t) {
    case BL_MFATTR_STRING: return "string";
    case BL_MFATTR_INT64: return "int64";
    case BL_MFATTR_DOUBLE: return "double";
    case BL_MFATTR_DOUBLES: return "double array";
    case BL_MFATTR_STRINGS: return "string array";
    case BL_MFATTR_INT64S: return "int64 array";
    }
    return "unknown";
}

/* The attribute, checked for presence and type; messages name "group/name" and the model. */
static bl_status get_typed(const bl_modelrec *rec, const char *group, const char *name, bl_mfattr_type type,
                           const bl_mfattr **out, bl_error *err) {
    BL_CHECK_ARG(rec && name, err, "modelrec: NULL argument");
    if (!group) group = "";
    const bl_mfattr *a = bl_modelrec_find_attr(rec, group, name);
    if (!a)
        return bl_seterr(err, BL_ENOTFOUND, "model '%s': required attribute '%s%s%s' is missing", rec->name,
                         group, *group ? "/" : "", name);
    if (a->type != type)
        return bl_seterr(err, BL_EFORMAT, "model '%s': attribute '%s%s%s' is a %s, expected a %s", rec->name,
                         group, *group ? "/" : "", name, bl_mf_type_name(a->type), bl_mf_type_name(type));
    *out = a;
    return BL_OK;
}

bl_status bl_modelrec_get_string(const bl_modelrec *rec, const char *group, const char *name,
                                 const char **value, bl_error *err) {
    BL_CHECK_ARG(value, err, "modelrec: value is NULL");
    const bl_mfattr *a;
    bl_status st = get_typed(rec, group, name, BL_MFATTR_STRING, &a, err);
    if (st == BL_OK) *value = a->v.s;
    return st;
}

bl_status bl_modelrec_get_int(const bl_modelrec *rec, const char *group, const char *name, int64_t *value,
                              bl_error *err) {
    BL_CHECK_ARG(value, err, "modelrec: value is NULL");
    const bl_mfattr *a;
    bl_status st = get_typed(rec, group, name, BL_MFATTR_INT64, &a, err);
    if (st == BL_OK) *value = a->v.i;
    return st;
}

bl_status bl_modelrec_get_double(const bl_modelrec *rec, const char *group, const char *name, double *value,
                                 bl_error *err) {
    BL_CHECK_ARG(value, err, "modelrec: value is NULL");
    const bl_mfattr *a;
    bl_status st = get_typed(rec, group, name, BL_MFATTR_DOUBLE, &a, err);
    if (st == BL_OK) *value = a->v.d;
    return st;
}

bl_status bl_modelrec_get_doubles(const bl_modelrec *rec, const char *group, const char *name,
                                  const double **values, size_t *n, bl_error *err) {
    BL_CHECK_ARG(values && n, err, "modelrec: NULL argument");
    const bl_mfattr *a;
    bl_status st = get_typed(rec, group, name, BL_MFATTR_DOUBLES, &a, err);
    if (st == BL_OK) {
        *values = a->v.dv;
        *n = a->count;
    }
    return st;
}

bl_status bl_modelrec_get_strings(const bl_modelrec *rec, const char *group, const char *name,
                                  const char *const **values, size_t *n, bl_error *err) {
    BL_CHECK_ARG(values && n, err, "modelrec: NULL argument");
    const bl_mfattr *a;
    bl_status st = get_typed(rec, group, name, BL_MFATTR_STRINGS, &a, err);
    if (st == BL_OK) {
        *values = (const char *const *)a->v.sv;
        *n = a->count;
    }
    return st;
}

bl_status bl_modelrec_get_ints(const bl_modelrec *rec, const char *group, const char *name,
                               const int64_t **values, size_t *n, bl_error *err) {
    BL_CHECK_ARG(values && n, err, "modelrec: NULL argument");
    const bl_mfattr *a;
    bl_status st = get_typed(rec, group, name, BL_MFATTR_INT64S, &a, err);
    if (st == BL_OK) {
        *values = a->v.iv;
        *n = a->count;
    }
    return st;
}

bl_status bl_modelrec_precision(const bl_modelrec *rec, const char *label, int *f32, bl_error *err) {
    BL_CHECK_ARG(rec && f32, err, "modelrec: NULL argument");
    *f32 = 0;
    const bl_mfattr *a = bl_modelrec_find_attr(rec, "", BL_MF_PRECISION_ATTR);
    if (!a) return BL_OK; /* written before the attribute, or a float64 model: float64 */
    if (a->type == BL_MFATTR_STRING && strcmp(a->v.s, "f64") == 0) return BL_OK;
    if (a->type == BL_MFATTR_STRING && strcmp(a->v.s, "f32") == 0) {
        *f32 = 1;
        return BL_OK;
    }
    char what[96];
    if (a->type == BL_MFATTR_STRING) {
        /* a string from a file may hold anything: at most 40 bytes of it, control characters as '?' */
        char v[48];
        size_t n = strlen(a->v.s);
        if (n > 40) n = 40;
        memcpy(v, a->v.s, n);
        v[n] = '\0';
        for (size_t i = 0; i < n; i++)
            if ((unsigned char)v[i] < 0x20 || v[i] == 0x7f) v[i] = '?';
        bl_utf8_sanitize(v, n);
        snprintf(what, sizeof what, "'%s'%s", v, strlen(a->v.s) > 40 ? "..." : "");
    } else {
        snprintf(what, sizeof what, "a value of type %s, not a string", bl_mf_type_name(a->type));
    }
    return bl_seterr(err, BL_EFORMAT, "%s%smodel '%s': attribute precision (/models/%s) is %s, expected \"f32\" or "
                     "\"f64\": a newer libbellamy wrote it or it was edited; load it with the library that wrote it, "
                     "or set the attribute to \"f64\" (float64 weight datasets) or \"f32\" (float32 ones)",
                     label ? label : "", label ? ": " : "", rec->name, rec->name, what);
}
