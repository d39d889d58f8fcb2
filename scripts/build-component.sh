#!/usr/bin/env bash
# Builds the core as a WebAssembly component and copies it to target/agent-core.wasm.
exec "$(dirname "$0")/build-wasm-artifact.sh" core-component agent_core agent-core.wasm
