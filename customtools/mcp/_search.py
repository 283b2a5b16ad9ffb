"""Tool search for served tools (``serve --tool-search``): the search tool and who sees what.

With tool search on, ``tools/list`` answers with the search tool, the tools the host pinned,
and the tools this client's searches found; every served tool stays callable by name, listed
or not. The search tool, ``search_tools``, takes ``{"query": str, "limit": int}`` (``limit``
1-50, default 8) and answers with each found tool's name, title, description and input
schema (text for the model, ``structuredContent`` for programs); the found tools are added to
the client's listing and the client gets ``notifications/tools/list_changed``. It searches
with :meth:`~customtools.ToolRegistry.search`, so lazily loaded tools are found without being
imported. ``docs/mcp.md`` has the story for hosts.

Who a client is
    Its authenticated principal (an OAuth token's client, issuer and subject) when the server
    verifies tokens, else its HTTP session (the ``mcp-session-id`` header), else its
    handshake-era connection (stdio, in memory). What a principal or a session found is kept
    in a :class:`~customtools.mcp._shared.VisibilityStore`: this process's, or the one replicas
    share (``serve --redis``), so a principal's found tools are listed by every replica. Without
    a principal, stateless HTTP and the 2026-07-28 era have no session across requests: there,
    found tools are not remembered, the listing stays the search tool and the pinned tools,
    and the client calls what a search returned by name.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
from collections.abc import Container, Hashable, Iterable
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Final

from customtools._content import TextContent, ToolResult
from customtools._tool import CustomTool
from customtools.mcp._shared import MemoryVisibility, VisibilityStore

if TYPE_CHECKING:
    from customtools._registry import ToolRegistry

__all__ = [
    "CURRENT_REQUEST",
    "SEARCH_TOOL_NAME",
    "ToolVisibility",
    "client_key",
    "connection_of",
    "principal",
    "search_tool",
]

SEARCH_TOOL_NAME: Final = "search_tools"
"""The name of the search tool a server with tool search lists."""

_DEFAULT_LIMIT = 8
_MAX_LIMIT = 50
_MAX_CONNECTIONS = 10_000  # as many as the SDK keeps stateful HTTP sessions

_PARAMETERS: Final = {
    "type": "object",
    "properties": {
        "query": {
            "type": "string",
            "minLength": 1,
            "description": "What you want to do, in a few words (a tool's name works too).",
        },
        "limit": {
            "type": "integer",
            "minimum": 1,
            "maximum": _MAX_LIMIT,
            "default": _DEFAULT_LIMIT,
            "description": "The most tools to return.",
        },
    },
    "required": ["query"],
    "additionalProperties": False,
}

_OUTPUT: Final = {
    "type": "object",
    "properties": {
        "tools": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "title": {"type": "string"},
                    "description": {"type": "string"},
                    "inputSchema": {"type": "object"},
                },
                "required": ["name", "inputSchema"],
            },
        }
    },
    "required": ["tools"],
}

CURRENT_REQUEST: ContextVar[Any] = ContextVar("customtools_mcp_request", default=None)
"""The SDK's context of the ``tools/call`` being served (the search tool reads its client)."""


def connection_of(session: Any) -> Any:
    """The SDK's connection behind a request's session (one per handshake-era connection;
    each request has a session object of its own). Private in the SDK, which is pinned
    below 3; ``None`` without it."""
    return getattr(session, "_connection", None)


def principal() -> str | None:
    """The authenticated principal of the request being served (``mcp-auth:`` and a digest
    of the OAuth token's client, issuer and subject, or of the token without a subject);
    ``None`` without a token verifier (a shared bearer token names no one)."""
    from mcp.server.auth.middleware.auth_context import get_access_token

    token = get_access_token()
    if token is None:
        return None
    subject = getattr(token, "subject", None)
    issuer = (getattr(token, "claims", None) or {}).get("iss")
    who = f"{token.client_id}\0{issuer}\0{subject}" if subject else token.token
    return "mcp-auth:" + hashlib.sha256(who.encode()).hexdigest()[:32]


