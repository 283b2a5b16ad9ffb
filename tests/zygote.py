"""A fork server for the servers the tests start (stdlib only, Linux).

Most of a ``customtools serve`` process's CPU is importing the MCP SDK (its pydantic models):
about two seconds, for a tenth of a second of work in a test. The zygote imports that once
per test process, and forks each server from there. A forked server is still a process of
its own: own pid, stdin/stdout/stderr, environment, working directory, ``sys.argv`` and
``sys.path`` as ``python`` would set them, Python's default signal handlers, and an exit
status (a signal death included) its starter sees.

Three roles, one file:

* **The test side** (imported by the tests): :func:`python_argv` is the command that runs
  ``python ARGS``; on first use it starts this process's zygote. ``CUSTOMTOOLS_TEST_ZYGOTE=0``
  makes it the plain ``[sys.executable, *ARGS]``.
* **The zygote** (``python zygote.py serve FD``): listens on the unix socket ``FD`` (created and
  bound by the test side, so clients may connect while it still imports), imports the heavy
  modules, and serves requests in one thread (forking from a threaded process is unsafe). Its
  stdin is a pipe from the test process: at EOF it kills what it forked and exits.
* **The client** (``python -S zygote.py client SOCKET -- PYTHON ARGS``): what a test starts in
  place of ``PYTHON ARGS``. It sends the argv, its environment, its working directory and its
  stdin/stdout/stderr to the zygote, learns the forked child, forwards the usual termination
  signals to it, and ends as the child ended (``returncode == -N`` for a death by signal N).
  Its connection is the child's lifeline: if the client dies (``SIGKILL``), the zygote kills
  the child's process group. What a fork cannot reproduce (interpreter options, a ``PYTHON*``
  variable that shapes start-up, another interpreter) the client ``exec``\\ s plainly. An
  unreachable zygote is an error, never a silent slow path.

Forked processes differ from fresh ones in what no test here looks at: ``/proc/PID/cmdline``
and ``/proc/PID/environ`` show the zygote's, the heavy modules are already in ``sys.modules``,
every child shares the zygote's hash seed, and the child's parent is the zygote (its own process
group, killed with the zygote: ``PR_SET_PDEATHSIG``). Tests about the interpreter's own start-up
spawn plainly.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import signal
import socket
import sys
from typing import Any

SWITCH = "CUSTOMTOOLS_TEST_ZYGOTE"
HERE = os.path.abspath(__file__)
ROOT = os.path.dirname(os.path.dirname(HERE))

# What a server the tests start imports (``customtools serve`` over stdio and HTTP, the SDK's
# own servers under tests/mcp/servers, the matrix and telemetry launchers). A missing one is
# skipped: the child imports it if it needs it.
PRELOAD = (
    "anyio",
    "anyio._backends._asyncio",
    "anyio.streams.stapled",
    "anyio.streams.tls",
    "trio",
    "concurrent.futures.thread",
    "jsonschema_rs",
    "mcp",
    "mcp.types",
    "mcp.client.stdio",
    "mcp.client.streamable_http",
    "mcp.server.lowlevel",
    "mcp.server.mcpserver",
    "mcp.server.stdio",
    "mcp.server.streamable_http_manager",
    "uvicorn",
    "uvicorn.lifespan.on",
    "uvicorn.protocols.http.auto",
    "uvicorn.protocols.websockets.auto",
    "uvicorn.protocols.websockets.websockets_sansio_impl",
    "opentelemetry.sdk.trace",
    "opentelemetry.sdk.trace.export",
    "customtools",
    "customtools.cli",
    *(f"customtools.cli.{name}" for name in ("_serve", "_validate", "_contract", "_run")),
    *(f"customtools.cli.{name}" for name in ("_schema", "_list", "_init", "_trust", "_types")),
    "customtools.isolation",
    "customtools.mcp",
    "customtools.mcp._http",
    "customtools.telemetry",
    "customtools._exec",
    "customtools._isolation._audit",
    "customtools._isolation._sandboxed",
    "customtools._loading._entrypoints",
    "customtools._loading._lazy",
    "customtools._loading._manifests",
    "customtools._loading._scan",
    "customtools._rules",
    "customtools._validation",
)

# Environment variables a fork honours (the client applies them or has applied them to itself):
# any other ``PYTHON*`` variable shapes the interpreter's start-up, so the client execs plainly.
FORKABLE_ENV = {
    "PYTHONPATH",
    "PYTHONDONTWRITEBYTECODE",
    "PYTHONUNBUFFERED",
    "PYTHONIOENCODING",
    "PYTHONUTF8",
    "PYTHONCOERCECLOCALE",
    "PYTHONBREAKPOINT",
}
FORWARDED = (
    signal.SIGHUP,
    signal.SIGINT,
    signal.SIGQUIT,
    signal.SIGTERM,
    signal.SIGUSR1,
    signal.SIGUSR2,
)
MESSAGE = 1 << 20  # the largest request (argv, environment) a client may send


# -- the test side ----------------------------------------------------------------------------

_started: dict[str, Any] = {}


def enabled() -> bool:
    """Whether servers start from the zygote (``CUSTOMTOOLS_TEST_ZYGOTE`` is not ``0``)."""
    return os.environ.get(SWITCH, "1") != "0" and sys.platform == "linux"


def python_argv(*args: str) -> list[str]:
    """The command that runs ``python ARGS`` (``-m MODULE ...``, ``SCRIPT ...`` or
    ``-c CODE ...``): a client of this process's zygote, or plainly when it is switched off."""
    if not enabled():
        return [sys.executable, *args]
    return [sys.executable, "-S", HERE, "client", _socket_path(), "--", sys.executable, *args]


