/* wire.c — the plain serialisation between the model-file reader process and the library.
 *
 * Little-endian integers, length-prefixed strings, doubles as their IEEE bit patterns. The library
 * reads an answer as it would read a file from a stranger: every length and count is checked against
 * the bytes left before anything is allocated, every enum and name against what a record may hold,
 * and the result against what was asked (the requested model, names unique and in order). So a
 * reader that was subverted by a crafted file can at worst produce a record a save could produce.
 * Not here: spawning the reader (isolate.c), HDF5 (h5.c, write.c, read.c).
 */
#include "modelfile/modelfile.h"
#include "modelfile/modelfile_internal.h"
#include "common/error.h"
#include "common/utf8.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char REQ_MAGIC[8] = {'B', 'L', 'M', 'F', 'R', 'Q', '0', '1'};
static const char ANS_MAGIC[8] = {'B', 'L', 'M', 'F', 'A', 'N', '0', '1'};
static const char END_MAGIC[8] = {'B', 'L', 'M', 'F', 'E', 'N', 'D', '1'};

/* Longest message the reader may send (bl_error's message buffer). */
#define MSG_MAX ((uint32_t)sizeof(((bl_error *)0)->message) - 1)

void bl_mf_result_clear(bl_mf_result *r) {
    if (!r) return;
    for (size_t i = 0; i < r->n_names; i++) free(r->names[i]);
    free(r->names);
    for (size_t i = 0; i < r->n_recs; i++) bl_modelrec_free(r->recs[i]);
    free(r->recs);
    memset(r, 0, sizeof *r);
}

/* ---- writing ------------------------------------------------------------------------------------ */

static void put(bl_mf_buf *b, const void *src, size_t n) {
    if (b->oom) return;
    if (n > b->cap - b->len) {
        size_t nc = b->cap ? b->cap : 4096;
        while (nc - b->len < n) {
            if (nc > SIZE_MAX / 2) {
                b->oom = 1;
                return;
            }
            nc *= 2;
        }
        unsigned char *p = realloc(b->p, nc);
        if (!p) {
            b->oom = 1;
            return;
        }
        b->p = p;
        b->cap = nc;
    }
    memcpy(b->p + b->len, src, n);
    b->len += n;
}

static void put_u8(bl_mf_buf *b, unsigned v) {
    unsigned char c = (unsigned char)v;
    put(b, &c, 1);
}

static void put_u32(bl_mf_buf *b, uint32_t v) {
    unsigned char c[4];
    for (int i = 0; i < 4; i++) c[i] = (unsigned char)(v >> (8 * i));
    put(b, c, 4);
}

static void put_u64(bl_mf_buf *b, uint64_t v) {
    unsigned char c[8];
    for (int i = 0; i < 8; i++) c[i] = (unsigned char)(v >> (8 * i));
    put(b, c, 8);
}

static void put_f64(bl_mf_buf *b, double d) {
    uint64_t v;
    memcpy(&v, &d, 8);
    put_u64(b, v);
}

/* A string of n bytes; one longer than the wire allows marks the buffer failed. */
static void put_strn(bl_mf_buf *b, const char *s, size_t n) {
    if (n > BL_MF_WIRE_STR_MAX) {
        b->oom = 1;
        return;
    }
    put_u32(b, (uint32_t)n);
    put(b, s, n);
}

static void put_str(bl_mf_buf *b, const char *s) { put_strn(b, s, strlen(s)); }

int bl_mf_wire_put_request_head(bl_mf_buf *b, const bl_mf_request *rq) {
    size_t ll = strnlen(rq->label, BL_MF_WIRE_LABEL_MAX + 1);
    if (ll > BL_MF_WIRE_LABEL_MAX) ll = BL_MF_WIRE_LABEL_MAX; /* a label only names the file in messages */
    put(b, REQ_MAGIC, 8);
    put_u32(b, (uint32_t)rq->op);
    put_u32(b, rq->cpu_s);
    put_u64(b, rq->mem_bytes);
    put_strn(b, rq->label, ll);
    put_u8(b, rq->name != NULL);
    put_str(b, rq->name ? rq->name : "");
    put_u64(b, (uint64_t)rq->size);
    return b->oom ? -1 : 0;
}

