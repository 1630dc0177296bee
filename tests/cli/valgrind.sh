#!/bin/bash
# valgrind memcheck on one full `run --check` on the Vulkan backend (lavapipe): no invalid read,
# write or use of uninitialised memory anywhere (tests/valgrind.supp names the one loader false
# positive). Runs the debug build: memcheck does not combine with AddressSanitizer.
# It needs a second, non-ASan build and runs the driver under memcheck: `make test-long` runs it.
. tests/cli/lib.bash
if [ -z "$NPU_TEST_LONG" ]; then echo "# valgrind: make test-long runs this memcheck"; exit 0; fi
B=build/debug/npu-explore
command -v valgrind >/dev/null || { echo "not ok 1 valgrind is not installed (the Makefile's deps install it)"; exit 1; }
[ -x "$B" ] || make -s MODE=debug all >/dev/null || { echo "not ok 1 cannot build $B"; exit 1; }
valgrind -q --error-exitcode=9 --suppressions=tests/valgrind.supp "$B" run tests/models/mlp/model.json --check > "$T/out" 2>&1; rc=$?
ok "memcheck clean on a full Vulkan run of mlp" "[ $rc = 0 ] && grep -q '1 ok, 0 mismatch' $T/out || { grep -A12 '== [A-Z]' $T/out | head -30; false; }"
