"""Project sources: what would run if the user trusted a project, read and hashed.

Scope
    A candidate's scope is its source's ``level``: ``"user"`` (home directories, the
    marketplace cache, installed distributions, paths the host configures explicitly) or
    ``"project"`` (found under ``cwd``). User code loads as before; project code is imported
    only when its source is trusted (the gate and the store: ``_trust_store``).

Project sources
    Project candidates are grouped by ``Candidate.root`` (a project tools directory, a plugin
    root inside the project, an explicit path). A :class:`ProjectSource` lists every file that
    would be imported or run: each module file, every file below each package directory
    (``__pycache__`` excepted), and the plugin manifests under the root. Each file is read once
    and hashed with SHA-256; the source's digest covers the root's real path and, per file, its
    name under the root, its real path and its hash. An edited, added, removed or renamed file
    and a swapped symlink all change the digest. The MCP bridge describes a project
    ``.mcp.json`` with :func:`file_source` (the file itself is what would run).

The full story, with the store and the policies, is ``docs/trust.md``.
"""

from __future__ import annotations

import dataclasses
import errno
import hashlib
import importlib.util
import os
import stat
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from customtools._format import escape_control, find_invisible
from customtools._loading._files import file_kind
from customtools._loading._paths import display_path
from customtools._loading._plugins import MANIFEST_LOCATIONS
from customtools._loading._records import Candidate, MetadataFile, ScanResult, ToolSource

if TYPE_CHECKING:
    from customtools._permissions import Permissions

__all__ = [
    "DATA_SUFFIXES",
    "MAX_SOURCE_BYTES",
    "MAX_SOURCE_FILES",
    "NotRegularError",
    "PendingSource",
    "PendingStatus",
    "ProjectSource",
    "SourceFile",
    "StatCache",
    "StatKey",
    "TooLargeError",
    "bytecode_warnings",
    "candidate_source",
    "file_source",
    "fingerprint",
    "hash_file",
    "is_data_file",
    "printable",
    "project_sources",
    "with_warnings",
]

MAX_SOURCE_FILES = 10_000
"""A project source with more files than this cannot be trusted (it is reported instead)."""

MAX_SOURCE_BYTES = 256 * 1024 * 1024
"""A project source larger than this (bytes, all files) cannot be trusted."""


# -- project sources ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class SourceFile:
    """One file of a project source that would be imported or run.

    Args:
        name: its path under the source root as found (``/``-separated), or its absolute path
            when it lies outside the root.
        real_path: its real path (symlinks resolved).
        sha256: the SHA-256 of its bytes, hex.
        stat: ``(st_dev, st_ino, st_size, st_mtime_ns, st_ctime_ns)`` taken before the bytes
            were read, when it may key the stat cache (see :class:`TrustStore`), else ``None``.
    """

    name: str
    real_path: str
    sha256: str
    stat: tuple[int, int, int, int, int] | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {"name": self.name, "realPath": self.real_path, "sha256": self.sha256}


