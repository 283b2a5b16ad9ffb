"""How tool code is run: sync tools in worker threads, async tools driven under a guard.

Sync tools
    run on their own :class:`anyio.CapacityLimiter` (:data:`SYNC_TOOL_THREADS` tokens per
    event loop), never on anyio's default limiter, so they cannot starve the host's other
    thread work. A thread cannot be stopped from outside: when a call is cancelled the call
    returns at once and the thread, now *abandoned*, runs until the tool returns. Abandoned
    threads are counted (:func:`abandoned_threads`) and capped (:data:`MAX_ABANDONED_THREADS`):
    while the cap is reached :func:`run_in_thread` refuses to start another one. On trio an
    abandoned thread keeps its limiter token until it ends; the cap is below the token count,
    so live calls always find tokens.

Async tools under a signal or a timeout
    are awaited through :func:`drive`, which steps the tool's coroutine by hand. To the tool it
    is a plain ``await``; to the adapter it shows the first suspension (only then is the
    deadline timer armed: a tool that answers without awaiting costs no timer) and every
    cancellation thrown in. A tool that swallows cancellation and keeps awaiting is closed
    :data:`CANCEL_GRACE` seconds after the first one, and the cancellation goes on; one that
    swallows the ``GeneratorExit`` of that close too is driven on until it returns, because
    abandoning it would leave its cancel scopes open on the task.
"""

from __future__ import annotations

import logging
import math
import threading
import time
import types
from collections.abc import Callable, Coroutine, Generator
from typing import TYPE_CHECKING, Any, Final

from customtools._abort import AbortSignal
from customtools._containment import contained_in_thread
from customtools._format import describe_exception

if TYPE_CHECKING:
    import anyio

__all__ = [
    "ABANDONED",
    "CANCEL_GRACE",
    "MAX_ABANDONED_THREADS",
    "SYNC_TOOL_THREADS",
    "CallGuard",
    "ThreadLimitReached",
    "abandoned_threads",
    "drive",
    "resume",
    "run_in_thread",
]

_log = logging.getLogger("customtools.adapter")

CANCEL_GRACE: Final = 0.5
"""Seconds an async tool may keep running after it was cancelled (by its signal, its timeout
or the caller) before the adapter closes its coroutine and returns."""

SYNC_TOOL_THREADS: Final = 40
"""Worker threads sync tools may use at once, per event loop (their own limiter)."""

MAX_ABANDONED_THREADS = 32
"""Most threads of cancelled sync tools that may still be running in the process; while that
many are, a new sync call gets an error result (``details["code"] == THREAD_LIMIT_CODE``)."""


# -- sync tools: their own limiter, and the abandoned threads ---------------------------------

_threads_lock = threading.Lock()
_abandoned = 0
_limiter_var: Any = None  # an anyio RunVar, made on first use: `import customtools` stays cheap


def abandoned_threads() -> int:
    """How many worker threads of cancelled sync tools are still running in this process.

    A sync tool cannot be stopped from outside: when its call is cancelled or times out, the
    call returns at once and the thread runs on until the tool returns (it should poll its
    signal). Hosts can watch this number; at :data:`MAX_ABANDONED_THREADS` new sync calls are
    refused with an error result.
    """
    return _abandoned


def _sync_limiter() -> anyio.CapacityLimiter:
    global _limiter_var
    import anyio.lowlevel

    if _limiter_var is None:
        _limiter_var = anyio.lowlevel.RunVar("customtools_sync_tool_limiter")
    try:
        limiter: anyio.CapacityLimiter = _limiter_var.get()
    except LookupError:
        limiter = anyio.CapacityLimiter(SYNC_TOOL_THREADS)
        _limiter_var.set(limiter)
    return limiter


class _ThreadJob:
    """One sync call in a worker thread; knows whether it was abandoned while running."""

    __slots__ = ("abandoned", "done")

    def __init__(self) -> None:
        self.done = False
        self.abandoned = False

    def run(self, func: Callable[[], Any]) -> Any:
        global _abandoned
        try:
            return contained_in_thread(func)
        finally:
            with _threads_lock:
                self.done = True
                if self.abandoned:
                    _abandoned -= 1

    def abandon(self) -> None:
        global _abandoned
        with _threads_lock:
            if not self.done and not self.abandoned:
                self.abandoned = True
                _abandoned += 1


class ThreadLimitReached(Exception):  # noqa: N818 - a refusal the adapter turns into a result
    """Raised instead of starting a sync tool while :data:`MAX_ABANDONED_THREADS` abandoned
    threads are running."""

    def __init__(self, limit: int, running: int) -> None:
        super().__init__(f"{running} abandoned sync-tool threads are running (limit {limit})")
        self.limit = limit
        self.running = running


async def run_in_thread(func: Callable[[], Any]) -> Any:
    """Run ``func`` on the sync-tool limiter; count the thread as abandoned if cancelled."""
    import anyio.to_thread

    if _abandoned >= MAX_ABANDONED_THREADS:
        raise ThreadLimitReached(MAX_ABANDONED_THREADS, _abandoned)
    job = _ThreadJob()
    try:
        return await anyio.to_thread.run_sync(
            job.run, func, abandon_on_cancel=True, limiter=_sync_limiter()
        )
    except BaseException:
        job.abandon()  # does nothing when the thread already finished (the tool raised)
        raise


# -- async tools: driven step by step under the call's guard ----------------------------------


