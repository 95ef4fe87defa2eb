/* test_data.c — reader, schema parser, data sets, contexts, synthetic corpus and `bellamy-train
 * inspect`: the shipped schemas reproduce the property table, C3O row/context counts (skipped when
 * the data is absent), and every bad input yields an error naming file:line:column — including
 * schema lines whose columns contradict their roles and runs schemas that differ from a model's. */
#include "testutil.h"

#include "bellamy/train.h"
#include "data/dataset.h"
#include "data/reader.h"
#include "data/schema.h"
#include "data/synth.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <xxhash.h>

/* ---- helpers ------------------------------------------------------------------------------------ */

static const char base_schema[] =
    "scale_out x\n"
    "runtime t s\n"
    "property machine_type essential text column m\n"
    "property data_size_MB essential number column n\n"
    "property memory optional number column mem\n"
    "cluster_totals mem\n";
static const char base_header[] = "x\tt\tm\tn\tmem\n";

static bl_status load_str(const char *tsv, size_t len, const char *schema, bl_dataset **ds, bl_error *e) {
    bl_schema *sc;
    bl_status st = bl_schema_parse("t.schema", schema, strlen(schema), &sc, e);
    if (st != BL_OK) return st;
    st = bl_dataset_load_mem("bad.tsv", tsv, len, '\t', sc, NULL, ds, e);
    bl_schema_free(sc);
    return st;
}

/* Loading tsv through the base schema must fail with a message that starts with prefix and contains what. */
static void expect_data_error(const char *tsv, size_t len, const char *prefix, const char *what) {
    bl_dataset *ds = NULL;
    bl_error e;
    bl_status st = load_str(tsv, len, base_schema, &ds, &e);
    ck_assert_msg(st != BL_OK, "expected failure for %s", what);
    ck_assert_ptr_null(ds);
    ck_assert_msg(strncmp(e.message, prefix, strlen(prefix)) == 0, "message '%s' should start with '%s'",
                  e.message, prefix);
    ck_assert_msg(strstr(e.message, what) != NULL, "message '%s' should contain '%s'", e.message, what);
}

static void expect_row_error(const char *row, const char *prefix, const char *what) {
    char buf[1024];
    snprintf(buf, sizeof buf, "%s2\t10\tc4\t5\t16\n%s\n", base_header, row);
    expect_data_error(buf, strlen(buf), prefix, what);
}

static void expect_schema_error(const char *schema, const char *prefix, const char *what) {
    bl_schema *sc = NULL;
    bl_error e;
    bl_status st = bl_schema_parse("t.schema", schema, strlen(schema), &sc, &e);
    ck_assert_msg(st != BL_OK, "expected schema failure for %s", what);
    ck_assert_ptr_null(sc);
    ck_assert_msg(strncmp(e.message, prefix, strlen(prefix)) == 0, "message '%s' should start with '%s'",
                  e.message, prefix);
    ck_assert_msg(strstr(e.message, what) != NULL, "message '%s' should contain '%s'", e.message, what);
}

static const char *value_of(const bl_dataset *ds, const char *prop, size_t row) {
    long p = bl_dataset_find_prop(ds, prop);
    ck_assert_msg(p >= 0, "no property %s", prop);
    return ds->props[p].values[ds->props[p].row_value[row]];
}

/* ---- reader and loader basics --------------------------------------------------------------------- */

/* Data files and schemas that are FIFOs nobody writes to: an error (an empty file), never a hang. */
START_TEST(test_fifo_inputs_do_not_hang) {
    char tsv[600], sch[600], real[600];
    snprintf(tsv, sizeof tsv, "%s/fifo.tsv", bl_test_tmpdir());
    snprintf(sch, sizeof sch, "%s/fifo.schema", bl_test_tmpdir());
    snprintf(real, sizeof real, "%s/real.schema", bl_test_tmpdir());
    unlink(tsv);
    unlink(sch);
    ck_assert_int_eq(mkfifo(tsv, 0600), 0);
    ck_assert_int_eq(mkfifo(sch, 0600), 0);
    FILE *f = fopen(real, "w");
    ck_assert_ptr_nonnull(f);
    fputs(base_schema, f);
    fclose(f);
    alarm(20);
    bl_dataset *ds = NULL;
    bl_error e = { 0 };
    ck_assert_int_ne(bl_dataset_load(tsv, real, 0, NULL, &ds, &e), BL_OK);
    ck_assert_msg(strstr(e.message, tsv), "%s", e.message);
    bl_schema *s = NULL;
    ck_assert_int_ne(bl_schema_load(sch, &s, &e), BL_OK);
    ck_assert_msg(strstr(e.message, sch), "%s", e.message);
    alarm(0);
    unlink(tsv);
    unlink(sch);
    unlink(real);
}
END_TEST

START_TEST(test_load_basic) {
    const char tsv[] = "\xEF\xBB\xBFx\tt\tm\tn\tmem\r\n2\t10\tc4\t5\t16\r\n\r\n4\t6.5\tr4\t5.0\t32\n2\t11\tc4\t7\t16";
    bl_dataset *ds;
    bl_error e;
    ck_assert_int_eq(load_str(tsv, sizeof tsv - 1, base_schema, &ds, &e), BL_OK);
    ck_assert_uint_eq(ds->n_rows, 3);
    ck_assert_uint_eq(ds->n_contexts, 3);
    ck_assert_double_eq_tol(ds->runtime_s[1], 6.5, 1e-12);
    ck_assert_double_eq_tol(ds->scale_out[1], 4, 1e-12);
    ck_assert_uint_eq(ds->src_row[2], 2);                  /* blank lines are not data rows */
    ck_assert_str_eq(value_of(ds, "data_size_MB", 1), "5"); /* "5.0" → canonical "5" */
    ck_assert_uint_eq(ds->props[1].n_values, 2);
    ck_assert_uint_eq(ds->props[1].row_value[0], ds->props[1].row_value[1]);
    ck_assert(ds->props[2].cluster_total);
    ck_assert(!ds->props[0].cluster_total);
    ck_assert_str_eq(ds->contexts[0].label, "machine_type=c4; data_size_MB=5");
    ck_assert_uint_eq(ds->data_hash, XXH64(tsv, sizeof tsv - 1, 0));
    /* Vectors: prefix 1 for numbers, 0 for text. */
    ck_assert(bl_dataset_vec(ds, 1, 0)[0] == 1.0);
    ck_assert(bl_dataset_vec(ds, 1, 0)[39] == 1.0 && bl_dataset_vec(ds, 1, 0)[37] == 1.0);
    ck_assert(bl_dataset_vec(ds, 0, 0)[0] == 0.0);
    double f[9];
    bl_dataset_scaleout_features(ds, f);
    ck_assert_double_eq_tol(f[3], 0.25, 1e-15);
    bl_dataset_free(ds);
    bl_dataset_free(NULL);
}
END_TEST

START_TEST(test_csv_and_long_line) {
    /* Comma-separated with spaces around fields, and a text field far longer than a read chunk. */
    size_t big = 200000;
    char *csv = malloc(big + 200);
    ck_assert_ptr_nonnull(csv);
    int n = sprintf(csv, "x , t, m ,n,mem\n3, 4 ,");
    memset(csv + n, 'q', big);
    sprintf(csv + n + big, ",9,27\n");
    bl_schema *sc;
    ck_assert_int_eq(bl_schema_parse("t.schema", base_schema, strlen(base_schema), &sc, NULL), BL_OK);
    bl_dataset *ds;
    bl_error e;
    ck_assert_int_eq(bl_dataset_load_mem("a.csv", csv, strlen(csv), ',', sc, NULL, &ds, &e), BL_OK);
    ck_assert_uint_eq(strlen(value_of(ds, "machine_type", 0)), big);
    ck_assert_str_eq(value_of(ds, "memory", 0), "27");
    bl_dataset_free(ds);
    bl_schema_free(sc);
    free(csv);
}
END_TEST

START_TEST(test_reader_file) {
    char path[4096];
    snprintf(path, sizeof path, "%s", bl_test_source_path("tests/data/bad_ragged.tsv"));
    bl_reader *r;
    bl_error e;
    ck_assert_int_eq(bl_reader_open(&r, path, 0, &e), BL_OK);
    ck_assert_uint_eq(bl_reader_ncols(r), 3);
    ck_assert_str_eq(bl_reader_colname(r, 2), "c");
    ck_assert_int_eq(bl_reader_find(r, "b"), 1);
    ck_assert_int_eq(bl_reader_find(r, "z"), -1);
    char **f;
    ck_assert_int_eq(bl_reader_next(r, &f, &e), BL_OK);
    ck_assert_str_eq(f[2], "3");
    ck_assert_uint_eq(bl_reader_field_col(r, 2), 5);
    ck_assert_int_eq(bl_reader_next(r, &f, &e), BL_EFORMAT);
    char want[4200];
    snprintf(want, sizeof want, "%s:3:4: ragged row: 2 fields, the header has 3", path);
    ck_assert_str_eq(e.message, want);
    bl_reader_free(r);
    /* Delimiter by extension, and failures to open. */
    char d;
    ck_assert_int_eq(bl_delim_for_path("a.csv", 0, &d, NULL), BL_OK);
    ck_assert_int_eq(d, ',');
    ck_assert_int_eq(bl_delim_for_path("a.tsv", 0, &d, NULL), BL_OK);
    ck_assert_int_eq(d, '\t');
    ck_assert_int_eq(bl_delim_for_path("/nonexistent/a.txt", 0, &d, &e), BL_EIO);
    ck_assert_int_eq(bl_delim_for_path("/dev/null", 0, &d, &e), BL_EINVAL); /* not a regular file: not read */
    ck_assert_msg(strstr(e.message, "not a regular file"), "%s", e.message);
    ck_assert_int_eq(bl_delim_for_path("a.txt", ',', &d, NULL), BL_OK);
    /* another name: the first line decides (a tab wins over commas, which values may hold) */
    const char *heads[] = {"a\tb,c\n1\t2\n", "a,b\n1,2\n", "ab\n1\n"};
    const char want_d[] = {'\t', ',', 0};
    for (int k = 0; k < 3; k++) {
        char txt[4200];
        snprintf(txt, sizeof txt, "%s/sniff%d.txt", bl_test_tmpdir(), k);
        FILE *tf = fopen(txt, "wb");
        fputs(heads[k], tf);
        fclose(tf);
        d = 0;
        ck_assert_int_eq(bl_delim_for_path(txt, 0, &d, &e), want_d[k] ? BL_OK : BL_EINVAL);
        if (want_d[k]) ck_assert_int_eq(d, want_d[k]);
        else ck_assert_msg(strstr(e.message, "no tab or comma"), "%s", e.message);
    }
    ck_assert_int_eq(bl_reader_open(&r, "/nonexistent/x.tsv", 0, &e), BL_EIO);
    ck_assert_ptr_nonnull(strstr(e.message, "/nonexistent/x.tsv"));
    ck_assert_ptr_null(r);
}
END_TEST

/* A header far wider than the schema: header processing (duplicate check, lookups by name) must be
 * O(N log N), not pairwise; at 200 000 extra columns a pairwise check makes 2·10^10 comparisons and
 * this test runs into its timeout. */
START_TEST(test_wide_header) {
    const size_t extra = 200000;
    size_t cap = extra * 16 + 256;
    char *tsv = malloc(cap);
    ck_assert_ptr_nonnull(tsv);
    size_t n = (size_t)snprintf(tsv, cap, "x\tt\tm\tn");
    for (size_t i = 0; i < extra; i++) n += (size_t)snprintf(tsv + n, cap - n, "\te%zu", i);
    n += (size_t)snprintf(tsv + n, cap - n, "\tmem\n2\t10\tc4\t5");
    for (size_t i = 0; i < extra; i++) n += (size_t)snprintf(tsv + n, cap - n, "\t%zu", i % 7);
    n += (size_t)snprintf(tsv + n, cap - n, "\t16\n");
    bl_dataset *ds = NULL;
    bl_error e;
    ck_assert_msg(load_str(tsv, n, base_schema, &ds, &e) == BL_OK, "%s", e.message);
    ck_assert_uint_eq(ds->n_rows, 1);
    ck_assert_str_eq(value_of(ds, "memory", 0), "16");
    ck_assert_double_eq_tol(ds->runtime_s[0], 10, 1e-12);
    bl_dataset_free(ds);
    /* Lookups by name over the wide header. */
    bl_reader *r;
    ck_assert_int_eq(bl_reader_open_mem(&r, "wide.tsv", tsv, n, '\t', &e), BL_OK);
    ck_assert_uint_eq(bl_reader_ncols(r), extra + 5);
    ck_assert_int_eq(bl_reader_find(r, "x"), 0);
    ck_assert_int_eq(bl_reader_find(r, "e0"), 4);
    ck_assert_int_eq(bl_reader_find(r, "e199999"), 4 + 199999);
    ck_assert_int_eq(bl_reader_find(r, "mem"), (long)extra + 4);
    ck_assert_int_eq(bl_reader_find(r, "e200000"), -1);
    ck_assert_int_eq(bl_reader_find(r, ""), -1);
    ck_assert_str_eq(bl_reader_colname(r, 4 + 123456), "e123456");
    bl_reader_free(r);
    /* A duplicate at the far end of the wide header: the same message as a pairwise scan gives. Turn
     * "\tmem\n" into "\te17\n" (the header ends before the first '\n'). */
    char *nl = strchr(tsv, '\n');
    size_t hdr = (size_t)(nl - tsv);
    ck_assert(memcmp(tsv + hdr - 4, "\tmem", 4) == 0);
    memcpy(tsv + hdr - 3, "e17", 3);
    ck_assert_int_eq(bl_reader_open_mem(&r, "wide.tsv", tsv, n, '\t', &e), BL_EFORMAT);
    ck_assert_ptr_null(r);
    char want[128];
    snprintf(want, sizeof want, "wide.tsv:1:%zu: duplicate column 'e17' (also column 22)", hdr - 3 + 1);
    ck_assert_str_eq(e.message, want);
    free(tsv);
}
END_TEST

