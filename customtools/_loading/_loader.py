"""The loader's front door: :func:`discover_and_load`, :func:`load_custom_tools`, :func:`scan`
and the :class:`LoadResult` they return.

Order and conflicts
    Candidates are imported one after another in the scan's precedence order (see
    ``docs/discovery.md``), and each factory's tools are taken in the order it returned them.
    Tool names are claimed first come, first served, starting from the host's
    ``builtin_tool_names``: nothing can take a built-in name, and every later claimant of a
    taken name becomes a ``LoadError`` (code ``"name-conflict"``) naming the tool, both paths
    and both providers. Names that differ only by letter case are allowed but reported as a
    ``"similar-name"`` diagnostic.

Reload
    Every call imports afresh: each load has its own generation number in the private module
    names (``customtools._tool_modules.<stem>_<hash>_<generation>``), so calling
    :func:`discover_and_load` again picks up edited, added and removed files. Tools from the
    earlier result keep working (their modules stay imported); a host swaps its registry to the
    new result and drops the old one. Installed entry points are ordinary imports and are not
    re-imported (reinstalling a distribution needs a new process).
"""

from __future__ import annotations

import os
from collections.abc import Collection, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from customtools._context import ToolContext
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
from customtools._loading._options import DiscoveryOptions, merge_options
from customtools._loading._paths import display_path
from customtools._loading._records import (
    Candidate,
    Diagnostic,
    LoadedTool,
    LoadError,
    MetadataFile,
    ScanResult,
    ToolSource,
    check_trust_policy,
)
from customtools._observe import (
    STEP_DISCOVER,
    STEP_MODULE,
    STEP_TRUST,
    LoadStep,
    load_step,
)

if TYPE_CHECKING:
    from customtools._loading._api import UIContext
    from customtools._loading._isolating import ModuleIsolation
    from customtools._loading._mcpjson import McpToolProvider
    from customtools._loading._providers import ToolProvider
    from customtools._loading._trust import PendingSource
    from customtools._loading._trust_store import TrustPolicy, TrustStore
    from customtools._talkback import InputHandler, LogSink, Sampler

__all__ = [
    "DEFAULT_LOAD_TIMEOUT",
    "LoadResult",
    "discover_and_load",
    "load_custom_tools",
    "load_scan",
    "scan",
]

DEFAULT_LOAD_TIMEOUT = 10.0
"""Seconds an awaitable factory may take before it becomes a ``"timeout"`` load error."""

PathArg = str | os.PathLike[str]


class LoadResult:
    """What a load produced. Errors are data here: a load never raises for one bad file.

    Attributes:
        tools: the tools that loaded, in precedence order.
        errors: everything that failed, one record per file, tool or conflict.
        metadata: ``.md``/``.json`` metadata files found by the scan (never imported).
        diagnostics: skipped files, duplicate paths, disabled providers, similar names,
            project sources pending trust (code ``"pending-trust"``), ...
        pending_trust: the project sources that were not loaded because they are not trusted,
            with the files that would run (show them, then ``TrustStore.grant`` and reload).
        pending_actions: the store behind ``api.push_pending_action`` for this load.
        module_names: the private module names this load imported, in order.
    """

    __slots__ = (
        "_by_name",
        "_state",
        "_talkback",
        "diagnostics",
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
    ) -> None:
        self.tools: tuple[LoadedTool, ...] = tuple(tools)
        self.errors: tuple[LoadError, ...] = tuple(errors)
        self.metadata: tuple[MetadataFile, ...] = tuple(metadata)
        self.diagnostics: tuple[Diagnostic, ...] = tuple(diagnostics)
        self.module_names: tuple[str, ...] = tuple(module_names)
        self.pending_trust: tuple[PendingSource, ...] = tuple(pending_trust)
        store = pending_actions if pending_actions is not None else PendingActionStore()
        self.pending_actions = store
        self._state = SharedState(cwd=cwd or os.getcwd(), pending_actions=store)
        self._by_name = {loaded.tool.name: loaded for loaded in self.tools}
        self._talkback: dict[str, Any] = {}

    def __repr__(self) -> str:
        return f"<LoadResult {len(self.tools)} tool(s), {len(self.errors)} error(s)>"

    @property
    def ok(self) -> bool:
        """``True`` when nothing failed."""
        return not self.errors

    @property
    def tool_names(self) -> tuple[str, ...]:
        """The names of the loaded tools, in order."""
        return tuple(self._by_name)

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
        return self._by_name.get(name)

    def set_ui_context(self, ui: UIContext | None, has_ui: bool = True) -> None:
        """Attach the host's UI: every ``api`` this load handed out sees it from now on.

        Pass ``None`` to go back to the no-op UI (``has_ui`` is then ``False``).
        """
        self._state.ui = NO_OP_UI if ui is None else ui
        self._state.has_ui = bool(has_ui) and ui is not None

    # -- talk-back (issue 21) ---------------------------------------------------------------

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
        self._talkback = {"input_handler": input_handler, "sampler": sampler, "log_sink": log_sink}

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

    def _api_for(self, logger_name: str) -> ToolAPI:
        return ToolAPI(self._state, logger_name=logger_name)


