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

:meth:`ToolRegistry.search` ranks the tools for a query from their definitions alone (so a
lazily loaded tool is found without importing it): BM25 over a weighted bag of words of each
tool's name, label, description and parameter names and descriptions, with a light plural
folding and prefix matches at half weight. It is a few dozen lines here rather than a
dependency: the libraries that do BM25 in Python either score every document per query
(``rank_bm25``) or need numpy and scipy (``bm25s``), for a few thousand short documents.

The registry sits in the execution layer: it takes a load result by shape (anything with
``.tools`` of records carrying ``.tool`` and ``.path``, as
:class:`~customtools.LoadResult` has), never by import.
"""

from __future__ import annotations

import bisect
import heapq
import math
import re
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
    "SearchIndex",
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

    @property
    def path(self) -> str:
        """Where it was found."""


@runtime_checkable
class ToolsLike(Protocol):
    """Something holding load records, like :class:`~customtools.LoadResult`."""

    @property
    def tools(self) -> Iterable[LoadedToolLike]:
        """The records, in precedence order."""


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
        name: the tool's name.
        origin: its path or other origin, when known.
        record: the load record it was registered from (a :class:`~customtools.LoadedTool`),
            if any.
    """

    __slots__ = ("_adapter", "_options", "_tool", "alias_of", "name", "origin", "record")

    def __init__(
        self,
        tool: CustomTool | None,
        origin: str | None,
        options: Mapping[str, Any],
        record: Any = None,
        alias_of: str | None = None,
        name: str = "",
    ) -> None:
        self._tool = tool
        self.name = name or tool.name  # type: ignore[union-attr]
        self.origin = origin
        self.record = record
        self.alias_of = alias_of
        self._options = options
        self._adapter: CustomToolAdapter | None = None

    def __repr__(self) -> str:
        return f"<RegisteredTool {self.name!r}>"

    @property
    def tool(self) -> CustomTool:
        """The tool (a lazily loaded one is built from its load record on first read)."""
        return self._tool if self._tool is not None else self.record.tool

    @property
    def adapter(self) -> CustomToolAdapter:
        """The one adapter that runs this tool (built on first use, then kept)."""
        adapter = self._adapter
        if adapter is None:
            options = self._options
            if options.get("policy") is not None and "pack" not in options:
                # The execution policy reads the pack's declarations (only when one is set).
                options = {**options, "pack": getattr(self.record, "pack", None)}
            adapter = self._adapter = CustomToolAdapter(self.tool, **options)
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
        if name in self._reserved:
            left = _the(origin, "this tool")
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
                error=f"tool name {name!r} is already taken by {taken};"
                f" {_the(origin, 'this tool')} was left out:"
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
            ``update_interval``, ``policy``, ...). With a ``policy``, each tool's adapter
            also gets its load record's ``pack`` (its pack's declarations).

    Raises:
        TypeError: an item is neither a tool, a load record nor a function.
        ToolDefinitionError: a function cannot be made a tool (from :func:`~customtools.tool`).
    """

    __slots__ = ("_conflicts", "_entries", "_index", "_options", "_rule", "_similar")

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
        self._index: SearchIndex | None = None
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
            if callable(item):  # (a tool or a load record is not)
                from customtools._function import tool

                item = tool(item)
            try:
                conflict = self.add(item)
            except TypeError:
                raise TypeError(
                    "ToolRegistry takes CustomTool objects, load records or functions,"
                    f" got {type(item).__name__}"
                ) from None
            if conflict is not None:
                found.append(conflict)
        return found

    def add(
        self, tool: CustomTool | LoadedToolLike, *, origin: str | None = None, record: Any = None
    ) -> ToolConflict | None:
        """Register ``tool`` unless the name rule leaves it out; returns that conflict.

        A kept name that differs from another only by letter case is recorded in
        :attr:`similar_names`.

        Args:
            tool: the tool; or a load record, registered by its name (a
                :class:`~customtools.LoadedTool`'s lazily loaded tool is built when read,
                not here).
            origin: where it came from (a path), for conflict messages; a record's path by
                default.
            record: the load record it came from, kept as :attr:`RegisteredTool.record`.
        """
        held: Any = tool
        if isinstance(held, CustomTool):
            built: CustomTool | None = held
            names: Any = held
        elif hasattr(type(held), "former_names"):  # a LoadedTool: its tool is read when needed
            built, names, record = None, held, held
        elif isinstance(held, LoadedToolLike) and isinstance(held.tool, CustomTool):
            built = names = held.tool
            record = held
        else:
            raise TypeError(f"ToolRegistry.add needs a CustomTool, got {type(tool).__name__}")
        if origin is None and record is held:
            origin = held.path
        conflict = self._add(names.name, built, origin, record, None)
        if conflict is None and names.former_names:
            for alias in (built or record.tool).deprecated_aliases():
                self._add(alias.name, alias, origin, record, names.name)
        return conflict

    def _add(
        self,
        name: str,
        tool: CustomTool | None,
        origin: str | None,
        record: Any,
        alias_of: str | None,
    ) -> ToolConflict | None:
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
        self._entries[name] = RegisteredTool(tool, origin, self._options, record, alias_of, name)
        self._index = None
        return None

    def remove(self, name: str) -> CustomTool | None:
        """Take ``name`` (and its deprecated aliases) out of the registry; returns its tool
        (``None`` if there was none)."""
        entry = self._entries.pop(name, None)
        self._rule.release(name)
        for alias in [key for key, held in self._entries.items() if held.alias_of == name]:
            del self._entries[alias]
            self._rule.release(alias)
        self._index = None
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

    def search(self, query: str, limit: int = 10) -> tuple[CustomTool, ...]:
        """The tools that best match ``query``, best first (at most ``limit``).

        Ranked by BM25 over each tool's name and parameter names (weighing most), label,
        description and parameter descriptions; words are split at spaces, punctuation,
        ``snake_case`` and ``camelCase``, compared without case and plural ``s``; a word of
        three letters or more also matches the words it begins, at half weight; the exact
        name of a tool ranks it first. Equal scores keep registration order, so the answer
        is deterministic. Only definitions are read: lazily loaded tools stay unimported.

        Raises:
            ValueError: ``limit`` is not a positive integer.
        """
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise ValueError(f"limit must be a positive integer, got {limit!r}")
        index = self._index
        if index is None:
            tools = [e.tool for e in self._entries.values() if e.alias_of is None]
            index = self._index = SearchIndex(tools)
        return tuple(index.tools[i] for i in index.rank(query, limit))

    def unknown(self, name: str) -> str:
        """The message for a name no tool has: close matches, then every name."""
        import difflib

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


# -- search ---------------------------------------------------------------------------------

_WORD = re.compile(r"[^\W_]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_STOP_WORDS = frozenset((
    "a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "in", "into", "is", "it",
    "its", "of", "on", "or", "that", "the", "this", "to", "with",
))  # fmt: skip
_K1 = 1.2
_B = 0.75
_MAX_PREFIX_MATCHES = 64


def _words(text: Any) -> list[str]:
    """The search words of ``text``: split, case-folded, stop words out, plural ``s`` off."""
    if not isinstance(text, str):
        return []
    out = []
    for word in _WORD.findall(_CAMEL.sub(" ", text)):
        word = word.casefold()
        if word in _STOP_WORDS:
            continue
        if len(word) > 3 and word[-1] == "s" and word[-2] != "s":
            word = word[:-1]
        out.append(word)
    return out


def _parameter_words(schema: Any, names: list[str], texts: list[str], depth: int = 0) -> None:
    """The property names and descriptions of a schema (nested objects and items too)."""
    if not isinstance(schema, Mapping) or depth > 4:
        return
    properties = schema.get("properties")
    if isinstance(properties, Mapping):
        for name, sub in properties.items():
            names += _words(name)
            if isinstance(sub, Mapping):
                texts += _words(sub.get("description"))
                _parameter_words(sub, names, texts, depth + 1)
    items = schema.get("items")
    if isinstance(items, Mapping):
        _parameter_words(items, names, texts, depth + 1)


class SearchIndex:
    """An inverted index of tool definitions for :meth:`ToolRegistry.search`, built once.

    Each word's postings are kept by impact (its BM25 contribution to a tool, highest first)
    and by tool, so a query reads them with Fagin's threshold algorithm: in rounds down every
    list at once, scoring each tool the first time it is seen, until the best ``limit``
    scores beat what any tool not yet seen could reach. The answer is exact (ties by
    registration order); a word found in most tools costs about ``limit`` steps, not one
    step per tool.
    """

    __slots__ = ("_by_impact", "_impacts", "_names", "_vocabulary", "tools")

    def __init__(self, tools: Iterable[CustomTool]) -> None:
        self.tools = tuple(tools)
        bags: list[dict[str, float]] = []
        frequency: dict[str, int] = {}
        for tool in self.tools:
            names: list[str] = []
            texts: list[str] = []
            _parameter_words(tool.parameters, names, texts)
            bag: dict[str, float] = {}
            for words, weight in (
                (_words(tool.name), 3.0),
                (_words(tool.label) if tool.label != tool.name else [], 2.0),
                (names, 2.0),
                (_words(tool.description), 1.0),
                (texts, 1.0),
            ):
                for word in words:
                    bag[word] = bag.get(word, 0.0) + weight
            bags.append(bag)
            for word in bag:
                frequency[word] = frequency.get(word, 0) + 1
        count = len(bags) or 1
        average = sum(sum(bag.values()) for bag in bags) / count or 1.0
        idf = {w: math.log(1 + (count - df + 0.5) / (df + 0.5)) for w, df in frequency.items()}
        impacts: dict[str, dict[int, float]] = {word: {} for word in frequency}
        for doc, bag in enumerate(bags):
            norm = _K1 * (1 - _B + _B * sum(bag.values()) / average)
            for word, tf in bag.items():
                impacts[word][doc] = idf[word] * tf * (_K1 + 1) / (tf + norm)
        self._impacts = impacts
        self._by_impact = {
            word: sorted(((-impact, doc) for doc, impact in postings.items()))
            for word, postings in impacts.items()
        }
        self._vocabulary = sorted(impacts)
        self._names = {tool.name.casefold(): doc for doc, tool in enumerate(self.tools)}

    def _terms(self, query: str) -> list[tuple[str, float]]:
        """The indexed words of ``query`` with their weights: a word that is not indexed
        stands for the words it begins (at half weight)."""
        terms: dict[str, float] = {}
        for word in _words(query):
            if word in self._impacts:
                terms[word] = max(terms.get(word, 0.0), 1.0)
            elif len(word) >= 3:
                start = bisect.bisect_left(self._vocabulary, word)
                for other in self._vocabulary[start : start + _MAX_PREFIX_MATCHES]:
                    if not other.startswith(word):
                        break
                    terms[other] = max(terms.get(other, 0.0), 0.5)
        return list(terms.items())

    def rank(self, query: str, limit: int) -> list[int]:
        """The positions of the best ``limit`` tools for ``query``, best first."""
        lists = [(self._by_impact[t], self._impacts[t], weight) for t, weight in self._terms(query)]
        best: list[tuple[float, int]] = []  # a min-heap of (score, -position): the worst first
        seen: set[int] = set()
        depth = 0
        while True:
            reachable = 0.0  # the most a tool not seen yet can score
            for by_impact, _, weight in lists:
                if depth >= len(by_impact):
                    continue
                negative, doc = by_impact[depth]
                reachable -= negative * weight
                if doc in seen:
                    continue
                seen.add(doc)
                score = sum(w * impacts.get(doc, 0.0) for _, impacts, w in lists)
                if len(best) < limit:
                    heapq.heappush(best, (score, -doc))
                elif (score, -doc) > best[0]:
                    heapq.heapreplace(best, (score, -doc))
            if reachable == 0.0 or (len(best) == limit and best[0][0] > reachable):
                break
            depth += 1
        ranked = [-doc for _, doc in sorted(best, reverse=True)]
        exact = self._names.get(query.strip().casefold())
        if exact is not None:
            ranked = [exact, *(doc for doc in ranked if doc != exact)][:limit]
        return ranked
