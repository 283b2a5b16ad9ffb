"""Every wait of a mount is bounded and every response is bounded (review M8, L8, L9, L10),
against a hand-written misbehaving server (``servers/hostile_server.py``)."""

from __future__ import annotations

import json
import logging
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp_helpers import ROOT
from zygote import python_argv

from customtools import CustomToolAdapter, discover_and_load
from customtools.mcp import MAX_STDERR_LINE, McpMount, McpServerConfig, mount

pytestmark = pytest.mark.anyio

HOSTILE = Path(__file__).resolve().parent / "servers" / "hostile_server.py"


def hostile(mode: str, name: str = "h", **options: Any) -> McpServerConfig:
    options.setdefault("startup_timeout", 10)
    options.setdefault("list_timeout", 2)
    return McpServerConfig(
        name=name, command=sys.executable, args=(str(HOSTILE), mode), cwd=str(ROOT), **options
    )


async def test_a_server_stalling_on_tools_list_is_a_bounded_diagnostic() -> None:
    async with mount(hostile("stall-list", list_timeout=1), backoff=30) as mounted:
        with anyio.fail_after(20):
            tools = await mounted.tools()
            again = await mounted.tools()  # in back-off: answered at once
    assert tools == []
    assert again == []
    problem = mounted.diagnostics[0]
    assert problem.code == "list-failed"
    assert "MCP server 'h' did not list its tools within 1 s" in problem.message


async def test_json_nested_past_the_parser_depth_is_a_bounded_diagnostic_naming_it() -> None:
    async with mount(hostile("deep-list", list_timeout=1)) as mounted:
        with anyio.fail_after(20):
            assert await mounted.tools() == []
    problem = mounted.diagnostics[0]
    assert problem.code == "list-failed"
    assert "did not list its tools within 1 s" in problem.message
    assert "sent a message that could not be read" in problem.message


async def test_a_stalling_server_in_mcp_json_does_not_hang_discover_and_load(
    tmp_path: Path,
) -> None:
    entry = {
        "command": sys.executable,
        "args": [str(HOSTILE), "stall-list"],
        "listTimeout": 1,
        "timeout": 5,
        "shutdownTimeout": 2,
    }
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {"stall": entry}}))
    async with McpMount() as servers:
        with anyio.fail_after(30):
            result = await discover_and_load(
                [],
                str(tmp_path),
                project_mcp_servers=True,
                entry_points=False,
                mcp_servers=servers,
            )
        config = servers.servers["stall"].config
    assert (config.timeout, config.list_timeout, config.shutdown_timeout) == (5, 1, 2)
    assert not [t for t in result.tools if t.tool.name.startswith("mcp__stall")]
    messages = " ".join(str(d) for d in result.diagnostics)
    assert "did not list its tools within 1 s" in messages


async def test_one_bad_tool_duplicates_and_empty_names_are_diagnostics_siblings_mount() -> None:
    async with mount(hostile("names")) as mounted:
        with anyio.fail_after(20):
            tools = await mounted.tools()
            assert [tool.name for tool in tools] == ["mcp__h__ok", "mcp__h__dup"]
            assert tools[1].description == ""  # the first "dup" is kept
            result = await CustomToolAdapter(tools[0]).execute("c1", {})
    assert result.text == "fine"
    problems = {(d.code, d.tool_name): d.message for d in mounted.diagnostics}
    assert set(problems) == {
        ("invalid-tool", "dup"),
        ("invalid-tool", ""),
        ("invalid-tool", "arrayish"),
    }
    assert "same name" in problems["invalid-tool", "dup"]
    assert "name is empty" in problems["invalid-tool", ""]
    assert '"type": "object"' in problems["invalid-tool", "arrayish"]
    assert all(message.startswith("MCP server 'h'") for message in problems.values())


async def test_the_tool_count_is_capped_across_pages() -> None:
    async with mount(hostile("many", max_tools=50)) as mounted:
        with anyio.fail_after(20):
            tools = await mounted.tools()
    assert len(tools) == 50
    assert tools[-1].name == "mcp__h__t1_9"
    (problem,) = mounted.diagnostics
    assert problem.code == "too-many-tools"
    assert "more than 50 tools" in problem.message
    async with mount(hostile("many")) as mounted:
        with anyio.fail_after(20):
            assert len(await mounted.tools()) == 120  # every page under the default cap


