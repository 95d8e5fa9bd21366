# shellcheck shell=bash
# Shared helpers for scripts/local-up.sh, scripts/local-down.sh, scripts/install-rie.sh.
# Source it; it sets ROOT (repo root) and the .local/ paths, and defines no side effects.

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck disable=SC2034  # used by the scripts that source this file
LOCAL_DIR="$ROOT/.local"
# shellcheck disable=SC2034
LS_VENV="$ROOT/.venv/localstack"
# shellcheck disable=SC2034
LS_DIR="$ROOT/localstack"

LOCALSTACK_PORT="${LOCALSTACK_PORT:-4566}"
SES_PORT="${SES_PORT:-8005}"

# STACK_DIR holds one local stack's pids, logs, data and herald.env
# (.local/stack-<localstack port>-<ses port>), so stacks on other ports run side
# by side from one checkout. Installs stay shared. ENV_LINK, .local/herald.env,
# links to the env file of the stack started last (local-up.sh), whatever its
# ports: the one path the README, `make run` and `herald` name.
# shellcheck disable=SC2034
STACK_DIR="$LOCAL_DIR/stack-$LOCALSTACK_PORT-$SES_PORT"
# shellcheck disable=SC2034
ENV_LINK="$LOCAL_DIR/herald.env"

# quiet CMD...: runs CMD (scripts/local-up.sh, local-down.sh) with its progress in
# $STACK_DIR/local-up.log, shown only when CMD fails; VERBOSE=1 shows it as it happens.
quiet() {
  if [ "${VERBOSE:-0}" = 1 ]; then "$@"; return; fi
  mkdir -p "$STACK_DIR"
  local out="$STACK_DIR/local-up.log"
  "$@" >"$out" 2>&1 || { cat "$out" >&2; return 1; }
}

