# The several-GPU steps of scripts/device-test.sh: voxel slabs (issue 14), every
# heavy operation across the GPUs of a host (issues 26, 27), warm batch workers
# (issue 26).
# Sourced by it: nothing runs on sourcing; the working directory is the
# repository root and OUT, BUILD are set.
# shellcheck shell=bash

# Issue 14: the exact FhD and Q by voxel slabs (--gpus). On a host with one GPU,
# --gpus 0,0 runs both slabs on it: the split's overhead, not a speed-up.
run_multi() {
  local g n=$(nvidia-smi -L 2>/dev/null | wc -l) lists=("1" "0,0")  # "1": a count, the first GPU
  ((n >= 2)) && lists+=("0,1")
  ((n >= 4)) && lists+=("0,1,2,3")
  for g in "${lists[@]}"; do
    echo "--gpus $g:"
    "$BUILD/fhdrecon" --phantom shepp3d --matrix 128 --samples 1048576 --iters 30 --device gpu --no-cache \
      --no-gridding --gpus $g --out /tmp/multi 2>&1 | grep -E '^(cmpFhD|Q |CG|iterative)'
  done
}

# Issues 26 and 27: every heavy operation across the GPUs of a host, at 1 GPU
# against 2 (and 4 where the host has them), each figure beside its goal, and
# every stage of the CLI's table at 1 GPU beside n (none may be slower). Each
# CLI run twice, the second counts (the first pays the GPUs' first calls); the
# 256^3 case (MULTI_BIG=1: a minute at 1 GPU) once.
multi_stages() {  # a fhdrecon log -> "stage<TAB>seconds" per row of its stage table
  awk '/^stage /{on=1; next} on && /^total/{exit}
       on && NF {n=substr($0,1,22); sub(/ +$/,"",n); printf "%s\t%s\n", n, substr($0,24,10)+0}' "$1"
}

multi_seconds() {  # log, stage names (regex; "iterative": the method's total) -> their seconds summed
  [[ $2 == iterative ]] && { iterative_seconds "$1"; return; }
  multi_stages "$1" | awk -F'\t' -v re="^($2)$" '$1 ~ re {s += $2} END {printf "%.3f", s}'
}

multi_run() {  # label, gpus, fhdrecon arguments...
  local label=$1 gpus=$2 r
  shift 2
  for ((r = 0; r < ${RUNS:-2}; r++)); do
    "$BUILD/fhdrecon" "$@" --device gpu --gpus "$gpus" --no-cache --no-gridding --no-images --out /tmp/multigpu \
      >"$OUT/multigpu-$label-${gpus//,/}.log" 2>&1 || { echo "$label --gpus $gpus: failed"; tail -5 "$OUT/multigpu-$label-${gpus//,/}.log"; return 1; }
  done
}

multi_compare() {  # label, stages (regex), what, gpus, goal ("-" none)
  local one=$OUT/multigpu-$1-1.log many=$OUT/multigpu-$1-${4//,/}.log
  awk -v w="$3" -v g="$4" -v goal="$5" -v a="$(multi_seconds "$one" "$2")" -v b="$(multi_seconds "$many" "$2")" 'BEGIN {
    r = b > 0 ? a / b : 0
    printf "%-44s 1 GPU %8.3f s, --gpus %-8s %8.3f s: %.2fx (goal %s%s)\n", w, a, g, b, r,
      goal == "-" ? "none" : ">= " goal "x", goal == "-" ? "" : (r >= goal ? ": met" : ": NOT met") }'
  # No stage slower on n GPUs than on 1 (5% and 2 ms of noise allowed).
  join -t $'\t' <(multi_stages "$one" | sort -t $'\t' -k1,1) <(multi_stages "$many" | sort -t $'\t' -k1,1) | awk -F'\t' -v g="$4" '{
    printf "    %-22s %8.3f s  %8.3f s (--gpus %s)%s\n", $1, $2, $3, g, ($3 > 1.05 * $2 + 0.002) ? "  SLOWER" : "" }'
}

