#!/usr/bin/env bash
# Sorts the sanitizer reports that ASAN_OPTIONS/UBSAN_OPTIONS log_path left in
# DIR (scripts/fuzz.sh, scripts/sanitize.sh) and prints one count line:
#   ours: every report but those below; each is printed, and the exit status is 1.
#   contained libhdf5 crashes: a signal (SEGV, BUS, FPE) whose faulting frame is in
#     libhdf5 itself, not sanitized, in a reader child (io/reader_child.hpp),
#     which exists to contain them: the file is refused with one line. ASan's
#     signal handler reports them like any crash.
#   scripts/sanitizer-reports.sh DIR [what: "fuzz"]
set -uo pipefail
dir=$1
what=${2:-run}
ours=0 contained=0
for f in "$dir"/*; do
  [[ -f $f ]] || continue
  if grep -qE '^SUMMARY: AddressSanitizer: (SEGV|BUS|FPE) .*libhdf5' "$f"; then
    contained=$((contained + 1))
  else
    ours=$((ours + 1))
    echo "---- $f"
    cat "$f"
  fi
done
echo "sanitizer reports of this $what: $ours ours (every process, reader children included);" \
  "$contained contained libhdf5 crashes in reader children"
((ours == 0))
