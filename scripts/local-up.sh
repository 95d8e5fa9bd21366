#!/usr/bin/env bash
# Starts herald's local stack without Docker and provisions it:
#   * LocalStack (open source, host mode) on 127.0.0.1:${LOCALSTACK_PORT:-4566}: SQS (+ SES v1),
#     DynamoDB (served by moto: PROVIDER_OVERRIDE_DYNAMODB=moto)
#   * aws-ses-v2-local (SES v2 emulator)   on 127.0.0.1:${SES_PORT:-8005}
# then runs localstack/init/ready.d/provision.py (queues, SES identities, email templates, the table).
#
# Installs what it needs on first use (idempotent; a no-op when already installed):
#   .venv/localstack        Python >= 3.12 venv with localstack/requirements.txt
#   localstack/node_modules npm ci of localstack/package-lock.json
#   .tools/bin/aws-lambda-rie the Lambda Runtime Interface Emulator (scripts/install-rie.sh), which
#                           runs the Lambda functions deployed into LocalStack
# Logs and pids: .local/stack-<ports>/{localstack,ses}.{log,pid}; queue URLs etc. in
# .local/stack-<ports>/herald.env, which .local/herald.env then links to (the stack started last).
# Safe to run repeatedly: healthy services that are already running are reused.
# Stop with scripts/local-down.sh.
#
# Env knobs: LOCALSTACK_PORT, SES_PORT, LOCAL_UP_TIMEOUT (seconds per service, default 90),
#   HERALD_LOCALSTACK_PYTHON (interpreter >= 3.12 for the venv), LOCALSTACK_DEBUG=1,
#   LOCALSTACK_GATEWAY_SERVER (default hypercorn, see below), HERALD_SKIP_PROVISION=1,
#   plus provision.py's HERALD_QUEUE_NAME, HERALD_DLQ_NAME, HERALD_MAX_RECEIVE_COUNT,
#   HERALD_VISIBILITY_TIMEOUT, AWS_REGION.
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ROOT"

TIMEOUT="${LOCAL_UP_TIMEOUT:-90}"
LS_PID="$STACK_DIR/localstack.pid"
LS_LOG="$STACK_DIR/localstack.log"
SES_PID="$STACK_DIR/ses.pid"
SES_LOG="$STACK_DIR/ses.log"
LS_MATCH="localstack.runtime.main"
SES_MATCH="aws-ses-v2-local"
t0=$(date +%s%N)
elapsed() { echo "$(( ($(date +%s%N) - t0) / 1000000 ))ms"; }

mkdir -p "$LOCAL_DIR" "$STACK_DIR"
command -v curl >/dev/null || die "curl is required"
command -v setsid >/dev/null || die "setsid (util-linux) is required"
# one local-up/local-down at a time (e.g. several test packages calling it in parallel)
exec 9>"$LOCAL_DIR/.lock"
flock -w 600 9 || die "timed out waiting for another local-up/local-down to finish"

# ---------------------------------------------------------------- installs
# npm ci runs in the background while the Python venv is being built.
ensure_node_modules_start() {
  command -v node >/dev/null || die "node (>= 20.19) is required for the SES v2 emulator"
  command -v npm >/dev/null || die "npm is required"
  NPM_STAMP_FILE="$LS_DIR/node_modules/.herald-stamp"
  NPM_STAMP="$(stamp_of "$LS_DIR/package-lock.json" "$(node --version)")"
  NPM_PID=""
  if [ -f "$NPM_STAMP_FILE" ] && [ "$(cat "$NPM_STAMP_FILE")" = "$NPM_STAMP" ] \
     && [ -e "$LS_DIR/node_modules/.bin/aws-ses-v2-local" ]; then
    return 0
  fi
  log "npm ci in localstack/ ..."
  (cd "$LS_DIR" && npm ci --no-audit --no-fund --loglevel=error) >"$LOCAL_DIR/npm-ci.log" 2>&1 9>&- &
  NPM_PID=$!
}

ensure_node_modules_wait() {
  [ -n "$NPM_PID" ] || return 0
  if ! wait "$NPM_PID"; then
    cat "$LOCAL_DIR/npm-ci.log" >&2
    die "npm ci failed in localstack/ (log: .local/npm-ci.log)"
  fi
  printf '%s\n' "$NPM_STAMP" >"$NPM_STAMP_FILE"
  log "npm ci done ($(elapsed))"
}

