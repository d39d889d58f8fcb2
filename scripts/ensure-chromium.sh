#!/usr/bin/env bash
# The web host's tests drive a real headless Chromium: install Debian's `chromium` package when
# /usr/bin/chromium is missing (idempotent). Never a browser download step: only apt's mirror.
set -euo pipefail
if [ -x /usr/bin/chromium ]; then
    exit 0
fi
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
echo "ensure-chromium: installing Debian's chromium"
$SUDO apt-get install -y chromium >/dev/null 2>&1 \
    || { $SUDO apt-get update -qq && $SUDO apt-get install -y chromium >/dev/null; }
[ -x /usr/bin/chromium ] || { echo "ensure-chromium: /usr/bin/chromium is still missing" >&2; exit 1; }
