"""Build customization containers from files on disk (Open Plugins layout).

A plugin root holds (every part optional)::

    .plugin/plugin.json           manifest ("name"); .claude-plugin/plugin.json is also read
    agents/*.md                   agent   (frontmatter: name, description, model, tools)
    skills/<name>/SKILL.md        skill   (frontmatter name MUST equal the directory name)
    commands/*.md                 skill   (a flat skill named after the file)
    prompts/*.md                  prompt  (``x.prompt.md`` is named ``x``)
    rules/*.mdc, rules/*.md       rule    (description, alwaysApply, globs; ``x.instructions.md``
                                           is named ``x``; ``applyTo`` counts as globs)
    hooks/hooks.json              hook    (one child per event entry)
    .mcp.json                     mcpServer (one child per ``mcpServers`` entry, with its range)

A watched directory holds one kind (``contents``) laid out the same way, without the
sub-folder. A part that fails to parse is reported on the container: ``degraded`` when other
children loaded, ``error`` when nothing did. Child ids are derived from their URIs (opaque).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from customtools.host._errors import CustomizationError
from customtools.host._model import (
    AgentCustomization,
    ChildCustomization,
    ClientPluginCustomization,
    DirectoryCustomization,
    HookCustomization,
    McpServerCustomization,
    PluginCustomization,
    PromptCustomization,
    RuleCustomization,
    SkillCustomization,
)
from customtools.host._parts import CustomizationLoadState, McpServerState, TextRange

__all__ = [
    "customization_id",
    "parse_frontmatter",
    "plugin_parser",
    "scan_directory",
    "scan_plugin",
]

_FRONTMATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)^---[ \t]*(?:\r?\n|\Z)", re.S | re.M)
Found = tuple[list[ChildCustomization], list[str]]


def customization_id(uri: str) -> str:
    """A stable, opaque, session-unique id for the customization at ``uri``."""
    return "c-" + hashlib.sha256(uri.encode()).hexdigest()[:16]


def parse_frontmatter(text: str, *, path: str = "<text>") -> tuple[dict[str, Any], str]:
    """Split YAML frontmatter (between ``---`` lines at the top) from the body.

    Returns:
        ``(fields, body)``; ``({}, text)`` when there is no frontmatter.

    Raises:
        CustomizationError: the frontmatter is not valid YAML or not a mapping.
    """
    import yaml  # PyYAML is imported only when a file is actually parsed

    match = _FRONTMATTER.match(text)
    if match is None:
        return {}, text
    try:
        data = yaml.safe_load(match.group(1))
    except yaml.YAMLError as exc:
        raise CustomizationError(f"{path}: frontmatter is not valid YAML ({exc})") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise CustomizationError(f"{path}: frontmatter must be a mapping of keys to values")
    return data, text[match.end() :]


def _text(fields: dict[str, Any], key: str) -> str | None:
    value = fields.get(key)
    return value if isinstance(value, str) else None


def _strs(value: Any) -> tuple[str, ...] | None:
    if isinstance(value, str):
        return tuple(s.strip() for s in value.split(",") if s.strip()) or None
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    return None


def _bool(fields: dict[str, Any], key: str) -> bool | None:
    value = fields.get(key)
    return value if isinstance(value, bool) else None


def _stem(path: Path, *suffixes: str) -> str:
    name = path.name
    for suffix in suffixes:
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return path.stem


def _base(path: Path, name: str, uri: str | None = None) -> dict[str, Any]:
    uri = uri or path.as_uri()
    return {"id": customization_id(uri), "uri": uri, "name": name}


def _markdown(path: Path, build: Callable[[Path, dict[str, Any]], Any], found: Found) -> None:
    children, problems = found
    try:
        fields, _ = parse_frontmatter(path.read_text(encoding="utf-8"), path=path.name)
        child = build(path, fields)
    except (OSError, UnicodeDecodeError, CustomizationError) as exc:
        problems.append(str(exc) if isinstance(exc, CustomizationError) else f"{path.name}: {exc}")
        return
    if isinstance(child, str):
        problems.append(child)
    else:
        children.append(child)


def _agent(path: Path, fields: dict[str, Any]) -> Any:
    return AgentCustomization(
        **_base(path, _text(fields, "name") or _stem(path, ".agent.md", ".md")),
        description=_text(fields, "description"),
        model=_text(fields, "model"),
        tools=_strs(fields.get("tools")),
    )


def _skill(path: Path, fields: dict[str, Any]) -> Any:
    folder = path.parent.name
    name = _text(fields, "name")
    if name is None:
        return f"{folder}/SKILL.md: frontmatter has no 'name'; skill skipped"
    if name != folder:
        return (
            f"{folder}/SKILL.md: frontmatter name {name!r} differs from its directory "
            f"{folder!r}; rename one so they match (skill skipped)"
        )
    return SkillCustomization(
        **_base(path, name),
        description=_text(fields, "description"),
        disable_model_invocation=_bool(fields, "disable-model-invocation"),
    )


def _command(path: Path, fields: dict[str, Any]) -> Any:
    return SkillCustomization(
        **_base(path, _stem(path, ".md")),
        description=_text(fields, "description"),
        disable_model_invocation=_bool(fields, "disable-model-invocation"),
    )


def _prompt(path: Path, fields: dict[str, Any]) -> Any:
    return PromptCustomization(
        **_base(path, _stem(path, ".prompt.md", ".md")), description=_text(fields, "description")
    )


def _rule(path: Path, fields: dict[str, Any]) -> Any:
    globs = fields.get("globs", fields.get("applyTo"))
    return RuleCustomization(
        **_base(path, _stem(path, ".instructions.md", ".mdc", ".md")),
        description=_text(fields, "description"),
        always_apply=_bool(fields, "alwaysApply"),
        globs=_strs(globs),
    )


def _read_json(path: Path, problems: list[str]) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        problems.append(f"{path.name}: not valid JSON ({exc})")
        return None


def _hooks(path: Path, found: Found) -> None:
    children, problems = found
    data = _read_json(path, problems)
    if data is None:
        return
    table = data.get("hooks", data) if isinstance(data, dict) else None
    if not isinstance(table, dict):
        problems.append(f"{path.name}: expected an object of event names to hook lists")
        return
    for event, entries in table.items():
        for index, entry in enumerate(entries if isinstance(entries, list) else [entries]):
            fragment = event if index == 0 else f"{event}/{index}"
            matcher = entry.get("matcher") if isinstance(entry, dict) else None
            children.append(
                HookCustomization(
                    **_base(path, event, f"{path.as_uri()}#{fragment}"),
                    event=event,
                    matcher=matcher if isinstance(matcher, str) else None,
                )
            )


def _declaration_range(text: str, key: str) -> TextRange | None:
    """The span of ``"key": {...}`` inside ``text`` (first occurrence after ``mcpServers``)."""
    anchor = text.find('"mcpServers"')
    start = text.find(json.dumps(key), max(anchor, 0))
    brace = text.find("{", start)
    if start < 0 or brace < 0:
        return None
    depth, in_string, escaped = 0, False, False
    for pos in range(brace, len(text)):
        char = text[pos]
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return TextRange(
                    start_line=text.count("\n", 0, start),
                    start_character=start - (text.rfind("\n", 0, start) + 1),
                    end_line=text.count("\n", 0, pos + 1),
                    end_character=pos + 1 - (text.rfind("\n", 0, pos + 1) + 1),
                )
    return None


def _mcp(path: Path, found: Found) -> None:
    children, problems = found
    data = _read_json(path, problems)
    if data is None:
        return
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        problems.append(f"{path.name}: expected an object under 'mcpServers'")
        return
    text = path.read_text(encoding="utf-8")
    for name, config in servers.items():
        disabled = isinstance(config, dict) and config.get("disabled") is True
        children.append(
            McpServerCustomization(
                **_base(path, name, f"{path.as_uri()}#{name}"),
                enabled=not disabled,
                state=McpServerState(kind="stopped"),
                range=_declaration_range(text, name),
            )
        )


def _collect(root: Path, kind: str, found: Found, *, nested: bool) -> None:
    """Collect children of ``kind`` from ``root`` (a plugin root when ``nested``)."""
    where = {
        "agent": "agents",
        "skill": "skills",
        "prompt": "prompts",
        "rule": "rules",
        "hook": "hooks",
    }.get(kind, "")
    folder = root / where if nested else root
    if kind == "skill":
        for skill in sorted(folder.glob("*/SKILL.md")):
            _markdown(skill, _skill, found)
        if nested:
            for command in sorted((root / "commands").glob("*.md")):
                _markdown(command, _command, found)
    elif kind in ("agent", "prompt"):
        for path in sorted(folder.glob("*.md")):
            _markdown(path, _agent if kind == "agent" else _prompt, found)
    elif kind == "rule":
        for path in sorted([*folder.glob("*.mdc"), *folder.glob("*.md")]):
            _markdown(path, _rule, found)
    elif kind == "hook":
        for path in sorted([folder / "hooks.json"] if nested else folder.glob("*.json")):
            if path.is_file():
                _hooks(path, found)
    elif kind == "mcpServer":
        for path in sorted([root / ".mcp.json"] if nested else root.glob("*.json")):
            if path.is_file():
                _mcp(path, found)


def _load_state(found: Found) -> CustomizationLoadState:
    children, problems = found
    if not problems:
        return CustomizationLoadState.loaded()
    message = "; ".join(problems)
    if children:
        return CustomizationLoadState.degraded(message)
    return CustomizationLoadState.error(message)


def _manifest_name(root: Path) -> tuple[str | None, str | None]:
    for manifest in (root / ".plugin" / "plugin.json", root / ".claude-plugin" / "plugin.json"):
        if manifest.is_file():
            problems: list[str] = []
            data = _read_json(manifest, problems)
            if problems:
                return None, f"{manifest.parent.name}/{problems[0]}"
            name = data.get("name") if isinstance(data, dict) else None
            if not isinstance(name, str) or not name:
                return None, f"{manifest.parent.name}/plugin.json: 'name' must be a string"
            return name, None
    return None, None


def scan_plugin(
    root: str | Path,
    *,
    id: str | None = None,
    uri: str | None = None,
    name: str | None = None,
    enabled: bool = True,
    client_id: str | None = None,
) -> PluginCustomization:
    """Parse an Open Plugins root into a :class:`PluginCustomization` with children.

    Args:
        root: the plugin's directory.
        id: the container id (default: derived from ``uri``).
        uri: the plugin URI (default: the directory's file URI).
        name: display name (default: the manifest's ``name``, else the directory name).
        enabled: the user's intent.
        client_id: set when a client published the plugin.

    Returns:
        The container. A missing root or a broken manifest gives ``load`` ``error`` and no
        ``children`` (nothing was parsed); broken parts give ``degraded`` or ``error``.
    """
    path = Path(root)
    uri = uri or path.resolve().as_uri()
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
                f"plugin root {path} does not exist or is not a directory"
            ),
        )
    manifest_name, problem = _manifest_name(path)
    if problem is not None:
        return PluginCustomization(
            **common, name=name or path.name, load=CustomizationLoadState.error(problem)
        )
    found: Found = ([], [])
    for kind in ("agent", "skill", "prompt", "rule", "hook", "mcpServer"):
        _collect(path, kind, found, nested=True)
    return PluginCustomization(
        **common,
        name=name or manifest_name or path.name,
        load=_load_state(found),
        children=tuple(found[0]),
    )


def scan_directory(
    path: str | Path,
    *,
    contents: str,
    writable: bool = False,
    id: str | None = None,
    uri: str | None = None,
    name: str | None = None,
    enabled: bool = True,
) -> DirectoryCustomization:
    """Parse a watched directory holding children of one kind (``contents``).

    A directory that does not exist yet is ``loaded`` with ``children == ()``: clients may
    still create it through ``resourceWrite`` when ``writable``.

    Raises:
        ValueError: ``contents`` is not a child customization type.
    """
    if contents not in ("agent", "skill", "prompt", "rule", "hook", "mcpServer"):
        raise ValueError(f"contents {contents!r} is not a child customization type")
    folder = Path(path)
    uri = uri or folder.resolve().as_uri()
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
            **common, load=CustomizationLoadState.error(f"{folder} is a file, not a directory")
        )
    found: Found = ([], [])
    if folder.is_dir():
        _collect(folder, contents, found, nested=False)
    return DirectoryCustomization(**common, load=_load_state(found), children=tuple(found[0]))


def plugin_parser(
    locate: Callable[[ClientPluginCustomization], str | Path],
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
