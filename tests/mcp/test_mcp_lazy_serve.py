"""``customtools serve`` imports lazily: a second start serves from the manifest cache and the
first call imports; ``--eager`` imports at start."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp_helpers import ROOT, child_env

pytestmark = pytest.mark.anyio

MODULE = """
with open({mark!r}, "a") as _mark:
    _mark.write("x")
from customtools import CustomTool

def factory(api):
    return CustomTool(name="ping", description="Answers pong.", execute=lambda *a: "pong")
"""


def params(home: Path, *args: str) -> StdioServerParameters:
    env = {**child_env(), "HOME": str(home)}
    argv = [sys.executable, "-m", "customtools", "serve", "--no-entry-points", *args]
    return StdioServerParameters(command=argv[0], args=argv[1:], env=env, cwd=str(ROOT))


async def serve_once(home: Path, log: Path, *args: str, call: bool = False) -> None:
    with log.open("w") as errlog:
        from mcp.client.stdio import stdio_client

        async with Client(stdio_client(params(home, *args), errlog=errlog), mode="legacy") as c:
            assert [t.name for t in (await c.list_tools()).tools] == ["ping"]
            if call:
                result = await c.call_tool("ping", {})
                assert result.content[0].text == "pong"  # type: ignore[union-attr]


async def test_serve_imports_on_first_call_once_the_cache_is_warm(tmp_path: Path) -> None:
    home, tools, mark, log = (
        tmp_path / "home",
        tmp_path / "tools",
        tmp_path / "mark",
        tmp_path / "log",
    )
    home.mkdir()
    tools.mkdir()
    (tools / "ping.py").write_text(MODULE.format(mark=str(mark)))
    await serve_once(home, log, str(tools))
    assert mark.read_text() == "x"  # the first start imports (and fills the cache)
    await serve_once(home, log, str(tools))
    assert mark.read_text() == "x"  # listed from the cache, not imported
    assert "serving 1 tools (1 imported on first call)" in log.read_text()
    await serve_once(home, log, str(tools), call=True)
    assert mark.read_text() == "xx"  # the call imported it
    await serve_once(home, log, str(tools), "--eager")
    assert mark.read_text() == "xxx"
    assert "imported on first call" not in log.read_text()
