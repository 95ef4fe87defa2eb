/* cli_util.h — what every bellamy command-line program shares: a small declarative option parser,
 * --help text generated from the same table, error printing and exit codes.
 *
 * Conventions: options are long only ("--name VALUE" or "--name=VALUE"); "--" ends options;
 * errors go to stderr as "PROG: message"; exit 0 on success, 1 on failure, 2 on a usage error.
 * Not here: anything about models or data (the programs do that).
 */
#ifndef BL_CLI_UTIL_H
#define BL_CLI_UTIL_H

#include <stddef.h>

#include "bellamy/bellamy.h"
#include "bellamy/train.h"

enum { BL_EXIT_OK = 0, BL_EXIT_FAIL = 1, BL_EXIT_USAGE = 2 };

#define BL_CLI_LIST_MAX 64

/* Values of an option that may be repeated (e.g. --set name=value). Points into argv. */
typedef struct bl_cli_list {
    size_t      n;
    const char *items[BL_CLI_LIST_MAX];
} bl_cli_list;

typedef enum bl_cli_type {
    BL_OPT_FLAG,     /* int*: set to 1, takes no value */
    BL_OPT_STRING,   /* const char**: points into argv; never empty */
    BL_OPT_INT,      /* long*: decimal integer (bl_cli_integer) */
    BL_OPT_SIZE,     /* size_t*: non-negative decimal integer */
    BL_OPT_DOUBLE,   /* double*: finite decimal number (bl_cli_number) */
    BL_OPT_LIST,     /* bl_cli_list*: repeatable string */
    BL_OPT_CHOICE    /* const char**: one of the '|'-separated words in choices */
} bl_cli_type;

typedef struct bl_cli_option {
    const char *name;      /* long name without the dashes */
    bl_cli_type type;
    void       *dest;      /* see bl_cli_type */
    const char *metavar;   /* e.g. "FILE" (NULL for flags) */
    const char *help;      /* one line */
    const char *def;       /* default shown by --help; NULL = no default */
    int         required;  /* 1: must be given */
    const char *choices;   /* BL_OPT_CHOICE: "tab|comma" */
    int         seen;      /* set by the parser */
} bl_cli_option;

/* Parses argv[first..argc). Positional arguments are collected into pos[] (up to *npos capacity;
 * *npos receives the count; pos may be NULL to forbid them). --help prints usage + options and
 * returns -1 (the caller exits with bl_cli_finish). Returns 0 on success or BL_EXIT_USAGE after printing a message.
 * usage: the synopsis line(s) printed under "usage:". */
int bl_cli_parse(const char *prog, const char *usage, int argc, char **argv, int first,
                 bl_cli_option *opts, size_t nopts, const char **pos, size_t *npos);

/* The width help text is wrapped to: $COLUMNS (20..10000), else the terminal's, else 100. */
int bl_cli_width(void);
/* Prints text word-wrapped to width, continuation lines indented by indent; the cursor stands at
 * column first_col; ends with a newline. A word longer than a line stands alone. */
void bl_cli_print_wrapped(const char *text, size_t indent, size_t first_col, int width);

/* Prints usage and the option table to stdout (as --help does): every option's help text starts in
 * one column and wraps to bl_cli_width(); an option too long for the left column gets a line of
 * its own, its help on the next. */
void bl_cli_print_help(const char *prog, const char *usage, const bl_cli_option *opts, size_t nopts);

/* Called first by every program's main: a write past a file-size limit (ulimit -f) then fails with
 * EFBIG, which the program reports and cleans up after, instead of SIGXFSZ killing it silently. */
void bl_cli_init(void);
/* --version: "PROG VERSION" and the kernel copy in use; exit code (BL_EXIT_USAGE for a bad BELLAMY_CPU). */
int bl_cli_version(const char *prog);

/* With BELLAMY_MODEL_IGNORE_CHECKSUM=1 set, a model file whose checksum header does not match is read
 * anyway: say so on stderr ("PROG: note: ..."), so that nobody takes its predictions for verified ones. */
void bl_cli_note_unverified(const char *prog, const char *model_path);

