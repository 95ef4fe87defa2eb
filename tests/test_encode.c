/* test_encode.c — encoders: exact binarizer bits, the hasher's rules (hand-computed n-grams, unit
 * length, determinism, vocabulary filtering, lower-casing), scale-out features, min-max scaler. */
#include "testutil.h"

#include "encode/encode.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <xxhash.h>

static bl_encode_settings defaults(void) {
    bl_encode_settings s;
    bl_encode_settings_default(&s);
    return s;
}

START_TEST(test_settings) {
    bl_encode_settings s = defaults();
    ck_assert_uint_eq(s.vec_len, 40);
    ck_assert_uint_eq(s.ngram_min, 1);
    ck_assert_uint_eq(s.ngram_max, 3);
    ck_assert_uint_eq(s.hash_seed, 0);
    ck_assert_str_eq(s.vocabulary, "abcdefghijklmnopqrstuvwxyz0123456789.:,;_-+#@");
    ck_assert_int_eq(bl_encode_settings_check(&s, NULL), BL_OK);
    bl_error e;
    s.vec_len = 1;
    ck_assert_int_eq(bl_encode_settings_check(&s, &e), BL_EINVAL);
    s = defaults();
    s.vec_len = 65;
    ck_assert_int_eq(bl_encode_settings_check(&s, &e), BL_EINVAL);
    s = defaults();
    s.ngram_min = 3;
    s.ngram_max = 2;
    ck_assert_int_eq(bl_encode_settings_check(&s, &e), BL_EINVAL);
    s = defaults();
    s.ngram_max = 9;
    ck_assert_int_eq(bl_encode_settings_check(&s, &e), BL_EINVAL);
    s = defaults();
    strcpy(s.vocabulary, "abcA");
    ck_assert_int_eq(bl_encode_settings_check(&s, &e), BL_EINVAL);
    strcpy(s.vocabulary, "ab c");
    ck_assert_int_eq(bl_encode_settings_check(&s, &e), BL_EINVAL);
    s.vocabulary[0] = '\0';
    ck_assert_int_eq(bl_encode_settings_check(&s, &e), BL_EINVAL);
    s = defaults();
    ck_assert_uint_eq(s.numbers, BL_ENC_NUMBERS_BINARY); /* the paper's encoding by default */
    s.numbers = BL_ENC_NUMBERS_LOG;
    ck_assert_int_eq(bl_encode_settings_check(&s, NULL), BL_OK);
    s.numbers = BL_ENC_NUMBERS_RANGE;
    ck_assert_int_eq(bl_encode_settings_check(&s, NULL), BL_OK);
    s.numbers = BL_ENC_NUMBERS_BOTH;
    ck_assert_int_eq(bl_encode_settings_check(&s, NULL), BL_OK);
    double bv[40], bb[40]; /* a data set loaded with both holds bits */
    ck_assert_int_eq(bl_binarize_forward(16000, &s, bv, NULL), BL_OK);
    bl_encode_settings plain = defaults();
    ck_assert_int_eq(bl_binarize_forward(16000, &plain, bb, NULL), BL_OK);
    ck_assert_mem_eq(bv, bb, sizeof bv);
    s.numbers = 4;
    ck_assert_int_eq(bl_encode_settings_check(&s, &e), BL_EINVAL);
    ck_assert_ptr_nonnull(strstr(e.message, "number encoding"));
}
END_TEST