run_multigpu() {
  local n=$(nvidia-smi -L 2>/dev/null | wc -l) lists=() g goal
  ((n >= 2)) && lists+=("0,1")
  ((n >= 4)) && lists+=("0,1,2,3")
  ((n >= 2)) || echo "multigpu: $n GPU(s): the 1-GPU figures only (the [gpu][multi] tests list GPU 0 several times)"
  local exact=(--phantom shepp3d --matrix 128 --samples 1048576 --iters 30 --fhd exact)
  local sense=(--phantom shepp3d --matrix 128 --samples 1048576 --iters 30 --fhd nufft --coils 8 --coil-combine sense)
  local big=(--phantom shepp3d --matrix 256 --samples 4194304 --iters 30 --fhd exact)
  for g in 1 "${lists[@]}"; do
    multi_run exact128 "$g" "${exact[@]}" || return 1
    multi_run sense "$g" "${sense[@]}" || return 1
    [[ ${MULTI_BIG:-0} == 1 ]] && { RUNS=1 multi_run exact256 "$g" "${big[@]}" || return 1; }
  done
  for g in "${lists[@]}"; do
    [[ $g == 0,1 ]] && goal=1.6 || goal=-
    multi_compare exact128 "cmpFhD|Q" "exact FhD + Q, 128^3, 1M samples" "$g" "$goal"
    [[ $g == 0,1 ]] && goal=1.8 || goal=3.2
    multi_compare sense iterative "8-coil SENSE 128^3 1M nufft, every stage" "$g" "$goal"
    multi_compare sense "SENSE CG" "8-coil SENSE, its CG stage alone" "$g" "-"
    if [[ ${MULTI_BIG:-0} == 1 ]]; then
      [[ $g == 0,1 ]] && goal=1.9 || goal=3.6
      multi_compare exact256 "cmpFhD|Q" "exact FhD + Q, 256^3, 4,194,304 samples" "$g" "$goal"
    fi
    # By its tags: Catch2 reads the commas of the case's name as three names.
    MULTI_GPUS=$g "$BUILD/tests_gpu" "[multi][.bench]" 2>&1 | grep -E "^type 1|FAILED|passed|failed|No test"
  done
  # 4 partitions on whatever GPUs exist (0,1,0,1 on two, 0,0,0,0 on one) equal one GPU.
  ((n >= 2)) && g=0,1,0,1 || g=0,0,0,0
  MULTI_GPUS=$g "$BUILD/tests_gpu" "[multi]~[bench]" 2>&1 | tail -3
}

# Issue 26: warm batch workers on the GPU. The batch tests (isolation, rows
# equal to a process per scan's) with the GPU as their device, then
# scripts/bench-batch-gpus.sh: 8 scans at 128^3, warm against a process per
# scan, 1 GPU against every GPU, each figure beside its goal (run it on
# nvidia-h100-x2 for the 2-GPU goals).
run_batch() {
  "$BUILD/tests_app" "[workers],[isolation],[server]" >"$OUT/batch-tests.log" 2>&1
  grep -B3 -A25 FAILED "$OUT/batch-tests.log" | head -60
  tail -3 "$OUT/batch-tests.log"
  bash scripts/bench-batch-gpus.sh "$BUILD/fhdrecon" 2>&1 | tee "$OUT/batch.log"
  # One of its scans alone, with the timeline: reading, host work, GPU stages
  # and writing on this host (docs/cluster.md's t_read, t_host, t_write).
  local T=${TMPDIR:-/tmp}/fhdrecon-bench-batch
  "$BUILD/fhdrecon" --verbose --input "$T/in/scan0.h5" --device gpu --trig sfu --cache-dir "$T/cache-warm" \
    --out /tmp/batch-timeline 2>&1 | grep -E "making the source|source:|density weights made|backend ready|info: [A-Za-z]|written in|swapped in|exiting" |
    tee "$OUT/batch-timeline.log"
}

