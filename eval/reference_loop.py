"""The reference loop the eval compares agent-host with: the smallest agent that works.

Three tools (read_file, write_file, run_shell), a one-sentence system prompt, a Chat
Completions endpoint, and nothing else: no prompt engineering, no repair of calls beyond
reading a fenced JSON call from the text when the server did not parse it. If agent-host does
worse than this on a task, the harness is in the model's way.

Usage: reference_loop.py BASE_URL MODEL WORKDIR INSTRUCTION [MAX_TURNS]
Prints one JSON line: {"turns": N, "final": "..."}.
"""

import json
import re
import subprocess
import sys
import urllib.request
from pathlib import Path

SYSTEM = "You are a coding agent: use the tools to do the user's task in the current directory."

TOOLS = [
    {"type": "function", "function": {
        "name": "read_file", "description": "Read a text file.",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}},
                       "required": ["path"]}}},
    {"type": "function", "function": {
        "name": "write_file", "description": "Create or overwrite a text file.",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"},
                                                        "content": {"type": "string"}},
                       "required": ["path", "content"]}}},
    {"type": "function", "function": {
        "name": "run_shell", "description": "Run a shell command and return its output.",
        "parameters": {"type": "object", "properties": {"command": {"type": "string"}},
                       "required": ["command"]}}},
]

FENCED = re.compile(r"```(?:json)?\s*(\{.*?\})\s*```", re.S)


def run_tool(workdir: Path, name: str, args: dict) -> str:
    try:
        if name == "read_file":
            return (workdir / args["path"]).read_text()
        if name == "write_file":
            path = workdir / args["path"]
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(args["content"])
            return f"Wrote {args['path']}."
        if name == "run_shell":
            done = subprocess.run(args["command"], shell=True, cwd=workdir, capture_output=True,
                                  text=True, timeout=60)
            return f"exit code {done.returncode}\n{done.stdout}{done.stderr}"
        return f"Unknown tool {name}"
    except Exception as error:  # the model sees every failure and may recover
        return f"Error: {error}"


def stream_chat(base_url: str, model: str, messages: list) -> dict:
    """One streamed Chat Completions request, folded into a message."""
    body = json.dumps({"model": model, "messages": messages, "tools": TOOLS, "stream": True,
                       "temperature": 0}).encode()
    request = urllib.request.Request(f"{base_url}/chat/completions", body,
                                     {"content-type": "application/json"})
    content, calls = "", {}
    with urllib.request.urlopen(request, timeout=600) as response:
        for raw in response:
            line = raw.decode().strip()
            if not line.startswith("data:") or line == "data: [DONE]":
                continue
            for choice in json.loads(line[5:]).get("choices", []):
                delta = choice.get("delta", {})
                content += delta.get("content") or ""
                for call in delta.get("tool_calls") or []:
                    slot = calls.setdefault(call.get("index", 0), {"id": "", "name": "", "arguments": ""})
                    slot["id"] = call.get("id") or slot["id"]
                    function = call.get("function", {})
                    slot["name"] += function.get("name") or ""
                    slot["arguments"] += function.get("arguments") or ""
    return {"content": content, "calls": [calls[i] for i in sorted(calls)]}


def main() -> None:
    base_url, model, workdir, instruction = sys.argv[1:5]
    max_turns = int(sys.argv[5]) if len(sys.argv) > 5 else 15
    workdir = Path(workdir)
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": instruction}]
    turns, final = 0, ""
    while turns < max_turns:
        turns += 1
        answer = stream_chat(base_url, model, messages)
        calls = answer["calls"]
        if not calls:
            found = FENCED.search(answer["content"])
            if found:
                try:
                    call = json.loads(found.group(1))
                    calls = [{"id": f"text_{turns}", "name": call["name"],
                              "arguments": json.dumps(call.get("arguments", {}))}]
                except (ValueError, KeyError, TypeError):
                    calls = []
        if not calls:
            final = answer["content"]
            break
        messages.append({"role": "assistant", "content": answer["content"] or None, "tool_calls": [
            {"id": c["id"] or f"call_{turns}_{i}", "type": "function",
             "function": {"name": c["name"], "arguments": c["arguments"]}}
            for i, c in enumerate(calls)]})
        for i, call in enumerate(calls):
            try:
                args = json.loads(call["arguments"] or "{}")
                if isinstance(args, str):
                    args = json.loads(args)
            except ValueError as error:
                args, result = None, f"Error: arguments are not JSON: {error}"
            if args is not None:
                result = run_tool(workdir, call["name"], args)
            messages.append({"role": "tool", "tool_call_id": call["id"] or f"call_{turns}_{i}",
                             "content": result[:8000]})
    print(json.dumps({"turns": turns, "final": final}))


if __name__ == "__main__":
    main()
