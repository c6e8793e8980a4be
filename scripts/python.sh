#!/usr/bin/env bash
# The Python package (docs/python.md), after the C++ build (scripts/build.sh):
# builds the wheel against BUILD's libfhdrecon.so (cmake --install BUILD into
# BUILD/prefix; only the extension is compiled, the library is not compiled
# again), installs it for the `python3` on PATH so that `python3 -c "import
# fhdrecon"` works (user site with --break-system-packages where python3 is
# Debian's externally managed one; docs/choices.md), and into the test venv
# BUILD/py-venv with the test dependencies from PyPI (finufft 2.5.1, pytest).
#   scripts/python.sh install [BUILD]   the above
#   scripts/python.sh test [BUILD]      install, then pytest python/tests in the venv (CPU)
set -euo pipefail
export PIP_ROOT_USER_ACTION=ignore
cd "$(dirname "$0")/.."
root=$PWD
what=${1:-test}
build=$(realpath "${2:-${BUILD:-build}}")
venv=$build/py-venv
py_deps=(numpy "pytest>=7,<8" pytest-cases "finufft==2.5.1" "mri-nufft==1.5.1" nanobind scikit-build-core)

make_venv() {
  [[ -x $venv/bin/python ]] || python3 -m venv "$venv"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check "${py_deps[@]}"
}

build_wheel() {
  cmake --install "$build" --prefix "$build/prefix" >/dev/null
  rm -rf "$build/wheel"
  "$venv/bin/python" -m pip wheel -q --disable-pip-version-check --no-build-isolation --no-deps . -w "$build/wheel" \
    -C cmake.define.FHD_PREBUILT_PREFIX="$build/prefix" -C build-dir="$build/py-build"
  ls "$build"/wheel/fhdrecon-*.whl
}

# python3's own site: plain pip where python3 may be written to (a venv,
# pyenv, conda), the user site where it is Debian's (PEP 668).
install_for_python3() {
  local wheel=$1 flags=(--force-reinstall --disable-pip-version-check -q)
  if python3 -c 'import sys, sysconfig, os; sys.exit(0 if os.path.exists(os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED")) else 1)'; then
    flags+=(--user --break-system-packages --no-deps)  # numpy comes from python3-numpy (scripts/setup.sh)
  fi
  python3 -m pip install "${flags[@]}" "$wheel"
  (cd / && python3 -c "import fhdrecon; print('python3: fhdrecon', fhdrecon.__version__, 'from', fhdrecon.__path__[0])")
}

make_venv
wheel=$(build_wheel)
"$venv/bin/python" -m pip install -q --disable-pip-version-check --force-reinstall --no-deps "$wheel"
install_for_python3 "$wheel"
if [[ $what == test ]]; then
  # From outside the tree, so the installed package is the one imported.
  (cd "$build" && FHDRECON_EXE="$build/fhdrecon" "$venv/bin/python" -m pytest -q -p no:cacheprovider \
    "$root/python/tests" -m "not gpu")
fi