static void put_record(bl_mf_buf *b, const bl_modelrec *r) {
    put_str(b, r->name);
    put_u32(b, (uint32_t)r->n_blocks);
    for (size_t i = 0; i < r->n_blocks; i++) {
        const bl_mfblock *k = &r->blocks[i];
        put_str(b, k->name);
        put_u8(b, (unsigned)k->rank);
        put_u64(b, k->rows);
        put_u64(b, k->cols);
        for (size_t j = 0; j < k->rows * k->cols; j++) put_f64(b, k->data[j]);
    }
    put_u32(b, (uint32_t)r->n_attrs);
    for (size_t i = 0; i < r->n_attrs; i++) {
        const bl_mfattr *a = &r->attrs[i];
        put_str(b, a->group);
        put_str(b, a->name);
        put_u8(b, (unsigned)a->type);
        put_u64(b, a->count);
        switch (a->type) {
        case BL_MFATTR_STRING: put_str(b, a->v.s); break;
        case BL_MFATTR_INT64: put_u64(b, (uint64_t)a->v.i); break;
        case BL_MFATTR_DOUBLE: put_f64(b, a->v.d); break;
        case BL_MFATTR_DOUBLES:
            for (size_t j = 0; j < a->count; j++) put_f64(b, a->v.dv[j]);
            break;
        case BL_MFATTR_INT64S:
            for (size_t j = 0; j < a->count; j++) put_u64(b, (uint64_t)a->v.iv[j]);
            break;
        case BL_MFATTR_STRINGS:
            for (size_t j = 0; j < a->count; j++) put_str(b, a->v.sv[j]);
            break;
        }
    }
}

int bl_mf_wire_put_answer(bl_mf_buf *b, bl_status st, const char *message, const bl_mf_result *res) {
    put(b, ANS_MAGIC, 8);
    put_u32(b, (uint32_t)(int32_t)st);
    put_strn(b, message ? message : "", message ? strnlen(message, MSG_MAX) : 0);
    const int ok = st == BL_OK && res;
    put_u32(b, ok ? (uint32_t)res->n_names : 0);
    for (size_t i = 0; ok && i < res->n_names; i++) put_str(b, res->names[i]);
    put_u32(b, ok ? (uint32_t)res->n_recs : 0);
    for (size_t i = 0; ok && i < res->n_recs; i++) put_record(b, res->recs[i]);
    put(b, END_MAGIC, 8);
    return b->oom ? -1 : 0;
}

/* ---- reading ------------------------------------------------------------------------------------ */

typedef struct cursor {
    const unsigned char *p, *end;
    int bad;                       /* set on the first read past the end; later reads give zeros */
} cursor;

static size_t left(const cursor *c) { return c->bad ? 0 : (size_t)(c->end - c->p); }

static const unsigned char *take(cursor *c, size_t n) {
    if (c->bad || n > (size_t)(c->end - c->p)) {
        c->bad = 1;
        return NULL;
    }
    const unsigned char *q = c->p;
    c->p += n;
    return q;
}

static unsigned get_u8(cursor *c) {
    const unsigned char *q = take(c, 1);
    return q ? q[0] : 0;
}

static uint32_t get_u32(cursor *c) {
    const unsigned char *q = take(c, 4);
    uint32_t v = 0;
    for (int i = 3; q && i >= 0; i--) v = (v << 8) | q[i];
    return v;
}

static uint64_t get_u64(cursor *c) {
    const unsigned char *q = take(c, 8);
    uint64_t v = 0;
    for (int i = 7; q && i >= 0; i--) v = (v << 8) | q[i];
    return v;
}

static double get_f64(cursor *c) {
    uint64_t v = get_u64(c);
    double d;
    memcpy(&d, &v, 8);
    return d;
}

/* A string as a fresh NUL-terminated copy: at most max bytes, no NUL inside. NULL (and c->bad, or
 * *oom) when malformed. */
static char *get_str(cursor *c, uint32_t max, int *oom) {
    uint32_t n = get_u32(c);
    if (n > max) {
        c->bad = 1;
        return NULL;
    }
    const unsigned char *q = take(c, n);
    if (!q || memchr(q, 0, n)) {
        c->bad = 1;
        return NULL;
    }
    char *s = malloc((size_t)n + 1);
    if (!s) {
        *oom = 1;
        c->bad = 1;
        return NULL;
    }
    memcpy(s, q, n);
    s[n] = '\0';
    return s;
}