def _describe_source(source: ToolSource | None) -> str:
    if source is None:
        return "unknown provider"
    text = f"{source.provider_name} [{source.provider}], {source.level} level"
    if source.plugin_name:
        text += f", plugin {source.plugin_name}"
    if source.distribution:
        text += f", distribution {source.distribution}"
    return text


def _conflict_error(loaded: LoadedTool, first: LoadedTool | None) -> LoadError:
    name = loaded.tool.name
    if first is None:
        message = f"tool name {name!r} is a built-in tool name and cannot be taken; rename the tool"
    else:
        where = (
            "another tool of the same module"
            if first.resolved_path == loaded.resolved_path
            else f"{display_path(first.path)} ({_describe_source(first.source)})"
        )
        message = (
            f"tool name {name!r} is already taken by {where}; this tool from"
            f" {display_path(loaded.path)}"
            f" ({_describe_source(loaded.source)}) was not loaded; rename one of them"
        )
    return LoadError(
        path=loaded.path,
        error=message,
        source=loaded.source,
        resolved_path=loaded.resolved_path,
        code="name-conflict",
        tool_name=name,
    )


def _resolve_cwd(cwd: PathArg | None) -> str:
    return os.path.abspath(os.fspath(cwd)) if cwd is not None else os.getcwd()


def _check_timeout(load_timeout: float | None) -> None:
    if load_timeout is not None and (
        isinstance(load_timeout, bool)
        or not isinstance(load_timeout, (int, float))
        or not load_timeout > 0
    ):
        raise ValueError(
            f"load_timeout must be a positive number of seconds or None, got {load_timeout!r}"
        )


class Collected:
    """What one load gathers: its tools by claimed name, module names, errors, diagnostics."""

    def __init__(self, builtin_tool_names: Iterable[str], scanned: ScanResult) -> None:
        self.claims: dict[str, LoadedTool | None] = dict.fromkeys(builtin_tool_names)
        self.folded: dict[str, str] = {name.casefold(): name for name in self.claims}
        self.tools: list[LoadedTool] = []
        self.module_names: list[str] = []
        self.errors: list[LoadError] = list(scanned.errors)
        self.diagnostics: list[Diagnostic] = list(scanned.diagnostics)

    def add(self, candidate: Candidate, outcome: ImportOutcome) -> None:
        """Take one candidate's outcome: its tools unless their names are taken."""
        self.errors.extend(outcome.errors)
        self.diagnostics.extend(outcome.diagnostics)
        if outcome.module_name is not None:
            self.module_names.append(outcome.module_name)
        for tool in outcome.tools:
            loaded = LoadedTool(
                path=candidate.path,
                resolved_path=candidate.resolved_path,
                tool=tool,
                source=candidate.source,
            )
            if tool.name in self.claims:
                self.errors.append(_conflict_error(loaded, self.claims[tool.name]))
                continue
            self.claims[tool.name] = loaded
            self.tools.append(loaded)
            similar = self.folded.setdefault(tool.name.casefold(), tool.name)
            if similar != tool.name:
                self.diagnostics.append(
                    Diagnostic(
                        code="similar-name",
                        message=f"tool {tool.name!r} from {display_path(candidate.path)} differs"
                        f" from {similar!r} only by letter case; models may confuse them",
                        path=candidate.path,
                        source=candidate.source,
                    )
                )


def _step_attributes(candidate: Candidate) -> dict[str, str | int | float | bool]:
    """The attributes of a module's load step (observation)."""
    return {
        "customtools.source.path": candidate.path,
        "customtools.source.provider": candidate.source.provider,
        "customtools.source.level": candidate.source.level,
    }


def _report_module(step: LoadStep, outcome: ImportOutcome) -> None:
    step.set("customtools.tools", len(outcome.tools))
    if outcome.errors:
        step.failed(outcome.errors[0].code or "load-error")


