"""Packs imported on first call: the manifest cache and the lazy tools served from it.

With ``lazy=True`` (a keyword of every loader door; on for ``customtools serve``), a module
that loads is remembered as its tools' wire form (:meth:`CustomTool.to_dict`, no code), and
a later load whose keys all match serves those tools without importing the module. The first
call of one of them imports the module through the load's own import path (here, or in an
isolation worker, sandboxed as the load asked; project code only as the trust gate allowed),
then runs the live tool. ``docs/discovery.md`` tells the story for hosts.

Keys
    An entry is used only when everything that decides the tools is unchanged: the
    candidate's resolved path (the entry's key) and kind; the digest of its files, computed
    as the trust gate computes it (project scope: the gate's digest of the whole source root
    the grant covers; otherwise the module file, or every file below the package directory,
    through :func:`~customtools._loading._trust.candidate_source`); the directory the factory
    was given (``api.cwd``); how the load imports (here, isolated, sandboxed, sandbox
    required); the customtools and Python versions. Declared permissions are read from the
    module's own source (``PERMISSIONS``, ``@tool(permissions=...)``), so the digest covers
    them. A sandboxed module's record (``"sandbox-enforced"``/``"sandbox-partial"``) comes
    from its worker, so it is added to the load's diagnostics on the first call.

Eager all the same
    A module is imported at load, with an ``"eager-import"`` diagnostic saying why, when a
    tool needs its live object before a call (session hooks, render hooks, a
    ``requires_approval`` rule), when it is an installed entry point, when its files cannot
    be hashed or its definition is not plain JSON (or would fail the check of an entry at
    load, see `Lazy tools`). Modules that fail or return no tools are never cached (their
    load report says why).

Lazy tools
    A load builds none: each entry's definitions are checked as read
    (:func:`~customtools._tool.check_wire_form`: what building them would check) and kept;
    :class:`LazyTool` builds the tool on its record's first read. A bad entry is ignored
    with a ``"manifest-cache-ignored"`` diagnostic and its module imported at load.

The cache
    ``<home>/.<app_name>/cache/manifests/``, one checksummed file per directory of tool
    modules, written atomically: :mod:`customtools._loading._manifests`.

First call
    Two first calls import once. When the import fails, or the live tools differ from the
    manifest, the call is an error result (kind ``LazyLoadFailed``), a diagnostic is added to
    the load's :attr:`~customtools.LoadResult.diagnostics` and logged, and the entry is
    dropped so that the next load imports the module at load. Until then every call of the
    module's tools gets that error: nothing stale is served.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from customtools._content import ToolResult
from customtools._error_results import Code, Kind, LoadCode, error_result
from customtools._loading._import import ImportOutcome, release_modules
from customtools._loading._isolating import IsolationRequest
from customtools._loading._manifests import ManifestCache
from customtools._loading._paths import display_path
from customtools._loading._records import Candidate, Diagnostic
from customtools._loading._trust import ProjectSource, StatCache, candidate_source
from customtools._runtime import PREPARE, STOPS_ITSELF
from customtools._tool import CustomTool, check_wire_form

__all__ = ["LazyLoad", "LazyTool"]

_HOOKS = ("on_session", "render_call", "render_result")
_log = logging.getLogger("customtools.loading")

Importer = Callable[[Candidate], Awaitable[ImportOutcome]]


# -- one lazy load ----------------------------------------------------------------------------


class LazyLoad:
    """The lazy part of one load: candidates served from the cache, modules imported at load
    recorded in it.

    Args:
        cache: the manifest files.
        cwd: the directory factories are given.
        digests: the trust gate's source digests, by candidate resolved path (project scope).
        importer: imports one candidate through the load's own path (a first call uses it).
        late: where diagnostics of first calls go (the load result shows them).
        isolation: the load's isolation request, if any: an entry is used only by loads that
            import as the one that wrote it did (here, isolated, sandboxed, sandbox required).
    """

    def __init__(
        self,
        cache: ManifestCache,
        *,
        cwd: str,
        digests: Mapping[str, str],
        importer: Importer,
        late: list[Diagnostic],
        isolation: IsolationRequest | None,
    ) -> None:
        self.cache = cache
        self.cwd = cwd
        self.digests = digests
        self.importer = importer
        self.late = late
        self.isolated = isolation is not None  # the proxies stop themselves
        self.mode = (
            "here"
            if isolation is None
            else "required"
            if isolation.require
            else "sandboxed"
            if isolation.sandbox
            else "isolated"
        )
        self._sources: dict[str, ProjectSource] = {}

    def serve(self, candidate: Candidate) -> ImportOutcome | None:
        """The candidate's tools from its manifest, or ``None`` when it must be imported."""
        if candidate.kind == "entry_point":
            return None
        key = candidate.resolved_path
        entry = self.cache.entry(key)
        digest = self._digest(candidate, entry)
        if (
            entry is None
            or digest is None
            or entry.get("digest") != digest
            or entry.get("cwd") != self.cwd
            or entry.get("kind") != candidate.kind
            or entry.get("mode") != self.mode
        ):
            if key not in self._sources and key not in self.digests:
                self._digest(candidate, None)  # hashed before the import: what will run
            return None
        try:
            module = LazyModule(candidate, entry.get("tools"), entry.get("async"), self)
            pairs = zip(module.wire, module.modes, strict=True)
            tools = [LazyTool(module, data, is_async) for data, is_async in pairs]
        except Exception as exc:  # a manifest that passed its checksum but not the tool rules
            self.cache.diagnostics.append(
                Diagnostic(
                    code=LoadCode.MANIFEST_CACHE_IGNORED,
                    message=f"the manifest of {display_path(candidate.path)} was ignored: {exc};"
                    " the module is imported at load",
                    path=candidate.path,
                    source=candidate.source,
                )
            )
            return None
        return ImportOutcome(tools=tools, cleanup=[module.release], lazy=True)

    def _digest(self, candidate: Candidate, entry: dict[str, Any] | None) -> str | None:
        """The digest the entry must carry (``None``: the files cannot all be read). A module
        file whose stat key (device, inode, size, mtime, ctime) is the one recorded with its
        hash has that hash, like git's index: a warm load hashes nothing (the trust store's
        stat cache rule, ``docs/trust.md``: a file changed within 2 s of its hashing, the
        "racy" case, gets no key); anything else is read and hashed."""
        key = candidate.resolved_path
        gated = self.digests.get(key)
        if gated is not None:
            return gated
        files = entry.get("files") if entry is not None else None
        if not isinstance(files, list):
            files = []
        if (
            candidate.kind == "module"
            and len(files) == 1
            and isinstance(files[0], list)
            and len(files[0]) == 3
            and files[0][0] == key
            and files[0][2] is not None
            and _stat_key(key) == files[0][2]
        ):
            return entry.get("digest") if entry is not None else None
        cache: StatCache = {
            str(item[0]): (tuple(item[2]), str(item[1]))
            for item in files
            if isinstance(item, list) and len(item) == 3 and isinstance(item[2], list)
        }
        source = candidate_source(candidate, cache=cache)
        if source.problems:
            return None
        self._sources[key] = source
        if entry is not None and entry.get("digest") == source.digest:
            fresh = _files(source)
            if fresh != files:  # stat keys that can now be kept: later loads only stat
                self.cache.put(key, {**entry, "files": fresh})
        return source.digest

    def keep(self, candidate: Candidate, outcome: ImportOutcome) -> None:
        """Record what importing ``candidate`` at load produced (or say why it stays eager)."""
        key = candidate.resolved_path
        reason = self._eager_reason(candidate, outcome)
        if reason is None:
            source = self._sources.get(key)
            self.cache.put(
                key,
                {
                    "kind": candidate.kind,
                    "cwd": self.cwd,
                    "digest": source.digest if source else self.digests[key],
                    "files": _files(source) if source is not None else [],
                    "mode": self.mode,
                    "tools": [tool.to_dict() for tool in outcome.tools],
                    "async": [tool.execute_is_async for tool in outcome.tools],
                },
            )
            return
        if candidate.kind != "entry_point" and self.cache.entry(key) is not None:
            self.cache.put(key, None)
        if reason:
            outcome.diagnostics.append(
                Diagnostic(
                    code=LoadCode.EAGER_IMPORT,
                    message=f"{display_path(candidate.path)} was imported at load, not lazily:"
                    f" {reason}",
                    path=candidate.path,
                    source=candidate.source,
                )
            )

    def _eager_reason(self, candidate: Candidate, outcome: ImportOutcome) -> str | None:
        """Why the module cannot be served from a manifest (``""``: its report says why);
        ``None`` when it can."""
        if candidate.kind == "entry_point":
            return "installed entry points are imported at load"
        if outcome.errors or not outcome.tools:
            return ""
        if candidate.resolved_path not in self._sources and (
            candidate.resolved_path not in self.digests
        ):
            return "its files cannot all be read and hashed"
        for tool in outcome.tools:
            hooks = [name for name in _HOOKS if getattr(tool, name) is not None]
            if callable(tool.requires_approval):
                hooks.append("requires_approval (a rule)")
            if hooks:
                return f"tool {tool.name!r} has {', '.join(hooks)}, which needs the live tool"
            wire = tool.to_dict()
            try:
                plain = json.loads(json.dumps(wire)) == wire
            except (TypeError, ValueError):
                plain = False
            if not plain:
                return f"tool {tool.name!r} has a definition that is not plain JSON"
            try:
                check_wire_form(wire)  # what a later load checks the entry with
            except ValueError as exc:
                return f"{exc}; the manifest cannot keep it"
        return None

    def failed(self, candidate: Candidate, code: str, message: str) -> None:
        """A first call could not use the module: record it, drop the entry."""
        diagnostic = Diagnostic(
            code=code, message=message, path=candidate.path, source=candidate.source
        )
        self.late.append(diagnostic)
        _log.warning("%s", message)
        before = len(self.cache.diagnostics)
        self.cache.put(candidate.resolved_path, None)
        self.cache.save()
        self.late.extend(self.cache.diagnostics[before:])


