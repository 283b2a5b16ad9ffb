"""The child process of ``customtools validate``: forks one worker per module and reports on it.

The parent (:mod:`customtools._isolation._audit`) starts ``python -c`` with a bootstrap that calls
:func:`main`, writes one JSON request on stdin and reads JSON lines back::

    request   {"cwd": str, "loadTimeout": float | null, "timeout": float,
               "limits": {"memory": int | null, "cpu": int | null, "fileSize": int | null},
               "candidates": [Candidate.to_dict()]}
    replies   {"event": "ready"}
              {"event": "start", "index": i}
              {"event": "done", "index": i, "status": "loaded" | "failed" | "crashed" |
               "timeout", "returncode": int | null, "stderr": str, "report": {...} | null}
              {"event": "end"}

This process (the *supervisor*) runs no tool code. For each module it forks a *worker* that
closes the supervisor's report channel, applies the resource limits and loads that one module
(:func:`customtools._isolation._audit_worker.load_in_worker`), writing its report to a pipe
of its own. The
supervisor decides the module's status from how the worker ended (exit status, a report that
parses, the deadline), stamps the index itself, and only then writes to the parent.

On Linux the supervisor is a child subreaper (``PR_SET_CHILD_SUBREAPER``), so everything a
worker starts, even in a new session, becomes the supervisor's child when its parent dies; after
each module the supervisor kills and reaps every process under it before forking the next
worker. It is also non-dumpable (``PR_SET_DUMPABLE`` 0): a worker running as the same user
cannot open its file descriptors through ``/proc`` nor attach to it, so it cannot reach the
report channel. Elsewhere on POSIX the worker's process group is killed instead; without
``fork`` (Windows) the modules load in this process, one after another, with no such guarantees.
"""

from __future__ import annotations

import contextlib
import faulthandler
import json
import os
import select
import signal
import sys
import time
from typing import Any, Final, TextIO

from customtools._isolation._limits import (
    PR_SET_CHILD_SUBREAPER,
    prctl,
    set_dumpable,
    set_limits,
)

__all__ = ["main"]

_STDERR_TAIL: Final = 64 * 1024
_REPORT_MAX: Final = 64 * 1024 * 1024
_DUMP_GRACE: Final = 0.5  # seconds to let faulthandler write the hung module's traceback
_REAP_BOUND: Final = 5.0  # seconds spent killing a module's descendants at most
_POLL: Final = 0.02  # seconds between checks when the kernel cannot signal the worker's exit


