"""Finding plugins: installed entry points and plugin root directories.

**Plugin roots.** A plugin root (a tool pack, a plugin checkout, a marketplace cache entry) may
offer actions through exactly one of:

* ``<root>/actions.py``, or
* ``<root>/actions/__init__.py`` (a package; its relative imports work).

The module is imported under a private name derived from its real path
(``_customtools_actions_<hash>``); the root is never put on ``sys.path``. It must define a
module-level ``plugins``, resolved like an entry point target (below). A root without either
file has no actions and is skipped silently.

**Entry points.** Distributions declare ``[customtools.plugins]`` entry points. The loaded
object may be a plugin object, a plugin class (instantiated without arguments), a list of
those, or a zero-argument callable returning any of those.

**Names and order.** A plugin's ``name`` attribute names it; a plugin without one takes the
entry point name (or the root directory name) when it is the only plugin from that source.
Plugins are registered roots first, in the order given, then entry points sorted by entry
point name and distribution name. The first plugin with a name wins; a later one with the
same name is an error record naming both sources.

**Trust.** A plugin root inside ``cwd`` (when ``cwd`` is given) is project code: like the tool
loader's project sources, its actions module is imported only when the user trusted exactly
its content (the module, or every ``.py`` file of the package), through the same
:class:`~customtools.loading.TrustStore` and policies (``trust="prompt" | "all" | "none"`` or
a callable asked per source). An untrusted root is listed in
:attr:`PluginDiscovery.pending_trust` with the files that would run; nothing of it runs.

**Failures are contained.** An import error, a ``plugins`` callable that raises (even
``SystemExit``), or an unusable plugin object becomes a :class:`PluginLoadError` record in
:attr:`PluginDiscovery.errors`; the other plugins still load.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import os
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from customtools._errors import TrustStoreError
from customtools._format import describe_exception
from customtools._loading._trust import PendingSource, file_source
from customtools._loading._trust_store import TrustPolicy, TrustStore
from customtools.actions._context import exception_message
from customtools.actions._errors import PluginError
from customtools.actions._plugins import PluginRegistry, RegisteredPlugin

__all__ = ["PLUGIN_ENTRY_POINT_GROUP", "PluginDiscovery", "PluginLoadError", "find_plugins"]

PLUGIN_ENTRY_POINT_GROUP = "customtools.plugins"
"""The entry point group plugins are declared in."""

_MODULE_PREFIX = "_customtools_actions_"


@dataclass(frozen=True, slots=True, kw_only=True)
class PluginLoadError:
    """One plugin source that could not be used (a record, not an exception).

    Args:
        source: where it came from (a path or an entry point description).
        message: what went wrong and what to do.
        error: the underlying exception.
    """

    source: str
    message: str
    error: BaseException


@dataclass(frozen=True, slots=True, kw_only=True)
class PluginDiscovery:
    """What :func:`find_plugins` found.

    Args:
        plugins: usable plugins in registration order.
        errors: every source that failed, in the order met.
        pending_trust: project plugin roots whose actions were not imported because they are
            not trusted (show their files; ``store.grant(pending)`` trusts exactly them).
    """

    plugins: tuple[RegisteredPlugin, ...] = ()
    errors: tuple[PluginLoadError, ...] = ()
    pending_trust: tuple[PendingSource, ...] = ()

    def registry(self) -> PluginRegistry:
        """Return a new :class:`PluginRegistry` holding :attr:`plugins` in order."""
        return PluginRegistry(self.plugins)


def _is_plugin(obj: Any) -> bool:
    return callable(getattr(obj, "get_actions", None)) and callable(
        getattr(obj, "execute_action", None)
    )


def _materialize(target: Any, where: str) -> list[Any]:
    """Turn an entry point target or a module's ``plugins`` into plugin objects."""
    if isinstance(target, type):
        return [target()]
    if _is_plugin(target):
        return [target]
    if isinstance(target, (list, tuple)):
        out: list[Any] = []
        for item in target:
            if isinstance(item, type):
                out.append(item())
            elif _is_plugin(item):
                out.append(item)
            else:
                raise PluginError(
                    f"{where}: list item {item!r} is not a plugin (it needs get_actions and"
                    " execute_action)"
                )
        return out
    if callable(target):
        produced = target()
        if callable(produced) and not _is_plugin(produced) and not isinstance(produced, type):
            raise PluginError(f"{where}: the plugins callable returned another callable")
        return _materialize(produced, where)
    raise PluginError(
        f"{where}: expected a plugin, a plugin class, a list of them, or a callable returning"
        f" them; got {type(target).__name__}"
    )