def _socket_path() -> str:
    import threading

    with _started.setdefault("lock", threading.Lock()):
        process = _started.get("process")
        if process is None or process.poll() is not None:
            _start()
        return str(_started["path"])


def _start() -> None:
    import atexit
    import subprocess
    import tempfile

    directory = tempfile.mkdtemp(prefix="zygote-")
    path = os.path.join(directory, "socket")
    with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as listener:
        listener.bind(path)
        listener.listen(128)
        # Started as a fresh interpreter without PYTHONPATH would be: a child's own PYTHONPATH
        # goes in front of that path (see _run_child).
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        process = subprocess.Popen(
            [sys.executable, HERE, "serve", str(listener.fileno())],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            pass_fds=[listener.fileno()],
            env=env,
            cwd=ROOT,
            start_new_session=True,  # a Ctrl-C at the terminal reaches it through its lifeline
        )
    if not _started.get("atexit"):
        atexit.register(stop)  # pytest stops it at the session's end; this is for other users
    _started.update(process=process, path=path, directory=directory, atexit=True)


def stop() -> None:
    """Stop this process's zygote (it kills what it forked) and wait for it, if it runs."""
    import shutil

    process = _started.pop("process", None)
    if process is not None:
        process.stdin.close()  # its lifeline
        try:
            process.wait(timeout=10)
        except Exception:
            process.kill()
            process.wait()
        shutil.rmtree(_started.pop("directory"), ignore_errors=True)


# -- the client -------------------------------------------------------------------------------


def _forkable(argv: list[str]) -> bool:
    """Whether a fork runs ``argv`` as the interpreter would: this interpreter, no option but
    ``-m MODULE`` or ``-c CODE``, no start-up variable a fork cannot honour (coverage's
    included)."""
    if len(argv) < 2 or os.path.realpath(argv[0]) != os.path.realpath(sys.executable):
        return False
    if argv[1] in ("-m", "-c"):
        if len(argv) < 3:
            return False
    elif argv[1].startswith("-"):
        return False
    return not any(
        (name.startswith("PYTHON") and name not in FORKABLE_ENV)
        or name.startswith(("COVERAGE_", "COV_CORE_"))
        for name in os.environ
    )


def _stdio() -> list[dict[str, Any]]:
    """How this interpreter set up its stdin, stdout and stderr (the same environment gives
    a fresh child the same): encoding, errors, buffering."""
    described = []
    for stream in (sys.stdin, sys.stdout, sys.stderr):
        described.append(
            {
                "encoding": getattr(stream, "encoding", None) or "utf-8",
                "errors": getattr(stream, "errors", None) or "strict",
                "line_buffering": bool(getattr(stream, "line_buffering", False)),
                "write_through": bool(getattr(stream, "write_through", False)),
            }
        )
    return described


