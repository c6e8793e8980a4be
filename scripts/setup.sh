#!/usr/bin/env bash
# Installs every build and test dependency from Debian's packages (the Python
# package's test dependencies come from PyPI into a venv: scripts/python.sh).
# Idempotent: packages already present are skipped by apt-get.
set -euo pipefail
PKGS=(
  build-essential cmake ninja-build pkg-config
  libcli11-dev libspdlog-dev libfmt-dev nlohmann-json3-dev
  libhdf5-dev hdf5-tools libfftw3-dev libopenblas-dev
  catch2 libismrmrd-dev libpugixml-dev libnifti2-dev libpng-dev zlib1g-dev libcairo2-dev fonts-dejavu-core
  bart nifti-bin
  slurm-wlm munge
  python3-dev python3-venv python3-pip python3-numpy
)
missing=()
for p in "${PKGS[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
echo "setup: dependencies present"
