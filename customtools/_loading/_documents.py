"""Reading data files a project or plugin controls: bounded in size, depth and node count.

Metadata files, plugin manifests and the plugin registry are data, never code, but they come
from places an attacker may write to (a cloned repository, a plugin archive). Reading one must
cost a bounded amount of time and memory and fail alone:

- only regular files are read (a FIFO or a device would block or never end), opened
  non-blocking and checked with ``fstat`` after opening, so a swap after the scan's ``stat``
  does not help;
- at most ``max_bytes`` are read (:data:`MAX_DOCUMENT_BYTES` by default);
- a document is at most :data:`MAX_DOCUMENT_DEPTH` levels deep and holds at most
  :data:`MAX_DOCUMENT_NODES` values (scalars and containers), so a host that serialises it
  (``json.dumps``, ``LoadResult.to_dict()``) does not recurse or allocate without bound;
- every failure is a :class:`DocumentError` (a ``ValueError``) naming the problem, which the
  caller turns into a diagnostic or a load error for that one file.

YAML frontmatter has its own reader (``_frontmatter``) that applies the same limits while it
parses and refuses aliases.
"""

from __future__ import annotations

import json
import os
import stat
from typing import Any

from customtools._format import escape_control

__all__ = [
    "MAX_DOCUMENT_BYTES",
    "MAX_DOCUMENT_DEPTH",
    "MAX_DOCUMENT_NODES",
    "DocumentError",
    "check_document_shape",
    "is_inside",
    "loads_json_document",
    "read_regular_file",
]

MAX_DOCUMENT_BYTES = 1024 * 1024
"""The default size cap of a data file (bytes)."""

MAX_DOCUMENT_DEPTH = 32
"""How deeply containers may nest in a metadata file or manifest (the top level is 1)."""

MAX_DOCUMENT_NODES = 10_000
"""How many values (scalars and containers, keys not counted) one document may hold."""


class DocumentError(ValueError):
    """A data file cannot be read within the limits, or is malformed."""


def is_inside(path: str, root: str) -> bool:
    """Whether ``path`` is ``root`` or below it (both absolute and already real)."""
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def read_regular_file(path: str, *, max_bytes: int = MAX_DOCUMENT_BYTES) -> bytes:
    """The bytes of the regular file at ``path``, at most ``max_bytes`` of them.

    Raises:
        OSError: the file cannot be opened or read.
        DocumentError: it is not a regular file, or it is larger than ``max_bytes``.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    fd = os.open(path, flags)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise DocumentError("not a regular file; not read")
        chunks: list[bytes] = []
        size = 0
        while size <= max_bytes:
            chunk = os.read(fd, max_bytes + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    finally:
        os.close(fd)
    if size > max_bytes:
        raise DocumentError(f"larger than {max_bytes} bytes; not read")
    return b"".join(chunks)


def check_document_shape(
    data: Any, *, max_depth: int = MAX_DOCUMENT_DEPTH, max_nodes: int = MAX_DOCUMENT_NODES
) -> None:
    """Check that ``data`` (parsed JSON) nests at most ``max_depth`` deep and is small enough.

    The walk is iterative and stops at the first breach, so it is cheap on any input.

    Raises:
        DocumentError: too deep or too many values.
    """
    stack: list[tuple[Any, int]] = [(data, 1)]
    nodes = 1
    while stack:
        value, depth = stack.pop()
        if not isinstance(value, (dict, list)):
            continue
        if depth > max_depth:
            raise DocumentError(f"nested more than {max_depth} levels deep; not read")
        nodes += len(value)
        if nodes > max_nodes:
            raise DocumentError(f"holds more than {max_nodes} values; not read")
        children = value.values() if isinstance(value, dict) else value
        stack.extend((child, depth + 1) for child in children)


def loads_json_document(
    raw: bytes, *, max_depth: int = MAX_DOCUMENT_DEPTH, max_nodes: int = MAX_DOCUMENT_NODES
) -> Any:
    """Parse UTF-8 JSON (a BOM is allowed) and check its shape.

    Raises:
        DocumentError: not UTF-8, not valid JSON, nested too deeply or too large.
    """
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise DocumentError("not UTF-8 text") from None
    try:
        data = json.loads(text)
    except RecursionError:
        raise DocumentError(f"nested more than {max_depth} levels deep; not read") from None
    except ValueError as exc:
        raise DocumentError(f"not valid JSON ({escape_control(str(exc))})") from None
    check_document_shape(data, max_depth=max_depth, max_nodes=max_nodes)
    return data
