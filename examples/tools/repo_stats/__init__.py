"""A package-directory tool: the package's helper module does the counting."""

from __future__ import annotations

import os
from typing import Any

from customtools import CustomTool, ToolResult

from ._count import count_by_extension


def factory(api: Any) -> CustomTool:
    Type = api.typebox

    def execute(tool_call_id: str, params: Any, on_update: Any, ctx: Any, signal: Any) -> Any:
        root = os.path.join(api.cwd, params["directory"])
        counts = count_by_extension(root, params["top"], signal)
        lines = [f"{ext or '(none)'}: {n}" for ext, n in counts]
        return ToolResult.from_text("\n".join(lines) or "no files", details=dict(counts))

    return CustomTool(
        name="repo_stats",
        label="Repository stats",
        description="Counts files by extension under a directory (hidden folders skipped).",
        parameters=Type.Object(
            {
                "directory": Type.Optional(Type.String(default=".")),
                "top": Type.Optional(Type.Integer(minimum=1, maximum=100, default=10)),
            }
        ),
        execute=execute,
    )
