#!/usr/bin/env bash
# Fresh machine to the main job: install dependencies, build, reconstruct the
# embedded default (the 3D Shepp-Logan phantom) and print the accuracy table.
#   scripts/quickstart.sh [extra fhdrecon options]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh fhdrecon
exec build/fhdrecon --phantom shepp3d "$@"
