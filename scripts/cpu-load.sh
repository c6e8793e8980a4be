#!/usr/bin/env bash
# The CPU path under load (issue 25): the default run, alone and beside BUSY
# other busy processes (shell loops, one core each), back to back, ROUNDS
# times; prints each wall time, the medians and loaded / idle beside the goal
# (within 3x). Q comes from a cache made by a first, untimed run (the issue's
# 10 s idle figure had Q cached).
#   scripts/cpu-load.sh [fhdrecon args...]      (default: --phantom shepp3d --device cpu)
#   FHDRECON=build/fhdrecon ROUNDS=3 BUSY=2 scripts/cpu-load.sh
# Extra environment for fhdrecon (e.g. OMP_WAIT_POLICY=active to see the old
# behaviour) passes through. The machine's load average is printed with each
# run: on a shared machine "idle" is whatever the others leave.
set -euo pipefail
FHDRECON=${FHDRECON:-build/fhdrecon}
ROUNDS=${ROUNDS:-3}
BUSY=${BUSY:-2}
args=("$@")
[[ ${#args[@]} -gt 0 ]] || args=(--phantom shepp3d --device cpu)
work=$(mktemp -d)
busy_pids=()
stop_busy() {
  for p in "${busy_pids[@]}"; do kill "$p" 2>/dev/null || true; done
  busy_pids=()
}
trap 'stop_busy; rm -rf "$work"' EXIT
run() {  # prints the wall seconds of one run
  local t0 t1
  t0=$(date +%s.%N)
  "$FHDRECON" --quiet "${args[@]}" --cache-dir "$work/cache" --out "$work/out" --save none >/dev/null
  t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}'
}
load() { cut -d' ' -f1 /proc/loadavg; }
"$FHDRECON" --quiet "${args[@]}" --cache-dir "$work/cache" --out "$work/out" --save none >/dev/null  # Q into the cache
idle=() loaded=()
for ((r = 1; r <= ROUNDS; r++)); do
  l=$(load); t=$(run); idle+=("$t")
  printf 'round %d idle   %7.2f s  (load average %s)\n' "$r" "$t" "$l"
  for ((b = 0; b < BUSY; b++)); do (while :; do :; done) & busy_pids+=($!); done
  sleep 1
  l=$(load); t=$(run); loaded+=("$t")
  stop_busy
  printf 'round %d loaded %7.2f s  (load average %s, %d busy processes)\n' "$r" "$t" "$l" "$BUSY"
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
mi=$(median "${idle[@]}"); ml=$(median "${loaded[@]}")
awk -v i="$mi" -v l="$ml" 'BEGIN {
  printf "median idle %.2f s, loaded %.2f s: %.2fx idle, goal <= 3x: %s\n", i, l, l / i, l / i <= 3 ? "met" : "MISSED" }'
