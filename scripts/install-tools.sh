#!/usr/bin/env bash
# Creates or updates the git-ignored venv .venv/tools (SAM CLI, cfn-lint) from
# tools/requirements.txt; a no-op when that file has not changed since the last install.
# Used by scripts/lint-template.sh, scripts/sam.sh and scripts/deploy-local.sh. It reaches
# PyPI, so call it before (never inside) the closed proxy the SAM commands run behind.
# Env: PYTHON - interpreter used to create the venv (default: python3, >= 3.9).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
venv=".venv/tools"
requirements="tools/requirements.txt"
python="${PYTHON:-python3}"
log() { printf '[install-tools] %s\n' "$*" >&2; }

if [[ ! -x "$venv/bin/python" ]]; then
  log "creating $venv"
  "$python" -m venv "$venv"
fi
stamp="$venv/.requirements.sha256"
want="$(sha256sum "$requirements" | cut -d' ' -f1)"
if [[ ! -f "$stamp" || "$(cat "$stamp")" != "$want" || ! -x "$venv/bin/sam" ]]; then
  log "installing $requirements into $venv (first run: about a minute)"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input -r "$requirements"
  printf '%s\n' "$want" >"$stamp"
fi
