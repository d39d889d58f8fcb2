#!/usr/bin/env python3
"""An ACP client on the official Python SDK (agent-client-protocol on PyPI), for agent-host's
ACP tests: it starts the agent given after `--`, opens a session in --cwd, optionally sets a
mode, sends one prompt (text, plus resource links with --link), answers permission requests
with --option (none: cancelled), cancels after --cancel-after seconds, and prints what it saw
as one JSON object on standard output.

usage: client.py PROMPT [--cwd DIR] [--option ID] [--mode ID] [--link PATH]... [--cancel-after S]
                 [--quit-after S] -- AGENT ARGS...
"""

import argparse
import asyncio
import json
import os
import sys
from typing import Any

from acp import PROTOCOL_VERSION, spawn_agent_process, text_block
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    DeniedOutcome,
    FileSystemCapabilities,
    Implementation,
    RequestPermissionResponse,
    ResourceContentBlock,
)


def as_json(model: Any) -> Any:
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


class Recorder:
    """The client side: records what the agent sends, answers its permission requests."""

    def __init__(self, option: str | None):
        self.option = option
        self.updates: list[Any] = []
        self.permissions: list[Any] = []

    async def request_permission(self, session_id: str, tool_call: Any, options: list[Any], **_: Any):
        self.permissions.append({"tool_call": as_json(tool_call), "options": [o.option_id for o in options]})
        if self.option is None or self.option not in {o.option_id for o in options}:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=self.option))

    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        self.updates.append(as_json(update))


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
    args, agent = parser.parse_args(argv[:split]), argv[split + 1 :]
    recorder = Recorder(args.option)
    cwd = os.path.abspath(args.cwd)
    async with spawn_agent_process(
        recorder, agent[0], *agent[1:], env=dict(os.environ), cwd=cwd, transport_kwargs={"stderr": None}
    ) as (conn, _process):
        init = await conn.initialize(
            protocol_version=PROTOCOL_VERSION,
            client_capabilities=ClientCapabilities(
                fs=FileSystemCapabilities(read_text_file=False, write_text_file=False), terminal=False
            ),
            client_info=Implementation(name="agent-host-acp-test", version="0.1"),
        )
        session = await conn.new_session(cwd=cwd, mcp_servers=[])
        if args.mode:
            await conn.set_session_mode(session_id=session.session_id, mode_id=args.mode)
        prompt = [text_block(args.prompt)]
        for path in args.link:
            full = os.path.join(cwd, path)
            prompt.append(ResourceContentBlock(type="resource_link", name=path, uri=f"file://{full}"))
        turn = asyncio.create_task(conn.prompt(session_id=session.session_id, prompt=prompt))
        if args.cancel_after is not None:
            await asyncio.sleep(args.cancel_after)
            await conn.cancel(session_id=session.session_id)
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
                "session_id": session.session_id,
                "modes": as_json(session.modes) if session.modes else None,
                "stop_reason": stop_reason,
                "updates": recorder.updates,
                "permissions": recorder.permissions,
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
