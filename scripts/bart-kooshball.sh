#!/usr/bin/env bash
# Issue 10's BART goals on the 64^3 kooshball (docs/bart-comparison.md, "64^3
# kooshball (issue 10)"): BART's data, every image scored against
# `bart phantom -3 -x N` after one fitted real scale (the 3D scale between
# BART's analytic k-space and its image phantom is not derived here).
#   bart traj -3 -r -x N -o 2 -y SPOKES, bart phantom -3 -k -t traj
#   BART:     pics -S -l2 -r 0.001 -i 30; gridding = ramp DCF, fmac, nufft -a
#             (and, to explain a difference, with fhdrecon's shell weights)
#   fhdrecon: gridding (KB, analytic radial weights), l2 (0.001 and auto), TV
#             at the lambdas in TV_LAMBDAS; 30 iterations, --device cpu --fhd nufft
# Prints one line per method (PSNR, fitted scale, wall seconds) and the goals:
#   best fhdrecon >= pics + 1 dB; fhdrecon gridding within 0.2 dB of BART's.
# Needs bart, python3 (standard library) and h5dump on PATH.
#   N (64), SPOKES (1500), FHDRECON (build/fhdrecon), TV_LAMBDAS, KEEP (a dir to keep the files in)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
exe=$(realpath "${FHDRECON:-$root/build/fhdrecon}")
N=${N:-64}
SPOKES=${SPOKES:-1500}
TV_LAMBDAS=${TV_LAMBDAS:-0.001 0.003 0.01 0.03 0.1}
# shellcheck source=scripts/bart-lib.sh
source "$root/scripts/bart-lib.sh"

run bart traj -3 -r -x "$N" -o 2 -y "$SPOKES" traj
run bart phantom -3 -k -t traj ksp
run bart phantom -3 -x "$N" ref
run bart ones 3 "$N" "$N" "$N" sens

timed pics bart pics -S -l2 -r 0.001 -i 30 -t traj ksp sens pics

# BART's gridding: weights w = |k|^2 * 4 pi dk / (2 SPOKES), the 3D ramp in
# absolute k-volume per sample (each full spoke crosses every shell twice;
# dk = 0.5, the readout spacing at -o 2), so the image is on the same footing
# as a quadrature of the k-space integral. bart traj -r puts the samples at
# half-integer multiples of dk (no sample at k = 0), so no weight is zero.
ramp=$(python3 -c "import math; print(4 * math.pi * 0.5 / (2 * $SPOKES))")
timed bart-grid bart rss 1 traj kabs
timed bart-grid bart fmac kabs kabs k2
timed bart-grid bart scale "$ramp" k2 dcf
timed bart-grid bart fmac ksp dcf kw
timed bart-grid bart nufft -a -d "$N:$N:$N" traj kw grid
# The same with fhdrecon's weights (docs/gridding.md: the volume of the shell
# [|k| - dk/2, |k| + dk/2] shared by its samples, 4 pi (|k|^2 + dk^2/12) dk per
# shell): tells a difference of weights from one of kernels and apodization.
run bart ones 3 1 $((2 * N)) "$SPOKES" one
run bart scale "$(python3 -c "print(0.5 ** 2 / 12)")" one dk2
run bart saxpy 1 k2 dk2 shell
run bart scale "$ramp" shell dcf_shell
run bart fmac ksp dcf_shell kw_shell
run bart nufft -a -d "$N:$N:$N" traj kw_shell grid_shell

ours=("$exe" --input ksp --traj-file traj --matrix "$N" --iters 30 --fhd nufft --device cpu --no-cache)
# gridding baseline and l2 0.001 in one run (the gridding image is images.h5's gridding-kb)
timed l2 "${ours[@]}" --lambda 0.001 --save h5,cfl --out l2
timed auto "${ours[@]}" --lambda auto --no-gridding --save cfl --out auto
for l in $TV_LAMBDAS; do
  timed "tv$l" "${ours[@]}" --reg tv --lambda "$l" --no-gridding --save cfl --out "tv$l"
done

python3 - "$root/scripts" "$N" "$SPOKES" "$(bart version 2>/dev/null || echo '?')" "$(nproc)" "$TV_LAMBDAS" <<'PY'
import json, sys
sys.path.insert(0, sys.argv[1])
import bart_score as bs
n, spokes, ver, cores, tvs = sys.argv[2:]
secs = {}
for line in open('times.txt'):
    name, ns = line.split()
    secs[name] = secs.get(name, 0) + int(ns) / 1e9
# fhdrecon's gridding runs inside the l2 job: its own stages from report.json
rep = json.load(open('l2/report.json'))
stage = {s['name']: s['seconds'] for s in rep['stages']}
secs['ours-grid'] = stage['density compensation'] + stage['gridding-kb']
auto_lambda = json.load(open('auto/report.json'))['options']['lambda']
rows = [  # method, image, time key
    ('bart pics -S -l2 -r 0.001 -i 30', 'pics', 'pics'),
    ('bart gridding, ramp DCF (nufft -a)', 'grid', 'bart-grid'),
    ('bart gridding, fhdrecon\'s shell DCF (nufft -a)', 'grid_shell', None),
    ('fhdrecon gridding-kb (analytic radial DCF)', 'l2/images.h5:gridding-kb', 'ours-grid'),
    ('fhdrecon l2 --lambda 0.001', 'l2/iterative', 'l2'),
    (f'fhdrecon l2 --lambda auto (chose {auto_lambda:.3g})', 'auto/iterative', 'auto'),
] + [(f'fhdrecon --reg tv --lambda {l}', f'tv{l}/iterative', f'tv{l}') for l in tvs.split()]
ref = bs.read_cfl('ref', real=True)
score = {}
print(f'{n}^3, bart traj -3 -r -x {n} -o 2 -y {spokes} ({int(spokes) * 2 * int(n)} samples), '
      f'30 iterations, {cores} cores, bart {ver}; PSNR after one fitted real scale')
print('| method | PSNR (dB) | fitted scale | wall (s) |')
print('|---|---|---|---|')
for name, image, key in rows:
    score[image] = bs.fitted_psnr(bs.read_image(image), ref)
    p, s = score[image]
    print(f'| {name} | {p:.2f} | {s:.4g} | {secs[key]:.2f} |' if key else f'| {name} | {p:.2f} | {s:.4g} | - |')
pics, grid, ours_grid = score['pics'][0], score['grid'][0], score['l2/images.h5:gridding-kb'][0]
best_name, best = max(((name, score[image][0]) for name, image, _ in rows if name.startswith('fhdrecon') and 'gridding' not in name),
                      key=lambda r: r[1])
ok = lambda c: 'met' if c else 'not met'
print(f'goal: best fhdrecon >= pics + 1 dB: {ok(best - pics >= 1)} ({best_name}: {best - pics:+.2f} dB)')
print(f'goal: fhdrecon gridding within 0.2 dB of BART ramp gridding: {ok(abs(ours_grid - grid) <= 0.2)} '
      f'({ours_grid - grid:+.2f} dB; fitted scales {score["l2/images.h5:gridding-kb"][1]:.4g} and {score["grid"][1]:.4g}, '
      f'pics {score["pics"][1]:.4g})')
PY
echo
echo "commands (in $w; fhdrecon = $exe):"
sed "s|$exe|fhdrecon|" commands.txt
