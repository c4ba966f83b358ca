#!/usr/bin/env bash
# Runs the core's unit tests of its byte-level code under Miri (a nightly
# toolchain's interpreter that checks for undefined behaviour): the marker
# scan, the byte-set searches, the pending buffer, the UTF-8 helpers and
# check, the CPU level.
#
#   scripts/miri.sh [portable|avx2|all]   (default all)
#
# `portable` runs them with no vector instructions of our own (what a CPU
# without AVX2 runs); `avx2` builds with `-C target-feature=+avx2`, so that
# Miri runs the AVX2 searches (it interprets their intrinsics) and checks
# their `unsafe` code. Miri has no AVX-512: those paths are not covered.
# Tests marked `ignore` under Miri are exhaustive ones that would take
# hours there; they run in `cargo test`.
#
# Installs the nightly toolchain and its `miri` component if missing.
set -euo pipefail
cd "$(dirname "$0")/.."
which=${1:-all}
case "$which" in
  portable) levels=(portable) ;;
  avx2) levels=(avx2) ;;
  all) levels=(portable avx2) ;;
  *) sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2 ;;
esac
if ! rustup toolchain list | grep -q '^nightly'; then
  rustup toolchain install nightly --profile minimal
fi
if ! cargo +nightly miri --version >/dev/null 2>&1; then
  rustup component add --toolchain nightly miri rust-src
fi
filters=(scan:: pending::)
for level in "${levels[@]}"; do
  echo "== Miri, $level"
  flags=""
  [ "$level" = avx2 ] && flags="-C target-feature=+avx2"
  RUSTFLAGS="$flags" TOOLSCAN_SIMD=$level MIRIFLAGS="-Zmiri-env-forward=TOOLSCAN_SIMD" \
    cargo +nightly miri test -p toolscan-core --lib -- "${filters[@]}"
done
