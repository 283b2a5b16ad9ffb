"""Kernel confinement of a sandboxed isolation worker (Linux), and how denials read.

:func:`confine` runs in the worker right after the ``init`` message, while the worker still
has one thread and before any tool code (or anyio) is imported: Landlock (below ABI 8) and
a new user namespace apply to the calling thread / a single-threaded process only. In order:

1. ``unshare(CLONE_NEWUSER | CLONE_NEWNET)`` when the pack declares no network: the worker
   then sees only a loopback interface that is down (no host, no loopback services).
2. ``PR_SET_NO_NEW_PRIVS``: no setuid gain, and the precondition of Landlock.
3. Landlock, at the best ABI the kernel (or ``CUSTOMTOOLS_SANDBOX_MAX_ABI``) offers: every
   filesystem right is handled, and granted only beneath the declared paths, the Python
   installation and a few system files; TCP bind/connect only to declared ports (ABI >= 4);
   signals and abstract UNIX sockets scoped to the sandbox (ABI >= 6).

Everything is inherited by the worker's child processes. The outcome is a report
(``enforced``, ``partial`` with the missing rights, or ``unavailable``) that the worker sends
to the host in its ``ready`` message. :func:`guard` turns a denial seen by a tool
(``EACCES``/``EPERM``, or ``ENETUNREACH`` without network) into an error result naming the
permission.
"""

from __future__ import annotations

import ctypes
import errno
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

__all__ = ["ABI_ENV", "abi_cap", "confine", "denial", "guard", "landlock_abi"]

ABI_ENV: Final = "CUSTOMTOOLS_SANDBOX_MAX_ABI"
"""Environment variable capping the Landlock ABI the sandbox uses (emulates an older kernel)."""

_SYS_CREATE_RULESET: Final = 444
_SYS_ADD_RULE: Final = 445
_SYS_RESTRICT_SELF: Final = 446
_CREATE_RULESET_VERSION: Final = 1
_RULE_PATH_BENEATH: Final = 1
_RULE_NET_PORT: Final = 2
_PR_SET_NO_NEW_PRIVS: Final = 38
_CLONE_NEWUSER: Final = 0x10000000
_CLONE_NEWNET: Final = 0x40000000

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


def _new_network_namespace(libc: Any) -> str | None:
    """Enter a user and network namespace of our own; ``None`` on success, else why not."""
    uid, gid = os.getuid(), os.getgid()
    if int(libc.unshare(ctypes.c_int(_CLONE_NEWUSER | _CLONE_NEWNET))) != 0:
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
            _syscall(
                libc,
                _SYS_ADD_RULE,
                ctypes.c_int(ruleset),
                ctypes.c_int(_RULE_PATH_BENEATH),
                ctypes.byref(rule),
                ctypes.c_uint32(0),
            )
    finally:
        os.close(fd)


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
        for path in [*_SYSTEM_READ, *_python_paths(), *policy.get("read", ())]:
            _add_path(libc, ruleset, path, _READ | execute, handled_fs)
        for path in policy.get("write", ()):
            _add_path(libc, ruleset, path, _WRITE | execute | IOCTL_DEV, handled_fs)
        _add_path(libc, ruleset, "/dev/null", READ_FILE | WRITE_FILE | TRUNCATE, handled_fs)
        if handled_net and isinstance(net, (list, tuple)):
            for port in net:
                rule = _NetPort(allowed_access=_NET_BIND | _NET_CONNECT, port=int(port))
                _syscall(
                    libc,
                    _SYS_ADD_RULE,
                    ctypes.c_int(ruleset),
                    ctypes.c_int(_RULE_NET_PORT),
                    ctypes.byref(rule),
                    ctypes.c_uint32(0),
                )
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
    namespace = False
    if net == "none":
        failure = _new_network_namespace(libc)
        namespace = failure is None
        if failure is not None:
            missing.append(f"network namespace ({failure}): UDP and other non-TCP sockets")
    if int(libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) != 0:
        missing.append("no_new_privs")
    elif net != "all":
        failure = _seccomp(libc)
        if failure is not None:
            missing.append(f"seccomp ({failure}): pathname UNIX sockets and io_uring")
    cap = policy.get("maxAbi")
    abi = landlock_abi(int(cap) if cap is not None else None)
    if abi < 1:
        missing.insert(0, "Landlock (filesystem, TCP ports): the kernel has none")
        if net == "none" and not namespace:
            missing.append("network")
        return {"status": "unavailable", "abi": abi, "missing": missing, "netns": namespace}
    try:
        _landlock(libc, abi, policy)
    except OSError as exc:
        return {
            "status": "unavailable",
            "abi": abi,
            "missing": [f"Landlock could not be enforced ({exc.strerror})", *missing],
            "netns": namespace,
        }
    if abi < 2:
        missing.append("controlled rename and link between directories (Landlock ABI 2)")
    if abi < 3:
        missing.append("file truncation (Landlock ABI 3)")
    if abi < 4 and net != "all" and not namespace:
        missing.append("TCP port rules (Landlock ABI 4)")
    elif abi < 4 and isinstance(net, (list, tuple)):
        missing.append("TCP port rules (Landlock ABI 4): every port is allowed")
    if isinstance(net, (list, tuple)):
        missing.append("UDP (Landlock filters TCP only)")
    if abi < 5:
        missing.append("ioctl on device files (Landlock ABI 5)")
    if abi < 6:
        missing.append("signal and abstract UNIX socket scoping (Landlock ABI 6)")
    return {
        "status": "partial" if missing else "enforced",
        "abi": abi,
        "missing": missing,
        "netns": namespace,
    }


