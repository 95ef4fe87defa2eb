/* reader.c — streaming TSV/CSV reader (format and error conventions in reader.h).
 * Reads fixed-size chunks and assembles one line at a time in a growing buffer, so memory stays at
 * the longest line, not the file. Not here: interpreting fields. */
#include "data/reader.h"
#include "common/error.h"
#include "common/file.h"
#include "common/str.h"
#include "common/utf8.h"

#include <errno.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#define CHUNK 65536

/* Separators that a one-column header may contain when the file uses another delimiter. */
enum { SEP_TAB = 1, SEP_COMMA = 2, SEP_SEMICOLON = 4 };

/* A column name with its index; sorted by (name, index) so that equal names sit together in
 * column order, which finds duplicates in O(N log N) and serves bl_reader_find by binary search. */
struct colref {
    const char *name;
    size_t j;
};

struct bl_reader {
    FILE *fp;                       /* file input, or NULL for memory input */
    const unsigned char *mem;       /* memory input */
    size_t mem_len, mem_pos;
    unsigned char *chunk;           /* [CHUNK] file read buffer */
    size_t chunk_len, chunk_pos;
    int eof;                        /* no more input bytes */
    char *name;
    char delim;
    char *line;                     /* current line, split in place into fields */
    size_t line_len, line_cap;
    size_t line_no;                 /* 1-based number of the current line */
    size_t ncols;
    char *names;                    /* the header line, split: every column name, NUL-terminated */
    char **colnames;                /* [ncols] pointers into names */
    struct colref *sorted;          /* [ncols] the names in strcmp order, for lookups by name */
    size_t hdr_cr_col;              /* editor column of the header's first bare CR, 0 if none */
    unsigned hdr_seps;              /* SEP_* found in a one-column header */
    char **fields;                  /* [ncols] pointers into line */
    size_t *field_off;              /* [ncols] byte offset of each field in line (after trimming) */
    size_t rows;
    XXH64_state_t *hash;
};

bl_status bl_delim_for_path(const char *path, char delim, char *out, bl_error *err) {
    BL_CHECK_ARG(path && out, err, "delimiter: NULL argument");
    if (delim == '\t' || delim == ',') { *out = delim; return BL_OK; }
    BL_CHECK_ARG(delim == 0, err, "delimiter must be tab or comma");
    size_t n = strlen(path);
    if (n >= 4 && (strcmp(path + n - 4, ".tsv") == 0 || strcmp(path + n - 4, ".TSV") == 0)) { *out = '\t'; return BL_OK; }
    if (n >= 4 && (strcmp(path + n - 4, ".csv") == 0 || strcmp(path + n - 4, ".CSV") == 0)) { *out = ','; return BL_OK; }
    /* Another name: the header line tells (not every caller has a delimiter option). A tab decides
     * for tabs, since values of a tab-separated file may hold commas but not the other way round. */
    FILE *f = bl_file_open_read(path, 0, err);
    if (!f) return err ? err->status : BL_EIO;
    struct stat sb;
    if (fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode)) { /* a pipe read here would lose its start */
        fclose(f);
        return bl_seterr(err, BL_EINVAL, "%s: cannot tell the delimiter: not a regular file and the name ends in "
                         "neither .tsv nor .csv", path);
    }
    int c, tabs = 0, commas = 0;
    for (long k = 0; k < (1L << 20) && (c = getc(f)) != EOF && c != '\n' && c != '\r'; k++) {
        tabs += c == '\t';
        commas += c == ',';
    }
    fclose(f);
    if (tabs || commas) {
        *out = tabs ? '\t' : ',';
        return BL_OK;
    }
    return bl_seterr(err, BL_EINVAL, "%s: cannot tell the delimiter: the name ends in neither .tsv nor .csv and "
                     "the first line holds no tab or comma", path);
}

