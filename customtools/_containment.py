"""Which exceptions from tool code are the tool's fault, and which belong to the caller.

Tool code runs inside the host's task. Anything it raises reaches the adapter (and the session
and rendering dispatchers), which must turn the tool's faults into results and let only the
*caller's* own stop requests through:

* ``Exception``: always the tool's.
* ``SystemExit`` (argparse or click given bad arguments, a stray ``sys.exit()``),
  ``GeneratorExit``, pytest's ``OutcomeException`` and any other ``BaseException`` subclass:
  the tool's.
* The backend's cancellation exception (``asyncio.CancelledError``, ``trio.Cancelled``): the
  caller's when the current task really is being cancelled (a cancelled anyio/trio scope
  around the call, or, on asyncio, a pending ``Task.cancel()`` such as ``asyncio.timeout``,
  ``wait_for`` or ``asyncio.run``'s Ctrl-C handling); otherwise the tool raised it itself and
  it is the tool's. An exception group holding one counts as the cancellation it holds.
* ``KeyboardInterrupt``: the caller's when it surfaces on the event loop thread, because a
  Ctrl-C delivered by the signal handler cannot be told apart from one a tool raises there, and
  the user's Ctrl-C must still stop the host. One raised in a worker thread (a sync tool) can
  only come from tool code, so there it is the tool's.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["ThreadBaseException", "belongs_to_caller", "contained_in_thread"]

T = TypeVar("T")


class ThreadBaseException(Exception):  # noqa: N818 - a carrier, not an error of its own
    """Carries a ``BaseException`` raised by tool code in a worker thread to the event loop.

    Wrapped as an ordinary ``Exception`` it cannot be mistaken for the caller's cancellation
    or Ctrl-C on the way back; the receiver unwraps :attr:`exc`.
    """

    def __init__(self, exc: BaseException) -> None:
        super().__init__()
        self.exc = exc


def contained_in_thread(func: Callable[..., T], *args: Any) -> T:
    """Call ``func(*args)`` (in a worker thread), wrapping a non-``Exception`` it raises.

    Raises:
        ThreadBaseException: ``func`` raised a ``BaseException`` that is not an ``Exception``.
    """
    try:
        return func(*args)
    except Exception:
        raise
    except BaseException as exc:
        raise ThreadBaseException(exc) from None


def belongs_to_caller(exc: BaseException) -> bool:
    """Whether ``exc``, raised out of tool code on the event loop thread, must propagate.

    ``True`` for the backend's cancellation exception while the current task is being
    cancelled and for ``KeyboardInterrupt`` (see the module docstring); ``False`` for everything
    else, which the caller turns into an error result. Call it only inside a running event
    loop; it never raises.
    """
    if isinstance(exc, Exception) and not _is_group(exc):
        return False
    if _holds(exc, KeyboardInterrupt):
        return True
    import anyio  # imported on use: `import customtools` stays cheap

    try:
        cancelled = anyio.get_cancelled_exc_class()
    except Exception:  # no event loop: nothing can be cancelling us
        return False
    if not _holds(exc, cancelled):
        return False
    return _task_is_cancelled()


def _is_group(exc: BaseException) -> bool:
    # By name: the builtin group on Python 3.11+ and the `exceptiongroup` backport anyio raises
    # on 3.10 share it, and the backport is not importable here on newer Pythons.
    return any(cls.__name__ == "BaseExceptionGroup" for cls in type(exc).__mro__)


def _holds(exc: BaseException, kind: type[BaseException], depth: int = 0) -> bool:
    if isinstance(exc, kind):
        return True
    if depth > 20 or not _is_group(exc):
        return False
    inner = getattr(exc, "exceptions", ())
    return isinstance(inner, tuple) and any(
        isinstance(e, BaseException) and _holds(e, kind, depth + 1) for e in inner
    )


def _task_is_cancelled() -> bool:
    import anyio

    if anyio.current_effective_deadline() == -math.inf:
        return True  # a cancelled anyio or trio scope encloses us
    return _asyncio_task_cancelling()


def _asyncio_task_cancelling() -> bool:
    # A plain asyncio ``Task.cancel()`` (asyncio.timeout, wait_for, the Ctrl-C handler of
    # asyncio.run) cancels no anyio scope, so only the task itself can tell. This reads the
    # already-running loop's own state; it never imports or starts asyncio (the package stays
    # anyio-only), and on trio there is no asyncio task to ask.
    asyncio = sys.modules.get("asyncio")
    if asyncio is None:
        return False
    try:
        task = asyncio.current_task()
    except RuntimeError:  # no asyncio loop in this thread (trio)
        return False
    cancelling = getattr(task, "cancelling", None)
    if cancelling is None:
        return True  # Python 3.10 cannot tell: treat it as the caller's, as before
    return bool(cancelling() > 0)
