#!/bin/bash
# Generated docs stay in sync with the code: docs/ops.md is `npu-explore ops --markdown`.
. tests/cli/lib.bash
if diff -u docs/ops.md <("$B" ops --markdown) >/dev/null; then
    echo "ok 1 docs/ops.md matches the op table"
else
    echo "not ok 1 docs/ops.md is stale: run '$B ops --markdown > docs/ops.md'"
fi
n=$("$B" ops | tail -n +2 | wc -l)
[ "$n" -ge 70 ] && echo "ok 2 ops lists $n ops" || echo "not ok 2 ops lists only $n ops"
# the README's tour: every `describe` example (compile only, no device) still runs
k=2
while IFS= read -r line; do
    cmd=${line%%#*}
    k=$((k + 1))
    if eval "\"$B\" ${cmd#\$B }" > /dev/null 2> "$T/err"; then
        echo "ok $k README: ${cmd% }"
    else
        echo "not ok $k README: ${cmd% }"; head -3 "$T/err" | sed 's/^/#   /'
    fi
done < <(grep -E '^\$B describe ' README.md)
