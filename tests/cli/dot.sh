#!/bin/bash
# dot: DOT text with fusion clusters, SVG and PNG through libgvc, --after, --color partition.
. tests/cli/lib.bash
"$B" dot tests/models/qwen2_tiny/decode.json -o "$T/q.dot" >/dev/null
ok "fusion instances are clusters" "grep -q 'cluster_f' '$T/q.dot' && grep -q 'F5 decode_attention' '$T/q.dot'"
ok "edges carry shapes" "grep -q 'label=\"\[1,1,64\]\"' '$T/q.dot'"
# a prologue fold computes its base's members: one cluster frames them, named for both
ok "each node in one cluster; a fold is named in its base's cluster" \
    "grep -q 'label=\"F8 silu_mul + F22 silu_mul_linear\"' '$T/q.dot' && ! grep -q 'label=\"F22 ' '$T/q.dot' \
     && [ \$(awk '/subgraph cluster/ {c = 1; next} /^  }/ {c = 0} c && /^    n[0-9]+;/ {print \$1}' '$T/q.dot' | sort | uniq -d | wc -l) = 0 ]"
"$B" dot tests/models/qwen2_tiny/decode.json --after import -o "$T/i.dot" >/dev/null
ok "--after import has no fusions" "! grep -q cluster_f '$T/i.dot'"
"$B" dot tests/models/resnet18/model.json -o "$T/r.svg" >/dev/null
ok "svg rendered" "grep -q '<svg' '$T/r.svg'"
"$B" dot tests/models/convnet/model.json --color partition -o "$T/c.png" >/dev/null
ok "png rendered" "head -c 4 '$T/c.png' | grep -q PNG"
"$B" dot tests/models/mlp/model.json -o "$T/x.gif" >/dev/null 2>&1; rc=$?
ok "unknown extension is exit 2" "[ $rc = 2 ]"