/* The log-magnitude thermometer: element 1 + j = clamp(log2(1 + n) − j, 0, 1), exact for known n. */
START_TEST(test_numbers_log) {
    bl_encode_settings s = defaults();
    s.numbers = BL_ENC_NUMBERS_LOG;
    double v[40];
    ck_assert_int_eq(bl_binarize_forward(0, &s, v, NULL), BL_OK); /* log2(1) = 0: nothing lit */
    ck_assert(v[0] == 1.0);
    for (int i = 1; i < 40; i++) ck_assert(v[i] == 0.0);
    ck_assert_int_eq(bl_binarize_forward(3, &s, v, NULL), BL_OK); /* log2(4) = 2 */
    for (int i = 0; i < 40; i++) ck_assert_msg(v[i] == (i <= 2 ? 1.0 : 0.0), "3: element %d is %g", i, v[i]);
    ck_assert_int_eq(bl_binarize_forward(5, &s, v, NULL), BL_OK); /* log2(6) = 2.5849625007211563 */
    ck_assert(v[1] == 1.0 && v[2] == 1.0 && v[4] == 0.0 && v[39] == 0.0);
    ck_assert_double_eq_tol(v[3], 0.5849625007211563, 1e-15);
    ck_assert_int_eq(bl_binarize_forward(16000, &s, v, NULL), BL_OK); /* log2(16001) = 13.96606... */
    for (int i = 1; i <= 13; i++) ck_assert(v[i] == 1.0);
    ck_assert_double_eq_tol(v[14], log2(16001.0) - 13.0, 1e-15);
    for (int i = 15; i < 40; i++) ck_assert(v[i] == 0.0);
    /* close magnitudes give close vectors (unlike bits: 2047 and 2048 share none) */
    double a[40], b[40], d = 0.0;
    ck_assert_int_eq(bl_binarize_forward(2047, &s, a, NULL), BL_OK);
    ck_assert_int_eq(bl_binarize_forward(2048, &s, b, NULL), BL_OK);
    for (int i = 0; i < 40; i++) d += fabs(a[i] - b[i]);
    ck_assert(d > 0.0 && d < 1e-3);
    ck_assert_int_eq(bl_binarize_forward((1ull << 39) - 1, &s, v, NULL), BL_OK); /* just below 39 */
    for (int i = 0; i < 40; i++) ck_assert(v[i] == 1.0);
    bl_error e;
    ck_assert_int_eq(bl_binarize_forward(1ull << 39, &s, v, &e), BL_ERANGE);
}
END_TEST

/* Names of the encodings, both ways. */
START_TEST(test_numbers_names) {
    ck_assert_str_eq(bl_enc_numbers_name(BL_ENC_NUMBERS_BINARY), "binary");
    ck_assert_str_eq(bl_enc_numbers_name(BL_ENC_NUMBERS_LOG), "log");
    ck_assert_str_eq(bl_enc_numbers_name(BL_ENC_NUMBERS_RANGE), "range");
    ck_assert_str_eq(bl_enc_numbers_name(BL_ENC_NUMBERS_BOTH), "both");
    ck_assert_int_eq(bl_enc_numbers_parse("both"), BL_ENC_NUMBERS_BOTH);
    ck_assert_str_eq(bl_enc_numbers_name(7), "?");
    ck_assert_int_eq(bl_enc_numbers_parse("binary"), BL_ENC_NUMBERS_BINARY);
    ck_assert_int_eq(bl_enc_numbers_parse("log"), BL_ENC_NUMBERS_LOG);
    ck_assert_int_eq(bl_enc_numbers_parse("range"), BL_ENC_NUMBERS_RANGE);
    ck_assert_int_eq(bl_enc_numbers_parse("Range"), -1);
    ck_assert_int_eq(bl_enc_numbers_parse(""), -1);
    ck_assert_int_eq(bl_enc_numbers_parse(NULL), -1);
}
END_TEST

/* The thermometer over fitted bounds: the fit's exact bounds, exact elements for known values,
 * saturation outside the bounds, and LOG's vector when there are no bounds. */
