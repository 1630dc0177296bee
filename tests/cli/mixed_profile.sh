#!/bin/bash
# Mixed execution in describe and profile (issue #5): every transfer between an NPU and a CPU
# partition is named with its direction, cast and layout change (describe text and JSON), and
# profile times it as a row of its own (table `xN` rows, json "transfer" lines, csv rows), counted
# in the totals apart from the kernels; CPU-partition kernels are rows with host times.
B=${NPU_EXPLORE:-build/asan/npu-explore}
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
n=0
ok() { n=$((n + 1)); if eval "$2"; then echo "ok $n $1"; else echo "not ok $n $1"; fi; }
G=tests/models/gpt_block/model.json
MB=tests/models/mobilenet_block/model.json
"$B" describe $G > "$T/d.txt"; rc=$?
ok "describe names each transfer with its direction and cast" "[ $rc = 0 ] && grep -qE '^    transfer npu->cpu [a-z_0-9]+ f16->f32 \[' $T/d.txt && grep -qE '^    transfer cpu->npu [a-z_0-9]+ (f32->f16|i64->i32) \[' $T/d.txt"
"$B" describe $G --dtype fp32 > "$T/d32.txt"
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
for be in vulkan cpu; do
    "$B" profile $G --random-weights 1 --backend $be --iters 3 --format json > "$T/p.jsonl"; rc=$?
    ok "$be: profile json has one transfer line per plan transfer, counted in the summary" "[ $rc = 0 ] && python3 -c '
import json,sys
ls=[json.loads(l) for l in open(sys.argv[1])]
xs=[o for o in ls if o[\"kind\"]==\"transfer\"]; ks=[o for o in ls if o[\"kind\"]==\"kernel\"]
s=[o for o in ls if o[\"kind\"]==\"summary\"][0]
assert len(xs)==s[\"transfers\"]==3, (len(xs), s)
assert {x[\"direction\"] for x in xs}=={\"npu->cpu\",\"cpu->npu\"}
assert all(x[\"us\"]>=0 and x[\"min_us\"]<=x[\"us\"]<=x[\"max_us\"] and x[\"bytes\"]>0 and x[\"tensor\"] for x in xs), xs
assert abs(sum(x[\"us\"] for x in xs)-s[\"transfer_us\"])<0.01*len(xs)+1e-3, s
cpu=[k for k in ks if k[\"target\"]==\"cpu\"]
assert cpu and abs(sum(k[\"gpu_us\"] for k in cpu)-s[\"cpu_partition_us\"])<0.01*len(cpu)+1e-3, s
assert all(k[\"verdict\"]==\"ok\" for k in ks), [k for k in ks if k[\"verdict\"]!=\"ok\"]
' $T/p.jsonl"
done
"$B" profile $G --random-weights 1 --iters 2 > "$T/p.txt"; rc=$?
ok "profile table: a row per transfer before its partition and a mixed total" "[ $rc = 0 ] && [ \$(grep -cE '^x[0-9]+ +(npu->cpu|cpu->npu) ' $T/p.txt) = 3 ] && grep -q '^mixed: 10 cpu-partition kernels .* transfers: 3, ' $T/p.txt && grep -B1 '^x1 ' $T/p.txt | head -1 | grep -q 'binary_s'"
"$B" profile $G --random-weights 1 --iters 2 --format csv > "$T/p.csv"; rc=$?
ok "profile csv: transfer rows" "[ $rc = 0 ] && [ \$(grep -cE '^x[0-9]+,transfer,(npu->cpu|cpu->npu),' $T/p.csv) = 3 ] && [ \$(head -1 $T/p.csv | tr ',' '\n' | wc -l) = \$(grep '^x0,' $T/p.csv | tr ',' '\n' | wc -l) ]"
"$B" profile tests/models/convnet/model.json --backend cpu --iters 2 > "$T/c.txt"
ok "an all-NPU plan has no transfer rows and no mixed total" "! grep -qE '^x[0-9]' $T/c.txt && ! grep -q '^mixed:' $T/c.txt"
"$B" $G --random-weights 1 --tui-keys 'p<Dump>' --tui-size 130x50 --tui-stable > "$T/tui.txt" 2>&1
ok "explorer's profiler pane shows the transfers" "[ \$(grep -cE '\| +x[0-9]+ (npu->cpu|cpu->npu) ' $T/tui.txt) -ge 2 ] && grep -q 'profile: 36/36 ok' $T/tui.txt"
