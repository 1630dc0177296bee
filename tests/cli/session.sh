#!/bin/bash
# One session, one plan (issue 24): the kernels pane, details, `o` and "computed by kernel N"
# agree with the profile table kernel for kernel, before and after a fusion toggle; --batch's
# describe and profile report the same kernels; a profile of an earlier plan is marked stale,
# never shown; a cancelled profile keeps the previous table; Esc never quits, q asks first;
# bisect's exit codes (docs/CLI.md); --help; profile -o; speedups never 0.0x; the BREAK
# banner; "terminal too small"; the log keeps a long output whole. convnet and mlp on lavapipe
# (or the CPU backend): seconds under ASan.
. tests/cli/lib.bash
M=tests/models/convnet/model.json

# --batch: describe and profile of the same state list the same kernels, before and after a
# toggle (the plan compiled for the device, lavapipe: its direct convs)
printf 'describe\nprofile 1\nfusion off F2\ndescribe\nprofile 1\n' | "$B" --batch $M -x - > "$T/b.txt" 2>"$T/be"; rc=$?
cat > "$T/same.py" <<'EOF'
import re, sys
# blocks: each describe's kernel rows, then the profile's rows; pairs must agree
blocks, cur, kind = [], None, None
for l in open(sys.argv[1]):
    if l.startswith('program '):
        cur = {'describe': [], 'profile': []}; blocks.append(cur); kind = 'describe'; continue
    if l.startswith('profile '):
        kind = 'profile'; continue
    m = re.match(r'^(\d+)\s+(npu|cpu)\s+(\S+)\s', l) if kind == 'describe' else re.match(r'^(\d+)\s+(\S+)\s', l)
    if m and cur is not None:
        cur[kind].append((int(m.group(1)), m.group(m.lastindex)))
assert len(blocks) == 2, blocks
for b in blocks:
    assert b['describe'] and b['describe'] == b['profile'], b
assert blocks[0]['describe'] != blocks[1]['describe'], 'the toggle changed nothing'
print(len(blocks[0]['describe']), len(blocks[1]['describe']))
EOF
ok "batch: describe and profile list the same kernels, before and after fusion off F2" \
    "[ $rc = 0 ] && python3 $T/same.py $T/b.txt > $T/counts"
ok "batch: the kernel counts agree (describe's 'kernels N' = profile's 'total: N kernels')" \
    "[ \"\$(grep -oE '^kernels +[0-9]+' $T/b.txt | awk '{print \$2}' | tr '\n' ' ')\" = \"\$(grep -oE '^total: [0-9]+' $T/b.txt | awk '{print \$2}' | tr '\n' ' ')\" ]"
ok "batch: speedups never print as 0.0x" "! grep -q ' 0\.0x' $T/b.txt"

# the same under --json: every command prints JSON lines with schema and kind (describe the
# plan on one line), and the profile's kernel lines name the kernels of the plan line before
printf 'describe\nprofile 1\nfusion off F2\ndescribe\nprofile 1\ncheck\npass goto fuse\npass show\ndump\nsource 0\nhelp\n' |
    "$B" --batch $M --json -x - > "$T/b.jsonl" 2>"$T/be"; rc=$?
