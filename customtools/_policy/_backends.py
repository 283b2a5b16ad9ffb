r"""Where the execution policy keeps its state: four small interfaces and their in-memory
implementations.

Each interface is what a shared backend (one store for every replica) implements too; the
in-memory ones serve one process. :class:`MemoryBackend` bundles the four, and a
:class:`~customtools.Policy` gets one unless it is given a backend.

- :class:`Slots` of :class:`Gate`\ s: concurrency caps, first in first out, weighted.
- :class:`Rates`: calls per window.
- :class:`ResultStore`: trimmed results kept whole, content-addressed, with a TTL.
- :class:`ResultCache`: results of cacheable tools, with a TTL and a size bound.
"""

from __future__ import annotations

import collections
import dataclasses
import hashlib
import itertools
import time
from collections.abc import Hashable
from typing import TYPE_CHECKING, Any, NoReturn, Protocol

_monotonic = time.monotonic
# An entry of the in-memory cache: a cached result, its expiry (time.monotonic), the digest
# and size it was stored with, its serial (its place in the order), scope, key and alias.
Entry = tuple[Any, ...]
RESULT, EXPIRY, DIGEST, SIZE, SERIAL, SCOPE, KEY, ALIAS = range(8)
_DIGESTS = 8  # digests of one scope whose aliases are kept (a reload makes a new one)

if TYPE_CHECKING:
    from customtools._content import ToolResult

__all__ = [
    "Gate",
    "MemoryBackend",
    "MemoryCache",
    "MemoryGate",
    "MemoryRates",
    "MemorySlots",
    "MemoryStore",
    "PolicyBackend",
    "Rates",
    "ResultCache",
    "ResultStore",
    "Slots",
]


class Gate(Protocol):
    """One concurrency cap: ``limit`` units, granted first in, first out."""

    def try_acquire(self, weight: int) -> bool:
        """Take ``weight`` (at most the limit) units now if they are free and nobody waits
        (a shared backend may always answer ``False`` and do the work in :meth:`acquire`)."""
        ...

    async def acquire(self, weight: int) -> None:
        """Wait in line for ``weight`` units. Cancelling the wait leaves the line (and gives
        back units granted meanwhile)."""
        ...

    async def release(self, weight: int) -> None:
        """Give back ``weight`` units. Called shielded from cancellation, once per granted
        ``try_acquire`` or ``acquire``."""
        ...


class Slots(Protocol):
    """Concurrency caps by key."""

    def gate(self, key: str, limit: int) -> Gate:
        """The cap called ``key``, of ``limit`` units (built once per tool and kept)."""
        ...


class Rates(Protocol):
    """Calls per window, per key."""

    async def take(self, key: str, calls: int, per: float) -> float:
        """Count one call of ``key`` and return ``0.0`` when fewer than ``calls`` started in
        the last ``per`` seconds; else count nothing and return the seconds until one may."""
        ...


class ResultStore(Protocol):
    """Whole results, by content, for ``read_result``."""

    async def put(self, text: str, owner: str | None, ttl: float) -> str:
        """Keep ``text`` for ``ttl`` seconds, readable by ``owner``; return its handle."""
        ...

    async def get(self, handle: str, owner: str | None) -> str | None:
        """The text of ``handle`` if ``owner`` may read it and it has not expired."""
        ...


class ResultCache(Protocol):
    """Results of cacheable tools. ``scope`` is one tool of one pack; ``digest`` its current
    content: an entry stored under another digest is dropped when the scope is next used."""

    async def get(self, scope: str, digest: str, key: Hashable) -> ToolResult | None:
        """The live entry of ``key``, or ``None``."""
        ...

    async def put(
        self, scope: str, digest: str, key: Hashable, result: ToolResult, size: int, ttl: float
    ) -> str | None:
        """Keep ``result`` (about ``size`` bytes) for ``ttl`` seconds: ``None``, or why it
        was not kept (``"too-large"``, ``"not-json"``: the result's policy record says so)."""
        ...


class PolicyBackend(Protocol):
    """The four stores a policy uses."""

    slots: Slots
    rates: Rates
    results: ResultStore
    cache: ResultCache


# -- in memory -------------------------------------------------------------------------------


class _Waiter:
    __slots__ = ("event", "granted", "weight")

    def __init__(self, weight: int) -> None:
        import anyio

        self.weight = weight
        self.granted = False
        self.event = anyio.Event()


_SHUT = 1 << 48  # off a gate's free units while calls wait in line: newcomers queue too


