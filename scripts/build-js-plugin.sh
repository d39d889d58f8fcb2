#!/usr/bin/env bash
# Builds the example JavaScript tool plugin (tool-plugins/js) into a WebAssembly component of
# world `agent:core/tool-plugin`: target/plugins/markdown_outline.wasm, with its manifest
# target/plugins/markdown_outline.plugin.toml beside it, then prints the component's imports
# and exports (read back from the binary with jco).
#
# Runs `npm ci` in tool-plugins/js when node_modules is missing or older than the lockfile.
# Skips the build when the component is newer than its sources, the lockfile, the WIT and
# this script; FORCE=1 rebuilds anyway.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
src="$root/tool-plugins/js"
outdir="$root/target/plugins"
out="$outdir/markdown_outline.wasm"
manifest="$outdir/markdown_outline.plugin.toml"
log() { echo "build-js-plugin: $*" >&2; }

command -v node >/dev/null || { log "error: node is not installed"; exit 1; }
command -v npm >/dev/null || { log "error: npm is not installed"; exit 1; }

if [ ! -f "$src/node_modules/.package-lock.json" ] ||
  [ "$src/package-lock.json" -nt "$src/node_modules/.package-lock.json" ]; then
  log "installing npm dependencies of tool-plugins/js (npm ci)"
  (cd "$src" && npm ci --no-audit --no-fund --loglevel=error >&2)
fi

mkdir -p "$outdir"
if ! cmp -s "$src/markdown_outline.plugin.toml" "$manifest"; then
  cp "$src/markdown_outline.plugin.toml" "$manifest"
  log "wrote $manifest"
fi

stale() {
  [ "${FORCE:-0}" = 1 ] && return 0
  [ -f "$out" ] || return 0
  [ -n "$(find "$src/src" "$src/package-lock.json" "$root/wit" "$0" -type f \
    -newer "$out" -print -quit)" ]
}

size_of() { stat -c %s "$1"; }
report() { log "$out: $(size_of "$out") bytes ($(( $(size_of "$out") / 1024 )) KiB)"; }

if ! stale; then
  log "up to date"
  report
  exit 0
fi

log "componentizing tool-plugins/js/src/plugin.js (componentize-js $(
  node -p "require('$src/node_modules/@bytecodealliance/componentize-js/package.json').version"))"
start=$SECONDS
tmp="$out.tmp.$$.wasm"
trap 'rm -f "$tmp"' EXIT
# http and fetch-event would add wasi:http imports the plugin never uses; stdio, random and
# clocks stay (the engine reports errors on stderr and seeds Math.random).
"$src/node_modules/.bin/componentize-js" "$src/src/plugin.js" \
  --wit "$root/wit" --world-name tool-plugin --disable http fetch-event -o "$tmp" >&2

# A component (not a core module): `\0asm`, version 0x0d, layer 1.
if [ "$(head -c 8 "$tmp" | od -An -tx1 | tr -d ' \n')" != 0061736d0d000100 ]; then
  log "error: $tmp is not a WebAssembly component"
  exit 1
fi
mv "$tmp" "$out"
trap - EXIT
log "built in $(( SECONDS - start )) s"
report
"$src/node_modules/.bin/jco" wit "$out" | grep -E '^  (import|export) ' >&2
