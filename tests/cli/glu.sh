#!/bin/bash
# linear_glu (compiler/fuse_patterns.c, fuse_concat.c): prefill's gate and up linears, silu and
# mul as one matmul with the GLU in its epilogue. qwen2_tiny prefill: one matmul_glu_nb per layer,
# no silu_mul kernel, 4 kernels and 2 levels fewer; `--no-fuse linear_glu` gives back the plan of
# before (tests/golden/qwen2_tiny_prefill.noglu.describe.txt; refreshed by UPDATE_GOLDEN=1);
# Qwen2.5-1.5B prefill on nv-coopmat: one 128-tile GLU GEMM per layer, split in 3 with the GLU
# in its reduce (594 kernels in 367 levels -> 510 in 339, in f16: its mask converted by the host); the decodes keep their plans (no instance: at most 4 rows); run
# --check against PyTorch on Vulkan and the CPU backend, the session's switch, bisect naming it.
. tests/cli/lib.bash
P=tests/models/qwen2_tiny/prefill.json
"$B" describe $P > "$T/on.txt" 2>&1
ok "qwen2_tiny prefill: 30 kernels in 19 levels, two linear_glu, no silu_mul" \
   "grep -q '^kernels  30 (30 npu, 0 cpu) in 19 levels' $T/on.txt && grep -q 'linear_glu x2' $T/on.txt && grep -q 'matmul_glu_nb x2' $T/on.txt && ! grep -q 'silu_mul' $T/on.txt && grep -q '2 interleave' $T/on.txt"
ok "the GLU kernel reads x and the interleaved weight, writes the mul's output" \
   "grep -Eq 'matmul_glu_nb +8 +mul_9,linear_4\|linear_5.weight@glu -> mul_10 ' $T/on.txt"
"$B" describe $P --no-fuse linear_glu > "$T/off.txt" 2>&1
G=tests/golden/qwen2_tiny_prefill.noglu.describe.txt
[ "${UPDATE_GOLDEN:-0}" = 1 ] && cp "$T/off.txt" $G
ok "--no-fuse linear_glu: the plan of before (golden)" "diff -u $G $T/off.txt > $T/d.txt || { head -20 $T/d.txt; false; }"
"$B" describe $P --dump-after fuse > /dev/null 2> "$T/p.txt"
ok "the fuse pass records both instances over gate, silu, up, mul" \
   "grep -q 'fusion F8 linear_glu \[linear_4, silu, linear_5, mul_10\]' $T/p.txt && grep -q 'fusion F17 linear_glu' $T/p.txt"
Q=tests/models/qwen2_5_1_5b/prefill.json
"$B" describe $Q --tier nv-coopmat > "$T/q.txt" 2>&1
ok "Qwen2.5-1.5B prefill nv-coopmat: 510 kernels in 339 levels, the GLU GEMM split in 3 (420 workgroups) and matmul_red_glu_nb x28, no silu_mul" \
   "grep -q '^kernels  510 (510 npu, 0 cpu) in 339 levels' $T/q.txt && grep -q 'matmul_red_glu_nb x28' $T/q.txt && ! grep -q silu_mul $T/q.txt && grep -Eq 'matmul_cml_part +10 +mul_9,linear_4\|linear_5.weight@glu .* 420x1x1 ' $T/q.txt"
"$B" describe $Q --tier nv-coopmat --no-fuse linear_glu > "$T/q0.txt" 2>&1
ok "Qwen2.5-1.5B prefill without it: 594 kernels in 367 levels, silu_mul x28" \
   "grep -q '^kernels  594 (594 npu, 0 cpu) in 367 levels' $T/q0.txt && grep -q 'silu_mul x28' $T/q0.txt"
for d in tests/models/qwen2_tiny/decode.json tests/models/qwen2_5_1_5b/decode.json; do
    "$B" describe $d --tier nv-coopmat > "$T/d1.txt" 2>&1
    "$B" describe $d --tier nv-coopmat --no-fuse linear_glu > "$T/d0.txt" 2>/dev/null # (warns: no instance)
    ok "$d: no linear_glu, the same plan with or without it" "! grep -q glu_nb $T/d1.txt && ! grep -q 'linear_glu' $T/d1.txt && cmp -s $T/d1.txt $T/d0.txt"
done
for be in vulkan cpu; do agrees "prefill --check on $be with linear_glu" $P --backend $be; done
agrees "prefill --check fp32 with linear_glu" $P --dtype fp32
printf 'fusion off linear_glu\nfusion list\ncheck\n' | "$B" --batch $P -x - > "$T/s.txt" 2>&1; rc=$?
ok "session: fusion off linear_glu falls back to silu_mul (34 kernels), check passes" \
   "[ $rc = 0 ] && grep -q 'fusions: 20 of 20 on, 34 kernels' $T/s.txt && grep -Eq '^F8 +on +silu_mul' $T/s.txt && grep -q ', 0 mismatch' $T/s.txt"
"$B" bisect $P --break F8 --mode first --json > "$T/b.jsonl" 2>"$T/e"; rc=$?
ok "bisect first --break F8 names F8 (linear_glu)" "[ $rc = 0 ] && grep -q '\"kind\":\"culprit\",\"fusion\":\"F8\",\"pattern\":\"linear_glu\"' $T/b.jsonl"
