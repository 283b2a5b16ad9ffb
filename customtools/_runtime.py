"""How tool code is run: sync tools in worker threads, async tools driven under a guard.

The cancellation model these follow is ``docs/cancellation.md``: a call ends by completion,
by the caller's abort, by its deadline, or by its caller's task being cancelled; the last
three fire the tool's signal at once; the tool then has ``grace`` seconds (the adapter's
setting, :data:`DEFAULT_GRACE` unless set) to finish; past that the call is stopped by kind.

Sync tools
    run on their own :class:`anyio.CapacityLimiter` (:data:`SYNC_TOOL_THREADS` tokens per
    event loop), never on anyio's default limiter, so they cannot starve the host's other
    thread work. A thread cannot be stopped from outside: when a call is cancelled the
    tool's signal fires, the call waits up to ``grace`` seconds for the thread, and then
    returns; the thread, now *abandoned*, runs until the tool returns. Abandoned threads are
    counted against *their tool* (:func:`abandoned_threads`): while one tool has
    :data:`MAX_ABANDONED_THREADS` of them, :func:`run_in_thread` refuses to start another
    thread *for that tool*, and every other tool goes on. An abandoned thread gives its
    limiter token back at once (the thread itself runs on an unbounded limiter), so live
    calls always find tokens.

Async tools under a guard
    are awaited through :func:`drive`, which steps the tool's coroutine by hand. To the tool it
    is a plain ``await``; to the adapter it shows the first suspension (only then is the
    deadline timer armed: a tool that answers without awaiting costs no timer) and every
    cancellation thrown in. The first cancellation fires the tool's signal; a tool that
    swallows cancellation and keeps awaiting is closed ``grace`` seconds after it, at an await
    the cancellation reaches (never inside a scope it shields, such as ``api.exec`` reaping its
    group, nor inside the exit of an ``async with`` block, such as a task group waiting for its
    children: those run to their end). One that swallows the ``GeneratorExit`` of that close
    too is *abandoned*: its coroutine is never resumed again, the cancel scopes it left open on
    the task are closed for it, and it is counted (:func:`abandoned_coroutines`).
"""

from __future__ import annotations

import math
import threading
import time
import types
from collections.abc import Callable, Coroutine, Generator
from typing import TYPE_CHECKING, Any, Final

from customtools._abort import AbortSignal
from customtools._containment import contained_in_thread
from customtools._errors import ToolTimeoutError
from customtools._format import describe_exception, logger

if TYPE_CHECKING:
    import anyio

__all__ = [
    "ABANDONED",
    "CALLER_CANCELLED",
    "DEFAULT_GRACE",
    "MAX_ABANDONED_THREADS",
    "PREPARE",
    "SELF_STOP_BOUND",
    "STOPS_ITSELF",
    "SYNC_TOOL_THREADS",
    "CallGuard",
    "ThreadLimitReached",
    "abandoned_coroutines",
    "abandoned_threads",
    "drive",
    "grace_of",
    "resume",
    "run_in_thread",
]

_log = logger("customtools.adapter")

DEFAULT_GRACE: Final = 2.0
"""Seconds a cancelled call's tool has, after its signal fired, to end by itself before it is
stopped by kind (the adapter's ``grace`` when none is given; see docs/cancellation.md)."""


def grace_of(signal: Any) -> float:
    """The grace a call's signal carries (the adapter's signals do), else :data:`DEFAULT_GRACE`."""
    grace = getattr(signal, "grace", None)
    if isinstance(grace, (int, float)) and not isinstance(grace, bool):
        return grace
    return DEFAULT_GRACE


CALLER_CANCELLED: Final = "the caller's task was cancelled"
"""The reason a tool's signal carries when the task awaiting the call was cancelled."""

SYNC_TOOL_THREADS: Final = 40
"""Worker threads sync tools may use at once, per event loop (their own limiter)."""

MAX_ABANDONED_THREADS = 16
"""Most threads of cancelled calls of ONE sync tool that may still be running in the process;
while that many are, a new call of that tool gets an error result
(``details["code"] == "thread-limit"``) naming it. Other tools are not affected."""


