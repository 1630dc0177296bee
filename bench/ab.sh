#!/bin/bash
# A/B of compiler switches on the GPU, one run: the device conformance tests named in TESTS, then
# each model profiled under every setting in turn, REPEAT passes alternating the settings (so a
# drifting clock hits them alike), each model also checked against the CPU reference on the GPU
# (`run --check`, first setting) and, with TORCH=1, timed by PyTorch (eager and CUDA graph) on the
# same IR. Files under $OUT; the table goes to $OUT/ab.txt.
#   MODELS: full-size torchvision names (exported here by bench/export_full.py) or IR paths,
#           NAME@bf16 / PATH@bf16 for another dtype (default fp16)
#   SETTINGS: "label=options;label=options" (an empty options string: the defaults)
#   (a model already exported under $FULL, default /tmp/full, is not exported again)
#   NPU_EXPLORE: the binary (default .dev/npu-explore)
#   on the GPU machine after bench/pack_device.sh (the exporter in .exporter/):
#     MODELS="vit_b_16 convnext_tiny" SETTINGS="on=;off=--tune cm.waves=0" bash bench/ab.sh
set -u
cd "$(dirname "$0")/.."
out=${OUT:-out}; mkdir -p "$out"
B=${NPU_EXPLORE:-.dev/npu-explore}
ITERS=${ITERS:-50}
export GLIBC_TUNABLES=glibc.rtld.optional_static_tls=4000000
# the tests tier by tier (the emulated tier of NPU_TEST_TIER=all is lavapipe's: bench/NOTES.md)
for t in ${TESTS:-}; do
    for tier in portable nv-coopmat; do
        [ -x .dev/tests/$t ] && { (cd .dev/tests && LD_LIBRARY_PATH=$PWD/../lib NPU_TEST_TIER=$tier timeout 300 ./$t) > "$out/$t.$tier.txt" 2>&1; echo "$t on the GPU ($tier): rc=$? $(grep -c '\[       OK \]' "$out/$t.$tier.txt") ok, $(grep -c '\[  FAILED  \]' "$out/$t.$tier.txt") failed lines"; }
    done
done
FULL=${FULL:-/tmp/full}
names=""
for m in $MODELS; do case "${m%@*}" in *.json) ;; *) [ -f "$FULL/${m%@*}/model.json" ] || names="$names ${m%@*}" ;; esac; done
[ -n "$names" ] && { PYTHONPATH=$PWD/.exporter python3 bench/export_full.py "$FULL" $names > "$out/export.txt" 2>&1 ||
    { echo "export failed:"; tail -5 "$out/export.txt"; }; }
path() { case "${1%@*}" in *.json) echo "${1%@*}" ;; *) echo "$FULL/${1%@*}/model.json" ;; esac; }
dtype() { case "$1" in *@*) echo "${1#*@}" ;; *) echo fp16 ;; esac; }
label() { basename "$(dirname "$(path "$1")")"; }
prof() { # $1 model, $2 label, rest: options
    local m=$1 l=$2 f; shift 2
    f="$out/p_$(label "$m").$l.jsonl"
    # shellcheck disable=SC2086
    "$B" profile "$(path "$m")" --random-weights 1 --dtype "$(dtype "$m")" --iters "$ITERS" --time-only \
        --format json "$@" > "$f" 2> "${f%.jsonl}.err" || { echo "$m $l: failed: $(tail -1 "${f%.jsonl}.err")"; return; }
    python3 - "$f" "$(label "$m") $l" <<'P'
import collections, json, sys
c = collections.defaultdict(float); s = None
for l in open(sys.argv[1]):
    o = json.loads(l)
    if o.get("kind") == "kernel": c[o["kernel"]] += max(o["gpu_us"], 0)
    elif o.get("kind") == "summary": s = o
top = ", ".join("%s %.0f" % kv for kv in sorted(c.items(), key=lambda kv: -kv[1])[:6])
print("%-28s wall %8.1f us  gpu step %8.1f us  %d kernels / %d levels | %s" % (
    sys.argv[2], s["wall_us"], s["gpu_step_us"], s["kernels"], s["levels"], top))
P
}
IFS=';' read -r -a sets <<< "${SETTINGS:-defaults=}"
for m in $MODELS; do
    first=${sets[0]#*=}
    # shellcheck disable=SC2086
    "$B" run "$(path "$m")" --random-weights 1 --dtype "$(dtype "$m")" --check $first > "$out/check_$(label "$m").txt" 2>&1
    echo "$(label "$m") run --check on the GPU: rc=$? $(grep '^summary' "$out/check_$(label "$m").txt")"
    if [ "${TORCH:-0}" = 1 ]; then
        python3 bench/torch_ir.py "$(path "$m")" --dtype "$(dtype "$m")" --iters "$ITERS" --label "$(label "$m")" \
            > "$out/torch_$(label "$m").jsonl" 2> "$out/torch_$(label "$m").err" && echo "$(label "$m") torch: $(tail -1 "$out/torch_$(label "$m").jsonl")"
    fi
    for r in $(seq "${REPEAT:-2}"); do
        for s in "${sets[@]}"; do
            # shellcheck disable=SC2086
            prof "$m" "${s%%=*}" ${s#*=}
        done
    done
done | tee "$out/ab.txt"