@dataclass(frozen=True, slots=True, kw_only=True)
class ProjectSource:
    """A project-scope source and exactly what would run if it were trusted.

    Args:
        root: the source root as found (absolute, symlinks kept).
        real_root: its real path: the key of a grant.
        provider: the provider id (``"claude"``, ``"plugin"``, ``"mcp"``, ...).
        source: the source of its candidates, when it has any.
        files: every file that would be imported or run, plus manifests, sorted by name.
        candidates: the candidates it holds, in scan order.
        digest: ``"sha256:<hex>"`` over the real root and every file.
        problems: why it cannot be trusted (a file that cannot be read, too many files);
            empty when it can.
        notes: what runs but is not covered by a grant (programs outside the project).
        permissions: the permissions its modules declare for a sandboxed run, in plain
            words, one line per module (the declarations are in the hashed files, so the
            grant covers them and any change, a widening included, asks again).
        held: what each module (``"x.py"``) and each tool with its own declaration
            (``"x.py, tool t"``) may do when sandboxed, the default included: a grant
            records it, so that a change can say what grew.
        project: the project directory its permissions were resolved against, if known.
        policies: the execution policy its modules declare (``POLICY``), in plain words,
            one line per module that declares one.
    """

    root: str
    real_root: str
    provider: str
    source: ToolSource | None = None
    files: tuple[SourceFile, ...] = ()
    candidates: tuple[Candidate, ...] = ()
    digest: str = ""
    problems: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    permissions: tuple[str, ...] = ()
    held: tuple[tuple[str, Permissions], ...] = ()
    project: str | None = None
    policies: tuple[str, ...] = ()

    @property
    def trustable(self) -> bool:
        """Whether a grant can be recorded for it (nothing unreadable or too large)."""
        return not self.problems

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        out: dict[str, Any] = {
            "root": self.root,
            "realRoot": self.real_root,
            "provider": self.provider,
            "digest": self.digest,
            "files": [item.to_dict() for item in self.files],
        }
        if self.source is not None:
            out["source"] = self.source.to_dict()
        if self.problems:
            out["problems"] = list(self.problems)
        if self.notes:
            out["notes"] = list(self.notes)
        if self.permissions:
            out["permissions"] = list(self.permissions)
        if self.policies:
            out["policies"] = list(self.policies)
        return out


PendingStatus = Literal["untrusted", "changed", "blocked"]


@dataclass(frozen=True, slots=True, kw_only=True)
class PendingSource:
    """A project source that did not load because it is not trusted (a diagnostic, not an
    error). Show :attr:`files` to the user; ``store.grant(pending)`` trusts exactly them.

    Args:
        source: the project source (its files and digest as scanned).
        status: ``"untrusted"`` (never granted), ``"changed"`` (granted, then its content
            changed: see :attr:`changes`) or ``"blocked"`` (the host's policy is
            ``trust="none"``, or the trust store is unreadable).
        changes: what changed since the grant, one line each (for ``"blocked"``: why).
        warnings: invisible or bidirectional characters in its file names and in the names
            and descriptions of the metadata files beside it.
    """

    source: ProjectSource
    status: PendingStatus = "untrusted"
    changes: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()

    @property
    def root(self) -> str:
        """The source root as found."""
        return self.source.root

    @property
    def files(self) -> tuple[SourceFile, ...]:
        """Every file that would be imported or run."""
        return self.source.files

    def message(self) -> str:
        """One paragraph for people: what would run, what changed, what to look at."""
        names = ", ".join(printable(item.name) for item in self.files) or "no files"
        what = f"project tool source {display_path(self.root)} ({self.source.provider})"
        if self.status == "changed":
            text = f"{what} changed since it was trusted ({'; '.join(self.changes)}); not loaded"
        elif self.status == "blocked":
            text = f"{what} was not loaded: {'; '.join(self.changes) or 'blocked by the host'}"
        else:
            text = f"{what} is not trusted; not loaded"
        text += f"; {len(self.files)} file(s) would run: {names}"
        if self.source.problems:
            text += "; cannot be trusted: " + "; ".join(self.source.problems)
        if self.source.notes:
            text += "; " + "; ".join(self.source.notes)
        if self.source.permissions:
            text += "; when sandboxed: " + "; ".join(self.source.permissions)
        if self.warnings:
            text += "; WARNING: " + "; ".join(self.warnings)
        if self.status != "blocked" and self.source.trustable:
            text += "; review the files, then trust them (`customtools trust`)"
        return text

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        out = self.source.to_dict()
        out["status"] = self.status
        out["changes"] = list(self.changes)
        out["warnings"] = list(self.warnings)
        return out


def printable(text: str) -> str:
    """``text`` with invisible characters spelled out, safe to print."""
    found = find_invisible(text)
    if found:
        chars = list(text)
        for item in reversed(found):
            chars[item.position] = f"<{item.codepoint}>"
        text = "".join(chars)
    return escape_control(display_path(text))


