/* reader.c — streaming TSV/CSV reader (format and error conventions in reader.h).
 * Reads fixed-size chunks and assembles one record at a time in a growing buffer: a line, or several
 * when a quoted field holds line breaks, so memory stays at the longest record, not the file. Each
 * line is split as it arrives, in one pass that carries its state over to the next line, into a
 * second buffer of unquoted, NUL-terminated fields. Not here: interpreting fields. */
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

/* Where the split of a record stands, at the character being read. */
enum {
    F_START,    /* at a field's start: blanks so far */
    F_BARE,     /* in an unquoted field */
    F_QUOTED,   /* inside a quoted field */
    F_CLOSED,   /* right after a quote inside a quoted field: "" (a quote) or the field's end */
    F_AFTER     /* blanks after a quoted field's closing quote */
};

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
    char *line;                     /* the current record as read: its lines joined by '\n', line ends dropped */
    size_t line_len, line_cap;
    char *out;                      /* the record's fields, unquoted, each NUL-terminated */
    size_t out_len, out_cap;
    size_t line_no;                 /* lines read so far: the number of the last one */
    size_t rec_line;                /* line where the current record starts */
    int state;                      /* F_*: the split of the current record */
    size_t keep;                    /* out length up to an unquoted field's last non-blank */
    size_t nf, nf_cap;              /* fields of the current record; capacity of raw_off and out_off */
    size_t *raw_off;                /* [nf_cap] where each field starts in line (its opening quote, or
                                       first non-blank) */
    size_t *out_off;                /* [nf_cap] where its text starts in out */
    unsigned rec_seps;              /* SEP_* outside quotes in the current record (the header's only) */
    bl_error rec_err;               /* the record's first problem, reported once the record is read */
    int fatal;                      /* an unclosed quote ran to the end of the input */
    size_t ncols;
    char *names;                    /* the header's fields: every column name, NUL-terminated */
    char **colnames;                /* [ncols] pointers into names */
    struct colref *sorted;          /* [ncols] the names in strcmp order, for lookups by name */
    size_t hdr_cr_col;              /* editor column of the header's first bare CR, 0 if none */
    unsigned hdr_seps;              /* SEP_* found in a one-column header */
    char **fields;                  /* [ncols] pointers into out */
    size_t rows;
    XXH64_state_t *hash;
};

/* Counts, in a line read with delimiter d, the delimiters outside quoted fields (quotes as the
 * reader reads them: one opens a field only at its start). Fed one character at a time. */
struct sniff {
    char d;
    int state;                      /* F_START, F_BARE, F_QUOTED or F_CLOSED */
    long n;
};

static void sniff_put(struct sniff *s, int c) {
    switch (s->state) {
    case F_QUOTED: if (c == '"') s->state = F_CLOSED; return;
    case F_CLOSED: if (c == '"') { s->state = F_QUOTED; return; } break;
    case F_START: if (c == '"') { s->state = F_QUOTED; return; } break;
    default: break;
    }
    if (c == s->d) { s->n++; s->state = F_START; }
    else if (c != ' ' || s->state != F_START) s->state = F_BARE;
}

