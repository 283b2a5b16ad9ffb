"""Where each member of a JSON object sits in the text: spans for ``range`` on inline declarations.

An MCP server declared in ``.mcp.json`` is a child whose ``uri`` names the file and whose
``range`` narrows it to the declaration. The span is found by tokenizing the JSON (strings,
numbers, literals, nesting), never by searching the text for the name, so a server name that
also appears as a value, inside another string or at another depth cannot mislead it.

Call only on text :func:`customtools._loading._files.load_json` accepted: nesting is bounded
there, so the recursion here is bounded too.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from customtools.host._parts import TextRange

__all__ = ["member_ranges", "member_spans", "text_range"]

_WS = re.compile(r"[ \t\r\n]*")
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
_SCALAR = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null")

Member = tuple[str | int, int, int, int]  # key (an index in an array), its start, value start, end


class _MalformedError(ValueError):
    pass


def _skip_ws(text: str, pos: int) -> int:
    match = _WS.match(text, pos)
    return match.end() if match else pos


def _string_end(text: str, pos: int) -> int:
    match = _STRING.match(text, pos)
    if match is None:
        raise _MalformedError(pos)
    return match.end()


def _value_end(text: str, pos: int) -> int:
    """The offset just past the JSON value starting at ``pos``."""
    char = text[pos : pos + 1]
    if char == '"':
        return _string_end(text, pos)
    if char in ("{", "["):
        return _members(text, pos, char)[1]
    match = _SCALAR.match(text, pos)
    if match is None:
        raise _MalformedError(pos)
    return match.end()


def _members(text: str, pos: int, opening: str) -> tuple[list[Member], int]:
    """The members of the object (``opening`` ``{``) or the elements of the array (``[``,
    their key the index) starting at ``pos``, and the offset just past it."""
    if not text.startswith(opening, pos):
        raise _MalformedError(pos)
    closing = "}" if opening == "{" else "]"
    out: list[Member] = []
    pos = _skip_ws(text, pos + 1)
    if text.startswith(closing, pos):
        return out, pos + 1
    while True:
        key: str | int = len(out)
        key_start = pos
        if opening == "{":
            key_end = _string_end(text, pos)
            key = json.loads(text[key_start:key_end])  # decodes escapes: "\u0066iles" is "files"
            pos = _skip_ws(text, key_end)
            if not text.startswith(":", pos):
                raise _MalformedError(pos)
            pos = _skip_ws(text, pos + 1)
        value_end = _value_end(text, pos)
        out.append((key, key_start, pos, value_end))
        pos = _skip_ws(text, value_end)
        if text.startswith(closing, pos):
            return out, pos + 1
        if not text.startswith(",", pos):
            raise _MalformedError(pos)
        pos = _skip_ws(text, pos + 1)


def member_spans(text: str, path: Sequence[str | int] = ()) -> dict[str, tuple[int, int]]:
    """``{key: (start, end)}`` for the members of the object at ``path`` in JSON ``text``.

    ``start`` is the offset of the key's opening quote, ``end`` the offset just past its value.
    ``path`` names the keys (and array indexes) leading from the top-level value to the
    wanted object (``()`` is the top level, ``("mcpServers",)`` the object under it). A
    duplicate key gives the last occurrence, as :func:`json.loads` keeps the last value.
    Returns ``{}`` when ``path`` does not lead to an object or the text is not JSON.
    """
    try:
        pos = _skip_ws(text, 0)
        for step in path:
            members, _ = _members(text, pos, "[" if isinstance(step, int) else "{")
            found = [m for m in members if m[0] == step]
            if not found:
                return {}
            pos = found[-1][2]
        members, _ = _members(text, pos, "{")
    except (_MalformedError, ValueError, IndexError):
        return {}
    return {str(key): (start, end) for key, start, _, end in members}


def text_range(text: str, start: int, end: int) -> TextRange:
    """The zero-based line/character range of ``text[start:end]``."""
    return TextRange(
        start_line=text.count("\n", 0, start),
        start_character=start - (text.rfind("\n", 0, start) + 1),
        end_line=text.count("\n", 0, end),
        end_character=end - (text.rfind("\n", 0, end) + 1),
    )


def member_ranges(text: str, path: Sequence[str | int] = ()) -> dict[str, TextRange]:
    """:func:`member_spans` as :class:`TextRange` values (lines and characters)."""
    return {key: text_range(text, *span) for key, span in member_spans(text, path).items()}
