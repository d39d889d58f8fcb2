#!/usr/bin/env bash
# make bench: builds everything in release mode, installs what the search benchmark compares
# against (Debian's ripgrep and the Rust standard library sources), runs every benchmark and
# prints one table. Extra arguments go to agent-bench (e.g. `--only loop,startup`).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
scripts/ensure-bench-tools.sh
scripts/build-component.sh
scripts/build-bench-probe.sh
# The components whose calls are measured (target/plugins, target/components).
scripts/build-rust-plugins.sh
scripts/build-plain-components.sh
cargo build --locked --release -p agent-cli -p agent-bench
exec target/release/agent-bench --component target/agent-core.wasm --agent-host target/release/agent-host \
    --probe target/bench-probe.wasm --out target/bench "$@"
