"""State that ``serve`` replicas share through Redis or Valkey (the ``redis`` extra).

:class:`RedisState` is the one connection of a server process and the namespace of its keys
(``customtools:<namespace>:...``, one namespace per deployment). Through it replicas share:

* the ``requestState`` seal key, unless one is given (created once, ``SET NX``);
* the used ``requestState`` nonces (:class:`RedisNonces`: ``SET NX PXAT`` with the state's
  expiry, so a replay is refused by every replica);
* the ``list_changed`` fan-out (:class:`RedisBus`, the SDK's ``SubscriptionBus`` over
  pub/sub): a change on one replica reaches the clients of all;
* the tools each client made visible (:class:`RedisVisibility`);
* the events of handshake-era SSE streams (:class:`RedisEventStore`), so a client that
  reconnects with ``Last-Event-ID`` gets what it missed.

Every key has a TTL, and streams are trimmed; nothing grows without bound. Every operation is
bounded by :data:`DEFAULT_TIMEOUT`; a fault is counted per feature (:attr:`RedisState.faults`),
logged once per outage on the ``customtools.mcp`` logger, and handled as docs/deploy.md says.
The client reconnects on its own (a failed command is retried once on a fresh connection,
the subscriber loop backs off and subscribes again).

redis-py's client is asyncio-only, so this module is too: it raises a clear error on trio
(``customtools serve`` runs on asyncio). Tool execution stays in the replicas; Redis only
holds this small state.
"""

from __future__ import annotations

import base64
import collections
import contextlib
import contextvars
import hashlib
import itertools
import json
import logging
import re
import secrets
import sys
from collections.abc import Awaitable, Callable, Hashable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlsplit

import anyio
import anyio.lowlevel

try:
    import redis.asyncio as aioredis
    from redis.asyncio.retry import Retry
    from redis.backoff import ExponentialBackoff
    from redis.exceptions import RedisError
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "shared state on Redis needs the redis client, which is not installed:"
        " pip install 'customtools[redis]'"
    ) from exc

from mcp.server.streamable_http import EventCallback, EventId, EventMessage, EventStore, StreamId
from mcp.shared.subscriptions import (
    PromptsListChanged,
    ResourcesListChanged,
    ResourceUpdated,
    ServerEvent,
    ToolsListChanged,
)
from mcp_types.jsonrpc import JSONRPCMessage, jsonrpc_message_adapter

from customtools._content import ToolResult

if TYPE_CHECKING:
    from customtools._policy import Rates, ResultCache, ResultStore, Slots
from customtools._format import describe_exception
from customtools.mcp._shared import VISIBILITY_TTL, SharedStateError

__all__ = [
    "DEFAULT_TIMEOUT",
    "EVENT_TTL",
    "KEY_PREFIX",
    "LEASE",
    "MAX_STREAM_EVENTS",
    "EventScopeMiddleware",
    "RedisBus",
    "RedisEventStore",
    "RedisGate",
    "RedisNonces",
    "RedisPolicyBackend",
    "RedisRates",
    "RedisResultCache",
    "RedisResultStore",
    "RedisSlots",
    "RedisState",
    "RedisVisibility",
    "redacted_url",
]

_log = logging.getLogger("customtools.mcp")

T = TypeVar("T")

DEFAULT_TIMEOUT = 2.0
"""Seconds one Redis operation may take before it counts as a fault."""

KEY_PREFIX = "customtools"
"""The first part of every key (``customtools:<namespace>:...``)."""

EVENT_TTL = 1800.0
"""Seconds the events of an SSE stream are kept after its last one (the SDK's idle timeout
of a handshake-era session)."""

MAX_STREAM_EVENTS = 1000
"""The most events kept per SSE stream (older ones are trimmed first)."""

_NAMESPACE_RE = re.compile(r"^[A-Za-z0-9._-]{1,64}$")
_ENTRY_RE = re.compile(r"^[0-9]{1,20}-[0-9]{1,20}$")  # a Redis stream entry id
_SEAL_KEY_BYTES = 32
_BACKOFF_CAP = 2.0  # seconds between two attempts of the subscriber to subscribe again
_POLL = 1.0  # seconds the subscriber waits for a message before it looks again

# The scope of the SSE events stored for one handshake-era session: set per session-opening
# request (EventScopeMiddleware) and inherited by the session's message router, so stream ids
# (request ids, repeated across sessions) never mix sessions' events.
_EVENT_SCOPE: contextvars.ContextVar[str] = contextvars.ContextVar("customtools_event_scope")


