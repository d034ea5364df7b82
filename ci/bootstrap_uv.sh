#!/usr/bin/env bash
# Make uv available without touching the system Python. On Debian/Ubuntu the system interpreter is
# "externally managed" (PEP 668) and refuses `pip install`, so uv goes into a private folder of the checkout:
# a venv at .venvs/_uv when the interpreter can make one, else a plain `pip install --target` folder (which
# PEP 668 allows, for interpreters without the venv module). The Makefile puts .venvs/_uv/bin on PATH.
# Usage: ci/bootstrap_uv.sh [PYTHON] [UV_SPEC]    (UV_BOOTSTRAP_DIR overrides the folder; tests use it)
set -euo pipefail
python=${1:-python3}
spec=${2:-uv>=0.13.9,<0.14}
root=$(cd "$(dirname "$0")/.." && pwd)
dest=${UV_BOOTSTRAP_DIR:-$root/.venvs/_uv}
if [ -x "$dest/bin/uv" ]; then exit 0; fi
rm -rf "$dest"
if [ -z "${UV_BOOTSTRAP_NO_VENV:-}" ] && "$python" -m venv "$dest" >/dev/null 2>&1 \
    && "$dest/bin/python" -m pip install -q --disable-pip-version-check "$spec"; then
  echo "bootstrap: uv installed into the venv $dest"
else
  rm -rf "$dest"
  "$python" -m pip install -q --disable-pip-version-check --target "$dest/lib" "$spec"
  mkdir -p "$dest/bin"
  ln -sf ../lib/bin/uv "$dest/bin/uv"
  echo "bootstrap: uv installed into the folder $dest/lib (no venv module)"
fi
"$dest/bin/uv" --version
