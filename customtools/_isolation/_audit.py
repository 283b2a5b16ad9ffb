"""The audit mode of ``customtools validate``: each module loaded in a worker process of its own.

This is **crash and hang isolation, not a security boundary** (docs/security.md
``customtools validate`` says what it guarantees and what not). The walls and their reasons:

- **One process per module.** A child (:mod:`._audit_child`), which runs no tool code, forks
  a fresh worker for each module: a hang (its stacks dumped by ``faulthandler``), an
  ``os._exit`` or a crash is that module's finding, and the next module gets a new worker.
- **Outcomes are decided outside the module's process.** The worker writes its report to a
  pipe only the child reads; the child's channel to this process is closed in the worker
  before the module is imported, and both are non-dumpable for the run (a same-user worker
  can neither open their descriptors through ``/proc`` nor attach). The child sets the status
  from how the worker ended and stamps the index itself. This process accepts a run only when
  the channel carried exactly ``ready``, ``start``/``done`` per module in order and ``end``,
  then nothing, and the child exited 0; any other run is thrown away and each of its modules
  loaded again alone, where the anomaly names it (``tampered``, ``crash``, ``timeout``). A
  module whose main file this process cannot compile is never reported loaded. So a module
  can lie only about itself. Not a secret key (an HMAC over the reports): a key the child
  holds before forking is in the worker's memory too, and one sent later travels on a
  channel the same user can read; the design relies on who can write to the channel.
- **Nothing started survives.** The child is a subreaper (Linux) and kills everything under
  it between modules; at the end of a run every process carrying the run's marker
  (:data:`._process.MARKER_VARIABLE`) is killed. Elsewhere, process groups are killed.
- **Limits** (:class:`._limits.WorkerLimits`, hard) per worker, and a **scrubbed
  environment** (:func:`._process.scrubbed_environment` plus ``pass_env``); the values of
  secret-looking variables are replaced in the report should a module find them anyway.
"""

from __future__ import annotations

import contextlib
import math
import os
import queue
import re
import secrets
import signal
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from customtools._isolation._audit_child import MESSAGE_LIMIT
from customtools._isolation._audit_worker import error_entry, frame_in, main_file
from customtools._isolation._limits import WorkerLimits, dumpable, set_dumpable
from customtools._isolation._process import (
    MARKER_VARIABLE,
    describe_exit,
    scrubbed_environment,
    spawn,
    sweep,
)
from customtools._isolation._wire import Channel, MessageTooLargeError
from customtools._loading._records import Candidate

__all__ = [
    "DEFAULT_FILE_SIZE_LIMIT_MIB",
    "DEFAULT_MEMORY_LIMIT_MIB",
    "ModuleReport",
    "audit_limits",
    "audit_modules",
]

Status = Literal["loaded", "failed", "crashed", "timeout"]
"""``loaded``: no errors; ``failed``: load errors (some tools may still have loaded);
``crashed``: the module ended its worker process; ``timeout``: it hung and was killed."""

DEFAULT_MEMORY_LIMIT_MIB: Final = 1024
DEFAULT_FILE_SIZE_LIMIT_MIB: Final = 256
_STDERR_TAIL: Final = 64 * 1024
_START_TIMEOUT: Final = 60.0  # seconds for the child to start
_SLACK: Final = 15.0  # seconds the child may take beyond a module's timeout (dump, reaping)
_COMPILE_MAX: Final = 16 * 1024 * 1024  # larger main files are not compiled by the parent
_SECRET_NAME: Final = re.compile(
    r"TOKEN|KEY|SECRET|PASSW|PASSPHRASE|CREDENTIAL|AUTH|PRIVATE|COOKIE|SESSION|SIGNATURE|DSN",
    re.IGNORECASE,
)
_SECRET_MIN_CHARS: Final = 6
_CHILD: Final = "customtools._isolation._audit_child"


@dataclass(slots=True, kw_only=True)
class ModuleReport:
    """What loading one candidate in a worker process produced.

    ``errors`` hold ``LoadError.to_dict()`` forms plus ``file`` and ``line``
    (:func:`~._audit_worker.error_entry`); ``tools`` the worker's tool reports
    (``_audit_worker._tool_report``).
    """

    candidate: Candidate
    status: Status
    seconds: float | None = None
    tools: list[dict[str, Any]] = field(default_factory=list)
    errors: list[dict[str, Any]] = field(default_factory=list)
    diagnostics: list[dict[str, Any]] = field(default_factory=list)


