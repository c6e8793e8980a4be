# The default steps of scripts/device-test.sh (the [gpu] tests, bench, tune,
# validate, the end-to-end case), compute-sanitizer over the [gpu] tests, and the
# Python package on the GPU.
# Sourced by it: nothing runs on sourcing; the working directory is the
# repository root and OUT, BUILD are set.
# shellcheck shell=bash

run_tests() {
  # The summary, and every failure's context on stdout: the log itself may not
  # come back (the device tool returns 8 files), and the NUFFT tests' error
  # lines fill a plain tail.
  "$BUILD/tests_gpu" --durations yes >"$OUT/tests_gpu.log" 2>&1
  local rc=$?
  grep -B4 -A16 FAILED "$OUT/tests_gpu.log" | grep -vE '^(nufft |[0-9.]+ s: )' | head -80
  tail -3 "$OUT/tests_gpu.log"
  return $rc
}

run_bench() {
  "$BUILD/fhdrecon" bench --json "$OUT/bench.json" --png "$OUT/ladder.png" 2>&1 | tee "$OUT/bench.log" | tail -45
}

run_tune() {
  # A fresh profile directory, so the search runs rather than reading an old profile.
  rm -rf /tmp/fhdrecon-tune
  "$BUILD/fhdrecon" tune --kernel coarsened --trig sfu --cache-dir /tmp/fhdrecon-tune 2>&1 | tee "$OUT/tune.log" | tail -12
}

run_validate() {
  "$BUILD/fhdrecon" validate --preset book --out /tmp/fhdrecon-validate --json "$OUT/validate.json" \
    --markdown "$OUT/validate.md" \
    2>&1 | tee "$OUT/validate.log" | tail -25
}

run_e2e() {
  # The end-to-end case: 128^3, about 1M samples of 3D radial; the second
  # run reuses the cached Q. Wall time includes start-up and synthesizing the data.
  local cache=/tmp/fhdrecon-e2e-cache pass start
  rm -rf "$cache"
  for pass in 1 2; do
    start=$(date +%s%N)
    "$BUILD/fhdrecon" --phantom shepp3d --matrix 128 --traj radial3d --samples 1048576 \
      --trig sfu --device gpu --cache-dir "$cache" --out /tmp/fhdrecon-e2e --json "$OUT/e2e$pass.json" \
      >"$OUT/e2e$pass.log" 2>&1
    echo "wall $(((($(date +%s%N) - start)) / 1000000)) ms (pass $pass)" >>"$OUT/e2e$pass.log"
    tail -24 "$OUT/e2e$pass.log"
  done
}

run_sanitize() {
  # compute-sanitizer memcheck (out-of-bounds, leaks, API errors) and racecheck
  # (shared-memory races) over the [gpu] tests; hidden benchmarks stay out.
  local cs=compute-sanitizer tool r=0
  command -v $cs >/dev/null || cs=/usr/local/cuda/bin/compute-sanitizer
  for tool in memcheck racecheck; do
    echo "== compute-sanitizer --tool $tool" | tee -a "$OUT/sanitize.log"
    local extra=()
    [[ $tool == memcheck ]] && extra=(--leak-check full)
    timeout "${SANITIZE_LIMIT:-600}" $cs --tool $tool --error-exitcode 99 "${extra[@]}" "$BUILD/tests_gpu" "[gpu]" \
      >>"$OUT/sanitize.log" 2>&1 || { r=1; echo "$tool: FAILED (see sanitize.log)"; }
    grep -E "ERROR SUMMARY|RACECHECK SUMMARY|test cases" "$OUT/sanitize.log" | tail -2
  done
  return $r
}

# The Python package (docs/python.md) with CUDA: `pip install
# --no-build-isolation .` (the image has nanobind and scikit-build-core, no
# network) against the library the build step made (FHD_PREBUILT_PREFIX: the
# extension alone is compiled); pytest from .devdeps/wheels when the image has
# none (scripts/fetch-devdeps.sh). Then the GPU tests (CuPy, PyTorch: -m gpu)
# and Plan's type 1 at 128^3 / 1M points against `fhdrecon bench-nufft`.
run_python() {
  local prefix=$PWD/$BUILD/prefix
  cmake --install "$BUILD" --prefix "$prefix" >/dev/null || return 1
  python3 -c "import pytest" 2>/dev/null ||
    python3 -m pip install -q --no-index --find-links .devdeps/wheels pytest >"$OUT/python-pip.log" 2>&1
  python3 -m pip install --no-build-isolation --force-reinstall --no-deps . -C build-dir="$BUILD/py" \
    -C cmake.define.FHD_PREBUILT_PREFIX="$prefix" >"$OUT/python-build.log" 2>&1 ||
    { tail -30 "$OUT/python-build.log"; return 1; }
  # finufft (carried in .peers/whl) is the reference of the NUFFT tests.
  local r=0 site=/tmp/pysite
  ls .peers/whl/finufft*.whl >/dev/null 2>&1 && [[ ! -d $site/finufft ]] &&
    python3 -m pip install -q --no-index --no-deps --target "$site" .peers/whl/finufft*.whl
  (cd /tmp && PYTHONPATH=$site${PYTHONPATH:+:$PYTHONPATH} FHDRECON_EXE="$OLDPWD/$BUILD/fhdrecon" python3 -m pytest -q -p no:cacheprovider -m gpu -rs \
    "$OLDPWD/python/tests") 2>&1 | tee "$OUT/python-tests.log" | tail -25
  [[ ${PIPESTATUS[0]} == 0 ]] || r=1
  python3 python/bench/bench_plan.py --gpu --n 128 --m 1048576 --reps 10 --exe "$BUILD/fhdrecon" 2>&1 |
    tee "$OUT/python-bench.log"
  return $r
}
