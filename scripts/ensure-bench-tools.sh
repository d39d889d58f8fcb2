#!/usr/bin/env bash
# `make bench` compares our grep and glob with ripgrep on the Rust standard library sources:
# install Debian's `ripgrep` and `rust-src` when missing (idempotent; only apt's mirror, and
# Debian's fixed versions keep the searched tree the same on every machine of this kind).
set -euo pipefail
# The distributed batch's benchmark runs its own redis-server.
"$(dirname "$0")/ensure-redis.sh"
TREE=/usr/lib/rustlib/src/rust/library
missing=()
command -v rg >/dev/null || missing+=(ripgrep)
[ -d "$TREE" ] || missing+=(rust-src)
if [ ${#missing[@]} -eq 0 ]; then
    exit 0
fi
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
echo "ensure-bench-tools: installing ${missing[*]}"
$SUDO apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null 2>&1 \
    || { $SUDO apt-get update -qq && $SUDO apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null; }
command -v rg >/dev/null || { echo "ensure-bench-tools: rg is still missing" >&2; exit 1; }
[ -d "$TREE" ] || { echo "ensure-bench-tools: $TREE is still missing" >&2; exit 1; }
