"""The loader's one pipeline, :func:`run_load`, its front doors (:func:`discover_and_load`,
:func:`load_custom_tools`, :func:`load_scan`, :func:`scan`) and the :class:`LoadResult` it
builds once.

Order and conflicts
    Candidates are imported in the scan's precedence order (see ``docs/discovery.md``), each
    factory's tools in the order it returned them; ``.mcp.json`` servers' tools come last.
    Every tool is registered in one :class:`~customtools.ToolRegistry`, whose name rule
    decides: nothing takes one of the host's ``builtin_tool_names``, a later claimant of a
    taken name is a ``"name-conflict"`` error naming both origins, and names that differ
    only by letter case are kept and reported as ``"similar-name"``.

Reload
    Each load has its own generation number in the private module names
    (``customtools._tool_modules.<stem>_<hash>_<generation>``), so loading again picks up
    edited, added and removed files while the earlier result's tools keep working.
    :class:`~customtools.loading.Reloader` passes what it loaded before
    (:class:`PreviousLoad`) so that only changed candidates are imported again. Installed
    entry points are ordinary imports and are never re-imported.
"""

from __future__ import annotations

import contextlib
import gc
import os
from collections.abc import Collection, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from customtools._context import ToolContext
from customtools._error_results import LoadCode
from customtools._errors import LoadFailedError
from customtools._loading._api import (
    NO_OP_UI,
    PendingActionStore,
    SharedState,
    ToolAPI,
    logger_name_for,
)
from customtools._loading._import import (
    ImportOutcome,
    StdFds,
    load_candidate,
    logger_stem,
    module_name_for,
    new_generation,
)
from customtools._loading._options import (
    DEFAULT_LOAD_TIMEOUT,
    UNSET,
    DiscoveryOptions,
    LoadOptions,
    Unset,
    door_options,
)
from customtools._loading._paths import display_path
from customtools._loading._records import (
    Candidate,
    Diagnostic,
    LoadedTool,
    LoadError,
    MetadataFile,
    ScanResult,
    ToolSource,
)
from customtools._observe import STEP_DISCOVER, STEP_MODULE, STEP_TRUST, load_step
from customtools._registry import ToolRegistry

if TYPE_CHECKING:
    from customtools._loading._api import UIContext
    from customtools._loading._isolating import ModuleIsolation
    from customtools._loading._lazy import LazyLoad
    from customtools._loading._mcpjson import McpToolProvider
    from customtools._loading._providers import ToolProvider
    from customtools._loading._trust import PendingSource
    from customtools._loading._trust_store import TrustPolicy, TrustStore
    from customtools._policy import PackFacts
    from customtools._talkback import InputHandler, LogSink, Sampler

__all__ = [
    "DEFAULT_LOAD_TIMEOUT",
    "LoadResult",
    "PreviousLoad",
    "discover_and_load",
    "import_here",
    "load_custom_tools",
    "load_scan",
    "run_load",
    "scan",
    "scan_with",
]

PathArg = str | os.PathLike[str]


