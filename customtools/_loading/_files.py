"""Reading a data file found on disk without trusting it: regular files only, capped, bounded.

Every scanner that reads files a checkout or a plugin can ship (metadata, manifests, the host
toolkit's agents, skills, hooks and ``.mcp.json``) goes through :func:`read_text_file` and
:func:`load_json`, so one rule set holds everywhere:

* only a **regular file** is read (a symlink is followed first): a FIFO, a socket, a device
  such as ``/dev/zero`` or a directory is refused without opening it for a blocking read;
* at most ``max_bytes`` are read (:data:`MAX_FILE_BYTES` by default, the metadata cap);
* the text must be UTF-8 (a leading BOM is dropped);
* JSON nesting is limited to :data:`MAX_JSON_DEPTH` levels, checked before parsing, so a
  100,000-level file is a clear error rather than a ``RecursionError``.

A failure is a :class:`FileRuleError` whose message says what is wrong with the file (without
naming it: the caller knows how to show the path). Callers turn it into a per-file diagnostic.
"""

from __future__ import annotations

import json
import os
import re
import stat
from typing import Any

__all__ = [
    "MAX_FILE_BYTES",
    "MAX_JSON_DEPTH",
    "FileRuleError",
    "file_kind",
    "json_depth",
    "load_json",
    "read_text_file",
]

MAX_FILE_BYTES = 1024 * 1024
"""The largest data file read, in bytes (also the cap of metadata files)."""

MAX_JSON_DEPTH = 64
"""The deepest JSON nesting (objects and arrays) accepted."""

_STRINGS = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
_BRACKETS = re.compile(r"[\[\]{}]")


class FileRuleError(ValueError):
    """A data file breaks a reading rule (not regular, too large, not UTF-8, too deep, ...)."""


def file_kind(mode: int) -> str:
    """What a file that is not a regular one is, for a message ("a FIFO (named pipe)", ...)."""
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def read_text_file(path: str | os.PathLike[str], *, max_bytes: int = MAX_FILE_BYTES) -> str:
    """Return the UTF-8 text of the regular file at ``path`` (symlinks followed).

    Raises:
        FileRuleError: the path is a broken symlink, is not a regular file, is larger than
            ``max_bytes`` or is not UTF-8 text.
        OSError: the file exists but cannot be read (permissions, I/O error).
    """
    try:
        st = os.stat(path)
    except FileNotFoundError:
        if os.path.islink(path):
            raise FileRuleError("is a broken symlink (its target does not exist)") from None
        raise
    if not stat.S_ISREG(st.st_mode):
        raise FileRuleError(f"is {file_kind(st.st_mode)}, not a regular file")
    # O_NONBLOCK: if the path was swapped for a FIFO after the check, open() must not hang.
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    fd = os.open(path, flags)
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise FileRuleError("is not a regular file")
        raw = handle.read(max_bytes + 1)
    if len(raw) > max_bytes:
        raise FileRuleError(f"is larger than {max_bytes} bytes")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise FileRuleError("is not UTF-8 text") from None


def json_depth(text: str) -> int:
    """The deepest nesting of ``[``/``{`` in JSON ``text`` (brackets inside strings ignored).

    Linear in the size of ``text`` and never recursive, so it is safe on hostile input.
    """
    depth = deepest = 0
    for bracket in _BRACKETS.findall(_STRINGS.sub("", text)):
        if bracket in "[{":
            depth += 1
            deepest = max(deepest, depth)
        else:
            depth -= 1
    return deepest


def load_json(text: str, *, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """Parse JSON ``text`` whose nesting is at most ``max_depth`` levels.

    Raises:
        FileRuleError: the text nests deeper than ``max_depth`` or is not valid JSON.
    """
    depth = json_depth(text)
    if depth > max_depth:
        raise FileRuleError(f"nests deeper than {max_depth} levels ({depth})")
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise FileRuleError(f"is not valid JSON ({_json_problem(exc)})") from None


def _json_problem(exc: BaseException) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return f"{exc.msg} at line {exc.lineno} column {exc.colno}"
    return type(exc).__name__
