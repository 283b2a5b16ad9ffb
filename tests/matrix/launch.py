"""The capability matrix's server: one process per execution mode, serving the pack over
stdio, stateful HTTP and stateless HTTP at once, with OpenTelemetry configured.

``python launch.py MODE PROJECT`` serves ``PROJECT/tools/matrix_pack.py`` three times with
``customtools.mcp.serve`` (what ``customtools serve`` runs): over stdio (this process's
stdin and stdout, as an MCP client that starts it expects), and over streamable HTTP,
stateful and stateless, each on a free loopback port it prints on stderr as
``matrix: stateful URL`` and ``matrix: stateless URL``. ``MODE`` is the execution mode:
``inprocess``, ``isolated`` (an ``IsolationPool``), ``sandboxed`` (the pool with
``sandbox=True``, as ``serve --sandbox``) or ``reloaded`` (``reload=True``, as ``serve
--reload``). Every server runs under one execution policy (``serve --policy``). Finished
spans are appended to ``PROJECT/spans.jsonl`` as JSON lines through a global tracer
provider and ``customtools.telemetry.instrument()``: what ``opentelemetry-instrument
customtools serve`` does in a deployment.

One process instead of three keeps the matrix cheap: most of a server's cost is starting
Python and importing the MCP SDK. The process ends when the stdio client leaves.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult

BUDGET = 20_000
"""The result budget of the host's one execution policy (``Policy(max_result_bytes=...)``),
set on every server here and on every entry point in ``entries.py``."""


class JsonLines(SpanExporter):
    """Appends each finished span to a file, one JSON object a line."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        with self.path.open("a", encoding="utf-8") as out:
            for span in spans:
                context = span.get_span_context()
                record = {
                    "name": span.name,
                    "trace": f"{context.trace_id:032x}",
                    "attributes": {k: str(v) for k, v in (span.attributes or {}).items()},
                    "events": [event.name for event in span.events],
                }
                out.write(json.dumps(record) + "\n")
        return SpanExportResult.SUCCESS


async def serve_all(mode: str, project: Path) -> None:
    from contextlib import AsyncExitStack

    import anyio

    from customtools.mcp import serve
    from customtools.policy import Policy

    options: dict[str, Any] = {
        "cwd": str(project),
        "entry_points": False,
        "policy": Policy(max_result_bytes=BUDGET),
    }
    async with AsyncExitStack() as stack:
        if mode in ("isolated", "sandboxed"):
            from customtools.isolation import IsolationPool

            # Outlives the servers: their tools hear the session's shutdown from the workers.
            pool = await stack.enter_async_context(IsolationPool())
            options.update(isolation=pool, sandbox=mode == "sandboxed")
        options["reload"] = mode == "reloaded"
        pack = [str(project / "tools" / "matrix_pack.py")]
        group = await stack.enter_async_context(anyio.create_task_group())
        for kind in ("stateful", "stateless"):

            def ready(url: str, kind: str = kind) -> None:
                print(f"matrix: {kind} {url}", file=sys.stderr, flush=True)

            group.start_soon(
                lambda kind=kind, ready=ready: serve(
                    pack,
                    transport="http",
                    host="127.0.0.1",
                    port=0,
                    stateless=kind == "stateless",
                    on_ready=ready,
                    **options,
                )
            )
        await serve(pack, transport="stdio", **options)  # until the client leaves
        group.cancel_scope.cancel()


def main() -> int:
    mode, project = sys.argv[1], Path(sys.argv[2])
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(JsonLines(project / "spans.jsonl")))
    trace.set_tracer_provider(provider)

    import anyio

    from customtools.telemetry import instrument

    instrument()
    anyio.run(serve_all, mode, project)
    return 0


if __name__ == "__main__":
    sys.exit(main())
