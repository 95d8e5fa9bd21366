# shellcheck shell=bash
# Sourced by scripts/lint-template.sh and scripts/deploy-local.sh: the pinned SAM CLI and
# cfn-lint venv, and the settings that keep SAM CLI and boto offline. Expects $root (the
# repository root, the current directory). Sets venv, requirements and the `offline` array.
#
# Creates or updates the git-ignored venv .venv/tools from tools/requirements.txt (only when
# that file changed). Env: PYTHON - interpreter used to create the venv (default: python3).

venv=".venv/tools"
requirements="tools/requirements.txt"
python="${PYTHON:-python3}"

declare -F log >/dev/null || log() { printf '==> %s\n' "$*" >&2; }

# --- venv -------------------------------------------------------------------
if [[ ! -x "$venv/bin/python" ]]; then
  log "creating $venv"
  "$python" -m venv "$venv"
fi
stamp="$venv/.requirements.sha256"
want="$(sha256sum "$requirements" | cut -d' ' -f1)"
if [[ ! -f "$stamp" || "$(cat "$stamp")" != "$want" ]]; then
  log "installing $requirements into $venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$requirements"
  printf '%s\n' "$want" >"$stamp"
fi

# --- keep SAM CLI and boto offline --------------------------------------------
export SAM_CLI_TELEMETRY=0
# SAM CLI asks PyPI for a newer version once a week and has no switch for it.
# Give it its own config dir (SAM's documented-in-code override) whose last
# check lies in the future, so it never checks.
export __SAM_CLI_APP_DIR="$root/$venv/sam-cli-home"
if [[ ! -f "$__SAM_CLI_APP_DIR/metadata.json" ]]; then
  mkdir -p "$__SAM_CLI_APP_DIR"
  printf '{\n  "lastVersionCheck": 4102444800.0,\n  "telemetryEnabled": false\n}\n' \
    >"$__SAM_CLI_APP_DIR/metadata.json"
fi
# Validation resolves pseudo parameters, so it needs a Region but makes no call.
export AWS_DEFAULT_REGION="${AWS_DEFAULT_REGION:-us-east-1}"
# Never probe the EC2 instance metadata endpoint for credentials.
export AWS_EC2_METADATA_DISABLED=true
# Anything that still tries HTTP(S) fails at once on a closed loopback port;
# loopback itself (the local stack) is reached directly.
# shellcheck disable=SC2034  # used by the scripts that source this file
offline=(env HTTP_PROXY=http://127.0.0.1:9 HTTPS_PROXY=http://127.0.0.1:9
  http_proxy=http://127.0.0.1:9 https_proxy=http://127.0.0.1:9
  NO_PROXY=127.0.0.1,localhost no_proxy=127.0.0.1,localhost)