/* Several duplicates and empty names: the leftmost offending column is reported, a duplicate naming
 * the FIRST earlier column with its name, as the left-to-right rule in reader.h says. */
START_TEST(test_header_duplicates) {
    static const struct { const char *hdr; const char *msg; } cases[] = {
        { "b\ta\tc\ta\tb\n",       "h.tsv:1:7: duplicate column 'a' (also column 2)" },
        { "a\ta\ta\n",             "h.tsv:1:3: duplicate column 'a' (also column 1)" },
        { "zz\ty\tx\ty\tzz\tx\n",  "h.tsv:1:8: duplicate column 'y' (also column 2)" },
        { "a\t\tb\ta\n",           "h.tsv:1:3: empty column name (column 2 of the header)" },
        { "a\ta\t\tb\n",           "h.tsv:1:3: duplicate column 'a' (also column 1)" },
        { "a\tb\t\t\n",            "h.tsv:1:5: empty column name (column 3 of the header)" },
        { "\xC3\xA9\tq\t\xC3\xA9\n", "h.tsv:1:5: duplicate column '\xC3\xA9' (also column 1)" },   /* é: columns count characters */
        { "p , q,p\n",             "h.tsv:1:7: duplicate column 'p' (also column 1)" },       /* names are trimmed */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        bl_reader *r;
        bl_error e;
        char d = strchr(cases[i].hdr, ',') ? ',' : '\t';
        ck_assert_int_eq(bl_reader_open_mem(&r, "h.tsv", cases[i].hdr, strlen(cases[i].hdr), d, &e), BL_EFORMAT);
        ck_assert_ptr_null(r);
        ck_assert_str_eq(e.message, cases[i].msg);
    }
    /* Distinct names that share prefixes are no duplicates. */
    const char ok[] = "a\tab\tabc\tb\tA\n1\t2\t3\t4\t5\n";
    bl_reader *r;
    ck_assert_int_eq(bl_reader_open_mem(&r, "h.tsv", ok, strlen(ok), '\t', NULL), BL_OK);
    ck_assert_int_eq(bl_reader_find(r, "A"), 4);
    ck_assert_int_eq(bl_reader_find(r, "ab"), 1);
    ck_assert_int_eq(bl_reader_find(r, "abcd"), -1);
    char hint[64];
    ck_assert_str_eq(bl_reader_header_hint(r, hint, sizeof hint), "");
    bl_reader_free(r);
}
END_TEST

/* ---- quoted fields (issue 24 item 7) ---------------------------------------------------------------- */

/* Loads text (delimiter d) through the base schema with skip_invalid; NULL and *e set on failure. */
static bl_dataset *load_q(const char *text, char d, int skip, bl_error *e) {
    bl_schema *sc;
    ck_assert_int_eq(bl_schema_parse("t.schema", base_schema, strlen(base_schema), &sc, NULL), BL_OK);
    bl_dataset *ds = NULL;
    bl_dataset_load_mem_skip(d == ',' ? "bad.csv" : "bad.tsv", text, strlen(text), d, sc, NULL, skip, &ds, e);
    bl_schema_free(sc);
    return ds;
}

/* What spreadsheets, pandas and most exporters write (RFC 4180): quotes around a field, the delimiter,
 * doubled quotes and line breaks inside them; the header too. Read the same with tabs. */
START_TEST(test_quoted_fields) {
    for (int k = 0; k < 2; k++) {
        const char d = k ? '\t' : ',';
        /* a fully quoted export (pandas' QUOTE_ALL), one quoted value with the delimiter, one with quotes,
         * one with a CRLF line break, blanks around and inside quotes, a quote inside an unquoted field;
         * '|' stands for the delimiter */
        char text[1024];
        snprintf(text, sizeof text, "%s",
                 "\"x\"|\"t\"|\"m\"|\"n\"|\"mem\"\r\n"
                 "2|10|\"m5.xlarge\"|5|16\r\n"
                 "\"4\"|\"6.5\"|\"a| b\"|\"5\"|\"32\"\r\n"
                 "2|11|\"say \"\"hi\"\"\"|7|16\r\n"
                 "3|12|\"two\r\nlines\"|7|16\r\n"
                 "3|13|  \"padded\"  |7|16\r\n"
                 "3|14|\" kept \"|7|16\r\n"
                 "3|15|24\" screen|7|16\r\n"
                 "3|16|\"\"|7|16\r\n");
        for (char *c = text; *c; c++)
            if (*c == '|') *c = d;
        bl_error e;
        bl_dataset *ds = load_q(text, d, 0, &e);
        ck_assert_msg(ds != NULL, "%c: %s", k ? 't' : 'c', e.message);
        ck_assert_uint_eq(ds->n_rows, 8);
        ck_assert_str_eq(value_of(ds, "machine_type", 0), "m5.xlarge");
        char want[16];
        snprintf(want, sizeof want, "a%c b", d);
        ck_assert_str_eq(value_of(ds, "machine_type", 1), want);
        ck_assert_str_eq(value_of(ds, "data_size_MB", 1), "5");
        ck_assert_double_eq_tol(ds->runtime_s[1], 6.5, 1e-12);
        ck_assert_str_eq(value_of(ds, "machine_type", 2), "say \"hi\"");
        ck_assert_str_eq(value_of(ds, "machine_type", 3), "two\nlines");   /* CRLF inside quotes: LF */
        ck_assert_str_eq(value_of(ds, "machine_type", 4), "padded");
        ck_assert_str_eq(value_of(ds, "machine_type", 5), " kept ");
        ck_assert_str_eq(value_of(ds, "machine_type", 6), "24\" screen");
        ck_assert_str_eq(value_of(ds, "machine_type", 7), "");
        /* the rows' lines: the quoted line break makes row 3 span lines 5 and 6 */
        ck_assert_uint_eq(ds->header_lines[0], 1);
        ck_assert_uint_eq(ds->header_lines[1], 1);
        ck_assert_uint_eq(ds->src_lines[2 * 3], 5);
        ck_assert_uint_eq(ds->src_lines[2 * 3 + 1], 6);
        ck_assert_uint_eq(ds->src_lines[2 * 4], 7);
        ck_assert_uint_eq(ds->src_lines[2 * 4 + 1], 7);
        bl_dataset_free(ds);
    }
    /* The reader on its own: quoted names with the delimiter, a byte-order mark, field columns at quotes. */
    const char hdr[] = "\xEF\xBB\xBF\"size, MB\",\"a\"\"b\", c\n1,\"x\ny\",\"3\"\n";
    bl_reader *r;
    bl_error e;
    ck_assert_int_eq(bl_reader_open_mem(&r, "h.csv", hdr, strlen(hdr), ',', &e), BL_OK);
    ck_assert_uint_eq(bl_reader_ncols(r), 3);
    ck_assert_str_eq(bl_reader_colname(r, 0), "size, MB");
    ck_assert_str_eq(bl_reader_colname(r, 1), "a\"b");
    ck_assert_int_eq(bl_reader_find(r, "c"), 2);
    ck_assert_uint_eq(bl_reader_field_col(r, 1), 12);
    char **f;
    ck_assert_int_eq(bl_reader_next(r, &f, &e), BL_OK);
    ck_assert_str_eq(f[1], "x\ny");
    ck_assert_str_eq(f[2], "3");
    ck_assert_uint_eq(bl_reader_line(r), 2);
    ck_assert_uint_eq(bl_reader_last_line(r), 3);
    ck_assert_uint_eq(bl_reader_field_line(r, 1), 2);
    ck_assert_uint_eq(bl_reader_field_col(r, 1), 3);
    ck_assert_uint_eq(bl_reader_field_line(r, 2), 3);   /* "3" starts on the row's second line */
    ck_assert_uint_eq(bl_reader_field_col(r, 2), 4);
    char where[128];
    ck_assert_str_eq(bl_reader_where(r, 2, where, sizeof where), "h.csv:3:4: in the row from line 2, ");
    ck_assert_str_eq(bl_reader_where(r, 0, where, sizeof where), "h.csv:2:1: ");
    ck_assert_int_eq(bl_reader_next(r, &f, &e), BL_OK);
    ck_assert_ptr_null(f);
    bl_reader_free(r);
}
END_TEST

/* Line numbers stay right after a quoted field that spans lines: a problem names the line it is on,
 * and the row's first line when that is another. */
START_TEST(test_quoted_line_numbers) {
    bl_error e;
    /* a bad row after a row of three lines */
    ck_assert_ptr_null(load_q("x,t,m,n,mem\n2,10,\"one\ntwo\nthree\",5,16\n2,abc,c4,5,16\n", ',', 0, &e));
    ck_assert_msg(strncmp(e.message, "bad.csv:5:3: column 't' (runtime): 'abc' is not a positive", 56) == 0, "%s",
                  e.message);
    /* a bad field on the row's second line */
    ck_assert_ptr_null(load_q("x,t,m,n,mem\n2,10,\"two\nlines\",zz,16\n", ',', 0, &e));
    ck_assert_str_eq(e.message, "bad.csv:3:8: in the row from line 2, column 'n' (property data_size_MB): 'zz' is "
                                "not a number");
    /* a ragged row that spans lines */
    ck_assert_ptr_null(load_q("x,t,m,n,mem\n2,10,\"two\nlines\",5\n", ',', 0, &e));
    ck_assert_str_eq(e.message, "bad.csv:3:9: ragged row: 4 fields, the header has 5 (the row starts on line 2)");
    /* invalid UTF-8 on a quoted field's second line: that line */
    ck_assert_ptr_null(load_q("x,t,m,n,mem\n2,10,\"ok\nc\xff\",5,16\n", ',', 0, &e));
    ck_assert_str_eq(e.message, "bad.csv:3:2: invalid UTF-8 (byte 0xff)");
    /* a NUL inside quotes is no more allowed than outside */
    const char nul[] = "x,t,m,n,mem\n2,10,\"a\0b\",5,16\n";
    bl_dataset *ds = NULL;
    bl_schema *sc;
    ck_assert_int_eq(bl_schema_parse("t.schema", base_schema, strlen(base_schema), &sc, NULL), BL_OK);
    ck_assert_int_eq(bl_dataset_load_mem("bad.csv", nul, sizeof nul - 1, ',', sc, NULL, &ds, &e), BL_EFORMAT);
    ck_assert_str_eq(e.message, "bad.csv:2:8: NUL byte in text (byte 0x00)");
    bl_schema_free(sc);
    /* blank lines inside quotes are part of the field, and count as lines */
    ds = load_q("x,t,m,n,mem\n2,10,\"a\n\n\nb\",5,16\n\n2,x,c4,5,16\n", ',', 1, &e);
    ck_assert_ptr_nonnull(ds);
    ck_assert_str_eq(value_of(ds, "machine_type", 0), "a\n\n\nb");
    ck_assert_uint_eq(ds->n_skipped, 1);
    ck_assert_msg(strncmp(ds->skipped[0], "bad.csv:7:3: ", 13) == 0, "%s", ds->skipped[0]);
    bl_dataset_free(ds);
}
END_TEST

/* A quote that never closes is an error naming where it opened, and it fails the load even when
 * invalid rows are skipped (it swallowed the rest of the file); text after a closing quote is one
 * row's error, and reading goes on with the next row. */
START_TEST(test_quote_errors) {
    bl_error e;
    const char open_q[] = "x,t,m,n,mem\n2,10,c4,5,16\n2,11,\"m5.xlarge,5,16\n2,12,c4,5,16\n";
    for (int skip = 0; skip < 2; skip++) {
        ck_assert_ptr_null(load_q(open_q, ',', skip, &e));
        ck_assert_str_eq(e.message, "bad.csv:3:6: unclosed quote: the quoted field that starts here runs to the end of "
                                    "the file (a quote inside a quoted field is written as two: \"\")");
    }
    /* in the header too */
    ck_assert_ptr_null(load_q("x,\"t,m,n,mem\n2,10,c4,5,16\n", ',', 0, &e));
    ck_assert_msg(strncmp(e.message, "bad.csv:1:3: unclosed quote", 27) == 0, "%s", e.message);
    /* text after the closing quote: that row, which skip_invalid skips */
    const char after[] = "x,t,m,n,mem\n2,10,\"m5\"xl,5,16\n2,12,\"c4\" ,5,16\n";
    ck_assert_ptr_null(load_q(after, ',', 0, &e));
    ck_assert_str_eq(e.message, "bad.csv:2:10: text after the closing quote of a quoted field: a quoted field ends at "
                                "its closing quote, and a quote inside it is written as two (\"\")");
    bl_dataset *ds = load_q(after, ',', 1, &e);
    ck_assert_ptr_nonnull(ds);
    ck_assert_uint_eq(ds->n_rows, 1);
    ck_assert_uint_eq(ds->n_skipped, 1);
    ck_assert_str_eq(value_of(ds, "machine_type", 0), "c4");
    bl_dataset_free(ds);
    /* a quoted CSV read as tab-separated: the comma after the first quoted name says so */
    ck_assert_ptr_null(load_q("\"x\",\"t\",\"m\",\"n\",\"mem\"\n2,10,c4,5,16\n", '\t', 0, &e));
    ck_assert_str_eq(e.message, "bad.tsv:1:4: text after the closing quote of a quoted field: a quoted field ends at "
                                "its closing quote, and a quote inside it is written as two (\"\") (it is a comma: is "
                                "the file comma-separated?)");
    /* an unquoted header read with the wrong delimiter still gets its hint; commas inside quotes do not */
    ck_assert_ptr_null(load_q("\"x,t\"\n1\n", ',', 0, &e));
    ck_assert_str_eq(e.message, "bad.csv:1:1: missing column 'x' (named in t.schema:1:11)");
}
END_TEST

