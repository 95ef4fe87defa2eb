#!/usr/bin/env bash
# test_mpi_pretrain.sh — bellamy-train pretrain over MPI ranks (issue 27): the model of 2 and 3 ranks (an
# uneven split) is the model of one process, bit for bit; more ranks than trials works and says so; data
# that differs between ranks, an unwritable --out and a killed rank each end the job non-zero, without a
# hang and with the old --out intact. SKIP (77) without MPI, mpirun or h5dump.
# Then bellamy-eval --quick on 2 ranks: every output file as one process writes it, but for the columns
# that time the work. Usage: test_mpi_pretrain.sh BELLAMY_TRAIN BELLAMY_EVAL HAVE_MPI
set -u
train=$1
eval=$2
shift
[ "${2:-0}" = 1 ] || { echo "SKIP: this build has no MPI (meson setup -Dmpi=enabled with libopenmpi-dev)"; exit 77; }
command -v mpirun >/dev/null || { echo "SKIP: no mpirun on PATH (openmpi-bin)"; exit 77; }
command -v h5dump >/dev/null || { echo "SKIP: no h5dump (hdf5-tools) to compare model files"; exit 77; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_rmaps_base_oversubscribe=1
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
dir=$(mktemp -d "${TMPDIR:-/tmp}/bellamy-mpi.XXXXXX")
trap 'rm -rf "$dir"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

# A model file's whole content at 17 digits, without the time it was written and the calibration's
# wall-clock seconds (the only fields that may differ).
dump() { h5dump -m '%.17g' "$1" | tail -n +2 | awk '
  /ATTRIBUTE "(created|seconds)" \{/ { skip = 1; depth = 0 }
  skip { n = gsub(/\{/, "{"); m = gsub(/\}/, "}"); depth += n - m; if (depth <= 0 && (n || m)) skip = 0; next }
  { print }'; }
same() { [ -s "$1" ] && [ -s "$2" ] && diff -q <(dump "$1") <(dump "$2") >/dev/null; }

"$train" synth --out-dir "$dir" --contexts 12 --reps 2 >/dev/null || { echo "FAIL: synth"; exit 1; }
args=(--data "$dir/synth.tsv" --schema "$dir/synth.schema" --trials 5 --epochs 30 --grace 10 --members 2
      --threads 1 --quiet)
"$train" pretrain "${args[@]}" --out "$dir/one.h5" >/dev/null || { echo "FAIL: one process"; exit 1; }
"$train" pretrain "${args[@]}" --seed 2 --out "$dir/seed2.h5" >/dev/null || { echo "FAIL: seed 2"; exit 1; }
same "$dir/one.h5" "$dir/seed2.h5" && bad "the comparison cannot tell two seeds' models apart"
for np in 2 3; do
    if ! timeout 300 mpirun -np $np "$train" pretrain "${args[@]}" --out "$dir/np$np.h5" >"$dir/np$np.out" 2>&1; then
        bad "mpirun -np $np: exit non-zero"; cat "$dir/np$np.out"
    elif ! same "$dir/one.h5" "$dir/np$np.h5"; then
        bad "$np ranks trained another model than one process"; diff <(dump "$dir/one.h5") <(dump "$dir/np$np.h5") | head
    else
        echo "ok: $np ranks, the model of one process bit for bit"
    fi
done
# more ranks than work items: 1 member x 2 trials on 3 ranks
idle=(--data "$dir/synth.tsv" --schema "$dir/synth.schema" --trials 2 --epochs 30 --grace 10 --members 1 --threads 1)
timeout 300 mpirun -np 3 "$train" pretrain "${idle[@]}" --out "$dir/idle3.h5" >"$dir/idle.out" 2>&1 ||
    bad "3 ranks for 2 trials failed: $(cat "$dir/idle.out")"
"$train" pretrain "${idle[@]}" --quiet --out "$dir/idle1.h5" >/dev/null
same "$dir/idle1.h5" "$dir/idle3.h5" || bad "3 ranks for 2 trials: another model than one process"
[ "$(grep -c 'ranks stay idle' "$dir/idle.out")" = 1 ] || bad "idle ranks not said once: $(cat "$dir/idle.out")"

cp "$dir/one.h5" "$dir/keep.h5"
sum=$(cksum <"$dir/keep.h5")
# data that differs between the ranks (MPMD: the same options, another file with other bytes)
{ cat "$dir/synth.tsv"; echo; } >"$dir/other.tsv"
other=(--data "$dir/other.tsv" "${args[@]:2}")
timeout 120 mpirun -np 1 "$train" pretrain "${args[@]}" --out "$dir/keep.h5" : \
    -np 1 "$train" pretrain "${other[@]}" --out "$dir/keep.h5" >"$dir/differ.out" 2>&1
rc=$?
{ [ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -q "differs between the ranks" "$dir/differ.out"; } ||
    bad "data differing between ranks: exit $rc, $(cat "$dir/differ.out")"
# --out that rank 0 cannot write: refused before training, on every rank
timeout 120 mpirun -np 2 "$train" pretrain "${args[@]}" --out "$dir/no/such/dir/m.h5" >"$dir/out.out" 2>&1
rc=$?
{ [ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -q -- "--out" "$dir/out.out"; } || bad "unwritable --out: exit $rc, $(cat "$dir/out.out")"
# a rank killed while training: the job ends non-zero, the old file intact
slow=(--data "$dir/synth.tsv" --schema "$dir/synth.schema" --trials 6 --epochs 100000 --grace 100000 --members 1
      --threads 1 --quiet --calibrate off)
timeout 120 mpirun -np 2 "$train" pretrain "${slow[@]}" --out "$dir/keep.h5" >"$dir/kill.out" 2>&1 &
job=$!
victim=
for _ in $(seq 100); do
    victim=$(pgrep -f -- "--epochs 100000" | while read -r p; do
        [ "$(cat /proc/$p/comm 2>/dev/null)" = bellamy-train ] && echo "$p"; done | tail -n 1)
    [ -n "$victim" ] && break
    sleep 0.2
done
if [ -z "$victim" ]; then
    bad "no rank of the slow pre-training found to kill"
    kill $job 2>/dev/null
else
    sleep 1
    kill -KILL "$victim"
fi
wait $job
rc=$?
[ $rc -ne 0 ] && [ $rc -ne 124 ] || bad "a killed rank: mpirun exit $rc (124: it hung)"
# SIGINT on mpirun (Ctrl-C): every rank ends, the job exits non-zero, nothing is left running
timeout 120 mpirun -np 2 "$train" pretrain "${slow[@]}" --seed 3 --out "$dir/keep.h5" >"$dir/int.out" 2>&1 &
job=$!
for _ in $(seq 100); do pgrep -f -- "--seed 3 --out $dir" >/dev/null && break; sleep 0.2; done
sleep 1
kill -INT "$job" 2>/dev/null
pkill -INT -P "$job" -x mpirun 2>/dev/null
wait $job
rc=$?
[ $rc -ne 0 ] && [ $rc -ne 124 ] || bad "SIGINT: mpirun exit $rc (124: it hung)"
for _ in $(seq 50); do pgrep -f -- "--seed 3 --out $dir" >/dev/null || break; sleep 0.2; done
pgrep -f -- "--seed 3 --out $dir" >/dev/null && bad "SIGINT left ranks running 10 s later"
[ "$(cksum <"$dir/keep.h5")" = "$sum" ] || bad "the old --out changed after failed runs"

# bellamy-eval: its outputs, the timing columns blanked (by name, from each file's header)
untimed() { awk -F'\t' -v OFS='\t' 'NR == 1 { for (i = 1; i <= NF; i++) if ($i ~ /seconds|_ms/) t[i] = 1 }
                                     { for (i in t) if (NR > 1) $i = "-"; print }' "$1"; }
ev=(--data "$dir/synth.tsv" --schema "$dir/synth.schema" --quick --quiet --folds 2 --max-n 2)   # 2 folds: one per rank
"$eval" "${ev[@]}" --out "$dir/ev1" >/dev/null 2>&1 || bad "bellamy-eval alone failed"
if ! timeout 300 mpirun -np 2 "$eval" "${ev[@]}" --out "$dir/ev2" >"$dir/ev2.log" 2>&1; then
    bad "mpirun -np 2 bellamy-eval: $(tail -5 "$dir/ev2.log")"
else
    n=0
    for f in "$dir"/ev1/*; do
        b=$(basename "$f"); n=$((n + 1))
        case "$b" in
            *.tsv) diff -q <(untimed "$f") <(untimed "$dir/ev2/$b") >/dev/null || bad "bellamy-eval on 2 ranks: $b differs" ;;
            *) cmp -s "$f" "$dir/ev2/$b" || bad "bellamy-eval on 2 ranks: $b differs" ;;
        esac
    done
    [ $n -ge 4 ] || bad "bellamy-eval wrote only $n files"
    [ $fail = 0 ] && echo "ok: bellamy-eval on 2 ranks, the $n files of one process"
fi
[ $fail = 0 ] && echo "test_mpi_pretrain: all checks passed"
exit $fail