class LoadResult:
    """What a load produced, built once and read-only. Errors are data here: a load never
    raises for one bad file.

    Attributes:
        tools: the tools that loaded, in precedence order.
        errors: everything that failed, one record per file, tool or conflict.
        metadata: ``.md``/``.json`` metadata files found by the scan (never imported).
        diagnostics: skipped files, duplicate paths, disabled providers, similar names,
            project sources pending trust (code ``"pending-trust"``), modules a lazy load
            imported at load (``"eager-import"``), ...; first calls of lazy tools add theirs.
        pending_trust: the project sources that were not loaded because they are not trusted,
            with the files that would run (show them, then ``TrustStore.grant`` and reload).
        pending_actions: the store behind ``api.push_pending_action`` for this load.
        module_names: the private module names this load imported, in order.
    """

    __slots__ = (
        "_diagnostics",
        "_registry",
        "_state",
        "_talkback",
        "errors",
        "metadata",
        "module_names",
        "pending_actions",
        "pending_trust",
        "tools",
    )

    def __init__(
        self,
        *,
        tools: Iterable[LoadedTool] = (),
        errors: Iterable[LoadError] = (),
        metadata: Iterable[MetadataFile] = (),
        diagnostics: Iterable[Diagnostic] = (),
        pending_actions: PendingActionStore | None = None,
        module_names: Iterable[str] = (),
        cwd: str | None = None,
        pending_trust: Iterable[PendingSource] = (),
        _state: SharedState | None = None,
        _registry: ToolRegistry | None = None,
    ) -> None:
        if _state is None:
            store = pending_actions if pending_actions is not None else PendingActionStore()
            _state = SharedState(cwd=cwd or os.getcwd(), pending_actions=store)
        registry = _registry if _registry is not None else ToolRegistry(tools)
        self.tools: tuple[LoadedTool, ...] = tuple(registry.entry(n).record for n in registry.names)
        self.errors: tuple[LoadError, ...] = tuple(errors)
        self.metadata: tuple[MetadataFile, ...] = tuple(metadata)
        self._diagnostics: tuple[Diagnostic, ...] = tuple(diagnostics)
        self.module_names: tuple[str, ...] = tuple(module_names)
        self.pending_trust: tuple[PendingSource, ...] = tuple(pending_trust)
        self.pending_actions = _state.pending_actions
        self._state = _state
        self._talkback: dict[str, Any] = {}
        self._registry = registry  # set last: from here on the result is read-only

    def __setattr__(self, name: str, value: object) -> None:
        if hasattr(self, "_registry"):
            raise AttributeError(f"a LoadResult is read-only: {name!r} cannot be set")
        object.__setattr__(self, name, value)

    def __repr__(self) -> str:
        return f"<LoadResult {len(self.tools)} tool(s), {len(self.errors)} error(s)>"

    @property
    def diagnostics(self) -> tuple[Diagnostic, ...]:
        """Skipped files, duplicate paths, disabled providers, similar names, project sources
        pending trust (code ``"pending-trust"``), ...; then what first calls of lazy tools
        found since (``"lazy-import-failed"``, ``"lazy-definition-changed"``)."""
        late = self._state.late_diagnostics
        return self._diagnostics + tuple(late) if late else self._diagnostics

    @property
    def ok(self) -> bool:
        """``True`` when nothing failed."""
        return not self.errors

    @property
    def tool_names(self) -> tuple[str, ...]:
        """The names of the loaded tools, in order."""
        return self._registry.names

    @property
    def ui(self) -> Any:
        """The UI every tool of this load sees (the no-op UI until :meth:`set_ui_context`)."""
        return self._state.ui

    @property
    def has_ui(self) -> bool:
        """What ``api.has_ui`` reports to the tools of this load."""
        return self._state.has_ui

    def get(self, name: str) -> LoadedTool | None:
        """The loaded tool called ``name``, or ``None``."""
        entry = self._registry.lookup(name)
        return entry.record if entry is not None else None

    def set_ui_context(self, ui: UIContext | None, has_ui: bool = True) -> None:
        """Attach the host's UI: every ``api`` this load handed out sees it from now on.

        Pass ``None`` to go back to the no-op UI (``has_ui`` is then ``False``).
        """
        self._state.ui = NO_OP_UI if ui is None else ui
        self._state.has_ui = bool(has_ui) and ui is not None

    # -- talk-back --------------------------------------------------------------------------

    def set_talkback(
        self,
        *,
        input_handler: InputHandler | None = None,
        sampler: Sampler | None = None,
        log_sink: LogSink | None = None,
    ) -> None:
        """Register the host's answers to ``ctx.ask``, ``ctx.sample`` and ``ctx.log`` for the
        tools of this load; :meth:`context` puts them on the context calls get. ``None``
        removes one."""
        self._talkback.update(input_handler=input_handler, sampler=sampler, log_sink=log_sink)

    def context(self, **fields: Any) -> ToolContext:
        """A :class:`~customtools.ToolContext` for calls of this load's tools: its UI
        (:meth:`set_ui_context`), working directory and talk-back handlers
        (:meth:`set_talkback`); ``fields`` override or add any other field (``session``,
        ``model``, ``meta``, ...). Pass it as ``CustomToolAdapter(tool, context=...)`` or
        per call (``execute(..., ctx=...)``)."""
        base: dict[str, Any] = {
            "ui": self._state.ui,
            "has_ui": self._state.has_ui,
            "cwd": self._state.cwd,
            **self._talkback,
        }
        return ToolContext(**{**base, **fields})

    def raise_for_errors(self) -> LoadResult:
        """Raise :class:`~customtools.LoadFailedError` listing every error; return ``self``
        when there are none (so ``result = (await discover_and_load()).raise_for_errors()``).
        """
        if self.errors:
            lines = [f"{len(self.errors)} custom tool load error(s):"]
            lines += [f"  {display_path(error.path)}: {error.error}" for error in self.errors]
            raise LoadFailedError("\n".join(lines), errors=self.errors)
        return self

    def to_dict(self) -> dict[str, Any]:
        """JSON form, for ``customtools list --format json`` and host diagnostics."""
        return {
            "tools": [loaded.to_dict() for loaded in self.tools],
            "errors": [error.to_dict() for error in self.errors],
            "metadata": [item.to_dict() for item in self.metadata],
            "diagnostics": [item.to_dict() for item in self.diagnostics],
            "pendingTrust": [item.to_dict() for item in self.pending_trust],
        }


