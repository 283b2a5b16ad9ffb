"""One name → tool map: :class:`ToolRegistry`.

Every place that runs tools by name (the MCP bridge, ``customtools run``, the isolation
worker, :class:`~customtools.testing.ToolPack`, the framework adapters) keeps its tools here:
one :class:`~customtools.CustomTool` per name, with one kept
:class:`~customtools.CustomToolAdapter` (built on first use, so its compiled validator is
reused by every call).

The name rule lives here (:class:`NameRule`) and nowhere else: the loader, the rulebook and
the MCP bridge render its :class:`ToolConflict` records as a load error, a finding or a serve
diagnostic. Nothing raises for a conflict.
A tool's ``former_names`` are registered after it, through the same rule, as deprecated
aliases (:meth:`~customtools.CustomTool.deprecated_aliases`); an alias yields its name to any
tool that really has it.

The registry sits in the execution layer: it takes a load result by shape (anything with
``.tools`` of records carrying ``.tool`` and ``.path``, as
:class:`~customtools.LoadResult` has), never by import.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from customtools._adapter import CustomToolAdapter, UpdateCallback
from customtools._content import ToolResult
from customtools._error_results import LoadCode
from customtools._tool import CustomTool

__all__ = [
    "LoadedToolLike",
    "NameRule",
    "RegisteredTool",
    "ToolConflict",
    "ToolRegistry",
    "ToolsLike",
]


@runtime_checkable
class LoadedToolLike(Protocol):
    """A load record: a tool and the path it came from (:class:`~customtools.LoadedTool`)."""

    @property
    def tool(self) -> CustomTool:
        """The loaded tool."""
        ...

    @property
    def path(self) -> str:
        """Where it was found."""
        ...


@runtime_checkable
class ToolsLike(Protocol):
    """Something holding load records, like :class:`~customtools.LoadResult`."""

    @property
    def tools(self) -> Iterable[LoadedToolLike]:
        """The records, in precedence order."""
        ...


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolConflict:
    """What the name rule (:class:`NameRule`) says about one claim of a name.

    Attributes:
        tool_name: the contested name.
        error: one line naming both origins and what to do.
        origin: where the claiming tool came from (a path, or ``None`` when not known).
        taken_by: where the kept tool came from (``None`` for a reserved built-in name or an
            unknown origin).
        code: ``"name-conflict"`` (the tool was left out) or ``"similar-name"`` (it was kept;
            its name differs from a kept one only by letter case).
    """

    tool_name: str
    error: str
    origin: str | None = None
    taken_by: str | None = None
    code: str = LoadCode.NAME_CONFLICT

    def __str__(self) -> str:
        return self.error

    def to_dict(self) -> dict[str, Any]:
        """JSON form, shaped like a load error's (``None`` fields omitted)."""
        out: dict[str, Any] = {"error": self.error, "code": self.code, "toolName": self.tool_name}
        if self.origin is not None:
            out["path"] = self.origin
        if self.taken_by is not None:
            out["takenBy"] = self.taken_by
        return out


class RegisteredTool:
    """One registry entry: the tool, where it came from and its kept adapter.

    Attributes:
        tool: the tool.
        origin: its path or other origin, when known.
        record: the load record it was registered from (a :class:`~customtools.LoadedTool`),
            if any.
    """

    __slots__ = ("_adapter", "_options", "alias_of", "origin", "record", "tool")

    def __init__(
        self,
        tool: CustomTool,
        origin: str | None,
        options: Mapping[str, Any],
        record: Any = None,
        alias_of: str | None = None,
    ) -> None:
        self.tool = tool
        self.origin = origin
        self.record = record
        self.alias_of = alias_of
        self._options = options
        self._adapter: CustomToolAdapter | None = None

    def __repr__(self) -> str:
        return f"<RegisteredTool {self.tool.name!r}>"

    @property
    def name(self) -> str:
        """The tool's name."""
        return self.tool.name

    @property
    def adapter(self) -> CustomToolAdapter:
        """The one adapter that runs this tool (built on first use, then kept)."""
        adapter = self._adapter
        if adapter is None:
            adapter = self._adapter = CustomToolAdapter(self.tool, **self._options)
        return adapter


def _the(origin: str | None, otherwise: str) -> str:
    return f"the tool from {origin}" if origin else otherwise