long bl_mf_wire_get_request_head(const unsigned char *buf, size_t len, bl_mf_request *rq, char *label,
                                 char *name) {
    cursor c = {buf, buf + len, 0};
    memset(rq, 0, sizeof *rq);
    const unsigned char *m = take(&c, 8);
    if (!m) return 0;
    if (memcmp(m, REQ_MAGIC, 8) != 0) return -1;
    rq->op = (bl_mf_op)get_u32(&c);
    rq->cpu_s = get_u32(&c);
    rq->mem_bytes = get_u64(&c);
    uint32_t ll = get_u32(&c);
    if (c.bad) return 0;
    if (ll > BL_MF_WIRE_LABEL_MAX) return -1;
    const unsigned char *lp = take(&c, ll);
    unsigned has = get_u8(&c);
    uint32_t nl = get_u32(&c);
    if (c.bad) return 0;
    if (nl > BL_MF_NAME_MAX || has > 1) return -1;
    const unsigned char *np = take(&c, nl);
    uint64_t size = get_u64(&c);
    if (c.bad) return 0;
    if (rq->op < BL_MF_OP_LIST || rq->op > BL_MF_OP_ALL || size > SIZE_MAX || memchr(lp, 0, ll) || memchr(np, 0, nl))
        return -1;
    memcpy(label, lp, ll);
    label[ll] = '\0';
    memcpy(name, np, nl);
    name[nl] = '\0';
    rq->label = label;
    rq->name = has ? name : NULL;
    rq->size = (size_t)size;
    return (long)(c.p - buf);
}

/* Sets err to a malformed-answer error naming the file. */
static bl_status bad_answer(bl_error *err, const char *label, const char *what) {
    return bl_seterr(err, BL_EFORMAT, "%s: the model-file reader gave a malformed answer (%s); the file may be "
                     "crafted to attack it, or the reader is from another libbellamy version (BELLAMY_LOADER)",
                     label, what);
}

/* Reads count doubles (or int64 bit patterns) into a fresh array; the count was checked against the
 * bytes left. */
static void *get_array(cursor *c, uint64_t count, int *oom) {
    if (count > left(c) / 8) {
        c->bad = 1;
        return NULL;
    }
    uint64_t *v = malloc((size_t)(count ? count : 1) * 8);
    if (!v) {
        *oom = 1;
        c->bad = 1;
        return NULL;
    }
    for (uint64_t i = 0; i < count; i++) v[i] = get_u64(c);
    return v;
}