# -- seccomp: no new UNIX sockets, no io_uring ------------------------------------------------

_SECCOMP_ARCH: Final = {  # machine: (AUDIT_ARCH_*, __NR_socket, __NR_io_uring_setup)
    "x86_64": (0xC000003E, 41, 425),
    "aarch64": (0xC00000B7, 198, 425),
}
_PR_SET_SECCOMP: Final = 22
_SECCOMP_MODE_FILTER: Final = 2
_RET_ALLOW: Final = 0x7FFF0000
_RET_EPERM: Final = 0x00050000 | errno.EPERM
_LD_W_ABS, _JEQ_K, _JGE_K, _RET_K = 0x20, 0x15, 0x35, 0x06


class _SockFilter(ctypes.Structure):
    _fields_ = (
        ("code", ctypes.c_uint16),
        ("jt", ctypes.c_uint8),
        ("jf", ctypes.c_uint8),
        ("k", ctypes.c_uint32),
    )


class _SockFprog(ctypes.Structure):
    _fields_ = (("len", ctypes.c_uint16), ("filter", ctypes.POINTER(_SockFilter)))


def _seccomp(libc: Any) -> str | None:
    """Refuse ``socket(AF_UNIX, ...)`` and ``io_uring_setup`` (and every syscall of a foreign
    ABI) with ``EPERM``; ``None`` on success, else why not.

    Landlock before ABI 9 does not restrict connecting to pathname UNIX sockets (a Docker or
    D-Bus socket would be a way out), and io_uring can open sockets without ``socket()``.
    ``socketpair`` stays allowed: event loops need it.
    """
    machine = os.uname().machine
    if machine not in _SECCOMP_ARCH:
        return f"no seccomp filter for {machine}"
    arch, nr_socket, nr_uring = _SECCOMP_ARCH[machine]
    program = [
        (_LD_W_ABS, 0, 0, 4),  # seccomp_data.arch
        (_JEQ_K, 1, 0, arch),
        (_RET_K, 0, 0, _RET_EPERM),  # i386 or x32 entry points: refused
        (_LD_W_ABS, 0, 0, 0),  # seccomp_data.nr
        (_JGE_K, 5, 0, 0x40000000),  # x32 system call numbers: refused
        (_JEQ_K, 4, 0, nr_uring),
        (_JEQ_K, 0, 2, nr_socket),
        (_LD_W_ABS, 0, 0, 16),  # seccomp_data.args[0], low half: the address family
        (_JEQ_K, 1, 0, 1),  # AF_UNIX
        (_RET_K, 0, 0, _RET_ALLOW),
        (_RET_K, 0, 0, _RET_EPERM),
    ]
    filters = (_SockFilter * len(program))(*(_SockFilter(*item) for item in program))
    prog = _SockFprog(len(program), filters)
    if int(libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0)) != 0:
        return os.strerror(ctypes.get_errno())
    return None


