/* modelfile.h — model records and the HDF5 files that hold them.
 *
 * A bl_modelrec is a model-agnostic, in-memory description of one trained model: a name, named
 * float64 weight blocks (rank 1 or 2) and typed attributes filed under sub-group paths ("scaler",
 * "encoder", "schema", "hyperparameters", "training", ...). The model code fills one before saving
 * and reads one after loading; this module knows nothing about what the blocks mean.
 *
 * bl_mf_save/load/list/remove move records in and out of HDF5 files. One file may hold
 * several models under /models/<name>/. The layout is documented in models/README.md. The module's
 * names all start bl_mf_ (BL_MF_), apart from the public bl_model_file_* that src/api builds on them.
 * Its parts: modelrec.c (records), h5.c (HDF5 helpers), checksum.c (the header), write.c (saves),
 * read.c (loads), isolate.c + wire.c + reader_main.c (the reader process), modelfile_testing.c.
 *
 * What this module guarantees:
 *  - saving is atomic: the new file (the other models copied into it) replaces the target by the one
 *    policy of common/file.h (a temporary in the target's folder, fsync'ed, renamed over it, the folder
 *    fsync'ed; links followed, the mode kept). Any failure removes the temporary and leaves the
 *    previous file untouched.
 *  - float64 values come back bit-identical (stored as IEEE little-endian doubles); a record whose
 *    attribute precision is "f32" is stored as IEEE little-endian floats and comes back as the doubles
 *    of those floats (BL_MF_PRECISION_ATTR).
 *  - reading checks the header's checksum, then the format name, the major version, every weight
 *    dataset's type and rank, and reports clear errors naming the file (and the object inside it).
 *    HDF5 parses a file's bytes only in the model-file reader, a separate process (isolate.c,
 *    reader_main.c): a file that crashes or hangs HDF5 is an error here, never a crash.
 *  - thread safety: Debian's libhdf5 is not built thread-safe, so every HDF5 call in this module runs
 *    under one process-wide mutex (loads do not take it: their HDF5 runs in the reader). An
 *    application that also calls HDF5 itself must not do so while another thread saves.
 *
 * What it does not do: lock the file against other processes (two processes saving to the same
 * file at once: the last rename wins and may drop a model the other added).
 *
 * This is the only part of the project that includes hdf5.h.
 */
#ifndef BL_MODELFILE_MODELFILE_H
#define BL_MODELFILE_MODELFILE_H

#include "bellamy/bellamy.h"

#include <stddef.h>
#include <stdint.h>

/* Root attribute `format` of every model file, and the format version this build writes. A reader
 * accepts any minor version of its major version (newer minors only add objects, which it ignores)
 * and refuses a newer major version with BL_EVERSION. */
#define BL_MF_FORMAT        "bellamy-model"
#define BL_MF_VERSION_MAJOR 1  /* what a file is written as, unless a model needs more: */
#define BL_MF_VERSION_MAJOR_MAX 3 /* the newest major this library reads and writes. A model
                                            record with the model-group attribute
                                            `format_major_required` = 2 (a model whose inputs mean
                                            something older readers would misread, e.g. numbers
                                            encoded by log magnitude) makes its file "2.0", so a
                                            library that knows only 1.x refuses the file instead of
                                            predicting nonsense; without such a model it is 1.x again */
#define BL_MF_MAJOR_ATTR "format_major_required"
#define BL_MF_VERSION_MINOR 4  /* 1.1: ensemble members (members/ attributes, member<j>.* blocks);
                                        1.2: encoder/numbers, training/val_rows;
                                        1.3: seen/, finetune/, members/epochs;
                                        1.4: calibration/, finetune/fit_* and disagreement */