def _describe_source(source: ToolSource | None) -> str:
    if source is None:
        return "unknown provider"
    text = f"{source.provider_name} [{source.provider}], {source.level} level"
    if source.plugin_name:
        text += f", plugin {source.plugin_name}"
    if source.distribution:
        text += f", distribution {source.distribution}"
    return text


def _resolve_cwd(cwd: PathArg | None) -> str:
    return os.path.abspath(os.fspath(cwd)) if cwd is not None else os.getcwd()


class Collected:
    """What one load gathers before its result exists: its tools in one registry (whose name
    rule decides), module names, errors, diagnostics and pending sources."""

    def __init__(self, builtin_tool_names: Iterable[str], scanned: ScanResult) -> None:
        self.registry = ToolRegistry(reserved_names=builtin_tool_names)
        self.module_names: list[str] = []
        self.errors: list[LoadError] = list(scanned.errors)
        self.diagnostics: list[Diagnostic] = list(scanned.diagnostics)
        self.pending: list[PendingSource] = []
        # id(source) -> its description: the candidates of one directory share a source,
        # and the load holds every source it describes, so no id is reused meanwhile.
        self._described: dict[int, str] = {}

    def add(self, candidate: Candidate, outcome: ImportOutcome) -> None:
        """Take one candidate's outcome: its tools unless their names are taken."""
        self.errors.extend(outcome.errors)
        self.diagnostics.extend(outcome.diagnostics)
        if outcome.module_name is not None:
            self.module_names.append(outcome.module_name)
        pack = PackSource(candidate) if outcome.tools else None
        for tool in outcome.tools:
            self.claim(
                LoadedTool(
                    path=candidate.path,
                    resolved_path=candidate.resolved_path,
                    tool=tool,
                    source=candidate.source,
                    lazy=outcome.lazy,
                    pack=pack,
                )
            )

    def claim(self, loaded: LoadedTool) -> None:
        """Register ``loaded`` (a ``name-conflict`` is an error, a ``similar-name`` a note)."""
        source = loaded.source
        described = self._described.get(id(source))
        if described is None:
            described = self._described[id(source)] = _describe_source(source)
        origin = f"{display_path(loaded.path)} ({described})"
        similar = len(self.registry.similar_names)
        # A lazy record is registered by its name, its tool left unbuilt.
        held = loaded if loaded.lazy else loaded.tool
        conflict = self.registry.add(held, origin=origin, record=loaded)
        if conflict is not None:
            self.errors.append(
                LoadError(
                    path=loaded.path,
                    error=conflict.error,
                    source=loaded.source,
                    resolved_path=loaded.resolved_path,
                    code=conflict.code,
                    tool_name=conflict.tool_name,
                )
            )
            return
        for note in self.registry.similar_names[similar:]:
            self.diagnostics.append(
                Diagnostic(
                    code=note.code, message=note.error, path=loaded.path, source=loaded.source
                )
            )


