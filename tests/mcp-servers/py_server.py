"""An MCP server written with the Python SDK (mcp on PyPI), for agent-host's MCP tests.

Tools: echo; add_tool (registers `late` and says the tool list changed); die (the process
exits mid-call); sleep (answers after the seconds asked). It writes a marker to standard
error at start, which must reach agent-host's server log and never its terminal.
"""

import asyncio
import os
import sys

from mcp.server.mcpserver import Context, MCPServer

app = MCPServer("py-fixture")


@app.tool()
def echo(text: str) -> str:
    """Returns the text it is given, prefixed with 'py:'."""
    return f"py:{text}"


def late(word: str) -> str:
    """A tool added while the server runs."""
    return f"late:{word}"


@app.tool()
async def add_tool(ctx: Context) -> str:
    """Adds the tool `late` and tells the client the tool list changed."""
    app.add_tool(late)
    await ctx.request_context.session.send_tool_list_changed()
    return "added late"


@app.tool()
def die() -> str:
    """Ends the server's process in the middle of the call."""
    sys.stderr.write("py-fixture: dying on request\n")
    sys.stderr.flush()
    os._exit(1)


@app.tool()
async def sleep(seconds: float) -> str:
    """Answers after `seconds`."""
    await asyncio.sleep(seconds)
    return "slept"


if __name__ == "__main__":
    sys.stderr.write("py-fixture: MARKER-ON-STDERR started\n")
    sys.stderr.flush()
    app.run()
