#!/usr/bin/env python3
"""PyTorch baseline for bench/h100.sh: runs an npu-explore IR JSON (the torch_to_ir exporter's
format) in PyTorch on the GPU, eager and as a CUDA graph, and prints medians as one JSON line.

The model is the fixture's own graph, node by node, through torch.ops.aten (so the architecture
is exactly the one our compiler sees), with random weights in the compute dtype. Float32 dtype
attributes of the exported graph (the exporter ran in fp32) are mapped to the compute dtype, so
the whole model runs in fp16 or bf16 as ours does.

  python3 bench/torch_ir.py MODEL.json --dtype fp16|bf16 [--pos P] [--iters N] [--label NAME]

--pos P: for decoder graphs (inputs input_ids, attention_mask, position_ids, cache_position and
KV caches): the cache position of the step (decode: the one new token's position; prefill: 0).
"""
import argparse
import json
import statistics
import sys
import time

import torch


def dtype_of(name, compute):
    return {"float32": compute, "float16": torch.float16, "bfloat16": torch.bfloat16,
            "int64": torch.int64, "int32": torch.int32, "bool": torch.bool}[name]


def attr_value(v, compute):
    if isinstance(v, str) and v.startswith("torch."):
        t = getattr(torch, v[len("torch."):], None)
        if isinstance(t, torch.dtype):
            return compute if t == torch.float32 else t
        return t
    return v


def op_of(op_type):
    parts = op_type.split(".")
    if parts[0] != "aten" or len(parts) != 3:
        raise SystemExit("unsupported op %s" % op_type)
    return getattr(getattr(torch.ops.aten, parts[1]), parts[2])


class Program:
    """The IR as a list of (op, arg builder, output names), resolved once."""

    def __init__(self, ir, compute, dev):
        self.ir, self.compute, self.dev = ir, compute, dev
        self.steps = []
        for n in ir["nodes"]:
            if n["op_type"].startswith("aten._assert"):
                continue
            op = op_of(n["op_type"])
            self.steps.append((op, self.plan_args(op, n), [o["name"] for o in n["outputs"]]))

    def plan_args(self, op, n):
        """Schema arguments in order: ('in', i) the i-th node input, ('list', i, k) k inputs from i,
        ('const', value), or None (default)."""
        attrs = n.get("attrs", {})
        sizes = list(attrs.get("_tensor_list_sizes", []))
        plan, nxt = [], 0
        for a in op._schema.arguments:
            ty = str(a.type)
            if a.name in attrs:
                v = attr_value(attrs[a.name], self.compute)
                if ty.startswith("Tensor") and not isinstance(v, torch.Tensor):
                    # a scalar for a Tensor argument ("other": 1e-6): made once, outside capture
                    dt = torch.int64 if isinstance(v, int) and not isinstance(v, bool) else self.compute
                    v = torch.tensor(v, dtype=dt, device=self.dev)
                plan.append(("const", v, a))
            elif ty.startswith(("List[Tensor]", "Tensor[]", "List[Optional[Tensor]]", "Tensor?[]")):
                k = sizes.pop(0) if sizes else len(n["inputs"]) - nxt
                plan.append(("list", nxt, k, a))
                nxt += k
            elif ty.startswith("Tensor") or ty.startswith("Optional[Tensor]"):
                if nxt < len(n["inputs"]):
                    plan.append(("in", nxt, a))
                    nxt += 1
                else:
                    plan.append(None)
            else:
                plan.append(None)
        names = [i["name"] for i in n["inputs"]]
        return plan, names

    def run(self, env):
        for op, (plan, names), outs in self.steps:
            args, kwargs, positional = [], {}, True
            for p, a in zip(plan, op._schema.arguments):
                if p is None:
                    positional = False
                    continue
                if p[0] == "in":
                    v = env[names[p[1]]]
                elif p[0] == "list":
                    v = [env[names[p[1] + j]] for j in range(p[2])]
                else:
                    v = p[1]
                if positional and not a.kwarg_only:
                    args.append(v)
                else:
                    kwargs[a.name] = v
            r = op(*args, **kwargs)
            if isinstance(r, (tuple, list)):
                for name, v in zip(outs, r):
                    env[name] = v
            elif outs:
                env[outs[0]] = r
        return [env[o["name"]] for o in self.ir["graph_outputs"]]


