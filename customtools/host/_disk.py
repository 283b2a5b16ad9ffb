"""Build customization containers from files on disk, the way Claude Code reads a plugin.

A plugin root holds (every part optional)::

    .claude-plugin/plugin.json    manifest (also .plugin/plugin.json or plugin.json; see below)
    agents/*.md                   agent   (frontmatter: name, description, model, tools)
    skills/<name>/SKILL.md        skill   (named after its folder)
    commands/*.md                 skill   (a flat skill named after the file)
    prompts/*.md                  prompt  (``x.prompt.md`` is named ``x``)
    rules/*.mdc, rules/*.md       rule    (description, alwaysApply, globs; ``x.instructions.md``
                                           is named ``x``; ``applyTo`` counts as globs)
    hooks/hooks.json              hook    (one child per event entry)
    .mcp.json                     mcpServer (one child per server, with its ``range``)

**The manifest.** ``name`` names the plugin. ``commands``, ``agents`` and ``skills`` (a path or
a list of paths, files or folders) *replace* the default folder of that kind. ``hooks`` and
``mcpServers`` (a path to a JSON file, an inline object, or a list of either) are read *in
addition to* ``hooks/hooks.json`` and ``.mcp.json``. Paths are relative to the root (``./x``;
a leading ``${CLAUDE_PLUGIN_ROOT}`` is the root) and must stay inside it, symlinks resolved.
A ``.mcp.json`` may map server names directly or wrap them in ``mcpServers``.

**File rules** are the tool loader's (:mod:`customtools._loading._files`): only regular files
are read (a symlink to ``/dev/zero`` or a FIFO is refused, never opened for a blocking read),
each file is capped in size, JSON nesting is bounded, frontmatter goes through the loader's
parser. **Notes**: whatever could not be read or followed, and whatever was recovered (YAML
read line by line, a skill's folder name standing in for its ``name``, a command shadowed by a
skill of the same name, a broken symlink), becomes a note ``"<file>: <what happened>"``. The
notes are the container's load message: ``degraded`` when children loaded, ``error`` when none
did, ``loaded`` (no message) when there is nothing to say. Child ids derive from their URIs;
a declaration inside a JSON file has the file's URI plus a JSON Pointer fragment.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from customtools._format import escape_control
from customtools._loading._files import FileRuleError, load_json, read_text_file
from customtools._loading._frontmatter import MetadataError, split_frontmatter
from customtools._loading._paths import display_path
from customtools._loading._plugins import MANIFEST_LOCATIONS
from customtools.host._components import (
    MarkdownBuilder,
    Notes,
    agent,
    command,
    customization_id,
    hook_children,
    markdown_fields,
    mcp_children,
    prompt,
    rule,
    skill,
)
from customtools.host._errors import CustomizationError
from customtools.host._model import (
    ChildCustomization,
    ClientPluginCustomization,
    DirectoryCustomization,
    PluginCustomization,
    SkillCustomization,
)
from customtools.host._parts import CustomizationLoadState

__all__ = [
    "CHILD_KINDS",
    "customization_id",
    "parse_frontmatter",
    "plugin_parser",
    "scan_directory",
    "scan_plugin",
]

CHILD_KINDS = ("agent", "skill", "prompt", "rule", "hook", "mcpServer")
"""The kinds a watched directory may hold (``contents``)."""

_PLUGIN_ROOT_VARIABLE = "${CLAUDE_PLUGIN_ROOT}"

Pointer = tuple[str | int, ...]  # where a declaration sits in its JSON file


def parse_frontmatter(text: str, *, path: str = "<text>") -> tuple[dict[str, Any], str]:
    """Split YAML frontmatter (between ``---`` lines at the top) from the body.

    The same rules as the tool loader's metadata (one parser for both). The scanners do not
    raise for bad frontmatter; they recover and add a note. This function is the strict form.

    Returns:
        ``(fields, body)``; ``({}, text)`` when there is no frontmatter.

    Raises:
        CustomizationError: the frontmatter is unterminated, not valid YAML or not a mapping.
    """
    from customtools._loading._frontmatter import parse_frontmatter_block

    try:
        block, body = split_frontmatter(text)
        return parse_frontmatter_block(block), body
    except MetadataError as exc:
        raise CustomizationError(f"{path}: {escape_control(str(exc))}") from None


@dataclass(slots=True)
class _Scan:
    """One container being scanned: its root, the children found and the notes."""

    root: Path
    children: list[ChildCustomization] = field(default_factory=list)
    notes: Notes = field(default_factory=list)
    commands: list[tuple[ChildCustomization, Path]] = field(default_factory=list)

    def shown(self, path: Path) -> str:
        """``path`` relative to the root, for a note."""
        try:
            relative = path.relative_to(self.root).as_posix()
        except ValueError:
            relative = path.as_posix()
        return escape_control(display_path(relative))

    def note(self, path: Path, what: str) -> None:
        self.notes.append(f"{self.shown(path)}: {what}")

    def read(self, path: Path) -> str | None:
        """The file's text under the loader's file rules, or ``None`` after a note."""
        try:
            return read_text_file(path)
        except FileRuleError as exc:
            self.note(path, f"{exc}, skipped")
        except OSError as exc:
            self.note(path, f"cannot be read ({exc.strerror or type(exc).__name__}), skipped")
        return None

    def read_json(self, path: Path) -> tuple[Any, str] | None:
        text = self.read(path)
        if text is None:
            return None
        try:
            return load_json(text), text
        except FileRuleError as exc:
            self.note(path, f"{exc}, skipped")
            return None

    def load_state(self) -> CustomizationLoadState:
        if not self.notes:
            return CustomizationLoadState.loaded()
        message = "; ".join(self.notes)
        if self.children:
            return CustomizationLoadState.degraded(message)
        return CustomizationLoadState.error(message)


# -- walking folders ------------------------------------------------------------------------


def _entries(scan: _Scan, folder: Path) -> Iterator[Path]:
    """The visible entries of ``folder``, sorted; broken symlinks are noted and skipped."""
    try:
        with os.scandir(folder) as iterator:
            entries = sorted(iterator, key=lambda entry: entry.name)
    except (FileNotFoundError, NotADirectoryError):
        return
    except OSError as exc:
        scan.note(folder, f"cannot be listed ({exc.strerror or type(exc).__name__}), skipped")
        return
    for entry in entries:
        if entry.name.startswith("."):
            continue
        path = Path(entry.path)
        if entry.is_symlink() and not path.exists():
            scan.note(path, "is a broken symlink (its target does not exist), skipped")
            continue
        yield path


def _markdown(scan: _Scan, path: Path, build: MarkdownBuilder) -> ChildCustomization | None:
    text = scan.read(path)
    if text is None:
        return None
    shown = scan.shown(path)
    child = build(path, shown, markdown_fields(text, shown, scan.notes), scan.notes)
    scan.children.append(child)
    return child


def _markdown_files(
    scan: _Scan, target: Path, build: MarkdownBuilder, suffixes: tuple[str, ...] = (".md",)
) -> list[tuple[ChildCustomization, Path]]:
    """A Markdown file, or every ``*.md`` file of a folder (one level); the children made."""
    made, folder = [], target.is_dir()
    for path in _entries(scan, target) if folder else [target]:
        if not folder or (path.name.endswith(suffixes) and not path.is_dir()):
            child = _markdown(scan, path, build)
            if child is not None:
                made.append((child, path))
    return made


def _skills(scan: _Scan, target: Path) -> None:
    """A skill folder (holding ``SKILL.md``), or a folder of skill folders."""
    if target.name == "SKILL.md" and not target.is_dir():
        _markdown(scan, target, skill)
        return
    if not target.is_dir():
        scan.note(target, "is not a skill folder or a folder of skills, skipped")
        return
    if (target / "SKILL.md").exists() or (target / "SKILL.md").is_symlink():
        _markdown(scan, target / "SKILL.md", skill)
        return
    for folder in _entries(scan, target):
        if not folder.is_dir():
            continue
        manifest = folder / "SKILL.md"
        if manifest.exists() or manifest.is_symlink():
            _markdown(scan, manifest, skill)
        else:
            scan.note(folder, "has no SKILL.md, not a skill")


def _children(
    scan: _Scan, hooks: bool, data: Any, text: str, uri: str, pointer: Pointer, shown: str
) -> None:
    """The hooks (``hooks``) or the MCP servers that ``data``, at ``pointer`` in the file
    ``uri`` holding ``text``, declares."""
    at: dict[str, Any] = {"file_uri": uri, "pointer": pointer, "shown": shown, "notes": scan.notes}
    scan.children.extend(hook_children(data, **at) if hooks else mcp_children(data, text, **at))


def _json_file(scan: _Scan, path: Path, *, hooks: bool) -> None:
    """A hooks file (``hooks``) or an MCP servers file."""
    loaded = scan.read_json(path)
    if loaded is not None:
        _children(scan, hooks, loaded[0], loaded[1], path.as_uri(), (), scan.shown(path))


# -- the manifest ---------------------------------------------------------------------------


@dataclass(slots=True)
class _Manifest:
    path: Path
    data: Mapping[str, Any]
    text: str


def _read_manifest(scan: _Scan) -> tuple[_Manifest | None, str | None, str | None]:
    """``(manifest, name, problem)``; a problem means the plugin cannot be loaded."""
    # The loader's manifest locations, in its order; a path that exists but is no regular
    # file (a FIFO, a dangling link) is reported rather than skipped.
    found = [scan.root / loc for loc in MANIFEST_LOCATIONS if os.path.lexists(scan.root / loc)]
    if not found:
        return None, None, None
    path = found[0]
    shown = scan.shown(path)
    try:
        text = read_text_file(path)
        data = load_json(text)
    except FileRuleError as exc:
        return None, None, f"{shown}: {exc}"
    except OSError as exc:
        return None, None, f"{shown}: cannot be read ({exc.strerror or type(exc).__name__})"
    if not isinstance(data, Mapping):
        return None, None, f"{shown}: the top level must be an object"
    name = data.get("name")
    if not isinstance(name, str) or not name:
        return None, None, f"{shown}: 'name' must be a string"
    return _Manifest(path=path, data=data, text=text), name, None


def _declared_path(scan: _Scan, manifest: _Manifest, key: str, given: str) -> Path | None:
    """Resolve one path a manifest declares; a note and ``None`` when it cannot be followed."""
    what = f"{key} path {given!r}"
    text = given
    if text.startswith(_PLUGIN_ROOT_VARIABLE):
        text = "." + text[len(_PLUGIN_ROOT_VARIABLE) :]
    if not text.strip() or "\x00" in text:
        scan.note(manifest.path, f"{what} is empty or not a path, not followed")
        return None
    if os.path.isabs(text) or text.startswith(("~", "\\")):
        scan.note(
            manifest.path,
            f"{what} is absolute, not followed (declare paths relative to the root: ./x)",
        )
        return None
    root = os.path.abspath(scan.root)
    joined = os.path.normpath(os.path.join(root, text))
    real_root = os.path.realpath(root)
    real = os.path.realpath(joined)
    inside = (joined == root or joined.startswith(root + os.sep)) and (
        real == real_root or real.startswith(real_root + os.sep)
    )
    if not inside:
        scan.note(
            manifest.path,
            f"{what} leads outside the plugin root (through '..' or a symlink), not followed",
        )
        return None
    if not os.path.lexists(joined):
        scan.note(manifest.path, f"{what} does not exist, not followed")
        return None
    return Path(joined)


def _declared(manifest: _Manifest | None, key: str) -> list[tuple[int | None, Any]] | None:
    """``(list index or None, entry)`` for what a manifest declares under ``key`` (``None``:
    nothing declared)."""
    if manifest is None or key not in manifest.data:
        return None
    value = manifest.data[key]
    entries = value if isinstance(value, list) else [value]
    return [
        (index if isinstance(value, list) else None, entry) for index, entry in enumerate(entries)
    ]


def _component_paths(scan: _Scan, manifest: _Manifest | None, key: str, default: str) -> list[Path]:
    """Where ``commands`` / ``agents`` / ``skills`` come from: the manifest's paths, else the
    default folder."""
    declared = _declared(manifest, key)
    if declared is None or manifest is None:
        return [scan.root / default] if (scan.root / default).is_dir() else []
    paths: list[Path] = []
    for _, entry in declared:
        if not isinstance(entry, str):
            scan.note(
                manifest.path,
                f"{key!r} must be a path or a list of paths, not {type(entry).__name__}, "
                "so that entry was not followed",
            )
            continue
        path = _declared_path(scan, manifest, key, entry)
        if path is not None:
            paths.append(path)
    return paths


def _config_components(
    scan: _Scan,
    manifest: _Manifest | None,
    key: str,
    default: Path,
    *,
    hooks: bool,
) -> None:
    """``hooks`` / ``mcpServers``: the default file, then each declared file or inline object."""
    seen: set[str] = set()
    if default.exists() or default.is_symlink():
        seen.add(os.path.realpath(default))
        _json_file(scan, default, hooks=hooks)
    declared = _declared(manifest, key)
    if declared is None or manifest is None:
        return
    for index, entry in declared:
        pointer: Pointer = (key,) if index is None else (key, index)
        if isinstance(entry, Mapping):
            uri, shown = manifest.path.as_uri(), scan.shown(manifest.path)
            _children(scan, hooks, entry, manifest.text, uri, pointer, shown)
        elif isinstance(entry, str):
            path = _declared_path(scan, manifest, key, entry)
            if path is None:
                continue
            if os.path.realpath(path) in seen:
                scan.note(
                    manifest.path,
                    f"{key} path {entry!r} is the default file, read once",
                )
                continue
            seen.add(os.path.realpath(path))
            _json_file(scan, path, hooks=hooks)
        else:
            scan.note(
                manifest.path,
                f"{key!r} entries must be a path or an object, not {type(entry).__name__}, "
                "so that entry was not followed",
            )


def _shadowed_commands(scan: _Scan) -> None:
    """A command and a skill with the same name: the skill wins, the command goes, a note."""
    commands = {id(child) for child, _ in scan.commands}
    skills = {
        c.name for c in scan.children if isinstance(c, SkillCustomization) and id(c) not in commands
    }
    for child, path in scan.commands:
        if isinstance(child, SkillCustomization) and child.name in skills:
            scan.children = [c for c in scan.children if c is not child]
            scan.note(
                path,
                f"command {child.name!r} has the same name as a skill: the skill is used and "
                "the command is hidden (rename one)",
            )


def _plugin_children(scan: _Scan, manifest: _Manifest | None) -> None:
    for target in _component_paths(scan, manifest, "agents", "agents"):
        _markdown_files(scan, target, agent)
    for target in _component_paths(scan, manifest, "skills", "skills"):
        _skills(scan, target)
    for target in _component_paths(scan, manifest, "commands", "commands"):
        scan.commands += _markdown_files(scan, target, command)
    for folder, build, suffixes in (
        ("prompts", prompt, (".md",)),
        ("rules", rule, (".mdc", ".md")),
    ):
        if (scan.root / folder).is_dir():
            _markdown_files(scan, scan.root / folder, build, suffixes)
    _config_components(scan, manifest, "hooks", scan.root / "hooks" / "hooks.json", hooks=True)
    _config_components(scan, manifest, "mcpServers", scan.root / ".mcp.json", hooks=False)
    _shadowed_commands(scan)


# -- public scanners ------------------------------------------------------------------------


def _absolute(path: str | os.PathLike[str]) -> Path:
    return Path(os.path.abspath(os.fspath(path)))


def scan_plugin(
    root: str | os.PathLike[str],
    *,
    id: str | None = None,
    uri: str | None = None,
    name: str | None = None,
    enabled: bool = True,
    client_id: str | None = None,
) -> PluginCustomization:
    """Parse a plugin root into a :class:`PluginCustomization` with children.

    Args:
        root: the plugin's directory (relative paths are relative to the current directory).
        id: the container id (default: derived from ``uri``).
        uri: the plugin URI (default: the directory's file URI).
        name: display name (default: the manifest's ``name``, else the directory name).
        enabled: the user's intent.
        client_id: set when a client published the plugin.

    Returns:
        The container. A missing root or a broken manifest gives ``load`` ``error`` and no
        ``children`` (nothing was parsed); otherwise the notes decide (see the module doc).
        Never raises for anything on disk.
    """
    path = _absolute(root)
    uri = uri or path.as_uri()
    common: dict[str, Any] = {
        "id": id or customization_id(uri),
        "uri": uri,
        "enabled": enabled,
        "client_id": client_id,
    }
    if not path.is_dir():
        return PluginCustomization(
            **common,
            name=name or path.name,
            load=CustomizationLoadState.error(
                f"plugin root {escape_control(display_path(str(path)))} does not exist or is "
                "not a directory"
            ),
        )
    scan = _Scan(root=path)
    manifest, manifest_name, problem = _read_manifest(scan)
    if problem is not None:
        return PluginCustomization(
            **common, name=name or path.name, load=CustomizationLoadState.error(problem)
        )
    _plugin_children(scan, manifest)
    return PluginCustomization(
        **common,
        name=name or manifest_name or path.name,
        load=scan.load_state(),
        children=tuple(scan.children),
    )


def scan_directory(
    path: str | os.PathLike[str],
    *,
    contents: str,
    writable: bool = False,
    id: str | None = None,
    uri: str | None = None,
    name: str | None = None,
    enabled: bool = True,
) -> DirectoryCustomization:
    """Parse a watched directory holding children of one kind (``contents``).

    Agents, prompts and rules are its Markdown files, skills its sub-folders with
    ``SKILL.md``, hooks and MCP servers its ``*.json`` files. The file rules and notes are
    :func:`scan_plugin`'s. A directory that does not exist yet is ``loaded`` with
    ``children == ()``: clients may still create it through ``resourceWrite`` when
    ``writable``.

    Raises:
        ValueError: ``contents`` is not a child customization type.
    """
    if contents not in CHILD_KINDS:
        raise ValueError(
            f"contents {contents!r} is not a child customization type; use one of {CHILD_KINDS}"
        )
    folder = _absolute(path)
    uri = uri or folder.as_uri()
    common: dict[str, Any] = {
        "id": id or customization_id(uri),
        "uri": uri,
        "name": name or folder.name,
        "enabled": enabled,
        "contents": contents,
        "writable": writable,
    }
    if folder.exists() and not folder.is_dir():
        return DirectoryCustomization(
            **common,
            load=CustomizationLoadState.error(
                f"{escape_control(display_path(str(folder)))} is a file, not a directory"
            ),
        )
    scan = _Scan(root=folder)
    if folder.is_dir():
        if contents == "skill":
            _skills(scan, folder)
        elif contents in ("agent", "prompt"):
            _markdown_files(scan, folder, agent if contents == "agent" else prompt)
        elif contents == "rule":
            _markdown_files(scan, folder, rule, (".mdc", ".md"))
        else:
            for file in _entries(scan, folder):
                if file.suffix == ".json" and not file.is_dir():
                    _json_file(scan, file, hooks=contents == "hook")
    return DirectoryCustomization(**common, load=scan.load_state(), children=tuple(scan.children))


def plugin_parser(
    locate: Callable[[ClientPluginCustomization], str | os.PathLike[str]],
) -> Callable[[ClientPluginCustomization], PluginCustomization]:
    """Return a parser for client-published plugins, for ``HostSession.sync_client_plugins``.

    Args:
        locate: maps a published plugin to the directory that holds it (mapping a client's
            virtual plugin to disk is the host's job).
    """

    def parse(plugin: ClientPluginCustomization) -> PluginCustomization:
        return scan_plugin(
            locate(plugin), id=plugin.id, uri=plugin.uri, name=plugin.name, enabled=plugin.enabled
        )

    return parse