def audit_limits(timeout: float) -> WorkerLimits:
    """``validate``'s default limits for a module ``timeout``: 1024 MiB of memory, files up to
    256 MiB, and twice the timeout (rounded up) in CPU seconds."""
    return WorkerLimits(
        memory_limit_mib=DEFAULT_MEMORY_LIMIT_MIB,
        cpu_limit=math.ceil(timeout * 2),
        file_size_limit_mib=DEFAULT_FILE_SIZE_LIMIT_MIB,
    )


# -- the environment ------------------------------------------------------------------------------


def _secrets(env: dict[str, str]) -> dict[str, str]:
    """Values of our secret-looking variables that ``env`` left out: never shown in a report."""
    return {
        value: name
        for name, value in os.environ.items()
        if name not in env and _SECRET_NAME.search(name) and len(value) >= _SECRET_MIN_CHARS
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


# -- the child process ----------------------------------------------------------------------------


class _Child:
    """The audit child, the thread reading its messages and the one keeping its stderr."""

    def __init__(self, request: dict[str, Any], cwd: str, env: dict[str, str]) -> None:
        self._stderr = bytearray()
        self._lock = threading.Lock()
        self.process, read_fd, write_fd, self._drainer = spawn(
            _CHILD, cwd=cwd, env=env, stderr=self._keep_tail
        )
        self.channel = Channel(read_fd, write_fd, limit=MESSAGE_LIMIT, blocking=True)
        self.lines: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        with contextlib.suppress(OSError):  # the child died at once; its stderr says why
            self.channel.send_blocking(request)

    def _read(self) -> None:
        while True:
            try:
                message = self.channel.receive_blocking()
            except (MessageTooLargeError, ValueError):
                self.lines.put({"event": "garbled"})
                message = None
            except OSError:
                message = None
            self.lines.put(message)
            if message is None:
                return

    def _keep_tail(self, chunk: bytes) -> None:
        with self._lock:
            self._stderr += chunk
            del self._stderr[: max(0, len(self._stderr) - _STDERR_TAIL)]

    def stderr_text(self) -> str:
        """What the child itself wrote to stderr (the kept tail), once it has ended."""
        assert self._drainer is not None
        self._drainer.join(2.0)
        with self._lock:
            return bytes(self._stderr).decode("utf-8", "replace")

    def kill(self) -> None:
        """Kill the child and its process group; reap it."""
        if os.name == "posix":
            with contextlib.suppress(OSError):  # the group is already gone
                os.killpg(self.process.pid, signal.SIGKILL)
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        # A process that escaped may hold the pipe open; do not wait for it (the reader is a
        # daemon thread and goes with this process).
        self._reader.join(timeout=1.0)
        if not self._reader.is_alive():
            self.channel.close()


# -- outcomes -------------------------------------------------------------------------------------


def _finding(
    candidate: Candidate,
    status: Status,
    code: str,
    message: str,
    *,
    where: tuple[str, int] | None = None,
    traceback: str | None = None,
) -> ModuleReport:
    """A report of one finding about the module (at ``where``, else its main file)."""
    file, line = where if where is not None else (None, None)
    error = error_entry(candidate, code, message, file=file, line=line, traceback=traceback)
    return ModuleReport(candidate=candidate, status=status, errors=[error])


def _limit_hint(message: str, limits: WorkerLimits) -> str:
    memory, size = limits.memory_limit_mib, limits.file_size_limit_mib
    if memory and "MemoryError" in message:
        return (
            f"{message} (validate limits a module to {memory} MiB of memory; raise"
            " --memory-limit if it really needs more)"
        )
    if size and "File too large" in message:
        return (
            f"{message} (validate limits files a module writes to {size} MiB; raise"
            " --file-size-limit if it really needs more)"
        )
    return message


def _failure(
    candidate: Candidate, outcome: dict[str, Any], timeout: float, limits: WorkerLimits
) -> ModuleReport:
    dump = outcome.get("stderr") if isinstance(outcome.get("stderr"), str) else ""
    tail = (dump or "").strip()[-4000:] or None
    where = frame_in(dump, candidate, last=False)
    if outcome.get("status") == "timeout":
        message = (
            f"loading the module did not finish within {timeout:g} s (a hang at import or in"
            " the factory?); it was killed. Raise --timeout if it is only slow"
        )
        return _finding(candidate, "timeout", "timeout", message, where=where, traceback=tail)
    code = outcome.get("returncode")
    code = code if isinstance(code, int) else None
    message = f"loading the module ended its worker process: it {describe_exit(code, limits)}"
    if code == -signal.SIGXCPU or (code == -signal.SIGKILL and limits.cpu_limit):
        message += "; raise --cpu-limit if it really needs more"
    return _finding(candidate, "crashed", "crash", message, where=where, traceback=tail)


def _from_outcome(
    candidate: Candidate, outcome: dict[str, Any], timeout: float, limits: WorkerLimits
) -> ModuleReport:
    report = outcome.get("report")
    if outcome.get("status") not in ("loaded", "failed") or not isinstance(report, dict):
        return _failure(candidate, outcome, timeout, limits)
    errors = [
        {**error, "error": _limit_hint(str(error.get("error", "")), limits)}
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


def _how(child: _Child) -> str:
    code = child.process.returncode
    return "it is still running" if code is None else f"it {describe_exit(code, explain=False)}"


def _lost(candidate: Candidate, child: _Child, anomaly: str) -> ModuleReport:
    """The child running this one module misbehaved: blame the module."""
    finding, message = _ANOMALIES[anomaly]
    status: Status = "timeout" if anomaly == "hang" else "crashed"
    return _finding(candidate, status, finding, message.format(how=_how(child)))


def _worker_failed(candidates: list[Candidate], child: _Child) -> list[ModuleReport]:
    text = child.stderr_text().strip()
    last = text.splitlines()[-1] if text else _how(child)
    message = f"the validation process failed before loading the module: {last}"
    return [
        _finding(candidate, "failed", "worker-error", message, traceback=text[-4000:] or None)
        for candidate in candidates
    ]


def _run_supervisor(
    candidates: list[Candidate],
    request: dict[str, Any],
    cwd: str,
    env: dict[str, str],
) -> tuple[list[ModuleReport], str | None, _Child]:
    """Load ``candidates`` through one child.

    Returns the reports, the anomaly (``None`` when the run was exactly as the protocol says:
    ``ready``, ``start``/``done`` for each module in order, ``end``, then the process exits 0
    with nothing after ``end``), and the finished child. Anomalies: ``no-start`` (no module
    code ran), ``hang``, ``ended`` (the supervisor died) and ``tampered``.
    """
    timeout = float(request["timeout"])
    limits = WorkerLimits.from_dict(request["limits"])
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
        sweep(env[MARKER_VARIABLE])


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
    message = (
        f"the module does not compile ({problem}), yet its worker reported it loaded: the"
        " report was forged or the file changed during the run"
    )
    return _finding(report.candidate, "failed", "syntax-error", message)


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


def audit_modules(
    candidates: list[Candidate],
    *,
    cwd: str,
    timeout: float,
    load_timeout: float | None = None,
    limits: WorkerLimits | None = None,
    pass_env: tuple[str, ...] = (),
) -> list[ModuleReport]:
    """Load every candidate in child processes; one report per candidate, in order.

    Args:
        candidates: the modules of one pack, in precedence order.
        cwd: the working directory of the children and the tools' ``api.cwd``.
        timeout: seconds one module may take to import and build its tools.
        load_timeout: the loader's bound on awaitable factories (default: what a host gets,
            ``DEFAULT_LOAD_TIMEOUT``, kept below ``timeout`` so the loader's own message wins).
        limits: each worker's limits (default: :func:`audit_limits`).
        pass_env: names of further environment variables the modules may see.
    """
    import customtools
    from customtools._loading._loader import DEFAULT_LOAD_TIMEOUT

    if load_timeout is None:
        load_timeout = min(DEFAULT_LOAD_TIMEOUT, timeout * 0.9)
    limits = limits if limits is not None else audit_limits(timeout)
    request = {
        "cwd": cwd,
        "loadTimeout": load_timeout,
        "timeout": timeout,
        "limits": limits.to_dict(),
    }
    # Scrubbed, with the directory customtools is imported from on PYTHONPATH and the marker;
    # no bytecode is written into the checked packs, so an earlier run's .pyc can never stand
    # for a file edited since within the same second and size.
    env = scrubbed_environment(os.environ, pass_env, prefixes=("LC_", "COV_CORE_", "COVERAGE_"))
    root = os.path.dirname(os.path.dirname(os.path.abspath(customtools.__file__)))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, (env.get("PYTHONPATH"), root)))
    env[MARKER_VARIABLE] = secrets.token_hex(16)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    with _not_dumpable():
        reports = _load(list(candidates), request, cwd, env) if candidates else []
    hidden = _secrets(env)
    out = []
    for report in reports:
        report = _cross_check(report)
        if hidden:
            report.tools = _redact(report.tools, hidden)
            report.errors = _redact(report.errors, hidden)
            report.diagnostics = _redact(report.diagnostics, hidden)
        out.append(report)
    return out
