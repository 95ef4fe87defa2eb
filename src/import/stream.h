/* stream.h — lines of a Spark event-log file, decompressed by the file's name as they are read.
 *
 * Memory stays at the longest line plus one codec block, whatever the file's size. Codecs (by the
 * last extension, after ".inprogress" and ".compact" are set aside):
 *   ".zstd" / ".zst"  zstd frames (concatenated frames allowed);
 *   ".lz4"            lz4-java's LZ4BlockOutputStream (Spark's LZ4 codec), not the lz4 frame format:
 *                     blocks of "LZ4Block", a token (high nibble 0x10 raw / 0x20 LZ4, low nibble: level,
 *                     block size 1 << (10 + level)), compressed and decompressed length and a checksum
 *                     (int32 little-endian each; XXH32 seed 0x9747b28c of the decompressed bytes masked
 *                     with 0x0FFFFFFF), then the data; a raw block of length 0 ends a stream (another
 *                     may follow, as lz4-java reads them);
 *   ".snappy"         snappy-java's SnappyOutputStream: a 16-byte header (0x82 "SNAPPY" 0x00, version
 *                     and compatible version, int32 big-endian), then chunks (int32 big-endian length,
 *                     a raw snappy block); a header again where a length is due starts a concatenated
 *                     stream;
 *   ".lzf"            refused (BL_EUNSUPPORTED) with what to do instead;
 *   anything else     plain text.
 * A stream cut off mid-frame or mid-block, or damaged (a checksum that does not match, data the codec
 * rejects), is BL_EFORMAT "FILE: the CODEC stream is cut off after line N (...)" / "... is damaged
 * after line N (...)" — except that a cut at the end of an ".inprogress" file (still being written)
 * is the stream's end, flagged by bl_lines_cut.
 * Not here: what the lines mean (spark.c). */
#ifndef BL_IMPORT_STREAM_H
#define BL_IMPORT_STREAM_H

#include <stddef.h>

#include "bellamy/bellamy.h"

typedef enum bl_codec {
    BL_CODEC_PLAIN = 0,
    BL_CODEC_ZSTD,
    BL_CODEC_LZ4,
    BL_CODEC_SNAPPY,
    BL_CODEC_LZF
} bl_codec;

/* The longest line kept (64 MiB): a longer one is skipped whole and reported as too long. */
#define BL_LINES_MAX_DEFAULT ((size_t)64 << 20)

/* The codec of a file by its base name; *inprogress (may be NULL) = 1 when it ends in ".inprogress"
 * (possibly before ".compact"), *compact (may be NULL) = 1 when it ends in ".compact". */
bl_codec bl_codec_for_name(const char *name, int *inprogress, int *compact);

/* The codec's name for messages ("plain", "zstd", "lz4", "snappy", "lzf"). */
const char *bl_codec_name(bl_codec c);

typedef struct bl_lines bl_lines;

/* Opens path for reading lines, with the codec its name gives. max_line: the longest line kept
 * (0: BL_LINES_MAX_DEFAULT). still_written: 1 when the file is being written even without
 * ".inprogress" in its name (the last part of a rolling log whose appstatus is .inprogress): a cut
 * at its end is then its end too. BL_EIO naming path when it cannot be opened (a folder, missing,
 * unreadable); BL_EUNSUPPORTED for ".lzf"; BL_ENOMEM. */
bl_status bl_lines_open(const char *path, size_t max_line, int still_written, bl_lines **out, bl_error *err);

/* The next line, without its '\n' (and without a '\r' before it), NUL-terminated, valid until the
 * next call: *line and *len; *line NULL at the end of the stream. *flags (may be NULL) tells more:
 * BL_LINE_TOO_LONG (the line was longer than max_line: *line is "" and its bytes were skipped),
 * BL_LINE_UNTERMINATED (the last line of the stream, without '\n': possibly cut off).
 * BL_EFORMAT when the stream is cut off or damaged, BL_EIO on a read error; after an error the
 * reader gives no more lines. */
enum { BL_LINE_TOO_LONG = 1, BL_LINE_UNTERMINATED = 2 };
bl_status bl_lines_next(bl_lines *l, const char **line, size_t *len, unsigned *flags, bl_error *err);

/* The number of the line last given (1-based; 0 before the first). */
size_t bl_lines_number(const bl_lines *l);

/* 1 when an ".inprogress" file's stream ended mid-frame or mid-block (still being written): what was
 * read up to there was given, the rest is not there yet. */
int bl_lines_cut(const bl_lines *l);

/* The most bytes the line buffer ever held (for tests: memory follows the longest line). */
size_t bl_lines_buffer_peak(const bl_lines *l);

/* Closes the file and frees l; NULL is allowed. */
void bl_lines_close(bl_lines *l);

#endif /* BL_IMPORT_STREAM_H */