# The emulator LocalStack's Lambda functions run under (LAMBDA_RUNTIME_EXECUTOR=herald-host),
# built in the background meanwhile (first run: go install from the module proxy).
rie_start() {
  RIE_LOG="$STACK_DIR/install-rie.log"
  "$ROOT/scripts/install-rie.sh" >"$RIE_LOG.out" 2>"$RIE_LOG" 9>&- &
  RIE_PID=$!
}
rie_wait() {
  if ! wait "$RIE_PID"; then
    cat "$RIE_LOG" >&2
    die "scripts/install-rie.sh failed (log: $RIE_LOG)"
  fi
  RIE_BIN="$(cat "$RIE_LOG.out")"
}

# requirements.txt installs herald's LocalStack plugin from this directory: a change to it
# reinstalls the venv's requirements too.
LS_PLUGIN_FILES=("$LS_DIR"/lambda-executor/pyproject.toml "$LS_DIR"/lambda-executor/herald_localstack/*.py)
ensure_venv() {
  local py stamp stamp_file="$LS_VENV/.herald-stamp"
  if [ -x "$LS_VENV/bin/python" ] && py_ok "$LS_VENV/bin/python"; then
    stamp="$(stamp_of "$LS_DIR/requirements.txt" "${LS_PLUGIN_FILES[@]}" "$("$LS_VENV/bin/python" -VV)")"
    if [ -f "$stamp_file" ] && [ "$(cat "$stamp_file")" = "$stamp" ]; then
      compgen -G "$LS_STATIC/usr/lib/localstack/service-catalog-*.dill" >/dev/null || build_service_catalog
      return 0
    fi
    log "localstack/requirements.txt changed (or first use of this venv): updating it"
  else
    if [ -e "$LS_VENV" ]; then
      # e.g. a Python 3.11 venv: localstack-core 2026.3 installs there but cannot run
      log "existing $LS_VENV is not Python >= 3.12 (or is broken); recreating it"
      rm -rf "$LS_VENV"
    fi
    py="$(find_python312)" || die "LocalStack 2026.3 needs Python >= 3.12 and none was found.
  Install one (e.g. 'pyenv install 3.13') or point HERALD_LOCALSTACK_PYTHON at it."
    log "creating $LS_VENV with $py ($("$py" -V 2>&1))"
    mkdir -p "$(dirname "$LS_VENV")"
    "$py" -m venv "$LS_VENV"
  fi
  log "pip install -r localstack/requirements.txt (first run: ~1 min) ..."
  if ! "$LS_VENV/bin/python" -m pip install --disable-pip-version-check --no-input -q \
        -r "$LS_DIR/requirements.txt" >"$LOCAL_DIR/pip-install.log" 2>&1; then
    tail -n 30 "$LOCAL_DIR/pip-install.log" >&2
    die "pip install failed (log: .local/pip-install.log)"
  fi
  build_service_catalog
  stamp="$(stamp_of "$LS_DIR/requirements.txt" "${LS_PLUGIN_FILES[@]}" "$("$LS_VENV/bin/python" -VV)")"
  printf '%s\n' "$stamp" >"$stamp_file"
  log "venv ready ($(elapsed))"
}

# LocalStack indexes all botocore service specs on its first request (~5 s) and caches the
# result in its cache dir, i.e. under .local/, which a clean start wipes. Its Docker image
# builds that index at image build time into the "static libs" dir; do the same once per venv
# and link it into .local/ at each start.
LS_STATIC="$LS_VENV/herald-static"
build_service_catalog() {
  rm -rf "$LS_STATIC"
  mkdir -p "$LS_STATIC/usr/lib/localstack"
  OVERRIDE_IN_DOCKER=0 FILESYSTEM_ROOT="$LS_STATIC" CONFIG_DIR="$LS_STATIC/config" DISABLE_EVENTS=1 \
    "$LS_VENV/bin/python" -m localstack.aws.spec >>"$LOCAL_DIR/pip-install.log" 2>&1 \
    || log "warning: could not pre-build LocalStack's service catalog (first request will be slower)"
}

# ---------------------------------------------------------------- services
# The port a service was started on is kept next to its pid file (<name>.port).
same_port_or_die() {
  local name="$1" pidfile="$2" want="$3" var="$4" have
  have="$(cat "${pidfile%.pid}.port" 2>/dev/null || true)"
  if [ -n "$have" ] && [ "$have" != "$want" ]; then
    die "$name is already running on port $have, not $var=$want; run scripts/local-down.sh first"
  fi
}

start_localstack() {
  if pid_alive "$LS_PID" "$LS_MATCH" >/dev/null; then
    same_port_or_die LocalStack "$LS_PID" "$LOCALSTACK_PORT" LOCALSTACK_PORT
    log "LocalStack already running (pid $(cat "$LS_PID"))"
    return 0
  fi
  rm -f "$LS_PID"
  if port_in_use "$LOCALSTACK_PORT"; then
    if localstack_healthy "$LOCALSTACK_PORT" sqs; then
      log "a LocalStack not started by this script (Docker?) answers on 127.0.0.1:$LOCALSTACK_PORT; using it"
      return 0
    fi
    die "127.0.0.1:$LOCALSTACK_PORT is in use by something that is not LocalStack (set LOCALSTACK_PORT)"
  fi
  local fsroot="$STACK_DIR/localstack" f
  mkdir -p "$fsroot/filesystem/usr/lib/localstack" "$fsroot/config"
  for f in "$LS_STATIC"/usr/lib/localstack/service-catalog-*.dill; do
    [ -f "$f" ] && ln -sfn "$f" "$fsroot/filesystem/usr/lib/localstack/$(basename "$f")"
  done
  log "starting LocalStack (host mode) on 127.0.0.1:$LOCALSTACK_PORT"
  # Notes on the environment (see localstack/README.md, "Host mode"):
  #  OVERRIDE_IN_DOCKER=0   LocalStack sniffs /.dockerenv etc. and, on a CI box that is itself a
  #                         container, would think it runs in its image (0.0.0.0 binds, /var/lib paths).
  #  FILESYSTEM_ROOT        host-mode root for its var/lib, cache, tmp, etc/init dirs (default is
  #                         inside site-packages); CONFIG_DIR keeps ~/.localstack profiles out.
  #  GATEWAY_SERVER=hypercorn  the default twisted server ignores the host part of GATEWAY_LISTEN
  #                         and binds 0.0.0.0; hypercorn honours 127.0.0.1.
  #  DNS_ADDRESS=0          no DNS server (it would bind port 53 on 0.0.0.0).
  #  DISABLE_EVENTS=1, SKIP_SSL_CERT_DOWNLOAD=1   no analytics, no certificate download.
  #  SQS_ENDPOINT_STRATEGY=dynamic  queue URLs use the host the client called
  #                         (http://127.0.0.1:4566/queue/<region>/000000000000/<name>).
  #  SQS_DISABLE_CLOUDWATCH_METRICS=1  no SQS metrics in CloudWatch.
  #  SERVICES               cloudformation, iam, sts, logs, events, cloudwatch, sns, kms, ec2: what
  #                         `make deploy-local` (sam deploy of template.yaml) creates or calls
  #                         (ec2: the VPC of StaticEgress create-vpc, moto's records only;
  #                         apigateway: the endpoints API, a REST API; LocalStack does not
  #                         enforce its AWS_IAM authorization).
  #  LAMBDA_RUNTIME_EXECUTOR=herald-host  LocalStack runs Lambda functions in Docker only; this
  #                         plugin (localstack/lambda-executor) runs provided.al2023 functions as
  #                         host processes under the emulator HERALD_LAMBDA_RIE, on 127.0.0.1.
  #  HERALD_LAMBDA_ENV_AWS_ENDPOINT_URL_SESV2  given to every function as AWS_ENDPOINT_URL_SESV2
  #                         (the SES v2 emulator); LocalStack itself gives them AWS_ENDPOINT_URL.
  #  PROVIDER_OVERRIDE_DYNAMODB=moto  DynamoDB answered by moto in-process (the same plugin,
  #                         herald_localstack/dynamodb_moto.py), never LocalStack's default, which
  #                         downloads DynamoDB Local (not from a package registry, not open source).
  start_bg "$LS_PID" "$LS_LOG" env \
    -u PERSISTENCE -u CONFIG_PROFILE -u LOCALSTACK_CLI -u DOCKER_HOST -u LOCALSTACK_AUTH_TOKEN \
    -u LOCALSTACK_API_KEY -u AWS_ENDPOINT_URL -u DATA_DIR -u RUNTIME_COMPONENTS \
    OVERRIDE_IN_DOCKER=0 \
    FILESYSTEM_ROOT="$fsroot/filesystem" \
    CONFIG_DIR="$fsroot/config" \
    LOCALSTACK_VOLUME_DIR="$fsroot/filesystem/var/lib/localstack" \
    GATEWAY_LISTEN="127.0.0.1:$LOCALSTACK_PORT" \
    LOCALSTACK_HOST="127.0.0.1:$LOCALSTACK_PORT" \
    GATEWAY_SERVER="${LOCALSTACK_GATEWAY_SERVER:-hypercorn}" \
    SERVICES="sqs,ses,secretsmanager,lambda,s3,cloudformation,iam,sts,logs,events,cloudwatch,sns,kms,dynamodb,ec2,apigateway" \
    LAMBDA_RUNTIME_EXECUTOR=herald-host \
    PROVIDER_OVERRIDE_DYNAMODB=moto \
    HERALD_LAMBDA_RIE="$RIE_BIN" \
    HERALD_LAMBDA_ENV_AWS_ENDPOINT_URL_SESV2="http://127.0.0.1:$SES_PORT" \
    STRICT_SERVICE_LOADING=1 \
    EAGER_SERVICE_LOADING=1 \
    DNS_ADDRESS=0 \
    DISABLE_EVENTS=1 \
    SKIP_SSL_CERT_DOWNLOAD=1 \
    SQS_ENDPOINT_STRATEGY=dynamic \
    SQS_DISABLE_CLOUDWATCH_METRICS=1 \
    DEBUG="${LOCALSTACK_DEBUG:-0}" \
    PYTHONUNBUFFERED=1 \
    "$LS_VENV/bin/python" -m localstack.runtime.main
  printf '%s\n' "$LOCALSTACK_PORT" >"$STACK_DIR/localstack.port"
}

start_ses() {
  if pid_alive "$SES_PID" "$SES_MATCH" >/dev/null; then
    same_port_or_die "SES v2 emulator" "$SES_PID" "$SES_PORT" SES_PORT
    log "SES v2 emulator already running (pid $(cat "$SES_PID"))"
    return 0
  fi
  rm -f "$SES_PID"
  if port_in_use "$SES_PORT"; then
    if http_ok "http://127.0.0.1:$SES_PORT/health-check"; then
      log "an SES v2 emulator not started by this script answers on 127.0.0.1:$SES_PORT; using it"
      return 0
    fi
    die "127.0.0.1:$SES_PORT is in use by something that is not the SES v2 emulator (set SES_PORT)"
  fi
  log "starting aws-ses-v2-local on 127.0.0.1:$SES_PORT"
  # SMTP_TRANSPORT would make the emulator relay mail over SMTP: never here.
  start_bg "$SES_PID" "$SES_LOG" env -u SMTP_TRANSPORT \
    node "$LS_DIR/node_modules/aws-ses-v2-local/dist/cli.js" --host 127.0.0.1 --port "$SES_PORT"
  printf '%s\n' "$SES_PORT" >"$STACK_DIR/ses.port"
}

# ---------------------------------------------------------------- main
ensure_node_modules_start
rie_start
ensure_venv
ensure_node_modules_wait
rie_wait

start_localstack
start_ses

if [ -f "$SES_PID" ]; then
  wait_for "SES v2 emulator" "$TIMEOUT" "$SES_LOG" "$SES_PID" http_ok "http://127.0.0.1:$SES_PORT/health-check"
fi
if [ -f "$LS_PID" ]; then
  wait_for "LocalStack" "$TIMEOUT" "$LS_LOG" "$LS_PID" localstack_healthy "$LOCALSTACK_PORT" sqs secretsmanager dynamodb
fi
log "services healthy ($(elapsed))"

if [ "${HERALD_SKIP_PROVISION:-0}" != "1" ]; then
  HERALD_SQS_ENDPOINT="http://127.0.0.1:$LOCALSTACK_PORT" \
  HERALD_SES_ENDPOINT="http://127.0.0.1:$LOCALSTACK_PORT" \
  HERALD_SESV2_ENDPOINT="http://127.0.0.1:$SES_PORT" \
  HERALD_PROVISION_ENV_FILE="$STACK_DIR/herald.env" \
    "$LS_VENV/bin/python" "$LS_DIR/init/ready.d/provision.py" \
    || die "provisioning failed (LocalStack log: $LS_LOG)"
fi

if [ -f "$STACK_DIR/herald.env" ]; then
  # .local/herald.env names this stack now; a relative link, so the checkout can move.
  ln -sfn "${STACK_DIR#"$LOCAL_DIR"/}/herald.env" "$ENV_LINK"
fi
log "up in $(elapsed): LocalStack http://127.0.0.1:$LOCALSTACK_PORT  SES v2 http://127.0.0.1:$SES_PORT (mail: /store, viewer: /)"
log "env for the AWS CLI, SDKs and herald: set -a; . ${ENV_LINK#"$ROOT"/}; set +a"
