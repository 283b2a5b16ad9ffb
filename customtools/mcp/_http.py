"""How served HTTP is protected: :class:`HttpSecurity`, :func:`read_token`, :func:`is_loopback`.

Three rules, applied by :meth:`ToolServer.streamable_http_app` and :func:`serve_http`:

* DNS-rebinding protection is always on: the ``Host`` header must be a loopback name, the
  bound host, or an allowed host; an ``Origin`` header, when present, must be a loopback
  origin, the bound host's, or an allowed origin (the SDK answers 421 and 403 otherwise).
* Binding anything but loopback (every ``127.0.0.0/8`` address, ``::1`` and ``localhost``)
  needs authentication (a bearer token, or the SDK's OAuth resource-server support) *and* at
  least one allowed host; without them the server refuses to start and says what to add.
* A bearer token is compared in constant time (:func:`hmac.compare_digest`); a request
  without it, or with another, is answered ``401`` before it reaches the protocol.
* Nothing is checked before a request's headers are complete, so connections that never
  finish them are bounded (:func:`guarded_protocol`): each has :data:`HEADER_TIMEOUT`
  seconds, and past a cap set by the open-file limit (raised to its hard limit) the oldest
  is closed for a new one.
"""

from __future__ import annotations

import hmac
import ipaddress
import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "HEADER_TIMEOUT",
    "MIN_TOKEN_LENGTH",
    "BearerMiddleware",
    "HttpSecurity",
    "guarded_protocol",
    "is_loopback",
    "read_token",
]

HEADER_TIMEOUT = 10.0
"""Seconds a connection has to send a request's headers (also between keep-alive requests)."""

MIN_TOKEN_LENGTH = 16
"""The fewest characters a bearer token may have (``secrets.token_urlsafe(32)`` has 43)."""

_LOOPBACK_HOSTS = ("127.0.0.1:*", "localhost:*", "[::1]:*")
_LOOPBACK_ORIGINS = ("http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*")
_WILDCARD_BINDS = frozenset({"0.0.0.0", "::", ""})  # noqa: S104 - names, not a bind
_MAX_TOKEN_FILE = 4096


def is_loopback(host: str) -> bool:
    """True for every address that never leaves the machine: ``127.0.0.0/8``, ``::1``
    (also IPv4-mapped, ``::ffff:127.x.y.z``) and the name ``localhost``.

    Other names are not loopback, whatever they resolve to today.
    """
    text = host.strip()
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1]
    if text.lower().rstrip(".") == "localhost":
        return True
    try:
        address = ipaddress.ip_address(text.split("%", 1)[0])
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped.is_loopback
    return address.is_loopback