def _files(source: ProjectSource) -> list[list[Any]]:
    return [
        [item.real_path, item.sha256, list(item.stat) if item.stat is not None else None]
        for item in source.files
    ]


def _stat_key(path: str) -> list[int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]


class LazyTool:
    """One tool of a module served from its manifest: its definition checked at load
    (:func:`~customtools._tool.check_wire_form`), the tool built on first read, once."""

    __slots__ = ("_tool", "data", "is_async", "module", "name")

    def __init__(self, module: LazyModule, data: Any, is_async: Any) -> None:
        self.name = check_wire_form(data)
        if not module.lazy.isolated and type(is_async) is not bool:
            raise TypeError(f"tool {self.name!r} does not say how it runs")
        self.module, self.data, self.is_async = module, data, is_async
        self._tool: CustomTool | None = None

    @property
    def former_names(self) -> tuple[str, ...]:
        """The tool's former names (checked at load)."""
        return tuple(self.data.get("formerNames", ()))

    def build(self) -> CustomTool:
        """The tool, whose ``execute`` calls the live tool's ``execute``. The adapter imports
        the module first (:data:`~customtools._runtime.PREPARE`), on the event loop as a load
        would; ``execute`` is sync or async as the live one is (an isolation proxy is async),
        so the adapter runs it the same way: validation, worker thread, signal, timeout and
        results are the adapter's, once."""
        if self._tool is not None:
            return self._tool
        module, name, isolated = self.module, self.name, self.module.lazy.isolated

        async def prepare() -> None:
            await module.live(name)

        execute: Callable[..., Any]
        if isolated or self.is_async:

            async def execute(
                tool_call_id: str, params: Any, on_update: Any, ctx: Any, signal: Any
            ) -> Any:
                live = await module.live(name)
                if isinstance(live, ToolResult):
                    return live
                return await live(tool_call_id, params, on_update, ctx, signal)

        else:

            def execute(
                tool_call_id: str, params: Any, on_update: Any, ctx: Any, signal: Any
            ) -> Any:
                # In the adapter's worker thread, after the adapter awaited the import on the
                # event loop (PREPARE); called some other way, it asks the loop itself.
                live = module.imported(name)
                if live is None:
                    import anyio.from_thread

                    live = anyio.from_thread.run(module.live, name)
                if isinstance(live, ToolResult):
                    return live
                return live(tool_call_id, params, on_update, ctx, signal)

        tool = CustomTool.from_dict(self.data, execute=execute, checked=True)
        # The adapter imports on the event loop before the call (outside its timeout, as
        # an eager load's import is), then runs execute as it would run the live tool. (Set
        # after the tool is built: a plain function without attributes is told apart
        # quickest.)
        setattr(execute, PREPARE, prepare)
        if isolated:
            setattr(execute, STOPS_ITSELF, True)  # a proxy's does (docs/cancellation.md)
        self._tool = tool
        return tool