bl_status bl_delim_for_path(const char *path, char delim, char *out, bl_error *err) {
    BL_CHECK_ARG(path && out, err, "delimiter: NULL argument");
    if (delim == '\t' || delim == ',') { *out = delim; return BL_OK; }
    BL_CHECK_ARG(delim == 0, err, "delimiter must be tab or comma");
    size_t n = strlen(path);
    if (n >= 4 && (strcmp(path + n - 4, ".tsv") == 0 || strcmp(path + n - 4, ".TSV") == 0)) { *out = '\t'; return BL_OK; }
    if (n >= 4 && (strcmp(path + n - 4, ".csv") == 0 || strcmp(path + n - 4, ".CSV") == 0)) { *out = ','; return BL_OK; }
    /* Another name: the header line tells (not every caller has a delimiter option). A tab decides
     * for tabs, since values of a tab-separated file may hold commas but not the other way round.
     * Only delimiters outside quoted fields count: a quoted header name may hold either. */
    FILE *f = bl_file_open_read(path, 0, err);
    if (!f) return err ? err->status : BL_EIO;
    struct stat sb;
    if (fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode)) { /* a pipe read here would lose its start */
        fclose(f);
        return bl_seterr(err, BL_EINVAL, "%s: cannot tell the delimiter: not a regular file and the name ends in "
                         "neither .tsv nor .csv", path);
    }
    struct sniff tabs = { '\t', F_START, 0 }, commas = { ',', F_START, 0 };
    int c;
    for (long k = 0; k < (1L << 20) && (c = getc(f)) != EOF && c != '\n' && c != '\r'; k++) {
        sniff_put(&tabs, c);
        sniff_put(&commas, c);
    }
    fclose(f);
    if (tabs.n || commas.n) {
        *out = tabs.n ? '\t' : ',';
        return BL_OK;
    }
    return bl_seterr(err, BL_EINVAL, "%s: cannot tell the delimiter: the name ends in neither .tsv nor .csv and "
                     "the first line holds no tab or comma outside quotes", path);
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

/* Makes *buf hold at least need bytes, doubling (so appending stays linear). */
static bl_status reserve(const bl_reader *r, char **buf, size_t *cap, size_t need, bl_error *err) {
    if (need <= *cap) return BL_OK;
    size_t c = *cap ? *cap : 256;
    while (c < need) {
        if (c > SIZE_MAX / 2) { c = need; break; }
        c *= 2;
    }
    char *p = realloc(*buf, c);
    if (!p) return bl_seterr(err, BL_ENOMEM, "%s:%zu: out of memory for a %zu-byte record", r->name, r->rec_line, need);
    *buf = p;
    *cap = c;
    return BL_OK;
}

static bl_status line_append(bl_reader *r, const unsigned char *src, size_t n, bl_error *err) {
    size_t need;
    if (bl_add_size(r->line_len, n + 1, &need)) return bl_seterr(err, BL_ENOMEM, "%s: line too long", r->name);
    bl_status st = reserve(r, &r->line, &r->line_cap, need, err);
    if (st != BL_OK) return st;
    memcpy(r->line + r->line_len, src, n);
    r->line_len += n;
    r->line[r->line_len] = '\0';
    return BL_OK;
}

/* Appends the next line (without its LF/CRLF) to r->line. *got = 0 at end of input. */
static bl_status read_line(bl_reader *r, int *got, bl_error *err) {
    const size_t start = r->line_len;
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
    if (r->line_len > start && r->line[r->line_len - 1] == '\r') r->line[--r->line_len] = '\0';
    r->line_no++;
    *got = 1;
    return BL_OK;
}

/* The line and editor column of byte off of the current record. */
static void pos_of(const bl_reader *r, size_t off, size_t *line, size_t *col) {
    size_t ln = r->rec_line, ls = 0;
    for (const char *p = r->line, *e = r->line + off; p < e && (p = memchr(p, '\n', (size_t)(e - p))) != NULL; p++) {
        ln++;
        ls = (size_t)(p - r->line) + 1;
    }
    *line = ln;
    *col = bl_utf8_chars(r->line + ls, off - ls) + 1;
}

/* Keeps the first problem of a record, at byte off, for bl_reader_next to report. */
static void record_error(bl_reader *r, size_t off, const char *what, const char *hint) {
    if (r->rec_err.status != BL_OK) return;
    size_t line, col;
    pos_of(r, off, &line, &col);
    bl_seterr(&r->rec_err, BL_EFORMAT, "%s:%zu:%zu: %s%s", r->name, line, col, what, hint);
}

