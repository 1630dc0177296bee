#!/usr/bin/env python3
"""Writes IR graphs of C independent linears (M = 1, no bias, one shared input x, C distinct
weights) for each Qwen2.5-1.5B decode GEMV shape, C chosen so the weights (bf16) pass ~200 MB:
more than the H100's 50 MB L2, so every kernel streams its weights from memory as in a decode
step. `profile` of such a graph: gpu step / C = one kernel's streaming time (the untimed run,
no per-kernel barrier: the kernels overlap their ramps and tails); the timed per-kernel medians
carry the profiling floor (barrier + timestamp per kernel). C = 1 for lm_head.
Usage: python3 bench/gemv/make_ir.py [OUTDIR] (default: this directory)."""
import json, os, sys

SHAPES = {  # name: (N, K)
    "q_1536x1536": (1536, 1536),
    "kv_256x1536": (256, 1536),
    "qkv_2048x1536": (2048, 1536),
    "gate_8960x1536": (8960, 1536),
    "gateup_17920x1536": (17920, 1536),
    "down_1536x8960": (1536, 8960),
    "lmhead_151936x1536": (151936, 1536),
}


def copies(n, k):
    return max(1, min(128, -(-200_000_000 // (2 * n * k))))


def graph(name, n, k, c):
    x = {"name": "x", "shape": [1, 1, k], "dtype": "float32"}
    nodes, outs, weights, mapping = [], [], [], {}
    for i in range(c):
        w = {"name": "p_w%d" % i, "shape": [n, k], "dtype": "float32"}
        y = {"name": "linear_%d" % i, "shape": [1, 1, n], "dtype": "float32"}
        nodes.append({
            "name": y["name"], "op_type": "aten.linear.default",
            "inputs": [dict(x, producer_node="x", producer_output_idx=0), w],
            "outputs": [y], "attrs": {},
        })
        outs.append(y)
        weights.append({"name": "w%d" % i, "shape": [n, k], "dtype": "float32"})
        mapping[w["name"]] = "w%d" % i
    return {
        "model_name": "gemv_%s_x%d" % (name, c),
        "pytorch_version": "2.11.0",
        "graph_inputs": [x],
        "graph_outputs": outs,
        "weights": weights,
        "weight_name_mapping": mapping,
        "nodes": nodes,
    }


# lm_head four times (1.9 GB): whether a kernel slows down when more weights stream per run
EXTRA = [("lmhead_151936x1536", 4)]

out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
jobs = [(name, copies(n, k)) for name, (n, k) in SHAPES.items()] + EXTRA
for name, c in jobs:
    n, k = SHAPES[name]
    with open(os.path.join(out, "%s_x%d.json" % (name, c)), "w") as f:
        json.dump(graph(name, n, k, c), f)
