#!/usr/bin/env python3
"""Exports ATen conformance cases from PyTorch's own OpInfo sample inputs (issue #23): for every
entry of torch.testing._internal.common_methods_invocations.op_db, its float32 CPU samples are
traced one call a graph through the torch_to_ir exporter; a case is kept when the exported graph
holds exactly one ATen call (besides getitem and metadata asserts) whose name is in NAMES_FILE.
Runs where PyTorch is (the GPU machine):

    PYTHONPATH=.exporter python3 tests/models/export_opinfo.py NAMES_FILE OUTDIR [PER_OP]

Every sample tensor (input, tensor args, tensors inside list args) becomes a graph input, so no
case has weights. OUTDIR/cases.json lists the cases: {"name", "op", "opinfo", "inputs",
"outputs"}; OUTDIR/cases.safetensors holds, per case, "<name>.<graph input or output name>", the
outputs computed by PyTorch on the CPU in float32; OUTDIR/NAME.json is the case's IR. At most
PER_OP (default 6) cases per ATen name, the first samples in op_db's order, and no case whose
tensors exceed 4096 elements (a conformance case proves semantics, not size).
"""
import json
import os
import sys
import types
import unittest

# The OpInfo helpers import expecttest, which is not installed where this runs: a stand-in
# module with the one class they subclass is enough for sample generation.
if "expecttest" not in sys.modules:
    try:
        import expecttest  # noqa: F401
    except ImportError:
        m = types.ModuleType("expecttest")
        m.TestCase = unittest.TestCase
        sys.modules["expecttest"] = m

import torch
import torch.nn as nn
from safetensors.torch import save_file
from torch.testing._internal.common_methods_invocations import op_db

from torch_ir import extract_ir

NAMES = {l.strip() for l in open(sys.argv[1]) if l.strip()}
OUT = sys.argv[2]
PER_OP = int(sys.argv[3]) if len(sys.argv) > 3 else 6
IGNORE = {"<built-in function getitem>", "aten._assert_tensor_metadata.default"}
MAX_ELEMS = 4096


def split_tensors(x, ts):
    """x with every tensor replaced by its index in ts (appended)."""
    if isinstance(x, torch.Tensor):
        ts.append(x)
        return ("__t", len(ts) - 1)
    if isinstance(x, (list, tuple)):
        return type(x)(split_tensors(e, ts) for e in x)
    if isinstance(x, dict):
        return {k: split_tensors(v, ts) for k, v in x.items()}
    return x


def join_tensors(x, ts):
    if isinstance(x, tuple) and len(x) == 2 and x[0] == "__t":
        return ts[x[1]]
    if isinstance(x, (list, tuple)):
        return type(x)(join_tensors(e, ts) for e in x)
    if isinstance(x, dict):
        return {k: join_tensors(v, ts) for k, v in x.items()}
    return x


class Call(nn.Module):
    def __init__(self, fn, spec):
        super().__init__()
        self.fn, self.spec = fn, spec

    def forward(self, *ts):
        inp, args, kwargs = join_tensors(self.spec, list(ts))
        return self.fn(inp, *args, **kwargs)


def flat(y):
    if isinstance(y, torch.Tensor):
        return [y]
    if isinstance(y, (list, tuple)):
        return [t for e in y for t in flat(e)]
    return []


def main():
    os.makedirs(OUT, exist_ok=True)
    cases, tensors, count, seen = [], {}, {}, set()
    for info in op_db:
        try:
            samples = list(info.sample_inputs("cpu", torch.float32, requires_grad=False))
        except Exception:  # noqa: BLE001
            continue
        for k, s in enumerate(samples[:24]):
            ts = []
            spec = split_tensors((s.input, tuple(s.args), dict(s.kwargs)), ts)
            if not ts or any(t.numel() > MAX_ELEMS for t in ts):
                continue
            if any(t.layout != torch.strided or t.dtype not in (torch.float32, torch.int64,
                                                                 torch.int32, torch.bool)
                   for t in ts):
                continue
            ts = [t.contiguous() for t in ts]
            m = Call(info.op, spec)
            try:
                with torch.no_grad():
                    y = flat(m(*[t.clone() for t in ts]))
                    ir = extract_ir(m, tuple(t.clone() for t in ts), model_name=info.name,
                                    strict=False)
            except Exception:  # noqa: BLE001
                continue
            calls = [n.op_type for n in ir.nodes if n.op_type not in IGNORE]
            if len(calls) != 1 or calls[0] not in NAMES:
                continue
            op = calls[0]
            if count.get(op, 0) >= PER_OP or not y or len(y) != len(ir.graph_outputs):
                continue
            if any(t.numel() > MAX_ELEMS or t.dtype in (torch.complex64, torch.float64) for t in y):
                continue
            key = (op, json.dumps([list(t.shape) for t in ts]), repr(s.args)[:200],
                   repr(s.kwargs)[:200])
            if key in seen:
                continue
            seen.add(key)
            count[op] = count.get(op, 0) + 1
            name = "%s__%s__%d" % (op.replace("aten.", "").replace(".", "_"),
                                   info.name.replace(".", "_"), k)
            d = ir.to_dict()
            with open(os.path.join(OUT, name + ".json"), "w") as f:
                json.dump(d, f, indent=1, default=str)
            for meta, t in zip(ir.graph_inputs, ts):
                tensors[name + "." + meta.name] = t.detach().clone().contiguous()
            for meta, t in zip(ir.graph_outputs, y):
                tensors[name + "." + meta.name] = t.detach().clone().contiguous()
            cases.append({"name": name, "op": op, "opinfo": info.name,
                          "inputs": [g.name for g in ir.graph_inputs],
                          "outputs": [g.name for g in ir.graph_outputs]})
            print(name, flush=True)
    save_file(tensors, os.path.join(OUT, "cases.safetensors"))
    with open(os.path.join(OUT, "cases.json"), "w") as f:
        json.dump({"torch": torch.__version__, "cases": cases,
                   "per_op": count, "names_without_cases": sorted(NAMES - set(count))}, f, indent=1)
    print(len(cases), "cases,", len(count), "ops;", len(NAMES - set(count)), "names without cases")


if __name__ == "__main__":
    main()
