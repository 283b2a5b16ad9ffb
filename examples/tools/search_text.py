"""Searches text files under a directory: a rich schema with defaults, enums and patterns."""

from __future__ import annotations

import os
import re
from typing import Any

from customtools import CustomTool, ToolResult


def _matches(path: str, pattern: re.Pattern[str], limit: int) -> list[dict[str, Any]]:
    hits: list[dict[str, Any]] = []
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            for number, line in enumerate(handle, 1):
                if pattern.search(line):
                    hits.append({"path": path, "line": number, "text": line.rstrip()[:200]})
                    if len(hits) >= limit:
                        break
    except OSError:
        pass  # unreadable files are skipped, like grep -s
    return hits


def factory(api: Any) -> CustomTool:
    Type = api.typebox

    def execute(tool_call_id: str, params: Any, on_update: Any, ctx: Any, signal: Any) -> Any:
        flags = 0 if params["case"] == "sensitive" else re.IGNORECASE
        try:
            pattern = re.compile(params["pattern"], flags)
        except re.error as exc:
            raise ValueError(f"invalid regular expression: {exc}") from exc
        root = os.path.join(api.cwd, params["directory"])
        hits: list[dict[str, Any]] = []
        for folder, dirs, files in os.walk(root):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            for name in sorted(files):
                if signal.aborted or len(hits) >= params["max_results"]:
                    break
                if any(name.endswith(ext) for ext in params["extensions"]):
                    path = os.path.join(folder, name)
                    hits.extend(_matches(path, pattern, params["max_results"] - len(hits)))
        signal.raise_if_aborted()
        lines = [f"{os.path.relpath(h['path'], api.cwd)}:{h['line']}: {h['text']}" for h in hits]
        return ToolResult.from_text(
            "\n".join(lines) or "no matches", details={"count": len(hits), "matches": hits}
        )

    return CustomTool(
        name="search_text",
        label="Search text",
        description="Finds lines matching a regular expression in text files under a directory.",
        parameters=Type.Object(
            {
                "pattern": Type.String(minLength=1, description="a Python regular expression"),
                "directory": Type.Optional(Type.String(default=".", minLength=1)),
                "extensions": Type.Optional(
                    Type.Array(Type.String(pattern=r"^\.[A-Za-z0-9]+$"), default=[".py", ".md"])
                ),
                "case": Type.Optional(
                    Type.StringEnum(["sensitive", "insensitive"], default="sensitive")
                ),
                "max_results": Type.Optional(Type.Integer(minimum=1, maximum=500, default=50)),
            }
        ),
        execute=execute,
    )
