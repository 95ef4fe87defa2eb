/* main.c — entry point of `bellamy-eval`; everything is in eval_cli.c (so the tests can call it). Under an
 * MPI launcher the ranks share the pre-trainings (src/dist). */
#include "eval.h"

#include "cli/cli_util.h"
#include "dist/dist.h"

int main(int argc, char **argv) {
    bl_dist *dist = NULL;
    bl_error err = { 0 };
    if (bl_dist_open(NULL, NULL, &dist, &err) != BL_OK) {
        bl_cli_error("bellamy-eval", "%s", err.message);
        return BL_EXIT_FAIL;
    }
    int rc = bl_eval_main_ranks(argc, argv, dist);
    bl_dist_close(dist);
    return rc;
}
