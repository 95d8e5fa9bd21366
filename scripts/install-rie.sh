#!/usr/bin/env bash
# Installs the AWS Lambda Runtime Interface Emulator (RIE) into .tools/bin/aws-lambda-rie,
# built from source with `go install` at a pinned version. Idempotent: a no-op (~50 ms) when
# the pinned version is already there. Prints the binary's path.
#
# The module has no semver tags that the Go module proxy serves (v1.x tags are refused),
# so the pin is a pseudo-version. To move it: go list -m -json <module>@latest
#
# Run a Go Lambda (provided.al2023 style `bootstrap`) under it, all on loopback:
#   AWS_LAMBDA_FUNCTION_TIMEOUT=30 AWS_LAMBDA_FUNCTION_NAME=deliver AWS_REGION=us-east-1 \
#   .tools/bin/aws-lambda-rie \
#     --runtime-interface-emulator-address 127.0.0.1:9000 \
#     --runtime-api-address 127.0.0.1:9001 \
#     bin/deliver/bootstrap
#   curl -sS -XPOST http://127.0.0.1:9000/2015-03-31/functions/function/invocations -d '{...event...}'
# Gotchas:
#  - defaults are 0.0.0.0:8080 (all interfaces!) and 127.0.0.1:9001: always pass both flags,
#    and give each concurrent RIE its own pair of ports.
#  - there is no --help: unknown flags are ignored, so `aws-lambda-rie --help` starts a server
#    on 0.0.0.0:8080 and waits.
#  - the bootstrap must be built for the host's GOARCH (the Makefile's Lambda build is arm64).
#  - AWS_LAMBDA_FUNCTION_TIMEOUT defaults to 300 s; a timeout answers HTTP 200 with the text
#    "Task timed out after N.00 seconds"; a handler error answers HTTP 200 with
#    {"errorMessage":..,"errorType":..}. The RIE forwards its whole environment to the function.
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

RIE_MODULE="github.com/aws/aws-lambda-runtime-interface-emulator"
RIE_VERSION="${RIE_VERSION:-v0.0.0-20261030222936-bef5c4ba774d}"
TOOLS_BIN="$ROOT/.tools/bin"
RIE_BIN="$TOOLS_BIN/aws-lambda-rie"

command -v go >/dev/null || die "go is required"

if [ -x "$RIE_BIN" ] && go version -m "$RIE_BIN" 2>/dev/null \
     | grep -Eq "^[[:space:]]+mod[[:space:]]+${RIE_MODULE}[[:space:]]+${RIE_VERSION}([[:space:]]|\$)"; then
  printf '%s\n' "$RIE_BIN"
  exit 0
fi

log "installing $RIE_MODULE/cmd/aws-lambda-rie@$RIE_VERSION into .tools/bin"
mkdir -p "$TOOLS_BIN"
# go install pkg@version ignores the repo's go.mod, so this never touches herald's module.
(cd "$ROOT" && GOBIN="$TOOLS_BIN" CGO_ENABLED=0 GOFLAGS=-buildvcs=false \
   go install -trimpath -ldflags='-s -w' "$RIE_MODULE/cmd/aws-lambda-rie@$RIE_VERSION")
printf '%s\n' "$RIE_BIN"
