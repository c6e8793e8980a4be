#!/usr/bin/env bash
# Fresh machine to the main job: install dependencies, build, reconstruct the
# embedded default (the 3D Shepp-Logan phantom) and print the accuracy table.
#   scripts/quickstart.sh [extra fhdrecon options]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh fhdrecon
bash scripts/python.sh install  # the Python package for python3 (docs/python.md)
exec build/fhdrecon --phantom shepp3d "$@"
