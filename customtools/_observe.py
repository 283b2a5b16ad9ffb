"""Hook points for observing tool calls and loads; implementations live in the edges.

The adapter and the loader call these hooks; :mod:`customtools.telemetry` registers an
OpenTelemetry implementation with :func:`set_observer`. Nothing here imports a tracing
library.

Cost: with no observer registered (the default), an adapter is a plain
:class:`~customtools.CustomToolAdapter` (the check is made once, when the adapter is built, so a
call pays nothing), and a load step is one global read and a shared no-op context manager.
An observer may also decline a tool (:meth:`Observer.tool_observer` returns ``None``), for
example when no tracer provider is configured, with the same nil per-call cost.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Protocol

from customtools._format import logger

if TYPE_CHECKING:
    from customtools._content import ToolResult
    from customtools._tool import CustomTool

__all__ = [
    "STEP_DISCOVER",
    "STEP_FACTORY",
    "STEP_IMPORT",
    "STEP_MODULE",
    "STEP_TRUST",
    "STEP_WORKER_START",
    "TRACE_KEYS",
    "CallObservation",
    "LoadStep",
    "Observer",
    "ToolObserver",
    "current_observer",
    "export_spans",
    "inject_context",
    "load_step",
    "recorded_spans",
    "set_observer",
    "use_context",
]

# The load steps the loader reports (span names of the OpenTelemetry observer).
STEP_DISCOVER = "customtools.discover"
STEP_TRUST = "customtools.trust"
STEP_MODULE = "customtools.load_module"
STEP_IMPORT = "customtools.import"
STEP_FACTORY = "customtools.factory"
STEP_WORKER_START = "customtools.isolation.worker_start"


class CallObservation(Protocol):
    """One observed tool call, from :meth:`ToolObserver.start` to :meth:`finish`.

    Started and finished in the caller's task (the adapter's ``execute``); between the two,
    the call's trace context is current, so tool code, sync-tool threads and isolation proxies
    see it.
    """

    def waiting(self, what: str) -> AbstractContextManager[object]:
        """A context manager around a wait inside the call (``"approval"``)."""

    def finish(self, result: ToolResult | None, error: BaseException | None) -> None:
        """The call ended with ``result``, or with ``error`` propagating to the caller."""


class ToolObserver(Protocol):
    """Observes the calls of one tool (made once per adapter)."""

    def start(self, tool_call_id: str) -> CallObservation:
        """A call of the tool is starting."""


class LoadStep(Protocol):
    """One step of a load (discovery, trust, a module's import or factory, a worker start)."""

    def set(self, key: str, value: str | int | float | bool) -> None:
        """Record an attribute of the step."""

    def failed(self, code: str) -> None:
        """The step failed with a load error of this ``code`` (never its message, which may
        carry what the failing module put in its exception)."""


class Observer(Protocol):
    """What :func:`set_observer` takes: the factory of every per-tool and per-step hook."""

    def tool_observer(self, tool: CustomTool) -> ToolObserver | None:
        """The observer of ``tool``'s calls, or ``None`` to leave them unobserved."""

    def load_step(
        self, name: str, attributes: Mapping[str, str | int | float | bool]
    ) -> AbstractContextManager[LoadStep]:
        """A context manager around one load step called ``name``."""

    def inject(self) -> dict[str, str]:
        """The current trace context as W3C headers (``traceparent``, ...), or ``{}``."""

    def attach(self, carrier: Mapping[str, str]) -> AbstractContextManager[object]:
        """A context manager making the context in ``carrier`` current, unless a valid span
        already is."""


class _NullStep:
    """The step of an unobserved load: records nothing, reusable, its own context manager."""

    __slots__ = ()

    def __enter__(self) -> _NullStep:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def set(self, key: str, value: str | int | float | bool) -> None:
        return None

    def failed(self, code: str) -> None:
        return None


_NULL_STEP = _NullStep()
_log = logger("customtools.telemetry")
_observer: Observer | None = None


def set_observer(observer: Observer | None) -> Observer | None:
    """Register ``observer`` for adapters built and loads run from now on; return the old one.

    ``None`` unregisters. Adapters built earlier keep the observer they were built with.
    """
    global _observer
    previous, _observer = _observer, observer
    return previous


def current_observer() -> Observer | None:
    """The registered observer, or ``None``."""
    return _observer


class _GuardedStep:
    """An observer's step whose own failures never reach the load (nor hide its errors)."""

    __slots__ = ("_manager", "_step")

    def __init__(self, manager: AbstractContextManager[LoadStep]) -> None:
        self._manager = manager
        self._step: LoadStep = _NULL_STEP

    def __enter__(self) -> _GuardedStep:
        try:
            self._step = self._manager.__enter__()
        except Exception:
            self._manager = _NULL_STEP
        return self

    def __exit__(self, exc_type: Any, exc: BaseException | None, tb: Any) -> None:
        with contextlib.suppress(Exception):
            self._manager.__exit__(exc_type, exc, tb)  # never suppresses the load's exception

    def set(self, key: str, value: str | int | float | bool) -> None:
        with contextlib.suppress(Exception):
            self._step.set(key, value)

    def failed(self, code: str) -> None:
        with contextlib.suppress(Exception):
            self._step.failed(code)


def load_step(
    name: str, attributes: Mapping[str, str | int | float | bool] | None = None
) -> AbstractContextManager[LoadStep]:
    """The registered observer's context manager for a load step, or a shared no-op one."""
    observer = _observer
    if observer is None:
        return _NULL_STEP
    try:
        return _GuardedStep(observer.load_step(name, attributes or {}))
    except Exception:  # an observer never breaks a load
        return _NULL_STEP


def inject_context() -> dict[str, str]:
    """The current trace context as W3C headers for a boundary we own (``{}`` when none)."""
    observer = _observer
    if observer is None:
        return {}
    try:
        return observer.inject()
    except Exception:
        return {}


TRACE_KEYS = ("traceparent", "tracestate", "baggage")
"""The W3C trace-context keys carried in a message or in MCP's ``_meta`` (SEP-414)."""


def use_context(carrier: Mapping[str, Any] | None) -> AbstractContextManager[object]:
    """Make the trace context in ``carrier`` current, unless a valid span already is.

    ``carrier`` is a message's trace headers or an MCP request's ``_meta`` (only the W3C keys
    with string values are read). A span already current wins: it was opened by a layer that
    read the same carrier (the MCP SDK's server span) or is nearer the call.

    With no observer registered (an isolation worker), the OpenTelemetry API is used directly
    when it is installed, so tool code in the worker sees the caller's trace: this is the one
    place below the edges that touches it, only when a context actually crossed a boundary.
    """
    if not carrier:
        return _NULL_STEP
    headers = {key: value for key in TRACE_KEYS if isinstance(value := carrier.get(key), str)}
    if "traceparent" not in headers:
        return _NULL_STEP
    observer = _observer
    try:
        if observer is not None:
            return observer.attach(headers)
        return _api_context(headers)
    except Exception:
        return _NULL_STEP


@contextlib.contextmanager
def _api_context(carrier: Mapping[str, str]) -> Iterator[object]:
    try:
        from opentelemetry import context, propagate
    except ImportError:
        yield None
        return
    from opentelemetry import trace

    if trace.get_current_span().get_span_context().is_valid:
        yield None
        return
    token = context.attach(propagate.extract(dict(carrier)))
    try:
        yield token
    finally:
        context.detach(token)


MAX_SPANS = 1000
"""Most spans an isolation worker records for one call (the rest are not exported)."""
_sink: contextvars.ContextVar[list[dict[str, Any]] | None] = contextvars.ContextVar(
    "customtools_span_sink", default=None
)
_recording: list[bool] = []  # whether this process records spans for the host (decided once)


@contextlib.contextmanager
def recorded_spans(carrier: Mapping[str, Any] | None) -> Iterator[list[dict[str, Any]]]:
    """In an isolation worker, around a call: the spans tool code ends in this call (and its
    threads), as data for the host to export (:func:`export_spans`).

    Spans are recorded only when the call carries a trace context (the host observes it) and
    nobody configured an OpenTelemetry SDK in the worker: the SDK (``opentelemetry-sdk``, when
    installed) is then set up here, once, with nothing but this recorder behind it.
    """
    spans: list[dict[str, Any]] = []
    if not carrier or not (_recording[0] if _recording else _record()):
        yield spans
        return
    token = _sink.set(spans)
    try:
        yield spans
    finally:
        _sink.reset(token)


def _record() -> bool:
    try:
        from opentelemetry import trace
        from opentelemetry.sdk.trace import SpanProcessor, TracerProvider
    except ImportError:
        _recording.append(False)
        return False
    if not isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider):
        _recording.append(False)  # the worker's own SDK set-up exports its spans
        return False

    class Recorder(SpanProcessor):
        def on_end(self, span: Any) -> None:
            sink = _sink.get()
            if sink is not None and len(sink) < MAX_SPANS:
                sink.append(_span_data(span))

    provider = TracerProvider(shutdown_on_exit=False)
    provider.add_span_processor(Recorder())
    trace.set_tracer_provider(provider)
    _recording.append(True)
    return True


