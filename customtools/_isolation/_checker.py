"""Loading tool modules in child processes, so no module can take ``validate`` down with it.

(Process supervision has one home, :mod:`customtools._isolation`: the isolation pool's
workers and these ``validate`` children share its resource limits (``_limits``) and, for the
pool, the kernel confinement (``_confine``).)

This is **crash and hang isolation, not a security boundary**: the modules run with the
user's rights, files and network. What it does:

- **One process per module.** A *supervisor* child
  (:mod:`customtools._isolation._checker_supervisor`), which runs no tool code, forks a fresh
  *worker* for each module. A module that hangs past the timeout (its stacks are dumped by
  ``faulthandler`` first), calls ``os._exit``, or crashes the interpreter becomes that module's
  finding; the next module gets a new worker.
- **Outcomes are decided outside the module's process.** The worker writes its report to a
  pipe only the supervisor reads; the supervisor's channel to this process is closed in the
  worker before the module is imported, and the supervisor and this process are made
  non-dumpable on Linux for the run, so a worker (same user) can open neither's file
  descriptors through ``/proc`` nor attach to them. The supervisor sets the status from how the
  worker ended (a crash, a signal or a non-zero exit is never "loaded", whatever was written)
  and stamps the module's index itself. This process accepts a run only when the channel
  carried exactly ``ready``, ``start``/``done`` for each module in order and ``end``, with
  nothing after it, and the supervisor then exited 0. Any other run (a forged, repeated or
  out-of-order message, the supervisor killed, stopped or exiting oddly) is thrown away and
  each of its modules is loaded again in a run of its own, where the anomaly names the module
  (``tampered``, ``crash`` or ``timeout``). Finally this process compiles each module's main
  file itself (without running it): a file that does not compile is never reported loaded.
  So a module can lie only about itself (it is arbitrary code: it could as well behave),
  never about another. Why not a secret key (an HMAC over the reports)? Any key the
  supervisor holds before forking is in the worker's memory too, and a key the parent sends
  later travels on a channel the same user can read; the design relies on who can write to
  the channel, and on the parent checking what it can check without trusting the child.
- **Nothing started survives.** On Linux the supervisor is a child subreaper: whatever a
  worker starts, even in a new session (``start_new_session=True``) or double-forked, is
  re-parented to it and killed before the next worker starts. Every child also carries a
  per-run marker in its environment; when a run ends this process kills any process that still
  has it (``/proc/PID/environ``). Elsewhere on POSIX, process groups are killed instead; a
  program that starts a new session there can outlive the run.
- **Resource limits** (``setrlimit``) per worker: memory (``RLIMIT_DATA`` on Linux, the
  address space elsewhere), CPU seconds, size of a written file; no core files. The number
  of processes is not limited: ``RLIMIT_NPROC`` counts every process of the user, so no
  value is safe for one run.
- **A scrubbed environment**: only an allowlist (``PATH``, ``HOME``, locale, temporary
  directories, the Python and virtualenv variables needed to import) plus ``--env NAME``
  reaches the modules; the values of secret-looking variables (``*TOKEN*``, ``*KEY*``,
  ``*SECRET*``, ...) are replaced in the report should a module find them anyway.

Not guaranteed: a module can read and write the user's files (the pack, the installed
customtools, the CI workspace), use the network, signal or read other processes of the user
(their environments included) and start programs through other services (``systemd-run``,
``at``); none of the above holds when validate runs as root or with ``CAP_SYS_PTRACE``. On
macOS there is no subreaper and ``RLIMIT_AS`` is not enforced; on Windows (no ``fork``) the
modules load one after another in one child with no limits. Load untrusted packs only in a
container or VM you can throw away.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import queue
import re
import secrets
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import IO, Any, Final, Literal

from customtools._isolation._checker_worker import frame_in, main_file
from customtools._isolation._limits import dumpable, set_dumpable
from customtools._loading._records import Candidate

__all__ = [
    "DEFAULT_FILE_SIZE_LIMIT_MIB",
    "DEFAULT_MEMORY_LIMIT_MIB",
    "MARKER_VARIABLE",
    "ModuleReport",
    "SandboxOptions",
    "add_sandbox_arguments",
    "child_environment",
    "load_isolated",
    "sandbox_options",
]

Status = Literal["loaded", "failed", "crashed", "timeout"]
"""``loaded``: no errors; ``failed``: load errors (some tools may still have loaded);
``crashed``: the module ended its worker process; ``timeout``: it hung and was killed."""

DEFAULT_MEMORY_LIMIT_MIB: Final = 1024
DEFAULT_FILE_SIZE_LIMIT_MIB: Final = 256
MARKER_VARIABLE: Final = "CUSTOMTOOLS_VALIDATE_RUN"
"""The environment variable that marks every process of one ``validate`` run."""

_BOOTSTRAP: Final = (
    # `python -c` puts the working directory (the user's project) first on sys.path, where a
    # tools directory's `json.py` would shadow the standard library: take it off again.
    "import sys; sys.path[:] = [p for p in sys.path if p not in ('', '.')]; "
    "from customtools._isolation._checker_supervisor import main; main()"
)
_STDERR_TAIL: Final = 64 * 1024
_START_TIMEOUT: Final = 60.0  # seconds for the supervisor to start
_SLACK: Final = 15.0  # seconds the supervisor may take beyond a module's timeout (dump, reaping)
_MIB: Final = 1024 * 1024
_COMPILE_MAX: Final = 16 * _MIB  # larger main files are not compiled by the parent

# What reaches the modules: enough to find programs, the home and temporary directories, the
# locale and the interpreter's own configuration. Nothing else unless --env names it.
_ENV_ALLOWED: Final = frozenset(
    {
        "PATH",
        "HOME",
        "USER",
        "LOGNAME",
        "USERNAME",
        "SHELL",
        "LANG",
        "LANGUAGE",
        "TZ",
        "TERM",
        "NO_COLOR",
        "TMPDIR",
        "TEMP",
        "TMP",
        "XDG_CACHE_HOME",
        "XDG_CONFIG_HOME",
        "XDG_DATA_HOME",
        "XDG_RUNTIME_DIR",
        "SSL_CERT_FILE",
        "SSL_CERT_DIR",
        "LD_LIBRARY_PATH",
        "VIRTUAL_ENV",
        "CONDA_PREFIX",
        "CONDA_DEFAULT_ENV",
        "PYTHONPATH",
        "PYTHONHOME",
        "PYTHONNOUSERSITE",
        "PYTHONUSERBASE",
        "PYTHONUTF8",
        "PYTHONIOENCODING",
        "PYTHONDONTWRITEBYTECODE",
        "PYTHONPYCACHEPREFIX",
        "PYTHONHASHSEED",
        "PYTHONWARNINGS",
        "PYTHONDEVMODE",
        # Windows: the interpreter and subprocesses need these.
        "SYSTEMROOT",
        "SYSTEMDRIVE",
        "WINDIR",
        "COMSPEC",
        "PATHEXT",
        "USERPROFILE",
        "APPDATA",
        "LOCALAPPDATA",
        "PROGRAMDATA",
    }
)
# Locale categories, and coverage measurement of the children in the project's own test runs.
_ENV_ALLOWED_PREFIXES: Final = ("LC_", "COV_CORE_", "COVERAGE_")
_SECRET_NAME: Final = re.compile(
    r"TOKEN|KEY|SECRET|PASSW|PASSPHRASE|CREDENTIAL|AUTH|PRIVATE|COOKIE|SESSION|SIGNATURE|DSN",
    re.IGNORECASE,
)
_SECRET_MIN_CHARS: Final = 6


@dataclass(slots=True, kw_only=True)
class ModuleReport:
    """What loading one candidate in a worker process produced.

    ``errors`` hold dicts with ``code``, ``message``, ``toolName``, ``file``, ``line`` and
    ``traceback``; ``tools`` the worker's tool reports (see ``_worker._tool_report``).
    """

    candidate: Candidate
    status: Status
    seconds: float | None = None
    tools: list[dict[str, Any]] = field(default_factory=list)
    errors: list[dict[str, Any]] = field(default_factory=list)
    diagnostics: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True, slots=True, kw_only=True)
class SandboxOptions:
    """Limits and environment of the worker processes.

    Args:
        memory_limit: bytes a module may allocate (``None``: no limit).
        cpu_limit: CPU seconds per module (``None``: twice the timeout, rounded up; ``0``:
            no limit).
        file_size_limit: the largest file a module may write, in bytes (``None``: no limit).
        pass_env: names of further environment variables the modules may see.
    """

    memory_limit: int | None = DEFAULT_MEMORY_LIMIT_MIB * _MIB
    cpu_limit: int | None = None
    file_size_limit: int | None = DEFAULT_FILE_SIZE_LIMIT_MIB * _MIB
    pass_env: tuple[str, ...] = ()


def _mebibytes(text: str) -> int | None:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of MiB") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be 0 (no limit) or more MiB")
    return value * _MIB if value else None


def _cpu_seconds(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of seconds") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be 0 (no limit) or more seconds")
    return value


def add_sandbox_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``validate`` options for the worker processes' limits and environment."""
    group = parser.add_argument_group(
        "child processes (crash and hang isolation, not a security boundary)"
    )
    group.add_argument(
        "--memory-limit",
        type=_mebibytes,
        default=DEFAULT_MEMORY_LIMIT_MIB * _MIB,
        metavar="MIB",
        help="memory one module may allocate, 0 for no limit"
        f" (default: {DEFAULT_MEMORY_LIMIT_MIB})",
    )
    group.add_argument(
        "--cpu-limit",
        type=_cpu_seconds,
        default=None,
        metavar="S",
        help="CPU seconds one module may use, 0 for no limit (default: twice --timeout)",
    )
    group.add_argument(
        "--file-size-limit",
        type=_mebibytes,
        default=DEFAULT_FILE_SIZE_LIMIT_MIB * _MIB,
        metavar="MIB",
        help="the largest file a module may write, 0 for no limit"
        f" (default: {DEFAULT_FILE_SIZE_LIMIT_MIB})",
    )
    group.add_argument(
        "--env",
        dest="pass_env",
        action="append",
        default=[],
        metavar="NAME",
        help="pass environment variable NAME to the modules (repeatable); only PATH, HOME,"
        " locale, temporary-directory and Python variables are passed otherwise",
    )


