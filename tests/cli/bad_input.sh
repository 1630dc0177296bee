#!/bin/bash
# Bad input on every command: exit code 2, a message naming the file (and node/tensor), no
# partial output files. Prints TAP-style "ok"/"not ok" lines.
. tests/cli/lib.bash
check() { # name, expected exit, expected text, command...
    local name=$1 want=$2 text=$3; shift 3
    n=$((n + 1))
    out=$("$@" 2>&1); rc=$?
    if [ "$rc" = "$want" ] && grep -qF -- "$text" <<<"$out" && ! grep -q "Sanitizer\|runtime error" <<<"$out"; then
        echo "ok $n $name"
    else
        echo "not ok $n $name (exit $rc, want $want; wanted '$text')"; echo "$out" | head -5 | sed 's/^/#   /'
    fi
}
M=tests/models/mlp/model.json
printf '' > "$T/empty.json"
printf '{"graph_inputs":[' > "$T/trunc.json"
sed 's/aten.relu.default/aten.frob.default/' $M > "$T/unknownop.json"
python3 - "$M" "$T" <<'PY'
import json, sys
m, t = sys.argv[1], sys.argv[2]
d = json.load(open(m))
d2 = json.loads(json.dumps(d)); d2["nodes"][1]["outputs"][0]["shape"] = [4, 129]; d2["nodes"][2]["inputs"][0]["shape"] = [4, 129]
json.dump(d2, open(t + "/declared.json", "w"))
d6 = json.loads(json.dumps(d)); d6["nodes"][2]["inputs"][0]["shape"] = [4, 127]
json.dump(d6, open(t + "/badshape.json", "w"))
d3 = json.loads(json.dumps(d)); d3["nodes"][2]["inputs"][0]["name"] = "ghost"; d3["nodes"][2]["inputs"][0]["producer_node"] = "ghost"
json.dump(d3, open(t + "/ghost.json", "w"))
d4 = json.loads(json.dumps(d)); d4["weight_name_mapping"]["p_fc1_weight"] = "fc9.weight"; d4["weights"].append({"name": "fc9.weight", "shape": [128, 64], "dtype": "float32"})
json.dump(d4, open(t + "/missingw.json", "w"))
d5 = json.loads(json.dumps(d)); d5["nodes"].append(dict(d5["nodes"][0]))
json.dump(d5, open(t + "/dupnode.json", "w"))
am = lambda dim: {"model_name": "am", "graph_inputs": [{"name": "x", "shape": [4, 10]}],
    "graph_outputs": [{"name": "y", "dtype": "int64", "shape": [4]}], "weights": [], "weight_name_mapping": {},
    "nodes": [{"name": "am", "op_type": "aten.argmax.default", "inputs": [{"name": "x", "shape": [4, 10]}],
               "outputs": [{"name": "y", "dtype": "int64", "shape": [4]}], "attrs": {"dim": dim}}]}
json.dump(am(2), open(t + "/argmax_dim.json", "w"))
json.dump(am(-1), open(t + "/argmax.json", "w"))
PY
cp tests/models/mlp/weights.safetensors "$T/"
head -c 100 tests/models/mlp/weights.safetensors > "$T/trunc.safetensors"
"$B" compile $M -o "$T/ok.npubin" >/dev/null
head -c 200 "$T/ok.npubin" > "$T/trunc.npubin"
python3 -c "import sys;b=bytearray(open(sys.argv[1],'rb').read());b[len(b)//2]^=4;open(sys.argv[2],'wb').write(b)" "$T/ok.npubin" "$T/flip.npubin"
python3 -c "import sys;b=bytearray(open(sys.argv[1],'rb').read());b[8]=9;open(sys.argv[2],'wb').write(b)" "$T/ok.npubin" "$T/future.npubin"

