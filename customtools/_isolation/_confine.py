"""Kernel confinement of a sandboxed isolation worker (Linux).

:func:`confine` runs in the worker right after the ``init`` message, while the worker still
has one thread and before any tool code (or anyio) is imported: Landlock (below ABI 8),
seccomp and a new user namespace apply to the calling thread / a single-threaded process
only. In order:

1. ``unshare(CLONE_NEWUSER | CLONE_NEWNS)``, with ``CLONE_NEWNET`` when the pack declares
   no network, for every permission set: the user namespace keeps the worker away from
   other processes of the same user (their ``/proc/<pid>`` files) and makes any root it
   has worthless outside; without network it sees only a loopback interface that is down.
2. Read-only mounts: in its own mount namespace every mount is read-only except the write
   paths, bound over themselves writable (Landlock does not handle ``chmod``, ``utime``,
   ``chown`` or extended attributes; a read-only mount refuses them).
3. No capabilities (bounding, ambient and the sets themselves) and a new, empty session
   keyring; ``PR_SET_NO_NEW_PRIVS``.
4. seccomp: see :mod:`._seccomp`.
5. Landlock, at the best ABI the kernel (or ``CUSTOMTOOLS_SANDBOX_MAX_ABI``) offers: every
   filesystem right is handled, and granted only beneath the declared paths, the Python
   installation and a few system files; TCP bind/connect only to declared ports (ABI >= 4);
   signals and abstract UNIX sockets scoped to the sandbox (ABI >= 6).

Everything is inherited by the worker's child processes. The outcome is a report
(``enforced``, ``partial`` with the missing rights, or ``unavailable``) that the worker sends
to the host in its ``ready`` message. How a denial reads is :mod:`._denials`.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import sys
from collections.abc import Mapping, Sequence
from typing import Any, Final

from customtools._isolation._seccomp import SECCOMP_ARCH
from customtools._isolation._seccomp import install as install_seccomp

__all__ = ["ABI_ENV", "abi_cap", "confine", "landlock_abi", "readable_paths"]

ABI_ENV: Final = "CUSTOMTOOLS_SANDBOX_MAX_ABI"
"""Environment variable capping the Landlock ABI the sandbox uses (emulates an older kernel)."""

_SYS_CREATE_RULESET: Final = 444
_SYS_ADD_RULE: Final = 445
_SYS_RESTRICT_SELF: Final = 446
_RULE_PATH_BENEATH: Final = 1
_RULE_NET_PORT: Final = 2
_PR_SET_NO_NEW_PRIVS: Final = 38
_PR_CAPBSET_DROP: Final = 24
_PR_CAP_AMBIENT: Final = 47
_PR_CAP_AMBIENT_CLEAR_ALL: Final = 4
_LINUX_CAPABILITY_VERSION_3: Final = 0x20080522
_CLONE_NEWNS: Final = 0x00020000
_CLONE_NEWUSER: Final = 0x10000000
_CLONE_NEWNET: Final = 0x40000000
# The new mount API (Linux 5.12), same numbers on every architecture.
_SYS_OPEN_TREE: Final = 428
_SYS_MOVE_MOUNT: Final = 429
_SYS_MOUNT_SETATTR: Final = 442
_AT_FDCWD: Final = -100
_AT_EMPTY_PATH: Final = 0x1000
_AT_RECURSIVE: Final = 0x8000
_OPEN_TREE_CLONE: Final = 1
_OPEN_TREE_CLOEXEC: Final = 0o2000000
_MOVE_MOUNT_F_EMPTY_PATH: Final = 0x4
_MOUNT_ATTR_RDONLY: Final = 0x1
_MS_REC: Final = 0x4000
_MS_PRIVATE: Final = 1 << 18

EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
REMOVE_DIR, REMOVE_FILE, MAKE_CHAR, MAKE_DIR = 1 << 4, 1 << 5, 1 << 6, 1 << 7
MAKE_REG, MAKE_SOCK, MAKE_FIFO, MAKE_BLOCK = 1 << 8, 1 << 9, 1 << 10, 1 << 11
MAKE_SYM, REFER, TRUNCATE, IOCTL_DEV = 1 << 12, 1 << 13, 1 << 14, 1 << 15
_FS_BY_ABI: Final = {1: (1 << 13) - 1, 2: (1 << 14) - 1, 3: (1 << 15) - 1, 5: (1 << 16) - 1}
_FILE_ONLY: Final = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV
_READ: Final = READ_FILE | READ_DIR
_WRITE: Final = (
    _READ
    | WRITE_FILE
    | REMOVE_DIR
    | REMOVE_FILE
    | MAKE_DIR
    | MAKE_REG
    | MAKE_SOCK
    | MAKE_FIFO
    | MAKE_SYM
    | REFER
    | TRUNCATE
)
_NET_BIND, _NET_CONNECT = 1 << 0, 1 << 1
_SCOPE_ABSTRACT_UNIX, _SCOPE_SIGNAL = 1 << 0, 1 << 1

# Read-only system files a Python process (and the programs it may start) needs.
_SYSTEM_READ: Final = (
    "/usr",
    "/lib",
    "/lib64",
    "/lib32",
    "/bin",
    "/sbin",
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/localtime",
    "/etc/passwd",
    "/etc/group",
    "/etc/nsswitch.conf",
    "/etc/hosts",
    "/etc/resolv.conf",
    "/etc/host.conf",
    "/etc/gai.conf",
    "/etc/ssl",
    "/etc/ca-certificates",
    "/etc/mime.types",
    "/proc",
    "/dev/urandom",
    "/dev/random",
    "/dev/zero",
)


class _RulesetAttr(ctypes.Structure):
    _fields_ = (
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    )


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = (("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32))


class _NetPort(ctypes.Structure):
    _fields_ = (("allowed_access", ctypes.c_uint64), ("port", ctypes.c_uint64))


def _libc() -> Any:
    return ctypes.CDLL(None, use_errno=True)


def _syscall(libc: Any, number: int, *args: Any) -> int:
    result = int(libc.syscall(ctypes.c_long(number), *args))
    if result < 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code))
    return result


def landlock_abi(cap: int | None = None) -> int:
    """The Landlock ABI this kernel offers (``0``: none), at most ``cap`` when given."""
    if not sys.platform.startswith("linux"):
        return 0
    try:
        abi = _syscall(_libc(), _SYS_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(1))
    except OSError:
        return 0
    return max(0, min(abi, cap)) if cap is not None else abi


def abi_cap(environ: Mapping[str, str]) -> int | None:
    """The ABI cap ``environ`` sets through :data:`ABI_ENV`, if any."""
    text = environ.get(ABI_ENV)
    if not text:
        return None
    try:
        return int(text)
    except ValueError:
        return None


def _namespaces(libc: Any, *, network: bool) -> str | None:
    """Enter a user and a mount namespace of our own (and a network namespace when
    ``network``); ``None`` on success, else why not.

    The user namespace is what separates the worker from every other process of the same
    user: without capabilities in their namespace it cannot read their ``/proc/<pid>``
    files (environment, memory maps), and whatever it holds inside its own namespace is
    worth nothing outside it (the host's network namespace keeps refusing raw sockets).
    """
    uid, gid = os.getuid(), os.getgid()
    flags = _CLONE_NEWUSER | _CLONE_NEWNS | (_CLONE_NEWNET if network else 0)
    if int(libc.unshare(ctypes.c_int(flags))) != 0:
        return os.strerror(ctypes.get_errno())
    try:
        # Keep our identity inside: unmapped ids could not create files (EOVERFLOW).
        with open("/proc/self/setgroups", "w") as handle:
            handle.write("deny")
        with open("/proc/self/uid_map", "w") as handle:
            handle.write(f"{uid} {uid} 1")
        with open("/proc/self/gid_map", "w") as handle:
            handle.write(f"{gid} {gid} 1")
    except OSError as exc:
        return f"the id maps could not be written ({exc.strerror})"
    return None


class _MountAttr(ctypes.Structure):
    _fields_ = (
        ("attr_set", ctypes.c_uint64),
        ("attr_clr", ctypes.c_uint64),
        ("propagation", ctypes.c_uint64),
        ("userns_fd", ctypes.c_uint64),
    )


def _set_read_only(libc: Any, fd: int, path: bytes, flags: int, *, read_only: bool) -> int:
    attr = (
        _MountAttr(_MOUNT_ATTR_RDONLY, 0, 0, 0) if read_only else _MountAttr(0, _MOUNT_ATTR_RDONLY)
    )
    return int(
        libc.syscall(
            ctypes.c_long(_SYS_MOUNT_SETATTR),
            ctypes.c_int(fd),
            path,
            ctypes.c_uint(flags),
            ctypes.byref(attr),
            ctypes.c_size_t(ctypes.sizeof(attr)),
        )
    )


def _read_only_mounts(libc: Any, writable: Sequence[str]) -> list[str] | None:
    """In our own mount namespace: every mount read-only except the write set, bound over
    itself writable. ``None`` when nothing was made read-only; else the write paths that
    could not be made writable again (each with why), usually none.

    Landlock (up to ABI 9) does not handle metadata changes: this is what refuses
    ``chmod``, ``chown``, ``utime`` and extended attributes outside the write set (with
    ``EROFS``), while they keep working inside it. The host's mounts are not touched: these
    are our namespace's copies, made private so that nothing propagates either way.
    """
    if int(libc.mount(None, b"/", None, ctypes.c_ulong(_MS_REC | _MS_PRIVATE), None)) != 0:
        return None
    if _set_read_only(libc, _AT_FDCWD, b"/", _AT_RECURSIVE, read_only=True) != 0:
        return None
    stuck = []
    for path in sorted(writable, key=len):  # a parent first: a bind inside it stays on top
        encoded = os.fsencode(path)
        fd = int(
            libc.syscall(
                ctypes.c_long(_SYS_OPEN_TREE),
                ctypes.c_int(_AT_FDCWD),
                encoded,
                ctypes.c_uint(_OPEN_TREE_CLONE | _OPEN_TREE_CLOEXEC | _AT_RECURSIVE),
            )
        )
        if fd < 0:
            if ctypes.get_errno() != errno.ENOENT:  # a path that does not exist grants nothing
                stuck.append(f"{path} ({os.strerror(ctypes.get_errno())})")
            continue
        try:
            empty = _AT_EMPTY_PATH
            # A mount below it that the host made read-only stays read-only (locked).
            if (
                _set_read_only(libc, fd, b"", empty | _AT_RECURSIVE, read_only=False) != 0
                and _set_read_only(libc, fd, b"", empty, read_only=False) != 0
            ) or int(
                libc.syscall(
                    ctypes.c_long(_SYS_MOVE_MOUNT),
                    ctypes.c_int(fd),
                    b"",
                    ctypes.c_int(_AT_FDCWD),
                    encoded,
                    ctypes.c_uint(_MOVE_MOUNT_F_EMPTY_PATH),
                )
            ) != 0:
                stuck.append(f"{path} ({os.strerror(ctypes.get_errno())})")
        finally:
            os.close(fd)
    # The working directory still refers to the mount below a bind over it.
    with contextlib.suppress(OSError):
        os.chdir(os.getcwd())
    return stuck


class _CapHeader(ctypes.Structure):
    _fields_ = (("version", ctypes.c_uint32), ("pid", ctypes.c_int))


class _CapData(ctypes.Structure):
    _fields_ = (
        ("effective", ctypes.c_uint32),
        ("permitted", ctypes.c_uint32),
        ("inheritable", ctypes.c_uint32),
    )


def _drop_privileges(libc: Any, nr_keyctl: int | None) -> None:
    """No capabilities, none to gain, and a session keyring of our own.

    In its own user namespace the worker holds every capability *there*; dropped all the
    same (bounding set, ambient set, then the sets themselves), so that nothing it starts
    can use them either. Failures (no ``CAP_SETPCAP`` outside a user namespace) leave what
    the process already had: an unprivileged user has nothing to drop.
    """
    if nr_keyctl is not None:
        # KEYCTL_JOIN_SESSION_KEYRING with no name: a new, empty, anonymous one.
        libc.syscall(ctypes.c_long(nr_keyctl), ctypes.c_int(1), None)
    for cap in range(64):
        if (
            int(libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0)) != 0
            and ctypes.get_errno() == errno.EINVAL
        ):
            break  # past the last capability this kernel knows
    libc.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    header = _CapHeader(_LINUX_CAPABILITY_VERSION_3, 0)
    data = (_CapData * 2)()
    libc.capset(ctypes.byref(header), data)


def readable_paths() -> list[str]:
    """What every sandboxed worker may read: system files and the Python installation."""
    return [*_SYSTEM_READ, *_python_paths()]


def _python_paths() -> list[str]:
    paths = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    paths.update(p for p in sys.path if p and os.path.isabs(p))
    paths.add(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # customtools
    paths.add(os.path.dirname(os.path.realpath(sys.executable)))
    return sorted(paths)


def _add_path(libc: Any, ruleset: int, path: str, access: int, handled: int) -> None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return  # a path that does not exist grants nothing
    try:
        if not os.path.isdir(path):
            access &= _FILE_ONLY
        rule = _PathBeneath(allowed_access=access & handled, parent_fd=fd)
        if rule.allowed_access:
            _add_rule(libc, ruleset, _RULE_PATH_BENEATH, rule)
    finally:
        os.close(fd)


def _add_rule(libc: Any, ruleset: int, kind: int, rule: ctypes.Structure) -> None:
    args = (ctypes.c_int(ruleset), ctypes.c_int(kind), ctypes.byref(rule), ctypes.c_uint32(0))
    _syscall(libc, _SYS_ADD_RULE, *args)


def _landlock(libc: Any, abi: int, policy: Mapping[str, Any]) -> None:
    run = bool(policy.get("run"))
    net = policy.get("net", "none")
    handled_fs = _FS_BY_ABI[max(k for k in _FS_BY_ABI if k <= abi)]
    handled_net = (_NET_BIND | _NET_CONNECT) if abi >= 4 and net != "all" else 0
    scoped = (_SCOPE_ABSTRACT_UNIX | _SCOPE_SIGNAL) if abi >= 6 else 0
    attr = _RulesetAttr(handled_fs, handled_net, scoped)
    size = 8 if abi < 4 else 16 if abi < 6 else 24
    ruleset = _syscall(
        libc, _SYS_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0)
    )
    try:
        execute = EXECUTE if run else 0
        for path in [*readable_paths(), *policy.get("read", ())]:
            _add_path(libc, ruleset, path, _READ | execute, handled_fs)
        for path in policy.get("write", ()):
            _add_path(libc, ruleset, path, _WRITE | execute | IOCTL_DEV, handled_fs)
        _add_path(libc, ruleset, "/dev/null", READ_FILE | WRITE_FILE | TRUNCATE, handled_fs)
        if handled_net and isinstance(net, (list, tuple)):
            for port in net:
                rule = _NetPort(allowed_access=_NET_BIND | _NET_CONNECT, port=int(port))
                _add_rule(libc, ruleset, _RULE_NET_PORT, rule)
        _syscall(libc, _SYS_RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0))
    finally:
        os.close(ruleset)


def confine(policy: Mapping[str, Any]) -> dict[str, Any]:
    """Confine this (single-threaded) process to ``policy``; the report of what holds.

    ``policy`` holds absolute ``read`` and ``write`` paths, ``net`` (``"none"``, ``"all"`` or
    ports), ``run`` and optionally ``maxAbi`` (a cap on the Landlock ABI used). Never
    raises: what could not be applied is in the report's ``missing`` list (``status``
    ``"partial"``), or the status is ``"unavailable"``.
    """
    if not sys.platform.startswith("linux"):
        return {
            "status": "unavailable",
            "abi": 0,
            "missing": [f"no kernel sandbox on {sys.platform} (Landlock is Linux only)"],
        }
    libc = _libc()
    missing: list[str] = []
    net = policy.get("net", "none")
    failure = _namespaces(libc, network=net == "none")
    namespace = failure is None
    mounts = False
    if failure is not None:
        missing.append(
            f"user namespace ({failure}): other processes' /proc files (environment, memory"
            " maps) of the same user"
            + (
                ", and the network namespace: UDP and other non-TCP sockets"
                if net == "none"
                else ""
            )
        )
    else:
        stuck = _read_only_mounts(libc, policy.get("write", ()))
        mounts = stuck is not None
        if stuck:
            missing.append("writing to " + ", ".join(stuck) + ": it stayed read-only")
    arch = SECCOMP_ARCH.get(os.uname().machine)
    _drop_privileges(libc, arch.keyctl if arch is not None else None)
    if int(libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) != 0:
        missing.append("no_new_privs")
    else:
        failure = install_seccomp(libc, sockets=net != "all", metadata_paths=not mounts)
        if failure is not None:
            missing.append(
                f"seccomp ({failure}): pathname UNIX sockets, other socket protocols,"
                " metadata changes (chmod, utime, xattrs), keyrings and io_uring"
            )
    cap = policy.get("maxAbi")
    abi = landlock_abi(int(cap) if cap is not None else None)
    base = {"abi": abi, "netns": namespace and net == "none", "userns": namespace}
    if abi < 1:
        missing.insert(0, "Landlock (filesystem, TCP ports): the kernel has none")
        return {"status": "unavailable", "missing": missing, **base}
    try:
        _landlock(libc, abi, policy)
    except OSError as exc:
        return {
            "status": "unavailable",
            "missing": [f"Landlock could not be enforced ({exc.strerror})", *missing],
            **base,
        }
    if abi < 2:
        missing.append("controlled rename and link between directories (Landlock ABI 2)")
    if abi < 3:
        missing.append("file truncation (Landlock ABI 3)")
    if abi < 4 and net != "all" and not base["netns"]:
        missing.append("TCP port rules (Landlock ABI 4)")
    elif abi < 4 and isinstance(net, (list, tuple)):
        missing.append("TCP port rules (Landlock ABI 4): every port is allowed")
    if isinstance(net, (list, tuple)):
        missing.append("UDP (Landlock filters TCP only)")
    if abi < 5:
        missing.append("ioctl on device files (Landlock ABI 5)")
    if abi < 6:
        missing.append("signal and abstract UNIX socket scoping (Landlock ABI 6)")
    return {"status": "partial" if missing else "enforced", "missing": missing, **base}
