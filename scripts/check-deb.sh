#!/usr/bin/env bash
# Installs the fhdrecon .deb into a fresh Debian 12 root (debootstrap + chroot),
# then runs `fhdrecon --phantom shepp2d` and `man fhdrecon` there.
# Needs root, a Debian mirror and a few minutes, so it is not part of CI
# (scripts/test.sh); run it by hand before a release.
#   scripts/check-deb.sh [fhdrecon_*.deb]    (default: cpack in $BUILD, a CPU build)
# The default BUILD is build-cpu, configured with FHD_CUDA=OFF: a CUDA build's
# package depends on NVIDIA's CUDA packages, which a fresh Debian root lacks.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build-cpu}
export BUILD CMAKE_ARGS="-DFHD_CUDA=OFF ${CMAKE_ARGS:-}"
MIRROR=${MIRROR:-http://deb.debian.org/debian}
deb=${1:-}
if [[ -z $deb ]]; then
  bash scripts/build.sh fhdrecon
  (cd "$BUILD" && cpack -G DEB >/dev/null)
  deb=$(ls -t "$BUILD"/fhdrecon_*.deb | head -1)
fi
deb=$(realpath "$deb")
echo "== package: $deb"
dpkg-deb -f "$deb" Package Version Architecture Depends
command -v debootstrap >/dev/null || apt-get install -y -qq debootstrap >/dev/null
root=$(mktemp -d /tmp/fhdrecon-debroot.XXXXXX)
cleanup() {
  umount "$root/proc" 2>/dev/null || true
  rm -rf "$root" "$root.log"
}
trap cleanup EXIT
echo "== debootstrap --variant=minbase bookworm (fresh root $root)"
debootstrap --variant=minbase bookworm "$root" "$MIRROR" >"$root.log" 2>&1 || { tail -20 "$root.log"; exit 1; }
cp "$deb" "$root/tmp/"
mount -t proc proc "$root/proc"
in_root() { chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
  DEBIAN_FRONTEND=noninteractive /bin/bash -c "$1"; }
echo "== apt install ./$(basename "$deb") (and man-db, to read the page)"
in_root "apt-get update -qq && apt-get install -y -qq --no-install-recommends man-db ./tmp/$(basename "$deb") >/tmp/apt.log 2>&1 || { tail -20 /tmp/apt.log; exit 1; }; dpkg -s fhdrecon | grep -E '^(Status|Version|Depends)'"
echo "== fhdrecon --version"
in_root "fhdrecon --version"
echo "== fhdrecon --phantom shepp2d"
in_root "cd /tmp && fhdrecon --phantom shepp2d && ls fhdrecon-out"
echo "== man fhdrecon"
in_root "MANWIDTH=80 MANPAGER=cat man fhdrecon | head -24"
echo "check-deb: OK"
