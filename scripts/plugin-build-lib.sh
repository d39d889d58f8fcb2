# Shared by build-py-plugin.sh, build-js-plugin.sh and build-plain-components.sh (sourced, not
# run). Expects `log`, `out` (the component to build) and, for copy_manifest, `manifest` (its
# manifest's place beside it).

COMPONENTIZE_PY_VERSION=0.25.1

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

# Installs the pinned componentize-py into `$venv` unless it is there already; prints its path.
ensure_componentize_py() {
  local installed
  installed=$("$venv/bin/componentize-py" --version 2>/dev/null || true)
  if [ "$installed" != "componentize-py $COMPONENTIZE_PY_VERSION" ]; then
    log "installing componentize-py $COMPONENTIZE_PY_VERSION into ${venv#"$root"/}"
    [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
      "componentize-py==$COMPONENTIZE_PY_VERSION" >&2
  fi
  echo "$venv/bin/componentize-py"
}
