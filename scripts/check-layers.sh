#!/usr/bin/env bash
# The layering rules (issue 12), checked by ctest's `layers` test:
#   app/      only device.hpp/device.cpp may include cuda/ or CUDA headers,
#             or name gpu::, tune::, FHD_HAVE_CUDA
#   recon/    no cuda/, app/, io/ or CUDA headers (and no phantom/ while
#             FHD_LAYERS_STRICT_RECON=1, the default)
#   io/       no app/ or cuda/
#   core/     nothing of ours outside core/
#   phantom/  nothing of ours outside core/ and phantom/
#   capi/     (the C interface) no app/ or io/; CUDA only in its .cu files
# Prints every offending file:line and exits 1 when there is one.
#   scripts/check-layers.sh [source root]
set -euo pipefail
root=${1:-$(dirname "$0")/..}
cd "$root"
strict_recon=${FHD_LAYERS_STRICT_RECON:-1}

cuda_headers='cuda_runtime(_api)?\.h|cuda\.h|cufft[A-Za-z]*\.h|cublas[A-Za-z_]*\.h'
ours='(core|phantom|recon|io|cuda|app)/'

# report RULE: turns grep's "file:line:text" lines on stdin into "file:line: RULE".
report() {
  local hit
  while IFS= read -r hit; do
    echo "${hit%%:*}:$(cut -d: -f2 <<<"$hit"): $1"
  done
}

# includes DIR PATTERN: lines of DIR's sources that include a header matching PATTERN.
includes() {
  grep -rnE "^[[:space:]]*#[[:space:]]*include[[:space:]]*[<\"]($2)" "$1" \
    --include='*.cpp' --include='*.hpp' --include='*.h' --include='*.cu' --include='*.cuh' || true
}

# drop PATTERN: lines not matching PATTERN (no failure when none are left).
drop() { grep -vE "$1" || true; }

app_facade='^app/device\.(hpp|cpp):'
checks() {
includes app "cuda/|$cuda_headers" | drop "$app_facade" | report "app/ includes a CUDA header outside app/device.*"
{ grep -rnE 'gpu::|tune::|FHD_HAVE_CUDA' app --include='*.cpp' --include='*.hpp' || true; } | drop "$app_facade" |
  report "app/ names the GPU backend outside app/device.*"

includes recon "(cuda|app|io)/|$cuda_headers" | report "recon/ includes cuda/, app/, io/ or a CUDA header"
if [[ $strict_recon == 1 ]]; then
  includes recon "phantom/" | report "recon/ includes phantom/ (FHD_LAYERS_STRICT_RECON=0 skips this rule)"
fi
includes io "(app|cuda)/" | report "io/ includes app/ or cuda/"
includes core "$ours" | drop '^[^:]+:[0-9]+:.*[<"]core/' | report "core/ includes a project header outside core/"
includes capi "(app|io)/" | report "capi/ includes app/ or io/"
includes capi "cuda/|$cuda_headers" | drop '^[^:]+\.cu:' | report "capi/ includes cuda/ or a CUDA header outside its .cu files"
includes phantom "$ours" | drop '^[^:]+:[0-9]+:.*[<"](core|phantom)/' |
  report "phantom/ includes a project header outside core/ and phantom/"
}

found=$(checks)
if [[ -n $found ]]; then
  echo "$found"
  echo "check-layers: FAILED (the rules are at the top of scripts/check-layers.sh)" >&2
  exit 1
fi
echo "check-layers: ok"