class NameRule:
    """The one rule for tool names, claim by claim, in precedence order: the first claim of
    a name keeps it; ``reserved`` names (the host's built-ins) are never taken; a later claim
    is a ``"name-conflict"`` naming both origins; a kept name that differs from an earlier
    one only by letter case is a ``"similar-name"``."""

    __slots__ = ("_claims", "_folded", "_reserved")

    def __init__(self, reserved: Iterable[str] = ()) -> None:
        self._reserved = frozenset(reserved)
        self._claims: dict[str, str | None] = {}
        self._folded = {name.casefold(): name for name in self._reserved}

    def claim(self, name: str, origin: str | None = None) -> ToolConflict | None:
        """Claim ``name`` for a tool from ``origin``: ``None`` when it is kept silently, else
        the record (a ``"similar-name"`` is kept, a ``"name-conflict"`` is not)."""
        left = _the(origin, "this tool")
        if name in self._reserved:
            error = f"tool name {name!r} is a built-in tool name and cannot be taken; {left}"
            return ToolConflict(
                tool_name=name, origin=origin, error=f"{error} was left out: rename the tool"
            )
        if name in self._claims:
            first = self._claims[name]
            taken = (
                f"another tool from {first}"
                if first and first == origin
                else _the(first, "an earlier tool")
            )
            return ToolConflict(
                tool_name=name,
                origin=origin,
                taken_by=first,
                error=f"tool name {name!r} is already taken by {taken}; {left} was left out:"
                " rename one of them",
            )
        self._claims[name] = origin
        similar = self._folded.setdefault(name.casefold(), name)
        if similar == name:
            return None
        where = f" from {origin}" if origin else ""
        return ToolConflict(
            tool_name=name,
            origin=origin,
            taken_by=self._claims.get(similar),
            code=LoadCode.SIMILAR_NAME,
            error=f"tool {name!r}{where} differs from {similar!r} only by letter case; models"
            " may confuse them",
        )

    def release(self, name: str) -> None:
        """Forget the claim of ``name`` (its tool was removed)."""
        if self._claims.pop(name, False) is not False and self._folded.get(name.casefold()) == name:
            del self._folded[name.casefold()]


