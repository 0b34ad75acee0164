# Sourced by dev/demo and dev/test: makes the virtual environment and installs the pinned
# requirements (dev/venv.sh), builds the wheel with maturin and installs it, so that everything
# after runs against the installed package, as a user would have it. A caller that already did
# all this in the same environment (.ci/run, before its stub check) exports
# FRAZIL_WHEEL_INSTALLED=<venv>, and the wheel is neither built nor installed a second time.
source "$(dirname "${BASH_SOURCE[0]}")/venv.sh"

if [ "${FRAZIL_WHEEL_INSTALLED:-}" = "$VENV" ]; then
  echo "==> frazil's wheel is already built and installed in $VENV"
else
  echo "==> building the wheel (maturin, release profile)"
  rm -rf dist
  "$VENV/bin/maturin" build --release --out dist 2>&1 | tail -n 2
  echo "==> installing $(ls dist/*.whl)"
  "$PY" -m pip install -q --disable-pip-version-check --force-reinstall --no-deps dist/*.whl
  export FRAZIL_WHEEL_INSTALLED="$VENV"
fi
