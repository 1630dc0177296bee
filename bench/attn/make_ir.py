#!/usr/bin/env python3
"""Writes IR graphs of C independent decode attentions with Qwen2.5-1.5B's shapes (q [1,12,1,128],
K/V caches [1,2,T,128] through repeat_kv, scale 1/sqrt(128), an additive mask [1,1,1,T]), the node
sequence of the exported decode step, for T = 128 and 1024: attn_T{T}_x{C}.json. C copies (28 =
the model's layers) each read their own caches, as the layers of a step do. `profile` of such a
graph (--random-weights 1 --dtype bf16: random q, caches and mask, every position valid) times
the attention kernels alone: gpu step / C per attention, or the timed per-kernel medians.
And the prefill's attention (pattern `attention`): q [1,12,128,128] over a cache of T = 1024
with the causal mask of an empty cache's 128-token prompt as a constant [1,1,128,1024] (row r
sees positions 0..r, as the exported prefill's mask): attn_prefill_T1024_q128_x{C}.json.
Usage: python3 bench/attn/make_ir.py [OUTDIR] (default: this directory)."""
import json, os, sys

B, HQ, HKV, D = 1, 12, 2, 128


def t(name, shape):
    return {"name": name, "shape": shape, "dtype": "float32"}


def graph(T, c, tq=1):
    rep = HQ // HKV
    cache, q, mask = [B, HKV, T, D], [B, HQ, tq, D], [1, 1, tq, T]
    u5, e5, r4 = [B, HKV, 1, T, D], [B, HKV, rep, T, D], [B, HQ, T, D]
    kt, sc = [B, HQ, D, T], [B, HQ, tq, T]
    # one query row: a random mask input; several: the causal mask as a constant
    ins, outs, nodes = [t("attention_mask", mask)] if tq == 1 else [], [], []

    def node(name, op, inputs, out, attrs):
        nodes.append({"name": name, "op_type": op, "inputs": inputs, "outputs": [out],
                      "attrs": attrs})

    for i in range(c):
        k, v, x = "k%d" % i, "v%d" % i, "q%d" % i
        ins += [t(k, cache), t(v, cache), t(x, q)]
        n = lambda s: "%s_%d" % (s, i)
        node(n("unsqueeze_k"), "aten.unsqueeze.default", [t(k, cache)], t(n("unsqueeze_k"), u5), {"dim": 2})
        node(n("expand_k"), "aten.expand.default", [t(n("unsqueeze_k"), u5)], t(n("expand_k"), e5), {"size": e5})
        node(n("reshape_k"), "aten.reshape.default", [t(n("expand_k"), e5)], t(n("reshape_k"), r4), {"shape": r4})
        node(n("unsqueeze_v"), "aten.unsqueeze.default", [t(v, cache)], t(n("unsqueeze_v"), u5), {"dim": 2})
        node(n("expand_v"), "aten.expand.default", [t(n("unsqueeze_v"), u5)], t(n("expand_v"), e5), {"size": e5})
        node(n("reshape_v"), "aten.reshape.default", [t(n("expand_v"), e5)], t(n("reshape_v"), r4), {"shape": r4})
        node(n("transpose"), "aten.transpose.int", [t(n("reshape_k"), r4)], t(n("transpose"), kt), {"dim0": 2, "dim1": 3})
        node(n("scores"), "aten.matmul.default", [t(x, q), t(n("transpose"), kt)], t(n("scores"), sc), {})
        node(n("scaled"), "aten.mul.Tensor", [t(n("scores"), sc)], t(n("scaled"), sc), {"other": D ** -0.5})
        node(n("masked"), "aten.add.Tensor", [t(n("scaled"), sc), t("attention_mask", mask)], t(n("masked"), sc), {})
        node(n("probs"), "aten.softmax.int", [t(n("masked"), sc)], t(n("probs"), sc), {"dim": -1, "dtype": "torch.float32"})
        node(n("out"), "aten.matmul.default", [t(n("probs"), sc), t(n("reshape_v"), r4)], t(n("out"), q), {})
        outs.append(t(n("out"), q))
    g = {"model_name": "attn_T%d_x%d" % (T, c) if tq == 1 else "attn_prefill_T%d_q%d_x%d" % (T, tq, c),
         "graph_inputs": ins, "graph_outputs": outs, "nodes": nodes}
    if tq > 1:
        g["constants"] = {"attention_mask": {"data": [0.0 if t_ <= r else float("-inf")
                                                      for r in range(tq) for t_ in range(T)]}}
    return g


if __name__ == "__main__":
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    for T in (128, 1024):
        for c in (1, 28):
            with open(os.path.join(out, "attn_T%d_x%d.json" % (T, c)), "w") as f:
                json.dump(graph(T, c), f)
    for c in (1, 28):
        with open(os.path.join(out, "attn_prefill_T1024_q128_x%d.json" % c), "w") as f:
            json.dump(graph(1024, c, 128), f)