def redacted_url(url: str) -> str:
    """``url`` without its password (for messages and logs)."""
    try:
        parts = urlsplit(url)
        if parts.password is None:
            return url
        user = parts.username or ""
        host = parts.hostname or ""
        if ":" in host:
            host = f"[{host}]"
        port = f":{parts.port}" if parts.port is not None else ""
        return parts._replace(netloc=f"{user}:***@{host}{port}").geturl()
    except ValueError:
        return "<an unreadable Redis URL>"


def _require_asyncio() -> None:
    trio = sys.modules.get("trio")
    if trio is not None and trio.lowlevel.in_trio_run():
        raise RuntimeError(
            "shared state on Redis runs on asyncio only (redis-py's client is asyncio-only);"
            " run the server on the asyncio backend (customtools serve does)"
        )


class RedisState:
    """One server process's connection to the Redis (or Valkey) its replicas share, and the
    namespace of its keys. An async context manager: entering connects (and checks the
    server answers), leaving closes.

    What replicas share through it is described in docs/deploy.md; the stores are
    :attr:`nonces`, :attr:`visibility`, :attr:`bus` and :attr:`events`. Other shared
    features (the execution policy's backends) build on :meth:`key` and :meth:`call`.

    Args:
        url: ``redis://[user:password@]host:port/db``, ``rediss://`` (TLS) or
            ``unix:///path/to/socket``.
        namespace: this deployment's part of every key: replicas of one deployment share
            it, different deployments on one Redis must not.
        timeout: seconds one operation may take.
        state_key: the ``requestState`` seal key; by default the deployment's key stored in
            Redis (created by the first replica) is used.

    Raises:
        ValueError: the namespace or the URL is not usable (the message names it).
    """

    def __init__(
        self,
        url: str,
        *,
        namespace: str = "customtools",
        timeout: float = DEFAULT_TIMEOUT,
        state_key: bytes | None = None,
    ) -> None:
        if not _NAMESPACE_RE.match(namespace):
            raise ValueError(
                f"Redis namespace {namespace!r} is not usable: use 1-64 letters, digits, '.',"
                " '_' or '-'"
            )
        if not timeout > 0:
            raise ValueError("the Redis timeout must be a positive number of seconds")
        self.url = url
        self.shown_url = redacted_url(url)
        try:
            self._connection = aioredis.Redis.from_url(
                url,
                socket_timeout=timeout,
                socket_connect_timeout=timeout,
                # A command on a connection Redis dropped (a restart) is retried once on a
                # fresh one; anything longer is a fault, bounded by the timeout.
                retry=Retry(ExponentialBackoff(cap=0.2, base=0.02), 1),
                health_check_interval=10,
            )
        except ValueError as exc:
            raise ValueError(f"Redis URL {self.shown_url!r} is not usable: {exc}") from None
        self.namespace = namespace
        self.timeout = timeout
        self.state_key: bytes | None = state_key
        """The ``requestState`` seal key (known once connected)."""
        self._client: aioredis.Redis | None = None
        self._faults: dict[str, int] = {}
        self._down: set[str] = set()
        self._stack: contextlib.AsyncExitStack | None = None
        self.nonces = RedisNonces(self)
        """The used ``requestState`` nonces."""
        self.visibility = RedisVisibility(self)
        """The tools each client made visible."""
        self.bus = RedisBus(self)
        """The ``list_changed`` fan-out (an SDK ``SubscriptionBus``)."""
        self.events = RedisEventStore(self)
        """The events of handshake-era SSE streams (an SDK ``EventStore``)."""

    def __repr__(self) -> str:
        return f"<RedisState {self.shown_url} namespace={self.namespace!r}>"

    @property
    def client(self) -> aioredis.Redis:
        """The redis-py asyncio client (connected: use it inside the ``async with``)."""
        if self._client is None:
            raise RuntimeError(f"{self!r} is not connected: use it in `async with`")
        return self._client

    @property
    def faults(self) -> Mapping[str, int]:
        """How many operations failed, per feature (each fault was handled as documented)."""
        return dict(self._faults)

    def key(self, *parts: str) -> str:
        """The namespaced key ``customtools:<namespace>:<part>:<part>...``."""
        return ":".join((KEY_PREFIX, self.namespace, *parts))

    async def __aenter__(self) -> RedisState:
        _require_asyncio()
        client = self._connection
        try:
            with anyio.fail_after(self.timeout):
                await client.ping()
        except (RedisError, OSError, TimeoutError) as exc:
            with anyio.CancelScope(shield=True):
                await client.aclose()
            raise SharedStateError(
                f"Redis at {self.shown_url} is unreachable ({_cause(exc)}): start it, or"
                " check the URL (serve --redis)"
            ) from None
        self._client = client
        async with contextlib.AsyncExitStack() as stack:
            stack.push_async_callback(self._close)
            if self.state_key is None:
                self.state_key = await self._shared_seal_key()
            group = await stack.enter_async_context(anyio.create_task_group())
            stack.callback(group.cancel_scope.cancel)
            await group.start(self.bus.run)
            self._stack = stack.pop_all()
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        stack, self._stack = self._stack, None
        if stack is not None:
            await stack.__aexit__(*exc_info)

    async def _close(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            with anyio.CancelScope(shield=True), anyio.move_on_after(self.timeout):
                await client.aclose()

    async def _shared_seal_key(self) -> bytes:
        key = self.key("seal-key")

        async def fetch(client: aioredis.Redis) -> Any:
            await client.set(key, secrets.token_hex(_SEAL_KEY_BYTES), nx=True)
            return await client.get(key)

        value = await self.call("the seal key", fetch)
        try:
            return bytes.fromhex(value.decode())
        except (AttributeError, ValueError):
            raise SharedStateError(
                f"Redis at {self.shown_url}: the key {key!r} does not hold a seal key; delete"
                " it (every replica then needs a restart)"
            ) from None

    async def call(self, feature: str, operation: Callable[[aioredis.Redis], Awaitable[T]]) -> T:
        """``await operation(client)``, bounded by the timeout; a fault is counted under
        ``feature``, logged once per outage, and raised as :class:`SharedStateError`.

        Raises:
            SharedStateError: Redis did not answer (the message names the URL and feature).
        """
        try:
            with anyio.fail_after(self.timeout):
                result = await operation(self.client)
        except (RedisError, OSError, TimeoutError) as exc:
            raise self.fault(feature, exc) from None
        if feature in self._down:
            self._down.discard(feature)
            _log.warning("Redis at %s answers again (%s)", self.shown_url, feature)
        return result

    def fault(self, feature: str, exc: BaseException) -> SharedStateError:
        """Count a fault of ``feature`` and log it (once per outage); the error to raise."""
        self._faults[feature] = self._faults.get(feature, 0) + 1
        cause = _cause(exc)
        if feature not in self._down:
            self._down.add(feature)
            _log.warning("Redis at %s failed (%s): %s", self.shown_url, feature, cause)
        return SharedStateError(f"Redis at {self.shown_url} failed ({feature}): {cause}")


def _cause(exc: BaseException) -> str:
    if isinstance(exc, TimeoutError) and not str(exc):
        return "no answer in time"
    return describe_exception(exc)


class RedisNonces:
    """The used ``requestState`` nonces of a deployment (``SET NX PXAT``: one atomic step,
    the key expiring with the state)."""

    __slots__ = ("_state",)

    def __init__(self, state: RedisState) -> None:
        self._state = state

    async def claim(self, nonce: str, expiry: float) -> bool:
        """See :meth:`customtools.mcp._shared.NonceStore.claim`."""
        key = self._state.key("nonce", nonce)
        at = int(expiry * 1000) + 1
        done = await self._state.call(
            "replay protection", lambda client: client.set(key, b"1", nx=True, pxat=at)
        )
        return bool(done)


class RedisVisibility:
    """The tools each client made visible, shared by replicas (a set per client, expiring
    :data:`~customtools.mcp._shared.VISIBILITY_TTL` seconds after its last change)."""

    __slots__ = ("_state", "_ttl")

    def __init__(self, state: RedisState, *, ttl: float = VISIBILITY_TTL) -> None:
        self._state = state
        self._ttl = ttl

    def _key(self, client: str) -> str:
        return self._state.key("visible", hashlib.sha256(client.encode()).hexdigest()[:32])

    async def show(self, client: str, names: Iterable[str]) -> bool:
        """See :meth:`customtools.mcp._shared.VisibilityStore.show`."""
        key = self._key(client)
        members = sorted(set(names))
        ttl = int(self._ttl * 1000)

        async def write(redis: aioredis.Redis) -> Any:
            pipe = redis.pipeline(transaction=True)
            if members:
                pipe.sadd(key, *members)
            pipe.pexpire(key, ttl)
            return await pipe.execute()

        replies = await self._state.call("tool visibility", write)
        return bool(members) and bool(replies[0])  # SADD: how many were new

    async def shown(self, client: str) -> frozenset[str]:
        """See :meth:`customtools.mcp._shared.VisibilityStore.shown`."""
        key = self._key(client)
        members = await self._state.call("tool visibility", lambda redis: redis.smembers(key))
        return frozenset(m.decode() if isinstance(m, bytes) else str(m) for m in members)

    async def forget(self, client: str) -> None:
        """See :meth:`customtools.mcp._shared.VisibilityStore.forget`."""
        key = self._key(client)
        await self._state.call("tool visibility", lambda redis: redis.delete(key))


_EVENTS: dict[str, type[Any]] = {
    "tools": ToolsListChanged,
    "prompts": PromptsListChanged,
    "resources": ResourcesListChanged,
    "resource": ResourceUpdated,
}
_KINDS = {cls: kind for kind, cls in _EVENTS.items()}


class RedisBus:
    """The SDK's ``SubscriptionBus`` across replicas: an event published on one replica is
    delivered to this replica's listeners at once and to every other replica's through Redis
    pub/sub.

    When Redis cannot take a publish, only this replica's clients hear it (the fault is
    counted and logged). When the subscription is lost, it is made again with backoff, and
    this replica's listeners then get ``ToolsListChanged``: changes made meanwhile may have
    been missed, and clients list again.
    """

    def __init__(self, state: RedisState) -> None:
        self._state = state
        self._listeners: dict[object, Callable[[ServerEvent], None]] = {}
        self._origin = secrets.token_hex(8)

    @property
    def channel(self) -> str:
        """The pub/sub channel of this deployment."""
        return self._state.key("changes")

    def subscribe(self, listener: Callable[[ServerEvent], None]) -> Callable[[], None]:
        """Register ``listener`` (see the SDK's ``SubscriptionBus``); returns its removal."""
        token = object()
        self._listeners[token] = listener

        def unsubscribe() -> None:
            self._listeners.pop(token, None)

        return unsubscribe

    async def publish(self, event: ServerEvent) -> None:
        """Deliver ``event`` here, then to the other replicas (see the class)."""
        self._deliver(event)
        kind = _KINDS.get(type(event))
        if kind is not None:
            body = {"o": self._origin, "k": kind}
            if isinstance(event, ResourceUpdated):
                body["u"] = event.uri
            payload = json.dumps(body)
            with contextlib.suppress(SharedStateError):  # counted and logged by call()
                await self._state.call(
                    "list_changed", lambda client: client.publish(self.channel, payload)
                )
        await anyio.lowlevel.checkpoint()

    def _deliver(self, event: ServerEvent) -> None:
        for listener in list(self._listeners.values()):
            try:
                listener(event)
            except Exception:  # one listener's fault never starves the others
                _log.exception("a subscription listener raised; the others still get the event")

    def _received(self, data: Any) -> None:
        try:
            body = json.loads(data)
            if body.get("o") == self._origin:
                return  # delivered here when it was published
            cls = _EVENTS[body["k"]]
            event = cls(uri=str(body["u"])) if cls is ResourceUpdated else cls()
        except Exception:
            _log.warning("an unreadable message on %s was ignored", self.channel)
            return
        self._deliver(event)

    async def run(self, *, task_status: Any = anyio.TASK_STATUS_IGNORED) -> None:
        """Receive the other replicas' events until cancelled (started by :class:`RedisState`,
        ready once subscribed or once the first attempt failed). When the subscription comes
        back after a loss, this replica's listeners get ``ToolsListChanged``: changes made
        meanwhile may have been missed."""
        await _listen(
            self._state,
            self.channel,
            "list_changed subscription",
            self._received,
            lambda: self._deliver(ToolsListChanged()),
            task_status,
        )


async def _listen(
    state: RedisState,
    channel: str,
    feature: str,
    received: Callable[[Any], None],
    restored: Callable[[], None],
    task_status: Any,
) -> None:
    """Hand each message of ``channel`` to ``received`` until cancelled; a lost subscription
    is counted under ``feature`` and made again with backoff, then ``restored()`` runs."""
    delay = 0.05
    lost = False
    started = False
    while True:
        pubsub = state.client.pubsub()
        try:
            with anyio.fail_after(state.timeout):
                await pubsub.subscribe(channel)
            if lost:
                lost = False
                delay = 0.05
                _log.warning("Redis at %s: %s restored", state.shown_url, feature)
                restored()
            if not started:
                started = True
                task_status.started()
            while True:
                message = await pubsub.get_message(ignore_subscribe_messages=True, timeout=_POLL)
                if message is not None and message.get("type") == "message":
                    received(message["data"])
        except (RedisError, OSError, TimeoutError) as exc:
            state.fault(feature, exc)
            lost = True
        finally:
            with (
                anyio.CancelScope(shield=True),
                anyio.move_on_after(state.timeout),
                contextlib.suppress(Exception),  # a connection already gone
            ):
                await pubsub.aclose()  # type: ignore[no-untyped-call]
        if not started:
            started = True
            task_status.started()
        await anyio.sleep(delay)
        delay = min(delay * 2, _BACKOFF_CAP)


class EventScopeMiddleware:
    """ASGI middleware giving each handshake-era session its own scope in the event store:
    a request that opens a session (no ``Mcp-Session-Id``) gets a fresh scope, which the
    session's message router inherits."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope.get("type") == "http" and not any(
            name == b"mcp-session-id" for name, _ in scope.get("headers", ())
        ):
            token = _EVENT_SCOPE.set(secrets.token_hex(16))
            try:
                await self.app(scope, receive, send)
            finally:
                _EVENT_SCOPE.reset(token)
            return
        await self.app(scope, receive, send)


def _b64(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def _unb64(text: str) -> str:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)).decode()


class RedisEventStore(EventStore):
    """The SDK's ``EventStore`` on Redis streams: each SSE stream of each session is one
    stream key (trimmed to :data:`MAX_STREAM_EVENTS`, expiring :data:`EVENT_TTL` seconds after
    its last event). An event id names its session's scope (random, never shown to another
    session), its stream and its entry.

    It never raises into the transport: an event Redis could not store is still sent live
    but cannot be replayed, and a replay Redis cannot answer replays nothing (both counted
    and logged; the client's reconnection then ends as docs/deploy.md describes).
    """

    def __init__(self, state: RedisState) -> None:
        self._state = state
        self._fallback_scope = secrets.token_hex(16)

    def _stream_key(self, scope: str, stream: str) -> str:
        return self._state.key("events", scope, stream)

    async def store_event(self, stream_id: StreamId, message: JSONRPCMessage | None) -> EventId:
        """Store one event of ``stream_id``; its id."""
        scope = _EVENT_SCOPE.get(self._fallback_scope)
        stream = _b64(stream_id)
        key = self._stream_key(scope, stream)
        data = "" if message is None else message.model_dump_json(by_alias=True, exclude_unset=True)
        ttl = int(EVENT_TTL * 1000)

        async def add(client: aioredis.Redis) -> Any:
            pipe = client.pipeline(transaction=False)
            pipe.xadd(key, {"m": data}, maxlen=MAX_STREAM_EVENTS, approximate=True)
            pipe.pexpire(key, ttl)
            return (await pipe.execute())[0]

        try:
            entry = await self._state.call("event store", add)
        except SharedStateError:
            return f"{scope}.{stream}.lost-{secrets.token_hex(4)}"
        entry_id = entry.decode() if isinstance(entry, bytes) else str(entry)
        return f"{scope}.{stream}.{entry_id}"

    async def replay_events_after(
        self, last_event_id: EventId, send_callback: EventCallback
    ) -> StreamId | None:
        """Send the events of ``last_event_id``'s stream after it; the stream's id, or
        ``None`` when the id is not one of this store's or the events cannot be read."""
        parts = last_event_id.split(".")
        if len(parts) != 3 or parts[2].startswith("lost-"):
            return None
        scope, stream, after = parts
        if _ENTRY_RE.match(after) is None:
            return None
        try:
            stream_id = _unb64(stream)
        except ValueError:
            return None
        key = self._stream_key(scope, stream)
        try:
            entries = await self._state.call(
                "event store",
                lambda client: client.xrange(key, min=f"({after}", count=MAX_STREAM_EVENTS),
            )
        except SharedStateError:
            return None
        for entry, fields in entries or ():
            data = (fields or {}).get(b"m", b"")
            if not data:
                continue  # a priming event: nothing to send
            entry_id = entry.decode() if isinstance(entry, bytes) else str(entry)
            message = jsonrpc_message_adapter.validate_json(data)
            await send_callback(EventMessage(message, f"{scope}.{stream}.{entry_id}"))
        return stream_id


# -- the execution policy's stores (customtools.policy.PolicyBackend) -----------------------

LEASE = 30.0
"""Seconds a held concurrency slot is leased: renewed while its call runs, so the slots of a
replica that died come back after at most this long."""

_IN_LINE = 5.0  # seconds a waiting replica keeps its place in a cap's line unless it looks again
_LOOK_AGAIN = 0.5  # seconds a waiting call looks again without a wake-up message
_POLICY = "execution policy"

# A cap's state: ``held`` (a sorted set of leases ``<id>/<weight>`` by expiry), ``line`` (one
# waiting call per replica, by arrival), ``alive`` (when each waiting call last looked), ``seq``.
# A call is admitted when it heads the line, or the line is empty, and its weight fits.
_ADMIT = """
local held, line, alive, seq = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local me, limit, weight = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local lease, wait, keep = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', held, '-inf', now)
for _, gone in ipairs(redis.call('ZRANGEBYSCORE', alive, '-inf', now)) do
  redis.call('ZREM', line, gone)
  redis.call('ZREM', alive, gone)
end
local used = 0
for _, lease_id in ipairs(redis.call('ZRANGE', held, 0, -1)) do
  used = used + tonumber(string.match(lease_id, '/(%d+)$'))
end
local head = redis.call('ZRANGE', line, 0, 0)[1]
local granted = 0
if (head == nil or head == me) and used + weight <= limit then
  redis.call('ZREM', line, me)
  redis.call('ZREM', alive, me)
  redis.call('ZADD', held, now + lease, me)
  used = used + weight
  granted = 1
else
  if not redis.call('ZSCORE', line, me) then
    redis.call('ZADD', line, redis.call('INCR', seq), me)
  end
  redis.call('ZADD', alive, now + wait, me)
end
for _, key in ipairs(KEYS) do redis.call('PEXPIRE', key, keep) end
if granted == 1 and used < limit and redis.call('ZCARD', line) > 0 then
  redis.call('PUBLISH', ARGV[7], ARGV[8])
end
return granted
"""

# Give back (or leave the line): the next in line, on any replica, is told to look again.
_RELEASE = """
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[1])
if redis.call('ZCARD', KEYS[2]) > 0 then redis.call('PUBLISH', ARGV[2], ARGV[3]) end
return 1
"""

_RENEW = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
for i = 2, #ARGV do redis.call('ZADD', KEYS[1], 'XX', now + tonumber(ARGV[1]), ARGV[i]) end
for _, key in ipairs(KEYS) do redis.call('PEXPIRE', key, tonumber(ARGV[1]) * 2) end
return 1
"""

# A sliding window of start times: 0 when a call may start now (and it is counted), else the
# milliseconds until one may.
_TAKE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local calls, per = tonumber(ARGV[1]), tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - per)
if redis.call('ZCARD', KEYS[1]) < calls then
  redis.call('ZADD', KEYS[1], now, ARGV[3])
  redis.call('PEXPIRE', KEYS[1], per)
  return 0
end
local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return math.max(tonumber(first[2]) + per - now, 1)
"""

# Keep a result's text at least ARGV[3] ms more, readable by one more owner.
_PUT = """
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[3]) then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[3])
end
redis.call('SADD', KEYS[2], ARGV[2])
if redis.call('PTTL', KEYS[2]) < tonumber(ARGV[3]) then redis.call('PEXPIRE', KEYS[2], ARGV[3]) end
return 1
"""

_HANDLE_RE = re.compile(r"^r-[0-9a-f]{32}$")


def _digest(text: str, size: int = 24) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:size]


