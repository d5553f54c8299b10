#!/usr/bin/env bash
# The Python package as its users get it: builds the `mcpcassette` wheel
# with maturin (python/pyproject.toml), installs it into a fresh venv with
# the pinned mcp SDK and fastmcp, and runs the pytest plugin's suite
# (tests/python/) against the example servers, from the installed wheel.
#
# Usage: bash .ci/python.sh [PROFILE]   (default dev: CI builds the wheel
# from the debug profile it has already compiled; `dist` is the release)
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
source .ci/lib.sh
root="$PWD"
work="$root/.ci/work"
profile="${1:-dev}"

rm -rf "$work/venv-build" "$work/venv-pytest" "$work/wheels" "$work/pytest-run"
python3 -m venv "$work/venv-build"
pip_install_pinned "$work/venv-build/bin/python" .ci/requirements-maturin.txt
(cd python && "$work/venv-build/bin/maturin" build --profile "$profile" --strip --out "$work/wheels")
wheel="$(ls "$work"/wheels/mcpcassette-*.whl)"
echo "wheel: $(basename "$wheel") ($(du -h "$wheel" | cut -f1))"

python3 -m venv "$work/venv-pytest"
pip_install_pinned "$work/venv-pytest/bin/python" .ci/requirements-fastmcp.txt .ci/requirements-pytest.txt
pip_install "$work/venv-pytest/bin/python" --no-deps --no-index "$wheel"

# The module and the binary come from the wheel, not from the tree.
"$work/venv-pytest/bin/python" - "$work/venv-pytest" <<'PY'
import sys
import mcpcassette
venv = sys.argv[1]
assert mcpcassette.__file__.startswith(venv), mcpcassette.__file__
assert mcpcassette.find_binary() == f"{venv}/bin/mcpcassette", mcpcassette.find_binary()
print(f"mcpcassette module {mcpcassette.__file__}, binary {mcpcassette.find_binary()}")
PY

mkdir -p "$work/pytest-run"
cd "$work/pytest-run"
MCPCASSETTE_DEMO_SERVER="$root/target/debug/examples/demo_server" \
MCPCASSETTE_NOTES_SERVER="$root/target/debug/examples/notes_server" \
MCPCASSETTE_HTTP_SERVER="$root/target/debug/examples/rmcp_http_server" \
    "$work/venv-pytest/bin/python" -m pytest -p no:cacheprovider -v "$root/tests/python"