# Issues 26 and 27: where 8-coil SENSE's time goes at 1 GPU, 2 and 4 (the
# CUPTI timeline of scripts/device/profile-steps.sh with each record's device;
# scripts/device/multi_timeline.py reads its longest stage, SENSE CG).
run_multiprofile() {
  build_timeline || { echo "timeline: the CUPTI tracer did not build"; return 1; }
  local g n=$(nvidia-smi -L 2>/dev/null | wc -l) lists=(1)
  ((n >= 2)) && lists+=("0,1")
  ((n >= 4)) && lists+=("0,1,2,3")
  local sense=(--phantom shepp3d --matrix 128 --samples 1048576 --iters 30 --fhd nufft --coils 8 --coil-combine sense
    --device gpu --no-cache --no-gridding --no-images --out /tmp/multiprofile)
  for g in "${lists[@]}"; do
    "$BUILD/fhdrecon" "${sense[@]}" --gpus "$g" >/dev/null 2>&1  # untraced: the GPUs' first calls
    CUDA_INJECTION64_PATH=/tmp/libtimeline.so FHD_TIMELINE_OUT="/tmp/multiprofile-${g//,/}.csv" \
      "$BUILD/fhdrecon" "${sense[@]}" --gpus "$g" 2>&1 | grep -E "^(coil maps|cmpFhD|Q |SENSE CG|iterative)"
    echo "== --gpus $g:"
    python3 scripts/device/multi_timeline.py "/tmp/multiprofile-${g//,/}.csv" --show ${SHOW:-60} ${STAGE:+--stage $STAGE}
    [[ $g == 1 ]] && continue
    echo "== --gpus $g, peer access off (FHD_PEER_ACCESS=0: cudaMalloc maps nothing into the peers; copies staged):"
    FHD_PEER_ACCESS=0 "$BUILD/fhdrecon" "${sense[@]}" --gpus "$g" 2>&1 | grep -E "^(coil maps|cmpFhD|Q |SENSE CG|total)"
    echo "== --gpus $g, once more (the spread between runs of one case):"
    "$BUILD/fhdrecon" "${sense[@]}" --gpus "$g" 2>&1 | grep -E "^(coil maps|cmpFhD|Q |SENSE CG|total)"
  done
  # The exact Q's slabs, each device's finish time (MULTI_BIG=1: 256^3 on every GPU).
  [[ ${MULTI_BIG:-0} == 1 ]] && "$BUILD/fhdrecon" --phantom shepp3d --matrix 256 --samples 4194304 --iters 30 --fhd exact \
    --device gpu --gpus "${lists[-1]}" --no-cache --no-gridding --no-images --out /tmp/multiprofile --verbose 2>&1 |
    grep -E "Q slab|Q faces|^(cmpFhD|Q ) "
}

# Issue 26: the recon command's default GPUs (app/device.cpp, default_more_gpus)
# on every GPU of the host: the wall time of each case with --gpus 1, --gpus all
# and no --gpus (which devices it took: report.json's "device"), three rounds,
# alternating. The default must match the faster of the other two in each case.
gpus_default_case() {  # label, fhdrecon arguments...
  local label=$1 g s e dev
  shift
  for g in 1 all default; do
    local pick=(--gpus "$g")
    [[ $g == default ]] && pick=()
    s=$(date +%s%N)
    "$BUILD/fhdrecon" --quiet "$@" --device gpu "${pick[@]}" --out /tmp/gpusdefault --json /tmp/gpusdefault.json \
      >/tmp/gpusdefault.log 2>&1 || { echo "$label --gpus $g failed:"; tail -3 /tmp/gpusdefault.log; return 1; }
    e=$(date +%s%N)
    dev=$(python3 -c "import json; print(json.load(open('/tmp/gpusdefault.json'))['device'].split(':')[0])")
    printf "%-34s %-8s %7d ms  %s\n" "$label" "$g" $(((e - s) / 1000000)) "$dev"
  done
}

run_gpusdefault() {
  local r
  # Q of the cached cases into the cache first
  "$BUILD/fhdrecon" --quiet --phantom shepp3d --matrix 192 --samples 2097152 --device gpu --gpus all --iters 5 \
    --out /tmp/gpusdefault >/dev/null 2>&1
  "$BUILD/fhdrecon" --quiet --phantom shepp3d --matrix 128 --samples 1048576 --device gpu --gpus all --iters 5 \
    --out /tmp/gpusdefault >/dev/null 2>&1
  for r in 1 2 3; do
    echo "round $r: case, --gpus, wall time, devices"
    gpus_default_case "64^3 default run" --phantom shepp3d
    gpus_default_case "128^3 / 1M exact, Q cached" --phantom shepp3d --matrix 128 --samples 1048576 --iters 30
    gpus_default_case "128^3 / 1M nufft" --phantom shepp3d --matrix 128 --samples 1048576 --iters 30 --fhd nufft
    gpus_default_case "192^3 / 2M exact, Q cached" --phantom shepp3d --matrix 192 --samples 2097152 --iters 5
  done
}