# -- sync tools: their own limiter, and the abandoned threads ---------------------------------

_threads_lock = threading.Lock()
_abandoned: dict[str, int] = {}
_limiter_var: Any = None  # an anyio RunVar, made on first use: `import customtools` stays cheap


def abandoned_threads(tool: str | None = None) -> int:
    """How many worker threads of cancelled sync calls are still running in this process.

    A sync tool cannot be stopped from outside: when its call is cancelled or times out, its
    signal fires, the call waits ``grace`` seconds and returns, and the thread runs on until
    the tool returns (it should poll its signal). At :data:`MAX_ABANDONED_THREADS` for one
    tool, new calls of that tool are refused with an error result.

    Args:
        tool: count only the threads of the tool with this name; ``None`` counts all.
    """
    with _threads_lock:
        if tool is not None:
            return _abandoned.get(tool, 0)
        return sum(_abandoned.values())


def _limiters() -> tuple[anyio.CapacityLimiter, anyio.CapacityLimiter]:
    """This event loop's sync-tool limiter, and the unbounded one the threads run on."""
    global _limiter_var
    import anyio.lowlevel

    if _limiter_var is None:
        _limiter_var = anyio.lowlevel.RunVar("customtools_sync_tool_limiters")
    try:
        pair: tuple[anyio.CapacityLimiter, anyio.CapacityLimiter] = _limiter_var.get()
    except LookupError:
        pair = (anyio.CapacityLimiter(SYNC_TOOL_THREADS), anyio.CapacityLimiter(math.inf))
        _limiter_var.set(pair)
    return pair


class _ThreadJob:
    """One sync call in a worker thread; knows whether it started and was abandoned."""

    __slots__ = ("abandoned", "done", "owner", "started")

    def __init__(self, owner: str) -> None:
        self.owner = owner
        self.started = False
        self.done = False
        self.abandoned = False

    def run(self, func: Callable[[], Any]) -> Any:
        with _threads_lock:
            if self.abandoned:  # cancelled before a thread picked it up: never run the tool
                self.done = True
                return None
            self.started = True
        try:
            return contained_in_thread(func)
        finally:
            self._finish()

    def _finish(self) -> None:
        with _threads_lock:
            self.done = True
            if self.abandoned:
                left = _abandoned[self.owner] - 1
                if left:
                    _abandoned[self.owner] = left
                else:
                    del _abandoned[self.owner]

    def running(self) -> bool:
        """Whether the tool is running in a thread; a job not started yet never will be."""
        with _threads_lock:
            if not self.started:
                self.abandoned = True
                return False
            return not self.done

    def abandon(self) -> None:
        with _threads_lock:
            if self.started and not self.done and not self.abandoned:
                self.abandoned = True
                _abandoned[self.owner] = _abandoned.get(self.owner, 0) + 1


class ThreadLimitReached(Exception):  # noqa: N818 - a refusal the adapter turns into a result
    """Raised instead of starting a sync tool while :data:`MAX_ABANDONED_THREADS` abandoned
    threads of *that tool* are running."""

    def __init__(self, tool: str, limit: int, running: int) -> None:
        super().__init__(
            f"{running} abandoned threads of sync tool {tool!r} are running (limit {limit})"
        )
        self.tool = tool
        self.limit = limit
        self.running = running


_THREAD_POLL: Final = 0.01  # how often a cancelled sync call looks whether its thread ended


