#!/bin/bash
# The explorer TUI: golden screens from headless key scripts (resnet18 and qwen2_tiny prefill at
# 80x24 and 160x48; --tui-stable shows times as '-'), then the real binary inside tmux: open,
# step passes, toggle a fusion, profile, bisect with --break, quit; a running profile's rows
# filling in, a running bisect's steps and "step k of ~N", a resize redrawing mid-job, Esc
# cancelling both. Headless: the graph pane's drawing of convnet, Esc cancelling. A missing
# tmux fails.
# Refresh the goldens after an intended change with: UPDATE_GOLDEN=1 bash tests/cli/tui.sh
. tests/cli/lib.bash
# each tmux session gets its own server (-L): killing a server's last session makes it exit, and a
# new-session racing that exit lands in the dying server (seen in CI: every later command then says
# "no server running")
socks=""
trap 'rm -rf "$T"; for s in $socks; do tmux -L "$s" kill-server 2>/dev/null; done' EXIT
tm() { tmux -L "$sess" "$@"; }

ok "--has-tui exits 0" "'$B' --has-tui"
scr() { awk -v s="=== screen $1 " 'index($0, s) == 1 {on = 1; next} /^=== screen / {on = 0} on' "$2"; }
for m in resnet18:resnet18/model qwen2_tiny:qwen2_tiny/prefill; do
    name=${m%%:*}; model=tests/models/${m#*:}.json
    for size in 80x24 160x48; do
        n=$((n + 1))
        gold=tests/golden/tui/$name.$size.txt
        "$B" "$model" --tui-script tests/golden/tui/$name.keys --tui-size $size --tui-stable \
            --tui-dump "$T/screen.txt" 2>"$T/err"; rc=$?
        if [ -n "$UPDATE_GOLDEN" ] && [ $rc = 0 ]; then cp "$T/screen.txt" "$gold"; fi
        if [ $rc = 0 ] && diff -u "$gold" "$T/screen.txt" > "$T/diff" 2>&1; then
            echo "ok $n golden $gold"
        else
            echo "not ok $n golden $gold (exit $rc)"; head -30 "$T/diff" "$T/err" | sed 's/^/#   /'
        fi
    done
done

# the source view (o): a generated kernel's GLSL beside its SPIR-V disassembly, scrolled on
# either side, closed, then a hand-written kernel's .comp with its includes
n=$((n + 1)); gold=tests/golden/tui/source.160x48.txt
"$B" tests/models/qwen2_tiny/decode.json --backend cpu --tui-script tests/golden/tui/source.keys \
    --tui-size 160x48 --tui-stable --tui-dump "$T/screen.txt" 2>"$T/err"; rc=$?
if [ -n "$UPDATE_GOLDEN" ] && [ $rc = 0 ]; then cp "$T/screen.txt" "$gold"; fi
if [ $rc = 0 ] && diff -u "$gold" "$T/screen.txt" > "$T/diff" 2>&1; then
    echo "ok $n golden $gold"
else
    echo "not ok $n golden $gold (exit $rc)"; head -30 "$T/diff" "$T/err" | sed 's/^/#   /'
fi
ok "source view: generated GLSL beside SPIR-V, the session's 'source K' logged" \
    "grep -Eq 'generated, F[0-9]+ elementwise' $T/screen.txt && grep -q 'OpEntryPoint GLCompute' $T/screen.txt \
     && grep -q '> source 1' $T/screen.txt && grep -q 'hand-written shaders/unary.comp' $T/screen.txt"

# headless: the footer names the focused pane's keys, the help lists every session command
"$B" tests/models/mlp/model.json --tui-keys '?<Dump><End>' --tui-size 120x60 --tui-stable > "$T/help.txt" 2>&1
ok "help overlay lists the session commands" \
    "grep -q 'fusion off ID|PATTERN|all' $T/help.txt && grep -q 'save FILE.npubin' $T/help.txt"
# the first screen is never an empty pane: the last pass (lower) changed nothing in the graph, so
# the main pane says what the compile did and the main keys, the details what the pass does
for size in 80x24 160x48; do
    "$B" tests/models/resnet18/model.json --backend cpu --tui-keys '' --tui-size $size --tui-stable > "$T/first.txt" 2>&1
    ok "first screen at $size: the main keys, what the compile did, the pass's details" \
        "grep -q 'keys: Left/Right pass  Enter details' $T/first.txt && grep -q 'what the compile did to resnet18:' $T/first.txt \
         && grep -q '>pass 12 lower' $T/first.txt && ! grep -q '(select a node' $T/first.txt"
done
grep -q -- '- its plan: 42 kernels in ' "$T/first.txt" && grep -q -- '- 17 of 17 fusion instances on' "$T/first.txt" \
    && grep -q 'kernels with shader, bindings' "$T/first.txt"
ok "first screen at 160x48: the plan's kernels, the fusion instances, what lower does" "[ $? = 0 ]"
# fault attribution: --break F8 on qwen2_tiny decode, where a fold (F22) runs F8's ops inside F9's
# GEMV: the banner, the first screen, the kernels table, the details and bisect's culprit name
# the kernel of the plan on screen; the profile shows that it is true (the kernel the banner names
# is overwritten, its corrupt kernel is the first MISMATCH; the Downs select it: kernel 10, after
# layer 0's kernels of which decode_attention_cache makes one of rope, rope_cache, index_copy
# and decode_attention)
"$B" tests/models/qwen2_tiny/decode.json --backend cpu --break F8 \
    --tui-keys '<Dump>4p<Dump><Home><Down><Down><Down><Down><Down><Down><Down><Down><Down><Down><Down><Dump>bZ<Dump>>>>>>>>>>>>><Dump>' \
    --tui-size 160x48 --tui-stable > "$T/brk.txt" 2>&1
k=$(sed -n 2p "$T/brk.txt" | sed -n 's/.*BREAK F8 in kernel \([0-9]*\) (F9).*/\1/p')
ok "--break F8: the banner names the kernel its ops run inside (kernel $k, F9)" "[ -n '$k' ]"
ok "--break F8: the first screen says F8 has no kernel of its own and where its ops run" \
    "scr 1 $T/brk.txt | cut -c 48-158 | tr -d '\n' | tr -s ' ' | grep -q \"F8 silu_mul has no kernel of its own in this plan: its ops (silu, mul_10) run inside kernel $k (gemv_glu_r, F9); the break corrupts that kernel's output add_6 (kernel \$((k + 1)) corrupt)\""
ok "--break F8 is true: kernel $k (F9, computing silu and mul_10) is overwritten ('-'), its corrupt kernel is the first MISMATCH" \
    "scr 2 $T/brk.txt | grep -qE '\| +$k gemv_glu_r +- .* F9 silu,mul_10,' \
     && scr 2 $T/brk.txt | grep -qE \"\\| +\$((k + 1)) corrupt +MISMATCH .* --break F8: rewrites kernel $k's output\" \
     && [ \"\$(scr 2 $T/brk.txt | grep -oE '[|+]\|[> ] +[0-9]+ [a-z_0-9]+ +MISMATCH' | head -1 | grep -oE '[0-9]+ [a-z]' | cut -d' ' -f1)\" = \$((k + 1)) ]"
ok "--break F8: the corrupt kernel's details say what it breaks" \
    "scr 3 $T/brk.txt | grep -q \"|>kernel \$((k + 1)) corrupt on npu\" && scr 3 $T/brk.txt | grep -q -- '| --break F8: F8 silu_mul has no kernel of'"
ok "--break F8: bisect's culprit names kernel $k of the plan on screen, never a plan with only it on" \
    "scr 4 $T/brk.txt | grep -q \"culprit: F8 silu_mul \\[silu,mul_10\\]: no kernel of its own, its ops run inside kernel $k (gemv_glu_r, F9)\" \
     && scr 5 $T/brk.txt | grep -q \"first diverging tensor is 'mul_10' (computed inside kernel $k)\" && ! grep -q 'of that plan' $T/brk.txt"
# help wraps to the window (80 columns: what below the keys) and scrolls to its last row
"$B" tests/models/convnet/model.json --backend cpu --tui-keys '?<Dump><End>' --tui-size 80x24 --tui-stable > "$T/help80.txt" 2>&1
ok "help at 80 columns: wrapped whole, scrolled to its end with End" \
    "sed -n '/screen 1 /,/screen 2 /p' $T/help80.txt | grep -q '    restores; focusing another pane zooms that one)' \
     && sed -n '/screen 2 /,\$p' $T/help80.txt | grep -q 'echo TEXT' && grep -q 'rows 1-20 of [0-9]*, Up/Down' $T/help80.txt \
     && [ \$(awk '{ if (length > m) m = length } END { print m }' $T/help80.txt) -le 80 ]"
# Z zooms the focused pane to the whole body; focusing another pane zooms that one; Z, :zoom, Esc
"$B" tests/models/convnet/model.json --backend cpu --tui-keys 'Z<Dump>3<Dump>Z<Dump>4:zoom<Enter><Dump><Esc><Dump>' \
    --tui-size 100x24 --tui-stable > "$T/zoom.txt" 2>&1
ok "Z: the passes pane takes the whole body" "scr 1 $T/zoom.txt | sed -n 2p | grep -q '^+-\[1 passes' \
    && ! scr 1 $T/zoom.txt | grep -q '8 details' && ! scr 1 $T/zoom.txt | grep -q '7 log'"
ok "Z: focusing the graph zooms it (the drawing on the whole width, Z in its footer)" \
    "scr 2 $T/zoom.txt | sed -n 2p | grep -q '^+-\[graph 11 nodes' && scr 2 $T/zoom.txt | tail -1 | grep -q 'Z full .*arrows pan'"
ok "Z again restores the layout" "scr 3 $T/zoom.txt | grep -q '8 details' && scr 3 $T/zoom.txt | grep -q '7 log'"
ok ":zoom zooms the kernels pane, Esc restores" "scr 4 $T/zoom.txt | sed -n 2p | grep -q '^+-\[kernels' \
    && scr 5 $T/zoom.txt | grep -q '8 details'"
"$B" tests/models/convnet/model.json --backend cpu --break F2 --tui-keys 'b' --tui-size 120x30 \
    --tui-stable > "$T/bisect.txt" 2>&1
ok "headless bisect names the culprit" "grep -q 'bisect: culprit F2' $T/bisect.txt"
# the graph pane drawn from Graphviz's layout: op boxes, edges, fusion frames; j moves the selection
"$B" tests/models/convnet/model.json --backend cpu --tui-keys '3<Dump>j+' --tui-size 120x40 --tui-stable \
    > "$T/graph.txt" 2>&1
ok "graph pane draws convnet's op boxes, fitted to the pane, with the overview map" \
    "grep -q '#conv2d#' $T/graph.txt && grep -q '\[relu\]' $T/graph.txt && grep -q '\[max_pool2d\]' $T/graph.txt \
     && grep -q '(x)' $T/graph.txt && grep -q 'graph 11 nodes, fit [0-9]*x50%, follow, map' $T/graph.txt \
     && grep -q '+- map -' $T/graph.txt"
ok "graph pane draws fusion frames and edges" "grep -q '[.]F1 conv_relu[.]' $T/graph.txt && grep -Eq '^[|].*[|] +v +' $T/graph.txt"
ok "graph pane: the selection is drawn with # and follows j; + zooms from the fit" \
    "grep -q '#conv2d#' $T/graph.txt && grep -q '#relu' $T/graph.txt && grep -q '>node relu' $T/graph.txt \
     && grep -q 'zoom 70%' $T/graph.txt"
"$B" tests/models/convnet/model.json --backend cpu --tui-keys 'd<End>3' --tui-size 120x40 --tui-stable > "$T/gsync.txt" 2>&1
ok "graph pane selects the IR pane's node" "grep -q '>node linear' $T/gsync.txt && grep -q '#linear#' $T/gsync.txt"
# Esc right after the key that starts long work cancels it (typed ahead: no race)
"$B" tests/models/convnet/model.json --backend cpu --break F2 --tui-keys 'b<Esc>' --tui-size 120x30 \
    --tui-stable > "$T/cancel.txt" 2>&1
ok "headless: Esc cancels a bisect" "grep -q 'bisect: cancelled' $T/cancel.txt && grep -q '| cancelled: bisect' $T/cancel.txt"
"$B" tests/models/convnet/model.json --backend cpu --tui-keys 'p<Esc>' --tui-size 120x30 --tui-stable > "$T/pcancel.txt" 2>&1
ok "headless: Esc cancels a profile" "grep -q 'profile: cancelled' $T/pcancel.txt && grep -q 'cancelled: profile 5' $T/pcancel.txt"
"$B" tests/models/convnet/model.json --tui-keys ':frobnicate<Enter>' --tui-stable > "$T/bad.txt" 2>&1
ok "a bad : command is reported, not fatal" "grep -q \"unknown command 'frobnicate'\" $T/bad.txt"
"$B" tests/models/convnet/model.json --backend cpu < /dev/null > "$T/nontty.txt" 2>&1; rc=$?
ok "without a terminal: the batch report" "[ $rc = 0 ] && grep -q 'no terminal' $T/nontty.txt && grep -q '^program' $T/nontty.txt"

# the real binary in tmux
if ! command -v tmux > /dev/null; then
    n=$((n + 1)); echo "not ok $n tmux is not installed: cannot drive the real binary (apt-get install tmux)"
    exit 1
fi
sess=npu-tui-test-$$
cap() { tm capture-pane -p -t "$sess" > "$T/cap.txt"; }
# waits until the screen shows $1 (up to $2 seconds)
wait_for() {
    for _ in $(seq 1 $(( ${2:-20} * 10 ))); do cap; grep -q -- "$1" "$T/cap.txt" && return 0; sleep 0.1; done
    return 1
}
socks="$socks $sess"; tm new-session -d -s "$sess" -x 120 -y 40 \
    "env TERM=xterm-256color '$B' tests/models/convnet/model.json --backend cpu --break F2; echo EXITED \$?; sleep 30"
ok "tmux: opens on the last pass" "wait_for 'pass 12/12 lower' 30"
tm send-keys -t "$sess" Left Left Left Left Left Left Left
ok "tmux: Left steps back to the fuse pass" "wait_for 'pass 5/12 fuse'"
tm send-keys -t "$sess" 5 Down Space
ok "tmux: Space toggles F2 through the session" "wait_for 'fusions 2/3 |' && grep -q '> fusion off F2' $T/cap.txt"
tm send-keys -t "$sess" z
ok "tmux: z undoes the toggle" "wait_for 'fusions 3/3 |' && grep -q '> fusion on F2' $T/cap.txt"
tm send-keys -t "$sess" p
ok "tmux: p profiles (kernels table with verdicts)" "wait_for 'kernels, profiled' 60 && grep -q 'MISMATCH' $T/cap.txt"
tm send-keys -t "$sess" b
ok "tmux: b bisects to the culprit" "wait_for 'bisect: culprit F2' 60"
tm send-keys -t "$sess" Escape
sleep 0.5; cap
ok "tmux: Esc does not quit" "! grep -q 'EXITED' $T/cap.txt"
tm send-keys -t "$sess" q
ok "tmux: q asks first (the profile and bisect would be lost)" "wait_for 'quit? the profile and bisect would be lost' 20"
tm send-keys -t "$sess" y
ok "tmux: y quits with exit 0" "wait_for 'EXITED 0' 20"
tm kill-session -t "$sess" 2>/dev/null
# Esc while a bisect runs (resnet18 takes seconds): the worker stops at its next step
sess=npu-tui-cancel-$$
socks="$socks $sess"; tm new-session -d -s "$sess" -x 120 -y 40 \
    "env TERM=xterm-256color '$B' tests/models/resnet18/model.json --backend cpu --break F3; echo EXITED \$?; sleep 30"
ok "tmux: resnet18 opens" "wait_for 'pass 12/12 lower' 60"
# a profile's rows fill the kernels table as they are measured: times first, the errors to come
# as '...'; j moves the selection meanwhile; Esc cancels
tm send-keys -t "$sess" 4 p
wait_for 'working: profile 5: timed runs' 30
ok "tmux: a running profile's rows fill in: times measured, errors still '...'" \
    "wait_for 'working: profile 5: \(timed runs [2-9]\|untimed runs\)' 60 && grep -q 'kernels, profiling: the rows fill in' $T/cap.txt \
     && grep -qE '\| +0 conv2d[a-z_]* +\.\.\. +[0-9]+\.[0-9] +\.\.\. ' $T/cap.txt"
tm send-keys -t "$sess" j j
ok "tmux: j moves in the table while the profile runs" "wait_for '|>  1 conv2d' 20 && grep -q 'working: profile' $T/cap.txt"
tm send-keys -t "$sess" Escape
ok "tmux: Esc cancels the profile" "wait_for 'profile: cancelled' 60 && grep -q 'kernels (p: profile)' $T/cap.txt"
tm send-keys -t "$sess" b
wait_for 'working: bisect' 20
tm resize-window -t "$sess" -x 100 -y 30 2>/dev/null
# each check below reads one screen captured while the bisect's pane still says it runs
ok "tmux: a resize during the job redraws the whole frame at the new size at once" \
    "wait_for 'running: bisect step' 60 && [ \$(sed -n 2p $T/cap.txt | awk '{print length}') = 100 ] \
     && grep -q 'working: bisect' $T/cap.txt"
ok "tmux: the busy line shows the bisect's step k of ~N and elapsed time before it ends" \
    "grep -qE 'working: bisect: bisect step [0-9]+ of ~[0-9]+, [0-9]+\.[0-9] s' $T/cap.txt"
ok "tmux: the bisect pane shows the steps judged so far while it runs" \
    "grep -q 'bisect (running: the steps so far)' $T/cap.txt && grep -q 'step 1   all off' $T/cap.txt \
     && grep -qE 'running: bisect step [0-9]+ of ~[0-9]+' $T/cap.txt"
tm send-keys -t "$sess" Escape
ok "tmux: Esc cancels the running bisect" "wait_for 'bisect: cancelled' 60 && grep -q 'cancelled: bisect' $T/cap.txt"
tm send-keys -t "$sess" q
ok "tmux: q quits after the cancel" "wait_for 'EXITED 0' 20"
