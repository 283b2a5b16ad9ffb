"""A sandboxed module worker: the worker of one tool pack, confined to its permissions.

:class:`SandboxedWorker` is a :class:`~._source.ModuleWorker` whose process receives only
the declared environment, a private temporary directory, and a policy it applies to itself
before importing the module (:mod:`._confine`). It refuses to load the module when the
host required a full sandbox and the worker reports less.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from customtools._isolation._confine import abi_cap
from customtools._isolation._process import scrubbed_environment
from customtools._isolation._source import ModuleWorker
from customtools._loading._paths import display_path, is_inside
from customtools._permissions import (
    DEFAULT_PERMISSIONS,
    OUTSIDE_DEFAULT,
    Permissions,
    PermissionsError,
    resolve_path,
)

if TYPE_CHECKING:
    from customtools._isolation._options import IsolationOptions
    from customtools._loading._records import Candidate

__all__ = ["SandboxedWorker", "describe_report"]

# Always passed (when set on the host): what a Python process and its programs need to run.
_BASE_ENV: Final = ("PATH", "HOME", "LANG", "LANGUAGE", "TZ", "PYTHONPATH", "PYTHONHOME")


def describe_report(report: dict[str, Any] | None) -> tuple[str, str]:
    """``(status, words)`` for a worker's sandbox report (``None``: it sent none)."""
    if not report:
        return "unavailable", "unavailable: the worker did not report a sandbox"
    status = str(report.get("status") or "unavailable")
    missing = "; ".join(str(item) for item in report.get("missing") or ())
    how = f"Landlock ABI {report.get('abi', 0)}"
    if report.get("netns"):
        how += ", no network (own user and network namespace)"
    elif report.get("userns"):
        how += ", own user namespace"
    if status == "enforced":
        return status, f"enforced ({how})"
    if status == "partial":
        return status, f"partly enforced ({how}); the running kernel cannot enforce: {missing}"
    return status, f"unavailable: {missing}"


def _check_inside(declared: str, resolved: str, cwd: str, where: str) -> None:
    """A project-relative permission must stay in the project, symlinks resolved (those of
    a path that does not exist yet too): the listing shows `data`, so `data` must not be a
    link to the home directory."""
    real = os.path.realpath(resolved)
    if is_inside(resolved, os.path.normpath(cwd)) and is_inside(real, os.path.realpath(cwd)):
        return
    raise PermissionsError(
        f"{where}: the project path {declared!r} leads outside the project (to {real});"
        " declare an absolute or `~/` path instead, so the user sees where it points"
    )


def _homes(home: str) -> set[str]:
    """The home directories a project must not be (nor contain): the load's, ``$HOME`` and
    the user's own from the password database."""
    found = {home, os.environ.get("HOME") or home}
    with contextlib.suppress(ImportError, KeyError):
        import pwd

        found.add(pwd.getpwuid(os.getuid()).pw_dir)
    return {os.path.realpath(path) for path in found if path}


def _not_a_project(cwd: str, home: str) -> str | None:
    """What ``cwd`` is when it cannot stand for a project (``/``, a home directory or one of
    its ancestors), else ``None``."""
    real = os.path.realpath(cwd)
    homes = _homes(home)
    if real == "/":
        return "the root directory"
    if real in homes:
        return "the home directory"
    if any(is_inside(path, real) for path in homes):
        return "an ancestor of the home directory"
    return None


def _check_project(cwd: str, home: str, declared: str, where: str) -> None:
    """A project-relative grant needs a project: not ``/``, a home directory or above one."""
    what = _not_a_project(cwd, home)
    if what is None:
        return
    real = os.path.realpath(cwd)
    raise PermissionsError(
        f"{where}: the project-relative permission {declared!r} would grant {real} ({what}):"
        " the project directory is the load's working directory (cwd), and this host runs in"
        f" {real}; start the host in the project's own directory (or pass its cwd), or declare"
        " absolute or `~/` paths"
    )


def _default_for(candidate: Candidate, cwd: str, home: str) -> Permissions:
    """The permissions of a pack that declares none: a project pack (found in the project,
    or an explicit path inside a project directory) may read the project; a pack from
    elsewhere (a user-level pack, an installed distribution) is not the project's and reads
    only its own files."""
    if candidate.source.level == "project":
        return DEFAULT_PERMISSIONS
    if (
        candidate.source.provider == "configured"
        and is_inside(os.path.realpath(candidate.path), os.path.realpath(cwd))
        and _not_a_project(cwd, home) is None
    ):
        return DEFAULT_PERMISSIONS
    return OUTSIDE_DEFAULT


def _create(declared: str, resolved: str, where: str, creatable: bool) -> None:
    """A declared write directory that does not exist yet: made now, before the worker is
    confined, when it lies in the project or the temporary directory (a rule can only be
    attached to an existing path); anywhere else it is the user's to create."""
    if not creatable:
        raise PermissionsError(
            f"{where}: the write path {declared!r} ({resolved}) does not exist, and the sandbox"
            " can only grant a path that exists; create it (`mkdir -p`), or declare a parent"
            " that exists"
        )
    try:
        os.makedirs(resolved, exist_ok=True)
    except OSError as exc:
        raise PermissionsError(
            f"{where}: the write directory {declared!r} ({resolved}) could not be created"
            f" ({exc.strerror or type(exc).__name__}); create it yourself"
        ) from None


