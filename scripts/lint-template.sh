#!/usr/bin/env bash
# Lint the AWS SAM template (template.yaml) offline.
#
# Creates or updates the git-ignored venv .venv/tools from tools/requirements.txt
# (only when that file changed), then runs:
#   1. sam validate (no lint)  - the SAM transform, as CloudFormation would run it
#   2. sam validate --lint     - cfn-lint as bundled into SAM CLI (errors, warnings)
#   3. cfn-lint                - cfn-lint directly, informational findings included
# and exits non-zero if any of them reports anything.
#
# Usage: scripts/lint-template.sh [TEMPLATE]   (default: template.yaml)
# Env:   PYTHON - interpreter used to create the venv (default: python3)
#        AWS_DEFAULT_REGION - Region to lint for (default: us-east-1)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

template="${1:-template.yaml}"
# shellcheck source=scripts/sam-env.sh
source scripts/sam-env.sh

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
