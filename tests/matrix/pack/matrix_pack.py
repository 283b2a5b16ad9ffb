"""The capability matrix's tool pack: one tool per capability (see tests/matrix/table.py).

Loaded in every execution mode and driven through every entry point. Tools that must tell
the test what happened where no result can (cancellation, timeouts) write a small JSON file
under ``marks/`` in the project (written whole, then renamed), the one directory the pack
may write when sandboxed.
"""

from __future__ import annotations

import json
import os
import uuid
from typing import Any

import anyio

from customtools import CustomTool, ImageContent, TextContent, ToolResult
from customtools.isolation import Permissions

PERMISSIONS = Permissions(write=["marks"])

VERSION = "1"

PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGA"
    "WjR9awAAAABJRU5ErkJggg=="
)

COLOUR = {
    "type": "object",
    "properties": {"colour": {"type": "string", "enum": ["red", "blue"]}},
    "required": ["colour"],
}

SQUARE = {
    "type": "object",
    "properties": {"n": {"type": "integer"}, "square": {"type": "integer"}},
    "required": ["n", "square"],
}

MARKS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "marks")

heard: list[str] = []
"""The session events this process's ``matrix_session`` tool heard, in order."""


def mark(name: str, record: dict[str, Any]) -> None:
    """Write ``marks/<name>.json`` whole (a reader never sees half of it)."""
    path = os.path.join(MARKS, f"{name}.json")
    partial = f"{path}.partial"
    with open(partial, "w", encoding="utf-8") as handle:
        json.dump(record, handle)
    os.replace(partial, path)


def factory(api: Any) -> list[CustomTool]:
    Type = api.typebox

    async def check(call_id: str, params: Any, on_update: Any, ctx: Any, signal: Any) -> str:
        return f"{params['word']} x{params['count']}"

    async def stream(call_id: str, params: Any, on_update: Any, ctx: Any, signal: Any) -> str:
        for step in range(1, params["steps"] + 1):
            on_update(ToolResult.from_text(f"step {step}"))
            # Longer than MCP's progress coalescing (50 ms): every step is its own update.
            await anyio.sleep(0.08)
        return f"streamed {params['steps']}"

    async def wait(call_id: str, params: Any, on_update: Any, ctx: Any, signal: Any) -> str:
        mark(f"{params['mark']}.started", {"pid": os.getpid()})
        try:
            await anyio.sleep(30)  # bounded: ends on its own if nobody cancels it
            return "waited to the end"
        finally:
            # Cleanup that awaits: shielded, well within the grace.
            with anyio.CancelScope(shield=True):
                await anyio.sleep(0.05)
            reason = signal.reason
            mark(
                params["mark"],
                {
                    "aborted": signal.aborted,
                    "reason": type(reason).__name__ if isinstance(reason, Exception) else reason,
                },
            )

    async def ask(call_id: str, params: Any, on_update: Any, ctx: Any, signal: Any) -> str:
        answer = await ctx.ask("Pick a colour", COLOUR, key="colour")
        return f"{answer.action}:{answer.values.get('colour')}"

    async def sample(call_id: str, params: Any, on_update: Any, ctx: Any, signal: Any) -> str:
        result = await ctx.sample("Say hello", max_tokens=20)
        return f"the model said: {result.text}"

    async def log(call_id: str, params: Any, on_update: Any, ctx: Any, signal: Any) -> str:
        ctx.log("warning", "matrix log line")
        await anyio.sleep(0)
        return "logged"

    async def guarded(call_id: str, params: Any, on_update: Any, ctx: Any, signal: Any) -> str:
        return f"ran on {params['target']}"

    def render_call(args: Any, theme: Any) -> str:
        return f"matrix render of {args.get('target')}"

    def render_result(result: Any, options: Any, theme: Any, args: Any) -> str:
        return f"matrix result {result.text}"

    def on_session(event: Any, ctx: Any) -> None:
        heard.append(event.reason)

    async def session(call_id: str, params: Any, on_update: Any, ctx: Any, signal: Any) -> str:
        return json.dumps(heard)

    async def structured(call_id: str, params: Any, on_update: Any, ctx: Any, signal: Any) -> Any:
        value = {"n": params["n"], "square": params["n"] ** 2}
        return ToolResult(content=[TextContent(text=json.dumps(value))], structured_content=value)

    async def image(call_id: str, params: Any, on_update: Any, ctx: Any, signal: Any) -> Any:
        return ToolResult(
            content=[ImageContent(data=PNG, mime_type="image/png"), TextContent(text="a dot")]
        )

    async def traced(call_id: str, params: Any, on_update: Any, ctx: Any, signal: Any) -> str:
        from opentelemetry import trace

        # The tool's own telemetry: an event on the current span and a span of its own
        # (through the global provider, as library code does).
        current = trace.get_current_span()
        current.add_event("matrix.tool-event")
        with trace.get_tracer("matrix").start_as_current_span("matrix.tool-span"):
            pass
        return f"{current.get_span_context().trace_id:032x}"

    async def version(call_id: str, params: Any, on_update: Any, ctx: Any, signal: Any) -> str:
        return VERSION

    async def oversized(call_id: str, params: Any, on_update: Any, ctx: Any, signal: Any) -> str:
        # A new run id each time it runs, then more text than the host's budget allows.
        return f"run {uuid.uuid4().hex} " + "x" * 60_000

    mark_param = Type.Object({"mark": Type.String(pattern="^[a-z0-9-]+$")})
    target = Type.Object({"target": Type.String()})
    return [
        CustomTool(
            name="matrix_check",
            parameters=Type.Object(
                {"count": Type.Integer(minimum=1), "word": Type.String(minLength=1)}
            ),
            execute=check,
        ),
        CustomTool(
            name="matrix_stream",
            parameters=Type.Object({"steps": Type.Integer(minimum=1, maximum=5)}),
            execute=stream,
        ),
        CustomTool(name="matrix_wait", parameters=mark_param, execute=wait),
        CustomTool(name="matrix_slow", parameters=mark_param, execute=wait, timeout=0.5),
        CustomTool(name="matrix_ask", execute=ask),
        CustomTool(name="matrix_sample", execute=sample),
        CustomTool(name="matrix_log", execute=log),
        CustomTool(
            name="matrix_guarded", parameters=target, execute=guarded, requires_approval=True
        ),
        CustomTool(
            name="matrix_render",
            parameters=target,
            execute=guarded,
            render_call=render_call,
            render_result=render_result,
        ),
        CustomTool(name="matrix_session", execute=session, on_session=on_session),
        CustomTool(
            name="matrix_struct",
            parameters=Type.Object({"n": Type.Integer()}),
            execute=structured,
            output_schema=SQUARE,
        ),
        CustomTool(name="matrix_image", execute=image),
        CustomTool(name="matrix_trace", execute=traced),
        CustomTool(name="matrix_version", execute=version),
        CustomTool(
            name="matrix_policy",
            parameters=Type.Object({"n": Type.Integer()}),
            execute=oversized,
            annotations={"readOnlyHint": True, "idempotentHint": True},  # cacheable
        ),
    ]