class PackSource:
    """What the execution policy reads about one candidate's module, on first use (a load
    without a policy never reads it): its declarations, read without importing it, and the
    digest of its files."""

    __slots__ = ("_candidate", "_facts")

    def __init__(self, candidate: Candidate) -> None:
        self._candidate = candidate
        self._facts: PackFacts | None = None

    def facts(self) -> PackFacts:
        """The pack's facts (see :class:`~customtools._policy.PackFacts`)."""
        if self._facts is None:
            import hashlib

            from customtools._loading._trust import fingerprint
            from customtools._permissions import Declarations, PermissionsError, read_declarations
            from customtools._policy import PackFacts, declared_policy

            candidate = self._candidate
            try:
                declared = read_declarations(candidate)
            except PermissionsError:
                declared = Declarations()  # the load reported it (or validate does)
            digest = hashlib.sha256(repr(fingerprint(candidate)).encode()).hexdigest()
            self._facts = PackFacts(
                key=candidate.resolved_path,
                digest=digest,
                policy=declared_policy(declared),
                permissions=declared.module,
                tool_permissions=declared.tools,
            )
        return self._facts


class PreviousLoad(Protocol):
    """What an earlier load left to the next one (the :class:`~customtools.loading.Reloader`)."""

    def reuse(self, candidate: Candidate) -> ImportOutcome | None:
        """The outcome to serve again when ``candidate`` did not change, else ``None``."""

    def served(self, candidate: Candidate, outcome: ImportOutcome) -> ImportOutcome:
        """What to serve for a re-imported candidate (a failure may keep the last good one)."""


_PROMOTED_LIMIT = 100_000
"""Objects the loader may move to the oldest generation between two full collections."""

