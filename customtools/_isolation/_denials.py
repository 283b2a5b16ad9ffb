"""How a sandboxed worker reports a denial: the operation Python attempted, not a guess.

The kernel answers a refused operation with a bare ``EACCES``, ``EPERM`` or ``EROFS``
(``ENETUNREACH`` without network), which says neither what was attempted nor which
permission is missing. Python itself knows: before it opens a file, creates a directory,
renames, starts a program or connects a socket, it raises an *audit event* naming the
operation and its arguments (``open`` with its mode and flags, ``os.mkdir``,
``os.rename``, ``subprocess.Popen``, ``socket.connect``, ...; see the table in the
standard library's documentation). :func:`record_operations` installs an audit hook that
keeps the last few such events of each thread; :func:`denial` matches an ``OSError`` to
the event it came from (by its file name, or the newest socket or signal event), resolves
the path (symlinks included), and checks the operation against the worker's policy: only
an operation the policy does not grant is a sandbox denial, named with the permission that
would have allowed it. :func:`guard` turns such a denial, escaping a tool, into an error
result.

An error with no matching event (a system call made through ``ctypes``, a datagram socket
pair) is named by the standard-library function it came out of, when there is one.
"""

from __future__ import annotations

import errno
import os
import sys
import threading
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, NamedTuple

__all__ = ["Denial", "denial", "guard", "record_operations"]

_DENIED_ERRNOS: Final = frozenset({errno.EACCES, errno.EPERM, errno.EROFS, errno.EXDEV})
_KEPT: Final = 8  # events kept per thread

# audit event -> (what it does, which argument is the path, which one a second path)
_FILE_EVENTS: Final[dict[str, tuple[str, int, int | None]]] = {
    "open": ("open", 0, None),
    "os.listdir": ("listing", 0, None),
    "os.scandir": ("listing", 0, None),
    "os.mkdir": ("creating the directory", 0, None),
    "os.rename": ("renaming", 0, 1),
    "os.remove": ("deleting", 0, None),
    "os.rmdir": ("deleting the directory", 0, None),
    "os.link": ("linking", 0, 1),
    "os.symlink": ("creating the symbolic link", 1, None),
    "os.truncate": ("truncating", 0, None),
    "os.chmod": ("changing the mode of", 0, None),
    "os.chown": ("changing the owner of", 0, None),
    "os.utime": ("changing the times of", 0, None),
    "os.setxattr": ("changing the extended attributes of", 0, None),
    "os.removexattr": ("changing the extended attributes of", 0, None),
    "os.mkfifo": ("creating the special file", 0, None),
    "os.mknod": ("creating the special file", 0, None),
    "subprocess.Popen": ("starting", 1, None),
    "os.exec": ("starting", 0, None),
    "os.posix_spawn": ("starting", 0, None),
    "os.spawn": ("starting", 1, None),
}
_OTHER_EVENTS: Final = frozenset(
    {
        "socket.connect",
        "socket.bind",
        "socket.sendto",
        "socket.sendmsg",
        "socket.__new__",
        "os.kill",
        "os.killpg",
    }
)
_WRITE_FLAGS: Final = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND

_local = threading.local()
_installed = False


def _hook(event: str, args: tuple[Any, ...]) -> None:
    if event in _FILE_EVENTS or event in _OTHER_EVENTS:
        kept = getattr(_local, "events", None)
        if kept is None:
            kept = _local.events = deque(maxlen=_KEPT)
        if event[0] == "s" and event.startswith("socket."):
            # Not the socket itself: a reference kept here would keep it open.
            args = (None, *args[1:])
        kept.append((event, args))


def record_operations() -> None:
    """Keep the file, process and socket operations of every thread (once per process).

    Audit hooks cannot be removed: this is for the sandboxed worker, which records for its
    whole life.
    """
    global _installed
    if not _installed:
        sys.addaudithook(_hook)
        _installed = True


class Denial(NamedTuple):
    """A sandbox denial: the error result's text and details."""

    message: str
    permission: str  # read, write, run, net, or scope (nothing grants it)
    operation: str
    path: str | None


class _Operation(NamedTuple):
    verb: str  # "reading", "creating the directory", "connecting to", ...
    need: str  # what it takes: read, write, run, net, scope (none does), socket, or ""
    paths: tuple[str, ...] = ()  # the paths as the tool gave them (two for a rename)
    target: str = ""  # what it acts on, when that is not a path
    port: int | None = None


def _path(value: Any) -> str | None:
    if isinstance(value, (str, bytes)) or hasattr(value, "__fspath__"):
        try:
            return os.fsdecode(value)
        except (TypeError, ValueError):
            return None
    return None


