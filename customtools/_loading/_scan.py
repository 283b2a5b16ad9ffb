"""The directory scan and ``scan_sources``: every source, in order, deduplicated, no tool code run.

Scan depth is explicit. A tools directory contributes, sorted by name:

- ``<name>.py`` files - candidates of kind ``"module"``;
- ``<name>/`` directories holding ``__init__.py`` - candidates of kind ``"package"``;
- ``<name>.md`` / ``<name>.json`` files - :class:`MetadataFile` records, never candidates;
- nothing deeper. Names starting with ``.`` or ``_`` (hence ``__pycache__``) are skipped
  silently; other files are skipped with a ``"skipped-file"`` diagnostic and directories
  without ``__init__.py`` with a ``"skipped-directory"`` diagnostic.

Symlinked entries are followed; a dangling or looping link is a ``"broken-symlink"``
diagnostic. Two paths are the same file when they have the same device and inode (this covers
symlinks, hard links and differently-cased spellings on case-insensitive volumes; where a
platform reports no inode the key is the case-normalised real path). The first occurrence keeps
its source; every later one is a ``"duplicate-path"`` diagnostic naming both. A directory
reached twice is scanned once (which is also the cycle guard).

Scope: candidates found through a project-level location get ``Candidate.root`` (the location,
or the plugin root it belongs to), the unit the trust gate hashes; a plugin root lying inside
``cwd`` is project level (see ``docs/trust.md``).
"""

from __future__ import annotations

import dataclasses
import os
import stat
from collections.abc import Collection, Hashable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from customtools._error_results import LoadCode
from customtools._format import describe_exception
from customtools._loading._entrypoints import ENTRY_POINTS_ID, EntryPointsProvider
from customtools._loading._frontmatter import read_metadata_file
from customtools._loading._paths import display_path, is_inside, resolve_path
from customtools._loading._plugins import PLUGIN_ID, PluginRootsProvider
from customtools._loading._providers import (
    CLAUDE_ID,
    CLAUDE_PLUGINS_ID,
    CODEX_ID,
    CONFIGURED_ID,
    NATIVE_ID,
    ConfiguredPathsProvider,
    ProviderItem,
    ScanContext,
    ToolLocation,
    ToolProvider,
    default_providers,
)
from customtools._loading._records import (
    Candidate,
    CandidateKind,
    Diagnostic,
    LoadError,
    MetadataFile,
    ScanResult,
    ToolSource,
)

__all__ = ["BUILTIN_PROVIDER_IDS", "Scanner", "explicit_candidates", "scan_sources"]

_METADATA_SUFFIXES = frozenset({".md", ".json"})

BUILTIN_PROVIDER_IDS = frozenset(
    {NATIVE_ID, CLAUDE_ID, CLAUDE_PLUGINS_ID, CODEX_ID, PLUGIN_ID, ENTRY_POINTS_ID, CONFIGURED_ID}
)
"""Ids of the built-in providers, in precedence order of their sources (see docs/discovery.md)."""


def _identity(st: os.stat_result, real: str) -> Hashable:
    if st.st_ino:
        return (st.st_dev, st.st_ino)
    return os.path.normcase(real)  # platforms without inode numbers


def _new_candidate(path: str, real: str, kind: CandidateKind, source: ToolSource) -> Candidate:
    return Candidate(path=path, resolved_path=real, kind=kind, source=source)


