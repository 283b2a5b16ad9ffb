"""The trust store and the trust gate: project code loads only once the user trusted it.

The store
    :class:`TrustStore` keeps grants in the user's own configuration,
    ``<home>/.<app_name>/trust.json`` by default (written atomically, mode 0600), keyed by the
    source's real path, with the digest and the per-file hashes (so a changed source can be
    told apart from a new one and the change named). Nothing in a project and no environment
    variable is read for a trust decision. A store that cannot be read or parsed, is a
    symbolic link, or is writable by others is a :class:`TrustStoreError` naming the file:
    never "trusted".

Policy
    ``trust="prompt"`` (the default) loads user code and trusted project sources and lists
    every other project source as pending; ``"none"`` loads no project code at all; ``"all"``
    loads everything (a sandbox, CI on a checkout you own); a callable is asked per pending
    source and a ``True`` answer is recorded as a grant. See ``docs/trust.md``.
"""

from __future__ import annotations

import datetime
import inspect
import json
import os
import stat
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeAlias

from customtools._error_results import LoadCode
from customtools._errors import TrustStoreError
from customtools._loading._paths import display_path
from customtools._loading._records import Diagnostic, LoadError, MetadataFile, ScanResult
from customtools._loading._reviewed import register_root, write_private
from customtools._loading._trust import (
    PendingSource,
    ProjectSource,
    StatCache,
    StatKey,
    printable,
    project_sources,
    with_warnings,
)

__all__ = [
    "GateOutcome",
    "TrustCallback",
    "TrustGrant",
    "TrustPolicy",
    "TrustStore",
    "apply_trust",
    "default_store_path",
    "gate_source",
]

_STORE_VERSION = 1

TrustCallback: TypeAlias = "Callable[[PendingSource], bool | Awaitable[bool]]"
TrustPolicy: TypeAlias = "Literal['prompt', 'all', 'none'] | TrustCallback"