/* "PROG: message\n" on stderr (printf-style). */
void bl_cli_error(const char *prog, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Prints a library error ("PROG: message") and returns BL_EXIT_FAIL. */
int bl_cli_fail(const char *prog, const bl_error *err);

/* Prints a refusal of the training options ("bl_train_opts.val_fraction 1: must be ...") under the
 * option's name ("--val-fraction 1: must be ...") and returns BL_EXIT_USAGE. */
int bl_cli_opts_fail(const char *prog, const bl_error *err);

/* *out = v where the library keeps an int; else prints "--NAME V: out of range" and returns BL_EXIT_USAGE. */
int bl_cli_int_option(const char *prog, const char *name, long v, int *out);

/* Parses a delimiter option value: NULL → 0 (by extension), "tab" → '\t', "comma" → ','. */
char bl_cli_delim(const char *value);

/* Strict decimal numbers, as the option parser reads them: an optional sign, digits, and (for
 * bl_cli_number) a fraction and an exponent; no blanks, no hexadecimal, no inf/nan. Return 0 on
 * success, -1 when s is not such a number, -2 when it is out of range (overflow, or a non-zero
 * value that underflows). */
int bl_cli_number(const char *s, double *out);
int bl_cli_integer(const char *s, long *out);

/* Checks, before any work is done, an input file named by --flag: it exists, is not a folder and
 * can be opened for reading. Otherwise prints "PROG: --flag PATH: reason" and returns
 * BL_EXIT_FAIL; 0 when fine. The library still checks the contents. */
int bl_cli_check_input(const char *prog, const char *flag, const char *path);

/* Checks, before any work is done, that a file can be written at path (named by --flag): its folder
 * exists and is writable, and path is not a folder or a read-only file. Otherwise prints
 * "PROG: --flag PATH: reason" and returns BL_EXIT_FAIL; 0 when fine. */
int bl_cli_check_output(const char *prog, const char *flag, const char *path);

/* Checks a model name given by --flag against the model-file rule (models/README.md: 1..255 bytes,
 * no '/', not "." or "..", no control characters). Prints the reason and returns BL_EXIT_USAGE. */
int bl_cli_check_model_name(const char *prog, const char *flag, const char *name);
/* The same rule without printing: NULL when name is a valid model name, else why not ("it contains '/'"). */
const char *bl_cli_model_name_problem(const char *name);

/* JSON on standard output: a string literal (escaped), a number (null for infinity or NaN: JSON has
 * neither), and a property's value (a number property's natural number as a JSON number, anything
 * else as a string). */
void bl_cli_json_str(const char *s);
void bl_cli_json_num(double v);
/* A scale-out list, the one syntax of every program's option that takes one: items separated by
 * commas, each N, A..B or A..B:STEP, whole numbers of machines in 1..max_value; blanks around an
 * item are allowed, and whole numbers in decimal forms (2.0, 2e1) as a data file's scale-out column
 * takes them; signs and fractions (2.5) are not; a scale-out given twice (2,2 or 2..6,4) is refused
 * naming it; at most max_count in all (past them, a range is shown the step that fits). *out
 * (malloc'd, in the order given) and *n receive them. Returns 0, or prints "PROG: --FLAG 'SPEC': why" and returns BL_EXIT_USAGE (BL_EXIT_FAIL: out of
 * memory). */
int bl_cli_scale_outs(const char *prog, const char *flag, const char *spec, double max_value, size_t max_count,
                      double **out, size_t *n);
/* v as the shortest text that reads back the same (common/fmt.h), in one of 8 static buffers used in
 * turn: up to 8 in one printf. */
const char *bl_cli_num(double v);
void bl_cli_json_value(const char *v, int number);

/* Says on stderr which rows of a runs or data file (--flag) were skipped as invalid, one line each
 * ("PROG: note: FILE:LINE:COLUMN: why; row skipped (--skip-invalid)"), then how many and how many
 * are used; nothing when none was. */
void bl_cli_note_skipped(const char *prog, const char *flag, const bl_data *d);

/* Flushes standard output; when that fails (disk full, closed pipe) prints
 * "PROG: cannot write the output: reason" and returns BL_EXIT_FAIL, else BL_EXIT_OK. Every program
 * ends with it so a failed write is never silent. */
int bl_cli_finish(const char *prog);

#endif /* BL_CLI_UTIL_H */