def sandbox_options(args: argparse.Namespace) -> SandboxOptions:
    """The :class:`SandboxOptions` the ``validate`` options ask for."""
    return SandboxOptions(
        memory_limit=args.memory_limit,
        cpu_limit=args.cpu_limit,
        file_size_limit=args.file_size_limit,
        pass_env=tuple(args.pass_env),
    )


# -- the environment ------------------------------------------------------------------------------


def _allowed(name: str, passed: tuple[str, ...]) -> bool:
    return name in passed or name.upper() in _ENV_ALLOWED or name.startswith(_ENV_ALLOWED_PREFIXES)


def child_environment(pass_env: tuple[str, ...], marker: str) -> dict[str, str]:
    """The supervisor's environment: the allowlist and ``pass_env`` from ours, the directory
    ``customtools`` is imported from on ``PYTHONPATH``, the run's marker, and no bytecode
    writing."""
    import customtools

    env = {name: value for name, value in os.environ.items() if _allowed(name, pass_env)}
    root = os.path.dirname(os.path.dirname(os.path.abspath(customtools.__file__)))
    existing = env.get("PYTHONPATH")
    env["PYTHONPATH"] = root if not existing else existing + os.pathsep + root
    env[MARKER_VARIABLE] = marker
    # Nothing is written into the checked packs (CI checkouts stay clean), so no bytecode of
    # an earlier run can stand for a file edited since within the same second and size.
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def _secrets(pass_env: tuple[str, ...]) -> dict[str, str]:
    """Values of our secret-looking variables that were not passed: never shown in a report."""
    return {
        value: name
        for name, value in os.environ.items()
        if not _allowed(name, pass_env)
        and _SECRET_NAME.search(name)
        and len(value) >= _SECRET_MIN_CHARS
    }


