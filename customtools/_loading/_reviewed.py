"""Project code runs from the bytes that were reviewed, never from a bytecode cache.

The decision (``docs/trust.md``, "Bytecode"): a trust grant hashes source files, so project
code is compiled from exactly those source bytes. Python's own ``SourceFileLoader`` would run
``__pycache__/<name>.cpython-3XX.pyc`` instead when its header matches the source, and an
*unchecked-hash* ``.pyc`` (PEP 552) always: a committed one would run unreviewed code in a
trusted project. So:

* :class:`ReviewedSourceLoader` is a ``SourceFileLoader`` whose ``get_code`` reads the source
  (a regular file, bounded), checks its SHA-256 against the hash the trust gate just
  recorded, and compiles those bytes. It never reads or writes ``__pycache__``. A file that
  changed since it was hashed (or appeared since: nothing under a hashed root goes unhashed)
  is an ``ImportError`` naming it: the window between the check and the import is closed.
* :class:`_ProjectFinder` sits in ``sys.meta_path`` just before ``PathFinder`` (installed on
  the first project load, never at ``import customtools``). It asks ``PathFinder`` as usual
  and, when the module found is a source file under a registered project root, hands it to
  a :class:`ReviewedSourceLoader` instead: package submodules and sibling helpers a tool
  imports (``_helpers.py``, ``lib/x.py``) are covered, however they are imported.

Compiling a small module takes well under a millisecond; ``docs/performance.md`` has figures.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.machinery
import os
import stat
import sys
import threading
from collections.abc import Iterable, Mapping, Sequence
from types import CodeType, ModuleType
from typing import Any

from customtools._loading._paths import display_path

__all__ = [
    "ReviewedSourceLoader",
    "UnreviewedCodeError",
    "cache_root",
    "refused_paths",
    "register_root",
    "reviewed_spec",
    "reviewed_table",
    "write_private",
]

_MAX_SOURCE = 64 * 1024 * 1024
_FLAGS = os.O_RDONLY | getattr(os, "O_BINARY", 0) | getattr(os, "O_NONBLOCK", 0)
_UNKNOWN = object()


class UnreviewedCodeError(ImportError):
    """A project file about to be imported is not the one that was hashed and trusted."""


class _Registry:
    """Project roots (as found and real) and, when the gate hashed them, each file's hash."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.prefixes: dict[str, str] = {}  # root + sep (as found or real) -> real root
        self.hashed: dict[str, dict[str, str] | None] = {}  # real root -> {real path: sha}
        # Directories of hashed files that lie outside their root (a linked package).
        self.dirs: set[str] = set()
        self.pinned: set[str] = set()  # real roots whose table no later registration replaces
        self.refused: list[str] = []  # files refused since the last refused_paths()

    def register(
        self, root: str, real_root: str, files: dict[str, str] | None, *, pin: bool = False
    ) -> None:
        with self.lock:
            for item in (root, real_root):
                self.prefixes[item.rstrip(os.sep) + os.sep] = real_root
            if real_root in self.pinned:
                return
            if pin:
                self.pinned.add(real_root)
            self.hashed[real_root] = files
            self.dirs.update(os.path.dirname(path) for path in files or ())

    def refuse(self, path: str) -> None:
        """Remember a refused file for :func:`refused_paths` (a few: only the first counts)."""
        with self.lock:
            if len(self.refused) < 16:
                self.refused.append(path)

    def table_for(self, path: str) -> tuple[str, dict[str, str]] | None:
        """The hashed root whose table lists ``path`` (real), with a copy of that table."""
        with self.lock:
            for real_root, files in self.hashed.items():
                if files is not None and path in files:
                    return real_root, dict(files)
        return None

    def covers(self, path: str) -> bool:
        return os.path.dirname(path) in self.dirs or any(
            path.startswith(prefix) for prefix in self.prefixes
        )

    def expected(self, path: str) -> object:
        """The SHA-256 ``path`` must have; ``None``: any content (not hashed); ``_UNKNOWN``:
        under a hashed root but not among its files (it appeared after the review)."""
        with self.lock:
            # The path is usually already real (a candidate's resolved path, a module under
            # an unlinked root): no realpath() syscalls then. The content is compared anyway.
            hashed = False
            for files in self.hashed.values():
                if files is not None:
                    hashed = True
                    if path in files:
                        return files[path]
        if not hashed:
            return None  # trust="all" everywhere: nothing to compare with
        real = os.path.realpath(path)
        under_hashed = False
        with self.lock:
            for files in self.hashed.values():
                if files is not None and real in files:
                    return files[real]
            for prefix, real_root in self.prefixes.items():
                if self.hashed.get(real_root) is not None and (
                    path.startswith(prefix) or real.startswith(prefix)
                ):
                    under_hashed = True
        return _UNKNOWN if under_hashed else None


_REGISTRY = _Registry()