_O_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_BINARY", 0)
    | getattr(os, "O_NOINHERIT", 0)
    # A FIFO swapped in after the scan must not block the open; a symlink swapped in for the
    # real path (already resolved) must not be followed.
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_NOFOLLOW", 0)
)


class NotRegularError(OSError):
    """A file of a source is not a regular file (a FIFO, a device, a socket, ...)."""


class TooLargeError(OSError):
    """A file would take a source past :data:`MAX_SOURCE_BYTES`."""


def hash_file(path: str, budget: int = MAX_SOURCE_BYTES) -> tuple[str, int, os.stat_result]:
    """SHA-256 of the file's bytes, their count, and the ``fstat`` of the file read.

    Only a regular file is read (checked with ``fstat`` on the open descriptor, opened
    non-blocking, so a FIFO or a device never blocks), and never more than ``budget`` bytes
    (:class:`TooLargeError` past it: ``/dev/zero`` behind a swapped link cannot spin).
    Unbuffered ``os.read`` into one buffer sized from ``fstat``: four times quicker than
    ``open().read()`` for small files, which is most of what a tools directory holds.
    """
    fd = os.open(path, _O_FLAGS)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotRegularError(errno.EINVAL, file_kind(st.st_mode))
        if st.st_size > budget:
            raise TooLargeError(errno.EFBIG, "too large")
        digest = hashlib.sha256()
        size = 0
        want = st.st_size + 1  # a short read of a regular file is the end of it
        while True:
            chunk = os.read(fd, min(want, budget - size + 1))
            if not chunk:
                break
            digest.update(chunk)
            size += len(chunk)
            if size > budget:
                raise TooLargeError(errno.EFBIG, "too large")
            if len(chunk) < want:
                break
            want = 1 << 20
    finally:
        os.close(fd)
    return digest.hexdigest(), size, st


def _name_under(path: str, root: str) -> str:
    if path == root:
        return os.path.basename(path)
    prefix = root.rstrip(os.sep) + os.sep
    if path.startswith(prefix):
        return path[len(prefix) :].replace(os.sep, "/")
    return path


StatKey: TypeAlias = "tuple[int, int, int, int, int]"


def _key(st: os.stat_result) -> StatKey:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


StatCache: TypeAlias = "dict[str, tuple[StatKey, str]]"

# The stat cache relies on st_ctime being the kernel's change time, which nobody can set back;
# on Windows st_ctime is the creation time, so the cache is off there.
_STAT_CACHE = os.name == "posix"
# A file changed less than this before it was hashed may change again within the same
# timestamp tick without a visible ctime change ("racy" in git's words): never cached.
_RACY_NS = 2_000_000_000