def _redact(value: Any, hidden: dict[str, str]) -> Any:
    if isinstance(value, str):
        for secret, name in hidden.items():
            if secret in value:
                value = value.replace(secret, f"<value of ${name} redacted>")
        return value
    if isinstance(value, list):
        return [_redact(item, hidden) for item in value]
    if isinstance(value, dict):
        return {key: _redact(item, hidden) for key, item in value.items()}
    return value


# -- the supervisor process -----------------------------------------------------------------------


class _Child:
    """The supervisor process and the threads draining its pipes."""

    def __init__(self, request: dict[str, Any], cwd: str, env: dict[str, str]) -> None:
        kwargs: dict[str, Any] = {}
        if os.name == "posix":
            kwargs["start_new_session"] = True
        else:  # pragma: no cover - Windows
            kwargs["creationflags"] = subprocess.CREATE_NEW_PROCESS_GROUP  # type: ignore[attr-defined,unused-ignore]
        self.process = subprocess.Popen(
            [sys.executable, "-c", _BOOTSTRAP],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=env,
            **kwargs,
        )
        self.lines: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self._stderr = bytearray()
        self._lock = threading.Lock()
        assert self.process.stdout is not None
        assert self.process.stderr is not None
        self._threads = [
            threading.Thread(target=self._read_lines, args=(self.process.stdout,), daemon=True),
            threading.Thread(target=self._read_stderr, args=(self.process.stderr,), daemon=True),
        ]
        for thread in self._threads:
            thread.start()
        assert self.process.stdin is not None
        try:
            self.process.stdin.write(json.dumps(request).encode("utf-8"))
            self.process.stdin.close()
        except OSError:  # the child died at once; its stderr will say why
            pass

    def _read_lines(self, stream: IO[bytes]) -> None:
        for raw in stream:
            try:
                message = json.loads(raw)
            except ValueError:
                message = {"event": "garbled"}
            self.lines.put(message if isinstance(message, dict) else {"event": "garbled"})
        self.lines.put(None)

    def _read_stderr(self, stream: IO[bytes]) -> None:
        while chunk := stream.read1(8192):  # type: ignore[attr-defined]
            with self._lock:
                self._stderr += chunk
                if len(self._stderr) > _STDERR_TAIL:
                    del self._stderr[: len(self._stderr) - _STDERR_TAIL]

    def stderr_text(self) -> str:
        """What the supervisor itself wrote to stderr (the kept tail), once it has ended."""
        self._threads[1].join(2.0)
        with self._lock:
            return bytes(self._stderr).decode("utf-8", "replace")

    def kill(self) -> None:
        """Kill the supervisor and its process group; reap it."""
        if os.name == "posix":
            with contextlib.suppress(OSError):  # the group is already gone
                os.killpg(self.process.pid, signal.SIGKILL)
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        streams = (self.process.stdout, self.process.stderr)
        for thread, stream in zip(self._threads, streams, strict=True):
            # A process that escaped may hold a pipe open; do not wait for it (its reader is
            # a daemon thread and goes with the process).
            thread.join(timeout=1.0)
            if not thread.is_alive() and stream is not None:
                stream.close()


