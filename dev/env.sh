# Sourced by dev/demo and dev/test: makes the virtual environment (.venv, or $FRAZIL_VENV) if it
# is missing, installs the pinned requirements, builds the wheel with maturin and installs it, so
# that everything after runs against the installed package, as a user would have it.
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

echo "==> building the wheel (maturin, release profile)"
rm -rf dist
"$VENV/bin/maturin" build --release --out dist 2>&1 | tail -n 2
echo "==> installing $(ls dist/*.whl)"
"$PY" -m pip install -q --disable-pip-version-check --force-reinstall --no-deps dist/*.whl
