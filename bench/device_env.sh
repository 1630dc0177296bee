#!/bin/bash
# First thing on a GPU machine: unpack the Vulkan loader, show the machine, and prove the packed
# binary (.dev, bench/pack_device.sh) reaches the GPU. Usage on the device: bash bench/device_env.sh
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
uname -a; grep PRETTY /etc/os-release; ldd --version | head -1
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
T=$(mktemp -d)
cat > "$T/u.json" <<'J'
{"model_name":"relu","graph_inputs":[{"name":"x","shape":[3,1000]}],"graph_outputs":[{"name":"o","shape":[3,1000]}],"nodes":[{"name":"r","op_type":"aten.gelu.default","inputs":[{"name":"x","shape":[3,1000]}],"outputs":[{"name":"o","shape":[3,1000]}],"attrs":{}}]}
J
.dev/npu-explore run "$T/u.json" -o "$T/v.safetensors" && .dev/npu-explore run "$T/u.json" --backend cpu -o "$T/c.safetensors" && python3 - "$T" <<'P'
import sys, numpy as np
from safetensors.numpy import load_file
v = load_file(sys.argv[1] + "/v.safetensors")["o"]; c = load_file(sys.argv[1] + "/c.safetensors")["o"]
print("gelu on the GPU vs the CPU reference: rel_l2 %.3e" % (np.linalg.norm(v - c) / np.linalg.norm(c)))
P
.dev/npu-explore profile "$T/u.json" --iters 5
