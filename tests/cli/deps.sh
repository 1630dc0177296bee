#!/bin/bash
# `make deps-check` (tools/deps_check.sh): the layering rules hold in this checkout, and a copy
# with violations planted is refused, naming each.
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
n=0
ok() { n=$((n + 1)); if eval "$2"; then echo "ok $n $1"; else echo "not ok $n $1"; fi; }
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
