"""Serve custom tools over MCP: :class:`ToolServer`, built on the SDK's low-level ``Server``.

The low-level server sends each tool's ``inputSchema`` exactly as declared and leaves
validation, errors and cancellation to us:

* ``tools/list`` is built from the live registry on every request;
* ``tools/call`` runs through a :class:`~customtools.CustomToolAdapter` (arguments validated,
  every violation named in an ``isError`` result; exceptions become ``isError`` results);
  an unknown name is the protocol error ``Unknown tool: <name>``;
* partial results become ``notifications/progress`` (1, 2, 3, ...), coalesced to at most one
  per ``progress_interval`` seconds, the newest flushed before the result and none after it;
* a client's cancellation (``notifications/cancelled`` or a dropped connection) aborts the
  tool's signal first; the call has ``cancel_grace`` seconds (its ``grace``, see
  docs/cancellation.md) before it is stopped; no response is sent for a cancelled request
  (the protocol's rule), nor anything at all once the client's input has closed.

Both protocol eras are served: the handshake era (``initialize``, up to 2025-11-25) and the
modern era (2026-07-28); the client's first request decides.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import re
import secrets
import warnings
import weakref
from collections.abc import AsyncIterator, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import anyio
import mcp_types as types
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError
from mcp.shared.subscriptions import ServerEvent, ToolsListChanged

from customtools._abort import AbortController
from customtools._approval import Approver
from customtools._content import ToolResult
from customtools._context import DEFAULT_CONTEXT, ToolContext
from customtools._error_results import LoadCode
from customtools._export import to_mcp
from customtools._observe import use_context
from customtools._registry import LoadedToolLike, RegisteredTool, ToolRegistry
from customtools._runtime import DEFAULT_GRACE, SELF_STOP_BOUND
from customtools._session import SessionEvent, dispatch_session_event
from customtools._talkback import NO_OP_UI
from customtools._tool import CustomTool
from customtools.mcp._http import BearerMiddleware, HttpSecurity
from customtools.mcp._rerun import StateSeal, arguments_digest, input_required, resume
from customtools.mcp._results import progress_message, to_call_result
from customtools.mcp._search import (
    CURRENT_REQUEST,
    SEARCH_TOOL_NAME,
    ToolVisibility,
    client_key,
    connection_of,
    principal,
    search_tool,
)
from customtools.mcp._shared import SharedStateError
from customtools.mcp._talkback import CallBridge, LogLevels

if TYPE_CHECKING:
    from starlette.applications import Starlette

    from customtools._policy import Policy
    from customtools.mcp._redis import RedisState

__all__ = [
    "DEFAULT_CANCEL_GRACE",
    "DEFAULT_PROGRESS_INTERVAL",
    "MCP_TOOL_NAME_PATTERN",
    "ServeDiagnostic",
    "ToolServer",
]

_log = logging.getLogger("customtools.mcp")

MCP_TOOL_NAME_PATTERN = r"^[A-Za-z0-9._-]{1,128}$"
"""Tool names MCP clients accept (the 2025-11-25 spec, SEP-986)."""

_MCP_NAME_RE = re.compile(MCP_TOOL_NAME_PATTERN)

DEFAULT_PROGRESS_INTERVAL = 0.05
"""Seconds between two progress notifications of one call (newer updates replace older)."""

DEFAULT_CANCEL_GRACE: Final = DEFAULT_GRACE
"""The ``grace`` of served calls (docs/cancellation.md): seconds a cancelled call's tool has,
after its signal fired, before it is stopped by kind."""

_SETTLE_BOUND = SELF_STOP_BOUND + 2.0  # past the grace: the adapter's own bound, with room

_RESERVED_META_PREFIX = "io.modelcontextprotocol/"

_MAX_SESSIONS = 10_000  # the SDK's default cap on stateful HTTP sessions


@dataclass(frozen=True, slots=True, kw_only=True)
class ServeDiagnostic:
    """A tool the server could not offer, and why.

    Attributes:
        tool_name: the tool's name.
        code: ``"invalid-name"``, ``"schema-root"`` or the registry's ``"name-conflict"``.
        message: one line saying what is wrong and what to do.
    """

    tool_name: str
    code: str
    message: str


def _listing(tool: CustomTool) -> types.Tool:
    return types.Tool.model_validate(to_mcp(tool))


def _check(item: CustomTool | LoadedToolLike, registry: ToolRegistry) -> ServeDiagnostic | None:
    """MCP's own checks (the name pattern, an object root), then the registry's name rule:
    the tool (or the load record's) is registered unless a diagnostic says why not."""
    tool = item if isinstance(item, CustomTool) else item.tool
    name = tool.name
    if _MCP_NAME_RE.match(name) is None or name.endswith("\n"):
        return ServeDiagnostic(
            tool_name=name,
            code=LoadCode.INVALID_NAME,
            message=f"tool {name!r} is not served: MCP clients reject names outside"
            f" {MCP_TOOL_NAME_PATTERN}; rename the tool",
        )
    if tool.parameters.get("type") != "object":
        return ServeDiagnostic(
            tool_name=name,
            code=LoadCode.SCHEMA_ROOT,
            message=f"tool {name!r} is not served: MCP needs an object schema at the root of"
            ' its parameters ("type": "object"); wrap the arguments in Type.Object(...)',
        )
    conflict = registry.add(tool) if item is tool else registry.extend([item])
    if isinstance(conflict, list):
        conflict = conflict[0] if conflict else None
    if conflict is None:
        return None
    return ServeDiagnostic(tool_name=name, code=conflict.code, message=conflict.error)


def _tool_meta(ctx: Any) -> Mapping[str, Any] | None:
    """The request's ``_meta`` without the protocol's reserved keys and the progress token."""
    params = ctx.params
    raw = params.get("_meta") if isinstance(params, Mapping) else None
    if not raw or not isinstance(raw, Mapping):
        return None
    kept = {
        key: value
        for key, value in raw.items()
        if key != "progressToken" and not key.startswith(_RESERVED_META_PREFIX)
    }
    return kept or None


class _Progress:
    """Turns a call's partial results into coalesced ``notifications/progress``.

    The pump task starts on the first update; progress counts 1, 2, 3, ...; after each
    notification the next waits ``interval`` seconds, and updates in between replace each
    other. :meth:`aclose` sends the newest pending update and stops the pump.
    """

    __slots__ = (
        "_closing",
        "_count",
        "_done",
        "_has_pending",
        "_interval",
        "_message",
        "_running",
        "_session",
        "_signal",
        "_stop",
        "_tg",
        "_wake",
    )

    def __init__(self, session: Any, interval: float, tg: Any, signal: Any) -> None:
        self._session = session
        self._interval = interval
        self._tg = tg
        self._signal = signal
        self._count = 0
        self._message: str | None = None
        self._has_pending = False
        self._running = False
        self._closing = False
        self._wake: anyio.Event | None = None
        self._stop: anyio.Event | None = None
        self._done: anyio.Event | None = None

    def __call__(self, partial: ToolResult) -> None:
        if self._closing or self._signal.aborted:
            return  # nothing after the result, nothing after an abort
        self._message = progress_message(partial)
        self._has_pending = True
        if not self._running:
            self._running = True
            self._wake = anyio.Event()
            self._stop = anyio.Event()
            self._done = anyio.Event()
            self._tg.start_soon(self._pump)
        else:
            assert self._wake is not None
            self._wake.set()

    async def _pump(self) -> None:
        assert self._stop is not None
        assert self._done is not None
        try:
            while True:
                if self._has_pending:
                    self._has_pending = False
                    self._count += 1
                    await self._session.report_progress(self._count, None, self._message)
                    if not self._closing:
                        with anyio.move_on_after(self._interval):
                            await self._stop.wait()
                    continue
                if self._closing:
                    return
                self._wake = anyio.Event()
                await self._wake.wait()
        finally:
            self._done.set()

    async def aclose(self) -> None:
        self._closing = True
        if not self._running:
            return
        assert self._stop is not None
        assert self._wake is not None
        assert self._done is not None
        self._stop.set()
        self._wake.set()
        await self._done.wait()


class _BridgeServer(Server[Any]):
    """The low-level server, advertising ``tools.listChanged`` in the handshake era too.

    The HTTP session manager and the in-memory test transport build initialization options
    with no arguments; the default here makes them advertise list changes.
    """

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> Any:
        if notification_options is None:
            notification_options = NotificationOptions(tools_changed=True)
        return super().create_initialization_options(
            notification_options, experimental_capabilities, extensions
        )


class ToolServer:
    """Custom tools served over MCP.

    Args:
        tools: the tools to serve, in precedence order: tools, or load records (a
            :class:`~customtools.LoadResult`'s ``tools``, which carry their packs'
            declarations to the execution policy). Tools MCP cannot offer are left out and
            reported in :attr:`diagnostics`.
        name: the server name announced to clients.
        version: the server version announced to clients.
        instructions: optional instructions for the client's model.
        timeout: seconds any call may run (the tool's own ``timeout`` may be smaller).
        progress_interval: seconds between two progress notifications of one call.
        cancel_grace: the ``grace`` of every call (docs/cancellation.md): seconds a cancelled
            call's tool has, after its signal fired, before it is stopped by kind.
        context: the :class:`~customtools.ToolContext` calls get (its ``meta`` is replaced by
            the request's ``_meta``, without the protocol's reserved keys). Its ``ui``,
            ``input_handler``, ``sampler`` and ``log_sink``, when unset, are the client's:
            elicitation, sampling and logging, per the client's declared capabilities.
        approver: asked before a tool that requires approval runs; by default the client is
            asked by elicitation (a client without it gets a refusal saying so).
        state_key: the key sealing ``requestState`` of re-run calls (2026-07-28 era); random
            per server by default (or the deployment's, with ``shared``), so several
            replicas behind one endpoint need a shared one.
        shared: the state replicas share, a connected :class:`RedisState`: used
            ``requestState`` nonces, ``list_changed`` across replicas, the tools each client's
            searches found (``tool_search``) and, for handshake-era sessions over HTTP, the
            SSE event store (docs/deploy.md). By default all of it is this process's.
        policy: the execution policy of every call (:class:`~customtools.policy.Policy`;
            docs/policy.md). Each call's ``ctx.caller`` is its client: the authenticated
            principal (OAuth subject, or a digest of the token), else its connection in the
            handshake era (one per stdio server), else none (sessionless requests and
            stateless HTTP: nothing is cached for them). A ``read_result`` tool
            is served too, for trimmed results (unless a tool already has the name).
        tool_search: list only the ``search_tools`` tool, the ``pinned`` tools and what each
            client's searches found (every tool stays callable by name; see ``docs/mcp.md``).
        pinned: with ``tool_search``, the tool names (or ``fnmatch`` patterns) always listed.
    """

    def __init__(
        self,
        tools: Iterable[CustomTool | LoadedToolLike] = (),
        *,
        name: str = "customtools",
        version: str | None = None,
        instructions: str | None = None,
        timeout: float | None = None,
        progress_interval: float = DEFAULT_PROGRESS_INTERVAL,
        cancel_grace: float = DEFAULT_CANCEL_GRACE,
        context: ToolContext | None = None,
        approver: Approver | None = None,
        state_key: bytes | None = None,
        shared: RedisState | None = None,
        policy: Policy | None = None,
        tool_search: bool = False,
        pinned: Iterable[str] = (),
    ) -> None:
        if version is None:
            from customtools import __version__

            version = __version__
        self._timeout = timeout
        self._interval = progress_interval
        self._grace = cancel_grace
        self._context = context if context is not None else DEFAULT_CONTEXT
        self._approver = approver
        self._policy = policy
        self._callers: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()
        self._context_fields: dict[str, Any] | None = None
        if state_key is None and shared is not None:
            state_key = shared.state_key
        self._seal = StateSeal(
            state_key if state_key is not None else secrets.token_bytes(32),
            shared.nonces if shared is not None else None,
        )
        self._shared = shared
        self._levels = LogLevels()
        self._registry = ToolRegistry()
        if policy is not None:  # its trimmed results name read_result: list it to everyone
            pinned = (*pinned, "read_result")
        self._visibility = (
            ToolVisibility(pinned, shared.visibility if shared is not None else None)
            if tool_search
            else None
        )
        self._structured: frozenset[str] = frozenset()
        self._listing: list[types.Tool] = []
        self._tools: tuple[CustomTool, ...] = ()
        self._diagnostics: tuple[ServeDiagnostic, ...] = ()
        # Handshake-era connections, to notify of list changes. The SDK keeps no registry
        # and says nothing when one closes: a failed send drops it, and the oldest go first
        # past the SDK's own session cap. Changes reach them from the bus (this replica's
        # and, with shared state, the others'), sent by a task of the lifespan.
        self._sessions: dict[Any, None] = {}
        self._connections: dict[Any, None] = {}  # theirs, for tool search's client keys
        self._changed: anyio.Event | None = None
        self._bus: Any = shared.bus if shared is not None else InMemorySubscriptionBus()
        self._live = 0  # sessions (lifespans) running: tools swapped in then hear `start`
        self._install(tools)
        with warnings.catch_warnings():
            # Logging is deprecated from 2026-07-28 but served to handshake-era clients.
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            self.server: Server[Any] = _BridgeServer(
                name,
                version=version,
                instructions=instructions,
                lifespan=self._lifespan,
                get_tool_input_schema=self._input_schema,
                on_list_tools=self._on_list_tools,
                on_call_tool=self._on_call_tool,
                on_subscriptions_listen=ListenHandler(self._bus),
                on_set_logging_level=self._on_set_level,
            )
        """The SDK's low-level ``Server`` (for transports and test clients)."""
        self.server.middleware.append(self._track_sessions)

    def __repr__(self) -> str:
        return f"<ToolServer {len(self._registry)} tools>"

    @property
    def tool_names(self) -> tuple[str, ...]:
        """The names of the tools being served, in listing order."""
        return self._registry.names

    @property
    def diagnostics(self) -> tuple[ServeDiagnostic, ...]:
        """The tools left out at the last :meth:`set_tools` (or construction), and why."""
        return self._diagnostics

    def _install(self, tools: Iterable[CustomTool | LoadedToolLike]) -> None:
        policy = self._policy
        registry = ToolRegistry(timeout=self._timeout, context=self._context, policy=policy)
        diagnostics: list[ServeDiagnostic] = []
        if self._visibility is not None:
            tools = [search_tool(registry, self._reveal), *tools]
        for tool in tools:
            problem = _check(tool, registry)
            if problem is not None:
                _log.warning("%s", problem.message)
                diagnostics.append(problem)
        if policy is not None:  # a pack may declare a budget even when the host sets none
            from customtools._policy import read_result_tool

            if "read_result" not in registry:
                registry.add(read_result_tool(policy))
        self._registry = registry
        self._listing = [_listing(tool) for tool in registry if not tool.hidden]
        self._structured = frozenset(t.name for t in registry if t.output_schema is not None)
        self._tools = registry.tools
        self._diagnostics = tuple(diagnostics)

    async def set_tools(self, tools: Iterable[CustomTool | LoadedToolLike]) -> None:
        """Replace the served tools (after a reload) and tell connected clients.

        Load records (a :class:`~customtools.LoadResult`'s ``tools``) carry their packs'
        declarations to the execution policy; plain tools are packs of their own.

        Calls already running finish with the tools they started with. While a session runs,
        the tools that leave hear its ``shutdown`` and the tools that arrive its ``start``
        (a tool kept as it was hears nothing), as if they had been there from the start.
        """
        before = self._tools
        self._install(tools)
        if self._live:
            kept = {id(tool) for tool in self._tools}
            gone = [tool for tool in before if id(tool) not in kept]
            known = {id(tool) for tool in before}
            new = [tool for tool in self._tools if id(tool) not in known]
            with anyio.CancelScope(shield=True), anyio.move_on_after(self._grace):
                await dispatch_session_event(gone, SessionEvent(reason="shutdown"), self._context)
            await dispatch_session_event(new, SessionEvent(reason="start"), self._context)
        await self.notify_tools_changed()

    async def notify_tools_changed(self) -> None:
        """Send ``tools/list_changed`` to every client (of every replica, with shared
        state): handshake-era connections get the notification, modern-era clients get it
        on their ``subscriptions/listen`` stream."""
        await self._bus.publish(ToolsListChanged())

    def _heard(self, event: ServerEvent) -> None:
        # A bus listener: synchronous, so the sends happen in the lifespan's task.
        if isinstance(event, ToolsListChanged) and self._changed is not None:
            self._changed.set()

    async def _tell_sessions(self) -> None:
        while self._changed is not None:
            await self._changed.wait()
            self._changed = anyio.Event()  # a change heard during the sends wakes it again
            for session in list(self._sessions):
                try:
                    await session.send_tool_list_changed()
                except Exception:
                    self._sessions.pop(session, None)  # a closed connection

    # -- SDK hooks -------------------------------------------------------------------------

    async def _track_sessions(self, ctx: Any, call_next: Any) -> Any:
        if ctx.method == "notifications/initialized":
            self._sessions[ctx.session] = None
            self._connections[connection_of(ctx.session)] = None
            if len(self._sessions) > _MAX_SESSIONS:
                oldest = next(iter(self._sessions))
                del self._sessions[oldest]
                self._connections.pop(connection_of(oldest), None)
        return await call_next(ctx)

    @contextlib.asynccontextmanager
    async def _lifespan(self, _server: Any) -> AsyncIterator[dict[str, Any]]:
        # One connection over stdio or in memory; the app's lifetime over HTTP.
        await dispatch_session_event(self._tools, SessionEvent(reason="start"), self._context)
        telling = self._changed is None  # one teller, however many connections run
        unsubscribe = None
        if telling:
            self._changed = anyio.Event()
            unsubscribe = self._bus.subscribe(self._heard)
        self._live += 1
        try:
            async with anyio.create_task_group() as group:
                if telling:
                    group.start_soon(self._tell_sessions)
                yield {}
                group.cancel_scope.cancel()
        finally:
            self._live -= 1
            if unsubscribe is not None:
                unsubscribe()
                self._changed = None
            self._sessions.clear()
            self._connections.clear()
            with anyio.CancelScope(shield=True), anyio.move_on_after(self._grace):
                await dispatch_session_event(
                    self._tools, SessionEvent(reason="shutdown"), self._context
                )

    def _input_schema(self, name: str) -> Mapping[str, Any] | None:
        tool = self._registry.get(name)
        return tool.parameters if tool is not None else None

    async def _on_list_tools(self, ctx: Any, params: Any) -> types.ListToolsResult:
        visibility = self._visibility
        if visibility is None:
            return types.ListToolsResult(tools=self._listing)
        try:
            found = await visibility.found(client_key(ctx, self._connections))
        except SharedStateError:  # logged and counted by the store: the pinned tools still
            found = frozenset()
        listed = [t for t in self._listing if t.name in found or visibility.is_pinned(t.name)]
        return types.ListToolsResult(tools=listed)

    async def _reveal(self, names: list[str]) -> None:
        """Tool search found ``names`` for the client of the current call: list them for it
        and tell it the list changed."""
        ctx = CURRENT_REQUEST.get()
        if ctx is None or self._visibility is None:
            return
        try:
            if not await self._visibility.reveal(client_key(ctx, self._connections), names):
                return
        except SharedStateError:  # logged by the store; found tools stay callable by name
            return
        try:  # this client's connection only (a client without one has nothing to re-list)
            await ctx.session.send_tool_list_changed()
        except Exception:
            self._sessions.pop(ctx.session, None)

    async def _on_set_level(self, ctx: Any, params: Any) -> types.EmptyResult:
        self._levels.set(ctx.session, params.level)
        return types.EmptyResult()

    async def _on_call_tool(
        self, ctx: Any, params: Any
    ) -> types.CallToolResult | types.InputRequiredResult:
        entry = self._registry.lookup(params.name)
        if entry is None:
            raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown tool: {params.name}")
        # The search tool reads its client from here (the call runs in this context).
        token = CURRENT_REQUEST.set(ctx) if entry.name == SEARCH_TOOL_NAME else None
        try:
            return await self._call(entry, ctx, params)
        except MCPError:
            raise
        except Exception:
            # A fault of the bridge itself, never of the tool (the adapter contains those):
            # the client gets a generic protocol error, the log gets the traceback.
            _log.exception("internal error while serving a call of tool %r", params.name)
            raise MCPError(
                code=types.INTERNAL_ERROR,
                message=f"internal error in the customtools MCP bridge while calling"
                f" {params.name!r}; see the server log",
            ) from None
        finally:
            if token is not None:
                CURRENT_REQUEST.reset(token)

    def _talk_context(self, meta: Any, bridge: CallBridge) -> ToolContext:
        """The call's context: the host's, with the client's talk-back where the host has none."""
        base = self._context
        fields = self._context_fields
        if fields is None:  # the host context's fields, read once (replace() costs ~6 µs)
            fields = self._context_fields = {
                f.name: getattr(base, f.name) for f in dataclasses.fields(base) if f.init
            }
        return ToolContext(
            **{
                **fields,
                "caller": base.caller or self._caller(bridge),
                "meta": meta if meta is not None else base.meta,
                "tool_name": bridge.tool,
                "ui": bridge.ui if base.ui is NO_OP_UI else base.ui,
                "has_ui": base.has_ui or bridge.can_elicit,
                "input_handler": base.input_handler or bridge.asks,
                "sampler": base.sampler or bridge.samples,
                "log_sink": base.log_sink or bridge.log_sink,
            }
        )

    def _caller(self, bridge: CallBridge) -> str | None:
        """Who makes this call, for the execution policy: the authenticated principal, else
        the connection (``None`` without a policy: nothing reads it)."""
        if self._policy is None:
            return None
        who = principal()
        if who is not None:
            return who
        if bridge.modern or bridge.cut_off:
            return None  # sessionless (or stateless HTTP): nothing tells two requests apart
        connection = bridge.connection
        try:
            caller = self._callers.get(connection)
            if caller is None:
                caller = self._callers[connection] = "mcp-connection:" + secrets.token_hex(8)
        except TypeError:  # a connection object that cannot be weakly referenced
            return None
        return caller

    async def _call(
        self, entry: RegisteredTool, ctx: Any, params: Any
    ) -> types.CallToolResult | types.InputRequiredResult:
        meta = _tool_meta(ctx)
        call_id = f"mcp-{ctx.request_id}" if ctx.request_id is not None else "mcp-call"
        arguments = params.arguments if params.arguments is not None else {}
        digest = ""
        answers = None
        if getattr(params, "request_state", None) is not None:  # a 2026-07-28 retry
            digest = arguments_digest(arguments)
            answers = await resume(self._seal, params, tool=entry.name, digest=digest)
        controller = AbortController()
        signal = controller.signal
        inner = anyio.CancelScope(shield=True)
        box: list[ToolResult] = []
        done = anyio.Event()
        async with anyio.create_task_group() as tg:
            progress = _Progress(ctx.session, self._interval, tg, signal)
            bridge = CallBridge(
                ctx,
                tool=entry.name,
                tg=tg,
                levels=self._levels,
                answers=answers,
                signal=signal,
                abort=controller.abort,
            )
            tool_ctx = self._talk_context(meta, bridge)
            approver = self._approver if self._approver is not None else bridge.approver

            async def run() -> None:
                with inner, use_context(meta):  # the client's trace, SEP-414
                    box.append(
                        await entry.adapter.execute(
                            call_id,
                            arguments,
                            signal=signal,
                            on_update=progress,
                            ctx=tool_ctx,
                            grace=self._grace,
                            approver=approver,
                        )
                    )
                done.set()

            tg.start_soon(run)
            try:
                await done.wait()
            except anyio.get_cancelled_exc_class():
                # The client cancelled (or went away): the tool's signal first; the adapter
                # stops the call past the grace (docs/cancellation.md) and returns, and this
                # waits for that, bounded. No response is sent.
                controller.abort("the MCP client cancelled the call")
                with anyio.CancelScope(shield=True):
                    with anyio.move_on_after(self._grace + _SETTLE_BOUND):
                        await done.wait()
                    inner.cancel()
                raise
            await progress.aclose()
            await bridge.aclose(self._grace)
        if bridge.missing is not None:
            raise bridge.missing
        if bridge.pending is not None:
            asked = input_required(self._seal, bridge, digest=digest or arguments_digest(arguments))
            if asked is not None:
                return asked  # type: ignore[no-any-return]
            raise MCPError(
                code=types.INVALID_PARAMS,
                message=f"tool {entry.name!r} gathered more answers than one requestState"
                " carries; ask fewer or smaller questions",
            )
        return to_call_result(box[0], structured=entry.name in self._structured)

    # -- transports ------------------------------------------------------------------------

    async def run_streams(self, read_stream: Any, write_stream: Any) -> None:
        """Serve one connection over a pair of SDK streams until the read side closes.

        Once the read side has ended (stdin closed), nothing more is written: the client is
        gone, and a response to a request that was in flight (the SDK answers those with a
        "Connection closed" error) would reach a peer that no longer reads (docs/mcp.md).
        """
        closed = _InputClosed()
        await self.server.run(
            _WatchedInput(read_stream, closed),
            _GatedOutput(write_stream, closed),
            self.server.create_initialization_options(),
        )

    async def run_stdio(self) -> None:
        """Serve one client over this process's stdin and stdout.

        While it runs, file descriptor 1 points at stderr (the SDK's guard), so ``print()``
        in a tool or a child process cannot corrupt the protocol stream.
        """
        from mcp.server.stdio import stdio_server

        async with stdio_server() as (read_stream, write_stream):
            await self.run_streams(read_stream, write_stream)

    def streamable_http_app(
        self,
        *,
        path: str = "/mcp",
        stateless: bool = False,
        json_response: bool = False,
        host: str = "127.0.0.1",
        security: HttpSecurity | None = None,
    ) -> Starlette:
        """An ASGI (Starlette) app serving the tools over streamable HTTP at ``path``.

        DNS-rebinding protection is always on: ``Host`` must be a loopback name, ``host`` or
        one of ``security.allowed_hosts`` (else ``421``), and an ``Origin``, when sent, a
        loopback origin, ``host``'s or one of ``security.allowed_origins`` (else ``403``).
        With a bearer token, requests without it get ``401``.

        Mounted inside another ASGI app, its lifespan does not run: enter
        ``tool_server.server.session_manager.run()`` in the host app's lifespan.

        Args:
            path: the endpoint path.
            stateless: a fresh transport per request (scales out behind a load balancer;
                handshake-era clients cannot cancel a call then).
            json_response: plain JSON responses instead of SSE (no progress, no cancel).
            host: the address the server is bound to (or the name it is reached by).
            security: allowed hosts and origins and authentication (:class:`HttpSecurity`).

        Raises:
            ValueError: ``host`` is not loopback and ``security`` lacks authentication or an
                allowed host (the message says what to add).
        """
        security = security if security is not None else HttpSecurity()
        security.check_bind(host)
        # Handshake-era sessions resume their SSE streams from the shared event store.
        resumable = self._shared is not None and not stateless and not json_response
        app = self.server.streamable_http_app(
            streamable_http_path=path,
            stateless_http=stateless,
            json_response=json_response,
            event_store=self._shared.events if resumable and self._shared else None,
            host=host,
            transport_security=security.transport_settings(host),
            auth=security.auth,
            token_verifier=security.token_verifier,
        )
        if resumable:
            from customtools.mcp._redis import EventScopeMiddleware

            app.add_middleware(EventScopeMiddleware)
        if security.bearer_token is not None:
            app.add_middleware(BearerMiddleware, token=security.bearer_token)
        return app


@dataclass(slots=True, eq=False)
class _InputClosed:
    closed: bool = False


class _Wrapped:
    """One side of a connection's stream pair, sharing whether the input has closed."""

    def __init__(self, stream: Any, state: _InputClosed) -> None:
        self._stream = stream
        self._state = state

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)

    async def __aenter__(self) -> Any:
        await self._stream.__aenter__()
        return self

    async def __aexit__(self, *exc_info: Any) -> Any:
        return await self._stream.__aexit__(*exc_info)


class _WatchedInput(_Wrapped):
    """The read stream of a connection, noting when it ends."""

    async def receive(self) -> Any:
        try:
            return await self._stream.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._state.closed = True
            raise

    def __aiter__(self) -> _WatchedInput:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None


class _GatedOutput(_Wrapped):
    """The write stream of a connection: drops what is sent after the input ended."""

    async def send(self, item: Any) -> None:
        if self._state.closed:
            _log.debug("the client closed its input: a message to it was not sent")
            return
        await self._stream.send(item)

    def send_nowait(self, item: Any) -> None:
        if not self._state.closed:
            self._stream.send_nowait(item)
