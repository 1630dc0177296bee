tar -xJf .dev.tar.xz && for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig; export GLIBC_TUNABLES=glibc.rtld.optional_static_tls=4000000; source /opt/torch/.venv/bin/activate
for m in prefill decode; do timeout 100 .dev/npu-explore run tests/models/qwen2_5_1_5b/$m.json --random-weights 1 --dtype bf16 --check 2>&1 | grep -i "mismatch\|^summary" | head -3; done
O=$OUT/sw; mkdir -p $O
MODELS="convnext_tiny vit_b_16 swin_t tests/models/qwen2_5_1_5b/prefill.json@bf16" SETTINGS="auto=;t64=--tune cm.tile=64;t128=--tune cm.tile=128" REPEAT=1 ITERS=20 OUT=$O bash bench/ab.sh
for m in convnext_tiny vit_b_16 swin_t; do .dev/npu-explore describe /tmp/full/$m/model.json --tier nv-coopmat --json > $O/d_$m.json 2>/dev/null; done
.dev/npu-explore describe tests/models/qwen2_5_1_5b/prefill.json --dtype bf16 --tier nv-coopmat --json > $O/d_qwen2_5_1_5b.json 2>/dev/null
for m in convnext_tiny vit_b_16 swin_t qwen2_5_1_5b; do python3 bench/tiles.py matmul $O $m > $OUT/tiles_$m.txt; tail -1 $OUT/tiles_$m.txt; done
rm -rf $O
