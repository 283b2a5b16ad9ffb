"""One customization child from one component: Markdown frontmatter, hook tables, MCP servers.

Each builder takes what was read from a file and returns children; whatever it had to work
around goes to ``notes`` (``"<file>: <what happened>"``), which the scan shows on the container.
Recovery is per child: frontmatter that is not valid YAML is read line by line, a skill whose
``name`` disagrees with its folder keeps the folder name, and so on. Nothing here reads files.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import quote

from customtools._format import escape_control
from customtools._jsonpointer import format_pointer
from customtools._loading._frontmatter import (
    MetadataError,
    parse_frontmatter_block,
    split_frontmatter,
)
from customtools.host._jsonspan import member_ranges
from customtools.host._model import (
    AgentCustomization,
    ChildCustomization,
    HookCustomization,
    McpServerCustomization,
    PromptCustomization,
    RuleCustomization,
    SkillCustomization,
)
from customtools.host._parts import McpServerState

__all__ = [
    "Notes",
    "agent",
    "command",
    "customization_id",
    "hook_children",
    "lenient_fields",
    "markdown_fields",
    "mcp_children",
    "pointer_uri",
    "prompt",
    "rule",
    "skill",
    "split_top_level",
]

Notes = list[str]
MarkdownBuilder = Callable[[Path, str, dict[str, Any], Notes], ChildCustomization]

# ``key: value`` at the start of a line; the lenient reader's whole grammar.
_LINE = re.compile(r"([A-Za-z_][A-Za-z0-9_.-]*)[ \t]*:(?:[ \t]+(.*))?")
_OPEN, _CLOSE = "([{", ")]}"
_FRAGMENT_SAFE = "/~!$&'()*+,;=:@"  # characters a URI fragment may hold unescaped


def customization_id(uri: str) -> str:
    """A stable, opaque, session-unique id for the customization at ``uri``."""
    return "c-" + hashlib.sha256(uri.encode()).hexdigest()[:16]


def pointer_uri(file_uri: str, tokens: tuple[str | int, ...]) -> str:
    """``file_uri#<JSON Pointer>``: the URI of a declaration inside a JSON file (RFC 6901 §6)."""
    return f"{file_uri}#{quote(format_pointer(tokens), safe=_FRAGMENT_SAFE)}"


def _base(uri: str, name: str) -> dict[str, Any]:
    return {"id": customization_id(uri), "uri": uri, "name": name}


# -- frontmatter ----------------------------------------------------------------------------


def lenient_fields(block: str) -> dict[str, Any]:
    """Read a frontmatter block that is not valid YAML, one ``key: value`` line at a time.

    Indented lines, list items and lines without ``key:`` are skipped; a value keeps its text
    (surrounding quotes removed), except ``true`` / ``false``, which become booleans. This
    recovers what people usually write by hand: an unquoted ``: `` inside a description, or
    ``argument-hint: [file] [mode]``.
    """
    fields: dict[str, Any] = {}
    for line in block.splitlines():
        match = _LINE.fullmatch(line.rstrip())
        if match is None or not match.group(2):
            continue
        value = match.group(2).strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        fields[match.group(1)] = {"true": True, "false": False}.get(value.lower(), value)
    return fields


def markdown_fields(text: str, shown: str, notes: Notes) -> dict[str, Any]:
    """The frontmatter fields of a Markdown component (``{}`` when it has none).

    Uses the loader's frontmatter rules (:mod:`customtools._loading._frontmatter`); when the
    block is not valid YAML, or never closed, the fields are read leniently and a note says so.
    """
    try:
        block, _ = split_frontmatter(text)
    except MetadataError:
        notes.append(
            f"{shown}: frontmatter starts with '---' but is never closed, "
            "its fields were read line by line"
        )
        return lenient_fields(text.split("\n", 1)[1] if "\n" in text else "")
    try:
        return parse_frontmatter_block(block)
    except MetadataError as exc:
        reason = escape_control(str(exc))  # the loader's own error, not foreign code's
        notes.append(f"{shown}: {reason}, its fields were read line by line (quote the values)")
        return lenient_fields(block or "")


def _text(fields: Mapping[str, Any], key: str) -> str | None:
    value = fields.get(key)
    return value if isinstance(value, str) else None


def _bool(fields: Mapping[str, Any], key: str) -> bool | None:
    value = fields.get(key)
    return value if isinstance(value, bool) else None


def split_top_level(text: str) -> tuple[str, ...]:
    """Split ``text`` on commas that are not inside brackets.

    ``"Read, Agent(a, b), Bash(git *)"`` gives ``("Read", "Agent(a, b)", "Bash(git *)")``;
    ``"*.{ts,tsx}, docs/**"`` gives ``("*.{ts,tsx}", "docs/**")``. Empty items are dropped.
    """
    items: list[str] = []
    depth, start = 0, 0
    for pos, char in enumerate(text):
        if char in _OPEN:
            depth += 1
        elif char in _CLOSE:
            depth = max(depth - 1, 0)
        elif char == "," and depth == 0:
            items.append(text[start:pos])
            start = pos + 1
    items.append(text[start:])
    return tuple(item.strip() for item in items if item.strip())


def _strs(value: Any) -> tuple[str, ...] | None:
    if isinstance(value, str):
        return split_top_level(value) or None
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    return None


