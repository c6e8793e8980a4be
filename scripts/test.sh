#!/usr/bin/env bash
# Fresh machine to passing tests: install dependencies, build everything
# (the CUDA code too, where nvcc exists), run the test suite. [gpu] tests skip
# without a GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
(cd "${BUILD:-build}" && ctest --output-on-failure --timeout 1800)
# The readers' tests (io) again under ASan+UBSan, in build-asan: about 6 minutes
# on 2 cores (docs/robustness.md; `scripts/sanitize.sh` alone runs every area).
bash scripts/sanitize.sh io
