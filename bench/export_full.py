#!/usr/bin/env python3
"""Exports full-size torchvision models' IR (no weights: ours and bench/torch_ir.py bind random
ones) for the untuned-model measurements of bench/NOTES.md. On the GPU machine:
    PYTHONPATH=.exporter python3 bench/export_full.py OUT densenet121 [more builder names]"""
import json, os, sys

# bench/torch_ir.py would shadow the exporter's torch_ir package
sys.path = [p for p in sys.path if os.path.abspath(p or '.') != os.path.dirname(os.path.abspath(__file__))]
import torch, torchvision
from torch_ir import extract_ir

out = sys.argv[1]
for name in sys.argv[2:]:
    m = getattr(torchvision.models, name)().eval()
    with torch.no_grad():
        ir = extract_ir(m, (torch.randn(1, 3, 224, 224),), model_name=name, strict=False)
    os.makedirs(os.path.join(out, name), exist_ok=True)
    with open(os.path.join(out, name, "model.json"), "w") as f:
        json.dump(ir.to_dict(), f, default=str)
    print(name, len(ir.nodes), "nodes")
