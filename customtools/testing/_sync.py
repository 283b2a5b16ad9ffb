"""Running the async helpers from synchronous code: the ``*_sync`` variants.

Outside an event loop a ``*_sync`` helper runs its coroutine with :func:`anyio.run` on the
requested backend. Inside a running event loop (a synchronous fixture factory called from an
``async def`` test, say) :func:`anyio.run` cannot nest, so the coroutine runs on a fresh event
loop in a worker thread and the caller's thread waits for it. That blocks the caller's loop
for the duration, which a test can afford; async tests should still prefer the async helpers.
"""

from __future__ import annotations

import concurrent.futures
import functools
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import anyio

__all__ = ["run_sync"]

T = TypeVar("T")

DEFAULT_BACKEND = "asyncio"


def _running_backend() -> str | None:
    """The name of the async library running in this thread, or ``None``."""
    try:
        anyio.get_current_task()
    except RuntimeError:
        return None
    try:
        import sniffio
    except ImportError:  # pragma: no cover - sniffio comes with trio and older anyio
        return DEFAULT_BACKEND
    try:
        return str(sniffio.current_async_library())
    except sniffio.AsyncLibraryNotFoundError:  # pragma: no cover - anyio found a loop
        return DEFAULT_BACKEND


def run_sync(
    func: Callable[..., Awaitable[T]], *args: Any, backend: str | None = None, **kwargs: Any
) -> T:
    """Run ``await func(*args, **kwargs)`` to completion from synchronous code.

    Args:
        func: the coroutine function.
        *args: its positional arguments.
        backend: ``"asyncio"`` or ``"trio"``; default: the backend already running in this
            thread, else asyncio.
        **kwargs: its keyword arguments.

    Returns:
        What the coroutine returned; its exception propagates.
    """
    running = _running_backend()
    chosen = backend or running or DEFAULT_BACKEND
    call = functools.partial(func, *args, **kwargs)
    if running is None:
        return anyio.run(call, backend=chosen)
    with concurrent.futures.ThreadPoolExecutor(
        max_workers=1, thread_name_prefix="customtools-testing"
    ) as pool:
        return pool.submit(anyio.run, call, backend=chosen).result()
