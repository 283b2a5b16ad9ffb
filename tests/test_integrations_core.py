"""The framework-independent part of the adapters (customtools.integrations._call), on asyncio
and trio: abort on cancel, the two-pass approval gate, update pumping, conflicts."""

from __future__ import annotations

import logging
import threading
from typing import Any

import anyio
import pytest

from customtools import AbortSignal, ToolRegistry, ToolResult, tool
from customtools._approval import ApprovalRequest
from customtools.integrations._call import (
    ADAPTER_APPROVER,
    CANCELLED_REASON,
    as_registry,
    run_call,
)

pytestmark = pytest.mark.anyio


async def test_cancelling_the_caller_aborts_a_sync_tools_signal() -> None:
    started, finished = threading.Event(), threading.Event()
    seen: list[Any] = []

    @tool
    def block(signal: AbortSignal) -> str:
        """Block until aborted (bounded)."""
        started.set()
        try:
            for _ in range(1000):
                if signal.aborted:
                    seen.append(signal.reason)
                    return "aborted"
                threading.Event().wait(0.01)
            return "ran to the end"
        finally:
            finished.set()

    registry = ToolRegistry([block])
    with anyio.fail_after(10):
        async with anyio.create_task_group() as group:
            group.start_soon(lambda: run_call(registry.adapter("block"), "c", {}, ctx=None))
            assert await anyio.to_thread.run_sync(started.wait, 5)
            group.cancel_scope.cancel()
        assert await anyio.to_thread.run_sync(finished.wait, 5)
    assert seen == [CANCELLED_REASON]


def gated(ran: list[str]) -> Any:
    @tool(requires_approval=lambda args: args["path"] != "/tmp")
    def wipe(path: str) -> str:
        """Delete (approval needed outside /tmp)."""
        ran.append(path)
        return f"wiped {path}"

    return ToolRegistry([wipe]).adapter("wipe")


async def test_the_gate_asks_with_validated_arguments_and_runs_the_body_once() -> None:
    ran: list[str] = []
    asked: list[ApprovalRequest] = []

    async def decide(request: ApprovalRequest) -> bool:
        asked.append(request)
        return True

    result = await run_call(gated(ran), "c1", {"path": "/etc"}, ctx=None, decide=decide)
    assert result.text == "wiped /etc"
    assert ran == ["/etc"]
    assert [dict(request.arguments) for request in asked] == [{"path": "/etc"}]
    assert asked[0].tool_call_id == "c1"


async def test_the_gate_is_not_asked_when_the_rule_says_no() -> None:
    ran: list[str] = []

    async def decide(request: ApprovalRequest) -> bool:
        raise AssertionError("not asked")

    result = await run_call(gated(ran), "c1", {"path": "/tmp"}, ctx=None, decide=decide)
    assert result.text == "wiped /tmp"


async def test_a_no_is_the_adapters_denial_and_the_body_never_runs() -> None:
    ran: list[str] = []

    async def decide(request: ApprovalRequest) -> bool:
        return False

    result = await run_call(gated(ran), "c1", {"path": "/etc"}, ctx=None, decide=decide)
    assert result.is_error
    assert "denied" in result.text
    assert ran == []


async def test_invalid_arguments_never_reach_the_gate() -> None:
    async def decide(request: ApprovalRequest) -> bool:
        raise AssertionError("not asked")

    result = await run_call(gated([]), "c1", {"path": 3}, ctx=None, decide=decide)
    assert result.is_error
    assert "/path" in result.text


async def test_a_pause_raised_by_the_framework_propagates_unwrapped() -> None:
    class Pause(Exception):
        pass

    async def decide(request: ApprovalRequest) -> bool:
        raise Pause

    async def emit(partial: ToolResult) -> None:
        pass

    with pytest.raises(Pause):  # not an ExceptionGroup, even with the update pump running
        await run_call(gated([]), "c1", {"path": "/etc"}, ctx=None, decide=decide, emit=emit)


async def test_without_a_framework_gate_the_adapters_approver_decides() -> None:
    ran: list[str] = []
    result = await run_call(gated(ran), "c1", {"path": "/etc"}, ctx=None, decide=ADAPTER_APPROVER)
    assert result.is_error
    assert "no approver" in result.text
    assert ran == []


async def test_updates_are_pumped_in_order_and_a_failing_channel_is_contained(
    caplog: pytest.LogCaptureFixture,
) -> None:
    @tool
    async def ticker(steps: int) -> Any:
        """Count."""
        for step in range(steps):
            yield f"tick {step}"

    seen: list[str] = []

    async def emit(partial: ToolResult) -> None:
        if partial.text == "tick 1":
            raise RuntimeError("the channel is closed")
        seen.append(partial.text)

    adapter = ToolRegistry([ticker]).adapter("ticker")
    with caplog.at_level(logging.WARNING, "customtools.integrations"):
        result = await run_call(adapter, "c", {"steps": 3}, ctx=None, emit=emit)
    assert result.text == "tick 2"
    assert seen == ["tick 0", "tick 2"]
    assert "dropped an update of tool 'ticker'" in caplog.text


def test_conflicts_handed_to_an_adapter_are_logged(caplog: pytest.LogCaptureFixture) -> None:
    @tool
    def echo(text: str) -> str:
        """Echo."""
        return text

    with caplog.at_level(logging.WARNING, "customtools.integrations"):
        registry = as_registry([echo, tool(lambda text: text, name="echo")], {})
    assert registry.names == ("echo",)
    assert "tool name 'echo' is already taken" in caplog.text


def test_adapter_options_cannot_reconfigure_an_existing_registry() -> None:
    with pytest.raises(TypeError, match="pass them to ToolRegistry"):
        as_registry(ToolRegistry(), {"timeout": 3})


async def test_cancelling_the_caller_aborts_an_async_tools_signal_too() -> None:
    signals: list[AbortSignal] = []
    started = anyio.Event()

    @tool
    async def wait(signal: AbortSignal) -> str:
        """Wait until cancelled."""
        signals.append(signal)
        started.set()
        await anyio.sleep(30)
        return "late"

    adapter = ToolRegistry([wait]).adapter("wait")
    with anyio.fail_after(10):
        async with anyio.create_task_group() as group:
            group.start_soon(lambda: run_call(adapter, "c", {}, ctx=None))
            await started.wait()
            group.cancel_scope.cancel()
    # cancelled at its await at once; the signal aborted as the cancellation passed
    assert signals[0].aborted
    assert signals[0].reason == CANCELLED_REASON


async def test_a_sync_tool_that_ignores_its_signal_is_given_up_on_after_the_grace() -> None:
    started, release = threading.Event(), threading.Event()

    @tool
    def stubborn() -> str:
        """Ignore the signal until released (bounded)."""
        started.set()
        release.wait(10)
        return "done"

    adapter = ToolRegistry([stubborn]).adapter("stubborn")
    try:
        with anyio.fail_after(10):
            async with anyio.create_task_group() as group:
                group.start_soon(lambda: run_call(adapter, "c", {}, ctx=None, grace=0.2))
                assert await anyio.to_thread.run_sync(started.wait, 5)
                group.cancel_scope.cancel()  # returns after the grace, the thread still runs
    finally:
        release.set()