def _read_source(path: str) -> bytes:
    fd = os.open(path, _FLAGS)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UnreviewedCodeError(
                f"{display_path(path)} is not a regular file; it cannot be imported", path=path
            )
        chunks: list[bytes] = []
        size = 0
        while True:
            chunk = os.read(fd, max(st.st_size + 1, 1 << 16))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
            if size > _MAX_SOURCE:
                raise UnreviewedCodeError(
                    f"{display_path(path)} is larger than {_MAX_SOURCE} bytes", path=path
                )
    finally:
        os.close(fd)
    return b"".join(chunks)


# -- the code cache: the user's own, one entry per file, checked against the reviewed bytes ------
#
# Compiling costs about as much as the rest of a warm load, so compiled code is kept, but never
# in the project: under the user's customtools directory, beside the trust store
# (~/.customtools/cache/bytecode; docs/trust.md, "Bytecode"), mode 0700, used only when owned by
# the user and not writable by others. Whoever can write there can write the trust store too, so
# nothing a project or a sandboxed pack controls can reach it: a sandbox refuses a declared write
# path that covers ~/.customtools (_isolation/_sandboxed.py). Not ~/.cache: a pack allowed to
# write its download cache there must not write code the host later runs unsandboxed.
#
# One file per (interpreter magic, optimisation level, path): an edit replaces the entry instead
# of adding one. Each entry starts with the SHA-256 of the source it was compiled from, and is
# used only for exactly those reviewed bytes. Entries unused for _MAX_AGE are pruned, and the
# oldest beyond _MAX_ENTRIES, once per process, when the first entry is written.

_cache_state: dict[str, str | None] = {}
_MAX_ENTRIES = 4096
_MAX_AGE = 30 * 86400.0
_SHA_BYTES = 64


def cache_root(home: str | None = None) -> str:
    """The directory customtools keeps its own state in: ``<home>/.customtools``."""
    return os.path.join(home if home is not None else os.path.expanduser("~"), ".customtools")


def write_private(path: str, data: bytes, *, prefix: str, sync: bool = False) -> None:
    """Replace ``path`` with ``data`` at once: a temporary file (mode 600) in its directory
    (made, mode 700, when missing), written (flushed to disk when ``sync``), then renamed
    over ``path``. Nothing is left behind when it fails.

    Raises:
        OSError: the directory or the file cannot be written.
    """
    import tempfile

    directory = os.path.dirname(path)
    os.makedirs(directory, mode=0o700, exist_ok=True)
    fd, temp = tempfile.mkstemp(dir=directory, prefix=prefix)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            if sync:
                handle.flush()
                os.fsync(handle.fileno())
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


def _cache_dir() -> str | None:
    if "dir" in _cache_state:
        return _cache_state["dir"]
    found: str | None = None
    if os.name == "posix" and not sys.dont_write_bytecode:
        path = os.path.join(cache_root(), "cache", "bytecode")
        try:
            os.makedirs(path, mode=0o700, exist_ok=True)
            st = os.lstat(path)
            if stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and not st.st_mode & 0o077:
                found = path
        except OSError:
            found = None
    _cache_state["dir"] = found
    return found


def _code_key(path: str) -> str:
    import importlib.util

    text = f"{importlib.util.MAGIC_NUMBER.hex()}\0{sys.flags.optimize}\0{path}"
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


