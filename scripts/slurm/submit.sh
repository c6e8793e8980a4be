#!/usr/bin/env bash
# Submits a batch of scans to Slurm as a job array plus a merge job that runs
# after every task (docs/cluster.md):
#
#   scripts/slurm/submit.sh [--cpu] [--wait] [--max-running K] LIST OUT N [fhdrecon batch options]
#
# LIST: scans, one path per line; OUT: shared output directory; N: array
# tasks (shards). Each task gets one GPU (--gres=gpu:1) unless --cpu.
# --max-running K: at most K tasks at once (sbatch's %K). --wait: return when
# the merge has finished, with its exit status (0: every scan ok or skipped).
# Extra sbatch options: SBATCH_* variables (SBATCH_PARTITION, SBATCH_TIMELIMIT, ...).
# FHDRECON: the binary every task runs (default: build/fhdrecon, else PATH).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# ${a[@]+"${a[@]}"}: an empty array under set -u is "unbound" on bash < 4.4 (RHEL 7's 4.2).
gres=(--gres=gpu:1) wait=() limit=""
while [[ $# -gt 0 ]]; do
  case $1 in
    --cpu) gres=(); shift ;;
    --wait) wait=(--wait); shift ;;
    --max-running)
      [[ ${2:-} =~ ^[1-9][0-9]*$ ]] ||
        { echo "$0: --max-running needs a count (a positive number of tasks)${2:+, not '$2'}" >&2; exit 2; }
      limit="%$2"; shift 2 ;;
    *) break ;;
  esac
done
if [[ $# -lt 3 ]]; then
  echo "usage: $0 [--cpu] [--wait] [--max-running K] LIST OUT N [fhdrecon batch options]" >&2
  exit 2
fi
list=$1 out=$2 n=$3
shift 3
[[ -r $list ]] || { echo "$0: LIST = $list: not readable" >&2; exit 2; }
[[ $n =~ ^[1-9][0-9]*$ ]] || { echo "$0: N = $n: expected a positive count of tasks" >&2; exit 2; }
exe=${FHDRECON:-$here/../../build/fhdrecon}
[[ -x $exe ]] || exe=$(command -v fhdrecon) || { echo "$0: no fhdrecon (set FHDRECON)" >&2; exit 2; }
exe=$(realpath "$exe") list=$(realpath "$list")
mkdir -p "$out/logs"
out=$(realpath "$out")
array=$(sbatch --parsable --array="0-$((n - 1))$limit" ${gres[@]+"${gres[@]}"} --output="$out/logs/task-%a.log" \
  --export=ALL,FHDRECON="$exe",FHD_SHARDS="$n" "$here/fhdrecon-array.sbatch" "$list" "$out" "$@")
array=${array%%;*}
echo "submitted array job $array: $n tasks"
# afterany: the merge runs even when tasks failed, and names what is missing.
sbatch --parsable ${wait[@]+"${wait[@]}"} --dependency="afterany:$array" --job-name=fhdrecon-merge \
  --output="$out/logs/merge.log" --wrap="'$exe' --quiet batch --merge '$out'"