def _module_file(root: Path) -> Path | None:
    flat, package = root / "actions.py", root / "actions" / "__init__.py"
    if flat.is_file() and package.is_file():
        raise PluginError(
            f"plugin root {root}: both actions.py and actions/__init__.py exist; keep one"
        )
    if flat.is_file():
        return flat
    return package if package.is_file() else None


def _import(path: Path) -> ModuleType:
    real = os.path.realpath(path)
    digest = hashlib.sha256(real.encode()).hexdigest()[:16]
    root = Path(real).parent.parent if path.name == "__init__.py" else Path(real).parent
    stem = re.sub(r"\W", "_", root.name)
    name = f"{_MODULE_PREFIX}{stem}_{digest}"
    locations = [str(path.parent)] if path.name == "__init__.py" else None
    spec = importlib.util.spec_from_file_location(name, path, submodule_search_locations=locations)
    if spec is None or spec.loader is None:
        raise PluginError(f"{path}: cannot be imported as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


class _Collector:
    def __init__(self) -> None:
        self.plugins: list[RegisteredPlugin] = []
        self.errors: list[PluginLoadError] = []
        self.seen: dict[str, str] = {}

    def fail(self, source: str, exc: BaseException, what: str = "") -> None:
        detail = exception_message(exc) if isinstance(exc, PluginError) else describe_exception(exc)
        message = detail if source in detail else f"{source}: {what}{detail}"
        self.errors.append(PluginLoadError(source=source, message=message, error=exc))

    def add(self, objects: list[Any], source: str, default_name: str) -> None:
        for obj in objects:
            name = getattr(obj, "name", None)
            if not isinstance(name, str) or not name:
                name = default_name if len(objects) == 1 else None
            try:
                record = RegisteredPlugin.of(obj, name=name, source=source)
            except PluginError as exc:
                self.fail(source, exc)
                continue
            if record.name in self.seen:
                self.fail(
                    source,
                    PluginError(
                        f"plugin name {record.name!r} is already taken by {self.seen[record.name]};"
                        " this one was skipped (rename one of them)"
                    ),
                )
                continue
            self.seen[record.name] = source
            self.plugins.append(record)


def _package_files(path: Path) -> list[str]:
    """Every file that importing ``path`` could run: the module, or the package's ``.py``s."""
    if path.name != "__init__.py":
        return [str(path)]
    files: list[str] = []
    for folder, dirs, names in os.walk(path.parent):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__" and not d.startswith("."))
        files.extend(os.path.join(folder, name) for name in sorted(names) if name.endswith(".py"))
    return files


class _Gate:
    """The trust decision for plugin roots inside ``cwd`` (project scope)."""

    def __init__(self, cwd: str | None, policy: TrustPolicy, store: TrustStore | None) -> None:
        self.project = os.path.realpath(cwd) if cwd is not None else None
        self.project_abs = os.path.abspath(cwd) if cwd is not None else None
        self.policy = policy
        self.store = store
        self.pending: list[PendingSource] = []

    def is_project(self, root: Path) -> bool:
        """Inside ``cwd`` as given or by its real path: a symlink in the project that leads
        elsewhere is still the project's choice."""
        if self.project is None or self.project_abs is None:
            return False
        return any(
            path == base or path.startswith(base.rstrip(os.sep) + os.sep)
            for path, base in (
                (os.path.abspath(root), self.project_abs),
                (os.path.realpath(root), self.project),
            )
        )

    def allows(self, root: Path, path: Path) -> bool:
        """Whether the actions module at ``path`` may be imported (records why not)."""
        if self.policy == "all" or not self.is_project(root):
            return True
        source = file_source(path, provider="actions", files=_package_files(path))
        if self.policy == "none":
            why = "the host loads no project code (trust='none')"
            self.pending.append(PendingSource(source=source, status="blocked", changes=(why,)))
            return False
        store = self.store if self.store is not None else TrustStore()
        pending = store.check(source)
        if pending is None:
            return True
        if callable(self.policy) and self.policy(pending) is True:
            store.grant(pending)
            return True
        self.pending.append(pending)
        return False


def _from_root(root: Path, out: _Collector, gate: _Gate) -> None:
    source = f"plugin root {root}"
    if not root.is_dir():
        out.fail(source, PluginError(f"{source}: not a directory"))
        return
    try:
        path = _module_file(root)
        if path is None:
            return
        source = f"plugin module {path}"
        if not gate.allows(root, path):
            return
        module = _import(path)
        if not hasattr(module, "plugins"):
            raise PluginError(
                f"{source}: defines no 'plugins'; add `def plugins(): return [MyPlugin()]`"
            )
        objects = _materialize(module.plugins, source)
    except KeyboardInterrupt:
        raise
    except TrustStoreError as exc:
        out.fail(source, exc, "not loaded: ")
        return
    except BaseException as exc:  # SystemExit, GeneratorExit, ...: the module's fault
        out.fail(source, exc, "failed to load: ")
        return
    out.add(objects, source, root.name)


def _from_entry_points(group: str, out: _Collector) -> None:
    found = importlib.metadata.entry_points(group=group)
    points = sorted(found, key=lambda ep: (ep.name, ep.dist.name if ep.dist else "", ep.value))
    for ep in points:
        dist = ep.dist.name if ep.dist else "unknown distribution"
        source = f"entry point {ep.name!r} ({ep.value}) from {dist}"
        try:
            objects = _materialize(ep.load(), source)
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # SystemExit, GeneratorExit, ...: the plugin's fault
            out.fail(source, exc, "failed to load: ")
            continue
        out.add(objects, source, ep.name)


def find_plugins(
    roots: Iterable[str | os.PathLike[str]] = (),
    *,
    entry_points: bool = True,
    group: str = PLUGIN_ENTRY_POINT_GROUP,
    cwd: str | os.PathLike[str] | None = None,
    trust: TrustPolicy = "prompt",
    trust_store: TrustStore | None = None,
) -> PluginDiscovery:
    """Import the plugins of every plugin root, then of every installed entry point.

    This is synchronous (it imports modules); from async code call it through
    ``anyio.to_thread.run_sync``. It never raises for a bad plugin: see ``errors``.

    Args:
        roots: plugin root directories, in precedence order (``~`` is expanded; relative
            paths resolve against ``cwd``).
        entry_points: whether to load entry points of ``group``.
        group: the entry point group (default ``customtools.plugins``).
        cwd: the project directory: base for relative roots (default: the process working
            directory) and, when given, what makes a root project scope (see "Trust").
        trust: the policy for project roots: ``"prompt"`` (default: trusted ones load, the
            others are listed in ``pending_trust``), ``"none"``, ``"all"``, or a callable
            given each pending source (exactly ``True`` grants and loads it). Async
            callables are not accepted here (this function is synchronous).
        trust_store: where grants are kept (default: ``~/.customtools/trust.json``).

    Returns:
        The usable plugins, in registration order, and one error record per failure.
    """
    base = Path(cwd) if cwd is not None else Path.cwd()
    gate = _Gate(os.fspath(cwd) if cwd is not None else None, trust, trust_store)
    out = _Collector()
    done: set[str] = set()
    for raw in roots:
        root = base / Path(raw).expanduser()
        real = os.path.realpath(root)
        if real in done:
            continue
        done.add(real)
        _from_root(root, out, gate)
    if entry_points:
        _from_entry_points(group, out)
    return PluginDiscovery(
        plugins=tuple(out.plugins), errors=tuple(out.errors), pending_trust=tuple(gate.pending)
    )
