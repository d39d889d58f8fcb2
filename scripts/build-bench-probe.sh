#!/usr/bin/env bash
# Builds benchmarks/wasm-probe (the core's tools as a plain wasm module, for `make bench`)
# with the component's toolchain and cargo profile, and copies it to target/bench-probe.wasm.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
WASM_CARGO_DIR="$root/benchmarks/wasm-probe" "$root/scripts/wasm-cargo.sh" build --profile component
dir=$("$root/scripts/wasm-toolchain.sh" 2>/dev/null | sed -n 's/^CARGO_TARGET_DIR=//p')
out="$dir/wasm32-unknown-unknown/component/bench_probe.wasm"
mkdir -p "$root/target"
cp "$out" "$root/target/bench-probe.wasm.tmp"
mv "$root/target/bench-probe.wasm.tmp" "$root/target/bench-probe.wasm"
echo "built target/bench-probe.wasm ($(wc -c <"$root/target/bench-probe.wasm") bytes) from $out" >&2
