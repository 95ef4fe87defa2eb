/* stream.c — lines of a Spark event-log file through its codec (formats and errors in stream.h).
 * Each codec fills a window of decoded bytes (zstd: one output buffer; lz4 and snappy: one block),
 * and the line assembler copies from that window into the line buffer up to each '\n'. Memory: the
 * file buffer, one block and the longest line. Not here: JSON, events (spark.c). */
#include "import/stream.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lz4.h>
#include <snappy-c.h>
#include <xxhash.h>
#include <zstd.h>

#include "common/error.h"
#include "common/file.h"
#include "common/str.h"

#define IN_CAP 65536                    /* bytes read from the file at once */
#define BLOCK_MAX ((size_t)64 << 20)    /* a snappy chunk larger than this is damage (snappy-java: 32 KiB) */
#define LZ4_HEADER 21                   /* magic 8, token 1, lengths and checksum 3 x 4 */
#define LZ4_SEED 0x9747b28cu            /* lz4-java's DEFAULT_SEED */
#define SNAPPY_HEADER 16                /* magic 8, version 4, compatible version 4 */

static const unsigned char lz4_magic[8] = {'L', 'Z', '4', 'B', 'l', 'o', 'c', 'k'};
static const unsigned char snappy_magic[8] = {0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0};

struct bl_lines {
    FILE *fp;
    char *path;
    bl_codec codec;
    int inprogress;
    unsigned char *in;                  /* [IN_CAP] file bytes */
    size_t in_len, in_pos;
    int in_eof;
    const unsigned char *win;           /* decoded bytes not yet taken into lines */
    size_t win_len, win_pos;
    int at_end;                         /* the codec gave its end: no more windows */
    int cut;                            /* an .inprogress stream that ended mid-block */
    bl_error failed;                    /* status BL_OK until an error; then given again */
    /* zstd */
    ZSTD_DStream *zd;
    size_t zret;                        /* last ZSTD_decompressStream result: 0 = a frame is complete */
    /* lz4 and snappy: one block, compressed (blk) and decoded (out) */
    unsigned char *blk, *out;
    size_t blk_cap, out_cap;
    int blocks;                         /* lz4: a block header seen; snappy: the stream header read */
    int ended;                          /* lz4: the last block read was an end block */
    /* the line */
    char *line;
    size_t line_len, line_cap, line_peak, max_line;
    size_t line_no;
};

static int ends_with_ci(const char *s, size_t n, const char *suffix) {
    const size_t k = strlen(suffix);
    if (n < k) return 0;
    for (size_t i = 0; i < k; i++)
        if (tolower((unsigned char)s[n - k + i]) != tolower((unsigned char)suffix[i])) return 0;
    return 1;
}

bl_codec bl_codec_for_name(const char *name, int *inprogress, int *compact) {
    int ip = 0, cp = 0;
    const char *base = name ? strrchr(name, '/') : NULL;
    base = base ? base + 1 : (name ? name : "");
    size_t n = strlen(base);
    /* Spark adds ".inprogress" while writing and ".compact" to a compacted part, after the codec's. */
    for (;;) {
        if (ends_with_ci(base, n, ".inprogress")) { ip = 1; n -= strlen(".inprogress"); }
        else if (ends_with_ci(base, n, ".compact")) { cp = 1; n -= strlen(".compact"); }
        else break;
    }
    if (inprogress) *inprogress = ip;
    if (compact) *compact = cp;
    if (ends_with_ci(base, n, ".zstd") || ends_with_ci(base, n, ".zst")) return BL_CODEC_ZSTD;
    if (ends_with_ci(base, n, ".lz4")) return BL_CODEC_LZ4;
    if (ends_with_ci(base, n, ".snappy")) return BL_CODEC_SNAPPY;
    if (ends_with_ci(base, n, ".lzf")) return BL_CODEC_LZF;
    return BL_CODEC_PLAIN;
}

const char *bl_codec_name(bl_codec c) {
    switch (c) {
    case BL_CODEC_ZSTD: return "zstd";
    case BL_CODEC_LZ4: return "lz4";
    case BL_CODEC_SNAPPY: return "snappy";
    case BL_CODEC_LZF: return "lzf";
    default: return "plain";
    }
}

