#!/usr/bin/env bash
# Off-resonance compensation against the same data without off-resonance
# (docs/field-maps.md, docs/accuracy.md): for each readout length, the PSNR of
# uncompensated, time-segmented and exact CG, and the no-off-resonance run.
#   scripts/field-accuracy.sh [FHDRECON] [-- extra options for every run]
# Environment: PHANTOM (shepp2d), TRAJ (spiral2d), MATRIX (128), HZ (150),
# READOUTS ("10 20", ms), ITERS (30), METHODS ("none segmented exact"),
# OUTDIR (a temporary directory). Prints one row per run.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${1:-build/fhdrecon}
shift || true
[[ ${1:-} == -- ]] && shift
extra=("$@")
PHANTOM=${PHANTOM:-shepp2d}
TRAJ=${TRAJ:-spiral2d}
MATRIX=${MATRIX:-128}
HZ=${HZ:-150}
READOUTS=${READOUTS:-10 20}
ITERS=${ITERS:-30}
METHODS=${METHODS:-none segmented exact}
OUTDIR=${OUTDIR:-$(mktemp -d)}
mkdir -p "$OUTDIR"
common=(--phantom "$PHANTOM" --traj "$TRAJ" --matrix "$MATRIX" --iters "$ITERS" --no-gridding --no-cache
        --save none "${extra[@]}")

row() {  # name, report.json
  python3 - "$1" "$2" <<'PY'
import json, sys
r = json.load(open(sys.argv[2]))
it = next(m for m in r["methods"] if m["name"] == "iterative")
f = r.get("field", {})
seg = f.get("segments", "")
comp = sum(s["seconds"] for s in r["stages"] if s["name"] in ("time segments", "cmpFhD", "Q (segments)", "CG"))
print(f"{sys.argv[1]:<28} {it['psnr_db']:8.2f} dB  {f.get('method', 'none'):<10} {str(seg):>3} segments  "
      f"cmpFhD+Q+CG {comp:7.2f} s")
PY
}

run() {  # name, options...
  local name=$1 dir="$OUTDIR/${1//[^a-z0-9]/_}"
  shift
  "$BIN" "${common[@]}" "$@" --out "$dir" >"$dir.log" 2>&1 || { tail -5 "$dir.log"; return 1; }
  row "$name" "$dir/report.json"
}

echo "$PHANTOM $MATRIX, $TRAJ, +-$HZ Hz, $ITERS CG iterations ${extra[*]}"
run "no off-resonance" --off-resonance 0
for ms in $READOUTS; do
  for m in $METHODS; do
    run "${ms} ms, ${m}" --off-resonance "$HZ" --readout-ms "$ms" --field-comp "$m"
  done
done
