#!/usr/bin/env bash
# Build every workspace member's sdist and wheel from its own metadata (no workspace sources), then install
# the built iclr25-utils wheel (and, when given, one method package) into a fresh venv from that folder
# only, and import it there, outside the source tree.
# Usage: ci/build_check.sh [SLUG]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dist=$(mktemp -d)
venv=$(mktemp -d)
trap 'rm -rf "$dist" "$venv"' EXIT
cd "$root"
uv build --all-packages --no-sources --out-dir "$dist" -q
ls "$dist"
uv venv -q --python "$(command -v python3)" "$venv"
pkgs=(iclr25-utils)
[ -n "${1:-}" ] && pkgs+=("iclr25-$1")
uv pip install -q --python "$venv/bin/python" --find-links "$dist" "${pkgs[@]}"
cd "$venv"
"$venv/bin/python" -c "import iclr25.utils, sys; print('imported iclr25.utils', iclr25.utils.__version__, 'from', iclr25.utils.__file__)"
test -f "$("$venv/bin/python" -c 'import iclr25.utils, os; print(os.path.dirname(iclr25.utils.__file__))')/py.typed"
"$venv/bin/iclr25" list
if [ -n "${1:-}" ]; then
  "$venv/bin/python" -c "import iclr25.${1//-/_} as m; print('imported', m.__name__, m.__version__)"
fi
echo "build check: ok"
