"""Starts ``customtools serve`` for the capability matrix, with OpenTelemetry configured.

``python launch.py SPANS -- ARGS...`` runs ``customtools ARGS...`` (``serve ...``) after
setting a global tracer provider whose finished spans are appended to ``SPANS`` as JSON
lines, and ``customtools.telemetry.instrument()``: what ``opentelemetry-instrument customtools
serve`` does in a deployment.

``python launch.py SPANS --isolated -- serve PATH... [--stdio | --http HOST:PORT]
[--stateless] [--cwd DIR]`` serves through ``customtools.mcp.serve(isolation=IsolationPool())``
instead: the command has no flag for isolation without the sandbox.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any

from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult


class JsonLines(SpanExporter):
    """Appends each finished span to a file, one JSON object a line."""

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
                    "attributes": {k: str(v) for k, v in (span.attributes or {}).items()},
                    "events": [event.name for event in span.events],
                }
                out.write(json.dumps(record) + "\n")
        return SpanExportResult.SUCCESS


def serve_isolated(argv: list[str]) -> int:
    """``serve`` with every module in an isolation worker (no sandbox)."""
    import anyio

    from customtools.isolation import IsolationPool
    from customtools.mcp import serve

    parser = argparse.ArgumentParser(prog="launch.py --isolated")
    parser.add_argument("command", choices=["serve"])
    parser.add_argument("paths", nargs="*")
    parser.add_argument("--stdio", action="store_true")
    parser.add_argument("--http")
    parser.add_argument("--stateless", action="store_true")
    parser.add_argument("--cwd")
    parser.add_argument("--no-entry-points", action="store_true")
    args = parser.parse_intermixed_args(argv)
    options: dict[str, Any] = {"cwd": args.cwd, "entry_points": not args.no_entry_points}
    if args.http:
        host, _, port = args.http.rpartition(":")

        def ready(url: str) -> None:
            print(f"customtools serve: listening on {url}", file=sys.stderr, flush=True)

        options.update(
            transport="http", host=host, port=int(port), stateless=args.stateless, on_ready=ready
        )

    async def main() -> None:
        async with IsolationPool() as pool:
            await serve(args.paths, isolation=pool, **options)

    anyio.run(main)
    return 0


def main() -> int:
    spans, *rest = sys.argv[1:]
    isolated = rest[:1] == ["--isolated"]
    if isolated:
        rest = rest[1:]
    if rest[:1] == ["--"]:
        rest = rest[1:]
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(JsonLines(spans)))
    trace.set_tracer_provider(provider)

    from customtools.telemetry import instrument

    instrument()
    if isolated:
        return serve_isolated(rest)
    from customtools.cli import run

    return run(rest)


if __name__ == "__main__":
    sys.exit(main())