async def test_invalid_structured_content_is_an_error_result_not_a_lost_connection() -> None:
    async with mount(hostile("bad-structured")) as mounted:
        with anyio.fail_after(20):
            tools = {tool.name: CustomToolAdapter(tool) for tool in await mounted.tools()}
            bad = await tools["mcp__h__shaped"].execute("c1", {})
            server = mounted.servers["h"]
            still = server.connected
            good = await tools["mcp__h__ok"].execute("c2", {})
    assert bad.is_error is True
    assert "MCP server 'h'" in bad.text
    assert "'shaped'" in bad.text
    assert still is True
    assert good.text == "fine"
    assert not [d for d in mounted.diagnostics if d.code == "connection-lost"]


async def test_a_huge_stderr_line_is_cut_and_read_in_bounded_chunks(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="customtools.mcp.server.h")
    async with mount(hostile("stderr-flood")) as mounted:
        with anyio.fail_after(60):
            tools = await mounted.tools()
    assert [tool.name for tool in tools] == ["mcp__h__ok"]
    lines = [r.getMessage() for r in caplog.records if r.name == "customtools.mcp.server.h"]
    assert lines[0].startswith("x" * 100)
    assert lines[0].endswith(f"[line cut at {MAX_STDERR_LINE} bytes]")
    assert len(lines[0]) < MAX_STDERR_LINE + 100
    assert "after the flood" in lines


def test_stderr_flood_does_not_grow_host_memory(tmp_path: Path) -> None:
    """The host's peak RSS while a server writes 64 MiB without a newline stays far below it
    (measured in a process of its own through VmHWM, which starts at the process's RSS)."""
    script = tmp_path / "flood.py"
    script.write_text(
        "import sys, anyio\n"
        "from customtools.mcp import McpServerConfig, mount\n"
        f"cfg = McpServerConfig(name='h', command=sys.executable, args=({str(HOSTILE)!r},"
        " 'stderr-flood'), startup_timeout=30)\n"
        "async def main():\n"
        "    async with mount(cfg) as m:\n"
        "        with anyio.fail_after(60):\n"
        "            assert len(await m.tools()) == 1\n"
        "def hwm():\n"
        "    for line in open('/proc/self/status'):\n"
        "        if line.startswith('VmHWM:'): return int(line.split()[1])\n"
        "before = hwm()\n"
        "anyio.run(main)\n"
        "print(before, hwm())\n"
    )
    import subprocess

    env = {k: v for k, v in os.environ.items() if k in ("HOME", "PATH", "LANG")}
    env["PYTHONPATH"] = str(ROOT)
    out = subprocess.run(
        python_argv(str(script)), capture_output=True, text=True, timeout=120, env=env
    )
    assert out.returncode == 0, out.stderr[-2000:]
    before, after = map(int, out.stdout.split())
    assert after - before < 32 * 1024, (before, after)  # KiB: well under the 64 MiB flood


async def test_a_reply_over_the_message_bound_is_an_error_for_that_call_only() -> None:
    async with McpMount([hostile("huge-reply")], max_message=1 << 20) as mounted:
        with anyio.fail_after(30):
            tools = {tool.name: CustomToolAdapter(tool) for tool in await mounted.tools()}
            huge = await tools["mcp__h__huge"].execute("c1", {})
            ok = await tools["mcp__h__ok"].execute("c2", {})
    assert huge.is_error is True
    assert "MCP server 'h'" in huge.text
    assert f"larger than {1 << 20} bytes" in huge.text
    assert ok.text == "fine"  # the same connection goes on
    assert not [d for d in mounted.diagnostics if d.code == "connection-lost"]