static bl_status field_begin(bl_reader *r, size_t at, bl_error *err) {
    if (r->nf == r->nf_cap) {
        size_t cap = r->nf_cap ? r->nf_cap * 2 : 16;
        size_t *a = realloc(r->raw_off, cap * sizeof *a);
        if (a) r->raw_off = a;
        size_t *b = a ? realloc(r->out_off, cap * sizeof *b) : NULL;
        if (!b) return bl_seterr(err, BL_ENOMEM, "%s:%zu: out of memory for the fields of a record", r->name, r->rec_line);
        r->out_off = b;
        r->nf_cap = cap;
    }
    r->raw_off[r->nf] = at;
    r->out_off[r->nf] = r->out_len;
    r->keep = r->out_len;
    r->state = F_START;
    return BL_OK;
}

/* Ends the current field: an unquoted one loses its trailing blanks. */
static void field_end(bl_reader *r) {
    if (r->state == F_BARE) r->out_len = r->keep;
    r->out[r->out_len++] = '\0';
    r->nf++;
}

/* Text after a quoted field's closing quote: an error (RFC 4180), with a hint when it is the other
 * delimiter (a quoted CSV read as tab-separated shows up here first). The rest is kept as unquoted
 * text, so that quotes further on are read as a lenient reader would and the next record starts
 * where it should. */
static void text_after_quote(bl_reader *r, size_t i) {
    const char c = r->line[i];
    const char *hint = c == ',' && r->delim != ',' ? " (it is a comma: is the file comma-separated?)"
                     : c == '\t' && r->delim != '\t' ? " (it is a tab: is the file tab-separated?)"
                     : c == ';' ? " (it is a semicolon: only tab and comma are supported as delimiters)" : "";
    record_error(r, i, "text after the closing quote of a quoted field: a quoted field ends at its closing quote, "
                 "and a quote inside it is written as two (\"\")", hint);
    r->state = F_BARE;
    r->keep = r->out_len;
}

static unsigned sep_bit(char c) {
    return c == '\t' ? SEP_TAB : c == ',' ? SEP_COMMA : c == ';' ? SEP_SEMICOLON : 0;
}

/* Splits line[from..to) of the current record into fields, going on from where the previous line of
 * the record left off. out must have room for line_len + 1 bytes (a field's text is never longer
 * than it is in line, and each NUL takes a delimiter's place). */
static bl_status split(bl_reader *r, size_t from, size_t to, bl_error *err) {
    const char d = r->delim;
    const int header = r->ncols == 0;
    for (size_t i = from; i < to; i++) {
        const char c = r->line[i];
        if (header && r->state != F_QUOTED) r->rec_seps |= sep_bit(c);
        switch (r->state) {
        case F_START:
            if (c == ' ') { r->raw_off[r->nf] = i + 1; continue; }
            if (c == '"') { r->state = F_QUOTED; continue; }
            if (c == d) break;
            r->state = F_BARE;
            r->out[r->out_len++] = c;
            r->keep = r->out_len;
            continue;
        case F_BARE:
            if (c == d) break;
            r->out[r->out_len++] = c;
            if (c != ' ') r->keep = r->out_len;
            continue;
        case F_QUOTED: {
            /* the run up to the next quote, at once: quoted text may be long */
            const char *q = memchr(r->line + i, '"', to - i);
            size_t n = q ? (size_t)(q - (r->line + i)) : to - i;
            memcpy(r->out + r->out_len, r->line + i, n);
            r->out_len += n;
            i += n;
            if (q) r->state = F_CLOSED;
            continue;
        }
        case F_CLOSED:
            if (c == '"') { r->out[r->out_len++] = '"'; r->state = F_QUOTED; continue; }
            if (c == d) break;
            if (c == ' ') { r->state = F_AFTER; continue; }
            text_after_quote(r, i);
            r->out[r->out_len++] = c;
            r->keep = r->out_len;
            continue;
        default: /* F_AFTER */
            if (c == ' ') continue;
            if (c == d) break;
            text_after_quote(r, i);
            r->out[r->out_len++] = c;
            r->keep = r->out_len;
            continue;
        }
        /* a delimiter outside quotes: the next field starts after it */
        field_end(r);
        bl_status st = field_begin(r, i + 1, err);
        if (st != BL_OK) return st;
    }
    return BL_OK;
}