_PROBE_INTERVAL: Final = 0.05  # how often a running tool looks for its caller's cancellation


class CallGuard(AbortSignal):
    """The cancel scope, deadline and grace of one guarded call, and its abort signal.

    Aborting it (:meth:`abort`, the listener the adapter adds to the host's signal) cancels
    the scope. :meth:`expired` runs at every resumption of the tool and must stay cheap: it
    reads the monotonic clock and the scope, and asks anyio whether an enclosing scope is
    cancelled only every :data:`_PROBE_INTERVAL` seconds.
    """

    __slots__ = ("cancelled_at", "deadline", "next_probe", "scope")

    def __init__(self, scope: anyio.CancelScope, deadline: float | None) -> None:
        # AbortSignal.__init__'s three fields, set here without the extra call: this runs on
        # every guarded call.
        self._aborted = False
        self._reason: Any = None
        self._listeners: list[Callable[[Any], None]] = []
        self.scope = scope
        self.deadline = deadline  # time.monotonic() clock
        self.cancelled_at: float | None = None
        self.next_probe = 0.0

    def abort(self, reason: Any) -> None:
        """Abort the signal with ``reason`` and cancel the call's scope (once)."""
        if self._aborted:
            return
        self._abort(reason)
        self.scope.cancel()

    def suspended(self) -> None:
        """The tool awaits something: only now is the deadline timer worth arming."""
        if self.deadline is not None:
            import anyio

            self.scope.deadline = anyio.current_time() + (self.deadline - time.monotonic())

    def expired(self) -> bool:
        """Whether the tool was cancelled more than :data:`CANCEL_GRACE` seconds ago."""
        now = time.monotonic()
        if self.cancelled_at is not None:
            return now - self.cancelled_at > CANCEL_GRACE
        if (
            self.scope.cancel_called
            or (self.deadline is not None and now >= self.deadline)
            or (now >= self.next_probe and self._caller_cancelled(now))
        ):
            self.cancelled_at = now
        return False

    def _caller_cancelled(self, now: float) -> bool:
        import anyio

        self.next_probe = now + _PROBE_INTERVAL
        return anyio.current_effective_deadline() == -math.inf


_CLOSED: Final = object()


def _close(coro: Coroutine[Any, Any, Any], guard: CallGuard, tool_name: str) -> Any:
    """Close an expired tool: ``_CLOSED`` when it closed, else what it yielded instead.

    ``coro.throw(GeneratorExit)`` rather than ``coro.close()``: a tool that swallows even
    ``GeneratorExit`` (a bare ``except:``) yields again, and ``close()`` would drop what it
    yielded and leave its cancel scopes open on the task, corrupting the event loop's scope
    stack. Such a tool cannot be stopped in-process: it is driven on until it returns.
    """
    try:
        yielded = coro.throw(GeneratorExit)
    except (GeneratorExit, StopIteration):
        return _CLOSED
    except BaseException as exc:  # its cleanup raised: it is finished all the same
        _log.warning(
            "tool %r raised while it was closed after ignoring its cancellation: %s",
            tool_name,
            describe_exception(exc),
        )
        return _CLOSED
    guard.cancelled_at = math.inf  # never try again: the grace cannot help this tool
    _log.warning(
        "tool %r swallows cancellation and GeneratorExit (a bare except around an await?):"
        " it cannot be stopped and the call waits until it returns",
        tool_name,
    )
    return yielded


@types.coroutine
def drive(
    coro: Coroutine[Any, Any, Any], guard: CallGuard, tool_name: str
) -> Generator[Any, Any, Any]:
    """Await ``coro`` by hand, so the adapter sees each suspension and each cancellation.

    Everything the tool yields goes to the event loop unchanged and everything the loop sends
    or throws goes back to the tool, so to the tool this is a plain ``await``. (The adapter
    takes the first step itself and calls :func:`resume`, which saves a generator for tools
    that answer without suspending.)
    """
    try:
        yielded = coro.send(None)
    except StopIteration as stop:
        return stop.value  # answered without suspending: no timer was needed
    guard.suspended()
    return (yield from resume(coro, yielded, guard, tool_name))


@types.coroutine
def resume(
    coro: Coroutine[Any, Any, Any], yielded: Any, guard: CallGuard, tool_name: str
) -> Generator[Any, Any, Any]:
    """Go on driving ``coro``, which suspended on ``yielded`` (see :func:`drive`)."""
    while True:
        try:
            value = yield yielded
        except BaseException as exc:
            if guard.expired():
                yielded = _close(coro, guard, tool_name)
                if yielded is _CLOSED:
                    raise
                continue
            try:
                yielded = coro.throw(exc)
            except StopIteration as stop:
                return stop.value
        else:
            if guard.expired():
                yielded = _close(coro, guard, tool_name)
                if yielded is _CLOSED:
                    # trio resumes a cancelled task with a value that raises inside the
                    # tool, so there is no exception here to re-raise: wait for it.
                    return (yield from _until_cancelled())
                continue
            try:
                yielded = coro.send(value)
            except StopIteration as stop:
                return stop.value


ABANDONED: Final = object()
"""What :func:`drive` returns for a tool it closed when no cancellation reached it (the
adapter reports the timeout or abort that started the grace)."""


def _until_cancelled() -> Generator[Any, Any, Any]:
    import anyio

    # The scope that started the grace is cancelled, so this raises its cancellation at once.
    yield from anyio.sleep(CANCEL_GRACE).__await__()
    return ABANDONED
