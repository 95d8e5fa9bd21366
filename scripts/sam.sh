#!/usr/bin/env bash
# Runs the SAM CLI from .venv/tools with the same settings as `make lint`
# (scripts/sam-env.sh: no telemetry, no version check, nothing in the home folder).
#   scripts/sam.sh build
#   scripts/sam.sh deploy --guided
# Installs .venv/tools first when needed (through scripts/lint-template.sh's venv step).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv=".venv/tools"
cd "$root"
if [[ ! -x "$venv/bin/sam" ]]; then
  python="${PYTHON:-python3}"
  "$python" -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r tools/requirements.txt
  sha256sum tools/requirements.txt | cut -d' ' -f1 >"$venv/.requirements.sha256"
fi
# shellcheck source=scripts/sam-env.sh
source "$root/scripts/sam-env.sh"
exec "$venv/bin/sam" "$@"