START_TEST(test_numbers_range) {
    bl_encode_settings s = defaults();
    s.numbers = BL_ENC_NUMBERS_RANGE;
    double r[2];
    const double L1[] = {3.0, 5.0, 4.0}; /* span 2: bounds 3 − 2, 5 + 2 */
    bl_number_range_fit(L1, 3, r);
    ck_assert(r[0] == 1.0 && r[1] == 7.0);
    const double L2[] = {10.0, 10.5}; /* span 0.5 < 1: widened to 1 */
    bl_number_range_fit(L2, 2, r);
    ck_assert(r[0] == 9.0 && r[1] == 11.5);
    const double L3[] = {6.0}; /* one value: in the middle of [5, 7] */
    bl_number_range_fit(L3, 1, r);
    ck_assert(r[0] == 5.0 && r[1] == 7.0);
    double v[40];
    /* bounds [1, 7]: u = (log2(1 + n) − 1) / 6 · 39; n = 7 → log2 8 = 3 → u = 13 exactly */
    const double b[2] = {1.0, 7.0};
    bl_number_range_forward(7, b, &s, v);
    ck_assert(v[0] == 1.0);
    for (int j = 0; j < 39; j++) ck_assert_msg(v[1 + j] == (j < 13 ? 1.0 : 0.0), "7: element %d is %g", 1 + j, v[1 + j]);
    bl_number_range_forward(15, b, &s, v); /* log2 16 = 4 → u = 19.5 */
    for (int j = 0; j < 39; j++)
        ck_assert_msg(v[1 + j] == (j < 19 ? 1.0 : j == 19 ? 0.5 : 0.0), "15: element %d is %g", 1 + j, v[1 + j]);
    bl_number_range_forward(0, b, &s, v); /* below lo: nothing lit */
    for (int j = 1; j < 40; j++) ck_assert(v[j] == 0.0);
    bl_number_range_forward(1000, b, &s, v); /* above hi: everything lit */
    for (int j = 0; j < 40; j++) ck_assert(v[j] == 1.0);
    /* seen values spread out: 10100 and 12625 MB (one octave apart at most) differ in several elements
     * over their own bounds, in less than one under LOG */
    const double Lg[] = {log2(10101.0), log2(20201.0)};
    bl_number_range_fit(Lg, 2, r);
    double a[40], c[40], dr = 0.0, dl = 0.0;
    bl_number_range_forward(10100, r, &s, a);
    bl_number_range_forward(12625, r, &s, c);
    for (int i = 0; i < 40; i++) dr += fabs(a[i] - c[i]);
    ck_assert_double_eq_tol(dr, (log2(12626.0) - log2(10101.0)) / (r[1] - r[0]) * 39.0, 1e-12);
    ck_assert(dr > 4.0);
    bl_number_range_forward(10100, NULL, &s, a);
    bl_number_range_forward(12625, NULL, &s, c);
    for (int i = 0; i < 40; i++) dl += fabs(a[i] - c[i]);
    ck_assert(dl < 0.33);
    /* no bounds: exactly LOG's vector, through bl_binarize_forward too */
    bl_encode_settings lg = defaults();
    lg.numbers = BL_ENC_NUMBERS_LOG;
    double w[40];
    ck_assert_int_eq(bl_binarize_forward(16000, &lg, w, NULL), BL_OK);
    ck_assert_int_eq(bl_binarize_forward(16000, &s, v, NULL), BL_OK);
    ck_assert_mem_eq(v, w, sizeof v);
}
END_TEST

START_TEST(test_binarize_bits) {
    bl_encode_settings s = defaults();
    double v[40];
    /* 5 = 0b101: prefix 1, then bits 38..0; bit 2 sits at index 1 + (38 − 2) = 37. */
    ck_assert_int_eq(bl_binarize_forward(5, &s, v, NULL), BL_OK);
    for (int i = 0; i < 40; i++) {
        double want = (i == 0 || i == 37 || i == 39) ? 1.0 : 0.0;
        ck_assert_msg(v[i] == want, "5: element %d is %g, want %g", i, v[i], want);
    }
    /* 16000 = 0b11111010000000 (bits 13..11..9, 7). */
    ck_assert_int_eq(bl_binarize_forward(16000, &s, v, NULL), BL_OK);
    const int ones[] = { 0, 39 - 13, 39 - 12, 39 - 11, 39 - 10, 39 - 9, 39 - 7 };
    for (int i = 0; i < 40; i++) {
        double want = 0;
        for (size_t k = 0; k < sizeof ones / sizeof ones[0]; k++) want += i == ones[k];
        ck_assert_msg(v[i] == want, "16000: element %d is %g, want %g", i, v[i], want);
    }
    ck_assert_int_eq(bl_binarize_forward(0, &s, v, NULL), BL_OK);
    ck_assert(v[0] == 1.0);
    for (int i = 1; i < 40; i++) ck_assert(v[i] == 0.0);
    ck_assert_int_eq(bl_binarize_forward((1ull << 39) - 1, &s, v, NULL), BL_OK);
    for (int i = 0; i < 40; i++) ck_assert(v[i] == 1.0);
    /* MSB first: 2^38 sets index 1 only. */
    ck_assert_int_eq(bl_binarize_forward(1ull << 38, &s, v, NULL), BL_OK);
    ck_assert(v[1] == 1.0 && v[2] == 0.0 && v[39] == 0.0);
    bl_error e;
    ck_assert_int_eq(bl_binarize_forward(1ull << 39, &s, v, &e), BL_ERANGE);
    ck_assert_ptr_nonnull(strstr(e.message, "too large"));
}
END_TEST

