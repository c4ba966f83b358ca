#!/usr/bin/env bash
# The JavaScript package's tests (js/toolscan): builds the WebAssembly
# module (scripts/js-build.sh), installs the test dependencies from the
# lockfile (`npm ci`: the AI SDK, @ai-sdk-tool/parser, TypeScript), checks
# the type declarations against the AI SDK's own (`tsc`), and runs the
# tests with Node's own runner: the corpus through the JS parser (compared
# with the `toolscan` binary when `target/debug/toolscan` is built), the
# API and its errors, the AI SDK middleware end to end, and `npm pack`
# installed into a fresh folder.
#
#   scripts/js-tests.sh
#
# Needs Node.js >= 18 and npm.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "js-tests.sh: Node.js and npm are needed" >&2
  exit 2
fi
bash scripts/js-build.sh
cd js/toolscan
npm ci --no-audit --no-fund
npx tsc -p test/types
node --expose-gc --test test/
