#!/usr/bin/env bash
# Lint the AWS SAM template (template.yaml) offline.
#
# Creates or updates the git-ignored venv .venv/tools (scripts/install-tools.sh), then runs:
#   1. sam validate (no lint)  - the SAM transform, as CloudFormation would run it
#   2. sam validate --lint     - cfn-lint as bundled into SAM CLI (errors, warnings)
#   3. cfn-lint                - cfn-lint directly, informational findings included
# and exits non-zero if any of them reports anything.
#
# Usage: scripts/lint-template.sh [TEMPLATE]   (default: template.yaml)
# Env:   PYTHON - interpreter used to create the venv (scripts/install-tools.sh)
#        AWS_DEFAULT_REGION - Region to lint for (default: us-east-1)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

template="${1:-template.yaml}"
venv=".venv/tools"

log() { printf '==> %s\n' "$*" >&2; }

# --- venv (reaches PyPI: before the closed proxy below) ---------------------
"$root/scripts/install-tools.sh"

# --- keep SAM CLI and boto offline --------------------------------------------
# shellcheck source=scripts/sam-env.sh
source "$root/scripts/sam-env.sh"
# Validation resolves pseudo parameters, so it needs a Region but makes no call.
export AWS_DEFAULT_REGION="${AWS_DEFAULT_REGION:-us-east-1}"
# Anything that still tries HTTP(S) fails at once on a closed loopback port.
offline=(env HTTP_PROXY=http://127.0.0.1:9 HTTPS_PROXY=http://127.0.0.1:9
  http_proxy=http://127.0.0.1:9 https_proxy=http://127.0.0.1:9 NO_PROXY= no_proxy=)

# --- lint ---------------------------------------------------------------------
failed=0

log "sam validate (SAM transform)"
# The "translate" config env sets lint = false; the default env lints.
"${offline[@]}" "$venv/bin/sam" validate --template-file "$template" --config-env translate || failed=1

log "sam validate --lint"
"${offline[@]}" "$venv/bin/sam" validate --template-file "$template" --lint || failed=1

log "cfn-lint (errors, warnings and informational)"
"${offline[@]}" "$venv/bin/cfn-lint" --regions "$AWS_DEFAULT_REGION" --include-checks I -- "$template" || failed=1

if ((failed)); then
  log "FAILED: $template has findings"
  exit 1
fi
log "OK: $template is clean"