# -- the store ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class TrustGrant:
    """One recorded grant.

    Args:
        root: the source's real path (the key).
        path: the source root as found when it was granted.
        provider: its provider id.
        digest: the digest that was trusted.
        granted: when (ISO 8601, UTC).
        files: the trusted files: name -> (real path, sha256).
        stats: the stat cache entries: real path -> stat key (see :class:`TrustStore`).
        permissions: what each module (and each tool with its own declaration) was trusted
            to do when sandboxed, as ``Permissions.to_dict()``, for those that differ from
            the default (see ``ProjectSource.held``): a later change names what grew.
            ``None``: not recorded (a grant made before customtools recorded it).
    """

    root: str
    path: str
    provider: str
    digest: str
    granted: str
    files: dict[str, tuple[str, str]] = field(default_factory=dict)
    stats: dict[str, StatKey] = field(default_factory=dict)
    permissions: dict[str, dict[str, Any]] | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON form (the store's own record shape, plus ``root``)."""
        return {"root": self.root, **_record(self)}


def _record(grant: TrustGrant) -> dict[str, Any]:
    out = {
        "path": grant.path,
        "provider": grant.provider,
        "digest": grant.digest,
        "granted": grant.granted,
        "files": {
            name: _file_record(grant.root, name, real, sha, grant.stats.get(real))
            for name, (real, sha) in grant.files.items()
        },
    }
    if grant.permissions is not None:
        out["permissions"] = grant.permissions
    return out


def _default_real(root: str, name: str) -> str:
    """The real path of ``name`` when nothing between the real root and it is a link."""
    return root + os.sep + name.replace("/", os.sep)


def _file_record(root: str, name: str, real: str, sha: str, key: StatKey | None) -> dict[str, Any]:
    # The real path is written only when it is not the real root plus the name (a link):
    # it keeps the store small, and a small store parses quickly on every load.
    out: dict[str, Any] = {"sha256": sha}
    if real != _default_real(root, name):
        out["realPath"] = real
    if key is not None:
        out["stat"] = list(key)
    return out


def default_store_path(
    *, home: str | os.PathLike[str] | None = None, app_name: str = "customtools"
) -> str:
    """``<home>/.<app_name>/trust.json``: the user's own configuration, beside
    ``~/.<app_name>/tools``.

    Raises:
        ValueError: ``app_name`` is not a plain directory name.
    """
    if not app_name or app_name.strip() != app_name or any(s in app_name for s in "/\\\x00"):
        raise ValueError(f"app_name {app_name!r} must be a plain directory name")
    base = os.path.abspath(os.fspath(home)) if home is not None else str(Path.home())
    return os.path.join(base, f".{app_name}", "trust.json")


class TrustStore:
    """Grants of project sources, in the user's own configuration.

    Args:
        path: the store file (default: ``<home>/.<app_name>/trust.json``).
        home: the home directory (default: the user's).
        app_name: the host's app directory name (``~/.<app_name>``).
        stat_cache: let checks skip reading files whose stat is unchanged since they were
            trusted (see :meth:`stat_cache`); a grant always reads and hashes every file.

    Every method reads the file afresh (so two processes see each other's grants); writes
    are atomic (a temporary file in the same directory, then a rename) with mode 0600.
    """

    __slots__ = ("_path", "_stat_cache")

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        home: str | os.PathLike[str] | None = None,
        app_name: str = "customtools",
        stat_cache: bool = True,
    ) -> None:
        self._stat_cache = stat_cache
        self._path = (
            os.path.abspath(os.fspath(path))
            if path is not None
            else default_store_path(home=home, app_name=app_name)
        )

    def __repr__(self) -> str:
        return f"TrustStore({self._path!r})"

    @property
    def path(self) -> str:
        """The store file."""
        return self._path

    # -- reading ----------------------------------------------------------------------------

    def _fail(self, what: str) -> TrustStoreError:
        shown = display_path(self._path)
        return TrustStoreError(
            f"trust store {shown} {what}; no project source is trusted until it is fixed "
            f"(repair it, or delete it and trust the projects again)",
            path=self._path,
        )

    def _read(self) -> dict[str, TrustGrant]:
        try:
            if stat.S_ISLNK(os.lstat(self._path).st_mode):
                # Trust comes from a regular file the user owns, never through a link that
                # could point into a project.
                raise self._fail("is a symbolic link")
            with open(self._path, "rb") as handle:
                st = os.fstat(handle.fileno())
                raw = handle.read()
        except FileNotFoundError:
            return {}
        except OSError as exc:
            raise self._fail(f"cannot be read ({exc.strerror or type(exc).__name__})") from None
        if os.name == "posix":
            if not stat.S_ISREG(st.st_mode):
                raise self._fail("is not a regular file")
            if st.st_uid != os.geteuid():
                raise self._fail("is owned by another user")
            if st.st_mode & 0o022:
                raise self._fail("is writable by other users (chmod 600 it)")
        try:
            data = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            raise self._fail(f"is not valid JSON ({type(exc).__name__})") from None
        if not isinstance(data, dict) or data.get("version") != _STORE_VERSION:
            raise self._fail(f'is not a version {_STORE_VERSION} trust store ("version" key)')
        sources = data.get("sources")
        if not isinstance(sources, dict):
            raise self._fail('has no "sources" object')
        grants: dict[str, TrustGrant] = {}
        for root, entry in sources.items():
            grants[root] = self._grant_from(root, entry)
        return grants

    def _grant_from(self, root: str, entry: Any) -> TrustGrant:
        ok = (
            isinstance(entry, dict)
            and isinstance(entry.get("digest"), str)
            and isinstance(entry.get("files"), dict)
        )
        files: dict[str, tuple[str, str]] = {}
        stats: dict[str, StatKey] = {}
        if ok:
            prefix = root + os.sep
            for name, item in entry["files"].items():
                if type(item) is not dict:
                    ok = False
                    break
                sha = item.get("sha256")
                real = item.get("realPath") or prefix + name.replace("/", os.sep)
                if type(sha) is not str or type(real) is not str:
                    ok = False
                    break
                files[name] = (real, sha)
                key = item.get("stat")
                if type(key) is list and len(key) == 5:
                    a, b, c, d, e = key
                    if type(a) is type(b) is type(c) is type(d) is type(e) is int:
                        stats[real] = (a, b, c, d, e)
        if not ok:
            raise self._fail(f"has a malformed entry for {root!r}")
        held = entry.get("permissions")
        return TrustGrant(
            root=root,
            path=str(entry.get("path", root)),
            provider=str(entry.get("provider", "")),
            digest=entry["digest"],
            granted=str(entry.get("granted", "")),
            files=files,
            stats=stats,
            permissions={
                str(label): value for label, value in held.items() if isinstance(value, dict)
            }
            if isinstance(held, dict)
            else None,
        )

    def grants(self) -> tuple[TrustGrant, ...]:
        """Every recorded grant, sorted by root.

        Raises:
            TrustStoreError: the store cannot be read or parsed.
        """
        return tuple(sorted(self._read().values(), key=lambda grant: grant.root))

    def stat_cache(self) -> StatCache:
        """Real path -> (stat key, sha256) of every trusted file, for
        :func:`project_sources`: a file whose device, inode, size, mtime and ctime are what
        they were when it was trusted is not read again.

        Why that is safe: ``st_ctime`` is set by the kernel on every write and every metadata
        change (including ``utime``) and cannot be set back by a user, so an unchanged key
        means the file was not written through the file system since it was hashed. Files
        changed less than two seconds before they were hashed are never cached (a write in the
        same timestamp tick would not move ``st_ctime``). Off on Windows (``st_ctime`` is the
        creation time there). Not safe on file systems that fake ``ctime`` (some network and
        FUSE file systems): pass ``stat_cache=False`` to :class:`TrustStore` there.

        Raises:
            TrustStoreError: the store cannot be read or parsed.
        """
        return self._cache_from(self._read())

    def _cache_from(self, grants: dict[str, TrustGrant]) -> StatCache:
        if not self._stat_cache:
            return {}
        cache: StatCache = {}
        for grant in grants.values():
            for real, sha in grant.files.values():
                key = grant.stats.get(real)
                if key is not None:
                    cache[real] = (key, sha)
        return cache

    def check(self, source: ProjectSource) -> PendingSource | None:
        """``None`` when ``source`` is trusted as it is now; else why not, as a
        :class:`PendingSource`.

        Raises:
            TrustStoreError: the store cannot be read or parsed.
        """
        return self._check(source, self._read())

    def is_trusted(self, source: ProjectSource) -> bool:
        """Whether exactly this content of ``source`` was granted.

        Raises:
            TrustStoreError: the store cannot be read or parsed.
        """
        return self.check(source) is None

    def pending(
        self,
        scanned: ScanResult | Iterable[ProjectSource],
        *,
        metadata: Iterable[MetadataFile] = (),
    ) -> tuple[PendingSource, ...]:
        """The project sources of ``scanned`` (a scan, or sources already hashed) that are not
        trusted as they are now, with what changed and any hidden-character warnings.

        Raises:
            TrustStoreError: the store cannot be read or parsed.
        """
        return self._pending(scanned, metadata=metadata)[1]

    def _pending(
        self,
        scanned: ScanResult | Iterable[ProjectSource],
        *,
        metadata: Iterable[MetadataFile] = (),
        project: str | None = None,
    ) -> tuple[tuple[ProjectSource, ...], tuple[PendingSource, ...]]:
        """Every project source as hashed, and those that are pending."""
        grants = self._read()
        if isinstance(scanned, ScanResult):
            cache = self._cache_from(grants)
            sources = project_sources(scanned, cache=cache, project=project)
            metadata = scanned.metadata
        else:
            sources = tuple(scanned)
        found = (self._check(source, grants) for source in sources)
        metadata = tuple(metadata)
        pending = tuple(with_warnings(item, metadata) for item in found if item is not None)
        return sources, pending

    def _check(self, source: ProjectSource, grants: dict[str, TrustGrant]) -> PendingSource | None:
        grant = grants.get(source.real_root)
        if grant is None:
            moved = [g for g in grants.values() if g.path == source.root]
            if moved:
                change = (
                    f"{display_path(source.root)} now resolves to {display_path(source.real_root)}"
                    f" (trusted: {display_path(moved[0].root)})"
                )
                return PendingSource(source=source, status="changed", changes=(change,))
            return PendingSource(source=source)
        if source.trustable and grant.digest == source.digest:
            return None
        return PendingSource(source=source, status="changed", changes=_changes(grant, source))

    # -- writing ----------------------------------------------------------------------------

    def grant(self, source: ProjectSource | PendingSource) -> TrustGrant:
        """Trust exactly the files of ``source`` as they were read (a pending source is
        granted as it was shown, even if the files changed since: the next load asks again).

        Raises:
            ValueError: the source cannot be trusted (see ``ProjectSource.problems``).
            TrustStoreError: the store cannot be read, parsed or written.
        """
        project = source.source if isinstance(source, PendingSource) else source
        if not project.trustable:
            raise ValueError(
                f"project source {display_path(project.root)} cannot be trusted: "
                + "; ".join(project.problems)
            )
        grants = self._read()
        now = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
        grant = TrustGrant(
            root=project.real_root,
            path=project.root,
            provider=project.provider,
            digest=project.digest,
            granted=now.isoformat().replace("+00:00", "Z"),
            files={item.name: (item.real_path, item.sha256) for item in project.files},
            stats={item.real_path: item.stat for item in project.files if item.stat is not None},
            permissions=_recorded(project),
        )
        grants[grant.root] = grant
        self._write(grants)
        return grant

    def revoke(self, root: str | os.PathLike[str] | ProjectSource | PendingSource) -> bool:
        """Forget the grant of a source (given as a source, or as its root path, resolved
        through symlinks); returns whether there was one.

        Raises:
            TrustStoreError: the store cannot be read, parsed or written.
        """
        if isinstance(root, PendingSource):
            key = root.source.real_root
        elif isinstance(root, ProjectSource):
            key = root.real_root
        else:
            key = os.path.realpath(os.fspath(root))
        grants = self._read()
        if grants.pop(key, None) is None:
            return False
        self._write(grants)
        return True

    def _write(self, grants: dict[str, TrustGrant]) -> None:
        data = {
            "version": _STORE_VERSION,
            "sources": {root: _record(grants[root]) for root in sorted(grants)},
        }
        # Compact: the store is parsed on every load that meets project code.
        text = json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n"
        try:
            encoded = text.encode("utf-8", "surrogateescape")
            write_private(self._path, encoded, prefix=".trust-", sync=True)
        except OSError as exc:
            raise self._fail(f"cannot be written ({exc.strerror or type(exc).__name__})") from None


