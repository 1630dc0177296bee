#!/bin/bash
# The tuner (npu-explore tune, app/tune.h) and the tuning cache (--tuned, app/tuned.h) on
# lavapipe: tune writes the cache (auto: beside the pipeline cache), an entry reaches the plans
# compiled for its device (describe, profile's tuned lines, the .npubin keeps the record), bad
# caches are warnings or clear refusals, bad arguments exit 2, the explorer's T tunes the
# selected kernel. Times are never asserted (lavapipe shares its cores); searches are kept short.
. tests/cli/lib.bash
M=tests/models/mlp/model.json
Q="--beam 1 --budget-s 2 --iters 1"

"$B" tune $M --tuned "$T/c.tsv" --kernel 0 $Q --json > "$T/j" 2> "$T/e"; rc=$?
ok "tune --json: exit 0, a kernel line and a summary" \
   "[ $rc = 0 ] && [ \$(grep -c '\"schema\":\"npu-explore/tune/1\"' '$T/j') = 2 ]"
ok "the kernel line names kernel 0 and its key" \
   "grep -q '\"kind\":\"kernel\",\"index\":0,\"kernel\":\"gemv\".*\"key\":\"matmul:linear_relu portable' '$T/j'"
ok "it searched the matmul kind's knobs, no bench-only one" \
   "grep -q '\"searched\":\[\"cm.tile\".*\"gemv.long.g\"\]' '$T/j' && ! grep -q 'ablate' '$T/j'"
ok "the cache file is written, with its header" \
   "grep -q '\"cache\":\"$T/c.tsv\"' '$T/j' && head -1 '$T/c.tsv' | grep -qx '# npu-explore tuning cache v1'"
dev=$(sed -n 's/.*"kind":"summary".*"device":"\([^"]*\)".*/\1/p' "$T/j")
key=$(sed -n 's/.*"kind":"kernel".*"key":"\([^"]*\)".*/\1/p' "$T/j")
ok "the device is named with its ids and driver" "echo '$dev' | grep -q '\[[0-9a-f]*:[0-9a-f]*\]'"

# an entry of our own for kernel 0 (gemv.r=2 halves its grid): the plans for the device take it
printf '# npu-explore tuning cache v1\n%s\t%s\tgemv.r=2\t10\t5\n' "$dev" "$key" > "$T/own.tsv"
"$B" describe $M > "$T/plain" 2>&1
"$B" describe $M --tuned "$T/own.tsv" > "$T/d" 2> "$T/e"
ok "describe --tuned FILE: the plan records the kernel's knobs" \
   "grep -qx 'tuned    1 kernel with their own knobs from a tuning cache (npu-explore tune)' '$T/d' && grep -q '^0 .*F1  tuned gemv.r=2\$' '$T/d'"
ok "and lowers it with them (grid 32 -> 16), the other kernels unchanged" \
   "grep -q '^0 .* 32x1x1 ' '$T/plain' && grep -q '^0 .* 16x1x1 ' '$T/d' && [ \"\$(grep '^[12] ' '$T/plain')\" = \"\$(grep '^[12] ' '$T/d' | sed 's/  tuned.*//')\" ]"
"$B" describe $M --tuned "$T/own.tsv" --json > "$T/dj" 2>&1
ok "describe --json: the kernel's tuned knobs and every tunable kernel's key" \
   "grep -q '\"tuned\":{\"gemv.r\":2}' '$T/dj' && [ \$(grep -o '\"tune_key\"' '$T/dj' | wc -l) = 3 ]"
"$B" describe $M --tuned "$T/own.tsv" --tune gemv.r=1 > "$T/g" 2>&1
ok "--tune of the same knob wins over the cache" "! grep -q 'tuned' '$T/g'"
"$B" compile $M --tuned "$T/own.tsv" -o "$T/p.npubin" > /dev/null 2>&1
"$B" describe "$T/p.npubin" > "$T/f" 2>&1
ok "the .npubin keeps the record" "grep -q '^0 .* 16x1x1 .*tuned gemv.r=2\$' '$T/f'"
"$B" compile "$T/p.npubin" -o "$T/p2.npubin" > /dev/null 2> "$T/e"
ok "compiling that .npubin again: a note that its tuned kernels' knobs come from --tuned's cache" \
   "grep -qx \"note: $T/p.npubin: 1 of its kernels had knobs of their own from a tuning cache (describe: tuned); the file does not record their tuning keys, so recompiling takes such knobs from --tuned's cache, as an IR's compile does\" '$T/e'"
