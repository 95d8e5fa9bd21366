#!/usr/bin/env bash
# Stops what scripts/local-up.sh started (LocalStack and the SES v2 emulator), by the
# pid files in .local/; each was started as its own process group, so children go too.
# Idempotent. Leaves installs (.venv/localstack, localstack/node_modules) in place;
# LocalStack state is in memory only, so nothing persists across up/down.
# Env: STOP_TIMEOUT (seconds before SIGKILL, default 10).
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

if [ -d "$LOCAL_DIR" ]; then
  exec 9>"$LOCAL_DIR/.lock"
  flock -w 120 9 || die "timed out waiting for a running local-up to finish"
fi

ran=""
pid_alive "$STACK_DIR/ses.pid" "aws-ses-v2-local" >/dev/null && ran=1
pid_alive "$STACK_DIR/localstack.pid" "localstack.runtime.main" >/dev/null && ran=1
stop_pidfile "SES v2 emulator" "$STACK_DIR/ses.pid" "aws-ses-v2-local"
stop_pidfile "LocalStack" "$STACK_DIR/localstack.pid" "localstack.runtime.main"
rm -f "$STACK_DIR/herald.env"
# .local/herald.env named this stack: name another one still running (started last), or none.
if [ -L "$ENV_LINK" ] && [ ! -e "$ENV_LINK" ]; then
  rm -f "$ENV_LINK"
  # shellcheck disable=SC2012  # newest first among a few fixed-shape paths
  other="$(ls -t "$LOCAL_DIR"/stack-*/herald.env 2>/dev/null | head -n 1 || true)"
  if [ -n "$other" ]; then ln -sfn "${other#"$LOCAL_DIR"/}" "$ENV_LINK"; fi
fi
if [ -z "$ran" ]; then
  # Nothing of this stack ran: say so, and name the stacks that do run (their
  # ports are in their folder's name), rather than "stopped".
  others=""
  for d in "$LOCAL_DIR"/stack-*/; do
    [ -d "$d" ] || continue
    if pid_alive "$d/localstack.pid" "localstack.runtime.main" >/dev/null; then
      ports="${d%/}"; ports="${ports##*/stack-}"
      others="$others LOCALSTACK_PORT=${ports%-*} SES_PORT=${ports#*-}"
    fi
  done
  if [ -n "$others" ]; then
    log "nothing runs on ports ${LOCALSTACK_PORT:-4566}/${SES_PORT:-8005}; a local stack runs with:${others} (stop it with those before make local-down)"
  else
    log "nothing runs on ports ${LOCALSTACK_PORT:-4566}/${SES_PORT:-8005}"
  fi
  exit 0
fi
log "stopped"
