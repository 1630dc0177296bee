#!/bin/bash
# Decode step time at cache positions ~128 and ~1000 on Qwen2.5-1.5B (--random-weights, bf16)
# under several settings, alternating (A/B in one run): each setting is one `generate` to
# position 1001 with every step timed; printed: the medians of positions 120-136 and 984-1000.
# The generated tokens' count and CRC show that the settings produce the same text.
# Settings are space-separated lists of NAME=V joined by commas ("-" for the defaults), as in
# bench/knobs.sh. On the GPU machine after bench/pack_device.sh:
#   bash bench/decode_splits.sh "-" "attn.splits=1" "attn.splits=4"
set -u
cd "$(dirname "$0")/.."
B=${NPU_EXPLORE:-.dev/npu-explore}
export GLIBC_TUNABLES=glibc.rtld.optional_static_tls=4000000
for r in $(seq "${REPEAT:-2}"); do
    for s in "$@"; do
        args=()
        [ "$s" != "-" ] && for kv in ${s//,/ }; do args+=(--tune "$kv"); done
        "$B" generate tests/models/qwen2_5_1_5b --random-weights 1 --dtype bf16 --prompt-ids 1 \
            --max-new 1001 --json "${args[@]}" > /tmp/ds.jsonl 2> /tmp/ds.err ||
            { echo "$s: failed: $(tail -1 /tmp/ds.err)"; continue; }
        python3 - "$s" <<'P'
import json, sys
lines = [json.loads(l) for l in open("/tmp/ds.jsonl")]
st = next(l for l in lines if l["kind"] == "steps")
su = next(l for l in lines if l["kind"] == "summary")
import zlib
by = dict(zip(st["pos"], st["ms"]))
med = lambda a, b: sorted(by[p] for p in range(a, b + 1) if p in by)[len([p for p in range(a, b + 1) if p in by]) // 2]
print("%-40s @120-136 %.3f ms  @984-1000 %.3f ms  tokens %d crc %08x" % (sys.argv[1], med(120, 136),
      med(984, 1000), len(su["tokens"]), zlib.crc32(str(su["tokens"]).encode())))
P
    done
done