/* The delimiter of a file named neither .tsv nor .csv comes from its first line, outside quotes. */
START_TEST(test_quoted_delimiter_sniff) {
    static const struct { const char *head; char d; } cases[] = {
        { "\"a,b\"\t\"c\"\n", '\t' },      /* a comma inside quotes, a tab outside */
        { "\"a\tb\",\"c\"\n", ',' },        /* the other way round */
        { "\"a\"\"\t\"\"b\",c\n", ',' },    /* doubled quotes keep the tab inside */
        { "24\"\tb\n", '\t' },              /* a quote inside an unquoted field is no quote */
        { "\"a,b\"\n", 0 },                 /* neither outside quotes */
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char path[4200];
        snprintf(path, sizeof path, "%s/sniffq%zu.txt", bl_test_tmpdir(), k);
        FILE *f = fopen(path, "wb");
        ck_assert_ptr_nonnull(f);
        fputs(cases[k].head, f);
        fclose(f);
        char d = 0;
        bl_error e;
        bl_status st = bl_delim_for_path(path, 0, &d, &e);
        if (cases[k].d) {
            ck_assert_msg(st == BL_OK && d == cases[k].d, "case %zu: %d %d", k, st, d);
        } else {
            ck_assert_int_eq(st, BL_EINVAL);
            ck_assert_msg(strstr(e.message, "no tab or comma outside quotes"), "%s", e.message);
        }
    }
}
END_TEST

/* Quoting keeps the reader linear: 300 000 quoted header names, a quoted field of 200 000 lines and
 * an unclosed quote before 200 000 lines each take well under a second (quadratic work would not). */
START_TEST(test_quoted_wide_and_long) {
    const size_t wide = 300000;
    size_t cap = wide * 16 + 1024;
    char *t = malloc(cap);
    ck_assert_ptr_nonnull(t);
    size_t n = (size_t)snprintf(t, cap, "\"x\",\"t\",\"m\",\"n\",\"mem\"");
    for (size_t i = 0; i < wide; i++) n += (size_t)snprintf(t + n, cap - n, ",\"e,%zu\"", i);
    n += (size_t)snprintf(t + n, cap - n, "\n2,10,c4,5,16");
    for (size_t i = 0; i < wide; i++) n += (size_t)snprintf(t + n, cap - n, ",\"%zu\"", i % 7);
    n += (size_t)snprintf(t + n, cap - n, "\n");
    bl_reader *r;
    bl_error e;
    ck_assert_int_eq(bl_reader_open_mem(&r, "wide.csv", t, n, ',', &e), BL_OK);
    ck_assert_uint_eq(bl_reader_ncols(r), wide + 5);
    ck_assert_int_eq(bl_reader_find(r, "e,299999"), (long)wide + 4);
    char **f;
    ck_assert_int_eq(bl_reader_next(r, &f, &e), BL_OK);
    ck_assert_str_eq(f[wide + 4], "0");   /* (wide - 1) % 7 */
    bl_reader_free(r);
    free(t);
    /* one quoted field over 200 000 lines, then a row */
    const size_t lines = 200000;
    cap = lines * 4 + 256;
    t = malloc(cap);
    ck_assert_ptr_nonnull(t);
    n = (size_t)snprintf(t, cap, "x,t,m,n,mem\n2,10,\"");
    for (size_t i = 0; i < lines; i++) n += (size_t)snprintf(t + n, cap - n, "ab\n");
    size_t tail = n;
    n += (size_t)snprintf(t + n, cap - n, "\",5,16\n2,x,c4,5,16\n");
    bl_dataset *ds = load_q(t, ',', 1, &e);
    ck_assert_msg(ds != NULL, "%s", e.message);
    ck_assert_uint_eq(strlen(value_of(ds, "machine_type", 0)), lines * 3);
    ck_assert_uint_eq(ds->n_skipped, 1);
    char want[64];
    snprintf(want, sizeof want, "bad.csv:%zu:3: ", lines + 3);
    ck_assert_msg(strncmp(ds->skipped[0], want, strlen(want)) == 0, "%s", ds->skipped[0]);
    bl_dataset_free(ds);
    /* the same without its closing quote */
    memcpy(t + tail, "x,5,16\n", 8);
    ck_assert_ptr_null(load_q(t, ',', 0, &e));
    ck_assert_msg(strncmp(e.message, "bad.csv:2:6: unclosed quote", 27) == 0, "%s", e.message);
    free(t);
}
END_TEST

/* ---- every bad input ------------------------------------------------------------------------------- */

START_TEST(test_bad_files) {
    expect_data_error("", 0, "bad.tsv:1:1: ", "empty file");
    expect_data_error("\n\n", 2, "bad.tsv:1:1: ", "empty file");
    expect_data_error(base_header, strlen(base_header), "bad.tsv:2:1: ", "no data rows");
    const char dup[] = "x\tt\tm\tn\tx\n2\t3\tc\t4\t5\n";
    expect_data_error(dup, strlen(dup), "bad.tsv:1:9: ", "duplicate column 'x'");
    const char empty_name[] = "x\tt\t\tn\tmem\n2\t3\tc\t4\t5\n";
    expect_data_error(empty_name, strlen(empty_name), "bad.tsv:1:5: ", "empty column name");
    const char missing[] = "x\tt\tm\tn\n2\t3\tc\t4\n";
    expect_data_error(missing, strlen(missing), "bad.tsv:1:1: ", "missing column 'mem' (named in t.schema:6:16)");
    const char bad_hdr[] = "x\tt\tm\xC3\tn\tmem\n";
    expect_data_error(bad_hdr, strlen(bad_hdr), "bad.tsv:1:6: ", "invalid UTF-8");
}
END_TEST

START_TEST(test_bad_rows) {
    expect_row_error("2\t3\tc4\t5", "bad.tsv:3:9: ", "ragged row: 4 fields, the header has 5");
    expect_row_error("2\t3\tc4\t5\t6\t7", "bad.tsv:3:12: ", "ragged row: 6 fields, the header has 5");
    expect_row_error("2\t3\tc4\tabc\t6", "bad.tsv:3:8: ", "column 'n' (property data_size_MB): 'abc' is not a number");
    expect_row_error("2\t3\tc4\t\t6", "bad.tsv:3:8: ", "empty value");
    expect_row_error("2\t3\tc4\t-5\t6", "bad.tsv:3:8: ", "negative");
    expect_row_error("2\t3\tc4\t0.5\t6", "bad.tsv:3:8: ", "not an integer");
    expect_row_error("2\t3\tc4\t549755813888\t6", "bad.tsv:3:8: ", "too large");
    expect_row_error("2\t3\tc4\t5\tnan", "bad.tsv:3:10: ", "NaN or infinity");
    expect_row_error("0\t3\tc4\t5\t6", "bad.tsv:3:1: ", "column 'x' (scale-out): '0' must be greater than 0");
    expect_row_error("-2\t3\tc4\t5\t6", "bad.tsv:3:1: ", "greater than 0");
    expect_row_error("inf\t3\tc4\t5\t6", "bad.tsv:3:1: ", "NaN or infinity");
    /* Scale-outs are numbers of machines: whole, 1..1000000 (the bound of bellamy-predict --scale-out). */
    expect_row_error("2.5\t3\tc4\t5\t6", "bad.tsv:3:1: ",
                     "column 'x' (scale-out): '2.5' is not a number of machines (a whole number from 1 to 1000000)");
    expect_row_error("0.5\t3\tc4\t5\t6", "bad.tsv:3:1: ", "not a number of machines");
    expect_row_error("1e300\t3\tc4\t5\t6", "bad.tsv:3:1: ", "'1e300' is not a number of machines");
    expect_row_error("1000001\t3\tc4\t5\t6", "bad.tsv:3:1: ", "not a number of machines");
    expect_row_error("2\t0\tc4\t5\t6", "bad.tsv:3:3: ", "column 't' (runtime): '0' is not a positive number of seconds");
    expect_row_error("2\t-1.5\tc4\t5\t6", "bad.tsv:3:3: ", "'-1.5' is not a positive number of seconds");
    expect_row_error("2\tNaN\tc4\t5\t6", "bad.tsv:3:3: ", "'NaN' is not a positive number of seconds");
    expect_row_error("2\tabc\tc4\t5\t6", "bad.tsv:3:3: ", "'abc' is not a positive number of seconds");
    expect_row_error("2\t3\tc\xff" "4\t5\t6", "bad.tsv:3:6: ", "invalid UTF-8");
    expect_row_error("2\t3\t\xC3\xA9\xED\xA0\x80\t5\t6", "bad.tsv:3:6: ", "invalid UTF-8");  /* é, then a surrogate */
    expect_row_error("2\t3\t\xC0\xAF\t5\t6", "bad.tsv:3:5: ", "invalid UTF-8");               /* overlong '/' */
    /* Runtimes above 1e12 s (some 30 000 years, bellamy-predict's --target-runtime bound) are mistakes. */
    expect_row_error("2\t1e308\tc4\t5\t6", "bad.tsv:3:3: ",
                     "column 't' (runtime): '1e308' is more than 1e12 s (some 30 000 years)");
    expect_row_error("2\t1e200\tc4\t5\t6", "bad.tsv:3:3: ", "'1e200' is more than 1e12 s");
    expect_row_error("2\t1000000000001\tc4\t5\t6", "bad.tsv:3:3: ", "is more than 1e12 s");
    /* A NUL byte cannot be passed through a C string: give the length. */
    char nul[64];
    int n = snprintf(nul, sizeof nul, "%s2\t3\tc", base_header);
    memcpy(nul + n, "\0" "4\t5\t6\n", 7);
    expect_data_error(nul, (size_t)n + 7, "bad.tsv:2:6: ", "NUL byte");
    /* Line numbers count CRLF lines and blank lines as an editor does. */
    const char crlf[] = "x\tt\tm\tn\tmem\r\n2\t3\tc4\t5\t6\r\n\r\n2\t3\tc4\tx\t6\r\n";
    expect_data_error(crlf, strlen(crlf), "bad.tsv:4:8: ", "not a number");
    /* Column counts characters, not bytes. */
    expect_row_error("2\t3\t\xC3\xA9\xC3\xA9\tzz\t6", "bad.tsv:3:8: ", "not a number");
}
END_TEST

/* Issue 24 item 3: a blank, non-numeric or non-positive runtime (mostly a failed run) names the row and
 * both ways out: fix or remove the row, or skip such rows (skip_invalid; --skip-invalid in the
 * programs). Loaded with skip_invalid the row is skipped, and its note does not repeat the advice. */
START_TEST(test_invalid_runtime_says_the_fix) {
    const char *fix = "; fix or remove the row, or skip such rows with skip_invalid (--skip-invalid of bellamy-train "
                      "pretrain, finetune, evaluate and inspect, and of bellamy-predict)";
    static const struct { const char *t, *msg; } cases[] = {
        { "NaN", "bad.tsv:3:3: column 't' (runtime): 'NaN' is not a positive number of seconds" },
        { "0", "bad.tsv:3:3: column 't' (runtime): '0' is not a positive number of seconds" },
        { "-2", "bad.tsv:3:3: column 't' (runtime): '-2' is not a positive number of seconds" },
        { "", "bad.tsv:3:3: column 't' (runtime) is empty, not a positive number of seconds" },
        { "  ", "bad.tsv:3:5: column 't' (runtime) is empty, not a positive number of seconds" },
        { "inf", "bad.tsv:3:3: column 't' (runtime): 'inf' is not a positive number of seconds" },
    };
    bl_schema *sc;
    ck_assert_int_eq(bl_schema_parse("t.schema", base_schema, strlen(base_schema), &sc, NULL), BL_OK);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char tsv[256], want[512];
        snprintf(tsv, sizeof tsv, "%s2\t10\tc4\t5\t16\n2\t%s\tc4\t5\t16\n", base_header, cases[i].t);
        bl_dataset *ds = NULL;
        bl_error e;
        ck_assert_int_eq(bl_dataset_load_mem("bad.tsv", tsv, strlen(tsv), '\t', sc, NULL, &ds, &e), BL_EFORMAT);
        ck_assert_ptr_null(ds);
        snprintf(want, sizeof want, "%s%s", cases[i].msg, fix);
        ck_assert_str_eq(e.message, want);
        /* skipped when asked: the note says why, without the advice */
        ck_assert_int_eq(bl_dataset_load_mem_skip("bad.tsv", tsv, strlen(tsv), '\t', sc, NULL, 1, &ds, &e), BL_OK);
        ck_assert_uint_eq(ds->n_rows, 1);
        ck_assert_uint_eq(ds->n_skipped, 1);
        ck_assert_str_eq(ds->skipped[0], cases[i].msg);
        bl_dataset_free(ds);
    }
    bl_schema_free(sc);
    /* In milliseconds the message says so. */
    const char *ms_schema = "scale_out x\nruntime t ms\nproperty machine_type essential text column m\n";
    const char ms[] = "x\tt\tm\n2\t0\tc4\n";
    bl_dataset *ds = NULL;
    bl_error e;
    ck_assert_int_eq(load_str(ms, strlen(ms), ms_schema, &ds, &e), BL_EFORMAT);
    ck_assert_msg(strstr(e.message, "bad.tsv:2:3: column 't' (runtime): '0' is not a positive number of milliseconds; "
                                    "fix or remove the row"), "%s", e.message);
    /* bl_data_load_text honours skip_invalid, as the message promises */
    bl_data_opts o;
    bl_data_opts_init(&o);
    o.skip_invalid = 1;
    const char two[] = "x\tt\tm\n2\tNaN\tc4\n4\t7\tc4\n";
    bl_data *d = NULL;
    ck_assert_msg(bl_data_load_text("runs.tsv", two, strlen(two), "t.schema", ms_schema, strlen(ms_schema), &o, &d,
                                    &e) == BL_OK, "%s", e.message);
    bl_data_summary sum;
    bl_data_summarize(d, &sum);
    ck_assert_uint_eq(sum.rows, 1);
    ck_assert_uint_eq(sum.skipped, 1);
    ck_assert_str_eq(bl_data_skipped(d, 0), "runs.tsv:2:3: column 't' (runtime): 'NaN' is not a positive number of "
                                            "milliseconds");
    bl_data_free(d);
}
END_TEST

