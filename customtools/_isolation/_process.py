"""The worker-process core of both isolation modes, the pool and ``validate``'s audit.

The pool (:mod:`._source`: long-lived workers driven from the event loop) and the audit
(:mod:`._audit`: a one-shot child forking a worker per module, read by threads) start,
describe and clean up after their workers here: :func:`spawn` (and the child's half,
:func:`claim_stdio`), :func:`scrubbed_environment`, :func:`describe_exit`, and the
descendant sweeps :func:`reap_children` and :func:`sweep`. Limits: :mod:`._limits`; framing:
:mod:`._wire`.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
from collections.abc import Callable, Collection, Mapping
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    import subprocess
    import threading

    from customtools._isolation._limits import WorkerLimits

__all__ = [
    "INTERNAL_EXIT",
    "MARKER_VARIABLE",
    "PASSED_ENV",
    "claim_stdio",
    "describe_exit",
    "reap_children",
    "scrubbed_environment",
    "spawn",
    "sweep",
]

INTERNAL_EXIT: Final = 70
"""The exit status of a worker whose own (customtools') code failed; it printed a traceback."""

MARKER_VARIABLE: Final = "CUSTOMTOOLS_VALIDATE_RUN"
"""The environment variable that marks every process of one ``validate`` run."""

PASSED_ENV: Final = frozenset(
    # Enough to find programs, the home and temporary directories, the locale and the
    # interpreter's own configuration; the last line is what Windows programs need.
    """
    PATH HOME USER LOGNAME USERNAME SHELL LANG LANGUAGE TZ TERM NO_COLOR TMPDIR TEMP TMP
    XDG_CACHE_HOME XDG_CONFIG_HOME XDG_DATA_HOME XDG_RUNTIME_DIR SSL_CERT_FILE SSL_CERT_DIR
    LD_LIBRARY_PATH VIRTUAL_ENV CONDA_PREFIX CONDA_DEFAULT_ENV PYTHONPATH PYTHONHOME
    PYTHONNOUSERSITE PYTHONUSERBASE PYTHONUTF8 PYTHONIOENCODING PYTHONDONTWRITEBYTECODE
    PYTHONPYCACHEPREFIX PYTHONHASHSEED PYTHONWARNINGS PYTHONDEVMODE
    SYSTEMROOT SYSTEMDRIVE WINDIR COMSPEC PATHEXT USERPROFILE APPDATA LOCALAPPDATA PROGRAMDATA
    """.split()  # noqa: SIM905 - a few names a line; a literal would take one line each
)
"""What a scrubbed worker environment keeps (``validate``'s), besides names passed on purpose."""

_REAP_BOUND: Final = 5.0  # seconds spent killing a worker's descendants at most
_CRASHES: Final = frozenset({"SIGSEGV", "SIGBUS", "SIGILL", "SIGFPE", "SIGABRT"})


# -- starting a worker ----------------------------------------------------------------------------


def spawn(
    module: str,
    *,
    cwd: str,
    env: Mapping[str, str],
    python: str | None = None,
    stderr: Callable[[bytes], object] | None = None,
    pass_fds: tuple[int, ...] = (),
) -> tuple[subprocess.Popen[bytes], int, int, threading.Thread | None]:
    """Start ``python -c`` running ``module``'s ``main()`` in a new session.

    Returns the process, the descriptor to read its messages from, the one to write to it,
    and, when ``stderr`` is given, the thread passing every chunk of its stderr to ``stderr``
    (else the worker writes to ours). ``pass_fds`` stay open in the worker (the caller closes
    its copies).
    """
    import subprocess
    import threading

    bootstrap = (
        # `python -c` puts the working directory (the user's project) first on sys.path,
        # where a tools directory's `json.py` would shadow the standard library.
        "import sys; sys.path[:] = [p for p in sys.path if p not in ('', '.')]; "
        f"from {module} import main; main()"
    )
    to_worker_r, to_worker_w = os.pipe()
    from_worker_r, from_worker_w = os.pipe()
    err_r, err_w = os.pipe() if stderr is not None else (-1, -1)
    kwargs: dict[str, Any] = {"start_new_session": True}
    if os.name != "posix":  # pragma: no cover - Windows (validate only)
        kwargs = {"creationflags": subprocess.CREATE_NEW_PROCESS_GROUP}  # type: ignore[attr-defined,unused-ignore]
    try:
        popen = subprocess.Popen(
            [python or sys.executable, "-c", bootstrap],
            stdin=to_worker_r,
            stdout=from_worker_w,
            stderr=err_w if err_w >= 0 else None,
            cwd=cwd,
            env=env,
            close_fds=True,
            pass_fds=pass_fds,
            **kwargs,
        )
    except BaseException:
        for fd in (to_worker_r, to_worker_w, from_worker_r, from_worker_w, err_r, err_w):
            if fd >= 0:
                os.close(fd)
        raise
    os.close(to_worker_r)
    os.close(from_worker_w)
    drainer = None
    if stderr is not None:
        os.close(err_w)
        drainer = threading.Thread(target=_drain, args=(err_r, stderr), daemon=True)
        drainer.start()
    return popen, from_worker_r, to_worker_w, drainer


def _drain(fd: int, sink: Callable[[bytes], object]) -> None:
    """Pass what ``fd`` yields to ``sink`` until every writer closed it (or ``sink`` failed)."""
    try:
        while chunk := os.read(fd, 65536):
            sink(chunk)
    except OSError:
        pass  # the sink (our own stderr) is gone: the output has nowhere to go
    finally:
        os.close(fd)


def claim_stdio() -> tuple[int, int]:
    """In the worker: the channel's descriptors (the original stdin and stdout), kept private;
    fd 0 then reads ``/dev/null`` and fd 1 writes to stderr."""
    sys.stdout.flush()
    read_fd = os.dup(0)  # not inherited by programs started later (PEP 446)
    write_fd = os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    return read_fd, write_fd


def scrubbed_environment(
    base: Mapping[str, str],
    passed: Collection[str] = (),
    *,
    names: Collection[str] = PASSED_ENV,
    prefixes: tuple[str, ...] = ("LC_",),
) -> dict[str, str]:
    """The variables of ``base`` a scrubbed worker sees: ``names``, ``passed``, and those
    starting with one of ``prefixes``."""
    return {
        name: value
        for name, value in base.items()
        if name in names or name in passed or name.startswith(prefixes)
    }


# -- how a worker ended ---------------------------------------------------------------------------


def describe_exit(
    returncode: int | None, limits: WorkerLimits | None = None, *, explain: bool = True
) -> str:
    """How a worker process ended, as words after its name, the same in both modes.

    ``"exited with status 3 (...)"``, ``"was killed by SIGSEGV (the Python interpreter
    crashed, ...)"``: what usually causes it follows in parentheses (``explain``), where
    ``limits`` (those the worker ran under) tell ``SIGXCPU`` and ``SIGKILL`` apart.
    """
    if returncode is None:
        return "ended"
    if returncode >= 0:
        words = f"exited with status {returncode}"
        if returncode == INTERNAL_EXIT:
            why = "customtools' own worker code failed; its traceback is in the worker's stderr"
        else:
            why = "without an exception: os._exit(), or a C extension ended it"
        return f"{words} ({why})" if explain else words
    try:
        name = signal.Signals(-returncode).name
    except ValueError:
        name = f"signal {-returncode}"
    words = f"was killed by {name}"
    cpu = limits.cpu_limit if limits is not None else None
    if not explain:
        return words
    if name == "SIGXCPU":
        return f"{words} (it used up its CPU time{f', {cpu} s' if cpu else ''})"
    if name == "SIGKILL" and cpu:
        return f"{words} (it used up its CPU time, {cpu} s, or was killed from outside)"
    if name in _CRASHES:
        return f"{words} (the Python interpreter crashed, in the module or a C extension it uses)"
    return words


# -- descendants ----------------------------------------------------------------------------------


def _processes(entry: str, match: Callable[[bytes], bool]) -> list[int]:
    """Pids of the processes (other than ours) whose ``/proc/PID/<entry>`` matches (Linux)."""
    try:
        pids = [int(name) for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return []
    found = []
    for pid in pids:
        try:
            with open(f"/proc/{pid}/{entry}", "rb") as handle:
                data = handle.read()
        except OSError:
            continue
        if pid != os.getpid() and match(data):
            found.append(pid)
    return found


def _children() -> list[int]:
    """The pids whose parent is this process (adopted orphans included)."""
    me = os.getpid()
    try:
        with open(f"/proc/{me}/task/{me}/children") as handle:
            return [int(pid) for pid in handle.read().split()]
    except OSError:
        pass

    def mine(stat: bytes) -> bool:
        fields = stat.rsplit(b")", 1)[-1].split()
        return len(fields) > 1 and int(fields[1]) == me

    return _processes("stat", mine)


def reap_children() -> None:
    """Kill and reap every process under this one (a subreaper's; bounded in time)."""
    deadline = time.monotonic() + _REAP_BOUND
    while time.monotonic() < deadline:
        for pid in _children():
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        try:
            while True:
                pid, _ = os.waitpid(-1, os.WNOHANG)
                if pid == 0:
                    break
        except ChildProcessError:
            return
        time.sleep(0.005)


def sweep(marker: str) -> None:
    """Kill every process whose environment carries ``marker`` (Linux; a few passes)."""
    if not sys.platform.startswith("linux"):
        return
    needle = f"{MARKER_VARIABLE}={marker}".encode()
    for _ in range(5):
        found = _processes("environ", lambda environ: needle in environ.split(b"\0"))
        if not found:
            return
        for pid in found:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
