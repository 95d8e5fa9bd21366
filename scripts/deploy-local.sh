#!/usr/bin/env bash
# Builds herald with SAM and deploys the real template.yaml (only parameters differ) into the
# local stack (scripts/local-up.sh, started here when it is not up and left running), the way
# `make deploy` deploys into AWS. Idempotent: a second run with no change is a no-op changeset.
#
#   LOCALSTACK_PORT=4566 scripts/deploy-local.sh      # prints a summary and the stack's outputs
#
# Quiet by default: what was built, the stack's status and outputs, the time; SAM's own output
# goes to <stack dir>/deploy-local.log (shown when a step fails). VERBOSE=1 shows all of it.
#
# What differs from AWS (docs/deploy.md, "Try a deploy locally"):
#   * AWS_ENDPOINT_URL points SAM CLI (S3 upload, CloudFormation) at LocalStack; the
#     credentials are LocalStack's test/test and no real account is reached.
#   * The bootstraps are built for this machine (LAMBDA_ARCH, parameter LambdaArchitecture): the
#     functions run here as host processes under the Lambda Runtime Interface Emulator
#     (LAMBDA_RUNTIME_EXECUTOR=herald-host, localstack/lambda-executor), fed by LocalStack's event
#     source mapping, rule and schedule, with AWS_ENDPOINT_URL and AWS_ENDPOINT_URL_SESV2 pointing
#     at the local stack (scripts/local-up.sh).
#   * SES configuration sets and event destinations, CloudWatch dashboards and Logs Insights
#     query definitions are recorded as created but not built (LocalStack has no support).
#   * LocalStack applies some stack updates only partly: deploy a changed template as a new
#     stack (HERALD_STACK_NAME) or into a restarted local stack to see what it builds.
#   * The webhook signing secret is made once per local stack and kept in
#     <stack dir>/deploy-local.secret (git-ignored .local/).
#
# Env: HERALD_STACK_NAME (default herald-local; not herald, whose queue names local-up.sh
#      provisions for the tests), AWS_REGION (default us-east-1), LOCALSTACK_PORT,
#      HERALD_DEPLOY_PARAMETERS (further Key=Value overrides, appended; later ones win).
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ROOT"
t0=$(date +%s%N)
elapsed() { local ms=$(( ($(date +%s%N) - t0) / 1000000 )); echo "$((ms / 1000)).$((ms % 1000 / 100))s"; }
# run STEP CMD...: CMD's output goes to <stack dir>/deploy-local.log (VERBOSE=1: to the
# terminal); on failure the log's last lines are shown.
out_log="$STACK_DIR/deploy-local.log"
mkdir -p "$STACK_DIR"
: >"$out_log"
run() {
  local step="$1"
  shift
  if [ "${VERBOSE:-0}" = 1 ]; then "$@"; return; fi
  printf '== %s\n' "$step" >>"$out_log"
  if ! "$@" >>"$out_log" 2>&1; then
    tail -n 40 "$out_log" >&2
    die "$step failed (full output: ${out_log#"$ROOT"/})"
  fi
}

# The local stack, started if needed and left running (make local-down stops it).
if ! localstack_healthy "$LOCALSTACK_PORT" cloudformation s3 lambda; then
  log "starting the local stack on ports $LOCALSTACK_PORT/$SES_PORT (the first run installs it: a few minutes; VERBOSE=1 shows progress)"
  quiet scripts/local-up.sh
fi
# SAM CLI as `make deploy` runs it (.venv/tools, scripts/sam-env.sh settings). Installing it
# reaches PyPI, so it happens first, outside the closed proxy; then, as for `make lint`, any
# HTTP(S) but to the local stack fails at once on a closed port.
run "install the SAM CLI" scripts/install-tools.sh
venv=".venv/tools"
root="$ROOT"
# shellcheck source=scripts/sam-env.sh
source "$ROOT/scripts/sam-env.sh"
closed_proxy=(env HTTP_PROXY=http://127.0.0.1:9 HTTPS_PROXY=http://127.0.0.1:9
  http_proxy=http://127.0.0.1:9 https_proxy=http://127.0.0.1:9
  NO_PROXY=127.0.0.1,localhost no_proxy=127.0.0.1,localhost
  AWS_EC2_METADATA_DISABLED=true)
