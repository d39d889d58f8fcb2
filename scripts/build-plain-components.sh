#!/usr/bin/env bash
# Builds the plain-export example components into target/components/ (not target/plugins/,
# whose every .wasm is loaded as a tool-plugin): WASI 0.2 components that export ordinary WIT
# functions, each of which a host can offer as a tool.
#
#   text-stats.wasm     tool-plugins/text-stats     (Rust)    word and line statistics
#   hostile-plain.wasm  tool-plugins/hostile-plain  (Rust)    test fixture: escapes to contain
#   fetcher.wasm        tool-plugins/fetcher        (Rust)    HTTP GET through wasi:http
#   csv-stats.wasm      tool-plugins/python-plain   (Python)  CSV column statistics
#
# A built component keeps no WIT doc comments, so each carries its WIT text: the Rust ones in
# their `agent-tool-wit` custom section (checked here), the Python one as csv-stats.wit beside
# its .wasm. Idempotent: cargo rebuilds only what changed, a copy is made only when the
# output differs, and the Python component is rebuilt only when older than its sources, WIT or
# these scripts (FORCE=1 rebuilds it anyway).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
outdir="$root/target/components"
venv="$root/.toolchain/py-plugin-venv"
log() { echo "build-plain-components: $*" >&2; }
mkdir -p "$outdir"

# Rust: linked into components by wasm-component-ld, as the tool plugins are.
start=$SECONDS
WASM_CARGO_DIR="$root/tool-plugins" "$root/scripts/wasm-cargo.sh" build --release \
  -p text-stats -p hostile-plain -p fetcher
dir=$("$root/scripts/wasm-toolchain.sh" 2>/dev/null | sed -n 's/^CARGO_TARGET_DIR=//p')
for name in text_stats hostile_plain fetcher; do
  built="$dir/wasm32-unknown-unknown/release/$name.wasm"
  dest="$outdir/${name//_/-}.wasm"
  "$root/scripts/wasm-sections.py" --quiet --require-custom agent-tool-wit "$built"
  if ! cmp -s "$built" "$dest"; then
    cp "$built" "$dest.tmp" && mv "$dest.tmp" "$dest"
  fi
  log "${dest#"$root"/}: $(stat -c %s "$dest") bytes"
done
log "Rust components done in $(( SECONDS - start )) s"

# Python: componentize-py, as for the Python tool plugin.
src="$root/tool-plugins/python-plain"
wit="$src/wit/csv-stats.wit"
out="$outdir/csv-stats.wasm"
# shellcheck source=plugin-build-lib.sh
. "$root/scripts/plugin-build-lib.sh"

if ! cmp -s "$wit" "$outdir/csv-stats.wit"; then
  cp "$wit" "$outdir/csv-stats.wit"
fi
if stale "$src" "$0" "$root/scripts/plugin-build-lib.sh" \
  -type f \( -name '*.py' -o -name '*.wit' -o -name '*.sh' \) \
  -not -path '*/__pycache__/*' -not -name 'test_*'; then
  componentize_py=$(ensure_componentize_py)
  log "componentizing tool-plugins/python-plain (componentize-py $COMPONENTIZE_PY_VERSION)"
  start=$SECONDS
  tmp="$out.tmp.$$"
  trap 'rm -f "$tmp"' EXIT
  # VIRTUAL_ENV: look for packages in the tool's own venv only, not in the system's Python.
  VIRTUAL_ENV="$venv" "$componentize_py" --quiet -d "$wit" -w csv-stats \
    componentize -p "$src" app -o "$tmp"
  publish_component "$tmp"
  trap - EXIT
  log "csv-stats built in $(( SECONDS - start )) s"
else
  log "csv-stats is up to date"
fi
report
