"""Fixture: starts `sleep 60` in its own process group and records what it saw."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import anyio

from customtools import CustomTool, ToolResult


def factory(api: Any) -> CustomTool:
    Type = api.typebox

    async def execute(call_id: str, params: Any, on_update: Any, ctx: Any, signal: Any) -> Any:
        pidfile = Path(params["dir"]) / "pid"
        markfile = Path(params["dir"]) / "aborted"
        (Path(params["dir"]) / "server").write_text(str(os.getpid()))
        try:
            async with anyio.create_task_group() as tg:
                script = 'echo $$ > "$1"; exec sleep 60'
                tg.start_soon(
                    lambda: api.exec("sh", ["-c", script, "sh", str(pidfile)], signal=signal)
                )
                while not pidfile.exists() or not pidfile.read_text().strip():
                    await anyio.sleep(0.01)
                on_update(ToolResult.from_text(f"child {pidfile.read_text().strip()} started"))
        finally:
            # Written whole, then renamed: a test that sees the file sees its content.
            partial = markfile.with_suffix(".partial")
            partial.write_text(str(signal.aborted))
            partial.replace(markfile)
        return ToolResult.from_text("the child exited")

    return CustomTool(
        name="sleeper",
        parameters=Type.Object({"dir": Type.String()}),
        execute=execute,
    )
