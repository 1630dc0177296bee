#!/bin/bash
# In-place ops (compiler/inplace.c) on small IRs (tests/models/inplace): zero_ of a slice of
# a clone read afterwards (SwinV2's qkv bias) becomes slice_fill of the clone; relu_ of a tensor
# read again makes the later read see relu's result; add_ into a slice of a tensor read afterwards
# is refused with exit 2, never computed out of place; so is a view made before a write and read
# after it. state.json: add_ into a constant makes it model state (an input paired with the
# value it ends with), copy_ overwriting a constant whole first does not; add_ into a slice of a
# constant (state_view.json) is refused. box_fill.json: fill_.Tensor (its value a lifted 0-dim
# constant, as Swin's shifted-window mask writes mask[h0:h1, w0:w1] = n) of a slice of a slice
# becomes one slice_fill of the base over both; an int64 value fills a float tensor cast, as in
# ATen; a value that is no 0-dim tensor, or a link of the chain read afterwards, is refused.
# mask_source.json: new_zeros of an NPU result (Swin's mask is shaped from the activation) is a
# zeros source, host-side, so the mask filled from it is made in the CPU prologue (fold-constants
# off; with it the mask is computed once at load and the plan is one NPU partition); new_full of a
# float16 tensor fills float16.
. tests/cli/lib.bash
D=tests/models/inplace
# values(FILE, TENSOR): the tensor's floats from a safetensors file, one per line
values() { python3 -c '
import json,struct,sys
f=open(sys.argv[1],"rb"); n=struct.unpack("<Q",f.read(8))[0]; h=json.loads(f.read(n)); d=f.read()
a,b=h[sys.argv[2]]["data_offsets"]
print("\n".join("%.6g" % v for v in struct.unpack("<%df" % ((b - a) // 4), d[a:b])))' "$@"; }
"$B" describe $D/slice_zero.json --dump-after import > /dev/null 2> "$T/d.txt"
ok "zero_ of a slice of a read clone becomes slice_fill of the clone" "grep -q '%zero_ = slice_fill(%clone, dim=0, start=2, end=4, value=0)' $T/d.txt && grep -q 'mul(%zero_' $T/d.txt"
"$B" run $D/slice_zero.json --backend cpu --seed 3 -o "$T/z.st" > /dev/null 2>&1; rc=$?
ok "slice_zero runs: elements 2 and 3 are zero, the others 2x" "[ $rc = 0 ] && [ \"\$(values $T/z.st mul | sed -n '3p;4p' | tr '\n' ' ')\" = '0 0 ' ] && values $T/z.st mul | sed -n 1p | grep -vq '^0$'"
"$B" describe $D/redirect.json --dump-after import > /dev/null 2> "$T/r.txt"
ok "relu_ of a tensor read again: the later read reads relu_'s result" "grep -q 'add(%relu_, %x)' $T/r.txt"
"$B" run $D/view_add.json --backend cpu > "$T/v.txt" 2>&1; rc=$?
ok "add_ into a slice of a tensor read afterwards: exit 2 naming the nodes" "[ $rc = 2 ] && grep -q \"node 'add_'.*writes in place into a view of 'neg' (made by 'slice_1') that 'mul' reads afterwards\" $T/v.txt"
"$B" run $D/stale_view.json --backend cpu > "$T/s.txt" 2>&1; rc=$?
ok "relu_ of a tensor whose earlier view is read afterwards: exit 2 naming the nodes" "[ $rc = 2 ] && grep -q \"node 'relu_'.*'mul' reads it afterwards through a view made before the write\" $T/s.txt"
"$B" describe $D/state.json --dump-after import > /dev/null 2> "$T/st.txt"
ok "add_ into a constant: model state, an input paired with add_; copy_ of another: a plain copy" "grep -q '^  input  %c_acc f32\[4\] state -> %add_$' $T/st.txt && grep -q '^  output %add_ f32\[4\]$' $T/st.txt && grep -q '%copy_ = copy(\$c_last, %x)' $T/st.txt"
"$B" run $D/state.json --backend cpu --seed 3 -o "$T/st.st" > /dev/null 2>&1; rc=$?
ok "state.json runs from the constant's value: add = 2 * (acc + x) + x, add_ = acc + x" "[ $rc = 0 ] && python3 -c '
import json,struct,sys
f=open(sys.argv[1],\"rb\"); n=struct.unpack(\"<Q\",f.read(8))[0]; h=json.loads(f.read(n)); d=f.read()
v=lambda k: struct.unpack(\"<4f\", d[h[k][\"data_offsets\"][0]:h[k][\"data_offsets\"][1]])
sys.exit(0 if all(abs(y - 2 * s - (s - a)) < 1e-5 and abs(s - a) <= 1 for y, s, a in zip(v(\"add\"), v(\"add_\"), (1, 2, 3, 4))) else 1)' $T/st.st"
"$B" run $D/state_view.json --backend cpu > "$T/sv.txt" 2>&1; rc=$?
ok "add_ into a slice of a constant (state the carry cannot express): exit 2 naming the node" "[ $rc = 2 ] && grep -q \"node 'add_': tensor 'c_acc': aten.add_.Tensor writes in place into a view of 'c_acc' (made by 'slice_1'), model state\" $T/sv.txt"
"$B" generate $D/state.json > "$T/g.txt" 2>&1; rc=$?
ok "generate of a state model whose input is no token: exit 2 naming the input" "[ $rc = 2 ] && grep -q \"tensor 'x': generate fills input_ids\" $T/g.txt"
# values2(FILE, TENSOR): the same, on one line
values2() { values "$@" | tr '\n' ' '; }
"$B" describe $D/box_fill.json --dump-after import > /dev/null 2> "$T/b.txt"
ok "fill_.Tensor of a slice of a slice becomes one slice_fill of the base, the value its input" "grep -q '%fill_ = slice_fill(%ones, %lift_fresh_copy, dim=\[0,1\], start=\[1,0\], end=\[3,9223372036854775807\], step=\[1,2\])' $T/b.txt && grep -q 'mul(%fill__1, other=2)' $T/b.txt"
for be in cpu vulkan; do
    "$B" run $D/box_fill.json --backend $be -o "$T/b.st" > /dev/null 2>&1; rc=$?
    ok "box_fill on $be: rows 1..2 at columns 0, 2 are 7 (int64 cast), column 4 -2.5, the rest 1 (doubled); fill_ of a whole clone -2.5 (plus 1)" \
       "[ $rc = 0 ] && [ \"\$(values2 $T/b.st out)\" = '2 2 2 2 -5 14 2 14 2 -5 14 2 14 2 -5 2 2 2 2 -5 ' ] && [ \"\$(values2 $T/b.st whole | tr ' ' '\n' | sort -u | tr -d '\n')\" = '-1.5' ]"
done
"$B" run $D/box_fill_vector.json --backend cpu > "$T/bv.txt" 2>&1; rc=$?
ok "fill_ with a 1-dim value tensor: exit 2 naming the node and the value" "[ $rc = 2 ] && grep -q \"node 'fill__1': tensor 'lift_fresh_copy_1': .*fill_ only supports 0-dimension value tensor but got tensor with 1 dimensions\" $T/bv.txt"
"$B" run $D/box_fill_stale.json --backend cpu > "$T/bs.txt" 2>&1; rc=$?
ok "fill_ of a slice of a slice whose outer slice is read afterwards: exit 2 naming the reader" "[ $rc = 2 ] && grep -q \"node 'fill_'.*view of 'ones' (made by 'slice_1') that 'late' reads afterwards\" $T/bs.txt"
"$B" describe $D/mask_source.json --disable fold-constants > "$T/m.txt" 2>&1; rc=$?
ok "new_zeros of an NPU result and the slice_fill of it: the CPU prologue, then one NPU partition" "[ $rc = 0 ] && grep -q '^  partition p0 cpu: kernels 0..1$' $T/m.txt && grep -q '^  partition p1 npu' $T/m.txt && ! grep -q '^  partition p2' $T/m.txt && grep -Eq '^0 +cpu +zeros ' $T/m.txt"
"$B" describe $D/mask_source.json > "$T/m2.txt" 2>&1; rc=$?
ok "with fold-constants the mask (new_zeros, fill_) is computed at load: one NPU partition" "[ $rc = 0 ] && grep -q '^folded   2 constants .*fill_ f32\[2,3\] <- new_zeros \.\. fill_' $T/m2.txt && grep -q '^kernels  2 (2 npu, 0 cpu) in 1 levels' $T/m2.txt"
"$B" run $D/mask_source.json --backend cpu -o "$T/m.st" > /dev/null 2>&1; rc=$?
ok "new_full of a float16 tensor: 2.5 in float16" "[ $rc = 0 ] && [ \"\$(values2 $T/m.st full_f32)\" = '2.5 2.5 ' ]"
"$B" run $D/mask_source.json --check > "$T/mv.txt" 2>&1; rc=$?
ok "mask_source on Vulkan matches the CPU reference" "[ $rc = 0 ] && grep -q ', 0 mismatch, 0 without reference' $T/mv.txt"
