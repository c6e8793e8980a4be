#!/usr/bin/env bash
# On the lent GPU machine: build what the NUFFT work needs, run its [gpu]
# tests and bench-nufft, optionally the cuFINUFFT peer and the end-to-end runs;
# logs under $OUT, a short table last.
#   scripts/nufft-device.sh [test] [bench] [sweep] [peer] [e2e]   (default: test bench)
# Carry .devdeps (and .peers for `peer`: an optional local copy of peer tools,
# cuFINUFFT with its build.sh and run.sh, not part of this repository).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
BUILD=${BUILD:-/tmp/b}
steps=("$@")
((${#steps[@]})) || steps=(test bench)
has() { [[ " ${steps[*]} " == *" $1 "* ]]; }
# PEERS: where that copy is; by default .peers at the checkout's root (or two levels up when
# this script runs in a git worktree under .wt/).
PEERS=${PEERS:-$PWD/.peers}
[[ -d $PEERS ]] || PEERS=$(cd ../.. && pwd)/.peers

for f in .devdeps/*.deb; do
  [[ -e $f ]] || continue
  pkg=$(dpkg-deb -f "$f" Package)
  dpkg -s "$pkg" >/dev/null 2>&1 || dpkg -x "$f" /
done
ldconfig
if has peer; then  # the peer builds on all cores while ours compiles too
  (bash "$PEERS/build.sh" >"$OUT/peer-build.log" 2>&1) &
  peer_build=$!
fi
start=$(date +%s)
cmake -S . -B "$BUILD" -G Ninja -DFHD_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 >"$BUILD.configure.log" 2>&1 ||
  { tail -30 "$BUILD.configure.log"; exit 1; }
cmake --build "$BUILD" -j"$(nproc)" --target ${TARGETS:-tests_gpu fhdrecon} >"$BUILD.build.log" 2>&1 ||
  { grep -E "error|Error" "$BUILD.build.log" | head -40; exit 1; }
echo "build: ok ($(($(date +%s) - start)) s)"
grep -A3 "nufft" "$BUILD.build.log" | grep -E "entry function|registers|stack" >"$OUT/nufft-ptxas.txt" || true

rc=0
if has test; then
  "$BUILD/tests_gpu" "[nufft]" -s 2>&1 | grep -E "^nufft |passed|failed|FAILED|with expansion|REQUIRE|CHECK|test cases|assertions" \
    >"$OUT/nufft-tests.log"
  tail -20 "$OUT/nufft-tests.log"
  "$BUILD/tests_gpu" 2>&1 | tail -3 | tee -a "$OUT/nufft-tests.log" || rc=1
fi
if has bench; then
  "$BUILD/fhdrecon" bench-nufft --json "$OUT/bench-nufft.json" $(has sweep && echo --sweep) \
    >"$OUT/bench-nufft.log" 2>&1 || rc=1
  "$BUILD/fhdrecon" bench-nufft --points radial --tols 1e-6 --no-q --reps 5 >>"$OUT/bench-nufft.log" 2>&1 || true
fi
if has peer; then
  wait "$peer_build" && RESULTS_DIR="$OUT" SWEEP=0 bash "$PEERS/run.sh" >"$OUT/peer-run.log" 2>&1 || rc=1
  tail -12 "$OUT/peer-run.log"
fi
if has e2e; then
  for method in exact nufft; do
    t0=$(date +%s%N)
    "$BUILD/fhdrecon" --phantom shepp3d --matrix 128 --samples 1048576 --fhd $method --device gpu \
      --out /tmp/e2e-$method --json "$OUT/e2e-$method.json" >"$OUT/e2e-$method.log" 2>&1 || rc=1
    echo "e2e $method wall $((($(date +%s%N) - t0) / 1000000)) ms" | tee -a "$OUT/e2e-$method.log"
  done
fi
[[ -f $OUT/bench-nufft.log ]] && cat "$OUT/bench-nufft.log" | grep -v " done$"
exit $rc
