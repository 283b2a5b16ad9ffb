"""The execution adapter: the one way tools are called.

:class:`CustomToolAdapter` wraps a :class:`~customtools.CustomTool` and gives hosts
``await adapter.execute(tool_call_id, params, signal=..., on_update=..., ctx=...)``, which

1. returns a "cancelled" error result at once if the signal is already aborted;
2. validates ``params`` with a validator compiled on the first call and cached (coercions and
   defaults applied on a copy and recorded in the result's ``_meta``);
3. calls ``tool.execute(tool_call_id, params, on_update, ctx, signal)`` in exactly that order,
   inline when it is async, in a worker thread when it is sync;
4. cancels the call when the signal aborts or the timeout expires, discards a late result,
   and returns an error result saying why;
5. turns any exception or unusable return value into an error result a model can read.

It never raises for anything the tool does; only cancellation of the *caller's own* scope
propagates, as it must in structured concurrency.

Cost: with no signal and no timeout, a call goes straight to the tool with no cancel scope,
no task and no per-call controller (see docs/performance.md). A signal or a timeout adds one
``anyio.CancelScope`` and, for a timeout, one per-call :class:`AbortSignal` that the deadline
aborts.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import logging
import math
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from customtools._abort import AbortSignal
from customtools._content import ToolResult, normalize_result, text_result
from customtools._context import DEFAULT_CONTEXT, ToolContext
from customtools._errors import ContentError, ToolAbortedError, ToolArgumentsError, ToolTimeoutError
from customtools._tool import CustomTool

if TYPE_CHECKING:
    from customtools._validation import Coercion, CompiledValidator

__all__ = ["COERCIONS_META_KEY", "VIOLATIONS_META_KEY", "CustomToolAdapter", "UpdateCallback"]

_log = logging.getLogger("customtools.adapter")

UpdateCallback = Callable[[ToolResult], Any]
"""A host's ``on_update``: receives each partial result as a :class:`ToolResult`."""

COERCIONS_META_KEY = "customtools/coercions"
"""``_meta`` key of a result listing the argument coercions and defaults that were applied."""

VIOLATIONS_META_KEY = "customtools/violations"
"""``_meta`` key listing the violations a lenient tool was called with anyway."""


class _NeverAborted(AbortSignal):
    """The signal tools get when the host passes none: it never aborts, so listeners are not
    kept (a shared instance must not accumulate them)."""

    __slots__ = ()

    def add_listener(self, listener: Callable[[Any], None]) -> None:
        return None

    async def wait(self) -> None:
        import anyio

        await anyio.sleep_forever()


_NEVER = _NeverAborted()


class _CallSignal(AbortSignal):
    """The signal of one call with a timeout: aborting it also cancels the call's scope."""

    __slots__ = ("_scope",)

    def __init__(self, scope: Any) -> None:
        # AbortSignal.__init__'s three fields, set here without the extra call: this runs on
        # every call that has a timeout.
        self._aborted = False
        self._reason: Any = None
        self._listeners: list[Callable[[Any], None]] = []
        self._scope = scope

    def _abort(self, reason: Any) -> None:
        if self._aborted:
            return
        super()._abort(reason)
        self._scope.cancel()


def _discard_update(partial: Any) -> None:
    return None


class _UpdateSink:
    """Forwards a tool's partial results to the host, normalized, in order.

    A host callback that raises is logged once per call and the call goes on. Updates that
    arrive after the call ended (a leaked background task) are dropped. With ``interval`` set,
    updates are coalesced: the first of a burst is delivered at once, later ones within
    ``interval`` seconds replace each other, and the newest is delivered at the next update
    after the interval or when the call ends.
    """

    __slots__ = ("_callback", "_failed", "_interval", "_last", "_pending", "_tool_name", "closed")

    def __init__(self, callback: UpdateCallback, tool_name: str, interval: float | None) -> None:
        self._callback = callback
        self._tool_name = tool_name
        self._interval = interval
        self._failed = False
        self._pending: ToolResult | None = None
        self._last = -math.inf
        self.closed = False

    def __call__(self, partial: Any) -> None:
        if self.closed:
            return
        if type(partial) is not ToolResult:
            try:
                partial = normalize_result(partial, tool_name=self._tool_name)
            except ContentError as exc:
                _log.warning("dropped an update of tool %r: %s", self._tool_name, exc)
                return
        if self._interval is not None:
            import anyio

            now = anyio.current_time()
            if now - self._last < self._interval:
                self._pending = partial
                return
            self._last = now
            self._pending = None
        self._deliver(partial)

    def _deliver(self, partial: ToolResult) -> None:
        try:
            self._callback(partial)
        except Exception:
            if not self._failed:
                self._failed = True
                _log.exception(
                    "the host's on_update callback raised for tool %r; the call goes on"
                    " (further failures in this call are not logged)",
                    self._tool_name,
                )

    def close(self) -> None:
        """Flush a coalesced update and drop everything after."""
        if self.closed:
            return
        pending, self._pending = self._pending, None
        if pending is not None:
            self._deliver(pending)
        self.closed = True


