#!/bin/sh
# `make run`: open the explorer on a bundled model; without a terminal, print the batch report.
bin=${1:-build/release/npu-explore}
model=${NPU_MODEL:-tests/models/resnet18/model.json}
if [ -t 0 ] && [ -t 1 ] && "$bin" --help 2>/dev/null | grep -q 'interactive explorer' && "$bin" --has-tui 2>/dev/null; then
    exec "$bin" "$model"
fi
echo "npu-explore: no terminal (or no explorer in this build): printing the batch report for $model" >&2
exec "$bin" --batch "$model"
