"""A tool that streams progress for a few seconds: each step is a partial result."""

from __future__ import annotations

from typing import Any

import anyio

from customtools import CustomTool, ToolResult


def factory(api: Any) -> CustomTool:
    Type = api.typebox

    async def execute(tool_call_id: str, params: Any, on_update: Any, ctx: Any, signal: Any) -> Any:
        steps = params["steps"]
        for step in range(1, steps + 1):
            signal.raise_if_aborted()
            on_update(
                ToolResult.from_text(
                    f"{params['label']}: step {step}/{steps}",
                    details={"step": step, "of": steps},
                )
            )
            await anyio.sleep(params["interval"])
        return ToolResult.from_text(
            f"{params['label']}: finished {steps} steps", details={"steps": steps}
        )

    return CustomTool(
        name="countdown",
        label="Countdown",
        description="Counts through a number of steps, reporting progress after each one.",
        parameters=Type.Object(
            {
                "steps": Type.Optional(Type.Integer(minimum=1, maximum=100, default=5)),
                "interval": Type.Optional(Type.Number(minimum=0, maximum=5, default=0.4)),
                "label": Type.Optional(Type.String(default="countdown", maxLength=40)),
            }
        ),
        execute=execute,
    )
