#!/bin/bash
# Tuning knobs (compiler/tuning.def, docs/tuning.md): the table and its generated doc agree,
# lowering reads no environment, --tune and the NPU_* override reach the plan and its record
# (describe, text and --json, and the .npubin), and bad knobs or values exit 2 naming the knob.
. tests/cli/lib.bash
M=tests/models/qwen2_tiny/decode.json
ok "docs/tuning.md is 'tuning --markdown' (regenerate it: $B tuning --markdown > docs/tuning.md)" \
   "diff -u docs/tuning.md <('$B' tuning --markdown) > '$T/d'"
ok "tuning lists every knob of compiler/tuning.def" \
   "[ \$('$B' tuning | tail -n +2 | wc -l) = \$(grep -c '^X(' compiler/tuning.def) ]"
ok "no getenv in the lowering (compiler/lower/): tuning comes from CompileOptions" \
   "! grep -n 'getenv\|NPU_[A-Z_]*\"' compiler/lower/*.c"
ok "the NPU_* tuning variables are read in tuning.c alone" \
   "[ \"\$(grep -rl --include='*.c' 'getenv' compiler | sort | tr '\n' ' ')\" = 'compiler/tuning.c ' ]"
"$B" describe $M --kernel-cache none > "$T/plain" 2>&1
ok "a plan of the default tuning prints no tuning line" "! grep -q '^tuning' '$T/plain'"
"$B" describe $M --kernel-cache none --tune conv.target=396 > "$T/same" 2>&1
ok "--tune at a knob's default changes nothing" "cmp -s '$T/plain' '$T/same'"
"$B" describe $M --kernel-cache none --tune gemv.g=1 --tune attn.splits=1 > "$T/t" 2>&1
ok "describe prints the plan's tuning" "grep -qx 'tuning   gemv.g=1 attn.splits=1' '$T/t'"
ok "the knobs reach lowering (the gemv grids differ)" \
   "[ \$(diff '$T/plain' '$T/t' | grep -c '^>.*gemv') -gt 2 ]"
"$B" describe $M --kernel-cache none --json --tune gemv.wg=64 > "$T/j" 2>&1
ok "describe --json carries it" "grep -q '\"tuning\":{\"gemv.wg\":64},\"tuning_env\":\[\]' '$T/j'"
NPU_ATTN_SPLITS=1 "$B" compile $M --kernel-cache none --tune gemv.wg=64 -o "$T/p.npubin" > /dev/null 2>&1
"$B" describe "$T/p.npubin" > "$T/f" 2>&1
ok "the .npubin keeps it, with the environment variable that set a knob" \
   "grep -qx 'tuning   gemv.wg=64 attn.splits=1   (from the environment: NPU_ATTN_SPLITS)' '$T/f'"
"$B" compile $M --kernel-cache none -o "$T/a.npubin" > /dev/null 2>&1
"$B" compile $M --kernel-cache none --tune cm.tile=auto -o "$T/b.npubin" > /dev/null 2>&1
ok "a .npubin of the default tuning is the same file as without --tune" "cmp -s '$T/a.npubin' '$T/b.npubin'"
"$B" describe $M --tune gemv.wgs=64 > "$T/o" 2>&1; rc=$?
ok "an unknown knob: exit 2, named" "[ $rc = 2 ] && grep -q \"unknown knob 'gemv.wgs'\" '$T/o'"
"$B" describe $M --tune cm.tile=96 > "$T/o" 2>&1; rc=$?
ok "a value out of range: exit 2, the knob and its range" \
   "[ $rc = 2 ] && grep -q 'cm.tile.*a power of two in 64..128, or auto' '$T/o'"
NPU_ATTN=100,1 "$B" describe $M > "$T/o" 2>&1; rc=$?
ok "a bad NPU_* variable: exit 2, the variable and the knob" \
   "[ $rc = 2 ] && grep -q \"NPU_ATTN='100,1'.*attn.wg must be a multiple of 32 in 32..512\" '$T/o'"
"$B" run "$T/a.npubin" --tune gemv.wg=64 > "$T/o" 2>&1; rc=$?
ok "--tune on a compiled .npubin is refused" "[ $rc = 2 ] && grep -q -- '--tune applies when compiling' '$T/o'"
