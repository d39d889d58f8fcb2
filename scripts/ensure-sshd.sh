#!/usr/bin/env bash
# The SSH environment's tests run a real OpenSSH sshd on 127.0.0.1: install Debian's
# openssh-server when it is missing (idempotent; nothing else is changed or started).
set -euo pipefail
if [ -x /usr/sbin/sshd ] && command -v ssh-keygen >/dev/null; then
    exit 0
fi
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
echo "ensure-sshd: installing openssh-server"
$SUDO apt-get install -y --no-install-recommends openssh-server openssh-client >/dev/null 2>&1 \
    || { $SUDO apt-get update -qq && $SUDO apt-get install -y --no-install-recommends openssh-server openssh-client >/dev/null; }
[ -x /usr/sbin/sshd ] || { echo "ensure-sshd: /usr/sbin/sshd is still missing" >&2; exit 1; }
