/* checksum.c — the header of a model file, a checksum in HDF5's user block, written at each save and
 * checked before HDF5 parses a byte of a file; and reading a file whole. Reads no HDF5 itself. */
#include "modelfile/modelfile.h"
#include "modelfile/modelfile_internal.h"
#include "common/error.h"
#include "common/file.h"

#include <xxhash.h>

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Since 0.4.1 a model file starts with a 512-byte user block (HDF5 skips it: h5py and h5dump read the
 * file as before) holding one line of text, then NUL bytes:
 *     BELLAMY-MODEL 1 size=<file length in bytes> xxh64=<16 hex digits>\n
 * where the hash (XXH64, seed 0) covers every byte after the user block. HDF5 checksums only its own
 * metadata, so without this a flipped byte in a weight block loads silently and predicts something
 * else; a damaged file is now refused before HDF5 parses a byte of it. Files without the header
 * (0.4.0 and older, or written by other programs) are read as before. */
#define HDR_MAGIC "BELLAMY-MODEL 1 "

void bl_mf_header_write(unsigned char *image, size_t size) {
    char line[BL_MF_HEADER_SIZE];
    const uint64_t h = XXH64(image + BL_MF_HEADER_SIZE, size - BL_MF_HEADER_SIZE, 0);
    int n = snprintf(line, sizeof line, HDR_MAGIC "size=%zu xxh64=%016" PRIx64 "\n", size, h);
    memset(image, 0, BL_MF_HEADER_SIZE);
    memcpy(image, line, (size_t)n);
}

/* A decimal number of at most 19 digits at *p (no sign, no spaces), advancing *p. */
static int parse_u64(const char **p, uint64_t *v) {
    const char *q = *p;
    uint64_t x = 0;
    int n = 0;
    for (; *q >= '0' && *q <= '9' && n < 20; q++, n++) x = x * 10 + (uint64_t)(*q - '0');
    if (n == 0 || n > 19) return 0;
    *v = x;
    *p = q;
    return 1;
}

/* Checks the header of a file read into memory. A file has one when its first bytes are the magic;
 * it has none when they are HDF5's signature (files of 0.4.0 and older, or of other programs).
 * Anything else in front of a signature at 512 is a damaged header — never a reason to skip the
 * check. *has: 1 present and matching, 0 absent, -1 present (or damaged) but let through by
 * BELLAMY_MODEL_IGNORE_CHECKSUM=1 (never when strict). */