_promoted = 0


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """No cyclic garbage collection while the loader builds its own records (no tool code
    runs inside): a load allocates tens of thousands of long-lived containers, and each
    collection on the way would walk them, and the host's whole heap, again. The collector
    runs as usual around the imports of tool code (see :func:`_settle` for what follows)."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        _settle()
        gc.enable()


def _settle() -> None:
    """Move what a paused section built to the oldest generation at once (``gc.freeze()``
    then ``gc.unfreeze()``: two list splices), instead of letting the next young collections
    walk it on its way there. CPython runs a full collection only when enough objects were
    promoted by young collections, which this move never counts, so garbage moved with it
    would wait for a full collection that repeated loads might never start: after
    :data:`_PROMOTED_LIMIT` moved objects the loader runs that full collection itself.
    Nothing is moved when the host froze objects of its own (its freeze is kept) or where
    the collector has no generations to freeze."""
    global _promoted
    if getattr(gc, "get_freeze_count", lambda: 1)() != 0:
        return
    _promoted += gc.get_count()[0]  # what was allocated since the last collection
    if _promoted > _PROMOTED_LIMIT:
        _promoted = 0
        gc.collect()
    else:
        gc.freeze()
        gc.unfreeze()


async def import_here(
    candidates: Sequence[Candidate], state: SharedState, load_timeout: float | None
) -> list[ImportOutcome]:
    """Import ``candidates`` in this process, one after another (no trust gate, no name
    rule: :func:`run_load` and the isolation worker apply what they need)."""
    generation = new_generation()
    outcomes: list[ImportOutcome] = []
    std_fds = StdFds()  # one snapshot of descriptors 0-2 for the whole load
    try:
        for candidate in candidates:
            stem = logger_stem(candidate)
            attributes: dict[str, str | int | float | bool] = {
                "customtools.source.path": candidate.path,
                "customtools.source.provider": candidate.source.provider,
                "customtools.source.level": candidate.source.level,
            }
            with load_step(STEP_MODULE, attributes) as step:
                outcome = await load_candidate(
                    candidate,
                    module_name_for(candidate, generation, stem=stem),
                    ToolAPI(state, logger_name=logger_name_for(stem)),
                    load_timeout=load_timeout,
                    std_fds=std_fds,
                )
                step.set("customtools.tools", len(outcome.tools))
                if outcome.errors:
                    step.failed(outcome.errors[0].code or LoadCode.LOAD_ERROR)
            outcomes.append(outcome)
    finally:
        std_fds.close()
    return outcomes


async def _import(
    candidates: Sequence[Candidate], state: SharedState, load: LoadOptions
) -> Sequence[ImportOutcome]:
    """Import ``candidates`` here, or in the load's isolation workers."""
    request = load.isolation
    if not candidates:
        return ()
    if request is None:
        return await import_here(candidates, state, load.load_timeout)
    return await request.pool.load_candidates(
        candidates, cwd=state.cwd, load_timeout=load.load_timeout, request=request
    )


async def _outcomes(
    candidates: Sequence[Candidate],
    state: SharedState,
    load: LoadOptions,
    previous: PreviousLoad | None,
    lazy: LazyLoad | None,
) -> list[ImportOutcome]:
    """One outcome per candidate: reused from ``previous``, served from the manifest cache
    (``lazy``), or imported (here or isolated)."""
    with gc_paused():
        reused = [previous.reuse(c) if previous is not None else None for c in candidates]
        served = [
            outcome if outcome is not None or lazy is None else lazy.serve(c)
            for c, outcome in zip(candidates, reused, strict=True)
        ]
    wanted = [c for c, outcome in zip(candidates, served, strict=True) if outcome is None]
    imported = iter(await _import(wanted, state, load))
    outcomes = []
    for candidate, old, outcome in zip(candidates, reused, served, strict=True):
        if outcome is None:
            outcome = next(imported)
            if lazy is not None:
                lazy.keep(candidate, outcome)
        if old is None and previous is not None:
            outcome = previous.served(candidate, outcome)
        outcomes.append(outcome)
    return outcomes


