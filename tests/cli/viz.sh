#!/bin/bash
# Pictures of a profile (issue 24): profile --format trace (Chrome trace-event JSON that Perfetto
# opens, checked with python3's json module), dot --color time|error --profile (a heat map with a
# legend; a profile of another model or plan refused with exit 2), and the explorer's timeline
# and graph heat map on convnet.
. tests/cli/lib.bash
M=tests/models/convnet/model.json

"$B" profile $M --iters 3 --format trace -o "$T/trace.json" --save "$T/conv.jsonl" 2>"$T/err"; rc=$?
ok "profile --format trace -o writes the trace (exit 0)" "[ $rc = 0 ] && [ -s '$T/trace.json' ] && [ -s '$T/conv.jsonl' ]"
cat > "$T/check.py" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"]
nk = sum(1 for l in open(sys.argv[2]) if json.loads(l)["kind"] == "kernel")
gpu = [e for e in ev if e["ph"] == "X" and e["cat"] == "kernel"]
cpu = [e for e in ev if e["ph"] == "X" and e["cat"] == "cpu-reference"]
assert nk > 0 and len(gpu) == nk and len(cpu) == nk, (nk, len(gpu), len(cpu))
assert d["otherData"]["kernels"] == nk
for e in gpu:
    a = e["args"]
    for k in ("kernel", "shader", "fusion", "level", "rel_l2", "verdict"):
        assert k in a, k
    assert e["pid"] == 1 and e["dur"] >= 0 and e["ts"] >= 0
    assert abs(e["dur"] - a["gpu_us"]) < 1e-6
# a level starts when the previous level's slowest kernel ends; one level's kernels share a start
by = {}
for e in gpu:
    by.setdefault(e["args"]["level"], []).append(e)
t = 0.0
for lv in sorted(by):
    assert all(abs(e["ts"] - t) < 1e-3 for e in by[lv]), lv
    assert sorted(e["tid"] for e in by[lv]) == list(range(len(by[lv])))
    t += max(e["dur"] for e in by[lv])
names = [e for e in ev if e["ph"] == "M" and e["name"] == "process_name"]
assert {e["pid"] for e in names} == {1, 2}
print(nk, 1 + max(e["tid"] for e in gpu))
PY
ok "the trace is JSON: one X event per kernel on the device and on the CPU reference, levels in order" \
    "python3 '$T/check.py' '$T/trace.json' '$T/conv.jsonl' > '$T/nk' && [ \$(cut -d' ' -f1 '$T/nk') -ge 5 ]"
# qwen2_tiny's decode step has levels of several kernels: side by side on lanes
"$B" profile tests/models/qwen2_tiny/decode.json --iters 2 --format trace -o "$T/q.json" --save "$T/q.jsonl" 2>"$T/err"
ok "qwen2_tiny decode: a level's kernels side by side on lanes (3), still one event per kernel" \
    "python3 '$T/check.py' '$T/q.json' '$T/q.jsonl' > '$T/qn' && [ \$(cut -d' ' -f2 '$T/qn') -ge 3 ]"

# dot --color time|error --profile: the nodes coloured by the saved profile, a legend in the drawing
"$B" dot $M --color time --profile "$T/conv.jsonl" -o "$T/time.svg" > "$T/out" 2>&1; rc=$?
ok "dot --color time --profile draws an SVG (exit 0)" "[ $rc = 0 ] && grep -q '<svg' '$T/time.svg'"
ok "the time heat map has its legend and colours the nodes" \
    "grep -q 'GPU time of the kernels computing the node' '$T/time.svg' && grep -q 'no kernel' '$T/time.svg' \
     && grep -q 'fill=\"#bd0026\"' '$T/time.svg' && [ \$(grep -Ec 'fill=\"#(ffffb2|fecc5c|fd8d3c|f03b20|bd0026)\"' '$T/time.svg') -ge 11 ]"
"$B" dot $M --color error --profile "$T/conv.jsonl" -o "$T/err.dot" > /dev/null 2>&1; rc=$?
ok "dot --color error: the error legend, every judged node green to yellow (convnet agrees)" \
    "[ $rc = 0 ] && grep -q 'error of the kernel computing the node' '$T/err.dot' && grep -q 'MISMATCH' '$T/err.dot' \
     && grep -Eq 'n[0-9]+ \\[fillcolor=\"#(1a9850|91cf60|fee08b)\"' '$T/err.dot' && ! grep -Eq 'n[0-9]+ \\[fillcolor=\"#d73027\"' '$T/err.dot'"
# a profile of another model, or of another plan of this model, is refused (exit 2, what differs)
"$B" profile tests/models/mlp/model.json --backend cpu --iters 2 --save "$T/mlp.jsonl" > /dev/null 2>&1
"$B" dot $M --color time --profile "$T/mlp.jsonl" -o "$T/x.svg" > /dev/null 2> "$T/e1"; rc=$?
ok "a profile of another model is refused (exit 2, names both models)" \
    "[ $rc = 2 ] && grep -q \"the saved profile is of model 'mlp', this is 'convnet'\" '$T/e1' && [ ! -e '$T/x.svg' ]"
"$B" dot $M --color time --profile "$T/conv.jsonl" --no-fuse F2 -o "$T/x.svg" > /dev/null 2> "$T/e2"; rc=$?
ok "a profile of another plan is refused (exit 2, names the kernel and its nodes)" \
    "[ $rc = 2 ] && grep -q 'kernel 2 (conv2d[a-z_]*, F2) of the saved profile computes \\[conv2d_1,relu_1\\]' '$T/e2' \
     && grep -q 'another plan' '$T/e2'"
