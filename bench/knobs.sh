#!/bin/bash
# One model under several tuning settings in one run (A/B of knobs on the same machine): for each
# setting, `profile --time-only` and a line with the wall, the GPU step and the biggest kernel
# families. Settings are space-separated lists of NAME=V joined by commas ("-" for the defaults).
#   bash bench/knobs.sh MODEL.json "DTYPE" "-" "cm.tile=64" "cm.tile=64,cm.target=1" ...
# Environment: ITERS (default 20), REPEAT (default 2: the settings alternate REPEAT times).
set -u
cd "$(dirname "$0")/.."
B=${NPU_EXPLORE:-.dev/npu-explore}
m=$1 dt=$2; shift 2
export GLIBC_TUNABLES=glibc.rtld.optional_static_tls=4000000
for r in $(seq "${REPEAT:-2}"); do
    for s in "$@"; do
        args=()
        [ "$s" != "-" ] && for kv in ${s//,/ }; do args+=(--tune "$kv"); done
        "$B" profile "$m" --random-weights 1 --dtype "$dt" --iters "${ITERS:-20}" --time-only \
            --format json "${args[@]}" > /tmp/knobs.jsonl 2> /tmp/knobs.err || { echo "$s: failed: $(tail -1 /tmp/knobs.err)"; continue; }
        python3 - "$s" "$(basename "$(dirname "$m")")" <<'P'
import collections, json, sys
c = collections.defaultdict(float); s = None
for l in open("/tmp/knobs.jsonl"):
    o = json.loads(l)
    if o.get("kind") == "kernel": c[o["kernel"]] += max(o["gpu_us"], 0)
    elif o.get("kind") == "summary": s = o
top = ", ".join("%s %.0f" % kv for kv in sorted(c.items(), key=lambda kv: -kv[1])[:5])
print("%-14s %-34s wall %8.1f us  gpu step %8.1f us  %d kernels / %d levels | %s" % (
    sys.argv[2], sys.argv[1], s["wall_us"], s["gpu_step_us"], s["kernels"], s["levels"], top))
P
    done
done