bl_status bl_lines_open(const char *path, size_t max_line, int still_written, bl_lines **out, bl_error *err) {
    BL_CHECK_ARG(path && out, err, "bl_lines_open: NULL argument");
    *out = NULL;
    int ip;
    const bl_codec codec = bl_codec_for_name(path, &ip, NULL);
    if (codec == BL_CODEC_LZF)
        return bl_seterr(err, BL_EUNSUPPORTED,
                         "%s: Spark's LZF codec is not supported: refused (decompress the log first, or have "
                         "Spark write zstd with spark.eventLog.compression.codec=zstd)", path);
    bl_lines *l = calloc(1, sizeof *l);
    if (!l) return bl_seterr(err, BL_ENOMEM, "out of memory");
    l->codec = codec;
    l->inprogress = ip || still_written;
    l->max_line = max_line ? max_line : BL_LINES_MAX_DEFAULT;
    l->path = bl_strdup(path);
    l->in = malloc(IN_CAP);
    if (codec == BL_CODEC_ZSTD) l->zd = ZSTD_createDStream();
    if (!l->path || !l->in || (codec == BL_CODEC_ZSTD && !l->zd) ||
        (codec == BL_CODEC_ZSTD && (l->out_cap = ZSTD_DStreamOutSize(), !(l->out = malloc(l->out_cap))))) {
        bl_lines_close(l);
        return bl_seterr(err, BL_ENOMEM, "out of memory");
    }
    if (l->zd && ZSTD_isError(ZSTD_initDStream(l->zd))) {
        bl_lines_close(l);
        return bl_seterr(err, BL_ENOMEM, "%s: cannot start the zstd decoder", path);
    }
    l->fp = bl_file_open_read(path, 0, err);
    if (!l->fp) {
        bl_lines_close(l);
        return err ? err->status : BL_EIO;
    }
    *out = l;
    return BL_OK;
}

void bl_lines_close(bl_lines *l) {
    if (!l) return;
    if (l->fp) fclose(l->fp);
    if (l->zd) ZSTD_freeDStream(l->zd);
    free(l->path);
    free(l->in);
    free(l->blk);
    free(l->out);
    free(l->line);
    free(l);
}

size_t bl_lines_number(const bl_lines *l) { return l ? l->line_no : 0; }
int bl_lines_cut(const bl_lines *l) { return l ? l->cut : 0; }
size_t bl_lines_buffer_peak(const bl_lines *l) { return l ? l->line_peak : 0; }

/* ---- errors ----------------------------------------------------------------------------------------- */

static bl_status fail(bl_lines *l, bl_error *err, bl_status st, const char *what) {
    char where[64];
    if (l->line_no) snprintf(where, sizeof where, "after line %zu", l->line_no);
    else snprintf(where, sizeof where, "before its first line");
    if (st == BL_ENOMEM) bl_seterr(&l->failed, st, "%s: out of memory %s", l->path, where);
    else
        bl_seterr(&l->failed, st, "%s: the %s stream %s %s (%s)", l->path, bl_codec_name(l->codec),
                  st == BL_EIO ? "cannot be read" : "is damaged", where, what);
    if (err) *err = l->failed;
    return st;
}

/* The stream ends before its codec says it does: an error, or the end of an .inprogress file. */
static bl_status cut_off(bl_lines *l, bl_error *err) {
    if (l->inprogress) {
        l->cut = 1;
        l->at_end = 1;
        return BL_OK;
    }
    char where[64];
    if (l->line_no) snprintf(where, sizeof where, "after line %zu", l->line_no);
    else snprintf(where, sizeof where, "before its first line");
    bl_seterr(&l->failed, BL_EFORMAT, "%s: the %s stream is cut off %s (a truncated or damaged file)", l->path,
              bl_codec_name(l->codec), where);
    if (err) *err = l->failed;
    return BL_EFORMAT;
}

/* ---- file bytes ------------------------------------------------------------------------------------- */

static bl_status in_refill(bl_lines *l, bl_error *err) {
    l->in_pos = 0;
    l->in_len = fread(l->in, 1, IN_CAP, l->fp);
    if (l->in_len == 0) {
        if (ferror(l->fp)) return fail(l, err, BL_EIO, "read error");
        l->in_eof = 1;
    }
    return BL_OK;
}