class _Collector:
    """Reads and hashes the files of one source, within the size limits."""

    def __init__(self, root: str, cache: StatCache | None = None) -> None:
        self.root = root
        self.files: dict[str, SourceFile] = {}
        self.problems: list[str] = []
        self.stopped = False  # a limit was reached: nothing more is read
        self.total = 0
        self.cache = cache if _STAT_CACHE else None
        self.fresh_after = time.time_ns() - _RACY_NS
        self.prefix = root.rstrip(os.sep) + os.sep

    def add(self, path: str, real: str | None = None) -> None:
        if path.startswith(self.prefix):
            name = path[len(self.prefix) :]
            if os.sep != "/":
                name = name.replace(os.sep, "/")
        else:
            name = _name_under(path, self.root)
        if name in self.files or self.stopped:
            return
        if len(self.files) >= MAX_SOURCE_FILES:
            self.problems.append(f"more than {MAX_SOURCE_FILES} files")
            self.stopped = True
            return
        try:
            real_path = real if real is not None else os.path.realpath(path)
            cached = self.cache.get(real_path) if self.cache else None
            st = os.stat(real_path) if cached is not None else None
            if (
                st is not None
                and cached is not None
                and cached[0] == _key(st)
                and stat.S_ISREG(st.st_mode)
            ):
                digest, size = cached[1], st.st_size
            else:
                # The key of the bytes actually read (fstat), so a file swapped between a
                # stat and the read can never lend its key to other content.
                digest, size, st = hash_file(real_path, MAX_SOURCE_BYTES - self.total)
            key = _key(st)
        except NotRegularError as exc:
            self.problems.append(
                f"{printable(name)} is {exc.strerror}, not a regular file; remove it (a tool"
                " source may hold only regular files and directories)"
            )
            return
        except TooLargeError:
            self.problems.append(f"more than {MAX_SOURCE_BYTES // (1024 * 1024)} MiB of files")
            self.stopped = True
            return
        except OSError as exc:
            self.problems.append(
                f"{printable(name)} cannot be read ({exc.strerror or type(exc).__name__})"
            )
            return
        self.total += size
        if self.total > MAX_SOURCE_BYTES:
            self.problems.append(f"more than {MAX_SOURCE_BYTES // (1024 * 1024)} MiB of files")
            self.stopped = True
            return
        cacheable = _STAT_CACHE and max(st.st_ctime_ns, st.st_mtime_ns) < self.fresh_after
        self.files[name] = SourceFile(
            name=name, real_path=real_path, sha256=digest, stat=key if cacheable else None
        )

    def add_tree(
        self,
        directory: str,
        *,
        everything: bool = False,
        dangling: bool = True,
        installed: bool = True,
    ) -> None:
        """Every regular file below ``directory`` that Python could run, following directory
        links once each (the code may import any of them).

        Left out: ``__pycache__`` (project code is never run from bytecode caches: see
        :mod:`customtools._loading._reviewed`), version-control directories, and, unless
        ``everything``, the non-executable files of :func:`is_data_file`. A dangling symbolic
        link is a problem when ``dangling`` is true, else skipped (it runs nothing; once its
        target exists, it is hashed and the digest changes). ``installed=False`` also leaves
        out installed dependency trees (a directory holding ``pyvenv.cfg``, ``node_modules``).
        """
        seen: set[tuple[int, int]] = set()
        # (directory as found, its real path or None when it must be resolved)
        stack: list[tuple[str, str | None]] = [(directory, None)]
        while stack and not self.stopped:
            current, real_current = stack.pop()
            try:
                st = os.stat(current)
                if real_current is None:
                    real_current = os.path.realpath(current)
                with os.scandir(current) as listing:
                    entries = sorted(listing, key=lambda entry: entry.name)
            except OSError:
                continue
            if (st.st_dev, st.st_ino) in seen:
                continue
            seen.add((st.st_dev, st.st_ino))
            subdirs: list[tuple[str, str | None]] = []
            for entry in entries:
                name = entry.name
                try:
                    link = entry.is_symlink()
                    is_dir = entry.is_dir()  # follows links, as the import system does
                except OSError:
                    link, is_dir = True, False
                if is_dir:
                    if name == "__pycache__":
                        self.check_bytecode(entry.path)
                    elif name not in _SKIPPED_DIRS and (
                        installed or not _installed_tree(entry.path)
                    ):
                        real = None if link else os.path.join(real_current, name)
                        subdirs.append((entry.path, real))
                    continue
                if not everything and is_data_file(name):
                    continue
                if link:
                    if not dangling and not os.path.exists(entry.path):
                        continue
                    self.add(entry.path)
                else:  # no realpath() syscalls for a plain file in a resolved directory
                    self.add(entry.path, os.path.join(real_current, name))
                if self.full():
                    return
            stack.extend(reversed(subdirs))

    def full(self) -> bool:
        """Whether a limit was reached (nothing more is read); a call, so that a type checker
        does not take ``stopped`` for constant across :meth:`add`."""
        return self.stopped

    def check_bytecode(self, directory: str, stem: str | None = None) -> None:
        """A hash-based ``.pyc`` (PEP 552) of this interpreter in ``directory`` (a
        ``__pycache__``; only ``stem``'s when given) is a problem: Python's own
        ``SourceFileLoader`` runs it instead of the reviewed source, unchecked or checked
        only against a hash anyone can compute, when a tool loads that source itself
        (``importlib.util.spec_from_file_location``). Python writes one only when asked."""
        tag = f".{sys.implementation.cache_tag}."
        try:
            with os.scandir(directory) as listing:
                names = sorted(entry.name for entry in listing)
        except OSError:
            return
        for name in names:
            if tag not in name or not name.endswith(".pyc"):
                continue
            if stem is not None and not name.startswith(stem + "."):
                continue
            path = os.path.join(directory, name)
            header = _pyc_header(path)  # its PEP 552 flags: 0 is timestamp-based
            if header is not None and int.from_bytes(header[4:8], "little") != 0:
                self.problems.append(
                    f"{printable(_name_under(path, self.root))} is hash-based bytecode, which"
                    " Python would run instead of its reviewed source when a tool loads that"
                    " source itself (importlib.util.spec_from_file_location); delete it"
                )

    def source(
        self,
        *,
        provider: str,
        source: ToolSource | None,
        candidates: Sequence[Candidate],
        real_root: str | None = None,
    ) -> ProjectSource:
        real_root = os.path.realpath(self.root) if real_root is None else real_root
        files = tuple(sorted(self.files.values(), key=lambda item: item.name))
        digest = hashlib.sha256(real_root.encode("utf-8", "surrogateescape") + b"\0")
        for item in files:
            digest.update(
                f"{item.name}\0{item.real_path}\0{item.sha256}\n".encode("utf-8", "surrogateescape")
            )
        return ProjectSource(
            root=self.root,
            real_root=real_root,
            provider=provider,
            source=source,
            files=files,
            candidates=tuple(candidates),
            digest="sha256:" + digest.hexdigest(),
            problems=tuple(self.problems),
        )


