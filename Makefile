# The two commands: `make run` (the main job) and `make test` (every test).
# Each does its own set-up on a fresh machine (see scripts/wasm-toolchain.sh).

SHELL := /bin/bash
COMPONENT := target/agent-core.wasm
export AGENT_CORE_COMPONENT := $(CURDIR)/$(COMPONENT)
export CARGO_TERM_COLOR ?= never
# A from-scratch build gains nothing from incremental state, and in a clean clone it was a
# third of target/ (4.1 of 12 GB): a CI machine ran out of disk on it. Set
# CARGO_INCREMENTAL=1 to keep it for edit-and-rerun work.
export CARGO_INCREMENTAL ?= 0

PREFIX ?= $(HOME)/.local

.PHONY: check-disk run test install bench eval component host plugins web web-serve lint test-rust test-plugins test-web test-demo test-debian-route clean help fuzz

help:
	@echo "make run   - run TASK in WORKDIR (scripted demo when no provider is configured)"
	@echo "make test  - every test: format, lints, unit, integration, end-to-end, fallback route"
	@echo "make bench - every benchmark in release mode, one table (BENCHMARKS.md explains it)"
	@echo "make eval  - the real-model task suite on a local model (EVAL.md explains it)"
	@echo "make install - agent-host into PREFIX/bin and its component into PREFIX/share/agent-host (PREFIX=$(PREFIX))"

## The core as a WebAssembly component (toolchain set-up included).
component:
	scripts/build-component.sh

## The tool plugins (Rust, Python, JavaScript) as components in target/plugins/, and the
## plain-export example components (exported WIT functions as tools) in target/components/.
plugins:
	scripts/build-rust-plugins.sh
	scripts/build-py-plugin.sh
	scripts/build-js-plugin.sh
	scripts/build-plain-components.sh

## The same component for browsers (jco, JSPI) in hosts/web/gen/, and the page in target/web/.
web: component
	scripts/build-web.sh

## Serves the page on http://127.0.0.1:8080 with a scripted LLM server for its "local" preset.
web-serve: web host
	node hosts/web/scripts/serve.mjs

## The native host and the scripted LLM server.
host:
	cargo build --locked -p agent-cli -p scripted-llm

run: component host
	scripts/run.sh

## agent-host (release) into $(PREFIX)/bin, the component beside it in $(PREFIX)/share/agent-host,
## where the binary looks for it.
install: component
	cargo build --locked --release -p agent-cli
	install -d "$(PREFIX)/bin" "$(PREFIX)/share/agent-host"
	install -m 0755 target/release/agent-host "$(PREFIX)/bin/agent-host"
	install -m 0644 $(COMPONENT) "$(PREFIX)/share/agent-host/agent-core.wasm"
	@env -u AGENT_CORE_COMPONENT "$(PREFIX)/bin/agent-host" --version
	@case ":$$PATH:" in *":$(PREFIX)/bin:"*) ;; *) echo "add it to PATH: export PATH=\"$(PREFIX)/bin:\$$PATH\"";; esac

lint:
	cargo fmt --all --check
	cargo clippy --locked --workspace --all-targets -- -D warnings
	scripts/wasm-cargo.sh clippy --release -- -D warnings
	cargo fmt --manifest-path core-component/fuzz/Cargo.toml --check
	cargo clippy --locked --manifest-path core-component/fuzz/Cargo.toml -- -D warnings
	cargo fmt --manifest-path tool-plugins/Cargo.toml --all --check
	WASM_CARGO_DIR=$(CURDIR)/tool-plugins scripts/wasm-cargo.sh clippy --release -- -D warnings
	WASM_CARGO_DIR=$(CURDIR)/benchmarks/wasm-probe scripts/wasm-cargo.sh clippy --release -- -D warnings

