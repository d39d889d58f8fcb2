#!/usr/bin/env bash
# Draws docs/screenshots/chat.png: `agent-host chat` in a real terminal (tmux, 110x44) fixing a
# failing test, with the real component, tools and sandbox; the model's replies come from the
# scripted server (chat-script.json), so the picture is the same on every run. The pane is
# captured with its colours and drawn by headless Chromium. Needs tmux, python3, chromium and
# `make host component` done.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=$(mktemp -d) home=$(mktemp -d) out=$(mktemp) socket="agent-host-shot-$$"
trap 'tmux -L "$socket" kill-server 2>/dev/null || true; kill "${server:-0}" 2>/dev/null || true; rm -rf "$work" "$home" "$out"' EXIT

cat > "$work/stats.py" <<'PY'
def mean(values):
    return sum(values) / (len(values) - 1)
PY
cat > "$work/test_stats.py" <<'PY'
import traceback
from stats import mean


def test_mean():
    assert mean([1, 2, 3]) == 2, f"mean([1, 2, 3]) is {mean([1, 2, 3])}"


def test_empty():
    try:
        mean([])
    except ValueError:
        return
    raise AssertionError("mean([]) did not raise ValueError")


failed = 0
for test in (test_mean, test_empty):
    try:
        test()
        print(test.__name__, "passed")
    except Exception:
        failed += 1
        print(test.__name__, "FAILED")
        traceback.print_exc()
raise SystemExit(failed)
PY

"$root/target/debug/scripted-llm-server" --script "$here/chat-script.json" >"$out" &
server=$!
for _ in $(seq 100); do [ -s "$out" ] && break; sleep 0.05; done
url=$(head -n 1 "$out")

tmux -L "$socket" new-session -d -s shot -x 110 -y 44 \
  "env -i PATH=$PATH TERM=tmux-256color LC_ALL=C.UTF-8 HOME=$home \
   AGENT_CORE_COMPONENT=$root/target/agent-core.wasm ANTHROPIC_BASE_URL=$url ANTHROPIC_API_KEY=demo \
   $root/target/debug/agent-host chat -C $work; sleep 600"
wait_for() {
  for _ in $(seq 600); do
    tmux -L "$socket" capture-pane -p -t shot | grep -q -- "$1" && return 0
    sleep 0.1
  done
  echo "timed out waiting for $1" >&2; exit 1
}
wait_for "/ commands"
tmux -L "$socket" send-keys -t shot -l "the tests fail: find out why and fix it"
tmux -L "$socket" send-keys -t shot Enter
wait_for "test_empty"
sleep 1
tmux -L "$socket" send-keys -t shot -l "thanks! now add a median() with @stat"
tmux -L "$socket" send-keys -t shot Tab
sleep 1
tmux -L "$socket" capture-pane -e -p -t shot > "$out"
python3 "$here/pane_to_html.py" < "$out" > "$work/pane.html"
chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --force-device-scale-factor=1 \
  --window-size=1000,830 --screenshot="$here/chat.png" "file://$work/pane.html" 2>/dev/null
echo "wrote $here/chat.png"
