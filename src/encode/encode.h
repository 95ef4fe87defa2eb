/* encode.h — turns a job execution's scale-out and context properties into the vectors Bellamy's
 * network reads.
 *
 *   scale-out features  x ↦ [1/x, ln x, x]                          (3 doubles per row)
 *   min-max scaler      per feature: (v − lo) / (hi − lo), bounds fitted on training rows
 *   binarizer           natural number n ↦ [1, bit38(n), …, bit0(n)]   (vec_len doubles; the paper)
 *     or, as an option, a log-magnitude thermometer: n ↦ [1, t0, …, t38], tj = clamp(log2(1 + n) − j, 0, 1)
 *     or, as another, the same thermometer stretched over the property's range (bl_number_range_*)
 *   hasher              text ↦ [0, signed, L2-normalised char n-gram counts in 39 buckets]
 *
 * The first element of each property vector says which encoder made it (1 = number, 0 = text), so
 * the two kinds never look alike even when the rest is zero.
 *
 * Hasher, exactly (scikit-learn's HashingVectorizer(analyzer="char_wb", ngram_range=(1,3),
 * n_features=39, alternate_sign=True, norm="l2") with xxHash in place of MurmurHash3):
 *   1. lower-case (ASCII A–Z; also U+212A KELVIN SIGN → 'k' and U+0130 → 'i' as Python's str.lower
 *      yields those letters); every other non-ASCII character is dropped in step 2 anyway;
 *   2. keep only characters of the vocabulary (default "abcdefghijklmnopqrstuvwxyz0123456789.:,;_-+#@";
 *      the space is not in it, so "public cloud aws emr" becomes the single token "publiccloudawsemr");
 *   3. an empty token gives the all-zero vector; otherwise pad the token with one space on each side,
 *      w = " " + token + " ", L = len(w) ≥ 3, and take char_wb n-grams of w (sklearn's
 *      _char_wb_ngrams): for n = ngram_min … ngram_max: if L > n, every window w[o:o+n], o = 0 … L−n;
 *      if L ≤ n, the whole of w once and stop (a short word is counted once, never for larger n).
 *      Example "ab": w = " ab ", 1-grams " ","a","b"," "; 2-grams " a","ab","b "; 3-grams " ab","ab ".
 *   4. each n-gram occurrence: h = XXH32(bytes, n, hash_seed) read as a signed 32-bit integer s;
 *      bucket = |s| mod (vec_len − 1) (|INT32_MIN| taken as 2^31); add +1 when s ≥ 0, −1 otherwise
 *      (sklearn's alternate_sign). Default seed 0.
 *   5. divide by the Euclidean norm (a vector whose counts all cancel stays zero, as sklearn's
 *      normalize leaves zero rows alone); element 0 is the prefix 0.
 *
 * Not here: reading files or deciding which property is a number (src/data/ does that).
 */
#ifndef BL_ENCODE_ENCODE_H
#define BL_ENCODE_ENCODE_H

#include <stddef.h>
#include <stdint.h>

#include "bellamy/bellamy.h"

#define BL_ENC_VEC_LEN_DEFAULT 40           /* 1 prefix + 39 bits / buckets */
#define BL_ENC_VEC_LEN_MAX     64           /* binarizer bits must fit a uint64 */
#define BL_ENC_NGRAM_MAX       8            /* longest n-gram the hasher supports */
#define BL_ENC_VOCAB_DEFAULT   "abcdefghijklmnopqrstuvwxyz0123456789.:,;_-+#@"
#define BL_ENC_VOCAB_CAP       128          /* vocabulary string capacity incl. NUL */
#define BL_ENC_HASH_SEED_DEFAULT 0u
#define BL_SCALEOUT_NFEAT      3            /* [1/x, ln x, x] */
#define BL_MINMAX_MAXDIM       8

