#!/usr/bin/env bash
# `make run`: starts the local stack (left running; make local-down stops it), builds the
# herald command into .local/bin/herald, and runs `herald run` against the local stack with
# the settings of its env file (.local/herald.env, linked to this stack's). Arguments go to `herald run`.
# In another terminal:  set -a; . .local/herald.env; set +a; .local/bin/herald send FILE
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ROOT"
mkdir -p "$STACK_DIR" "$LOCAL_DIR/bin"
log "starting the local stack (first run installs it: a few minutes; VERBOSE=1 shows progress)"
quiet scripts/local-up.sh
go build -o "$LOCAL_DIR/bin/herald" ./cmd/herald
set -a
# shellcheck disable=SC1091
. "$STACK_DIR/herald.env"
set +a
env_file="${ENV_LINK#"$ROOT"/}"
log "endpoints: AWS_ENDPOINT_URL=$AWS_ENDPOINT_URL AWS_ENDPOINT_URL_SESV2=$AWS_ENDPOINT_URL_SESV2 (from $env_file)"
log "send from another terminal: set -a; . $env_file; set +a; .local/bin/herald send testdata/cases/email-welcome.json"
log "mail viewer: $AWS_ENDPOINT_URL_SESV2/ ; stop the stack with make local-down"
exec "$LOCAL_DIR/bin/herald" run "$@"
