#!/usr/bin/env python3
"""Reads bench/ab.sh's profiles of a conv.bm / conv.bn sweep (settings labelled "auto" and
"BMxBN") and prints per model each SIMT conv kernel (by its output tensor): its geometry (output
channels M, pixels N, K) from the plan's `describe --json` when OUTDIR/d_MODEL.json holds it, its
time under each tile, and the best; then the sums, automatic tiles against each kernel at its best
(what a per-kernel tune could reach; the minimum of noisy times leans low). Kernels are each
timed alone by profile, so per-kernel sums compare.
    python3 bench/conv_tiles.py OUTDIR MODEL_LABEL...
"""
import glob
import json
import os
import re
import sys

SKIP = ("_cm", "_dw", "_direct", "gemv", "_mv")  # conv kernels the SIMT tile does not shape


def load(path):
    ks = {}
    for line in open(path):
        o = json.loads(line)
        if o.get("kind") == "kernel" and o["kernel"].startswith("conv2d"):
            ks.setdefault(o["output"], []).append((o["kernel"], o["gpu_us"]))
    return ks


def geometry(path):
    """output tensor name -> (M, N, K) of its conv (from the kernel's tune key's shapes)."""
    geo = {}
    if not os.path.exists(path):
        return geo
    d = json.load(open(path))
    names = {t["id"]: t["name"] for t in d["tensors"]}
    for k in d["kernels"]:
        key = k.get("tune_key", "")
        if not key.startswith("conv2d"):
            continue
        shapes = [list(map(int, s.split(","))) for s in re.findall(r"\[([0-9,]+)\]", key)]
        if len(shapes) < 3:
            continue
        w, y = shapes[1], shapes[-1]
        m, n, kk = w[0], y[0] * y[2] * y[3], w[1] * w[2] * w[3]
        for o in k["outputs"]:
            geo[names[o]] = (m, n, kk)
    return geo


def main():
    out = sys.argv[1]
    for model in sys.argv[2:]:
        runs = {}
        for f in glob.glob(os.path.join(out, "p_%s.*.jsonl" % model)):
            runs[os.path.basename(f)[len("p_%s." % model):-len(".jsonl")]] = load(f)
        if "auto" not in runs:
            continue
        geo = geometry(os.path.join(out, "d_%s.json" % model))
        labels = ["auto"] + sorted(l for l in runs if l != "auto")
        print("## %s  (us per kernel: %s)" % (model, " ".join(labels)))
        tot_auto = tot_best = 0.0
        wins = {}
        for name, kern in runs["auto"].items():
            if any(x in k for k, _ in kern for x in SKIP):
                continue
            ts = [sum(t for _, t in runs[l][name]) if name in runs[l] else float("nan") for l in labels]
            best = min(range(len(labels)), key=lambda i: ts[i] if ts[i] == ts[i] else 1e30)
            tot_auto += ts[0]
            tot_best += ts[best]
            wins[labels[best]] = wins.get(labels[best], 0) + 1
            m, n, kk = geo.get(name, (0, 0, 0))
            print("  %-22s M %4d N %5d K %5d  %s  best %s" % (
                name[:22], m, n, kk, " ".join("%5.1f" % t for t in ts), labels[best]))
        print("  sum: auto %.1f us, per-kernel best %.1f us; wins %s" % (
            tot_auto, tot_best, " ".join("%s:%d" % kv for kv in sorted(wins.items()))))


if __name__ == "__main__":
    main()
