#!/usr/bin/env bash
# Builds benchmarks/wasm-probe (the core's tools as a plain wasm module, for `make bench`)
# with the component's toolchain and cargo profile, and copies it to target/bench-probe.wasm.
exec "$(dirname "$0")/build-wasm-artifact.sh" benchmarks/wasm-probe bench_probe bench-probe.wasm