/* Fills the chunk buffer; returns bytes available (0 at end of input). */
static bl_status refill(bl_reader *r, bl_error *err) {
    if (r->chunk_pos < r->chunk_len || r->eof) return BL_OK;
    if (r->fp) {
        size_t got = fread(r->chunk, 1, CHUNK, r->fp);
        if (got < CHUNK) {
            if (ferror(r->fp)) return bl_seterr(err, BL_EIO, "%s: read error: %s", r->name, strerror(errno));
            if (got == 0) r->eof = 1;
        }
        r->chunk_len = got;
        r->chunk_pos = 0;
        if (got) XXH64_update(r->hash, r->chunk, got);
    } else {
        size_t got = r->mem_len - r->mem_pos;
        if (got > CHUNK) got = CHUNK;
        if (got == 0) { r->eof = 1; return BL_OK; }
        /* Memory input is read in place: point the chunk window at it. */
        r->chunk_len = got;
        r->chunk_pos = 0;
        XXH64_update(r->hash, r->mem + r->mem_pos, got);
    }
    return BL_OK;
}

static const unsigned char *chunk_data(const bl_reader *r) {
    return r->fp ? r->chunk : r->mem + r->mem_pos;
}

static void chunk_consume(bl_reader *r, size_t n) {
    r->chunk_pos += n;
    if (!r->fp && r->chunk_pos == r->chunk_len) {
        r->mem_pos += r->chunk_len;
        r->chunk_len = r->chunk_pos = 0;
    }
}

static bl_status line_append(bl_reader *r, const unsigned char *src, size_t n, bl_error *err) {
    size_t need;
    if (bl_add_size(r->line_len, n + 1, &need)) return bl_seterr(err, BL_ENOMEM, "%s: line too long", r->name);
    if (need > r->line_cap) {
        size_t cap = r->line_cap ? r->line_cap : 256;
        while (cap < need) {
            if (cap > SIZE_MAX / 2) { cap = need; break; }
            cap *= 2;
        }
        char *p = realloc(r->line, cap);
        if (!p) return bl_seterr(err, BL_ENOMEM, "%s:%zu: out of memory for a %zu-byte line", r->name,
                                 r->line_no + 1, need);
        r->line = p;
        r->line_cap = cap;
    }
    memcpy(r->line + r->line_len, src, n);
    r->line_len += n;
    r->line[r->line_len] = '\0';
    return BL_OK;
}

/* Reads the next line (without its LF/CRLF) into r->line. *got = 0 at end of input. */
static bl_status read_line(bl_reader *r, int *got, bl_error *err) {
    r->line_len = 0;
    *got = 0;
    int any = 0;
    for (;;) {
        bl_status st = refill(r, err);
        if (st != BL_OK) return st;
        if (r->chunk_pos >= r->chunk_len) break;   /* end of input */
        any = 1;
        const unsigned char *d = chunk_data(r) + r->chunk_pos;
        size_t avail = r->chunk_len - r->chunk_pos;
        const unsigned char *nl = memchr(d, '\n', avail);
        size_t take = nl ? (size_t)(nl - d) : avail;
        st = line_append(r, d, take, err);
        if (st != BL_OK) return st;
        chunk_consume(r, nl ? take + 1 : take);
        if (nl) break;
    }
    if (!any) return BL_OK;
    if (!r->line) {   /* an empty last line still needs a buffer */
        bl_status st = line_append(r, (const unsigned char *)"", 0, err);
        if (st != BL_OK) return st;
    }
    if (r->line_len && r->line[r->line_len - 1] == '\r') r->line[--r->line_len] = '\0';
    r->line_no++;
    *got = 1;
    return BL_OK;
}