def _cached_code(key: str, sha: str) -> CodeType | None:
    directory = _cache_dir()
    if directory is None:
        return None
    import marshal

    try:
        fd = os.open(os.path.join(directory, key), _FLAGS | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.getuid() or st.st_size > _MAX_SOURCE:
            return None
        data = os.read(fd, st.st_size + 1)
        if data[:_SHA_BYTES] != sha.encode("ascii"):
            return None  # compiled from other bytes (an older version of the file)
        # Our own file, in the user's 0700 directory, for exactly the reviewed bytes.
        code = marshal.loads(data[_SHA_BYTES:])  # noqa: S302
    except (OSError, ValueError, EOFError, TypeError):
        return None
    finally:
        os.close(fd)
    return code if isinstance(code, CodeType) else None


def _store_code(key: str, sha: str, code: CodeType) -> None:
    directory = _cache_dir()
    if directory is None:
        return
    import marshal

    try:
        data = sha.encode("ascii") + marshal.dumps(code)
        write_private(os.path.join(directory, key), data, prefix=".tmp-")
    except OSError:
        return  # a cache that cannot be written only costs time
    if "pruned" not in _cache_state:
        _cache_state["pruned"] = directory
        _prune(directory)


def _prune(directory: str) -> None:
    """Remove entries unused for :data:`_MAX_AGE`, then the oldest past :data:`_MAX_ENTRIES`."""
    import time

    entries: list[tuple[float, str]] = []
    try:
        with os.scandir(directory) as found:
            for entry in found:
                with contextlib.suppress(OSError):
                    st = entry.stat(follow_symlinks=False)
                    entries.append((max(st.st_atime, st.st_mtime), entry.path))
    except OSError:
        return
    entries.sort(reverse=True)
    cutoff = time.time() - _MAX_AGE
    for index, (used, path) in enumerate(entries):
        if index >= _MAX_ENTRIES or used < cutoff:
            with contextlib.suppress(OSError):
                os.unlink(path)


class ReviewedSourceLoader(importlib.machinery.SourceFileLoader):
    """Compiles a project source file from the bytes the trust gate hashed (see the module
    docstring); never reads or writes ``__pycache__``."""

    def get_code(self, fullname: str) -> CodeType:
        """Read the source, check it against its reviewed hash, compile it."""
        path = self.get_filename(fullname)
        data = _read_source(path)
        expected = _REGISTRY.expected(path)
        if expected is _UNKNOWN:
            _REGISTRY.refuse(path)
            raise UnreviewedCodeError(
                f"{display_path(path)} was not part of the project source when it was"
                " reviewed (it appeared since); run `customtools trust` to review it",
                name=fullname,
                path=path,
            )
        sha = hashlib.sha256(data).hexdigest()
        if expected is not None and sha != expected:
            _REGISTRY.refuse(path)
            raise UnreviewedCodeError(
                f"{display_path(path)} changed after it was reviewed and trusted; reload to"
                " be asked again (`customtools trust`)",
                name=fullname,
                path=path,
            )
        key = _code_key(path)
        code = _cached_code(key, sha)
        if code is None:
            code = self.source_to_code(data, path)
            _store_code(key, sha, code)
        return code

    def set_data(self, path: str, data: Any, *, _mode: int = 0o666) -> None:
        """Never write bytecode for project code."""


def _check_binary(fullname: str, path: str) -> None:
    expected = _REGISTRY.expected(path)
    if expected is None:
        return
    if expected is _UNKNOWN or hashlib.sha256(_read_source(path)).hexdigest() != expected:
        _REGISTRY.refuse(path)
        raise UnreviewedCodeError(
            f"{display_path(path)} is not the file that was reviewed and trusted; reload to"
            " be asked again (`customtools trust`)",
            name=fullname,
            path=path,
        )


class _ProjectFinder:
    """``PathFinder``, with project source files handed to :class:`ReviewedSourceLoader`."""

    @classmethod
    def find_spec(
        cls,
        fullname: str,
        path: Sequence[str] | None = None,
        target: ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        if spec is None or not spec.origin or not _REGISTRY.covers(spec.origin):
            return spec
        if type(spec.loader) is importlib.machinery.SourceFileLoader:
            spec.loader = ReviewedSourceLoader(fullname, spec.origin)
            spec.cached = None
        elif isinstance(
            spec.loader,
            (importlib.machinery.SourcelessFileLoader, importlib.machinery.ExtensionFileLoader),
        ):
            _check_binary(fullname, spec.origin)  # a bare .pyc or .so: hashed like any file
        return spec

    @classmethod
    def invalidate_caches(cls) -> None:
        """Nothing cached here (``PathFinder`` keeps its own)."""


_install_lock = threading.Lock()


def _install() -> None:
    with _install_lock:
        meta: list[Any] = sys.meta_path
        if _ProjectFinder in meta:
            return
        try:
            index = meta.index(importlib.machinery.PathFinder)
        except ValueError:
            index = len(meta)
        meta.insert(index, _ProjectFinder)


def register_root(
    root: str,
    *,
    files: Mapping[str, str] | Iterable[tuple[str, str]] | None = None,
    pin: bool = False,
) -> None:
    """Run every Python source under ``root`` through :class:`ReviewedSourceLoader`.

    Args:
        root: a project source root (a directory, or a single file).
        files: ``{real path: sha256}`` of the files reviewed under it (a file under ``root``
            that is not listed cannot be imported); ``None``: any content (``trust="all"``).
        pin: no later registration replaces this table (an isolation worker pins the
            grant's table it was sent: its own loads, restarts included, use ``trust="all"``).
    """
    real_root = os.path.realpath(root)
    table = dict(files) if files is not None else None
    _REGISTRY.register(os.path.abspath(root), real_root, table, pin=pin)
    _install()


def reviewed_table(path: str) -> tuple[str, dict[str, str]] | None:
    """``(real root, {real path: sha256})`` of the grant that covers the file ``path`` (a
    module, or a package's ``__init__.py``), as registered by the trust gate; ``None`` when
    no hashed grant lists it (user code, ``trust="all"``)."""
    return _REGISTRY.table_for(os.path.realpath(path))


def refused_paths() -> list[str]:
    """The project files refused since the last call (changed or added after review)."""
    with _REGISTRY.lock:
        refused, _REGISTRY.refused = _REGISTRY.refused, []
    return refused


def reviewed_spec(
    name: str, path: str, *, package_dir: str | None = None
) -> importlib.machinery.ModuleSpec:
    """The spec of a project candidate: a module file, or a package's ``__init__.py`` with
    ``package_dir`` as its search location, loaded by :class:`ReviewedSourceLoader`."""
    import importlib.util

    loader = ReviewedSourceLoader(name, path)
    locations = [package_dir] if package_dir is not None else None
    spec = importlib.util.spec_from_file_location(
        name, path, loader=loader, submodule_search_locations=locations
    )
    if spec is None:  # pragma: no cover - a loader was given
        raise ImportError(f"Python cannot import {path!r} as a module")
    spec.cached = None
    return spec