async def run_in_thread(func: Callable[[], Any], owner: str, guard: CallGuard | None = None) -> Any:
    """Run ``func`` for tool ``owner`` on the sync-tool limiter.

    When the call is cancelled, ``guard`` fires the tool's signal (with the reason: abort,
    deadline or the caller's cancellation) and the thread gets the guard's ``grace`` to end;
    then it is abandoned, and counted against ``owner`` until it ends.

    Raises:
        ThreadLimitReached: ``owner`` has :data:`MAX_ABANDONED_THREADS` abandoned threads.
    """
    import anyio
    import anyio.to_thread

    running = _abandoned.get(owner, 0)
    if running >= MAX_ABANDONED_THREADS:
        raise ThreadLimitReached(owner, MAX_ABANDONED_THREADS, running)
    job = _ThreadJob(owner)
    limiter, unbounded = _limiters()
    try:
        # The token is ours, not the thread's: an abandoned thread gives it back at once.
        async with limiter:
            return await anyio.to_thread.run_sync(
                job.run, func, abandon_on_cancel=True, limiter=unbounded
            )
    except BaseException:
        if job.done:
            raise  # the tool itself raised (or the call was refused before it started)
        if guard is not None:
            guard.fire(time.monotonic())  # cancelled: the tool must know at once
        if job.running():
            grace = DEFAULT_GRACE if guard is None else guard.grace
            with anyio.CancelScope(shield=True):
                until = time.monotonic() + grace
                delay = 0.001
                # The thread cannot set an anyio event once abandoned: poll its flag.
                while not job.done and time.monotonic() < until:
                    await anyio.sleep(delay)
                    delay = min(delay * 2, _THREAD_POLL)
            job.abandon()  # does nothing when the thread finished in the grace
        raise


# -- async tools: driven step by step under the call's guard ----------------------------------


_PROBE_INTERVAL: Final = 0.05  # how often a running tool looks for its caller's cancellation


class CallGuard(AbortSignal):
    """The cancel scope, deadline and grace of one guarded call, and the tool's signal.

    Aborting it (:meth:`abort`, the listener the adapter adds to the host's signal) cancels
    the scope. :meth:`fire` aborts it with the reason of a cancellation that came from
    elsewhere (the deadline, the caller). :meth:`expired` runs at every resumption of the tool
    and must stay cheap: it reads the monotonic clock and the scope, and looks whether an
    enclosing (the caller's) scope is cancelled only every :data:`_PROBE_INTERVAL` seconds.
    """

    __slots__ = (
        "cancelled_at",
        "close_after",
        "deadline",
        "grace",
        "next_probe",
        "scope",
        "timeout",
        "tool",
    )

    def __init__(
        self,
        scope: anyio.CancelScope,
        deadline: float | None,
        grace: float = DEFAULT_GRACE,
        tool: str = "",
        timeout: float | None = None,
    ) -> None:
        # AbortSignal.__init__'s three fields, set here without the extra call: this runs on
        # every guarded call.
        self._aborted = False
        self._reason: Any = None
        self._listeners: list[Callable[[Any], None]] = []
        self.scope = scope
        self.deadline = deadline  # time.monotonic() clock
        self.grace = grace
        # A hair past the grace: what the tool started (an exec group's SIGKILL, due at the
        # grace) ends by itself first; more for a tool that stops itself (STOPS_ITSELF).
        self.close_after = grace + CLOSE_MARGIN
        self.tool = tool
        self.timeout = timeout
        self.cancelled_at: float | None = None
        self.next_probe = 0.0

    def abort(self, reason: Any) -> None:
        """Abort the signal with ``reason`` and cancel the call's scope (once)."""
        if self._aborted:
            return
        self._abort(reason)
        self.scope.cancel()

    def timed_out(self) -> ToolTimeoutError:
        """The reason of this call's timeout."""
        return ToolTimeoutError(f"tool {self.tool!r} timed out after {self.timeout:g} s")

    def fire(self, now: float) -> None:
        """The call was cancelled: start the grace and fire the signal with the reason."""
        if self.cancelled_at is None:
            self.cancelled_at = now
        if self._aborted:
            return
        if self.deadline is not None and (now >= self.deadline or self._deadline_passed()):
            self.abort(self.timed_out())
        else:
            # Not our deadline and not an abort (that would have aborted us): the caller's.
            self.abort(CALLER_CANCELLED)

    def _deadline_passed(self) -> bool:
        # The scope's timer runs on the event loop's clock, which may be a hair ahead.
        import anyio

        return anyio.current_time() >= self.scope.deadline

    def suspended(self) -> None:
        """The tool awaits something: only now is the deadline timer worth arming."""
        if self.deadline is not None:
            import anyio

            self.scope.deadline = anyio.current_time() + (self.deadline - time.monotonic())

    def expired(self) -> bool:
        """Whether the tool was cancelled more than ``close_after`` seconds ago (the grace and
        a small margin); the first time it sees the call cancelled, it fires the signal."""
        now = time.monotonic()
        if self.cancelled_at is not None:
            return now - self.cancelled_at > self.close_after
        if (
            self.scope.cancel_called
            or (self.deadline is not None and now >= self.deadline)
            or (now >= self.next_probe and self._caller_cancelled(now))
        ):
            self.fire(now)
        return False

    def _caller_cancelled(self, now: float) -> bool:
        self.next_probe = now + _PROBE_INTERVAL
        return caller_cancelled(self.scope)

    def cancelled(self) -> bool:
        """Whether the call itself is cancelled: an abort, the deadline or the caller's scope.

        A cancellation the tool's own inner scopes raise (its ``move_on_after``) is not.
        """
        return (
            self.scope.cancel_called
            or (self.deadline is not None and time.monotonic() >= self.deadline)
            or caller_cancelled(self.scope)
        )