class ToolRegistry:
    """Tools by name, each with one kept :class:`~customtools.CustomToolAdapter`.

    Build it from a load result, tools, or ``@tool`` functions (plain functions are passed
    through :func:`~customtools.tool`); mixing them is fine::

        registry = ToolRegistry(await discover_and_load([], cwd="."))
        result = await registry.call("search", "call-1", {"query": "x"})

    Args:
        tools: a :class:`~customtools.LoadResult` (or anything with ``.tools`` records), or
            an iterable of :class:`~customtools.CustomTool`, load records and functions.
        reserved_names: names no tool may take (the host's built-in tools).
        **adapter_options: keyword arguments for every tool's
            :class:`~customtools.CustomToolAdapter` (``timeout``, ``context``, ``approver``,
            ``update_interval``, ...).

    Raises:
        TypeError: an item is neither a tool, a load record nor a function.
        ToolDefinitionError: a function cannot be made a tool (from :func:`~customtools.tool`).
    """

    __slots__ = ("_conflicts", "_entries", "_options", "_rule", "_similar")

    def __init__(
        self,
        tools: ToolsLike | Iterable[CustomTool | LoadedToolLike | Callable[..., Any]] = (),
        *,
        reserved_names: Iterable[str] = (),
        **adapter_options: Any,
    ) -> None:
        self._entries: dict[str, RegisteredTool] = {}
        self._conflicts: list[ToolConflict] = []
        self._similar: list[ToolConflict] = []
        self._rule = NameRule(reserved_names)
        self._options = dict(adapter_options)
        self.extend(tools)

    def __repr__(self) -> str:
        return f"<ToolRegistry {', '.join(self._entries) or 'no tools'}>"

    # -- building -------------------------------------------------------------------------

    def extend(
        self, tools: ToolsLike | Iterable[CustomTool | LoadedToolLike | Callable[..., Any]]
    ) -> list[ToolConflict]:
        """Add several tools (see the constructor); returns the conflicts they caused."""
        items: Iterable[Any] = tools.tools if isinstance(tools, ToolsLike) else tools
        found: list[ToolConflict] = []
        for item in items:
            if isinstance(item, CustomTool):
                conflict = self.add(item)
            elif isinstance(item, LoadedToolLike) and isinstance(item.tool, CustomTool):
                conflict = self.add(item.tool, origin=item.path, record=item)
            elif callable(item):
                from customtools._function import tool

                conflict = self.add(tool(item))
            else:
                raise TypeError(
                    "ToolRegistry takes CustomTool objects, load records or functions,"
                    f" got {type(item).__name__}"
                )
            if conflict is not None:
                found.append(conflict)
        return found

    def add(
        self, tool: CustomTool, *, origin: str | None = None, record: Any = None
    ) -> ToolConflict | None:
        """Register ``tool`` unless the name rule leaves it out; returns that conflict.

        A kept name that differs from another only by letter case is recorded in
        :attr:`similar_names`.

        Args:
            tool: the tool.
            origin: where it came from (a path), for conflict messages.
            record: the load record it came from, kept as :attr:`RegisteredTool.record`.
        """
        if not isinstance(tool, CustomTool):
            raise TypeError(f"ToolRegistry.add needs a CustomTool, got {type(tool).__name__}")
        conflict = self._add(tool, origin, record, None)
        if conflict is None:
            for alias in tool.deprecated_aliases():
                self._add(alias, origin, record, tool.name)
        return conflict

    def _add(
        self, tool: CustomTool, origin: str | None, record: Any, alias_of: str | None
    ) -> ToolConflict | None:
        name = tool.name
        held = self._entries.get(name)
        if held is not None and held.alias_of is not None and alias_of is None:
            del self._entries[name]  # a deprecated alias yields to the tool that has the name
            self._rule.release(name)
            self._conflicts.append(
                ToolConflict(
                    tool_name=name,
                    origin=held.origin,
                    taken_by=origin,
                    error=f"tool name {name!r} is a former name of {held.alias_of!r} and also"
                    f" the name of {_the(origin, 'another tool')}; the deprecated alias gives"
                    " way to the tool",
                )
            )
        found = self._rule.claim(name, origin)
        if found is not None and found.code != LoadCode.SIMILAR_NAME:
            self._conflicts.append(found)
            return found
        if found is not None:
            self._similar.append(found)
        self._entries[name] = RegisteredTool(tool, origin, self._options, record, alias_of)
        return None

    def remove(self, name: str) -> CustomTool | None:
        """Take ``name`` (and its deprecated aliases) out of the registry; returns its tool
        (``None`` if there was none)."""
        entry = self._entries.pop(name, None)
        self._rule.release(name)
        for alias in [key for key, held in self._entries.items() if held.alias_of == name]:
            del self._entries[alias]
            self._rule.release(alias)
        return entry.tool if entry is not None else None

    # -- reading --------------------------------------------------------------------------

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[CustomTool]:
        return (entry.tool for entry in self._entries.values())

    def __len__(self) -> int:
        return len(self._entries)

    def __getitem__(self, name: str) -> CustomTool:
        return self.entry(name).tool

    @property
    def names(self) -> tuple[str, ...]:
        """The registered names, in registration order."""
        return tuple(self._entries)

    @property
    def tools(self) -> tuple[CustomTool, ...]:
        """The registered tools, in registration order."""
        return tuple(entry.tool for entry in self._entries.values())

    @property
    def conflicts(self) -> tuple[ToolConflict, ...]:
        """Every tool left out because its name was taken, in the order they came."""
        return tuple(self._conflicts)

    @property
    def similar_names(self) -> tuple[ToolConflict, ...]:
        """Every kept tool whose name differs from an earlier one only by letter case."""
        return tuple(self._similar)

    def get(self, name: str) -> CustomTool | None:
        """The tool called ``name``, or ``None``."""
        entry = self._entries.get(name)
        return entry.tool if entry is not None else None

    def lookup(self, name: str) -> RegisteredTool | None:
        """The entry for ``name`` (tool, origin, adapter), or ``None``."""
        return self._entries.get(name)

    def entry(self, name: str) -> RegisteredTool:
        """The entry for ``name``.

        Raises:
            KeyError: no such tool; the message lists close matches and every name.
        """
        entry = self._entries.get(name)
        if entry is None:
            raise KeyError(self.unknown(name)) from None
        return entry

    def adapter(self, name: str) -> CustomToolAdapter:
        """The kept :class:`~customtools.CustomToolAdapter` of ``name``.

        Raises:
            KeyError: no such tool (see :meth:`entry`).
        """
        return self.entry(name).adapter

    def unknown(self, name: str) -> str:
        """The message for a name no tool has: close matches, then every name."""
        close = difflib.get_close_matches(name, self._entries, n=3)
        hint = f"; did you mean {', '.join(map(repr, close))}?" if close else ""
        known = ", ".join(self._entries) or "none"
        return f"no tool named {name!r}{hint} (tools: {known})"

    async def call(
        self,
        name: str,
        tool_call_id: str,
        params: Any,
        *,
        signal: Any = None,
        on_update: UpdateCallback | None = None,
        ctx: Any = None,
    ) -> ToolResult:
        """Run ``name`` through its kept adapter (see :meth:`CustomToolAdapter.execute`).

        Raises:
            KeyError: no such tool (see :meth:`entry`).
        """
        return await self.entry(name).adapter.execute(
            tool_call_id, params, signal=signal, on_update=on_update, ctx=ctx
        )