START_TEST(test_parse_natural) {
    bl_encode_settings s = defaults();
    uint64_t v;
    bl_error e;
    ck_assert_int_eq(bl_parse_natural("15150", &s, &v, NULL), BL_OK);
    ck_assert_uint_eq(v, 15150);
    ck_assert_int_eq(bl_parse_natural("1e3", &s, &v, NULL), BL_OK);
    ck_assert_uint_eq(v, 1000);
    ck_assert_int_eq(bl_parse_natural("16.0", &s, &v, NULL), BL_OK);
    ck_assert_uint_eq(v, 16);
    ck_assert_int_eq(bl_parse_natural("549755813887", &s, &v, NULL), BL_OK);   /* 2^39 − 1 */
    ck_assert_int_eq(bl_parse_natural("549755813888", &s, &v, &e), BL_ERANGE); /* 2^39 */
    ck_assert_ptr_nonnull(strstr(e.message, "2^39"));
    ck_assert_int_eq(bl_parse_natural("0.5", &s, &v, &e), BL_EFORMAT);
    ck_assert_ptr_nonnull(strstr(e.message, "not an integer"));
    ck_assert_int_eq(bl_parse_natural("-1", &s, &v, &e), BL_EFORMAT);
    ck_assert_ptr_nonnull(strstr(e.message, "negative"));
    ck_assert_int_eq(bl_parse_natural("abc", &s, &v, &e), BL_EFORMAT);
    ck_assert_ptr_nonnull(strstr(e.message, "not a number"));
    ck_assert_int_eq(bl_parse_natural("nan", &s, &v, &e), BL_EFORMAT);
    ck_assert_ptr_nonnull(strstr(e.message, "NaN or infinity"));
    ck_assert_int_eq(bl_parse_natural("-Infinity", &s, &v, &e), BL_EFORMAT);
    ck_assert_ptr_nonnull(strstr(e.message, "NaN or infinity"));
    ck_assert_int_eq(bl_parse_natural("1e999", &s, &v, &e), BL_EFORMAT);
    ck_assert_int_eq(bl_parse_natural("0x10", &s, &v, &e), BL_EFORMAT);
    ck_assert_int_eq(bl_parse_natural("", &s, &v, &e), BL_EFORMAT);
    ck_assert_int_eq(bl_parse_natural(" 5", &s, &v, &e), BL_EFORMAT);
    ck_assert_int_eq(bl_parse_natural("5e", &s, &v, &e), BL_EFORMAT);
    double d;
    ck_assert_int_eq(bl_parse_number("-2.5e-1", &d, NULL), BL_OK);
    ck_assert_double_eq_tol(d, -0.25, 1e-15);
}
END_TEST

/* Collects n-grams as "|"-separated text. */
typedef struct grams { char buf[512]; size_t n; } grams;
static void collect(const char *g, size_t len, void *user) {
    grams *c = user;
    size_t at = strlen(c->buf);
    snprintf(c->buf + at, sizeof c->buf - at, "%s%.*s", c->n ? "|" : "", (int)len, g);
    c->n++;
}

START_TEST(test_char_wb_ngrams) {
    /* Hand-computed from sklearn's _char_wb_ngrams: w = " ab ", L = 4 > n for n = 1..3. */
    grams c = { "", 0 };
    bl_char_wb_ngrams("ab", 2, 1, 3, collect, &c);
    ck_assert_uint_eq(c.n, 9);
    ck_assert_str_eq(c.buf, " |a|b| | a|ab|b | ab|ab ");
    /* w = " a ", L = 3: the 3-gram is the whole word, counted once; n = 4, 5 add nothing. */
    grams d = { "", 0 };
    bl_char_wb_ngrams("a", 1, 1, 5, collect, &d);
    ck_assert_str_eq(d.buf, " |a| | a|a | a ");
    /* min_n above L: the whole padded word once. */
    grams e = { "", 0 };
    bl_char_wb_ngrams("a", 1, 4, 6, collect, &e);
    ck_assert_str_eq(e.buf, " a ");
    /* Empty token: no n-grams at all. */
    grams f = { "", 0 };
    bl_char_wb_ngrams("", 0, 1, 3, collect, &f);
    ck_assert_uint_eq(f.n, 0);
}
END_TEST

