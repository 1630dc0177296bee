#!/bin/bash
# Quick A/B probes on the GPU machine (after bench/pack_device.sh), each a line of medians:
#   attn    the decode attention alone (bench/attn graphs: T 128 and 1024, 1 and 28 copies), by
#           split cap (NPU_ATTN_SPLITS: default 16, 1) and with parts left out (NPU_ATTN_ABLATE)
#   pattn   the prefill's attention alone (bench/attn: 128 rows over a 1024 cache, the causal mask;
#           1 and 28 copies): the fused kernel (pattern attention), the chain of before
#           (--no-fuse attention), workgroup sizes (NPU_ATTN) and parts left out (NPU_ATTN_ABLATE)
#   ablate  the tensor-core matmul's K loop with parts left out (NPU_CM_ABLATE, wrong results by
#           design): the gate, down and q GEMMs of prefill-128, bf16, first pass us
#   resnet  ResNet-18/50 checks, then a profile of each per entry of RESNET_ENVS (";"-separated;
#           an entry is environment assignments and profile options, "-" for none), e.g.
#           "-;NPU_CONV_TARGET=132;--tune conv.ablate=1": the step and the timed kernels by stem
#   tile    the tensor-core matmul's tiles on the same GEMMs (NPU_CM_TILE 64 and 128; the large
#           tile by K-split target, NPU_CM_TARGET 132 / 528 around its default 264; and with
#           its global loads (ablate 1) or MMAs (ablate 2) left out)
#   prefill Qwen2.5-1.5B prefill-128 (generate --prefill-runs 10: no CPU reference), once per entry
#           of PREFILL_ENVS (";"-separated; an entry is environment assignments and generate
#           options, "-" for none), e.g. "-;--no-fuse linear_glu;NPU_CM_GLU_TARGET=264"
#   decode  Qwen2.5-1.5B greedy decode after a 128-token prompt, once per environment in
#           DECODE_ENVS (e.g. "-;NPU_ATTN=128,1"): the steps after the slow state
# Usage: bash bench/probe.sh [attn] [pattn] [ablate] [resnet] [tile] [prefill] [decode]
#        (default: attn pattn ablate tile decode)
set -u
cd "$(dirname "$0")/.."
B=${NPU_EXPLORE:-.dev/npu-explore}
out=${OUT:-out}; mkdir -p "$out"
export GLIBC_TUNABLES=glibc.rtld.optional_static_tls=4000000
what=${*:-attn pattn ablate tile decode}
summary() { # file label: the profile summary's gpu step and the npu kernels' first-pass times
    python3 - "$1" "$2" <<'P'
import json, sys
ks, s = [], {}
for l in open(sys.argv[1]):
    o = json.loads(l)
    if o.get("kind") == "kernel" and o.get("target") == "npu":
        ks.append("%s %.1f%s" % (o["kernel"], o["gpu_us"], " (err %.1e)" % o["rel_l2"] if o.get("rel_l2") is not None and o["kernel"] != "pack" else ""))
    if o.get("kind") == "summary": s = o
att = [float(k.split()[1]) for k in ks if k.startswith("decode_attention")]
extra = " | %d attentions, mean %.1f us timed" % (len(att), sum(att) / len(att)) if len(att) > 1 else ""
print("%-28s gpu step %8.1f us | %s%s" % (sys.argv[2], s.get("gpu_step_us", -1), "; ".join(ks[:8]), extra))
P
}
entry() { # "NPU_X=V ... --opt ...": sets ev (NPU_X=1 and the NPU_* assignments) and opts ("-":
    # none; options include --tune NAME=V, the knobs of docs/tuning.md)
    ev=(NPU_X=1) opts=()
    for w in $1; do case $w in -) ;; NPU_*=*) ev+=("$w") ;; *) opts+=("$w") ;; esac; done
}
prof() { # label env model args...
    local label=$1 ev=$2 m=$3; shift 3
    env $ev "$B" profile "$m" --random-weights 1 --iters 20 --format json "$@" > "$out/p_$label.jsonl" 2> "$out/p_$label.err" ||
        { echo "$label failed: $(tail -2 "$out/p_$label.err")"; return; }
    summary "$out/p_$label.jsonl" "$label"
}
case " $what " in *" attn "*)
    mkdir -p "$out/attn" && python3 bench/attn/make_ir.py "$out/attn" > /dev/null
    for T in 128 1024; do
        for s in 16 1; do
            prof "attn_T${T}_x1_s$s" "NPU_ATTN_SPLITS=$s" "$out/attn/attn_T${T}_x1.json" --dtype bf16
        done
        # NPU_ATTN_ABLATE bits: 1 no mask scan, 2 no trips, 4 no merges, 8 no q load
        for a in ${ATTN_ABLATE:-1 2 4 8 7 15}; do
            prof "attn_T${T}_x1_ablate$a" "NPU_ATTN_ABLATE=$a" "$out/attn/attn_T${T}_x1.json" --dtype bf16
        done
        prof "attn_T${T}_x28" "NPU_X=1" "$out/attn/attn_T${T}_x28.json" --dtype bf16
        # NPU_ATTN="WG,RB": workgroup size and rows per team (nv-coopmat tier: WG up to 512)
        for w in ${ATTN_WG:-128,2 128,1 256,4 256,2 256,1 512,4 512,2 512,1}; do
            prof "attn_T${T}_x1_wg$w" "NPU_ATTN=$w" "$out/attn/attn_T${T}_x1.json" --dtype bf16 --tier nv-coopmat
        done
    done ;;
