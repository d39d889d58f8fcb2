#!/usr/bin/env bash
# Runs cargo for the core on wasm32-unknown-unknown with the toolchain that
# wasm-toolchain.sh set up: `scripts/wasm-cargo.sh build --release`, `... clippy`.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
env_lines=$("$root/scripts/wasm-toolchain.sh")
WASM_BUILD_STD=""
while IFS='=' read -r key value; do
  [ -n "$key" ] && export "$key=$value"
done <<<"$env_lines"
# WASM_CARGO_DIR builds another wasm workspace (the Rust tool plugins) the same way.
cd "${WASM_CARGO_DIR:-$root/core-component}"
sub=$1
shift
# shellcheck disable=SC2086 # WASM_BUILD_STD is empty or one flag
exec cargo "$sub" --locked --target wasm32-unknown-unknown $WASM_BUILD_STD "$@"
