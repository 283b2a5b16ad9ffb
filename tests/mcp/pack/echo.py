"""Fixture: an exact schema ($schema, $defs, defaults, no extra properties) and _meta."""

from __future__ import annotations

from typing import Any

from customtools import CustomTool, ToolResult

SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {"word": {"type": "string", "minLength": 1}},
    "properties": {
        "text": {"$ref": "#/$defs/word"},
        "times": {"type": "integer", "minimum": 1, "maximum": 5, "default": 1},
    },
    "required": ["text"],
    "additionalProperties": False,
}


def factory(api: Any) -> CustomTool:
    async def execute(call_id: str, params: Any, on_update: Any, ctx: Any, signal: Any) -> Any:
        return ToolResult.from_text(
            " ".join([params["text"]] * params["times"]),
            details={"times": params["times"], "meta": dict(ctx.meta or {})},
        )

    return CustomTool(
        name="echo",
        label="Echo",
        description="Repeats a word.",
        parameters=SCHEMA,
        execute=execute,
        annotations={"readOnlyHint": True, "idempotentHint": True},
        meta={"customtools/origin": "fixture"},
    )
