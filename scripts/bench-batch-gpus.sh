#!/usr/bin/env bash
# Benchmark: `fhdrecon batch` of 8 scans on 1 GPU against `--gpus all` (issue 14:
# 2 GPUs at least 1.8x faster, 4 GPUs 3.4x). Prints wall times and the speed-up
# against the goal. Two regimes: every scan computes its Q (8 trajectories, a
# fresh cache), and every Q cached (the same batch again with --force).
#   scripts/bench-batch-gpus.sh FHDRECON [MATRIX] [SAMPLES]   (default 128, 1048576)
set -euo pipefail
exe=$(realpath "$1")
matrix=${2:-128} samples=${3:-1048576}
T=${TMPDIR:-/tmp}/fhdrecon-bench-batch
rm -rf "$T"
mkdir -p "$T/in"
gpus=$(nvidia-smi -L | wc -l)
echo "device files: $(ls /dev/nvidia[0-9]* 2>/dev/null | tr '\n' ' ')"
# --gpus all counts /dev/nvidiaN when CUDA_VISIBLE_DEVICES is unset; pin it so
# the benchmark measures scaling, not device discovery.
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-$(seq -s, 0 $((gpus - 1)))}
goal=$(awk -v g="$gpus" 'BEGIN { print (g >= 4 ? 3.4 : g >= 2 ? 1.8 : 1) }')
for i in 0 1 2 3 4 5 6 7; do  # 8 trajectories: a sample count each
  "$exe" --quiet synth --phantom shepp3d --matrix "$matrix" --traj radial3d --samples $((samples + 4096 * i)) \
    --noise 0.02 --seed "$i" -o "$T/in/scan$i.h5"
done
run() {  # run LABEL CACHE [batch options]: prints seconds
  local label=$1 cache=$2 t0 t1
  shift 2
  t0=$(date +%s.%N)
  "$exe" --quiet batch "$T"/in/scan*.h5 --out "$T/out-$label" --device gpu --trig sfu --cache-dir "$cache" "$@" \
    > "$T/$label.log" 2>&1 || { cat "$T/$label.log"; exit 1; }
  t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }'
}
echo "batch of 8 scans, ${matrix}^3, ~${samples} 3D radial samples each, ${gpus} GPUs: $(nvidia-smi -L | head -n 1)"
printf "%-32s %10s %10s %9s %6s\n" regime "1 GPU (s)" "all (s)" speed-up goal
for regime in "Q computed" "Q cached"; do
  if [[ $regime == "Q computed" ]]; then
    rm -rf "$T/c1" "$T/c2"
    one=$(run one "$T/c1" --gpus 1)
    all=$(run all "$T/c2" --gpus all)
  else
    one=$(run one "$T/c1" --gpus 1 --force)
    all=$(run all "$T/c2" --gpus all --force)
  fi
  awk -v r="$regime" -v a="$one" -v b="$all" -v g="$goal" \
    'BEGIN { printf "%-32s %10.2f %10.2f %8.2fx %5.1fx %s\n", r, a, b, a / b, g, (a / b >= g ? "met" : "MISSED") }'
done
# Rows must agree between the runs (the same images, whichever GPU ran them).
cut -d, -f1,2,7 "$T/out-one/summary.csv" > "$T/one.rows"
cut -d, -f1,2,7 "$T/out-all/summary.csv" > "$T/all.rows"
diff "$T/one.rows" "$T/all.rows" > /dev/null && echo "summaries: same status and PSNR per scan" ||
  { echo "summaries differ:"; diff "$T/one.rows" "$T/all.rows"; }
