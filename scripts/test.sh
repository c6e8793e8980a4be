#!/usr/bin/env bash
# Fresh machine to passing tests: install dependencies, build everything
# (the CUDA code too, where nvcc exists), run the test suite. [gpu] tests skip
# without a GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
(cd "${BUILD:-build}" && ctest --output-on-failure --timeout 1800)
# The Python package against this build's library, installed for python3 and
# tested with pytest on the CPU (docs/python.md).
bash scripts/python.sh test "${BUILD:-build}"
# Every CPU test area again under ASan+UBSan, in build-asan, with the short fuzz
# run there too (issue 13). Measured 2026-11-23 on a 2-core machine shared with
# another build: 26.6 min wall, 31.8 min of CPU (about 17 min on an idle one); the
# tests alone 2.5 min (docs/robustness.md).
bash scripts/sanitize.sh phantom recon io app fuzz_short
