#!/usr/bin/env bash
# Warns, before a long build, when the disk holding target/ has less room than `make test`
# takes from a clean clone (measured: see NEED_GB). A warning, not a failure: the figure is
# an estimate, and a machine with warm caches needs less.
set -euo pipefail
cd "$(dirname "$0")/.."

# Peak of a clean-clone `make test` with CARGO_INCREMENTAL=0: target/, .toolchain/, the
# node_modules folders and the cargo registry (docs/building.md).
NEED_GB=${AGENT_TEST_DISK_GB:-10}

mkdir -p target
free_kb=$(df -Pk target | awk 'NR == 2 { print $4 }')
free_gb=$((free_kb / 1024 / 1024))
used_gb=$(( $(du -sk target | cut -f1) / 1024 / 1024 ))
if (( free_gb + used_gb < NEED_GB )); then
    echo "warning: make test needs about ${NEED_GB} GB for target/ and its tools;" \
        "$(df -Ph target | awk 'NR == 2 { print $4 }') free on $(df -P target | awk 'NR == 2 { print $6 }')" \
        "and target/ holds ${used_gb} GB. Free some space or expect 'No space left on device'." >&2
else
    echo "disk: ${free_gb} GB free for target/ (make test needs about ${NEED_GB} GB)"
fi
