#!/bin/bash
# A compiled .npubin as the MODEL of run, profile, --batch and the explorer (docs/CLI.md): run
# and profile run the file's own kernels on the IR it carries; the session compiles that IR again.
# A file whose kernels another build's shaders shaped is refused at load (kernel fingerprints).
. tests/cli/lib.bash
Q=tests/models/qwen2_tiny/decode.json
C=tests/models/convnet/model.json

"$B" compile $Q -o "$T/q.npubin" > /dev/null 2>&1; rc=$?
ok "compile: auto picks bf16 for bf16-stored weights, as run does" \
   "[ $rc = 0 ] && \"$B\" describe $T/q.npubin | head -1 | grep -q 'compute=bf16'"
mkdir -p "$T/away"; cp "$T/q.npubin" "$T/away/q.npubin"
"$B" run "$T/away/q.npubin" --check > "$T/r.txt" 2>&1; rc=$?
ok "run --check of a .npubin moved away from its IR: weights and I/O found beside the IR it names" \
   "[ $rc = 0 ] && grep -q 'compute bf16' $T/r.txt && grep -q 'summary: 5 outputs, 5 ok' $T/r.txt"
# the same kernels as a run of the IR compiled the same way (no device: portable choices)
"$B" run $Q -o "$T/json.safetensors" > /dev/null 2>&1
"$B" run "$T/q.npubin" --reference "$T/json.safetensors" --check --tol-rel 1e-6 > "$T/same.txt" 2>&1; rc=$?
ok "its outputs agree with a run of the IR to 1e-6" "[ $rc = 0 ] && grep -q '5 ok, 0 mismatch' $T/same.txt"
"$B" compile $Q --break F2 -o "$T/broken.npubin" > /dev/null 2>&1
"$B" run "$T/broken.npubin" --check > /dev/null 2>&1; rc=$?
ok "a .npubin compiled with a broken kernel fails its check (exit 1)" "[ $rc = 1 ]"

"$B" compile tests/models/qwen2_tiny/prefill.json --cpu-op aten.linear.default -o "$T/mixed.npubin" > /dev/null 2>&1
"$B" run "$T/mixed.npubin" --check > "$T/m.txt" 2>&1; rc=$?
ok "CPU partitions run the IR's nodes (mixed .npubin)" "[ $rc = 0 ] && grep -q '0 mismatch' $T/m.txt"
"$B" compile $C -o "$T/c.npubin" > /dev/null 2>&1
"$B" run "$T/c.npubin" --check > "$T/c.txt" 2>&1; rc=$?
ok "batch-norm folds (weight recipes) computed at load from the file's recipes" \
   "[ $rc = 0 ] && grep -q '0 mismatch' $T/c.txt && \"$B\" describe $T/c.npubin | grep -q 'bn_fold'"
# a fold over nodes the compile made: canonicalize writes transformers' sdpa out (its mask a
# fold), and a --cpu-op sdpa keeps it whole; the loader rewrites its IR copy the same way
H=tests/models/zoo/hf_qwen2/model.json
"$B" compile $H -o "$T/h.npubin" > /dev/null 2>&1
"$B" run "$T/h.npubin" --check > "$T/h.txt" 2>&1; rc=$?
ok "a fold of the written-out sdpa's mask computed at load (transformers' Qwen2 .npubin)" \
   "[ $rc = 0 ] && grep -q '1 ok, 0 mismatch' $T/h.txt && \"$B\" describe $T/h.npubin | grep -q 'folded .*scaled_dot_product_attention.mask'"
"$B" compile $H --cpu-op aten.scaled_dot_product_attention.default -o "$T/hc.npubin" > /dev/null 2>&1
"$B" run "$T/hc.npubin" --check > "$T/hc.txt" 2>&1; rc=$?
ok "an sdpa the .npubin runs on the CPU stays whole at load" \
   "[ $rc = 0 ] && grep -q '1 ok, 0 mismatch' $T/hc.txt && \"$B\" describe $T/hc.npubin | grep -q ' cpu .*scaled_dot_product_attention'"