def client(path: str, argv: list[str]) -> None:
    if not _forkable(argv):
        os.execv(argv[0], argv)
    pending: list[int] = []
    target: list[int] = []  # the child's pidfd, once known

    def forward(signum: int, _frame: Any) -> None:
        if target:
            with contextlib.suppress(ProcessLookupError):
                signal.pidfd_send_signal(target[0], signum)
        else:
            pending.append(signum)

    for signum in FORWARDED:
        signal.signal(signum, forward)
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        sock.connect(path)
        request = {
            "argv": argv[1:],
            "env": dict(os.environ),
            "cwd": os.getcwd(),
            "dont_write_bytecode": sys.dont_write_bytecode,
            "stdio": _stdio(),
        }
        socket.send_fds(sock, [json.dumps(request).encode()], [0, 1, 2])
        data, fds, _flags, _address = socket.recv_fds(sock, 4096, 1)
        answer = json.loads(data)
    except (OSError, ValueError) as exc:
        sys.stderr.write(
            f"zygote client: the test suite's fork server at {path} did not answer ({exc});"
            f" {SWITCH}=0 starts the servers without it\n"
        )
        sys.stderr.flush()
        os._exit(70)
    if "error" in answer:
        sys.stderr.write(f"zygote client: {answer['error']}\n")
        os._exit(70)
    target.append(fds[0])
    for signum in pending:
        forward(signum, None)
    # The child has stdin and stdout now: let go of them (EOF on either is the child's alone).
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    try:
        data = sock.recv(4096)  # a signal runs its handler, then the wait goes on (PEP 475)
    except OSError:
        data = b""
    # No answer: the zygote died, and its children with it (PR_SET_PDEATHSIG).
    status = int(json.loads(data)["status"]) if data else -signal.SIGKILL
    if status < 0:
        signal.signal(-status, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, [-status])
        os.kill(os.getpid(), -status)
        status = 128 - status  # a signal whose default is to go on (SIGCHLD ...)
    os._exit(status)


# -- the zygote -------------------------------------------------------------------------------


class Child:
    """One forked process and the connection of the client that asked for it."""

    def __init__(self, pid: int, pidfd: int, conn: socket.socket | None) -> None:
        self.pid, self.pidfd, self.conn = pid, pidfd, conn


