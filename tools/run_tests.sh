#!/bin/bash
# Runs every test binary in BUILD/tests and the CLI test scripts in tests/cli/, JOBS at a time
# (default: the number of cores), then prints each one's counts and time, the slowest ones, and
# the closing line "N passed, N failed". A binary that dies without a cmocka summary counts as
# failed. Usage: tools/run_tests.sh [BUILD] [NAME...]  (NAME: test_x or cli/x; default all)
# NPU_TEST_LONG=1 (make test-long) enables the large-size cases that the quick suite leaves out.
build=${1:-build/asan}
shift
export NPU_EXPLORE="$PWD/$build/npu-explore"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/tests/lsan.supp:print_suppressions=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# no developer's tuning cache (app/tuned.h): plans compile with the defaults unless a test names
# a cache itself (--tuned FILE)
export NPU_TUNED=none
export logdir="$build/test-logs"
mkdir -p "$logdir"
rm -f "$logdir"/*.result
jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}

# One test: its log in $logdir/NAME.log, one line "name passed failed seconds note" in
# $logdir/NAME.result.
run_one() {
    local kind=$1 path=$2 name log start rc p f foreign="" note=""
    if [ "$kind" = bin ]; then name=$(basename "$path"); else name=cli/$(basename "$path" .sh); fi
    log="$logdir/${name//\//_}.log"
    start=$(date +%s.%N)
    if [ "$kind" = bin ]; then
        # A test source whose first line starts "/* run_tests: foreign-leaks-ok" runs with
        # LeakSanitizer reports that do not fail the run by themselves; the log is then scanned,
        # and any leak whose stack names a source file of ours still fails it. test_vk_core.c
        # says why (Mesa's lavapipe and the validation layer leak inside themselves).
        if sed -n 1p "tests/$name.c" 2>/dev/null | grep -q '^/\* run_tests: foreign-leaks-ok'; then
            foreign=1
            LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}exitcode=0" "$path" >"$log" 2>&1
        else
            "$path" >"$log" 2>&1
        fi
        rc=$?
        if [ -n "$foreign" ]; then
            local ours nforeign
            ours=$(awk '/^(Direct|Indirect) leak of/ { blk = $0 "\n"; inb = 1; next }
                        inb && /^$/ { if (hit) printf "%s", blk; inb = 0; hit = 0; next }
                        inb { blk = blk $0 "\n";
                              if ($0 ~ /[ \/](runtime|common|compiler|app|tui|viz|tests)\/[^ ]*\.c:/) hit = 1 }
                        END { if (inb && hit) printf "%s", blk }' "$log")
            nforeign=$(grep -cE '^(Direct|Indirect) leak of' "$log")
            note="  [$nforeign leak reports; only those naming our sources fail]"
            if [ -n "$ours" ]; then
                echo "$ours" | head -30 >>"$log"
                echo "[  FAILED  ] 1 test(s): leak in our code (above)" >>"$log"
                rc=1
            fi
        fi
        p=$(grep -E '^\[  PASSED  \] [0-9]+ test' "$log" | awk '{s+=$4} END {print s+0}')
        f=$(grep -E '^\[  FAILED  \] [0-9]+ test' "$log" | awk '{s+=$4} END {print s+0}')
    else
        bash "$path" >"$log" 2>&1
        rc=$?
        p=$(grep -c '^ok ' "$log"); f=$(grep -c '^not ok ' "$log")
    fi
    if [ "$rc" != 0 ] && [ "$f" = 0 ]; then f=1; fi
    printf '%s %d %d %.1f%s\n' "$name" "$p" "$f" "$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')" "$note" \
        >"$logdir/${name//\//_}.result"
}
export -f run_one

# The job list, longest first by the last run's times (a fresh build: Vulkan tests and CLI
# scripts first, they are the long ones), so the slowest never start last.
list=$(mktemp)
for t in "$build"/tests/test_*; do
    [ -x "$t" ] || continue
    case "$t" in *.o|*.d) continue;; esac
    echo "bin $t"
done >"$list"
for s in tests/cli/*.sh; do [ -f "$s" ] && echo "cli $s"; done >>"$list"
if [ $# -gt 0 ]; then
    want=" $* "
    while read -r kind path; do
        n=$(basename "$path" .sh); [ "$kind" = cli ] && n=cli/$n
        case "$want" in *" $n "*) echo "$kind $path";; esac
    done <"$list" >"$list.sel"
    mv "$list.sel" "$list"
fi
times="$build/test-times${NPU_TEST_LONG:+-long}"
order() {
    while read -r kind path; do
        n=$(basename "$path" .sh); [ "$kind" = cli ] && n=cli/$n
        s=$(awk -v n="$n" '$1 == n { print $2 }' "$times" 2>/dev/null)
        if [ -z "$s" ]; then case "$n" in test_vk_*|cli/*) s=1000;; *) s=0;; esac; fi
        echo "$s $kind $path"
    done <"$list" | sort -k1,1nr | cut -d' ' -f2-
}
start=$(date +%s)
order | xargs -P "$jobs" -L 1 bash -c 'run_one "$0" "$1"'
rm -f "$list"

pass=0; fail=0; failed_names=()
: >"$times.new"
for r in "$logdir"/*.result; do
    [ -f "$r" ] || continue
    read -r name p f secs note <"$r"
    pass=$((pass + p)); fail=$((fail + f))
    echo "$name $secs" >>"$times.new"
    printf '%-28s %3d passed %3d failed  (%ss)%s\n' "$name" "$p" "$f" "$secs" "${note:+  $note}"
    if [ "$f" != 0 ]; then
        failed_names+=("$name")
        log="$logdir/${name//\//_}.log"
        if [[ $name == cli/* ]]; then grep -A3 '^not ok ' "$log" | head -40
        else grep -E 'FAIL|ERROR|error|Sanitizer|runtime error|Assert|assert' "$log" | head -40; fi
    fi
done
echo "slowest (of $(( $(date +%s) - start ))s wall, $jobs at a time):"
sort -k2,2nr "$times.new" | head -8 | awk '{ printf "  %-26s %6.1fs\n", $1, $2 }'
# this run's times replace those of the same tests; the others' stay for the next ordering
[ -f "$times" ] && awk 'NR == FNR { seen[$1] = 1; next } !($1 in seen)' "$times.new" "$times" >>"$times.new"
mv "$times.new" "$times"
[ ${#failed_names[@]} -gt 0 ] && echo "failed: ${failed_names[*]} (logs in $logdir)"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