/* Reads the next record (a line, or more while a quoted field goes on) and splits it into fields;
 * empty lines between records are skipped. *got = 0 at end of input. A problem of the record's own
 * (invalid UTF-8, text after a closing quote, a quote that never closes) is kept in r->rec_err. */
static bl_status next_record(bl_reader *r, int *got, bl_error *err) {
    *got = 0;
    for (;;) {
        r->line_len = r->out_len = r->nf = 0;
        r->rec_seps = 0;
        bl_clearerr(&r->rec_err);
        int any;
        bl_status st = read_line(r, &any, err);
        if (st != BL_OK || !any) return st;
        if (r->line_no == 1 && r->line_len >= 3 && memcmp(r->line, "\xEF\xBB\xBF", 3) == 0) {
            memmove(r->line, r->line + 3, r->line_len - 2);   /* skip the byte-order mark */
            r->line_len -= 3;
        }
        if (r->line_len == 0) continue;
        r->rec_line = r->line_no;
        if ((st = field_begin(r, 0, err)) != BL_OK) return st;
        size_t from = 0;
        for (;;) {
            size_t bad;
            if (!bl_utf8_valid(r->line + from, r->line_len - from, &bad)) {
                unsigned char b = (unsigned char)r->line[from + bad];
                char what[64];
                snprintf(what, sizeof what, "%s (byte 0x%02x)", b == 0 ? "NUL byte in text" : "invalid UTF-8", b);
                record_error(r, from + bad, what, "");
            }
            if ((st = reserve(r, &r->out, &r->out_cap, r->line_len + 2, err)) != BL_OK) return st;
            if ((st = split(r, from, r->line_len, err)) != BL_OK) return st;
            if (r->state != F_QUOTED) break;
            /* A quoted field holds a line break: it goes on in the next line. */
            if ((st = line_append(r, (const unsigned char *)"\n", 1, err)) != BL_OK) return st;
            r->out[r->out_len++] = '\n';
            from = r->line_len;
            if ((st = read_line(r, &any, err)) != BL_OK) return st;
            if (!any) {   /* it swallowed the rest of the file: that, not an earlier problem, is the news */
                bl_clearerr(&r->rec_err);
                record_error(r, r->raw_off[r->nf], "unclosed quote: the quoted field that starts here runs to the end "
                             "of the file (a quote inside a quoted field is written as two: \"\")", "");
                r->fatal = 1;
                break;
            }
        }
        field_end(r);
        *got = 1;
        return BL_OK;
    }
}

static int colref_cmp(const void *a, const void *b) {
    const struct colref *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    if (c) return c;
    return (x->j > y->j) - (x->j < y->j);
}

/* Notes what could explain a header that lacks the expected columns: a bare CR (the whole file may
 * be one line) or, in a one-column header, another delimiter outside quotes. */
static void note_header(bl_reader *r) {
    const char *cr = memchr(r->line, '\r', r->line_len);
    if (cr) {
        size_t line;
        pos_of(r, (size_t)(cr - r->line), &line, &r->hdr_cr_col);
    }
    if (r->ncols == 1) r->hdr_seps = r->rec_seps;
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
    bl_status st = next_record(r, &got, err);
    if (st != BL_OK) goto fail;
    if (!got) {
        st = bl_seterr(err, BL_EFORMAT, "%s:1:1: empty file (a header line is required)", r->name);
        goto fail;
    }
    if (r->rec_err.status != BL_OK) {
        st = r->rec_err.status;
        if (err) *err = r->rec_err;
        goto fail;
    }
    r->ncols = r->nf;
    note_header(r);
    r->names = malloc(r->out_len);
    r->colnames = calloc(r->ncols, sizeof *r->colnames);
    r->fields = calloc(r->ncols, sizeof *r->fields);
    r->sorted = calloc(r->ncols, sizeof *r->sorted);
    if (!r->names || !r->colnames || !r->fields || !r->sorted) {
        st = bl_seterr(err, BL_ENOMEM, "%s: out of memory", r->name);
        goto fail;
    }
    /* One copy of the split header holds every name; the record buffers are reused for the rows. */
    memcpy(r->names, r->out, r->out_len);
    for (size_t j = 0; j < r->ncols; j++) {
        r->colnames[j] = r->names + r->out_off[j];
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
                       r->name, bl_reader_field_line(r, empty), bl_reader_field_col(r, empty), empty + 1,
                       hint_suffix(r, hint, sizeof hint));
        goto fail;
    }
    if (dup < r->ncols) {
        st = bl_seterr(err, BL_EFORMAT, "%s:%zu:%zu: duplicate column '%.100s' (also column %zu)%s",
                       r->name, bl_reader_field_line(r, dup), bl_reader_field_col(r, dup), r->colnames[dup],
                       first + 1, hint_suffix(r, hint, sizeof hint));
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
    free(r->raw_off);
    free(r->out_off);
    free(r->line);
    free(r->out);
    free(r->chunk);
    free(r->name);
    if (r->hash) XXH64_freeState(r->hash);
    free(r);
}

