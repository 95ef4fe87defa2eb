/* encode.c — settings, binarizer, hasher and number parsing (see encode.h for the exact rules).
 * Not here: scale-out features and the min-max scaler (scaler.c), files and schemas (src/data/). */
#include "encode/encode.h"
#include "common/error.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

void bl_encode_settings_default(bl_encode_settings *s) {
    if (!s) return;
    memset(s, 0, sizeof *s);
    s->vec_len = BL_ENC_VEC_LEN_DEFAULT;
    s->ngram_min = 1;
    s->ngram_max = 3;
    s->hash_seed = BL_ENC_HASH_SEED_DEFAULT;
    memcpy(s->vocabulary, BL_ENC_VOCAB_DEFAULT, sizeof BL_ENC_VOCAB_DEFAULT);
}

bl_status bl_encode_settings_check(const bl_encode_settings *s, bl_error *err) {
    BL_CHECK_ARG(s != NULL, err, "encode settings: NULL");
    BL_CHECK_ARG(s->vec_len >= 2 && s->vec_len <= BL_ENC_VEC_LEN_MAX, err,
                 "encode settings: vector length %u is outside 2..%d", (unsigned)s->vec_len,
                 BL_ENC_VEC_LEN_MAX);
    BL_CHECK_ARG(s->ngram_min >= 1 && s->ngram_min <= s->ngram_max && s->ngram_max <= BL_ENC_NGRAM_MAX,
                 err, "encode settings: n-gram range %u..%u is outside 1..%d", (unsigned)s->ngram_min,
                 (unsigned)s->ngram_max, BL_ENC_NGRAM_MAX);
    BL_CHECK_ARG(s->totals_per_machine <= 1, err, "encode settings: totals_per_machine must be 0 or 1");
    BL_CHECK_ARG(s->numbers <= BL_ENC_NUMBERS_BOTH, err,
                 "encode settings: number encoding %u is unknown (0 binary, 1 log, 2 range, 3 both)",
                 (unsigned)s->numbers);
    size_t n = strnlen(s->vocabulary, sizeof s->vocabulary);
    BL_CHECK_ARG(n > 0 && n < sizeof s->vocabulary, err,
                 "encode settings: vocabulary is empty or not NUL-terminated");
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s->vocabulary[i];
        /* Upper-case letters could never match (text is lower-cased first); a space would split
         * the token into words, which this encoder does not model. */
        BL_CHECK_ARG(c > ' ' && c < 0x7f && !(c >= 'A' && c <= 'Z'), err,
                     "encode settings: vocabulary character 0x%02x is not allowed (printable ASCII, "
                     "no space, no upper case)", c);
    }
    return BL_OK;
}

/* ---- numbers ----------------------------------------------------------------------------------- */

static const char *const NUMBERS_NAMES[] = {"binary", "log", "range", "both"};

const char *bl_enc_numbers_name(uint32_t numbers) {
    return numbers <= BL_ENC_NUMBERS_BOTH ? NUMBERS_NAMES[numbers] : "?";
}

int bl_enc_numbers_parse(const char *name) {
    for (int i = 0; name && i <= BL_ENC_NUMBERS_BOTH; i++)
        if (strcmp(name, NUMBERS_NAMES[i]) == 0) return i;
    return -1;
}

bl_status bl_parse_number(const char *text, double *v, bl_error *err) {
    BL_CHECK_ARG(text && v, err, "parse number: NULL argument");
    const char *p = text;
    if (*p == '\0') return bl_seterr(err, BL_EFORMAT, "empty value where a number is required");
    /* Checked by hand first: strtod also accepts hex, "inf", "nan" and leading blanks. */
    if (*p == '+' || *p == '-') p++;
    size_t digits = 0;
    while (*p >= '0' && *p <= '9') { p++; digits++; }
    if (*p == '.') {
        p++;
        while (*p >= '0' && *p <= '9') { p++; digits++; }
    }
    int looks_special = 0;
    if (digits == 0) {
        const char *q = (*text == '+' || *text == '-') ? text + 1 : text;
        looks_special = (q[0] == 'n' || q[0] == 'N' || q[0] == 'i' || q[0] == 'I');
        if (looks_special)
            return bl_seterr(err, BL_EFORMAT, "'%.40s' is NaN or infinity, a finite number is required", text);
        return bl_seterr(err, BL_EFORMAT, "'%.40s' is not a number", text);
    }
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-') p++;
        if (!(*p >= '0' && *p <= '9')) return bl_seterr(err, BL_EFORMAT, "'%.40s' is not a number", text);
        while (*p >= '0' && *p <= '9') p++;
    }
    if (*p != '\0') return bl_seterr(err, BL_EFORMAT, "'%.40s' is not a number", text);
    double d = strtod(text, NULL);
    if (!isfinite(d))
        return bl_seterr(err, BL_EFORMAT, "'%.40s' is NaN or infinity, a finite number is required", text);
    *v = d;
    return BL_OK;
}

