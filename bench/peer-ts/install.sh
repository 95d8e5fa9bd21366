#!/usr/bin/env bash
# Installs the TypeScript-runtime peer's packages (bench/peer-ts/package-lock.json)
# with `npm ci` into the git-ignored bench/peer-ts/node_modules. aws-lambda-ric
# builds a native addon at install (it compiles its bundled curl and
# aws-lambda-cpp with cmake and a C++ compiler: a minute or more of CPU the
# first time). Idempotent: a no-op when the lock file has not changed.
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib.sh"
DIR="$ROOT/bench/peer-ts"
want="$(stamp_of "$DIR/package-lock.json" "$(node --version 2>/dev/null)")"
if [ -f "$DIR/node_modules/.stamp" ] && [ "$(cat "$DIR/node_modules/.stamp")" = "$want" ]; then
  exit 0
fi
command -v node >/dev/null || die "need Node.js and npm for the TypeScript-runtime bench peer"
command -v cmake >/dev/null || die "aws-lambda-ric builds a native addon: install cmake, make and a C++ compiler"
mkdir -p "$ROOT/.local"
log "installing the bench peer peer-ts into $DIR/node_modules (aws-lambda-ric builds its native part)"
(cd "$DIR" && npm ci --no-audit --no-fund --foreground-scripts >"$ROOT/.local/peer-ts-install.log" 2>&1) ||
  die "npm ci in bench/peer-ts failed; see .local/peer-ts-install.log"
echo "$want" >"$DIR/node_modules/.stamp"
