#!/usr/bin/env bash
# On the lent GPU machine: unpack the carried packages the image lacks, build
# with CUDA, run the [gpu] tests and the benchmarks, write logs under $OUT.
#   scripts/device-test.sh [build] [test] [bench] [e2e]     (default: all)
# Run through the device tool with carry [".devdeps"]; .devdeps holds the .deb
# files of DEVICE.md (make it with scripts/fetch-devdeps.sh).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
BUILD=${BUILD:-build-gpu}
steps=("$@")
((${#steps[@]})) || steps=(build test bench e2e)
has() { [[ " ${steps[*]} " == *" $1 "* ]]; }

unpack_devdeps() {
  # Only packages the image lacks: never overwrite what it ships.
  for f in .devdeps/*.deb; do
    [[ -e $f ]] || continue
    pkg=$(dpkg-deb -f "$f" Package)
    dpkg -s "$pkg" >/dev/null 2>&1 || dpkg -x "$f" /
  done
  ldconfig
}

build() {
  unpack_devdeps
  nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,driver_version --format=csv >"$OUT/gpu.txt" 2>&1
  cat "$OUT/gpu.txt"
  cmake -S . -B "$BUILD" -G Ninja -DFHD_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 >"$OUT/configure.log" 2>&1 ||
    { tail -40 "$OUT/configure.log"; return 1; }
  # TARGETS="tests_gpu fhdrecon" builds only those.
  cmake --build "$BUILD" -j"$(nproc)" ${TARGETS:+--target $TARGETS} >"$OUT/build.log" 2>&1 ||
    { grep -E "error|Error" "$OUT/build.log" | head -40; return 1; }
  grep -E "registers|spill" "$OUT/build.log" >"$OUT/ptxas.txt" || true
  echo "build: ok"
}

run_tests() {
  "$BUILD/tests_gpu" 2>&1 | tee "$OUT/tests_gpu.log" | tail -25
}

run_bench() {
  "$BUILD/fhdrecon" bench --json "$OUT/bench.json" 2>&1 | tee "$OUT/bench.log" | tail -30
}

run_e2e() {
  # The issue's end-to-end case: 128^3, about 1M samples of 3D radial; the second
  # run reuses the cached Q.
  local cache="$OUT/qcache"
  for pass in 1 2; do
    "$BUILD/fhdrecon" --phantom shepp3d --matrix 128 --traj radial3d --samples 1048576 \
      --trig sfu --device gpu --cache-dir "$cache" --out "$OUT/e2e" --json "$OUT/e2e$pass.json" --quiet \
      2>&1 | tee "$OUT/e2e$pass.log" | tail -20
  done
}

rc=0
has build && { build || exit 1; }
has test && { run_tests || rc=1; }
has bench && { run_bench || rc=1; }
has e2e && { run_e2e || rc=1; }
exit $rc
