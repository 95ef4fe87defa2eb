/* suggest.c — edit distance and "did you mean" (suggest.h). */
#include "common/suggest.h"

#include <stdio.h>
#include <string.h>

#define NAME_MAX_LEN 255

static int lower(int c) { return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c; }

size_t bl_edit_distance(const char *a, const char *b) {
    size_t n = strlen(a), m = strlen(b);
    if (n > NAME_MAX_LEN) n = NAME_MAX_LEN;
    if (m > NAME_MAX_LEN) m = NAME_MAX_LEN;
    /* three rows of the dynamic-programming table: i-2, i-1, i */
    size_t r0[NAME_MAX_LEN + 1], r1[NAME_MAX_LEN + 1], r2[NAME_MAX_LEN + 1];
    size_t *pp = r0, *p = r1, *c = r2;
    for (size_t j = 0; j <= m; j++) p[j] = j;
    for (size_t i = 1; i <= n; i++) {
        c[0] = i;
        for (size_t j = 1; j <= m; j++) {
            const int same = lower((unsigned char)a[i - 1]) == lower((unsigned char)b[j - 1]);
            size_t d = p[j - 1] + !same;
            if (p[j] + 1 < d) d = p[j] + 1;
            if (c[j - 1] + 1 < d) d = c[j - 1] + 1;
            if (i > 1 && j > 1 && lower((unsigned char)a[i - 1]) == lower((unsigned char)b[j - 2]) &&
                lower((unsigned char)a[i - 2]) == lower((unsigned char)b[j - 1]) && pp[j - 2] + 1 < d)
                d = pp[j - 2] + 1;
            c[j] = d;
        }
        size_t *t = pp;
        pp = p;
        p = c;
        c = t;
    }
    return p[m];
}

static int is_sep(char c) { return c == '_' || c == '-' || c == '.' || c == ' ' || c == '/'; }

/* Do a and b share a word of three or more characters (words split at _ - . space /)? */
static int share_word(const char *a, const char *b) {
    for (const char *s = a; *s;) {
        while (*s && is_sep(*s)) s++;
        size_t ls = 0;
        while (s[ls] && !is_sep(s[ls])) ls++;
        if (ls >= 3)
            for (const char *t = b; *t;) {
                while (*t && is_sep(*t)) t++;
                size_t lt = 0;
                while (t[lt] && !is_sep(t[lt])) lt++;
                if (lt == ls) {
                    size_t k = 0;
                    while (k < ls && lower((unsigned char)s[k]) == lower((unsigned char)t[k])) k++;
                    if (k == ls) return 1;
                }
                t += lt;
            }
        s += ls;
    }
    return 0;
}

/* How close cand is to word: a score (lower is closer), or (size_t)-1 when not close at all. */
static size_t closeness(const char *word, const char *cand) {
    const size_t lw = strlen(word), lc = strlen(cand);
    if (lw == 0 || lc == 0) return (size_t)-1;
    const size_t d = bl_edit_distance(word, cand);
    if (d == 0) return 0;
    if (lw < 3) return (size_t)-1; /* a name of one or two characters is close to too much */
    const size_t shorter = lw < lc ? lw : lc;
    size_t limit = shorter <= 3 ? 1 : shorter / 3;
    if (limit < 2 && shorter > 3) limit = 2;
    if (d <= limit) return d;
    /* a prefix of three or more characters ("--num" for "--numbers") */
    if (lw >= 3 && lw < lc) {
        size_t k = 0;
        while (k < lw && lower((unsigned char)word[k]) == lower((unsigned char)cand[k])) k++;
        if (k == lw) return 100 + (lc - lw);
    }
    if (share_word(word, cand)) return 200 + d;
    return (size_t)-1;
}

const char *bl_suggest(const char *word, const char *const *cands, size_t n, const char *prefix, char *buf,
                       size_t cap) {
    if (!buf || cap == 0) return buf;
    buf[0] = '\0';
    if (!word || !cands) return buf;
    if (!prefix) prefix = "";
    size_t best = (size_t)-1;
    for (size_t i = 0; i < n; i++)
        if (cands[i]) {
            size_t s = closeness(word, cands[i]);
            if (s < best) best = s;
        }
    if (best == (size_t)-1) return buf;
    size_t len = 0, shown = 0, total = 0;
    for (size_t i = 0; i < n; i++)
        if (cands[i] && closeness(word, cands[i]) == best) {
            int dup = 0; /* a name listed twice among the candidates is suggested once */
            for (size_t j = 0; j < i && !dup; j++) dup = cands[j] && strcmp(cands[j], cands[i]) == 0;
            if (!dup) total++;
        }
    for (size_t i = 0; i < n && shown < 3; i++) {
        if (!cands[i] || closeness(word, cands[i]) != best) continue;
        int dup = 0;
        for (size_t j = 0; j < i && !dup; j++) dup = cands[j] && strcmp(cands[j], cands[i]) == 0;
        if (dup) continue;
        const char *sep = shown == 0 ? "; did you mean " : shown + 1 == (total < 3 ? total : 3) ? " or " : ", ";
        int w = snprintf(buf + len, cap - len, "%s'%s%.80s'", sep, prefix, cands[i]);
        if (w < 0 || (size_t)w >= cap - len) { buf[0] = '\0'; return buf; }
        len += (size_t)w;
        shown++;
    }
    if (len + 2 > cap) { buf[0] = '\0'; return buf; }
    memcpy(buf + len, "?", 2);
    return buf;
}