/* One record; NULL with *why set when malformed (or *oom). */
static bl_modelrec *get_record(cursor *c, int *oom, const char **why, bl_error *rerr) {
    bl_modelrec *r = NULL;
    char *name = get_str(c, BL_MF_NAME_MAX, oom), *s1 = NULL, *s2 = NULL;
    void *arr = NULL;
    char **sv = NULL;
    uint64_t nsv = 0;
    if (!name) {
        *why = "model name";
        goto fail;
    }
    if (bl_modelrec_new(name, &r, rerr) != BL_OK) {
        *why = "invalid model name";
        goto fail;
    }
    uint32_t nb = get_u32(c);
    /* each block takes at least 4 + 1 + 8 + 8 + 8 bytes */
    if (nb > left(c) / 29) {
        *why = "block count";
        goto fail;
    }
    for (uint32_t i = 0; i < nb; i++) {
        s1 = get_str(c, BL_MF_NAME_MAX, oom);
        unsigned rank = get_u8(c);
        uint64_t rows = get_u64(c), cols = get_u64(c);
        if (!s1 || c->bad || (rank != 1 && rank != 2) || rows < 1 || cols < 1 || (rank == 1 && cols != 1) ||
            rows > left(c) / 8 || cols > left(c) / 8 / rows) {
            *why = "block shape";
            goto fail;
        }
        if (!(arr = get_array(c, rows * cols, oom))) {
            *why = "block data";
            goto fail;
        }
        bl_status bs = bl_modelrec_add_block(r, s1, (int)rank, (size_t)rows, (size_t)cols, arr, rerr);
        if (bs != BL_OK) {
            if (bs == BL_ENOMEM) *oom = 1;
            *why = "invalid or duplicate block";
            goto fail;
        }
        free(arr);
        free(s1);
        arr = NULL;
        s1 = NULL;
    }
    uint32_t na = get_u32(c);
    /* each attribute takes at least 4 + 4 + 1 + 8 bytes and a value of 0 bytes (an empty array) */
    if (na > left(c) / 17) {
        *why = "attribute count";
        goto fail;
    }
    for (uint32_t i = 0; i < na; i++) {
        s1 = get_str(c, BL_MF_NAME_MAX, oom);
        s2 = get_str(c, BL_MF_NAME_MAX, oom);
        unsigned type = get_u8(c);
        uint64_t count = get_u64(c);
        int scalar = type == BL_MFATTR_STRING || type == BL_MFATTR_INT64 || type == BL_MFATTR_DOUBLE;
        if (!s1 || !s2 || c->bad || type < BL_MFATTR_STRING || type > BL_MFATTR_INT64S || (scalar && count != 1)) {
            *why = "attribute header";
            goto fail;
        }
        bl_status st = BL_OK;
        switch ((bl_mfattr_type)type) {
        case BL_MFATTR_STRING: {
            char *v = get_str(c, BL_MF_WIRE_STR_MAX, oom);
            if (!v) {
                *why = "string value";
                goto fail;
            }
            st = bl_modelrec_add_string(r, s1, s2, v, rerr);
            free(v);
            break;
        }
        case BL_MFATTR_INT64: {
            uint64_t v = get_u64(c);
            st = bl_modelrec_add_int(r, s1, s2, (int64_t)v, rerr);
            break;
        }
        case BL_MFATTR_DOUBLE: {
            double v = get_f64(c);
            st = bl_modelrec_add_double(r, s1, s2, v, rerr);
            break;
        }
        case BL_MFATTR_DOUBLES:
        case BL_MFATTR_INT64S:
            if (!(arr = get_array(c, count, oom))) {
                *why = "array value";
                goto fail;
            }
            st = type == BL_MFATTR_DOUBLES ? bl_modelrec_add_doubles(r, s1, s2, arr, (size_t)count, rerr)
                                           : bl_modelrec_add_ints(r, s1, s2, arr, (size_t)count, rerr);
            free(arr);
            arr = NULL;
            break;
        case BL_MFATTR_STRINGS:
            /* each string takes at least its 4-byte length */
            if (count > left(c) / 4) {
                *why = "string array length";
                goto fail;
            }
            nsv = count;
            if (!(sv = calloc((size_t)(count ? count : 1), sizeof *sv))) {
                *oom = 1;
                goto fail;
            }
            for (uint64_t k = 0; k < count; k++)
                if (!(sv[k] = get_str(c, BL_MF_WIRE_STR_MAX, oom))) {
                    *why = "string array value";
                    goto fail;
                }
            st = bl_modelrec_add_strings(r, s1, s2, (const char *const *)sv, (size_t)count, rerr);
            for (uint64_t k = 0; k < nsv; k++) free(sv[k]);
            free(sv);
            sv = NULL;
            nsv = 0;
            break;
        }
        if (st == BL_ENOMEM) {
            *oom = 1;
            goto fail;
        }
        if (st != BL_OK) {
            *why = "invalid or duplicate attribute";
            goto fail;
        }
        free(s1);
        free(s2);
        s1 = s2 = NULL;
    }
    free(name);
    return r;
fail:
    if (sv)
        for (uint64_t k = 0; k < nsv; k++) free(sv[k]);
    free(sv);
    free(arr);
    free(s1);
    free(s2);
    free(name);
    bl_modelrec_free(r);
    if (!*why) *why = "record";
    c->bad = 1;
    return NULL;
}

/* 1 when every value of every block of r is a float widened to a double (NaN and inf included). */
static int floats_only(const bl_modelrec *r) {
    for (size_t i = 0; i < r->n_blocks; i++) {
        const bl_mfblock *b = &r->blocks[i];
        for (size_t k = 0; k < b->rows * b->cols; k++) {
            const double x = b->data[k];
            if (isfinite(x) && (fabs(x) > FLT_MAX || (double)(float)x != x)) return 0;
        }
    }
    return 1;
}

/* Statuses the reader may report (it does no file I/O, so never BL_EIO). */
static int reader_status(int32_t s) {
    return s == BL_EFORMAT || s == BL_EVERSION || s == BL_ENOTFOUND || s == BL_EINVAL || s == BL_ENOMEM ||
           s == BL_EINTERNAL;
}