async def run_load(
    scanned: ScanResult,
    *,
    cwd: str,
    builtin_tool_names: Iterable[str] = (),
    options: DiscoveryOptions | None = None,
    load: LoadOptions | None = None,
    previous: PreviousLoad | None = None,
) -> LoadResult:
    """The one load pipeline: trust gate, import (here or in isolation workers, or reused
    from ``previous``), names claimed in order, ``.mcp.json`` servers mounted, then the
    :class:`LoadResult`, built once; ``strict`` is decided here and nowhere else.

    Raises:
        LoadFailedError: ``load.strict`` and there were errors (all are listed).
    """
    options = options if options is not None else DiscoveryOptions()
    load = load if load is not None else LoadOptions()
    store = options.trust_store
    project = any(candidate.source.level == "project" for candidate in scanned.candidates)
    if store is None and options.trust != "all" and (project or load.mcp_servers is not None):
        from customtools._loading._trust_store import TrustStore

        store = TrustStore(home=options.home, app_name=options.app_name)
    collected = Collected(builtin_tool_names, scanned)
    digests: dict[str, str] = {}
    if project and options.trust == "all":
        # Nothing hashed, but project code still never runs from bytecode caches.
        from customtools._loading._reviewed import register_root

        for root in {c.root or c.path for c in scanned.candidates if c.source.level == "project"}:
            register_root(root)
    elif project:
        # The gate (and hashing, and the store) is imported only when there is project code.
        from customtools._loading._trust_store import apply_trust

        policy = options.trust if isinstance(options.trust, str) else "callback"
        with load_step(STEP_TRUST, {"customtools.trust.policy": policy}) as step:
            gate = await apply_trust(scanned, options.trust, store, project=cwd)
            step.set("customtools.trust.pending", len(gate.pending))
        scanned = gate.scanned  # its errors and diagnostics are the scan's, already collected
        collected.errors += gate.errors
        collected.diagnostics += gate.diagnostics
        collected.pending += gate.pending
        digests = {c.resolved_path: s.digest for s in gate.sources for c in s.candidates}
    actions = load.pending_actions
    state = SharedState(
        cwd=cwd, pending_actions=actions if actions is not None else PendingActionStore()
    )
    lazy = None
    if load.lazy:
        from customtools._loading._lazy import LazyLoad
        from customtools._loading._manifests import ManifestCache, manifest_dir

        async def first_call(candidate: Candidate) -> ImportOutcome:
            return (await _import([candidate], state, load))[0]

        lazy = LazyLoad(
            ManifestCache(manifest_dir(options.home, options.app_name)),
            cwd=cwd,
            digests=digests,
            importer=first_call,
            late=state.late_diagnostics,
            isolation=load.isolation,
        )
    outcomes = await _outcomes(scanned.candidates, state, load, previous, lazy)
    if lazy is not None:
        lazy.cache.save()
        collected.diagnostics += lazy.cache.diagnostics
    with gc_paused():
        for candidate, outcome in zip(scanned.candidates, outcomes, strict=True):
            collected.add(candidate, outcome)
    if load.mcp_servers is not None:
        from customtools._loading._mcpjson import load_mcp_json_tools

        await load_mcp_json_tools(
            load.mcp_servers,
            collected,
            cwd=cwd,
            plugin_dirs=options.plugin_dirs,
            trust_project=options.project_mcp_servers or options.trust == "all",
            trust=options.trust,
            trust_store=store,
        )
    result = LoadResult(
        errors=collected.errors,
        metadata=scanned.metadata,
        diagnostics=collected.diagnostics,
        module_names=collected.module_names,
        pending_trust=collected.pending,
        _state=state,
        _registry=collected.registry,
    )
    return result.raise_for_errors() if load.strict else result


def scan(
    configured_paths: Iterable[PathArg] = (),
    cwd: PathArg | None = None,
    *,
    options: DiscoveryOptions | None = None,
    home: PathArg | Unset | None = UNSET,
    app_name: str | Unset = UNSET,
    native_dirs: tuple[Sequence[PathArg], Sequence[PathArg]] | Unset | None = UNSET,
    plugin_dirs: Sequence[PathArg] | Unset = UNSET,
    providers: Sequence[ToolProvider] | Unset | None = UNSET,
    disabled_providers: Collection[str] | Unset = UNSET,
    entry_points: bool | Unset = UNSET,
) -> ScanResult:
    """List what :func:`discover_and_load` would import, without running any tool code.

    Takes the same scan options as :func:`discover_and_load`, as keywords or as a
    :class:`~customtools.loading.DiscoveryOptions` (a keyword passed explicitly wins over
    ``options``); see ``docs/discovery.md`` for the sources and their order.
    """
    keywords = dict(locals())
    del keywords["configured_paths"], keywords["cwd"], keywords["options"]
    opts, _ = door_options("scan", options, keywords)
    return scan_with(configured_paths, _resolve_cwd(cwd), opts)