def _stem(path: Path, *suffixes: str) -> str:
    name = path.name
    for suffix in suffixes:
        if name.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return path.stem


# -- Markdown components -------------------------------------------------------------------


def agent(path: Path, shown: str, fields: dict[str, Any], notes: Notes) -> ChildCustomization:
    """An agent (``agents/*.md``): name (else the file stem), description, model, tools."""
    return AgentCustomization(
        **_base(path.as_uri(), _text(fields, "name") or _stem(path, ".agent.md", ".md")),
        description=_text(fields, "description"),
        model=_text(fields, "model"),
        tools=_strs(fields.get("tools")),
    )


def skill(path: Path, shown: str, fields: dict[str, Any], notes: Notes) -> ChildCustomization:
    """A skill (``<folder>/SKILL.md``), named after its folder.

    The folder is the skill's identity (it is the command users type), so a frontmatter
    ``name`` that differs, or no ``name`` at all, keeps the folder name and adds a note.
    """
    folder = path.parent.name
    name = _text(fields, "name")
    if name is None:
        notes.append(f"{shown}: frontmatter has no 'name', the folder name {folder!r} is used")
    elif name != folder:
        notes.append(
            f"{shown}: frontmatter name {name!r} differs from its folder {folder!r}: the folder "
            "name is used (rename one so they match)"
        )
    return SkillCustomization(
        **_base(path.as_uri(), folder),
        description=_text(fields, "description"),
        disable_model_invocation=_bool(fields, "disable-model-invocation"),
    )


def command(path: Path, shown: str, fields: dict[str, Any], notes: Notes) -> ChildCustomization:
    """A command (``commands/*.md``): a flat skill named after its file."""
    return SkillCustomization(
        **_base(path.as_uri(), _stem(path, ".md")),
        description=_text(fields, "description"),
        disable_model_invocation=_bool(fields, "disable-model-invocation"),
    )


def prompt(path: Path, shown: str, fields: dict[str, Any], notes: Notes) -> ChildCustomization:
    """A prompt (``prompts/*.md``; ``x.prompt.md`` is named ``x``)."""
    return PromptCustomization(
        **_base(path.as_uri(), _stem(path, ".prompt.md", ".md")),
        description=_text(fields, "description"),
    )


def rule(path: Path, shown: str, fields: dict[str, Any], notes: Notes) -> ChildCustomization:
    """A rule (``rules/*.mdc``, ``*.md``; ``x.instructions.md`` is named ``x``)."""
    globs = fields.get("globs", fields.get("applyTo"))
    return RuleCustomization(
        **_base(path.as_uri(), _stem(path, ".instructions.md", ".mdc", ".md")),
        description=_text(fields, "description"),
        always_apply=_bool(fields, "alwaysApply"),
        globs=_strs(globs),
    )


# -- JSON components -----------------------------------------------------------------------


def hook_children(
    data: Any, *, file_uri: str, pointer: tuple[str | int, ...], shown: str, notes: Notes
) -> list[ChildCustomization]:
    """One hook child per entry of a hooks table.

    ``data`` is either ``{"hooks": {event: [entries]}}`` or the table itself; ``pointer`` is
    where ``data`` sits in its file (``()`` for a hooks file, ``("hooks",)`` inline in a
    manifest). Each child's URI ends in the JSON Pointer of its entry.
    """
    table = data
    if isinstance(data, Mapping) and isinstance(data.get("hooks"), Mapping):
        table, pointer = data["hooks"], (*pointer, "hooks")
    if not isinstance(table, Mapping):
        notes.append(f"{shown}: expected an object of event names to hook lists, skipped")
        return []
    children: list[ChildCustomization] = []
    for event, entries in table.items():
        if not isinstance(entries, list):
            notes.append(f"{shown}: hooks for {event!r} must be a list of entries, skipped")
            continue
        for index, entry in enumerate(entries):
            matcher = entry.get("matcher") if isinstance(entry, Mapping) else None
            children.append(
                HookCustomization(
                    **_base(pointer_uri(file_uri, (*pointer, event, index)), event),
                    event=event,
                    matcher=matcher if isinstance(matcher, str) else None,
                )
            )
    return children


def mcp_children(
    data: Any,
    text: str,
    *,
    file_uri: str,
    pointer: tuple[str | int, ...],
    shown: str,
    notes: Notes,
) -> list[ChildCustomization]:
    """One MCP server child per declared server, with the ``range`` of its declaration.

    ``data`` is ``{"mcpServers": {name: config}}`` or the map of names to configs itself
    (Claude Code reads both). ``pointer`` is where ``data`` sits in ``text``.
    """
    servers = data
    if isinstance(data, Mapping) and isinstance(data.get("mcpServers"), Mapping):
        servers, pointer = data["mcpServers"], (*pointer, "mcpServers")
    elif not isinstance(data, Mapping):
        notes.append(f"{shown}: expected an object of MCP server names to configs, skipped")
        return []
    ranges = member_ranges(text, pointer)
    children: list[ChildCustomization] = []
    for name, config in servers.items():
        if not isinstance(config, Mapping):
            notes.append(f"{shown}: MCP server {name!r} must be an object, skipped")
            continue
        children.append(
            McpServerCustomization(
                **_base(pointer_uri(file_uri, (*pointer, name)), name),
                enabled=config.get("disabled") is not True,
                state=McpServerState(kind="stopped"),
                range=ranges.get(name),
            )
        )
    return children