/* How properties become vectors; stored in a model file so inference encodes identically. */
typedef struct bl_encode_settings {
    uint32_t vec_len;                     /* length of every property vector (default 40) */
    uint32_t ngram_min, ngram_max;        /* char_wb n-gram range (default 1, 3) */
    uint32_t hash_seed;                   /* XXH32 seed (default 0) */
    char     vocabulary[BL_ENC_VOCAB_CAP];/* characters the hasher keeps (default above) */
    uint32_t totals_per_machine;          /* 1: number properties that are cluster totals (memory,
                                             slots) are encoded per machine (total ÷ scale-out,
                                             rounded), so a context's vectors do not change with
                                             the scale-out; 0: as totals (the paper; default) */
    uint32_t numbers;                     /* how number properties are encoded: BL_ENC_NUMBERS_BINARY
                                             (the paper's bits; default), BL_ENC_NUMBERS_LOG,
                                             _RANGE or _BOTH (below) */
} bl_encode_settings;

/* Number encodings (bl_encode_settings.numbers). BINARY: the bits of n, most significant first, so
 * values that are close in size can share few bits (2047 and 2048 share none) and a network can only
 * learn them value by value. LOG: element 1 + j is clamp(log2(1 + n) − j, 0, 1) — ones up to the
 * magnitude, the fraction of the next power of two, zeros above — so close magnitudes give close
 * vectors and a ratio (data size against cluster memory) is a difference of positions.
 * RANGE: the LOG thermometer over a property's own range: with bounds lo < hi (in log2(1 + n)),
 * u = (log2(1 + n) − lo) / (hi − lo) · (vec_len − 1) and element 1 + j is clamp(u − j, 0, 1). A model
 * fits the bounds per property on its pre-training rows (bl_number_range_fit) and keeps them, so the
 * values it was trained on spread over the whole vector (close sizes still give close vectors, but
 * distinct ones differ in several elements, as bits would) and a value it never saw lies between its
 * neighbours. Without bounds (a data set on its own) RANGE encodes as LOG: bounds 0 and vec_len − 1. */
enum { BL_ENC_NUMBERS_BINARY = 0, BL_ENC_NUMBERS_LOG = 1, BL_ENC_NUMBERS_RANGE = 2, BL_ENC_NUMBERS_BOTH = 3 };
/* BOTH is a model's setting, not a vector: the members of an ensemble alternate, member 0, 2, 4, …
 * reading numbers as BINARY and member 1, 3, 5, … as LOG (src/model/model.h). A data set loaded
 * with BOTH holds BINARY vectors; the model encodes each member's numbers itself from the values. */

/* The name of an encoding ("binary", "log", "range", "both") and back (-1 for an unknown name). */
const char *bl_enc_numbers_name(uint32_t numbers);
int bl_enc_numbers_parse(const char *name);

/* Fills s with the defaults above. */
void bl_encode_settings_default(bl_encode_settings *s);

/* BL_EINVAL unless 2 ≤ vec_len ≤ 64, 1 ≤ ngram_min ≤ ngram_max ≤ 8, and the vocabulary is
 * non-empty, NUL-terminated, printable ASCII without spaces or upper-case letters. */
bl_status bl_encode_settings_check(const bl_encode_settings *s, bl_error *err);

/* Settings checked once, with the hasher's vocabulary as a table: what encoding many values needs.
 * bl_encoder_init checks the settings (bl_encode_settings_check); the calls that take an encoder
 * check nothing again. */
typedef struct bl_encoder {
    bl_encode_settings s;
    unsigned char      keep[256]; /* 1: the hasher keeps this byte (the vocabulary) */
} bl_encoder;

bl_status bl_encoder_init(bl_encoder *e, const bl_encode_settings *s, bl_error *err);

/* ---- scale-out features ------------------------------------------------------------------- */

/* out[i][0..2] = [1/x[i], ln x[i], x[i]].  x: [n] (each > 0, finite; not checked here), out: [n][3] */
void bl_scaleout_features_forward(const double *x, size_t n, double *out);

/* ---- min-max scaler ------------------------------------------------------------------------- */