def _resolved(path: str) -> str:
    try:
        return os.path.realpath(path)
    except (OSError, ValueError):
        return os.path.abspath(path)


def _beneath(path: str, roots: Sequence[str]) -> bool:
    return any(path == root or path.startswith(root.rstrip("/") + "/") for root in roots)


def _shown(path: str, home: str | None) -> str:
    from customtools._format import escape_control

    if home and (path == home or path.startswith(home.rstrip("/") + "/")):
        path = "~" + path[len(home.rstrip("/")) :]
    return "`" + escape_control(path).replace("`", "'") + "`"


def _event_paths(event: str, args: tuple[Any, ...]) -> list[str]:
    if event == "subprocess.Popen":
        program = args[0] if args[0] is not None else _first(args[1])
        return [path for path in (_path(program),) if path is not None]
    _, first, second = _FILE_EVENTS[event]
    indexes = (first,) if second is None else (first, second)
    return [path for path in (_path(args[i]) for i in indexes if i < len(args)) if path]


def _first(argv: Any) -> Any:
    return argv[0] if isinstance(argv, (list, tuple)) and argv else argv


def _find(exc: OSError) -> tuple[str, tuple[Any, ...]] | None:
    """The recorded event ``exc`` came from: the newest one naming its file, or, for an
    error without a file name (sockets, signals, some ``os`` calls), the newest of all:
    Python raises the event just before the system call whose error this is."""
    kept = getattr(_local, "events", None)
    if not kept:
        return None
    names = {os.path.abspath(n) for n in (_path(exc.filename), _path(exc.filename2)) if n}
    if not names:
        if _raised_by(exc) == "socket.socketpair":
            return None  # no event precedes it: named by the function (see _fallback)
        event, args = kept[-1]
        return event, args
    for event, args in reversed(kept):
        if event in _FILE_EVENTS and names & {
            os.path.abspath(p) for p in _event_paths(event, args)
        }:
            return event, args
    return None


def _address(address: Any) -> tuple[str, int | None]:
    """``(shown, TCP port)`` of a socket address."""
    if isinstance(address, tuple) and len(address) >= 2 and isinstance(address[1], int):
        return f"{address[0]} port {address[1]}", address[1]
    path = _path(address)
    if path is None:
        return repr(address), None
    if not path or path.startswith("\0"):
        return "an abstract UNIX socket", None
    return f"the UNIX socket {path}", None


def _family(family: Any) -> str:
    import socket

    names = {socket.AF_INET: "an IPv4", socket.AF_INET6: "an IPv6", socket.AF_UNIX: "a UNIX"}
    if family in names:
        return names[family]
    try:
        return f"an {socket.AddressFamily(family).name}"
    except (ValueError, TypeError):
        return f"a family {family}"


def _operation(event: str, args: tuple[Any, ...]) -> _Operation:
    if event in ("socket.connect", "socket.sendto", "socket.sendmsg", "socket.bind"):
        verb = {"socket.connect": "connecting to", "socket.bind": "binding"}.get(
            event, "sending to"
        )
        target, port = _address(args[1] if len(args) > 1 else None)
        # A pathname or abstract UNIX socket outside the sandbox: no permission reaches it.
        return _Operation(verb, "net" if port is not None else "scope", target=target, port=port)
    if event == "socket.__new__":
        family, _, protocol = (*args[1:4], 0, 0, 0)[:3]
        target = f"{_family(family)} socket"
        inet = target in ("an IPv4 socket", "an IPv6 socket")
        if protocol not in (0, 6, 17):
            target += f" of protocol {protocol} (only TCP and UDP sockets are allowed)"
        # A TCP or UDP socket is never refused: its error is an ordinary one.
        refused = not inet or protocol not in (0, 6, 17)
        return _Operation("opening", "socket" if refused else "", target=target)
    if event in ("os.kill", "os.killpg"):
        return _Operation("signalling", "scope", target=f"process {args[0]}")
    verb, _, _ = _FILE_EVENTS[event]
    paths = tuple(_event_paths(event, args))
    if verb == "starting":
        return _Operation(verb, "run", paths[:1])
    if event == "open":
        mode, flags = (args[1], args[2]) if len(args) > 2 else (None, 0)
        writes = (isinstance(mode, str) and any(c in mode for c in "wax+")) or bool(
            isinstance(flags, int) and flags & _WRITE_FLAGS
        )
        verb = "writing" if writes else "reading"
    return _Operation(verb, "read" if verb in ("reading", "listing") else "write", paths)


def _raised_by(exc: BaseException) -> str | None:
    """The innermost standard-library function ``exc`` came out of, if any."""
    tb = exc.__traceback__
    function = None
    while tb is not None:
        module = str(tb.tb_frame.f_globals.get("__name__", ""))
        if module.split(".")[0] in sys.stdlib_module_names:
            function = f"{module}.{tb.tb_frame.f_code.co_name}"
        tb = tb.tb_next
    return function


