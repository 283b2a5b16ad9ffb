"""Path rules shared by every source: ``~``, relative-to-cwd, ``file://`` URLs, display.

A configured path goes through :func:`resolve_path` exactly once. The result is absolute and
lexically normalised but *not* resolved through symlinks: the path as the user wrote it stays
visible in reports, and the real path (the dedupe key) is computed by the scan.
"""

from __future__ import annotations

import os
from urllib.parse import unquote, urlsplit

from customtools._format import escape_control

__all__ = ["display_path", "encodable_path", "expand_home", "is_inside", "resolve_path"]

_LOCAL_HOSTS = frozenset({"", "localhost"})


def _file_url_to_path(url: str) -> str:
    parts = urlsplit(url)
    if parts.netloc not in _LOCAL_HOSTS:
        raise ValueError(
            f"file URL {url!r} names the remote host {parts.netloc!r}; "
            "only local file URLs (file:///path or file://localhost/path) are accepted"
        )
    if parts.query or parts.fragment:
        raise ValueError(f"file URL {url!r} has a query or fragment; give a plain file URL")
    path = unquote(parts.path, errors="surrogateescape")
    if os.name == "nt" and len(path) > 2 and path[0] == "/" and path[2] == ":":
        path = path[1:]  # file:///C:/x -> C:/x
    if not path:
        raise ValueError(f"file URL {url!r} has no path")
    return path


def expand_home(path: str, home: str) -> str:
    """Expand a leading ``~`` against ``home``.

    ``~`` and ``~/x`` use ``home`` (so a host or a test can point it elsewhere); ``~user/x``
    is looked up as that user's home directory and left unchanged when there is no such user.

    Args:
        path: the path as written.
        home: the home directory to use for ``~``.

    Returns:
        The expanded path (still possibly relative).
    """
    if not path.startswith("~"):
        return path
    if path == "~":
        return home
    if path[1] in "/" + os.sep:
        return os.path.join(home, path[2:])
    return os.path.expanduser(path)


def resolve_path(
    path: str | os.PathLike[str],
    cwd: str | os.PathLike[str],
    *,
    home: str | os.PathLike[str] | None = None,
) -> str:
    """Turn a configured path into an absolute, normalised path.

    In order: a ``file://`` URL becomes its local path; a leading ``~`` is expanded (see
    :func:`expand_home`); a relative path is joined onto ``cwd``; ``.`` and ``..`` segments are
    folded lexically. Symlinks are *not* resolved here.

    Args:
        path: the path as configured (``str``, ``os.PathLike`` or ``file://`` URL).
        cwd: the directory relative paths are resolved from.
        home: the home directory for ``~``; defaults to the user's home (``$HOME``).

    Returns:
        The absolute path.

    Raises:
        ValueError: the path is empty, contains a NUL byte, or is a non-local ``file://`` URL.
    """
    text = os.fspath(path)
    if not text.strip():
        raise ValueError("empty tool path; give a file or directory")
    if "\x00" in text:
        raise ValueError(f"tool path {text!r} contains a NUL byte")
    if text[:7].lower() == "file://":
        text = _file_url_to_path(text)
    home_dir = os.fspath(home) if home is not None else os.path.expanduser("~")
    text = expand_home(text, home_dir)
    if not os.path.isabs(text):
        text = os.path.join(os.fspath(cwd), text)
    return os.path.normpath(text)


def encodable_path(path: str) -> str:
    """``path`` with bytes that are not UTF-8 shown as ``\\xNN``, so it can be encoded.

    File names that are not valid UTF-8 arrive as surrogate escapes; writing those raises
    ``UnicodeEncodeError``. Control characters are kept: use this for data (a JSON report
    escapes them itself) and :func:`display_path` for messages.
    """
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return os.fsencode(path).decode("utf-8", "backslashreplace")
    return path


def display_path(path: str) -> str:
    """A path safe to put into a message, a terminal or a CI log.

    Undecodable bytes show as ``\\xNN`` (see :func:`encodable_path`) and control characters
    (newlines, carriage returns, escape sequences) as escapes, so a file named
    ``"x\\n::error::y.py"`` cannot start a new log line. The path used for I/O stays
    untouched.
    """
    return escape_control(encodable_path(path))


def is_inside(path: str, root: str) -> bool:
    """Whether ``path`` is ``root`` or below it (both absolute and already real)."""
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)
