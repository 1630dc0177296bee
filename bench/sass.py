#!/usr/bin/env python3
"""Carves NVIDIA cubins (ELF) out of pipeline-cache files and disassembles them, so a kernel's
SASS can be read: what the driver made of a shader (issue 26: what a tensor-core K step issues).

usage: bench/sass.py OUTDIR FILE...   (FILE: our pipelines.bin, the driver's GLCache files)
Writes OUTDIR/elf_N.cubin and OUTDIR/elf_N.sass (cuobjdump -sass, else nvdisasm), and prints one
line per cubin: size, instruction counts of interest. Run on the GPU machine (CUDA's tools there).
"""
import os
import re
import shutil
import struct
import subprocess
import sys


def carve(blob):
    """Yields (offset, bytes) of each ELF64 in blob (its size from the section header table)."""
    i = blob.find(b"\x7fELF")
    while i >= 0:
        if i + 64 <= len(blob) and blob[i + 4] == 2:
            shoff, = struct.unpack_from("<Q", blob, i + 0x28)
            shentsize, shnum = struct.unpack_from("<HH", blob, i + 0x3A)
            end = i + shoff + shentsize * shnum
            if 0 < shoff and end <= len(blob) and shentsize == 64:
                yield i, blob[i:end]
        i = blob.find(b"\x7fELF", i + 4)


def disasm(path):
    for tool in ("cuobjdump", "nvdisasm"):
        exe = shutil.which(tool) or next((p for p in ("/usr/local/cuda/bin/" + tool,
                                                       "/usr/local/cuda-13.0/bin/" + tool)
                                          if os.path.exists(p)), None)
        if not exe:
            continue
        args = [exe, "-sass", path] if tool == "cuobjdump" else [exe, "-c", path]
        r = subprocess.run(args, capture_output=True, text=True)
        if r.returncode == 0 and r.stdout.strip():
            return r.stdout
    return ""


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    n = 0
    for f in sys.argv[2:]:
        try:
            blob = open(f, "rb").read()
        except OSError:
            continue
        for off, elf in carve(blob):
            base = os.path.join(out, "elf_%d" % n)
            open(base + ".cubin", "wb").write(elf)
            sass = disasm(base + ".cubin")
            open(base + ".sass", "w").write(sass)
            ops = re.findall(r"^\s+/\*[0-9a-f]+\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)", sass, re.M)
            count = {}
            for o in ops:
                k = o.split(".")[0]
                count[k] = count.get(k, 0) + 1
            top = " ".join("%s:%d" % kv for kv in sorted(count.items(), key=lambda kv: -kv[1])[:12])
            print("elf_%d from %s @%d: %d bytes, %d instructions; %s" % (n, os.path.basename(f), off,
                                                                       len(elf), len(ops), top))
            n += 1
    print("%d cubins" % n)


if __name__ == "__main__":
    sys.exit(main())