/* Issue 24 item 8: runtimes in minutes or hours (runtime COLUMN min|h) are read as seconds; the bound
 * and the messages follow the unit, and the data set says which column and unit it read. */
START_TEST(test_runtime_units) {
    static const struct { const char *unit, *words; double to_s; } units[] = {
        { "s", "seconds", 1 }, { "ms", "milliseconds", 1e-3 }, { "min", "minutes", 60 }, { "h", "hours", 3600 },
    };
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        char schema[256], msg[256];
        snprintf(schema, sizeof schema, "scale_out x\nruntime t %s\nproperty machine_type essential text column m\n",
                 units[i].unit);
        const char ok[] = "x\tt\tm\n2\t1.5\tc4\n4\t120\tc4\n";
        bl_dataset *ds = NULL;
        bl_error e;
        ck_assert_msg(load_str(ok, strlen(ok), schema, &ds, &e) == BL_OK, "%s: %s", units[i].unit, e.message);
        ck_assert_double_eq_tol(ds->runtime_s[0], 1.5 * units[i].to_s, 1e-12 * units[i].to_s);
        ck_assert_double_eq_tol(ds->runtime_s[1], 120 * units[i].to_s, 1e-12 * units[i].to_s);
        ck_assert_str_eq(ds->runtime_column, "t");
        ck_assert_str_eq(ds->runtime_unit, units[i].unit);
        /* a subset keeps them */
        size_t rows[1] = { 1 };
        bl_dataset *sub = NULL;
        ck_assert_int_eq(bl_dataset_subset(ds, rows, 1, &sub, NULL), BL_OK);
        ck_assert_str_eq(sub->runtime_column, "t");
        ck_assert_str_eq(sub->runtime_unit, units[i].unit);
        bl_dataset_free(sub);
        bl_dataset_free(ds);
        /* an invalid runtime's message names the unit in words */
        const char bad[] = "x\tt\tm\n2\t-1\tc4\n";
        ck_assert_int_eq(load_str(bad, strlen(bad), schema, &ds, &e), BL_EFORMAT);
        snprintf(msg, sizeof msg, "bad.tsv:2:3: column 't' (runtime): '-1' is not a positive number of %s; fix",
                 units[i].words);
        ck_assert_msg(strncmp(e.message, msg, strlen(msg)) == 0, "%s", e.message);
    }
    /* 1e12 s is the bound after the unit: 1.6e10 min and 2.7e8 h pass, 1.7e10 min and 2.8e8 h do not */
    const char *min_schema = "scale_out x\nruntime t min\nproperty machine_type essential text column m\n";
    const char *h_schema = "scale_out x\nruntime t h\nproperty machine_type essential text column m\n";
    const char fits[] = "x\tt\tm\n2\t1.6e10\tc4\n", fits_h[] = "x\tt\tm\n2\t2.7e8\tc4\n";
    bl_dataset *ds = NULL;
    bl_error e;
    ck_assert_msg(load_str(fits, strlen(fits), min_schema, &ds, &e) == BL_OK, "%s", e.message);
    bl_dataset_free(ds);
    ck_assert_msg(load_str(fits_h, strlen(fits_h), h_schema, &ds, &e) == BL_OK, "%s", e.message);
    bl_dataset_free(ds);
    const char big[] = "x\tt\tm\n2\t1.7e10\tc4\n", big_h[] = "x\tt\tm\n2\t2.8e8\tc4\n";
    ck_assert_int_eq(load_str(big, strlen(big), min_schema, &ds, &e), BL_EFORMAT);
    ck_assert_str_eq(e.message, "bad.tsv:2:3: column 't' (runtime): '1.7e10' min is more than 1e12 s (some 30 000 years)");
    ck_assert_int_eq(load_str(big_h, strlen(big_h), h_schema, &ds, &e), BL_EFORMAT);
    ck_assert_str_eq(e.message, "bad.tsv:2:3: column 't' (runtime): '2.8e8' h is more than 1e12 s (some 30 000 years)");
    /* an unknown unit lists every accepted one; a missing one too */
    expect_schema_error("scale_out x\nruntime t hours\n", "t.schema:2:11: ",
                        "runtime unit must be s, ms, min or h (seconds, milliseconds, minutes, hours), found 'hours'");
    expect_schema_error("scale_out x\nruntime t\n", "t.schema:2:10: ",
                        "runtime takes a column name and a unit: s, ms, min or h (seconds, milliseconds, minutes, hours)");
    /* the public face: bl_data_runtime_column, and inspect's line */
    const char text[] = "x\tt\tm\n2\t1.5\tc4\n4\t2\tc4\n";
    bl_data *d = NULL;
    ck_assert_msg(bl_data_load_text("d.tsv", text, strlen(text), "m.schema", min_schema, strlen(min_schema), NULL, &d,
                                    &e) == BL_OK, "%s", e.message);
    const char *col = NULL, *unit = NULL;
    ck_assert_int_eq(bl_data_runtime_column(d, &col, &unit), BL_OK);
    ck_assert_str_eq(col, "t");
    ck_assert_str_eq(unit, "min");
    ck_assert_int_eq(bl_data_runtime_column(d, NULL, NULL), BL_OK);
    ck_assert_int_eq(bl_data_runtime_column(NULL, &col, &unit), BL_EINVAL);
    bl_data_free(d);
}
END_TEST

/* The runtime bound applies after the unit: 1e12 s is the largest runtime, in s or in ms. */
START_TEST(test_runtime_bound) {
    char tsv[256];
    bl_dataset *ds;
    bl_error e;
    snprintf(tsv, sizeof tsv, "%s2\t1e12\tc4\t5\t16\n2\t999999999999.5\tc4\t5\t16\n", base_header);
    ck_assert_msg(load_str(tsv, strlen(tsv), base_schema, &ds, &e) == BL_OK, "%s", e.message);
    ck_assert_double_eq(ds->runtime_s[0], BL_RUNTIME_MAX_S);
    bl_dataset_free(ds);
    const char *ms_schema = "scale_out x\nruntime t ms\nproperty machine_type essential text column m\n";
    const char ok[] = "x\tt\tm\n2\t1e15\tc4\n2\t1e14\tc4\n";
    ck_assert_msg(load_str(ok, strlen(ok), ms_schema, &ds, &e) == BL_OK, "%s", e.message);
    ck_assert_double_eq_tol(ds->runtime_s[0], 1e12, 1e-3);
    ck_assert_double_eq_tol(ds->runtime_s[1], 1e11, 1e-4);
    bl_dataset_free(ds);
    /* 1.5e15 ms = 1.5e12 s is too much; 1.5e12 ms is fine as ms, though it would not be as s. */
    const char big[] = "x\tt\tm\n2\t1.5e12\tc4\n2\t1.5e15\tc4\n";
    ck_assert_int_eq(load_str(big, strlen(big), ms_schema, &ds, &e), BL_EFORMAT);
    ck_assert_ptr_null(ds);
    ck_assert_str_eq(e.message, "bad.tsv:3:3: column 't' (runtime): '1.5e15' ms is more than 1e12 s "
                                "(some 30 000 years)");
    /* Below a millisecond: a unit mistake, named as one (any unit). */
    const char sub_ms[] = "x\tt\tm\n2\t0.5\tc4\n";
    ck_assert_int_eq(load_str(sub_ms, strlen(sub_ms), ms_schema, &ds, &e), BL_EFORMAT);
    ck_assert_str_eq(e.message, "bad.tsv:2:3: column 't' (runtime): '0.5' ms is 0.0005 s, less than a millisecond: "
                                "no distributed job is that fast; is the column in another unit than the schema's "
                                "runtime line says (milliseconds)?");
    expect_row_error("2\t1e-300\tc4\t5\t6", "bad.tsv:3:3: ", "'1e-300' is 1e-300 s, less than a millisecond");
    /* A subnormal count of milliseconds is 0 s after conversion: not a positive runtime. */
    const char tiny[] = "x\tt\tm\n2\t1e-322\tc4\n";
    ck_assert_int_eq(load_str(tiny, strlen(tiny), ms_schema, &ds, &e), BL_EFORMAT);
    ck_assert_str_eq(e.message, "bad.tsv:2:3: column 't' (runtime): '1e-322' ms is 0 s after conversion: "
                                "must be greater than 0");
}
END_TEST

/* A file read with the wrong delimiter, or with CR-only line ends, first shows as a missing column:
 * the message then says what the header looks like. */
START_TEST(test_header_hints) {
    bl_schema *sc;
    bl_dataset *ds = NULL;
    bl_error e;
    ck_assert_int_eq(bl_schema_parse("t.schema", base_schema, strlen(base_schema), &sc, NULL), BL_OK);
    /* Tab-separated, read as comma-separated: one column holding tabs. */
    const char tsv[] = "x\tt\tm\tn\tmem\n2\t10\tc4\t5\t16\n";
    ck_assert_int_eq(bl_dataset_load_mem("a.csv", tsv, strlen(tsv), ',', sc, NULL, &ds, &e), BL_EFORMAT);
    ck_assert_ptr_null(ds);
    ck_assert_str_eq(e.message, "a.csv:1:1: missing column 'x' (named in t.schema:1:11); the header has 1 column "
                                "and it contains tabs: is the file tab-separated?");
    /* Comma-separated, read as tab-separated. */
    const char csv[] = "x,t,m,n,mem\n2,10,c4,5,16\n";
    ck_assert_int_eq(bl_dataset_load_mem("a.tsv", csv, strlen(csv), '\t', sc, NULL, &ds, &e), BL_EFORMAT);
    ck_assert_str_eq(e.message, "a.tsv:1:1: missing column 'x' (named in t.schema:1:11); the header has 1 column "
                                "and it contains commas: is the file comma-separated?");
    /* Semicolon-separated: neither delimiter fits. */
    const char ssv[] = "x;t;m;n;mem\n2;10;c4;5;16\n";
    ck_assert_int_eq(bl_dataset_load_mem("a.csv", ssv, strlen(ssv), ',', sc, NULL, &ds, &e), BL_EFORMAT);
    ck_assert_msg(strstr(e.message, "; the header has 1 column and it contains semicolons: is the file "
                                    "semicolon-separated? (only tab and comma are supported)") != NULL, "%s", e.message);
    /* CR-only line ends: the whole file is one line, so the last header name runs into the first row. */
    const char mac[] = "x\tt\tm\tn\tmem\r2\t10\tc4\t5\t16\r";
    ck_assert_int_eq(bl_dataset_load_mem("mac.tsv", mac, strlen(mac), '\t', sc, NULL, &ds, &e), BL_EFORMAT);
    ck_assert_str_eq(e.message, "mac.tsv:1:1: missing column 'mem' (named in t.schema:6:16); the header contains "
                                "carriage returns without line feeds (the first at line 1, column 12): old Mac "
                                "line ends? Lines must end in LF or CRLF");
    /* With repeated values the one long line first fails as a duplicate column: the hint comes too. */
    const char mac2[] = "x\tt\tm\tn\tmem\r2\t10\tc4\t5\t16\r2\t11\tc4\t5\t16\r";
    ck_assert_int_eq(bl_dataset_load_mem("mac.tsv", mac2, strlen(mac2), '\t', sc, NULL, &ds, &e), BL_EFORMAT);
    ck_assert_str_eq(e.message, "mac.tsv:1:31: duplicate column 'c4' (also column 7); the header contains "
                                "carriage returns without line feeds (the first at line 1, column 12): old Mac "
                                "line ends? Lines must end in LF or CRLF");
    /* Both at once: a CR-only tab file read as comma-separated. */
    ck_assert_int_eq(bl_dataset_load_mem("mac.csv", mac, strlen(mac), ',', sc, NULL, &ds, &e), BL_EFORMAT);
    ck_assert_msg(strstr(e.message, "missing column 'x' (named in t.schema:1:11); the header has 1 column and it "
                                    "contains tabs: is the file tab-separated?; the header contains carriage "
                                    "returns") != NULL, "%s", e.message);
    /* No hint when the header looks sound (CRLF line ends are fine), or has several columns. */
    const char crlf[] = "x\tt\tm\tn\r\n2\t10\tc4\t5\r\n";
    ck_assert_int_eq(bl_dataset_load_mem("b.tsv", crlf, strlen(crlf), '\t', sc, NULL, &ds, &e), BL_EFORMAT);
    ck_assert_str_eq(e.message, "b.tsv:1:1: missing column 'mem' (named in t.schema:6:16)");
    const char two[] = "x,t\tm\n2,10\tc4\n";
    ck_assert_int_eq(bl_dataset_load_mem("b.tsv", two, strlen(two), '\t', sc, NULL, &ds, &e), BL_EFORMAT);
    ck_assert_str_eq(e.message, "b.tsv:1:1: missing column 'x' (named in t.schema:1:11)");
    bl_schema_free(sc);
    /* The hint itself, cut short in a small buffer but always terminated. */
    bl_reader *r;
    ck_assert_int_eq(bl_reader_open_mem(&r, "a.csv", tsv, strlen(tsv), ',', NULL), BL_OK);
    char small[16];
    ck_assert_uint_eq(strlen(bl_reader_header_hint(r, small, sizeof small)), sizeof small - 1);
    ck_assert_str_eq(bl_reader_header_hint(r, small, 1), "");
    bl_reader_free(r);
}
END_TEST

