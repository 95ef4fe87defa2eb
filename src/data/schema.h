/* schema.h — the text format that says how a data file's columns become Bellamy's scale-out,
 * runtime and context properties (full description with examples: datasets/README.md).
 *
 *   # comment (to the end of the line, outside quotes)
 *   bellamy-schema 1                          optional; the format version
 *   scale_out      COLUMN
 *   runtime        COLUMN s|ms|min|h          seconds, milliseconds, minutes or hours
 *   property NAME  essential|optional  number|text  SOURCE
 *   cluster_totals COLUMN...                  columns that are cluster totals (any number of lines)
 *
 * SOURCE is one of
 *   column COLUMN           the column's text as is
 *   join COLUMN COLUMN...   the columns' texts joined by single spaces
 *   template "TEXT"         TEXT with every <COLUMN> replaced by that column's text, e.g. "<k> 0.001"
 *   const VALUE             a constant ("quoted" when it holds spaces or is empty)
 *   per_machine VALUE       a natural number × the row's scale-out (a cluster total; number only)
 * Tokens are separated by blanks; "..." quotes a token (\" and \\ escapes inside).
 *
 * NAME must be one of the known Bellamy properties (bl_schema_known_property) or start with "x_"
 * for a user extension. A property is a cluster total when it is made by per_machine or reads a
 * column named in cluster_totals; cluster totals and the scale-out are not part of a context's
 * identity. The scale-out and the runtime are two different columns, and no property may read
 * either; every cluster_totals column must be read by a property, by number properties only.
 * A leading UTF-8 byte-order mark is skipped. Parse errors read "FILE:LINE:COLUMN: message".
 * Column names are checked against a data file's header later, by the data-set loader, with the
 * schema's line and column in the message.
 * Not here: reading data files.
 */
#ifndef BL_DATA_SCHEMA_H
#define BL_DATA_SCHEMA_H

#include <stddef.h>

#include "bellamy/bellamy.h"

typedef enum bl_prop_kind { BL_PROP_NUMBER = 0, BL_PROP_TEXT = 1 } bl_prop_kind;

typedef enum bl_source_kind {
    BL_SRC_COLUMN = 0,      /* one column as is */
    BL_SRC_JOIN = 1,        /* several columns joined by spaces */
    BL_SRC_CONST = 2,       /* constant text or number */
    BL_SRC_PER_MACHINE = 3, /* constant per-machine number × scale-out */
    BL_SRC_TEMPLATE = 4     /* text with <COLUMN> placeholders */
} bl_source_kind;

/* A column name and where the schema mentions it (for messages). */
typedef struct bl_schema_ref {
    char  *name;
    size_t line, col;
} bl_schema_ref;

typedef struct bl_schema_prop {
    char          *name;
    int            essential;     /* 1 essential, 0 optional */
    bl_prop_kind   kind;
    bl_source_kind source;
    size_t         n_cols;        /* columns read (COLUMN: 1, JOIN: ≥ 1, TEMPLATE: its placeholders in
                                     order, CONST/PER_MACHINE: 0) */
    bl_schema_ref *cols;          /* [n_cols] */
    char          *value;         /* CONST/PER_MACHINE: the constant as written; TEMPLATE: the template;
                                     else NULL */
    double         per_machine;   /* number CONST and PER_MACHINE: the parsed value */
    size_t         line, col;     /* where the property is declared */
} bl_schema_prop;

typedef struct bl_schema {
    char           *name;         /* file name or label, for messages */
    bl_schema_ref   scale_out;
    bl_schema_ref   runtime;
    double          runtime_to_s; /* 1 for s, 0.001 for ms, 60 for min, 3600 for h */
    const char     *runtime_unit; /* the unit as written: "s", "ms", "min" or "h" (static) */
    const char     *runtime_unit_words; /* the same for messages: "seconds", ... (static) */
    size_t          n_props;
    bl_schema_prop *props;        /* [n_props] in file order */
    size_t          n_totals;
    bl_schema_ref  *totals;       /* [n_totals] cluster-total columns */
} bl_schema;

/* Parses schema text (len bytes, need not be NUL-terminated). */
bl_status bl_schema_parse(const char *name, const char *text, size_t len, bl_schema **out, bl_error *err);
/* The same without the column-role checks (check_columns: distinct scale-out/runtime/property columns,
 * cluster totals on number properties only, each listed once and read by some property), which 0.3
 * added. For schema text stored in a model file: a model written by an earlier version, whose schema
 * was valid then, must keep loading and keep its cluster totals. */
bl_status bl_schema_parse_stored(const char *name, const char *text, size_t len, bl_schema **out, bl_error *err);
/* Reads and parses a file. */
bl_status bl_schema_load(const char *path, bl_schema **out, bl_error *err);
void bl_schema_free(bl_schema *s);

/* 1 when property i of s is a cluster total: made by per_machine, or reading a column named in
 * cluster_totals (the parser makes sure only number properties read such columns). */
int bl_schema_prop_is_total(const bl_schema *s, size_t i);

/* One property a consumer of the data expects, e.g. a trained model (bl_schema_check_props). */
typedef struct bl_prop_spec {
    const char  *name;
    int          essential;      /* 1 essential, 0 optional */
    bl_prop_kind kind;
    int          cluster_total;  /* 1 or 0; -1: unknown (not checked) */
} bl_prop_spec;

/* Checks that s declares exactly the properties want[0..n): the same names, each essential or
 * optional, number or text, and a cluster total or not (where known) as wanted. `what` names the
 * consumer in messages ("model 'grep'"). BL_EFORMAT "SCHEMA:LINE:COLUMN: property 'x' ..." for the
 * first property that differs or is not wanted; "SCHEMA: ..." for a wanted property s lacks. */
bl_status bl_schema_check_props(const bl_schema *s, const bl_prop_spec *want, size_t n, const char *what,
                                bl_error *err);

/* 1 when name is a known property name or an "x_" extension. */
int bl_schema_known_property(const char *name);
/* "; did you mean 'machine_type'?" for a name that is none of them (the closest known names, from
 * bl_suggest), or "" when none is close; written into buf (cap bytes), returned. */
const char *bl_schema_suggest_property(const char *name, char *buf, size_t cap);
/* The known names, comma separated, for messages and --help. */
const char *bl_schema_known_list(void);

#endif /* BL_DATA_SCHEMA_H */
