#!/usr/bin/env bash
# test_package.sh — what this build would ship, checked from outside (run by meson test; the PKG_*
# variables come from tests/meson.build).
#   test_package.sh linkage   libbellamy.so and the programs link no CUDA library (readelf -d NEEDED,
#                             ldd); the programs of src/cli link libbellamy.so, not the internal archive;
#                             without BLAS (-Dblas=disabled) neither libbellamy.so nor bellamy.pc names it;
#                             the generated bellamy.pc names no toolkit, build-tree or other
#                             absolute path; the CUDA module, when built, links the CUDA runtime and
#                             exports its entry point alone
#   test_package.sh install   meson install --destdir into a temporary staging root holds the programs,
#                             the library, its header and .pc, the schemas, the man pages, the model-file
#                             reader and (only when built) the CUDA module; nothing installed names the
#                             build tree (RUNPATH, .pc) or needs CUDA but the module
# Exit 0 passed, 1 failed (each problem named), 77 skipped (no readelf).
set -uo pipefail

mode=${1:-}
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
command -v readelf >/dev/null 2>&1 || { echo "SKIP: readelf not found (binutils)"; exit 77; }

cuda_re='cuda|cublas|nvrtc|nvidia'

# The shared libraries an ELF file needs, one a line.
needed() { readelf -d "$1" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\].*/\1/p'; }

# ELF file $1 needs no CUDA library, neither directly (NEEDED) nor through its dependencies (ldd).
no_cuda() {
    local f=$1 n
    n=$(needed "$f" | grep -iE "$cuda_re")
    [ -z "$n" ] || fail "$f needs $(echo $n) (readelf -d); the CUDA code belongs in the CUDA module only"
    if command -v ldd >/dev/null 2>&1; then
        n=$(ldd "$f" 2>/dev/null | grep -iE "$cuda_re" | awk '{print $1}')
        [ -z "$n" ] || fail "$f loads $(echo $n) (ldd)"
    fi
}

# No RUNPATH/RPATH of ELF file $1 points into the build or source tree.
no_tree_rpath() {
    local r
    r=$(readelf -d "$1" 2>/dev/null | sed -n 's/.*(R\(UN\)\{0,1\}PATH).*\[\(.*\)\].*/\2/p')
    case "$r" in
    *"$PKG_BUILD_ROOT"* | *"$PKG_SOURCE_ROOT"*) fail "$1 has the run path '$r' into the build tree" ;;
    esac
}

