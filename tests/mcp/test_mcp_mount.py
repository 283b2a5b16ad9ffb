"""MCP servers mounted as custom tools, against real SDK servers started by the tests."""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp_helpers import EXAMPLES, ROOT, child_env, free_port, wait_until
from zygote import python_argv

from customtools import AbortController, CustomToolAdapter, ToolResult, load_custom_tools
from customtools.mcp import ORIGIN_META_KEY, McpMount, McpServerConfig, mount

pytestmark = pytest.mark.anyio

SERVERS = Path(__file__).resolve().parent / "servers"

# The SDK's HTTP client leaves its SSE response generators to the garbage collector on trio.
CLIENT_GENERATORS_ON_TRIO = pytest.mark.filterwarnings(
    "ignore::pytest.PytestUnraisableExceptionWarning"
)


def python_server(name: str, script: str, *args: str, **options: Any) -> McpServerConfig:
    env = child_env()
    command, *argv = python_argv(str(SERVERS / script), *args)
    return McpServerConfig(
        name=name,
        command=command,
        args=tuple(argv),
        env={"PYTHONPATH": env["PYTHONPATH"]},
        cwd=str(ROOT),
        **options,
    )


def adapters(tools: list[Any]) -> dict[str, CustomToolAdapter]:
    return {tool.name: CustomToolAdapter(tool) for tool in tools}


async def test_a_low_level_server_mounts_with_its_schema_meta_and_names(tmp_path: Path) -> None:
    log = tmp_path / "calls.jsonl"
    async with mount(python_server("low", "lowlevel_server.py", str(log))) as mounted:
        tools = await mounted.tools()
        by_name = adapters(tools)
        shout = by_name["mcp__low__shout"]
        ok = await shout.execute("c1", {"word": "hi"}, ctx=_ctx({"fixture/trace": "t"}))
        bad = await shout.execute("c2", {"word": "", "extra": 1})
    assert [tool.name for tool in tools] == ["mcp__low__shout"]
    tool = tools[0]
    assert tool.label == "Shout"
    assert tool.parameters["additionalProperties"] is False
    assert tool.annotations == {"readOnlyHint": True}
    assert tool.meta == {
        "fixture/kind": "lowlevel",
        ORIGIN_META_KEY: {"server": "low", "tool": "shout"},
    }
    assert ok.is_error is False
    assert ok.text == "HI"
    assert ok.details == {"n": 1}
    assert ok.meta is not None
    assert ok.meta["fixture/seen"] == "t"
    # Invalid arguments never reach the server.
    assert bad.is_error is True
    assert "/word" in bad.text
    assert "extra" in bad.text
    assert [json.loads(line) for line in log.read_text().splitlines()] == [{"word": "hi"}]
    (problem,) = mounted.diagnostics
    assert problem.code == "invalid-tool"
    assert problem.tool_name == "bad.name.with.dots"
    assert "'.'" in problem.message


def _ctx(meta: dict[str, Any]) -> Any:
    from customtools import ToolContext

    return ToolContext(meta=meta)


async def _exercise_sdk_server(mounted: McpMount, directory: Path) -> None:
    by_name = adapters(await mounted.tools())
    assert set(by_name) == {"mcp__sdk__add", "mcp__sdk__slow", "mcp__sdk__crash"}
    updates: list[ToolResult] = []
    added = await by_name["mcp__sdk__add"].execute("c1", {"a": 2, "b": 3}, on_update=updates.append)
    assert added.text == "5"
    assert await wait_until(lambda: len(updates) == 2, limit=5)
    assert [update.text for update in updates] == ["half way", "done"]

    controller = AbortController()
    slow = by_name["mcp__sdk__slow"]
    async with anyio.create_task_group() as tg:

        async def abort_when_started() -> None:
            await wait_until(lambda: (directory / "slow-started").exists())
            controller.abort("enough")

        tg.start_soon(abort_when_started)
        with anyio.fail_after(10):  # the abort returns at once, not after 60 s
            aborted = await slow.execute("c2", {"seconds": 60}, signal=controller.signal)
    assert aborted.is_error is True
    assert "cancelled" in aborted.text
    assert await wait_until(lambda: (directory / "slow-cancelled").exists())

    with anyio.fail_after(10):
        timed_out = await slow.execute("c3", {"seconds": 60}, timeout=0.5)
    assert timed_out.is_error is True
    assert "timed out" in timed_out.text


async def test_an_sdk_server_over_stdio_progress_cancel_crash_and_restart(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]
) -> None:
    caplog.set_level(logging.INFO, logger="customtools.mcp")
    config = python_server("sdk", "sdk_server.py", str(tmp_path))
    async with McpMount([config], backoff=0.01) as mounted:
        await _exercise_sdk_server(mounted, tmp_path)
        assert mounted.diagnostics == ()
        by_name = adapters(await mounted.tools())
        crashed = await by_name["mcp__sdk__crash"].execute("c1", {})
        await anyio.sleep(0.05)  # past the back-off
        again = await by_name["mcp__sdk__add"].execute("c2", {"a": 1, "b": 1})
    assert crashed.is_error is True
    assert "closed the connection" in crashed.text
    assert again.text == "2"
    assert [d.code for d in mounted.diagnostics] == ["connection-lost"]
    assert (tmp_path / "crashes").read_text() == "1"
    # The server's stderr went to the log, never to our stdout.
    assert await wait_until(
        lambda: any("fixture server starting" in r.getMessage() for r in caplog.records), limit=5
    )
    assert "fixture server starting" not in capfd.readouterr().out


