#!/usr/bin/env python3
"""An ACP client on the official Python SDK (agent-client-protocol on PyPI), for agent-host's
ACP tests: it starts the agent given after `--`, opens a session in --cwd, optionally sets a
mode, sends one prompt (text, plus resource links with --link), answers permission requests
with --option (none: cancelled), cancels after --cancel-after seconds, and prints what it saw
as one JSON object on standard output.

With --buffer or --fs it offers fs/read_text_file and fs/write_text_file as an editor does:
a read returns the buffer it holds for that path (--buffer PATH=TEXT, an unsaved change), else
the file on disk; a write replaces the buffer and is recorded, and saved to disk only with
--save-after S (S seconds after the request, opening the path then). --load ID
opens a saved session with session/load instead of session/new (the updates that replay it are
printed apart); --mcp JSON passes one stdio MCP server ({"name", "command", "args"}); --image
FILE adds a PNG to the prompt; --terminals offers terminal/* (each command a real process of
the client's, its creation recorded); --mode-after S MODE sets the mode S seconds into the turn.

usage: client.py PROMPT [--cwd DIR] [--option ID] [--mode ID] [--link PATH]... [--cancel-after S]
                 [--quit-after S] [--fs] [--buffer PATH=TEXT]... [--load ID] [--mcp JSON]...
                 -- AGENT ARGS...
"""

import argparse
import asyncio
import base64
import json
import os
import signal
import sys
from typing import Any

from acp import PROTOCOL_VERSION, RequestError, spawn_agent_process, text_block
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    DeniedOutcome,
    FileSystemCapabilities,
    ImageContentBlock,
    Implementation,
    McpServerStdio,
    ReadTextFileResponse,
    RequestPermissionResponse,
    ResourceContentBlock,
    WriteTextFileResponse,
    CreateTerminalResponse,
    KillTerminalResponse,
    ReleaseTerminalResponse,
    TerminalExitStatus,
    TerminalOutputResponse,
    WaitForTerminalExitResponse,
)


def as_json(model: Any) -> Any:
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


