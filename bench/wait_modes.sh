#!/bin/bash
# Decode step and resnet18 wall time with the driver's fence wait (block) vs polling (NPU_VK_WAIT=spin),
# with the step broken into upload, submit+wait and GPU time. On the GPU machine after bench/pack_device.sh.
OUT=${OUT:-out}; mkdir -p $OUT
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export GLIBC_TUNABLES=glibc.rtld.optional_static_tls=4000000
B=.dev/npu-explore; Q=tests/models/qwen2_5_1_5b
for w in block spin; do
  NPU_VK_WAIT=$w $B generate $Q --random-weights 1 --dtype bf16 --prompt-ids 1 --max-new 200 --json > $OUT/g_$w.jsonl 2>$OUT/g_$w.err
  python3 - $OUT/g_$w.jsonl $w <<'P'
import json,sys,statistics as S
l=[json.loads(x) for x in open(sys.argv[1])]; s=l[1]; m=l[0]
k=slice(20,None)
print(sys.argv[2], "step ms %.3f gpu %.3f upload %.3f submit %.3f  ttft %.1f tok/s %.1f" % tuple([S.median(s[x][k]) for x in ("ms","gpu_ms","upload_ms","submit_ms")] + [m["ttft_ms"], m["decode_tokens_per_s"]]))
P
  NPU_VK_WAIT=$w $B profile tests/models/resnet18/model.json --random-weights 1 --iters 30 | grep '^total'
done
