"""Faults of tool code never escape the adapter: BaseExceptions and unprintable exceptions.

Each test is built from a reproduction in the adversarial review (H1, M5) and runs on asyncio
and trio, for async and sync tools, on the hot path (no signal, no timeout) and the guarded
path (signal and timeout).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

import anyio
import pytest

from customtools._abort import AbortController
from customtools._adapter import CustomToolAdapter
from customtools._content import ToolResult
from customtools._error_results import Code
from customtools._tool import CustomTool

pytestmark = pytest.mark.anyio

ARGV_SCHEMA = {
    "type": "object",
    "properties": {"argv": {"type": "array", "items": {"type": "string"}}},
}


class Outcome(BaseException):
    """Like pytest's OutcomeException: a BaseException subclass a test helper raises."""


class BadStr(Exception):
    def __str__(self) -> str:
        raise RuntimeError("boom")


class NonStrStr(Exception):
    def __str__(self) -> Any:
        return 42


def parse_count(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="count")
    parser.add_argument("--count", type=int)
    return int(parser.parse_args(argv).count)


def make(raise_it: Callable[[], Any], *, sync: bool) -> CustomTool:
    if sync:

        def execute(tool_call_id: str, params: Any, on_update: Any, ctx: Any, signal: Any) -> str:
            raise_it()
            return "unreachable"

    else:

        async def execute(  # type: ignore[misc]
            tool_call_id: str, params: Any, on_update: Any, ctx: Any, signal: Any
        ) -> str:
            raise_it()
            return "unreachable"

    return CustomTool(name="probe", description="d", parameters=ARGV_SCHEMA, execute=execute)


PATHS = ["hot", "signal", "timeout", "signal+timeout", "on_update"]


async def call(tool: CustomTool, path: str, params: Any = None) -> ToolResult:
    adapter = CustomToolAdapter(tool)
    params = {} if params is None else params
    controller = AbortController()
    with anyio.fail_after(10):
        if path == "hot":
            return await adapter.execute("c", params)
        if path == "signal":
            return await adapter.execute("c", params, signal=controller.signal)
        if path == "timeout":
            return await adapter.execute("c", params, timeout=5)
        if path == "on_update":
            return await adapter.execute("c", params, on_update=lambda _u: None)
        return await adapter.execute("c", params, signal=controller.signal, timeout=5)


def raiser(exc: BaseException) -> Callable[[], Any]:
    def raise_it() -> Any:
        raise exc

    return raise_it


@pytest.mark.parametrize("sync", [False, True], ids=["async", "sync"])
@pytest.mark.parametrize("path", PATHS)
async def test_argparse_exit_becomes_a_tool_exit_result(sync: bool, path: str) -> None:
    def bad_args() -> Any:
        return parse_count(["--count", "abc"])  # argparse prints usage and sys.exit(2)

    result = await call(make(bad_args, sync=sync), path, {"argv": ["--count", "abc"]})
    assert result.is_error
    assert result.details["code"] == Code.TOOL_EXIT
    assert result.details["error"] == "SystemExit"
    assert result.details["exit_code"] == 2
    assert "tool 'probe' exited with sys.exit(2)" in result.text


@pytest.mark.parametrize("sync", [False, True], ids=["async", "sync"])
@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize(
    "exc", [GeneratorExit(), Outcome("skip me")], ids=lambda e: type(e).__name__
)
async def test_other_base_exceptions_become_error_results(
    sync: bool, path: str, exc: BaseException
) -> None:
    result = await call(make(raiser(exc), sync=sync), path)
    assert result.is_error
    assert result.details["code"] == Code.TOOL_BASE_EXCEPTION
    assert result.details["error"] == type(exc).__name__
    assert f"raised {type(exc).__name__}" in result.text


@pytest.mark.parametrize("path", PATHS)
async def test_keyboard_interrupt_raised_in_a_worker_thread_is_the_tools(path: str) -> None:
    result = await call(make(raiser(KeyboardInterrupt()), sync=True), path)
    assert result.details["code"] == Code.TOOL_BASE_EXCEPTION
    assert result.details["error"] == "KeyboardInterrupt"


