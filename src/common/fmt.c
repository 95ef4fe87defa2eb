/* fmt.c — the shortest round-trip text of a double (fmt.h). */
#include "common/fmt.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *bl_fmt_double(char buf[BL_FMT_DOUBLE_MAX], double v) {
    if (isnan(v)) {
        snprintf(buf, BL_FMT_DOUBLE_MAX, "nan");
        return buf;
    }
    if (isinf(v)) {
        snprintf(buf, BL_FMT_DOUBLE_MAX, v > 0 ? "inf" : "-inf");
        return buf;
    }
    /* 17 significant digits always read back (IEEE 754 binary64); most numbers need far fewer */
    int p = 1;
    for (; p < 17; p++) {
        snprintf(buf, BL_FMT_DOUBLE_MAX, "%.*g", p, v);
        if (strtod(buf, NULL) == v) break;
    }
    if (p == 17) snprintf(buf, BL_FMT_DOUBLE_MAX, "%.17g", v);
    /* %g writes 100 as 1e+02 when one digit is enough: whole numbers below 1e17 are written out */
    const char *e = strchr(buf, 'e');
    const int x = e ? atoi(e + 1) : -1;
    if (e && x >= 0 && x < 17) snprintf(buf, BL_FMT_DOUBLE_MAX, "%.*f", p - 1 - x > 0 ? p - 1 - x : 0, v);
    return buf;
}
