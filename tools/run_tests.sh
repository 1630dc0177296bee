#!/bin/bash
# Runs every test binary in BUILD/tests and the CLI test scripts in tests/cli/, then prints the
# closing line "N passed, N failed". A binary that dies without a cmocka summary counts as failed.
build=${1:-build/asan}
export NPU_EXPLORE="$PWD/$build/npu-explore"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/tests/lsan.supp:print_suppressions=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
pass=0; fail=0; failed_names=()
logdir="$build/test-logs"; mkdir -p "$logdir"
for t in "$build"/tests/test_*; do
    [ -x "$t" ] || continue
    case "$t" in *.o|*.d) continue;; esac
    name=$(basename "$t")
    start=$(date +%s)
    # A test source whose first line starts "/* run_tests: foreign-leaks-ok" runs with LeakSanitizer
    # reports that do not fail the run by themselves; the log is then scanned, and any leak whose
    # stack names a source file of ours still fails it. test_vk_core.c uses this because Mesa's
    # lavapipe and the validation layer leak inside themselves (that file says how we know).
    foreign=""
    if sed -n 1p "tests/$name.c" 2>/dev/null | grep -q '^/\* run_tests: foreign-leaks-ok'; then
        foreign=1
    fi
    if [ -n "$foreign" ]; then
        LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}exitcode=0" "$t" >"$logdir/$name.log" 2>&1
    else
        "$t" >"$logdir/$name.log" 2>&1
    fi
    rc=$?
    if [ -n "$foreign" ]; then
        ours=$(awk '/^(Direct|Indirect) leak of/ { blk = $0 "\n"; inb = 1; next }
                    inb && /^$/ { if (hit) printf "%s", blk; inb = 0; hit = 0; next }
                    inb { blk = blk $0 "\n";
                          if ($0 ~ /[ \/](runtime|common|compiler|app|tui|viz|tests)\/[^ ]*\.c:/) hit = 1 }
                    END { if (inb && hit) printf "%s", blk }' "$logdir/$name.log")
        nforeign=$(grep -cE '^(Direct|Indirect) leak of' "$logdir/$name.log")
        if [ -n "$ours" ]; then
            echo "$ours" | head -30
            echo "[  FAILED  ] 1 test(s): leak in our code (above)" >>"$logdir/$name.log"
            rc=1
        fi
    fi
    p=$(grep -E '^\[  PASSED  \] [0-9]+ test' "$logdir/$name.log" | awk '{s+=$4} END {print s+0}')
    f=$(grep -E '^\[  FAILED  \] [0-9]+ test' "$logdir/$name.log" | awk '{s+=$4} END {print s+0}')
    if [ "$rc" != 0 ] && [ "$f" = 0 ]; then f=1; fi
    pass=$((pass + p)); fail=$((fail + f))
    printf '%-28s %3d passed %3d failed  (%ds)%s\n' "$name" "$p" "$f" $(( $(date +%s) - start )) \
        "${foreign:+  [$nforeign leak reports; only those naming our sources fail]}"
    if [ "$f" != 0 ]; then failed_names+=("$name"); sed -n '1,200p' "$logdir/$name.log" | grep -E 'FAIL|ERROR|error|Sanitizer|runtime error|Assert|assert' | head -40; fi
done
for s in tests/cli/*.sh; do
    [ -f "$s" ] || continue
    name=$(basename "$s" .sh)
    start=$(date +%s)
    bash "$s" >"$logdir/cli_$name.log" 2>&1
    rc=$?
    p=$(grep -c '^ok ' "$logdir/cli_$name.log"); f=$(grep -c '^not ok ' "$logdir/cli_$name.log")
    if [ "$rc" != 0 ] && [ "$f" = 0 ]; then f=1; fi
    pass=$((pass + p)); fail=$((fail + f))
    printf '%-28s %3d passed %3d failed  (%ds)\n' "cli/$name" "$p" "$f" $(( $(date +%s) - start ))
    if [ "$f" != 0 ]; then failed_names+=("cli/$name"); grep -A3 '^not ok ' "$logdir/cli_$name.log" | head -40; fi
done
[ ${#failed_names[@]} -gt 0 ] && echo "failed: ${failed_names[*]} (logs in $logdir)"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
