#!/usr/bin/env bash
# Install vLLM and the light packages its tool parsers import into the virtual
# environment VENV, for the tests in this folder and bench/bench_vllm.py.
# vLLM, xgrammar and apache-tvm-ffi come without their declared dependencies
# (torch, CUDA); the modules that need torch are stubbed by conftest.py.
#
#   crates/toolscan-python/tests/vllm/setup.sh VENV
set -euo pipefail
venv=${1:?usage: setup.sh VENV}
here=$(cd "$(dirname "$0")" && pwd)
pip=("$venv/bin/python" -m pip install --quiet --disable-pip-version-check)
"${pip[@]}" --no-deps vllm==0.33.0 xgrammar==0.2.8 apache-tvm-ffi==0.1.11
"${pip[@]}" -r "$here/requirements.txt"
