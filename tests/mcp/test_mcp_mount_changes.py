"""A mounted server whose tools change at runtime: it is listed again on its announcement
(debounced and bounded), the host and ``serve``'s clients get the new tools, and a re-listing
that hangs keeps the old ones. Against a real SDK server, in both protocol eras."""

from __future__ import annotations

import contextlib
import functools
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp_helpers import ROOT, child_env, wait_until
from zygote import python_argv

from customtools import CustomToolAdapter
from customtools.mcp import McpMount, McpServerConfig, MountChange, serve

pytestmark = pytest.mark.anyio

SERVER = Path(__file__).resolve().parent / "servers" / "changing_server.py"


@pytest.fixture(params=["modern", "legacy"])
def era(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def config(directory: Path, era: str, **options: Any) -> McpServerConfig:
    command, *argv = python_argv(str(SERVER), str(directory), era)
    return McpServerConfig(
        name="chg",
        command=command,
        args=tuple(argv),
        env={"PYTHONPATH": child_env()["PYTHONPATH"]},
        cwd=str(ROOT),
        timeout=20,
        **options,
    )


async def call(tools: dict[str, Any], name: str, arguments: dict[str, Any]) -> str:
    with anyio.fail_after(20):
        result = await CustomToolAdapter(tools[f"mcp__chg__{name}"]).execute("c", arguments)
    assert not result.is_error, result.text
    return result.text


@contextlib.asynccontextmanager
async def watching(mount: McpMount) -> AsyncIterator[Any]:
    async with contextlib.aclosing(mount.changes()) as changes:
        yield changes


async def next_change(changes: Any) -> MountChange:
    with anyio.fail_after(20):
        change: MountChange = await changes.__anext__()
    return change


def names(change: MountChange) -> list[str]:
    return [tool.name.removeprefix("mcp__chg__") for tool in change.tools]


def listings(directory: Path) -> int:
    path = directory / "lists"
    return len(path.read_text().splitlines()) if path.exists() else 0


async def test_added_and_removed_tools_reach_the_host(tmp_path: Path, era: str) -> None:
    async with McpMount([config(tmp_path, era)]) as mount:
        tools = {tool.name: tool for tool in await mount.tools()}
        async with watching(mount) as changes:
            await call(tools, "grow", {"name": "beta"})
            grown = await next_change(changes)
            assert grown.server == "chg"
            assert names(grown) == ["grow", "shrink", "flood", "stall", "beta"]
            added = {tool.name: tool for tool in grown.tools}
            assert await call(added, "beta", {}) == "beta"
            await call(tools, "shrink", {"name": "beta"})
            shrunk = await next_change(changes)
            assert names(shrunk) == ["grow", "shrink", "flood", "stall"]
    assert mount.diagnostics == ()


async def test_a_flood_of_announcements_costs_a_few_listings(tmp_path: Path, era: str) -> None:
    async with McpMount([config(tmp_path, era)]) as mount:
        tools = {tool.name: tool for tool in await mount.tools()}
        before = listings(tmp_path)
        async with watching(mount) as changes:
            await call(tools, "flood", {"n": 500})
            change = await next_change(changes)
    assert names(change)[-1] == "flooded"
    # 501 announcements: one listing per burst (LIST_CHANGED_DEBOUNCE), not one each.
    assert 1 <= listings(tmp_path) - before <= 25


async def test_a_relisting_that_hangs_keeps_the_old_tools(tmp_path: Path, era: str) -> None:
    async with McpMount([config(tmp_path, era, list_timeout=0.5)]) as mount:
        tools = {tool.name: tool for tool in await mount.tools()}
        async with watching(mount) as changes:
            await call(tools, "stall", {})
            assert await wait_until(lambda: bool(mount.diagnostics), limit=20)
            with anyio.move_on_after(0.5):
                await changes.__anext__()
                pytest.fail("a failed re-listing must not change the tools")
    [problem] = mount.diagnostics
    assert problem.code == "list-failed"
    assert problem.message == (
        "MCP server 'chg' did not list its tools within 0.5 s after announcing a change;"
        " the tools mounted before stay; it is started again on the next use"
    )


@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # serve's HTTP server is uvicorn
async def test_serve_passes_the_change_on_to_its_clients(tmp_path: Path, era: str) -> None:
    """`serve` mounting a project's `.mcp.json` server: clients get list_changed and the new
    listing, and can call the new tool."""
    entry = config(tmp_path / "data", era).to_dict()
    (tmp_path / "data").mkdir()
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {"chg": entry}}))
    heard = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            heard.set()

    urls: list[str] = []
    async with McpMount() as mount, anyio.create_task_group() as group:
        group.start_soon(
            functools.partial(
                serve,
                transport="http",
                port=0,
                cwd=str(tmp_path),
                entry_points=False,
                mcp_servers=mount,
                project_mcp_servers=True,
                on_ready=urls.append,
                native_dirs=((), ()),
            )
        )
        assert await wait_until(lambda: bool(urls), limit=30)
        async with Client(urls[0], mode="legacy", message_handler=on_message) as client:
            listed = {tool.name for tool in (await client.list_tools()).tools}
            assert "mcp__chg__grow" in listed
            assert "mcp__chg__beta" not in listed
            with anyio.fail_after(20):
                await client.call_tool("mcp__chg__grow", {"name": "beta"})
                await heard.wait()
            listed = {tool.name for tool in (await client.list_tools()).tools}
            assert "mcp__chg__beta" in listed
            answer = await client.call_tool("mcp__chg__beta", {})
            assert answer.content[0].text == "beta"  # type: ignore[union-attr]
        group.cancel_scope.cancel()
