#!/bin/bash
# The prefill GEMMs on the tensor cores (session 6): an A/B in one run on the GPU machine of the
# matmul kernels for Qwen2.5-1.5B's prefill shapes (bench/models/qwen_prefill_gemms.json: q, k,
# gate, down at 128 tokens) and of the whole prefill-128 step (generate --prefill-runs), each on
# the SIMT tile (--tier portable), the tensor-core kernel with one-element staging loads
# (NPU_CM_VEC=0) and with 16-byte staging loads (default), in fp16 and bf16. Per-kernel errors
# against the CPU reference come with the GEMM profile; the conformance cases of the tensor-core
# kernel (test_gemm_tiles, nv-coopmat only) run first. Prints one line per configuration.
# Usage (after bench/pack_device.sh, on the device): bash bench/prefill_tc.sh
set -u
cd "$(dirname "$0")/.."
B=${NPU_EXPLORE:-.dev/npu-explore}
out=${OUT:-out}; mkdir -p "$out"
G=bench/models/qwen_prefill_gemms.json
Q=tests/models/qwen2_5_1_5b
if [ -x .dev/tests/test_vk_matmul ]; then
    LD_LIBRARY_PATH=$PWD/.dev/lib NPU_TEST_TIER=nv-coopmat NPU_TEST_FILTER=test_gemm_tiles \
        timeout 200 .dev/tests/test_vk_matmul > "$out/conf_matmul.txt" 2>&1
    echo "conformance test_gemm_tiles (nv-coopmat): rc=$? $(grep -E 'PASSED|FAILED' "$out/conf_matmul.txt" | tr '\n' ' ')"
fi
gemms() { # label, one VAR=value for the environment, profile's arguments
    local label=$1 ev=$2; shift 2
    env "$ev" "$B" profile $G --random-weights 1 --iters 20 --format json "$@" > "$out/gemm_$label.jsonl" 2> "$out/gemm_$label.err" ||
        { echo "$label failed: $(tail -2 "$out/gemm_$label.err")"; return; }
    python3 - "$out/gemm_$label.jsonl" "$label" <<'P'
import json, sys
ks, s = [], {}
for l in open(sys.argv[1]):
    o = json.loads(l)
    if o.get("kind") == "kernel" and o.get("target") == "npu":
        ks.append("%s %s %.1f (err %.1e)" % (o["output"], o["kernel"], o["gpu_us"], o.get("rel_l2", -1)))
    if o.get("kind") == "summary": s = o
print("gemm %-22s gpu step %7.1f us | %s" % (sys.argv[2], s.get("gpu_step_us", -1), "; ".join(ks)))
P
}
for dt in fp16 bf16; do
    gemms "$dt-portable" NPU_X=1 --dtype $dt --tier portable
    gemms "$dt-cm-scalar" NPU_CM_VEC=0 --dtype $dt --tier nv-coopmat
    gemms "$dt-cm-vec" NPU_X=1 --dtype $dt --tier nv-coopmat
done
ids=$(python3 -c 'print(",".join(str(1 + (i * 7919) % 150000) for i in range(128)))')
pre() { # label, one VAR=value for the environment, generate's arguments
    local label=$1 ev=$2; shift 2
    env "$ev" "$B" generate $Q --random-weights 1 --prompt-ids "$ids" --max-new 2 --prefill-runs 10 --json "$@" \
        > "$out/pre_$label.jsonl" 2> "$out/pre_$label.err" || { echo "$label failed: $(tail -2 "$out/pre_$label.err")"; return; }
    python3 -c 'import json,sys
for l in open(sys.argv[1]):
    o = json.loads(l)
    if o.get("kind") == "summary": print("prefill-128 %-20s wall %.2f ms, gpu %.2f ms" % (sys.argv[2], o.get("prefill_wall_ms", -1), o.get("prefill_gpu_ms", -1)))' "$out/pre_$label.jsonl" "$label"
}
for dt in bf16 fp16; do
    pre "$dt-portable" NPU_X=1 --dtype $dt --tier portable
    pre "$dt-cm-vec" NPU_X=1 --dtype $dt --tier nv-coopmat
done