def _policy_name(trust: Any) -> str:
    return trust if isinstance(trust, str) else "callback"


def _check_sandbox(sandbox: bool, isolation: object) -> None:
    if sandbox and isolation is None:
        raise ValueError(
            "sandbox=True needs process isolation: pass isolation=IsolationPool() (the"
            " sandbox confines each module's worker process; see docs/sandbox.md)"
        )


def _sandbox_request(sandbox: bool, require: bool, home: PathArg | None) -> dict[str, Any]:
    """The pool's keyword for a sandboxed load; nothing for an unsandboxed one."""
    if not sandbox:
        return {}
    where = os.fspath(home) if home is not None else os.path.expanduser("~")
    return {"sandbox": {"home": os.path.abspath(where), "require": require}}


def _has_project_code(scanned: ScanResult) -> bool:
    return any(candidate.source.level == "project" for candidate in scanned.candidates)


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
) -> LoadResult:
    """Import the candidates of a :func:`scan` result and call their factories.

    This is the second half of :func:`discover_and_load`, for hosts that filter the scan first
    (an allow list): drop candidates from ``scanned`` with
    ``dataclasses.replace(scanned, candidates=...)`` and load the rest. The trust gate applies
    here too: project-scope candidates load only when trusted (see ``docs/trust.md``).

    Args:
        scanned: what :func:`scan` found.
        cwd: the working directory tools see as ``api.cwd`` (default: the process's).
        builtin_tool_names: names the host already uses; no tool may take them.
        strict: raise :class:`~customtools.LoadFailedError` if anything failed.
        load_timeout: seconds an awaitable factory may take (``None``: no limit).
        pending_actions: share a store across loads (default: a new one).
        trust: the trust policy for project-scope candidates: ``"prompt"`` (load trusted
            ones, list the others in :attr:`LoadResult.pending_trust`), ``"none"`` (load no
            project code), ``"all"`` (load everything), or a callable asked per pending source
            (``True`` grants it in ``trust_store`` and loads it).
        trust_store: where grants are kept (default: ``~/.customtools/trust.json``).
        isolation: import each module in a worker process of this pool instead of here;
            the tools are then proxies (see ``docs/isolation.md``).
        sandbox: confine each worker (kernel-enforced) to the permissions its module
            declares, or to the default ones (needs ``isolation``; see ``docs/sandbox.md``).
            Each source's load record (a ``"sandbox-enforced"``, ``"sandbox-partial"`` or
            ``"sandbox-unavailable"`` diagnostic) says what the kernel enforces.
        require_sandbox: refuse (a ``"sandbox-unavailable"`` load error) to import a module
            whose sandbox the running kernel cannot fully enforce.
        home: the home directory ``~`` in declared permissions means (default: the user's).

    Raises:
        LoadFailedError: ``strict`` is true and there were errors (all are listed).
        ValueError: ``load_timeout`` or ``trust`` is not valid, or ``sandbox`` without
            ``isolation``.
    """
    _check_timeout(load_timeout)
    _check_sandbox(sandbox or require_sandbox, isolation)
    check_trust_policy(trust)
    pending: tuple[PendingSource, ...] = ()
    gate_errors: tuple[LoadError, ...] = ()
    gate_diagnostics: tuple[Diagnostic, ...] = ()
    if trust == "all" and _has_project_code(scanned):
        # Nothing hashed, but project code still never runs from bytecode caches.
        from customtools._loading._reviewed import register_root

        for root in {c.root or c.path for c in scanned.candidates if c.source.level == "project"}:
            register_root(root)
    elif _has_project_code(scanned):
        # The gate (and hashing, and the store) is imported only when there is project code.
        from customtools._loading._trust_store import apply_trust

        with load_step(STEP_TRUST, {"customtools.trust.policy": _policy_name(trust)}) as step:
            gate = await apply_trust(scanned, trust, trust_store)
            step.set("customtools.trust.pending", len(gate.pending))
        scanned, pending = gate.scanned, gate.pending
        gate_errors, gate_diagnostics = gate.errors, gate.diagnostics
    result = LoadResult(
        metadata=scanned.metadata,
        pending_actions=pending_actions,
        cwd=_resolve_cwd(cwd),
        pending_trust=pending,
    )
    collected = Collected(builtin_tool_names, scanned)
    collected.errors.extend(gate_errors)
    collected.diagnostics.extend(gate_diagnostics)
    generation = new_generation()
    isolated = (
        await isolation.load_candidates(
            scanned.candidates,
            cwd=result._state.cwd,
            load_timeout=load_timeout,
            **_sandbox_request(sandbox or require_sandbox, require_sandbox, home),
        )
        if isolation is not None
        else None
    )
    std_fds = StdFds()  # one snapshot of descriptors 0-2 for the whole load
    try:
        for index, candidate in enumerate(scanned.candidates):
            if isolated is not None:
                collected.add(candidate, isolated[index])
                continue
            stem = logger_stem(candidate)
            with load_step(STEP_MODULE, _step_attributes(candidate)) as step:
                outcome = await load_candidate(
                    candidate,
                    module_name_for(candidate, generation, stem=stem),
                    result._api_for(logger_name_for(stem)),
                    load_timeout=load_timeout,
                    std_fds=std_fds,
                )
                _report_module(step, outcome)
            collected.add(candidate, outcome)
    finally:
        std_fds.close()
    result.tools = tuple(collected.tools)
    result.errors = tuple(collected.errors)
    result.diagnostics = tuple(collected.diagnostics)
    result.module_names = tuple(collected.module_names)
    result._by_name = {loaded.tool.name: loaded for loaded in collected.tools}
    if strict:
        result.raise_for_errors()
    return result