/* Reads lines until a non-empty one, validating UTF-8. *got = 0 at end of input. */
static bl_status next_nonempty(bl_reader *r, int *got, bl_error *err) {
    for (;;) {
        bl_status st = read_line(r, got, err);
        if (st != BL_OK || !*got) return st;
        if (r->line_no == 1 && r->line_len >= 3 && memcmp(r->line, "\xEF\xBB\xBF", 3) == 0) {
            memmove(r->line, r->line + 3, r->line_len - 2);   /* skip the byte-order mark */
            r->line_len -= 3;
        }
        size_t bad;
        if (!bl_utf8_valid(r->line, r->line_len, &bad)) {
            unsigned char b = (unsigned char)r->line[bad];
            return bl_seterr(err, BL_EFORMAT, "%s:%zu:%zu: %s (byte 0x%02x)", r->name, r->line_no,
                             bl_utf8_chars(r->line, bad) + 1,
                             b == 0 ? "NUL byte in text" : "invalid UTF-8", b);
        }
        if (r->line_len > 0) return BL_OK;
    }
}

/* Splits r->line at the delimiter into at most max fields; returns the field count found. */
static size_t split(bl_reader *r, char **fields, size_t *offs, size_t max) {
    size_t n = 0, start = 0;
    for (size_t i = 0; i <= r->line_len; i++) {
        if (i < r->line_len && r->line[i] != r->delim) continue;
        if (n < max) {
            size_t a = start, b = i;
            while (a < b && r->line[a] == ' ') a++;
            while (b > a && r->line[b - 1] == ' ') b--;
            r->line[b] = '\0';
            fields[n] = r->line + a;
            offs[n] = a;
        }
        n++;
        start = i + 1;
    }
    return n;
}

static size_t count_fields(const bl_reader *r) {
    size_t n = 1;
    for (size_t i = 0; i < r->line_len; i++) n += r->line[i] == r->delim;
    return n;
}

static int colref_cmp(const void *a, const void *b) {
    const struct colref *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    if (c) return c;
    return (x->j > y->j) - (x->j < y->j);
}

/* Notes, before the header is split, what could explain a header that lacks the expected columns:
 * a bare CR (the whole file may be one line) or, in a one-column header, another delimiter. */
static void note_header(bl_reader *r) {
    const char *cr = memchr(r->line, '\r', r->line_len);
    if (cr) r->hdr_cr_col = bl_utf8_chars(r->line, (size_t)(cr - r->line)) + 1;
    if (r->ncols != 1) return;
    if (memchr(r->line, '\t', r->line_len)) r->hdr_seps |= SEP_TAB;
    if (memchr(r->line, ',', r->line_len)) r->hdr_seps |= SEP_COMMA;
    if (memchr(r->line, ';', r->line_len)) r->hdr_seps |= SEP_SEMICOLON;
}

/* hint as "; HINT" for appending to a header message, or "" (buf has cap bytes). */
static const char *hint_suffix(const bl_reader *r, char *buf, size_t cap) {
    char h[256];
    bl_reader_header_hint(r, h, sizeof h);
    snprintf(buf, cap, "%s%s", h[0] ? "; " : "", h);
    return buf;
}

