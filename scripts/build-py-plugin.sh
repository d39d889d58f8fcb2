#!/usr/bin/env bash
# Builds the example Python tool plugin (tool-plugins/python) into a WebAssembly component of
# world `agent:core/tool-plugin`: target/plugins/python_outline.wasm, with its manifest
# target/plugins/python_outline.plugin.toml beside it.
#
# Installs componentize-py (pinned in plugin-build-lib.sh) into .toolchain/py-plugin-venv on
# first use. Skips the build when the component is newer than its sources, the WIT and the
# build scripts; FORCE=1 rebuilds anyway.
#
# The component imports WASI 0.2 (the CPython runtime's), which the host provides with nothing
# granted. componentize-py's --stub-wasi is not used: CPython opens the source file to quote
# a syntax error's line, and a stubbed open traps where a denied one fails cleanly.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
src="$root/tool-plugins/python"
venv="$root/.toolchain/py-plugin-venv"
outdir="$root/target/plugins"
out="$outdir/python_outline.wasm"
manifest="$outdir/python_outline.plugin.toml"
log() { echo "build-py-plugin: $*" >&2; }

# shellcheck source=plugin-build-lib.sh
. "$root/scripts/plugin-build-lib.sh"
copy_manifest "$src/python_outline.plugin.toml"

if ! stale "$src" "$root/wit" "$0" "$root/scripts/plugin-build-lib.sh" \
  -type f \( -name '*.py' -o -name '*.wit' -o -name '*.sh' \) \
  -not -path '*/__pycache__/*' -not -name 'test_*'; then
  log "up to date"
  report
  exit 0
fi

componentize_py=$(ensure_componentize_py)

log "componentizing tool-plugins/python (componentize-py $COMPONENTIZE_PY_VERSION)"
start=$SECONDS
tmp="$out.tmp.$$"
trap 'rm -f "$tmp"' EXIT
# VIRTUAL_ENV: look for packages in the tool's own venv only, not in the system's Python.
VIRTUAL_ENV="$venv" "$componentize_py" --quiet -d "$root/wit" -w tool-plugin \
  componentize -p "$src" app -o "$tmp"

publish_component "$tmp"
trap - EXIT
log "built in $(( SECONDS - start )) s"
report
jco="$root/tool-plugins/js/node_modules/.bin/jco"
if [ -x "$jco" ]; then
  "$jco" wit "$out" | grep -E '^  (import|export) ' >&2
else
  log "(to list its imports, install jco: scripts/build-js-plugin.sh)"
fi