/* Copies up to n file bytes to dst; *got < n only at the end of the file. */
static bl_status in_read(bl_lines *l, unsigned char *dst, size_t n, size_t *got, bl_error *err) {
    size_t have = 0;
    while (have < n) {
        if (l->in_pos == l->in_len) {
            if (l->in_eof) break;
            bl_status st = in_refill(l, err);
            if (st != BL_OK) return st;
            continue;
        }
        size_t k = l->in_len - l->in_pos;
        if (k > n - have) k = n - have;
        memcpy(dst + have, l->in + l->in_pos, k);
        l->in_pos += k;
        have += k;
    }
    *got = have;
    return BL_OK;
}

/* Reads n bytes into l->blk, growing it only as the bytes arrive (a header that claims a huge block
 * in a small file costs no more than the file). *got < n at the end of the file. */
static bl_status blk_read(bl_lines *l, size_t n, size_t *got, bl_error *err) {
    size_t have = 0;
    while (have < n) {
        size_t step = n - have;
        const size_t grow = have > IN_CAP ? have : IN_CAP;
        if (step > grow) step = grow;
        if (l->blk_cap < have + step) {
            size_t cap = l->blk_cap ? l->blk_cap : IN_CAP;
            while (cap < have + step) cap *= 2;
            if (cap > n) cap = n;
            unsigned char *b = realloc(l->blk, cap);
            if (!b) return fail(l, err, BL_ENOMEM, "out of memory");
            l->blk = b;
            l->blk_cap = cap;
        }
        size_t k;
        bl_status st = in_read(l, l->blk + have, step, &k, err);
        if (st != BL_OK) return st;
        have += k;
        if (k < step) break;
    }
    *got = have;
    return BL_OK;
}

static bl_status out_reserve(bl_lines *l, size_t n, bl_error *err) {
    if (l->out_cap >= n) return BL_OK;
    unsigned char *b = realloc(l->out, n);
    if (!b) return fail(l, err, BL_ENOMEM, "out of memory");
    l->out = b;
    l->out_cap = n;
    return BL_OK;
}

/* ---- codecs: each sets the window to the next decoded bytes, or at_end --------------------------------- */

static bl_status fill_plain(bl_lines *l, bl_error *err) {
    if (l->in_pos == l->in_len) {
        bl_status st = in_refill(l, err);
        if (st != BL_OK) return st;
        if (l->in_eof) {
            l->at_end = 1;
            return BL_OK;
        }
    }
    l->win = l->in + l->in_pos;
    l->win_len = l->in_len - l->in_pos;
    l->in_pos = l->in_len;
    return BL_OK;
}

static bl_status fill_zstd(bl_lines *l, bl_error *err) {
    for (;;) {
        if (l->in_pos == l->in_len && !l->in_eof) {
            bl_status st = in_refill(l, err);
            if (st != BL_OK) return st;
        }
        const int no_input = l->in_pos == l->in_len;
        if (no_input && l->zret == 0) { /* every frame complete and flushed */
            l->at_end = 1;
            return BL_OK;
        }
        ZSTD_inBuffer ib = {l->in, l->in_len, l->in_pos};
        ZSTD_outBuffer ob = {l->out, l->out_cap, 0};
        const size_t r = ZSTD_decompressStream(l->zd, &ob, &ib);
        if (ZSTD_isError(r)) return fail(l, err, BL_EFORMAT, ZSTD_getErrorName(r));
        l->in_pos = ib.pos;
        l->zret = r;
        if (ob.pos > 0) {
            l->win = l->out;
            l->win_len = ob.pos;
            return BL_OK;
        }
        if (no_input) return cut_off(l, err); /* a frame begun, the file over, nothing more to flush */
    }
}

