#!/bin/bash
# H100 runs of the coopmat branch (bench/NOTES.md): conformance of the tensor-core kernels on the
# NVIDIA driver (NPU_TEST_TIER=nv-coopmat fails when the tier is missing), resnet18 --check, and
# profiles of resnet18 / resnet50 (random weights) per tier and tile variant, with main's direct
# conv (.dev, when carried) as the baseline. Runs from the tree root after the .gl unpack, with
# the branch's packed binary in $D (default .dev-coopmat). Everything lands in one file,
# $OUT/all.txt (the device returns few files). The tile variants of the three runs of
# 2026-11-23 (bench/NOTES.md) used two env knobs of those builds' lowering (NPU_CONV_SIMT=BK,TR,TC
# and NPU_GEMM_TARGET=N, commits 05f848d..b291ad6), removed once the defaults were set from them;
# with this build the variant lines below measure the defaults again.
# Usage: bash coopmat_device.sh [run2|run3]
D=${D:-.dev-coopmat}
O=${OUT:-out}; mkdir -p "$O"
A=$O/all.txt
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee -a "$A"
t0=$SECONDS
suite() { # name tier binary
    NPU_TEST_TIER=$2 timeout 45 "$D/tests/$3" > "$O/s.log" 2>&1
    echo "$1 rc=$? $(grep -E '^\[  (PASSED|FAILED)  \]' "$O/s.log" | tr '\n' ' ') $(grep vk_check "$O/s.log")" | tee -a "$A"
    grep -B2 "ERROR" "$O/s.log" | head -12 | tee -a "$A"
}
prof() { # name binary model tier|- [env...]
    local name=$1 bin=$2 m=$3 tier=$4; shift 4
    local args=(profile "$m" --iters 20)
    [ "$tier" != - ] && args+=(--tier "$tier")
    case "$m" in *resnet50*|*gemms*) args+=(--random-weights 1) ;; esac
    case "$name" in *_bf16) args+=(--dtype bf16) ;; esac
    env "$@" timeout 50 "$bin" "${args[@]}" > "$O/p.txt" 2>&1
    local rc=$?
    { echo "=== $name: $* $bin ${args[*]}"; cat "$O/p.txt"; } >> "$A"
    echo "$name rc=$rc $(grep '^total:' "$O/p.txt") $(grep -c MISMATCH "$O/p.txt") mismatches"
}
R18=tests/models/resnet18/model.json R50=tests/models/resnet50/model.json
case "${1:-run3}" in
run2)
    suite conv_cm nv-coopmat test_vk_conv
    suite matmul_cm nv-coopmat test_vk_matmul
    "$D/npu-explore" run $R18 --check --tier nv-coopmat 2>&1 | grep -v "^output" | tee -a "$A"
    prof cm18 "$D/npu-explore" $R18 nv-coopmat
    prof p18 "$D/npu-explore" $R18 portable
    prof cm50 "$D/npu-explore" $R50 nv-coopmat
    prof p50 "$D/npu-explore" $R50 portable
    prof cm18_t528 "$D/npu-explore" $R18 nv-coopmat NPU_GEMM_TARGET=528
    prof cm18_t132 "$D/npu-explore" $R18 nv-coopmat NPU_GEMM_TARGET=132
    prof p18_t528 "$D/npu-explore" $R18 portable NPU_GEMM_TARGET=528
    prof p18_t132 "$D/npu-explore" $R18 portable NPU_GEMM_TARGET=132
    prof cm50_t528 "$D/npu-explore" $R50 nv-coopmat NPU_GEMM_TARGET=528
    prof p50_t132 "$D/npu-explore" $R50 portable NPU_GEMM_TARGET=132
    echo "resnet done t=$((SECONDS - t0))"
    prof qpre_cm "$D/npu-explore" tests/models/qwen2_5_1_5b/prefill.json nv-coopmat
    prof qpre_p "$D/npu-explore" tests/models/qwen2_5_1_5b/prefill.json portable
    ;;
run3)
    suite conv_cm nv-coopmat test_vk_conv
    suite matmul_cm nv-coopmat test_vk_matmul
    for t in portable nv-coopmat; do
        "$D/npu-explore" run $R18 --check --tier $t 2>&1 | grep -v "^output" | tee -a "$A"
    done
    prof cm18 "$D/npu-explore" $R18 nv-coopmat
    prof p18 "$D/npu-explore" $R18 portable
    prof cm50 "$D/npu-explore" $R50 nv-coopmat
    prof p50 "$D/npu-explore" $R50 portable
    G=bench/models/qwen_prefill_gemms.json
    [ -f $G ] || G=$D/qwen_prefill_gemms.json
    prof qg_cm "$D/npu-explore" $G nv-coopmat
    prof qg_p "$D/npu-explore" $G portable
    prof qg_bf16 "$D/npu-explore" $G nv-coopmat
    suite conv_portable portable test_vk_conv
    echo "main runs done t=$((SECONDS - t0))" | tee -a "$A"
    prof cm18_t528 "$D/npu-explore" $R18 nv-coopmat NPU_GEMM_TARGET=528
    prof p18_t528 "$D/npu-explore" $R18 portable NPU_GEMM_TARGET=528
    prof cm18_t132 "$D/npu-explore" $R18 nv-coopmat NPU_GEMM_TARGET=132
    prof p18_3244 "$D/npu-explore" $R18 portable NPU_CONV_SIMT=32,4,4
    prof cm50_t528 "$D/npu-explore" $R50 nv-coopmat NPU_GEMM_TARGET=528
    prof p50_t528 "$D/npu-explore" $R50 portable NPU_GEMM_TARGET=528
    prof qg_cm_t528 "$D/npu-explore" $G nv-coopmat NPU_GEMM_TARGET=528
    prof cm18_t1056 "$D/npu-explore" $R18 nv-coopmat NPU_GEMM_TARGET=1056
    prof p18_888 "$D/npu-explore" $R18 portable NPU_CONV_SIMT=16,8,8
    prof p50_3244 "$D/npu-explore" $R50 portable NPU_CONV_SIMT=32,4,4
    ;;
esac
echo "all done t=$((SECONDS - t0))" | tee -a "$A"
