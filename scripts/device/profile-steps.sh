# The profiling steps of scripts/device-test.sh: where the time goes (Nsight),
# issue 9's goals, and the operator layer against an older tree carried in .base
# (issue 23).
# Sourced by it: nothing runs on sourcing; the working directory is the
# repository root and OUT, BUILD are set.
# shellcheck shell=bash

# Where issue 9's 60 ms go: Nsight Compute's duration of every kernel of the
# case (128^3, 6000 x 256 radial, 30 iterations, --fhd nufft, Q not cached),
# summed by kernel name; and the stage table with lazy and eager module loading.
run_profile() {
  local common=(--phantom shepp3d --matrix 128 --traj radial3d --spokes 6000 --iters 30 --device gpu --no-cache
    --no-gridding --fhd nufft --out /tmp/profile) ncu=ncu
  command -v $ncu >/dev/null || ncu=$(ls /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
  for loading in LAZY EAGER; do
    echo "CUDA_MODULE_LOADING=$loading:"
    CUDA_MODULE_LOADING=$loading "$BUILD/fhdrecon" "${common[@]}" 2>&1 | grep -E '^(cmpMu|cmpFhD|Q |CG|iterative)'
  done
  "$BUILD/fhdrecon" "${common[@]}" --verbose 2>&1 | grep -E '^\[' | cut -c1-110 >"$OUT/profile-timeline.log"
  $ncu --clock-control none --metrics gpu__time_duration.sum --csv "$BUILD/fhdrecon" "${common[@]}" \
    >"$OUT/profile-ncu.csv" 2>"$OUT/profile-ncu.err" || { tail -5 "$OUT/profile-ncu.err"; return 1; }
  python3 - "$OUT/profile-ncu.csv" <<'PY'
import collections, csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
head = rows[0]
name, value = head.index("Kernel Name"), head.index("Metric Value")
total, count = collections.Counter(), collections.Counter()
for r in rows[1:]:
    k = r[name].split("(")[0][:60]
    total[k] += float(r[value].replace(",", "")) / 1e6  # ns -> ms
    count[k] += 1
print(f"{sum(total.values()):.2f} ms in {sum(count.values())} kernel launches")
for k, ms in total.most_common(25):
    print(f"{ms:8.3f} ms {count[k]:5d}x  {k}")
PY
}

# One run's stages in ms, their total (cmpMu + cmpFhD + Q + CG) and the PSNR.
stage_line() {
  python3 - "$1" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
s = {x["name"]: x["seconds"] * 1e3 for x in j["stages"]}
total = sum(s.get(k, 0) for k in ("cmpMu", "cmpFhD", "Q", "CG"))
print(" ".join(f"{k}={v:.1f}" for k, v in s.items()), f"total={total:.1f}", f"psnr={j['methods'][0]['psnr_db']:.2f}")
PY
}

# Issue 9's two goals, repeated (REPEAT, default 6) since one run varies with the
# machine: all stages of the 6000 x 256 case (30 iterations, Q not cached,
# --fhd nufft) against 60 ms, and the default 1M-sample run's wall time
# (process start to exit, outputs written) against 1.0 s. Medians printed.
run_issue9() {
  local i t0 n=${REPEAT:-6} stages=() walls=()
  local common=(--phantom shepp3d --matrix 128 --traj radial3d --spokes 6000 --iters 30 --device gpu --no-cache
    --no-gridding --fhd nufft --out /tmp/issue9 --json /tmp/issue9.json)
  # One untimed run first: the first GPU process after the machine starts pays
  # the driver's start-up (cmpFhD 0.16 s and Q 0.11 s instead of 5 and 15 ms).
  "$BUILD/fhdrecon" "${common[@]}" >/dev/null 2>&1
  for ((i = 0; i < n; ++i)); do
    "$BUILD/fhdrecon" "${common[@]}" >"$OUT/issue9-stages.log" 2>&1 || { tail -3 "$OUT/issue9-stages.log"; return 1; }
    stages+=("$(stage_line /tmp/issue9.json)")
    echo "stages (ms): ${stages[-1]}"
  done
  for ((i = 0; i < n; ++i)); do
    t0=$(date +%s%N)
    "$BUILD/fhdrecon" --phantom shepp3d --matrix 128 --samples 1048576 --fhd nufft --device gpu --no-cache \
      --out /tmp/issue9-wall >/dev/null 2>&1
    walls+=($((($(date +%s%N) - t0) / 1000000)))
  done
  printf '%s\n' "${stages[@]}" | sed 's/.*total=\([0-9.]*\).*/\1/' | sort -n |
    awk '{v[NR]=$1} END {printf "all stages: median %.1f ms over %d runs (goal <= 60 ms)\n", v[int((NR+1)/2)], NR}'
  printf '%s\n' "${walls[@]}" | sort -n |
    awk '{v[NR]=$1} END {printf "wall: median %d ms over %d runs (goal <= 1000 ms); all:", v[int((NR+1)/2)], NR; for (i=1;i<=NR;i++) printf " %d", v[i]; print ""}'
}

# Issue 23's "nothing moves": the tree in .base (the code before a change,
# carried: `git archive REV | tar -x -C .base`) built beside this one, then
# for both on this GPU: validate --preset book (the tables side by side), the
# default 64^3 run's PSNR, and the 128^3 6000 x 256 case (30 iterations,
# --fhd nufft, Q not cached) REPEAT times each, alternating, medians per stage.
build_base() {
  [[ -d .base ]] || { echo "ops: no .base tree carried"; return 1; }
  cmake -S .base -B build-base -G Ninja -DFHD_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 >build-base.configure.log 2>&1 &&
    cmake --build build-base -j"$(nproc)" --target fhdrecon >build-base.build.log 2>&1 ||
    { grep -E "error" build-base.build.log | head; return 1; }
  echo "base build: ok"
}

run_ops() {
  [[ -x build-base/fhdrecon ]] || build_base || return 1
  local t
  for t in base:build-base/fhdrecon new:$BUILD/fhdrecon; do
    "${t#*:}" validate --preset book --out "/tmp/ops-validate-${t%%:*}" --markdown "$OUT/validate-${t%%:*}.md"       >/dev/null 2>&1 || echo "validate ${t%%:*}: exit $?"
    "${t#*:}" --phantom shepp3d --device gpu --no-cache --out "/tmp/ops-default-${t%%:*}"       --json "/tmp/ops-default-${t%%:*}.json" >/dev/null 2>&1 || echo "default ${t%%:*}: failed"
  done
  # The base twice: the NUFFT's atomic spreading sums in a varying order, so a
  # row can move in its last digit from run to run.
  build-base/fhdrecon validate --preset book --out /tmp/ops-validate-base2 --markdown "$OUT/validate-base2.md" \
    >/dev/null 2>&1 || echo "validate base (2): exit $?"
  echo "validate base against base:"
  diff <(grep '^|' "$OUT/validate-base.md" | cut -d'|' -f2-8) <(grep '^|' "$OUT/validate-base2.md" | cut -d'|' -f2-8)
  echo "validate base against new (time column left out):"
  diff <(grep '^|' "$OUT/validate-base.md" | cut -d'|' -f2-8) <(grep '^|' "$OUT/validate-new.md" | cut -d'|' -f2-8) &&
    echo "validate --preset book: identical tables"
  local i common=(--phantom shepp3d --matrix 128 --traj radial3d --spokes 6000 --iters 30 --device gpu --no-cache
    --no-gridding --fhd nufft)
  for ((i = 0; i < ${REPEAT:-6}; i++)); do
    for t in base:build-base/fhdrecon new:$BUILD/fhdrecon; do
      "${t#*:}" "${common[@]}" --out /tmp/ops-case --json "/tmp/ops-${t%%:*}-$i.json" >/dev/null 2>&1 ||
        echo "case ${t%%:*} $i: failed"
    done
  done
  python3 - "${REPEAT:-6}" <<'PY'
import json, statistics, sys
n = int(sys.argv[1])
def psnr(path):
    return next(m["psnr_db"] for m in json.load(open(path))["methods"] if m["name"] == "iterative")
for t in ("base", "new"):
    print(f"default 64^3 run, {t}: iterative {psnr(f'/tmp/ops-default-{t}.json'):.4f} dB")
stages = {}
for t in ("base", "new"):
    for i in range(n):
        j = json.load(open(f"/tmp/ops-{t}-{i}.json"))
        for s in j["stages"]:
            stages.setdefault(s["name"], {}).setdefault(t, []).append(s["seconds"] * 1e3)
        stages.setdefault("PSNR", {}).setdefault(t, []).append(psnr(f"/tmp/ops-{t}-{i}.json"))
tot = {t: sum(statistics.median(v[t]) for k, v in stages.items() if k != "PSNR" and t in v) for t in ("base", "new")}
print(f"6000 x 256, 30 iterations, medians of {n}: stage, base ms, new ms, new/base")
for k, v in stages.items():
    b, w = statistics.median(v.get("base", [0])), statistics.median(v.get("new", [0]))
    print(f"  {k:<22} {b:9.3f} {w:9.3f} {w / b if b else 0:6.3f}")
print(f"  {'total of stages':<22} {tot['base']:9.3f} {tot['new']:9.3f} {tot['new'] / tot['base']:6.3f}")
four = ("cmpMu", "cmpFhD", "Q", "CG")
for t in ("base", "new"):
    print(f"  {t}: cmpMu + cmpFhD + Q + CG = {sum(statistics.median(stages[k][t]) for k in four if k in stages):.2f} ms (goal <= 60)")
walls, sums = [], []
for i in range(n):
    j = json.load(open(f"/tmp/ops-new-{i}.json"))
    it = next(m for m in j["methods"] if m["name"] == "iterative")
    walls.append(it.get("wall_seconds", 0) * 1e3)
    sums.append(sum(s["seconds"] for s in j["stages"] if s["name"] in four) * 1e3)
w, s = statistics.median(walls), statistics.median(sums)
print(f"  new: the iterative method's wall {w:.2f} ms, its stages' sum {s:.2f} ms ({(s - w) / w * 100:+.1f}%, goal within 5%)")
PY
}

# Where the operator layer's time goes beside the base tree's (issue 23's
# "nothing moves"): the 6000 x 256 case of both trees through the CUPTI
# timeline (scripts/device/timeline.cpp; the machine has no Nsight Systems):
# per stage, the GPU's busy time and its idle gaps with the calls the host was
# in meanwhile (scripts/device/timeline.py, one run of each tree reported in
# $OUT/timeline-*.txt), and the four stages of REPEAT runs of each tree read
# off the GPU's clock alike (scripts/device/book_stages.py; the base tree timed
# its stages on the host clock).
build_timeline() {
  local cuda
  cuda=$(dirname "$(dirname "$(command -v nvcc)")")
  g++ -std=c++17 -O2 -shared -fPIC -I"$cuda/include" -I"$cuda/extras/CUPTI/include" scripts/device/timeline.cpp \
    -L"$cuda/lib64" -L"$cuda/extras/CUPTI/lib64" -L"$cuda/lib" -Wl,-rpath,"$cuda/lib64:$cuda/extras/CUPTI/lib64:$cuda/lib" \
    -lcupti -o /tmp/libtimeline.so
}

run_opsprofile() {
  [[ -x build-base/fhdrecon ]] || build_base || return 1
  build_timeline || { echo "timeline: the CUPTI tracer did not build"; return 1; }
  local i t traces=() common=(--phantom shepp3d --matrix 128 --traj radial3d --spokes 6000 --iters 30 --device gpu
    --no-cache --no-gridding --fhd nufft --out /tmp/opsprof)
  for t in base:build-base/fhdrecon new:$BUILD/fhdrecon; do
    "${t#*:}" "${common[@]}" >/dev/null 2>&1  # the driver's first start-up, untraced
  done
  # REPEAT traced runs of each tree, alternating; the first of each reported in full.
  for ((i = 0; i < ${REPEAT:-6}; i++)); do
    for t in base:build-base/fhdrecon new:$BUILD/fhdrecon; do
      CUDA_INJECTION64_PATH=/tmp/libtimeline.so FHD_TIMELINE_OUT="/tmp/timeline-${t%%:*}-$i.csv" \
        "${t#*:}" "${common[@]}" >/dev/null 2>&1 || echo "traced run ${t%%:*} $i: failed"
    done
  done
  for t in base new; do
    python3 scripts/device/timeline.py "/tmp/timeline-$t-0.csv" --gap-us ${GAP_US:-20} >"$OUT/timeline-$t.txt" ||
      echo "timeline $t: failed"
    traces+=("$t=$(ls /tmp/timeline-$t-*.csv | paste -sd,)")
  done
  echo "== the four stages on the GPU's own clock, both trees measured alike (scripts/device/book_stages.py):"
  python3 scripts/device/book_stages.py "${traces[@]}"
}
