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
5. turns anything the tool raises (``SystemExit`` and other ``BaseException``\\ s included) or
   returns unusably into an error result a model can read.

It never raises for anything the tool does; only the *caller's own* cancellation (and a
Ctrl-C on the event loop thread) propagates, as it must (see :mod:`customtools._containment`).

Cost: a valid call of an async tool with no signal, no timeout and no ``on_update`` (and no
approval rule or output schema) goes straight to the tool with no cancel scope, no task and
no per-call controller (see docs/performance.md); the caller's cancellation reaches such a
tool as the cancellation exception itself. Every other call (sync tools always) adds one
``anyio.CancelScope`` without a deadline and one :class:`~customtools._runtime.CallGuard`,
which is the tool's signal; the deadline timer is armed only when the tool actually suspends,
so a tool that answers without awaiting pays no timer.

Cancellation follows one model (docs/cancellation.md, details in :mod:`customtools._runtime`):
an abort, the deadline or the caller's task being cancelled fires the tool's signal at once;
the tool has ``grace`` seconds to end; then an async tool is closed (or abandoned), a sync
tool's thread is abandoned and counted against that tool, and the caller gets an error result
saying why. A result or failure that arrives after the deadline is reported as a timeout,
never as a success.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import inspect
import math
import time
import types
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

import customtools._observe as _observe
from customtools._abort import AbortSignal
from customtools._approval import (
    DEFAULT_APPROVAL_TIMEOUT,
    ApprovalRequest,
    Approver,
    approval_required,
)
from customtools._containment import ThreadBaseException, belongs_to_caller
from customtools._content import ToolResult, normalize_result, text_result
from customtools._context import DEFAULT_CONTEXT, ToolContext
from customtools._error_results import ERROR_RESULTS, Code, Kind, error_result, failure_result
from customtools._errors import (
    ContentError,
    ToolAbortedError,
    ToolArgumentsError,
    ToolTimeoutError,
)
from customtools._format import describe_exception, logger, safe_str
from customtools._runtime import (
    ABANDONED,
    CALLER_CANCELLED,
    DEFAULT_GRACE,
    PREPARE,
    SELF_STOP_BOUND,
    STOPS_ITSELF,
    CallGuard,
    ThreadLimitReached,
    abandoned_coroutines,
    abandoned_threads,
    resume,
    run_in_thread,
)
from customtools._talkback import QuestionPending, TalkBackError, Unanswerable
from customtools._tool import CustomTool

if TYPE_CHECKING:
    from customtools._policy import PackInfo, Policy, ToolPlan
    from customtools._policy._apply import Caps, Hits
    from customtools._policy._backends import MemoryGate
    from customtools._validation import Coercion, CompiledValidator, Violation

__all__ = [
    "COERCIONS_META_KEY",
    "VIOLATIONS_META_KEY",
    "CustomToolAdapter",
    "UpdateCallback",
    "discard_update",
]

_log = logger("customtools.adapter")
_monotonic = time.monotonic

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


_Method = TypeVar("_Method", bound=Callable[..., Any])


