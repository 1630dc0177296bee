#!/bin/bash
# A short fuzz run of the three readers as part of `make test` (5 s each), a longer one in
# `make test-long` (NPU_TEST_LONG=1: 60 s each); `make fuzz` runs longer still.
if [ -n "$NPU_TEST_LONG" ]; then s=60; else s=5; fi
exec tools/fuzz.sh "${NPU_FUZZ_SECONDS:-$s}"
