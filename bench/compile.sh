#!/bin/bash
# Import + compile time of the 1725-node Qwen2.5-1.5B decode IR (and others): median of RUNS (10)
# runs of the whole pipeline (IR read, shape checks, all passes with snapshots, lowering), as
# printed by `compile`, and of the whole process (start to exit, writing the .npubin included).
# The load average is printed too: the numbers are wall times. Build first: make MODE=release
B=${B:-build/release/npu-explore}
RUNS=${RUNS:-10}
MODELS=${MODELS:-tests/models/qwen2_5_1_5b/decode.json tests/models/qwen2_5_1_5b/prefill.json tests/models/resnet18/model.json}
out=$(mktemp /tmp/bench-compile-XXXXXX.npubin)
trap 'rm -f "$out"' EXIT
# median (mean of the middle two for an even count), min and max of numbers on stdin
stats() { sort -n | awk '{v[NR]=$1} END {m=(NR%2)?v[(NR+1)/2]:(v[NR/2]+v[NR/2+1])/2;
    printf "median %6.1f ms (min %.1f, max %.1f)", m, v[1], v[NR]}'; }
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
for m in $MODELS; do
    rep=() proc=()
    for i in $(seq "$RUNS"); do
        t0=$(date +%s%N)
        line=$("$B" compile "$m" -o "$out" | grep '^wrote ') || { echo "$m: compile failed" >&2; exit 1; }
        t1=$(date +%s%N)
        rep+=("$(sed -E 's/.*\(([0-9.]+) ms\)$/\1/' <<<"$line")")
        proc+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.1f", (b-a)/1e6}')")
    done
    printf '%-40s compile %s  process %s\n' "$m" "$(printf '%s\n' "${rep[@]}" | stats)" \
        "$(printf '%s\n' "${proc[@]}" | stats)"
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