sam=("${closed_proxy[@]}" "$ROOT/$venv/bin/sam")

stack="${HERALD_STACK_NAME:-herald-local}"
region="${AWS_REGION:-us-east-1}"
endpoint="http://127.0.0.1:$LOCALSTACK_PORT"

localstack_healthy "$LOCALSTACK_PORT" cloudformation s3 lambda \
  || die "no LocalStack with CloudFormation, S3 and Lambda on $endpoint: run make local-up (LOCALSTACK_PORT=$LOCALSTACK_PORT)"

# The signing secret: made once, reused so redeploys change nothing.
secret_file="$STACK_DIR/deploy-local.secret"
if [ ! -s "$secret_file" ]; then
  mkdir -p "$STACK_DIR"
  (umask 077 && printf 'whsec_%s\n' "$(head -c 32 /dev/urandom | base64 -w0)" >"$secret_file")
fi
secret="$(cat "$secret_file")"

# sam build runs `make build-<Function>` (go build for linux/LAMBDA_ARCH); the modules come from
# the Go module proxy first, so the build itself needs no network. The functions run on this
# machine, so they are built for it and deployed with its architecture.
case "$(go env GOARCH)" in
  amd64) export LAMBDA_ARCH=amd64; lambda_architecture=x86_64 ;;
  arm64) export LAMBDA_ARCH=arm64; lambda_architecture=arm64 ;;
  *) die "Lambda runs x86_64 and arm64 only, not $(go env GOARCH)" ;;
esac
run "go mod download" go mod download
[ "${VERBOSE:-0}" = 1 ] && log "sam build"
# --no-cached: SAM's build cache hashes all of CodeUri (".", .venv/ included: ~45 s here);
# the Go build cache already makes an unchanged rebuild take seconds.
run "sam build" "${sam[@]}" build --no-cached
built=$(cd .aws-sam/build && for f in */bootstrap; do [ -f "$f" ] && printf '%s ' "${f%/bootstrap}"; done)
log "built ${built% } ($(elapsed))"

# Everything the stack talks to is LocalStack on 127.0.0.1; never a real account.
aws_local=(env -u AWS_PROFILE -u AWS_SESSION_TOKEN -u AWS_DEFAULT_PROFILE
  AWS_ENDPOINT_URL="$endpoint" AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test
  AWS_REGION="$region" AWS_DEFAULT_REGION="$region")
# SAM CLI splits --parameter-overrides at spaces unless the value is quoted: Key="a b".
# shellcheck disable=SC2206  # HERALD_DEPLOY_PARAMETERS is a word list of Key=Value
params=('SenderIdentity="example.com"' 'DefaultFromAddress="Herald <noreply@example.com>"'
  "WebhookSigningSecret=\"$secret\"" "LambdaArchitecture=$lambda_architecture" ${HERALD_DEPLOY_PARAMETERS:-})
log "sam deploy of stack $stack into LocalStack at $endpoint"
run "sam deploy" "${aws_local[@]}" "${sam[@]}" deploy \
  --stack-name "$stack" --region "$region" \
  --no-confirm-changeset --no-fail-on-empty-changeset \
  --parameter-overrides "${params[@]}"
# The summary: the stack's status, how many resources, its outputs (once; sam deploy printed
# them already under VERBOSE=1), read with the boto3 that SAM CLI brings.
summary=(--outputs)
[ "${VERBOSE:-0}" = 1 ] && summary=()
"${aws_local[@]}" "${closed_proxy[@]}" "$ROOT/$venv/bin/python" "$ROOT/scripts/stack-summary.py" \
  "${summary[@]}" "$stack" >&2 || die "stack $stack did not deploy (full output: ${out_log#"$ROOT"/})"
log "deployed stack $stack in $(elapsed)"
