#!/bin/sh
# test_includes.sh — the consumers of the library see it through its public face only (issue 20):
# every `#include "..."` in src/cli/ and src/sched/ names a public header ("bellamy/..."), a shared
# helper of src/common/ ("common/...") or a header of the folder itself ("cli/..." in src/cli,
# "sched/..." in src/sched), and for src/cli the programs' MPI layer ("dist/..."). Anything else (api/, data/, encode/, model/, modelfile/, nn/, the generated
# bl_config.h, a path with "..") fails the test, naming the file, the line and the include.
# Also checks that each allowed header exists, so a rename cannot leave a stale rule passing, and that
# no file of bench/ includes one of tests/ (benchmarks link no test fixture).
# Usage: test_includes.sh [SOURCE_ROOT]   (default: INCLUDES_SOURCE_ROOT, else the folder above this one)
set -u
root=${1:-${INCLUDES_SOURCE_ROOT:-$(dirname "$0")/..}}
bad=0
checked=0
for dir in cli sched; do
    folder="$root/src/$dir"
    if [ ! -d "$folder" ]; then
        echo "test_includes: $folder: no such folder" >&2
        exit 1
    fi
    # every C source and header, in sub-folders too (a new one cannot escape the rule)
    for f in $(find "$folder" -type f \( -name '*.c' -o -name '*.h' \) | sort); do
        checked=$((checked + 1))
        # line number and header of every quoted include, blanks after '#' allowed
        lines=$(grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f" |
                sed 's/^\([0-9]*\):[^"]*"\([^"]*\)".*/\1 \2/')
        [ -n "$lines" ] || continue
        printf '%s\n' "$lines" | while read -r line hdr; do
            case "$hdr" in
                *..*) ok=0 ;;
                bellamy/*) ok=1; where="$root/include/$hdr" ;;
                common/*) ok=1; where="$root/src/$hdr" ;;
                "$dir"/*) ok=1; where="$root/src/$hdr" ;;
                dist/*) ok=0; [ "$dir" = cli ] && ok=1; where="$root/src/$hdr" ;;   # the programs' MPI ranks
                *) ok=0 ;;
            esac
            rel="src/$dir/${f#"$folder"/}"
            if [ "$ok" = 0 ]; then
                echo "$rel:$line: #include \"$hdr\": not a public header (bellamy/...), src/common/ or src/$dir/'s own;" \
                     "use the public calls of include/bellamy/*.h instead" >&2
                echo bad
            elif [ ! -f "$where" ]; then
                echo "$rel:$line: #include \"$hdr\": no such header ($where)" >&2
                echo bad
            fi
        done
    done
done > "${TMPDIR:-/tmp}/test_includes.$$"
# bench/ holds benchmarks: none includes a test's file (tests/...); what both need belongs in src/
for f in $(find "$root/bench" -type f \( -name '*.c' -o -name '*.h' \) | sort); do
    grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"\(\.\./\)*tests/' "$f" | while IFS=: read -r line inc; do
        echo "bench/${f#"$root/bench/"}:$line: $inc: bench/ includes no test file; move what it needs into src/" >&2
        echo bad
    done
done >> "${TMPDIR:-/tmp}/test_includes.$$"
bad=$(grep -c bad "${TMPDIR:-/tmp}/test_includes.$$")
rm -f "${TMPDIR:-/tmp}/test_includes.$$"
if [ "$checked" -eq 0 ]; then
    echo "test_includes: no source files under $root/src/cli or $root/src/sched" >&2
    exit 1
fi
if [ "$bad" -gt 0 ]; then
    echo "test_includes: $bad include(s) reach past the public face or into tests/" >&2
    exit 1
fi
echo "test_includes: $checked files in src/cli and src/sched include only public, common and own headers; bench/ none of tests/"