class Recorder:
    """The client side: records what the agent sends, answers its permission requests."""

    def __init__(self, option: str | None, buffers: dict[str, str], save_after: float | None):
        self.option = option
        self.buffers = buffers
        self.save_after = save_after
        self.updates: list[Any] = []
        self.permissions: list[Any] = []
        self.reads: list[str] = []
        self.writes: list[Any] = []
        self.terminals: dict[str, Any] = {}
        self.created: list[Any] = []

    async def request_permission(self, session_id: str, tool_call: Any, options: list[Any], **_: Any):
        self.permissions.append({"tool_call": as_json(tool_call), "options": [o.option_id for o in options]})
        if self.option is None or self.option not in {o.option_id for o in options}:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=self.option))

    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        self.updates.append(as_json(update))

    async def read_text_file(self, session_id: str, path: str, line: int | None = None,
                             limit: int | None = None, **_: Any):
        self.reads.append(path)
        if path in self.buffers:
            text = self.buffers[path]
        else:
            with open(path, encoding="utf-8") as file:
                text = file.read()
        lines = text.splitlines(keepends=True)
        start = (line or 1) - 1
        return ReadTextFileResponse(content="".join(lines[start:start + limit] if limit else lines[start:]))

    async def create_terminal(self, session_id: str, command: str, args: list[str] | None = None,
                              env: list[Any] | None = None, cwd: str | None = None,
                              output_byte_limit: int | None = None, **_: Any):
        """As an editor's terminal: the process runs with the client's environment."""
        variables = dict(os.environ)
        variables.update({v.name: v.value for v in env or []})
        process = await asyncio.create_subprocess_exec(
            command, *(args or []), cwd=cwd, env=variables,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
        terminal_id = f"term-{len(self.created) + 1}"
        self.created.append({"id": terminal_id, "command": command, "args": args or [], "cwd": cwd})
        state = {"process": process, "output": bytearray()}

        async def drain() -> None:
            while chunk := await process.stdout.read(4096):
                state["output"].extend(chunk)

        state["drain"] = asyncio.create_task(drain())
        self.terminals[terminal_id] = state
        return CreateTerminalResponse(terminal_id=terminal_id)

    def _exit_status(self, process: Any) -> Any:
        code = process.returncode
        if code is None:
            return None
        if code < 0:
            return TerminalExitStatus(signal=signal.Signals(-code).name)
        return TerminalExitStatus(exit_code=code)

    async def terminal_output(self, session_id: str, terminal_id: str, **_: Any):
        state = self.terminals[terminal_id]
        return TerminalOutputResponse(output=state["output"].decode(errors="replace"), truncated=False,
                                      exit_status=self._exit_status(state["process"]))

    async def wait_for_terminal_exit(self, session_id: str, terminal_id: str, **_: Any):
        state = self.terminals[terminal_id]
        await state["process"].wait()
        await state["drain"]
        status = self._exit_status(state["process"])
        return WaitForTerminalExitResponse(exit_code=status.exit_code, signal=status.signal)

    async def kill_terminal(self, session_id: str, terminal_id: str, **_: Any):
        process = self.terminals[terminal_id]["process"]
        if process.returncode is None:
            process.kill()
        return KillTerminalResponse()

    async def release_terminal(self, session_id: str, terminal_id: str, **_: Any):
        await self.kill_terminal(session_id, terminal_id)
        return ReleaseTerminalResponse()

    async def write_text_file(self, session_id: str, path: str, content: str, **_: Any):
        self.writes.append({"path": path, "content": content})
        self.buffers[path] = content
        if self.save_after is not None:
            # As Zed does: the buffer is saved, here after a while (the path opened then).
            await asyncio.sleep(self.save_after)
            with open(path, "w", encoding="utf-8") as file:
                file.write(content)
        return WriteTextFileResponse()


async def main() -> int:
    argv = sys.argv[1:]
    split = argv.index("--")
    parser = argparse.ArgumentParser()
    parser.add_argument("prompt")
    parser.add_argument("--cwd", default=os.getcwd())
    parser.add_argument("--option")
    parser.add_argument("--mode")
    parser.add_argument("--link", action="append", default=[])
    parser.add_argument("--cancel-after", type=float)
    parser.add_argument("--quit-after", type=float)
    parser.add_argument("--fs", action="store_true")
    parser.add_argument("--buffer", action="append", default=[])
    parser.add_argument("--load")
    parser.add_argument("--mcp", action="append", default=[])
    parser.add_argument("--expect-error", action="store_true")
    parser.add_argument("--image", action="append", default=[])
    parser.add_argument("--unset-env", action="append", default=[])
    parser.add_argument("--authenticate")
    parser.add_argument("--save-after", type=float)
    parser.add_argument("--terminals", action="store_true")
    parser.add_argument("--mode-after", nargs=2, metavar=("S", "MODE"))
    args, agent = parser.parse_args(argv[:split]), argv[split + 1 :]
    cwd = os.path.abspath(args.cwd)
    buffers = {os.path.join(cwd, path): text for path, text in (b.split("=", 1) for b in args.buffer)}
    editor_files = args.fs or bool(buffers)
    recorder = Recorder(args.option, buffers, args.save_after)
    mcp_servers = [McpServerStdio(env=[], **json.loads(server)) for server in args.mcp]
    agent_env = {name: value for name, value in os.environ.items() if name not in args.unset_env}
    async with spawn_agent_process(
        recorder, agent[0], *agent[1:], env=agent_env, cwd=cwd, transport_kwargs={"stderr": None}
    ) as (conn, _process):
        init = await conn.initialize(
            protocol_version=PROTOCOL_VERSION,
            client_capabilities=ClientCapabilities(
                fs=FileSystemCapabilities(read_text_file=editor_files, write_text_file=editor_files),
                terminal=args.terminals,
            ),
            client_info=Implementation(name="agent-host-acp-test", version="0.1"),
        )
        if args.authenticate:
            try:
                await conn.authenticate(method_id=args.authenticate)
                authenticated = None
            except RequestError as error:
                authenticated = {"code": error.code, "data": error.data}
        loaded_updates = None
        if args.load:
            try:
                session = await conn.load_session(cwd=cwd, session_id=args.load, mcp_servers=mcp_servers)
            except RequestError as error:
                if not args.expect_error:
                    raise
                print(json.dumps({"error": {"code": error.code, "message": str(error), "data": error.data}}))
                return 0
            session_id = args.load
            loaded_updates, recorder.updates = recorder.updates, []
        else:
            try:
                session = await conn.new_session(cwd=cwd, mcp_servers=mcp_servers)
            except RequestError as error:
                if not args.expect_error:
                    raise
                print(json.dumps({"error": {"code": error.code, "message": str(error), "data": error.data},
                                  "auth_methods": [as_json(m) for m in init.auth_methods or []],
                                  "authenticated": authenticated if args.authenticate else None}))
                return 0
            session_id = session.session_id
        if args.mode:
            await conn.set_session_mode(session_id=session_id, mode_id=args.mode)
        prompt = [text_block(args.prompt)]
        for path in args.image:
            with open(path, "rb") as file:
                data = base64.b64encode(file.read()).decode()
            prompt.append(ImageContentBlock(type="image", data=data, mime_type="image/png"))
        for path in args.link:
            full = os.path.join(cwd, path)
            prompt.append(ResourceContentBlock(type="resource_link", name=path, uri=f"file://{full}"))
        turn = asyncio.create_task(conn.prompt(session_id=session_id, prompt=prompt))
        mode_answered_while_running = None
        if args.mode_after:
            await asyncio.sleep(float(args.mode_after[0]))
            await conn.set_session_mode(session_id=session_id, mode_id=args.mode_after[1])
            mode_answered_while_running = not turn.done()
        if args.cancel_after is not None:
            await asyncio.sleep(args.cancel_after)
            await conn.cancel(session_id=session_id)
        stop_reason = None
        if args.quit_after is not None:
            # The editor goes away mid-turn: its end of the pipes closes.
            await asyncio.sleep(args.quit_after)
            turn.cancel()
        else:
            stop_reason = (await asyncio.wait_for(turn, timeout=300)).stop_reason
    print(
        json.dumps(
            {
                "protocol_version": init.protocol_version,
                "agent_capabilities": as_json(init.agent_capabilities),
                "session_id": session_id,
                "loaded_updates": loaded_updates,
                "modes": as_json(session.modes) if session.modes else None,
                "stop_reason": stop_reason,
                "updates": recorder.updates,
                "permissions": recorder.permissions,
                "reads": recorder.reads,
                "writes": recorder.writes,
                "terminals": recorder.created,
                "mode_answered_while_running": mode_answered_while_running,
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