def scan_with(configured_paths: Iterable[PathArg], cwd: str, opts: DiscoveryOptions) -> ScanResult:
    """:func:`scan` with its options as one value (``cwd`` absolute)."""
    from customtools._loading._scan import scan_sources

    with load_step(STEP_DISCOVER) as step:
        scanned = scan_sources(
            tuple(configured_paths),
            cwd,
            home=opts.home,
            app_name=opts.app_name,
            native_dirs=opts.native_dirs,
            plugin_dirs=opts.plugin_dirs,
            providers=opts.providers,
            disabled_providers=opts.disabled_providers,
            entry_points=opts.entry_points,
        )
        step.set("customtools.candidates", len(scanned.candidates))
    return scanned


async def discover_and_load(
    configured_paths: Iterable[PathArg] = (),
    cwd: PathArg | None = None,
    builtin_tool_names: Iterable[str] = (),
    *,
    options: DiscoveryOptions | None = None,
    strict: bool = False,
    load_timeout: float | None = DEFAULT_LOAD_TIMEOUT,
    pending_actions: PendingActionStore | None = None,
    home: PathArg | Unset | None = UNSET,
    app_name: str | Unset = UNSET,
    native_dirs: tuple[Sequence[PathArg], Sequence[PathArg]] | Unset | None = UNSET,
    plugin_dirs: Sequence[PathArg] | Unset = UNSET,
    providers: Sequence[ToolProvider] | Unset | None = UNSET,
    disabled_providers: Collection[str] | Unset = UNSET,
    entry_points: bool | Unset = UNSET,
    trust: TrustPolicy | Unset = UNSET,
    trust_store: TrustStore | Unset | None = UNSET,
    mcp_servers: McpToolProvider | None = None,
    project_mcp_servers: bool | Unset = UNSET,
    isolation: ModuleIsolation | None = None,
    sandbox: bool = False,
    require_sandbox: bool = False,
    lazy: bool | Unset = UNSET,
) -> LoadResult:
    """Find tool modules in every source, import them and call their factories.

    Sources, in order: provider directories (native, claude, claude-plugins, codex; user level
    before project level), plugin roots, installed entry points, then ``configured_paths``
    (see ``docs/discovery.md``). One bad file never stops the load: it becomes a record in
    :attr:`LoadResult.errors`. Project-scope code (found under ``cwd``) loads only when the
    user trusted it: by default it is listed in :attr:`LoadResult.pending_trust` instead
    (see ``docs/trust.md``).

    Args:
        configured_paths: extra files or directories (``~`` expanded, relative to ``cwd``,
            ``file://`` URLs accepted); the host's explicit choice, so user scope.
        cwd: the project directory (default: the process's working directory).
        builtin_tool_names: names the host already uses; no tool may take them.
        options: the discovery and trust options as one
            :class:`~customtools.loading.DiscoveryOptions`; each of its fields (``home``,
            ``app_name``, ``native_dirs``, ``plugin_dirs``, ``providers``,
            ``disabled_providers``, ``entry_points``, ``trust``, ``trust_store``,
            ``project_mcp_servers``, described there) is also a keyword here, and a keyword
            passed explicitly wins over its field.
        strict: raise :class:`~customtools.LoadFailedError` listing every error (for CI).
        load_timeout: seconds an awaitable factory may take (``None``: no limit).
        pending_actions: share a pending-action store across loads (default: a new one).
        mcp_servers: mounts the servers of ``.mcp.json`` files (plugin roots, then the
            project root) as tools named ``mcp__<server>__<tool>``, after every other
            source; for example an open ``customtools.mcp.McpMount``. ``None``: not read.
        isolation: import each module in a worker process of this
            :class:`~customtools.isolation.IsolationPool`; the tools are then proxies
            (see ``docs/isolation.md``).
        sandbox: confine each isolated module to the permissions it declares, enforced by
            the kernel (needs ``isolation``; see ``docs/sandbox.md``).
        require_sandbox: refuse a module whose sandbox cannot be fully enforced here.
        lazy: serve the tools of modules that loaded before, unchanged, from the manifest
            cache (``~/.<app_name>/cache/manifests``) without importing them; a tool's first
            call imports its module, as this load would have (see ``docs/discovery.md``).
            Such tools are marked :attr:`LoadedTool.lazy`.

    Raises:
        LoadFailedError: ``strict`` is true and there were errors.
        ValueError: an option is not valid (``load_timeout``, ``trust``, ``app_name``), or
            ``sandbox`` without ``isolation``.
    """
    keywords = dict(locals())
    for name in ("configured_paths", "cwd", "builtin_tool_names", "options"):
        del keywords[name]
    opts, load = door_options("discover_and_load", options, keywords)
    where = _resolve_cwd(cwd)
    with gc_paused():
        scanned = scan_with(configured_paths, where, opts)
    return await run_load(
        scanned, cwd=where, builtin_tool_names=builtin_tool_names, options=opts, load=load
    )


