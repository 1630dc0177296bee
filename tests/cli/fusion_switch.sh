#!/bin/bash
# The session's fusion switches are rules applied in order (the last one that selects an
# instance decides): `fusion on F3` after `fusion off all` turns F3 back on and nothing else,
# `fusion on ID` after `fusion off PATTERN` re-enables that instance, `fusion off` after `on`
# wins again, and `fusion on all` clears every rule. rope_cache and attention fall back to their
# base patterns (rope, masked_softmax) when switched off alone.
. tests/cli/lib.bash
M=tests/models/convnet/model.json
# the switches after the session commands SCRIPT on MODEL, from the last `fusion list`, for the
# instances Fn whose n matches the awk alternation IDS: "F1=on F2=off ..." sorted; with PAT set, each
# with its pattern, "F3=on:rope ..."
states() { # MODEL IDS SCRIPT [PAT]
    printf '%s\nfusion list\n' "$3" | "$B" --batch "$1" --backend cpu -x - 2>"$T/err" |
        awk -v id="^F($2) +(on|off) " -v pat="$4" '$0 ~ id {s[$1] = pat ? $2 ":" $3 : $2}
            END {for (k in s) printf "%s=%s\n", k, s[k]}' | sort | tr '\n' ' '
}
want() { printf '%s\n' "$@" | sort | tr '\n' ' '; }
cstates() { states $M '[0-9]+' "$1"; } # convnet: F1..F3
s=$(cstates 'fusion off all
fusion on F3')
ok "off all, then on F3: only F3 on ($s)" "[ \"$s\" = \"$(want F1=off F2=off F3=on)\" ]"
s=$(cstates 'fusion off conv_relu
fusion on F2')
ok "off conv_relu, then on F2: F1 off, F2 and F3 on ($s)" "[ \"$s\" = \"$(want F1=off F2=on F3=on)\" ]"
s=$(cstates 'fusion off all
fusion on F3
fusion off F3')
ok "off all, on F3, off F3: all off ($s)" "[ \"$s\" = \"$(want F1=off F2=off F3=off)\" ]"
s=$(cstates 'fusion off all
fusion on F3
fusion off conv
fusion on F1')
ok "off all, on F3, off conv, on F1: only F1 on ($s)" "[ \"$s\" = \"$(want F1=on F2=off F3=off)\" ]"
s=$(cstates 'fusion off F1
fusion off F2
fusion on all')
ok "on all clears every rule ($s)" "[ \"$s\" = \"$(want F1=on F2=on F3=on)\" ]"
s=$(cstates 'fusion on F2')
ok "on of an instance that is on changes nothing ($s)" "[ \"$s\" = \"$(want F1=on F2=on F3=on)\" ]"
# the switches reach the compiled program: kernel counts follow (3 fusions: 13 kernels unfused)
printf 'fusion off all\nfusion on F3\n' | "$B" --batch $M --backend cpu -x - > "$T/o" 2>&1
ok "the recompile reports 1 of 3 on" "grep -q 'fusions: 1 of 3 on' $T/o"
printf 'fusion off all\nfusion on F3\ncheck\n' | "$B" --batch $M --backend cpu -x - > "$T/o" 2>&1; rc=$?
ok "check passes with only F3 fused" "[ $rc = 0 ] && grep -q ' ok' $T/o"
# names are exact, in the session and on the command line: a prefix selects nothing
printf 'fusion off conv_\n' | "$B" --batch $M --backend cpu -x - > /dev/null 2>"$T/e"; rc=$?
ok "session: a pattern prefix is no pattern (exit 2, says names are exact)" \
   "[ $rc = 2 ] && grep -q \"no fusion instance or pattern 'conv_' (names are exact\" $T/e"
"$B" describe $M --no-fuse conv_ --no-fuse F2 > "$T/o" 2>"$T/e"; rc=$?
ok "--no-fuse that selects nothing: a warning listing the model's patterns, once; F2 still off" \
   "[ $rc = 0 ] && [ \$(grep -c 'no-fuse conv_ selects no fusion instance' $T/e) = 1 ] \
    && grep -q \"this model's: conv_\" $T/e && ! grep -q 'no-fuse F2 selects' $T/e && grep -q 'fused: 2 of 3' $T/o"
"$B" profile $M --iters 1 --no-fuse conv_ > /dev/null 2>"$T/e"; rc=$?
ok "... said once although profile compiles twice" \
   "[ $rc = 0 ] && [ \$(grep -c 'no-fuse conv_ selects no fusion instance' $T/e) = 1 ]"
# rope_cache (qwen2_tiny decode: F4 and F13) switched off alone falls back to rope under the same
# id (today's rope and index_copy kernels); `on rope_cache` or `on F4` brings it back; `off rope`
# switches rope_cache off too
Q=tests/models/qwen2_tiny/decode.json
qstates() { states $Q '3|4|12|13' "$1" pat; }
s=$(qstates 'fusion off rope_cache')
ok "off rope_cache: F4 and F13 fall back to rope ($s)" "[ \"$s\" = \"$(want F3=on:rope F4=on:rope F12=on:rope F13=on:rope)\" ]"
s=$(qstates 'fusion off rope_cache
fusion on F4')
ok "off rope_cache, on F4: F4 rope_cache again, F13 rope ($s)" "[ \"$s\" = \"$(want F3=on:rope F4=on:rope_cache F12=on:rope F13=on:rope)\" ]"
s=$(qstates 'fusion off rope_cache
fusion on rope_cache')
ok "off then on rope_cache: both back ($s)" "[ \"$s\" = \"$(want F3=on:rope F4=on:rope_cache F12=on:rope F13=on:rope_cache)\" ]"
s=$(qstates 'fusion off rope')
ok "off rope: rope_cache off too ($s)" "[ \"$s\" = \"$(want F3=off:rope F4=off:rope_cache F12=off:rope F13=off:rope_cache)\" ]"
s=$(qstates 'fusion off F4')
ok "off F4: off, no fallback ($s)" "[ \"$s\" = \"$(want F3=on:rope F4=off:rope_cache F12=on:rope F13=on:rope_cache)\" ]"
printf 'fusion off rope_cache\n' | "$B" --batch $Q --backend cpu -x - > "$T/o" 2>&1
# (the merges decode_attention_cache F27 and F28, which run both layers' ropes, cache updates and
# attention as one kernel each, go off with the rope_cache they merge: 17 kernels with them)
ok "off rope_cache: 25 kernels (17 with it and the merges)" "grep -q 'fusions: 27 of 29 on, 25 kernels' $T/o"
# attention (qwen2_tiny prefill: F5 and F14) switched off alone falls back to masked_softmax under
# the same id (the plan of before the pattern: 42 kernels, 30 with it); `on attention` brings it
# back; `off masked_softmax` switches it off too
P=tests/models/qwen2_tiny/prefill.json
pstates() { states $P '5|14' "$1" pat; }
s=$(pstates 'fusion off attention')
ok "prefill, off attention: F5 and F14 fall back to masked_softmax ($s)" "[ \"$s\" = \"$(want F5=on:masked_softmax F14=on:masked_softmax)\" ]"
s=$(pstates 'fusion off attention
fusion on F14')
ok "off attention, on F14: F14 attention again ($s)" "[ \"$s\" = \"$(want F5=on:masked_softmax F14=on:attention)\" ]"
s=$(pstates 'fusion off masked_softmax')
ok "off masked_softmax: attention off too ($s)" "[ \"$s\" = \"$(want F5=off:attention F14=off:attention)\" ]"
printf 'fusion off attention\n' | "$B" --batch $P --backend cpu -x - > "$T/o" 2>&1
ok "prefill, off attention: 42 kernels (30 with it)" "grep -q 'fusions: 22 of 22 on, 42 kernels' $T/o"
