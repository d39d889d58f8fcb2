#!/usr/bin/env bash
# Builds one wasm crate with the component's toolchain and cargo profile and copies the result
# to target/OUTPUT: `build-wasm-artifact.sh CRATE_DIR ARTIFACT OUTPUT` (ARTIFACT is the .wasm
# name cargo writes, e.g. agent_core). Used by build-component.sh and build-bench-probe.sh.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
crate_dir=$1 artifact=$2 output=$3
WASM_CARGO_DIR="$root/$crate_dir" "$root/scripts/wasm-cargo.sh" build --profile component
dir=$("$root/scripts/wasm-toolchain.sh" 2>/dev/null | sed -n 's/^CARGO_TARGET_DIR=//p')
out="$dir/wasm32-unknown-unknown/component/$artifact.wasm"
mkdir -p "$root/target"
cp "$out" "$root/target/$output.tmp"
mv "$root/target/$output.tmp" "$root/target/$output"
echo "built target/$output ($(wc -c <"$root/target/$output") bytes) from $out" >&2
