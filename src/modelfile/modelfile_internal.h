/* modelfile_internal.h — helpers shared by the files of src/modelfile only (no HDF5 types here: h5.h
 * has those). */
#ifndef BL_MODELFILE_INTERNAL_H
#define BL_MODELFILE_INTERNAL_H

#include "modelfile/modelfile.h"

#include <stdint.h>

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

/* ---- the checksum header (checksum.c) -----------------------------------------------------------
 * A model file starts with a user block of this many bytes holding one line of text, then NUL bytes:
 * "BELLAMY-MODEL 1 size=<file length> xxh64=<16 hex digits>\n", the hash over every byte after it. */
#define BL_MF_HEADER_SIZE 512

/* Writes the header of a complete image of size bytes (the user block is overwritten). */
void bl_mf_header_write(unsigned char *image, size_t size);
/* Checks the header of a file in memory; *has: 1 present and matching, 0 absent, -1 present (or
 * damaged) but let through by BELLAMY_MODEL_IGNORE_CHECKSUM=1 (never when strict). BL_EFORMAT (or
 * BL_EVERSION) naming path otherwise. */
bl_status bl_mf_header_check(const unsigned char *buf, size_t size, const char *path, int strict, int *has,
                             bl_error *err);
/* The whole file at path in memory (*out, *size_out; free with free()), sized from the open
 * descriptor. BL_EIO (not a regular file, unreadable), BL_ENOMEM. */
bl_status bl_mf_read_whole(const char *path, unsigned char **out, size_t *size_out, bl_error *err);

/* Recomputes the checksum header of a model file changed in place (files without one are left
 * alone). Test support only: real saves write a whole new file. */
bl_status bl_mf_restamp(const char *path, bl_error *err);

/* ---- reading a file: HDF5 runs in the model-file reader, a separate process ---------------------
 * The library reads a file's bytes and checks its header itself, then hands the bytes to the reader
 * executable (reader_main.c), which parses them with HDF5 and answers with the records in a plain,
 * bounded serialisation (wire.c) that the library checks field by field (models/README.md, "Threat
 * model"). Whatever the file does to HDF5 (crash, hang, memory) stays in that process. */

typedef enum bl_mf_op {
    BL_MF_OP_LIST = 1, /* the names of the file's models                    */
    BL_MF_OP_LOAD = 2, /* the names and one model (by name, or the only one) */
    BL_MF_OP_ALL  = 3  /* the names and every model, in order (for a save)   */
} bl_mf_op;

/* What a read gives back: the model names in file order (every op) and records (LOAD: one; ALL: one
 * per name, same order; LIST: none). */
typedef struct bl_mf_result {
    char        **names;
    size_t        n_names;
    bl_modelrec **recs;
    size_t        n_recs;
} bl_mf_result;

/* Frees what the result owns and zeroes it. */
void bl_mf_result_clear(bl_mf_result *r);

/* Parses a whole file image (header included, as read from disk) with HDF5 in this process: only the
 * reader executable calls it. label names the file in messages. Every allocation it makes is bounded
 * by the image's size (a small file cannot claim a huge dataset); under bl_mf_lock. */
bl_status bl_mf_parse_image(const char *label, const unsigned char *img, size_t size, bl_mf_op op, const char *name,
                            bl_mf_result *out, bl_error *err);

/* The same through the reader process (isolate.c): spawns it, hands it the image, waits at most the
 * time limit, checks the answer. A crash, hang, memory excess or malformed answer is BL_EFORMAT naming
 * label; a missing reader BL_EUNSUPPORTED naming where it was looked for. */
bl_status bl_mf_parse_isolated(const char *label, const unsigned char *img, size_t size, bl_mf_op op,
                               const char *name, bl_mf_result *out, bl_error *err);

/* Flags of a read (bl_mf_read_image): BL_MF_ALLOW_UNSTAMPED (modelfile.h, the value of the public
 * BL_LOAD_ALLOW_UNSTAMPED), and: */
#define BL_MF_STRICT          2u /* the checksum must match even with BELLAMY_MODEL_IGNORE_CHECKSUM   */

/* The library's whole read of a file already in memory: header check, the unstamped-file policy
 * (flags, or BELLAMY_MODEL_ALLOW_UNSTAMPED=1), then bl_mf_parse_isolated. */
bl_status bl_mf_read_image(const char *label, const unsigned char *img, size_t size, bl_mf_op op, const char *name,
                           unsigned flags, bl_mf_result *out, bl_error *err);
/* The same for the file at path, read whole first (a folder, a device or an unreadable file is BL_EIO
 * with the operating system's reason). */
bl_status bl_mf_read_file(const char *path, bl_mf_op op, const char *name, unsigned flags, bl_mf_result *out,
                          bl_error *err);

/* ---- the serialisation between the reader and the library (wire.c) --------------------------- */

#define BL_MF_WIRE_LABEL_MAX  4096u          /* longest file label in a request                */
#define BL_MF_WIRE_MODELS_MAX 100000u        /* most models in one file                        */
#define BL_MF_WIRE_STR_MAX    (64u << 20)    /* longest string value (bytes)                   */

/* A request: what to read (op, name or NULL), the reader's limits, and the image. */
typedef struct bl_mf_request {
    bl_mf_op             op;
    uint32_t             cpu_s;      /* RLIMIT_CPU for the reader (s)            */
    uint64_t             mem_bytes;  /* RLIMIT_AS for the reader; 0: none        */
    const char          *label;
    const char          *name;       /* NULL: the only model                     */
    const unsigned char *image;
    size_t               size;
} bl_mf_request;

/* A growable byte buffer; oom is set (and further appends ignored) when an allocation fails. */
typedef struct bl_mf_buf {
    unsigned char *p;
    size_t         len, cap;
    int            oom;
} bl_mf_buf;

/* The fixed part of a request before the image (the reader reads it first, sets its limits, then
 * reads the image). */
int bl_mf_wire_put_request_head(bl_mf_buf *b, const bl_mf_request *rq);
/* Parses a request head from buf (len bytes available); returns its length, 0 when more bytes are
 * needed, -1 when malformed. The label is copied to label (BL_MF_WIRE_LABEL_MAX + 1 bytes), the
 * name to name (BL_MF_NAME_MAX + 1 bytes); rq points at them. */
long bl_mf_wire_get_request_head(const unsigned char *buf, size_t len, bl_mf_request *rq, char *label, char *name);

/* The reader's answer: status and message, and on BL_OK the result. */
int bl_mf_wire_put_answer(bl_mf_buf *b, bl_status st, const char *message, const bl_mf_result *res);

/* Checks an answer field by field against what was asked (op, name) and fills out on BL_OK: sizes,
 * counts, enums, names, duplicates, record names; the reader's own error is passed on with its
 * message. A malformed answer is BL_EFORMAT naming label. */
bl_status bl_mf_wire_get_answer(const unsigned char *buf, size_t len, bl_mf_op op, const char *name,
                                const char *label, bl_mf_result *out, bl_error *err);

#endif
