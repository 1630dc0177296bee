#!/bin/bash
# Packs the release binary with the shared libraries it needs into .dev/ (ignored by git), so it
# runs on a GPU machine with none of our packages:  .dev/npu-explore ARGS...
# The machine's own C library is used (its NVIDIA Vulkan driver fails to load under the one we
# build with: measured on the H100 image, Ubuntu 24.04, glibc 2.39 >= our 2.36). The Vulkan loader
# and glvnd come from Debian .debs unpacked there (.gl, bench/device_env.sh).
set -e
cd "$(dirname "$0")/.."
make -s MODE=release all
rm -rf .dev && mkdir -p .dev/lib
cp build/release/npu-explore .dev/npu-explore.bin
# the Vulkan conformance tests too, when built (make MODE=release build/release/tests/test_vk_*;
# test_constfold checks folded constants on Vulkan as well)
mkdir -p .dev/tests
for t in build/release/tests/test_vk_* build/release/tests/test_constfold; do
    [ -x "$t" ] && case "$t" in *.o|*.d) ;; *) cp "$t" .dev/tests/ ;; esac
done
[ -e /usr/lib/x86_64-linux-gnu/libcmocka.so.0 ] && cp -L /usr/lib/x86_64-linux-gnu/libcmocka.so.0 .dev/lib/
for lib in $(ldd build/release/npu-explore | awk '/=>/ {print $3}'); do
    case "$(basename "$lib")" in libc.so.*|libm.so.*|libvulkan.so.*) ;; *) cp -L "$lib" .dev/lib/ ;; esac
done
wrapper() { # $1: the wrapper's name in .dev, $2: the binary it runs
    cat > ".dev/$1" <<SH
#!/bin/sh
here=\$(dirname "\$(readlink -f "\$0")")
LD_LIBRARY_PATH="\$here/lib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}" exec "\$here/$2" "\$@"
SH
    chmod +x ".dev/$1"
}
wrapper npu-explore npu-explore.bin
# OLD=REV: that revision's binary too, as .dev/npu-explore-old (A/B of a default against the build
# before it in one device call: NPU_EXPLORE=.dev/npu-explore-old bash bench/ab.sh ...); built in a
# worktree under /tmp, kept there for the next pack
if [ -n "${OLD:-}" ]; then
    wt=/tmp/npu-explore-old-$(git rev-parse --short "$OLD")
    [ -d "$wt" ] || git worktree add -q --detach "$wt" "$OLD"
    make -s -C "$wt" MODE=release all
    cp "$wt/build/release/npu-explore" .dev/npu-explore-old.bin
    wrapper npu-explore-old npu-explore-old.bin
fi
strip .dev/npu-explore*.bin .dev/tests/* 2>/dev/null || true
# the device carries at most 64 MiB with the tree; the test binaries share one 12 MB SPIR-V blob,
# which xz -9's 64 MiB window finds again in each: 170 MB of .dev packs to about 9 MB
tar -cf - .dev | xz -9 -T2 > .dev.tar.xz
du -sh .dev .dev.tar.xz
echo "on the device: tar -xJf .dev.tar.xz   (run carry: [\".gl\", \".dev.tar.xz\"])"
