"""JSON Pointer (RFC 6901): the one place that escapes and joins reference tokens."""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["escape_token", "format_pointer", "unescape_token"]


def escape_token(token: str | int) -> str:
    """One reference token escaped for a pointer: ``~`` becomes ``~0``, ``/`` becomes ``~1``."""
    return str(token).replace("~", "~0").replace("/", "~1")


def unescape_token(token: str) -> str:
    """The inverse of :func:`escape_token`."""
    return token.replace("~1", "/").replace("~0", "~")


def format_pointer(tokens: Iterable[str | int]) -> str:
    """The pointer for a path of keys and indexes: ``()`` is ``""``, ``("a", 0)`` is ``"/a/0"``."""
    return "".join("/" + escape_token(token) for token in tokens)