def _marked_processes(marker: str) -> Iterator[int]:
    """Pids of processes (other than ours) whose environment carries ``marker`` (Linux)."""
    needle = f"{MARKER_VARIABLE}={marker}".encode()
    try:
        entries = os.listdir("/proc")
    except OSError:
        return
    me = os.getpid()
    for entry in entries:
        if not entry.isdigit() or int(entry) == me:
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as handle:
                environ = handle.read()
        except OSError:
            continue
        if needle in environ.split(b"\0"):
            yield int(entry)


def _sweep(marker: str) -> None:
    """Kill every process still marked with this run's ``marker`` (a few passes)."""
    if not sys.platform.startswith("linux"):
        return
    for _ in range(5):
        found = list(_marked_processes(marker))
        if not found:
            return
        for pid in found:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


# -- outcomes -------------------------------------------------------------------------------------


def _signal_name(code: int) -> str:
    try:
        return signal.Signals(code).name
    except ValueError:
        return f"signal {code}"


def _describe_exit(code: int | None, limits: dict[str, Any]) -> str:
    if code is not None and code < 0:
        name = _signal_name(-code)
        if name == "SIGXCPU" or (name == "SIGKILL" and limits.get("cpu")):
            cpu = limits.get("cpu")
            return (
                f"loading the module was stopped by {name}: it used up the CPU time validate"
                f" allows a module ({cpu} s); raise --cpu-limit if it really needs more"
                if name == "SIGXCPU"
                else f"loading the module was killed ({name}); it may have used up the CPU time"
                f" validate allows a module ({cpu} s, --cpu-limit) or been killed from outside"
            )
        return (
            f"loading the module crashed the Python interpreter ({name}); the crash is in"
            " the module or a C extension it uses"
        )
    if code == 70:
        return (
            "the validation worker failed while loading the module (exit code 70); its"
            " traceback is in the detail"
        )
    return (
        f"loading the module ended the process (exit code {code}) without an exception, for"
        " example through os._exit(); tool code must never end its host"
    )