esac
case " $what " in *" pattn "*)
    mkdir -p "$out/attn" && python3 bench/attn/make_ir.py "$out/attn" > /dev/null
    for c in 1 28; do
        m="$out/attn/attn_prefill_T1024_q128_x$c.json"
        prof "pattn_x$c" "NPU_X=1" "$m" --dtype bf16 --tier nv-coopmat
        prof "pattn_x${c}_chain" "NPU_X=1" "$m" --dtype bf16 --tier nv-coopmat --no-fuse attention
    done
    m="$out/attn/attn_prefill_T1024_q128_x1.json"
    for a in ${ATTN_ABLATE:-1 2 4 8}; do
        prof "pattn_x1_ablate$a" "NPU_ATTN_ABLATE=$a" "$m" --dtype bf16 --tier nv-coopmat
    done
    for w in ${ATTN_WG:-128,2 128,1 256,4 256,2 64,4}; do
        prof "pattn_x1_wg$w" "NPU_ATTN=$w" "$m" --dtype bf16 --tier nv-coopmat
    done ;;
esac
case " $what " in *" ablate "*)
    for a in 0 1 2 4 8 5 7 15; do
        prof "ablate_$a" "NPU_CM_ABLATE=$a" bench/models/qwen_prefill_gemms.json --dtype bf16 --tier nv-coopmat
    done ;;
esac
case " $what " in *" resnet "*)
    "$B" run tests/models/resnet18/model.json --check > "$out/check_r18.txt" 2>&1; echo "check resnet18 vs PyTorch: rc=$? $(tail -1 "$out/check_r18.txt")"
    "$B" run tests/models/resnet50/model.json --random-weights 1 --dtype fp16 --check > "$out/check_r50.txt" 2>&1; echo "check resnet50 vs the CPU reference: rc=$? $(tail -1 "$out/check_r50.txt")"
    # one profile per model and entry of RESNET_ENVS (";"-separated environment assignments and
    # profile options, "-" for none): the step, and the timed kernels summed by stem
    IFS=';' read -ra envs <<< "${RESNET_ENVS:--}"
    i=0
    for e in "${envs[@]}"; do
        i=$((i + 1))
        entry "$e"
        for m in resnet18 resnet50; do
            f="$out/r_${m}_$i.jsonl"
            env "${ev[@]}" "$B" profile tests/models/$m/model.json --random-weights 1 --dtype fp16 --iters 50 --format json "${opts[@]}" \
                > "$f" 2> "$out/r_${m}_$i.err" || { echo "$m $e failed: $(tail -2 "$out/r_${m}_$i.err")"; continue; }
            python3 - "$f" "$m" "$e" <<'P'
