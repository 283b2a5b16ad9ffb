"""The kills that outlive a cancelled call: one kill thread per process.

A cancelled call gives its tool ``grace`` seconds to clean up; past that, a process group
(an ``api.exec`` tree, an isolation worker) is killed. That kill must not depend on the
cancelled call's coroutine still being driven: the adapter may close the coroutine, the
caller's task may be gone, the event loop may be busy. So the kill is *scheduled* here, on a
daemon thread that needs no event loop, when the grace starts, and *withdrawn* if the process
group ended in time. A scheduled kill always happens (``SIGKILL`` to the group, then the
process is reaped when we own it) or is withdrawn; nothing is dropped.

The thread starts on the first scheduled kill, so ``import customtools`` stays cheap; kills
still pending when the interpreter exits are carried out then (:func:`fire_all`).
"""

from __future__ import annotations

import atexit
import contextlib
import heapq
import itertools
import logging
import os
import signal
import subprocess
import threading
import time
from typing import Final

__all__ = [
    "KILL_REAP_BOUND",
    "MARGIN",
    "ScheduledKill",
    "fire_all",
    "pending_kills",
    "schedule_kill",
]

_log = logging.getLogger("customtools.kills")

KILL_REAP_BOUND: Final = 5.0
"""Seconds the kill thread waits for a killed process it owns to be reaped."""

MARGIN: Final = 0.1
"""Seconds a scheduled kill waits past its owner's own deadline: an owner that is still
running kills (and reports) first; the kill thread acts only for one that is gone."""


class ScheduledKill:
    """A ``SIGKILL`` of process group ``pgid`` due at ``due`` (``time.monotonic()``)."""

    __slots__ = ("done", "due", "fired", "pgid", "popen", "reason", "withdrawn")

    def __init__(self, pgid: int, due: float, popen: subprocess.Popen[bytes] | None) -> None:
        self.pgid = pgid
        self.due = due
        self.popen = popen
        self.withdrawn = False
        self.fired = False
        self.reason = ""  # what the owner reports if the kill fires (a free-form note)
        self.done = threading.Event()

    def withdraw(self) -> None:
        """The group ended (or was killed) in time: do not kill it."""
        self.withdrawn = True

    def fire(self) -> None:
        """Kill the group now (from any thread), and reap the process when we own it."""
        try:
            if not self.withdrawn:
                self.withdrawn = True
                self.fired = True
                # ProcessLookupError: the whole group is already gone.
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(self.pgid, signal.SIGKILL)
                if self.popen is not None:
                    try:
                        self.popen.wait(timeout=KILL_REAP_BOUND)
                    except subprocess.TimeoutExpired:  # pragma: no cover - a lost SIGCHLD
                        _log.warning("process %d did not exit after SIGKILL", self.pgid)
        finally:
            self.done.set()


_lock = threading.Condition()
_heap: list[tuple[float, int, ScheduledKill]] = []
_order = itertools.count()
_thread: threading.Thread | None = None


def pending_kills() -> int:
    """How many scheduled kills are neither done nor withdrawn (a diagnostic for tests)."""
    with _lock:
        return sum(1 for _, _, kill in _heap if not kill.withdrawn)


def schedule_kill(
    pgid: int, delay: float, *, popen: subprocess.Popen[bytes] | None = None
) -> ScheduledKill:
    """Kill process group ``pgid`` in ``delay`` seconds unless withdrawn first.

    Args:
        pgid: the process group (its leader's pid: our children start their own session).
        delay: seconds from now (:data:`MARGIN` is added).
        popen: the group leader when we started it with :mod:`subprocess`: it is reaped after
            the kill, so it never stays a zombie.
    """
    global _thread
    kill = ScheduledKill(pgid, time.monotonic() + max(0.0, delay) + MARGIN, popen)
    with _lock:
        heapq.heappush(_heap, (kill.due, next(_order), kill))
        if _thread is None or not _thread.is_alive():
            if _thread is None:
                atexit.register(fire_all)
            _thread = threading.Thread(target=_run, name="customtools.kills", daemon=True)
            _thread.start()
        _lock.notify()
    return kill


def fire_all() -> None:
    """Carry out every scheduled kill now (at interpreter exit: the daemon thread would not)."""
    with _lock:
        kills = [kill for _, _, kill in _heap]
        _heap.clear()
    for kill in kills:
        kill.fire()


def _run() -> None:
    while True:
        with _lock:
            while True:
                while _heap and _heap[0][2].withdrawn:
                    heapq.heappop(_heap)[2].done.set()
                if _heap and _heap[0][0] <= time.monotonic():
                    kill = heapq.heappop(_heap)[2]
                    break
                _lock.wait(None if not _heap else max(0.0, _heap[0][0] - time.monotonic()))
        kill.fire()
