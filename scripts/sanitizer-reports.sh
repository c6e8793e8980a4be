#!/usr/bin/env bash
# Sorts the sanitizer reports that ASAN_OPTIONS/UBSAN_OPTIONS log_path left in
# DIR (scripts/fuzz.sh, scripts/sanitize.sh) and prints one count line:
#   contained in libhdf5: an ASan report (a bad memcpy, an over-read, a SEGV)
#     whose first frame below the sanitizer's own is inside libhdf5 (not
#     sanitized), in a reader child (io/reader_child.hpp, serve_reader_child on
#     the stack), which exists to contain libhdf5 on a corrupt file: the child
#     dies and the file is refused with one line. Counted, not printed.
#   ours: every other report; each is printed, and the exit status is 1.
# A file with no report in it (LSan's "Suppressions used" table) is skipped.
#   scripts/sanitizer-reports.sh DIR [what]
set -uo pipefail
dir=$1
what=${2:-run}
ours=0 contained=0
# The first stack frame that is not the sanitizer's (an interceptor, its runtime).
first_frame() {
  grep -E '^ +#[0-9]+ ' "$1" | grep -vE 'libsanitizer|__interceptor_|libasan|libubsan' | head -1
}
for f in "$dir"/*; do
  [[ -f $f ]] || continue
  grep -qE 'ERROR: |runtime error|^SUMMARY: ' "$f" || continue
  # The frame taken first, then tested: `first_frame | grep -q` under pipefail
  # failed when grep -q's early exit killed the pipe (a contained report counted as ours).
  frame=$(first_frame "$f")
  if grep -q 'ERROR: AddressSanitizer' "$f" && [[ $frame == *libhdf5* ]] && grep -q serve_reader_child "$f"; then
    contained=$((contained + 1))
    continue
  fi
  ours=$((ours + 1))
  echo "---- $f"
  cat "$f"
done
echo "sanitizer reports of this $what: $ours ours (every process, reader children included);" \
  "$contained inside libhdf5 in reader children (contained: the file refused)"
((ours == 0))
