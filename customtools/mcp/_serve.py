"""Load tools as ``discover_and_load`` does and serve them: :func:`serve`, :func:`serve_http`.

Over stdio the protocol stream is claimed *before* any tool module is imported, so a module
that prints at import time cannot corrupt it (its output goes to stderr).
"""

from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, Literal, TextIO

from customtools._error_results import LoadCode
from customtools._format import escape_control
from customtools._loading._loader import LoadResult, discover_and_load
from customtools._loading._reload import Reloader, require_watchfiles
from customtools.mcp._http import HEADER_TIMEOUT, HttpSecurity, guarded_protocol
from customtools.mcp._mount import ORIGIN_META_KEY, McpMount, MountChanges
from customtools.mcp._server import ToolServer

if TYPE_CHECKING:
    from customtools._policy import Policy
    from customtools.mcp._redis import RedisState

__all__ = ["report_load", "serve", "serve_http"]

_log = logging.getLogger("customtools.mcp")

_STOP_BOUND = 5.0  # seconds uvicorn may take to stop (its graceful shutdown is 2 s)
# The load diagnostics a server operator should see (the others are in `customtools list`).
_REPORTED = frozenset(
    {
        LoadCode.RELOAD_KEPT_PREVIOUS,
        LoadCode.MANIFEST_CACHE_IGNORED,
        LoadCode.MANIFEST_CACHE_UNWRITABLE,
    }
)


def report_load(result: LoadResult, server: ToolServer, stream: TextIO | None = None) -> None:
    """Write the load's errors and the tools the server left out to ``stream`` (stderr)."""
    out = sys.stderr if stream is None else stream
    for error in result.errors:
        path = escape_control(str(error.path))
        out.write(f"customtools serve: {path}: {escape_control(error.error)}\n")
    for diagnostic in result.diagnostics:
        if diagnostic.code in _REPORTED:
            out.write(f"customtools serve: {escape_control(diagnostic.message)}\n")
    for problem in server.diagnostics:
        out.write(f"customtools serve: {escape_control(problem.message)}\n")
    pending = getattr(result, "pending_trust", ())
    if pending:
        out.write(
            f"customtools serve: {len(pending)} project tool source(s) are not trusted and are"
            " not served; `customtools trust` shows what they would run\n"
        )
    lazy = sum(loaded.lazy for loaded in result.tools)
    later = f" ({lazy} imported on first call)" if lazy else ""
    out.write(f"customtools serve: serving {len(server.tool_names)} tools{later}\n")
    out.flush()


async def serve_http(
    server: ToolServer,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    path: str = "/mcp",
    stateless: bool = False,
    security: HttpSecurity | None = None,
    on_ready: Callable[[str], Any] | None = None,
    header_timeout: float = HEADER_TIMEOUT,
) -> None:
    """Serve ``server`` over streamable HTTP with uvicorn until cancelled.

    DNS-rebinding protection is always on; binding anything but loopback needs ``security``
    with authentication and allowed hosts (see :class:`HttpSecurity`), checked before the
    socket is opened. Connections that have not sent a complete request are bounded in time
    (``header_timeout``) and number (see ``guarded_protocol``).

    Args:
        server: the tools.
        host: the address to listen on (``127.0.0.1`` by default: loopback only).
        port: the port; ``0`` picks a free one.
        path: the endpoint path.
        stateless: a fresh transport per request (see :meth:`ToolServer.streamable_http_app`).
        security: allowed hosts and origins, and authentication.
        on_ready: called with the endpoint URL once the socket listens.
        header_timeout: seconds a connection has to send a request's headers.

    Raises:
        ValueError: a non-loopback ``host`` without authentication or an allowed host.
    """
    import anyio
    import uvicorn

    app = server.streamable_http_app(path=path, stateless=stateless, host=host, security=security)
    # uvicorn binds the socket itself: a socket handed over with `sockets=` measured ~40 ms
    # slower per modern-era call (uvicorn 0.54), so port 0 is resolved after startup.
    protocol = guarded_protocol(header_timeout=header_timeout)
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="warning",
        access_log=False,
        lifespan="on",
        timeout_graceful_shutdown=2,
        http=protocol,
        backlog=protocol.max_waiting,
    )
    web = uvicorn.Server(config)
    # Cancelled in the middle of its loop, uvicorn skips its shutdown and leaves the socket
    # open: it runs shielded and is stopped through should_exit, within a bound.
    running = anyio.CancelScope(shield=True)
    stopped = anyio.Event()

    async def run() -> None:
        try:
            with running:
                await web.serve()
        finally:
            stopped.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(run)
        try:
            while not web.started:
                if web.should_exit or stopped.is_set():
                    return
                await anyio.sleep(0.01)
            bound = port
            for listener in getattr(web, "servers", ()):
                for sock in listener.sockets:
                    bound = sock.getsockname()[1]
            shown = f"[{host}]" if ":" in host else host
            if on_ready is not None:
                on_ready(f"http://{shown}:{bound}{path}")
            await stopped.wait()
        finally:
            web.should_exit = True
            with anyio.CancelScope(shield=True), anyio.move_on_after(_STOP_BOUND):
                await stopped.wait()
            running.cancel()


