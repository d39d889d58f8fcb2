#!/usr/bin/env bash
# `make web`: the very same target/agent-core.wasm transpiled by jco for browsers into
# hosts/web/gen/ (ES modules, TypeScript types, core .wasm files), with JSPI so the transport,
# sleeping, approvals, JavaScript tools and subagent waits can be async; then the demo page
# bundled by esbuild into target/web/ (serve it with `make web-serve`).
#
# Installs hosts/web's pinned npm packages when missing. Skips the transpile when hosts/web/gen
# is newer than the component and this script; FORCE=1 redoes it.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
web="$root/hosts/web"
component="$root/target/agent-core.wasm"
gen="$web/gen"
out="$root/target/web"
log() { echo "build-web: $*" >&2; }

[ -f "$component" ] || { log "error: $component is missing: run make component first"; exit 1; }
"$root/scripts/ensure-npm-deps.sh" "$web"
jco="$web/node_modules/.bin/jco"

# The imports that may suspend the component (they return promises) and the export that may
# be suspended. Everything else (the in-memory filesystem, events, queues) stays synchronous.
async_imports=(
  'agent:core/llm-transport@0.1.0#send'
  'agent:core/llm-transport@0.1.0#[method]http-response.next-chunk'
  'agent:core/session-host@0.1.0#sleep'
  'agent:core/session-host@0.1.0#approve'
  'agent:core/session-host@0.1.0#spawn-subagent'
  'agent:core/session-host@0.1.0#subagent-wait'
  'agent:core/host-tools@0.1.0#call'
)
async_exports=('agent:core/agent@0.1.0#[method]session.submit')

if [ "${FORCE:-0}" = 1 ] || [ ! -f "$gen/agent-core.js" ] ||
  [ "$component" -nt "$gen/agent-core.js" ] || [ "$0" -nt "$gen/agent-core.js" ]; then
  args=(transpile "$component" -o "$gen.tmp" --name agent-core --instantiation async --async-mode jspi)
  for name in "${async_imports[@]}"; do args+=(--async-imports "$name"); done
  for name in "${async_exports[@]}"; do args+=(--async-exports "$name"); done
  rm -rf "$gen.tmp"
  "$jco" "${args[@]}" >/dev/null
  rm -rf "$gen"
  mv "$gen.tmp" "$gen"
  log "transpiled $component with jco $("$jco" --version) into $gen"
else
  log "$gen is up to date"
fi

mkdir -p "$out/gen"
cp "$gen"/*.wasm "$out/gen/"
cp "$web/page/index.html" "$web/page/style.css" "$web/page/workspace.css" "$web/page/events.css" "$out/"
# jco's output has a Node-only path (reading the .wasm with node:fs) the browser never takes.
"$web/node_modules/.bin/esbuild" "$web/page/app.js" --bundle --format=esm --target=chrome120 \
  --platform=browser --external:'node:*' --sourcemap --log-level=warning --outfile="$out/app.js"
log "page in $out ($(du -sh "$out" | cut -f1)): make web-serve to open it"