def make_weights(ir, compute, dev, gen):
    """Random weights by IR input name (through weight_name_mapping), kaiming-like scales."""
    shapes = {w["name"]: w for w in ir["weights"]}
    out = {}
    for iname, wname in ir["weight_name_mapping"].items():
        w = shapes[wname]
        shape, dt = w["shape"], dtype_of(w.get("dtype", "float32"), compute)
        if not dt.is_floating_point:
            out[iname] = torch.zeros(shape, dtype=dt, device=dev)
        elif "running_var" in wname:
            out[iname] = (0.5 + torch.rand(shape, generator=gen, device=dev)).to(dt)
        elif wname.endswith("norm.weight") or ("bn" in wname and wname.endswith("weight")):
            out[iname] = (1 + 0.1 * torch.randn(shape, generator=gen, device=dev)).to(dt)
        else:
            fan_in = 1
            for s in shape[1:]:
                fan_in *= s
            scale = (1.0 / max(fan_in, 1)) ** 0.5 if len(shape) > 1 else 0.02
            out[iname] = (scale * torch.randn(shape, generator=gen, device=dev)).to(dt)
    return out


def make_inputs(ir, compute, dev, gen, pos):
    env = {}
    for i in ir["graph_inputs"]:
        name, shape, dt = i["name"], i["shape"], dtype_of(i.get("dtype", "float32"), compute)
        if name == "input_ids":
            env[name] = torch.randint(0, 1000, shape, generator=gen, device=dev)
        elif name == "position_ids":
            s = shape[-1]
            env[name] = (pos + torch.arange(s, device=dev)).reshape(shape)
        elif name == "cache_position":
            env[name] = pos + torch.arange(shape[0], device=dev)
        elif name == "attention_mask":
            s, t = shape[-2], shape[-1]
            q = pos + torch.arange(s, device=dev).reshape(s, 1)
            k = torch.arange(t, device=dev).reshape(1, t)
            m = torch.zeros(s, t, dtype=dt, device=dev).masked_fill(k > q, float("-inf"))
            env[name] = m.expand(shape).contiguous()
        elif dt.is_floating_point:
            env[name] = torch.randn(shape, generator=gen, device=dev).to(dt)
        else:
            env[name] = torch.zeros(shape, dtype=dt, device=dev)
    return env


def timed(fn, iters):
    torch.cuda.synchronize()
    ms = []
    for _ in range(iters):
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        ms.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(ms)


def verify(path):
    """The interpreter against the fixture's PyTorch reference: real weights, fp32."""
    import os
    from safetensors.torch import load_file
    dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    ir = json.load(open(path))
    d = os.path.dirname(path)
    stem = os.path.splitext(os.path.basename(path))[0]
    io = os.path.join(d, stem + "_io.safetensors")
    io = io if os.path.exists(io) else os.path.join(d, "reference.safetensors")
    w = load_file(os.path.join(d, "weights.safetensors"), device=str(dev))
    ref = load_file(io, device=str(dev))
    env = {iname: w[wname].float() for iname, wname in ir["weight_name_mapping"].items()}
    for i in ir["graph_inputs"]:
        env[i["name"]] = ref[i["name"]]
    with torch.inference_mode():
        outs = Program(ir, torch.float32, dev).run(env)
    worst = 0.0
    for o, v in zip(ir["graph_outputs"], outs):
        if o["name"] in ref:
            r = ref[o["name"]].float()
            e = ((v.float() - r).norm() / r.norm().clamp_min(1e-30)).item()
            worst = max(worst, e)
            print("verify %s %s: rel_l2 %.3e" % (path, o["name"], e))
    print(json.dumps({"verify": path, "worst_rel_l2": worst}))
    return 0 if worst < 1e-4 else 1


