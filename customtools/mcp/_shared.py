"""What a server remembers between requests, and the interfaces that let replicas share it.

A served call needs little memory across requests: the used ``requestState`` nonces (replay
protection, :class:`NonceStore`), the tools each client made visible (:class:`VisibilityStore`),
the ``list_changed`` fan-out (the SDK's ``SubscriptionBus``) and, for handshake-era sessions,
the events a reconnecting client may have missed (the SDK's ``EventStore``). One process keeps
them in memory (:class:`MemoryNonces`, :class:`MemoryVisibility`, the SDK's in-memory bus, no
event store); replicas behind a load balancer share them through Redis
(:mod:`customtools.mcp._redis`, ``serve --redis``; see docs/deploy.md).

Every store is bounded: entries expire, and the in-memory ones also cap how many they hold.
A shared store that cannot answer raises :class:`SharedStateError`; each feature says what
that means for it (a ``requestState`` is then refused, never accepted unchecked).
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Iterable
from typing import Protocol

from customtools._errors import CustomToolsError

__all__ = [
    "MAX_USED_STATES",
    "MAX_VISIBILITY_CLIENTS",
    "VISIBILITY_TTL",
    "MemoryNonces",
    "MemoryVisibility",
    "NonceStore",
    "SharedStateError",
    "VisibilityStore",
]

MAX_USED_STATES = 100_000
"""How many used ``requestState`` nonces one process remembers (to refuse replays)."""

VISIBILITY_TTL = 3600.0
"""Seconds a client's visible tools are kept after its last change of them."""

MAX_VISIBILITY_CLIENTS = 10_000
"""How many clients' visible tools one process remembers (the oldest are forgotten first)."""


class SharedStateError(CustomToolsError, ConnectionError):
    """The state replicas share (Redis) cannot be reached, or did not answer in time.

    Raised at start when the server cannot connect (the message names the URL), and by a
    shared store that cannot answer mid-run; each feature's behaviour then is documented in
    docs/deploy.md. The connection is retried on its own.
    """


class NonceStore(Protocol):
    """The used ``requestState`` nonces: one process's, or shared by replicas."""

    async def claim(self, nonce: str, expiry: float) -> bool:
        """Record ``nonce`` as used until ``expiry`` (seconds since the epoch), atomically.

        Returns:
            ``False`` when it was already used (a replay).

        Raises:
            SharedStateError: the store cannot say (the state must then be refused).
        """
        ...


class VisibilityStore(Protocol):
    """The tools each client made visible (callable and listed) beyond the default set, for
    example through a search tool. Keyed by a client identity the caller chooses (an
    authenticated principal); kept :data:`VISIBILITY_TTL` seconds after the last change."""

    async def show(self, client: str, names: Iterable[str]) -> bool:
        """Add ``names`` to what ``client`` sees (and keep its set for another TTL); whether
        that changed its set (its listing then changed: a ``list_changed`` is due)."""
        ...

    async def shown(self, client: str) -> frozenset[str]:
        """The names ``client`` made visible (empty when none, or expired)."""
        ...

    async def forget(self, client: str) -> None:
        """Drop everything ``client`` made visible."""
        ...


class MemoryNonces:
    """The used nonces of this process: each kept until its state expires, at most
    :data:`MAX_USED_STATES` (the oldest are forgotten first)."""

    __slots__ = ("_used",)

    def __init__(self) -> None:
        # An OrderedDict, not a dict: the oldest entry of a dict whose front was deleted is
        # found by skipping the holes (O(n) per call at the cap); here it is O(1).
        self._used: OrderedDict[str, float] = OrderedDict()

    async def claim(self, nonce: str, expiry: float) -> bool:
        """See :meth:`NonceStore.claim`."""
        used = self._used
        if nonce in used:
            return False
        now = time.time()
        while used:  # insertion order is expiry order: the oldest go first
            oldest = next(iter(used))
            if used[oldest] >= now and len(used) < MAX_USED_STATES:
                break
            used.popitem(last=False)
        used[nonce] = expiry
        return True


class MemoryVisibility:
    """The tools each client made visible, in this process: kept :data:`VISIBILITY_TTL`
    seconds after the last change, for at most :data:`MAX_VISIBILITY_CLIENTS` clients."""

    __slots__ = ("_clients", "_ttl")

    def __init__(self, *, ttl: float = VISIBILITY_TTL) -> None:
        self._ttl = ttl
        self._clients: OrderedDict[str, tuple[float, frozenset[str]]] = OrderedDict()

    async def show(self, client: str, names: Iterable[str]) -> bool:
        """See :meth:`VisibilityStore.show`."""
        clients = self._clients
        now = time.monotonic()
        previous = clients.pop(client, None)
        shown = previous[1] if previous is not None and previous[0] > now else frozenset()
        while clients:  # insertion order is expiry order: the oldest go first
            oldest = next(iter(clients))
            if clients[oldest][0] > now and len(clients) < MAX_VISIBILITY_CLIENTS:
                break
            clients.popitem(last=False)
        grown = shown | frozenset(names)
        clients[client] = (now + self._ttl, grown)
        return len(grown) != len(shown)

    async def shown(self, client: str) -> frozenset[str]:
        """See :meth:`VisibilityStore.shown`."""
        entry = self._clients.get(client)
        if entry is None or entry[0] <= time.monotonic():
            return frozenset()
        return entry[1]

    async def forget(self, client: str) -> None:
        """See :meth:`VisibilityStore.forget`."""
        self._clients.pop(client, None)
