#!/usr/bin/env python3
"""Writes the IR of one linear layer, y = x W^T (x [M, K], W [N, K], no bias), for measuring one
tensor-core GEMM alone (bench/gemm_probe.sh). Standard library only:
    python3 bench/gemm_ir.py OUT.json M K N"""
import json, sys

out, m, k, n = sys.argv[1], *map(int, sys.argv[2:5])
t = lambda name, shape, **kw: dict(name=name, shape=shape, dtype="float32", **kw)
ir = {"model_name": "gemm_%dx%dx%d" % (m, k, n), "pytorch_version": "hand-written (bench/gemm_ir.py)",
      "graph_inputs": [t("x", [m, k])], "graph_outputs": [t("linear", [m, n])],
      "weights": [t("fc.weight", [n, k])], "weight_name_mapping": {"p_fc_weight": "fc.weight"},
      "nodes": [{"name": "linear", "op_type": "aten.linear.default",
                 "inputs": [t("x", [m, k], producer_node="x", producer_output_idx=0), t("p_fc_weight", [n, k])],
                 "outputs": [t("linear", [m, n])], "attrs": {}}]}
json.dump(ir, open(out, "w"), indent=1)