async def load_custom_tools(
    paths: Iterable[PathArg],
    cwd: PathArg | None = None,
    builtin_tool_names: Iterable[str] = (),
    *,
    strict: bool = False,
    load_timeout: float | None = DEFAULT_LOAD_TIMEOUT,
    pending_actions: PendingActionStore | None = None,
    home: PathArg | None = None,
    isolation: ModuleIsolation | None = None,
    sandbox: bool = False,
    require_sandbox: bool = False,
    lazy: bool | Unset = UNSET,
) -> LoadResult:
    """Load exactly the given files and directories, nothing discovered.

    A ``.md``/``.json`` path is a ``"metadata-not-executable"`` error and a missing path a
    ``"not-found"`` error; everything else, options included, behaves as in
    :func:`discover_and_load` (``home`` is the directory ``~`` expands to).

    Raises:
        LoadFailedError: ``strict`` is true and there were errors.
        ValueError: ``sandbox`` without ``isolation``.
    """
    keywords = dict(locals())
    del keywords["paths"], keywords["cwd"], keywords["builtin_tool_names"]
    opts, load = door_options("load_custom_tools", None, keywords)
    from customtools._loading._scan import explicit_candidates

    where = _resolve_cwd(cwd)
    scanned = explicit_candidates(list(paths), where, home=home)
    return await run_load(
        scanned, cwd=where, builtin_tool_names=builtin_tool_names, options=opts, load=load
    )


async def load_scan(
    scanned: ScanResult,
    cwd: PathArg | None = None,
    builtin_tool_names: Iterable[str] = (),
    *,
    strict: bool = False,
    load_timeout: float | None = DEFAULT_LOAD_TIMEOUT,
    pending_actions: PendingActionStore | None = None,
    trust: TrustPolicy = "prompt",
    trust_store: TrustStore | None = None,
    isolation: ModuleIsolation | None = None,
    sandbox: bool = False,
    require_sandbox: bool = False,
    home: PathArg | None = None,
    lazy: bool | Unset = UNSET,
) -> LoadResult:
    """Import the candidates of a :func:`scan` result and call their factories.

    This is the second half of :func:`discover_and_load`, for hosts that filter the scan first
    (an allow list): drop candidates from ``scanned`` with
    ``dataclasses.replace(scanned, candidates=...)`` and load the rest. The trust gate applies
    here too: project-scope candidates load only when trusted (see ``docs/trust.md``). The
    options mean what they mean for :func:`discover_and_load`; ``home`` is the directory
    ``~`` means (in declared permissions, and for the default trust store).

    Raises:
        LoadFailedError: ``strict`` is true and there were errors (all are listed).
        ValueError: ``load_timeout`` or ``trust`` is not valid, or ``sandbox`` without
            ``isolation``.
    """
    keywords = dict(locals())
    del keywords["scanned"], keywords["cwd"], keywords["builtin_tool_names"]
    opts, load = door_options("load_scan", None, keywords)
    return await run_load(
        scanned,
        cwd=_resolve_cwd(cwd),
        builtin_tool_names=builtin_tool_names,
        options=opts,
        load=load,
    )
