#!/bin/bash
# Golden files: the graph text after every pass and the describe output, for mlp, convnet,
# resnet18 and qwen2_tiny decode. The same printer feeds --dump-after and the explorer's diff
# view. Refresh after an intended change with: UPDATE_GOLDEN=1 bash tests/cli/golden.sh
. tests/cli/lib.bash
# check GOLD OUT: OUT is the golden file's text (UPDATE_GOLDEN: it becomes it)
check() {
    n=$((n + 1))
    if [ -n "$UPDATE_GOLDEN" ]; then printf '%s\n' "$2" > "$1"; fi
    if diff -u "$1" <(printf '%s\n' "$2") > /tmp/golden.diff.$$ 2>&1; then
        echo "ok $n $1"
    else
        echo "not ok $n $1 differs"; head -20 /tmp/golden.diff.$$ | sed 's/^/#   /'
    fi
    rm -f /tmp/golden.diff.$$
}
for m in mlp/model convnet/model resnet18/model qwen2_tiny/decode; do
    name=$(echo "$m" | tr '/' '_')
    check "tests/golden/$name.passes.txt" \
        "$("$B" describe "tests/models/$m.json" --dump-after all 2>&1 >/dev/null |
           sed -E 's/, [0-9.]+ ms\)/)/')"
    check "tests/golden/$name.describe.txt" "$("$B" describe "tests/models/$m.json" 2>&1)"
done
# rope_cache switched off gives the plan of before the pattern existed: this file was that plan's
# describe output (qwen2_tiny_decode.describe.txt before rope_cache) when the pattern came
check tests/golden/qwen2_tiny_decode.no_rope_cache.describe.txt \
    "$("$B" describe tests/models/qwen2_tiny/decode.json --no-fuse rope_cache 2>&1)"
