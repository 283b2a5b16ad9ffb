"""Reading a function's docstring: its summary and one description per parameter.

Three styles are understood, because authors already write them:

- Google: an ``Args:`` (or ``Arguments:``, ``Parameters:``, ``Params:``) section whose lines
  are ``name: text`` or ``name (type): text``, continued on more-indented lines;
- NumPy: a ``Parameters`` heading underlined with dashes, then ``name : type`` lines with the
  description indented below;
- Sphinx: ``:param name: text`` or ``:param type name: text`` fields.

The description is everything before the first section or field. Sections this reader does not
use (``Returns:``, ``Raises:``, ``Examples``, ...) are left out of the description, so the model
reads what the tool does, not how it is documented for Python readers.
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass, field

__all__ = ["Docstring", "parse_docstring"]

_GOOGLE_PARAMS = frozenset({"args", "arguments", "parameters", "params", "keyword args"})
_GOOGLE_SECTION = re.compile(r"^([A-Za-z][A-Za-z ]*):\s*$")
_GOOGLE_ITEM = re.compile(r"^\*{0,2}([A-Za-z_][A-Za-z0-9_]*)\s*(?:\([^)]*\))?\s*:\s*(.*)$")
_NUMPY_UNDERLINE = re.compile(r"^\s*-{3,}\s*$")
_NUMPY_ITEM = re.compile(r"^\*{0,2}([A-Za-z_][A-Za-z0-9_]*)\s*(?::.*)?$")
_SPHINX_FIELD = re.compile(r"^:(\w+)(?:\s+([^:]+?))?:\s*(.*)$")


@dataclass(frozen=True, slots=True)
class Docstring:
    """What a docstring says: the summary text and each parameter's description."""

    description: str = ""
    params: dict[str, str] = field(default_factory=dict)


def _join(lines: list[str]) -> str:
    return " ".join(line.strip() for line in lines if line.strip())


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _google(lines: list[str], start: int, params: dict[str, str]) -> int:
    """Read a Google parameter section starting after its heading; return the next index."""
    index = start
    base: int | None = None
    items: list[tuple[str, list[str]]] = []  # each parameter and its lines
    while index < len(lines):
        line = lines[index]
        if line.strip() and _indent(line) == 0:
            break  # the next section
        if line.strip():
            base = _indent(line) if base is None else base
            match = _GOOGLE_ITEM.match(line.strip()) if _indent(line) == base else None
            if match is not None:
                items.append((match.group(1), [match.group(2)]))
            elif items:
                items[-1][1].append(line)
        index += 1
    params.update((name, _join(buffer)) for name, buffer in items)
    return index


def _numpy(lines: list[str], start: int, params: dict[str, str]) -> int:
    """Read a NumPy ``Parameters`` section starting after its underline."""
    index = start
    items: list[tuple[str, list[str]]] = []  # each parameter and its lines
    while index < len(lines):
        line = lines[index]
        if index + 1 < len(lines) and _NUMPY_UNDERLINE.match(lines[index + 1]) and line.strip():
            break  # the next section's heading
        if line.strip() and _indent(line) == 0:
            match = _NUMPY_ITEM.match(line.strip())
            if match is None:
                break
            items.append((match.group(1), []))
        elif items:
            items[-1][1].append(line)
        index += 1
    params.update((name, _join(buffer)) for name, buffer in items)
    return index


def _sphinx(lines: list[str], start: int, params: dict[str, str]) -> int:
    """Read one Sphinx field starting at ``start``; return the index after it."""
    match = _SPHINX_FIELD.match(lines[start].strip())
    assert match is not None  # the caller checked
    kind, target, text = match.groups()
    buffer = [text]
    index = start + 1
    while index < len(lines) and lines[index].strip() and _indent(lines[index]) > 0:
        buffer.append(lines[index])
        index += 1
    if kind in ("param", "parameter", "arg", "argument", "key", "keyword") and target:
        params[target.split()[-1]] = _join(buffer)
    return index


def parse_docstring(doc: str | None) -> Docstring:
    """Split ``doc`` into its description and per-parameter descriptions (any style)."""
    if not doc or not doc.strip():
        return Docstring()
    lines = inspect.cleandoc(doc).splitlines()
    params: dict[str, str] = {}
    summary: list[str] = []
    in_summary = True
    index = 0
    while index < len(lines):
        line = lines[index]
        stripped = line.strip()
        heading = _GOOGLE_SECTION.match(line)
        if heading is not None and _indent(line) == 0:
            in_summary = False
            if heading.group(1).strip().lower() in _GOOGLE_PARAMS:
                index = _google(lines, index + 1, params)
                continue
        elif index + 1 < len(lines) and stripped and _NUMPY_UNDERLINE.match(lines[index + 1]):
            in_summary = False
            if stripped.lower() in ("parameters", "other parameters"):
                index = _numpy(lines, index + 2, params)
                continue
            index += 2
            continue
        elif _SPHINX_FIELD.match(stripped):
            in_summary = False
            index = _sphinx(lines, index, params)
            continue
        if in_summary:
            summary.append(line)
        index += 1
    paragraphs = "\n".join(summary).strip().split("\n\n")
    description = "\n\n".join(_join(p.splitlines()) for p in paragraphs if p.strip())
    return Docstring(description=description, params=params)
