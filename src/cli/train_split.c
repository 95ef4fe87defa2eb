/* train_split.c — bellamy-train split: one context of a data file held out, its rows and the others
 * written to two files. */
#include "cli/train_cmds.h"
#include "cli/cli_util.h"
#include "bellamy/bellamy.h"
#include "bellamy/train.h"
#include "common/file.h"
#include "common/suggest.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

/* Writes the lines of in whose mark matches `want` (mark[line] & want; lines counted from 1, mark has
 * n_mark entries) to path: the header's lines and the chosen rows' lines, as bl_data_row_lines gives
 * them (a row spans several when a quoted field holds line breaks). Line ends become LF.
 * The file is replaced by the one policy of common/file.h: whole or not at all. */
static int write_rows(const char *prog, const char *in, const char *path, const unsigned char *mark, size_t n_mark,
                      unsigned char want) {
    bl_error err = { 0 };
    FILE *f = bl_file_open_read(in, 0, &err);
    if (!f) return bl_cli_fail(prog, &err);
    bl_file_out *o = NULL;
    if (bl_file_out_open(path, &o, &err) != BL_OK) {
        fclose(f);
        return bl_cli_fail(prog, &err);
    }
    char *line = NULL;
    size_t cap = 0, ln = 0;
    ssize_t len;
    bl_status st = BL_OK;
    while (st == BL_OK && (len = getline(&line, &cap, f)) >= 0) {
        size_t l = (size_t)len;
        while (l > 0 && (line[l - 1] == '\n' || line[l - 1] == '\r')) l--;
        if (++ln < n_mark && (mark[ln] & want)) {
            line[l] = '\n';
            st = bl_file_out_write(o, line, l + 1, &err);
        }
    }
    free(line);
    const int bad_in = ferror(f);
    fclose(f);
    if (st == BL_OK && bad_in) {
        bl_file_out_abort(o);
        bl_cli_error(prog, "%s: read error", in);
        return BL_EXIT_FAIL;
    }
    if (st == BL_OK) return bl_file_out_commit(o, &err) == BL_OK ? BL_EXIT_OK : bl_cli_fail(prog, &err);
    bl_file_out_abort(o);
    return bl_cli_fail(prog, &err);
}

/* Splits path into its folder ("." when it has no '/') and last component; dir is malloc'd. */
static char *path_dir(const char *path, const char **base) {
    const char *slash = strrchr(path, '/');
    size_t dl = slash ? (size_t)(slash - path) : 0;
    char *dir = malloc(dl + 2);
    if (!dir) return NULL;
    if (!slash) strcpy(dir, ".");
    else if (dl == 0) strcpy(dir, "/");
    else { memcpy(dir, path, dl); dir[dl] = '\0'; }
    *base = slash ? slash + 1 : path;
    return dir;
}

/* Do the two paths name the same file? Existing files compare by device and inode (hard and
 * symbolic links included); a file that does not exist yet by its folder's device and inode and
 * its last component. */
static int same_file(const char *a, const char *b) {
    struct stat sa, sb;
    if (stat(a, &sa) == 0 && stat(b, &sb) == 0) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    const char *ba, *bb;
    char *da = path_dir(a, &ba), *db = path_dir(b, &bb);
    int same;
    if (da && db && stat(da, &sa) == 0 && stat(db, &sb) == 0)
        same = sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino && strcmp(ba, bb) == 0;
    else
        same = strcmp(a, b) == 0;
    free(da);
    free(db);
    return same;
}