grep -v '"summary"' "$T/conv.jsonl" | sed 's/"relu_1"/"relu_9"/g' > "$T/renamed.jsonl"
"$B" dot $M --color error --profile "$T/renamed.jsonl" -o "$T/x.svg" > /dev/null 2> "$T/e3"; rc=$?
ok "a profile naming a node the model lacks is refused (exit 2, names the node)" \
    "[ $rc = 2 ] && grep -q \"computes node 'relu_9'\" '$T/e3'"
"$B" dot $M --color time -o "$T/x.svg" > /dev/null 2> "$T/e4"; rc=$?
ok "--color time without --profile is exit 2" "[ $rc = 2 ] && grep -q 'needs --profile' '$T/e4'"

# the explorer (headless, --backend cpu: the same plan on the CPU reference, quick): p profiles,
# t draws the timeline, j selects kernels by index (the details name the same kernel), the graph's
# c colours by the heat map with its legend; after a fusion toggle both say the profile is stale
"$B" $M --backend cpu --tui-script tests/golden/tui/pictures.keys --tui-size 120x40 --tui-stable \
    --tui-dump "$T/pic.txt" 2> "$T/pic.err"; rc=$?
screen() { awk -v s="=== screen $1 " 'index($0, s) == 1 {on = 1; next} /^=== screen / {on = 0} on' "$T/pic.txt"; }
screen 1 > "$T/s1"; screen 2 > "$T/s2"; screen 3 > "$T/s3"; screen 4 > "$T/s4"
screen 5 > "$T/s5"; screen 6 > "$T/s6"; screen 7 > "$T/s7"; screen 8 > "$T/s8"
ok "the key script runs (exit 0)" "[ $rc = 0 ]"
ok "t: the timeline of the profiled step, one bar per kernel on convnet's one lane, a level after another" \
    "grep -q 'kernels: timeline of the profiled step (t: table)' '$T/s1' && grep -q 'time  - us' '$T/s1' \
     && [ \$(grep '^|.*||L0 ' '$T/s1' | grep -oE '\\[[0-9]+ ' | wc -l) = 8 ] && ! grep -q '||L1 ' '$T/s1' \
     && grep -q '8 kernels in 8 levels' '$T/s1'"
ok "j j j selects kernel 2: its bar in '#', the timeline's line and the details name kernel 2" \
    "grep -q '#2 conv2' '$T/s2' && grep -q 'kernel 2 conv2d_part F2  level 3 lane 0' '$T/s2' \
     && grep -q '>kernel 2 conv2d_part on npu' '$T/s3'"
ok "t again: the table; its footer names t timeline (the actions table)" \
    "grep -q 'kernels, profiled (s: sort, t: timeline)' '$T/s4' && grep -q ' t timeline ' '$T/s4'"
ok "graph c: the heat map by GPU time with its legend" \
    "grep -q 'heat: gpu time (legend below)' '$T/s5' && grep -q 'gpu time: \\[0-5%\\] \\[5-15%\\] \\[15-35%\\] \\[35-60%\\] \\[60-100%\\] (dim: no kernel)' '$T/s5'"
ok "c again: by error, the rel_l2 legend" \
    "grep -q 'heat: error (legend below)' '$T/s6' && grep -q 'rel_l2: \\[below 1e-4\\] \\[1e-4 to 1e-3\\]' '$T/s6'"
ok "after a fusion toggle the timeline is stale, never drawn; the graph's c says so" \
    "grep -q 'kernels: timeline (profile stale: p)' '$T/s7' && grep -q 'measured an earlier plan' '$T/s7' && ! grep -q '||L0 ' '$T/s7' \
     && grep -q 'graph: the profile measured an earlier plan' '$T/s8' && grep -q 'partition: cyan npu' '$T/s8'"
"$B" $M --backend cpu --tui-keys '?' --tui-size 160x60 --tui-stable > "$T/help.txt" 2>&1
ok "help lists t (timeline) and + - (zoom)" "grep -Eq '[|] t +timeline +the profiled step as a timeline' '$T/help.txt' && grep -q 'zoom the timeline' '$T/help.txt'"

# the session's dot (--batch, the : prompt) draws the same heat map from its profile of this plan
printf 'set on-error continue\ndot %s --color time\nprofile 2\ndot %s --color error\ntrace %s\nfusion off F2\ndot %s --color error\n' \
    "$T/b0.svg" "$T/b1.dot" "$T/bt.json" "$T/b2.svg" | "$B" --batch $M --backend cpu -x - > "$T/batch.txt" 2>&1
ok "batch dot --color error after profile: the heat map and its legend; before a profile and after a toggle: refused" \
    "grep -q 'dot --color time: profile first' '$T/batch.txt' && grep -q 'error of the kernel computing the node' '$T/b1.dot' \
     && grep -Eq 'n[0-9]+ \\[fillcolor=\"#1a9850\"' '$T/b1.dot' && grep -q 'measured an earlier plan' '$T/batch.txt' && [ ! -e '$T/b2.svg' ] && [ ! -e '$T/b0.svg' ]"
ok "batch trace FILE: the session's profile as trace JSON (the explorer's timeline as a file)" \
    "python3 -c 'import json,sys; e=json.load(open(sys.argv[1]))[\"traceEvents\"]; assert sum(x[\"ph\"] == \"X\" and x[\"cat\"] == \"kernel\" for x in e) == 8' '$T/bt.json'"
