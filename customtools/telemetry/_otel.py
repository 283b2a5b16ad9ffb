"""The OpenTelemetry observer: spans and metrics for tool calls and load steps.

Uses only ``opentelemetry-api`` (the ``otel`` extra), imported when an observer is built.
Providers and exporters are the application's: this module never configures them.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING, Any

import customtools._observe as _observe
import customtools.telemetry._names as n
from customtools._error_results import ERROR_RESULTS, Kind
from customtools._policy import POLICY_META_KEY

if TYPE_CHECKING:
    from customtools._content import ToolResult
    from customtools._tool import CustomTool

__all__ = ["OpenTelemetryObserver", "instrument", "uninstrument"]

_log = logging.getLogger("customtools.telemetry")


def _api() -> Any:
    try:
        from opentelemetry import context, metrics, propagate, trace
    except ImportError as exc:
        raise ImportError(
            "customtools.telemetry needs the OpenTelemetry API, which is not installed:"
            " pip install 'customtools[otel]'"
        ) from exc
    return context, metrics, propagate, trace


OTHER = "_OTHER"
"""``error.type`` of a failure whose kind and code are not in the error-results table (the
conventions' fallback value): a tool's own ``details`` and exception names never reach it."""

_KINDS = frozenset(kind for kind in ERROR_RESULTS if kind != Kind.TOOL_RAISED)
_CODES = frozenset(code for _, codes in ERROR_RESULTS.values() for code in codes)


def classify(result: ToolResult | None, error: BaseException | None) -> tuple[str, str | None]:
    """``(outcome, error.type)`` of a call's result, or of the exception that ended it.

    Outcomes: ``ok``, ``invalid_arguments``, ``error``, ``timeout``, ``cancelled``,
    ``refused``. ``error.type`` is ``None`` for ``ok``; otherwise a code or kind of the
    error-results table (``docs/errors.md``), or ``_OTHER``: a result's ``details`` are the
    tool's to fill, so nothing outside the table is recorded (see ``docs/observability.md``).
    """
    if result is None:
        # Only the caller's own cancellation (or Ctrl-C) propagates out of the adapter.
        return "cancelled", type(error).__qualname__ if error is not None else OTHER
    if not result.is_error:
        return "ok", None
    details = result.details if isinstance(result.details, Mapping) else {}
    kind = details.get("error")
    if details.get("timed_out") is True:
        return "timeout", "timeout"
    if details.get("cancelled") is True:
        return "cancelled", "cancelled"
    if kind == Kind.ARGUMENTS:
        return "invalid_arguments", Kind.ARGUMENTS
    code = details.get("code")
    # Only strings can be in the table (a tool's details may hold anything, unhashable too).
    if isinstance(code, str) and code in _CODES:
        known = code
    elif isinstance(kind, str) and kind in _KINDS:
        known = kind
    else:
        known = OTHER
    if kind == Kind.APPROVAL_DENIED:
        return "refused", known
    return "error", known


class _Call:
    """One observed call: its span (own or enclosing), its context token, its clock."""

    __slots__ = ("_enriched", "_observer", "_span", "_started", "_token", "_tool")

    def __init__(
        self, observer: OpenTelemetryObserver, tool: _Tool, span: Any, token: Any, enriched: bool
    ) -> None:
        self._observer = observer
        self._tool = tool
        self._span = span
        self._token = token
        self._enriched = enriched
        self._started = time.perf_counter()

    def waiting(self, what: str) -> AbstractContextManager[object]:
        return self._observer._wait(what, self._tool.name)

    def finish(self, result: ToolResult | None, error: BaseException | None) -> None:
        elapsed = time.perf_counter() - self._started
        outcome, error_type = classify(result, error)
        span = self._span
        observer = self._observer
        decisions: list[str] = []
        try:
            if result is not None:
                decisions = _record_policy(observer, span, self._tool.name, result)
            if span.is_recording():
                span.set_attribute(n.OUTCOME, outcome)
                if error_type is not None:
                    details = result.details if result is not None else None
                    details = details if isinstance(details, Mapping) else {}
                    if outcome == "invalid_arguments":
                        violations = details.get("violations")
                        count = len(violations) if isinstance(violations, list) else 0
                        span.add_event(n.EVENT_INVALID_ARGUMENTS, {n.VIOLATIONS: count})
                    elif outcome in ("cancelled", "timeout"):
                        reason = details.get("reason") if observer._cancel_reason else None
                        attributes = {n.CANCEL_REASON: reason} if isinstance(reason, str) else {}
                        span.add_event(n.EVENT_CANCELLED, attributes)
                    span.set_attribute(n.ERROR_TYPE, error_type)
                    # The description is the type, never the tool's text (it may carry data).
                    span.set_status(observer._status_error(error_type))
        finally:
            if self._token is not None:
                observer._context.detach(self._token)
            if not self._enriched:
                span.end()
        attributes = {n.TOOL_NAME: self._tool.name, n.OUTCOME: outcome}
        if error_type is not None:
            attributes[n.ERROR_TYPE] = error_type
        observer._duration.record(elapsed, attributes)
        observer._calls.add(1, attributes)
        for decision in decisions:
            observer._decisions.add(1, {n.TOOL_NAME: self._tool.name, n.POLICY_DECISION: decision})


def _policy_record(result: ToolResult) -> Mapping[str, Any] | None:
    """What the execution policy did to the call (its ``_meta`` record, or the details of
    an error result it built)."""
    record = (result.meta or {}).get(POLICY_META_KEY)
    if isinstance(record, Mapping):
        return record
    details = result.details if isinstance(result.details, Mapping) else {}
    record = details.get("policy")
    return record if isinstance(record, Mapping) else None


def _record_policy(
    observer: OpenTelemetryObserver, span: Any, tool: str, result: ToolResult
) -> list[str]:
    """The policy's decisions as span attributes (codes and numbers only) and the queue
    time metric; returns the decisions to count."""
    record = _policy_record(result)
    if record is None:
        return []
    decisions = []
    attributes: dict[str, Any] = {}  # codes and numbers only
    queued = record.get("queued")
    if isinstance(queued, (int, float)):
        decisions.append("queued")
        observer._queue.record(float(queued), {n.TOOL_NAME: tool})
        attributes[n.POLICY_QUEUED] = float(queued)
    if isinstance(record.get("cache"), str):
        attributes[n.POLICY_CACHE] = record["cache"]
        if record["cache"] == "hit":
            decisions.append("cache_hit")
    if isinstance(record.get("retries"), int):
        decisions.append("retried")
        attributes[n.POLICY_RETRIES] = record["retries"]
    trimmed = record.get("trimmed")
    if isinstance(trimmed, Mapping) and isinstance(trimmed.get("bytes"), int):
        decisions.append("trimmed")
        attributes[n.POLICY_TRIMMED] = trimmed["bytes"]
    details = result.details if isinstance(result.details, Mapping) else {}
    if details.get("error") == Kind.POLICY_REFUSED:
        decisions.append("refused")
    if attributes and span.is_recording():
        span.set_attributes(attributes)
    return decisions


class _Tool:
    """The :class:`~customtools._observe.ToolObserver` of one tool."""

    __slots__ = ("_attributes", "_observer", "_span_name", "name")

    def __init__(self, observer: OpenTelemetryObserver, tool: CustomTool) -> None:
        self._observer = observer
        self.name = tool.name
        self._span_name = f"{n.EXECUTE_TOOL} {tool.name}"
        self._attributes = {
            n.OPERATION_NAME: n.EXECUTE_TOOL,
            n.TOOL_NAME: tool.name,
            n.TOOL_TYPE: "function",
        }

    def start(self, tool_call_id: str) -> _Call:
        observer = self._observer
        trace = observer._trace
        current = trace.get_current_span()
        if observer._enrich and _is_enclosing_tool_span(current):
            # The MCP SDK's server span or a framework's execute_tool span already traces this
            # call: add what only customtools knows to it instead of nesting a duplicate.
            current.set_attribute(n.TOOL_CALL_ID, tool_call_id)
            current.set_attribute(n.TOOL_TYPE, "function")
            current.set_attribute(n.ENRICHED, True)
            return _Call(observer, self, current, None, True)
        attributes = dict(self._attributes)
        attributes[n.TOOL_CALL_ID] = tool_call_id
        span = observer._tracer.start_span(
            self._span_name, kind=trace.SpanKind.INTERNAL, attributes=attributes
        )
        token = observer._context.attach(trace.set_span_in_context(span))
        return _Call(observer, self, span, token, False)


def _is_enclosing_tool_span(span: Any) -> bool:
    """Whether ``span`` is a live ``execute_tool`` span opened by another layer.

    Only SDK spans expose their attributes; a span this process cannot read is never enriched.
    A span customtools already enriched or opened (a tool calling another tool) is not reused.
    """
    if not span.is_recording():
        return False
    attributes = getattr(span, "attributes", None)
    if not isinstance(attributes, Mapping):
        return False
    if attributes.get(n.OPERATION_NAME) != n.EXECUTE_TOOL or n.ENRICHED in attributes:
        return False
    scope = getattr(span, "instrumentation_scope", None)
    return getattr(scope, "name", None) != n.INSTRUMENTATION_NAME


class _Step:
    """A load step's span, current while the step runs."""

    __slots__ = ("_observer", "_span", "_token")

    def __init__(self, observer: OpenTelemetryObserver, span: Any) -> None:
        self._observer = observer
        self._span = span
        self._token: Any = None

    def __enter__(self) -> _Step:
        self._token = self._observer._context.attach(
            self._observer._trace.set_span_in_context(self._span)
        )
        return self

    def __exit__(self, exc_type: Any, exc: BaseException | None, tb: Any) -> None:
        try:
            if exc is not None and self._span.is_recording():
                self.failed(type(exc).__qualname__)
        finally:
            self._observer._context.detach(self._token)
            self._span.end()

    def set(self, key: str, value: str | int | float | bool) -> None:
        self._span.set_attribute(key, value)

    def failed(self, code: str) -> None:
        self._span.set_attribute(n.ERROR_TYPE, code)
        self._span.set_status(self._observer._status_error(code))


class OpenTelemetryObserver:
    """Traces tool calls and load steps, and records call metrics, with OpenTelemetry.

    Register one with :func:`instrument` (or ``customtools._observe.set_observer``). Spans:
    ``execute_tool {tool}`` per call (or the enclosing layer's span, enriched), load steps
    (``customtools.discover``, ``customtools.trust``, ``customtools.load_module`` with
    ``customtools.import`` and ``customtools.factory``, ``customtools.isolation.worker_start``).
    Metrics: ``customtools.tool.call.duration`` (histogram, seconds) and
    ``customtools.tool.calls`` (counter), both by tool, outcome and ``error.type``.

    Args:
        tracer_provider: the provider to use (default: the global one).
        meter_provider: the meter provider to use (default: the global one).
        enrich: when a call runs inside another layer's ``execute_tool`` span (the MCP
            SDK's server span, a framework's tool span), add customtools' attributes to that
            span instead of opening a nested one.
        record_cancel_reason: add the abort's reason (the host's text, which may carry
            anything) to the ``customtools.cancelled`` event; off by default.
    """

    def __init__(
        self,
        *,
        tracer_provider: Any = None,
        meter_provider: Any = None,
        enrich: bool = True,
        record_cancel_reason: bool = False,
    ) -> None:
        from customtools import __version__

        context, metrics, propagate, trace = _api()
        self._context = context
        self._propagate = propagate
        self._trace = trace
        self._enrich = enrich
        self._cancel_reason = record_cancel_reason
        self._tracer_provider = tracer_provider
        self._meter_provider = meter_provider
        self._tracer = trace.get_tracer(
            n.INSTRUMENTATION_NAME, __version__, tracer_provider=tracer_provider
        )
        meter = metrics.get_meter(n.INSTRUMENTATION_NAME, __version__, meter_provider)
        self._duration = meter.create_histogram(
            n.CALL_DURATION, unit="s", description="Duration of customtools tool calls."
        )
        self._calls = meter.create_counter(
            n.CALL_COUNT, unit="{call}", description="customtools tool calls, by outcome."
        )
        self._queue = meter.create_histogram(
            n.QUEUE_DURATION,
            unit="s",
            description="Seconds calls waited for the execution policy's caps or rate.",
        )
        self._decisions = meter.create_counter(
            n.POLICY_DECISIONS,
            unit="{decision}",
            description="Execution policy decisions: queued, cache_hit, retried, trimmed, refused.",
        )

    def _status_error(self, description: str) -> Any:
        return self._trace.Status(self._trace.StatusCode.ERROR, description)

    def enabled(self) -> bool:
        """Whether anything would be recorded: a provider was given, or one is set globally.

        While neither the global tracer provider nor the global meter provider is set (the API
        without an SDK), adapters are left unobserved, so calls cost nothing.
        """
        if self._tracer_provider is not None or self._meter_provider is not None:
            return True
        if not isinstance(self._trace.get_tracer_provider(), self._trace.ProxyTracerProvider):
            return True
        from opentelemetry import metrics

        # The API's placeholder until an SDK sets a provider; it has no public name.
        return type(metrics.get_meter_provider()).__name__ != "_ProxyMeterProvider"

    def tool_observer(self, tool: CustomTool) -> _Tool | None:
        """The observer of ``tool``'s calls (``None`` while nothing would be recorded)."""
        return _Tool(self, tool) if self.enabled() else None

    def load_step(
        self, name: str, attributes: Mapping[str, str | int | float | bool]
    ) -> AbstractContextManager[_observe.LoadStep]:
        """A span around one load step, current while it runs."""
        span = self._tracer.start_span(name, attributes=dict(attributes))
        return _Step(self, span)

    def inject(self) -> dict[str, str]:
        """The current trace context as W3C headers (empty without a recording span)."""
        carrier: dict[str, str] = {}
        self._propagate.inject(carrier)
        return carrier

    def attach(self, carrier: Mapping[str, str]) -> AbstractContextManager[object]:
        """Make the context carried in W3C headers current, unless a valid span already is."""
        return self._attached(dict(carrier))

    @contextmanager
    def _attached(self, carrier: dict[str, str]) -> Iterator[object]:
        if self._trace.get_current_span().get_span_context().is_valid:
            yield None  # a span is current: it read the same carrier, or is nearer the call
            return
        token = self._context.attach(self._propagate.extract(carrier))
        try:
            yield token
        finally:
            self._context.detach(token)

    def export_spans(self, spans: list[Mapping[str, Any]]) -> None:
        """Export spans an isolation worker recorded during the current call, as children of
        the call's span (their own nesting kept). Spans of another trace are dropped: a
        worker cannot write into traces it was not given."""
        trace = self._trace
        call = trace.get_current_span()
        context = call.get_span_context()
        if not context.is_valid:
            return
        made: dict[Any, Any] = {}
        status = {"OK": trace.StatusCode.OK, "ERROR": trace.StatusCode.ERROR}
        for data in sorted(spans, key=lambda data: (data["start"], -data["end"])):
            if data["traceId"] != f"{context.trace_id:032x}":
                continue
            tracer = trace.get_tracer(str(data["scope"]), tracer_provider=self._tracer_provider)
            span = tracer.start_span(
                str(data["name"]),
                context=trace.set_span_in_context(made.get(data["parentId"], call)),
                kind=getattr(trace.SpanKind, str(data["kind"]), trace.SpanKind.INTERNAL),
                attributes=data["attributes"],
                start_time=int(data["start"]),
            )
            for name, timestamp, attributes in data["events"]:
                span.add_event(str(name), attributes, int(timestamp))
            code, description = data["status"]
            if code in status:
                span.set_status(trace.Status(status[code], description))
            span.end(end_time=int(data["end"]))
            made[data["spanId"]] = span

    @contextmanager
    def _wait(self, what: str, tool_name: str) -> Iterator[object]:
        with self._tracer.start_as_current_span(
            f"{n.SPAN_WAIT} {what}", attributes={n.TOOL_NAME: tool_name}
        ) as span:
            yield span


def instrument(
    *,
    tracer_provider: Any = None,
    meter_provider: Any = None,
    enrich: bool = True,
    record_cancel_reason: bool = False,
) -> OpenTelemetryObserver:
    """Trace and measure tool calls and loads with OpenTelemetry from now on.

    Call it after the application configured its SDK: adapters built before, and adapters
    built while neither a provider was passed nor a global one is set, stay unobserved
    (nothing is recorded, and a call costs nothing extra). Calling it again replaces the
    earlier observer for adapters built afterwards.

    Args:
        tracer_provider: the tracer provider (default: the global one).
        meter_provider: the meter provider (default: the global one).
        enrich: enrich an enclosing ``execute_tool`` span instead of nesting one.
        record_cancel_reason: record an abort's reason (opt-in: it is the host's text).

    Returns:
        The registered observer.

    Raises:
        ImportError: ``opentelemetry-api`` is not installed (``pip install 'customtools[otel]'``).
    """
    observer = OpenTelemetryObserver(
        tracer_provider=tracer_provider,
        meter_provider=meter_provider,
        enrich=enrich,
        record_cancel_reason=record_cancel_reason,
    )
    _observe.set_observer(observer)
    return observer


def uninstrument() -> None:
    """Stop observing adapters built and loads run from now on."""
    _observe.set_observer(None)
