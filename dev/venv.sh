# Sourced by dev/env.sh and .ci/run: makes the virtual environment (.venv, or $FRAZIL_VENV) if it
# is missing and installs the pinned requirements; builds nothing, so the lints can run first.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
VENV="${FRAZIL_VENV:-$ROOT/.venv}"
PY="$VENV/bin/python"

if [ ! -x "$PY" ]; then
  echo "==> creating virtual environment $VENV"
  python3 -m venv "$VENV"
fi
echo "==> installing requirements"
"$PY" -m pip install -q --disable-pip-version-check -r requirements-dev.txt
