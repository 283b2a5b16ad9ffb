"""One tool namespace for a session: the host's own tools plus every active client's tools.

Server tools (loaded :class:`~customtools.CustomTool` objects, or :class:`ToolDefinition`
values for tools the host runs some other way) and client tools share one flat namespace.
:class:`SessionToolRegistry` keeps the names unique and answers "who runs this name?":

* server tools come first, in the order given; a server tool always keeps its name; the
  host's :class:`~customtools.CustomTool` objects live in one
  :class:`~customtools.ToolRegistry` (a repeated name is a reported conflict, see
  :attr:`~SessionToolRegistry.conflicts`), which also keeps each one's adapter;
* client tools follow in :meth:`ActiveClientToolSet.merged` order;
* with no ``client_prefix``, a client tool whose name a server tool already uses is *shadowed*
  (hidden, reported by :meth:`~SessionToolRegistry.shadowed`) and the server runs the name;
* with ``client_prefix`` (a string, or a function of the client id), client tools are exposed
  under prefixed names and :meth:`~SessionToolRegistry.resolve` maps them back.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Literal

from customtools._adapter import CustomToolAdapter
from customtools._registry import ToolConflict, ToolRegistry
from customtools._tool import CustomTool
from customtools.host._tooldefs import ToolDefinition
from customtools.host._toolset import ActiveClientToolSet

__all__ = ["SessionToolRegistry", "ToolRoute"]

ServerTool = CustomTool | ToolDefinition


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolRoute:
    """Where a name the model sees is executed.

    Attributes:
        name: the exposed (possibly prefixed) name.
        tool_name: the tool's own name at its origin.
        origin: ``"server"`` (the host runs it) or ``"client"`` (an active client runs it).
        client_id: the owning client for client tools, else ``None``.
        definition: the definition advertised to the model (``name`` is the exposed name).
        tool: the server tool object, or the client's :class:`ToolDefinition`.
    """

    name: str
    tool_name: str
    origin: Literal["server", "client"]
    client_id: str | None
    definition: ToolDefinition
    tool: CustomTool | ToolDefinition


class SessionToolRegistry:
    """The tools of one session, by exposed name.

    Args:
        server_tools: the host's tools: loaded custom tools (advertised as
            :meth:`ToolDefinition.from_tool` describes them) or ready definitions, or a
            :class:`~customtools.ToolRegistry` of them.
        client_tools: the session's :class:`ActiveClientToolSet` (shared, not copied: later
            ``set``/``remove`` calls are seen at once).
        client_prefix: ``None`` (server tools shadow same-named client tools), a string put in
            front of every client tool name, or a function ``client_id -> prefix`` (then two
            clients' same-named tools are both exposed).
    """

    def __init__(
        self,
        *,
        server_tools: Iterable[ServerTool] | ToolRegistry = (),
        client_tools: ActiveClientToolSet | None = None,
        client_prefix: str | Callable[[str], str] | None = None,
    ) -> None:
        self._registry = ToolRegistry()
        self._server: tuple[ServerTool, ...] = ()
        self.set_server_tools(server_tools)
        self.client_tools = client_tools if client_tools is not None else ActiveClientToolSet()
        self._prefix = client_prefix

    def set_server_tools(self, tools: Iterable[ServerTool] | ToolRegistry) -> None:
        """Replace the host's own tools (for example after a reload)."""
        if isinstance(tools, ToolRegistry):
            self._registry = tools
            self._server = tools.tools
            return
        registry = ToolRegistry()
        server: list[ServerTool] = []
        for tool in tools:
            if isinstance(tool, CustomTool) and registry.add(tool) is not None:
                continue
            server.append(tool)
        self._registry = registry
        self._server = tuple(server)

    @property
    def conflicts(self) -> tuple[ToolConflict, ...]:
        """Server tools left out because an earlier server tool has their name."""
        return self._registry.conflicts

    def adapter(self, name: str) -> CustomToolAdapter | None:
        """The kept adapter of the server :class:`~customtools.CustomTool` called ``name``.

        ``None`` for a client tool, a definition-only server tool, or an unknown name.
        """
        entry = self._registry.lookup(name)
        return entry.adapter if entry is not None else None

    def _client_candidates(self) -> list[tuple[str, str, ToolDefinition]]:
        """(exposed name, client id, definition) for client tools, before server conflicts."""
        tools = self.client_tools
        if callable(self._prefix):
            return [
                (self._prefix(cid) + t.name, cid, t)
                for cid in tools.client_ids()
                for t in tools.get(cid)
            ]
        prefix = self._prefix or ""
        return [(prefix + t.name, tools.owner_of(t.name) or "", t) for t in tools.merged()]

    def routes(self) -> tuple[ToolRoute, ...]:
        """Every exposed tool, server tools first; names are unique."""
        out: list[ToolRoute] = []
        taken: set[str] = set()
        for tool in self._server:
            if tool.name in taken:
                continue
            taken.add(tool.name)
            out.append(
                ToolRoute(
                    name=tool.name,
                    tool_name=tool.name,
                    origin="server",
                    client_id=None,
                    definition=(
                        tool if isinstance(tool, ToolDefinition) else ToolDefinition.from_tool(tool)
                    ),
                    tool=tool,
                )
            )
        for exposed, client_id, definition in self._client_candidates():
            if exposed in taken:
                continue
            taken.add(exposed)
            out.append(
                ToolRoute(
                    name=exposed,
                    tool_name=definition.name,
                    origin="client",
                    client_id=client_id,
                    definition=replace(definition, name=exposed),
                    tool=definition,
                )
            )
        return tuple(out)

    def definitions(self) -> tuple[ToolDefinition, ...]:
        """The definitions to advertise to the model, in :meth:`routes` order."""
        return tuple(route.definition for route in self.routes())

    def shadowed(self) -> tuple[tuple[str, str], ...]:
        """``(client_id, name)`` of client tools hidden because an exposed name was taken."""
        exposed = {(r.client_id, r.tool_name) for r in self.routes() if r.origin == "client"}
        return tuple(
            (cid, d.name) for _, cid, d in self._client_candidates() if (cid, d.name) not in exposed
        )

    def resolve(self, name: str, *, preferred_client: str | None = None) -> ToolRoute | None:
        """Return the route for an exposed ``name`` (``None`` if no tool has it).

        For a client tool exposed under one shared name, ``preferred_client`` (the client that
        started the turn) runs it when that client offers the tool; otherwise the
        first-inserted owner does.
        """
        for route in self.routes():
            if route.name != name:
                continue
            if route.origin == "client" and not callable(self._prefix):
                owner = self.client_tools.owner_of(route.tool_name, preferred_client)
                if owner is not None and owner != route.client_id:
                    own = next(t for t in self.client_tools.get(owner) if t.name == route.tool_name)
                    return replace(route, client_id=owner, tool=own)
            return route
        return None
