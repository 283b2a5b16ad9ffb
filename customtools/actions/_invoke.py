"""Calling plugin hooks: sync or async, bounded by a timeout; and the native-message codec.

Every hook (``init``, ``get_actions``, ``execute_action``) may be a plain function or an
``async def``. Async hooks are awaited on the event loop inside a cancel scope, so a timeout
cancels them. Plain functions run in a worker thread (``anyio.to_thread.run_sync``) so a slow
one never blocks the event loop; a thread cannot be interrupted, so on timeout the dispatcher
*abandons* it: the run moves on, the thread finishes in the background and its return value
is discarded.
"""

from __future__ import annotations

import copy
import functools
import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol, TypeVar

import anyio
import anyio.to_thread

from customtools.actions._session import SessionLike

__all__ = ["HookTimeoutError", "IdentityCodec", "NativeCodec", "call_hook"]

S = TypeVar("S", bound=SessionLike)


class HookTimeoutError(Exception):
    """Internal: a hook ran past its deadline (the dispatcher turns it into a failure)."""

    def __init__(self, timeout: float) -> None:
        super().__init__(f"did not finish within {timeout:g} s")
        self.timeout = timeout


def _is_async(fn: Callable[..., Any]) -> bool:
    if inspect.iscoroutinefunction(fn):
        return True
    if isinstance(fn, functools.partial):
        return _is_async(fn.func)
    # an object whose ``async def __call__`` makes it an async hook
    return inspect.iscoroutinefunction(type(fn).__call__)


def _boxed(fn: Callable[..., Any], args: tuple[Any, ...]) -> list[Any]:
    return [fn(*args)]


async def call_hook(fn: Callable[..., Any], *args: Any, limit: float | None) -> Any:
    """Call ``fn(*args)``; await it or run it in a worker thread; bound it by ``limit`` seconds.

    Raises:
        HookTimeoutError: when the deadline passed first.
    """
    with anyio.move_on_after(limit) as scope:
        if _is_async(fn):
            return await fn(*args)
        # Boxed so a plain function that returns an awaitable behaves the same on every backend
        # (trio refuses a worker-thread function whose return value is a coroutine).
        [value] = await anyio.to_thread.run_sync(_boxed, fn, args, abandon_on_cancel=True)
        if inspect.isawaitable(value):
            value = await value
        return value
    assert scope.cancelled_caught  # only a deadline ends the block without a return
    raise HookTimeoutError(limit or 0.0)


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
