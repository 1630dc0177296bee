#!/bin/bash
# The layering rules of docs (DESIGN.md "Layout"): Vulkan headers only in runtime/vulkan/, Graphviz
# only in viz/, ncursesw only in tui/, nothing includes tui/ but the entry point app/main.c, common/ includes no other folder of
# ours, compiler/ none of runtime/ app/ viz/ tui/, runtime/ none of app/ viz/ tui/, viz/ none of
# app/ tui/ (tests may include anything). A quoted include is judged by the folder of the file
# it names, however it is spelled ("../x/", root-relative "x/", or beside the file). Prints each
# violation; exit 1 if there is one.
# Usage: tools/deps_check.sh [ROOT]   (default: the checkout this script is in)
root=${1:-$(dirname "$0")/..}
cd "$root" || exit 2
bad=0
v() { echo "deps-check: $1"; bad=1; }
inc() { grep -Hn '^[[:space:]]*#[[:space:]]*include' "$@" 2>/dev/null; }
for f in $(ls common/*.[ch] compiler/*.[ch] compiler/*/*.[ch] runtime/*.[ch] runtime/*/*.[ch] viz/*.[ch] app/*.[ch] tui/*.[ch] 2>/dev/null); do
    dir=${f%%/*}
    while IFS= read -r line; do
        case "$line" in
        *'<vulkan/'*) case "$f" in runtime/vulkan/*) ;; *) v "$line: Vulkan headers belong in runtime/vulkan/" ;; esac ;;
        *'<gvc'*|*'<graphviz/'*|*'<cgraph'*) [ "$dir" = viz ] || v "$line: Graphviz belongs in viz/" ;;
        *curses*) [ "$dir" = tui ] || v "$line: ncursesw belongs in tui/" ;;
        esac
        # a quoted include names a folder of ours whichever way it is spelled: "../runtime/x.h",
        # root-relative "runtime/x.h" (the build has -I.), or "x.h" beside the file
        q=$(printf '%s\n' "$line" | sed -n 's/^[^:]*:[0-9]*:[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p')
        [ -n "$q" ] || continue
        case "$q" in
        ../*/*) to=${q#../}; to=${to%%/*} ;;
        */*) to=${q%%/*} ;;
        *) to=$dir ;;
        esac
        case " common compiler runtime viz app tui " in *" $to "*) ;; *) continue ;; esac
        [ "$to" = "$dir" ] && continue
        case "$dir:$to" in
        *:tui) [ "$f" = app/main.c ] || v "$line: nothing includes tui/ (but the entry point app/main.c)" ;;
        common:*) v "$line: common/ includes libc only" ;;
        compiler:common) ;;
        compiler:*) v "$line: compiler/ may include only itself and common/" ;;
        runtime:common|runtime:compiler) ;;
        runtime:*) v "$line: runtime/ may include only itself, common/ and compiler/" ;;
        viz:app) v "$line: viz/ may not include app/" ;;
        esac
    done < <(inc "$f")
done
[ $bad = 0 ] && echo "deps-check: ok"
exit $bad