bl_status bl_mf_wire_get_answer(const unsigned char *buf, size_t len, bl_mf_op op, const char *name,
                                const char *label, bl_mf_result *out, bl_error *err) {
    memset(out, 0, sizeof *out);
    cursor c = {buf, buf + len, 0};
    int oom = 0;
    const char *why = NULL;
    bl_error rerr;
    const unsigned char *m = take(&c, 8);
    if (!m || memcmp(m, ANS_MAGIC, 8) != 0) return bad_answer(err, label, "no answer header");
    int32_t st = (int32_t)get_u32(&c);
    char *msg = get_str(&c, MSG_MAX, &oom);
    if (!msg) return oom ? bl_seterr(err, BL_ENOMEM, "%s: out of memory", label) : bad_answer(err, label, "message");
    /* the message is text from the reader, which may quote the file: shown, never interpreted; control
     * characters and bytes that are not UTF-8 become '?' */
    for (char *p = msg; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f) *p = '?';
    bl_utf8_sanitize(msg, strlen(msg));
    if (st != BL_OK) {
        bl_status rs;
        if (!reader_status(st)) rs = bad_answer(err, label, "unknown status");
        else if (!*msg) rs = bad_answer(err, label, "an error without a message");
        else if (st == BL_ENOMEM)
            rs = bl_seterr(err, BL_EFORMAT, "%s: reading the file needs more memory than the model-file reader may "
                           "use (BELLAMY_LOADER_MEMORY_MB raises the limit): %s", label, msg);
        else if (!strstr(msg, label)) /* every message names the file */
            rs = bl_seterr(err, (bl_status)st, "%s: %s", label, msg);
        else
            rs = bl_seterr(err, (bl_status)st, "%s", msg);
        free(msg);
        /* an error carries no result, only the end marker */
        return rs;
    }
    free(msg);
    uint32_t nn = get_u32(&c);
    if (nn > BL_MF_WIRE_MODELS_MAX || nn > left(&c) / 4) return bad_answer(err, label, "model count");
    if (!(out->names = calloc(nn ? nn : 1, sizeof *out->names))) goto nomem;
    for (uint32_t i = 0; i < nn; i++) {
        char *s = get_str(&c, BL_MF_NAME_MAX, &oom);
        if (!s) {
            why = "model name";
            goto malformed;
        }
        out->names[out->n_names++] = s;
        if (!bl_mf_valid_name(s)) {
            why = "invalid model name";
            goto malformed;
        }
        for (uint32_t j = 0; j < i; j++)
            if (strcmp(out->names[j], s) == 0) {
                why = "a model named twice";
                goto malformed;
            }
    }
    uint32_t nr = get_u32(&c);
    size_t want = op == BL_MF_OP_LIST ? 0 : op == BL_MF_OP_LOAD ? 1 : nn;
    if (c.bad || nr != want) {
        why = "record count";
        goto malformed;
    }
    if (!(out->recs = calloc(nr ? nr : 1, sizeof *out->recs))) goto nomem;
    for (uint32_t i = 0; i < nr; i++) {
        bl_modelrec *r = get_record(&c, &oom, &why, &rerr);
        if (!r) goto malformed;
        out->recs[out->n_recs++] = r;
        /* the precision travels as the record's attribute: one a save writes, and with "f32" every
         * weight a float (what the reader read from float32 datasets) */
        int f32 = 0;
        if (bl_modelrec_precision(r, label, &f32, &rerr) != BL_OK) {
            why = "an unknown precision";
            goto malformed;
        }
        if (f32 && !floats_only(r)) {
            why = "float32 weights that are not floats";
            goto malformed;
        }
        /* ALL: the records in the names' order; LOAD: the model asked for (or the only one) */
        const char *expect = op == BL_MF_OP_ALL ? out->names[i] : name ? name : nn == 1 ? out->names[0] : NULL;
        if (!expect || strcmp(r->name, expect) != 0) {
            why = "another model than asked for";
            goto malformed;
        }
        if (op == BL_MF_OP_LOAD) {
            int listed = 0;
            for (size_t j = 0; j < out->n_names; j++) listed |= strcmp(out->names[j], r->name) == 0;
            if (!listed) {
                why = "a model not in the file's list";
                goto malformed;
            }
        }
    }
    m = take(&c, 8);
    if (!m || memcmp(m, END_MAGIC, 8) != 0 || c.p != c.end) {
        why = m ? "bytes after the end" : "truncated";
        goto malformed;
    }
    return BL_OK;
malformed:
    if (oom) goto nomem;
    bl_mf_result_clear(out);
    return bad_answer(err, label, why ? why : "truncated");
nomem:
    bl_mf_result_clear(out);
    return bl_seterr(err, BL_ENOMEM, "%s: out of memory reading the model-file reader's answer", label);
}
