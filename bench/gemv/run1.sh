#!/bin/bash
# First H100 run (issue #9 GEMV): the old kernel (D/old) and the new one (D) on every shape, then
# a sweep of the new kernel's parameters, then the old decode step. D = the packed directory.
D=${D:-.dev-gemv2}
G=$D/gemv
export OUT=${OUT:-out}
old=$D/old/npu-explore
new=$D/npu-explore
nvidia-smi --query-gpu=name,driver_version,clocks.max.mem --format=csv,noheader
shapes="q_1536x1536_x43 kv_256x1536_x128 qkv_2048x1536_x32 gate_8960x1536_x8 gateup_17920x1536_x4 down_1536x8960_x8 lmhead_151936x1536_x1"
{
    for s in $shapes; do echo "$old $G/$s.json -"; done
    for s in $shapes; do echo "$new $G/$s.json -"; done
    for s in lmhead_151936x1536_x1 gateup_17920x1536_x4 q_1536x1536_x43; do
        for v in 128,2,6,4 128,1,6,4 128,4,3,4 128,4,6,4 256,2,6,8 32,2,6,1 64,2,3,0 32,2,6,0 128,2,2,4; do
            echo "$new $G/$s.json $v"
        done
    done
    for v in 128,2,4,0 256,1,4,0 512,1,4,0 128,1,8,0 256,2,2,0 128,1,8,4 64,2,8,0 256,4,4,0 512,2,2,0; do
        echo "$new $G/down_1536x8960_x8.json $v"
    done
} | BUDGET=${BUDGET:-165} bash $G/sweep.sh
Q=tests/models/qwen2_5_1_5b
if [ "$SECONDS" -lt 190 ]; then
    timeout 40 $old profile $Q/decode.json --random-weights 1 --dtype bf16 --iters 10 > $OUT/old_decode.txt 2>&1
    echo "old decode rc=$? ${SECONDS}s: $(grep -E '^total|^per run' $OUT/old_decode.txt | tr '\n' ' ')"
fi
if [ "$SECONDS" -lt 205 ]; then
    timeout 30 $old generate $Q --random-weights 1 --dtype bf16 --prompt-ids 1 --max-new 200 --json > $OUT/old_generate.txt 2>&1
    echo "old generate rc=$? ${SECONDS}s: $(grep -o '"decode_ms":[0-9.]*' $OUT/old_generate.txt)"
fi
