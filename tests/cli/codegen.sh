#!/bin/bash
# Generated kernels from the command line: describe --source (a generated kernel's GLSL and SPIR-V
# disassembly, a hand-written one's source with its row's defines and its includes, bad ids), the session's `source`,
# the kernel cache (--kernel-cache DIR: a second compile comes from the directory; none writes
# nothing), --no-fuse fuse-elementwise, --dump-after fuse-elementwise, and .npubin files carrying
# the modules: read back, described, and refused when a module's SPIR-V is not valid (the file's
# checksum recomputed, so only spirv-val can catch it).
. tests/cli/lib.bash
Q=tests/models/qwen2_tiny/decode.json
G=tests/models/gpt_block/model.json
# the instance id of qwen2_tiny decode's generated kernel (the position chain): it follows the
# pattern instances, so other patterns renumber it
F=$("$B" describe $Q 2>/dev/null | awk '$3 ~ /^gen_/ {print $NF; exit}')

"$B" describe $Q --source $F > "$T/s.txt" 2>&1; rc=$?
ok "describe --source $F: generated GLSL, its tensors, the SPIR-V disassembly" \
   "[ $rc = 0 ] && grep -q 'generated, $F elementwise' $T/s.txt && grep -q 't0 = position_ids' $T/s.txt \
    && grep -q '#define STORAGE_BF16' $T/s.txt && grep -q 'OpEntryPoint GLCompute %main' $T/s.txt"
"$B" describe $Q --source 0 > "$T/h.txt" 2>&1; rc=$?
ok "describe --source 0: the hand-written embedding.comp with its includes and module" \
   "[ $rc = 0 ] && grep -q 'hand-written shaders/embedding.comp' $T/h.txt && grep -q 'module embedding.bf16' $T/h.txt \
    && grep -q -- '---- common.glsl (included)' $T/h.txt && grep -q 'OpCapability Shader' $T/h.txt"
"$B" describe $Q --source 99 > /dev/null 2>"$T/e"; rc=$?
ok "describe --source 99: exit 2 naming the range" "[ $rc = 2 ] && grep -q 'no kernel 99' $T/e"
"$B" describe $Q --no-fuse rmsnorm_linear --source F1 > "$T/f1.txt" 2>&1; rc=$?
ok "describe --source F1 (a pattern instance: rmsnorm.comp)" "[ $rc = 0 ] && grep -q 'hand-written shaders/rmsnorm.comp' $T/f1.txt"
"$B" describe $Q --source F1 > "$T/f1.txt" 2>&1; rc=$?
ok "describe --source F1 folded (rmsnorm_linear): the GEMV it runs in, gemv.glsl after its row's defines" \
   "[ $rc = 0 ] && grep -q 'gemv_rms (hand-written shaders/gemv.glsl' $T/f1.txt \
    && grep -q 'module gemv_rms.bf16' $T/f1.txt && grep -q '^#define STORAGE_BF16' $T/f1.txt \
    && grep -q '^#define GEMV_PRO 1' $T/f1.txt && grep -q '^#define MM_BIAS 1' $T/f1.txt \
    && grep -q -- '---- gemv.glsl ----' $T/f1.txt"
