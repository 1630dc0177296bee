#!/bin/bash
# Import + compile time of the 1725-node Qwen2.5-1.5B decode IR (and others): medians of RUNS (10)
# runs of the whole pipeline (IR read, shape checks, all passes with snapshots, lowering) as
# `compile` prints it (wall), and of the whole process (start to exit, the .npubin written): its
# wall time and its CPU time (user + system). The machine is shared: wall times grow with the
# load average (printed before and after), CPU times much less. Build first: make MODE=release
B=${B:-build/release/npu-explore}
RUNS=${RUNS:-10}
MODELS=${MODELS:-tests/models/qwen2_5_1_5b/decode.json tests/models/qwen2_5_1_5b/prefill.json tests/models/resnet18/model.json}
out=$(mktemp /tmp/bench-compile-XXXXXX.npubin)
trap 'rm -f "$out"' EXIT
# median (mean of the middle two for an even count), min and max of numbers on stdin
stats() { sort -n | awk '{v[NR]=$1} END {m=(NR%2)?v[(NR+1)/2]:(v[NR/2]+v[NR/2+1])/2;
    printf "%6.1f ms (%.1f-%.1f)", m, v[1], v[NR]}'; }
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
TIMEFORMAT='%3R %3U %3S'
for m in $MODELS; do
    rep=() wall=() cpu=()
    for i in $(seq "$RUNS"); do
        { t=$( { time "$B" compile "$m" -o "$out" >"$out.txt"; } 2>&1 ); } ||
            { echo "$m: compile failed" >&2; exit 1; }
        rep+=("$(sed -nE 's/^wrote .*\(([0-9.]+) ms\)$/\1/p' "$out.txt")")
        read -r r u s <<<"$t"
        wall+=("$(awk -v r="$r" 'BEGIN {print r * 1000}')")
        cpu+=("$(awk -v u="$u" -v s="$s" 'BEGIN {print (u + s) * 1000}')")
    done
    rm -f "$out.txt"
    printf '%-40s compile %s  process %s  process cpu %s\n' "$m" \
        "$(printf '%s\n' "${rep[@]}" | stats)" "$(printf '%s\n' "${wall[@]}" | stats)" \
        "$(printf '%s\n' "${cpu[@]}" | stats)"
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
