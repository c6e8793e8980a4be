#!/usr/bin/env bash
# The CPU tests under AddressSanitizer + UndefinedBehaviorSanitizer, in their
# own build dir (CUDA off). Any report fails the run: UBSan aborts on the first
# finding (-fno-sanitize-recover=all), ASan on the first bad access.
#   scripts/sanitize.sh [area...]   areas: phantom recon io app fuzz_short (default: all;
#   only what they need is built). docs/robustness.md.
# BUILD_SAN=build-asan by default. scripts/test.sh (CI) runs it.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
BUILD_SAN=${BUILD_SAN:-build-asan}
gen=(); command -v ninja >/dev/null && gen=(-G Ninja)
[[ -f $BUILD_SAN/CMakeCache.txt ]] ||
  cmake -S . -B "$BUILD_SAN" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DFHD_CUDA=OFF -DFHD_SANITIZE=ON ${CMAKE_ARGS:-}
areas=("$@")
targets=()
for a in "${areas[@]}"; do
  case $a in
    fuzz_short) targets+=(--target fhd_fuzz) ;;
    app) targets+=(--target tests_app --target fhdrecon) ;;
    *) targets+=(--target "tests_$a") ;;
  esac
done
cmake --build "$BUILD_SAN" -j"$(nproc)" "${targets[@]}"
# Leaks are reported too; HDF5, OpenMP, ISMRMRD and fontconfig (loaded by Cairo
# for figure text) keep a few process-lifetime caches, which are not ours:
# those are suppressed by library name only.
supp=$(mktemp)
logs=$(mktemp -d)
trap 'rm -rf "$supp" "$logs"' EXIT
printf 'leak:libhdf5\nleak:libgomp\nleak:libismrmrd\nleak:libfontconfig\n' >"$supp"
# Every report also goes to a file (log_path): a reader child's (io/reader_child.hpp)
# stderr is closed and a test that expects its file refused would not see it.
export ASAN_OPTIONS="${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1:allocator_may_return_null=1}:log_path=$logs/asan"
export LSAN_OPTIONS=suppressions=$supp
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}:log_path=$logs/ubsan"
cd "$BUILD_SAN"
regex=""
((${#areas[@]})) && regex="^($(IFS='|'; echo "${areas[*]}"))\$"
rc=0
ctest --output-on-failure --timeout 1800 ${regex:+-R "$regex"} || rc=$?
bash "$root/scripts/sanitizer-reports.sh" "$logs" "sanitized test run" || rc=1
exit $rc