class Zygote:
    def __init__(self, listener: socket.socket) -> None:
        self.listener = listener
        self.selector = selectors.DefaultSelector()
        self.waiting: set[socket.socket] = set()  # connected, request not read yet
        self.children: dict[int, Child] = {}  # by pidfd
        self.base_path = _base_path()
        self.pid = os.getpid()
        import ctypes

        self.libc = ctypes.CDLL(None, use_errno=True)

    def run(self) -> None:
        read = selectors.EVENT_READ
        self.selector.register(0, read, "parent")
        self.selector.register(self.listener, read, "accept")
        while True:
            for key, _events in self.selector.select():
                what = key.data
                if what == "parent":
                    if os.read(0, 4096) == b"":
                        self.shutdown()
                        return
                elif what == "accept":
                    conn, _ = self.listener.accept()
                    conn.set_inheritable(False)
                    self.waiting.add(conn)
                    self.selector.register(conn, read, ("request", conn))
                elif what[0] == "request":
                    self.request(what[1])
                elif what[0] == "client":
                    self.client_gone(what[1])
                else:
                    self.reap(what[1])

    def request(self, conn: socket.socket) -> None:
        self.selector.unregister(conn)
        self.waiting.discard(conn)
        try:
            data, fds, flags, _address = socket.recv_fds(conn, MESSAGE, 3)
        except OSError:
            conn.close()
            return
        for fd in fds:
            os.set_inheritable(fd, False)
        if not data or len(fds) != 3 or flags & socket.MSG_TRUNC:
            for fd in fds:
                os.close(fd)
            if data:
                conn.send(json.dumps({"error": "a malformed or oversized request"}).encode())
            conn.close()
            return
        request = json.loads(data)
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            self.become_child(conn, fds, request)
        with contextlib.suppress(OSError):
            os.setpgid(pid, pid)  # the child does it too: whichever runs first
        pidfd = os.pidfd_open(pid)
        for fd in fds:
            os.close(fd)
        child = Child(pid, pidfd, conn)
        self.children[pidfd] = child
        self.selector.register(pidfd, selectors.EVENT_READ, ("exit", child))
        self.selector.register(conn, selectors.EVENT_READ, ("client", child))
        try:
            socket.send_fds(conn, [json.dumps({"pid": pid}).encode()], [pidfd])
        except OSError:
            self.client_gone(child)

    def client_gone(self, child: Child) -> None:
        """The client died or hung up before its child ended: the child goes too, with its
        process group (what killing the client's group did before)."""
        if child.conn is not None:
            self.selector.unregister(child.conn)
            child.conn.close()
            child.conn = None
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(child.pid, signal.SIGKILL)  # unreaped, so the group id is still its own

    def reap(self, child: Child) -> None:
        self.selector.unregister(child.pidfd)
        del self.children[child.pidfd]
        _, status = os.waitpid(child.pid, 0)
        os.close(child.pidfd)
        if child.conn is not None:
            self.selector.unregister(child.conn)
            with contextlib.suppress(OSError):
                child.conn.send(json.dumps({"status": os.waitstatus_to_exitcode(status)}).encode())
            child.conn.close()

    def shutdown(self) -> None:
        for child in list(self.children.values()):
            self.client_gone(child)
        for child in list(self.children.values()):
            self.reap(child)

    # -- in the child --

    def become_child(self, conn: socket.socket, fds: list[int], request: dict[str, Any]) -> None:
        """Never returns: the child ends with :func:`os._exit`."""
        status = 1
        try:
            for target, fd in enumerate(fds):
                os.dup2(fd, target)
            self.close_inherited(conn, fds)
            os.setpgid(0, 0)
            self.libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG: die with the zygote
            if os.getppid() == self.pid:  # else the zygote died before the line above
                status = _run_child(request, self.base_path)
        except BaseException:
            try:
                import traceback

                traceback.print_exc()
            finally:
                os._exit(1)
        os._exit(status)

    def close_inherited(self, conn: socket.socket, fds: list[int]) -> None:
        self.selector.close()
        self.listener.close()
        conn.close()
        for other in self.waiting:
            other.close()
        for child in self.children.values():
            os.close(child.pidfd)
            if child.conn is not None:
                child.conn.close()
        for fd in fds:
            os.close(fd)
        os.closerange(3, os.sysconf("SC_OPEN_MAX"))


def _base_path() -> list[str]:
    """``sys.path`` without the zygote's script directory (the zygote has no PYTHONPATH)."""
    return list(sys.path[1:])


def _child_path(first: str, base: list[str]) -> list[str]:
    """``sys.path`` of ``python`` with the environment's PYTHONPATH: ``first`` (the script's
    directory, the working directory or ""), then the PYTHONPATH entries and ``base``, made
    absolute, each once (as ``site`` leaves them)."""
    path, seen = [first], set()
    extra = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    for entry in [*extra, *base]:
        entry = os.path.abspath(entry)
        if os.path.normcase(entry) not in seen:
            seen.add(os.path.normcase(entry))
            path.append(entry)
    return path


def _stream(fd: int, mode: str, described: dict[str, Any]) -> Any:
    import io

    unbuffered = described["write_through"] and mode == "w"
    raw = io.FileIO(fd, mode, closefd=False)
    raw.name = ("<stdin>", "<stdout>", "<stderr>")[fd]  # type: ignore[misc]
    buffered: Any
    if unbuffered:
        buffered = raw
    elif mode == "r":
        buffered = io.BufferedReader(raw)
    else:
        buffered = io.BufferedWriter(raw)
    text = io.TextIOWrapper(
        buffered,
        encoding=described["encoding"],
        errors=described["errors"],
        newline="\n",
        line_buffering=described["line_buffering"],
        write_through=described["write_through"],
    )
    text.mode = mode
    return text


