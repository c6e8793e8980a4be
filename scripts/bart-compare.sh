#!/usr/bin/env bash
# fhdrecon vs BART 0.8's `pics -l2` on the same data; writes the measured
# table between the markers of docs/bart-comparison.md (run from anywhere).
#   (a) BART's trajectory and analytic k-space, reference `bart phantom -x N`
#   (b) fhdrecon's synthesized k-space as cfl, reference our phantom
# Needs bart, python3 (standard library only) and h5dump on PATH.
# N (default 64) and FHDRECON (default build/fhdrecon) can be set.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
exe=$(realpath "${FHDRECON:-$root/build/fhdrecon}")  # absolute: the work happens in a scratch dir
N=${N:-64}
R=${R:-0.001}  # bart -r and fhdrecon --lambda (docs/bart-comparison.md: their meaning)
for t in bart python3 h5dump; do command -v $t > /dev/null || { echo "$0: $t not on PATH" >&2; exit 2; }; done
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
cd "$w"
log() { echo "$*" >> commands.txt; eval "$*" > /dev/null 2>&1; }

scale=$(python3 -c "import math; print(math.pi*$N*math.sqrt(2*math.pi)/8)")
# (a)
log bart traj -x $N -o 2 -y $(python3 -c "import math; print(int(math.pi / 2 * $N + 0.5))") -r traj
log bart phantom -k -t traj ksp0
log bart scale $scale ksp0 ksp
log bart phantom -x $N ref
log bart ones 3 $N $N 1 sens
log bart pics -S -l2 -r $R -i 30 -t traj ksp sens pics_a
log "$exe" --input ksp --traj-file traj --matrix $N --iters 30 --lambda $R --no-cache --no-gridding --out ours_a
# (b)
log "$exe" synth --phantom shepp2d --matrix $N --format bart -o ours
log bart pics -S -l2 -r $R -i 30 -t ours_traj ours sens pics_b
log "$exe" --phantom shepp2d --matrix $N --iters 30 --lambda $R --no-cache --out ours_b

python3 - "$root/scripts" "$root/docs/bart-comparison.md" "$N" "$R" "$(bart version 2>/dev/null || echo '?')" "$exe" <<'PY'
import sys, datetime
sys.path.insert(0, sys.argv[1])
from bart_score import read_cfl as cfl, read_h5 as h5, psnr  # psnr: magnitude, no rescaling
doc, n, r, ver, exe = sys.argv[2:]
ref_a = cfl('ref', real=True)
ref_b = h5('ours_b/images.h5', 'phantom')
rows = [
    ('(a) BART traj + `phantom -k`', 'bart phantom -x', psnr(cfl('pics_a'), ref_a), psnr(h5('ours_a/images.h5', 'iterative'), ref_a)),
    ('(b) fhdrecon synth (cfl)', 'fhdrecon shepp2d', psnr(cfl('pics_b'), ref_b), psnr(h5('ours_b/images.h5', 'iterative'), ref_b)),
]
out = [f'Measured {datetime.date.today()} with bart {ver}, N = {n}, lambda = {r}, 30 CG iterations:', '',
       '| data | reference | bart pics PSNR (dB) | fhdrecon PSNR (dB) | difference (dB) |', '|---|---|---|---|---|']
out += [f'| {a} | {b} | {p:.2f} | {q:.2f} | {q - p:+.2f} |' for a, b, p, q in rows]
out += ['', 'Commands (run in a scratch directory; `fhdrecon` = the built binary):', '', '```']
out += [l.rstrip().replace(exe, 'fhdrecon') for l in open('commands.txt')]
out += ['```']
text = open(doc).read()
b, e = '<!-- measured:begin -->', '<!-- measured:end -->'
i, j = text.index(b) + len(b), text.index(e)
open(doc, 'w').write(text[:i] + '\n' + '\n'.join(out) + '\n' + text[j:])
print('\n'.join(out[:6]))
PY