int bl_train_cmd_split(const char *prog, int argc, char **argv) {
    const char *data = NULL, *schema = NULL, *held = NULL, *rest = NULL, *sample_out = NULL, *delim = NULL;
    size_t context = 0, sample = 0;
    int list = 0;
    bl_cli_option opts[] = {
        { "data", BL_OPT_STRING, &data, "FILE", "data file (.tsv or .csv)", NULL, 1, NULL, 0 },
        { "schema", BL_OPT_STRING, &schema, "FILE", "its schema", NULL, 1, NULL, 0 },
        { "context", BL_OPT_SIZE, &context, "K", "the context to hold out (0-based, in order of first appearance)", "0", 0,
          NULL, 0 },
        { "held-out", BL_OPT_STRING, &held, "FILE", "write the header and the context's rows here", "not written", 0, NULL,
          0 },
        { "rest", BL_OPT_STRING, &rest, "FILE", "write the header and every other row here", "not written", 0, NULL, 0 },
        { "sample", BL_OPT_SIZE, &sample, "N", "also pick N runs of the context at evenly spread distinct scale-outs", "0",
          0, NULL, 0 },
        { "sample-out", BL_OPT_STRING, &sample_out, "FILE", "write the header and the sampled runs here", "not written", 0,
          NULL, 0 },
        { "delimiter", BL_OPT_CHOICE, &delim, NULL, "field delimiter", "by extension: .tsv tab, .csv comma; other names: a tab in the first line, else comma", 0,
          "tab|comma", 0 },
        { "list", BL_OPT_FLAG, &list, NULL, "list the contexts (index, rows, label) and exit", NULL, 0, NULL, 0 },
    };
    const size_t nopts = sizeof opts / sizeof opts[0];
    int rc = bl_cli_parse(prog,
                          "bellamy-train split --data FILE --schema FILE [--context K] [--held-out FILE] [--rest FILE]\n"
                          "         [--sample N --sample-out FILE] [--delimiter tab|comma] [--list]\n"
                          "Prints the held-out context's property values as name=value lines (cluster totals per machine),\n"
                          "ready for bellamy-predict --set.",
                          argc, argv, 1, opts, nopts, NULL, NULL);
    if (rc) return rc < 0 ? bl_cli_finish(prog) : rc;
    if ((sample > 0) != (sample_out != NULL)) {
        bl_cli_error(prog, "--sample and --sample-out go together");
        return BL_EXIT_USAGE;
    }
    if (list && (held || rest || sample_out || bl_tr_seen(opts, nopts, "context"))) {
        bl_cli_error(prog, "--list only lists the contexts: it takes no --context, --held-out, --rest or --sample-out");
        return BL_EXIT_USAGE;
    }
    if ((rc = bl_cli_check_input(prog, "data", data)) || (rc = bl_cli_check_input(prog, "schema", schema))) return rc;
    /* The outputs: writable, and none of them the input or another output (writing one would
     * destroy the other: the data file would be emptied before it is read). */
    const struct { const char *flag, *path; } outs[] = { { "held-out", held }, { "rest", rest }, { "sample-out", sample_out } };
    for (size_t i = 0; i < 3; i++) {
        if (!outs[i].path) continue;
        if ((rc = bl_cli_check_output(prog, outs[i].flag, outs[i].path))) return rc;
        if (same_file(outs[i].path, data) || same_file(outs[i].path, schema)) {
            bl_cli_error(prog, "--%s %s: is an input file (--%s); choose another output file", outs[i].flag, outs[i].path,
                         same_file(outs[i].path, data) ? "data" : "schema");
            return BL_EXIT_USAGE;
        }
        for (size_t j = 0; j < i; j++)
            if (outs[j].path && same_file(outs[i].path, outs[j].path)) {
                bl_cli_error(prog, "--%s and --%s name the same file (%s)", outs[j].flag, outs[i].flag, outs[i].path);
                return BL_EXIT_USAGE;
            }
    }
    bl_error err = { 0 };
    bl_data *ds = NULL;
    bl_data_opts dopt;
    bl_data_opts_init(&dopt);
    dopt.delimiter = bl_cli_delim(delim);
    if (bl_data_load(data, schema, &dopt, &ds, &err) != BL_OK) return bl_cli_fail(prog, &err);
    bl_data_summary sum;
    bl_data_summarize(ds, &sum);
    if (list) {
        for (size_t c = 0; c < sum.contexts; c++) {
            const char *label;
            size_t nr;
            bl_data_context(ds, c, &label, &nr);
            printf("%zu\t%zu\t%s\n", c, nr, label);
        }
        bl_data_free(ds);
        return bl_cli_finish(prog);
    }
    if (context >= sum.contexts) {
        bl_cli_error(prog, "--context %zu: %s has %zu contexts (0..%zu)", context, data, sum.contexts, sum.contexts - 1);
        bl_data_free(ds);
        return BL_EXIT_FAIL;
    }
    const char *cx_label;
    size_t cx_rows;
    bl_data_context(ds, context, &cx_label, &cx_rows);
    size_t n_mark = 0;
    for (size_t r = 0; r < sum.rows; r++) {
        bl_data_row rw;
        bl_data_get_row(ds, r, &rw);
        if (rw.data_row + 1 > n_mark) n_mark = rw.data_row + 1;
    }
    unsigned char *mark = calloc(n_mark ? n_mark : 1, 1);
    double *xs = malloc((cx_rows ? cx_rows : 1) * sizeof *xs);
    if (!mark || !xs) {
        free(mark);
        free(xs);
        bl_data_free(ds);
        bl_cli_error(prog, "out of memory");
        return BL_EXIT_FAIL;
    }
    /* marks: 1 rest, 2 held out, 4 sampled */
    for (size_t r = 0; r < sum.rows; r++) {
        bl_data_row rw;
        bl_data_get_row(ds, r, &rw);
        mark[rw.data_row] = rw.context == context ? 2 : 1;
    }
    size_t k = 0;
    for (size_t i = 0; i < cx_rows; i++) {
        size_t r;
        bl_data_row rw;
        bl_data_context_row(ds, context, i, &r);
        bl_data_get_row(ds, r, &rw);
        xs[k++] = rw.scale_out;
    }
    qsort(xs, k, sizeof *xs, bl_tr_cmp_dbl);
    size_t nd = 0;
    for (size_t i = 0; i < k; i++)
        if (i == 0 || xs[i] != xs[nd - 1]) xs[nd++] = xs[i];
    rc = BL_EXIT_OK;
    if (sample > nd) {
        bl_cli_error(prog, "--sample %zu: context %zu has only %zu distinct scale-outs", sample, context, nd);
        rc = BL_EXIT_FAIL;
    }
    char picked[256] = "";
    for (size_t j = 0; rc == BL_EXIT_OK && j < sample; j++) {
        /* evenly spread over the sorted distinct scale-outs; the first run (file order) at each */
        size_t idx = sample == 1 ? nd / 2 : (size_t)floor((double)j * (double)(nd - 1) / (double)(sample - 1) + 0.5);
        for (size_t i = 0; i < cx_rows; i++) {
            size_t r;
            bl_data_row rw;
            bl_data_context_row(ds, context, i, &r);
            bl_data_get_row(ds, r, &rw);
            if (rw.scale_out == xs[idx]) {
                mark[rw.data_row] |= 4;
                size_t pl = strlen(picked);
                snprintf(picked + pl, sizeof picked - pl, "%s%g", j ? ", " : "", xs[idx]);
                break;
            }
        }
    }
    /* the marks by line: the header's lines go to every output, each row's lines where it goes */
    size_t first, last, n_lines = 0;
    unsigned char *lmark = NULL;
    if (rc == BL_EXIT_OK) {
        bl_data_row_lines(ds, BL_DATA_HEADER, &first, &last);
        n_lines = last + 1;
        for (size_t r = 0; r < sum.rows; r++) {
            bl_data_row_lines(ds, r, &first, &last);
            if (last + 1 > n_lines) n_lines = last + 1;
        }
        lmark = calloc(n_lines, 1);
        if (!lmark) {
            bl_cli_error(prog, "out of memory");
            rc = BL_EXIT_FAIL;
        }
    }
    if (lmark) {
        bl_data_row_lines(ds, BL_DATA_HEADER, &first, &last);
        for (size_t l = first; l <= last; l++) lmark[l] = 0xff;
        for (size_t r = 0; r < sum.rows; r++) {
            bl_data_row rw;
            bl_data_get_row(ds, r, &rw);
            bl_data_row_lines(ds, r, &first, &last);
            for (size_t l = first; l <= last; l++) lmark[l] = mark[rw.data_row];
        }
    }
    if (rc == BL_EXIT_OK && held) rc = write_rows(prog, data, held, lmark, n_lines, 2);
    if (rc == BL_EXIT_OK && rest) rc = write_rows(prog, data, rest, lmark, n_lines, 1);
    if (rc == BL_EXIT_OK && sample_out) rc = write_rows(prog, data, sample_out, lmark, n_lines, 4);
    free(lmark);
    if (rc == BL_EXIT_OK) {
        fprintf(stderr, "%s: context %zu of %zu held out: %s (%zu rows)%s%s\n", prog, context, sum.contexts, cx_label,
                cx_rows, sample ? "; sampled runs at scale-outs " : "", picked);
        /* The context's values, as bellamy-predict --set takes them. */
        size_t r0;
        bl_data_row rw0;
        bl_data_context_row(ds, context, 0, &r0);
        bl_data_get_row(ds, r0, &rw0);
        for (size_t p = 0; p < sum.props; p++) {
            bl_data_prop pr;
            const char *v;
            bl_data_property(ds, p, &pr);
            bl_data_value(ds, p, r0, &v, NULL);
            if (pr.cluster_total && pr.number)
                printf("%s=%.0f\n", pr.name, floor(strtod(v, NULL) / rw0.scale_out + 0.5));
            else
                printf("%s=%s\n", pr.name, v);
        }
        rc = bl_cli_finish(prog);
    }
    free(mark);
    free(xs);
    bl_data_free(ds);
    return rc;
}
