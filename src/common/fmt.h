/* fmt.h — numbers as text: the shortest decimal that reads back as the same double, for every number a
 * program writes for a reader (JSON, saved workloads), so 0.1 is "0.1", not "0.10000000000000001".
 * Not here: human tables with a fixed precision (the programs choose their own). */
#ifndef BL_COMMON_FMT_H
#define BL_COMMON_FMT_H

#include <stddef.h>

#define BL_FMT_DOUBLE_MAX 32 /* room for any double written by bl_fmt_double, with its NUL */

/* buf receives the shortest %g text of v (1 to 17 significant digits) that strtod reads back as v
 * exactly; "nan", "inf" or "-inf" for those. Returns buf. */
char *bl_fmt_double(char buf[BL_FMT_DOUBLE_MAX], double v);

#endif /* BL_COMMON_FMT_H */
