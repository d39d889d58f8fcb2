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

"$root/scripts/ensure-npm-deps.sh" "$src"

# shellcheck source=plugin-build-lib.sh
. "$root/scripts/plugin-build-lib.sh"
copy_manifest "$src/markdown_outline.plugin.toml"

if ! stale "$src/src" "$src/package-lock.json" "$root/wit" "$0" -type f; then
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

publish_component "$tmp"
trap - EXIT
log "built in $(( SECONDS - start )) s"
report
"$src/node_modules/.bin/jco" wit "$out" | grep -E '^  (import|export) ' >&2
