#!/usr/bin/env bash
# MRI-NUFFT 1.5.1's own test suite with fhdrecon's backend (docs/python.md,
# "MRI-NUFFT"): downloads mri-nufft's sdist from PyPI (pip download
# --no-binary), unpacks its tests/, points every backend parametrization that
# lists finufft at "fhdrecon" (scripts/mrinufft_point.py), and runs
# tests/operators with --backend fhdrecon --ref finufft. fhdrecon is loaded
# as a pytest plugin (-p fhdrecon), so its backend is registered before the
# tests are collected. Prints pytest's summary and the failures' reasons.
#   scripts/mrinufft-tests.sh [PYTHON] [pytest args...]
# PYTHON: an interpreter with fhdrecon, mri-nufft 1.5.1, finufft 2.5.1,
# pytest < 8 and pytest-cases installed (default build/py-venv/bin/python,
# which scripts/python.sh makes). Takes about 25 minutes on the 2-core machine.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
py=${1:-build/py-venv/bin/python}
shift || true
work=$(mktemp -d /tmp/mrinufft-tests.XXXXXX)
trap 'rm -rf "$work"' EXIT
"$py" -m pip download -q --disable-pip-version-check --no-deps --no-binary :all: "mri-nufft==1.5.1" -d "$work"
tar -xzf "$work"/mri_nufft-1.5.1.tar.gz -C "$work"
tests=$work/mri_nufft-1.5.1/tests
"$py" "$root/scripts/mrinufft_point.py" "$tests"
cd "$tests"
"$py" -m pytest -p fhdrecon -p no:cacheprovider operators --backend fhdrecon --ref finufft -q -rf \
  --tb=line "$@" 2>&1 | tee "$work/log" | grep -vE '^[.sFEx]+ +\[ *[0-9]+%\]$' | tail -60
