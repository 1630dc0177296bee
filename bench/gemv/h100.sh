#!/bin/bash
# The GEMV measurements of bench/NOTES.md ("GEMV") on the GPU machine: every Qwen2.5-1.5B decode
# GEMV shape alone (bench/gemv/make_ir.py graphs: gpu step / C = one kernel streaming its
# weights, plus the timed per-kernel medians), the decode step (profile: gpu step + per-kernel
# sums by stem; generate: 200 steps by the device clock), GPU clocks sampled all along
# ($OUT/smi.txt), then a few parameter variants (NPU_GEMV). With $D/old/npu-explore present
# (another build, e.g. the previous kernel) it runs next to $D/npu-explore.
#   bash bench/pack_device.sh; python3 bench/gemv/make_ir.py   (here; .dev holds the binary)
#   bash bench/gemv/h100.sh                                    (there; D=.dev by default)
D=${D:-.dev}
G=${GRAPHS:-bench/gemv}
export OUT=${OUT:-out}; O=$OUT; mkdir -p "$O"
bins="$D/npu-explore"; [ -x "$D/old/npu-explore" ] && bins="$D/old/npu-explore $bins"
Q=tests/models/qwen2_5_1_5b
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,utilization.gpu,temperature.gpu --format=csv -lms 500 > $O/smi.txt 2>&1 &
smi=$!
shapes="q_1536x1536_x43 kv_256x1536_x128 qkv_2048x1536_x32 gate_8960x1536_x8 gateup_17920x1536_x4 down_1536x8960_x8 lmhead_151936x1536_x1"
for s in $shapes; do for b in $bins; do echo "$b $G/$s.json -"; done; done |
    BUDGET=60 bash $(dirname "$0")/sweep.sh | grep -v '^=='
med() { sed -n "s/.*\"$1\":\[\([^]]*\)\].*/\1/p" "$2" | tr ',' '\n' | sed '1,5d' | sort -g |
        awk '{a[NR] = $1} END {print NR ? a[int((NR + 1) / 2)] : -1}'; }
prof() { # label bin timeout
    timeout $3 $2 profile $Q/decode.json --random-weights 1 --dtype bf16 --iters 10 > $O/dec_$1.txt 2>&1
    echo "[${SECONDS}s] decode profile $1 rc=$?: $(grep -E '^total|^per run' $O/dec_$1.txt | tr '\n' ' ')"
    awk '$1 ~ /^[0-9]+$/ && NF >= 9 {s[$2] += $4; n[$2]++} END {for (k in s) printf "  %s x%d %.1f us;", k, n[k], s[k]; print ""}' $O/dec_$1.txt
}
gen() { # label bin timeout
    timeout $3 $2 generate $Q --random-weights 1 --dtype bf16 --prompt-ids 1 --max-new 200 --json > $O/gen_$1.txt 2>&1
    echo "[${SECONDS}s] generate $1 rc=$?: ms med $(med ms $O/gen_$1.txt) gpu_ms med $(med gpu_ms $O/gen_$1.txt) $(grep -o '"decode_tokens_per_s":[0-9.]*' $O/gen_$1.txt)"
}
for b in $bins; do l=$(basename $(dirname $b)); prof $l $b 70; gen $l $b 60; done
{
    for v in 128,2,6,4 256,1,6,8 64,1,6,2; do
        for s in lmhead_151936x1536_x1 gate_8960x1536_x8 q_1536x1536_x43; do echo "$D/npu-explore $G/$s.json $v"; done
    done
    for v in 128,2,4,0 512,1,2,0 128,1,8,4; do echo "$D/npu-explore $G/down_1536x8960_x8.json $v"; done
} | BUDGET=${VARIANTS_S:-60} bash $(dirname "$0")/sweep.sh | grep -v '^=='
kill $smi
echo "[${SECONDS}s] done"
