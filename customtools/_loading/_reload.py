"""Reloading: :class:`Reloader` loads tools, then loads them again when their files change,
re-importing only the candidates whose files changed.

It passes what it loaded before into the one load pipeline (a
:class:`~customtools._loading._loader.PreviousLoad`): per candidate (keyed by real path), a
fingerprint of its files and what importing it produced. Everything else is a fresh load: a
new scan, the trust gate again (an edited project file is pending until the user trusts its
new content), conflicts in precedence order. A module that fails to reload keeps its previous
version serving, with a ``"reload-kept-previous"`` diagnostic. Replaced versions leave
``sys.modules`` (a call still running keeps its tool alive until it returns); replaced
isolation workers stop once their running calls are over. :meth:`Reloader.watch` needs the
``watchfiles`` library (the ``reload`` extra), imported only there.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from collections.abc import AsyncGenerator, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from customtools._error_results import LoadCode
from customtools._errors import LoadFailedError
from customtools._loading._api import PendingActionStore
from customtools._loading._import import ImportOutcome, release_modules
from customtools._loading._loader import LoadResult, run_load, scan_with
from customtools._loading._options import DiscoveryOptions, door_options
from customtools._loading._paths import display_path
from customtools._loading._records import Candidate, Diagnostic, ScanResult
from customtools._loading._trust import fingerprint

__all__ = [
    "RELOAD_KEPT_PREVIOUS",
    "Reloader",
    "fingerprints",
    "forget_bytecode",
    "require_watchfiles",
]

RELOAD_KEPT_PREVIOUS = LoadCode.RELOAD_KEPT_PREVIOUS
"""Diagnostic code: a module failed to reload and its previous version is still served."""

PathArg = str | os.PathLike[str]


async def fingerprints(candidates: Sequence[Candidate]) -> dict[str, tuple[Any, ...]]:
    """:func:`fingerprint` of each candidate by real path, computed in a worker thread (a
    large package's walk must not hold the event loop)."""
    import anyio.to_thread

    def walk() -> dict[str, tuple[Any, ...]]:
        return {c.resolved_path: fingerprint(c) for c in candidates}

    return await anyio.to_thread.run_sync(walk)


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


@dataclass(slots=True)
class _Version:
    fingerprint: tuple[Any, ...]
    outcome: ImportOutcome
    served: ImportOutcome  # the outcome whose tools are served (the last good one on failure)


class _Generation:
    """One load's view of the versions before it (a :class:`PreviousLoad`): unchanged
    candidates are served again, changed ones imported and recorded in :attr:`versions`."""

    def __init__(
        self,
        before: dict[str, _Version],
        prints: dict[str, tuple[Any, ...]],
        *,
        first: bool,
    ) -> None:
        self.before = before
        self.prints = prints
        self.first = first
        self.versions: dict[str, _Version] = {}
        self.fingerprints: dict[str, tuple[Any, ...]] = {}
        self.imported = False

    def reuse(self, candidate: Candidate) -> ImportOutcome | None:
        key = candidate.resolved_path
        current = self.fingerprints[key] = self.prints[key]
        old = self.before.get(key)
        if old is not None and old.fingerprint == current:
            self.versions[key] = old
            return old.served
        if not self.first:
            forget_bytecode(candidate)
        return None

    def served(self, candidate: Candidate, outcome: ImportOutcome) -> ImportOutcome:
        key = candidate.resolved_path
        old = self.before.get(key)
        self.imported = True
        served = outcome
        if outcome.errors and not outcome.tools and old is not None and old.served.tools:
            served = _keep_previous(candidate, old.served, outcome)
        self.versions[key] = _Version(self.fingerprints[key], outcome, served)
        return served


class Reloader:
    """Loads tools as :func:`~customtools.discover_and_load` (or, with ``explicit=True``,
    :func:`~customtools.load_custom_tools`) does, then reloads only what changed.

    ``await reloader.load()`` returns a full :class:`LoadResult` each time; the first call
    imports everything, later calls only the modules whose files changed since (in this
    process, or in new isolation workers). ``async for result in reloader.watch(): ...``
    waits for changes on disk.

    Args:
        configured_paths: as for ``discover_and_load`` (or the paths of ``load_custom_tools``).
        cwd: the project directory.
        builtin_tool_names: names no tool may take.
        explicit: load exactly ``configured_paths``, nothing discovered.
        options: the discovery and trust options (a keyword passed explicitly wins).
        **keywords: every other keyword of ``discover_and_load`` (``trust``, ``load_timeout``,
            ``strict``, ``isolation``, ``sandbox``, ``mcp_servers``, ...). The trust policy
            is applied again at every reload; ``strict`` raises from the load that failed.

    Raises:
        TypeError: a keyword ``discover_and_load`` does not take.
        ValueError: an option is not valid.
    """

    def __init__(
        self,
        configured_paths: Iterable[PathArg] = (),
        cwd: PathArg | None = None,
        builtin_tool_names: Iterable[str] = (),
        *,
        explicit: bool = False,
        options: DiscoveryOptions | None = None,
        **keywords: Any,
    ) -> None:
        self.options, self.load_options = door_options("Reloader", options, keywords)
        self.configured_paths = tuple(configured_paths)
        self.cwd = os.path.abspath(os.fspath(cwd)) if cwd is not None else os.getcwd()
        self.builtin_tool_names = tuple(builtin_tool_names)
        self.explicit = explicit
        if self.load_options.pending_actions is None:  # one store shared by every load
            self.load_options = dataclasses.replace(
                self.load_options, pending_actions=PendingActionStore()
            )
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

            paths = list(self.configured_paths)
            return explicit_candidates(paths, self.cwd, home=self.options.home)
        return scan_with(self.configured_paths, self.cwd, self.options)

    async def load(self) -> LoadResult:
        """Scan, apply the trust gate, import what changed and return the whole result.

        Raises:
            LoadFailedError: ``strict`` and the load has errors (what it loaded is kept).
        """
        scanned = self._scan()
        prints = await fingerprints(scanned.candidates)  # off the event loop
        generation = _Generation(self._versions, prints, first=self.result is None)
        try:
            result = await run_load(
                scanned,
                cwd=self.cwd,
                builtin_tool_names=self.builtin_tool_names,
                options=self.options,
                load=self.load_options,
                previous=generation,
            )
        except LoadFailedError:
            await self._commit(generation)
            raise
        await self._commit(generation)
        self.result = result
        return result

    async def _commit(self, generation: _Generation) -> None:
        self.reloads += generation.imported
        before, self._versions = self._versions, generation.versions
        for stop in _release(before, generation.versions):
            await stop()

    def close(self) -> None:
        """Release every module this reloader imported (the tools stop being usable; isolation
        workers end with their pool)."""
        _release(self._versions, {})
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
            if self.result.pending_trust:
                # `customtools trust` writes the store: a grant loads the source at once.
                store = self.options.trust_store
                where = store.path if store is not None else _default_store(self.options)
                found.add(os.path.dirname(where))
        if self.load_options.mcp_servers is not None:  # where .mcp.json files are read
            roots = (self.cwd, *self.options.plugin_dirs)
            found.update(os.path.normpath(os.path.join(self.cwd, root)) for root in roots)
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
        require_watchfiles("watching tool files")
        from watchfiles import awatch

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
                    previous = self.result  # alive until compared: its tools' ids stay unique
                    result = await self.load()
                    if _summary(result) != _summary(previous):
                        yield result
                    if self.watch_paths() != paths:
                        restart = True  # a directory appeared or went away: watch the new set
                        break
            if not restart:
                return


def require_watchfiles(what: str) -> None:
    """Raise ``ImportError`` (``what`` needs it, and how to install it) without watchfiles."""
    import importlib.util

    if importlib.util.find_spec("watchfiles") is None:
        raise ImportError(
            f"{what} needs watchfiles, which is not installed: pip install 'customtools[reload]'"
        )


def _default_store(options: DiscoveryOptions) -> str:
    from customtools._loading._trust_store import default_store_path

    return default_store_path(home=options.home, app_name=options.app_name)


def _summary(result: LoadResult | None) -> Any:
    if result is None:
        return None
    # A re-imported module (here or in a new isolation worker) makes new tool objects.
    return (
        tuple((loaded.resolved_path, loaded.name, id(loaded.tool)) for loaded in result.tools),
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
        cleanup=list(previous.cleanup),
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


def _release(before: dict[str, _Version], after: dict[str, _Version]) -> list[Any]:
    """Drop the private modules no version uses any more; return the ``cleanup`` callables
    (isolation workers to stop) no version uses any more."""
    kept = [outcome for v in after.values() for outcome in (v.served, v.outcome)]
    names = {outcome.module_name for outcome in kept}
    still = {id(stop) for outcome in kept for stop in outcome.cleanup}
    stops: dict[int, Any] = {}
    for outcome in (o for v in before.values() for o in (v.served, v.outcome)):
        if outcome.module_name is not None and outcome.module_name not in names:
            release_modules(outcome.module_name)
        stops.update((id(stop), stop) for stop in outcome.cleanup if id(stop) not in still)
    for version in after.values():
        failed = version.outcome.module_name
        if failed is not None and version.served is not version.outcome:
            release_modules(failed)  # a failed reload's module is never served
    return list(stops.values())