#define BL_MF_VERSION_MINOR_2 2 /* the minor written with major 2: 2.1 is 1.3's layout plus the
                                          major-2 rule (2.0 was 1.2's); 2.2 is 1.4's */
#define BL_MF_VERSION_MINOR_3 1 /* the minor written with major 3: 3.0 is 2.1's layout plus guard/,
                                          which a model needs when it blends Ernest into its predictions
                                          (format_major_required = 3); 3.1 is 2.2's */

/* Longest accepted model, block, attribute or group-path name (bytes, without the NUL). */
#define BL_MF_NAME_MAX 255
/* Deepest accepted attribute group path ("a/b/c" has depth 3). */
#define BL_MF_GROUP_DEPTH_MAX 8

typedef enum bl_mfattr_type {
    BL_MFATTR_STRING = 1, /* UTF-8 string (scalar)             */
    BL_MFATTR_INT64,      /* int64 (scalar)                    */
    BL_MFATTR_DOUBLE,     /* float64 (scalar)                  */
    BL_MFATTR_DOUBLES,    /* float64[count], count may be 0    */
    BL_MFATTR_STRINGS,    /* UTF-8 string[count], count may be 0 */
    BL_MFATTR_INT64S      /* int64[count], count may be 0      */
} bl_mfattr_type;

/* One weight block: data is row-major, rows x cols; a rank-1 block has cols == 1. */
typedef struct bl_mfblock {
    char   *name;
    int     rank;  /* 1 or 2 */
    size_t  rows;  /* rank 1: the length */
    size_t  cols;  /* rank 1: always 1   */
    double *data;  /* rows * cols values, owned */
} bl_mfblock;

/* One attribute. group is "" for an attribute of the model group itself, else a '/'-separated path
 * below it ("scaler", "training/losses"). count is 1 for scalars, the length for arrays. */
typedef struct bl_mfattr {
    char          *group;
    char          *name;
    bl_mfattr_type type;
    size_t         count;
    union {
        char    *s;   /* BL_MFATTR_STRING  */
        int64_t  i;   /* BL_MFATTR_INT64   */
        double   d;   /* BL_MFATTR_DOUBLE  */
        double  *dv;  /* BL_MFATTR_DOUBLES (NULL when count == 0) */
        char   **sv;  /* BL_MFATTR_STRINGS (NULL when count == 0) */
        int64_t *iv;  /* BL_MFATTR_INT64S  (NULL when count == 0) */
    } v;
} bl_mfattr;

/* A model record. Read the arrays freely (in insertion order, which save/load preserve); change
 * them only through the functions below. */
typedef struct bl_modelrec {
    char       *name;
    bl_mfblock *blocks;
    size_t      n_blocks, cap_blocks;
    bl_mfattr  *attrs;
    size_t      n_attrs, cap_attrs;
} bl_modelrec;

/* ---- building a record (every add copies its arguments) ---------------------------------------- */

/* A new, empty record. name: 1..255 bytes, no '/', not "." or "..", no control characters. */
bl_status bl_modelrec_new(const char *name, bl_modelrec **out, bl_error *err);
void      bl_modelrec_free(bl_modelrec *rec);

/* Adds a weight block: rank 1 (rows values, cols must be 1) or rank 2 (rows x cols, row-major);
 * rows, cols >= 1. A second block of the same name is BL_EINVAL. */
bl_status bl_modelrec_add_block(bl_modelrec *rec, const char *name, int rank, size_t rows, size_t cols,
                                const double *data, bl_error *err);

/* Adds an attribute under group ("" or NULL: the model group; else a path such as "scaler" or
 * "training/losses"; its first part may not be "weights"). A second attribute with the same group
 * and name is BL_EINVAL. Arrays may be empty (n == 0; values may then be NULL). */
bl_status bl_modelrec_add_string(bl_modelrec *rec, const char *group, const char *name, const char *value,
                                 bl_error *err);
bl_status bl_modelrec_add_int(bl_modelrec *rec, const char *group, const char *name, int64_t value,
                              bl_error *err);
bl_status bl_modelrec_add_double(bl_modelrec *rec, const char *group, const char *name, double value,
                                 bl_error *err);
bl_status bl_modelrec_add_doubles(bl_modelrec *rec, const char *group, const char *name, const double *values,
                                  size_t n, bl_error *err);
bl_status bl_modelrec_add_strings(bl_modelrec *rec, const char *group, const char *name,
                                  const char *const *values, size_t n, bl_error *err);
bl_status bl_modelrec_add_ints(bl_modelrec *rec, const char *group, const char *name, const int64_t *values,
                               size_t n, bl_error *err);

/* ---- reading a record ---------------------------------------------------------------------------- */

/* The block of that name, or NULL. */
const bl_mfblock *bl_modelrec_find_block(const bl_modelrec *rec, const char *name);

/* The block's data, after checking it exists (BL_ENOTFOUND) and has the expected rank and shape
 * (BL_EFORMAT). rows or cols 0 means "any" (for rank 1 pass cols 1 or 0). */
bl_status bl_modelrec_get_block(const bl_modelrec *rec, const char *name, int rank, size_t rows, size_t cols,
                                const double **data, bl_error *err);

/* The attribute (group "" or NULL: the model group), or NULL. */
const bl_mfattr *bl_modelrec_find_attr(const bl_modelrec *rec, const char *group, const char *name);

/* Typed getters: BL_ENOTFOUND when absent, BL_EFORMAT when of another type; the message names
 * "<group>/<name>" and the model. Returned pointers live as long as the record. */
bl_status bl_modelrec_get_string(const bl_modelrec *rec, const char *group, const char *name,
                                 const char **value, bl_error *err);
bl_status bl_modelrec_get_int(const bl_modelrec *rec, const char *group, const char *name, int64_t *value,
                              bl_error *err);
bl_status bl_modelrec_get_double(const bl_modelrec *rec, const char *group, const char *name, double *value,
                                 bl_error *err);
bl_status bl_modelrec_get_doubles(const bl_modelrec *rec, const char *group, const char *name,
                                  const double **values, size_t *n, bl_error *err);
bl_status bl_modelrec_get_strings(const bl_modelrec *rec, const char *group, const char *name,
                                  const char *const **values, size_t *n, bl_error *err);
bl_status bl_modelrec_get_ints(const bl_modelrec *rec, const char *group, const char *name,
                               const int64_t **values, size_t *n, bl_error *err);

/* The model-group attribute that says how a record's weight blocks are stored (models/README.md):
 * "f64" (or absent: every file written before it, and float64 models) IEEE float64 datasets, the values
 * bit-identical; "f32" IEEE float32 datasets (H5T_IEEE_F32LE), each value read back into its double
 * exactly. A save refuses an "f32" record holding a value float32 cannot hold (|x| > FLT_MAX, or not
 * finite) before it touches the file; a load refuses a dataset of the other type. */
#define BL_MF_PRECISION_ATTR "precision"
/* The record's precision: *f32 = 1 for "f32", 0 for "f64" or no attribute. Another value, or a value of
 * another type, is BL_EFORMAT naming label (the file; may be NULL), the model, the attribute and the fix. */
bl_status bl_modelrec_precision(const bl_modelrec *rec, const char *label, int *f32, bl_error *err);

/* ---- model files ----------------------------------------------------------------------------------- */

/* Adds rec to the file at path, or replaces the model of the same name (at the same position), and
 * keeps the file's other models (read as a load reads them: an existing file without a checksum
 * header is refused unless BELLAMY_MODEL_ALLOW_UNSTAMPED=1). Creates the file when absent (mode 0666 less the umask; an existing
 * file keeps its mode). Refuses (and leaves alone) a path that exists but is not a model file of a
 * supported version. Atomic, see above. */
bl_status bl_mf_save(const char *path, const bl_modelrec *rec, bl_error *err);

/* Loads the model called name; name NULL loads the file's only model (BL_EINVAL if it holds
 * several). A missing name is BL_ENOTFOUND and the message lists the models present. A file without
 * a checksum header is BL_EFORMAT naming the remedy, unless BELLAMY_MODEL_ALLOW_UNSTAMPED=1. */
bl_status bl_mf_load(const char *path, const char *name, bl_modelrec **out, bl_error *err);
/* The same; flags BL_MF_ALLOW_UNSTAMPED loads a file without a header (unverified). */
#define BL_MF_ALLOW_UNSTAMPED 1u
bl_status bl_mf_load_ex(const char *path, const char *name, unsigned flags, bl_modelrec **out,
                        bl_error *err);

/* The file's checksum header (models/README.md), checked strictly (BELLAMY_MODEL_IGNORE_CHECKSUM does
 * not apply): 1 present and matching, 0 none (written before 0.4.1 or by another program), -1 damaged,
 * truncated or unreadable (err says which). Reads no HDF5. */
int bl_mf_verify(const char *path, bl_error *err);

/* Writes the file again, every model re-read and re-written, with a fresh header (as a save does,
 * atomically). trust_edits = 0: a checksum that does not match is an error, as for a save;
 * 1: BELLAMY_MODEL_IGNORE_CHECKSUM=1 lets a file edited on purpose through, and it gets a header that
 * matches its edited contents. Gives a file written before 0.4.1 a header: calling it is vouching
 * for such a file, so it needs neither BELLAMY_MODEL_ALLOW_UNSTAMPED nor a flag. */
bl_status bl_mf_rewrite(const char *path, int trust_edits, bl_error *err);

/* Names of the file's models, in the order they were first added. Free with bl_mf_names_free. */
bl_status bl_mf_list(const char *path, char ***names, size_t *n, bl_error *err);
bl_status bl_mf_list_ex(const char *path, unsigned flags, char ***names, size_t *n, bl_error *err);
void      bl_mf_names_free(char **names, size_t n);

/* Removes one model (atomically, like save); BL_ENOTFOUND when absent. The file stays, possibly
 * with no model in it. */
bl_status bl_mf_remove(const char *path, const char *name, bl_error *err);

/* ---- test support (internal; used by tests/test_modelfile.c, which may not include hdf5.h) ------ */

/* Points in a save at which the hook is called. */
typedef enum bl_mf_point {
    BL_MFPOINT_TEMP_CREATED = 1, /* the temporary file exists, nothing written yet             */
    BL_MFPOINT_MODELS_WRITTEN,   /* every model is in the temporary file, not yet closed       */
    BL_MFPOINT_CLOSED,           /* the temporary is flushed and closed, not yet fsync'ed      */
    BL_MFPOINT_BEFORE_RENAME     /* fsync'ed, about to be renamed over the target              */
} bl_mf_point;

/* A hook returning nonzero makes the save fail at that point (BL_EIO, "injected failure"); a test may
 * also end a forked child there to simulate a crash. NULL removes the hook. Process-wide. */
typedef int (*bl_mf_hook)(bl_mf_point point, void *ctx);
void bl_mf_set_test_hook(bl_mf_hook hook, void *ctx);

/* Sets (value non-NULL) or deletes (value NULL) a string attribute of the root group of an existing
 * HDF5 file, in place and not atomically; fixed != 0 writes a fixed-length string instead of a
 * variable-length one. For crafting foreign, mislabelled or future-version files in tests. */
bl_status bl_mf_test_set_root_string(const char *path, const char *attr, const char *value, int fixed,
                                     bl_error *err);

/* Writes a zero-filled dataset at dset_path (e.g. "/models/m/weights/w"), creating the file and the
 * groups when absent and replacing an existing dataset. rank 1..3 with dims; kind 'd' float64,
 * 'f' float32, 'F' float32 filled with +inf, 'i' int32. For crafting foreign or malformed files in tests. */
bl_status bl_mf_test_write_dataset(const char *path, const char *dset_path, int rank,
                                   const size_t *dims, char kind, bl_error *err);

/* Sets (value non-NULL: its type, count and value; its group and name are not read) or deletes (NULL)
 * attribute attr of the group at group (e.g. "/models/m") of an existing file, in place; restamps the
 * header. For crafting attributes a save refuses to write (an unknown precision, say) in tests. */
bl_status bl_mf_test_set_attr(const char *path, const char *group, const char *attr, const bl_mfattr *value,
                              bl_error *err);

/* Recomputes the checksum in the header of a model file edited in place with HDF5 (both functions
 * above do it themselves), so that a test reaches the check it means instead of the checksum's. */
bl_status bl_mf_test_restamp(const char *path, bl_error *err);

#endif /* BL_MODELFILE_MODELFILE_H */
