#!/usr/bin/env bash
# Installs the bench peer's Python dependencies (bench/peer/requirements.txt)
# into the git-ignored .venv/bench with Python ≥ 3.12. Idempotent: a no-op
# when the requirements have not changed. Prints the interpreter's path.
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib.sh"
VENV="$ROOT/.venv/bench"
REQ="$ROOT/bench/peer/requirements.txt"
want="$(stamp_of "$REQ")"
if [ -x "$VENV/bin/python" ] && [ "$(cat "$VENV/.stamp" 2>/dev/null)" = "$want" ]; then
  echo "$VENV/bin/python"; exit 0
fi
py="$(find_python312)" || die "need Python >= 3.12 for the bench peer (python3.12/python3.13 or pyenv)"
log "installing the bench peer into $VENV with $py"
"$py" -m venv "$VENV"
"$VENV/bin/pip" install -q --disable-pip-version-check -r "$REQ"
echo "$want" >"$VENV/.stamp"
echo "$VENV/bin/python"