static bl_status open_common(bl_reader *r, bl_reader **out, bl_error *err) {
    int got;
    char hint[300];
    bl_status st = next_nonempty(r, &got, err);
    if (st != BL_OK) goto fail;
    if (!got) {
        st = bl_seterr(err, BL_EFORMAT, "%s:1:1: empty file (a header line is required)", r->name);
        goto fail;
    }
    r->ncols = count_fields(r);
    note_header(r);
    r->names = malloc(r->line_len + 1);
    r->colnames = calloc(r->ncols, sizeof *r->colnames);
    r->fields = calloc(r->ncols, sizeof *r->fields);
    r->field_off = calloc(r->ncols, sizeof *r->field_off);
    r->sorted = calloc(r->ncols, sizeof *r->sorted);
    if (!r->names || !r->colnames || !r->fields || !r->field_off || !r->sorted) {
        st = bl_seterr(err, BL_ENOMEM, "%s: out of memory", r->name);
        goto fail;
    }
    split(r, r->fields, r->field_off, r->ncols);
    /* One copy of the split header holds every name; the line buffer is reused for the rows. */
    memcpy(r->names, r->line, r->line_len + 1);
    for (size_t j = 0; j < r->ncols; j++) {
        r->colnames[j] = r->names + (r->fields[j] - r->line);
        r->sorted[j].name = r->colnames[j];
        r->sorted[j].j = j;
    }
    /* Report the leftmost column that is empty or repeats an earlier name (naming the first
     * occurrence), as a left-to-right scan would; editor columns are counted only for the message,
     * since counting them for every column costs O(N²) on a wide header. */
    size_t empty = r->ncols, dup = r->ncols, first = 0;
    for (size_t j = 0; j < r->ncols && empty == r->ncols; j++)
        if (r->colnames[j][0] == '\0') empty = j;
    qsort(r->sorted, r->ncols, sizeof *r->sorted, colref_cmp);
    for (size_t i = 1; i < r->ncols; i++) {
        /* sorted[i] repeats a name; the earlier entries of its run hold smaller indices, so the
         * run's first entry is the first occurrence and its second the earliest repeat. */
        if (strcmp(r->sorted[i].name, r->sorted[i - 1].name) != 0) continue;
        size_t start = i - 1;
        if (r->sorted[i].j < dup) { dup = r->sorted[i].j; first = r->sorted[start].j; }
        while (i + 1 < r->ncols && strcmp(r->sorted[i + 1].name, r->sorted[start].name) == 0) i++;
    }
    if (empty < dup) {
        st = bl_seterr(err, BL_EFORMAT, "%s:%zu:%zu: empty column name (column %zu of the header)%s",
                       r->name, r->line_no, bl_reader_field_col(r, empty), empty + 1,
                       hint_suffix(r, hint, sizeof hint));
        goto fail;
    }
    if (dup < r->ncols) {
        st = bl_seterr(err, BL_EFORMAT, "%s:%zu:%zu: duplicate column '%.100s' (also column %zu)%s",
                       r->name, r->line_no, bl_reader_field_col(r, dup), r->colnames[dup], first + 1,
                       hint_suffix(r, hint, sizeof hint));
        goto fail;
    }
    *out = r;
    return BL_OK;
fail:
    bl_reader_free(r);
    return st;
}

static bl_reader *reader_new(const char *name, char delim) {
    bl_reader *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    r->delim = delim;
    r->name = bl_strdup(name);
    r->hash = XXH64_createState();
    if (!r->name || !r->hash) { bl_reader_free(r); return NULL; }
    XXH64_reset(r->hash, 0);
    return r;
}

bl_status bl_reader_open(bl_reader **out, const char *path, char delim, bl_error *err) {
    BL_CHECK_ARG(out && path, err, "reader: NULL argument");
    *out = NULL;
    char d = 0;
    bl_status st = bl_delim_for_path(path, delim, &d, err);
    if (st != BL_OK) return st;
    bl_reader *r = reader_new(path, d);
    if (!r) return bl_seterr(err, BL_ENOMEM, "%s: out of memory", path);
    r->chunk = malloc(CHUNK);
    if (!r->chunk) { bl_reader_free(r); return bl_seterr(err, BL_ENOMEM, "%s: out of memory", path); }
    r->fp = bl_file_open_read(path, 0, err);
    if (!r->fp) {
        st = err ? err->status : BL_EIO;
        bl_reader_free(r);
        return st;
    }
    return open_common(r, out, err);
}

bl_status bl_reader_open_mem(bl_reader **out, const char *name, const void *data, size_t len,
                             char delim, bl_error *err) {
    BL_CHECK_ARG(out && name && (data || len == 0), err, "reader: NULL argument");
    *out = NULL;
    BL_CHECK_ARG(delim == '\t' || delim == ',', err, "reader: delimiter must be tab or comma");
    bl_reader *r = reader_new(name, delim);
    if (!r) return bl_seterr(err, BL_ENOMEM, "%s: out of memory", name);
    r->mem = data;
    r->mem_len = len;
    return open_common(r, out, err);
}