def _ms(seconds: float) -> int:
    return max(1, int(seconds * 1000 + 0.999))


class RedisGate:
    """One concurrency cap shared by every replica (:class:`customtools.policy.Gate`).

    Calls wait first in, first out within a replica; the replicas' first waiting calls
    stand in one line in Redis, so replicas take turns. A slot is a lease renewed while its
    call runs (:data:`LEASE`): a replica that dies gives its slots back within a lease.
    """

    def __init__(self, backend: RedisPolicyBackend, key: str, limit: int) -> None:
        state = backend.state
        self.id = _digest(key)
        self.limit = limit
        self._backend = backend
        self._keys = [state.key("gate", self.id, part) for part in ("held", "line", "alive", "seq")]
        self._turns: collections.deque[anyio.Event] = collections.deque()
        self._held: list[str] = []
        self._wake = anyio.Event()

    def try_acquire(self, weight: int) -> bool:
        """Always ``False``: a shared cap is taken in :meth:`acquire` (one round trip)."""
        return False

    def wake(self) -> None:
        """Another replica gave a slot back: the first call waiting here looks again."""
        self._wake.set()
        self._wake = anyio.Event()

    async def acquire(self, weight: int) -> None:
        """Wait for ``weight`` units of the cap (see :class:`customtools.policy.Gate`).

        Raises:
            SharedStateError: Redis did not answer; the call is not run.
        """
        backend = self._backend
        turn = anyio.Event()
        self._turns.append(turn)
        lease = f"{backend.origin}-{next(backend.counter)}/{weight}"
        try:
            if self._turns[0] is not turn:
                await turn.wait()
            while True:
                wake = self._wake
                if await backend.script(_ADMIT, self._keys, self._admit_args(lease, weight)):
                    break
                with anyio.move_on_after(_LOOK_AGAIN):
                    await wake.wait()
        except BaseException:
            with anyio.CancelScope(shield=True), contextlib.suppress(SharedStateError):
                await backend.script(_RELEASE, self._keys, [lease, backend.channel, self.id])
            raise
        finally:
            self._turns.remove(turn)
            if self._turns:
                self._turns[0].set()
        self._held.append(lease)

    def _admit_args(self, lease: str, weight: int) -> list[Any]:
        keep = _ms(2 * max(LEASE, _IN_LINE))
        backend = self._backend
        return [
            lease, self.limit, weight, _ms(LEASE), _ms(_IN_LINE), keep, backend.channel, self.id
        ]  # fmt: skip

    async def release(self, weight: int) -> None:
        """Give back ``weight`` units (one round trip, shielded by the caller); when Redis
        cannot take it, the fault is counted and the lease expires by itself."""
        suffix = f"/{weight}"
        for index, lease in enumerate(self._held):
            if lease.endswith(suffix):
                del self._held[index]
                backend = self._backend
                with contextlib.suppress(SharedStateError):
                    await backend.script(_RELEASE, self._keys, [lease, backend.channel, self.id])
                return

    def leases(self) -> list[str]:
        """The leases this replica holds (renewed while they are held)."""
        return list(self._held)


