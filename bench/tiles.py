#!/usr/bin/env python3
"""Reads bench/ab.sh's profiles of a tile sweep (settings labelled "auto" and one label per
forced tile) and prints per model each kernel instance of one family: its geometry from the
plan's `describe --json` when OUTDIR/d_MODEL.json holds it, its time under each setting, and the
best; then the sums, automatic tiles against each instance at its best (what a per-kernel tune
could reach; the minimum of noisy times leans low). Kernels are each timed alone by profile, so
per-kernel sums compare. An instance is the graph nodes it computes: a K split's two kernels
count together.
    python3 bench/tiles.py conv OUTDIR MODEL_LABEL...     the SIMT convs (conv.bm / conv.bn):
                                                          M output channels, N pixels, K
    python3 bench/tiles.py matmul OUTDIR MODEL_LABEL...   the matmuls (cm.tile): M rows, N, K
"""
import glob
import json
import os
import re
import sys
from math import prod

# per family: the kernels' stem, the stems it leaves out, and the geometry from a tune key's
# shapes (operand 0, operand 1, ..., output)
FAMILIES = {
    "conv": ("conv2d", ("_cm", "_dw", "_direct", "gemv", "_mv"),
             lambda s: (s[1][0], s[-1][0] * s[-1][2] * s[-1][3], s[1][1] * s[1][2] * s[1][3])),
    "matmul": ("matmul", ("gemv",), lambda s: (prod(s[-1][:-1]), s[-1][-1], s[0][-1])),
}


def load(path, stem):
    ks = {}
    for line in open(path):
        o = json.loads(line)
        if o.get("kind") == "kernel" and o["kernel"].startswith(stem):
            ks.setdefault(tuple(o["nodes"]), []).append((o["kernel"], o["gpu_us"]))
    return ks


def geometry(path, stem, geo_of):
    """an instance's nodes -> (M, N, K) from its kernel's tune key's shapes."""
    geo = {}
    if not os.path.exists(path):
        return geo
    for k in json.load(open(path))["kernels"]:
        key = k.get("tune_key") or ""
        if not key.startswith(stem):
            continue
        shapes = [list(map(int, s.split(","))) for s in re.findall(r"\[([0-9,]+)\]", key)]
        if len(shapes) >= 3:
            geo[tuple(k["provenance"])] = geo_of(shapes)
    return geo


def main():
    stem, skip, geo_of = FAMILIES[sys.argv[1]]
    out = sys.argv[2]
    for model in sys.argv[3:]:
        runs = {}
        for f in glob.glob(os.path.join(out, "p_%s.*.jsonl" % model)):
            runs[os.path.basename(f)[len("p_%s." % model):-len(".jsonl")]] = load(f, stem)
        if "auto" not in runs:
            continue
        geo = geometry(os.path.join(out, "d_%s.json" % model), stem, geo_of)
        labels = ["auto"] + sorted(l for l in runs if l != "auto")
        print("## %s  (us per instance: %s)" % (model, " ".join(labels)))
        tot_auto = tot_best = 0.0
        wins = {}
        for nodes, kern in runs["auto"].items():
            if any(x in k for k, _ in kern for x in skip):
                continue
            ts = [sum(t for _, t in runs[l][nodes]) if nodes in runs[l] else float("nan")
                  for l in labels]
            best = min(range(len(labels)), key=lambda i: ts[i] if ts[i] == ts[i] else 1e30)
            tot_auto += ts[0]
            tot_best += ts[best]
            wins[labels[best]] = wins.get(labels[best], 0) + 1
            m, n, kk = geo.get(nodes, (0, 0, 0))
            print("  %-22s M %5d N %5d K %5d  %s  best %s  %s" % (
                nodes[-1][:22], m, n, kk, " ".join("%6.1f" % t for t in ts), labels[best],
                "+".join(k for k, _ in kern)))
        print("  sum: auto %.1f us, per-instance best %.1f us; wins %s" % (
            tot_auto, tot_best, " ".join("%s:%d" % kv for kv in sorted(wins.items()))))


if __name__ == "__main__":
    main()