bl_status bl_parse_natural(const char *text, const bl_encode_settings *s, uint64_t *v, bl_error *err) {
    BL_CHECK_ARG(text && s && v, err, "parse natural number: NULL argument");
    double d;
    bl_status st = bl_parse_number(text, &d, err);
    if (st != BL_OK) return st;
    if (d < 0) return bl_seterr(err, BL_EFORMAT, "'%.40s' is negative, a natural number is required", text);
    if (d != floor(d))
        return bl_seterr(err, BL_EFORMAT,
                         "'%.40s' is not an integer (binarized properties need natural numbers; "
                         "declare the property as text to hash it instead)", text);
    unsigned bits = s->vec_len - 1;
    double limit = ldexp(1.0, (int)bits);
    if (d >= limit)
        return bl_seterr(err, BL_ERANGE, "'%.40s' is too large: the binarizer keeps %u bits, so values "
                         "must be below 2^%u", text, bits, bits);
    *v = (uint64_t)d;
    return BL_OK;
}

/* ---- binarizer --------------------------------------------------------------------------------- */

bl_status bl_binarize_forward(uint64_t v, const bl_encode_settings *s, double *out, bl_error *err) {
    BL_CHECK_ARG(s && out, err, "binarize: NULL argument");
    unsigned bits = s->vec_len - 1;
    BL_CHECK_ARG(bits >= 1 && bits < 64, err, "binarize: vector length %u unsupported", (unsigned)s->vec_len);
    if (v >> bits)
        return bl_seterr(err, BL_ERANGE, "%llu is too large: the binarizer keeps %u bits",
                         (unsigned long long)v, bits);
    out[0] = 1.0;
    if (s->numbers == BL_ENC_NUMBERS_LOG || s->numbers == BL_ENC_NUMBERS_RANGE) { /* RANGE without bounds: LOG */
        bl_number_range_forward(v, NULL, s, out);
        return BL_OK;
    }
    for (unsigned i = 0; i < bits; i++)   /* out[1] is the most significant kept bit */
        out[1 + i] = (double)((v >> (bits - 1 - i)) & 1u);
    return BL_OK;
}

/* ---- numbers over a fitted range --------------------------------------------------------------- */

void bl_number_range_fit(const double *L, size_t n, double range[2]) {
    double a = n ? L[0] : 0.0, b = a;
    for (size_t i = 1; i < n; i++) {
        if (L[i] < a) a = L[i];
        if (L[i] > b) b = L[i];
    }
    const double w = b - a > 1.0 ? b - a : 1.0;
    range[0] = a - w;
    range[1] = b + w;
}

void bl_number_range_forward(uint64_t v, const double *range, const bl_encode_settings *s, double *out) {
    const unsigned bits = s->vec_len - 1;
    const double L = log2(1.0 + (double)v);
    /* without bounds the scale is exactly 1: u = L, LOG's thermometer */
    const double u = range ? (L - range[0]) / (range[1] - range[0]) * (double)bits : L;
    out[0] = 1.0;
    for (unsigned j = 0; j < bits; j++) {
        const double t = u - (double)j;
        out[1 + j] = t >= 1.0 ? 1.0 : t > 0.0 ? t : 0.0;
    }
}

/* ---- hasher ------------------------------------------------------------------------------------ */

/* Lower-cases and filters text into buf (which must hold strlen(text)+1); returns the length. */
static size_t token_fill(const char *text, const unsigned char keep[256], char *buf) {
    const unsigned char *p = (const unsigned char *)text;
    size_t n = 0;
    while (*p) {
        unsigned char c = *p;
        int out = -1;
        if (c < 0x80) {
            out = (c >= 'A' && c <= 'Z') ? c + ('a' - 'A') : c;
            p++;
        } else if (c == 0xE2 && p[1] == 0x84 && p[2] == 0xAA) {   /* U+212A KELVIN SIGN → k */
            out = 'k';
            p += 3;
        } else if (c == 0xC4 && p[1] == 0xB0) {                   /* U+0130 → i (+ U+0307, dropped) */
            out = 'i';
            p += 2;
        } else {
            p++;                                                  /* any other non-ASCII byte */
        }
        if (out >= 0 && keep[out]) buf[n++] = (char)out;
    }
    buf[n] = '\0';
    return n;
}

