#!/bin/bash
# One tensor-core GEMM alone (bench/gemm_ir.py) under each large-tile layout (cm.shape) and K-loop
# ablation (cm.ablate bits: 1 no global loads, 2 no fragment loads or MMAs, 4 no staging, 8 no
# barriers, 16 no epilogue), unsplit (cm.target=1) so a kernel's time over its K steps is one workgroup's step
# time; each layout's pipeline statistics (NPU_VK_PIPE_STATS); the SM clock sampled beside the
# runs. On the GPU machine after bench/pack_device.sh: bash bench/gemm_probe.sh. Files under $OUT.
set -u
cd "$(dirname "$0")/.."
out=${OUT:-out}; mkdir -p "$out"
B=${NPU_EXPLORE:-.dev/npu-explore}
export GLIBC_TUNABLES=glibc.rtld.optional_static_tls=4000000
GEMMS=${GEMMS:-"128x1536x8960 197x768x2304 128x8960x1536"}
SHAPES=${SHAPES:-"0 1"}
ABL=${ABL:-"0 1 2 4 8 3 15"}
nvidia-smi --query-gpu=timestamp,clocks.sm,utilization.gpu --format=csv,noheader -lms 50 > "$out/probe_clocks.csv" 2>/dev/null &
smi=$!
for g in $GEMMS; do
    f=/tmp/gemm_$g.json
    python3 bench/gemm_ir.py "$f" ${g//x/ }
    for s in $SHAPES; do
        NPU_VK_PIPE_STATS=1 "$B" profile "$f" --random-weights 1 --dtype fp16 --iters 3 --time-only --tune cm.shape=$s 2>&1 >/dev/null |
            grep "pipe-stats matmul" | sed "s/^/$g shape $s: /" | tee -a "$out/probe_stats.txt"
    done
    set=()
    for s in $SHAPES; do for a in $ABL; do set+=("cm.shape=$s,cm.target=1,cm.ablate=$a"); done; done
    set+=("-" "cm.target=1")
    NPU_EXPLORE=$B REPEAT=1 ITERS=${ITERS:-50} bash bench/knobs.sh "$f" fp16 "${set[@]}" 2>&1 | sed "s/^/$g /" | tee -a "$out/probe.txt"
done
kill $smi 2>/dev/null; wait $smi 2>/dev/null
awk -F', ' '{print $2}' "$out/probe_clocks.csv" | sort | uniq -c | sort -rn | head -5 | tee "$out/probe_clock_hist.txt"
