"""Keeps a session-scoped list of notes, reset by session events through ``on_session``."""

from __future__ import annotations

from typing import Any

from customtools import CustomTool, ToolResult


def factory(api: Any) -> CustomTool:
    Type = api.typebox
    notes: list[str] = []

    def execute(tool_call_id: str, params: Any, on_update: Any, ctx: Any, signal: Any) -> Any:
        if params["action"] == "add":
            if not params.get("text"):
                raise ValueError("action 'add' needs 'text'")
            notes.append(params["text"])
        elif params["action"] == "clear":
            notes.clear()
        listing = "\n".join(f"{i}. {note}" for i, note in enumerate(notes, 1))
        return ToolResult.from_text(listing or "no notes", details={"notes": list(notes)})

    def on_session(event: Any, ctx: Any) -> None:
        # A new, switched or branched session starts with no notes.
        if event.reason in ("start", "switch", "branch", "tree"):
            notes.clear()

    return CustomTool(
        name="notes",
        label="Notes",
        description="Keeps notes for this session: add one, list them, or clear them.",
        parameters=Type.Object(
            {
                "action": Type.StringEnum(["add", "list", "clear"]),
                "text": Type.Optional(Type.String(maxLength=500)),
            }
        ),
        execute=execute,
        on_session=on_session,
    )
