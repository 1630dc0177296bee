#!/bin/bash
# Session 15's A/Bs on the GPU, one run (bench/ab.sh): the device conformance tests of the kernels
# that session changed, then full-size DenseNet-121 and Swin-T with each of its switches
# alternating (all on; cats copied: --disable cat-in-place; batch norms in their own kernels:
# --no-fuse elementwise; both off: DenseNet's plan at the session's start, 542 kernels in 466
# levels); each model also checked against the CPU reference on the GPU. Files under $OUT.
#   on the GPU machine after bench/pack_device.sh (the exporter in .exporter/): bash bench/ab15.sh
cd "$(dirname "$0")/.." || exit 2
TESTS=${TESTS-test_vk_cat test_vk_norm test_vk_attn_cache test_vk_data} MODELS=${MODELS:-densenet121 swin_t} \
    SETTINGS="all-on=;cats-copied=--disable cat-in-place;bn-alone=--no-fuse elementwise;both-off=--disable cat-in-place --no-fuse elementwise" \
    exec bash bench/ab.sh
