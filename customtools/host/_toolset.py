"""Tools published by several active clients of one session, merged deterministically.

:class:`ActiveClientToolSet` keeps one tool list per ``clientId`` in insertion order:

* re-setting a known client replaces its list but keeps its position (only ``remove`` then
  ``set`` moves it to the end), so merge order and ownership stay stable across updates;
* :meth:`~ActiveClientToolSet.merged` walks clients in that order and each client's tools in
  theirs, keeping the first tool of each name;
* :meth:`~ActiveClientToolSet.owner_of` names the client that runs a tool, preferring a given
  client (for example the one that started the turn) when it really offers the tool;
* :meth:`~ActiveClientToolSet.structural_equals` tells whether a re-publication changes what the
  model sees (name, description, input schema), ignoring order and display-only fields.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from customtools.host._tooldefs import ToolDefinition

__all__ = ["ActiveClientToolSet", "json_equal", "prefix_tools", "structural_tools_equal"]


def json_equal(a: Any, b: Any) -> bool:
    """Deep JSON equality: key order ignored, list order kept, ``true`` is not ``1``.

    ``None`` (``null``) equals only ``None``; a key holding ``null`` differs from a missing key.
    """
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a is b
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    return type(a) is type(b) and bool(a == b)


_ABSENT = object()


def _wire_value(tool: ToolDefinition, attr: str, key: str) -> Any:
    """The value ``key`` has on the wire: a value, ``None`` for an explicit ``null``, or
    ``_ABSENT`` when the key is missing (``null`` and absent are different, AHP section 4.1)."""
    value = getattr(tool, attr)
    if value is not None:
        return value
    if key in tool.extra and tool.extra[key] is None:
        return None
    return _ABSENT


def structural_tools_equal(
    a: Sequence[ToolDefinition] | None, b: Sequence[ToolDefinition] | None
) -> bool:
    """True when two tool lists look the same to a model.

    Compares ``name``, ``description`` and ``input_schema`` only (``title``, ``output_schema``,
    ``annotations`` and ``_meta`` are display or transport details). Order does not matter;
    ``None`` equals ``[]``. A ``null`` description or schema is not the same as an absent one,
    and a missing schema differs from ``{}``.
    """
    left, right = list(a or ()), list(b or ())
    if len(left) != len(right):
        return False
    by_name = {tool.name: tool for tool in left}
    for tool in right:
        other = by_name.get(tool.name)
        if other is None:
            return False
        for attr, key in (("description", "description"), ("input_schema", "inputSchema")):
            mine, theirs = _wire_value(other, attr, key), _wire_value(tool, attr, key)
            if mine is _ABSENT or theirs is _ABSENT:
                if mine is not theirs:
                    return False
            elif not json_equal(mine, theirs):
                return False
    return True


def prefix_tools(tools: Iterable[ToolDefinition], prefix: str) -> tuple[ToolDefinition, ...]:
    """Return copies of ``tools`` whose names start with ``prefix``."""
    return tuple(replace(tool, name=prefix + tool.name) for tool in tools)


class ActiveClientToolSet:
    """Per-session tool lists keyed by ``clientId``, in client insertion order.

    Example:
        >>> tools = ActiveClientToolSet()
        >>> tools.set("ide", [ToolDefinition(name="open"), ToolDefinition(name="run")])
        >>> tools.set("web", [ToolDefinition(name="run"), ToolDefinition(name="share")])
        >>> [t.name for t in tools.merged()], tools.owner_of("run"), tools.owner_of("run", "web")
        (['open', 'run', 'share'], 'ide', 'web')
    """

    def __init__(self) -> None:
        self._clients: dict[str, tuple[ToolDefinition, ...]] = {}

    def set(self, client_id: str, tools: Iterable[ToolDefinition]) -> None:
        """Replace ``client_id``'s tools; a new client goes last, a known one keeps its place."""
        self._clients[client_id] = tuple(tools)

    def remove(self, client_id: str) -> bool:
        """Forget ``client_id``; return whether it was present."""
        return self._clients.pop(client_id, None) is not None

    def get(self, client_id: str) -> tuple[ToolDefinition, ...]:
        """Return ``client_id``'s tools (``()`` for an unknown client)."""
        return self._clients.get(client_id, ())

    def client_ids(self) -> tuple[str, ...]:
        """Return the client ids in insertion order."""
        return tuple(self._clients)

    def __contains__(self, client_id: object) -> bool:
        return client_id in self._clients

    def __len__(self) -> int:
        return len(self._clients)

    def merged(self) -> tuple[ToolDefinition, ...]:
        """Every client's tools, deduplicated by name: client order, then tool order, first wins.

        Duplicates inside one client's own list are dropped the same way.
        """
        first: dict[str, ToolDefinition] = {}
        for tools in self._clients.values():
            for tool in tools:
                first.setdefault(tool.name, tool)
        return tuple(first.values())

    def owner_of(self, tool_name: str, preferred: str | None = None) -> str | None:
        """Return the client that runs ``tool_name``.

        Args:
            tool_name: the tool's (unprefixed) name.
            preferred: a client to prefer, typically the one that started the turn. It wins
                only if it offers the tool; ``None`` or ``""`` means no preference.

        Returns:
            The preferred client if it has the tool, else the first-inserted client that has
            it, else ``None``.
        """
        if preferred and any(t.name == tool_name for t in self._clients.get(preferred, ())):
            return preferred
        for client_id, tools in self._clients.items():
            if any(t.name == tool_name for t in tools):
                return client_id
        return None

    def structural_equals(self, other: Sequence[ToolDefinition] | None) -> bool:
        """True when :meth:`merged` is structurally equal to ``other`` (see
        :func:`structural_tools_equal`): re-applying ``other`` would change nothing for the
        model."""
        return structural_tools_equal(self.merged(), other)
