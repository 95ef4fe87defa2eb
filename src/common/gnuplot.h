/* gnuplot.h — what the programs that drive gnuplot share: text inside a gnuplot string, and whether
 * gnuplot's output file came out whole. Header-only (static inline) so that programs built on the
 * public library alone (dbmlsched-sim) can use it too. Not here: running gnuplot. */
#ifndef BL_COMMON_GNUPLOT_H
#define BL_COMMON_GNUPLOT_H

#include <stdio.h>
#include <string.h>

/* s as a single-quoted gnuplot string: a quote doubled (gnuplot's escape inside '...'), control
 * characters as '?'. Names from file names or workloads then stay text, never script. */
static inline void bl_gp_put_str(FILE *f, const char *s) {
    fputc('\'', f);
    for (; s && *s; s++) {
        const unsigned char c = (unsigned char)*s;
        if (c == '\'') fputs("''", f);
        else if (c < 0x20 || c == 0x7f) fputc('?', f);
        else fputc(c, f);
    }
    fputc('\'', f);
}

/* 1 when path holds a whole SVG (ends in "</svg>" and white space) or PNG (ends in the IEND chunk):
 * gnuplot does not always fail when its writes do (a full disk, a file-size limit). */
static inline int bl_gp_output_complete(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    unsigned char tail[64];
    size_t n = 0;
    long size = -1;
    if (fseek(f, 0, SEEK_END) == 0 && (size = ftell(f)) > 0) {
        const long from = size > (long)sizeof tail ? size - (long)sizeof tail : 0;
        if (fseek(f, from, SEEK_SET) == 0) n = fread(tail, 1, (size_t)(size - from), f);
    }
    fclose(f);
    static const unsigned char iend[12] = {0, 0, 0, 0, 'I', 'E', 'N', 'D', 0xae, 0x42, 0x60, 0x82};
    if (n >= 12 && memcmp(tail + n - 12, iend, 12) == 0) return 1;
    while (n > 0 && (tail[n - 1] == '\n' || tail[n - 1] == '\r' || tail[n - 1] == ' ' || tail[n - 1] == '\t')) n--;
    return n >= 6 && memcmp(tail + n - 6, "</svg>", 6) == 0;
}

#endif /* BL_COMMON_GNUPLOT_H */
