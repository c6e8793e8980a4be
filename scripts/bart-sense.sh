#!/usr/bin/env bash
# Issue 11's BART goal (docs/bart-comparison.md, "SENSE with ESPIRiT maps"): one
# synthesized 3D radial 8-coil scan with 1% correlated noise, prewhitened by
# fhdrecon and written as BART files, so both tools see the same whitened data;
#   BART:     ESPIRiT maps from BART's own calibration (the central readout
#             samples, |k| < CAL/2, through `nufft -i` onto a CAL^3 grid, `fft`,
#             zero-padded to N^3, `ecalib -m1`), then `pics -l2 -r R -i ITERS`
#             for each R in BART_LAMBDAS;
#   fhdrecon: SENSE with its `lowres` maps (and `espirit` with ESPIRIT=1) from
#             the same files, ITERS plain CG iterations, --fhd nufft, CPU.
# Every image is scored against the object as the prewhitened array sees it
# (phantom * ||W s||, docs/coils.md), taken from fhdrecon's in-process run of
# the same synthesis (images.h5's "phantom"), after one fitted real scale.
# Prints one line per method (PSNR, fitted scale, wall seconds) and the goal:
#   fhdrecon's PSNR >= the best of BART's.
# Needs bart, python3 (standard library) and h5dump on PATH.
#   N (64), SAMPLES (32768), CAL (24), ITERS (30), BART_LAMBDAS ("0.001 0.01 0.1"),
#   ESPIRIT (0), FHDRECON (build/fhdrecon), KEEP (a dir to keep the files in)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
exe=$(realpath "${FHDRECON:-$root/build/fhdrecon}")
N=${N:-64}
SAMPLES=${SAMPLES:-32768}
CAL=${CAL:-24}
ITERS=${ITERS:-30}
BART_LAMBDAS=${BART_LAMBDAS:-0.001 0.01 0.1}
ESPIRIT=${ESPIRIT:-0}
# shellcheck source=scripts/bart-lib.sh
source "$root/scripts/bart-lib.sh"

scan=(--phantom shepp3d --matrix "$N" --samples "$SAMPLES" --coils 8 --noise 0.01)
run "$exe" synth "${scan[@]}" --prewhitened -o ksp --format bart
# The reference: the same synthesis in-process (same seed, same prewhitening).
run "$exe" "${scan[@]}" --iters 0 --fhd nufft --device cpu --no-cache --no-gridding --save h5 --out ref

# BART's calibration: fhdrecon's radial readouts have 2N samples at k = (i - N)/2
# along the spoke, so |k| < CAL/2 is i in (N - CAL, N + CAL).
lo=$((N - CAL + 1)); hi=$((N + CAL))
timed bart-maps bart extract 1 "$lo" "$hi" ksp_traj cal_traj
timed bart-maps bart extract 1 "$lo" "$hi" ksp cal_ksp
timed bart-maps bart nufft -i -d "$CAL:$CAL:$CAL" cal_traj cal_ksp cal_img
timed bart-maps bart fft -u 7 cal_img cal_k
timed bart-maps bart resize -c 0 "$N" 1 "$N" 2 "$N" cal_k cal_kpad
timed bart-maps bart ecalib -m1 cal_kpad sens
for r in $BART_LAMBDAS; do
  timed "pics$r" bart pics -l2 -r "$r" -i "$ITERS" -t ksp_traj ksp sens "pics$r"
done

ours=("$exe" --input ksp --traj-file ksp_traj --matrix "$N" --iters "$ITERS" --fhd nufft --device cpu --no-cache
  --no-gridding --coil-combine sense --save h5)
timed lowres "${ours[@]}" --maps lowres --out lowres
[[ $ESPIRIT == 1 ]] && timed espirit "${ours[@]}" --maps espirit --out espirit

python3 - "$root/scripts" "$N" "$SAMPLES" "$ITERS" "$(bart version 2>/dev/null || echo '?')" "$(nproc)" \
  "$BART_LAMBDAS" "$ESPIRIT" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import bart_score as bs
n, samples, iters, ver, cores, lambdas, espirit = sys.argv[2:]
secs = {}
for line in open('times.txt'):
    name, ns = line.split()
    secs[name] = secs.get(name, 0) + int(ns) / 1e9
ref = bs.read_h5('ref/images.h5', 'phantom')
bart_rows = [(f'bart pics -l2 -r {r} -i {iters}, ecalib maps', f'pics{r}', f'pics{r}') for r in lambdas.split()]
ours_rows = [(f'fhdrecon SENSE --maps lowres, {iters} iterations', 'lowres/images.h5:iterative', 'lowres')]
if espirit == '1':
    ours_rows.append((f'fhdrecon SENSE --maps espirit, {iters} iterations', 'espirit/images.h5:iterative', 'espirit'))
print(f'{n}^3, 3D radial, {samples} samples, 8 coils, 1% correlated noise, prewhitened; '
      f'{cores} cores, bart {ver}; PSNR against phantom * ||W s|| after one fitted real scale')
print(f'BART maps (nufft -i of the centre, fft, resize, ecalib -m1): {secs["bart-maps"]:.1f} s')
print('| method | PSNR (dB) | fitted scale | wall (s) |')
print('|---|---|---|---|')
score = {}
for name, image, key in bart_rows + ours_rows:
    p, s = bs.fitted_psnr(bs.read_image(image), ref)
    score[name] = p
    print(f'| {name} | {p:.2f} | {s:.4g} | {secs[key]:.1f} |')
best_bart = max(bart_rows, key=lambda r: score[r[0]])[0]
ours = score[ours_rows[0][0]]
verdict = 'met' if ours >= score[best_bart] else 'NOT met'
print(f'goal: fhdrecon SENSE (lowres) >= BART\'s best: {verdict} ({ours - score[best_bart]:+.2f} dB against {best_bart})')
PY
echo
echo "commands (in $w; fhdrecon = $exe):"
sed "s|$exe|fhdrecon|" commands.txt
