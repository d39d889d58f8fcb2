"""`make eval`: runs the task suite (tasks.toml) through agent-host and through the reference
loop on the same local model, and prints one table. EVAL.md explains the method.

By default it sets up and serves the pinned model itself (setup.sh, serve_model.py). With
--base-url it uses a running Chat Completions server instead (the harness's own test points
it at a scripted server, with --quick).

Each agent configuration is a name: `reference` (reference_loop.py), `default` (agent-host
with a named Chat Completions endpoint and no profile set), or `PROFILE[-noreminders]`
(agent-host with `profile = PROFILE` on that endpoint, reminders off when asked).
"""

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import tomllib
import urllib.request
from pathlib import Path

EVAL = Path(__file__).resolve().parent
ROOT = EVAL.parent
CACHE = Path(os.environ.get("AGENT_EVAL_CACHE", Path.home() / ".cache" / "agent-eval"))
MODEL_FILE = CACHE / "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
MODEL_NAME = "qwen2.5-coder-1.5b-instruct"


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="only the tasks marked quick")
    parser.add_argument("--tasks", help="comma-separated task ids (default: all)")
    parser.add_argument("--agents", default="default,reference",
                        help="comma-separated agent configurations (default: default,reference)")
    parser.add_argument("--base-url", help="a running Chat Completions server (…/v1); skips the model set-up")
    parser.add_argument("--model", default=MODEL_NAME)
    parser.add_argument("--agent-host", type=Path, help="default: target/release/agent-host, else target/debug")
    parser.add_argument("--max-turns", type=int, default=15)
    parser.add_argument("--timeout", type=int, default=600, help="seconds per task and agent")
    parser.add_argument("--port", type=int, default=8093)
    parser.add_argument("--out", type=Path, default=ROOT / "target" / "eval")
    parser.add_argument("--workdir", type=Path,
                        help="an empty folder to make each task's workspace in (default: a new temporary one)")
    return parser.parse_args()


def load_tasks(args: argparse.Namespace) -> list:
    with open(EVAL / "tasks.toml", "rb") as f:
        tasks = tomllib.load(f)["task"]
    if args.quick:
        tasks = [t for t in tasks if t.get("quick")]
    if args.tasks:
        wanted = args.tasks.split(",")
        unknown = set(wanted) - {t["id"] for t in tasks}
        if unknown:
            sys.exit(f"unknown task ids: {', '.join(sorted(unknown))}")
        tasks = [t for t in tasks if t["id"] in wanted]
    return tasks


def prepare_workspace(task: dict, workdir: Path) -> Path:
    workdir.mkdir(parents=True, exist_ok=True)
    for child in workdir.iterdir():
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child)
        else:
            child.unlink()
    for name, content in task.get("files", {}).items():
        path = workdir / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)
    return workdir


def check(task: dict, workdir: Path) -> bool:
    done = subprocess.run(["bash", "-c", task["check"]], cwd=workdir, capture_output=True, timeout=60)
    return done.returncode == 0


def find_agent_host(explicit: Path | None) -> Path:
    for candidate in [explicit, ROOT / "target/release/agent-host", ROOT / "target/debug/agent-host"]:
        if candidate and candidate.is_file():
            return candidate
    sys.exit("no agent-host binary: build it (cargo build --release -p agent-cli) or pass --agent-host")


def agent_config(agent: str, base_url: str, config_dir: Path) -> None:
    lines = ["[endpoints.local]", f'base_url = "{base_url}"', 'protocol = "chat-completions"']
    if agent != "default":
        profile, _, variant = agent.partition("-")
        lines.append(f'profile = "{profile}"')
        if variant == "noreminders":
            lines.append("reminders = false")
        elif variant:
            sys.exit(f"unknown agent variant {agent!r}: use PROFILE or PROFILE-noreminders")
    config_dir.mkdir(parents=True, exist_ok=True)
    (config_dir / "config.toml").write_text("\n".join(lines) + "\n")


def run_agent_host(args, binary: Path, agent: str, base_url: str, task: dict, workdir: Path, scratch: Path):
    config_dir = scratch / f"config-{agent}"
    agent_config(agent, base_url, config_dir)
    env = dict(os.environ, AGENT_HOST_CONFIG_DIR=str(config_dir), AGENT_HOST_STATE_DIR=str(scratch / "state"))
    for var in [v for v in env if v.endswith(("_API_KEY", "_BASE_URL")) or v == "OPENAI_COMPATIBLE_ENDPOINTS"]:
        del env[var]
    command = [str(binary), "run", task["instruction"], "--provider", "local", "--model", args.model,
               "--cwd", str(workdir), "--json", "--no-persist", "--max-turns", str(args.max_turns)]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=args.timeout)
    turns = sum(1 for line in done.stdout.splitlines() if line.startswith('{"kind":"ASSISTANT_TEXT_END"'))
    return turns, done.stdout + done.stderr