def save_io(ir, w, x, low, out):
    """The drift run's weights (low dtype, by the IR's weight names) and inputs (float32 and
    int64, by graph input name) as DIR/weights.safetensors and DIR/inputs.safetensors, for
    `npu-explore run MODEL --weights ... --inputs ... --check` on exactly the same data."""
    import os
    from safetensors.torch import save_file
    os.makedirs(out, exist_ok=True)
    names = ir["weight_name_mapping"]
    save_file({names[k]: (v.to(low) if v.is_floating_point() else v).contiguous().cpu()
               for k, v in w.items()}, os.path.join(out, "weights.safetensors"))
    save_file({k: v.contiguous().cpu() for k, v in x.items()}, os.path.join(out, "inputs.safetensors"))


def drift(a):
    """PyTorch's own error from running in fp16/bf16 instead of fp32: the same weights and
    inputs (made in fp32, then cast), the fair yardstick for our error against the fp32 CPU
    reference."""
    low = torch.float16 if a.dtype == "fp16" else torch.bfloat16
    dev = torch.device("cuda")
    ir = json.load(open(a.model))
    outs = {}
    for dt in (torch.float32, low):
        gen = torch.Generator(device=dev)
        gen.manual_seed(1)
        w = make_weights(ir, torch.float32, dev, gen)
        x = make_inputs(ir, torch.float32, dev, gen, a.pos)
        if a.save_io:
            # the weights as stored in the low dtype for both runs, so the fp32 run is what our
            # CPU reference computes from the same file, and the drift is the arithmetic's alone
            w = {k: (v.to(low).float() if v.is_floating_point() else v) for k, v in w.items()}
            if dt == low:
                save_io(ir, w, x, low, a.save_io)
        env = {k: (v.to(dt) if v.is_floating_point() else v) for k, v in list(w.items()) + list(x.items())}
        with torch.inference_mode():
            outs[dt] = Program(ir, dt, dev).run(env)
    res = {}
    for o, hi, lo in zip(ir["graph_outputs"], outs[torch.float32], outs[low]):
        e = ((lo.float() - hi.float()).norm() / hi.float().norm().clamp_min(1e-30)).item()
        res[o["name"]] = e
    first = ir["graph_outputs"][0]["name"]
    print(json.dumps({"drift": a.label or a.model, "dtype": a.dtype, "pos": a.pos,
                      "first_output": first, "rel_l2": res[first], "worst_rel_l2": max(res.values())}))
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--dtype", choices=["fp16", "bf16"], default="fp16")
    ap.add_argument("--pos", type=int, default=0)
    ap.add_argument("--iters", type=int, default=50)
    ap.add_argument("--label", default="")
    ap.add_argument("--verify", action="store_true",
                    help="run once in fp32 with the real weights and inputs beside the model and "
                         "print the rel L2 error against the reference outputs (checks this script)")
    ap.add_argument("--save-io", default="",
                    help="with --drift: weights rounded to --dtype in both runs, and weights and "
                         "inputs written to DIR/{weights,inputs}.safetensors (ours on the same data)")
    ap.add_argument("--drift", action="store_true",
                    help="run the same random weights and inputs in fp32 and in --dtype, and print "
                         "the rel L2 of each output: PyTorch's own low-precision drift")
    a = ap.parse_args()
    if a.verify:
        return verify(a.model)
    if a.drift:
        return drift(a)
    compute = torch.float16 if a.dtype == "fp16" else torch.bfloat16
    dev = torch.device("cuda")
    ir = json.load(open(a.model))
    gen = torch.Generator(device=dev)
    gen.manual_seed(1)
    prog = Program(ir, compute, dev)
    weights = make_weights(ir, compute, dev, gen)
    inputs = make_inputs(ir, compute, dev, gen, a.pos)

    def step():
        env = dict(weights)
        env.update(inputs)
        return prog.run(env)

    with torch.inference_mode():
        for _ in range(3):
            step()
        eager = timed(step, a.iters)
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(3):
                step()
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            outs = step()
        graph = timed(g.replay, a.iters * 4)
        finite = all(torch.isfinite(o.float()).all().item() for o in outs)
    print(json.dumps({"label": a.label or a.model, "dtype": a.dtype, "pos": a.pos,
                      "nodes": len(prog.steps), "eager_ms": round(eager, 4),
                      "graph_ms": round(graph, 4), "outputs_finite": finite,
                      "gpu": torch.cuda.get_device_name(), "torch": torch.__version__}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