def _limit_hint(message: str, limits: dict[str, Any]) -> str:
    memory = limits.get("memory")
    if memory and "MemoryError" in message:
        return (
            f"{message} (validate limits a module to {memory // _MIB} MiB of memory; raise"
            " --memory-limit if it really needs more)"
        )
    size = limits.get("fileSize")
    if size and "File too large" in message:
        return (
            f"{message} (validate limits files a module writes to {size // _MIB} MiB; raise"
            " --file-size-limit if it really needs more)"
        )
    return message


def _failure(
    candidate: Candidate, outcome: dict[str, Any], timeout: float, limits: dict[str, Any]
) -> ModuleReport:
    dump = outcome.get("stderr") if isinstance(outcome.get("stderr"), str) else ""
    where = frame_in(dump, candidate, last=False)
    file = where[0] if where else main_file(candidate)
    line = where[1] if where else None
    status: Status = "timeout" if outcome.get("status") == "timeout" else "crashed"
    if status == "timeout":
        code = "timeout"
        message = (
            f"loading the module did not finish within {timeout:g} s (a hang at import or in"
            " the factory?); it was killed. Raise --timeout if it is only slow"
        )
    else:
        code = "crash"
        returncode = outcome.get("returncode")
        message = _describe_exit(returncode if isinstance(returncode, int) else None, limits)
    tail = (dump or "").strip()[-4000:] or None
    return ModuleReport(
        candidate=candidate,
        status=status,
        errors=[
            {
                "code": code,
                "message": message,
                "toolName": None,
                "file": file,
                "line": line,
                "traceback": tail,
            }
        ],
    )


def _from_outcome(
    candidate: Candidate, outcome: dict[str, Any], timeout: float, limits: dict[str, Any]
) -> ModuleReport:
    report = outcome.get("report")
    if outcome.get("status") not in ("loaded", "failed") or not isinstance(report, dict):
        return _failure(candidate, outcome, timeout, limits)
    errors = [
        {**error, "message": _limit_hint(str(error.get("message", "")), limits)}
        for error in report.get("errors", ())
        if isinstance(error, dict)
    ]
    seconds = report.get("seconds")
    return ModuleReport(
        candidate=candidate,
        status="failed" if errors else "loaded",
        seconds=float(seconds) if isinstance(seconds, (int, float)) else None,
        tools=list(report.get("tools", ())),
        errors=errors,
        diagnostics=list(report.get("diagnostics", ())),
    )


_ANOMALIES: Final = {
    "hang": (
        "timeout",
        "the validation process stopped answering while the module loaded (did the module stop"
        " its parent process?); it was killed",
    ),
    "ended": (
        "crash",
        "the validation process ended ({how}) while the module loaded; the module may have"
        " killed its parent process",
    ),
    "tampered": (
        "tampered",
        "validate's private report channel carried messages its validation process did not"
        " send, or the process did not end cleanly ({how}): the module wrote to the channel or"
        " interfered with the process, so its outcome cannot be trusted",
    ),
}