# A .pc file names no CUDA, no build or source tree and no absolute path but its prefix.
clean_pc() {
    local pc=$1
    [ -s "$pc" ] || { fail "$pc: missing or empty"; return; }
    local bad
    bad=$(grep -inE "$cuda_re" "$pc")
    [ -z "$bad" ] || fail "$pc names CUDA: $bad"
    bad=$(grep -nF -e "$PKG_BUILD_ROOT" -e "$PKG_SOURCE_ROOT" "$pc")
    [ -z "$bad" ] || fail "$pc names the build or source tree: $bad"
    # every word of every line but prefix=: no absolute path (-L/..., -I/..., /x/libfoo.so, -Wl,-rpath,/...)
    local abs
    abs=$(awk '!/^prefix=/ { line = $0; sub(/^[A-Za-z_.]+[:=][ \t]*/, "", line); n = split(line, w, /[ \t]+/)
                for (i = 1; i <= n; i++) { x = w[i]; sub(/^(-L|-I|-isystem|-Wl,-rpath,|-Wl,-rpath=)/, "", x)
                                           if (x ~ /^\//) print NR ": " w[i] } }' "$pc")
    [ -z "$abs" ] || fail "$pc: absolute paths (only prefix= may hold one): $(echo $abs)"
}

linkage() {
    local lib=$PKG_LIB
    [ -f "$lib" ] || { fail "$lib: not built"; return; }
    echo "libbellamy.so NEEDED: $(needed "$lib" | tr '\n' ' ')"
    no_cuda "$lib"
    for p in bellamy-train bellamy-predict dbmlsched-sim bellamy-model-reader bellamy-eval; do
        [ -f "$PKG_BUILD_ROOT/$p" ] && no_cuda "$PKG_BUILD_ROOT/$p"
    done
    # The programs of src/cli are built on the shared library's public calls (and their support library),
    # so the linker refuses an internal one: they need libbellamy.so and none of its own dependencies.
    for p in bellamy-train bellamy-predict dbmlsched-sim; do
        [ -f "$PKG_BUILD_ROOT/$p" ] || { fail "$p: not built"; continue; }
        local n
        n=$(needed "$PKG_BUILD_ROOT/$p")
        grep -q '^libbellamy\.so\.' <<<"$n" || fail "$p does not link libbellamy.so (NEEDED: $(echo $n))"
        grep -qE '^lib(hdf5|xxhash|openblas)' <<<"$n" && fail "$p links the library's dependencies (NEEDED: $(echo $n)): the internal archive?"
    done
    # Without BLAS (-Dblas=disabled) neither the library nor its .pc names OpenBLAS.
    if [ "${PKG_HAVE_BLAS:-1}" = 0 ]; then
        needed "$lib" | grep -q '^libopenblas' && fail "libbellamy.so needs OpenBLAS in a build without BLAS"
        grep -qi openblas "$PKG_PC" && fail "bellamy.pc names OpenBLAS in a build without BLAS: $(grep -i openblas "$PKG_PC")"
    fi
    clean_pc "$PKG_PC"
    echo "bellamy.pc: $(grep -E '^(Libs|Requires)' "$PKG_PC" | tr '\n' ' ')"
    local mod=$PKG_CUDA_MODULE
    if [ "$PKG_HAVE_CUDA" = 1 ]; then
        [ -f "$mod" ] || { fail "$mod: the CUDA module was not built (this build found CUDA)"; return; }
        local n
        n=$(needed "$mod")
        echo "libbellamy-cuda.so NEEDED: $(echo $n)"
        grep -q '^libcudart' <<<"$n" || fail "$mod does not need libcudart: is it the CUDA module?"
        grep -q '^libcublas' <<<"$n" || fail "$mod does not need libcublas"
        local syms
        syms=$(nm -D --defined-only "$mod" 2>/dev/null | awk '{print $NF}' | sort -u | tr '\n' ' ')
        [ "$syms" = "bl_cuda_module_entry " ] || fail "$mod exports '$syms', not bl_cuda_module_entry alone"
    elif [ -e "$mod" ]; then
        fail "$mod exists in a build without CUDA"
    fi
}

install_check() {
    stage=$(mktemp -d "${TMPDIR:-/tmp}/bellamy-stage.XXXXXX") || { fail "mktemp"; return; }
    trap 'rm -rf "$stage"' EXIT # global: the trap runs after this function has returned
    if ! $PKG_MESON install -C "$PKG_BUILD_ROOT" --destdir "$stage" --no-rebuild --quiet >"$stage.log" 2>&1; then
        cat "$stage.log" >&2
        rm -f "$stage.log"
        fail "meson install --destdir $stage"
        return
    fi
    rm -f "$stage.log"
    local bin=$stage$PKG_BINDIR lib=$stage$PKG_LIBDIR share=$stage$PKG_DATADIR man=$stage$PKG_MANDIR
    for p in bellamy-train bellamy-predict dbmlsched-sim bellamy-eval; do
        [ -x "$bin/$p" ] || fail "$PKG_BINDIR/$p not installed"
        [ -x "$bin/$p" ] && { no_cuda "$bin/$p"; no_tree_rpath "$bin/$p"; }
    done
    local reader=$stage$PKG_LIBEXECDIR/bellamy/bellamy-model-reader
    [ -x "$reader" ] || fail "$PKG_LIBEXECDIR/bellamy/bellamy-model-reader not installed"
    [ -f "$lib/libbellamy.so.2" ] || fail "$PKG_LIBDIR/libbellamy.so.2 not installed"
    if [ -f "$lib/libbellamy.so.2" ]; then
        no_cuda "$lib/libbellamy.so.2"
        no_tree_rpath "$lib/libbellamy.so.2"
    fi
    for h in bellamy.h train.h sched.h; do
        cmp -s "$PKG_SOURCE_ROOT/include/bellamy/$h" "$stage$PKG_INCLUDEDIR/bellamy/$h" ||
            fail "$PKG_INCLUDEDIR/bellamy/$h missing or not include/bellamy/$h"
    done
    clean_pc "$lib/pkgconfig/bellamy.pc"
    # every schema of the source tree, in its sub-folder, unchanged
    local n=0
    for f in "$PKG_SOURCE_ROOT"/datasets/*/*.schema; do
        local rel=${f#"$PKG_SOURCE_ROOT"/datasets/}
        if cmp -s "$f" "$share/bellamy/schemas/$rel"; then n=$((n + 1))
        else fail "$PKG_DATADIR/bellamy/schemas/$rel missing or not datasets/$rel"; fi
    done
    [ "$n" -gt 0 ] || fail "no schemas found under $PKG_SOURCE_ROOT/datasets"
    local m=0
    for page in bellamy-train bellamy-predict dbmlsched-sim bellamy-eval; do
        if cmp -s "$PKG_SOURCE_ROOT/man/$page.1" "$man/man1/$page.1"; then m=$((m + 1))
        else fail "$PKG_MANDIR/man1/$page.1 missing or not man/$page.1"; fi
    done
    local mod=$lib/bellamy/libbellamy-cuda.so
    if [ "$PKG_HAVE_CUDA" = 1 ]; then
        [ -f "$mod" ] || fail "$PKG_LIBDIR/bellamy/libbellamy-cuda.so not installed (this build has CUDA)"
        [ -f "$mod" ] && no_tree_rpath "$mod"
    else
        [ ! -e "$mod" ] || fail "$PKG_LIBDIR/bellamy/libbellamy-cuda.so installed by a build without CUDA"
    fi
    # no installed file names the staging root (a DESTDIR leak)
    local leak
    leak=$(grep -rlF "$stage" "$stage" 2>/dev/null | head -3)
    [ -z "$leak" ] || fail "installed files name the staging root: $leak"
    echo "installed: $(cd "$stage" && find . -type f | wc -l) files; $n schemas, $m man pages," \
         "CUDA module: $([ -f "$mod" ] && echo yes || echo no)"
}

case $mode in
linkage) linkage ;;
install) install_check ;;
*) echo "usage: test_package.sh linkage|install" >&2; exit 2 ;;
esac
[ "$fails" -eq 0 ] || { echo "$fails problem(s)" >&2; exit 1; }
echo "ok"
