#!/usr/bin/env bash
# Install vLLM and the light packages its tool parsers import into the virtual
# environment VENV, for the tests in this folder and bench/bench_vllm.py.
# vLLM, xgrammar and apache-tvm-ffi come without their declared dependencies
# (torch, CUDA); the modules that need torch are stubbed by conftest.py.
#
#   crates/toolscan-python/tests/vllm/setup.sh VENV
#
# With uv (installed from PyPI into VENV) it takes about 25 s on an empty
# cache, against about 100 s with pip alone, which it falls back to.
set -euo pipefail
venv=${1:?usage: setup.sh VENV}
here=$(cd "$(dirname "$0")" && pwd)
python="$venv/bin/python"
no_deps=(vllm==0.33.0 xgrammar==0.2.8 apache-tvm-ffi==0.1.11)
log=$(mktemp)
trap 'rm -f "$log"' EXIT

if "$python" -m pip install --quiet --disable-pip-version-check uv >"$log" 2>&1 \
    && "$venv/bin/uv" pip install --quiet --python "$python" --no-deps "${no_deps[@]}" >>"$log" 2>&1 \
    && "$venv/bin/uv" pip install --quiet --python "$python" -r "$here/requirements.txt" >>"$log" 2>&1; then
    exit 0
fi
echo "setup.sh: uv failed, installing with pip" >&2
cat "$log" >&2
pip=("$python" -m pip install --quiet --disable-pip-version-check)
# pip warns that vLLM's declared dependencies are missing: that is the point.
"${pip[@]}" --no-deps "${no_deps[@]}"
"${pip[@]}" -r "$here/requirements.txt" 2> >(grep -v "which is not installed\|dependency resolver" >&2)