def _lost(candidate: Candidate, child: _Child, anomaly: str) -> ModuleReport:
    """The supervisor of this one module misbehaved: blame the module."""
    code = child.process.returncode
    if code is None:
        how = "still running"
    elif code < 0:
        how = f"signal {_signal_name(-code)}"
    else:
        how = f"exit code {code}"
    finding, message = _ANOMALIES[anomaly]
    return ModuleReport(
        candidate=candidate,
        status="timeout" if anomaly == "hang" else "crashed",
        errors=[
            {
                "code": finding,
                "message": message.format(how=how),
                "toolName": None,
                "file": main_file(candidate),
                "line": None,
                "traceback": None,
            }
        ],
    )


def _worker_failed(candidates: list[Candidate], child: _Child) -> list[ModuleReport]:
    text = child.stderr_text().strip()
    last = text.splitlines()[-1] if text else f"exit code {child.process.returncode}"
    return [
        ModuleReport(
            candidate=candidate,
            status="failed",
            errors=[
                {
                    "code": "worker-error",
                    "message": f"the validation process failed before loading the module: {last}",
                    "toolName": None,
                    "file": main_file(candidate),
                    "line": None,
                    "traceback": text[-4000:] or None,
                }
            ],
        )
        for candidate in candidates
    ]


def _run_supervisor(
    candidates: list[Candidate],
    request: dict[str, Any],
    cwd: str,
    env: dict[str, str],
) -> tuple[list[ModuleReport], str | None, _Child]:
    """Load ``candidates`` through one supervisor.

    Returns the reports, the anomaly (``None`` when the run was exactly as the protocol says:
    ``ready``, ``start``/``done`` for each module in order, ``end``, then the process exits 0
    with nothing after ``end``), and the finished child. Anomalies: ``no-start`` (no module
    code ran), ``hang``, ``ended`` (the supervisor died) and ``tampered``.
    """
    timeout = float(request["timeout"])
    limits = request["limits"]
    child = _Child({**request, "candidates": [c.to_dict() for c in candidates]}, cwd, env)
    reports: list[ModuleReport] = []
    current: int | None = None
    ready = False
    try:
        while True:
            wait = timeout + _SLACK if ready else _START_TIMEOUT
            try:
                message = child.lines.get(timeout=wait)
            except queue.Empty:
                return reports, "hang" if ready else "no-start", child
            if message is None:  # the supervisor's stdout closed: it ended
                child.process.wait()
                return reports, "ended" if ready else "no-start", child
            event = message.get("event")
            index = message.get("index")
            if event == "ready" and not ready:
                ready = True
            elif event == "start" and ready and current is None and index == len(reports):
                current = len(reports)
            elif event == "done" and current is not None and index == current:
                reports.append(_from_outcome(candidates[current], message, timeout, limits))
                current = None
            elif event == "end" and current is None and len(reports) == len(candidates):
                return reports, _after_end(child), child
            else:  # out of order, repeated or unknown
                return reports, "tampered", child
    finally:
        child.kill()
        _sweep(env[MARKER_VARIABLE])


def _after_end(child: _Child) -> str | None:
    """The genuine supervisor exits 0 right after ``end`` and writes nothing more."""
    try:
        trailing = child.lines.get(timeout=_SLACK)
    except queue.Empty:
        return "tampered"
    if trailing is not None:
        return "tampered"
    try:
        code = child.process.wait(timeout=_SLACK)
    except subprocess.TimeoutExpired:
        return "tampered"
    return None if code == 0 else "tampered"