class RedisSlots:
    """The concurrency caps of a deployment (:class:`customtools.policy.Slots`)."""

    def __init__(self, backend: RedisPolicyBackend) -> None:
        self._backend = backend
        self.gates: dict[str, RedisGate] = {}

    def gate(self, key: str, limit: int) -> RedisGate:
        """The cap ``key`` of ``limit`` units (the newest limit holds)."""
        gate = self.gates.get(key)
        if gate is None:
            gate = RedisGate(self._backend, key, limit)
            self.gates[key] = gate
            self._backend.by_id[gate.id] = gate
        gate.limit = limit
        return gate


class RedisRates:
    """Calls per window shared by every replica (:class:`customtools.policy.Rates`)."""

    def __init__(self, backend: RedisPolicyBackend) -> None:
        self._backend = backend

    async def take(self, key: str, calls: int, per: float) -> float:
        """See :class:`customtools.policy.Rates`.

        Raises:
            SharedStateError: Redis did not answer; the call is not run.
        """
        backend = self._backend
        member = f"{backend.origin}-{next(backend.counter)}"
        wait = await backend.script(
            _TAKE, [backend.state.key("rate", _digest(key))], [calls, _ms(per), member]
        )
        return max(int(wait) / 1000, 1e-3) if wait else 0.0