_SKIPPED_DIRS = frozenset({"__pycache__", ".git", ".hg", ".svn"})

DATA_SUFFIXES = frozenset(
    {".md", ".markdown", ".rst", ".txt", ".json", ".yaml", ".yml", ".csv", ".lock"}
    | {".png", ".jpg", ".jpeg", ".gif", ".svg", ".ico", ".webp"}
)
"""Suffixes of files that are data, not code: they are not hashed, so editing them never
asks again (tool metadata, READMEs, images). Plugin manifests are hashed all the same."""

_DATA_NAMES = frozenset({"readme", "license", "licence", "copying", "changelog", "authors"})
_DATA_FILES = frozenset({".gitignore", ".gitattributes", ".DS_Store"})


def _installed_tree(directory: str) -> bool:
    return os.path.basename(directory) == "node_modules" or os.path.isfile(
        os.path.join(directory, "pyvenv.cfg")
    )


def is_data_file(name: str) -> bool:
    """Whether a file of a project source is data Python never runs (see
    :data:`DATA_SUFFIXES`): ``README``/``LICENSE`` with any suffix or none, ``.gitignore``.
    """
    if name.endswith(".py"):
        return False  # the common case, first
    base = name.rpartition("/")[2].rpartition(os.sep)[2]
    dot = base.rfind(".")
    stem, suffix = (base[:dot], base[dot:].lower()) if dot > 0 else (base, "")
    return suffix in DATA_SUFFIXES or stem.lower() in _DATA_NAMES or base in _DATA_FILES


def project_sources(
    scanned: ScanResult | Iterable[Candidate],
    *,
    cache: StatCache | None = None,
    project: str | None = None,
) -> tuple[ProjectSource, ...]:
    """The project sources of a scan (or of some candidates), each read and hashed.

    User-scope candidates are left out. Sources come in the order of their first candidate.
    ``cache`` (from :meth:`TrustStore.stat_cache`) lets a file whose stat is unchanged since
    it was trusted skip the read. ``project`` (the load's ``cwd``) lets the permissions be
    shown resolved: "may read the project `/path`".
    """
    candidates = scanned.candidates if isinstance(scanned, ScanResult) else tuple(scanned)
    groups: dict[str, list[Candidate]] = {}
    for candidate in candidates:
        if candidate.source.level == "project":
            groups.setdefault(candidate.root or candidate.path, []).append(candidate)
    return tuple(_hash_group(root, members, cache, project) for root, members in groups.items())