log() { printf '[%s] %s\n' "$(basename "$0" .sh)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# sha256 of the given files' contents (plus any extra words), for install stamps.
stamp_of() {
  { for f in "$@"; do if [ -f "$f" ]; then cat "$f"; else printf '%s\n' "$f"; fi; done; } \
    | sha256sum | cut -d' ' -f1
}

# py_ok PYTHON: true if PYTHON runs and is >= 3.12 (localstack-core 2026.3 uses PEP 695 syntax).
py_ok() {
  [ -n "$1" ] && "$1" -c 'import sys, venv, ssl; sys.exit(0 if sys.version_info >= (3, 12) else 1)' >/dev/null 2>&1
}

# find_python312: prints an interpreter >= 3.12 or returns 1.
# Order: $HERALD_LOCALSTACK_PYTHON, python3.13/python3.12 on PATH, pyenv-installed
# versions (newest first; pyenv shims fail unless the version is selected, so we
# look at $PYENV_ROOT/versions directly), then python3.
find_python312() {
  local c
  local -a cands=()
  [ -n "${HERALD_LOCALSTACK_PYTHON:-}" ] && cands+=("$HERALD_LOCALSTACK_PYTHON")
  for c in python3.13 python3.12; do
    command -v "$c" >/dev/null 2>&1 && cands+=("$(command -v "$c")")
  done
  local pyenv_root="${PYENV_ROOT:-$HOME/.pyenv}"
  if [ -d "$pyenv_root/versions" ]; then
    # shellcheck disable=SC2012  # version sort of a few fixed-shape paths
    while IFS= read -r c; do cands+=("$c"); done < <(
      ls -d "$pyenv_root"/versions/3.1[2-9]*/bin/python3 2>/dev/null | sort -rV)
  fi
  for c in /usr/bin/python3.13 /usr/bin/python3.12 /usr/local/bin/python3.13 /usr/local/bin/python3.12; do
    [ -x "$c" ] && cands+=("$c")
  done
  command -v python3 >/dev/null 2>&1 && cands+=("$(command -v python3)")
  for c in "${cands[@]}"; do
    if py_ok "$c"; then
      # resolve to the real interpreter so the venv does not point at a shim
      "$c" -c 'import sys; print(sys.executable)'
      return 0
    fi
  done
  return 1
}

# pid_alive PIDFILE [CMDLINE_SUBSTRING]: prints the pid and returns 0 if the pid in
# PIDFILE is running (and, if given, its command line contains the substring, which
# guards against a recycled pid).
pid_alive() {
  local pidfile="$1" want="${2:-}" pid
  [ -f "$pidfile" ] || return 1
  pid="$(tr -dc '0-9' <"$pidfile")"
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
  if [ -n "$want" ]; then
    tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "$want" || return 1
  fi
  printf '%s\n' "$pid"
}

# port_in_use PORT: true if something listens on 127.0.0.1:PORT.
port_in_use() {
  (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# start_bg PIDFILE LOGFILE CMD...: starts CMD in its own session/process group
# (setsid), detached from our stdin, appending to LOGFILE, and writes its pid
# (== its process-group id) to PIDFILE.
start_bg() {
  local pidfile="$1" logfile="$2"
  shift 2
  : >"$logfile"
  rm -f "$pidfile"
  # bash -c writes its own pid ($$) and then execs CMD, so the pid is CMD's and,
  # thanks to setsid, also its process-group id.
  # shellcheck disable=SC2016  # $$ and $@ are for the inner bash
  # fd 9 is local-up's lock: the long-lived service must not inherit (and hold) it.
  setsid bash -c 'echo $$ >"$0"; exec "$@"' "$pidfile" "$@" </dev/null >>"$logfile" 2>&1 9>&- &
  local _
  for _ in $(seq 1 50); do [ -s "$pidfile" ] && return 0; sleep 0.02; done
  die "could not start $1"
}

# stop_pidfile NAME PIDFILE [CMDLINE_SUBSTRING]: SIGTERM the process group, wait up
# to ${STOP_TIMEOUT:-10}s, then SIGKILL it; removes PIDFILE. Idempotent.
stop_pidfile() {
  local name="$1" pidfile="$2" want="${3:-}" pid _
  if ! pid="$(pid_alive "$pidfile" "$want")"; then
    [ -f "$pidfile" ] && log "$name: not running (stale pid file removed)"
    rm -f "$pidfile" "${pidfile%.pid}.port"
    return 0
  fi
  log "$name: stopping (pid/pgid $pid)"
  kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 $(( ${STOP_TIMEOUT:-10} * 10 ))); do
    kill -0 -- "-$pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 -- "-$pid" 2>/dev/null; then
    log "$name: still alive after ${STOP_TIMEOUT:-10}s, sending SIGKILL"
    kill -KILL -- "-$pid" 2>/dev/null || true
    sleep 0.2
  fi
  rm -f "$pidfile" "${pidfile%.pid}.port"
}

# http_ok URL: true if URL answers 2xx within 2s.
http_ok() {
  curl -fsS -o /dev/null --max-time 2 "$1" 2>/dev/null
}

# localstack_healthy PORT [SERVICE...]: true if /_localstack/health lists every
# SERVICE as available or running.
localstack_healthy() {
  local port="$1"
  shift
  local body s
  body="$(curl -fsS --max-time 2 "http://127.0.0.1:$port/_localstack/health" 2>/dev/null)" || return 1
  for s in "$@"; do
    printf '%s' "$body" | grep -Eq "\"$s\": *\"(available|running)\"" || return 1
  done
}

# wait_for NAME TIMEOUT LOGFILE PIDFILE CHECK_CMD...: polls CHECK_CMD every 0.2s
# until it succeeds; on timeout or if the process died, prints the log tail and dies.
wait_for() {
  local name="$1" timeout="$2" logfile="$3" pidfile="$4"
  shift 4
  local deadline=$(( $(date +%s) + timeout ))
  while :; do
    if "$@"; then return 0; fi
    if ! pid_alive "$pidfile" >/dev/null; then
      log "$name exited during startup; last lines of $logfile:"
      tail -n 40 "$logfile" >&2 || true
      die "$name failed to start"
    fi
    if [ "$(date +%s)" -ge "$deadline" ]; then
      log "$name not healthy after ${timeout}s; last lines of $logfile:"
      tail -n 40 "$logfile" >&2 || true
      die "$name did not become healthy in time (log: $logfile)"
    fi
    sleep 0.2
  done
}