"$B" compile "$T/p.npubin" --tuned "$T/own.tsv" -o "$T/p2.npubin" > /dev/null 2> "$T/e"
ok "with --tuned FILE: that cache's knobs, no note" \
   "! grep -q 'tuning cache' '$T/e' && \"$B\" describe '$T/p2.npubin' | grep -q '^0 .* 16x1x1 .*tuned gemv.r=2\$'"
"$B" run "$T/p.npubin" --check > "$T/o" 2>&1; rc=$?
ok "and runs within tolerance" "[ $rc = 0 ] && grep -q '1 ok, 0 mismatch' '$T/o'"
"$B" run "$T/p.npubin" --tuned "$T/own.tsv" > "$T/o" 2>&1; rc=$?
ok "--tuned FILE on a compiled .npubin is refused" \
   "[ $rc = 2 ] && grep -q -- '--tuned applies when compiling' '$T/o'"
"$B" profile $M --tuned "$T/own.tsv" --iters 2 > "$T/pr" 2>&1; rc=$?
ok "profile on the device: the tuned kernel timed alone with the defaults and with its knobs" \
   "[ $rc = 0 ] && grep -q '^tuned kernels' '$T/pr' && grep -Eq '^0 +gemv +[0-9.]+ +[0-9.]+ +[0-9.]+x +gemv.r=2\$' '$T/pr'"
"$B" profile $M --tuned "$T/own.tsv" --iters 2 --json > "$T/pj" 2>&1
ok "profile --json: its line carries the tuned times" \
   "grep -q '\"index\":0,.*\"tuned\":\"gemv.r=2\",\"tuned_default_us\":[0-9.]*,\"tuned_us\":[0-9.]*' '$T/pj' && ! grep -q '\"index\":1,.*tuned' '$T/pj'"
"$B" profile $M --tuned none --iters 2 > "$T/pn" 2>&1
ok "--tuned none: no tuned kernel" "! grep -q 'tuned' '$T/pn'"

# auto: the file beside the pipeline cache, for the device the command runs on
(unset NPU_TUNED; XDG_CACHE_HOME="$T/xdg" "$B" tune $M --kernel 2 $Q > "$T/a" 2>&1); rc=$?
ok "tune with --tuned auto writes \$XDG_CACHE_HOME/npu-explore/tuned.tsv" \
   "[ $rc = 0 ] && [ -f '$T/xdg/npu-explore/tuned.tsv' ] && grep -q 'cache $T/xdg/npu-explore/tuned.tsv' '$T/a'"
ok "the table: one row for kernel 2, a summary" \
   "grep -Eq '^2 +gemv +1 ' '$T/a' && grep -q '^1 kernel searched in' '$T/a'"
cp "$T/own.tsv" "$T/xdg/npu-explore/tuned.tsv"
(unset NPU_TUNED; XDG_CACHE_HOME="$T/xdg" "$B" describe $M > "$T/ad" 2>&1)
ok "auto without a device (describe) uses no cache" "! grep -q tuned '$T/ad'"
(unset NPU_TUNED; XDG_CACHE_HOME="$T/xdg" "$B" profile $M --iters 2 > "$T/ap" 2>&1)
ok "auto on the device (profile) uses its entries" "grep -q 'gemv.r=2\$' '$T/ap'"

# bad caches: warnings, never a crash; tune never overwrites what is not a cache
printf 'some notes\n' > "$T/notes.txt"
"$B" describe $M --tuned "$T/notes.txt" > "$T/o" 2>&1; rc=$?
ok "a file that is no tuning cache: a warning, ignored" \
   "[ $rc = 0 ] && grep -q 'warning: .*notes.txt: not an npu-explore tuning cache' '$T/o' && ! grep -q '^tuned' '$T/o'"
