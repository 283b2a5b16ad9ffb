"""Cancellation tokens: :class:`AbortController` and :class:`AbortSignal`.

The shape follows the web platform's ``AbortController``, which tool authors coming from
TypeScript already know, on top of anyio:

* the host creates an :class:`AbortController` per operation and hands ``controller.signal`` to
  :meth:`CustomToolAdapter.execute <customtools.CustomToolAdapter.execute>`;
* the adapter listens on the signal and cancels the running call within milliseconds;
* tool code can poll :attr:`AbortSignal.aborted`, call :meth:`AbortSignal.raise_if_aborted`,
  ``await signal.wait()``, or forward the signal to ``api.exec``.

Thread rule: :meth:`AbortController.abort` runs the listeners synchronously in the calling
thread, and the adapter's listener cancels an anyio scope, so call ``abort()`` on the event loop
thread. From another thread use ``anyio.from_thread.run_sync(controller.abort, reason)``.
Reading :attr:`AbortSignal.aborted` is safe from any thread (sync tools in worker threads poll
it).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from customtools._errors import ToolAbortedError
from customtools._format import logger

__all__ = ["AbortController", "AbortListener", "AbortSignal"]

_log = logger("customtools.abort")

AbortListener = Callable[[Any], None]
"""A callback run once when a signal is aborted; it receives the abort reason."""


class AbortSignal:
    """The read side of an :class:`AbortController`: says whether, and why, to stop.

    Signals are created by controllers (or by :meth:`any`); there is no public constructor
    argument. A signal aborts at most once; later ``abort()`` calls are ignored.
    """

    __slots__ = ("__weakref__", "_aborted", "_listeners", "_reason")

    def __init__(self) -> None:
        self._aborted = False
        self._reason: Any = None
        self._listeners: list[AbortListener] = []

    def __repr__(self) -> str:
        state = f"aborted, reason={self._reason!r}" if self._aborted else "active"
        return f"<AbortSignal {state}>"

    @property
    def aborted(self) -> bool:
        """``True`` once the controller aborted."""
        return self._aborted

    @property
    def reason(self) -> Any:
        """The reason passed to :meth:`AbortController.abort` (``None`` until aborted)."""
        return self._reason

    def add_listener(self, listener: AbortListener) -> None:
        """Run ``listener(reason)`` when the signal aborts.

        A listener added to an already aborted signal is *not* called: check :attr:`aborted`
        first. A listener that raises is logged and does not stop the others.
        """
        self._listeners.append(listener)

    def remove_listener(self, listener: AbortListener) -> None:
        """Forget ``listener``; removing one that was never added does nothing."""
        listeners = self._listeners
        if listener in listeners:  # removal is idempotent
            listeners.remove(listener)

    def raise_if_aborted(self) -> None:
        """Raise if the signal is aborted; do nothing otherwise.

        Raises:
            BaseException: the reason itself when it is an exception (for example the
                :class:`~customtools.ToolTimeoutError` of a timeout).
            ToolAbortedError: otherwise, carrying the reason.
        """
        if not self._aborted:
            return
        reason = self._reason
        if isinstance(reason, BaseException):
            raise reason
        raise ToolAbortedError(_describe(reason), reason=reason)

    async def wait(self) -> None:
        """Wait until the signal aborts (returns at once if it already has)."""
        if self._aborted:
            return
        import anyio  # imported on use: `import customtools` stays cheap

        event = anyio.Event()

        def wake(_reason: Any) -> None:
            event.set()

        self.add_listener(wake)
        try:
            await event.wait()
        finally:
            self.remove_listener(wake)

    def _abort(self, reason: Any) -> None:
        if self._aborted:
            return
        self._aborted = True
        self._reason = reason
        listeners, self._listeners = self._listeners, []
        for listener in listeners:
            try:
                listener(reason)
            except Exception:
                _log.exception("abort listener %r raised; the other listeners still run", listener)

    @staticmethod
    def any(signals: Iterable[AbortSignal]) -> AbortSignal:
        """A signal that aborts as soon as any of ``signals`` does, with that one's reason."""
        controller = AbortController()
        for signal in signals:
            if signal.aborted:
                controller.abort(signal.reason)
                break
            signal.add_listener(controller.abort)
        return controller.signal


def _describe(reason: Any) -> str:
    if reason is None:
        return "the operation was aborted"
    return f"the operation was aborted: {reason}"


class AbortController:
    """Creates an :class:`AbortSignal` and aborts it.

    Example:
        >>> controller = AbortController()
        >>> controller.abort("user pressed stop")
        >>> controller.signal.aborted, controller.signal.reason
        (True, 'user pressed stop')
    """

    __slots__ = ("_signal",)

    def __init__(self) -> None:
        self._signal = AbortSignal()

    def __repr__(self) -> str:
        return f"<AbortController signal={self._signal!r}>"

    @property
    def signal(self) -> AbortSignal:
        """The signal this controller aborts."""
        return self._signal

    def abort(self, reason: Any = None) -> None:
        """Abort the signal with ``reason`` and run its listeners; later calls do nothing."""
        self._signal._abort(reason)