# kernel fingerprints (format v4): each built-in NPU kernel records the SPIR-V module it was
# lowered for; a file whose kernel another build's module shaped is refused at load naming the file
# and the kernel (the checksum fixed, so the error is the fingerprint's), describe still shows it
"$B" describe "$T/c.npubin" > "$T/cd.txt" 2>"$T/e"; rc=$?
ok "describe of a fresh .npubin: v4, its NPU kernels verified, no warning" \
   "[ $rc = 0 ] && head -1 $T/cd.txt | grep -q 'npubin v4' && grep -q '^verified [0-9]* built-in NPU kernels: fingerprints match' $T/cd.txt && [ ! -s $T/e ]"
first=$("$B" describe "$T/c.npubin" --json | python3 -c '
import json, sys
print(next(k["index"] for k in json.load(sys.stdin)["kernels"] if "fingerprint" in k))')
npubin_edit "$T/c.npubin" "$T/stale.npubin" '
i = b.index(b"\xabfingerprint\xcf", 32) + 13  # the first kernel with one: a uint64
b[i + 7] ^= 0x5a'
"$B" run "$T/stale.npubin" --check > /dev/null 2>"$T/e"; rc=$?
ok "a kernel compiled against another build's shader: run exits 2 at load, one error naming file, kernel, module and the fix" \
   "[ $rc = 2 ] && [ \$(wc -l < $T/e) = 1 ] && grep -q \"^error: $T/stale.npubin: kernel $first '[a-z0-9_]*' (module [a-z0-9_.]*) was compiled against another build's shader (fingerprint [0-9a-f]\\{16\\} vs this build's [0-9a-f]\\{16\\}): recompile it with 'npu-explore compile $C -o $T/stale.npubin --dtype fp16 --tier [a-z-]*'\" $T/e"
"$B" describe "$T/stale.npubin" > "$T/sd.txt" 2>"$T/e"; rc=$?
ok "describe still shows it: the kernel marked STALE, a warning" \
   "[ $rc = 0 ] && grep -q '^verified NO: 1 of [0-9]* built-in NPU kernels' $T/sd.txt && grep -Eq '^$first +npu .*STALE\$' $T/sd.txt && [ \$(grep -c STALE $T/sd.txt) = 2 ] && grep -q '^warning: .*kernel $first' $T/e"
"$B" describe "$T/stale.npubin" --json 2>/dev/null | python3 -c '
import json, sys
p = json.load(sys.stdin)
assert p["kernels_verified"] is False and p["stale_kernels"] == [int(sys.argv[1])], p["stale_kernels"]
assert p["kernels"][int(sys.argv[1])]["stale"] is True' "$first"; rc=$?
ok "describe --json: kernels_verified false, stale_kernels names it" "[ $rc = 0 ]"
# a file from before the fingerprints: a v3 header (this reader ignores a key v3 did not have)
npubin_edit "$T/c.npubin" "$T/v3.npubin" 'b[8] = 3'
"$B" run "$T/v3.npubin" --check > "$T/c.txt" 2>"$T/e"; rc=$?
ok "a v3 .npubin still runs, warning once that its kernels cannot be checked; describe says so" \
   "[ $rc = 0 ] && grep -q '0 mismatch' $T/c.txt && [ \$(grep -c 'written before kernel fingerprints (format v3)' $T/e) = 1 ] && \"$B\" describe $T/v3.npubin 2>/dev/null | grep -q '^verified no: format v3 predates kernel fingerprints'"
"$B" profile "$T/c.npubin" --iters 2 --format csv > "$T/p.csv" 2>&1; rc=$?
nk=$("$B" describe "$T/c.npubin" | awk '/^kernels/ {print $2; exit}')
ok "profile of a .npubin: a row per kernel, every kernel's error measured and ok (a K-split's partial pass: -)" \
   "[ $rc = 0 ] && [ \$(( \$(grep -cE ',ok(,-?[0-9]+){3}\$' $T/p.csv) + \$(grep -cE '^[0-9]+,conv2d_part,.*,-(,-?[0-9]+){3}\$' $T/p.csv) )) = $nk ]"

"$B" run "$T/q.npubin" --no-fuse all > /dev/null 2>"$T/e"; rc=$?
ok "--no-fuse on a .npubin: exit 2, it applies when compiling" "[ $rc = 2 ] && grep -q -- '--no-fuse applies when compiling' $T/e"
"$B" run "$T/q.npubin" --dtype fp16 > /dev/null 2>"$T/e"; rc=$?
ok "--dtype other than the file's: exit 2" "[ $rc = 2 ] && grep -q -- '--dtype applies when compiling' $T/e"

printf 'fusion off all\ncheck\n' | "$B" --batch "$T/q.npubin" -x - > "$T/b.txt" 2>"$T/be"; rc=$?
ok "--batch on a .npubin compiles the IR it carries again (switches work), and says so" \
   "[ $rc = 0 ] && grep -q 'compiles the IR this file carries' $T/be && grep -q '0 mismatch' $T/b.txt"
"$B" "$T/q.npubin" --tui-keys '<Dump>q' --tui-size 120x30 > "$T/tui.txt" 2>&1; rc=$?
ok "the explorer opens a .npubin, its log saying so" "[ $rc = 0 ] && grep -q 'compiles the IR this file carries (compiled from $Q)' $T/tui.txt"

# recompiling a .npubin (compile FILE.npubin, the session, tune) starts from the options its plan
# was compiled with: dtype, tier and tuning knobs; an option given on the command line wins, with a
# note. nv-coopmat only compiles here (lavapipe has no tensor cores): describe, never run.
M=tests/models/mlp/model.json
head_of() { grep -E '^(program|tuning) ' "$1" | sed 's/   npubin v[0-9]*$//'; }
"$B" compile $M --dtype bf16 --tier nv-coopmat --tune cm.target=64 --tune gemv.r=2 -o "$T/o.npubin" > /dev/null 2>&1
"$B" describe "$T/o.npubin" > "$T/o.txt" 2>&1
"$B" compile "$T/o.npubin" -o "$T/o2.npubin" > /dev/null 2>"$T/e"; rc=$?
"$B" describe "$T/o2.npubin" > "$T/o2.txt" 2>&1
ok "compile FILE.npubin keeps the file's dtype, tier and knobs: the same kernels, no note" \
   "[ $rc = 0 ] && grep -q 'compute=bf16   target=nv-coopmat' $T/o2.txt && grep -qx 'tuning   cm.target=64 gemv.r=2' $T/o2.txt && diff <(grep -v '^source ' $T/o.txt) <(grep -v '^source ' $T/o2.txt) > /dev/null && [ ! -s $T/e ]"
printf 'describe\n' | "$B" --batch "$T/o.npubin" -x - > "$T/b.txt" 2>"$T/be"; rc=$?
ok "--batch on the .npubin compiles its IR with the file's dtype, tier and knobs" \
   "[ $rc = 0 ] && [ \"\$(head_of $T/b.txt)\" = \"\$(head_of $T/o.txt)\" ] && ! grep -q recompiling $T/be"
printf 'describe\n' | "$B" --batch "$T/o.npubin" --dtype fp16 --tier portable --tune cm.target=32 -x - > "$T/b.txt" 2>"$T/be"; rc=$?
ok "options given on the command line win over the file's, each with a note; the rest kept" \
   "[ $rc = 0 ] && grep -q 'compute=f16   target=portable' $T/b.txt && grep -qx 'tuning   cm.target=32 gemv.r=2' $T/b.txt && grep -qx \"note: $T/o.npubin: recompiling with --dtype fp16 (the file's plan: bf16)\" $T/be && grep -qx \"note: $T/o.npubin: recompiling with --tier portable (the file's plan: nv-coopmat)\" $T/be && grep -qx \"note: $T/o.npubin: recompiling with --tune cm.target=32 (the file's plan: cm.target=64)\" $T/be"
"$B" "$T/o.npubin" --dtype fp16 --tui-keys '4<Dump>q' --tui-size 160x30 > "$T/tui.txt" 2>&1; rc=$?
ok "the explorer on the .npubin: an override said in its log" \
   "[ $rc = 0 ] && grep -q \"note: recompiling with --dtype fp16 (the file's plan: bf16)\" $T/tui.txt"
"$B" compile "$T/o.npubin" --dtype fp32 --tune gemv.u=2 -o "$T/o3.npubin" > /dev/null 2>"$T/e"; rc=$?
"$B" describe "$T/o3.npubin" > "$T/o3.txt" 2>&1
ok "compile FILE.npubin --dtype: that dtype, the tier and knobs kept, a note; a knob the file left at its default too" \
   "[ $rc = 0 ] && grep -q 'compute=f32   target=nv-coopmat' $T/o3.txt && grep -qx 'tuning   cm.target=64 gemv.r=2 gemv.u=2' $T/o3.txt && grep -qx \"note: $T/o.npubin: recompiling with --dtype fp32 (the file's plan: bf16)\" $T/e && grep -qx \"note: $T/o.npubin: recompiling with --tune gemv.u=2 (the file's plan: gemv.u at its default)\" $T/e"
NPU_CM_TARGET=32 "$B" compile "$T/o.npubin" -o "$T/o5.npubin" > /dev/null 2>"$T/e"; rc=$?
ok "a knob an NPU_* variable sets wins too, the note naming the variable" \
   "[ $rc = 0 ] && grep -qx 'tuning   cm.target=32 gemv.r=2   (from the environment: NPU_CM_TARGET)' <(\"$B\" describe $T/o5.npubin) && grep -qx \"note: $T/o.npubin: recompiling with cm.target=32 from NPU_CM_TARGET (the file's plan: cm.target=64)\" $T/e"
printf 'check\n' | "$B" --batch "$T/o.npubin" -x - > /dev/null 2>"$T/be"; rc=$?
printf 'check\n' | "$B" --batch $M --dtype bf16 --tier nv-coopmat --tune cm.target=64 --tune gemv.r=2 -x - > /dev/null 2>"$T/he"; rh=$?
ok "the file's tier runs, or fails, as --tier given by hand does (lavapipe lacks nv-coopmat)" \
   "[ $rc = $rh ] && [ \"\$(grep -v '^note' $T/be | sed 's|^error: [^:]*: ||')\" = \"\$(sed 's|^error: [^:]*: ||' $T/he)\" ]"
"$B" compile $M --dtype bf16 -o "$T/b16.npubin" > /dev/null 2>&1
"$B" tune "$T/b16.npubin" --tuned "$T/t.tsv" --kernel 0 --beam 1 --budget-s 2 --iters 1 --json > "$T/j" 2>&1; rc=$?
ok "tune FILE.npubin searches the file's plan (its dtype), not a default compile of its IR" \
   "[ $rc = 0 ] && grep -q '\"kind\":\"summary\".*\"dtype\":\"bf16\",\"tier\":\"portable\"' $T/j"
npubin_edit "$T/o.npubin" "$T/badknob.npubin" '
i = b.index(b"cm.target=64", 32)
b[i:i + 12] = b"cm.tarxet=64"'
"$B" compile "$T/badknob.npubin" -o "$T/o4.npubin" > /dev/null 2>"$T/e"; rc=$?
ok "a recorded knob this build lacks: exit 2 naming the file and the knob, as --tune would" \
   "[ $rc = 2 ] && grep -q \"^error: $T/badknob.npubin: .*cm.tarxet\" $T/e"

# the embedded IR is checked like any IR: a broken key is an error naming the file
npubin_edit "$T/q.npubin" "$T/badir.npubin" '
i = b.index(b"\"nodes\"", 32)
b[i:i + 7] = b"\"nodez\""'
"$B" run "$T/badir.npubin" > /dev/null 2>"$T/e"; rc=$?
ok "a .npubin whose IR is broken: exit 2 naming the file" "[ $rc = 2 ] && grep -q 'badir.npubin' $T/e"