def _claim_stdout() -> TextIO:
    """A private stream on the original stdout; fd 1 then points at stderr, fd 0 at null."""
    sys.stdout.flush()
    protocol_fd = os.dup(1)  # not inherited by programs started later (PEP 446)
    os.dup2(2, 1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    return os.fdopen(protocol_fd, "w", encoding="utf-8", buffering=1)


def _send(stream: TextIO, event: str, **fields: Any) -> None:
    stream.write(json.dumps({"event": event, **fields}) + "\n")
    stream.flush()


# -- the worker's descendants ---------------------------------------------------------------------


def _children() -> list[int]:
    """The pids whose parent is this process (adopted orphans included)."""
    me = os.getpid()
    try:
        with open(f"/proc/{me}/task/{me}/children") as handle:
            return [int(pid) for pid in handle.read().split()]
    except OSError:
        pass
    found = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            continue
        fields = stat.rsplit(b")", 1)[-1].split()
        if len(fields) > 1 and int(fields[1]) == me:
            found.append(int(entry))
    return found


def _reap_all() -> None:
    """Kill and reap every process under this one (bounded in time)."""
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


# -- one worker -----------------------------------------------------------------------------------


def _worker(
    protocol: TextIO, report_w: int, err_w: int, data: dict[str, Any], request: dict[str, Any]
) -> None:
    """The forked child: never returns."""
    code = 0
    try:
        protocol_fd = protocol.fileno()
        os.close(protocol_fd)
        os.dup2(err_w, 1)
        os.dup2(err_w, 2)
        os.close(err_w)
        os.setpgid(0, 0)
        # Its own descendants must stay visible to the parent's final sweep (/proc/PID/environ).
        set_dumpable(1)
        set_limits(request.get("limits") or {})
        from customtools._isolation._audit_worker import load_in_worker

        payload = load_in_worker(data, request["cwd"], request.get("loadTimeout"))
        sys.stderr.flush()
        encoded = payload.encode("utf-8")
        view = memoryview(encoded)
        while view:
            written = os.write(report_w, view)
            view = view[written:]
    except BaseException:  # the exit status says it; stderr has the traceback
        code = 70
        with contextlib.suppress(BaseException):
            import traceback

            traceback.print_exc()
            sys.stderr.flush()
    os._exit(code)


class _Drain:
    """Non-blocking reads of one pipe into a buffer, with a size bound."""

    def __init__(self, fd: int, limit: int, *, tail: bool) -> None:
        os.set_blocking(fd, False)
        self.fd: int | None = fd
        self.data = bytearray()
        self.total = 0
        self._limit = limit
        self._tail = tail

    def read(self) -> None:
        while self.fd is not None:
            try:
                chunk = os.read(self.fd, 65536)
            except BlockingIOError:
                return
            except OSError:
                chunk = b""
            if not chunk:
                os.close(self.fd)
                self.fd = None
                return
            self.total += len(chunk)
            self.data += chunk
            if len(self.data) > self._limit:
                if self._tail:
                    del self.data[: len(self.data) - self._limit]
                else:
                    del self.data[self._limit :]

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


def _wait(pid: int, pidfd: int | None, pipes: list[_Drain], deadline: float) -> int | None:
    """Drain the pipes until the worker ends (its wait status) or the deadline (``None``)."""
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            for pipe in pipes:
                pipe.read()
            return status
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return None
        fds = [pipe.fd for pipe in pipes if pipe.fd is not None]
        if pidfd is not None:
            fds.append(pidfd)
            wait = remaining
        else:
            wait = min(remaining, _POLL)
        if fds:
            select.select(fds, [], [], wait)
        else:
            time.sleep(wait)
        for pipe in pipes:
            pipe.read()


def _supervise(protocol: TextIO, data: dict[str, Any], request: dict[str, Any]) -> dict[str, Any]:
    report_r, report_w = os.pipe()
    err_r, err_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the worker; its effects are what the tests check
        os.close(report_r)
        os.close(err_r)
        _worker(protocol, report_w, err_w, data, request)
    os.close(report_w)
    os.close(err_w)
    report = _Drain(report_r, _REPORT_MAX, tail=False)
    stderr = _Drain(err_r, _STDERR_TAIL, tail=True)
    pidfd: int | None = None
    with contextlib.suppress(AttributeError, OSError):
        pidfd = os.pidfd_open(pid)  # type: ignore[attr-defined,unused-ignore]
    try:
        deadline = time.monotonic() + float(request["timeout"])
        status = _wait(pid, pidfd, [report, stderr], deadline)
        timed_out = status is None
        if status is None:
            mark = stderr.total
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGUSR1)  # faulthandler dumps every thread's stack
            grace = time.monotonic() + _DUMP_GRACE
            while time.monotonic() < grace and stderr.total == mark:
                select.select([fd for fd in [stderr.fd] if fd is not None], [], [], 0.02)
                stderr.read()
            time.sleep(0.05)
            stderr.read()
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
            _, status = os.waitpid(pid, 0)
    finally:
        if pidfd is not None:
            os.close(pidfd)
    with contextlib.suppress(OSError):
        os.killpg(pid, signal.SIGKILL)
    _reap_all()
    stderr.read()
    report.read()
    report.close()
    stderr.close()
    returncode = os.waitstatus_to_exitcode(status)
    outcome: dict[str, Any] = {
        "returncode": returncode,
        "stderr": stderr.data.decode("utf-8", "replace"),
        "report": None,
    }
    if timed_out:
        return {**outcome, "status": "timeout"}
    parsed = _parse_report(bytes(report.data)) if returncode == 0 else None
    if parsed is None:
        return {**outcome, "status": "crashed"}
    failed = bool(parsed["errors"])
    return {**outcome, "status": "failed" if failed else "loaded", "report": parsed}


def _parse_report(data: bytes) -> dict[str, Any] | None:
    try:
        parsed = json.loads(data)
    except ValueError:
        return None
    keys = ("seconds", "tools", "errors", "diagnostics")
    if not isinstance(parsed, dict) or any(key not in parsed for key in keys):
        return None
    if not all(isinstance(parsed[key], list) for key in keys[1:]):
        return None
    return parsed


def _in_process(data: dict[str, Any], request: dict[str, Any]) -> dict[str, Any]:
    """Without ``fork`` (Windows): load here; a crash ends the supervisor."""
    from customtools._isolation._audit_worker import load_in_worker

    parsed = _parse_report(
        load_in_worker(data, request["cwd"], request.get("loadTimeout")).encode("utf-8")
    )
    if parsed is None:  # pragma: no cover - the worker always writes a whole report
        return {"status": "crashed", "returncode": None, "stderr": "", "report": None}
    status = "failed" if parsed["errors"] else "loaded"
    return {"status": status, "returncode": 0, "stderr": "", "report": parsed}


def main() -> None:
    """Run the supervisor: read the request on stdin, report, and end the process."""
    from customtools._isolation._audit_worker import warm_up

    request = json.load(sys.stdin)
    protocol = _claim_stdout()
    faulthandler.enable(file=sys.stderr, all_threads=True)
    if hasattr(signal, "SIGUSR1"):
        faulthandler.register(signal.SIGUSR1, file=sys.stderr, all_threads=True)
    set_dumpable(0)
    prctl(PR_SET_CHILD_SUBREAPER, 1)
    warm_up()
    can_fork = hasattr(os, "fork")
    if can_fork:
        import gc

        # Keep the collector from touching (and so copying) every inherited object in each
        # forked worker.
        gc.freeze()
    _send(protocol, "ready")
    for index, data in enumerate(request["candidates"]):
        _send(protocol, "start", index=index)
        outcome = _supervise(protocol, data, request) if can_fork else _in_process(data, request)
        _send(protocol, "done", index=index, **outcome)
    _send(protocol, "end")
    protocol.flush()
    os._exit(0)
