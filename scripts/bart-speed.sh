#!/usr/bin/env bash
# Issue 9's CPU race: fhdrecon --fhd nufft against BART 0.8's `pics -l2` on one
# 3D radial data set, both on this machine's CPU, timed in the same run:
#   bart traj -3 -r -x 64 -o 2 -y 1500 (1500 spokes x 128 = 192,000 samples),
#   bart phantom -3 -k -t traj (BART's analytic k-space), 30 iterations each.
# Prints the wall times, their ratio (goal: fhdrecon at least 2x faster) and each
# image's PSNR against `bart phantom -3 -x 64`. The absolute scale between
# BART's analytic k-space and its image phantom is not derived in 3D here, so
# both PSNRs fit one real scale each (least squares) before scoring; the
# rotation BART's phantom has cancels as in docs/bart-comparison.md.
# Needs bart and python3 (standard library only) on PATH.
#   N (64), SPOKES (1500), FHDRECON (build/fhdrecon), EXTRA (more fhdrecon options)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
exe=$(realpath "${FHDRECON:-$root/build/fhdrecon}")
N=${N:-64}
SPOKES=${SPOKES:-1500}
for t in bart python3; do command -v $t >/dev/null || { echo "$0: $t not on PATH" >&2; exit 2; }; done
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
cd "$w"
bart traj -3 -r -x "$N" -o 2 -y "$SPOKES" traj >/dev/null
bart phantom -3 -k -t traj ksp >/dev/null
bart phantom -3 -x "$N" ref >/dev/null
bart ones 3 "$N" "$N" "$N" sens >/dev/null

seconds() {  # wall seconds of a command, its output discarded
  local t0 t1
  t0=$(date +%s%N)
  "$@" >/dev/null 2>&1
  t1=$(date +%s%N)
  python3 -c "print(f'{($t1 - $t0) / 1e9:.2f}')"
}
t_bart=$(seconds bart pics -S -l2 -r 0.001 -i 30 -t traj ksp sens pics)
t_ours=$(seconds "$exe" --input ksp --traj-file traj --matrix "$N" --iters 30 --lambda 0.001 --fhd nufft \
  --device cpu --no-cache --no-gridding --save cfl --out ours ${EXTRA:-})

python3 - "$root/scripts" "$t_bart" "$t_ours" "$N" "$SPOKES" "$(bart version 2>/dev/null || echo '?')" "$(nproc)" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
from bart_score import read_cfl, fitted_psnr
t_bart, t_ours = float(sys.argv[2]), float(sys.argv[3])
n, spokes, ver, cores = sys.argv[4:]
ref = read_cfl('ref', real=True)
pb, sb = fitted_psnr(read_cfl('pics'), ref)
po, so = fitted_psnr(read_cfl('ours/iterative'), ref)
print(f'{n}^3 from bart traj -3 -r -x {n} -o 2 -y {spokes}, 30 iterations, {cores} cores, bart {ver}')
print(f'bart pics -S -l2 -r 0.001 -i 30 : {t_bart:7.2f} s  PSNR {pb:.2f} dB (scale {sb:.3g})')
print(f'fhdrecon --fhd nufft            : {t_ours:7.2f} s  PSNR {po:.2f} dB (scale {so:.3g})')
ratio = t_bart / t_ours
print(f'fhdrecon is {ratio:.2f}x faster (goal >= 2x: {"met" if ratio >= 2 else "not met"}); '
      f'PSNR difference {po - pb:+.2f} dB')
PY
