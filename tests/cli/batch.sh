#!/bin/bash
# --batch: scripts from stdin and files, JSON lines with schema/kind, exit codes, on-error.
. tests/cli/lib.bash
M=tests/models/qwen2_tiny/decode.json
printf 'pass list\nfusion list\nfusion off rmsnorm\ncheck\nhelp\necho hi\n' |
    "$B" --batch $M --json -x - > "$T/out.jsonl" 2>"$T/err"; rc=$?
ok "json script exit 0" "[ $rc = 0 ]"
ok "every line is JSON with schema and kind" "python3 -c '
import json,sys
for l in open(\"$T/out.jsonl\"):
    o=json.loads(l); assert o[\"schema\"].startswith(\"npu-explore/\") and \"kind\" in o, l
'"
ok "pass list has 13 passes" "[ \$(grep -c '\"kind\":\"pass\"' $T/out.jsonl) = 13 ]"
ok "fusion lines as CLI.md shows" "grep -q '\"id\":\"F1\",\"pattern\":\"rmsnorm\",\"nodes\":\[\"pow_1\"' $T/out.jsonl"
ok "check summary ok" "grep -q '\"kind\":\"summary\".*\"mismatch\":0' $T/out.jsonl"
printf 'echo a\nfrobnicate\necho b\n' > "$T/bad.txt"
"$B" --batch $M -x "$T/bad.txt" > "$T/o2" 2>"$T/e2"; rc=$?
ok "failing command stops with exit 2" "[ $rc = 2 ] && grep -q a $T/o2 && ! grep -q b $T/o2 && grep -q \"unknown command 'frobnicate'\" $T/e2"
printf 'set on-error continue\nfusion off F99\necho b\n' | "$B" --batch $M -x - > "$T/o3" 2>/dev/null; rc=$?
ok "on-error continue keeps going, exit code kept" "[ $rc = 2 ] && grep -q b $T/o3"
"$B" --batch tests/models/mlp/model.json > "$T/o4"; rc=$?
ok "no script: describe and check" "[ $rc = 0 ] && grep -q '^program' $T/o4 && grep -q '1 ok' $T/o4"
"$B" --batch tests/models/mlp/model.json --break F1 > /dev/null 2>&1; rc=$?
ok "mismatching check exits 1" "[ $rc = 1 ]"
"$B" --batch tests/models/mlp/model.json --random-weights 3 > "$T/o5" 2>&1; rc=$?
ok "generated weights: checked against the CPU reference, not the file made with the real ones" "[ $rc = 0 ] && grep -q 'reference: the CPU reference' $T/o5"
"$B" --batch tests/models/mlp/model.json --random-weights 3 --break F1 > /dev/null 2>&1; rc=$?
ok "... a broken kernel fails that check" "[ $rc = 1 ]"
