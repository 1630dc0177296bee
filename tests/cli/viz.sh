#!/bin/bash
# Pictures of a profile (issue 24): profile --format trace (Chrome trace-event JSON that Perfetto
# opens, checked with python3's json module), dot --color time|error --profile (a heat map with a
# legend; a profile of another model or plan refused with exit 2), and the explorer's timeline
# and graph heat map on convnet.
B=${NPU_EXPLORE:-build/asan/npu-explore}
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
n=0
ok() { n=$((n + 1)); if eval "$2"; then echo "ok $n $1"; else echo "not ok $n $1"; fi; }
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
print(nk)
PY
ok "the trace is JSON: one X event per kernel on the device and on the CPU reference, levels in order" \
    "python3 '$T/check.py' '$T/trace.json' '$T/conv.jsonl' > '$T/nk' && [ \$(cat '$T/nk') -ge 5 ]"