class RedisResultStore:
    """Trimmed results kept whole for ``read_result``, shared by every replica
    (:class:`customtools.policy.ResultStore`): bounded by their TTL (and by the Redis
    server's ``maxmemory``)."""

    def __init__(self, backend: RedisPolicyBackend) -> None:
        self._backend = backend

    def _keys(self, handle: str) -> list[str]:
        key = self._backend.state.key("result", handle)
        return [key, key + ":owners"]

    async def put(self, text: str, owner: str | None, ttl: float) -> str:
        """See :class:`customtools.policy.ResultStore`. When Redis cannot take it, the fault
        is counted and the handle returned all the same (``read_result`` then finds
        nothing under it)."""
        handle = "r-" + _digest(text, 32)
        with contextlib.suppress(SharedStateError):
            await self._backend.script(_PUT, self._keys(handle), [text, _owner(owner), _ms(ttl)])
        return handle

    async def get(self, handle: str, owner: str | None) -> str | None:
        """See :class:`customtools.policy.ResultStore`.

        Raises:
            SharedStateError: Redis did not answer (``read_result`` reports it).
        """
        if _HANDLE_RE.match(handle) is None:
            return None
        text_key, owners = self._keys(handle)

        async def read(client: aioredis.Redis) -> Any:
            pipe = client.pipeline(transaction=False)
            pipe.sismember(owners, _owner(owner))
            pipe.get(text_key)
            return await pipe.execute()

        allowed, text = await self._backend.state.call(_POLICY, read)
        if not allowed or text is None:
            return None
        return text.decode("utf-8", "surrogatepass") if isinstance(text, bytes) else str(text)