def client_key(ctx: Any, connections: Container[Any]) -> Hashable | None:
    """Who sent a request: its authenticated principal, else its HTTP session id (both
    strings), else its connection when it is one of the handshake-era ``connections``;
    ``None`` when requests share neither."""
    who = principal()
    if who is not None:
        return who
    request = getattr(ctx, "request", None)
    headers = getattr(request, "headers", None)
    session_id = headers.get("mcp-session-id") if headers is not None else None
    if session_id:
        return f"session:{session_id}"
    connection = connection_of(ctx.session)
    return connection if connection is not None and connection in connections else None


class ToolVisibility:
    """Which tools each client sees listed: the pinned ones, and what its searches found.

    The found names of a principal or an HTTP session (string keys) are in ``store``; those
    of a handshake-era connection (stdio, in memory) are in this object, at most 10,000
    connections (the oldest dropped first).

    Args:
        pinned: tool names, or ``fnmatch`` patterns (``git_*``), always listed.
        store: where found names are kept (default: this process's
            :class:`~customtools.mcp._shared.MemoryVisibility`; shared by replicas with
            ``serve --redis``). A shared store that cannot answer raises
            :class:`~customtools.mcp.SharedStateError`.
    """

    def __init__(self, pinned: Iterable[str] = (), store: VisibilityStore | None = None) -> None:
        self.pinned = tuple(pinned)
        self.store: VisibilityStore = store if store is not None else MemoryVisibility()
        self._connections: dict[Hashable, set[str]] = {}

    def is_pinned(self, name: str) -> bool:
        """Whether ``name`` is listed for every client."""
        return name == SEARCH_TOOL_NAME or any(
            fnmatch.fnmatchcase(name, pattern) for pattern in self.pinned
        )

    async def found(self, client: Hashable | None) -> frozenset[str]:
        """The names ``client``'s searches found (none for a client without a session)."""
        if isinstance(client, str):
            return await self.store.shown(client)
        return frozenset(self._connections.get(client, ())) if client is not None else frozenset()

    async def reveal(self, client: Hashable | None, names: Iterable[str]) -> bool:
        """Add ``names`` to what ``client`` sees; whether its listing changed."""
        if client is None:
            return False
        shown = [name for name in names if not self.is_pinned(name)]
        if isinstance(client, str):
            return await self.store.show(client, shown)
        seen = self._connections.get(client)
        if seen is None:
            seen = self._connections[client] = set()
            if len(self._connections) > _MAX_CONNECTIONS:
                del self._connections[next(iter(self._connections))]
        before = len(seen)
        seen.update(shown)
        return len(seen) != before


def search_tool(registry: ToolRegistry, on_found: Any) -> CustomTool:
    """The ``search_tools`` tool over ``registry``; ``await on_found(names)`` reveals what a
    search found to the client that searched."""

    async def execute(
        tool_call_id: str, params: Any, on_update: Any, ctx: Any, signal: Any
    ) -> ToolResult:
        limit = params.get("limit", _DEFAULT_LIMIT)
        found = [
            tool
            for tool in registry.search(params["query"], limit + 1)
            if tool.name != SEARCH_TOOL_NAME and not tool.hidden
        ][:limit]
        entries = [_entry(tool) for tool in found]
        await on_found([tool.name for tool in found])
        if not entries:
            text = "No tool matches; try other words."
        else:
            lines = [f"{len(entries)} tool(s) found; call them by name:"]
            for entry in entries:
                lines.append(f"- {entry['name']}: {entry.get('description', '')}".rstrip(": "))
                lines.append(f"  input schema: {json.dumps(entry['inputSchema'])}")
            text = "\n".join(lines)
        return ToolResult(content=(TextContent(text=text),), structured_content={"tools": entries})

    return CustomTool(
        name=SEARCH_TOOL_NAME,
        label="Search tools",
        description="Find tools for a task. Only some tools are listed; this searches all of"
        " them by name, description and parameters, and makes the ones it finds available.",
        parameters=_PARAMETERS,
        output_schema=_OUTPUT,
        annotations={"readOnlyHint": True},
        execute=execute,
    )


def _entry(tool: CustomTool) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": tool.name}
    if tool.label and tool.label != tool.name:
        entry["title"] = tool.label
    if tool.description:
        entry["description"] = tool.description
    entry["inputSchema"] = dict(tool.parameters)
    return entry
