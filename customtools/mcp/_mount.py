"""Mount MCP servers as custom tools: :class:`McpMount` and :func:`mount`.

Each configured server becomes tools named ``mcp__<server>__<tool>``. A server starts on
first use (listing its tools is a use) and closes with the mount. Calls go through the
tool's :class:`~customtools.CustomToolAdapter` like any other tool, so arguments are
validated locally before anything is sent, a per-call timeout applies, and aborting the
call's signal cancels the request (the SDK sends ``notifications/cancelled``) and returns at
once. Progress notifications become ``on_update`` partial results, and results keep their
``_meta``.

Every wait is bounded: the handshake (``startup_timeout``), the listing of every page
(``list_timeout``), each call (``timeout``, 300 s unless configured) and closing
(``shutdown_timeout``). A server that crashes, closes the connection, stalls or does not
answer its handshake gives the calls in flight an error result and a diagnostic naming it and
what it did; the next use starts it again, after a back-off that doubles with each
consecutive failure. One unusable remote tool (a bad schema, an empty or duplicate name) is
one diagnostic while its siblings mount; at most ``max_tools`` tools are taken. A stdio
server's messages are bounded in size (``max_message``, see :mod:`customtools.mcp._transports`),
and its stderr goes to the ``customtools.mcp.server.<name>`` logger line by line (lines cut
at 8 KiB, read in bounded chunks), never to the host's stdout.

A server that announces a change of its tools (``notifications/tools/list_changed``, or a
``subscriptions/listen`` event in the 2026-07-28 era) is listed again, once per burst of
announcements (:data:`LIST_CHANGED_DEBOUNCE`) and within ``list_timeout``; when its tools
differ, :meth:`McpMount.changes` yields them. A re-listing that fails keeps the tools mounted
before and is a diagnostic.

A server's question during a call (elicitation, sampling) goes to the talk-back of the call
that caused it (its :class:`~customtools.ToolContext`), else to the mount's own handlers.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Final

import anyio
import anyio.lowlevel
import mcp_types as types
import pydantic
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from customtools._adapter import discard_update
from customtools._content import ToolResult
from customtools._error_results import Code, Kind, error_result
from customtools._errors import CustomToolsError
from customtools._format import describe_exception
from customtools._loading._mcpjson import McpServerConfig, mounted_tool_name
from customtools._talkback import InputHandler, LogSink, Sampler, ui_input_handler
from customtools._tool import CustomTool, check_tool_name
from customtools.mcp._asks import CALLER, client_callbacks
from customtools.mcp._listing import MAX_PAGES, is_result_check, raw_tools_page, remote_problem
from customtools.mcp._results import from_call_result
from customtools.mcp._transports import (
    DEFAULT_MAX_MESSAGE,
    StderrPump,
    capped_transport,
)

__all__ = [
    "LIST_CHANGED_DEBOUNCE",
    "McpMount",
    "MountChange",
    "MountChanges",
    "MountDiagnostic",
    "MountedServer",
    "mount",
]

_log = logging.getLogger("customtools.mcp.mount")

ORIGIN_META_KEY = "customtools/mcp"
"""Tool ``_meta`` key naming the server and the remote tool a mounted tool calls."""


@dataclass(frozen=True, slots=True, kw_only=True)
class MountDiagnostic:
    """Something that went wrong with a mounted server.

    Attributes:
        server: the server's name.
        code: ``"unavailable"`` (could not start or handshake), ``"connection-lost"``
            (crashed or closed mid-call), ``"list-failed"`` (refused, stalled past
            ``list_timeout`` or paged without end), ``"too-many-tools"`` (more than
            ``max_tools``), or ``"invalid-tool"`` (a remote tool that cannot be mounted: an
            empty, repeated or unusable name, or an unusable schema).
        message: one line: what happened and what to do.
        tool_name: the remote tool, for ``"invalid-tool"``.
    """

    server: str
    code: str
    message: str
    tool_name: str | None = None


LIST_CHANGED_DEBOUNCE: Final = 0.2
"""Seconds a server's announcements of changed tools are gathered before it is listed again:
a burst of them (or a flood) costs one listing per this interval at most."""


@dataclass(frozen=True, slots=True, kw_only=True)
class MountChange:
    """A mounted server's tools changed (it announced it and was listed again).

    Attributes:
        server: the server's name.
        tools: all of its tools now, mounted (``mcp__<server>__<tool>``), in its order.
    """

    server: str
    tools: tuple[CustomTool, ...]


class _UnavailableError(Exception):
    """The server cannot be reached now (the message says why and when it is retried).

    Internal: it never leaves this module (calls turn it into error results), so it is not
    part of the ``CustomToolsError`` tree.
    """


def _innermost(exc: BaseException) -> BaseException:
    """The one exception inside (nested) single-member exception groups, else ``exc``."""
    inner = getattr(exc, "exceptions", None)
    while isinstance(inner, tuple) and len(inner) == 1:
        exc = inner[0]
        inner = getattr(exc, "exceptions", None)
    return exc


class MountedServer:
    """One configured MCP server, started on first use and restarted after failures.

    Made by :class:`McpMount`; use :meth:`McpMount.tools` to get its tools.
    """

    def __init__(
        self,
        config: McpServerConfig,
        mount: McpMount,
        *,
        backoff: float,
        max_backoff: float,
    ) -> None:
        self.config = config
        self._mount = mount
        self._backoff = backoff
        self._max_backoff = max_backoff
        self._client: Client | None = None
        self._stop: anyio.Event | None = None
        self._scope: anyio.CancelScope | None = None
        self._lock: anyio.Lock | None = None
        self._failures = 0
        self._retry_at = -float("inf")
        self._finished: anyio.Event | None = None
        self._unreadable: str | None = None  # the last message from the server we could not read
        self._listed: list[types.Tool] | None = None  # the last listing handed out
        self._changed: anyio.Event | None = None  # set when the server announces a change

    def __repr__(self) -> str:
        return f"<MountedServer {self.config.name!r} ({self.config.transport})>"

    @property
    def connected(self) -> bool:
        """True while a connection is open."""
        return self._client is not None

    def _transport(self) -> Any:
        config = self.config
        if config.command is not None:
            from mcp.client.stdio import get_default_environment

            from customtools.mcp._transports import stdio_transport

            pump = StderrPump(config.name)
            try:
                transport = stdio_transport(
                    config.command,
                    config.args,
                    {**get_default_environment(), **config.env},
                    config.cwd,
                    pump.writer,
                    max_message=self._mount.max_message,
                )
            except BaseException:
                pump.close()
                raise
            return transport, pump
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        assert config.url is not None
        http = httpx2.AsyncClient(
            headers=dict(config.headers),
            timeout=httpx2.Timeout(30.0, read=300.0),
            transport=capped_transport(self._mount.max_message),
        )
        return streamable_http_client(config.url, http_client=http), http

    async def _on_message(self, message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            self._announced()
        elif isinstance(message, Exception):
            # The SDK could not read a message (not JSON, nested too deep, not JSON-RPC): the
            # request it answered never resolves, so the wait's bound ends it; say why then.
            first = self._unreadable is None
            self._unreadable = describe_exception(message)[:300]
            # Once per connection as a warning: a server printing junk must not flood the log.
            _log.log(
                logging.WARNING if first else logging.DEBUG,
                "MCP server %r sent a message that could not be read: %s",
                self.config.name,
                self._unreadable,
            )
        await anyio.lowlevel.checkpoint()

    def _what_it_sent(self) -> str:
        if self._unreadable is None:
            return ""
        return f" (it sent a message that could not be read: {self._unreadable})"

    async def _run(self, ready: anyio.Event, box: dict[str, Any]) -> None:
        stop = anyio.Event()
        self._stop = stop
        finished = self._finished = anyio.Event()
        scope = self._scope = anyio.CancelScope()
        resource: Any = None
        try:
            with scope:
                transport, resource = self._transport()
                asks = client_callbacks(self.config.name, **self._mount._talkback)
                async with Client(transport, message_handler=self._on_message, **asks) as client:
                    box["client"] = client
                    self._client = client
                    ready.set()
                    async with anyio.create_task_group() as followers:
                        followers.start_soon(self._follow_changes, client)
                        await stop.wait()
                        followers.cancel_scope.cancel()
        except Exception as exc:
            box["error"] = exc
        finally:
            self._client = None
            if self._stop is stop:
                self._stop = None
                self._scope = None
            ready.set()
            try:
                if resource is not None:
                    if isinstance(resource, StderrPump):
                        resource.close()
                    else:
                        with anyio.CancelScope(shield=True):
                            with anyio.move_on_after(self.config.shutdown_timeout):
                                await resource.aclose()
            finally:
                finished.set()

    def _announced(self) -> None:
        """The server said its tools changed: wake the follower (a flood costs nothing more)."""
        if self._changed is not None:
            self._changed.set()

    async def _follow_changes(self, client: Client) -> None:
        """List the server again after each burst of announced changes, for this connection."""
        self._changed = changed = anyio.Event()
        async with anyio.create_task_group() as group:
            if client.protocol_version in MODERN_PROTOCOL_VERSIONS:
                tools = client.server_capabilities.tools
                if tools is not None and tools.list_changed:
                    group.start_soon(self._listen, client)
            while True:
                await changed.wait()
                await anyio.sleep(LIST_CHANGED_DEBOUNCE)  # gather the rest of the burst
                self._changed = changed = anyio.Event()
                await self._relist()

    async def _listen(self, client: Client) -> None:
        """2026-07-28: change announcements arrive on a ``subscriptions/listen`` stream."""
        try:
            async with client.listen(tools_list_changed=True) as events:
                async for _event in events:
                    self._announced()
        except Exception as exc:  # the stream failed: announcements are lost, calls go on
            _log.warning(
                "MCP server %r: its change announcements could not be followed: %s",
                self.config.name,
                describe_exception(exc),
            )

    async def _relist(self) -> None:
        before = self._listed
        if before is None:
            return  # never listed: the next listing is fresh anyway
        try:
            listed = await self.list_tools(relisting=True)
        except _UnavailableError:
            return  # reported; the tools mounted before stay
        if _listing_key(listed) != _listing_key(before):
            self._mount._changed(self, listed)

    def _failed(self, code: str, message: str) -> None:
        self._failures += 1
        delay = min(self._backoff * 2 ** (self._failures - 1), self._max_backoff)
        self._retry_at = anyio.current_time() + delay
        self._report(code, message)

    def _report(self, code: str, message: str, tool: str | None = None) -> None:
        diagnostic = MountDiagnostic(
            server=self.config.name, code=code, message=message, tool_name=tool
        )
        self._mount._report(diagnostic)

    async def connect(self) -> Client:
        """The open connection, starting the server if needed.

        Raises:
            _UnavailableError: it could not be started (the diagnostic is recorded).
        """
        client = self._client
        if client is not None:
            return client
        if self._lock is None:
            self._lock = anyio.Lock()
        async with self._lock:
            if self._client is not None:
                return self._client
            name = self.config.name
            wait = self._retry_at - anyio.current_time()
            if wait > 0:
                raise _UnavailableError(
                    f"MCP server {name!r} failed recently; it is started again in {wait:.1f} s"
                )
            ready = anyio.Event()
            box: dict[str, Any] = {}
            self._unreadable = None
            self._mount._task_group().start_soon(self._run, ready, box)
            with anyio.move_on_after(self.config.startup_timeout):
                await ready.wait()
            if "client" in box and self.connected:
                self._failures = 0
                connected: Client = box["client"]
                return connected
            if self._scope is not None:
                self._scope.cancel()  # still starting: stop it (the transport ends the process)
            if "error" in box:
                cause = describe_exception(_innermost(box["error"]))
                what = "command" if self.config.command is not None else "URL"
                message = f"MCP server {name!r} could not be started: {cause}; check its {what}"
            else:
                message = (
                    f"MCP server {name!r} did not answer its handshake within"
                    f" {self.config.startup_timeout:g} s{self._what_it_sent()}; check that it"
                    " speaks MCP"
                )
            self._failed("unavailable", message)
            raise _UnavailableError(message)

    def _lost(self, client: Client, exc: BaseException) -> str:
        if self._client is client:
            self._drop(client)
            message = (
                f"MCP server {self.config.name!r} closed the connection"
                f" ({describe_exception(_innermost(exc))}); it is started again on the next call"
            )
            self._failed("connection-lost", message)
            return message
        return f"MCP server {self.config.name!r} closed the connection; try the call again"

    def _drop(self, client: Client) -> None:
        """Close ``client``'s connection (a stalled server); the next use starts it again."""
        if self._client is client:
            self._client = None
            if self._stop is not None:
                self._stop.set()

    async def list_tools(self, *, relisting: bool = False) -> list[types.Tool]:
        """The server's tools (every page, at most ``max_tools``), starting it if needed.

        Remote tools that cannot be used (an entry that is not a tool, an input schema whose
        root is not an object, an empty or repeated name) are left out, one diagnostic each.
        ``relisting``: the server announced a change (a failure keeps the previous tools).

        Raises:
            _UnavailableError: it could not be started or listed.
        """
        client = await self.connect()
        name = self.config.name
        limit = self.config.list_timeout
        kept = "; the tools mounted before stay" if relisting else ""
        try:
            with anyio.fail_after(limit):
                tools = await self._list_pages(client)
        except TimeoutError:
            message = (
                f"MCP server {name!r} did not list its tools within {limit:g} s"
                f"{' after announcing a change' if relisting else ''}{self._what_it_sent()}"
                f"{kept}; it is started again on the next use"
            )
            self._drop(client)
            self._failed("list-failed", message)
            raise _UnavailableError(message) from None
        except MCPError as exc:
            if exc.error.code == types.CONNECTION_CLOSED:
                raise _UnavailableError(self._lost(client, exc)) from None
            message = f"MCP server {name!r} could not list its tools: {exc.error.message}{kept}"
            self._report("list-failed", message)
            raise _UnavailableError(message) from None
        except _UnavailableError:
            raise
        except Exception as exc:  # the transport failed (closed stream, HTTP error, ...)
            raise _UnavailableError(self._lost(client, exc)) from None
        self._listed = tools
        return tools

    async def _list_pages(self, client: Client) -> list[types.Tool]:
        name = self.config.name
        cap = self.config.max_tools
        tools: list[types.Tool] = []
        seen: set[str] = set()
        cursors: set[str] = set()
        cursor: str | None = None
        for _ in range(MAX_PAGES):
            entries, cursor = await self._page(client, cursor)
            for remote in entries:
                problem = remote_problem(remote, seen)
                if problem is not None:
                    self._invalid(remote, problem)
                    continue
                seen.add(remote.name)
                if len(tools) == cap:
                    self._report(
                        "too-many-tools",
                        f"MCP server {name!r} lists more than {cap} tools; the first {cap} are"
                        " mounted (raise max_tools to take more)",
                    )
                    return tools
                tools.append(remote)
            if not cursor:
                return tools
            if cursor in cursors:
                break  # a server that hands out the same cursor again would loop forever
            cursors.add(cursor)
        self._report(
            "list-failed",
            f"MCP server {name!r} did not finish listing its tools within {MAX_PAGES} pages (or"
            " repeated a cursor); the tools listed so far are mounted",
        )
        return tools

    async def _page(self, client: Client, cursor: str | None) -> tuple[list[Any], str | None]:
        """One page: parsed tools, or raw entries when the SDK refused the page as a whole
        (one unusable tool fails its validation of the entire result)."""
        try:
            page = await client.list_tools(cursor=cursor, cache_mode="refresh")
        except pydantic.ValidationError as exc:
            try:
                return await raw_tools_page(client, cursor, self.config.max_tools + 1)
            except AttributeError:  # an SDK without the internals read entry by entry
                message = (
                    f"MCP server {self.config.name!r} could not list its tools: its listing"
                    f" breaks the protocol ({describe_exception(exc)[:300]})"
                )
                self._report("list-failed", message)
                raise _UnavailableError(message) from None
        return list(page.tools), page.next_cursor

    def _invalid(self, remote: Any, problem: str) -> None:
        label = remote.name if isinstance(remote.name, str) else "?"
        message = f"MCP server {self.config.name!r}: tool {label!r} is not mounted: {problem}"
        self._report("invalid-tool", message, label)

    async def call(
        self, remote: str, arguments: Mapping[str, Any], on_update: Any, ctx: Any = None
    ) -> ToolResult:
        """Call ``remote`` and map its result; failures of the server are error results.

        ``ctx`` is the call's :class:`~customtools.ToolContext`: its ``_meta`` is sent, and
        the server's questions during the call go to its talk-back first.
        """
        meta = getattr(ctx, "meta", None)
        name = self.config.name

        def error(text: str, code: str, **details: Any) -> ToolResult:
            return error_result(Kind.MCP_SERVER, code, text, server=name, tool=remote, **details)

        try:
            client = await self.connect()
        except _UnavailableError as exc:
            return error(str(exc), Code.UNAVAILABLE)

        async def relay(progress: float, total: float | None, message: str | None) -> None:
            text = message or (f"{progress:g}/{total:g}" if total else f"{progress:g}")
            on_update(ToolResult.from_text(text, details={"progress": progress, "total": total}))

        caller = CALLER.set(ctx)  # the questions this call causes go to its talk-back
        try:
            result = await client.call_tool(
                remote,
                dict(arguments),
                # No progress token when nobody listens: it costs the server a notification each.
                progress_callback=None if on_update is discard_update else relay,
                meta=dict(meta) if meta else None,  # type: ignore[arg-type]
            )
        except MCPError as exc:
            if exc.error.code == types.CONNECTION_CLOSED:
                return error(self._lost(client, exc), Code.CONNECTION_LOST)
            if exc.error.code == types.REQUEST_TIMEOUT:
                return error(
                    f"MCP server {name!r} did not answer the call of {remote!r} in time"
                    f"{self._what_it_sent()}",
                    Code.TIMEOUT,
                    rpc_code=exc.error.code,
                )
            return error(
                f"MCP server {name!r} refused the call of {remote!r}: {exc.error.message}",
                Code.REFUSED,
                rpc_code=exc.error.code,
            )
        except (pydantic.ValidationError, RuntimeError) as exc:
            # The answer arrived but is not a valid result (its structuredContent breaks the
            # tool's outputSchema, or it breaks the protocol's result shape): that call failed,
            # the connection is fine.
            if isinstance(exc, RuntimeError) and not is_result_check(exc):
                return error(self._lost(client, exc), Code.CONNECTION_LOST)
            return error(
                f"MCP server {name!r} answered the call of {remote!r} with an invalid result:"
                f" {describe_exception(exc)[:500]}",
                Code.INVALID_RESULT,
            )
        except Exception as exc:
            # Anything else is the transport failing (a closed stream, an HTTP error, an
            # unreadable answer): drop the connection; the next call reconnects.
            return error(self._lost(client, exc), Code.CONNECTION_LOST)
        finally:
            CALLER.reset(caller)
        return from_call_result(result, where=f"MCP server {name!r}, tool {remote!r}")

    async def aclose(self) -> None:
        """Close the connection (a stdio server is stopped), within ``shutdown_timeout``."""
        if self._stop is not None:
            self._stop.set()
        scope, finished = self._scope, self._finished
        if self._client is None and scope is not None:
            scope.cancel()  # still starting
        if finished is None or finished.is_set():
            return
        with anyio.CancelScope(shield=True):
            with anyio.move_on_after(self.config.shutdown_timeout):
                await finished.wait()
            if not finished.is_set() and scope is not None:
                _log.warning(
                    "MCP server %r did not close within %g s; its connection is cut",
                    self.config.name,
                    self.config.shutdown_timeout,
                )
                scope.cancel()