def read_token(*, file: str | os.PathLike[str] | None = None, env: str | None = None) -> str:
    """A bearer token from a file (its first line) or an environment variable.

    Args:
        file: a file holding the token (surrounding whitespace is ignored). It must be a
            regular file no larger than 4 KiB that other users cannot read or write.
        env: the name of an environment variable holding the token. The variable is
            removed from this process's environment once read, so tool code and the
            processes it starts (isolation workers, ``exec`` children) do not see the token.
            The process's initial environment stays readable in ``/proc/<pid>/environ``:
            prefer ``file`` where tools run in the serving process.

    Raises:
        ValueError: neither or both were given, the source is missing, unreadable or
            unsafe, or the token is shorter than :data:`MIN_TOKEN_LENGTH`; the message names
            the file or variable and says what to do.
    """
    if (file is None) == (env is None):
        raise ValueError("give exactly one of a token file and a token environment variable")
    if file is not None:
        where = f"token file {os.fspath(file)!r}"
        try:
            fd = os.open(file, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
        except OSError as exc:
            raise ValueError(f"{where} cannot be read: {exc.strerror}") from None
        with os.fdopen(fd, "rb") as handle:
            info = os.fstat(handle.fileno())
            if not stat.S_ISREG(info.st_mode):
                raise ValueError(f"{where} is not a regular file")
            if info.st_mode & 0o077 and os.name == "posix":
                raise ValueError(
                    f"{where} can be read or written by other users; run chmod 600 on it"
                )
            data = handle.read(_MAX_TOKEN_FILE + 1)
        if len(data) > _MAX_TOKEN_FILE:
            raise ValueError(f"{where} is larger than {_MAX_TOKEN_FILE} bytes; keep only the token")
        try:
            lines = data.decode("utf-8").strip().splitlines()
        except UnicodeDecodeError:
            raise ValueError(f"{where} is not UTF-8 text") from None
        token = lines[0].strip() if lines else ""
    else:
        assert env is not None
        where = f"environment variable {env!r}"
        value = os.environ.pop(env, None)
        if value is None:
            raise ValueError(f"{where} is not set; export the token in it")
        token = value.strip()
    if len(token) < MIN_TOKEN_LENGTH or any(c.isspace() or ord(c) < 0x20 for c in token):
        raise ValueError(
            f"{where}: the token must be at least {MIN_TOKEN_LENGTH} characters with no spaces"
            " or control characters; make one with"
            " `python -c 'import secrets; print(secrets.token_urlsafe(32))'`"
        )
    return token


@dataclass(frozen=True, slots=True, kw_only=True)
class HttpSecurity:
    """Who may talk to a server over HTTP: allowed hosts and origins, and authentication.

    Loopback names (and the bound host) are always allowed; the values here are added. A
    value without a port allows any port (``"tools.example.com"`` allows
    ``tools.example.com:8443``); ``"name:*"`` says so explicitly.

    Args:
        allowed_hosts: extra ``Host`` header values accepted (for example the public name
            clients use).
        allowed_origins: extra ``Origin`` header values accepted (for example
            ``"https://app.example.com"``); browsers send one, other clients usually none.
        bearer_token: a shared secret every request must carry as ``Authorization: Bearer
            <token>`` (see :func:`read_token`); compared in constant time.
        token_verifier: the SDK's ``mcp.server.auth.provider.TokenVerifier``, for hosts with
            an OAuth authorization server (give ``auth`` too).
        auth: the SDK's ``mcp.server.auth.settings.AuthSettings`` (issuer, resource URL,
            required scopes) for ``token_verifier``.

    Raises:
        ValueError: both a bearer token and a token verifier, a verifier without ``auth``,
            or a token shorter than :data:`MIN_TOKEN_LENGTH`.
    """

    allowed_hosts: Sequence[str] = ()
    allowed_origins: Sequence[str] = ()
    bearer_token: str | None = field(default=None, repr=False)
    token_verifier: Any = None
    auth: Any = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "allowed_hosts", tuple(self.allowed_hosts))
        object.__setattr__(self, "allowed_origins", tuple(self.allowed_origins))
        for value in (*self.allowed_hosts, *self.allowed_origins):
            if not isinstance(value, str) or not value.strip() or value.strip() == "*":
                raise ValueError(
                    f"allowed host/origin {value!r} is not a host name or origin; name it"
                    " exactly (a '*' allows nothing)"
                )
        if self.bearer_token is not None and self.token_verifier is not None:
            raise ValueError("give a bearer token or a token verifier, not both")
        if self.token_verifier is not None and self.auth is None:
            raise ValueError(
                "a token verifier needs auth=AuthSettings(issuer_url=..., resource_server_url=...)"
            )
        if self.bearer_token is not None and len(self.bearer_token) < MIN_TOKEN_LENGTH:
            raise ValueError(f"the bearer token must be at least {MIN_TOKEN_LENGTH} characters")

    @property
    def authenticated(self) -> bool:
        """True when requests must authenticate (a bearer token or a token verifier)."""
        return self.bearer_token is not None or self.token_verifier is not None

    def check_bind(self, host: str) -> None:
        """Refuse a bind that would expose the tools unprotected.

        Raises:
            ValueError: ``host`` is not loopback and authentication or an allowed host is
                missing; the message says what to add.
        """
        if is_loopback(host):
            return
        missing = []
        if not self.authenticated:
            missing.append(
                "authentication (--token-file FILE or --token-env VAR; in Python"
                " HttpSecurity(bearer_token=...) or token_verifier=...)"
            )
        if not self.allowed_hosts:
            missing.append(
                "the host names clients use (--allowed-host NAME; in Python"
                " HttpSecurity(allowed_hosts=[...]))"
            )
        if missing:
            raise ValueError(
                f"refusing to serve HTTP on {host!r}, which is not a loopback address, without "
                + " and ".join(missing)
                + "; or bind 127.0.0.1"
            )

    def transport_settings(self, host: str) -> Any:
        """The SDK's ``TransportSecuritySettings`` for a server bound to ``host``: DNS-rebinding
        protection on, loopback names, the bound host and the allowed values."""
        from mcp.server.transport_security import TransportSecuritySettings

        hosts = [name for pattern in _LOOPBACK_HOSTS for name in (pattern[:-2], pattern)]
        origins = [name for pattern in _LOOPBACK_ORIGINS for name in (pattern[:-2], pattern)]
        bound = host.strip()
        if bound not in _WILDCARD_BINDS:
            shown = f"[{bound}]" if ":" in bound and not bound.startswith("[") else bound
            hosts.extend(_with_any_port(shown))
            origins.extend(_with_any_port(f"http://{shown}"))
            origins.extend(_with_any_port(f"https://{shown}"))
        for value in self.allowed_hosts:
            hosts.extend(_with_any_port(value.strip()))
        for value in self.allowed_origins:
            origins.extend(_with_any_port(value.strip().rstrip("/")))
        return TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=list(dict.fromkeys(hosts)),
            allowed_origins=list(dict.fromkeys(origins)),
        )


