#!/bin/bash
# The tensor-core matmul's large-tile layouts (tuning knob cm.shape, shaders/matmul_cm.glsl) on
# the GPU, one run: first each layout's results against the CPU reference (tests/models/gemm_block:
# every epilogue, split and unsplit, fp16 and bf16), then bench/knobs.sh A/Bs of the layouts and
# K-split targets on ViT-B/16 and ConvNeXt-T (full size, exported here) and the Qwen2.5-1.5B
# fixture's prefill-128. Files under $OUT (PACK_OUT=1: one .tgz, the device returns 8 files).
#   on the GPU machine (after bench/pack_device.sh, the exporter in .exporter/): bash bench/cm_shapes.sh
# SHAPES: the settings to A/B (default below); MODELS: the torchvision ones.
set -u
cd "$(dirname "$0")/.."
out=${OUT:-out}; mkdir -p "$out"
B=${NPU_EXPLORE:-.dev/npu-explore}
export GLIBC_TUNABLES=glibc.rtld.optional_static_tls=4000000
SHAPES=${SHAPES:-"- cm.shape=1 cm.shape=1,cm.target=264 cm.shape=1,cm.target=396"}
MODELS=${MODELS:-vit_b_16 convnext_tiny}
{
    for s in 0 1; do
        for dt in fp16 bf16; do
            for t in auto 1; do
                args=(--tune cm.shape=$s)
                [ $t != auto ] && args+=(--tune cm.target=$t)
                r=$("$B" run tests/models/gemm_block/model.json --random-weights 1 --check --dtype $dt "${args[@]}" 2>&1 | grep -E "^add_1|error")
                echo "check shape $s $dt target $t: $r"
            done
        done
    done
} | tee "$out/cm_check.txt"
FULL=${FULL:-/tmp/full}
PYTHONPATH=$PWD/.exporter python3 bench/export_full.py "$FULL" $MODELS > "$out/export.txt" 2>&1 ||
    { echo "export failed:"; tail -5 "$out/export.txt"; }
for m in $MODELS; do
    NPU_EXPLORE=$B bash bench/knobs.sh "$FULL/$m/model.json" fp16 $SHAPES 2>&1 | tee -a "$out/cm_knobs.txt"
done
NPU_EXPLORE=$B ITERS=10 REPEAT=${QREPEAT:-1} bash bench/knobs.sh tests/models/qwen2_5_1_5b/prefill.json bf16 $SHAPES 2>&1 | tee -a "$out/cm_knobs.txt"
if [ -n "${PACK_OUT:-}" ]; then tar -czf "$out.tgz" -C "$out" . && rm -rf "$out"/* && mv "$out.tgz" "$out/"; fi