def _listing_key(tools: Sequence[types.Tool]) -> list[Any]:
    return [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools]


def _mounted_tool(server: MountedServer, remote: types.Tool) -> CustomTool:
    config = server.config
    name = mounted_tool_name(config.name, remote.name)
    check_tool_name(name)
    remote_name = remote.name

    async def execute(
        tool_call_id: str, params: Any, on_update: Any, ctx: Any, signal: Any
    ) -> ToolResult:
        return await server.call(remote_name, params, on_update, ctx)

    meta = dict(remote.meta) if remote.meta else {}
    meta[ORIGIN_META_KEY] = {"server": config.name, "tool": remote_name}
    annotations = (
        remote.annotations.model_dump(by_alias=True, exclude_none=True, mode="json")
        if remote.annotations is not None
        else None
    )
    title = remote.title or (remote.annotations.title if remote.annotations else None)
    output = remote.output_schema
    if output is not None and output.get("type") != "object":
        output = None  # customtools results carry object-shaped structured content only
    return CustomTool(
        name=name,
        label=title or remote_name,
        description=remote.description or "",
        parameters=dict(remote.input_schema),
        output_schema=dict(output) if output is not None else None,
        execute=execute,
        timeout=config.timeout,
        # What the model sent is what the server gets: validated, not rewritten.
        coerce_args=False,
        apply_defaults=False,
        annotations=annotations or None,
        meta=meta,
    )


