#!/usr/bin/env bash
# Builds the Rust tool plugins (tool-plugins/: data-query, hostile) as components and copies
# them to target/plugins/. Uses the same wasm toolchain set-up as the core. (The plain-export
# components in tool-plugins/ are built by build-plain-components.sh.)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
WASM_CARGO_DIR="$root/tool-plugins" "$root/scripts/wasm-cargo.sh" build --release -p data-query -p hostile
dir=$("$root/scripts/wasm-toolchain.sh" 2>/dev/null | sed -n 's/^CARGO_TARGET_DIR=//p')
mkdir -p "$root/target/plugins"
for name in data_query hostile; do
  out="$dir/wasm32-unknown-unknown/release/$name.wasm"
  dest="$root/target/plugins/${name//_/-}.wasm"
  # Copied only when changed, so that an unchanged plugin keeps its time stamp.
  if ! cmp -s "$out" "$dest"; then
    cp "$out" "$dest.tmp" && mv "$dest.tmp" "$dest"
  fi
  echo "built ${dest#"$root"/} ($(wc -c <"$dest") bytes)" >&2
done
