#!/bin/bash
# profile and bisect: formats, JSON schema of every line, exit codes, --save/--baseline, and
# bisect naming exactly the instance broken with --break (each instance in turn, both modes,
# two broken instances found by minimal), on the CPU backend here and on Vulkan in vulkan.sh.
. tests/cli/lib.bash
schema() { python3 -c '
import json,sys
want=sys.argv[2]
for l in open(sys.argv[1]):
    o=json.loads(l); assert o["schema"]==want and "kind" in o, l
' "$1" "$2"; }
M=tests/models/convnet/model.json
# convnet compiles to 8 kernels: 3 convs, two of them K-split into a partials pass and a reduce

"$B" profile $M --backend cpu --iters 3 --format json > "$T/p.jsonl"; rc=$?
ok "profile json exit 0" "[ $rc = 0 ]"
ok "profile json lines carry the schema" "schema $T/p.jsonl npu-explore/profile/1"
ok "one kernel line per kernel and a summary" "[ \$(grep -c '\"kind\":\"kernel\"' $T/p.jsonl) = 8 ] && grep -q '\"kind\":\"summary\".*\"kernels\":8' $T/p.jsonl"
ok "every kernel compared ok but the K-splits' partial passes (their output is the reduce's)" \
    "! grep -q MISMATCH $T/p.jsonl && [ \$(grep -c '\"verdict\":\"ok\"' $T/p.jsonl) = 6 ] \
     && [ \$(grep '\"verdict\":\"-\"' $T/p.jsonl | grep -c '\"kernel\":\"conv2d_part\"') = 2 ]"
"$B" profile $M --backend cpu --iters 1 --break F2 > "$T/pbk.txt"
ok "--break: the broken kernel's row is not judged, the corrupt kernel after it is the first MISMATCH" \
    "[ \"\$(grep -E '^[0-9]+ ' $T/pbk.txt | grep -m1 MISMATCH | awk '{print \$2}')\" = corrupt ] \
     && grep -E '^[0-9]+ +conv2d_red_b ' $T/pbk.txt | grep -qE ' -  +- *$'"
"$B" profile $M --backend cpu --iters 2 --time-only --format json > "$T/pt.jsonl"; rc=$?
ok "--time-only: every kernel timed, none judged, no CPU reference time" \
    "[ $rc = 0 ] && [ \$(grep -c '\"kind\":\"kernel\"' $T/pt.jsonl) = 8 ] && ! grep -q '\"verdict\":\"ok\"' $T/pt.jsonl \
     && [ \$(grep -c '\"cpu_us\":-1.000' $T/pt.jsonl) = 8 ] && grep -q '\"cpu_ref_us\":-1.000' $T/pt.jsonl"
"$B" profile $M --backend cpu --iters 2 --time-only > "$T/pt.txt"
ok "--time-only table: '-' for CPU time and error, the total says why" \
    "grep -q 'no cpu reference (--time-only)' $T/pt.txt && [ \$(grep -cE '^[0-9]+ .* -  +- *$' $T/pt.txt) = 8 ]"
"$B" profile $M --backend cpu --iters 2 --format csv > "$T/p.csv"
ok "csv has a header and 8 rows" "head -1 $T/p.csv | grep -q '^index,kernel,' && [ \$(wc -l < $T/p.csv) = 9 ]"
"$B" profile $M --backend cpu --iters 2 --save "$T/base.jsonl" > /dev/null
"$B" profile $M --backend cpu --iters 2 --no-fuse F3 --baseline "$T/base.jsonl" > "$T/cmp.txt"; rc=$?
ok "baseline comparison shows deltas and new kernels" "[ $rc = 0 ] && grep -q 'vs baseline' $T/cmp.txt && grep -q ' new' $T/cmp.txt && grep -qE '[+-][0-9.]+%' $T/cmp.txt"
"$B" profile $M --backend cpu --baseline "$T/nonexistent" > /dev/null 2>"$T/e"; rc=$?
ok "missing baseline: exit 2 naming the file" "[ $rc = 2 ] && grep -q nonexistent $T/e"
"$B" profile $M --backend cpu --iters 2 --break F2 > "$T/pb.txt"
ok "a broken kernel shows as MISMATCH in the profile" "grep -q 'corrupt' $T/pb.txt && grep -q MISMATCH $T/pb.txt"

"$B" bisect $M --backend cpu > "$T/b0.txt"; rc=$?
ok "nothing to bisect: exit 0" "[ $rc = 0 ] && grep -q 'nothing to bisect' $T/b0.txt"
for f in F1 F2 F3; do
    for mode in first minimal; do
        "$B" bisect $M --backend cpu --break $f --mode $mode > "$T/b.txt"; rc=$?
        ok "bisect $mode names $f exactly" "[ $rc = 0 ] && [ \$(grep -c '^culprit' $T/b.txt) = 1 ] && grep -q '^culprit: $f ' $T/b.txt"
    done
done
"$B" bisect $M --backend cpu --break F1,F3 --mode minimal > "$T/b2.txt"; rc=$?
ok "minimal finds both broken instances" "[ $rc = 0 ] && grep -q '^culprit: F1 ' $T/b2.txt && grep -q '^culprit: F3 ' $T/b2.txt && [ \$(grep -c '^culprit' $T/b2.txt) = 2 ]"
"$B" bisect $M --backend cpu --break F2 --json > "$T/b.jsonl"
ok "bisect JSON lines carry the schema and the culprit" "schema $T/b.jsonl npu-explore/bisect/1 && grep -q '\"kind\":\"culprit\",\"fusion\":\"F2\",\"pattern\":\"conv_relu\"' $T/b.jsonl"
ok "the culprit names its first diverging tensor" "grep -q '\"first_diverging\":\"relu_1\"' $T/b.jsonl"
# a culprit with no kernel of its own (qwen2_tiny decode: F22 folds F8's silu and mul into F9's
# GEMV): the line names the kernel its ops run inside in the plan bisected (the one describe shows),
# never a kernel of the plan with only the culprit on
Q=tests/models/qwen2_tiny/decode.json
k=$("$B" describe $Q --break F8 | awk '$3 == "gemv_glu_r" && $NF == "F9" {print $1; exit}')
"$B" bisect $Q --backend cpu --break F8 > "$T/bq.txt"; rc=$?
"$B" bisect $Q --backend cpu --break F8 --json > "$T/bq.jsonl"
ok "bisect --break F8 (folded into F9's kernel $k): the culprit line names kernel $k and where mul_10 is computed" \
    "[ $rc = 0 ] && [ -n '$k' ] && grep -q \"^culprit: F8 silu_mul \\[silu,mul_10\\]: no kernel of its own, its ops run inside kernel $k (gemv_glu_r, F9); with only it on, the first diverging tensor is 'mul_10' (computed inside kernel $k) \" $T/bq.txt \
     && ! grep -q 'of that plan' $T/bq.txt"
ok "bisect --json: the culprit's kernel $k, own_kernel false, host F9, tensor_kernel $k" \
    "grep -q '\"fusion\":\"F8\",\"pattern\":\"silu_mul\",\"nodes\":\"silu,mul_10\",\"kernel\":$k,\"own_kernel\":false,\"host_fusion\":\"F9\",\"first_diverging\":\"mul_10\",\"tensor_kernel\":$k,' $T/bq.jsonl"
"$B" bisect $M --backend cpu --no-fuse all > "$T/b3.txt" 2>&1; rc=$?
ok "no instances switched on: nothing to bisect, exit 0" "[ $rc = 0 ] && grep -q '0 of 0 on' $T/b3.txt && grep -q 'nothing to bisect' $T/b3.txt"
"$B" bisect $M --backend cpu --mode sideways > /dev/null 2>"$T/e"; rc=$?
ok "bad --mode: exit 2" "[ $rc = 2 ] && grep -q 'first or minimal' $T/e"
"$B" bisect $M --backend cpu --break F9 > /dev/null 2>"$T/e"; rc=$?
ok "--break of an unknown instance: exit 2" "[ $rc = 2 ] && grep -q 'F9' $T/e"
printf 'profile 2\nbisect first\n' | "$B" --batch $M --backend cpu --break F3 --json -x - > "$T/s.jsonl"; rc=$?
ok "session profile and bisect commands" "[ $rc = 0 ] && grep -q '\"kind\":\"culprit\",\"fusion\":\"F3\"' $T/s.jsonl && grep -q 'npu-explore/profile/1' $T/s.jsonl"
