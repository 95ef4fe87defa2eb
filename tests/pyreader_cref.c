/* pyreader_cref.c — the C side of tests/test_pyreader.py: libbellamy's predictions (bl_predict) for
 * contexts read from stdin, printed to full precision so the Python reader can be compared with them.
 *
 *   pyreader_cref MODEL.h5 [NAME]              (NAME "-" or absent: the file's only model)
 *   pyreader_cref MODEL.h5 NAME --describe     what the predictor knows of the model, then exit
 *
 * Each stdin line is tab-separated: scale-outs joined by commas, then PROP=VALUE fields. Each line
 * gets one answer line: "ok<TAB>r1,r2,..." (runtimes in seconds, %.17g) or "err<TAB>message"; after
 * "ok", one line "warn<TAB>KIND<TAB>PROPERTY<TAB>MESSAGE" for each of bl_predict_warn's warnings
 * (bl_warning_kind_name, PROPERTY empty when the warning names none).
 * --describe prints "method<TAB>NAME<TAB>W<TAB>WHY" (bl_predictor_method; W %.17g), then for each
 * property "prop<TAB>NAME<TAB>E<TAB>N<TAB>T<TAB>FROM<TAB>VALUE": essential, number, cluster total
 * (0/1), and the value the model fills in (bl_predictor_prop_default: FROM 1 the stored schema, 2 the
 * pre-training rows, 0 none and VALUE empty).
 * A model that does not load prints "loaderr<TAB>message" and exits 1.
 * Uses the public header only. Not here: any comparison (the Python test does that).
 */
#include <bellamy/bellamy.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FIELDS 64
#define MAX_X 4096

int main(int argc, char **argv) {
    const int describe = argc == 4 && strcmp(argv[3], "--describe") == 0;
    if (argc < 2 || (argc > 3 && !describe)) {
        fprintf(stderr, "usage: pyreader_cref MODEL.h5 [NAME [--describe]]\n");
        return 2;
    }
    const char *name = argc >= 3 && strcmp(argv[2], "-") != 0 ? argv[2] : NULL;
    bl_error err = {0};
    bl_predictor *p = NULL;
    if (bl_predictor_load(argv[1], name, &p, &err) != BL_OK) {
        printf("loaderr\t%s\n", err.message);
        return 1;
    }
    if (describe) {
        const char *method = "", *why = "";
        double w = 0;
        bl_predictor_method(p, &method, &w, &why);
        printf("method\t%s\t%.17g\t%s\n", method, w, why);
        for (size_t i = 0; i < bl_predictor_prop_count(p); i++) {
            bl_prop_info pi;
            const char *v = NULL;
            int from = 0;
            bl_predictor_prop(p, i, &pi);
            if (bl_predictor_prop_default(p, i, &v, &from) != BL_OK) v = NULL, from = 0;
            printf("prop\t%s\t%d\t%d\t%d\t%d\t%s\n", pi.name, pi.essential != 0, pi.number != 0,
                   pi.cluster_total != 0, from, v ? v : "");
        }
        bl_predictor_free(p);
        return 0;
    }
    bl_warnings *w = NULL;
    if (bl_warnings_new(&w, &err) != BL_OK) {
        printf("loaderr\t%s\n", err.message);
        bl_predictor_free(p);
        return 1;
    }
    static char line[1 << 16];
    static double x[MAX_X], t[MAX_X];
    while (fgets(line, sizeof line, stdin)) {
        line[strcspn(line, "\n")] = '\0';
        char *fields[MAX_FIELDS + 1];
        size_t nf = 0;
        for (char *s = line; nf <= MAX_FIELDS;) {   /* split on tabs, keeping empty fields */
            fields[nf++] = s;
            char *tab = strchr(s, '\t');
            if (!tab) break;
            *tab = '\0';
            s = tab + 1;
        }
        size_t nx = 0;
        for (char *s = fields[0]; *s && nx < MAX_X;) {
            char *end;
            x[nx++] = strtod(s, &end);
            if (*end != ',') break;
            s = end + 1;
        }
        bl_prop_value ctx[MAX_FIELDS];
        size_t nc = 0;
        for (size_t i = 1; i < nf; i++) {
            char *eq = strchr(fields[i], '=');
            if (!eq) continue;
            *eq = '\0';
            ctx[nc].name = fields[i];
            ctx[nc].value = eq + 1;
            nc++;
        }
        memset(&err, 0, sizeof err);
        if (bl_predict_warn(p, ctx, nc, x, nx, t, w, &err) != BL_OK) {
            printf("err\t%s\n", err.message);
        } else {
            printf("ok\t");
            for (size_t i = 0; i < nx; i++) printf("%s%.17g", i ? "," : "", t[i]);
            putchar('\n');
            for (size_t i = 0; i < bl_warnings_count(w); i++) {
                const char *prop = bl_warnings_property(w, i);
                printf("warn\t%s\t%s\t%s\n", bl_warning_kind_name(bl_warnings_kind(w, i)), prop ? prop : "",
                       bl_warnings_message(w, i));
            }
        }
        fflush(stdout);
    }
    bl_warnings_free(w);
    bl_predictor_free(p);
    return 0;
}
