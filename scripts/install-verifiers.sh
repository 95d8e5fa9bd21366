#!/usr/bin/env bash
# Installs the Python Standard Webhooks reference library into .venv/verify
# (idempotent; reinstalls only when localstack/requirements-verify.txt changes).
# The JavaScript one comes with localstack/package.json (scripts/local-up.sh).
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
venv="$ROOT/.venv/verify"
req="$LS_DIR/requirements-verify.txt"
stamp="$(stamp_of "$req")"
if [ -x "$venv/bin/python" ] && [ "$(cat "$venv/.herald-stamp" 2>/dev/null)" = "$stamp" ]; then
  exit 0
fi
command -v python3 >/dev/null || die "python3 is required"
log "installing $(grep -v '^#' "$req" | xargs) into .venv/verify"
rm -rf "$venv"
python3 -m venv "$venv"
"$venv/bin/pip" install -q --disable-pip-version-check -r "$req"
printf '%s\n' "$stamp" >"$venv/.herald-stamp"
