"""Tool search on the MCP bridge: a search tool plus pinned tools listed, found tools listed
for the client that searched (after ``list_changed``), every tool callable by name."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp_helpers import http_server

from customtools import CustomTool, Type, load_custom_tools
from customtools.cli import run
from customtools.mcp import ToolServer

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["auto", "legacy"])
def mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def tool(name: str, description: str, **properties: str) -> CustomTool:
    return CustomTool(
        name=name,
        description=description,
        parameters=Type.Object({k: Type.String(description=v) for k, v in properties.items()}),
        execute=lambda call_id, params, on_update, ctx, signal: f"{name} ran",
    )


TOOLS = [
    tool("read_file", "Read a text file.", path="the file"),
    tool("weather", "Current weather for a city.", city="which city"),
    tool("forecast", "The weather of the next days.", city="which city"),
    tool("git_status", "Show the working tree status."),
    tool("git_log", "Show commit logs."),
    CustomTool(name="resolve", description="weather internals", hidden=True, execute=lambda *a: 1),
]


async def names(client: Client) -> list[str]:
    return [t.name for t in (await client.list_tools()).tools]


async def test_the_listing_is_the_search_tool_and_the_pinned_tools(mode: str) -> None:
    server = ToolServer(TOOLS, tool_search=True, pinned=["read_file", "git_*"])
    async with Client(server.server, mode=mode) as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
    assert list(listed) == ["search_tools", "read_file", "git_status", "git_log"]
    search = listed["search_tools"]
    assert search.input_schema["required"] == ["query"]
    assert set(search.input_schema["properties"]) == {"query", "limit"}
    assert search.output_schema is not None
    assert search.annotations is not None
    assert search.annotations.read_only_hint is True


async def test_a_search_answers_with_definitions_and_lists_what_it_found(mode: str) -> None:
    from mcp_types import ToolListChangedNotification

    heard: list[Any] = []

    async def on_message(message: Any) -> None:
        if isinstance(message, ToolListChangedNotification):
            heard.append(message)

    server = ToolServer(TOOLS, tool_search=True)
    async with Client(server.server, mode=mode, message_handler=on_message) as client:
        assert await names(client) == ["search_tools"]
        found = await client.call_tool("search_tools", {"query": "weather in a city"})
        assert found.is_error is False
        assert found.structured_content is not None
        entries = found.structured_content["tools"]
        assert [e["name"] for e in entries] == ["weather", "forecast"]  # not the hidden one
        assert entries[0]["description"] == "Current weather for a city."
        assert entries[0]["inputSchema"]["properties"]["city"]["type"] == "string"
        text = found.content[0].text  # type: ignore[union-attr]
        assert text.startswith("2 tool(s) found; call them by name:\n- weather: Current")
        if mode == "legacy":  # a session: what it found is listed from now on
            assert await names(client) == ["search_tools", "weather", "forecast"]
            with anyio.fail_after(5):
                while not heard:
                    await anyio.sleep(0.01)
        else:  # the 2026-07-28 era has no session: called by name (below)
            assert await names(client) == ["search_tools"]
        nothing = await client.call_tool("search_tools", {"query": "zzz"})
        assert nothing.structured_content == {"tools": []}
        assert "No tool matches" in nothing.content[0].text  # type: ignore[union-attr]
        bad = await client.call_tool("search_tools", {"query": "x", "limit": 0})
        assert bad.is_error is True


async def test_every_tool_is_callable_by_name_listed_or_not(mode: str) -> None:
    server = ToolServer(TOOLS, tool_search=True)
    async with Client(server.server, mode=mode) as client:
        assert "git_log" not in await names(client)
        result = await client.call_tool("git_log", {})
    assert result.content[0].text == "git_log ran"  # type: ignore[union-attr]


async def test_what_one_client_found_is_not_listed_to_another() -> None:
    server = ToolServer(TOOLS, tool_search=True)
    async with (
        Client(server.server, mode="legacy") as first,
        Client(server.server, mode="legacy") as second,
    ):
        await first.call_tool("search_tools", {"query": "commit logs", "limit": 1})
        assert await names(first) == ["search_tools", "git_log"]
        assert await names(second) == ["search_tools"]


async def test_a_user_tool_cannot_take_the_search_tool_name() -> None:
    server = ToolServer([*TOOLS, tool("search_tools", "mine")], tool_search=True)
    (problem,) = server.diagnostics
    assert problem.code == "name-conflict"
    assert "'search_tools' is already taken" in problem.message
    plain = ToolServer([tool("search_tools", "mine")])
    assert plain.tool_names == ("search_tools",)  # without tool search the name is free


async def test_search_finds_lazy_tools_and_the_call_imports_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    mark = tmp_path / "mark"
    pack = tmp_path / "tools"
    pack.mkdir()
    (pack / "tide.py").write_text(
        f"with open({str(mark)!r}, 'a') as f:\n    f.write('x')\n"
        "from customtools import CustomTool\n\n"
        "def factory(api):\n"
        "    return CustomTool(name='tides', description='High and low tide times.',"
        " execute=lambda *a: 'high at noon')\n"
    )
    await load_custom_tools([pack], tmp_path, lazy=True)
    result = await load_custom_tools([pack], tmp_path, lazy=True)
    assert [t.lazy for t in result.tools] == [True]
    server = ToolServer([t.tool for t in result.tools], tool_search=True)
    async with Client(server.server, mode="legacy") as client:
        found = await client.call_tool("search_tools", {"query": "tide"})
        assert [e["name"] for e in found.structured_content["tools"]] == ["tides"]  # type: ignore[index]
        assert mark.read_text() == "x"  # found without importing
        called = await client.call_tool("tides", {})
    assert called.content[0].text == "high at noon"  # type: ignore[union-attr]
    assert mark.read_text() == "xx"


def test_pin_needs_tool_search(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["serve", "--pin", "x"]) == 2
    assert "--pin applies to --tool-search only" in capsys.readouterr().err


@pytest.fixture
def collect_garbage() -> Iterator[None]:
    yield
    gc.collect()


# The SDK's HTTP client leaves its SSE response generators to the garbage collector on trio
# (as in test_mcp_transports.py): collected before the test ends, and not reported.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
@pytest.mark.usefixtures("collect_garbage")
@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # the server is a child process
async def test_serve_tool_search_over_stateless_http(tmp_path: Path) -> None:
    from mcp.client.streamable_http import streamable_http_client

    pack = Path(__file__).resolve().parent / "pack"
    args = (str(pack), "--tool-search", "--pin", "echo", "--stateless")
    async with (
        http_server(*args) as url,
        Client(streamable_http_client(url), mode="legacy") as client,
    ):
        assert await names(client) == ["search_tools", "echo"]
        found = await client.call_tool("search_tools", {"query": "steps"})
        assert "steps" in [e["name"] for e in found.structured_content["tools"]]  # type: ignore[index]
        # No session across requests: nothing is remembered, and what was found is
        # called by name.
        assert await names(client) == ["search_tools", "echo"]
        done = await client.call_tool("steps", {"n": 1, "pause": 0})
    assert done.content[0].text == "done 1"  # type: ignore[union-attr]


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
@pytest.mark.usefixtures("collect_garbage")
@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # the server is a child process
async def test_serve_tool_search_over_stateful_http_lists_per_session() -> None:
    from mcp.client.streamable_http import streamable_http_client

    pack = Path(__file__).resolve().parent / "pack"
    async with (
        http_server(str(pack), "--tool-search") as url,
        Client(streamable_http_client(url), mode="legacy") as first,
        Client(streamable_http_client(url), mode="legacy") as second,
    ):
        await first.call_tool("search_tools", {"query": "steps", "limit": 1})
        assert await names(first) == ["search_tools", "steps"]
        assert await names(second) == ["search_tools"]
