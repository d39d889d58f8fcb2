#!/usr/bin/env bash
# Warns, before a long build, when the disk holding cargo's target folder has less room than
# `make test` takes from a clean clone (docs/building.md). A warning, never a failure: the
# figure is an estimate, and a machine with a warm target folder needs less.
set -uo pipefail
cd "$(dirname "$0")/.."

need_gb=${AGENT_TEST_DISK_GB:-10}
[[ $need_gb =~ ^[0-9]+$ ]] || need_gb=10
target=${CARGO_TARGET_DIR:-target}
mkdir -p "$target" 2>/dev/null || true

free_kb=$(df -Pk "$target/" 2>/dev/null | awk 'NR == 2 { print $4 }')
if ! [[ ${free_kb:-} =~ ^[0-9]+$ ]]; then
    echo "disk: cannot tell the free space of $target; make test needs about ${need_gb} GB"
    exit 0
fi
free_gb=$((free_kb / 1024 / 1024))
if (( free_gb >= need_gb )); then
    echo "disk: ${free_gb} GB free for $target (make test needs about ${need_gb} GB)"
    exit 0
fi
# Only now is the size of what is already built worth a walk over it: it needs no new room.
used_kb=$(du -sk "$target/" 2>/dev/null | cut -f1)
[[ ${used_kb:-} =~ ^[0-9]+$ ]] || used_kb=0
used_gb=$((used_kb / 1024 / 1024))
if (( free_gb + used_gb < need_gb )); then
    echo "warning: make test needs about ${need_gb} GB for $target and its tools; ${free_gb} GB is free" \
        "there and $target holds ${used_gb} GB. Free some space or expect 'No space left on device'." >&2
else
    echo "disk: ${free_gb} GB free for $target, which holds ${used_gb} GB (make test needs about ${need_gb} GB)"
fi
