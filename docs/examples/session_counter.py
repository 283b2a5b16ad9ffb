"""A tool that keeps state across calls and rebuilds it from session history.

``session_counter`` counts how often it was called in the current session branch. The count
lives in each result's ``details``, never only in memory, so when the session starts, switches,
branches or moves in its tree, the tool rebuilds the count from the branch it is now on, and a
branch made before the third call really does count two calls.

This example assumes the host's ``ctx.session_manager`` has ``get_branch()`` returning the
current branch's entries, each a mapping with ``tool_name`` and ``details``. Adapt ``_rebuild``
to your host's session object.
"""

from __future__ import annotations

from typing import Any

from customtools import CustomTool, SessionEvent, SessionReason, ToolContext, ToolResult
from customtools.rendering import RenderOptions, Theme

NAME = "session_counter"

_REBUILD_ON = (
    SessionReason.START,
    SessionReason.SWITCH,
    SessionReason.BRANCH,
    SessionReason.TREE,
)


def factory(api: Any) -> CustomTool:
    """Build the tool; each call of the factory has its own state."""
    state = {"count": 0}

    def _rebuild(ctx: ToolContext) -> None:
        manager = ctx.session_manager
        entries = manager.get_branch() if manager is not None else []
        counts = [
            entry["details"]["count"]
            for entry in entries
            if entry.get("tool_name") == NAME and isinstance(entry.get("details"), dict)
        ]
        state["count"] = max(counts, default=0)

    async def execute(
        tool_call_id: str, params: Any, on_update: Any, ctx: ToolContext, signal: Any
    ) -> ToolResult:
        state["count"] += 1
        return ToolResult.from_text(
            f"call number {state['count']} in this branch", details={"count": state["count"]}
        )

    def on_session(event: SessionEvent, ctx: ToolContext) -> None:
        if event.reason in _REBUILD_ON:
            _rebuild(ctx)
        elif event.reason == SessionReason.SHUTDOWN:
            state["count"] = 0  # nothing to release here; a real tool closes files, sockets...

    def render_result(
        result: ToolResult, options: RenderOptions, theme: Theme, args: Any
    ) -> str | None:
        if result.details is None:
            return None  # the default rendering is fine for errors and partial updates
        return theme.fg("accent", f"#{result.details['count']}")

    return CustomTool(
        name=NAME,
        label="Session counter",
        description="Counts how many times it was called in the current session branch.",
        execute=execute,
        on_session=on_session,
        render_result=render_result,
    )