def _fallback(exc: OSError) -> _Operation:
    """An error no event explains: named by the function it came out of, if any."""
    function = _raised_by(exc)
    given = _path(exc.filename)
    verb = f"calling `{function}`" if function else "an operation"
    if given is None:
        return _Operation(verb, "scope")
    # A path is all there is: the policy decides whether reading it was allowed.
    return _Operation(verb + " on", "read", (given,))


def _readable(policy: Mapping[str, Any]) -> list[str]:
    from customtools._isolation._confine import readable_paths

    return [*readable_paths(), *policy.get("read", ()), *policy.get("write", ())]


def _other_process(path: str) -> bool:
    """A path in another process's ``/proc/<pid>`` directory: outside every sandbox."""
    parts = path.split("/")
    return (
        len(parts) > 2
        and parts[1] == "proc"
        and parts[2].isdigit()
        and int(parts[2]) != os.getpid()
    )


def _refused(op: _Operation, policy: Mapping[str, Any]) -> tuple[str, str | None]:
    """``(permission, resolved path)`` the operation lacks; ``("", None)`` when the policy
    grants it: the error is then an ordinary one (a file's mode, a cross-device rename)."""
    if not op.need:
        return "", None
    if op.need == "socket":  # refused by seccomp unless the pack may use the whole network
        return ("", None) if policy.get("net") == "all" else ("scope", None)
    if op.need == "scope":
        return "scope", None
    if op.need == "net":
        net = policy.get("net", "none")
        granted = net == "all" or (isinstance(net, (list, tuple)) and op.port in net)
        return ("", None) if granted else ("net", None)
    if op.need == "run" and not policy.get("run"):
        return "run", _resolved(op.paths[0]) if op.paths else None
    write = list(policy.get("write", ()))
    for given in op.paths:
        path = _resolved(given)
        if _other_process(path):
            return "scope", path
        if op.need == "write" and not _beneath(path, write):
            return "write", path
        if op.need in ("read", "run") and not _beneath(path, _readable(policy)):
            return "read", path
    return "", None


def _describe(op: _Operation, home: str | None) -> str:
    if not op.paths:
        return f"{op.verb} {op.target}".rstrip()
    shown = []
    for given in op.paths:
        path, absolute = _resolved(given), os.path.abspath(given)
        text = _shown(path, home)
        if path != absolute:
            text += f" (through {_shown(absolute, home)})"
        shown.append(text)
    return f"{op.verb} {' to '.join(shown)}"


_NEEDS: Final = {
    "read": "it needs the `read` permission for it",
    "write": "it needs the `write` permission for it",
    "run": "it needs `run=True`",
    "net": "it needs the `net` permission",
    "scope": "no permission allows it (it is outside every sandbox)",
}


def denial(exc: BaseException, policy: Mapping[str, Any]) -> Denial | None:
    """The sandbox denial ``exc`` is (see the module docstring), else ``None``."""
    if not isinstance(exc, OSError):
        return None
    code = exc.errno
    unreachable = code == errno.ENETUNREACH and policy.get("net", "none") == "none"
    if code not in _DENIED_ERRNOS and not unreachable:
        return None
    found = _find(exc)
    op = _operation(*found) if found is not None else _fallback(exc)
    if unreachable and op.need != "net":
        op = _Operation("connecting", "net", target="to the network")
    permission, path = _refused(op, policy)
    if not permission:
        return None
    need = _NEEDS[permission]
    if permission == "net" and op.port is not None:
        need += f" for TCP port {op.port}"
    elif permission == "read" and op.need == "run":
        need = "it needs the `read` permission for the program"
    declared = policy.get("declaredIn")
    where = f"declared in {declared}" if declared else "the default: no PERMISSIONS declared"
    operation = _describe(op, policy.get("home"))
    return Denial(
        message=f"denied {operation}: {need}; this pack {policy.get('describe')} ({where})",
        permission=permission,
        operation=operation,
        path=path,
    )


def guard(
    execute: Callable[..., Any], policy: Mapping[str, Any], *, is_async: bool
) -> Callable[..., Any]:
    """``execute`` wrapped so that a sandbox denial becomes an error result naming it."""
    from customtools._error_results import Code, Kind, error_result

    def result_for(exc: BaseException) -> Any:
        found = denial(exc, policy)
        if found is None:
            return None
        where = {} if found.path is None else {"path": found.path}
        return error_result(
            Kind.SANDBOX_DENIED,
            Code.SANDBOX_DENIED,
            found.message,
            permission=found.permission,
            operation=found.operation,
            **where,
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
