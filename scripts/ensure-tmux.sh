#!/usr/bin/env bash
# The interactive chat's tests drive `agent-host chat` in tmux (send-keys / capture-pane):
# install Debian's tmux when it is missing (idempotent; nothing else is changed or started).
set -euo pipefail
if command -v tmux >/dev/null; then
    exit 0
fi
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
echo "ensure-tmux: installing tmux"
$SUDO apt-get install -y --no-install-recommends tmux >/dev/null 2>&1 \
    || { $SUDO apt-get update -qq && $SUDO apt-get install -y --no-install-recommends tmux >/dev/null; }
command -v tmux >/dev/null || { echo "ensure-tmux: tmux is still missing" >&2; exit 1; }
