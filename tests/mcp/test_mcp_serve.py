"""ToolServer against the official client in memory, in both protocol eras.

``mode="auto"`` is the modern era (2026-07-28) on the SDK's direct dispatcher; ``"legacy"``
is the handshake era over real JSON-RPC memory streams.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp_helpers import PNG, load_pack, pid_gone, wait_until

from customtools import CustomTool, SessionEvent, ToolResult
from customtools.mcp import DETAILS_META_KEY, ToolServer

pytestmark = pytest.mark.anyio

SERVER_INFO = "io.modelcontextprotocol/serverInfo"


@pytest.fixture(params=["auto", "legacy"])
def mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)


async def pack_server(**options: Any) -> ToolServer:
    result = await load_pack()
    return ToolServer([loaded.tool for loaded in result.tools], **options)


def user_meta(meta: Any) -> dict[str, Any]:
    return {k: v for k, v in (meta or {}).items() if k != SERVER_INFO}


async def test_listing_sends_the_declared_schema_label_annotations_and_meta(mode: str) -> None:
    loaded = await load_pack()
    declared = loaded.get("echo").tool.parameters
    assert declared["$defs"]
    assert declared["$schema"]
    server = ToolServer([item.tool for item in loaded.tools])
    async with Client(server.server, mode=mode) as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert set(listed) == {"echo", "steps", "boom", "picture", "sleeper", "noisy"}
    echo = listed["echo"]
    assert echo.input_schema == declared
    assert echo.title == "Echo"
    assert echo.description == "Repeats a word."
    assert echo.annotations is not None
    assert echo.annotations.read_only_hint is True
    assert echo.annotations.idempotent_hint is True
    assert echo.meta == {"customtools/origin": "fixture"}


async def test_a_valid_call_returns_content_and_details_under_meta(mode: str) -> None:
    server = await pack_server()
    async with Client(server.server, mode=mode) as client:
        result = await client.call_tool("echo", {"text": "hi", "times": 2})
    assert result.is_error is False
    assert [block.text for block in result.content] == ["hi hi"]  # type: ignore[union-attr]
    assert result.meta is not None
    assert result.meta[DETAILS_META_KEY] == {"times": 2, "meta": {}}
    assert result.structured_content is None


async def test_invalid_arguments_are_an_error_result_naming_every_path(mode: str) -> None:
    server = await pack_server()
    async with Client(server.server, mode=mode) as client:
        missing = await client.call_tool("echo", {"times": 2})
        wrong = await client.call_tool("echo", {"text": 3, "times": 9, "bogus": True})
    assert missing.is_error is True
    assert "text" in missing.content[0].text  # type: ignore[union-attr]
    text = wrong.content[0].text  # type: ignore[union-attr]
    assert wrong.is_error is True
    assert "/text" in text
    assert "/times" in text
    assert "bogus" in text


async def test_an_unknown_tool_is_a_protocol_error(mode: str) -> None:
    server = await pack_server()
    async with Client(server.server, mode=mode) as client:
        with pytest.raises(MCPError) as caught:
            await client.call_tool("nope", {})
    assert caught.value.error.code == -32602
    assert caught.value.error.message == "Unknown tool: nope"


async def test_a_raising_tool_is_a_short_error_result(mode: str) -> None:
    server = await pack_server()
    async with Client(server.server, mode=mode) as client:
        result = await client.call_tool("boom", {})
    assert result.is_error is True
    text = result.content[0].text  # type: ignore[union-attr]
    assert "RuntimeError" in text
    assert "Traceback" not in text


async def test_image_and_text_blocks_come_back_in_order(mode: str) -> None:
    server = await pack_server()
    async with Client(server.server, mode=mode) as client:
        result = await client.call_tool("picture", {})
    image, text = result.content
    assert image.type == "image"
    assert image.data == PNG  # type: ignore[union-attr]
    assert image.mime_type == "image/png"  # type: ignore[union-attr]
    assert text.text == "a dot"  # type: ignore[union-attr]
    assert user_meta(result.meta) == {"customtools/kind": "picture"}


async def test_request_meta_reaches_the_tool_without_reserved_keys(mode: str) -> None:
    server = await pack_server()
    seen: list[Any] = []

    async def progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append(progress)

    async with Client(server.server, mode=mode) as client:
        result = await client.call_tool(
            "echo", {"text": "a"}, meta={"customtools/trace": "t"}, progress_callback=progress
        )
    assert result.meta is not None
    assert result.meta[DETAILS_META_KEY]["meta"] == {"customtools/trace": "t"}


async def test_progress_is_strictly_increasing_and_ends_before_the_result(mode: str) -> None:
    server = await pack_server(progress_interval=0)
    received: list[tuple[float, str | None]] = []
    entered: list[float] = []

    async def progress(value: float, total: float | None, message: str | None) -> None:
        entered.append(value)
        received.append((value, message))

    async with Client(server.server, mode=mode) as client:
        result = await client.call_tool(
            "steps", {"n": 5, "pause": 0.01}, progress_callback=progress
        )
        await wait_until(lambda: len(received) == 5, limit=2)
    assert result.content[0].text == "done 5"  # type: ignore[union-attr]
    assert entered == [1, 2, 3, 4, 5]
    assert sorted(received) == [(i, f"step {i}") for i in range(1, 6)]


async def test_progress_is_coalesced_and_the_newest_update_is_flushed(mode: str) -> None:
    server = await pack_server(progress_interval=10)
    received: list[tuple[float, str | None]] = []

    async def progress(value: float, total: float | None, message: str | None) -> None:
        received.append((value, message))

    async with Client(server.server, mode=mode) as client:
        result = await client.call_tool("steps", {"n": 50}, progress_callback=progress)
        await wait_until(lambda: len(received) >= 2, limit=2)
    assert result.is_error is False
    # One notification goes out when the burst starts; the updates that follow within the
    # interval collapse into the newest, flushed before the result.
    assert [value for value, _ in sorted(received)] == [1, 2]
    assert sorted(received)[-1] == (2, "step 50")


async def test_a_call_without_a_progress_callback_still_works(mode: str) -> None:
    server = await pack_server()
    async with Client(server.server, mode=mode) as client:
        result = await client.call_tool("steps", {"n": 3})
    assert result.content[0].text == "done 3"  # type: ignore[union-attr]


async def test_cancelling_a_call_aborts_the_signal_and_kills_the_child(
    mode: str, tmp_path: Path
) -> None:
    server = await pack_server()
    started = anyio.Event()

    async def progress(value: float, total: float | None, message: str | None) -> None:
        started.set()

    async with Client(server.server, mode=mode) as client:
        async with anyio.create_task_group() as tg:

            async def call() -> None:
                await client.call_tool(
                    "sleeper", {"dir": str(tmp_path)}, progress_callback=progress
                )

            tg.start_soon(call)
            with anyio.fail_after(10):
                await started.wait()
            tg.cancel_scope.cancel()
        assert await wait_until(lambda: (tmp_path / "aborted").exists())
        # The connection is still usable afterwards.
        after = await client.call_tool("echo", {"text": "still here"})
    pid = int((tmp_path / "pid").read_text())
    assert (tmp_path / "aborted").read_text() == "True"
    assert await wait_until(lambda: pid_gone(pid))
    assert after.content[0].text == "still here"  # type: ignore[union-attr]


async def test_a_client_timeout_cancels_the_call(mode: str, tmp_path: Path) -> None:
    server = await pack_server()
    async with Client(server.server, mode=mode) as client:
        if mode == "legacy":
            with pytest.raises(MCPError) as caught:
                await client.call_tool("sleeper", {"dir": str(tmp_path)}, read_timeout_seconds=0.5)
            assert caught.value.error.code == -32001
        else:  # the direct dispatcher has no wire timeout: the caller's deadline cancels
            with anyio.move_on_after(0.5):
                await client.call_tool("sleeper", {"dir": str(tmp_path)})
        assert await wait_until(lambda: (tmp_path / "aborted").exists())
    assert (tmp_path / "aborted").read_text() == "True"
    assert await wait_until(lambda: pid_gone(int((tmp_path / "pid").read_text())))


async def test_the_servers_timeout_ends_the_call_with_an_error_result(
    mode: str, tmp_path: Path
) -> None:
    server = await pack_server(timeout=0.3)
    async with Client(server.server, mode=mode) as client:
        result = await client.call_tool("sleeper", {"dir": str(tmp_path)})
    assert result.is_error is True
    assert "timed out" in result.content[0].text  # type: ignore[union-attr]
    assert await wait_until(lambda: pid_gone(int((tmp_path / "pid").read_text())))


async def test_two_slow_calls_on_one_connection_overlap(mode: str) -> None:
    inside = 0
    most = 0

    async def slow(call_id: str, params: Any, on_update: Any, ctx: Any, signal: Any) -> str:
        nonlocal inside, most
        inside += 1
        most = max(most, inside)
        await anyio.sleep(0.2)
        inside -= 1
        return "ok"

    server = ToolServer([CustomTool(name="slow", execute=slow)])
    async with Client(server.server, mode=mode) as client, anyio.create_task_group() as tg:
        tg.start_soon(client.call_tool, "slow", {})
        tg.start_soon(client.call_tool, "slow", {})
    assert most == 2


async def test_connection_start_and_end_reach_on_session(mode: str) -> None:
    events: list[str] = []

    def on_session(event: SessionEvent, ctx: Any) -> None:
        events.append(event.reason)

    tool = CustomTool(name="hooked", execute=lambda *a: "ok", on_session=on_session)
    server = ToolServer([tool])
    async with Client(server.server, mode=mode) as client:
        await client.call_tool("hooked", {})
        assert events == ["start"]
    assert events == ["start", "shutdown"]


async def test_tools_swapped_in_mid_session_hear_its_start_and_replaced_ones_its_shutdown(
    mode: str,
) -> None:
    # A reload replaces the served tools while the session runs: the new versions must still
    # hear `start` (else a tool that sets up its state there never does), the old ones
    # `shutdown`; a tool kept as it was hears nothing more.
    events: list[tuple[str, str]] = []

    def hooked(name: str) -> CustomTool:
        def on_session(event: SessionEvent, ctx: Any) -> None:
            events.append((name, event.reason))

        return CustomTool(name=name, execute=lambda *a: name, on_session=on_session)

    kept, old, new = hooked("kept"), hooked("edited"), hooked("edited")
    server = ToolServer([kept, old])
    async with Client(server.server, mode=mode):
        await server.set_tools([kept, new])
        assert events == [
            ("kept", "start"),
            ("edited", "start"),  # the old version, when the session started
            ("edited", "shutdown"),  # the old version leaves
            ("edited", "start"),  # the new version arrives
        ]
    assert events[-2:] == [("kept", "shutdown"), ("edited", "shutdown")]


async def test_tools_set_before_any_session_hear_nothing_until_it_starts(mode: str) -> None:
    events: list[str] = []
    tool = CustomTool(
        name="hooked", execute=lambda *a: "ok", on_session=lambda e, c: events.append(e.reason)
    )
    server = ToolServer([])
    await server.set_tools([tool])
    assert events == []
    async with Client(server.server, mode=mode):
        assert events == ["start"]


async def test_tools_mcp_cannot_offer_are_reported_and_the_rest_served(mode: str) -> None:
    anything = CustomTool(name="anything", parameters={}, execute=lambda *a: "x")
    fine = CustomTool(name="fine", execute=lambda *a: "ok")
    twin = CustomTool(name="fine", execute=lambda *a: "twin")
    server = ToolServer([anything, fine, twin])
    assert [(d.tool_name, d.code) for d in server.diagnostics] == [
        ("anything", "schema-root"),
        ("fine", "name-conflict"),
    ]
    assert "Type.Object" in server.diagnostics[0].message
    assert server.diagnostics[1].message == (
        "tool name 'fine' is already taken by an earlier tool; this tool was left out: rename"
        " one of them"
    )
    async with Client(server.server, mode=mode) as client:
        names = [tool.name for tool in (await client.list_tools()).tools]
        result = await client.call_tool("fine", {})
    assert names == ["fine"]
    assert result.content[0].text == "ok"  # type: ignore[union-attr]


async def test_a_bridge_fault_is_a_generic_protocol_error(
    mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import customtools.mcp._server as bridge

    def broken(result: ToolResult, *, structured: bool = False) -> Any:
        raise ValueError("secret internals")

    monkeypatch.setattr(bridge, "to_call_result", broken)
    server = await pack_server()
    async with Client(server.server, mode=mode) as client:
        with pytest.raises(MCPError) as caught:
            await client.call_tool("echo", {"text": "a"})
    assert caught.value.error.code == -32603
    assert "secret" not in caught.value.error.message


async def test_handshake_clients_hear_about_a_changed_tool_list() -> None:
    from mcp_types import ToolListChangedNotification

    heard = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, ToolListChangedNotification):
            heard.set()

    server = ToolServer([CustomTool(name="first", execute=lambda *a: "1")])
    async with Client(server.server, mode="legacy", message_handler=on_message) as client:
        await client.list_tools()  # the handshake is complete once a request was answered
        caps = client.server_capabilities
        assert caps.tools is not None
        assert caps.tools.list_changed is True
        await server.set_tools(
            [
                CustomTool(name="first", execute=lambda *a: "1"),
                CustomTool(name="second", execute=lambda *a: "2"),
            ]
        )
        with anyio.fail_after(5):
            await heard.wait()
        names = [tool.name for tool in (await client.list_tools()).tools]
    assert names == ["first", "second"]


async def test_only_tools_with_an_output_schema_send_structured_content(mode: str) -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}

    async def typed(call_id: str, params: Any, on_update: Any, ctx: Any, signal: Any) -> Any:
        return ToolResult(content=ToolResult.from_text("n=1").content, structured_content={"n": 1})

    async def untyped(call_id: str, params: Any, on_update: Any, ctx: Any, signal: Any) -> Any:
        return ToolResult(
            content=ToolResult.from_text("n=1").content, details=[1, 2], structured_content={"n": 1}
        )

    server = ToolServer(
        [
            CustomTool(name="typed", execute=typed, output_schema=schema),
            CustomTool(name="untyped", execute=untyped),
        ]
    )
    async with Client(server.server, mode=mode) as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        with_schema = await client.call_tool("typed", {})
        without = await client.call_tool("untyped", {})
    assert listed["typed"].output_schema == schema
    assert listed["untyped"].output_schema is None
    assert with_schema.structured_content == {"n": 1}
    assert without.structured_content is None
    assert without.meta is not None
    assert without.meta[DETAILS_META_KEY] == [1, 2]


async def test_an_error_result_sends_no_unchecked_structured_content(mode: str) -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}

    async def failing(call_id: str, params: Any, on_update: Any, ctx: Any, signal: Any) -> Any:
        text = ToolResult.from_text("no n today").content
        return ToolResult(content=text, is_error=True, structured_content={"n": "not a number"})

    server = ToolServer([CustomTool(name="typed", execute=failing, output_schema=schema)])
    async with Client(server.server, mode=mode) as client:
        result = await client.call_tool("typed", {})
    assert result.is_error is True
    assert [block.text for block in result.content] == ["no n today"]  # type: ignore[union-attr]
    assert result.structured_content is None


async def test_a_cancelled_calls_cleanup_sees_its_signal_aborted(mode: str) -> None:
    seen: list[tuple[bool, Any]] = []
    started = anyio.Event()

    async def waits(call_id: str, params: Any, on_update: Any, ctx: Any, signal: Any) -> str:
        started.set()
        try:
            await anyio.sleep_forever()
        finally:
            seen.append((signal.aborted, signal.reason))
        return "never"

    server = ToolServer([CustomTool(name="waits", description="d", execute=waits)])
    async with Client(server.server, mode=mode) as client:
        async with anyio.create_task_group() as tg:
            tg.start_soon(client.call_tool, "waits", {})
            with anyio.fail_after(10):
                await started.wait()
            tg.cancel_scope.cancel()
        assert await wait_until(lambda: bool(seen))
    assert seen == [(True, "the MCP client cancelled the call")]


async def test_a_former_name_is_listed_deprecated_and_stays_callable(mode: str) -> None:
    tool = CustomTool(
        name="find",
        description="Find things.",
        execute=lambda *args: "found",
        former_names=["search"],
    )
    server = ToolServer([tool])
    async with Client(server.server, mode=mode) as client:
        listed = {item.name: item for item in (await client.list_tools()).tools}
        result = await client.call_tool("search", {})

    assert set(listed) == {"find", "search"}
    assert user_meta(listed["search"].meta) == {"customtools/deprecated": {"renamedTo": "find"}}
    assert listed["search"].description.startswith("Deprecated: renamed to 'find'")
    assert user_meta(listed["find"].meta) == {}
    assert not result.is_error
