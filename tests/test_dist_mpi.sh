#!/usr/bin/env bash
# test_dist_mpi.sh — src/dist on real ranks: test_dist --ranks under mpirun with 2 and 3 ranks (an uneven
# split of the items), a rank of another MPI's launcher (refused), then a rank that kills itself: the job
# must end non-zero, never hang.
# SKIP (77) where this build has no MPI or no mpirun is found. Usage: test_dist_mpi.sh TEST_DIST HAVE_MPI
set -u
exe=$1
[ "${2:-0}" = 1 ] || { echo "SKIP: this build has no MPI (meson setup -Dmpi=enabled with libopenmpi-dev)"; exit 77; }
command -v mpirun >/dev/null || { echo "SKIP: no mpirun on PATH (openmpi-bin)"; exit 77; }
# What Open MPI needs on one machine in a container: root allowed, more ranks than cores, no CMA
# (ptrace is often forbidden), no leak reports from MPI's own allocations under the sanitizers.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_rmaps_base_oversubscribe=1
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
fail=0
for np in 2 3; do
    if ! timeout 120 mpirun -np "$np" "$exe" --ranks; then
        echo "FAIL: test_dist --ranks on $np ranks"; fail=1
    fi
done
# a rank of another MPI's launcher (Hydra's PMI_SIZE, no Open MPI launcher): refused, never run alone
PMI_SIZE=3 timeout 60 "$exe" --other-launcher || { echo "FAIL: a rank of another launcher was not refused"; fail=1; }
start=$SECONDS
timeout 120 mpirun -np 3 "$exe" --ranks --die 1 >/dev/null 2>&1
rc=$?
if [ "$rc" -eq 124 ]; then
    echo "FAIL: a killed rank left the job hanging (killed by timeout after $((SECONDS - start)) s)"; fail=1
elif [ "$rc" -eq 0 ]; then
    echo "FAIL: a killed rank, yet mpirun exited 0"; fail=1
else
    echo "a killed rank ended the job: mpirun exit $rc after $((SECONDS - start)) s"
fi
exit $fail