check "nonexistent model"       2 "nope.json: cannot open"       "$B" run "$T/nope.json" --backend cpu
check "empty model"             2 "empty.json: empty file"       "$B" run "$T/empty.json" --backend cpu
check "truncated JSON"          2 "not valid JSON"               "$B" describe "$T/trunc.json"
check "unknown op names node"   2 "node 'relu': unknown op"      "$B" describe "$T/unknownop.json"
check "declared shape mismatch" 2 "declared shape [4,129] but relu gives [4,128]"                  "$B" describe "$T/declared.json"
check "consumer shape mismatch" 2 "consumed with shape"          "$B" describe "$T/badshape.json"
check "tensor nobody produces"  2 "tensor 'ghost'"               "$B" describe "$T/ghost.json"
check "duplicate node"          2 "duplicate node name"          "$B" describe "$T/dupnode.json"
check "missing weight"          2 "weight 'fc9.weight'"          "$B" run "$T/missingw.json" --backend cpu
check "truncated weights"       2 "trunc.safetensors"            "$B" run $M --backend cpu --weights "$T/trunc.safetensors"
check "inputs of wrong shape"   2 "tensor 'x'"                   "$B" run $M --backend cpu --inputs tests/models/convnet/reference.safetensors
check "unknown option"          2 "unknown option '--frob'"      "$B" run $M --frob
check "unknown command"         2 "unknown command"              "$B" frobnicate
check "missing model arg"       2 "missing MODEL"                "$B" describe
check "bad --backend"           2 "--backend must be"            "$B" run $M --backend tpu
check "unknown pass"            2 "unknown pass 'nope'"          "$B" describe $M --dump-after nope
check "unknown pass lists all"  2 "fold-constants, fold-batchnorm, partition" "$B" describe $M --dump-after nope
check "--disable a fixed pass"  2 "(fold-constants, fold-batchnorm, fuse, fuse-elementwise, cat-in-place, layout, pack-inputs, views)" "$B" describe $M --disable partition
check "truncated npubin"        2 "trunc.npubin"                 "$B" describe "$T/trunc.npubin"
check "bit-flipped npubin"      2 "flip.npubin"                  "$B" describe "$T/flip.npubin"
check "future npubin"           2 "newer"                        "$B" describe "$T/future.npubin"
check "argmax dim out of range" 2 "node 'am': argmax: dim 2 is out of range" "$B" describe "$T/argmax_dim.json"
check "argmax dim out of range, run" 2 "node 'am'"                "$B" run "$T/argmax_dim.json" --backend cpu
check "argmax on the NPU"       0 "argmax_f16"                   "$B" describe "$T/argmax.json"
check "compile without -o"      2 "needs -o"                     "$B" compile $M
check "unwritable -o"           2 "cannot write"                 "$B" compile $M -o /nonexistent/dir/x.npubin
check "run --check mlp"         0 "1 ok, 0 mismatch"             "$B" run $M --backend cpu --check
check "run --check mismatch"    1 "MISMATCH"                     "$B" run $M --backend cpu --check --random-weights 1 --reference tests/models/mlp/reference.safetensors
check "describe npubin"         0 "linear_relu x2"               "$B" describe "$T/ok.npubin"
# the Vulkan path, profile, bisect and generate take the same bad input the same way
check "vulkan: missing weight"  2 "weight 'fc9.weight'"          "$B" run "$T/missingw.json"
check "vulkan: wrong-shape inputs" 2 "tensor 'x'"                "$B" run $M --inputs tests/models/convnet/reference.safetensors
check "vulkan: mismatch exits 1" 1 "MISMATCH"                    "$B" run $M --check --random-weights 1 --reference tests/models/mlp/reference.safetensors
check "profile: nonexistent"    2 "nope.json: cannot open"       "$B" profile "$T/nope.json"
check "profile: bad --iters"    2 "--iters"                      "$B" profile $M --iters 0
check "profile: bad --format"   2 "--format must be"             "$B" profile $M --format xml
check "profile: corrupt weights" 2 "trunc.safetensors"           "$B" profile $M --weights "$T/trunc.safetensors"
check "bisect: unknown op"      2 "unknown op"                   "$B" bisect "$T/unknownop.json"
check "bisect: bad --break"     2 "--break F99"                  "$B" bisect tests/models/convnet/model.json --break F99
check "generate: not a folder"  2 "generation.json"              "$B" generate "$T"
check "generate: bad prompt"    2 "--prompt-ids"                 "$B" generate tests/models/qwen2_tiny --prompt-ids 1,x
check "generate: past the cache" 2 "exceeds the cache"           "$B" generate tests/models/qwen2_tiny --max-new 100
check "--device out of range"   3 "device"                       "$B" run $M --device 9
# resource limits: a weight larger than the device binds in one descriptor (lavapipe: 128 MiB)
python3 - "$T" <<'PY'
import json, sys
t = sys.argv[1]; V, D = 70000, 512
d = {"model_name": "big", "graph_inputs": [{"name": "x", "shape": [1, D]}], "graph_outputs": [{"name": "y", "shape": [1, V]}],
     "weights": [{"name": "w", "shape": [V, D]}], "weight_name_mapping": {"p_w": "w"},
     "nodes": [{"name": "lin", "op_type": "aten.linear.default", "inputs": [{"name": "x", "shape": [1, D]}, {"name": "p_w", "shape": [V, D]}],
                "outputs": [{"name": "y", "shape": [1, V]}], "attrs": {}}]}
json.dump(d, open(t + "/big.json", "w"))
PY
check "a binding past the device's range is refused" 2 "the device binds at most" "$B" run "$T/big.json" --random-weights 1 --dtype fp32
ls "$T"/*.tmp* >/dev/null 2>&1 && echo "not ok $((n+1)) partial files left behind" || echo "ok $((n+1)) no partial output files"