START_TEST(test_bad_schemas) {
    expect_schema_error("scale_out x\nruntime t s\nproperty foo essential text column m\n", "t.schema:3:10: ",
                        "unknown property 'foo'");
    expect_schema_error("scale_out x\nruntme t s\n", "t.schema:2:1: ", "unknown directive");
    expect_schema_error("scale_out x\nruntime t minutes\n", "t.schema:2:11: ",
                        "runtime unit must be s, ms, min or h (seconds, milliseconds, minutes, hours), found 'minutes'");
    expect_schema_error("scale_out x\nruntime t\n", "t.schema:2:10: ", "unit");
    expect_schema_error("scale_out x\nruntime t s\nproperty environment essential text const \"abc\n",
                        "t.schema:3:43: ", "unterminated quote");
    expect_schema_error("runtime t s\nproperty machine_type essential text column m\n", "t.schema:", "no scale_out");
    expect_schema_error("scale_out x\nproperty machine_type essential text column m\n", "t.schema:", "no runtime");
    expect_schema_error("scale_out x\nruntime t s\nproperty job_type optional text const a\n", "t.schema:",
                        "no essential property");
    expect_schema_error("scale_out x\nruntime t s\nproperty slots essential numbr column s\n", "t.schema:3:26: ",
                        "expected number or text");
    expect_schema_error("scale_out x\nruntime t s\nproperty slots maybe number column s\n", "t.schema:3:16: ",
                        "essential or optional");
    expect_schema_error("scale_out x\nruntime t s\nproperty slots essential text per_machine 4\n", "t.schema:3:31: ",
                        "per_machine needs a number");
    expect_schema_error("scale_out x\nruntime t s\nproperty slots essential number const 4.5\n", "t.schema:3:39: ",
                        "not an integer");
    expect_schema_error("scale_out x\nruntime t s\nproperty slots essential number const abc\n", "t.schema:3:39: ",
                        "not a number");
    expect_schema_error("scale_out x\nruntime t s\nproperty slots essential number colum s\n", "t.schema:3:33: ",
                        "unknown source");
    expect_schema_error("scale_out x\nruntime t s\nproperty slots essential number column\n", "t.schema:3:",
                        "no column named");
    expect_schema_error("scale_out x\nruntime t s\nproperty slots essential number column a b\n", "t.schema:3:42: ",
                        "extra token");
    expect_schema_error("scale_out x\nruntime t s\nproperty job_args essential text template \"<k 1\"\n",
                        "t.schema:3:43: ", "without a closing");
    expect_schema_error("scale_out x\nruntime t s\nproperty slots essential number column s\n"
                        "property slots optional number column s\n", "t.schema:4:10: ", "declared twice");
    expect_schema_error("scale_out x\nscale_out y\n", "t.schema:2:1: ", "scale_out given twice");
    expect_schema_error("scale_out x\nbellamy-schema 1\n", "t.schema:2:1: ", "first line");
    expect_schema_error("scale_out x\n# caf\xC3\n", "t.schema:2:6: ", "invalid UTF-8");
    bl_schema *sc;
    bl_error e;
    ck_assert_int_eq(bl_schema_parse("t.schema", "bellamy-schema 2\n", 17, &sc, &e), BL_EVERSION);
    ck_assert_int_eq(bl_schema_load("/nonexistent.schema", &sc, &e), BL_EIO);
    /* A missing column is reported against the data file, naming the schema's line. */
    bl_dataset *ds;
    char tsv[128];
    snprintf(tsv, sizeof tsv, "%s2\t3\tc\t4\t5\n", base_header);
    ck_assert_int_eq(load_str(tsv, strlen(tsv), "scale_out x\nruntime t s\n"
                              "property machine_type essential text join m zz\n", &ds, &e), BL_EFORMAT);
    ck_assert_str_eq(e.message, "bad.tsv:1:1: missing column 'zz' (named in t.schema:3:45)");
}
END_TEST

START_TEST(test_schema_syntax) {
    /* Comments, quotes with escapes, tabs, CRLF, x_ extensions, templates and per_machine. */
    const char *schema =
        "# a comment\r\n"
        "bellamy-schema 1   # version\r\n"
        "scale_out\tx\r\n"
        "runtime t ms\r\n"
        "property environment essential text const \"say \\\"hi\\\" \\\\ # not a comment\"\r\n"
        "property x_custom essential text template \"<m>-<n> v<m>\"\r\n"
        "property slots optional number per_machine 8\r\n"
        "property data_size_MB optional number const 7\r\n";
    bl_dataset *ds;
    bl_error e;
    const char tsv[] = "x\tt\tm\tn\n3\t1500\tab\tcd\n";
    ck_assert_int_eq(load_str(tsv, strlen(tsv), schema, &ds, &e), BL_OK);
    ck_assert_str_eq(value_of(ds, "environment", 0), "say \"hi\" \\ # not a comment");
    ck_assert_str_eq(value_of(ds, "x_custom", 0), "ab-cd vab");
    ck_assert_str_eq(value_of(ds, "slots", 0), "24");
    ck_assert_str_eq(value_of(ds, "data_size_MB", 0), "7");
    ck_assert_double_eq_tol(ds->runtime_s[0], 1.5, 1e-12);
    ck_assert(ds->props[2].cluster_total);
    bl_dataset_free(ds);
    /* A fractional scale-out is no number of machines (so per_machine always gives a whole number). */
    const char frac[] = "x\tt\tm\tn\n2\t1500\tab\tcd\n2.5\t1\tab\tcd\n";
    ck_assert_int_eq(load_str(frac, strlen(frac), schema, &ds, &e), BL_EFORMAT);
    ck_assert_msg(strncmp(e.message, "bad.tsv:3:1: ", 13) == 0, "%s", e.message);
    ck_assert_ptr_nonnull(strstr(e.message, "not a number of machines"));
    /* per_machine × scale-out beyond the binarizer's 2^39 is an error at the row. */
    const char *big_schema = "scale_out x\nruntime t s\nproperty machine_type essential text column m\n"
                             "property memory optional number per_machine 300000000000\n";
    const char big[] = "x\tt\tm\n1\t5\tab\n2\t5\tab\n";
    ck_assert_int_eq(load_str(big, strlen(big), big_schema, &ds, &e), BL_EFORMAT);
    ck_assert_msg(strncmp(e.message, "bad.tsv:3:1: ", 13) == 0, "%s", e.message);
    ck_assert_ptr_nonnull(strstr(e.message, "property 'memory'"));
    /* a per_machine value past the bits on its own: named once at the schema line, not at a row */
    const char *huge_schema = "scale_out x\nruntime t s\nproperty machine_type essential text column m\n"
                              "property memory optional number per_machine 100000000000000\n";
    ck_assert_int_eq(load_str(big, strlen(big), huge_schema, &ds, &e), BL_ERANGE);
    ck_assert_str_eq(e.message, "t.schema:4:10: per_machine value 100000000000000 is too large: the binarizer keeps 39 "
                                "bits, so values must be below 2^39 (times the scale-out)");
}
END_TEST

START_TEST(test_scale_out_whole_numbers) {
    /* The bounds themselves and whole numbers written as decimals load. */
    char tsv[256];
    snprintf(tsv, sizeof tsv, "%s1\t10\tc4\t5\t16\n1000000\t10\tc4\t5\t16\n2.0\t10\tc4\t5\t16\n1e3\t1\tc4\t5\t16\n",
             base_header);
    bl_dataset *ds;
    bl_error e;
    ck_assert_msg(load_str(tsv, strlen(tsv), base_schema, &ds, &e) == BL_OK, "%s", e.message);
    ck_assert_double_eq(ds->scale_out[1], 1000000);
    ck_assert_double_eq(ds->scale_out[2], 2);
    ck_assert_double_eq(ds->scale_out[3], 1000);
    bl_dataset_free(ds);
    /* The synthetic generator's scale-outs obey the rule: its largest allowed one loads. */
    bl_synth_config c;
    bl_synth_config_default(&c);
    c.n_contexts = 1;
    c.n_scale_outs = 2;
    c.scale_outs[0] = 1;
    c.scale_outs[1] = 100000;
    bl_synth_corpus *corp;
    ck_assert_int_eq(bl_synth_generate(&c, &corp, &e), BL_OK);
    ck_assert_msg(bl_synth_dataset(corp, NULL, &ds, &e) == BL_OK, "%s", e.message);
    ck_assert_double_eq(ds->scale_out[ds->n_rows - 1], 100000);
    bl_dataset_free(ds);
    bl_synth_free(corp);
}
END_TEST

/* Shifted synthetic environments: each shape's curve follows its formula (synth.h), the runtime scale
 * multiplies it, the environment appears in the corpus's own schema and data set, bad settings are
 * errors naming the field. */
START_TEST(test_synth_shifted_environments) {
    bl_synth_config c;
    bl_synth_config_default(&c);
    c.n_contexts = 60;
    c.noise = 0;
    c.n_scale_outs = 4;
    const double xs[4] = {1, 4, 16, 60};
    memcpy(c.scale_outs, xs, sizeof xs);
    bl_error e;
    bl_synth_corpus *base, *sh;
    ck_assert_int_eq(bl_synth_generate(&c, &base, &e), BL_OK);
    for (int shape = 0; shape <= BL_SYNTH_PLATEAU; shape++) {
        bl_synth_config d = c;
        d.shape = shape;
        d.time_scale = 7.0;
        snprintf(d.environment, sizeof d.environment, "lab %d", shape);
        ck_assert_int_eq(bl_synth_generate(&d, &sh, &e), BL_OK);
        int cliffs = 0;
        for (size_t r = 0; r < sh->n_rows; r++) {
            const bl_synth_context *cx = &sh->contexts[sh->context[r]];
            const double x = sh->scale_out[r], gb = (double)cx->data_size_mb / 1000.0, *t = cx->theta;
            const double ernest = bl_synth_truth(&base->contexts[base->context[r]], x);
            double want = ernest;
            if (shape == BL_SYNTH_CLIFF && x * (double)cx->memory_per_machine < 2.0 * (double)cx->data_size_mb)
                want *= 2.5, cliffs++;
            if (shape == BL_SYNTH_SUPERLINEAR) want = t[0] + t[1] * gb / x + t[2] * log(x) + t[1] * gb * pow(x, 1.5) / 400;
            if (shape == BL_SYNTH_PLATEAU) want = 4 * t[0] + t[1] * gb / fmin(x, 16);
            ck_assert_double_eq_tol(sh->truth_s[r], 7.0 * want, 1e-9 * want);
            ck_assert_double_eq_tol(sh->runtime_s[r], 7.0 * want, 1e-3);
        }
        if (shape == BL_SYNTH_CLIFF) ck_assert_int_gt(cliffs, 0);
        char env[64];
        snprintf(env, sizeof env, "const \"lab %d\"", shape);
        ck_assert_ptr_nonnull(strstr(sh->schema, env));
        bl_dataset *ds;
        ck_assert_msg(bl_synth_dataset(sh, NULL, &ds, &e) == BL_OK, "%s", e.message);
        const long ip = bl_dataset_find_prop(ds, "environment");
        ck_assert_int_ge(ip, 0);
        ck_assert_str_eq(ds->props[ip].values[0], d.environment);
        bl_dataset_free(ds);
        bl_synth_free(sh);
    }
    bl_synth_free(base);
    ck_assert_str_eq(bl_synth_schema_text() + strlen(bl_synth_schema_text()) - strlen("cluster_totals slots memory\n"),
                     "cluster_totals slots memory\n");
    ck_assert_int_eq(bl_synth_shape_from_name("plateau"), BL_SYNTH_PLATEAU);
    ck_assert_int_eq(bl_synth_shape_from_name("round"), -1);
    /* runtimes below a second keep six significant digits in the file (0.000 was refused by training) */
    {   /* below 1e-4 the runtimes would fall under the reader's millisecond: refused up front */
        bl_synth_config tiny = c;
        tiny.time_scale = 1e-300;
        ck_assert_int_eq(bl_synth_generate(&tiny, &sh, &e), BL_EINVAL);
        ck_assert_msg(strstr(e.message, "below a millisecond"), "%s", e.message);
    }
    for (int k = 0; k < 2; k++) {
        bl_synth_config tiny = c;
        tiny.time_scale = k ? 1e-4 : 3e-3;
        tiny.noise = 0.03;
        ck_assert_int_eq(bl_synth_generate(&tiny, &sh, &e), BL_OK);
        bl_dataset *ds;
        ck_assert_msg(bl_synth_dataset(sh, NULL, &ds, &e) == BL_OK, "%s", e.message);
        ck_assert_uint_eq(ds->n_rows, sh->n_rows);
        for (size_t r = 0; r < ds->n_rows; r++)
            ck_assert_double_eq_tol(ds->runtime_s[r], sh->runtime_s[r], 1e-5 * sh->runtime_s[r]);
        bl_dataset_free(ds);
        bl_synth_free(sh);
    }
    bl_synth_config bad = c;
    bad.time_scale = 0;
    ck_assert_int_eq(bl_synth_generate(&bad, &sh, &e), BL_EINVAL);
    ck_assert_ptr_nonnull(strstr(e.message, "time scale"));
    bad = c;
    bad.shape = 9;
    ck_assert_int_eq(bl_synth_generate(&bad, &sh, &e), BL_EINVAL);
    bad = c;
    snprintf(bad.environment, sizeof bad.environment, "a \"b\"");
    ck_assert_int_eq(bl_synth_generate(&bad, &sh, &e), BL_EINVAL);
    ck_assert_ptr_nonnull(strstr(e.message, "environment"));
    bad.environment[0] = '\0';
    ck_assert_int_eq(bl_synth_generate(&bad, &sh, &e), BL_EINVAL);
}
END_TEST