class MemoryGate:
    """:class:`Gate` in this process: ``limit`` units, the ``waiters`` in line, and ``free``,
    what a newcomer may take at once (the adapter takes an uncontended one inline)."""

    __slots__ = ("free", "limit", "waiters")

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.free = limit
        self.waiters: collections.deque[_Waiter] = collections.deque()

    def try_acquire(self, weight: int) -> bool:
        if self.free < weight:
            return False
        self.free -= weight
        return True

    async def acquire(self, weight: int) -> None:
        if self.try_acquire(weight):
            return
        waiter = _Waiter(weight)
        if not self.waiters:
            self.free -= _SHUT
        self.waiters.append(waiter)
        try:
            await waiter.event.wait()
        except BaseException:
            if waiter.granted:
                self.give(weight)
            else:
                self.waiters.remove(waiter)
                if not self.waiters:
                    self.free += _SHUT
                self.wake()  # it may have held up smaller calls behind it
            raise

    async def release(self, weight: int) -> None:
        self.give(weight)

    def give(self, weight: int) -> None:
        """:meth:`release` without awaiting (the in-process path)."""
        self.free += weight
        if self.waiters:
            self.wake()

    def wake(self) -> None:
        """Grant the units now free to the calls in line, first in, first out."""
        waiters = self.waiters
        while waiters and waiters[0].weight <= self.free + _SHUT:
            waiter = waiters.popleft()
            self.free -= waiter.weight
            if not waiters:
                self.free += _SHUT
            waiter.granted = True
            waiter.event.set()

    @property
    def used(self) -> int:
        """Units in use (a diagnostic)."""
        return self.limit - self.free - (_SHUT if self.waiters else 0)

    @property
    def waiting(self) -> int:
        """Calls in line (a diagnostic)."""
        return len(self.waiters)


class MemorySlots:
    """:class:`Slots` in this process (one small record per key ever used)."""

    __slots__ = ("_gates",)

    def __init__(self) -> None:
        self._gates: dict[str, MemoryGate] = {}

    def gate(self, key: str, limit: int) -> MemoryGate:
        gate = self._gates.get(key)
        if gate is None:
            gate = self._gates[key] = MemoryGate(limit)
        elif gate.limit != limit:  # the host changed its policy: the newest limit holds
            gate.free += limit - gate.limit
            gate.limit = limit
            gate.wake()
        return gate


class MemoryRates:
    """:class:`Rates` in this process: a sliding window of start times per key."""

    __slots__ = ("_starts",)

    def __init__(self) -> None:
        self._starts: dict[str, collections.deque[float]] = {}

    async def take(self, key: str, calls: int, per: float) -> float:
        now = time.monotonic()
        starts = self._starts.setdefault(key, collections.deque())
        while starts and starts[0] <= now - per:
            starts.popleft()
        if len(starts) < calls:
            starts.append(now)
            return 0.0
        return max(starts[0] + per - now, 1e-3)


class _Stored:
    __slots__ = ("expires", "owners", "text")

    def __init__(self, text: str, expires: float) -> None:
        self.text = text
        self.expires = expires
        self.owners: set[str | None] = set()


class MemoryStore:
    """:class:`ResultStore` in this process, at most ``max_bytes`` of text (oldest out)."""

    __slots__ = ("_bytes", "_entries", "max_bytes")

    def __init__(self, max_bytes: int = 128 << 20) -> None:
        self.max_bytes = max_bytes
        self._entries: dict[str, _Stored] = {}
        self._bytes = 0

    async def put(self, text: str, owner: str | None, ttl: float) -> str:
        handle = "r-" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]
        now = time.monotonic()
        entry = self._entries.pop(handle, None)
        if entry is None:
            entry = _Stored(text, now + ttl)
            self._bytes += len(text)
        entry.expires = max(entry.expires, now + ttl)
        entry.owners.add(owner)
        self._entries[handle] = entry  # newest last
        for old in list(self._entries):
            held = self._entries[old]
            if self._bytes <= self.max_bytes and held.expires > now:
                break
            if old != handle:
                del self._entries[old]
                self._bytes -= len(held.text)
        return handle

    async def get(self, handle: str, owner: str | None) -> str | None:
        entry = self._entries.get(handle)
        if entry is None or owner not in entry.owners:
            return None
        if entry.expires <= time.monotonic():
            del self._entries[handle]
            self._bytes -= len(entry.text)
            return None
        return entry.text


def _refuse(self: Any, *args: Any, **kwargs: Any) -> NoReturn:
    raise TypeError(
        "this tool result came from the execution policy's cache and is shared by every hit:"
        " change a copy of it (dict(...) or copy.deepcopy(...))"
    )


class _ReadOnlyDict(dict):  # type: ignore[type-arg]
    """An object of a cached result: every hit shares it, so it refuses changes (a copy,
    ``dict(d)`` or ``copy.deepcopy(d)``, is an ordinary dict; its arrays are tuples)."""

    __slots__ = ()
    __setitem__ = __delitem__ = __ior__ = _refuse
    clear = pop = popitem = setdefault = update = _refuse

    def __reduce__(self) -> tuple[Any, ...]:
        return (dict, (dict(self),))


def _frozen(value: Any) -> Any:
    """A read-only copy of a result: JSON values, frozen dataclasses; else ``TypeError``."""
    kind = type(value)
    if kind is dict or kind is _ReadOnlyDict:
        return _ReadOnlyDict({name: _frozen(item) for name, item in value.items()})
    if kind is list or kind is tuple:
        return tuple(map(_frozen, value))
    if value is None or kind in (str, int, float, bool, bytes):
        return value
    if dataclasses.is_dataclass(value) and kind.__dataclass_params__.frozen:
        changes = {f.name: _frozen(getattr(value, f.name)) for f in dataclasses.fields(value)}
        return dataclasses.replace(value, **changes)  # type: ignore[type-var]
    raise TypeError(kind.__name__)


