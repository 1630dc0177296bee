#!/bin/bash
# Issue 26's models nobody tuned for: full-size torchvision classifiers (224x224, bs1, fp16,
# random weights) exported on the GPU machine, ours (`profile --time-only`) beside PyTorch's
# eager and CUDA graph on the same IR (bench/torch_ir.py), in one run; then transformers' own
# Qwen2.5-1.5B export (tests/models/zoo/hf_qwen2_5_1_5b, prefill-128) beside our fixture's
# prefill. Prints a markdown table and each model's time by kernel family; files under $OUT.
#   on the GPU machine (after bench/pack_device.sh here, the exporter's source in .exporter/):
#     bash bench/untuned.sh [MODELS...]    (default: the issue's six)
# PREFILL="": leave out the Qwen prefill pair. TUNE_S=S: then `npu-explore tune` each model (S seconds of search, the device's tuning cache)
# and profile it again with the cache: the table's "tuned" column.
set -u
cd "$(dirname "$0")/.."
out=${OUT:-out}; mkdir -p "$out"
B=${NPU_EXPLORE:-.dev/npu-explore}
ITERS=${ITERS:-50}
MODELS=${*:-mobilenet_v2 mobilenet_v3_large efficientnet_b0 convnext_tiny densenet121 vit_b_16}
if [ -d .gl ] && ! ldconfig -p | grep -q libvulkan.so.1; then
    for f in .gl/*.deb; do dpkg -x "$f" /; done
    ldconfig
fi
export GLIBC_TUNABLES=glibc.rtld.optional_static_tls=4000000
FULL=${FULL:-/tmp/full}
PYTHONPATH=$PWD/.exporter python3 bench/export_full.py "$FULL" $MODELS > "$out/export.txt" 2>&1 ||
    { echo "export failed:"; tail -5 "$out/export.txt"; }
: > "$out/untuned_torch.jsonl"
for m in $MODELS; do
    f=$FULL/$m/model.json
    [ -f "$f" ] || { echo "$m: not exported"; continue; }
    "$B" profile "$f" --random-weights 1 --dtype fp16 --iters "$ITERS" --time-only --format json \
        --tuned none > "$out/untuned_$m.jsonl" 2> "$out/untuned_$m.err" || { echo "ours $m failed:"; tail -3 "$out/untuned_$m.err"; }
    python3 bench/torch_ir.py "$f" --dtype fp16 --iters "$ITERS" --label "$m" \
        >> "$out/untuned_torch.jsonl" 2>> "$out/untuned_torch.err" || echo "torch $m failed"
done
if [ -n "${TUNE_S:-}" ]; then
    for m in $MODELS; do
        f=$FULL/$m/model.json
        [ -f "$f" ] || continue
        "$B" tune "$f" --random-weights 1 --dtype fp16 --budget-s "$TUNE_S" > "$out/tune_$m.txt" 2>&1 ||
            { echo "tune $m failed:"; tail -3 "$out/tune_$m.txt"; }
        "$B" profile "$f" --random-weights 1 --dtype fp16 --iters "$ITERS" --time-only --format json \
            > "$out/untuned_${m}_tuned.jsonl" 2> /dev/null
    done
fi
# transformers' Qwen2.5-1.5B export beside our fixture: prefill-128, bf16, same method
for q in ${PREFILL-tests/models/qwen2_5_1_5b/prefill.json tests/models/zoo/hf_qwen2_5_1_5b/prefill.json}; do
    l=$(basename "$(dirname "$q")")
    "$B" profile "$q" --random-weights 1 --dtype bf16 --iters 10 --time-only --format json \
        > "$out/prefill_$l.jsonl" 2> "$out/prefill_$l.err" || { echo "ours $l failed:"; tail -3 "$out/prefill_$l.err"; }
done
python3 - "$out" $MODELS <<'P' | tee "$out/untuned.md"
import collections, json, os, sys
out, models = sys.argv[1], sys.argv[2:]
def lines(p):
    return [json.loads(l) for l in open(p) if l.startswith("{")] if os.path.exists(p) else []
torch = {o["label"]: o for o in lines(os.path.join(out, "untuned_torch.jsonl"))}
print("| model | ours wall ms | ours gpu step ms | kernels / levels | torch eager ms | torch CUDA graph ms | ours / CUDA graph | tuned wall ms | tuned / CUDA graph |")
print("|---|---|---|---|---|---|---|---|---|")
fam = {}
for m in models:
    ls = lines(os.path.join(out, "untuned_%s.jsonl" % m))
    s = next((o for o in ls if o.get("kind") == "summary"), None)
    t = torch.get(m, {})
    if not s:
        print("| %s | failed | | | %.3f | %.3f | - | - | - |" % (m, t.get("eager_ms", -1), t.get("graph_ms", -1)))
        continue
    w, g = s["wall_us"] / 1e3, s["gpu_step_us"] / 1e3
    ge = t.get("graph_ms", -1)
    tu = next((o for o in lines(os.path.join(out, "untuned_%s_tuned.jsonl" % m)) if o.get("kind") == "summary"), None)
    tw = tu["wall_us"] / 1e3 if tu else -1
    print("| %s | %.3f | %.3f | %d / %d | %.3f | %.3f | %s | %s | %s |" % (
        m, w, g, s["kernels"], s["levels"], t.get("eager_ms", -1), ge,
        "%.2f" % (w / ge) if ge > 0 else "-", "%.3f" % tw if tu else "-",
        "%.2f" % (tw / ge) if tu and ge > 0 else "-"))
    c = collections.defaultdict(lambda: [0, 0.0])
    for o in ls:
        if o.get("kind") == "kernel":
            k = o["kernel"] if o["target"] == "npu" else "cpu:" + o["kernel"]
            c[k][0] += 1
            c[k][1] += max(o["gpu_us"], 0)
        elif o.get("kind") == "transfer":
            c["transfer"][0] += 1
            c["transfer"][1] += o["us"]
    fam[m] = c
print()
for q in ("qwen2_5_1_5b", "hf_qwen2_5_1_5b"):
    s = next((o for o in lines(os.path.join(out, "prefill_%s.jsonl" % q)) if o.get("kind") == "summary"), None)
    if s:
        print("prefill-128 %s: wall %.3f ms, gpu step %.3f ms, %d kernels in %d levels" % (
            q, s["wall_us"] / 1e3, s["gpu_step_us"] / 1e3, s["kernels"], s["levels"]))
for m, c in fam.items():
    print()
    print("%s by kernel family (timed, us):" % m)
    for k, (n, us) in sorted(c.items(), key=lambda kv: -kv[1][1])[:10]:
        print("  %-28s %4d  %9.1f" % (k, n, us))
P
[ -n "${PACK_OUT:-}" ] && tar -C "$out" -czf /tmp/untuned_out.tgz . && find "$out" -mindepth 1 -delete && mv /tmp/untuned_out.tgz "$out/"
exit 0
