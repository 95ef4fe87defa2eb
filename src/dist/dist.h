/* dist.h — the one place that knows MPI: the ranks of a job, work items spread over them by a static
 * schedule, and their results gathered as fixed-size records in item order.
 *
 * A program started by an MPI launcher (mpirun, mpiexec, srun) joins its ranks; any other start, and a
 * build without MPI, is a group of one that runs the very same calls. Nothing here sums floating-point
 * numbers across ranks: results travel whole, so what a job computes never depends on the rank count.
 * Only the thread that opened the group may call into it (MPI_THREAD_FUNNELED).
 * Uses the public bellamy.h types only: programs link it beside libbellamy.
 */
#ifndef BL_DIST_DIST_H
#define BL_DIST_DIST_H

#include <stddef.h>
#include <stdint.h>

#include "bellamy/bellamy.h"

typedef struct bl_dist bl_dist;

/* Joins the job's ranks (MPI_Init_thread) when the environment names a launcher, else makes a group of
 * one without touching MPI. BL_EUNSUPPORTED, saying how to fix it, when the launcher started several
 * ranks but this build has no MPI (each copy would do the whole work alone), or when MPI reports one rank
 * where the launcher started several (ranks of another MPI's launcher). At most one group per process. */
bl_status bl_dist_open(int *argc, char ***argv, bl_dist **out, bl_error *err);

/* Leaves the group (MPI_Finalize when it was joined). NULL is ignored. */
void bl_dist_close(bl_dist *d);

/* Ends every rank of the job at once, with code; for a rank that cannot go on alone. */
void bl_dist_abort(bl_dist *d, int code);

int bl_dist_rank(const bl_dist *d);     /* 0 .. size-1; 0 for NULL */
int bl_dist_size(const bl_dist *d);     /* ≥ 1; 1 for NULL */
int bl_dist_uses_mpi(const bl_dist *d); /* 1 when the group was joined through MPI */
int bl_dist_local_size(const bl_dist *d); /* ranks on this machine (sharing its CPUs), ≥ 1 */

/* The rank that computes item i (a static round-robin schedule: i mod size). */
int bl_dist_owner(const bl_dist *d, size_t item);

/* records holds the records of items first .. first+n_items-1, rec_size bytes each; each rank has filled
 * those of the items it owns. On return every rank holds every record, each exactly as its owner wrote it
 * (NULL d: nothing to do). */
bl_status bl_dist_gather(bl_dist *d, void *records, size_t first, size_t n_items, size_t rec_size, bl_error *err);

/* Copies n bytes of rank 0's buf into every rank's buf. */
bl_status bl_dist_bcast(bl_dist *d, void *buf, size_t n, bl_error *err);

/* Every rank passes the status of its own part (and its err with the message). When any rank failed,
 * every rank returns the status and message of the lowest failing rank (prefixed "rank R: " on the
 * others); otherwise BL_OK. A collective: every rank must call it. */
bl_status bl_dist_agree(bl_dist *d, bl_status local, bl_error *err);

/* Refuses (BL_EINVAL on every rank, naming `what` and the ranks that differ) when the n bytes of data
 * differ from rank 0's, compared by a 64-bit checksum (FNV-1a): e.g. a data file that is not the same on every
 * node. A collective. */
bl_status bl_dist_same(bl_dist *d, const void *data, size_t n, const char *what, bl_error *err);

/* bl_dist_same on the bytes of the file at path (read in pieces); BL_EIO naming it when it cannot be read. */
bl_status bl_dist_same_file(bl_dist *d, const char *path, bl_error *err);

/* How many ranks the environment says a launcher started (0: no launcher seen). getenv_fn: NULL for
 * getenv; tests pass their own. Reads Open MPI's, MPICH/Hydra's, PMI's/PMIx's and Slurm's variables. */
long bl_dist_launcher_size(const char *(*getenv_fn)(const char *name));

#endif
