#!/bin/bash
# Session 15's A/Bs on the GPU, one run: the device conformance tests of the kernels this session
# changed, then full-size DenseNet-121 and Swin-T with each of the session's switches alternating
# (all on; cats copied: --disable cat-in-place; batch norms in their own kernels: --no-fuse
# elementwise; both off: DenseNet's plan at the session's start, 542 kernels in 466 levels); each
# model also checked against the CPU reference on the GPU (`run --check`). Files under $OUT.
#   on the GPU machine after bench/pack_device.sh (the exporter in .exporter/): bash bench/ab15.sh
set -u
cd "$(dirname "$0")/.."
out=${OUT:-out}; mkdir -p "$out"
B=${NPU_EXPLORE:-.dev/npu-explore}
export GLIBC_TUNABLES=glibc.rtld.optional_static_tls=4000000
for t in ${TESTS:-test_vk_cat test_vk_norm test_vk_attn_cache test_vk_data}; do
    [ -x .dev/tests/$t ] && { (cd .dev/tests && LD_LIBRARY_PATH=$PWD/../lib ./$t) > "$out/$t.txt" 2>&1; echo "$t on the GPU: rc=$? $(grep -c '\[       OK \]' "$out/$t.txt") ok, $(grep -c '\[  FAILED  \]' "$out/$t.txt") failed lines"; }
done
FULL=${FULL:-/tmp/full}
MODELS=${MODELS:-densenet121 swin_t}
PYTHONPATH=$PWD/.exporter python3 bench/export_full.py "$FULL" $MODELS > "$out/export.txt" 2>&1 ||
    { echo "export failed:"; tail -5 "$out/export.txt"; }
prof() { # $1 model, $2 label, rest: options
    local m=$1 l=$2; shift 2
    "$B" profile "$FULL/$m/model.json" --random-weights 1 --dtype fp16 --iters 50 --time-only \
        --format json "$@" > "$out/p_$m.$l.jsonl" 2> "$out/p_$m.$l.err" || { echo "$m $l: failed: $(tail -1 "$out/p_$m.$l.err")"; return; }
    python3 - "$out/p_$m.$l.jsonl" "$m $l" <<'P'
import collections, json, sys
c = collections.defaultdict(float); s = None
for l in open(sys.argv[1]):
    o = json.loads(l)
    if o.get("kind") == "kernel": c[o["kernel"]] += max(o["gpu_us"], 0)
    elif o.get("kind") == "summary": s = o
top = ", ".join("%s %.0f" % kv for kv in sorted(c.items(), key=lambda kv: -kv[1])[:6])
print("%-24s wall %8.1f us  gpu step %8.1f us  %d kernels / %d levels | %s" % (
    sys.argv[2], s["wall_us"], s["gpu_step_us"], s["kernels"], s["levels"], top))
P
}
for m in $MODELS; do
    "$B" run "$FULL/$m/model.json" --random-weights 1 --dtype fp16 --check > "$out/check_$m.txt" 2>&1
    echo "$m run --check on the GPU: rc=$? $(grep '^summary' "$out/check_$m.txt")"
    for r in $(seq "${REPEAT:-2}"); do
        prof "$m" all-on
        prof "$m" cats-copied --disable cat-in-place
        prof "$m" bn-alone --no-fuse elementwise
        prof "$m" both-off --disable cat-in-place --no-fuse elementwise
    done
done | tee "$out/ab15.txt"
