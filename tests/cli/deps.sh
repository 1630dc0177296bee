#!/bin/bash
# `make deps-check` (tools/deps_check.sh, tools/layers_check.sh): the layering rules hold in this
# checkout, by includes and by the per-layer libraries' symbols, and copies with violations
# planted are refused, naming each.
. tests/cli/lib.bash
bash tools/deps_check.sh > "$T/o" 2>&1; rc=$?
ok "the checkout keeps the layering rules" "[ $rc = 0 ] && grep -q 'deps-check: ok' $T/o"
mkdir -p "$T/c"
cp -r common compiler runtime viz app tui "$T/c/"
echo '#include <vulkan/vulkan.h>' >> "$T/c/compiler/graph.c"
echo '#include "../tui/internal.h"' >> "$T/c/app/session.c"
echo '#include "../runtime/exec.h"' >> "$T/c/compiler/plan.c"
echo '#include <ncursesw/curses.h>' >> "$T/c/viz/dot.c"
bash tools/deps_check.sh "$T/c" > "$T/o2" 2>&1; rc=$?
ok "planted violations: exit 1, each named" \
   "[ $rc = 1 ] && grep -q 'compiler/graph.c.*Vulkan' $T/o2 && grep -q 'app/session.c.*nothing includes tui' $T/o2 \
    && grep -q 'compiler/plan.c.*compiler/ may include only' $T/o2 && grep -q 'viz/dot.c.*ncursesw' $T/o2"
# an include spelled root-relative (the build has -I.) is judged by its folder too
mkdir -p "$T/d"
cp -r common compiler runtime viz app tui "$T/d/"
echo '#include "runtime/exec.h"' >> "$T/d/compiler/plan.c"
echo '#include "app/session.h"' >> "$T/d/viz/dot.c"
bash tools/deps_check.sh "$T/d" > "$T/o3" 2>&1; rc=$?
ok "root-relative includes across layers: exit 1, each named" \
   "[ $rc = 1 ] && grep -q 'compiler/plan.c.*compiler/ may include only' $T/o3 && grep -q 'viz/dot.c.*viz/ may not include app/' $T/o3"
# the same rules at link level (tools/layers_check.sh over the per-layer libraries): the build's
# libraries pass; a copy whose compiler/ library calls into runtime/ is named
L=$(dirname "${NPU_EXPLORE:-build/asan/npu-explore}")/lib
bash tools/layers_check.sh "$L" > "$T/o4" 2>&1; rc=$?
ok "the per-layer libraries use no symbol of a layer above them" "[ $rc = 0 ] && grep -q 'layers-check: ok' $T/o4"
mkdir -p "$T/l"
cp "$L"/libnpu_*.a "$T/l/"
printf 'int vk_backend_validation_errors(void *);\nint probe_(void);\nint probe_(void) { return vk_backend_validation_errors(0); }\n' > "$T/probe.c"
cc -c "$T/probe.c" -o "$T/probe.o" && ar rs "$T/l/libnpu_compiler.a" "$T/probe.o" 2>/dev/null
bash tools/layers_check.sh "$T/l" > "$T/o5" 2>&1; rc=$?
ok "a planted call from compiler/ up into runtime/: exit 1, named" \
   "[ $rc = 1 ] && grep -q \"compiler/ uses 'vk_backend_validation_errors'.*probe.o\" $T/o5"
