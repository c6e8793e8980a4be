#!/usr/bin/env bash
# The sanitized test suite (scripts/sanitize.sh) run several times in a row
# beside busy processes that compete for the cores: a test that only passes on
# an idle machine (a deadlock after fork, a time limit too tight) fails here.
# docs/robustness.md, "Sanitizers".
#   scripts/sanitize-under-load.sh [runs = 5] [busy processes = 2] [area...]
# Areas default to CI's: phantom recon io app fuzz_short. Stops at the first
# failing run; exit 0 only when every run passed.
set -uo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
busy=${2:-2}
shift $(($# < 2 ? $# : 2))
areas=("$@")
((${#areas[@]})) || areas=(phantom recon io app fuzz_short)
pids=()
stop_busy() { ((${#pids[@]})) && kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null; }
trap stop_busy EXIT
for ((b = 0; b < busy; b++)); do
  (while :; do :; done) &  # a shell spinning on one core each
  pids+=($!)
done
echo "sanitized suite under load: $runs runs of ${areas[*]} beside $busy busy processes on $(nproc) cores"
for ((r = 1; r <= runs; r++)); do
  start=$(date +%s)
  if ! bash scripts/sanitize.sh "${areas[@]}" >"${LOG_DIR:-/tmp}/sanitize-load-$r.log" 2>&1; then
    echo "run $r: FAILED after $(($(date +%s) - start)) s (log ${LOG_DIR:-/tmp}/sanitize-load-$r.log)"
    tail -20 "${LOG_DIR:-/tmp}/sanitize-load-$r.log"
    exit 1
  fi
  echo "run $r: passed in $(($(date +%s) - start)) s, load $(cut -d' ' -f1 /proc/loadavg)"
done
echo "all $runs runs passed"
