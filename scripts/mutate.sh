#!/usr/bin/env bash
# Mutation testing of herald's core packages with gremlins (make mutate).
# Usage: scripts/mutate.sh [package dir ...]   (default: every package with
# unit tests, as go list finds them, so a new package is in the set at once)
# MUTATE_WORKERS (default 1) mutants run at once; each builds and runs the
# package's tests, so on a shared machine keep it low.
set -euo pipefail
cd "$(dirname "$0")/.."
GREMLINS=${GREMLINS:-.tools/gremlins}
WORKERS=${MUTATE_WORKERS:-1}
OUT=${MUTATE_OUT:-.tools/mutate}
mkdir -p "$OUT"
# Each mutant builds and runs the package's tests: vet adds nothing there.
export GOFLAGS="${GOFLAGS:+$GOFLAGS }-vet=off"
pkgs=("$@")
if [ ${#pkgs[@]} -eq 0 ]; then
  # Packages without unit tests are left out: the functions' main packages
  # (wiring, run by the integration tests), the benchmarks, internal/localenv
  # (the local stack's tooling, run by the integration tests) and the
  # test-only helpers chattest and pausetest.
  mapfile -t pkgs < <(go list -f '{{if or .TestGoFiles .XTestGoFiles}}{{.Dir}}{{end}}' ./... | sed "s|^$PWD/||" | grep -v '^$')
fi
# gremlins v0.6.0 names a mutant's package by walking up from its file's
# directory to one whose name ends in the Go package name, else the module
# root: for a package main outside a directory named main (cmd/herald,
# cmd/herald-demo, bench) it runs `go test <module>`, where there is no
# package, so every mutant "dies" of the setup failure. A go shim first on
# PATH gives such a test command the package's import path back.
module=$(go list -m)
shim=$(mktemp -d)
trap 'rm -rf "$shim"' EXIT
cat >"$shim/go" <<SHIM
#!/usr/bin/env bash
args=("\$@")
if [ "\${args[0]}" = test ] && [ "\${args[-1]}" = "$module" ] && [ -n "\${MUTATE_PKG_PATH:-}" ]; then
  args[-1]=\$MUTATE_PKG_PATH
fi
exec "$(command -v go)" "\${args[@]}"
SHIM
chmod +x "$shim/go"
summary=()
for pkg in "${pkgs[@]}"; do
  name=${pkg//\//_}
  start=$(date +%s)
  echo "== $pkg"
  MUTATE_PKG_PATH=$(go list "./$pkg")
  export MUTATE_PKG_PATH
  # --exclude-files '/': a package's own files only, not those of packages
  # nested in its directory (internal/pause/pausetest, internal/chat/chattest:
  # their mutants are not in the package's coverage profile, so they would
  # count as not covered; a nested package with tests has its own run).
  PATH="$shim:$PATH" "$GREMLINS" unleash --workers "$WORKERS" --timeout-coefficient "${MUTATE_TIMEOUT_COEFFICIENT:-60}" \
    --exclude-files '/' -o "$OUT/$name.json" "./$pkg" >"$OUT/$name.log" 2>&1 || true
  grep -E '^ *LIVED|^ *TIMED OUT' "$OUT/$name.log" || true
  line="$(grep -E '^Killed:' "$OUT/$name.log" || echo "Killed: ?, Lived: ?, Not covered: ?"), $(grep -E '^Timed out:' "$OUT/$name.log" | cut -d, -f1 || echo "Timed out: ?")"
  eff=$(grep -E '^Test efficacy' "$OUT/$name.log" | awk '{print $3}' || true)
  cov=$(grep -E '^Mutator coverage' "$OUT/$name.log" | awk '{print $3}' || true)
  summary+=("$(printf '%-22s efficacy %-8s coverage %-8s %s  (%ss)' "$pkg" "${eff:-?}" "${cov:-?}" "$line" "$(( $(date +%s) - start ))")")
done
echo
echo "Mutation score per package (efficacy = killed / (killed + lived)):"
printf '  %s\n' "${summary[@]}"