def _run_child(request: dict[str, Any], base_path: list[str]) -> int:
    """Set the process up as ``python ARGV`` would have, run it as ``__main__``, end it the
    way the interpreter does; the exit status."""
    import atexit
    import builtins
    import importlib
    import importlib.machinery
    import threading
    import types

    for signum in signal.valid_signals():
        if signum not in (signal.SIGKILL, signal.SIGSTOP):
            with contextlib.suppress(OSError, ValueError):
                signal.signal(signum, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_SETMASK, [])
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    sys.dont_write_bytecode = request["dont_write_bytecode"]
    streams = [
        _stream(fd, "r" if fd == 0 else "w", described)
        for fd, described in enumerate(request["stdio"])
    ]
    sys.stdin, sys.stdout, sys.stderr = streams
    sys.__stdin__, sys.__stdout__, sys.__stderr__ = streams  # type: ignore[misc]
    # atexit keeps what the preloaded modules registered (logging's shutdown ...): a fresh
    # process importing them registers the same. The zygote itself registers nothing.

    argv = request["argv"]
    main = types.ModuleType("__main__")
    main.__dict__["__builtins__"] = builtins
    sys.modules["__main__"] = main
    sys.orig_argv = [sys.executable, *argv]
    importlib.invalidate_caches()
    code = 0
    try:
        try:
            if argv[0] == "-m":
                sys.argv = ["-m", *argv[2:]]
                sys.path[:] = _child_path(os.getcwd(), base_path)
                import runpy

                runpy._run_module_as_main(argv[1])  # type: ignore[attr-defined]
            elif argv[0] == "-c":
                sys.argv = ["-c", *argv[2:]]
                sys.path[:] = _child_path("", base_path)
                exec(compile(argv[1], "<string>", "exec"), main.__dict__)
            else:
                script = argv[0]
                sys.argv = list(argv)
                first = os.path.dirname(os.path.realpath(script))
                sys.path[:] = _child_path(first, base_path)
                main.__file__ = os.path.join(os.getcwd(), script)
                main.__cached__ = None  # type: ignore[attr-defined]
                main.__loader__ = importlib.machinery.SourceFileLoader("__main__", main.__file__)
                with open(script, "rb") as handle:
                    source = handle.read()
                exec(compile(source, main.__file__, "exec", dont_inherit=True), main.__dict__)
        except SystemExit as exc:
            code = _exit_code(exc)
        except KeyboardInterrupt as exc:
            _report(exc)
            code = -signal.SIGINT
        except BaseException as exc:
            _report(exc)
            code = 1
        threading._shutdown()  # type: ignore[attr-defined]
        atexit._run_exitfuncs()
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError, AttributeError):
                if stream is sys.stdout and code == 0:
                    code = 120
    if code == -signal.SIGINT:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    return code


def _report(exc: BaseException) -> None:
    """The uncaught error's traceback, from the program's first frame (not this module's)."""
    if exc.__traceback__ is not None:
        exc.__traceback__ = exc.__traceback__.tb_next
    sys.excepthook(type(exc), exc, exc.__traceback__)


def _exit_code(exc: SystemExit) -> int:
    code = exc.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    with contextlib.suppress(Exception):
        print(code, file=sys.stderr)
    return 1


def serve(fd: int) -> None:
    import gc
    import importlib

    listener = socket.socket(fileno=fd)
    listener.set_inheritable(False)
    os.set_blocking(fd, True)
    for name in PRELOAD:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)
    gc.collect()
    gc.freeze()  # the children share these pages, and their collections skip them
    Zygote(listener).run()


if __name__ == "__main__":
    if sys.argv[1] == "serve":
        serve(int(sys.argv[2]))
    elif sys.argv[1] == "client" and sys.argv[3] == "--":
        client(sys.argv[2], sys.argv[4:])
    else:
        sys.exit(f"usage: {sys.argv[0]} serve FD | client SOCKET -- PYTHON ARGS...")
