/* dist.c — ranks over MPI, or a group of one (dist.h). */
#include "dist/dist.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bl_config.h"

/* BL_DIST_NO_MPI: this file built as a build without MPI builds it (tests/meson.build's test_dist_nompi
 * checks that path in an MPI build too). */
#if BL_HAVE_MPI && !defined(BL_DIST_NO_MPI)
#define DIST_MPI 1
#include <mpi.h>
#else
#define DIST_MPI 0
#endif

struct bl_dist {
    int rank, size;
    int local;                /* ranks on this machine */
    int mpi;                  /* joined through MPI_Init_thread: MPI_Finalize on close */
};

static int g_open;            /* one group per process: MPI can be initialised only once */

static bl_status fail(bl_error *err, bl_status st, const char *fmt, ...) {
    if (!err) return st;
    err->status = st;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    return st;
}

/* FNV-1a, 64 bits: enough to tell a differing input file (no adversary here), and no dependency. */
static uint64_t fnv1a(uint64_t h, const void *data, size_t n) {
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}
static const uint64_t fnv_basis = 0xcbf29ce484222325ull;

static const char *env_get(const char *name) {
    return getenv(name);
}

long bl_dist_launcher_size(const char *(*getenv_fn)(const char *name)) {
    static const char *const vars[] = {
        "OMPI_COMM_WORLD_SIZE",   /* Open MPI's mpirun */
        "PMI_SIZE",               /* MPICH's Hydra, Intel MPI, PMI-1/2 launchers */
        "MPI_LOCALNRANKS",        /* Hydra */
        "PMIX_SIZE",              /* some PMIx launchers */
        "SLURM_STEP_NUM_TASKS",   /* srun */
    };
    if (!getenv_fn) getenv_fn = env_get;
    long most = 0;
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv_fn(vars[i]);
        if (!v || !*v) continue;
        char *end;
        long n = strtol(v, &end, 10);
        if (*end != '\0' || n < 1) continue;  /* not a count: not a launcher we know */
        if (n > most) most = n;
    }
    return most;
}

bl_status bl_dist_open(int *argc, char ***argv, bl_dist **out, bl_error *err) {
    if (!out) return fail(err, BL_EINVAL, "bl_dist_open: NULL argument");
    *out = NULL;
    if (g_open) return fail(err, BL_EINVAL, "bl_dist_open: the ranks are already open in this process");
    const long launched = bl_dist_launcher_size(NULL);
    bl_dist *d = calloc(1, sizeof *d);
    if (!d) return fail(err, BL_ENOMEM, "out of memory");
    d->size = 1;
#if DIST_MPI
    if (launched >= 1) {
        int provided = 0;
        if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
            free(d);
            return fail(err, BL_EIO, "MPI_Init_thread failed: started by a launcher (%ld ranks) this MPI cannot "
                        "join; start the program with the mpirun of the MPI it was built with", launched);
        }
        d->mpi = 1;
        MPI_Comm_rank(MPI_COMM_WORLD, &d->rank);
        MPI_Comm_size(MPI_COMM_WORLD, &d->size);
        MPI_Comm node;
        if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) == MPI_SUCCESS) {
            MPI_Comm_size(node, &d->local);
            MPI_Comm_free(&node);
        }
        if (d->size == 1 && launched > 1) {
            MPI_Finalize();
            free(d);
            return fail(err, BL_EUNSUPPORTED,
                        "started as one of %ld ranks, but MPI sees a job of one rank: the launcher belongs to "
                        "another MPI than the one this program was built with; start it with that MPI's "
                        "mpirun (here: mpirun from Open MPI) or srun configured for it", launched);
        }
    }
#else
    (void)argc;
    (void)argv;
    if (launched > 1) {
        free(d);
        return fail(err, BL_EUNSUPPORTED,
                    "started as one of %ld ranks by an MPI launcher, but this build has no MPI: every rank would "
                    "do the whole work alone; rebuild with MPI (apt-get install libopenmpi-dev openmpi-bin, "
                    "meson setup -Dmpi=enabled) or run the program once, without mpirun", launched);
    }
