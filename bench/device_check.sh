#!/bin/bash
# One run on a GPU machine (after bench/pack_device.sh here): the Vulkan conformance tests on the
# real driver, every fixture with --check against PyTorch, generation, and profiles of resnet18,
# resnet50 and one Qwen2.5-1.5B decode step (random weights). Writes logs under $OUT (or ./out).
out=${OUT:-out}; mkdir -p "$out"
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
B=.dev/npu-explore
export LD_LIBRARY_PATH=$PWD/.dev/lib
# libnvidia-tls needs more static TLS than glibc reserves when the driver is dlopen'ed late
export GLIBC_TUNABLES=glibc.rtld.optional_static_tls=4000000
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/gpu.txt"
# tier by tier: the emulated tensor-core tier of the default NPU_TEST_TIER=all is lavapipe's
# (bench/NOTES.md: test_vk_attn 200+ s under all on the H200, 34 s as these two)
echo "== conformance tests (NVIDIA driver)"
for t in .dev/tests/test_vk_*; do
    for tier in portable nv-coopmat; do
        l="$out/$(basename "$t").$tier.log"
        NPU_TEST_TIER=$tier timeout 300 "$t" > "$l" 2>&1
        echo "$(basename "$t") $tier rc=$? $(grep -E '^\[  (PASSED|FAILED)  \] [0-9]+ test' "$l" | tr '\n' ' ')"
    done
done
echo "== fixtures against PyTorch"
for m in mlp/model convnet/model resnet18/model qwen2_tiny/prefill qwen2_tiny/decode; do
    $B run tests/models/$m.json --check > "$out/check_${m//\//_}.txt" 2>&1; echo "$m rc=$?"; tail -n +1 "$out/check_${m//\//_}.txt" | grep -E "^(device|summary|linear|logits|x )|MISMATCH" | head -4
done
$B generate tests/models/qwen2_tiny 2>&1 | tee "$out/generate.txt"
echo "== profiles"
$B profile tests/models/resnet18/model.json --iters 20 > "$out/profile_resnet18.txt" 2>&1; tail -2 "$out/profile_resnet18.txt"
$B profile tests/models/resnet50/model.json --random-weights 1 --iters 20 > "$out/profile_resnet50.txt" 2>&1; tail -2 "$out/profile_resnet50.txt"
timeout 240 $B profile tests/models/qwen2_5_1_5b/decode.json --random-weights 1 --dtype bf16 --iters 10 > "$out/profile_qwen15_decode.txt" 2>&1; echo "qwen decode rc=$?"; tail -2 "$out/profile_qwen15_decode.txt"