class MemoryCache:
    """:class:`ResultCache` in this process, at most ``max_bytes``, the oldest entry out first.
    Every hit shares one read-only copy of a result (one that is not JSON is not kept).

    Besides its key, an entry can be found under an alias (:meth:`index`): the caller, then the
    bytes of the arguments in the order the stored call gave them. A repeat in that order (a
    client's usual case) is then found without sorting its keys."""

    __slots__ = ("_bytes", "_index", "_order", "_serial", "_tables", "max_bytes")

    def __init__(self, max_bytes: int = 32 << 20) -> None:
        self.max_bytes = max_bytes
        # scope -> (its digest, {key: entry}); scope -> {digest: {caller: {bytes: entry}}};
        # serial -> entry, oldest first (an entry's fields: Entry)
        self._tables: dict[str, tuple[str, dict[Hashable, Entry]]] = {}
        self._index: dict[str, dict[str, dict[Any, dict[bytes, Entry]]]] = {}
        self._order: collections.OrderedDict[int, Entry] = collections.OrderedDict()
        self._serial = itertools.count()
        self._bytes = 0

    def index(self, scope: str, digest: str) -> dict[Any, dict[bytes, Entry]]:
        """The aliases of ``scope``'s entries stored under ``digest``: caller -> the
        arguments' bytes as given -> entry; an entry there may have expired.

        The same dict for as long as the digest is one of the scope's last
        :data:`_DIGESTS` (an adapter keeps it); empty while another digest is current."""
        digests = self._index.setdefault(scope, {})
        aliases = digests.get(digest)
        if aliases is None:
            if len(digests) >= _DIGESTS:  # a digest long gone: its adapters miss from now on
                digests.pop(next(iter(digests))).clear()
            aliases = digests[digest] = {}
        return aliases

    def _table(self, scope: str, digest: str) -> dict[Hashable, Entry]:
        table = self._tables.get(scope)
        if table is None or table[0] != digest:
            for entry in list(table[1].values()) if table else ():  # the pack changed
                self._drop(entry)
            table = self._tables[scope] = (digest, {})
        return table[1]

    def _drop(self, entry: Entry) -> None:
        scope, key, alias = entry[SCOPE], entry[KEY], entry[ALIAS]
        table = self._tables[scope][1]
        if table.get(key) is entry:
            del table[key]
        if alias is not None:
            aliases = self._index[scope].get(entry[DIGEST], {})
            forms = aliases.get(alias[0])
            if forms is not None and forms.get(alias[1]) is entry:
                del forms[alias[1]]
                if not forms:
                    del aliases[alias[0]]
        self._bytes -= entry[SIZE]
        del self._order[entry[SERIAL]]

    async def get(self, scope: str, digest: str, key: Hashable) -> ToolResult | None:
        return self.lookup(scope, digest, key)

    def lookup(self, scope: str, digest: str, key: Hashable) -> ToolResult | None:
        """:meth:`get` without awaiting (the adapter's path)."""
        table = self._tables.get(scope)
        if table is None or table[0] != digest:
            self._table(scope, digest)
            return None
        entry = table[1].get(key)
        if entry is None:
            return None
        if entry[EXPIRY] <= _monotonic():
            self._drop(entry)
            return None
        return entry[RESULT]  # type: ignore[no-any-return]

    async def put(
        self,
        scope: str,
        digest: str,
        key: Hashable,
        result: ToolResult,
        size: int,
        ttl: float,
        alias: tuple[Any, bytes] | None = None,
    ) -> str | None:
        """:meth:`ResultCache.put`; ``alias``: (caller, the arguments' bytes as given)."""
        if size > self.max_bytes // 4:
            return "too-large"  # one result may not push out most of the cache
        try:
            kept = _frozen(result)
        except Exception:  # not JSON (it could change under the hits), or a tool's dataclass
            return "not-json"
        table = self._table(scope, digest)
        old = table.get(key)
        if old is not None:
            self._drop(old)
        if alias is not None:
            old = self.index(scope, digest).get(alias[0], {}).get(alias[1])
            if old is not None:
                self._drop(old)
        order = self._order
        while self._bytes + size > self.max_bytes and order:
            self._drop(next(iter(order.values())))
        serial = next(self._serial)
        entry = (kept, _monotonic() + ttl, digest, size, serial, scope, key, alias)
        table[key] = order[serial] = entry
        if alias is not None:
            self.index(scope, digest).setdefault(alias[0], {})[alias[1]] = entry
        self._bytes += size
        return None

    def __len__(self) -> int:
        return len(self._order)


class MemoryBackend:
    """The four in-memory stores (:class:`PolicyBackend`) of one process."""

    __slots__ = ("cache", "rates", "results", "slots")

    def __init__(self, *, cache_max_bytes: int = 32 << 20, store_max_bytes: int = 128 << 20):
        self.slots = MemorySlots()
        self.rates = MemoryRates()
        self.results = MemoryStore(store_max_bytes)
        self.cache = MemoryCache(cache_max_bytes)