class LazyModule:
    """One module served from its manifest: imported by the first call of any of its tools,
    once."""

    __slots__ = (
        "_error", "_executes", "_importing", "_outcome", "candidate", "lazy", "modes", "wire",
    )  # fmt: skip

    def __init__(self, candidate: Candidate, wire: Any, modes: Any, lazy: LazyLoad) -> None:
        if not isinstance(wire, list):
            raise TypeError("its tools are not a list")
        if not isinstance(modes, list) or len(modes) != len(wire):
            raise TypeError("its tools do not say how they run")
        self.candidate = candidate
        self.wire: list[Any] = wire
        self.modes: list[Any] = modes
        self.lazy = lazy
        self._importing: Any = None  # an anyio.Event while the import runs
        self._executes: dict[str, Callable[..., Any]] | None = None
        self._error: tuple[str, str] | None = None
        self._outcome: ImportOutcome | None = None

    def imported(self, name: str) -> Callable[..., Any] | ToolResult | None:
        """The live tool's ``execute`` (or the error result) once the import was tried, else
        ``None``."""
        executes = self._executes
        if executes is not None:
            return executes[name]
        return self._error_result() if self._error is not None else None

    def _error_result(self) -> ToolResult:
        assert self._error is not None
        code, message = self._error
        return error_result(Kind.LAZY_LOAD_FAILED, code, message, path=self.candidate.path)

    async def live(self, name: str) -> Callable[..., Any] | ToolResult:
        """The live tool's ``execute``, importing the module first; or the error result.

        One call imports; calls arriving meanwhile wait for it. If that call is cancelled
        before the import finished, nothing was recorded and a waiting call imports instead.
        """
        while self._executes is None and self._error is None:
            importing = self._importing
            if importing is not None:
                await importing.wait()
                continue
            import anyio

            importing = self._importing = anyio.Event()
            try:
                await self._import()
            finally:
                self._importing = None
                importing.set()
        if self._error is not None:
            return self._error_result()
        assert self._executes is not None
        return self._executes[name]

    async def _import(self) -> None:
        candidate = self.candidate
        where = display_path(candidate.path)
        self._outcome = outcome = await self.lazy.importer(candidate)
        if outcome.errors:
            first = outcome.errors[0]
            self._fail(
                LoadCode.LAZY_IMPORT_FAILED,
                Code.IMPORT_FAILED,
                f"{where}: the module of this lazily loaded tool failed to import on its first"
                f" call: {first.error}",
            )
            return
        live = [tool.to_dict() for tool in outcome.tools]
        changed = {t["name"] for t in live if t not in self.wire}
        changed |= {str(t.get("name")) for t in self.wire if isinstance(t, dict) and t not in live}
        if not self.lazy.isolated and not changed:  # the lazy tool runs as the live one does
            changed = {
                tool.name
                for tool, is_async in zip(outcome.tools, self.modes, strict=False)
                if tool.execute_is_async is not is_async
            }
        if changed or len(live) != len(self.wire):
            self._fail(
                LoadCode.LAZY_DEFINITION_CHANGED,
                Code.DEFINITION_CHANGED,
                f"{where}: the module no longer defines its tools as the manifest cache says"
                f" ({', '.join(map(repr, sorted(changed)))} differ); load the tools again",
            )
            return
        self.lazy.late.extend(outcome.diagnostics)
        self._executes = {tool.name: tool.execute for tool in outcome.tools}

    def _fail(self, diagnostic_code: str, code: str, message: str) -> None:
        self.lazy.failed(self.candidate, diagnostic_code, message)
        self._error = (code, message)

    async def release(self) -> None:
        """Forget the imported module and stop its workers (a reload replaced it)."""
        outcome = self._outcome
        if outcome is None:
            return
        if outcome.module_name is not None:
            release_modules(outcome.module_name)
        for stop in outcome.cleanup:
            await stop()