def caller_cancelled(scope: Any) -> bool:
    """Whether a scope enclosing ``scope`` (the caller's) is cancelled.

    anyio has no public question for this (``current_effective_deadline`` also sees the
    tool's own inner scopes, and trio's sleeps are such scopes): each backend's scope state is
    read, and ``False`` is the answer when it cannot be (the caller's cancellation then
    reaches the tool as the exception it is, and the adapter fires the signal when it
    propagates).
    """
    try:
        if type(scope).__module__.endswith("_trio"):
            status = scope._CancelScope__original._cancel_status
            parent = status._parent if status is not None else None
            return bool(parent is not None and parent.effectively_cancelled)
        return bool(scope._parent_cancellation_is_visible_to_us)
    except Exception:  # pragma: no cover - another anyio or trio version
        return False


PREPARE: Final = "_customtools_prepare"
"""An ``execute`` may carry an async callable under this attribute: the adapter awaits it on
the event loop before the call (after validation and approval), for work that must run there
before a sync ``execute`` starts in its worker thread (a lazily loaded tool's import)."""

STOPS_ITSELF: Final = "_customtools_stops_itself"
"""An ``execute`` with this attribute true stops its own work past the grace (an isolation
proxy kills its worker): the adapter gives it :data:`SELF_STOP_BOUND` more seconds to do so
before it closes it."""

SELF_STOP_BOUND: Final = 6.0

CLOSE_MARGIN: Final = 0.25
"""Seconds past the grace before a tool that is still running is closed (the small bound of
docs/cancellation.md)."""

_STOPPED: Final = object()
_GO_ON: Final = object()

_abandoned_coros: list[tuple[str, Coroutine[Any, Any, Any]]] = []


def abandoned_coroutines(tool: str | None = None) -> int:
    """How many async calls were abandoned: they swallowed both their cancellation and the
    ``GeneratorExit`` that closes them, so their coroutine is kept, never resumed.

    Args:
        tool: count only those of the tool with this name; ``None`` counts all.
    """
    return sum(1 for name, _ in _abandoned_coros if tool is None or name == tool)


def _stoppable(coro: Coroutine[Any, Any, Any], scope: Any) -> bool:
    """Whether an expired tool may be stopped at the await the event loop ends with an exception.

    Not inside a scope the tool shields (the exception there is that scope's own deadline, as
    a sleep's): a shielded cleanup (``api.exec`` stopping and reaping its group) runs to its
    end. Not inside the exit of an ``async with`` block (a task group waiting for its children,
    a resource closing): an exception thrown in there would leave the block half exited
    (trio's nursery would stay on the task's stack, anyio's asyncio task group would leave its
    children running). The tool is stopped at its next await outside both.
    """
    opened = _inner_scopes(scope)
    if opened is not None and any(inner.shield for inner in opened):
        return False
    awaited: Any = coro
    for _ in range(_AWAIT_DEPTH):
        code = getattr(awaited, "cr_code", None) or getattr(awaited, "gi_code", None)
        if code is None:  # a future, or a step whose frames cannot be read
            return True
        if code.co_name == "__aexit__":
            return False
        awaited = getattr(awaited, "cr_await", None) or getattr(awaited, "gi_yieldfrom", None)
    return True


