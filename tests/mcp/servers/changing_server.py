"""A low-level SDK server whose tools change at runtime, for the mount's list_changed tests.

Usage: python changing_server.py DIR ERA. ERA ``legacy`` serves the handshake era only (the
client's discovery probe fails; changes are ``notifications/tools/list_changed``);
``modern`` serves the 2026-07-28 era (changes are ``subscriptions/listen`` events). Every
``tools/list`` appends a line to DIR/lists.

Tools: ``grow(name)`` adds a tool, ``shrink(name)`` removes one, ``flood(n)`` announces a
change ``n`` times and then adds ``flooded``, ``stall()`` makes every later ``tools/list``
hang and announces a change; the tools it adds answer with their name.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.runner import serve_loop
from mcp.server.stdio import stdio_server
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler
from mcp.shared.subscriptions import ToolsListChanged

DIR = Path(sys.argv[1])
ERA = sys.argv[2]
NAME = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
COUNT = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
EMPTY: dict[str, Any] = {"type": "object"}
FIXED = {"grow": NAME, "shrink": NAME, "flood": COUNT, "stall": EMPTY}

added: list[str] = []
stalled = False
bus = InMemorySubscriptionBus()


async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
    with (DIR / "lists").open("a") as handle:
        handle.write("1\n")
    if stalled:
        await anyio.sleep_forever()
    tools = [types.Tool(name=name, input_schema=schema) for name, schema in FIXED.items()]
    tools += [types.Tool(name=name, input_schema=EMPTY) for name in added]
    return types.ListToolsResult(tools=tools)


async def announce(ctx: Any) -> None:
    await bus.publish(ToolsListChanged())
    if ERA == "legacy":
        await ctx.session.send_tool_list_changed()


def text(value: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=value)])


async def call_tool(ctx: Any, params: Any) -> types.CallToolResult:
    global stalled
    args = params.arguments or {}
    if params.name == "grow":
        added.append(args["name"])
    elif params.name == "shrink":
        added.remove(args["name"])
    elif params.name == "flood":
        for _ in range(args["n"]):
            await announce(ctx)
        added.append("flooded")
    elif params.name == "stall":
        stalled = True
    else:
        return text(params.name)
    await announce(ctx)
    return text("ok")


async def main() -> None:
    server: Server[Any] = Server(
        "changing",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_subscriptions_listen=ListenHandler(bus),
    )
    async with stdio_server() as (read, write):
        options = server.create_initialization_options(NotificationOptions(tools_changed=True))
        if ERA == "legacy":  # the handshake era only: the client's discovery probe fails
            async with server.lifespan(server) as state:
                await serve_loop(server, read, write, lifespan_state=state, init_options=options)
        else:
            await server.run(read, write, options)


if __name__ == "__main__":
    anyio.run(main)