class _Keywords:
    """The default of ``execute``'s ``_keywords`` (see :func:`_keyword_options`)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "*"


_KEYWORDS = _Keywords()


def _keyword_options(method: _Method) -> _Method:
    """Marks the parameters of ``method`` after ``_keywords`` keyword-only to its callers.

    ``execute``'s options are keyword-only, but are not declared after ``*``: CPython fills
    each omitted keyword-only argument with a dict lookup (six of them, about 6% of a valid
    call) and an omitted positional one from a tuple. So they follow a positional
    ``_keywords`` whose default is :data:`_KEYWORDS`; ``method`` refuses any other value (a
    third positional argument: :func:`_positional_options`), and its ``__signature__``, what
    ``inspect`` and ``help`` show, has them keyword-only."""
    signature = inspect.signature(method)
    parameters, keyword_only = [], False
    for parameter in signature.parameters.values():
        if parameter.name == "_keywords":
            keyword_only = True
            continue
        if keyword_only:
            parameter = parameter.replace(kind=inspect.Parameter.KEYWORD_ONLY)
        parameters.append(parameter)
    method.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]
    return method


def _positional_options(value: Any) -> TypeError:
    return TypeError(
        "CustomToolAdapter.execute() takes two positional arguments (tool_call_id, params);"
        f" pass its options by name (signal=, on_update=, ctx=, ...), not {value!r}"
    )


_anyio_module: Any = None


def _anyio() -> Any:
    """The ``anyio`` module, imported on first use: `import customtools` stays cheap."""
    global _anyio_module
    if _anyio_module is None:
        import anyio

        _anyio_module = anyio
    return _anyio_module


def discard_update(partial: Any) -> None:
    """The ``on_update`` a tool gets when the host asked for no updates (bridges compare
    against it to skip progress plumbing nobody listens to)."""


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


def _with_meta(result: ToolResult, key: str, value: Any) -> ToolResult:
    return dataclasses.replace(result, meta={**(result.meta or {}), key: value})


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
        approver: ``async def approver(request) -> bool``, asked before every call of a tool
            that requires approval (see :class:`~customtools.CustomTool`'s
            ``requires_approval``); a per-call ``approver=`` overrides it. Without one, such
            a call is refused (an error result): it fails closed.
        approval_timeout: seconds to wait for the approver; no answer in time is a denial.
        grace: seconds a cancelled call's tool has, after its signal fired, to end by itself
            before it is stopped (closed, abandoned or killed by kind; docs/cancellation.md).
            A per-call ``grace=`` overrides it.
        policy: the host's :class:`~customtools.policy.Policy` (caps, rate, result budget,
            retries, cache; docs/policy.md). ``None``, the default, costs nothing per call.
        pack: what the load knows about the tool's pack (a load record's ``pack``): its
            declared ``POLICY`` and permissions, its identity and digest. A
            :class:`~customtools.ToolRegistry` passes it from the load record.
    """

    __slots__ = (
        "_apply_defaults",
        "_approval_timeout",
        "_approver",
        "_asks",
        "_caps",
        "_coerce",
        "_context",
        "_engine",
        "_execute",
        "_fast_check",
        "_gate",
        "_grace",
        "_hits",
        "_inline",
        "_is_async",
        "_name",
        "_output_validator",
        "_plan",
        "_prepare",
        "_stops_itself",
        "_timeout",
        "_update_interval",
        "_validator",
        "_watcher",
        "tool",
    )

    abandoned_threads = staticmethod(abandoned_threads)
    """How many threads of cancelled sync tools still run in this process (a diagnostic)."""

    abandoned_coroutines = staticmethod(abandoned_coroutines)
    """How many async calls were abandoned because they swallowed every way to stop them."""

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
        approver: Approver | None = None,
        approval_timeout: float = DEFAULT_APPROVAL_TIMEOUT,
        grace: float = DEFAULT_GRACE,
        policy: Policy | None = None,
        pack: PackInfo | None = None,
    ) -> None:
        if not isinstance(tool, CustomTool):
            raise TypeError(f"CustomToolAdapter needs a CustomTool, got {type(tool).__name__}")
        if timeout is not None and not timeout > 0:
            raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
        _check_grace(grace)
        self._grace = grace
        self.tool = tool
        self._name = tool.name
        self._execute = tool.execute
        self._is_async = tool.execute_is_async
        self._stops_itself = getattr(tool.execute, STOPS_ITSELF, False) is True
        self._prepare = getattr(tool.execute, PREPARE, None)
        self._timeout = _min_timeout(timeout, tool.timeout)
        self._approver = approver
        self._approval_timeout = approval_timeout
        self._output_validator: Any = None
        # Tools with an output schema or an approval rule take the full path every time.
        self._asks = _may_need_approval(tool)
        gated = tool.output_schema is not None or self._asks
        self._inline = self._is_async and self._timeout is None and not gated
        self._coerce = coerce_args if tool.coerce_args is None else tool.coerce_args
        self._apply_defaults = (
            apply_defaults if tool.apply_defaults is None else tool.apply_defaults
        )
        self._context = context if context is not None else DEFAULT_CONTEXT
        self._update_interval = update_interval
        self._engine = engine
        self._validator: CompiledValidator | None = None
        self._fast_check: Callable[[Any], bool] | None = None
        self._plan: ToolPlan | None = None
        self._caps: Caps | None = None
        self._hits: Hits | None = None
        self._gate: MemoryGate | None = None
        self._watcher: _observe.ToolObserver  # an observed adapter's (set by __new__)
        if policy is not None:
            from customtools._policy import Policy, ToolPlan

            if not isinstance(policy, Policy):
                raise TypeError(
                    f"policy must be a customtools.policy.Policy, got {type(policy).__name__}"
                )
            # Hits are shared by adapters that make the same arguments of one input only.
            variant = f"{self._coerce:d}{self._apply_defaults:d}"
            plan = self._plan = ToolPlan(policy, tool, pack, asks=self._asks, variant=variant)
            if self._inline:  # else its calls never take the hot path
                self._caps = plan.caps
            # Known only now that the plan is: the shortest path for what it holds.
            if type(self) is _GovernedAdapter and plan.hits is not None:
                self._hits = plan.hits
                self.__class__ = _CachingAdapter
            elif type(self) is _GovernedAdapter and self._caps and self._caps[1] is None:
                self._gate = self._caps[0]
                self.__class__ = _OneCapAdapter

    def __new__(cls, tool: CustomTool, **options: Any) -> CustomToolAdapter:
        # Observation and policy: decided once per adapter, so a call pays for neither
        # unless it has them. A host's subclass gets them too, its class first.
        if not isinstance(tool, CustomTool) or issubclass(
            cls, (_GovernedAdapter, _ObservedAdapter)
        ):
            return object.__new__(cls)
        governed = options.get("policy") is not None
        observer = _observe.current_observer()
        watcher = None
        if observer is not None:
            try:
                watcher = observer.tool_observer(tool)
            except Exception:  # an observer never breaks an adapter
                _log.exception("the observer failed to watch tool %r", tool.name)
        if watcher is not None:
            kind: type[CustomToolAdapter] = (
                _ObservedGovernedAdapter if governed else _ObservedAdapter
            )
        elif governed:
            kind = _GovernedAdapter
        else:
            return object.__new__(cls)
        adapter: Any = object.__new__(kind if cls is CustomToolAdapter else _beneath(cls, kind))
        if watcher is not None:
            adapter._watcher = watcher
        return adapter  # type: ignore[no-any-return]

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

    @_keyword_options
    async def execute(
        self,
        tool_call_id: str,
        params: Any,
        _keywords: _Keywords = _KEYWORDS,
        signal: AbortSignal | None = None,
        on_update: UpdateCallback | None = None,
        ctx: ToolContext | None = None,
        timeout: float | None = None,
        approver: Approver | None = None,
        grace: float | None = None,
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
            approver: asked instead of the adapter's approver, for a tool that requires
                approval (the wait does not count against ``timeout``).
            grace: this call's grace (see the class), instead of the adapter's.

        Returns:
            The tool's result, or an error result (``is_error=True``) when the arguments are
            invalid, the tool raised (any exception, ``SystemExit`` included) or returned
            something unusable, or the call was cancelled, timed out or refused.
        """
        if _keywords is not _KEYWORDS:
            raise _positional_options(_keywords)
        fast_check = self._fast_check
        try:
            valid = fast_check is not None and fast_check(params)
        except Exception:
            valid = False  # a value JSON cannot carry: check() reports it
        if valid and signal is None and on_update is None and timeout is None and self._inline:
            # The hot path, inline: no sink, no scope, no extra coroutine frame.
            try:
                raw = await self._execute(
                    tool_call_id,
                    params,
                    discard_update,
                    ctx if ctx is not None else self._context,
                    _NEVER,
                )
            except BaseException as exc:
                if belongs_to_caller(exc):
                    raise  # the caller's own cancellation (or Ctrl-C) propagates
                return self._outcome(None, exc)
            return text_result(raw) if type(raw) is str else self._outcome(raw, None)
        if signal is not None and signal.aborted:
            return self._cancelled(signal.reason)
        coercions: tuple[Coercion, ...] = ()
        violations: list[Violation] | None = None
        if not valid:
            checked = self._check(params, fast_checked=fast_check is not None)
            if type(checked) is ToolResult:
                return checked
            params, coercions, violations = checked
        if timeout is None:
            timeout = self._timeout
        elif self._timeout is not None:
            timeout = min(timeout, self._timeout)
        context = ctx if ctx is not None else self._context
        if self._asks:
            refusal = await self._approve(tool_call_id, params, approver, signal)
            if refusal is not None:
                return refusal
        if grace is None:
            grace = self._grace
        else:
            _check_grace(grace)
        if self._prepare is not None:
            await self._prepare()
            if signal is not None and signal.aborted:
                return self._cancelled(signal.reason)
        result = await self._run_guarded(
            tool_call_id, params, on_update, context, signal, timeout, grace
        )
        if self.tool.output_schema is not None:
            result = self._check_output(result)
        if coercions and not result.is_error:
            result = _with_meta(result, COERCIONS_META_KEY, [c.to_dict() for c in coercions])
        if violations is not None:
            result = _with_meta(result, VIOLATIONS_META_KEY, [v.to_dict() for v in violations])
        return result

    def needs_approval(self, params: Any) -> bool:
        """Whether a call with ``params`` would ask for approval, decided as :meth:`execute`
        decides it: on the validated arguments (coerced, defaults filled in).

        For a host whose framework asks before it calls (the OpenAI Agents SDK's
        ``needs_approval``). Fails closed: arguments :meth:`execute` would refuse, and a rule
        that raises, need approval.
        """
        if not self._asks:
            return False
        checked = self._check(params, fast_checked=False)
        if type(checked) is ToolResult:
            return True
        try:
            return approval_required(self.tool, self._judged(checked[0]))
        except BaseException as exc:  # the rule is tool code: even SystemExit is contained
            if belongs_to_caller(exc):
                raise
            return True

    def _judged(self, params: Any) -> Any:
        """The validated arguments as an approval rule sees them: with the schema's defaults
        filled in even where the tool gets its own (a ``@tool`` function's), so leaving out
        an argument whose default needs approval cannot skip it."""
        if self._apply_defaults:
            return params
        return (self._validator or self._compile()).with_defaults(params)

    def _check(self, params: Any, *, fast_checked: bool) -> Any:
        """Validate and repair ``params``: the error result of invalid arguments, or
        ``(arguments, coercions, violations)`` (violations only for a lenient tool)."""
        try:
            validator = self._validator or self._compile()
            params, coercions, violations, truncated = validator.check(
                params, fast_checked=fast_checked
            )
        except Exception as exc:
            return failure_result(exc, self._name, "could not prepare argument validation")
        if violations is not None and not self.tool.lenient_args:
            text = validator.message_for(violations, truncated)
            violated = [v.to_dict() for v in violations]
            return error_result(Kind.ARGUMENTS, Code.INVALID_ARGUMENTS, text, violations=violated)
        return params, coercions, violations

    def _sink(self, on_update: UpdateCallback | None) -> _UpdateSink | None:
        if on_update is None:
            return None
        return _UpdateSink(on_update, self._name, self._update_interval)

    async def _run_guarded(
        self,
        tool_call_id: str,
        args: Any,
        on_update: UpdateCallback | None,
        ctx: Any,
        signal: AbortSignal | None,
        timeout: float | None,
        grace: float,
    ) -> ToolResult:
        scope = _anyio().CancelScope()
        # The guard is the tool's signal: the host's signal relays into it, and the deadline
        # and the caller's cancellation fire it too, so every way a call is cancelled reaches
        # the tool (sync tools in worker threads can only stop cooperatively, by seeing it).
        guard = CallGuard(
            scope,
            None if timeout is None else time.monotonic() + timeout,
            grace,
            self._name,
            timeout,
        )
        if self._stops_itself:
            guard.close_after = grace + SELF_STOP_BOUND
        tool_signal: AbortSignal = guard
        if signal is not None:
            signal.add_listener(guard.abort)
        sink = None if on_update is None else self._sink(on_update)
        raw: Any = None
        error: BaseException | None = None
        try:
            with scope:
                try:
                    if self._is_async:
                        started = self._execute(
                            tool_call_id,
                            args,
                            sink if sink is not None else discard_update,
                            ctx,
                            tool_signal,
                        )
                    else:
                        update = _ThreadUpdateSink(sink) if sink is not None else discard_update
                        started = run_in_thread(
                            functools.partial(
                                self._execute, tool_call_id, args, update, ctx, tool_signal
                            ),
                            self._name,
                            guard,
                        )
                    if type(started) is types.CoroutineType and self._is_async:
                        # drive(), with its first step inline: no generator for a tool that
                        # answers without suspending (and so needs no deadline timer).
                        try:
                            yielded = started.send(None)
                        except StopIteration as stop:
                            raw = stop.value
                        else:
                            guard.suspended()
                            raw = await resume(started, yielded, guard, self._name)
                    else:
                        raw = await self._await_other(started, guard)
                except BaseException as exc:
                    if belongs_to_caller(exc):
                        if not guard.aborted:
                            guard.fire(time.monotonic())  # the caller's: the tool must know
                        raise  # ours (the scope catches it) or the caller's (it propagates)
                    error = exc
        finally:
            if signal is not None:
                signal.remove_listener(guard.abort)
            if sink is not None:
                sink.close()
        if guard.aborted:
            return self._cancelled(guard.reason)
        if timeout is not None and (
            scope.cancel_called or raw is ABANDONED or time.monotonic() >= guard.deadline  # type: ignore[operator]
        ):
            # Timed out: whatever the tool produced after the deadline is discarded.
            reason = guard.timed_out()
            guard.abort(reason)
            return self._cancelled(reason)
        if raw is ABANDONED:  # closed for the caller's cancellation, which goes on
            return self._cancelled(CALLER_CANCELLED)
        if type(raw) is str and error is None:
            return text_result(raw)
        return self._outcome(raw, error)

    async def _await_other(self, started: Any, guard: CallGuard) -> Any:
        """Await a sync tool's thread run (or an async tool's non-coroutine awaitable)."""
        if guard.deadline is not None:
            # Not driven step by step (a thread run always suspends): arm the deadline now.
            guard.suspended()
        raw = await started
        if not self._is_async and inspect.isawaitable(raw):
            raw = await raw  # a sync execute that returned an awaitable
        return raw

    # -- approval and output schemas ---------------------------------------------------------

    async def _approve(
        self,
        tool_call_id: str,
        params: Any,
        approver: Approver | None,
        signal: AbortSignal | None,
    ) -> ToolResult | None:
        """``None`` when the call may run; else the error result that says why not."""
        params = self._judged(params)  # also what the approver is shown
        try:
            needed = approval_required(self.tool, params)
        except BaseException as exc:  # the rule is tool code: even SystemExit is contained
            if belongs_to_caller(exc):
                raise
            why = f"its approval rule raised {describe_exception(exc)}"
            return self._refused(Code.APPROVAL_ERROR, why)
        if not needed:
            return None
        approver = approver if approver is not None else self._approver
        if approver is None:
            return self._refused(
                Code.NO_APPROVER,
                "it requires approval and the host has no approver; the call was not run",
            )
        request = ApprovalRequest(tool=self.tool, tool_call_id=tool_call_id, arguments=params)
        anyio = _anyio()
        answer: Any = None
        with anyio.move_on_after(self._approval_timeout) as waited:

            def stop_waiting(_reason: Any) -> None:
                waited.cancel()

            if signal is not None:
                signal.add_listener(stop_waiting)
            try:
                answer = await approver(request)
            except QuestionPending as pending:  # the answer comes with a re-run of the call
                return self._cancelled(pending.reason)
            except TalkBackError as exc:  # talk-back: the approver's channel cannot ask
                return self._refused(Code.NO_APPROVER, f"it requires approval: {exc}")
            except Exception as exc:
                return self._refused(
                    Code.APPROVAL_ERROR, f"asking for approval failed: {describe_exception(exc)}"
                )
            finally:
                if signal is not None:
                    signal.remove_listener(stop_waiting)
        if signal is not None and signal.aborted:
            return self._cancelled(signal.reason)
        if waited.cancelled_caught:
            return self._refused(
                Code.APPROVAL_TIMEOUT,
                f"no approval came within {self._approval_timeout:g} s, so it was not run",
            )
        if answer is not True:
            return self._refused(Code.APPROVAL_DENIED, "denied by the user; the call was not run")
        return None

    def _refused(self, code: str, why: str) -> ToolResult:
        return error_result(Kind.APPROVAL_DENIED, code, f"tool {self._name!r} was not run: {why}")

    def _check_output(self, result: ToolResult) -> ToolResult:
        """``result``, or an error result when its structured content breaks the schema.

        The schema describes a success, so an error result's structured content is never
        checked: it is dropped, and nothing unchecked is passed on."""
        structured = result.structured_content
        if result.is_error:
            return (
                result
                if structured is None
                else dataclasses.replace(result, structured_content=None)
            )
        if structured is None:
            return error_result(
                Kind.OUTPUT_SCHEMA,
                Code.MISSING_STRUCTURED_CONTENT,
                f"tool {self._name!r} declares an output schema but returned no structured content",
            )
        try:
            validator = self._output_validator
            if validator is None:
                from customtools._validation import compile_validator

                validator = compile_validator(
                    self.tool.output_schema,  # type: ignore[arg-type]
                    tool_name=self._name,
                    coerce=False,
                    apply_defaults=False,
                    engine=self._engine,
                )
                self._output_validator = validator
            _, _, violations, _ = validator.check(structured)
        except Exception as exc:
            return failure_result(
                exc, self._name, "could not check its result against its output schema"
            )
        if violations is None:
            return result
        lines = "\n".join(f"  - {v}" for v in violations)
        return error_result(
            Kind.OUTPUT_SCHEMA,
            Code.INVALID_STRUCTURED_CONTENT,
            f"tool {self._name!r} returned structured content that does not match its output"
            f" schema:\n{lines}",
            violations=[v.to_dict() for v in violations],
        )

    # -- the one place a call's outcome becomes its result ----------------------------------

    def _outcome(self, raw: Any, error: BaseException | None) -> ToolResult:
        """The result of a call that returned ``raw`` or raised ``error`` (not the caller's)."""
        if error is None:
            if type(raw) is str:
                return text_result(raw)
            if type(raw) is ToolResult:
                return raw
            return self._normalize(raw)
        if isinstance(error, ThreadBaseException):
            error = error.exc
        if isinstance(error, (ToolAbortedError, QuestionPending)):
            return self._cancelled(error.reason)
        if isinstance(error, ThreadLimitReached):
            return self._thread_limit(error)
        if type(error) is ToolArgumentsError:
            return self._bad_arguments(error)
        if isinstance(error, TalkBackError):
            return self._unanswered(error)
        return failure_result(error, self._name)

    def _unanswered(self, error: TalkBackError) -> ToolResult:
        # A question nobody answered, in-process or forwarded from a worker: a code of the
        # table (a tool's own TalkBackError may carry any code; it is then "talkback-failed").
        code = error.code if error.code in ERROR_RESULTS[Kind.TALKBACK][1] else None
        message = safe_str(error) or f"tool {self._name!r} asked, and nobody answered"
        return error_result(Kind.TALKBACK, code or Code.TALKBACK_FAILED, message, message=message)

    def _bad_arguments(self, error: ToolArgumentsError) -> ToolResult:
        # Raised by customtools' own wrappers inside the tool (a function tool's argument
        # conversion): the exact class, whose str() is BaseException's, and whose lines the
        # model needs in full, like those of a validation failure.
        message = safe_str(error)
        if message is None:
            return failure_result(error, self._name)
        violations = [v.to_dict() for v in error.violations]
        return error_result(
            Kind.ARGUMENTS, Code.INVALID_ARGUMENTS, message, message=message, violations=violations
        )

    def _normalize(self, raw: Any) -> ToolResult:
        try:
            return normalize_result(raw, tool_name=self._name)
        except ContentError as exc:
            return error_result(
                Kind.CONTENT,
                Code.UNUSABLE_RESULT,
                f"tool {self._name!r} returned an unusable result: {exc}",
                returned=type(raw).__name__,
            )

    def _thread_limit(self, refusal: ThreadLimitReached) -> ToolResult:
        return error_result(
            Kind.THREAD_LIMIT,
            Code.THREAD_LIMIT,
            f"tool {refusal.tool!r} was not started: {refusal.running} of its own earlier"
            f" calls were cancelled but ignored their signal, and their threads are still"
            f" running (the limit is {refusal.limit} per tool; other tools are not affected);"
            f" retry later, and make {refusal.tool!r} poll signal.aborted",
            tool=refusal.tool,
            abandoned_threads=refusal.running,
        )

    def _cancelled(self, reason: Any) -> ToolResult:
        why = {} if reason is None else {"reason": _reason_text(reason)}
        if isinstance(reason, ToolTimeoutError):
            text = f"{reason}; the call was cancelled"
            return error_result(
                Kind.TIMEOUT, Code.TIMEOUT, text, cancelled=True, timed_out=True, **why
            )
        code = Code.CALLER_CANCELLED if reason == CALLER_CANCELLED else Code.ABORTED
        text = f"tool {self._name!r} was cancelled" + (f": {why['reason']}" if why else "")
        return error_result(Kind.ABORTED, code, text, cancelled=True, timed_out=False, **why)


def _check_grace(grace: Any) -> None:
    if isinstance(grace, bool) or not isinstance(grace, (int, float)) or not 0 <= grace < math.inf:
        raise ValueError(f"grace must be a number of seconds >= 0, got {grace!r}")


def _may_need_approval(tool: CustomTool) -> bool:
    """Whether any call of ``tool`` could need approval (else the check is skipped)."""
    rule = tool.requires_approval
    if rule is None:
        hints = tool.annotations or {}
        return hints.get("destructiveHint") is True and hints.get("readOnlyHint") is not True
    return rule is not False


def _reason_text(reason: Any) -> str:
    if isinstance(reason, BaseException):
        text = safe_str(reason)
        return text if text is not None else describe_exception(reason)
    return safe_str(reason) or type(reason).__name__


# -- execution policy ------------------------------------------------------------------------------


class _GovernedAdapter(CustomToolAdapter):
    """The adapter of a tool run under an execution policy (see :mod:`customtools._policy`):
    the same call, inside the policy's cache, rate, caps, retries and result budget."""

    __slots__ = ()

    @_keyword_options
    async def execute(
        self,
        tool_call_id: str,
        params: Any,
        _keywords: _Keywords = _KEYWORDS,
        signal: AbortSignal | None = None,
        on_update: UpdateCallback | None = None,
        ctx: ToolContext | None = None,
        timeout: float | None = None,
        approver: Approver | None = None,
        grace: float | None = None,
    ) -> ToolResult:
        if _keywords is not _KEYWORDS:
            raise _positional_options(_keywords)
        caps = self._caps
        if caps is None or signal is not None or on_update is not None or timeout is not None:
            caller = (ctx if ctx is not None else self._context).caller
            plan: ToolPlan = self._plan  # type: ignore[assignment]
            key = None
            if plan.cache_ttl is not None and caller is not None:
                # A repeat is answered first, before validation (docs/policy.md says why).
                key = plan.key(params, caller)
                if key is not None:
                    memory = plan.memory
                    if memory is not None:
                        hit = memory.lookup(plan.scope, plan.digest, key)
                    else:
                        hit = await plan.backend.cache.get(plan.scope, plan.digest, key)
                    if hit is not None:
                        return hit
            call = functools.partial(
                super().execute,
                tool_call_id,
                params,
                signal=signal,
                on_update=on_update,
                ctx=ctx,
                timeout=timeout,
                approver=approver,
                grace=grace,
            )
            return await plan.run(call, signal, caller, key, params)
        # Only caps in this process apply: the base class's inline call, each gate's counter
        # taken and given back in place. The branches stay short: CPython 3.11 specializes a
        # comparison only when its jump needs no EXTENDED_ARG.
        fast_check = self._fast_check
        try:
            valid = fast_check(params)  # type: ignore[misc]  # None before the first full call
        except Exception:
            valid = False
        a, b, c = caps  # up to three gates (tool, pack, host), None past the last
        if (
            not valid
            or a.free <= 0
            or (b is not None and (b.free <= 0 or (c is not None and c.free <= 0)))
        ):
            # A full check first, someone waits or a cap is full: the line, in plan.run.
            call = functools.partial(
                super().execute, tool_call_id, params, ctx=ctx, approver=approver, grace=grace
            )
            return await self._plan.run(call, None, None, None)  # type: ignore[union-attr]
        a.free -= 1
        if b is not None:
            b.free -= 1
            if c is not None:
                c.free -= 1
        context = ctx if ctx is not None else self._context
        try:
            raw = await self._execute(tool_call_id, params, discard_update, context, _NEVER)
        except BaseException as exc:
            if belongs_to_caller(exc):
                raise
            return self._outcome(None, exc)
        finally:
            a.free += 1
            if a.waiters:
                a.wake()
            if b is not None:
                b.free += 1
                if b.waiters:
                    b.wake()
                if c is not None:
                    c.free += 1
                    if c.waiters:
                        c.wake()
        return text_result(raw) if type(raw) is str else self._outcome(raw, None)


class _OneCapAdapter(_GovernedAdapter):
    """A governed adapter whose policy is one cap kept in this process and nothing else: the
    inline path of :class:`_GovernedAdapter` for one gate, without its checks for more."""

    __slots__ = ()

    @_keyword_options
    async def execute(
        self,
        tool_call_id: str,
        params: Any,
        _keywords: _Keywords = _KEYWORDS,
        signal: AbortSignal | None = None,
        on_update: UpdateCallback | None = None,
        ctx: ToolContext | None = None,
        timeout: float | None = None,
        approver: Approver | None = None,
        grace: float | None = None,
    ) -> ToolResult:
        if _keywords is not _KEYWORDS:
            raise _positional_options(_keywords)
        gate: MemoryGate = self._gate  # type: ignore[assignment]
        if signal is None and on_update is None and timeout is None:
            fast_check = self._fast_check
            try:
                valid = fast_check(params)  # type: ignore[misc]  # None before the first call
            except Exception:
                valid = False
            if valid and gate.free > 0:
                gate.free -= 1
                context = ctx if ctx is not None else self._context
                try:
                    raw = await self._execute(tool_call_id, params, discard_update, context, _NEVER)
                except BaseException as exc:
                    if belongs_to_caller(exc):
                        raise
                    return self._outcome(None, exc)
                finally:
                    gate.free += 1
                    if gate.waiters:
                        gate.wake()
                return text_result(raw) if type(raw) is str else self._outcome(raw, None)
        return await super().execute(  # the full check, the line, or the options' path
            tool_call_id,
            params,
            signal=signal,
            on_update=on_update,
            ctx=ctx,
            timeout=timeout,
            approver=approver,
            grace=grace,
        )


class _CachingAdapter(_GovernedAdapter):
    """A governed adapter of a tool the in-memory cache keeps, with orjson: its first step
    looks the call up under the caller, then the arguments' bytes as given
    (:meth:`~customtools.policy.MemoryCache.index`)."""

    __slots__ = ()

    @_keyword_options
    async def execute(
        self,
        tool_call_id: str,
        params: Any,
        _keywords: _Keywords = _KEYWORDS,
        signal: AbortSignal | None = None,
        on_update: UpdateCallback | None = None,
        ctx: ToolContext | None = None,
        timeout: float | None = None,
        approver: Approver | None = None,
        grace: float | None = None,
    ) -> ToolResult:
        if _keywords is not _KEYWORDS:
            raise _positional_options(_keywords)
        # An entry is (result, expiry, ...) of this tool's current digest (_backends.Entry).
        aliases, dumps, options = self._hits  # type: ignore[misc]
        forms = aliases.get((ctx if ctx is not None else self._context).caller)
        if forms is not None:
            try:
                entry = forms.get(dumps(params, None, options))
            except TypeError:  # no JSON form: the full path says what to do
                entry = None
            if entry is not None and entry[1] > _monotonic():
                return entry[0]  # type: ignore[no-any-return]
        return await super().execute(
            tool_call_id,
            params,
            signal=signal,
            on_update=on_update,
            ctx=ctx,
            timeout=timeout,
            approver=approver,
            grace=grace,
        )


# -- observation -----------------------------------------------------------------------------------


class _ObservedAdapter(CustomToolAdapter):
    """The adapter of a tool an observer watches (see :mod:`customtools._observe`): the same
    call, between the observer's start and finish hooks."""

    __slots__ = ()  # its _watcher is the base's slot: a host's slotted subclass can sit above

    async def execute(  # type: ignore[override]  # its options are keyword-only (_Keywords)
        self, tool_call_id: str, params: Any, **options: Any
    ) -> ToolResult:
        # **options: whatever CustomToolAdapter.execute takes, passed through unchanged.
        try:
            call = self._watcher.start(tool_call_id)
        except Exception:  # an observer never breaks a call
            _log.exception("the observer of tool %r failed to start a call", self._name)
            return await super().execute(tool_call_id, params, **options)
        approver = options.get("approver")
        asked = approver if approver is not None else self._approver
        if self._asks and asked is not None:
            options["approver"] = _observe.observed_approver(call, asked)
        context = options.get("ctx") or self._context
        if isinstance(context, ToolContext) and (context.input_handler or context.sampler):
            # Talk-back waits are recorded too: the form a tool asks, the host model it samples.
            handler: Any = context.input_handler
            sampler: Any = context.sampler
            # (An Unanswerable is kept as it is: it marks that nobody can answer.)
            if handler is not None and not isinstance(handler, Unanswerable):
                handler = _observe.observed_wait(call, "input", handler)
            if sampler is not None and not isinstance(sampler, Unanswerable):
                sampler = _observe.observed_wait(call, "sampling", sampler)
            options["ctx"] = dataclasses.replace(context, input_handler=handler, sampler=sampler)
        try:
            result = await super().execute(tool_call_id, params, **options)
        except BaseException as exc:
            _finish(call, None, exc)
            raise
        _finish(call, result, None)
        return result


def _finish(call: _observe.CallObservation, result: ToolResult | None, error: Any) -> None:
    try:
        call.finish(result, error)
    except Exception:
        _log.exception("a call observer failed to finish a call")


_BENEATH: dict[tuple[type, type], type] = {}


def _beneath(cls: type[CustomToolAdapter], kind: type[CustomToolAdapter]) -> type[Any]:
    """A host's subclass ``cls`` of the adapter over ``kind`` (observed, governed or both):
    its methods first, then ``kind``'s, so its ``super().execute`` is governed."""
    made = _BENEATH.get((cls, kind))
    if made is None:
        namespace = {
            "__slots__": (),
            "__module__": cls.__module__,
            "__qualname__": cls.__qualname__,
        }
        made = _BENEATH[cls, kind] = type(cls.__name__, (cls, kind), namespace)
    return made


class _ObservedGovernedAdapter(_ObservedAdapter, _GovernedAdapter):  # type: ignore[misc]
    """Observed and governed: the observer's span holds the policy's waits and retries."""

    __slots__ = ()
