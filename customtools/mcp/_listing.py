"""Reading a mounted server's ``tools/list`` entry by entry, and what makes a tool unusable.

The SDK validates a listing as a whole: one tool whose input schema is not an object fails
the entire result. When that happens the mount asks again for the raw page and checks each
entry on its own (:func:`raw_tools_page`), so one bad tool is one diagnostic.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import mcp_types as types
import pydantic
from mcp import Client
from mcp.shared.exceptions import MCPError

__all__ = ["MAX_PAGES", "BadEntry", "is_result_check", "raw_tools_page", "remote_problem"]

MAX_PAGES = 100
"""The most pages of one listing."""

_RESULT_CHECKS = ("Invalid structured content", "has an output schema but", "Invalid schema for")


def is_result_check(exc: RuntimeError) -> bool:
    """Whether the SDK raised ``exc`` because a result broke the tool's output schema."""
    return str(exc).startswith(_RESULT_CHECKS) or " has an output schema but " in str(exc)


@dataclass(frozen=True, slots=True)
class BadEntry:
    """A ``tools/list`` entry that is not a valid tool."""

    name: str
    error: pydantic.ValidationError


def remote_problem(remote: Any, seen: set[str]) -> str | None:
    """Why a listed tool cannot be mounted, or ``None``."""
    if isinstance(remote, BadEntry):
        errors = remote.error.errors()
        if not errors:
            return "the entry is not a valid tool"
        where = ".".join(str(part) for part in errors[0]["loc"]) or "the entry"
        return f"the entry is not a valid tool ({where}: {errors[0]['msg']})"
    name = remote.name
    if not name:
        return "its name is empty"
    if name in seen:
        return "the server lists another tool with the same name (the first one is mounted)"
    root = remote.input_schema.get("type") if isinstance(remote.input_schema, Mapping) else None
    if root != "object":
        return (
            f'its inputSchema root must have "type": "object", not {root!r}; fix the server\'s'
            " tool definition"
        )
    return None


async def raw_tools_page(
    client: Client, cursor: str | None, max_entries: int
) -> tuple[list[Any], str | None]:
    """One ``tools/list`` page read without the SDK's validation of the whole result: each
    entry a ``Tool`` or a :class:`BadEntry`, at most ``max_entries``; and the next cursor.

    Raises:
        AttributeError: the SDK lacks the internals this needs (it is pinned below 3).
        MCPError: the page has no tool list.
    """
    session: Any = client.session
    request = types.ListToolsRequest(
        params=types.PaginatedRequestParams(cursor=cursor) if cursor else None
    )
    data = request.model_dump(by_alias=True, mode="json", exclude_none=True)
    options: dict[str, Any] = {}
    session._stamp(data, options)  # the SDK's envelope for the negotiated era
    raw = await session._dispatcher.send_raw_request(data["method"], data.get("params"), options)
    if not isinstance(raw, Mapping) or not isinstance(raw.get("tools"), list):
        raise MCPError(code=types.INVALID_PARAMS, message="tools/list result has no tool list")
    next_cursor = raw.get("nextCursor")
    entries: list[Any] = []
    for index, entry in enumerate(raw["tools"][:max_entries]):
        try:
            entries.append(types.Tool.model_validate(entry, by_name=False))
        except pydantic.ValidationError as exc:
            label = entry.get("name") if isinstance(entry, Mapping) else None
            entries.append(BadEntry(label if isinstance(label, str) else f"#{index}", exc))
    good = [entry for entry in entries if isinstance(entry, types.Tool)]
    # What the SDK's own listing does with each tool: cache output schemas (it checks
    # results against them) and, in the modern era, drop tools it must not call.
    absorbed = session._absorb_tool_listing(types.ListToolsResult(tools=good), complete=False)
    kept = {id(tool) for tool in absorbed.tools}
    entries = [e for e in entries if not isinstance(e, types.Tool) or id(e) in kept]
    return entries, next_cursor if isinstance(next_cursor, str) else None