def test_a_huge_reply_does_not_grow_host_memory(tmp_path: Path) -> None:
    """Peak RSS of a host of its own whose server answers with a 64 MiB line (VmHWM)."""
    script = tmp_path / "huge.py"
    script.write_text(
        "import sys, anyio\n"
        "from customtools import CustomToolAdapter\n"
        "from customtools.mcp import McpServerConfig, mount\n"
        f"cfg = McpServerConfig(name='h', command=sys.executable, args=({str(HOSTILE)!r},"
        " 'huge-reply'), startup_timeout=30)\n"
        "async def main():\n"
        "    async with mount(cfg, max_message=1 << 20) as m:\n"
        "        with anyio.fail_after(60):\n"
        "            tools = {t.name: t for t in await m.tools()}\n"
        "            result = await CustomToolAdapter(tools['mcp__h__huge']).execute('c', {})\n"
        "            assert result.is_error, result.text\n"
        "def hwm():\n"
        "    for line in open('/proc/self/status'):\n"
        "        if line.startswith('VmHWM:'): return int(line.split()[1])\n"
        "before = hwm()\n"
        "anyio.run(main)\n"
        "print(before, hwm())\n"
    )
    import subprocess

    env = {k: v for k, v in os.environ.items() if k in ("HOME", "PATH", "LANG")}
    env["PYTHONPATH"] = str(ROOT)
    out = subprocess.run(
        python_argv(str(script)), capture_output=True, text=True, timeout=120, env=env
    )
    assert out.returncode == 0, out.stderr[-2000:]
    before, after = map(int, out.stdout.split())
    assert after - before < 32 * 1024, (before, after)  # KiB: well under the 64 MiB reply


async def test_closing_a_server_that_ignores_shutdown_is_bounded() -> None:
    async with mount(hostile("slow-close", shutdown_timeout=1)) as mounted:
        with anyio.fail_after(20):
            assert len(await mounted.tools()) == 1
    # Leaving the block returned: the SDK's terminate-then-kill ended the server.
    assert not mounted.servers["h"].connected


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"command": "x", "timeout": 0}, "'timeout' must be a positive number"),
        ({"command": "x", "listTimeout": "5"}, "'listTimeout' must be a positive number"),
        ({"command": "x", "startupTimeout": True}, "'startupTimeout' must be a positive"),
        (
            {"type": "http", "url": "http://127.0.0.1:1/mcp", "shutdownTimeout": -1},
            "shutdownTimeout",
        ),
    ],
)
def test_bad_timeouts_in_mcp_json_are_named(entry: dict[str, Any], message: str) -> None:
    from customtools.mcp import parse_mcp_json

    configs, problems = parse_mcp_json({"mcpServers": {"s": entry}}, origin="/p/.mcp.json")
    assert configs == []
    assert message in problems[0]
    assert "'s'" in problems[0]


def test_timeouts_round_trip_through_mcp_json() -> None:
    from customtools.mcp import parse_mcp_json

    entry = {
        "command": "x",
        "timeout": 7,
        "startupTimeout": 3,
        "listTimeout": 4,
        "shutdownTimeout": 1,
    }
    (config,), problems = parse_mcp_json({"mcpServers": {"s": entry}})
    assert problems == []
    assert (config.timeout, config.startup_timeout, config.list_timeout) == (7, 3, 4)
    assert config.shutdown_timeout == 1
    assert config.to_dict() == {
        "command": "x",
        "args": [],
        **{k: v for k, v in entry.items() if k != "command"},
    }
    default = McpServerConfig(name="d", command="x")
    assert (default.timeout, default.list_timeout, default.shutdown_timeout) == (300, 30, 5)


async def test_an_http_response_over_the_bound_is_refused_while_it_is_read() -> None:
    import httpx2

    from customtools.mcp._transports import capped_transport

    async def body(size: int) -> Any:
        for _ in range(size // 1000):  # as a socket delivers it: chunk by chunk
            yield b"x" * 1000

    def answer(request: Any) -> Any:
        kind = "text/event-stream" if request.url.path == "/events" else "application/json"
        size = 2000 if request.url.path == "/small" else 8000
        return httpx2.Response(200, content=body(size), headers={"content-type": kind})

    transport = capped_transport(4096, httpx2.MockTransport(answer))
    async with httpx2.AsyncClient(transport=transport, base_url="http://server.test") as http:
        with anyio.fail_after(10):
            assert len((await http.get("/small")).content) == 2000
            assert len((await http.get("/events")).content) == 8000  # the SDK caps each event
            with pytest.raises(httpx2.StreamError, match="larger than 4096 bytes"):
                await http.get("/big")