size_t bl_reader_ncols(const bl_reader *r) { return r->ncols; }
const char *bl_reader_colname(const bl_reader *r, size_t j) { return j < r->ncols ? r->colnames[j] : NULL; }
const char *bl_reader_name(const bl_reader *r) { return r->name; }
size_t bl_reader_line(const bl_reader *r) { return r->rec_line; }
size_t bl_reader_last_line(const bl_reader *r) { return r->line_no; }
size_t bl_reader_rows(const bl_reader *r) { return r->rows; }
int bl_reader_fatal(const bl_reader *r) { return r->fatal; }
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

size_t bl_reader_field_line(const bl_reader *r, size_t j) {
    if (j >= r->nf || !r->line) return r->rec_line;
    size_t line, col;
    pos_of(r, r->raw_off[j], &line, &col);
    return line;
}

size_t bl_reader_field_col(const bl_reader *r, size_t j) {
    if (j >= r->nf || !r->line) return 1;
    size_t line, col;
    pos_of(r, r->raw_off[j], &line, &col);
    return col;
}

const char *bl_reader_where(const bl_reader *r, size_t j, char *buf, size_t cap) {
    if (!cap) return buf;
    size_t line = r->rec_line, col = 1;
    if (j < r->nf && r->line) pos_of(r, r->raw_off[j], &line, &col);
    if (line == r->rec_line) snprintf(buf, cap, "%s:%zu:%zu: ", r->name, line, col);
    else snprintf(buf, cap, "%s:%zu:%zu: in the row from line %zu, ", r->name, line, col, r->rec_line);
    return buf;
}

bl_status bl_reader_next(bl_reader *r, char ***fields, bl_error *err) {
    BL_CHECK_ARG(r && fields, err, "reader: NULL argument");
    *fields = NULL;
    int got;
    bl_status st = next_record(r, &got, err);
    if (st != BL_OK) return st;
    if (!got) {
        r->rec_line = r->line_no;
        return BL_OK;
    }
    if (r->rec_err.status != BL_OK) {
        if (err) *err = r->rec_err;
        return r->rec_err.status;
    }
    if (r->nf != r->ncols) {
        /* Point at the first surplus field, or at the end of a short row. */
        size_t line, col;
        pos_of(r, r->nf > r->ncols ? r->raw_off[r->ncols] : r->line_len, &line, &col);
        char from[64] = "";
        if (line != r->rec_line) snprintf(from, sizeof from, " (the row starts on line %zu)", r->rec_line);
        return bl_seterr(err, BL_EFORMAT, "%s:%zu:%zu: ragged row: %zu field%s, the header has %zu%s",
                         r->name, line, col, r->nf, r->nf == 1 ? "" : "s", r->ncols, from);
    }
    for (size_t j = 0; j < r->ncols; j++) r->fields[j] = r->out + r->out_off[j];
    r->rows++;
    *fields = r->fields;
    return BL_OK;
}