START_TEST(test_hash_token) {
    bl_encode_settings s = defaults();
    char buf[64];
    size_t n;
    ck_assert_int_eq(bl_hash_token("Public Cloud AWS EMR", &s, buf, sizeof buf, &n, NULL), BL_OK);
    ck_assert_str_eq(buf, "publiccloudawsemr");
    ck_assert_uint_eq(n, 17);
    ck_assert_int_eq(bl_hash_token("c4.2xlarge!?\t\"é\xE2\x84\xAA", &s, buf, sizeof buf, &n, NULL), BL_OK);
    ck_assert_str_eq(buf, "c4.2xlargek");   /* KELVIN SIGN lower-cases to k, é is dropped */
    ck_assert_int_eq(bl_hash_token("a:b,c;d_e-f+g#h@i", &s, buf, sizeof buf, &n, NULL), BL_OK);
    ck_assert_str_eq(buf, "a:b,c;d_e-f+g#h@i");
    bl_error e;
    ck_assert_int_eq(bl_hash_token("abcdef", &s, buf, 3, &n, &e), BL_ERANGE);
}
END_TEST

static void hash(const char *t, double *v) {
    bl_encode_settings s = defaults();
    ck_assert_int_eq(bl_hash_forward(t, &s, v, NULL), BL_OK);
}

static double norm39(const double *v) {
    double ss = 0;
    for (int i = 1; i < 40; i++) ss += v[i] * v[i];
    return sqrt(ss);
}

static int same(const double *a, const double *b) { return memcmp(a, b, 40 * sizeof *a) == 0; }

START_TEST(test_hash_rules) {
    double a[40], b[40], c[40];
    hash("c4.2xlarge", a);
    ck_assert(a[0] == 0.0);
    ck_assert_double_eq_tol(norm39(a), 1.0, 1e-12);
    hash("c4.2xlarge", b);
    ck_assert(same(a, b));                              /* deterministic */
    hash("m4.2xlarge", c);
    ck_assert(!same(a, c));                             /* different strings differ */
    ck_assert_double_eq_tol(norm39(c), 1.0, 1e-12);
    hash("C4.2XLARGE", c);
    ck_assert(same(a, c));                              /* upper case is lower-cased, not dropped */
    hash("c4.2xlarge (€)!", c);
    ck_assert(same(a, c));                              /* characters outside the vocabulary ignored */
    hash("public cloud aws emr", b);
    hash("publiccloudawsemr", c);
    ck_assert(same(b, c));                              /* the space is not in the vocabulary */
    hash("", b);
    for (int i = 0; i < 40; i++) ck_assert(b[i] == 0.0);   /* empty → all zero, prefix 0 */
    hash("  ?! ", b);
    for (int i = 0; i < 40; i++) ck_assert(b[i] == 0.0);
    hash("ABC", b);
    ck_assert_double_eq_tol(norm39(b), 1.0, 1e-12);    /* the prototype's bug would give zeros */
}
END_TEST

/* The hasher against an independent computation from the hand-computed n-gram list of "ab". */
START_TEST(test_hash_buckets) {
    const char *ng[] = { " ", "a", "b", " ", " a", "ab", "b ", " ab", "ab " };
    double want[40] = { 0 };
    for (size_t i = 0; i < 9; i++) {
        int32_t h = (int32_t)XXH32(ng[i], strlen(ng[i]), 0);
        int64_t mag = h < 0 ? -(int64_t)h : (int64_t)h;
        want[1 + mag % 39] += h >= 0 ? 1.0 : -1.0;
    }
    double ss = 0;
    for (int i = 1; i < 40; i++) ss += want[i] * want[i];
    for (int i = 1; i < 40; i++) want[i] /= sqrt(ss);
    double got[40];
    hash("AB", got);
    for (int i = 0; i < 40; i++) ck_assert_double_eq_tol(got[i], want[i], 1e-15);
    /* Another seed gives another vector. */
    bl_encode_settings s = defaults();
    s.hash_seed = 12345;
    double other[40];
    ck_assert_int_eq(bl_hash_forward("ab", &s, other, NULL), BL_OK);
    ck_assert(!same(got, other));
}
END_TEST

START_TEST(test_long_text) {
    /* Longer than the hasher's stack buffer: exercises the heap path. */
    char big[3000];
    for (size_t i = 0; i < sizeof big - 1; i++) big[i] = (char)('a' + i % 26);
    big[sizeof big - 1] = '\0';
    double v[40];
    hash(big, v);
    ck_assert_double_eq_tol(norm39(v), 1.0, 1e-12);
}
END_TEST