def _changes(grant: TrustGrant, source: ProjectSource) -> tuple[str, ...]:
    now = {item.name: (item.real_path, item.sha256) for item in source.files}
    out: list[str] = []
    for name in sorted(now.keys() - grant.files.keys()):
        out.append(f"added {printable(name)}")
    for name in sorted(grant.files.keys() - now.keys()):
        out.append(f"removed {printable(name)}")
    for name in sorted(now.keys() & grant.files.keys()):
        (real, sha), (was_real, was_sha) = now[name], grant.files[name]
        if real != was_real:
            was = display_path(was_real)
            out.append(f"{printable(name)} now points to {display_path(real)} (was {was})")
        elif sha != was_sha:
            out.append(f"{printable(name)} was edited")
    out.extend(_grown(grant, source))
    out.extend(source.problems)
    return tuple(out) or ("content changed",)


def _recorded(source: ProjectSource) -> dict[str, dict[str, Any]]:
    """What a grant records of ``source.held``: the permissions that are not the default."""
    from customtools._permissions import DEFAULT_PERMISSIONS

    return {label: held.to_dict() for label, held in source.held if held != DEFAULT_PERMISSIONS}


def _grown(grant: TrustGrant, source: ProjectSource) -> list[str]:
    """What each module may do now that it was not trusted to (for grants that recorded
    it): "x.py now may also connect to TCP port(s) 443"."""
    from customtools._permissions import DEFAULT_PERMISSIONS, Permissions, PermissionsError

    if grant.permissions is None:
        return []
    out = []
    for label, now in source.held:
        # Not recorded: the default, or for a tool, what its module held.
        was = grant.permissions.get(label) or grant.permissions.get(label.split(", tool ")[0])
        try:
            before = DEFAULT_PERMISSIONS if was is None else Permissions.from_dict(was)
        except (PermissionsError, TypeError, ValueError):
            continue
        grown = now.growth(before, project=source.project)
        if grown:
            out.append(f"{label} now may also {printable('; '.join(grown))}")
    return out


