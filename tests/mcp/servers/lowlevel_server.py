"""A small low-level SDK server for the mount tests: one tool with an exact schema and _meta.

Usage: python lowlevel_server.py LOG. Every call's arguments are appended to LOG.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

LOG = sys.argv[1]
SCHEMA = {
    "type": "object",
    "properties": {"word": {"type": "string", "minLength": 1}},
    "required": ["word"],
    "additionalProperties": False,
}


async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
    return types.ListToolsResult(
        tools=[
            types.Tool(
                name="shout",
                title="Shout",
                description="Upper-cases a word.",
                input_schema=SCHEMA,
                annotations=types.ToolAnnotations(read_only_hint=True),
                _meta={"fixture/kind": "lowlevel"},
            ),
            types.Tool(name="bad.name.with.dots", input_schema={"type": "object"}),
        ]
    )


async def call_tool(ctx: Any, params: Any) -> types.CallToolResult:
    with open(LOG, "a") as handle:
        handle.write(json.dumps(params.arguments) + "\n")
    meta = (ctx.params or {}).get("_meta", {})
    return types.CallToolResult(
        content=[types.TextContent(text=params.arguments["word"].upper())],
        _meta={"fixture/seen": meta.get("fixture/trace"), "customtools/details": {"n": 1}},
    )


async def main() -> None:
    server = Server("lowlevel", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


anyio.run(main)
