# shellcheck shell=bash
# SAM CLI settings shared by scripts/lint-template.sh and scripts/sam.sh: source it with
# `root` set to the repository root and `venv` to the tools venv (.venv/tools).
# No telemetry; no weekly version check against PyPI (SAM has no switch for it: its config
# dir, which SAM reads from __SAM_CLI_APP_DIR, gets a last check in the future); nothing
# written to the home folder; never the EC2 instance metadata endpoint for credentials.
export SAM_CLI_TELEMETRY=0
export __SAM_CLI_APP_DIR="$root/$venv/sam-cli-home"
if [[ ! -f "$__SAM_CLI_APP_DIR/metadata.json" ]]; then
  mkdir -p "$__SAM_CLI_APP_DIR"
  printf '{\n  "lastVersionCheck": 4102444800.0,\n  "telemetryEnabled": false\n}\n' \
    >"$__SAM_CLI_APP_DIR/metadata.json"
fi
export AWS_EC2_METADATA_DISABLED="${AWS_EC2_METADATA_DISABLED:-true}"
