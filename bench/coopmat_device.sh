#!/bin/bash
# H100 run of the coopmat branch (bench/NOTES.md): conformance of the tensor-core kernels and
# the portable GEMM kernels on the NVIDIA driver, resnet18 --check per tier, and profiles of
# resnet18 / resnet50 (random weights) per tier and tile variant, next to main's direct conv
# (.dev, when carried). Runs from the tree root after the .gl unpack, with the branch's packed
# binary in $D (default .dev-coopmat). Tile variants are bench-only knobs read by lowering:
# NPU_CONV_SIMT=BK,TR,TC (SIMT tiles) and NPU_GEMM_TARGET=N (workgroups a grid aims for).
D=${D:-.dev-coopmat}
O=${OUT:-out}; mkdir -p "$O"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$SECONDS
suite() { # name tier binary
    NPU_TEST_TIER=$2 timeout 45 "$D/tests/$3" > "$O/$1.log" 2>&1
    echo "$1 rc=$? $(grep -E '^\[  (PASSED|FAILED)  \]' "$O/$1.log" | tr '\n' ' ') $(grep vk_check "$O/$1.log")"
    grep -B2 "ERROR" "$O/$1.log" | head -12
}
for t in portable nv-coopmat; do
    "$D/npu-explore" run tests/models/resnet18/model.json --check --tier $t 2>&1 | grep -v "^output"
done
prof() { # name binary model tier|- [env...]
    local name=$1 bin=$2 m=$3 tier=$4; shift 4
    local args=(profile "$m" --iters 20)
    [ "$tier" != - ] && args+=(--tier "$tier")
    case "$m" in *resnet50*|*qwen2_5*) args+=(--random-weights 1) ;; esac
    env "$@" timeout 40 "$bin" "${args[@]}" > "$O/prof_$name.txt" 2>&1
    echo "$name rc=$? $(grep '^total:' "$O/prof_$name.txt") $(grep -c MISMATCH "$O/prof_$name.txt") mismatches"
}
R18=tests/models/resnet18/model.json R50=tests/models/resnet50/model.json
[ -x .dev/npu-explore ] && prof base18 .dev/npu-explore $R18 -
prof p18 "$D/npu-explore" $R18 portable
prof cm18 "$D/npu-explore" $R18 nv-coopmat
[ -x .dev/npu-explore ] && prof base50 .dev/npu-explore $R50 -
prof p50 "$D/npu-explore" $R50 portable
prof cm50 "$D/npu-explore" $R50 nv-coopmat
suite conv_cm nv-coopmat test_vk_conv
suite matmul_cm nv-coopmat test_vk_matmul
suite conv_portable portable test_vk_conv
echo "tests done t=$((SECONDS - t0))"
prof p18_888 "$D/npu-explore" $R18 portable NPU_CONV_SIMT=16,8,8
prof p18_3244 "$D/npu-explore" $R18 portable NPU_CONV_SIMT=32,4,4
prof cm18_t528 "$D/npu-explore" $R18 nv-coopmat NPU_GEMM_TARGET=528
prof cm18_t132 "$D/npu-explore" $R18 nv-coopmat NPU_GEMM_TARGET=132
prof p50_888 "$D/npu-explore" $R50 portable NPU_CONV_SIMT=16,8,8
prof cm50_t528 "$D/npu-explore" $R50 nv-coopmat NPU_GEMM_TARGET=528
echo "variants done t=$((SECONDS - t0))"
"$D/npu-explore" run tests/models/qwen2_tiny/prefill.json --check --dtype fp16 --tier nv-coopmat 2>&1 | grep -v "^output" | tail -3
echo "all done t=$((SECONDS - t0))"
