#!/usr/bin/env bash
# Downloads (here, where apt works) the Debian packages the GPU image lacks, into
# .devdeps/, for scripts/device-test.sh to unpack there (docs/gpu-backend.md, "Building on the GPU machine"),
# and pytest's wheels (its `python` step installs them where the image has no pytest).
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .devdeps && cd .devdeps
apt-get download libismrmrd1.8 libismrmrd-dev libpugixml1v5 libpugixml-dev nlohmann-json3-dev \
  libopenblas0 libopenblas0-pthread libopenblas-dev libopenblas-pthread-dev libgfortran5 \
  libnifti2-dev libniftiio-dev libniftiio2 libznz-dev libznz3 libnifticdf-dev libnifticdf2 libnifti2-2 \
  libcairo2 libcairo2-dev libpixman-1-0 libfontconfig1 libfreetype6 libxcb-render0 libxcb-shm0 libxrender1 \
  fontconfig-config fonts-dejavu-core
# pytest for Python 3.12 (the GPU image's), pure-Python wheels.
python3 -m pip download -q --only-binary :all: --python-version 3.12 -d wheels pytest