/* Per feature j: y = (v − lo[j]) / (hi[j] − lo[j]); fitted rows map into [0, 1], others extrapolate
 * linearly (no clamping). A degenerate feature (hi == lo, e.g. one scale-out only) uses range 1, as
 * scikit-learn does: y = v − lo, so the fitted value maps to 0 and the inverse stays exact. */
typedef struct bl_minmax {
    size_t dim;                        /* number of features (≤ BL_MINMAX_MAXDIM) */
    double lo[BL_MINMAX_MAXDIM];       /* fitted minimum per feature */
    double hi[BL_MINMAX_MAXDIM];       /* fitted maximum per feature */
} bl_minmax;

/* Fits bounds on x: [n][dim]. BL_EINVAL for n == 0, dim out of 1..8, or a non-finite value. */
bl_status bl_minmax_fit(bl_minmax *s, const double *x, size_t n, size_t dim, bl_error *err);
/* y = scale(x). x, y: [n][dim]; y may alias x. */
void bl_minmax_transform(const bl_minmax *s, const double *x, size_t n, double *y);
/* x = unscale(y). y, x: [n][dim]; x may alias y. */
void bl_minmax_inverse(const bl_minmax *s, const double *y, size_t n, double *x);

/* ---- binarizer ------------------------------------------------------------------------------- */

/* out: [vec_len] = [1, bit (vec_len−2) of v, …, bit 0 of v]. BL_ERANGE when v ≥ 2^(vec_len−1). */
bl_status bl_binarize_forward(uint64_t v, const bl_encode_settings *s, double *out, bl_error *err);

/* ---- numbers over a fitted range (BL_ENC_NUMBERS_RANGE) --------------------------------------- */

/* Bounds for values whose log2(1 + n) are L[0..n) (n ≥ 1, finite): with a = min L, b = max L and
 * w = max(b − a, 1), range = [a − w, b + w] — the values seen fill the middle third of the vector,
 * and a third on each side is left for values up to w octaves beyond them before it saturates. */
void bl_number_range_fit(const double *L, size_t n, double range[2]);
/* out: [vec_len] = [1, thermometer of log2(1 + v) over range] (range NULL: LOG's bounds). */
void bl_number_range_forward(uint64_t v, const double *range, const bl_encode_settings *s, double *out);

/* Parses a natural number written in decimal (optionally with fraction/exponent that leave an
 * integer, e.g. "1e3"); BL_EFORMAT for non-numbers, NaN/infinity, negative or non-integral values,
 * BL_ERANGE for v ≥ 2^(vec_len−1). The message names the value and the reason. */
bl_status bl_parse_natural(const char *text, const bl_encode_settings *s, uint64_t *v, bl_error *err);

/* Strict decimal number check + strtod: BL_EFORMAT for empty text, junk, hex, "nan", "inf". */
bl_status bl_parse_number(const char *text, double *v, bl_error *err);

/* ---- hasher ---------------------------------------------------------------------------------- */

/* out: [vec_len] as described at the top. text is UTF-8 (invalid bytes are simply dropped). */
bl_status bl_hash_forward(const char *text, const bl_encode_settings *s, double *out, bl_error *err);

/* The same with an encoder (settings checked when it was made): BL_ENOMEM is the only failure. */
bl_status bl_encoder_hash(const bl_encoder *e, const char *text, double *out, bl_error *err);

/* Steps 1–2 only: writes the token (lower-cased, filtered, NUL-terminated) into buf[cap] and
 * returns its length; the token never exceeds strlen(text). BL_ERANGE if cap is too small. */
bl_status bl_hash_token(const char *text, const bl_encode_settings *s, char *buf, size_t cap,
                        size_t *len, bl_error *err);

/* Step 3 alone, for tests and documentation: calls fn once per n-gram of " " + token + " ", in
 * sklearn's order (by n, then offset). The n-gram is not NUL-terminated. */
typedef void (*bl_ngram_fn)(const char *gram, size_t len, void *user);
void bl_char_wb_ngrams(const char *token, size_t len, uint32_t ngram_min, uint32_t ngram_max,
                       bl_ngram_fn fn, void *user);

#endif /* BL_ENCODE_ENCODE_H */
