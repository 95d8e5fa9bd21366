#!/usr/bin/env bash
# Runs the SAM CLI from .venv/tools with the same settings as `make lint`
# (scripts/sam-env.sh: no telemetry, no version check, nothing in the home folder).
#   scripts/sam.sh build
#   scripts/sam.sh deploy --guided
# Installs or updates .venv/tools first when needed (scripts/install-tools.sh, from PyPI).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv=".venv/tools"
cd "$root"
"$root/scripts/install-tools.sh"
# shellcheck source=scripts/sam-env.sh
source "$root/scripts/sam-env.sh"
exec "$venv/bin/sam" "$@"
