#!/usr/bin/env bash
# The long fuzz run (docs/robustness.md): at least 1,000 mutated files per
# reader (HDF5 scan, ISMRMRD one coil and several, BART k-space and
# trajectory, Q cache, profile) through the sanitizer build, so a memory error
# counts as a crash. Every process's sanitizer report is kept in a file
# (log_path): the fuzzer's children and the readers' own children (the libhdf5
# guard, io/reader_child.hpp, whose stderr is closed). Prints the counts;
# exit 0 only with 0 crashes, 0 hangs, 0 unexpected errors and 0 sanitizer
# reports of ours (scripts/sanitizer-reports.sh: libhdf5's own errors in a
# reader child are counted apart). Failing inputs and the reports are kept in $KEEP.
#   scripts/fuzz.sh [files per reader = 1000] [seed = 1]
#   BUILD_SAN=build scripts/fuzz.sh ...   runs a Release build instead
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-1000}
SEED=${2:-1}
BUILD_SAN=${BUILD_SAN:-build-asan}
KEEP=${KEEP:-fuzz-failures}
gen=(); command -v ninja >/dev/null && gen=(-G Ninja)
[[ -f $BUILD_SAN/CMakeCache.txt ]] ||
  cmake -S . -B "$BUILD_SAN" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DFHD_CUDA=OFF -DFHD_SANITIZE=ON ${CMAKE_ARGS:-}
cmake --build "$BUILD_SAN" -j"$(nproc)" --target fhd_fuzz >/dev/null
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0:allocator_may_return_null=1}:log_path=$logs/asan"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1}:log_path=$logs/ubsan"
start=$(date +%s)
rc=0
kind="ASan+UBSan build" limit=40
grep -q '^FHD_SANITIZE:BOOL=ON' "$BUILD_SAN/CMakeCache.txt" || kind="NOT a sanitizer build (FHD_SANITIZE off)" limit=20
# Each mutant's limit, a quarter of it the reader child's (fhd_fuzz): under ASan
# a child that dies in libhdf5 needs time to write its report (symbolizing on a
# loaded machine); killed at 5 s, one report of seed 26 was cut before its stack.
"$BUILD_SAN/fhd_fuzz" --per-reader "$N" --seed "$SEED" --keep "$KEEP" --limit-s "$limit" || rc=$?
if [[ -n $(ls -A "$logs") ]]; then
  mkdir -p "$KEEP/sanitizer-reports"
  cp "$logs"/* "$KEEP/sanitizer-reports/"
fi
bash scripts/sanitizer-reports.sh "$logs" "fuzz run" || rc=1
echo "fuzz: $(($(date +%s) - start)) s, $N files per reader, seed $SEED, $kind in $BUILD_SAN"
exit $rc