ok "batch --json: one JSON object per line; profile rows match describe's plan, before and after a toggle" "[ $rc = 0 ] && python3 -c '
import json
plans, rows = [], []
for l in open(\"$T/b.jsonl\"):
    o = json.loads(l); assert o[\"schema\"].startswith(\"npu-explore/\") and \"kind\" in o, l
    if o[\"kind\"] == \"plan\": plans.append([k[\"shader\"] for k in o[\"kernels\"]]); rows.append([])
    if o[\"kind\"] == \"kernel\": rows[-1].append(o[\"kernel\"])
assert len(plans) == 2 and plans == rows and plans[0] != plans[1], (plans, rows)
kinds = set(json.loads(l)[\"kind\"] for l in open(\"$T/b.jsonl\"))
assert {\"change\", \"graph\", \"source\", \"command\"} <= kinds, kinds
'"

# the explorer: profile, then a kernel's details, its source (o), a node's "computed by";
# toggle F2, profile again, the same checks against the new table
keys='4p<Dump><Home>jj<Enter><Dump>4jo<Dump><Esc>d<Down><Down><Down><Enter><Dump>'
keys="$keys"'5<Down><Space>4<Dump>p<Dump><Home>jj<Enter><Dump>4jjo<Dump><Esc>2<Down><Down><Down><Down><Enter><Dump>'
"$B" $M --tui-keys "$keys" --tui-size 120x40 --tui-stable > "$T/tui.txt" 2>"$T/tuie"; rc=$?
cat > "$T/agree.py" <<'EOF'
import re, sys
screens = open(sys.argv[1]).read().split('=== screen ')[1:]
table, checked, tables, stale = {}, 0, set(), False
for s in screens:
    if 'kernels, profiled' in s:  # the table: '|   2 conv2d_direct_b ok ...' rows of the right pane
        table = {}
        for l in s.splitlines():
            m = re.search(r'\|\|[> ] +(\d+) (\S+) +(ok|MISMATCH|-) ', l)
            if m: table[int(m.group(1))] = m.group(2)
    if 'kernels (profile stale: p)' in s:
        stale = True
        assert not re.search(r'\|\| +\d+ \S+ +ok ', s), 'a stale profile shown'
        table = {}  # nothing to compare until profiled again
    for pat in (r'\|>?kernel (\d+) (\S+) on ', r'computed by kernel (\d+) \((\w+)', r' kernel (\d+): (\S+) \('):
        for m in re.finditer(pat, s):
            k, name = int(m.group(1)), m.group(2)
            if table:
                assert table.get(k) == name, (pat, k, name, table)
                checked += 1
    if table: tables.add(tuple(sorted(table.items())))
assert len(tables) == 2 and stale and checked >= 6, (tables, stale, checked)
print(checked)
EOF
ok "explorer: details, o and 'computed by' name the profile table's kernel, before and after a toggle" \
    "[ $rc = 0 ] && python3 $T/agree.py $T/tui.txt > $T/nchecked"

# a cancelled profile keeps the previous table; Esc never quits; q asks first
"$B" $M --backend cpu --tui-keys '4p<Dump>p<Esc><Dump>' --tui-size 120x40 --tui-stable > "$T/c.txt" 2>&1
ok "a cancelled profile keeps the previous table" \
    "grep -q 'profile: cancelled (previous kept)' $T/c.txt && [ \$(grep -c 'kernels, profiled' $T/c.txt) = 3 ] \
     && [ \"\$(sed -n '/screen 1 /,/screen 2 /p' $T/c.txt | grep -oE '\|\|[> ] +[0-9]+ [a-z_0-9]+ +ok' | tr -d '>')\" \
        = \"\$(sed -n '/screen 2 /,/screen 3 /p' $T/c.txt | grep -oE '\|\|[> ] +[0-9]+ [a-z_0-9]+ +ok' | tr -d '>')\" ]"
"$B" $M --backend cpu --tui-keys '<Esc>3<Esc>4<Esc>8<Esc>7<Esc>?<Esc>:des<Esc>/x<Esc>4o<Esc><Esc><Dump>' \
    --tui-size 100x30 --tui-stable > "$T/esc.txt" 2>&1
ok "Esc never quits (help, prompt, search, source, panes)" "[ \$(grep -c '^=== screen' $T/esc.txt) = 2 ]"
"$B" $M --backend cpu --tui-keys '4pq<Dump>x<Dump>q<Dump>y<Dump>' --tui-size 100x30 --tui-stable > "$T/q.txt" 2>&1
ok "q asks before losing a profile; another key stays, y quits" \
    "grep -q 'quit? the profile would be lost' $T/q.txt && grep -q 'not quitting' $T/q.txt && [ \$(grep -c '^=== screen' $T/q.txt) = 4 ]"
"$B" $M --backend cpu --tui-keys 'q<Dump>' --tui-size 100x30 --tui-stable > "$T/q0.txt" 2>&1
ok "q quits at once when nothing would be lost" "[ \$(grep -c '^=== screen' $T/q0.txt) = 1 ]"

# bisect: exit codes per docs/CLI.md, in the CLI and the batch session
"$B" bisect $M --backend cpu --break F2 > "$T/b1.txt" 2>&1; rc1=$?
"$B" bisect $M --backend cpu > "$T/b2.txt" 2>&1; rc2=$?
"$B" bisect $M --tol-rel 0 --tol-abs 0 > "$T/b3.txt" 2>&1; rc3=$?
printf 'bisect\n' | "$B" --batch $M --tol-rel 0 --tol-abs 0 -x - > /dev/null 2>&1; rc4=$?
ok "bisect: culprit found exit 0, naming its kernel in the bisected plan" \
    "[ $rc1 = 0 ] && grep -qE '^culprit: F2 conv_relu \[conv2d_1,relu_1\], kernel [0-9]+ \(' $T/b1.txt"
ok "bisect: nothing to bisect exit 0" "[ $rc2 = 0 ] && grep -q 'nothing to bisect' $T/b2.txt"
ok "bisect: nothing consistent (fails with every fusion off) exit 1, in the CLI and --batch" \
    "[ $rc3 = 1 ] && grep -q 'not in a fusion' $T/b3.txt && [ $rc4 = 1 ]"

# the CLI: --help from the tables, profile -o, the BREAK banner, too small, the whole log
"$B" --help > "$T/help.txt"
ok "--help lists profile, bisect, generate, --break, --backend" \
    "grep -q 'npu-explore profile MODEL' $T/help.txt && grep -q 'npu-explore bisect MODEL' $T/help.txt \
     && grep -q 'npu-explore generate DIR' $T/help.txt && grep -q -- '--break ID' $T/help.txt && grep -q -- '--backend vulkan|cpu' $T/help.txt"
"$B" profile $M --backend cpu --iters 1 -o "$T/p.txt" > "$T/p.out"; rc=$?
ok "profile -o FILE writes the report there, not to stdout" "[ $rc = 0 ] && [ ! -s $T/p.out ] && grep -q '^total: 8 kernels' $T/p.txt"
"$B" $M --backend cpu --break F2 --tui-keys '' --tui-size 100x30 > "$T/brk.txt" 2>&1
ok "a BREAK banner while --break is active" "head -2 $T/brk.txt | grep -q 'BREAK F2'"
"$B" $M --backend cpu --tui-keys '<Dump><Size 100x30>' --tui-size 30x8 > "$T/small.txt" 2>&1
ok "below 40x12: 'terminal too small', then the layout again" \
    "sed -n '1,9p' $T/small.txt | grep -q 'terminal too small: 30x8' && grep -q '1 passes' $T/small.txt"
printf 'source 0\n' | "$B" --batch $M -x - > "$T/src.txt"
"$B" $M --tui-keys ':source 0<Enter>7<End>' --tui-size 160x48 --tui-stable > "$T/log.txt" 2>&1
last=$(grep -v '^ *$' "$T/src.txt" | tail -1 | sed 's/^ *//' | cut -c1-50)
lines=$(wc -l < "$T/src.txt")
ok "the log keeps a $(wc -c < $T/src.txt)-byte output whole (its last line, all $lines lines)" \
    "[ \$(wc -c < $T/src.txt) -gt 20000 ] && grep -qF -- \"$last\" $T/log.txt \
     && [ \$(grep -oE ' [0-9]+/[0-9]+ -\\+\$' $T/log.txt | tail -1 | sed 's|.*/||; s| .*||') -gt $lines ]"
# Enter on "computed by kernel N" selects that kernel in pane 4; Esc goes back
"$B" $M --backend cpu --tui-keys 'd<Down><Down><Down><Enter><End><Dump><Enter><Dump><Esc><Dump>' --tui-size 120x32 --tui-stable > "$T/jump.txt" 2>&1
k=$(grep -oE 'computed by kernel [0-9]+' "$T/jump.txt" | head -1 | grep -oE '[0-9]+$')
ok "Enter on 'computed by kernel N' selects kernel N in pane 4, Esc goes back" \
    "[ -n '$k' ] && sed -n '/screen 2 /,/screen 3 /p' $T/jump.txt | grep -q '\[kernels' \
     && sed -n '/screen 2 /,/screen 3 /p' $T/jump.txt | grep -qE '\| ?>?kernel $k ' \
     && sed -n '/screen 3 /,\$p' $T/jump.txt | grep -q '\[graph text'"
# < > scroll a pane sideways: the end of bisect's long culprit line comes into view
"$B" $M --backend cpu --break F2 --tui-keys 'b<Dump>>>>>>>>>>>>>' --tui-size 100x30 --tui-stable > "$T/side.txt" 2>&1
ok "> scrolls the bisect pane sideways to the culprit's first diverging tensor" \
    "! sed -n '/screen 1 /,/screen 2 /p' $T/side.txt | grep -q \"tensor is 'relu_1'\" \
     && sed -n '/screen 2 /,\$p' $T/side.txt | grep -q \"tensor is 'relu_1'\" && grep -q ' col [0-9]*, ' $T/side.txt"
# the : prompt: Up/Down walk the lines run before, Ctrl-U clears
"$B" $M --backend cpu --tui-keys ':echo one<Enter>:echo two<Enter>:<Up><Up><Dump><Down><Dump>xyz<C-u>abc<Dump>' \
    --tui-size 100x24 --tui-stable > "$T/hist.txt" 2>&1
ok "the : prompt has a history (Up/Down) and Ctrl-U" \
    "[ \"\$(grep '^:' $T/hist.txt | head -3 | tr '\n' '|')\" = ':echo one_|:echo two_|:abc_|' ]"
