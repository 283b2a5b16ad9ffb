"""``customtools serve`` imports lazily: with the manifest cache warm it lists without
importing and the first call imports; ``--eager`` imports at start."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp_helpers import ROOT, child_env, serve_argv

from customtools import load_custom_tools

# The servers are child processes: the client's backend changes nothing they do.
pytestmark = [pytest.mark.anyio, pytest.mark.parametrize("anyio_backend", ["asyncio"])]

MODULE = """
with open({mark!r}, "a") as _mark:
    _mark.write("x")
from customtools import CustomTool

def factory(api):
    return CustomTool(name="ping", description="Answers pong.", execute=lambda *a: "pong")
"""


def params(home: Path, *args: str) -> StdioServerParameters:
    env = {**child_env(), "HOME": str(home)}
    argv = serve_argv(*args)
    return StdioServerParameters(command=argv[0], args=argv[1:], env=env, cwd=str(ROOT))


def pack(directory: Path) -> tuple[Path, Path]:
    """A one-tool pack that marks each import of its module; returns (tools, mark)."""
    tools, mark = directory / "tools", directory / "mark"
    tools.mkdir(parents=True)
    (tools / "ping.py").write_text(MODULE.format(mark=str(mark)))
    return tools, mark


async def serve_once(home: Path, tools: Path, log: Path, *args: str) -> list[str]:
    """Start ``serve``, list, call ``ping``; the marks seen before the call, then after."""
    from mcp.client.stdio import stdio_client

    mark = tools.parent / "mark"
    seen = []
    with log.open("w") as errlog:
        async with Client(
            stdio_client(params(home, str(tools), *args), errlog=errlog), mode="legacy"
        ) as client:
            assert [t.name for t in (await client.list_tools()).tools] == ["ping"]
            seen.append(mark.read_text() if mark.exists() else "")
            result = await client.call_tool("ping", {})
            assert result.content[0].text == "pong"  # type: ignore[union-attr]
            seen.append(mark.read_text())
    return seen


async def test_serve_imports_on_first_call_once_the_cache_is_warm_and_eager_at_start(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    lazy_tools, lazy_mark = pack(tmp_path / "lazy")
    eager_tools, _ = pack(tmp_path / "eager")
    for tools in (lazy_tools, eager_tools):  # fill the cache as an earlier start would
        await load_custom_tools([tools], ROOT, home=home, lazy=True)
    assert lazy_mark.read_text() == "x"
    seen: dict[str, list[str]] = {}

    async def one(key: str, tools: Path, *args: str) -> None:
        seen[key] = await serve_once(home, tools, tmp_path / f"{key}.log", *args)

    with anyio.fail_after(120):
        async with anyio.create_task_group() as group:
            group.start_soon(one, "lazy", lazy_tools)
            group.start_soon(one, "eager", eager_tools, "--eager")
    assert seen["lazy"] == ["x", "xx"]  # listed from the cache; the call imported
    assert "serving 1 tools (1 imported on first call)" in (tmp_path / "lazy.log").read_text()
    assert seen["eager"] == ["xx", "xx"]  # imported at start
    assert "imported on first call" not in (tmp_path / "eager.log").read_text()
