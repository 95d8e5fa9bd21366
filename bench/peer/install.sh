#!/usr/bin/env bash
# Installs a Python bench peer's dependencies (its requirements.txt) into a
# git-ignored venv with Python ≥ 3.12: bench/peer into .venv/bench (the
# default), bench/peer-async into .venv/bench-async. Idempotent: a no-op
# when the requirements have not changed. Prints the interpreter's path.
# Usage: bench/peer/install.sh [bench/peer|bench/peer-async]
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib.sh"
peer="$(basename "${1:-bench/peer}")"
VENV="$ROOT/.venv/${peer/peer/bench}"
REQ="$ROOT/bench/$peer/requirements.txt"
[ -f "$REQ" ] || die "no $REQ"
want="$(stamp_of "$REQ")"
if [ -x "$VENV/bin/python" ] && [ "$(cat "$VENV/.stamp" 2>/dev/null)" = "$want" ]; then
  echo "$VENV/bin/python"; exit 0
fi
py="$(find_python312)" || die "need Python >= 3.12 for the bench peer (python3.12/python3.13 or pyenv)"
log "installing the bench peer $peer into $VENV with $py"
"$py" -m venv "$VENV"
"$VENV/bin/pip" install -q --disable-pip-version-check -r "$REQ"
echo "$want" >"$VENV/.stamp"
echo "$VENV/bin/python"
