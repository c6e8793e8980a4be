# The reconstruction steps of scripts/device-test.sh: SENSE, field maps,
# regularization quality and PCG, the compositions and their settings, and SigPy
# beside them.
# Sourced by it: nothing runs on sourcing; the working directory is the
# repository root and OUT, BUILD are set.
# shellcheck shell=bash

# Issue 11's GPU cases: SENSE against RSS at 128^3 with 8 synthesized coils and
# 1% correlated noise (PSNR against the object as the array sees it), and the
# time of 8-coil SENSE against one coil with the same operator kind (Q computed).
run_sense() {
  local s a m common=(--phantom shepp3d --matrix 128 --iters 30 --device gpu --no-cache --no-gridding)
  for s in 262144 131072; do
    for a in "rss" "sense --maps lowres" "sense --maps espirit" "sense --maps true" "sense --maps true --maps-crop 0"; do
      echo "$s samples, 8 coils, --coil-combine $a: $("$BUILD/fhdrecon" "${common[@]}" --samples $s --coils 8 \
        --noise 0.01 --fhd nufft --coil-combine $a --out /tmp/sense 2>&1 | grep -E '^iterative' | head -1)"
    done
  done
  sense_time nufft && sense_time exact
}

# The iterative method's time (its stages' total: maps, E^H y, Q, CG) from a
# fhdrecon log: the "iterative" row's time column.
iterative_seconds() { awk '$1 == "iterative" { print $4; exit }' "$1"; }

# Issue 11's time goal for one operator kind: 128^3, 1,048,576 samples, 30
# iterations, Q computed; 8-coil SENSE at most 3x one coil. Each run twice
# (the first also pays for the GPU's and FFTW's first calls); the second counts.
sense_time() {
  local m=$1 r one eight common=(--phantom shepp3d --matrix 128 --iters 30 --device gpu --no-cache --no-gridding
    --samples 1048576 --fhd "$1" --no-images)
  for r in 1 2; do
    "$BUILD/fhdrecon" "${common[@]}" --out /tmp/sense1 >"$OUT/sense-1coil-$m.log" 2>&1
    "$BUILD/fhdrecon" "${common[@]}" --coils 8 --coil-combine sense --out /tmp/sense8 >"$OUT/sense-8coil-$m.log" 2>&1
  done
  echo "--fhd $m, 1 coil:"; grep -E '^(cmpMu|cmpFhD|Q |CG|iterative)' "$OUT/sense-1coil-$m.log"
  echo "--fhd $m, 8 coils SENSE:"; grep -E '^(coil maps|cmpFhD|Q |SENSE CG|iterative)' "$OUT/sense-8coil-$m.log"
  one=$(iterative_seconds "$OUT/sense-1coil-$m.log")
  eight=$(iterative_seconds "$OUT/sense-8coil-$m.log")
  awk -v m="$m" -v a="$one" -v b="$eight" 'BEGIN {
    r = b / a; printf "--fhd %s: stages 1 coil %.3f s, 8 coils %.3f s: %.2fx (goal <= 3x: %s)\n", m, a, b, r, r <= 3 ? "met" : "NOT met" }'
}

