#!/bin/bash
# Import + compile time of the 1725-node Qwen2.5-1.5B decode IR (and others): median of 10 runs
# of the whole pipeline (IR read, shape checks, all passes with snapshots, lowering), as printed
# by `compile`. Build first: make MODE=release
B=${B:-build/release/npu-explore}
for m in tests/models/qwen2_5_1_5b/decode.json tests/models/qwen2_5_1_5b/prefill.json tests/models/resnet18/model.json; do
    ms=()
    for i in $(seq 10); do
        ms+=("$("$B" compile "$m" -o /tmp/bench.npubin | sed -E 's/.*\(([0-9.]+) ms\)/\1/')")
    done
    med=$(printf '%s\n' "${ms[@]}" | sort -n | sed -n '5,6p' | awk '{s+=$1} END {printf "%.1f", s/2}')
    printf '%-45s median %6s ms  (min %s, max %s)\n' "$m" "$med" \
        "$(printf '%s\n' "${ms[@]}" | sort -n | head -1)" "$(printf '%s\n' "${ms[@]}" | sort -n | tail -1)"
done