# -- the gate -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class GateOutcome:
    """What :func:`apply_trust` decided."""

    scanned: ScanResult
    pending: tuple[PendingSource, ...] = ()
    diagnostics: tuple[Diagnostic, ...] = ()
    errors: tuple[LoadError, ...] = ()
    sources: tuple[ProjectSource, ...] = ()
    """The project sources as hashed (their digests key the manifest cache)."""


async def apply_trust(
    scanned: ScanResult,
    policy: TrustPolicy,
    store: TrustStore | None,
    *,
    project: str | None = None,
) -> GateOutcome:
    """Drop the candidates of untrusted project sources from ``scanned``.

    Nothing is read or hashed when the scan holds no project candidate or ``policy`` is
    ``"all"``. A store that cannot be read is a ``"trust-store-error"`` LoadError and every
    project source is then blocked. ``project`` (the load's ``cwd``) is where the listing
    resolves project-relative permissions.
    """
    if policy == "all" or not any(c.source.level == "project" for c in scanned.candidates):
        return GateOutcome(scanned=scanned)
    errors: list[LoadError] = []
    pending: list[PendingSource] = []
    sources: tuple[ProjectSource, ...] = ()
    if policy != "none":
        store = store if store is not None else TrustStore()
        try:
            sources, found = store._pending(scanned, project=project)
            pending = list(found)
            if callable(policy):
                pending = await _ask(policy, pending, store)
            _register_trusted(sources, pending)
        except TrustStoreError as exc:
            errors.append(LoadError(path=exc.path, error=str(exc), code=LoadCode.TRUST_STORE_ERROR))
    if policy == "none" or errors:
        sources = project_sources(scanned, project=project)
        why = (
            f"the trust store {display_path(errors[0].path)} cannot be used"
            if errors
            else "the host loads no project code (trust='none')"
        )
        pending = [
            with_warnings(
                PendingSource(source=source, status="blocked", changes=(why,)), scanned.metadata
            )
            for source in sources
        ]
    blocked = {id(c) for item in pending for c in item.source.candidates}
    kept = tuple(c for c in scanned.candidates if id(c) not in blocked)
    diagnostics = tuple(
        Diagnostic(
            code=LoadCode.PENDING_TRUST,
            message=item.message(),
            path=item.root,
            source=item.source.source,
        )
        for item in pending
    )
    return GateOutcome(
        scanned=ScanResult(
            candidates=kept,
            metadata=scanned.metadata,
            diagnostics=scanned.diagnostics,
            errors=scanned.errors,
        ),
        pending=tuple(pending),
        diagnostics=diagnostics,
        errors=tuple(errors),
        sources=sources,
    )