void bl_reader_free(bl_reader *r) {
    if (!r) return;
    if (r->fp) fclose(r->fp);
    free(r->names);
    free(r->colnames);
    free(r->sorted);
    free(r->fields);
    free(r->field_off);
    free(r->line);
    free(r->chunk);
    free(r->name);
    if (r->hash) XXH64_freeState(r->hash);
    free(r);
}

size_t bl_reader_ncols(const bl_reader *r) { return r->ncols; }
const char *bl_reader_colname(const bl_reader *r, size_t j) { return j < r->ncols ? r->colnames[j] : NULL; }
const char *bl_reader_name(const bl_reader *r) { return r->name; }
size_t bl_reader_line(const bl_reader *r) { return r->line_no; }
size_t bl_reader_rows(const bl_reader *r) { return r->rows; }
uint64_t bl_reader_hash(const bl_reader *r) { return XXH64_digest(r->hash); }

static int colref_name_cmp(const void *key, const void *elem) {
    return strcmp(key, ((const struct colref *)elem)->name);
}

long bl_reader_find(const bl_reader *r, const char *name) {
    /* Names are distinct (open rejects duplicates), so at most one entry matches. */
    const struct colref *c = bsearch(name, r->sorted, r->ncols, sizeof *r->sorted, colref_name_cmp);
    return c ? (long)c->j : -1;
}

const char *bl_reader_header_hint(const bl_reader *r, char *buf, size_t cap) {
    if (!cap) return buf;
    buf[0] = '\0';
    size_t len = 0;
    if (r->hdr_seps) {
        const char *what = r->hdr_seps & SEP_TAB     ? "tabs: is the file tab-separated?"
                         : r->hdr_seps & SEP_COMMA   ? "commas: is the file comma-separated?"
                         : "semicolons: is the file semicolon-separated? (only tab and comma are supported)";
        int w = snprintf(buf, cap, "the header has 1 column and it contains %s", what);
        len = w < 0 ? 0 : (size_t)w < cap ? (size_t)w : cap - 1;
    }
    if (r->hdr_cr_col && len + 1 < cap)
        snprintf(buf + len, cap - len, "%sthe header contains carriage returns without line feeds (the first "
                 "at line 1, column %zu): old Mac line ends? Lines must end in LF or CRLF", len ? "; " : "",
                 r->hdr_cr_col);
    return buf;
}

size_t bl_reader_field_col(const bl_reader *r, size_t j) {
    if (j >= r->ncols || !r->line) return 1;
    return bl_utf8_chars(r->line, r->field_off[j]) + 1;
}

bl_status bl_reader_next(bl_reader *r, char ***fields, bl_error *err) {
    BL_CHECK_ARG(r && fields, err, "reader: NULL argument");
    *fields = NULL;
    int got;
    bl_status st = next_nonempty(r, &got, err);
    if (st != BL_OK || !got) return st;
    size_t n = count_fields(r);
    if (n != r->ncols) {
        /* Point at the first surplus field, or at the end of a short row. */
        size_t at = r->line_len;
        if (n > r->ncols) {
            size_t seen = 0;
            for (size_t i = 0; i < r->line_len; i++)
                if (r->line[i] == r->delim && ++seen == r->ncols) { at = i + 1; break; }
        }
        return bl_seterr(err, BL_EFORMAT, "%s:%zu:%zu: ragged row: %zu field%s, the header has %zu",
                         r->name, r->line_no, bl_utf8_chars(r->line, at) + 1, n, n == 1 ? "" : "s",
                         r->ncols);
    }
    split(r, r->fields, r->field_off, r->ncols);
    r->rows++;
    *fields = r->fields;
    return BL_OK;
}
