"""The child process of ``customtools validate``: forks one worker per module and reports on it.

The parent (:mod:`customtools._isolation._audit`) starts it with :func:`._process.spawn` and
exchanges framed messages with it (:mod:`._wire`)::

    request   {"cwd": str, "loadTimeout": float | null, "timeout": float,
               "limits": WorkerLimits.to_dict(), "candidates": [Candidate.to_dict()]}
    replies   {"event": "ready"}
              {"event": "start", "index": i}
              {"event": "done", "index": i, "status": "loaded" | "failed" | "crashed" |
               "timeout", "returncode": int | null, "stderr": str, "report": {...} | null}
              {"event": "end"}

This process (the *supervisor*) runs no tool code. For each module it forks a *worker* that
closes the channel, applies the limits and loads that one module
(:func:`._audit_worker.load_in_worker`), writing its report to a pipe only this process
reads; the status comes from how the worker ended, and the index is stamped here. The
supervisor is a non-dumpable child subreaper (Linux) that kills and reaps everything under it
between modules; elsewhere the worker's process group is killed, and without ``fork``
(Windows) the modules load here, one after another. The reasons: :mod:`._audit`.
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
from typing import Any, Final

from customtools._isolation._limits import (
    PR_SET_CHILD_SUBREAPER,
    WorkerLimits,
    prctl,
    set_dumpable,
    set_limits,
)
from customtools._isolation._process import INTERNAL_EXIT, claim_stdio, reap_children
from customtools._isolation._wire import Channel

__all__ = ["MESSAGE_LIMIT", "main"]

_STDERR_TAIL: Final = 64 * 1024
_REPORT_MAX: Final = 64 * 1024 * 1024
MESSAGE_LIMIT: Final = 2 * _REPORT_MAX
"""The largest message on the channel (a ``done`` carries a report and a stderr tail)."""
_DUMP_GRACE: Final = 0.5  # seconds to let faulthandler write the hung module's traceback
_POLL: Final = 0.02  # seconds between checks when the kernel cannot signal the worker's exit


# -- one worker -----------------------------------------------------------------------------------


def _worker(
    channel: Channel, report_w: int, err_w: int, data: dict[str, Any], request: dict[str, Any]
) -> None:
    """The forked child: never returns."""
    code = 0
    try:
        channel.close()
        os.dup2(err_w, 1)
        os.dup2(err_w, 2)
        os.close(err_w)
        os.setpgid(0, 0)
        # Its own descendants must stay visible to the parent's final sweep (/proc/PID/environ).
        set_dumpable(1)
        set_limits(WorkerLimits.from_dict(request["limits"]))
        from customtools._isolation._audit_worker import load_in_worker

        payload = load_in_worker(data, request["cwd"], request.get("loadTimeout"))
        sys.stderr.flush()
        encoded = payload.encode("utf-8")
        view = memoryview(encoded)
        while view:
            written = os.write(report_w, view)
            view = view[written:]
    except BaseException:  # the exit status says it; stderr has the traceback
        code = INTERNAL_EXIT
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


def _supervise(channel: Channel, data: dict[str, Any], request: dict[str, Any]) -> dict[str, Any]:
    report_r, report_w = os.pipe()
    err_r, err_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the worker; its effects are what the tests check
        os.close(report_r)
        os.close(err_r)
        _worker(channel, report_w, err_w, data, request)
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
    reap_children()
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
    """Run the supervisor: read the request, report, and end the process."""
    from customtools._isolation._audit_worker import warm_up

    read_fd, write_fd = claim_stdio()
    channel = Channel(read_fd, write_fd, limit=MESSAGE_LIMIT, blocking=True)
    request = channel.receive_blocking()
    if request is None:
        os._exit(2)
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
    channel.send_blocking({"event": "ready"})
    for index, data in enumerate(request["candidates"]):
        channel.send_blocking({"event": "start", "index": index})
        outcome = _supervise(channel, data, request) if can_fork else _in_process(data, request)
        channel.send_blocking({"event": "done", "index": index, **outcome})
    channel.send_blocking({"event": "end"})
    os._exit(0)
