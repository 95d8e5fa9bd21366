#!/usr/bin/env bash
# Runs every fuzz target of every package for FUZZTIME (make fuzz).
# Usage: FUZZTIME=30s scripts/fuzz.sh
#
# A crash fails the run, and go test keeps its input under the package's
# testdata/fuzz/<target>/ as a regression seed. A target that fails with
# "context deadline exceeded" and writes no input is Go's own fuzzing
# coordinator racing the -fuzztime deadline (golang/go#75804, fixed in Go
# 1.27, not in 1.26): it is run once more, and fails the run only if it
# fails again.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
FUZZTIME=${FUZZTIME:-30s}

# corpus prints the names of a target's saved inputs.
corpus() { ls "$1/testdata/fuzz/$2" 2>/dev/null || true; }

fuzz_once() { # pkg target log
  "$GO" test -run '^$' -fuzz "^$2\$" -fuzztime "$FUZZTIME" "$1" 2>&1 | tee "$3"
  return "${PIPESTATUS[0]}"
}

log=$(mktemp)
trap 'rm -f "$log"' EXIT
"$GO" list -f '{{.ImportPath}} {{.Dir}}' ./... | while read -r pkg dir; do
  for fz in $("$GO" test -list '^Fuzz' "$pkg" | grep '^Fuzz' || true); do
    echo "== $pkg $fz"
    before=$(corpus "$dir" "$fz")
    if fuzz_once "$pkg" "$fz" "$log"; then
      continue
    fi
    if [ "$(corpus "$dir" "$fz")" = "$before" ] && grep -qx '    context deadline exceeded' "$log" \
       && ! grep -q 'Failing input written to' "$log"; then
      echo "== $fz: 'context deadline exceeded' with no failing input: Go's fuzzing coordinator (golang/go#75804); once more"
      fuzz_once "$pkg" "$fz" "$log"
      continue
    fi
    exit 1
  done
done