async def serve(
    paths: Iterable[str] = (),
    *,
    cwd: str | None = None,
    builtin_tool_names: Sequence[str] = (),
    transport: Literal["stdio", "http"] = "stdio",
    host: str = "127.0.0.1",
    port: int = 8000,
    path: str = "/mcp",
    stateless: bool = False,
    security: HttpSecurity | None = None,
    name: str = "customtools",
    timeout: float | None = None,
    on_ready: Callable[[str], Any] | None = None,
    reload: bool = False,
    on_load: Callable[[LoadResult], Any] | None = None,
    state_key: bytes | None = None,
    redis: str | None = None,
    redis_namespace: str | None = None,
    policy: Policy | None = None,
    tool_search: bool = False,
    pinned: Sequence[str] = (),
    **scan_options: Any,
) -> None:
    """Discover and load tools exactly as :func:`~customtools.discover_and_load` does, and
    serve them over MCP until the client leaves (stdio) or the task is cancelled (HTTP).

    Load errors and tools MCP cannot offer are written to stderr; the rest are served.

    Args:
        paths: configured tool files or directories (after every discovered source).
        cwd: the project directory.
        builtin_tool_names: names no tool may take.
        transport: ``"stdio"`` or ``"http"`` (streamable HTTP).
        host: HTTP only: the address to listen on.
        port: HTTP only: the port (``0`` picks a free one).
        path: HTTP only: the endpoint path.
        stateless: HTTP only: a fresh transport per request.
        security: HTTP only: allowed hosts and origins, and authentication
            (:class:`HttpSecurity`); a non-loopback ``host`` needs both.
        name: the server name announced to clients.
        timeout: seconds any call may run.
        on_ready: HTTP only: called with the endpoint URL once it listens.
        reload: watch the loaded sources and serve each change (the ``reload`` extra): only
            the modules whose files changed are imported again, a module that fails keeps
            its previous version, clients get ``notifications/tools/list_changed``. Works
            with every option: isolated modules reload in new workers, ``.mcp.json`` files
            are read again, and with ``strict`` a reload with errors stops the server.
        on_load: called with each :class:`~customtools.LoadResult` served (the first load
            and every reload).
        state_key: the key sealing ``requestState`` (shared by replicas, docs/deploy.md).
        redis: a Redis (or Valkey) URL the replicas of this deployment share (the ``redis``
            extra; asyncio only): used ``requestState`` nonces, the seal key (unless
            ``state_key`` is given), ``list_changed``, the tools each client's searches found
            (``tool_search``) and the handshake-era event store. Connected, and checked,
            before any tool is loaded.
        redis_namespace: this deployment's part of every Redis key (default: ``name``).
        policy: the execution policy of every call (see :class:`ToolServer`); each pack's
            declared ``POLICY`` applies under it; with ``redis``, its caps, rates, trimmed
            results and cache are shared by the replicas (unless it has a backend of its
            own).
        tool_search: list the ``search_tools`` tool and the ``pinned`` tools instead of
            every tool; a search lists what it finds for that client (see
            :class:`ToolServer`).
        pinned: with ``tool_search``, the names (or ``fnmatch`` patterns) always listed.
        **scan_options: every other keyword of ``discover_and_load`` (discovery and trust
            options, ``isolation``, ``sandbox``, ``mcp_servers``, ``strict``, ``lazy``,
            ...).
            With ``mcp_servers=`` an open :class:`McpMount`, a mounted server whose tools
            change has them replaced in the served list, and clients get
            ``notifications/tools/list_changed``.
    """
    if transport not in ("stdio", "http"):
        raise ValueError(f"transport must be 'stdio' or 'http', got {transport!r}")
    if transport == "http":
        # Refuse an unprotected public bind before any tool module is imported.
        (security if security is not None else HttpSecurity()).check_bind(host)
    async with contextlib.AsyncExitStack() as stack:
        shared = None
        if redis is not None:
            # Connected before any tool module is imported: an unreachable Redis is one
            # line naming the URL, at once.
            from customtools.mcp._redis import RedisState

            shared = await stack.enter_async_context(
                RedisState(redis, namespace=redis_namespace or name, state_key=state_key)
            )
            if policy is not None:
                policy = await _shared_policy(stack, policy, shared)
        configured = list(paths)
        reloader = None
        if reload:
            require_watchfiles("serve(reload=True)")
            reloader = Reloader(configured, cwd, builtin_tool_names, **scan_options)

        async def load() -> ToolServer:
            if reloader is not None:
                result = await reloader.load()
            else:
                result = await discover_and_load(
                    configured, cwd, builtin_tool_names, **scan_options
                )
            served[:] = result.tools  # load records: they carry their packs' declarations
            server = ToolServer(
                served,
                name=name,
                timeout=timeout,
                state_key=state_key,
                shared=shared,
                policy=policy,
                tool_search=tool_search,
                pinned=pinned,
            )
            report_load(result, server)
            if on_load is not None:
                on_load(result)
            return server

        mounted = scan_options.get("mcp_servers")
        served: list[Any] = []  # the tools of the last load (the mount's follower updates them)
        # Watching starts before the first load lists the servers: no change falls in between.
        changes = mounted.changes() if isinstance(mounted, McpMount) and reloader is None else None

        async def run(server: ToolServer, serving: Callable[[], Awaitable[Any]]) -> None:
            if reloader is None and changes is None:
                await serving()
                return
            import anyio

            async with anyio.create_task_group() as group:
                if reloader is not None:
                    group.start_soon(_follow, reloader, server, on_load)
                elif changes is not None:
                    group.start_soon(_follow_mount, changes, server, served, builtin_tool_names)
                await serving()
                group.cancel_scope.cancel()  # the client left (stdio): stop watching

        try:
            if transport == "stdio":
                from mcp.server.stdio import stdio_server

                # Claim the protocol stream first: tool modules imported below may print.
                async with stdio_server() as (read_stream, write_stream):
                    server = await load()
                    await run(server, lambda: server.run_streams(read_stream, write_stream))
            else:
                server = await load()
                await run(
                    server,
                    lambda: serve_http(
                        server,
                        host=host,
                        port=port,
                        path=path,
                        stateless=stateless,
                        security=security,
                        on_ready=on_ready,
                    ),
                )
        finally:
            if reloader is not None:
                reloader.close()
            if changes is not None:
                await changes.aclose()


