#!/bin/bash
# The GPU's clocks and power state beside a decode run, to tell what the slow first steps after a
# model's upload are (bench/NOTES.md "A slow state of the GPU"): nvidia-smi sampled every 20 ms
# during one `generate` of the Qwen2.5-1.5B fixture (random weights, bf16), then the same after
# 1 s of idle, then (STAGING=1) with the weights uploaded by staged copies (NPU_VK_STAGING=1). Files under $OUT.
#   on the GPU machine:  bash bench/clocks.sh
set -u
cd "$(dirname "$0")/.."
out=${OUT:-out}; mkdir -p "$out"
B=${NPU_EXPLORE:-.dev/npu-explore}
export GLIBC_TUNABLES=glibc.rtld.optional_static_tls=4000000
Q=tests/models/qwen2_5_1_5b
ids=$(python3 -c 'print(",".join(str(1 + (i * 7919) % 150000) for i in range(128)))')
gen() { # $1: label; the rest: extra options
    local l=$1; shift
    nvidia-smi --query-gpu=timestamp,pstate,clocks.sm,clocks.mem,power.draw,utilization.gpu \
        --format=csv,noheader -lms 20 > "$out/clocks_$l.csv" 2>/dev/null &
    local smi=$!
    sleep 0.3
    "$B" generate $Q --random-weights 1 --dtype bf16 --prompt-ids "$ids" --max-new 80 --json "$@" \
        > "$out/gen_$l.jsonl" 2> "$out/gen_$l.err" || tail -3 "$out/gen_$l.err"
    sleep 0.2
    kill $smi 2>/dev/null; wait $smi 2>/dev/null
    python3 - "$out/gen_$l.jsonl" "$out/clocks_$l.csv" "$l" <<'P'
import json, sys
st = next((json.loads(l) for l in open(sys.argv[1]) if '"steps"' in l), None)
if not st:
    print(sys.argv[3], "no steps"); sys.exit()
g = st["gpu_ms"]
sm = next((json.loads(l) for l in open(sys.argv[1]) if '"summary"' in l), {})
print("%s: clock warm-up during the upload %.1f ms, ttft %.1f ms" % (sys.argv[3], sm.get("clock_warm_up_ms", -1), sm.get("ttft_ms", -1)))
print("%s: steps gpu ms first 30: %s" % (sys.argv[3], " ".join("%.1f" % x for x in g[:30])))
print("%s: median of steps 40-80: %.3f" % (sys.argv[3], sorted(g[40:])[len(g[40:]) // 2] if len(g) > 40 else -1))
rows = [l.strip().split(", ") for l in open(sys.argv[2]) if l.strip()]
busy = [r for r in rows if len(r) > 5 and r[5].split()[0] not in ("0",)]
print("%s: %d samples, %d busy; pstate/sm MHz/mem MHz/W of the busy ones, in order:" % (sys.argv[3], len(rows), len(busy)))
print("   " + " | ".join("%s %s %s %s" % (r[1], r[2].split()[0], r[3].split()[0], r[4].split()[0]) for r in busy[:60]))
P
}
gen cold
sleep 1
gen idle1s
# weights in device-local memory that is not host-visible, uploaded through a staging buffer
[ "${STAGING:-0}" = 1 ] && NPU_VK_STAGING=1 gen staging
