"""Plugin roots handed over by the host: Open Plugins layout, manifest, declared tool paths.

A plugin root is a directory. Its manifest is the first of ``.plugin/plugin.json``,
``.claude-plugin/plugin.json`` and ``plugin.json`` that exists; it may give ``name``,
``version`` and ``tools`` (a path or a list of paths, relative to the root, each a ``.py``
file, a package directory or a tools directory). Whatever the manifest says, ``<root>/tools/``
is scanned too.

Nothing of a plugin may lead outside its root once symlinks are resolved: a declared path
that escapes is a ``LoadError`` (code ``"path-outside-plugin"``) naming the manifest; so is a
``tools/`` directory, a module, a package (or its ``__init__.py``) found in a scanned
directory that resolves elsewhere, and a manifest that is a symlink out of the root (it is not
read). Metadata files that lead outside are not read either (diagnostic
``"metadata-outside-root"``). Manifests are read under the data-file rules of ``_files``
(regular file, 1 MiB, 64 levels of nesting); one that breaks a rule is an
``"invalid-manifest"`` error for that plugin alone.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from customtools._error_results import LoadCode
from customtools._loading._files import FileRuleError, load_json, read_text_file
from customtools._loading._paths import display_path, is_inside, resolve_path
from customtools._loading._providers import ProviderItem, ScanContext, ToolLocation
from customtools._loading._records import LoadError, ToolSource

__all__ = ["MANIFEST_LOCATIONS", "PLUGIN_ID", "PluginRootsProvider", "find_manifest"]

PLUGIN_ID = "plugin"

MANIFEST_LOCATIONS = (".plugin/plugin.json", ".claude-plugin/plugin.json", "plugin.json")
"""Where a plugin root's manifest may live, in the order they are tried (first found wins)."""


def find_manifest(root: str) -> str | None:
    """The manifest path of a plugin root, or ``None`` when it has none."""
    for relative in MANIFEST_LOCATIONS:
        candidate = os.path.join(root, *relative.split("/"))
        if os.path.isfile(candidate):
            return candidate
    return None


def _text(value: Any) -> str | None:
    if isinstance(value, str) and value.strip():
        return value.strip()
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return None


@dataclass(frozen=True, slots=True, kw_only=True)
class PluginRootsProvider:
    """Plugin roots the host hands over (``plugin_dirs=``), id ``"plugin"``, level user.

    Args:
        roots: the plugin root directories, in precedence order (``~`` and relative paths
            resolved like configured paths).
        id: the provider id.
        display_name: the name for people.
    """

    roots: Sequence[str | os.PathLike[str]] = ()
    id: str = PLUGIN_ID
    display_name: str = "Plugin"

    def locate(self, context: ScanContext) -> Iterable[ProviderItem]:
        """Yield, per root, ``<root>/tools`` and then each path the manifest declares."""
        for raw in self.roots:
            yield from self._locate_root(os.fspath(raw), context)

    def _error(self, path: str, error: str, code: str, source: ToolSource | None) -> LoadError:
        return LoadError(path=path, error=error, source=source, code=code)

    def _locate_root(self, given: str, context: ScanContext) -> Iterable[ProviderItem]:
        fallback = ToolSource(provider=self.id, provider_name=self.display_name, level="user")
        try:
            root = resolve_path(given, context.cwd, home=context.home)
        except (ValueError, TypeError) as exc:
            yield self._error(
                str(given),
                f"plugin root {given!r} is not usable: {exc}",
                LoadCode.INVALID_PATH,
                fallback,
            )
            return
        if not os.path.isdir(root):
            yield self._error(
                root,
                f"plugin root {given!r} is not a directory (resolved to {display_path(root)}); "
                "fix the plugin directory setting or remove it",
                LoadCode.NOT_FOUND,
                fallback,
            )
            return
        real_root = os.path.realpath(root)
        manifest_path = find_manifest(root)
        manifest: dict[str, Any] = {}
        if manifest_path is not None:
            real_manifest = os.path.realpath(manifest_path)
            if not is_inside(real_manifest, real_root):
                yield self._error(
                    manifest_path,
                    f"plugin manifest {display_path(manifest_path)} leads outside the plugin "
                    f"root {display_path(root)} (to {display_path(real_manifest)}) and was not "
                    "read; the plugin's tools/ directory is still scanned",
                    LoadCode.PATH_OUTSIDE_PLUGIN,
                    fallback,
                )
                manifest_path = None
        if manifest_path is not None:
            try:
                data = load_json(read_text_file(manifest_path))
                if not isinstance(data, dict):
                    raise FileRuleError(
                        f"has a {type(data).__name__} at the top level, not an object"
                    )
                manifest = data
            except (OSError, FileRuleError) as exc:
                cause = (
                    (exc.strerror or type(exc).__name__)
                    if isinstance(exc, OSError)
                    else f"it {exc}"
                )
                yield self._error(
                    manifest_path,
                    f"plugin manifest {display_path(manifest_path)} was ignored: {cause}; "
                    "the plugin's tools/ directory is still scanned",
                    LoadCode.INVALID_MANIFEST,
                    fallback,
                )
        name = _text(manifest.get("name")) or os.path.basename(root)
        source = ToolSource(
            provider=self.id,
            provider_name=self.display_name,
            level="user",
            plugin_name=name,
            plugin_version=_text(manifest.get("version")),
        )
        yield ToolLocation(
            path=os.path.join(root, "tools"), source=source, given=given, confine_to=real_root
        )
        if manifest_path is None or "tools" not in manifest:
            return
        yield from self._declared(manifest["tools"], root, manifest_path, source)

    def _declared(
        self, declared: Any, root: str, manifest: str, source: ToolSource
    ) -> Iterable[ProviderItem]:
        shown = display_path(manifest)
        entries = [declared] if isinstance(declared, str) else declared
        if not isinstance(entries, list):
            yield self._error(
                manifest,
                f'plugin manifest {shown}: "tools" must be a path or a list of paths, '
                f"not {type(declared).__name__}",
                LoadCode.INVALID_MANIFEST,
                source,
            )
            return
        real_root = os.path.realpath(root)
        for index, entry in enumerate(entries):
            if not isinstance(entry, str) or not entry.strip() or "\x00" in entry:
                yield self._error(
                    manifest,
                    f'plugin manifest {shown}: "tools"[{index}] must be a non-empty relative '
                    f"path, got {entry!r}",
                    LoadCode.INVALID_MANIFEST,
                    source,
                )
                continue
            joined = os.path.normpath(os.path.join(root, entry))
            escapes = (
                os.path.isabs(entry)
                or entry.startswith(("/", "\\", "~"))
                or not is_inside(joined, root)
                or not is_inside(os.path.realpath(joined), real_root)
            )
            if escapes:
                yield self._error(
                    manifest,
                    f'plugin manifest {shown}: tool path {entry!r} ("tools"[{index}]) leads '
                    f"outside the plugin root {display_path(root)}; declared paths must stay "
                    "inside the plugin (no absolute paths, '..' or symlinks out)",
                    LoadCode.PATH_OUTSIDE_PLUGIN,
                    source,
                )
                continue
            yield ToolLocation(
                path=joined,
                source=source,
                explicit=True,
                given=entry,
                origin=manifest,
                confine_to=real_root,
            )
