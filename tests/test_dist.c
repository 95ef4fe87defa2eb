/* test_dist.c — src/dist (dist.h): a plain program, not a Check suite (Check forks each test and MPI
 * does not survive a fork). Without arguments: the group of one and the launcher checks. With --ranks
 * (under mpirun, tests/test_dist_mpi.sh): every collective on K ranks, checked on every rank.
 * --die RANK: that rank kills itself before a collective (the job must end, not hang). */
#include "dist/dist.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bl_config.h"

#if BL_HAVE_MPI && !defined(BL_DIST_NO_MPI)
#define DIST_MPI 1
#else
#define DIST_MPI 0
#endif

static int failures;
static int my_rank;

#define CHECK(cond, ...)                                                         \
    do {                                                                         \
        if (!(cond)) {                                                           \
            failures++;                                                          \
            fprintf(stderr, "rank %d: %s:%d: %s: ", my_rank, __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                        \
            fputc('\n', stderr);                                                 \
        }                                                                        \
    } while (0)

/* A fake environment for bl_dist_launcher_size. */
static const char *const *fake_env;
static const char *fake_getenv(const char *name) {
    size_t n = strlen(name);
    for (const char *const *e = fake_env; *e; e++)
        if (strncmp(*e, name, n) == 0 && (*e)[n] == '=') return *e + n + 1;
    return NULL;
}

static void test_launcher_size(void) {
    const char *none[] = {"HOME=/root", "PATH=/bin", NULL};
    fake_env = none;
    CHECK(bl_dist_launcher_size(fake_getenv) == 0, "no launcher variables");
    const char *ompi[] = {"OMPI_COMM_WORLD_SIZE=4", "OMPI_COMM_WORLD_RANK=2", NULL};
    fake_env = ompi;
    CHECK(bl_dist_launcher_size(fake_getenv) == 4, "Open MPI's size");
    const char *hydra[] = {"PMI_SIZE=3", "MPI_LOCALNRANKS=2", NULL};
    fake_env = hydra;
    CHECK(bl_dist_launcher_size(fake_getenv) == 3, "Hydra: the largest count");
    const char *srun[] = {"SLURM_STEP_NUM_TASKS=72", "SLURM_PROCID=5", NULL};
    fake_env = srun;
    CHECK(bl_dist_launcher_size(fake_getenv) == 72, "srun's tasks");
    const char *junk[] = {"OMPI_COMM_WORLD_SIZE=lots", "PMI_SIZE=", "PMIX_SIZE=-2", "SLURM_STEP_NUM_TASKS=0", NULL};
    fake_env = junk;
    CHECK(bl_dist_launcher_size(fake_getenv) == 0, "values that are no count are no launcher");
}

static void test_group_of_one(void) {
    bl_error err = {0};
    CHECK(bl_dist_size(NULL) == 1 && bl_dist_rank(NULL) == 0, "NULL is a group of one");
    CHECK(bl_dist_owner(NULL, 17) == 0, "one rank owns everything");
    int recs[5] = {1, 2, 3, 4, 5};
    CHECK(bl_dist_gather(NULL, recs, 0, 5, sizeof recs[0], &err) == BL_OK && recs[4] == 5, "gather of one: unchanged");
    CHECK(bl_dist_gather(NULL, NULL, 0, 5, sizeof recs[0], &err) == BL_EINVAL, "NULL records refused");
    CHECK(bl_dist_agree(NULL, BL_EIO, &err) == BL_EIO, "agree of one: the rank's own status");
    CHECK(bl_dist_agree(NULL, BL_OK, &err) == BL_OK, "agree of one: ok");
    CHECK(bl_dist_same(NULL, "abc", 3, "x", &err) == BL_OK, "same of one");
}

/* Outside any launcher: the group opens without MPI and closes. A second open in one process is refused. */
static void test_open_alone(void) {
    bl_error err = {0};
    bl_dist *d = NULL;
    if (bl_dist_launcher_size(NULL) > 0) {
        printf("SKIP part: started under a launcher\n");
        return;
    }
    CHECK(bl_dist_open(NULL, NULL, &d, &err) == BL_OK, "%s", err.message);
    CHECK(bl_dist_size(d) == 1 && bl_dist_rank(d) == 0 && !bl_dist_uses_mpi(d), "alone: one rank, no MPI");
    bl_dist *d2 = NULL;
    CHECK(bl_dist_open(NULL, NULL, &d2, &err) == BL_EINVAL && d2 == NULL, "second open refused");
    bl_dist_close(d);
#if !DIST_MPI
    /* a build without MPI started by mpirun -np 3: refused, never three copies each training alone */
    setenv("OMPI_COMM_WORLD_SIZE", "3", 1);
    CHECK(bl_dist_open(NULL, NULL, &d, &err) == BL_EUNSUPPORTED && strstr(err.message, "no MPI") &&
              strstr(err.message, "3 ranks"),
          "non-MPI build under a launcher: %s", err.message);
    unsetenv("OMPI_COMM_WORLD_SIZE");
#endif
}

typedef struct rec {
    unsigned long long item;
    double value;
    char   owner;
} rec;

static int test_ranks(int argc, char **argv, int die) {
    bl_error err = {0};
    bl_dist *d = NULL;
    if (bl_dist_open(&argc, &argv, &d, &err)) {
        fprintf(stderr, "bl_dist_open: %s\n", err.message);
        return 1;
    }
    const int rank = bl_dist_rank(d), size = bl_dist_size(d);
    my_rank = rank;
    CHECK(size == (int)bl_dist_launcher_size(NULL), "MPI's size %d is the launcher's", size);
    CHECK(bl_dist_uses_mpi(d), "joined through MPI");
    CHECK(bl_dist_local_size(d) == size, "all %d ranks on this machine, not %d", size, bl_dist_local_size(d));

    if (die == rank) raise(SIGKILL); /* the others wait in the gather below: the job must end anyway */

    /* gather: each item computed by its owner only; every rank ends with every record, in item order,
     * for runs of items that start anywhere (first) */
    for (size_t first = 0; first <= 4; first++)
        for (size_t n = 0; n <= 11; n++) {
            rec *r = calloc(n + 1, sizeof *r);
            for (size_t i = 0; i < n; i++) {
                r[i].owner = -1;
                if (bl_dist_owner(d, first + i) != rank) continue;
                r[i] = (rec){.item = first + i, .value = 1.0 / (double)(first + i + 3), .owner = (char)rank};
            }
            CHECK(bl_dist_gather(d, r, first, n, sizeof *r, &err) == BL_OK, "%s", err.message);
            for (size_t i = 0; i < n; i++)
                CHECK(r[i].item == first + i && r[i].value == 1.0 / (double)(first + i + 3) &&
                          r[i].owner == (char)((first + i) % (size_t)size),
                      "first %zu n %zu item %zu: item %llu value %g owner %d", first, n, i, r[i].item, r[i].value,
                      r[i].owner);
            free(r);
        }
    /* bcast: rank 0's bytes everywhere */
    char buf[64];
    snprintf(buf, sizeof buf, "from rank %d", rank);
    CHECK(bl_dist_bcast(d, buf, sizeof buf, &err) == BL_OK, "%s", err.message);
    CHECK(strcmp(buf, "from rank 0") == 0, "bcast gave '%s'", buf);

    /* agree: nobody failed; then ranks 1 and 2 fail: every rank gets rank 1's status and message */
    CHECK(bl_dist_agree(d, BL_OK, &err) == BL_OK, "all well");
    bl_status mine = BL_OK;
    if (rank >= 1) mine = rank == 1 ? BL_EIO : BL_EFORMAT;
    if (mine) snprintf(err.message, sizeof err.message, "trouble on %d", rank);
    bl_status got = bl_dist_agree(d, mine, &err);
    CHECK(got == BL_EIO, "agreed on %d", (int)got);
    CHECK(strstr(err.message, "trouble on 1") != NULL, "message '%s'", err.message);
    if (rank != 1) CHECK(strncmp(err.message, "rank 1: ", 8) == 0, "named rank: '%s'", err.message);

    /* same: equal data passes; the last rank's other bytes are refused on every rank, naming it */
    const char data[] = "context,scale_out,runtime\n";
    CHECK(bl_dist_same(d, data, sizeof data, "data.tsv", &err) == BL_OK, "%s", err.message);
    char other[sizeof data];
    memcpy(other, data, sizeof data);
    if (rank == size - 1) other[0] = 'C';
    got = bl_dist_same(d, other, sizeof other, "data.tsv", &err);
    char want[32];
    snprintf(want, sizeof want, "rank %d read", size - 1);
    CHECK(got == BL_EINVAL && strstr(err.message, "data.tsv differs") && strstr(err.message, want),
          "same: %d '%s'", (int)got, err.message);

    int bad = failures;
    bl_dist_close(d);
    if (rank == 0) printf("%s: %d ranks, %s\n", argv[0], size, bad ? "FAILED" : "all checks passed");
    return bad ? 1 : 0;
}

/* Started with a launcher's variables (tests/test_dist_mpi.sh sets PMI_SIZE=3, as MPICH's Hydra would) but
 * without Open MPI's launcher: MPI sees one rank, and the group is refused naming the cause. */
static int test_other_launcher(void) {
    bl_error err = {0};
    bl_dist *d = NULL;
    bl_status st = bl_dist_open(NULL, NULL, &d, &err);
    CHECK(st == BL_EUNSUPPORTED && d == NULL, "status %d: %s", (int)st, err.message);
    CHECK(strstr(err.message, "another MPI") && strstr(err.message, "3 ranks"), "%s", err.message);
    bl_dist_close(d);
    printf("test_dist --other-launcher: %s\n", failures ? "FAILED" : "refused as it should");
    return failures ? 1 : 0;
}

int main(int argc, char **argv) {
    int ranks = 0, die = -1;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--other-launcher") == 0) return test_other_launcher();
        if (strcmp(argv[i], "--ranks") == 0) ranks = 1;
        else if (strcmp(argv[i], "--die") == 0 && i + 1 < argc) die = atoi(argv[++i]);
    }
    if (ranks) return test_ranks(argc, argv, die);
    test_launcher_size();
    test_group_of_one();
    test_open_alone();
    printf("test_dist: %s (MPI %s)\n", failures ? "FAILED" : "all checks passed", DIST_MPI ? "built" : "absent");
    return failures ? 1 : 0;
}
