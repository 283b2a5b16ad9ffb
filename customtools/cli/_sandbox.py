"""Loading tool modules in child processes, so no module can take ``validate`` down with it.

One child (``customtools.cli._worker``) loads the modules of a pack one after another and
reports each as it finishes. When a module hangs past the timeout, calls ``os._exit`` or
crashes the interpreter, the parent records that module's failure (with the line
``faulthandler`` points at, when it can), kills the child's whole process group, and starts a
fresh child for the modules after it. Nothing a module starts outlives the run: the process
group is killed when each child ends, whatever the outcome.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import IO, Any, Final, Literal

from customtools._loading._records import Candidate
from customtools.cli._worker import frame_in, main_file

__all__ = ["ModuleReport", "load_isolated"]

Status = Literal["loaded", "failed", "crashed", "timeout"]
"""``loaded``: no errors; ``failed``: load errors (some tools may still have loaded);
``crashed``: the module ended the child process; ``timeout``: it hung and was killed."""

_BOOTSTRAP: Final = (
    # `python -c` puts the working directory (the user's project) first on sys.path, where a
    # tools directory's `json.py` would shadow the standard library: take it off again.
    "import sys; sys.path[:] = [p for p in sys.path if p not in ('', '.')]; "
    "from customtools.cli._worker import main; main()"
)
_STDERR_TAIL: Final = 64 * 1024
_DUMP_GRACE: Final = 0.5  # seconds to let faulthandler write the hung module's traceback
_START_TIMEOUT: Final = 60.0  # seconds for the child to start, beyond the per-module timeout


@dataclass(slots=True, kw_only=True)
class ModuleReport:
    """What loading one candidate in a child process produced.

    ``errors`` hold dicts with ``code``, ``message``, ``toolName``, ``file``, ``line`` and
    ``traceback``; ``tools`` the worker's tool reports (see ``_worker._tool_report``).
    """

    candidate: Candidate
    status: Status
    seconds: float | None = None
    tools: list[dict[str, Any]] = field(default_factory=list)
    errors: list[dict[str, Any]] = field(default_factory=list)
    diagnostics: list[dict[str, Any]] = field(default_factory=list)


def _environment() -> dict[str, str]:
    """The child's environment: ours, plus the directory ``customtools`` is imported from."""
    import customtools

    env = dict(os.environ)
    root = os.path.dirname(os.path.dirname(os.path.abspath(customtools.__file__)))
    existing = env.get("PYTHONPATH")
    env["PYTHONPATH"] = root if not existing else existing + os.pathsep + root
    env.pop("PYTHONSAFEPATH", None)
    return env


class _Child:
    """One worker process and the threads draining its pipes."""

    def __init__(self, candidates: list[Candidate], cwd: str, load_timeout: float | None):
        kwargs: dict[str, Any] = {}
        if os.name == "posix":
            kwargs["start_new_session"] = True
        else:  # pragma: no cover - Windows
            kwargs["creationflags"] = subprocess.CREATE_NEW_PROCESS_GROUP  # type: ignore[attr-defined]
        self.process = subprocess.Popen(
            [sys.executable, "-c", _BOOTSTRAP],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=_environment(),
            **kwargs,
        )
        self.lines: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self._stderr = bytearray()
        self._stderr_total = 0
        self._lock = threading.Lock()
        assert self.process.stdout is not None
        assert self.process.stderr is not None
        self._threads = [
            threading.Thread(target=self._read_lines, args=(self.process.stdout,), daemon=True),
            threading.Thread(target=self._read_stderr, args=(self.process.stderr,), daemon=True),
        ]
        for thread in self._threads:
            thread.start()
        request = {
            "cwd": cwd,
            "loadTimeout": load_timeout,
            "candidates": [candidate.to_dict() for candidate in candidates],
        }
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
                continue
            if isinstance(message, dict):
                self.lines.put(message)
        self.lines.put(None)

    def _read_stderr(self, stream: IO[bytes]) -> None:
        while chunk := stream.read1(8192):  # type: ignore[attr-defined]
            with self._lock:
                self._stderr += chunk
                self._stderr_total += len(chunk)
                if len(self._stderr) > _STDERR_TAIL:
                    del self._stderr[: len(self._stderr) - _STDERR_TAIL]

    def drain_stderr(self, timeout: float = 2.0) -> None:
        """Wait (bounded) until the child's stderr is read to its end.

        The child has exited, but the reader thread may not have collected the last bytes
        yet; a crash's faulthandler traceback, which gives the finding its line, is there.
        """
        self._threads[1].join(timeout)

    def stderr_mark(self) -> int:
        """A position in the child's stderr (bytes written so far)."""
        with self._lock:
            return self._stderr_total

    def stderr_since(self, mark: int) -> str:
        """What the child wrote to stderr since ``mark`` (within the kept tail)."""
        with self._lock:
            kept_from = self._stderr_total - len(self._stderr)
            data = bytes(self._stderr[max(0, mark - kept_from) :])
        return data.decode("utf-8", "replace")

    def dump_tracebacks(self) -> None:
        """Ask the child's faulthandler for every thread's traceback, and wait a moment."""
        if not hasattr(signal, "SIGUSR1") or self.process.poll() is not None:
            return
        mark = self.stderr_mark()
        try:
            os.kill(self.process.pid, signal.SIGUSR1)
        except OSError:
            return
        deadline = time.monotonic() + _DUMP_GRACE
        while time.monotonic() < deadline and self.stderr_mark() == mark:
            time.sleep(0.02)
        time.sleep(0.05)  # the rest of the dump

    def kill(self) -> None:
        """Kill the child and everything it started in its process group; reap the child."""
        if os.name == "posix":
            with contextlib.suppress(OSError):  # the group is already gone
                os.killpg(self.process.pid, signal.SIGKILL)
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        streams = (self.process.stdout, self.process.stderr)
        for thread, stream in zip(self._threads, streams, strict=True):
            # A grandchild that left the group may hold a pipe open; do not wait for it (its
            # reader is a daemon thread and goes with the process).
            thread.join(timeout=1.0)
            if not thread.is_alive() and stream is not None:
                stream.close()


