"""Mount an MCP server (here: `customtools serve examples/tools` over stdio) as custom tools."""

import sys

import anyio

from customtools import CustomToolAdapter
from customtools.mcp import McpServerConfig, mount

server = McpServerConfig(
    name="examples",
    command=sys.executable,
    args=("-m", "customtools", "serve", "--no-entry-points", "examples/tools"),
    timeout=30,  # seconds any call may run
)


async def main() -> None:
    async with mount(server) as mounted:
        tools = {tool.name: CustomToolAdapter(tool) for tool in await mounted.tools()}
        print("mounted:", ", ".join(sorted(tools)))
        result = await tools["mcp__examples__swatch"].execute("call-1", {"colour": "#336699"})
        print("result:", result.text.splitlines()[0])
    for problem in mounted.diagnostics:
        print("problem:", problem.message, file=sys.stderr)


anyio.run(main)
