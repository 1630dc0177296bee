#!/bin/bash
# Second H100 run: the decode context. Whether lm_head slows down with 1.9 GB of weights per run
# (ReBAR host-visible vs plain device-local memory: NPU_VK_STAGING), then generate (the decode
# step by the device clock, per step) with the new kernel, the old one, and the new one in
# plain device-local memory, then the new decode profile with the time left.
D=${D:-.dev-gemv2}
O=${OUT:-out}; mkdir -p "$O"
old=$D/old/npu-explore; new=$D/npu-explore; Q=tests/models/qwen2_5_1_5b
med() { sed -n "s/.*\"$1\":\[\([^]]*\)\].*/\1/p" "$2" | tr ',' '\n' | sed '1,5d' | sort -g |
        awk '{a[NR] = $1} END {print NR ? a[int((NR + 1) / 2)] : -1}'; }
for stg in 0 1; do
    NPU_VK_STAGING=$stg timeout 45 $new profile $D/gemv/lmhead_151936x1536_x4.json --random-weights 1 --dtype bf16 --iters 10 > $O/lm4_$stg.txt 2>&1
    echo "[${SECONDS}s] lm_head x4 staging=$stg rc=$?: $(grep -E '^[0-3] ' $O/lm4_$stg.txt | awk '{printf "%s ", $4}') | $(grep -o 'gpu step [0-9.]* us' $O/lm4_$stg.txt)"
done
gen() { # label bin staging
    NPU_VK_STAGING=$3 timeout $4 $2 generate $Q --random-weights 1 --dtype bf16 --prompt-ids 1 --max-new 200 --json > $O/gen_$1.txt 2>&1
    echo "[${SECONDS}s] generate $1 rc=$?: ms med $(med ms $O/gen_$1.txt) gpu_ms med $(med gpu_ms $O/gen_$1.txt) $(grep -o '"decode_tokens_per_s":[0-9.]*' $O/gen_$1.txt)"
}
gen new $new 0 75
gen old $old 0 60
gen new_stg $new 1 60
left=$((232 - SECONDS))
if [ $left -gt 30 ]; then
    timeout $left $new profile $Q/decode.json --random-weights 1 --dtype bf16 --iters 10 > $O/decode_new.txt 2>&1
    echo "[${SECONDS}s] decode profile new rc=$?: $(grep -E '^total|^per run' $O/decode_new.txt | tr '\n' ' ')"
fi