#endif
    g_open = 1;
    *out = d;
    return BL_OK;
}

void bl_dist_close(bl_dist *d) {
    if (!d) return;
#if DIST_MPI
    if (d->mpi) MPI_Finalize();
#endif
    free(d);
    g_open = 0;
}

void bl_dist_abort(bl_dist *d, int code) {
#if DIST_MPI
    if (d && d->mpi) MPI_Abort(MPI_COMM_WORLD, code);
#endif
    (void)d;
    exit(code);
}

int bl_dist_rank(const bl_dist *d) {
    return d ? d->rank : 0;
}

int bl_dist_size(const bl_dist *d) {
    return d ? d->size : 1;
}

int bl_dist_local_size(const bl_dist *d) {
    return d && d->local > 1 ? d->local : 1;
}

int bl_dist_uses_mpi(const bl_dist *d) {
    return d ? d->mpi : 0;
}

int bl_dist_owner(const bl_dist *d, size_t item) {
    return (int)(item % (size_t)bl_dist_size(d));
}

bl_status bl_dist_gather(bl_dist *d, void *records, size_t first, size_t n_items, size_t rec_size, bl_error *err) {
    if (n_items && rec_size && !records) return fail(err, BL_EINVAL, "bl_dist_gather: NULL records");
    if (bl_dist_size(d) == 1 || n_items == 0 || rec_size == 0) return BL_OK;
#if DIST_MPI
    const size_t size = (size_t)d->size;
    const size_t most = (n_items + size - 1) / size; /* items of the rank that owns the most */
    if (rec_size > (size_t)INT_MAX / most || n_items > (size_t)INT_MAX / rec_size)
        return fail(err, BL_EINVAL, "bl_dist_gather: %zu records of %zu bytes exceed one MPI exchange (2 GiB)",
                    n_items, rec_size);
    int *counts = malloc(size * sizeof *counts), *displs = malloc(size * sizeof *displs);
    unsigned char *mine = malloc(most * rec_size), *all = malloc(n_items * rec_size);
    if (!counts || !displs || !mine || !all) {
        free(counts);
        free(displs);
        free(mine);
        free(all);
        return fail(err, BL_ENOMEM, "out of memory");
    }
    /* record i (item first+i) is owned by rank (first+i) mod size: the records of rank r start at
     * index (r - first) mod size and step by size; sent packed, received rank after rank */
    const size_t shift = first % size;
    size_t off = 0;
    for (size_t r = 0; r < size; r++) {
        size_t i0 = (r + size - shift) % size;
        size_t k = n_items > i0 ? (n_items - i0 + size - 1) / size : 0;
        counts[r] = (int)(k * rec_size);
        displs[r] = (int)off;
        off += k * rec_size;
    }
    size_t k = 0;
    for (size_t i = ((size_t)d->rank + size - shift) % size; i < n_items; i += size, k++)
        memcpy(mine + k * rec_size, (unsigned char *)records + i * rec_size, rec_size);
    int rc = MPI_Allgatherv(mine, counts[d->rank], MPI_BYTE, all, counts, displs, MPI_BYTE, MPI_COMM_WORLD);
    if (rc == MPI_SUCCESS)
        for (size_t r = 0; r < size; r++) {
            k = 0;
            for (size_t i = (r + size - shift) % size; i < n_items; i += size, k++)
                memcpy((unsigned char *)records + i * rec_size, all + (size_t)displs[r] + k * rec_size, rec_size);
        }
    free(counts);
    free(displs);
    free(mine);
    free(all);
    if (rc != MPI_SUCCESS) return fail(err, BL_EIO, "MPI_Allgatherv failed (error %d)", rc);
    return BL_OK;
#else
    return fail(err, BL_EINTERNAL, "bl_dist_gather: %d ranks without MPI", d->size);
#endif
}

