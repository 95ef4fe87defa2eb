/* utf8.c — UTF-8 validation, and escaping of text that may not be UTF-8 for messages. */
#include "common/utf8.h"

#include <stdint.h>
#include <string.h>

int bl_utf8_valid(const char *s, size_t n, size_t *bad) {
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;
    while (i < n) {
        /* eight ASCII bytes at a time, none of them 0 (most text is ASCII: logs, data files) */
        while (n - i >= 8) {
            uint64_t w;
            memcpy(&w, p + i, 8);
            if ((w & 0x8080808080808080ull) || ((w - 0x0101010101010101ull) & ~w & 0x8080808080808080ull)) break;
            i += 8;
        }
        if (i >= n) break;
        unsigned c = p[i];
        if (c == 0) goto fail;
        if (c < 0x80) { i++; continue; }
        size_t k;
        unsigned cp, min;
        if (c >= 0xC2 && c <= 0xDF)      { k = 1; cp = c & 0x1F; min = 0x80; }
        else if (c >= 0xE0 && c <= 0xEF) { k = 2; cp = c & 0x0F; min = 0x800; }
        else if (c >= 0xF0 && c <= 0xF4) { k = 3; cp = c & 0x07; min = 0x10000; }
        else goto fail;
        if (n - i <= k) goto fail;
        for (size_t j = 1; j <= k; j++) {
            if ((p[i + j] & 0xC0) != 0x80) goto fail;
            cp = (cp << 6) | (p[i + j] & 0x3F);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) goto fail;
        i += k + 1;
    }
    return 1;
fail:
    if (bad) *bad = i;
    return 0;
}

size_t bl_utf8_chars(const char *s, size_t n) {
    size_t c = 0;
    for (size_t i = 0; i < n; i++)
        if (((unsigned char)s[i] & 0xC0) != 0x80) c++;
    return c;
}

void bl_utf8_sanitize(char *s, size_t n) {
    for (size_t bad; !bl_utf8_valid(s, n, &bad);) s[bad] = '?';
}

const char *bl_utf8_escape(char *out, size_t cap, const char *s) {
    static const char hex[] = "0123456789abcdef";
    const unsigned char *p = (const unsigned char *)s;
    size_t o = 0, keep = 0;   /* keep: the output up to the last piece that still leaves room for "..." */
    while (*p) {
        char piece[4];
        const char *src = piece;
        size_t len = 1, used = 1;   /* bytes written, bytes of s taken */
        unsigned c = *p;
        /* a whole character: its lead byte says how long it is, bl_utf8_valid whether it is one (a
         * NUL, the end of s, is no continuation byte, so nothing past it is read) */
        size_t k = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 1;
        if (k > 1 && bl_utf8_valid((const char *)p, k, NULL)) {
            src = (const char *)p;
            len = used = k;
        } else if (c == '\\') {
            piece[0] = piece[1] = '\\';
            len = 2;
        } else if (c < 0x20 || c >= 0x7f) {
            piece[0] = '\\', piece[1] = 'x', piece[2] = hex[c >> 4], piece[3] = hex[c & 15];
            len = 4;
        } else {
            piece[0] = (char)c;
        }
        if (o + len > cap - 1) {   /* does not fit: cut after the last piece that leaves room for "..." */
            memcpy(out + keep, "...", 4);
            return out;
        }
        memcpy(out + o, src, len);
        o += len;
        if (o + 3 <= cap - 1) keep = o;
        p += used;
    }
    out[o] = '\0';
    return out;
}
