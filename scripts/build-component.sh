#!/usr/bin/env bash
# Builds the core as a WebAssembly component and copies it to target/agent-core.wasm.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/wasm-cargo.sh" build --profile component
dir=$("$root/scripts/wasm-toolchain.sh" 2>/dev/null | sed -n 's/^CARGO_TARGET_DIR=//p')
out="$dir/wasm32-unknown-unknown/component/agent_core.wasm"
mkdir -p "$root/target"
cp "$out" "$root/target/agent-core.wasm.tmp"
mv "$root/target/agent-core.wasm.tmp" "$root/target/agent-core.wasm"
echo "built target/agent-core.wasm ($(wc -c <"$root/target/agent-core.wasm") bytes) from $out" >&2
