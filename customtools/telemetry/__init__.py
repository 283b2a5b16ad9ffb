"""OpenTelemetry traces and metrics for tool calls and loads (the ``otel`` extra).

``pip install 'customtools[otel]'`` adds ``opentelemetry-api`` only; the application brings the
SDK and exporters. Call :func:`instrument` once, after configuring the SDK::

    from customtools.telemetry import instrument

    instrument()  # or instrument(tracer_provider=..., meter_provider=...)

Every tool call then gets an ``execute_tool {tool}`` span following the GenAI semantic
conventions (or enriches the span an enclosing layer already opened for it), load steps get
spans, and call durations and outcomes are recorded as metrics. The guide is
``docs/observability.md``. Importing this package does not import OpenTelemetry.
"""

from __future__ import annotations

from customtools._public import rehome as _rehome
from customtools.telemetry._otel import OpenTelemetryObserver, classify, instrument, uninstrument

__all__ = ["OpenTelemetryObserver", "classify", "instrument", "uninstrument"]

_rehome(globals(), __name__, __all__)
