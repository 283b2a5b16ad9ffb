"""A ``ToolServer`` over stdio with OpenTelemetry configured, for the telemetry tests.

``python traced_server.py MODE SPANS PACK...``: ``MODE`` is ``global`` (the SDK's provider set
globally, so the MCP SDK's own server span records) or ``explicit`` (a provider handed to
customtools only: the MCP SDK records nothing). Finished spans are appended to ``SPANS`` as
JSON lines.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence

import anyio
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult

from customtools import load_custom_tools
from customtools.mcp import ToolServer
from customtools.telemetry import instrument


class JsonLines(SpanExporter):
    def __init__(self, path: str) -> None:
        self.path = path

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        with open(self.path, "a", encoding="utf-8") as out:
            for span in spans:
                context = span.get_span_context()
                record = {
                    "name": span.name,
                    "trace": f"{context.trace_id:032x}",
                    "span": f"{context.span_id:016x}",
                    "parent": f"{span.parent.span_id:016x}" if span.parent else None,
                    "scope": span.instrumentation_scope.name
                    if span.instrumentation_scope
                    else None,
                    "attributes": dict(span.attributes or {}),
                }
                out.write(json.dumps(record) + "\n")
        return SpanExportResult.SUCCESS


def main() -> None:
    mode, spans, *pack = sys.argv[1:]
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(JsonLines(spans)))
    if mode == "global":
        trace.set_tracer_provider(provider)
        instrument()
    else:
        instrument(tracer_provider=provider)

    async def serve() -> None:
        result = await load_custom_tools(pack)
        await ToolServer([loaded.tool for loaded in result.tools]).run_stdio()

    anyio.run(serve)


if __name__ == "__main__":
    main()
