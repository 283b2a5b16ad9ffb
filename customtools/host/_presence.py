"""Client presence: connections, subscriptions and the disconnect grace window.

The protocol leaves *when* a client stops being active to the host. This helper implements the
usual policy, driven by an injectable clock and free of timers:

* a client is **active** while at least one of its connections is live;
* when its last connection closes it enters **grace** (``last_seen`` = now) and *stays in*
  ``activeClients``; it is released when the grace window elapses without a return;
* a reconnect ends grace; sessions the client was active in but did not resubscribe to (on
  any of its live connections) are released at once;
* an explicit unsubscribe releases the client from that channel unless another live connection
  of the same client is still subscribed to it;
* the remaining window is always measured from ``last_seen``: re-arming a timer never grants a
  fresh full window.

"Released" means the host calls :meth:`HostSession.remove_client
<customtools.host.HostSession.remove_client>`.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field

import anyio

__all__ = ["ClientPresence"]


@dataclass
class _Record:
    connections: dict[str, set[str]] = field(default_factory=dict)
    last_seen: float | None = None


class ClientPresence:
    """Who is connected, who is in grace, and for how long.

    Args:
        grace_seconds: how long a disconnected client stays active (host-defined; 30 s is a
            common choice).
        clock: seconds on a monotonic clock (tests pass a fake one).
    """

    def __init__(
        self, *, grace_seconds: float = 30.0, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.grace_seconds = grace_seconds
        self._clock = clock
        self._clients: dict[str, _Record] = {}
        self._owner: dict[str, str] = {}

    def connected(
        self, client_id: str, connection_id: str, subscriptions: Iterable[str] = ()
    ) -> None:
        """A connection of ``client_id`` opened (``initialize``); grace, if any, ends."""
        record = self._clients.setdefault(client_id, _Record())
        record.connections[connection_id] = set(subscriptions)
        record.last_seen = None
        self._owner[connection_id] = client_id

    def subscribe(self, connection_id: str, uri: str) -> None:
        """The connection subscribed to a channel."""
        client_id = self._owner[connection_id]
        self._clients[client_id].connections[connection_id].add(uri)

    def unsubscribe(self, connection_id: str, uri: str) -> bool:
        """The connection unsubscribed from ``uri``.

        Returns:
            True when the client should be released from ``uri`` (no other live connection of
            the same client is still subscribed to it).
        """
        client_id = self._owner[connection_id]
        connections = self._clients[client_id].connections
        connections[connection_id].discard(uri)
        return not any(uri in subs for subs in connections.values())

    def disconnected(self, connection_id: str) -> None:
        """A connection closed; if it was the client's last one, grace starts now."""
        client_id = self._owner.pop(connection_id, None)
        if client_id is None:
            return
        record = self._clients[client_id]
        record.connections.pop(connection_id, None)
        if not record.connections:
            record.last_seen = self._clock()

    def reconnected(
        self,
        client_id: str,
        connection_id: str,
        subscriptions: Iterable[str],
        *,
        active_in: Iterable[str],
    ) -> list[str]:
        """A client came back (``reconnect``) with the channels it resubscribed.

        Args:
            client_id: the returning client.
            connection_id: its new connection.
            subscriptions: the channel URIs the reconnect restored.
            active_in: the sessions where the client is still listed as active.

        Returns:
            The sessions in ``active_in`` that none of the client's live connections
            subscribes to: release the client from them now.
        """
        self.connected(client_id, connection_id, subscriptions)
        live = set().union(*self._clients[client_id].connections.values())
        return [uri for uri in active_in if uri not in live]

    def in_grace(self, client_id: str) -> bool:
        """True while the client has no live connection but its window has not been released."""
        record = self._clients.get(client_id)
        return record is not None and record.last_seen is not None

    def remaining(self, client_id: str) -> float | None:
        """Seconds left in the client's grace window (``None`` when it is not in grace)."""
        record = self._clients.get(client_id)
        if record is None or record.last_seen is None:
            return None
        return max(0.0, self.grace_seconds - (self._clock() - record.last_seen))

    def expired(self) -> list[str]:
        """Clients whose grace window has elapsed; they are forgotten (release them)."""
        done = [cid for cid in self._clients if self.remaining(cid) == 0.0]
        for client_id in done:
            del self._clients[client_id]
        return done

    async def watch(self, client_id: str, release: Callable[[str], Awaitable[None] | None]) -> bool:
        """Sleep through the client's remaining grace window, then release it if still absent.

        Returns:
            True if ``release(client_id)`` was called, False if the client came back first.
        """
        while True:
            left = self.remaining(client_id)
            if left is None:
                return False
            if left <= 0:
                self._clients.pop(client_id, None)
                outcome = release(client_id)
                if outcome is not None:
                    await outcome
                return True
            await anyio.sleep(left)
