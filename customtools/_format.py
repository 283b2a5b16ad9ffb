"""Text from foreign objects, made safe: every place that prints tool code's exceptions uses this.

Tool code controls the exceptions it raises. Their ``__str__`` and ``__repr__`` may raise,
return something that is not a string, hang on a huge payload, or carry control characters.
:func:`describe_exception` always returns a short, one-line, printable ``str`` and never
raises (short of ``MemoryError`` in the interpreter itself), so a loader, an adapter, a
renderer or ``validate`` can report the failure instead of failing with it.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, NamedTuple, cast

if TYPE_CHECKING:
    import logging

__all__ = [
    "MAX_MESSAGE_CHARS",
    "InvisibleChar",
    "describe_exception",
    "escape_control",
    "find_invisible",
    "logger",
    "safe_repr",
    "safe_str",
]

MAX_MESSAGE_CHARS = 500
"""The longest message text :func:`describe_exception` keeps (then ``...``)."""

# C0 and C1 controls, DEL, and the Unicode line/paragraph separators; TAB is kept.
_CONTROL = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029]")


def _escape_one(match: re.Match[str]) -> str:
    char = match.group()
    if char == "\n":
        return "\\n"
    if char == "\r":
        return "\\r"
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def escape_control(text: str) -> str:
    """``text`` with control characters, newlines and lone surrogates shown as escapes.

    The result is safe to write to a terminal or a CI log: no escape sequence, carriage
    return or newline in it can move the cursor, retitle a window or start a new log line.
    """
    text = _CONTROL.sub(_escape_one, text)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def _call_text(method: object, obj: object) -> str | None:
    try:
        value = method(obj)  # type: ignore[operator]
    except Exception:
        return None
    return value if isinstance(value, str) else None


def safe_str(obj: object) -> str | None:
    """``str(obj)``, or ``None`` when that raises or does not give a string."""
    return _call_text(str, obj)


def safe_repr(obj: object) -> str:
    """``repr(obj)``, or a stand-in naming the type when that raises or gives no string."""
    text = _call_text(repr, obj)
    if text is None:
        return f"<{_type_name(obj)} object (repr failed)>"
    return text


def _type_name(obj: object) -> str:
    name = getattr(type(obj), "__qualname__", None)
    return name if isinstance(name, str) else "object"


def describe_exception(exc: BaseException, *, limit: int = MAX_MESSAGE_CHARS) -> str:
    """One printable line for ``exc``: ``"TypeName: first line of the message"``.

    Never raises for anything ``exc`` does: a ``__str__`` that raises or returns a non-string
    gives ``"TypeName (its message could not be read: __str__ failed)"``. Control characters
    are escaped and the message is cut at ``limit`` characters.
    """
    name = escape_control(_type_name(exc))
    text = safe_str(exc)
    if text is None:
        return f"{name} (its message could not be read: __str__ failed)"
    text = text.strip()
    if not text:
        return f"{name} with no message"
    first = escape_control(text.splitlines()[0] if text.splitlines() else text)
    if len(first) > limit:
        first = first[: max(limit - 3, 0)] + "..."
    return f"{name}: {first}"


class InvisibleChar(NamedTuple):
    """One invisible or direction-changing character found in prompt text."""

    position: int
    """Its position in the text (in code points)."""
    codepoint: str
    """``"U+200B"`` and the like."""
    name: str
    """Its Unicode name, or a short description when it has none."""


# Zero-width and joiner characters, the soft hyphen and combining grapheme joiner,
# bidirectional embeddings/overrides/isolates and marks, invisible operators, the BOM, the
# Mongolian vowel separator, the tag block (which can carry hidden ASCII text) and variation
# selectors (which can smuggle bytes), except U+FE0F, which ordinary emoji use.
_INVISIBLE = re.compile(
    "[\u00ad\u034f\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069"
    "\u061c\ufe00-\ufe0e\ufeff\U000e0000-\U000e007f\U000e0100-\U000e01ef]"
)


def find_invisible(text: str) -> list[InvisibleChar]:
    """Invisible or bidirectional control characters in ``text``, in order.

    Tool descriptions, labels and metadata are read by a model as prompt text; characters a
    person cannot see (zero-width spaces, bidi overrides, Unicode tag characters) can hide
    instructions from the person who approves them. An empty list means none were found.
    """
    import unicodedata

    found: list[InvisibleChar] = []
    for match in _INVISIBLE.finditer(text):
        char = match.group()
        name = unicodedata.name(char, "") or f"tag or control character {ord(char):#x}"
        found.append(InvisibleChar(match.start(), f"U+{ord(char):04X}", name))
    return found


class _LazyLogger:
    __slots__ = ("_logger", "_name")

    def __init__(self, name: str) -> None:
        self._name = name
        self._logger: Any = None

    def __getattr__(self, attr: str) -> Any:
        if self._logger is None:
            import logging

            self._logger = logging.getLogger(self._name)
        return getattr(self._logger, attr)


def logger(name: str) -> logging.Logger:
    """The :class:`logging.Logger` ``name``, looked up when it is first used.

    The package logs on failure paths only, so ``import customtools`` does not import
    :mod:`logging` (nor the ``traceback``, ``string`` and ``threading`` it brings).
    """
    return cast("logging.Logger", _LazyLogger(name))