async def _shared_policy(
    stack: contextlib.AsyncExitStack, policy: Policy, shared: RedisState
) -> Policy:
    """``policy`` with its caps, rates, stored results and cache in Redis, shared by every
    replica (unless the host gave it a backend of its own)."""
    from customtools._policy import MemoryBackend, Policy
    from customtools.mcp._redis import RedisPolicyBackend

    given: object = policy.backend  # (mypy: MemoryBackend's gates are a narrower type)
    if not isinstance(given, MemoryBackend):
        return policy
    backend = await stack.enter_async_context(
        RedisPolicyBackend(shared, cache_max_bytes=policy.cache_max_bytes)
    )
    return Policy(**{name: getattr(policy, name) for name in policy.given}, backend=backend)


async def _follow(
    reloader: Reloader, server: ToolServer, on_load: Callable[[LoadResult], Any] | None
) -> None:
    """Serve each new load: in-flight calls finish on the tools they started with.

    A reload that raises ends neither the server nor the watch: it is reported on stderr,
    the tools served so far stay, and the next change on disk loads again.
    """
    while True:
        try:
            async with contextlib.aclosing(reloader.watch()) as results:
                async for result in results:
                    await server.set_tools(result.tools)
                    report_load(result, server)
                    if on_load is not None:
                        on_load(result)
            return
        except Exception as exc:
            if reloader.result is None:
                raise  # nothing loaded yet: nothing to keep serving
            from customtools._format import describe_exception

            sys.stderr.write(
                f"customtools serve: reloading the tools failed ({describe_exception(exc)});"
                " the tools loaded before are still served, and the next change loads again\n"
            )
            sys.stderr.flush()


async def _follow_mount(
    changes: MountChanges, server: ToolServer, tools: list[Any], builtins: Sequence[str]
) -> None:
    """Serve each change of a mounted server's tools: they replace that server's tools where
    they were (names taken by built-ins or other tools stay with them), and clients get
    ``notifications/tools/list_changed``."""
    async with contextlib.aclosing(changes):
        async for change in changes:
            mine = [t for t in tools if _origin(t) == change.server]
            others = [t for t in tools if _origin(t) != change.server]
            taken = {*builtins, *(_tool(t).name for t in others)}
            fresh = [t for t in change.tools if t.name not in taken]
            for tool in change.tools:
                if tool.name in taken:
                    _log.warning("mounted tool %r is not served: the name is taken", tool.name)
            at = tools.index(mine[0]) if mine else len(tools)
            before = [t for t in tools[:at] if _origin(t) != change.server]
            tools[:] = [*before, *fresh, *others[len(before) :]]
            await server.set_tools(tools)


def _tool(item: Any) -> Any:
    """The tool of a served item (a load record or a tool)."""
    return getattr(item, "tool", item)


def _origin(item: Any) -> Any:
    origin = (_tool(item).meta or {}).get(ORIGIN_META_KEY)
    return origin.get("server") if isinstance(origin, dict) else None