def _with_any_port(value: str) -> list[str]:
    tail = value.rsplit("]", 1)[-1] if value.startswith("[") or "//[" in value else value
    if tail.endswith(":*") or ":" in tail.split("//", 1)[-1]:
        return [value]
    return [value, f"{value}:*"]


_UNAUTHORIZED = (
    b'{"error": "invalid_token", "error_description": "a valid bearer token is required"}'
)


class BearerMiddleware:
    """An ASGI middleware: HTTP requests without ``Authorization: Bearer <token>`` get ``401``
    and never reach the app; lifespan events pass through.

    Args:
        app: the ASGI app to guard.
        token: the expected token (compared in constant time).
    """

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self._token = token.encode()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] in ("http", "websocket") and not self._accepts(scope):
            if scope["type"] == "websocket":
                await send({"type": "websocket.close", "code": 1008})
                return
            await send(
                {
                    "type": "http.response.start",
                    "status": 401,
                    "headers": [
                        (b"content-type", b"application/json"),
                        (b"content-length", str(len(_UNAUTHORIZED)).encode()),
                        (b"www-authenticate", b'Bearer error="invalid_token"'),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": _UNAUTHORIZED})
            return
        await self.app(scope, receive, send)

    def _accepts(self, scope: Any) -> bool:
        headers = scope.get("headers", ())
        given = next((value for name, value in headers if name == b"authorization"), b"")
        scheme, _, token = given.partition(b" ")
        # Compare even when the scheme is wrong, so the time taken says nothing either way.
        matches = hmac.compare_digest(token.strip(), self._token)
        return matches and scheme.lower() == b"bearer"


def _file_budget() -> int | None:
    """Raise this process's soft open-file limit to its hard limit (a server needs one
    descriptor per connection); the limit now in force, ``None`` when there is none."""
    try:
        import resource

        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if soft != hard:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
            soft = hard
    except (ImportError, OSError, ValueError):  # no such limit here, or it cannot be raised
        return None
    return None if soft == resource.RLIM_INFINITY else soft


def guarded_protocol(*, header_timeout: float = HEADER_TIMEOUT) -> type[Any]:
    """uvicorn's HTTP protocol, with the connections that have not sent a complete request
    (new ones, and kept-alive ones between requests) bounded: each is closed after
    ``header_timeout`` seconds, and past a cap (an eighth of the open-file limit, at most
    256; the class's ``max_waiting``, also the listen backlog to use) the oldest of them is
    closed for each new one. So connections that never finish their
    headers cannot hold every file descriptor, as they did before any token was checked.
    The soft open-file limit is raised to the hard one first.

    One class per server: the waiting connections are counted per server.
    """
    from uvicorn.protocols.http.auto import AutoHTTPProtocol

    budget = _file_budget()
    limit = 256 if budget is None else max(8, min(256, budget // 8))
    waiting: dict[Any, Any] = {}  # connection -> its timer, oldest first

    class GuardedProtocol(AutoHTTPProtocol):  # type: ignore[misc,valid-type]
        # Also the listen backlog: asyncio accepts up to a backlog of connections at once,
        # before any of them is counted here, so a larger one could still exhaust the limit.
        max_waiting = limit

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            self._finished_cycle: Any = None
            self._wait()

        def _wait(self) -> None:
            waiting[self] = self.loop.call_later(header_timeout, self._close_waiting)
            while len(waiting) > limit:
                next(iter(waiting))._close_waiting()

        def _stop_waiting(self) -> None:
            timer = waiting.pop(self, None)
            if timer is not None:
                timer.cancel()

        def _close_waiting(self) -> None:
            self._stop_waiting()
            self.transport.close()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self in waiting and self._started():
                self._stop_waiting()

        def _started(self) -> bool:
            # A request's headers are in once the protocol made a new request cycle for it.
            cycle = self.cycle
            return cycle is not None and cycle is not self._finished_cycle

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if self.transport.is_closing():
                return
            if self.cycle is not None and not self.cycle.response_complete:
                return  # a pipelined request already started
            self._finished_cycle = self.cycle
            self._wait()

        def connection_lost(self, exc: Exception | None) -> None:
            self._stop_waiting()
            super().connection_lost(exc)

    return GuardedProtocol
