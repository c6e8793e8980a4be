#!/usr/bin/env bash
# On the lent GPU machine: unpack the carried packages the image lacks, build
# with CUDA, run the [gpu] tests and the benchmarks, write logs under $OUT.
#   scripts/device-test.sh [build] [test] [bench] [e2e] [nufft] [tune] [validate] [sanitize] [sense] [fieldmap] [fieldexact] [quality] [pcg] [multi] [batch] [profile] [issue9] [peer] [peersense] [cpunufft] [gpunufft] [python] [ops] [opsprofile] [compose] [sweep] [multigpu] [nufftpeer] [multiprofile] [gpusdefault]
#   (default: build test bench e2e tune validate; sanitize runs compute-sanitizer over
#   the [gpu] tests, nufft the --fhd exact/nufft end-to-end cases, peer SigPy on the
#   same kind of data: carry .peers, an optional local copy of the peer tools;
#   peersense SigPy's SENSE at one coil and 8 beside fhdrecon's, and coil compression;
#   ops compares this tree with an older one carried in .base (the operator layer's
#   "nothing moves": validate tables, PSNRs, the 6000 x 256 case's stages); opsprofile
#   the same case of both trees through a CUPTI timeline (scripts/device/timeline.cpp:
#   idle gaps against the host's calls, and the stages read off the GPU clock); compose
#   the compositions' accuracy: SENSE with l2, TV and the wavelet, SENSE with a field map)
#   cpunufft issue 25's CPU half on two idle cores of the host: the CPU NUFFT
#   against FINUFFT (.peers/whl/finufft*.whl; cuFINUFFT too where cufinufft and
#   cupy import) and the default run alone and beside two busy processes)
#   gpunufft issue 25's GPU half: batched NUFFT (8) against 8 single calls, plan and
#   set-points time at 128^3 and 256^3 and execute beside cuFINUFFT's where
#   cufinufft and cupy import (.peers/site), type 2's phases, 8-coil SENSE's CG
#   per coil and iteration; needs the fhdrecon target built)
#   python the Python package on the GPU: its [gpu] pytest tests on CuPy and
#   PyTorch arrays and Plan's type 1 against bench-nufft, after build)
#   multigpu issues 26 and 27 on every GPU of the host: exact FhD + Q, 8-coil SENSE and
#   single-coil type 1 at 1 GPU against 2 and 4, each speed-up beside its goal, and
#   every stage at 1 GPU beside n (MULTI_BIG=1 adds 256^3 / 4,194,304 samples, ~1.5 min)
#   nufftpeer issue 25's GPU table: type 1 and 2 at 128^3 / 1M and 256^3 / 16.8M, uniform
#   and radial, tol 1e-5 and 1e-6, beside cuFINUFFT built from .peers in the same run)
#   multiprofile 8-coil SENSE at 1 GPU, 2 and 4 through the CUPTI timeline: its longest (STAGE=K: its K-th)
#   stage (SENSE CG) per device, busy time, kernels, peer copies, one iteration's records
#   gpusdefault the recon command's default --gpus on every GPU of the host: wall time
#   with --gpus 1, all and none at 64^3 to 192^3, and which GPUs the default took
#   (PACK=1 after any steps: $OUT as one archive, out.tgz)
# Run through the device tool with carry [".devdeps"]; .devdeps holds the .deb
# files of the packages the GPU machine's image lacks (docs/gpu-backend.md,
# "Building on the GPU machine"; make it with scripts/fetch-devdeps.sh).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
BUILD=${BUILD:-build-gpu}
steps=("$@")
((${#steps[@]})) || steps=(build test bench e2e tune validate)
has() { [[ " ${steps[*]} " == *" $1 "* ]]; }

unpack_devdeps() {
  # Only packages the image lacks: never overwrite what it ships.
  for f in .devdeps/*.deb; do
    [[ -e $f ]] || continue
    pkg=$(dpkg-deb -f "$f" Package)
    dpkg -s "$pkg" >/dev/null 2>&1 || dpkg -x "$f" /
  done
  ldconfig
}

build() {
  unpack_devdeps
  nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,driver_version --format=csv >"$OUT/gpu.txt" 2>&1
  cat "$OUT/gpu.txt"
  # Build logs stay in the build dir ($OUT brings back only 8 files); the
  # compiler's register report (FHD_PTXAS_VERBOSE) is kept.
  cmake -S . -B "$BUILD" -G Ninja -DFHD_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DFHD_PTXAS_VERBOSE=ON >"$BUILD.configure.log" 2>&1 ||
    { tail -40 "$BUILD.configure.log"; return 1; }
  # TARGETS="tests_gpu fhdrecon" builds only those.
  cmake --build "$BUILD" -j"$(nproc)" ${TARGETS:+--target $TARGETS} >"$BUILD.build.log" 2>&1 ||
    { grep -E "error|Error" "$BUILD.build.log" | head -40; return 1; }
  grep -E "registers|spill" "$BUILD.build.log" >"$OUT/ptxas.txt" || true
  echo "build: ok"
}

# The steps, one file per topic under scripts/device/ (each defines run_<step>
# functions; the working directory is now the repository root).
source scripts/device/core-steps.sh
source scripts/device/recon-steps.sh
source scripts/device/nufft-steps.sh
source scripts/device/multi-steps.sh
source scripts/device/profile-steps.sh

rc=0
has build && { build || exit 1; }
has test && { run_tests || rc=1; }
has bench && { run_bench || rc=1; }
has e2e && { run_e2e || rc=1; }
has tune && { run_tune || rc=1; }
has validate && { run_validate || rc=1; }
has nufft && { run_nufft || rc=1; }
has sense && { run_sense || rc=1; }
has fieldmap && { run_fieldmap || rc=1; }
has fieldexact && { run_fieldexact || rc=1; }
has quality && { run_quality 2>&1 | tee "$OUT/quality.log" || rc=1; }
has pcg && { run_pcg 2>&1 | tee "$OUT/pcg.log" || rc=1; }
has multi && { run_multi || rc=1; }
has batch && { run_batch || rc=1; }
has profile && { run_profile 2>&1 | tee "$OUT/profile.log" || rc=1; }
has issue9 && { run_issue9 2>&1 | tee "$OUT/issue9.log" || rc=1; }
has peer && { run_peer || rc=1; }
has peersense && { run_peersense || rc=1; }
has sanitize && { run_sanitize || rc=1; }
has basebuild && { build_base || rc=1; }
has ops && { run_ops 2>&1 | tee "$OUT/ops.log" || rc=1; }
has opsprofile && { run_opsprofile 2>&1 | tee "$OUT/opsprofile.log" || rc=1; }
has sweep && { run_sweep 2>&1 | tee "$OUT/sweep.log" || rc=1; }
has compose && { run_compose 2>&1 | tee "$OUT/compose.log" || rc=1; }
has cpunufft && { run_cpunufft || rc=1; }
has multigpu && { run_multigpu 2>&1 | tee "$OUT/multigpu.log" || rc=1; }
has nufftpeer && { run_nufftpeer || rc=1; }
has gpunufft && { run_gpunufft || rc=1; }
has python && { run_python || rc=1; }
has multiprofile && { run_multiprofile 2>&1 | tee "$OUT/multiprofile.log" || rc=1; }
has gpusdefault && { run_gpusdefault 2>&1 | tee "$OUT/gpusdefault.log" || rc=1; }
# The device tool brings back only a few files from $OUT: PACK=1 leaves one
# archive of them all.
if [[ ${PACK:-0} == 1 ]]; then
  tar czf /tmp/out.tgz -C "$OUT" . && find "$OUT" -mindepth 1 -delete && mv /tmp/out.tgz "$OUT/out.tgz"
fi
exit $rc