def _describe_exit(code: int | None) -> str:
    if code is not None and code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return (
            f"loading the module crashed the Python interpreter ({name}); the crash is in"
            " the module or a C extension it uses"
        )
    return (
        f"loading the module ended the process (exit code {code}) without an exception, for"
        " example through os._exit(); tool code must never end its host"
    )


def _failure(
    child: _Child, candidate: Candidate, mark: int, status: Status, timeout: float
) -> ModuleReport:
    dump = child.stderr_since(mark)
    where = frame_in(dump, candidate, last=False)
    file = where[0] if where else main_file(candidate)
    line = where[1] if where else None
    if status == "timeout":
        code = "timeout"
        message = (
            f"loading the module did not finish within {timeout:g} s (a hang at import or in"
            " the factory?); it was killed. Raise --timeout if it is only slow"
        )
    else:
        code = "crash"
        message = _describe_exit(child.process.returncode)
    tail = dump.strip()[-4000:] or None
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


def _worker_failed(candidates: list[Candidate], child: _Child, mark: int) -> list[ModuleReport]:
    text = child.stderr_since(mark).strip()
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


def _run_child(
    candidates: list[Candidate], cwd: str, timeout: float, load_timeout: float | None
) -> tuple[list[ModuleReport], bool]:
    """Load ``candidates`` in one child until it finishes or one module fails it.

    Returns the reports so far and whether the child stopped early (the last report is then
    the module that stopped it, or every remaining module when the child never started).
    """
    child = _Child(candidates, cwd, load_timeout)
    reports: list[ModuleReport] = []
    current: int | None = None
    mark = 0
    ready = False
    try:
        while True:
            wait = timeout if ready else timeout + _START_TIMEOUT
            try:
                message = child.lines.get(timeout=wait)
            except queue.Empty:
                if current is None:
                    child.kill()
                    return reports + _worker_failed(candidates[len(reports) :], child, 0), True
                child.dump_tracebacks()
                child.kill()
                reports.append(_failure(child, candidates[current], mark, "timeout", timeout))
                return reports, True
            if message is None:  # the child's stdout closed: it ended
                child.process.wait()
                child.drain_stderr()
                if current is not None:
                    reports.append(_failure(child, candidates[current], mark, "crashed", timeout))
                    return reports, True
                if len(reports) < len(candidates):
                    return reports + _worker_failed(candidates[len(reports) :], child, 0), True
                return reports, False
            event = message.get("event")
            if event == "ready":
                ready = True
            elif event == "start":
                current = int(message["index"])
                mark = child.stderr_mark()
            elif event == "done":
                candidate = candidates[int(message["index"])]
                errors = list(message.get("errors", ()))
                reports.append(
                    ModuleReport(
                        candidate=candidate,
                        status="failed" if errors else "loaded",
                        seconds=float(message.get("seconds", 0.0)),
                        tools=list(message.get("tools", ())),
                        errors=errors,
                        diagnostics=list(message.get("diagnostics", ())),
                    )
                )
                current = None
            elif event == "end":
                return reports, False
    finally:
        child.kill()


def load_isolated(
    candidates: list[Candidate],
    *,
    cwd: str,
    timeout: float,
    load_timeout: float | None = None,
) -> list[ModuleReport]:
    """Load every candidate in child processes; one report per candidate, in order.

    Args:
        candidates: the modules of one pack, in precedence order.
        cwd: the working directory of the children and the tools' ``api.cwd``.
        timeout: seconds one module may take to import and build its tools.
        load_timeout: the loader's bound on awaitable factories (default: what a host gets,
            ``DEFAULT_LOAD_TIMEOUT``, kept below ``timeout`` so the loader's own message wins).
    """
    from customtools._loading._loader import DEFAULT_LOAD_TIMEOUT

    if load_timeout is None:
        load_timeout = min(DEFAULT_LOAD_TIMEOUT, timeout * 0.9)
    reports: list[ModuleReport] = []
    remaining = list(candidates)
    while remaining:
        done, stopped = _run_child(remaining, cwd, timeout, load_timeout)
        reports.extend(done)
        if not stopped:
            break
        remaining = remaining[len(done) :]
    return reports