import json, sys
s, by = {}, {}
for l in open(sys.argv[1]):
    o = json.loads(l)
    if o.get("kind") == "summary": s = o
    if o.get("kind") == "kernel" and o.get("target") == "npu":
        k = by.setdefault(o["kernel"], [0, 0.0]); k[0] += 1; k[1] += o["gpu_us"]
stems = ", ".join("%s %dx %.0f" % (n, v[0], v[1]) for n, v in sorted(by.items(), key=lambda x: -x[1][1])[:4])
print("%s %-30s wall %.1f gpu step %.1f us, %d kernels in %d levels | timed: %s" % (sys.argv[2], sys.argv[3], s.get("wall_us", -1), s.get("gpu_step_us", -1), s.get("kernels", 0), s.get("levels", 0), stems))
P
        done
    done ;;
esac
case " $what " in *" tile "*)
    for e in NPU_CM_TILE=64 NPU_CM_TILE=128 "NPU_CM_TILE=128 NPU_CM_TARGET=132" "NPU_CM_TILE=128 NPU_CM_TARGET=528" \
             "NPU_CM_TILE=128 NPU_CM_ABLATE=1" "NPU_CM_TILE=128 NPU_CM_ABLATE=2"; do
        prof "$(echo "$e" | sed 's/NPU_CM_//g; s/[= ]/_/g')" "$e" bench/models/qwen_prefill_gemms.json --dtype bf16 --tier nv-coopmat
    done ;;
esac
# gen_each NAME LIST ARGS...: one `generate` of Qwen2.5-1.5B (a 128-token prompt, bf16, random
# weights) per entry of the ";"-separated LIST ("-" for none; an entry is environment
# assignments and generate options), into $out/NAME<i>.jsonl; sets $e to the entry and $f to the
# file, then runs the caller's report_NAME on success
gen_each() {
    local name=$1 list=$2 i=0; shift 2
    local ids; ids=$(python3 -c 'print(",".join(str(1 + (i * 7919) % 150000) for i in range(128)))')
    IFS=';' read -ra envs <<< "$list"
    for e in "${envs[@]}"; do
        i=$((i + 1)); f="$out/$name$i.jsonl"
        local ev opts
        entry "$e"
        env "${ev[@]}" "$B" generate tests/models/qwen2_5_1_5b --random-weights 1 --dtype bf16 --prompt-ids "$ids" \
            --json "$@" "${opts[@]}" > "$f" 2> "$out/$name$i.err" || { echo "$name $e failed: $(tail -2 "$out/$name$i.err")"; continue; }
        "report_$name"
    done
}
report_pf() {
    python3 -c 'import json,sys
for l in open(sys.argv[1]):
    o = json.loads(l)
    if o.get("kind") == "summary": print("prefill-128 %-36s wall %.3f ms, gpu %.3f ms" % (sys.argv[2], o["prefill_wall_ms"], o["prefill_gpu_ms"]))' "$f" "$e"
}
# decode: medians of the 60 steps after the slow state after the upload (its last step over 1.5x
# the median step) and of positions 940-1000
report_decode() {
    python3 - "$f" "$e" <<'P'
import json, statistics, sys
g = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
st = next((o for o in g if o.get("kind") == "steps"), None)
if st:
    med = statistics.median(st["gpu_ms"])
    first = max([i + 1 for i, x in enumerate(st["gpu_ms"]) if x >= 1.5 * med] + [0])
    out = []
    for lo, hi in ((st["pos"][first], st["pos"][first] + 60), (940, 1000)):
        k = [i for i, p in enumerate(st["pos"]) if lo <= p <= hi]
        out.append("@%d-%d wall %.3f gpu %.3f" % (lo, hi, statistics.median([st["ms"][i] for i in k]), statistics.median([st["gpu_ms"][i] for i in k])))
    print("decode %-34s %s (ms, medians)" % (sys.argv[2], " | ".join(out)))
P
}
case " $what " in *" prefill "*) gen_each pf "${PREFILL_ENVS:--}" --max-new 2 --prefill-runs 10 ;; esac
case " $what " in *" decode "*) gen_each decode "${DECODE_ENVS:--}" --max-new 874 ;; esac
