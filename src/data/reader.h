/* reader.h — streaming reader for delimited text tables (TSV/CSV) with a header line.
 *
 * Format accepted:
 *   - one record per line; LF or CRLF line ends; no length limit on a line;
 *   - fields separated by one delimiter character (tab or comma); no quoting: a quote character is an
 *     ordinary character, so a field cannot contain the delimiter;
 *   - spaces at both ends of a field are trimmed (so "Nodes, Runtime" works);
 *   - the first line is the header: every column name non-empty and distinct;
 *   - completely empty lines are skipped (they do not count as data rows, but do count as lines);
 *   - UTF-8 only (a leading byte-order mark is skipped); invalid UTF-8 or a NUL byte is an error;
 *   - every data row has exactly as many fields as the header (a ragged row is an error).
 * Errors read "FILE:LINE:COLUMN: message" with the header as line 1 and COLUMN counted in characters
 * from 1, as an editor counts them.
 * Not here: what the columns mean (schema.h) or numbers (encode.h).
 */
#ifndef BL_DATA_READER_H
#define BL_DATA_READER_H

#include <stddef.h>
#include <stdint.h>

#include "bellamy/bellamy.h"

typedef struct bl_reader bl_reader;

/* delim: '\t', ',' or 0 to pick by extension (.tsv → tab, .csv → comma) or, for another name, by the
 * file's first line (a tab → tab, else a comma → comma, neither: BL_EINVAL; unreadable: BL_EIO). */
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
 * Returns BL_OK with *fields == NULL at end of file. */
bl_status bl_reader_next(bl_reader *r, char ***fields, bl_error *err);

/* Line number (1-based, header = 1) of the row last returned, and the editor column (1-based, in
 * characters) where field j of that row starts; for the header after open, line 1. */
size_t bl_reader_line(const bl_reader *r);
size_t bl_reader_field_col(const bl_reader *r, size_t j);
/* Number of data rows returned so far (0-based index of the last row + 1). */
size_t bl_reader_rows(const bl_reader *r);

/* XXH64 (seed 0) of every byte read so far; after end of file, of the whole file. */
uint64_t bl_reader_hash(const bl_reader *r);

#endif /* BL_DATA_READER_H */
