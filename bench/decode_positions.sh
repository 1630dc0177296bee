#!/bin/bash
# Decode step time by cache position on Qwen2.5-1.5B (architecture only: --random-weights), on
# the GPU machine after bench/pack_device.sh: a one-token prompt, then greedy decode to position
# 1000, every step timed (generate --json "steps" line). Shows that a step's cost follows the
# valid prefix (index_copy writes one row, attention skips the masked tail), not the cache size.
out=${OUT:-out}; mkdir -p "$out"
B=${NPU_EXPLORE:-.dev/npu-explore}
"$B" generate tests/models/qwen2_5_1_5b --random-weights 1 --dtype bf16 --prompt-ids 1 --max-new 1001 --json \
    > "$out/decode_positions.jsonl" 2>"$out/decode_positions.err" || { cat "$out/decode_positions.err"; exit 1; }
python3 - "$out/decode_positions.jsonl" <<'P'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
s = next(l for l in lines if l["kind"] == "summary"); st = next(l for l in lines if l["kind"] == "steps")
by = dict(zip(st["pos"], st["ms"]))
print("device:", s["device"], s["dtype"], "state on the", s["state"])
for p in (1, 64, 512, 1000):
    w = [by[q] for q in range(p - 2, p + 3) if q in by]
    print("position %4d: %.2f ms per decode step (median of %d steps around it)" % (p, sorted(w)[len(w) // 2], len(w)))
print("decode tokens/s over %d steps: %.1f" % (s["decode_steps"], s["decode_tokens_per_s"]))
P
