"""A small timeit-style harness for async statements, measured round-robin.

Each case is a statement compiled into a tight ``for`` loop inside a generated ``async def``;
every case is calibrated to about ``target`` seconds per repeat, and repeats run round-robin
(repeat r of every case, then repeat r+1) so slow drift of the machine hits every case alike.
GC is off inside the timed loop, as timeit does. Results are seconds per iteration.

Noise on a shared machine only ever adds time, so the figures that targets are checked against
are the *best* of the repeats (what ``timeit`` recommends); medians and the spread are printed
alongside so a reader can see how noisy the run was.
"""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

Runner = Callable[[int], Awaitable[float]]

# The 4-property tool schema of the performance anchors, with valid input and input carrying
# four independent violations (pattern, minimum, enum, an unexpected property).
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "pattern": "^[A-Za-z0-9_./-]+$", "minLength": 1},
        "limit": {"type": "integer", "minimum": 1},
        "tags": {"type": "array", "items": {"type": "string"}},
        "mode": {"type": "string", "enum": ["read", "write", "append"]},
    },
    "required": ["path", "limit", "mode"],
    "additionalProperties": False,
}
VALID: dict[str, Any] = {
    "path": "src/pkg/main.py",
    "limit": 10,
    "tags": ["a", "b", "c"],
    "mode": "read",
}
INVALID: dict[str, Any] = {"path": "bad path!", "limit": 0, "mode": "delete", "extra": 1}


def compile_case(
    stmt: str, namespace: dict[str, Any], clock: Callable[[], float] = time.perf_counter
) -> Runner:
    """Compile ``stmt`` (which may use ``await``) into ``async def run(n) -> seconds``
    (``clock``: ``time.process_time`` counts only this process's CPU time, so that other
    processes on a shared machine do not add to it)."""
    src = (
        "async def __run(__n):\n"
        "    __t = __perf()\n"
        "    for __i in range(__n):\n"
        f"        {stmt}\n"
        "    return __perf() - __t\n"
    )
    ns = dict(namespace)
    ns["__perf"] = clock
    exec(compile(src, f"<case {stmt!r}>", "exec"), ns)
    runner: Runner = ns["__run"]
    return runner


@dataclass
class Case:
    """One measured statement."""

    name: str
    runner: Runner
    n: int = 1
    samples: list[float] = field(default_factory=list)

    @property
    def best(self) -> float:
        return min(self.samples)

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    @property
    def spread(self) -> float:
        return (max(self.samples) - min(self.samples)) / self.median


async def _timed(runner: Runner, n: int) -> float:
    enabled = gc.isenabled()
    gc.disable()
    try:
        return await runner(n)
    finally:
        if enabled:
            gc.enable()


async def measure(cases: list[Case], *, repeats: int = 7, target: float = 0.1) -> None:
    """Calibrate each case to about ``target`` seconds and collect ``repeats`` samples."""
    for case in cases:
        n = 1
        while True:
            elapsed = await _timed(case.runner, n)
            if elapsed >= target / 4 or n >= 10_000_000:
                break
            n *= 4
        case.n = max(1, int(n * target / max(elapsed, 1e-9)))
    for _ in range(repeats):
        for case in cases:
            case.samples.append(await _timed(case.runner, case.n) / case.n)


def fmt_time(seconds: float) -> str:
    """Human units: ns, µs or ms."""
    if seconds < 1e-6:
        return f"{seconds * 1e9:.0f} ns"
    if seconds < 1e-3:
        return f"{seconds * 1e6:.2f} µs"
    return f"{seconds * 1e3:.2f} ms"