@CLIENT_GENERATORS_ON_TRIO
async def test_an_sdk_server_over_http_reports_progress_and_cancels(tmp_path: Path) -> None:
    port = free_port()
    argv = python_argv(str(SERVERS / "sdk_server.py"), str(tmp_path), "http", str(port))
    process = await anyio.open_process(argv, cwd=str(ROOT), env=child_env())
    try:
        with anyio.fail_after(30):
            while True:
                try:
                    await (await anyio.connect_tcp("127.0.0.1", port)).aclose()
                    break
                except OSError:
                    await anyio.sleep(0.05)
        config = McpServerConfig(name="sdk", url=f"http://127.0.0.1:{port}/mcp")
        async with McpMount([config]) as mounted:
            await _exercise_sdk_server(mounted, tmp_path)
    finally:
        with anyio.CancelScope(shield=True):
            process.kill()
            await process.wait()
            await process.aclose()
    import gc

    gc.collect()


async def test_a_silent_server_is_an_error_and_backs_off(tmp_path: Path) -> None:
    silent = McpServerConfig(
        name="silent",
        command=sys.executable,
        args=("-c", "import time; time.sleep(60)"),
        startup_timeout=0.5,
    )
    async with McpMount([silent], backoff=30) as mounted:
        tools = await mounted.tools()
        server = mounted.servers["silent"]
        with anyio.fail_after(5):
            result = await server.call("anything", {}, lambda partial: None, None)
    assert tools == []
    assert [d.code for d in mounted.diagnostics] == ["unavailable"]
    assert "did not answer its handshake within 0.5 s" in mounted.diagnostics[0].message
    assert result.is_error is True
    assert "started again in" in result.text


async def test_a_missing_command_is_an_error_naming_the_server() -> None:
    config = McpServerConfig(name="ghost", command="/nonexistent/mcp-server")
    async with McpMount([config]) as mounted:
        assert await mounted.tools() == []
    (problem,) = mounted.diagnostics
    assert problem.code == "unavailable"
    assert "'ghost' could not be started" in problem.message


async def test_served_examples_mounted_back_give_the_same_results(tmp_path: Path) -> None:
    calls = {
        "countdown": {"steps": 2, "interval": 0},
        "notes": {"action": "add", "text": "remember"},
        "repo_stats": {"directory": "examples/tools", "top": 3},
        "run_command": {"command": "echo", "args": ["hi"]},
        "search_text": {"pattern": "def factory", "directory": "examples/tools"},
        "swatch": {"colour": "#336699", "size": 4},
        "convert_temperature": {"value": 100, "source": "celsius", "target": "kelvin"},
        "ticker": {"count": 2, "interval": 0},
        "count_words": {"text": "a b a", "top": 1},
    }
    local = await load_custom_tools([str(EXAMPLES)], str(ROOT))
    command, *argv = python_argv("-m", "customtools", "serve", "--no-entry-points", str(EXAMPLES))
    config = McpServerConfig(
        name="examples",
        command=command,
        args=tuple(argv),
        env={"PYTHONPATH": str(ROOT), "HOME": str(tmp_path)},
        cwd=str(ROOT),
    )
    async with mount(config) as mounted:
        remote = adapters(await mounted.tools())
        assert set(remote) == {f"mcp__examples__{name}" for name in calls}
        for name, params in calls.items():
            here = await CustomToolAdapter(local.get(name).tool).execute("c", params)
            there = await remote[f"mcp__examples__{name}"].execute("c", params)
            assert there.is_error == here.is_error, name
            assert [b.to_dict() for b in there.content] == [b.to_dict() for b in here.content], name
            assert there.details == json.loads(json.dumps(here.details)), name
            # structuredContent is sent only for tools that declare an output schema.
            if local.get(name).tool.output_schema is not None:
                assert there.structured_content == here.structured_content, name
                assert there.structured_content is not None, name


@CLIENT_GENERATORS_ON_TRIO
async def test_an_http_server_that_is_not_there_is_a_diagnostic() -> None:
    config = McpServerConfig(
        name="gone", url=f"http://127.0.0.1:{free_port()}/mcp", startup_timeout=10
    )
    async with McpMount([config]) as mounted:
        assert await mounted.tools() == []
    (problem,) = mounted.diagnostics
    assert problem.code == "unavailable"
    assert "'gone' could not be started: Connect" in problem.message
    assert "ExceptionGroup" not in problem.message
    assert problem.message.endswith("check its URL")
    import gc

    gc.collect()
