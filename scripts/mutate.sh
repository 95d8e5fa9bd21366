#!/usr/bin/env bash
# Mutation testing of herald's packages with gremlins (make mutate).
# Usage: scripts/mutate.sh [package dir ...]   (default: every package go list
# finds, so a new package is in the set at once; one without unit tests is run
# too, marked NO UNIT TESTS)
# MUTATE_WORKERS (default 1) mutants run at once; each builds and runs the
# package's tests, so on a shared machine keep it low.
# MUTATE_DRY_RUN=1 lists the mutants and their coverage without running them
# (a minute, not an hour).
# MUTATE_EXCLUDE: a further file path regexp (Go syntax) whose files are not
# mutated, to run part of a large package: MUTATE_EXCLUDE='/(rie|e2e)\.go$'.
# gremlins finds the covered mutants with "go test -coverprofile"; a go
# wrapper (tools/mutatecover, first on PATH) widens that profile with the
# case, select, constant and initializer expressions the tests certainly
# evaluated, which Go's coverage has no block for (docs/testing.md).
set -euo pipefail
cd "$(dirname "$0")/.."
GREMLINS=${GREMLINS:-.tools/gremlins}
WORKERS=${MUTATE_WORKERS:-1}
OUT=${MUTATE_OUT:-.tools/mutate}
mkdir -p "$OUT"
# Each mutant builds and runs the package's tests: vet adds nothing there.
export GOFLAGS="${GOFLAGS:+$GOFLAGS }-vet=off"

# bench's tests run the Lambda Runtime Interface Emulator, found through
# HERALD_RIE_BIN: gremlins may run them in a copy of the module elsewhere.
HERALD_RIE_BIN=$(scripts/install-rie.sh)
export HERALD_RIE_BIN

MUTATECOVER_GO=$(command -v go)
export MUTATECOVER_GO
# Built once per run, into a directory of its own (runs may overlap).
mkdir -p .tools
wrap=$(mktemp -d "$PWD/.tools/mutatecover.XXXXXX")
trap 'rm -rf "$wrap"' EXIT
go build -o "$wrap/mutatecover" ./tools/mutatecover
ln -s mutatecover "$wrap/go"
export PATH="$wrap:$PATH"

pkgs=("$@")
if [ ${#pkgs[@]} -eq 0 ]; then
  mapfile -t pkgs < <("$MUTATECOVER_GO" list -f '{{.Dir}}' ./... | sed "s|^$PWD/||; s|^$PWD$|.|")
fi
summary=()
untested=()
for pkg in "${pkgs[@]}"; do
  name=${pkg//\//_}
  start=$(date +%s)
  mark=
  if [ -z "$("$MUTATECOVER_GO" list -f '{{if or .TestGoFiles .XTestGoFiles}}yes{{end}}' "./$pkg")" ]; then
    mark="  NO UNIT TESTS"
    untested+=("$pkg")
  fi
  echo "== $pkg$mark"
  rm -f "$OUT/$name.mutatecover.log"
  # --exclude-files '/': a package's own files only, not those of packages
  # nested in its directory (each fake in internal/testkit/ under that folder:
  # their mutants are not in the package's coverage profile, so they would
  # count as not covered; a nested package has its own run).
  # MUTATECOVER_PACKAGE: the package a mutant's test run tests (gremlins names
  # the module root for a package main, whose runs then all fail: "killed").
  MUTATECOVER_LOG="$PWD/$OUT/$name.mutatecover.log" \
    MUTATECOVER_PACKAGE="$("$MUTATECOVER_GO" list "./$pkg")" \
    "$GREMLINS" unleash ${MUTATE_DRY_RUN:+--dry-run} --workers "$WORKERS" --timeout-coefficient "${MUTATE_TIMEOUT_COEFFICIENT:-60}" \
    --exclude-files '/' ${MUTATE_EXCLUDE:+--exclude-files "$MUTATE_EXCLUDE"} -o "$OUT/$name.json" "./$pkg" >"$OUT/$name.log" 2>&1 || true
  grep -E '^ *LIVED|^ *TIMED OUT' "$OUT/$name.log" || true
  if grep -q '^No results to report' "$OUT/$name.log"; then
    line="no mutants"
  elif [ -n "${MUTATE_DRY_RUN:-}" ]; then
    line="$(grep -E '^Runnable:' "$OUT/$name.log" || echo "Runnable: ?, Not covered: ?")"
  else
    line="$(grep -E '^Killed:' "$OUT/$name.log" || echo "Killed: ?, Lived: ?, Not covered: ?"), $(grep -E '^Timed out:' "$OUT/$name.log" | cut -d, -f1 || echo "Timed out: ?")"
  fi
  eff=$(grep -E '^Test efficacy' "$OUT/$name.log" | awk '{print $3}' || true)
  cov=$(grep -E '^Mutator coverage' "$OUT/$name.log" | awk '{print $3}' || true)
  summary+=("$(printf '%-26s efficacy %-8s coverage %-8s %s  (%ss)%s' "$pkg" "${eff:-?}" "${cov:-?}" "$line" "$(( $(date +%s) - start ))" "$mark")")
done
echo
echo "Mutation score per package (efficacy = killed / (killed + lived)):"
printf '  %s\n' "${summary[@]}"
if [ ${#untested[@]} -gt 0 ]; then
  echo "NO UNIT TESTS (their mutants cannot be killed by unit tests): ${untested[*]}"
fi