START_TEST(test_schema_bom) {
    /* A byte-order mark before the first directive is skipped, as in data files; columns in messages
     * do not count it. */
    char buf[512];
    snprintf(buf, sizeof buf, "\xEF\xBB\xBF%s", base_schema);
    bl_schema *sc;
    bl_error e;
    ck_assert_msg(bl_schema_parse("t.schema", buf, strlen(buf), &sc, &e) == BL_OK, "%s", e.message);
    ck_assert_str_eq(sc->scale_out.name, "x");
    ck_assert_uint_eq(sc->scale_out.col, 11);
    ck_assert_uint_eq(sc->n_props, 3);
    bl_schema_free(sc);
    expect_schema_error("\xEF\xBB\xBF" "bellamy-schema 1\nscale_out x\nruntme t s\n", "t.schema:3:1: ",
                        "unknown directive");
    expect_schema_error("\xEF\xBB\xBFscale_out x y\n", "t.schema:1:13: ", "one column name");
    /* Only at the very start: elsewhere it is an ordinary (unknown) token. */
    expect_schema_error("scale_out x\n\xEF\xBB\xBFruntime t s\n", "t.schema:2:1: ", "unknown directive");
    /* From a file, as bellamy-train reads it. */
    char path[4096];
    snprintf(path, sizeof path, "%s/bom.schema", bl_test_tmpdir());
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    fputs(buf, f);
    fclose(f);
    ck_assert_msg(bl_schema_load(path, &sc, &e) == BL_OK, "%s", e.message);
    bl_schema_free(sc);
    /* A folder given as the schema: the reason, not just "read error". */
    ck_assert_int_eq(bl_schema_load(bl_test_tmpdir(), &sc, &e), BL_EIO);
    ck_assert_ptr_nonnull(strstr(e.message, bl_test_tmpdir()));
    ck_assert_msg(strstr(e.message, "is a folder") != NULL, "%s", e.message);
}
END_TEST

START_TEST(test_schema_column_roles) {
    const char *head = "scale_out x\nruntime t s\nproperty machine_type essential text column m\n";
    char sch[1024];
    /* cluster_totals: only number properties may read such a column */
    snprintf(sch, sizeof sch, "%sproperty memory optional number column mem\ncluster_totals mem m\n", head);
    expect_schema_error(sch, "t.schema:5:20: ",
                        "cluster_totals: column 'm' is read by the text property 'machine_type' (line 3)");
    expect_schema_error("scale_out x\nruntime t s\ncluster_totals m\nproperty machine_type essential text join n m\n",
                        "t.schema:3:16: ", "text property 'machine_type' (line 4)");
    /* ... and some property must read it; and it is listed once */
    snprintf(sch, sizeof sch, "%scluster_totals mem\n", head);
    expect_schema_error(sch, "t.schema:4:16: ", "no property reads column 'mem'");
    snprintf(sch, sizeof sch, "%sproperty memory optional number column mem\ncluster_totals mem\ncluster_totals mem\n",
             head);
    expect_schema_error(sch, "t.schema:6:16: ", "column 'mem' is listed twice (first on line 5)");
    /* scale-out and runtime: two different columns, in either order */
    expect_schema_error("scale_out x\nruntime x s\nproperty machine_type essential text column m\n", "t.schema:2:9: ",
                        "runtime reads column 'x', which scale_out already reads (line 1)");
    expect_schema_error("runtime x s\nscale_out x\nproperty machine_type essential text column m\n",
                        "t.schema:2:11: ", "scale_out reads column 'x', which runtime already reads (line 1)");
    /* no property reads the scale-out or the runtime column, whatever the source */
    snprintf(sch, sizeof sch, "%sproperty x_nodes optional number column x\n", head);
    expect_schema_error(sch, "t.schema:4:41: ", "property 'x_nodes' reads the scale-out column 'x' (scale_out, line 1)");
    snprintf(sch, sizeof sch, "%sproperty job_args essential text template \"<m> <t>\"\n", head);
    expect_schema_error(sch, "t.schema:4:43: ", "property 'job_args' reads the runtime column 't' (runtime, line 2)");
    snprintf(sch, sizeof sch, "%sproperty data_size_MB essential number column x\ncluster_totals x\n", head);
    expect_schema_error(sch, "t.schema:4:47: ", "reads the scale-out column 'x'");
    /* the shipped form still loads */
    bl_dataset *ds;
    bl_error e;
    char tsv[128];
    snprintf(tsv, sizeof tsv, "%s2\t3\tc\t4\t5\n", base_header);
    ck_assert_msg(load_str(tsv, strlen(tsv), base_schema, &ds, &e) == BL_OK, "%s", e.message);
    bl_dataset_free(ds);
}
END_TEST

START_TEST(test_schema_check_props) {
    bl_schema *sc;
    bl_error e;
    ck_assert_int_eq(bl_schema_parse("runs.schema", base_schema, strlen(base_schema), &sc, &e), BL_OK);
    bl_prop_spec want[3] = { { "machine_type", 1, BL_PROP_TEXT, 0 }, { "data_size_MB", 1, BL_PROP_NUMBER, 0 },
                             { "memory", 0, BL_PROP_NUMBER, 1 } };
    ck_assert_int_eq(bl_schema_check_props(sc, want, 3, "model 'm'", &e), BL_OK);
    want[2].cluster_total = -1; /* unknown: not checked */
    ck_assert_int_eq(bl_schema_check_props(sc, want, 3, "model 'm'", &e), BL_OK);
    /* the schema has a property the model lacks */
    ck_assert_int_eq(bl_schema_check_props(sc, want, 2, "model 'm'", &e), BL_EFORMAT);
    ck_assert_str_eq(e.message, "runs.schema:5:10: property 'memory' is not a property of model 'm' (it has: "
                                "machine_type, data_size_MB); the runs must be described by the properties it was "
                                "trained with");
    /* essential vs optional, number vs text, cluster total or not */
    want[0].essential = 0;
    ck_assert_int_eq(bl_schema_check_props(sc, want, 3, "model 'm'", &e), BL_EFORMAT);
    ck_assert_str_eq(e.message, "runs.schema:3:10: property 'machine_type' is essential here but optional in model 'm'");
    want[0].essential = 1;
    want[1].kind = BL_PROP_TEXT;
    ck_assert_int_eq(bl_schema_check_props(sc, want, 3, "model 'm'", &e), BL_EFORMAT);
    ck_assert_str_eq(e.message, "runs.schema:4:10: property 'data_size_MB' is a number here but text in model 'm'");
    want[1].kind = BL_PROP_NUMBER;
    want[2].cluster_total = 0;
    ck_assert_int_eq(bl_schema_check_props(sc, want, 3, "model 'm'", &e), BL_EFORMAT);
    ck_assert_ptr_nonnull(strstr(e.message, "runs.schema:5:10: property 'memory' is a cluster total here but not one"));
    want[2].cluster_total = 1;
    /* the model has a property the schema lacks */
    bl_prop_spec more[4] = { want[0], want[1], want[2], { "job_type", 0, BL_PROP_TEXT, 0 } };
    ck_assert_int_eq(bl_schema_check_props(sc, more, 4, "model 'm'", &e), BL_EFORMAT);
    ck_assert_str_eq(e.message, "runs.schema: no property 'job_type': model 'm' has it (optional text), so the runs must "
                                "give it too");
    bl_schema_free(sc);
}
END_TEST

START_TEST(test_context_spread_and_diff) {
    const char tsv[] = "x\tt\tm\tn\tmem\n2\t10\tc4\t5\t16\n4\t6\tc4\t5\t32\n2\t10\tr4\t5\t16\n2\t9\tm4\t7\t16\n";
    bl_dataset *ds;
    bl_error e;
    ck_assert_int_eq(load_str(tsv, strlen(tsv), base_schema, &ds, &e), BL_OK);
    ck_assert_uint_eq(ds->n_contexts, 3);
    char buf[512];
    ck_assert_uint_eq(bl_dataset_context_spread(ds, buf, sizeof buf), 2);
    ck_assert_str_eq(buf, "machine_type: 3 values ('c4', 'r4', 'm4'); data_size_MB: 2 values ('5', '7')");
    char small[24];
    ck_assert_uint_eq(bl_dataset_context_spread(ds, small, sizeof small), 2);  /* cut short, still terminated */
    ck_assert_uint_eq(strlen(small), sizeof small - 1);
    ck_assert_str_eq(small + sizeof small - 4, "...");
    /* context 0 against given values: numbers by value, cluster totals (given per machine) skipped */
    bl_prop_value same[] = { { "machine_type", "c4" }, { "data_size_MB", "5.0" }, { "memory", "8" } };
    ck_assert_uint_eq(bl_dataset_context_diff(ds, 0, same, 3, buf, sizeof buf), 0);
    ck_assert_str_eq(buf, "");
    bl_prop_value other[] = { { "machine_type", "c5" }, { "data_size_MB", "6" } };
    ck_assert_uint_eq(bl_dataset_context_diff(ds, 0, other, 2, buf, sizeof buf), 2);
    ck_assert_str_eq(buf, "machine_type: 'c4' in the data, 'c5' given; data_size_MB: '5' in the data, '6' given");
    ck_assert_uint_eq(bl_dataset_context_diff(ds, 2, same, 3, buf, sizeof buf), 2);
    bl_dataset_free(ds);
    /* one context: nothing differs */
    const char one[] = "x\tt\tm\tn\tmem\n2\t10\tc4\t5\t16\n4\t6\tc4\t5\t32\n";
    ck_assert_int_eq(load_str(one, strlen(one), base_schema, &ds, &e), BL_OK);
    ck_assert_uint_eq(bl_dataset_context_spread(ds, buf, sizeof buf), 0);
    ck_assert_str_eq(buf, "");
    bl_dataset_free(ds);
}
END_TEST

/* ---- shipped schemas ---------------------------------------------------------------------------------- */

typedef struct alg_case {
    const char *alg, *header, *row;
    const char *job_args, *data_characteristics, *machine, *size, *memory, *slots;
    size_t rows, contexts;
} alg_case;

static const alg_case c3o_cases[] = {
    { "grep", "instance_count\tmachine_type\tslots\tmemory\tdata_size_MB\tline_length\tlines\tp_occurrence\tgross_runtime",
      "2\tc4.2xlarge\t16\t30000\t15150\t100\t150000000\t0.5\t150", "computer", "100 150000000 0.5", "c4.2xlarge",
      "15150", "30000", "16", 810, 27 },
    { "kmeans", "instance_count\tmachine_type\tslots\tmemory\tdata_size_MB\tfeatures\tobservations\tk\tgross_runtime",
      "2\tm4.2xlarge\t16\t64000\t16000\t5\t150000000\t3\t1126", "3 0.001", "5 150000000", "m4.2xlarge", "16000",
      "64000", "16", 900, 30 },
    { "pagerank", "instance_count\tmachine_type\tslots\tmemory\tdata_size_MB\tpages\tlinks\tconvergence_criterion\tgross_runtime",
      "2\tm4.2xlarge\t16\t64000\t284\t2000000\t20000000\t0.001\t382", "0.001", "2000000 20000000", "m4.2xlarge",
      "284", "64000", "16", 1410, 47 },
    { "sgd", "instance_count\tmachine_type\tslots\tmemory\tdata_size_MB\tfeatures\tobservations\titerations\tgross_runtime",
      "2\tr4.2xlarge\t16\t122000\t9730\t5\t100000000\t1\t214", "1", "5 100000000", "r4.2xlarge", "9730", "122000",
      "16", 900, 30 },
    { "sort", "instance_count\tmachine_type\tslots\tmemory\tdata_size_MB\tline_length\tlines\tgross_runtime",
      "2\tc4.2xlarge\t16\t30000\t9530\t1000\t10000000\t340", "", "1000 10000000", "c4.2xlarge", "9530", "30000",
      "16", 630, 21 },
};

/* The property list of datasets/README.md: order, essential/optional, number/text, cluster totals. */
static void check_prop_list(const bl_dataset *ds) {
    static const struct { const char *name; int essential; bl_prop_kind kind; int total; } want[] = {
        { "machine_type", 1, BL_PROP_TEXT, 0 },   { "job_args", 1, BL_PROP_TEXT, 0 },
        { "data_size_MB", 1, BL_PROP_NUMBER, 0 }, { "data_characteristics", 1, BL_PROP_TEXT, 0 },
        { "environment", 1, BL_PROP_TEXT, 0 },    { "job_type", 0, BL_PROP_TEXT, 0 },
        { "memory", 0, BL_PROP_NUMBER, 1 },       { "slots", 0, BL_PROP_NUMBER, 1 },
    };
    ck_assert_uint_eq(ds->n_props, 8);
    for (size_t p = 0; p < 8; p++) {
        ck_assert_str_eq(ds->props[p].name, want[p].name);
        ck_assert_int_eq(ds->props[p].essential, want[p].essential);
        ck_assert_int_eq(ds->props[p].kind, want[p].kind);
        ck_assert_int_eq(ds->props[p].cluster_total, want[p].total);
    }
}

START_TEST(test_c3o_schemas_table) {
    for (size_t i = 0; i < sizeof c3o_cases / sizeof c3o_cases[0]; i++) {
        const alg_case *c = &c3o_cases[i];
        char path[64], tsv[512], job_type[32];
        snprintf(path, sizeof path, "datasets/c3o/%s.schema", c->alg);
        snprintf(tsv, sizeof tsv, "%s\n%s\n", c->header, c->row);
        snprintf(job_type, sizeof job_type, "%s-spark", c->alg);
        bl_schema *sc;
        bl_error e;
        ck_assert_msg(bl_schema_load(bl_test_source_path(path), &sc, &e) == BL_OK, "%s", e.message);
        bl_dataset *ds;
        ck_assert_msg(bl_dataset_load_mem(c->alg, tsv, strlen(tsv), '\t', sc, NULL, &ds, &e) == BL_OK, "%s", e.message);
        check_prop_list(ds);
        ck_assert_str_eq(value_of(ds, "machine_type", 0), c->machine);
        ck_assert_str_eq(value_of(ds, "job_args", 0), c->job_args);
        ck_assert_str_eq(value_of(ds, "data_size_MB", 0), c->size);
        ck_assert_str_eq(value_of(ds, "data_characteristics", 0), c->data_characteristics);
        ck_assert_str_eq(value_of(ds, "environment", 0), "public cloud aws emr");
        ck_assert_str_eq(value_of(ds, "job_type", 0), job_type);
        ck_assert_str_eq(value_of(ds, "memory", 0), c->memory);
        ck_assert_str_eq(value_of(ds, "slots", 0), c->slots);
        bl_dataset_free(ds);
        bl_schema_free(sc);
    }
}
END_TEST

