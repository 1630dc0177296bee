#!/bin/bash
# In-place ops (compiler/inplace.c) on three small IRs (tests/models/inplace): zero_ of a slice of
# a clone read afterwards (SwinV2's qkv bias) becomes slice_fill of the clone; relu_ of a tensor
# read again makes the later read see relu's result; add_ into a slice of a tensor read afterwards
# is refused with exit 2, never computed out of place.
B=${NPU_EXPLORE:-build/asan/npu-explore}
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
n=0
ok() { n=$((n + 1)); if eval "$2"; then echo "ok $n $1"; else echo "not ok $n $1"; fi; }
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
