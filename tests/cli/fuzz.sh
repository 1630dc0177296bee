#!/bin/bash
# A short fuzz run of the three readers (20 s each) as part of `make test`; `make fuzz` runs longer.
exec tools/fuzz.sh "${NPU_FUZZ_SECONDS:-20}"
