#!/bin/bash
# The second H100 run of 2026-11-23 (after bench/pack_device.sh): conformance suites on the NVIDIA
# driver, generate, bench/decode_positions.sh and a bf16 profile of one Qwen2.5-1.5B decode step.
out=${OUT:-out}; mkdir -p $out
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
export LD_LIBRARY_PATH=$PWD/.dev/lib GLIBC_TUNABLES=glibc.rtld.optional_static_tls=4000000
for t in .dev/tests/test_vk_*; do $t > $out/$(basename $t).log 2>&1; echo "$(basename $t) rc=$? $(grep -E '^\[  (PASSED|FAILED)  \] [0-9]+ test' $out/$(basename $t).log | tr '\n' ' ')"; done
grep -B3 -A8 "FAILED\|ERROR" $out/test_vk_core.log | head -20
.dev/npu-explore generate tests/models/qwen2_tiny | tail -2
timeout 300 bash bench/decode_positions.sh
timeout 200 .dev/npu-explore profile tests/models/qwen2_5_1_5b/decode.json --random-weights 1 --dtype bf16 --iters 10 > $out/qprof.txt 2>&1; echo "qprof rc=$?"; tail -2 $out/qprof.txt
awk 'NR>2 && $1 ~ /^[0-9]+$/ {t[$2]+=$4; n[$2]++} END {for (k in t) printf "%-24s %4d kernels %10.1f us\n", k, n[k], t[k]}' $out/qprof.txt | sort -k4 -n -r | head -8
