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
    "$t" >"$logdir/$name.log" 2>&1
    rc=$?
    p=$(grep -E '^\[  PASSED  \] [0-9]+ test' "$logdir/$name.log" | awk '{s+=$4} END {print s+0}')
    f=$(grep -E '^\[  FAILED  \] [0-9]+ test' "$logdir/$name.log" | awk '{s+=$4} END {print s+0}')
    if [ "$rc" != 0 ] && [ "$f" = 0 ]; then f=1; fi
    pass=$((pass + p)); fail=$((fail + f))
    printf '%-28s %3d passed %3d failed  (%ds)\n' "$name" "$p" "$f" $(( $(date +%s) - start ))
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
