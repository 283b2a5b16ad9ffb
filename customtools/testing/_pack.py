"""A tool pack under test: :class:`ToolPack`, :func:`load_pack` and :func:`load_pack_sync`.

Loading goes through :func:`~customtools.load_custom_tools`, the loader hosts use, so a test
sees the same load errors, metadata and diagnostics a host would. Two choices differ from a
host's defaults, on purpose:

* relative pack paths are resolved against the process's working directory (where pytest
  runs), not against ``cwd``: ``cwd`` is what the tools see as ``api.cwd``, and a test usually
  points it at ``tmp_path`` while the pack stays where it is;
* a pack that has any load error, or loads no tool at all, fails the test at once with every
  error listed (``allow_errors=True`` turns that off so the errors can be asserted on).
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

import anyio

from customtools._abort import AbortController, AbortSignal
from customtools._adapter import CustomToolAdapter
from customtools._content import ToolResult
from customtools._context import ToolContext
from customtools._loading._loader import DEFAULT_LOAD_TIMEOUT, LoadResult, load_custom_tools
from customtools._loading._records import Diagnostic, LoadError, MetadataFile
from customtools._registry import ToolRegistry
from customtools._session import HookFailure, SessionEvent, dispatch_session_event
from customtools._tool import CustomTool
from customtools.testing._call import ToolCall
from customtools.testing._sync import run_sync

__all__ = ["ToolPack", "format_load_errors", "load_pack", "load_pack_sync", "resolve_pack_path"]

PathArg = str | os.PathLike[str]


def resolve_pack_path(path: PathArg) -> str:
    """An absolute pack path: ``~`` expanded, relative paths taken from the working directory.

    ``file://`` URLs are passed through for the loader to resolve.
    """
    text = os.fspath(path)
    if text.startswith("file://"):
        return text
    return os.path.abspath(os.path.expanduser(text))


def format_load_errors(errors: Sequence[LoadError]) -> str:
    """Every load error on its own line (``path [code]: message``), tracebacks indented."""
    lines: list[str] = []
    for error in errors:
        lines.append(f"  {error.path} [{error.code}]: {error.error}")
        if error.traceback:
            lines += [f"      {line}" for line in error.traceback.rstrip().splitlines()]
    return "\n".join(lines)


class ToolPack:
    """The tools of a pack, by name, with helpers to call them and send them session events.

    Usually made by :func:`load_pack` or the ``tool_pack`` / ``load_tool_pack`` fixtures;
    construct one directly to test tools built in the test itself::

        pack = ToolPack([my_tool])
        call = pack.call_sync("my_tool", {"x": 1})

    Args:
        tools: the tools, in load order; names must be unique.
        load_result: the :class:`~customtools.LoadResult` they came from, if any.
        paths: the pack paths that were loaded, for messages.

    Raises:
        ValueError: two tools have the same name.
    """

    __slots__ = ("_registry", "load_result", "paths")

    def __init__(
        self,
        tools: Iterable[CustomTool],
        *,
        load_result: LoadResult | None = None,
        paths: Sequence[str] = (),
    ) -> None:
        self._registry = ToolRegistry()
        for tool in tools:
            if not isinstance(tool, CustomTool):
                raise TypeError(f"ToolPack needs CustomTool objects, got {type(tool).__name__}")
            if self._registry.add(tool) is not None:
                raise ValueError(f"two tools are named {tool.name!r}; tool names must be unique")
        self.load_result = load_result
        self.paths = tuple(paths)

    def __repr__(self) -> str:
        return f"<ToolPack {', '.join(self._registry.names) or 'no tools'}>"

    def __contains__(self, name: object) -> bool:
        return name in self._registry

    def __iter__(self) -> Iterator[CustomTool]:
        return iter(self._registry)

    def __len__(self) -> int:
        return len(self._registry)

    def __getitem__(self, name: str) -> CustomTool:
        return self.tool(name)

    @property
    def tools(self) -> tuple[CustomTool, ...]:
        """The tools, in load order."""
        return self._registry.tools

    @property
    def names(self) -> tuple[str, ...]:
        """The tool names, in load order."""
        return self._registry.names

    @property
    def errors(self) -> tuple[LoadError, ...]:
        """The load errors (only ever non-empty with ``allow_errors=True``)."""
        return self.load_result.errors if self.load_result is not None else ()

    @property
    def metadata(self) -> tuple[MetadataFile, ...]:
        """The ``.md``/``.json`` metadata files found in the pack (never tools)."""
        return self.load_result.metadata if self.load_result is not None else ()

    @property
    def diagnostics(self) -> tuple[Diagnostic, ...]:
        """The loader's diagnostics: skipped files, similar names, ..."""
        return self.load_result.diagnostics if self.load_result is not None else ()

    def tool(self, name: str) -> CustomTool:
        """The tool called ``name``.

        Raises:
            KeyError: there is no such tool; the message lists close matches and every name.
        """
        tool = self._registry.get(name)
        if tool is None:
            close = difflib.get_close_matches(name, self._registry.names, n=3)
            hint = f"; did you mean {', '.join(map(repr, close))}?" if close else ""
            known = ", ".join(self._registry.names) or "none"
            raise KeyError(f"no tool {name!r} in the pack{hint} (tools: {known})")
        return tool

    def adapter(self, name: str) -> CustomToolAdapter:
        """The :class:`~customtools.CustomToolAdapter` that runs ``name`` (one per tool, kept)."""
        self.tool(name)  # the pack's own message for an unknown name
        return self._registry.adapter(name)

    async def call(
        self,
        name: str,
        params: Any = None,
        *,
        signal: Any = None,
        timeout: float | None = None,
        ctx: ToolContext | None = None,
        tool_call_id: str = "test-call",
        on_update: Callable[[ToolResult], Any] | None = None,
        abort_after_updates: int | None = None,
        abort_after: float | None = None,
        abort_reason: str | None = None,
    ) -> ToolCall:
        """Call a tool through its adapter, as a host would, and record everything.

        Args:
            name: the tool.
            params: the arguments (default ``{}``); validated, defaulted and coerced by the
                adapter exactly as in production.
            signal: an :class:`~customtools.AbortSignal` (for example from the
                ``abort_controller`` fixture) the test aborts itself.
            timeout: a per-call limit in seconds; expiry gives a cancelled result.
            ctx: the :class:`~customtools.ToolContext` the tool receives.
            tool_call_id: the call id the tool receives.
            on_update: also called with each update as it arrives (they are recorded anyway).
            abort_after_updates: abort the call right after the N-th update is delivered.
            abort_after: abort the call after this many seconds.
            abort_reason: the reason given when the helper aborts (default: says which
                trigger fired, for example ``"aborted by test after 2 update(s)"``).

        Returns:
            A :class:`ToolCall` with the final result and every update. Never raises for what
            the tool does: failures, aborts and timeouts are error results, as for a host.

        Raises:
            KeyError: there is no tool called ``name``.
            ValueError: an abort option is out of range.
        """
        adapter = self.adapter(name)
        if abort_after_updates is not None and (
            isinstance(abort_after_updates, bool)
            or not isinstance(abort_after_updates, int)
            or abort_after_updates < 1
        ):
            raise ValueError(
                f"abort_after_updates must be an integer >= 1, got {abort_after_updates!r}"
            )
        if abort_after is not None and not abort_after >= 0:
            raise ValueError(f"abort_after must be a number of seconds >= 0, got {abort_after!r}")
        # A mapping is copied so the record keeps what the test passed; anything else (a list, a
        # JSON string) goes to the adapter as given, to test how invalid arguments are reported.
        arguments: Any = (
            {} if params is None else dict(params) if isinstance(params, Mapping) else params
        )
        updates: list[ToolResult] = []
        scripted: AbortController | None = None
        aborted_by: list[str] = []
        if abort_after_updates is not None or abort_after is not None:
            scripted = AbortController()
            both = [signal, scripted.signal]
            signal = scripted.signal if signal is None else AbortSignal.any(both)

        def abort(why: str) -> None:
            if scripted is not None and not scripted.signal.aborted:
                aborted_by.append(why)
                scripted.abort(f"aborted by test {why}" if abort_reason is None else abort_reason)

        def record(partial: ToolResult) -> None:
            updates.append(partial)
            # Abort before the test's own callback runs: if that raises, the adapter logs it
            # and goes on, and the scripted abort must still happen.
            if abort_after_updates is not None and len(updates) >= abort_after_updates:
                abort(f"after {abort_after_updates} update(s)")
            if on_update is not None:
                on_update(partial)

        async def run() -> ToolResult:
            return await adapter.execute(
                tool_call_id, arguments, signal=signal, on_update=record, ctx=ctx, timeout=timeout
            )

        if abort_after is None:
            result = await run()
        else:
            delay = abort_after

            async def abort_later() -> None:
                await anyio.sleep(delay)
                abort(f"after {delay:g} s")

            async with anyio.create_task_group() as group:
                group.start_soon(abort_later)
                result = await run()
                group.cancel_scope.cancel()
        return ToolCall(
            tool_name=adapter.name,
            tool_call_id=tool_call_id,
            params=arguments,
            result=result,
            updates=tuple(updates),
            aborted_by=aborted_by[0] if aborted_by else None,
        )

    def call_sync(
        self, name: str, params: Any = None, *, backend: str | None = None, **options: Any
    ) -> ToolCall:
        """:meth:`call` for synchronous tests (runs an event loop; see ``docs/testing.md``).

        Args:
            name: the tool.
            params: the arguments.
            backend: ``"asyncio"`` (default) or ``"trio"``.
            **options: the keyword options of :meth:`call`.
        """
        return run_sync(self.call, name, params, backend=backend, **options)

    async def send_session_event(
        self,
        event: SessionEvent | str,
        /,
        *,
        tools: Iterable[str] | None = None,
        ctx: ToolContext | None = None,
        check: bool = True,
        hook_timeout: float | None = None,
        **fields: Any,
    ) -> tuple[HookFailure, ...]:
        """Deliver a session event to the tools' ``on_session`` hooks, in load order.

        Args:
            event: a :class:`~customtools.SessionEvent`, or a reason (``"start"``, ...) to
                build one from ``fields``.
            tools: names of the tools to notify (default: all of them).
            ctx: the :class:`~customtools.ToolContext` the hooks receive.
            check: fail with an :class:`AssertionError` when a hook raised.
            hook_timeout: seconds each async hook may take.
            **fields: the event's fields when ``event`` is a reason
                (``previous_session_file=...``, ``attempt=...``).

        Returns:
            The hooks that failed (always empty when ``check`` is true).

        Raises:
            AssertionError: ``check`` is true and a hook raised; every failure is listed.
        """
        if isinstance(event, SessionEvent):
            if fields:
                raise TypeError("pass event fields only with a reason, not with a SessionEvent")
        else:
            event = SessionEvent(reason=event, **fields)
        targets = self.tools if tools is None else tuple(self.tool(name) for name in tools)
        failures = tuple(
            await dispatch_session_event(targets, event, ctx, hook_timeout=hook_timeout)
        )
        if check and failures:
            listing = "\n".join(
                f"  {failure.tool_name}: {type(failure.error).__name__}: {failure.error}"
                for failure in failures
            )
            raise AssertionError(
                f"{len(failures)} on_session hook(s) raised on {event.reason!r}:\n{listing}"
            )
        return failures

    def send_session_event_sync(
        self, event: SessionEvent | str, /, *, backend: str | None = None, **options: Any
    ) -> tuple[HookFailure, ...]:
        """:meth:`send_session_event` for synchronous tests."""
        return run_sync(self.send_session_event, event, backend=backend, **options)


