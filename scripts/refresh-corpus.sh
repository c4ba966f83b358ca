#!/usr/bin/env bash
# For maintainers who have the shared conformance corpus: replaces the cases
# in tests/corpus/*.jsonl with the ones of ../shared/corpus (the shared folder
# beside the checkout) or of the directory given as $1. The copy is what the
# tests run, so a fresh clone needs no shared folder. tests/corpus/README.md
# is the project's own and is left alone.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
src=${1:-$here/../shared/corpus}
if [ ! -d "$src" ]; then
  echo "no corpus at $src (this script is for maintainers with the shared corpus)" >&2
  exit 2
fi
shopt -s nullglob
files=("$src"/*.jsonl)
if [ ${#files[@]} -eq 0 ]; then
  echo "no *.jsonl files in $src" >&2
  exit 2
fi
rm -f "$here"/tests/corpus/*.jsonl
cp "${files[@]}" "$here"/tests/corpus/
echo "copied $(cat "$here"/tests/corpus/*.jsonl | wc -l) cases from $src"
