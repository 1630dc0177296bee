#!/bin/bash
# Golden files: the graph text after every pass and the describe output, for mlp, convnet,
# resnet18 and qwen2_tiny decode. The same printer feeds --dump-after and the explorer's diff
# view. Refresh after an intended change with: UPDATE_GOLDEN=1 bash tests/cli/golden.sh
B=${NPU_EXPLORE:-build/asan/npu-explore}
n=0
for m in mlp/model convnet/model resnet18/model qwen2_tiny/decode; do
    name=$(echo "$m" | tr '/' '_')
    for kind in passes describe; do
        n=$((n + 1))
        gold="tests/golden/$name.$kind.txt"
        if [ $kind = passes ]; then
            out=$("$B" describe "tests/models/$m.json" --dump-after all 2>&1 >/dev/null |
                  sed -E 's/, [0-9.]+ ms\)/)/')
        else
            out=$("$B" describe "tests/models/$m.json" 2>&1)
        fi
        if [ -n "$UPDATE_GOLDEN" ]; then printf '%s\n' "$out" > "$gold"; fi
        if diff -u "$gold" <(printf '%s\n' "$out") > /tmp/golden.diff.$$ 2>&1; then
            echo "ok $n $gold"
        else
            echo "not ok $n $gold differs"; head -20 /tmp/golden.diff.$$ | sed 's/^/#   /'
        fi
        rm -f /tmp/golden.diff.$$
    done
done
# rope_cache switched off gives the plan of before the pattern existed: this file was that plan's
# describe output (qwen2_tiny_decode.describe.txt before rope_cache) when the pattern came
n=$((n + 1))
gold=tests/golden/qwen2_tiny_decode.no_rope_cache.describe.txt
out=$("$B" describe tests/models/qwen2_tiny/decode.json --no-fuse rope_cache 2>&1)
if [ -n "$UPDATE_GOLDEN" ]; then printf '%s\n' "$out" > "$gold"; fi
if diff -u "$gold" <(printf '%s\n' "$out") > /tmp/golden.diff.$$ 2>&1; then
    echo "ok $n $gold"
else
    echo "not ok $n $gold differs"; head -20 /tmp/golden.diff.$$ | sed 's/^/#   /'
fi
rm -f /tmp/golden.diff.$$
