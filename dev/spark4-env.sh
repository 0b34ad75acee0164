#!/usr/bin/env bash
# Creates (or refreshes) the PySpark 4.x test environment: .venv-spark4, or $FRAZIL_SPARK4_VENV,
# with the pins of requirements-spark4.txt and frazil's wheel from dist/ (dev/env.sh builds it).
# Then: "$FRAZIL_SPARK4_VENV/bin/python" -m pytest tests/spark
# Without a wheel in dist/ (a developer checkout where the native module is built in place) the
# source tree's python/ directory is put on the environment's path instead.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${FRAZIL_SPARK4_VENV:-$ROOT/.venv-spark4}"
PY="$VENV/bin/python"
BASE_PYTHON="${FRAZIL_PYTHON:-python3}"

if [ ! -x "$PY" ]; then
  echo "==> creating virtual environment $VENV"
  "$BASE_PYTHON" -m venv "$VENV"
fi
echo "==> installing requirements-spark4.txt into $VENV"
"$PY" -m pip install -q --disable-pip-version-check -r "$ROOT/requirements-spark4.txt"

SITE="$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
shopt -s nullglob
wheels=("$ROOT"/dist/frazil-*.whl)
if [ "${#wheels[@]}" -gt 0 ]; then
  rm -f "$SITE/frazil-source-tree.pth"
  echo "==> installing ${wheels[-1]}"
  "$PY" -m pip install -q --disable-pip-version-check --force-reinstall --no-deps "${wheels[-1]}"
else
  echo "==> no wheel in dist/: using the source tree ($ROOT/python) with its built native module"
  "$PY" -m pip uninstall -q -y frazil >/dev/null 2>&1 || true
  echo "$ROOT/python" >"$SITE/frazil-source-tree.pth"
fi
java_major="$(java -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -n 1)"
if [ -n "$java_major" ] && [ "$java_major" -lt 17 ]; then
  echo "warning: PySpark 4 needs Java 17 or newer; java on PATH is $java_major" >&2
fi
"$PY" -c 'import frazil, pyspark; print(f"frazil {frazil.__version__}, pyspark {pyspark.__version__}")'