class McpMount:
    """Several MCP servers mounted as custom tools; an async context manager.

    ``async with McpMount(configs) as mcp_tools: tools = await mcp_tools.tools()``. The
    servers start on first use and close when the block ends (or at :meth:`aclose`). An
    open mount is also the ``mcp_servers=`` provider of ``discover_and_load``, which mounts
    the servers of ``.mcp.json`` files through it.

    Args:
        configs: the servers (names must be unique).
        backoff: seconds before a failed server is started again; doubles per consecutive
            failure.
        max_backoff: the longest back-off.
        max_message: the most bytes one message from a server may take (a stdio line, or an
            HTTP response that is not an event stream); a longer one is dropped as it arrives
            and the request it answered gets an error.
        input_handler: answers a server's elicitation (form mode) with the host's forms
            (:class:`~customtools.talkback.InputHandler`); without it (or ``ui``) elicitation
            is not declared and a server that asks is refused.
        sampler: answers a server's ``sampling/createMessage`` with the host's model.
        log_sink: receives a server's log messages; else the
            ``customtools.mcp.server.<name>`` logger.
        ui: the host's :class:`~customtools.loading.UIContext`, asking field by field when
            no ``input_handler`` is given.
    """

    def __init__(
        self,
        configs: Iterable[McpServerConfig] = (),
        *,
        backoff: float = 1.0,
        max_backoff: float = 60.0,
        max_message: int = DEFAULT_MAX_MESSAGE,
        input_handler: InputHandler | None = None,
        sampler: Sampler | None = None,
        log_sink: LogSink | None = None,
        ui: Any = None,
    ) -> None:
        if input_handler is None and ui is not None:
            input_handler = ui_input_handler(ui)
        self._talkback = {"input_handler": input_handler, "sampler": sampler, "log_sink": log_sink}
        self.max_message = max_message
        """The most bytes one message from a stdio server may take."""
        self._backoff = backoff
        self._max_backoff = max_backoff
        self._servers: dict[str, MountedServer] = {}
        for config in configs:
            if config.name in self._servers:
                raise ValueError(f"MCP server {config.name!r} is configured twice")
            self._servers[config.name] = MountedServer(
                config, self, backoff=backoff, max_backoff=max_backoff
            )
        self._diagnostics: list[MountDiagnostic] = []
        self._watchers: list[MountChanges] = []
        self._tg: Any = None
        self._exit: Any = None

    def __repr__(self) -> str:
        return f"<McpMount {list(self._servers)}>"

    @property
    def servers(self) -> Mapping[str, MountedServer]:
        """The mounted servers by name."""
        return dict(self._servers)

    @property
    def diagnostics(self) -> Sequence[MountDiagnostic]:
        """Everything that went wrong so far, oldest first (also logged as warnings)."""
        return tuple(self._diagnostics)

    def _report(self, diagnostic: MountDiagnostic) -> None:
        _log.warning("%s", diagnostic.message)
        self._diagnostics.append(diagnostic)

    def _task_group(self) -> Any:
        if self._tg is None:
            raise RuntimeError("use the McpMount in `async with` before calling its tools")
        return self._tg

    async def __aenter__(self) -> McpMount:
        tg = anyio.create_task_group()
        await tg.__aenter__()
        self._tg = tg
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None:
        await self.aclose()
        tg, self._tg = self._tg, None
        if tg is None:
            return None
        return await tg.__aexit__(exc_type, exc, tb)  # type: ignore[no-any-return]

    async def aclose(self) -> None:
        """Close every server's connection (the ``async with`` block does this)."""
        for server in self._servers.values():
            await server.aclose()

    async def __call__(
        self, configs: Sequence[McpServerConfig]
    ) -> tuple[list[CustomTool], list[str]]:
        """Mount ``configs`` as well and return their tools and what went wrong.

        This makes an open mount the ``mcp_servers=`` provider of ``discover_and_load``. A
        server already mounted with the same configuration is reused (a reload does not
        restart it); one whose configuration changed is closed and replaced.
        """
        added: list[MountedServer] = []
        for config in configs:
            current = self._servers.get(config.name)
            if current is not None and current.config != config:
                await current.aclose()
                current = None
            if current is None:
                current = MountedServer(
                    config, self, backoff=self._backoff, max_backoff=self._max_backoff
                )
                self._servers[config.name] = current
            added.append(current)
        before = len(self._diagnostics)
        tools = await self._tools_of(added)
        return tools, [d.message for d in self._diagnostics[before:]]

    def _changed(self, server: MountedServer, listed: list[types.Tool]) -> None:
        change = MountChange(server=server.config.name, tools=tuple(self._mounted(server, listed)))
        for watcher in self._watchers:
            watcher.put(change)

    def changes(self) -> MountChanges:
        """Each change of a mounted server's tools from now on, as it is found (``async for``).

        A server that announces a change is listed again; when its tools differ from the
        last listing, every open iterator gets a :class:`MountChange` with all of that
        server's tools. The iterator watches from the moment this returns, before the first
        ``__anext__``. A consumer that falls behind gets the newest tools of each server
        (changes are merged per server, never queued without bound). Close it with
        ``contextlib.aclosing`` (or :meth:`MountChanges.aclose`).
        """
        return MountChanges(self._watchers)

    async def tools(self) -> list[CustomTool]:
        """The tools of every server, in configuration order; starts the servers.

        A server that cannot be reached, or a remote tool that cannot be mounted (a name
        longer than the 64 characters tool names allow, characters outside
        ``[A-Za-z0-9_-]``, an unusable schema), is left out and recorded in
        :attr:`diagnostics`.
        """
        return await self._tools_of(list(self._servers.values()))

    async def _tools_of(self, servers: Iterable[MountedServer]) -> list[CustomTool]:
        tools: list[CustomTool] = []
        for server in servers:
            try:
                listed = await server.list_tools()
            except _UnavailableError:
                continue
            tools.extend(self._mounted(server, listed))
        return tools

    def _mounted(self, server: MountedServer, listed: Iterable[types.Tool]) -> list[CustomTool]:
        tools: list[CustomTool] = []
        for remote in listed:  # each already checked by list_tools
            try:
                tools.append(_mounted_tool(server, remote))
            except CustomToolsError as exc:
                server._invalid(remote, describe_exception(exc))
        return tools


