#!/usr/bin/env bash
# Runs a command with the local stack up and its endpoints in the standard
# AWS variables, then stops the stack again if this script started it.
#   scripts/with-local-stack.sh go test -tags integration ./internal/integration
# VERBOSE=1 shows the local stack's start-up progress (otherwise in .local/…/local-up.log).
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ROOT"

started=0
if ! curl -fsS "http://127.0.0.1:$LOCALSTACK_PORT/_localstack/health" >/dev/null 2>&1 \
   || ! curl -fsS "http://127.0.0.1:$SES_PORT/health-check" >/dev/null 2>&1; then
  started=1
fi
if [ "$started" = 0 ]; then
  [ "${VERBOSE:-0}" = 1 ] && log "reusing the healthy local stack on ports $LOCALSTACK_PORT/$SES_PORT (left running)"
else
  log "starting the local stack on ports $LOCALSTACK_PORT/$SES_PORT (first run installs it: a few minutes; VERBOSE=1 shows progress)"
fi
stop() { if [ "$started" = 1 ]; then quiet scripts/local-down.sh || true; fi; }
export HERALD_LOCAL_STACK_STOPS="$started"
trap stop EXIT
quiet scripts/local-up.sh

export AWS_ENDPOINT_URL="http://127.0.0.1:$LOCALSTACK_PORT"
export AWS_ENDPOINT_URL_SESV2="http://127.0.0.1:$SES_PORT"
export AWS_REGION="${AWS_REGION:-us-east-1}" AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test
# Never reach a real AWS account or the instance metadata service from here.
export AWS_EC2_METADATA_DISABLED=true AWS_PROFILE= AWS_SESSION_TOKEN=
unset AWS_PROFILE AWS_SESSION_TOKEN
"$@"
