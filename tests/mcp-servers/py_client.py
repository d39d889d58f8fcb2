"""An MCP client written with the official Python SDK (mcp on PyPI), for the tests of
`agent-host plugin serve`: connects over stdio (a command after `--`) or streamable HTTP
(a URL), lists the tools, calls the ones given as NAME=JSON, and prints one JSON object:
{"tools": [{name, description, inputSchema, readOnly}], "calls": [{name, isError, text}]}.

    python py_client.py --call 'stats_analyze={"path": "a.txt"}' -- agent-host plugin serve ...
    python py_client.py --url http://127.0.0.1:8765/mcp --call ...
"""

import argparse
import asyncio
import json
import os

from mcp import Client, StdioServerParameters


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url")
    parser.add_argument("--call", action="append", default=[])
    parser.add_argument("command", nargs="*")
    args = parser.parse_args()
    if args.url:
        server = args.url
    else:
        # The server gets this client's whole environment (the SDK passes only a few variables).
        server = StdioServerParameters(command=args.command[0], args=args.command[1:], env=dict(os.environ))
    async with Client(server) as client:
        listed = await client.list_tools()
        tools = [
            {
                "name": t.name,
                "description": t.description,
                "inputSchema": t.input_schema,
                "readOnly": t.annotations.read_only_hint if t.annotations else None,
            }
            for t in listed.tools
        ]
        calls = []
        for call in args.call:
            name, _, arguments = call.partition("=")
            result = await client.call_tool(name, json.loads(arguments or "{}"))
            text = "".join(getattr(block, "text", "") for block in result.content)
            calls.append({"name": name, "isError": bool(result.is_error), "text": text})
    print(json.dumps({"tools": tools, "calls": calls}))


asyncio.run(main())