_AWAIT_DEPTH: Final = 200  # how deep :func:`_stoppable` follows a chain of awaits


def _inner_scopes(scope: Any) -> list[Any] | None:
    """The cancel scopes opened on this task inside ``scope``, innermost first (anyio's on
    asyncio, trio's own on trio); ``None`` when ``scope`` is not on this task's stack or the
    backend's state cannot be read (another anyio or trio version).

    anyio has no public API for this; each backend is reached through its own task state.
    """
    opened: list[Any] = []
    try:
        if type(scope).__module__.endswith("_trio"):
            import trio

            native = scope._CancelScope__original
            status: Any = trio.lowlevel.current_task()._cancel_status
            while status is not None and status._scope is not native and len(opened) < 1000:
                opened.append(status._scope)
                status = status._parent
            return opened if status is not None and status._scope is native else None
        from anyio._backends import _asyncio

        backend: Any = _asyncio
        state = backend._task_states.get(backend.current_task())
        inner = state.cancel_scope if state is not None else None
        while inner is not None and inner is not scope and len(opened) < 1000:
            opened.append(inner)
            inner = inner._parent_scope
        return opened if inner is scope else None
    except Exception:  # pragma: no cover - another anyio or trio version
        return None


def _stop(coro: Coroutine[Any, Any, Any], guard: CallGuard, tool_name: str, closed: bool) -> Any:
    """Stop an expired tool at an await its cancellation reaches (see :func:`_stoppable`).

    The first time it is closed: ``GeneratorExit`` is thrown in instead of the cancellation.
    ``coro.throw(GeneratorExit)`` rather than ``coro.close()``: a tool may await while it
    unwinds (its task group waits for its children, a ``finally`` awaits under a shield); what
    it yields is returned, and it is driven on. If it awaits where its cancellation reaches it
    *after* it was closed, it swallowed the ``GeneratorExit`` (a bare ``except:``): it cannot
    be stopped in-process and is abandoned, never resumed again (the cancellation the loop
    delivers there left nothing of that await registered). Returns ``_STOPPED`` when it
    ended or was abandoned, ``_GO_ON`` when it cannot be abandoned (the cancellation is
    delivered as usual), else what it yielded.
    """
    if not closed:
        try:
            return coro.throw(GeneratorExit)
        except (GeneratorExit, StopIteration):
            return _STOPPED
        except BaseException as exc:  # its cleanup raised: it is finished all the same
            _closed_raised(tool_name, exc)
            return _STOPPED
    if not _unwind_scopes(guard.scope):
        guard.cancelled_at = math.inf  # never try again: the grace cannot help this tool
        _log.warning(
            "tool %r swallows cancellation and GeneratorExit inside a task group of its own:"
            " it cannot be abandoned safely, and the call waits until it returns",
            tool_name,
        )
        return _GO_ON
    _abandoned_coros.append((tool_name, coro))
    _never_finalize(coro)
    _log.warning(
        "tool %r swallows cancellation and GeneratorExit (a bare except around an await?):"
        " it was abandoned %g s after its cancellation and will never be resumed",
        tool_name,
        guard.grace,
    )
    return _STOPPED


def _closed_raised(tool_name: str, exc: BaseException) -> None:
    """A closed tool ended: note it when it raised something else than ``GeneratorExit``."""
    inner = getattr(exc, "exceptions", None)  # trio's nursery wraps it in a group
    if isinstance(exc, GeneratorExit) or (
        isinstance(inner, tuple) and all(isinstance(e, GeneratorExit) for e in inner)
    ):
        return
    _log.warning(
        "tool %r raised while it was closed after ignoring its cancellation: %s",
        tool_name,
        describe_exception(exc),
    )


def _never_finalize(coro: Coroutine[Any, Any, Any]) -> None:
    """Keep an abandoned coroutine alive for good.

    Collecting it, even at interpreter exit, would close it, which runs the tool again (it
    swallows ``GeneratorExit``) with no event loop, or with module globals already gone. One
    reference that is never released makes sure that never happens; the cost is the frame's
    memory, counted by :func:`abandoned_coroutines`.
    """
    import ctypes

    ctypes.pythonapi.Py_IncRef(ctypes.py_object(coro))


