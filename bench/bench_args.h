/* bench_args.h — what every benchmark answers before it measures anything: --version (the library's
 * version and the kernel copy in use, as the programs print it) and --help (its usage line). */
#ifndef BL_BENCH_ARGS_H
#define BL_BENCH_ARGS_H

#include <stdio.h>
#include <string.h>

#include "bellamy/bellamy.h"

/* Returns -1 to go on measuring, else the exit status: 0 after --version or --help, 1 (as the
 * programs) when BELLAMY_CPU cannot be honoured (its message on stderr). */
static inline int bench_args(int argc, char **argv, const char *prog, const char *usage) {
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            printf("usage: %s %s\n", prog, usage);
            return 0;
        }
        if (strcmp(argv[i], "--version") == 0) {
            printf("%s %s\nkernels: %s (this processor runs %s; BELLAMY_CPU=generic|avx2|avx512 caps it)\n", prog,
                   bl_version(), bl_cpu_kernels(), bl_cpu_kernels_available());
            bl_error e = { 0 };
            if (bl_cpu_kernels_check(&e) != BL_OK) {
                fprintf(stderr, "%s: %s\n", prog, e.message);
                return 1;
            }
            return 0;
        }
    }
    return -1;
}

#endif /* BL_BENCH_ARGS_H */