class MountChanges:
    """An open :meth:`McpMount.changes` iterator: the newest unread change per server."""

    __slots__ = ("_pending", "_wake", "_watchers")

    def __init__(self, watchers: list[MountChanges]) -> None:
        self._pending: dict[str, MountChange] = {}
        self._wake = anyio.Event()
        self._watchers = watchers
        watchers.append(self)

    def put(self, change: MountChange) -> None:
        """Keep ``change`` for the consumer (replacing an unread one of the same server)."""
        self._pending[change.server] = change
        self._wake.set()

    def __aiter__(self) -> MountChanges:
        return self

    async def __anext__(self) -> MountChange:
        while not self._pending:
            if self not in self._watchers:
                raise StopAsyncIteration
            await self._wake.wait()
            self._wake = anyio.Event()
        server = next(iter(self._pending))
        return self._pending.pop(server)

    async def aclose(self) -> None:
        """Stop watching (an iteration waiting for a change ends)."""
        if self in self._watchers:
            self._watchers.remove(self)
        self._wake.set()


def mount(configs: Iterable[McpServerConfig] | McpServerConfig, **options: Any) -> McpMount:
    """An :class:`McpMount` for one or several servers (use it with ``async with``)."""
    if isinstance(configs, McpServerConfig):
        configs = [configs]
    return McpMount(configs, **options)