def candidate_source(candidate: Candidate, *, cache: StatCache | None = None) -> ProjectSource:
    """One module or package candidate read and hashed as a source root is: its module file,
    or every file below its package directory (for code no grant covers: user scope, or
    project code loaded with ``trust="all"``; the manifest cache keys on its digest).
    ``cache`` lets a file whose stat key is unchanged skip the read, as for the store."""
    collector = _Collector(candidate.path, cache)
    if candidate.kind == "package":
        collector.add_tree(candidate.path)
    else:
        collector.add(candidate.path, candidate.resolved_path)
    return collector.source(
        provider=candidate.source.provider,
        source=candidate.source,
        candidates=(candidate,),
        real_root=candidate.resolved_path,
    )


def _hash_group(
    root: str, members: list[Candidate], cache: StatCache | None, project: str | None = None
) -> ProjectSource:
    collector = _Collector(root, cache)
    if os.path.isdir(root) and not all(c.kind == "entry_point" for c in members):
        for relative in MANIFEST_LOCATIONS:
            manifest = os.path.join(root, *relative.split("/"))
            if os.path.isfile(manifest):
                collector.add(manifest)
        # Everything under the root a tool could import or run: sibling helpers, folders
        # without __init__.py, packages (the scan lists only the candidates).
        collector.add_tree(root, dangling=False)
    walked = collector.prefix if os.path.isdir(root) else None
    for candidate in members:
        if candidate.kind == "module":
            if walked is None or not candidate.path.startswith(walked):
                collector.add(candidate.path, candidate.resolved_path)
                real = candidate.resolved_path
                collector.check_bytecode(
                    os.path.join(os.path.dirname(real), "__pycache__"),
                    stem=os.path.splitext(os.path.basename(real))[0],
                )
        elif candidate.kind == "package":
            collector.add_tree(candidate.path)
        else:
            collector.problems.append(
                f"entry point {candidate.entry_point or candidate.path!r} of distribution"
                f" {candidate.source.distribution or '?'!r} comes from a sys.path entry inside"
                " the project, and a project entry point cannot be trusted: install the"
                " distribution, or keep the project off sys.path (`python -P -m customtools`)"
            )
    source = members[0].source
    made = collector.source(provider=source.provider, source=source, candidates=members)
    lines, held, policies = _declared_permissions(members, project)
    if not held:
        return made
    return dataclasses.replace(
        made, permissions=lines, held=held, project=project, policies=policies
    )


def _declared_permissions(
    members: Sequence[Candidate], project: str | None
) -> tuple[tuple[str, ...], tuple[tuple[str, Permissions], ...], tuple[str, ...]]:
    """What each module may do when sandboxed: in plain words, for the modules that declare
    something (see ``docs/sandbox.md``), and as values, for every module; and the execution
    policy each declares, in plain words (``docs/policy.md``)."""
    from customtools._permissions import DEFAULT_PERMISSIONS, PermissionsError, read_declarations
    from customtools._policy import Policy, PolicyError

    lines = []
    policies = []
    held: list[tuple[str, Permissions]] = []
    for candidate in members:
        name = printable(os.path.basename(candidate.path.rstrip("/")))
        try:
            declared = read_declarations(candidate)
        except PermissionsError as exc:
            lines.append(f"{name}: invalid PERMISSIONS ({printable(str(exc))})")
            continue
        if declared.policy is not None or declared.policy_error is not None:
            try:
                if declared.policy_error is not None:
                    raise PolicyError(declared.policy_error)
                policy = Policy.from_dict(declared.policy or {}, where=name)
                policies.append(f"{name}: {printable(policy.describe())}")
            except PolicyError as exc:
                policies.append(f"{name}: invalid POLICY, ignored ({printable(str(exc))})")
        module = declared.module or DEFAULT_PERMISSIONS
        held.append((name, module))
        if declared.module is not None:
            lines.append(f"{name} {printable(module.describe(project=project))}")
        for tool_name, permissions in sorted(declared.tools.items()):
            label = f"{name}, tool {printable(tool_name)}"
            held.append((label, permissions))
            lines.append(f"{label}: {printable(permissions.describe(project=project))}")
    return tuple(lines), tuple(held), tuple(policies)