START_TEST(test_bell_schemas) {
    static const struct { const char *alg, *size, *args; } bell[] = {
        { "grep", "250000", "berlin" }, { "pagerank", "3400", "5" }, { "sgd", "10000", "100 1.0" },
    };
    for (size_t i = 0; i < 3; i++) {
        char path[64], job_type[32];
        snprintf(path, sizeof path, "datasets/bell/%s.schema", bell[i].alg);
        snprintf(job_type, sizeof job_type, "%s-spark", bell[i].alg);
        bl_schema *sc;
        bl_error e;
        ck_assert_msg(bl_schema_load(bl_test_source_path(path), &sc, &e) == BL_OK, "%s", e.message);
        const char csv[] = "Nodes,Runtime\n2,1500\n12,900\n";
        bl_dataset *ds;
        ck_assert_msg(bl_dataset_load_mem("bell.csv", csv, strlen(csv), ',', sc, NULL, &ds, &e) == BL_OK, "%s", e.message);
        check_prop_list(ds);
        ck_assert_uint_eq(ds->n_contexts, 1);
        ck_assert_double_eq_tol(ds->runtime_s[0], 1.5, 1e-12);
        ck_assert_str_eq(value_of(ds, "machine_type", 0), "wallynode");
        ck_assert_str_eq(value_of(ds, "job_args", 0), bell[i].args);
        ck_assert_str_eq(value_of(ds, "data_size_MB", 0), bell[i].size);
        ck_assert_str_eq(value_of(ds, "data_characteristics", 0), "");
        ck_assert_str_eq(value_of(ds, "environment", 0), "private cluster yarn");
        ck_assert_str_eq(value_of(ds, "job_type", 0), job_type);
        ck_assert_str_eq(value_of(ds, "slots", 0), "8");
        ck_assert_str_eq(value_of(ds, "memory", 1), "192000");
        /* data_characteristics is empty → its vector is all zero. */
        const double *v = bl_dataset_vec(ds, 3, 0);
        for (int k = 0; k < 40; k++) ck_assert(v[k] == 0.0);
        bl_dataset_free(ds);
        bl_schema_free(sc);
    }
    /* The CRLF fixture with a blank line and a padded field, read from a file by extension. */
    bl_dataset *ds;
    bl_error e;
    char data[4096];
    snprintf(data, sizeof data, "%s", bl_test_source_path("tests/data/data_bell_grep.csv"));
    char schema[4096];
    snprintf(schema, sizeof schema, "%s", bl_test_source_path("datasets/bell/grep.schema"));
    ck_assert_msg(bl_dataset_load(data, schema, 0, NULL, &ds, &e) == BL_OK, "%s", e.message);
    ck_assert_uint_eq(ds->n_rows, 3);
    ck_assert_double_eq_tol(ds->runtime_s[1], 118.0, 1e-12);
    ck_assert_double_eq_tol(ds->runtime_s[2], 65.0, 1e-12);
    ck_assert_str_eq(value_of(ds, "slots", 2), "32");
    ck_assert_str_eq(value_of(ds, "memory", 0), "64000");
    ck_assert_uint_eq(ds->n_contexts, 1);
    ck_assert_uint_eq(ds->contexts[0].n_rows, 3);
    FILE *f = fopen(data, "rb");
    ck_assert_ptr_nonnull(f);
    char buf[256];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    ck_assert_uint_eq(ds->data_hash, XXH64(buf, n, 0));
    bl_dataset_free(ds);
}
END_TEST

/* Cluster totals encoded per machine: constant within a context, whatever the scale-out. */
START_TEST(test_totals_per_machine) {
    bl_encode_settings es;
    bl_encode_settings_default(&es);
    es.totals_per_machine = 1;
    bl_dataset *ds;
    bl_error e;
    char data[4096], schema[4096];
    snprintf(data, sizeof data, "%s", bl_test_source_path("tests/data/data_bell_grep.csv"));
    snprintf(schema, sizeof schema, "%s", bl_test_source_path("datasets/bell/grep.schema"));
    ck_assert_msg(bl_dataset_load(data, schema, 0, &es, &ds, &e) == BL_OK, "%s", e.message);
    for (size_t r = 0; r < ds->n_rows; r++) {
        ck_assert_str_eq(value_of(ds, "slots", r), "4");
        ck_assert_str_eq(value_of(ds, "memory", r), "16000");
    }
    ck_assert_uint_eq(ds->props[bl_dataset_find_prop(ds, "memory")].n_values, 1);
    bl_dataset_free(ds);
    /* A column that is a cluster total: 30000 MB over 2 machines is 15000 per machine. */
    const char schema_text[] = "scale_out n\nruntime t s\n"
                               "property machine_type essential text column m\n"
                               "property memory optional number column mem\ncluster_totals mem\n";
    const char tsv[] = "n\tt\tm\tmem\n2\t10\ta\t30000\n6\t5\ta\t90000\n4\t7\ta\t60002\n";
    bl_schema *sc;
    ck_assert_msg(bl_schema_parse("s", schema_text, strlen(schema_text), &sc, &e) == BL_OK, "%s", e.message);
    ck_assert_msg(bl_dataset_load_mem("t.tsv", tsv, strlen(tsv), '\t', sc, &es, &ds, &e) == BL_OK, "%s", e.message);
    ck_assert_str_eq(value_of(ds, "memory", 0), "15000");
    ck_assert_str_eq(value_of(ds, "memory", 1), "15000");
    ck_assert_str_eq(value_of(ds, "memory", 2), "15001"); /* rounded to the nearest */
    bl_dataset_free(ds);
    es.totals_per_machine = 2;
    ck_assert_int_eq(bl_encode_settings_check(&es, &e), BL_EINVAL);
    bl_schema_free(sc);
}
END_TEST

START_TEST(test_c3o_counts) {
    const char *dir = bl_test_c3o_dir();
    if (!dir) BL_TEST_SKIP("no C3O data (BELLAMY_DATA, or ../shared/datasets/c3o)");
    for (size_t i = 0; i < sizeof c3o_cases / sizeof c3o_cases[0]; i++) {
        const alg_case *c = &c3o_cases[i];
        char data[4096], schema[4096];
        snprintf(data, sizeof data, "%s/%s.tsv", dir, c->alg);
        snprintf(schema, sizeof schema, "datasets/c3o/%s.schema", c->alg);
        snprintf(schema, sizeof schema, "%s", bl_test_source_path(schema));
        bl_dataset *ds;
        bl_error e;
        ck_assert_msg(bl_dataset_load(data, schema, 0, NULL, &ds, &e) == BL_OK, "%s", e.message);
        ck_assert_uint_eq(ds->n_rows, c->rows);
        ck_assert_uint_eq(ds->n_contexts, c->contexts);
        check_prop_list(ds);
        size_t total = 0;
        for (size_t k = 0; k < ds->n_contexts; k++) {
            ck_assert_uint_eq(ds->contexts[k].n_rows, 30);   /* 6 scale-outs × 5 runs */
            for (size_t j = 0; j < 30; j++) ck_assert_uint_eq(ds->context[ds->contexts[k].rows[j]], k);
            total += ds->contexts[k].n_rows;
        }
        ck_assert_uint_eq(total, c->rows);
        for (size_t r = 0; r < ds->n_rows; r++) ck_assert_uint_eq(ds->src_row[r], r);
        ck_assert_str_eq(value_of(ds, "job_args", 0), c->job_args);
        bl_dataset_free(ds);
    }
}
END_TEST

/* ---- subsets, value encoding, synthetic corpus -------------------------------------------------------- */

static bl_dataset *synth_ds(bl_synth_corpus **corpus_out) {
    bl_synth_config cfg;
    bl_synth_config_default(&cfg);
    bl_synth_corpus *c;
    ck_assert_int_eq(bl_synth_generate(&cfg, &c, NULL), BL_OK);
    bl_dataset *ds;
    bl_error e;
    ck_assert_msg(bl_synth_dataset(c, NULL, &ds, &e) == BL_OK, "%s", e.message);
    if (corpus_out) *corpus_out = c;
    else bl_synth_free(c);
    return ds;
}

START_TEST(test_synth) {
    bl_synth_corpus *c;
    bl_dataset *ds = synth_ds(&c);
    ck_assert_uint_eq(c->n_rows, 12 * 6 * 3);
    ck_assert_uint_eq(ds->n_rows, c->n_rows);
    ck_assert_uint_eq(ds->n_contexts, 12);
    for (size_t r = 0; r < ds->n_rows; r++) {
        ck_assert_uint_eq(ds->context[r], c->context[r]);
        ck_assert_double_eq_tol(ds->runtime_s[r], c->runtime_s[r], 1e-9);
        ck_assert(c->runtime_s[r] > 0);
        /* Ground truth is Ernest's form with the context's θ. */
        const bl_synth_context *k = &c->contexts[c->context[r]];
        double x = c->scale_out[r], gb = (double)k->data_size_mb / 1000.0;
        ck_assert_double_eq_tol(c->truth_s[r], k->theta[0] + k->theta[1] * gb / x + k->theta[2] * log(x) + k->theta[3] * x,
                                1e-9);
        ck_assert(fabs(c->runtime_s[r] / c->truth_s[r] - 1.0) < 0.2);
    }
    for (size_t k = 0; k < 12; k++) ck_assert_uint_eq(ds->contexts[k].n_rows, 18);
    ck_assert_str_eq(value_of(ds, "machine_type", 0), c->contexts[0].machine_type);
    char want[32];
    snprintf(want, sizeof want, "%.0f", (double)c->contexts[0].slots_per_machine * c->scale_out[0]);
    ck_assert_str_eq(value_of(ds, "slots", 0), want);
    long slots = bl_dataset_find_prop(ds, "slots");
    ck_assert(slots >= 0 && ds->props[slots].cluster_total);
    /* Same seed → same corpus; another seed → another; zero noise → the truth (ms resolution). */
    bl_synth_config cfg;
    bl_synth_config_default(&cfg);
    bl_synth_corpus *c2;
    ck_assert_int_eq(bl_synth_generate(&cfg, &c2, NULL), BL_OK);
    ck_assert_mem_eq(c->runtime_s, c2->runtime_s, c->n_rows * sizeof(double));
    bl_synth_free(c2);
    cfg.seed = 2;
    ck_assert_int_eq(bl_synth_generate(&cfg, &c2, NULL), BL_OK);
    ck_assert(memcmp(c->runtime_s, c2->runtime_s, c->n_rows * sizeof(double)) != 0);
    bl_synth_free(c2);
    cfg.noise = 0;
    cfg.n_contexts = 60;
    ck_assert_int_eq(bl_synth_generate(&cfg, &c2, NULL), BL_OK);
    for (size_t r = 0; r < c2->n_rows; r++) ck_assert_double_eq_tol(c2->runtime_s[r], c2->truth_s[r], 5e-4);
    bl_dataset *ds60;
    ck_assert_int_eq(bl_synth_dataset(c2, NULL, &ds60, NULL), BL_OK);
    ck_assert_uint_eq(ds60->n_contexts, 60);   /* every grid cell is its own context */
    bl_dataset_free(ds60);
    bl_synth_free(c2);
    bl_error e;
    cfg.n_contexts = 61;
    ck_assert_int_eq(bl_synth_generate(&cfg, &c2, &e), BL_EINVAL);
    /* Written to files, it loads to the same data set (same bytes, same hash). */
    ck_assert_int_eq(bl_synth_write(c, bl_test_tmpdir(), "synth", &e), BL_OK);
    char data[4096], schema[4096];
    snprintf(data, sizeof data, "%s/synth.tsv", bl_test_tmpdir());
    snprintf(schema, sizeof schema, "%s/synth.schema", bl_test_tmpdir());
    bl_dataset *fds;
    ck_assert_msg(bl_dataset_load(data, schema, 0, NULL, &fds, &e) == BL_OK, "%s", e.message);
    ck_assert_uint_eq(fds->n_rows, ds->n_rows);
    ck_assert_uint_eq(fds->n_contexts, ds->n_contexts);
    ck_assert_uint_eq(fds->data_hash, ds->data_hash);
    bl_dataset_free(fds);
    bl_dataset_free(ds);
    bl_synth_free(c);
}
END_TEST

START_TEST(test_subset) {
    bl_dataset *ds = synth_ds(NULL);
    const bl_context *a = &ds->contexts[3], *b = &ds->contexts[1];
    size_t rows[64], n = 0;
    for (size_t i = 0; i < a->n_rows; i++) rows[n++] = a->rows[i];
    for (size_t i = 0; i < 4; i++) rows[n++] = b->rows[i];
    bl_dataset *s;
    bl_error e;
    ck_assert_int_eq(bl_dataset_subset(ds, rows, n, &s, &e), BL_OK);
    ck_assert_uint_eq(s->n_rows, n);
    ck_assert_uint_eq(s->n_contexts, 2);
    ck_assert_str_eq(s->contexts[0].label, a->label);
    ck_assert_str_eq(s->contexts[1].label, b->label);
    ck_assert_uint_eq(s->contexts[0].n_rows, a->n_rows);
    ck_assert_uint_eq(s->contexts[1].n_rows, 4);
    for (size_t i = 0; i < n; i++) {
        ck_assert_uint_eq(s->src_row[i], ds->src_row[rows[i]]);
        ck_assert(s->runtime_s[i] == ds->runtime_s[rows[i]]);
        for (size_t p = 0; p < ds->n_props; p++) {
            ck_assert_uint_eq(s->props[p].row_value[i], ds->props[p].row_value[rows[i]]);
            ck_assert_mem_eq(bl_dataset_vec(s, p, i), bl_dataset_vec(ds, p, rows[i]), 40 * sizeof(double));
        }
    }
    bl_dataset_free(s);
    size_t bad = ds->n_rows;
    ck_assert_int_eq(bl_dataset_subset(ds, &bad, 1, &s, &e), BL_EINVAL);
    ck_assert_int_eq(bl_dataset_subset(ds, NULL, 0, &s, &e), BL_OK);   /* empty is allowed */
    ck_assert_uint_eq(s->n_rows, 0);
    ck_assert_uint_eq(s->n_contexts, 0);
    bl_dataset_free(s);
    bl_dataset_free(ds);
}
END_TEST

