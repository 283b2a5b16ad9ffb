"""Serve the example tools to an MCP client in the same process (what a test or an embedding
host does); `customtools serve` does the same over stdio or HTTP."""

import anyio
from mcp import Client

from customtools import discover_and_load
from customtools.mcp import ToolServer


async def main() -> None:
    result = await discover_and_load(["examples/tools"], entry_points=False)
    server = ToolServer([loaded.tool for loaded in result.tools], name="examples")
    async with Client(server.server) as client:
        listed = await client.list_tools()
        print("tools:", ", ".join(tool.name for tool in listed.tools))

        async def progress(value: float, total: float | None, message: str | None) -> None:
            print(f"progress {value:g}: {message}")

        answer = await client.call_tool(
            "countdown", {"steps": 2, "interval": 0}, progress_callback=progress
        )
        print("result:", answer.content[0].text)
        bad = await client.call_tool("countdown", {"steps": "two"})
        print("error result:", bad.is_error)


anyio.run(main)