def file_source(
    path: str | os.PathLike[str],
    *,
    provider: str,
    files: Iterable[str | os.PathLike[str]] = (),
    trees: Iterable[str | os.PathLike[str]] = (),
    notes: Iterable[str] = (),
    source: ToolSource | None = None,
) -> ProjectSource:
    """A project source that is one file plus, optionally, files it would run.

    For bridges that turn a project file into running code, such as a project ``.mcp.json``
    whose servers would be spawned: the file itself is part of what would run, so any edit to
    it asks again.

    Args:
        path: the file (its path as found; the grant is keyed by its real path).
        provider: the id shown to people (``"mcp"``).
        files: further files that would run (scripts the file names), hashed too.
        trees: directories whose code would run (a server's working directory): every
            file below them Python could run, as for a tools directory, except installed
            dependency trees (virtual environments, ``node_modules``).
        notes: what the grant does not cover, shown with the listing.
        source: a :class:`ToolSource` to attach, if any.
    """
    root = os.path.abspath(os.fspath(path))
    collector = _Collector(root)
    collector.add(root)
    for item in files:
        collector.add(os.path.abspath(os.fspath(item)))
    for tree in trees:
        collector.add_tree(os.path.abspath(os.fspath(tree)), dangling=False, installed=False)
    made = collector.source(provider=provider, source=source, candidates=())
    notes = tuple(notes)
    return dataclasses.replace(made, notes=notes) if notes else made


def _pyc_header(path: str) -> bytes | None:
    """The 16-byte header of a regular ``.pyc`` file of this interpreter, or ``None``."""
    try:
        fd = os.open(path, _O_FLAGS)
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return None
            header = os.read(fd, 16)
        finally:
            os.close(fd)
    except OSError:
        return None
    if len(header) < 16 or header[:4] != importlib.util.MAGIC_NUMBER:
        return None
    return header


def _used_bytecode(source: str) -> str | None:
    """The ``__pycache__`` file stock Python would run instead of ``source``, when one exists.

    A timestamp ``.pyc`` is used when the mtime and size in its header match the source; a
    hash-based one when it is unchecked, or checked and its source hash matches (not worked
    out here: any checked one is reported, and blocks the grant: :meth:`_Collector.
    check_bytecode`). customtools' own imports never run these for project code (they
    compile the reviewed bytes), but plain ``python`` in the checkout, or a tool that loads
    the file itself, would.
    """
    try:
        cache = importlib.util.cache_from_source(source)
        header = _pyc_header(cache)
        st = os.stat(source) if header is not None else None
    except (OSError, ValueError, NotImplementedError):
        return None
    if header is None or st is None:
        return None
    flags = int.from_bytes(header[4:8], "little")
    if flags in (1, 3):  # hash-based
        return cache
    if flags == 0:
        mtime = int.from_bytes(header[8:12], "little")
        size = int.from_bytes(header[12:16], "little")
        if mtime == int(st.st_mtime) & 0xFFFFFFFF and size == st.st_size & 0xFFFFFFFF:
            return cache
    return None


