#!/usr/bin/env bash
# `make run`: runs TASK in WORKDIR with the configured provider (agent-host's own AGENT_PROVIDER
# and AGENT_MODEL pick one, e.g. a server named in OPENAI_COMPATIBLE_ENDPOINTS); with none, explains
# how to configure one and runs a clearly labelled scripted demo through the real component,
# real tools and real HTTP (a scripted LLM server on 127.0.0.1).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
task=${TASK:-"Create hello.py that prints Hello, then run it to check."}
workdir=${WORKDIR:-$(mktemp -d "${TMPDIR:-/tmp}/agent-run.XXXXXX")}
mkdir -p "$workdir"
host="$root/target/debug/agent-host"
export AGENT_CORE_COMPONENT="$root/target/agent-core.wasm"

configured=""
for p in ANTHROPIC OPENAI GEMINI; do
  key="${p}_API_KEY" url="${p}_BASE_URL"
  if [ -n "${!key:-}" ] || [ -n "${!url:-}" ]; then configured="${p}_*"; break; fi
done
if [ -n "${OPENAI_COMPATIBLE_ENDPOINTS:-}" ] && [ -z "$configured" ]; then configured=OPENAI_COMPATIBLE_ENDPOINTS; fi
if [ -n "${AGENT_PROVIDER:-}" ]; then configured="AGENT_PROVIDER=$AGENT_PROVIDER"; fi

if [ -n "$configured" ]; then
  echo "== agent-host run (provider from $configured) in $workdir"
  status=0
  "$host" run "$task" -C "$workdir" || status=$?
  echo
  echo "== files are in $workdir:"
  ls -la "$workdir"
  exit "$status"
fi

cat <<MSG
No LLM provider is configured. To use a real model, set one of:
  ANTHROPIC_API_KEY=...  (or OPENAI_API_KEY, GEMINI_API_KEY; <PROVIDER>_MODEL picks the model)
  ANTHROPIC_BASE_URL=http://host:port          (an Anthropic-compatible server; key optional)
  OPENAI_COMPATIBLE_ENDPOINTS=local=http://127.0.0.1:11434/v1 AGENT_MODEL=qwen2.5-coder:7b
                                    (a local server: Ollama, llama.cpp's llama-server, vLLM)
and run 'make run TASK="..." WORKDIR=...' again.

============================  SCRIPTED DEMO  ============================
The replies below come from a scripted LLM server on 127.0.0.1, not from a
model. Everything else is real: the agent-core component in wasmtime, its
Anthropic wire protocol over HTTP, and the tools writing files and running
processes in $workdir.
=========================================================================
MSG
out=$(mktemp)
"$root/target/debug/scripted-llm-server" --script "$root/examples/demo-script.json" >"$out" &
server=$!
trap 'kill "$server" 2>/dev/null || true; rm -f "$out"' EXIT
for _ in $(seq 100); do [ -s "$out" ] && break; sleep 0.05; done
url=$(head -n 1 "$out")
[ -n "$url" ] || { echo "the scripted server did not start" >&2; exit 1; }
# The demo's own provider, settings and state: a user's config.toml (its provider, say) must
# not turn the scripted demo into a request to somewhere else.
demo_config=$(mktemp -d)
trap 'kill "$server" 2>/dev/null || true; rm -rf "$out" "$demo_config"' EXIT
AGENT_HOST_CONFIG_DIR="$demo_config" ANTHROPIC_BASE_URL="$url" "$host" run \
  "Create hello.py that prints Hello, then run it to check." -C "$workdir" --provider anthropic --no-persist
echo
echo "== the agent left these files in $workdir:"
ls -la "$workdir"
echo "== hello.py:"
cat "$workdir/hello.py"
echo "== python3 hello.py:"
python3 "$workdir/hello.py"