bl_status bl_dist_bcast(bl_dist *d, void *buf, size_t n, bl_error *err) {
    if (bl_dist_size(d) == 1 || n == 0) return BL_OK;
    if (!buf) return fail(err, BL_EINVAL, "bl_dist_bcast: NULL buffer");
#if DIST_MPI
    for (size_t off = 0; off < n;) { /* in pieces below INT_MAX bytes */
        size_t k = n - off < (size_t)1 << 30 ? n - off : (size_t)1 << 30;
        int rc = MPI_Bcast((unsigned char *)buf + off, (int)k, MPI_BYTE, 0, MPI_COMM_WORLD);
        if (rc != MPI_SUCCESS) return fail(err, BL_EIO, "MPI_Bcast failed (error %d)", rc);
        off += k;
    }
    return BL_OK;
#else
    return fail(err, BL_EINTERNAL, "bl_dist_bcast: %d ranks without MPI", d->size);
#endif
}

bl_status bl_dist_agree(bl_dist *d, bl_status local, bl_error *err) {
    if (bl_dist_size(d) == 1) return local;
#if DIST_MPI
    int mine = local != BL_OK ? d->rank : d->size, first = d->size;
    int rc = MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS) return fail(err, BL_EIO, "MPI_Allreduce failed (error %d)", rc);
    if (first == d->size) return BL_OK;
    struct {
        int  status;
        char message[sizeof err->message];
    } m;
    memset(&m, 0, sizeof m);
    if (d->rank == first) {
        m.status = (int)local;
        if (err) memcpy(m.message, err->message, sizeof m.message);
        m.message[sizeof m.message - 1] = '\0';
    }
    rc = MPI_Bcast(&m, (int)sizeof m, MPI_BYTE, first, MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS) return fail(err, BL_EIO, "MPI_Bcast failed (error %d)", rc);
    if (d->rank == first) return local;
    return fail(err, (bl_status)m.status, "rank %d: %s", first, m.message);
#else
    return fail(err, BL_EINTERNAL, "bl_dist_agree: %d ranks without MPI", d->size);
#endif
}

bl_status bl_dist_same(bl_dist *d, const void *data, size_t n, const char *what, bl_error *err) {
    if (n && !data) return fail(err, BL_EINVAL, "bl_dist_same: NULL data");
    if (bl_dist_size(d) == 1) return BL_OK;
    const size_t size = (size_t)d->size;
    uint64_t *sums = calloc(size, sizeof *sums);
    if (!sums) return fail(err, BL_ENOMEM, "out of memory");
    sums[d->rank] = fnv1a(fnv_basis, data, n);
    /* each rank owns its own slot: the gather's item i is rank i */
    bl_status st = bl_dist_gather(d, sums, 0, size, sizeof *sums, err);
    if (st) {
        free(sums);
        return st;
    }
    char list[256] = "";
    size_t used = 0, differ = 0;
    for (size_t r = 1; r < size; r++) {
        if (sums[r] == sums[0]) continue;
        if (differ++ < 16 && used < sizeof list) {
            int w = snprintf(list + used, sizeof list - used, "%s%zu", used ? ", " : "", r);
            if (w > 0) used += (size_t)w;
        }
    }
    free(sums);
    if (!differ) return BL_OK;
    return fail(err, BL_EINVAL, "%s differs between the ranks: rank%s %s%s read other bytes than rank 0; give every "
                "node the same file (a shared file system, or copy it everywhere) and run again",
                what ? what : "the input", differ > 1 ? "s" : "", list, differ > 16 ? ", ..." : "");
}

bl_status bl_dist_same_file(bl_dist *d, const char *path, bl_error *err) {
    if (!path) return fail(err, BL_EINVAL, "bl_dist_same_file: NULL path");
    if (bl_dist_size(d) == 1) return BL_OK;
    /* every rank reaches the comparison, a rank that cannot read the file with its own checksum */
    uint64_t sum = fnv_basis;
    int bad = 0;
    FILE *f = fopen(path, "rb");
    if (!f) bad = 1;
    else {
        unsigned char buf[1 << 16];
        size_t n;
        while ((n = fread(buf, 1, sizeof buf, f)) > 0) sum = fnv1a(sum, buf, n);
        if (ferror(f)) bad = 1;
        fclose(f);
    }
    if (bad) sum = ~(uint64_t)d->rank; /* differs from every other rank's */
    return bl_dist_same(d, &sum, sizeof sum, path, err);
}