static uint32_t le32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint32_t be32(const unsigned char *p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

static bl_status fill_lz4(bl_lines *l, bl_error *err) {
    for (;;) {
        unsigned char h[LZ4_HEADER];
        size_t got;
        bl_status st = in_read(l, h, sizeof h, &got, err);
        if (st != BL_OK) return st;
        if (got == 0 && (!l->blocks || l->ended)) { /* an empty file, or after an end block */
            l->at_end = 1;
            return BL_OK;
        }
        if (memcmp(h, lz4_magic, got < sizeof lz4_magic ? got : sizeof lz4_magic) != 0)
            return fail(l, err, BL_EFORMAT, "no \"LZ4Block\" magic where a block begins");
        if (got < sizeof h) return cut_off(l, err);
        const unsigned method = h[8] & 0xF0u, level = h[8] & 0x0Fu;
        const int32_t clen = (int32_t)le32(h + 9), olen = (int32_t)le32(h + 13);
        const uint32_t check = le32(h + 17);
        /* lz4-java's own checks, and one against a block that claims more than LZ4 can expand to */
        if ((method != 0x10u && method != 0x20u) || olen < 0 || clen < 0 || olen > (INT32_C(1) << (10 + level)) ||
            (olen == 0) != (clen == 0) || (method == 0x10u && olen != clen) ||
            (method == 0x20u && (size_t)olen > (size_t)clen * 256 + 64))
            return fail(l, err, BL_EFORMAT, "an impossible block header");
        l->blocks = 1;
        if (olen == 0) { /* the end of one stream; another may follow */
            if (check != 0) return fail(l, err, BL_EFORMAT, "an end block with a checksum");
            l->ended = 1;
            continue;
        }
        l->ended = 0;
        st = blk_read(l, (size_t)clen, &got, err);
        if (st != BL_OK) return st;
        if (got < (size_t)clen) return cut_off(l, err);
        st = out_reserve(l, (size_t)olen, err);
        if (st != BL_OK) return st;
        if (method == 0x10u) memcpy(l->out, l->blk, (size_t)olen);
        else if (LZ4_decompress_safe((const char *)l->blk, (char *)l->out, clen, olen) != olen)
            return fail(l, err, BL_EFORMAT, "a block the lz4 decoder rejects");
        if ((XXH32(l->out, (size_t)olen, LZ4_SEED) & 0x0FFFFFFFu) != check)
            return fail(l, err, BL_EFORMAT, "a block whose checksum does not match");
        l->win = l->out;
        l->win_len = (size_t)olen;
        return BL_OK;
    }
}

/* The 8 bytes after a snappy-java magic's first 4: the rest of the magic, a version, a compatible one. */
static bl_status snappy_header_rest(bl_lines *l, const unsigned char *rest12, bl_error *err) {
    if (memcmp(rest12, snappy_magic + 4, 4) != 0)
        return fail(l, err, BL_EFORMAT, "no snappy-java header (0x82 SNAPPY 0x00)");
    if ((int32_t)be32(rest12 + 4) < 1) return fail(l, err, BL_EFORMAT, "a snappy-java header of version < 1");
    return BL_OK;
}

static bl_status fill_snappy(bl_lines *l, bl_error *err) {
    bl_status st;
    size_t got;
    if (!l->blocks) {
        unsigned char h[SNAPPY_HEADER];
        if ((st = in_read(l, h, sizeof h, &got, err)) != BL_OK) return st;
        if (got == 0) { /* an empty file: snappy-java writes its header with the first data */
            l->at_end = 1;
            return BL_OK;
        }
        if (memcmp(h, snappy_magic, got < 4 ? got : 4) != 0)
            return fail(l, err, BL_EFORMAT, "no snappy-java header (0x82 SNAPPY 0x00)");
        if (got < sizeof h) return cut_off(l, err);
        if ((st = snappy_header_rest(l, h + 4, err)) != BL_OK) return st;
        l->blocks = 1;
    }
    for (;;) {
        unsigned char n4[4];
        if ((st = in_read(l, n4, 4, &got, err)) != BL_OK) return st;
        if (got == 0) { /* snappy-java's stream has no end mark: a chunk boundary at the file's end */
            l->at_end = 1;
            return BL_OK;
        }
        if (got < 4) return cut_off(l, err);
        if (memcmp(n4, snappy_magic, 4) == 0) { /* a concatenated stream's header (no length is negative) */
            unsigned char rest[12];
            if ((st = in_read(l, rest, sizeof rest, &got, err)) != BL_OK) return st;
            if (got < sizeof rest) return cut_off(l, err);
            if ((st = snappy_header_rest(l, rest, err)) != BL_OK) return st;
            continue;
        }
        const int32_t n = (int32_t)be32(n4);
        if (n <= 0 || (size_t)n > BLOCK_MAX) return fail(l, err, BL_EFORMAT, "an impossible chunk length");
        if ((st = blk_read(l, (size_t)n, &got, err)) != BL_OK) return st;
        if (got < (size_t)n) return cut_off(l, err);
        size_t ulen;
        if (snappy_validate_compressed_buffer((const char *)l->blk, (size_t)n) != SNAPPY_OK ||
            snappy_uncompressed_length((const char *)l->blk, (size_t)n, &ulen) != SNAPPY_OK || ulen > BLOCK_MAX)
            return fail(l, err, BL_EFORMAT, "a chunk the snappy decoder rejects");
        if (ulen == 0) continue;
        if ((st = out_reserve(l, ulen, err)) != BL_OK) return st;
        size_t olen = l->out_cap;
        if (snappy_uncompress((const char *)l->blk, (size_t)n, (char *)l->out, &olen) != SNAPPY_OK || olen != ulen)
            return fail(l, err, BL_EFORMAT, "a chunk the snappy decoder rejects");
        l->win = l->out;
        l->win_len = ulen;
        return BL_OK;
    }
}

static bl_status fill(bl_lines *l, bl_error *err) {
    l->win_pos = l->win_len = 0;
    switch (l->codec) {
    case BL_CODEC_ZSTD: return fill_zstd(l, err);
    case BL_CODEC_LZ4: return fill_lz4(l, err);
    case BL_CODEC_SNAPPY: return fill_snappy(l, err);
    default: return fill_plain(l, err);
    }
}

/* ---- lines ------------------------------------------------------------------------------------------ */

static bl_status line_append(bl_lines *l, const unsigned char *p, size_t n, bl_error *err) {
    if (l->line_len + n + 1 > l->line_cap) {
        size_t cap = l->line_cap ? l->line_cap : 4096;
        while (cap < l->line_len + n + 1) cap *= 2;
        if (cap > l->max_line + 1) cap = l->max_line + 1;
        char *b = realloc(l->line, cap);
        if (!b) return fail(l, err, BL_ENOMEM, "out of memory");
        l->line = b;
        l->line_cap = cap;
        if (cap > l->line_peak) l->line_peak = cap;
    }
    memcpy(l->line + l->line_len, p, n);
    l->line_len += n;
    return BL_OK;
}

bl_status bl_lines_next(bl_lines *l, const char **line, size_t *len, unsigned *flags, bl_error *err) {
    BL_CHECK_ARG(l && line && len, err, "bl_lines_next: NULL argument");
    *line = NULL;
    *len = 0;
    if (flags) *flags = 0;
    if (l->failed.status != BL_OK) {
        if (err) *err = l->failed;
        return l->failed.status;
    }
    l->line_len = 0;
    int too_long = 0, any = 0;
    for (;;) {
        if (l->win_pos == l->win_len) {
            if (l->at_end) break;
            bl_status st = fill(l, err);
            if (st != BL_OK) return st;
            continue;
        }
        const unsigned char *p = l->win + l->win_pos;
        const size_t avail = l->win_len - l->win_pos;
        const unsigned char *nl = memchr(p, '\n', avail);
        const size_t take = nl ? (size_t)(nl - p) : avail;
        any = 1;
        if (!too_long && l->line_len + take > l->max_line) too_long = 1; /* skip the rest of this line */
        if (!too_long) {
            bl_status st = line_append(l, p, take, err);
            if (st != BL_OK) return st;
        }
        l->win_pos += take + (nl ? 1 : 0);
        if (nl) {
            l->line_no++;
            goto give;
        }
    }
    if (!any) return BL_OK; /* the end */
    l->line_no++;
    if (flags) *flags |= BL_LINE_UNTERMINATED;
give:
    if (too_long) {
        if (flags) *flags |= BL_LINE_TOO_LONG;
        l->line_len = 0;
    }
    if (!l->line) { /* an empty first line: still a valid string */
        bl_status st = line_append(l, (const unsigned char *)"", 0, err);
        if (st != BL_OK) return st;
    }
    if (l->line_len > 0 && l->line[l->line_len - 1] == '\r') l->line_len--;
    l->line[l->line_len] = '\0';
    *line = l->line;
    *len = l->line_len;
    return BL_OK;
}