## Every benchmark in release mode, printed as one table (figure, value, unit, target, met?);
## results also in target/bench/results.{md,json}. BENCH_ARGS="--only loop,search" picks some.
bench:
	scripts/bench.sh $(BENCH_ARGS)

## The real-model task suite (not part of `make test`): sets up Qwen2.5-Coder-1.5B and
## llama.cpp's server (pinned, hash-checked, cached in ~/.cache/agent-eval), runs every task
## of eval/tasks.toml through agent-host and through the reference loop, prints one table
## (EVAL.md). EVAL_ARGS="--quick" or "--tasks a,b --agents compact,openai,reference".
eval: component
	cargo build --locked --release -p agent-cli
	python3 eval/run_eval.py $(EVAL_ARGS)

## Fuzz the SSE decoder and every stream fold (FUZZ_SECONDS per target, default 60).
fuzz:
	scripts/fuzz.sh

test-rust: component plugins
	scripts/ensure-sshd.sh
	scripts/ensure-tmux.sh
	scripts/ensure-mcp-test-servers.sh
	scripts/ensure-acp-test-client.sh
	scripts/ensure-redis.sh
	cargo test --locked --workspace

## The plugins' own tests: the Rust query parser natively, the Python outline in CPython, the
## JavaScript outline and both language components under Node (jco); the plain components'
## logic natively (Rust) and in CPython (csv-stats).
test-plugins: plugins
	cargo test --locked --manifest-path tool-plugins/Cargo.toml -p data-query --lib
	cargo test --locked --manifest-path tool-plugins/Cargo.toml -p text-stats -p plain-fs -p fetcher --lib
	python3 -m unittest discover -s tool-plugins/python
	python3 -m unittest discover -s tool-plugins/python-plain
	cd tool-plugins/js && npm test

## The browser host: its modules under Node, then the page in Debian's headless Chromium
## against the scripted LLM server, side by side with the native host on the same scenarios;
## MCP tools against the reference server server-everything (tests/mcp-servers).
test-web: web host
	scripts/ensure-chromium.sh
	scripts/ensure-mcp-test-servers.sh
	cd hosts/web && npm test

## make run's no-key path must keep working: run it with every provider variable unset.
test-demo: component host
	env -u ANTHROPIC_API_KEY -u ANTHROPIC_BASE_URL -u OPENAI_API_KEY -u OPENAI_BASE_URL \
	    -u GEMINI_API_KEY -u GEMINI_BASE_URL -u OPENAI_COMPATIBLE_ENDPOINTS -u AGENT_PROVIDER WORKDIR=$(CURDIR)/target/demo-run scripts/run.sh > target/demo-run.log 2>&1 \
	    || { cat target/demo-run.log; exit 1; }
	grep -q '^Hello$$' target/demo-run.log || { cat target/demo-run.log; exit 1; }
	@echo "demo: ok (log in target/demo-run.log)"

## The Debian fallback for the wasm std is tested, not theoretical: build the component
## through it and check the result with the import-list test.
## `--workspace`, not `-p`: one package alone unifies other features (serde's, libc's,
## rustix's), and cargo rebuilt wasmtime and 90 other crates for it (3 minutes, 2 GB).
test-debian-route:
	WASM_TOOLCHAIN=debian scripts/wasm-cargo.sh build --profile component
	AGENT_CORE_COMPONENT=$(CURDIR)/target/wasm-debian/wasm32-unknown-unknown/component/agent_core.wasm \
	    cargo test --locked --workspace --test component_imports && \
	    AGENT_CORE_COMPONENT=$(CURDIR)/target/wasm-debian/wasm32-unknown-unknown/component/agent_core.wasm \
	    cargo test --locked --workspace --test cli_run

## Says early, not as a linker crash twenty minutes in, when the disk is too small.
check-disk:
	scripts/check-disk.sh

test: check-disk lint test-rust test-plugins test-web test-demo test-debian-route
	@echo "make test: all passed"

clean:
	cargo clean
	rm -rf .toolchain
