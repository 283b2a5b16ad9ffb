"""Process isolation, host side: :class:`IsolationPool` and the proxy tools it hands out.

A pool owns one supervised worker per tool module (:class:`~._source.ModuleWorker`). Its
loads import every module in its own worker, concurrently, and return a normal
:class:`~customtools.LoadResult` whose tools are *proxies*: :class:`~customtools.CustomTool`\\ s
with the module's names, schemas and flags whose ``execute``, ``on_session`` and render hooks
forward to the worker. A host runs them behind the same
:class:`~customtools.CustomToolAdapter` as any tool.

The pool's workers live until :meth:`IsolationPool.aclose` (or the end of ``async with``);
workers also end with the host process (Linux parent-death signal, and end of file on their
channel).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Final

from customtools._error_results import LoadCode
from customtools._isolation._options import IsolationOptions
from customtools._isolation._source import ModuleWorker, WorkerLost
from customtools._isolation._wire import restyle

if TYPE_CHECKING:
    from customtools._abort import AbortSignal
    from customtools._content import ToolResult
    from customtools._context import ToolContext
    from customtools._isolation._sandboxed import SandboxedWorker
    from customtools._loading._import import ImportOutcome
    from customtools._loading._isolating import IsolationRequest
    from customtools._loading._records import Candidate, Diagnostic, LoadError
    from customtools._render import RenderOptions, Theme
    from customtools._session import SessionEvent
    from customtools._tool import CustomTool

__all__ = ["IsolationPool"]


def _proxy_tool(source: ModuleWorker, data: dict[str, Any]) -> CustomTool:
    from customtools._tool import CustomTool

    name = data["name"]
    call = source.call

    async def execute(
        tool_call_id: str,
        params: Any,
        on_update: Callable[[ToolResult], Any],
        ctx: ToolContext,
        signal: AbortSignal,
    ) -> ToolResult:
        return await call(name, tool_call_id, params, on_update, ctx, signal)

    # It stops itself past the grace (it kills its worker, bounded): the adapter waits for that
    # instead of closing it at the grace (docs/cancellation.md).
    execute._customtools_stops_itself = True  # type: ignore[attr-defined]

    on_session: Callable[..., Any] | None = None
    if data.get("onSession"):

        async def on_session(event: SessionEvent, ctx: ToolContext) -> None:
            await source.session(name, event, ctx)

    render_call: Callable[..., Any] | None = None
    render_result: Callable[..., Any] | None = None
    if data.get("renderCall"):

        def render_call(args: Any, theme: Theme) -> Any:
            return restyle(source.render(name, {"hook": "render_call", "args": args}), theme)

    if data.get("renderResult"):

        def render_result(
            result: ToolResult, options: RenderOptions, theme: Theme, args: Any = None
        ) -> Any:
            request = {
                "hook": "render_result",
                "result": result.to_dict(),
                "options": {field: getattr(options, field) for field in options.__slots__},
                "args": args,
            }
            return restyle(source.render(name, request), theme)

    return CustomTool.from_dict(
        data,
        execute=execute,
        on_session=on_session,
        render_call=render_call,
        render_result=render_result,
    )


def _sandboxed_sources(
    candidate: Candidate,
    cwd: str,
    load_timeout: float | None,
    options: IsolationOptions,
    request: IsolationRequest,
    out: ImportOutcome,
) -> list[tuple[SandboxedWorker, frozenset[str] | None]]:
    """Confined sources for ``candidate``: one for the module's permissions (tool names
    ``None``: every tool not claimed), one per distinct ``@tool(permissions=...)`` with the
    names of its tools. Empty (and a load error) when a declaration cannot be read."""
    from customtools._isolation._sandboxed import SandboxedWorker
    from customtools._loading._records import LoadError
    from customtools._permissions import Permissions, PermissionsError, read_declarations

    made: list[tuple[SandboxedWorker, frozenset[str] | None]] = []
    try:
        declared = read_declarations(candidate)
        groups: list[tuple[Permissions | None, frozenset[str] | None, str | None]] = [
            (declared.module, None, declared.module_line)
        ]
        for own, claimed in declared.tool_groups():
            groups.append((own, claimed, declared.tool_lines[min(claimed)]))
        for permissions, names, where in groups:
            worker = SandboxedWorker(
                candidate,
                cwd=cwd,
                load_timeout=load_timeout,
                options=options,
                permissions=permissions,
                declared_in=where,
                home=request.home or os.path.expanduser("~"),
                require=request.require,
                tools=names,
            )
            made.append((worker, names))
    except PermissionsError as exc:
        for source, _ in made:
            source.discard()
        why = f"{exc}; fix the declaration (see docs/sandbox.md)"
        out.errors.append(LoadError.of(candidate, why, LoadCode.INVALID_PERMISSIONS))
        return []
    return made


_LOST: Final = {
    "refused": (
        LoadCode.SANDBOX_UNAVAILABLE,
        "the worker process of {path} {cause}; run it on a kernel with Landlock (Linux 6.12 or"
        " later enforces everything) or load it without require_sandbox",
    ),
    "timeout": (
        LoadCode.TIMEOUT,
        "the worker process importing {path} {cause}; make the module's import and factory"
        " finish sooner or raise load_timeout",
    ),
}
_CRASHED: Final = (
    LoadCode.WORKER_CRASHED,
    "the worker process importing {path} {cause}; the module ended the process (os._exit, a"
    " crash or a signal) instead of loading; fix it or load it in-process to see the traceback",
)


def _unusable(candidate: Candidate, why: str) -> LoadError:
    from customtools._loading._records import LoadError

    text = f"the worker process of {candidate.path} sent an unusable load reply ({why})"
    return LoadError.of(candidate, text, LoadCode.INTERNAL_ERROR)


def _sandbox_diagnostic(source: ModuleWorker, candidate: Candidate) -> Diagnostic:
    from customtools._isolation._sandboxed import SandboxedWorker, describe_report
    from customtools._loading._records import Diagnostic

    assert isinstance(source, SandboxedWorker)
    status, words = describe_report(source.report)
    which = f" (tools {', '.join(sorted(source.tools))})" if source.tools else ""
    declared = (
        f"declared in {source.declared_in}"
        if source.declared_in
        else "no declaration: the default permissions"
    )
    return Diagnostic(
        code=f"sandbox-{status}",
        message=f"sandbox of {candidate.path}{which}: {words}; the pack"
        f" {source.policy['describe']} ({declared})",
        path=candidate.path,
        source=candidate.source,
    )


class IsolationPool:
    """The worker processes of isolated tool modules, one per module.

    Use it as an async context manager (or call :meth:`aclose`): closing kills every worker
    and its process group. Pass it to ``load_custom_tools(..., isolation=pool)`` or
    ``discover_and_load(..., isolation=pool)``.

    Args:
        options: limits, grace, restart policy (:class:`IsolationOptions`); keyword arguments
            build one when ``options`` is omitted.
    """

    def __init__(self, options: IsolationOptions | None = None, **option_values: Any) -> None:
        if options is not None and option_values:
            raise TypeError("pass either an IsolationOptions or keyword options, not both")
        self.options = options if options is not None else IsolationOptions(**option_values)
        self.sources: list[ModuleWorker] = []
        self.closed = False
        if os.name != "posix":
            raise NotImplementedError(
                "process isolation needs a POSIX system (process groups, pipes that an event"
                " loop can wait on); load the tools in-process on this platform"
            )

    def __repr__(self) -> str:
        return f"<IsolationPool {len(self.sources)} worker(s)>"

    async def __aenter__(self) -> IsolationPool:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    @property
    def pids(self) -> tuple[int, ...]:
        """The process ids of the running workers."""
        return tuple(pid for pid in (source.pid for source in self.sources) if pid is not None)

    async def load_candidates(
        self,
        candidates: Sequence[Candidate],
        *,
        cwd: str,
        load_timeout: float | None,
        request: IsolationRequest,
    ) -> list[ImportOutcome]:
        """Import each candidate in a worker of its own, concurrently; one outcome each.

        The outcomes (tools as proxies, load errors, diagnostics) are in ``candidates``'
        order; the loader merges them as it merges in-process imports. ``request.sandbox``
        confines each worker to the permissions its module declares (see
        ``docs/sandbox.md``).
        """
        import anyio

        if self.closed:
            raise RuntimeError("this IsolationPool is closed; create a new one")
        outcomes: list[ImportOutcome | None] = [None] * len(candidates)
        limiter = anyio.CapacityLimiter(max(1, os.cpu_count() or 1))

        async def one(index: int, candidate: Candidate) -> None:
            async with limiter:
                outcomes[index] = await self._load_one(candidate, cwd, load_timeout, request)

        async with anyio.create_task_group() as group:
            for index, candidate in enumerate(candidates):
                group.start_soon(one, index, candidate)
        return [outcome for outcome in outcomes if outcome is not None]

    async def _load_one(
        self,
        candidate: Candidate,
        cwd: str,
        load_timeout: float | None,
        request: IsolationRequest,
    ) -> ImportOutcome:
        from customtools._loading._import import ImportOutcome

        out = ImportOutcome()
        if not request.sandbox:
            source = ModuleWorker(
                candidate, cwd=cwd, load_timeout=load_timeout, options=self.options
            )
            await self._load_into(source, candidate, out)
            return out
        groups = _sandboxed_sources(candidate, cwd, load_timeout, self.options, request, out)
        claimed = frozenset(name for _, names in groups for name in names or ())
        for index, (boxed, names) in enumerate(groups):
            # The module's own group keeps every tool no @tool(permissions=...) claimed; a
            # tool group keeps its tools only. Diagnostics are reported once, by the first;
            # errors once each.
            await self._load_into(
                boxed,
                candidate,
                out,
                keep=(lambda name: name not in claimed)
                if names is None
                else (lambda name, names=names: name in names),  # type: ignore[misc]
                primary=index == 0,
            )
        return out

    async def _load_into(
        self,
        source: ModuleWorker,
        candidate: Candidate,
        out: ImportOutcome,
        *,
        keep: Callable[[str], bool] | None = None,
        primary: bool = True,
    ) -> None:
        """Load ``candidate`` in ``source``'s worker; its tools (those ``keep`` accepts),
        errors and diagnostics go to ``out``."""
        from customtools._loading._records import Diagnostic, LoadError

        try:
            reply = await source.load()
        except WorkerLost as lost:
            code, hint = _LOST.get(lost.reason, _CRASHED)
            text = hint.format(path=candidate.path, cause=lost.cause)
            out.errors.append(LoadError.of(candidate, text, code))
            await source.aclose()
            return
        from customtools._isolation._sandboxed import SandboxedWorker

        if isinstance(source, SandboxedWorker):
            out.diagnostics.append(_sandbox_diagnostic(source, candidate))
        seen = {(error.code, error.error) for error in out.errors}
        try:
            errors = [LoadError.from_dict(item) for item in reply.get("errors", ())]
            diagnostics = [Diagnostic.from_dict(item) for item in reply.get("diagnostics", ())]
        except Exception as exc:
            from customtools._format import describe_exception

            errors, diagnostics = [_unusable(candidate, describe_exception(exc))], []
        # The module's own worker reports them; a tool group's, only errors it alone met.
        out.errors.extend(e for e in errors if primary or (e.code, e.error) not in seen)
        out.diagnostics.extend(diagnostics if primary else ())
        kept = 0
        for data in reply.get("tools", ()):
            if keep is not None and not keep(str(data.get("name"))):
                continue
            try:
                out.tools.append(_proxy_tool(source, data))
                kept += 1
            except Exception as exc:
                from customtools._format import describe_exception

                text = f"tool {data.get('name')!r} could not be proxied: {describe_exception(exc)}"
                out.errors.append(
                    LoadError.of(candidate, text, LoadCode.INVALID_TOOL, tool_name=data.get("name"))
                )
        if kept:
            self.sources = [*(s for s in self.sources if not s.closed), source]
            out.cleanup.append(source.retire)
        else:
            await source.aclose()

    async def aclose(self) -> None:
        """Kill every worker and its process group, and wait for them (bounded)."""
        import anyio

        self.closed = True
        sources, self.sources = self.sources, []
        with anyio.CancelScope(shield=True):
            for source in sources:
                await source.aclose()
