#!/usr/bin/env python3
"""Writes hand-made IR graphs, in the torch_to_ir exporter's JSON format, for model patterns
nobody here tuned for (issue #5): tests/models/mobilenet_block/model.json (MobileNetV3-like:
depthwise conv, hardswish/hardsigmoid/relu6, squeeze-excite broadcast multiply, ceil_mode pools)
and tests/models/gpt_block/model.json (GPT-2-like decoder layer: layer_norm, HF Conv1D addmm,
q/k/v from split(c_attn, C, dim=2) with getitems as torch.export writes them, in-graph causal mask from arange/comparison, positions from a cumsum of ones, tanh gelu, tied
lm_head). No PyTorch here, so these were written by hand the way the exporter writes them: node
and tensor names as torch.export names them, attributes equal to ATen defaults omitted, scalar
operands as attributes, weights by state_dict key with placeholder names p_*/b_*. There are no
weight or reference files: tests bind seeded random weights (--random-weights) and compare the
Vulkan backend with the CPU reference. Standard library only; run from anywhere:
    python3 tests/models/gen_untuned.py
"""
import json
import math
import os

HERE = os.path.dirname(os.path.abspath(__file__))


class Graph:
    def __init__(self, name):
        self.name = name
        self.inputs, self.outputs, self.nodes, self.weights = [], [], [], []
        self.mapping = {}
        self.counts = {}

    @staticmethod
    def ref(t):
        r = {"name": t["name"], "shape": t["shape"], "dtype": t["dtype"]}
        if t.get("producer"):
            r["producer_node"] = t["producer"]
            r["producer_output_idx"] = t.get("idx", 0)
        return r

    def input(self, name, shape, dtype="float32"):
        self.inputs.append({"name": name, "shape": shape, "dtype": dtype})
        return {"name": name, "shape": shape, "dtype": dtype, "producer": name}

    def param(self, key, shape, buffer=False):
        ph = ("b_" if buffer else "p_") + key.replace(".", "_")
        self.weights.append({"name": key, "shape": shape, "dtype": "float32"})
        self.mapping[ph] = key
        return {"name": ph, "shape": shape, "dtype": "float32"}

    def node(self, op, ins, shape, attrs=None, dtype="float32", base=None):
        base = base or op.split(".")[1].rstrip("_")  # torch.export names nodes by op
        k = self.counts.get(base, 0)
        self.counts[base] = k + 1
        name = base if k == 0 else "%s_%d" % (base, k)
        self.nodes.append({"name": name, "op_type": op, "inputs": [self.ref(t) for t in ins],
                           "outputs": [{"name": name, "shape": shape, "dtype": dtype}],
                           "attrs": attrs or {}})
        return {"name": name, "shape": shape, "dtype": dtype, "producer": name}

    def split(self, x, size, dim):
        """aten.split.Tensor as torch.export writes it: one node whose outputs are the chunks
        (split_0, split_1, ...), then one getitem per chunk that lists every chunk as its inputs
        (producer_output_idx) and picks one by `index`."""
        k = self.counts.get("split", 0)
        self.counts["split"] = k + 1
        name = "split" if k == 0 else "split_%d" % k
        n = -(-x["shape"][dim] // size)
        chunks = []
        for i in range(n):
            shape = list(x["shape"])
            shape[dim] = min(size, x["shape"][dim] - i * size)
            chunks.append({"name": "%s_%d" % (name, i), "shape": shape, "dtype": x["dtype"],
                           "producer": name, "idx": i})
        self.nodes.append({"name": name, "op_type": "aten.split.Tensor", "inputs": [self.ref(x)],
                           "outputs": [{"name": c["name"], "shape": c["shape"], "dtype": c["dtype"]}
                                       for c in chunks],
                           "attrs": {"split_size": size, "dim": dim}})
        return [self.node("<built-in function getitem>", chunks, c["shape"], {"index": i},
                          dtype=c["dtype"], base="getitem") for i, c in enumerate(chunks)]

    def output(self, t):
        self.outputs.append({"name": t["name"], "shape": t["shape"], "dtype": t["dtype"]})

    def write(self, path):
        d = {"model_name": self.name, "pytorch_version": "hand-written (gen_untuned.py)",
             "graph_inputs": self.inputs, "graph_outputs": self.outputs,
             "weights": self.weights, "weight_name_mapping": self.mapping, "nodes": self.nodes}
        with open(path, "w") as f:
            json.dump(d, f, indent=1)
            f.write("\n")


def conv_out(n, k, s, p, d=1):
    return (n + 2 * p - d * (k - 1) - 1) // s + 1


def pool_out(n, k, s, p, ceil):
    """ATen's pooling_output_shape: with ceil_mode the last window must start inside the input
    or its left padding."""
    num = n + 2 * p - (k - 1) - 1 + (s - 1 if ceil else 0)
    o = num // s + 1
    if ceil and (o - 1) * s >= n + p:
        o -= 1
    return o


# ---------------------------------------------------------------------------------------------
def mobilenet_block():
    g = Graph("mobilenet_block")
    N = 2
    x = g.input("x", [N, 3, 33, 33])

    def conv(x, key, cout, k, s=1, p=0, groups=1, bias=False):
        cin, h, w = x["shape"][1], x["shape"][2], x["shape"][3]
        ins = [x, g.param(key + ".weight", [cout, cin // groups, k, k])]
        if bias:
            ins.append(g.param(key + ".bias", [cout]))
        attrs = {}
        if s != 1:
            attrs["stride"] = [s, s]
        if p != 0:
            attrs["padding"] = [p, p]
        if groups != 1:
            attrs["groups"] = groups
        return g.node("aten.conv2d.default", ins,
                      [x["shape"][0], cout, conv_out(h, k, s, p), conv_out(w, k, s, p)], attrs)

    def bn(x, key):
        c = x["shape"][1]
        ins = [x, g.param(key + ".weight", [c]), g.param(key + ".bias", [c]),
               g.param(key + ".running_mean", [c], True), g.param(key + ".running_var", [c], True)]
        # num_batches_tracked is a buffer of the state_dict but no input of the graph
        g.mapping["b_" + key.replace(".", "_") + "_num_batches_tracked"] = key + ".num_batches_tracked"
        return g.node("aten.batch_norm.default", ins, x["shape"],
                      {"training": False, "momentum": 0.01, "eps": 0.001, "cudnn_enabled": False})

    def act(x, op, attrs=None):
        return g.node(op, [x], x["shape"], attrs)

    # stem: conv 3x3 stride 2 + BN + hardswish (33 -> 17)
    y = act(bn(conv(x, "features.0.0", 16, 3, 2, 1), "features.0.1"), "aten.hardswish.default")
    # inverted residual, expand 16 -> 40
    r = y
    y = act(bn(conv(y, "features.1.block.0.0", 40, 1), "features.1.block.0.1"),
            "aten.hardtanh.default", {"min_val": 0.0, "max_val": 6.0})  # ReLU6 as exported
    y = act(bn(conv(y, "features.1.block.1.0", 40, 3, 1, 1, groups=40), "features.1.block.1.1"),
            "aten.hardswish.default")
    # squeeze-excite (torchvision SqueezeExcitation: scale * input)
    s = g.node("aten.adaptive_avg_pool2d.default", [y], [N, 40, 1, 1], {"output_size": [1, 1]})
    s = act(conv(s, "features.1.block.2.fc1", 16, 1, bias=True), "aten.relu.default")
    s = act(conv(s, "features.1.block.2.fc2", 40, 1, bias=True), "aten.hardsigmoid.default")
    y = g.node("aten.mul.Tensor", [s, y], y["shape"])
    y = bn(conv(y, "features.1.block.3.0", 16, 1), "features.1.block.3.1")
    y = g.node("aten.add.Tensor", [y, r], y["shape"])
    # max pool 2x2/2 with ceil_mode: 17 -> 9 (8 without ceil_mode)
    h = y["shape"][2]
    assert pool_out(h, 2, 2, 0, True) != pool_out(h, 2, 2, 0, False)
    o = pool_out(h, 2, 2, 0, True)
    y = g.node("aten.max_pool2d.default", [y], [N, 16, o, o],
               {"kernel_size": [2, 2], "stride": [2, 2], "ceil_mode": True})
    y = act(bn(conv(y, "features.2.0", 24, 3, 1, 1), "features.2.1"), "aten.hardswish.default")
    # avg pool 3x3/3 pad 1, ceil_mode, count_include_pad=False: 9 -> 4 (3 without ceil_mode);
    # the first windows overlap the padding, the last one runs past the input
    h = y["shape"][2]
    assert pool_out(h, 3, 3, 1, True) != pool_out(h, 3, 3, 1, False)
    o = pool_out(h, 3, 3, 1, True)
    y = g.node("aten.avg_pool2d.default", [y], [N, 24, o, o],
               {"kernel_size": [3, 3], "stride": [3, 3], "padding": [1, 1], "ceil_mode": True,
                "count_include_pad": False})
    y = g.node("aten.adaptive_avg_pool2d.default", [y], [N, 24, 1, 1], {"output_size": [1, 1]})
    y = g.node("aten.flatten.using_ints", [y], [N, 24], {"start_dim": 1})
    y = g.node("aten.linear.default", [y, g.param("classifier.weight", [10, 24]),
                                       g.param("classifier.bias", [10])], [N, 10])
    g.output(y)
    return g


# ---------------------------------------------------------------------------------------------
def gpt_block():
    g = Graph("gpt_block")
    S, C, H, V, P = 10, 48, 4, 300, 64
    D = C // H
    F, I64, B = "float32", "int64", "bool"
    ids = g.input("input_ids", [1, S], I64)
    wte = g.param("transformer.wte.weight", [V, C])
    # position ids from a cumsum of ones (what HF does from an attention mask): cumsum - 1
    ones = g.node("aten.ones.default", [], [1, S], {"size": [1, S], "dtype": "torch.int64",
                                                    "device": "cpu", "pin_memory": False}, I64)
    cs = g.node("aten.cumsum.default", [ones], [1, S], {"dim": -1}, I64)
    pos = g.node("aten.sub.Tensor", [cs], [1, S], {"other": 1}, I64)
    x = g.node("aten.embedding.default", [wte, ids], [1, S, C])
    pe = g.node("aten.embedding.default", [g.param("transformer.wpe.weight", [P, C]), pos], [1, S, C])
    x = g.node("aten.add.Tensor", [x, pe], [1, S, C])

    def ln(x, key):
        return g.node("aten.layer_norm.default", [x, g.param(key + ".weight", [C]),
                                                  g.param(key + ".bias", [C])], x["shape"],
                      {"normalized_shape": [C], "eps": 1e-05})

    def conv1d(x, key, nx, nf, view_size):
        """HF Conv1D: addmm(bias, x.view(-1, nx), weight[nx, nf]).view(size_out)"""
        v = g.node("aten.view.default", [x], [S, nx], {"size": view_size})
        y = g.node("aten.addmm.default", [g.param(key + ".bias", [nf]), v,
                                          g.param(key + ".weight", [nx, nf])], [S, nf])
        return g.node("aten.view.default", [y], [1, S, nf], {"size": [1, S, nf]})

    r = x
    h = ln(x, "transformer.h.0.ln_1")
    qkv = conv1d(h, "transformer.h.0.attn.c_attn", C, 3 * C, [-1, C])

    # HF GPT-2: query, key, value = self.c_attn(hidden_states).split(self.split_size, dim=2)
    chunks = g.split(qkv, C, 2)

    def head(t):
        t = g.node("aten.view.default", [t], [1, S, H, D], {"size": [1, S, H, D]})
        return g.node("aten.permute.default", [t], [1, H, S, D], {"dims": [0, 2, 1, 3]})

    q, k, v = (head(t) for t in chunks)
    kt = g.node("aten.transpose.int", [k], [1, H, D, S], {"dim0": -1, "dim1": -2})
    a = g.node("aten.matmul.default", [q, kt], [1, H, S, S])
    a = g.node("aten.div.Tensor", [a], [1, H, S, S], {"other": math.sqrt(D)})
    # causal mask built in the graph: key index j <= query index i
    ar = g.node("aten.arange.default", [], [S], {"end": S, "device": "cpu", "pin_memory": False}, I64)
    ar1 = g.node("aten.arange.start", [], [S], {"start": 0, "end": S, "dtype": "torch.int64",
                                                "device": "cpu", "pin_memory": False}, I64)
    j = g.node("aten.unsqueeze.default", [ar], [1, S], {"dim": 0}, I64)
    i = g.node("aten.unsqueeze.default", [ar1], [S, 1], {"dim": 1}, I64)
    m = g.node("aten.le.Tensor", [j, i], [S, S], {}, B)
    m = g.node("aten.view.default", [m], [1, 1, S, S], {"size": [1, 1, S, S]}, B)
    # GPT-2's torch.where(causal_mask, attn_weights, mask_value), mask_value a 0-d full of finfo.min
    mv = g.node("aten.full.default", [], [], {"size": [], "fill_value": -3.4028234663852886e+38,
                                              "dtype": "torch.float32", "device": "cpu",
                                              "pin_memory": False})
    a = g.node("aten.where.self", [m, a, mv], [1, H, S, S])
    # and the masked_fill(-inf) form other decoders use, on the same mask (a no-op on values)
    nm = g.node("aten.logical_not.default", [m], [1, 1, S, S], {}, B)
    a = g.node("aten.masked_fill.Scalar", [a, nm], [1, H, S, S], {"value": float("-inf")})
    a = g.node("aten.softmax.int", [a], [1, H, S, S], {"dim": -1})
    o = g.node("aten.matmul.default", [a, v], [1, H, S, D])
    o = g.node("aten.transpose.int", [o], [1, S, H, D], {"dim0": 1, "dim1": 2})
    o = g.node("aten.contiguous.default", [o], [1, S, H, D])
    o = g.node("aten.view.default", [o], [1, S, C], {"size": [1, S, C]})
    o = conv1d(o, "transformer.h.0.attn.c_proj", C, C, [-1, C])
    x = g.node("aten.add.Tensor", [o, r], [1, S, C])
    r = x
    h = ln(x, "transformer.h.0.ln_2")
    h = conv1d(h, "transformer.h.0.mlp.c_fc", C, 4 * C, [-1, C])
    h = g.node("aten.gelu.default", [h], [1, S, 4 * C], {"approximate": "tanh"})
    h = conv1d(h, "transformer.h.0.mlp.c_proj", 4 * C, C, [-1, 4 * C])
    x = g.node("aten.add.Tensor", [h, r], [1, S, C])
    x = ln(x, "transformer.ln_f")
    # tied lm_head: the same placeholder as the token embedding, no bias
    y = g.node("aten.linear.default", [x, wte], [1, S, V])
    g.output(y)
    return g


def gemm_block():
    """The tensor-core matmul's epilogues at shapes no tile divides (M 200, K 264, N 704 and
    392): a GLU MLP (gate, silu, up, mul, down) with a residual, then a linear with bias and
    gelu and one with bias and a residual, as a transformers model writes them."""
    g = Graph("gemm_block")
    B, S, C, F, H = 2, 100, 264, 704, 392
    x = g.input("x", [B, S, C])

    def linear(x, key, n, bias=False):
        ins = [x, g.param(key + ".weight", [n, x["shape"][-1]])]
        if bias:
            ins.append(g.param(key + ".bias", [n]))
        return g.node("aten.linear.default", ins, x["shape"][:-1] + [n])

    gate = g.node("aten.silu.default", [linear(x, "mlp.gate_proj", F)], [B, S, F])
    h = g.node("aten.mul.Tensor", [gate, linear(x, "mlp.up_proj", F)], [B, S, F])
    r = g.node("aten.add.Tensor", [linear(h, "mlp.down_proj", C), x], [B, S, C])
    f = g.node("aten.gelu.default", [linear(r, "fc.0", H, True)], [B, S, H])
    y = g.node("aten.add.Tensor", [linear(f, "fc.2", C, True), r], [B, S, C])
    g.output(y)
    return g


if __name__ == "__main__":
    for folder, build in (("mobilenet_block", mobilenet_block), ("gpt_block", gpt_block),
                          ("gemm_block", gemm_block)):
        os.makedirs(os.path.join(HERE, folder), exist_ok=True)
        build().write(os.path.join(HERE, folder, "model.json"))
        print("wrote", os.path.join(folder, "model.json"))