bl_status bl_mf_header_check(const unsigned char *buf, size_t size, const char *path, int strict, int *has,
                             bl_error *err) {
    static const unsigned char sig[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
    static const char family[] = "BELLAMY-MODEL ";
    const size_t fl = sizeof family - 1;
    const int ours = size >= fl && memcmp(buf, family, fl) == 0;
    const char *skip = getenv("BELLAMY_MODEL_IGNORE_CHECKSUM");
    const int override = !strict && skip && strcmp(skip, "1") == 0;
    *has = 0;
    if (!ours) {
        if (size >= 8 && memcmp(buf, sig, 8) == 0) return BL_OK;    /* no user block: no header */
        if (size < BL_MF_HEADER_SIZE + 8 || memcmp(buf + BL_MF_HEADER_SIZE, sig, 8) != 0) return BL_OK; /* HDF5 says */
        /* A user block without our magic: libbellamy never wrote one (before 0.4.1 files had none), so
         * it is a damaged header — zeroed or not — and never a reason to skip the check. (A file of
         * another program with a user block of its own reads with BELLAMY_MODEL_IGNORE_CHECKSUM=1.) */
        if (override) {
            *has = -1;
            return BL_OK;
        }
        return bl_seterr(err, BL_EFORMAT, "%s: damaged file: its first %d bytes (the header) are not a Bellamy "
                         "model header", path, BL_MF_HEADER_SIZE);
    }
    if (size < BL_MF_HEADER_SIZE)
        return bl_seterr(err, BL_EFORMAT, "%s: truncated file: %zu bytes, shorter than its header", path, size);
    char line[BL_MF_HEADER_SIZE + 1];
    memcpy(line, buf, BL_MF_HEADER_SIZE);
    line[BL_MF_HEADER_SIZE] = '\0';
    const char *p = line + fl;
    uint64_t version, want, h = 0;
    if (!parse_u64(&p, &version) || *p != ' ')
        return bl_seterr(err, BL_EFORMAT, "%s: damaged file: its header line is unreadable", path);
    if (version != 1)
        return bl_seterr(err, version > 1 ? BL_EVERSION : BL_EFORMAT, "%s: header version %" PRIu64 " (%s)", path,
                         version, version > 1 ? "newer than this library supports" : "damaged header");
    p++;
    int ok = strncmp(p, "size=", 5) == 0;
    if (ok) p += 5;
    ok = ok && parse_u64(&p, &want) && strncmp(p, " xxh64=", 7) == 0;
    if (ok) p += 7;
    int hex = 0;
    for (; ok && hex < 16 && ((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')); p++, hex++)
        h = (h << 4) | (uint64_t)(*p <= '9' ? *p - '0' : *p - 'a' + 10);
    ok = ok && hex == 16 && *p == '\n';
    for (size_t i = ok ? (size_t)(p + 1 - line) : BL_MF_HEADER_SIZE; i < BL_MF_HEADER_SIZE; i++) ok = ok && buf[i] == 0;
    if (!ok) return bl_seterr(err, BL_EFORMAT, "%s: damaged file: its header line is unreadable", path);
    /* An edit on purpose (an attribute added with h5py) changes the length as often as the bytes: the
     * override lets both through, and HDF5 then judges the contents. */
    if (want != size) {
        if (override) { /* a header, overridden: not a file without one */
            *has = -1;
            return BL_OK;
        }
        if (size < want) /* shorter: cut off, as by an interrupted copy; reading it anyway cannot work */
            return bl_seterr(err, BL_EFORMAT, "%s: truncated file: %zu bytes, its header says %" PRIu64 " (cut short, "
                             "as by an interrupted copy or download: copy it again from where it was written)", path,
                             size, want);
        return bl_seterr(err, BL_EFORMAT, "%s: damaged or truncated file: %zu bytes, its header says %" PRIu64
                         " (changed after it was written; %s)", path, size, want,
                         strict ? "to keep an edit made on purpose: BELLAMY_MODEL_IGNORE_CHECKSUM=1 bellamy-train "
                                  "check --model FILE --stamp"
                                : "BELLAMY_MODEL_IGNORE_CHECKSUM=1 reads a file edited on purpose");
    }
    if (XXH64(buf + BL_MF_HEADER_SIZE, size - BL_MF_HEADER_SIZE, 0) != h) {
        if (override) {
            *has = -1;
            return BL_OK;
        }
        return bl_seterr(err, BL_EFORMAT, "%s: damaged file: its checksum does not match its contents (changed "
                         "after it was written; %s)", path,
                         strict ? "to keep an edit made on purpose: BELLAMY_MODEL_IGNORE_CHECKSUM=1 bellamy-train "
                                  "check --model FILE --stamp; a damaged cache file can simply be deleted"
                                : "BELLAMY_MODEL_IGNORE_CHECKSUM=1 reads a file edited on purpose");
    }
    *has = 1;
    return BL_OK;
}


/* Re-writes the header of a file changed in place (test support edits files with HDF5). */
bl_status bl_mf_restamp(const char *path, bl_error *err) {
    FILE *f = fopen(path, "r+b");
    if (!f) return bl_seterr(err, BL_EIO, "%s: cannot open: %s", path, strerror(errno));
    bl_status st = BL_OK;
    unsigned char *buf = NULL;
    long size = -1;
    if (fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0 ||
        !(buf = malloc((size_t)size + 1)) || fread(buf, 1, (size_t)size, f) != (size_t)size)
        st = bl_seterr(err, BL_EIO, "%s: cannot read", path);
    else if ((size_t)size >= BL_MF_HEADER_SIZE && memcmp(buf, HDR_MAGIC, strlen(HDR_MAGIC)) == 0) {
        bl_mf_header_write(buf, (size_t)size);
        if (fseek(f, 0, SEEK_SET) != 0 || fwrite(buf, 1, BL_MF_HEADER_SIZE, f) != BL_MF_HEADER_SIZE)
            st = bl_seterr(err, BL_EIO, "%s: cannot write", path);
    }
    free(buf);
    if (fclose(f) != 0 && st == BL_OK) st = bl_seterr(err, BL_EIO, "%s: cannot close", path);
    return st;
}

/* The whole file in memory (model files are small): HDF5 then parses exactly the bytes checked. The
 * size comes from the open descriptor, so a file replaced (renamed over) meanwhile is read whole,
 * old or new, never the one's size with the other's bytes. */
bl_status bl_mf_read_whole(const char *path, unsigned char **out, size_t *size_out, bl_error *err) {
    *out = NULL;
    *size_out = 0;
    FILE *f = bl_file_open_read(path, 1, err);
    if (!f) return err ? err->status : BL_EIO;
    struct stat sb;
    if (fstat(fileno(f), &sb) != 0) {
        fclose(f);
        return bl_seterr(err, BL_EIO, "%s: cannot be examined", path);
    }
    const size_t size = (size_t)sb.st_size;
    unsigned char *buf = malloc(size ? size : 1);
    size_t got = buf ? fread(buf, 1, size, f) : 0;
    int bad = !buf || got != size || ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        return buf ? bl_seterr(err, BL_EIO, "%s: cannot read (%zu of %zu bytes)", path, got, size)
                   : bl_seterr(err, BL_ENOMEM, "%s: out of memory (%zu bytes)", path, size);
    }
    *out = buf;
    *size_out = size;
    return BL_OK;
}

int bl_mf_verify(const char *path, bl_error *err) {
    if (!path) {
        bl_seterr(err, BL_EINVAL, "verify: NULL path");
        return -1;
    }
    unsigned char *buf;
    size_t size;
    int has = 0;
    if (bl_mf_read_whole(path, &buf, &size, err) != BL_OK) return -1;
    bl_status st = bl_mf_header_check(buf, size, path, 1, &has, err); /* strict: the override does not apply */
    free(buf);
    return st != BL_OK ? -1 : has;
}