def _span_data(span: Any) -> dict[str, Any]:
    parent = span.parent
    return {
        "name": span.name,
        "kind": span.kind.name,
        "scope": span.instrumentation_scope.name if span.instrumentation_scope else "",
        "traceId": f"{span.context.trace_id:032x}",
        "spanId": f"{span.context.span_id:016x}",
        "parentId": f"{parent.span_id:016x}" if parent is not None else None,
        "start": span.start_time,
        "end": span.end_time,
        "attributes": dict(span.attributes or {}),
        "status": [span.status.status_code.name, span.status.description],
        "events": [[e.name, e.timestamp, dict(e.attributes or {})] for e in span.events],
    }


def export_spans(spans: Any) -> None:
    """Export through the registered observer the spans an isolation worker recorded during
    the current call (:func:`recorded_spans`), under the call's span; never raises."""
    exporter = getattr(_observer, "export_spans", None)
    if exporter is not None and isinstance(spans, list) and spans:
        try:
            exporter(spans)
        except Exception:  # an observer, or a worker's malformed spans, never break a call
            _log.debug("spans from a worker were not exported", exc_info=True)


def observed_wait(
    call: CallObservation,
    what: str,
    wait: Callable[[Any], Awaitable[Any]],
) -> Callable[[Any], Awaitable[Any]]:
    """``wait`` (an approver, an input handler, a sampler), with its time recorded on ``call``
    as the wait for ``what``."""

    async def waited(request: Any) -> Any:
        try:
            manager: Any = call.waiting(what)
        except Exception:  # an observer never breaks a call
            manager = _NULL_STEP
        with _GuardedStep(manager):
            return await wait(request)

    return waited


def observed_approver(
    call: CallObservation,
    approver: Callable[[Any], Awaitable[Any]],
) -> Callable[[Any], Awaitable[Any]]:
    """``approver``, with its wait recorded on ``call``."""
    return observed_wait(call, "approval", approver)