def _strerror(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__


class Scanner:
    """Accumulates one scan: candidates, metadata, diagnostics and errors, deduplicated.

    Feed it provider items in precedence order with :meth:`add`, then call :meth:`result`.
    """

    def __init__(self) -> None:
        self._candidates: list[Candidate] = []
        self._metadata: list[MetadataFile] = []
        self._diagnostics: list[Diagnostic] = []
        self._errors: list[LoadError] = []
        self._seen: dict[Hashable, Candidate] = {}
        self._seen_metadata: set[Hashable] = set()
        self._seen_dirs: dict[Hashable, tuple[str, ToolSource]] = {}

    def result(self) -> ScanResult:
        """Everything found so far."""
        return ScanResult(
            candidates=tuple(self._candidates),
            metadata=tuple(self._metadata),
            diagnostics=tuple(self._diagnostics),
            errors=tuple(self._errors),
        )

    def add(self, item: ProviderItem) -> None:
        """Take one item a provider yielded."""
        if isinstance(item, ToolLocation):
            start = len(self._candidates)
            if item.explicit:
                self.add_explicit(item)
            else:
                self.scan_directory(
                    item.path,
                    item.source,
                    metadata_root=item.metadata_root,
                    confine_to=item.confine_to,
                )
            if item.source.level == "project" and len(self._candidates) > start:
                root = item.root if item.root is not None else os.path.abspath(item.path)
                self._candidates[start:] = [
                    dataclasses.replace(candidate, root=root)
                    for candidate in self._candidates[start:]
                ]
        elif isinstance(item, Candidate):
            self._add_custom_candidate(item)
        elif isinstance(item, Diagnostic):
            self._diagnostics.append(item)
        elif isinstance(item, LoadError):
            self._errors.append(item)
        else:
            raise TypeError(
                f"a tool provider yielded {type(item).__name__}; expected ToolLocation, "
                "Candidate, Diagnostic or LoadError"
            )

    def diagnose(
        self, code: str, message: str, path: str | None, source: ToolSource | None
    ) -> None:
        """Record a diagnostic."""
        self._diagnostics.append(Diagnostic(code=code, message=message, path=path, source=source))

    def error(self, error: LoadError) -> None:
        """Record a load error."""
        self._errors.append(error)

    # -- candidates -------------------------------------------------------------------------

    def _add_candidate(self, key: Hashable, candidate: Candidate) -> None:
        first = self._seen.get(key)
        if first is None:
            self._seen[key] = candidate
            self._candidates.append(candidate)
            return
        self.diagnose(
            LoadCode.DUPLICATE_PATH,
            f"{display_path(candidate.path)} ({candidate.source.provider}) is the same file as "
            f"{display_path(first.path)} ({first.source.provider}); it is loaded once, from "
            "the first",
            candidate.path,
            candidate.source,
        )

    def _add_custom_candidate(self, candidate: Candidate) -> None:
        key: Hashable = candidate.resolved_path
        if candidate.kind != "entry_point":
            try:
                key = _identity(os.stat(candidate.resolved_path), candidate.resolved_path)
            except (OSError, ValueError):
                key = os.path.normcase(candidate.resolved_path)
        self._add_candidate(key, candidate)

    def _add_metadata(
        self, key: Hashable, path: str, real: str, source: ToolSource, root: str | None
    ) -> None:
        if key in self._seen_metadata:
            return  # the same metadata file reached twice: report it once
        self._seen_metadata.add(key)
        if root is not None and not is_inside(real, root):
            self.diagnose(
                LoadCode.METADATA_OUTSIDE_ROOT,
                f"metadata file {display_path(path)} leads outside {display_path(root)} (to "
                f"{display_path(real)}) and was not read; metadata must be a file of the "
                "project or plugin itself, not a link to elsewhere",
                path,
                source,
            )
            return
        record = read_metadata_file(path, resolved_path=real, source=source)
        if isinstance(record, Diagnostic):
            self._diagnostics.append(record)
        else:
            self._metadata.append(record)

    # -- directories ------------------------------------------------------------------------

    def _escapes(
        self, what: str, path: str, real: str, confine_to: str | None, source: ToolSource
    ) -> bool:
        """Record a ``"path-outside-plugin"`` error when ``real`` is outside ``confine_to``."""
        if confine_to is None or is_inside(real, confine_to):
            return False
        self.error(
            LoadError(
                path=path,
                error=f"{what} {display_path(path)} leads outside the plugin root "
                f"{display_path(confine_to)} (to {display_path(real)}) and was not loaded; a "
                "plugin's files must stay inside the plugin (no symlinks out)",
                source=source,
                resolved_path=real,
                code=LoadCode.PATH_OUTSIDE_PLUGIN,
            )
        )
        return True

    def _package_escapes(
        self, path: str, real: str, confine_to: str | None, source: ToolSource
    ) -> bool:
        if confine_to is None:
            return False
        if self._escapes("tool package", path, real, confine_to, source):
            return True
        init = os.path.join(path, "__init__.py")
        return self._escapes("package file", init, os.path.realpath(init), confine_to, source)

    def scan_directory(
        self,
        path: str,
        source: ToolSource,
        *,
        explicit: bool = False,
        metadata_root: str | None = None,
        confine_to: str | None = None,
    ) -> None:
        """Scan one tools directory, one level deep (see the module docstring).

        A missing directory contributes nothing; an unreadable one is a diagnostic
        (``"unreadable-directory"``), or a ``LoadError`` when the path was explicit.
        ``metadata_root`` and ``confine_to`` are the limits of :class:`ToolLocation`.
        """
        path = os.path.abspath(path)
        try:
            dir_stat = os.stat(path)
            with os.scandir(path) as iterator:
                entries = sorted(iterator, key=lambda entry: entry.name)
        except (FileNotFoundError, NotADirectoryError):
            return
        except OSError as exc:
            message = (
                f"tools directory {display_path(path)} cannot be read ({_strerror(exc)}); "
                "fix its permissions or remove it"
            )
            if explicit:
                self.error(
                    LoadError(path=path, error=message, source=source, code=LoadCode.UNREADABLE)
                )
            else:
                self.diagnose(LoadCode.UNREADABLE_DIRECTORY, message, path, source)
            return
        real_dir = os.path.realpath(path)
        if self._escapes("tools directory", path, real_dir, confine_to, source):
            return
        dir_key = _identity(dir_stat, real_dir)
        first_dir = self._seen_dirs.get(dir_key)
        if first_dir is not None:
            if first_dir[1].provider != source.provider:
                self.diagnose(
                    LoadCode.DUPLICATE_PATH,
                    f"tools directory {display_path(path)} ({source.provider}) is the same "
                    f"directory as {display_path(first_dir[0])} ({first_dir[1].provider}); it is "
                    "scanned once, for the first",
                    path,
                    source,
                )
            return
        self._seen_dirs[dir_key] = (path, source)
        device = dir_stat.st_dev
        # Hot path: a plain (non-symlink) ``.py`` file; everything else goes to _scan_entry.
        # The real path is the real directory plus the name, so no per-file realpath or join.
        same = real_dir == path
        prefix = real_dir if real_dir.endswith(os.sep) else real_dir + os.sep
        seen = self._seen
        candidates = self._candidates
        for entry in entries:
            name = entry.name
            if name[0] in "._":
                continue  # hidden, private, __pycache__
            if name.endswith(".py") and not entry.is_symlink() and entry.is_file():
                real = entry.path if same else prefix + name
                inode = entry.inode()
                key: Hashable = (device, inode) if inode else os.path.normcase(real)
                if key not in seen:
                    candidate = _new_candidate(entry.path, real, "module", source)
                    seen[key] = candidate
                    candidates.append(candidate)
                    continue
            self._scan_entry(
                entry, name, prefix, device, source, confine_to or metadata_root, confine_to
            )

    def _scan_entry(
        self,
        entry: os.DirEntry[str],
        name: str,
        prefix: str,
        device: int,
        source: ToolSource,
        metadata_root: str | None,
        confine_to: str | None,
    ) -> None:
        try:
            link = entry.is_symlink()
            if link:
                st = entry.stat()
                real = os.path.realpath(entry.path)
                key = _identity(st, real)
                is_dir = stat.S_ISDIR(st.st_mode)
                is_file = stat.S_ISREG(st.st_mode)
            else:
                is_dir = entry.is_dir(follow_symlinks=False)
                is_file = not is_dir and entry.is_file(follow_symlinks=False)
                real = prefix + name
                inode = entry.inode()
                key = (device, inode) if inode else os.path.normcase(real)
        except OSError as exc:
            self.diagnose(
                LoadCode.BROKEN_SYMLINK,
                f"{display_path(entry.path)} was skipped: the link cannot be followed "
                f"({_strerror(exc)}); fix or remove it",
                entry.path,
                source,
            )
            return
        if is_file:
            suffix = os.path.splitext(name)[1]
            if suffix == ".py":
                if not self._escapes("tool module", entry.path, real, confine_to, source):
                    self._add_candidate(key, _new_candidate(entry.path, real, "module", source))
            elif suffix.lower() in _METADATA_SUFFIXES:
                self._add_metadata(key, entry.path, real, source, metadata_root)
            else:
                self.diagnose(
                    LoadCode.SKIPPED_FILE,
                    f"{display_path(entry.path)} was skipped: only .py files and packages are "
                    "tools (.md and .json are metadata)",
                    entry.path,
                    source,
                )
        elif is_dir:
            if os.path.isfile(os.path.join(entry.path, "__init__.py")):
                if not self._package_escapes(entry.path, real, confine_to, source):
                    self._add_candidate(key, _new_candidate(entry.path, real, "package", source))
            else:
                self.diagnose(
                    LoadCode.SKIPPED_DIRECTORY,
                    f"{display_path(entry.path)} was skipped: a directory is a tool only when "
                    "it holds __init__.py (tools directories are not searched deeper)",
                    entry.path,
                    source,
                )
        else:
            self.diagnose(
                LoadCode.SKIPPED_FILE,
                f"{display_path(entry.path)} was skipped: not a regular file or directory",
                entry.path,
                source,
            )

    # -- explicit paths ---------------------------------------------------------------------

    def add_explicit(self, location: ToolLocation) -> None:
        """Take a path that must exist: a ``.py`` file, a package or a tools directory.

        A directory holding ``__init__.py`` is one package tool; any other directory is
        scanned as a tools directory; ``__init__.py`` itself stands for its package.
        """
        path, source = os.path.abspath(location.path), location.source
        given = location.given if location.given is not None else path
        if location.origin is not None:
            what = f"tool path {given!r} declared by {display_path(location.origin)}"
            fix = "fix the declaration"
        else:
            what = f"configured tool path {display_path(given)!r}"
            fix = "fix the path or remove it from the configuration"
        try:
            st = os.stat(path)
        except (FileNotFoundError, NotADirectoryError):
            self.error(
                LoadError(
                    path=path,
                    error=f"{what} does not exist (resolved to {display_path(path)}); {fix}",
                    source=source,
                    code=LoadCode.NOT_FOUND,
                )
            )
            return
        except OSError as exc:
            self.error(
                LoadError(
                    path=path,
                    error=f"{what} cannot be read ({_strerror(exc)}); {fix}",
                    source=source,
                    code=LoadCode.UNREADABLE,
                )
            )
            return
        real = os.path.realpath(path)
        confine_to = location.confine_to
        if stat.S_ISDIR(st.st_mode):
            if os.path.isfile(os.path.join(path, "__init__.py")):
                if self._package_escapes(path, real, confine_to, source):
                    return
                candidate = _new_candidate(path, real, "package", source)
                self._add_candidate(_identity(st, real), candidate)
            else:
                self.scan_directory(
                    path,
                    source,
                    explicit=True,
                    metadata_root=confine_to or location.metadata_root,
                    confine_to=confine_to,
                )
            return
        suffix = os.path.splitext(path)[1]
        if stat.S_ISREG(st.st_mode) and suffix == ".py":
            if self._escapes("tool module", path, real, confine_to, source):
                return
            if os.path.basename(path) == "__init__.py":
                package = os.path.dirname(path)
                package_real = os.path.realpath(package)
                key = _identity(os.stat(package), package_real)
                self._add_candidate(key, _new_candidate(package, package_real, "package", source))
            else:
                self._add_candidate(
                    _identity(st, real), _new_candidate(path, real, "module", source)
                )
            return
        if suffix.lower() in _METADATA_SUFFIXES:
            self.error(
                LoadError(
                    path=path,
                    error=f"{what} is a {suffix.lower()} metadata file, not an executable tool; "
                    "point at the .py module or package it describes",
                    source=source,
                    resolved_path=real,
                    code=LoadCode.METADATA_NOT_EXECUTABLE,
                )
            )
            return
        self.error(
            LoadError(
                path=path,
                error=f"{what} is not a Python tool (expected a .py file, a package directory "
                "or a tools directory)",
                source=source,
                resolved_path=real,
                code=LoadCode.NOT_A_MODULE,
            )
        )

    # -- providers --------------------------------------------------------------------------

    def run_provider(self, provider: ToolProvider, context: ScanContext) -> None:
        """Run one provider; an exception it raises becomes a ``"provider-error"`` LoadError."""
        try:
            for item in provider.locate(context):
                self.add(item)
        except Exception as exc:
            self.error(
                LoadError(
                    path=f"provider:{provider.id}",
                    error=f"tool provider {provider.id!r} ({provider.display_name}) failed: "
                    f"{describe_exception(exc)}; the tools it found before failing are kept",
                    code=LoadCode.PROVIDER_ERROR,
                )
            )


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


@dataclass(frozen=True, slots=True, kw_only=True)
class _ScopedPluginRoots:
    """Plugin roots with their scope: a root that lies inside ``cwd``, as given or by its real
    path, is project level (it came with the checkout; a symlink inside the project that
    leads elsewhere is still the project's choice), every other root user level."""

    roots: tuple[str | os.PathLike[str], ...]
    id: str = PLUGIN_ID
    display_name: str = "Plugin"

    def locate(self, context: ScanContext) -> Iterable[ProviderItem]:
        cwd_abs = os.path.abspath(context.cwd)
        cwd_real = os.path.realpath(context.cwd)
        for raw in self.roots:
            items = PluginRootsProvider(roots=(raw,)).locate(context)
            try:
                root = resolve_path(raw, context.cwd, home=context.home)
            except (ValueError, TypeError):
                yield from items  # reported by the plugin provider
                continue
            if not (_inside(root, cwd_abs) or _inside(os.path.realpath(root), cwd_real)):
                yield from items
                continue
            for item in items:
                if isinstance(item, ToolLocation):
                    source = dataclasses.replace(item.source, level="project")
                    yield dataclasses.replace(item, source=source, root=root)
                elif isinstance(item, LoadError) and item.source is not None:
                    source = dataclasses.replace(item.source, level="project")
                    yield dataclasses.replace(item, source=source)
                else:
                    yield item


def _context(
    cwd: str | os.PathLike[str] | None, home: str | os.PathLike[str] | None
) -> ScanContext:
    return ScanContext(
        cwd=os.path.abspath(os.fspath(cwd)) if cwd is not None else os.getcwd(),
        home=os.path.abspath(os.fspath(home)) if home is not None else str(Path.home()),
    )


def explicit_candidates(
    paths: Iterable[str | os.PathLike[str]],
    cwd: str | os.PathLike[str] | None = None,
    *,
    home: str | os.PathLike[str] | None = None,
) -> ScanResult:
    """Turn explicitly given paths (files or directories) into a scan result.

    Each path is resolved (``~``, relative to ``cwd``, ``file://``), then: a ``.py`` file or a
    package directory is one candidate; another directory is scanned like a tools directory;
    a ``.md``/``.json`` file is a ``LoadError`` (``"metadata-not-executable"``); a missing
    path is a ``LoadError`` (``"not-found"``). Sources have provider ``"configured"`` and level
    ``"user"``. No tool code runs.

    Args:
        paths: the paths, in precedence order.
        cwd: the directory relative paths are resolved from (default: the current directory).
        home: the home directory for ``~`` (default: the user's home).
    """
    scanner = Scanner()
    scanner.run_provider(ConfiguredPathsProvider(paths=tuple(paths)), _context(cwd, home))
    return scanner.result()


def scan_sources(
    configured_paths: Sequence[str | os.PathLike[str]] = (),
    cwd: str | os.PathLike[str] | None = None,
    *,
    home: str | os.PathLike[str] | None = None,
    app_name: str = "customtools",
    native_dirs: tuple[Sequence[str | os.PathLike[str]], Sequence[str | os.PathLike[str]]]
    | None = None,
    plugin_dirs: Sequence[str | os.PathLike[str]] = (),
    providers: Sequence[ToolProvider] | None = None,
    disabled_providers: Collection[str] = (),
    entry_points: bool = True,
) -> ScanResult:
    """Find every tool module without running any tool code.

    Order (the precedence, first claimant wins later name conflicts): ``providers`` (by
    default ``native``, ``claude``, ``claude-plugins``, ``codex``, each user level before
    project level), then ``plugin_dirs`` (provider ``"plugin"``), then installed distributions
    (``"entry-points"``), then ``configured_paths`` (``"configured"``).

    Args:
        configured_paths: files or directories the caller configured.
        cwd: the project directory (default: the current directory).
        home: the home directory (default: ``Path.home()``, which honours ``$HOME``).
        app_name: the host's name: native directories ``~/.<app_name>/tools`` and
            ``<cwd>/.<app_name>/tools``. Ignored when ``providers`` is given.
        native_dirs: ``(user_dirs, project_dirs)`` replacing the native directories. Ignored
            when ``providers`` is given.
        plugin_dirs: plugin roots, in order.
        providers: replaces the built-in directory providers (see ``default_providers``).
        disabled_providers: provider ids to switch off; each is reported as a diagnostic.
        entry_points: whether to scan the ``customtools.tools`` entry point group.

    Returns:
        A :class:`ScanResult`; never raises for a bad file, directory, manifest or registry.
    """
    context = _context(cwd, home)
    chain: list[ToolProvider] = list(
        providers
        if providers is not None
        else default_providers(app_name=app_name, native_dirs=native_dirs)
    )
    if plugin_dirs:
        chain.append(_ScopedPluginRoots(roots=tuple(plugin_dirs)))
    if entry_points:
        chain.append(EntryPointsProvider())
    if configured_paths:
        chain.append(ConfiguredPathsProvider(paths=tuple(configured_paths)))
    disabled = set(disabled_providers)
    known = {provider.id for provider in chain} | BUILTIN_PROVIDER_IDS
    scanner = Scanner()
    for provider_id in sorted(disabled - known):
        scanner.diagnose(
            LoadCode.UNKNOWN_PROVIDER,
            f"disabled_providers names {provider_id!r}, which is not a provider of this scan "
            f"(known: {', '.join(sorted(known))}); check the spelling",
            None,
            None,
        )
    for provider in chain:
        if provider.id in disabled:
            scanner.diagnose(
                LoadCode.PROVIDER_DISABLED,
                f"tool provider {provider.id!r} ({provider.display_name}) is switched off by "
                "the host; its tools were not scanned",
                None,
                None,
            )
            continue
        scanner.run_provider(provider, context)
    return scanner.result()
