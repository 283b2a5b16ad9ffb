"""Fixture: N partial results, then a final one; a tool that raises; an image."""

from __future__ import annotations

from typing import Any

import anyio

from customtools import CustomTool, ImageContent, TextContent, ToolResult

PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGA"
    "WjR9awAAAABJRU5ErkJggg=="
)


def factory(api: Any) -> list[CustomTool]:
    Type = api.typebox

    async def steps(call_id: str, params: Any, on_update: Any, ctx: Any, signal: Any) -> Any:
        for i in range(1, params["n"] + 1):
            on_update(ToolResult.from_text(f"step {i}"))
            await anyio.sleep(params["pause"])
        return ToolResult.from_text(f"done {params['n']}", details={"n": params["n"]})

    def boom(call_id: str, params: Any, on_update: Any, ctx: Any, signal: Any) -> Any:
        raise RuntimeError("x")

    async def picture(call_id: str, params: Any, on_update: Any, ctx: Any, signal: Any) -> Any:
        return ToolResult(
            content=(ImageContent(data=PNG, mime_type="image/png"), TextContent(text="a dot")),
            meta={"customtools/kind": "picture"},
        )

    return [
        CustomTool(
            name="steps",
            parameters=Type.Object(
                {
                    "n": Type.Integer(minimum=0, maximum=500),
                    "pause": Type.Optional(Type.Number(default=0)),
                }
            ),
            execute=steps,
        ),
        CustomTool(name="boom", execute=boom),
        CustomTool(name="picture", execute=picture),
    ]
