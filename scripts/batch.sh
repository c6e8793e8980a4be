#!/usr/bin/env bash
# Reconstruct every scan in a folder: scripts/batch.sh DIR_IN DIR_OUT [batch options]
# Picks up *.h5 (fhdrecon HDF5 or ISMRMRD), *.mrd, *.ismrmrd, and BART pairs
# x.cfl + x_traj.cfl (synth --format bart's naming; *_traj.cfl is a trajectory,
# not a scan). Options go to `fhdrecon batch` unchanged (--iters, --lambda,
# --device, --force, ...). Exit status is fhdrecon's: 2 if any scan failed.
# FHDRECON overrides the binary (default: build/fhdrecon, else fhdrecon on PATH).
set -euo pipefail
if [[ $# -lt 2 ]]; then
  echo "usage: $0 DIR_IN DIR_OUT [fhdrecon batch options]" >&2
  exit 2
fi
in=$1 out=$2
shift 2
[[ -d $in ]] || { echo "$0: DIR_IN = $in: not a directory" >&2; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd)
exe=${FHDRECON:-$root/build/fhdrecon}
[[ -x $exe ]] || exe=$(command -v fhdrecon) || { echo "$0: no fhdrecon (set FHDRECON)" >&2; exit 2; }

shopt -s nullglob
files=()
for f in "$in"/*.h5 "$in"/*.mrd "$in"/*.ismrmrd; do files+=("$f"); done
for f in "$in"/*.cfl; do
  [[ $f == *_traj.cfl ]] && continue
  files+=("$f")
done
if [[ ${#files[@]} -eq 0 ]]; then
  echo "$0: no scans (*.h5, *.mrd, *.ismrmrd, *.cfl) in $in" >&2
  exit 2
fi
exec "$exe" batch "${files[@]}" --out "$out" "$@"
