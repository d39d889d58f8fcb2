# Shared by build-py-plugin.sh and build-js-plugin.sh (sourced, not run). Expects `log`,
# `out` (the component to build) and `manifest` (its manifest's place beside it).

# Copies the plugin's manifest beside the component when it changed.
copy_manifest() {
  mkdir -p "$(dirname "$out")"
  if ! cmp -s "$1" "$manifest"; then
    cp "$1" "$manifest"
    log "wrote $manifest"
  fi
}

# True when the component must be (re)built: FORCE=1, missing, or older than any file that
# `find "$@"` lists (the arguments are find's starting points and tests).
stale() {
  [ "${FORCE:-0}" = 1 ] && return 0
  [ -f "$out" ] || return 0
  [ -n "$(find "$@" -newer "$out" -print -quit)" ]
}

report() {
  local size
  size=$(stat -c %s "$out")
  log "$out: $size bytes ($(( size / 1024 )) KiB)"
}

# Moves a freshly built `$1` to `$out` if it is a component (not a core module): `\0asm`,
# version 0x0d, layer 1.
publish_component() {
  if [ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" != 0061736d0d000100 ]; then
    log "error: $1 is not a WebAssembly component"
    exit 1
  fi
  mv "$1" "$out"
}
