#!/usr/bin/env bash
# The built wheel (dist/*.whl) as a user gets it: a manylinux abi3 wheel that installs with its
# declared dependencies into a clean venv of Python 3.10 (the oldest supported) and of the newest
# CPython found here, with no Rust toolchain on PATH, and runs dev/wheel_smoke.py. Interpreters
# come from PATH or pyenv; one that is missing is reported and skipped.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
WHEEL="$(ls "$ROOT"/dist/frazil-*.whl | head -n 1)"
case "$(basename "$WHEEL")" in
  *-cp310-abi3-manylinux*) ;;
  *) echo "wheel-check: $(basename "$WHEEL") is not a cp310-abi3 manylinux wheel" >&2; exit 1 ;;
esac

find_python() {  # $1: a version like 3.10, or "newest"
  local candidates=()
  if [ "$1" = newest ]; then
    candidates=($(ls -d "$HOME"/.pyenv/versions/3.1[0-9]* 2>/dev/null | grep -v 't$' | sort -V | tail -n 1))
    for v in 3.14 3.13 3.12; do command -v "python$v" >/dev/null && candidates+=("$(command -v python$v)"); done
  else
    command -v "python$1" >/dev/null && candidates+=("$(command -v python$1)")
    candidates+=($(ls -d "$HOME"/.pyenv/versions/"$1".* 2>/dev/null | sort -V | tail -n 1))
  fi
  for c in "${candidates[@]}"; do
    [ -d "$c" ] && c="$c/bin/python"
    # pyenv's shims answer for versions that are not selected: run it to be sure.
    if [ -x "$c" ] && "$c" -c pass 2>/dev/null; then echo "$c"; return; fi
  done
}

status=0
checked=""
for want in 3.10 newest; do
  py="$(find_python "$want" || true)"
  if [ -z "$py" ]; then
    echo "==> wheel-check: no Python $want here; skipped"
    continue
  fi
  version="$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
  case " $checked " in *" $version "*) continue ;; esac
  checked="$checked $version"
  tmp="$(mktemp -d)"
  echo "==> wheel-check: Python $version ($py), no cargo on PATH"
  "$py" -m venv "$tmp/venv"
  # A PATH with no Rust toolchain, and no build from source allowed: the wheel must be enough.
  if ! env -i PATH="$tmp/venv/bin:/usr/bin:/bin" HOME="$tmp" \
      "$tmp/venv/bin/pip" install -q --disable-pip-version-check --only-binary=:all: "$WHEEL" \
    || ! env -i PATH="$tmp/venv/bin:/usr/bin:/bin" HOME="$tmp" \
      "$tmp/venv/bin/python" "$ROOT/dev/wheel_smoke.py"; then
    echo "wheel-check: Python $version failed" >&2
    status=1
  fi
  rm -rf "$tmp"
done

# The sdist: maturin packs it; it must hold every crate, the lock file and the Python package, and
# its workspace must compile from the unpacked tree alone (cargo check, offline, sharing this
# checkout's target directory so dependencies are not rebuilt). FRAZIL_SDIST_FULL=1 also builds
# and installs a wheel from it (a full release build: minutes).
echo "==> sdist"
tmp="$(mktemp -d)"
"${VENV:-$ROOT/.venv}/bin/maturin" sdist -o "$tmp" >/dev/null 2>&1
sdist="$(ls "$tmp"/frazil-*.tar.gz)"
tar xzf "$sdist" -C "$tmp"
src="$(ls -d "$tmp"/frazil-*/)"
for need in Cargo.toml Cargo.lock pyproject.toml python/frazil/__init__.py python/frazil/py.typed \
    $(cd "$ROOT" && ls -d rust/*/Cargo.toml); do
  [ -e "$src/$need" ] || { echo "sdist lacks $need" >&2; status=1; }
done
if ! (cd "$src" && CARGO_TARGET_DIR="$ROOT/target" cargo check --offline --workspace --quiet); then
  echo "wheel-check: the sdist does not compile" >&2
  status=1
fi
if [ "${FRAZIL_SDIST_FULL:-}" = 1 ]; then
  "${VENV:-$ROOT/.venv}/bin/pip" wheel -q --no-deps --no-build-isolation -w "$tmp/wheel" "$sdist"
  ls "$tmp"/wheel/frazil-*.whl
fi
rm -rf "$tmp"
echo "    $(basename "$sdist"): complete, compiles"
exit $status
