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
# Java-side test dependencies from the distribution's packages, installed when missing and we
# may (root, apt-get); otherwise the tests that need them say what is missing:
# - libpostgresql-jdbc-java: the Java reference opens the same JDBC catalog database as frazil in
#   the view interop tests;
# - libhttpcore5-java: the Iceberg runtime jar on PyPI lacks its shaded HttpComponents classes,
#   which the Java REST catalog needs (tests/interop/java_reference.py relocates Debian's);
# - chromium: the headless browser tests/docs/test_site_browser.py loads the built site in
#   (playwright drives it by path; its own browser downloads are not used).
missing=()
[ -e /usr/share/java/postgresql.jar ] || [ -n "${FRAZIL_TEST_PG_JDBC_JAR:-}" ] \
  || missing+=(libpostgresql-jdbc-java)
[ -e /usr/share/java/httpcore5.jar ] || missing+=(libhttpcore5-java)
command -v chromium >/dev/null || missing+=(chromium)
if [ ${#missing[@]} -gt 0 ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "==> installing ${missing[*]} (apt-get)"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >/dev/null 2>&1 \
    || { apt-get update -q >/dev/null 2>&1 \
         && DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >/dev/null 2>&1; } \
    || echo "    (could not install them; the tests that need them will report it)"
fi
