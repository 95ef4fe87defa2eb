/* reader.h — streaming reader for delimited text tables (TSV/CSV) with a header line.
 *
 * Format accepted:
 *   - one record per line; LF or CRLF line ends; no length limit on a line;
 *   - fields separated by one delimiter character (tab or comma);
 *   - quoted fields as RFC 4180 has them (what spreadsheets, pandas and most exporters write): a field
 *     whose first non-blank character is a double quote runs to the closing quote and may hold the
 *     delimiter and line breaks (a CRLF inside becomes LF; the record then spans several lines); ""
 *     inside it is one quote; blanks inside are kept. Blanks may stand around the quotes; other text
 *     after the closing quote is an error, and so is a quote that never closes (naming where it
 *     opened). A quote inside an unquoted field is an ordinary character (24" stays 24"), as pandas
 *     and Python's csv module read it;
 *   - spaces at both ends of an unquoted field are trimmed (so "Nodes, Runtime" works);
 *   - the first record is the header: every column name non-empty and distinct;
 *   - completely empty lines are skipped (they do not count as data rows, but do count as lines);
 *   - UTF-8 only (a leading byte-order mark is skipped); invalid UTF-8 or a NUL byte is an error;
 *   - every data row has exactly as many fields as the header (a ragged row is an error).
 * Errors read "FILE:LINE:COLUMN: message" with the header as line 1 and COLUMN counted in characters
 * from 1, as an editor counts them; a problem in a row that spans lines names the line it is on.
 * Not here: what the columns mean (schema.h) or numbers (encode.h).
 */
#ifndef BL_DATA_READER_H
#define BL_DATA_READER_H

#include <stddef.h>
#include <stdint.h>

#include "bellamy/bellamy.h"

typedef struct bl_reader bl_reader;

/* delim: '\t', ',' or 0 to pick by extension (.tsv → tab, .csv → comma) or, for another name, by the
 * file's first line, outside quoted fields (a tab → tab, else a comma → comma, neither: BL_EINVAL;
 * unreadable: BL_EIO). */
bl_status bl_delim_for_path(const char *path, char delim, char *out, bl_error *err);

/* Opens path and reads its header. BL_EIO if it cannot be opened; BL_EFORMAT for an empty file,
 * bad UTF-8 or empty/duplicate column names in the header. */
bl_status bl_reader_open(bl_reader **out, const char *path, char delim, bl_error *err);

/* The same over a memory buffer (not copied; must outlive the reader). name is used in messages. */
bl_status bl_reader_open_mem(bl_reader **out, const char *name, const void *data, size_t len,
                             char delim, bl_error *err);

void bl_reader_free(bl_reader *r);

size_t      bl_reader_ncols(const bl_reader *r);
const char *bl_reader_colname(const bl_reader *r, size_t j);
/* Index of the column called name, or -1. O(log ncols): headers may be very wide. */
long        bl_reader_find(const bl_reader *r, const char *name);
/* Why the header may lack the columns a caller expects, for its "missing column" message: a
 * one-column header that contains tabs, commas or semicolons (another delimiter than the one read
 * with), and/or a carriage return not followed by a line feed (old Mac line ends make the whole file
 * one line). Writes the hint into buf (cap bytes, always NUL-terminated; "" when nothing looks
 * wrong) and returns buf. Header errors of the reader itself (empty, duplicate names) carry it. */
const char *bl_reader_header_hint(const bl_reader *r, char *buf, size_t cap);
const char *bl_reader_name(const bl_reader *r);

/* Reads the next data row: *fields points to ncols NUL-terminated strings valid until the next call.
 * Returns BL_OK with *fields == NULL at end of file. After an error the row is consumed and the next
 * call reads on, except after an unclosed quote, which ran to the end of the input (bl_reader_fatal). */
bl_status bl_reader_next(bl_reader *r, char ***fields, bl_error *err);

/* 1 when the last error of bl_reader_next was no single row's: a quote that never closed swallowed
 * the rest of the input, so a caller that skips bad rows must fail instead. */
int bl_reader_fatal(const bl_reader *r);

/* Line number (1-based, header = 1) where the row last returned starts, and the last line it spans
 * (the same unless a quoted field holds line breaks); for the header after open, its lines; at end of
 * file both are the number of lines read. */
size_t bl_reader_line(const bl_reader *r);
size_t bl_reader_last_line(const bl_reader *r);
/* Where field j of that row starts (its opening quote, or its first non-blank character): the line,
 * and the editor column (1-based, in characters) within that line. */
size_t bl_reader_field_line(const bl_reader *r, size_t j);
size_t bl_reader_field_col(const bl_reader *r, size_t j);
/* "FILE:LINE:COLUMN: " of field j, the prefix of a message about that field, followed by "in the row
 * from line N, " when the row starts on an earlier line. Writes into buf (cap bytes); returns buf. */
const char *bl_reader_where(const bl_reader *r, size_t j, char *buf, size_t cap);
/* Number of data rows returned so far (0-based index of the last row + 1). */
size_t bl_reader_rows(const bl_reader *r);

/* XXH64 (seed 0) of every byte read so far; after end of file, of the whole file. */
uint64_t bl_reader_hash(const bl_reader *r);

#endif /* BL_DATA_READER_H */
