#!/usr/bin/env bash
# The Python package's tests: a fresh virtual environment, the wheel built
# with maturin (debug profile, in the workspace's target dir) and installed
# in it with the tests' requirements, then pytest.
#
#   scripts/python-tests.sh [VENV_DIR]     (default: a temporary directory)
#
# The corpus and `toolscan sse` comparisons use the `toolscan` binary when
# it is built (`TOOLSCAN_BIN`, else target/debug or target/release).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
crate=crates/toolscan-python
python=${PYTHON:-python3}

venv=${1:-}
if [ -z "$venv" ]; then
  venv=$(mktemp -d)/venv
  trap 'rm -rf "$(dirname "$venv")"' EXIT
fi
"$python" -m venv "$venv"
pip() { "$venv/bin/python" -m pip --disable-pip-version-check -q "$@"; }

pip install "maturin>=1.9.4,<2"
wheels=$(mktemp -d)
"$venv/bin/maturin" build --manifest-path "$crate/Cargo.toml" --interpreter "$venv/bin/python" \
  --out "$wheels" --quiet
pip install "$wheels"/toolscan-*.whl -r "$crate/tests/requirements.txt"
rm -rf "$wheels"

# The vLLM plugin's tests set up what they need (their own script).
if [ -f "$crate/tests/vllm/setup.sh" ]; then
  bash "$crate/tests/vllm/setup.sh" "$venv"
fi

# From outside the source tree, so that the installed wheel is imported,
# not python/toolscan (which has no extension module).
cd "$venv"
"$venv/bin/python" -m pytest -q -p no:cacheprovider "$root/$crate/tests"
