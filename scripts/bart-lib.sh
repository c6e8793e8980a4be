# Shared by the BART comparison scripts (sourced, not run): checks the tools,
# enters the work directory ($KEEP, else a temporary one removed on exit) and
# defines run (logs a command to commands.txt, runs it quietly) and timed
# (NAME CMD...: runs CMD, adds its wall nanoseconds to NAME's line in times.txt).
for t in bart python3 h5dump; do command -v $t >/dev/null || { echo "$0: $t not on PATH" >&2; exit 2; }; done
if [[ -n ${KEEP:-} ]]; then w=$(realpath -m "$KEEP"); mkdir -p "$w"; else w=$(mktemp -d); trap 'rm -rf "$w"' EXIT; fi
cd "$w"
: > commands.txt
: > times.txt

run() {
  echo "$*" >> commands.txt
  "$@" > /dev/null 2>&1
}
timed() {
  local name=$1 t0 t1; shift
  t0=$(date +%s%N)
  run "$@"
  t1=$(date +%s%N)
  echo "$name $(( t1 - t0 ))" >> times.txt
}
