"""A plain SDK server for the mount tests (not customtools): MCPServer with progress, a slow
cancellable tool and a tool that crashes the process.

Usage: python sdk_server.py DIR [stdio | http PORT]. Files in DIR record what happened.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
from mcp.server.mcpserver import Context, MCPServer

DIR = Path(sys.argv[1])
app = MCPServer("fixture")


@app.tool()
async def add(a: int, b: int, ctx: Context) -> str:
    """Adds two numbers, reporting progress twice."""
    await ctx.report_progress(1, 2, "half way")
    await ctx.report_progress(2, 2, "done")
    return str(a + b)


@app.tool()
async def slow(seconds: float) -> str:
    """Sleeps; records whether it was cancelled."""
    (DIR / "slow-started").write_text("1")
    try:
        await anyio.sleep(seconds)
    except anyio.get_cancelled_exc_class():
        (DIR / "slow-cancelled").write_text("1")
        raise
    return "slept"


@app.tool()
def crash() -> str:
    """Ends the server process at once."""
    with (DIR / "crashes").open("a") as handle:
        handle.write("1")
    os._exit(3)


if __name__ == "__main__":
    print("fixture server starting", file=sys.stderr, flush=True)
    if len(sys.argv) > 3 and sys.argv[2] == "http":
        app.run("streamable-http", host="127.0.0.1", port=int(sys.argv[3]))
    else:
        app.run()