def _owner(owner: str | None) -> str:
    return "-" if owner is None else f"o:{owner}"


class RedisResultCache:
    """Results of cacheable tools shared by every replica
    (:class:`customtools.policy.ResultCache`). An entry's key holds its pack's digest, so a
    changed pack's entries are never found again and expire with their TTL; one result may
    take at most a quarter of ``max_bytes`` (Redis's ``maxmemory`` bounds the rest). A fault
    is counted and taken as a miss (the tool runs)."""

    def __init__(self, backend: RedisPolicyBackend, max_bytes: int) -> None:
        self._backend = backend
        self.max_bytes = max_bytes

    def _key(self, scope: str, digest: str, key: Hashable) -> str:
        return self._backend.state.key("cache", _digest(scope), _digest(f"{digest}\0{key!r}", 40))

    async def get(self, scope: str, digest: str, key: Hashable) -> ToolResult | None:
        """See :class:`customtools.policy.ResultCache`."""
        name = self._key(scope, digest, key)
        try:
            data = await self._backend.state.call(_POLICY, lambda client: client.get(name))
        except SharedStateError:
            return None
        if data is None:
            return None
        return ToolResult.from_dict(json.loads(data), where="a cached result")

    async def put(
        self, scope: str, digest: str, key: Hashable, result: ToolResult, size: int, ttl: float
    ) -> str | None:
        """See :class:`customtools.policy.ResultCache`."""
        if size > self.max_bytes // 4:
            return "too-large"
        name = self._key(scope, digest, key)
        data = json.dumps(result.to_dict(), separators=(",", ":"))
        try:
            await self._backend.state.call(
                _POLICY, lambda client: client.set(name, data, px=_ms(ttl))
            )
        except SharedStateError:
            return "unavailable"
        return None


