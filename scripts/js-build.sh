#!/usr/bin/env bash
# Builds the WebAssembly module of the npm package (crates/toolscan-wasm)
# into js/toolscan/toolscan.wasm.
#
#   scripts/js-build.sh
#
# Installs the wasm32-unknown-unknown target with rustup when it is
# missing. The module is built in release with link-time optimisation, one
# codegen unit, `panic = "abort"` and symbols stripped (set here, not in the
# workspace's profile, which stays the plain `--release` users build), in
# its own target directory (target/wasm) so that it never invalidates the
# host's builds.
set -euo pipefail
cd "$(dirname "$0")/.."

target=wasm32-unknown-unknown
if command -v rustup >/dev/null 2>&1; then
  if ! rustup target list --installed | grep -qx "$target"; then
    rustup target add "$target"
  fi
fi

CARGO_PROFILE_RELEASE_LTO=true \
CARGO_PROFILE_RELEASE_CODEGEN_UNITS=1 \
CARGO_PROFILE_RELEASE_PANIC=abort \
CARGO_PROFILE_RELEASE_STRIP=true \
CARGO_PROFILE_RELEASE_OPT_LEVEL=3 \
  cargo build --locked -p toolscan-wasm --target "$target" --release --target-dir target/wasm

cp target/wasm/$target/release/toolscan_wasm.wasm js/toolscan/toolscan.wasm
raw=$(wc -c <js/toolscan/toolscan.wasm)
gz=$(gzip -9c js/toolscan/toolscan.wasm | wc -c)
echo "js/toolscan/toolscan.wasm: $raw bytes ($gz gzipped)"