def _load(
    candidates: list[Candidate], request: dict[str, Any], cwd: str, env: dict[str, str]
) -> list[ModuleReport]:
    """One report per candidate. When a run with several modules goes wrong in any way, the
    module at fault cannot be known from the channel (it may be what was forged): each module
    of the run is then loaded again in a run of its own, where an anomaly names it."""
    reports, anomaly, child = _run_supervisor(candidates, request, cwd, env)
    if anomaly is None:
        return reports
    if anomaly == "no-start":
        return _worker_failed(candidates, child)
    if len(candidates) == 1:
        return [_lost(candidates[0], child, anomaly)]
    out: list[ModuleReport] = []
    for candidate in candidates:
        out.extend(_load([candidate], request, cwd, env))
    return out


def _compile_error(candidate: Candidate) -> str | None:
    """Why the candidate's main file does not compile (``None``: it does, or unknown)."""
    path = main_file(candidate)
    if path is None:
        return None
    try:
        if os.path.getsize(path) > _COMPILE_MAX:
            return None
        with open(path, "rb") as handle:
            source = handle.read()
        compile(source, path, "exec", dont_inherit=True)
    except SyntaxError as exc:
        return f"SyntaxError: {exc.msg} (line {exc.lineno})"
    except ValueError as exc:  # NUL bytes in the source
        return f"ValueError: {exc}"
    except (OSError, RecursionError, MemoryError):
        return None
    return None


def _cross_check(report: ModuleReport) -> ModuleReport:
    """A module reported loaded whose main file this process cannot compile counts as failed."""
    if report.status != "loaded":
        return report
    problem = _compile_error(report.candidate)
    if problem is None:
        return report
    return ModuleReport(
        candidate=report.candidate,
        status="failed",
        errors=[
            {
                "code": "syntax-error",
                "message": f"the module does not compile ({problem}), yet its worker reported"
                " it loaded: the report was forged or the file changed during the run",
                "toolName": None,
                "file": main_file(report.candidate),
                "line": None,
                "traceback": None,
            }
        ],
    )


@contextlib.contextmanager
def _not_dumpable() -> Iterator[None]:
    """Make this process non-dumpable for the run (Linux): same-user processes can then
    neither open its file descriptors through /proc, read its environment, nor attach."""
    before = dumpable()
    if before is None:
        yield
        return
    set_dumpable(0)
    try:
        yield
    finally:
        set_dumpable(before)


def load_isolated(
    candidates: list[Candidate],
    *,
    cwd: str,
    timeout: float,
    load_timeout: float | None = None,
    sandbox: SandboxOptions | None = None,
) -> list[ModuleReport]:
    """Load every candidate in child processes; one report per candidate, in order.

    Args:
        candidates: the modules of one pack, in precedence order.
        cwd: the working directory of the children and the tools' ``api.cwd``.
        timeout: seconds one module may take to import and build its tools.
        load_timeout: the loader's bound on awaitable factories (default: what a host gets,
            ``DEFAULT_LOAD_TIMEOUT``, kept below ``timeout`` so the loader's own message wins).
        sandbox: the workers' limits and environment (default: :class:`SandboxOptions`).
    """
    from customtools._loading._loader import DEFAULT_LOAD_TIMEOUT

    options = sandbox if sandbox is not None else SandboxOptions()
    if load_timeout is None:
        load_timeout = min(DEFAULT_LOAD_TIMEOUT, timeout * 0.9)
    cpu = options.cpu_limit if options.cpu_limit is not None else math.ceil(timeout * 2)
    request = {
        "cwd": cwd,
        "loadTimeout": load_timeout,
        "timeout": timeout,
        "limits": {
            "memory": options.memory_limit,
            "cpu": cpu or None,
            "fileSize": options.file_size_limit,
        },
    }
    marker = secrets.token_hex(16)
    env = child_environment(options.pass_env, marker)
    with _not_dumpable():
        reports = _load(list(candidates), request, cwd, env) if candidates else []
    hidden = _secrets(options.pass_env)
    out = []
    for report in reports:
        report = _cross_check(report)
        if hidden:
            report.tools = _redact(report.tools, hidden)
            report.errors = _redact(report.errors, hidden)
            report.diagnostics = _redact(report.diagnostics, hidden)
        out.append(report)
    return out