@pytest.mark.parametrize("path", PATHS)
async def test_keyboard_interrupt_on_the_loop_thread_still_stops_the_host(path: str) -> None:
    with pytest.raises(KeyboardInterrupt):
        await call(make(raiser(KeyboardInterrupt()), sync=False), path)


@pytest.mark.parametrize("sync", [False, True], ids=["async", "sync"])
@pytest.mark.parametrize("path", PATHS)
async def test_a_cancellation_the_tool_raises_itself_is_its_own_error(
    sync: bool, path: str
) -> None:
    def cancel_itself() -> Any:
        # On asyncio the tool can construct the backend's cancellation exception; trio's has
        # no public constructor, so there the tool raises asyncio's, which is just as foreign.
        import asyncio

        raise asyncio.CancelledError("raised by the tool")

    result = await call(make(cancel_itself, sync=sync), path)
    assert result.is_error
    assert result.details["code"] == Code.TOOL_BASE_EXCEPTION
    assert result.details["error"] == "CancelledError"


@pytest.mark.parametrize("path", ["hot", "signal", "timeout"])
async def test_cancelling_the_callers_scope_still_cancels(path: str) -> None:
    async def execute(*_: Any) -> str:
        await anyio.sleep(30)
        return "never"

    tool = CustomTool(name="probe", execute=execute)
    reached: list[bool] = []
    with anyio.move_on_after(0.05) as scope:
        await call(tool, path)
        reached.append(True)
    assert scope.cancelled_caught
    assert not reached


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
@pytest.mark.parametrize("path", ["hot", "signal", "timeout"])
async def test_a_plain_asyncio_cancellation_of_the_caller_still_cancels(path: str) -> None:
    import asyncio

    async def execute(*_: Any) -> str:
        await anyio.sleep(30)
        return "never"

    tool = CustomTool(name="probe", execute=execute)
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(call(tool, path), 0.05)


async def test_a_tool_group_of_cancellations_still_cancels_the_caller() -> None:
    async def execute(*_: Any) -> str:
        async with anyio.create_task_group() as tg:
            tg.start_soon(anyio.sleep, 30)
            await anyio.sleep(30)
        return "never"

    tool = CustomTool(name="probe", execute=execute)
    with anyio.move_on_after(0.05) as scope:
        await call(tool, "hot")
    assert scope.cancelled_caught


@pytest.mark.parametrize("sync", [False, True], ids=["async", "sync"])
@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("exc", [BadStr(), NonStrStr()], ids=["raising", "non-str"])
async def test_an_exception_whose_str_fails_is_still_reported(
    sync: bool, path: str, exc: Exception
) -> None:
    result = await call(make(raiser(exc), sync=sync), path)
    assert result.is_error
    assert result.details["error"] == type(exc).__name__
    assert "__str__ failed" in result.text


async def test_sys_exit_with_an_unprintable_code_is_still_reported() -> None:
    class Status:
        def __repr__(self) -> str:
            raise RuntimeError("no repr")

        def __str__(self) -> str:
            raise RuntimeError("no str")

    result = await call(make(lambda: sys.exit(Status()), sync=False), "hot")
    assert result.details["code"] == Code.TOOL_EXIT
    assert result.details["exit_code"] == "Status"


async def test_an_abort_reason_whose_str_fails_is_still_reported() -> None:
    async def execute(*_: Any) -> str:
        await anyio.sleep(30)
        return "never"

    controller = AbortController()
    adapter = CustomToolAdapter(CustomTool(name="probe", execute=execute))
    results: list[ToolResult] = []

    async def run() -> None:
        results.append(await adapter.execute("c", {}, signal=controller.signal))

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(run)
            await anyio.sleep(0.01)
            controller.abort(BadStr())
    assert results[0].details["cancelled"] is True
    assert "__str__ failed" in results[0].text
