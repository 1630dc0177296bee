#!/bin/bash
# Session 14's A/Bs on the GPU, one run, each setting alternating with its baseline (REPEAT
# passes): the merged decode attention (decode_attention_cache, against --no-fuse) in a generate
# to position 1000 (steps 40-120 and 940-1000), the layer norm read through its permutes
# (layernorm_t, against --no-fuse) on full-size ConvNeXt-T, Swin-T and ViT-B/16, and the device
# conformance tests of both kernels first. Files under $OUT (PACK_OUT=1: one .tgz).
#   on the GPU machine after bench/pack_device.sh (the exporter in .exporter/): bash bench/ab14.sh
set -u
cd "$(dirname "$0")/.."
out=${OUT:-out}; mkdir -p "$out"
B=${NPU_EXPLORE:-.dev/npu-explore}
export GLIBC_TUNABLES=glibc.rtld.optional_static_tls=4000000
for t in test_vk_attn_cache test_vk_lnt; do
    [ -x .dev/tests/$t ] && { LD_LIBRARY_PATH=$PWD/.dev/lib .dev/tests/$t > "$out/$t.txt" 2>&1; echo "$t on the GPU: rc=$? $(grep -c '\[       OK \]' "$out/$t.txt") ok, $(grep -c '\[  FAILED  \]' "$out/$t.txt") failed lines"; }
done
Q=tests/models/qwen2_5_1_5b
ids=$(python3 -c 'print(",".join(str(1 + (i * 7919) % 150000) for i in range(128)))')
dec() { # $1 label, rest: options
    local l=$1; shift
    "$B" generate $Q --random-weights 1 --dtype bf16 --prompt-ids "$ids" --max-new 874 --json "$@" \
        > "$out/dec_$l.jsonl" 2> "$out/dec_$l.err" || { echo "$l failed: $(tail -2 "$out/dec_$l.err")"; return; }
    python3 - "$out/dec_$l.jsonl" "$l" <<'P'
import json, sys
ls = [json.loads(x) for x in open(sys.argv[1])]
st = next(x for x in ls if x.get("kind") == "steps"); s = next(x for x in ls if x.get("kind") == "summary")
by = dict(zip(st["pos"], st["ms"])); g = dict(zip(st["pos"], st.get("gpu_ms", st["ms"])))
med = lambda v: sorted(v)[len(v) // 2]
a = [p for p in by if 168 <= p < 248]; b = [p for p in by if 940 <= p <= 1000]
print("%-10s decode wall @168-248 %.3f ms (gpu %.3f), @940-1000 %.3f ms (gpu %.3f); tokens %s" % (
    sys.argv[2], med([by[p] for p in a]), med([g[p] for p in a]), med([by[p] for p in b]), med([g[p] for p in b]),
    s.get("greedy", "")))
P
}
for r in $(seq "${REPEAT:-2}"); do
    dec merged
    dec unmerged --no-fuse decode_attention_cache
done | tee "$out/ab_decode.txt"
# the layer norms through their permutes against --no-fuse (bench/ab.sh; files under $out/ln)
OUT="$out/ln" MODELS=${MODELS:-convnext_tiny swin_t vit_b_16} SETTINGS="on=;off=--no-fuse layernorm_t" \
    bash bench/ab.sh | tee "$out/ab_ln.txt"
if [ -n "${PACK_OUT:-}" ]; then tar -czf "$out.tgz" -C "$out" . && rm -rf "$out"/* && mv "$out.tgz" "$out/"; fi
