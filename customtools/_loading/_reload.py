"""Reloading: load tools, then load them again when their files change, re-importing only
the modules whose files changed.

:class:`Reloader` keeps, per candidate (keyed by real path), a fingerprint of its files and
what importing it produced. A reload scans again (new and deleted files are seen), applies the
trust gate again (a project file's edit changes its hash, so it is pending again until the
user trusts the new content: trust is never silently carried over), re-imports only the
candidates whose fingerprint changed, and merges everything in the scan's precedence order
exactly as a fresh load would (name conflicts included).

A module that fails to reload keeps its previous version serving: its tools stay, its new
errors are reported, and a ``"reload-kept-previous"`` diagnostic says so. Private modules of
replaced versions are removed from ``sys.modules``; the objects are freed once nothing uses
them (a call still running on the old version keeps its tool alive until it returns).

:meth:`Reloader.watch` yields a new :class:`LoadResult` after each change on disk, with the
``watchfiles`` library (the ``reload`` extra), imported only there.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sys
from collections.abc import AsyncGenerator, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from customtools._loading._api import PendingActionStore, logger_name_for
from customtools._loading._import import (
    ImportOutcome,
    StdFds,
    load_candidate,
    logger_stem,
    module_name_for,
    new_generation,
)
from customtools._loading._loader import DEFAULT_LOAD_TIMEOUT, Collected, LoadResult, scan
from customtools._loading._paths import display_path
from customtools._loading._records import Candidate, Diagnostic, ScanResult, check_trust_policy
from customtools._observe import STEP_MODULE, STEP_TRUST, load_step

if TYPE_CHECKING:
    from customtools._loading._trust_store import TrustPolicy, TrustStore

__all__ = [
    "RELOAD_KEPT_PREVIOUS",
    "Reloader",
    "fingerprint",
    "forget_bytecode",
    "release_modules",
]

RELOAD_KEPT_PREVIOUS = "reload-kept-previous"
"""Diagnostic code: a module failed to reload and its previous version is still served."""

PathArg = str | os.PathLike[str]

_SKIPPED_DIRS = frozenset({"__pycache__", ".git", ".mypy_cache", ".pytest_cache", ".ruff_cache"})


def fingerprint(candidate: Candidate) -> tuple[Any, ...]:
    """What a candidate's code is made of: each file's relative path and content digest.

    Entry points are installed distributions: never re-imported (constant fingerprint).
    """
    if candidate.kind == "entry_point":
        return ("entry_point", candidate.entry_point)
    path = candidate.resolved_path
    if candidate.kind != "package":
        return (_digest(path),)
    files: list[tuple[str, str]] = []
    for directory, dirs, names in os.walk(path):
        dirs[:] = sorted(d for d in dirs if d not in _SKIPPED_DIRS and not d.startswith("."))
        for name in sorted(names):
            if name.startswith(".") or name.endswith((".pyc", ".pyo")):
                continue
            full = os.path.join(directory, name)
            files.append((os.path.relpath(full, path), _digest(full)))
    return tuple(files)


def _digest(path: str) -> str:
    try:
        with open(path, "rb") as handle:
            return hashlib.sha256(handle.read()).hexdigest()
    except OSError as exc:
        return f"unreadable: {type(exc).__name__}"


def forget_bytecode(candidate: Candidate) -> None:
    """Delete the cached bytecode of a changed candidate's source files.

    Python trusts a ``.pyc`` whose recorded modification time (whole seconds) and size match
    the source: an edit within the same second that keeps the size would import the old code.
    Python writes the file again on import.
    """
    if candidate.kind == "entry_point":
        return
    import importlib.util

    path = candidate.resolved_path
    if candidate.kind == "package":
        sources = [
            os.path.join(directory, name)
            for directory, dirs, names in os.walk(path)
            if "__pycache__" not in directory
            for name in names
            if name.endswith(".py")
        ]
    else:
        sources = [path]
    for source in sources:
        # No cache, or one we cannot remove (Python then checks it as usual).
        with contextlib.suppress(OSError, ValueError, NotImplementedError):
            os.remove(importlib.util.cache_from_source(source))


def release_modules(module_name: str) -> None:
    """Remove a private tool module and its submodules from ``sys.modules``."""
    sys.modules.pop(module_name, None)
    prefix = module_name + "."
    for name in [n for n in sys.modules if n.startswith(prefix)]:
        sys.modules.pop(name, None)


@dataclass(slots=True)
class _Version:
    fingerprint: tuple[Any, ...]
    outcome: ImportOutcome
    served: ImportOutcome  # the outcome whose tools are served (the last good one on failure)


class Reloader:
    """Loads tools as :func:`~customtools.discover_and_load` (or, with ``explicit=True``,
    :func:`~customtools.load_custom_tools`) does, then reloads only what changed.

    ``await reloader.load()`` returns a full :class:`LoadResult` each time; the first call
    imports everything, later calls only the modules whose files changed since.
    ``async for result in reloader.watch(): ...`` waits for changes on disk.

    Args:
        configured_paths: as for ``discover_and_load`` (or the paths of ``load_custom_tools``).
        cwd: the project directory.
        builtin_tool_names: names no tool may take.
        explicit: load exactly ``configured_paths``, nothing discovered.
        load_timeout: seconds an awaitable factory may take.
        trust: the trust policy (see ``docs/trust.md``); applied again at every reload.
        trust_store: the grants.
        pending_actions: one store shared by every load.
        **scan_options: the scan options of ``discover_and_load`` (``home``, ``app_name``,
            ``native_dirs``, ``plugin_dirs``, ``providers``, ``disabled_providers``,
            ``entry_points``).
    """

    def __init__(
        self,
        configured_paths: Iterable[PathArg] = (),
        cwd: PathArg | None = None,
        builtin_tool_names: Iterable[str] = (),
        *,
        explicit: bool = False,
        load_timeout: float | None = DEFAULT_LOAD_TIMEOUT,
        trust: TrustPolicy = "prompt",
        trust_store: TrustStore | None = None,
        pending_actions: PendingActionStore | None = None,
        **scan_options: Any,
    ) -> None:
        check_trust_policy(trust)
        self.configured_paths = tuple(configured_paths)
        self.cwd = os.path.abspath(os.fspath(cwd)) if cwd is not None else os.getcwd()
        self.builtin_tool_names = tuple(builtin_tool_names)
        self.explicit = explicit
        self.load_timeout = load_timeout
        self.trust = trust
        self.trust_store = trust_store
        self.pending_actions = (
            pending_actions if pending_actions is not None else PendingActionStore()
        )
        self.scan_options = scan_options
        self.result: LoadResult | None = None
        """The latest load's result."""
        self.reloads = 0
        """How many loads re-imported at least one module (the first load included)."""
        self._versions: dict[str, _Version] = {}

    def __repr__(self) -> str:
        return f"<Reloader {len(self._versions)} modules>"

    def _scan(self) -> ScanResult:
        if self.explicit:
            from customtools._loading._scan import explicit_candidates

            return explicit_candidates(
                list(self.configured_paths), self.cwd, home=self.scan_options.get("home")
            )
        return scan(self.configured_paths, self.cwd, **self.scan_options)

    async def load(self) -> LoadResult:
        """Scan, apply the trust gate, import what changed and return the whole result."""
        scanned = self._scan()
        result = LoadResult(
            metadata=scanned.metadata, pending_actions=self.pending_actions, cwd=self.cwd
        )
        gate_errors: Sequence[Any] = ()
        gate_diagnostics: Sequence[Any] = ()
        if self.trust != "all" and any(c.source.level == "project" for c in scanned.candidates):
            from customtools._loading._trust_store import TrustStore, apply_trust

            if self.trust_store is None:
                self.trust_store = TrustStore(
                    home=self.scan_options.get("home"),
                    app_name=self.scan_options.get("app_name", "customtools"),
                )
            policy = self.trust if isinstance(self.trust, str) else "callback"
            with load_step(STEP_TRUST, {"customtools.trust.policy": policy}) as step:
                gate = await apply_trust(scanned, self.trust, self.trust_store)
                step.set("customtools.trust.pending", len(gate.pending))
            scanned = gate.scanned
            result.pending_trust = tuple(gate.pending)
            gate_errors, gate_diagnostics = gate.errors, gate.diagnostics
        collected = Collected(self.builtin_tool_names, scanned)
        collected.errors.extend(gate_errors)
        collected.diagnostics.extend(gate_diagnostics)
        versions: dict[str, _Version] = {}
        generation: int | None = None
        std_fds: StdFds | None = None
        try:
            for candidate in scanned.candidates:
                key = candidate.resolved_path
                current = fingerprint(candidate)
                old = self._versions.get(key)
                if old is not None and old.fingerprint == current:
                    versions[key] = old
                    collected.add(candidate, old.served)
                    continue
                if generation is None:
                    generation = new_generation()
                    std_fds = StdFds()
                if self.result is not None:
                    forget_bytecode(candidate)
                stem = logger_stem(candidate)
                attributes: dict[str, str | int | float | bool] = {
                    "customtools.source.path": candidate.path,
                    "customtools.source.provider": candidate.source.provider,
                    "customtools.source.level": candidate.source.level,
                    "customtools.reload": old is not None,
                }
                with load_step(STEP_MODULE, attributes) as step:
                    outcome = await load_candidate(
                        candidate,
                        module_name_for(candidate, generation, stem=stem),
                        result._api_for(logger_name_for(stem)),
                        load_timeout=self.load_timeout,
                        std_fds=std_fds,
                    )
                    step.set("customtools.tools", len(outcome.tools))
                    if outcome.errors:
                        step.failed(outcome.errors[0].code)
                served = outcome
                if outcome.errors and not outcome.tools and old is not None and old.served.tools:
                    served = _keep_previous(candidate, old.served, outcome)
                versions[key] = _Version(current, outcome, served)
                collected.add(candidate, served)
        finally:
            if std_fds is not None:
                std_fds.close()
        self._release(versions)
        self._versions = versions
        if generation is not None:
            self.reloads += 1
        result.tools = tuple(collected.tools)
        result.errors = tuple(collected.errors)
        result.diagnostics = tuple(collected.diagnostics)
        result.module_names = tuple(collected.module_names)
        result._by_name = {loaded.tool.name: loaded for loaded in collected.tools}
        self.result = result
        return result

    def _release(self, versions: dict[str, _Version]) -> None:
        """Drop from ``sys.modules`` the private modules no version uses any more."""
        kept = {
            name
            for version in versions.values()
            for name in (version.served.module_name, version.outcome.module_name)
            if name is not None
        }
        for version in self._versions.values():
            for name in (version.served.module_name, version.outcome.module_name):
                if name is not None and name not in kept:
                    release_modules(name)
        for version in versions.values():
            failed = version.outcome.module_name
            if failed is not None and version.served is not version.outcome:
                release_modules(failed)  # a failed reload's module is never served

    def close(self) -> None:
        """Release every module this reloader imported (the tools stop being usable)."""
        self._release({})
        self._versions = {}

    def watch_paths(self) -> list[str]:
        """The existing directories whose changes can change the load."""
        found: set[str] = set()
        for path in self.configured_paths:
            full = os.path.join(self.cwd, os.path.expanduser(os.fspath(path)))
            found.add(full if os.path.isdir(full) else os.path.dirname(full))
        for key in self._versions:
            found.add(key if os.path.isdir(key) else os.path.dirname(key))
        if self.result is not None:
            for item in self.result.metadata:
                found.add(os.path.dirname(os.fspath(item.path)))
            for pending in self.result.pending_trust:
                root = getattr(pending, "root", None)
                if isinstance(root, str):
                    found.add(root)
            if self.result.pending_trust and self.trust_store is not None:
                # `customtools trust` writes the store: a grant loads the source at once.
                found.add(os.path.dirname(self.trust_store.path))
        return sorted(p for p in found if os.path.isdir(p))

    async def watch(
        self, *, debounce_ms: int = 50, step_ms: int = 20, stop_event: Any = None
    ) -> AsyncGenerator[LoadResult, None]:
        """Yield a new :class:`LoadResult` after each change of the watched files.

        Loads first when :meth:`load` was never called (that result is not yielded). Changes
        that leave the tools, errors and pending sources as they were are not yielded. To
        leave the loop early, close the iterator (trio warns about an async generator left
        open): ``async with contextlib.aclosing(reloader.watch()) as results: ...``.

        Args:
            debounce_ms: changes within this many milliseconds make one reload.
            step_ms: how often the watcher checks for changes.
            stop_event: an ``anyio.Event``; setting it ends the iteration.

        Raises:
            ImportError: ``watchfiles`` is not installed (``pip install 'customtools[reload]'``).
        """
        try:
            from watchfiles import awatch
        except ImportError as exc:
            raise ImportError(
                "watching tool files needs watchfiles, which is not installed:"
                " pip install 'customtools[reload]'"
            ) from exc
        if self.result is None:
            await self.load()
        while stop_event is None or not stop_event.is_set():
            paths = self.watch_paths()
            if not paths:
                return
            restart = False
            changes = awatch(
                *paths,
                debounce=debounce_ms,
                step=step_ms,
                stop_event=stop_event,
                # The watcher thread cannot be interrupted: cancelling watch() waits for it
                # to wake, at most this long (watchfiles' default is 5 s).
                rust_timeout=250,
                ignore_permission_denied=True,
            )
            async with contextlib.aclosing(changes):
                async for _changes in changes:
                    before = _summary(self.result)
                    result = await self.load()
                    if _summary(result) != before:
                        yield result
                    if self.watch_paths() != paths:
                        restart = True  # a directory appeared or went away: watch the new set
                        break
            if not restart:
                return


def _summary(result: LoadResult | None) -> Any:
    if result is None:
        return None
    # Module names are unique to the load that imported them: a re-imported module differs.
    return (
        tuple((loaded.resolved_path, loaded.tool.name) for loaded in result.tools),
        result.module_names,
        tuple((e.path, e.code, e.error) for e in result.errors),
        tuple(getattr(p, "root", None) for p in result.pending_trust),
    )


def _keep_previous(
    candidate: Candidate, previous: ImportOutcome, failed: ImportOutcome
) -> ImportOutcome:
    names = ", ".join(repr(tool.name) for tool in previous.tools)
    return ImportOutcome(
        module_name=previous.module_name,
        tools=list(previous.tools),
        errors=list(failed.errors),
        diagnostics=[
            *failed.diagnostics,
            Diagnostic(
                code=RELOAD_KEPT_PREVIOUS,
                message=f"{display_path(candidate.path)} failed to reload; its previous version"
                f" is still served ({names}): fix the error above and save again",
                path=candidate.path,
                source=candidate.source,
            ),
        ],
    )