# Issue 11's field-map case in 3D (docs/field-maps.md): stack-of-spirals at
# FIELD_MATRIX (64) from FIELD_SAMPLES (1,048,576: each partition's spiral at
# its in-plane Nyquist count; the phantom default's samples leave a 3D spiral
# stack 8x under it, a 13 dB image), +-150 Hz, readouts of 10 and 20 ms, 30
# iterations with the NUFFT operators: PSNR uncompensated, time-segmented,
# exact (cuda/field/field_gather.hpp's gathers, two per CG iteration over every
# sample-voxel pair) and without off-resonance, and the time of each (cmpFhD +
# Q + CG: the cost of compensation). fieldexact runs the exact model alone at
# 128^3 (minutes) in a command of its own.
field_case() {  # log name, matrix, then the environment for scripts/field-accuracy.sh
  local log=$1 matrix=$2
  shift 2
  env OUTDIR=/tmp/fhd-field PHANTOM=shepp3d TRAJ=stack-of-spirals MATRIX=$matrix HZ=150 ITERS=30 "$@" \
    bash scripts/field-accuracy.sh "$BUILD/fhdrecon" -- --fhd nufft --device gpu --samples "${FIELD_SAMPLES:-1048576}" \
    2>&1 | tee "$OUT/$log.log"
  grep -E "^(time segments|cmpFhD|Q |Q \(segments\)|CG |total|iterative)" /tmp/fhd-field/*.log \
    >"$OUT/$log-stages.log" || true
}

run_fieldmap() { field_case fieldmap "${FIELD_MATRIX:-64}" READOUTS="10 20" METHODS="none segmented exact"; }

run_fieldexact() { field_case fieldexact 128 READOUTS="${FIELD_READOUTS:-10}" METHODS="exact"; }

# Issue 10's GPU cases at 128^3 (NUFFT operators, Q not cached): --lambda auto
# against fixed lambdas, noiseless and at 1% noise; TV at its default (the
# noise rule, recon/solvers/tv.hpp) against l2 at several lambdas, at 1M and 262,144
# samples; preconditioned CG at 30 iterations against plain CG at 100.
# One line per run: PSNR (dB) against the phantom, then against the
# band-limited image, iterations, lambda and the rule that chose it; then a
# summary of the goals (TV >= best l2 + 1 dB at 1% noise, TV above the 27.15 dB
# ceiling noiseless, PCG at 30 >= plain CG at 100).
quality_row() {
  "$BUILD/fhdrecon" --phantom shepp3d --matrix 128 --device gpu --no-cache --fhd nufft "$@" \
    --out /tmp/quality --json /tmp/quality.json >/dev/null 2>&1 || { echo "$*: failed"; return 1; }
  python3 - "$*" <<'PY'
import json, sys
j = json.load(open("/tmp/quality.json"))
m = {x["name"]: x for x in j["methods"]}
it = m["iterative"]
st = {s["name"]: s["seconds"] for s in j.get("stages", [])}
print(f'{sys.argv[1]}: {it["psnr_db"]:.2f} dB, band-limited {it.get("psnr_band_limited_db", 0):.2f}, '
      f'{it["iterations"]} iterations, {it["seconds"]:.3f} s, lambda {j["options"]["lambda"]:.4g} '
      f'({j["options"]["lambda_rule"]}); gridding-kb {m.get("gridding-kb", {}).get("psnr_db", 0):.2f}; '
      f'lambda stage {st.get("lambda (auto)", 0):.3f} s, noise estimate {st.get("noise estimate", 0):.3f} s')
with open("/tmp/quality.rows", "a") as f:
    solve = st.get("CG", st.get("ADMM-TV", it["seconds"]))  # the solver's own stage
    f.write(f'{sys.argv[1]}\t{it["psnr_db"]:.3f}\t{it["seconds"]:.3f}\t{it["iterations"]}\t{solve:.4f}\n')
PY
}

quality_summary() {
  python3 - <<'PY'
rows = [l.rstrip("\n").split("\t") for l in open("/tmp/quality.rows")]
r = {a: (float(p), float(t), int(i), float(c)) for a, p, t, i, c in rows}
print("summary:")
for s in ("1048576", "262144"):
    for n in ("0", "0.01"):
        base = f"--samples {s} --noise {n} --no-gridding"
        l2 = {a: v for a, v in r.items() if a.startswith(base + " --lambda")}
        tv = r.get(base + " --reg tv --iters 30")
        if not l2 or not tv:
            continue
        best = max(l2, key=lambda a: l2[a][0])
        goal = "TV >= l2 + 1 dB" if n != "0" else "TV above the ceiling 27.15 dB" if s == "1048576" else "TV >= l2 + 2 dB"
        print(f"  {s} samples, noise {n}: TV {tv[0]:.2f} dB ({tv[1]:.3f} s), best l2 {l2[best][0]:.2f} "
              f"({best.split()[-1]}), TV - l2 {tv[0] - l2[best][0]:+.2f}  [goal: {goal}]")
pc, p100 = r.get("--samples 1048576 --no-gridding --iters 30"), r.get("--samples 1048576 --no-gridding --iters 100 --no-precond")
p30 = r.get("--samples 1048576 --no-gridding --iters 30 --no-precond")
if pc and p100 and p30:
    # Per iteration from the CG stage alone (its set-up included): the method's
    # time also holds cmpMu, cmpFhD and Q, the same for both.
    print(f"  PCG 30: {pc[0]:.2f} dB ({pc[3] / pc[2] * 1e3:.2f} ms/iteration with set-up); plain CG 100: {p100[0]:.2f} "
          f"({p100[3] / p100[2] * 1e3:.2f} ms/iteration); plain CG 30: {p30[0]:.2f}  [goal: PCG 30 >= plain 100, <= 1.5x per iteration]")
PY
}

run_quality() {
  local n l s
  rm -f /tmp/quality.rows
  for n in 0 0.01; do
    for l in auto 0.003 0.03 0.3 1; do quality_row --samples 1048576 --noise $n --lambda $l; done
  done
  # l2's best lambda at 1% noise was 3 on 2026-11-24 (docs/accuracy.md), 0.03 noiseless.
  for s in 1048576 262144; do
    for n in 0 0.01; do
      for l in 0.03 auto 1 3; do quality_row --samples $s --noise $n --no-gridding --lambda $l; done
      quality_row --samples $s --noise $n --no-gridding --reg tv --iters 30
    done
  done
  quality_row --samples 1048576 --no-gridding --iters 30
  quality_row --samples 1048576 --no-gridding --iters 30 --no-precond
  quality_row --samples 1048576 --no-gridding --iters 100 --no-precond
  quality_summary
}

# Issue 10's PCG goal: preconditioned CG at 30 iterations against plain CG at
# 100, PSNR and CG time per iteration, on the 128^3 / 1M radial case and the
# 64^3 default (exact FhD and Q there, as the default run has them). The time
# per iteration is also given without the set-up (operator, preconditioner),
# from the difference of two runs: at 64^3 the set-up is most of 30 iterations.
run_pcg() {
  local case runs
  for case in "--matrix 128 --samples 1048576 --fhd nufft" "--matrix 64"; do
    for runs in "p30:--iters 30" "p60:--iters 60" "c30:--iters 30 --no-precond" "c100:--iters 100 --no-precond"; do
      "$BUILD/fhdrecon" --phantom shepp3d $case ${runs#*:} --tol 0 --device gpu --no-gridding --no-images \
        --cache-dir /tmp/pcg-cache --json "/tmp/pcg-${runs%%:*}.json" >/dev/null 2>&1 || { echo "$case $runs: failed"; return 1; }
    done
    python3 - "$case" <<'PY'
import json, sys
def run(name):
    j = json.load(open(f"/tmp/pcg-{name}.json"))
    it = next(m for m in j["methods"] if m["name"] == "iterative")
    return it["psnr_db"], next(s["seconds"] for s in j["stages"] if s["name"] == "CG") * 1e3
(p30, tp30), (_, tp60), (_, tc30), (c100, tc100) = run("p30"), run("p60"), run("c30"), run("c100")
mp, mc = (tp60 - tp30) / 30, (tc100 - tc30) / 70
print(f"{sys.argv[1]}: PCG 30 {p30:.3f} dB, plain CG 100 {c100:.3f} dB ({p30 - c100:+.3f}); ms per iteration "
      f"with set-up {tp30 / 30:.2f} vs {tc100 / 100:.2f}, without {mp:.2f} vs {mc:.2f} ({mp / mc:.2f}x)")
PY
  done
  echo "goal: PCG at 30 >= plain CG at 100, at <= 1.5x the time per iteration"
}

run_peer() {
  [[ -d .peers ]] || { echo "peer: no .peers folder carried"; return 1; }
  RESULTS_DIR="$OUT" ITERS=30 bash .peers/sigpy_run.sh >/dev/null 2>&1
  grep -hE '"name"|seconds|psnr' "$OUT/sigpy.jsonl" | head -20
}

# SigPy's SENSE time, one coil and 8 (scripts/peer_sense.py), beside fhdrecon's
# sense_time: what the same algorithm costs per coil in a peer, and fhdrecon's
# time and PSNR with the coils compressed (--virtual-coils K).
run_peersense() {
  local site=/tmp/site k
  if [[ -d .peers/whl ]]; then
    [[ -d $site/sigpy ]] || python3 -m pip install -q --no-index --no-deps --target "$site" .peers/whl/sigpy*.whl \
      .peers/whl/pywavelets*.whl || return 1
    PYTHONPATH=$site python3 scripts/peer_sense.py --matrix 128 --samples 1048576 --coils 8 --iters 30 2>&1 |
      tee "$OUT/peer-sense.log" | grep -v Warning
  else
    echo "peersense: no .peers/whl carried; SigPy not timed"
  fi
  sense_time nufft
  for k in 4 3 2; do
    "$BUILD/fhdrecon" --phantom shepp3d --matrix 128 --iters 30 --device gpu --no-cache --no-gridding --no-images \
      --samples 1048576 --fhd nufft --coils 8 --noise 0.01 --coil-combine sense --virtual-coils $k --out /tmp/sensek \
      >"$OUT/sense-virtual-$k.log" 2>&1
    echo "8 coils, --noise 0.01, --virtual-coils $k: $(grep -E '^iterative' "$OUT/sense-virtual-$k.log")"
  done
  "$BUILD/fhdrecon" --phantom shepp3d --matrix 128 --iters 30 --device gpu --no-cache --no-gridding --no-images \
    --samples 1048576 --fhd nufft --coils 8 --noise 0.01 --coil-combine sense --out /tmp/sensek >"$OUT/sense-all.log" 2>&1
  echo "8 coils, --noise 0.01, all coils: $(grep -E '^iterative' "$OUT/sense-all.log")"
}

# Issue 23's compositions on the GPU: SENSE with l2, TV and the wavelet at
# 128^3 from 262,144 samples of 8 coils with 1% noise, 30 iterations (TV's
# goal: 1 dB above l2); SENSE with a field map (64^3, 8 coils, stack of
# spirals, 100 Hz over 10 ms, segmented) against the same data without
# off-resonance (goal: within 0.3 dB).
run_compose() {
  local reg r
  local sense=(--phantom shepp3d --matrix 128 --samples 262144 --coils 8 --noise 0.01 --iters 30 --fhd nufft
    --device gpu --no-cache --no-gridding --no-images)
  for reg in l2 tv wavelet; do
    "$BUILD/fhdrecon" "${sense[@]}" --reg $reg --out /tmp/compose --json "/tmp/compose-$reg.json" >/dev/null 2>&1 ||
      echo "SENSE + $reg: failed"
  done
  local field=(--phantom shepp3d --matrix 64 --traj stack-of-spirals --samples 262144 --coils 8 --iters 30
    --fhd nufft --device gpu --no-cache --no-gridding --no-images --readout-ms 10)
  for r in 0 100; do
    "$BUILD/fhdrecon" "${field[@]}" --off-resonance $r --out /tmp/compose --json "/tmp/compose-field$r.json"       >/dev/null 2>&1 || echo "SENSE, off-resonance $r: failed"
  done
  python3 - <<'PY'
import json
def row(name):
    j = json.load(open(f"/tmp/compose-{name}.json"))
    it = next(m for m in j["methods"] if m["name"] == "iterative")
    st = {s["name"]: s["seconds"] for s in j["stages"]}
    return it["psnr_db"], sum(st.values()), j.get("field", {}).get("segments", 0)
l2 = row("l2")[0]
for reg in ("l2", "tv", "wavelet"):
    db, s, _ = row(reg)
    print(f"SENSE + {reg:<8} 128^3, 8 coils, 262,144 samples, 1% noise, 30 it: {db:.2f} dB ({db - l2:+.2f} vs l2), stages {s:.2f} s")
print("goal: SENSE + TV >= SENSE + l2 + 1 dB")
a, sa, _ = row("field0")
b, sb, seg = row("field100")
print(f"SENSE, 64^3 stack of spirals, 8 coils: no off-resonance {a:.2f} dB ({sa:.2f} s); 100 Hz over 10 ms, "
      f"segmented L = {seg}: {b:.2f} dB ({sb:.2f} s), {b - a:+.2f} dB (goal: within 0.3 dB)")
PY
}

# SENSE + TV's settings (issue 23's goal: 1 dB above SENSE + l2 at 128^3,
# 8 coils, 262,144 samples, 1% noise, 30 iterations): one synthesized file,
# then lambda (the noise rule, or given), ADMM's rho and inner steps.
run_sweep() {
  # The phantom itself, not a synthesized file: a file's PSNR is scored against
  # the bare phantom, while SENSE returns phantom x the array's gain.
  local args base=(--phantom shepp3d --matrix 128 --samples 262144 --coils 8 --noise 0.01 --iters 30 --fhd nufft
    --device gpu --no-cache --no-gridding --no-images --out /tmp/sweep)
  for args in "--reg l2" "--reg l2 --lambda auto" "--reg tv" ${SWEEP_ARGS:-"--reg tv --lambda 0.01" "--reg tv --lambda 0.02" \
      "--reg tv --lambda 0.05" "--reg tv --admm-rho 0.3" "--reg tv --admm-rho 0.03" "--reg tv --admm-inner 10" \
      "--reg tv --admm-rho 0.3 --admm-inner 10" "--reg wavelet" "--reg wavelet --lambda 0.01" "--reg wavelet --lambda 0.05"}; do
    "$BUILD/fhdrecon" "${base[@]}" $args --json /tmp/sweep.json >/dev/null 2>&1 || { echo "$args: failed"; continue; }
    python3 - "$args" <<'PY'
import json, sys
j = json.load(open("/tmp/sweep.json"))
it = next(m for m in j["methods"] if m["name"] == "iterative")
print(f'{sys.argv[1]:<44} {it["psnr_db"]:.2f} dB  lambda {j["options"]["lambda"]:.4g} ({j["options"]["lambda_rule"][:40]})  {it["seconds"]:.2f} s')
PY
  done
}
