"""The manifest cache of lazy loading: tool definitions kept on disk, per directory.

One file per directory of tool modules, in ``<home>/.<app_name>/cache/manifests/`` (beside
the trust store): a header line ``customtools-manifests <SHA-256 of the body>``, then a JSON
body ``{"format": 1, "versions": [...], "entries": {<resolved path>: <entry>}}``. The
entries' meaning is :mod:`customtools._loading._lazy`'s; this module only keeps them safe:

* written atomically (a temporary file in the same directory, then ``os.replace``), mode
  600 in a directory of mode 700, merged with the file as it is at that moment, so loads
  running at once in several processes never corrupt it (the last writer wins an entry;
  a lost entry is only a miss next time);
* read with ``O_NOFOLLOW``; a file that is not a regular file owned by the user and
  writable only by them, is truncated, fails its checksum or is not JSON is ignored with a
  ``"manifest-cache-ignored"`` diagnostic, and written again at the next change;
* a file written by another customtools or Python version is not used (not reported).
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import sys
from collections.abc import Callable
from typing import Any

from customtools._error_results import LoadCode
from customtools._loading._paths import display_path
from customtools._loading._records import Diagnostic
from customtools._loading._reviewed import write_private

__all__ = ["ManifestCache", "manifest_dir"]

_loads: Callable[[bytes], Any]
try:  # the `cache` extra: the same JSON read about twice as fast (the body is most of a load)
    from orjson import loads as _loads
except ImportError:  # pragma: no cover - the test environment has the extra
    _loads = json.loads

_FORMAT = 1
_MAGIC = b"customtools-manifests"
_O_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_BINARY", 0)
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_NONBLOCK", 0)
)
_MAX_FILE = 64 * 1024 * 1024


def manifest_dir(home: str | os.PathLike[str] | None, app_name: str) -> str:
    """``<home>/.<app_name>/cache/manifests``: beside the trust store, the user's own."""
    from customtools._loading._trust_store import default_store_path

    app_dir = os.path.dirname(default_store_path(home=home, app_name=app_name))
    return os.path.join(app_dir, "cache", "manifests")


def _versions() -> list[str]:
    # The package is imported before any of its modules (and importing it here would be a
    # cycle in the import graph).
    version = getattr(sys.modules.get("customtools"), "__version__", "unknown")
    return [str(version), sys.implementation.cache_tag or "", sys.version]


# -- the files --------------------------------------------------------------------------------


class ManifestCache:
    """The manifest files of one load: each read at most once, changes written at the end.

    Args:
        directory: where the files are (:func:`manifest_dir`).
    """

    def __init__(self, directory: str) -> None:
        self.directory = directory
        self.diagnostics: list[Diagnostic] = []
        self._entries: dict[str, dict[str, Any]] = {}
        self._changes: dict[str, dict[str, dict[str, Any] | None]] = {}
        self._versions = _versions()

    def _file(self, folder: str) -> str:
        name = hashlib.sha256(folder.encode("utf-8", "surrogateescape")).hexdigest()[:32]
        return os.path.join(self.directory, f"{name}.json")

    def entry(self, key: str) -> dict[str, Any] | None:
        """The entry of the candidate whose resolved path is ``key``, if any."""
        folder = _folder(key)
        entries = self._entries.get(folder)
        if entries is None:
            entries = self._entries[folder] = self._read(self._file(folder), report=True)
        found = entries.get(key)
        return found if isinstance(found, dict) else None

    def put(self, key: str, entry: dict[str, Any] | None) -> None:
        """Record (or, with ``None``, drop) the entry of ``key``; :meth:`save` writes it."""
        self._changes.setdefault(_folder(key), {})[key] = entry

    def _ignored(self, path: str, why: str) -> None:
        self.diagnostics.append(
            Diagnostic(
                code=LoadCode.MANIFEST_CACHE_IGNORED,
                message=f"the manifest cache file {display_path(path)} was ignored: {why}; its"
                " modules are imported at load and the file is written again",
                path=path,
            )
        )

    def _read(self, path: str, *, report: bool) -> dict[str, Any]:
        """The entries of one file: empty when it is missing, unusable (reported when
        ``report``) or written by another customtools or Python."""
        problem = None
        try:
            fd = os.open(path, _O_FLAGS)
        except FileNotFoundError:
            return {}
        except OSError as exc:
            problem = f"it cannot be opened ({exc.strerror or type(exc).__name__})"
        else:
            try:
                st = os.fstat(fd)
                problem = _ownership_problem(st)
                data = os.read(fd, min(st.st_size, _MAX_FILE) + 1) if problem is None else b""
            except OSError as exc:
                problem, data = f"it cannot be read ({exc.strerror or type(exc).__name__})", b""
            finally:
                os.close(fd)
        if problem is None:
            parsed, problem = _parse(data)
            if problem is None and isinstance(parsed, dict):
                found = parsed.get("entries")
                if parsed.get("versions") != self._versions or not isinstance(found, dict):
                    return {}  # another customtools or Python wrote it: not used, not wrong
                return found
        if report:
            self._ignored(path, problem or "it is not a manifest file")
        return {}

    def save(self) -> None:
        """Write every changed file: merged with the file as it is now, pruned of modules that
        are gone, replaced atomically."""
        changes, self._changes = self._changes, {}
        for folder, changed in changes.items():
            path = self._file(folder)
            entries = self._read(path, report=False)
            for key, entry in changed.items():
                if entry is None:
                    entries.pop(key, None)
                else:
                    entries[key] = entry
            for key in [key for key in entries if not os.path.lexists(key)]:
                del entries[key]
            self._write(path, entries)

    def _write(self, path: str, entries: dict[str, Any]) -> None:
        body = json.dumps(
            {"format": _FORMAT, "versions": self._versions, "entries": entries},
            separators=(",", ":"),
        ).encode("utf-8", "surrogatepass")
        data = b"%s %s\n%s" % (_MAGIC, hashlib.sha256(body).hexdigest().encode(), body)
        try:
            write_private(path, data, prefix=".manifest-")
        except OSError as exc:
            self.diagnostics.append(
                Diagnostic(
                    code=LoadCode.MANIFEST_CACHE_UNWRITABLE,
                    message=f"the manifest cache {display_path(self.directory)} cannot be"
                    f" written ({exc.strerror or type(exc).__name__}); modules missing from it"
                    " are imported at load",
                    path=self.directory,
                )
            )


def _folder(key: str) -> str:
    # The directory of a resolved path (os.path.dirname, without its pure-Python overhead:
    # this runs once per candidate of every lazy load).
    return key.rpartition(os.sep)[0]


def _ownership_problem(st: os.stat_result) -> str | None:
    if not stat.S_ISREG(st.st_mode):
        return "it is not a regular file"
    if hasattr(os, "geteuid") and (st.st_uid != os.geteuid() or st.st_mode & 0o022):
        return "it is not owned by this user and writable only by them"
    return None


def _parse(data: bytes) -> tuple[Any, str | None]:
    header, newline, body = data.partition(b"\n")
    magic, _, digest = header.partition(b" ")
    if not newline or magic != _MAGIC:
        return None, "it is not a manifest file (or it is truncated)"
    if hashlib.sha256(body).hexdigest().encode() != digest:
        return None, "it is truncated or was changed (its checksum does not match)"
    try:
        return _loads(body), None
    except (ValueError, RecursionError):
        try:  # orjson refuses what json writes for NaN and the infinities
            return json.loads(body), None
        except (ValueError, RecursionError):  # RecursionError: nested past the stack
            return None, "it is not valid JSON"
