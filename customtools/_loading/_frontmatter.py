"""Reading metadata files: YAML frontmatter of ``.md`` files and the object of ``.json`` files.

Metadata describes a tool for people (a name and a description); it is never executed and
never takes a name from a module. A file that cannot be read or parsed becomes a
``Diagnostic`` with code ``"invalid-metadata"``: it is not a tool, so it is not a load error.
PyYAML is imported only when a frontmatter block needs it: the common form, flat
``key: plain text`` lines, is read directly (see :func:`_plain_mapping`), which saves the
PyYAML import (about 30 ms) on most loads.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from typing import Any, Literal

from customtools._loading._paths import display_path
from customtools._loading._records import Diagnostic, MetadataFile, ToolSource

__all__ = [
    "MAX_METADATA_BYTES",
    "MetadataError",
    "parse_frontmatter",
    "parse_frontmatter_block",
    "read_metadata_file",
    "split_frontmatter",
]

MAX_METADATA_BYTES = 1024 * 1024
"""Metadata files larger than this are not read (a diagnostic says so)."""

_OPENERS = ("---\n", "---\r\n")
_CLOSERS = frozenset({"---", "..."})


# A flat `key: value` line whose value YAML reads as the same plain string: the value starts
# with a letter (so it is no number, date, quote, flow collection, anchor, tag or block
# scalar) and holds no ": " or " #" (no nested mapping, no comment).
_PLAIN_LINE = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*):[ \t]+([A-Za-z][^\n]*)")
_YAML_WORDS = frozenset({"y", "n", "yes", "no", "on", "off", "true", "false", "null", "nan", "inf"})


def _plain_mapping(block: str) -> dict[str, Any] | None:
    """Read ``block`` without PyYAML when every line is ``key: plain text``; else ``None``.

    The result is what ``yaml.safe_load`` returns for such a block (a test checks both agree
    on every accepted form); anything this does not recognise goes to PyYAML.
    """
    data: dict[str, Any] = {}
    for line in block.splitlines():
        if not line.strip():
            continue
        match = _PLAIN_LINE.fullmatch(line.rstrip())
        if match is None:
            return None
        key, value = match.groups()
        if (
            key in data
            or key.lower() in _YAML_WORDS  # YAML 1.1 reads `on:` or `yes:` as a boolean key
            or ": " in value
            or ":\t" in value
            or " #" in value
            or "\t#" in value
            or value.endswith(":")
            or value.lower() in _YAML_WORDS
        ):
            return None
        data[key] = value
    return data


class MetadataError(ValueError):
    """A metadata file's frontmatter or JSON is malformed."""


def split_frontmatter(text: str) -> tuple[str | None, str]:
    """Split a Markdown text into its YAML frontmatter block and its body.

    The frontmatter is the block between a first line ``---`` and the next line ``---`` (or
    ``...``). Returns ``(None, text)`` when the text has no frontmatter.

    Raises:
        MetadataError: the text starts with ``---`` but the block is never closed.
    """
    if not text.startswith(_OPENERS):
        return None, text
    offset = len(text.split("\n", 1)[0]) + 1
    lines = text[offset:].splitlines(keepends=True)
    block_lines: list[str] = []
    for line in lines:
        offset += len(line)
        if line.rstrip() in _CLOSERS:
            return "".join(block_lines).rstrip("\r\n"), text[offset:]
        block_lines.append(line)
    raise MetadataError("frontmatter starts with '---' but has no closing '---' line")


def parse_frontmatter(text: str) -> dict[str, Any]:
    """Return the YAML frontmatter mapping of a Markdown text (``{}`` when there is none).

    Raises:
        MetadataError: the block is unterminated, is not valid YAML, or is not a mapping.
    """
    return parse_frontmatter_block(split_frontmatter(text)[0])


def parse_frontmatter_block(block: str | None) -> dict[str, Any]:
    """Parse a frontmatter block (as :func:`split_frontmatter` returns it) into a mapping.

    Raises:
        MetadataError: the block is not valid YAML or is not a mapping.
    """
    if block is None:
        return {}
    plain = _plain_mapping(block)
    if plain is not None:
        return plain
    try:
        import yaml
    except ImportError as exc:  # pragma: no cover - PyYAML is a declared dependency
        raise MetadataError("PyYAML is not installed; install it to read frontmatter") from exc
    try:
        data = yaml.safe_load(block) if block.strip() else {}
    except yaml.YAMLError as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise MetadataError(f"frontmatter is not valid YAML ({first})") from exc
    if not isinstance(data, dict):
        raise MetadataError(f"frontmatter must be a mapping, not {type(data).__name__}")
    return {str(key): value for key, value in data.items()}


def _parse_json(text: str) -> dict[str, Any]:
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise MetadataError(f"not valid JSON ({exc})") from exc
    if not isinstance(data, dict):
        raise MetadataError(f"the JSON top level must be an object, not {type(data).__name__}")
    return data


def _text_field(data: Mapping[str, Any], key: str) -> str | None:
    value = data.get(key)
    return value.strip() if isinstance(value, str) and value.strip() else None


def read_metadata_file(
    path: str,
    *,
    resolved_path: str,
    source: ToolSource,
) -> MetadataFile | Diagnostic:
    """Read one ``.md`` or ``.json`` file into a :class:`MetadataFile`.

    ``name`` comes from the ``name`` field, else the file stem; ``description`` from the
    ``description`` field, else ``""``. Every field read is kept in ``data``.

    Args:
        path: the file as found.
        resolved_path: its real path.
        source: where it was found.

    Returns:
        The record, or a ``Diagnostic`` (code ``"invalid-metadata"``) when the file cannot be
        read or parsed. Never raises for a bad file.
    """
    stem, ext = os.path.splitext(os.path.basename(path))
    fmt: Literal["md", "json"] = "json" if ext.lower() == ".json" else "md"
    try:
        with open(path, "rb") as handle:
            raw = handle.read(MAX_METADATA_BYTES + 1)
        if len(raw) > MAX_METADATA_BYTES:
            raise MetadataError(f"larger than {MAX_METADATA_BYTES} bytes; not read")
        text = raw.decode("utf-8-sig")
        data = _parse_json(text) if fmt == "json" else parse_frontmatter(text)
    except (OSError, UnicodeDecodeError, MetadataError) as exc:
        cause = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        if isinstance(exc, UnicodeDecodeError):
            cause = "not UTF-8 text"
        return Diagnostic(
            code="invalid-metadata",
            message=(
                f"metadata file {display_path(path)} was ignored: {cause}; "
                "fix it (it is never executed, only read for a name and description)"
            ),
            path=path,
            source=source,
        )
    return MetadataFile(
        path=path,
        resolved_path=resolved_path,
        name=_text_field(data, "name") or stem,
        description=_text_field(data, "description") or "",
        source=source,
        format=fmt,
        data=data,
    )
