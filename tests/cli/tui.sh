#!/bin/bash
# The explorer TUI: golden screens from headless key scripts (resnet18 and qwen2_tiny prefill at
# 80x24 and 160x48; --tui-stable shows times as '-'), then the real binary inside tmux: open,
# step passes, toggle a fusion, profile, bisect with --break, quit; Esc cancelling a running
# bisect. Headless: the graph pane's drawing of convnet, Esc cancelling. A missing tmux fails.
# Refresh the goldens after an intended change with: UPDATE_GOLDEN=1 bash tests/cli/tui.sh
B=${NPU_EXPLORE:-build/asan/npu-explore}
# each tmux session gets its own server (-L): killing a server's last session makes it exit, and a
# new-session racing that exit lands in the dying server (seen in CI: every later command then says
# "no server running")
T=$(mktemp -d); socks=""
trap 'rm -rf "$T"; for s in $socks; do tmux -L "$s" kill-server 2>/dev/null; done' EXIT
tm() { tmux -L "$sess" "$@"; }
n=0
ok() { n=$((n + 1)); if eval "$2"; then echo "ok $n $1"; else echo "not ok $n $1"; fi; }

ok "--has-tui exits 0" "'$B' --has-tui"
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
"$B" tests/models/mlp/model.json --tui-keys '?' --tui-size 120x60 --tui-stable > "$T/help.txt" 2>&1
ok "help overlay lists the session commands" \
    "grep -q 'fusion off ID|PATTERN|all' $T/help.txt && grep -q 'save FILE.npubin' $T/help.txt"
"$B" tests/models/convnet/model.json --backend cpu --break F2 --tui-keys 'b' --tui-size 120x30 \
    --tui-stable > "$T/bisect.txt" 2>&1
ok "headless bisect names the culprit" "grep -q 'bisect: culprit F2' $T/bisect.txt"
# the graph pane drawn from Graphviz's layout: op boxes, edges, fusion frames; j moves the selection
"$B" tests/models/convnet/model.json --backend cpu --tui-keys '3<Dump>j+' --tui-size 120x40 --tui-stable \
    > "$T/graph.txt" 2>&1
ok "graph pane draws convnet's op boxes" "grep -Eq '[|#]conv2d[|#]' $T/graph.txt && grep -q '|relu|' $T/graph.txt \
    && grep -q '|max_pool2d|' $T/graph.txt && grep -q '(x)' $T/graph.txt && grep -q 'graph 11 nodes, zoom 100%' $T/graph.txt"
ok "graph pane draws fusion frames and edges" "grep -q '[.]F1 conv_relu[.]' $T/graph.txt && grep -Eq '^[|].*[|] +v +' $T/graph.txt"
ok "graph pane: the selection is drawn with # and follows j; + zooms" \
    "grep -q '#conv2d#' $T/graph.txt && grep -q '#relu' $T/graph.txt && grep -q '>node relu' $T/graph.txt \
     && grep -q 'zoom 140%' $T/graph.txt"
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
ok "tmux: opens on the last pass" "wait_for 'pass 10/10 lower' 30"
tm send-keys -t "$sess" Left Left Left Left Left Left
ok "tmux: Left steps back to the fuse pass" "wait_for 'pass 4/10 fuse'"
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
ok "tmux: resnet18 opens" "wait_for 'pass 10/10 lower' 60"
tm send-keys -t "$sess" b
wait_for 'working: bisect' 20
wait_for 'working: bisect: bisect step' 60
ok "tmux: the busy line shows the bisect's step and elapsed time before it ends" \
    "grep -qE 'working: bisect: bisect step [0-9]+, [0-9]+\.[0-9] s' $T/cap.txt"
tm resize-window -t "$sess" -x 100 -y 30 2>/dev/null
ok "tmux: a resize during the job redraws at once (a message, the busy line)" \
    "wait_for 'resized: the panes redraw when the work ends' 20 && grep -q 'working: bisect' $T/cap.txt"
tm send-keys -t "$sess" Escape
ok "tmux: Esc cancels the running bisect" "wait_for 'bisect: cancelled' 60 && grep -q 'cancelled: bisect' $T/cap.txt"
tm send-keys -t "$sess" q
ok "tmux: q quits after the cancel" "wait_for 'EXITED 0' 20"