def bytecode_warnings(source: ProjectSource) -> tuple[str, ...]:
    """One line per ``__pycache__`` file beside a source's ``.py`` files that stock Python
    would run instead of the source (see :func:`_used_bytecode`): customtools ignores it."""
    out: list[str] = []
    for item in source.files:
        if item.name.endswith(".py"):
            cached = _used_bytecode(item.real_path)
            if cached is not None:
                out.append(
                    f"{printable(cached)} holds bytecode for {printable(item.name)} that was not"
                    " reviewed; customtools' own imports compile the reviewed source instead,"
                    " but plain `python`, or a tool that loads the file itself"
                    " (importlib.util.spec_from_file_location), would run it: delete the"
                    " __pycache__ directories unless you created them"
                )
    return tuple(out)


def with_warnings(pending: PendingSource, metadata: Sequence[MetadataFile]) -> PendingSource:
    """``pending`` with warnings for invisible or bidirectional characters in its file names
    and in the names and descriptions of the metadata files under its root."""
    warnings: list[str] = []

    def flag(what: str, text: str) -> None:
        found = find_invisible(text)
        if found:
            kinds = ", ".join(sorted({f"{item.codepoint} {item.name}" for item in found}))
            warnings.append(f"{what} {printable(text)} contains invisible characters ({kinds})")

    root = pending.source.root
    for item in pending.source.files:
        flag("file name", item.name)
    warnings.extend(bytecode_warnings(pending.source))
    prefix = root.rstrip(os.sep) + os.sep
    for meta in metadata:
        if meta.path.startswith(prefix):
            flag(f"metadata {printable(_name_under(meta.path, root))}: name", meta.name)
            flag(
                f"metadata {printable(_name_under(meta.path, root))}: description", meta.description
            )
    return dataclasses.replace(pending, warnings=tuple(warnings)) if warnings else pending


# -- what a candidate's code is made of (the reload and the execution policy compare it) --

_UNCOUNTED_DIRS = frozenset({"__pycache__", ".git", ".mypy_cache", ".pytest_cache", ".ruff_cache"})


def fingerprint(candidate: Candidate) -> tuple[Any, ...]:
    """What a candidate's code is made of: each file's relative path and content digest.

    Files are read as the trust gate reads them (``_trust.hash_file``: opened non-blocking,
    regular files only, at most :data:`~._trust.MAX_SOURCE_BYTES` per candidate), so a FIFO
    or a ``/dev/zero`` link among a package's files is a marker, never a hang or a
    ``MemoryError``; data files (``.json``, ``.md``, ...) count by their ``stat`` only. Never
    raises. Entry points are installed distributions: never re-imported (constant).
    """
    if candidate.kind == "entry_point":
        return ("entry_point", candidate.entry_point)
    budget = [MAX_SOURCE_BYTES]
    path = candidate.resolved_path
    try:
        if candidate.kind != "package":
            return (_digest(path, budget),)
        files: list[tuple[str, str]] = []
        for directory, dirs, names in os.walk(path):
            dirs[:] = sorted(d for d in dirs if d not in _UNCOUNTED_DIRS and not d.startswith("."))
            for name in sorted(names):
                if name.startswith(".") or name.endswith((".pyc", ".pyo")):
                    continue
                full = os.path.join(directory, name)
                digest = _stat_key(full) if is_data_file(name) else _digest(full, budget)
                files.append((os.path.relpath(full, path), digest))
        return tuple(files)
    except Exception as exc:  # a walk that fails: a marker, so the candidate is re-imported
        return (f"unreadable: {type(exc).__name__}",)


def _digest(path: str, budget: list[int]) -> str:
    try:
        sha, size, _ = hash_file(os.path.realpath(path), budget[0])
    except NotRegularError as exc:
        return f"not a regular file: {exc.strerror}"
    except TooLargeError:
        return "too large"
    except OSError as exc:
        return f"unreadable: {type(exc).__name__}"
    budget[0] -= size
    return sha


def _stat_key(path: str) -> str:
    try:
        st = os.stat(path)
    except OSError as exc:
        return f"unreadable: {type(exc).__name__}"
    return f"stat: {st.st_mode:o} {st.st_size} {st.st_mtime_ns}"
