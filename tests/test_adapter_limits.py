"""Uncooperative tools cannot defeat timeouts or starve the host (review findings L2, M3).

No timing assertions: a tool that would hang the call forever is bounded by ``fail_after``,
so a regression fails the test instead of passing slowly.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from typing import Any

import anyio
import anyio.to_thread
import pytest

from customtools import _runtime
from customtools._abort import AbortController
from customtools._adapter import CustomToolAdapter
from customtools._error_results import Code
from customtools._runtime import abandoned_coroutines, abandoned_threads
from customtools._tool import AWAITABLE_MARKER, CustomTool

GRACE = 0.2

pytestmark = pytest.mark.anyio


# -- L2: timeouts hold against tools that swallow cancellation or block the loop ---------------


async def test_a_tool_that_swallows_cancellation_is_abandoned_after_the_grace() -> None:
    attempts: list[int] = []

    async def execute(*_: Any) -> str:
        cancelled = anyio.get_cancelled_exc_class()
        while True:  # a retry loop with a bare except: it never lets cancellation through
            try:
                await anyio.sleep(0.05)
            except cancelled:
                attempts.append(1)

    adapter = CustomToolAdapter(CustomTool(name="stubborn", execute=execute))
    with anyio.fail_after(0.3 + GRACE + 5):
        result = await adapter.execute("c", {}, timeout=0.3, grace=GRACE)
    assert result.is_error
    assert result.details["timed_out"] is True
    assert attempts  # it really swallowed the cancellation, more than once


async def test_a_tool_that_swallows_the_callers_cancellation_is_abandoned_too() -> None:
    async def execute(*_: Any) -> str:
        cancelled = anyio.get_cancelled_exc_class()
        while True:  # the bare retry loop of the review's reproduction, written as suppress
            with contextlib.suppress(cancelled):
                await anyio.sleep(0.05)

    adapter = CustomToolAdapter(CustomTool(name="stubborn", execute=execute))
    controller = AbortController()
    with anyio.fail_after(GRACE + 5), anyio.move_on_after(0.1) as scope:
        await adapter.execute("c", {}, signal=controller.signal, grace=GRACE)
    assert scope.cancelled_caught


async def test_a_tool_that_swallows_even_generator_exit_is_abandoned_not_waited_for(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # Issue 16 item 3: such a tool used to be driven until it returned (4 s for a 0.3 s
    # timeout). Now the caller gets its result at deadline + grace and the tool, never resumed
    # again, never finishes.
    finished: list[str] = []

    async def execute(*_: Any) -> str:
        started = time.monotonic()
        while time.monotonic() - started < 30:  # bounded, for the test
            with contextlib.suppress(BaseException):  # a bare except, GeneratorExit included
                with anyio.move_on_after(5):  # a cancel scope of its own, left open
                    await anyio.sleep(0.02)
        finished.append("late")
        return "late"

    adapter = CustomToolAdapter(CustomTool(name="bare_except", execute=execute))
    before = abandoned_coroutines("bare_except")
    with anyio.fail_after(10):
        result = await adapter.execute("c", {}, timeout=0.1, grace=GRACE)
        # The event loop's cancel-scope stack is intact: scopes and calls still work.
        with anyio.move_on_after(0.01) as scope:
            await anyio.sleep(1)
        again = await adapter.execute("c", {}, timeout=0.05, grace=GRACE)
    assert result.details["timed_out"] is True
    assert "late" not in result.text
    assert not finished
    assert scope.cancelled_caught
    assert again.details["timed_out"] is True
    assert abandoned_coroutines("bare_except") == before + 2
    assert "abandoned" in caplog.text


async def test_a_result_that_arrives_after_the_deadline_is_a_timeout() -> None:
    async def execute(*_: Any) -> str:
        time.sleep(0.5)  # blocks the event loop: nothing can preempt it in-process
        return "late but looks fine"

    adapter = CustomToolAdapter(CustomTool(name="blocking", execute=execute))
    result = await adapter.execute("c", {}, timeout=0.1)
    assert result.is_error
    assert result.details["timed_out"] is True
    assert "late but looks fine" not in result.text


async def test_a_sync_result_after_the_deadline_is_a_timeout_too() -> None:
    def execute(*_: Any) -> str:
        time.sleep(0.3)
        return "late"

    adapter = CustomToolAdapter(CustomTool(name="slow", execute=execute))
    with anyio.fail_after(5):
        result = await adapter.execute("c", {}, timeout=0.1)
    assert result.details["timed_out"] is True


async def test_a_marked_execute_returning_a_plain_awaitable_still_times_out() -> None:
    class Sleeper:  # an awaitable that is not a coroutine
        def __await__(self) -> Any:
            return (yield from anyio.sleep(30).__await__())

    def execute(*_: Any) -> Sleeper:
        return Sleeper()

    setattr(execute, AWAITABLE_MARKER, True)  # "calling it gives an awaitable"
    adapter = CustomToolAdapter(CustomTool(name="awaitable", execute=execute))
    with anyio.fail_after(5):
        result = await adapter.execute("c", {}, timeout=0.05)
    assert result.details["timed_out"] is True


async def test_a_tool_answering_without_awaiting_is_not_timed_out() -> None:
    async def execute(*_: Any) -> str:
        return "quick"

    result = await CustomToolAdapter(CustomTool(name="quick", execute=execute)).execute(
        "c", {}, timeout=30, signal=AbortController().signal
    )
    assert result.text == "quick"
    assert not result.is_error


# -- M3: sync tools that ignore their signal --------------------------------------------------


@pytest.fixture
def release() -> Iterator[threading.Event]:
    """Released at teardown: the stuck tools then return and their threads end.

    Threads abandoned by earlier tests finish first, so each test starts from zero.
    """
    wait_for_no_abandoned_threads()
    event = threading.Event()
    yield event
    event.set()
    wait_for_no_abandoned_threads()


def wait_for_no_abandoned_threads() -> None:
    deadline = time.monotonic() + 10
    while abandoned_threads() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert abandoned_threads() == 0


def stuck_tool(release: threading.Event, entered: threading.Semaphore | None = None) -> CustomTool:
    def execute(*_: Any) -> str:
        if entered is not None:
            entered.release()
        release.wait(10)  # ignores its signal
        return "finally"

    return CustomTool(name="stuck", execute=execute)


async def abandon(release: threading.Event, count: int) -> list[Any]:
    """Calls of a stuck tool with a 0.05 s deadline until ``count`` of them ran it, each then
    abandoned at its deadline; the results of every call made.

    A call whose deadline passes before a thread picks it up (a loaded machine, parallel test
    processes) never runs the tool and leaves nothing to count, so another call is made. The
    tool says when it runs; a started thread says so well within the 5 s looked for.
    """
    entered = threading.Semaphore(0)
    adapter = CustomToolAdapter(stuck_tool(release, entered))
    results: list[Any] = []
    ran = 0
    while ran < count:
        results.append(await adapter.execute("c", {}, timeout=0.05, grace=0))
        if await anyio.to_thread.run_sync(entered.acquire, True, 5.0):
            ran += 1
    return results


def quick_sync_tool() -> CustomTool:
    def execute(*_: Any) -> str:
        return "quick"

    return CustomTool(name="quick", execute=execute)


async def test_abandoned_threads_are_counted_until_they_finish(release: threading.Event) -> None:
    with anyio.fail_after(30):
        results = await abandon(release, 3)
    assert all(r.details["timed_out"] for r in results)
    assert abandoned_threads() == 3
    assert CustomToolAdapter.abandoned_threads() == 3
    release.set()
    with anyio.fail_after(5):
        while abandoned_threads():
            await anyio.sleep(0.01)


async def test_at_the_cap_a_sync_call_is_refused_with_a_reason(
    release: threading.Event, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_runtime, "MAX_ABANDONED_THREADS", 2)
    stuck = CustomToolAdapter(stuck_tool(release))
    with anyio.fail_after(30):
        await abandon(release, 2)
        refused = await stuck.execute("c", {})
        # Issue 16 item 4: the quota is the stuck tool's own; another sync tool still runs.
        other = await CustomToolAdapter(quick_sync_tool()).execute("c", {})
    assert refused.is_error
    assert refused.details["code"] == Code.THREAD_LIMIT
    assert refused.details["tool"] == "stuck"
    assert refused.details["abandoned_threads"] == 2
    assert "tool 'stuck' was not started" in refused.text
    assert "ignored their signal" in refused.text
    assert "limit is 2 per tool" in refused.text
    assert other.text == "quick"

    async def execute(*_: Any) -> str:
        return "async tools are unaffected"

    ok = await CustomToolAdapter(CustomTool(name="a", execute=execute)).execute("c", {})
    assert ok.text == "async tools are unaffected"
    release.set()
    with anyio.fail_after(5):
        while abandoned_threads():
            await anyio.sleep(0.01)
        again = await CustomToolAdapter(quick_sync_tool()).execute("c", {})
    assert again.text == "quick"


async def test_abandoned_threads_never_block_other_calls(
    release: threading.Event, monkeypatch: pytest.MonkeyPatch
) -> None:
    # On trio an abandoned thread keeps its limiter token until it ends. While calls are
    # accepted, fewer threads than the cap are abandoned, the sync-tool limiter has at least
    # as many tokens as the cap, and anyio's default limiter is not touched at all.
    monkeypatch.setattr(_runtime, "MAX_ABANDONED_THREADS", 3)
    monkeypatch.setattr(_runtime, "SYNC_TOOL_THREADS", 3)
    monkeypatch.setattr(_runtime, "_limiter_var", None)  # a fresh limiter with 3 tokens
    with anyio.fail_after(30):
        await abandon(release, 2)
        default = anyio.to_thread.current_default_thread_limiter()
        assert default.borrowed_tokens == 0
        assert await anyio.to_thread.run_sync(lambda: "host work") == "host work"
        result = await CustomToolAdapter(quick_sync_tool()).execute("c", {}, timeout=4)
    assert result.text == "quick"
