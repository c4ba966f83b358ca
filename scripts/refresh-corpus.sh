#!/usr/bin/env bash
# Refreshes tests/corpus/ from the shared conformance corpus (../shared/corpus
# beside the checkout, or the directory given as $1). The copy is what the
# tests run, so they also pass on a fresh clone without ../shared.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
src=${1:-$here/../shared/corpus}
if [ ! -d "$src" ]; then
  echo "no corpus at $src" >&2
  exit 2
fi
rm -f "$here"/tests/corpus/*.jsonl
cp "$src"/*.jsonl "$src"/README.md "$here"/tests/corpus/
echo "copied $(cat "$here"/tests/corpus/*.jsonl | wc -l) cases from $src"