"$B" tune $M --tuned "$T/notes.txt" --kernel 0 $Q > "$T/o" 2>&1; rc=$?
ok "tune refuses to overwrite it (exit 2), the file unchanged" \
   "[ $rc = 2 ] && grep -q 'is not an npu-explore tuning cache: not overwritten' '$T/o' && [ \"\$(cat '$T/notes.txt')\" = 'some notes' ]"
{ cat "$T/own.tsv"; printf '%s\tk2\tgemv.r=99\t1\t1\n%s\tk3\tconv.ablate=1\t1\t1\nbroken line\n' "$dev" "$dev"; } > "$T/bad.tsv"
"$B" describe $M --tuned "$T/bad.tsv" > "$T/o" 2>&1; rc=$?
ok "bad lines: a warning each naming the line, the good entry still applies" \
   "[ $rc = 0 ] && grep -q 'bad.tsv: line 3: knobs: gemv.r: .99. is not 1..8' '$T/o' && grep -q 'line 4: conv.ablate is bench only' '$T/o' && grep -q 'line 5: 1 tab-separated fields' '$T/o' && grep -q 'tuned gemv.r=2' '$T/o'"
{ cat "$T/own.tsv"; printf 'other device [1:2] drv\t%s\tgemv.r=4\t1\t1\n' "$key"; } > "$T/two.tsv"
"$B" describe $M --tuned "$T/two.tsv" > "$T/o" 2>&1; rc=$?
ok "without a device, a file of two devices is refused, both named" \
   "[ $rc = 2 ] && grep -q 'holds tuning for 2 devices' '$T/o' && grep -q 'other device' '$T/o'"

# bad arguments
"$B" tune $M --tuned "$T/c.tsv" --kernel 99 $Q > "$T/o" 2>&1; rc=$?
ok "--kernel out of range: exit 2" "[ $rc = 2 ] && grep -q -- '--kernel 99: the plan has 3 kernels' '$T/o'"
"$B" tune tests/models/convnet/model.json --tuned "$T/c.tsv" --kernel 1 $Q > "$T/o" 2>&1; rc=$?
ok "--kernel of a kind without knobs: exit 2, the kinds that have them" \
   "[ $rc = 2 ] && grep -q 'its kind has no knob tune searches (those of layernorm, decode_attention, attention_cache, conv2d, matmul have)' '$T/o'"
"$B" tune $M --backend cpu > "$T/o" 2>&1; rc=$?
ok "--backend cpu: exit 2" "[ $rc = 2 ] && grep -q 'tune times kernels on a Vulkan device' '$T/o'"
"$B" tune $M --beam 0 > "$T/o" 2>&1; rc=$?
ok "--beam 0: exit 2" "[ $rc = 2 ] && grep -q -- '--beam must be 1..64' '$T/o'"

# the session command: tune K in a batch script (the plan compiled again when the cache changed)
printf 'tune 2\ndescribe\n' | "$B" --batch $M --tuned "$T/b.tsv" $Q -x - > "$T/o" 2>&1; rc=$?
ok "--batch tune K: the table, then the session goes on" \
   "[ $rc = 0 ] && grep -Eq '^2 +gemv +1 ' '$T/o' && grep -q '^program  mlp' '$T/o'"
printf 'tune 7\n' | "$B" --batch $M --tuned "$T/b.tsv" $Q -x - > "$T/o" 2>&1; rc=$?
ok "--batch tune of no kernel: exit 2" "[ $rc = 2 ] && grep -q 'tune: K must be a kernel of the plan (0..2)' '$T/o'"

# the explorer: T on the selected kernel runs `tune K`, its table in the log
"$B" $M --tuned "$T/x.tsv" $Q --tui-keys '4jT7<Dump>' --tui-size 160x48 --tui-stable \
    --tui-dump "$T/s" > /dev/null 2>&1; rc=$?
ok "explorer T: tune 0 logged, the table, the verdict" \
   "[ $rc = 0 ] && grep -q '> tune 0' '$T/s' && grep -q '1 kernel searched in' '$T/s' && grep -q 'tune: kernel 0 ' '$T/s'"
"$B" $M --backend cpu --tui-keys '?<Dump>' --tui-size 160x48 --tui-stable --tui-dump "$T/h" \
    > /dev/null 2>&1
ok "help lists T and the session's tune K" "grep -q '^| T  *tune K  *tune the selected kernel' '$T/h'"