def _register_trusted(sources: Iterable[ProjectSource], pending: Iterable[PendingSource]) -> None:
    """Hand the hashes of the sources about to load to the import machinery, so their code
    is compiled from exactly the bytes that were trusted (``_reviewed``)."""
    held = {id(item.source) for item in pending}
    for source in sources:
        if id(source) not in held and source.candidates:
            register_root(source.root, files={item.real_path: item.sha256 for item in source.files})


async def gate_source(
    source: ProjectSource, policy: TrustPolicy, store: TrustStore | None
) -> PendingSource | None:
    """The trust decision for one project source built outside a scan (a project
    ``.mcp.json``): ``None`` when it may run, else the :class:`PendingSource` to report.

    Raises:
        TrustStoreError: the store cannot be read or parsed.
    """
    if policy == "all":
        return None
    if policy == "none":
        why = "the host loads no project code (trust='none')"
        return PendingSource(source=source, status="blocked", changes=(why,))
    store = store if store is not None else TrustStore()
    pending = store.check(source)
    if pending is None or not callable(policy):
        return pending
    still = await _ask(policy, [pending], store)
    return still[0] if still else None


async def _ask(
    callback: TrustCallback, pending: list[PendingSource], store: TrustStore
) -> list[PendingSource]:
    still: list[PendingSource] = []
    for item in pending:
        if not item.source.trustable:
            still.append(item)
            continue
        answer: Any = callback(item)
        if inspect.isawaitable(answer):
            answer = await answer
        if answer is True:
            store.grant(item)
        else:
            still.append(item)
    return still
