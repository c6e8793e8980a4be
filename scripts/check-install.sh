#!/usr/bin/env bash
# `cmake --install BUILD --prefix P` into a fresh temporary prefix: the binary
# runs from there (--version), the man page is in place, and the library is
# usable by other programs: tests/install (a separate CMake project) finds the
# package with find_package(fhdrecon), builds a C++ program (recon/ and io/
# headers) and a C program (the C NUFFT interface) against it, and runs both;
# each checks its result against a direct sum (docs/library.md). ctest
# `install` runs it (CPU, under a minute); scripts/check-deb.sh checks the package.
#   scripts/check-install.sh [BUILD]
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=$(realpath "${1:-build}")
prefix=$(mktemp -d /tmp/fhdrecon-install.XXXXXX)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
bin=$prefix/bin/fhdrecon
[[ -x $bin ]] || { echo "check-install: $bin missing after cmake --install" >&2; exit 1; }
version=$("$bin" --version)
echo "$version"
[[ $version == fhdrecon* ]] || { echo "check-install: $bin --version printed: $version" >&2; exit 1; }
page=$(ls "$prefix"/share/man/man1/fhdrecon.1* 2>/dev/null | head -1)
[[ -n $page ]] || { echo "check-install: no share/man/man1/fhdrecon.1* under $prefix" >&2; exit 1; }
grep -q '^\.TH FHDRECON' "$page" || { echo "check-install: $page is not the man page (.TH FHDRECON)" >&2; exit 1; }
[[ -f $prefix/share/doc/fhdrecon/README.md ]] || { echo "check-install: README.md not in share/doc/fhdrecon" >&2; exit 1; }
for f in include/fhdrecon/fhdrecon_nufft.h include/fhdrecon/recon/nufft/nufft_cpu.hpp; do
  [[ -f $prefix/$f ]] || { echo "check-install: $f not installed" >&2; exit 1; }
done
# Another project against the installed package, built outside this tree.
consumer=$prefix/consumer-build
gen=(); command -v ninja >/dev/null && gen=(-G Ninja)
cmake -S "$src/tests/install" -B "$consumer" "${gen[@]}" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release \
  >"$prefix/consumer.log" 2>&1 || { cat "$prefix/consumer.log" >&2; echo "check-install: find_package(fhdrecon) failed" >&2; exit 1; }
cmake --build "$consumer" >>"$prefix/consumer.log" 2>&1 || { cat "$prefix/consumer.log" >&2; echo "check-install: the consumer did not build" >&2; exit 1; }
(cd "$consumer" && ./consumer_cpp && ./consumer_c)
echo "check-install: OK ($bin, $page, C++ and C programs built against $prefix)"
