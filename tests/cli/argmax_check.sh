#!/bin/bash
# The tie-aware check of argmax outputs on the command line (lavapipe): y = argmax(x + x, -1)
# over 4 rows of 1000 with a near-tie in row 0 (1 and 1 + 2^-10, one value in bf16), whose
# reference file holds the fp32 indices. In bf16 the device takes the other index of the tie:
# run --check, the session's check, profile (table, csv, json) and bisect call that ok, with the
# row counted as differing by index but not beyond tolerance; a zero tolerance makes it a
# MISMATCH (the check can fail). tests/test_vk_argmax_check.c fails a wrong index.
. tests/cli/lib.bash
python3 - "$T" <<'PY'
import json, random, struct, sys
d = sys.argv[1]
t = lambda n, s, dt=None: dict(name=n, shape=s, **({"dtype": dt} if dt else {}))
X, H, Y = [4, 1000], [4, 1000], [4]
json.dump({"model_name": "am_tie", "graph_inputs": [t("x", X, "float32")],
           "graph_outputs": [t("y", Y, "int64")], "weights": [], "weight_name_mapping": {},
           "nodes": [{"name": "dbl", "op_type": "aten.add.Tensor", "inputs": [t("x", X), t("x", X)],
                      "outputs": [t("h", H)], "attrs": {}},
                     {"name": "am", "op_type": "aten.argmax.default", "inputs": [t("h", H)],
                      "outputs": [t("y", Y, "int64")], "attrs": {"dim": -1, "keepdim": False}}]},
          open(d + "/model.json", "w"))
random.seed(3)
rows = [[random.randint(-1024, 921) / 1024 for _ in range(1000)] for _ in range(4)]
rows[0][100], rows[0][700] = 1.0, 1.0 + 2 ** -10  # the fp32 maximum at 700; bf16: a tie
rows[1][321] = rows[3][5] = 1.5
rows[2][200], rows[2][600] = 1.0, 1.0 + 2 ** -6   # a gap bf16 resolves
y = [max(range(1000), key=lambda i: (r[i], -i)) for r in rows]
assert y == [700, 321, 600, 5], y
xb = struct.pack("<4000f", *[v for r in rows for v in r])
yb = struct.pack("<4q", *y)
h = json.dumps({"x": {"dtype": "F32", "shape": X, "data_offsets": [0, len(xb)]},
                "y": {"dtype": "I64", "shape": Y, "data_offsets": [len(xb), len(xb) + len(yb)]}})
h += " " * (-len(h) % 8)
open(d + "/reference.safetensors", "wb").write(struct.pack("<Q", len(h)) + h.encode() + xb + yb)
PY
M="$T/model.json"
NOTE='argmax: 4 rows, 1 differ by index, 0 beyond tolerance'
"$B" run "$M" --dtype bf16 --check > "$T/c.txt" 2>"$T/e"; rc=$?
ok "run --check in bf16: the swapped near-tie is ok, counted as differing by index" "[ $rc = 0 ] && grep -q '1 ok, 0 mismatch' $T/c.txt && grep -q '  ok  $NOTE' $T/c.txt || { cat $T/c.txt $T/e; false; }"
"$B" run "$M" --dtype bf16 --check --json > "$T/c.jsonl" 2>"$T/e"; rc=$?
ok "... its JSON line adds the argmax fields" "[ $rc = 0 ] && python3 -c '
import json,sys
o=[json.loads(l) for l in open(sys.argv[1])][0]
assert o[\"verdict\"]==\"ok\" and o[\"top1\"]==\"3/4\" and (o[\"argmax_rows\"],o[\"argmax_differ\"],o[\"argmax_beyond\"])==(4,1,0), o
assert 0 < o[\"argmax_gap\"] < 0.01 and \"rel_l2\" in o, o' $T/c.jsonl"
"$B" run "$M" --dtype bf16 --check --tol-rel 0 > "$T/c0.txt" 2>"$T/e"; rc=$?
ok "... and beyond a zero tolerance it is a MISMATCH, exit 1" "[ $rc = 1 ] && grep -q 'MISMATCH  argmax: 4 rows, 1 differ by index, 1 beyond tolerance' $T/c0.txt"
"$B" run "$M" --backend cpu --check > "$T/cc.txt" 2>"$T/e"; rc=$?
ok "run --check on the CPU reference: every index the file's" "[ $rc = 0 ] && grep -q 'argmax: 4 rows, 0 differ by index, 0 beyond tolerance' $T/cc.txt"
printf 'run\ncheck\n' | "$B" --batch "$M" --dtype bf16 -x - > "$T/s.txt" 2>"$T/e"; rc=$?
ok "the session's check agrees" "[ $rc = 0 ] && grep -q '  ok  $NOTE' $T/s.txt || { cat $T/s.txt $T/e; false; }"
"$B" profile "$M" --dtype bf16 --iters 2 > "$T/p.txt" 2>"$T/e"; rc=$?
ok "profile: the argmax kernel ok, its rows after the verdict" "[ $rc = 0 ] && grep -q 'argmax_bf16 .* ok  *$NOTE' $T/p.txt && ! grep -q MISMATCH $T/p.txt"
"$B" profile "$M" --dtype bf16 --iters 2 --format csv > "$T/p.csv" 2>"$T/e"; rc=$?
ok "profile csv: argmax columns appended (-1 for other kernels)" "[ $rc = 0 ] && head -1 $T/p.csv | grep -q ',verdict,argmax_rows,argmax_differ,argmax_beyond$' && grep -q '^1,argmax_bf16,.*,ok,4,1,0$' $T/p.csv && grep -q '^0,binary,.*,ok,-1,-1,-1$' $T/p.csv"
"$B" profile "$M" --dtype bf16 --iters 2 --format json > "$T/p.jsonl" 2>"$T/e"; rc=$?
ok "profile json: the argmax kernel's line adds the fields" "[ $rc = 0 ] && grep '\"kernel\":\"argmax_bf16\"' $T/p.jsonl | grep -q '\"argmax_rows\":4,\"argmax_differ\":1,\"argmax_beyond\":0,.*\"verdict\":\"ok\"' && python3 -c 'import json,sys; [json.loads(l) for l in open(sys.argv[1])]' $T/p.jsonl"
"$B" bisect "$M" --dtype bf16 > "$T/b.txt" 2>"$T/e"; rc=$?
ok "bisect: the all-off run agrees (nothing to bisect, exit 0)" "[ $rc = 0 ] && grep -q 'nothing to bisect' $T/b.txt"
