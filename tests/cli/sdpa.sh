#!/bin/bash
# scaled_dot_product_attention on the NPU (compiler/canon_sdpa.c): written out as the attention
# chain and fused into one decode_attention kernel, on small IRs (tests/models/sdpa: is_causal
# with grouped-query heads, a bool mask with grouped-query heads, a query row masked everywhere)
# checked on Vulkan against the CPU reference's sdpa, and on transformers' Qwen2 export
# (attention x2, one a layer, as our own Qwen fixture's).
. tests/cli/lib.bash
for f in causal_gqa mask_gqa; do
    agrees "$f on Vulkan matches the CPU reference's sdpa" tests/models/sdpa/$f.json
    "$B" describe tests/models/sdpa/$f.json > "$T/d.txt" 2>&1
    ok "$f: one fused attention instance, one decode_attention kernel" \
       "grep -q 'attention x1' $T/d.txt && grep -q 'decode_attention x1' $T/d.txt && ! grep -q 'scaled_dot_product_attention x' $T/d.txt"
done
# a query row whose bool mask is false everywhere: zeros, as torch's sdpa gives (its safe
# softmax), fused or not (masked_row_io.safetensors: row 1 of the mask all false)
for nf in "" "--no-fuse attention" "--no-fuse attention --no-fuse masked_softmax"; do
    agrees "a fully masked row gives zeros on Vulkan ${nf:-(fused)}" tests/models/sdpa/masked_row.json $nf
done
"$B" describe tests/models/zoo/hf_qwen2/model.json > "$T/q.txt" 2>&1
ok "transformers Qwen2: attention x2 (one a layer), rope x4, rmsnorm x5, linear_glu x2" \
   "grep -Eq 'fused: .*rmsnorm x5 +rope x4 +attention x2 .*linear_glu x2' $T/q.txt"
# profile of a transformers export: its no_reuse plan (every output kept) levels the kernels
# otherwise, so errors go to the timed plan's kernels by identity, not by index
"$B" profile tests/models/zoo/hf_qwen2/model.json --iters 2 --format json > "$T/p.jsonl" 2>"$T/e"; rc=$?
ok "profile on transformers Qwen2: every NPU kernel timed and within tolerance" "[ $rc = 0 ] && python3 -c '
import json,sys
k=[json.loads(l) for l in open(sys.argv[1])]; ks=[o for o in k if o[\"kind\"]==\"kernel\" and o[\"target\"]==\"npu\"]
assert len(ks) > 20 and all(o[\"gpu_us\"] > 0 for o in ks), len(ks)
assert sum(o[\"verdict\"]==\"ok\" for o in ks) > 20 and not any(o[\"verdict\"]==\"MISMATCH\" for o in ks), [o[\"verdict\"] for o in ks]
' $T/p.jsonl"
