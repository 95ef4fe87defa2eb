#!/usr/bin/env bash
# test_manpages.sh — the man pages in man/ render without a warning and describe every option the
# programs' --help lists, read from the programs at test time (so a new option without its page entry
# fails here). For bellamy-train each command's options must appear in that command's section.
# Run by meson test with MAN_SOURCE_ROOT and MAN_<PROGRAM> (the built programs) set in
# man/meson.build. Exit 0 passed, 1 failed (each gap named), 77 skipped (no groff: Debian's groff-base).
set -uo pipefail

command -v groff >/dev/null 2>&1 || { echo "SKIP: groff not found (apt-get install groff-base)"; exit 77; }
man_dir=$MAN_SOURCE_ROOT/man
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }

# The page as a person reads it: plain text, no bold or underline.
render() { groff -man -Tascii -P-cbou "$1" 2>/dev/null; }

# The long options a --help text offers, one a line: those of its usage lines ("usage: ..." and the
# indented lines after it) and the first word of each entry of its option list ("  --data FILE  ...").
# Options that the prose only mentions ("ready for bellamy-predict --set") are not its own.
options_of() {
    awk '/^usage:/ { u = 1; print; next } u && /^[ \t]/ { print; next } { u = 0 } /^  --[a-z]/ { print $1 }' |
        grep -oE -- '--[a-z][a-z0-9-]*[a-z0-9]' | sort -u
}

# Fails for every option of list $2 that text $3 does not describe: an entry of its own, a line that
# starts with the option at the indentation of an option list (a .TP tag: "       --data FILE",
# "       --help, -h"). A mention in a synopsis or in another option's text is not enough. $1 says where.
need_options() {
    local where=$1 opts=$2 text=$3 o
    for o in $opts; do
        grep -qE -- "^ {7}${o}( |,|\$)" <<<"$text" || fail "$where: $o (in --help) has no entry"
    done
}


check_page() {
    local prog=$1 exe=$2 page=$man_dir/$1.1
    [ -f "$page" ] || { fail "$page: missing"; return; }
    [ -x "$exe" ] || { fail "$exe: not built"; return; }
    local warn
    for dev in utf8 ascii; do
        warn=$(groff -man -T"$dev" -ww -z "$page" 2>&1)
        [ -z "$warn" ] || fail "$page: groff -T$dev warns: $warn"
    done
    local text
    text=$(render "$page")
    [ -n "$text" ] || { fail "$page: renders to nothing"; return; }
    for sec in NAME SYNOPSIS DESCRIPTION OPTIONS ENVIRONMENT "EXIT STATUS" EXAMPLES "SEE ALSO"; do
        grep -qx "$sec" <<<"$text" || fail "$page: no $sec section"
    done
    grep -q "^NAME" <<<"$text" && ! grep -A1 '^NAME' <<<"$text" | grep -q "$prog" && fail "$page: NAME does not name $prog"
    local help
    help=$("$exe" --help 2>&1) || { fail "'$exe --help' failed"; return; }
    need_options "$prog.1" "$(options_of <<<"$help")" "$text"
    local n
    n=$(options_of <<<"$help" | wc -l)
    echo "$prog.1: $n options of --help described"
}

# bellamy-train: the commands its --help lists, each in its own section of COMMANDS with every option
# that the command's --help lists.
check_train() {
    local exe=$MAN_BELLAMY_TRAIN page=$man_dir/bellamy-train.1
    [ -f "$page" ] && [ -x "$exe" ] || return # check_page has said which is missing
    local text help cmds
    text=$(render "$page")
    help=$("$exe" --help 2>&1) || return # check_page has said so
    cmds=$(awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 }' <<<"$help")
    [ -n "$cmds" ] || { fail "bellamy-train --help lists no commands"; return; }
    grep -qx COMMANDS <<<"$text" || fail "$page: no COMMANDS section"
    local c section total=0
    for c in $cmds; do
        # the section: from the subsection heading "   c" to the next heading
        section=$(awk -v c="$c" '$0 == "   " c { on = 1; next } on && (/^   [^ ]/ || /^[A-Z]/) { exit } on' <<<"$text")
        if [ -z "$section" ]; then
            fail "$page: no section for the command '$c'"
            continue
        fi
        local ch
        ch=$("$exe" "$c" --help 2>&1) || { fail "'$exe $c --help' failed"; continue; }
        # --help itself is described once, under OPTIONS
        need_options "bellamy-train.1, command $c" "$(options_of <<<"$ch" | grep -vx -- --help)" "$section"
        total=$((total + $(options_of <<<"$ch" | wc -l)))
    done
    echo "bellamy-train.1: $(wc -w <<<"$cmds") commands, $total command options described in their sections"
}

check_page bellamy-train "$MAN_BELLAMY_TRAIN"
check_train
check_page bellamy-predict "$MAN_BELLAMY_PREDICT"
check_page dbmlsched-sim "$MAN_DBMLSCHED_SIM"
check_page bellamy-eval "$MAN_BELLAMY_EVAL"
[ "$fails" -eq 0 ] || { echo "$fails problem(s)" >&2; exit 1; }
echo "ok"
