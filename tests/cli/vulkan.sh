#!/bin/bash
# The Vulkan backend end to end on lavapipe: every fixture compiled and run with --check against
# the PyTorch references with the fair tolerances of the fixtures' README, the Khronos validation
# layer (synchronization validation included) clean on a whole model, and bisect naming exactly
# the instance broken with --break for each fusion pattern of resnet18 and qwen2_tiny.
. tests/cli/lib.bash
# check FILE MAXREL [TOP]: every output ok with rel_l2 <= MAXREL; TOP: top-1/top-5 all agree
# and Pearson r > 0.999
check() { python3 -c '
import json,sys
rows=[json.loads(l) for l in open(sys.argv[1])]
outs=[r for r in rows if r["kind"]=="output"]
assert outs and all(r["verdict"]=="ok" and r["rel_l2"] <= float(sys.argv[2]) for r in outs), outs
if len(sys.argv) > 3:
    for r in outs:
        a,b=r["top1"].split("/"); c,d=r["top5"].split("/")
        assert a==b and c==d and r["pearson"] > 0.999, r
' "$@"; }
for m in mlp/model:2e-2 convnet/model:2e-2 resnet18/model:2e-2:top qwen2_tiny/prefill:3e-2 qwen2_tiny/decode:3e-2; do
    IFS=: read -r f tol top <<<"$m"
    "$B" run tests/models/$f.json --check --json > "$T/c.jsonl" 2>"$T/e"; rc=$?
    ok "$f on Vulkan matches PyTorch (rel_l2 <= $tol${top:+, top-1/top-5, r > 0.999})" "[ $rc = 0 ] && check $T/c.jsonl $tol $top || { head -5 $T/e; cat $T/c.jsonl; false; }"
done
"$B" run tests/models/mlp/model.json --check --dtype bf16 --json > "$T/c.jsonl"; rc=$?
ok "mlp in bf16 storage" "[ $rc = 0 ] && check $T/c.jsonl 3e-2"
"$B" run tests/models/convnet/model.json --check --dtype fp32 --json > "$T/c.jsonl"; rc=$?
ok "convnet in fp32 storage matches to 1e-4" "[ $rc = 0 ] && check $T/c.jsonl 1e-4"
NPU_VK_VALIDATE=1 "$B" run tests/models/qwen2_tiny/decode.json --check > "$T/v.txt" 2>&1; rc=$?
ok "validation layer (with synchronization validation) clean on qwen2_tiny decode" "[ $rc = 0 ] && ! grep -qi 'validation error' $T/v.txt"
NPU_VK_VALIDATE=1 "$B" run tests/models/convnet/model.json --check > "$T/v.txt" 2>&1; rc=$?
ok "validation layer clean on convnet" "[ $rc = 0 ] && ! grep -qi 'validation error' $T/v.txt"
"$B" run tests/models/mlp/model.json --device 7 > /dev/null 2>"$T/e"; rc=$?
ok "--device out of range: exit 3 with a message" "[ $rc = 3 ] && [ -s $T/e ]"
# mixed execution: one NPU op family at a time forced onto the CPU reference (--cpu-op); the
# boundary tensors move through the host with their casts, layouts and views
for m in "resnet18/model:aten.max_pool2d.default:2e-2" "convnet/model:aten.conv2d.default:2e-2" \
         "convnet/model:aten.adaptive_avg_pool2d.default:2e-2" \
         "qwen2_tiny/prefill:aten.linear.default:3e-2" "qwen2_tiny/prefill:aten.mul.Tensor:3e-2" \
         "qwen2_tiny/prefill:aten.embedding.default:3e-2" "qwen2_tiny/prefill:aten.softmax.int:3e-2" \
         "qwen2_tiny/decode:aten.index_copy.default:3e-2" "qwen2_tiny/decode:aten.transpose.int:3e-2"; do
    IFS=: read -r f op tol <<<"$m"
    "$B" run tests/models/$f.json --check --json --cpu-op $op > "$T/c.jsonl" 2>"$T/e"; rc=$?
    ok "$f with $op on the CPU still matches PyTorch" "[ $rc = 0 ] && check $T/c.jsonl $tol || { head -3 $T/e; false; }"
done
"$B" run tests/models/qwen2_tiny/prefill.json --check --json --cpu-op aten.linear.default \
    --cpu-op aten.mul.Tensor --cpu-op aten.add.Tensor --cpu-op aten.embedding.default \
    --cpu-op aten.rsqrt.default --cpu-op aten.pow.Tensor_Scalar --cpu-op aten.mean.dim \
    --cpu-op aten.silu.default --cpu-op aten.softmax.int --cpu-op aten.matmul.default \
    --cpu-op aten.cat.default --cpu-op aten.neg.default > "$T/c.jsonl" 2>"$T/e"; rc=$?
ok "qwen2_tiny prefill with most ops on the CPU (many partitions) still matches" "[ $rc = 0 ] && check $T/c.jsonl 3e-2 || { head -3 $T/e; false; }"
"$B" generate tests/models/qwen2_tiny --json > "$T/g.jsonl" 2>"$T/e"; rc=$?
ok "generate on Vulkan: the 9 greedy tokens of the reference, caches kept on the device, the next token picked by the GPU argmax, the steps queued back to back" "[ $rc = 0 ] && grep -q '\"reference\":\"match\"' $T/g.jsonl && grep -q '\"state\":\"device\"' $T/g.jsonl && grep -q '\"argmax\":\"gpu\"' $T/g.jsonl && grep -q '\"pipelined\":true' $T/g.jsonl && python3 -c 'import json,sys; o=json.loads(open(sys.argv[1]).readline()); assert len(o[\"tokens\"])==9 and o[\"prefill_rel_l2\"] < 3e-2, o' $T/g.jsonl"
# pipelined steps (two input slots, the next token fed on the device) against steps waited for
# one by one: the same tokens over 40 steps from another prompt (each slot used 20 times)
"$B" generate tests/models/qwen2_tiny --json --prompt-ids 5,6,7 --max-new 40 > "$T/gp.jsonl" 2>"$T/e"; rc=$?
"$B" generate tests/models/qwen2_tiny --json --prompt-ids 5,6,7 --max-new 40 --step-sync > "$T/gs.jsonl" 2>>"$T/e"; rc2=$?
ok "generate: decode steps queued back to back give the tokens of steps waited for one by one (--step-sync)" "[ $rc = 0 ] && [ $rc2 = 0 ] && grep -q '\"pipelined\":true' $T/gp.jsonl && grep -q '\"pipelined\":false' $T/gs.jsonl && python3 -c 'import json,sys; a=json.loads(open(sys.argv[1]).readline()); b=json.loads(open(sys.argv[2]).readline()); assert a[\"tokens\"]==b[\"tokens\"] and len(a[\"tokens\"])==40 and len(set(a[\"tokens\"]))>3, (a,b)' $T/gp.jsonl $T/gs.jsonl"
"$B" generate tests/models/qwen2_tiny --json --host-argmax > "$T/gh.jsonl" 2>"$T/e"; rc=$?
ok "generate --host-argmax: the logits read back, the same tokens" "[ $rc = 0 ] && grep -q '\"argmax\":\"host\"' $T/gh.jsonl && grep -q '\"reference\":\"match\"' $T/gh.jsonl && python3 -c 'import json,sys; a=json.loads(open(sys.argv[1]).readline()); b=json.loads(open(sys.argv[2]).readline()); assert a[\"tokens\"]==b[\"tokens\"], (a,b)' $T/g.jsonl $T/gh.jsonl"
"$B" generate tests/models/qwen2_tiny --json --backend cpu > "$T/gh.jsonl" 2>"$T/e"; rc=$?
ok "generate --backend cpu: the host's argmax, the reference's tokens" "[ $rc = 0 ] && grep -q '\"argmax\":\"host\"' $T/gh.jsonl && grep -q '\"reference\":\"match\"' $T/gh.jsonl"
"$B" generate tests/models/qwen2_tiny --json --cpu-op aten.argmax.default > "$T/gh.jsonl" 2>"$T/e"; rc=$?
ok "generate with the argmax forced onto the CPU: the host's argmax, the reference's tokens" "[ $rc = 0 ] && grep -q '\"argmax\":\"host\"' $T/gh.jsonl && grep -q '\"reference\":\"match\"' $T/gh.jsonl"
# logits of NaN alone (the final norm's weight NaN): an error naming them, on either path
mkdir -p "$T/nanq" && cp tests/models/qwen2_tiny/* "$T/nanq/" && python3 - "$T/nanq/weights.safetensors" <<'PY'
import json, struct, sys
f = open(sys.argv[1], "r+b"); n = struct.unpack("<Q", f.read(8))[0]; h = json.loads(f.read(n))
a, b = h["model.norm.weight"]["data_offsets"]; assert h["model.norm.weight"]["dtype"] == "BF16"
f.seek(8 + n + a); f.write(b"\xc0\x7f" * ((b - a) // 2))
PY
for a in "" --host-argmax; do
    "$B" generate "$T/nanq" $a > /dev/null 2>"$T/e"; rc=$?
    ok "generate ${a:-(GPU argmax)}: logits of NaN alone are an error, exit 2" "[ $rc = 2 ] && grep -q 'the logits are all NaN' $T/e"
done
"$B" run tests/models/mlp/model.json --random-weights 1 --check > "$T/rw" 2>&1; rc=$?
ok "run --check with generated weights compares with the CPU reference, not the file made with the real weights" "[ $rc = 0 ] && grep -q 'reference: the CPU reference' $T/rw && grep -q '1 ok, 0 mismatch' $T/rw"
"$B" run tests/models/mlp/model.json --random-weights 1 --break F1 --check > "$T/rw" 2>&1; rc=$?
ok "... and that comparison can fail (--break F1)" "[ $rc = 1 ] && grep -q MISMATCH $T/rw"
"$B" generate tests/models/qwen2_tiny --prefill-runs 3 --json --step-sync > "$T/g.jsonl" 2>"$T/e"; rc=$?
ok "generate --prefill-runs: warm prefill timed by wall and device clock, tokens unchanged, every step's GPU time (each step waited for)" "[ $rc = 0 ] && grep -q '\"reference\":\"match\"' $T/g.jsonl && python3 -c 'import json,sys; l=[json.loads(x) for x in open(sys.argv[1])]; o=l[0]; s=l[1]; assert o[\"prefill_runs\"]==3 and 0 < o[\"prefill_gpu_ms\"] <= o[\"prefill_wall_ms\"], o; assert len(s[\"gpu_ms\"])==len(s[\"ms\"])==8 and all(0 < g <= w for g, w in zip(s[\"gpu_ms\"], s[\"ms\"])), s' $T/g.jsonl"
"$B" generate tests/models/qwen2_tiny --json > "$T/gp8.jsonl" 2>"$T/e"
# queued steps: a step's wall time is the time since the token before it, so one may read less
# than its GPU time; all together they cannot (the GPU runs the steps one after another)
ok "generate, steps queued: every step's GPU time, their sum within the decode's wall time" "python3 -c 'import json,sys; l=[json.loads(x) for x in open(sys.argv[1])]; o=l[0]; s=l[1]; assert o[\"pipelined\"] and len(s[\"gpu_ms\"])==len(s[\"ms\"])==8 and all(g > 0 for g in s[\"gpu_ms\"]) and sum(s[\"gpu_ms\"]) <= sum(s[\"ms\"]) <= o[\"decode_ms\"] * 1.001 + 0.01, (o, s)' $T/gp8.jsonl"
"$B" generate tests/models/qwen2_tiny --prompt-ids 1,2,3 --max-new 4 --json > "$T/g.jsonl" 2>"$T/e"; rc=$?
ok "generate with a prompt shorter than the prefill length" "[ $rc = 0 ] && python3 -c 'import json,sys; o=json.loads(open(sys.argv[1]).readline()); assert len(o[\"tokens\"])==4 and o[\"reference\"]==\"none\"' $T/g.jsonl"
"$B" generate tests/models/qwen2_tiny --prompt-ids 1,2,3 --max-new 4 --backend cpu --json > "$T/gc.jsonl"
ok "the same tokens on the CPU reference" "python3 -c 'import json,sys; a=json.loads(open(sys.argv[1]).readline()); b=json.loads(open(sys.argv[2]).readline()); assert a[\"tokens\"]==b[\"tokens\"], (a,b)' $T/g.jsonl $T/gc.jsonl"
"$B" generate tests/models/qwen2_tiny --prompt-ids 1,99999 > /dev/null 2>"$T/e"; rc=$?
ok "a token id outside the vocabulary: exit 2 naming it" "[ $rc = 2 ] && grep -q 99999 $T/e"
# bisect on lavapipe: each fusion pattern of resnet18 and qwen2_tiny broken in turn (--break) is
# named exactly, in both modes; two broken instances are both found by minimal
for c in resnet18/model:F4:conv_relu resnet18/model:F5:conv_add_relu qwen2_tiny/decode:F1:rmsnorm \
         qwen2_tiny/decode:F2:linear_concat qwen2_tiny/decode:F3:rope qwen2_tiny/decode:F4:rope_cache \
         qwen2_tiny/decode:F5:decode_attention qwen2_tiny/decode:F6:linear_add \
         qwen2_tiny/decode:F8:silu_mul; do
    IFS=: read -r f id pat <<<"$c"
    for mode in first minimal; do
        "$B" bisect tests/models/$f.json --break $id --mode $mode --json > "$T/b.jsonl" 2>"$T/e"; rc=$?
        ok "bisect $mode on $f names $id ($pat)" "[ $rc = 0 ] && [ \$(grep -c '\"kind\":\"culprit\"' $T/b.jsonl) = 1 ] && grep -q '\"kind\":\"culprit\",\"fusion\":\"$id\",\"pattern\":\"$pat\"' $T/b.jsonl"
    done
done
"$B" bisect tests/models/qwen2_tiny/decode.json --break F2,F17 --mode minimal > "$T/b.txt" 2>"$T/e"; rc=$?
ok "minimal finds both of two broken instances" "[ $rc = 0 ] && grep -q '^culprit: F2 ' $T/b.txt && grep -q '^culprit: F17 ' $T/b.txt && [ \$(grep -c '^culprit' $T/b.txt) = 2 ]"
"$B" bisect tests/models/qwen2_tiny/decode.json > "$T/b.txt"; rc=$?
ok "nothing broken: nothing to bisect" "[ $rc = 0 ] && grep -q 'nothing to bisect' $T/b.txt"
"$B" profile tests/models/qwen2_tiny/decode.json --iters 3 --format json > "$T/p.jsonl"; rc=$?
ok "profile on Vulkan: a GPU time and an ok verdict for every NPU kernel" "[ $rc = 0 ] && python3 -c '
import json,sys
k=[json.loads(l) for l in open(sys.argv[1])]; ks=[o for o in k if o[\"kind\"]==\"kernel\"]
assert ks and all(o[\"gpu_us\"] > 0 and o[\"verdict\"] in (\"ok\", \"-\") for o in ks), ks
assert sum(o[\"verdict\"]==\"ok\" for o in ks) == len(ks) # every kernel of the decode checked
' $T/p.jsonl"
# kernel tiers: auto resolves against the device; a plan of a tier the device lacks is refused
"$B" run tests/models/convnet/model.json --check > "$T/c.txt" 2>"$T/e"; rc=$?
ok "--tier auto runs and names its tier" "[ $rc = 0 ] && grep -q ', tier \(portable\|nv-coopmat\), compute' $T/c.txt"
if grep -q ', tier portable, compute' "$T/c.txt"; then
    "$B" run tests/models/convnet/model.json --tier nv-coopmat > /dev/null 2>"$T/e"; rc=$?
    ok "--tier nv-coopmat on a device without it: exit 2, naming the tier and the way out" "[ $rc = 2 ] && grep -q 'compiled for kernel tier nv-coopmat' $T/e && grep -q -- '--tier portable' $T/e"
fi
"$B" run tests/models/convnet/model.json --check --tier portable --json > "$T/c.jsonl" 2>"$T/e"; rc=$?
ok "--tier portable matches PyTorch" "[ $rc = 0 ] && check $T/c.jsonl 2e-2"
"$B" compile tests/models/resnet50/model.json --tier nv-coopmat -o "$T/r.npubin" > /dev/null && "$B" describe "$T/r.npubin" > "$T/d.txt"; rc=$?
ok "a plan compiled for nv-coopmat without a device: target nv-coopmat, tensor cores for the convs the tensor-core plan splits (the stem and unsplit convs SIMT)" "[ $rc = 0 ] && head -1 $T/d.txt | grep -q 'target=nv-coopmat' && grep -q 'conv2d_cm_part x43 ' $T/d.txt && grep -q 'conv2d_part x5 ' $T/d.txt"
cat > "$T/lin.json" <<'J'
{"model_name":"lin","graph_inputs":[{"name":"x","shape":[32,64]},{"name":"w","shape":[48,64]}],"graph_outputs":[{"name":"y","shape":[32,48]}],"nodes":[{"name":"l","op_type":"aten.linear.default","inputs":[{"name":"x","shape":[32,64]},{"name":"w","shape":[48,64]}],"outputs":[{"name":"y","shape":[32,48]}],"attrs":{}}]}
J
"$B" describe "$T/lin.json" --tier nv-coopmat > "$T/d.txt" && "$B" describe "$T/lin.json" --tier nv-coopmat --dtype bf16 > "$T/e.txt"; rc=$?
"$B" describe "$T/lin.json" --tier nv-coopmat --dtype fp32 > "$T/f.txt" || rc=1
ok "nv-coopmat: f16 and bf16 matmuls with M > 1 on tensor cores (bf16 staged as f16), fp32 on the SIMT kernel" "[ $rc = 0 ] && grep -q 'matmul_cm_nb' $T/d.txt && grep -q 'matmul_cm_nb' $T/e.txt && ! grep -q 'matmul_cm' $T/f.txt"
"$B" describe tests/models/resnet18/model.json --json | grep -q '"tier":"portable"'; rc=$?
ok "compile and describe default to portable (no device to ask)" "[ $rc = 0 ]"
"$B" run tests/models/mlp/model.json --tier fast > /dev/null 2>"$T/e"; rc=$?
ok "an unknown --tier: exit 2" "[ $rc = 2 ] && grep -q 'auto, portable or nv-coopmat' $T/e"
