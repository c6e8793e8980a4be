#!/usr/bin/env bash
# `cmake --install BUILD --prefix P` into a fresh temporary prefix: the binary
# runs from there (--version) and the man page is in place. ctest `install`
# runs it (CPU only, a few seconds); scripts/check-deb.sh checks the package.
#   scripts/check-install.sh [BUILD]
set -euo pipefail
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
echo "check-install: OK ($bin, $page)"
