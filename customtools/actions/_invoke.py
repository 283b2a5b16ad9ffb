"""Calling plugin hooks: sync or async, bounded by a timeout, faults contained; and the codec.

Every hook (``init``, ``get_actions``, ``execute_action``) may be a plain function or an
``async def``. Async hooks are awaited on the event loop inside a cancel scope, so a timeout
cancels them. Plain functions run in a worker thread (``anyio.to_thread.run_sync``) so a slow
one never blocks the event loop; a thread cannot be interrupted, so on timeout the dispatcher
*abandons* it: the run moves on, the thread finishes in the background and its return value
is discarded.

Containment: the hook runs in a child task of its own, and everything it raises is caught
there, ``BaseException`` included (``SystemExit``, ``GeneratorExit``, a ``CancelledError`` it
raises itself, a test framework's outcome exception). The caller's cancellation is not
decided by what the hook raises: it is delivered to the caller's own task, at its wait for the
child, or found by a checkpoint right after it, and propagates from there. So a hook's own
cancellation exception is told apart from the caller's, on asyncio and on trio.
``KeyboardInterrupt`` is the one exception let through: it is the user's, not the hook's.
"""

from __future__ import annotations

import copy
import functools
import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol, TypeVar

import anyio
import anyio.lowlevel
import anyio.to_thread

from customtools.actions._session import SessionLike

__all__ = ["HookEscapeError", "HookTimeoutError", "IdentityCodec", "NativeCodec", "call_hook"]

S = TypeVar("S", bound=SessionLike)


class HookTimeoutError(Exception):
    """Internal: a hook ran past its deadline (the dispatcher turns it into a failure)."""

    def __init__(self, timeout: float) -> None:
        super().__init__(f"did not finish within {timeout:g} s")
        self.timeout = timeout


class HookEscapeError(Exception):
    """Internal: a hook raised a ``BaseException`` that is not an ``Exception``.

    ``SystemExit``, ``GeneratorExit``, the hook's own ``CancelledError`` and the like arrive
    wrapped in this, so the dispatcher records them like any other failure.

    Attributes:
        original: what the hook raised.
    """

    def __init__(self, original: BaseException) -> None:
        super().__init__(type(original).__name__)
        self.original = original


def _is_async(fn: Callable[..., Any]) -> bool:
    if inspect.iscoroutinefunction(fn):
        return True
    if isinstance(fn, functools.partial):
        return _is_async(fn.func)
    # an object whose ``async def __call__`` makes it an async hook
    return inspect.iscoroutinefunction(type(fn).__call__)


def _boxed(fn: Callable[..., Any], args: tuple[Any, ...]) -> tuple[Any, BaseException | None]:
    """Run a plain hook in the worker thread; return ``(value, None)`` or ``(None, error)``.

    Nothing but ``KeyboardInterrupt`` crosses the thread boundary as an exception: a
    ``GeneratorExit`` re-raised through an ``await`` cannot be caught by the awaiting
    coroutine on asyncio, and a boxed value also lets a plain function return an awaitable
    on every backend (trio refuses a worker-thread function whose value is a coroutine).
    """
    try:
        return fn(*args), None
    except KeyboardInterrupt:
        raise
    except BaseException as exc:
        return None, exc


class _Outcome:
    """What the hook's child task left behind: a value or the exception it raised."""

    __slots__ = ("error", "value")

    def __init__(self) -> None:
        self.value: Any = None
        self.error: BaseException | None = None


async def _run(fn: Callable[..., Any], args: tuple[Any, ...], out: _Outcome) -> None:
    try:
        if _is_async(fn):
            value = await fn(*args)
        else:
            value, error = await anyio.to_thread.run_sync(_boxed, fn, args, abandon_on_cancel=True)
            if error is not None:
                out.error = error
                return
            if inspect.isawaitable(value):
                value = await value
        out.value = value
    except KeyboardInterrupt:
        raise
    except BaseException as exc:
        out.error = exc


async def call_hook(fn: Callable[..., Any], *args: Any, limit: float | None) -> Any:
    """Call ``fn(*args)``; await it or run it in a worker thread; bound it by ``limit`` seconds.

    Raises:
        HookTimeoutError: when the deadline passed first.
        HookEscapeError: the hook raised a ``BaseException`` that is not an ``Exception``.
        Exception: whatever ``Exception`` the hook raised, as is.
    """
    out = _Outcome()
    with anyio.move_on_after(limit) as scope:
        async with anyio.create_task_group() as group:
            group.start_soon(_run, fn, args, out)
    error = out.error
    if isinstance(error, anyio.get_cancelled_exc_class()):
        # The caller's own cancellation: on trio the nursery can exit quietly once the child
        # has caught it, so ask the enclosing scopes directly; this raises when they cancel.
        await anyio.lowlevel.checkpoint_if_cancelled()
    if scope.cancel_called:
        raise HookTimeoutError(limit or 0.0)
    if error is None:
        return out.value
    if isinstance(error, Exception):
        raise error
    raise HookEscapeError(error) from error


class NativeCodec(Protocol):
    """How a host maps its session to provider-native messages and back.

    Session plugins receive ``to_native(session, config)`` as ``native_messages``; when an
    action returns replacement ``native_messages``, the dispatcher calls ``apply_native`` to
    rebuild the session (typically its visible transcript and any stored native history).
    """

    def to_native(self, session: SessionLike, config: Mapping[str, Any]) -> list[dict[str, Any]]:
        """Return the provider-native history of ``session`` as fresh mappings."""
        ...

    def apply_native(
        self, session: S, native_messages: Sequence[Mapping[str, Any]], config: Mapping[str, Any]
    ) -> S:
        """Return ``session`` rebuilt from ``native_messages``."""
        ...


class IdentityCodec:
    """The default codec: native messages *are* the session's messages."""

    def to_native(self, session: SessionLike, config: Mapping[str, Any]) -> list[dict[str, Any]]:
        """Return deep copies of ``session.messages``."""
        return [copy.deepcopy(dict(m)) for m in session.messages]

    def apply_native(
        self, session: S, native_messages: Sequence[Mapping[str, Any]], config: Mapping[str, Any]
    ) -> S:
        """Return ``session`` with ``messages`` replaced by ``native_messages``."""
        return session.with_changes(messages=[dict(m) for m in native_messages])