def _check_not_ours(declared: str, resolved: str, home: str, where: str) -> None:
    """A write path must not cover customtools' own directory (``~/.customtools``: the trust
    store, user tools, the compiled-code cache): what a pack writes there would be trusted
    and run outside its sandbox by the next host."""
    from customtools._loading._reviewed import cache_root

    target = os.path.realpath(resolved)
    for own in dict.fromkeys((cache_root(), cache_root(home))):
        real = os.path.realpath(own)
        if is_inside(real, target) or is_inside(target, real):
            raise PermissionsError(
                f"{where}: write {declared!r} covers {display_path(own)},"
                " customtools' own directory (trust grants, user tools, compiled code): what"
                " the pack wrote there would run outside its sandbox; declare a narrower path"
            )


class SandboxedWorker(ModuleWorker):
    """The supervised, confined worker of one candidate (see the module docstring).

    Raises:
        PermissionsError: a project-relative permission leads outside the project.
    """

    relay_stderr = True

    def __init__(
        self,
        candidate: Candidate,
        *,
        cwd: str,
        load_timeout: float | None,
        options: IsolationOptions,
        permissions: Permissions | None,
        declared_in: str | None,
        home: str,
        require: bool,
        tools: frozenset[str] | None = None,
    ) -> None:
        super().__init__(candidate, cwd=cwd, load_timeout=load_timeout, options=options)
        if permissions is None:
            permissions = _default_for(candidate, cwd, home)
        self.permissions = permissions
        self.declared_in = declared_in
        self.require = require
        self.tools = tools  # the tools this worker serves (None: the module's own group)
        self.report: dict[str, Any] | None = None
        self.home = home
        self.tmp = tempfile.mkdtemp(prefix="customtools-sandbox-")
        base = os.environ if options.env is None else options.env
        try:
            self.policy = self._policy(cwd, home, base)
        except BaseException:
            shutil.rmtree(self.tmp, ignore_errors=True)
            raise

    def _policy(self, cwd: str, home: str, base: Mapping[str, str]) -> dict[str, Any]:
        perms = self.permissions
        where = self.declared_in or (
            f"{self.candidate.path} (no PERMISSIONS declared: the default permissions)"
        )

        def resolve(paths: tuple[str, ...], *, write: bool = False) -> list[str]:
            out = []
            for path in paths:
                resolved = resolve_path(path, cwd=cwd, home=home, tmp=self.tmp)
                relative = not path.startswith(("/", "~", "$TMP"))
                if relative:
                    _check_project(cwd, home, path, where)
                    _check_inside(path, resolved, cwd, where)
                if write:
                    _check_not_ours(path, resolved, home, where)
                    if not os.path.exists(resolved):
                        _create(path, resolved, where, relative or path.startswith("$TMP"))
                out.append(resolved)
            return out

        own = self.candidate.root or self.candidate.path
        reads = resolve(perms.read)
        if not self.candidate.path.startswith("<"):
            reads.append(os.path.abspath(own))
            reads.append(os.path.abspath(self.candidate.path))
            reads.append(os.path.realpath(self.candidate.resolved_path))
        policy: dict[str, Any] = {
            "read": reads,
            "write": [*resolve(perms.write, write=True), self.tmp],
            "net": perms.net if isinstance(perms.net, str) else list(perms.net),
            "run": perms.run,
            "home": home,
            "describe": perms.describe(project=cwd, home=home),
            "declaredIn": self.declared_in,
        }
        cap = abi_cap(base)
        if cap is not None:
            policy["maxAbi"] = cap
        return policy

    def _worker_env(self) -> dict[str, str]:
        base = os.environ if self.options.env is None else self.options.env
        env = scrubbed_environment(base, self.permissions.env, names=_BASE_ENV)
        env["TMPDIR"] = self.tmp
        env["HOME"] = self.home
        return env

    def _init_message(self) -> dict[str, Any]:
        message = super()._init_message()
        message["sandbox"] = self.policy
        return message

    def _refuse(self, ready: dict[str, Any]) -> str | None:
        report = ready.get("sandbox")
        self.report = report if isinstance(report, dict) else None
        status, words = describe_report(self.report)
        if self.require and status != "enforced":
            return (
                f"was stopped before importing the module: its sandbox is {words}, and the"
                " host requires a fully enforced sandbox (require_sandbox)"
            )
        return None

    def discard(self) -> None:
        """Forget a source that never started: remove its temporary directory."""
        shutil.rmtree(self.tmp, ignore_errors=True)

    async def aclose(self) -> None:
        """Kill the worker, then remove its temporary directory."""
        try:
            await super().aclose()
        finally:
            with contextlib.suppress(OSError):
                shutil.rmtree(self.tmp, ignore_errors=True)
