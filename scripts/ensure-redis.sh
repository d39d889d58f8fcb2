#!/usr/bin/env bash
# The distributed batch's tests run a real redis-server on 127.0.0.1: install Debian's
# redis-server when it is missing (idempotent; the package's own service is not started
# here, the tests start their own servers).
set -euo pipefail
if command -v redis-server >/dev/null; then
    exit 0
fi
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
echo "ensure-redis: installing redis-server"
$SUDO apt-get install -y --no-install-recommends redis-server >/dev/null 2>&1 \
    || { $SUDO apt-get update -qq && $SUDO apt-get install -y --no-install-recommends redis-server >/dev/null; }
command -v redis-server >/dev/null || { echo "ensure-redis: redis-server is still missing" >&2; exit 1; }