class _ThreadUpdateSink:
    """The ``on_update`` a sync tool gets: hands each update to the event loop thread, so the
    host's callback always runs on the loop, in order."""

    __slots__ = ("_sink",)

    def __init__(self, sink: _UpdateSink) -> None:
        self._sink = sink

    def __call__(self, partial: Any) -> None:
        if self._sink.closed:
            return
        import anyio.from_thread  # anyio is imported on use: `import customtools` stays cheap

        # RuntimeError: the event loop is gone (the call was abandoned and the host shut down).
        with contextlib.suppress(RuntimeError):
            anyio.from_thread.run_sync(self._sink, partial)


def _error_result(text: str, details: dict[str, Any]) -> ToolResult:
    return text_result(text, details, True)


def _with_meta(result: ToolResult, key: str, value: Any) -> ToolResult:
    meta = dict(result.meta) if result.meta else {}
    meta[key] = value
    return ToolResult(
        content=result.content,
        details=result.details,
        is_error=result.is_error,
        structured_content=result.structured_content,
        meta=meta,
    )


def _min_timeout(*values: float | None) -> float | None:
    given = [v for v in values if v is not None]
    return min(given) if given else None


class CustomToolAdapter:
    """Runs one tool: validation, execution, streaming, cancellation, timeouts, failures.

    Create one adapter per tool and keep it: the compiled validator is cached on it.

    Args:
        tool: the tool to run.
        timeout: seconds any call may run; the smaller of this and ``tool.timeout`` applies.
        coerce_args: default for LLM-friendly coercions when the tool does not set
            ``coerce_args``.
        apply_defaults: default for filling schema defaults when the tool does not set
            ``apply_defaults``.
        context: the :class:`ToolContext` calls get when ``execute`` is given none.
        update_interval: coalesce partial updates to at most one per this many seconds
            (``None``, the default, delivers every update).
        engine: validation engine name or object (``"rust"`` default, ``"reference"``).
    """

    __slots__ = (
        "_apply_defaults",
        "_coerce",
        "_context",
        "_engine",
        "_execute",
        "_fast_check",
        "_is_async",
        "_name",
        "_timeout",
        "_update_interval",
        "_validator",
        "tool",
    )

    def __init__(
        self,
        tool: CustomTool,
        *,
        timeout: float | None = None,
        coerce_args: bool = True,
        apply_defaults: bool = True,
        context: ToolContext | None = None,
        update_interval: float | None = None,
        engine: Any = None,
    ) -> None:
        if not isinstance(tool, CustomTool):
            raise TypeError(f"CustomToolAdapter needs a CustomTool, got {type(tool).__name__}")
        if timeout is not None and not timeout > 0:
            raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
        self.tool = tool
        self._name = tool.name
        self._execute = tool.execute
        self._is_async = tool.execute_is_async
        self._timeout = _min_timeout(timeout, tool.timeout)
        self._coerce = coerce_args if tool.coerce_args is None else tool.coerce_args
        self._apply_defaults = (
            apply_defaults if tool.apply_defaults is None else tool.apply_defaults
        )
        self._context = context if context is not None else DEFAULT_CONTEXT
        self._update_interval = update_interval
        self._engine = engine
        self._validator: CompiledValidator | None = None
        self._fast_check: Callable[[Any], bool] | None = None

    def __repr__(self) -> str:
        return f"<CustomToolAdapter {self._name!r}>"

    @property
    def name(self) -> str:
        """The tool's name."""
        return self._name

    @property
    def label(self) -> str:
        """The tool's label."""
        return self.tool.label

    @property
    def description(self) -> str:
        """The tool's description."""
        return self.tool.description

    @property
    def parameters(self) -> Mapping[str, Any]:
        """The tool's JSON Schema."""
        return self.tool.parameters

    def _compile(self) -> CompiledValidator:
        from customtools._validation import compile_validator

        validator = compile_validator(
            self.tool.parameters,
            tool_name=self._name,
            coerce=self._coerce,
            apply_defaults=self._apply_defaults,
            engine=self._engine,
        )
        self._validator = validator
        self._fast_check = validator.fast_check
        return validator

    async def execute(
        self,
        tool_call_id: str,
        params: Any,
        *,
        signal: AbortSignal | None = None,
        on_update: UpdateCallback | None = None,
        ctx: ToolContext | None = None,
        timeout: float | None = None,
    ) -> ToolResult:
        """Validate ``params`` and run the tool; always returns a :class:`ToolResult`.

        Args:
            tool_call_id: the model's id for this call, passed through to the tool.
            params: the arguments (a mapping; JSON text from a model goes through
                :func:`~customtools.validation.parse_arguments` first).
            signal: aborting it cancels the call within milliseconds.
            on_update: receives each partial result, in order, on the event loop thread.
            ctx: the per-call context; the adapter's ``context`` when omitted.
            timeout: a per-call limit in seconds; the smallest of this, the adapter's and the
                tool's applies.

        Returns:
            The tool's result, or an error result (``is_error=True``) when the arguments are
            invalid, the tool raised or returned something unusable, or the call was
            cancelled or timed out.
        """
        if signal is not None and signal.aborted:
            return self._cancelled(signal.reason)
        validator = self._validator
        if validator is None:
            try:
                validator = self._compile()
            except Exception as exc:
                return self._failed(exc, "could not prepare argument validation")
        coercions: tuple[Coercion, ...] = ()
        fast_check = self._fast_check
        try:
            valid = fast_check is not None and fast_check(params)
        except Exception:
            valid = False  # a value JSON cannot carry: validate() reports it
        if valid:
            args = params
        else:
            try:
                args, coercions = validator.validate(params)
            except ToolArgumentsError as exc:
                if not self.tool.lenient_args:
                    return _error_result(
                        str(exc),
                        {
                            "error": "ToolArgumentsError",
                            "violations": [
                                {"path": v.path, "message": v.message, "keyword": v.keyword}
                                for v in exc.violations
                            ],
                        },
                    )
                return await self._lenient(
                    tool_call_id, params, exc, signal, on_update, ctx, timeout
                )
        if timeout is not None:
            timeout = _min_timeout(timeout, self._timeout)
        else:
            timeout = self._timeout
        if signal is None and timeout is None:
            if on_update is None and self._is_async:
                # The hot path, inline: no sink, no scope, no extra coroutine frame. Nothing
                # can cancel the call but the caller's own scope, whose cancellation must
                # propagate (it is a BaseException, never caught here).
                try:
                    raw = await self._execute(
                        tool_call_id,
                        args,
                        _discard_update,
                        ctx if ctx is not None else self._context,
                        _NEVER,
                    )
                except ToolAbortedError as exc:
                    result = self._cancelled(exc.reason)
                except Exception as exc:
                    result = self._failed(exc)
                else:
                    if type(raw) is str:
                        result = text_result(raw)
                    elif type(raw) is ToolResult:
                        result = raw
                    else:
                        result = self._normalize(raw)
            else:
                result = await self._run_plain(tool_call_id, args, on_update, ctx)
        else:
            result = await self._run_guarded(tool_call_id, args, on_update, ctx, signal, timeout)
        if coercions and not result.is_error:
            result = _with_meta(result, COERCIONS_META_KEY, [c.to_dict() for c in coercions])
        return result

    async def _lenient(
        self,
        tool_call_id: str,
        params: Any,
        exc: ToolArgumentsError,
        signal: AbortSignal | None,
        on_update: UpdateCallback | None,
        ctx: ToolContext | None,
        timeout: float | None,
    ) -> ToolResult:
        timeout = _min_timeout(timeout, self._timeout)
        if signal is None and timeout is None:
            result = await self._run_plain(tool_call_id, params, on_update, ctx)
        else:
            result = await self._run_guarded(tool_call_id, params, on_update, ctx, signal, timeout)
        return _with_meta(
            result,
            VIOLATIONS_META_KEY,
            [{"path": v.path, "message": v.message, "keyword": v.keyword} for v in exc.violations],
        )

    async def _call(
        self, tool_call_id: str, args: Any, sink: _UpdateSink | None, ctx: Any, signal: AbortSignal
    ) -> Any:
        if self._is_async:
            update: Callable[[Any], None] = sink if sink is not None else _discard_update
            return await self._execute(tool_call_id, args, update, ctx, signal)
        import anyio.to_thread

        update = _ThreadUpdateSink(sink) if sink is not None else _discard_update
        raw = await anyio.to_thread.run_sync(
            functools.partial(self._execute, tool_call_id, args, update, ctx, signal),
            abandon_on_cancel=True,
        )
        if inspect.isawaitable(raw):
            raw = await raw
        return raw

    async def _run_plain(
        self, tool_call_id: str, args: Any, on_update: UpdateCallback | None, ctx: Any
    ) -> ToolResult:
        # Fast path: no signal and no timeout, so nothing can cancel the call but the caller's
        # own scope, whose cancellation must propagate (BaseException, never caught here).
        sink = (
            _UpdateSink(on_update, self._name, self._update_interval)
            if on_update is not None
            else None
        )
        try:
            raw = await self._call(
                tool_call_id, args, sink, ctx if ctx is not None else self._context, _NEVER
            )
        except ToolAbortedError as exc:
            return self._cancelled(exc.reason)
        except Exception as exc:
            return self._failed(exc)
        finally:
            if sink is not None:
                sink.close()
        return self._normalize(raw)

    async def _run_guarded(
        self,
        tool_call_id: str,
        args: Any,
        on_update: UpdateCallback | None,
        ctx: Any,
        signal: AbortSignal | None,
        timeout: float | None,
    ) -> ToolResult:
        import anyio  # imported on use: `import customtools` stays cheap

        sink = (
            _UpdateSink(on_update, self._name, self._update_interval)
            if on_update is not None
            else None
        )
        listener: Callable[[Any], None] | None
        if timeout is not None:
            # The tool gets its own signal, so a timeout aborts it too (sync tools in worker
            # threads can only stop cooperatively, by seeing the signal); aborting that signal
            # cancels the call's scope, and the host's signal relays into it.
            scope = anyio.CancelScope(deadline=anyio.current_time() + timeout)
            tool_signal: AbortSignal = _CallSignal(scope)
            listener = tool_signal._abort
        else:
            scope = anyio.CancelScope()
            tool_signal = signal if signal is not None else _NEVER

            def listener(_reason: Any) -> None:
                scope.cancel()

        if signal is not None:
            signal.add_listener(listener)
        else:
            listener = None
        raw: Any = None
        error: Exception | None = None
        context = ctx if ctx is not None else self._context
        try:
            with scope:
                try:
                    if self._is_async and sink is None:
                        raw = await self._execute(
                            tool_call_id, args, _discard_update, context, tool_signal
                        )
                    else:
                        raw = await self._call(tool_call_id, args, sink, context, tool_signal)
                except Exception as exc:
                    error = exc
        finally:
            if listener is not None:
                signal.remove_listener(listener)  # type: ignore[union-attr]
            if sink is not None:
                sink.close()
        if scope.cancel_called or tool_signal.aborted:
            # Aborted or timed out: whatever the tool produced after that is discarded.
            if tool_signal.aborted:
                return self._cancelled(tool_signal.reason)
            reason = ToolTimeoutError(f"tool {self._name!r} timed out after {timeout:g} s")
            tool_signal._abort(reason)
            return self._cancelled(reason)
        if error is not None:
            if isinstance(error, ToolAbortedError):
                return self._cancelled(error.reason)
            return self._failed(error)
        if type(raw) is str:
            return text_result(raw)
        return self._normalize(raw)

    def _normalize(self, raw: Any) -> ToolResult:
        try:
            return normalize_result(raw, tool_name=self._name)
        except ContentError as exc:
            return _error_result(
                f"tool {self._name!r} returned an unusable result: {exc}",
                {"error": "ContentError", "returned": type(raw).__name__},
            )

    def _failed(self, exc: Exception, doing: str | None = None) -> ToolResult:
        kind = type(exc).__name__
        _log.debug("tool %r raised %s", self._name, kind, exc_info=exc)
        message = str(exc) or kind
        prefix = f"tool {self._name!r} {doing}: " if doing else ""
        return _error_result(f"{prefix}{kind}: {message}", {"error": kind, "message": message})

    def _cancelled(self, reason: Any) -> ToolResult:
        if isinstance(reason, ToolTimeoutError):
            text = f"{reason}; the call was cancelled"
            details: dict[str, Any] = {"error": "ToolTimeoutError", "cancelled": True}
            details["timed_out"] = True
        else:
            suffix = f": {reason}" if reason is not None else ""
            text = f"tool {self._name!r} was cancelled{suffix}"
            details = {"error": "ToolAbortedError", "cancelled": True, "timed_out": False}
        if reason is not None:
            details["reason"] = str(reason)
        return _error_result(text, details)