bl_status bl_encoder_init(bl_encoder *e, const bl_encode_settings *s, bl_error *err) {
    BL_CHECK_ARG(e != NULL, err, "encoder: NULL");
    bl_status st = bl_encode_settings_check(s, err);
    if (st != BL_OK) return st;
    e->s = *s;
    memset(e->keep, 0, sizeof e->keep);
    for (const unsigned char *v = (const unsigned char *)s->vocabulary; *v; v++) e->keep[*v] = 1;
    return BL_OK;
}

bl_status bl_hash_token(const char *text, const bl_encode_settings *s, char *buf, size_t cap,
                        size_t *len, bl_error *err) {
    BL_CHECK_ARG(text && s && buf && len, err, "hash token: NULL argument");
    bl_encoder e;
    bl_status st = bl_encoder_init(&e, s, err);
    if (st != BL_OK) return st;
    if (cap < strlen(text) + 1) return bl_seterr(err, BL_ERANGE, "hash token: buffer too small");
    *len = token_fill(text, e.keep, buf);
    return BL_OK;
}

void bl_char_wb_ngrams(const char *token, size_t len, uint32_t ngram_min, uint32_t ngram_max,
                       bl_ngram_fn fn, void *user) {
    if (!fn || (!token && len) || ngram_min < 1 || ngram_max < ngram_min) return;
    if (ngram_max > BL_ENC_NGRAM_MAX) ngram_max = BL_ENC_NGRAM_MAX;
    if (len == 0) return;   /* sklearn: an empty document has no words, hence no n-grams */
    size_t L = len + 2;     /* padded word " " + token + " " */
    char g[BL_ENC_NGRAM_MAX];
    for (size_t n = ngram_min; n <= ngram_max; n++) {
        if (L <= n) {       /* the whole padded word, once; larger n would repeat it */
            g[0] = ' ';
            memcpy(g + 1, token, len);
            g[L - 1] = ' ';
            fn(g, L, user);
            break;
        }
        for (size_t o = 0; o + n <= L; o++) {
            for (size_t k = 0; k < n; k++) {
                size_t p = o + k;
                g[k] = (p == 0 || p == L - 1) ? ' ' : token[p - 1];
            }
            fn(g, n, user);
        }
    }
}

typedef struct hash_acc {
    double  *v;        /* [buckets] */
    uint32_t buckets;
    uint32_t seed;
} hash_acc;

static void hash_one(const char *gram, size_t len, void *user) {
    hash_acc *a = user;
    uint32_t h = XXH32(gram, len, a->seed);
    /* Read as signed like sklearn's murmurhash3_bytes_s32: the top bit is the sign. */
    uint32_t mag = (h & 0x80000000u) ? (uint32_t)(0u - h) : h;   /* |INT32_MIN| = 2^31 */
    a->v[mag % a->buckets] += (h & 0x80000000u) ? -1.0 : 1.0;
}

bl_status bl_hash_forward(const char *text, const bl_encode_settings *s, double *out, bl_error *err) {
    BL_CHECK_ARG(text && s && out, err, "hash: NULL argument");
    bl_encoder e;
    bl_status st = bl_encoder_init(&e, s, err);
    if (st != BL_OK) return st;
    return bl_encoder_hash(&e, text, out, err);
}

bl_status bl_encoder_hash(const bl_encoder *e, const char *text, double *out, bl_error *err) {
    const bl_encode_settings *s = &e->s;
    size_t tl = strlen(text);
    char small[512];
    char *buf = small;
    if (tl + 1 > sizeof small) {
        buf = malloc(tl + 1);
        if (!buf) return bl_seterr(err, BL_ENOMEM, "hash: out of memory for a %zu-byte text", tl);
    }
    size_t n = token_fill(text, e->keep, buf);

    memset(out, 0, s->vec_len * sizeof *out);   /* out[0] = 0: the text prefix */
    hash_acc acc = { out + 1, s->vec_len - 1, s->hash_seed };
    bl_char_wb_ngrams(buf, n, s->ngram_min, s->ngram_max, hash_one, &acc);
    double ss = 0.0;
    for (uint32_t i = 0; i < acc.buckets; i++) ss += acc.v[i] * acc.v[i];
    if (ss > 0.0) {
        double inv = 1.0 / sqrt(ss);
        for (uint32_t i = 0; i < acc.buckets; i++) acc.v[i] *= inv;
    }
    if (buf != small) free(buf);
    return BL_OK;
}
