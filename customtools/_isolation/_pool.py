"""Process isolation, host side: :class:`IsolationPool` and the proxy tools it hands out.

A pool owns one supervised worker per tool module (:class:`~._source.IsolatedSource`). Its
loads import every module in its own worker, concurrently, and return a normal
:class:`~customtools.LoadResult` whose tools are *proxies*: :class:`~customtools.CustomTool`\\ s
with the module's names, schemas and flags whose ``execute`` and ``on_session`` forward to the
worker. A host runs them behind the same :class:`~customtools.CustomToolAdapter` as any tool.

The pool's workers live until :meth:`IsolationPool.aclose` (or the end of ``async with``);
workers also end with the host process (Linux parent-death signal, and end of file on their
channel).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

from customtools._isolation._options import IsolationOptions
from customtools._isolation._source import IsolatedSource, WorkerLost

__all__ = ["IsolationPool"]


def _proxy_tool(source: IsolatedSource, data: dict[str, Any]) -> Any:
    from customtools._tool import CustomTool

    name = data["name"]
    call = source.call

    async def execute(tool_call_id: str, params: Any, on_update: Any, ctx: Any, signal: Any) -> Any:
        return await call(name, tool_call_id, params, on_update, ctx, signal)

    on_session: Callable[..., Any] | None = None
    if data.get("onSession"):

        async def on_session(event: Any, ctx: Any) -> None:
            await source.session(name, event, ctx)

    return CustomTool.from_dict(data, execute=execute, on_session=on_session)


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
        self.sources: list[IsolatedSource] = []
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
        self, candidates: Sequence[Any], *, cwd: str, load_timeout: float | None
    ) -> list[Any]:
        """Import each candidate in a worker of its own, concurrently; one outcome each.

        The outcomes (tools as proxies, load errors, diagnostics) are in ``candidates``'
        order; the loader merges them as it merges in-process imports.
        """
        import anyio

        if self.closed:
            raise RuntimeError("this IsolationPool is closed; create a new one")
        outcomes: list[Any] = [None] * len(candidates)
        limiter = anyio.CapacityLimiter(max(1, os.cpu_count() or 1))

        async def one(index: int, candidate: Any) -> None:
            async with limiter:
                outcomes[index] = await self._load_one(candidate, cwd, load_timeout)

        async with anyio.create_task_group() as group:
            for index, candidate in enumerate(candidates):
                group.start_soon(one, index, candidate)
        return outcomes

    async def _load_one(self, candidate: Any, cwd: str, load_timeout: float | None) -> Any:
        from customtools._loading._import import ImportOutcome
        from customtools._loading._records import Diagnostic, LoadError

        source = IsolatedSource(candidate, cwd=cwd, load_timeout=load_timeout, options=self.options)
        out = ImportOutcome()
        try:
            reply = await source.load()
        except WorkerLost as lost:
            timed_out = "load_timeout" in lost.cause
            out.errors.append(
                LoadError(
                    path=candidate.path,
                    error=f"the worker process importing {candidate.path} {lost.cause};"
                    + (
                        " make the module's import and factory finish sooner or raise load_timeout"
                        if timed_out
                        else " the module ended the process (os._exit, a crash or a signal)"
                        " instead of loading; fix it or load it in-process to see the"
                        " traceback"
                    ),
                    source=candidate.source,
                    resolved_path=candidate.resolved_path,
                    code="timeout" if timed_out else "worker-crashed",
                )
            )
            return out
        for item in reply.get("errors", ()):
            out.errors.append(
                LoadError(
                    path=item.get("path", candidate.path),
                    error=item.get("error", "unknown error"),
                    source=candidate.source,
                    resolved_path=item.get("resolvedPath", candidate.resolved_path),
                    code=item.get("code", "load-error"),
                    tool_name=item.get("toolName"),
                    traceback=item.get("traceback"),
                )
            )
        for item in reply.get("diagnostics", ()):
            out.diagnostics.append(
                Diagnostic(
                    code=item.get("code", "diagnostic"),
                    message=item.get("message", ""),
                    path=item.get("path"),
                    source=candidate.source if "source" in item else None,
                )
            )
        for data in reply.get("tools", ()):
            try:
                out.tools.append(_proxy_tool(source, data))
            except Exception as exc:
                from customtools._format import describe_exception

                out.errors.append(
                    LoadError(
                        path=candidate.path,
                        error=f"tool {data.get('name')!r} could not be proxied:"
                        f" {describe_exception(exc)}",
                        source=candidate.source,
                        resolved_path=candidate.resolved_path,
                        code="invalid-tool",
                        tool_name=data.get("name"),
                    )
                )
        if out.tools:
            self.sources.append(source)
        else:
            await source.aclose()
        return out

    async def aclose(self) -> None:
        """Kill every worker and its process group, and wait for them (bounded)."""
        import anyio

        self.closed = True
        sources, self.sources = self.sources, []
        with anyio.CancelScope(shield=True):
            for source in sources:
                await source.aclose()
