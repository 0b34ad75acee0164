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
# PostgreSQL's JDBC driver (Debian's libpostgresql-jdbc-java): the Java reference opens the same
# JDBC catalog database as frazil in the view interop tests. Installed from the distribution's
# packages when missing and we may (root, apt-get); otherwise those tests say what is missing.
if [ ! -e /usr/share/java/postgresql.jar ] && [ -z "${FRAZIL_TEST_PG_JDBC_JAR:-}" ] \
    && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "==> installing libpostgresql-jdbc-java (apt-get)"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q libpostgresql-jdbc-java >/dev/null 2>&1 \
    || { apt-get update -q >/dev/null 2>&1 \
         && DEBIAN_FRONTEND=noninteractive apt-get install -y -q libpostgresql-jdbc-java >/dev/null 2>&1; } \
    || echo "    (could not install it; the JDBC view interop tests will report it)"
fi
