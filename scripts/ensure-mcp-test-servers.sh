#!/usr/bin/env bash
# Installs, pinned and only when missing or stale, the real MCP servers the MCP tests start:
# the reference servers from npm (tests/mcp-servers, by its lockfile) and the Python MCP SDK
# from PyPI in .toolchain/mcp-py-venv (for tests/mcp-servers/py_server.py).
set -euo pipefail

MCP_PY_VERSION=2.3.0

root=$(cd "$(dirname "$0")/.." && pwd)
log() { echo "ensure-mcp-test-servers: $*" >&2; }

"$root/scripts/ensure-npm-deps.sh" "$root/tests/mcp-servers"

venv="$root/.toolchain/mcp-py-venv"
installed=$("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("mcp"))' 2>/dev/null || true)
if [ "$installed" != "$MCP_PY_VERSION" ]; then
  log "installing the Python MCP SDK (mcp $MCP_PY_VERSION) into ${venv#"$root"/}"
  [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "mcp==$MCP_PY_VERSION" >&2
fi