class RedisPolicyBackend:
    """The execution policy's four stores on Redis (:class:`customtools.policy.PolicyBackend`),
    so a cap of 4 is 4 across every replica of a deployment, and rates, trimmed results and
    cached results are shared too. An async context manager inside the connected
    ``state``'s (it runs the wake-ups of waiting calls and renews leases);
    ``serve --redis`` with a policy uses it. Faults: see docs/deploy.md.

    Args:
        state: the connected :class:`RedisState` of this replica.
        cache_max_bytes: the policy's ``cache_max_bytes`` (one result may take a quarter).
    """

    def __init__(self, state: RedisState, *, cache_max_bytes: int = 32 << 20) -> None:
        self.state = state
        self.origin = secrets.token_hex(8)
        self.counter = itertools.count()
        self.by_id: dict[str, RedisGate] = {}
        # Typed as the interfaces: PolicyBackend declares them as (invariant) attributes.
        self.slots: Slots = RedisSlots(self)
        self.rates: Rates = RedisRates(self)
        self.results: ResultStore = RedisResultStore(self)
        self.cache: ResultCache = RedisResultCache(self, cache_max_bytes)
        self._stack: contextlib.AsyncExitStack | None = None
        self._scripts: dict[str, Any] = {}

    @property
    def channel(self) -> str:
        """The pub/sub channel telling replicas that a cap has room."""
        return self.state.key("gates")

    async def script(self, source: str, keys: list[str], args: list[Any]) -> Any:
        """Run one of this module's Lua scripts (by digest, loaded once), bounded."""
        script = self._scripts.get(source)
        if script is None:
            script = self._scripts[source] = self.state.client.register_script(source)
        return await self.state.call(_POLICY, lambda client: script(keys, args, client=client))

    async def __aenter__(self) -> RedisPolicyBackend:
        async with contextlib.AsyncExitStack() as stack:
            group = await stack.enter_async_context(anyio.create_task_group())
            stack.callback(group.cancel_scope.cancel)
            wakeups = "execution policy wake-ups"
            await group.start(
                _listen, self.state, self.channel, wakeups, self._woken, self._wake_all
            )
            group.start_soon(self._renew)
            self._stack = stack.pop_all()
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        stack, self._stack = self._stack, None
        if stack is not None:
            await stack.__aexit__(*exc_info)

    def _woken(self, data: Any) -> None:
        gate = self.by_id.get(data.decode() if isinstance(data, bytes) else str(data))
        if gate is not None:
            gate.wake()

    def _wake_all(self) -> None:
        for gate in list(self.by_id.values()):
            gate.wake()

    async def _renew(self) -> None:
        while True:
            await anyio.sleep(LEASE / 3)
            for gate in list(self.by_id.values()):
                leases = gate.leases()
                if leases:
                    with contextlib.suppress(SharedStateError):
                        await self.script(_RENEW, gate._keys[:1], [_ms(LEASE), *leases])
