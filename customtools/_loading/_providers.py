"""Tool providers: the extension point that says where tools live.

A provider is anything with an ``id``, a ``display_name`` and a ``locate(context)`` method
that yields what it found, without running any tool code:

- :class:`ToolLocation` - a directory to scan (depth one) or an explicit file/package path;
- :class:`~customtools._loading._records.Candidate` - a ready candidate (entry points do this);
- :class:`~customtools._loading._records.Diagnostic` / ``LoadError`` - something to report.

The scan (``scan_sources``) runs providers in order, dedupes on the real path and applies the
directory rules. The built-in directory providers are :class:`DirectoryProvider` instances
(``native``, ``claude``, ``codex``); the Claude marketplace cache is
:class:`ClaudePluginsProvider`. A host adds its own provider by passing it in ``providers=``
and switches any off by id with ``disabled_providers=``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeAlias, runtime_checkable

from customtools._error_results import LoadCode
from customtools._loading._files import FileRuleError, load_json, read_text_file
from customtools._loading._paths import display_path, is_inside, resolve_path
from customtools._loading._records import Candidate, Diagnostic, Level, LoadError, ToolSource

__all__ = [
    "CLAUDE_ID",
    "CLAUDE_PLUGINS_ID",
    "CODEX_ID",
    "CONFIGURED_ID",
    "NATIVE_ID",
    "ClaudePluginsProvider",
    "ConfiguredPathsProvider",
    "DirectoryProvider",
    "ProviderItem",
    "ScanContext",
    "ToolLocation",
    "ToolProvider",
    "claude_provider",
    "codex_provider",
    "default_providers",
    "native_provider",
]

NATIVE_ID = "native"
CLAUDE_ID = "claude"
CODEX_ID = "codex"
CONFIGURED_ID = "configured"


@dataclass(frozen=True, slots=True, kw_only=True)
class ScanContext:
    """What a provider gets to decide where to look.

    Args:
        cwd: the absolute working directory (project level lives under it).
        home: the absolute home directory (user level lives under it).
    """

    cwd: str
    home: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolLocation:
    """A place a provider points the scan at.

    Args:
        path: absolute path.
        source: the source every candidate found there gets.
        explicit: ``False`` for a tools directory (scanned one level deep; missing is fine);
            ``True`` for a path that must exist and is itself a tool (a ``.py`` file or a
            package directory) or a tools directory. A missing explicit path is a
            ``LoadError`` with code ``"not-found"``.
        given: the path as the user or manifest wrote it, for messages.
        origin: the file that declared the path (a plugin manifest), for messages.
        metadata_root: a real, absolute directory that metadata files found here must
            resolve inside; one that leads elsewhere (a symlink out of the project) is not
            read (diagnostic ``"metadata-outside-root"``). Project-level directories use the
            project directory.
        confine_to: a real, absolute directory nothing found here may resolve outside (a
            plugin root): the directory itself, modules, packages and their ``__init__.py``
            that lead elsewhere are ``LoadError`` records with code
            ``"path-outside-plugin"``; metadata is treated as with ``metadata_root``.
        root: for a project-scope location, the source root it belongs to (a plugin root for
            its ``tools/`` and declared paths); default: the location's own path. The trust
            gate groups, hashes and grants project code per root.
    """

    path: str
    source: ToolSource
    explicit: bool = False
    given: str | None = None
    origin: str | None = None
    metadata_root: str | None = None
    confine_to: str | None = None
    root: str | None = None


ProviderItem: TypeAlias = "ToolLocation | Candidate | Diagnostic | LoadError"


@runtime_checkable
class ToolProvider(Protocol):
    """Where tools live: the extension point of discovery.

    ``locate`` must not import or run tool code; it only says where to look. It may raise:
    the scan turns an exception into a ``LoadError`` with code ``"provider-error"`` and goes
    on with the next provider.
    """

    @property
    def id(self) -> str:
        """Stable id, used in ``ToolSource.provider`` and in ``disabled_providers``."""
        ...

    @property
    def display_name(self) -> str:
        """Name for people, used in ``ToolSource.provider_name``."""
        ...

    def locate(self, context: ScanContext) -> Iterable[ProviderItem]:
        """Yield locations, candidates, diagnostics and errors, in precedence order."""
        ...


@dataclass(frozen=True, slots=True, kw_only=True)
class DirectoryProvider:
    """A provider made of tools directories at user level and project level.

    User directories come first, then project directories, so a checked-out repository can
    never take a name from the user's own tools.

    Args:
        id: the provider id.
        display_name: the name for people.
        user_dirs: directories under the home directory; ``~`` is expanded and a relative path
            is taken relative to the home directory.
        project_dirs: directories of the project; ``~`` is expanded and a relative path is
            taken relative to ``cwd``.
    """

    id: str
    display_name: str
    user_dirs: Sequence[str | os.PathLike[str]] = ()
    project_dirs: Sequence[str | os.PathLike[str]] = ()

    def locate(self, context: ScanContext) -> Iterable[ProviderItem]:
        """Yield every user directory, then every project directory (scanned one level deep)."""
        levels: tuple[tuple[Level, Sequence[str | os.PathLike[str]], str], ...] = (
            ("user", self.user_dirs, context.home),
            ("project", self.project_dirs, context.cwd),
        )
        project_root = os.path.realpath(context.cwd)
        for level, dirs, base in levels:
            source = ToolSource(provider=self.id, provider_name=self.display_name, level=level)
            root = project_root if level == "project" else None
            for directory in dirs:
                path = resolve_path(directory, base, home=context.home)
                yield ToolLocation(path=path, source=source, metadata_root=root)


def native_provider(
    app_name: str = "customtools",
    *,
    user_dirs: Sequence[str | os.PathLike[str]] | None = None,
    project_dirs: Sequence[str | os.PathLike[str]] | None = None,
) -> DirectoryProvider:
    """The host's own tools directories (provider id ``"native"``).

    By default ``~/.<app_name>/tools`` (user) and ``<cwd>/.<app_name>/tools`` (project).

    Args:
        app_name: the host application's name; also the provider's display name.
        user_dirs: replace the user directories (for example ``["~/.xcsh/agent/tools"]``).
        project_dirs: replace the project directories (for example ``[".xcsh/tools"]``).

    Raises:
        ValueError: ``app_name`` is empty or contains a path separator.
    """
    if not app_name or app_name.strip() != app_name or any(s in app_name for s in "/\\\x00"):
        raise ValueError(
            f"app_name {app_name!r} must be a plain directory name such as 'customtools' "
            "(no slashes, no surrounding spaces); pass native_dirs= for other layouts"
        )
    return DirectoryProvider(
        id=NATIVE_ID,
        display_name=app_name,
        user_dirs=tuple(user_dirs) if user_dirs is not None else (f"~/.{app_name}/tools",),
        project_dirs=(tuple(project_dirs) if project_dirs is not None else (f".{app_name}/tools",)),
    )


def claude_provider() -> DirectoryProvider:
    """``~/.claude/tools`` (user) and ``<cwd>/.claude/tools`` (project), id ``"claude"``."""
    return DirectoryProvider(
        id=CLAUDE_ID,
        display_name="Claude Code",
        user_dirs=("~/.claude/tools",),
        project_dirs=(".claude/tools",),
    )


def codex_provider() -> DirectoryProvider:
    """``~/.codex/tools`` (user) and ``<cwd>/.codex/tools`` (project), id ``"codex"``."""
    return DirectoryProvider(
        id=CODEX_ID,
        display_name="OpenAI Codex",
        user_dirs=("~/.codex/tools",),
        project_dirs=(".codex/tools",),
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class ConfiguredPathsProvider:
    """Paths the caller configured explicitly (files or directories), id ``"configured"``.

    Each path goes through ``resolve_path`` (``~``, relative to ``cwd``, ``file://``). A
    path that cannot be resolved is a ``LoadError`` with code ``"invalid-path"``.

    Args:
        paths: the configured paths, in order.
        id: the provider id (``"configured"``).
        display_name: the name for people.
        level: the level given to the sources (``"user"``: the caller chose them).
    """

    paths: Sequence[str | os.PathLike[str]] = ()
    id: str = CONFIGURED_ID
    display_name: str = "Configured path"
    level: Level = "user"

    def locate(self, context: ScanContext) -> Iterable[ProviderItem]:
        """Yield one explicit location per configured path."""
        source = ToolSource(provider=self.id, provider_name=self.display_name, level=self.level)
        for raw in self.paths:
            given = os.fspath(raw)
            try:
                path = resolve_path(given, context.cwd, home=context.home)
            except (ValueError, TypeError) as exc:
                yield LoadError(
                    path=str(given),
                    error=f"configured tool path {given!r} is not usable: {exc}",
                    source=source,
                    code=LoadCode.INVALID_PATH,
                )
                continue
            yield ToolLocation(path=path, source=source, explicit=True, given=given)


CLAUDE_PLUGINS_ID = "claude-plugins"
_REGISTRY = "~/.claude/plugins/installed_plugins.json"
_PROJECT_SCOPES = frozenset({"project", "local"})
_REGISTRY_MAX_BYTES = 16 * 1024 * 1024


@dataclass(frozen=True, slots=True, kw_only=True)
class ClaudePluginsProvider:
    """Tools of plugins installed from a Claude Code marketplace, id ``"claude-plugins"``.

    Reads the registry ``~/.claude/plugins/installed_plugins.json``::

        {"version": 2, "plugins": {"name@marketplace": [
            {"scope": "user", "installPath": "/abs/dir", "version": "1.2.0", "enabled": true}]}}

    and yields ``<installPath>/tools`` for every install. Rules:

    - ``enabled: false`` installs are skipped (diagnostic ``"plugin-disabled"``);
    - scope ``"user"`` (the default) gives level ``"user"``; ``"project"`` and ``"local"`` give
      level ``"project"``, and such an install with a ``projectPath`` is used only when ``cwd``
      is that directory or below it; user installs come before project installs;
    - a relative ``installPath`` is taken relative to the registry's directory, ``~`` expanded;
    - a missing registry contributes nothing; a malformed registry (diagnostic
      ``"invalid-registry"``) or entry (``"invalid-registry-entry"``) never stops the scan.

    Args:
        registry: the registry file (``~`` expanded against the scan's home directory).
        id: the provider id.
        display_name: the name for people.
    """

    registry: str = _REGISTRY
    id: str = CLAUDE_PLUGINS_ID
    display_name: str = "Claude Code Marketplace"

    def _diag(self, code: str, message: str, path: str) -> Diagnostic:
        return Diagnostic(code=code, message=message, path=path)

    def locate(self, context: ScanContext) -> Iterable[ProviderItem]:
        """Yield ``<installPath>/tools`` of each enabled install, user level first."""
        registry = resolve_path(self.registry, context.home, home=context.home)
        shown = display_path(registry)
        try:
            data = load_json(read_text_file(registry, max_bytes=_REGISTRY_MAX_BYTES))
        except FileNotFoundError:
            return
        except (OSError, FileRuleError) as exc:
            cause = exc.strerror if isinstance(exc, OSError) and exc.strerror else f"it {exc}"
            yield self._diag(
                LoadCode.INVALID_REGISTRY,
                f"plugin registry {shown} was ignored: {cause}; fix or delete it",
                registry,
            )
            return
        if (
            not isinstance(data, dict)
            or not isinstance(data.get("plugins"), dict)
            or isinstance(data.get("version"), bool)
            or not isinstance(data.get("version"), int)
        ):
            yield self._diag(
                LoadCode.INVALID_REGISTRY,
                f"plugin registry {shown} was ignored: expected an object with a numeric "
                '"version" and a "plugins" object',
                registry,
            )
            return
        base = os.path.dirname(registry)
        cwd_real = os.path.realpath(context.cwd)
        later: list[ToolLocation] = []
        for plugin_id, installs in data["plugins"].items():
            entries = installs if isinstance(installs, list) else [installs]
            for index, entry in enumerate(entries):
                where = f"plugin {plugin_id!r} (entry {index}) in {shown}"
                item = self._entry(str(plugin_id), entry, where, registry, base, cwd_real, context)
                if isinstance(item, ToolLocation) and item.source.level == "project":
                    later.append(item)  # user installs first
                elif item is not None:
                    yield item
        yield from later

    def _entry(
        self,
        plugin_id: str,
        entry: Any,
        where: str,
        registry: str,
        base: str,
        cwd_real: str,
        context: ScanContext,
    ) -> ToolLocation | Diagnostic | None:
        """One install of the registry: its tools location, why it is ignored, or ``None``
        (installed for another project)."""
        if not isinstance(entry, dict):
            return self._diag(
                LoadCode.INVALID_REGISTRY_ENTRY,
                f"{where} was ignored: expected an object, got {type(entry).__name__}",
                registry,
            )
        install = entry.get("installPath")
        scope = entry.get("scope", "user")
        if not isinstance(install, str) or not install.strip():
            return self._diag(
                LoadCode.INVALID_REGISTRY_ENTRY,
                f'{where} was ignored: "installPath" must be a non-empty string',
                registry,
            )
        if scope not in ("user", *_PROJECT_SCOPES):
            return self._diag(
                LoadCode.INVALID_REGISTRY_ENTRY,
                f"{where} was ignored: unknown scope {scope!r} "
                "(expected 'user', 'project' or 'local')",
                registry,
            )
        if entry.get("enabled", True) is False:
            return self._diag(
                LoadCode.PLUGIN_DISABLED,
                f"{where} is disabled (enabled: false); its tools were not scanned",
                install,
            )
        level: Level = "project" if scope in _PROJECT_SCOPES else "user"
        project = entry.get("projectPath")
        if level == "project" and isinstance(project, str) and project:
            root = os.path.realpath(resolve_path(project, base, home=context.home))
            if not is_inside(cwd_real, root):
                return None  # installed for another project
        try:
            root_dir = resolve_path(install, base, home=context.home)
        except ValueError as exc:
            return self._diag(
                LoadCode.INVALID_REGISTRY_ENTRY, f"{where} was ignored: {exc}", registry
            )
        name, _, _marketplace = plugin_id.partition("@")
        version = entry.get("version")
        source = ToolSource(
            provider=self.id,
            provider_name=self.display_name,
            level=level,
            plugin_name=name or plugin_id,
            plugin_version=str(version) if isinstance(version, (str, int)) else None,
        )
        return ToolLocation(
            path=os.path.join(root_dir, "tools"),
            source=source,
            given=plugin_id,
            origin=registry,
            confine_to=os.path.realpath(root_dir),
        )


def default_providers(
    *,
    app_name: str = "customtools",
    native_dirs: tuple[Sequence[str | os.PathLike[str]], Sequence[str | os.PathLike[str]]]
    | None = None,
) -> tuple[ToolProvider, ...]:
    """The built-in directory providers, in precedence order.

    ``native`` (the host's app directory), ``claude``, ``claude-plugins`` (the marketplace
    cache), ``codex``. Plugin roots, entry points and configured paths are added by
    ``scan_sources`` after these.

    Args:
        app_name: the host's application name (``~/.<app_name>/tools``, ``.<app_name>/tools``).
        native_dirs: ``(user_dirs, project_dirs)`` replacing the native directories.
    """
    user, project = native_dirs if native_dirs is not None else (None, None)
    return (
        native_provider(app_name, user_dirs=user, project_dirs=project),
        claude_provider(),
        ClaudePluginsProvider(),
        codex_provider(),
    )
