#!/bin/bash
# fold-constants (docs/compiler.md "Constant folding"): Swin's shifted-window mask and
# relative-position bias are computed once, at load, and read as weights: swin_shift and
# swin_v2_shift match PyTorch on Vulkan with no per-run CPU kernel for them (and get them back with
# --disable fold-constants); plans without weight-only work are unchanged (resnet18, qwen2_tiny's
# decode with its KV cache); a .npubin carries the folds (a fold needs format v3, its kernel
# fingerprints v4) and runs them; a bad constant subgraph stops the load naming the node, exit 2.
# (tests/test_constfold.c: the hand-written graphs and the proof that nothing is computed again
# per run.)
. tests/cli/lib.bash
Z=tests/models/zoo
# plan-level: no kernel computes a node a fold recipe runs, and none is index/zeros/slice_fill
noprologue() { python3 -c '
import json,sys
p=json.load(open(sys.argv[1])); ks=p["kernels"]
folds=[r for r in p["recipes"] if r["kind"]=="fold"]
assert len(folds)==int(sys.argv[2]), len(folds)
run={n for r in folds for n in r["nodes"]}
assert {"index","new_zeros"} <= run, run
assert not [k for k in ks if set(k["provenance"]) & run], "a kernel computes a folded node"
cpu={k["shader"] for k in ks if k["target"]=="cpu"}
assert not cpu & {"index","zeros","slice_fill"}, cpu
assert all(p["tensors"][r["out"]]["kind"]=="weight" and p["tensors"][r["out"]].get("folded") for r in folds)
assert p["format_version"]==4  # kernel fingerprints (a fold alone: 3)
' "$@"; }
# swin_shift: 4 relative-position biases, those of the 2 shifted blocks summed with their masks
# (fold_terms.c) into one term each; swin_v2_shift also its continuous position
# bias MLP (linear, relu, linear, sigmoid of a coordinate table), logit scales (clamp, exp) and the
# qkv biases with k's part zeroed
for c in swin_shift:4 swin_v2_shift:12; do
    IFS=: read -r m nf <<<"$c"
    agrees "$m: matches PyTorch on Vulkan with its mask and bias folded" $Z/$m/model.json
    "$B" describe $Z/$m/model.json --json > "$T/$m.json"; rc=$?
    ok "$m: $nf folds, no per-run CPU kernel computes them" \
       "[ $rc = 0 ] && noprologue $T/$m.json $nf"
    "$B" describe $Z/$m/model.json --disable fold-constants --json > "$T/$m.off.json"; rc=$?
    ok "$m --disable fold-constants: the CPU prologue computes them every run again" "[ $rc = 0 ] && python3 -c '
import json,sys
p=json.load(open(sys.argv[1]))
assert not [r for r in p[\"recipes\"] if r[\"kind\"]==\"fold\"] and p[\"format_version\"]==4
cpu={k[\"shader\"] for k in p[\"kernels\"] if k[\"target\"]==\"cpu\"}
assert {\"index\",\"zeros\",\"slice_fill\"} <= cpu, cpu
' $T/$m.off.json"
done
"$B" describe $Z/swin_shift/model.json > "$T/s.txt"
ok "describe names the folded constants" \
   "grep -q '^weights .*recipes: 0 bn_fold, 4 fold)' $T/s.txt && grep -Eq '^folded   4 constants computed at load by [0-9]+ node runs: unsqueeze f32\[1,2,16,16\] <- index \.\. unsqueeze' $T/s.txt"
# the explorer's pass list: what fold-constants removed
printf 'pass goto fold-constants\npass show\n' | "$B" --batch $Z/swin_shift/model.json -x - > "$T/b.txt" 2>&1
ok "--batch: the fold-constants pass lists the nodes it removed" "grep -q 'fold-constants' $T/b.txt && grep -q 'removed' $T/b.txt"
# nothing to fold: the plan is what it was (the pass off gives the same JSON)
for f in tests/models/resnet18/model.json tests/models/qwen2_tiny/decode.json tests/models/qwen2_tiny/prefill.json; do
    "$B" describe "$f" --json > "$T/on.json" && "$B" describe "$f" --json --disable fold-constants > "$T/off.json"
    ok "$f: no fold, the plan byte-identical with the pass off (format v4: fingerprints)" \
       "cmp -s $T/on.json $T/off.json && grep -q '\"format_version\":4' $T/on.json"
done
# a .npubin carries its folds: the binding computes them from the IR it embeds
"$B" compile $Z/swin_shift/model.json -o "$T/s.npubin" > /dev/null 2>&1; rc=$?
"$B" describe "$T/s.npubin" > "$T/sd.txt" 2>&1
ok "compile -o: a v4 .npubin whose describe names the folds" "[ $rc = 0 ] && grep -q 'npubin v4' $T/sd.txt && grep -q '^folded   4 constants' $T/sd.txt"
cp $Z/swin_shift/*.safetensors "$T/" # beside the .npubin
agrees ".npubin of swin_shift runs its folds at load and matches PyTorch" "$T/s.npubin"
npubin_edit "$T/s.npubin" "$T/v2.npubin" 'b[8]=2'
"$B" describe "$T/v2.npubin" > "$T/e.txt" 2>&1; rc=$?
ok "a fold in a file that says v2 is refused, exit 2" "[ $rc = 2 ] && grep -q 'fold, which a version 2 file cannot hold' $T/e.txt"
# a bad constant subgraph: an index out of range, refused at load naming the node
mkdir "$T/bad"
cat > "$T/bad/bad.json" <<'EOF'
{"model_name":"fold_bad","graph_inputs":[{"name":"x","shape":[3,2]}],
 "graph_outputs":[{"name":"y","shape":[3,2]}],
 "weights":[{"name":"table","shape":[8,2]}],"weight_name_mapping":{"p_table":"table"},
 "constants":{"cidx":{"data":[0,1,99],"dtype":"int64"}},
 "nodes":[{"name":"gather_rows","op_type":"aten.index.Tensor","inputs":[{"name":"p_table","shape":[8,2]},{"name":"cidx","shape":[3],"dtype":"int64"}],"outputs":[{"name":"rows","shape":[3,2]}],"attrs":{}},
          {"name":"y","op_type":"aten.add.Tensor","inputs":[{"name":"x","shape":[3,2]},{"name":"rows","shape":[3,2]}],"outputs":[{"name":"y","shape":[3,2]}],"attrs":{}}]}
EOF
"$B" run "$T/bad/bad.json" --random-weights 1 > "$T/e.txt" 2>&1; rc=$?
ok "a bad constant subgraph: exit 2 naming the node and the folded value" \
   "[ $rc = 2 ] && grep -q \"node 'gather_rows'.*folding constant 'rows' at load\" $T/e.txt || { cat $T/e.txt; false; }"
# model state: hf_qwen2_static's KV caches and the positions read from cache_position never fold;
# the static ranges (arange, the 0..15 key positions) do, each recipe naming the nodes making its
# value after the partitioner moved nodes (tests/cli/static_cache.sh runs it)
"$B" describe $Z/hf_qwen2_static/model.json --json > "$T/q.json"; rc=$?
ok "hf_qwen2_static: only input-free values fold, each fold ending at the node that makes it" "[ $rc = 0 ] && python3 -c '
import json,sys
p=json.load(open(sys.argv[1])); t=p[\"tensors\"]
folds=[r for r in p[\"recipes\"] if r[\"kind\"]==\"fold\"]
assert folds and all(r[\"nodes\"][-1]==t[r[\"out\"]][\"name\"] for r in folds), folds
run={n for r in folds for n in r[\"nodes\"]}
assert not run & {\"select\",\"select_1\",\"add\",\"add_1\",\"copy_\",\"index_copy_\"}, run
assert all(t[i][\"kind\"]==\"input\" for i in p[\"state_in\"])
' $T/q.json"