def _unwind_scopes(scope: Any) -> bool:
    """Close the cancel scopes an abandoned tool left open on this task, inside ``scope``.

    The tool is never resumed, so its ``with`` blocks never exit; left open they would make
    ``scope``'s exit fail. ``False`` (nothing done) when the tool has a task group of its own
    open (its child tasks cannot be abandoned with it) or the scopes cannot be read.
    """
    opened = _inner_scopes(scope)
    if opened is None:
        return False
    if type(scope).__module__.endswith("_trio"):
        import trio

        nurseries = trio.lowlevel.current_task().child_nurseries  # the caller's do not count
        if any(nursery.cancel_scope in opened for nursery in nurseries):
            return False
    elif any(len(inner._tasks) > 1 for inner in opened):
        return False  # a task group's scope, with child tasks
    try:
        for inner in opened:
            inner.__exit__(None, None, None)
    except Exception:
        _log.exception("could not close the cancel scopes an abandoned tool left open")
    return True


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
    """Go on driving ``coro``, which suspended on ``yielded`` (see :func:`drive`).

    Past the grace (:meth:`CallGuard.expired`) the tool is stopped (:func:`_stop`), but only
    where the event loop delivers it an exception anyway: asyncio throws the cancellation in,
    trio resumes the await with an ``outcome.Error``. An await the loop resumes normally gets
    its answer, whatever the time: it may be the loop's own bookkeeping (a task group's exit,
    a lock handed over, a process reaped), which an exception there would cut short.
    """
    closed = False  # GeneratorExit was thrown in and the tool went on awaiting: it unwinds
    while True:
        try:
            value = yield yielded
        except BaseException as exc:
            if guard.cancelled_at is None:
                if guard.cancelled():
                    guard.fire(time.monotonic())  # the first cancellation: fire the signal
            elif guard.expired() and _stoppable(coro, guard.scope):
                stopped = _stop(coro, guard, tool_name, closed)
                if stopped is _STOPPED:
                    raise
                if stopped is not _GO_ON:
                    closed = True
                    yielded = stopped
                    continue
            step: Callable[[Any], Any] = coro.throw
            value = exc
        else:
            # trio resumes a cancelled task with an outcome that raises inside the tool: if
            # it is the call's cancellation, the signal fires first (not at the next probe).
            if (
                value is not None
                and guard.cancelled_at is None
                and _delivers_error(value)
                and guard.cancelled()
            ):
                guard.fire(time.monotonic())
            if guard.expired() and _delivers_error(value) and _stoppable(coro, guard.scope):
                stopped = _stop(coro, guard, tool_name, closed)
                if stopped is _STOPPED:
                    # The outcome was not delivered, so there is no exception here to
                    # re-raise: the call's own cancellation is raised instead.
                    return (yield from _until_cancelled(guard))
                if stopped is not _GO_ON:
                    closed = True
                    yielded = stopped
                    continue
            step = coro.send
        try:
            yielded = step(value)
        except StopIteration as stop:
            if not closed:
                return stop.value
            return (yield from _until_cancelled(guard))  # a late result is discarded
        except BaseException as end:
            if not closed:
                raise
            _closed_raised(tool_name, end)
            return (yield from _until_cancelled(guard))


def _delivers_error(value: Any) -> bool:
    """Whether the event loop resumes the tool with an exception to raise inside it: trio's
    ``outcome.Error`` (asyncio sends ``None`` and throws exceptions in instead)."""
    return type(value).__name__ == "Error" and hasattr(value, "unwrap")


ABANDONED: Final = object()
"""What :func:`drive` returns for a tool it closed or abandoned when the call's cancellation
did not reach it within another grace (the adapter reports the timeout, abort or caller
cancellation that started the grace)."""


def _until_cancelled(guard: CallGuard) -> Generator[Any, Any, Any]:
    """Raise the call's cancellation in place of a stopped tool's end."""
    import anyio

    # The scope that started the grace is cancelled, so this raises its cancellation at once.
    yield from anyio.sleep(guard.grace).__await__()
    return ABANDONED