START_TEST(test_encode_value) {
    bl_dataset *ds = synth_ds(NULL);
    long size = bl_dataset_find_prop(ds, "data_size_MB"), mt = bl_dataset_find_prop(ds, "machine_type");
    ck_assert(size >= 0 && mt >= 0);
    ck_assert_int_eq(bl_dataset_find_prop(ds, "nope"), -1);
    double v[40];
    bl_error e;
    /* An existing value encodes exactly as the table holds it. */
    ck_assert_int_eq(bl_dataset_encode_value(ds, (size_t)size, value_of(ds, "data_size_MB", 0), v, &e), BL_OK);
    ck_assert_mem_eq(v, bl_dataset_vec(ds, (size_t)size, 0), sizeof v);
    ck_assert_int_eq(bl_dataset_encode_value(ds, (size_t)mt, value_of(ds, "machine_type", 0), v, &e), BL_OK);
    ck_assert_mem_eq(v, bl_dataset_vec(ds, (size_t)mt, 0), sizeof v);
    ck_assert_int_eq(bl_dataset_encode_value(ds, (size_t)size, "large", v, &e), BL_EFORMAT);
    ck_assert_str_eq(e.message, "property 'data_size_MB' is a number: 'large' is not a number");
    ck_assert_int_eq(bl_dataset_encode_value(ds, (size_t)size, "0.5", v, &e), BL_EFORMAT);
    ck_assert_ptr_nonnull(strstr(e.message, "not an integer"));
    ck_assert_int_eq(bl_dataset_encode_value(ds, (size_t)size, "549755813888", v, &e), BL_ERANGE);
    ck_assert_int_eq(bl_dataset_encode_value(ds, (size_t)size, "-3", v, &e), BL_EFORMAT);
    ck_assert_int_eq(bl_dataset_encode_value(ds, (size_t)mt, "bad \xff", v, &e), BL_EFORMAT);
    ck_assert_ptr_nonnull(strstr(e.message, "machine_type"));
    ck_assert_int_eq(bl_dataset_encode_value(ds, 99, "x", v, &e), BL_EINVAL);
    ck_assert_int_eq(bl_encode_value("slots", BL_PROP_NUMBER, "12", &ds->settings, v, &e), BL_OK);
    ck_assert(v[0] == 1.0 && v[39] == 0.0 && v[38] == 0.0 && v[37] == 1.0 && v[36] == 1.0);
    bl_dataset_free(ds);
}
END_TEST

/* ---- the bellamy-train program ------------------------------------------------------------------------ */

/* Runs bellamy-train with args (shell words); returns the exit status, output in *out and *err (static buffers). */
static int run_cli(const char *args, char **out, char **err) {
    static char obuf[65536], ebuf[65536];
    const char *root = getenv("BELLAMY_BUILD_ROOT");
    char cmd[32768], opath[4096], epath[4096];
    snprintf(opath, sizeof opath, "%s/cli.out", bl_test_tmpdir());
    snprintf(epath, sizeof epath, "%s/cli.err", bl_test_tmpdir());
    snprintf(cmd, sizeof cmd, "'%s/bellamy-train' %s >'%s' 2>'%s'", root ? root : ".", args, opath, epath);
    int st = system(cmd);
    ck_assert_msg(st != -1 && WIFEXITED(st), "could not run %s", cmd);
    FILE *f = fopen(opath, "rb");
    size_t n = f ? fread(obuf, 1, sizeof obuf - 1, f) : 0;
    obuf[n] = '\0';
    if (f) fclose(f);
    f = fopen(epath, "rb");
    n = f ? fread(ebuf, 1, sizeof ebuf - 1, f) : 0;
    ebuf[n] = '\0';
    if (f) fclose(f);
    *out = obuf;
    *err = ebuf;
    return WEXITSTATUS(st);
}

START_TEST(test_cli) {
    char *out, *err, args[16384];
    ck_assert_int_eq(run_cli("--help", &out, &err), 0);
    ck_assert_ptr_nonnull(strstr(out, "inspect"));
    ck_assert_int_eq(run_cli("--version", &out, &err), 0);
    ck_assert_ptr_nonnull(strstr(out, "bellamy-train 0."));
    ck_assert_int_eq(run_cli("", &out, &err), 2);
    ck_assert_int_eq(run_cli("frobnicate", &out, &err), 2);
    ck_assert_ptr_nonnull(strstr(err, "unknown command 'frobnicate'"));
    ck_assert_int_eq(run_cli("inspect --help", &out, &err), 0);
    const char *opts[] = { "--data FILE", "--schema FILE", "--row K", "--delimiter tab|comma", "default: by extension",
                           "(required)" };
    for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++)
        ck_assert_msg(strstr(out, opts[i]) != NULL, "--help lacks '%s':\n%s", opts[i], out);
    ck_assert_int_eq(run_cli("inspect --data x.tsv", &out, &err), 2);
    ck_assert_ptr_nonnull(strstr(err, "--schema is required"));
    ck_assert_int_eq(run_cli("inspect --bogus", &out, &err), 2);
    ck_assert_int_eq(run_cli("inspect --data a --schema b --delimiter semicolon", &out, &err), 2);
    ck_assert_int_eq(run_cli("inspect --data a --schema b --row -1", &out, &err), 2);

    /* A synthetic corpus on disk. */
    bl_synth_config cfg;
    bl_synth_config_default(&cfg);
    bl_synth_corpus *c;
    ck_assert_int_eq(bl_synth_generate(&cfg, &c, NULL), BL_OK);
    ck_assert_int_eq(bl_synth_write(c, bl_test_tmpdir(), "cli", NULL), BL_OK);
    bl_synth_free(c);
    const char *t = bl_test_tmpdir();
    snprintf(args, sizeof args, "inspect --data '%s/cli.tsv' --schema '%s/cli.schema'", t, t);
    ck_assert_int_eq(run_cli(args, &out, &err), 0);
    ck_assert_ptr_nonnull(strstr(out, "rows: 216\n"));
    ck_assert_ptr_nonnull(strstr(out, "contexts: 12\n"));
    ck_assert_ptr_nonnull(strstr(out, "property machine_type: essential text"));
    ck_assert_ptr_nonnull(strstr(out, "property data_size_MB: essential number"));
    ck_assert_ptr_nonnull(strstr(out, "property slots: optional number cluster-total"));
    ck_assert_msg(strstr(out, "\nruntime (s): ") && strstr(out, " (from column 'gross_runtime' in s)\n"), "%s", out);
    ck_assert_str_eq(err, "");
    /* runtimes in minutes: inspect says the column and unit they were read from, in text and JSON */
    char path[4096];
    snprintf(path, sizeof path, "%s/min.csv", t);
    FILE *mf = fopen(path, "wb");
    ck_assert_ptr_nonnull(mf);
    fputs("nodes,runtime_min,m\n2,1.5,a\n4,1,a\n", mf);
    fclose(mf);
    snprintf(path, sizeof path, "%s/min.schema", t);
    mf = fopen(path, "wb");
    ck_assert_ptr_nonnull(mf);
    fputs("scale_out nodes\nruntime runtime_min min\nproperty machine_type essential text column m\n", mf);
    fclose(mf);
    snprintf(args, sizeof args, "inspect --data '%s/min.csv' --schema '%s/min.schema'", t, t);
    ck_assert_int_eq(run_cli(args, &out, &err), 0);
    ck_assert_msg(strstr(out, "\nruntime (s): 60 .. 90 (from column 'runtime_min' in min)\n"), "%s", out);
    snprintf(args, sizeof args, "inspect --data '%s/min.csv' --schema '%s/min.schema' --json", t, t);
    ck_assert_int_eq(run_cli(args, &out, &err), 0);
    ck_assert_msg(strstr(out, "\"runtime_s\":{\"min\":60,\"max\":90},\"runtime_column\":\"runtime_min\","
                              "\"runtime_unit\":\"min\""), "%s", out);

    snprintf(args, sizeof args, "inspect --data '%s/cli.tsv' --schema '%s/cli.schema' --row 5 --delimiter tab", t, t);
    ck_assert_int_eq(run_cli(args, &out, &err), 0);
    ck_assert_ptr_nonnull(strstr(out, "scale-out features [1/x, ln x, x]: 0.25 1.38629 4\n"));   /* row 5: x = 4 */
    char *line = strstr(out, "\ndata_size_MB = \"");
    ck_assert_ptr_nonnull(line);
    line = strstr(line, "\": ") + 3;
    size_t words = 0;
    for (char *p = line; *p && *p != '\n'; p++)
        if (*p != ' ' && (p == line || p[-1] == ' ')) words++;
    ck_assert_uint_eq(words, 40);
    ck_assert(line[0] == '1');   /* number prefix */

    snprintf(args, sizeof args, "inspect --data '%s/cli.tsv' --schema '%s/cli.schema' --row 216", t, t);
    ck_assert_int_eq(run_cli(args, &out, &err), 1);
    ck_assert_ptr_nonnull(strstr(err, "--row 216"));
    snprintf(args, sizeof args, "inspect --data '%s/cli.tsv' --schema '%s/cli.schema' --delimiter comma", t, t);
    ck_assert_int_eq(run_cli(args, &out, &err), 1);
    ck_assert_ptr_nonnull(strstr(err, "missing column"));
    ck_assert_ptr_nonnull(strstr(err, "the header has 1 column and it contains tabs: is the file tab-separated?"));
    snprintf(args, sizeof args, "inspect --data '%s/nothere.tsv' --schema '%s/cli.schema'", t, t);
    ck_assert_int_eq(run_cli(args, &out, &err), 1);
    ck_assert_ptr_nonnull(strstr(err, "nothere.tsv: cannot open"));
    ck_assert_str_eq(out, "");
    /* A bad row: the message names file:line:column on stderr. */
    char bad[4096];
    snprintf(bad, sizeof bad, "%s/bad.tsv", t);
    FILE *f = fopen(bad, "wb");
    ck_assert_ptr_nonnull(f);
    fputs("instance_count\tmachine_type\tslots\tmemory\tdata_size_MB\titerations\tgross_runtime\n"
          "2\ts1.large\t8\t32000\t2000\t1\t50\n2\ts1.large\t8\t32000\t2000\t1\t-50\n", f);
    fclose(f);
    snprintf(args, sizeof args, "inspect --data '%s' --schema '%s/cli.schema'", bad, t);
    ck_assert_int_eq(run_cli(args, &out, &err), 1);
    ck_assert_ptr_nonnull(strstr(err, "bad.tsv:3:27: column 'gross_runtime' (runtime)"));
}
END_TEST

START_TEST(test_cli_c3o) {
    const char *dir = bl_test_c3o_dir();
    if (!dir) BL_TEST_SKIP("no C3O data (BELLAMY_DATA, or ../shared/datasets/c3o)");
    char *out, *err, args[16384], schema[4096];
    snprintf(schema, sizeof schema, "%s", bl_test_source_path("datasets/c3o/pagerank.schema"));
    snprintf(args, sizeof args, "inspect --data '%s/pagerank.tsv' --schema '%s' --row 0", dir, schema);
    ck_assert_int_eq(run_cli(args, &out, &err), 0);
    ck_assert_ptr_nonnull(strstr(out, "rows: 1410\n"));
    ck_assert_ptr_nonnull(strstr(out, "contexts: 47\n"));
    ck_assert_ptr_nonnull(strstr(out, "job_args = \"0.001\": 0 "));
}
END_TEST

Suite *bl_test_suite(void) {
    Suite *s = suite_create("data");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_fifo_inputs_do_not_hang);
    tcase_add_test(tc, test_load_basic);
    tcase_add_test(tc, test_csv_and_long_line);
    tcase_add_test(tc, test_reader_file);
    tcase_add_test(tc, test_wide_header);
    tcase_add_test(tc, test_header_duplicates);
    tcase_add_test(tc, test_quoted_fields);
    tcase_add_test(tc, test_quoted_line_numbers);
    tcase_add_test(tc, test_quote_errors);
    tcase_add_test(tc, test_quoted_delimiter_sniff);
    tcase_add_test(tc, test_quoted_wide_and_long);
    tcase_add_test(tc, test_runtime_bound);
    tcase_add_test(tc, test_invalid_runtime_says_the_fix);
    tcase_add_test(tc, test_runtime_units);
    tcase_add_test(tc, test_header_hints);
    tcase_add_test(tc, test_bad_files);
    tcase_add_test(tc, test_bad_rows);
    tcase_add_test(tc, test_bad_schemas);
    tcase_add_test(tc, test_schema_syntax);
    tcase_add_test(tc, test_scale_out_whole_numbers);
    tcase_add_test(tc, test_schema_bom);
    tcase_add_test(tc, test_synth_shifted_environments);
    tcase_add_test(tc, test_schema_column_roles);
    tcase_add_test(tc, test_schema_check_props);
    tcase_add_test(tc, test_context_spread_and_diff);
    tcase_add_test(tc, test_c3o_schemas_table);
    tcase_add_test(tc, test_bell_schemas);
    tcase_add_test(tc, test_totals_per_machine);
    tcase_add_test(tc, test_c3o_counts);
    tcase_add_test(tc, test_synth);
    tcase_add_test(tc, test_subset);
    tcase_add_test(tc, test_encode_value);
    tcase_add_test(tc, test_cli);
    tcase_add_test(tc, test_cli_c3o);
    suite_add_tcase(s, tc);
    return s;
}