START_TEST(test_scaleout_features) {
    double x[2] = { 2.0, 12.0 }, f[6];
    bl_scaleout_features_forward(x, 2, f);
    ck_assert_double_eq_tol(f[0], 0.5, 1e-15);
    ck_assert_double_eq_tol(f[1], log(2.0), 1e-15);
    ck_assert_double_eq_tol(f[2], 2.0, 1e-15);
    ck_assert_double_eq_tol(f[3], 1.0 / 12.0, 1e-15);
    ck_assert_double_eq_tol(f[4], log(12.0), 1e-15);
    ck_assert_double_eq_tol(f[5], 12.0, 1e-15);
}
END_TEST

START_TEST(test_minmax) {
    double x[6] = { 2, 4, 6, 8, 10, 12 }, f[18], y[18], back[18];
    bl_scaleout_features_forward(x, 6, f);
    bl_minmax m;
    ck_assert_int_eq(bl_minmax_fit(&m, f, 6, 3, NULL), BL_OK);
    bl_minmax_transform(&m, f, 6, y);
    ck_assert_double_eq_tol(y[0], 1.0, 1e-15);   /* 1/x is largest at x = 2 */
    ck_assert_double_eq_tol(y[1], 0.0, 1e-15);
    ck_assert_double_eq_tol(y[2], 0.0, 1e-15);
    ck_assert_double_eq_tol(y[15], 0.0, 1e-15);
    ck_assert_double_eq_tol(y[17], 1.0, 1e-15);
    ck_assert_double_eq_tol(y[5], 0.2, 1e-15);   /* x = 4 → (4 − 2)/10 */
    bl_minmax_inverse(&m, y, 6, back);
    for (int i = 0; i < 18; i++) ck_assert_double_eq_tol(back[i], f[i], 1e-12);
    /* Outside the fitted bounds: linear extrapolation, no clamping. */
    double x24 = 24, f24[3], y24[3];
    bl_scaleout_features_forward(&x24, 1, f24);
    bl_minmax_transform(&m, f24, 1, y24);
    ck_assert_double_eq_tol(y24[2], 2.2, 1e-12);
    ck_assert(y24[0] < 0.0);
    bl_minmax_inverse(&m, y24, 1, y24);
    ck_assert_double_eq_tol(y24[2], 24.0, 1e-12);
    /* In place. */
    bl_minmax_transform(&m, f, 6, f);
    ck_assert_double_eq_tol(f[17], 1.0, 1e-15);
}
END_TEST

START_TEST(test_minmax_degenerate) {
    double v[3] = { 4, 4, 4 }, y[3], back[3];
    bl_minmax m;
    ck_assert_int_eq(bl_minmax_fit(&m, v, 3, 1, NULL), BL_OK);
    bl_minmax_transform(&m, v, 3, y);
    for (int i = 0; i < 3; i++) ck_assert_double_eq_tol(y[i], 0.0, 1e-15);
    double five = 5, y5;
    bl_minmax_transform(&m, &five, 1, &y5);
    ck_assert_double_eq_tol(y5, 1.0, 1e-15);   /* range taken as 1 */
    bl_minmax_inverse(&m, &y5, 1, back);
    ck_assert_double_eq_tol(back[0], 5.0, 1e-15);
    bl_error e;
    ck_assert_int_eq(bl_minmax_fit(&m, v, 0, 1, &e), BL_EINVAL);
    ck_assert_int_eq(bl_minmax_fit(&m, v, 1, 9, &e), BL_EINVAL);
    double bad[2] = { 1, NAN };
    ck_assert_int_eq(bl_minmax_fit(&m, bad, 2, 1, &e), BL_EINVAL);
}
END_TEST

Suite *bl_test_suite(void) {
    Suite *s = suite_create("encode");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_settings);
    tcase_add_test(tc, test_binarize_bits);
    tcase_add_test(tc, test_numbers_log);
    tcase_add_test(tc, test_numbers_names);
    tcase_add_test(tc, test_numbers_range);
    tcase_add_test(tc, test_parse_natural);
    tcase_add_test(tc, test_char_wb_ngrams);
    tcase_add_test(tc, test_hash_token);
    tcase_add_test(tc, test_hash_rules);
    tcase_add_test(tc, test_hash_buckets);
    tcase_add_test(tc, test_long_text);
    tcase_add_test(tc, test_scaleout_features);
    tcase_add_test(tc, test_minmax);
    tcase_add_test(tc, test_minmax_degenerate);
    suite_add_tcase(s, tc);
    return s;
}
