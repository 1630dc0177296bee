#!/bin/bash
# The GEMV prologue folds (rmsnorm_linear, silu_mul_linear; compiler/fuse_fold.c) on qwen2_tiny:
# decode loses the rmsnorm and silu_mul kernels and their levels; `--no-fuse` of both folds gives
# back the kernels without them (tests/golden/qwen2_tiny_decode.nofold.describe.txt: on the
# branch that built them it was the describe of before the folds, with the instance count and
# the elementwise id adjusted; since rope_cache and the one-dispatch attention it is refreshed
# by UPDATE_GOLDEN=1);
# prefill keeps them and says why; the session switches a fold by id; decode and generate still
# match the PyTorch references with the folds on, on Vulkan and on the CPU backend.
. tests/cli/lib.bash
D=tests/models/qwen2_tiny/decode.json
"$B" describe $D > "$T/on.txt" 2>&1
ok "decode: 17 kernels in 12 levels with the folds (and decode_attention_cache)" "grep -q '^kernels  17 (17 npu, 0 cpu) in 12 levels' $T/on.txt"
ok "decode: no rmsnorm or silu_mul kernel, gemv_rms and gemv_glu_r instead" \
   "grep 'by shader' $T/on.txt | grep -vEq ' (rmsnorm|silu_mul) x' && grep -q 'gemv_rms x2' $T/on.txt && grep -q 'gemv_rms_nb x5' $T/on.txt && grep -q 'gemv_glu_r x2' $T/on.txt"
"$B" describe $D --no-fuse rmsnorm_linear --no-fuse silu_mul_linear > "$T/off.txt" 2>&1
G=tests/golden/qwen2_tiny_decode.nofold.describe.txt
[ "${UPDATE_GOLDEN:-0}" = 1 ] && cp "$T/off.txt" $G
ok "--no-fuse of both folds: the kernels without them (golden)" "diff -u $G $T/off.txt > $T/d.txt || { head -20 $T/d.txt; false; }"
"$B" describe $D --no-fuse rmsnorm_linear > "$T/r.txt" 2>&1
ok "--no-fuse rmsnorm_linear alone: the rmsnorm kernels back, silu_mul still folded" \
   "grep -q 'rmsnorm x5' $T/r.txt && grep -q 'gemv_glu_r x2' $T/r.txt && ! grep -q 'gemv_rms' $T/r.txt"
"$B" describe $D --no-fuse rmsnorm > "$T/rr.txt" 2>&1
ok "--no-fuse rmsnorm (the base) switches its folds off too" "! grep -q 'gemv_rms' $T/rr.txt && grep -q 'fused: 19 of 29 instances' $T/rr.txt"
"$B" describe tests/models/qwen2_tiny/prefill.json --dump-after fuse > /dev/null 2> "$T/p.txt"
# (silu_mul is linear_glu's in prefill: its fold's near miss is back with linear_glu off)
"$B" describe tests/models/qwen2_tiny/prefill.json --no-fuse linear_glu --dump-after fuse > /dev/null 2> "$T/p0.txt"
ok "prefill: why not fused" "grep -q 'not-fused rmsnorm_linear at mul_2: more than 4 rows: the tiled matmul has no prologue' $T/p.txt && grep -q 'not-fused silu_mul_linear at mul_10: more than 4 rows' $T/p0.txt"
"$B" describe tests/models/qwen2_tiny/prefill.json > "$T/pd.txt" 2>&1
ok "prefill: no fold instance, no gemv" "! grep -q 'gemv' $T/pd.txt && grep -q 'rmsnorm x5' $T/pd.txt"
printf 'fusion off F20\nfusion list\ncheck\n' | "$B" --batch $D -x - > "$T/s.txt" 2>&1; rc=$?
ok "session: fusion off F20 (a fold), check still passes" "[ $rc = 0 ] && grep -Eq '^F20 +off +rmsnorm_linear' $T/s.txt && grep -q 'fusions: 28 of 29 on, 18 kernels' $T/s.txt"
for be in vulkan cpu; do agrees "decode --check on $be with the folds" $D --backend $be; done
agrees "decode --check bf16 with the folds" $D --dtype bf16
# --break of a fold corrupts the first GEMV computing it; bisect first names the fold
"$B" bisect $D --break F20 --mode first --json > "$T/b.jsonl" 2>"$T/e"; rc=$?
ok "bisect first --break F20 names F20 (rmsnorm_linear)" "[ $rc = 0 ] && grep -q '\"kind\":\"culprit\",\"fusion\":\"F20\",\"pattern\":\"rmsnorm_linear\"' $T/b.jsonl"