"$B" describe $Q --no-fuse $F --source $F > /dev/null 2>"$T/e"; rc=$?
ok "describe --source of a switched-off instance: exit 2" "[ $rc = 2 ] && grep -q 'switched off' $T/e"
printf "source $F\n" | "$B" --batch $Q --json -x - > "$T/b.jsonl" 2>&1; rc=$?
ok "session 'source $F' as a JSON line" "[ $rc = 0 ] && python3 -c '
import json,sys
o=json.loads(open(sys.argv[1]).readline())
assert o[\"schema\"]==\"npu-explore/source/1\" and o[\"kernel\"]==1 and \"S_STORE\" in o[\"source\"], o
assert o[\"spirv_words\"] > 100 and \"OpFunctionEnd\" in o[\"disassembly\"]
' $T/b.jsonl"

# the kernel cache: a directory of NAME.npuspv, filled by the first compile, read by the second
"$B" compile $G -o "$T/g.npubin" --kernel-cache "$T/cache" > "$T/c1.txt" 2>&1; rc1=$?
"$B" compile $G -o "$T/g2.npubin" --kernel-cache "$T/cache" > "$T/c2.txt" 2>&1; rc2=$?
# gpt_block's generated kernels (each its own module): the mask chain and the head split
NG=$("$B" describe $G 2>/dev/null | sed -n 's/^  generated: \([0-9]*\) kernels in \1 modules.*/\1/p')
GF=$("$B" describe $G 2>/dev/null | awk '$3 ~ /^gen_/ {print $NF; exit}')
ok "first compile runs glslang and fills the cache directory" \
   "[ $rc1 = 0 ] && [ -n \"$NG\" ] && [ $NG -ge 2 ] && grep -q \"generated kernels: $NG, $NG modules: $NG compiled by glslang\" $T/c1.txt \
    && [ \$(ls $T/cache/*.npuspv | wc -l) = $NG ]"
ok "second compile: every module from the disk cache, the same .npubin" \
   "[ $rc2 = 0 ] && grep -q \"0 compiled by glslang (0.0 ms), 0 from memory, $NG from the disk cache\" $T/c2.txt \
    && cmp -s $T/g.npubin $T/g2.npubin"
"$B" compile $G -o "$T/g3.npubin" --kernel-cache none > /dev/null 2>&1; rc=$?
ok "--kernel-cache none writes no cache" "[ $rc = 0 ] && [ ! -e none ] && cmp -s $T/g.npubin $T/g3.npubin"
"$B" describe "$T/g.npubin" --source $GF > "$T/n.txt" 2>&1; rc=$?
ok "a .npubin carries the modules: describe --source from the file" \
   "[ $rc = 0 ] && grep -q \"generated, $GF elementwise\" $T/n.txt && grep -q 'OpEntryPoint' $T/n.txt"
"$B" describe "$T/g.npubin" --json > "$T/n.json" 2>&1; rc=$?
ok "describe --json lists the modules" "[ $rc = 0 ] && python3 -c '
import json,sys
p=json.load(open(sys.argv[1])); m=p[\"modules\"]
assert len(m)==$NG and all(x[\"name\"].startswith(\"gen_\") and x[\"spirv_words\"]>100 for x in m), m
' $T/n.json"
# flip one byte inside a module's SPIR-V, fix the checksum: the reader's spirv-val refuses it
npubin_edit "$T/g.npubin" "$T/bad.npubin" '
i = b.index(bytes([0x03, 0x02, 0x23, 0x07]), 32)  # the magic of the first module
b[i + 200] ^= 0xff                                # inside its instructions'
"$B" describe "$T/bad.npubin" > /dev/null 2>"$T/e"; rc=$?
ok "a module that is not valid SPIR-V: exit 2, named" "[ $rc = 2 ] && grep -q 'modules\[0\].*invalid SPIR-V' $T/e"

# (fold-constants off: with it the mask and positions are computed at load, tests/cli/constfold.sh)
"$B" describe $G --no-fuse fuse-elementwise --disable fold-constants > "$T/off.txt" 2>&1; rc=$?
ok "--no-fuse fuse-elementwise: no generated kernels, the mask building back on the CPU" "[ $rc = 0 ] && ! grep -q gen_ $T/off.txt && grep -q 'kernels  39 (29 npu, 10 cpu)' $T/off.txt"
"$B" describe $G --no-fuse elementwise --disable fold-constants > "$T/off2.txt" 2>&1; rc=$?
ok "--no-fuse elementwise: instances off; what the groups took from the CPU (arange x2, le, full) runs as 4 lone generated kernels, where/masked_fill on their hand-written kernels" \
   "[ $rc = 0 ] && grep -q \"fused: 0 of [0-9]* instances\" $T/off2.txt && grep -q 'generated: 4 kernels' $T/off2.txt && grep -q 'where x1  where_s x1' $T/off2.txt"
"$B" describe $Q --dump-after fuse-elementwise > /dev/null 2>"$T/d.txt"; rc=$?
ok "--dump-after fuse-elementwise shows the instance" \
   "[ $rc = 0 ] && grep -q '=== after fuse-elementwise' $T/d.txt && grep -q 'fusion $F elementwise' $T/d.txt"
"$B" describe $Q --disable fuse > "$T/dis.txt" 2>&1; rc=$?
ok "--disable fuse: generated kernels take the RoPE and RMSNorm chains" \
   "[ $rc = 0 ] && grep -q 'fused: 16 of 16 instances on  elementwise x16' $T/dis.txt"
"$B" describe $Q --disable plan-memory > /dev/null 2>"$T/e"; rc=$?
ok "--disable of a pass that cannot be switched off: exit 2" "[ $rc = 2 ] && grep -q 'cannot\|not a pass' $T/e"