def scan(
    configured_paths: Iterable[PathArg] = (),
    cwd: PathArg | None = None,
    *,
    options: DiscoveryOptions | None = None,
    home: PathArg | None = None,
    app_name: str = "customtools",
    native_dirs: tuple[Sequence[PathArg], Sequence[PathArg]] | None = None,
    plugin_dirs: Sequence[PathArg] = (),
    providers: Sequence[ToolProvider] | None = None,
    disabled_providers: Collection[str] = (),
    entry_points: bool = True,
) -> ScanResult:
    """List what :func:`discover_and_load` would import, without running any tool code.

    Takes the same scan options as :func:`discover_and_load`, as keywords or as a
    :class:`~customtools.loading.DiscoveryOptions` (a keyword left at its default takes the
    value from ``options``); see ``docs/discovery.md`` for the sources and their order.
    """
    opts = merge_options(
        options,
        home=home,
        app_name=app_name,
        native_dirs=native_dirs,
        plugin_dirs=plugin_dirs,
        providers=providers,
        disabled_providers=disabled_providers,
        entry_points=entry_points,
    )
    return _scan(configured_paths, cwd, opts)


def _scan(
    configured_paths: Iterable[PathArg], cwd: PathArg | None, opts: DiscoveryOptions
) -> ScanResult:
    from customtools._loading._scan import scan_sources

    with load_step(STEP_DISCOVER) as step:
        scanned = scan_sources(
            tuple(configured_paths),
            _resolve_cwd(cwd),
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
    home: PathArg | None = None,
    app_name: str = "customtools",
    native_dirs: tuple[Sequence[PathArg], Sequence[PathArg]] | None = None,
    plugin_dirs: Sequence[PathArg] = (),
    providers: Sequence[ToolProvider] | None = None,
    disabled_providers: Collection[str] = (),
    entry_points: bool = True,
    trust: TrustPolicy = "prompt",
    trust_store: TrustStore | None = None,
    mcp_servers: McpToolProvider | None = None,
    project_mcp_servers: bool = False,
    isolation: ModuleIsolation | None = None,
    sandbox: bool = False,
    require_sandbox: bool = False,
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
        options: the discovery and trust options below as one
            :class:`~customtools.loading.DiscoveryOptions`; a keyword left at its default
            takes the value from it.
        strict: raise :class:`~customtools.LoadFailedError` listing every error (for CI).
        load_timeout: seconds an awaitable factory may take (``None``: no limit).
        pending_actions: share a pending-action store across loads (default: a new one).
        home: the home directory (default: ``Path.home()``).
        app_name: the host's app directory name: ``~/.<app_name>/tools``,
            ``<cwd>/.<app_name>/tools`` and the trust store ``~/.<app_name>/trust.json``.
        native_dirs: ``(user_dirs, project_dirs)`` replacing the native directories.
        plugin_dirs: plugin roots, in order (project scope when inside ``cwd``).
        providers: replaces the built-in directory providers.
        disabled_providers: provider ids to switch off (each reported).
        entry_points: whether to scan the ``customtools.tools`` entry point group.
        trust: ``"prompt"`` (default: trusted project sources load, the others are pending),
            ``"none"`` (no project code), ``"all"`` (everything, unasked) or a callable asked
            per pending source (return ``True`` to grant it in the store and load it).
        trust_store: the grants (default: ``TrustStore(home=home, app_name=app_name)``).
        mcp_servers: mounts the servers of ``.mcp.json`` files (plugin roots, then the
            project root) as tools named ``mcp__<server>__<tool>``, after every other
            source; for example an open ``customtools.mcp.McpMount``. ``None``: not read.
        project_mcp_servers: start the servers of the project's ``.mcp.json`` without
            asking the trust store (they run programs from the project: pass ``True`` only
            when the user trusts it; ``trust="all"`` implies it). Otherwise the file is a
            project source like any other: trusted by content, else pending.
        isolation: import each module in a worker process of this
            :class:`~customtools.isolation.IsolationPool`; the tools are then proxies
            (see ``docs/isolation.md``).
        sandbox: confine each isolated module to the permissions it declares, enforced by
            the kernel (needs ``isolation``; see ``docs/sandbox.md``).
        require_sandbox: refuse a module whose sandbox cannot be fully enforced here.

    Raises:
        LoadFailedError: ``strict`` is true and there were errors.
        ValueError: an option is not valid (``load_timeout``, ``trust``, ``app_name``), or
            ``sandbox`` without ``isolation``.
    """
    _check_timeout(load_timeout)
    _check_sandbox(sandbox or require_sandbox, isolation)
    opts = merge_options(
        options,
        home=home,
        app_name=app_name,
        native_dirs=native_dirs,
        plugin_dirs=plugin_dirs,
        providers=providers,
        disabled_providers=disabled_providers,
        entry_points=entry_points,
        trust=trust,
        trust_store=trust_store,
        project_mcp_servers=project_mcp_servers,
    )
    scanned = _scan(configured_paths, cwd, opts)
    builtins = tuple(builtin_tool_names)
    store = opts.trust_store
    if (
        store is None
        and opts.trust != "all"
        and (mcp_servers is not None or _has_project_code(scanned))
    ):
        from customtools._loading._trust_store import TrustStore

        store = TrustStore(home=opts.home, app_name=opts.app_name)
    result = await load_scan(
        scanned,
        cwd,
        builtins,
        strict=strict and mcp_servers is None,
        load_timeout=load_timeout,
        pending_actions=pending_actions,
        trust=opts.trust,
        trust_store=store,
        isolation=isolation,
        sandbox=sandbox,
        require_sandbox=require_sandbox,
        home=opts.home,
    )
    if mcp_servers is not None:
        from customtools._loading._mcpjson import load_mcp_json_tools

        held: list[PendingSource] = []
        mounted, errors, diagnostics = await load_mcp_json_tools(
            mcp_servers,
            cwd=_resolve_cwd(cwd),
            plugin_dirs=opts.plugin_dirs,
            taken={**dict.fromkeys(builtins), **result._by_name},
            trust_project=opts.project_mcp_servers or opts.trust == "all",
            trust=opts.trust,
            trust_store=store,
            pending=held,
        )
        result.pending_trust += tuple(held)
        result.tools += tuple(mounted)
        result.errors += tuple(errors)
        result.diagnostics += tuple(diagnostics)
        result._by_name.update((loaded.tool.name, loaded) for loaded in mounted)
        if strict:
            result.raise_for_errors()
    return result


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
) -> LoadResult:
    """Load exactly the given files and directories, nothing discovered.

    A ``.md``/``.json`` path is a ``"metadata-not-executable"`` error and a missing path a
    ``"not-found"`` error; everything else behaves as in :func:`discover_and_load`
    (``home`` is the directory ``~`` expands to; ``isolation`` runs the modules in worker
    processes, see ``docs/isolation.md``; ``sandbox`` and ``require_sandbox`` confine them
    to their declared permissions, see ``docs/sandbox.md``).

    Raises:
        LoadFailedError: ``strict`` is true and there were errors.
        ValueError: ``sandbox`` without ``isolation``.
    """
    from customtools._loading._scan import explicit_candidates

    _check_timeout(load_timeout)
    resolved_cwd = _resolve_cwd(cwd)
    scanned = explicit_candidates(list(paths), resolved_cwd, home=home)
    return await load_scan(
        scanned,
        resolved_cwd,
        builtin_tool_names,
        strict=strict,
        load_timeout=load_timeout,
        pending_actions=pending_actions,
        isolation=isolation,
        sandbox=sandbox,
        require_sandbox=require_sandbox,
        home=home,
    )