# -- denials as results ----------------------------------------------------------------------


def _shown(path: str, home: str | None) -> str:
    from customtools._format import escape_control

    if home and (path == home or path.startswith(home.rstrip("/") + "/")):
        path = "~" + path[len(home.rstrip("/")) :]
    return escape_control(path).replace("`", "'")


def _beneath(path: str, roots: Sequence[str]) -> bool:
    return any(path == root or path.startswith(root.rstrip("/") + "/") for root in roots)


def denial(exc: BaseException, policy: Mapping[str, Any]) -> tuple[str, str, str | None] | None:
    """``(message, permission, path)`` when ``exc`` is a sandbox denial, else ``None``."""
    if not isinstance(exc, OSError):
        return None
    code = exc.errno
    declared = policy.get("declaredIn")
    where = f"declared in {declared}" if declared else "the default: no PERMISSIONS declared"
    allowed = policy.get("describe") or "the defaults"
    net = policy.get("net", "none")
    if code == errno.ENETUNREACH and net == "none":
        return (f"denied a network connection: this pack has no network ({where})", "net", None)
    if code not in (errno.EACCES, errno.EPERM):
        return None
    filename = exc.filename if isinstance(exc.filename, str) else None
    if filename is None and code == errno.EPERM:
        return (
            "denied an operation outside the sandbox (Operation not permitted: a new UNIX"
            f" socket, or a signal to a process outside it): this pack {allowed} ({where})",
            "scope",
            None,
        )
    if filename is None:
        if net != "all":
            return (
                f"denied a network connection ({os.strerror(code)}): this pack {allowed} ({where})",
                "net",
                None,
            )
        return None
    path = os.path.abspath(filename)
    shown = _shown(path, policy.get("home"))
    program = "/" not in filename or os.access(path, os.X_OK)
    if not policy.get("run") and program and not os.path.isdir(path):
        return (
            f"denied starting `{shown}`: this pack may not start programs ({where})",
            "run",
            path,
        )
    readable = [*policy.get("read", ()), *policy.get("write", ())]
    if _beneath(path, readable) and not _beneath(path, policy.get("write", ())):
        return (f"denied writing `{shown}`: this pack {allowed} ({where})", "write", path)
    if _beneath(path, readable):
        return None  # allowed by the policy: an ordinary permission error
    return (f"denied reading `{shown}`: this pack {allowed} ({where})", "read", path)


def guard(
    execute: Callable[..., Any], policy: Mapping[str, Any], *, is_async: bool
) -> Callable[..., Any]:
    """``execute`` wrapped so that a sandbox denial becomes an error result naming it."""
    from customtools._error_results import Code, Kind, error_result

    def result_for(exc: BaseException) -> Any:
        found = denial(exc, policy)
        if found is None:
            return None
        message, permission, path = found
        where = {} if path is None else {"path": path}
        return error_result(
            Kind.SANDBOX_DENIED, Code.SANDBOX_DENIED, message, permission=permission, **where
        )

    if is_async:

        async def run_async(*args: Any) -> Any:
            try:
                return await execute(*args)
            except OSError as exc:
                result = result_for(exc)
                if result is None:
                    raise
                return result

        return run_async

    def run(*args: Any) -> Any:
        try:
            return execute(*args)
        except OSError as exc:
            result = result_for(exc)
            if result is None:
                raise
            return result

    return run
