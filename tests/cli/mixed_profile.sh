#!/bin/bash
# Mixed execution in describe and profile (issue #5): every transfer between an NPU and a CPU
# partition is named with its direction, cast and layout change (describe text and JSON), and
# profile times it as a row of its own (table `xN` rows, json "transfer" lines, csv rows), counted
# in the totals apart from the kernels; CPU-partition kernels are rows with host times.
. tests/cli/lib.bash
G=tests/models/gpt_block/model.json
MB=tests/models/mobilenet_block/model.json
# generated kernels and fold-constants off: the mask is then built on the CPU every run, so bools
# and integers cross too
"$B" describe $G --cpu-op aten.softmax.int --no-fuse fuse-elementwise --disable fold-constants > "$T/d.txt"; rc=$?
ok "describe names each transfer with its direction and cast" "[ $rc = 0 ] && grep -qE '^    transfer npu->cpu masked_fill f16->f32 \[1,4,10,10\] 800 B' $T/d.txt && grep -qE '^    transfer cpu->npu softmax f32->f16 \[' $T/d.txt && grep -qE '^    transfer cpu->npu sub i64->i32 \[' $T/d.txt && grep -qE '^    transfer cpu->npu [a-z_0-9]+ bool->f16 \[' $T/d.txt"
"$B" describe $G --dtype fp32 --no-fuse fuse-elementwise --disable fold-constants > "$T/d32.txt"
ok "fp32: float transfers need no cast, integers still narrow to i32" "grep -qE 'transfer [a-z>-]+ [a-z_0-9]+ no cast' $T/d32.txt && ! grep -qE 'transfer .* f32->f32' $T/d32.txt"
"$B" describe $MB --cpu-op aten.hardswish.default --json > "$T/m.json"; rc=$?
ok "describe --json: transfers with direction, from, to, layout and bytes; only across targets" "[ $rc = 0 ] && python3 -c '
import json,sys
p=json.load(open(sys.argv[1])); ts=p[\"tensors\"]; ks=p[\"kernels\"]; parts=p[\"partitions\"]
made={}
for k in ks:
    for o in k[\"outputs\"]:
        b=ts[o].get(\"alias_of\",o); made[b]=k[\"target\"]
n=0
for q in parts:
    assert [x[\"tensor\"] for x in q[\"transfers\"]]==q[\"transfers_in\"], q
    for x in q[\"transfers\"]:
        n+=1
        t=x[\"tensor\"]; b=ts[t].get(\"alias_of\",t)
        assert made[b]!=q[\"target\"], (q, x)
        assert x[\"direction\"]==(\"npu->cpu\" if q[\"target\"]==\"cpu\" else \"cpu->npu\")
        assert (x[\"from\"],x[\"to\"])==((\"f16\",\"f32\") if q[\"target\"]==\"cpu\" else (\"f32\",\"f16\")), x
        assert x[\"bytes\"]==2*eval(\"*\".join(map(str,ts[t].get(\"padded_shape\",ts[t][\"shape\"])))), x
        assert x[\"layout\"] in (\"same\",\"pad\",\"depad\")
assert n==6, n
' $T/m.json"
# softmax forced onto the CPU: scores go to the host and back (both directions)
X=(--random-weights 1 --cpu-op aten.softmax.int)
"$B" describe $G "${X[@]}" --json > "$T/x.json"
NX=$(python3 -c 'import json,sys; print(sum(len(q["transfers"]) for q in json.load(open(sys.argv[1]))["partitions"]))' "$T/x.json")
NC=$(python3 -c 'import json,sys; print(sum(k["target"]=="cpu" for k in json.load(open(sys.argv[1]))["kernels"]))' "$T/x.json")
for be in vulkan cpu; do
    "$B" profile $G "${X[@]}" --backend $be --iters 3 --format json > "$T/p.jsonl"; rc=$?
    ok "$be: profile json has one transfer line per plan transfer ($NX), counted in the summary" "[ $rc = 0 ] && python3 -c '
import json,sys
ls=[json.loads(l) for l in open(sys.argv[1])]
xs=[o for o in ls if o[\"kind\"]==\"transfer\"]; ks=[o for o in ls if o[\"kind\"]==\"kernel\"]
s=[o for o in ls if o[\"kind\"]==\"summary\"][0]
assert len(xs)==s[\"transfers\"]==int(sys.argv[2]), (len(xs), s)
assert {x[\"direction\"] for x in xs}=={\"npu->cpu\",\"cpu->npu\"}
assert all(x[\"us\"]>=0 and x[\"min_us\"]<=x[\"us\"]<=x[\"max_us\"] and x[\"bytes\"]>0 and x[\"tensor\"] for x in xs), xs
assert abs(sum(x[\"us\"] for x in xs)-s[\"transfer_us\"])<0.01*len(xs)+1e-3, s
cpu=[k for k in ks if k[\"target\"]==\"cpu\"]
assert cpu and abs(sum(k[\"gpu_us\"] for k in cpu)-s[\"cpu_partition_us\"])<0.01*len(cpu)+1e-3, s
assert all(k[\"verdict\"]==\"ok\" for k in ks), [k for k in ks if k[\"verdict\"]!=\"ok\"]
' $T/p.jsonl $NX"
done
"$B" profile $G "${X[@]}" --iters 2 > "$T/p.txt"; rc=$?
ok "profile table: a row per transfer, right before its partition's first kernel, and a mixed total" "[ $rc = 0 ] && [ \$(grep -cE '^x[0-9]+ +(npu->cpu|cpu->npu) ' $T/p.txt) = $NX ] && grep -q '^mixed: $NC cpu-partition kernels .* transfers: $NX, ' $T/p.txt && python3 -c '
import json,re,sys
p=json.load(open(sys.argv[2])); firsts=[q[\"first_kernel\"] for q in p[\"partitions\"] for x in q[\"transfers\"]]
rows=[l for l in open(sys.argv[1]) if re.match(r\"^(x)?[0-9]+ \", l)]
seen=[]
for i,l in enumerate(rows):
    if l.startswith(\"x\"):
        nxt=next(r for r in rows[i+1:] if not r.startswith(\"x\"))
        seen.append(int(nxt.split()[0]))
assert seen==firsts, (seen, firsts)
' $T/p.txt $T/x.json"
"$B" profile $G "${X[@]}" --iters 2 --format csv > "$T/p.csv"; rc=$?
ok "profile csv: transfer rows with the header's columns" "[ $rc = 0 ] && [ \$(grep -cE '^x[0-9]+,transfer,(npu->cpu|cpu->npu),' $T/p.csv) = $NX ] && [ \$(head -1 $T/p.csv | tr ',' '\n' | wc -l) = \$(grep '^x0,' $T/p.csv | tr ',' '\n' | wc -l) ]"
"$B" profile tests/models/convnet/model.json --backend cpu --iters 2 > "$T/c.txt"
ok "an all-NPU plan has no transfer rows and no mixed total" "! grep -qE '^x[0-9]' $T/c.txt && ! grep -q '^mixed:' $T/c.txt"
"$B" $G "${X[@]}" --tui-keys 'p<Dump>' --tui-size 130x50 --tui-stable > "$T/tui.txt" 2>&1
ok "explorer's profiler pane shows the transfers" "[ \$(grep -cE '\| +x[0-9]+ (npu->cpu|cpu->npu) ' $T/tui.txt) -ge 2 ] && grep -qE 'profile: ([0-9]+)/\\1 ok' $T/tui.txt"
