#!/usr/bin/env bash
# Installs, pinned and only when missing or stale, the ACP client the `agent-host acp` tests
# drive it with: the official Python SDK (agent-client-protocol on PyPI) in
# .toolchain/acp-py-venv, for tests/acp-client/client.py.
set -euo pipefail

ACP_PY_VERSION=0.12.1

root=$(cd "$(dirname "$0")/.." && pwd)
venv="$root/.toolchain/acp-py-venv"
installed=$("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("agent-client-protocol"))' 2>/dev/null || true)
if [ "$installed" != "$ACP_PY_VERSION" ]; then
  echo "ensure-acp-test-client: installing agent-client-protocol $ACP_PY_VERSION into ${venv#"$root"/}" >&2
  [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "agent-client-protocol==$ACP_PY_VERSION" >&2
fi