async def load_pack(
    *paths: PathArg,
    cwd: PathArg | None = None,
    builtin_tool_names: Iterable[str] = (),
    allow_errors: bool = False,
    load_timeout: float | None = DEFAULT_LOAD_TIMEOUT,
) -> ToolPack:
    """Load tool modules, packages and directories into a :class:`ToolPack`.

    Args:
        *paths: tool files, package directories or tools directories (at least one);
            relative paths are taken from the working directory, not from ``cwd``.
        cwd: what the tools see as ``api.cwd`` (default: the working directory).
        builtin_tool_names: names a host reserves; a tool taking one is a load error.
        allow_errors: keep going when there are load errors or no tools, so the test can
            assert on :attr:`ToolPack.errors`.
        load_timeout: seconds an async factory may take.

    Returns:
        The loaded pack.

    Raises:
        AssertionError: the pack has load errors or loads no tool, and ``allow_errors`` is
            false; the message lists every error with its code and traceback.
        ValueError: no path was given.
    """
    __tracebackhide__ = True
    if not paths:
        raise ValueError("load_pack() needs at least one tool file or directory")
    resolved = [resolve_pack_path(path) for path in paths]
    result = await load_custom_tools(resolved, cwd, builtin_tool_names, load_timeout=load_timeout)
    shown = ", ".join(os.fspath(path) for path in paths)
    if not allow_errors:
        if result.errors:
            raise AssertionError(
                f"tool pack {shown} has {len(result.errors)} load error(s):\n"
                f"{format_load_errors(result.errors)}\n"
                "(pass allow_errors=True to assert on pack.errors instead)"
            )
        if not result.tools:
            raise AssertionError(
                f"tool pack {shown} loaded no tools: check the path"
                " (a tools directory contributes its *.py files and package directories)"
            )
    return ToolPack(
        (loaded.tool for loaded in result.tools), load_result=result, paths=tuple(resolved)
    )


def load_pack_sync(*paths: PathArg, backend: str | None = None, **options: Any) -> ToolPack:
    """:func:`load_pack` for synchronous code (fixtures, sync tests).

    Args:
        *paths: as for :func:`load_pack`.
        backend: the event loop the factories run on: ``"asyncio"`` (default) or ``"trio"``.
        **options: the keyword options of :func:`load_pack`.
    """
    __tracebackhide__ = True
    return run_sync(load_pack, *paths, backend=backend, **options)