def run_reference(args, base_url: str, task: dict, workdir: Path):
    command = [sys.executable, str(EVAL / "reference_loop.py"), base_url, args.model, str(workdir),
               task["instruction"], str(args.max_turns)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=args.timeout)
    try:
        turns = json.loads(done.stdout.strip().splitlines()[-1])["turns"]
    except (ValueError, IndexError, KeyError):
        turns = 0
    return turns, done.stdout + done.stderr


def start_model_server(args) -> tuple:
    subprocess.run(["bash", str(EVAL / "setup.sh")], check=True)
    python = CACHE / "venv" / "bin" / "python"
    template = ROOT.parent / "shared" / "local-llm" / "qwen25-fenced-tools.jinja"
    if not template.is_file():
        sys.exit(f"the chat template {template} is missing (it comes with ../shared)")
    log = open(args.out / "server.log", "w")
    server = subprocess.Popen([str(python), str(EVAL / "serve_model.py"), str(MODEL_FILE), str(template),
                               str(args.port)], stdout=log, stderr=subprocess.STDOUT)
    base_url = f"http://127.0.0.1:{args.port}/v1"
    for _ in range(300):
        if server.poll() is not None:
            sys.exit(f"the model server exited; see {args.out / 'server.log'}")
        try:
            urllib.request.urlopen(f"{base_url}/models", timeout=2)
            return server, base_url
        except OSError:
            time.sleep(1)
    server.kill()
    sys.exit("the model server did not answer within 300 s")


def main() -> None:
    args = parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    tasks = load_tasks(args)
    agents = args.agents.split(",")
    binary = find_agent_host(args.agent_host) if any(a != "reference" for a in agents) else None
    server = None
    base_url = args.base_url
    if base_url is None:
        server, base_url = start_model_server(args)
    # Every task of the run works in this one folder, so every request's prefix (system prompt,
    # tools) is the same from task to task and the server's prompt cache keeps it.
    own_workdir = args.workdir is None
    if own_workdir:
        args.workdir = Path(tempfile.mkdtemp(prefix="agent-eval-workspace-"))
    elif args.workdir.exists() and any(args.workdir.iterdir()):
        sys.exit(f"--workdir {args.workdir} is not empty; each task's workspace replaces its contents")
    results = []
    logs = args.out / "logs"
    logs.mkdir(exist_ok=True)
    try:
        with tempfile.TemporaryDirectory(prefix="agent-eval-") as scratch:
            # One agent through every task, then the next: the server's cache keeps each
            # agent's prompt prefix for all of its tasks.
            for agent in agents:
                for task in tasks:
                    workdir = prepare_workspace(task, args.workdir)
                    started = time.monotonic()
                    try:
                        if agent == "reference":
                            turns, log = run_reference(args, base_url, task, workdir)
                        else:
                            turns, log = run_agent_host(args, binary, agent, base_url, task, workdir, Path(scratch))
                    except subprocess.TimeoutExpired:
                        turns, log = -1, "timed out"
                    seconds = time.monotonic() - started
                    solved = check(task, workdir)
                    (logs / f"{task['id']}.{agent}.log").write_text(log)
                    results.append({"task": task["id"], "agent": agent, "solved": solved,
                                    "turns": turns, "seconds": round(seconds, 1)})
                    print(f"{agent:>20} {task['id']:<18} {'solved' if solved else 'failed':<7} "
                          f"{turns:>3} turns {seconds:6.1f} s", flush=True)
    finally:
        if server is not None:
            server.send_signal(signal.SIGTERM)
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server.kill()
        if own_workdir:
            shutil.rmtree(args.workdir, ignore_errors=True)
    table = render(tasks, agents, results)
    print(table)
    (args.out / "results.json").write_text(json.dumps(results, indent=2))
    (args.out / "results.md").write_text(table)


def render(tasks: list, agents: list, results: list) -> str:
    by = {(r["task"], r["agent"]): r for r in results}
    header = "| task | " + " | ".join(f"{a} | turns | s" for a in agents) + " |"
    rule = "| --- |" + " --- | --- | --- |" * len(agents)
    rows = [header, rule]
    for task in tasks:
        cells = []
        for agent in agents:
            r = by[(task["id"], agent)]
            cells += ["yes" if r["solved"] else "no", str(r["turns"]), f"{r['seconds']:.0f}"]
        rows.append(f"| {task['id']} | " + " | ".join(cells) + " |")
    totals = []
    for agent in agents:
        mine = [r for r in results if r["agent"] == agent]
        totals += [f"**{sum(r['solved'] for r in mine)}/{len(mine)}**",
                   str(sum(max(r["turns"], 0) for r in mine)), f"{sum(r['seconds'] for r in mine):.0f}"]
    rows.append("| total | " + " | ".join(totals) + " |")
    return "\n".join(rows) + "\n"


if __name__ == "__main__":
    main()
