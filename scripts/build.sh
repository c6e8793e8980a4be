#!/usr/bin/env bash
# Configures and builds into build/ (CUDA backend where nvcc exists).
#   scripts/build.sh [target...]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
gen=(); command -v ninja >/dev/null && gen=(-G Ninja)
[[ -f $BUILD/CMakeCache.txt ]] || cmake -S . -B "$BUILD" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release ${CMAKE_ARGS:-}
targets=()
for t in "$@"; do targets+=(--target "$t"); done
cmake --build "$BUILD" -j"$(nproc)" "${targets[@]}"
