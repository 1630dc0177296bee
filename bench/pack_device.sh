#!/bin/bash
# Packs the release binary with every shared library it needs, the C library and its loader
# included, into .dev/ (ignored by git), so it runs on a GPU machine with no packages of ours:
#   .dev/npu-explore ARGS...   runs build/release/npu-explore through the packed loader.
# The Vulkan loader comes from the libvulkan1 .deb (unpacked there, see bench/README.md); the
# NVIDIA driver is the machine's own.
set -e
cd "$(dirname "$0")/.."
make -s MODE=release all
rm -rf .dev && mkdir -p .dev/lib
cp build/release/npu-explore .dev/npu-explore.bin
for lib in $(ldd build/release/npu-explore | awk '/=>/ {print $3} /ld-linux/ {print $1}'); do
    cp -L "$lib" .dev/lib/
done
cat > .dev/npu-explore <<'SH'
#!/bin/sh
here=$(dirname "$(readlink -f "$0")")
exec "$here/lib/ld-linux-x86-64.so.2" --library-path "$here/lib:/usr/lib/x86_64-linux-gnu:/lib/x86_64-linux-gnu" "$here/npu-explore.bin" "$@"
SH
chmod +x .dev/npu-explore
rm -f .dev/lib/libvulkan.so.1 # the machine's loader (from the .deb) finds the NVIDIA driver
du -sh .dev
